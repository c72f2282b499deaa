//! The channels' configuration file (TOML): `[telegram]` and `[slack]` tables. Tokens come from
//! files (refused when other users may read them, as the API token file is) or environment
//! variables, never from the file itself or the command line.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// The Bot API's address.
pub const TELEGRAM_API_URL: &str = "https://api.telegram.org";

/// The Slack Web API's address.
pub const SLACK_API_URL: &str = "https://slack.com/api";

/// A configuration that cannot be used: what is wrong and where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The TOML is malformed, or a key is unknown, missing or of the wrong type (the message
    /// names the key, the line and the column, never the value: it may be a token).
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong, where.
        message: String,
    },
    /// A token could not be had.
    #[error("{path}: [{table}] {message}")]
    Token {
        /// The configuration file.
        path: String,
        /// The table (`telegram`, `slack`).
        table: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// A secret token: never shown by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Token(pub(crate) String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(***)")
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    telegram: Option<TelegramTable>,
    slack: Option<SlackTable>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TelegramTable {
    bot_token_file: Option<PathBuf>,
    bot_token_env: Option<String>,
    chat_ids: Vec<i64>,
    api_url: Option<String>,
    poll_timeout_seconds: Option<u64>,
    #[serde(default)]
    page_links_in_groups: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SlackTable {
    app_token_file: Option<PathBuf>,
    app_token_env: Option<String>,
    bot_token_file: Option<PathBuf>,
    bot_token_env: Option<String>,
    channel: String,
    user_ids: Vec<String>,
    api_url: Option<String>,
    #[serde(default)]
    page_links_in_channels: bool,
}

/// Telegram's settings.
#[derive(Debug, Clone)]
pub(crate) struct TelegramConfig {
    pub(crate) token: Token,
    pub(crate) chat_ids: Vec<i64>,
    pub(crate) api_url: String,
    pub(crate) poll_timeout: Duration,
    /// Page links are posted in groups too (`page_links_in_groups`).
    pub(crate) links_in_groups: bool,
}

impl TelegramConfig {
    /// Whether people outside `chat_ids` may read what is posted: a group, a supergroup or a
    /// channel (their ids are negative), where anyone in it sees a message but only the chat
    /// itself is checked, not who taps.
    pub(crate) fn shared(&self) -> bool {
        self.chat_ids.iter().any(|id| *id < 0)
    }
}

/// Slack's settings.
#[derive(Debug, Clone)]
pub(crate) struct SlackConfig {
    pub(crate) app_token: Token,
    pub(crate) bot_token: Token,
    pub(crate) channel: String,
    pub(crate) user_ids: Vec<String>,
    pub(crate) api_url: String,
    /// Page links are posted in channels too (`page_links_in_channels`).
    pub(crate) links_in_channels: bool,
}

impl SlackConfig {
    /// Whether people outside `user_ids` may read what is posted: anything but a direct
    /// message (a `D…` conversation, or a user id `U…`/`W…`, which Slack opens as the DM with
    /// that user). `user_ids` holds for taps only; a page link opens the page to anyone.
    pub(crate) fn shared(&self) -> bool {
        !matches!(self.channel.trim().as_bytes().first(), Some(b'D' | b'U' | b'W'))
    }
}

/// What `askuser serve --config PATH` reads: which channels run, and how.
#[derive(Debug, Clone)]
#[must_use]
pub struct ChannelsConfig {
    pub(crate) telegram: Option<TelegramConfig>,
    pub(crate) slack: Option<SlackConfig>,
    pub(crate) retry_base: Duration,
    pub(crate) hold: Duration,
}

impl ChannelsConfig {
    /// Reads the configuration file at `path`; token files named in it are read relative to its
    /// directory.
    ///
    /// # Errors
    ///
    /// The file cannot be read; it is not valid TOML or has an unknown, missing or mistyped key
    /// (named with its line); a token cannot be had (file missing, open to other users, empty;
    /// variable unset).
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Read { path: path.display().to_string(), source })?;
        let dir = path.parent().unwrap_or_else(|| Path::new("."));
        Self::from_toml(&text, dir, &path.display().to_string())
    }

    /// Reads the configuration from `text`; `dir` is where relative token files are, `origin`
    /// names the text in errors.
    ///
    /// # Errors
    ///
    /// As [`from_file`](Self::from_file).
    pub fn from_toml(text: &str, dir: &Path, origin: &str) -> Result<Self, ConfigError> {
        let file: File = toml::from_str(text).map_err(|e| ConfigError::Invalid {
            path: origin.to_owned(),
            message: where_and_what(&e, text),
        })?;
        let token = |table: &'static str, key: &str, file: Option<&PathBuf>, env: Option<&String>| {
            read_token(dir, file, env).map_err(|message| ConfigError::Token {
                path: origin.to_owned(),
                table,
                message: format!("{key}: {message}"),
            })
        };
        let invalid = |message: String| ConfigError::Invalid { path: origin.to_owned(), message };
        let telegram = match file.telegram {
            None => None,
            Some(t) => {
                if t.chat_ids.is_empty() {
                    return Err(invalid(
                        "[telegram] chat_ids is empty: name the chats that are asked".to_owned(),
                    ));
                }
                let api_url =
                    url(t.api_url.as_deref(), TELEGRAM_API_URL, "[telegram] api_url").map_err(invalid)?;
                Some(TelegramConfig {
                    token: token(
                        "telegram",
                        "bot_token",
                        t.bot_token_file.as_ref(),
                        t.bot_token_env.as_ref(),
                    )?,
                    chat_ids: t.chat_ids,
                    api_url,
                    poll_timeout: Duration::from_secs(t.poll_timeout_seconds.unwrap_or(25).clamp(1, 50)),
                    links_in_groups: t.page_links_in_groups,
                })
            }
        };
        let slack = match file.slack {
            None => None,
            Some(s) => {
                if s.user_ids.is_empty() {
                    return Err(invalid("[slack] user_ids is empty: name who may answer".to_owned()));
                }
                if s.channel.trim().is_empty() {
                    return Err(invalid("[slack] channel is empty: give a DM or channel id".to_owned()));
                }
                let api_url = url(s.api_url.as_deref(), SLACK_API_URL, "[slack] api_url").map_err(invalid)?;
                Some(SlackConfig {
                    app_token: token(
                        "slack",
                        "app_token",
                        s.app_token_file.as_ref(),
                        s.app_token_env.as_ref(),
                    )?,
                    bot_token: token(
                        "slack",
                        "bot_token",
                        s.bot_token_file.as_ref(),
                        s.bot_token_env.as_ref(),
                    )?,
                    channel: s.channel,
                    user_ids: s.user_ids,
                    api_url,
                    links_in_channels: s.page_links_in_channels,
                })
            }
        };
        if telegram.is_none() && slack.is_none() {
            return Err(invalid("no [telegram] or [slack] table: nothing to run".to_owned()));
        }
        Ok(Self { telegram, slack, retry_base: Duration::from_secs(1), hold: Duration::from_secs(15) })
    }

    /// The first retry's delay after a fault; each next one doubles, up to a minute. Default:
    /// one second.
    pub fn retry_base(mut self, delay: Duration) -> Self {
        self.retry_base = delay;
        self
    }

    /// How long a process's hold on a channel lasts unrenewed (renewed every third of it); when
    /// it lapses another process sharing the store takes the channel over. Default: 15 s.
    pub fn hold(mut self, hold: Duration) -> Self {
        self.hold = hold.max(Duration::from_millis(30));
        self
    }

    /// The channels it runs, by name: `telegram`, `slack`.
    #[must_use]
    pub fn names(&self) -> Vec<&'static str> {
        let mut names = Vec::new();
        if self.telegram.is_some() {
            names.push("telegram");
        }
        if self.slack.is_some() {
            names.push("slack");
        }
        names
    }
}

