//! Durable pending `ask_user_question` calls: questions that wait in a store until someone
//! answers them, from any process, surviving restarts.
//!
//! A host that cannot hold a run open (a web server, a fleet of agent workers, a process that
//! restarts) keeps its pending questions in a [`PendingStore`]: put the question, and whoever
//! answers it (a web form, a chat bot, another process) commits the answer there; the first answer
//! wins, checked against the request before it is written. Waiters wake in every process.
//!
//! | backend | for | wake-ups across processes |
//! | --- | --- | --- |
//! | [`MemoryStore`] | tests, one process | — |
//! | [`SqliteStore`] — **the embedded default** | one host, one or more processes | `PRAGMA data_version`, checked every 5 ms |
//! | `PostgresStore` (feature `postgres`) | a fleet: many workers and servers, many hosts | `LISTEN`/`NOTIFY` |
//!
//! Besides questions, the processes sharing a store coordinate through [`Coordination`] (a lease
//! on a name, claim-once on a key, a small namespaced key-value table), which every built-in store
//! implements in the same database; a [`SharedStore`] has both, and is what [`open`] returns.
//!
//! [`StoreAnswerer`] is an `Answerer` for the `AskUser` capability that waits in a store;
//! [`Sweeper`] expires overdue questions. A deferred call (no answerer) is put with
//! [`NewQuestion::from_pending`] and resumed anywhere with [`PendingRecord::result`]. See
//! `docs/store.md`.
//!
//! ```
//! use std::time::Duration;
//! use askuser_core::{AskContext, AskUserAnswer, AskUserResponse};
//! use askuser_store::{NewQuestion, PendingStore, SqliteStore};
//! use askuser_tool::{AskUser, CallOutcome, ToolCall};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = std::env::temp_dir().join(format!("askuser-lib-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! let store = SqliteStore::open(dir.join("pending.db")).await?;
//!
//! // The agent process: a deferred call is put in the store, and the run pauses.
//! let ask_user = AskUser::builder().build()?;
//! let args = r#"{"questions":[{"header":"Plan","question":"Which plan?",
//!     "options":[{"label":"Small"},{"label":"Large"}]}]}"#;
//! let CallOutcome::Deferred(pending) =
//!     ask_user.call(ToolCall::new("call_1", args), AskContext::new()).await
//! else { unreachable!("no answerer: deferred") };
//! store.put(NewQuestion::from_pending(&pending, Duration::from_secs(3600)).session_id("s1")).await?;
//!
//! // Any process: the person answers.
//! let answer = AskUserResponse::answered(vec![AskUserAnswer::picked("Plan", ["Large"])]);
//! store.commit_answer("call_1", &answer).await?;
//!
//! // Any process: the run resumes with the exact tool result an inline call would have produced.
//! let record = store.watch("call_1").await?;
//! assert_eq!(record.result()?.map(|r| r.into_text()).as_deref(), Some(r#"{"Plan":["Large"]}"#));
//! # drop(store);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(())
//! # }
//! ```
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
//! | `sqlite` | yes | [`SqliteStore`] (bundled SQLite) |
//! | `postgres` | no | `PostgresStore`, with TLS (rustls) |
//! | `sqlx` | no | `SqliteStore::pool` and `PostgresStore::pool`, the sqlx pools (for a host that keeps its own tables beside the store's); the only part of the API that names a sqlx type |
//!
//! A PostgreSQL URL's `sslmode` and `sslrootcert` say how TLS is used (see `docs/store.md`).
//! Errors are sqlx-free: a database failure is a [`DatabaseError`] with a stable
//! [`DatabaseErrorKind`], the driver's words in its causes.

mod answerer;
mod audit;
mod coordination;
mod error;
mod feed;
mod memory;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod migrate;
#[cfg(feature = "postgres")]
mod postgres;
mod record;
#[cfg(feature = "sqlite")]
mod sqlite;
mod store;
mod sweeper;
mod time;
mod wake;

use std::sync::Arc;

/// `docs/store.md`'s examples, compiled and run as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/store.md")]
pub struct StoreGuideDoctests;

pub use answerer::{DEFAULT_TIMEOUT, StoreAnswerer};
pub use audit::{AuditEntry, AuditEvent, AuditLog, Broken, EventKind, GENESIS, Verified, Via, verify};
pub use coordination::{Coordination, Key};
pub use error::{DatabaseError, DatabaseErrorKind, StoreError};
pub use feed::{Change, Changes, Missed};
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::{PostgresStore, PostgresStoreBuilder};
pub use record::{
    APPROVAL_OPTIONS, APPROVAL_TOOL_NAME, AskedBy, Cursor, InvalidAskedBy, InvalidCursor, ListQuery,
    MAX_ASKED_BY_CHARS, NewQuestion, Page, PendingRecord, State, UnknownState,
};
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteStore, SqliteStoreBuilder};
pub use store::{PendingStore, SharedStore, WRITE_FAILURE_MEMORY};
pub use sweeper::{DEFAULT_LEASE, SweepStats, Sweeper, SweeperHandle, Swept};
pub use time::{Clock, ManualClock, SystemClock};

/// Opens the store a URL names: `memory:` (a new, empty in-memory store), `sqlite:PATH` (a file,
/// created when missing) or `postgres://…` / `postgresql://…`.
///
/// # Errors
///
/// [`StoreError::UnsupportedUrl`] for another scheme; the backend's own errors.
#[cfg_attr(
    not(any(feature = "sqlite", feature = "postgres")),
    expect(clippy::unused_async, reason = "the backends' openers await; the same signature without them")
)]
pub async fn open(url: &str) -> Result<Arc<dyn SharedStore>, StoreError> {
    if url == "memory:" {
        Ok(Arc::new(MemoryStore::new()))
    } else if let Some(path) = url.strip_prefix("sqlite:") {
        let path = path.strip_prefix("//").unwrap_or(path);
        #[cfg(feature = "sqlite")]
        return Ok(Arc::new(SqliteStore::open(path).await?));
        #[cfg(not(feature = "sqlite"))]
        return Err(StoreError::NotBuilt { backend: "sqlite", path: path.to_owned() });
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        #[cfg(feature = "postgres")]
        return Ok(Arc::new(PostgresStore::open(url).await?));
        #[cfg(not(feature = "postgres"))]
        return Err(StoreError::NotBuilt { backend: "postgres", path: redact_url(url) });
    } else {
        Err(StoreError::UnsupportedUrl { url: redact_url(url) })
    }
}

/// `url` without the password of its user-info part (`postgres://me:***@host/db`), for an
/// error message or a log line.
///
/// ```
/// assert_eq!(askuser_store::redact_url("postgres://me:pw@db/app"), "postgres://me:***@db/app");
/// assert_eq!(askuser_store::redact_url("sqlite:/tmp/pending.db"), "sqlite:/tmp/pending.db");
/// ```
#[must_use]
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rsplit_once('@') {
        Some((user_info, host)) if user_info.contains(':') => {
            let user = user_info.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}{}", &rest[authority_end..])
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn redacts_passwords() {
        assert_eq!(super::redact_url("mysql://u:secret@h/db"), "mysql://u:***@h/db");
        assert_eq!(super::redact_url("mysql://u@h/db"), "mysql://u@h/db");
        assert_eq!(super::redact_url("file.db"), "file.db");
    }
}
