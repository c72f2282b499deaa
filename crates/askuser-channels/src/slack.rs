//! Slack, through Socket Mode (<https://api.slack.com/apis/socket-mode>): `apps.connections.open`
//! with the app-level token gives a WebSocket URL; interactions arrive there as envelopes, each
//! acknowledged at once with its `envelope_id` (Slack wants it within 3 s); messages are posted
//! and edited with the Web API (`chat.postMessage`, `chat.update`) and the bot token, as Block
//! Kit: a plain-text section and rows of buttons whose `value` holds a short key and an action.
//! A typed answer ("Other…", a text question) is asked in a modal (`views.open` from the tap's
//! `trigger_id`), sent back as a `view_submission`.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use askuser_client::reply::{MAX_REPLY_BYTES, ReplyError, read_body, retry_after};
use futures_util::{SinkExt as _, StreamExt as _};
use reqwest::header::{AUTHORIZATION, HeaderValue};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::batch::View;
use crate::engine::{Engine, Reply, Surface};
use crate::fault::{Fault, Retry};

/// How many interactions (taps, submitted forms) are handled at once; Slack has each acknowledged
/// before it is handled, so one beyond this is dropped, never left unacknowledged.
const IN_FLIGHT: usize = 64;

/// Slack errors that mean "try again later"
/// (<https://api.slack.com/methods/chat.postMessage#errors>).
const TRANSIENT: &[&str] =
    &["ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"];

/// A Slack app in Socket Mode: its tokens (never logged), the channel it posts to and who may
/// answer.
pub(crate) struct Slack {
    http: reqwest::Client,
    api_url: String,
    app_token: HeaderValue,
    bot_token: HeaderValue,
    channel: String,
    users: HashSet<String>,
    retry: Arc<Retry>,
    closing: tokio::sync::watch::Receiver<bool>,
}

impl std::fmt::Debug for Slack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slack").field("channel", &self.channel).finish_non_exhaustive()
    }
}

/// The answer form's `callback_id`.
const FORM: &str = "askuser-answer";

/// A token as an `Authorization: Bearer` value, marked sensitive.
fn bearer(token: &str) -> Result<HeaderValue, String> {
    let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
        .map_err(|_| "the token holds a character a header cannot carry".to_owned())?;
    value.set_sensitive(true);
    Ok(value)
}

