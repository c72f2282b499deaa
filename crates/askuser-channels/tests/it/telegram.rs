//! Telegram end to end: a real answer server and store, the real channel code, the Bot API double.

use std::sync::Arc;
use std::time::Duration;

use askuser_client::{ApiToken, HttpAnswerer};
use askuser_core::{AskContext, AskUserAnswer, AskUserResponse, Profile};
use askuser_core::{AskUserRequest, Questions};
use askuser_store::{AskedBy, ListQuery, MemoryStore, NewQuestion, SharedStore, SqliteStore, State};
use askuser_tool::{AskUser, ToolCall};

use crate::support::{API_TOKEN, CHAT, DATABASE, Server, config, put, put_extended, start, stats, temp_dir};
use crate::telegram_double::TelegramDouble;

const PATIENCE: Duration = Duration::from_secs(10);

fn memory() -> Arc<dyn SharedStore> {
    Arc::new(MemoryStore::new())
}

/// `ask --server` (its library: `HttpAnswerer` in `AskUser`) → a Telegram message with buttons →
/// a tap → the asker gets exactly the tool result; the message says where it was answered and
/// loses its buttons; the tap is acknowledged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tap_answers_the_asker_with_the_tool_result() {
    let telegram = TelegramDouble::start().await;
    let store = memory();
    let server = Server::start(&store, Profile::Reference).await;
    let channels = start(&config(Some(&telegram.url), None), &store, Some(&server.links()));
    let asker = HttpAnswerer::new(&server.url, ApiToken::new(API_TOKEN).unwrap()).unwrap();
    let ask_user = AskUser::builder().answerer(asker).build().unwrap();
    let call = ask_user.call(ToolCall::new("call_db", DATABASE), AskContext::new().with_session_id("s1"));
    let person = async {
        let shown = telegram.wait_for(CHAT, PATIENCE, |m| !m.is_empty()).await;
        let message = &shown[0];
        assert!(message.text.contains("Which database?"), "{}", message.text);
        assert!(message.text.contains("PostgreSQL — a fleet"), "descriptions shown: {}", message.text);
        assert!(message.text.contains("session s1"), "{}", message.text);
        let data = message.button("PostgreSQL");
        assert!(data.len() <= 64 && !data.contains("PostgreSQL"), "ids, not labels: {data}");
        telegram.tap(CHAT, CHAT, message.message_id, &data);
    };
    let (outcome, ()) = tokio::join!(call, person);
    assert_eq!(outcome.model_text(), Some(r#"{"Database":["PostgreSQL"]}"#), "{outcome:?}");
    let shown =
        telegram.wait_for(CHAT, PATIENCE, |m| m[0].text.contains("Answered on Telegram: PostgreSQL")).await;
    assert!(shown[0].buttons().is_empty(), "buttons removed: {:?}", shown[0].buttons());
    let answered = telegram.wait_answered(1, PATIENCE).await;
    assert_eq!(answered[0].1.as_deref(), Some("Answered ✅"));
    assert_eq!(stats(&channels, "telegram").answered, 1);
    channels.stop().await;
    server.stop().await;
}

/// Multi-select buttons toggle (✓) and Send sends; "Other…" asks for a reply (`ForceReply`) whose
/// text is the answer; the batch goes back as one response.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_select_toggles_and_other_takes_a_typed_reply() {
    let telegram = TelegramDouble::start().await;
    let store = memory();
    let channels = start(&config(Some(&telegram.url), None), &store, None);
    let args = r#"{"questions":[
        {"header":"Features","question":"Which features?","multi_select":true,
         "options":[{"label":"Search"},{"label":"Export"},{"label":"Sync"}]},
        {"header":"Region","question":"Where?","options":[{"label":"EU"},{"label":"US"}]}]}"#;
    put(&*store, "batch-1", args).await;
    let message = telegram.wait_for(CHAT, PATIENCE, |m| !m.is_empty()).await.remove(0);
    let id = message.message_id;
    telegram.tap(CHAT, CHAT, id, &message.button("Search"));
    telegram.tap(CHAT, CHAT, id, &message.button("Sync"));
    telegram.tap(CHAT, CHAT, id, &message.button("Search"));
    // Search ticked, then unticked: only Sync stays ticked.
    telegram
        .wait_for(CHAT, PATIENCE, |m| {
            let ticked: Vec<String> =
                m[0].buttons().into_iter().map(|(t, _)| t).filter(|t| t.starts_with('✓')).collect();
            ticked == ["✓ Features: Sync"]
        })
        .await;
    // Send before Region is answered: told so, nothing committed.
    telegram.tap(CHAT, CHAT, id, &message.button("Send"));
    let answered = telegram.wait_answered(4, PATIENCE).await;
    assert!(answered[3].1.as_deref().unwrap().contains("Region"), "{answered:?}");
    assert_eq!(store.get("batch-1").await.unwrap().unwrap().state(), State::Pending);
    // Other… for Region: a ForceReply prompt, answered by a reply.
    telegram.tap(CHAT, CHAT, id, &message.button("Region: Other"));
    let prompt = telegram.wait_for(CHAT, PATIENCE, |m| m.len() == 2).await.remove(1);
    assert_eq!(prompt.markup["force_reply"], true, "{prompt:?}");
    assert!(prompt.text.contains("Region"), "{}", prompt.text);
    telegram.reply(CHAT, prompt.message_id, "Asia, please");
    telegram.wait_for(CHAT, PATIENCE, |m| m[0].buttons().iter().any(|(t, _)| t.contains("Asia"))).await;
    // Taken: the prompt and the reply are deleted, and nothing is said besides (issue 35.11: three
    // messages were left behind).
    let left = telegram.wait_for(CHAT, PATIENCE, |m| m.len() == 1).await;
    assert_eq!(left[0].message_id, id, "{left:?}");
    let deleted = telegram.bot.deleted.lock().unwrap().clone();
    assert!(deleted.contains(&(CHAT, prompt.message_id)), "{deleted:?}");
    assert_eq!(deleted.len(), 2, "the prompt and the reply: {deleted:?}");
    telegram.tap(CHAT, CHAT, id, &message.button("Send"));
    let record = tokio::time::timeout(PATIENCE, store.watch("batch-1")).await.unwrap().unwrap();
    assert_eq!(
        record.result().unwrap().unwrap().text(),
        r#"{"Features":["Sync"],"Region":["Asia, please"]}"#
    );
    telegram.wait_for(CHAT, PATIENCE, |m| m[0].text.contains("Answered on Telegram")).await;
    channels.stop().await;
}

