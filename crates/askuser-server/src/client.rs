//! [`HttpAnswerer`]: an `Answerer` that asks through a remote answer server and long-polls for
//! the answer (feature `client`).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use askuser_core::{
    AnswerError, Answerer, AskContext, AskUserRequest, AskUserResponse, QuestionKind, SecretSink,
    SecretValue, parse_secret_ref,
};
use serde_json::{Value, json};

use crate::auth::ApiToken;

/// How long one wait request asks the server to hold: below the server's maximum.
const POLL: Duration = Duration::from_secs(50);

/// The server's deadline runs this much past the answerer's own, so that a caller's timeout
/// (the `AskUser` capability's, set to the same value) fires first and its timeout path applies.
const DEADLINE_GRACE: Duration = Duration::from_secs(2);

/// What [`HttpAnswerer::on_link`] calls.
type LinkHandler = dyn Fn(&str) + Send + Sync;

/// A request to the answer server failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server could not be reached, or its reply could not be read.
    #[error("cannot reach the answer server: {0}")]
    Http(#[from] reqwest::Error),
    /// The server answered with an error (its stable `error` code and message).
    #[error("the answer server said {status} {code}: {message}")]
    Api {
        /// The HTTP status.
        status: u16,
        /// The `error` code.
        code: String,
        /// The message.
        message: String,
    },
    /// The server's reply is not what this client expects (a different version?).
    #[error("unexpected reply from the answer server: {0}")]
    Unexpected(String),
}

/// Asks through a remote `askuser serve`: puts the request there (`POST /v1/questions`), hands
/// the page link to [`on_link`](Self::on_link), and long-polls (`GET /v1/questions/{id}/wait`)
/// until someone answers on any replica.
///
/// - The question waits on the server for [`timeout`](Self::timeout) (default: one hour, the
///   server's default); give the `AskUser` capability the same timeout so that its timeout policy
///   applies. A question that times out on the server fails the call with a retry carrying
///   [`askuser_core::TIMED_OUT`].
/// - A dropped future (the run was cancelled) cancels the question on the server, from a task on
///   the current Tokio runtime.
/// - A server restarting (`503 shutting_down`) or unreachable for a moment is waited out with
///   backoff until the deadline.
/// - Extended profile: the request's profile is sent along (the server must run `--profile
///   extended` for text and secret questions). A secret answer's value comes back once, in the
///   wait's reply, and goes to the [`secret_sink`](Self::secret_sink) before the answer returns;
///   without a sink, a batch with a secret question is declined without being asked.
///
/// ```no_run
/// use std::time::Duration;
/// use askuser_server::{ApiToken, HttpAnswerer};
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
    secret_sink: Option<Arc<dyn SecretSink>>,
}

