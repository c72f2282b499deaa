//! `StoreAnswerer` inside the `AskUser` capability: answered elsewhere, declined, timed out under
//! both policies, dropped, cancelled by someone else.

use std::sync::Arc;
use std::time::Duration;

use askuser_core::{AskContext, AskUserResponse, DECLINED, TIMED_OUT};
use askuser_store::{ListQuery, MemoryStore, PendingRecord, PendingStore, State, StoreAnswerer};
use askuser_tool::{AskUser, CallOutcome, OnTimeout, ToolCall};

use crate::support::{ARGS, PATIENCE, answer_large};

/// On the system clock: the capability stamps each request's `asked_at` from it, and the record
/// keeps the request's stamps.
fn store() -> MemoryStore {
    MemoryStore::new()
}

fn call() -> ToolCall<'static> {
    ToolCall::new("call_1", ARGS)
}

fn context() -> AskContext {
    AskContext::new().with_session_id("s-answerer")
}

/// The one record the asker put, once it is there.
async fn put_record(store: &MemoryStore) -> PendingRecord {
    loop {
        let page = store.list(&ListQuery::new().session_id("s-answerer")).await.expect("list");
        if let Some(record) = page.records.into_iter().next() {
            return record;
        }
        tokio::task::yield_now().await;
    }
}

async fn settled(store: &MemoryStore, id: &str) -> PendingRecord {
    tokio::time::timeout(PATIENCE, store.watch(id)).await.expect("settled in time").expect("watch")
}

