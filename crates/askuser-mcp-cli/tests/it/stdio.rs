//! `askuser-mcp` as a child process, with rmcp's client on the other end of its stdin/stdout.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ElicitRequestParams, ElicitResult, ElicitationAction,
    ErrorData, Implementation, InitializeRequestParams, ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};

/// A client that answers every form by picking the first option of each choice field.
#[derive(Clone)]
pub(crate) struct FirstChoice {
    version: ProtocolVersion,
    elicitation: bool,
    messages: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for FirstChoice {
    fn get_info(&self) -> InitializeRequestParams {
        let capabilities = if self.elicitation {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        InitializeRequestParams::new(capabilities, Implementation::new("askuser-stdio-test", "0.0.0"))
            .with_protocol_version(self.version.clone())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } = request else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        self.messages.lock().unwrap().push(message);
        let schema = serde_json::to_value(&requested_schema).unwrap();
        let mut content = serde_json::Map::new();
        for (key, field) in schema["properties"].as_object().unwrap() {
            if let Some(first) = field["oneOf"].get(0).or_else(|| field["items"]["anyOf"].get(0)) {
                let value = first["const"].clone();
                content.insert(key.clone(), if field["type"] == "array" { json!([value]) } else { value });
            }
        }
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content)))
    }
}

pub(crate) async fn spawn(
    args: &[&str],
    version: ProtocolVersion,
    elicitation: bool,
) -> (RunningService<RoleClient, FirstChoice>, FirstChoice) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_askuser-mcp"));
    command.args(args);
    let (transport, _stderr) =
        TokioChildProcess::builder(command).stderr(Stdio::inherit()).spawn().expect("askuser-mcp starts");
    let client = FirstChoice { version: version.clone(), elicitation, messages: Arc::default() };
    let running = if version.has_initialize() {
        client.clone().serve(transport).await.expect("initialize")
    } else {
        client
            .clone()
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover { preferred_versions: vec![version] },
            )
            .await
            .expect("discover")
    };
    (running, client)
}

pub(crate) fn batch() -> CallToolRequestParams {
    let arguments = json!({"questions": [
        {"header": "Plan", "question": "Which plan?", "options": [{"label": "Small"}, {"label": "Large"}]},
        {"header": "Extras", "question": "Which extras?", "multi_select": true,
         "options": [{"label": "Backups"}, {"label": "Support"}]}]});
    CallToolRequestParams::new("ask_user_question").with_arguments(arguments.as_object().unwrap().clone())
}

pub(crate) fn text(result: &rmcp::model::CallToolResult) -> &str {
    &result.content[0].as_text().unwrap().text
}

#[tokio::test]
async fn answers_through_the_hosts_form() {
    for version in [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28] {
        let (running, client) = spawn(&["--name", "stdio-test"], version.clone(), true).await;
        let tools = running.list_all_tools().await.unwrap();
        assert_eq!(tools[0].name, "ask_user_question");
        let result = running.call_tool(batch()).await.unwrap();
        assert_eq!(text(&result), r#"{"Plan":["Small"],"Extras":["Backups"]}"#, "{version}");
        let messages = client.messages.lock().unwrap().clone();
        assert_eq!(messages.len(), 1);
        assert!(messages[0].contains("(through stdio-test)"), "{}", messages[0]);
        running.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_host_without_forms_gets_the_fallback() {
    let (running, _) =
        spawn(&["--fallback", "defaults", "--timeout", "60"], ProtocolVersion::V_2025_06_18, false).await;
    let tools = running.list_all_tools().await.unwrap();
    assert!(tools[0].description.as_deref().unwrap().contains("the default options are picked"));
    let result = running.call_tool(batch()).await.unwrap();
    assert_eq!(
        text(&result),
        r#"{"answered_by":"unattended","answers":{"Plan":["Small"],"Extras":["Backups"]}}"#
    );
    running.cancel().await.unwrap();

    let (running, _) = spawn(&[], ProtocolVersion::V_2025_06_18, false).await;
    let result = running.call_tool(batch()).await.unwrap();
    assert_eq!(text(&result), askuser_mcp::NO_FORM);
    running.cancel().await.unwrap();
}

#[test]
fn bad_options_exit_2_naming_the_problem() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_askuser-mcp"))
        .args(["--fallback", "carrier-pigeon"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("--fallback takes decline, defaults, terminal or server URL")
    );
}
