//! Telegram and Slack as surfaces of askuser's pending questions, run inside `askuser serve`
//! (`--config PATH`): a person answers from the chat app on their phone, with no public URL
//! (Telegram's long polling, Slack's Socket Mode).
//!
//! Each channel follows the store's change feed ([`PendingStore::changes`]), so a question asked
//! through any path and any process reaches it; of several server processes sharing the store,
//! exactly one runs each channel at a time (a [`Coordination::lease`]); the messages it posted
//! and Telegram's update offset are kept in the store's coordination table, so a restart resumes without
//! posting twice. An answer is committed with [`PendingStore::commit_answer`] (checked with
//! `check_response`; the first answer wins, whichever surface it comes from); once a batch is
//! settled anywhere (answered, declined, expired, withdrawn) its messages are edited to say so and
//! lose their buttons. Secrets never go through a chat: a batch with a secret question links to
//! its page. See `docs/channels.md`.
//!
//! ```no_run
//! use std::sync::Arc;
//! use askuser_channels::{Channels, ChannelsConfig};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let store = askuser_store::open("sqlite:pending.db").await?;
//! let config = ChannelsConfig::from_file("channels.toml".as_ref())?;
//! let channels = Channels::start(&config, &store, None)?;
//! // … until shutdown:
//! channels.stop().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Which crate do I need?
//!
//! Every askuser crate, what it is for, its heavy dependencies and its features: the table in
//! the [README](https://example.invalid/askuser#which-crate-do-i-need).

mod batch;
mod config;
mod engine;
mod fault;
mod slack;
mod telegram;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use askuser_store::SharedStore;
#[cfg(doc)]
use askuser_store::{Coordination, PendingStore};
use tokio::sync::watch;

pub use config::{ChannelsConfig, ConfigError, SLACK_API_URL, TELEGRAM_API_URL};
pub use engine::PageLinks;

use engine::{Counters, Engine, Parts, Via};
use fault::Retry;

/// The running channels: stop them with [`stop`](Self::stop).
#[derive(Debug)]
pub struct Channels {
    store: Arc<dyn SharedStore>,
    holder: String,
    closing: watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    stats: Vec<(&'static str, Arc<Counters>, Arc<Retry>)>,
}

/// What a channel did since it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChannelStats {
    /// The channel: `telegram` or `slack`.
    pub name: &'static str,
    /// Batches posted (one message per chat).
    pub posted: u64,
    /// Messages edited (ticks shown, or retired once settled).
    pub edited: u64,
    /// Answers (and declines) committed from this channel.
    pub answered: u64,
    /// Interactions ignored: from a chat or user not allowed, or with data askuser did not make.
    pub ignored: u64,
    /// Calls to the service tried again (rate limits, faults, reconnections).
    pub retries: u64,
}

/// A channel that could not start.
#[derive(Debug, thiserror::Error)]
#[error("{channel}: {message}")]
pub struct StartError {
    channel: &'static str,
    message: String,
}

impl Channels {
    /// Starts the configured channels on `store`, in the background of the current Tokio
    /// runtime. `links` makes a question's answer page link (askuser-server's
    /// `AnswerServer::page_url`), when the server has a public URL: a batch that cannot be
    /// answered in a chat (a secret question) links there.
    ///
    /// # Errors
    ///
    /// An HTTP client cannot be built, or a token cannot be sent in a header.
    pub fn start(
        config: &ChannelsConfig,
        store: &Arc<dyn SharedStore>,
        links: Option<&PageLinks>,
    ) -> Result<Self, StartError> {
        let (closing, watching) = watch::channel(false);
        let holder = holder_name();
        let via = Arc::new(Via::default());
        let mut tasks = Vec::new();
        let mut stats = Vec::new();
        let parts = |retry: &Arc<Retry>, chat: batch::Chat| Parts {
            store: Arc::clone(store),
            links: links.cloned(),
            chat,
            holder: holder.clone(),
            hold: config.hold,
            retry: Arc::clone(retry),
            via: Arc::clone(&via),
            closing: watching.clone(),
        };
        if let Some(t) = &config.telegram {
            let retry = Arc::new(Retry::new(config.retry_base));
            let surface = telegram::Telegram::new(
                &t.api_url,
                &t.token.0,
                t.chat_ids.clone(),
                t.poll_timeout,
                Arc::clone(&retry),
                watching.clone(),
            )
            .map_err(|e| StartError { channel: "telegram", message: e.without_url().to_string() })?;
            let chat = batch::Chat { shared: t.shared(), links_when_shared: t.links_in_groups };
            let engine = Engine::new(Arc::new(surface), parts(&retry, chat));
            stats.push(("telegram", Arc::clone(&engine.counters), retry));
            tasks.push(tokio::spawn(engine.run()));
        }
        if let Some(s) = &config.slack {
            let retry = Arc::new(Retry::new(config.retry_base));
            let surface = slack::Slack::new(
                &s.api_url,
                &s.app_token.0,
                &s.bot_token.0,
                s.channel.clone(),
                s.user_ids.clone(),
                Arc::clone(&retry),
                watching.clone(),
            )
            .map_err(|message| StartError { channel: "slack", message })?;
            let chat = batch::Chat { shared: s.shared(), links_when_shared: s.links_in_channels };
            let engine = Engine::new(Arc::new(surface), parts(&retry, chat));
            stats.push(("slack", Arc::clone(&engine.counters), retry));
            tasks.push(tokio::spawn(engine.run()));
        }
        Ok(Self { store: Arc::clone(store), holder, closing, tasks, stats })
    }

    /// What each channel did so far.
    #[must_use]
    pub fn stats(&self) -> Vec<ChannelStats> {
        self.stats
            .iter()
            .map(|(name, counters, retry)| ChannelStats {
                name,
                posted: counters.posted.load(Ordering::Relaxed),
                edited: counters.edited.load(Ordering::Relaxed),
                answered: counters.answered.load(Ordering::Relaxed),
                ignored: counters.ignored.load(Ordering::Relaxed),
                retries: retry.retries.load(Ordering::Relaxed),
            })
            .collect()
    }

    /// Stops the channels (a call in flight is abandoned; what was kept in the store stays, for
    /// the next start) and lets go of their holds, so that a restarted server or another replica
    /// runs them at once instead of when the holds lapse.
    pub async fn stop(self) {
        self.closing.send_replace(true);
        for task in self.tasks {
            task.abort();
            let _ = task.await;
        }
        for (name, ..) in &self.stats {
            // A hold renewed for no time is over now; a channel another process holds is left
            // alone (the store renews only the holder's own).
            if let Err(error) = engine::bounded(self.store.lease(
                &engine::lease_name(name),
                &self.holder,
                std::time::Duration::ZERO,
            ))
            .await
            {
                tracing::warn!(channel = name, error = %error, "could not let go of the channel; it lapses by itself");
            }
        }
    }
}

/// This process's name as a channel holder: unique among processes sharing a store.
fn holder_name() -> String {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("pid{}-{nanos:x}", std::process::id())
}
