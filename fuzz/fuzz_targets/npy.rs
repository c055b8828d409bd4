//! `.npy` command files: the header parser and the data reader.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((shape, values)) = sinew_cli::npy::parse_f32(data, "fuzz.npy".as_ref()) {
        let count = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        assert_eq!(count, Some(values.len()), "shape {shape:?} and values disagree");
    }
});
