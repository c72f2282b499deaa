//! A test double of the Telegram Bot API, following its documented shapes
//! (<https://core.telegram.org/bots/api>):
//!
//! - every method is `POST /bot{token}/{method}` with a JSON body; the reply is `{"ok": true,
//!   "result": …}` or `{"ok": false, "error_code": N, "description": "…"}`, a 429 carrying
//!   `parameters.retry_after` (<https://core.telegram.org/bots/api#making-requests>,
//!   <https://core.telegram.org/bots/api#responseparameters>);
//! - `getUpdates` long-polls: updates with `update_id` ≥ `offset`, waiting up to `timeout`
//!   seconds for one; an `offset` confirms (forgets) every update before it
//!   (<https://core.telegram.org/bots/api#getupdates>);
//! - `sendMessage` returns the `Message` (<https://core.telegram.org/bots/api#sendmessage>);
//!   `editMessageText` refuses an edit that changes nothing with 400 "message is not modified"
//!   (<https://core.telegram.org/bots/api#editmessagetext>);
//! - `deleteMessage` deletes the bot's own messages and, in a private chat, incoming ones
//!   (<https://core.telegram.org/bots/api#deletemessage>);
//! - `answerCallbackQuery`, its `text` 0–200 characters
//!   (<https://core.telegram.org/bots/api#answercallbackquery>);
//! - inline keyboard buttons' `callback_data` must be 1–64 bytes
//!   (<https://core.telegram.org/bots/api#inlinekeyboardbutton>): longer is a 400.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// A message as the double keeps it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shown {
    pub(crate) chat_id: i64,
    pub(crate) message_id: i64,
    pub(crate) text: String,
    pub(crate) markup: Value,
    pub(crate) edits: u32,
}

impl Shown {
    /// The `callback_data` of every button, in order.
    pub(crate) fn data(&self) -> Vec<String> {
        self.buttons().into_iter().filter_map(|(_, data)| data).collect()
    }

    /// Every button: its text and data.
    pub(crate) fn buttons(&self) -> Vec<(String, Option<String>)> {
        let rows = self.markup["inline_keyboard"].as_array().cloned().unwrap_or_default();
        rows.iter()
            .flat_map(|row| row.as_array().cloned().unwrap_or_default())
            .map(|b| {
                (
                    b["text"].as_str().unwrap_or_default().to_owned(),
                    b["callback_data"].as_str().map(str::to_owned),
                )
            })
            .collect()
    }

    /// The data of the button whose text contains `text`.
    pub(crate) fn button(&self, text: &str) -> String {
        self.buttons()
            .into_iter()
            .find(|(t, _)| t.contains(text))
            .and_then(|(_, data)| data)
            .unwrap_or_else(|| panic!("no button {text:?} in {:?}", self.buttons()))
    }
}

#[derive(Debug, Default)]
pub(crate) struct Bot {
    token: String,
    updates: Mutex<Vec<Value>>,
    next_update: Mutex<i64>,
    arrived: Notify,
    pub(crate) messages: Mutex<BTreeMap<(i64, i64), Shown>>,
    next_message: Mutex<i64>,
    /// `answerCallbackQuery` calls: (query id, text).
    pub(crate) answered: Mutex<Vec<(String, Option<String>)>>,
    /// `deleteMessage` calls: (chat, message id).
    pub(crate) deleted: Mutex<Vec<(i64, i64)>>,
    /// Every method called, in order.
    pub(crate) calls: Mutex<Vec<String>>,
    /// The next this many calls of `sendMessage`/`editMessageText` get 429 with `retry_after`.
    pub(crate) limit_next: AtomicU32,
    pub(crate) limited: AtomicU32,
    /// The next this many calls of any method get 502 (the service unreachable behind its proxy).
    pub(crate) fail_next: AtomicU32,
    /// When the last update was taken by `getUpdates`.
    pub(crate) taken: Notify,
}

