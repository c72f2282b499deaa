//! Deferred mode: no answerer, a pending question that serialises, and a resumed result that is
//! byte-identical to the inline one.

use askuser_core::{
    AnswerError, AnsweredBy, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse, DefaultsResponder,
    Timestamp,
};
use askuser_tool::{AskUser, CallOutcome, PendingQuestion, RebuildError, ToolCall};

use crate::support::{ARGS, BAD_ARGS, Log, person_response};

fn deferred(log: &Log) -> AskUser {
    AskUser::builder().listener(log.listener()).build().expect("valid configuration")
}

async fn pause(ask_user: &AskUser) -> PendingQuestion {
    match ask_user.call(ToolCall::new("call_7", ARGS), AskContext::new()).await {
        CallOutcome::Deferred(pending) => pending,
        other => panic!("expected a deferred outcome, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn deferred_call_emits_requested_only_and_uses_the_call_id() {
    let log = Log::default();
    let pending = pause(&deferred(&log)).await;
    assert_eq!(pending.tool_call_id(), "call_7");
    assert_eq!(pending.request().id(), "call_7");
    assert_eq!(pending.tool_name(), "ask_user_question");
    assert_eq!(log.entries(), ["requested deferred=true"]);
}

#[tokio::test(start_paused = true)]
async fn rejected_deferred_call_is_a_retry_with_no_event() {
    let log = Log::default();
    let outcome = deferred(&log).call(ToolCall::new("call_7", BAD_ARGS), AskContext::new()).await;
    assert!(matches!(outcome, CallOutcome::Retry(_)));
    assert!(log.entries().is_empty());
}

#[tokio::test(start_paused = true)]
async fn pending_question_wire_shape() {
    let pending = pause(&deferred(&Log::default())).await;
    let mut value = serde_json::to_value(&pending).expect("serialises");
    let asked_at: Timestamp = value["asked_at"].as_str().expect("stamped").parse().expect("RFC 3339");
    assert!(asked_at.until(Timestamp::now()) < std::time::Duration::from_mins(1));
    value["asked_at"] = "[asked_at]".into();
    // Sorted, whether or not a crate in the build switched on serde_json's `preserve_order`.
    value.sort_all_objects();
    insta::assert_json_snapshot!("pending_question", value);
    let text = serde_json::to_string(&pending).expect("serialises");
    assert!(text.starts_with(
        r#"{"version":2,"tool_call_id":"call_7","tool_name":"ask_user_question","profile":"reference","asked_at":""#
    ));
    let back: PendingQuestion = serde_json::from_str(&text).expect("deserialises");
    assert_eq!(back, pending);
}

#[test]
fn pending_question_reads_version_1() {
    let v1 =
        format!(r#"{{"version":1,"tool_call_id":"c","tool_name":"ask_user_question","arguments":{ARGS}}}"#);
    let pending: PendingQuestion = serde_json::from_str(&v1).expect("version 1 is read");
    assert_eq!((pending.tool_call_id(), pending.asked_at(), pending.expires_at()), ("c", None, None));
    assert_eq!(
        pending.result(&person_response()).expect("fits").text(),
        r#"{"Approach":["Fix the code (Recommended)"],"Targets":["db.py","api.py"]}"#
    );
    let stamped = format!(
        r#"{{"version":1,"tool_call_id":"c","tool_name":"ask_user_question","asked_at":"2026-01-01T00:00:00Z","arguments":{ARGS}}}"#
    );
    assert!(serde_json::from_str::<PendingQuestion>(&stamped).is_err());
}

#[test]
fn pending_question_rejects_another_version_and_invalid_arguments() {
    let other =
        format!(r#"{{"version":3,"tool_call_id":"c","tool_name":"ask_user_question","arguments":{ARGS}}}"#);
    let err = serde_json::from_str::<PendingQuestion>(&other).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("unsupported pending question version 3 (this build reads versions 1 and 2)"),
        "{err}"
    );
    let invalid =
        r#"{"version":1,"tool_call_id":"c","tool_name":"ask_user_question","arguments":{"questions":[]}}"#;
    assert!(serde_json::from_str::<PendingQuestion>(invalid).is_err());
    let unknown = r#"{"version":1,"tool_call_id":"c","tool_name":"ask_user_question","arguments":{"questions":[]},"x":1}"#;
    assert!(serde_json::from_str::<PendingQuestion>(unknown).is_err());
}

#[tokio::test(start_paused = true)]
async fn rebuilt_from_the_tool_call_it_equals_the_paused_question() {
    let ask_user = deferred(&Log::default());
    let paused = pause(&ask_user).await;
    let call = ToolCall::new("call_7", ARGS);
    // The same questions under the same id; when it was asked is not in the call.
    for rebuilt in
        [ask_user.rebuild(call).expect("rebuilds"), PendingQuestion::from_tool_call(call).expect("rebuilds")]
    {
        assert_eq!(
            (rebuilt.tool_call_id(), rebuilt.tool_name()),
            (paused.tool_call_id(), paused.tool_name())
        );
        assert_eq!(rebuilt.request().questions(), paused.request().questions());
        assert_eq!(rebuilt.asked_at(), None);
        assert_eq!(rebuilt.result(&person_response()), paused.result(&person_response()));
    }
}

#[test]
fn rebuild_rejects_another_tool_and_invalid_arguments() {
    let err =
        PendingQuestion::from_tool_call(ToolCall::new("c", ARGS).with_tool_name("read_file")).unwrap_err();
    assert_eq!(err.to_string(), r#"tool call for "read_file" is not an "ask_user_question" call"#);
    let err = PendingQuestion::from_tool_call(ToolCall::new("c", BAD_ARGS)).unwrap_err();
    assert!(matches!(err, RebuildError::InvalidArguments(_)));
}

fn responses() -> Vec<AskUserResponse> {
    let request = AskUserRequest::new(askuser_core::Questions::from_json(ARGS).expect("valid"));
    vec![
        person_response(),
        AskUserResponse::declined(),
        AskUserResponse::answered(vec![
            AskUserAnswer::custom("Approach", "Ask the team first\n— then decide"),
            AskUserAnswer::picked("Targets", ["cli.py"]),
        ]),
        DefaultsResponder::respond(&request, AnsweredBy::Unattended),
    ]
}

#[tokio::test(start_paused = true)]
async fn resumed_result_is_byte_identical_to_the_inline_one() {
    let paused = pause(&deferred(&Log::default())).await;
    // What a store would hold between the pause and the resume.
    let stored = serde_json::to_string(&paused).expect("serialises");
    for response in responses() {
        let reply = response.clone();
        let inline = AskUser::builder()
            .answerer(move |_: AskUserRequest, _: AskContext| {
                let reply = reply.clone();
                async move { Ok::<_, AnswerError>(reply) }
            })
            .build()
            .expect("valid");
        let inline_text = inline
            .call(ToolCall::new("call_7", ARGS), AskContext::new())
            .await
            .model_text()
            .expect("a result")
            .to_owned();
        let resumed: PendingQuestion = serde_json::from_str(&stored).expect("deserialises");
        let resumed_text = resumed.result(&response).expect("fits").into_text();
        assert_eq!(resumed_text.as_bytes(), inline_text.as_bytes());
    }
}

#[tokio::test(start_paused = true)]
async fn resumed_misfit_is_an_error() {
    let paused = pause(&deferred(&Log::default())).await;
    let misfit = AskUserResponse::answered(vec![AskUserAnswer::picked("Approach", ["Patch the test"])]);
    let err = paused.result(&misfit).unwrap_err();
    assert_eq!(err.to_string(), r#"unanswered questions: ["Targets"]"#);
}
