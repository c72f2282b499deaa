//! The [`PendingStore`] trait, and the logic every backend shares: a backend supplies a few
//! primitive statements ([`Backend`]); the rules (first answer wins, checked before commit,
//! expired questions are never answerable, wake the waiters) live here once.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

#[cfg(any(feature = "sqlite", feature = "postgres"))]
use askuser_core::{AskUserRequest, Profile};
use askuser_core::{AskUserResponse, Timestamp};

use crate::audit::{AuditEntry, AuditEvent, AuditLog, Via};
use crate::coordination::{Coordination, Key};
use crate::error::StoreError;
use crate::feed::{Changes, Feed};
use crate::record::{ListQuery, NewQuestion, Page, PendingRecord, State};
use crate::time::Clock;
use crate::wake::Wakers;

/// Where pending questions live while someone answers them: one trait, three backends
/// ([`MemoryStore`](crate::MemoryStore), [`SqliteStore`](crate::SqliteStore),
/// `PostgresStore`) that pass one shared test suite.
///
/// A record changes state at most once, from `pending` to `answered`, `declined`, `timed_out` or
/// `cancelled`; whichever change commits first wins, in every backend, across processes.
///
/// The trait knows only questions; what the processes sharing a store agree on besides them
/// (leases, claims, small values) is [`Coordination`](crate::Coordination).
#[async_trait::async_trait]
pub trait PendingStore: Send + Sync + fmt::Debug {
    /// Stores a new pending question, or returns the one already stored under its id (a put is
    /// idempotent: a retried put after a lost reply changes nothing).
    ///
    /// # Errors
    ///
    /// [`StoreError::IdTaken`] when the id holds a different request, session or tool name; a
    /// database error.
    async fn put(&self, question: NewQuestion) -> Result<PendingRecord, StoreError>;

    /// Whether the store's last ask, answer or cancel failed because the database cannot write
    /// just now ([`StoreError::is_unavailable`]: a full disk, a read-only database), less than
    /// [`WRITE_FAILURE_MEMORY`] ago, and none has succeeded since. A database that answers reads
    /// may still be unable to write: a full disk leaves reads working. `false` for a store that
    /// does not track it (the default).
    fn cannot_write(&self) -> bool {
        false
    }

    /// [`put`](Self::put), and whether this call stored the question (`false`: the same question
    /// was stored already, by an earlier put; its record is returned as it stands, settled or
    /// not). The built-in stores know it from their insert; this default, for a store of one's own
    /// that implements only `put`, reads the id first and may call a put that raced it a repeat.
    ///
    /// # Errors
    ///
    /// As [`put`](Self::put).
    async fn put_reporting(&self, question: NewQuestion) -> Result<(PendingRecord, bool), StoreError> {
        let existed = self.get(question.id()).await?.is_some();
        Ok((self.put(question).await?, !existed))
    }

    /// The record with this id, if any.
    ///
    /// # Errors
    ///
    /// A database error, or [`StoreError::Corrupt`].
    async fn get(&self, id: &str) -> Result<Option<PendingRecord>, StoreError>;

    /// One page of records, oldest asked first.
    ///
    /// # Errors
    ///
    /// A database error, or [`StoreError::Corrupt`].
    async fn list(&self, query: &ListQuery) -> Result<Page, StoreError>;

    /// Commits the answer to a pending question and wakes its watchers: `answered`, or `declined`
    /// for a declining response. The response is checked against the request first; the first
    /// answer to commit wins.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidResponse`] (nothing written); [`StoreError::Conflict`] holding the
    /// first answer; [`StoreError::Closed`] when the question timed out (also when it is past
    /// `expires_at` and no sweep has run yet: it is marked `timed_out` now) or was cancelled;
    /// [`StoreError::NotFound`]; a database error.
    async fn commit_answer(&self, id: &str, response: &AskUserResponse) -> Result<PendingRecord, StoreError>;

    /// [`commit_answer`](Self::commit_answer), made `via` a surface by a person: what the audit
    /// event of the answer says. The default, for a store of one's own, forgets `via`.
    ///
    /// # Errors
    ///
    /// As [`commit_answer`](Self::commit_answer).
    async fn commit_answer_via(
        &self,
        id: &str,
        response: &AskUserResponse,
        via: &Via,
    ) -> Result<PendingRecord, StoreError> {
        let _ = via;
        self.commit_answer(id, response).await
    }

