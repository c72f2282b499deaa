//! `ask_user_question` over MCP: a server that asks through the host's own form (elicitation),
//! and a client handler that answers any server's form through an askuser `Answerer`.
//!
//! ```
//! use askuser_mcp::{AskUserServer, Fallback};
//!
//! // Serve it over stdio with `rmcp::ServiceExt::serve(server, rmcp::transport::stdio())`.
//! let server = AskUserServer::builder().fallback(Fallback::decline()).build();
//! assert_eq!(server.tool().name, "ask_user_question");
//! ```
//!
//! # Which crate do I need?
//!
//! Every askuser crate, what it is for, its heavy dependencies and its features: the table in
//! the [README](https://example.invalid/askuser#which-crate-do-i-need).
//!
//! # Feature flags
//!
//! | feature | adds |
//! | --- | --- |
//! | `http` | [`http_service`]: the server over Streamable HTTP (rmcp's server transport), a tower service to mount in an axum router |
//!
//! The crate always pulls rmcp, which is why it is kept off the `askuser demo` build path.
//!
//! The guide is `docs/mcp.md` in the repository.

// No import circle: the files stand on floors (ARCHITECTURE.md), each importing from below.
mod builder;
mod client;
mod eliciting;
mod fallback;
mod form;
mod handler;
#[cfg(feature = "http")]
mod http;
mod inbox;
mod input_required;
mod later;
mod progress;
mod render;
mod sealed;
mod server;
#[cfg(feature = "http")]
mod sessions;
mod tasks;
#[doc(hidden)]
pub mod testing;
mod tickets;

pub use client::{ElicitationHandler, KEEP_DEFAULT, LEAVE_EMPTY};

pub use builder::{AskUserServerBuilder, DEFAULT_STATE_TTL};
pub use eliciting::FORM_ROUNDS;
pub use fallback::{Fallback, NO_FORM};
pub use form::INPUT_KEY;
pub use form::{FormStyle, MAX_OTHER_CHARS, Misfit, message, read_answer, schema};
#[cfg(feature = "http")]
pub use http::{CappedSessions, HttpOptions, McpHttpService, SessionsError, http_service};
pub use later::{ANSWERS_TOOL, LATER_TOOL, MAX_WAIT_SECONDS};
pub use progress::PROGRESS_EVERY;
pub use server::{AskUserServer, INBOX_TIMEOUT};
pub use tickets::MAX_OPEN_TICKETS;

/// The snippets of `docs/mcp.md`, compiled as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/mcp.md")]
pub struct McpGuideDoctests;
