//! The extended profile (docs/contract.md §10) through the public API: what validation keeps, generated ids,
//! serialisation, answer checking, the result the model reads, defaults, deadlines and secrets.
//! The rule-by-rule verdicts are in the extended corpus (`conformance.rs`).

use std::time::Duration;

use askuser_core::{
    AnsweredBy, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse, AskUserResult, Deadline,
    DefaultsResponder, InMemorySecretSink, Outcome, Profile, QuestionKind, Questions, ResponseError,
    SecretSink, SecretValue, Timestamp, ValidationError, Validator, ask_user_result, check_response,
};
use serde_json::{Value, json};

fn extended() -> Validator {
    Validator::new().with_profile(Profile::Extended)
}

/// Validates through both input paths, which must agree.
fn validate(args: &Value) -> Result<Questions, ValidationError> {
    let text = extended().validate_json(&args.to_string());
    assert_eq!(text, extended().validate_value(args), "text and value paths disagree on {args}");
    text
}

#[track_caller]
fn request(args: &Value) -> AskUserRequest {
    AskUserRequest::with_id("call_1", validate(args).unwrap_or_else(|e| panic!("{args}: {e}")))
}

fn mixed() -> Value {
    json!({"questions": [
        {"header": "Deploy", "question": "Where to?", "options": [
            {"label": "Staging", "default": true}, {"label": "Production"}]},
        {"kind": "text", "id": "branch", "header": "Branch", "question": "Which branch?"},
        {"header": "Checks", "question": "Which checks?", "multi_select": true, "allow_other": false,
         "options": [{"label": "Lint", "default": true}, {"label": "Tests", "default": true}, {"label": "Bench"}]}
    ], "timeout_seconds": 120})
}

fn secret() -> Value {
    json!({"questions": [{"kind": "secret", "header": "Token", "question": "Your deploy token?",
        "secret_name": "DEPLOY_TOKEN", "purpose": "To push the release\nto the registry."}]})
}

#[test]
fn the_reference_profile_does_not_know_the_extended_keys() {
    let err = Validator::new().validate_value(&mixed()).unwrap_err();
    let codes: Vec<_> = err.problems().iter().map(|p| (p.kind().code(), p.location().to_string())).collect();
    assert_eq!(codes[0], ("extra_forbidden", "questions[0].options[0].default".to_owned()), "{err}");
    assert!(codes.contains(&("extra_forbidden", "timeout_seconds".to_owned())), "{err}");
    assert!(codes.contains(&("extra_forbidden", "questions[1].kind".to_owned())), "{err}");
}

#[test]
fn extended_questions_keep_every_field_and_get_ids_by_position() {
    let questions = validate(&mixed()).unwrap();
    assert_eq!(questions.profile(), Profile::Extended);
    assert_eq!(questions.timeout_seconds(), Some(120));
    let [deploy, branch, checks] = questions.as_slice() else { panic!("three questions") };
    assert_eq!((deploy.kind(), deploy.id(), deploy.allow_other()), (QuestionKind::Choice, Some("q1"), true));
    assert_eq!(
        deploy.declared_defaults().map(askuser_core::QuestionOption::label).collect::<Vec<_>>(),
        ["Staging"]
    );
    assert_eq!((branch.kind(), branch.id(), branch.options().len()), (QuestionKind::Text, Some("branch"), 0));
    assert!(!branch.allow_other());
    assert_eq!((checks.id(), checks.allow_other(), checks.multi_select()), (Some("q2"), false, true));
    assert_eq!(questions.get_by_id("q2").map(askuser_core::Question::header), Some("Checks"));

    // Generated ids skip the ones the model took.
    let taken = json!({"questions": [
        {"kind": "text", "header": "A", "question": "?"},
        {"kind": "text", "id": "q1", "header": "B", "question": "?"},
        {"kind": "text", "header": "C", "question": "?"},
        {"kind": "text", "id": "q3", "header": "D", "question": "?"},
        {"kind": "text", "header": "E", "question": "?"}]});
    let ids: Vec<_> = validate(&taken).unwrap().iter().map(|q| q.id().unwrap().to_owned()).collect();
    assert_eq!(ids, ["q2", "q1", "q4", "q3", "q5"]);
}

