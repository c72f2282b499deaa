//! The askuser answer server: a person answers pending `ask_user_question` calls from a phone or
//! any browser, and agents in any language ask over HTTP.
//!
//! [`AnswerServer`] serves, over any [`SharedStore`] (a store of questions and coordination):
//!
//! - the JSON API under `/v1` (ask, get, wait, answer, cancel, list, an event stream), guarded by
//!   one API token sent as `Authorization: Bearer TOKEN`; errors are [`ApiError`]s, JSON bodies
//!   with a stable `error` code;
//! - the pages a person answers on (server-rendered, no JavaScript needed), reached through a
//!   per-question link carrying an unguessable token, or after logging in with the API token;
//! - `/healthz`, and `/openapi.json`: the API described in `OpenAPI` 3.1, generated from the code.
//!
//! Links, login cookies and CSRF tokens are all derived from the API token, so any number of
//! replicas sharing one store (PostgreSQL) and one token act as one server. See `docs/server.md`.
//!
//! ```
//! use std::sync::Arc;
//! use askuser_client::ApiToken;
//! use askuser_server::AnswerServer;
//! use askuser_store::MemoryStore;
//!
//! let server = AnswerServer::builder(Arc::new(MemoryStore::new()), ApiToken::generate().unwrap())
//!     .public_url("http://127.0.0.1:8765")
//!     .build();
//! let app: axum::Router = server.router();
//! # drop(app);
//! ```
//!
//! # Which crate do I need?
//!
//! Every askuser crate, what it is for, its heavy dependencies and its features: the table in
//! the [README](https://example.invalid/askuser#which-crate-do-i-need).
//!
//! # Feature flags
//!
//! - `client`: `Notifier`, notices to a webhook or ntfy (reqwest with rustls). The client of the
//!   server (`HttpAnswerer`, `Racing`) is askuser-client's.

mod actions;
mod api;
mod auth;
mod claims;
mod error;
mod events;
mod extract;
mod fleet;
mod http;
mod links;
mod listen;
mod markup;
mod openapi;
mod pages;
mod secrets;
mod streams;
mod subpath;
mod tap;
mod throttle;
mod waits;
mod zeroed;

#[cfg(feature = "client")]
mod notify;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use askuser_client::{ApiToken, DEFAULT_TIMEOUT, MAX_TIMEOUT};
use askuser_core::Profile;
use askuser_store::{PostgresStore, SharedStore};
use axum::Router;
use tokio::sync::watch;

pub use error::ApiError;
pub use events::ServerEvent;
pub use listen::{ConnectionLimits, DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_CONNECTIONS};
#[cfg(feature = "client")]
pub use notify::{InvalidCredentials, Notifier, NotifyFormat};
pub use secrets::{HOLD as SECRET_HOLD, MAX_SECRET_BYTES};

/// The longest a single wait (long-poll) holds a request open: 60 seconds.
pub const MAX_WAIT: Duration = Duration::from_mins(1);

/// How long a live asker's question outlasts its asker's last wait before it is withdrawn: 30
/// seconds ([`AnswerServerBuilder::lease`]).
pub const DEFAULT_LEASE: Duration = askuser_store::DEFAULT_LEASE;

/// How long after timing out a question still takes a late answer, by default: 7 days.
pub const DEFAULT_LATE_WINDOW: Duration = Duration::from_hours(7 * 24);

/// The largest request body accepted by default: 256 KiB.
pub const DEFAULT_BODY_LIMIT: usize = 256 * 1024;

/// The answer server: build it with [`AnswerServer::builder`], then serve its
/// [`router`](Self::router) (in tests: call it in process) or run [`serve`](Self::serve).
#[derive(Clone)]
pub struct AnswerServer {
    state: Arc<AppState>,
}

impl fmt::Debug for AnswerServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnswerServerBuilder")
            .field("store", &self.store)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for AnswerServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnswerServer")
            .field("store", &self.state.store)
            .field("public_url", &self.state.config.public_url)
            .finish_non_exhaustive()
    }
}

