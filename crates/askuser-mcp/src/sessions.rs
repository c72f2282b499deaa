//! At most so many MCP sessions at once (issue 36.11: sessions were not capped, about 53 kB
//! each, and rmcp reaps an idle one only after 5 minutes). rmcp's session manager, with a count of
//! the requests each session has in flight and when it was last used: when a new session would
//! pass the cap, sessions idle longer than the idle time go first, then the least recently used
//! one with nothing in flight; when every session has a call in flight, the new one is refused.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::common::server_side_http::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager};

/// The most sessions open at once by default.
pub(crate) const DEFAULT_MAX_SESSIONS: usize = 256;

/// How long a session with nothing in flight is kept when room is needed: 60 seconds.
pub(crate) const DEFAULT_IDLE: Duration = Duration::from_mins(1);

#[derive(Debug)]
struct Use {
    last: Instant,
    in_flight: usize,
}

type Uses = Arc<Mutex<HashMap<SessionId, Use>>>;

/// rmcp's [`LocalSessionManager`] under a cap.
#[derive(Debug)]
pub struct CappedSessions {
    inner: LocalSessionManager,
    max: usize,
    idle: Duration,
    uses: Uses,
}

/// Why a session could not be had.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionsError {
    /// rmcp's own.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    /// Every session has a call in flight and the cap is reached.
    #[error("too many MCP sessions with calls in flight ({0}): try again later")]
    Full(usize),
}

impl CappedSessions {
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        Self { inner: LocalSessionManager::default(), max: max.max(1), idle, uses: Uses::default() }
    }

    fn uses(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Use>> {
        self.uses.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn touch(&self, id: &SessionId) {
        if let Some(used) = self.uses().get_mut(id) {
            used.last = Instant::now();
        }
    }

    /// Closes what must go for one more session; `Err` when nothing may.
    async fn make_room(&self) -> Result<(), SessionsError> {
        let live: Vec<SessionId> = self.inner.sessions.read().await.keys().cloned().collect();
        let victims = {
            let mut uses = self.uses();
            // Sessions rmcp ended by itself (its idle timeout, a DELETE it took) are forgotten.
            uses.retain(|id, _| live.contains(id));
            let mut idle: Vec<(&SessionId, &Use)> =
                uses.iter().filter(|(_, used)| used.in_flight == 0).collect();
            idle.sort_by_key(|(_, used)| used.last);
            let stale = idle.iter().take_while(|(_, used)| used.last.elapsed() >= self.idle).count();
            let over = (live.len() + 1).saturating_sub(self.max);
            let going = stale.max(over);
            if going > idle.len() {
                return Err(SessionsError::Full(self.max));
            }
            idle[..going].iter().map(|(id, _)| (*id).clone()).collect::<Vec<_>>()
        };
        for id in victims {
            self.uses().remove(&id);
            let _ = self.inner.close_session(&id).await;
        }
        Ok(())
    }
}

/// A response stream, counted as a call in flight until it ends.
struct Counted<S> {
    inner: Pin<Box<S>>,
    _call: InFlight,
}

struct InFlight {
    uses: Uses,
    id: SessionId,
}

impl InFlight {
    fn new(uses: &Uses, id: &SessionId) -> Self {
        if let Some(used) = uses.lock().unwrap_or_else(PoisonError::into_inner).get_mut(id) {
            used.in_flight += 1;
            used.last = Instant::now();
        }
        Self { uses: Arc::clone(uses), id: id.clone() }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Some(used) = self.uses.lock().unwrap_or_else(PoisonError::into_inner).get_mut(&self.id) {
            used.in_flight = used.in_flight.saturating_sub(1);
            used.last = Instant::now();
        }
    }
}

impl<S: Stream> Stream for Counted<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl SessionManager for CappedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.make_room().await?;
        let (id, transport) = self.inner.create_session().await?;
        self.uses().insert(id.clone(), Use { last: Instant::now(), in_flight: 0 });
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.uses().remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let call = InFlight::new(&self.uses, id);
        let stream = self.inner.create_stream(id, message).await?;
        Ok(Counted { inner: Box::pin(stream), _call: call })
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}

/// A digest of the `Mcp-Session-Id` of the HTTP request behind `context`: it names the session in
/// the store without the session id itself, which a client presents like a credential.
pub(crate) fn session_of(context: &RequestContext<RoleServer>) -> Option<String> {
    use sha2::Digest as _;
    let parts = context.extensions.get::<http::request::Parts>()?;
    let id = parts.headers.get("mcp-session-id")?.as_bytes();
    let digest = sha2::Sha256::digest(id);
    Some(digest[..16].iter().fold(String::with_capacity(32), |mut hex, b| {
        use std::fmt::Write as _;
        let _ = write!(hex, "{b:02x}");
        hex
    }))
}
