//! Test support, shared by this crate's tests, `askuser mcp`'s tests and the
//! benchmark: a scripted MCP host (an rmcp client that declares form elicitation or not, for a
//! given revision, and answers forms from a script), and the connection with the lifecycle of its
//! revision. Not part of the API: it may change in any release.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam, ClientCapabilities,
    ContentBlock, CustomRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    ErrorData, Implementation, InitializeRequestParams, NumberOrString, ProgressNotificationParam,
    ProtocolVersion, ServerCapabilities, ServerConfig, ServerRequest,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RoleServer, RunningService};
use rmcp::transport::IntoTransport;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

use crate::AskUserServer;

/// What the scripted person does with the next form.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Submits this content.
    Accept(Value),
    /// Declines.
    Decline,
    /// Dismisses the form.
    Cancel,
    /// Waits this long, then submits this content.
    Late(Duration, Value),
    /// Submits the first option of every choice field (a titled single-select's first `const`,
    /// a multi-select's first item).
    FirstChoice,
    /// Keeps the form open until the server cancels the request, then closes it (cancels).
    Hang,
    /// Answers the `elicitation/create` with a JSON-RPC error with this message (a host whose
    /// own check of the form's content failed).
    Error(String),
}

/// A form the host was shown.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The form's message.
    pub message: String,
    /// The `requestedSchema`, as sent.
    pub schema: Value,
    /// The JSON-RPC id of the `elicitation/create` request, as text.
    pub id: String,
}

/// A scripted MCP host: declares form elicitation (or not) at the given revision, answers each
/// form with the next [`Reply`] (then [`always`](Self::always), else cancels), and records the
/// forms shown and the progress notifications received.
#[derive(Debug, Clone)]
pub struct ScriptedClient {
    version: ProtocolVersion,
    elicitation: bool,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    always: Option<Value>,
    record: bool,
    shown: Arc<Mutex<Vec<Shown>>>,
    progress: Arc<Mutex<Vec<String>>>,
    cancelled: Arc<Mutex<Vec<String>>>,
}

impl ScriptedClient {
    /// A host at `version`, with form elicitation when `elicitation`, answering with `replies`.
    #[must_use]
    pub fn new(version: ProtocolVersion, elicitation: bool, replies: Vec<Reply>) -> Self {
        Self {
            version,
            elicitation,
            replies: Arc::new(Mutex::new(replies.into())),
            always: None,
            record: true,
            shown: Arc::default(),
            progress: Arc::default(),
            cancelled: Arc::default(),
        }
    }

    /// Once the replies run out, submits `content` to every form, recording nothing (for
    /// benchmarks: no per-call cost beyond a clone).
    #[must_use]
    pub fn always(mut self, content: Value) -> Self {
        self.always = Some(content);
        self.record = false;
        self
    }

    /// The revision it asks for.
    #[must_use]
    pub fn version(&self) -> &ProtocolVersion {
        &self.version
    }

    /// The forms shown so far.
    #[must_use]
    pub fn shown(&self) -> Vec<Shown> {
        lock(&self.shown).clone()
    }

    /// The request ids of the `notifications/cancelled` received so far, as text.
    #[must_use]
    pub fn cancelled(&self) -> Vec<String> {
        lock(&self.cancelled).clone()
    }

