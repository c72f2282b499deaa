//! One-tap answers: `POST /q/{id}/{token}/tap/{n}` picks option `n` of a batch that is one
//! single-select question, for a notification's action button (ntfy's `http` action). It needs
//! the question's page secret (the link's batch token), never the API token, and only ever picks
//! one of the question's own options: what the page's form would send for that choice.

use std::sync::Arc;

use askuser_core::{AskUserAnswer, AskUserResponse, QuestionKind};
use askuser_store::{PendingRecord, State as RecordState};
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use crate::AppState;
use crate::error::{ApiError, bounded};

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/q/{id}/{token}/tap/{n}", post(tap))
}

/// The labels a one-tap answer can pick, in order: the options of a batch of one single-select
/// multiple-choice question; none for any other batch (several questions, multi-select, text or
/// secret), which needs the page, and none for an approval (docs/contract.md §17: a permission is given on
/// the page or a chat's allowed users' buttons, never by a link that anyone holding the notice
/// can tap).
pub(crate) fn choices(record: &PendingRecord) -> Vec<&str> {
    if record.is_approval() {
        return Vec::new();
    }
    match record.request().questions().as_slice() {
        [q] if q.kind() == QuestionKind::Choice && !q.multi_select() => {
            q.options().iter().map(askuser_core::QuestionOption::label).collect()
        }
        _ => Vec::new(),
    }
}

fn text(status: StatusCode, text: impl Into<String>) -> Response {
    (status, [(axum::http::header::CONTENT_TYPE, "text/plain; charset=utf-8")], text.into()).into_response()
}

async fn tap(
    State(state): State<Arc<AppState>>,
    Path((id, token, n)): Path<(String, String, usize)>,
) -> Response {
    if !state.keys.check_batch_token(&id, &token) {
        return text(StatusCode::NOT_FOUND, "This link is not valid for this server.");
    }
    let record = match bounded(state.store.get(&id)).await {
        Ok(Some(record)) => record,
        Ok(None) => return text(StatusCode::NOT_FOUND, "This question no longer exists."),
        Err(error) => {
            return text(error.status(), "Not answered: the server cannot reach its database just now.");
        }
    };
    let choices = choices(&record);
    let Some(label) = choices.get(n) else {
        return text(StatusCode::UNPROCESSABLE_ENTITY, "Not answered: this question needs its page.");
    };
    let already = |state: RecordState| {
        text(StatusCode::CONFLICT, format!("Not answered: the question is already {state}."))
    };
    if record.state() != RecordState::Pending {
        return already(record.state());
    }
    let header = record.request().questions().as_slice()[0].header();
    let response = AskUserResponse::answered(vec![AskUserAnswer::picked(header, [*label])]);
    match crate::actions::answer(&state, &id, &response, Vec::new(), &askuser_store::Via::surface("notice"))
        .await
    {
        Ok(_) => text(StatusCode::OK, format!("Answered: {}", askuser_core::show_blank(label))),
        Err(ApiError::AlreadyAnswered { first: record } | ApiError::Closed { record }) => {
            already(record.state())
        }
        Err(error) => text(error.status(), format!("Not answered: {error}")),
    }
}
