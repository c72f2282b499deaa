//! The typed-answer grammar against its corpus (`tests/data/typed-answers.jsonl`, written by
//! `typed-answers.py`; the grammar is docs/typed-answers.md): every reply reads as the corpus says,
//! answers or the exact words of what is unclear, and every answer it gives passes
//! `check_response` against its batch.

use askuser_core::{AskUserRequest, AskUserResponse, Profile, Validator, check_response, read_typed_reply};
use serde_json::{Value, json};

#[test]
fn every_reply_in_the_corpus_reads_as_the_corpus_says() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/typed-answers.jsonl");
    let corpus = std::fs::read_to_string(&path).expect("the corpus");
    let mut failures = Vec::new();
    let mut cases = 0;
    for (n, line) in corpus.lines().enumerate() {
        let case: Value = serde_json::from_str(line).expect("a JSON case");
        cases += 1;
        let profile = if case["profile"] == "extended" { Profile::Extended } else { Profile::Reference };
        let questions = Validator::new()
            .with_profile(profile)
            .validate_value(&case["batch"])
            .unwrap_or_else(|e| panic!("line {}: the batch is invalid: {e}", n + 1));
        let reply = case["reply"].as_str().expect("a reply");
        let got = match read_typed_reply(&questions, reply) {
            Ok(answers) => {
                let request = AskUserRequest::with_id("typed", questions.clone());
                let response = AskUserResponse::answered(answers.clone());
                if let Err(error) = check_response(&request, &response) {
                    failures.push(format!("line {}: answers that check_response refuses: {error}", n + 1));
                }
                let answers: Vec<Value> = answers
                    .iter()
                    .map(|a| match &a.custom_answer {
                        Some(text) => json!({"header": a.header, "custom_answer": text}),
                        None => json!({"header": a.header, "selected": a.selected}),
                    })
                    .collect();
                json!({"answers": answers})
            }
            Err(unclear) => json!({"unclear": unclear.to_string()}),
        };
        let expected = match case.get("unclear") {
            Some(unclear) => json!({"unclear": unclear}),
            None => json!({"answers": case["answers"]}),
        };
        if got != expected {
            failures.push(format!(
                "line {} ({}), reply {reply:?}:\n  expected {expected}\n  got      {got}",
                n + 1,
                case["note"]
            ));
        }
    }
    assert!(cases >= 200, "the corpus holds {cases} cases");
    assert!(failures.is_empty(), "{} of {cases} cases differ:\n{}", failures.len(), failures.join("\n"));
}
