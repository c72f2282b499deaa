//! The configuration file: every mistake named with its key and line; tokens only from files
//! only their owner can read, or from the environment.

use std::os::unix::fs::PermissionsExt as _;

use askuser_channels::{ChannelsConfig, ConfigError};

use crate::support::{temp_dir, token_file};

fn read(text: &str, dir: &std::path::Path) -> Result<ChannelsConfig, ConfigError> {
    ChannelsConfig::from_toml(text, dir, "serve.toml")
}

#[test]
fn unknown_keys_and_bad_values_are_named_with_their_line() {
    let dir = temp_dir("config-errors");
    token_file(&dir, "t.token", "123:abc");
    let text = "[telegram]\nbot_token_file = \"t.token\"\nchat_ids = [1]\nchat_id = 2\n";
    let error = read(text, &dir).unwrap_err().to_string();
    assert!(error.contains("serve.toml") && error.contains("chat_id") && error.contains("line 4"), "{error}");
    let error =
        read("[telegram]\nbot_token_file = \"t.token\"\nchat_ids = \"me\"\n", &dir).unwrap_err().to_string();
    assert!(error.contains("line 3") && error.contains("chat_ids"), "{error}");
    let error = read("[discord]\n", &dir).unwrap_err().to_string();
    assert!(error.contains("discord"), "{error}");
    let error = read("", &dir).unwrap_err().to_string();
    assert!(error.contains("nothing to run"), "{error}");
    let error =
        read("[telegram]\nbot_token_file = \"t.token\"\nchat_ids = []\n", &dir).unwrap_err().to_string();
    assert!(error.contains("chat_ids is empty"), "{error}");
    let error =
        read("[telegram]\nbot_token_file = \"t.token\"\nchat_ids = [1]\napi_url = \"ftp://x\"\n", &dir)
            .unwrap_err()
            .to_string();
    assert!(error.contains("api_url"), "{error}");
    let config = read("[telegram]\nbot_token_file = \"t.token\"\nchat_ids = [1]\n", &dir).unwrap();
    assert_eq!(config.names(), ["telegram"]);
    assert!(!format!("{config:?}").contains("123:abc"), "the token is never shown: {config:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tokens_come_from_private_files_or_the_environment() {
    let dir = temp_dir("config-tokens");
    token_file(&dir, "open.token", "123:abc");
    std::fs::set_permissions(dir.join("open.token"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let error =
        read("[telegram]\nbot_token_file = \"open.token\"\nchat_ids = [1]\n", &dir).unwrap_err().to_string();
    assert!(error.contains("[telegram] bot_token") && error.contains("0644"), "{error}");
    assert!(!error.contains("123:abc"), "{error}");
    let error = read("[telegram]\nbot_token_file = \"missing.token\"\nchat_ids = [1]\n", &dir)
        .unwrap_err()
        .to_string();
    assert!(error.contains("no such file"), "{error}");
    let error = read("[telegram]\nchat_ids = [1]\n", &dir).unwrap_err().to_string();
    assert!(error.contains("bot_token: missing"), "{error}");
    let error = read("[telegram]\nbot_token_env = \"ASKUSER_CHANNELS_TEST_UNSET\"\nchat_ids = [1]\n", &dir)
        .unwrap_err()
        .to_string();
    assert!(error.contains("ASKUSER_CHANNELS_TEST_UNSET is not set"), "{error}");
    // PATH is always set: a token from a variable (its value never shown).
    let config = read("[telegram]\nbot_token_env = \"PATH\"\nchat_ids = [1]\n", &dir).unwrap();
    assert_eq!(config.names(), ["telegram"]);
    token_file(&dir, "app.token", "xapp-1");
    token_file(&dir, "bot.token", "xoxb-1");
    let slack = "[slack]\napp_token_file = \"app.token\"\nbot_token_file = \"bot.token\"\nchannel = \"D1\"\nuser_ids = [\"U1\"]\n";
    assert_eq!(read(slack, &dir).unwrap().names(), ["slack"]);
    let both = "[slack]\napp_token_file = \"app.token\"\napp_token_env = \"PATH\"\nbot_token_file = \"bot.token\"\nchannel = \"D1\"\nuser_ids = [\"U1\"]\n";
    assert!(read(both, &dir).unwrap_err().to_string().contains("not both"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_example_file_in_the_repository_reads() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/serve.example.toml");
    let text = std::fs::read_to_string(example).unwrap();
    let dir = temp_dir("config-example");
    token_file(&dir, "telegram.token", "123:abc");
    token_file(&dir, "slack-app.token", "xapp-1");
    token_file(&dir, "slack-bot.token", "xoxb-1");
    let config = read(&text, &dir).unwrap();
    assert_eq!(config.names(), ["telegram", "slack"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 36.6: the natural mistake, a token written inline, is named by its key, line and
/// column, and the token itself is never printed (toml's own message quoted the line).
#[test]
fn a_config_error_names_key_line_and_column_never_the_value() {
    let dir = temp_dir("config-no-values");
    token_file(&dir, "t.token", "123:abc");
    let secret = "987654:AAE-secret-token-value";
    for (text, key, line) in [
        (format!("[telegram]\nbot_token = \"{secret}\"\nchat_ids = [1]\n"), "[telegram] bot_token", 2),
        (
            format!("[telegram]\nbot_token_file = \"t.token\"\nchat_ids = \"{secret}\"\n"),
            "[telegram] chat_ids",
            3,
        ),
        (
            format!(
                "[telegram]\nbot_token_file = \"t.token\"\nchat_ids = [1]\n\n[slack]\napp_token = '{secret}'\n"
            ),
            "[slack] app_token",
            6,
        ),
        (
            format!(
                "[telegram]\nbot_token_file = \"t.token\"\nchat_ids = [1]\npoll_timeout_seconds = \"{secret}\"\n"
            ),
            "[telegram] poll_timeout_seconds",
            4,
        ),
        (format!("[telegram]\nbot_token = \"{secret}\n"), "[telegram] bot_token", 2),
    ] {
        let error = read(&text, &dir).unwrap_err().to_string();
        assert!(!error.contains("secret") && !error.contains("987654"), "the value is printed: {error}");
        assert!(error.contains(key) && error.contains(&format!("line {line}, column ")), "{error}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
