//! What every channel does the same way: hold the channel in the store (one process of a fleet
//! runs it), follow the store's change feed, post each waiting batch once, retire its message
//! once the batch is settled (by any surface, by expiry or withdrawal), and turn taps into
//! answers through [`PendingStore::commit_answer`](askuser_store::PendingStore::commit_answer) (which checks them with `check_response`; the first
//! answer wins).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use askuser_core::AskUserResponse;
use askuser_core::MAX_CUSTOM_CHARS;
use askuser_store::{Key, ListQuery, PendingRecord, SharedStore, State, StoreError};
use serde::{Deserialize, Serialize};
use tokio::sync::{Notify, watch};

use crate::batch::{self, Action, Step, Tally, View};
use crate::fault::{Fault, Retry};

/// A page link maker: the answer page of a question id (an HMAC link made by askuser-server).
pub type PageLinks = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// A chat service seen as a surface of the store's questions.
#[async_trait::async_trait]
pub(crate) trait Surface: Send + Sync + Sized + 'static {
    /// The channel's name in the store.
    const NAME: &'static str;
    /// The service's name as people know it.
    const SHOWN: &'static str;
    /// Whether a person can type an answer in it.
    const TYPES_TEXT: bool;

    /// Posts a message showing `view` (to every chat the channel asks); returns where it is.
    async fn post(&self, view: &View) -> Result<serde_json::Value, Fault>;

    /// Edits the message(s) at `at` to show `view`.
    async fn edit(&self, at: &serde_json::Value, view: &View) -> Result<(), Fault>;

    /// Receives the people's interactions and hands them to `engine`, until the channel stops.
    async fn listen(self: Arc<Self>, engine: Arc<Engine<Self>>);
}

/// A question's message in a channel, as kept in the store.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Post {
    /// Where the message is (the surface's ids); null while it is being posted.
    at: serde_json::Value,
    /// The answers gathered so far.
    #[serde(default)]
    tally: Tally,
    /// Messages asking to type an answer (Telegram's `ForceReply`), and the question each is for.
    #[serde(default)]
    prompts: Vec<(String, usize)>,
    /// How many times the tally changed.
    #[serde(default)]
    changes: u64,
    /// The tally the message shows (as of that many changes; not kept: a restart shows it again).
    #[serde(skip)]
    shown: u64,
}

/// Which surface committed an answer, while its commit is in flight and for a while after: so the
/// others can say "Answered on Telegram". The first surface to try marks it; a failed try unmarks
/// its own; marks older than [`VIA_KEPT`] are forgotten.
#[derive(Debug, Default)]
pub(crate) struct Via(Mutex<HashMap<String, (&'static str, std::time::Instant)>>);

/// How long a [`Via`] mark is kept: far longer than any channel takes to retire a message.
const VIA_KEPT: Duration = Duration::from_mins(10);

impl Via {
    fn mark(&self, id: &str, surface: &'static str) -> bool {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        map.retain(|_, (_, at)| at.elapsed() < VIA_KEPT);
        if map.contains_key(id) {
            return false;
        }
        map.insert(id.to_owned(), (surface, std::time::Instant::now()));
        true
    }

    fn unmark(&self, id: &str, surface: &'static str) {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if map.get(id).is_some_and(|(marked, _)| *marked == surface) {
            map.remove(id);
        }
    }

    fn of(&self, id: &str) -> Option<&'static str> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).get(id).map(|(surface, _)| *surface)
    }
}

/// A channel's counters.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) posted: AtomicU64,
    pub(crate) edited: AtomicU64,
    pub(crate) answered: AtomicU64,
    pub(crate) ignored: AtomicU64,
}

/// What the person who tapped is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// A short line (Telegram shows it as a toast).
    Say(String),
    /// Ask them to type the answer to `header` (question `q` of batch `id`, whose text is
    /// `question`).
    Type { id: String, q: usize, header: String, question: String },
}

const STALE: &str = "This question is no longer waiting: nothing was answered.";

