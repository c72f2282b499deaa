//! [`AskUserServerBuilder`]: the server's settings, each with its default.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use askuser_core::{Answerer, Profile, Validator};
use askuser_store::PendingStore;
use askuser_tool::OnTimeout;
use rmcp::model::{RequestStateCodec, RequestStateError};

use crate::fallback::Fallback;
use crate::inbox::Inbox;
use crate::progress::Heartbeat;
use crate::sealed::{Redeemed, random_codec};
use crate::server::{AlsoHook, AskUserServer, Inner};
use crate::tickets::{Later, LaterConfig, MAX_OPEN_TICKETS};

/// How long a 2026-07-28 `requestState` stays valid when no timeout is set.
pub const DEFAULT_STATE_TTL: Duration = Duration::from_hours(1);

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
    max_open_tickets: usize,
    also: Option<Arc<AlsoHook>>,
}

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
    /// [`AskContext::asked_by`](askuser_core::AskContext::asked_by) is the client's name and version (from `initialize`'s
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
        let instance = format!("{} {}", self.name, crate::sealed::random_nonce());
        self.inbox = Some(Inbox { store, instance, told: Arc::default() });
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

    /// The most [background](Self::background) tickets open at once in one scope (and over HTTP
    /// one MCP session), at least 1; past it `ask_user_question_later` asks nobody and tells the
    /// model to wait for an earlier ticket's answers first. `usize::MAX` sets no cap (and counts
    /// nothing). Default: [`MAX_OPEN_TICKETS`].
    pub fn max_open_tickets(mut self, max: usize) -> Self {
        self.max_open_tickets = max.max(1);
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
                later: self.later.map(|config| Later::new(config, self.max_open_tickets)),
                also: self.also,
                redeemed: Mutex::new(Redeemed::default()),
                heartbeat: Heartbeat::default(),
            }),
        }
    }
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
            max_open_tickets: MAX_OPEN_TICKETS,
            also: None,
        }
    }
}
