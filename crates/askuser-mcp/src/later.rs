//! Background asks: `ask_user_question_later` returns a ticket at once, while the person is asked
//! on the side (the client's form, else the fallback, and the inbox); `get_user_answers` reads
//! the ticket's outcome from the store, waiting a bounded while. The questions live in the store,
//! so a ticket outlives the server process.

use std::sync::Arc;
use std::time::Duration;

use askuser_core::{Answerer, AskUserRequest, Deadline, Profile, QuestionKind, Timestamp};
use askuser_store::{AskedBy, NewQuestion, PendingRecord, State};
use askuser_tool::{Dialect, TOOL_NAME, parameters_for};
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, JsonObject, ProtocolVersion, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use crate::eliciting::supports_form;
use crate::inbox::is_pending;
use crate::render::{store_failed, text_result};
use crate::sealed::random_nonce;
use crate::server::AskUserServer;
use crate::tickets::Later;

/// The background ask: the same arguments as `ask_user_question`, a ticket back at once.
pub const LATER_TOOL: &str = "ask_user_question_later";

/// Reads a background ask's answers by its ticket.
pub const ANSWERS_TOOL: &str = "get_user_answers";

/// The longest `wait_seconds` of `get_user_answers`: below the 60 s after which several hosts and
/// SDKs give up on a tool call.
pub const MAX_WAIT_SECONDS: u64 = 50;

/// The two tools, as listed.
pub(crate) fn tools(profile: Profile) -> [Tool; 2] {
    let annotations =
        || ToolAnnotations::new().read_only(true).destructive(false).idempotent(false).open_world(false);
    let schema = match parameters_for(profile, Dialect::Generic) {
        Value::Object(schema) => schema,
        _ => JsonObject::new(),
    };
    let later = Tool::new(
        LATER_TOOL,
        format!(
            "The same questions as {TOOL_NAME}, asked in the background: it returns at once with a ticket while the person is asked. Use it instead of {TOOL_NAME} when the answers may take minutes (the person may answer later, from a phone) and you have work that does not depend on them; then call {ANSWERS_TOOL} with the ticket. Same arguments and rules as {TOOL_NAME}."
        ),
        Arc::new(schema),
    )
    .with_annotations(annotations());
    let answers_schema = json!({
        "type": "object",
        "properties": {
            "ticket": {"type": "string", "description": format!("the ticket {LATER_TOOL} returned")},
            "wait_seconds": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_SECONDS,
                "description": format!("how long to wait for the answers before returning (0 to {MAX_WAIT_SECONDS}; default 0)")}
        },
        "required": ["ticket"],
        "additionalProperties": false
    });
    let answers_schema = match answers_schema {
        Value::Object(schema) => schema,
        _ => JsonObject::new(),
    };
    let answers = Tool::new(
        ANSWERS_TOOL,
        format!(
            "The answers to questions asked with {LATER_TOOL}: exactly what {TOOL_NAME} would have returned, or that the person has not answered yet (call again later, or with wait_seconds to wait up to {MAX_WAIT_SECONDS} s), or that nobody answered in time."
        ),
        Arc::new(answers_schema),
    )
    .with_annotations(annotations());
    [later, answers]
}

/// `get_user_answers`' arguments, checked.
struct AnswersArgs {
    ticket: String,
    wait: Duration,
}

fn answers_args(arguments: &JsonObject) -> Result<AnswersArgs, String> {
    if let Some(unknown) = arguments.keys().find(|key| !matches!(key.as_str(), "ticket" | "wait_seconds")) {
        return Err(format!(
            "{ANSWERS_TOOL}: unknown argument {unknown:?} (it takes ticket and wait_seconds)"
        ));
    }
    let ticket = match arguments.get("ticket") {
        Some(Value::String(ticket)) if !ticket.trim().is_empty() => ticket.trim().to_owned(),
        Some(other) => {
            return Err(format!(
                "{ANSWERS_TOOL}: ticket must be the ticket string {LATER_TOOL} returned, got {other}"
            ));
        }
        None => {
            return Err(format!("{ANSWERS_TOOL}: ticket is missing: pass the ticket {LATER_TOOL} returned"));
        }
    };
    let wait = match arguments.get("wait_seconds") {
        None | Some(Value::Null) => 0,
        Some(value) => value.as_u64().filter(|s| *s <= MAX_WAIT_SECONDS).ok_or_else(|| {
            format!("{ANSWERS_TOOL}: wait_seconds must be a whole number from 0 to {MAX_WAIT_SECONDS}, got {value}")
        })?,
    };
    Ok(AnswersArgs { ticket, wait: Duration::from_secs(wait) })
}

/// What the model is told for a ticket that is not this server's (or session's).
fn not_ours(ticket: &str) -> String {
    format!(
        "{ANSWERS_TOOL}: ticket {ticket:?} is not one of this server's: it was not returned by {LATER_TOOL} here (a ticket from another server, or over HTTP from another MCP session, is refused). Ask again with {LATER_TOOL} or {TOOL_NAME}."
    )
}

