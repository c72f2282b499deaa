//! [`HttpAnswerer`]: an `Answerer` that asks through a remote answer server and long-polls for
//! the answer (feature `http`).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use askuser_core::{
    AnswerError, AnsweredBy, Answerer, AskContext, AskUserRequest, AskUserResponse, Deadline, QuestionKind,
    SecretSink, Timestamp, parse_secret_ref,
};
use askuser_store::{AskedBy, State};
use serde::de::DeserializeOwned;

use crate::token::ApiToken;
use crate::wire::{AnswerBody, AskBody, AskReply, ErrorBody, ErrorCode, SecretValues, WaitReply};

/// How long one wait request asks the server to hold: below the server's maximum.
const POLL: Duration = Duration::from_secs(50);

/// How long one ask (`POST /v1/questions`) may take before it is tried again.
const ASK_LIMIT: Duration = Duration::from_secs(30);

/// The first retry's delay, before jitter; each next one doubles, up to [`BACKOFF_CAP`].
const BACKOFF_FIRST: Duration = Duration::from_millis(250);

/// The longest delay between two tries, before jitter.
const BACKOFF_CAP: Duration = Duration::from_secs(5);

/// The longest `Retry-After` honoured: a larger one (a proxy's idea) is cut to this.
const RETRY_AFTER_CAP: Duration = Duration::from_secs(30);

/// How long past the deadline a call that ran out of time waits before it fails as timed out
/// itself: the caller's own timer, due at the deadline, goes first and its timeout policy applies.
const PAST_DEADLINE: Duration = Duration::from_secs(1);

/// The most characters of the caller's id kept in the question's id (the server takes 256).
const MAX_BASE_ID_CHARS: usize = 200;

/// What [`HttpAnswerer::on_link`] calls.
type LinkHandler = dyn Fn(&str) + Send + Sync;

/// What [`HttpAnswerer::on_retry`] calls.
type RetryHandler = dyn Fn(&ClientError) + Send + Sync;

/// A request to the answer server failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server could not be reached, or its reply could not be read.
    #[error("cannot reach the answer server: {0}")]
    Http(#[from] reqwest::Error),
    /// The server answered with an error (its stable `error` code and message).
    #[error("the answer server said {status} {}: {message}", code.map_or("", ErrorCode::as_str))]
    Api {
        /// The HTTP status.
        status: u16,
        /// The `error` code; `None` when the reply was not the server's JSON (as from a proxy).
        code: Option<ErrorCode>,
        /// The message.
        message: String,
        /// The record as it stands, with `already_answered` and `closed`.
        record: Option<Box<askuser_store::PendingRecord>>,
        /// The reply's `Retry-After`, in seconds, when it had one.
        retry_after: Option<Duration>,
    },
    /// The server's reply is not what this client expects (a different version?).
    #[error("unexpected reply from the answer server: {0}")]
    Unexpected(String),
}

