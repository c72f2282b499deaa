//! Faults of a chat service and the retry policy: a rate limit is waited out as the service says
//! (Telegram's `parameters.retry_after`, Slack's `Retry-After`), an unreachable service or a 5xx
//! is retried with doubling backoff; a refusal (4xx) is final.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The longest wait between two tries.
const MAX_BACKOFF: Duration = Duration::from_mins(1);

/// Why a call to a chat service failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Fault {
    /// Rate-limited: try again after this long.
    #[error("rate-limited by the service (retry after {0:?})")]
    RateLimited(Duration),
    /// Unreachable, timed out, or a server error: try again later.
    #[error("{0}")]
    Transient(String),
    /// Refused (bad request, unauthorised, message gone): trying again would not help.
    #[error("{0}")]
    Refused(String),
}

impl Fault {
    /// A transport error, without its URL (a Telegram URL holds the bot token).
    pub(crate) fn transport(error: reqwest::Error) -> Self {
        Self::Transient(askuser_tool::exit::with_causes(&error.without_url()))
    }
}

/// How a channel retries, and how many retries it made (for tests and logs).
#[derive(Debug)]
pub(crate) struct Retry {
    pub(crate) base: Duration,
    pub(crate) retries: AtomicU64,
}

impl Retry {
    pub(crate) fn new(base: Duration) -> Self {
        Self { base, retries: AtomicU64::new(0) }
    }

    /// Runs `call` until it succeeds, is refused, or the channels stop (`closing`) between
    /// tries.
    pub(crate) async fn run<T, F, Fut>(
        &self,
        what: &str,
        closing: &tokio::sync::watch::Receiver<bool>,
        mut call: F,
    ) -> Result<T, Fault>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Fault>>,
    {
        let mut delay = self.base;
        loop {
            let wait = match call().await {
                Ok(value) => return Ok(value),
                Err(Fault::Refused(why)) => return Err(Fault::Refused(why)),
                Err(Fault::RateLimited(after)) => {
                    tracing::warn!(what, retry_after = ?after, "rate-limited; waiting as told");
                    after.max(self.base)
                }
                Err(Fault::Transient(why)) => {
                    tracing::warn!(what, error = %why, retry_in = ?delay, "failed; retrying");
                    let wait = delay;
                    delay = (delay * 2).min(MAX_BACKOFF);
                    wait
                }
            };
            self.retries.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(wait).await;
            if *closing.borrow() {
                return Err(Fault::Refused(format!("{what}: given up (the channels stop)")));
            }
        }
    }
}
