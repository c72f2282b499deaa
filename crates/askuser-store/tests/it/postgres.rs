//! The PostgreSQL backend passes the shared suite, in a schema of its own.

use std::sync::Arc;
use std::time::Duration;

use askuser_store::{NewQuestion, PendingStore, PostgresStore, State};

use crate::support::{PATIENCE, answer_large, clock, drop_schema, postgres_url, request, unique_schema};

#[tokio::test]
async fn conformance() {
    let Some(url) = postgres_url("postgres::conformance") else { return };
    let schema = unique_schema();
    let clock = clock();
    let store = PostgresStore::builder(&url)
        .schema(&schema)
        .clock(Arc::new(clock.clone()))
        .open()
        .await
        .expect("open");
    crate::suite::conformance(store.clone(), clock).await;
    drop_schema(&store, &schema).await;
}

/// The listening connection dies (a server restart, a failover, an idle-connection killer): the
/// store listens again, and a watcher in this process still wakes for an answer committed by
/// another store (another process), whether the answer came before or after the new `LISTEN`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_listener_is_replaced() {
    let Some(url) = postgres_url("postgres::a_lost_listener_is_replaced") else { return };
    let schema = unique_schema();
    let watching =
        PostgresStore::builder(&url).schema(&schema).application_name(&schema).open().await.expect("open");
    let answering = PostgresStore::builder(&url).schema(&schema).open().await.expect("open");
    for round in 0..3 {
        let id = format!("relisten-{round}");
        watching.put(NewQuestion::new(request(&id), Duration::from_mins(1))).await.expect("put");
        let terminated: Vec<bool> = sqlx::query_scalar(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = $1 AND (query ILIKE 'listen%' OR query LIKE '%listener heartbeat%')",
        )
        .bind(&schema)
        .fetch_all(answering.pool())
        .await
        .expect("terminate");
        assert_eq!(terminated, [true], "round {round}: one listening connection");
        let watcher = tokio::spawn({
            let (watching, id) = (watching.clone(), id.clone());
            async move { watching.watch(&id).await }
        });
        // Round 0 answers at once (likely before the new LISTEN), the others after a pause.
        tokio::time::sleep(Duration::from_millis(round * 100)).await;
        answering.answer(&id, &answer_large()).await.expect("answer");
        let woken = tokio::time::timeout(PATIENCE, watcher).await.expect("woken").expect("no panic");
        assert_eq!(woken.expect("watch").state(), State::Answered, "round {round}");
    }
    answering.close().await;
    drop_schema(&watching, &schema).await;
}
