//! What a store holds: [`PendingRecord`]s in a [`State`], put as [`NewQuestion`]s, listed in
//! [`Page`]s.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use askuser_core::{
    AnsweredBy, AskUserRequest, AskUserResponse, AskUserResult, Deadline, Profile, ResponseError, Timestamp,
};
use askuser_tool::PendingQuestion;
use serde::{Deserialize, Serialize};

use crate::time::Clock;

/// Where a pending question stands. Only `pending` ever changes, and only once; except that a
/// `timed_out` question may still take a late answer (`late`) within the window its server allows
/// ([`PendingStore::commit_late_answer`](crate::PendingStore::commit_late_answer)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum State {
    /// Waiting for an answer.
    Pending,
    /// A person (or a defaults responder) answered.
    Answered,
    /// The person declined.
    Declined,
    /// Nobody answered before `expires_at`.
    TimedOut,
    /// The asker stopped waiting (its future was dropped, or a host cancelled it).
    Cancelled,
    /// Answered after it timed out, within the late window: the answer is kept and delivered as
    /// late; what the asker was told at the deadline (timed out) stays true.
    Late,
}

impl State {
    /// The name stored and shown: `pending`, `answered`, `declined`, `timed_out`, `cancelled`,
    /// `late`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Answered => "answered",
            Self::Declined => "declined",
            Self::TimedOut => "timed_out",
            Self::Cancelled => "cancelled",
            Self::Late => "late",
        }
    }

    /// Whether the question has been answered or declined, in time or late (the states that carry
    /// a response).
    #[must_use]
    pub fn has_response(self) -> bool {
        matches!(self, Self::Answered | Self::Declined | Self::Late)
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A state name that is not one of [`State`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown state {0:?} (expected pending, answered, declined, timed_out or cancelled)")]
pub struct UnknownState(pub String);

impl FromStr for State {
    type Err = UnknownState;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "pending" => Self::Pending,
            "answered" => Self::Answered,
            "declined" => Self::Declined,
            "timed_out" => Self::TimedOut,
            "cancelled" => Self::Cancelled,
            "late" => Self::Late,
            other => return Err(UnknownState(other.to_owned())),
        })
    }
}

/// A question to put in a store: the validated request and who asked it, with its timeout.
///
/// The record's id is the request's id: the tool-call id for a deferred call
/// ([`from_pending`](Self::from_pending)), a fresh random id for an inline one. Its profile is the
/// request's.
///
/// Its deadlines are the request's own stamps ([`AskUserRequest::deadline`]: the `AskUser`
/// capability stamps every request it builds) where it has them: `asked_at`, and `nudge_at` and
/// `expires_at` when the request has a timeout (the host's, or the `timeout_seconds` the model
/// asked for). Otherwise `asked_at` is the store's clock at the put, and the timeout given here
/// sets the others as [`Deadline::new`] computes them.
#[derive(Debug, Clone)]
pub struct NewQuestion {
    pub(crate) request: AskUserRequest,
    pub(crate) session_id: Option<String>,
    pub(crate) tool_name: String,
    pub(crate) timeout: Duration,
    pub(crate) lease: Option<Duration>,
    pub(crate) asked_by: Option<AskedBy>,
}

impl NewQuestion {
    /// A question that waits at most `timeout` for its answer, unless the request carries its own
    /// `expires_at`, which wins. A zero timeout makes a question that is expired as soon as it is
    /// put.
    #[must_use]
    pub fn new(request: AskUserRequest, timeout: Duration) -> Self {
        Self {
            request,
            session_id: None,
            tool_name: askuser_tool::TOOL_NAME.to_owned(),
            timeout,
            lease: None,
            asked_by: None,
        }
    }

    /// A deferred call of the `AskUser` capability, under its tool-call id and tool name.
    #[must_use]
    pub fn from_pending(pending: &PendingQuestion, timeout: Duration) -> Self {
        Self::new(pending.request().clone(), timeout).tool_name(pending.tool_name())
    }

