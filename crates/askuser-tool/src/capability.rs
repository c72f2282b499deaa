//! The `AskUser` capability: one value that registers the tool and handles its calls.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, LazyLock};
use std::task::Poll;
use std::time::Duration;

use askuser_core::{
    AnswerError, AnswerErrorKind, AnsweredBy, Answerer, AskContext, AskUserRequest, AskUserResponse,
    AskUserResult, Deadline, DefaultsResponder, Outcome, Profile, ResponseError, Timestamp, Validator,
};

use crate::call::ToolCall;
use crate::definition::{EXTENDED_INSTRUCTIONS, INSTRUCTIONS, TOOL_NAME, ToolDefinition};
use crate::error::{BuildError, CallError, RebuildError};
use crate::event::{AnsweredEvent, AskUserEvent, CallInfo, Listener, NudgeEvent, RequestedEvent};
use crate::outcome::{CallOutcome, Retry};
use crate::pending::PendingQuestion;
use crate::schema::Dialect;

/// The default capability id.
pub const DEFAULT_ID: &str = "ask_user";

/// What the model is told when the answerer runs past the timeout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OnTimeout {
    /// Tell the model nobody answered in time ([`askuser_core::TIMED_OUT`]). The default.
    #[default]
    Decline,
    /// Answer with the defaults ([`DefaultsResponder`]), rendered with `"answered_by":"timeout"`
    /// so the model knows no person chose them.
    ApplyDefaults,
    /// Tell the model not to guess ([`askuser_core::TIMED_OUT_STOP`]): finish only what does not
    /// depend on the answers, then stop and say what it needs. `askuser mcp`'s default. In the
    /// extended profile the result is data, as under `Decline`.
    Stop,
}

impl OnTimeout {
    /// The result the model gets for `request` when nobody answered in time under this policy.
    ///
    /// # Errors
    ///
    /// Under `ApplyDefaults`, the defaults do not fit `request` (a bug).
    pub fn result(self, request: &AskUserRequest) -> Result<AskUserResult, ResponseError> {
        match self {
            Self::Decline => Ok(AskUserResult::timed_out_for(request)),
            Self::Stop => {
                Ok(AskUserResult::timed_out_for(request).with_sentence(askuser_core::TIMED_OUT_STOP))
            }
            Self::ApplyDefaults => askuser_core::ask_user_result(
                request,
                &DefaultsResponder::respond(request, AnsweredBy::Timeout),
            ),
        }
    }
}

/// Lets the model ask the person multiple-choice questions: registers `ask_user_question` and
/// handles its calls.
///
/// Built with [`AskUser::builder`]. Cheap to clone: clones share the answerer, listeners and
/// sequential gate. With an answerer, [`call`](Self::call) waits for it inline; without one every
/// call is [deferred](CallOutcome::Deferred).
///
/// ```
/// use askuser_core::{AnswerError, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse};
/// use askuser_tool::{AskUser, CallOutcome, ToolCall};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let first = |request: AskUserRequest, _: AskContext| async move {
///     let answers = request
///         .questions()
///         .iter()
///         .map(|q| AskUserAnswer::picked(q.header(), [q.options()[0].label()]))
///         .collect();
///     Ok::<_, AnswerError>(AskUserResponse::answered(answers))
/// };
/// let ask_user = AskUser::builder().answerer(first).build()?;
///
/// let args = r#"{"questions":[{"header":"Plan","question":"Which plan?",
///     "options":[{"label":"Small"},{"label":"Large"}]}]}"#;
/// let call = ToolCall::new("call_1", args);
/// let rt = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
/// let outcome = rt.block_on(ask_user.call(call, AskContext::new()));
/// assert_eq!(outcome.model_text(), Some(r#"{"Plan":["Small"]}"#));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct AskUser {
    config: Arc<Config>,
    tool_name: String,
}

struct Config {
    id: String,
    answerer: Option<Arc<dyn Answerer>>,
    timeout: Option<Duration>,
    on_timeout: OnTimeout,
    sequential: bool,
    gate: tokio::sync::Mutex<()>,
    validator: Validator,
    listeners: Vec<Arc<dyn Listener>>,
    include_content: bool,
    /// The host's wording of a declined result; `None` is [`askuser_core::DECLINED`].
    declined_text: Option<String>,
    /// The host's wording of a timed-out result; `None` is [`askuser_core::TIMED_OUT`].
    timed_out_text: Option<String>,
}

