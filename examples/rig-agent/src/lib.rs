//! A rig agent that asks its person a question: rig-agent 0.44 with [`AskUserTool`] and a
//! scripted model ([`model`]) in place of a provider.
//!
//! [`run`] is the whole thing: the model calls `ask_user_question`, the answerer (the terminal
//! menu in `main.rs`) asks, and the model's final message comes back. [`pause`] and [`resume`] are
//! the same conversation with nobody there to answer at once: the run stops at the question, the
//! host stores it, and another process finishes the run once the person has answered.

pub mod model;

/// docs/agent-loop.md, compiled and run as doctests so that every snippet stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/agent-loop.md")]
pub struct AgentLoopDoctests;

use std::error::Error;

use askuser_core::{Answerer, AskUserResponse};
use askuser_rig::{AskUserHook, AskUserTool, Session, resume_message};
use askuser_tool::{AskUser, PendingQuestion};
use rig_agent::Agent;
use rig_agent::agent::AgentBuilder;
use rig_agent::run::PromptError;
use rig_core::message::Message;
use rig_core::tool::ToolContext;
use serde::{Deserialize, Serialize};

use crate::model::{Script, Step};

/// Any error of the example.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// What the person asks the agent.
pub const PROMPT: &str = "Add a cache in front of the user service.";

/// The scripted model's tool-call id.
pub const CALL_ID: &str = "call_cache_1";

/// The agent's own instructions; the tool's instruction is appended.
const PREAMBLE: &str = "You are a coding agent. Ask before making a choice the person would want to make.";

/// The question the scripted model asks.
#[must_use]
pub fn question() -> serde_json::Value {
    serde_json::json!({"questions": [{
        "header": "Cache",
        "question": "Which cache should the user service use?",
        "options": [
            {"label": "Redis (Recommended)", "description": "Shared by every instance; one more service to run"},
            {"label": "In-process LRU", "description": "Nothing to deploy; each instance warms its own"}
        ]
    }]})
}

/// What the scripted model says once it has the tool result.
fn final_message(tool_result: &str) -> String {
    format!("The person's answer (the tool result) was {tool_result}; I will build the cache accordingly.")
}

/// The scripted model: it asks [`question`], then replies with a sentence that quotes the tool
/// result.
#[must_use]
pub fn script() -> Script {
    Script::new([
        Step::Ask { call_id: CALL_ID.to_owned(), arguments: question() },
        Step::Reply(final_message),
    ])
}

/// The agent: the scripted model, the preamble with the tool's instruction, the tool and its hook.
#[must_use]
pub fn agent(tool: &AskUserTool, script: &Script) -> Agent {
    AgentBuilder::new(script.model())
        .preamble(format!("{PREAMBLE}\n\n{}", tool.ask_user().instructions()))
        .tool(tool.clone())
        .add_hook(tool.hook())
        .build()
}

/// The session the run belongs to, in the tool context.
fn context(session: &str) -> Result<ToolContext, BoxError> {
    let mut context = ToolContext::new();
    context.insert(Session::new(session))?;
    Ok(context)
}

/// Runs the conversation with `answerer` answering the question; returns the model's final
/// message.
///
/// # Errors
///
/// The capability could not be built, or the run failed.
pub async fn run(answerer: impl Answerer + 'static, session: &str) -> Result<String, BoxError> {
    run_with(AskUser::builder().answerer(answerer).build()?, &script(), session).await
}

/// Runs the conversation with a capability and a script of the caller's choosing.
///
/// # Errors
///
/// The run failed.
pub async fn run_with(ask_user: AskUser, script: &Script, session: &str) -> Result<String, BoxError> {
    let tool = AskUserTool::new(ask_user);
    let response = agent(&tool, script).prompt(PROMPT).tool_context(context(session)?).max_turns(4).await?;
    Ok(response.output())
}

/// A paused run, as the host stores it: the conversation so far and the questions waiting for
/// an answer.
#[derive(Debug, Serialize, Deserialize)]
pub struct Paused {
    /// The conversation up to and including the model's tool call.
    pub history: Vec<Message>,
    /// The deferred questions (one here).
    pub pending: Vec<PendingQuestion>,
}

/// Runs the conversation with nobody to answer: the call is deferred, the hook stops the run.
/// Returns what the host stores.
///
/// # Errors
///
/// The run did not stop at a deferred question.
pub async fn pause(session: &str) -> Result<Paused, BoxError> {
    let tool = AskUserTool::new(AskUser::builder().build()?);
    let hook: AskUserHook = tool.hook();
    let outcome = agent(&tool, &script()).prompt(PROMPT).tool_context(context(session)?).max_turns(4).await;
    match outcome {
        Err(PromptError::Cancelled { chat_history, .. }) => {
            let pending = hook.take_deferred_in(&chat_history);
            if pending.is_empty() {
                return Err("the run was cancelled, but no question is waiting".into());
            }
            Ok(Paused { history: chat_history, pending })
        }
        Err(other) => Err(other.into()),
        Ok(response) => Err(format!("the run finished without pausing: {}", response.output()).into()),
    }
}

/// Finishes a paused run once the person has answered: the answer goes back to the model as the
/// tool result, and the model's final message comes back.
///
/// # Errors
///
/// Nothing is pending, the response does not fit the question, or the run failed.
pub async fn resume(paused: Paused, response: &AskUserResponse, session: &str) -> Result<String, BoxError> {
    let pending = paused.pending.first().ok_or("no question is waiting")?;
    let answer = resume_message(pending, response)?;
    // The resumed process has its own model; it continues where the conversation stopped.
    let script = Script::new([Step::Reply(final_message)]);
    let tool = AskUserTool::new(AskUser::builder().build()?);
    let response = agent(&tool, &script)
        .prompt(answer)
        .history(paused.history)
        .tool_context(context(session)?)
        .max_turns(4)
        .await?;
    Ok(response.output())
}
