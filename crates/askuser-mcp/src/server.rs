//! The MCP server: `ask_user_question` as a tool, asked through the client's form elicitation in
//! the shape of the negotiated revision, with a fallback for clients that cannot show a form.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use askuser_core::{
    AnswerError, AnsweredBy, Answerer, AskContext, AskUserRequest, AskUserResponse, DefaultsResponder,
    Profile, QuestionKind, Questions, Timestamp, Validator, ask_user_result,
};
use askuser_store::{AskedBy, NewQuestion, PendingRecord, PendingStore, State as PendingState, StoreError};
use askuser_tool::exit::with_causes;
use askuser_tool::{
    AskUser, CallOutcome, DESCRIPTION, Dialect, EXTENDED_DESCRIPTION, EXTENDED_INSTRUCTIONS, INSTRUCTIONS,
    OnTimeout, TOOL_NAME, ToolCall, parameters_for,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam, ClientCapabilities,
    ClientResult, ContentBlock, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation, InputRequest, InputRequests, InputRequiredResult, JsonObject, ListToolsResult,
    NumberOrString, PaginatedRequestParams, PingRequest, ProgressNotificationParam, ProtocolVersion,
    RequestId, RequestStateCodec, RequestStateError, SealOptions, ServerCapabilities, ServerConfig,
    ServerRequest, Tool, ToolAnnotations,
};
use rmcp::service::{
    NotificationContext, Peer, PeerRequestOptions, RequestContext, RoleServer, ServiceError,
};
use rmcp::{ErrorData, ServerHandler};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::watch;

use crate::form::{self, FormStyle};
use crate::inbox::{Inbox, InboxAnswerer, commit, is_pending};
use crate::later::{ANSWERS_TOOL, LATER_TOOL, Later, LaterConfig};

/// A fallback step's answerer, and the note saying why the steps before it could not ask.
pub(crate) type Picked = (Arc<dyn Answerer>, Option<String>);

/// How long a question waits in an [inbox](AskUserServerBuilder::inbox) or as a background ask
/// when the server has no timeout: an hour.
pub const INBOX_TIMEOUT: Duration = Duration::from_hours(1);

/// The key of the one input request in a 2026-07-28 `InputRequiredResult`.
pub const INPUT_KEY: &str = "ask_user_question";

/// What the model is told when the client cannot show a form and the fallback is to decline.
pub const NO_FORM: &str = "This MCP client cannot show questions to the person (it did not declare form elicitation), so nobody was asked. Continue without the answers: make a reasonable choice and say which one you made, or ask in your reply if the answer is essential.";

/// How long a 2026-07-28 `requestState` stays valid when no timeout is set.
pub const DEFAULT_STATE_TTL: Duration = Duration::from_hours(1);

/// How much longer than the server's own timeout an `elicitation/create` request may run, so that
/// the timeout, not the request, decides when the person is cut off.
const REQUEST_TIMEOUT_MARGIN: Duration = Duration::from_secs(30);

/// How many times one call shows the form: an answer that does not fit is refused and the form
/// shown again, naming the problem, up to this many rounds in all. It is never taken as a
/// decline: the person did answer.
pub const FORM_ROUNDS: u8 = 5;

/// What the model is told when every round's answer missed the form ([`FORM_ROUNDS`]), `last`
/// being the last round's problem: a retry, not a decline.
fn misfits(last: &str) -> String {
    let last = capped(last);
    format!(
        "The person answered the form {FORM_ROUNDS} times, but no answer fitted the questions (the last: {last}), so no answer was taken. Ask again with simpler questions, or ask in your reply."
    )
}

/// How long the first `ping` waits for the client's answer (see `on_initialized`).
const PING_PATIENCE: Duration = Duration::from_secs(30);

/// How often a call waiting for the person sends a progress notification, when the client gave
/// a progress token.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(15);

/// Who answers when the client cannot show a form, and (extended profile) who is asked a
/// secret question, which never goes into a form.
///
/// Fallbacks chain ([`or_else`](Self::or_else)): a step whose [availability
/// check](Self::available_when) fails at a call (a terminal fallback in a process started without
/// a terminal) passes that call to the next step, a call nobody could be asked tells the model
/// which steps were not available, and a call a later step took gets a second text block saying
/// where the person was asked and why not before.
#[derive(Clone)]
pub struct Fallback {
    answerer: Option<Arc<dyn Answerer>>,
    note: String,
    /// Whether the answerer may be asked secret questions (it reads them with echo off and hands
    /// the value to a secret sink).
    secrets: bool,
    /// Checked at every call: why this step cannot ask now, if it cannot.
    check: Option<Arc<Availability>>,
    /// Who is asked when this step cannot ask now (none: nobody).
    next: Option<Box<Fallback>>,
}

/// A step's availability check: `Err(why)` when it cannot ask now.
type Availability = dyn Fn() -> Result<(), String> + Send + Sync;

impl fmt::Debug for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fallback")
            .field("answerer", &self.answerer.is_some())
            .field("note", &self.note)
            .field("secrets", &self.secrets)
            .field("checked", &self.check.is_some())
            .field("next", &self.next)
            .finish()
    }
}

impl Default for Fallback {
    fn default() -> Self {
        Self::decline()
    }
}

impl Fallback {
    /// Ask nobody: the model is told at once that the client cannot show questions ([`NO_FORM`]).
    /// The default.
    #[must_use]
    pub fn decline() -> Self {
        Self {
            answerer: None,
            note: "nobody is asked and the result says so at once: continue without the answers, or ask in your reply"
                .to_owned(),
            secrets: false,
            check: None,
            next: None,
        }
    }

    /// Answer with the defaults ([`DefaultsResponder`]): the `(Recommended)` options, else the
    /// first, marked `"answered_by":"unattended"`.
    #[must_use]
    pub fn defaults() -> Self {
        Self::answerer(
            DefaultsResponder::new(),
            "the default options are picked without the person and marked \"answered_by\":\"unattended\"",
        )
    }

    /// Ask through `answerer` (a terminal, an answer server, a script). `note` completes the tool
    /// description's sentence "When this MCP client cannot show a form, …", e.g. "the questions
    /// are shown on the terminal where the server runs".
    #[must_use]
    pub fn answerer(answerer: impl Answerer + 'static, note: impl Into<String>) -> Self {
        Self::shared(Arc::new(answerer), note)
    }