    /// With the session (conversation or client) it belongs to. Default: none.
    #[must_use]
    pub fn session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// With who asks it, shown to the person beside the question (wherever it is shown).
    /// Default: none. A repeated put of the same question keeps the first put's label.
    #[must_use]
    pub fn asked_by(mut self, asked_by: AskedBy) -> Self {
        self.asked_by = Some(asked_by);
        self
    }

    /// With the tool name the model called. Default: `ask_user_question`.
    #[must_use]
    pub fn tool_name(mut self, tool_name: impl Into<String>) -> Self {
        self.tool_name = tool_name.into();
        self
    }

    /// Held by a live asker: the question is withdrawn (`cancelled`, by the next sweep) once
    /// `lease` passes without a [`renew`](crate::PendingStore::renew), so the question of an
    /// asker that was killed stops being answerable within about `lease` plus the sweep's
    /// interval instead of at its deadline. Default: no lease, a deferred question that nobody
    /// waits for by design and that keeps its deadline.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = Some(lease);
        self
    }

    /// The id the record will have.
    #[must_use]
    pub fn id(&self) -> &str {
        self.request.id()
    }

    /// The deadlines the record will have when put on a store that reads `clock`: the request's
    /// stamps when it has an expiry; else from its `asked_at` (or now) and this question's
    /// timeout. A request's stamps are this process's wall-clock times, read on `clock` as the
    /// same durations ([`Clock::of_system`]): a request asked 5 s ago that may wait 10 minutes
    /// does so on the store's clock, however far this process's clock is off. The one place the
    /// store decides a question's deadlines.
    #[must_use]
    pub fn deadline(&self, clock: &dyn Clock) -> Deadline {
        let on_clock = |stamp: Timestamp| clock.of_system(stamp);
        match self.request.deadline() {
            Some(stamped) => {
                let asked_at = on_clock(stamped.asked_at());
                match (stamped.nudge_at(), stamped.expires_at()) {
                    (Some(nudge_at), Some(expires_at)) => {
                        Deadline::from_parts(asked_at, Some((on_clock(nudge_at), on_clock(expires_at))))
                    }
                    _ => Deadline::new(asked_at, Some(self.timeout)),
                }
            }
            None => Deadline::new(clock.now(), Some(self.timeout)),
        }
    }

    /// The record as first stored: pending, version 1, the request stamped with the record's
    /// deadlines (so that the stored request says the same times as the record).
    pub(crate) fn into_record(self, clock: &dyn Clock) -> PendingRecord {
        let now = clock.now();
        let deadline = self.deadline(clock);
        let (nudge_at, expires_at) = stamps_of(&deadline);
        PendingRecord {
            session_id: self.session_id,
            asked_by: self.asked_by,
            tool_name: self.tool_name,
            request: self.request.with_deadline(deadline),
            state: State::Pending,
            asked_at: deadline.asked_at(),
            nudge_at,
            expires_at,
            lease_until: self.lease.map(|lease| now.plus(lease)),
            closed_at: None,
            answered_by: None,
            response: None,
            version: 1,
        }
    }
}

/// A stored deadline's `nudge_at` and `expires_at`, which [`NewQuestion::deadline`] always sets.
fn stamps_of(deadline: &Deadline) -> (Timestamp, Timestamp) {
    let expires_at = deadline.expires_at().unwrap_or(deadline.asked_at());
    (deadline.nudge_at().unwrap_or(expires_at), expires_at)
}

/// The tool name that marks a record as an **approval** (a permission prompt of an agent CLI,
/// carried by `askuser hook`): one single-select question whose options are exactly
/// [`APPROVAL_OPTIONS`] (the third only where the CLI offers an "always allow" rule), none marked
/// as a default. Surfaces never offer it a one-tap answer, and nothing answers it for the person
/// (docs/contract.md §17).
pub const APPROVAL_TOOL_NAME: &str = "askuser_approval";

/// The options of an approval, in order: `Allow once`, `Deny`, and where offered `Always allow`.
pub const APPROVAL_OPTIONS: [&str; 3] = ["Allow once", "Deny", "Always allow"];

