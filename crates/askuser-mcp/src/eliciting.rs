//! The form answerer: an `Answerer` that asks through the client's `elicitation/create` (2025-06-18
//! and 2025-11-25), shows the form again when an answer does not fit, and cancels the request on
//! the client when it stops waiting.

use std::time::Duration;

use askuser_core::{AnswerError, Answerer, AskContext, AskUserRequest, AskUserResponse};
use rmcp::model::{
    CancelledNotificationParam, ClientCapabilities, ClientResult, ElicitRequest, ElicitRequestParams,
    ElicitResult, ElicitationAction, RequestId, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleServer, ServiceError};

use crate::form::{self, FormStyle};
use crate::render::capped;

/// How much longer than the server's own timeout an `elicitation/create` request may run, so that
/// the timeout, not the request, decides when the person is cut off.
pub(crate) const REQUEST_TIMEOUT_MARGIN: Duration = Duration::from_secs(30);

/// How many times one call shows the form: an answer that does not fit is refused and the form
/// shown again, naming the problem, up to this many rounds in all. It is never taken as a
/// decline: the person did answer.
pub const FORM_ROUNDS: u8 = 5;

/// What the model is told when every round's answer missed the form ([`FORM_ROUNDS`]), `last`
/// being the last round's problem: a retry, not a decline.
pub(crate) fn misfits(last: &str) -> String {
    let last = capped(last);
    format!(
        "The person answered the form {FORM_ROUNDS} times, but no answer fitted the questions (the last: {last}), so no answer was taken. Ask again with simpler questions, or ask in your reply."
    )
}

pub(crate) fn supports_form(capabilities: &ClientCapabilities) -> bool {
    // `elicitation: {}` means form only (2025-11-25); `form` may also be named explicitly.
    capabilities.elicitation.as_ref().is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// Asks through the client's `elicitation/create` (2025-06-18 and 2025-11-25).
pub(crate) struct Eliciting {
    peer: Peer<RoleServer>,
    style: FormStyle,
    name: String,
    request_timeout: Option<Duration>,
    /// Whether a dismissed form (`cancel`) fails this answerer instead of declining, so that the
    /// questions wait on elsewhere (the inbox).
    dismissal_waits: bool,
}

impl Eliciting {
    /// Asks through `peer`'s form in `style`, in the name of `name`; each request waits at most
    /// `request_timeout`.
    pub(crate) fn new(
        peer: Peer<RoleServer>,
        style: FormStyle,
        name: String,
        request_timeout: Option<Duration>,
    ) -> Self {
        Self { peer, style, name, request_timeout, dismissal_waits: false }
    }

    /// This form, a dismissal leaving the questions to the other surfaces.
    pub(crate) fn dismissal_waits(mut self) -> Self {
        self.dismissal_waits = true;
        self
    }
}

#[askuser_core::async_trait]
impl Answerer for Eliciting {
    async fn answer(
        &self,
        request: AskUserRequest,
        _context: AskContext,
    ) -> Result<AskUserResponse, AnswerError> {
        let mut problem: Option<String> = None;
        for _round in 0..FORM_ROUNDS {
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: form::message(&self.name, problem.as_deref()),
                requested_schema: form::schema(&request, self.style),
            };
            let result = match elicit(&self.peer, params, self.request_timeout).await {
                Ok(result) => result,
                // The host answered the form with an error: its own check of what the person
                // typed failed (pydantic-ai's, for an answer past `maxLength`, quoting it twice).
                // A misfit: the form is shown again, saying so in a few words (issue 36.16).
                Err(ServiceError::McpError(error)) => {
                    problem = Some(capped(&format!("the form came back with an error: {}", error.message)));
                    continue;
                }
                Err(e) => {
                    return Err(AnswerError::failed("the client's elicitation/create failed").with_source(e));
                }
            };
            if result.action == ElicitationAction::Cancel && self.dismissal_waits {
                return Err(AnswerError::failed("the person dismissed the form"));
            }
            if result.action != ElicitationAction::Accept {
                return Ok(AskUserResponse::declined());
            }
            match form::read_answer(&request, self.style, result.content.as_ref()) {
                Ok(response) => return Ok(response),
                Err(misfit) => problem = Some(misfit.0),
            }
        }
        Err(AnswerError::retry(misfits(&problem.unwrap_or_default())))
    }
}

/// Sends `elicitation/create` and waits for the client's answer. However the wait ends before the
/// answer (the server's timeout, the client cancelling the call, the call dropped), the client is
/// sent `notifications/cancelled` for the request, so it closes the form instead of leaving the
/// person answering into the void.
async fn elicit(
    peer: &Peer<RoleServer>,
    params: ElicitRequestParams,
    timeout: Option<Duration>,
) -> Result<ElicitResult, ServiceError> {
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
    let mut options = PeerRequestOptions::no_options();
    options.timeout = timeout;
    let handle = peer.send_request_with_option(request, options).await?;
    let mut open = OpenRequest { peer: Some(peer.clone()), id: handle.id.clone() };
    // rmcp's own request timeout sends its cancellation itself.
    let response = handle.await_response().await;
    open.peer = None;
    match response? {
        ClientResult::ElicitResult(result) => Ok(result),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// An `elicitation/create` still waiting for its answer; dropped while waiting, it cancels the
/// request on the client.
struct OpenRequest {
    peer: Option<Peer<RoleServer>>,
    id: RequestId,
}

impl Drop for OpenRequest {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let params = CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("askuser stopped waiting for this answer".to_owned()),
        );
        // The notification leaves on the peer's own sender; a closed connection has no form open.
        runtime.spawn(async move {
            let _ = peer.notify_cancelled(params).await;
        });
    }
}