    /// [`answerer`](Self::answerer) with an answerer already shared.
    #[must_use]
    pub fn shared(answerer: Arc<dyn Answerer>, note: impl Into<String>) -> Self {
        Self { answerer: Some(answerer), note: note.into(), secrets: false, check: None, next: None }
    }

    /// This step with a check made at every call before it is asked: `Err(why)` (e.g. "this
    /// process has no terminal (/dev/tty: …)") passes the call to the [next step](Self::or_else),
    /// or, at the end of the chain, to nobody, the model being told `why`.
    #[must_use]
    pub fn available_when(mut self, check: impl Fn() -> Result<(), String> + Send + Sync + 'static) -> Self {
        self.check = Some(Arc::new(check));
        self
    }

    /// This chain with `next` asked when no step before it is [available](Self::available_when).
    #[must_use]
    pub fn or_else(mut self, next: Fallback) -> Self {
        match self.next.take() {
            Some(rest) => self.next = Some(Box::new(rest.or_else(next))),
            None => self.next = Some(Box::new(next)),
        }
        self
    }

    /// The steps, first to last.
    fn steps(&self) -> impl Iterator<Item = &Fallback> {
        std::iter::successors(Some(self), |step| step.next.as_deref())
    }

    /// The tool description's words for the chain: each step's note, then what happens when it
    /// is not available.
    fn described(&self) -> String {
        let mut text = self.note.clone();
        let mut step = self;
        while step.check.is_some() {
            let Some(next) = step.next.as_deref() else {
                text.push_str("; when that is not available, nobody is asked and the result says so");
                break;
            };
            text.push_str("; when that is not available, ");
            text.push_str(&next.note);
            step = next;
        }
        text
    }

    /// The step that takes this call (a `secret` call only a step that takes secrets), checked
    /// now, and why each step before it could not; `None` when nobody can be asked.
    fn pick(&self, secret: bool) -> (Option<&Fallback>, Vec<String>) {
        let mut skipped = Vec::new();
        for step in self.steps() {
            if secret && !step.asks_secrets_itself() {
                // Only a step that reads secrets safely may take one; on to the next.
                if step.answerer.is_none() {
                    break;
                }
                continue;
            }
            match step.check.as_ref().map(|check| check()) {
                Some(Err(why)) => skipped.push(why),
                _ if step.answerer.is_none() => break,
                _ => return (Some(step), skipped),
            }
        }
        (None, skipped)
    }

    fn asks_secrets_itself(&self) -> bool {
        self.secrets && self.answerer.is_some()
    }

    /// Lets this answerer be asked secret questions (extended profile), which are never put in
    /// the MCP client's form (docs/contract.md §13): a batch with a secret question goes to it even when the
    /// client can show forms. Only for an answerer that reads the value safely (the terminal on
    /// `/dev/tty` with echo off) and hands it to a [`SecretSink`](askuser_core::SecretSink),
    /// answering with `secret_ref` alone. Default: false, and such a batch is declined at once.
    #[must_use]
    pub fn takes_secrets(mut self) -> Self {
        self.secrets = self.answerer.is_some();
        self
    }

    /// Whether a secret question goes to this fallback ([`takes_secrets`](Self::takes_secrets)):
    /// to a step of the chain that takes secrets.
    #[must_use]
    pub fn asks_secrets(&self) -> bool {
        self.steps().any(Fallback::asks_secrets_itself)
    }
}

/// An MCP server with one tool, `ask_user_question`.
///
/// Per call it picks the delivery the client negotiated:
///
/// | client | delivery |
/// | --- | --- |
/// | 2026-07-28 with form elicitation | an `InputRequiredResult` whose `requestState` is sealed (HMAC, per-process key), bound to the arguments, expiring, and good for one retry |
/// | 2025-11-25 with form elicitation | `elicitation/create` with titled single-select and multi-select arrays |
/// | 2025-06-18 with form elicitation | `elicitation/create` with string enums and one boolean per option |
/// | no form elicitation | the [`Fallback`] |
///
/// An answer that does not fit the questions is refused and the form shown again, naming the
/// problem, up to [`FORM_ROUNDS`] rounds; after that the model is told no answer fitted (never
/// that the person declined). A filled "Other" field is the answer, whatever the host preselected
/// beside it. Decline and cancel reach the model as declined.
///
/// ```
/// use std::time::Duration;
/// use askuser_mcp::{AskUserServer, Fallback};
///
/// let server = AskUserServer::builder()
///     .timeout(Duration::from_secs(600))
///     .fallback(Fallback::defaults())
///     .build();
/// assert!(server.tool().description.unwrap().contains("default options"));
/// ```
#[derive(Clone)]
pub struct AskUserServer {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) name: String,
    pub(crate) timeout: Option<Duration>,
    pub(crate) on_timeout: OnTimeout,
    pub(crate) fallback: Fallback,
    pub(crate) validator: Validator,
    codec: RequestStateCodec,
    pub(crate) state_ttl: Duration,
    pub(crate) workspace: Option<String>,
    /// The store every call is also put in (the answer server's inbox), when there is one.
    pub(crate) inbox: Option<Inbox>,
    /// The background tools, when enabled.
    pub(crate) later: Option<Later>,
    /// Races the client's form against another surface ([`AskUserServerBuilder::also`]).
    pub(crate) also: Option<Arc<AlsoHook>>,
    /// Nonces of states already redeemed, until their states expire.
    redeemed: Mutex<Redeemed>,
    /// The server's one progress ticker, which every waiting call listens to (see
    /// [`AskUserServer::heartbeat`]); `None` until a call asks for progress.
    heartbeat: Mutex<Option<watch::Receiver<u64>>>,
}

impl fmt::Debug for AskUserServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AskUserServer")
            .field("name", &self.inner.name)
            .field("timeout", &self.inner.timeout)
            .field("fallback", &self.inner.fallback)
            .finish_non_exhaustive()
    }
}

impl Default for AskUserServer {
    fn default() -> Self {
        Self::builder().build()
    }
}

/// Builds an [`AskUserServer`].
#[must_use]
pub struct AskUserServerBuilder {
    name: String,
    timeout: Option<Duration>,
    on_timeout: OnTimeout,
    fallback: Fallback,
    validator: Validator,
    codec: Option<RequestStateCodec>,
    state_ttl: Option<Duration>,
    workspace: Option<String>,
    inbox: Option<Inbox>,
    later: Option<LaterConfig>,
    also: Option<Arc<AlsoHook>>,
}

