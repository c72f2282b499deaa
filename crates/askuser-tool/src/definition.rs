//! What the model is told about the tool: its name, description, parameters and one instruction.

use std::sync::OnceLock;

use serde::Serialize;
use serde_json::Value;

use askuser_core::Profile;

use crate::schema::{Dialect, parameters_for};

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

/// The tool description the model reads in the extended profile (docs/contract.md §10).
pub const EXTENDED_DESCRIPTION: &str = "\
Ask the person you are working for one to ten questions, and wait for the answers. Use it when the \
task is ambiguous in a way that changes what you would do and the answer is not in the workspace, \
the files or the conversation. Each question has a short unique header and the question text, and \
an optional id (one is generated, q1, q2, ..., when you leave it out). \
kind \"choice\" (the default) offers two to six concrete options; set multi_select when several \
answers make sense, mark the options you would pick yourself with default: true (at most one on a \
single-select question), and set allow_other: false when only the listed options make sense. \
kind \"text\" asks for a short free-text answer and has no options: use it only when the answer \
cannot be a list of options, such as a name or a path. \
kind \"secret\" asks for a credential: only one the task cannot go on without, only alone in its \
call, with secret_name (the name a tool will read it under, like an environment variable) and \
purpose (why the task needs it). You never see the value: the answer is the reference \
session:NAME, which you pass to the tool that needs it. Never ask for a secret to be typed into a \
text question. \
Set timeout_seconds to wait less than the host's default. \
The result is always JSON: {\"status\":\"answered\"|\"declined\"|\"timed_out\",\"answered_by\":\
\"user\"|\"timeout\"|\"unattended\",\"answers\":[{\"id\",\"header\",\"selected\":[labels],\
\"other_text\":the person's own words or null,\"secret_ref\":\"session:NAME\" for a secret}]}. \
Only answered_by \"user\" is the person's choice: answers by \"timeout\" or \"unattended\" are \
defaults picked without the person, and no answer ever counts as their consent or approval. A \
declined question was seen and refused: do not ask it again; carry on without it.";

/// The one static instruction for the system prompt in the extended profile (contract §10).
pub const EXTENDED_INSTRUCTIONS: &str = "\
When a task is ambiguous and the answer is not in the workspace or the conversation, call \
ask_user_question instead of guessing, and instead of burying a question in your reply. Prefer \
choice questions with concrete options, the most likely first and marked default; ask for text only \
when no list of options fits; batch related questions into one call. Ask for a secret only when the \
task needs a credential it cannot get otherwise, alone in its call, and use the session:NAME \
reference you get back, never a value. If the person declines, do not ask the same question again: \
make a reasonable choice, state it, and continue. Answers whose answered_by is not \"user\" are \
defaults picked without the person: never treat them as the person's decision or as consent to \
anything.";

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
        Self::named(TOOL_NAME, Profile::Reference, dialect)
    }

    /// The definition of `ask_user_question` in `profile`, with its parameters in `dialect`.
    #[must_use]
    pub fn for_profile(profile: Profile, dialect: Dialect) -> Self {
        Self::named(TOOL_NAME, profile, dialect)
    }

    pub(crate) fn named(name: &str, profile: Profile, dialect: Dialect) -> Self {
        let description = match profile {
            Profile::Extended => EXTENDED_DESCRIPTION,
            _ => DESCRIPTION,
        };
        Self {
            name: name.to_owned(),
            description: description.to_owned(),
            parameters: cached_parameters(profile, dialect).clone(),
        }
    }
}

/// The parameters schema of `profile` in `dialect`, built by schemars once per process, profile
/// and dialect: a host asks for the definition on every model request.
fn cached_parameters(profile: Profile, dialect: Dialect) -> &'static Value {
    const DIALECTS: usize = Dialect::ALL.len();
    static CACHE: [OnceLock<Value>; 2 * DIALECTS] = [const { OnceLock::new() }; 2 * DIALECTS];
    let index = Dialect::ALL.iter().position(|d| *d == dialect).unwrap_or_default();
    let index = if profile == Profile::Extended { DIALECTS + index } else { index };
    CACHE[index].get_or_init(|| parameters_for(profile, dialect))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards the cache: the schema of a dialect is built once (the same value every time), and
    /// is the one `parameters_for` builds, per profile.
    #[test]
    fn each_dialect_is_built_once() {
        for profile in [Profile::Reference, Profile::Extended] {
            for dialect in Dialect::ALL {
                let cached = cached_parameters(profile, dialect);
                assert!(std::ptr::eq(cached, cached_parameters(profile, dialect)), "{dialect}");
                assert_eq!(*cached, parameters_for(profile, dialect), "{profile} {dialect}");
            }
        }
        assert_eq!(
            ToolDefinition::new(Dialect::Gemini).parameters,
            crate::schema::parameters(Dialect::Gemini)
        );
    }
}
