//! The host side: whoever answers ([`Answerer`]), what it knows about the call ([`AskContext`]),
//! how it fails ([`AnswerError`]), the answerer for when nobody is there ([`DefaultsResponder`]),
//! and where a secret answer's value goes ([`SecretSink`]).

use std::collections::HashMap;
use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::sync::Mutex;

use crate::model::{AnsweredBy, AskUserAnswer, AskUserRequest, AskUserResponse, QuestionOption};
use crate::profile::QuestionKind;
use crate::secret::{SecretError, SecretValue, parse_secret_ref};

/// Puts a validated request in front of whoever answers and returns their response.
///
/// A plain async closure `|request, context| async move { … }` qualifies. The future must be
/// cancellable: dropping it is how a timeout or a cancelled run stops it, so it must not leave a
/// blocking read behind.
///
/// The response is checked against the request before the model sees it; a response that does
/// not fit fails the call. Return [`AskUserResponse::declined`] when the person declines.
///
/// ```
/// use askuser_core::{AnswerError, Answerer, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse};
///
/// let first = |request: AskUserRequest, _context: AskContext| async move {
///     let answers = request
///         .questions()
///         .iter()
///         .map(|q| AskUserAnswer::picked(q.header(), [q.options()[0].label()]))
///         .collect();
///     Ok::<_, AnswerError>(AskUserResponse::answered(answers))
/// };
/// fn takes(_: &dyn Answerer) {}
/// takes(&first);
/// ```
#[async_trait::async_trait]
pub trait Answerer: Send + Sync {
    /// Asks, and waits for the answer.
    ///
    /// # Errors
    ///
    /// [`AnswerError::retry`] to send the model a message instead of a result;
    /// [`AnswerError::interrupted`] when the person interrupted the whole run;
    /// [`AnswerError::failed`] for anything else, which fails the call.
    async fn answer(
        &self,
        request: AskUserRequest,
        context: AskContext,
    ) -> Result<AskUserResponse, AnswerError>;
}

#[async_trait::async_trait]
impl<F, Fut> Answerer for F
where
    F: Fn(AskUserRequest, AskContext) -> Fut + Send + Sync,
    Fut: Future<Output = Result<AskUserResponse, AnswerError>> + Send,
{
    async fn answer(
        &self,
        request: AskUserRequest,
        context: AskContext,
    ) -> Result<AskUserResponse, AnswerError> {
        self(request, context).await
    }
}

/// A shared answerer answers as the one it shares. Written out rather than through
/// `#[async_trait]`, which would box a second future around the inner answerer's boxed one on
/// every call (a capability holds its answerer as an `Arc<dyn Answerer>`).
impl<T: Answerer + ?Sized> Answerer for std::sync::Arc<T> {
    fn answer<'s, 'f>(
        &'s self,
        request: AskUserRequest,
        context: AskContext,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<AskUserResponse, AnswerError>> + Send + 'f>>
    where
        's: 'f,
        Self: 'f,
    {
        (**self).answer(request, context)
    }
}

/// What the host knows about the call being answered: enough to route it to the right person.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct AskContext {
    /// The conversation or client session the call belongs to.
    pub session_id: Option<String>,
    /// The model's id for this tool call.
    pub tool_call_id: Option<String>,
    /// The agent turn (model response) the call came in.
    pub turn_id: Option<String>,
    /// Who asks, as the host knows it (an MCP client's name and version and the project it works
    /// in): an answerer that shows questions to a person shows it beside them. Untrusted text.
    pub asked_by: Option<String>,
}

impl AskContext {
    /// An empty context.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// With a session id. Default: none.
    #[must_use]
    pub fn with_session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// With a tool-call id. Default: none.
    #[must_use]
    pub fn with_tool_call_id(mut self, id: impl Into<String>) -> Self {
        self.tool_call_id = Some(id.into());
        self
    }

    /// With a turn id. Default: none.
    #[must_use]
    pub fn with_turn_id(mut self, id: impl Into<String>) -> Self {
        self.turn_id = Some(id.into());
        self
    }

