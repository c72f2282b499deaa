//! An agent loop driven by a scripted model: every `ask_user_question` call goes through the
//! [`AskUser`] capability, and the loop prints each tool call and the exact text the model gets.
//!
//! The scenarios: a valid call a person answers; an invalid call that gets a retry and is then
//! fixed; a call the person declines; an unattended call (nobody there, defaults applied); a call
//! nobody answers in time; and a deferred call that pauses the run and is resumed from its stored
//! [`PendingQuestion`].

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use askuser_core::{
    AnswerError, Answerer, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse, DefaultsResponder,
};
use askuser_tool::{AskUser, AskUserEvent, BuildError, CallOutcome, PendingQuestion, TOOL_NAME, ToolCall};

/// What the scripted person does with the next request.
#[derive(Debug, Clone)]
enum Behaviour {
    /// Picks these labels, one list per question in order.
    Pick(Vec<Vec<&'static str>>),
    /// Declines.
    Decline,
    /// Never answers (the timeout cancels the wait).
    Silent,
}

/// A person at the keyboard, following a script.
struct ScriptedPerson {
    script: Mutex<VecDeque<Behaviour>>,
}

#[askuser_core::async_trait]
impl Answerer for ScriptedPerson {
    async fn answer(
        &self,
        request: AskUserRequest,
        _context: AskContext,
    ) -> Result<AskUserResponse, AnswerError> {
        let next = self.script.lock().map_err(|_| AnswerError::failed("script lock poisoned"))?.pop_front();
        match next {
            Some(Behaviour::Pick(picks)) => Ok(AskUserResponse::answered(
                request
                    .questions()
                    .iter()
                    .zip(picks)
                    .map(|(q, labels)| AskUserAnswer::picked(q.header(), labels))
                    .collect(),
            )),
            Some(Behaviour::Decline) => Ok(AskUserResponse::declined()),
            Some(Behaviour::Silent) => std::future::pending().await,
            None => Err(AnswerError::failed("the script has no more answers")),
        }
    }
}

/// The tool calls the scripted model makes, in order, with a label for each.
const MODEL_CALLS: [(&str, &str); 6] = [
    (
        "valid call, a person answers",
        r#"{"questions":[{"header":"Target","question":"Where should I deploy the fix?","options":[{"label":"Staging (Recommended)","description":"Safe first step"},{"label":"Production"}]}]}"#,
    ),
    (
        "invalid call (one option only): the model gets a retry",
        r#"{"questions":[{"header":"Changelog","question":"Add a changelog entry?","options":[{"label":"Yes"}]}]}"#,
    ),
    (
        "the model fixes its call",
        r#"{"questions":[{"header":"Changelog","question":"Add a changelog entry?","options":[{"label":"Yes"},{"label":"No"}]}]}"#,
    ),
    (
        "the person declines",
        r#"{"questions":[{"header":"Rename","question":"Rename the module while I am at it?","options":[{"label":"Rename"},{"label":"Keep the name"}]}]}"#,
    ),
    (
        "nobody answers in time",
        r#"{"questions":[{"header":"Tests","question":"Which tests should I run?","multi_select":true,"options":[{"label":"Unit"},{"label":"Integration"}]}]}"#,
    ),
    (
        "unattended run: defaults stand in",
        r#"{"questions":[{"header":"Format","question":"Reformat the touched files?","options":[{"label":"Leave them"},{"label":"Reformat (Recommended)"}]}]}"#,
    ),
];

/// The deferred call the model makes in a run with no answerer.
pub const DEFERRED_ARGS: &str = r#"{"questions":[{"header":"Release","question":"Cut the release now?","options":[{"label":"Now"},{"label":"Next week"}]}]}"#;

/// Runs the scripted conversation and returns the transcript: each tool call, and the exact text
/// the model receives (or what the host does instead). `timeout` bounds the person's answer.
///
/// # Errors
///
/// A capability configuration error (none with a positive timeout).
pub async fn run(timeout: Duration) -> Result<Vec<String>, BuildError> {
    let transcript = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&transcript);
    let watcher = move |event: &AskUserEvent| {
        let line = match event {
            AskUserEvent::Requested(e) if e.is_deferred() => "  [event] requested (deferred)".to_owned(),
            AskUserEvent::Requested(_) => "  [event] requested: the answerer runs".to_owned(),
            AskUserEvent::Answered(e) if e.timed_out() => "  [event] answered: timed out".to_owned(),
            AskUserEvent::Answered(e) if e.response().cancelled => "  [event] answered: declined".to_owned(),
            AskUserEvent::Answered(_) => "  [event] answered".to_owned(),
            AskUserEvent::Nudge(_) => "  [event] nudge: still waiting, the deadline is near".to_owned(),
            _ => "  [event] other".to_owned(),
        };
        if let Ok(mut lines) = log.lock() {
            lines.push(line);
        }
    };
    let person = ScriptedPerson {
        script: Mutex::new(VecDeque::from([
            Behaviour::Pick(vec![vec!["Staging (Recommended)"]]),
            Behaviour::Pick(vec![vec!["Yes"]]),
            Behaviour::Decline,
            Behaviour::Silent,
        ])),
    };
    let attended = AskUser::builder().answerer(person).timeout(timeout).listener(watcher.clone()).build()?;
    let unattended =
        AskUser::builder().answerer(DefaultsResponder::new()).listener(watcher.clone()).build()?;
    let deferred = AskUser::builder().listener(watcher).build()?;

