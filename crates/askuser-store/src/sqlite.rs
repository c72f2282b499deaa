//! [`SqliteStore`]: one file in WAL mode, shared by every process on the host. The embedded
//! default.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use askuser_core::{AskUserResponse, Timestamp};
use sqlx::Connection as _;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};

use crate::audit::{self, AuditEntry, AuditEvent, Via};
use crate::coordination::Key;
use crate::error::StoreError;
use crate::feed::{Change, Feed};
use crate::record::{AskedBy, ListQuery, Page, PendingRecord, State};
use crate::store::{self, Backend, Due, Row, Sweep};
use crate::time::{Clock, SystemClock};
use crate::wake::Wakers;

macro_rules! columns {
    () => {
        "id, session_id, asked_by, tool_name, profile, request, state, asked_at, nudge_at, expires_at, \
         lease_until, closed_at, answered_by, response, version"
    };
}

/// Idempotent put: an existing id is left alone (the caller compares what is stored); a row comes
/// back only when this statement inserted it.
const INSERT: &str = "INSERT INTO askuser_pending \
     (id, session_id, tool_name, profile, request, state, asked_at, nudge_at, expires_at, lease_until, version, \
      change_seq, asked_by) \
     VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?7, ?8, ?9, 1, \
         (SELECT coalesce(max(change_seq), 0) + 1 FROM askuser_pending), ?10) \
     ON CONFLICT (id) DO NOTHING RETURNING version";

const FETCH: &str = concat!("SELECT ", columns!(), " FROM askuser_pending WHERE id = ?1");

/// Keyset paging in asking order; one row more than the page says whether another page follows.
const LIST: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM askuser_pending \
     WHERE (?1 IS NULL OR session_id = ?1) AND (?2 IS NULL OR state = ?2) \
     AND (?3 IS NULL OR asked_at > ?3 OR (asked_at = ?3 AND id > ?4)) \
     ORDER BY asked_at, id LIMIT ?5"
);

/// [`LIST`] newest first, reading the same indexes backwards.
const LIST_NEWEST: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM askuser_pending \
     WHERE (?1 IS NULL OR session_id = ?1) AND (?2 IS NULL OR state = ?2) \
     AND (?3 IS NULL OR asked_at < ?3 OR (asked_at = ?3 AND id < ?4)) \
     ORDER BY asked_at DESC, id DESC LIMIT ?5"
);

/// Retention: settled rows closed before `?1`, the longest closed first. The row holding the
/// highest `change_seq` is kept, whatever its age: the next change's number is that one plus one,
/// and a number taken again would be below what other processes' followers have read.
const PURGE: &str = "DELETE FROM askuser_pending WHERE id IN \
     (SELECT id FROM askuser_pending WHERE state <> 'pending' AND closed_at < ?1 \
      AND change_seq IS NOT (SELECT max(change_seq) FROM askuser_pending) \
      ORDER BY closed_at LIMIT ?2)";

/// First change wins: the row changes only while it is 'pending', in one statement, and SQLite
/// runs one writer at a time, so of two racing changes (two answers, an answer and a sweep)
/// exactly one updates the row. An answer commits only before `expires_at`, so an expired question
/// is never answerable. `change_seq` records the order for other processes' pollers.
const ANSWER: &str = "UPDATE askuser_pending \
     SET state = ?2, response = ?3, answered_by = ?4, closed_at = ?5, version = version + 1, \
         change_seq = (SELECT coalesce(max(change_seq), 0) + 1 FROM askuser_pending) \
     WHERE id = ?1 AND state = 'pending' AND expires_at > ?5 AND asked_at = ?6 \
     RETURNING version, lease_until";

/// A late answer: the row as it timed out (the same `version`) takes the response.
const LATE: &str = "UPDATE askuser_pending \
     SET state = 'late', response = ?2, answered_by = ?3, closed_at = ?4, version = version + 1, \
         change_seq = (SELECT coalesce(max(change_seq), 0) + 1 FROM askuser_pending) \
     WHERE id = ?1 AND state = 'timed_out' AND version = ?5 \
     RETURNING version, lease_until";

