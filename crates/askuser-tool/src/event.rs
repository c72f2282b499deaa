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

/// The model asked something.
#[derive(Clone)]
pub struct RequestedEvent {
    pub(crate) request: AskUserRequest,
    pub(crate) deferred: bool,
    pub(crate) include_content: bool,
}

impl RequestedEvent {
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
    pub(crate) request_id: String,
    pub(crate) response: AskUserResponse,
    pub(crate) timed_out: bool,
    pub(crate) failed: bool,
    pub(crate) include_content: bool,
}

impl AnsweredEvent {
    /// The id of the request answered.
    #[must_use]
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// What the answerer returned, not yet checked against the request. A declined (cancelled)
    /// response when the answerer timed out or failed.
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
        s.field("request_id", &self.request_id);
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
    pub(crate) request_id: String,
    pub(crate) deadline: Deadline,
}

impl NudgeEvent {
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