fn same_arc<T: ?Sized>(a: &Arc<T>, b: &Arc<T>) -> bool {
    // Compare data pointers only: vtable pointers of one value may differ between codegen units.
    std::ptr::eq(Arc::as_ptr(a).cast::<()>(), Arc::as_ptr(b).cast::<()>())
}

impl Config {
    /// The configuration fields that differ, by name.
    fn differences(&self, other: &Self) -> Vec<&'static str> {
        let mut fields = Vec::new();
        let answerer_same = match (&self.answerer, &other.answerer) {
            (Some(a), Some(b)) => same_arc(a, b),
            (None, None) => true,
            _ => false,
        };
        if !answerer_same {
            fields.push("answerer");
        }
        if self.timeout != other.timeout {
            fields.push("timeout");
        }
        if self.on_timeout != other.on_timeout {
            fields.push("on_timeout");
        }
        if self.sequential != other.sequential {
            fields.push("sequential");
        }
        if self.validator.profile() != other.validator.profile() {
            fields.push("profile");
        }
        if self.validator.max_timeout_seconds() != other.validator.max_timeout_seconds() {
            fields.push("max_timeout");
        }
        if self.validator.max_argument_bytes() != other.validator.max_argument_bytes() {
            fields.push("max_argument_bytes");
        }
        let listeners_same = self.listeners.len() == other.listeners.len()
            && self.listeners.iter().zip(&other.listeners).all(|(a, b)| same_arc(a, b));
        if !listeners_same {
            fields.push("listeners");
        }
        if self.include_content != other.include_content {
            fields.push("include_content");
        }
        if self.declined_text != other.declined_text {
            fields.push("declined_text");
        }
        if self.timed_out_text != other.timed_out_text {
            fields.push("timed_out_text");
        }
        fields
    }
}

impl AskUser {
    /// A builder with every default: no answerer (deferred), no timeout, id `ask_user`.
    pub fn builder() -> AskUserBuilder {
        AskUserBuilder::default()
    }

    /// The capability id (default `ask_user`).
    #[must_use]
    pub fn id(&self) -> &str {
        &self.config.id
    }

    /// The tool name this capability answers to: `ask_user_question`, or a prefixed name when it
    /// came out of a [`ToolSet`](crate::ToolSet) with a prefix.
    #[must_use]
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// Whether calls are deferred (there is no answerer).
    #[must_use]
    pub fn is_deferred(&self) -> bool {
        self.config.answerer.is_none()
    }

    /// The tool definition of the capability's profile, with the parameters schema in `dialect`.
    #[must_use]
    pub fn definition(&self, dialect: Dialect) -> ToolDefinition {
        let mut definition = ToolDefinition::named(&self.tool_name, self.profile(), dialect);
        crate::schema::set_timeout_maximum(
            &mut definition.parameters,
            self.config.validator.max_timeout_seconds(),
        );
        definition
    }