pub(crate) struct AppState {
    pub(crate) store: Arc<dyn SharedStore>,
    pub(crate) keys: auth::Keys,
    pub(crate) config: Config,
    /// Secret values waiting for their askers (never stored, never logged).
    pub(crate) secrets: secrets::SecretBox,
    pub(crate) sealer: secrets::Sealer,
    /// The other replicas, on PostgreSQL.
    pub(crate) fleet: Option<fleet::Fleet>,
    /// Becomes `true` when the server shuts down: waits and event streams end.
    pub(crate) closing: watch::Sender<bool>,
    pub(crate) on_asked: Option<Arc<AskedHook>>,
    #[cfg(feature = "client")]
    pub(crate) notifier: Option<Arc<Notifier>>,
    /// The reminder ladder's escalation step, when there is one.
    #[cfg(feature = "client")]
    pub(crate) escalation: Option<notify::Escalation>,
    /// The clock the escalation step reads (the store's, in a test on a manual clock).
    pub(crate) clock: Arc<dyn askuser_store::Clock>,
    /// Login attempts per client.
    pub(crate) logins: throttle::LoginThrottle,
    /// The waits in progress here, per question.
    pub(crate) waits: waits::Waits,
    /// Whether the store takes a write, for `/healthz`.
    pub(crate) write_probe: api::WriteProbe,
    /// The pages' event streams open now, within their budget.
    pub(crate) streams: Arc<streams::StreamBudget>,
    /// Routers mounted behind the API token ([`AnswerServerBuilder::mount_with_token`]).
    pub(crate) mounted: Vec<(String, Router)>,
}

/// What [`AnswerServerBuilder::on_asked`] calls.
type AskedHook = dyn Fn(&AskedNotice) + Send + Sync;

/// A new question, as told to [`AnswerServerBuilder::on_asked`] (and so to a webhook).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AskedNotice {
    /// The question's id.
    pub id: String,
    /// Its session, when the asker gave one.
    pub session_id: Option<String>,
    /// Who asks, when the asker said.
    pub asked_by: Option<String>,
    /// The questions' headers (short labels), in order.
    pub headers: Vec<String>,
    /// The questions' full text, in order. A notifier leaves it out unless told to include it.
    pub questions: Vec<String>,
    /// The page link.
    pub url: String,
    /// When it expires (RFC 3339).
    pub expires_at: String,
}

impl AppState {
    /// Resolves when the server starts shutting down.
    pub(crate) async fn closed(&self) {
        let mut closing = self.closing.subscribe();
        // An error means the sender is gone: shut down too.
        let _ = closing.wait_for(|closing| *closing).await;
    }

    pub(crate) fn is_closing(&self) -> bool {
        *self.closing.borrow()
    }

    /// Holds a secret answer's values for its asker, here and on the other replicas.
    pub(crate) fn hold_secrets(&self, id: &str, secrets: Vec<secrets::Secret>) {
        if secrets.is_empty() {
            return;
        }
        if let Some(fleet) = &self.fleet {
            if let Some(sealed) = self.sealer.seal(id, &secrets) {
                fleet.secret(id, sealed);
            } else {
                tracing::warn!("a secret could not be sealed for the other replicas");
            }
        }
        self.secrets.put(id, secrets);
    }

