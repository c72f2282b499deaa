//! Slack end to end: Socket Mode and the Web API double, the real channel code, a real store.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::Value;

use askuser_client::{ApiToken, HttpAnswerer};
use askuser_core::{AskContext, Profile};
use askuser_store::{MemoryStore, SharedStore, State};
use askuser_tool::{AskUser, ToolCall};

use crate::slack_double::{SlackDouble, USER};
use crate::support::{API_TOKEN, DATABASE, Server, config, put, start, stats};

const PATIENCE: Duration = Duration::from_secs(10);

/// A Block Kit message per batch; a `block_actions` tap by an allowed user answers it; every
/// envelope is acknowledged; the message is updated (buttons gone); a stranger's tap is ignored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_actions_tap_answers_and_every_envelope_is_acknowledged() {
    let slack = SlackDouble::start().await;
    let store: Arc<dyn SharedStore> = Arc::new(MemoryStore::new());
    let channels = start(&config(None, Some(&slack.url)), &store, None);
    put(&*store, "s-1", DATABASE).await;
    let message = slack.wait_for(PATIENCE, |m| !m.is_empty()).await.remove(0);
    assert!(message.text.contains("Which database?"), "{}", message.text);
    assert_eq!(message.blocks[0]["text"]["type"], "plain_text", "nothing to escape");
    let stranger = slack.tap("U999STRANGER", &message.ts, &message.button("PostgreSQL")).await;
    let tap = slack.tap(USER, &message.ts, &message.button("PostgreSQL")).await;
    let record = tokio::time::timeout(PATIENCE, store.watch("s-1")).await.unwrap().unwrap();
    assert_eq!(record.result().unwrap().unwrap().text(), r#"{"Database":["PostgreSQL"]}"#);
    let shown = slack.wait_for(PATIENCE, |m| m[0].text.contains("Answered on Slack: PostgreSQL")).await;
    assert!(shown[0].buttons().is_empty(), "{:?}", shown[0].blocks);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let acked = slack.slack.acked.lock().unwrap().clone();
        if acked.contains(&stranger) && acked.contains(&tap) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "not acknowledged: {acked:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(stats(&channels, "slack").ignored, 1);
    // A tap on the retired message's old button answers nothing and says so, to that user only.
    slack.tap(USER, &message.ts, &message.button("SQLite")).await;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while slack.slack.ephemeral.lock().unwrap().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "no ephemeral reply");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (user, text) = slack.slack.ephemeral.lock().unwrap()[0].clone();
    assert_eq!(user, USER);
    assert!(text.contains("no longer waiting"), "{text}");
    assert_eq!(store.get("s-1").await.unwrap().unwrap().state(), State::Answered);
    channels.stop().await;
}

/// HTTP 429 with `Retry-After` is waited out; nothing is lost or posted twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_are_waited_out() {
    let slack = SlackDouble::start().await;
    slack.slack.limit_next.store(2, Ordering::SeqCst);
    let store: Arc<dyn SharedStore> = Arc::new(MemoryStore::new());
    let channels = start(&config(None, Some(&slack.url)), &store, None);
    for n in 0..3 {
        put(&*store, &format!("s-limit-{n}"), DATABASE).await;
    }
    slack.wait_for(PATIENCE, |m| m.len() == 3).await;
    assert_eq!(slack.slack.limited.load(Ordering::SeqCst), 2);
    assert_eq!(slack.count("chat.postMessage"), 5);
    assert!(stats(&channels, "slack").retries >= 2);
    channels.stop().await;
}

