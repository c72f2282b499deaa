//! Issue 36.11: `/mcp` sessions were not capped (about 53 kB each, reaped only after rmcp's 5
//! minutes of idleness). A new session past the cap closes the least recently used session with
//! no call in flight; one with a call in flight (a form the person has not answered) stays; when
//! every session has one, the new session is refused.

use std::time::Duration;

use askuser_mcp::{AskUserServer, HttpOptions, http_service};
use serde_json::{Value, json};

struct Mcp {
    client: reqwest::Client,
    url: String,
}

impl Mcp {
    async fn start(options: HttpOptions) -> Self {
        let mcp =
            axum::Router::new().fallback_service(http_service(AskUserServer::builder().build(), options));
        let app = axum::Router::new().nest_service("/mcp", mcp);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { client: reqwest::Client::new(), url }
    }

    async fn post(&self, session: Option<&str>, body: &Value) -> reqwest::Response {
        let mut request = self
            .client
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send().await.expect("the server answers")
    }

    /// A new session of a client that shows forms, initialized; `None` when refused.
    async fn open(&self) -> Option<String> {
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "test", "version": "1"}}});
        let response = self.post(None, &initialize).await;
        if response.status() != 200 {
            return None;
        }
        let session = response.headers().get("mcp-session-id")?.to_str().ok()?.to_owned();
        let _ = response.text().await;
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let _ = self.post(Some(&session), &initialized).await.text().await;
        Some(session)
    }

    /// Starts a call whose form nobody answers: the response stream stays open.
    async fn call_in_flight(&self, session: &str) -> reqwest::Response {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "ask_user_question", "arguments": {"questions": [{"header": "Plan",
            "question": "Which plan?", "options": [{"label": "Small"}, {"label": "Large"}]}]}}});
        let response = self.post(Some(session), &call).await;
        assert_eq!(response.status(), 200);
        response
    }

    async fn alive(&self, session: &str) -> bool {
        let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
        let response = self.post(Some(session), &ping).await;
        let status = response.status().as_u16();
        let _ = response.text().await;
        assert!(matches!(status, 200 | 404), "{status}");
        status == 200
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_session_cap_the_least_recently_used_idle_session_goes() {
    let mcp = Mcp::start(HttpOptions::new().max_sessions(3).idle(Duration::from_hours(1))).await;
    let busy = mcp.open().await.expect("a session");
    let _held = mcp.call_in_flight(&busy).await;
    let first = mcp.open().await.expect("a session");
    let second = mcp.open().await.expect("a session");
    // The cap reached: each new session closes the least recently used idle one.
    let third = mcp.open().await.expect("room made");
    assert!(!mcp.alive(&first).await, "the least recently used idle session went");
    assert!(mcp.alive(&second).await && mcp.alive(&third).await);
    assert!(mcp.alive(&busy).await, "a session with a call in flight stays");
    let fourth = mcp.open().await.expect("room made");
    assert!(!mcp.alive(&second).await);
    assert!(mcp.alive(&busy).await && mcp.alive(&third).await && mcp.alive(&fourth).await);

    // Every session with a call in flight: the new one is refused, none closed.
    let _third_held = mcp.call_in_flight(&third).await;
    let _fourth_held = mcp.call_in_flight(&fourth).await;
    assert_eq!(mcp.open().await, None, "no room: refused");
    assert!(mcp.alive(&busy).await && mcp.alive(&third).await && mcp.alive(&fourth).await);
}

/// A session idle longer than the idle time goes when a new one arrives, below the cap too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_idle_past_the_idle_time_goes_when_another_arrives() {
    let mcp = Mcp::start(HttpOptions::new().max_sessions(100).idle(Duration::from_millis(300))).await;
    let old = mcp.open().await.expect("a session");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let new = mcp.open().await.expect("a session");
    assert!(!mcp.alive(&old).await && mcp.alive(&new).await);
}