/// A tap from a chat not in `chat_ids` answers nothing (and is counted, its content not logged);
/// Decline from the right chat declines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strangers_tap_is_ignored() {
    let telegram = TelegramDouble::start().await;
    let store = memory();
    let channels = start(&config(Some(&telegram.url), None), &store, None);
    put(&*store, "q-stranger", DATABASE).await;
    let message = telegram.wait_for(CHAT, PATIENCE, |m| !m.is_empty()).await.remove(0);
    telegram.tap(777, 777, message.message_id, &message.button("PostgreSQL"));
    telegram.wait_answered(1, PATIENCE).await;
    assert_eq!(stats(&channels, "telegram").ignored, 1);
    assert_eq!(store.get("q-stranger").await.unwrap().unwrap().state(), State::Pending);
    telegram.tap(CHAT, CHAT, message.message_id, "forged:data");
    telegram.wait_answered(2, PATIENCE).await;
    assert_eq!(store.get("q-stranger").await.unwrap().unwrap().state(), State::Pending);
    telegram.tap(CHAT, CHAT, message.message_id, &message.button("Decline"));
    let record = tokio::time::timeout(PATIENCE, store.watch("q-stranger")).await.unwrap().unwrap();
    assert_eq!(record.state(), State::Declined);
    telegram.wait_for(CHAT, PATIENCE, |m| m[0].text.contains("Declined on Telegram")).await;
    channels.stop().await;
}