    /// The one static instruction to add to the system prompt: [`INSTRUCTIONS`], or
    /// [`EXTENDED_INSTRUCTIONS`] in the extended profile.
    #[must_use]
    pub fn instructions(&self) -> &'static str {
        match self.profile() {
            Profile::Extended => EXTENDED_INSTRUCTIONS,
            _ => INSTRUCTIONS,
        }
    }

    /// The profile calls are validated, checked and rendered by (default: the reference).
    #[must_use]
    pub fn profile(&self) -> Profile {
        self.config.validator.profile()
    }

    pub(crate) fn with_tool_name(self, tool_name: String) -> Self {
        Self { tool_name, ..self }
    }

    /// The configuration fields in which `self` and `other` differ (the answerer and listeners
    /// compared by identity). Empty means the two are the same capability stated twice.
    pub(crate) fn differences(&self, other: &Self) -> Vec<&'static str> {
        // One shared configuration can still sit under two tool names (`include` and
        // `include_prefixed` of one capability), so the names are compared either way.
        let mut fields = if Arc::ptr_eq(&self.config, &other.config) {
            Vec::new()
        } else {
            self.config.differences(&other.config)
        };
        if self.tool_name != other.tool_name {
            fields.push("tool_name");
        }
        fields
    }

    /// Rebuilds a deferred call's [`PendingQuestion`] from the tool call, with this capability's
    /// tool name and argument-size cap. Its request id is the call id.
    ///
    /// # Errors
    ///
    /// The call names another tool, or its arguments do not validate.
    pub fn rebuild(&self, call: ToolCall<'_>) -> Result<PendingQuestion, RebuildError> {
        PendingQuestion::rebuild(call, &self.tool_name, self.config.validator)
    }

    /// Handles one tool call, start to finish.
    ///
    /// Inline (an answerer is set): validate → build the request (random id) → wait for the
    /// sequential gate if `sequential` → emit `Requested` → await the answerer under the timeout →
    /// emit `Answered` → check the response → render. On a timeout the answerer's future is
    /// dropped before `Answered` fires.
    ///
    /// Deferred (no answerer): validate → build the request with the call id as its id → emit
    /// `Requested` → return [`CallOutcome::Deferred`].
    ///
    /// A rejected call returns [`CallOutcome::Retry`] and emits nothing. `context.tool_call_id` is
    /// filled in from the call when empty.
    ///
    /// Cancel the call by dropping its future: the answerer's future is dropped with it, and no
    /// `Answered` event fires.
    ///
    /// With a [timeout](AskUserBuilder::timeout) (or, in the extended profile, a call that sets
    /// `timeout_seconds`), the call needs a Tokio runtime whose time driver is enabled (`#[tokio::main]` enables it; a hand-built runtime needs
    /// `enable_time()`); elsewhere it fails with [`CallError::NoTimer`] before asking anyone.
    pub async fn call(&self, call: ToolCall<'_>, context: AskContext) -> CallOutcome {
        let trace = Trace::start(self, call.call_id());
        #[cfg(feature = "tracing")]
        {
            use tracing::Instrument as _;
            let span = trace.span.clone();
            self.call_inner(call, context, &trace).instrument(span).await
        }
        #[cfg(not(feature = "tracing"))]
        {
            self.call_inner(call, context, &trace).await
        }
    }

    async fn call_inner(&self, call: ToolCall<'_>, mut context: AskContext, trace: &Trace) -> CallOutcome {
        let config = &*self.config;
        if call.tool_name() != self.tool_name {
            return trace.finish(CallOutcome::Failed(CallError::WrongTool {
                expected: self.tool_name.clone(),
                found: call.tool_name().to_owned(),
            }));
        }
        let questions = match call.arguments().validate(config.validator) {
            Ok(questions) => questions,
            Err(error) => return trace.finish(CallOutcome::Retry(Retry::invalid(error))),
        };
        if context.tool_call_id.is_none() {
            context.tool_call_id = Some(call.call_id().to_owned());
        }
        let call_info = || CallInfo {
            tool_call_id: call.call_id().to_owned(),
            tool_name: self.tool_name.clone(),
            capability_id: config.id.clone(),
            session_id: context.session_id.clone(),
        };
        // The model's `timeout_seconds` (extended profile, already within the host's maximum)
        // replaces the host's default wait.
        let asked_for = questions.timeout_seconds().map(|s| Duration::from_secs(s.into()));
        let Some(answerer) = &config.answerer else {
            let deadline = Deadline::new(Timestamp::now(), asked_for);
            let request = AskUserRequest::with_id(call.call_id(), questions).with_deadline(deadline);
            trace.request(&request);
            self.emit(|| {
                AskUserEvent::Requested(RequestedEvent {
                    call: call_info(),
                    request: request.clone(),
                    deferred: true,
                    include_content: config.include_content,
                })
            });
            return trace
                .finish(CallOutcome::Deferred(PendingQuestion::new(self.tool_name.clone(), request)));
        };
        // One call at a time when sequential: the next call's `Requested` fires only once the
        // previous call has its answer, as if the calls had been made one after another; its
        // deadline counts from its turn.
        let _turn = if config.sequential { Some(config.gate.lock().await) } else { None };
        let timeout = asked_for.or(config.timeout);
        let deadline = Deadline::new(Timestamp::now(), timeout);
        let request = AskUserRequest::new(questions).with_deadline(deadline);
        trace.request(&request);
        // Built before the answerer takes the context, and only when someone listens (`emit`
        // builds events only then, so the default below is never sent).
        let info = (!config.listeners.is_empty()).then(call_info).unwrap_or_default();
        // Checked before the answerer runs: without a timer, `tokio::time::timeout` panics.
        if timeout.is_some() && !timer_available() {
            return trace.finish(CallOutcome::Failed(CallError::NoTimer));
        }
        self.emit(|| {
            AskUserEvent::Requested(RequestedEvent {
                call: info.clone(),
                request: request.clone(),
                deferred: false,
                include_content: config.include_content,
            })
        });
        let pending = answerer.answer(request.clone(), context);
        // A `let` statement, so the answerer's future is dropped (cancelled) here, before the
        // `Answered` event below, and not at the end of a `match` on the awaited value.
        let outcome_of_wait = self
            .wait(pending, timeout, deadline, || {
                AskUserEvent::Nudge(NudgeEvent {
                    call: info.clone(),
                    request_id: request.id().to_owned(),
                    deadline,
                })
            })
            .await;
        let answered_event = |response: AskUserResponse, timed_out: bool, failed: bool| {
            AskUserEvent::Answered(AnsweredEvent {
                call: info.clone(),
                request_id: request.id().to_owned(),
                response,
                timed_out,
                failed,
                include_content: config.include_content,
            })
        };
        let outcome = match outcome_of_wait {
            None => {
                // The event carries what the model is given: the defaults under apply-defaults.
                let response = match config.on_timeout {
                    OnTimeout::ApplyDefaults => DefaultsResponder::respond(&request, AnsweredBy::Timeout),
                    _ => AskUserResponse::declined(),
                };
                self.emit(|| answered_event(response.clone(), true, false));
                match config.on_timeout.result(&request) {
                    Ok(result) => CallOutcome::Completed(result),
                    Err(error) => CallOutcome::Failed(CallError::Response(error)),
                }
            }
            Some(Err(error)) => {
                self.emit(|| answered_event(AskUserResponse::declined(), false, true));
                answer_error(error)
            }
            Some(Ok(response)) => {
                self.emit(|| answered_event(response.clone(), false, false));
                completed(&request, &response)
            }
        };
        trace.finish(self.worded(outcome))
    }

    /// Awaits the answerer under `timeout`, emitting the `nudge` event once at the deadline's
    /// `nudge_at` if it still waits then (and someone listens). `None` when the timeout ran out;
    /// the answerer's future is dropped (cancelled) before this returns, so before any `Answered`.
    async fn wait<T>(
        &self,
        answer: impl Future<Output = T>,
        timeout: Option<Duration>,
        deadline: Deadline,
        nudge: impl FnOnce() -> AskUserEvent,
    ) -> Option<T> {
        let Some(limit) = timeout else { return Some(answer.await) };
        let delay = deadline
            .nudge_at()
            .map(|at| deadline.asked_at().until(at))
            .filter(|_| !self.config.listeners.is_empty());
        tokio::time::timeout(limit, with_nudge(answer, delay, || self.emit(nudge))).await.ok()
    }

    /// `outcome` with the host's wording of a declined or timed-out result, if it set one.
    fn worded(&self, outcome: CallOutcome) -> CallOutcome {
        let config = &*self.config;
        match outcome {
            CallOutcome::Completed(result) => {
                let sentence = match result.outcome() {
                    Outcome::Declined => config.declined_text.as_deref(),
                    Outcome::TimedOut => config.timed_out_text.as_deref(),
                    _ => None,
                };
                CallOutcome::Completed(match sentence {
                    Some(sentence) => result.with_sentence(sentence),
                    None => result,
                })
            }
            other => other,
        }
    }

    /// Dispatches the event `make` builds, building it (and cloning what it carries) only when
    /// someone listens.
    fn emit(&self, make: impl FnOnce() -> AskUserEvent) {
        if self.config.listeners.is_empty() {
            return;
        }
        let event = make();
        for listener in &self.config.listeners {
            listener.on_event(&event);
        }
    }
}