#[test]
fn normalised_arguments_round_trip_through_a_request() {
    let request = request(&mixed()).with_deadline(Deadline::new(
        Timestamp::from_unix_millis(1_700_000_000_000),
        Some(Duration::from_mins(2)),
    ));
    let written = serde_json::to_value(&request).unwrap();
    assert_eq!(written["profile"], "extended");
    assert_eq!(written["asked_at"], "2023-11-14T22:13:20.000Z");
    assert_eq!(written["nudge_at"], "2023-11-14T22:14:56.000Z");
    assert_eq!(written["expires_at"], "2023-11-14T22:15:20.000Z");
    assert_eq!(written["timeout_seconds"], 120);
    assert_eq!(
        written["questions"][1],
        json!({"kind": "text", "id": "branch", "header": "Branch", "question": "Which branch?", "options": [],
               "multi_select": false})
    );
    assert_eq!(
        written["questions"][0]["options"][0],
        json!({"label": "Staging", "description": null, "default": true})
    );
    let back: AskUserRequest = serde_json::from_value(written.clone()).unwrap();
    assert_eq!(back, request);
    assert_eq!(back.deadline(), request.deadline());
    assert_eq!(serde_json::to_value(&back).unwrap(), written);

    // A reference request is written exactly as before: no profile, no stamps unless stamped.
    let plain = AskUserRequest::with_id(
        "c",
        Questions::from_value(&json!({"questions": [
        {"header": "H", "question": "Q", "options": [{"label": "A"}, {"label": "B"}]}]}))
        .unwrap(),
    );
    let text = serde_json::to_string(&plain).unwrap();
    assert!(text.starts_with(r#"{"id":"c","questions":[{"header":"H""#), "{text}");
    assert_eq!(serde_json::from_str::<AskUserRequest>(&text).unwrap(), plain);
}

#[test]
fn a_secret_question_is_answered_by_its_reference_only() {
    let request = request(&secret());
    let question = &request.questions().as_slice()[0];
    assert_eq!(
        (question.secret_name(), question.purpose()),
        (Some("DEPLOY_TOKEN"), Some("To push the release\nto the registry."))
    );
    let good = AskUserResponse::answered(vec![AskUserAnswer::secret("Token", "DEPLOY_TOKEN")]);
    let result = ask_user_result(&request, &good).unwrap();
    assert_eq!(
        result.text(),
        r#"{"status":"answered","answered_by":"user","answers":[{"id":"q1","header":"Token","selected":[],"other_text":null,"secret_ref":"session:DEPLOY_TOKEN"}]}"#
    );
    // The value itself, wherever it is put, is refused without being repeated.
    let mut leaked = AskUserAnswer::custom("Token", "hunter2-value");
    let err = check_response(&request, &AskUserResponse::answered(vec![leaked.clone()])).unwrap_err();
    assert!(matches!(err, ResponseError::NotASecretReference { .. }));
    assert!(!err.to_string().contains("hunter2"), "{err}");
    leaked.custom_answer = None;
    leaked.secret_ref = Some("hunter2-value".to_owned());
    let err = check_response(&request, &AskUserResponse::answered(vec![leaked])).unwrap_err();
    assert!(!err.to_string().contains("hunter2") && !format!("{err:?}").contains("hunter2"), "{err:?}");
}

#[test]
fn the_result_is_data_in_every_case() {
    let request = request(&mixed());
    let answers = vec![
        AskUserAnswer::picked("Deploy", ["Production"]),
        AskUserAnswer::custom("Branch", "feature/é").with_id("branch"),
        AskUserAnswer::picked("Checks", ["Tests", "Lint"]),
    ];
    let result = ask_user_result(&request, &AskUserResponse::answered(answers)).unwrap();
    assert_eq!(result.outcome(), Outcome::Answered);
    assert_eq!(
        result.text(),
        concat!(
            r#"{"status":"answered","answered_by":"user","answers":["#,
            r#"{"id":"q1","header":"Deploy","selected":["Production"],"other_text":null},"#,
            r#"{"id":"branch","header":"Branch","selected":[],"other_text":"feature/é"},"#,
            r#"{"id":"q2","header":"Checks","selected":["Tests","Lint"],"other_text":null}]}"#
        )
    );
    let declined = ask_user_result(&request, &AskUserResponse::declined()).unwrap();
    assert_eq!(
        (declined.outcome(), declined.text()),
        (Outcome::Declined, r#"{"status":"declined","answered_by":"user","answers":[]}"#)
    );
    let timed_out = AskUserResult::timed_out_for(&request);
    assert_eq!(
        (timed_out.outcome(), timed_out.text()),
        (Outcome::TimedOut, r#"{"status":"timed_out","answered_by":"timeout","answers":[]}"#)
    );
}

#[test]
fn defaults_come_from_declared_defaults_first_and_never_stand_in_for_text() {
    let choices = request(&json!({"questions": [
        {"header": "One", "question": "?", "options": [{"label": "A (Recommended)"}, {"label": "B", "default": true}]},
        {"header": "Many", "question": "?", "multi_select": true,
         "options": [{"label": "A", "default": true}, {"label": "B"}, {"label": "C", "default": true}]},
        {"header": "None", "question": "?", "options": [{"label": "A"}, {"label": "B (recommended)"}]}]}));
    let response = DefaultsResponder::respond(&choices, AnsweredBy::Unattended);
    let picks: Vec<_> = response.answers.iter().map(|a| (a.id.as_deref(), a.selected.clone())).collect();
    assert_eq!(
        picks,
        [
            (Some("q1"), vec!["B".to_owned()]),
            (Some("q2"), vec!["A".to_owned(), "C".to_owned()]),
            (Some("q3"), vec!["B (recommended)".to_owned()])
        ]
    );
    let result = ask_user_result(&choices, &response).unwrap();
    assert_eq!(result.outcome(), Outcome::Defaulted(AnsweredBy::Unattended));
    assert!(
        result.text().starts_with(r#"{"status":"answered","answered_by":"unattended","answers":[{"id":"q1""#)
    );

    // A batch with a text question has no unattended value: declined, and a timeout applies nothing.
    let mixed = request(&mixed());
    let unattended = DefaultsResponder::respond(&mixed, AnsweredBy::Unattended);
    assert!(unattended.cancelled && unattended.answers.is_empty());
    assert_eq!(
        ask_user_result(&mixed, &unattended).unwrap().text(),
        r#"{"status":"declined","answered_by":"unattended","answers":[]}"#
    );
    let timeout = DefaultsResponder::respond(&mixed, AnsweredBy::Timeout);
    let result = ask_user_result(&mixed, &timeout).unwrap();
    assert_eq!(
        (result.outcome(), result.text()),
        (Outcome::TimedOut, r#"{"status":"timed_out","answered_by":"timeout","answers":[]}"#)
    );
    let secret = request(&secret());
    assert!(DefaultsResponder::respond(&secret, AnsweredBy::Unattended).cancelled);
}

#[test]
fn the_reference_profile_uses_no_declared_defaults_and_refuses_extended_answer_fields() {
    let reference = AskUserRequest::new(
        Questions::from_value(&json!({"questions": [
        {"header": "H", "question": "Q", "options": [{"label": "A"}, {"label": "B"}]}]}))
        .unwrap(),
    );
    let response = DefaultsResponder::respond(&reference, AnsweredBy::Unattended);
    assert_eq!(response.answers[0].id, None);
    assert_eq!(
        ask_user_result(&reference, &response).unwrap().text(),
        r#"{"answered_by":"unattended","answers":{"H":["A"]}}"#
    );
    let with_id = AskUserResponse::answered(vec![AskUserAnswer::picked("H", ["A"]).with_id("q1")]);
    assert!(matches!(
        check_response(&reference, &with_id),
        Err(ResponseError::NotInReferenceProfile { field: "id", .. })
    ));
}

#[test]
fn answer_rules_by_kind() {
    let request = request(&mixed());
    let ok_rest = || vec![AskUserAnswer::picked("Checks", ["Lint"]), AskUserAnswer::custom("Branch", "main")];
    let with = |first: AskUserAnswer| {
        let mut answers = vec![first];
        answers.extend(ok_rest());
        check_response(&request, &AskUserResponse::answered(answers))
    };
    assert_eq!(with(AskUserAnswer::picked("Deploy", ["Staging"])), Ok(()));
    assert_eq!(with(AskUserAnswer::custom("Deploy", "Both")), Ok(()));
    assert!(matches!(
        with(AskUserAnswer::picked("Deploy", ["Staging"]).with_id("q2")),
        Err(ResponseError::IdMismatch { .. })
    ));
    assert!(matches!(
        with(AskUserAnswer::secret("Deploy", "X")),
        Err(ResponseError::UnexpectedSecretRef { .. })
    ));
    let check = |answers| check_response(&request, &AskUserResponse::answered(answers));
    // `Checks` does not allow its own answer; `Branch` needs text.
    assert!(matches!(
        check(vec![
            AskUserAnswer::picked("Deploy", ["Staging"]),
            AskUserAnswer::custom("Checks", "All"),
            AskUserAnswer::custom("Branch", "x")
        ]),
        Err(ResponseError::OtherNotAllowed { .. })
    ));
    assert!(matches!(
        check(vec![AskUserAnswer::picked("Deploy", ["Staging"]), AskUserAnswer::picked("Branch", ["main"])]),
        Err(ResponseError::TextNotAnswered { .. })
    ));
    assert!(matches!(
        check(vec![AskUserAnswer::picked("Deploy", ["Staging"]), AskUserAnswer::custom("Branch", " \n")]),
        Err(ResponseError::BlankCustomAnswer { .. })
    ));
}

/// Guards the exact messages the contract quotes for the extended answer rules (§10): a host logs
/// them, and the answer server and `askuser check` send them on.
#[test]
fn the_extended_answer_messages_are_the_ones_the_contract_quotes() {
    let message = |request: &AskUserRequest, answers: Vec<AskUserAnswer>| {
        check_response(request, &AskUserResponse::answered(answers)).unwrap_err().to_string()
    };
    let reference = AskUserRequest::new(
        Questions::from_value(&json!({"questions": [
        {"header": "H", "question": "Q", "options": [{"label": "A"}, {"label": "B"}]}]}))
        .unwrap(),
    );
    assert_eq!(
        message(&reference, vec![AskUserAnswer::picked("H", ["A"]).with_id("q1")]),
        r#"answer for "H" has id, which the reference profile does not have"#
    );
    let mixed = request(&mixed());
    let rest = || vec![AskUserAnswer::picked("Checks", ["Lint"]), AskUserAnswer::custom("Branch", "main")];
    let first = |answer: AskUserAnswer| {
        let mut answers = vec![answer];
        answers.extend(rest());
        answers
    };
    assert_eq!(
        message(&mixed, first(AskUserAnswer::picked("Deploy", ["Staging"]).with_id("q2"))),
        r#"answer for "Deploy" gives id "q2", but that question's id is "q1""#
    );
    assert_eq!(
        message(&mixed, first(AskUserAnswer::secret("Deploy", "X"))),
        r#"answer for "Deploy" has a secret_ref but is not a secret question"#
    );
    assert_eq!(
        message(
            &mixed,
            vec![
                AskUserAnswer::picked("Deploy", ["Staging"]),
                AskUserAnswer::custom("Checks", "All"),
                AskUserAnswer::custom("Branch", "x"),
            ]
        ),
        r#"answer for "Checks" has a custom answer, but the question does not allow one (allow_other is false)"#
    );
    assert_eq!(
        message(
            &mixed,
            vec![AskUserAnswer::picked("Deploy", ["Staging"]), AskUserAnswer::picked("Branch", ["main"])]
        ),
        r#"answer for "Branch" to a text question needs custom_answer and no selected options"#
    );
    assert_eq!(
        message(&request(&secret()), vec![AskUserAnswer::custom("Token", "hunter2")]),
        r#"answer for "Token" must be exactly secret_ref "session:DEPLOY_TOKEN", with nothing selected and no custom_answer"#
    );
}

#[tokio::test(flavor = "current_thread")]
async fn secret_values_never_show_and_sinks_resolve_references() {
    let value = SecretValue::new("s3cr3t-value".to_owned());
    assert!(!format!("{value:?}{value}").contains("s3cr3t"));
    let sink = InMemorySecretSink::new();
    let context = AskContext::new().with_session_id("s");
    sink.put(&context, "DEPLOY_TOKEN", value).await.unwrap();
    assert!(!format!("{sink:?}").contains("s3cr3t"), "{sink:?}");
    assert_eq!(sink.resolve(Some("s"), "session:DEPLOY_TOKEN").unwrap().expose(), "s3cr3t-value");
    assert!(sink.resolve(None, "session:DEPLOY_TOKEN").is_none());
    sink.clear_session(Some("s"));
    assert!(sink.is_empty());
}
