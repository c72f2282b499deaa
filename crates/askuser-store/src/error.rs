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
    /// The response does not fit the request (docs/contract.md §3.1); nothing was written.
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
    /// A store URL whose backend this build leaves out (its feature is off).
    #[error(
        "cannot open {path}: this build of askuser-store has no {backend} backend (its feature `{backend}`)"
    )]
    NotBuilt {
        /// `sqlite` or `postgres`.
        backend: &'static str,
        /// The file or URL (without a password).
        path: String,
    },
    /// A store URL this crate does not open.
    #[error("unsupported store {url:?} (expected memory:, sqlite:PATH or postgres://…)")]
    UnsupportedUrl {
        /// The URL, with any password removed.
        url: String,
    },
    /// The database failed: unreachable, unable to write, or something else (see
    /// [`DatabaseError::kind`]). The driver's own words are its causes.
    #[error(transparent)]
    Database(DatabaseError),
    /// A store file (the SQLite file, its `-wal` or `-shm`) that is not this user's own: a
    /// symbolic link, not a regular file, or another user's (planted in a shared directory, what
    /// it holds would be taken as this user's questions and answers, and they would be written
    /// where that user reads them).
    #[error("store file {path} {reason}")]
    Unsafe {
        /// The file.
        path: String,
        /// What is wrong with it, and what to do.
        reason: String,
    },
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

impl StoreError {
    /// Whether the database cannot be reached or cannot write just now (an outage, not a bug):
    /// an I/O or connection error, no connection to be had from the pool in time, the pool
    /// closed; on SQLite a full disk, a busy, locked or read-only database, an I/O error or a
    /// file that cannot be opened; on PostgreSQL a lost connection, a server shutting down or
    /// starting, a full disk, too many connections or a read-only (standby) server. The same
    /// operation may succeed when tried again later; a server answers `503 store_unavailable`.
    #[must_use]
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Database(error) if error.kind == DatabaseErrorKind::Unavailable)
    }

    /// A database that cannot be reached or cannot write just now, for `cause` (for a
    /// [`PendingStore`](crate::PendingStore) of one's own, or a test's).
    pub fn unavailable(cause: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Database(DatabaseError { kind: DatabaseErrorKind::Unavailable, source: cause.into() })
    }

    /// A database failure that trying again will not mend, for `cause`.
    pub fn database(cause: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Database(DatabaseError { kind: DatabaseErrorKind::Other, source: cause.into() })
    }
}

/// What kind of database failure a [`DatabaseError`] is. Stable across driver upgrades, unlike
/// the causes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DatabaseErrorKind {
    /// Cannot be reached or cannot write just now (see [`StoreError::is_unavailable`]); trying
    /// again later may succeed.
    Unavailable,
    /// The store's schema migrations failed (a database changed by hand, or by a newer askuser).
    Migration,
    /// Any other failure (a refused login, a bad URL, a certificate that cannot be trusted, a
    /// bug).
    Other,
}

/// A database failure: its [`kind`](Self::kind), and the driver's error as its
/// [`source`](std::error::Error::source). Opaque, so that the driver's types are no part of this
/// crate's API.
#[derive(Debug)]
pub struct DatabaseError {
    kind: DatabaseErrorKind,
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl DatabaseError {
    /// What kind of failure it is.
    #[must_use]
    pub fn kind(&self) -> DatabaseErrorKind {
        self.kind
    }
}

impl std::fmt::Display for DatabaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.kind {
            DatabaseErrorKind::Unavailable => "the database is unavailable",
            DatabaseErrorKind::Migration => "migrating the store's schema failed",
            DatabaseErrorKind::Other => "the database failed",
        })
    }
}

