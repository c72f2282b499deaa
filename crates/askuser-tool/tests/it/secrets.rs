//! One secret through every path a value could leak by (docs/contract.md §10): an inline call with listeners
//! and `include_content(true)` under a tracing subscriber that captures everything, the `Debug` of
//! every public value involved, a deferred call's `PendingQuestion` serialised and resumed, and
//! the errors and retries of answerers that get it wrong. The value's bytes must appear nowhere
//! except where the host's sink hands it back.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use askuser_core::{
    AnswerError, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse, InMemorySecretSink, Profile,
    SecretSink, SecretValue,
};
use askuser_tool::{AskUser, AskUserEvent, CallOutcome, ToolCall};

use crate::tracing_spans::Capture;

/// The value: distinctive enough that a partial copy would show too.
const VALUE: &str = "sk-live-LEAKCANARY-93f1c0de";

const SECRET_CALL: &str = r#"{"questions":[{"kind":"secret","header":"Token","question":"Your deploy token?",
  "secret_name":"DEPLOY_TOKEN","purpose":"To push the release."}],"timeout_seconds":60}"#;

/// Fails naming where the value (or its most distinctive part) showed up.
#[track_caller]
fn assert_clean(what: &str, text: &str) {
    assert!(!text.contains(VALUE) && !text.contains("LEAKCANARY"), "the secret leaked into {what}: {text}");
}

/// How an answerer under test answers a secret question.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Hands the value to the sink and answers with the reference: the right way.
    Correct,
    /// Puts the value in `custom_answer`: a bug the checker must refuse without repeating it.
    ValueAsText,
    /// Puts the value in `secret_ref`: the same bug, elsewhere.
    ValueAsReference,
    /// Fails with a retry message of its own (which must not be given the value either).
    Retry,
}

