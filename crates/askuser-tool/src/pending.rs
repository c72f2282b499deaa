//! A deferred question: serialisable, resumable in another process.

use std::fmt;

use askuser_core::{AskUserRequest, AskUserResponse, AskUserResult, Questions, ResponseError, Validator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::call::ToolCall;
use crate::definition::TOOL_NAME;
use crate::error::RebuildError;

/// The version of the [`PendingQuestion`] wire shape this crate writes and reads.
pub const PENDING_VERSION: u32 = 1;

/// A deferred `ask_user_question` call: the validated request (whose id is the tool-call id) and
/// the tool it came through. The host stores it while the run is paused, shows it to the person,
/// and later turns their response into the exact tool result an inline call would have produced
/// with [`PendingQuestion::result`].
///
/// Serialises as (see `docs/wire.md`):
///
/// ```json
/// {"version":1,"tool_call_id":"call_1","tool_name":"ask_user_question",
///  "arguments":{"questions":[{"header":"…","question":"…","options":[{"label":"…","description":null}],"multi_select":false}]}}
/// ```
///
/// `arguments` are the normalised (trimmed) arguments; reading them back validates them again.
/// Another `version` is rejected.
#[derive(Clone, PartialEq, Eq)]
pub struct PendingQuestion {
    tool_name: String,
    request: AskUserRequest,
}

impl PendingQuestion {
    pub(crate) fn new(tool_name: String, request: AskUserRequest) -> Self {
        Self { tool_name, request }
    }

    /// Rebuilds the pending question from the paused run's tool call: the same request the
    /// `Requested` event carried, with the call id as its id. Uses the default argument-size cap;
    /// [`AskUser::rebuild`](crate::AskUser::rebuild) uses the capability's own settings.
    ///
    /// # Errors
    ///
    /// The call names another tool than `ask_user_question`, or its arguments do not validate.
    pub fn from_tool_call(call: ToolCall<'_>) -> Result<Self, RebuildError> {
        Self::rebuild(call, TOOL_NAME, Validator::new())
    }

    pub(crate) fn rebuild(
        call: ToolCall<'_>,
        tool_name: &str,
        validator: Validator,
    ) -> Result<Self, RebuildError> {
        if call.tool_name() != tool_name {
            return Err(RebuildError::WrongTool {
                expected: tool_name.to_owned(),
                found: call.tool_name().to_owned(),
            });
        }
        let questions = call.arguments().validate(validator).map_err(RebuildError::InvalidArguments)?;
        Ok(Self::new(tool_name.to_owned(), AskUserRequest::with_id(call.call_id(), questions)))
    }

    /// The request to put to the person; its id is the tool-call id.
    #[must_use]
    pub fn request(&self) -> &AskUserRequest {
        &self.request
    }

    /// The tool-call id to answer under.
    #[must_use]
    pub fn tool_call_id(&self) -> &str {
        self.request.id()
    }

    /// The tool name the call used.
    #[must_use]
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// Checks `response` against the request and renders the tool result, byte-identical to what
    /// the inline call would have returned. No event fires.
    ///
    /// # Errors
    ///
    /// The response does not fit the request (see [`askuser_core::check_response`]).
    pub fn result(&self, response: &AskUserResponse) -> Result<AskUserResult, ResponseError> {
        askuser_core::ask_user_result(&self.request, response)
    }
}

impl fmt::Debug for PendingQuestion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingQuestion")
            .field("tool_name", &self.tool_name)
            .field("request", &self.request)
            .finish()
    }
}

#[derive(Serialize)]
struct WireOut<'a> {
    version: u32,
    tool_call_id: &'a str,
    tool_name: &'a str,
    arguments: &'a Questions,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WireIn {
    version: u32,
    tool_call_id: String,
    tool_name: String,
    arguments: Questions,
}

impl Serialize for PendingQuestion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        WireOut {
            version: PENDING_VERSION,
            tool_call_id: self.request.id(),
            tool_name: &self.tool_name,
            arguments: self.request.questions(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for PendingQuestion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = WireIn::deserialize(deserializer)?;
        if wire.version != PENDING_VERSION {
            return Err(serde::de::Error::custom(format_args!(
                "unsupported pending question version {} (this build reads version {PENDING_VERSION})",
                wire.version
            )));
        }
        Ok(Self::new(wire.tool_name, AskUserRequest::with_id(wire.tool_call_id, wire.arguments)))
    }
}