impl Slack {
    pub(crate) fn new(
        api_url: &str,
        app_token: &str,
        bot_token: &str,
        channel: String,
        users: Vec<String>,
        retry: Arc<Retry>,
        closing: tokio::sync::watch::Receiver<bool>,
    ) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self {
            http,
            api_url: api_url.trim_end_matches('/').to_owned(),
            app_token: bearer(app_token).map_err(|e| format!("app token: {e}"))?,
            bot_token: bearer(bot_token).map_err(|e| format!("bot token: {e}"))?,
            channel,
            users: users.into_iter().collect(),
            retry,
            closing,
        })
    }

    /// Calls Web API `method` once with `token`.
    async fn call_once(&self, method: &str, token: &HeaderValue, body: &Value) -> Result<Value, Fault> {
        let response = self
            .http
            .post(format!("{}/{method}", self.api_url))
            .header(AUTHORIZATION, token.clone())
            .json(body)
            .send()
            .await
            .map_err(Fault::transport)?;
        let status = response.status();
        if status.as_u16() == 429 {
            // https://api.slack.com/apis/rate-limits: `Retry-After` in seconds.
            let after = retry_after(response.headers()).unwrap_or(Duration::from_secs(1));
            return Err(Fault::RateLimited(after));
        }
        if status.is_server_error() {
            return Err(Fault::Transient(format!("{method}: {status}")));
        }
        let body = match read_body(response, MAX_REPLY_BYTES).await {
            Ok(body) => body,
            Err(ReplyError::Transport(error)) => return Err(Fault::transport(error)),
            Err(too_large) => return Err(Fault::Transient(format!("{method}: {too_large}"))),
        };
        let reply: Value = serde_json::from_slice(&body)
            .map_err(|e| Fault::Transient(format!("{method}: unreadable reply: {e}")))?;
        if reply["ok"].as_bool() == Some(true) {
            return Ok(reply);
        }
        let error = reply["error"].as_str().unwrap_or("unknown_error").to_owned();
        if TRANSIENT.contains(&error.as_str()) {
            Err(Fault::Transient(format!("{method}: {error}")))
        } else {
            Err(Fault::Refused(format!("{method}: {error}")))
        }
    }

    /// Calls `method`, retrying faults until it succeeds, is refused, or the channels stop.
    async fn call(&self, method: &str, token: &HeaderValue, body: &Value) -> Result<Value, Fault> {
        self.retry.run(method, &self.closing, || self.call_once(method, token, body)).await
    }

    /// One socket connection: acknowledges each envelope at once, then hands interactions on to
    /// `tasks` (kept across reconnections, so a refresh does not cut a tap being answered; ended
    /// when the channels stop; at most [`IN_FLIGHT`] at once, beyond which a tap is dropped with a
    /// warning and the person taps again).
    async fn connection(
        &self,
        engine: &Arc<Engine<Self>>,
        tasks: &mut tokio::task::JoinSet<()>,
    ) -> Result<(), String> {
        // https://api.slack.com/methods/apps.connections.open
        let opened = self
            .call("apps.connections.open", &self.app_token, &json!({}))
            .await
            .map_err(|e| e.to_string())?;
        let url = opened["url"].as_str().ok_or("apps.connections.open: no url in the reply")?;
        let (mut socket, _) = tokio_tungstenite::connect_async(url)
            .await
            .map_err(|e| format!("the Socket Mode connection failed: {e}"))?;
        while let Some(message) = socket.next().await {
            let text = match message.map_err(|e| format!("the Socket Mode connection broke: {e}"))? {
                Message::Text(text) => text,
                Message::Close(_) => return Ok(()),
                _ => continue,
            };
            let Ok(envelope) = serde_json::from_str::<Value>(text.as_str()) else { continue };
            if envelope["type"] == "disconnect" {
                // Slack asks the app to reconnect (a refresh): open a new connection.
                return Ok(());
            }
            if let Some(envelope_id) = envelope["envelope_id"].as_str() {
                let ack = json!({"envelope_id": envelope_id}).to_string();
                socket.send(Message::text(ack)).await.map_err(|e| format!("acknowledging failed: {e}"))?;
            }
            if envelope["type"] == "events_api" {
                // https://api.slack.com/apis/socket-mode#events: an Events API event, here a
                // message (https://api.slack.com/events/message) that may reply in a batch's thread.
                let event = envelope["payload"]["event"].clone();
                if event["type"] == "message"
                    && event["subtype"].is_null()
                    && event["bot_id"].is_null()
                    && room(tasks)
                {
                    let engine = Arc::clone(engine);
                    let slack = Arc::clone(&engine.surface);
                    tasks.spawn(async move { slack.message(&engine, &event).await });
                }
                continue;
            }
            if envelope["type"] == "interactive" {
                if !room(tasks) {
                    engine.counters.ignored.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(
                        channel = "slack",
                        in_flight = IN_FLIGHT,
                        "too many interactions at once: one was dropped"
                    );
                    continue;
                }
                let (engine, payload) = (Arc::clone(engine), envelope["payload"].clone());
                let slack = Arc::clone(&engine.surface);
                match payload["type"].as_str() {
                    Some("block_actions") => {
                        tasks.spawn(async move { slack.actions(&engine, &payload).await });
                    }
                    Some("view_submission") => {
                        tasks.spawn(async move { slack.submitted(&engine, &payload).await });
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// A `block_actions` payload: <https://api.slack.com/reference/interaction-payloads/block-actions>
    async fn actions(&self, engine: &Engine<Self>, payload: &Value) {
        let user = payload["user"]["id"].as_str().unwrap_or_default();
        if !self.users.contains(user) {
            engine.counters.ignored.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(channel = "slack", "a tap by a user not in user_ids was ignored");
            return;
        }
        let Some(actions) = payload["actions"].as_array() else { return };
        for action in actions {
            let Some(value) = action["value"].as_str() else { continue };
            match engine.tap(value, user).await {
                Reply::Say(said) => self.tell(payload, user, &said).await,
                Reply::Type { id, q, header, question } => {
                    let trigger = payload["trigger_id"].as_str().unwrap_or_default();
                    self.open_form(trigger, &crate::batch::key_of(&id), q, &header, &question).await;
                }
            }
        }
    }

    /// A message in a batch's thread: the whole batch typed, read by the typed-answer grammar
    /// (docs/typed-answers.md). Only from a user in `user_ids`; what is wrong is told to them
    /// alone, in the thread.
    async fn message(&self, engine: &Engine<Self>, event: &Value) {
        let (Some(thread), Some(channel), Some(text)) =
            (event["thread_ts"].as_str(), event["channel"].as_str(), event["text"].as_str())
        else {
            return;
        };
        let user = event["user"].as_str().unwrap_or_default();
        let shown = |at: &Value| {
            serde_json::from_value::<Placed>(at.clone()).is_ok_and(|p| p.channel == channel && p.ts == thread)
        };
        if !self.users.contains(user) {
            // Counted only when it is a reply to one of ours: other talk in the channel is none of ours.
            if engine.shows(shown) {
                engine.counters.ignored.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(channel = "slack", "a reply by a user not in user_ids was ignored");
            }
            return;
        }
        let Some(Reply::Say(said)) = engine.replied(shown, &unescaped(text), user).await else { return };
        if crate::engine::taken(&said) {
            return;
        }
        // https://api.slack.com/methods/chat.postEphemeral: `thread_ts` shows it in the thread.
        let body = json!({"channel": channel, "user": user, "text": escaped(&said), "thread_ts": thread});
        if let Err(fault) = self.call("chat.postEphemeral", &self.bot_token, &body).await {
            tracing::warn!(channel = "slack", error = %fault, "could not tell the person");
        }
    }

    /// Tells `user` (only them) what became of their tap, unless the message shows it.
    async fn tell(&self, payload: &Value, user: &str, said: &str) {
        if crate::engine::taken(said) {
            return;
        }
        // https://api.slack.com/methods/chat.postEphemeral
        let channel = payload["container"]["channel_id"].as_str().unwrap_or(&self.channel);
        let body = json!({"channel": channel, "user": user, "text": escaped(said)});
        if let Err(fault) = self.call("chat.postEphemeral", &self.bot_token, &body).await {
            tracing::warn!(channel = "slack", error = %fault, "could not tell the person");
        }
    }

    /// Opens a modal asking for the typed answer to question `q` ("Other…", a text question),
    /// from the tap's `trigger_id` (valid for 3 s): <https://api.slack.com/methods/views.open>.
    async fn open_form(&self, trigger: &str, key: &str, q: usize, header: &str, question: &str) {
        // The question itself above the box, as plain text (a section's text: 3,000 characters at
        // most, https://api.slack.com/reference/block-kit/blocks#section).
        let view = json!({
            "type": "modal", "callback_id": FORM, "private_metadata": format!("{key}:{q}"),
            "title": {"type": "plain_text", "text": "Your answer"},
            "submit": {"type": "plain_text", "text": "Send"},
            "close": {"type": "plain_text", "text": "Cancel"},
            "blocks": [{"type": "section", "block_id": "question",
                        "text": {"type": "plain_text", "text": crate::batch::cut(question, 2900), "emoji": true}},
                       {"type": "input", "block_id": "answer",
                        "label": {"type": "plain_text", "text": crate::batch::cut(header, 1900)},
                        "element": {"type": "plain_text_input", "action_id": "text", "multiline": true,
                                    "max_length": askuser_core::MAX_CUSTOM_CHARS}}]});
        let body = json!({"trigger_id": trigger, "view": view});
        if let Err(fault) = self.call_once("views.open", &self.bot_token, &body).await {
            tracing::warn!(channel = "slack", error = %fault, "could not open the answer form");
        }
    }

    /// A `view_submission` of the answer form:
    /// <https://api.slack.com/reference/interaction-payloads/views#view_submission>.
    async fn submitted(&self, engine: &Engine<Self>, payload: &Value) {
        let user = payload["user"]["id"].as_str().unwrap_or_default();
        if !self.users.contains(user) {
            engine.counters.ignored.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(channel = "slack", "a form sent by a user not in user_ids was ignored");
            return;
        }
        let view = &payload["view"];
        if view["callback_id"] != FORM {
            return;
        }
        let metadata = view["private_metadata"].as_str().unwrap_or_default();
        let parsed = metadata.split_once(':').and_then(|(key, q)| Some((key, q.parse::<usize>().ok()?)));
        let text = view["state"]["values"]["answer"]["text"]["value"].as_str();
        let (Some((key, q)), Some(text)) = (parsed, text) else { return };
        let said = match engine.typed_at(key, q, text, user).await {
            Reply::Say(said) => said,
            Reply::Type { .. } => return,
        };
        self.tell(payload, user, &said).await;
    }
}

/// Whether `tasks` has room for one more interaction, the finished ones reaped first.
fn room(tasks: &mut tokio::task::JoinSet<()>) -> bool {
    while tasks.try_join_next().is_some() {}
    tasks.len() < IN_FLIGHT
}

/// A message's text as the person typed it: Slack sends `&`, `<` and `>` escaped
/// (<https://api.slack.com/reference/surfaces/formatting#escaping>).
fn unescaped(text: &str) -> String {
    text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// `text` for a message's top-level `text` (what notifications show) and an ephemeral reply,
/// which Slack reads as mrkdwn: `&`, `<` and `>` escaped as Slack asks
/// (<https://api.slack.com/reference/surfaces/formatting#escaping>), so that a question's
/// `<!channel>` pings nobody and `<https://evil|Click>` is no link (issue 36.4).
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Block Kit blocks (<https://api.slack.com/reference/block-kit/blocks>): a plain-text section
/// (nothing to escape), then one `actions` block per row of buttons.
fn blocks(view: &View) -> Value {
    use crate::batch::Look;
    let mut blocks =
        vec![json!({"type": "section", "text": {"type": "plain_text", "text": view.text, "emoji": true}})];
    let mut n = 0;
    for row in &view.rows {
        let elements: Vec<Value> = row
            .iter()
            .map(|button| {
                n += 1;
                let mut element = json!({"type": "button", "action_id": format!("askuser-{n}"),
                                         "text": {"type": "plain_text", "text": button.text, "emoji": true}});
                if let Some(data) = &button.data {
                    element["value"] = json!(data);
                }
                if let Some(url) = &button.url {
                    element["url"] = json!(url);
                }
                // https://api.slack.com/reference/block-kit/block-elements#button: `style`, and a
                // `confirm` dialog (https://api.slack.com/reference/block-kit/composition-objects#confirm),
                // as the page asks before declining.
                match button.look {
                    Look::Plain => {}
                    Look::Recommended => element["style"] = json!("primary"),
                    Look::Decline => {
                        element["style"] = json!("danger");
                        element["confirm"] = json!({
                            "title": {"type": "plain_text", "text": "Decline to answer?"},
                            "text": {"type": "plain_text",
                                     "text": "The assistant is told that you chose not to answer these questions."},
                            "confirm": {"type": "plain_text", "text": "Yes, decline"},
                            "deny": {"type": "plain_text", "text": "Keep answering"},
                            "style": "danger"
                        });
                    }
                }
                element
            })
            .collect();
        blocks.push(json!({"type": "actions", "elements": elements}));
    }
    Value::Array(blocks)
}

/// Where a message is.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Placed {
    channel: String,
    ts: String,
}

#[async_trait::async_trait]
impl Surface for Slack {
    const NAME: &'static str = "slack";
    const SHOWN: &'static str = "Slack";
    const TYPES_TEXT: bool = true;

    async fn post(&self, view: &View) -> Result<Value, Fault> {
        // https://api.slack.com/methods/chat.postMessage
        let body = json!({"channel": self.channel, "text": escaped(&view.text), "blocks": blocks(view)});
        let sent = self.call("chat.postMessage", &self.bot_token, &body).await?;
        let (Some(channel), Some(ts)) = (sent["channel"].as_str(), sent["ts"].as_str()) else {
            return Err(Fault::Refused("chat.postMessage: no channel or ts in the reply".to_owned()));
        };
        Ok(serde_json::to_value(Placed { channel: channel.to_owned(), ts: ts.to_owned() })
            .unwrap_or_default())
    }

    async fn edit(&self, at: &Value, view: &View) -> Result<(), Fault> {
        let Ok(placed) = serde_json::from_value::<Placed>(at.clone()) else { return Ok(()) };
        // https://api.slack.com/methods/chat.update
        let body = json!({"channel": placed.channel, "ts": placed.ts, "text": escaped(&view.text), "blocks": blocks(view)});
        self.call("chat.update", &self.bot_token, &body).await.map(|_| ())
    }

    async fn listen(self: Arc<Self>, engine: Arc<Engine<Self>>) {
        let mut delay = self.retry.base;
        // The interactions being handled: aborted with this task when the channels stop.
        let mut tasks = tokio::task::JoinSet::new();
        loop {
            match self.connection(&engine, &mut tasks).await {
                Ok(()) => delay = self.retry.base,
                Err(error) => {
                    tracing::warn!(channel = "slack", error = %error, retry_in = ?delay, "Socket Mode: reconnecting");
                    self.retry.retries.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_mins(1));
                }
            }
        }
    }
}
