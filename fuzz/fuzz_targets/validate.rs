//! Validation never panics on any bytes, and both input paths agree whenever the text is JSON
//! that `serde_json` also reads.
#![no_main]

use askuser_core::Questions;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
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
        // A validated call re-serialises to a call that validates to itself.
        let again = Questions::from_json(&serde_json::to_string(&questions).unwrap()).unwrap();
        assert_eq!(again, questions);
    }
});
