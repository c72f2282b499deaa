//! Two server processes on one PostgreSQL database (`ASKUSER_TEST_POSTGRES_URL`), each running
//! the Telegram channel: exactly one holds it and posts each question once; when it stops, the
//! other takes over and resumes from what the store kept (no double posts, taps still answered).

use std::sync::Arc;
use std::time::Duration;

use askuser_store::{PostgresStore, SharedStore, State};

use crate::support::{CHAT, DATABASE, config, put, start, stats};
use crate::telegram_double::TelegramDouble;

const PATIENCE: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_post_each_question_once_and_take_over() {
    let Some(url) =
        askuser_testkit::postgres_url("fleet::two_replicas_post_each_question_once_and_take_over")
    else {
        return;
    };
    let schema = askuser_testkit::unique_schema();
    let open = || PostgresStore::builder(&url).schema(&schema).open();
    let a: Arc<dyn SharedStore> = Arc::new(open().await.unwrap());
    let b_store = open().await.unwrap();
    let b: Arc<dyn SharedStore> = Arc::new(b_store.clone());
    let telegram = TelegramDouble::start().await;
    let config = config(Some(&telegram.url), None);
    let first = start(&config, &a, None);
    let second = start(&config, &b, None);
    for n in 0..20 {
        // Asked through either replica.
        put(if n % 2 == 0 { &*a } else { &*b }, &format!("fleet-{n:02}"), DATABASE).await;
    }
    telegram.wait_for(CHAT, PATIENCE, |m| m.len() >= 20).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(telegram.count("sendMessage"), 20, "each question posted once by the fleet");
    let (posted_a, posted_b) = (stats(&first, "telegram").posted, stats(&second, "telegram").posted);
    assert_eq!(posted_a + posted_b, 20);
    assert!(posted_a == 0 || posted_b == 0, "one holder: {posted_a} and {posted_b}");
    // The holder stops; the other takes over: it answers a tap and posts what comes next.
    let (holder, standby, standby_store) =
        if posted_a > 0 { (first, second, &b) } else { (second, first, &a) };
    holder.stop().await;
    let shown = telegram.messages(CHAT);
    telegram.tap(CHAT, CHAT, shown[3].message_id, &shown[3].button("SQLite"));
    put(&**standby_store, "fleet-after", DATABASE).await;
    telegram
        .wait_for(CHAT, PATIENCE, |m| m.len() == 21 && m[3].text.contains("Answered on Telegram: SQLite"))
        .await;
    assert_eq!(telegram.count("sendMessage"), 21, "no double posts after the takeover");
    let answered = standby_store.list(&askuser_store::ListQuery::new().state(State::Answered)).await.unwrap();
    assert_eq!(answered.records.len(), 1);
    standby.stop().await;
    sqlx::query(sqlx::AssertSqlSafe(format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE")))
        .execute(b_store.pool())
        .await
        .unwrap();
}