    /// With who asks. Default: none.
    #[must_use]
    pub fn with_asked_by(mut self, label: impl Into<String>) -> Self {
        self.asked_by = Some(label.into());
        self
    }
}

/// What kind of failure an [`AnswerError`] is, and so what the host does with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AnswerErrorKind {
    /// Tell the model the message, as a retry, and let it carry on.
    Retry,
    /// The person interrupted (Ctrl-C): the host should stop the run.
    Interrupted,
    /// The answerer failed: the call fails.
    Failed,
}

/// An answerer's failure.
pub struct AnswerError {
    kind: AnswerErrorKind,
    message: String,
    source: Option<Box<dyn StdError + Send + Sync>>,
}

impl AnswerError {
    /// A message for the model, sent as a retry.
    #[must_use]
    pub fn retry(message: impl Into<String>) -> Self {
        Self { kind: AnswerErrorKind::Retry, message: message.into(), source: None }
    }

    /// The person interrupted the run.
    #[must_use]
    pub fn interrupted() -> Self {
        Self {
            kind: AnswerErrorKind::Interrupted,
            message: "interrupted by the user".to_owned(),
            source: None,
        }
    }

    /// A failure that fails the call.
    #[must_use]
    pub fn failed(message: impl Into<String>) -> Self {
        Self { kind: AnswerErrorKind::Failed, message: message.into(), source: None }
    }

    /// This error with an underlying cause.
    #[must_use]
    pub fn with_source(mut self, source: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// What kind of failure this is.
    #[must_use]
    pub fn kind(&self) -> AnswerErrorKind {
        self.kind
    }

    /// The message (for a retry: what the model is told).
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Debug for AnswerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnswerError")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .field("source", &self.source)
            .finish()
    }
}

impl fmt::Display for AnswerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for AnswerError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn StdError + 'static))
    }
}

/// Answers at once, with no person: per question, the options the model marked `default`
/// (extended profile), else every option whose label ends with `(Recommended)` (ignoring case;
/// only the first on a single-select question), else the first option. Marked
/// `answered_by: unattended`, so the model is told these are defaults.
///
/// A batch holding a text or secret question has no unattended value: it is declined (still
/// marked `unattended`), never answered with something empty.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DefaultsResponder;

impl DefaultsResponder {
    /// A responder.
    #[must_use]
    pub fn new() -> Self {
        Self
    }

    /// The default response to `request`, marked as given by `by`: the defaults, or a decline
    /// when the batch holds a text or secret question.
    #[must_use]
    pub fn respond(request: &AskUserRequest, by: AnsweredBy) -> AskUserResponse {
        if !request.questions().has_defaults() {
            return AskUserResponse::declined().with_answered_by(by);
        }
        AskUserResponse::answered(default_answers(request)).with_answered_by(by)
    }
}

#[async_trait::async_trait]
impl Answerer for DefaultsResponder {
    async fn answer(
        &self,
        request: AskUserRequest,
        _context: AskContext,
    ) -> Result<AskUserResponse, AnswerError> {
        Ok(Self::respond(&request, AnsweredBy::Unattended))
    }
}

/// Whether a label ends with `(Recommended)`, ignoring ASCII case.
fn recommended(label: &str) -> bool {
    const MARK: &str = "(recommended)";
    label.len() >= MARK.len()
        && label.is_char_boundary(label.len() - MARK.len())
        && label[label.len() - MARK.len()..].eq_ignore_ascii_case(MARK)
}

/// The default answers to the choice questions of `request` (see [`DefaultsResponder`]); a text
/// or secret question has none and is left out.
#[must_use]
pub fn default_answers(request: &AskUserRequest) -> Vec<AskUserAnswer> {
    request
        .questions()
        .iter()
        .filter(|q| q.kind() == QuestionKind::Choice)
        .map(|q| {
            let mut picks: Vec<&str> = q.declared_defaults().map(QuestionOption::label).collect();
            if picks.is_empty() {
                picks = q.options().iter().map(QuestionOption::label).filter(|l| recommended(l)).collect();
            }
            if !q.multi_select() {
                picks.truncate(1);
            }
            if picks.is_empty() {
                picks.push(q.options()[0].label());
            }
            let answer = AskUserAnswer::picked(q.header(), picks);
            match q.id() {
                Some(id) => answer.with_id(id),
                None => answer,
            }
        })
        .collect()
}

