//! [`Sweeper`]: expires overdue questions on an interval.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::store::PendingStore;

/// Expires overdue pending questions (`expires_at` passed, still `pending`) on an interval, and so
/// wakes their waiters in every process. Safe to run on every host at once: each question is
/// expired by exactly one sweep (PostgreSQL claims rows with `FOR UPDATE SKIP LOCKED`; SQLite has
/// one writer at a time), and never one that an answer reached first.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use askuser_store::{MemoryStore, Sweeper};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let sweeper = Sweeper::new(Arc::new(MemoryStore::new())).interval(Duration::from_secs(1)).spawn();
/// // … the host runs …
/// sweeper.stop();
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Sweeper {
    store: Arc<dyn PendingStore>,
    interval: Duration,
    batch: usize,
}

impl Sweeper {
    /// A sweeper of `store`, every second, 500 records a statement.
    pub fn new(store: Arc<dyn PendingStore>) -> Self {
        Self { store, interval: Duration::from_secs(1), batch: 500 }
    }

    /// How often to sweep. Default: one second (a question expires at most this late).
    pub fn interval(mut self, interval: Duration) -> Self {
        self.interval = interval.max(Duration::from_millis(1));
        self
    }

    /// How many records one statement expires; a sweep repeats until fewer are due. Default: 500.
    pub fn batch_size(mut self, batch: usize) -> Self {
        self.batch = batch.max(1);
        self
    }

    /// Expires what is overdue now, in batches; returns how many.
    ///
    /// # Errors
    ///
    /// The store failed; what was expired before the failure stays expired.
    pub async fn sweep_once(&self) -> Result<usize, crate::StoreError> {
        let mut total = 0;
        loop {
            let expired = self.store.expire_due(self.batch).await?.len();
            total += expired;
            if expired < self.batch {
                return Ok(total);
            }
        }
    }

    /// Starts sweeping on the current Tokio runtime. The task stops when the handle is stopped or
    /// dropped.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime with its time driver enabled, as `tokio::spawn` does.
    #[must_use = "dropping the handle stops the sweeper"]
    pub fn spawn(self) -> SweeperHandle {
        let stats = Arc::new(Mutex::new(SweepStats::default()));
        let task = tokio::spawn({
            let stats = Arc::clone(&stats);
            async move {
                let mut ticks = tokio::time::interval(self.interval);
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    ticks.tick().await;
                    let result = self.sweep_once().await;
                    let mut stats = stats.lock().unwrap_or_else(PoisonError::into_inner);
                    stats.sweeps += 1;
                    match result {
                        Ok(n) => stats.expired += n as u64,
                        Err(error) => {
                            stats.failures += 1;
                            stats.last_error = Some(error.to_string());
                        }
                    }
                }
            }
        });
        SweeperHandle { task, stats }
    }
}

/// What a running sweeper has done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SweepStats {
    /// Sweeps run.
    pub sweeps: u64,
    /// Questions expired.
    pub expired: u64,
    /// Sweeps that failed (the store was unreachable); the next one tries again.
    pub failures: u64,
    /// The last failure's message.
    pub last_error: Option<String>,
}

/// A running [`Sweeper`]. Dropping it stops the sweeper.
#[derive(Debug)]
pub struct SweeperHandle {
    task: tokio::task::JoinHandle<()>,
    stats: Arc<Mutex<SweepStats>>,
}

impl SweeperHandle {
    /// What it has done so far.
    #[must_use]
    pub fn stats(&self) -> SweepStats {
        self.stats.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Stops sweeping (a sweep in progress is abandoned between statements).
    pub fn stop(self) {
        self.task.abort();
    }
}

impl Drop for SweeperHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}