/// The audit log's last entry, read under the write lock its append holds.
const AUDIT_LAST: &str = "SELECT seq, hash FROM askuser_audit ORDER BY seq DESC LIMIT 1";

const AUDIT_APPEND: &str = "INSERT INTO askuser_audit (seq, at, line, hash) VALUES (?1, ?2, ?3, ?4)";

const AUDIT_READ: &str = "SELECT seq, at, line, hash FROM askuser_audit \
     WHERE seq > ?1 AND (?2 IS NULL OR at >= ?2) ORDER BY seq LIMIT ?3";

/// Cancel or time out one pending row, by the same first-change-wins rule; `?4` says which
/// deadlines qualify (`Due`: any, or only overdue).
const CLOSE: &str = concat!(
    "UPDATE askuser_pending \
     SET state = ?2, closed_at = ?3, version = version + 1, \
         change_seq = (SELECT coalesce(max(change_seq), 0) + 1 FROM askuser_pending) \
     WHERE id = ?1 AND state = 'pending' AND (?4 = 0 OR expires_at <= ?3) \
     RETURNING ",
    columns!()
);

/// The sweep never double-expires: one statement, one writer at a time, and only 'pending' rows.
/// Each row it expires takes a `change_seq` of its own, in deadline order.
const SWEEP: &str = concat!(
    "UPDATE askuser_pending \
     SET state = 'timed_out', closed_at = ?1, version = version + 1, change_seq = last.seq + due.n \
     FROM (SELECT coalesce(max(change_seq), 0) AS seq FROM askuser_pending) AS last, \
          (SELECT id AS due_id, row_number() OVER (ORDER BY expires_at, id) AS n FROM askuser_pending \
           WHERE state = 'pending' AND expires_at <= ?1 ORDER BY expires_at, id LIMIT ?2) AS due \
     WHERE id = due.due_id AND state = 'pending' \
     RETURNING ",
    columns!()
);

/// The withdrawal of questions whose asker's lease lapsed, by the same rules as the sweep.
const LAPSE: &str = concat!(
    "UPDATE askuser_pending \
     SET state = 'cancelled', closed_at = ?1, version = version + 1, change_seq = last.seq + due.n \
     FROM (SELECT coalesce(max(change_seq), 0) AS seq FROM askuser_pending) AS last, \
          (SELECT id AS due_id, row_number() OVER (ORDER BY lease_until, id) AS n FROM askuser_pending \
           WHERE state = 'pending' AND lease_until IS NOT NULL AND lease_until < ?1 AND expires_at > ?1 \
           ORDER BY lease_until, id LIMIT ?2) AS due \
     WHERE id = due.due_id AND state = 'pending' \
     RETURNING ",
    columns!()
);

/// A lease taken when free, lapsed, or already the caller's (one statement: of several callers at
/// once exactly one gets a free lease).
const LEASE: &str = "INSERT INTO askuser_coordination (namespace, key, value, expires_at) VALUES ('lease', ?1, ?2, ?4) \
     ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at \
     WHERE askuser_coordination.value = excluded.value OR askuser_coordination.expires_at <= ?3 RETURNING 1";

/// A key claimed once: inserted unless a row holds it that has not lapsed, and only while its
/// question (if it names one) is there.
const CLAIM_ONCE: &str = "INSERT INTO askuser_coordination (namespace, key, value, question_id, expires_at) \
     SELECT ?1, ?2, '', ?3, ?4 WHERE ?3 IS NULL OR EXISTS (SELECT 1 FROM askuser_pending WHERE id = ?3) \
     ON CONFLICT (namespace, key) DO UPDATE SET value = '', question_id = excluded.question_id, \
         expires_at = excluded.expires_at \
     WHERE askuser_coordination.expires_at <= ?5 RETURNING 1";

