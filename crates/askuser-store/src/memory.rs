//! [`MemoryStore`]: records in a map, for tests and for a single process that need not survive a
//! restart.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use askuser_core::{AskUserResponse, Timestamp};

use crate::error::StoreError;
use crate::feed::{Change, Feed};
use crate::record::{ChannelPost, ListQuery, Page, PendingRecord, State};
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
/// store.answer("call_1", &answer).await?;
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
    /// The notices marked sent, by record id (`Notice::bit`s).
    notices: Mutex<HashMap<String, i64>>,
    /// Revoked login sessions and when their cookies expire.
    revoked_logins: Mutex<HashMap<String, Timestamp>>,
    /// Chat channels: holder, held until, cursor; and their posts by question id.
    channels: Mutex<HashMap<String, Channel>>,
    wakers: Arc<Wakers>,
    feed: Feed,
    clock: Arc<dyn Clock>,
}

/// One chat channel's row and posts.
#[derive(Debug, Default)]
struct Channel {
    holder: String,
    held_until: Option<Timestamp>,
    cursor: Option<String>,
    posts: HashMap<String, String>,
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
                notices: Mutex::new(HashMap::new()),
                revoked_logins: Mutex::new(HashMap::new()),
                channels: Mutex::new(HashMap::new()),
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

    fn channels(&self) -> MutexGuard<'_, HashMap<String, Channel>> {
        self.inner.channels.lock().unwrap_or_else(PoisonError::into_inner)
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

    async fn revoke_login(
        &self,
        session: &str,
        expires_at: Timestamp,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let mut revoked = self.inner.revoked_logins.lock().unwrap_or_else(PoisonError::into_inner);
        revoked.retain(|_, at| *at > now);
        revoked.entry(session.to_owned()).or_insert(expires_at);
        Ok(())
    }

    async fn is_login_revoked(&self, session: &str, now: Timestamp) -> Result<bool, StoreError> {
        let revoked = self.inner.revoked_logins.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(revoked.get(session).is_some_and(|at| *at > now))
    }

    async fn hold_channel(
        &self,
        channel: &str,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool, StoreError> {
        let mut channels = self.channels();
        let row = channels.entry(channel.to_owned()).or_default();
        if row.holder == holder || row.held_until.is_none_or(|held| held <= now) {
            holder.clone_into(&mut row.holder);
            row.held_until = Some(until);
            return Ok(true);
        }
        Ok(false)
    }

    async fn channel_cursor(&self, channel: &str) -> Result<Option<String>, StoreError> {
        Ok(self.channels().get(channel).and_then(|row| row.cursor.clone()))
    }

    async fn set_channel_cursor(&self, channel: &str, cursor: &str) -> Result<(), StoreError> {
        self.channels().entry(channel.to_owned()).or_default().cursor = Some(cursor.to_owned());
        Ok(())
    }

    async fn channel_posts(&self, channel: &str) -> Result<Vec<ChannelPost>, StoreError> {
        Ok(self.channels().get(channel).map_or_else(Vec::new, |row| {
            row.posts.iter().map(|(id, message)| ChannelPost::new(id.as_str(), message.as_str())).collect()
        }))
    }

    async fn put_channel_post(&self, channel: &str, post: &ChannelPost) -> Result<(), StoreError> {
        self.channels()
            .entry(channel.to_owned())
            .or_default()
            .posts
            .insert(post.question_id.clone(), post.message.clone());
        Ok(())
    }

    async fn delete_channel_post(&self, channel: &str, question_id: &str) -> Result<(), StoreError> {
        if let Some(row) = self.channels().get_mut(channel) {
            row.posts.remove(question_id);
        }
        Ok(())
    }

    async fn insert(&self, record: &PendingRecord) -> Result<bool, StoreError> {
        let mut records = self.records();
        if records.contains_key(record.id()) {
            return Ok(false);
        }
        records.insert(record.id().to_owned(), record.clone());
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
    ) -> Result<Option<PendingRecord>, StoreError> {
        let mut records = self.records();
        let Some(record) = records.get_mut(id) else { return Ok(None) };
        if record.state() != State::Pending || !due.admits(record.expires_at(), now) {
            return Ok(None);
        }
        *record = record.closed(state, now, None);
        self.inner.feed.send(Change::of(record));
        Ok(Some(record.clone()))
    }

    async fn commit_answer(
        &self,
        record: &PendingRecord,
        state: State,
        response: &AskUserResponse,
        now: Timestamp,
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
        let mut notices = self.inner.notices.lock().unwrap_or_else(PoisonError::into_inner);
        for (_, id) in &old {
            records.remove(id);
            notices.remove(id);
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

    async fn claim_notice(&self, id: &str, bit: i64) -> Result<bool, StoreError> {
        // Under the records' lock, so that a claim never races a put of the same id.
        let records = self.records();
        if !records.contains_key(id) {
            return Ok(false);
        }
        let mut notices = self.inner.notices.lock().unwrap_or_else(PoisonError::into_inner);
        let sent = notices.entry(id.to_owned()).or_default();
        let claimed = *sent & bit == 0;
        *sent |= bit;
        Ok(claimed)
    }
}

crate::store::pending_store_via_backend!(MemoryStore);
