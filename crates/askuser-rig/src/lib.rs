//! `ask_user_question` for rig agents: the [`AskUser`] capability as a rig-core 0.44 [`Tool`],
//! and an [`AskUserHook`] that gives it the model's real tool-call id and pauses the run when a
//! call is deferred.
//!
//! ```
//! use askuser_core::{AnswerError, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse};
//! use askuser_rig::{AskUserTool, Session};
//! use askuser_tool::AskUser;
//! use rig_core::tool::{Tool, ToolContext};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Whoever answers: here a script that picks the first option (a real agent uses
//! // askuser-terminal's `TerminalAnswerer`, a web form, or a `SessionRouter`).
//! let first = |request: AskUserRequest, context: AskContext| async move {
//!     assert_eq!(context.session_id.as_deref(), Some("chat-42"));
//!     let answers =
//!         request.questions().iter().map(|q| AskUserAnswer::picked(q.header(), [q.options()[0].label()])).collect();
//!     Ok::<_, AnswerError>(AskUserResponse::answered(answers))
//! };
//! let tool = AskUserTool::new(AskUser::builder().answerer(first).build()?);
//! // With an agent: `AgentBuilder::new(model).preamble(..).tool(tool.clone()).add_hook(tool.hook())`.
//!
//! // What rig does for one call: the session comes from the run's tool context.
//! let mut context = ToolContext::new();
//! context.insert(Session::new("chat-42"))?;
//! let args = serde_json::json!({"questions": [{"header": "Plan", "question": "Which plan?",
//!     "options": [{"label": "Small"}, {"label": "Large"}]}]});
//! let rt = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
//! let text = rt.block_on(tool.call(&mut context, args))?;
//! assert_eq!(text, r#"{"Plan":["Small"]}"#);
//! # Ok(())
//! # }
//! ```
//!
//! # What the model and the host see
//!
//! | [`CallOutcome`] | `Tool::call` returns | the model sees |
//! | --- | --- | --- |
//! | `Completed` | `Ok(text)` | the answers, the declined or timed-out sentence, or the defaults |
//! | `Retry` | `Err(`[`AskUserToolError::Retry`]`)` | the retry text (an `invalid_args` tool error), so it can fix the call |
//! | `Deferred` | `Err(`[`AskUserToolError::Deferred`]`)` | nothing: [`AskUserHook`] stops the run and keeps the [`PendingQuestion`] for the host |
//! | `Failed` | `Err(`[`AskUserToolError::Failed`]`)` | a generic tool failure; the cause stays with the host; an interrupt stops the run ([`INTERRUPTED`]) |
//!
//! The capability's timeout, `on_timeout` policy, sequential gate and event listeners all apply:
//! every call goes through [`AskUser::call`]. rig cancels a tool by dropping its future, which
//! drops the answerer's future too (a terminal menu restores the screen).
//!
//! # Deferred calls: pause, store, resume
//!
//! Build the capability without an answerer and every call is deferred. The hook stops the run
//! with [`PromptError::Cancelled`](rig_agent::run::PromptError::Cancelled) (whose
//! `chat_history` ends with the model's tool call) and keeps the [`PendingQuestion`]; take it with
//! [`AskUserHook::take_deferred_in`] (that run's questions), store both (they serialise), and
//! once the person has answered, possibly in another process, continue the conversation with
//! [`resume_message`] as the prompt and the stored history. `examples/rig-agent` does this round trip.
//!
//! # Which crate do I need?
//!
//! Every askuser crate, what it is for, its heavy dependencies and its features: the table in
//! the [README](https://example.invalid/askuser#which-crate-do-i-need).
//!
//! # Feature flags
//!
//! None. rig-core and rig-agent are used with their default features off (no HTTP client, no
//! derive macros); rig's providers come from your own dependency on them.
//!
//! # Versions
//!
//! rig changes its tool API between minor versions, so this crate pins `~0.44` (the last minor
//! that builds on Rust 1.95).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use askuser_core::{AskContext, AskUserResponse, ResponseError};
use askuser_tool::{
    AskUser, CallError, CallOutcome, DESCRIPTION, Dialect, PendingQuestion, Retry, TOOL_NAME, ToolCall,
};
use rig_agent::agent::{AgentHook, DispatchAction, DispatchEvent, HookContext, OutcomeAction, OutcomeEvent};
use rig_core::message::{AssistantContent, CallId, LocalCallId, Message, ToolName};
use rig_core::tool::{ContextValue, Tool, ToolContext, ToolExecutionError};
use serde::{Deserialize, Serialize};

/// The conversation a run belongs to, passed to the answerer as [`AskContext::session_id`].
///
/// Put it in the run's tool context (`agent.prompt(..).tool_context(context)` after
/// `context.insert(Session::new(id))`); without it the session is empty. An agent that serves
/// several conversations at once should set it: [`AskUserHook`] files call ids by session, so
/// runs of different sessions never take each other's ids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session(String);

