//! [`PostgresStore`]: pending questions shared by a fleet of workers and servers on many hosts.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use askuser_core::{AskUserResponse, Timestamp};
use sqlx::postgres::{PgConnectOptions, PgConnection, PgListener, PgPool, PgPoolOptions};

use crate::audit::{self, AuditEntry, AuditEvent, Via};
use crate::coordination::Key;
use crate::error::StoreError;
use crate::feed::{Change, Feed};
use crate::record::{AskedBy, ListQuery, Page, PendingRecord, State};
use crate::store::{self, Backend, Due, Row, Sweep};
use crate::time::{Clock, FollowedClock};
use crate::wake::Wakers;

macro_rules! columns {
    () => {
        "id, session_id, asked_by, tool_name, profile, request, state, asked_at, nudge_at, expires_at, \
         lease_until, closed_at, answered_by, response, version"
    };
}

/// How long a request waits for a pooled connection before it fails as unavailable.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// The channel the `askuser_pending_asked` and `_changed` triggers notify (see the migrations).
const CHANNEL: &str = "askuser_pending";

/// Idempotent put: an existing id is left alone (the caller compares what is stored); a row comes
/// back only when this statement inserted it.
const INSERT: &str = "INSERT INTO askuser_pending \
     (id, session_id, tool_name, profile, request, state, asked_at, nudge_at, expires_at, lease_until, version, \
      asked_by) \
     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $9, 1, $10) ON CONFLICT (id) DO NOTHING RETURNING version";

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

/// [`LIST`] newest first, reading the same indexes backwards.
const LIST_NEWEST: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM askuser_pending \
     WHERE ($1::text IS NULL OR session_id = $1) AND ($2::text IS NULL OR state = $2) \
     AND ($3::bigint IS NULL OR asked_at < $3 OR (asked_at = $3 AND id < $4)) \
     ORDER BY asked_at DESC, id DESC LIMIT $5"
);

/// Retention: settled rows closed before `$1`, the longest closed first; rows another purge holds
/// are skipped, so several replicas' sweepers delete disjoint rows.
const PURGE: &str = "DELETE FROM askuser_pending WHERE id IN \
     (SELECT id FROM askuser_pending WHERE state <> 'pending' AND closed_at < $1 \
      ORDER BY closed_at LIMIT $2 FOR UPDATE SKIP LOCKED)";

/// First change wins: the update takes the row lock, and a second writer waiting on it re-checks
/// `state = 'pending'` once the first commits (READ COMMITTED re-evaluates the WHERE clause on the
/// new row version), so it updates nothing. An answer commits only before `expires_at`, so an
/// expired question is never answerable. The trigger notifies the waiters when this commits.
const ANSWER: &str = "UPDATE askuser_pending \
     SET state = $2, response = $3, answered_by = $4, closed_at = $5, version = version + 1 \
     WHERE id = $1 AND state = 'pending' AND expires_at > $5 AND asked_at = $6 \
     RETURNING version, lease_until";

/// A late answer: the row as it timed out (the same `version`) takes the response.
const LATE: &str = "UPDATE askuser_pending \
     SET state = 'late', response = $2, answered_by = $3, closed_at = $4, version = version + 1 \
     WHERE id = $1 AND state = 'timed_out' AND version = $5 \
     RETURNING version, lease_until";

/// Appends take the audit table's lock, each after the change it records (whose row locks it
/// took first): one appender at a time across the fleet, readers never blocked, no deadlock.
const AUDIT_LOCK: &str = "LOCK TABLE askuser_audit IN EXCLUSIVE MODE";

const AUDIT_LAST: &str = "SELECT seq, hash FROM askuser_audit ORDER BY seq DESC LIMIT 1";

const AUDIT_APPEND: &str = "INSERT INTO askuser_audit (seq, at, line, hash) VALUES ($1, $2, $3, $4)";

const AUDIT_READ: &str = "SELECT seq, at, line, hash FROM askuser_audit \
     WHERE seq > $1 AND ($2::BIGINT IS NULL OR at >= $2) ORDER BY seq LIMIT $3";

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

