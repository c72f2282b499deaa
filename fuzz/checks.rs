//! The fuzz targets' properties, one function each, shared by the targets (`fuzz_targets/`) and
//! by askuser-core's test that replays the saved corpora (`tests/it/properties.rs`).

use askuser_core::{AskUserRequest, AskUserResponse, Questions, ask_user_result};

/// Validation never panics on any bytes, and both input paths agree whenever the text is JSON
/// that `serde_json` also reads; a validated call re-serialises to a call that validates to itself.
pub(crate) fn validate(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let from_text = Questions::from_json(text);
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
        let from_value = Questions::from_value(&value);
        assert_eq!(from_text.is_ok(), from_value.is_ok(), "{text:?}");
        if let (Ok(a), Ok(b)) = (&from_text, &from_value) {
            assert_eq!(a, b);
        }
    }
    if let Ok(questions) = from_text {
        let again = Questions::from_json(&serde_json::to_string(&questions).unwrap()).unwrap();
        assert_eq!(again, questions);
    }
}

/// `check_response` and rendering never panic: the first line of the input is the call's
/// arguments, the rest is a response as JSON.
pub(crate) fn check_response(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (args, response) = text.split_once('\n').unwrap_or((text, "{}"));
    let (Ok(questions), Ok(response)) =
        (Questions::from_json(args), serde_json::from_str::<AskUserResponse>(response))
    else {
        return;
    };
    let request = AskUserRequest::with_id("fuzz", questions);
    if let Ok(result) = ask_user_result(&request, &response) {
        assert!(!result.text().is_empty());
    }
}
