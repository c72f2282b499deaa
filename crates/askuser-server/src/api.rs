//! The JSON API under `/v1`, and `/healthz`.

use std::sync::Arc;
use std::time::Duration;

use askuser_client::wire::{
    AnswerBody, AnswerReply, AskBody, AskReply, EventParams, Health, HealthStatus, ListParams, ListReply,
    SecretValues, WaitQuery, WaitReply,
};
use askuser_store::{Cursor, ListQuery, PendingRecord, State as RecordState};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::error::{ApiError, ErrorBody, bounded};
use crate::events;
use crate::extract::{ApiJson, ApiQuery};
use crate::{AppState, actions};

#[utoipa::path(post, path = "/v1/questions", request_body = AskBody, security(("bearer" = [])), responses(
    (status = 201, description = "Asked: the id, the page link, the expiry and the record", body = AskReply), (status = 401, description = "`unauthorized`", body = ErrorBody),
    (status = 400, description = "`malformed_body`", body = ErrorBody), (status = 409, description = "`id_taken` (a different question has the id, or the question with it is no longer pending)", body = ErrorBody),
    (status = 413, description = "`body_too_large`", body = ErrorBody), (status = 415, description = "`unsupported_media_type`", body = ErrorBody),
    (status = 422, description = "`invalid_arguments` (with `retry_payload`) or `invalid_field`", body = ErrorBody),
    (status = 503, description = "`shutting_down` or `store_unavailable` (with `Retry-After`; nothing was stored)", body = ErrorBody)))]
pub(crate) async fn ask(
    State(state): State<Arc<AppState>>,
    ApiJson(body): ApiJson<AskBody>,
) -> Result<Response, ApiError> {
    let (record, url) = actions::ask(&state, body).await?;
    let reply = AskReply { id: record.id().to_owned(), url, expires_at: record.expires_at(), record };
    Ok((StatusCode::CREATED, Json(reply)).into_response())
}

async fn fetch(state: &AppState, id: &str) -> Result<PendingRecord, ApiError> {
    bounded(state.store.get(id)).await?.ok_or_else(|| ApiError::NotFound { id: id.to_owned() })
}

#[utoipa::path(get, path = "/v1/questions/{id}", params(("id" = String, Path)), security(("bearer" = [])), responses(
    (status = 200, description = "The record", body = Object), (status = 401, description = "`unauthorized`", body = ErrorBody), (status = 404, description = "`not_found`", body = ErrorBody),
    (status = 503, description = "`store_unavailable` (with `Retry-After`)", body = ErrorBody)))]
pub(crate) async fn get(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<PendingRecord>, ApiError> {
    fetch(&state, &id).await.map(Json)
}

#[utoipa::path(get, path = "/v1/questions/{id}/wait", params(("id" = String, Path), WaitQuery), security(("bearer" = [])), responses(
    (status = 200, description = "`done` once the question left pending; `result` is the tool result", body = WaitReply), (status = 401, description = "`unauthorized`", body = ErrorBody),
    (status = 400, description = "`invalid_query`", body = ErrorBody), (status = 404, description = "`not_found`", body = ErrorBody),
    (status = 503, description = "`shutting_down` or `store_unavailable` (with `Retry-After`): wait again", body = ErrorBody)))]
pub(crate) async fn wait(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<WaitQuery>,
) -> Result<Response, ApiError> {
    let max = state.config.max_wait;
    let limit = match query.timeout_secs {
        None => max,
        Some(secs) => Duration::try_from_secs_f64(secs).map_err(|_| ApiError::InvalidQuery {
            message: "timeout_secs must be a number of seconds, 0 or more".to_owned(),
        })?,
    }
    .min(max);
    if state.is_closing() {
        return Err(ApiError::ShuttingDown);
    }
    // Dropped with the future when the asker's connection closes: the question is withdrawn
    // then, unless another wait holds it (`waits.rs`).
    let held = crate::waits::WaitHold::new(&state, &id);
    let waited = tokio::select! {
        watched = tokio::time::timeout(limit, state.store.watch(&id)) => match watched {
            Ok(settled) => settled.map_err(ApiError::from_store),
            Err(_elapsed) => fetch(&state, &id).await,
        },
        failed = hold_lease(&state, &id) => Err(failed),
        () = state.closed() => Err(ApiError::ShuttingDown),
    };
    held.finished();
    let record = waited?;
    let wants_secrets = record.response().is_some_and(|r| {
        matches!(record.state(), RecordState::Answered | RecordState::Late)
            && !crate::secrets::referenced(r).is_empty()
    });
    let mut reply = wait_reply(record)?;
    if wants_secrets {
        reply.secret_values = state.take_secrets(&id).await.map(SecretValues);
        // The serialized reply holds the values: its buffers are zeroed once sent.
        return Ok(crate::zeroed::json(&reply));
    }
    Ok(Json(reply).into_response())
}