/// The withdrawal of questions whose asker's lease lapsed, by the same rules as the sweep.
const LAPSE: &str = concat!(
    "WITH due AS (SELECT id AS due_id FROM askuser_pending \
         WHERE state = 'pending' AND lease_until IS NOT NULL AND lease_until < $1 AND expires_at > $1 \
         ORDER BY lease_until LIMIT $2 FOR UPDATE SKIP LOCKED) \
     UPDATE askuser_pending \
     SET state = 'cancelled', closed_at = $1, version = version + 1 \
     FROM due WHERE id = due_id AND state = 'pending' \
     RETURNING ",
    columns!()
);

/// A lease taken when free, lapsed, or already the caller's: of racing callers, the row lock lets
/// one take a free lease; the others re-check the row and change nothing.
const LEASE: &str = "INSERT INTO askuser_coordination (namespace, key, value, expires_at) VALUES ('lease', $1, $2, $4) \
     ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at \
     WHERE askuser_coordination.value = excluded.value OR askuser_coordination.expires_at <= $3 RETURNING 1";

/// A key claimed once: inserted unless a row holds it that has not lapsed, and only while its
/// question (if it names one) is there.
const CLAIM_ONCE: &str = "INSERT INTO askuser_coordination (namespace, key, value, question_id, expires_at) \
     SELECT $1, $2, '', $3::text, $4::bigint \
     WHERE $3::text IS NULL OR EXISTS (SELECT 1 FROM askuser_pending WHERE id = $3::text) \
     ON CONFLICT (namespace, key) DO UPDATE SET value = '', question_id = excluded.question_id, \
         expires_at = excluded.expires_at \
     WHERE askuser_coordination.expires_at <= $5 RETURNING 1";

const SET_VALUE: &str = "INSERT INTO askuser_coordination (namespace, key, value, question_id, expires_at) \
     SELECT $1, $2, $3, $4::text, $5::bigint \
     WHERE $4::text IS NULL OR EXISTS (SELECT 1 FROM askuser_pending WHERE id = $4::text) \
     ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, question_id = excluded.question_id, \
         expires_at = excluded.expires_at";

const DROP_LAPSED: &str = "DELETE FROM askuser_coordination WHERE namespace = $1 AND expires_at <= $2";

const VALUE: &str = "SELECT value FROM askuser_coordination \
     WHERE namespace = $1 AND key = $2 AND (expires_at IS NULL OR expires_at > $3)";

const VALUES: &str = "SELECT key, value FROM askuser_coordination \
     WHERE namespace = $1 AND (expires_at IS NULL OR expires_at > $2) ORDER BY key";

/// A lease renewed (never shortened), only while the question waits and holds one.
const RENEW: &str = "UPDATE askuser_pending SET lease_until = greatest(lease_until, $2) \
     WHERE id = $1 AND state = 'pending' AND lease_until IS NOT NULL RETURNING 1";

/// The database's clock, in Unix milliseconds: the one clock every process sharing the store
/// decides deadlines and leases by.
const CLOCK: &str = "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/// The changes since the last one read, and the ones that were missing then (numbers taken by
/// transactions that had not committed yet), in number order, a page at a time.
const CHANGES: &str = "SELECT id, session_id, state, version, change_seq FROM askuser_pending \
     WHERE change_seq > $1 OR change_seq = ANY($2) ORDER BY change_seq LIMIT 1000";

const LAST_CHANGE: &str = "SELECT coalesce(max(change_seq), 0) FROM askuser_pending";

/// Without a notification for this long, the listener checks its connection and reads the
/// changes anyway: no change waits longer than about this for a reader whose `LISTEN` went dead.
const TICK: Duration = Duration::from_secs(1);

/// How long the listening connection may take to answer the check before it is replaced.
const HEARTBEAT: Duration = Duration::from_secs(2);

/// The check, named so that an operator (or a test) can tell the listening connection in
/// `pg_stat_activity` from the others.
const HEARTBEAT_QUERY: &str = "SELECT 'askuser-store listener heartbeat'";

/// How long a missing change number is looked for: a number is taken inside the one statement
/// that commits it, so a transaction that had not committed then does within milliseconds; a
/// number that never shows (a row changed again, an insert that found the id taken) is dropped.
const GAP_PATIENCE: Duration = Duration::from_secs(10);

