//! [`ApiError`]: every way a `/v1` request fails, as one enum with a stable JSON `error` code.

use askuser_client::wire::ErrorCode;
use askuser_store::{PendingRecord, StoreError};
use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// A `/v1` request failed. Becomes `{"error": CODE, "message": TEXT, …}` with the status
/// [`status`](Self::status); the code ([`code`](Self::code)) is stable, the message is for people.
///
/// No variant carries an internal error's text, a path or a secret to the client: a store failure
/// is logged on the server (with its causes) and reaches the client as `store_unavailable` (the
/// database cannot be reached or cannot write just now: try again) or `internal`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// No `Authorization: Bearer TOKEN` header, or a wrong token. 401 `unauthorized`.
    #[error("a valid API token is required (Authorization: Bearer TOKEN)")]
    Unauthorized,
    /// This client presented too many wrong tokens: 429 `too_many_attempts`, with `Retry-After`
    /// (the same bucket as `/login`'s).
    #[error("too many wrong API tokens from this client: try again in {wait_secs} s")]
    TooManyAttempts {
        /// Seconds until the client may try again.
        wait_secs: u64,
    },
    /// No question has this id. 404 `not_found`.
    #[error("no question has id {id:?}")]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// No route has this path. 404 `no_route`.
    #[error("no such endpoint")]
    NoRoute,
    /// The route exists but not with this method. 405 `method_not_allowed`.
    #[error("method not allowed on this endpoint")]
    MethodNotAllowed,
    /// The question was already answered or declined; the body's `record` holds the first answer.
    /// 409 `already_answered`.
    #[error("the question was already answered; the first answer stands")]
    AlreadyAnswered {
        /// The record with the first answer.
        first: Box<PendingRecord>,
    },
    /// The question timed out or was cancelled. 410 `closed`, with the `record`.
    #[error("the question is {} and can no longer be answered", .record.state())]
    Closed {
        /// The record as it stands.
        record: Box<PendingRecord>,
    },
    /// An ask with an id that a different question already has, or a question that is no
    /// longer pending (an id is reused only by a retry of the same ask while it waits).
    /// 409 `id_taken`.
    #[error("{}", id_taken(id, settled.as_ref()))]
    IdTaken {
        /// The id.
        id: String,
        /// The state of the question that has the id, when it is settled; `None` when a
        /// different question, still pending, has it.
        settled: Option<askuser_store::State>,
    },
    /// The tool-call arguments are invalid; `retry_payload` is what the model should read.
    /// 422 `invalid_arguments`.
    #[error("invalid tool-call arguments: {message}")]
    InvalidArguments {
        /// The validation error, for people.
        message: String,
        /// The retry payload the model receives for these arguments.
        retry_payload: String,
    },
    /// The answer does not fit the question; nothing was written. 422 `invalid_response`.
    #[error("the answer does not fit the question: {message}")]
    InvalidResponse {
        /// What is wrong with it.
        message: String,
    },
    /// A field of the body has a value the endpoint does not take. 422 `invalid_field`.
    #[error("invalid {field}: {message}")]
    InvalidField {
        /// The field's name.
        field: &'static str,
        /// Why.
        message: String,
    },
    /// The body is not the JSON the endpoint takes. 400 `malformed_body`.
    #[error("malformed request body: {message}")]
    MalformedBody {
        /// Where and what, as the JSON reader says it.
        message: String,
    },
    /// The body is not `Content-Type: application/json`. 415 `unsupported_media_type`.
    #[error("the request body must be JSON (Content-Type: application/json)")]
    UnsupportedMediaType,
    /// The body is larger than the server accepts. 413 `body_too_large`.
    #[error("the request body is larger than {limit} bytes")]
    BodyTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// A query parameter is invalid. 400 `invalid_query`.
    #[error("invalid query: {message}")]
    InvalidQuery {
        /// Which parameter, and why.
        message: String,
    },
    /// The server is shutting down; ask another replica or retry. 503 `shutting_down`.
    #[error("the server is shutting down")]
    ShuttingDown,
    /// The store cannot be reached or cannot write just now (the database is down, the disk is
    /// full): nothing was done; try again (the response carries `Retry-After`). Details are in
    /// the server's log. 503 `store_unavailable`.
    #[error("the store is unavailable: nothing was done; try again in a moment")]
    StoreUnavailable,
    /// The store failed (details are in the server's log). 500 `internal`.
    #[error("internal error")]
    Internal,
}

