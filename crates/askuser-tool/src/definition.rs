//! What the model is told about the tool: its name, description, parameters and one instruction.

use std::sync::OnceLock;

use serde::Serialize;
use serde_json::Value;

use crate::schema::{Dialect, parameters};

/// The tool's name, as the model calls it.
pub const TOOL_NAME: &str = "ask_user_question";

/// The tool description the model reads.
pub const DESCRIPTION: &str = "\
Ask the person you are working for one to ten multiple-choice questions, and wait for the answers. \
Use it when the task is ambiguous in a way that changes what you would do and the answer is not in \
the workspace, the files or the conversation. Each question has a short unique header, the question \
text and two to six options; set multi_select when several answers make sense. \
The result is a JSON object mapping each header to the list of labels picked, or to a one-item list \
holding the person's own words when they typed an answer instead. \
If the person declines, or nobody answers in time, the result is a plain sentence saying so: carry on, \
make a reasonable choice and say which one you made. \
A result shaped {\"answered_by\":\"unattended\",\"answers\":{...}} or with \"answered_by\":\"timeout\" \
holds default picks made without the person: they are not the person's choice and never count as \
their consent or approval.";

/// The one static instruction the capability adds to the system prompt.
pub const INSTRUCTIONS: &str = "\
When a task is ambiguous and the answer is not in the workspace or the conversation, call \
ask_user_question instead of guessing, and instead of burying a question in your reply. Offer \
concrete options with the most likely one first, and batch related questions into one call. If the \
person declines or does not answer, make a reasonable choice, state it, and continue. Answers marked \
with answered_by are defaults picked without the person: never treat them as the person's decision \
or as consent to anything.";

/// A tool definition in the shape every framework and provider uses: name, description, and a
/// JSON Schema for the arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ToolDefinition {
    /// The tool name ([`TOOL_NAME`], possibly prefixed by a tool set).
    pub name: String,
    /// The description ([`DESCRIPTION`]).
    pub description: String,
    /// The parameters schema in the requested [`Dialect`].
    pub parameters: Value,
}

impl ToolDefinition {
    /// The definition of `ask_user_question` with its parameters in `dialect`.
    #[must_use]
    pub fn new(dialect: Dialect) -> Self {
        Self::named(TOOL_NAME, dialect)
    }

    pub(crate) fn named(name: &str, dialect: Dialect) -> Self {
        Self {
            name: name.to_owned(),
            description: DESCRIPTION.to_owned(),
            parameters: cached_parameters(dialect).clone(),
        }
    }
}

/// The parameters schema in `dialect`, built by schemars once per process and dialect: a host
/// asks for the definition on every model request.
fn cached_parameters(dialect: Dialect) -> &'static Value {
    static CACHE: [OnceLock<Value>; Dialect::ALL.len()] = [const { OnceLock::new() }; Dialect::ALL.len()];
    let index = Dialect::ALL.iter().position(|d| *d == dialect).unwrap_or_default();
    CACHE[index].get_or_init(|| parameters(dialect))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards the cache: the schema of a dialect is built once (the same value every time), and
    /// is the one `parameters` builds.
    #[test]
    fn each_dialect_is_built_once() {
        for dialect in Dialect::ALL {
            assert!(std::ptr::eq(cached_parameters(dialect), cached_parameters(dialect)), "{dialect}");
            assert_eq!(ToolDefinition::new(dialect).parameters, parameters(dialect), "{dialect}");
        }
    }
}