/// The recommended option's button is `primary`; Decline is `danger` and asks to confirm, as the
/// page does; the message says by when to answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_recommended_option_stands_out_and_decline_asks_to_confirm() {
    let slack = SlackDouble::start().await;
    let store: Arc<dyn SharedStore> = Arc::new(MemoryStore::new());
    let channels = start(&config(None, Some(&slack.url)), &store, None);
    let args = r#"{"questions":[{"header":"Database","question":"Which database?",
        "options":[{"label":"PostgreSQL (Recommended)"},{"label":"SQLite"}]}]}"#;
    put(&*store, "s-look", args).await;
    let message = slack.wait_for(PATIENCE, |m| !m.is_empty()).await.remove(0);
    let buttons: Vec<Value> = message
        .blocks
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "actions")
        .flat_map(|b| b["elements"].as_array().unwrap().clone())
        .collect();
    let by_text = |text: &str| {
        buttons.iter().find(|b| b["text"]["text"].as_str().unwrap().starts_with(text)).unwrap().clone()
    };
    assert_eq!(by_text("PostgreSQL")["style"], "primary", "{buttons:?}");
    assert!(by_text("SQLite").get("style").is_none(), "{buttons:?}");
    let decline = by_text("Decline");
    assert_eq!(decline["style"], "danger");
    assert_eq!(decline["confirm"]["confirm"]["text"], "Yes, decline", "{decline}");
    assert!(message.text.contains("⏳ Answer within"), "{}", message.text);
    channels.stop().await;
}

/// "Other…" opens a modal from the tap's `trigger_id`; its submission is the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_opens_a_modal_whose_submission_answers() {
    let slack = SlackDouble::start().await;
    let store: Arc<dyn SharedStore> = Arc::new(MemoryStore::new());
    let channels = start(&config(None, Some(&slack.url)), &store, None);
    put(&*store, "s-other", DATABASE).await;
    let message = slack.wait_for(PATIENCE, |m| !m.is_empty()).await.remove(0);
    slack.tap(USER, &message.ts, &message.button("Other")).await;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let view = loop {
        if let Some(view) = slack.slack.views.lock().unwrap().first().cloned() {
            break view;
        }
        assert!(tokio::time::Instant::now() < deadline, "no modal opened");
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    // The question is shown in the modal, above the box.
    assert_eq!(view["blocks"][0]["text"]["text"], "Which database?", "{view}");
    assert_eq!(view["blocks"][1]["label"]["text"], "Database", "{view}");
    // Someone else's submission of the same form answers nothing.
    slack.submit("U999STRANGER", &view, "MySQL").await;
    slack.submit(USER, &view, "DuckDB, embedded").await;
    let record = tokio::time::timeout(PATIENCE, store.watch("s-other")).await.unwrap().unwrap();
    assert_eq!(record.result().unwrap().unwrap().text(), r#"{"Database":["DuckDB, embedded"]}"#);
    slack.wait_for(PATIENCE, |m| m[0].text.contains("Answered on Slack: “DuckDB, embedded”")).await;
    assert_eq!(stats(&channels, "slack").ignored, 1);
    channels.stop().await;
}

/// `ask --server` (its library: `HttpAnswerer` in `AskUser`) → a Slack message → a `block_actions`
/// tap → the asker gets exactly the tool result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tap_answers_the_asker_with_the_tool_result() {
    let slack = SlackDouble::start().await;
    let store: Arc<dyn SharedStore> = Arc::new(MemoryStore::new());
    let server = Server::start(&store, Profile::Reference).await;
    let channels = start(&config(None, Some(&slack.url)), &store, Some(&server.links()));
    let asker = HttpAnswerer::new(&server.url, ApiToken::new(API_TOKEN).unwrap()).unwrap();
    let ask_user = AskUser::builder().answerer(asker).build().unwrap();
    let call = ask_user.call(ToolCall::new("call_slack", DATABASE), AskContext::new());
    let person = async {
        let message = slack.wait_for(PATIENCE, |m| !m.is_empty()).await.remove(0);
        slack.tap(USER, &message.ts, &message.button("SQLite")).await;
    };
    let (outcome, ()) = tokio::join!(call, person);
    assert_eq!(outcome.model_text(), Some(r#"{"Database":["SQLite"]}"#), "{outcome:?}");
    slack.wait_for(PATIENCE, |m| m[0].text.contains("Answered on Slack: SQLite")).await;
    channels.stop().await;
    server.stop().await;
}

/// Slack asks for a reconnection (and the socket goes): the channel opens a new connection and
/// still takes taps; nothing is posted twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disconnect_is_followed_by_a_new_connection() {
    let slack = SlackDouble::start().await;
    let store: Arc<dyn SharedStore> = Arc::new(MemoryStore::new());
    let channels = start(&config(None, Some(&slack.url)), &store, None);
    put(&*store, "s-reconnect", DATABASE).await;
    let message = slack.wait_for(PATIENCE, |m| !m.is_empty()).await.remove(0);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while slack.slack.connections.load(Ordering::SeqCst) < 1 {
        assert!(tokio::time::Instant::now() < deadline, "never connected");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    slack.disconnect();
    while slack.slack.connections.load(Ordering::SeqCst) < 2 {
        assert!(tokio::time::Instant::now() < deadline, "did not reconnect");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    slack.tap(USER, &message.ts, &message.button("PostgreSQL")).await;
    let record = tokio::time::timeout(PATIENCE, store.watch("s-reconnect")).await.unwrap().unwrap();
    assert_eq!(record.state(), State::Answered);
    assert_eq!(slack.count("chat.postMessage"), 1);
    assert_eq!(slack.count("apps.connections.open"), 2);
    channels.stop().await;
}

/// Issue 36.4: Slack reads a message's top-level `text` (what phone notifications show) as
/// mrkdwn, so a question's `<!channel>` pinged the channel and `<https://evil|Click>` was a link:
/// `&`, `<` and `>` are escaped there (the blocks are plain text).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_text_is_escaped_in_slacks_mrkdwn_text() {
    let slack = SlackDouble::start().await;
    let store: Arc<dyn SharedStore> = Arc::new(MemoryStore::new());
    let channels = start(&config(None, Some(&slack.url)), &store, None);
    let args = r#"{"questions":[{"header":"Ping","question":"<!channel> see <https://evil.example|Click> & go",
        "options":[{"label":"<!here>"},{"label":"B & C"}]}]}"#;
    put(&*store, "q-mrkdwn", args).await;
    let message = slack.wait_for(PATIENCE, |m| !m.is_empty()).await.remove(0);
    assert!(!message.text.contains('<') && !message.text.contains('>'), "{}", message.text);
    assert!(
        message.text.contains("&lt;!channel&gt; see &lt;https://evil.example|Click&gt; &amp; go"),
        "{}",
        message.text
    );
    assert!(message.text.contains("&lt;!here&gt;") && message.text.contains("B &amp; C"), "{}", message.text);
    channels.stop().await;
}

