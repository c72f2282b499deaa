//! The session router: requests reach the host with their session, replies are checked, and
//! dropping, cancelling and timing out all propagate.

use std::time::Duration;

use askuser_core::{AskContext, AskUserAnswer, AskUserResponse, DECLINED, TIMED_OUT};
use askuser_tool::{AskUser, CallError, CallOutcome, ReplyError, ToolCall, session_router};

use crate::support::{ARGS, person_response};

fn call(id: &str) -> ToolCall<'_> {
    ToolCall::new(id, ARGS)
}

fn session(id: &str) -> AskContext {
    AskContext::new().with_session_id(id)
}

#[tokio::test(start_paused = true)]
async fn each_session_is_answered_by_its_own_client() {
    let (router, mut requests) = session_router(8);
    let ask_user = AskUser::builder().answerer(router).build().expect("valid");
    let host = async {
        for _ in 0..2 {
            let item = requests.recv().await.expect("a request");
            match item.context.session_id.as_deref() {
                Some("alice") => item.reply.reply(person_response()).expect("fits"),
                Some("bob") => item.reply.decline().expect("still waiting"),
                other => panic!("unexpected session {other:?}"),
            }
        }
    };
    let (alice, bob, ()) = tokio::join!(
        ask_user.call(call("a"), session("alice")),
        ask_user.call(call("b"), session("bob")),
        host
    );
    assert!(alice.model_text().is_some_and(|t| t.starts_with(r#"{"Approach""#)));
    assert_eq!(bob.model_text(), Some(DECLINED));
}

#[tokio::test(start_paused = true)]
async fn dropping_the_handle_declines() {
    let (router, mut requests) = session_router(1);
    let ask_user = AskUser::builder().answerer(router).build().expect("valid");
    let host = async {
        let item = requests.recv().await.expect("a request");
        drop(item.reply);
    };
    let (outcome, ()) = tokio::join!(ask_user.call(call("a"), session("alice")), host);
    assert_eq!(outcome.model_text(), Some(DECLINED));
}

#[tokio::test(start_paused = true)]
async fn a_misfit_reply_is_refused_before_it_reaches_the_model() {
    let (router, mut requests) = session_router(1);
    let ask_user = AskUser::builder().answerer(router).build().expect("valid");
    let host = async {
        let item = requests.recv().await.expect("a request");
        let misfit =
            AskUserResponse::answered(vec![AskUserAnswer::picked("Approach", ["Patch the test", "Nope"])]);
        let Err(ReplyError::Misfit { error, handle }) = item.reply.reply(misfit) else {
            panic!("a misfit reply must be refused")
        };
        assert_eq!(error.to_string(), r#"answer for "Approach" picked options it does not offer: ["Nope"]"#);
        handle.reply(person_response()).expect("the corrected reply fits");
    };
    let (outcome, ()) = tokio::join!(ask_user.call(call("a"), session("alice")), host);
    assert!(outcome.model_text().is_some_and(|t| t.starts_with(r#"{"Approach""#)));
}

#[tokio::test(start_paused = true)]
async fn a_timeout_reaches_the_client() {
    let (router, mut requests) = session_router(1);
    let ask_user =
        AskUser::builder().answerer(router).timeout(Duration::from_secs(30)).build().expect("valid");
    let host = async {
        let mut item = requests.recv().await.expect("a request");
        assert!(!item.reply.is_cancelled());
        item.reply.cancelled().await;
        assert!(item.reply.is_cancelled());
        assert!(matches!(item.reply.reply(person_response()), Err(ReplyError::Cancelled)));
    };
    let started = tokio::time::Instant::now();
    let (outcome, ()) = tokio::join!(ask_user.call(call("a"), session("alice")), host);
    assert_eq!(outcome.model_text(), Some(TIMED_OUT));
    assert_eq!(started.elapsed(), Duration::from_secs(30));
}

#[tokio::test(start_paused = true)]
async fn cancelling_the_call_reaches_the_client() {
    let (router, mut requests) = session_router(1);
    let ask_user = AskUser::builder().answerer(router).build().expect("valid");
    let run = tokio::spawn(async move {
        ask_user.call(call("a"), session("alice")).await.model_text().map(str::to_owned)
    });
    let mut item = requests.recv().await.expect("a request");
    run.abort();
    item.reply.cancelled().await;
    assert!(run.await.expect_err("aborted").is_cancelled());
    assert!(matches!(item.reply.decline(), Err(ReplyError::Cancelled)));
}

#[tokio::test(start_paused = true)]
async fn a_stopped_host_fails_the_call() {
    let (router, requests) = session_router(1);
    drop(requests);
    let ask_user = AskUser::builder().answerer(router).build().expect("valid");
    let outcome = ask_user.call(call("a"), session("alice")).await;
    let CallOutcome::Failed(CallError::Answerer(error)) = outcome else { panic!("expected a failure") };
    assert_eq!(error.to_string(), "the session router's host has stopped serving requests");
}

#[tokio::test(start_paused = true)]
async fn a_host_stopping_with_requests_queued_fails_them_rather_than_declining() {
    let (router, requests) = session_router(4);
    let ask_user = AskUser::builder().answerer(router).build().expect("valid");
    let waiting = tokio::spawn(async move { ask_user.call(call("a"), session("alice")).await });
    // Let the call queue its request, then stop serving without ever receiving it.
    tokio::task::yield_now().await;
    drop(requests);
    let outcome = waiting.await.expect("call task");
    let CallOutcome::Failed(CallError::Answerer(error)) = outcome else {
        panic!("expected a failure, got {outcome:?}")
    };
    assert_eq!(error.to_string(), "the session router's host has stopped serving requests");
}

#[tokio::test(start_paused = true)]
async fn many_sessions_wait_at_once() {
    let (router, mut requests) = session_router(4);
    let ask_user = AskUser::builder().answerer(router).build().expect("valid");
    let sessions: Vec<String> = (0..40).map(|i| format!("s{i}")).collect();
    let calls = sessions.iter().map(|s| {
        let ask_user = ask_user.clone();
        let s = s.clone();
        tokio::spawn(async move {
            let outcome = ask_user.call(ToolCall::new(&s, ARGS), session(&s)).await;
            (s, outcome.model_text().map(str::to_owned))
        })
    });
    let handles: Vec<_> = calls.collect();
    // Hold every request before answering any: all forty are waiting at the same time.
    let mut held = Vec::new();
    for _ in 0..sessions.len() {
        held.push(requests.recv().await.expect("a request"));
    }
    for item in held.into_iter().rev() {
        let n: usize = item.context.session_id.as_deref().and_then(|s| s[1..].parse().ok()).expect("session");
        let pick = if n.is_multiple_of(2) { "api.py" } else { "db.py" };
        let response = AskUserResponse::answered(vec![
            AskUserAnswer::picked("Approach", ["Patch the test"]),
            AskUserAnswer::picked("Targets", [pick]),
        ]);
        item.reply.reply(response).expect("fits");
    }
    for handle in handles {
        let (s, text) = handle.await.expect("call task");
        let n: usize = s[1..].parse().expect("number");
        let pick = if n.is_multiple_of(2) { "api.py" } else { "db.py" };
        assert_eq!(
            text.as_deref(),
            Some(format!(r#"{{"Approach":["Patch the test"],"Targets":["{pick}"]}}"#).as_str())
        );
    }
}
