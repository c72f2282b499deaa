//! A reference answerer that hands each request to the host, which answers from whichever client
//! owns the session (docs/contract.md §4).

use std::fmt;

use askuser_core::{
    AnswerError, Answerer, AskContext, AskUserRequest, AskUserResponse, ResponseError, check_response,
};
use tokio::sync::{mpsc, oneshot};

/// Creates a session router: an [`Answerer`] to give the capability, and the stream of
/// [`RoutedRequest`]s the host serves. `capacity` bounds how many requests may wait to be picked
/// up (at least 1).
///
/// Each request carries its [`AskContext`] (with the session id the host set for the call), the
/// validated request, and a [`ReplyHandle`]. The host forwards the request to the client that
/// owns the session and answers through the handle:
///
/// - [`ReplyHandle::reply`] checks the response against the request first, so a misfit answer
///   from a client is refused (and can be corrected) before it ever reaches the model;
/// - dropping the handle, or [`ReplyHandle::decline`], declines;
/// - when the call is cancelled or times out, the handle sees it ([`ReplyHandle::is_cancelled`],
///   [`ReplyHandle::cancelled`]) so the client can take the question down.
///
/// Many sessions may be waiting at once: each request has its own handle.
///
/// ```
/// use askuser_core::{AskContext, AskUserAnswer, AskUserResponse};
/// use askuser_tool::{AskUser, ToolCall, session_router};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let (router, mut requests) = session_router(16);
/// let ask_user = AskUser::builder().answerer(router).build()?;
/// let rt = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
/// rt.block_on(async {
///     let host = async {
///         let routed = requests.recv().await.expect("a request");
///         assert_eq!(routed.context.session_id.as_deref(), Some("alice"));
///         let header = routed.request.questions().as_slice()[0].header().to_owned();
///         routed.reply.reply(AskUserResponse::answered(vec![AskUserAnswer::picked(header, ["Yes"])]))
///             .expect("a fitting reply");
///     };
///     let args = r#"{"questions":[{"header":"Go","question":"Go ahead?","options":[{"label":"Yes"},{"label":"No"}]}]}"#;
///     let call = ask_user.call(
///         ToolCall::new("call_1", args),
///         AskContext::new().with_session_id("alice"),
///     );
///     let ((), outcome) = tokio::join!(host, call);
///     assert_eq!(outcome.model_text(), Some(r#"{"Go":["Yes"]}"#));
/// });
/// # Ok(())
/// # }
/// ```
#[must_use]
pub fn session_router(capacity: usize) -> (SessionRouter, RoutedRequests) {
    let (sender, receiver) = mpsc::channel(capacity.max(1));
    (SessionRouter { sender }, RoutedRequests { receiver })
}

/// The answerer half of [`session_router`]: forwards each request to the host and awaits the
/// reply. Cheap to clone.
#[derive(Debug, Clone)]
pub struct SessionRouter {
    sender: mpsc::Sender<RoutedRequest>,
}

/// The host half of [`session_router`]: the requests waiting for an answer.
#[derive(Debug)]
pub struct RoutedRequests {
    receiver: mpsc::Receiver<RoutedRequest>,
}

impl RoutedRequests {
    /// The next request; `None` once every [`SessionRouter`] clone is gone.
    ///
    /// Dropping `RoutedRequests` stops the router: calls still waiting fail with "the session
    /// router's host has stopped serving requests" instead of being declined.
    pub async fn recv(&mut self) -> Option<RoutedRequest> {
        self.receiver.recv().await
    }
}

/// One request for the host to route: who asked, what, and how to answer.
#[derive(Debug)]
#[non_exhaustive]
pub struct RoutedRequest {
    /// The call's context: `session_id` says which client should answer.
    pub context: AskContext,
    /// The validated request.
    pub request: AskUserRequest,
    /// Answers the request; dropping it declines.
    pub reply: ReplyHandle,
}

/// Answers one routed request. Dropping it unanswered declines the request.
pub struct ReplyHandle {
    request: AskUserRequest,
    sender: oneshot::Sender<AskUserResponse>,
}

impl fmt::Debug for ReplyHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplyHandle")
            .field("request_id", &self.request.id())
            .field("cancelled", &self.sender.is_closed())
            .finish()
    }
}

/// Why a reply did not reach the call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplyError {
    /// The response does not fit the request. The handle comes back so that a corrected response
    /// can still be sent.
    #[error("the reply does not fit the request")]
    Misfit {
        /// What is wrong with the response.
        #[source]
        error: ResponseError,
        /// The handle, still usable.
        handle: ReplyHandle,
    },
    /// The call is gone: it was cancelled or timed out before the reply arrived.
    #[error("the call was cancelled or timed out before the reply arrived")]
    Cancelled,
}

impl ReplyHandle {
    /// The request being answered.
    #[must_use]
    pub fn request(&self) -> &AskUserRequest {
        &self.request
    }

    /// Checks `response` against the request and sends it to the waiting call.
    ///
    /// `Ok` means the call was still waiting when the response was handed over; a call whose
    /// timeout runs out at that same instant still reports the timeout, so the response is lost.
    ///
    /// # Errors
    ///
    /// [`ReplyError::Misfit`] (with the handle back) when the response does not fit;
    /// [`ReplyError::Cancelled`] when the call is gone.
    pub fn reply(self, response: AskUserResponse) -> Result<(), ReplyError> {
        if let Err(error) = check_response(&self.request, &response) {
            return Err(ReplyError::Misfit { error, handle: self });
        }
        self.sender.send(response).map_err(|_| ReplyError::Cancelled)
    }

    /// Declines the request (the same as dropping the handle, but says whether the call was
    /// still waiting).
    ///
    /// # Errors
    ///
    /// [`ReplyError::Cancelled`] when the call is gone.
    pub fn decline(self) -> Result<(), ReplyError> {
        self.sender.send(AskUserResponse::declined()).map_err(|_| ReplyError::Cancelled)
    }

    /// Whether the call has stopped waiting (cancelled, or timed out).
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.sender.is_closed()
    }

    /// Resolves once the call stops waiting (cancelled, or timed out); use it in a `select!`
    /// beside the client's answer to take the question down.
    pub async fn cancelled(&mut self) {
        self.sender.closed().await;
    }
}

#[askuser_core::async_trait]
impl Answerer for SessionRouter {
    async fn answer(
        &self,
        request: AskUserRequest,
        context: AskContext,
    ) -> Result<AskUserResponse, AnswerError> {
        let (sender, receiver) = oneshot::channel();
        let routed =
            RoutedRequest { context, request: request.clone(), reply: ReplyHandle { request, sender } };
        let stopped = || AnswerError::failed("the session router's host has stopped serving requests");
        if self.sender.send(routed).await.is_err() {
            return Err(stopped());
        }
        match receiver.await {
            Ok(response) => Ok(response),
            // The host dropped `RoutedRequests` with this request still queued: nobody saw it, so
            // it fails rather than telling the model the person declined. (Dropping the receiver
            // closes the channel before the queued handles are dropped.)
            Err(_) if self.sender.is_closed() => Err(stopped()),
            // A dropped handle declines: the client went away without answering.
            Err(_) => Ok(AskUserResponse::declined()),
        }
    }
}