/// The wait's reply for `record`, without secret values.
fn wait_reply(record: PendingRecord) -> Result<WaitReply, ApiError> {
    let result = record.result().map_err(|e| {
        tracing::error!(error = %e, "a stored response does not fit its request");
        ApiError::Internal
    })?;
    Ok(WaitReply {
        id: record.id().to_owned(),
        state: record.state(),
        done: record.state() != RecordState::Pending,
        outcome: result.as_ref().map(|r| r.outcome().as_str().to_owned()),
        result: result.map(askuser_core::AskUserResult::into_text),
        record,
        secret_values: None,
    })
}

/// While a wait is held (its future is dropped when the asker's connection goes), renews the
/// question's lease every third of a lease, so a killed asker's question lapses one lease after
/// its connection went. Ends at once, renewing nothing more, for a deferred question or one that
/// settled; resolves only with the store's failure.
async fn hold_lease(state: &AppState, id: &str) -> ApiError {
    let lease = state.config.lease;
    let mut ticks = tokio::time::interval(lease / 3);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        match bounded(state.store.renew(id, lease)).await {
            Ok(true) => {}
            Ok(false) => return std::future::pending().await,
            Err(failed) => return failed,
        }
    }
}

#[utoipa::path(post, path = "/v1/questions/{id}/answer", params(("id" = String, Path)), security(("bearer" = [])), request_body(content = Object, description = "An AskUserResponse: {answers: [{header, selected, custom_answer, id, secret_ref}], cancelled, answered_by}; with a secret answer, also secret_values: {NAME: value}"), responses(
    (status = 200, description = "Answered (or declined): the record and the tool result; a question that timed out within the late window is answered `late`", body = AnswerReply), (status = 401, description = "`unauthorized`", body = ErrorBody), (status = 404, description = "`not_found`", body = ErrorBody),
    (status = 409, description = "`already_answered` (with the first answer's `record`)", body = ErrorBody),
    (status = 410, description = "`closed` (withdrawn; an approval timed out; a question timed out longer ago than the late window)", body = ErrorBody),
    (status = 422, description = "`invalid_response`", body = ErrorBody),
    (status = 503, description = "`store_unavailable` (with `Retry-After`): the answer was not stored", body = ErrorBody)))]
pub(crate) async fn answer(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<AnswerBody>,
) -> Result<Json<AnswerReply>, ApiError> {
    let via = askuser_store::Via::surface("api");
    let record = actions::answer(&state, &id, &body.response, body.secret_values.0, &via).await?;
    let result =
        record.result().ok().flatten().map(askuser_core::AskUserResult::into_text).unwrap_or_default();
    Ok(Json(AnswerReply { result, record }))
}

#[utoipa::path(post, path = "/v1/questions/{id}/cancel", params(("id" = String, Path)), security(("bearer" = [])), responses(
    (status = 200, description = "The record, `cancelled` unless it had already left pending", body = Object), (status = 401, description = "`unauthorized`", body = ErrorBody), (status = 404, description = "`not_found`", body = ErrorBody),
    (status = 503, description = "`store_unavailable` (with `Retry-After`)", body = ErrorBody)))]
pub(crate) async fn cancel(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<PendingRecord>, ApiError> {
    Ok(Json(actions::cancel(&state, &id).await?))
}

#[utoipa::path(get, path = "/v1/questions", params(ListParams), security(("bearer" = [])), responses(
    (status = 200, description = "One page of records, in the order asked, and the cursor of the next", body = ListReply), (status = 401, description = "`unauthorized`", body = ErrorBody), (status = 400, description = "`invalid_query`", body = ErrorBody),
    (status = 503, description = "`store_unavailable` (with `Retry-After`)", body = ErrorBody)))]