impl ApiError {
    /// The stable code in the body's `error` field.
    #[must_use]
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Unauthorized => ErrorCode::Unauthorized,
            Self::TooManyAttempts { .. } => ErrorCode::TooManyAttempts,
            Self::NotFound { .. } => ErrorCode::NotFound,
            Self::NoRoute => ErrorCode::NoRoute,
            Self::MethodNotAllowed => ErrorCode::MethodNotAllowed,
            Self::AlreadyAnswered { .. } => ErrorCode::AlreadyAnswered,
            Self::Closed { .. } => ErrorCode::Closed,
            Self::IdTaken { .. } => ErrorCode::IdTaken,
            Self::InvalidArguments { .. } => ErrorCode::InvalidArguments,
            Self::InvalidResponse { .. } => ErrorCode::InvalidResponse,
            Self::InvalidField { .. } => ErrorCode::InvalidField,
            Self::MalformedBody { .. } => ErrorCode::MalformedBody,
            Self::UnsupportedMediaType => ErrorCode::UnsupportedMediaType,
            Self::BodyTooLarge { .. } => ErrorCode::BodyTooLarge,
            Self::InvalidQuery { .. } => ErrorCode::InvalidQuery,
            Self::ShuttingDown => ErrorCode::ShuttingDown,
            Self::StoreUnavailable => ErrorCode::StoreUnavailable,
            Self::Internal => ErrorCode::Internal,
        }
    }

    /// The HTTP status.
    #[must_use]
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::TooManyAttempts { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::NotFound { .. } | Self::NoRoute => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::AlreadyAnswered { .. } | Self::IdTaken { .. } => StatusCode::CONFLICT,
            Self::Closed { .. } => StatusCode::GONE,
            Self::InvalidArguments { .. } | Self::InvalidResponse { .. } | Self::InvalidField { .. } => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            Self::MalformedBody { .. } | Self::InvalidQuery { .. } => StatusCode::BAD_REQUEST,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::BodyTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::ShuttingDown | Self::StoreUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// A store error as the client may see it; a database failure is logged here (with its
    /// causes) and becomes [`StoreUnavailable`](Self::StoreUnavailable) when the database cannot
    /// be reached or cannot write, else [`Internal`](Self::Internal).
    pub(crate) fn from_store(error: StoreError) -> Self {
        match error {
            StoreError::NotFound { id } => Self::NotFound { id },
            StoreError::Conflict { first } => Self::AlreadyAnswered { first },
            StoreError::Closed { record } => Self::Closed { record },
            StoreError::IdTaken { id } => Self::IdTaken { id, settled: None },
            StoreError::InvalidResponse { source, .. } => {
                Self::InvalidResponse { message: source.to_string() }
            }
            other if other.is_unavailable() => {
                tracing::error!(error = %with_causes(&other), "the store is unavailable");
                Self::StoreUnavailable
            }
            other => {
                tracing::error!(error = %with_causes(&other), "store failure");
                Self::Internal
            }
        }
    }

    /// A JSON body the extractor rejected.
    pub(crate) fn from_json_rejection(rejection: &JsonRejection, limit: usize) -> Self {
        match rejection {
            JsonRejection::MissingJsonContentType(_) => Self::UnsupportedMediaType,
            other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => Self::BodyTooLarge { limit },
            other => Self::MalformedBody { message: other.body_text() },
        }
    }

    /// A query string the extractor rejected.
    pub(crate) fn from_query_rejection(rejection: &QueryRejection) -> Self {
        Self::InvalidQuery { message: rejection.body_text() }
    }
}

/// The `Retry-After` of a `503`, in seconds: long enough not to hammer a database that is
/// coming back, short enough that an asker notices the recovery soon.
pub(crate) const RETRY_AFTER_SECS: u64 = 2;

/// The longest one store call (a read or a write, not a wait) may take before the request fails
/// as `store_unavailable`: a database that does not answer must not hold requests for the pool's
/// own timeout (30 s by default in sqlx).
pub(crate) const STORE_CALL_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// `call` (a store read or write), bounded by [`STORE_CALL_LIMIT`], its error as the client
/// may see it.
pub(crate) async fn bounded<T>(call: impl Future<Output = Result<T, StoreError>>) -> Result<T, ApiError> {
    match tokio::time::timeout(STORE_CALL_LIMIT, call).await {
        Ok(result) => result.map_err(ApiError::from_store),
        Err(_elapsed) => {
            tracing::error!(
                limit_secs = STORE_CALL_LIMIT.as_secs(),
                "the store is unavailable: it did not answer in time"
            );
            Err(ApiError::StoreUnavailable)
        }
    }
}

fn id_taken(id: &str, settled: Option<&askuser_store::State>) -> String {
    match settled {
        Some(state) => format!(
            "id {id:?} belongs to a question that is already {state}: an id is reused only to retry \
             the same ask while it waits; ask with a new id"
        ),
        None => format!("id {id:?} is already taken by a different question"),
    }
}

/// `error` followed by its causes: the one spelling the CLIs use too.
pub(crate) use askuser_tool::exit::with_causes;

pub(crate) use askuser_client::wire::ErrorBody;

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, error, message) = (self.status(), self.code(), self.to_string());
        let retry_after = match self {
            Self::StoreUnavailable | Self::ShuttingDown => Some(RETRY_AFTER_SECS),
            Self::TooManyAttempts { wait_secs } => Some(wait_secs),
            _ => None,
        };
        let unauthorized = matches!(self, Self::Unauthorized);
        let (record, retry_payload) = match self {
            Self::AlreadyAnswered { first: record } | Self::Closed { record } => (Some(*record), None),
            Self::InvalidArguments { retry_payload, .. } => (None, Some(retry_payload)),
            _ => (None, None),
        };
        let body = ErrorBody { error, message, record, retry_payload };
        let mut response = (status, Json(body)).into_response();
        if let Some(secs) = retry_after {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from(secs));
        }
        if unauthorized {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer realm=\"askuser\""),
            );
        }
        response
    }
}