    /// Commits a late answer: a question that timed out less than `window` ago (and is no
    /// approval: an expired approval stays expired) becomes `late` with `response`, and wakes its
    /// watchers. Whoever still listens gets it as late; what its asker was told at the deadline
    /// stays true. The default, for a store of one's own, takes no late answer.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidResponse`] (nothing written); [`StoreError::Conflict`] holding the
    /// answer that came first (in time or late); [`StoreError::Closed`] for a question still
    /// pending, cancelled, an approval, or timed out `window` ago or more; [`StoreError::NotFound`];
    /// a database error.
    async fn commit_late_answer(
        &self,
        id: &str,
        response: &AskUserResponse,
        window: Duration,
        via: &Via,
    ) -> Result<PendingRecord, StoreError> {
        let _ = (response, window, via);
        match self.get(id).await? {
            Some(record) => Err(settled(record)),
            None => Err(StoreError::NotFound { id: id.to_owned() }),
        }
    }

    /// Marks a pending question `cancelled` (its asker stopped waiting) and wakes its watchers.
    /// A record that is no longer pending is returned unchanged.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`]; a database error.
    async fn cancel(&self, id: &str) -> Result<PendingRecord, StoreError>;

    /// [`cancel`](Self::cancel), and whether this call cancelled the question (`false`: it had
    /// already left `pending`, and is returned unchanged). The built-in stores know it from their
    /// update; this default, for a store of one's own, compares the record before and after.
    ///
    /// # Errors
    ///
    /// As [`cancel`](Self::cancel).
    async fn cancel_reporting(&self, id: &str) -> Result<(PendingRecord, bool), StoreError> {
        let before = self.get(id).await?.map(|r| r.state());
        let after = self.cancel(id).await?;
        Ok((after.clone(), before == Some(State::Pending) && after.state() == State::Cancelled))
    }

    /// Marks a pending question `timed_out` now, whatever its deadline (its asker's own timer
    /// ran out), and wakes its watchers. A record that is no longer pending is returned unchanged.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`]; a database error.
    async fn expire(&self, id: &str) -> Result<PendingRecord, StoreError>;

    /// The sweep: marks up to `limit` pending questions past their `expires_at` as `timed_out`
    /// and wakes their watchers; returns them. Safe to run from many processes at once: each
    /// question is expired by exactly one sweep, and never after an answer committed.
    ///
    /// # Errors
    ///
    /// A database error.
    async fn expire_due(&self, limit: usize) -> Result<Vec<PendingRecord>, StoreError>;

    /// Renews the lease of a pending question put with [`NewQuestion::lease`]: it now lapses no
    /// sooner than `lease` from now (a renewal never shortens it). Its asker calls this while it
    /// waits; a question whose asker was killed is withdrawn by the sweep once its lease lapses.
    /// Returns whether the question is still pending and holds a lease (`false` for a deferred
    /// question, one that left `pending`, and an unknown id).
    ///
    /// # Errors
    ///
    /// A database error.
    async fn renew(&self, id: &str, lease: Duration) -> Result<bool, StoreError>;

    /// Withdraws (marks `cancelled`) up to `limit` pending questions whose lease lapsed unrenewed
    /// (their asker stopped waiting: it was killed, or lost its way to the store) and wakes their
    /// watchers; returns them. By the sweep's rules: each by one caller, never after an answer
    /// committed. A question past its deadline is the sweep's ([`expire_due`](Self::expire_due)
    /// first), not this one's.
    ///
    /// Call it only once the store has been reachable for longer than the leases given: during an
    /// outage no asker can renew, and its question must not be withdrawn the moment the store
    /// comes back ([`Sweeper`](crate::Sweeper) does so).
    ///
    /// # Errors
    ///
    /// A database error.
    async fn withdraw_lapsed(&self, limit: usize) -> Result<Vec<PendingRecord>, StoreError>;

