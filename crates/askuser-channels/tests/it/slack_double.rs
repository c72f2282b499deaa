//! A test double of Slack's Web API and Socket Mode, following the documented shapes:
//!
//! - Socket Mode (<https://api.slack.com/apis/socket-mode>): `POST /apps.connections.open` with
//!   the app-level token (`xapp-…`) returns `{"ok": true, "url": "wss://…"}`
//!   (<https://api.slack.com/methods/apps.connections.open>); the socket first sends
//!   `{"type": "hello"}`, then envelopes `{"envelope_id", "type": "interactive", "payload",
//!   "accepts_response_payload"}`, each to be acknowledged with `{"envelope_id": …}`; a
//!   `{"type": "disconnect"}` asks the app to reconnect;
//! - `block_actions` payloads (<https://api.slack.com/reference/interaction-payloads/block-actions>):
//!   `user.id`, `container.channel_id`/`message_ts`, `actions[].value`;
//! - Web API methods with the bot token (`xoxb-…`): `chat.postMessage` returns `channel` and `ts`
//!   (<https://api.slack.com/methods/chat.postMessage>), `chat.update`
//!   (<https://api.slack.com/methods/chat.update>), `chat.postEphemeral`
//!   (<https://api.slack.com/methods/chat.postEphemeral>), `views.open` with a `trigger_id` and a
//!   modal `view` (<https://api.slack.com/methods/views.open>), whose submission comes back as a
//!   `view_submission` payload with `view.state.values[block_id][action_id].value`
//!   (<https://api.slack.com/reference/interaction-payloads/views#view_submission>); errors are `{"ok": false, "error":
//!   "…"}`; rate limits are HTTP 429 with `Retry-After` seconds
//!   (<https://api.slack.com/apis/rate-limits>); an `actions` block holds at most 25 elements
//!   and button text at most 75 characters (<https://api.slack.com/reference/block-kit/blocks#actions>).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::mpsc;

pub(crate) const APP_TOKEN: &str = "xapp-1-test-app-token";
pub(crate) const BOT_TOKEN: &str = "xoxb-test-bot-token";
pub(crate) const CHANNEL: &str = "D0123456789";
pub(crate) const USER: &str = "U0123456789";

/// A posted message as the double keeps it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Posted {
    pub(crate) ts: String,
    pub(crate) text: String,
    pub(crate) blocks: Value,
    pub(crate) edits: u32,
}

impl Posted {
    /// Every button: its text and value.
    pub(crate) fn buttons(&self) -> Vec<(String, Option<String>)> {
        self.blocks
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "actions")
            .flat_map(|b| b["elements"].as_array().cloned().unwrap_or_default())
            .map(|e| {
                (
                    e["text"]["text"].as_str().unwrap_or_default().to_owned(),
                    e["value"].as_str().map(str::to_owned),
                )
            })
            .collect()
    }

    pub(crate) fn button(&self, text: &str) -> String {
        self.buttons()
            .into_iter()
            .find(|(t, _)| t.contains(text))
            .and_then(|(_, v)| v)
            .unwrap_or_else(|| panic!("no button {text:?} in {:?}", self.buttons()))
    }
}

#[derive(Debug, Default)]
pub(crate) struct Workspace {
    pub(crate) messages: Mutex<BTreeMap<String, Posted>>,
    next_ts: Mutex<u64>,
    pub(crate) ephemeral: Mutex<Vec<(String, String)>>,
    /// Modals opened: the `view` of each `views.open`.
    pub(crate) views: Mutex<Vec<Value>>,
    pub(crate) calls: Mutex<Vec<String>>,
    /// Envelope ids sent, and the ones acknowledged.
    pub(crate) sent: Mutex<Vec<String>>,
    pub(crate) acked: Mutex<Vec<String>>,
    socket: Mutex<Option<mpsc::UnboundedSender<String>>>,
    pub(crate) connections: AtomicU32,
    /// The next this many `chat.postMessage` / `chat.update` calls get 429 with `Retry-After: 1`.
    pub(crate) limit_next: AtomicU32,
    pub(crate) limited: AtomicU32,
    base: Mutex<String>,
}