impl Session {
    /// A session id.
    #[must_use]
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// The session id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.0
    }
}

impl ContextValue for Session {
    const KEY: &'static str = "askuser.session";
}

/// The model's id for one tool call, when a host that dispatches tools itself (no
/// [`AskUserHook`]) knows it: insert it into the call's tool context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallId(String);

impl ToolCallId {
    /// A tool-call id.
    #[must_use]
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// The tool-call id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.0
    }
}

impl ContextValue for ToolCallId {
    const KEY: &'static str = "askuser.tool_call_id";
}

/// Why an `ask_user_question` call did not produce a result for the model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AskUserToolError {
    /// The model should fix its call (invalid arguments, or the answerer asked for a retry). The
    /// model receives [`Retry::text`] as an `invalid_args` tool error.
    #[error("the model must retry ask_user_question")]
    Retry(Retry),
    /// No answerer: the question waits for the host. [`AskUserHook`] stops the run and keeps the
    /// pending question; without the hook the model is told that the question is pending.
    #[error("ask_user_question call {} was deferred", .0.tool_call_id())]
    Deferred(PendingQuestion),
    /// The call failed (an answerer bug or failure, an interrupt). The model is told only that
    /// the tool failed.
    #[error("ask_user_question failed")]
    Failed(#[source] CallError),
    /// An outcome this version of the adapter does not know (`CallOutcome` is non-exhaustive):
    /// the call fails rather than guessing.
    #[error("unhandled ask_user_question outcome {0}")]
    Unhandled(String),
}

impl AskUserToolError {
    /// The text the model can act on, for a retry.
    #[must_use]
    pub fn retry_text(&self) -> Option<&str> {
        match self {
            Self::Retry(retry) => Some(retry.text()),
            Self::Deferred(_) | Self::Failed(_) | Self::Unhandled(_) => None,
        }
    }

    /// The pending question, for a deferred call.
    #[must_use]
    pub fn pending(&self) -> Option<&PendingQuestion> {
        match self {
            Self::Deferred(pending) => Some(pending),
            Self::Retry(_) | Self::Failed(_) | Self::Unhandled(_) => None,
        }
    }

    /// The `AskUserToolError` inside a rig tool error, if that is what it is.
    #[must_use]
    pub fn from_tool_error(error: &ToolExecutionError) -> Option<&Self> {
        error.downcast_ref::<Self>()
    }
}

/// The reason of the `PromptError::Cancelled` when the person interrupted the run (Ctrl-C in the
/// terminal menu, [`AnswerError::interrupted`](askuser_core::AnswerError::interrupted)).
pub const INTERRUPTED: &str = "the person interrupted the run while asked a question";

/// What the model sees for a deferred call when no [`AskUserHook`] stopped the run.
const DEFERRED_FEEDBACK: &str =
    "The question was handed to the person and is waiting for their answer; it will be answered later.";

/// One dispatched call the tool has not picked up yet: the model's id and the turn.
#[derive(Debug, Clone)]
struct Dispatched {
    call_id: String,
    turn_id: String,
}

/// Where a dispatched call is filed: the run's [`Session`] (if any) and the exact argument text.
type Key = (Option<String>, String);

#[derive(Default)]
struct Shared {
    /// Dispatched calls not yet picked up, oldest first. rig hands a tool only its arguments and
    /// the run's context, not the call id; the hook sees the id, the same context and the exact
    /// argument text rig passes on, so the tool finds its id by session and arguments. Identical
    /// calls in one session at the same time take the ids in dispatch order.
    dispatched: Mutex<HashMap<Key, VecDeque<Dispatched>>>,
    deferred: Mutex<Vec<PendingQuestion>>,
}

fn session_of(context: Option<&ToolContext>) -> Option<String> {
    context.and_then(|context| context.get::<Session>().ok().flatten()).map(|session| session.0)
}

impl Shared {
    fn take_dispatched(&self, key: &Key) -> Option<Dispatched> {
        let mut map = self.dispatched.lock().unwrap_or_else(PoisonError::into_inner);
        let queue = map.get_mut(key)?;
        let first = queue.pop_front();
        if queue.is_empty() {
            map.remove(key);
        }
        first
    }

    fn forget(&self, key: &Key, call_id: &str) {
        let mut map = self.dispatched.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(queue) = map.get_mut(key) {
            queue.retain(|d| d.call_id != call_id);
            if queue.is_empty() {
                map.remove(key);
            }
        }
    }
}