const SET_VALUE: &str = "INSERT INTO askuser_coordination (namespace, key, value, question_id, expires_at) \
     SELECT ?1, ?2, ?3, ?4, ?5 WHERE ?4 IS NULL OR EXISTS (SELECT 1 FROM askuser_pending WHERE id = ?4) \
     ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, question_id = excluded.question_id, \
         expires_at = excluded.expires_at";

const DROP_LAPSED: &str = "DELETE FROM askuser_coordination WHERE namespace = ?1 AND expires_at <= ?2";

const VALUE: &str = "SELECT value FROM askuser_coordination \
     WHERE namespace = ?1 AND key = ?2 AND (expires_at IS NULL OR expires_at > ?3)";

const VALUES: &str = "SELECT key, value FROM askuser_coordination \
     WHERE namespace = ?1 AND (expires_at IS NULL OR expires_at > ?2) ORDER BY key";

/// A lease renewed (never shortened), only while the question waits and holds one.
const RENEW: &str = "UPDATE askuser_pending SET lease_until = max(lease_until, ?2) \
     WHERE id = ?1 AND state = 'pending' AND lease_until IS NOT NULL RETURNING 1";

/// The changes since the last one read, in commit order (a page at a time).
const CHANGES: &str = "SELECT id, session_id, state, version, change_seq FROM askuser_pending \
     WHERE change_seq > ?1 ORDER BY change_seq LIMIT 1000";

const LAST_CHANGE: &str = "SELECT coalesce(max(change_seq), 0) FROM askuser_pending";

/// However still the file's `data_version` stays, the changes are read at least this often.
const BACKSTOP: Duration = Duration::from_secs(1);

/// SQLite's default page size, which the store keeps.
const PAGE_SIZE: u64 = 4096;

/// A store in one SQLite file (WAL mode), shared by every process that opens the same path.
///
/// Watchers in this process wake as soon as a change commits here; changes made by another
/// process are found by polling (every 50 ms by default, one indexed query per store, whatever the
/// number of watchers). Commits use `synchronous = NORMAL`: a committed answer survives the crash
/// of any process (`kill -9`); only a power failure may lose the last commits (use
/// [`SqliteStoreBuilder::synchronous_full`] to also survive that). Cheap to clone.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = std::env::temp_dir().join(format!("askuser-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// use askuser_store::{PendingStore, SqliteStore, ListQuery};
///
/// let store = SqliteStore::open(dir.join("pending.db")).await?;
/// assert!(store.list(&ListQuery::new()).await?.records.is_empty());
/// # drop(store);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Reads.
    pool: SqlitePool,
    /// Writes, one at a time: SQLite runs one writer at a time anyway, and a second connection of
    /// this process that found the file locked would sleep in the busy handler (milliseconds)
    /// instead of queueing here (microseconds). Other processes still meet the busy handler.
    writer: SqlitePool,
    path: PathBuf,
    wakers: Arc<Wakers>,
    feed: Arc<Feed>,
    /// The pending records this process put or read lately: an answer skips its read.
    recent: store::Recent,
    /// Whether its last writes failed, for `cannot_write`.
    writes: store::WriteHealth,
    clock: Arc<dyn Clock>,
    follower: tokio::task::JoinHandle<()>,
    /// How many times the follower looked at the file's `data_version`.
    polls: Arc<std::sync::atomic::AtomicU64>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.follower.abort();
    }
}

/// Options for [`SqliteStore`]; from [`SqliteStore::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct SqliteStoreBuilder {
    path: PathBuf,
    clock: Arc<dyn Clock>,
    poll_interval: Duration,
    max_connections: u32,
    synchronous_full: bool,
    max_pages: Option<u64>,
}

