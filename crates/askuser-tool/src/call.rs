//! One tool call in ([`ToolCall`]) and what the host does with it ([`CallOutcome`]).

use askuser_core::{AnswerError, AskUserResult, ValidationError, Validator};
use serde_json::Value;

use crate::error::CallError;
use crate::pending::PendingQuestion;

/// Tool-call arguments as the framework delivers them: JSON text, or an already-parsed value.
/// Both give the same verdicts.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Arguments<'a> {
    /// The argument JSON text; empty text counts as `{}`. Subject to the argument-size cap.
    Text(&'a str),
    /// Arguments already parsed.
    Value(&'a Value),
}

impl Arguments<'_> {
    pub(crate) fn validate(self, validator: Validator) -> Result<askuser_core::Questions, ValidationError> {
        match self {
            Self::Text(text) => validator.validate_json(text),
            Self::Value(value) => validator.validate_value(value),
        }
    }
}

impl<'a> From<&'a str> for Arguments<'a> {
    fn from(text: &'a str) -> Self {
        Self::Text(text)
    }
}

impl<'a> From<&'a String> for Arguments<'a> {
    fn from(text: &'a String) -> Self {
        Self::Text(text)
    }
}

impl<'a> From<&'a Value> for Arguments<'a> {
    fn from(value: &'a Value) -> Self {
        Self::Value(value)
    }
}

/// One tool call as the model made it: its id, the tool name, and the arguments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolCall<'a> {
    call_id: &'a str,
    tool_name: &'a str,
    arguments: Arguments<'a>,
}

impl<'a> ToolCall<'a> {
    /// A call of `ask_user_question` ([`TOOL_NAME`](crate::TOOL_NAME)) with the model's id for
    /// it. `arguments` is JSON text (`&str`, `&String`) or a `&serde_json::Value`.
    ///
    /// The tool name is set apart ([`with_tool_name`](Self::with_tool_name)), so the id and the
    /// name, both strings, cannot be swapped by mistake.
    #[must_use]
    pub fn new(call_id: &'a str, arguments: impl Into<Arguments<'a>>) -> Self {
        Self { call_id, tool_name: crate::TOOL_NAME, arguments: arguments.into() }
    }

    /// The same call naming `tool_name`, as the model named it: pass the name through from the
    /// framework whenever tools are routed by name (a [`ToolSet`](crate::ToolSet) with prefixes),
    /// so that a call of another tool fails as [`CallError::WrongTool`](crate::CallError)
    /// instead of being answered. Default: [`TOOL_NAME`](crate::TOOL_NAME).
    #[must_use]
    pub fn with_tool_name(self, tool_name: &'a str) -> Self {
        Self { tool_name, ..self }
    }

    /// The model's id for the call.
    #[must_use]
    pub fn call_id(&self) -> &'a str {
        self.call_id
    }

    /// The tool the call names.
    #[must_use]
    pub fn tool_name(&self) -> &'a str {
        self.tool_name
    }

    /// The arguments.
    #[must_use]
    pub fn arguments(&self) -> Arguments<'a> {
        self.arguments
    }
}

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
