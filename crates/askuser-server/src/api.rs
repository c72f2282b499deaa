//! The JSON API under `/v1`, and `/healthz`.

use std::sync::Arc;
use std::time::Duration;

use askuser_core::{AskUserRequest, AskUserResponse, Validator};
use askuser_store::{Cursor, ListQuery, NewQuestion, PendingRecord, State as RecordState, Timestamp};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::events::{self, ServerEvent};
use crate::http::{ApiJson, ApiQuery};
use crate::{AppState, MAX_TIMEOUT, pages};

/// The longest id or session id accepted, in characters.
const MAX_ID_CHARS: usize = 256;

/// `POST /v1/questions`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AskBody {
    /// The tool call's arguments: the JSON text the model sent (a string), or the parsed object.
    arguments: serde_json::Value,
    /// The session (conversation) the question belongs to.
    #[serde(default)]
    session_id: Option<String>,
    /// The id to store it under (the tool-call id); a random one when absent. Asking again with
    /// the same id and arguments returns the stored question.
    #[serde(default)]
    id: Option<String>,
    /// How long to wait for an answer, in seconds; the server's default when absent.
    #[serde(default)]
    timeout_secs: Option<f64>,
    /// The tool name the model called. Default: `ask_user_question`.
    #[serde(default)]
    tool_name: Option<String>,
}

#[derive(Debug, Serialize)]
pub(crate) struct AskReply {
    id: String,
    /// The page link: the public URL, the path and the batch token.
    url: String,
    expires_at: Timestamp,
    record: PendingRecord,
}

fn check_id(field: &'static str, value: &str) -> Result<(), ApiError> {
    let chars = value.chars().count();
    if chars == 0 || chars > MAX_ID_CHARS {
        return Err(ApiError::InvalidField {
            field,
            message: format!("must have 1 to {MAX_ID_CHARS} characters"),
        });
    }
    if value.chars().any(|c| askuser_core::is_forbidden_char(c, false)) {
        return Err(ApiError::InvalidField {
            field,
            message: "must not contain control characters or invisible formatting".to_owned(),
        });
    }
    Ok(())
}

fn timeout_of(secs: Option<f64>, default: Duration) -> Result<Duration, ApiError> {
    let Some(secs) = secs else { return Ok(default) };
    Duration::try_from_secs_f64(secs).ok().filter(|d| !d.is_zero() && *d <= MAX_TIMEOUT).ok_or_else(|| {
        ApiError::InvalidField {
            field: "timeout_secs",
            message: format!("must be a number of seconds above 0 and at most {}", MAX_TIMEOUT.as_secs()),
        }
    })
}

pub(crate) async fn ask(
    State(state): State<Arc<AppState>>,
    ApiJson(body): ApiJson<AskBody>,
) -> Result<Response, ApiError> {
    if state.is_closing() {
        return Err(ApiError::ShuttingDown);
    }
    let validator = Validator::new();
    let questions = match &body.arguments {
        serde_json::Value::String(text) => validator.validate_json(text),
        other => validator.validate_value(other),
    }
    .map_err(|e| ApiError::InvalidArguments { message: e.to_string(), retry_payload: e.retry_payload() })?;
    let timeout = timeout_of(body.timeout_secs, state.config.default_timeout)?;
    // A repeated ask (a retry after a lost reply) returns the stored question and tells nobody.
    let mut repeated = false;
    let request = match body.id {
        Some(id) => {
            check_id("id", &id)?;
            repeated = state.store.get(&id).await.map_err(ApiError::from_store)?.is_some();
            AskUserRequest::with_id(id, questions)
        }
        None => AskUserRequest::new(questions),
    };
    let mut question = NewQuestion::new(request, timeout);
    if let Some(session) = body.session_id {
        check_id("session_id", &session)?;
        question = question.session_id(session);
    }
    if let Some(tool) = body.tool_name {
        check_id("tool_name", &tool)?;
        question = question.tool_name(tool);
    }
    let record = state.store.put(question).await.map_err(ApiError::from_store)?;
    let url = pages::page_url(&state, record.id());
    if !repeated {
        state.publish(ServerEvent::of(&record));
        if let Some(hook) = &state.on_asked {
            let questions = record.request().questions();
            hook(&crate::AskedNotice {
                id: record.id().to_owned(),
                session_id: record.session_id().map(str::to_owned),
                headers: questions.iter().map(|q| q.header().to_owned()).collect(),
                questions: questions.iter().map(|q| q.question().to_owned()).collect(),
                url: url.clone(),
                expires_at: record.deadlines().expires_at().to_string(),
            });
        }
    }
    let reply =
        AskReply { id: record.id().to_owned(), url, expires_at: record.deadlines().expires_at(), record };
    Ok((StatusCode::CREATED, Json(reply)).into_response())
}