/// A TOML error as the key, line and column, and what is wrong, never the value (issue 36.6):
/// toml's own message quotes the offending line, and the natural mistake is an inline
/// `bot_token = "…"`, which it printed whole.
fn where_and_what(error: &toml::de::Error, text: &str) -> String {
    let what = without_values(error.message());
    let Some(at) = error.span().map(|span| span.start.min(text.len())) else { return what };
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rfind('\n').map_or(before.chars().count(), |n| before[n + 1..].chars().count()) + 1;
    let table = before
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix('[').and_then(|l| l.split(']').next()))
        .map(|t| format!("[{}] ", t.trim()))
        .unwrap_or_default();
    let key = text
        .lines()
        .nth(line - 1)
        .and_then(|l| l.split_once('='))
        .map(|(key, _)| key.trim())
        .filter(|key| {
            !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || "_-.\"".contains(c))
        })
        .map(|key| format!("{table}{key}, "))
        .unwrap_or_default();
    format!("{key}line {line}, column {column}: {what}")
}

/// `message` with every quoted value left out: serde says `invalid type: string "…", expected
/// a sequence`; names stay (toml and serde put them in backticks).
fn without_values(message: &str) -> String {
    let message = message.lines().next().unwrap_or_default();
    for prefix in ["invalid type: ", "invalid value: ", "invalid length "] {
        if let Some(rest) = message.strip_prefix(prefix)
            && let Some((_, expected)) = rest.rsplit_once("expected ")
        {
            return format!("{}expected {expected}", prefix.trim_end_matches([' ', ':']).to_owned() + ", ");
        }
    }
    let mut out = String::new();
    let mut quote = None;
    for c in message.chars() {
        match (quote, c) {
            (None, '"' | '\'') => {
                quote = Some(c);
                out.push_str("(a value)");
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, c) => out.push(c),
        }
    }
    out
}

/// `given` (or `default`), checked to be an http(s) URL.
fn url(given: Option<&str>, default: &str, key: &str) -> Result<String, String> {
    let url = given.unwrap_or(default);
    if url.starts_with("https://") || url.starts_with("http://") {
        Ok(url.trim_end_matches('/').to_owned())
    } else {
        Err(format!("{key} must start with https:// or http://, got {url:?}"))
    }
}

/// A token from exactly one of a file (relative to `dir`; checked as the API token file is) and
/// an environment variable.
fn read_token(dir: &Path, file: Option<&PathBuf>, env: Option<&String>) -> Result<Token, String> {
    let text = match (file, env) {
        (Some(_), Some(_)) => return Err("give _file or _env, not both".to_owned()),
        (None, None) => {
            return Err("missing: give _file (a file only you can read) or _env (a variable)".to_owned());
        }
        (Some(file), None) => {
            let path = dir.join(file);
            askuser_client::read_private_file(&path)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("{}: no such file", path.display()))?
        }
        (None, Some(name)) => std::env::var(name).map_err(|_| format!("the variable {name} is not set"))?,
    };
    let text = text.trim();
    if text.is_empty() || text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the token is empty or holds spaces or control characters".to_owned());
    }
    Ok(Token(text.to_owned()))
}