impl fmt::Debug for HttpAnswerer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpAnswerer")
            .field("base", &self.base)
            .field("token", &self.token)
            .field("timeout", &self.timeout)
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
            secret_sink: None,
        })
    }

    /// Where the values of secret answers go (extended profile). Without one, a batch with a
    /// secret question is declined without being asked.
    #[must_use]
    pub fn secret_sink(mut self, sink: impl SecretSink + 'static) -> Self {
        self.secret_sink = Some(Arc::new(sink));
        self
    }

    /// How long each question waits for its answer. Default: one hour.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.min(crate::MAX_TIMEOUT.saturating_sub(DEADLINE_GRACE));
        self
    }

    /// Called with each question's page link once the server has it (print it, send it).
    #[must_use]
    pub fn on_link(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_link = Some(Arc::new(f));
        self
    }

    async fn call(&self, request: reqwest::RequestBuilder) -> Result<Value, ClientError> {
        let response = request.bearer_auth(self.token.expose()).send().await?;
        let status = response.status();
        let body: Value = response.json().await?;
        if status.is_success() {
            return Ok(body);
        }
        let text = |key: &str| body.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        Err(ClientError::Api { status: status.as_u16(), code: text("error"), message: text("message") })
    }

    /// `POST /v1/questions`; returns the page link.
    async fn put(&self, request: &AskUserRequest, context: &AskContext) -> Result<String, ClientError> {
        let mut body = json!({
            "arguments": { "questions": request.questions().as_slice() },
            "id": request.id(),
            "timeout_secs": (self.timeout + DEADLINE_GRACE).as_secs_f64(),
            "profile": request.profile(),
        });
        if let Some(session) = &context.session_id {
            body["session_id"] = json!(session);
        }
        let reply = self.call(self.client.post(format!("{}/v1/questions", self.base)).json(&body)).await?;
        reply
            .get("url")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| ClientError::Unexpected("no url in the ask reply".to_owned()))
    }

    /// Long-polls until the question leaves `pending`; returns the wait's reply.
    async fn settle(&self, id: &str) -> Result<Value, ClientError> {
        let url = format!("{}/v1/questions/{}/wait", self.base, crate::paths::encode_segment(id));
        let deadline = tokio::time::Instant::now() + self.timeout + DEADLINE_GRACE * 2;
        let mut backoff = Duration::from_millis(200);
        loop {
            let poll = self
                .client
                .get(&url)
                .query(&[("timeout_secs", POLL.as_secs())])
                .timeout(POLL + Duration::from_secs(15));
            match self.call(poll).await {
                Ok(reply) if reply.get("done").and_then(Value::as_bool) == Some(true) => {
                    if reply.get("record").is_none() {
                        return Err(ClientError::Unexpected("no record".to_owned()));
                    }
                    return Ok(reply);
                }
                Ok(_) => backoff = Duration::from_millis(200),
                // A restarting server or a network blip: wait it out until the deadline.
                Err(error @ (ClientError::Http(_) | ClientError::Api { status: 502..=504, .. })) => {
                    if tokio::time::Instant::now() + backoff > deadline {
                        return Err(error);
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                }
                Err(error) => return Err(error),
            }
        }
    }

    fn outcome(record: &Value) -> Result<AskUserResponse, AnswerError> {
        match record.get("state").and_then(Value::as_str) {
            Some("answered" | "declined") => {
                serde_json::from_value(record.get("response").cloned().unwrap_or(Value::Null)).map_err(|e| {
                    AnswerError::failed("the answer server sent a response this client cannot read")
                        .with_source(e)
                })
            }
            Some("timed_out") => Err(AnswerError::retry(askuser_core::TIMED_OUT)),
            other => Err(AnswerError::failed(format!(
                "the question was {} on the answer server",
                other.unwrap_or("closed")
            ))),
        }
    }
}

fn failure(error: ClientError) -> AnswerError {
    AnswerError::failed("asking through the answer server failed").with_source(error)
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
            // Nowhere to put the value: do not ask for it.
            return Ok(AskUserResponse::declined());
        }
        let link = self.put(&request, &context).await.map_err(failure)?;
        if let Some(on_link) = &self.on_link {
            on_link(&link);
        }
        let deadline = tokio::time::Instant::now() + self.timeout;
        let mut guard = CancelOnDrop { answerer: Some(self.clone()), id: request.id().to_owned(), deadline };
        let settled = self.settle(request.id()).await;
        guard.answerer = None;
        let mut reply = settled.map_err(failure)?;
        let response = Self::outcome(&reply["record"])?;
        self.hand_secrets(&request, &response, reply.get_mut("secret_values"), &context)?;
        Ok(response)
    }
}

impl HttpAnswerer {
    /// Gives the sink the value of each secret answer in `response`, from the wait's
    /// `secret_values` (taken out of the reply and zeroed as they drop). Only the names `request`
    /// asked for are taken: a server (or anyone between) naming another is refused, nothing
    /// written.
    fn hand_secrets(
        &self,
        request: &AskUserRequest,
        response: &AskUserResponse,
        values: Option<&mut Value>,
        context: &AskContext,
    ) -> Result<(), AnswerError> {
        let mut values = match values.map(Value::take) {
            Some(Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
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
            let Some(Value::String(value)) = values.remove(name) else {
                return Err(AnswerError::failed(format!(
                    "the answer server did not hand over the value of the secret {name} (another waiter \
                     took it, or it was held longer than the server keeps it)"
                )));
            };
            let sink = self.secret_sink.as_ref().ok_or_else(|| {
                AnswerError::failed(format!("a value for the secret {name} came, but no secret sink was set"))
            })?;
            sink.put(context, name, SecretValue::new(value)).map_err(|e| {
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
        runtime.spawn(async move {
            let url = format!("{}/v1/questions/{}/cancel", answerer.base, crate::paths::encode_segment(&id));
            // A failure leaves the question to expire at its deadline.
            let _ = answerer.call(answerer.client.post(url)).await;
        });
    }
}
