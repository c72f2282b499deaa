//! The inline call flow: events and their order, timeouts, failures, rendering, configuration.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use askuser_core::{
    AnswerError, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse, DECLINED, DefaultsResponder,
    TIMED_OUT, TIMED_OUT_STOP,
};
use askuser_tool::{
    AskUser, AskUserEvent, BuildError, CallError, CallOutcome, OnTimeout, RetryReason, ToolCall,
};
use serde_json::Value;

use crate::support::{ARGS, BAD_ARGS, Log, Scripted, Slow, person_response, secret_answerer};

fn call(args: &str) -> ToolCall<'_> {
    ToolCall::new("call_1", args)
}

fn scripted(log: &Log, result: fn() -> Result<AskUserResponse, AnswerError>) -> AskUser {
    AskUser::builder()
        .answerer(Scripted { log: log.clone(), result })
        .listener(log.listener())
        .build()
        .expect("valid configuration")
}

#[track_caller]
fn text(outcome: &CallOutcome) -> &str {
    outcome.model_text().unwrap_or_else(|| panic!("no model text in {outcome:?}"))
}

#[tokio::test(start_paused = true)]
async fn answered_call_emits_requested_before_and_answered_after_the_answerer() {
    let log = Log::default();
    let ask_user = scripted(&log, || Ok(person_response()));
    let outcome = ask_user.call(call(ARGS), AskContext::new()).await;
    assert!(matches!(outcome, CallOutcome::Completed(_)));
    assert_eq!(text(&outcome), r#"{"Approach":["Fix the code (Recommended)"],"Targets":["db.py","api.py"]}"#);
    assert_eq!(
        log.entries(),
        ["requested deferred=false", "answerer ran", "answered cancelled=false timed_out=false failed=false"]
    );
}

#[tokio::test(start_paused = true)]
async fn rejected_call_never_reaches_the_answerer_and_emits_nothing() {
    let log = Log::default();
    let ask_user = scripted(&log, || Ok(person_response()));
    let outcome = ask_user.call(call(BAD_ARGS), AskContext::new()).await;
    let CallOutcome::Retry(retry) = &outcome else { panic!("expected a retry, got {outcome:?}") };
    assert!(matches!(retry.reason(), RetryReason::InvalidArguments(_)));
    let payload: Value = serde_json::from_str(retry.text()).expect("retry payload is JSON");
    assert_eq!(payload["problems"][0]["loc"], serde_json::json!(["questions", 0, "options"]));
    assert_eq!(payload["problems"][0]["type"], "too_short");
    assert!(log.entries().is_empty(), "{:?}", log.entries());
}

#[tokio::test(start_paused = true)]
async fn value_arguments_give_the_same_verdicts_as_text() {
    let log = Log::default();
    let ask_user = scripted(&log, || Ok(person_response()));
    for args in [ARGS, BAD_ARGS] {
        let value: Value = serde_json::from_str(args).expect("JSON");
        let from_text = ask_user.call(call(args), AskContext::new()).await;
        let from_value = ask_user.call(ToolCall::new("call_1", &value), AskContext::new()).await;
        assert_eq!(from_text.model_text(), from_value.model_text());
    }
}

#[tokio::test(start_paused = true)]
async fn declined_call_tells_the_model_verbatim() {
    let log = Log::default();
    let ask_user = scripted(&log, || Ok(AskUserResponse::declined()));
    let outcome = ask_user.call(call(ARGS), AskContext::new()).await;
    assert_eq!(text(&outcome), DECLINED);
    assert_eq!(log.entries()[2], "answered cancelled=true timed_out=false failed=false");
}

#[tokio::test(start_paused = true)]
async fn failing_answerer_emits_failed_then_fails_the_call() {
    let log = Log::default();
    let ask_user = scripted(&log, || Err(AnswerError::failed("the web socket closed")));
    let outcome = ask_user.call(call(ARGS), AskContext::new()).await;
    let CallOutcome::Failed(error) = &outcome else { panic!("expected a failure, got {outcome:?}") };
    assert!(matches!(error, CallError::Answerer(_)));
    assert!(!error.is_interrupted());
    assert_eq!(error.to_string(), "the answerer failed");
    assert_eq!(
        std::error::Error::source(error).map(ToString::to_string).as_deref(),
        Some("the web socket closed")
    );
    assert_eq!(
        log.entries(),
        ["requested deferred=false", "answerer ran", "answered cancelled=true timed_out=false failed=true"]
    );
}

#[tokio::test(start_paused = true)]
async fn interrupted_answerer_fails_the_call_as_interrupted() {
    let log = Log::default();
    let ask_user = scripted(&log, || Err(AnswerError::interrupted()));
    let outcome = ask_user.call(call(ARGS), AskContext::new()).await;
    let CallOutcome::Failed(error) = outcome else { panic!("expected a failure") };
    assert!(error.is_interrupted());
}

#[tokio::test(start_paused = true)]
async fn answerer_retry_reaches_the_model_as_a_retry() {
    let log = Log::default();
    let ask_user = scripted(&log, || Err(AnswerError::retry("Ask one question at a time.")));
    let outcome = ask_user.call(call(ARGS), AskContext::new()).await;
    let CallOutcome::Retry(retry) = &outcome else { panic!("expected a retry, got {outcome:?}") };
    assert!(matches!(retry.reason(), RetryReason::Answerer(_)));
    assert_eq!(retry.text(), "Ask one question at a time.");
    assert_eq!(log.entries()[2], "answered cancelled=true timed_out=false failed=true");
}

#[tokio::test(start_paused = true)]
async fn misfit_response_fails_the_call_after_the_answered_event() {
    let log = Log::default();
    let ask_user =
        scripted(&log, || Ok(AskUserResponse::answered(vec![AskUserAnswer::picked("Approach", ["Nope"])])));
    let outcome = ask_user.call(call(ARGS), AskContext::new()).await;
    let CallOutcome::Failed(CallError::Response(error)) = &outcome else {
        panic!("expected a misfit, got {outcome:?}")
    };
    assert_eq!(error.to_string(), r#"answer for "Approach" picked options it does not offer: ["Nope"]"#);
    assert_eq!(log.entries()[2], "answered cancelled=false timed_out=false failed=false");
}

#[tokio::test(start_paused = true)]
async fn timeout_cancels_the_answerer_before_the_answered_event() {
    let log = Log::default();
    let ask_user = AskUser::builder()
        .answerer(Slow { log: log.clone() })
        .timeout(Duration::from_secs(5))
        .listener(log.listener())
        .build()
        .expect("valid configuration");
    let started = tokio::time::Instant::now();
    let outcome = ask_user.call(call(ARGS), AskContext::new()).await;
    assert_eq!(started.elapsed(), Duration::from_secs(5));
    assert_eq!(text(&outcome), TIMED_OUT);
    assert_eq!(
        log.entries(),
        [
            "requested deferred=false",
            "answerer waiting",
            // 5 s − ⌈5 s / 5⌉: the nudge fires once, while the answerer still waits.
            "nudge after 4000 ms",
            "answerer dropped",
            "answered cancelled=true timed_out=true failed=false"
        ]
    );
}

/// Guards the `stop` policy: the model is told not to guess, and a host's own wording still wins.
#[tokio::test(start_paused = true)]
async fn stop_on_timeout_tells_the_model_not_to_guess() {
    let stop = |words: Option<&str>| {
        let builder = AskUser::builder()
            .answerer(Slow { log: Log::default() })
            .timeout(Duration::from_secs(5))
            .on_timeout(OnTimeout::Stop);
        match words {
            Some(words) => builder.timed_out_text(words),
            None => builder,
        }
        .build()
        .expect("valid configuration")
    };
    let outcome = stop(None).call(call(ARGS), AskContext::new()).await;
    assert_eq!(text(&outcome), TIMED_OUT_STOP);
    assert!(TIMED_OUT_STOP.contains("Do not guess") && !TIMED_OUT_STOP.contains("reasonable choice"));
    let outcome = stop(Some("Zu spät.")).call(call(ARGS), AskContext::new()).await;
    assert_eq!(text(&outcome), "Zu spät.");
}

#[tokio::test(start_paused = true)]
async fn apply_defaults_on_timeout_renders_the_provenance_form() {
    let log = Log::default();
    let ask_user = AskUser::builder()
        .answerer(Slow { log: log.clone() })
        .timeout(Duration::from_secs(5))
        .on_timeout(OnTimeout::ApplyDefaults)
        .listener(log.listener())
        .build()
        .expect("valid configuration");
    let outcome = ask_user.call(call(ARGS), AskContext::new()).await;
    assert_eq!(
        text(&outcome),
        r#"{"answered_by":"timeout","answers":{"Approach":["Fix the code (Recommended)"],"Targets":["api.py"]}}"#
    );
    assert!(log.entries().contains(&"answerer dropped".to_owned()));
    // Regression: the event said "declined" while the model was given the defaults.
    assert_eq!(
        log.entries().last().map(String::as_str),
        Some("answered cancelled=false timed_out=true failed=false")
    );
}

#[tokio::test(start_paused = true)]
async fn answer_within_the_timeout_is_used() {
    let ask_user = AskUser::builder()
        .answerer(|_: AskUserRequest, _: AskContext| async {
            tokio::time::sleep(Duration::from_secs(4)).await;
            Ok::<_, AnswerError>(person_response())
        })
        .timeout(Duration::from_secs(5))
        .build()
        .expect("valid configuration");
    let outcome = ask_user.call(call(ARGS), AskContext::new()).await;
    assert!(text(&outcome).starts_with(r#"{"Approach""#));
}

#[tokio::test(start_paused = true)]
async fn unattended_defaults_render_the_provenance_form() {
    let ask_user =
        AskUser::builder().answerer(DefaultsResponder::new()).build().expect("valid configuration");
    let outcome = ask_user.call(call(ARGS), AskContext::new()).await;
    assert_eq!(
        text(&outcome),
        r#"{"answered_by":"unattended","answers":{"Approach":["Fix the code (Recommended)"],"Targets":["api.py"]}}"#
    );
}

#[tokio::test(start_paused = true)]
async fn result_texts_snapshot() {
    let log = Log::default();
    let mut texts = Vec::new();
    for (name, result) in [
        ("answered", (|| Ok(person_response())) as fn() -> _),
        ("custom", || {
            Ok(AskUserResponse::answered(vec![
                AskUserAnswer::custom("Approach", "Skip it for now\nand keep 中文"),
                AskUserAnswer::picked("Targets", ["cli.py"]),
            ]))
        }),
        ("declined", || Ok(AskUserResponse::declined())),
        ("answerer_retry", || Err(AnswerError::retry("Ask fewer questions."))),
    ] {
        let outcome = scripted(&log, result).call(call(ARGS), AskContext::new()).await;
        texts.push(format!("{name}: {}", text(&outcome)));
    }
    let rejected = scripted(&log, || Ok(person_response())).call(call(BAD_ARGS), AskContext::new()).await;
    texts.push(format!("rejected: {}", text(&rejected)));
    let unattended = AskUser::builder().answerer(DefaultsResponder::new()).build().expect("valid");
    texts.push(format!("unattended: {}", text(&unattended.call(call(ARGS), AskContext::new()).await)));
    for policy in [OnTimeout::Decline, OnTimeout::ApplyDefaults] {
        let slow = AskUser::builder()
            .answerer(Slow { log: log.clone() })
            .timeout(Duration::from_secs(1))
            .on_timeout(policy)
            .build()
            .expect("valid");
        texts.push(format!("timeout {policy:?}: {}", text(&slow.call(call(ARGS), AskContext::new()).await)));
    }
    insta::assert_snapshot!("result_texts", texts.join("\n"));
}

#[test]
fn build_rejects_a_timeout_without_an_answerer() {
    let err = AskUser::builder().timeout(Duration::from_secs(1)).build().unwrap_err();
    assert_eq!(err, BuildError::TimeoutWithoutAnswerer);
    assert_eq!(err.to_string(), "a timeout needs an answerer: a deferred call has nothing to wait on");
}

#[test]
fn build_rejects_a_zero_timeout_and_an_empty_id() {
    let err =
        AskUser::builder().answerer(DefaultsResponder::new()).timeout(Duration::ZERO).build().unwrap_err();
    assert_eq!(err, BuildError::ZeroTimeout);
    assert_eq!(err.to_string(), "the timeout must be positive");
    assert_eq!(AskUser::builder().id("").build().unwrap_err(), BuildError::EmptyId);
}

#[test]
fn defaults_are_documented_ones() {
    let ask_user = AskUser::builder().build().expect("valid");
    assert_eq!(ask_user.id(), "ask_user");
    assert_eq!(ask_user.tool_name(), "ask_user_question");
    assert!(ask_user.is_deferred());
    assert_eq!(
        format!("{ask_user:?}"),
        "AskUser { id: \"ask_user\", tool_name: \"ask_user_question\", answerer: None, timeout: None, \
         on_timeout: Decline, sequential: false, max_argument_bytes: 1048576, profile: Reference, \
         max_timeout_seconds: 300, listeners: 0, include_content: true, declined_text: None, timed_out_text: None }"
    );
}

#[tokio::test(start_paused = true)]
async fn argument_size_cap_is_a_retry() {
    let ask_user =
        AskUser::builder().answerer(DefaultsResponder::new()).max_argument_bytes(64).build().expect("valid");
    let outcome = ask_user.call(call(ARGS), AskContext::new()).await;
    let CallOutcome::Retry(retry) = outcome else { panic!("expected a retry") };
    assert!(retry.text().contains(r#""type":"too_large""#), "{}", retry.text());
    assert!(retry.text().contains("limit of 64 bytes"), "{}", retry.text());
}

#[tokio::test(start_paused = true)]
async fn wrong_tool_name_fails_the_call() {
    let ask_user = AskUser::builder().answerer(DefaultsResponder::new()).build().expect("valid");
    let outcome =
        ask_user.call(ToolCall::new("call_1", ARGS).with_tool_name("read_file"), AskContext::new()).await;
    let CallOutcome::Failed(error) = outcome else { panic!("expected a failure") };
    assert_eq!(error.to_string(), r#"tool call for "read_file" reached the "ask_user_question" tool"#);
}

#[tokio::test(start_paused = true)]
async fn context_reaches_the_answerer_with_the_call_id_filled_in() {
    let seen = Arc::new(Mutex::new(None));
    let sink = Arc::clone(&seen);
    let ask_user = AskUser::builder()
        .answerer(move |_: AskUserRequest, context: AskContext| {
            *sink.lock().expect("lock") = Some(context);
            async { Ok::<_, AnswerError>(AskUserResponse::declined()) }
        })
        .build()
        .expect("valid");
    ask_user.call(call(ARGS), AskContext::new().with_session_id("s1")).await;
    let context = seen.lock().expect("lock").clone().expect("answerer ran");
    assert_eq!(context, AskContext::new().with_session_id("s1").with_tool_call_id("call_1"));
}

#[tokio::test(start_paused = true)]
async fn inline_request_ids_are_random_hex() {
    let ids = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&ids);
    let ask_user = AskUser::builder()
        .answerer(DefaultsResponder::new())
        .listener(move |event: &AskUserEvent| {
            if let AskUserEvent::Requested(e) = event {
                sink.lock().expect("lock").push(e.request().id().to_owned());
            }
        })
        .build()
        .expect("valid");
    ask_user.call(call(ARGS), AskContext::new()).await;
    ask_user.call(call(ARGS), AskContext::new()).await;
    let ids = ids.lock().expect("lock").clone();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
    for id in ids {
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{id}");
    }
}

async fn two_concurrent_calls(sequential: bool) -> Vec<String> {
    let log = Log::default();
    let ask_user = AskUser::builder()
        .answerer(|_: AskUserRequest, _: AskContext| async {
            tokio::time::sleep(Duration::from_secs(10)).await;
            Ok::<_, AnswerError>(AskUserResponse::declined())
        })
        .sequential(sequential)
        .listener(log.listener())
        .build()
        .expect("valid");
    let (a, b) = tokio::join!(
        ask_user.call(ToolCall::new("a", ARGS), AskContext::new()),
        ask_user.call(ToolCall::new("b", ARGS), AskContext::new()),
    );
    assert_eq!((a.model_text(), b.model_text()), (Some(DECLINED), Some(DECLINED)));
    log.entries().into_iter().map(|e| e.split(' ').next().unwrap_or_default().to_owned()).collect()
}

#[tokio::test(start_paused = true)]
async fn concurrent_by_default_and_one_at_a_time_when_sequential() {
    assert_eq!(two_concurrent_calls(false).await, ["requested", "requested", "answered", "answered"]);
    let started = tokio::time::Instant::now();
    assert_eq!(two_concurrent_calls(true).await, ["requested", "answered", "requested", "answered"]);
    assert_eq!(started.elapsed(), Duration::from_secs(20));
}

#[tokio::test(start_paused = true)]
async fn sequential_timeout_counts_from_each_calls_turn() {
    let ask_user = AskUser::builder()
        .answerer(|_: AskUserRequest, _: AskContext| async {
            tokio::time::sleep(Duration::from_secs(10)).await;
            Ok::<_, AnswerError>(AskUserResponse::declined())
        })
        .sequential(true)
        .timeout(Duration::from_secs(15))
        .build()
        .expect("valid");
    let started = tokio::time::Instant::now();
    let (a, b) = tokio::join!(
        ask_user.call(ToolCall::new("a", ARGS), AskContext::new()),
        ask_user.call(ToolCall::new("b", ARGS), AskContext::new()),
    );
    // The second call waited 10 s for its turn and then 10 s for its answer: 20 s in all, more
    // than the timeout, yet not timed out.
    assert_eq!((a.model_text(), b.model_text()), (Some(DECLINED), Some(DECLINED)));
    assert_eq!(started.elapsed(), Duration::from_secs(20));
}

#[tokio::test(start_paused = true)]
async fn event_debug_hides_content_unless_included() {
    for include_content in [false, true] {
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&events);
        let ask_user = secret_answerer(include_content)
            .listener(move |event: &AskUserEvent| sink.lock().expect("lock").push(format!("{event:?}")))
            .build()
            .expect("valid");
        ask_user.call(call(ARGS), AskContext::new()).await;
        let debug = events.lock().expect("lock").join("\n");
        for content in ["my secret plan", "failing test", "Approach", "db.py"] {
            assert_eq!(debug.contains(content), include_content, "{content:?} in {debug}");
        }
        assert!(debug.contains("timed_out: false"), "{debug}");
    }
}

#[test]
fn call_future_is_send_and_the_values_a_server_shares_are_send_and_sync() {
    fn assert_send<T: Send>(_: &T) {}
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<AskUser>();
    assert_send_sync::<askuser_tool::ToolSet>();
    assert_send_sync::<CallOutcome>();
    assert_send_sync::<askuser_tool::PendingQuestion>();
    assert_send_sync::<askuser_tool::SessionRouter>();
    assert_send_sync::<askuser_tool::RoutedRequest>();
    assert_send_sync::<askuser_tool::ReplyError>();
    let ask_user = AskUser::builder().answerer(DefaultsResponder::new()).build().expect("valid");
    let future = ask_user.call(call(ARGS), AskContext::new());
    assert_send(&future);
}

/// Guards tying events to their call: every event (the nudge too) carries the tool-call id, the
/// tool name, the capability id and the session, and under apply-defaults `Answered` carries the defaults.
#[tokio::test(start_paused = true)]
async fn events_name_their_call_and_carry_what_the_model_got() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let ask_user = AskUser::builder()
        .id("helper")
        .answerer(Slow { log: Log::default() })
        .timeout(Duration::from_secs(5))
        .on_timeout(OnTimeout::ApplyDefaults)
        .listener(move |event: &AskUserEvent| sink.lock().unwrap().push(event.clone()))
        .build()
        .expect("valid configuration");
    let outcome = ask_user.call(call(ARGS), AskContext::new().with_session_id("s-7")).await;
    assert!(matches!(outcome, CallOutcome::Completed(_)));
    let events = events.lock().unwrap();
    let [AskUserEvent::Requested(requested), AskUserEvent::Nudge(nudge), AskUserEvent::Answered(answered)] =
        &events[..]
    else {
        panic!("{events:?}")
    };
    for (call_id, tool, capability, session) in [
        (requested.tool_call_id(), requested.tool_name(), requested.capability_id(), requested.session_id()),
        (nudge.tool_call_id(), nudge.tool_name(), nudge.capability_id(), nudge.session_id()),
        (answered.tool_call_id(), answered.tool_name(), answered.capability_id(), answered.session_id()),
    ] {
        assert_eq!(
            (call_id, tool, capability, session),
            ("call_1", "ask_user_question", "helper", Some("s-7"))
        );
    }
    assert_eq!(answered.response().answered_by, askuser_core::AnsweredBy::Timeout);
    assert!(!answered.response().cancelled && answered.timed_out());
    assert_eq!(answered.response().answers.len(), 2);
}

/// Guards the timeout outside a timer: `call` panicked (in `tokio::time::timeout`) in a runtime
/// without `enable_time()` and outside any runtime; now it fails before asking anyone.
#[test]
fn a_timeout_without_a_timer_fails_instead_of_panicking() {
    let log = Log::default();
    let ask_user = AskUser::builder()
        .answerer(Slow { log: log.clone() })
        .timeout(Duration::from_secs(5))
        .build()
        .expect("valid configuration");
    let no_time = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let outcome = no_time.block_on(ask_user.call(call(ARGS), AskContext::new()));
    assert!(matches!(outcome, CallOutcome::Failed(CallError::NoTimer)), "{outcome:?}");
    let outcome = block_on_without_a_runtime(ask_user.call(call(ARGS), AskContext::new()));
    assert!(matches!(outcome, CallOutcome::Failed(CallError::NoTimer)), "{outcome:?}");
    assert!(log.entries().is_empty(), "nobody was asked: {:?}", log.entries());
}

/// Polls `future` to completion on this thread, with no Tokio runtime anywhere.
fn block_on_without_a_runtime<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

/// Guards the host's wording of the declined and timed-out sentences (the defaults stay).
#[tokio::test(start_paused = true)]
async fn the_host_words_the_declined_and_timed_out_results() {
    let declining =
        |_: AskUserRequest, _: AskContext| async { Ok::<_, AnswerError>(AskUserResponse::declined()) };
    let worded = AskUser::builder()
        .answerer(declining)
        .declined_text("Die Person hat abgelehnt.")
        .build()
        .expect("valid configuration");
    assert_eq!(text(&worded.call(call(ARGS), AskContext::new()).await), "Die Person hat abgelehnt.");
    let plain = AskUser::builder().answerer(declining).build().expect("valid configuration");
    assert_eq!(text(&plain.call(call(ARGS), AskContext::new()).await), DECLINED);
    let slow = AskUser::builder()
        .answerer(Slow { log: Log::default() })
        .timeout(Duration::from_secs(1))
        .timed_out_text("Niemand hat geantwortet.")
        .declined_text("unused")
        .build()
        .expect("valid configuration");
    assert_eq!(text(&slow.call(call(ARGS), AskContext::new()).await), "Niemand hat geantwortet.");
    let answering = AskUser::builder()
        .answerer(|_: AskUserRequest, _: AskContext| async { Ok::<_, AnswerError>(person_response()) })
        .declined_text("unused")
        .build()
        .expect("valid configuration");
    assert!(text(&answering.call(call(ARGS), AskContext::new()).await).starts_with(r#"{"Approach""#));
}
