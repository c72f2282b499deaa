//! A server over a fresh in-memory store, and requests to it in process.

use std::sync::Arc;
use std::time::Duration;

use askuser_client::ApiToken;
use askuser_server::AnswerServer;
use askuser_store::{MemoryStore, SharedStore};
use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::BodyExt as _;
use serde_json::Value;
use tower::ServiceExt as _;

pub(crate) const TOKEN: &str = "test-token-0123456789abcdef";

pub(crate) const ARGS: &str = r#"{"questions":[{"header":"Plan","question":"Which plan?",
    "options":[{"label":"Small","description":"Cheap"},{"label":"Large"}]},
    {"header":"Extras","question":"Which extras?","multi_select":true,
    "options":[{"label":"Backups"},{"label":"Support"}]}]}"#;

pub(crate) struct Harness {
    pub(crate) server: AnswerServer,
    pub(crate) app: Router,
    pub(crate) store: Arc<dyn SharedStore>,
}

pub(crate) fn harness() -> Harness {
    harness_with(|b| b)
}

pub(crate) fn harness_with(
    configure: impl FnOnce(askuser_server::AnswerServerBuilder) -> askuser_server::AnswerServerBuilder,
) -> Harness {
    let store: Arc<dyn SharedStore> = Arc::new(MemoryStore::new());
    let builder = AnswerServer::builder(Arc::clone(&store), ApiToken::new(TOKEN).unwrap())
        .public_url("http://phone.test:8765/")
        .sweep_interval(Duration::from_millis(10));
    let server = configure(builder).build();
    let app = server.router();
    Harness { server, app, store }
}

/// A response, read whole.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) text: String,
}

impl Reply {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text))
    }

    /// Asserts the status and the JSON error code.
    pub(crate) fn error(&self, status: StatusCode, code: &str) -> Value {
        assert_eq!(self.status, status, "{}", self.text);
        let json = self.json();
        assert_eq!(json["error"], code, "{}", self.text);
        assert!(json["message"].as_str().is_some_and(|m| !m.is_empty()), "{}", self.text);
        json
    }
}

pub(crate) async fn send(app: &Router, request: Request<Body>) -> Reply {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    Reply { status, headers, text: String::from_utf8(bytes.to_vec()).unwrap() }
}

/// A `/v1` request with the right token and, when given, a JSON body.
pub(crate) async fn api(app: &Router, method: Method, uri: &str, body: Option<Value>) -> Reply {
    send(app, api_request(method, uri, Some(TOKEN), body)).await
}

pub(crate) fn api_request(
    method: Method,
    uri: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> Request<Body> {
    let mut builder = Request::builder().method(method).uri(uri);
    if let Some(token) = token {
        builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    match body {
        Some(body) => builder
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap(),
        None => builder.body(Body::empty()).unwrap(),
    }
}

/// Asks the sample questions; returns the id.
pub(crate) async fn ask(app: &Router, extra: Value) -> String {
    let mut body = serde_json::json!({ "arguments": ARGS });
    if let (Value::Object(body), Value::Object(extra)) = (&mut body, extra) {
        body.extend(extra);
    }
    let reply = api(app, Method::POST, "/v1/questions", Some(body)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    reply.json()["id"].as_str().unwrap().to_owned()
}

pub(crate) fn answer_body() -> Value {
    serde_json::json!({"answers":[
        {"header":"Plan","selected":["Large"]},
        {"header":"Extras","selected":["Support","Backups"]}]})
}
