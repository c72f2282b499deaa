//! The JSON bodies of the answer server's API (`/v1`, `/healthz`), as one set of types: the server
//! reads the requests and writes the replies with them, a client writes the requests and reads the
//! replies. `docs/wire.md` and the server's `/openapi.json` describe the same shapes.
//!
//! Records travel as askuser-store's [`PendingRecord`], read back with the checks a stored row
//! gets (the request validated again, the response checked against it).

use std::fmt;

use askuser_core::{AskUserResponse, Profile, SecretValue, Timestamp};
use askuser_store::{PendingRecord, State};
use serde::{Deserialize, Serialize};

/// `POST /v1/questions`: ask.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AskBody {
    /// The tool call's arguments: the JSON text the model sent (a string), or the parsed object
    /// (`{"questions": [...]}`).
    #[cfg_attr(feature = "schema", schema(value_type = Object))]
    pub arguments: serde_json::Value,
    /// The session (conversation) the question belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Who asks, shown to the person beside the question (the pages, the lists, notices): an
    /// agent, a project, a host ("claude-code 1.2 in ~/src/app"). One line of at most 200
    /// characters, without control characters or invisible formatting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_by: Option<String>,
    /// The id to store it under; a random one when absent. Asking again with the same id,
    /// arguments, session and tool name while the question waits returns the stored question (a
    /// retry after a lost reply); once it has settled, the id is taken (`409 id_taken`). Make ids
    /// that no other conversation can reuse (a tool-call id alone, such as `call_0`, repeats).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// How long to wait for an answer, in seconds; the server's default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<f64>,
    /// The tool name the model called. Default: `ask_user_question`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The profile to validate the arguments by: `reference` (multiple choice only) or
    /// `extended` (text and secret questions too; the server must run it). Default: the server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schema(value_type = Option<String>))]
    pub profile: Option<Profile>,
    /// The asker waits for the answer now, long-polling `/wait`: the question holds a lease that
    /// the ask and each wait renew, and is withdrawn (`cancelled`; its page says the assistant
    /// stopped waiting, an answer is refused) once no wait has held it for the server's lease
    /// (30 s by default), as when the asker was killed. Default `false`: a deferred question,
    /// which waits for its deadline whoever waits.
    #[serde(default)]
    pub live: bool,
}

/// The reply to an ask (`201`): the question was asked, or an ask repeated with the same id and
/// arguments while it waits.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct AskReply {
    /// The question's id.
    pub id: String,
    /// The page link: the public URL, the path and the batch token.
    pub url: String,
    /// When it expires (RFC 3339).
    #[cfg_attr(feature = "schema", schema(value_type = String))]
    pub expires_at: Timestamp,
    /// The stored record (see docs/wire.md).
    #[cfg_attr(feature = "schema", schema(value_type = Object))]
    pub record: PendingRecord,
}

/// `GET /v1/questions/{id}/wait`'s query.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
#[serde(deny_unknown_fields)]
pub struct WaitQuery {
    /// How long to hold the request open, in seconds (at most the server's maximum wait).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<f64>,
}

/// The answer to a wait: `done` once the question left `pending`; `result` is then the tool
/// result the model receives (`null` for a cancelled question).
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct WaitReply {
    /// The question's id.
    pub id: String,
    /// `pending`, `answered`, `declined`, `timed_out`, `cancelled`, or `late` (answered after it
    /// timed out: `outcome` and `result` are the late answer's).
    #[cfg_attr(feature = "schema", schema(value_type = String))]
    pub state: State,
    /// Whether it left `pending`.
    pub done: bool,
    /// `answered`, `declined`, `timed_out` or `defaulted` (the result's outcome), when there is
    /// a result.
    pub outcome: Option<String>,
    /// The tool result the model receives, when there is one.
    pub result: Option<String>,
    /// The record as it stands.
    #[cfg_attr(feature = "schema", schema(value_type = Object))]
    pub record: PendingRecord,
    /// The values of a secret answer (extended profile), by `secret_name`: in the first reply
    /// that reports the answer, and never again (nor on another replica). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schema(value_type = Option<Object>))]
    pub secret_values: Option<SecretValues>,
}