impl std::error::Error for DatabaseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[doc(hidden)]
impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        let kind =
            if sqlx_unavailable(&error) { DatabaseErrorKind::Unavailable } else { DatabaseErrorKind::Other };
        Self::Database(DatabaseError { kind, source: Box::new(error) })
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[doc(hidden)]
impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(error: sqlx::migrate::MigrateError) -> Self {
        let kind = match &error {
            sqlx::migrate::MigrateError::Execute(cause)
            | sqlx::migrate::MigrateError::ExecuteMigration(cause, _)
                if sqlx_unavailable(cause) =>
            {
                DatabaseErrorKind::Unavailable
            }
            _ => DatabaseErrorKind::Migration,
        };
        Self::Database(DatabaseError { kind, source: Box::new(error) })
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn sqlx_unavailable(error: &sqlx::Error) -> bool {
    match error {
        // `InvalidSavePointStatement`, `BeginFailed`: a connection whose last COMMIT failed (a
        // full disk) and whose ROLLBACK then found nothing to roll back; sqlx still counts a
        // transaction on it. The connection is closed as it goes back to its pool (sqlite.rs),
        // so trying again gets a fresh one.
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::InvalidSavePointStatement
        | sqlx::Error::BeginFailed => true,
        // Behind a TCP proxy (PgBouncer, HAProxy, a cloud SQL proxy) a database that is down
        // looks like a server that closes the connection before answering the first byte of
        // the handshake: sqlx reads a zero byte. Another byte is a server that does not speak
        // PostgreSQL at all: a mistake, not an outage.
        sqlx::Error::Protocol(message) => message.starts_with("unexpected response from SSLRequest: 0x00"),
        sqlx::Error::Database(error) => database_unavailable(&**error),
        _ => false,
    }
}

/// Whether the database's own error means "not now", by the code of whichever backend it is.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn database_unavailable(error: &dyn sqlx::error::DatabaseError) -> bool {
    #[cfg(feature = "sqlite")]
    if let Some(sqlite) = error.try_downcast_ref::<sqlx::sqlite::SqliteError>() {
        return sqlx::error::DatabaseError::code(sqlite)
            .and_then(|code| code.parse::<i32>().ok())
            .is_some_and(sqlite_unavailable);
    }
    #[cfg(feature = "postgres")]
    if let Some(postgres) = error.try_downcast_ref::<sqlx::postgres::PgDatabaseError>() {
        return postgres_unavailable(postgres.code());
    }
    let _ = error;
    false
}

/// SQLite's primary result codes (the low byte of the extended code, <https://sqlite.org/rescode.html>)
/// that mean "not now": `SQLITE_BUSY` 5, `SQLITE_LOCKED` 6, `SQLITE_READONLY` 8, `SQLITE_IOERR` 10,
/// `SQLITE_FULL` 13, `SQLITE_CANTOPEN` 14.
#[cfg(feature = "sqlite")]
fn sqlite_unavailable(extended: i32) -> bool {
    matches!(extended & 0xff, 5 | 6 | 8 | 10 | 13 | 14)
}

/// PostgreSQL's SQLSTATE codes (<https://www.postgresql.org/docs/current/errcodes-appendix.html>)
/// that mean "not now": class 08 (connection exception), class 53 (insufficient resources: disk
/// full, out of memory, too many connections), class 58 (system error: I/O), `57P01`–`57P03`
/// (shutting down, crashed, cannot connect now), `25006` (read-only transaction: a standby).
#[cfg(feature = "postgres")]
fn postgres_unavailable(code: &str) -> bool {
    code.starts_with("08")
        || code.starts_with("53")
        || code.starts_with("58")
        || matches!(code, "57P01" | "57P02" | "57P03" | "25006")
}