/// What [`AskUserServerBuilder::also`] is given: makes the answerer a call asks through from the
/// client's form.
pub(crate) type AlsoHook = dyn Fn(Arc<dyn Answerer>) -> Arc<dyn Answerer> + Send + Sync;

impl fmt::Debug for AskUserServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AskUserServerBuilder")
            .field("name", &self.name)
            .field("timeout", &self.timeout)
            .field("fallback", &self.fallback)
            .finish_non_exhaustive()
    }
}

impl AskUserServerBuilder {
    /// Where the server works (its working directory, `~/src/app`): each call's
    /// [`AskContext::asked_by`] is the client's name and version (from `initialize`'s
    /// `clientInfo`) and ` in WORKSPACE`, so that a fallback answerer shows the person who asks.
    /// Default: none (the client alone).
    pub fn workspace(mut self, workspace: impl Into<String>) -> Self {
        self.workspace = Some(workspace.into());
        self
    }

    /// The name shown to the person in the form's message and sent as the server's name.
    /// Default: `askuser`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// How long to wait for an answer; the model is then told nobody answered in time. The
    /// `elicitation/create` request itself is given 30 s more, so the wait, not an SDK's request
    /// timeout, decides. On 2026-07-28 the `requestState` expires after it. Default: none.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// What the model is told when the timeout runs out (or a 2026-07-28 form comes back after
    /// it). Default: [`OnTimeout::Decline`]; `askuser mcp` uses [`OnTimeout::Stop`].
    pub fn on_timeout(mut self, policy: OnTimeout) -> Self {
        self.on_timeout = policy;
        self
    }

    /// How often a call waiting for the person sends a progress notification, when the client gave
    /// a progress token.
    pub const PROGRESS_EVERY: Duration = Duration::from_secs(15);

    /// Who answers when the client cannot show a form. Default: [`Fallback::decline`].
    pub fn fallback(mut self, fallback: Fallback) -> Self {
        self.fallback = fallback;
        self
    }

    /// The validator for the tool's arguments (its argument-size cap, its profile). Default:
    /// [`Validator::new`]. Set the profile with [`profile`](Self::profile) after it.
    pub fn validator(mut self, validator: Validator) -> Self {
        self.validator = validator;
        self
    }

    /// The question profile (contract §10). Default: [`Profile::Reference`], multiple choice only.
    /// [`Profile::Extended`] adds text questions (string fields in the form), declared defaults
    /// (the fields' `default`), `allow_other: false` (no "Other" field), ids and the extended
    /// result (`{"status",…,"answers":[…]}`); a secret question is never put in the form: it goes
    /// to a fallback that [takes secrets](Fallback::takes_secrets), else the call is declined.
    pub fn profile(mut self, profile: Profile) -> Self {
        self.validator = self.validator.with_profile(profile);
        self
    }

    /// The key that seals 2026-07-28 `requestState` values, at least 32 bytes; give every replica
    /// of a server the same key. Default: 32 random bytes per process, so a state outlives
    /// neither the process nor a restart.
    ///
    /// # Errors
    ///
    /// The key is shorter than 32 bytes.
    pub fn state_key(mut self, key: impl Into<Vec<u8>>) -> Result<Self, RequestStateError> {
        self.codec = Some(RequestStateCodec::try_new(key)?);
        Ok(self)
    }

    /// How long a 2026-07-28 `requestState` stays valid. Default: the timeout, else
    /// [`DEFAULT_STATE_TTL`].
    pub fn state_ttl(mut self, ttl: Duration) -> Self {
        self.state_ttl = Some(ttl);
        self
    }

    /// Puts every call's questions in `store` too (the answer server's inbox: its page, its
    /// notices, its chat channels answer them there), as well as in the client's form when it
    /// declared form elicitation: the first answer wins, checked and committed by the store,
    /// and the other surface is retracted (the open `elicitation/create` is cancelled; an answer
    /// from the form settles the store's question). A form the person dismisses (`cancel`)
    /// leaves the question waiting in the store; a decline declines it. Without a form the
    /// store is where the person answers, instead of the [`Fallback`] (which still takes secret
    /// questions, never put in the store or a form). A 2026-07-28 client's form cannot be
    /// retracted: it comes back on the call's retry, and the store decides then (the form's
    /// answer, or the one given elsewhere first; after a dismissed form the retry waits for the
    /// other surfaces). Questions wait for the [`timeout`](Self::timeout), else an hour. Default:
    /// none.
    pub fn inbox(mut self, store: Arc<dyn PendingStore>) -> Self {
        self.inbox = Some(Inbox { store });
        self
    }

    /// Adds the background tools `ask_user_question_later` (the same arguments as
    /// `ask_user_question`; returns a ticket at once) and `get_user_answers` (a ticket and an
    /// optional `wait_seconds` of at most [`MAX_WAIT_SECONDS`](crate::MAX_WAIT_SECONDS)), their questions kept in `store`
    /// so that a ticket outlives the server process. `scope` names this server (e.g. its
    /// workspace): a ticket whose question was asked under another scope, or (over HTTP) in
    /// another MCP session, is refused. Default: off.
    pub fn background(mut self, store: Arc<dyn PendingStore>, scope: impl Into<String>) -> Self {
        self.later = Some(LaterConfig { store, scope: scope.into() });
        self
    }

    /// Shows the questions on another surface as well as in the client's form: at each call that
    /// has a form, `race` is given the form as an answerer and returns the answerer the call asks
    /// through (askuser-client's `Racing` of an answer server and the form: the first answer
    /// wins, the other surface is retracted). A dismissed form leaves the other surface to
    /// decide. Calls without a form go to the [`Fallback`] as before. Default: the form alone.
    pub fn also(
        mut self,
        race: impl Fn(Arc<dyn Answerer>) -> Arc<dyn Answerer> + Send + Sync + 'static,
    ) -> Self {
        self.also = Some(Arc::new(race));
        self
    }

