//! The inbox: every call's questions also put in a pending-question store (the answer server's
//! page, notices and chat channels answer them there), racing the client's form. The store
//! decides who won: an answer from the form is committed there like any other, and a second
//! answer is a conflict that returns the first.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use askuser_core::{AnswerError, AnswerErrorKind, Answerer, AskContext, AskUserRequest, AskUserResponse};
use askuser_store::{
    AskedBy, DEFAULT_LEASE, NewQuestion, PendingRecord, PendingStore, State, StoreAnswerer, StoreError,
};

use crate::eliciting::Eliciting;

/// The store of [`AskUserServerBuilder::inbox`](crate::AskUserServerBuilder::inbox).
#[derive(Clone)]
pub(crate) struct Inbox {
    pub(crate) store: Arc<dyn PendingStore>,
    /// This server process in the store's session ids (with the MCP session over HTTP): a late
    /// answer is told to the session that asked, and to no other.
    pub(crate) instance: String,
    /// The late answers told already, by id (forgotten all at once past [`Inbox::MAX_TOLD`]).
    pub(crate) told: Arc<Mutex<HashSet<String>>>,
}

impl Inbox {
    /// The most late answers remembered as told.
    pub(crate) const MAX_TOLD: usize = 10_000;
}

/// Asks in the store and, when the client can show one, in its form, at once.
pub(crate) struct InboxAnswerer {
    pub(crate) store: Arc<dyn PendingStore>,
    pub(crate) form: Option<Eliciting>,
    pub(crate) timeout: Duration,
}

#[askuser_core::async_trait]
impl Answerer for InboxAnswerer {
    async fn answer(
        &self,
        request: AskUserRequest,
        context: AskContext,
    ) -> Result<AskUserResponse, AnswerError> {
        let waiting = StoreAnswerer::new(Arc::clone(&self.store)).timeout(self.timeout);
        let Some(form) = &self.form else { return waiting.answer(request, context).await };
        // Put before the form opens, so that an answer from the form always finds its question;
        // the waiting answerer's own put of the same question is a no-op.
        self.store.put(new_question(&request, &context, self.timeout)).await.map_err(store_failure)?;
        let waiting = waiting.answer(request.clone(), context.clone());
        tokio::pin!(waiting);
        let asking = form.answer(request.clone(), context);
        tokio::pin!(asking);
        tokio::select! {
            // Answered elsewhere (or timed out): dropping the form's future cancels the open
            // `elicitation/create` on the client.
            settled = &mut waiting => settled,
            answered = &mut asking => {
                match answered {
                    Ok(response) => {
                        // `waiting` may stand inside a store call (its put, a lease renewal)
                        // holding a connection the commit needs (SQLite's one writer): the
                        // commit runs beside it, never while it stands still.
                        let committed = {
                            let committing = commit(&*self.store, request.id(), &response);
                            tokio::pin!(committing);
                            tokio::select! {
                                committed = &mut committing => committed.is_ok(),
                                // Settled first: by this commit (its watch woke), or by another
                                // surface's answer, which the store kept.
                                settled = &mut waiting => return settled,
                            }
                        };
                        if !committed {
                            // The store failed (an outage), not the answer: the person did answer.
                            return Ok(response);
                        }
                    }
                    // Every round of the form missed the questions: the model is told, as on
                    // stdio, rather than left waiting on the other surfaces.
                    Err(error) if error.kind() == AnswerErrorKind::Retry => return Err(error),
                    // Dismissed, or the client could not show it: the other surfaces go on.
                    Err(_) => {}
                }
                // Committed, or the form failed or was dismissed: the store has the outcome.
                waiting.await
            }
        }
    }
}

/// The question `request` as put in the store: under its id, session and asker.
pub(crate) fn new_question(request: &AskUserRequest, context: &AskContext, timeout: Duration) -> NewQuestion {
    let mut question = NewQuestion::new(request.clone(), timeout).lease(DEFAULT_LEASE);
    if let Some(session) = &context.session_id {
        question = question.session_id(session.as_str());
    }
    if let Some(asked_by) = context.asked_by.as_deref().and_then(AskedBy::lossy) {
        question = question.asked_by(asked_by);
    }
    question
}

/// Commits an answer from the form; the record as it then stands. A question already settled
/// (answered on another surface, timed out, withdrawn) keeps its outcome, returned as it is:
/// that is not a failure.
pub(crate) async fn commit(
    store: &dyn PendingStore,
    id: &str,
    response: &AskUserResponse,
) -> Result<PendingRecord, StoreError> {
    match store.commit_answer(id, response).await {
        Err(StoreError::Conflict { first: record } | StoreError::Closed { record }) => Ok(*record),
        answered => answered,
    }
}

/// Whether a record still waits.
pub(crate) fn is_pending(record: &PendingRecord) -> bool {
    record.state() == State::Pending
}

fn store_failure(error: StoreError) -> AnswerError {
    AnswerError::failed("the pending-question store failed").with_source(error)
}