    /// The messages of the progress notifications received so far.
    #[must_use]
    pub fn progress(&self) -> Vec<String> {
        lock(&self.progress).clone()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The first option of every choice field of `schema`.
fn first_choices(schema: &Value) -> Value {
    let mut content = Map::new();
    for (key, field) in schema["properties"].as_object().into_iter().flatten() {
        if let Some(first) = field["oneOf"].get(0).or_else(|| field["items"]["anyOf"].get(0)) {
            let value = first["const"].clone();
            content.insert(key.clone(), if field["type"] == "array" { json!([value]) } else { value });
        } else if let Some(first) = field["enum"].get(0) {
            content.insert(key.clone(), first.clone());
        }
    }
    Value::Object(content)
}

impl ClientHandler for ScriptedClient {
    fn get_info(&self) -> InitializeRequestParams {
        let capabilities = if self.elicitation {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        InitializeRequestParams::new(capabilities, Implementation::new("askuser-test-client", "0.0.0"))
            .with_protocol_version(self.version.clone())
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        lock(&self.progress).push(params.message.unwrap_or_default());
    }

    async fn on_cancelled(
        &self,
        params: CancelledNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        lock(&self.cancelled).push(params.request_id.as_ref().map(id_text).unwrap_or_default());
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        request_context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = request else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let reply = lock(&self.replies).pop_front();
        if reply.is_none()
            && let Some(content) = &self.always
        {
            return Ok(ElicitResult::new(ElicitationAction::Accept).with_content(content.clone()));
        }
        let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        if self.record {
            lock(&self.shown).push(Shown {
                message,
                schema: schema.clone(),
                id: id_text(&request_context.id),
            });
        }
        Ok(match reply {
            Some(Reply::Error(message)) => return Err(ErrorData::invalid_params(message, None)),
            Some(Reply::Accept(content)) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(content)
            }
            Some(Reply::Decline) => ElicitResult::new(ElicitationAction::Decline),
            Some(Reply::Cancel) | None => ElicitResult::new(ElicitationAction::Cancel),
            Some(Reply::Late(wait, content)) => {
                tokio::time::sleep(wait).await;
                ElicitResult::new(ElicitationAction::Accept).with_content(content)
            }
            Some(Reply::FirstChoice) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(first_choices(&schema))
            }
            Some(Reply::Hang) => {
                request_context.ct.cancelled().await;
                ElicitResult::new(ElicitationAction::Cancel)
            }
        })
    }
}

fn id_text(id: &NumberOrString) -> String {
    match id {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.to_string(),
    }
}

/// A running scripted host.
pub type Client = RunningService<RoleClient, ScriptedClient>;

/// Serves `client` over `transport` with the lifecycle of `version`: `initialize` before
/// 2026-07-28, `server/discover` and per-request metadata from it on.
///
/// # Panics
///
/// When the connection fails.
pub async fn serve_client<C, T, E, A>(
    client: C,
    version: ProtocolVersion,
    transport: T,
) -> RunningService<RoleClient, C>
where
    C: ClientHandler,
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    if version.has_initialize() {
        client.serve(transport).await.expect("the client connects")
    } else {
        client
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover { preferred_versions: vec![version] },
            )
            .await
            .expect("the client connects")
    }
}

/// A plain rmcp server, no askuser in it: every `tools/call` asks `form` through
/// `elicitation/create` and returns the client's `{"action","content"}` as JSON text. The least a
/// tool that asks can do: a baseline for the benchmark, and a server no askuser code shaped for the
/// client handler's tests.
#[derive(Debug, Clone)]
pub struct FormAsker {
    /// The `requestedSchema`.
    pub form: ElicitationSchema,
    /// The form's message.
    pub message: String,
    /// The server's name, as the client is told.
    pub name: String,
}

impl ServerHandler for FormAsker {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(self.name.clone(), "1.0.0"))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: self.message.clone(),
            requested_schema: self.form.clone(),
        };
        let result = context
            .peer
            .create_elicitation(params)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let text = json!({"action": result.action, "content": result.content}).to_string();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// A plain rmcp server that sends `elicitation/create` with params given as JSON, verbatim (as
/// another SDK's server sent them, shapes rmcp's own types refuse included), one per
/// `tools/call` of the tool named as the form, and returns the client's answer as JSON text.
#[derive(Debug, Clone)]
pub struct RawFormAsker {
    /// `(tool name, elicitation/create params)`.
    pub forms: Vec<(String, Value)>,
    /// The server's name, as the client is told.
    pub name: String,
}

impl ServerHandler for RawFormAsker {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(self.name.clone(), "1.0.0"))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some((_, params)) = self.forms.iter().find(|(name, _)| *name == request.name) else {
            return Err(ErrorData::invalid_params(format!("no form {:?}", request.name), None));
        };
        let raw = CustomRequest::new("elicitation/create", Some(params.clone()));
        let result = context
            .peer
            .send_request(ServerRequest::CustomRequest(raw))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let text = serde_json::to_value(&result).unwrap_or_default().to_string();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// Connects `client` to any rmcp `server` over an in-memory pipe, at `version`.
///
/// # Panics
///
/// When the connection fails.
pub async fn connect_to<S, C>(server: S, client: C, version: ProtocolVersion) -> RunningService<RoleClient, C>
where
    S: ServerHandler,
    C: ClientHandler,
{
    let (server_end, client_end) = tokio::io::duplex(256 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    serve_client(client, version, client_end).await
}

/// Connects `client` to `server` over an in-memory pipe (the server runs on a spawned task).
///
/// # Panics
///
/// When the connection fails.
pub async fn connect<C: ClientHandler>(
    server: AskUserServer,
    client: C,
    version: ProtocolVersion,
) -> RunningService<RoleClient, C> {
    connect_to(server, client, version).await
}

/// A `tools/call` of `ask_user_question` with `arguments` (an object).
#[must_use]
pub fn call(arguments: &Value) -> CallToolRequestParams {
    CallToolRequestParams::new(askuser_tool::TOOL_NAME)
        .with_arguments(arguments.as_object().cloned().unwrap_or_default())
}

/// The one text block of a tool result, and whether it is an error.
///
/// # Panics
///
/// When the result is not one text block.
#[must_use]
pub fn text_of(result: &CallToolResult) -> (String, bool) {
    assert_eq!(result.content.len(), 1, "{result:?}");
    (result.content[0].as_text().expect("a text block").text.clone(), result.is_error.unwrap_or(false))
}