    /// The server.
    #[must_use]
    pub fn build(mut self) -> AskUserServer {
        if let Some(timeout) = self.timeout {
            // A model may ask for any wait up to the server's own (extended `timeout_seconds`).
            let seconds = u32::try_from(timeout.as_secs().max(1)).unwrap_or(u32::MAX);
            self.validator = self.validator.with_max_timeout_seconds(seconds);
        }
        AskUserServer {
            inner: Arc::new(Inner {
                name: self.name,
                timeout: self.timeout,
                on_timeout: self.on_timeout,
                fallback: self.fallback,
                validator: self.validator,
                codec: self.codec.unwrap_or_else(random_codec),
                state_ttl: self.state_ttl.or(self.timeout).unwrap_or(DEFAULT_STATE_TTL),
                workspace: self.workspace,
                inbox: self.inbox,
                later: self.later.map(Later::new),
                also: self.also,
                redeemed: Mutex::new(Redeemed::default()),
                heartbeat: Mutex::new(None),
            }),
        }
    }
}

fn random_codec() -> RequestStateCodec {
    let mut key = vec![0; RequestStateCodec::MIN_KEY_LENGTH];
    random_bytes(&mut key);
    // The key has exactly the minimum length, which `try_new` accepts.
    RequestStateCodec::try_new(key)
        .unwrap_or_else(|_| unreachable!("a key of the minimum length is accepted"))
}

/// Fills `bytes` from the operating system's random source.
///
/// # Panics
///
/// When the operating system has no random source: a fixed key or nonce would let anyone forge
/// or replay a state, so there is no safe way on.
fn random_bytes(bytes: &mut [u8]) {
    if let Err(error) = getrandom::fill(bytes) {
        panic!("the operating system's random source failed: {error}");
    }
}

pub(crate) fn random_nonce() -> String {
    let mut bytes = [0u8; 16];
    random_bytes(&mut bytes);
    bytes.iter().fold(String::with_capacity(32), |mut hex, b| {
        use std::fmt::Write as _;
        let _ = write!(hex, "{b:02x}");
        hex
    })
}

/// The nonces of redeemed states, oldest first.
#[derive(Default)]
struct Redeemed {
    nonces: HashSet<String>,
    order: VecDeque<(Instant, String)>,
}

/// What a 2026-07-28 `requestState` carries (signed, readable by the client: nothing secret).
#[derive(Serialize, Deserialize)]
struct State {
    /// One-time nonce: a state is redeemed once.
    nonce: String,
    /// 1 for the first form, 2 for the one asked again after a misfit.
    attempt: u8,
    /// The question's id in the [inbox](AskUserServerBuilder::inbox), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    record: Option<String>,
}

impl AskUserServer {
    /// A builder: name `askuser`, no timeout, fallback [`Fallback::decline`], a random state key.
    pub fn builder() -> AskUserServerBuilder {
        AskUserServerBuilder {
            name: "askuser".to_owned(),
            timeout: None,
            on_timeout: OnTimeout::Decline,
            fallback: Fallback::decline(),
            validator: Validator::new(),
            codec: None,
            state_ttl: None,
            workspace: None,
            inbox: None,
            later: None,
            also: None,
        }
    }

    /// Who asks, for a call of this request's client: `NAME VERSION` of its `clientInfo` (its
    /// `title` when it has one), and ` in WORKSPACE`; `None` when neither is known.
    pub(crate) fn asked_by(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        // Per request on 2026-07-28 (its `_meta`), from `initialize` before.
        let client = context.client_info().map(|client| {
            let name = client.title.as_deref().filter(|t| !t.trim().is_empty()).unwrap_or(&client.name);
            if client.version.trim().is_empty() {
                name.to_owned()
            } else {
                format!("{name} {}", client.version)
            }
        });
        match (client.filter(|c| !c.trim().is_empty()), &self.inner.workspace) {
            (Some(client), Some(workspace)) => Some(format!("{client} in {workspace}")),
            (Some(client), None) => Some(client),
            (None, Some(workspace)) => Some(format!("an MCP client in {workspace}")),
            (None, None) => None,
        }
    }

    /// The tool as listed: `ask_user_question`, the generic parameters schema, a description that
    /// ends with what happens when the client cannot show a form.
    #[must_use]
    pub fn tool(&self) -> Tool {
        let fallback = &self.inner.fallback;
        let description = match self.profile() {
            Profile::Extended => {
                let secrets = if fallback.asks_secrets() {
                    format!(
                        "A secret question is never put in the MCP client's form: it is asked the way a question is when there is no form ({}).",
                        fallback.described()
                    )
                } else {
                    "A secret question is never put in the MCP client's form, and this server has no other safe way to ask for one: a call with a secret question is declined at once (status \"declined\", answered_by \"unattended\"); ask the person in your reply to provide the credential another way.".to_owned()
                };
                format!(
                    "{EXTENDED_DESCRIPTION} The questions are shown to the person as a form by the MCP client. When this MCP client cannot show a form, {}. {secrets}",
                    fallback.described()
                )
            }
            _ => format!(
                "{} The questions are shown to the person as a form by the MCP client. When this MCP client cannot show a form, {}.",
                description_for(self.inner.on_timeout),
                fallback.described()
            ),
        };
        let schema = match parameters_for(self.profile(), Dialect::Generic) {
            Value::Object(schema) => schema,
            _ => JsonObject::new(),
        };
        Tool::new(TOOL_NAME, description, Arc::new(schema)).with_annotations(
            ToolAnnotations::new().read_only(true).destructive(false).idempotent(false).open_world(false),
        )
    }

    /// Every tool listed: [`tool`](Self::tool), and the background tools when
    /// [enabled](AskUserServerBuilder::background).
    #[must_use]
    pub fn tools(&self) -> Vec<Tool> {
        let mut tools = vec![self.tool()];
        if self.inner.later.is_some() {
            tools.extend(crate::later::tools(self));
        }
        tools
    }

    /// The question profile calls are validated, asked and rendered by.
    #[must_use]
    pub fn profile(&self) -> Profile {
        self.inner.validator.profile()
    }

    /// How long a question waits in the inbox: the timeout, else [`INBOX_TIMEOUT`].
    pub(crate) fn inbox_timeout(&self) -> Duration {
        self.inner.timeout.unwrap_or(INBOX_TIMEOUT)
    }

    /// The client's form, for a call of this request's client.
    pub(crate) fn eliciting(
        &self,
        context: &RequestContext<RoleServer>,
        version: &ProtocolVersion,
    ) -> Eliciting {
        Eliciting {
            peer: context.peer.clone(),
            style: FormStyle::for_version(version),
            name: self.inner.name.clone(),
            request_timeout: self.inner.timeout.map(|t| t + REQUEST_TIMEOUT_MARGIN),
            dismissal_waits: false,
        }
    }

