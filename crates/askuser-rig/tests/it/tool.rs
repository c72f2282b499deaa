//! `AskUserTool` through rig's `Tool` trait: what the model sees for each outcome, what the
//! answerer is told, and what the host can catch.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use askuser_core::{
    AnswerError, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse, DECLINED, TIMED_OUT,
};
use askuser_rig::{AskUserTool, AskUserToolError, Session, ToolCallId, resume_message};
use askuser_tool::{AskUser, AskUserEvent, CallOutcome, DESCRIPTION, Dialect, ToolCall};
use rig_core::message::{CallId, Message, ToolResultContent, UserContent};
use rig_core::tool::{Tool, ToolContext, ToolErrorKind, tool_definition};
use serde_json::{Value, json};

fn args() -> Value {
    json!({"questions": [{"header": "Plan", "question": "Which plan?",
        "options": [{"label": "Small"}, {"label": "Large", "description": "More work"}]}]})
}

/// An answerer that picks "Large" and records the context it was given.
fn recording(seen: &Arc<Mutex<Vec<AskContext>>>) -> AskUser {
    let seen = Arc::clone(seen);
    AskUser::builder()
        .answerer(move |_: AskUserRequest, context: AskContext| {
            seen.lock().expect("lock").push(context);
            async {
                Ok::<_, AnswerError>(AskUserResponse::answered(vec![AskUserAnswer::picked(
                    "Plan",
                    ["Large"],
                )]))
            }
        })
        .build()
        .expect("valid capability")
}

fn context(session: Option<&str>, call_id: Option<&str>) -> ToolContext {
    let mut context = ToolContext::new();
    if let Some(session) = session {
        context.insert(Session::new(session)).expect("encodes");
    }
    if let Some(call_id) = call_id {
        context.insert(ToolCallId::new(call_id)).expect("encodes");
    }
    context
}

#[test]
fn the_definition_is_the_generic_dialect_under_ask_user_question() {
    let tool = AskUserTool::new(AskUser::builder().build().expect("valid"));
    let definition = tool_definition(&tool);
    assert_eq!(definition.name, "ask_user_question");
    assert_eq!(definition.description, DESCRIPTION);
    assert_eq!(definition.parameters, askuser_tool::parameters(Dialect::Generic));
}

#[tokio::test(start_paused = true)]
async fn an_answer_is_the_result_text_and_the_answerer_gets_session_and_call_id() {
    let seen = Arc::default();
    let tool = AskUserTool::new(recording(&seen));
    let text = tool.call(&mut context(Some("chat-7"), Some("call_9")), args()).await.expect("answered");
    assert_eq!(text, r#"{"Plan":["Large"]}"#);
    let seen = seen.lock().expect("lock");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].session_id.as_deref(), Some("chat-7"));
    assert_eq!(seen[0].tool_call_id.as_deref(), Some("call_9"));
}

#[tokio::test(start_paused = true)]
async fn without_a_known_call_id_each_call_gets_a_fresh_one() {
    let seen = Arc::default();
    let tool = AskUserTool::new(recording(&seen));
    for _ in 0..2 {
        tool.call(&mut ToolContext::new(), args()).await.expect("answered");
    }
    let seen = seen.lock().expect("lock");
    let ids: Vec<&str> = seen.iter().map(|c| c.tool_call_id.as_deref().expect("an id")).collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.iter().all(|id| id.len() == 36), "{ids:?}");
    assert_ne!(ids[0], ids[1]);
    assert_eq!(seen[0].session_id, None);
}

#[tokio::test(start_paused = true)]
async fn a_decline_is_a_normal_result() {
    let tool = AskUserTool::new(
        AskUser::builder()
            .answerer(|_: AskUserRequest, _: AskContext| async {
                Ok::<_, AnswerError>(AskUserResponse::declined())
            })
            .build()
            .expect("valid"),
    );
    assert_eq!(tool.call(&mut ToolContext::new(), args()).await.expect("a result"), DECLINED);
}

