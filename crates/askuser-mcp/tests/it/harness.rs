//! An in-process rmcp client/server pair: the real rmcp stack on both ends of an in-memory pipe,
//! with a scripted person answering the client's forms.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use askuser_mcp::AskUserServer;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ElicitRequestParams, ElicitResult, ElicitationAction,
    ErrorData, Implementation, InitializeRequestParams, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::Value;

/// What the scripted person does with the next form.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    Accept(Value),
    Decline,
    Cancel,
    /// Waits this long, then accepts.
    Late(Duration, Value),
}

/// A form the client was shown.
#[derive(Debug, Clone)]
pub(crate) struct Shown {
    pub(crate) message: String,
    pub(crate) schema: Value,
}

#[derive(Clone)]
pub(crate) struct TestClient {
    version: ProtocolVersion,
    elicitation: bool,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    pub(crate) shown: Arc<Mutex<Vec<Shown>>>,
    /// The progress notifications received, by message.
    pub(crate) progress: Arc<Mutex<Vec<String>>>,
}

impl TestClient {
    pub(crate) fn new(version: ProtocolVersion, elicitation: bool, replies: Vec<Reply>) -> Self {
        Self {
            version,
            elicitation,
            replies: Arc::new(Mutex::new(replies.into())),
            shown: Arc::new(Mutex::new(Vec::new())),
            progress: Arc::new(Mutex::new(Vec::new())),
        }
    }

    pub(crate) fn shown(&self) -> Vec<Shown> {
        self.shown.lock().unwrap().clone()
    }
}

impl ClientHandler for TestClient {
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
        self.progress.lock().unwrap().push(params.message.unwrap_or_default());
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = request else {
            return Err(ErrorData::invalid_params("the test client shows forms only", None));
        };
        self.shown
            .lock()
            .unwrap()
            .push(Shown { message, schema: serde_json::to_value(&requested_schema).unwrap() });
        let reply = self.replies.lock().unwrap().pop_front();
        Ok(match reply {
            Some(Reply::Accept(content)) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(content)
            }
            Some(Reply::Decline) => ElicitResult::new(ElicitationAction::Decline),
            Some(Reply::Cancel) | None => ElicitResult::new(ElicitationAction::Cancel),
            Some(Reply::Late(wait, content)) => {
                tokio::time::sleep(wait).await;
                ElicitResult::new(ElicitationAction::Accept).with_content(content)
            }
        })
    }
}

pub(crate) type Client = RunningService<RoleClient, TestClient>;

/// Connects `client` to `server` over an in-memory pipe, with the lifecycle of the client's
/// revision (`initialize` before 2026-07-28, `server/discover` and per-request metadata from it on).
pub(crate) async fn connect(server: AskUserServer, client: TestClient) -> Client {
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let version = client.version.clone();
    if version.has_initialize() {
        client.serve(client_end).await.expect("the client connects")
    } else {
        client
            .serve_with_lifecycle(
                client_end,
                ClientLifecycleMode::Discover { preferred_versions: vec![version] },
            )
            .await
            .expect("the client connects")
    }
}

pub(crate) fn call(arguments: &Value) -> CallToolRequestParams {
    CallToolRequestParams::new("ask_user_question").with_arguments(arguments.as_object().unwrap().clone())
}

/// The one text block of a tool result, and whether it is an error.
pub(crate) fn text_of(result: &rmcp::model::CallToolResult) -> (String, bool) {
    assert_eq!(result.content.len(), 1, "{result:?}");
    (result.content[0].as_text().expect("a text block").text.clone(), result.is_error.unwrap_or(false))
}
