//! The in-memory backend passes the shared suite.

use std::sync::Arc;
use std::time::Duration;

use askuser_store::{MemoryStore, NewQuestion, PendingStore, State, Sweeper};

use crate::support::clock;

#[tokio::test]
async fn conformance() {
    let clock = clock();
    crate::suite::conformance(MemoryStore::with_clock(Arc::new(clock.clone())), clock).await;
}

/// A sweeper with retention deletes settled records once they are older than it keeps, at most
/// once a minute, and leaves pending ones; without retention it deletes nothing.
#[tokio::test(start_paused = true)]
async fn a_sweeper_keeps_what_it_is_told() {
    let clock = clock();
    let store = Arc::new(MemoryStore::with_clock(Arc::new(clock.clone())));
    for id in ["ret-1", "ret-2", "ret-3"] {
        store
            .put(NewQuestion::new(crate::support::request(id), Duration::from_hours(24 * 30)))
            .await
            .unwrap();
    }
    store.cancel("ret-1").await.unwrap();
    store.commit_answer("ret-2", &crate::support::answer_large()).await.unwrap();
    let keeping_all = Sweeper::new(Arc::clone(&store) as Arc<dyn PendingStore>);
    let keeping_a_day = keeping_all.clone().keep(Duration::from_hours(24));
    assert_eq!(keeping_a_day.sweep_once().await.unwrap().purged, 0, "settled just now");
    clock.advance(Duration::from_hours(25));
    assert_eq!(keeping_all.sweep_once().await.unwrap().purged, 0);
    assert_eq!(keeping_a_day.sweep_once().await.unwrap().purged, 0, "once a minute");
    tokio::time::advance(Duration::from_mins(1)).await;
    assert_eq!(keeping_a_day.sweep_once().await.unwrap().purged, 2);
    assert!(store.get("ret-1").await.unwrap().is_none() && store.get("ret-2").await.unwrap().is_none());
    assert_eq!(store.get("ret-3").await.unwrap().map(|r| r.state()), Some(State::Pending));
}
