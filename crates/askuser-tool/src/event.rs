//! What listeners observe: a request starting to wait, and its answer arriving.

use std::fmt;

use askuser_core::{AskUserRequest, AskUserResponse, Deadline, Timestamp};

/// Something that happened during an `ask_user_question` call, dispatched immediately and in
/// order to every registered [`Listener`].
///
/// A rejected call emits nothing. An inline call emits [`Requested`](Self::Requested) just before
/// the answerer runs, [`Nudge`](Self::Nudge) at the request's `nudge_at` if it has a timeout and
/// is still waiting then, and [`Answered`](Self::Answered) once it returned, timed out or failed,
/// before the response is checked. A deferred call emits only `Requested`. A call whose future is dropped
/// while the answerer waits emits no `Answered`: clear any waiting state when the run ends too.
///
/// `Debug` shows questions and answers only when the capability's `include_content` is true;
/// otherwise it shows ids, counts and flags, never text the model or the person wrote.
#[derive(Clone)]
#[non_exhaustive]
pub enum AskUserEvent {
    /// The model asked; the answerer is about to run, or the call is being deferred.
    Requested(RequestedEvent),
    /// The answerer returned, timed out or failed.
    Answered(AnsweredEvent),
    /// The answer is still awaited at the request's `nudge_at`: remind whoever should answer.
    Nudge(NudgeEvent),
}

impl fmt::Debug for AskUserEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Requested(event) => f.debug_tuple("Requested").field(event).finish(),
            Self::Answered(event) => f.debug_tuple("Answered").field(event).finish(),
            Self::Nudge(event) => f.debug_tuple("Nudge").field(event).finish(),
        }
    }
}

/// Which tool call an event belongs to: the same for its `Requested` and `Answered` events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CallInfo {
    pub(crate) tool_call_id: String,
    pub(crate) tool_name: String,
    pub(crate) capability_id: String,
    pub(crate) session_id: Option<String>,
}

/// The getters of [`CallInfo`], on every event.
macro_rules! call_info_getters {
    () => {
        /// The model's id for the tool call.
        #[must_use]
        pub fn tool_call_id(&self) -> &str {
            &self.call.tool_call_id
        }

        /// The tool the call named (`ask_user_question`, or a prefixed name from a
        /// [`ToolSet`](crate::ToolSet)).
        #[must_use]
        pub fn tool_name(&self) -> &str {
            &self.call.tool_name
        }

        /// The id of the capability that handled the call ([`AskUser::id`](crate::AskUser::id)).
        #[must_use]
        pub fn capability_id(&self) -> &str {
            &self.call.capability_id
        }

        /// The session the call belongs to, when the host said
        /// ([`AskContext::session_id`](askuser_core::AskContext)).
        #[must_use]
        pub fn session_id(&self) -> Option<&str> {
            self.call.session_id.as_deref()
        }
    };
}

/// The model asked something.
#[derive(Clone)]
pub struct RequestedEvent {
    pub(crate) call: CallInfo,
    pub(crate) request: AskUserRequest,
    pub(crate) deferred: bool,
    pub(crate) include_content: bool,
}

impl RequestedEvent {
    call_info_getters!();

    /// The validated request.
    #[must_use]
    pub fn request(&self) -> &AskUserRequest {
        &self.request
    }

    /// Whether the call is deferred (no answerer): nobody will answer within this call.
    #[must_use]
    pub fn is_deferred(&self) -> bool {
        self.deferred
    }
}

impl fmt::Debug for RequestedEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("RequestedEvent");
        s.field("call", &self.call);
        if self.include_content {
            s.field("request", &self.request);
        } else {
            s.field("request_id", &self.request.id()).field("questions", &self.request.questions().len());
        }
        s.field("deferred", &self.deferred).finish()
    }
}

/// The answerer returned, timed out or failed.
#[derive(Clone)]
pub struct AnsweredEvent {
    pub(crate) call: CallInfo,
    pub(crate) request_id: String,
    pub(crate) response: AskUserResponse,
    pub(crate) timed_out: bool,
    pub(crate) failed: bool,
    pub(crate) include_content: bool,
}

impl AnsweredEvent {
    call_info_getters!();

    /// The id of the request answered.
    #[must_use]
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// What the answerer returned, not yet checked against the request. When the answerer timed
    /// out: the defaults the model is given under [`OnTimeout::ApplyDefaults`](crate::OnTimeout)
    /// (`answered_by` timeout), else a declined (cancelled) response; when it failed, declined.
    #[must_use]
    pub fn response(&self) -> &AskUserResponse {
        &self.response
    }

    /// The answerer ran past the timeout and was cancelled.
    #[must_use]
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// The answerer returned an error, which the call then reports.
    #[must_use]
    pub fn failed(&self) -> bool {
        self.failed
    }
}

impl fmt::Debug for AnsweredEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("AnsweredEvent");
        s.field("call", &self.call).field("request_id", &self.request_id);
        if self.include_content {
            s.field("response", &self.response);
        } else {
            s.field("answers", &self.response.answers.len())
                .field("cancelled", &self.response.cancelled)
                .field("answered_by", &self.response.answered_by);
        }
        s.field("timed_out", &self.timed_out).field("failed", &self.failed).finish()
    }
}

/// An inline call with a timeout is still waiting at its request's `nudge_at`: the moment to
/// remind the person (`expires_at` − min(60 s, ⌈timeout / 5⌉)). Fired once, only while the
/// answerer still waits, and only when someone listens.
#[derive(Debug, Clone)]
pub struct NudgeEvent {
    pub(crate) call: CallInfo,
    pub(crate) request_id: String,
    pub(crate) deadline: Deadline,
}

impl NudgeEvent {
    call_info_getters!();

    /// The id of the request still waiting.
    #[must_use]
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// When it was asked.
    #[must_use]
    pub fn asked_at(&self) -> Timestamp {
        self.deadline.asked_at()
    }

    /// The nudge time this event is for.
    #[must_use]
    pub fn nudge_at(&self) -> Option<Timestamp> {
        self.deadline.nudge_at()
    }

    /// When the request expires (the call times out).
    #[must_use]
    pub fn expires_at(&self) -> Option<Timestamp> {
        self.deadline.expires_at()
    }
}

/// Observes [`AskUserEvent`]s. Any `Fn(&AskUserEvent) + Send + Sync` closure qualifies.
///
/// Called synchronously, inside the tool call: keep it quick, and hand slow work to a channel.
pub trait Listener: Send + Sync {
    /// Receives one event.
    fn on_event(&self, event: &AskUserEvent);
}

impl<F> Listener for F
where
    F: Fn(&AskUserEvent) + Send + Sync,
{
    fn on_event(&self, event: &AskUserEvent) {
        self(event);
    }
}
