//! Validation never panics on any bytes, and both input paths agree whenever the text is JSON
//! that `serde_json` also reads.
#![no_main]

#[path = "../checks.rs"]
mod checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| checks::validate(data));
