//! The in-memory backend passes the shared suite.

use std::sync::Arc;

use askuser_store::MemoryStore;

use crate::support::clock;

#[tokio::test]
async fn conformance() {
    let clock = clock();
    crate::suite::conformance(MemoryStore::with_clock(Arc::new(clock.clone())), clock).await;
}
