//! What the host does with a tool call ([`CallOutcome`]), and the message for the model
//! instead of a result ([`Retry`]).

use askuser_core::{AnswerError, AskUserResult, ValidationError};

use crate::error::CallError;
use crate::pending::PendingQuestion;

/// What to do with a tool call, for any framework.
///
/// | variant | the host |
/// | --- | --- |
/// | [`Completed`](Self::Completed) | sends [`AskUserResult::text`] as the tool result (answers, declined, timed out, defaults) |
/// | [`Retry`](Self::Retry) | sends [`Retry::text`] as a retry prompt / error result the model can act on |
/// | [`Deferred`](Self::Deferred) | pauses the run, stores the [`PendingQuestion`], resumes later |
/// | [`Failed`](Self::Failed) | fails the call (or the run, when [`CallError::is_interrupted`]) |
#[derive(Debug)]
#[non_exhaustive]
pub enum CallOutcome {
    /// The call finished: send the result text to the model.
    Completed(AskUserResult),
    /// The model should fix its call (or was asked to by the answerer): send the retry text.
    Retry(Retry),
    /// No answerer: the question waits for the host to answer it later.
    Deferred(PendingQuestion),
    /// The call fails.
    Failed(CallError),
}

impl CallOutcome {
    /// The text the model receives now: the result or the retry text. `None` for a deferred or
    /// failed call.
    #[must_use]
    pub fn model_text(&self) -> Option<&str> {
        match self {
            Self::Completed(result) => Some(result.text()),
            Self::Retry(retry) => Some(retry.text()),
            Self::Deferred(_) | Self::Failed(_) => None,
        }
    }
}

/// A message for the model instead of a result: the call was rejected, or the answerer asked for
/// a retry.
#[derive(Debug)]
pub struct Retry {
    text: String,
    reason: RetryReason,
}

/// Why a [`Retry`] was sent.
#[derive(Debug)]
#[non_exhaustive]
pub enum RetryReason {
    /// The arguments broke the schema or a rule; nobody saw the questions and no event fired.
    InvalidArguments(ValidationError),
    /// The answerer returned [`AnswerError::retry`].
    Answerer(AnswerError),
}

impl Retry {
    pub(crate) fn invalid(error: ValidationError) -> Self {
        Self { text: error.retry_payload(), reason: RetryReason::InvalidArguments(error) }
    }

    pub(crate) fn answerer(error: AnswerError) -> Self {
        Self { text: error.message().to_owned(), reason: RetryReason::Answerer(error) }
    }

    /// What the model receives: for invalid arguments, the retry JSON
    /// (`{"error":"invalid_arguments","message":…,"problems":[…]}`); for an answerer's retry, its
    /// message verbatim.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Why the retry was sent.
    #[must_use]
    pub fn reason(&self) -> &RetryReason {
        &self.reason
    }

    /// The text, owned.
    #[must_use]
    pub fn into_text(self) -> String {
        self.text
    }
}