pub(crate) struct SlackDouble {
    pub(crate) url: String,
    pub(crate) slack: Arc<Workspace>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SlackDouble {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl SlackDouble {
    pub(crate) async fn start() -> Self {
        let slack = Arc::new(Workspace::default());
        let app = axum::Router::new()
            .route("/socket", axum::routing::get(socket))
            .route("/api/{method}", axum::routing::post(method))
            .with_state(Arc::clone(&slack));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        *slack.base.lock().unwrap() = format!("ws://{address}");
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { url: format!("http://{address}/api"), slack, task }
    }

    /// Sends an interaction envelope over the open socket (waits for one); returns its id.
    pub(crate) async fn interact(&self, payload: Value) -> String {
        self.envelope("interactive", payload).await
    }

    /// `user` replies in the thread of message `thread_ts` with `text`: an Events API `message`
    /// event (<https://api.slack.com/events/message>; Socket Mode wraps it as `events_api`,
    /// <https://api.slack.com/apis/socket-mode#events>), its text escaped as Slack sends it
    /// (<https://api.slack.com/reference/surfaces/formatting#escaping>).
    pub(crate) async fn thread_reply(&self, user: &str, thread_ts: &str, text: &str) -> String {
        let text = text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
        self.envelope(
            "events_api",
            json!({"type": "event_callback", "event": {
            "type": "message", "channel": CHANNEL, "user": user, "text": text,
            "ts": "1700000099.000100", "thread_ts": thread_ts}}),
        )
        .await
    }

    async fn envelope(&self, kind: &str, payload: Value) -> String {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let sender = self.slack.socket.lock().unwrap().clone();
            if let Some(sender) = sender {
                let id = format!("env-{}", self.slack.sent.lock().unwrap().len() + 1);
                let envelope = json!({"envelope_id": id, "type": kind, "payload": payload,
                                      "accepts_response_payload": false});
                if sender.send(envelope.to_string()).is_ok() {
                    self.slack.sent.lock().unwrap().push(id.clone());
                    return id;
                }
            }
            assert!(tokio::time::Instant::now() < deadline, "no Socket Mode connection");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// A `block_actions` tap by `user` on the button with `value` of message `ts`.
    pub(crate) async fn tap(&self, user: &str, ts: &str, value: &str) -> String {
        self.interact(json!({
            "type": "block_actions", "user": {"id": user, "username": "p"}, "trigger_id": "t1",
            "container": {"type": "message", "message_ts": ts, "channel_id": CHANNEL},
            "channel": {"id": CHANNEL}, "actions": [{"type": "button", "action_id": "askuser-1",
            "block_id": "b", "value": value, "action_ts": "1"}]}))
            .await
    }

    /// Asks the app to reconnect (`{"type": "disconnect", "reason": "refresh_requested"}`, as Slack
    /// does every few hours), then closes the socket.
    pub(crate) fn disconnect(&self) {
        if let Some(sender) = self.slack.socket.lock().unwrap().take() {
            let _ = sender.send(json!({"type": "disconnect", "reason": "refresh_requested"}).to_string());
        }
    }

    /// The person sends the modal `view` (as `views.open` got it) with `text` typed in its
    /// input.
    pub(crate) async fn submit(&self, user: &str, view: &Value, text: &str) -> String {
        // The form's input block (a section with the question may come first).
        let input = view["blocks"].as_array().unwrap().iter().find(|b| b["type"] == "input").unwrap();
        let block = input["block_id"].as_str().unwrap().to_owned();
        let action = input["element"]["action_id"].as_str().unwrap().to_owned();
        let mut submitted = view.clone();
        submitted["id"] = json!("V1");
        submitted["state"] =
            json!({"values": {block: {action: {"type": "plain_text_input", "value": text}}}});
        self.interact(json!({"type": "view_submission", "user": {"id": user}, "view": submitted})).await
    }

    pub(crate) fn messages(&self) -> Vec<Posted> {
        self.slack.messages.lock().unwrap().values().cloned().collect()
    }

    pub(crate) async fn wait_for(&self, within: Duration, check: impl Fn(&[Posted]) -> bool) -> Vec<Posted> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let messages = self.messages();
            if check(&messages) {
                return messages;
            }
            assert!(tokio::time::Instant::now() < deadline, "timed out; messages: {messages:#?}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    pub(crate) fn count(&self, name: &str) -> usize {
        self.slack.calls.lock().unwrap().iter().filter(|c| *c == name).count()
    }
}

fn bearer(headers: &HeaderMap) -> String {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_owned()
}

fn slack_error(error: &str) -> Response {
    Json(json!({"ok": false, "error": error})).into_response()
}

/// Checks Block Kit limits the double knows.
fn blocks_fit(blocks: &Value) -> bool {
    blocks.as_array().is_some_and(|blocks| {
        blocks.len() <= 50
            && blocks.iter().filter(|b| b["type"] == "actions").all(|b| {
                let elements = b["elements"].as_array().cloned().unwrap_or_default();
                elements.len() <= 25
                    && elements
                        .iter()
                        .all(|e| e["text"]["text"].as_str().is_some_and(|t| t.chars().count() <= 75))
            })
    })
}

async fn method(
    State(slack): State<Arc<Workspace>>,
    Path(method): Path<String>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    slack.calls.lock().unwrap().push(method.clone());
    let token = bearer(&headers);
    if method == "apps.connections.open" {
        if token != APP_TOKEN {
            return slack_error("invalid_auth");
        }
        let url = format!(
            "{}/socket?ticket=t{}",
            slack.base.lock().unwrap(),
            slack.connections.load(Ordering::SeqCst)
        );
        return Json(json!({"ok": true, "url": url})).into_response();
    }
    if token != BOT_TOKEN {
        return slack_error("invalid_auth");
    }
    if matches!(method.as_str(), "chat.postMessage" | "chat.update")
        && slack.limit_next.load(Ordering::SeqCst) > 0
    {
        slack.limit_next.fetch_sub(1, Ordering::SeqCst);
        slack.limited.fetch_add(1, Ordering::SeqCst);
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", "1")],
            Json(json!({"ok": false, "error": "ratelimited"})),
        )
            .into_response();
    }
    match method.as_str() {
        "chat.postMessage" => {
            if body["channel"] != CHANNEL {
                return slack_error("channel_not_found");
            }
            if !blocks_fit(&body["blocks"]) {
                return slack_error("invalid_blocks");
            }
            let ts = {
                let mut next = slack.next_ts.lock().unwrap();
                *next += 1;
                format!("1700000000.{:06}", *next)
            };
            let posted = Posted {
                ts: ts.clone(),
                text: body["text"].as_str().unwrap_or_default().to_owned(),
                blocks: body["blocks"].clone(),
                edits: 0,
            };
            slack.messages.lock().unwrap().insert(ts.clone(), posted);
            Json(json!({"ok": true, "channel": CHANNEL, "ts": ts, "message": {"text": body["text"]}}))
                .into_response()
        }
        "chat.update" => {
            if !blocks_fit(&body["blocks"]) {
                return slack_error("invalid_blocks");
            }
            let ts = body["ts"].as_str().unwrap_or_default().to_owned();
            let mut messages = slack.messages.lock().unwrap();
            let Some(posted) = messages.get_mut(&ts) else { return slack_error("message_not_found") };
            body["text"].as_str().unwrap_or_default().clone_into(&mut posted.text);
            posted.blocks = body["blocks"].clone();
            posted.edits += 1;
            Json(json!({"ok": true, "channel": CHANNEL, "ts": ts})).into_response()
        }
        "views.open" => {
            if body["trigger_id"].as_str().is_none_or(str::is_empty) {
                return slack_error("invalid_trigger_id");
            }
            let view = body["view"].clone();
            let title_fits = view["title"]["text"].as_str().is_some_and(|t| t.chars().count() <= 24);
            if view["type"] != "modal" || !title_fits {
                return slack_error("invalid_arguments");
            }
            slack.views.lock().unwrap().push(view.clone());
            Json(json!({"ok": true, "view": view})).into_response()
        }
        "chat.postEphemeral" => {
            let user = body["user"].as_str().unwrap_or_default().to_owned();
            slack
                .ephemeral
                .lock()
                .unwrap()
                .push((user, body["text"].as_str().unwrap_or_default().to_owned()));
            Json(json!({"ok": true, "message_ts": "1700000001.000001"})).into_response()
        }
        _ => slack_error("unknown_method"),
    }
}

async fn socket(State(slack): State<Arc<Workspace>>, upgrade: WebSocketUpgrade) -> Response {
    upgrade.on_upgrade(move |socket| connection(slack, socket))
}

async fn connection(slack: Arc<Workspace>, mut socket: WebSocket) {
    slack.connections.fetch_add(1, Ordering::SeqCst);
    let hello = json!({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A1"}});
    if socket.send(Message::text(hello.to_string())).await.is_err() {
        return;
    }
    let (sender, mut outgoing) = mpsc::unbounded_channel::<String>();
    *slack.socket.lock().unwrap() = Some(sender);
    loop {
        tokio::select! {
            next = outgoing.recv() => match next {
                Some(text) => if socket.send(Message::text(text)).await.is_err() { return },
                None => return,
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    if let Ok(ack) = serde_json::from_str::<Value>(text.as_str())
                        && let Some(id) = ack["envelope_id"].as_str()
                    {
                        slack.acked.lock().unwrap().push(id.to_owned());
                    }
                }
                Some(Ok(_)) => {}
                _ => return,
            },
        }
    }
}