/// Secret values as a JSON object `{NAME: value}`, written straight from the values and read
/// straight into them (each [`SecretValue`] zeroes its memory when it drops).
#[derive(Default)]
pub struct SecretValues(pub Vec<(String, SecretValue)>);

impl fmt::Debug for SecretValues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter().map(|(name, _)| name)).finish()
    }
}

impl SecretValues {
    /// The value named `name`, taken out.
    pub fn take(&mut self, name: &str) -> Option<SecretValue> {
        let at = self.0.iter().position(|(n, _)| n == name)?;
        Some(self.0.swap_remove(at).1)
    }
}

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

impl<'de> Deserialize<'de> for SecretValues {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = SecretValues;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of strings ({\"NAME\": \"value\"})")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<SecretValues, A::Error> {
                let mut values = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, String>()? {
                    values.push((name, SecretValue::new(value)));
                }
                Ok(SecretValues(values))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// `POST /v1/questions/{id}/answer`: an [`AskUserResponse`], and with a secret answer the values
/// (`secret_values: {NAME: value}`), which the server holds for the asker and never stores.
#[derive(Debug)]
pub struct AnswerBody {
    /// The answer, checked against the question before it is written.
    pub response: AskUserResponse,
    /// The values of its secret answers.
    pub secret_values: SecretValues,
}

impl Serialize for AnswerBody {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a> {
            #[serde(flatten)]
            response: &'a AskUserResponse,
            #[serde(skip_serializing_if = "Option::is_none")]
            secret_values: Option<&'a SecretValues>,
        }
        let secret_values = Some(&self.secret_values).filter(|v| !v.0.is_empty());
        Wire { response: &self.response, secret_values }.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for AnswerBody {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let mut body = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        let secret_values = match body.remove("secret_values") {
            None | Some(serde_json::Value::Null) => SecretValues::default(),
            Some(values) => SecretValues::deserialize(values).map_err(|_| {
                D::Error::custom("secret_values must be an object of strings ({\"NAME\": \"value\"})")
            })?,
        };
        let response =
            AskUserResponse::deserialize(serde_json::Value::Object(body)).map_err(D::Error::custom)?;
        Ok(Self { response, secret_values })
    }
}

/// An answer that committed: the record and the tool result the model receives.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct AnswerReply {
    /// The tool result the model receives.
    pub result: String,
    /// The record, answered.
    #[cfg_attr(feature = "schema", schema(value_type = Object))]
    pub record: PendingRecord,
}

/// `GET /v1/questions`'s query.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// Only this session's questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Only questions in this state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// At most this many (1–1000; default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// The previous page's `next`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// `oldest` (the default: oldest asked first) or `newest` (newest asked first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
}

/// One page of records.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ListReply {
    /// Oldest asked first (newest first with `order=newest`).
    #[cfg_attr(feature = "schema", schema(value_type = Vec<Object>))]
    pub records: Vec<PendingRecord>,
    /// The `after` of the next page; `null` on the last page.
    pub next: Option<String>,
}

/// `GET /v1/events`'s query.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
#[serde(deny_unknown_fields)]
pub struct EventParams {
    /// Only this session's events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// `GET /healthz`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Health {
    /// `ok`, `unavailable`, `cannot_write` or `shutting_down`.
    pub status: HealthStatus,
}

/// How a server is, as `/healthz` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    /// Serving, and the store answers.
    Ok,
    /// The store does not answer.
    Unavailable,
    /// The store answers reads but cannot write (a full disk): asks and answers fail with
    /// `503 store_unavailable` until it can again.
    CannotWrite,
    /// The server is shutting down.
    ShuttingDown,
}

