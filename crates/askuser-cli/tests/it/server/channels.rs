//! `askuser serve --config` with a Telegram channel (the Bot API double of askuser-channels'
//! tests), and `askuser ask --server` as real processes: the question appears in the chat,
//! a tap answers it, the asker prints exactly the tool result.

use std::time::Duration;

use tokio::io::BufReader;

use crate::server::support::{self, TempDir, line_after, serve, write_private};

#[path = "../../../../askuser-channels/tests/it/telegram_double.rs"]
#[expect(dead_code, reason = "this test drives only part of the double")]
mod telegram_double;

use telegram_double::{TOKEN, TelegramDouble};

const CHAT: i64 = 4242;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_then_tap_in_telegram() {
    let telegram = TelegramDouble::start().await;
    let dir = TempDir::new("channels");
    write_private(&dir.0.join("telegram.token"), TOKEN);
    let config = dir.0.join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "[telegram]\nbot_token_file = \"telegram.token\"\nchat_ids = [{CHAT}]\napi_url = \"{}\"\npoll_timeout_seconds = 2\n",
            telegram.url
        ),
    )
    .unwrap();
    let mut server = serve(&dir.0, &["--config", config.to_str().unwrap()]);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut server_err, "askuser serve: listening on ").await;
    line_after(&mut server_err, "askuser serve: asking through telegram").await;
    let args = r#"{"questions":[{"header":"Database","question":"Which database?",
        "options":[{"label":"PostgreSQL"},{"label":"SQLite"}]}]}"#;
    std::fs::write(dir.0.join("call.json"), args).unwrap();
    let ask = support::ask(&url)
        .arg("--token-file")
        .arg(dir.0.join("token"))
        .arg(dir.0.join("call.json"))
        .spawn()
        .unwrap();
    let message = telegram.wait_for(CHAT, Duration::from_secs(30), |m| !m.is_empty()).await.remove(0);
    assert!(message.text.contains("Which database?"), "{}", message.text);
    telegram.tap(CHAT, CHAT, message.message_id, &message.button("PostgreSQL"));
    let output =
        tokio::time::timeout(Duration::from_secs(30), ask.wait_with_output()).await.unwrap().unwrap();
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "{\"Database\":[\"PostgreSQL\"]}\n");
    assert_eq!(output.status.code(), Some(0));
    telegram
        .wait_for(CHAT, Duration::from_secs(10), |m| m[0].text.contains("Answered on Telegram: PostgreSQL"))
        .await;
}

/// A mistake in the configuration stops `serve` before it starts, naming the key and its line;
/// the token never shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_configuration_is_named() {
    let dir = TempDir::new("channels-bad");
    write_private(&dir.0.join("telegram.token"), "123:secret-bot-token");
    let config = dir.0.join("serve.toml");
    std::fs::write(&config, "[telegram]\nbot_token_file = \"telegram.token\"\nchat_ids = [1]\nchats = [2]\n")
        .unwrap();
    let output = support::serve_command(
        &format!("sqlite:{}", dir.0.join("pending.db").display()),
        &["--config", config.to_str().unwrap()],
    )
    .output()
    .await
    .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("serve.toml") && stderr.contains("chats") && stderr.contains("line 4"),
        "{stderr}"
    );
    assert!(!stderr.contains("secret-bot-token"), "{stderr}");
}

/// The bot token is in every Bot API URL: a failing call is logged without it (here the service is
/// unreachable, the error reqwest's, which names the URL unless told not to).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_service_is_logged_without_the_token() {
    use tokio::io::AsyncBufReadExt as _;
    let dir = TempDir::new("channels-unreachable");
    write_private(&dir.0.join("telegram.token"), TOKEN);
    let config = dir.0.join("serve.toml");
    std::fs::write(
        &config,
        "[telegram]\nbot_token_file = \"telegram.token\"\nchat_ids = [1]\napi_url = \"http://127.0.0.1:9\"\n",
    )
    .unwrap();
    let mut server = serve(&dir.0, &["--config", config.to_str().unwrap()]);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let mut seen = String::new();
    let mut line = String::new();
    while !(seen.contains("getUpdates") && seen.contains("retrying")) {
        line.clear();
        let read = tokio::time::timeout(Duration::from_secs(30), server_err.read_line(&mut line)).await;
        assert!(read.expect("no retry logged").unwrap() > 0, "stderr ended: {seen}");
        seen.push_str(&line);
    }
    assert!(!seen.contains(TOKEN) && !seen.contains("ABC-test-bot-token"), "{seen}");
}