/// Where a secret answer's value goes: the host's vault, its environment for tools, a file, or
/// memory. An answerer hands the value over *before* returning the answer, which carries only
/// `session:NAME`; a tool later resolves that reference through the same host.
///
/// The name is the question's `secret_name` (`[A-Za-z_][A-Za-z0-9_]{0,63}`); `context` says
/// whose session it belongs to.
///
/// Async, so that a sink that writes a file or calls a vault does its blocking work off the
/// answerer's thread (`askuser_tool::SecretFile` locks and syncs on a blocking thread).
#[async_trait::async_trait]
pub trait SecretSink: Send + Sync {
    /// Stores `value` under `name` for the session in `context`, replacing an earlier value.
    ///
    /// # Errors
    ///
    /// The sink could not store it; the answerer should then fail the call rather than answer.
    async fn put(&self, context: &AskContext, name: &str, value: SecretValue) -> Result<(), SecretError>;
}

/// Secrets kept in memory, per session: for tests and single-process hosts.
///
/// ```
/// use askuser_core::{AskContext, InMemorySecretSink, SecretSink, SecretValue};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), askuser_core::SecretError> {
/// let sink = InMemorySecretSink::new();
/// let context = AskContext::new().with_session_id("s1");
/// sink.put(&context, "API_TOKEN", SecretValue::new("t0k3n".to_owned())).await?;
/// let value = sink.resolve(Some("s1"), "session:API_TOKEN").expect("stored");
/// assert_eq!(value.expose(), "t0k3n");
/// assert!(sink.resolve(Some("s2"), "session:API_TOKEN").is_none());
/// # Ok(())
/// # }
/// ```
#[derive(Default)]
pub struct InMemorySecretSink {
    secrets: Mutex<HashMap<(Option<String>, String), SecretValue>>,
}

impl InMemorySecretSink {
    /// An empty sink.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The value a `session:NAME` reference names in `session`, if stored.
    #[must_use]
    pub fn resolve(&self, session: Option<&str>, reference: &str) -> Option<SecretValue> {
        let name = parse_secret_ref(reference)?;
        let secrets = self.secrets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        secrets.get(&(session.map(str::to_owned), name.to_owned())).cloned()
    }

    /// Forgets every secret of `session` (their values are zeroed as they drop).
    pub fn clear_session(&self, session: Option<&str>) {
        let mut secrets = self.secrets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        secrets.retain(|(s, _), _| s.as_deref() != session);
    }

    /// How many secrets are stored.
    #[must_use]
    pub fn len(&self) -> usize {
        self.secrets.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len()
    }

    /// Whether no secret is stored.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[async_trait::async_trait]
impl SecretSink for InMemorySecretSink {
    async fn put(&self, context: &AskContext, name: &str, value: SecretValue) -> Result<(), SecretError> {
        let mut secrets = self.secrets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        secrets.insert((context.session_id.clone(), name.to_owned()), value);
        Ok(())
    }
}

impl fmt::Debug for InMemorySecretSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secrets = self.secrets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut names: Vec<_> = secrets.keys().collect();
        names.sort();
        f.debug_struct("InMemorySecretSink").field("names", &names).finish()
    }
}

#[async_trait::async_trait]
impl<T: SecretSink + ?Sized> SecretSink for std::sync::Arc<T> {
    async fn put(&self, context: &AskContext, name: &str, value: SecretValue) -> Result<(), SecretError> {
        (**self).put(context, name, value).await
    }
}

#[cfg(test)]
mod tests {
    use super::recommended;

    #[test]
    fn recommended_suffix() {
        assert!(recommended("Refactor (Recommended)"));
        assert!(recommended("Refactor (RECOMMENDED)"));
        assert!(recommended("(recommended)"));
        assert!(!recommended("Recommended"));
        assert!(!recommended("(Recommended) first"));
        assert!(!recommended("ü(Recommended"));
    }
}