/// A reply in a batch's thread answers the whole batch by the typed-answer grammar: one that
/// misses a question is told so, to that user alone in the thread, and answers nothing; a
/// stranger's reply answers nothing; the whole reply (`&` as Slack escapes it) answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_in_the_thread_answers_the_whole_batch() {
    let slack = SlackDouble::start().await;
    let store: Arc<dyn SharedStore> = Arc::new(MemoryStore::new());
    let channels = start(&config(None, Some(&slack.url)), &store, None);
    let args = r#"{"questions":[
        {"header":"Database","question":"Which database?","options":[{"label":"SQLite"},{"label":"PostgreSQL"}]},
        {"header":"Notes","question":"Anything else?","options":[{"label":"None"},{"label":"Later"}]}]}"#;
    put(&*store, "thread-1", args).await;
    let message = slack.wait_for(PATIENCE, |m| !m.is_empty()).await.remove(0);
    slack.thread_reply("U999STRANGER", &message.ts, "Database: 1\nNotes: 1").await;
    slack.thread_reply(USER, &message.ts, "Database: sqlite").await;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while slack.slack.ephemeral.lock().unwrap().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "no ephemeral reply");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (user, text) = slack.slack.ephemeral.lock().unwrap()[0].clone();
    assert_eq!(
        (user.as_str(), text.as_str()),
        (USER, "Not taken, nothing was answered: No answer for Notes.")
    );
    assert_eq!(store.get("thread-1").await.unwrap().unwrap().state(), State::Pending);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while stats(&channels, "slack").ignored != 1 {
        assert!(tokio::time::Instant::now() < deadline, "the stranger's reply is not counted as ignored");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    slack.thread_reply(USER, &message.ts, "Database: PostgreSQL\nNotes: Other: Q&A <first>").await;
    let record = tokio::time::timeout(PATIENCE, store.watch("thread-1")).await.unwrap().unwrap();
    assert_eq!(
        record.result().unwrap().unwrap().text(),
        r#"{"Database":["PostgreSQL"],"Notes":["Q&A <first>"]}"#
    );
    channels.stop().await;
}