pub(crate) async fn list(
    State(state): State<Arc<AppState>>,
    ApiQuery(params): ApiQuery<ListParams>,
) -> Result<Json<ListReply>, ApiError> {
    let mut query = ListQuery::new();
    if let Some(session) = params.session_id {
        query = query.session_id(session);
    }
    if let Some(wanted) = params.state {
        let wanted: RecordState = wanted
            .parse()
            .map_err(|e: askuser_store::UnknownState| ApiError::InvalidQuery { message: e.to_string() })?;
        query = query.state(wanted);
    }
    if let Some(limit) = params.limit {
        query = query.limit(limit);
    }
    match params.order.as_deref() {
        None | Some("oldest") => {}
        Some("newest") => query = query.newest_first(),
        Some(other) => {
            return Err(ApiError::InvalidQuery {
                message: format!("order must be oldest or newest, got {other:?}"),
            });
        }
    }
    if let Some(after) = params.after {
        let cursor: Cursor = after
            .parse()
            .map_err(|e: askuser_store::InvalidCursor| ApiError::InvalidQuery { message: e.to_string() })?;
        query = query.after(cursor);
    }
    let page = bounded(state.store.list(&query)).await?;
    Ok(Json(ListReply { records: page.records, next: page.next.map(|c| c.to_string()) }))
}

#[utoipa::path(get, path = "/v1/events", params(EventParams), security(("bearer" = [])), responses(
    (status = 200, description = "Server-sent events named after the state (`pending`, `answered`, `declined`, `timed_out`, `cancelled`, `lagged`), data {id, session_id, state, version}", content_type = "text/event-stream"), (status = 401, description = "`unauthorized`", body = ErrorBody)))]
pub(crate) async fn events(
    State(state): State<Arc<AppState>>,
    ApiQuery(params): ApiQuery<EventParams>,
) -> Result<Response, ApiError> {
    if state.is_closing() {
        return Err(ApiError::ShuttingDown);
    }
    let session = params.session_id;
    Ok(events::stream(&state, move |event| session.is_none() || event.session_id == session).into_response())
}

#[utoipa::path(get, path = "/healthz", responses((status = 200, description = "Serving, and the store answers a read and takes a write", body = Health), (status = 503, description = "The store does not answer (`unavailable`), cannot write (`cannot_write`: a full disk), or the server is shutting down", body = Health)))]
/// `GET /healthz`: 200 `{"status":"ok"}` when the store answers a read and takes a write; 503
/// with `unavailable`, `cannot_write` or `shutting_down` otherwise. No token needed; it tells
/// nothing else.
pub(crate) async fn healthz(State(state): State<Arc<AppState>>) -> Response {
    if state.is_closing() {
        return (StatusCode::SERVICE_UNAVAILABLE, Json(Health { status: HealthStatus::ShuttingDown }))
            .into_response();
    }
    // Logged (with the causes) where the store error became an `ApiError`.
    let status = if bounded(state.store.get("")).await.is_err() {
        HealthStatus::Unavailable
    } else if state.store.cannot_write() || !state.write_probe.can_write(&*state.store).await {
        HealthStatus::CannotWrite
    } else {
        return Json(Health { status: HealthStatus::Ok }).into_response();
    };
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(axum::http::header::RETRY_AFTER, crate::error::RETRY_AFTER_SECS.to_string())],
        Json(Health { status }),
    )
        .into_response()
}

/// Whether the store takes a write, as `/healthz` says: a full disk leaves reads working, so a
/// read alone said `ok` while every ask and answer failed (issue 36.13). The store says when its
/// last ask, answer or cancel failed for want of room; when nothing was written lately, one
/// small write (a row of the channels' table that no channel uses, its value the time) at most
/// every [`WriteProbe::EVERY`], however often `/healthz` is called, finds a disk with no room
/// at all.
#[derive(Debug, Default)]
pub(crate) struct WriteProbe {
    last: tokio::sync::Mutex<Option<(tokio::time::Instant, bool)>>,
}

impl WriteProbe {
    /// The least time between two probes.
    const EVERY: std::time::Duration = std::time::Duration::from_secs(1);

    pub(crate) async fn can_write(&self, store: &dyn askuser_store::SharedStore) -> bool {
        let mut last = self.last.lock().await;
        if let Some((at, ok)) = *last
            && at.elapsed() < Self::EVERY
        {
            return ok;
        }
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let ok = bounded(store.set_value(&crate::claims::write_probe(), &now.as_millis().to_string()))
            .await
            .is_ok();
        *last = Some((tokio::time::Instant::now(), ok));
        ok
    }
}
