//! A cancellable terminal menu for `ask_user_question`: the assistant's questions, answered with
//! a few keys, inline in the terminal, without ever stealing the next line the person types.
//!
//! [`TerminalAnswerer`] implements [`askuser_core::Answerer`]. Each `ask()` picks a mode:
//!
//! - **interactive**: an inline menu (no alternate screen) on crossterm's `EventStream`, created
//!   for that call and dropped on every way out. Arrows or digits pick, Tab moves between
//!   questions and a review step, "Other…" opens an editor for a custom answer, Esc declines,
//!   Ctrl-C interrupts. Dropping the future (a timeout) restores the terminal at once, and the
//!   next line typed reaches the next reader;
//! - **line protocol**, when stdin is not a terminal: numbered questions on stderr, one answer per
//!   line (`2`, `1,3`, a label, `0 my own answer`); end of input declines, so it never hangs.
//!   Lines go through one process-wide reader ([`stdin_lines`]) that reads only while a question
//!   waits, so a cancelled call loses none and a stdio host keeps its stream;
//! - **accessible**: the same line protocol on the terminal (`ACCESSIBLE=1` or
//!   [`TerminalAnswererBuilder::accessible`]), for screen readers.
//!
//! Extended questions (docs/contract.md §10) work in every mode: a text question is typed in the same editor
//! as "Other…", the cursor starts on the first declared default, `allow_other: false` hides
//! "Other…", and a secret question is typed behind a mask (the menu) or with echo off on
//! `/dev/tty` (the line protocol; never from stdin). Its value goes to the host's
//! [`SecretSink`](askuser_core::SecretSink) ([`TerminalAnswererBuilder::secret_sink`]) and the answer carries only
//! `session:NAME`; without a sink, a secret question is declined unasked.
//!
//! Everything drawn is sanitised first: control, bidi and invisible characters in
//! the model's strings are shown inert, never obeyed. Answers carry the request's own labels.
//!
//! ```
//! use askuser_core::{AskUserRequest, Questions};
//! use askuser_terminal::TerminalAnswerer;
//! use tokio::sync::mpsc;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let request = AskUserRequest::new(Questions::from_json(
//!     r#"{"questions":[{"header":"Fix","question":"How should I fix it?",
//!         "options":[{"label":"Patch"},{"label":"Refactor"}]}]}"#,
//! )?);
//! // A script answers "2" on the line protocol; output goes to a buffer instead of stderr.
//! let (lines, answers) = mpsc::unbounded_channel();
//! lines.send("2".to_owned())?;
//! let answerer = TerminalAnswerer::builder().lines(answers).output(Vec::new()).build();
//!
//! let runtime = tokio::runtime::Builder::new_current_thread().build()?;
//! let response = runtime.block_on(answerer.ask(&request))?;
//! assert_eq!(response.answers[0].selected, ["Refactor"]);
//! # Ok(())
//! # }
//! ```
//!
//! A host that runs its own crossterm TUI hands its events over with
//! [`TerminalAnswererBuilder::input`] (for example a `tokio::sync::mpsc::Receiver<Event>`, with
//! `Event` from the re-exported [`crossterm`]) while
//! a question is open, so two readers never split the keys. See `docs/terminal.md`.
//!
//! # Which crate do I need?
//!
//! Every askuser crate, what it is for, its heavy dependencies and its features: the table in
//! the [README](https://example.invalid/askuser#which-crate-do-i-need).
//!
//! # Feature flags
//!
//! | feature | default | what |
//! | --- | --- | --- |
//! | `inquire` | off | `InquireAnswerer`: a blocking answerer on inquire, for simple synchronous programs |

#![cfg_attr(docsrs, feature(doc_cfg))]

mod answerer;
mod input;
#[cfg(feature = "inquire")]
mod inquire_answerer;
mod line;
mod menu;
mod render;
mod secret;
mod text;

pub use answerer::{
    Closing, DEFAULT_MAX_CUSTOM_CHARS, Mode, TerminalAnswerer, TerminalAnswererBuilder, install_panic_hook,
};
/// The crossterm this crate is built on, re-exported whole so that a host forwarding its events
/// ([`InputSource`]) names the very same `crossterm::event::Event`. Its version is part of this
/// crate's: a crossterm major release is a breaking release here.
pub use crossterm;
pub use input::InputSource;
#[cfg(feature = "inquire")]
#[cfg_attr(docsrs, doc(cfg(feature = "inquire")))]
pub use inquire_answerer::InquireAnswerer;
pub use line::{LineSource, MAX_LINE_BYTES, StdinLines, stdin_lines};

/// What is deliberately not public: the menu's state machine and the text helpers are
/// implementation, and crossterm's types are reached through [`crossterm`] only.
///
/// ```compile_fail
/// use askuser_terminal::Menu;
/// ```
/// ```compile_fail
/// use askuser_terminal::{Effect, MenuOutcome};
/// ```
/// ```compile_fail
/// use askuser_terminal::{sanitize, truncate, width, wrap};
/// ```
/// ```compile_fail
/// use askuser_terminal::Event;
/// ```
/// ```compile_fail
/// let _ = askuser_terminal::Mode::Accessible;
/// ```
///
/// Nor is a panicking twin of [`StdinLines::next_line`] (the blocking one panicked in a runtime):
///
/// ```compile_fail
/// let _ = askuser_terminal::stdin_lines().blocking_next_line();
/// ```
/// ```
/// use askuser_terminal::crossterm::event::Event;
/// use askuser_terminal::{Mode, TerminalAnswerer};
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