#[tokio::test(start_paused = true)]
async fn answered_elsewhere() {
    let store = store();
    let ask_user =
        AskUser::builder().answerer(StoreAnswerer::new(Arc::new(store.clone()))).build().expect("build");
    let person = async {
        let record = put_record(&store).await;
        assert_eq!((record.state(), record.session_id()), (State::Pending, Some("s-answerer")));
        assert_eq!(record.tool_name(), "ask_user_question");
        let expires_in = record.asked_at().until(record.expires_at());
        assert_eq!(expires_in, askuser_store::DEFAULT_TIMEOUT);
        store.commit_answer(record.id(), &answer_large()).await.expect("answer")
    };
    let (outcome, answered) = tokio::join!(ask_user.call(call(), context()), person);
    assert_eq!(
        outcome.model_text(),
        Some(r#"{"Plan":["Large"],"Targets":["only the 中文 docs\nand tests"]}"#)
    );
    assert_eq!(settled(&store, answered.id()).await.state(), State::Answered);
}

#[tokio::test(start_paused = true)]
async fn declined_elsewhere() {
    let store = store();
    let ask_user =
        AskUser::builder().answerer(StoreAnswerer::new(Arc::new(store.clone()))).build().expect("build");
    let person = async {
        let record = put_record(&store).await;
        store.commit_answer(record.id(), &AskUserResponse::declined()).await.expect("decline")
    };
    let (outcome, _) = tokio::join!(ask_user.call(call(), context()), person);
    assert_eq!(outcome.model_text(), Some(DECLINED));
}

#[tokio::test(start_paused = true)]
async fn its_own_deadline_declines() {
    let store = store();
    let answerer = StoreAnswerer::new(Arc::new(store.clone())).timeout(Duration::from_secs(30));
    let ask_user = AskUser::builder().answerer(answerer).build().expect("build");
    let outcome = ask_user.call(call(), context()).await;
    assert!(matches!(outcome, CallOutcome::Retry(_)), "{outcome:?}");
    assert_eq!(outcome.model_text(), Some(TIMED_OUT));
    assert_eq!(put_record(&store).await.state(), State::TimedOut);
}

#[tokio::test(start_paused = true)]
async fn its_own_deadline_applies_defaults() {
    let store = store();
    let answerer = StoreAnswerer::new(Arc::new(store.clone()))
        .timeout(Duration::from_secs(30))
        .on_timeout(OnTimeout::ApplyDefaults);
    let ask_user = AskUser::builder().answerer(answerer).build().expect("build");
    let outcome = ask_user.call(call(), context()).await;
    assert_eq!(
        outcome.model_text(),
        Some(r#"{"answered_by":"timeout","answers":{"Plan":["Small"],"Targets":["api.py"]}}"#)
    );
    let record = put_record(&store).await;
    assert_eq!((record.state(), record.response()), (State::TimedOut, None), "defaults are not an answer");
}

/// With the capability's timeout equal to the answerer's, the capability's own timeout path runs,
/// and the record is marked timed out (not cancelled) when the answerer is dropped.
#[tokio::test(start_paused = true)]
async fn the_capability_timeout_marks_timed_out() {
    let store = store();
    let limit = Duration::from_secs(30);
    let answerer = StoreAnswerer::new(Arc::new(store.clone())).timeout(limit);
    let ask_user = AskUser::builder().answerer(answerer).timeout(limit).build().expect("build");
    let outcome = ask_user.call(call(), context()).await;
    assert!(matches!(outcome, CallOutcome::Completed(_)), "{outcome:?}");
    assert_eq!(outcome.model_text(), Some(TIMED_OUT));
    let record = put_record(&store).await;
    assert_eq!(settled(&store, record.id()).await.state(), State::TimedOut);
}

/// The request's own `expires_at` (stamped by the capability from its timeout) is the record's, and
/// the answerer waits until it rather than its shorter own timeout.
#[tokio::test(start_paused = true)]
async fn the_request_deadline_wins_over_the_answerers_timeout() {
    let store = store();
    let answerer = StoreAnswerer::new(Arc::new(store.clone())).timeout(Duration::from_secs(30));
    let ask_user =
        AskUser::builder().answerer(answerer).timeout(Duration::from_mins(1)).build().expect("build");
    let person = async {
        let record = put_record(&store).await;
        assert_eq!(record.asked_at().until(record.expires_at()), Duration::from_mins(1));
        // Past the answerer's own 30 s, the question is still open.
        tokio::time::sleep(Duration::from_secs(45)).await;
        assert_eq!(store.get(record.id()).await.expect("get").map(|r| r.state()), Some(State::Pending));
        store.commit_answer(record.id(), &answer_large()).await.expect("answer")
    };
    let (outcome, record) = tokio::join!(ask_user.call(call(), context()), person);
    assert!(matches!(outcome, CallOutcome::Completed(_)), "{outcome:?}");
    assert_eq!(record.state(), State::Answered);
}

/// A run cancelled before the deadline marks its question cancelled, and wakes its watchers.
#[tokio::test(start_paused = true)]
async fn dropping_the_call_cancels() {
    let store = store();
    let ask_user =
        AskUser::builder().answerer(StoreAnswerer::new(Arc::new(store.clone()))).build().expect("build");
    let cancelled = tokio::time::timeout(Duration::from_secs(10), ask_user.call(call(), context())).await;
    assert!(cancelled.is_err(), "nobody answered");
    let record = put_record(&store).await;
    assert_eq!(settled(&store, record.id()).await.state(), State::Cancelled);
}

#[tokio::test(start_paused = true)]
async fn cancelled_by_someone_else_fails_the_call() {
    let store = store();
    let ask_user =
        AskUser::builder().answerer(StoreAnswerer::new(Arc::new(store.clone()))).build().expect("build");
    let host = async {
        let record = put_record(&store).await;
        store.cancel(record.id()).await.expect("cancel")
    };
    let (outcome, _) = tokio::join!(ask_user.call(call(), context()), host);
    match outcome {
        CallOutcome::Failed(error) => {
            let cause = std::error::Error::source(&error).map(ToString::to_string).unwrap_or_default();
            assert!(cause.contains("was cancelled"), "{error}: {cause}");
        }
        other => panic!("expected a failed call, got {other:?}"),
    }
}

/// Guards the answerer's lease: while it waits it renews its question's lease, so a sweep after
/// several leases withdraws nothing, and the answer still reaches it.
#[tokio::test]
async fn a_waiting_answerer_holds_its_lease() {
    let store = store();
    let leased = StoreAnswerer::new(Arc::new(store.clone())).lease(Duration::from_secs(1));
    let ask_user = AskUser::builder().answerer(leased).build().expect("build");
    let person = async {
        let record = put_record(&store).await;
        assert!(!record.is_deferred(), "a waiting answerer's question holds a lease");
        for _ in 0..5 {
            tokio::time::sleep(Duration::from_millis(500)).await;
            assert_eq!(store.withdraw_lapsed(10).await.expect("sweep"), [], "renewed while waiting");
        }
        store.commit_answer(record.id(), &answer_large()).await.expect("answer")
    };
    let (outcome, answered) = tokio::join!(ask_user.call(call(), context()), person);
    assert!(outcome.model_text().is_some_and(|t| t.starts_with(r#"{"Plan":["Large"]"#)), "{outcome:?}");
    assert_eq!(answered.state(), State::Answered);
}

/// Who asks: the host's `AskContext::asked_by` (made printable), unless the answerer was given a
/// label of its own.
#[tokio::test(start_paused = true)]
async fn the_record_says_who_asks() {
    for (own, expected) in [(None, "codex 1.2 ⟨U+202E⟩ in ~/app"), (Some("my agent"), "my agent")] {
        let store = store();
        let mut answerer = StoreAnswerer::new(Arc::new(store.clone()));
        if let Some(label) = own {
            answerer = answerer.asked_by(askuser_store::AskedBy::new(label).expect("a label"));
        }
        let ask_user = AskUser::builder().answerer(answerer).build().expect("build");
        let person = async {
            let record = put_record(&store).await;
            assert_eq!(record.asked_by().map(askuser_store::AskedBy::as_str), Some(expected));
            store.commit_answer(record.id(), &answer_large()).await.expect("answer")
        };
        let context = context().with_asked_by("codex 1.2 \u{202e} in ~/app");
        let (outcome, _) = tokio::join!(ask_user.call(call(), context), person);
        assert!(outcome.model_text().is_some());
    }
}