/// The call's tracing span (feature `tracing`); nothing without the feature.
struct Trace {
    #[cfg(feature = "tracing")]
    span: tracing::Span,
    #[cfg(feature = "tracing")]
    include_content: bool,
}

impl Trace {
    #[cfg_attr(not(feature = "tracing"), expect(unused_variables, reason = "recorded only with tracing"))]
    fn start(ask_user: &AskUser, call_id: &str) -> Self {
        #[cfg(feature = "tracing")]
        {
            let span = tracing::info_span!(
                "ask_user_question",
                capability = %ask_user.config.id,
                tool_call_id = %call_id,
                request_id = tracing::field::Empty,
                outcome = tracing::field::Empty,
                questions = tracing::field::Empty,
                result = tracing::field::Empty,
            );
            Self { span, include_content: ask_user.config.include_content }
        }
        #[cfg(not(feature = "tracing"))]
        Self {}
    }

    #[cfg_attr(
        not(feature = "tracing"),
        expect(unused_variables, clippy::unused_self, reason = "recorded only with tracing")
    )]
    fn request(&self, request: &AskUserRequest) {
        #[cfg(feature = "tracing")]
        {
            self.span.record("request_id", request.id());
            if self.include_content {
                let questions = serde_json::to_string(request.questions()).unwrap_or_default();
                self.span.record("questions", questions.as_str());
            }
        }
    }

    #[cfg_attr(not(feature = "tracing"), expect(clippy::unused_self, reason = "recorded only with tracing"))]
    fn finish(&self, outcome: CallOutcome) -> CallOutcome {
        #[cfg(feature = "tracing")]
        {
            let name = match &outcome {
                CallOutcome::Completed(result) => result.outcome().as_str(),
                CallOutcome::Retry(_) => "retry",
                CallOutcome::Deferred(_) => "deferred",
                CallOutcome::Failed(_) => "failed",
            };
            self.span.record("outcome", name);
            if let (true, CallOutcome::Completed(result)) = (self.include_content, &outcome) {
                self.span.record("result", result.text());
            }
        }
        outcome
    }
}

