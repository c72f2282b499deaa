//! Telegram, through the Bot API (<https://core.telegram.org/bots/api>): `POST
//! {api_url}/bot{token}/{method}` with JSON; long polling with `getUpdates` (no webhook, no
//! public URL); inline keyboards whose `callback_data` (1–64 bytes) holds a short key and an
//! action, never a label; every tap answered with `answerCallbackQuery`; typed answers through
//! `ForceReply`; plain text (no `parse_mode`: nothing to escape).

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use askuser_client::reply::{MAX_REPLY_BYTES, ReplyError, read_body};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::batch::{Button, View};
use crate::engine::{Engine, Reply, Surface};
use crate::fault::{Fault, Retry};

/// The Bot API's reply: `{"ok": true, "result": …}` or `{"ok": false, "error_code": N,
/// "description": "…", "parameters": {"retry_after": S}}`.
#[derive(Debug, Deserialize)]
struct Answer {
    ok: bool,
    #[serde(default)]
    result: Value,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Option<Parameters>,
}

#[derive(Debug, Deserialize)]
struct Parameters {
    #[serde(default)]
    retry_after: Option<u64>,
}

/// A Telegram bot: the client, the method base (which holds the token: never logged) and the
/// chats it asks.
pub(crate) struct Telegram {
    http: reqwest::Client,
    /// `{api_url}/bot{token}`.
    base: String,
    chat_ids: Vec<i64>,
    allowed: HashSet<i64>,
    poll_timeout: Duration,
    retry: Arc<Retry>,
    closing: tokio::sync::watch::Receiver<bool>,
}

impl std::fmt::Debug for Telegram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telegram").field("chat_ids", &self.chat_ids).finish_non_exhaustive()
    }
}

impl Telegram {
    pub(crate) fn new(
        api_url: &str,
        token: &str,
        chat_ids: Vec<i64>,
        poll_timeout: Duration,
        retry: Arc<Retry>,
        closing: tokio::sync::watch::Receiver<bool>,
    ) -> Result<Self, reqwest::Error> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Self {
            http,
            base: format!("{}/bot{token}", api_url.trim_end_matches('/')),
            allowed: chat_ids.iter().copied().collect(),
            chat_ids,
            poll_timeout,
            retry,
            closing,
        })
    }

    /// Calls `method` once.
    async fn call_once(&self, method: &str, body: &Value, timeout: Duration) -> Result<Value, Fault> {
        let response = self
            .http
            .post(format!("{}/{method}", self.base))
            .timeout(timeout)
            .json(body)
            .send()
            .await
            .map_err(Fault::transport)?;
        let status = response.status();
        let body = match read_body(response, MAX_REPLY_BYTES).await {
            Ok(body) => body,
            Err(ReplyError::Transport(error)) => return Err(Fault::transport(error)),
            Err(too_large) => return Err(Fault::Transient(format!("{method}: {too_large}"))),
        };
        let answer: Answer = match serde_json::from_slice(&body) {
            Ok(answer) => answer,
            Err(_) if status.is_server_error() => {
                return Err(Fault::Transient(format!("{method}: {status}")));
            }
            Err(error) => return Err(Fault::Transient(format!("{method}: unreadable reply: {error}"))),
        };
        if answer.ok {
            return Ok(answer.result);
        }
        let description = answer.description.unwrap_or_default();
        if let Some(after) = answer.parameters.and_then(|p| p.retry_after) {
            return Err(Fault::RateLimited(Duration::from_secs(after)));
        }
        if status.as_u16() == 429 || status.is_server_error() {
            return Err(Fault::Transient(format!("{method}: {status} {description}")));
        }
        Err(Fault::Refused(format!("{method}: {status} {description}")))
    }

    /// Calls `method`, retrying faults until it succeeds, is refused, or the channels stop.
    async fn call(&self, method: &str, body: &Value) -> Result<Value, Fault> {
        self.retry.run(method, &self.closing, || self.call_once(method, body, Duration::from_secs(30))).await
    }

    fn allowed(&self, chat: i64) -> bool {
        self.allowed.contains(&chat)
    }
}

/// Where a batch's message was placed (its `at`), chat by chat.
fn placed_in(at: &Value) -> impl Iterator<Item = Placed> {
    serde_json::from_value::<Vec<Placed>>(at.clone()).unwrap_or_default().into_iter()
}

/// What follows a typed reply to a whole batch: nothing once it is taken (the batch's message
/// says it was answered), else what is wrong, in reply to the person's message.
fn batch_reply(chat: i64, message: &Value, reply: Reply) -> FollowUp {
    match reply {
        Reply::Say(said) if crate::engine::taken(&said) => FollowUp::Nothing,
        Reply::Say(text) => FollowUp::Say { chat, message_id: message["message_id"].as_i64(), text },
        Reply::Type { .. } => FollowUp::Nothing,
    }
}

