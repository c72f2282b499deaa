//! The MCP server: `ask_user_question` as a tool, asked through the client's form elicitation in
//! the shape of the negotiated revision, with a fallback for clients that cannot show a form.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use askuser_core::{Answerer, Profile, Validator};
use askuser_store::{ListQuery, PendingRecord, State as PendingState};
use askuser_tool::OnTimeout;
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ProtocolVersion, RequestStateCodec};
use rmcp::service::{RequestContext, RoleServer};

use crate::eliciting::{Eliciting, REQUEST_TIMEOUT_MARGIN};
use crate::fallback::{Fallback, Picked};
use crate::form::FormStyle;
use crate::inbox::Inbox;
use crate::progress::Heartbeat;
use crate::render::{rendered, text_result};
use crate::sealed::Redeemed;
use crate::tickets::{Later, session_of};

/// How long a question waits in an [inbox](crate::AskUserServerBuilder::inbox) or as a background ask
/// when the server has no timeout: an hour.
pub const INBOX_TIMEOUT: Duration = Duration::from_hours(1);

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
/// problem, up to [`FORM_ROUNDS`](crate::FORM_ROUNDS) rounds; after that the model is told no answer fitted (never
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
    pub(crate) codec: RequestStateCodec,
    pub(crate) state_ttl: Duration,
    pub(crate) workspace: Option<String>,
    /// The store every call is also put in (the answer server's inbox), when there is one.
    pub(crate) inbox: Option<Inbox>,
    /// The background tools, when enabled.
    pub(crate) later: Option<Later>,
    /// Races the client's form against another surface ([`AskUserServerBuilder::also`](crate::AskUserServerBuilder::also)).
    pub(crate) also: Option<Arc<AlsoHook>>,
    /// Nonces of states already redeemed, until their states expire.
    pub(crate) redeemed: Mutex<Redeemed>,
    /// The server's one progress ticker, which every waiting call listens to.
    pub(crate) heartbeat: Heartbeat,
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

/// What [`AskUserServerBuilder::also`](crate::AskUserServerBuilder::also) is given: makes the answerer a call asks through from the
/// client's form.
pub(crate) type AlsoHook = dyn Fn(Arc<dyn Answerer>) -> Arc<dyn Answerer> + Send + Sync;

impl AskUserServer {
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
        Eliciting::new(
            context.peer.clone(),
            FormStyle::for_version(version),
            self.inner.name.clone(),
            self.inner.timeout.map(|t| t + REQUEST_TIMEOUT_MARGIN),
        )
    }

    /// The fallback step that takes a call now, with the note saying why the steps before it
    /// could not (when some could not); `Err(why each could not)` when nobody can be asked.
    pub(crate) fn fallback_step(&self, secret: bool) -> Result<Picked, Vec<String>> {
        self.inner.fallback.step(secret)
    }

    /// `wait`'s output, with a progress notification every [`PROGRESS_EVERY`](crate::PROGRESS_EVERY)
    /// meanwhile when the call carried a progress token; an error when the client cancels the
    /// call first ([`Heartbeat::waiting`]).
    pub(crate) async fn waiting<F: Future>(
        &self,
        wait: F,
        context: &RequestContext<RoleServer>,
    ) -> Result<F::Output, ErrorData> {
        self.inner.heartbeat.waiting(wait, context).await
    }

    /// The session an inline question of this request waits under in the inbox: this server
    /// process's, and over HTTP the MCP session's. `None` without an inbox, and for a stateless
    /// call (2026-07-28: no session to tell a late answer to).
    pub(crate) fn inbox_session(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        let inbox = self.inner.inbox.as_ref()?;
        if context.protocol_version().is_some_and(|version| !version.has_initialize()) {
            return None;
        }
        Some(match session_of(context) {
            Some(session) => format!("{} session {session}", inbox.instance),
            None => inbox.instance.clone(),
        })
    }

    /// The late answers to this session's earlier questions (answered after the model was told
    /// nobody answered in time), each told once, as notes for the next tool result: the model can
    /// correct course. Nothing when the store cannot be read just now: they are told next time.
    pub(crate) async fn late_notes(&self, context: &RequestContext<RoleServer>) -> Vec<String> {
        let (Some(inbox), Some(session)) = (&self.inner.inbox, self.inbox_session(context)) else {
            return Vec::new();
        };
        let query = ListQuery::new().session_id(session).state(PendingState::Late).newest_first().limit(20);
        let Ok(page) = inbox.store.list(&query).await else { return Vec::new() };
        let mut told = inbox.told.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if told.len() > Inbox::MAX_TOLD {
            told.clear();
        }
        page.records
            .iter()
            .rev()
            .filter(|record| told.insert(record.id().to_owned()))
            .filter_map(|record| {
                let result = askuser_core::ask_user_result(record.request(), record.response()?).ok()?;
                let asked: Vec<String> =
                    record.request().questions().iter().map(|q| format!("\"{}\"", q.question())).collect();
                Some(format!(
                    "Meanwhile the person answered your earlier question{} {} (asked at {}), after you were told nobody answered in time: {} If you went on without it, correct course where it matters.",
                    if asked.len() == 1 { "" } else { "s" },
                    asked.join(", "),
                    record.asked_at(),
                    result.text()
                ))
            })
            .collect()
    }

    /// What the call returns for a question settled in the store: what `ask_user_question`
    /// returns for an answer, a decline or a timeout given anywhere.
    pub(crate) fn settled_result(&self, record: &PendingRecord) -> CallToolResult {
        match (record.state(), record.response()) {
            (PendingState::Answered | PendingState::Declined, Some(response)) => {
                rendered(record.request(), response)
            }
            // After its deadline: said as late, so that the model can correct course if it went on.
            (PendingState::Late, Some(response)) => {
                match askuser_core::ask_user_result(record.request(), response) {
                    Ok(result) => text_result(&late_note(result.text()), false),
                    Err(error) => {
                        text_result(&format!("the late answer did not fit the questions: {error}"), true)
                    }
                }
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
}

/// A late answer's result: the answer, said to have come after the deadline.
fn late_note(answer: &str) -> String {
    format!(
        "The person answered after the deadline (you were told nobody answered in time): {answer} If you went on without it, correct course where it matters."
    )
}
