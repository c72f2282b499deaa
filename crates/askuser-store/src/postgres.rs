//! [`PostgresStore`]: pending questions shared by a fleet of workers and servers on many hosts.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use askuser_core::{AskUserResponse, Timestamp};
use sqlx::postgres::{PgConnectOptions, PgListener, PgPool, PgPoolOptions};

use crate::error::StoreError;
use crate::record::{ListQuery, Page, PendingRecord, State};
use crate::store::{self, Backend, Due, Row};
use crate::time::{Clock, SystemClock};
use crate::wake::Wakers;

macro_rules! columns {
    () => {
        "id, session_id, tool_name, profile, request, state, asked_at, nudge_at, expires_at, \
         closed_at, answered_by, response, version"
    };
}

/// The channel the `askuser_pending_closed` trigger notifies (see the migration).
const CHANNEL: &str = "askuser_pending";

/// Idempotent put: an existing id is left alone (the caller compares what is stored); a row comes
/// back only when this statement inserted it.
const INSERT: &str = "INSERT INTO askuser_pending \
     (id, session_id, tool_name, profile, request, state, asked_at, nudge_at, expires_at, version) \
     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, 1) ON CONFLICT (id) DO NOTHING RETURNING version";

const FETCH: &str = concat!("SELECT ", columns!(), " FROM askuser_pending WHERE id = $1");

/// Keyset paging in asking order; one row more than the page says whether another page follows.
const LIST: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM askuser_pending \
     WHERE ($1::text IS NULL OR session_id = $1) AND ($2::text IS NULL OR state = $2) \
     AND ($3::bigint IS NULL OR asked_at > $3 OR (asked_at = $3 AND id > $4)) \
     ORDER BY asked_at, id LIMIT $5"
);

/// First change wins: the update takes the row lock, and a second writer waiting on it re-checks
/// `state = 'pending'` once the first commits (READ COMMITTED re-evaluates the WHERE clause on the
/// new row version), so it updates nothing. An answer commits only before `expires_at`, so an
/// expired question is never answerable. The trigger notifies the waiters when this commits.
const ANSWER: &str = "UPDATE askuser_pending \
     SET state = $2, response = $3, answered_by = $4, closed_at = $5, version = version + 1 \
     WHERE id = $1 AND state = 'pending' AND expires_at > $5 \
     RETURNING version";

/// Cancel or time out one pending row, by the same first-change-wins rule; `$4` says which
/// deadlines qualify (`Due`: any, or only overdue).
const CLOSE: &str = concat!(
    "UPDATE askuser_pending \
     SET state = $2, closed_at = $3, version = version + 1 \
     WHERE id = $1 AND state = 'pending' AND ($4 = 0 OR expires_at <= $3) \
     RETURNING ",
    columns!()
);

/// The sweep never double-expires and never overrides an answer: it claims due rows with
/// `FOR UPDATE SKIP LOCKED`, so concurrent sweepers take disjoint rows and a row being answered
/// (locked by the answer's update) is skipped; the `state = 'pending'` re-check covers a row
/// answered between the claim's snapshot and its lock. The claim is a CTE so that it runs once
/// (as an `IN (…)` subquery the planner may run it again per row, and the `LIMIT` no longer holds).
const SWEEP: &str = concat!(
    "WITH due AS (SELECT id AS due_id FROM askuser_pending \
         WHERE state = 'pending' AND expires_at <= $1 \
         ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) \
     UPDATE askuser_pending \
     SET state = 'timed_out', closed_at = $1, version = version + 1 \
     FROM due WHERE id = due_id AND state = 'pending' \
     RETURNING ",
    columns!()
);

/// A store in a PostgreSQL database, shared by every process that connects to it.
///
/// Watchers wake through `LISTEN`/`NOTIFY` (a trigger notifies when a row leaves `pending`): one
/// listening connection per store, whatever the number of watchers. Cheap to clone.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    pool: PgPool,
    wakers: Arc<Wakers>,
    clock: Arc<dyn Clock>,
    listener: tokio::task::JoinHandle<()>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

/// Options for [`PostgresStore`]; from [`PostgresStore::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct PostgresStoreBuilder {
    url: String,
    schema: Option<String>,
    clock: Arc<dyn Clock>,
    max_connections: u32,
    application_name: String,
}

impl PostgresStoreBuilder {
    /// Keep the tables in this schema (created when missing), e.g. one per application or per
    /// test. Default: the connection's `search_path` (normally `public`).
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = Some(schema.into());
        self
    }

    /// The clock deadlines are read from. Default: the system clock.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The most connections to hold open, besides the listening one. Default: 8.
    pub fn max_connections(mut self, n: u32) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// The `application_name` its connections show in `pg_stat_activity`. Default:
    /// `askuser-store`.
    pub fn application_name(mut self, name: impl Into<String>) -> Self {
        self.application_name = name.into();
        self
    }

    /// Connects, brings the schema up to date and starts listening.
    ///
    /// # Errors
    ///
    /// The URL is invalid, the server cannot be reached, or a migration fails.
    pub async fn open(self) -> Result<PostgresStore, StoreError> {
        let mut options = PgConnectOptions::from_str(&self.url)?.application_name(&self.application_name);
        if let Some(schema) = &self.schema {
            let quoted = format!("\"{}\"", schema.replace('"', "\"\""));
            let setup = PgPoolOptions::new().max_connections(1).connect_with(options.clone()).await?;
            // The name is quoted as an identifier (inner quotes doubled), so it cannot end the statement.
            sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA IF NOT EXISTS {quoted}")))
                .execute(&setup)
                .await?;
            setup.close().await;
            options = options.options([("search_path", quoted)]);
        }
        let pool = PgPoolOptions::new().max_connections(self.max_connections).connect_with(options).await?;
        // The migrator holds an advisory lock, so concurrent opens apply each migration once.
        sqlx::migrate!("migrations/postgres").run(&pool).await?;
        let listening = start_listening(&pool).await?;
        let wakers = Arc::<Wakers>::default();
        let listener = tokio::spawn(listen(pool.clone(), listening, Arc::clone(&wakers)));
        Ok(PostgresStore { inner: Arc::new(Inner { pool, wakers, clock: self.clock, listener }) })
    }
}