/// One question in a store, as read back.
///
/// Serialises (for logs, the `askuser-store` tool and HTTP APIs) as `{"id", "session_id",
/// "asked_by", "tool_name", "profile", "state", "asked_at", "nudge_at", "expires_at", "lease_until",
/// "closed_at", "answered_at", "answered_by", "version", "request", "response"}` with RFC 3339
/// times (`lease_until` is `null` for a deferred question; `asked_by` is left out when the asker
/// gave no label, as records were before it existed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRecord {
    pub(crate) session_id: Option<String>,
    pub(crate) asked_by: Option<AskedBy>,
    pub(crate) tool_name: String,
    pub(crate) request: AskUserRequest,
    pub(crate) state: State,
    pub(crate) asked_at: Timestamp,
    pub(crate) nudge_at: Timestamp,
    pub(crate) expires_at: Timestamp,
    pub(crate) lease_until: Option<Timestamp>,
    pub(crate) closed_at: Option<Timestamp>,
    pub(crate) answered_by: Option<AnsweredBy>,
    pub(crate) response: Option<AskUserResponse>,
    pub(crate) version: i64,
}

impl PendingRecord {
    /// The id: the request's id (for a deferred call, the tool-call id).
    #[must_use]
    pub fn id(&self) -> &str {
        self.request.id()
    }

    /// The session it belongs to, when the asker said.
    #[must_use]
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// Who asked, when the asker said (see [`AskedBy`]).
    #[must_use]
    pub fn asked_by(&self) -> Option<&AskedBy> {
        self.asked_by.as_ref()
    }

    /// The tool name the model called.
    #[must_use]
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// Whether it is an approval (its tool name is [`APPROVAL_TOOL_NAME`]): a permission prompt,
    /// never answered by a one-tap link or for the person.
    #[must_use]
    pub fn is_approval(&self) -> bool {
        self.tool_name == APPROVAL_TOOL_NAME
    }

    /// The contract the request was validated under: `reference` or `extended`.
    #[must_use]
    pub fn profile(&self) -> Profile {
        self.request.profile()
    }

    /// The validated request, stamped with the record's deadlines.
    #[must_use]
    pub fn request(&self) -> &AskUserRequest {
        &self.request
    }

    /// Where it stands.
    #[must_use]
    pub fn state(&self) -> State {
        self.state
    }

    /// When it was asked, when to nudge, when it expires (a stored question always expires).
    #[must_use]
    pub fn deadline(&self) -> Deadline {
        Deadline::from_parts(self.asked_at, Some((self.nudge_at, self.expires_at)))
    }

    /// When it was asked.
    #[must_use]
    pub fn asked_at(&self) -> Timestamp {
        self.asked_at
    }

    /// When to remind the person (before `expires_at`).
    #[must_use]
    pub fn nudge_at(&self) -> Timestamp {
        self.nudge_at
    }

    /// From this moment on the question is expired and never answerable.
    #[must_use]
    pub fn expires_at(&self) -> Timestamp {
        self.expires_at
    }

    /// Until when its asker's lease holds it (see [`NewQuestion::lease`]): past it, unrenewed, the
    /// sweep withdraws the question. `None` for a deferred question (no lease).
    #[must_use]
    pub fn lease_until(&self) -> Option<Timestamp> {
        self.lease_until
    }

    /// Whether nobody waits for it by design (it was put without a lease): it keeps its deadline
    /// whoever waits.
    #[must_use]
    pub fn is_deferred(&self) -> bool {
        self.lease_until.is_none()
    }

    /// When it left `pending` (answered, declined, timed out or cancelled); for a late record, when
    /// the late answer came.
    #[must_use]
    pub fn closed_at(&self) -> Option<Timestamp> {
        self.closed_at
    }

    /// When it was answered or declined.
    #[must_use]
    pub fn answered_at(&self) -> Option<Timestamp> {
        self.closed_at.filter(|_| self.state.has_response())
    }

    /// Who answered, for an answered or declined record.
    #[must_use]
    pub fn answered_by(&self) -> Option<AnsweredBy> {
        self.answered_by
    }

    /// The response that was committed: the first answer, checked against the request.
    #[must_use]
    pub fn response(&self) -> Option<&AskUserResponse> {
        self.response.as_ref()
    }

    /// Starts at 1; each change adds one (a record changes at most once).
    #[must_use]
    pub fn version(&self) -> i64 {
        self.version
    }