    let say = |line: String| {
        if let Ok(mut lines) = transcript.lock() {
            lines.push(line);
        }
    };
    for (turn, (label, args)) in MODEL_CALLS.iter().enumerate() {
        let call_id = format!("call_{}", turn + 1);
        say(format!("## {label}"));
        say(format!("model -> {TOOL_NAME} {call_id} {args}"));
        let ask_user = if turn == MODEL_CALLS.len() - 1 { &unattended } else { &attended };
        let outcome = ask_user.call(ToolCall::new(&call_id, *args), AskContext::new()).await;
        say(describe(&outcome));
    }

    say("## deferred: the run pauses, the host stores the question and resumes later".to_owned());
    say(format!("model -> {TOOL_NAME} call_7 {DEFERRED_ARGS}"));
    let outcome = deferred.call(ToolCall::new("call_7", DEFERRED_ARGS), AskContext::new()).await;
    say(describe(&outcome));
    if let CallOutcome::Deferred(pending) = outcome {
        let stored = serde_json::to_string(&pending).unwrap_or_default();
        say(format!("host stores {stored}"));
        let response = r#"{"answers":[{"header":"Release","selected":["Next week"]}]}"#;
        say(format!("later, the person answers {response}"));
        match resume(&stored, response) {
            Ok(text) => say(format!("tool -> model (resumed result): {text}")),
            Err(e) => say(format!("resume failed: {e}")),
        }
    }
    let lines = transcript.lock().map(|lines| lines.clone()).unwrap_or_default();
    Ok(lines)
}

/// What the host does with an outcome, as one transcript line.
fn describe(outcome: &CallOutcome) -> String {
    match outcome {
        CallOutcome::Completed(result) => {
            format!("tool -> model ({}): {}", result.outcome().as_str(), result.text())
        }
        CallOutcome::Retry(retry) => format!("tool -> model (retry): {}", retry.text()),
        CallOutcome::Deferred(pending) => format!("run paused on {}", pending.tool_call_id()),
        CallOutcome::Failed(error) => format!("call failed: {error}"),
        _ => "unknown outcome".to_owned(),
    }
}

/// Resumes a stored pending question with a stored response: the tool result text, or what is
/// wrong. This is all a later process needs.
///
/// # Errors
///
/// The stored pending question or the response is not valid JSON of its shape, or the response
/// does not fit the question.
pub fn resume(stored_pending: &str, response: &str) -> Result<String, String> {
    let pending: PendingQuestion =
        serde_json::from_str(stored_pending).map_err(|e| format!("bad pending question: {e}"))?;
    let response: AskUserResponse =
        serde_json::from_str(response).map_err(|e| format!("bad response: {e}"))?;
    let result = pending.result(&response).map_err(|e| format!("the response does not fit: {e}"))?;
    Ok(result.into_text())
}
