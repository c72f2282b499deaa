//! [`Notifier`]: notices to a webhook (feature `client`), so the person hears about a question on
//! their phone and the notification goes away once it is settled: JSON, or the form ntfy takes.
//!
//! The notices follow the store's change feed, not this server's requests: a question asked or
//! answered through another replica or process is noticed too, and of several replicas sharing
//! the store exactly one sends each notice (it claims it in the store first,
//! [`Coordination::claim_once`](askuser_store::Coordination::claim_once)).

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use askuser_core::Timestamp;
use askuser_store::{Key, PendingRecord, State};

use crate::claims::Notice;
use base64::Engine as _;
use reqwest::header::{AUTHORIZATION, HeaderValue};
use serde::Serialize;
use tokio::sync::Semaphore;

use crate::error::bounded;
use crate::{AnswerServer, AppState};

/// How many notices may be in flight (sending or waiting to retry); past that, new ones are
/// dropped (and logged), so that a dead webhook never holds memory.
const IN_FLIGHT: usize = 256;

/// How many times a notice is tried.
const TRIES: u32 = 5;

/// What a notification looks like on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotifyFormat {
    /// `application/json`: `{"event","id","session_id","asked_by","state","headers","url",
    /// "expires_at","answer_urls"}` (and `"questions"` when asked to include them); `event` is
    /// `asked`, `reminder`, `answered`, `declined`, `expired`, `withdrawn` or `late` (answered
    /// after it expired).
    Json,
    /// ntfy's publish form: the text as the body; `Title`, `Click` (the page link), `Tags`,
    /// `Priority`, `Actions` and `X-Sequence-ID` headers, so that the follow-up of a question
    /// replaces its notification, then clears it. Point `--notify-url` at
    /// `https://ntfy.example/TOPIC`.
    Ntfy,
}

/// Sends notices about questions to a webhook: when one is asked, a reminder at its deadline's
/// nudge time while it waits, and a follow-up once it is answered, declined, expired or withdrawn.
/// Each is tried up to five times with backoff (1, 2, 4, 8 s), from background tasks, never
/// holding an ask; the tries of an "asked" or "reminder" notice stop once the question is
/// settled. Notices carry the id, the session, who asks, the questions' headers and the page
/// link; the questions' text only with [`include_questions`](Self::include_questions).
///
/// Give it to [`AnswerServerBuilder::notifier`](crate::AnswerServerBuilder::notifier);
/// [`AnswerServer::serve`] starts it.
///
/// ```no_run
/// use std::sync::Arc;
/// use askuser_client::ApiToken;
/// use askuser_server::{AnswerServer, Notifier, NotifyFormat};
/// use askuser_store::MemoryStore;
///
/// let notifier = Notifier::new("https://ntfy.example/my-topic", NotifyFormat::Ntfy).unwrap();
/// let server = AnswerServer::builder(Arc::new(MemoryStore::new()), ApiToken::generate().unwrap())
///     .notifier(notifier)
///     .build();
/// # drop(server);
/// ```
#[derive(Clone)]
pub struct Notifier {
    client: reqwest::Client,
    url: String,
    format: NotifyFormat,
    include_questions: bool,
    retry_base: Duration,
    authorization: Option<HeaderValue>,
}

impl fmt::Debug for Notifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notifier")
            .field("url", &askuser_store::redact_url(&self.url))
            .field("format", &self.format)
            .field("include_questions", &self.include_questions)
            .field("authorization", &self.authorization.as_ref().map(|_| "***"))
            .finish_non_exhaustive()
    }
}

/// Credentials that are neither an access token nor `user:password`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidCredentials(&'static str);

impl NotifyFormat {
    /// The surface named in the audit log: `webhook` or `ntfy`.
    fn surface(self) -> &'static str {
        match self {
            Self::Json => "webhook",
            Self::Ntfy => "ntfy",
        }
    }
}