    /// Whether it is still waiting but past its deadline at `now`: never answerable, expired by
    /// the next sweep.
    #[must_use]
    pub fn is_overdue(&self, now: Timestamp) -> bool {
        self.state == State::Pending && now >= self.expires_at
    }

    /// The tool result to hand the model for this record, byte-identical to what an inline call
    /// would have returned: the rendered answer, the declined sentence, or the timed-out sentence
    /// (the `decline` timeout policy); for a late record, the rendered late answer (its asker was
    /// told it timed out; [`State::Late`] says why this differs). `None` while pending and for a
    /// cancelled record (whose asker stopped waiting).
    ///
    /// # Errors
    ///
    /// The stored response does not fit the request; a store checks both when it reads a record,
    /// so this only happens to a record built by hand.
    pub fn result(&self) -> Result<Option<AskUserResult>, ResponseError> {
        match (self.state, &self.response) {
            (State::TimedOut, _) => Ok(Some(AskUserResult::timed_out())),
            (State::Answered | State::Declined | State::Late, Some(response)) => {
                askuser_core::ask_user_result(&self.request, response).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// The record answered (`state`: answered or declined) with `response` at `now`, as the row
    /// now reads: its `version` and `lease_until` (a renewal may have moved it since it was read).
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn answered(
        &self,
        state: State,
        now: Timestamp,
        response: &AskUserResponse,
        version: i64,
        lease_until: Option<i64>,
    ) -> Self {
        Self {
            version,
            lease_until: lease_until.map(Timestamp::from_unix_millis),
            ..self.closed(state, now, Some(response.clone()))
        }
    }

    /// The same record in `state`, closed at `now`, one version on.
    pub(crate) fn closed(&self, state: State, now: Timestamp, response: Option<AskUserResponse>) -> Self {
        let answered_by = response.as_ref().map(|r| r.answered_by);
        Self { state, closed_at: Some(now), answered_by, response, version: self.version + 1, ..self.clone() }
    }
}

/// A record's fields before they are checked against each other: what a stored row holds once
/// its columns are parsed, and what the wire form holds.
pub(crate) struct Parts {
    pub(crate) id: String,
    pub(crate) session_id: Option<String>,
    pub(crate) asked_by: Option<String>,
    pub(crate) tool_name: String,
    pub(crate) profile: Profile,
    pub(crate) request: AskUserRequest,
    pub(crate) state: State,
    pub(crate) asked_at: Timestamp,
    pub(crate) nudge_at: Timestamp,
    pub(crate) expires_at: Timestamp,
    pub(crate) lease_until: Option<Timestamp>,
    pub(crate) closed_at: Option<Timestamp>,
    pub(crate) answered_by: Option<String>,
    pub(crate) response: Option<AskUserResponse>,
    pub(crate) version: i64,
}

impl Parts {
    /// The record, once its parts agree: the request (validated again when it was read) has the
    /// record's id, profile and deadline stamps, the response fits the request and is there
    /// exactly when the state has one, `answered_by` is the response's. Else why not: a row
    /// edited by hand or a buggy writer is reported, not trusted.
    pub(crate) fn check(self) -> Result<PendingRecord, String> {
        let Self { id, request, profile, state, response, .. } = &self;
        if request.id() != id {
            return Err(format!("request id {:?} differs from the record's", request.id()));
        }
        if *profile != request.profile() {
            return Err(format!("profile {profile} differs from the request's"));
        }
        let deadline = Deadline::from_parts(self.asked_at, Some((self.nudge_at, self.expires_at)));
        if request.deadline().is_some_and(|stamped| *stamped != deadline) {
            return Err("the request's deadline stamps differ from the record's".to_owned());
        }
        if let Some(response) = response {
            askuser_core::check_response(request, response).map_err(|e| format!("response: {e}"))?;
        }
        if state.has_response() != response.is_some() {
            return Err(format!(
                "a {state} record {} a response",
                if response.is_some() { "with" } else { "without" }
            ));
        }
        let asked_by =
            self.asked_by.as_deref().map(AskedBy::new).transpose().map_err(|e| format!("asked_by: {e}"))?;
        let answered_by = response.as_ref().map(|r| r.answered_by);
        if self.answered_by.as_deref() != answered_by.map(AnsweredBy::as_str) {
            return Err("answered_by differs from the response's".to_owned());
        }
        Ok(PendingRecord {
            session_id: self.session_id,
            asked_by,
            tool_name: self.tool_name,
            request: self.request.with_deadline(deadline),
            state: self.state,
            asked_at: self.asked_at,
            nudge_at: self.nudge_at,
            expires_at: self.expires_at,
            lease_until: self.lease_until,
            closed_at: self.closed_at,
            answered_by,
            response: self.response,
            version: self.version,
        })
    }
}

/// Reads the form [`Serialize`] writes (an answer server's replies), with the checks a stored
/// row gets: the request is validated again and the response checked against it.
impl<'de> Deserialize<'de> for PendingRecord {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            id: String,
            session_id: Option<String>,
            #[serde(default)]
            asked_by: Option<String>,
            tool_name: String,
            profile: Profile,
            state: String,
            asked_at: Timestamp,
            nudge_at: Timestamp,
            expires_at: Timestamp,
            lease_until: Option<Timestamp>,
            closed_at: Option<Timestamp>,
            #[serde(rename = "answered_at")]
            _answered_at: Option<Timestamp>,
            answered_by: Option<String>,
            version: i64,
            request: AskUserRequest,
            response: Option<AskUserResponse>,
        }
        let wire = Wire::deserialize(deserializer)?;
        let state: State = wire.state.parse().map_err(serde::de::Error::custom)?;
        Parts {
            id: wire.id,
            session_id: wire.session_id,
            asked_by: wire.asked_by,
            tool_name: wire.tool_name,
            profile: wire.profile,
            request: wire.request,
            state,
            asked_at: wire.asked_at,
            nudge_at: wire.nudge_at,
            expires_at: wire.expires_at,
            lease_until: wire.lease_until,
            closed_at: wire.closed_at,
            answered_by: wire.answered_by,
            response: wire.response,
            version: wire.version,
        }
        .check()
        .map_err(serde::de::Error::custom)
    }
}

impl Serialize for PendingRecord {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a> {
            id: &'a str,
            session_id: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            asked_by: Option<&'a str>,
            tool_name: &'a str,
            profile: Profile,
            state: State,
            asked_at: Timestamp,
            nudge_at: Timestamp,
            expires_at: Timestamp,
            lease_until: Option<Timestamp>,
            closed_at: Option<Timestamp>,
            answered_at: Option<Timestamp>,
            answered_by: Option<AnsweredBy>,
            version: i64,
            request: &'a AskUserRequest,
            response: Option<&'a AskUserResponse>,
        }
        Wire {
            id: self.id(),
            session_id: self.session_id(),
            asked_by: self.asked_by.as_ref().map(AskedBy::as_str),
            tool_name: &self.tool_name,
            profile: self.profile(),
            state: self.state,
            asked_at: self.asked_at,
            nudge_at: self.nudge_at,
            expires_at: self.expires_at,
            lease_until: self.lease_until,
            closed_at: self.closed_at,
            answered_at: self.answered_at(),
            answered_by: self.answered_by,
            version: self.version,
            request: &self.request,
            response: self.response.as_ref(),
        }
        .serialize(serializer)
    }
}

