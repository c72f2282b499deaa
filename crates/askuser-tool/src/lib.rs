//! The `ask_user_question` tool for any Rust agent loop: its definition and schema dialects, and
//! the [`AskUser`] capability that turns each tool call into exactly what to send the model.
//!
//! Register the tool with [`AskUser::definition`], hand every `ask_user_question` call to
//! [`AskUser::call`], and map the [`CallOutcome`] onto your framework: a result text, a retry
//! text, a [`PendingQuestion`] to answer later (no answerer: the run pauses), or an error that
//! fails the call. Validation, checking and rendering come from `askuser-core`, so the text is
//! byte-identical to the reference implementation's.
//!
//! ```
//! use std::time::Duration;
//!
//! use askuser_core::{AnswerError, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse};
//! use askuser_tool::{AskUser, CallOutcome, Dialect, ToolCall};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Whoever answers: here a script that picks the first option.
//! let first = |request: AskUserRequest, _: AskContext| async move {
//!     let answers = request
//!         .questions()
//!         .iter()
//!         .map(|q| AskUserAnswer::picked(q.header(), [q.options()[0].label()]))
//!         .collect();
//!     Ok::<_, AnswerError>(AskUserResponse::answered(answers))
//! };
//! let ask_user = AskUser::builder().answerer(first).timeout(Duration::from_secs(300)).build()?;
//!
//! // What to register with the model.
//! let definition = ask_user.definition(Dialect::OpenAiStrict);
//! assert_eq!(definition.name, "ask_user_question");
//!
//! // What the model gets back for one call.
//! let args = r#"{"questions":[{"header":"Scope","question":"Fix only the bug, or refactor too?",
//!     "options":[{"label":"Only the bug"},{"label":"Refactor too"}]}]}"#;
//! let rt = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
//! let outcome = rt.block_on(ask_user.call(ToolCall::new("call_1", args), AskContext::new()));
//! match outcome {
//!     CallOutcome::Completed(result) => assert_eq!(result.text(), r#"{"Scope":["Only the bug"]}"#),
//!     other => panic!("unexpected {other:?}"),
//! }
//!
//! // A malformed call never reaches the answerer: the model gets a retry it can act on.
//! let bad = ToolCall::new("call_2", r#"{"questions":[]}"#);
//! let outcome = rt.block_on(ask_user.call(bad, AskContext::new()));
//! assert!(matches!(outcome, CallOutcome::Retry(_)));
//! # Ok(())
//! # }
//! ```
//!
//! # Profiles
//!
//! By default the capability is the reference implementation's multiple-choice tool, to the byte.
//! [`AskUserBuilder::profile`] with [`askuser_core::Profile::Extended`] switches on the extended
//! profile: text and secret questions, ids, declared defaults, `timeout_seconds` (up to
//! [`AskUserBuilder::max_timeout`]), deadline stamps and a [`NudgeEvent`], and results the model
//! reads as data. Its description, instruction and schemas follow ([`EXTENDED_DESCRIPTION`],
//! [`parameters_for`]).
//!
//! # Which crate do I need?
//!
//! Every askuser crate, what it is for, its heavy dependencies and its features: the table in
//! the [README](https://example.invalid/askuser#which-crate-do-i-need).
//!
//! # Feature flags
//!
//! | feature | default | what it adds |
//! | --- | --- | --- |
//! | `async-openai` | off | the `openai` module: the tool as async-openai 0.43's `ChatCompletionTools` (strict), its tool calls as [`ToolCall`]s, results as tool messages; types only, no HTTP client |
//! | `tracing` | off | one `ask_user_question` span per call (capability, tool-call id, request id, outcome); the questions and the result text are recorded only when `include_content` is true |
//!
//! # Guides
//!
//! `docs/answerer.md` (writing an answerer), `docs/agent-loop.md` (wiring the capability into rig,
//! async-openai or your own loop) and `docs/wire.md` (the wire shapes) in the repository.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod call;
mod capability;
mod definition;
mod error;
mod event;
pub mod exit;
#[cfg(feature = "async-openai")]
pub mod openai;
mod outcome;
mod pending;
mod router;
mod schema;
mod secret_file;
mod toolset;

pub use call::{Arguments, ToolCall};
pub use capability::{AskUser, AskUserBuilder, DEFAULT_ID, OnTimeout};
pub use definition::{
    DESCRIPTION, EXTENDED_DESCRIPTION, EXTENDED_INSTRUCTIONS, INSTRUCTIONS, TOOL_NAME, ToolDefinition,
};
pub use error::{BuildError, CallError, CombineError, RebuildError};
pub use event::{AnsweredEvent, AskUserEvent, Listener, NudgeEvent, RequestedEvent};
pub use outcome::{CallOutcome, Retry, RetryReason};
pub use pending::{PENDING_VERSION, PendingQuestion};
pub use router::{ReplyError, ReplyHandle, RoutedRequest, RoutedRequests, SessionRouter, session_router};
pub use schema::{
    Dialect, UnknownDialect, parameters, parameters_for, parameters_schema, parameters_schema_for,
    response_schema,
};
pub use secret_file::SecretFile;
pub use toolset::{ToolSet, ToolSetBuilder};

/// Plumbing for this workspace's `xtask` and tests (writing and checking `schema/*.json`): not
/// part of the API, and may change in any release.
#[doc(hidden)]
pub mod plumbing {
    pub use crate::schema::{GENERATED_MARKER, SchemaFile, inline_refs, schema_files};
}

/// What is deliberately not public at the crate root: the schema-file plumbing.
///
/// ```compile_fail
/// use askuser_tool::schema_files;
/// ```
/// ```compile_fail
/// use askuser_tool::{GENERATED_MARKER, SchemaFile, inline_refs};
/// ```
///
/// Nor is a constructor whose two strings (call id, tool name) could be swapped:
///
/// ```compile_fail
/// let _ = askuser_tool::ToolCall::new("call_1", "ask_user_question", "{}");
/// ```
/// ```
/// let call = askuser_tool::ToolCall::new("call_1", "{}").with_tool_name("work_ask_user_question");
/// assert_eq!((call.call_id(), call.tool_name()), ("call_1", "work_ask_user_question"));
/// ```
/// ```
/// use askuser_tool::{AskUser, CallOutcome, ToolCall};
/// ```
#[cfg(doctest)]
pub struct NotPublic;

#[cfg(test)]
mod tests {
    /// Guards the docs.rs build: every feature on, so that feature-gated items are documented
    /// with the feature they need (`doc(cfg)`).
    #[test]
    fn docs_rs_documents_every_feature() {
        let manifest = include_str!("../Cargo.toml");
        assert!(manifest.contains(
            "[package.metadata.docs.rs]\n# Feature-gated items are documented, each marked with the feature it needs.\nall-features = true\nrustdoc-args = [\"--cfg\", \"docsrs\"]"
        ));
    }
}