/// The work queue: ids whose message may need posting, refreshing or retiring, each once.
#[derive(Debug, Default)]
struct Queue {
    ids: Mutex<(VecDeque<String>, HashSet<String>)>,
    ready: Notify,
}

impl Queue {
    fn push(&self, id: &str) {
        let mut guard = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        let (order, queued) = &mut *guard;
        if queued.insert(id.to_owned()) {
            order.push_back(id.to_owned());
            self.ready.notify_one();
        }
    }

    async fn pop(&self) -> String {
        loop {
            let notified = self.ready.notified();
            {
                let mut guard = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
                let (order, queued) = &mut *guard;
                if let Some(id) = order.pop_front() {
                    queued.remove(&id);
                    return id;
                }
            }
            notified.await;
        }
    }

    fn clear(&self) {
        let mut guard = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        guard.0.clear();
        guard.1.clear();
    }
}

/// The store's coordination rows a channel keeps: its lease (`channel.NAME`: which server
/// process runs it), its cursor (key `NAME` in `channel.cursor`: where it is in its service's
/// stream) and the messages it shows (`channel.NAME.posts`, by question id, going with their
/// questions on purge). Migration 0013 of askuser-store moved earlier versions' rows here.
pub(crate) fn lease_name(channel: &str) -> String {
    format!("channel.{channel}")
}

/// See [`lease_name`].
pub(crate) const CURSORS: &str = "channel.cursor";

/// See [`lease_name`].
pub(crate) fn posts_namespace(channel: &str) -> String {
    format!("channel.{channel}.posts")
}

/// The longest one store call of a channel may take (a read or a write; the change feed is a
/// wait): a database that does not answer must not hold a channel's worker for the pool's own
/// timeout (30 s by default in sqlx). As the answer server's own limit.
pub(crate) const STORE_CALL_LIMIT: Duration = Duration::from_secs(5);

/// `call`, or an unavailable-store error once it has taken [`STORE_CALL_LIMIT`].
pub(crate) async fn bounded<T>(
    call: impl std::future::Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    tokio::time::timeout(STORE_CALL_LIMIT, call).await.unwrap_or_else(|_| {
        Err(StoreError::unavailable(format!(
            "the store did not answer within {} s",
            STORE_CALL_LIMIT.as_secs()
        )))
    })
}

/// One channel's engine, shared by its tasks.
pub(crate) struct Engine<S: Surface> {
    pub(crate) surface: Arc<S>,
    store: Arc<dyn SharedStore>,
    links: Option<PageLinks>,
    /// Where its messages are posted, as far as page links go.
    chat: batch::Chat,
    holder: String,
    hold: Duration,
    pub(crate) retry: Arc<Retry>,
    pub(crate) counters: Arc<Counters>,
    via: Arc<Via>,
    pub(crate) closing: watch::Receiver<bool>,
    /// The messages shown, by question id.
    posts: Mutex<HashMap<String, Post>>,
    /// Question ids by button key.
    keys: Mutex<HashMap<String, String>>,
    queue: Queue,
}

impl<S: Surface> std::fmt::Debug for Engine<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("channel", &S::NAME)
            .field("holder", &self.holder)
            .finish_non_exhaustive()
    }
}

/// What [`Engine::new`] takes besides the surface.
pub(crate) struct Parts {
    pub(crate) store: Arc<dyn SharedStore>,
    pub(crate) links: Option<PageLinks>,
    pub(crate) chat: batch::Chat,
    pub(crate) holder: String,
    pub(crate) hold: Duration,
    pub(crate) retry: Arc<Retry>,
    pub(crate) via: Arc<Via>,
    pub(crate) closing: watch::Receiver<bool>,
}

impl<S: Surface> Engine<S> {
    pub(crate) fn new(surface: Arc<S>, parts: Parts) -> Arc<Self> {
        Arc::new(Self {
            surface,
            store: parts.store,
            links: parts.links,
            chat: parts.chat,
            holder: parts.holder,
            hold: parts.hold,
            retry: parts.retry,
            counters: Arc::default(),
            via: parts.via,
            closing: parts.closing,
            posts: Mutex::default(),
            keys: Mutex::default(),
            queue: Queue::default(),
        })
    }