    /// Retention: deletes up to `limit` settled records (answered, declined, timed out or
    /// withdrawn) that left `pending` more than `keep` ago on the store's clock, the longest
    /// settled first; returns how many. A pending record is never deleted, whatever its age.
    /// [`Sweeper::keep`](crate::Sweeper::keep) calls it for a server (`askuser serve
    /// --keep-days`).
    ///
    /// # Errors
    ///
    /// A database error; what was deleted before it stays deleted.
    async fn purge(&self, keep: Duration, limit: usize) -> Result<usize, StoreError>;

    /// Resolves when the record leaves `pending` (at once if it already has), with the record.
    /// Across processes: at once in this process; polling on SQLite; `LISTEN`/`NOTIFY` on
    /// PostgreSQL. Dropping the future stops watching and changes nothing.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`]; a database error.
    async fn watch(&self, id: &str) -> Result<PendingRecord, StoreError>;

    /// The change feed from now on: every question asked and every one leaving `pending`, by any
    /// process sharing the store (the in-memory store: by this store). Each change arrives within
    /// a second of its commit, normally within milliseconds.
    fn changes(&self) -> Changes;
}

/// A store that keeps questions, coordination and the audit log: what the layers that coordinate
/// replicas run on. Every type implementing the three traits is one; [`open`](crate::open)
/// returns one.
pub trait SharedStore: PendingStore + Coordination + AuditLog {}

impl<T: PendingStore + Coordination + AuditLog + ?Sized> SharedStore for T {}

/// Which pending records a [`Backend::close`] may change, by deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Due {
    /// Any pending record.
    Any,
    /// Only one at or past its `expires_at` (an overdue question met by an answer).
    Overdue,
}

impl Due {
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn code(self) -> i64 {
        match self {
            Self::Any => 0,
            Self::Overdue => 1,
        }
    }

    pub(crate) fn admits(self, expires_at: Timestamp, now: Timestamp) -> bool {
        match self {
            Self::Any => true,
            Self::Overdue => now >= expires_at,
        }
    }
}

/// The primitive statements a backend runs; each one is a single atomic statement.
#[async_trait::async_trait]
pub(crate) trait Backend: Send + Sync {
    fn clock(&self) -> &dyn Clock;

    fn wakers(&self) -> &Arc<Wakers>;

    fn feed(&self) -> &Feed;

    /// The pending records this process put or read lately, when the backend keeps them (a
    /// database's: the answer then skips its read); `None` for one whose read is as cheap.
    fn recent(&self) -> Option<&Recent> {
        None
    }

    /// What the backend remembers of its last writes, when it can fail to write (a database's).
    fn write_health(&self) -> Option<&WriteHealth> {
        None
    }

    /// Inserts the record unless its id exists, with its `asked` audit event; whether this call
    /// inserted it.
    async fn insert(&self, record: &PendingRecord) -> Result<bool, StoreError>;

    async fn fetch(&self, id: &str) -> Result<Option<PendingRecord>, StoreError>;

    async fn list(&self, query: &ListQuery) -> Result<Page, StoreError>;

    /// `pending` → `state` (`timed_out` or `cancelled`) if the record is pending and `due` admits
    /// it at `now`, with its audit event made `via`; returns the changed record, or `None` when
    /// nothing changed.
    async fn close(
        &self,
        id: &str,
        state: State,
        due: Due,
        now: Timestamp,
        via: &Via,
    ) -> Result<Option<PendingRecord>, StoreError>;

    /// `pending` → `state` (`answered` or `declined`) with `response`, if `record` (as read, or
    /// as remembered: the row must still have its `asked_at`) is still pending and before its
    /// `expires_at` at `now`; returns the changed record, or `None` when nothing changed. A
    /// pending record changes only by leaving `pending` (and by a lease renewal, whose
    /// `lease_until` the backend reads back), so the record read before is the one that changed.
    /// With its audit event made `via`.
    async fn commit_answer(
        &self,
        record: &PendingRecord,
        state: State,
        response: &AskUserResponse,
        now: Timestamp,
        via: &Via,
    ) -> Result<Option<PendingRecord>, StoreError>;

    /// `timed_out` → `late` with `response` at `now`, if the row is still the timed-out `record`
    /// (its `version`), with its audit event made `via`; the changed record, or `None`.
    async fn commit_late(
        &self,
        record: &PendingRecord,
        response: &AskUserResponse,
        now: Timestamp,
        via: &Via,
    ) -> Result<Option<PendingRecord>, StoreError>;

