//! Golden files `sinew verify` reads (mujoco-actuator-golden/v1 and the
//! mjlab schema), replayed on the CPU.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sinew::{Backend, CpuBackend};
use sinew_cli::verify::{self, VerifyOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let make = |plan| Ok(Box::new(CpuBackend::new(plan)) as Box<dyn Backend>);
    let strict = VerifyOptions {
        mjlab_bit_exact: true,
        ..VerifyOptions::default()
    };
    let _ = verify::verify_doc(&doc, &make, &strict, 2);
});
