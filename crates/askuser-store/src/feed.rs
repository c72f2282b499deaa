//! The store's change feed: every change to any record (a question asked, answered, declined,
//! timed out, cancelled), made by any process, in the order the store committed it.
//!
//! Each store runs one reader that follows the database: SQLite's `change_seq` column, checked
//! whenever the file's `data_version` moves (another connection committed); PostgreSQL's
//! `change_seq` sequence, read when a `NOTIFY` hints at a change and at least once a second
//! whatever the notifications say. Subscribers get [`Change`]s from a bounded buffer; one that
//! falls behind, or a reader that may have lost track (a replaced connection), is told so with
//! [`Missed`] and reloads what it shows.

use tokio::sync::{Notify, broadcast};

use crate::record::{PendingRecord, State};

/// How many changes wait for a slow subscriber before it is told it [`Missed`] some.
const BUFFER: usize = 4096;

/// One committed change to a record, as the change feed tells it. It carries no question text
/// and no answer: read the record for those.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Change {
    /// The record's id.
    pub id: String,
    /// Its session, when the asker gave one.
    pub session_id: Option<String>,
    /// Its state after the change: `pending` for a question just asked, else the state it left
    /// `pending` for.
    pub state: State,
    /// The record's version after the change.
    pub version: i64,
}

impl Change {
    /// The change that made `record` what it is.
    #[must_use]
    pub fn of(record: &PendingRecord) -> Self {
        Self {
            id: record.id().to_owned(),
            session_id: record.session_id().map(str::to_owned),
            state: record.state(),
            version: record.version(),
        }
    }
}

/// Some changes may not have reached this subscriber (it fell behind, or the store lost track of
/// the database for a moment): reload what depends on them, then go on reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("some changes may have been missed: reload")]
pub struct Missed;

#[derive(Debug, Clone)]
enum Item {
    Change(Change),
    #[cfg_attr(
        not(feature = "postgres"),
        expect(dead_code, reason = "only PostgreSQL's listener misses changes")
    )]
    Missed,
}

/// A subscription to a store's change feed, from [`PendingStore::changes`](crate::PendingStore::changes):
/// every change committed after it was taken, by any process. Changes of one record arrive in
/// order; a subscriber that falls behind may see only a record's latest state. Dropping it
/// unsubscribes.
#[derive(Debug)]
pub struct Changes {
    receiver: broadcast::Receiver<Item>,
}

impl Changes {
    /// The next change; waits for one.
    ///
    /// # Errors
    ///
    /// [`Missed`] when changes may have been missed since the last call (read on after reloading).
    /// A store that was closed never sends again.
    pub async fn next(&mut self) -> Result<Change, Missed> {
        loop {
            match self.receiver.recv().await {
                Ok(Item::Change(change)) => return Ok(change),
                Ok(Item::Missed) | Err(broadcast::error::RecvError::Lagged(_)) => return Err(Missed),
                // The store is gone: nothing will ever change again.
                Err(broadcast::error::RecvError::Closed) => std::future::pending::<()>().await,
            }
        }
    }
}

/// A store's side of the feed: the subscribers, and the nudge that makes the reader look now.
#[derive(Debug)]
pub(crate) struct Feed {
    sender: broadcast::Sender<Item>,
    kick: Notify,
}

impl Default for Feed {
    fn default() -> Self {
        Self { sender: broadcast::channel(BUFFER).0, kick: Notify::new() }
    }
}

impl Feed {
    /// A new subscription; it kicks the reader, which may be idle for want of listeners.
    pub(crate) fn subscribe(&self) -> Changes {
        let changes = Changes { receiver: self.sender.subscribe() };
        self.kick();
        changes
    }

    /// Whether anyone holds a subscription.
    #[cfg(feature = "sqlite")]
    pub(crate) fn has_subscribers(&self) -> bool {
        self.sender.receiver_count() > 0
    }

    pub(crate) fn send(&self, change: Change) {
        // No subscriber is not an error.
        let _ = self.sender.send(Item::Change(change));
    }

    #[cfg(feature = "postgres")]
    pub(crate) fn missed(&self) {
        let _ = self.sender.send(Item::Missed);
    }

    /// Tells the reader that this process committed a change, or that someone listens now: look
    /// now instead of at the next tick.
    pub(crate) fn kick(&self) {
        self.kick.notify_one();
    }

    /// Resolves at the next [`kick`](Self::kick) (or at once for one that came since the last).
    #[cfg(feature = "sqlite")]
    pub(crate) async fn kicked(&self) {
        self.kick.notified().await;
    }
}