    /// The fallback step that takes a call now, with the note saying why the steps before it
    /// could not (when some could not); `Err(why each could not)` when nobody can be asked.
    pub(crate) fn fallback_step(&self, secret: bool) -> Result<Picked, Vec<String>> {
        let (step, skipped) = self.inner.fallback.pick(secret);
        match step.and_then(|step| Some((step, step.answerer.as_ref()?))) {
            Some((step, answerer)) => {
                let note = (!skipped.is_empty()).then(|| fell_through_note(&skipped, &step.note));
                Ok((Arc::clone(answerer), note))
            }
            None => Err(skipped),
        }
    }

    /// Handles one `tools/call` of `ask_user_question`.
    async fn ask(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if params.name != TOOL_NAME {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}: this server has only {TOOL_NAME}", params.name),
                None,
            ));
        }
        let mut params = params;
        // Moved, not cloned: the 2026-07-28 retry needs only the state and the responses.
        let arguments = Value::Object(params.arguments.take().unwrap_or_default());
        let version = context.protocol_version().unwrap_or(ProtocolVersion::V_2025_06_18);
        let can_form = context.client_capabilities().as_ref().is_some_and(supports_form);
        // Secrets never go into a form (contract §13): only the extended profile has them, so only
        // its calls are looked at before they are asked.
        let mut secret = false;
        if self.profile() == Profile::Extended {
            let questions = match self.inner.validator.validate_value(&arguments) {
                Ok(questions) => questions,
                Err(error) => return Ok(text_result(&error.retry_payload(), true).into()),
            };
            secret = questions.iter().any(|q| q.kind() == QuestionKind::Secret);
        }
        if can_form && !secret && !version.has_initialize() {
            return self.ask_by_input_required(&params, &arguments, &context).await;
        }
        let form =
            (can_form && !secret && version.has_initialize()).then(|| self.eliciting(&context, &version));
        // Which fallback step took the call after others could not, for the model (below).
        let mut fell_through = None;
        let answerer: Arc<dyn Answerer> = match (&self.inner.inbox, form) {
            (Some(inbox), form) if !secret => Arc::new(InboxAnswerer {
                store: Arc::clone(&inbox.store),
                form: form.map(Eliciting::dismissal_waits),
                timeout: self.inbox_timeout(),
            }),
            (_, Some(form)) => match &self.inner.also {
                Some(race) => race(Arc::new(form.dismissal_waits())),
                None => Arc::new(form),
            },
            _ => match self.fallback_step(secret) {
                Ok((answerer, note)) => {
                    fell_through = note;
                    answerer
                }
                Err(skipped) => {
                    return Ok(match self.inner.validator.validate_value(&arguments) {
                        Ok(questions) if self.profile() == Profile::Extended => unattended_decline(questions),
                        Ok(_) => text_result(&nobody_asked(&skipped), false),
                        Err(error) => text_result(&error.retry_payload(), true),
                    }
                    .into());
                }
            },
        };
        let mut builder = AskUser::builder()
            .shared_answerer(answerer)
            .profile(self.profile())
            .max_timeout(Duration::from_secs(u64::from(self.inner.validator.max_timeout_seconds())))
            .max_argument_bytes(self.inner.validator.max_argument_bytes())
            .on_timeout(self.inner.on_timeout);
        // With an inbox the capability's own timeout decides, so that its policy applies, not
        // the store answerer's.
        let timeout =
            if self.inner.inbox.is_some() { Some(self.inbox_timeout()) } else { self.inner.timeout };
        if let Some(timeout) = timeout {
            builder = builder.timeout(timeout);
        }
        let ask_user = builder.build().map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let call_id = request_id_text(&context);
        let call = ToolCall::new(&call_id, &arguments);
        let mut ask_context = AskContext::new().with_tool_call_id(call_id.clone());
        if let Some(label) = self.asked_by(&context) {
            ask_context = ask_context.with_asked_by(label);
        }
        let outcome = self.waiting(ask_user.call(call, ask_context), &context).await?;
        let mut result = outcome_result(outcome);
        if let Some(note) = fell_through {
            // A block of its own: the first stays exactly what the tool returns anywhere else.
            result.content.push(ContentBlock::text(note));
        }
        Ok(result.into())
    }

    /// `wait`'s output, with a progress notification every [`PROGRESS_EVERY`] meanwhile when
    /// the call carried a progress token: SDKs that reset their request timeout on progress (the
    /// TypeScript SDK's `resetTimeoutOnProgress`) then do not give up on a long answer. An error
    /// when the client cancels the call first.
    async fn waiting<F: Future>(
        &self,
        wait: F,
        context: &RequestContext<RoleServer>,
    ) -> Result<F::Output, ErrorData> {
        tokio::pin!(wait);
        let progress = context.meta.get_progress_token();
        let mut heartbeat = progress.as_ref().map(|_| self.heartbeat());
        let mut beats = 0_u32;
        loop {
            tokio::select! {
                output = &mut wait => return Ok(output),
                () = context.ct.cancelled() => {
                    return Err(ErrorData::internal_error("the client cancelled the call", None));
                }
                alive = next_beat(&mut heartbeat) => {
                    if !alive {
                        // The ticker's runtime is gone: no more heartbeats, the answer still counts.
                        heartbeat = None;
                        continue;
                    }
                    beats += 1;
                    if let Some(token) = &progress {
                        let note = ProgressNotificationParam::new(token.clone(), f64::from(beats))
                            .with_message("waiting for the person to answer");
                        // A lost heartbeat only costs the client's patience, never the answer.
                        // Boxed: inline, the sending future's room would make every call's future
                        // kilobytes larger, copied on every call, for a beat every 15 s.
                        let _ = Box::pin(context.peer.notify_progress(note)).await;
                    }
                }
            }
        }
    }

    /// A receiver of the server's progress ticker, started on first use: one timer per server,
    /// ticking every [`PROGRESS_EVERY`], instead of one per call. Arming a timer on every call
    /// costs a wake-up of the runtime's timer each time, which the round-trip bench measured at
    /// about 4.5 µs per MCP call. A call hears its first beat 0–15 s after it
    /// starts, then every 15 s. A ticker whose runtime has gone is started again.
    fn heartbeat(&self) -> watch::Receiver<u64> {
        let mut slot = self.inner.heartbeat.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(ticker) = slot.as_ref().filter(|ticker| ticker.has_changed().is_ok()) {
            let mut receiver = ticker.clone();
            receiver.mark_unchanged();
            return receiver;
        }
        let (beat, receiver) = watch::channel(0_u64);
        tokio::spawn(async move {
            let start = tokio::time::Instant::now() + PROGRESS_EVERY;
            let mut every = tokio::time::interval_at(start, PROGRESS_EVERY);
            loop {
                every.tick().await;
                // Ends once the server and every call that listened have let go.
                if beat.is_closed() {
                    break;
                }
                beat.send_modify(|n| *n += 1);
            }
        });
        *slot = Some(receiver.clone());
        receiver
    }

    /// The 2026-07-28 delivery: a first call gets an `InputRequiredResult`, the client's retry
    /// (same arguments, the sealed state, the form's result) completes the call.
    ///
    /// With an [inbox](AskUserServerBuilder::inbox) the first call also puts the questions in
    /// the store, where the page, notices and channels answer them, and the state names that
    /// question. That revision cannot retract the client's form, so the store decides at the
    /// retry: the form's answer (or decline) is committed there, and when another surface
    /// answered first, the call returns that answer instead. A dismissed form leaves the
    /// question to the other surfaces: the retry waits for their outcome.
    async fn ask_by_input_required(
        &self,
        params: &CallToolRequestParams,
        arguments: &Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let questions = match self.inner.validator.validate_value(arguments) {
            Ok(questions) => questions,
            Err(error) => return Ok(text_result(&error.retry_payload(), true).into()),
        };
        let request = AskUserRequest::new(questions);
        let bound = bound_to(&request);
        let inbox = self.inner.inbox.as_ref().map(|inbox| &*inbox.store);
        let Some(sealed) = params.request_state.as_deref() else {
            let mut record = None;
            if let Some(store) = inbox {
                // No lease: nobody waits between the two rounds; the question lives as long as
                // the state does.
                let mut question = NewQuestion::new(request.clone(), self.state_ttl_for(&request));
                if let Some(asked_by) = self.asked_by(context).as_deref().and_then(AskedBy::lossy) {
                    question = question.asked_by(asked_by);
                }
                // A store that cannot take it (an outage) still leaves the client's form.
                if store.put(question).await.is_ok() {
                    record = Some(request.id().to_owned());
                }
            }
            return Ok(self.input_required(&request, &bound, 1, None, record).into());
        };
        let state: State = match self.inner.codec.open_json_with(sealed, &bound) {
            Ok(state) => state,
            // The form was answered after the wait had ended: the same outcome, and the same
            // words, as a 2025 client's timeout (nobody answered in time), not a request to ask
            // again.
            Err(RequestStateError::Expired) => {
                let result = self
                    .inner
                    .on_timeout
                    .result(&request)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                return Ok(text_result(result.text(), false).into());
            }
            // One message for every other failure, as the codec asks: what failed is no
            // business of the client's.
            Err(_) => {
                return Err(ErrorData::invalid_params(
                    "requestState failed verification: it was altered, belongs to other arguments, or was issued by another server process",
                    None,
                ));
            }
        };
        let response = params
            .input_responses
            .as_ref()
            .and_then(|responses| responses.get(INPUT_KEY))
            .ok_or_else(|| {
                ErrorData::invalid_params(format!("the retry carries no inputResponses[{INPUT_KEY:?}]"), None)
            })?;
        let result: ElicitResult = serde_json::from_value(response.clone()).map_err(|e| {
            ErrorData::invalid_params(
                format!("inputResponses[{INPUT_KEY:?}] is not an elicitation result: {e}"),
                None,
            )
        })?;
        // Redeemed only now, so a malformed retry does not use the state up.
        self.redeem(&state.nonce)?;
        let raced = inbox.zip(state.record.as_deref());
        let response = match result.action {
            ElicitationAction::Accept => {
                match form::read_answer(&request, FormStyle::Titled2025, result.content.as_ref()) {
                    Ok(response) => response,
                    Err(misfit) if state.attempt < FORM_ROUNDS => {
                        // Answered elsewhere meanwhile: that answer, not the form again.
                        if let Some((store, id)) = raced
                            && let Ok(Some(record)) = store.get(id).await
                            && !is_pending(&record)
                        {
                            return Ok(self.settled_result(&record).into());
                        }
                        let record = state.record.clone();
                        return Ok(self
                            .input_required(&request, &bound, state.attempt + 1, Some(&misfit.0), record)
                            .into());
                    }
                    Err(misfit) => {
                        // As on 2025: the model is told, and nobody is left answering a
                        // question no call waits for.
                        if let Some((store, id)) = raced {
                            let _withdrawn = store.cancel(id).await;
                        }
                        return Ok(text_result(&misfits(&misfit.0), true).into());
                    }
                }
            }
            // Dismissed: with an inbox the other surfaces go on, and the retry waits for them.
            ElicitationAction::Cancel if let Some((store, id)) = raced => {
                return self.await_settled(store, id, context).await.map(Into::into);
            }
            _ => AskUserResponse::declined(),
        };
        let Some((store, id)) = raced else { return Ok(rendered(&request, &response).into()) };
        match commit(store, id, &response).await {
            // Committed, or settled first by another surface, whose outcome is the call's.
            Ok(record) => Ok(self.settled_result(&record).into()),
            // The store failed (an outage), not the answer: the person did answer.
            Err(_) => Ok(rendered(&request, &response).into()),
        }
    }

    /// Waits for the inbox question `id` to settle, until its deadline; the call's result.
    async fn await_settled(
        &self,
        store: &dyn PendingStore,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let record = store.get(id).await.map_err(|e| store_failed(&e))?;
        let Some(record) = record else {
            return Err(ErrorData::internal_error(format!("the inbox lost question {id:?}"), None));
        };
        let left = Timestamp::now().until(record.expires_at());
        let settling = async {
            tokio::select! {
                settled = store.watch(id) => settled,
                () = tokio::time::sleep(left) => store.expire(id).await,
            }
        };
        let settled = match self.waiting(settling, context).await {
            Ok(settled) => settled,
            Err(cancelled) => {
                // Nobody will read an answer now: the other surfaces stop asking.
                let _withdrawn = store.cancel(id).await;
                return Err(cancelled);
            }
        };
        let record = match settled {
            Ok(record) => record,
            Err(StoreError::Closed { record } | StoreError::Conflict { first: record }) => *record,
            Err(e) => return Err(store_failed(&e)),
        };
        Ok(self.settled_result(&record))
    }

    /// What the call returns for a question settled in the store: what `ask_user_question`
    /// returns for an answer, a decline or a timeout given anywhere.
    pub(crate) fn settled_result(&self, record: &PendingRecord) -> CallToolResult {
        match (record.state(), record.response()) {
            (PendingState::Answered | PendingState::Declined, Some(response)) => {
                rendered(record.request(), response)
            }
            (PendingState::TimedOut, _) => match self.inner.on_timeout.result(record.request()) {
                Ok(result) => text_result(result.text(), false),
                Err(error) => {
                    text_result(&format!("the timeout's answer did not fit the questions: {error}"), true)
                }
            },
            (state, _) => text_result(
                &format!(
                    "The questions were {state} before anyone answered them: nobody will. Continue without the answers, or ask again if you still need them."
                ),
                false,
            ),
        }
    }

    /// How long a 2026-07-28 state (and its inbox question) lives: the state's TTL, or the
    /// model's own `timeout_seconds` (extended profile) when shorter.
    fn state_ttl_for(&self, request: &AskUserRequest) -> Duration {
        request
            .questions()
            .timeout_seconds()
            .map_or(self.inner.state_ttl, |s| self.inner.state_ttl.min(Duration::from_secs(u64::from(s))))
    }

    fn input_required(
        &self,
        request: &AskUserRequest,
        bound: &[u8],
        attempt: u8,
        problem: Option<&str>,
        record: Option<String>,
    ) -> InputRequiredResult {
        let state = State { nonce: random_nonce(), attempt, record };
        let options = SealOptions::new().associated_data(bound).ttl(self.state_ttl_for(request));
        // A struct of strings and a number always serialises.
        let sealed = self.inner.codec.seal_json_with(&state, &options).unwrap_or_default();
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: form::message(&self.inner.name, problem),
            requested_schema: form::schema(request, FormStyle::Titled2025),
        };
        let mut requests = InputRequests::new();
        requests.insert(INPUT_KEY.to_owned(), InputRequest::Elicitation(ElicitRequest::new(params)));
        InputRequiredResult::new(Some(requests), Some(sealed))
    }

    /// Marks a state's nonce as used.
    fn redeem(&self, nonce: &str) -> Result<(), ErrorData> {
        let now = Instant::now();
        let mut redeemed = self.inner.redeemed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // Every state lives for the same TTL, so redemption order is expiry order: forgetting
        // from the front is enough, and a nonce is forgotten only once the codec refuses its
        // state anyway.
        while redeemed.order.front().is_some_and(|(forget_at, _)| *forget_at <= now) {
            if let Some((_, old)) = redeemed.order.pop_front() {
                redeemed.nonces.remove(&old);
            }
        }
        if !redeemed.nonces.insert(nonce.to_owned()) {
            return Err(ErrorData::invalid_params(
                "requestState was already used: each form answer completes the call once",
                None,
            ));
        }
        redeemed.order.push_back((now + self.inner.state_ttl, nonce.to_owned()));
        Ok(())
    }
}

