//! What can go wrong when building a capability, combining capabilities, or handling a call.

use askuser_core::{AnswerError, AnswerErrorKind, ResponseError, ValidationError};

/// A capability configuration that cannot work, reported by [`AskUserBuilder::build`](crate::AskUserBuilder::build).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A timeout with no answerer: a deferred call has nothing to wait on.
    #[error("a timeout needs an answerer: a deferred call has nothing to wait on")]
    TimeoutWithoutAnswerer,
    /// A zero timeout.
    #[error("the timeout must be positive")]
    ZeroTimeout,
    /// An empty capability id.
    #[error("the capability id must not be empty")]
    EmptyId,
}

/// Capabilities that cannot share one agent, reported by [`ToolSetBuilder::build`](crate::ToolSetBuilder::build).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CombineError {
    /// Two capabilities with the same id but different configuration.
    #[error(
        "two capabilities with id {id:?} differ in {}; configure them alike, or give each its own id and one a tool-name prefix",
        fields.join(", ")
    )]
    Conflict {
        /// The shared id.
        id: String,
        /// The configuration fields that differ, such as `answerer` or `timeout`.
        fields: Vec<&'static str>,
    },
    /// Two capabilities with different ids that register the same tool name.
    #[error(
        "capabilities {first_id:?} and {second_id:?} both register the tool {tool_name:?}; give one a tool-name prefix"
    )]
    DuplicateToolName {
        /// The tool name both register.
        tool_name: String,
        /// The id of the first capability.
        first_id: String,
        /// The id of the second capability.
        second_id: String,
    },
    /// A prefixed tool name that a provider rejects: every provider accepts 1–64 characters from
    /// `a-z A-Z 0-9 _ -` starting with a letter or `_`.
    #[error(
        "tool name {tool_name:?} is not 1-64 characters from a-z, A-Z, 0-9, _ and - starting with a letter or _"
    )]
    InvalidToolName {
        /// The offending name.
        tool_name: String,
    },
}

/// Why a tool call failed: the host fails the call (or the run) rather than telling the model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The call names another tool.
    #[error("tool call for {found:?} reached the {expected:?} tool")]
    WrongTool {
        /// The tool this capability registers.
        expected: String,
        /// The tool the call names.
        found: String,
    },
    /// The answerer returned a response that does not fit the request: a bug in the answerer.
    #[error("the answerer's response does not fit the request")]
    Response(#[source] ResponseError),
    /// The answerer failed, or the person interrupted the run ([`CallError::is_interrupted`]).
    #[error("the answerer failed")]
    Answerer(#[source] AnswerError),
    /// The capability has a timeout, but the call runs outside a Tokio runtime with its time
    /// driver enabled: nobody was asked.
    #[error("a timeout needs a Tokio runtime with time enabled (`enable_time()`); nobody was asked")]
    NoTimer,
}

impl CallError {
    /// Whether the person interrupted the run (Ctrl-C in a terminal answerer): the host should
    /// stop the run, not only this call.
    #[must_use]
    pub fn is_interrupted(&self) -> bool {
        matches!(self, Self::Answerer(e) if e.kind() == AnswerErrorKind::Interrupted)
    }
}

/// A tool call that cannot be turned back into a pending question.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RebuildError {
    /// The call names another tool.
    #[error("tool call for {found:?} is not an {expected:?} call")]
    WrongTool {
        /// The tool name expected.
        expected: String,
        /// The tool the call names.
        found: String,
    },
    /// The arguments do not validate (they were not the ones that were deferred).
    #[error("the tool-call arguments are invalid")]
    InvalidArguments(#[source] ValidationError),
}
