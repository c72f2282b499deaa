//! async-openai 0.43 Chat Completions types for `ask_user_question` (feature `async-openai`).
//!
//! Three conversions, nothing else: the tool to register ([`chat_completion_tool`], the `OpenAI`
//! strict dialect with `strict: true`), the model's tool call into a [`ToolCall`] (`From`, or
//! [`tool_call`] for the `tool_calls` enum), and the text for the model back as a tool message
//! ([`tool_message`], [`outcome_message`]). Only async-openai's types are used: the feature turns
//! on `chat-completion-types` with its default features off, so no HTTP client is built.
//!
//! ```
//! use askuser_core::{AnswerError, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse};
//! use askuser_tool::{AskUser, openai};
//! use async_openai::types::chat::ChatCompletionMessageToolCalls;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let first = |request: AskUserRequest, _: AskContext| async move {
//!     let answers =
//!         request.questions().iter().map(|q| AskUserAnswer::picked(q.header(), [q.options()[0].label()])).collect();
//!     Ok::<_, AnswerError>(AskUserResponse::answered(answers))
//! };
//! let ask_user = AskUser::builder().answerer(first).build()?;
//! let tools = vec![openai::chat_completion_tool(&ask_user)]; // goes into the request's `tools`
//!
//! // One entry of the assistant message's `tool_calls`, as the API sends it.
//! let calls: Vec<ChatCompletionMessageToolCalls> = serde_json::from_str(
//!     r#"[{"id":"call_1","type":"function","function":{"name":"ask_user_question",
//!     "arguments":"{\"questions\":[{\"header\":\"Plan\",\"question\":\"Which plan?\",\"options\":[{\"label\":\"Small\",\"description\":null},{\"label\":\"Large\",\"description\":null}],\"multi_select\":false}]}"}}]"#,
//! )?;
//! let rt = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
//! for call in &calls {
//!     let Some(tool_call) = openai::tool_call(call) else { continue }; // a custom tool: not ours
//!     let outcome = rt.block_on(ask_user.call(tool_call, AskContext::new()));
//!     let message = openai::outcome_message(tool_call.call_id(), &outcome).expect("answered inline");
//!     assert_eq!(
//!         serde_json::to_string(&message)?,
//!         r#"{"role":"tool","content":"{\"Plan\":[\"Small\"]}","tool_call_id":"call_1"}"#
//!     );
//! }
//! # let _ = tools;
//! # Ok(())
//! # }
//! ```

use async_openai::types::chat::{
    ChatCompletionMessageToolCall, ChatCompletionMessageToolCalls, ChatCompletionRequestMessage,
    ChatCompletionRequestToolMessage, ChatCompletionRequestToolMessageContent, ChatCompletionTool,
    ChatCompletionTools, FunctionObject,
};

use crate::call::ToolCall;
use crate::capability::AskUser;
use crate::outcome::CallOutcome;
use crate::schema::Dialect;

/// The function definition: the capability's tool name, the description, the parameters in
/// [`Dialect::OpenAiStrict`] and `strict: Some(true)`.
///
/// `strict` is set explicitly: Chat Completions treats a missing `strict` as false, the Responses
/// API as true, and the strict dialect is what makes both mean the same schema.
#[must_use]
pub fn function_object(ask_user: &AskUser) -> FunctionObject {
    let definition = ask_user.definition(Dialect::OpenAiStrict);
    FunctionObject {
        name: definition.name,
        description: Some(definition.description),
        parameters: Some(definition.parameters),
        strict: Some(true),
    }
}

/// The tool for a chat completion request's `tools`: [`function_object`] as a function tool.
#[must_use]
pub fn chat_completion_tool(ask_user: &AskUser) -> ChatCompletionTools {
    ChatCompletionTools::Function(ChatCompletionTool { function: function_object(ask_user) })
}

/// The tool call in an assistant message's `tool_calls`, when it is a function call; `None` for a
/// custom tool call (a custom tool is never `ask_user_question`). The arguments stay JSON text,
/// passed on untouched, so the argument-size cap and the strict JSON rules apply to what the
/// model really sent.
#[must_use]
pub fn tool_call(call: &ChatCompletionMessageToolCalls) -> Option<ToolCall<'_>> {
    match call {
        ChatCompletionMessageToolCalls::Function(call) => Some(call.into()),
        ChatCompletionMessageToolCalls::Custom(_) => None,
    }
}

impl<'a> From<&'a ChatCompletionMessageToolCall> for ToolCall<'a> {
    /// The call's `id`, `function.name` and `function.arguments` (JSON text).
    fn from(call: &'a ChatCompletionMessageToolCall) -> Self {
        ToolCall::new(&call.id, call.function.arguments.as_str()).with_tool_name(&call.function.name)
    }
}

/// A `tool` message answering the call `tool_call_id` with `text`: a result's text, a retry's
/// text, or a deferred call's result once the person answered ([`PendingQuestion::result`](crate::PendingQuestion::result)).
#[must_use]
pub fn tool_message(
    tool_call_id: impl Into<String>,
    text: impl Into<String>,
) -> ChatCompletionRequestMessage {
    ChatCompletionRequestMessage::Tool(ChatCompletionRequestToolMessage {
        content: ChatCompletionRequestToolMessageContent::Text(text.into()),
        tool_call_id: tool_call_id.into(),
    })
}

/// The `tool` message for an outcome the model sees now ([`CallOutcome::model_text`]): a
/// completed call or a retry. `None` for a deferred call (store it and answer later with
/// [`tool_message`]) or a failed one (fail the call; the model is not told).
#[must_use]
pub fn outcome_message(tool_call_id: &str, outcome: &CallOutcome) -> Option<ChatCompletionRequestMessage> {
    outcome.model_text().map(|text| tool_message(tool_call_id, text))
}