/// The most missing numbers looked for at once.
const MAX_GAPS: usize = 10_000;

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
    feed: Arc<Feed>,
    /// The pending records this process put or read lately: an answer skips its read.
    recent: store::Recent,
    /// Whether its last writes failed, for `cannot_write`.
    writes: store::WriteHealth,
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
    clock: Option<Arc<dyn Clock>>,
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

    /// The clock deadlines are read from. Default: the database's (`clock_timestamp()`), read
    /// when the store opens and again at least every second, and followed in between through this
    /// process's monotonic clock; so every process sharing the database decides by the same
    /// clock, and a step of one host's wall clock moves no deadline.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
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
        // A request never waits long for a connection: with the database down, it fails as
        // unavailable within seconds.
        let pool = PgPoolOptions::new()
            .max_connections(self.max_connections)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options.clone())
            .await?;
        // The migrator holds an advisory lock, so concurrent opens apply each migration once.
        crate::migrate::postgres(&pool, &crate::migrate::own_table(sqlx::migrate!("migrations/postgres")))
            .await?;
        // The database's clock, unless the builder was given one: then it is never read.
        let (clock, database_clock): (Arc<dyn Clock>, _) = if let Some(given) = self.clock {
            (given, None)
        } else {
            let (at, now) = read_clock(&pool).await?;
            let followed = Arc::new(FollowedClock::new(at, now));
            (followed.clone(), Some(followed))
        };
        let listening = start_listening(&options).await?;
        let cursor: i64 = sqlx::query_scalar(LAST_CHANGE).fetch_one(&pool).await?;
        let wakers = Arc::<Wakers>::default();
        let feed = Arc::<Feed>::default();
        let reader = Reader {
            pool: pool.clone(),
            options: options.clone(),
            wakers: Arc::clone(&wakers),
            feed: Arc::clone(&feed),
            cursor,
            gaps: BTreeMap::new(),
            clock: database_clock,
        };
        let listener = tokio::spawn(listen(listening, reader));
        Ok(PostgresStore {
            inner: Arc::new(Inner {
                pool,
                wakers,
                feed,
                recent: store::Recent::default(),
                writes: store::WriteHealth::default(),
                clock,
                listener,
            }),
        })
    }
}

/// Reads the database's clock; the reading is taken to be of the moment halfway through the
/// round trip.
async fn read_clock(pool: &PgPool) -> Result<(std::time::Instant, Timestamp), sqlx::Error> {
    let sent = std::time::Instant::now();
    let millis: i64 = sqlx::query_scalar(CLOCK).fetch_one(pool).await?;
    Ok((sent + sent.elapsed() / 2, Timestamp::from_unix_millis(millis)))
}

/// Listens on a connection of its own pool: a connection that went silent is dropped with its
/// pool, never handed back to the store's pool for a request to hang on.
async fn start_listening(options: &PgConnectOptions) -> Result<PgListener, sqlx::Error> {
    let pool =
        PgPoolOptions::new().max_connections(1).acquire_timeout(HEARTBEAT).connect_lazy_with(options.clone());
    let mut listener = PgListener::connect_with(&pool).await?;
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

/// Reads the changes past the last one it saw and hands them on: watchers of rows that left
/// `pending` are woken, every change goes to the feed.
struct Reader {
    pool: PgPool,
    /// How to connect a new listening connection.
    options: PgConnectOptions,
    wakers: Arc<Wakers>,
    feed: Arc<Feed>,
    cursor: i64,
    /// Numbers below the cursor not seen yet, with when they were first missed.
    gaps: BTreeMap<i64, tokio::time::Instant>,
    /// The database's clock (when it is the store's), read again with the changes once its last
    /// reading is a [`TICK`] old.
    clock: Option<Arc<FollowedClock>>,
}

impl Reader {
    /// Reads every change since the last read. Sequence numbers are taken in one order and
    /// committed in another, so a number skipped over is looked for again for a while.
    /// [`read`](Self::read), bounded in time (a read on a connection that went silent is given
    /// up, and tried again on the next tick), a failure logged.
    async fn read_logged(&mut self) {
        match tokio::time::timeout(HEARTBEAT + ACQUIRE_TIMEOUT, self.read()).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::warn!(error = %error, "askuser-store: reading changes failed; retrying");
            }
            Err(_) => tracing::warn!("askuser-store: reading changes took too long; retrying"),
        }
    }

    async fn read(&mut self) -> Result<(), sqlx::Error> {
        if let Some(clock) = &self.clock
            && clock.read_at().elapsed() >= TICK
        {
            let (at, now) = read_clock(&self.pool).await?;
            clock.set(at, now);
        }
        loop {
            let now = tokio::time::Instant::now();
            self.gaps.retain(|_, since| now.duration_since(*since) < GAP_PATIENCE);
            let gaps: Vec<i64> = self.gaps.keys().copied().collect();
            let rows: Vec<(String, Option<String>, String, i64, i64)> =
                sqlx::query_as(CHANGES).bind(self.cursor).bind(&gaps).fetch_all(&self.pool).await?;
            let full = rows.len() == 1000;
            for (id, session_id, state, version, seq) in rows {
                if seq > self.cursor {
                    let room = MAX_GAPS.saturating_sub(self.gaps.len());
                    let missing = (self.cursor + 1..seq).take(room).map(|n| (n, now));
                    self.gaps.extend(missing);
                    self.cursor = seq;
                } else {
                    self.gaps.remove(&seq);
                }
                let Ok(state) = state.parse::<State>() else { continue };
                if state != State::Pending {
                    self.wakers.wake(&id);
                }
                self.feed.send(Change { id, session_id, state, version });
            }
            if !full {
                return Ok(());
            }
        }
    }
}

