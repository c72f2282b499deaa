//! Never panics on anything; validated values round-trip; well-formed answers always pass.

use askuser_core::{
    AskUserAnswer, AskUserRequest, AskUserResponse, Profile, Questions, Validator, ask_user_result,
    check_response,
};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Characters that exercise every rule: ASCII, spaces, controls, format characters, folds.
fn tricky_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => proptest::char::range('a', 'e'),
        1 => proptest::sample::select(vec![
            ' ', '\n', '\t', '\r', '\0', '\x1b', '\x1c', '\u{85}', '\u{a0}', '\u{200b}', '\u{200d}', '\u{202e}',
            '\u{2028}', '\u{3000}', '\u{feff}', 'ß', 'ẞ', 'İ', 'ς', 'Σ', 'ﬁ', 'Ａ', '\u{301}', '\u{fe0f}', '😀',
            '\u{e000}', '\u{fffe}', '\u{378}', 'K', '\u{212a}', '①', '²',
        ]),
        1 => any::<char>(),
    ]
}

fn tricky_string(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(tricky_char(), 0..max).prop_map(|chars| chars.into_iter().collect())
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        tricky_string(12).prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let key = prop_oneof![
            Just("questions".to_owned()),
            Just("header".to_owned()),
            Just("question".to_owned()),
            Just("options".to_owned()),
            Just("label".to_owned()),
            Just("description".to_owned()),
            Just("multi_select".to_owned()),
            Just("kind".to_owned()),
            Just("id".to_owned()),
            Just("default".to_owned()),
            Just("allow_other".to_owned()),
            Just("secret_name".to_owned()),
            Just("purpose".to_owned()),
            Just("timeout_seconds".to_owned()),
            tricky_string(4),
        ];
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..7).prop_map(Value::Array),
            proptest::collection::vec((key, inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Mostly plain words, sometimes anything.
fn plausible_string(max: usize) -> impl Strategy<Value = String> {
    prop_oneof![12 => proptest::string::string_regex("[a-eA-E][a-eß ]{0,5}").unwrap(), 1 => tricky_string(max)]
}

/// Calls that are often valid, so the deeper rules are reached (see `plausible_calls_are_often_valid`).
fn plausible_call() -> impl Strategy<Value = Value> {
    let option = (plausible_string(8), proptest::option::of(plausible_string(10)))
        .prop_map(|(label, description)| json!({ "label": label, "description": description }))
        .boxed();
    let question = (
        plausible_string(8),
        plausible_string(20),
        prop_oneof![8 => proptest::collection::vec(option.clone(), 2..5), 1 => proptest::collection::vec(option, 0..8)],
        proptest::option::of(prop_oneof![any::<bool>().prop_map(Value::from), Just(json!("yes")), Just(json!(2))]),
    )
        .prop_map(|(header, question, options, multi)| {
            let mut q = json!({ "header": header, "question": question, "options": options });
            if let Some(m) = multi {
                q["multi_select"] = m;
            }
            q
        })
        .boxed();
    prop_oneof![8 => proptest::collection::vec(question.clone(), 1..4), 1 => proptest::collection::vec(question, 0..12)]
        .prop_map(|qs| json!({ "questions": qs }))
}

/// Guards the properties below against passing vacuously on calls that are never valid.
#[test]
fn plausible_calls_are_often_valid() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let valid = (0..400)
        .filter(|_| Questions::from_value(&plausible_call().new_tree(&mut runner).unwrap().current()).is_ok())
        .count();
    assert!(valid >= 80, "only {valid} of 400 plausible calls are valid");
}

/// A response built by the rules from what the request offers, chosen by `seed`.
fn answers_by_the_rules(request: &AskUserRequest, seed: &[u8]) -> Vec<AskUserAnswer> {
    request
        .questions()
        .iter()
        .zip(seed.iter().cycle())
        .map(|(q, &s)| {
            let labels: Vec<&str> = q.options().iter().map(askuser_core::QuestionOption::label).collect();
            if s % 7 == 0 {
                return AskUserAnswer::custom(q.header(), format!("custom {s}\nline"));
            }
            let first = usize::from(s) % labels.len();
            let count = if q.multi_select() { 1 + usize::from(s / 7) % labels.len() } else { 1 };
            AskUserAnswer::picked(q.header(), (0..count).map(|i| labels[(first + i) % labels.len()]))
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn validation_never_panics_on_text(text in tricky_string(200)) {
        let _ = Questions::from_json(&text);
    }

    #[test]
    fn validation_never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = serde_json::from_slice::<Value>(&bytes).map(|v| Questions::from_value(&v));
        let _ = Questions::from_json(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn both_paths_agree_on_any_value(value in json_value()) {
        prop_assert_eq!(Questions::from_value(&value), Questions::from_json(&value.to_string()));
    }

    #[test]
    fn validated_calls_round_trip(call in plausible_call()) {
        if let Ok(questions) = Questions::from_value(&call) {
            let again = Questions::from_json(&serde_json::to_string(&questions).unwrap()).unwrap();
            prop_assert_eq!(again, questions);
        }
    }

    #[test]
    fn answers_by_the_rules_pass(call in plausible_call(), seed in proptest::collection::vec(any::<u8>(), 1..10)) {
        if let Ok(questions) = Questions::from_value(&call) {
            let request = AskUserRequest::new(questions);
            let response = AskUserResponse::answered(answers_by_the_rules(&request, &seed));
            prop_assert_eq!(check_response(&request, &response), Ok(()));
            let text = ask_user_result(&request, &response).unwrap().into_text();
            let parsed: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(parsed.len(), request.questions().len());
        }
    }

    #[test]
    fn check_response_never_panics(
        call in plausible_call(),
        answers in proptest::collection::vec(
            (tricky_string(6), proptest::collection::vec(tricky_string(6), 0..4), proptest::option::of(tricky_string(8))),
            0..6,
        ),
        cancelled in any::<bool>(),
    ) {
        if let Ok(questions) = Questions::from_value(&call) {
            let request = AskUserRequest::new(questions);
            let answers = answers
                .into_iter()
                .map(|(header, selected, custom)| {
                    let mut answer = AskUserAnswer::picked(header, selected);
                    answer.custom_answer = custom;
                    answer
                })
                .collect();
            let mut response = AskUserResponse::answered(answers);
            response.cancelled = cancelled;
            let _ = ask_user_result(&request, &response);
        }
    }
}

/// A valid-looking call as text with a few random edits: insertions of JSON-significant characters,
/// deletions and replacements.
fn mutated_text() -> impl Strategy<Value = String> {
    let edit = (
        any::<proptest::sample::Index>(),
        0_u8..3,
        proptest::sample::select(
            "{}[],:\"\\ \n0123456789.eE+-tfnul/bfrux\u{0}\u{1f}é😀".chars().collect::<Vec<_>>(),
        ),
    );
    (plausible_call(), proptest::collection::vec(edit, 0..4)).prop_map(|(call, edits)| {
        let mut chars: Vec<char> = call.to_string().chars().collect();
        for (at, kind, c) in edits {
            let i = at.index(chars.len() + 1);
            match kind {
                0 => chars.insert(i, c),
                1 if i < chars.len() => {
                    chars.remove(i);
                }
                _ if i < chars.len() => chars[i] = c,
                _ => chars.push(c),
            }
        }
        chars.into_iter().collect()
    })
}

fn sorted_problems(err: &askuser_core::ValidationError) -> Vec<String> {
    let mut problems: Vec<String> = err.problems().iter().map(ToString::to_string).collect();
    problems.sort();
    problems
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// The argument reader is held to serde_json's verdict, and reads the same values.
    #[test]
    fn text_reader_agrees_with_serde_json(text in mutated_text()) {
        prop_assume!(!text.is_empty());
        let ours = Questions::from_json(&text);
        match serde_json::from_str::<Value>(&text) {
            // The one place the reader follows the reference rather than serde_json (see json.rs).
            Err(e) if e.to_string().contains("number out of range") => {}
            Err(e) => {
                let err = ours.expect_err("serde_json rejects this text");
                prop_assert_eq!(err.first().kind().code(), "json_invalid", "serde_json: {}", e);
            }
            Ok(value) => match (ours, Questions::from_value(&value)) {
                (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                (Err(a), Err(b)) => prop_assert_eq!(sorted_problems(&a), sorted_problems(&b)),
                (a, b) => prop_assert!(false, "text {:?} vs value {:?}", a, b),
            },
        }
    }
}

fn extended() -> Validator {
    Validator::new().with_profile(Profile::Extended)
}

/// Plausible calls with the extended profile's fields sprinkled in, often valid.
fn plausible_extended_call() -> impl Strategy<Value = Value> {
    let extra = prop_oneof![
        Just(json!({})),
        Just(json!({"kind": "text", "options": []})),
        Just(json!({"kind": "secret", "options": [], "secret_name": "TOKEN", "purpose": "to deploy"})),
        Just(json!({"kind": "choice", "allow_other": false})),
        Just(json!({"id": "a.b-c_1"})),
        Just(json!({"id": "q2"})),
        Just(json!({"kind": "bogus"})),
        Just(json!({"id": null, "allow_other": null, "kind": null})),
    ];
    (
        plausible_call(),
        proptest::collection::vec((extra, any::<u8>()), 0..4),
        proptest::option::of(0_i64..400),
    )
        .prop_map(|(mut call, extras, timeout)| {
            if let Some(questions) = call["questions"].as_array_mut() {
                for (extra, at) in extras {
                    if questions.is_empty() {
                        break;
                    }
                    let n = questions.len();
                    let question = &mut questions[usize::from(at) % n];
                    if let (Some(q), Some(e)) = (question.as_object_mut(), extra.as_object()) {
                        if e.get("kind").is_some_and(|k| k != "choice" && !k.is_null()) {
                            q.remove("options");
                        }
                        q.extend(e.clone());
                    }
                    if let Some(options) = question["options"].as_array_mut().filter(|o| !o.is_empty()) {
                        options[0]["default"] = json!(true);
                    }
                }
            }
            if let Some(t) = timeout {
                call["timeout_seconds"] = json!(t);
            }
            call
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn extended_validation_never_panics(text in tricky_string(200)) {
        let _ = extended().validate_json(&text);
    }

    #[test]
    fn extended_paths_agree_on_any_value(value in json_value()) {
        prop_assert_eq!(extended().validate_value(&value), extended().validate_json(&value.to_string()));
    }

    #[test]
    fn extended_calls_round_trip(call in plausible_extended_call()) {
        prop_assert_eq!(extended().validate_value(&call), extended().validate_json(&call.to_string()));
        if let Ok(questions) = extended().validate_value(&call) {
            let again = extended().validate_json(&serde_json::to_string(&questions).unwrap()).unwrap();
            prop_assert_eq!(&again, &questions);
            let request = AskUserRequest::new(questions);
            let back: AskUserRequest = serde_json::from_str(&serde_json::to_string(&request).unwrap()).unwrap();
            prop_assert_eq!(back, request);
        }
    }

    #[test]
    fn extended_check_never_panics(
        call in plausible_extended_call(),
        answers in proptest::collection::vec(
            (tricky_string(6), proptest::collection::vec(tricky_string(6), 0..4), proptest::option::of(tricky_string(8)),
             proptest::option::of(tricky_string(8)), proptest::option::of(tricky_string(8))),
            0..6,
        ),
        cancelled in any::<bool>(),
    ) {
        if let Ok(questions) = extended().validate_value(&call) {
            let request = AskUserRequest::new(questions);
            let answers = answers
                .into_iter()
                .map(|(header, selected, custom, id, secret_ref)| {
                    let mut answer = AskUserAnswer::picked(header, selected);
                    answer.custom_answer = custom;
                    answer.id = id;
                    answer.secret_ref = secret_ref;
                    answer
                })
                .collect();
            let mut response = AskUserResponse::answered(answers);
            response.cancelled = cancelled;
            let _ = ask_user_result(&request, &response);
            let defaults = askuser_core::DefaultsResponder::respond(&request, askuser_core::AnsweredBy::Unattended);
            prop_assert!(ask_user_result(&request, &defaults).is_ok());
        }
    }
}

/// Guards the extended properties against passing vacuously.
#[test]
fn plausible_extended_calls_are_often_valid() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let valid = (0..200)
        .filter(|_| {
            extended()
                .validate_value(&plausible_extended_call().new_tree(&mut runner).unwrap().current())
                .is_ok()
        })
        .count();
    assert!(valid > 40, "{valid} of 200");
}

#[path = "../../../../fuzz/checks.rs"]
mod fuzz_checks;

/// Replays the fuzz corpora (`fuzz/corpus/`) through the fuzz targets' own assertions
/// (`fuzz/fuzz_targets/`), so a change that breaks a saved input fails here, without cargo-fuzz.
#[test]
fn the_fuzz_corpora_still_pass_their_targets() {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let inputs = |target: &str| {
        let mut files: Vec<_> =
            std::fs::read_dir(corpus.join(target)).unwrap().map(|entry| entry.unwrap().path()).collect();
        files.sort();
        assert!(!files.is_empty(), "no corpus for {target}");
        files.into_iter().map(|path| std::fs::read(path).unwrap())
    };
    for data in inputs("validate") {
        fuzz_checks::validate(&data);
    }
    for data in inputs("check_response") {
        fuzz_checks::check_response(&data);
    }
}