impl Notifier {
    /// A notifier that POSTs to `url` in `format`.
    ///
    /// # Errors
    ///
    /// The HTTP client cannot be built.
    pub fn new(url: &str, format: NotifyFormat) -> Result<Self, askuser_client::ClientError> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(10))
            // A redirect would re-post the notice (its answer link included) to wherever the
            // webhook's host points: the URL comes only from the operator's configuration.
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Self {
            client,
            url: url.trim_end_matches('/').to_owned(),
            format,
            include_questions: false,
            retry_base: Duration::from_secs(1),
            authorization: None,
        })
    }

    /// Whether notices carry the questions' text (not only their headers). Default: no.
    #[must_use]
    pub fn include_questions(mut self, include: bool) -> Self {
        self.include_questions = include;
        self
    }

    /// The first retry's delay; each next one doubles. Default: one second.
    #[must_use]
    pub fn retry_base(mut self, delay: Duration) -> Self {
        self.retry_base = delay;
        self
    }

    /// Authenticates every request: `credentials` is an access token (sent as `Authorization:
    /// Bearer TOKEN`, as ntfy's `tk_…` tokens are) or `user:password` (sent as HTTP Basic).
    /// Surrounding whitespace (a file's final newline) is ignored. The value is never logged.
    ///
    /// # Errors
    ///
    /// The credentials are empty or hold characters a header cannot carry.
    pub fn credentials(mut self, credentials: &str) -> Result<Self, InvalidCredentials> {
        let credentials = credentials.trim();
        if credentials.is_empty() {
            return Err(InvalidCredentials("the webhook credentials are empty"));
        }
        let header = if credentials.contains(':') {
            format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(credentials))
        } else {
            format!("Bearer {credentials}")
        };
        let mut value = HeaderValue::from_str(&header).map_err(|_| {
            InvalidCredentials(
                "the webhook credentials hold a character a header cannot carry (a line break?)",
            )
        })?;
        value.set_sensitive(true);
        self.authorization = Some(value);
        Ok(self)
    }

    async fn deliver(&self, state: &AppState, notice: &Outgoing) {
        let mut delay = self.retry_base;
        for attempt in 1..=TRIES {
            match self.send(notice).await {
                Ok(()) => return,
                Err(error) if attempt < TRIES => {
                    tracing::warn!(attempt, event = notice.event.name(), error = %error, "notification failed; retrying");
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                    if notice.event.while_pending() && !still_pending(state, &notice.id).await {
                        tracing::info!(
                            event = notice.event.name(),
                            "the question was settled; not retrying its notice"
                        );
                        return;
                    }
                }
                Err(error) => {
                    tracing::error!(event = notice.event.name(), error = %error, "notification failed five times; giving up");
                }
            }
        }
    }

    async fn send(&self, notice: &Outgoing) -> Result<(), String> {
        let request = match self.format {
            NotifyFormat::Json => self.client.post(&self.url).json(&JsonNotice::of(notice)),
            NotifyFormat::Ntfy => ntfy::publish(self.client.post(&self.url), notice),
        };
        self.check(self.authorized(request)).await?;
        if self.format == NotifyFormat::Ntfy && !notice.event.while_pending() {
            // Dismisses the notification the follow-up replaced; a server without the endpoint
            // (ntfy before 2.16) still shows the follow-up, so a failure here is not retried.
            let clear = self.client.put(format!("{}/{}/clear", self.url, ntfy::sequence_id(&notice.id)));
            if let Err(error) = self.check(self.authorized(clear)).await {
                tracing::info!(error = %error, "the notification could not be cleared");
            }
        }
        Ok(())
    }

    fn authorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.authorization {
            Some(value) => request.header(AUTHORIZATION, value.clone()),
            None => request,
        }
    }

    async fn check(&self, request: reqwest::RequestBuilder) -> Result<(), String> {
        let response = request.send().await.map_err(|e| crate::error::with_causes(&e))?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else if status.is_redirection() {
            Err(format!(
                "the webhook answered {status} (a redirect, not followed: give the final address as the webhook URL)"
            ))
        } else {
            Err(format!("the webhook answered {status}"))
        }
    }
}

/// Whether question `id` still waits (or the store cannot say: then the notice is still due).
async fn still_pending(state: &AppState, id: &str) -> bool {
    match bounded(state.store.get(id)).await {
        Ok(Some(record)) => record.state() == State::Pending,
        Ok(None) => false,
        Err(_) => true,
    }
}

/// What a notice is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Asked,
    Reminder,
    Answered,
    Declined,
    Expired,
    Withdrawn,
    /// Answered after it had expired.
    Late,
    /// Still waiting after the escalation delay: sent to the escalation's surface.
    Escalated,
}

