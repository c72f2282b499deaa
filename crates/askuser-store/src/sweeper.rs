//! [`Sweeper`]: expires overdue questions, and withdraws those whose asker's lease lapsed, on an
//! interval.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::store::PendingStore;

/// Expires overdue pending questions (`expires_at` passed, still `pending`) on an interval, and so
/// wakes their waiters in every process. Safe to run on every host at once: each question is
/// expired by exactly one sweep (PostgreSQL claims rows with `FOR UPDATE SKIP LOCKED`; SQLite has
/// one writer at a time), and never one that an answer reached first.
///
/// It also withdraws the questions whose asker's lease lapsed unrenewed
/// ([`PendingStore::withdraw_lapsed`]), but only once the store has answered every sweep for
/// longer than [`leases`](Self::leases): askers cannot renew while the store is down (or before
/// this process started), so a question is never withdrawn because of an outage its asker waited
/// out.
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
    leases: Duration,
    /// Retention: settled records are deleted this long after they settled (`None`: kept).
    keep: Option<Duration>,
    /// Since when every sweep succeeded (`None`: the last one failed, or none ran yet).
    healthy_since: Arc<Mutex<Option<tokio::time::Instant>>>,
    /// When the last purge ran (`None`: none yet).
    purged_at: Arc<Mutex<Option<tokio::time::Instant>>>,
}

/// How often a sweeper with retention purges: settled records need not go the second they are
/// due, and on SQLite each purge is a write transaction.
const PURGE_EVERY: Duration = Duration::from_mins(1);

impl Sweeper {
    /// A sweeper of `store`, every second, 500 records a statement, for leases of up to 30 s.
    pub fn new(store: Arc<dyn PendingStore>) -> Self {
        Self {
            store,
            interval: Duration::from_secs(1),
            batch: 500,
            leases: crate::DEFAULT_LEASE,
            keep: None,
            healthy_since: Arc::default(),
            purged_at: Arc::default(),
        }
    }

    /// Retention: deletes settled records (answered, declined, timed out, withdrawn) `keep` after
    /// they settled ([`PendingStore::purge`]), checked about once a minute; pending ones are never
    /// deleted. Default: every record is kept.
    pub fn keep(mut self, keep: Duration) -> Self {
        self.keep = Some(keep);
        self
    }

    /// The longest lease the askers of this store hold between renewals. Lapsed leases are
    /// withdrawn once the store has been reachable (every sweep succeeding) for this long.
    /// Default: 30 s.
    pub fn leases(mut self, longest: Duration) -> Self {
        self.leases = longest;
        self
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

    /// Expires what is overdue now, in batches, then withdraws what lapsed (once the store has
    /// been reachable long enough, see [`leases`](Self::leases)), then, with retention and once a
    /// minute, deletes settled records older than [`keep`](Self::keep); returns how many of each.
    ///
    /// # Errors
    ///
    /// The store failed; what was closed before the failure stays closed.
    pub async fn sweep_once(&self) -> Result<Swept, crate::StoreError> {
        let expired =
            self.in_batches(|limit| async move { Ok(self.store.expire_due(limit).await?.len()) }).await;
        let now = tokio::time::Instant::now();
        let healthy_since = {
            let mut since = self.healthy_since.lock().unwrap_or_else(PoisonError::into_inner);
            if expired.is_err() {
                *since = None;
            }
            *since.get_or_insert(now)
        };
        let expired = expired?;
        let mut swept = Swept { expired, ..Swept::default() };
        if now.duration_since(healthy_since) >= self.leases {
            let withdrawn = self
                .in_batches(|limit| async move { Ok(self.store.withdraw_lapsed(limit).await?.len()) })
                .await;
            if withdrawn.is_err() {
                *self.healthy_since.lock().unwrap_or_else(PoisonError::into_inner) = None;
            }
            swept.withdrawn = withdrawn?;
        }
        if let Some(keep) = self.keep {
            let due = {
                let mut purged_at = self.purged_at.lock().unwrap_or_else(PoisonError::into_inner);
                let due = purged_at.is_none_or(|at| now.duration_since(at) >= PURGE_EVERY);
                if due {
                    *purged_at = Some(now);
                }
                due
            };
            if due {
                swept.purged = self.in_batches(|limit| self.store.purge(keep, limit)).await?;
            }
        }
        Ok(swept)
    }

    async fn in_batches<'a, F, Fut>(&'a self, step: F) -> Result<usize, crate::StoreError>
    where
        F: Fn(usize) -> Fut,
        Fut: Future<Output = Result<usize, crate::StoreError>> + 'a,
    {
        in_batches(self.batch, step).await
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
                        Ok(swept) => {
                            stats.expired += swept.expired as u64;
                            stats.withdrawn += swept.withdrawn as u64;
                            stats.purged += swept.purged as u64;
                        }
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

/// Runs `step` with `batch` until it does less than a batch; how much it did in all.
pub(crate) async fn in_batches<F, Fut>(batch: usize, step: F) -> Result<usize, crate::StoreError>
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Result<usize, crate::StoreError>>,
{
    let mut total = 0;
    loop {
        let done = step(batch).await?;
        total += done;
        if done < batch {
            return Ok(total);
        }
    }
}

/// The lease live askers hold by default ([`NewQuestion::lease`](crate::NewQuestion::lease)), and
/// the longest one a [`Sweeper`] expects by default: 30 seconds.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// What one sweep closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Swept {
    /// Questions expired (`timed_out`).
    pub expired: usize,
    /// Questions withdrawn (`cancelled`) because their asker's lease lapsed.
    pub withdrawn: usize,
    /// Settled records deleted by retention ([`Sweeper::keep`]).
    pub purged: usize,
}

/// What a running sweeper has done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SweepStats {
    /// Sweeps run.
    pub sweeps: u64,
    /// Questions expired.
    pub expired: u64,
    /// Questions withdrawn because their asker's lease lapsed.
    pub withdrawn: u64,
    /// Settled records deleted by retention.
    pub purged: u64,
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