pub(crate) struct TelegramDouble {
    pub(crate) url: String,
    pub(crate) bot: Arc<Bot>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TelegramDouble {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub(crate) const TOKEN: &str = "123456:ABC-test-bot-token";

impl TelegramDouble {
    pub(crate) async fn start() -> Self {
        let bot = Arc::new(Bot { token: TOKEN.to_owned(), ..Bot::default() });
        let app = axum::Router::new()
            .route("/{bot}/{method}", axum::routing::post(method))
            .with_state(Arc::clone(&bot));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { url, bot, task }
    }

    /// Queues an update (its `update_id` assigned).
    pub(crate) fn push(&self, mut update: Value) -> i64 {
        let id = {
            let mut next = self.bot.next_update.lock().unwrap();
            *next += 1;
            *next
        };
        update["update_id"] = json!(id);
        self.bot.updates.lock().unwrap().push(update);
        self.bot.arrived.notify_waiters();
        id
    }

    /// A tap on a button of message `message_id` in chat `chat` by user `from`.
    pub(crate) fn tap(&self, chat: i64, from: i64, message_id: i64, data: &str) -> i64 {
        let query_id = format!("q{}", *self.bot.next_update.lock().unwrap() + 1);
        self.push(json!({"callback_query": {
            "id": query_id, "from": {"id": from, "is_bot": false, "first_name": "P"},
            "message": {"message_id": message_id, "date": 0, "chat": {"id": chat, "type": "private"}},
            "chat_instance": "ci", "data": data}}))
    }

    /// A text message in chat `chat`, replying to message `reply_to`.
    pub(crate) fn reply(&self, chat: i64, reply_to: i64, text: &str) -> i64 {
        self.push(json!({"message": {
            "message_id": 9000 + *self.bot.next_update.lock().unwrap(), "date": 0,
            "chat": {"id": chat, "type": "private"}, "from": {"id": chat, "is_bot": false, "first_name": "P"},
            "text": text, "reply_to_message": {"message_id": reply_to, "date": 0, "chat": {"id": chat, "type": "private"}}}}))
    }

    /// The messages in chat `chat`, oldest first.
    pub(crate) fn messages(&self, chat: i64) -> Vec<Shown> {
        self.bot.messages.lock().unwrap().values().filter(|m| m.chat_id == chat).cloned().collect()
    }

    /// Waits until `check` holds for the messages of chat `chat` (or panics after `within`).
    pub(crate) async fn wait_for(
        &self,
        chat: i64,
        within: Duration,
        check: impl Fn(&[Shown]) -> bool,
    ) -> Vec<Shown> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let messages = self.messages(chat);
            if check(&messages) {
                return messages;
            }
            assert!(tokio::time::Instant::now() < deadline, "timed out; messages: {messages:#?}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Whether every queued update was taken (confirmed by a later offset, or handed out).
    pub(crate) async fn wait_answered(
        &self,
        query: usize,
        within: Duration,
    ) -> Vec<(String, Option<String>)> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let answered = self.bot.answered.lock().unwrap().clone();
            if answered.len() >= query {
                return answered;
            }
            assert!(tokio::time::Instant::now() < deadline, "answerCallbackQuery not called: {answered:?}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    pub(crate) fn count(&self, name: &str) -> usize {
        self.bot.calls.lock().unwrap().iter().filter(|c| *c == name).count()
    }
}

fn error(status: StatusCode, description: &str) -> (StatusCode, Json<Value>) {
    (status, Json(json!({"ok": false, "error_code": status.as_u16(), "description": description})))
}

fn ok(result: &Value) -> (StatusCode, Json<Value>) {
    (StatusCode::OK, Json(json!({"ok": true, "result": result})))
}

/// Every `callback_data` within 1–64 bytes.
fn keyboard_fits(markup: &Value) -> bool {
    markup["inline_keyboard"].as_array().is_none_or(|rows| {
        rows.iter()
            .flat_map(|r| r.as_array().cloned().unwrap_or_default())
            .all(|b| b["callback_data"].as_str().is_none_or(|d| !d.is_empty() && d.len() <= 64))
    })
}

async fn method(
    State(bot): State<Arc<Bot>>,
    Path((prefix, method)): Path<(String, String)>,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    if prefix != format!("bot{}", bot.token) {
        return error(StatusCode::UNAUTHORIZED, "Unauthorized");
    }
    bot.calls.lock().unwrap().push(method.clone());
    if bot.fail_next.load(Ordering::SeqCst) > 0 && method != "getUpdates" {
        bot.fail_next.fetch_sub(1, Ordering::SeqCst);
        return error(StatusCode::BAD_GATEWAY, "Bad Gateway");
    }
    if matches!(method.as_str(), "sendMessage" | "editMessageText")
        && bot.limit_next.load(Ordering::SeqCst) > 0
    {
        bot.limit_next.fetch_sub(1, Ordering::SeqCst);
        bot.limited.fetch_add(1, Ordering::SeqCst);
        return (
            StatusCode::TOO_MANY_REQUESTS,
            Json(json!({"ok": false, "error_code": 429, "description": "Too Many Requests: retry after 1",
                        "parameters": {"retry_after": 1}})),
        );
    }
    match method.as_str() {
        "getUpdates" => get_updates(&bot, &body).await,
        "sendMessage" => {
            let Some(chat_id) = body["chat_id"].as_i64() else {
                return error(StatusCode::BAD_REQUEST, "Bad Request: chat not found");
            };
            let text = body["text"].as_str().unwrap_or_default().to_owned();
            if text.is_empty() || text.chars().count() > 4096 {
                return error(StatusCode::BAD_REQUEST, "Bad Request: message text is empty or too long");
            }
            let markup = body.get("reply_markup").cloned().unwrap_or(Value::Null);
            if !keyboard_fits(&markup) {
                return error(StatusCode::BAD_REQUEST, "Bad Request: BUTTON_DATA_INVALID");
            }
            let message_id = {
                let mut next = bot.next_message.lock().unwrap();
                *next += 1;
                *next
            };
            bot.messages.lock().unwrap().insert(
                (chat_id, message_id),
                Shown { chat_id, message_id, text: text.clone(), markup, edits: 0 },
            );
            ok(
                &json!({"message_id": message_id, "date": 0, "chat": {"id": chat_id, "type": "private"}, "text": text}),
            )
        }
        "editMessageText" => {
            let (Some(chat_id), Some(message_id)) = (body["chat_id"].as_i64(), body["message_id"].as_i64())
            else {
                return error(StatusCode::BAD_REQUEST, "Bad Request: message to edit not found");
            };
            let markup = body.get("reply_markup").cloned().unwrap_or(Value::Null);
            if !keyboard_fits(&markup) {
                return error(StatusCode::BAD_REQUEST, "Bad Request: BUTTON_DATA_INVALID");
            }
            let mut messages = bot.messages.lock().unwrap();
            let Some(shown) = messages.get_mut(&(chat_id, message_id)) else {
                return error(StatusCode::BAD_REQUEST, "Bad Request: message to edit not found");
            };
            let text = body["text"].as_str().unwrap_or_default().to_owned();
            if shown.text == text && shown.markup == markup {
                return error(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: message is not modified: specified new message content and reply markup are exactly the same",
                );
            }
            shown.text = text;
            shown.markup = markup;
            shown.edits += 1;
            ok(&json!({"message_id": message_id, "chat": {"id": chat_id}, "text": shown.text}))
        }
        "deleteMessage" => {
            let (Some(chat_id), Some(message_id)) = (body["chat_id"].as_i64(), body["message_id"].as_i64())
            else {
                return error(StatusCode::BAD_REQUEST, "Bad Request: message to delete not found");
            };
            bot.messages.lock().unwrap().remove(&(chat_id, message_id));
            bot.deleted.lock().unwrap().push((chat_id, message_id));
            ok(&json!(true))
        }
        "answerCallbackQuery" => {
            let id = body["callback_query_id"].as_str().unwrap_or_default().to_owned();
            if body["text"].as_str().is_some_and(|t| t.chars().count() > 200) {
                return error(StatusCode::BAD_REQUEST, "Bad Request: text of 0-200 characters expected");
            }
            bot.answered.lock().unwrap().push((id, body["text"].as_str().map(str::to_owned)));
            ok(&json!(true))
        }
        other => error(StatusCode::NOT_FOUND, &format!("Not Found: method {other} not in the double")),
    }
}

async fn get_updates(bot: &Bot, body: &Value) -> (StatusCode, Json<Value>) {
    let offset = body["offset"].as_i64().unwrap_or(0);
    let timeout = Duration::from_secs(body["timeout"].as_u64().unwrap_or(0));
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let arrived = bot.arrived.notified();
        tokio::pin!(arrived);
        // Registered before the look below: an update pushed after it still wakes this poll.
        arrived.as_mut().enable();
        let pending: Vec<Value> = {
            let mut updates = bot.updates.lock().unwrap();
            // "An update is considered confirmed as soon as getUpdates is called with an offset
            // higher than its update_id."
            updates.retain(|u| u["update_id"].as_i64().unwrap_or(0) >= offset);
            updates.clone()
        };
        if !pending.is_empty() {
            bot.taken.notify_waiters();
            return ok(&Value::Array(pending));
        }
        if tokio::time::timeout_at(deadline, arrived).await.is_err() {
            return ok(&json!([]));
        }
    }
}