/// A question answered elsewhere (the page, the API) is edited at once; a tap on its old buttons
/// answers nothing and says so. Expiry and withdrawal retire messages too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settled_elsewhere_retires_the_message_and_a_stale_tap_says_so() {
    let telegram = TelegramDouble::start().await;
    let store = memory();
    // Asked before the channel starts: posted in the order asked (then by id).
    put(&*store, "q-1-page", DATABASE).await;
    put(&*store, "q-2-gone", DATABASE).await;
    put(&*store, "q-3-late", DATABASE).await;
    let channels = start(&config(Some(&telegram.url), None), &store, None);
    let shown = telegram.wait_for(CHAT, PATIENCE, |m| m.len() == 3).await;
    let started = tokio::time::Instant::now();
    store
        .commit_answer(
            "q-1-page",
            &AskUserResponse::answered(vec![AskUserAnswer::picked("Database", ["SQLite"])]),
        )
        .await
        .unwrap();
    store.cancel("q-2-gone").await.unwrap();
    store.expire("q-3-late").await.unwrap();
    let shown_after = telegram.wait_for(CHAT, PATIENCE, |m| m.iter().all(|m| m.buttons().is_empty())).await;
    assert!(started.elapsed() < Duration::from_secs(1), "edited within a second: {:?}", started.elapsed());
    let texts: Vec<&str> = shown_after.iter().map(|m| m.text.as_str()).collect();
    assert!(texts[0].ends_with("✅ Answered: SQLite"), "{texts:?}");
    assert!(texts[1].contains("Withdrawn"), "{texts:?}");
    assert!(texts[2].contains("Expired"), "{texts:?}");
    telegram.tap(CHAT, CHAT, shown[0].message_id, &shown[0].button("PostgreSQL"));
    let answered = telegram.wait_answered(1, PATIENCE).await;
    assert!(answered[0].1.as_deref().unwrap().contains("no longer waiting"), "{answered:?}");
    let record = store.get("q-1-page").await.unwrap().unwrap();
    assert_eq!(
        record.result().unwrap().unwrap().text(),
        r#"{"Database":["SQLite"]}"#,
        "the first answer stands"
    );
    channels.stop().await;
}

/// A secret question never goes through the chat: the message links to the page (the server has
/// a public URL) and offers only Decline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_question_links_to_its_page() {
    let telegram = TelegramDouble::start().await;
    let store = memory();
    let server = Server::start(&store, Profile::Extended).await;
    let channels = start(&config(Some(&telegram.url), None), &store, Some(&server.links()));
    let args = r#"{"questions":[{"kind":"secret","header":"Token","question":"Deploy token?",
        "secret_name":"DEPLOY_TOKEN","purpose":"To deploy"}]}"#;
    put_extended(&*store, "q-secret", args).await;
    let message = telegram.wait_for(CHAT, PATIENCE, |m| !m.is_empty()).await.remove(0);
    assert!(message.text.contains("answered on its page"), "{}", message.text);
    let buttons = message.markup["inline_keyboard"].to_string();
    assert!(buttons.contains(&format!("{}/q/", server.url)), "{buttons}");
    assert_eq!(message.data().len(), 1, "Decline only: {buttons}");
    channels.stop().await;
    server.stop().await;
}