/// Asks through a remote `askuser serve`: puts the request there (`POST /v1/questions`), hands
/// the page link to [`on_link`](Self::on_link), and long-polls (`GET /v1/questions/{id}/wait`)
/// until someone answers on any replica.
///
/// - One deadline: the question waits on the server until the request's own deadline (the one
///   the `AskUser` capability stamped from its timeout or the model's `timeout_seconds`), and at
///   most [`timeout`](Self::timeout) (default: one hour, the server's default); the page shows
///   it and the server times the question out then. The capability's timeout policy applies at
///   that moment; used on its own, a question nobody answered in time fails the call with a retry
///   carrying [`askuser_core::TIMED_OUT`].
/// - Each call is put under a fresh id that no other call or conversation can have (the
///   tool-call id and a random suffix), so an answer never reaches the wrong conversation; the
///   retries of one call reuse it (the server treats them as one ask).
/// - A dropped future (the run was cancelled) cancels the question on the server, from a task on
///   the current Tokio runtime.
/// - Outages are waited out until the deadline: the ask and the wait are tried again on a
///   connection error, `500`, `502`, `503` (after its `Retry-After`) and `504`, with capped
///   exponential backoff and jitter (250 ms doubling up to 5 s, each delay between half and all
///   of that). [`on_retry`](Self::on_retry) hears when a run of failures starts.
/// - Extended profile: the request's profile is sent along (the server must run `--profile
///   extended` for text and secret questions). A secret answer's value comes back once, in the
///   wait's reply, and goes to the [`secret_sink`](Self::secret_sink) before the answer returns;
///   without a sink, a batch with a secret question is declined without being asked.
///
/// ```no_run
/// use std::time::Duration;
/// use askuser_client::{ApiToken, HttpAnswerer};
/// use askuser_tool::AskUser;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let token = ApiToken::read("/home/me/.local/share/askuser/token".as_ref())?;
/// let answerer = HttpAnswerer::new("http://127.0.0.1:8765", token)?
///     .timeout(Duration::from_secs(600))
///     .on_link(|url| eprintln!("answer at {url}"));
/// let ask_user = AskUser::builder().answerer(answerer).timeout(Duration::from_secs(600)).build()?;
/// # drop(ask_user);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct HttpAnswerer {
    client: reqwest::Client,
    base: String,
    token: ApiToken,
    timeout: Duration,
    on_link: Option<Arc<LinkHandler>>,
    on_retry: Option<Arc<RetryHandler>>,
    secret_sink: Option<Arc<dyn SecretSink>>,
    asked_by: Option<AskedBy>,
    /// Whether a request the server already holds under its own id is waited on, not asked
    /// again: [`joins_stored_questions`](Self::joins_stored_questions).
    joins_stored: bool,
    /// The cancels that dropped calls sent, shared by clones: [`withdrawn`](Self::withdrawn).
    withdrawals: Arc<std::sync::Mutex<tokio::task::JoinSet<()>>>,
}

impl fmt::Debug for HttpAnswerer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpAnswerer")
            .field("base", &self.base)
            .field("token", &self.token)
            .field("timeout", &self.timeout)
            .field("asked_by", &self.asked_by)
            .finish_non_exhaustive()
    }
}

impl HttpAnswerer {
    /// An answerer that asks the server at `base_url` (`http://127.0.0.1:8765`), with `token`.
    ///
    /// # Errors
    ///
    /// The HTTP client cannot be built (no TLS roots).
    pub fn new(base_url: &str, token: ApiToken) -> Result<Self, ClientError> {
        let client = reqwest::Client::builder().connect_timeout(Duration::from_secs(10)).build()?;
        Ok(Self {
            client,
            base: base_url.trim_end_matches('/').to_owned(),
            token,
            timeout: crate::DEFAULT_TIMEOUT,
            on_link: None,
            on_retry: None,
            secret_sink: None,
            asked_by: None,
            joins_stored: false,
            withdrawals: Arc::default(),
        })
    }

    /// Waits until the server has heard every cancel that a dropped call of this answerer (or of
    /// a clone) sent, or the cancel failed: a command that ends on a signal drops its call, then
    /// awaits this before it exits, so the question it withdrew is not left answerable. Bound it
    /// with a timeout of yours: a server that does not answer holds it up to the request's own
    /// limits.
    pub async fn withdrawn(&self) {
        let mut pending =
            std::mem::take(&mut *self.withdrawals.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        while pending.join_next().await.is_some() {}
    }

    /// Where the values of secret answers go (extended profile). Without one, a batch with a
    /// secret question is declined without being asked.
    #[must_use]
    pub fn secret_sink(mut self, sink: impl SecretSink + 'static) -> Self {
        self.secret_sink = Some(Arc::new(sink));
        self
    }

    /// The longest each question waits for its answer; a request with an earlier deadline
    /// waits until that deadline. Default: one hour.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.min(crate::MAX_TIMEOUT);
        self
    }

    /// Called when a request to the server failed and will be tried again (once per run of
    /// failures, not for every try): print it, so that a person knows why nothing happens.
    #[must_use]
    pub fn on_retry(mut self, f: impl Fn(&ClientError) + Send + Sync + 'static) -> Self {
        self.on_retry = Some(Arc::new(f));
        self
    }

    /// Who asks: the label the person sees beside each question (pages, lists, notices).
    /// Default: the call's [`AskContext::asked_by`](askuser_core::AskContext::asked_by), when
    /// the host knows it (`askuser mcp`: the client's name and version and its directory).
    #[must_use]
    pub fn asked_by(mut self, asked_by: AskedBy) -> Self {
        self.asked_by = Some(asked_by);
        self
    }

