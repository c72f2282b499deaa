//! One tool call in ([`ToolCall`]) and its arguments ([`Arguments`]); what the host does with it
//! is `outcome.rs`.

use askuser_core::{ValidationError, Validator};
use serde_json::Value;

/// Tool-call arguments as the framework delivers them: JSON text, or an already-parsed value.
/// Both give the same verdicts.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Arguments<'a> {
    /// The argument JSON text; empty text counts as `{}`. Subject to the argument-size cap.
    Text(&'a str),
    /// Arguments already parsed.
    Value(&'a Value),
}

impl Arguments<'_> {
    pub(crate) fn validate(self, validator: Validator) -> Result<askuser_core::Questions, ValidationError> {
        match self {
            Self::Text(text) => validator.validate_json(text),
            Self::Value(value) => validator.validate_value(value),
        }
    }
}

impl<'a> From<&'a str> for Arguments<'a> {
    fn from(text: &'a str) -> Self {
        Self::Text(text)
    }
}

impl<'a> From<&'a String> for Arguments<'a> {
    fn from(text: &'a String) -> Self {
        Self::Text(text)
    }
}

impl<'a> From<&'a Value> for Arguments<'a> {
    fn from(value: &'a Value) -> Self {
        Self::Value(value)
    }
}

/// One tool call as the model made it: its id, the tool name, and the arguments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolCall<'a> {
    call_id: &'a str,
    tool_name: &'a str,
    arguments: Arguments<'a>,
}

impl<'a> ToolCall<'a> {
    /// A call of `ask_user_question` ([`TOOL_NAME`](crate::TOOL_NAME)) with the model's id for
    /// it. `arguments` is JSON text (`&str`, `&String`) or a `&serde_json::Value`.
    ///
    /// The tool name is set apart ([`with_tool_name`](Self::with_tool_name)), so the id and the
    /// name, both strings, cannot be swapped by mistake.
    #[must_use]
    pub fn new(call_id: &'a str, arguments: impl Into<Arguments<'a>>) -> Self {
        Self { call_id, tool_name: crate::TOOL_NAME, arguments: arguments.into() }
    }

    /// The same call naming `tool_name`, as the model named it: pass the name through from the
    /// framework whenever tools are routed by name (a [`ToolSet`](crate::ToolSet) with prefixes),
    /// so that a call of another tool fails as [`CallError::WrongTool`](crate::CallError)
    /// instead of being answered. Default: [`TOOL_NAME`](crate::TOOL_NAME).
    #[must_use]
    pub fn with_tool_name(self, tool_name: &'a str) -> Self {
        Self { tool_name, ..self }
    }

    /// The model's id for the call.
    #[must_use]
    pub fn call_id(&self) -> &'a str {
        self.call_id
    }

    /// The tool the call names.
    #[must_use]
    pub fn tool_name(&self) -> &'a str {
        self.tool_name
    }

    /// The arguments.
    #[must_use]
    pub fn arguments(&self) -> Arguments<'a> {
        self.arguments
    }
}
