//! [`ServerEvent`]: what changed, for `/v1/events` and the pages' live updates; and the sweep
//! that expires overdue questions.

use std::convert::Infallible;
use std::sync::Arc;

use askuser_store::{Change, Missed, PendingRecord, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use serde::Serialize;

use crate::AppState;

/// A question was asked or left `pending`. Sent on `/v1/events` as an SSE event named after
/// `state` (`pending` for a new question) whose data is this, as JSON. It never carries the
/// questions' text or an answer: fetch the record for those.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ServerEvent {
    /// The question's id.
    pub id: String,
    /// Its session, when the asker gave one.
    pub session_id: Option<String>,
    /// Its state now: `pending` (just asked), `answered`, `declined`, `timed_out` or `cancelled`.
    pub state: State,
    /// The record's version after the change.
    pub version: i64,
}

impl ServerEvent {
    pub(crate) fn of(record: &PendingRecord) -> Self {
        Self::from(Change::of(record))
    }
}

impl From<Change> for ServerEvent {
    fn from(change: Change) -> Self {
        Self { id: change.id, session_id: change.session_id, state: change.state, version: change.version }
    }
}

/// Expires overdue questions, and withdraws those whose asker's lease lapsed, every sweep
/// interval, until the server closes (the store's change feed tells the event streams).
pub(crate) async fn sweep_loop(state: Arc<AppState>) {
    let mut ticks = tokio::time::interval(state.config.sweep_interval);
    let mut sweeper =
        askuser_store::Sweeper::new(Arc::clone(&state.store) as Arc<dyn askuser_store::PendingStore>)
            .leases(state.config.lease);
    if let Some(keep) = state.config.keep {
        sweeper = sweeper.keep(keep);
    }
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = state.closed() => return,
            _ = ticks.tick() => {}
        }
        state.secrets.purge();
        match sweeper.sweep_once().await {
            Ok(swept) => {
                if swept.withdrawn > 0 {
                    tracing::info!(
                        withdrawn = swept.withdrawn,
                        "withdrew questions whose asker stopped waiting"
                    );
                }
                if swept.purged > 0 {
                    tracing::info!(purged = swept.purged, "deleted questions settled longer ago than kept");
                }
            }
            Err(error) => {
                tracing::warn!(error = %crate::error::with_causes(&error), "sweep failed; retrying next tick");
            }
        }
    }
}

/// The store's changes that `keep` admits (made through any replica, any process sharing the
/// store), as SSE, until the server closes. A listener that falls behind, or whose store lost
/// track of the database for a moment, gets a `lagged` event (reload what you show).
pub(crate) fn stream<F>(
    state: &Arc<AppState>,
    keep: F,
) -> Sse<impl Stream<Item = Result<Event, Infallible>> + use<F>>
where
    F: Fn(&ServerEvent) -> bool + Send + 'static,
{
    let changes = state.store.changes();
    let state = Arc::clone(state);
    let events =
        futures_util::stream::unfold((changes, state, keep), |(mut changes, state, keep)| async move {
            loop {
                let next = tokio::select! {
                    () = state.closed() => return None,
                    next = changes.next() => next,
                };
                let event = match next {
                    Ok(change) => {
                        let event = ServerEvent::from(change);
                        if !keep(&event) {
                            continue;
                        }
                        sse_event(&event)
                    }
                    Err(Missed) => Event::default().event("lagged").data("{}"),
                };
                return Some((Ok(event), (changes, state, keep)));
            }
        });
    Sse::new(events).keep_alive(KeepAlive::default())
}

pub(crate) fn sse_event(event: &ServerEvent) -> Event {
    let data = serde_json::to_string(event).unwrap_or_else(|_| "{}".to_owned());
    Event::default().event(event.state.as_str()).data(data)
}