    /// Before asking, looks the request's own id up on the server: when the server already holds
    /// it as a question nobody waits for (no lease) with the same questions, that question is
    /// waited on instead of a copy being asked, and never withdrawn by this answerer. For
    /// questions kept in a store the server reads too (`askuser mcp --background` beside
    /// `askuser serve` on the same `pending.db`): one question, one entry on the page, its answer
    /// the ticket's even after the asker has gone (issue 36.17). Costs one request per ask.
    /// Default: off.
    #[must_use]
    pub fn joins_stored_questions(mut self) -> Self {
        self.joins_stored = true;
        self
    }

    /// The question the server already holds under `request`'s own id, waiting for nobody (no
    /// lease), with the same questions: [`joins_stored_questions`](Self::joins_stored_questions).
    /// `None` when there is none, or the server could not say.
    async fn stored_twin(&self, request: &AskUserRequest) -> Option<askuser_store::PendingRecord> {
        let url = format!("{}/v1/questions/{}", self.base, crate::encode_segment(request.id()));
        let record: askuser_store::PendingRecord =
            self.call(self.client.get(url).timeout(ASK_LIMIT)).await.ok()?;
        let same = record.id() == request.id()
            && record.lease_until().is_none()
            && record.request().questions() == request.questions();
        same.then_some(record)
    }

    /// Called with each question's page link once the server has it (print it, send it).
    #[must_use]
    pub fn on_link(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_link = Some(Arc::new(f));
        self
    }

    /// Sends `request` with the token; the reply's JSON as `T`, or the server's error.
    async fn call<T: DeserializeOwned>(&self, request: reqwest::RequestBuilder) -> Result<T, ClientError> {
        let response = request.bearer_auth(self.token.expose()).send().await?;
        let status = response.status();
        let retry_after = crate::reply::retry_after(response.headers());
        let text = match crate::reply::read_text(response, crate::reply::MAX_REPLY_BYTES).await {
            Ok(text) => text,
            Err(crate::reply::ReplyError::Transport(error)) => return Err(error.into()),
            Err(too_large) => return Err(ClientError::Unexpected(too_large.to_string())),
        };
        if status.is_success() {
            return serde_json::from_str(&text)
                .map_err(|e| ClientError::Unexpected(format!("a reply this client cannot read: {e}")));
        }
        Err(match serde_json::from_str::<ErrorBody>(&text) {
            Ok(body) => ClientError::Api {
                status: status.as_u16(),
                code: Some(body.error),
                message: body.message,
                record: body.record.map(Box::new),
                retry_after,
            },
            // Not the server's JSON (a proxy's page), or a code this client does not know.
            Err(_) => ClientError::Api {
                status: status.as_u16(),
                code: None,
                message: text.chars().take(200).collect(),
                record: None,
                retry_after,
            },
        })
    }