#[tokio::test(start_paused = true)]
async fn a_rejected_call_gives_the_model_the_retry_text_and_never_reaches_the_answerer() {
    let seen = Arc::default();
    let tool = AskUserTool::new(recording(&seen));
    // One option only, and an unknown key: both problems are listed with their locations.
    let bad = json!({"questions": [{"header": "Plan", "question": "Which?", "options": [{"label": "Only"}], "colour": 1}]});
    let error = tool.call(&mut ToolContext::new(), bad.clone()).await.expect_err("rejected");
    let retry = error.retry_text().expect("a retry").to_owned();
    // The same text the capability gives any other loop.
    let inline =
        AskUser::builder().build().expect("valid").call(ToolCall::new("c", &bad), AskContext::new()).await;
    assert_eq!(inline.model_text(), Some(retry.as_str()));
    assert!(retry.contains("questions[0].options"), "{retry}");
    assert!(retry.contains("colour"), "{retry}");

    let mapped = tool.map_error(error);
    assert_eq!(mapped.kind(), ToolErrorKind::InvalidArgs);
    assert_eq!(mapped.model_feedback(), Some(retry.as_str()));
    assert!(seen.lock().expect("lock").is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_deferred_call_is_a_typed_error_carrying_the_pending_question() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&events);
    let ask_user = AskUser::builder()
        .listener(move |event: &AskUserEvent| {
            if let AskUserEvent::Requested(requested) = event {
                log.lock().expect("lock").push(requested.request().id().to_owned());
            }
        })
        .build()
        .expect("valid");
    let tool = AskUserTool::new(ask_user);
    let error = tool.call(&mut context(None, Some("call_42")), args()).await.expect_err("deferred");
    let pending = error.pending().expect("a pending question").clone();
    assert_eq!(pending.tool_call_id(), "call_42");
    assert_eq!(*events.lock().expect("lock"), ["call_42"], "the Requested event carries the real call id");

    // Through rig's error envelope, the host can still reach it.
    let mapped = tool.map_error(error);
    assert_eq!(mapped.kind(), ToolErrorKind::Other);
    let caught = AskUserToolError::from_tool_error(&mapped).and_then(AskUserToolError::pending);
    assert_eq!(caught, Some(&pending));
    let feedback = mapped.model_feedback().expect("text");
    assert!(feedback.contains("waiting for their answer"), "{feedback}");

    // Resumed: the tool result is byte-identical to what an inline call returns.
    let response = AskUserResponse::answered(vec![AskUserAnswer::picked("Plan", ["Large"])]);
    let Message::User { content } = resume_message(&pending, &response).expect("fits") else {
        panic!("a user message")
    };
    let [UserContent::ToolResult(result)] = content.as_slice() else {
        panic!("one tool result: {content:?}")
    };
    assert_eq!(result.call, CallId::from_wire("call_42"));
    assert_eq!(result.name, "ask_user_question");
    assert!(!result.is_error);
    let [ToolResultContent::Text(text)] = result.content.as_slice() else { panic!("one text") };
    let inline = AskUserTool::new(recording(&Arc::default()))
        .call(&mut ToolContext::new(), args())
        .await
        .expect("answered");
    assert_eq!(text.text, inline);
}

#[tokio::test(start_paused = true)]
async fn a_misfit_response_fails_the_call_without_telling_the_model_why() {
    let tool = AskUserTool::new(
        AskUser::builder()
            .answerer(|_: AskUserRequest, _: AskContext| async {
                Ok::<_, AnswerError>(AskUserResponse::answered(vec![AskUserAnswer::picked(
                    "Plan",
                    ["Medium secret"],
                )]))
            })
            .build()
            .expect("valid"),
    );
    let error = tool.call(&mut ToolContext::new(), args()).await.expect_err("fails");
    assert!(matches!(error, AskUserToolError::Failed(_)), "{error:?}");
    let mapped = tool.map_error(error);
    assert_eq!(mapped.model_feedback(), Some("the tool failed"));
    assert!(!mapped.model_feedback().unwrap_or_default().contains("secret"));
}

#[tokio::test(start_paused = true)]
async fn the_capability_timeout_and_policy_apply() {
    let tool = AskUserTool::new(
        AskUser::builder()
            .answerer(|_: AskUserRequest, _: AskContext| {
                std::future::pending::<Result<AskUserResponse, AnswerError>>()
            })
            .timeout(Duration::from_secs(30))
            .build()
            .expect("valid"),
    );
    let started = tokio::time::Instant::now();
    let text = tool.call(&mut ToolContext::new(), args()).await.expect("a result");
    assert_eq!(text, TIMED_OUT);
    assert_eq!(started.elapsed(), Duration::from_secs(30));
}

#[tokio::test(start_paused = true)]
async fn same_verdicts_as_the_capability_for_odd_arguments() {
    // rig hands the tool a parsed value; the validator sees it with askuser's rules.
    #[track_caller]
    fn expect_retry(outcome: &CallOutcome, tool_error: &AskUserToolError) {
        assert_eq!(outcome.model_text(), tool_error.retry_text());
    }
    let capability = AskUser::builder().build().expect("valid");
    let tool = AskUserTool::new(capability.clone());
    for value in
        [json!(null), json!([]), json!({"questions": "Plan?"}), json!({"questions": [{"header": ""}]})]
    {
        let error = tool.call(&mut ToolContext::new(), value.clone()).await.expect_err("rejected");
        let outcome = capability.call(ToolCall::new("c", &value), AskContext::new()).await;
        expect_retry(&outcome, &error);
    }
}
