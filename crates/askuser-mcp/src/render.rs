//! Result rendering: what a call returns to the model as an MCP tool result (a text block, an
//! error block, the rendered answers, an outcome of the `AskUser` capability), and the cap on
//! text relayed from elsewhere.

use askuser_core::{AnsweredBy, AskUserRequest, AskUserResponse, Questions, ask_user_result};
use askuser_store::StoreError;
use askuser_tool::exit::with_causes;
use askuser_tool::{CallOutcome, TOOL_NAME};
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock};

pub(crate) fn store_failed(error: &StoreError) -> ErrorData {
    ErrorData::internal_error(format!("the pending-question store failed: {error}"), None)
}

pub(crate) fn text_result(text: &str, is_error: bool) -> CallToolResult {
    let content = vec![ContentBlock::text(text)];
    if is_error { CallToolResult::error(content) } else { CallToolResult::success(content) }
}

/// The most characters of a text that came from elsewhere (a host's error, a cause) relayed to
/// the model: a 3,000,000-character typed answer came back as a 6,000,504-character error in the
/// model's context (issue 36.16).
pub(crate) const MAX_RELAYED_CHARS: usize = 1_000;

/// `text`, cut to [`MAX_RELAYED_CHARS`] with a note of how much was left out.
pub(crate) fn capped(text: &str) -> String {
    match text.char_indices().nth(MAX_RELAYED_CHARS) {
        None => text.to_owned(),
        Some((at, _)) => {
            let left_out = text[at..].chars().count();
            format!("{}… ({left_out} more characters left out)", &text[..at])
        }
    }
}

/// A call nobody was asked (no form and no fallback, or a secret with nowhere safe to ask it), in
/// the extended profile: `{"status":"declined","answered_by":"unattended","answers":[]}`.
pub(crate) fn unattended_decline(questions: Questions) -> CallToolResult {
    let request = AskUserRequest::new(questions);
    rendered(&request, &AskUserResponse::declined().with_answered_by(AnsweredBy::Unattended))
}

pub(crate) fn rendered(request: &AskUserRequest, response: &AskUserResponse) -> CallToolResult {
    match ask_user_result(request, response) {
        Ok(result) => text_result(result.text(), false),
        Err(error) => text_result(&format!("the answer did not fit the questions: {error}"), true),
    }
}

pub(crate) fn outcome_result(outcome: CallOutcome) -> CallToolResult {
    match outcome {
        CallOutcome::Completed(result) => text_result(result.text(), false),
        CallOutcome::Retry(retry) => text_result(retry.text(), true),
        CallOutcome::Failed(error) if error.is_interrupted() => {
            text_result("The person interrupted: stop and wait for their instructions.", true)
        }
        CallOutcome::Failed(error) => {
            text_result(&format!("{TOOL_NAME} failed: {}", capped(&with_causes(&error))), true)
        }
        other => text_result(&format!("{TOOL_NAME} failed: unexpected outcome {other:?}"), true),
    }
}