/// Follows the table's changes: a notification (only a hint: its payload is not trusted beyond
/// waking that id's watchers to read their record again) makes the reader read now; without one
/// for a [`TICK`], the reader reads anyway and the listening connection is checked, and replaced
/// when it does not answer within [`HEARTBEAT`] (a connection that died silently: a failover, a
/// NAT that forgot it). Replacing it wakes every watcher and tells the feed that changes may have
/// been missed in between.
async fn listen(mut listener: PgListener, mut reader: Reader) {
    loop {
        let healthy = match tokio::time::timeout(TICK, listener.try_recv()).await {
            Ok(Ok(Some(notification))) => {
                reader.wakers.wake(notification.payload());
                while let Some(notification) = listener.next_buffered() {
                    reader.wakers.wake(notification.payload());
                }
                true
            }
            // The connection dropped; sqlx has connected again (or will on the next call).
            Ok(Ok(None)) => false,
            Ok(Err(error)) => {
                tracing::warn!(error = %error, "askuser-store: listening for changes failed");
                false
            }
            Err(_quiet) => {
                // Read first, so that a dead listener's check does not delay the changes.
                reader.read_logged().await;
                let check =
                    tokio::time::timeout(HEARTBEAT, sqlx::query(HEARTBEAT_QUERY).execute(&mut listener))
                        .await;
                if matches!(check, Ok(Ok(_))) {
                    continue;
                }
                false
            }
        };
        if !healthy {
            tracing::warn!(
                "askuser-store: the listening connection was lost or stopped answering; replacing it"
            );
            listener = loop {
                if let Ok(Ok(listener)) =
                    tokio::time::timeout(HEARTBEAT, start_listening(&reader.options)).await
                {
                    break listener;
                }
                // Meanwhile the reads go on: no change waits for a listener.
                reader.read_logged().await;
                tokio::time::sleep(Duration::from_millis(500)).await;
            };
            reader.wakers.wake_all();
            reader.feed.missed();
        }
        reader.read_logged().await;
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
            clock: None,
            max_connections: 8,
            application_name: "askuser-store".to_owned(),
        }
    }

    /// The connection pool (for a host that keeps its own tables beside the store's). Feature
    /// `sqlx`: its type is sqlx 0.9's, so an upgrade of sqlx may change it; nothing else of this
    /// crate's API names sqlx.
    #[cfg(feature = "sqlx")]
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

    fn recent(&self) -> Option<&store::Recent> {
        Some(&self.inner.recent)
    }

    fn write_health(&self) -> Option<&store::WriteHealth> {
        Some(&self.inner.writes)
    }

    fn feed(&self) -> &Feed {
        &self.inner.feed
    }

    async fn insert(&self, record: &PendingRecord) -> Result<bool, StoreError> {
        let mut tx = self.inner.pool.begin().await?;
        let inserted: Option<i64> = sqlx::query_scalar(INSERT)
            .bind(record.id())
            .bind(record.session_id())
            .bind(record.tool_name())
            .bind(record.profile().as_str())
            .bind(store::request_json(record))
            .bind(record.asked_at().unix_millis())
            .bind(record.nudge_at().unix_millis())
            .bind(record.expires_at().unix_millis())
            .bind(record.lease_until().map(Timestamp::unix_millis))
            .bind(record.asked_by().map(AskedBy::as_str))
            .fetch_optional(&mut *tx)
            .await?;
        if inserted.is_some() {
            append(&mut tx, vec![AuditEvent::asked(record)], self.clock().now()).await?;
        }
        tx.commit().await?;
        Ok(inserted.is_some())
    }

    async fn fetch(&self, id: &str) -> Result<Option<PendingRecord>, StoreError> {
        let row: Option<Row> = sqlx::query_as(FETCH).bind(id).fetch_optional(&self.inner.pool).await?;
        row.map(Row::into_record).transpose()
    }

    async fn list(&self, query: &ListQuery) -> Result<Page, StoreError> {
        let rows: Vec<Row> = sqlx::query_as(if query.newest_first { LIST_NEWEST } else { LIST })
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
        via: &Via,
    ) -> Result<Option<PendingRecord>, StoreError> {
        let mut tx = self.inner.pool.begin().await?;
        let row: Option<Row> = sqlx::query_as(CLOSE)
            .bind(id)
            .bind(state.as_str())
            .bind(now.unix_millis())
            .bind(due.code())
            .fetch_optional(&mut *tx)
            .await?;
        let record = row.map(Row::into_record).transpose()?;
        let events = audit::settled(&record, via);
        append(&mut tx, events, now).await?;
        tx.commit().await?;
        Ok(record)
    }

    async fn commit_answer(
        &self,
        record: &PendingRecord,
        state: State,
        response: &AskUserResponse,
        now: Timestamp,
        via: &Via,
    ) -> Result<Option<PendingRecord>, StoreError> {
        let mut tx = self.inner.pool.begin().await?;
        let changed: Option<(i64, Option<i64>)> = sqlx::query_as(ANSWER)
            .bind(record.id())
            .bind(state.as_str())
            .bind(store::response_json(response))
            .bind(response.answered_by.as_str())
            .bind(now.unix_millis())
            .bind(record.asked_at().unix_millis())
            .fetch_optional(&mut *tx)
            .await?;
        let answered =
            changed.map(|(version, lease_until)| record.answered(state, now, response, version, lease_until));
        let events = audit::settled(&answered, via);
        append(&mut tx, events, now).await?;
        tx.commit().await?;
        Ok(answered)
    }

    async fn commit_late(
        &self,
        record: &PendingRecord,
        response: &AskUserResponse,
        now: Timestamp,
        via: &Via,
    ) -> Result<Option<PendingRecord>, StoreError> {
        let mut tx = self.inner.pool.begin().await?;
        let changed: Option<(i64, Option<i64>)> = sqlx::query_as(LATE)
            .bind(record.id())
            .bind(store::response_json(response))
            .bind(response.answered_by.as_str())
            .bind(now.unix_millis())
            .bind(record.version())
            .fetch_optional(&mut *tx)
            .await?;
        let late = changed
            .map(|(version, lease_until)| record.answered(State::Late, now, response, version, lease_until));
        let events = audit::settled(&late, via);
        append(&mut tx, events, now).await?;
        tx.commit().await?;
        Ok(late)
    }

    async fn sweep(
        &self,
        sweep: Sweep,
        now: Timestamp,
        limit: usize,
    ) -> Result<Vec<PendingRecord>, StoreError> {
        let statement = match sweep {
            Sweep::Overdue => SWEEP,
            Sweep::Lapsed => LAPSE,
        };
        let mut tx = self.inner.pool.begin().await?;
        let rows: Vec<Row> = sqlx::query_as(statement)
            .bind(now.unix_millis())
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&mut *tx)
            .await?;
        let records = rows.into_iter().map(Row::into_record).collect::<Result<Vec<_>, _>>()?;
        let events = audit::settled(&records, &Via::default());
        append(&mut tx, events, now).await?;
        tx.commit().await?;
        Ok(records)
    }

    async fn purge(&self, before: Timestamp, limit: usize) -> Result<usize, StoreError> {
        let deleted = sqlx::query(PURGE)
            .bind(before.unix_millis())
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .execute(&self.inner.pool)
            .await?
            .rows_affected();
        Ok(usize::try_from(deleted).unwrap_or(usize::MAX))
    }

    async fn renew(&self, id: &str, until: Timestamp) -> Result<bool, StoreError> {
        let renewed: Option<i32> = sqlx::query_scalar(RENEW)
            .bind(id)
            .bind(until.unix_millis())
            .fetch_optional(&self.inner.pool)
            .await?;
        Ok(renewed.is_some())
    }

    async fn lease(
        &self,
        name: &str,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool, StoreError> {
        let held: Option<i32> = sqlx::query_scalar(LEASE)
            .bind(name)
            .bind(holder)
            .bind(now.unix_millis())
            .bind(until.unix_millis())
            .fetch_optional(&self.inner.pool)
            .await?;
        Ok(held.is_some())
    }

    async fn claim_once(&self, key: &Key, now: Timestamp) -> Result<bool, StoreError> {
        let claimed: Option<i32> = sqlx::query_scalar(CLAIM_ONCE)
            .bind(&key.namespace)
            .bind(&key.name)
            .bind(key.question_id.as_deref())
            .bind(key.expires_at.map(Timestamp::unix_millis))
            .bind(now.unix_millis())
            .fetch_optional(&self.inner.pool)
            .await?;
        Ok(claimed.is_some())
    }

    async fn value(&self, namespace: &str, key: &str, now: Timestamp) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(VALUE)
            .bind(namespace)
            .bind(key)
            .bind(now.unix_millis())
            .fetch_optional(&self.inner.pool)
            .await?)
    }

    async fn set_value(&self, key: &Key, value: &str, now: Timestamp) -> Result<(), StoreError> {
        if key.expires_at.is_some() {
            sqlx::query(DROP_LAPSED)
                .bind(&key.namespace)
                .bind(now.unix_millis())
                .execute(&self.inner.pool)
                .await?;
        }
        sqlx::query(SET_VALUE)
            .bind(&key.namespace)
            .bind(&key.name)
            .bind(value)
            .bind(key.question_id.as_deref())
            .bind(key.expires_at.map(Timestamp::unix_millis))
            .execute(&self.inner.pool)
            .await?;
        Ok(())
    }

    async fn remove_value(&self, namespace: &str, key: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM askuser_coordination WHERE namespace = $1 AND key = $2")
            .bind(namespace)
            .bind(key)
            .execute(&self.inner.pool)
            .await?;
        Ok(())
    }

    async fn values(&self, namespace: &str, now: Timestamp) -> Result<Vec<(String, String)>, StoreError> {
        Ok(sqlx::query_as(VALUES).bind(namespace).bind(now.unix_millis()).fetch_all(&self.inner.pool).await?)
    }

    async fn append_audit(&self, event: &AuditEvent, now: Timestamp) -> Result<AuditEntry, StoreError> {
        let mut tx = self.inner.pool.begin().await?;
        let mut entries = append(&mut tx, vec![event.clone()], now).await?;
        tx.commit().await?;
        entries
            .pop()
            .ok_or_else(|| StoreError::Corrupt { id: String::new(), reason: "no audit entry".to_owned() })
    }

    async fn audit_entries(
        &self,
        after: u64,
        since: Option<Timestamp>,
        limit: usize,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let rows = sqlx::query_as(AUDIT_READ)
            .bind(i64::try_from(after).unwrap_or(i64::MAX))
            .bind(since.map(Timestamp::unix_millis))
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&self.inner.pool)
            .await?;
        Ok(audit::entries(rows))
    }
}

/// Appends `events` at `now` in `tx`, after taking the audit table's lock: each after the last
/// entry, whichever replica wrote it.
async fn append(
    tx: &mut PgConnection,
    events: Vec<AuditEvent>,
    now: Timestamp,
) -> Result<Vec<AuditEntry>, StoreError> {
    if events.is_empty() {
        return Ok(Vec::new());
    }
    sqlx::query(AUDIT_LOCK).execute(&mut *tx).await?;
    let last = sqlx::query_as(AUDIT_LAST).fetch_optional(&mut *tx).await?;
    let entries = audit::chained(last, &events, now);
    for entry in &entries {
        sqlx::query(AUDIT_APPEND)
            .bind(i64::try_from(entry.seq).unwrap_or(i64::MAX))
            .bind(now.unix_millis())
            .bind(&entry.line)
            .bind(&entry.hash)
            .execute(&mut *tx)
            .await?;
    }
    Ok(entries)
}

store::pending_store_via_backend!(PostgresStore);
