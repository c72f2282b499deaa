//! [`MemoryStore`]: records in a map, for tests and for a single process that need not survive a
//! restart.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use askuser_core::{AskUserResponse, Timestamp};

use crate::audit::{self, AuditEntry, AuditEvent, GENESIS, Via};
use crate::coordination::{Key, LEASES};
use crate::error::StoreError;
use crate::feed::{Change, Feed};
use crate::record::{ListQuery, Page, PendingRecord, State};
use crate::store::{Backend, Due, Sweep};
use crate::time::{Clock, SystemClock};
use crate::wake::Wakers;

/// A store in this process's memory. Cheap to clone: clones share the records.
///
/// ```
/// use std::time::Duration;
/// use askuser_core::{AskUserAnswer, AskUserRequest, AskUserResponse, Questions};
/// use askuser_store::{MemoryStore, NewQuestion, PendingStore, State};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = MemoryStore::new();
/// let args = r#"{"questions":[{"header":"Plan","question":"Which plan?",
///     "options":[{"label":"Small"},{"label":"Large"}]}]}"#;
/// let request = AskUserRequest::with_id("call_1", Questions::from_json(args)?);
/// store.put(NewQuestion::new(request, Duration::from_secs(300))).await?;
///
/// let answer = AskUserResponse::answered(vec![AskUserAnswer::picked("Plan", ["Large"])]);
/// store.commit_answer("call_1", &answer).await?;
/// let record = store.watch("call_1").await?;
/// assert_eq!(record.state(), State::Answered);
/// assert_eq!(record.result()?.unwrap().text(), r#"{"Plan":["Large"]}"#);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct MemoryStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    records: Mutex<HashMap<String, PendingRecord>>,
    /// The coordination table, by namespace and key.
    coordination: Mutex<HashMap<(String, String), Row>>,
    /// The audit log, in order; taken after `records` when both are.
    audit: Mutex<Vec<AuditEntry>>,
    wakers: Arc<Wakers>,
    feed: Feed,
    clock: Arc<dyn Clock>,
}

/// A row of the coordination table.
#[derive(Debug)]
struct Row {
    value: String,
    question_id: Option<String>,
    expires_at: Option<Timestamp>,
}

impl Row {
    fn of(key: &Key, value: String) -> Self {
        Self { value, question_id: key.question_id.clone(), expires_at: key.expires_at }
    }