    /// Up to `limit` pending records that `sweep` picks at `now`, closed as it says, each by one
    /// caller, each with its audit event.
    async fn sweep(
        &self,
        sweep: Sweep,
        now: Timestamp,
        limit: usize,
    ) -> Result<Vec<PendingRecord>, StoreError>;

    /// A pending record's `lease_until` → at least `until`, if it has one; whether it had.
    async fn renew(&self, id: &str, until: Timestamp) -> Result<bool, StoreError>;

    /// Deletes up to `limit` settled records closed before `before`, the longest closed first;
    /// how many.
    async fn purge(&self, before: Timestamp, limit: usize) -> Result<usize, StoreError>;

    /// `holder` holds lease `name` until `until` if it is free, lapsed at `now`, or `holder`'s;
    /// whether it does.
    async fn lease(
        &self,
        name: &str,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool, StoreError>;

    /// Inserts `key`'s row (an empty value) unless a row holds it that has not lapsed at `now`, or
    /// it is tied to a question that is not there; whether this call did.
    async fn claim_once(&self, key: &Key, now: Timestamp) -> Result<bool, StoreError>;

    /// The value of the row under `namespace`/`key` that has not lapsed at `now`.
    async fn value(&self, namespace: &str, key: &str, now: Timestamp) -> Result<Option<String>, StoreError>;

    /// Upserts `key`'s row with `value` (unless it is tied to a question that is not there), after
    /// deleting the namespace's rows lapsed at `now` when `key` lapses itself.
    async fn set_value(&self, key: &Key, value: &str, now: Timestamp) -> Result<(), StoreError>;

    async fn remove_value(&self, namespace: &str, key: &str) -> Result<(), StoreError>;

    /// The namespace's rows that have not lapsed at `now`, by key.
    async fn values(&self, namespace: &str, now: Timestamp) -> Result<Vec<(String, String)>, StoreError>;

    /// Appends `event` to the audit log at `now`.
    async fn append_audit(&self, event: &AuditEvent, now: Timestamp) -> Result<AuditEntry, StoreError>;

    /// Up to `limit` audit entries after `after`, appended at or after `since`.
    async fn audit_entries(
        &self,
        after: u64,
        since: Option<Timestamp>,
        limit: usize,
    ) -> Result<Vec<AuditEntry>, StoreError>;
}

/// The record under `id`, which must exist: [`StoreError::NotFound`] when it does not.
async fn fetch_known(backend: &impl Backend, id: &str) -> Result<PendingRecord, StoreError> {
    backend.fetch(id).await?.ok_or_else(|| StoreError::NotFound { id: id.to_owned() })
}

pub(crate) async fn put(
    backend: &impl Backend,
    question: NewQuestion,
) -> Result<(PendingRecord, bool), StoreError> {
    let record = question.into_record(backend.clock());
    let inserted = backend.insert(&record).await?;
    let stored = if inserted {
        record
    } else {
        let stored = fetch_known(backend, record.id()).await?;
        if stored.request != record.request
            || stored.session_id != record.session_id
            || stored.tool_name != record.tool_name
        {
            return Err(StoreError::IdTaken { id: record.id().to_owned() });
        }
        stored
    };
    if let Some(recent) = backend.recent() {
        recent.remember(&stored);
    }
    Ok((stored, inserted))
}

/// How long a failed write is remembered by [`PendingStore::cannot_write`] when no write follows:
/// 10 seconds.
pub const WRITE_FAILURE_MEMORY: Duration = Duration::from_secs(10);

/// When a write last failed for want of a database that can write, unless one succeeded since.
#[derive(Debug, Default)]
pub(crate) struct WriteHealth {
    failed_at: std::sync::Mutex<Option<std::time::Instant>>,
}

impl WriteHealth {
    /// Notes how a write ended: a success forgets an earlier failure; a refusal that is no
    /// failure of the database (a conflict, a closed question) says nothing.
    pub(crate) fn note<T>(&self, result: &Result<T, StoreError>) {
        let failed = match result {
            Ok(_) => None,
            Err(error) if error.is_unavailable() => Some(std::time::Instant::now()),
            Err(_) => return,
        };
        *self.failed_at.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = failed;
    }