fn still_waiting(ticket: &str) -> String {
    format!(
        "The person has not answered yet (ticket {ticket}). Go on with work that does not depend on the answers, then call {ANSWERS_TOOL} again (with wait_seconds up to {MAX_WAIT_SECONDS} to wait for them). Do not guess the answers."
    )
}

fn asked(ticket: &str) -> String {
    format!(
        "Asked. Ticket: {ticket}. The person has not answered yet: go on with work that does not depend on the answers, then call {ANSWERS_TOOL} with {{\"ticket\":\"{ticket}\"}} (add \"wait_seconds\" up to {MAX_WAIT_SECONDS} to wait for them). Do not guess the answers."
    )
}

/// What the model is told of a ticket nobody is asked about on the side (`why`): its question
/// waits in the store, for an answer server that reads it.
fn asked_in_the_store(ticket: &str, why: &str) -> String {
    format!(
        "Asked. Ticket: {ticket}. Nobody is asked through this MCP client ({why}): the questions wait in the pending-question store, where the answer server's page (askuser serve on the same store), its notices and chat channels answer them, until their deadline. The person has not answered yet: go on with work that does not depend on the answers, then call {ANSWERS_TOOL} with {{\"ticket\":\"{ticket}\"}} (add \"wait_seconds\" up to {MAX_WAIT_SECONDS} to wait for them). If the answers matter now, tell the person in your reply that questions wait for them on the answer server. Do not guess the answers."
    )
}

/// What the model is told when `cap` tickets of its scope are open.
fn too_many_open(cap: usize) -> String {
    format!(
        "{LATER_TOOL}: {cap} questions asked with it here are still open (not yet answered, declined or timed out), the most kept open at once, so nobody was asked this time. Wait for the answers to an earlier ticket first: call {ANSWERS_TOOL} with its ticket (add \"wait_seconds\" up to {MAX_WAIT_SECONDS} to wait for them), then call {LATER_TOOL} again. If you need these answers now, ask with {TOOL_NAME} instead."
    )
}

fn withdrawn(ticket: &str) -> String {
    format!(
        "The questions of ticket {ticket} were withdrawn before anyone answered them: nobody will. Continue without the answers, or ask again if you still need them."
    )
}

impl AskUserServer {
    fn later(&self) -> Result<&Later, ErrorData> {
        self.inner.later.as_ref().ok_or_else(|| ErrorData::invalid_params("background tools are off", None))
    }

    /// Who asks the person on the side for a call of this client: its form (2025 revisions;
    /// 2026-07-28 has no server-to-client request outside a call), else the fallback;
    /// `Err(why)` when nobody can, saying why: the question then waits in the store alone, where
    /// an answer server reading it (its page, notices, chat channels) answers it (issue 36.18: a
    /// host without forms got no ticket, and a 2026-07-28 host that declared forms was told it
    /// had not).
    fn side_asker(&self, context: &RequestContext<RoleServer>) -> Result<Arc<dyn Answerer>, String> {
        let version = context.protocol_version().unwrap_or(ProtocolVersion::V_2025_06_18);
        let can_form = context.client_capabilities().as_ref().is_some_and(supports_form);
        if can_form && version.has_initialize() {
            // A dismissed form (or a connection closed under it) leaves the question waiting:
            // the next get_user_answers shows it again, another surface may answer it.
            let form = self.eliciting(context, &version).dismissal_waits();
            return Ok(Arc::new(form));
        }
        match self.fallback_step(false) {
            Ok((answerer, _)) => Ok(answerer),
            Err(skipped) => {
                let mut why = if can_form {
                    format!(
                        "MCP {version} has no request from the server outside a tool call, so the client's form can show only {TOOL_NAME}'s questions"
                    )
                } else {
                    "this MCP client did not declare form elicitation".to_owned()
                };
                for skipped in skipped {
                    why.push_str("; ");
                    why.push_str(&skipped);
                }
                Err(why)
            }
        }
    }