    fn lapsed(&self, now: Timestamp) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryStore {
    /// An empty store on the system clock.
    #[must_use]
    pub fn new() -> Self {
        Self::with_clock(Arc::new(SystemClock))
    }

    /// An empty store reading `clock`.
    #[must_use]
    pub fn with_clock(clock: Arc<dyn Clock>) -> Self {
        Self {
            inner: Arc::new(Inner {
                records: Mutex::new(HashMap::new()),
                coordination: Mutex::new(HashMap::new()),
                audit: Mutex::new(Vec::new()),
                wakers: Arc::default(),
                feed: Feed::default(),
                clock,
            }),
        }
    }

    fn records(&self) -> MutexGuard<'_, HashMap<String, PendingRecord>> {
        // Every change under the lock is a single insert, so a panic cannot leave it half done.
        self.inner.records.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn coordination(&self) -> MutexGuard<'_, HashMap<(String, String), Row>> {
        self.inner.coordination.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends `event` at `now` (called under the records' lock when it records their change).
    fn append(&self, event: &AuditEvent, now: Timestamp) -> AuditEntry {
        let mut log = self.inner.audit.lock().unwrap_or_else(PoisonError::into_inner);
        let (seq, prev) = log.last().map_or((1, GENESIS), |last| (last.seq + 1, last.hash.as_str()));
        let entry = audit::chain(seq, now, prev, event);
        log.push(entry.clone());
        entry
    }

    /// Appends the event of `record`'s change, made `via`.
    fn append_settled(&self, record: &PendingRecord, via: &Via, now: Timestamp) {
        if let Some(event) = AuditEvent::settled(record, via) {
            self.append(&event, now);
        }
    }
}

#[async_trait::async_trait]
impl Backend for MemoryStore {
    fn clock(&self) -> &dyn Clock {
        &*self.inner.clock
    }

    fn wakers(&self) -> &Arc<Wakers> {
        &self.inner.wakers
    }

    fn feed(&self) -> &Feed {
        &self.inner.feed
    }

    async fn insert(&self, record: &PendingRecord) -> Result<bool, StoreError> {
        let mut records = self.records();
        if records.contains_key(record.id()) {
            return Ok(false);
        }
        records.insert(record.id().to_owned(), record.clone());
        self.append(&AuditEvent::asked(record), self.inner.clock.now());
        // Told under the lock, so that subscribers see the changes in the order they were made.
        self.inner.feed.send(Change::of(record));
        Ok(true)
    }

    async fn fetch(&self, id: &str) -> Result<Option<PendingRecord>, StoreError> {
        Ok(self.records().get(id).cloned())
    }

    async fn list(&self, query: &ListQuery) -> Result<Page, StoreError> {
        let mut matching: Vec<PendingRecord> =
            self.records().values().filter(|r| query.admits(r)).cloned().collect();
        query.sort(&mut matching);
        matching.truncate(query.limit + 1);
        Ok(Page::from_overfetch(matching, query.limit))
    }

    async fn close(
        &self,
        id: &str,
        state: State,
        due: Due,
        now: Timestamp,
        via: &Via,
    ) -> Result<Option<PendingRecord>, StoreError> {
        let mut records = self.records();
        let Some(record) = records.get_mut(id) else { return Ok(None) };
        if record.state() != State::Pending || !due.admits(record.expires_at(), now) {
            return Ok(None);
        }
        *record = record.closed(state, now, None);
        self.append_settled(record, via, now);
        self.inner.feed.send(Change::of(record));
        Ok(Some(record.clone()))
    }

    async fn commit_answer(
        &self,
        record: &PendingRecord,
        state: State,
        response: &AskUserResponse,
        now: Timestamp,
        via: &Via,
    ) -> Result<Option<PendingRecord>, StoreError> {
        let mut records = self.records();
        let Some(stored) = records.get_mut(record.id()) else { return Ok(None) };
        if stored.state() != State::Pending
            || now >= stored.expires_at()
            || stored.asked_at() != record.asked_at()
        {
            return Ok(None);
        }
        *stored = stored.closed(state, now, Some(response.clone()));
        self.append_settled(stored, via, now);
        self.inner.feed.send(Change::of(stored));
        Ok(Some(stored.clone()))
    }

    async fn commit_late(
        &self,
        record: &PendingRecord,
        response: &AskUserResponse,
        now: Timestamp,
        via: &Via,
    ) -> Result<Option<PendingRecord>, StoreError> {
        let mut records = self.records();
        let Some(stored) = records.get_mut(record.id()) else { return Ok(None) };
        if stored.state() != State::TimedOut || stored.version() != record.version() {
            return Ok(None);
        }
        *stored = stored.closed(State::Late, now, Some(response.clone()));
        self.append_settled(stored, via, now);
        self.inner.feed.send(Change::of(stored));
        Ok(Some(stored.clone()))
    }

    async fn sweep(
        &self,
        sweep: Sweep,
        now: Timestamp,
        limit: usize,
    ) -> Result<Vec<PendingRecord>, StoreError> {
        // The order a sweep closes them in: the earliest deadline (or lease) first.
        let order = |r: &PendingRecord| match sweep {
            Sweep::Overdue => r.is_overdue(now).then_some(r.expires_at()),
            Sweep::Lapsed => {
                r.lease_until().filter(|&at| r.state() == State::Pending && now < r.expires_at() && at < now)
            }
        };
        let mut records = self.records();
        let mut picked: Vec<(Timestamp, &mut PendingRecord)> =
            records.values_mut().filter_map(|r| Some((order(r)?, r))).collect();
        picked.sort_by_key(|(at, _)| *at);
        Ok(picked
            .into_iter()
            .take(limit)
            .map(|(_, record)| {
                *record = record.closed(sweep.closes_as(), now, None);
                self.append_settled(record, &Via::default(), now);
                self.inner.feed.send(Change::of(record));
                record.clone()
            })
            .collect())
    }

    async fn purge(&self, before: Timestamp, limit: usize) -> Result<usize, StoreError> {
        let mut records = self.records();
        let mut old: Vec<(Timestamp, String)> = records
            .values()
            .filter_map(|r| r.closed_at().filter(|&at| at < before).map(|at| (at, r.id().to_owned())))
            .collect();
        old.sort();
        old.truncate(limit);
        let mut rows = self.coordination();
        for (_, id) in &old {
            records.remove(id);
            rows.retain(|_, row| row.question_id.as_ref() != Some(id));
        }
        Ok(old.len())
    }

    async fn renew(&self, id: &str, until: Timestamp) -> Result<bool, StoreError> {
        let mut records = self.records();
        let Some(record) = records.get_mut(id).filter(|r| r.state() == State::Pending) else {
            return Ok(false);
        };
        let Some(lease_until) = record.lease_until else { return Ok(false) };
        record.lease_until = Some(lease_until.max(until));
        Ok(true)
    }

    async fn lease(
        &self,
        name: &str,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool, StoreError> {
        let mut rows = self.coordination();
        let slot = (LEASES.to_owned(), name.to_owned());
        let free = rows.get(&slot).is_none_or(|row| row.value == holder || row.lapsed(now));
        if free {
            rows.insert(slot, Row { value: holder.to_owned(), question_id: None, expires_at: Some(until) });
        }
        Ok(free)
    }

    async fn claim_once(&self, key: &Key, now: Timestamp) -> Result<bool, StoreError> {
        // Under the records' lock, so that a claim never races a put or purge of its question.
        let records = self.records();
        if key.question_id.as_ref().is_some_and(|id| !records.contains_key(id)) {
            return Ok(false);
        }
        let mut rows = self.coordination();
        let slot = (key.namespace.clone(), key.name.clone());
        if rows.get(&slot).is_some_and(|row| !row.lapsed(now)) {
            return Ok(false);
        }
        rows.insert(slot, Row::of(key, String::new()));
        Ok(true)
    }

    async fn value(&self, namespace: &str, key: &str, now: Timestamp) -> Result<Option<String>, StoreError> {
        let rows = self.coordination();
        let row = rows.get(&(namespace.to_owned(), key.to_owned())).filter(|row| !row.lapsed(now));
        Ok(row.map(|row| row.value.clone()))
    }

    async fn set_value(&self, key: &Key, value: &str, now: Timestamp) -> Result<(), StoreError> {
        let records = self.records();
        if key.question_id.as_ref().is_some_and(|id| !records.contains_key(id)) {
            return Ok(());
        }
        let mut rows = self.coordination();
        if key.expires_at.is_some() {
            rows.retain(|(namespace, _), row| *namespace != key.namespace || !row.lapsed(now));
        }
        rows.insert((key.namespace.clone(), key.name.clone()), Row::of(key, value.to_owned()));
        Ok(())
    }

    async fn remove_value(&self, namespace: &str, key: &str) -> Result<(), StoreError> {
        self.coordination().remove(&(namespace.to_owned(), key.to_owned()));
        Ok(())
    }

    async fn values(&self, namespace: &str, now: Timestamp) -> Result<Vec<(String, String)>, StoreError> {
        let rows = self.coordination();
        let mut found: Vec<(String, String)> = rows
            .iter()
            .filter(|((ns, _), row)| ns == namespace && !row.lapsed(now))
            .map(|((_, key), row)| (key.clone(), row.value.clone()))
            .collect();
        found.sort();
        Ok(found)
    }

    async fn append_audit(&self, event: &AuditEvent, now: Timestamp) -> Result<AuditEntry, StoreError> {
        Ok(self.append(event, now))
    }

    async fn audit_entries(
        &self,
        after: u64,
        since: Option<Timestamp>,
        limit: usize,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let log = self.inner.audit.lock().unwrap_or_else(PoisonError::into_inner);
        let from = usize::try_from(after).unwrap_or(usize::MAX).min(log.len());
        Ok(log[from..]
            .iter()
            .filter(|e| since.is_none_or(|since| e.at >= since))
            .take(limit)
            .cloned()
            .collect())
    }
}

crate::store::pending_store_via_backend!(MemoryStore);
