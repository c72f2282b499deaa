//! Conformance corpora against the reference's verdicts: every case of the public corpus
//! (`tests/data/public.jsonl`, the reference's public corpus with its verdicts), and a differential corpus of
//! random cases near every rule (`tests/data/differential.jsonl`, made by
//! `tests/data/gen_differential.py` and judged by the oracle; see `docs/conformance.md`).

use askuser_core::{
    AskUserAnswer, AskUserRequest, AskUserResponse, AskUserResult, Outcome, PathSegment, Questions,
    ValidationError, ask_user_result,
};
use serde_json::{Value, json};

const PUBLIC: &str = include_str!("../data/public.jsonl");
const PUBLIC_EXPECTED: &str = include_str!("../data/public.expected.jsonl");
const DIFFERENTIAL: &str = include_str!("../data/differential.jsonl");
const DIFFERENTIAL_EXPECTED: &str = include_str!("../data/differential.expected.jsonl");

/// Cases whose verdict depends on the reference's Unicode 14.0 tables (docs/contract.md §2.1).
fn unicode_sensitive(case: &Value) -> bool {
    case["tags"].as_array().is_some_and(|tags| tags.iter().any(|t| t == "unicode-version-sensitive"))
}

/// Validates a case's arguments the way its `mode` says, and checks both input paths agree.
fn validate(case: &Value) -> Result<Questions, ValidationError> {
    if let Some(text) = case.get("args_json") {
        let text = text.as_str().expect("args_json is a string");
        let verdict = Questions::from_json(text);
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            // Both input paths give the same verdict (contract §2.2); unparsable text has no value path.
            assert_eq!(Questions::from_value(&value).is_ok(), verdict.is_ok(), "{}: value path", case["id"]);
        }
        return verdict;
    }
    let args = &case["args"];
    let from_text = Questions::from_json(&serde_json::to_string(args).unwrap());
    let from_value = Questions::from_value(args);
    assert_eq!(from_text, from_value, "{}: text and value paths disagree", case["id"]);
    from_text
}

fn location_json(err: &ValidationError) -> Value {
    err.first()
        .location()
        .segments()
        .iter()
        .map(|s| match s {
            PathSegment::Key(k) => json!(k),
            PathSegment::Index(i) => json!(i),
            _ => unreachable!("no other segment kinds exist"),
        })
        .collect()
}