fn answerer(sink: Arc<InMemorySecretSink>, behaviour: Behaviour) -> impl askuser_core::Answerer + 'static {
    move |request: AskUserRequest, context: AskContext| {
        let sink = Arc::clone(&sink);
        async move {
            let question = &request.questions().as_slice()[0];
            let typed = SecretValue::new(VALUE.to_owned());
            let name = question.secret_name().expect("a secret question");
            let answer = match behaviour {
                Behaviour::Correct => {
                    sink.put(&context, name, typed).await.map_err(|e| AnswerError::failed(e.to_string()))?;
                    AskUserAnswer::secret(question.header(), name)
                }
                Behaviour::ValueAsText => AskUserAnswer::custom(question.header(), typed.expose()),
                Behaviour::ValueAsReference => {
                    let mut answer = AskUserAnswer::secret(question.header(), name);
                    answer.secret_ref = Some(typed.expose().to_owned());
                    answer
                }
                Behaviour::Retry => {
                    return Err(AnswerError::retry("the secret could not be stored; ask again later"));
                }
            };
            Ok(AskUserResponse::answered(vec![answer]))
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_secret_never_leaves_the_sink() {
    let capture = Capture::default();
    let _default = tracing::subscriber::set_default(capture.clone());
    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&events);
    let sink = Arc::new(InMemorySecretSink::new());
    let ask_user = AskUser::builder()
        .profile(Profile::Extended)
        .answerer(answerer(Arc::clone(&sink), Behaviour::Correct))
        .timeout(Duration::from_mins(2))
        .include_content(true)
        .listener(move |event: &AskUserEvent| {
            let mut shown = format!("{event:?}");
            match event {
                AskUserEvent::Requested(e) => {
                    shown.push_str(&serde_json::to_string(e.request()).expect("serialises"));
                }
                AskUserEvent::Answered(e) => {
                    shown.push_str(&serde_json::to_string(e.response()).expect("serialises"));
                }
                _ => {}
            }
            seen.lock().expect("lock").push(shown);
        })
        .build()
        .expect("valid");
    let context = AskContext::new().with_session_id("s1");
    let outcome = ask_user.call(ToolCall::new("call_1", SECRET_CALL), context).await;
    let CallOutcome::Completed(result) = &outcome else { panic!("expected a result, got {outcome:?}") };
    assert_eq!(
        result.text(),
        r#"{"status":"answered","answered_by":"user","answers":[{"id":"q1","header":"Token","selected":[],"other_text":null,"secret_ref":"session:DEPLOY_TOKEN"}]}"#
    );
    // The tool that needs it resolves the reference through the host's sink.
    let resolved = sink.resolve(Some("s1"), "session:DEPLOY_TOKEN").expect("stored");
    assert_eq!(resolved.expose(), VALUE);

    assert_clean("the result", result.text());
    assert_clean("the outcome's Debug", &format!("{outcome:?}"));
    let events = events.lock().expect("lock").clone();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_clean("the events", &events.join("\n"));
    assert_clean("the trace", &format!("{:?}", capture.fields.lock().expect("lock")));
    assert!(!capture.fields.lock().expect("lock").is_empty());
    assert_clean("the sink's Debug", &format!("{sink:?}"));
    assert_clean("the value's Debug and Display", &format!("{resolved:?} {resolved}"));
    assert_clean("the capability's Debug", &format!("{ask_user:?}"));

    // Deferred: the pending question, serialised and resumed in "another process".
    let deferred =
        AskUser::builder().profile(Profile::Extended).include_content(true).build().expect("valid");
    let CallOutcome::Deferred(pending) =
        deferred.call(ToolCall::new("call_2", SECRET_CALL), AskContext::new()).await
    else {
        panic!("expected a deferred call")
    };
    let stored = serde_json::to_string(&pending).expect("serialises");
    let resumed: askuser_tool::PendingQuestion = serde_json::from_str(&stored).expect("reads back");
    let response = AskUserResponse::answered(vec![AskUserAnswer::secret("Token", "DEPLOY_TOKEN")]);
    let resumed_result = resumed.result(&response).expect("fits");
    for (what, text) in [
        ("the pending question", stored),
        ("the pending question's Debug", format!("{resumed:?}")),
        ("the response", serde_json::to_string(&response).expect("serialises")),
        ("the response's Debug", format!("{response:?}")),
        ("the resumed result", resumed_result.text().to_owned()),
    ] {
        assert_clean(what, &text);
    }
}

#[tokio::test(start_paused = true)]
async fn an_answerer_that_gets_it_wrong_does_not_leak_it_either() {
    let capture = Capture::default();
    let _default = tracing::subscriber::set_default(capture.clone());
    for behaviour in [Behaviour::ValueAsText, Behaviour::ValueAsReference, Behaviour::Retry] {
        let sink = Arc::new(InMemorySecretSink::new());
        let ask_user = AskUser::builder()
            .profile(Profile::Extended)
            .answerer(answerer(Arc::clone(&sink), behaviour))
            .include_content(false)
            .build()
            .expect("valid");
        let outcome = ask_user.call(ToolCall::new("call_3", SECRET_CALL), AskContext::new()).await;
        match &outcome {
            CallOutcome::Failed(error) => {
                let mut chain = error.to_string();
                let mut source = std::error::Error::source(error);
                while let Some(cause) = source {
                    chain.push_str(": ");
                    chain.push_str(&cause.to_string());
                    source = cause.source();
                }
                assert!(chain.contains("must be exactly secret_ref \"session:DEPLOY_TOKEN\""), "{chain}");
                assert_clean("the call error", &chain);
            }
            CallOutcome::Retry(retry) => assert_clean("the retry payload", retry.text()),
            other => panic!("expected a failure or a retry, got {other:?}"),
        }
        assert_clean("the outcome's Debug", &format!("{outcome:?}"));
        assert!(sink.is_empty());
    }
    assert_clean("the trace", &format!("{:?}", capture.fields.lock().expect("lock")));
}
