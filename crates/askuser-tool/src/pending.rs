//! A deferred question: serialisable, resumable in another process.

use std::fmt;

use askuser_core::{
    AskUserRequest, AskUserResponse, AskUserResult, Deadline, Profile, Questions, ResponseError, Timestamp,
    Validator,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::call::ToolCall;
use crate::definition::TOOL_NAME;
use crate::error::RebuildError;

/// The version of the [`PendingQuestion`] wire shape this crate writes. It also reads version 1
/// (no profile, no deadline stamps).
pub const PENDING_VERSION: u32 = 2;

/// A deferred `ask_user_question` call: the validated request (whose id is the tool-call id) and
/// the tool it came through. The host stores it while the run is paused, shows it to the person,
/// and later turns their response into the exact tool result an inline call would have produced
/// with [`PendingQuestion::result`].
///
/// Serialises as (see `docs/wire.md`):
///
/// ```json
/// {"version":2,"tool_call_id":"call_1","tool_name":"ask_user_question","profile":"reference",
///  "asked_at":"2026-11-30T18:30:22.123Z",
///  "arguments":{"questions":[{"header":"…","question":"…","options":[{"label":"…","description":null}],"multi_select":false}]}}
/// ```
///
/// `arguments` are the normalised (trimmed) arguments; reading them back validates them again,
/// under `profile`. `nudge_at` and `expires_at` follow `asked_at` when the question has a
/// deadline (an extended call with `timeout_seconds`). Version 1 (no `profile`, no stamps: a
/// reference question) is still read; any other version is rejected.
#[derive(Clone, PartialEq, Eq)]
pub struct PendingQuestion {
    tool_name: String,
    request: AskUserRequest,
}

impl PendingQuestion {
    pub(crate) fn new(tool_name: String, request: AskUserRequest) -> Self {
        Self { tool_name, request }
    }

    /// Rebuilds the pending question from the paused run's tool call: the same questions the
    /// `Requested` event carried, with the call id as its id, but no deadline stamps (when it was
    /// asked is not in the call: store the pending question itself to keep them). Uses the
    /// reference profile and the default argument-size cap;
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

    /// The profile the question was validated under.
    #[must_use]
    pub fn profile(&self) -> Profile {
        self.request.profile()
    }

    /// When the question was asked (`None` for one read from version 1 or rebuilt from its call).
    #[must_use]
    pub fn asked_at(&self) -> Option<Timestamp> {
        self.request.asked_at()
    }

    /// When to remind the person, if the question has a deadline.
    #[must_use]
    pub fn nudge_at(&self) -> Option<Timestamp> {
        self.request.nudge_at()
    }

    /// When the question stops being answerable, if it has a deadline.
    #[must_use]
    pub fn expires_at(&self) -> Option<Timestamp> {
        self.request.expires_at()
    }

    /// Whether the question is past its deadline at `now`: then it is never answerable, and
    /// [`result`](Self::result) reports the timeout whatever the response.
    #[must_use]
    pub fn is_expired(&self, now: Timestamp) -> bool {
        self.request.is_expired(now)
    }

    /// Checks `response` against the request and renders the tool result, byte-identical to what
    /// the inline call would have returned. No event fires. A question past its `expires_at` is
    /// not answerable: the result is then the timed-out one
    /// ([`AskUserResult::timed_out_for`]) and the response is not looked at.
    ///
    /// # Errors
    ///
    /// The response does not fit the request (see [`askuser_core::check_response`]).
    pub fn result(&self, response: &AskUserResponse) -> Result<AskUserResult, ResponseError> {
        if self.request.expires_at().is_some() && self.is_expired(Timestamp::now()) {
            return Ok(AskUserResult::timed_out_for(&self.request));
        }
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
    profile: Profile,
    #[serde(skip_serializing_if = "Option::is_none")]
    asked_at: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nudge_at: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expires_at: Option<Timestamp>,
    arguments: &'a Questions,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WireIn {
    version: u32,
    tool_call_id: String,
    tool_name: String,
    /// Version 2 only.
    #[serde(default)]
    profile: Option<Profile>,
    #[serde(default)]
    asked_at: Option<Timestamp>,
    #[serde(default)]
    nudge_at: Option<Timestamp>,
    #[serde(default)]
    expires_at: Option<Timestamp>,
    arguments: serde_json::Value,
}

impl Serialize for PendingQuestion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        WireOut {
            version: PENDING_VERSION,
            tool_call_id: self.request.id(),
            tool_name: &self.tool_name,
            profile: self.request.profile(),
            asked_at: self.request.asked_at(),
            nudge_at: self.request.nudge_at(),
            expires_at: self.request.expires_at(),
            arguments: self.request.questions(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for PendingQuestion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let wire = WireIn::deserialize(deserializer)?;
        let stamped = wire.profile.is_some()
            || wire.asked_at.is_some()
            || wire.nudge_at.is_some()
            || wire.expires_at.is_some();
        match wire.version {
            PENDING_VERSION => {}
            1 if !stamped => {}
            1 => {
                return Err(D::Error::custom(
                    "a version 1 pending question has no profile and no deadline stamps",
                ));
            }
            other => {
                return Err(D::Error::custom(format_args!(
                    "unsupported pending question version {other} (this build reads versions 1 and {PENDING_VERSION})"
                )));
            }
        }
        let deadline = match (wire.asked_at, wire.nudge_at, wire.expires_at) {
            (None, None, None) => None,
            (Some(asked), None, None) => Some(Deadline::from_parts(asked, None)),
            (Some(asked), Some(nudge), Some(expires)) => {
                Some(Deadline::from_parts(asked, Some((nudge, expires))))
            }
            _ => {
                return Err(D::Error::custom("`nudge_at` and `expires_at` go together, and need `asked_at`"));
            }
        };
        // Checked against the limits it was first validated under would be stricter than needed:
        // any `timeout_seconds` it holds was within the host's maximum when the call was made.
        let validator = Validator::new()
            .with_profile(wire.profile.unwrap_or_default())
            .with_max_timeout_seconds(u32::MAX);
        let questions = validator.validate_value(&wire.arguments).map_err(D::Error::custom)?;
        let request = AskUserRequest::with_id(wire.tool_call_id, questions);
        let request = match deadline {
            Some(deadline) => request.with_deadline(deadline),
            None => request,
        };
        Ok(Self::new(wire.tool_name, request))
    }
}