fn response_of(case: &Value) -> AskUserResponse {
    let raw = &case["response"];
    let answers = raw["answers"]
        .as_array()
        .map(|answers| {
            answers
                .iter()
                .map(|a| {
                    let header = a["header"].as_str().unwrap();
                    match a.get("custom_answer").and_then(Value::as_str) {
                        Some(custom) => {
                            let mut answer = AskUserAnswer::custom(header, custom);
                            answer.selected = a["selected"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .map(|s| s.as_str().unwrap().to_owned())
                                .collect();
                            answer
                        }
                        None => AskUserAnswer::picked(
                            header,
                            a["selected"].as_array().into_iter().flatten().map(|s| s.as_str().unwrap()),
                        ),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let mut response = AskUserResponse::answered(answers);
    response.cancelled = raw["cancelled"].as_bool().unwrap_or(false);
    response
}

#[test]
fn public_corpus_matches_the_reference() {
    let differences = check_corpus(PUBLIC, PUBLIC_EXPECTED);
    // Our tables are newer than the reference's Unicode 14.0: these code points are assigned now.
    assert_eq!(differences.len(), 3, "{differences:?}");
}

#[test]
fn differential_corpus_matches_the_reference() {
    let differences = check_corpus(DIFFERENTIAL, DIFFERENTIAL_EXPECTED);
    assert!(differences.is_empty(), "{differences:?}");
}

/// Checks every case; returns the ids of the cases that differ only by Unicode version.
fn check_corpus(cases: &str, expected: &str) -> Vec<Value> {
    assert_eq!(cases.lines().count(), expected.lines().count(), "corpus files out of step");
    let mut unicode_differences = Vec::new();
    for (line, (case, expected)) in cases.lines().zip(expected.lines()).enumerate() {
        let case: Value = serde_json::from_str(case).unwrap();
        let expected: Value = serde_json::from_str(expected).unwrap();
        assert_eq!(case["id"], expected["id"], "line {line}: files out of step");
        let id = &case["id"];
        let expected_ok = expected["ok"].as_bool().unwrap();
        let verdict = validate(&case);

        let ok = match case["kind"].as_str().unwrap() {
            "request" => {
                if let (Ok(questions), true) = (&verdict, expected_ok) {
                    assert_eq!(
                        serde_json::to_value(questions).unwrap(),
                        expected["normalized"],
                        "{id}: normalized"
                    );
                }
                if let (Err(err), false) = (&verdict, expected_ok) {
                    let loc = expected.get("loc").unwrap_or(&expected["errors"][0]["loc"]);
                    assert_eq!(&location_json(err), loc, "{id}: first location");
                }
                verdict.is_ok()
            }
            "response" => match verdict {
                Err(err) => {
                    assert_eq!(expected["stage"], "request", "{id}: rejected at the wrong stage: {err}");
                    false
                }
                Ok(questions) => {
                    let request = AskUserRequest::with_id("conformance", questions);
                    let result = if case["response"]["timed_out"] == true {
                        Ok(AskUserResult::timed_out())
                    } else {
                        ask_user_result(&request, &response_of(&case))
                    };
                    match (&result, expected_ok) {
                        (Ok(result), true) if expected["normalized"].is_string() => {
                            let kind = if case["response"]["timed_out"] == true {
                                Outcome::TimedOut
                            } else {
                                Outcome::Declined
                            };
                            assert_eq!(result.outcome(), kind, "{id}: outcome");
                        }
                        (Ok(result), true) => {
                            assert_eq!(result.outcome(), Outcome::Answered, "{id}: outcome");
                            assert_eq!(
                                result.text(),
                                expected["model_text"].as_str().unwrap(),
                                "{id}: model_text"
                            );
                            let normalized: Value = serde_json::from_str(result.text()).unwrap();
                            assert_eq!(normalized, expected["normalized"], "{id}: normalized");
                        }
                        (Err(_), false) => assert_eq!(expected["stage"], "response", "{id}: stage"),
                        _ => {}
                    }
                    result.is_ok()
                }
            },
            other => panic!("{id}: unknown kind {other}"),
        };
        if ok != expected_ok {
            assert!(unicode_sensitive(&case), "{id}: ok = {ok}, the reference says {expected_ok}");
            unicode_differences.push(id.clone());
        }
    }
    unicode_differences
}

const EXTENDED: &str = include_str!("../data/extended.jsonl");
const EXTENDED_EXPECTED: &str = include_str!("../data/extended.expected.jsonl");

/// The extended profile's corpus (`tests/data/extended.jsonl`): verdicts written by hand from the
/// rules of contract §10 in `tests/data/gen_extended.py`, not taken from this implementation.
#[test]
fn extended_corpus_follows_the_rules() {
    use askuser_core::{Profile, Validator};
    let validator = Validator::new().with_profile(Profile::Extended);
    assert_eq!(EXTENDED.lines().count(), EXTENDED_EXPECTED.lines().count(), "corpus files out of step");
    assert!(EXTENDED.lines().count() >= 300);
    let mut failures = Vec::new();
    for (case, expected) in EXTENDED.lines().zip(EXTENDED_EXPECTED.lines()) {
        let case: Value = serde_json::from_str(case).unwrap();
        let expected: Value = serde_json::from_str(expected).unwrap();
        assert_eq!(case["id"], expected["id"], "files out of step");
        let id = case["id"].as_str().unwrap().to_owned();
        let text = case
            .get("args_json")
            .map_or_else(|| case["args"].to_string(), |t| t.as_str().unwrap().to_owned());
        let verdict = validator.validate_json(&text);
        if let Ok(value) = serde_json::from_str::<Value>(&text) {
            // Both input paths give the same verdict; text that is not JSON has no value path.
            assert_eq!(validator.validate_value(&value), verdict, "{id}: text and value paths disagree");
        }
        let actual = match (case["kind"].as_str().unwrap(), verdict) {
            ("request", Ok(questions)) => {
                let ids: Vec<Value> = questions.iter().map(|q| json!(q.id())).collect();
                match expected.get("ids") {
                    Some(_) => json!({"id": id, "ok": true, "ids": ids}),
                    None => json!({"id": id, "ok": true}),
                }
            }
            ("request", Err(err)) => {
                json!({"id": id, "ok": false, "loc": location_json(&err), "type": err.first().kind().code()})
            }
            (_, Err(_)) => json!({"id": id, "ok": false, "stage": "request"}),
            (_, Ok(questions)) => {
                let request = AskUserRequest::with_id("corpus", questions);
                let raw = &case["response"];
                let result = if raw["timed_out"] == true {
                    Ok(AskUserResult::timed_out_for(&request))
                } else {
                    let answers: Vec<AskUserAnswer> =
                        serde_json::from_value(raw.get("answers").cloned().unwrap_or(json!([]))).unwrap();
                    let mut response = AskUserResponse::answered(answers);
                    response.cancelled = raw["cancelled"] == true;
                    response.answered_by =
                        serde_json::from_value(raw.get("answered_by").cloned().unwrap_or(json!("user")))
                            .unwrap();
                    ask_user_result(&request, &response)
                };
                match result {
                    Ok(result) => json!({"id": id, "ok": true, "model_text": result.text()}),
                    Err(_) => json!({"id": id, "ok": false, "stage": "response"}),
                }
            }
        };
        if actual != expected {
            failures.push(format!("expected {expected}\n     got {actual}"));
        }
    }
    assert!(failures.is_empty(), "{} of the extended cases differ:\n{}", failures.len(), failures.join("\n"));
}