/// Rate limits (429 with `retry_after`) and an unreachable service (502) are retried: every
/// question is posted exactly once, none lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_and_faults_are_retried_and_nothing_is_lost() {
    let telegram = TelegramDouble::start().await;
    telegram.bot.limit_next.store(2, std::sync::atomic::Ordering::SeqCst);
    telegram.bot.fail_next.store(3, std::sync::atomic::Ordering::SeqCst);
    let store = memory();
    let channels = start(&config(Some(&telegram.url), None), &store, None);
    for n in 0..5 {
        put(&*store, &format!("q-limit-{n}"), DATABASE).await;
    }
    let shown = telegram.wait_for(CHAT, PATIENCE, |m| m.len() == 5).await;
    assert_eq!(telegram.bot.limited.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert_eq!(telegram.count("sendMessage"), 5 + 2 + 3, "each refused send tried again, once each");
    // An answer while the service fails is still committed, and the message still retired.
    telegram.bot.fail_next.store(2, std::sync::atomic::Ordering::SeqCst);
    telegram.tap(CHAT, CHAT, shown[4].message_id, &shown[4].button("SQLite"));
    telegram.wait_for(CHAT, PATIENCE, |m| m[4].text.contains("Answered on Telegram: SQLite")).await;
    let answered = store.list(&ListQuery::new().state(State::Answered)).await.unwrap().records;
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(answered[0].result().unwrap().unwrap().text(), r#"{"Database":["SQLite"]}"#);
    assert!(stats(&channels, "telegram").retries >= 7, "{:?}", stats(&channels, "telegram"));
    channels.stop().await;
}

/// A restart resumes where it was: no double posts (the message ids are in the store), a question
/// settled while it was down is retired, a tap made while it was down is taken (the offset is in
/// the store, so a tap handled before is not handled again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_resumes_without_double_posts() {
    let telegram = TelegramDouble::start().await;
    let dir = temp_dir("restart");
    let store: Arc<dyn SharedStore> = Arc::new(SqliteStore::open(dir.join("pending.db")).await.unwrap());
    let config = config(Some(&telegram.url), None);
    let channels = start(&config, &store, None);
    let multi = r#"{"questions":[{"header":"Features","question":"Which?","multi_select":true,
        "options":[{"label":"Search"},{"label":"Export"}]}]}"#;
    put(&*store, "r-1", DATABASE).await;
    put(&*store, "r-2", DATABASE).await;
    put(&*store, "r-3", multi).await;
    let shown = telegram.wait_for(CHAT, PATIENCE, |m| m.len() == 3).await;
    telegram.tap(CHAT, CHAT, shown[2].message_id, &shown[2].button("Export"));
    telegram
        .wait_for(CHAT, PATIENCE, |m| m[2].buttons().iter().any(|(t, _)| t.starts_with("✓ Export")))
        .await;
    // Acknowledged: the offset past the tap was kept before the acknowledgement.
    telegram.wait_answered(1, PATIENCE).await;
    channels.stop().await;

    // While it is down: one question is answered on the page, a tap waits at Telegram.
    store
        .commit_answer("r-1", &AskUserResponse::answered(vec![AskUserAnswer::picked("Database", ["SQLite"])]))
        .await
        .unwrap();
    telegram.tap(CHAT, CHAT, shown[1].message_id, &shown[1].button("PostgreSQL"));
    put(&*store, "r-4", DATABASE).await;

    // A new process (a new holder: it takes over once the old hold lapses).
    let reopened: Arc<dyn SharedStore> = Arc::new(SqliteStore::open(dir.join("pending.db")).await.unwrap());
    let channels = start(&config, &reopened, None);
    let record = tokio::time::timeout(PATIENCE, reopened.watch("r-2")).await.unwrap().unwrap();
    assert_eq!(record.result().unwrap().unwrap().text(), r#"{"Database":["PostgreSQL"]}"#);
    let after = telegram
        .wait_for(CHAT, PATIENCE, |m| {
            m.len() == 4
                && m[0].text.contains("Answered: SQLite")
                && m[1].text.contains("Answered on Telegram")
        })
        .await;
    assert_eq!(telegram.count("sendMessage"), 4, "only the new question was posted");
    assert!(
        after[2].buttons().iter().any(|(t, _)| t.starts_with("✓ Export")),
        "the tick was kept and not toggled again"
    );
    telegram.tap(CHAT, CHAT, after[2].message_id, &after[2].button("Send"));
    let record = tokio::time::timeout(PATIENCE, reopened.watch("r-3")).await.unwrap().unwrap();
    assert_eq!(record.result().unwrap().unwrap().text(), r#"{"Features":["Export"]}"#);
    channels.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// 1,000 pending questions, some asked before the channel started and the rest while it runs:
/// each posted exactly once, none lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_questions_are_each_posted_once() {
    let telegram = TelegramDouble::start().await;
    let store = memory();
    for n in 0..400 {
        put(&*store, &format!("many-{n:04}"), DATABASE).await;
    }
    let channels = start(&config(Some(&telegram.url), None), &store, None);
    for n in 400..1000 {
        put(&*store, &format!("many-{n:04}"), DATABASE).await;
    }
    let shown = telegram.wait_for(CHAT, Duration::from_mins(2), |m| m.len() >= 1000).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(telegram.count("sendMessage"), 1000);
    let mut keys: Vec<String> = shown.iter().map(|m| m.button("Decline")).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 1000, "a thousand different questions");
    assert_eq!(store.values("channel.telegram.posts").await.unwrap().len(), 1000);
    assert_eq!(stats(&channels, "telegram").posted, 1000);
    channels.stop().await;
}

