//! The JSON API under `/v1`, and `/healthz`.

use std::sync::Arc;
use std::time::Duration;

use askuser_core::{AskUserRequest, AskUserResponse, Profile, SecretValue, Validator};
use askuser_store::{
    AskedBy, Cursor, ListQuery, NewQuestion, PendingRecord, State as RecordState, Timestamp,
};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::error::{ApiError, ErrorBody, bounded};
use crate::events;
use crate::http::{ApiJson, ApiQuery};
use crate::{AppState, MAX_TIMEOUT, pages};

/// The longest id or session id accepted, in characters.
const MAX_ID_CHARS: usize = 256;

/// `POST /v1/questions`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AskBody {
    /// The tool call's arguments: the JSON text the model sent (a string), or the parsed object
    /// (`{"questions": [...]}`).
    #[schema(value_type = Object)]
    arguments: serde_json::Value,
    /// The session (conversation) the question belongs to.
    #[serde(default)]
    session_id: Option<String>,
    /// Who asks, shown to the person beside the question (the pages, the lists, notices): an
    /// agent, a project, a host ("claude-code 1.2 in ~/src/app"). One line of at most 200
    /// characters, without control characters or invisible formatting.
    #[serde(default)]
    asked_by: Option<String>,
    /// The id to store it under; a random one when absent. Asking again with the same id,
    /// arguments, session and tool name while the question waits returns the stored question (a
    /// retry after a lost reply); once it has settled, the id is taken (`409 id_taken`). Make ids
    /// that no other conversation can reuse (a tool-call id alone, such as `call_0`, repeats).
    #[serde(default)]
    id: Option<String>,
    /// How long to wait for an answer, in seconds; the server's default when absent.
    #[serde(default)]
    timeout_secs: Option<f64>,
    /// The tool name the model called. Default: `ask_user_question`.
    #[serde(default)]
    tool_name: Option<String>,
    /// The profile to validate the arguments by: `reference` (multiple choice only) or
    /// `extended` (text and secret questions too; the server must run it). Default: the server's.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    profile: Option<Profile>,
    /// The asker waits for the answer now, long-polling `/wait`: the question holds a lease that
    /// the ask and each wait renew, and is withdrawn (`cancelled`; its page says the assistant
    /// stopped waiting, an answer is refused) once no wait has held it for the server's lease
    /// (30 s by default), as when the asker was killed. Default `false`: a deferred question,
    /// which waits for its deadline whoever waits.
    #[serde(default)]
    live: bool,
}

/// A question was asked (or an ask repeated with the same id and arguments).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AskReply {
    id: String,
    /// The page link: the public URL, the path and the batch token.
    url: String,
    /// When it expires (RFC 3339).
    #[schema(value_type = String)]
    expires_at: Timestamp,
    /// The stored record (see docs/wire.md).
    #[schema(value_type = Object)]
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
    if state.is_closing() {
        return Err(ApiError::ShuttingDown);
    }
    let profile = match body.profile {
        None => state.config.profile,
        Some(Profile::Extended) if state.config.profile != Profile::Extended => {
            return Err(ApiError::InvalidField {
                field: "profile",
                message: "this server takes the reference profile only (start it with --profile extended)"
                    .to_owned(),
            });
        }
        Some(profile) => profile,
    };
    let validator = Validator::new()
        .with_profile(profile)
        .with_max_timeout_seconds(u32::try_from(MAX_TIMEOUT.as_secs()).unwrap_or(u32::MAX));
    let questions = match &body.arguments {
        serde_json::Value::String(text) => validator.validate_json(text),
        other => validator.validate_value(other),
    }
    .map_err(|e| ApiError::InvalidArguments { message: e.to_string(), retry_payload: e.retry_payload() })?;
    let mut timeout = timeout_of(body.timeout_secs, state.config.default_timeout)?;
    // The model may shorten the wait (extended `timeout_seconds`), never extend it.
    if let Some(secs) = questions.timeout_seconds() {
        timeout = timeout.min(Duration::from_secs(u64::from(secs)));
    }
    // A repeated ask (a retry after a lost reply) returns the stored question and tells nobody.
    let mut repeated = false;
    let request = match body.id {
        Some(id) => {
            check_id("id", &id)?;
            if let Some(existing) = bounded(state.store.get(&id)).await? {
                if existing.state() != RecordState::Pending {
                    return Err(ApiError::IdTaken { id, settled: Some(existing.state()) });
                }
                repeated = true;
            }
            AskUserRequest::with_id(id, questions)
        }
        None => AskUserRequest::new(questions),
    };
    let mut question = NewQuestion::new(request, timeout);
    if body.live {
        question = question.lease(state.config.lease);
    }
    if let Some(session) = body.session_id {
        check_id("session_id", &session)?;
        question = question.session_id(session);
    }
    if let Some(label) = body.asked_by {
        let asked_by = AskedBy::new(&label)
            .map_err(|e| ApiError::InvalidField { field: "asked_by", message: e.to_string() })?;
        question = question.asked_by(asked_by);
    }
    if let Some(tool) = body.tool_name {
        check_id("tool_name", &tool)?;
        question = question.tool_name(tool);
    }
    let record = bounded(state.store.put(question)).await?;
    if repeated && body.live {
        // A retry of the ask renews the lease as a wait does.
        bounded(state.store.renew(record.id(), state.config.lease)).await?;
    }
    // A reused id delivers nothing of another conversation: only a retry of an ask that still
    // waits gets the stored question (a question just stored is pending; this catches one that
    // settled since the read above).
    if record.state() != RecordState::Pending {
        return Err(ApiError::IdTaken { id: record.id().to_owned(), settled: Some(record.state()) });
    }
    let url = pages::page_url(&state, record.id());
    if !repeated && let Some(hook) = &state.on_asked {
        let questions = record.request().questions();
        hook(&crate::AskedNotice {
            id: record.id().to_owned(),
            session_id: record.session_id().map(str::to_owned),
            asked_by: crate::pages::asked_by_of(&record),
            headers: questions.iter().map(|q| q.header().to_owned()).collect(),
            questions: questions.iter().map(|q| q.question().to_owned()).collect(),
            url: url.clone(),
            expires_at: record.expires_at().to_string(),
        });
    }
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

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitQuery {
    /// How long to hold the request open, in seconds (at most the server's maximum wait).
    #[serde(default)]
    timeout_secs: Option<f64>,
}

