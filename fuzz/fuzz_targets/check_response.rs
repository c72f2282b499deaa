//! `check_response` and rendering never panic: the first line of the input is the call's
//! arguments, the rest is a response as JSON.
#![no_main]

use askuser_core::{AskUserRequest, AskUserResponse, Questions, ask_user_result};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (args, response) = text.split_once('\n').unwrap_or((text, "{}"));
    let (Ok(questions), Ok(response)) = (Questions::from_json(args), serde_json::from_str::<AskUserResponse>(response))
    else {
        return;
    };
    let request = AskUserRequest::with_id("fuzz", questions);
    if let Ok(result) = ask_user_result(&request, &response) {
        assert!(!result.text().is_empty());
    }
});