async fn start_listening(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

/// Wakes this process's watchers of the ids notified. When the connection drops, notifications
/// sent meanwhile are lost: listen again on a new connection first, and only then wake every
/// watcher to read its record again, so that a change is either seen by that read or notified
/// on the new connection.
async fn listen(pool: PgPool, mut listener: PgListener, wakers: Arc<Wakers>) {
    loop {
        if let Ok(Some(notification)) = listener.try_recv().await {
            wakers.wake(notification.payload());
            continue;
        }
        listener = loop {
            match start_listening(&pool).await {
                Ok(listener) => break listener,
                Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
            }
        };
        wakers.wake_all();
    }
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user@host:port/db`) with the default options.
    ///
    /// # Errors
    ///
    /// See [`PostgresStoreBuilder::open`].
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        Self::builder(url).open().await
    }

    /// Options for the store in the database at `url`.
    pub fn builder(url: &str) -> PostgresStoreBuilder {
        PostgresStoreBuilder {
            url: url.to_owned(),
            schema: None,
            clock: Arc::new(SystemClock),
            max_connections: 8,
            application_name: "askuser-store".to_owned(),
        }
    }

    /// The connection pool (for a host that keeps its own tables beside the store's).
    #[must_use]
    pub fn pool(&self) -> &PgPool {
        &self.inner.pool
    }

    /// Stops listening and closes the connections (after the current operations). Dropping the
    /// last clone also does.
    pub async fn close(&self) {
        self.inner.listener.abort();
        self.inner.pool.close().await;
    }
}

#[async_trait::async_trait]
impl Backend for PostgresStore {
    fn clock(&self) -> &dyn Clock {
        &*self.inner.clock
    }

    fn wakers(&self) -> &Arc<Wakers> {
        &self.inner.wakers
    }

    async fn insert(&self, record: &PendingRecord) -> Result<PendingRecord, StoreError> {
        let inserted: Option<i64> = sqlx::query_scalar(INSERT)
            .bind(record.id())
            .bind(record.session_id())
            .bind(record.tool_name())
            .bind(record.profile().as_str())
            .bind(store::request_json(record))
            .bind(record.asked_at().unix_millis())
            .bind(record.nudge_at().unix_millis())
            .bind(record.expires_at().unix_millis())
            .fetch_optional(&self.inner.pool)
            .await?;
        if inserted.is_some() {
            return Ok(record.clone());
        }
        self.fetch(record.id()).await?.ok_or_else(|| StoreError::NotFound { id: record.id().to_owned() })
    }

    async fn fetch(&self, id: &str) -> Result<Option<PendingRecord>, StoreError> {
        let row: Option<Row> = sqlx::query_as(FETCH).bind(id).fetch_optional(&self.inner.pool).await?;
        row.map(Row::into_record).transpose()
    }

    async fn list(&self, query: &ListQuery) -> Result<Page, StoreError> {
        let rows: Vec<Row> = sqlx::query_as(LIST)
            .bind(query.session_id.as_deref())
            .bind(query.state.map(State::as_str))
            .bind(query.after.as_ref().map(|c| c.asked_at.unix_millis()))
            .bind(query.after.as_ref().map(|c| c.id.as_str()))
            .bind(i64::try_from(query.limit + 1).unwrap_or(i64::MAX))
            .fetch_all(&self.inner.pool)
            .await?;
        let records = rows.into_iter().map(Row::into_record).collect::<Result<_, _>>()?;
        Ok(Page::from_overfetch(records, query.limit))
    }

    async fn close(
        &self,
        id: &str,
        state: State,
        due: Due,
        now: Timestamp,
    ) -> Result<Option<PendingRecord>, StoreError> {
        let row: Option<Row> = sqlx::query_as(CLOSE)
            .bind(id)
            .bind(state.as_str())
            .bind(now.unix_millis())
            .bind(due.code())
            .fetch_optional(&self.inner.pool)
            .await?;
        row.map(Row::into_record).transpose()
    }

    async fn commit_answer(
        &self,
        record: &PendingRecord,
        state: State,
        response: &AskUserResponse,
        now: Timestamp,
    ) -> Result<Option<PendingRecord>, StoreError> {
        let version: Option<i64> = sqlx::query_scalar(ANSWER)
            .bind(record.id())
            .bind(state.as_str())
            .bind(store::response_json(response))
            .bind(response.answered_by.as_str())
            .bind(now.unix_millis())
            .fetch_optional(&self.inner.pool)
            .await?;
        Ok(version.map(|_| record.closed(state, now, Some(response.clone()))))
    }

    async fn sweep(&self, now: Timestamp, limit: usize) -> Result<Vec<PendingRecord>, StoreError> {
        let rows: Vec<Row> = sqlx::query_as(SWEEP)
            .bind(now.unix_millis())
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&self.inner.pool)
            .await?;
        rows.into_iter().map(Row::into_record).collect()
    }
}

store::pending_store_via_backend!(PostgresStore);
