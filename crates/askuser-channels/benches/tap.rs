//! `cargo bench -p askuser-channels --bench tap`: how long a tap takes from the moment its update
//! arrives at the Telegram Bot API (the test double, on loopback) to the moment the waiting asker
//! has the answer (`PendingStore::watch` resolves), through the real channel: the long poll that
//! delivers the update, the key lookup, the tally, `check_response` and the store's commit. The
//! target is a p50 within 50 ms. Runs on a SQLite store (the embedded default) and in memory.

use std::sync::Arc;
use std::time::{Duration, Instant};

use askuser_channels::{Channels, ChannelsConfig};
use askuser_core::{AskUserRequest, Questions};
use askuser_store::{MemoryStore, NewQuestion, SharedStore, SqliteStore};

#[path = "../tests/it/telegram_double.rs"]
#[expect(dead_code, reason = "the bench drives only part of the tests' double")]
mod telegram_double;

use telegram_double::{TOKEN, TelegramDouble};

const CHAT: i64 = 42;
const ROUNDS: usize = 200;
const ARGS: &str = r#"{"questions":[{"header":"Database","question":"Which database?",
    "options":[{"label":"PostgreSQL"},{"label":"SQLite"}]}]}"#;

fn config(url: &str, dir: &std::path::Path) -> ChannelsConfig {
    use std::os::unix::fs::PermissionsExt as _;
    let token = dir.join("telegram.token");
    std::fs::write(&token, TOKEN).unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    let text = format!(
        "[telegram]\nbot_token_file = \"telegram.token\"\nchat_ids = [{CHAT}]\napi_url = \"{url}\"\npoll_timeout_seconds = 10\n"
    );
    ChannelsConfig::from_toml(&text, dir, "bench.toml").unwrap().retry_base(Duration::from_millis(20))
}

async fn measure(name: &str, store: Arc<dyn SharedStore>, dir: &std::path::Path) {
    let telegram = TelegramDouble::start().await;
    let channels = Channels::start(&config(&telegram.url, dir), &store, None).unwrap();
    let mut took = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        let id = format!("{name}-{round}");
        let request = AskUserRequest::with_id(&id, Questions::from_json(ARGS).unwrap());
        store.put(NewQuestion::new(request, Duration::from_mins(10))).await.unwrap();
        let message =
            telegram.wait_for(CHAT, Duration::from_secs(30), |m| m.len() > round).await.remove(round);
        let data = message.button("PostgreSQL");
        let watch = store.watch(&id);
        let started = Instant::now();
        telegram.tap(CHAT, CHAT, message.message_id, &data);
        watch.await.unwrap();
        took.push(started.elapsed());
    }
    took.sort();
    let at = |percent: usize| took[(took.len() - 1) * percent / 100];
    println!(
        "tap to asker ({name}, {ROUNDS} taps): p50 {:.2} ms, p90 {:.2} ms, max {:.2} ms (target: p50 within 50 ms)",
        at(50).as_secs_f64() * 1e3,
        at(90).as_secs_f64() * 1e3,
        took[took.len() - 1].as_secs_f64() * 1e3,
    );
    channels.stop().await;
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = std::env::temp_dir().join(format!("askuser-channels-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    runtime.block_on(async {
        let sqlite: Arc<dyn SharedStore> = Arc::new(SqliteStore::open(dir.join("pending.db")).await.unwrap());
        measure("sqlite", sqlite, &dir).await;
        measure("memory", Arc::new(MemoryStore::new()), &dir).await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}