impl SqliteStoreBuilder {
    /// The clock deadlines are read from. Default: the system clock.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// How often to check whether another connection (another process) committed a change
    /// (`PRAGMA data_version`, which costs no read of the tables). Default: 5 ms.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// The most connections to hold open for reading (writes use one more). Default: 4.
    pub fn max_connections(mut self, n: u32) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// Sync the WAL on every commit (`synchronous = FULL`), so commits also survive a power
    /// failure; about twice as slow to commit. Default: off (`NORMAL`: commits survive any
    /// process crash).
    pub fn synchronous_full(mut self, full: bool) -> Self {
        self.synchronous_full = full;
        self
    }

    /// Caps the file at about `bytes` (whole pages of 4 KiB): a write that would grow it further
    /// fails as [`StoreError::is_unavailable`], exactly as on a full disk, and nothing of it is
    /// stored. Default: no cap but the disk's.
    pub fn max_size(mut self, bytes: u64) -> Self {
        self.max_pages = Some((bytes / PAGE_SIZE).max(1));
        self
    }

    /// Opens (creating it when missing) the file and brings its schema up to date. On Unix the
    /// file is created mode 0600 (SQLite gives its `-wal` and `-shm` files the same mode), and an
    /// existing file, `-wal` or `-shm` that other users may read or write is made 0600, with a
    /// warning logged.
    ///
    /// # Errors
    ///
    /// The file cannot be opened or created, or a migration fails.
    pub async fn open(self) -> Result<SqliteStore, StoreError> {
        make_private(&self.path)?;
        let options = SqliteConnectOptions::new()
            .filename(&self.path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(if self.synchronous_full {
                SqliteSynchronous::Full
            } else {
                SqliteSynchronous::Normal
            })
            .busy_timeout(Duration::from_secs(10));
        let options = match self.max_pages {
            Some(pages) => options.pragma("max_page_count", pages.to_string()),
            None => options,
        };
        let writer = open_writer(&options).await?;
        let pool = SqlitePoolOptions::new()
            .max_connections(self.max_connections)
            .connect_with(options.clone())
            .await?;
        let wakers = Arc::<Wakers>::default();
        let feed = Arc::<Feed>::default();
        let mut reader = SqliteConnection::connect_with(&options).await?;
        let cursor: i64 = sqlx::query_scalar(LAST_CHANGE).fetch_one(&mut reader).await?;
        let polls = Arc::<std::sync::atomic::AtomicU64>::default();
        let follower = tokio::spawn(follow(
            reader,
            Arc::clone(&wakers),
            Arc::clone(&feed),
            cursor,
            self.poll_interval,
            Arc::clone(&polls),
        ));
        Ok(SqliteStore {
            inner: Arc::new(Inner {
                pool,
                writer,
                path: self.path,
                wakers,
                feed,
                recent: store::Recent::default(),
                writes: store::WriteHealth::default(),
                clock: self.clock,
                follower,
                polls,
            }),
        })
    }
}

/// Creates the store file mode 0600 when missing, and makes it, its `-wal` and its `-shm` 0600
/// when other users may read or write them: every question and answer is in them.
fn make_private(path: &Path) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
        let failed =
            |path: &Path, source| StoreError::Permissions { path: path.display().to_string(), source };
        // `:memory:` and SQLite's other special names are no files.
        if path.as_os_str().is_empty() || path.to_string_lossy().starts_with(':') {
            return Ok(());
        }
        match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(failed(path, e)),
        }
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let mut shm = path.as_os_str().to_owned();
        shm.push("-shm");
        for file in [path.to_owned(), wal.into(), shm.into()] {
            let metadata = match std::fs::symlink_metadata(&file) {
                Ok(metadata) => metadata,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(failed(&file, e)),
            };
            refuse_unless_own(&file, &metadata)?;
            let mode = metadata.permissions().mode();
            if mode & 0o077 != 0 {
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
                    .map_err(|e| failed(&file, e))?;
                tracing::warn!(
                    "store file {} was open to other users (mode {:o}): made 0600",
                    file.display(),
                    mode & 0o777
                );
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Refuses a store file that is not this user's own regular file, as the API token file is
/// refused (issue 36.7): a `pending.db`, `-wal` or `-shm` another user planted in a shared
/// directory was used silently.
#[cfg(unix)]
fn refuse_unless_own(file: &Path, metadata: &std::fs::Metadata) -> Result<(), StoreError> {
    use std::os::unix::fs::MetadataExt as _;
    let unsafe_file = |reason: String| StoreError::Unsafe { path: file.display().to_string(), reason };
    if metadata.file_type().is_symlink() {
        return Err(unsafe_file("is a symbolic link: refused (name the file it points to)".to_owned()));
    }
    if !metadata.is_file() {
        return Err(unsafe_file("is not a regular file: refused".to_owned()));
    }
    let me = rustix::process::geteuid().as_raw();
    if metadata.uid() != me {
        return Err(unsafe_file(format!(
            "is owned by user {} and you are user {me}: refused (what another user planted there would \
             be taken as your questions and answers); use a store of your own",
            metadata.uid()
        )));
    }
    Ok(())
}

/// Connects the writer and runs the embedded migrations. Two processes opening a new file at
/// once can race: switching a new file to WAL mode, and the migrations (SQLite's migrator takes no
/// lock), may fail with "database is locked" for the loser, whose migration transaction rolls
/// back. Trying again finds the winner's work done.
async fn open_writer(options: &SqliteConnectOptions) -> Result<SqlitePool, StoreError> {
    let mut attempt = 0;
    loop {
        let opened = async {
            let writer = SqlitePoolOptions::new()
                .max_connections(1)
                .after_release(|connection, _| Box::pin(fresh_after_a_failed_commit(connection)))
                .connect_with(options.clone())
                .await?;
            crate::migrate::sqlite(&writer, &crate::migrate::own_table(sqlx::migrate!("migrations/sqlite")))
                .await?;
            Ok::<_, StoreError>(writer)
        };
        match opened.await {
            Ok(writer) => return Ok(writer),
            Err(_) if attempt < 5 => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(20 * attempt)).await;
            }
            Err(error) => return Err(error),
        }
    }
}