    /// `ask_user_question_later`: validates like `ask_user_question`, puts the questions in the
    /// store under a fresh ticket, starts asking on the side, and returns.
    pub(crate) async fn ask_later(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let later = self.later()?;
        let arguments = Value::Object(params.arguments.unwrap_or_default());
        let questions = match self.inner.validator.validate_value(&arguments) {
            Ok(questions) => questions,
            Err(error) => return Ok(text_result(&error.retry_payload(), true).into()),
        };
        if self.profile() == Profile::Extended && questions.iter().any(|q| q.kind() == QuestionKind::Secret) {
            return Ok(text_result(
                &format!("{LATER_TOOL} does not take secret questions: ask them with {TOOL_NAME}, or ask the person in your reply to provide the credential another way."),
                true,
            )
            .into());
        }
        let asker = self.side_asker(&context);
        let ticket = format!("t{}", random_nonce());
        let timeout = questions
            .timeout_seconds()
            .map_or_else(|| self.inbox_timeout(), |s| Duration::from_secs(u64::from(s)));
        let request = AskUserRequest::with_id(ticket.as_str(), questions)
            .with_deadline(Deadline::new(Timestamp::now(), Some(timeout)));
        let label = self.asked_by(&context);
        let scope = later.scope_of(&context);
        let turn = later.opening.lock().await;
        if later.is_full(&scope).await.map_err(|e| store_failed(&e))? {
            return Ok(text_result(&too_many_open(later.max_open), true).into());
        }
        // No lease: nobody waits for a background question by design, and it keeps its deadline.
        let mut question = NewQuestion::new(request.clone(), timeout).session_id(scope);
        if let Some(asked_by) = label.as_deref().and_then(AskedBy::lossy) {
            question = question.asked_by(asked_by);
        }
        let record = later.store.put(question).await.map_err(|e| {
            ErrorData::internal_error(format!("the pending-question store failed: {e}"), None)
        })?;
        drop(turn);
        let text = match asker {
            Ok(asker) => {
                later.ask_on_the_side(&record, asker, label);
                asked(&ticket)
            }
            Err(why) => asked_in_the_store(&ticket, &why),
        };
        Ok(text_result(&text, false).into())
    }

    /// `get_user_answers`: the ticket's outcome, after waiting up to `wait_seconds` for it.
    pub(crate) async fn get_answers(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let later = self.later()?;
        let args = match answers_args(&params.arguments.unwrap_or_default()) {
            Ok(args) => args,
            Err(problem) => return Ok(text_result(&problem, true).into()),
        };
        let scope = later.scope_of(&context);
        let mut record = match later.store.get(&args.ticket).await.map_err(|e| store_failed(&e))? {
            Some(record) if record.session_id() == Some(scope.as_str()) => record,
            _ => return Ok(text_result(&not_ours(&args.ticket), true).into()),
        };
        if is_pending(&record) && record.is_overdue(Timestamp::now()) {
            record = match later.store.expire(&args.ticket).await {
                Ok(expired) => expired,
                Err(
                    askuser_store::StoreError::Closed { record }
                    | askuser_store::StoreError::Conflict { first: record },
                ) => *record,
                Err(e) => return Err(store_failed(&e)),
            };
        }
        if is_pending(&record) {
            // After a restart (or a dismissed form) nobody asks on the side: ask again, through
            // this client.
            if let Ok(asker) = self.side_asker(&context) {
                later.ask_on_the_side(&record, asker, self.asked_by(&context));
            }
            if !args.wait.is_zero() {
                tokio::select! {
                    settled = tokio::time::timeout(args.wait, later.store.watch(&args.ticket)) => {
                        if let Ok(settled) = settled {
                            record = settled.map_err(|e| store_failed(&e))?;
                        }
                    }
                    () = context.ct.cancelled() => {
                        return Err(ErrorData::internal_error("the client cancelled the call", None));
                    }
                }
            }
        }
        Ok(self.outcome(&args.ticket, &record).into())
    }

    /// What `get_user_answers` returns for `record`: what `ask_user_question` would have.
    fn outcome(&self, ticket: &str, record: &PendingRecord) -> rmcp::model::CallToolResult {
        match record.state() {
            State::Pending => text_result(&still_waiting(ticket), false),
            State::Answered | State::Declined | State::TimedOut | State::Late => self.settled_result(record),
            _ => text_result(&withdrawn(ticket), false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(arguments: Value, expected: Result<(&str, u64), &str>) {
        let Value::Object(arguments) = arguments else { unreachable!("objects only") };
        match (answers_args(&arguments), expected) {
            (Ok(args), Ok((ticket, wait))) => {
                assert_eq!((args.ticket.as_str(), args.wait.as_secs()), (ticket, wait));
            }
            (Err(problem), Err(says)) => assert!(problem.contains(says), "{problem}"),
            (got, want) => panic!("got {:?}, want {want:?}", got.map(|a| a.ticket)),
        }
    }

    #[test]
    fn reads_get_user_answers_arguments() {
        check(json!({"ticket": "t1"}), Ok(("t1", 0)));
        check(json!({"ticket": " t1 ", "wait_seconds": 50}), Ok(("t1", 50)));
        check(json!({"ticket": "t1", "wait_seconds": null}), Ok(("t1", 0)));
        check(json!({}), Err("ticket is missing"));
        check(json!({"ticket": ""}), Err("ticket must be"));
        check(json!({"ticket": 7}), Err("got 7"));
        check(json!({"ticket": "t1", "wait_seconds": 51}), Err("from 0 to 50, got 51"));
        check(json!({"ticket": "t1", "wait_seconds": -1}), Err("got -1"));
        check(json!({"ticket": "t1", "wait_seconds": 1.5}), Err("got 1.5"));
        check(json!({"ticket": "t1", "wait": 5}), Err("unknown argument \"wait\""));
    }
}
