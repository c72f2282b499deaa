//! What the client sees: the tools as listed, the server's info, and each `tools/call` sent down
//! its path (the background tools, the 2026-07-28 path, or `ask_user_question` through the
//! inbox, the form or the fallback).

use std::sync::Arc;
use std::time::Duration;

use askuser_core::{Answerer, AskContext, Profile, QuestionKind};
use askuser_tool::{
    AskUser, DESCRIPTION, Dialect, EXTENDED_DESCRIPTION, EXTENDED_INSTRUCTIONS, INSTRUCTIONS, OnTimeout,
    TOOL_NAME, ToolCall, parameters_for,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ContentBlock, GetTaskParams, GetTaskResult,
    Implementation, JsonObject, ListToolsResult, NumberOrString, PaginatedRequestParams, PingRequest,
    ProtocolVersion, ServerCapabilities, ServerConfig, ServerRequest, Tool, ToolAnnotations,
    UpdateTaskParams,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;

use crate::eliciting::{Eliciting, supports_form};
use crate::fallback::nobody_asked;
use crate::inbox::InboxAnswerer;
use crate::later::{ANSWERS_TOOL, LATER_TOOL};
use crate::render::{outcome_result, text_result, unattended_decline};
use crate::server::AskUserServer;

/// How long the first `ping` waits for the client's answer (see `on_initialized`).
const PING_PATIENCE: Duration = Duration::from_secs(30);

impl AskUserServer {
    /// The tool as listed: `ask_user_question`, the generic parameters schema, a description that
    /// ends with what happens when the client cannot show a form.
    #[must_use]
    pub fn tool(&self) -> Tool {
        let fallback = &self.inner.fallback;
        let description = match self.profile() {
            Profile::Extended => {
                let secrets = if fallback.asks_secrets() {
                    format!(
                        "A secret question is never put in the MCP client's form: it is asked the way a question is when there is no form ({}).",
                        fallback.described()
                    )
                } else {
                    "A secret question is never put in the MCP client's form, and this server has no other safe way to ask for one: a call with a secret question is declined at once (status \"declined\", answered_by \"unattended\"); ask the person in your reply to provide the credential another way.".to_owned()
                };
                format!(
                    "{EXTENDED_DESCRIPTION} The questions are shown to the person as a form by the MCP client. When this MCP client cannot show a form, {}. {secrets}",
                    fallback.described()
                )
            }
            _ => format!(
                "{} The questions are shown to the person as a form by the MCP client. When this MCP client cannot show a form, {}.",
                description_for(self.inner.on_timeout),
                fallback.described()
            ),
        };
        let schema = match parameters_for(self.profile(), Dialect::Generic) {
            Value::Object(schema) => schema,
            _ => JsonObject::new(),
        };
        Tool::new(TOOL_NAME, description, Arc::new(schema)).with_annotations(
            ToolAnnotations::new().read_only(true).destructive(false).idempotent(false).open_world(false),
        )
    }

    /// Every tool listed: [`tool`](Self::tool), and the background tools when
    /// [enabled](crate::AskUserServerBuilder::background).
    #[must_use]
    pub fn tools(&self) -> Vec<Tool> {
        let mut tools = vec![self.tool()];
        if self.inner.later.is_some() {
            tools.extend(crate::later::tools(self.profile()));
        }
        tools
    }

    /// Handles one `tools/call` of `ask_user_question`.
    async fn ask(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if params.name != TOOL_NAME {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}: this server has only {TOOL_NAME}", params.name),
                None,
            ));
        }
        let mut params = params;
        // Moved, not cloned: the 2026-07-28 retry needs only the state and the responses.
        let arguments = Value::Object(params.arguments.take().unwrap_or_default());
        let version = context.protocol_version().unwrap_or(ProtocolVersion::V_2025_06_18);
        let can_form = context.client_capabilities().as_ref().is_some_and(supports_form);
        // Secrets never go into a form (contract §13): only the extended profile has them, so only
        // its calls are looked at before they are asked.
        let mut secret = false;
        if self.profile() == Profile::Extended {
            let questions = match self.inner.validator.validate_value(&arguments) {
                Ok(questions) => questions,
                Err(error) => return Ok(text_result(&error.retry_payload(), true).into()),
            };
            secret = questions.iter().any(|q| q.kind() == QuestionKind::Secret);
        }
        if can_form && !secret && !version.has_initialize() {
            return self.ask_by_input_required(&params, &arguments, &context).await;
        }
        let form =
            (can_form && !secret && version.has_initialize()).then(|| self.eliciting(&context, &version));
        // Which fallback step took the call after others could not, for the model (below).
        let mut fell_through = None;
        let answerer: Arc<dyn Answerer> = match (&self.inner.inbox, form) {
            (Some(inbox), form) if !secret => Arc::new(InboxAnswerer {
                store: Arc::clone(&inbox.store),
                form: form.map(Eliciting::dismissal_waits),
                timeout: self.inbox_timeout(),
            }),
            (_, Some(form)) => match &self.inner.also {
                Some(race) => race(Arc::new(form.dismissal_waits())),
                None => Arc::new(form),
            },
            _ => match self.fallback_step(secret) {
                Ok((answerer, note)) => {
                    fell_through = note;
                    answerer
                }
                Err(skipped) => {
                    return Ok(match self.inner.validator.validate_value(&arguments) {
                        Ok(questions) if self.profile() == Profile::Extended => unattended_decline(questions),
                        Ok(_) => text_result(&nobody_asked(&skipped), false),
                        Err(error) => text_result(&error.retry_payload(), true),
                    }
                    .into());
                }
            },
        };
        let mut builder = AskUser::builder()
            .shared_answerer(answerer)
            .profile(self.profile())
            .max_timeout(Duration::from_secs(u64::from(self.inner.validator.max_timeout_seconds())))
            .max_argument_bytes(self.inner.validator.max_argument_bytes())
            .on_timeout(self.inner.on_timeout);
        // With an inbox the capability's own timeout decides, so that its policy applies, not
        // the store answerer's.
        let timeout =
            if self.inner.inbox.is_some() { Some(self.inbox_timeout()) } else { self.inner.timeout };
        if let Some(timeout) = timeout {
            builder = builder.timeout(timeout);
        }
        let ask_user = builder.build().map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let call_id = request_id_text(&context);
        let call = ToolCall::new(&call_id, &arguments);
        let mut ask_context = AskContext::new().with_tool_call_id(call_id.clone());
        // In the inbox under this session, so that a late answer finds its way back to it.
        if !secret && let Some(session) = self.inbox_session(&context) {
            ask_context = ask_context.with_session_id(session);
        }
        if let Some(label) = self.asked_by(&context) {
            ask_context = ask_context.with_asked_by(label);
        }
        let outcome = self.waiting(ask_user.call(call, ask_context), &context).await?;
        let mut result = outcome_result(outcome);
        if let Some(note) = fell_through {
            // A block of its own: the first stays exactly what the tool returns anywhere else.
            result.content.push(ContentBlock::text(note));
        }
        Ok(result.into())
    }
}