/// Whether `tokio::time` works here: a Tokio runtime is current and its time driver is on.
/// `tokio::time::timeout` panics otherwise, and no API asks without one: a zero sleep is made
/// under `catch_unwind` (with `panic = "abort"` that would abort, as the timeout itself would).
fn timer_available() -> bool {
    if tokio::runtime::Handle::try_current().is_err() {
        return false;
    }
    std::panic::catch_unwind(|| drop(tokio::time::sleep(Duration::ZERO))).is_ok()
}

/// `response` checked against `request` and rendered, or the misfit that fails the call.
fn completed(request: &AskUserRequest, response: &AskUserResponse) -> CallOutcome {
    match askuser_core::ask_user_result(request, response) {
        Ok(result) => CallOutcome::Completed(result),
        Err(error) => CallOutcome::Failed(CallError::Response(error)),
    }
}

/// Awaits `answer`, calling `on_nudge` once if it is still waiting after `nudge` (when set).
async fn with_nudge<F: Future>(answer: F, nudge: Option<Duration>, on_nudge: impl FnOnce()) -> F::Output {
    let Some(delay) = nudge else { return answer.await };
    let mut answer = std::pin::pin!(answer);
    let mut sleep = std::pin::pin!(tokio::time::sleep(delay));
    let mut on_nudge = Some(on_nudge);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(output) = answer.as_mut().poll(cx) {
            return Poll::Ready(output);
        }
        if on_nudge.is_some()
            && sleep.as_mut().poll(cx).is_ready()
            && let Some(nudge) = on_nudge.take()
        {
            nudge();
        }
        Poll::Pending
    })
    .await
}

fn answer_error(error: AnswerError) -> CallOutcome {
    match error.kind() {
        AnswerErrorKind::Retry => CallOutcome::Retry(Retry::answerer(error)),
        _ => CallOutcome::Failed(CallError::Answerer(error)),
    }
}

