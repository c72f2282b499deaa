//! The exact model-facing contract of `ask_user_question`: validate the model's call, check an
//! answer against it, and render the tool result the model receives.
//!
//! An LLM agent calls one tool, `ask_user_question`, with 1–10 multiple-choice questions. This
//! crate validates that call to the letter (the reference is pydantic-ai-harness 0.62.0), hands
//! you a [`Questions`] value that cannot be invalid, checks whatever answer comes back with
//! [`check_response`], and renders the exact text the model gets with [`ask_user_result`].
//! It does no I/O and needs no async runtime: a server depends on this crate alone.
//!
//! ```
//! use askuser_core::{AskUserAnswer, AskUserRequest, AskUserResponse, Questions, ask_user_result};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let args = r#"{"questions":[{"header":"Approach","question":"How should I fix it?",
//!     "options":[{"label":"Patch"},{"label":"Refactor","description":"Bigger change"}]}]}"#;
//! let request = AskUserRequest::new(Questions::from_json(args)?);
//!
//! let response = AskUserResponse::answered(vec![AskUserAnswer::picked("Approach", ["Refactor"])]);
//! let result = ask_user_result(&request, &response)?;
//! assert_eq!(result.text(), r#"{"Approach":["Refactor"]}"#);
//!
//! // A rejected call never reaches a person: the model gets a retry payload instead.
//! let err = Questions::from_json(r#"{"questions":[]}"#).unwrap_err();
//! assert!(err.retry_payload().contains(r#""loc":["questions"]"#));
//! # Ok(())
//! # }
//! ```
//!
//! # Which crate do I need?
//!
//! Every askuser crate, what it is for, its heavy dependencies and its features: the table in
//! the [README](https://example.invalid/askuser#which-crate-do-i-need).
//!
//! # Profiles
//!
//! The reference profile (the default) is the reference implementation's contract to the letter.
//! The opt-in extended profile ([`Profile::Extended`], set on a [`Validator`]) adds free-text and
//! secret questions, question ids, declared defaults, `allow_other`, `timeout_seconds`, and a
//! result the model reads as data (`{"status","answered_by","answers":[…]}`); secret values go
//! to a [`SecretSink`] and the model only ever sees `session:NAME`. See `docs/wire.md`.
//!
//! # Feature flags
//!
//! None: the crate has no optional parts.

// Floors, bottom up; a file imports only from floors below its own (ARCHITECTURE.md, checked by
// `tests/it/layout.rs`).
mod keys;
mod profile;
mod secret;
mod text;
mod time;
mod typed;

mod error;
mod model;

mod raw;

mod json;
mod rules;

mod extended;

mod walk;

mod validate;

mod answer;
mod check;

pub use answer::{
    AnswerError, AnswerErrorKind, Answerer, AskContext, DefaultsResponder, InMemorySecretSink, SecretSink,
    default_answers,
};
pub use async_trait::async_trait;
pub use check::{
    AskUserResult, DECLINED, Outcome, TIMED_OUT, TIMED_OUT_STOP, ask_user_result, check_response,
};
pub use error::{
    JsonType, Location, MAX_LISTED_PROBLEMS, PathSegment, Problem, ProblemKind, ResponseError,
    ValidationError,
};
pub use model::{
    AnsweredBy, AskUserAnswer, AskUserRequest, AskUserResponse, Question, QuestionOption, Questions,
};
pub use profile::{
    MAX_CUSTOM_CHARS, MAX_DESCRIPTION_CHARS, MAX_HEADER_CHARS, MAX_ID_CHARS, MAX_LABEL_CHARS, MAX_OPTIONS,
    MAX_PURPOSE_CHARS, MAX_QUESTION_CHARS, MAX_QUESTIONS, MIN_OPTIONS, Profile, QuestionKind, UnknownProfile,
};
pub use secret::{SECRET_REF_PREFIX, SecretError, SecretValue, parse_secret_ref, session_secret_ref};
pub use text::{is_forbidden_char, mixed_scripts, renders_blank, show_blank, show_label};
pub use time::{Deadline, Timestamp, TimestampError};
pub use typed::{Unclear, read_typed_reply};
pub use validate::Validator;

/// The README's example, compiled and run as a doctest so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
