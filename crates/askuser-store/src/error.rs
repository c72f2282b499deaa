//! [`StoreError`]: what can go wrong with a store operation.

use askuser_core::ResponseError;

use crate::record::PendingRecord;

/// A store operation failed.
///
/// [`Conflict`](Self::Conflict) and [`Closed`](Self::Closed) hold the record as it stands, so the
/// caller sees the first answer (or why the question closed) without another read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No record has this id.
    #[error("no pending question has id {id:?}")]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// The question was already answered or declined: the first answer won and stays.
    #[error("question {:?} was already {} at {}", .first.id(), .first.state(), closed_at(first))]
    Conflict {
        /// The record with the first answer.
        first: Box<PendingRecord>,
    },
    /// The question timed out or was cancelled, so it can no longer be answered.
    #[error("question {:?} is {} and can no longer be answered", .record.id(), .record.state())]
    Closed {
        /// The record as it stands.
        record: Box<PendingRecord>,
    },
    /// The response does not fit the request (SPEC §3.1); nothing was written.
    #[error("the response does not fit question {id:?}")]
    InvalidResponse {
        /// The question's id.
        id: String,
        /// What is wrong with the response.
        #[source]
        source: ResponseError,
    },
    /// A put with an id that another, different question already has.
    #[error("id {id:?} is already taken by a different question")]
    IdTaken {
        /// The id.
        id: String,
    },
    /// A stored record that cannot be read back (edited by hand, or written by a newer version).
    #[error("stored record {id:?} is unreadable: {reason}")]
    Corrupt {
        /// The record's id.
        id: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A store URL this crate does not open.
    #[error("unsupported store {url:?} (expected memory:, sqlite:PATH or postgres://…)")]
    UnsupportedUrl {
        /// The URL, with any password removed.
        url: String,
    },
    /// The database failed.
    #[error("database error")]
    Database(#[from] sqlx::Error),
    /// The embedded schema migrations failed.
    #[error("migrating the store's schema")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

impl StoreError {
    /// Whether the database could not be reached or could not write (a connection refused or
    /// lost, a pool timed out, a full disk, a read-only or locked file, an I/O error): the
    /// operation may succeed if tried again later, and nothing of it was stored.
    #[must_use]
    pub fn is_unavailable(&self) -> bool {
        match self {
            Self::Database(error) | Self::Migrate(sqlx::migrate::MigrateError::Execute(error)) => {
                database_unavailable(error)
            }
            _ => false,
        }
    }
}

fn database_unavailable(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| unavailable_code(&code)),
        _ => false,
    }
}

/// SQLite's primary result codes (the low byte of an extended code) and PostgreSQL's SQLSTATE
/// classes that mean "not now" rather than "never": full, busy, locked, read-only, I/O, cannot
/// open; PostgreSQL's connection exceptions (08), insufficient resources (53), operator
/// intervention (57: shutdown, cancel) and system errors (58).
fn unavailable_code(code: &str) -> bool {
    if let Ok(extended) = code.parse::<u32>() {
        // SQLITE_BUSY 5, LOCKED 6, NOMEM 7, READONLY 8, IOERR 10, FULL 13, CANTOPEN 14, PROTOCOL 15.
        return matches!(extended & 0xff, 5 | 6 | 7 | 8 | 10 | 13 | 14 | 15);
    }
    ["08", "53", "57", "58"].iter().any(|class| code.starts_with(class))
}

fn closed_at(record: &PendingRecord) -> String {
    record.closed_at().map_or_else(|| "an unknown time".to_owned(), |t| t.to_string())
}
