//! The access log names routes, never paths, queries, bodies or question content.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use axum::http::Method;
use serde_json::json;

use crate::support::{TOKEN, api, harness, send};

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Everything this test binary logs, from whichever test: a global subscriber, because a scoped
/// one misses events whose callsites other tests' threads registered first.
fn captured() -> &'static Captured {
    static CAPTURED: OnceLock<Captured> = OnceLock::new();
    CAPTURED.get_or_init(|| {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber =
            tracing_subscriber::fmt().with_writer(move || writer.clone()).with_ansi(false).finish();
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other global subscriber in this binary");
        captured
    })
}

#[tokio::test(flavor = "current_thread")]
async fn access_logs_hold_no_question_content_ids_or_tokens() {
    let captured = captured();

    let h = harness();
    let args = r#"{"questions":[{"header":"Secret plan","question":"Launch codes are 4242?","options":[{"label":"Yes-4242"},{"label":"No"}]}]}"#;
    let reply = api(
        &h.app,
        Method::POST,
        "/v1/questions",
        Some(json!({"arguments": args, "id": "call-zebra", "session_id": "sess-okapi"})),
    )
    .await;
    let link =
        reply.json()["url"].as_str().unwrap().strip_prefix("http://phone.test:8765").unwrap().to_owned();
    let token = link.rsplit('/').next().unwrap().to_owned();
    send(&h.app, axum::http::Request::get(&link).body(axum::body::Body::empty()).unwrap()).await;
    api(&h.app, Method::GET, "/v1/questions?session_id=sess-okapi", None).await;
    api(
        &h.app,
        Method::POST,
        "/v1/questions/call-zebra/answer",
        Some(json!({"answers":[{"header":"Secret plan","selected":["Yes-4242"]}]})),
    )
    .await;

    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    // Other tests' requests may be in the log too: it must hold none of theirs either.
    for route in ["/v1/questions", "/q/{id}/{token}", "/v1/questions/{id}/answer"] {
        assert!(
            log.contains(&format!("route=\"{route}\"")) || log.contains(&format!("route={route}")),
            "{route} in {log}"
        );
    }
    for secret in
        ["4242", "Secret plan", "Launch", "call-zebra", "sess-okapi", token.as_str(), TOKEN, "Which plan?"]
    {
        assert!(!log.contains(secret), "{secret:?} reached the log:\n{log}");
    }
}
