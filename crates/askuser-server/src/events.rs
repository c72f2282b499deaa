//! [`ServerEvent`]: what changed, for `/v1/events` and the pages' live updates; and the sweep
//! that expires overdue questions.

use std::convert::Infallible;
use std::sync::Arc;

use askuser_store::{PendingRecord, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use serde::Serialize;
use tokio::sync::broadcast;

use crate::{AppState, Broadcast};

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
        Self {
            id: record.id().to_owned(),
            session_id: record.session_id().map(str::to_owned),
            state: record.state(),
            version: record.version(),
        }
    }
}

/// Expires overdue questions every sweep interval and publishes each, until the server closes.
pub(crate) async fn sweep_loop(state: Arc<AppState>) {
    let mut ticks = tokio::time::interval(state.config.sweep_interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = state.closed() => return,
            _ = ticks.tick() => {}
        }
        state.secrets.purge();
        loop {
            match state.store.expire_due(500).await {
                Ok(expired) => {
                    let more = expired.len() == 500;
                    for record in &expired {
                        state.publish(ServerEvent::of(record));
                    }
                    if !more {
                        break;
                    }
                }
                Err(error) => {
                    tracing::warn!(error = %crate::error::with_causes(&error), "sweep failed; retrying next tick");
                    break;
                }
            }
        }
    }
}

/// The server's events that `keep` admits (this replica's, and the other replicas' in a fleet),
/// as SSE, until the server closes. A listener that falls behind by more than the channel holds,
/// or whose replica lost its link to the others for a moment, gets a `lagged` event (reload what
/// you show).
pub(crate) fn stream<F>(
    state: &Arc<AppState>,
    keep: F,
) -> Sse<impl Stream<Item = Result<Event, Infallible>> + use<F>>
where
    F: Fn(&ServerEvent) -> bool + Send + 'static,
{
    let receiver = state.events.subscribe();
    let state = Arc::clone(state);
    let events =
        futures_util::stream::unfold((receiver, state, keep), |(mut receiver, state, keep)| async move {
            loop {
                let next = tokio::select! {
                    () = state.closed() => return None,
                    next = receiver.recv() => next,
                };
                let event = match next {
                    Ok(Broadcast::Event(event)) if keep(&event) => sse_event(&event),
                    Ok(Broadcast::Event(_)) => continue,
                    Ok(Broadcast::Lagged) | Err(broadcast::error::RecvError::Lagged(_)) => {
                        Event::default().event("lagged").data("{}")
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                };
                return Some((Ok(event), (receiver, state, keep)));
            }
        });
    Sse::new(events).keep_alive(KeepAlive::default())
}

pub(crate) fn sse_event(event: &ServerEvent) -> Event {
    let data = serde_json::to_string(event).unwrap_or_else(|_| "{}".to_owned());
    Event::default().event(event.state.as_str()).data(data)
}
