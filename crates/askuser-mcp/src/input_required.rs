//! The 2026-07-28 path: a first call gets an `InputRequiredResult` with a sealed one-time state,
//! the client's retry (the same arguments, the state, the form's result) completes the call; with
//! an inbox the store decides at the retry.

use std::time::{Duration, Instant};

use askuser_core::{AskUserRequest, AskUserResponse, Timestamp};
use askuser_store::{AskedBy, NewQuestion, PendingStore, StoreError};
use askuser_tool::TOOL_NAME;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitResult, ElicitationAction,
    InputRequiredResult, RequestStateError, SealOptions,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use crate::eliciting::{FORM_ROUNDS, misfits};
use crate::form::{self, FormStyle, INPUT_KEY};
use crate::inbox::{commit, is_pending};
use crate::render::{rendered, store_failed, text_result};
use crate::sealed::{State, random_nonce};
use crate::server::AskUserServer;

impl AskUserServer {
    /// The 2026-07-28 delivery: a first call gets an `InputRequiredResult`, the client's retry
    /// (same arguments, the sealed state, the form's result) completes the call.
    ///
    /// With an [inbox](AskUserServerBuilder::inbox) the first call also puts the questions in
    /// the store, where the page, notices and channels answer them, and the state names that
    /// question. That revision cannot retract the client's form, so the store decides at the
    /// retry: the form's answer (or decline) is committed there, and when another surface
    /// answered first, the call returns that answer instead. A dismissed form leaves the
    /// question to the other surfaces: the retry waits for their outcome.
    pub(crate) async fn ask_by_input_required(
        &self,
        params: &CallToolRequestParams,
        arguments: &Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let questions = match self.inner.validator.validate_value(arguments) {
            Ok(questions) => questions,
            Err(error) => return Ok(text_result(&error.retry_payload(), true).into()),
        };
        let request = AskUserRequest::new(questions);
        let bound = bound_to(&request);
        let inbox = self.inner.inbox.as_ref().map(|inbox| &*inbox.store);
        let Some(sealed) = params.request_state.as_deref() else {
            let mut record = None;
            if let Some(store) = inbox {
                // No lease: nobody waits between the two rounds; the question lives as long as
                // the state does.
                let mut question = NewQuestion::new(request.clone(), self.state_ttl_for(&request));
                if let Some(asked_by) = self.asked_by(context).as_deref().and_then(AskedBy::lossy) {
                    question = question.asked_by(asked_by);
                }
                // A store that cannot take it (an outage) still leaves the client's form.
                if store.put(question).await.is_ok() {
                    record = Some(request.id().to_owned());
                }
            }
            return Ok(self.input_required(&request, &bound, 1, None, record).into());
        };
        let state: State = match self.inner.codec.open_json_with(sealed, &bound) {
            Ok(state) => state,
            // The form was answered after the wait had ended: the same outcome, and the same
            // words, as a 2025 client's timeout (nobody answered in time), not a request to ask
            // again.
            Err(RequestStateError::Expired) => {
                let result = self
                    .inner
                    .on_timeout
                    .result(&request)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                return Ok(text_result(result.text(), false).into());
            }
            // One message for every other failure, as the codec asks: what failed is no
            // business of the client's.
            Err(_) => {
                return Err(ErrorData::invalid_params(
                    "requestState failed verification: it was altered, belongs to other arguments, or was issued by another server process",
                    None,
                ));
            }
        };
        let response = params
            .input_responses
            .as_ref()
            .and_then(|responses| responses.get(INPUT_KEY))
            .ok_or_else(|| {
                ErrorData::invalid_params(format!("the retry carries no inputResponses[{INPUT_KEY:?}]"), None)
            })?;
        let result: ElicitResult = serde_json::from_value(response.clone()).map_err(|e| {
            ErrorData::invalid_params(
                format!("inputResponses[{INPUT_KEY:?}] is not an elicitation result: {e}"),
                None,
            )
        })?;
        // Redeemed only now, so a malformed retry does not use the state up.
        self.redeem(&state.nonce)?;
        let raced = inbox.zip(state.record.as_deref());
        let response = match result.action {
            ElicitationAction::Accept => {
                match form::read_answer(&request, FormStyle::Titled2025, result.content.as_ref()) {
                    Ok(response) => response,
                    Err(misfit) if state.attempt < FORM_ROUNDS => {
                        // Answered elsewhere meanwhile: that answer, not the form again.
                        if let Some((store, id)) = raced
                            && let Ok(Some(record)) = store.get(id).await
                            && !is_pending(&record)
                        {
                            return Ok(self.settled_result(&record).into());
                        }
                        let record = state.record.clone();
                        return Ok(self
                            .input_required(&request, &bound, state.attempt + 1, Some(&misfit.0), record)
                            .into());
                    }
                    Err(misfit) => {
                        // As on 2025: the model is told, and nobody is left answering a
                        // question no call waits for.
                        if let Some((store, id)) = raced {
                            let _withdrawn = store.cancel(id).await;
                        }
                        return Ok(text_result(&misfits(&misfit.0), true).into());
                    }
                }
            }
            // Dismissed: with an inbox the other surfaces go on, and the retry waits for them.
            ElicitationAction::Cancel if let Some((store, id)) = raced => {
                return self.await_settled(store, id, context).await.map(Into::into);
            }
            _ => AskUserResponse::declined(),
        };
        let Some((store, id)) = raced else { return Ok(rendered(&request, &response).into()) };
        match commit(store, id, &response).await {
            // Committed, or settled first by another surface, whose outcome is the call's.
            Ok(record) => Ok(self.settled_result(&record).into()),
            // The store failed (an outage), not the answer: the person did answer.
            Err(_) => Ok(rendered(&request, &response).into()),
        }
    }

