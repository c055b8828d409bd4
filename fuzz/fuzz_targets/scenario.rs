//! Scenario TOML (robot, groups, command, output): parse, and when it
//! parses, run at most 3 envs × 3 steps on the CPU. Any panic is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sinew_cli::run::{self, BackendChoice};
use sinew_cli::Scenario;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Network files resolve beside the golden learned networks.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/learned");
    let Ok(scenario) = Scenario::parse_in(text, "fuzz.toml", &dir) else {
        return;
    };
    let envs = scenario.num_envs.min(3);
    let steps = scenario.steps.min(3);
    let _ = run::run(&scenario, BackendChoice::Cpu, Some(envs), Some(steps), None, false);
});