/// An inline keyboard (`InlineKeyboardMarkup`) of `rows`.
fn keyboard(rows: &[Vec<Button>]) -> Value {
    let rows: Vec<Vec<Value>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|button| match (&button.data, &button.url) {
                    (Some(data), _) => json!({"text": button.text, "callback_data": data}),
                    (None, Some(url)) => json!({"text": button.text, "url": url}),
                    (None, None) => json!({"text": button.text, "callback_data": "-"}),
                })
                .collect()
        })
        .collect();
    json!({"inline_keyboard": rows})
}

/// One message of a batch: where it is.
#[derive(Debug, serde::Serialize, Deserialize)]
struct Placed {
    chat_id: i64,
    message_id: i64,
}

#[async_trait::async_trait]
impl Surface for Telegram {
    const NAME: &'static str = "telegram";
    const SHOWN: &'static str = "Telegram";
    const TYPES_TEXT: bool = true;

    async fn post(&self, view: &View) -> Result<Value, Fault> {
        let mut placed = Vec::new();
        for &chat_id in &self.chat_ids {
            // https://core.telegram.org/bots/api#sendmessage
            let sent = self
                .call(
                    "sendMessage",
                    &json!({"chat_id": chat_id, "text": view.text, "reply_markup": keyboard(&view.rows)}),
                )
                .await?;
            let message_id = sent["message_id"]
                .as_i64()
                .ok_or_else(|| Fault::Refused("sendMessage: no message_id in the reply".to_owned()))?;
            placed.push(Placed { chat_id, message_id });
        }
        Ok(serde_json::to_value(placed).unwrap_or_default())
    }

    async fn edit(&self, at: &Value, view: &View) -> Result<(), Fault> {
        let placed: Vec<Placed> = serde_json::from_value(at.clone()).unwrap_or_default();
        for Placed { chat_id, message_id } in placed {
            // https://core.telegram.org/bots/api#editmessagetext
            let result = self
                .call(
                    "editMessageText",
                    &json!({"chat_id": chat_id, "message_id": message_id, "text": view.text,
                            "reply_markup": keyboard(&view.rows)}),
                )
                .await;
            match result {
                Ok(_) => {}
                // The same text and buttons again: nothing to change.
                Err(Fault::Refused(why)) if why.contains("message is not modified") => {}
                Err(fault) => return Err(fault),
            }
        }
        Ok(())
    }

    async fn listen(self: Arc<Self>, engine: Arc<Engine<Self>>) {
        let mut offset: i64 = engine_cursor(&engine).await.unwrap_or_default();
        loop {
            // https://core.telegram.org/bots/api#getupdates
            let body = json!({"offset": offset, "timeout": self.poll_timeout.as_secs(),
                              "allowed_updates": ["message", "callback_query"]});
            let timeout = self.poll_timeout + Duration::from_secs(15);
            let updates = self
                .retry
                .run("getUpdates", &self.closing, || self.call_once("getUpdates", &body, timeout))
                .await;
            let updates = match updates {
                Ok(Value::Array(updates)) => updates,
                Ok(_) => Vec::new(),
                Err(fault) => {
                    tracing::error!(channel = "telegram", error = %fault, "getUpdates refused; retrying in a minute");
                    tokio::time::sleep(Duration::from_mins(1)).await;
                    continue;
                }
            };
            for update in updates {
                let Some(update_id) = update["update_id"].as_i64() else { continue };
                if update_id < offset {
                    continue;
                }
                offset = update_id + 1;
                self.handle(&engine, &update, offset).await;
            }
        }
    }
}

async fn engine_cursor(engine: &Engine<Telegram>) -> Option<i64> {
    engine.cursor().await.and_then(|text| text.parse().ok())
}

/// What is sent back to the person once an update has been taken.
#[derive(Debug)]
enum FollowUp {
    Nothing,
    /// `answerCallbackQuery`, with a toast.
    Toast {
        query_id: String,
        text: Option<String>,
    },
    /// `answerCallbackQuery`, then a `ForceReply` prompt for question `q` of batch `id`.
    Prompt {
        query_id: String,
        chat: i64,
        id: String,
        q: usize,
        header: String,
    },
    /// `deleteMessage` of each: the prompt and the reply that answered it.
    Tidy {
        chat: i64,
        messages: [Option<i64>; 2],
    },
    /// A reply to message `message_id`.
    Say {
        chat: i64,
        message_id: Option<i64>,
        text: String,
    },
}

impl Telegram {
    /// Takes one update: what it does to the batches first, then the offset past it is kept
    /// (before anything is sent back: a restart neither loses the update nor applies it twice,
    /// which matters for a tick), then the person is answered.
    async fn handle(&self, engine: &Engine<Self>, update: &Value, next: i64) {
        let follow_up = if let Some(query) = update.get("callback_query") {
            self.tapped(engine, query).await
        } else if let Some(message) = update.get("message") {
            self.message(engine, message).await
        } else {
            FollowUp::Nothing
        };
        if let Err(error) = engine.set_cursor(&next.to_string()).await {
            tracing::warn!(channel = "telegram", error = %error, "cannot keep the update offset");
        }
        self.follow_up(engine, follow_up).await;
    }