/// What the person sees, rendered from the message the bot sent (its text, then its keyboard a row
/// a line): docs/channels.md shows exactly this.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_message_is_the_one_sent() {
    let telegram = TelegramDouble::start().await;
    let store = memory();
    let server = Server::start(&store, Profile::Reference).await;
    let channels = start(&config(Some(&telegram.url), None), &store, Some(&server.links()));
    let request = AskUserRequest::with_id("q-doc", Questions::from_json(DATABASE).unwrap());
    let question = NewQuestion::new(request, Duration::from_mins(10))
        .session_id("s1")
        .asked_by(AskedBy::new("claude-code 1.2 in ~/src/app").unwrap());
    store.put(question).await.unwrap();
    let message = telegram.wait_for(CHAT, PATIENCE, |m| !m.is_empty()).await.remove(0);
    let rendered = |message: &crate::telegram_double::Shown| {
        let rows = message.markup["inline_keyboard"].as_array().cloned().unwrap_or_default();
        let keyboard: Vec<String> = rows
            .iter()
            .map(|row| {
                let buttons: Vec<String> = row
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| format!("[ {} ]", b["text"].as_str().unwrap()))
                    .collect();
                buttons.join(" ")
            })
            .collect();
        if keyboard.is_empty() {
            message.text.clone()
        } else {
            format!("{}\n\n{}", message.text, keyboard.join("\n"))
        }
    };
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/channels.md")).unwrap();
    // The deadline's clock time is the run's own: the docs show it at 18:30.
    let waiting = rendered(&message);
    let waiting = match waiting.find(", by ") {
        Some(at) if waiting[at..].starts_with(", by ") && waiting.get(at + 10..at + 14) == Some(" UTC") => {
            format!("{}, by 18:30{}", &waiting[..at], &waiting[at + 10..])
        }
        _ => panic!("no deadline in {waiting}"),
    };
    assert!(docs.contains(&format!("```text\n{waiting}\n```")), "docs/channels.md should show:\n{waiting}");
    telegram.tap(CHAT, CHAT, message.message_id, &message.button("PostgreSQL"));
    let settled = telegram.wait_for(CHAT, PATIENCE, |m| m[0].buttons().is_empty()).await.remove(0);
    let settled = rendered(&settled);
    assert!(docs.contains(&format!("```text\n{settled}\n```")), "docs/channels.md should show:\n{settled}");
    channels.stop().await;
    server.stop().await;
}

/// `[telegram]` posting to a group (a negative chat id) and to a private chat, `extra` added.
fn group_config(url: &str, extra: &str) -> askuser_channels::ChannelsConfig {
    let dir = crate::support::temp_dir("group-config");
    crate::support::token_file(&dir, "telegram.token", crate::telegram_double::TOKEN);
    let text = format!(
        "[telegram]\nbot_token_file = \"telegram.token\"\nchat_ids = [{GROUP}]\napi_url = \"{url}\"\n\
         poll_timeout_seconds = 1\n{extra}"
    );
    let config = askuser_channels::ChannelsConfig::from_toml(&text, &dir, "test.toml").unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    config.retry_base(Duration::from_millis(20)).hold(Duration::from_millis(300))
}

/// A Telegram group: everyone in it reads the messages.
const GROUP: i64 = -1_001_234;

/// Issue 36.2: a page link opens the batch to whoever has it, past the check on who taps, so a
/// message posted where people outside the allowed list read it (a group) carries none, unless
/// the operator opts in (`page_links_in_groups`); a secret question's link never goes there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_gets_no_page_link_unless_opted_in_and_never_for_a_secret() {
    let args = r#"{"questions":[{"kind":"secret","header":"Token","question":"Deploy token?",
        "secret_name":"DEPLOY_TOKEN","purpose":"To deploy"}]}"#;
    for (extra, plain_link) in [("", false), ("page_links_in_groups = true\n", true)] {
        let telegram = TelegramDouble::start().await;
        let store = memory();
        let server = Server::start(&store, Profile::Extended).await;
        let channels = start(&group_config(&telegram.url, extra), &store, Some(&server.links()));
        put(&*store, "q-group", DATABASE).await;
        put_extended(&*store, "q-group-secret", args).await;
        let shown = telegram.wait_for(GROUP, PATIENCE, |m| m.len() == 2).await;
        let buttons = |secret: bool| {
            let message = shown.iter().find(|m| m.text.contains("Deploy token?") == secret).unwrap();
            message.markup["inline_keyboard"].to_string()
        };
        let page = format!("{}/q/", server.url);
        assert_eq!(buttons(false).contains(&page), plain_link, "{extra:?}: {}", buttons(false));
        assert!(!buttons(true).contains(&page), "{extra:?}: a secret's link in a group: {}", buttons(true));
        let secret = shown.iter().find(|m| m.text.contains("Deploy token?")).unwrap();
        assert!(
            secret.text.contains("its page link is not posted where others can read it"),
            "{}",
            secret.text
        );
        channels.stop().await;
        server.stop().await;
    }
}

