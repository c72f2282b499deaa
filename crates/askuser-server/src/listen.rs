//! The accept loop: every connection under a header timeout, a body timeout and one cap, so
//! that no client (authenticated or not) can hold the server with idle, half-sent or slow
//! connections.
//!
//! - A request head (on a new connection, and between requests on a kept-alive one) must arrive
//!   within [`ConnectionLimits::header_timeout`]: an idle keep-alive connection closes after it.
//! - A request body must arrive within [`ConnectionLimits::body_timeout`] of its head.
//! - At most [`ConnectionLimits::max_connections`] connections are open. When a new one arrives
//!   at the cap, the oldest connection that is *not* serving a request whose body has been
//!   received is closed to make room: idle, half-sent heads and bodies still arriving go first;
//!   a request being answered (a long-poll, an event stream) is never closed for room. When
//!   every connection is serving one, the new connection is closed at once.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use http_body::{Frame, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;
use tower::ServiceExt as _;

/// How long a client has to send a complete request head by default: 10 seconds.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a client has to send a request body by default: 30 seconds (256 KiB at 9 KB/s).
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// The most connections open at once by default, whatever the descriptor limit: 4,096.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

/// Descriptors kept free below the process's limit for the store, the webhook and the log.
const RESERVED_DESCRIPTORS: u64 = 64;

/// How an [`AnswerServer`](crate::AnswerServer) treats connections: timeouts and a cap. See
/// `docs/server.md` ("Connections").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionLimits {
    /// The time a client has to send a complete request head, on a new connection and between
    /// requests on a kept-alive one (so also how long an idle connection stays open).
    pub header_timeout: Duration,
    /// The time a client has to send a request's whole body, counted from its head.
    pub body_timeout: Duration,
    /// The most connections open at once (at least 1).
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    /// [`DEFAULT_HEADER_TIMEOUT`], [`DEFAULT_BODY_TIMEOUT`], and a cap of
    /// [`DEFAULT_MAX_CONNECTIONS`] or the process's descriptor limit less 64, whichever is lower.
    fn default() -> Self {
        Self {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_connections: default_max_connections(),
        }
    }
}

impl ConnectionLimits {
    /// These limits with another header timeout.
    #[must_use]
    pub fn with_header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }

    /// These limits with another body timeout.
    #[must_use]
    pub fn with_body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// These limits with another cap (at least 1).
    #[must_use]
    pub fn with_max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.max(1);
        self
    }
}

/// The cap below the process's soft descriptor limit.
fn default_max_connections() -> usize {
    #[cfg(unix)]
    {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        if let Some(limit) = limit {
            let room = usize::try_from(limit.saturating_sub(RESERVED_DESCRIPTORS)).unwrap_or(usize::MAX);
            return room.clamp(1, DEFAULT_MAX_CONNECTIONS);
        }
    }
    DEFAULT_MAX_CONNECTIONS
}

/// A connection's phase, as the cap sees it.
const IDLE: u8 = 0;
/// A request's head has arrived, its body is still arriving.
const RECEIVING: u8 = 1;
/// A request has fully arrived and is being answered: never closed for room.
const SERVING: u8 = 2;

struct Slot {
    phase: AtomicU8,
    evict: Notify,
}

/// The open connections, oldest first.
#[derive(Default)]
struct Table {
    next: u64,
    open: BTreeMap<u64, Arc<Slot>>,
}

impl Table {
    /// Makes room for one more connection under `max`: true when there is room (closing the
    /// oldest connection not serving a request if needed).
    fn admit(&mut self, max: usize) -> Option<(u64, Arc<Slot>)> {
        if self.open.len() >= max {
            let victim = self
                .open
                .iter()
                .find(|(_, slot)| slot.phase.load(Ordering::Acquire) != SERVING)
                .map(|(id, _)| *id)?;
            if let Some(slot) = self.open.remove(&victim) {
                slot.evict.notify_one();
            }
        }
        let id = self.next;
        self.next += 1;
        let slot = Arc::new(Slot { phase: AtomicU8::new(IDLE), evict: Notify::new() });
        self.open.insert(id, Arc::clone(&slot));
        Some((id, slot))
    }
}

