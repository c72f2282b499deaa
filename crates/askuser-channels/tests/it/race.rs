//! The first answer wins on every surface: Telegram, Slack and the page's API answer one batch at
//! once; exactly one commits, and every message says what became of it.

use std::sync::Arc;
use std::time::Duration;

use askuser_core::Profile;
use askuser_store::{MemoryStore, SharedStore, State};

use crate::slack_double::{SlackDouble, USER};
use crate::support::{API_TOKEN, CHAT, DATABASE, Server, config, put, start};
use crate::telegram_double::TelegramDouble;

const PATIENCE: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_surfaces_answer_at_once_and_exactly_one_wins() {
    let telegram = TelegramDouble::start().await;
    let slack = SlackDouble::start().await;
    let store: Arc<dyn SharedStore> = Arc::new(MemoryStore::new());
    let server = Server::start(&store, Profile::Reference).await;
    let channels = start(&config(Some(&telegram.url), Some(&slack.url)), &store, Some(&server.links()));
    let http = reqwest::Client::new();
    for round in 0..10 {
        let id = format!("race-{round}");
        put(&*store, &id, DATABASE).await;
        let on_telegram = telegram.wait_for(CHAT, PATIENCE, |m| m.len() > round).await.remove(round);
        let on_slack = slack.wait_for(PATIENCE, |m| m.len() > round).await.remove(round);
        let page = http
            .post(format!("{}/v1/questions/{id}/answer", server.url))
            .bearer_auth(API_TOKEN)
            .json(&serde_json::json!({"answers": [{"header": "Database", "selected": ["SQLite"]}]}))
            .send();
        let slack_value = on_slack.button("PostgreSQL");
        telegram.tap(CHAT, CHAT, on_telegram.message_id, &on_telegram.button("PostgreSQL"));
        let (page, _) = tokio::join!(page, slack.tap(USER, &on_slack.ts, &slack_value));
        let page_won = page.unwrap().status().is_success();
        let record = tokio::time::timeout(PATIENCE, store.watch(&id)).await.unwrap().unwrap();
        assert_eq!(record.state(), State::Answered);
        let winner = record.result().unwrap().unwrap().text().to_owned();
        assert_eq!(page_won, winner == r#"{"Database":["SQLite"]}"#, "{round}: {winner}");
        // Every message retired, all saying the same answer.
        let summary = if page_won { "SQLite" } else { "PostgreSQL" };
        telegram
            .wait_for(CHAT, PATIENCE, |m| {
                m[round].buttons().is_empty() && m[round].text.contains(&format!(": {summary}"))
            })
            .await;
        slack
            .wait_for(PATIENCE, |m| {
                m[round].buttons().is_empty() && m[round].text.contains(&format!(": {summary}"))
            })
            .await;
    }
    channels.stop().await;
    server.stop().await;
}