pub(crate) fn store_failed(error: &StoreError) -> ErrorData {
    ErrorData::internal_error(format!("the pending-question store failed: {error}"), None)
}

/// The bytes a state is bound to: the tool and its validated arguments, so a state cannot be
/// replayed against other questions.
fn bound_to(request: &AskUserRequest) -> Vec<u8> {
    let mut bound = format!("{TOOL_NAME}\0").into_bytes();
    // Serialising validated questions into memory cannot fail.
    bound.extend(serde_json::to_vec(request.questions().as_slice()).unwrap_or_default());
    bound
}

pub(crate) fn supports_form(capabilities: &ClientCapabilities) -> bool {
    // `elicitation: {}` means form only (2025-11-25); `form` may also be named explicitly.
    capabilities.elicitation.as_ref().is_some_and(|e| e.form.is_some() || e.url.is_none())
}

fn request_id_text(context: &RequestContext<RoleServer>) -> String {
    match &context.id {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.to_string(),
    }
}

pub(crate) fn text_result(text: &str, is_error: bool) -> CallToolResult {
    let content = vec![ContentBlock::text(text)];
    if is_error { CallToolResult::error(content) } else { CallToolResult::success(content) }
}

/// What [`DESCRIPTION`] says of a timeout.
const ON_TIMEOUT_GUESS: &str = "If the person declines, or nobody answers in time, the result is a plain sentence saying so: carry on, make a reasonable choice and say which one you made.";