impl Event {
    fn name(self) -> &'static str {
        match self {
            Self::Asked => "asked",
            Self::Reminder => "reminder",
            Self::Answered => "answered",
            Self::Declined => "declined",
            Self::Expired => "expired",
            Self::Withdrawn => "withdrawn",
            Self::Late => "late",
            Self::Escalated => "escalated",
        }
    }

    /// The follow-up of a question that left `pending` for `state`.
    fn settled(state: State) -> Self {
        match state {
            State::Declined => Self::Declined,
            State::TimedOut => Self::Expired,
            State::Cancelled => Self::Withdrawn,
            State::Late => Self::Late,
            _ => Self::Answered,
        }
    }

    /// Whether it is about a question that waits (and is moot once it is settled); else it is
    /// a follow-up.
    fn while_pending(self) -> bool {
        matches!(self, Self::Asked | Self::Reminder | Self::Escalated)
    }
}

/// One notice, ready to send.
#[derive(Debug)]
struct Outgoing {
    event: Event,
    id: String,
    session_id: Option<String>,
    /// Who asks, for display.
    asked_by: Option<String>,
    state: State,
    headers: Vec<String>,
    /// The questions' text, when the notifier includes it (else empty).
    questions: Vec<String>,
    url: String,
    expires_at: String,
    /// The one-tap answers (label, URL) of a batch of one single-select question.
    taps: Vec<(String, String)>,
}

impl Outgoing {
    fn of(state: &AppState, notifier: &Notifier, event: Event, record: &PendingRecord) -> Self {
        let questions = record.request().questions().as_slice();
        // One link (an HMAC) per notice; a one-tap answer (`tap.rs`) is the link and `/tap/N`.
        let url = crate::links::page_url(state, record.id());
        let taps = if event.while_pending() {
            crate::tap::choices(record)
                .into_iter()
                .enumerate()
                .map(|(n, label)| (askuser_core::show_label(label).into_owned(), format!("{url}/tap/{n}")))
                .collect()
        } else {
            Vec::new()
        };
        Self {
            event,
            id: record.id().to_owned(),
            session_id: record.session_id().map(str::to_owned),
            asked_by: crate::links::asked_by_of(record),
            state: record.state(),
            headers: questions.iter().map(|q| askuser_core::show_blank(q.header()).into_owned()).collect(),
            questions: if notifier.include_questions {
                questions.iter().map(|q| askuser_core::show_blank(q.question()).into_owned()).collect()
            } else {
                Vec::new()
            },
            url,
            expires_at: record.expires_at().to_string(),
            taps,
        }
    }
}

#[derive(Serialize)]
struct AnswerUrl<'a> {
    label: &'a str,
    url: &'a str,
}

#[derive(Serialize)]
struct JsonNotice<'a> {
    event: &'static str,
    id: &'a str,
    session_id: Option<&'a str>,
    asked_by: Option<&'a str>,
    state: State,
    headers: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    questions: Option<&'a [String]>,
    url: &'a str,
    expires_at: &'a str,
    /// POST to one to pick its label (a batch of one single-select question, while it waits).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    answer_urls: Vec<AnswerUrl<'a>>,
}

impl<'a> JsonNotice<'a> {
    fn of(notice: &'a Outgoing) -> Self {
        Self {
            event: notice.event.name(),
            id: &notice.id,
            session_id: notice.session_id.as_deref(),
            asked_by: notice.asked_by.as_deref(),
            state: notice.state,
            headers: &notice.headers,
            questions: (!notice.questions.is_empty()).then_some(notice.questions.as_slice()),
            url: &notice.url,
            expires_at: &notice.expires_at,
            answer_urls: notice.taps.iter().map(|(label, url)| AnswerUrl { label, url }).collect(),
        }
    }
}

/// ntfy's publish form (docs.ntfy.sh/publish).
mod ntfy {
    use base64::Engine as _;
    use serde_json::json;
    use sha2::Digest as _;

    use super::{Event, Outgoing};

    /// ntfy shows at most three action buttons.
    const MAX_ACTIONS: usize = 3;

