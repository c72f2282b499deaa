//! The SQLite backend passes the shared suite, and keeps its file's promises.

use std::sync::Arc;

use askuser_store::{PendingStore, SqliteStore, State};

use crate::support::{answer_large, clock, sqlite_path, temp_dir};

#[tokio::test]
async fn conformance() {
    let dir = temp_dir();
    let clock = clock();
    let store =
        SqliteStore::builder(sqlite_path(&dir)).clock(Arc::new(clock.clone())).open().await.expect("open");
    crate::suite::conformance(store, clock).await;
}

/// Reopening a file keeps its records and does not migrate twice; the file is in WAL mode.
#[tokio::test]
async fn reopen_keeps_records() {
    let dir = temp_dir();
    let path = sqlite_path(&dir);
    let store = SqliteStore::open(&path).await.expect("open");
    store
        .put(askuser_store::NewQuestion::new(
            crate::support::request("keep-1"),
            std::time::Duration::from_mins(1),
        ))
        .await
        .expect("put");
    store.answer("keep-1", &answer_large()).await.expect("answer");
    store.close().await;
    drop(store);

    let store = SqliteStore::open(&path).await.expect("reopen");
    let record = store.get("keep-1").await.expect("get").expect("kept");
    assert_eq!((record.state(), record.response()), (State::Answered, Some(&answer_large())));
    let mode: String =
        sqlx::query_scalar("PRAGMA journal_mode").fetch_one(store.pool()).await.expect("pragma");
    assert_eq!(mode, "wal");
}

/// Two stores opening one new file at the same moment (two processes starting together) both
/// come up: the migration race is retried, not reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_opens() {
    let dir = temp_dir();
    let path = sqlite_path(&dir);
    let (a, b) = tokio::join!(SqliteStore::open(&path), SqliteStore::open(&path));
    let (a, b) = (a.expect("first open"), b.expect("second open"));
    a.put(askuser_store::NewQuestion::new(
        crate::support::request("both-1"),
        std::time::Duration::from_mins(1),
    ))
    .await
    .expect("put");
    assert!(b.get("both-1").await.expect("get").is_some());
}
