//! Two replicas on one PostgreSQL act as one: a link made by one works on the other, a wait on
//! one returns when the other takes the answer (with a secret's value, which no table holds),
//! and the event stream of one carries the changes made through the other.

use std::sync::Arc;
use std::time::Duration;

use askuser_client::ApiToken;
use askuser_server::AnswerServer;
use askuser_store::{PostgresStore, SharedStore};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::json;

use askuser_testkit::postgres_url;

use crate::support::{TOKEN, api, send};

/// A replica on the shared store only: no link to the others.
async fn replica(url: &str, schema: &str) -> (PostgresStore, axum::Router) {
    let store = PostgresStore::builder(url).schema(schema).open().await.expect("open");
    let app =
        AnswerServer::builder(Arc::new(store.clone()) as Arc<dyn SharedStore>, ApiToken::new(TOKEN).unwrap())
            .public_url("http://fleet.test")
            .build()
            .router();
    (store, app)
}

/// A replica of an extended fleet, listening to the others.
async fn fleet_replica(url: &str, schema: &str) -> (PostgresStore, AnswerServer) {
    let store = PostgresStore::builder(url).schema(schema).open().await.expect("open");
    let server =
        AnswerServer::builder(Arc::new(store.clone()) as Arc<dyn SharedStore>, ApiToken::new(TOKEN).unwrap())
            .public_url("http://fleet.test")
            .profile(askuser_core::Profile::Extended)
            .fleet(&store)
            .build();
    drop(server.connect_fleet().await);
    (store, server)
}

async fn drop_schema(store: &PostgresStore, schema: &str) {
    let statement = format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE");
    sqlx::query(sqlx::AssertSqlSafe(statement))
        .execute(store.pool())
        .await
        .expect("dropping the test schema");
}