/// The longest [`AskedBy`] label, in characters.
pub const MAX_ASKED_BY_CHARS: usize = 200;

/// Who asks a question: a short label the person sees beside it ("claude-code 1.2 in ~/src/app",
/// a session's name), wherever the question is shown. Untrusted text: one line of at
/// most [`MAX_ASKED_BY_CHARS`] characters without control characters or invisible formatting
/// (bidi controls, zero-width characters); [`shown`](Self::shown) makes the characters that
/// render blank visible for display.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AskedBy(String);

/// A label [`AskedBy::new`] refuses, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidAskedBy(String);

impl AskedBy {
    /// The label `text`, trimmed.
    ///
    /// # Errors
    ///
    /// It is empty, longer than [`MAX_ASKED_BY_CHARS`] characters, or holds a control or
    /// invisible formatting character (the error says which and where).
    pub fn new(text: &str) -> Result<Self, InvalidAskedBy> {
        let text = text.trim();
        let chars = text.chars().count();
        if chars == 0 {
            return Err(InvalidAskedBy("the asked-by label is empty".to_owned()));
        }
        if chars > MAX_ASKED_BY_CHARS {
            return Err(InvalidAskedBy(format!(
                "the asked-by label has {chars} characters; at most {MAX_ASKED_BY_CHARS} are allowed"
            )));
        }
        if let Some((at, c)) =
            text.chars().enumerate().find(|&(_, c)| askuser_core::is_forbidden_char(c, false))
        {
            return Err(InvalidAskedBy(format!(
                "the asked-by label holds U+{:04X} at character {}: control characters and invisible \
                 formatting (bidi controls, zero-width characters) are not allowed",
                u32::from(c),
                at + 1
            )));
        }
        Ok(Self(text.to_owned()))
    }

