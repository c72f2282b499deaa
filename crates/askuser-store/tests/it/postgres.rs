//! The PostgreSQL backend passes the shared suite, in a schema of its own.

use std::sync::Arc;

use askuser_store::PostgresStore;

use crate::support::{clock, drop_schema, postgres_url, unique_schema};

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