/// The answer to a wait: `done` once the question left `pending`; `result` is then the tool
/// result the model receives (`null` for a cancelled question).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct WaitReply {
    id: String,
    /// `pending`, `answered`, `declined`, `timed_out` or `cancelled`.
    #[schema(value_type = String)]
    state: RecordState,
    done: bool,
    /// `answered`, `declined`, `timed_out` (the result's outcome), when there is a result.
    outcome: Option<&'static str>,
    result: Option<String>,
    #[schema(value_type = Object)]
    record: PendingRecord,
    /// The values of a secret answer (extended profile), by `secret_name`: in the first reply
    /// that reports the answer, and never again (nor on another replica). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    secret_values: Option<SecretValues>,
}

/// Secret values as a JSON object `{NAME: value}`, written straight from the values.
#[derive(Debug)]
pub(crate) struct SecretValues(Vec<(String, SecretValue)>);

impl Serialize for SecretValues {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value.expose())?;
        }
        map.end()
    }
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
            secret_values: None,
        })
    }
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
    let record = tokio::select! {
        watched = tokio::time::timeout(limit, state.store.watch(&id)) => match watched {
            Ok(settled) => settled.map_err(ApiError::from_store)?,
            Err(_elapsed) => fetch(&state, &id).await?,
        },
        failed = hold_lease(&state, &id) => return Err(failed),
        () = state.closed() => return Err(ApiError::ShuttingDown),
    };
    let wants_secrets = record.response().is_some_and(|r| {
        record.state() == RecordState::Answered && !crate::secrets::referenced(r).is_empty()
    });
    let mut reply = WaitReply::of(record)?;
    if wants_secrets {
        reply.secret_values = state.take_secrets(&id).await.map(SecretValues);
        // The serialized reply holds the values: its buffers are zeroed once sent.
        return Ok(crate::zeroed::json(&reply));
    }
    Ok(Json(reply).into_response())
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

/// An answer that committed: the record and the tool result the model receives.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AnswerReply {
    /// The tool result the model receives.
    result: String,
    #[schema(value_type = Object)]
    record: PendingRecord,
}

#[utoipa::path(post, path = "/v1/questions/{id}/answer", params(("id" = String, Path)), security(("bearer" = [])), request_body(content = Object, description = "An AskUserResponse: {answers: [{header, selected, custom_answer, id, secret_ref}], cancelled, answered_by}; with a secret answer, also secret_values: {NAME: value}"), responses(
    (status = 200, description = "Answered (or declined): the record and the tool result", body = AnswerReply), (status = 401, description = "`unauthorized`", body = ErrorBody), (status = 404, description = "`not_found`", body = ErrorBody),
    (status = 409, description = "`already_answered` (with the first answer's `record`)", body = ErrorBody),
    (status = 410, description = "`closed` (timed out or withdrawn)", body = ErrorBody),
    (status = 422, description = "`invalid_response`", body = ErrorBody),
    (status = 503, description = "`store_unavailable` (with `Retry-After`): the answer was not stored", body = ErrorBody)))]