fn closed_at(record: &PendingRecord) -> String {
    record.closed_at().map_or_else(|| "an unknown time".to_owned(), |t| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(error: &StoreError, unavailable: bool) {
        assert_eq!(error.is_unavailable(), unavailable, "{error:?}");
    }

    #[test]
    fn outages_are_unavailable_and_bugs_are_not() {
        let io = || std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        check(&sqlx::Error::Io(io()).into(), true);
        check(&sqlx::Error::PoolTimedOut.into(), true);
        check(&sqlx::Error::PoolClosed.into(), true);
        check(&sqlx::migrate::MigrateError::Execute(sqlx::Error::PoolTimedOut).into(), true);
        check(&sqlx::Error::RowNotFound.into(), false);
        check(&sqlx::Error::Protocol("bad".to_owned()).into(), false);
        check(&sqlx::Error::Protocol("unexpected response from SSLRequest: 0x48".to_owned()).into(), false);
        check(&sqlx::Error::InvalidSavePointStatement.into(), true);
        let migration: StoreError = sqlx::migrate::MigrateError::VersionMissing(3).into();
        check(&migration, false);
        assert!(matches!(&migration, StoreError::Database(e) if e.kind() == DatabaseErrorKind::Migration));
        assert_eq!(
            askuser_tool::exit::with_causes(&migration),
            "migrating the store's schema failed: migration 3 was previously applied but is missing in the resolved migrations"
        );
        check(&StoreError::unavailable("the disk is full"), true);
        check(&StoreError::database("a bug"), false);
        check(&StoreError::NotFound { id: "a".to_owned() }, false);
        check(&StoreError::IdTaken { id: "a".to_owned() }, false);
    }

    #[cfg(all(feature = "sqlite", feature = "postgres"))]
    #[test]
    fn sqlite_and_postgres_codes() {
        // SQLITE_FULL, SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR_WRITE (778),
        // SQLITE_READONLY_DBMOVED (1032), SQLITE_CANTOPEN.
        for code in [13, 5, 6, 8, 778, 1032, 14] {
            assert!(sqlite_unavailable(code), "{code}");
        }
        // SQLITE_CONSTRAINT_UNIQUE (2067), SQLITE_ERROR, SQLITE_CORRUPT, SQLITE_MISMATCH.
        for code in [2067, 1, 11, 20] {
            assert!(!sqlite_unavailable(code), "{code}");
        }
        for code in ["08006", "08001", "57P01", "57P03", "53100", "53300", "58030", "25006"] {
            assert!(postgres_unavailable(code), "{code}");
        }
        for code in ["23505", "42P01", "28P01", "40001", "22001"] {
            assert!(!postgres_unavailable(code), "{code}");
        }
    }

    /// Issue 36.15: behind a TCP proxy whose database is down, the proxy takes the connection
    /// and closes it. sqlx says "unexpected response from `SSLRequest`: 0x00"; it was a `500` where
    /// a database reached directly said `503`.
    #[cfg(feature = "postgres")]
    #[tokio::test]
    async fn a_proxy_whose_database_is_down_is_unavailable() {
        use sqlx::Connection as _;
        let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = proxy.local_addr().unwrap().port();
        // The proxy reads the client's first message (the 8 bytes of the SSLRequest), finds no
        // database behind it, and closes the connection.
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = proxy.accept().await {
                let mut request = [0; 8];
                let _ = tokio::io::AsyncReadExt::read_exact(&mut stream, &mut request).await;
                drop(stream);
            }
        });
        let error =
            sqlx::postgres::PgConnection::connect(&format!("postgres://askuser@127.0.0.1:{port}/askuser"))
                .await
                .unwrap_err();
        assert!(error.to_string().contains("SSLRequest"), "{error}");
        check(&error.into(), true);
    }

    /// A real SQLite error: a database made full with `max_page_count`.
    #[cfg(feature = "sqlite")]
    #[tokio::test]
    async fn a_full_sqlite_database_is_unavailable() {
        use sqlx::Connection as _;
        let mut conn = sqlx::sqlite::SqliteConnection::connect("sqlite::memory:").await.unwrap();
        sqlx::query("CREATE TABLE t (x BLOB)").execute(&mut conn).await.unwrap();
        let pages: i64 = sqlx::query_scalar("PRAGMA page_count").fetch_one(&mut conn).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(format!("PRAGMA max_page_count = {pages}")))
            .execute(&mut conn)
            .await
            .unwrap();
        let full =
            sqlx::query("INSERT INTO t VALUES (zeroblob(100000))").execute(&mut conn).await.unwrap_err();
        check(&full.into(), true);
        let syntax = sqlx::query("SELEC 1").execute(&mut conn).await.unwrap_err();
        check(&syntax.into(), false);
    }
}