    /// Waits for the inbox question `id` to settle, until its deadline; the call's result.
    async fn await_settled(
        &self,
        store: &dyn PendingStore,
        id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let record = store.get(id).await.map_err(|e| store_failed(&e))?;
        let Some(record) = record else {
            return Err(ErrorData::internal_error(format!("the inbox lost question {id:?}"), None));
        };
        let left = Timestamp::now().until(record.expires_at());
        let settling = async {
            tokio::select! {
                settled = store.watch(id) => settled,
                () = tokio::time::sleep(left) => store.expire(id).await,
            }
        };
        let settled = match self.waiting(settling, context).await {
            Ok(settled) => settled,
            Err(cancelled) => {
                // Nobody will read an answer now: the other surfaces stop asking.
                let _withdrawn = store.cancel(id).await;
                return Err(cancelled);
            }
        };
        let record = match settled {
            Ok(record) => record,
            Err(StoreError::Closed { record } | StoreError::Conflict { first: record }) => *record,
            Err(e) => return Err(store_failed(&e)),
        };
        Ok(self.settled_result(&record))
    }

    /// How long a 2026-07-28 state (and its inbox question) lives: the state's TTL, or the
    /// model's own `timeout_seconds` (extended profile) when shorter.
    fn state_ttl_for(&self, request: &AskUserRequest) -> Duration {
        request
            .questions()
            .timeout_seconds()
            .map_or(self.inner.state_ttl, |s| self.inner.state_ttl.min(Duration::from_secs(u64::from(s))))
    }

    fn input_required(
        &self,
        request: &AskUserRequest,
        bound: &[u8],
        attempt: u8,
        problem: Option<&str>,
        record: Option<String>,
    ) -> InputRequiredResult {
        let state = State { nonce: random_nonce(), attempt, record };
        let options = SealOptions::new().associated_data(bound).ttl(self.state_ttl_for(request));
        // A struct of strings and a number always serialises.
        let sealed = self.inner.codec.seal_json_with(&state, &options).unwrap_or_default();
        let requests = form::input_requests(&self.inner.name, request, problem);
        InputRequiredResult::new(Some(requests), Some(sealed))
    }

    /// Marks a state's nonce as used.
    fn redeem(&self, nonce: &str) -> Result<(), ErrorData> {
        let now = Instant::now();
        let mut redeemed = self.inner.redeemed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // Every state lives for the same TTL, so redemption order is expiry order: forgetting
        // from the front is enough, and a nonce is forgotten only once the codec refuses its
        // state anyway.
        while redeemed.order.front().is_some_and(|(forget_at, _)| *forget_at <= now) {
            if let Some((_, old)) = redeemed.order.pop_front() {
                redeemed.nonces.remove(&old);
            }
        }
        if !redeemed.nonces.insert(nonce.to_owned()) {
            return Err(ErrorData::invalid_params(
                "requestState was already used: each form answer completes the call once",
                None,
            ));
        }
        redeemed.order.push_back((now + self.inner.state_ttl, nonce.to_owned()));
        Ok(())
    }
}

/// The bytes a state is bound to: the tool and its validated arguments, so a state cannot be
/// replayed against other questions.
fn bound_to(request: &AskUserRequest) -> Vec<u8> {
    let mut bound = format!("{TOOL_NAME}\0").into_bytes();
    // Serialising validated questions into memory cannot fail.
    bound.extend(serde_json::to_vec(request.questions().as_slice()).unwrap_or_default());
    bound
}