pub(crate) async fn answer(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    ApiJson(mut body): ApiJson<serde_json::Map<String, serde_json::Value>>,
) -> Result<Json<AnswerReply>, ApiError> {
    let secrets = secret_values(body.remove("secret_values"))?;
    let response: AskUserResponse = serde_json::from_value(serde_json::Value::Object(body))
        .map_err(|e| ApiError::MalformedBody { message: e.to_string() })?;
    let record = commit(&state, &id, &response, secrets).await?;
    let result =
        record.result().ok().flatten().map(askuser_core::AskUserResult::into_text).unwrap_or_default();
    Ok(Json(AnswerReply { result, record }))
}

/// `secret_values` of an answer body: `{NAME: value}`, or nothing.
fn secret_values(value: Option<serde_json::Value>) -> Result<Vec<crate::secrets::Secret>, ApiError> {
    let malformed = || ApiError::MalformedBody {
        message: "secret_values must be an object of strings ({\"NAME\": \"value\"})".to_owned(),
    };
    match value {
        None | Some(serde_json::Value::Null) => Ok(Vec::new()),
        Some(serde_json::Value::Object(map)) => map
            .into_iter()
            .map(|(name, value)| match value {
                serde_json::Value::String(text) => Ok((name, SecretValue::new(text))),
                _ => Err(malformed()),
            })
            .collect(),
        Some(_) => Err(malformed()),
    }
}

/// Commits an answer (with the values of its secret answers, which are held for the asker and
/// never stored) and tells listeners.
pub(crate) async fn commit(
    state: &AppState,
    id: &str,
    response: &AskUserResponse,
    secrets: Vec<crate::secrets::Secret>,
) -> Result<PendingRecord, ApiError> {
    let needs_values = !response.cancelled && !crate::secrets::referenced(response).is_empty();
    if needs_values || !secrets.is_empty() {
        let record = fetch(state, id).await?;
        if record.state() == RecordState::Pending {
            crate::secrets::check_values(record.request(), response, &secrets)
                .map_err(|message| ApiError::InvalidResponse { message })?;
        }
    }
    match bounded(state.store.answer(id, response)).await {
        Ok(record) => {
            state.hold_secrets(id, secrets);
            Ok(record)
        }
        Err(error) => Err(error),
    }
}

#[utoipa::path(post, path = "/v1/questions/{id}/cancel", params(("id" = String, Path)), security(("bearer" = [])), responses(
    (status = 200, description = "The record, `cancelled` unless it had already left pending", body = Object), (status = 401, description = "`unauthorized`", body = ErrorBody), (status = 404, description = "`not_found`", body = ErrorBody),
    (status = 503, description = "`store_unavailable` (with `Retry-After`)", body = ErrorBody)))]
pub(crate) async fn cancel(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<PendingRecord>, ApiError> {
    Ok(Json(bounded(state.store.cancel(&id)).await?))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListParams {
    /// Only this session's questions.
    #[serde(default)]
    session_id: Option<String>,
    /// Only questions in this state.
    #[serde(default)]
    state: Option<String>,
    /// At most this many (1–1000; default 100).
    #[serde(default)]
    limit: Option<usize>,
    /// The previous page's `next`.
    #[serde(default)]
    after: Option<String>,
    /// `oldest` (the default: oldest asked first) or `newest` (newest asked first).
    #[serde(default)]
    order: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ListReply {
    /// Oldest asked first (newest first with `order=newest`).
    #[schema(value_type = Vec<Object>)]
    records: Vec<PendingRecord>,
    /// The `after` of the next page; `null` on the last page.
    next: Option<String>,
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

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventParams {
    /// Only this session's events.
    #[serde(default)]
    session_id: Option<String>,
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

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Health {
    /// `ok`, `unavailable` or `shutting_down`.
    status: &'static str,
}

#[utoipa::path(get, path = "/healthz", responses((status = 200, description = "Serving, and the store answers", body = Health), (status = 503, description = "The store does not answer, or the server is shutting down", body = Health)))]
/// `GET /healthz`: 200 `{"status":"ok"}` when the store answers a read; 503 with
/// `unavailable` or `shutting_down` otherwise. No token needed; it tells nothing else.
pub(crate) async fn healthz(State(state): State<Arc<AppState>>) -> Response {
    if state.is_closing() {
        return (StatusCode::SERVICE_UNAVAILABLE, Json(Health { status: "shutting_down" })).into_response();
    }
    match bounded(state.store.get("")).await {
        Ok(_) => Json(Health { status: "ok" }).into_response(),
        // Logged (with the causes) where the store error became an `ApiError`.
        Err(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            [(axum::http::header::RETRY_AFTER, crate::error::RETRY_AFTER_SECS.to_string())],
            Json(Health { status: "unavailable" }),
        )
            .into_response(),
    }
}
