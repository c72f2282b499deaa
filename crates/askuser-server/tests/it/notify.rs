//! The webhook: JSON and ntfy forms, retries, no question text unless asked.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use askuser_server::{AnswerServer, ApiToken, Notifier, NotifyFormat};
use askuser_store::MemoryStore;
use axum::http::{HeaderMap, Method, StatusCode};
use serde_json::json;
use tokio::sync::mpsc;

use crate::support::{TOKEN, api, ask};

/// A webhook receiver on loopback that fails its first `failures` requests with 500.
async fn receiver(failures: usize) -> (String, mpsc::UnboundedReceiver<(HeaderMap, String)>) {
    let (sender, received) = mpsc::unbounded_channel();
    let seen = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: String| {
            let sender = sender.clone();
            let seen = Arc::clone(&seen);
            async move {
                let _ = sender.send((headers, body));
                if seen.fetch_add(1, Ordering::SeqCst) < failures {
                    StatusCode::INTERNAL_SERVER_ERROR
                } else {
                    StatusCode::OK
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, received)
}

fn app_with(notifier: Notifier) -> axum::Router {
    let handle = notifier.retry_base(Duration::from_millis(10)).spawn();
    AnswerServer::builder(Arc::new(MemoryStore::new()), ApiToken::new(TOKEN).unwrap())
        .public_url("http://phone.test")
        .on_asked(move |notice| handle.notify(notice))
        .build()
        .router()
}

async fn next(received: &mut mpsc::UnboundedReceiver<(HeaderMap, String)>) -> (HeaderMap, String) {
    tokio::time::timeout(Duration::from_secs(10), received.recv()).await.unwrap().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_notices_are_retried_and_carry_no_question_text() {
    let (url, mut received) = receiver(2).await;
    let app = app_with(Notifier::new(&url, NotifyFormat::Json).unwrap());
    let id = ask(&app, json!({"session_id": "s1", "id": "n1"})).await;
    let mut bodies = Vec::new();
    for _ in 0..3 {
        bodies.push(next(&mut received).await.1);
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]), "the same notice each try");
    let notice: serde_json::Value = serde_json::from_str(&bodies[0]).unwrap();
    assert_eq!(notice["event"], "asked");
    assert_eq!((&notice["id"], &notice["session_id"]), (&json!(id), &json!("s1")));
    assert_eq!(notice["headers"], json!(["Plan", "Extras"]));
    assert!(notice["url"].as_str().unwrap().starts_with("http://phone.test/q/n1/"));
    assert!(!bodies[0].contains("Which plan?") && notice.get("questions").is_none(), "{notice}");

    // Asking again with the same id notifies nobody.
    ask(&app, json!({"session_id": "s1", "id": "n1"})).await;
    assert!(tokio::time::timeout(Duration::from_millis(200), received.recv()).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ntfy_notices_have_a_title_a_click_link_and_the_text_when_asked() {
    let (url, mut received) = receiver(0).await;
    let app = app_with(Notifier::new(&url, NotifyFormat::Ntfy).unwrap().include_questions(true));
    ask(&app, json!({"id": "n2"})).await;
    let (headers, body) = next(&mut received).await;
    assert_eq!(headers["title"], "Your assistant asks 2 questions");
    assert!(headers["click"].to_str().unwrap().starts_with("http://phone.test/q/n2/"));
    assert_eq!(body, "Which plan?\nWhich extras?");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_webhook_never_holds_an_ask() {
    // Nothing listens on this port.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    drop(listener);
    let app = app_with(Notifier::new(&url, NotifyFormat::Json).unwrap());
    // Twenty asks waiting on five failing tries each would take minutes; they do not wait at all.
    let asks = async {
        for _ in 0..20 {
            let reply =
                api(&app, Method::POST, "/v1/questions", Some(json!({"arguments": crate::support::ARGS})))
                    .await;
            assert_eq!(reply.status, StatusCode::CREATED);
        }
    };
    tokio::time::timeout(Duration::from_mins(1), asks).await.expect("an ask waited for the webhook");
}

/// A webhook answering 307 to another address is not followed there: the notice (its answer
/// link included) never reaches the redirect's target; the webhook itself is tried five times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_never_followed() {
    let (target_url, mut target_received) = receiver(0).await;
    let hook_hits = Arc::new(AtomicUsize::new(0));
    let hits = Arc::clone(&hook_hits);
    let (tried, mut attempts) = mpsc::unbounded_channel::<()>();
    let redirecting = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            hits.fetch_add(1, Ordering::SeqCst);
            let _ = tried.send(());
            let target_url = target_url.clone();
            async move { (StatusCode::TEMPORARY_REDIRECT, [(axum::http::header::LOCATION, target_url)]) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, redirecting).await });

    let app = app_with(Notifier::new(&url, NotifyFormat::Json).unwrap());
    ask(&app, json!({"id": "r1"})).await;
    for _ in 0..5 {
        tokio::time::timeout(Duration::from_secs(10), attempts.recv()).await.unwrap().unwrap();
    }
    // The fifth try was the last: give a followed redirect time to arrive, were there one.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(hook_hits.load(Ordering::SeqCst), 5);
    assert!(target_received.try_recv().is_err(), "the redirect's target got the notice");
}