    /// Takes a secret answer's values for its asker (waiting a moment for them to arrive from
    /// the replica that took the answer); the other replicas forget theirs.
    ///
    /// The values are handed over once of all the servers sharing the store: the hand-over is
    /// claimed once in the store (`notice.secrets-taken`, see `claims.rs`), so a
    /// copy replayed to another replica, or a second wait on another replica at the same moment,
    /// gets none (issue 36.5). When the store cannot say, nothing is handed over.
    pub(crate) async fn take_secrets(&self, id: &str) -> Option<Vec<secrets::Secret>> {
        let taken = self.secrets.take_within(id, secrets::ARRIVAL).await?;
        if let Some(fleet) = &self.fleet
            && let Some(sealed) = self.sealer.seal(&fleet::taken_aad(id), &[])
        {
            fleet.taken(id, sealed);
        }
        match error::bounded(self.store.claim_once(&claims::Notice::SecretsTaken.key(id))).await {
            Ok(true) => Some(taken),
            Ok(false) => {
                tracing::warn!(
                    "a secret answer's values were handed to its asker before (a replayed copy, or a second wait): not handed again"
                );
                None
            }
            Err(_) => None,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) public_url: String,
    pub(crate) default_timeout: Duration,
    pub(crate) max_wait: Duration,
    pub(crate) body_limit: usize,
    pub(crate) sweep_interval: Duration,
    pub(crate) lease: Duration,
    pub(crate) keep: Option<Duration>,
    /// How long after timing out a question still takes an answer, as late (zero: never).
    pub(crate) late: Duration,
    pub(crate) profile: Profile,
    pub(crate) limits: ConnectionLimits,
}

/// Configures an [`AnswerServer`].
#[must_use]
pub struct AnswerServerBuilder {
    store: Arc<dyn SharedStore>,
    token: ApiToken,
    config: Config,
    on_asked: Option<Arc<AskedHook>>,
    #[cfg(feature = "client")]
    notifier: Option<Notifier>,
    #[cfg(feature = "client")]
    escalation: Option<notify::Escalation>,
    clock: Arc<dyn askuser_store::Clock>,
    fleet: Option<PostgresStore>,
    mounted: Vec<(String, Router)>,
}

impl AnswerServerBuilder {
    /// The question profile (docs/contract.md §10): [`Profile::Reference`] (the default) takes multiple-choice
    /// questions only; [`Profile::Extended`] also takes text and secret questions, declared
    /// defaults, `allow_other` and `timeout_seconds`. An ask may choose the reference profile on an
    /// extended server (`"profile": "reference"`), never the other way round.
    pub fn profile(mut self, profile: Profile) -> Self {
        self.config.profile = profile;
        self
    }

    /// Makes this server one replica of a fleet on `store`'s PostgreSQL database (the store the
    /// server runs on): a secret answer's value reaches the replica its asker waits on (sealed, in
    /// a `NOTIFY`; never stored). The event streams and the pages' live updates need no fleet:
    /// they follow the store's change feed, which sees every replica's and every process's
    /// changes. Started by
    /// [`AnswerServer::serve`] or [`AnswerServer::connect_fleet`].
    pub fn fleet(mut self, store: &PostgresStore) -> Self {
        self.fleet = Some(store.clone());
        self
    }

    /// The URL people reach this server at, used in page links (`http://127.0.0.1:8765`,
    /// `https://ask.example.com`). Default: `http://127.0.0.1:8765`. A trailing `/` is dropped.
    /// An `https` URL also marks the login cookie `Secure`.
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        let url: String = url.into();
        url.trim_end_matches('/').clone_into(&mut self.config.public_url);
        self
    }