    /// The notification's sequence id: the same for every notice of a question, so that a
    /// follow-up replaces the notification and can clear it. Derived from the id (which may hold
    /// any character) by SHA-256, in the letters ntfy takes.
    pub(super) fn sequence_id(id: &str) -> String {
        use std::fmt::Write as _;
        let digest = sha2::Sha256::digest(id.as_bytes());
        digest.iter().take(12).fold("askuser-".to_owned(), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
    }

    /// A header value: as is when it is printable ASCII, else RFC 2047's UTF-8 encoded word,
    /// which ntfy decodes.
    fn header_text(text: &str) -> String {
        if text.bytes().all(|b| (b' '..=b'~').contains(&b)) {
            text.to_owned()
        } else {
            format!("=?UTF-8?B?{}?=", base64::engine::general_purpose::STANDARD.encode(text))
        }
    }

    fn title(notice: &Outgoing) -> String {
        let who = notice.asked_by.as_deref().unwrap_or("Your assistant");
        let count = notice.headers.len();
        match notice.event {
            Event::Asked if count == 1 => format!("{who} asks a question"),
            Event::Asked => format!("{who} asks {count} questions"),
            Event::Reminder => format!("Reminder: {who} still waits for your answer"),
            Event::Answered => "Answered".to_owned(),
            Event::Declined => "Declined".to_owned(),
            Event::Expired => "Expired: nobody answered in time".to_owned(),
            Event::Withdrawn => "Withdrawn: the assistant stopped waiting".to_owned(),
            Event::Late => "Answered late: kept for the assistant".to_owned(),
            Event::Escalated => format!("Escalated: {who} still waits for an answer"),
        }
    }

    /// Priority (1 min … 5 max) and tags (emoji short codes): a question is high, a follow-up
    /// min, so that replacing the notification makes no sound.
    fn priority_and_tags(event: Event) -> (&'static str, &'static str) {
        match event {
            Event::Asked => ("4", "question"),
            Event::Reminder => ("4", "question,alarm_clock"),
            Event::Answered => ("1", "white_check_mark"),
            Event::Declined => ("1", "no_entry_sign"),
            Event::Expired => ("1", "hourglass"),
            Event::Withdrawn => ("1", "wastebasket"),
            Event::Late => ("1", "white_check_mark,hourglass"),
            Event::Escalated => ("5", "question,rotating_light"),
        }
    }

    /// The buttons: one per one-tap answer, and "Open" (the page) when there is room for it.
    fn actions(notice: &Outgoing) -> Option<String> {
        if !notice.event.while_pending() {
            return None;
        }
        let mut actions = Vec::new();
        let taps = if notice.taps.len() <= MAX_ACTIONS { notice.taps.as_slice() } else { &[] };
        if taps.len() < MAX_ACTIONS {
            actions.push(json!({"action": "view", "label": "Open", "url": notice.url, "clear": true}));
        }
        for (label, url) in taps {
            actions
                .push(json!({"action": "http", "label": label, "url": url, "method": "POST", "clear": true}));
        }
        Some(serde_json::Value::Array(actions).to_string())
    }

    pub(super) fn publish(request: reqwest::RequestBuilder, notice: &Outgoing) -> reqwest::RequestBuilder {
        let body = if notice.questions.is_empty() {
            notice.headers.join(" · ")
        } else {
            notice.questions.join("\n")
        };
        let (priority, tags) = priority_and_tags(notice.event);
        let mut request = request
            .header("Title", header_text(&title(notice)))
            .header("Click", notice.url.as_str())
            .header("Tags", tags)
            .header("Priority", priority)
            .header("X-Sequence-ID", sequence_id(&notice.id))
            .header("Content-Type", "text/plain; charset=utf-8")
            .body(body);
        if let Some(actions) = actions(notice) {
            request = request.header("Actions", header_text(&actions));
        }
        request
    }
}

/// Follows the store's change feed and sends each notice once.
#[derive(Clone)]
struct Follower {
    state: Arc<AppState>,
    notifier: Arc<Notifier>,
    in_flight: Arc<Semaphore>,
    /// Questions whose reminder is scheduled in this process.
    reminders: Arc<Mutex<HashSet<String>>>,
}

impl Follower {
    async fn run(self) {
        let mut changes = self.state.store.changes();
        // Questions asked before this server followed the feed (while it restarted) are noticed
        // too; the claims keep them from being noticed twice.
        self.catch_up().await;
        loop {
            let change = tokio::select! {
                () = self.state.closed() => return,
                change = changes.next() => change,
            };
            match change {
                Ok(change) => self.changed(&change.id).await,
                Err(askuser_store::Missed) => self.catch_up().await,
            }
        }
    }