fn request_id_text(context: &RequestContext<RoleServer>) -> String {
    match &context.id {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.to_string(),
    }
}

/// What [`DESCRIPTION`] says of a timeout.
const ON_TIMEOUT_GUESS: &str = "If the person declines, or nobody answers in time, the result is a plain sentence saying so: carry on, make a reasonable choice and say which one you made.";

/// [`DESCRIPTION`] as the timeout policy has it: under [`OnTimeout::Stop`] the result of a
/// timeout says not to guess, so the description does not say to (issue 36.20: it always said
/// "make a reasonable choice").
fn description_for(policy: OnTimeout) -> String {
    match policy {
        OnTimeout::Stop => DESCRIPTION.replace(
            ON_TIMEOUT_GUESS,
            "If the person declines, the result is a plain sentence saying so: carry on, make a reasonable choice and say which one you made. If nobody answers in time, the result says so: do not guess the answers; finish only the work that does not depend on them, then stop and say what you need to know to go on.",
        ),
        _ => DESCRIPTION.to_owned(),
    }
}

impl ServerHandler for AskUserServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = if self.serves_tasks() {
            ServerCapabilities::builder().enable_tools().enable_tasks().build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("askuser-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(match self.profile() {
                Profile::Extended => EXTENDED_INSTRUCTIONS,
                _ => INSTRUCTIONS,
            })
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.get_task_from_store(request, &context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.update_task_in_store(request).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.cancel_task_in_store(request).await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().into_iter().find(|tool| tool.name == name)
    }

    /// Sends the client a `ping` first (2025 revisions; 2026-07-28 has no `initialize`). rmcp
    /// numbers a connection's requests from 0, and the TypeScript SDK ignores a
    /// `notifications/cancelled` whose request id is 0 (it tests the id for truth): the ping takes
    /// id 0, so that every form this server opens can be closed (`eliciting.rs`'s `elicit`).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut options = PeerRequestOptions::no_options();
        options.timeout = Some(PING_PATIENCE);
        // Queued now, before any call's form; its answer is awaited on the side.
        if let Ok(ping) = context
            .peer
            .send_request_with_option(ServerRequest::PingRequest(PingRequest::default()), options)
            .await
        {
            tokio::spawn(async move {
                let _ = ping.await_response().await;
            });
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let wants_task = context.client_capabilities().is_some_and(|caps| caps.supports_tasks());
        let notes_for = context.clone();
        let response = match request.name.as_ref() {
            LATER_TOOL if self.inner.later.is_some() => self.ask_later(request, context).await,
            ANSWERS_TOOL if self.inner.later.is_some() => self.get_answers(request, context).await,
            TOOL_NAME if wants_task && self.serves_tasks() => self.ask_as_task(request, &context).await,
            _ => self.ask(request, context).await,
        }?;
        // Late answers to this session's earlier questions ride on the next result, each a block
        // of its own after what the tool returns anywhere else.
        Ok(match response {
            CallToolResponse::Complete(mut result) => {
                for note in self.late_notes(&notes_for).await {
                    result.content.push(ContentBlock::text(note));
                }
                CallToolResponse::Complete(result)
            }
            other => other,
        })
    }
}
