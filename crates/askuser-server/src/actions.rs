//! The actions every surface takes (the API, the pages, a notification's one-tap answer): ask,
//! answer, cancel, each with its checks, its store call (bounded, so an unreachable database is
//! `store_unavailable`, never a hang) and what it tells (the `on_asked` hook, secret values held
//! for the asker). Handlers parse and reply; what happens is here, once.

use std::time::Duration;

use askuser_client::wire::AskBody;
use askuser_core::{
    AnsweredBy, AskUserRequest, AskUserResponse, Profile, QuestionKind, Questions, Validator,
};
use askuser_store::{
    APPROVAL_OPTIONS, APPROVAL_TOOL_NAME, AskedBy, NewQuestion, PendingRecord, State as RecordState, Via,
};

use crate::error::{ApiError, bounded};
use crate::{AppState, links};
use askuser_client::MAX_TIMEOUT;

/// The longest id or session id accepted, in characters.
const MAX_ID_CHARS: usize = 256;

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

/// An approval (docs/contract.md §17) is one single-select multiple-choice question whose options are
/// `Allow once` and `Deny`, and perhaps `Always allow`, in that order, none marked as a default:
/// nothing can then pick an answer for the person.
fn check_approval(questions: &Questions) -> Result<(), ApiError> {
    let refuse = |message: String| Err(ApiError::InvalidField { field: "arguments", message });
    let [question] = questions.as_slice() else {
        return refuse(format!("an approval is one question, not {}", questions.len()));
    };
    if question.kind() != QuestionKind::Choice || question.multi_select() {
        return refuse("an approval is a single-select multiple-choice question".to_owned());
    }
    let labels: Vec<&str> = question.options().iter().map(askuser_core::QuestionOption::label).collect();
    if labels != APPROVAL_OPTIONS[..2] && labels != APPROVAL_OPTIONS {
        return refuse(format!(
            "an approval's options are \"Allow once\", \"Deny\" and perhaps \"Always allow\", in that order; got {labels:?}"
        ));
    }
    if question.options().iter().any(askuser_core::QuestionOption::is_default) {
        return refuse("an approval has no default option".to_owned());
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

/// Asks: validates the arguments under the profile asked for, stores the question (or, for a
/// retry of the same ask while it waits, finds it stored), and tells the `on_asked` hook about a
/// new one. The record, and its page link.
pub(crate) async fn ask(state: &AppState, body: AskBody) -> Result<(PendingRecord, String), ApiError> {
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
    if body.tool_name.as_deref() == Some(APPROVAL_TOOL_NAME) {
        check_approval(&questions)?;
    }
    let mut timeout = timeout_of(body.timeout_secs, state.config.default_timeout)?;
    // The model may shorten the wait (extended `timeout_seconds`), never extend it.
    if let Some(secs) = questions.timeout_seconds() {
        timeout = timeout.min(Duration::from_secs(u64::from(secs)));
    }
    let request = match body.id {
        Some(id) => {
            check_id("id", &id)?;
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
    // A repeated ask (a retry after a lost reply) finds the stored question: the store says so.
    let (record, created) = match bounded(state.store.put_reporting(question)).await {
        // Another question has the id: say how it ended, when it did.
        Err(ApiError::IdTaken { id, settled: None }) => {
            let settled = bounded(state.store.get(&id)).await?.map(|r| r.state());
            return Err(ApiError::IdTaken { id, settled: settled.filter(|s| *s != RecordState::Pending) });
        }
        put => put?,
    };
    // A reused id delivers nothing of another conversation: only a retry of an ask that still
    // waits gets the stored question.
    if record.state() != RecordState::Pending {
        return Err(ApiError::IdTaken { id: record.id().to_owned(), settled: Some(record.state()) });
    }
    if !created && body.live {
        // A retry of the ask renews the lease as a wait does.
        bounded(state.store.renew(record.id(), state.config.lease)).await?;
    }
    let url = links::page_url(state, record.id());
    // Only the ask that stored the question tells the hook: a retry, or a racing twin, does not.
    if created && let Some(hook) = &state.on_asked {
        let questions = record.request().questions();
        hook(&crate::AskedNotice {
            id: record.id().to_owned(),
            session_id: record.session_id().map(str::to_owned),
            asked_by: links::asked_by_of(&record),
            headers: questions.iter().map(|q| q.header().to_owned()).collect(),
            questions: questions.iter().map(|q| q.question().to_owned()).collect(),
            url: url.clone(),
            expires_at: record.expires_at().to_string(),
        });
    }
    Ok((record, url))
}

/// Answers: commits an answer (with the values of its secret answers, which are held for the asker and
/// never stored) and tells listeners; made `via` a surface, as the audit log records it. A question
/// that timed out less than the late window ago (and is no approval) takes the answer as late.
pub(crate) async fn answer(
    state: &AppState,
    id: &str,
    response: &AskUserResponse,
    secrets: Vec<crate::secrets::Secret>,
    via: &Via,
) -> Result<PendingRecord, ApiError> {
    let needs_values = !response.cancelled && !crate::secrets::referenced(response).is_empty();
    let unattended = response.answered_by != AnsweredBy::User;
    if needs_values || !secrets.is_empty() || unattended {
        let record =
            bounded(state.store.get(id)).await?.ok_or_else(|| ApiError::NotFound { id: id.to_owned() })?;
        if matches!(record.state(), RecordState::Pending | RecordState::TimedOut) {
            if unattended && record.is_approval() {
                // contract §17: a permission is given or refused by a person, never by a default,
                // a timeout or an unattended responder.
                return Err(ApiError::InvalidResponse {
                    message: format!(
                        "an approval is answered by a person only, not {}",
                        response.answered_by.as_str()
                    ),
                });
            }
            crate::secrets::check_values(record.request(), response, &secrets)
                .map_err(|message| ApiError::InvalidResponse { message })?;
        }
    }
    let committed = match bounded(state.store.commit_answer_via(id, response, via)).await {
        Err(ApiError::Closed { record })
            if record.state() == RecordState::TimedOut
                && !state.config.late.is_zero()
                && !record.is_approval() =>
        {
            bounded(state.store.commit_late_answer(id, response, state.config.late, via)).await
        }
        committed => committed,
    };
    let record = committed?;
    state.hold_secrets(id, secrets);
    Ok(record)
}

/// Cancels (withdraws) a question; a settled one stays as it is. The record as it stands.
pub(crate) async fn cancel(state: &AppState, id: &str) -> Result<PendingRecord, ApiError> {
    bounded(state.store.cancel(id)).await
}