    /// Notices due for every pending question (a change may have been missed).
    async fn catch_up(&self) {
        let query =
            askuser_store::ListQuery::new().state(State::Pending).limit(askuser_store::ListQuery::MAX_LIMIT);
        match bounded(self.state.store.list(&query)).await {
            Ok(page) => {
                for record in &page.records {
                    self.pending(record).await;
                }
            }
            Err(error) => {
                tracing::warn!(error = %crate::error::with_causes(&error), "notices: listing pending questions failed");
            }
        }
    }

    async fn changed(&self, id: &str) {
        match bounded(self.state.store.get(id)).await {
            Ok(Some(record)) if record.state() == State::Pending => self.pending(&record).await,
            Ok(Some(record)) if record.state() == State::Late => {
                self.send_once(Notice::Late, Event::Late, &record).await;
            }
            Ok(Some(record)) => {
                self.send_once(Notice::Settled, Event::settled(record.state()), &record).await;
            }
            Ok(None) => {}
            Err(error) => {
                tracing::warn!(error = %crate::error::with_causes(&error), "notices: reading a changed question failed");
            }
        }
    }

    async fn pending(&self, record: &PendingRecord) {
        self.schedule_reminder(record);
        self.send_once(Notice::Asked, Event::Asked, record).await;
    }

    /// Sends `event` about `record` if this process is the one that claims `notice` for it. A
    /// sending slot is taken first (waiting while `IN_FLIGHT` notices are on their way), so a
    /// claimed notice is always sent: the follower falls behind instead, and a feed it missed is
    /// caught up from the pending questions.
    async fn send_once(&self, notice: Notice, event: Event, record: &PendingRecord) {
        let Ok(slot) = Arc::clone(&self.in_flight).acquire_owned().await else { return };
        match bounded(self.state.store.claim_once(&notice.key(record.id()))).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(error) => {
                tracing::warn!(error = %crate::error::with_causes(&error), "notices: claiming a notice failed; not sent");
                return;
            }
        }
        // The audit log: the question was shown by a notice, or a reminder of it went out.
        let surface = self.notifier.format.surface();
        let logged = match event {
            Event::Asked => Some(askuser_store::AuditEvent::posted(record.id(), surface, "asked")),
            Event::Reminder => Some(askuser_store::AuditEvent::reminded(record.id(), surface)),
            _ => None,
        };
        if let Some(logged) = logged
            && let Err(error) = bounded(self.state.store.append_audit(&logged)).await
        {
            tracing::warn!(error = %crate::error::with_causes(&error), "notices: cannot log a notice in the audit log");
        }
        let outgoing = Outgoing::of(&self.state, &self.notifier, event, record);
        let (state, notifier) = (Arc::clone(&self.state), Arc::clone(&self.notifier));
        tokio::spawn(async move {
            notifier.deliver(&state, &outgoing).await;
            drop(slot);
        });
    }

    /// At the question's nudge time (before it expires), a reminder if it still waits.
    fn schedule_reminder(&self, record: &PendingRecord) {
        if record.nudge_at() >= record.expires_at() {
            return;
        }
        let id = record.id().to_owned();
        if !self.reminders.lock().unwrap_or_else(PoisonError::into_inner).insert(id.clone()) {
            return;
        }
        let this = self.clone();
        let wait = Timestamp::now().until(record.nudge_at());
        tokio::spawn(async move {
            tokio::select! {
                () = this.state.closed() => {}
                () = tokio::time::sleep(wait) => {
                    if let Ok(Some(record)) = bounded(this.state.store.get(&id)).await
                        && record.state() == State::Pending
                    {
                        this.send_once(Notice::Reminder, Event::Reminder, &record).await;
                    }
                }
            }
            this.reminders.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
        });
    }
}

/// The reminder ladder's escalation step ([`AnswerServerBuilder::escalate`](crate::AnswerServerBuilder::escalate)).
#[derive(Debug, Clone)]
pub(crate) struct Escalation {
    pub(crate) after: Duration,
    pub(crate) notifier: Arc<Notifier>,
}

/// The claims of the escalation step: sent once, and followed up once, across replicas.
const ESCALATED: &str = "notice.escalated";
const ESCALATION_SETTLED: &str = "notice.escalation-settled";