/// Serves `router` on `listener` under `limits` until `shutdown` becomes true; then stops
/// accepting, lets each connection finish its request in flight, and returns once all are closed.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: ConnectionLimits,
    mut shutdown: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let table = Arc::new(Mutex::new(Table::default()));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
    let mut tasks = JoinSet::new();
    loop {
        while tasks.try_join_next().is_some() {}
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(&e).await;
                    continue;
                }
            },
            () = closed(&mut shutdown) => break,
        };
        let admitted = table.lock().unwrap_or_else(PoisonError::into_inner).admit(limits.max_connections);
        let Some((id, slot)) = admitted else {
            tracing::warn!("connection refused: all {} connections serve requests", limits.max_connections);
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let http = http.clone();
        let table = Arc::clone(&table);
        let mut shutdown = shutdown.clone();
        tasks.spawn(async move {
            let service_slot = Arc::clone(&slot);
            let body_timeout = limits.body_timeout;
            let service =
                hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let slot = Arc::clone(&service_slot);
                    let router = router.clone();
                    async move { Ok::<_, Infallible>(respond(router, request, peer, slot, body_timeout).await) }
                });
            let connection = http.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = slot.evict.notified() => {}
                () = closed(&mut shutdown) => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            table.lock().unwrap_or_else(PoisonError::into_inner).open.remove(&id);
        });
    }
    while tasks.join_next().await.is_some() {}
    Ok(())
}

/// Resolves when `shutdown` becomes true (or its sender is gone).
async fn closed(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|closing| *closing).await;
}

/// An accept error: a connection that failed before it was accepted is nothing; anything else
/// (out of descriptors) is logged and waited out.
async fn accept_failed(error: &std::io::Error) {
    use std::io::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!("accept failed: {error}");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// One request through the router, with the client's address, its body under the body timeout, the connection marked as
/// serving from the body's end to the response's.
async fn respond(
    router: Router,
    mut request: hyper::Request<hyper::body::Incoming>,
    peer: std::net::SocketAddr,
    slot: Arc<Slot>,
    body_timeout: Duration,
) -> hyper::Response<Body> {
    request.extensions_mut().insert(crate::throttle::Peer(peer));
    let received = request.body().is_end_stream();
    slot.phase.store(if received { SERVING } else { RECEIVING }, Ordering::Release);
    let guard = Serving(Arc::clone(&slot));
    let request = request.map(|body| {
        Body::new(TimedBody {
            inner: body,
            deadline: Box::pin(tokio::time::sleep(body_timeout)),
            slot: Some(slot),
        })
    });
    let response = match router.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    response.map(|body| Body::new(GuardedBody { inner: body, _guard: guard }))
}

/// Marks the connection idle again when the response is done (dropped).
struct Serving(Arc<Slot>);

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.phase.store(IDLE, Ordering::Release);
    }
}

/// A request body that fails once the body timeout passes, and marks the connection as serving
/// when it ends.
struct TimedBody {
    inner: hyper::body::Incoming,
    deadline: Pin<Box<tokio::time::Sleep>>,
    slot: Option<Arc<Slot>>,
}

/// The body did not arrive within the body timeout.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within the body timeout")]
struct BodyTimedOut;

impl TimedBody {
    fn received(&mut self) {
        if let Some(slot) = self.slot.take() {
            let _ = slot.phase.compare_exchange(RECEIVING, SERVING, Ordering::AcqRel, Ordering::Acquire);
        }
    }
}

impl HttpBody for TimedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(None) => {
                this.received();
                Poll::Ready(None)
            }
            Poll::Ready(Some(frame)) => {
                if this.inner.is_end_stream() {
                    this.received();
                }
                Poll::Ready(Some(frame.map_err(Into::into)))
            }
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimedOut)))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that keeps the connection marked as serving until it is done.
struct GuardedBody {
    inner: Body,
    _guard: Serving,
}

impl HttpBody for GuardedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_connection_not_serving_makes_room() {
        let mut table = Table::default();
        let (first, first_slot) = table.admit(2).unwrap();
        let (_, second_slot) = table.admit(2).unwrap();
        first_slot.phase.store(SERVING, Ordering::Release);
        second_slot.phase.store(RECEIVING, Ordering::Release);
        let (third, third_slot) = table.admit(2).unwrap();
        assert_eq!(table.open.keys().copied().collect::<Vec<_>>(), vec![first, third]);
        third_slot.phase.store(SERVING, Ordering::Release);
        assert!(table.admit(2).is_none(), "every connection serves a request: no room");
        assert_eq!(table.open.len(), 2);
    }

    #[test]
    fn the_default_cap_is_below_the_descriptor_limit() {
        let cap = ConnectionLimits::default().max_connections;
        assert!((1..=DEFAULT_MAX_CONNECTIONS).contains(&cap));
        #[cfg(unix)]
        if let Some(limit) = rustix::process::getrlimit(rustix::process::Resource::Nofile).current {
            assert!(u64::try_from(cap).unwrap() < limit);
        }
    }
}