/// The stable code of a failed request: the `error` field of its body ([`ErrorBody`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// 401: no `Authorization: Bearer TOKEN` header, or a wrong token.
    Unauthorized,
    /// 429: this client presented too many wrong tokens (as `/login` counts them); retry after
    /// `Retry-After`.
    TooManyAttempts,
    /// 404: no question has the id.
    NotFound,
    /// 404: no route has the path.
    NoRoute,
    /// 405: the route exists but not with this method.
    MethodNotAllowed,
    /// 409: the question was already answered or declined; the body's `record` holds the first
    /// answer.
    AlreadyAnswered,
    /// 410: the question timed out or was cancelled; the body's `record` says which.
    Closed,
    /// 409: the id belongs to a different question, or to one no longer pending.
    IdTaken,
    /// 422: the tool-call arguments are invalid; the body's `retry_payload` is what the model
    /// should read.
    InvalidArguments,
    /// 422: the answer does not fit the question; nothing was written.
    InvalidResponse,
    /// 422: a field of the body has a value the endpoint does not take.
    InvalidField,
    /// 400: the body is not the JSON the endpoint takes.
    MalformedBody,
    /// 415: the body is not `Content-Type: application/json`.
    UnsupportedMediaType,
    /// 413: the body is larger than the server accepts.
    BodyTooLarge,
    /// 400: a query parameter is invalid.
    InvalidQuery,
    /// 503: the server is shutting down; retry (another replica).
    ShuttingDown,
    /// 503: the store cannot be reached or cannot write just now; nothing was done; retry.
    StoreUnavailable,
    /// 500: the store failed (details are in the server's log).
    Internal,
}

impl ErrorCode {
    /// The code as the body spells it: `unauthorized`, `not_found`, …
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unauthorized => "unauthorized",
            Self::TooManyAttempts => "too_many_attempts",
            Self::NotFound => "not_found",
            Self::NoRoute => "no_route",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::AlreadyAnswered => "already_answered",
            Self::Closed => "closed",
            Self::IdTaken => "id_taken",
            Self::InvalidArguments => "invalid_arguments",
            Self::InvalidResponse => "invalid_response",
            Self::InvalidField => "invalid_field",
            Self::MalformedBody => "malformed_body",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::BodyTooLarge => "body_too_large",
            Self::InvalidQuery => "invalid_query",
            Self::ShuttingDown => "shutting_down",
            Self::StoreUnavailable => "store_unavailable",
            Self::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The body of every failed `/v1` request.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    /// The stable code.
    pub error: ErrorCode,
    /// For people; its wording may change.
    pub message: String,
    /// The record as it stands, with `already_answered` and `closed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schema(value_type = Option<Object>))]
    pub record: Option<PendingRecord>,
    /// What the model should read, with `invalid_arguments`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_payload: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_code_reads_back_as_itself() {
        for code in [
            ErrorCode::Unauthorized,
            ErrorCode::NotFound,
            ErrorCode::NoRoute,
            ErrorCode::MethodNotAllowed,
            ErrorCode::AlreadyAnswered,
            ErrorCode::Closed,
            ErrorCode::IdTaken,
            ErrorCode::InvalidArguments,
            ErrorCode::InvalidResponse,
            ErrorCode::InvalidField,
            ErrorCode::MalformedBody,
            ErrorCode::UnsupportedMediaType,
            ErrorCode::BodyTooLarge,
            ErrorCode::InvalidQuery,
            ErrorCode::ShuttingDown,
            ErrorCode::StoreUnavailable,
            ErrorCode::Internal,
        ] {
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
            assert_eq!(serde_json::from_str::<ErrorCode>(&json).unwrap(), code);
        }
    }

    #[test]
    fn an_answer_body_carries_its_secret_values_beside_the_response() {
        let text = r#"{"answers":[],"cancelled":true,"secret_values":{"API_KEY":"s3cret"}}"#;
        let mut body: AnswerBody = serde_json::from_str(text).unwrap();
        assert!(body.response.cancelled);
        assert_eq!(body.secret_values.take("API_KEY").unwrap().expose(), "s3cret");
        assert!(format!("{body:?}").find("s3cret").is_none());
        let again = serde_json::to_value(AnswerBody {
            response: AskUserResponse::declined(),
            secret_values: SecretValues(vec![("K".to_owned(), SecretValue::new("v".to_owned()))]),
        })
        .unwrap();
        assert_eq!(again["secret_values"]["K"], "v");
        assert_eq!(again["cancelled"], true);
        let wrong = serde_json::from_str::<AnswerBody>(r#"{"answers":[],"secret_values":[1]}"#).unwrap_err();
        assert!(wrong.to_string().contains("secret_values must be an object"), "{wrong}");
    }
}