/// Every sweep interval until the server shuts down: escalates the questions due, and follows up
/// on the escalated ones that were settled.
async fn escalate_loop(state: Arc<AppState>, escalation: Escalation) {
    let mut ticks = tokio::time::interval(state.config.sweep_interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = state.closed() => return,
            _ = ticks.tick() => {
                if let Err(error) = escalate_due(&state, &escalation).await {
                    tracing::warn!(error = %crate::error::with_causes(&error), "escalation: the store failed; trying again");
                }
            }
        }
    }
}

/// One round: each waiting question asked `after` ago or more (and before its deadline) is
/// escalated, once; each escalated one that has settled gets its follow-up there, once.
async fn escalate_due(
    state: &Arc<AppState>,
    escalation: &Escalation,
) -> Result<(), askuser_store::StoreError> {
    let now = state.clock.now();
    let mut query =
        askuser_store::ListQuery::new().state(State::Pending).limit(askuser_store::ListQuery::MAX_LIMIT);
    loop {
        let page = state.store.list(&query).await?;
        for record in &page.records {
            let due = record.asked_at().plus(escalation.after) <= now && now < record.expires_at();
            if due && state.store.claim_once(&Key::of_question(ESCALATED, record.id())).await? {
                let logged = askuser_store::AuditEvent::escalated(
                    record.id(),
                    askuser_store::Via::surface(escalation.notifier.format.surface()),
                );
                if let Err(error) = state.store.append_audit(&logged).await {
                    tracing::warn!(error = %crate::error::with_causes(&error), "escalation: cannot log it in the audit log");
                }
                send_to(state, &escalation.notifier, Event::Escalated, record);
            }
        }
        match page.next {
            Some(next) => query = query.after(next),
            None => break,
        }
    }
    for (id, _) in state.store.values(ESCALATED).await? {
        let Some(record) = state.store.get(&id).await? else { continue };
        if record.state() == State::Pending {
            continue;
        }
        if state.store.claim_once(&Key::of_question(ESCALATION_SETTLED, &id)).await? {
            send_to(state, &escalation.notifier, Event::settled(record.state()), &record);
        }
        // Followed up, here or by another replica: no later round reads it again (a settled
        // question is never pending again, so it is never escalated twice).
        state.store.remove_value(ESCALATED, &id).await?;
    }
    Ok(())
}

/// Sends `event` about `record` through `notifier`, on a task of its own.
fn send_to(state: &Arc<AppState>, notifier: &Arc<Notifier>, event: Event, record: &PendingRecord) {
    let outgoing = Outgoing::of(state, notifier, event, record);
    let (state, notifier) = (Arc::clone(state), Arc::clone(notifier));
    tokio::spawn(async move { notifier.deliver(&state, &outgoing).await });
}

impl AnswerServer {
    /// Starts the reminder ladder's escalation step ([`escalate`](crate::AnswerServerBuilder::escalate);
    /// without one, does nothing), until the server shuts down. [`serve`](Self::serve) calls it.
    #[must_use = "dropping the handle does not stop the escalation; shutdown does"]
    pub fn spawn_escalation(&self) -> Option<tokio::task::JoinHandle<()>> {
        let escalation = self.state.escalation.clone()?;
        Some(tokio::spawn(escalate_loop(Arc::clone(&self.state), escalation)))
    }
}

impl AnswerServer {
    /// Starts sending the notices of the server's [`notifier`](crate::AnswerServerBuilder::notifier)
    /// (without one, does nothing): it follows the store's change feed until the server shuts
    /// down. [`serve`](Self::serve) calls it.
    #[must_use = "dropping the handle does not stop the notices; shutdown does"]
    pub fn spawn_notifier(&self) -> Option<tokio::task::JoinHandle<()>> {
        let notifier = self.state.notifier.clone()?;
        let follower = Follower {
            state: Arc::clone(&self.state),
            notifier,
            in_flight: Arc::new(Semaphore::new(IN_FLIGHT)),
            reminders: Arc::default(),
        };
        Some(tokio::spawn(follower.run()))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sequence_ids_are_stable_and_plain() {
        let id = super::ntfy::sequence_id("call/1 é");
        assert_eq!(id, super::ntfy::sequence_id("call/1 é"));
        assert_ne!(id, super::ntfy::sequence_id("call/2"));
        assert!(id.len() == 32 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'), "{id}");
    }
}