impl fmt::Debug for AskUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let config = &*self.config;
        f.debug_struct("AskUser")
            .field("id", &config.id)
            .field("tool_name", &self.tool_name)
            .field("answerer", &config.answerer.as_ref().map(|_| "..."))
            .field("timeout", &config.timeout)
            .field("on_timeout", &config.on_timeout)
            .field("sequential", &config.sequential)
            .field("max_argument_bytes", &config.validator.max_argument_bytes())
            .field("profile", &config.validator.profile())
            .field("max_timeout_seconds", &config.validator.max_timeout_seconds())
            .field("listeners", &config.listeners.len())
            .field("include_content", &config.include_content)
            .field("declined_text", &config.declined_text)
            .field("timed_out_text", &config.timed_out_text)
            .finish()
    }
}

/// Configures an [`AskUser`]. Every setting is optional.
#[must_use]
pub struct AskUserBuilder {
    id: String,
    answerer: Option<Arc<dyn Answerer>>,
    timeout: Option<Duration>,
    on_timeout: OnTimeout,
    sequential: bool,
    validator: Validator,
    listeners: Vec<Arc<dyn Listener>>,
    include_content: bool,
    declined_text: Option<String>,
    timed_out_text: Option<String>,
    unattended: bool,
}

/// The one shared answerer of every capability told to answer unattended, so that two such
/// capabilities stated twice are the same configuration.
static UNATTENDED: LazyLock<Arc<dyn Answerer>> = LazyLock::new(|| Arc::new(DefaultsResponder));

impl Default for AskUserBuilder {
    fn default() -> Self {
        Self {
            id: DEFAULT_ID.to_owned(),
            answerer: None,
            timeout: None,
            on_timeout: OnTimeout::Decline,
            sequential: false,
            validator: Validator::new(),
            listeners: Vec::new(),
            include_content: true,
            declined_text: None,
            timed_out_text: None,
            unattended: false,
        }
    }
}

impl fmt::Debug for AskUserBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AskUserBuilder")
            .field("id", &self.id)
            .field("answerer", &self.answerer.as_ref().map(|_| "..."))
            .field("timeout", &self.timeout)
            .field("on_timeout", &self.on_timeout)
            .field("sequential", &self.sequential)
            .field("max_argument_bytes", &self.validator.max_argument_bytes())
            .field("profile", &self.validator.profile())
            .field("max_timeout_seconds", &self.validator.max_timeout_seconds())
            .field("listeners", &self.listeners.len())
            .field("include_content", &self.include_content)
            .field("declined_text", &self.declined_text)
            .field("timed_out_text", &self.timed_out_text)
            .field("unattended", &self.unattended)
            .finish()
    }
}

impl AskUserBuilder {
    /// Who answers. Default: none, so every call is deferred.
    pub fn answerer(self, answerer: impl Answerer + 'static) -> Self {
        self.shared_answerer(Arc::new(answerer))
    }

    /// Who answers, already shared. Two capabilities are the same answerer stated twice only when
    /// they hold the same `Arc`. Default: none, so every call is deferred.
    pub fn shared_answerer(mut self, answerer: Arc<dyn Answerer>) -> Self {
        self.answerer = Some(answerer);
        self
    }

    /// How long to wait for the answerer before cancelling it. Must be positive and needs an
    /// answerer; calls then need a Tokio runtime with its time driver enabled. Default: wait
    /// indefinitely.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// What the model is told when the timeout runs out. Default: [`OnTimeout::Decline`].
    pub fn on_timeout(mut self, policy: OnTimeout) -> Self {
        self.on_timeout = policy;
        self
    }

    /// The capability id. Default: `ask_user`.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }

    /// Run calls one at a time: a second call waits (before its `Requested` event) until the first
    /// has its answer; its timeout counts from its turn. Default: false, calls reach the answerer
    /// concurrently.
    pub fn sequential(mut self, sequential: bool) -> Self {
        self.sequential = sequential;
        self
    }

    /// The largest argument text accepted, in bytes; larger text is a retry. Default: 1 MiB.
    pub fn max_argument_bytes(mut self, limit: usize) -> Self {
        self.validator = self.validator.with_max_argument_bytes(limit);
        self
    }

