//! Random operation sequences against a model of the state machine: after every operation, the
//! store and the model agree on every record's state, and on what each operation returned.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use askuser_core::AskUserResponse;
use askuser_core::Timestamp;
use askuser_store::{
    Clock, ListQuery, ManualClock, MemoryStore, NewQuestion, PendingStore, PostgresStore, SqliteStore, State,
    StoreError,
};
use proptest::prelude::*;

use crate::support::{
    answer_large, clock, drop_schema, misfit, postgres_url, request, sqlite_path, temp_dir, unique_schema,
};

#[derive(Debug, Clone)]
enum Op {
    Put { key: u8, timeout_secs: u8 },
    Answer { key: u8, kind: u8 },
    Cancel { key: u8 },
    Expire { key: u8 },
    Advance { secs: u8 },
    Sweep { limit: u8 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..4_u8, 1..30_u8).prop_map(|(key, timeout_secs)| Op::Put { key, timeout_secs }),
        3 => (0..4_u8, 0..3_u8).prop_map(|(key, kind)| Op::Answer { key, kind }),
        1 => (0..4_u8).prop_map(|key| Op::Cancel { key }),
        1 => (0..4_u8).prop_map(|key| Op::Expire { key }),
        2 => (0..20_u8).prop_map(|secs| Op::Advance { secs }),
        1 => (1..4_u8).prop_map(|limit| Op::Sweep { limit }),
    ]
}

#[derive(Debug, Clone, Copy)]
struct Modelled {
    state: State,
    expires_at: Timestamp,
}

/// Runs `ops` on `store` (reading `clock`) under ids `{prefix}-{key}`, checking each step.
async fn run(store: &dyn PendingStore, clock: &ManualClock, prefix: &str, ops: &[Op]) {
    let mut model: HashMap<u8, Modelled> = HashMap::new();
    let id = |key: u8| format!("{prefix}-{key}");
    for (step, op) in ops.iter().enumerate() {
        let now = clock.now();
        let at = format!("step {step}: {op:?}");
        match *op {
            Op::Put { key, timeout_secs } => {
                let timeout = Duration::from_secs(timeout_secs.into());
                let record = store.put(NewQuestion::new(request(&id(key)), timeout)).await.expect(&at);
                let expected = *model
                    .entry(key)
                    .or_insert(Modelled { state: State::Pending, expires_at: now.plus(timeout) });
                assert_eq!(
                    (record.state(), record.expires_at()),
                    (expected.state, expected.expires_at),
                    "{at}"
                );
            }
            Op::Answer { key, kind } => {
                let response = match kind {
                    0 => answer_large(),
                    1 => AskUserResponse::declined(),
                    _ => misfit(),
                };
                let result = store.commit_answer(&id(key), &response).await;
                match model.get_mut(&key) {
                    None => assert!(matches!(result, Err(StoreError::NotFound { .. })), "{at}: {result:?}"),
                    Some(m) if m.state.has_response() => {
                        assert!(matches!(result, Err(StoreError::Conflict { .. })), "{at}: {result:?}");
                    }
                    Some(m) if m.state != State::Pending => {
                        assert!(matches!(result, Err(StoreError::Closed { .. })), "{at}: {result:?}");
                    }
                    Some(_) if kind == 2 => {
                        assert!(
                            matches!(result, Err(StoreError::InvalidResponse { .. })),
                            "{at}: {result:?}"
                        );
                    }
                    Some(m) if now >= m.expires_at => {
                        assert!(
                            matches!(&result, Err(StoreError::Closed { record }) if record.state() == State::TimedOut),
                            "{at}: {result:?}"
                        );
                        m.state = State::TimedOut;
                    }
                    Some(m) => {
                        m.state = if kind == 1 { State::Declined } else { State::Answered };
                        let record = result.expect(&at);
                        assert_eq!((record.state(), record.response()), (m.state, Some(&response)), "{at}");
                    }
                }
            }
            Op::Cancel { key } | Op::Expire { key } => {
                let (result, to) = match op {
                    Op::Cancel { .. } => (store.cancel(&id(key)).await, State::Cancelled),
                    _ => (store.expire(&id(key)).await, State::TimedOut),
                };
                match model.get_mut(&key) {
                    None => assert!(matches!(result, Err(StoreError::NotFound { .. })), "{at}: {result:?}"),
                    Some(m) => {
                        if m.state == State::Pending {
                            m.state = to;
                        }
                        assert_eq!(result.expect(&at).state(), m.state, "{at}");
                    }
                }
            }
            Op::Advance { secs } => clock.advance(Duration::from_secs(secs.into())),
            Op::Sweep { limit } => check_sweep(store, &mut model, &id, now, limit, &at).await,
        }
        for (key, m) in &model {
            let record = store.get(&id(*key)).await.expect(&at).expect("stored");
            assert_eq!(record.state(), m.state, "{at}: {}", id(*key));
            assert_eq!(record.version(), if m.state == State::Pending { 1 } else { 2 }, "{at}: {}", id(*key));
        }
    }
    // Leave nothing pending, so the next case's sweeps meet only their own questions.
    for key in model.keys() {
        store.cancel(&id(*key)).await.expect("cancel");
    }
    assert!(store.list(&ListQuery::new().state(State::Pending)).await.expect("list").records.is_empty());
}