/// [`DESCRIPTION`] as the timeout policy has it: under [`OnTimeout::Stop`] the result of a
/// timeout says not to guess, so the description does not say to (issue 36.20: it always said
/// "make a reasonable choice").
fn description_for(policy: OnTimeout) -> String {
    match policy {
        OnTimeout::Stop => DESCRIPTION.replace(
            ON_TIMEOUT_GUESS,
            "If the person declines, the result is a plain sentence saying so: carry on, make a reasonable choice and say which one you made. If nobody answers in time, the result says so: do not guess the answers; finish only the work that does not depend on them, then stop and say what you need to know to go on.",
        ),
        _ => DESCRIPTION.to_owned(),
    }
}

/// The most characters of a text that came from elsewhere (a host's error, a cause) relayed to
/// the model: a 3,000,000-character typed answer came back as a 6,000,504-character error in the
/// model's context (issue 36.16).
pub(crate) const MAX_RELAYED_CHARS: usize = 1_000;

/// `text`, cut to [`MAX_RELAYED_CHARS`] with a note of how much was left out.
pub(crate) fn capped(text: &str) -> String {
    match text.char_indices().nth(MAX_RELAYED_CHARS) {
        None => text.to_owned(),
        Some((at, _)) => {
            let left_out = text[at..].chars().count();
            format!("{}… ({left_out} more characters left out)", &text[..at])
        }
    }
}

/// What the model is told when nobody could be asked: [`NO_FORM`], then why each fallback that
/// was tried could not ask.
pub(crate) fn nobody_asked(skipped: &[String]) -> String {
    if skipped.is_empty() {
        return NO_FORM.to_owned();
    }
    format!("{NO_FORM} (The fallbacks could not ask either: {}.)", skipped.join("; "))
}

/// What the model is told when a fallback step took a call because the steps before it could
/// not: which surface the person was asked on, and why not on the others.
fn fell_through_note(skipped: &[String], note: &str) -> String {
    format!("(How this was asked: {}; so {note}.)", skipped.join("; "))
}

