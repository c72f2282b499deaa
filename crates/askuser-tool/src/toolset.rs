//! One `ask_user_question` per agent: merging capabilities stated twice, prefixing distinct ones.

use askuser_core::{AskContext, Profile};

use crate::call::ToolCall;
use crate::capability::AskUser;
use crate::definition::{EXTENDED_INSTRUCTIONS, INSTRUCTIONS, ToolDefinition};
use crate::error::{CallError, CombineError};
use crate::outcome::CallOutcome;
use crate::schema::Dialect;

/// The `ask_user_question` tools of one agent, after merging capabilities stated twice.
///
/// An agent has one `ask_user_question` tool. Capabilities with the same id are one answerer
/// stated twice: they merge when their configuration is equal (answerer and listeners compared by
/// identity) and are an error naming the differing fields otherwise. Two capabilities with
/// different ids need a tool-name prefix on at least one, since both register the same name.
///
/// ```
/// use askuser_tool::{AskUser, Dialect, ToolSet};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ask_user = AskUser::builder().build()?;
/// let work = AskUser::builder().id("work").build()?;
/// let tools = ToolSet::builder()
///     .include(ask_user.clone())
///     .include(ask_user) // the same capability stated twice: merged
///     .include_prefixed("work_", work)
///     .build()?;
/// let names: Vec<String> = tools.definitions(Dialect::Generic).into_iter().map(|d| d.name).collect();
/// assert_eq!(names, ["ask_user_question", "work_ask_user_question"]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ToolSet {
    tools: Vec<AskUser>,
}

/// Collects capabilities for a [`ToolSet`].
#[derive(Debug, Default)]
#[must_use]
pub struct ToolSetBuilder {
    entries: Vec<AskUser>,
}

impl ToolSet {
    /// An empty builder.
    pub fn builder() -> ToolSetBuilder {
        ToolSetBuilder::default()
    }

    /// The capabilities, one per tool name, in the order first added.
    #[must_use]
    pub fn tools(&self) -> &[AskUser] {
        &self.tools
    }

    /// The capability registered under `tool_name`.
    #[must_use]
    pub fn get(&self, tool_name: &str) -> Option<&AskUser> {
        self.tools.iter().find(|tool| tool.tool_name() == tool_name)
    }

    /// The tool definitions to register, in `dialect`.
    #[must_use]
    pub fn definitions(&self, dialect: Dialect) -> Vec<ToolDefinition> {
        self.tools.iter().map(|tool| tool.definition(dialect)).collect()
    }

    /// The instruction to add to the system prompt, once however many tools there are; `None` for
    /// an empty set. The extended profile's instruction when any tool of the set uses it (it
    /// covers multiple-choice questions too).
    #[must_use]
    pub fn instructions(&self) -> Option<&'static str> {
        if self.tools.iter().any(|tool| tool.profile() == Profile::Extended) {
            return Some(EXTENDED_INSTRUCTIONS);
        }
        (!self.tools.is_empty()).then_some(INSTRUCTIONS)
    }

    /// Routes a call to the capability registered under its tool name.
    ///
    /// A call for a tool not in the set is [`CallOutcome::Failed`] with [`CallError::WrongTool`].
    ///
    /// # Panics
    ///
    /// As [`AskUser::call`]: with a timeout, outside a Tokio runtime with its time driver enabled.
    pub async fn call(&self, call: ToolCall<'_>, context: AskContext) -> CallOutcome {
        match self.get(call.tool_name()) {
            Some(tool) => tool.call(call, context).await,
            None => CallOutcome::Failed(CallError::WrongTool {
                expected: self.tools.iter().map(AskUser::tool_name).collect::<Vec<_>>().join(" | "),
                found: call.tool_name().to_owned(),
            }),
        }
    }
}

impl ToolSetBuilder {
    /// Adds a capability under its own tool name, `ask_user_question`.
    pub fn include(mut self, capability: AskUser) -> Self {
        self.entries.push(capability);
        self
    }

    /// Adds a capability whose tool is named `prefix` + `ask_user_question` (for example
    /// `work_ask_user_question`), so that two capabilities with different ids can coexist. Takes
    /// the capability as [`include`](Self::include) does; clone it (cheap) to include it twice.
    pub fn include_prefixed(mut self, prefix: &str, capability: AskUser) -> Self {
        let name = format!("{prefix}{}", capability.tool_name());
        self.entries.push(capability.with_tool_name(name));
        self
    }

    /// Merges and checks the capabilities.
    ///
    /// # Errors
    ///
    /// [`CombineError::Conflict`] when two capabilities share an id but differ (the error names
    /// the fields), [`CombineError::DuplicateToolName`] when two ids register one tool name,
    /// [`CombineError::InvalidToolName`] when a prefix makes a name providers reject.
    pub fn build(self) -> Result<ToolSet, CombineError> {
        let mut tools: Vec<AskUser> = Vec::new();
        for entry in self.entries {
            if !valid_tool_name(entry.tool_name()) {
                return Err(CombineError::InvalidToolName { tool_name: entry.tool_name().to_owned() });
            }
            if let Some(existing) = tools.iter().find(|tool| tool.id() == entry.id()) {
                let fields = existing.differences(&entry);
                if fields.is_empty() {
                    continue;
                }
                return Err(CombineError::Conflict { id: entry.id().to_owned(), fields });
            }
            if let Some(existing) = tools.iter().find(|tool| tool.tool_name() == entry.tool_name()) {
                return Err(CombineError::DuplicateToolName {
                    tool_name: entry.tool_name().to_owned(),
                    first_id: existing.id().to_owned(),
                    second_id: entry.id().to_owned(),
                });
            }
            tools.push(entry);
        }
        Ok(ToolSet { tools })
    }
}

/// A tool name every provider accepts: 1–64 of `a-z A-Z 0-9 _ -` (`OpenAI`, Anthropic), starting
/// with a letter or `_` (Gemini).
fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