    /// A `callback_query`: <https://core.telegram.org/bots/api#callbackquery>
    async fn tapped(&self, engine: &Engine<Self>, query: &Value) -> FollowUp {
        let query_id = query["id"].as_str().unwrap_or_default().to_owned();
        let chat = query["message"]["chat"]["id"].as_i64();
        let Some(chat) = chat.filter(|chat| self.allowed(*chat)) else {
            engine.counters.ignored.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(channel = "telegram", chat = ?chat, "a tap from a chat not in chat_ids was ignored");
            return FollowUp::Toast { query_id, text: None };
        };
        let data = query["data"].as_str().unwrap_or_default();
        let person = query["from"]["id"].as_i64().map(|id| id.to_string()).unwrap_or_default();
        match engine.tap(data, &person).await {
            Reply::Say(text) => FollowUp::Toast { query_id, text: Some(text) },
            Reply::Type { id, q, header, .. } => FollowUp::Prompt { query_id, chat, id, q, header },
        }
    }

    /// A `message`: a reply to a prompt is a typed answer; <https://core.telegram.org/bots/api#message>
    async fn message(&self, engine: &Engine<Self>, message: &Value) -> FollowUp {
        let chat = message["chat"]["id"].as_i64();
        let Some(chat) = chat.filter(|chat| self.allowed(*chat)) else {
            engine.counters.ignored.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(channel = "telegram", chat = ?chat, "a message from a chat not in chat_ids was ignored");
            return FollowUp::Nothing;
        };
        let Some(text) = message["text"].as_str() else { return FollowUp::Nothing };
        let person = message["from"]["id"].as_i64().map(|id| id.to_string()).unwrap_or_default();
        let Some(replied) = message["reply_to_message"]["message_id"].as_i64() else {
            // A plain message: the typed answer to the one batch this chat shows, if one.
            let said = engine.replied(|at| placed_in(at).any(|p| p.chat_id == chat), text, &person).await;
            return said.map_or(FollowUp::Nothing, |reply| batch_reply(chat, message, reply));
        };
        if let Some(reply) = engine
            .replied(|at| placed_in(at).any(|p| p.chat_id == chat && p.message_id == replied), text, &person)
            .await
        {
            // A reply to a batch's own message: the whole batch, by the typed-answer grammar.
            return batch_reply(chat, message, reply);
        }
        match engine.typed(&format!("{chat}:{replied}"), text, &person).await {
            // Taken: the batch's own message shows it (ticked, or answered). The prompt and the
            // person's reply go, so that an "Other…" answer leaves nothing behind.
            Some(Reply::Say(said)) if crate::engine::taken(&said) => {
                FollowUp::Tidy { chat, messages: [Some(replied), message["message_id"].as_i64()] }
            }
            Some(Reply::Say(text)) => {
                FollowUp::Say { chat, message_id: message["message_id"].as_i64(), text }
            }
            _ => FollowUp::Nothing,
        }
    }

    async fn follow_up(&self, engine: &Engine<Self>, follow_up: FollowUp) {
        match follow_up {
            FollowUp::Nothing => {}
            FollowUp::Toast { query_id, text } => {
                // https://core.telegram.org/bots/api#answercallbackquery: text of 0-200 characters.
                let mut body = json!({"callback_query_id": query_id});
                if let Some(text) = text {
                    body["text"] = json!(crate::batch::cut(&text, 200));
                }
                let _ = self.call("answerCallbackQuery", &body).await;
            }
            FollowUp::Prompt { query_id, chat, id, q, header } => {
                let _ = self.call("answerCallbackQuery", &json!({"callback_query_id": query_id})).await;
                let text = format!(
                    "Reply to this message with your answer to “{}”.",
                    crate::batch::cut(&header, 100)
                );
                // https://core.telegram.org/bots/api#forcereply
                let sent = self
                    .call(
                        "sendMessage",
                        &json!({"chat_id": chat, "text": text,
                                "reply_markup": {"force_reply": true, "input_field_placeholder": "Your answer"}}),
                    )
                    .await;
                if let Ok(sent) = sent
                    && let Some(message_id) = sent["message_id"].as_i64()
                {
                    engine.prompted(&id, format!("{chat}:{message_id}"), q).await;
                }
            }
            FollowUp::Tidy { chat, messages } => {
                // https://core.telegram.org/bots/api#deletemessage: a bot may delete its own
                // messages, and incoming ones in a private chat; elsewhere the reply stays.
                for message_id in messages.into_iter().flatten() {
                    let _ =
                        self.call("deleteMessage", &json!({"chat_id": chat, "message_id": message_id})).await;
                }
            }
            FollowUp::Say { chat, message_id, text } => {
                let _ = self
                    .call(
                        "sendMessage",
                        &json!({"chat_id": chat, "text": text,
                                "reply_parameters": {"message_id": message_id, "allow_sending_without_reply": true}}),
                    )
                    .await;
            }
        }
    }
}
