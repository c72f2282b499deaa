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
    /// A store file could not be created private (mode 0600) or made private.
    #[error("store file {path}: cannot make it private (mode 0600): {source}")]
    Permissions {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

fn closed_at(record: &PendingRecord) -> String {
    record.closed_at().map_or_else(|| "an unknown time".to_owned(), |t| t.to_string())
}
