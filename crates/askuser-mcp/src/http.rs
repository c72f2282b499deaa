//! The server over Streamable HTTP (rmcp's server transport, with sessions and SSE), as a tower
//! service: `askuser serve` mounts it at `/mcp` behind its API token.

use std::sync::Arc;

use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::AskUserServer;
pub use crate::sessions::{CappedSessions, SessionsError};

/// The service [`http_service`] makes.
pub type McpHttpService = StreamableHttpService<AskUserServer, CappedSessions>;

/// Who may reach the service, and when it stops.
#[derive(Debug, Clone)]
#[must_use]
pub struct HttpOptions {
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    cancel: CancellationToken,
    body_limit: usize,
    max_sessions: usize,
    idle: std::time::Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpOptions {
    /// Loopback only: `Host` must be `localhost`, `127.0.0.1` or `::1` (any port), and a
    /// request that carries an `Origin` (a browser's) is refused unless [allowed](Self::origin):
    /// a web page that rebinds its DNS name to this machine gets `403`. Body limit 256 KiB; at
    /// most 256 sessions, one idle for 60 s closed when room is needed.
    pub fn new() -> Self {
        Self {
            allowed_hosts: vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()],
            allowed_origins: Vec::new(),
            cancel: CancellationToken::new(),
            body_limit: 256 * 1024,
            max_sessions: crate::sessions::DEFAULT_MAX_SESSIONS,
            idle: crate::sessions::DEFAULT_IDLE,
        }
    }

    /// Also accepts `Host: host` (a name, or `name:port`): the host of the server's public URL.
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into());
        self
    }

    /// Accepts requests whose `Origin` is `origin` (`https://ask.example.com`, with its port
    /// when not the scheme's default). Default: none, so every request with an `Origin` is
    /// refused; MCP clients that are not browsers send none.
    pub fn origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Ends every session and open stream when `cancel` is cancelled (the server shutting down).
    /// Default: never.
    pub fn cancel_on(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// The largest request body, in bytes. Default: 256 KiB.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// The most sessions open at once (at least 1). A new session past it closes sessions with
    /// no call in flight (those idle longer than [`idle`](Self::idle) first, then the least
    /// recently used); when every session has a call in flight it is refused. Default: 256.
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max.max(1);
        self
    }

    /// How long a session with no call in flight is kept once room is needed. Default: 60 s.
    pub fn idle(mut self, idle: std::time::Duration) -> Self {
        self.idle = idle;
        self
    }
}

/// `server` over Streamable HTTP: `POST` for requests (answered as JSON or SSE), `GET` for the
/// session's stream of server requests (the forms), `DELETE` to end a session. Sessions live in
/// this process; each session gets a clone of `server` (its state is shared).
#[must_use]
pub fn http_service(server: AskUserServer, options: HttpOptions) -> McpHttpService {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts)
        .with_allowed_origins(options.allowed_origins)
        .enforce_origin_validation()
        .with_cancellation_token(options.cancel)
        .with_max_request_body_bytes(options.body_limit);
    let sessions = CappedSessions::new(options.max_sessions, options.idle);
    StreamableHttpService::new(move || Ok(server.clone()), Arc::new(sessions), config)
}
