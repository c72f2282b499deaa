//! Two replicas on one PostgreSQL act as one: a link made by one works on the other, and a wait
//! on one returns when the other takes the answer.

use std::sync::Arc;
use std::time::Duration;

use askuser_server::{AnswerServer, ApiToken};
use askuser_store::{PendingStore, PostgresStore};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::json;

use crate::support::{TOKEN, api, send};

/// The PostgreSQL server to test against, or `None` (after saying so); a failure under `CI=true`.
fn postgres_url(test: &str) -> Option<String> {
    match std::env::var("ASKUSER_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "ASKUSER_TEST_POSTGRES_URL is not set under CI=true: CI must provide PostgreSQL for {test}"
            );
            eprintln!(
                "SKIPPED {test}: ASKUSER_TEST_POSTGRES_URL is not set (e.g. postgres://root@127.0.0.1:5432/test)"
            );
            None
        }
    }
}

async fn replica(url: &str, schema: &str) -> (PostgresStore, axum::Router) {
    let store = PostgresStore::builder(url).schema(schema).open().await.expect("open");
    let app = AnswerServer::builder(
        Arc::new(store.clone()) as Arc<dyn PendingStore>,
        ApiToken::new(TOKEN).unwrap(),
    )
    .public_url("http://fleet.test")
    .build()
    .router();
    (store, app)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_on_one_replica_returns_when_the_other_takes_the_answer() {
    let Some(url) = postgres_url("fleet::a_wait_on_one_replica_returns_when_the_other_takes_the_answer")
    else {
        return;
    };
    let schema = format!("askuser_server_fleet_{}", std::process::id());
    let (store_a, a) = replica(&url, &schema).await;
    let (store_b, b) = replica(&url, &schema).await;

    let asked =
        api(&a, Method::POST, "/v1/questions", Some(json!({"arguments": crate::support::ARGS}))).await;
    assert_eq!(asked.status, StatusCode::CREATED, "{}", asked.text);
    let id = asked.json()["id"].as_str().unwrap().to_owned();
    let link = asked.json()["url"].as_str().unwrap().strip_prefix("http://fleet.test").unwrap().to_owned();
    let wait_uri = format!("/v1/questions/{id}/wait?timeout_secs=30");
    let waiting = api(&a, Method::GET, &wait_uri, None);
    let answering = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        // The page link replica A gave, opened and answered on replica B.
        let page = send(&b, Request::get(&link).body(Body::empty()).unwrap()).await;
        assert!(page.text.contains("Which plan?"), "{}", page.text);
        let start = page.text.find(r#"name="csrf" value=""#).unwrap() + 19;
        let csrf = &page.text[start..start + 32];
        let form = format!("csrf={csrf}&q0=1&q1=0&action=answer");
        let request = Request::post(&link)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(form))
            .unwrap();
        let done = send(&b, request).await;
        assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    };
    let (waited, ()) = tokio::join!(waiting, answering);
    let body = waited.json();
    assert_eq!(
        (body["done"].as_bool(), &body["result"]),
        (Some(true), &json!(r#"{"Plan":["Large"],"Extras":["Backups"]}"#))
    );

    let statement = format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE");
    sqlx::query(sqlx::AssertSqlSafe(statement))
        .execute(store_a.pool())
        .await
        .expect("dropping the test schema");
    store_a.close().await;
    store_b.close().await;
}