/// Whether the writer connection may go back to its pool: not when sqlx still counts a
/// transaction on it. A COMMIT that fails on a full disk can leave SQLite with the transaction
/// rolled back by itself; the ROLLBACK that sqlx sends when the transaction is dropped then fails
/// too, and sqlx goes on counting one open transaction, so that every later `BEGIN` on the
/// connection was refused ("attempted to call `begin_with` at non-zero transaction depth") until
/// the process restarted (issue 36.13). Closed instead, the connection is replaced at the next
/// write, which succeeds as soon as the disk has room.
async fn fresh_after_a_failed_commit(connection: &mut sqlx::SqliteConnection) -> Result<bool, sqlx::Error> {
    use sqlx::Connection as _;
    // The ROLLBACK queued when the transaction was dropped runs first.
    connection.ping().await?;
    let clean = !connection.is_in_transaction();
    if !clean {
        tracing::warn!("the store's writer connection was left in a failed transaction: opening a new one");
    }
    Ok(clean)
}

/// Follows the file's changes, on a connection of its own: whenever its `data_version` moved
/// (any other connection, in this process or another, committed), when this process kicks the
/// feed, and at least every [`BACKSTOP`], reads the rows past `cursor`, wakes the watchers of those
/// that left `pending` and tells the feed.
///
/// While nobody listens (no subscriber to the feed, no watcher) it does not tick: it waits for a
/// kick (a commit here, a new subscriber or watcher), then reads on from `cursor`, so a change
/// committed while it was idle still wakes a watcher that came meanwhile.
async fn follow(
    mut reader: SqliteConnection,
    wakers: Arc<Wakers>,
    feed: Arc<Feed>,
    mut cursor: i64,
    interval: Duration,
    polls: Arc<std::sync::atomic::AtomicU64>,
) {
    let mut data_version = None;
    let mut last_read = tokio::time::Instant::now();
    loop {
        if !feed.has_subscribers() && wakers.is_empty() {
            feed.kicked().await;
        } else {
            tokio::select! {
                () = feed.kicked() => {}
                () = tokio::time::sleep(interval) => {
                    polls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let now =
                        sqlx::query_scalar::<_, i64>("PRAGMA data_version").fetch_one(&mut reader).await.ok();
                    if now.is_some() && now == data_version && last_read.elapsed() < BACKSTOP {
                        continue;
                    }
                    data_version = now;
                }
            }
        }
        last_read = tokio::time::Instant::now();
        loop {
            // A failed read (the file busy for longer than the timeout) is tried again next time.
            let Ok(rows) = sqlx::query_as::<_, (String, Option<String>, String, i64, i64)>(CHANGES)
                .bind(cursor)
                .fetch_all(&mut reader)
                .await
            else {
                break;
            };
            let full = rows.len() == 1000;
            for (id, session_id, state, version, seq) in rows {
                cursor = cursor.max(seq);
                let Ok(state) = state.parse::<State>() else { continue };
                if state != State::Pending {
                    wakers.wake(&id);
                }
                feed.send(Change { id, session_id, state, version });
            }
            if !full {
                break;
            }
        }
    }
}