const SECRET: &str = "fleet-s3cr3t-7c1d";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_answered_on_one_replica_reaches_the_wait_on_the_other_and_no_table() {
    let Some(url) = postgres_url("fleet::a_secret_answered_on_one_replica_reaches_the_wait_on_the_other")
    else {
        return;
    };
    let schema = format!("askuser_server_fleet_secret_{}", std::process::id());
    let (store_a, a) = fleet_replica(&url, &schema).await;
    let (store_b, b) = fleet_replica(&url, &schema).await;
    let (a, b) = (a.router(), b.router());
    let args = r#"{"questions":[{"kind":"secret","header":"Token","question":"Deploy token?",
        "secret_name":"DEPLOY_TOKEN","purpose":"To deploy"}]}"#;
    let asked = api(&a, Method::POST, "/v1/questions", Some(json!({"arguments": args}))).await;
    assert_eq!(asked.status, StatusCode::CREATED, "{}", asked.text);
    let id = asked.json()["id"].as_str().unwrap().to_owned();
    let wait_uri = format!("/v1/questions/{id}/wait?timeout_secs=30");
    let waiting = api(&a, Method::GET, &wait_uri, None);
    let answering = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let body = json!({"answers":[{"header":"Token","secret_ref":"session:DEPLOY_TOKEN"}],
                          "secret_values":{"DEPLOY_TOKEN": SECRET}});
        let done = api(&b, Method::POST, &format!("/v1/questions/{id}/answer"), Some(body)).await;
        assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    };
    let (waited, ()) = tokio::join!(waiting, answering);
    assert_eq!(waited.json()["secret_values"], json!({"DEPLOY_TOKEN": SECRET}), "{}", waited.text);
    // Taken on A: B, which took the answer, forgets its copy (told over the fleet's channel).
    let mut again = String::new();
    for _ in 0..40 {
        again = api(&b, Method::GET, &format!("/v1/questions/{id}/wait?timeout_secs=0"), None).await.text;
        if !again.contains(SECRET) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!again.contains(SECRET) && again.contains(r#""done":true"#), "{again}");
    // No table holds the value: every column of every row of the store's schema, as text.
    let statement = format!("SELECT t::text FROM \"{schema}\".askuser_pending t");
    let rows: Vec<String> =
        sqlx::query_scalar(sqlx::AssertSqlSafe(statement)).fetch_all(store_a.pool()).await.unwrap();
    assert!(rows.iter().any(|r| r.contains("session:DEPLOY_TOKEN")), "{rows:?}");
    assert!(!rows.iter().any(|r| r.contains(SECRET)), "{rows:?}");
    drop_schema(&store_a, &schema).await;
    store_a.close().await;
    store_b.close().await;
}

/// Issue 36.5: a secret answer's sealed copy, replayed to a replica that had not heard of its
/// hand-over (one started since, or one whose ten-minute memory had passed), handed the value
/// over a second time; so did two waits on two replicas at the same moment. The hand-over is
/// claimed in the store, once of all replicas.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_secret_is_not_handed_over_again() {
    let Some(url) = postgres_url("fleet::a_replayed_secret_is_not_handed_over_again") else {
        return;
    };
    let schema = format!("askuser_server_fleet_replay_{}", std::process::id());
    let (store_a, a) = fleet_replica(&url, &schema).await;
    let a = a.router();
    // The fleet's channel, as an eavesdropper on the database finds it: the LISTEN of A's link.
    let channel: String = sqlx::query_scalar(
        "SELECT substring(query from 'LISTEN \"(askuser_fleet_[0-9a-f]+)\"') FROM pg_stat_activity \
         WHERE query LIKE 'LISTEN \"askuser_fleet_%' LIMIT 1",
    )
    .fetch_one(store_a.pool())
    .await
    .expect("the fleet's LISTEN");
    let mut eavesdropper = sqlx::postgres::PgListener::connect_with(store_a.pool()).await.unwrap();
    eavesdropper.listen(&channel).await.unwrap();

    let args = r#"{"questions":[{"kind":"secret","header":"Token","question":"Deploy token?",
        "secret_name":"DEPLOY_TOKEN","purpose":"To deploy"}]}"#;
    let asked = api(&a, Method::POST, "/v1/questions", Some(json!({"arguments": args}))).await;
    assert_eq!(asked.status, StatusCode::CREATED, "{}", asked.text);
    let id = asked.json()["id"].as_str().unwrap().to_owned();
    let body = json!({"answers":[{"header":"Token","secret_ref":"session:DEPLOY_TOKEN"}],
                      "secret_values":{"DEPLOY_TOKEN": SECRET}});
    let done = api(&a, Method::POST, &format!("/v1/questions/{id}/answer"), Some(body)).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.text);
    let envelope = loop {
        let heard = tokio::time::timeout(Duration::from_secs(10), eavesdropper.recv()).await;
        let payload = heard.expect("the sealed copy goes out").unwrap().payload().to_owned();
        if payload.contains(r#""k":"secret""#) && payload.contains(&id) {
            break payload;
        }
    };
    assert!(!envelope.contains(SECRET), "sealed");
    let wait_uri = format!("/v1/questions/{id}/wait?timeout_secs=5");
    let taken = api(&a, Method::GET, &wait_uri, None).await;
    assert_eq!(taken.json()["secret_values"], json!({"DEPLOY_TOKEN": SECRET}), "{}", taken.text);

    // A replica that never heard of the hand-over gets the copy again.
    let (store_c, c) = fleet_replica(&url, &schema).await;
    let c = c.router();
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(&channel)
        .bind(&envelope)
        .execute(store_a.pool())
        .await
        .unwrap();
    let replayed = api(&c, Method::GET, &wait_uri, None).await;
    assert!(replayed.text.contains(r#""done":true"#), "{}", replayed.text);
    assert!(!replayed.text.contains(SECRET), "handed over once: {}", replayed.text);
    // Its connection goes back to the pool, which closes only once it has every one.
    drop(eavesdropper);
    drop_schema(&store_a, &schema).await;
    store_a.close().await;
    store_c.close().await;
}

/// Reads an SSE body until `done` says the text so far is enough (or 10 s pass).
async fn read_events(body: &mut axum::body::Body, text: &mut String, done: impl Fn(&str) -> bool) {
    use http_body_util::BodyExt as _;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done(text) {
        let frame = tokio::time::timeout_at(deadline, body.frame()).await.expect("events in time");
        let frame = frame.expect("the stream goes on").unwrap();
        if let Ok(data) = frame.into_data() {
            text.push_str(std::str::from_utf8(&data).unwrap());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_stream_of_one_replica_carries_the_changes_made_through_the_other() {
    let Some(url) = postgres_url("fleet::the_event_stream_of_one_replica_carries_the_changes") else {
        return;
    };
    let schema = format!("askuser_server_fleet_events_{}", std::process::id());
    let (store_a, a) = fleet_replica(&url, &schema).await;
    let (store_b, b) = fleet_replica(&url, &schema).await;
    let (a, b) = (a.router(), b.router());
    let session = format!("fleet-events-{}", std::process::id());
    let listen = crate::support::api_request(
        Method::GET,
        &format!("/v1/events?session_id={session}"),
        Some(TOKEN),
        None,
    );
    let response = tower::ServiceExt::oneshot(a.clone(), listen).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let asked = api(
        &b,
        Method::POST,
        "/v1/questions",
        Some(json!({"arguments": crate::support::ARGS, "session_id": session})),
    )
    .await;
    let id = asked.json()["id"].as_str().unwrap().to_owned();
    let mut text = String::new();
    read_events(&mut body, &mut text, |t| t.contains("event: pending")).await;
    assert!(text.contains(&id), "{text}");
    api(&b, Method::POST, &format!("/v1/questions/{id}/answer"), Some(crate::support::answer_body())).await;
    read_events(&mut body, &mut text, |t| t.contains("event: answered")).await;
    assert!(!text.contains("Plan"), "no question content in events: {text}");
    // The session page's live updates on A (login cookie) hear a question asked through B.
    let login = Request::post("/login")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(format!("token={TOKEN}")))
        .unwrap();
    let logged = send(&a, login).await;
    let cookie = logged.headers[header::SET_COOKIE].to_str().unwrap().split(';').next().unwrap().to_owned();
    let page_events =
        Request::get(format!("/s/{session}/events")).header(header::COOKIE, &cookie).body(Body::empty());
    let response = tower::ServiceExt::oneshot(a.clone(), page_events.unwrap()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut page_body = response.into_body();
    let second = api(
        &b,
        Method::POST,
        "/v1/questions",
        Some(json!({"arguments": crate::support::ARGS, "session_id": session})),
    )
    .await;
    let second = second.json()["id"].as_str().unwrap().to_owned();
    let mut page_text = String::new();
    read_events(&mut page_body, &mut page_text, |t| t.contains(&second)).await;
    assert!(page_text.contains("event: pending"), "{page_text}");
    let list = send(
        &a,
        Request::get(format!("/s/{session}")).header(header::COOKIE, &cookie).body(Body::empty()).unwrap(),
    )
    .await;
    assert!(list.text.contains(&format!("/q/{second}")), "{}", list.text);
    drop_schema(&store_a, &schema).await;
    store_a.close().await;
    store_b.close().await;
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

    drop_schema(&store_a, &schema).await;
    store_a.close().await;
    store_b.close().await;
}

/// Logs in on `app` with the API token; the login cookie (`name=value`).
async fn log_in(app: &axum::Router) -> String {
    let login = Request::post("/login")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(format!("token={TOKEN}")))
        .unwrap();
    let logged = send(app, login).await;
    logged.headers[header::SET_COOKIE].to_str().unwrap().split(';').next().unwrap().to_owned()
}

async fn status_with_cookie(app: &axum::Router, cookie: &str) -> StatusCode {
    send(app, Request::get("/").header(header::COOKIE, cookie).body(Body::empty()).unwrap()).await.status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logout_on_one_replica_holds_on_the_other_and_after_a_restart() {
    let Some(url) = postgres_url("fleet::a_logout_on_one_replica_holds_on_the_other_and_after_a_restart")
    else {
        return;
    };
    let schema = format!("askuser_server_fleet_logout_{}", std::process::id());
    let (store_a, a) = replica(&url, &schema).await;
    let (store_b, b) = replica(&url, &schema).await;
    let cookie = log_in(&a).await;
    let kept = log_in(&b).await;
    assert_eq!(status_with_cookie(&b, &cookie).await, StatusCode::OK, "a login made on A opens B");
    let out =
        send(&a, Request::post("/logout").header(header::COOKIE, &cookie).body(Body::empty()).unwrap()).await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert_eq!(status_with_cookie(&a, &cookie).await, StatusCode::SEE_OTHER, "refused where it logged out");
    assert_eq!(status_with_cookie(&b, &cookie).await, StatusCode::SEE_OTHER, "refused on the other replica");
    // A replica started afterwards (a restart) refuses it too; the other login still works.
    store_b.close().await;
    let (store_c, c) = replica(&url, &schema).await;
    assert_eq!(status_with_cookie(&c, &cookie).await, StatusCode::SEE_OTHER, "refused after a restart");
    assert_eq!(status_with_cookie(&c, &kept).await, StatusCode::OK, "only the logged-out session is refused");
    drop_schema(&store_a, &schema).await;
    store_a.close().await;
    store_c.close().await;
}