    /// A label made from text nobody checked (a host's name, a directory): what [`new`](Self::new)
    /// refuses is written out as `⟨U+XXXX⟩`, and a label too long is cut to
    /// [`MAX_ASKED_BY_CHARS`] characters ending in `…`. `None` when nothing is left.
    #[must_use]
    pub fn lossy(text: &str) -> Option<Self> {
        let mut label = String::with_capacity(text.len());
        for c in text.trim().chars() {
            if askuser_core::is_forbidden_char(c, false) {
                use std::fmt::Write as _;
                let _ = write!(label, "⟨U+{:04X}⟩", u32::from(c));
            } else {
                label.push(c);
            }
        }
        if label.chars().count() > MAX_ASKED_BY_CHARS {
            label = label.chars().take(MAX_ASKED_BY_CHARS - 1).collect();
            label.push('…');
        }
        Self::new(&label).ok()
    }

    /// The label as given.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The label for display: characters that render blank shown as `⟨U+XXXX⟩`.
    #[must_use]
    pub fn shown(&self) -> Cow<'_, str> {
        askuser_core::show_blank(&self.0)
    }
}

impl fmt::Display for AskedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown())
    }
}

/// Which records to list, and from where. Records are listed in the order they were asked
/// (`asked_at`, then id), oldest first unless [`newest_first`](ListQuery::newest_first). Every
/// filter has an index (migrations 0001 and 0002), read forwards or backwards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    pub(crate) session_id: Option<String>,
    pub(crate) state: Option<State>,
    pub(crate) after: Option<Cursor>,
    pub(crate) limit: usize,
    pub(crate) newest_first: bool,
}

impl Default for ListQuery {
    fn default() -> Self {
        Self::new()
    }
}

impl ListQuery {
    /// The largest page a store returns.
    pub const MAX_LIMIT: usize = 1_000;

    /// Every record, 100 a page.
    #[must_use]
    pub fn new() -> Self {
        Self { session_id: None, state: None, after: None, limit: 100, newest_first: false }
    }

    /// Only this session's records. Default: every session.
    #[must_use]
    pub fn session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// Only records in this state. Default: every state.
    #[must_use]
    pub fn state(mut self, state: State) -> Self {
        self.state = Some(state);
        self
    }

    /// At most `limit` records a page, clamped to 1..=[`MAX_LIMIT`](Self::MAX_LIMIT). Default: 100.
    #[must_use]
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit.clamp(1, Self::MAX_LIMIT);
        self
    }

    /// The page after `cursor` (a previous page's [`Page::next`], listed in the same order).
    /// Default: the first page.
    #[must_use]
    pub fn after(mut self, cursor: Cursor) -> Self {
        self.after = Some(cursor);
        self
    }

    /// The most recently asked first (a history, an inbox). Default: the oldest first.
    #[must_use]
    pub fn newest_first(mut self) -> Self {
        self.newest_first = true;
        self
    }

    /// Whether `record` matches the filters and comes after the cursor.
    pub(crate) fn admits(&self, record: &PendingRecord) -> bool {
        self.session_id.as_deref().is_none_or(|s| record.session_id() == Some(s))
            && self.state.is_none_or(|s| record.state() == s)
            && self
                .after
                .as_ref()
                .is_none_or(|c| if self.newest_first { c.follows(record) } else { c.precedes(record) })
    }

    /// `records` in this query's listing order.
    pub(crate) fn sort(&self, records: &mut [PendingRecord]) {
        records.sort_by(|a, b| (a.asked_at(), a.id()).cmp(&(b.asked_at(), b.id())));
        if self.newest_first {
            records.reverse();
        }
    }
}