    /// The profile calls are validated, checked and rendered by (docs/contract.md §10). Default:
    /// [`Profile::Reference`], the reference implementation's contract to the letter.
    /// [`Profile::Extended`] adds text and secret questions, ids, declared defaults,
    /// `allow_other` and `timeout_seconds`, and renders every result as data (which
    /// [`declined_text`](Self::declined_text) and [`timed_out_text`](Self::timed_out_text) do not
    /// reword); the tool description, instruction and schema follow the profile.
    pub fn profile(mut self, profile: Profile) -> Self {
        self.validator = self.validator.with_profile(profile);
        self
    }

    /// The longest wait a model may ask for with `timeout_seconds` (extended profile), whole
    /// seconds; a longer one is a retry. The model's value then replaces [`timeout`](Self::timeout)
    /// for its call: it can shorten the wait, never go past this maximum. Default: 300 seconds.
    pub fn max_timeout(mut self, max: Duration) -> Self {
        let seconds = u32::try_from(max.as_secs()).unwrap_or(u32::MAX);
        self.validator = self.validator.with_max_timeout_seconds(seconds);
        self
    }

    /// With no answerer set, answer every call at once with the defaults ([`DefaultsResponder`],
    /// `answered_by: unattended`) instead of deferring it: the second seed's headless default. A
    /// batch with a text or secret question is then declined. Ignored when an answerer is set.
    /// Default: false (calls without an answerer are deferred).
    pub fn unattended(mut self, unattended: bool) -> Self {
        self.unattended = unattended;
        self
    }

    /// Adds a listener for [`AskUserEvent`]s. Default: none.
    pub fn listener(self, listener: impl Listener + 'static) -> Self {
        self.shared_listener(Arc::new(listener))
    }

    /// Adds a shared listener (compared by identity when capabilities are combined). Default: none.
    pub fn shared_listener(mut self, listener: Arc<dyn Listener>) -> Self {
        self.listeners.push(listener);
        self
    }

    /// Whether questions and answers may appear in tracing spans and in events' `Debug` output.
    /// Default: true.
    pub fn include_content(mut self, include: bool) -> Self {
        self.include_content = include;
        self
    }

    /// The tool result when the person declines, in the host's words (a language, a house style).
    /// Default: [`askuser_core::DECLINED`]. Say plainly that nobody answered and that the model
    /// should carry on: the tool description tells the model to expect a plain sentence. A
    /// deferred call's result is the host's to word: `PendingQuestion::result(…)?.with_sentence(…)`.
    pub fn declined_text(mut self, sentence: impl Into<String>) -> Self {
        self.declined_text = Some(sentence.into());
        self
    }

    /// The tool result when nobody answers within the timeout (under [`OnTimeout::Decline`] or
    /// [`OnTimeout::Stop`]), in the host's words. Default: [`askuser_core::TIMED_OUT`], or
    /// [`askuser_core::TIMED_OUT_STOP`] under `Stop`.
    pub fn timed_out_text(mut self, sentence: impl Into<String>) -> Self {
        self.timed_out_text = Some(sentence.into());
        self
    }

    /// Builds the capability.
    ///
    /// # Errors
    ///
    /// [`BuildError::TimeoutWithoutAnswerer`], [`BuildError::ZeroTimeout`] or
    /// [`BuildError::EmptyId`].
    pub fn build(mut self) -> Result<AskUser, BuildError> {
        if self.id.is_empty() {
            return Err(BuildError::EmptyId);
        }
        if self.unattended && self.answerer.is_none() {
            self.answerer = Some(Arc::clone(&UNATTENDED));
        }
        if let Some(timeout) = self.timeout {
            if timeout.is_zero() {
                return Err(BuildError::ZeroTimeout);
            }
            if self.answerer.is_none() {
                return Err(BuildError::TimeoutWithoutAnswerer);
            }
        }
        Ok(AskUser {
            config: Arc::new(Config {
                id: self.id,
                answerer: self.answerer,
                timeout: self.timeout,
                on_timeout: self.on_timeout,
                sequential: self.sequential,
                gate: tokio::sync::Mutex::new(()),
                validator: self.validator,
                listeners: self.listeners,
                include_content: self.include_content,
                declined_text: self.declined_text,
                timed_out_text: self.timed_out_text,
            }),
            tool_name: TOOL_NAME.to_owned(),
        })
    }
}