async fn fetch(state: &AppState, id: &str) -> Result<PendingRecord, ApiError> {
    state
        .store
        .get(id)
        .await
        .map_err(ApiError::from_store)?
        .ok_or_else(|| ApiError::NotFound { id: id.to_owned() })
}

pub(crate) async fn get(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<PendingRecord>, ApiError> {
    fetch(&state, &id).await.map(Json)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitQuery {
    /// How long to hold the request open, in seconds (at most the server's maximum wait).
    #[serde(default)]
    timeout_secs: Option<f64>,
}

/// The answer to a wait: `done` once the question left `pending`; `result` is then the tool
/// result the model receives (`null` for a cancelled question).
#[derive(Debug, Serialize)]
pub(crate) struct WaitReply {
    id: String,
    state: RecordState,
    done: bool,
    /// `answered`, `declined`, `timed_out` (the result's outcome), when there is a result.
    outcome: Option<&'static str>,
    result: Option<String>,
    record: PendingRecord,
}

impl WaitReply {
    fn of(record: PendingRecord) -> Result<Self, ApiError> {
        let result = record.result().map_err(|e| {
            tracing::error!(error = %e, "a stored response does not fit its request");
            ApiError::Internal
        })?;
        Ok(Self {
            id: record.id().to_owned(),
            state: record.state(),
            done: record.state() != RecordState::Pending,
            outcome: result.as_ref().map(|r| r.outcome().as_str()),
            result: result.map(askuser_core::AskUserResult::into_text),
            record,
        })
    }
}

pub(crate) async fn wait(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<WaitQuery>,
) -> Result<Json<WaitReply>, ApiError> {
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
    let record = tokio::select! {
        watched = tokio::time::timeout(limit, state.store.watch(&id)) => match watched {
            Ok(settled) => settled.map_err(ApiError::from_store)?,
            Err(_elapsed) => fetch(&state, &id).await?,
        },
        () = state.closed() => return Err(ApiError::ShuttingDown),
    };
    WaitReply::of(record).map(Json)
}

/// An answer that committed: the record and the tool result the model receives.
#[derive(Debug, Serialize)]
pub(crate) struct AnswerReply {
    result: String,
    record: PendingRecord,
}

pub(crate) async fn answer(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    ApiJson(response): ApiJson<AskUserResponse>,
) -> Result<Json<AnswerReply>, ApiError> {
    let record = commit(&state, &id, &response).await?;
    let result =
        record.result().ok().flatten().map(askuser_core::AskUserResult::into_text).unwrap_or_default();
    Ok(Json(AnswerReply { result, record }))
}

/// Commits an answer and tells listeners, including when the answer lost to a change that
/// committed first (the record they show is stale either way).
pub(crate) async fn commit(
    state: &AppState,
    id: &str,
    response: &AskUserResponse,
) -> Result<PendingRecord, ApiError> {
    match state.store.answer(id, response).await {
        Ok(record) => {
            state.publish(ServerEvent::of(&record));
            Ok(record)
        }
        Err(error) => Err(ApiError::from_store(error)),
    }
}

pub(crate) async fn cancel(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<PendingRecord>, ApiError> {
    let before = fetch(&state, &id).await?;
    let record = state.store.cancel(&id).await.map_err(ApiError::from_store)?;
    if record.version() != before.version() {
        state.publish(ServerEvent::of(&record));
    }
    Ok(Json(record))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListParams {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    after: Option<String>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ListReply {
    records: Vec<PendingRecord>,
    /// The `after` of the next page; `null` on the last page.
    next: Option<String>,
}

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
    if let Some(after) = params.after {
        let cursor: Cursor = after
            .parse()
            .map_err(|e: askuser_store::InvalidCursor| ApiError::InvalidQuery { message: e.to_string() })?;
        query = query.after(cursor);
    }
    let page = state.store.list(&query).await.map_err(ApiError::from_store)?;
    Ok(Json(ListReply { records: page.records, next: page.next.map(|c| c.to_string()) }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventParams {
    #[serde(default)]
    session_id: Option<String>,
}

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

#[derive(Debug, Serialize)]
struct Health {
    status: &'static str,
}

/// `GET /healthz`: 200 `{"status":"ok"}` when the store answers a read; 503 with
/// `unavailable` or `shutting_down` otherwise. No token needed; it tells nothing else.
pub(crate) async fn healthz(State(state): State<Arc<AppState>>) -> Response {
    if state.is_closing() {
        return (StatusCode::SERVICE_UNAVAILABLE, Json(Health { status: "shutting_down" })).into_response();
    }
    match state.store.get("").await {
        Ok(_) => Json(Health { status: "ok" }).into_response(),
        Err(error) => {
            tracing::error!(error = %crate::error::with_causes(&error), "health check: the store failed");
            (StatusCode::SERVICE_UNAVAILABLE, Json(Health { status: "unavailable" })).into_response()
        }
    }
}