    pub(crate) fn is_closing(&self) -> bool {
        *self.closing.borrow()
    }

    /// Resolves when the channels stop.
    pub(crate) async fn closed(&self) {
        let mut closing = self.closing.clone();
        let _ = closing.wait_for(|closing| *closing).await;
    }

    /// Runs the channel: waits to hold it, runs it while it holds it, until the channels stop.
    pub(crate) async fn run(self: Arc<Self>) {
        while !self.is_closing() {
            match bounded(self.store.lease(&lease_name(S::NAME), &self.holder, self.hold)).await {
                Ok(true) => {
                    tracing::info!(channel = S::NAME, "running the channel");
                    self.clone().session().await;
                }
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(channel = S::NAME, error = %error, "cannot reach the store to hold the channel");
                }
            }
            tokio::select! {
                () = self.closed() => return,
                () = tokio::time::sleep(self.hold / 3) => {}
            }
        }
    }

    /// While this process holds the channel: the feed follower, the worker, the listener.
    async fn session(self: Arc<Self>) {
        self.queue.clear();
        self.posts.lock().unwrap_or_else(PoisonError::into_inner).clear();
        self.keys.lock().unwrap_or_else(PoisonError::into_inner).clear();
        // Before listening: a tap waiting since before a restart is on a message loaded here.
        self.load_posts().await;
        let mut tasks = tokio::task::JoinSet::new();
        tasks.spawn(Arc::clone(&self).follow());
        tasks.spawn(Arc::clone(&self).work());
        tasks.spawn(Arc::clone(&self.surface).listen(Arc::clone(&self)));
        tokio::select! {
            () = self.closed() => {}
            () = self.keep_holding() => {
                tracing::warn!(channel = S::NAME, "lost the hold on the channel; another process runs it");
            }
        }
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    }

    /// Renews the hold; returns when it is lost (another holder has it, or the store was
    /// unreachable for longer than a hold lasts).
    async fn keep_holding(&self) {
        let mut last = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(self.hold / 3).await;
            match bounded(self.store.lease(&lease_name(S::NAME), &self.holder, self.hold)).await {
                Ok(true) => last = tokio::time::Instant::now(),
                Ok(false) => return,
                Err(error) => {
                    tracing::warn!(channel = S::NAME, error = %error, "cannot renew the hold on the channel");
                    if last.elapsed() >= self.hold {
                        return;
                    }
                }
            }
        }
    }

    /// Follows the store's change feed: every change queues its question.
    async fn follow(self: Arc<Self>) {
        let mut changes = self.store.changes();
        self.queue_pending().await;
        loop {
            match changes.next().await {
                Ok(change) => self.queue.push(&change.id),
                Err(askuser_store::Missed) => self.catch_up().await,
            }
        }
    }

    /// Loads the messages kept in the store and queues them and every waiting question: a
    /// restart (or a takeover) resumes, posting only what was never posted.
    async fn catch_up(&self) {
        self.load_posts().await;
        self.queue_pending().await;
    }

    /// Loads the messages kept in the store (they are the ones a tap can be on), and queues them.
    async fn load_posts(&self) {
        let posts = loop {
            match bounded(self.store.values(&posts_namespace(S::NAME))).await {
                Ok(posts) => break posts,
                Err(error) => {
                    tracing::warn!(channel = S::NAME, error = %error, "cannot read the channel's messages; retrying");
                    tokio::time::sleep(self.retry.base).await;
                }
            }
        };
        {
            let mut mine = self.posts.lock().unwrap_or_else(PoisonError::into_inner);
            let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
            for (question_id, message) in posts {
                match serde_json::from_str::<Post>(&message) {
                    Ok(post) => {
                        keys.insert(batch::key_of(&question_id), question_id.clone());
                        self.queue.push(&question_id);
                        mine.insert(question_id, post);
                    }
                    Err(error) => {
                        tracing::warn!(channel = S::NAME, error = %error, "a kept message is unreadable; skipped");
                    }
                }
            }
        }
    }

    /// Queues every waiting question.
    async fn queue_pending(&self) {
        let mut query = ListQuery::new().state(State::Pending).limit(ListQuery::MAX_LIMIT);
        loop {
            match bounded(self.store.list(&query)).await {
                Ok(page) => {
                    for record in &page.records {
                        self.queue.push(record.id());
                    }
                    match page.next {
                        Some(next) => query = query.after(next),
                        None => return,
                    }
                }
                Err(error) => {
                    tracing::warn!(channel = S::NAME, error = %error, "cannot list the waiting questions; retrying");
                    tokio::time::sleep(self.retry.base).await;
                }
            }
        }
    }

    /// Posts, refreshes and retires messages, one question at a time, in the order queued.
    async fn work(self: Arc<Self>) {
        loop {
            let id = self.queue.pop().await;
            if let Err(error) = self.reconcile(&id).await {
                tracing::warn!(channel = S::NAME, error = %error, "a message could not be updated; will retry");
                tokio::time::sleep(self.retry.base).await;
                self.queue.push(&id);
            }
        }
    }

    fn post_of(&self, id: &str) -> Option<Post> {
        self.posts.lock().unwrap_or_else(PoisonError::into_inner).get(id).cloned()
    }

    /// Keeps `post` in the store (once it is out: a message being posted has nowhere to be yet).
    async fn keep(&self, id: &str, post: &Post) -> Result<(), StoreError> {
        if post.at.is_null() {
            return Ok(());
        }
        let message = serde_json::to_string(post).unwrap_or_default();
        bounded(self.store.set_value(&Key::of_question(posts_namespace(S::NAME), id), &message)).await
    }

    /// Brings question `id`'s message in line with its record.
    async fn reconcile(&self, id: &str) -> Result<(), StoreError> {
        let record = bounded(self.store.get(id)).await?;
        let post = self.post_of(id);
        match (record, post) {
            (Some(record), None) if record.state() == State::Pending => self.post(&record).await,
            (Some(record), Some(post)) if record.state() == State::Pending => {
                if post.changes != post.shown {
                    let view = self.pending_view(&record, &post.tally);
                    self.edit(&post.at, &view).await;
                    let mut posts = self.posts.lock().unwrap_or_else(PoisonError::into_inner);
                    if let Some(kept) = posts.get_mut(id) {
                        kept.shown = post.changes;
                    }
                }
                Ok(())
            }
            (record, Some(post)) => {
                // Settled (or purged): the message says so and loses its buttons.
                if let Some(record) = &record {
                    let view = batch::settled_view(record, self.via.of(id));
                    self.edit(&post.at, &view).await;
                }
                bounded(self.store.remove_value(&posts_namespace(S::NAME), id)).await?;
                self.posts.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
                self.keys.lock().unwrap_or_else(PoisonError::into_inner).remove(&batch::key_of(id));
                Ok(())
            }
            (_, None) => Ok(()),
        }
    }

    fn pending_view(&self, record: &PendingRecord, tally: &Tally) -> View {
        let link = self.links.as_ref().filter(|_| self.chat.may_link(record)).map(|links| links(record.id()));
        batch::pending_view(record, tally, link.as_deref(), self.chat, S::TYPES_TEXT)
    }

    async fn post(&self, record: &PendingRecord) -> Result<(), StoreError> {
        let id = record.id();
        let key = batch::key_of(id);
        // Known before the message is out: a tap the moment it shows finds its batch.
        self.keys.lock().unwrap_or_else(PoisonError::into_inner).insert(key.clone(), id.to_owned());
        self.posts.lock().unwrap_or_else(PoisonError::into_inner).insert(id.to_owned(), Post::default());
        let view = self.pending_view(record, &Tally::default());
        match self.surface.post(&view).await {
            Ok(at) => {
                self.counters.posted.fetch_add(1, Ordering::Relaxed);
                let post = {
                    let mut posts = self.posts.lock().unwrap_or_else(PoisonError::into_inner);
                    let post = posts.entry(id.to_owned()).or_default();
                    post.at = at;
                    post.clone()
                };
                // Kept before anything else: a restart finds it and does not post again.
                let mut tries = 0;
                while let Err(error) = self.keep(id, &post).await {
                    tries += 1;
                    tracing::warn!(channel = S::NAME, error = %error, "cannot keep a posted message's ids; retrying");
                    if tries >= 30 || self.is_closing() {
                        return Err(error);
                    }
                    tokio::time::sleep(self.retry.base).await;
                }
                // The audit log: where it was shown (the surface's message ids, as JSON).
                let posted = askuser_store::AuditEvent::posted(id, S::NAME, &post.at.to_string());
                if let Err(error) = bounded(self.store.append_audit(&posted)).await {
                    tracing::warn!(channel = S::NAME, error = %error, "cannot log a posted message in the audit log");
                }
                // Settled, or tapped, while it was being posted: the queue brings it in line.
                self.queue.push(id);
                Ok(())
            }
            Err(error) => {
                self.posts.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
                self.keys.lock().unwrap_or_else(PoisonError::into_inner).remove(&key);
                tracing::error!(channel = S::NAME, error = %error, "a question could not be posted");
                Ok(())
            }
        }
    }

    async fn edit(&self, at: &serde_json::Value, view: &View) {
        match self.surface.edit(at, view).await {
            Ok(()) => {
                self.counters.edited.fetch_add(1, Ordering::Relaxed);
            }
            Err(error) => tracing::warn!(channel = S::NAME, error = %error, "a message could not be edited"),
        }
    }

    /// Where the channel is in its service's stream, as kept in the store (read again until the
    /// store answers).
    pub(crate) async fn cursor(&self) -> Option<String> {
        loop {
            match bounded(self.store.value(CURSORS, S::NAME)).await {
                Ok(cursor) => return cursor,
                Err(error) => {
                    tracing::warn!(channel = S::NAME, error = %error, "cannot read the channel's cursor; retrying");
                    tokio::time::sleep(self.retry.base).await;
                }
            }
        }
    }

    /// Keeps where the channel is in its service's stream.
    pub(crate) async fn set_cursor(&self, cursor: &str) -> Result<(), StoreError> {
        bounded(self.store.set_value(&Key::new(CURSORS, S::NAME), cursor)).await
    }

    /// A tap on button data `data`: what the person is told.
    pub(crate) async fn tap(&self, data: &str, person: &str) -> Reply {
        let Some((key, action)) = Action::decode(data) else {
            self.counters.ignored.fetch_add(1, Ordering::Relaxed);
            return Reply::Say("That button is not one of askuser's.".to_owned());
        };
        let Some(id) = self.keys.lock().unwrap_or_else(PoisonError::into_inner).get(key).cloned() else {
            return Reply::Say(STALE.to_owned());
        };
        let record = match bounded(self.store.get(&id)).await {
            Ok(Some(record)) => record,
            Ok(None) => return Reply::Say(STALE.to_owned()),
            Err(error) => {
                tracing::warn!(channel = S::NAME, error = %error, "cannot read a tapped question");
                return Reply::Say("The answer store is unreachable; try again in a moment.".to_owned());
            }
        };
        if record.state() != State::Pending {
            self.queue.push(&id);
            return Reply::Say(STALE.to_owned());
        }
        let step = {
            let mut posts = self.posts.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(post) = posts.get_mut(&id) else { return Reply::Say(STALE.to_owned()) };
            let step = batch::apply(&record, &mut post.tally, action, S::TYPES_TEXT);
            if step == Step::Changed {
                post.changes += 1;
            }
            step
        };
        self.step(&record, step, person).await
    }

    /// Records that prompt message `prompt` asks for the answer to question `q` of batch `id`.
    pub(crate) async fn prompted(&self, id: &str, prompt: String, q: usize) {
        let post = {
            let mut posts = self.posts.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(post) = posts.get_mut(id) else { return };
            post.prompts.push((prompt, q));
            post.clone()
        };
        if let Err(error) = self.keep(id, &post).await {
            tracing::warn!(channel = S::NAME, error = %error, "cannot keep a prompt");
        }
    }

    /// Text typed in reply to prompt message `prompt`; `None` when it replies to no prompt.
    pub(crate) async fn typed(&self, prompt: &str, text: &str, person: &str) -> Option<Reply> {
        let found = {
            let posts = self.posts.lock().unwrap_or_else(PoisonError::into_inner);
            posts.iter().find_map(|(id, post)| {
                post.prompts.iter().find(|(p, _)| p == prompt).map(|(_, q)| (id.clone(), *q))
            })
        };
        let (id, q) = found?;
        Some(self.typed_for(&id, q, text, person).await)
    }

    /// Whether a post that `shown` picks is one of this channel's.
    pub(crate) fn shows(&self, shown: impl Fn(&serde_json::Value) -> bool) -> bool {
        self.posts.lock().unwrap_or_else(PoisonError::into_inner).values().any(|post| shown(&post.at))
    }

    /// Text typed in reply to a batch's own message, read whole by the typed-answer grammar
    /// (docs/typed-answers.md): committed when it answers every question, else the person is told
    /// exactly what is missing or unclear and nothing is answered. `shown` says which posts the
    /// reply is to (their surface ids): `None` when it is to none of them; when it could be to
    /// several (a plain message in a chat showing two batches), the person is asked to reply to
    /// one.
    pub(crate) async fn replied(
        &self,
        shown: impl Fn(&serde_json::Value) -> bool,
        text: &str,
        person: &str,
    ) -> Option<Reply> {
        let ids: Vec<String> = {
            let posts = self.posts.lock().unwrap_or_else(PoisonError::into_inner);
            posts.iter().filter(|(_, post)| shown(&post.at)).map(|(id, _)| id.clone()).collect()
        };
        let id = match ids.as_slice() {
            [] => return None,
            [id] => id,
            _ => {
                return Some(Reply::Say(
                    "Several questions are open here: reply to the message of the one you are answering."
                        .to_owned(),
                ));
            }
        };
        let record = match self.waiting(id).await {
            Ok(record) => record,
            Err(said) => return Some(said),
        };
        Some(match askuser_core::read_typed_reply(record.request().questions(), text) {
            Ok(answers) => self.commit(id, &AskUserResponse::answered(answers), person).await,
            Err(unclear) => Reply::Say(format!("Not taken, nothing was answered: {unclear}")),
        })
    }

    /// Text typed in a form (Slack's modal) as the answer to question `q` of the batch whose
    /// button key is `key` (untrusted: from the form's metadata).
    pub(crate) async fn typed_at(&self, key: &str, q: usize, text: &str, person: &str) -> Reply {
        let Some(id) = self.keys.lock().unwrap_or_else(PoisonError::into_inner).get(key).cloned() else {
            return Reply::Say(STALE.to_owned());
        };
        self.typed_for(&id, q, text, person).await
    }

    async fn typed_for(&self, id: &str, q: usize, text: &str, person: &str) -> Reply {
        // The page's cap (issue 36.9: 4,000 characters were stored from Telegram, 20,000 from
        // Slack): the person is told, and may send a shorter one.
        let chars = text.chars().count();
        if chars > MAX_CUSTOM_CHARS {
            return Reply::Say(format!(
                "Your answer is {chars} characters long; at most {MAX_CUSTOM_CHARS} are taken. Shorten it and send it again."
            ));
        }
        let record = match self.waiting(id).await {
            Ok(record) => record,
            Err(said) => return said,
        };
        let step = {
            let mut posts = self.posts.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(post) = posts.get_mut(id) else { return Reply::Say(STALE.to_owned()) };
            let step = batch::typed(&record, &mut post.tally, q, text);
            if step == Step::Changed {
                post.changes += 1;
            }
            step
        };
        self.step(&record, step, person).await
    }

    /// Question `id`'s record while it waits; else what the person is told (no longer waiting,
    /// or the store unreachable).
    async fn waiting(&self, id: &str) -> Result<PendingRecord, Reply> {
        match bounded(self.store.get(id)).await {
            Ok(Some(record)) if record.state() == State::Pending => Ok(record),
            Ok(_) => Err(Reply::Say(STALE.to_owned())),
            Err(_) => Err(Reply::Say("The answer store is unreachable; try again in a moment.".to_owned())),
        }
    }

    /// What `step` does, for the person known on this channel as `person`.
    async fn step(&self, record: &PendingRecord, step: Step, person: &str) -> Reply {
        let id = record.id();
        match step {
            Step::Submit(response) => self.commit(id, &response, person).await,
            Step::Changed => {
                if let Some(post) = self.post_of(id)
                    && let Err(error) = self.keep(id, &post).await
                {
                    tracing::warn!(channel = S::NAME, error = %error, "cannot keep the answers so far");
                }
                self.queue.push(id);
                Reply::Say("Noted.".to_owned())
            }
            Step::Type(q) => {
                let asked = record.request().questions().as_slice().get(q);
                Reply::Type {
                    id: id.to_owned(),
                    q,
                    header: asked.map(|q| q.header().to_owned()).unwrap_or_default(),
                    question: asked.map(|q| q.question().to_owned()).unwrap_or_default(),
                }
            }
            Step::Refused(why) => Reply::Say(why.to_owned()),
            Step::Incomplete(why) => Reply::Say(why),
        }
    }

    /// Commits `response` as the answer to `id`, by `person` (their id on this channel, for the
    /// audit log): the first answer wins, on every surface.
    async fn commit(&self, id: &str, response: &AskUserResponse, person: &str) -> Reply {
        let marked = self.via.mark(id, S::SHOWN);
        let via = askuser_store::Via::surface(S::NAME).person(person);
        let result = bounded(self.store.commit_answer_via(id, response, &via)).await;
        self.queue.push(id);
        match result {
            Ok(_) => {
                self.counters.answered.fetch_add(1, Ordering::Relaxed);
                Reply::Say(if response.cancelled { "Declined." } else { "Answered ✅" }.to_owned())
            }
            Err(error) => {
                if marked {
                    self.via.unmark(id, S::SHOWN);
                }
                Reply::Say(match error {
                    StoreError::Conflict { .. } => "Already answered elsewhere: nothing changed.".to_owned(),
                    StoreError::Closed { .. } | StoreError::NotFound { .. } => STALE.to_owned(),
                    StoreError::InvalidResponse { source, .. } => format!("Not accepted: {source}"),
                    other => {
                        tracing::warn!(channel = S::NAME, error = %other, "an answer could not be saved");
                        "The answer could not be saved; try again in a moment.".to_owned()
                    }
                })
            }
        }
    }
}

/// Whether what a tap or a typed answer was told means it was taken (the batch's own message shows
/// it), rather than a problem the person must read.
pub(crate) fn taken(said: &str) -> bool {
    said == "Noted." || said.starts_with("Answered") || said == "Declined."
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store call that never answers fails as an unavailable store once the limit has passed,
    /// and not before; one that answers in time is passed through.
    #[tokio::test(start_paused = true)]
    async fn a_store_call_that_hangs_fails_at_the_limit() {
        let started = tokio::time::Instant::now();
        let hung = bounded(std::future::pending::<Result<(), StoreError>>()).await;
        assert!(hung.as_ref().is_err_and(StoreError::is_unavailable), "{hung:?}");
        assert_eq!(started.elapsed(), STORE_CALL_LIMIT);
        assert_eq!(bounded(async { Ok::<_, StoreError>(7) }).await.ok(), Some(7));
    }
}
