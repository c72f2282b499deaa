//! `check_response` and rendering never panic: the first line of the input is the call's
//! arguments, the rest is a response as JSON.
#![no_main]

#[path = "../checks.rs"]
mod checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| checks::check_response(data));
