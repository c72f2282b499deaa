//! Fixtures: an answer server on loopback, the channels pointed at the doubles, token files.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use askuser_channels::{ChannelStats, Channels, ChannelsConfig, PageLinks};
use askuser_client::ApiToken;
use askuser_core::{AskUserRequest, Profile, Questions, Validator};
use askuser_server::AnswerServer;
use askuser_store::{NewQuestion, PendingStore, SharedStore};

pub(crate) const API_TOKEN: &str = "channels-test-api-token-0123456789";

/// The chat that is asked.
pub(crate) const CHAT: i64 = 42;

pub(crate) const DATABASE: &str = r#"{"questions":[{"header":"Database","question":"Which database?",
    "options":[{"label":"PostgreSQL","description":"a fleet"},{"label":"SQLite","description":"one host"}]}]}"#;

/// A directory of its own under the system's temporary directory.
pub(crate) fn temp_dir(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let dir = std::env::temp_dir().join(format!("askuser-channels-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a token file only its owner can read.
pub(crate) fn token_file(dir: &std::path::Path, name: &str, token: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(name);
    std::fs::write(&path, format!("{token}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// The configuration for the doubles at `telegram` and/or `slack`.
pub(crate) fn config(telegram: Option<&str>, slack: Option<&str>) -> ChannelsConfig {
    let dir = temp_dir("config");
    let mut text = String::new();
    if let Some(url) = telegram {
        token_file(&dir, "telegram.token", crate::telegram_double::TOKEN);
        let _ = write!(
            text,
            "[telegram]\nbot_token_file = \"telegram.token\"\nchat_ids = [{CHAT}]\napi_url = \"{url}\"\npoll_timeout_seconds = 1\n"
        );
    }
    if let Some(url) = slack {
        token_file(&dir, "slack-app.token", crate::slack_double::APP_TOKEN);
        token_file(&dir, "slack-bot.token", crate::slack_double::BOT_TOKEN);
        let _ = write!(
            text,
            "[slack]\napp_token_file = \"slack-app.token\"\nbot_token_file = \"slack-bot.token\"\nchannel = \"{}\"\n\
             user_ids = [\"{}\"]\napi_url = \"{url}\"\n",
            crate::slack_double::CHANNEL,
            crate::slack_double::USER
        );
    }
    let config = ChannelsConfig::from_toml(&text, &dir, "test.toml")
        .unwrap()
        .retry_base(Duration::from_millis(20))
        .hold(Duration::from_millis(300));
    // The tokens are read: the files can go.
    std::fs::remove_dir_all(&dir).unwrap();
    config
}

/// An answer server on loopback over `store`, and its page links.
pub(crate) struct Server {
    pub(crate) url: String,
    pub(crate) answers: AnswerServer,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    served: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Server {
    pub(crate) async fn start(store: &Arc<dyn SharedStore>, profile: Profile) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = AnswerServer::builder(Arc::clone(store), ApiToken::new(API_TOKEN).unwrap())
            .public_url(url.as_str())
            .sweep_interval(Duration::from_millis(20))
            .profile(profile)
            .build();
        let (stop, on_stop) = tokio::sync::oneshot::channel::<()>();
        let serving = server.clone();
        let task = tokio::spawn(async move {
            serving
                .serve(listener, async move {
                    let _ = on_stop.await;
                })
                .await
        });
        Self { url, answers: server, stop: Some(stop), served: Some(task) }
    }

    pub(crate) fn links(&self) -> PageLinks {
        let server = self.answers.clone();
        Arc::new(move |id: &str| server.page_url(id))
    }

    pub(crate) async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(served) = self.served.take() {
            served.await.unwrap().unwrap();
        }
    }
}

/// A question put straight into the store (as any asker's would be).
pub(crate) async fn put(store: &dyn PendingStore, id: &str, args: &str) {
    let request = AskUserRequest::with_id(id, Questions::from_json(args).unwrap());
    store.put(NewQuestion::new(request, Duration::from_mins(10))).await.unwrap();
}

/// An extended-profile question (text, secret) put straight into the store.
pub(crate) async fn put_extended(store: &dyn PendingStore, id: &str, args: &str) {
    let questions = Validator::new().with_profile(Profile::Extended).validate_json(args).unwrap();
    let request = AskUserRequest::with_id(id, questions);
    store.put(NewQuestion::new(request, Duration::from_mins(10))).await.unwrap();
}

/// Starts the channels.
pub(crate) fn start(
    config: &ChannelsConfig,
    store: &Arc<dyn SharedStore>,
    links: Option<&PageLinks>,
) -> Channels {
    Channels::start(config, store, links).unwrap()
}

/// A channel's stats.
pub(crate) fn stats(channels: &Channels, name: &str) -> ChannelStats {
    channels.stats().into_iter().find(|s| s.name == name).unwrap()
}
