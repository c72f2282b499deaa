//! [`Racing`]: a local answerer and an answer server's surfaces, asked at once; the first answer
//! wins (feature `http`).

use askuser_core::{
    AnswerError, AnswerErrorKind, Answerer, AskContext, AskUserRequest, AskUserResponse, QuestionKind,
};

use crate::http::{ClientError, HttpAnswerer};

/// The longest the local surface waits for the server to take the question before it opens.
const LOCAL_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// The longest a local answer is tried on an unreachable server before the call returns it
/// anyway: the person answered; the server's copy is withdrawn or lapses with its lease.
const POST_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);
use crate::wire::ErrorCode;

/// Asks through a local answerer (a terminal menu, an MCP host's form) and an answer server (its
/// page, its notices, its chat channels) at once: the local surface opens as soon as the server
/// has the question (after [`HttpAnswerer::on_link`]), or after 5 s while the server cannot be
/// reached. The first answer wins; the other surface
/// is retracted:
///
/// - answered on the server (any replica, any surface): the local answerer's future is dropped,
///   which closes its menu or cancels its form;
/// - answered locally: the answer is sent to the server (`POST …/answer`, checked there like any
///   other), so the page, the notices and the chat messages say it was answered. Should someone
///   have answered on the server a moment before, the server's answer stands (`409
///   already_answered`) and is the one returned: one answer, the first, everywhere.
/// - The local answerer fails (no terminal, a host without forms): the server alone decides.
///   The server cannot be reached for good: the local answerer alone decides (the question on
///   the server is withdrawn).
/// - The person interrupts locally (Ctrl-C): the call ends interrupted and the question on the
///   server is withdrawn.
/// - A batch with a secret question is asked locally only: a secret's value never travels to
///   the server when the person is at hand.
///
/// ```no_run
/// use askuser_client::{ApiToken, HttpAnswerer, Racing};
/// use askuser_core::{Answerer, DefaultsResponder};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = HttpAnswerer::new("http://127.0.0.1:8765", ApiToken::for_client(None)?)?;
/// let racing = Racing::new(server, DefaultsResponder::new());
/// fn takes(_: &dyn Answerer) {}
/// takes(&racing);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Racing<L> {
    server: HttpAnswerer,
    local: L,
    settled_elsewhere: Option<Tell>,
}

/// Told the server's answer when it wins.
type Tell = std::sync::Arc<dyn Fn(&AskUserResponse) + Send + Sync>;

impl<L: std::fmt::Debug> std::fmt::Debug for Racing<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Racing")
            .field("server", &self.server)
            .field("local", &self.local)
            .finish_non_exhaustive()
    }
}

impl<L: Answerer> Racing<L> {
    /// Races `local` against the server `server` asks.
    #[must_use]
    pub fn new(server: HttpAnswerer, local: L) -> Self {
        Self { server, local, settled_elsewhere: None }
    }

    /// Called with the server's answer (or decline) when it wins, before the local answerer's
    /// future is dropped: tell the local surface what happened (a terminal menu's
    /// `askuser_terminal::Closing`), so it does not say "withdrawn" above an answer.
    #[must_use]
    pub fn on_settled_elsewhere(mut self, f: impl Fn(&AskUserResponse) + Send + Sync + 'static) -> Self {
        self.settled_elsewhere = Some(std::sync::Arc::new(f));
        self
    }
}

#[askuser_core::async_trait]
impl<L: Answerer> Answerer for Racing<L> {
    async fn answer(
        &self,
        request: AskUserRequest,
        context: AskContext,
    ) -> Result<AskUserResponse, AnswerError> {
        if request.questions().iter().any(|q| q.kind() == QuestionKind::Secret) {
            return self.local.answer(request, context).await;
        }
        let id = crate::http::call_id(&request, &context);
        let deadline = tokio::time::Instant::now() + self.server.limit(&request);
        // The local surface opens once the server has the question (its link printed first, not
        // across a menu being drawn), once the server failed for good, or after LOCAL_GRACE
        // while the server cannot be reached.
        let asked = tokio::sync::Notify::new();
        let remote = self.server.answer_as(&id, request.clone(), context.clone(), Some(&asked));
        let local = async {
            let _ = tokio::time::timeout(LOCAL_GRACE, asked.notified()).await;
            self.local.answer(request, context).await
        };
        tokio::pin!(remote, local);
        tokio::select! {
            answered = &mut remote => match answered {
                Ok(response) => {
                    if let Some(tell) = &self.settled_elsewhere {
                        tell(&response);
                    }
                    Ok(response)
                }
                Err(error) if error.kind() == AnswerErrorKind::Failed => {
                    tracing::warn!(error = %askuser_tool::exit::with_causes(&error), "the answer server failed; the local answer decides");
                    asked.notify_one();
                    local.await
                }
                Err(other) => Err(other),
            },
            answered = &mut local => match answered {
                Ok(response) => self.settle_locally(&id, response, deadline).await,
                Err(error) if error.kind() == AnswerErrorKind::Failed => {
                    tracing::debug!(error = %askuser_tool::exit::with_causes(&error), "the local answerer failed; the answer server decides");
                    remote.await
                }
                Err(other) => Err(other),
            },
        }
    }
}

impl<L> Racing<L> {
    /// A local answer: sent to the server (tried for at most [`POST_LIMIT`]), where it is checked
    /// and retracts the other surfaces; an answer the server had already (`409`) wins instead.
    /// The server's future is dropped after this (its cancel then changes nothing on a settled
    /// question).
    async fn settle_locally(
        &self,
        id: &str,
        response: AskUserResponse,
        deadline: tokio::time::Instant,
    ) -> Result<AskUserResponse, AnswerError> {
        let deadline = deadline.min(tokio::time::Instant::now() + POST_LIMIT);
        match self.server.post_answer(id, &response, deadline).await {
            Ok(_) => Ok(response),
            Err(ClientError::Api { code: Some(ErrorCode::AlreadyAnswered), record: Some(first), .. }) => {
                match first.response() {
                    Some(first) => Ok(first.clone()),
                    None => Ok(response),
                }
            }
            Err(error) => {
                // The person's answer stands; the server's copy of the question is withdrawn.
                tracing::warn!(error = %askuser_tool::exit::with_causes(&error), "the local answer could not be sent to the answer server");
                Ok(response)
            }
        }
    }
}