/// A call nobody was asked (no form and no fallback, or a secret with nowhere safe to ask it), in
/// the extended profile: `{"status":"declined","answered_by":"unattended","answers":[]}`.
pub(crate) fn unattended_decline(questions: Questions) -> CallToolResult {
    let request = AskUserRequest::new(questions);
    rendered(&request, &AskUserResponse::declined().with_answered_by(AnsweredBy::Unattended))
}

pub(crate) fn rendered(request: &AskUserRequest, response: &AskUserResponse) -> CallToolResult {
    match ask_user_result(request, response) {
        Ok(result) => text_result(result.text(), false),
        Err(error) => text_result(&format!("the answer did not fit the questions: {error}"), true),
    }
}

fn outcome_result(outcome: CallOutcome) -> CallToolResult {
    match outcome {
        CallOutcome::Completed(result) => text_result(result.text(), false),
        CallOutcome::Retry(retry) => text_result(retry.text(), true),
        CallOutcome::Failed(error) if error.is_interrupted() => {
            text_result("The person interrupted: stop and wait for their instructions.", true)
        }
        CallOutcome::Failed(error) => {
            text_result(&format!("{TOOL_NAME} failed: {}", capped(&with_causes(&error))), true)
        }
        other => text_result(&format!("{TOOL_NAME} failed: unexpected outcome {other:?}"), true),
    }
}

/// The next heartbeat: true at a beat, false once the ticker has stopped; never, without one.
async fn next_beat(heartbeat: &mut Option<watch::Receiver<u64>>) -> bool {
    match heartbeat {
        Some(receiver) => receiver.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}

/// Asks through the client's `elicitation/create` (2025-06-18 and 2025-11-25).
pub(crate) struct Eliciting {
    peer: Peer<RoleServer>,
    style: FormStyle,
    name: String,
    request_timeout: Option<Duration>,
    /// Whether a dismissed form (`cancel`) fails this answerer instead of declining, so that the
    /// questions wait on elsewhere (the inbox).
    dismissal_waits: bool,
}

impl Eliciting {
    /// This form, a dismissal leaving the questions to the other surfaces.
    pub(crate) fn dismissal_waits(mut self) -> Self {
        self.dismissal_waits = true;
        self
    }
}

#[askuser_core::async_trait]
impl Answerer for Eliciting {
    async fn answer(
        &self,
        request: AskUserRequest,
        _context: AskContext,
    ) -> Result<AskUserResponse, AnswerError> {
        let mut problem: Option<String> = None;
        for _round in 0..FORM_ROUNDS {
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: form::message(&self.name, problem.as_deref()),
                requested_schema: form::schema(&request, self.style),
            };
            let result = match elicit(&self.peer, params, self.request_timeout).await {
                Ok(result) => result,
                // The host answered the form with an error: its own check of what the person
                // typed failed (pydantic-ai's, for an answer past `maxLength`, quoting it twice).
                // A misfit: the form is shown again, saying so in a few words (issue 36.16).
                Err(ServiceError::McpError(error)) => {
                    problem = Some(capped(&format!("the form came back with an error: {}", error.message)));
                    continue;
                }
                Err(e) => {
                    return Err(AnswerError::failed("the client's elicitation/create failed").with_source(e));
                }
            };
            if result.action == ElicitationAction::Cancel && self.dismissal_waits {
                return Err(AnswerError::failed("the person dismissed the form"));
            }
            if result.action != ElicitationAction::Accept {
                return Ok(AskUserResponse::declined());
            }
            match form::read_answer(&request, self.style, result.content.as_ref()) {
                Ok(response) => return Ok(response),
                Err(misfit) => problem = Some(misfit.0),
            }
        }
        Err(AnswerError::retry(misfits(&problem.unwrap_or_default())))
    }
}

/// Sends `elicitation/create` and waits for the client's answer. However the wait ends before the
/// answer (the server's timeout, the client cancelling the call, the call dropped), the client is
/// sent `notifications/cancelled` for the request, so it closes the form instead of leaving the
/// person answering into the void.
async fn elicit(
    peer: &Peer<RoleServer>,
    params: ElicitRequestParams,
    timeout: Option<Duration>,
) -> Result<ElicitResult, ServiceError> {
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
    let mut options = PeerRequestOptions::no_options();
    options.timeout = timeout;
    let handle = peer.send_request_with_option(request, options).await?;
    let mut open = OpenRequest { peer: Some(peer.clone()), id: handle.id.clone() };
    // rmcp's own request timeout sends its cancellation itself.
    let response = handle.await_response().await;
    open.peer = None;
    match response? {
        ClientResult::ElicitResult(result) => Ok(result),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// An `elicitation/create` still waiting for its answer; dropped while waiting, it cancels the
/// request on the client.
struct OpenRequest {
    peer: Option<Peer<RoleServer>>,
    id: RequestId,
}

impl Drop for OpenRequest {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let params = CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("askuser stopped waiting for this answer".to_owned()),
        );
        // The notification leaves on the peer's own sender; a closed connection has no form open.
        runtime.spawn(async move {
            let _ = peer.notify_cancelled(params).await;
        });
    }
}

impl ServerHandler for AskUserServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("askuser-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(match self.profile() {
                Profile::Extended => EXTENDED_INSTRUCTIONS,
                _ => INSTRUCTIONS,
            })
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().into_iter().find(|tool| tool.name == name)
    }

    /// Sends the client a `ping` first (2025 revisions; 2026-07-28 has no `initialize`). rmcp
    /// numbers a connection's requests from 0, and the TypeScript SDK ignores a
    /// `notifications/cancelled` whose request id is 0 (it tests the id for truth): the ping takes
    /// id 0, so that every form this server opens can be closed (`elicit`).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut options = PeerRequestOptions::no_options();
        options.timeout = Some(PING_PATIENCE);
        // Queued now, before any call's form; its answer is awaited on the side.
        if let Ok(ping) = context
            .peer
            .send_request_with_option(ServerRequest::PingRequest(PingRequest::default()), options)
            .await
        {
            tokio::spawn(async move {
                let _ = ping.await_response().await;
            });
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match request.name.as_ref() {
            LATER_TOOL if self.inner.later.is_some() => self.ask_later(request, context).await,
            ANSWERS_TOOL if self.inner.later.is_some() => self.get_answers(request, context).await,
            _ => self.ask(request, context).await,
        }
    }
}
