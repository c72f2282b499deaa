//! The `wait`s held in this server, per question, so that a wait whose connection closed (its
//! asker killed, or gone) withdraws its question within [`GRACE`] when no other wait holds it,
//! instead of one lease later (issue 36.14: a killed asker's question stayed answerable for
//! 30 s, and an answer given then was acknowledged as "sent" and reached nobody). The lease still
//! covers silent deaths (a machine that vanished closes nothing).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use askuser_store::State as RecordState;

use crate::AppState;
use crate::error::bounded;

/// How long a question whose last wait went stays answerable, so that an asker that only lost
/// its connection (and waits again at once) finds it still waiting.
pub(crate) const GRACE: Duration = Duration::from_secs(2);

#[derive(Debug, Default)]
struct Held {
    /// Waits in progress.
    count: usize,
    /// The last one went without an answer: the question is about to be withdrawn.
    abandoned: bool,
}

/// The waits in progress here, per question.
#[derive(Debug, Default)]
pub(crate) struct Waits {
    held: Mutex<HashMap<String, Held>>,
}

impl Waits {
    fn hold(&self, id: &str) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = held.entry(id.to_owned()).or_default();
        entry.count += 1;
        entry.abandoned = false;
    }

    /// One wait fewer; whether it was the last, and the question is now marked abandoned when
    /// `abandoned`.
    fn release(&self, id: &str, abandoned: bool) -> bool {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(entry) = held.get_mut(id) else { return false };
        entry.count = entry.count.saturating_sub(1);
        if entry.count > 0 {
            return false;
        }
        if abandoned {
            entry.abandoned = true;
        } else {
            held.remove(id);
        }
        true
    }

    fn count(&self, id: &str) -> usize {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).get(id).map_or(0, |held| held.count)
    }

    /// Forgets an abandoned question (withdrawn, or waited for again).
    fn forget(&self, id: &str) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if held.get(id).is_some_and(|held| held.count == 0) {
            held.remove(id);
        }
    }

    /// Whether the last wait for `id` went without an answer a moment ago: nobody waits for the
    /// question (an answer now reaches no one until its asker asks again).
    pub(crate) fn abandoned(&self, id: &str) -> bool {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).get(id).is_some_and(|held| held.abandoned)
    }
}

/// One wait, counted while it lasts. Dropped before [`finished`](Self::finished) (its connection
/// closed), and the last: the question is withdrawn after [`GRACE`] unless a wait came back or
/// another holder (another replica, another process on the store) renewed its lease meanwhile.
pub(crate) struct WaitHold {
    state: Arc<AppState>,
    id: String,
    finished: bool,
}

impl WaitHold {
    pub(crate) fn new(state: &Arc<AppState>, id: &str) -> Self {
        state.waits.hold(id);
        Self { state: Arc::clone(state), id: id.to_owned(), finished: false }
    }

    /// The wait ended with a reply (an answer, its time up, the server shutting down, a failure).
    pub(crate) fn finished(mut self) {
        self.finished = true;
    }
}

impl Drop for WaitHold {
    fn drop(&mut self) {
        let gone = !self.finished && !self.state.is_closing();
        if self.state.waits.release(&self.id, gone) && gone {
            let state = Arc::clone(&self.state);
            let id = std::mem::take(&mut self.id);
            tokio::spawn(async move {
                withdraw_if_abandoned(&state, &id).await;
                state.waits.forget(&id);
            });
        }
    }
}

/// Withdraws `id` after [`GRACE`] if it still waits, with a lease nobody renewed since its last
/// wait here went, and no wait here came back.
async fn withdraw_if_abandoned(state: &AppState, id: &str) {
    let Ok(Some(before)) = bounded(state.store.get(id)).await else { return };
    // A deferred question (no lease) has nobody waiting by design: it keeps its deadline.
    if before.state() != RecordState::Pending || before.lease_until().is_none() {
        return;
    }
    tokio::select! {
        () = tokio::time::sleep(GRACE) => {}
        () = state.closed() => return,
    }
    if state.waits.count(id) > 0 {
        return;
    }
    let Ok(Some(now)) = bounded(state.store.get(id)).await else { return };
    if now.state() != RecordState::Pending || now.lease_until() != before.lease_until() {
        return;
    }
    // A failure was logged where the store error became an `ApiError`; the lease withdraws the
    // question later.
    if let Ok((_, true)) = bounded(state.store.cancel_reporting(id)).await {
        tracing::info!("withdrew a question: its asker's wait ended without an answer");
    }
}