/// The `ask_user_question` tool for a rig agent: a clone of an [`AskUser`] capability.
///
/// Register it with `AgentBuilder::tool` and its [`hook`](Self::hook) with `add_hook`, and add
/// [`AskUser::instructions`] to the preamble. Cheap to clone; clones share the capability and the
/// hook's state.
#[derive(Clone)]
pub struct AskUserTool {
    ask_user: AskUser,
    shared: Arc<Shared>,
}

impl fmt::Debug for AskUserTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AskUserTool").field("ask_user", &self.ask_user).finish_non_exhaustive()
    }
}

impl AskUserTool {
    /// The tool for `ask_user`. rig registers it as `ask_user_question` whatever the capability's
    /// tool name.
    #[must_use]
    pub fn new(ask_user: AskUser) -> Self {
        Self { ask_user, shared: Arc::default() }
    }

    /// The capability.
    #[must_use]
    pub fn ask_user(&self) -> &AskUser {
        &self.ask_user
    }

    /// The hook to add to the agent beside the tool: it passes each call's id and turn to the
    /// tool, and stops the run when a call is deferred. Add it last, after hooks that rewrite
    /// tool arguments.
    #[must_use]
    pub fn hook(&self) -> AskUserHook {
        AskUserHook { shared: Arc::clone(&self.shared) }
    }

    fn context(&self, context: &ToolContext, arguments: &serde_json::Value) -> (String, AskContext) {
        let session = session_of(Some(context));
        let dispatched = self.shared.take_dispatched(&(session.clone(), arguments.to_string()));
        let from_context = context.get::<ToolCallId>().ok().flatten().map(|id| id.0);
        let call_id = dispatched
            .as_ref()
            .map(|d| d.call_id.clone())
            .or(from_context)
            // Neither the hook nor the host named the call: a fresh id keeps deferred questions
            // apart (it becomes the pending question's id).
            .unwrap_or_else(|| CallId::from(LocalCallId::new()).to_string());
        let mut ask_context = AskContext::new().with_tool_call_id(call_id.clone());
        if let Some(session) = session {
            ask_context = ask_context.with_session_id(session);
        }
        if let Some(dispatched) = dispatched {
            ask_context = ask_context.with_turn_id(dispatched.turn_id);
        }
        (call_id, ask_context)
    }
}

impl Tool for AskUserTool {
    const NAME: &'static str = TOOL_NAME;
    /// The arguments as a JSON value: askuser's validator reads them with its own rules (unknown
    /// keys, lengths, uniqueness, each problem with its location), not serde's.
    type Args = serde_json::Value;
    /// The result text: answers as JSON, or the declined / timed-out sentence.
    type Output = String;
    type Error = AskUserToolError;

    fn description(&self) -> String {
        DESCRIPTION.to_owned()
    }

    /// The generic dialect: rig's providers adapt a plain JSON Schema themselves.
    fn parameters(&self) -> serde_json::Value {
        self.ask_user.definition(Dialect::Generic).parameters
    }

    fn map_error(&self, error: Self::Error) -> ToolExecutionError {
        match &error {
            AskUserToolError::Retry(retry) => {
                ToolExecutionError::invalid_args(retry.text().to_owned()).with_source(error)
            }
            AskUserToolError::Deferred(pending) => ToolExecutionError::other(format!(
                "ask_user_question call {} was deferred",
                pending.tool_call_id()
            ))
            .with_model_feedback(DEFERRED_FEEDBACK)
            .with_source(error),
            AskUserToolError::Failed(_) | AskUserToolError::Unhandled(_) => {
                ToolExecutionError::from_error(error)
            }
        }
    }

    fn call(
        &self,
        context: &mut ToolContext,
        args: Self::Args,
    ) -> impl Future<Output = Result<Self::Output, Self::Error>> + Send {
        let (call_id, ask_context) = self.context(context, &args);
        async move {
            let call = ToolCall::new(&call_id, &args).with_tool_name(self.ask_user.tool_name());
            match self.ask_user.call(call, ask_context).await {
                CallOutcome::Completed(result) => Ok(result.into_text()),
                CallOutcome::Retry(retry) => Err(AskUserToolError::Retry(retry)),
                CallOutcome::Deferred(pending) => Err(AskUserToolError::Deferred(pending)),
                CallOutcome::Failed(error) => Err(AskUserToolError::Failed(error)),
                other => Err(AskUserToolError::Unhandled(format!("{other:?}"))),
            }
        }
    }
}

/// The rig-agent hook that goes with an [`AskUserTool`] (from [`AskUserTool::hook`]).
///
/// - Before each `ask_user_question` dispatch it records the model's tool-call id and the turn,
///   which the tool passes to the answerer in [`AskContext`] (rig 0.44 gives a tool neither).
/// - After a deferred call it keeps the [`PendingQuestion`] and stops the run, so the host gets
///   `PromptError::Cancelled` instead of a model that carries on without an answer.
/// - When the person interrupted (Ctrl-C in the menu) it stops the run with the reason
///   [`INTERRUPTED`].
#[derive(Clone)]
pub struct AskUserHook {
    shared: Arc<Shared>,
}