    pub(crate) fn failing(&self) -> bool {
        self.failed_at
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some_and(|at| at.elapsed() < WRITE_FAILURE_MEMORY)
    }
}

/// `result`, noted in `backend`'s write health.
pub(crate) fn noted<T>(backend: &impl Backend, result: Result<T, StoreError>) -> Result<T, StoreError> {
    if let Some(health) = backend.write_health() {
        health.note(&result);
    }
    result
}

/// The records this process put or read while they were pending, by id, up to [`Recent::MAX`]:
/// an answer checks the response against the remembered request and commits in one statement
/// instead of reading the record first. Safe when stale: the commit changes the row only if it is
/// still pending with the same `asked_at` (a question purged and asked again under its id has
/// another), and an answer that finds it changed reads the row and goes on from what it says.
#[derive(Debug, Default)]
pub(crate) struct Recent {
    records: std::sync::Mutex<std::collections::HashMap<String, PendingRecord>>,
}

impl Recent {
    /// The most records remembered: about 2 KB each. When full, all are forgotten at once.
    pub(crate) const MAX: usize = 1024;

    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, PendingRecord>> {
        self.records.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Remembers `record` if it is pending.
    pub(crate) fn remember(&self, record: &PendingRecord) {
        if record.state() != State::Pending {
            return;
        }
        let mut records = self.lock();
        if records.len() >= Self::MAX && !records.contains_key(record.id()) {
            records.clear();
        }
        records.insert(record.id().to_owned(), record.clone());
    }

    /// The record remembered under `id`, forgotten: a question is answered once.
    fn take(&self, id: &str) -> Option<PendingRecord> {
        self.lock().remove(id)
    }
}

/// The error for an answer to a record that is no longer pending.
fn settled(record: PendingRecord) -> StoreError {
    if record.state().has_response() {
        StoreError::Conflict { first: Box::new(record) }
    } else {
        StoreError::Closed { record: Box::new(record) }
    }
}

pub(crate) async fn answer(
    backend: &impl Backend,
    id: &str,
    response: &AskUserResponse,
    via: &Via,
) -> Result<PendingRecord, StoreError> {
    let (mut record, mut remembered) = match backend.recent().and_then(|recent| recent.take(id)) {
        Some(record) => (record, true),
        None => (fetch_known(backend, id).await?, false),
    };
    loop {
        if record.state() != State::Pending {
            return Err(settled(record));
        }
        // The request never changes, so checking against the record read (or remembered) is
        // checking against the one the update below commits to: the update matches its
        // `asked_at`.
        if let Err(source) = askuser_core::check_response(record.request(), response) {
            // A remembered record may have settled since (a settled question's refusal says
            // so, not that the answer does not fit), or be another question's: read it.
            if remembered {
                (record, remembered) = (fetch_known(backend, id).await?, false);
                continue;
            }
            return Err(StoreError::InvalidResponse { id: id.to_owned(), source });
        }
        let state = if response.cancelled { State::Declined } else { State::Answered };
        let now = backend.clock().now();
        if let Some(answered) = backend.commit_answer(&record, state, response, now, via).await? {
            backend.wakers().wake(id);
            return Ok(answered);
        }
        // Either another change committed first, or the question is overdue: then it times out
        // now, as the next sweep would have done.
        if let Some(expired) = backend.close(id, State::TimedOut, Due::Overdue, now, &Via::default()).await? {
            backend.wakers().wake(id);
            return Err(settled(expired));
        }
        let current = fetch_known(backend, id).await?;
        // A remembered record that went stale (purged, and asked again under its id): answer
        // the question as it now stands, once.
        if remembered && current.state() == State::Pending {
            (record, remembered) = (current, false);
            continue;
        }
        return Err(settled(current));
    }
}

/// A late answer ([`PendingStore::commit_late_answer`]).
pub(crate) async fn answer_late(
    backend: &impl Backend,
    id: &str,
    response: &AskUserResponse,
    window: Duration,
    via: &Via,
) -> Result<PendingRecord, StoreError> {
    let record = fetch_known(backend, id).await?;
    let now = backend.clock().now();
    let open = record.state() == State::TimedOut
        && !record.is_approval()
        && record.closed_at().is_some_and(|closed| now < closed.plus(window));
    if !open {
        return Err(settled(record));
    }
    if let Err(source) = askuser_core::check_response(record.request(), response) {
        return Err(StoreError::InvalidResponse { id: id.to_owned(), source });
    }
    if let Some(late) = backend.commit_late(&record, response, now, via).await? {
        backend.wakers().wake(id);
        return Ok(late);
    }
    Err(settled(fetch_known(backend, id).await?))
}

pub(crate) async fn close_now(
    backend: &impl Backend,
    id: &str,
    state: State,
) -> Result<(PendingRecord, bool), StoreError> {
    let now = backend.clock().now();
    if let Some(closed) = backend.close(id, state, Due::Any, now, &Via::default()).await? {
        backend.wakers().wake(id);
        return Ok((closed, true));
    }
    Ok((fetch_known(backend, id).await?, false))
}

/// Which pending records a sweep closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sweep {
    /// Past `expires_at` → `timed_out` ([`PendingStore::expire_due`]).
    Overdue,
    /// Not past `expires_at`, `lease_until` before now → `cancelled`
    /// ([`PendingStore::withdraw_lapsed`]).
    Lapsed,
}

impl Sweep {
    /// The state the records it picks are closed in.
    pub(crate) fn closes_as(self) -> State {
        match self {
            Self::Overdue => State::TimedOut,
            Self::Lapsed => State::Cancelled,
        }
    }
}

/// Closes up to `limit` records that `sweep` picks now, and wakes their watchers.
pub(crate) async fn sweep(
    backend: &impl Backend,
    sweep: Sweep,
    limit: usize,
) -> Result<Vec<PendingRecord>, StoreError> {
    let closed = backend.sweep(sweep, backend.clock().now(), limit).await?;
    for record in &closed {
        backend.wakers().wake(record.id());
    }
    Ok(closed)
}

pub(crate) async fn watch(backend: &impl Backend, id: &str) -> Result<PendingRecord, StoreError> {
    let subscription = backend.wakers().subscribe(id);
    // A follower idle for want of listeners (SQLite's) follows again.
    backend.feed().kick();
    loop {
        let notified = subscription.notify().notified();
        tokio::pin!(notified);
        // Enabled before the read: a change committed after the read still wakes this wait.
        notified.as_mut().enable();
        let record = fetch_known(backend, id).await?;
        if record.state() != State::Pending {
            return Ok(record);
        }
        notified.await;
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
/// A record's columns as both SQL backends store them.
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct Row {
    pub(crate) id: String,
    pub(crate) session_id: Option<String>,
    pub(crate) asked_by: Option<String>,
    pub(crate) tool_name: String,
    pub(crate) profile: String,
    pub(crate) request: String,
    pub(crate) state: String,
    pub(crate) asked_at: i64,
    pub(crate) nudge_at: i64,
    pub(crate) expires_at: i64,
    pub(crate) lease_until: Option<i64>,
    pub(crate) closed_at: Option<i64>,
    pub(crate) answered_by: Option<String>,
    pub(crate) response: Option<String>,
    pub(crate) version: i64,
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl Row {
    /// Reads a stored row back, validating the request again and checking the response against
    /// it: a row edited by hand or by a buggy writer is reported, not trusted.
    pub(crate) fn into_record(self) -> Result<PendingRecord, StoreError> {
        let id = self.id;
        let corrupt = |reason: String| StoreError::Corrupt { id: id.clone(), reason };
        let request: AskUserRequest =
            serde_json::from_str(&self.request).map_err(|e| corrupt(format!("request: {e}")))?;
        let profile: Profile = self.profile.parse().map_err(|e| corrupt(format!("{e}")))?;
        let state: State = self.state.parse().map_err(|e| corrupt(format!("{e}")))?;
        let response = match &self.response {
            None => None,
            Some(text) => Some(serde_json::from_str(text).map_err(|e| corrupt(format!("response: {e}")))?),
        };
        crate::record::Parts {
            id: id.clone(),
            session_id: self.session_id,
            asked_by: self.asked_by,
            tool_name: self.tool_name,
            profile,
            request,
            state,
            asked_at: Timestamp::from_unix_millis(self.asked_at),
            nudge_at: Timestamp::from_unix_millis(self.nudge_at),
            expires_at: Timestamp::from_unix_millis(self.expires_at),
            lease_until: self.lease_until.map(Timestamp::from_unix_millis),
            closed_at: self.closed_at.map(Timestamp::from_unix_millis),
            answered_by: self.answered_by,
            response,
            version: self.version,
        }
        .check()
        .map_err(corrupt)
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
/// A record's request as stored: `{"id":…,"asked_at":…,"nudge_at":…,"expires_at":…,
/// "questions":[…]}` (and `"profile":"extended"` for an extended call), the normalised arguments
/// with the record's deadline stamps.
pub(crate) fn request_json(record: &PendingRecord) -> String {
    // Serialising validated values into a string cannot fail.
    serde_json::to_string(record.request()).unwrap_or_default()
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
/// A response as stored: exactly the value `check_response` accepted. Secret values never reach
/// it: responses carry references only.
pub(crate) fn response_json(response: &AskUserResponse) -> String {
    serde_json::to_string(response).unwrap_or_default()
}

/// Implements [`PendingStore`] for a [`Backend`] through the shared rules above.
macro_rules! pending_store_via_backend {
    ($store:ty) => {
        #[async_trait::async_trait]
        impl $crate::store::PendingStore for $store {
            async fn put(
                &self,
                question: $crate::record::NewQuestion,
            ) -> Result<$crate::record::PendingRecord, $crate::error::StoreError> {
                $crate::store::noted(self, $crate::store::put(self, question).await).map(|(record, _)| record)
            }

            async fn put_reporting(
                &self,
                question: $crate::record::NewQuestion,
            ) -> Result<($crate::record::PendingRecord, bool), $crate::error::StoreError> {
                $crate::store::noted(self, $crate::store::put(self, question).await)
            }

            fn cannot_write(&self) -> bool {
                $crate::store::Backend::write_health(self).is_some_and($crate::store::WriteHealth::failing)
            }

            async fn get(
                &self,
                id: &str,
            ) -> Result<Option<$crate::record::PendingRecord>, $crate::error::StoreError> {
                let record = $crate::store::Backend::fetch(self, id).await?;
                if let (Some(record), Some(recent)) = (&record, $crate::store::Backend::recent(self)) {
                    recent.remember(record);
                }
                Ok(record)
            }

            async fn list(
                &self,
                query: &$crate::record::ListQuery,
            ) -> Result<$crate::record::Page, $crate::error::StoreError> {
                $crate::store::Backend::list(self, query).await
            }

            async fn commit_answer(
                &self,
                id: &str,
                response: &askuser_core::AskUserResponse,
            ) -> Result<$crate::record::PendingRecord, $crate::error::StoreError> {
                let via = $crate::audit::Via::default();
                $crate::store::noted(self, $crate::store::answer(self, id, response, &via).await)
            }

            async fn commit_answer_via(
                &self,
                id: &str,
                response: &askuser_core::AskUserResponse,
                via: &$crate::audit::Via,
            ) -> Result<$crate::record::PendingRecord, $crate::error::StoreError> {
                $crate::store::noted(self, $crate::store::answer(self, id, response, via).await)
            }

            async fn commit_late_answer(
                &self,
                id: &str,
                response: &askuser_core::AskUserResponse,
                window: std::time::Duration,
                via: &$crate::audit::Via,
            ) -> Result<$crate::record::PendingRecord, $crate::error::StoreError> {
                $crate::store::noted(self, $crate::store::answer_late(self, id, response, window, via).await)
            }

            async fn cancel(
                &self,
                id: &str,
            ) -> Result<$crate::record::PendingRecord, $crate::error::StoreError> {
                $crate::store::noted(
                    self,
                    $crate::store::close_now(self, id, $crate::record::State::Cancelled).await,
                )
                .map(|(record, _)| record)
            }

            async fn cancel_reporting(
                &self,
                id: &str,
            ) -> Result<($crate::record::PendingRecord, bool), $crate::error::StoreError> {
                $crate::store::noted(
                    self,
                    $crate::store::close_now(self, id, $crate::record::State::Cancelled).await,
                )
            }

            async fn expire(
                &self,
                id: &str,
            ) -> Result<$crate::record::PendingRecord, $crate::error::StoreError> {
                $crate::store::close_now(self, id, $crate::record::State::TimedOut)
                    .await
                    .map(|(record, _)| record)
            }

            async fn expire_due(
                &self,
                limit: usize,
            ) -> Result<Vec<$crate::record::PendingRecord>, $crate::error::StoreError> {
                $crate::store::sweep(self, $crate::store::Sweep::Overdue, limit).await
            }

            async fn renew(
                &self,
                id: &str,
                lease: std::time::Duration,
            ) -> Result<bool, $crate::error::StoreError> {
                let until = $crate::store::Backend::clock(self).now().plus(lease);
                $crate::store::Backend::renew(self, id, until).await
            }

            async fn withdraw_lapsed(
                &self,
                limit: usize,
            ) -> Result<Vec<$crate::record::PendingRecord>, $crate::error::StoreError> {
                $crate::store::sweep(self, $crate::store::Sweep::Lapsed, limit).await
            }

            async fn purge(
                &self,
                keep: std::time::Duration,
                limit: usize,
            ) -> Result<usize, $crate::error::StoreError> {
                let before = $crate::store::Backend::clock(self).now().minus(keep);
                $crate::store::Backend::purge(self, before, limit).await
            }

            async fn watch(
                &self,
                id: &str,
            ) -> Result<$crate::record::PendingRecord, $crate::error::StoreError> {
                $crate::store::watch(self, id).await
            }

            fn changes(&self) -> $crate::feed::Changes {
                $crate::store::Backend::feed(self).subscribe()
            }
        }

        #[async_trait::async_trait]
        impl $crate::coordination::Coordination for $store {
            async fn lease(
                &self,
                name: &str,
                holder: &str,
                ttl: std::time::Duration,
            ) -> Result<bool, $crate::error::StoreError> {
                let now = $crate::store::Backend::clock(self).now();
                $crate::store::Backend::lease(self, name, holder, now, now.plus(ttl)).await
            }

            async fn claim_once(
                &self,
                key: &$crate::coordination::Key,
            ) -> Result<bool, $crate::error::StoreError> {
                let now = $crate::store::Backend::clock(self).now();
                $crate::store::Backend::claim_once(self, key, now).await
            }

            async fn value(
                &self,
                namespace: &str,
                key: &str,
            ) -> Result<Option<String>, $crate::error::StoreError> {
                let now = $crate::store::Backend::clock(self).now();
                $crate::store::Backend::value(self, namespace, key, now).await
            }

            async fn set_value(
                &self,
                key: &$crate::coordination::Key,
                value: &str,
            ) -> Result<(), $crate::error::StoreError> {
                let now = $crate::store::Backend::clock(self).now();
                $crate::store::Backend::set_value(self, key, value, now).await
            }

            async fn remove_value(
                &self,
                namespace: &str,
                key: &str,
            ) -> Result<(), $crate::error::StoreError> {
                $crate::store::Backend::remove_value(self, namespace, key).await
            }

            async fn values(
                &self,
                namespace: &str,
            ) -> Result<Vec<(String, String)>, $crate::error::StoreError> {
                let now = $crate::store::Backend::clock(self).now();
                $crate::store::Backend::values(self, namespace, now).await
            }
        }

        #[async_trait::async_trait]
        impl $crate::audit::AuditLog for $store {
            async fn append_audit(
                &self,
                event: &$crate::audit::AuditEvent,
            ) -> Result<$crate::audit::AuditEntry, $crate::error::StoreError> {
                let now = $crate::store::Backend::clock(self).now();
                $crate::store::Backend::append_audit(self, event, now).await
            }

            async fn audit_entries(
                &self,
                after: u64,
                since: Option<askuser_core::Timestamp>,
                limit: usize,
            ) -> Result<Vec<$crate::audit::AuditEntry>, $crate::error::StoreError> {
                $crate::store::Backend::audit_entries(self, after, since, limit).await
            }
        }
    };
}
pub(crate) use pending_store_via_backend;