/// A sweep expires the earliest-due pending questions, as many as `limit` allows.
async fn check_sweep(
    store: &dyn PendingStore,
    model: &mut HashMap<u8, Modelled>,
    id: &impl Fn(u8) -> String,
    now: Timestamp,
    limit: u8,
    at: &str,
) {
    let swept = store.expire_due(limit.into()).await.expect(at);
    let mut due: Vec<(Timestamp, u8)> = model
        .iter()
        .filter(|(_, m)| m.state == State::Pending && now >= m.expires_at)
        .map(|(k, m)| (m.expires_at, *k))
        .collect();
    due.sort_unstable();
    assert_eq!(swept.len(), due.len().min(limit.into()), "{at}");
    // The earliest deadlines go first (which of equal deadlines is not specified).
    let cutoff = due.get(swept.len().saturating_sub(1)).map(|d| d.0);
    for record in &swept {
        let key = model.keys().copied().find(|k| id(*k) == record.id()).expect("a modelled id");
        let m = model.get_mut(&key).expect("modelled");
        assert!(m.state == State::Pending && now >= m.expires_at, "{at}: swept {}", record.id());
        assert!(cutoff.is_some_and(|c| m.expires_at <= c), "{at}: {} is not among the earliest", record.id());
        m.state = State::TimedOut;
    }
}

fn check_backend(
    cases: u32,
    store: &dyn PendingStore,
    clock: &ManualClock,
    runtime: &tokio::runtime::Runtime,
) {
    static CASE: AtomicU32 = AtomicU32::new(0);
    let config = ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() };
    proptest!(config, |(ops in proptest::collection::vec(op(), 1..40))| {
        let prefix = format!("case{}", CASE.fetch_add(1, Ordering::Relaxed));
        runtime.block_on(run(store, clock, &prefix, &ops));
    });
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

#[test]
fn memory_follows_the_model() {
    let clock = clock();
    check_backend(256, &MemoryStore::with_clock(Arc::new(clock.clone())), &clock, &runtime());
}

#[test]
fn sqlite_follows_the_model() {
    let dir = temp_dir();
    let clock = clock();
    let runtime = runtime();
    let store = runtime
        .block_on(SqliteStore::builder(sqlite_path(&dir)).clock(Arc::new(clock.clone())).open())
        .expect("open");
    check_backend(64, &store, &clock, &runtime);
}

#[test]
fn postgres_follows_the_model() {
    let Some(url) = postgres_url("model::postgres_follows_the_model") else { return };
    let schema = unique_schema();
    let clock = clock();
    let runtime = runtime();
    let store = runtime
        .block_on(PostgresStore::builder(&url).schema(&schema).clock(Arc::new(clock.clone())).open())
        .expect("open");
    check_backend(32, &store, &clock, &runtime);
    runtime.block_on(drop_schema(&store, &schema));
}