impl fmt::Debug for AskUserHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let deferred = self.shared.deferred.lock().unwrap_or_else(PoisonError::into_inner).len();
        f.debug_struct("AskUserHook").field("deferred", &deferred).finish_non_exhaustive()
    }
}

impl AskUserHook {
    /// Every question deferred and not yet taken, oldest first; they are removed from the hook.
    /// For an agent that runs one conversation at a time.
    #[must_use]
    pub fn take_deferred(&self) -> Vec<PendingQuestion> {
        std::mem::take(&mut *self.shared.deferred.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The deferred questions of one stopped run: those whose tool calls are in `history` (the
    /// `chat_history` of its `PromptError::Cancelled`), oldest first; they are removed from the
    /// hook. Other runs' questions stay, so an agent serving many conversations at once hands
    /// each run its own.
    #[must_use]
    pub fn take_deferred_in(&self, history: &[Message]) -> Vec<PendingQuestion> {
        let calls: Vec<String> = history
            .iter()
            .filter_map(|message| match message {
                Message::Assistant(turn) => Some(turn.content.iter()),
                _ => None,
            })
            .flatten()
            .filter_map(|content| match content {
                AssistantContent::ToolCall(call) => Some(call.id.to_string()),
                _ => None,
            })
            .collect();
        let mut deferred = self.shared.deferred.lock().unwrap_or_else(PoisonError::into_inner);
        let (mine, others) = std::mem::take(&mut *deferred)
            .into_iter()
            .partition(|p| calls.iter().any(|c| c == p.tool_call_id()));
        *deferred = others;
        mine
    }
}

fn is_ours(name: Option<&str>) -> bool {
    name == Some(TOOL_NAME)
}

impl AgentHook for AskUserHook {
    fn name(&self) -> Option<String> {
        Some("askuser".to_owned())
    }

    fn on_dispatch(
        &self,
        ctx: &HookContext,
        event: DispatchEvent<'_>,
    ) -> impl Future<Output = DispatchAction> + Send {
        if let (true, Some(call_id), Some(arguments)) =
            (is_ours(event.tool_name()), event.call_id, event.tool_args())
        {
            let dispatched = Dispatched {
                call_id: call_id.to_string(),
                turn_id: format!("{}/{}", ctx.run_id(), ctx.turn()),
            };
            let key = (session_of(event.context), arguments.to_owned());
            let mut map = self.shared.dispatched.lock().unwrap_or_else(PoisonError::into_inner);
            map.entry(key).or_default().push_back(dispatched);
        }
        std::future::ready(DispatchAction::Proceed)
    }

    fn on_outcome(
        &self,
        _ctx: &HookContext,
        event: OutcomeEvent<'_>,
    ) -> impl Future<Output = OutcomeAction> + Send {
        let mut action = OutcomeAction::Proceed;
        if is_ours(event.tool_name()) {
            // A call that never reached the tool (denied by another hook) leaves its id behind.
            if let (Some(call_id), Some(arguments)) = (event.call_id, event.tool_args()) {
                let key = (session_of(event.tool_context()), arguments.to_owned());
                self.shared.forget(&key, &call_id.to_string());
            }
            let error = event
                .tool_result()
                .and_then(|result| result.error())
                .and_then(AskUserToolError::from_tool_error);
            match error {
                Some(AskUserToolError::Deferred(pending)) => {
                    let reason = format!(
                        "ask_user_question call {} is waiting for the person's answer",
                        pending.tool_call_id()
                    );
                    self.shared.deferred.lock().unwrap_or_else(PoisonError::into_inner).push(pending.clone());
                    action = OutcomeAction::stop(reason);
                }
                // Ctrl-C in the menu is the person stopping the agent, not only this question.
                Some(AskUserToolError::Failed(error)) if error.is_interrupted() => {
                    action = OutcomeAction::stop(INTERRUPTED);
                }
                _ => {}
            }
        }
        std::future::ready(action)
    }
}

/// The message that resumes a paused run once the person has answered: the tool result for the
/// deferred call, byte-identical to what an inline call would have returned. Send it as the
/// prompt, with the history the cancelled run returned.
///
/// # Errors
///
/// The response does not fit the question ([`PendingQuestion::result`]).
pub fn resume_message(
    pending: &PendingQuestion,
    response: &AskUserResponse,
) -> Result<Message, ResponseError> {
    let text = pending.result(response)?.into_text();
    let name =
        ToolName::new(pending.tool_name()).unwrap_or_else(|_| rig_core::tool::tool_name::<AskUserTool>());
    Ok(Message::tool_result(CallId::from_wire(pending.tool_call_id()), name, text))
}