    /// `request` (built anew for each try) until it succeeds, fails for good, or `deadline`
    /// passes: then the last failure.
    async fn retrying<T: DeserializeOwned>(
        &self,
        deadline: tokio::time::Instant,
        request: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<T, ClientError> {
        let mut backoff = Backoff::default();
        loop {
            match self.call(request()).await {
                Ok(reply) => return Ok(reply),
                Err(error) if transient(&error) => {
                    let delay = backoff.next(retry_after(&error));
                    if tokio::time::Instant::now() + delay >= deadline {
                        return Err(error);
                    }
                    if backoff.tries == 1
                        && let Some(on_retry) = &self.on_retry
                    {
                        on_retry(&error);
                    }
                    tracing::warn!(error = %askuser_tool::exit::with_causes(&error), delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX), "the answer server failed; trying again");
                    tokio::time::sleep(delay).await;
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// `POST /v1/questions` under `id`, waiting `limit` on the server; returns the page link.
    async fn put(
        &self,
        id: &str,
        request: &AskUserRequest,
        context: &AskContext,
        limit: Duration,
        deadline: tokio::time::Instant,
    ) -> Result<String, ClientError> {
        let mut arguments = serde_json::json!({ "questions": request.questions().as_slice() });
        if let Some(secs) = request.questions().timeout_seconds() {
            arguments["timeout_seconds"] = secs.into();
        }
        let asked_by = self.asked_by.clone().or_else(|| context.asked_by.as_deref().and_then(AskedBy::lossy));
        let body = AskBody {
            arguments,
            id: Some(id.to_owned()),
            // Whole milliseconds: the server takes at least one.
            timeout_secs: Some(limit.max(Duration::from_millis(1)).as_secs_f64()),
            profile: Some(request.profile()),
            // This call waits for the answer: a question whose caller was killed is withdrawn.
            live: true,
            session_id: context.session_id.clone(),
            asked_by: asked_by.map(|a| a.as_str().to_owned()),
            tool_name: None,
        };
        let url = format!("{}/v1/questions", self.base);
        // The same id on every try: a retry after a lost reply gets the question already stored.
        let reply: AskReply =
            self.retrying(deadline, || self.client.post(&url).json(&body).timeout(ASK_LIMIT)).await?;
        Ok(reply.url)
    }

    /// Long-polls until the question leaves `pending`; returns the wait's reply, or `None` when
    /// it was still pending at `deadline`.
    async fn settle(
        &self,
        id: &str,
        deadline: tokio::time::Instant,
    ) -> Result<Option<WaitReply>, ClientError> {
        let url = format!("{}/v1/questions/{}/wait", self.base, crate::encode_segment(id));
        loop {
            // Held until the deadline at most (the server times the question out then), and a
            // little past it, so that a reply says how it ended.
            let hold = deadline.saturating_duration_since(tokio::time::Instant::now()).min(POLL)
                + Duration::from_secs(1);
            let poll = || {
                self.client
                    .get(&url)
                    .query(&[("timeout_secs", hold.as_secs_f64())])
                    .timeout(hold + Duration::from_secs(15))
            };
            let reply: WaitReply = self.retrying(deadline, poll).await?;
            if reply.done {
                return Ok(Some(reply));
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(None);
            }
        }
    }

    /// How long the question may wait: until the request's own deadline (stamped by the
    /// capability from its timeout or the model's `timeout_seconds`), at most the configured
    /// timeout.
    pub(crate) fn limit(&self, request: &AskUserRequest) -> Duration {
        let mut limit = self.timeout;
        if let Some(at) = request.deadline().and_then(Deadline::expires_at) {
            limit = limit.min(Timestamp::now().until(at));
        }
        if let Some(secs) = request.questions().timeout_seconds() {
            limit = limit.min(Duration::from_secs(secs.into()));
        }
        limit
    }

    fn outcome(record: &askuser_store::PendingRecord) -> Result<AskUserResponse, AnswerError> {
        match (record.state(), record.response()) {
            (State::Answered | State::Declined, Some(response)) => Ok(response.clone()),
            (State::TimedOut, _) => Err(AnswerError::retry(askuser_core::TIMED_OUT)),
            (state, _) => Err(AnswerError::failed(format!("the question was {state} on the answer server"))),
        }
    }
}

fn failure(error: ClientError) -> AnswerError {
    AnswerError::failed("asking through the answer server failed").with_source(error)
}

/// Whether a failed request may succeed when tried again: the server or the way to it is down
/// for a moment (a connection error, `500`, `502`, `503`, `504`).
fn transient(error: &ClientError) -> bool {
    matches!(error, ClientError::Http(_) | ClientError::Api { status: 500 | 502..=504, .. })
}

fn retry_after(error: &ClientError) -> Option<Duration> {
    match error {
        ClientError::Api { retry_after, .. } => retry_after.map(|d| d.min(RETRY_AFTER_CAP)),
        _ => None,
    }
}

/// Capped exponential backoff with jitter: the `n`th delay is between half and all of
/// `BACKOFF_FIRST × 2ⁿ` (at most [`BACKOFF_CAP`]), and never shorter than the server's
/// `Retry-After`. The jitter spreads the askers that one outage failed together.
#[derive(Debug, Default)]
struct Backoff {
    tries: u32,
}

impl Backoff {
    fn next(&mut self, retry_after: Option<Duration>) -> Duration {
        let full = BACKOFF_FIRST.saturating_mul(1 << self.tries.min(16)).min(BACKOFF_CAP);
        self.tries += 1;
        let half = full / 2;
        let jitter = half.mul_f64(random_unit());
        (half + jitter).max(retry_after.unwrap_or_default())
    }
}

/// A number in `[0, 1)`.
fn random_unit() -> f64 {
    let mut bytes = [0; 8];
    // Without randomness the delays are merely not spread.
    let _ = getrandom::fill(&mut bytes);
    #[expect(clippy::cast_precision_loss, reason = "53 random bits are plenty")]
    let unit = (u64::from_le_bytes(bytes) >> 11) as f64 / (1_u64 << 53) as f64;
    unit
}

/// A fresh id for a call on the server: the tool-call id (or the request's) and a random suffix.
pub(crate) fn call_id(request: &AskUserRequest, context: &AskContext) -> String {
    unique_id(context.tool_call_id.as_deref().unwrap_or(request.id()))
}

/// `base` (the tool-call id, cut to [`MAX_BASE_ID_CHARS`]) with a random suffix: providers reuse
/// call ids such as `call_0` across conversations, and an id names one question forever.
fn unique_id(base: &str) -> String {
    let mut bytes = [0; 8];
    if getrandom::fill(&mut bytes).is_err() {
        // No OS randomness: the time and a counter still make the id new for this process.
        static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        bytes = (Timestamp::now().unix_millis().cast_unsigned() ^ n.rotate_left(40)).to_le_bytes();
    }
    let base: String = base.chars().take(MAX_BASE_ID_CHARS).collect();
    format!("{base}-{:016x}", u64::from_le_bytes(bytes))
}

#[askuser_core::async_trait]
impl Answerer for HttpAnswerer {
    async fn answer(
        &self,
        request: AskUserRequest,
        context: AskContext,
    ) -> Result<AskUserResponse, AnswerError> {
        if self.secret_sink.is_none() && request.questions().iter().any(|q| q.kind() == QuestionKind::Secret)
        {
            // Nowhere to put the value: do not ask for it, and say that nobody was asked.
            return Ok(AskUserResponse::declined().with_answered_by(AnsweredBy::Unattended));
        }
        if self.joins_stored
            && let Some(stored) = self.stored_twin(&request).await
        {
            // Not withdrawn when this call is dropped: the question is the store's, kept for
            // whoever collects it later.
            let deadline = tokio::time::Instant::now() + self.limit(&request);
            let settled = self.settle(stored.id(), deadline).await;
            return self.settled(settled, &request, &context, deadline).await;
        }
        let id = call_id(&request, &context);
        self.answer_as(&id, request, context, None).await
    }
}

impl HttpAnswerer {
    /// Asks under `id` and waits: [`Answerer::answer`] with the id chosen; `on_asked` is notified
    /// once the server has the question (after [`on_link`](Self::on_link)).
    pub(crate) async fn answer_as(
        &self,
        id: &str,
        request: AskUserRequest,
        context: AskContext,
        on_asked: Option<&tokio::sync::Notify>,
    ) -> Result<AskUserResponse, AnswerError> {
        let id = id.to_owned();
        let limit = self.limit(&request);
        let deadline = tokio::time::Instant::now() + limit;
        // Armed before the ask: a call dropped while the ask is tried again withdraws it too.
        let mut guard = CancelOnDrop { answerer: Some(self.clone()), id: id.clone(), deadline };
        let asked = self.put(&id, &request, &context, limit, deadline).await;
        let link = match asked {
            Ok(link) => link,
            Err(error) => {
                guard.answerer = None;
                return Err(self.gave_up(error, deadline).await);
            }
        };
        if let Some(on_link) = &self.on_link {
            on_link(&link);
        }
        if let Some(on_asked) = on_asked {
            on_asked.notify_one();
        }
        let settled = self.settle(&id, deadline).await;
        guard.answerer = None;
        self.settled(settled, &request, &context, deadline).await
    }

    /// The call's outcome once its wait has ended (`settled`): the answer, with any secret
    /// values handed on, or why there is none.
    async fn settled(
        &self,
        settled: Result<Option<WaitReply>, ClientError>,
        request: &AskUserRequest,
        context: &AskContext,
        deadline: tokio::time::Instant,
    ) -> Result<AskUserResponse, AnswerError> {
        let reply = match settled {
            Ok(Some(reply)) => reply,
            Ok(None) => {
                tokio::time::sleep_until(deadline + PAST_DEADLINE).await;
                return Err(AnswerError::retry(askuser_core::TIMED_OUT));
            }
            Err(error) => return Err(self.gave_up(error, deadline).await),
        };
        let response = match Self::outcome(&reply.record) {
            // Timed out on the server: the caller's own timer (due at the same deadline) decides
            // what the model is told, as for any other answerer.
            Err(timed_out) if reply.record.state() == State::TimedOut => {
                tokio::time::sleep_until(deadline + PAST_DEADLINE).await;
                return Err(timed_out);
            }
            other => other?,
        };
        self.hand_secrets(request, &response, reply.secret_values.unwrap_or_default(), context)?;
        Ok(response)
    }
}

impl HttpAnswerer {
    /// `POST /v1/questions/{id}/cancel`: withdraws the question (a settled one stays as it is).
    pub(crate) async fn cancel(&self, id: &str) -> Result<askuser_store::PendingRecord, ClientError> {
        let url = format!("{}/v1/questions/{}/cancel", self.base, crate::encode_segment(id));
        self.call(self.client.post(url)).await
    }

    /// `POST /v1/questions/{id}/answer` with `response` (no secret values: those never leave the
    /// surface that took them), tried again until `deadline` while the server is unreachable.
    pub(crate) async fn post_answer(
        &self,
        id: &str,
        response: &AskUserResponse,
        deadline: tokio::time::Instant,
    ) -> Result<crate::wire::AnswerReply, ClientError> {
        let url = format!("{}/v1/questions/{}/answer", self.base, crate::encode_segment(id));
        let body = AnswerBody { response: response.clone(), secret_values: SecretValues::default() };
        self.retrying(deadline, || self.client.post(&url).json(&body).timeout(ASK_LIMIT)).await
    }

    /// The error a call ends with when the server failed: after a transient failure that lasted
    /// to the deadline, the timed-out outcome (the caller's own timer, due then, decides what the
    /// model is told); otherwise the failure.
    async fn gave_up(&self, error: ClientError, deadline: tokio::time::Instant) -> AnswerError {
        if !transient(&error) {
            return failure(error);
        }
        tokio::time::sleep_until(deadline + PAST_DEADLINE).await;
        AnswerError::retry(askuser_core::TIMED_OUT).with_source(error)
    }

    /// Gives the sink the value of each secret answer in `response`, from the wait's
    /// `secret_values` (taken out of the reply and zeroed as they drop). Only the names `request`
    /// asked for are taken: a server (or anyone between) naming another is refused, nothing
    /// written.
    fn hand_secrets(
        &self,
        request: &AskUserRequest,
        response: &AskUserResponse,
        mut values: SecretValues,
        context: &AskContext,
    ) -> Result<(), AnswerError> {
        for answer in &response.answers {
            let Some(name) = answer.secret_ref.as_deref().and_then(parse_secret_ref) else { continue };
            if !request
                .questions()
                .iter()
                .any(|q| q.kind() == QuestionKind::Secret && q.secret_name() == Some(name))
            {
                return Err(AnswerError::failed(format!(
                    "the answer server handed over a secret named {name:?}, which was not asked for: refused, nothing written"
                )));
            }
            let Some(value) = values.take(name) else {
                return Err(AnswerError::failed(format!(
                    "the answer server did not hand over the value of the secret {name} (another waiter \
                     took it, or it was held longer than the server keeps it)"
                )));
            };
            let sink = self.secret_sink.as_ref().ok_or_else(|| {
                AnswerError::failed(format!("a value for the secret {name} came, but no secret sink was set"))
            })?;
            sink.put(context, name, value).map_err(|e| {
                AnswerError::failed(format!("the secret sink did not take {name}")).with_source(e)
            })?;
        }
        Ok(())
    }
}

/// Cancels the question on the server when the waiting future is dropped before it settled.
/// Dropped at its deadline (the caller's timeout), the question is left to time out on the
/// server a moment later, so that it reads `timed_out`, not `cancelled`.
struct CancelOnDrop {
    answerer: Option<HttpAnswerer>,
    id: String,
    deadline: tokio::time::Instant,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(answerer) = self.answerer.take() else { return };
        if tokio::time::Instant::now() + Duration::from_millis(500) >= self.deadline {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let id = std::mem::take(&mut self.id);
        let withdrawals = Arc::clone(&answerer.withdrawals);
        let mut withdrawals = withdrawals.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // Finished cancels are let go of here, so the set holds only those still on their way.
        while withdrawals.try_join_next().is_some() {}
        withdrawals.spawn_on(
            async move {
                // A failure leaves the question to expire at its deadline.
                let _ = answerer.cancel(&id).await;
            },
            &runtime,
        );
    }
}