impl SqliteStore {
    /// Opens the store in the file at `path` with the default options.
    ///
    /// # Errors
    ///
    /// See [`SqliteStoreBuilder::open`].
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::builder(path).open().await
    }

    /// Options for the store in the file at `path`.
    pub fn builder(path: impl AsRef<Path>) -> SqliteStoreBuilder {
        SqliteStoreBuilder {
            path: path.as_ref().to_owned(),
            clock: Arc::new(SystemClock),
            poll_interval: Duration::from_millis(5),
            max_connections: 4,
            synchronous_full: false,
            max_pages: None,
        }
    }

    /// How many times this store's follower has looked at the file for changes by other
    /// processes: it looks only while someone listens (a [`changes`](PendingStore::changes)
    /// subscriber or a [`watch`](PendingStore::watch)). For tests and diagnostics.
    #[doc(hidden)]
    #[must_use]
    pub fn follower_polls(&self) -> u64 {
        self.inner.polls.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The connection pool (for a host that keeps its own tables beside the store's). Feature
    /// `sqlx`: its type is sqlx 0.9's, so an upgrade of sqlx may change it; nothing else of this
    /// crate's API names sqlx.
    #[cfg(feature = "sqlx")]
    #[must_use]
    pub fn pool(&self) -> &SqlitePool {
        &self.inner.pool
    }

    /// The file's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// A write transaction on the writer connection, holding the file's write lock from its start.
    ///
    /// Every write runs in one and is committed explicitly, so that a failed commit (a full disk,
    /// an I/O error) is an error the caller sees: run alone, a statement with `RETURNING` hands
    /// its rows back before SQLite commits it, and sqlx drops the commit's error (sqlx issue
    /// 3430), so a write that was never stored would be reported as done.
    async fn write(&self) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>, StoreError> {
        Ok(self.inner.writer.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// Closes the connections (after the current operations). Dropping the last clone also does.
    pub async fn close(&self) {
        self.inner.follower.abort();
        self.inner.pool.close().await;
        self.inner.writer.close().await;
    }
}

#[async_trait::async_trait]
impl Backend for SqliteStore {
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
        let mut tx = self.write().await?;
        let event = AuditEvent::asked(record);
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
            append(&mut tx, vec![event], self.inner.clock.now()).await?;
        }
        tx.commit().await?;
        self.inner.feed.kick();
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
        let mut tx = self.write().await?;
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
        self.inner.feed.kick();
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
        let mut tx = self.write().await?;
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
        self.inner.feed.kick();
        Ok(answered)
    }

    async fn commit_late(
        &self,
        record: &PendingRecord,
        response: &AskUserResponse,
        now: Timestamp,
        via: &Via,
    ) -> Result<Option<PendingRecord>, StoreError> {
        let mut tx = self.write().await?;
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
        self.inner.feed.kick();
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
        let mut tx = self.write().await?;
        let rows: Vec<Row> = sqlx::query_as(statement)
            .bind(now.unix_millis())
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&mut *tx)
            .await?;
        let records = rows.into_iter().map(Row::into_record).collect::<Result<Vec<_>, _>>()?;
        let events = audit::settled(&records, &Via::default());
        append(&mut tx, events, now).await?;
        tx.commit().await?;
        self.inner.feed.kick();
        Ok(records)
    }

    async fn purge(&self, before: Timestamp, limit: usize) -> Result<usize, StoreError> {
        let mut tx = self.write().await?;
        let deleted = sqlx::query(PURGE)
            .bind(before.unix_millis())
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .execute(&mut *tx)
            .await?
            .rows_affected();
        tx.commit().await?;
        Ok(usize::try_from(deleted).unwrap_or(usize::MAX))
    }

    async fn renew(&self, id: &str, until: Timestamp) -> Result<bool, StoreError> {
        let mut tx = self.write().await?;
        let renewed: Option<i64> =
            sqlx::query_scalar(RENEW).bind(id).bind(until.unix_millis()).fetch_optional(&mut *tx).await?;
        tx.commit().await?;
        Ok(renewed.is_some())
    }

    async fn lease(
        &self,
        name: &str,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool, StoreError> {
        let mut tx = self.write().await?;
        let held: Option<i64> = sqlx::query_scalar(LEASE)
            .bind(name)
            .bind(holder)
            .bind(now.unix_millis())
            .bind(until.unix_millis())
            .fetch_optional(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(held.is_some())
    }

    async fn claim_once(&self, key: &Key, now: Timestamp) -> Result<bool, StoreError> {
        let mut tx = self.write().await?;
        let claimed: Option<i64> = sqlx::query_scalar(CLAIM_ONCE)
            .bind(&key.namespace)
            .bind(&key.name)
            .bind(key.question_id.as_deref())
            .bind(key.expires_at.map(Timestamp::unix_millis))
            .bind(now.unix_millis())
            .fetch_optional(&mut *tx)
            .await?;
        tx.commit().await?;
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
        let mut tx = self.write().await?;
        if key.expires_at.is_some() {
            sqlx::query(DROP_LAPSED).bind(&key.namespace).bind(now.unix_millis()).execute(&mut *tx).await?;
        }
        sqlx::query(SET_VALUE)
            .bind(&key.namespace)
            .bind(&key.name)
            .bind(value)
            .bind(key.question_id.as_deref())
            .bind(key.expires_at.map(Timestamp::unix_millis))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn remove_value(&self, namespace: &str, key: &str) -> Result<(), StoreError> {
        let mut tx = self.write().await?;
        sqlx::query("DELETE FROM askuser_coordination WHERE namespace = ?1 AND key = ?2")
            .bind(namespace)
            .bind(key)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn append_audit(&self, event: &AuditEvent, now: Timestamp) -> Result<AuditEntry, StoreError> {
        let mut tx = self.write().await?;
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

    async fn values(&self, namespace: &str, now: Timestamp) -> Result<Vec<(String, String)>, StoreError> {
        Ok(sqlx::query_as(VALUES).bind(namespace).bind(now.unix_millis()).fetch_all(&self.inner.pool).await?)
    }
}

/// Appends `events` at `now` in `tx`, which holds the file's write lock: each after the last entry.
async fn append(
    tx: &mut SqliteConnection,
    events: Vec<AuditEvent>,
    now: Timestamp,
) -> Result<Vec<AuditEntry>, StoreError> {
    if events.is_empty() {
        return Ok(Vec::new());
    }
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

store::pending_store_via_backend!(SqliteStore);