/// Issue 36.9: a typed answer is capped at the page's 2,000 characters (4,000 were stored from
/// Telegram); a longer reply is refused with a message that says so, and a shorter one answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_answer_past_the_pages_cap_is_refused_with_a_reply_that_says_so() {
    let telegram = TelegramDouble::start().await;
    let store = memory();
    let channels = start(&config(Some(&telegram.url), None), &store, None);
    put(&*store, "q-long", DATABASE).await;
    let message = telegram.wait_for(CHAT, PATIENCE, |m| !m.is_empty()).await.remove(0);
    telegram.tap(CHAT, CHAT, message.message_id, &message.button("Other"));
    let prompt = telegram.wait_for(CHAT, PATIENCE, |m| m.len() == 2).await.remove(1);
    telegram.reply(CHAT, prompt.message_id, &"x".repeat(askuser_core::MAX_CUSTOM_CHARS + 1));
    let told = telegram
        .wait_for(CHAT, PATIENCE, |m| m.iter().any(|m| m.text.contains("at most 2000 are taken")))
        .await;
    assert!(told.iter().any(|m| m.text.contains("2001 characters long")), "{told:?}");
    assert_eq!(store.get("q-long").await.unwrap().unwrap().state(), State::Pending);
    telegram.reply(CHAT, prompt.message_id, &"y".repeat(askuser_core::MAX_CUSTOM_CHARS));
    let record = tokio::time::timeout(PATIENCE, store.watch("q-long")).await.unwrap().unwrap();
    assert_eq!(record.state(), State::Answered);
    channels.stop().await;
}

/// A reply typed to a batch's own message answers the whole batch by the typed-answer grammar
/// (docs/typed-answers.md): one that misses a question is told exactly which, in reply, and
/// answers nothing; the whole reply answers every question at once. A plain message in a chat
/// showing one batch is a reply to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_typed_to_the_batch_message_answers_the_whole_batch() {
    let telegram = TelegramDouble::start().await;
    let store = memory();
    let channels = start(&config(Some(&telegram.url), None), &store, None);
    let args = r#"{"questions":[
        {"header":"Database","question":"Which database?","options":[{"label":"SQLite"},{"label":"PostgreSQL"}]},
        {"header":"Features","question":"Which features?","multi_select":true,
         "options":[{"label":"Auth"},{"label":"Billing"},{"label":"Search"}]}]}"#;
    put(&*store, "typed-1", args).await;
    let message = telegram.wait_for(CHAT, PATIENCE, |m| !m.is_empty()).await.remove(0);
    telegram.reply(CHAT, message.message_id, "Database: postgres");
    let told = telegram.wait_for(CHAT, PATIENCE, |m| m.len() == 2).await.remove(1);
    assert_eq!(told.text, "Not taken, nothing was answered: No answer for Features.");
    assert_eq!(store.get("typed-1").await.unwrap().unwrap().state(), State::Pending);
    telegram.reply(CHAT, message.message_id, "database: postgres\nFeatures: 1, 3");
    let record = tokio::time::timeout(PATIENCE, store.watch("typed-1")).await.unwrap().unwrap();
    assert_eq!(
        record.result().unwrap().unwrap().text(),
        r#"{"Database":["PostgreSQL"],"Features":["Auth","Search"]}"#
    );
    telegram.wait_for(CHAT, PATIENCE, |m| m[0].text.contains("Answered on Telegram")).await;

    // A plain message, no reply: the one batch the chat shows.
    put(&*store, "typed-2", DATABASE).await;
    telegram
        .wait_for(CHAT, PATIENCE, |m| {
            m.iter().any(|m| {
                m.text.contains("Which database") && m.edits == 0 && m.message_id != message.message_id
            })
        })
        .await;
    telegram.push(serde_json::json!({"message": {"message_id": 9999, "date": 0,
        "chat": {"id": CHAT, "type": "private"}, "from": {"id": CHAT, "is_bot": false, "first_name": "P"},
        "text": "2"}}));
    let record = tokio::time::timeout(PATIENCE, store.watch("typed-2")).await.unwrap().unwrap();
    assert_eq!(record.state(), State::Answered);
    channels.stop().await;
}