    /// How long a question waits when the asker gives no timeout. Default: [`DEFAULT_TIMEOUT`].
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.config.default_timeout = timeout.min(MAX_TIMEOUT);
        self
    }

    /// The longest one wait request holds open. Default and maximum: [`MAX_WAIT`].
    pub fn max_wait(mut self, wait: Duration) -> Self {
        self.config.max_wait = wait.min(MAX_WAIT);
        self
    }

    /// The largest request body accepted, in bytes. Default: [`DEFAULT_BODY_LIMIT`].
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.config.body_limit = bytes;
        self
    }

    /// How [`serve`](AnswerServer::serve) treats connections: the header and body timeouts and
    /// the connection cap. Default: [`ConnectionLimits::default`].
    pub fn connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.config.limits = limits;
        self
    }

    /// How often the server expires overdue questions (and tells listeners). Default: 1 s.
    pub fn sweep_interval(mut self, interval: Duration) -> Self {
        self.config.sweep_interval = interval.max(Duration::from_millis(10));
        self
    }

    /// How long a live asker's question outlasts its asker's last wait (an ask with `"live":
    /// true` holds a lease that each wait renews until the wait's end plus this much): a question
    /// whose asker was killed is withdrawn about this long after its last wait ended (plus a sweep
    /// interval), its page says the assistant stopped waiting, and an answer to it is refused.
    /// Lapsed leases are withdrawn only once the store has been reachable this long, so an outage
    /// that askers wait out withdraws nothing. Default: [`DEFAULT_LEASE`] (30 s); at least 1 s.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.config.lease = lease.max(Duration::from_secs(1));
        self
    }

    /// Retention: the sweep deletes a question `keep` after it was answered, declined, timed out
    /// or withdrawn (checked about once a minute); a waiting question is never deleted. Its page
    /// and record are gone then (`404`). Default: every question is kept (`askuser serve` keeps
    /// 30 days unless told otherwise, see `--keep-days`).
    pub fn keep(mut self, keep: Duration) -> Self {
        self.config.keep = Some(keep);
        self
    }

    /// Late answers: a question that timed out still takes an answer for `window` after (on the
    /// API, its page, a notice's one-tap answer, a chat), stored as `late` and delivered as late
    /// wherever its asker still listens (the record and the wait API, the webhook); what its
    /// asker was told at the deadline stays true. An approval is never late. Zero turns late
    /// answers off. Default: [`DEFAULT_LATE_WINDOW`] (7 days; `askuser serve --late-days`).
    pub fn late_window(mut self, window: Duration) -> Self {
        self.config.late = window;
        self
    }

    /// Calls `hook` for each new question asked through this server's API (not for a repeated
    /// ask of the same one), on the request's task: it must not block. A
    /// `notifier` (feature `client`) hears of every question in the store instead.
    pub fn on_asked(mut self, hook: impl Fn(&AskedNotice) + Send + Sync + 'static) -> Self {
        self.on_asked = Some(Arc::new(hook));
        self
    }

    /// Sends notices about the store's questions (asked, reminded, settled) to a webhook; see
    /// [`Notifier`]. [`AnswerServer::serve`] starts it ([`AnswerServer::spawn_notifier`] in a
    /// test). Default: none.
    #[cfg(feature = "client")]
    pub fn notifier(mut self, notifier: Notifier) -> Self {
        self.notifier = Some(notifier);
        self
    }

    /// The reminder ladder's escalation step: a question that still waits `after` it was asked
    /// (and before its deadline) goes to a second surface too, `notifier` (another ntfy topic,
    /// another person's webhook), as an `escalated` notice, once across replicas; when it is
    /// settled anywhere, that surface gets the follow-up as well (ntfy: replaced and cleared), so
    /// no copy is left asking. [`AnswerServer::serve`] starts it
    /// ([`AnswerServer::spawn_escalation`] in a test). Default: none.
    #[cfg(feature = "client")]
    pub fn escalate(mut self, after: Duration, notifier: Notifier) -> Self {
        self.escalation = Some(notify::Escalation { after, notifier: Arc::new(notifier) });
        self
    }

    /// The clock the escalation step reads. Default: the system clock; a test gives the manual
    /// clock its store reads.
    pub fn clock(mut self, clock: Arc<dyn askuser_store::Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Serves `router` at `path` (`/mcp`) behind the same API token as `/v1` (a request without
    /// it gets `401 unauthorized`), with the server's security headers, body limit and access
    /// log. How another protocol (MCP over HTTP, from askuser-mcp) joins the server without this
    /// crate depending on it. Default: nothing mounted.
    pub fn mount_with_token(mut self, path: impl Into<String>, router: Router) -> Self {
        self.mounted.push((path.into(), router));
        self
    }

    /// The server.
    #[must_use]
    pub fn build(self) -> AnswerServer {
        let (closing, _) = watch::channel(false);
        let keys = auth::Keys::new(self.token);
        let sealer = secrets::Sealer::new(&keys.seal_key());
        let fleet = self.fleet.map(|store| fleet::Fleet::new(&store, keys.fleet_channel()));
        let streams = Arc::new(streams::StreamBudget::new(self.config.limits.max_connections));
        AnswerServer {
            state: Arc::new(AppState {
                store: self.store,
                keys,
                config: self.config,
                secrets: secrets::SecretBox::default(),
                sealer,
                fleet,
                closing,
                on_asked: self.on_asked,
                #[cfg(feature = "client")]
                notifier: self.notifier.map(Arc::new),
                #[cfg(feature = "client")]
                escalation: self.escalation,
                clock: self.clock,
                logins: throttle::LoginThrottle::default(),
                streams,
                write_probe: api::WriteProbe::default(),
                waits: waits::Waits::default(),
                mounted: self.mounted,
            }),
        }
    }
}

impl AnswerServer {
    /// A server over `store`, guarded by `token`.
    pub fn builder(store: Arc<dyn SharedStore>, token: ApiToken) -> AnswerServerBuilder {
        AnswerServerBuilder {
            store,
            token,
            config: Config {
                public_url: "http://127.0.0.1:8765".to_owned(),
                default_timeout: DEFAULT_TIMEOUT,
                max_wait: MAX_WAIT,
                body_limit: DEFAULT_BODY_LIMIT,
                sweep_interval: Duration::from_secs(1),
                lease: DEFAULT_LEASE,
                keep: None,
                late: DEFAULT_LATE_WINDOW,
                profile: Profile::Reference,
                limits: ConnectionLimits::default(),
            },
            on_asked: None,
            #[cfg(feature = "client")]
            notifier: None,
            #[cfg(feature = "client")]
            escalation: None,
            clock: Arc::new(askuser_store::SystemClock),
            fleet: None,
            mounted: Vec::new(),
        }
    }

    /// The whole application: `/v1`, the pages, `/healthz`, with the security headers, the body
    /// limit and the access log. Nothing runs in the background until [`serve`](Self::serve) or
    /// [`spawn_sweeper`](Self::spawn_sweeper).
    pub fn router(&self) -> Router {
        http::router(Arc::clone(&self.state))
    }

    /// The page link of question `id`: the public URL, the path and the batch token.
    #[must_use]
    pub fn page_url(&self, id: &str) -> String {
        links::page_url(&self.state, id)
    }

    /// Starts the task that expires overdue questions every sweep interval and publishes a
    /// `timed_out` event for each; it stops when the server shuts down.
    #[must_use = "dropping the handle does not stop the sweeper; shutdown does"]
    pub fn spawn_sweeper(&self) -> tokio::task::JoinHandle<()> {
        tokio::spawn(events::sweep_loop(Arc::clone(&self.state)))
    }

    /// Starts shutting down: pending waits return `503 shutting_down`, event streams end, and new
    /// requests that would wait are refused. Answers in flight are committed.
    pub fn shutdown(&self) {
        self.state.closing.send_replace(true);
    }

    /// Serves on `listener` until `signal` resolves, then shuts down gracefully: waits and event
    /// streams are released with a clear status, requests in flight finish, and this returns.
    ///
    /// # Errors
    ///
    /// The listener failed.
    pub async fn serve(
        &self,
        listener: tokio::net::TcpListener,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let fleet = self.connect_fleet().await;
        let sweeper = self.spawn_sweeper();
        #[cfg(feature = "client")]
        let notices = self.spawn_notifier();
        #[cfg(feature = "client")]
        let escalation = self.spawn_escalation();
        let this = self.clone();
        // A signal future that panics (one that printed with `eprintln!` on a closed stderr) is
        // a signal too: before, the server went on serving and could no longer be stopped.
        let signal = tokio::spawn(signal);
        let on_signal = signal.abort_handle();
        let signalled = tokio::spawn(async move {
            let _ = signal.await;
            this.shutdown();
        });
        let closing = self.state.closing.subscribe();
        let result = listen::serve(listener, self.router(), self.state.config.limits, closing).await;
        signalled.abort();
        on_signal.abort();
        self.shutdown();
        let _ = sweeper.await;
        #[cfg(feature = "client")]
        for task in [notices, escalation].into_iter().flatten() {
            let _ = task.await;
        }
        for task in fleet {
            let _ = task.await;
        }
        result
    }

    /// Starts talking to the other replicas (a server built with
    /// [`fleet`](AnswerServerBuilder::fleet)): resolves once listening (or once the first attempt
    /// failed: it keeps retrying). The tasks stop when the server shuts down. Does nothing
    /// without a fleet, or the second time. [`serve`](Self::serve) calls it.
    pub async fn connect_fleet(&self) -> Vec<tokio::task::JoinHandle<()>> {
        fleet::Fleet::start(&self.state).await
    }

    /// The question profile this server takes.
    #[must_use]
    pub fn profile(&self) -> Profile {
        self.state.config.profile
    }
}