/// Where a page ended: the asking time and id of its last record. Shown as `MILLIS:ID` so that it
/// can travel in a URL; [`FromStr`] reads it back.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cursor {
    pub(crate) asked_at: Timestamp,
    pub(crate) id: String,
}

impl Cursor {
    pub(crate) fn of(record: &PendingRecord) -> Self {
        Self { asked_at: record.asked_at, id: record.id().to_owned() }
    }

    /// Whether `record` comes after this cursor, oldest first.
    pub(crate) fn precedes(&self, record: &PendingRecord) -> bool {
        (record.asked_at, record.id()) > (self.asked_at, self.id.as_str())
    }

    /// Whether `record` comes before this cursor, oldest first (after it, newest first).
    pub(crate) fn follows(&self, record: &PendingRecord) -> bool {
        (record.asked_at, record.id()) < (self.asked_at, self.id.as_str())
    }
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.asked_at.unix_millis(), self.id)
    }
}

/// A cursor that is not `MILLIS:ID`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid page cursor {0:?} (expected MILLIS:ID)")]
pub struct InvalidCursor(pub String);

impl FromStr for Cursor {
    type Err = InvalidCursor;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (millis, id) = s.split_once(':').ok_or_else(|| InvalidCursor(s.to_owned()))?;
        let millis = millis.parse().map_err(|_| InvalidCursor(s.to_owned()))?;
        Ok(Self { asked_at: Timestamp::from_unix_millis(millis), id: id.to_owned() })
    }
}

/// One page of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Page {
    /// The records, in listing order.
    pub records: Vec<PendingRecord>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<Cursor>,
}

impl Page {
    /// A page from up to `limit + 1` records read in listing order: the extra one only says that
    /// there is a next page.
    pub(crate) fn from_overfetch(mut records: Vec<PendingRecord>, limit: usize) -> Self {
        let next = if records.len() > limit {
            records.truncate(limit);
            records.last().map(Cursor::of)
        } else {
            None
        };
        Self { records, next }
    }
}

#[cfg(test)]
mod tests {
    use super::{AskedBy, MAX_ASKED_BY_CHARS};

    #[test]
    fn asked_by_labels_are_one_short_visible_line() {
        assert_eq!(AskedBy::new("  codex in ~/app ").unwrap().as_str(), "codex in ~/app");
        assert_eq!(AskedBy::new(" ").unwrap_err().to_string(), "the asked-by label is empty");
        let long = "x".repeat(MAX_ASKED_BY_CHARS + 1);
        assert_eq!(
            AskedBy::new(&long).unwrap_err().to_string(),
            "the asked-by label has 201 characters; at most 200 are allowed"
        );
        let bidi = AskedBy::new("evil\u{202e}txt").unwrap_err().to_string();
        assert!(bidi.starts_with("the asked-by label holds U+202E at character 5:"), "{bidi}");
        assert!(AskedBy::new("two\nlines").unwrap_err().to_string().contains("U+000A at character 4"));
        // Blank-rendering characters are allowed, and shown.
        let blank = AskedBy::new("a\u{3164}b").unwrap();
        assert_eq!((blank.as_str(), blank.shown().as_ref()), ("a\u{3164}b", "a⟨U+3164⟩b"));
    }

    #[test]
    fn lossy_labels_escape_and_cut() {
        assert_eq!(AskedBy::lossy("evil\u{202e}txt").unwrap().as_str(), "evil⟨U+202E⟩txt");
        let cut = AskedBy::lossy(&"é".repeat(500)).unwrap();
        assert_eq!(cut.as_str().chars().count(), MAX_ASKED_BY_CHARS);
        assert!(cut.as_str().ends_with('…'));
        assert_eq!(AskedBy::lossy(" \t "), None);
    }
}
