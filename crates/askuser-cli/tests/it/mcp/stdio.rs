//! `askuser mcp` as a child process, with rmcp's client on the other end of its stdin/stdout.

use std::process::Stdio;

use askuser_mcp::testing::{Reply, ScriptedClient, serve_client};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::RoleClient;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

/// Spawns `askuser mcp ARGS` and connects a scripted host at `version` that, with `elicitation`,
/// answers its form by picking the first option of each choice field.
pub(crate) async fn spawn(
    args: &[&str],
    version: ProtocolVersion,
    elicitation: bool,
) -> (RunningService<RoleClient, ScriptedClient>, ScriptedClient) {
    let mut command = super::mcp_command();
    command.args(args);
    let (transport, _stderr) =
        TokioChildProcess::builder(command).stderr(Stdio::inherit()).spawn().expect("askuser mcp starts");
    let client = ScriptedClient::new(version.clone(), elicitation, vec![Reply::FirstChoice]);
    (serve_client(client.clone(), version, transport).await, client)
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
        let shown = client.shown();
        assert_eq!(shown.len(), 1);
        assert!(shown[0].message.contains("(through stdio-test)"), "{}", shown[0].message);
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
    let output = super::mcp_command_std()
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

/// `--profile extended` in the binary: a text question through the host's form, and a secret
/// question that never reaches it (declined: this server's fallback cannot take secrets).
#[tokio::test]
async fn the_extended_profile_over_stdio() {
    let version = ProtocolVersion::V_2025_11_25;
    let mut command = super::mcp_command();
    command.args(["--profile", "extended"]);
    let (transport, _stderr) =
        TokioChildProcess::builder(command).stderr(Stdio::inherit()).spawn().expect("askuser mcp starts");
    let reply = Reply::Accept(json!({"q01": "Large", "q02": "feature/x"}));
    let client = ScriptedClient::new(version.clone(), true, vec![reply]);
    let running = serve_client(client.clone(), version, transport).await;
    let arguments = json!({"questions": [
        {"header": "Plan", "question": "Which plan?", "options": [{"label": "Small"}, {"label": "Large"}]},
        {"kind": "text", "header": "Branch", "question": "Which branch?"}]});
    let result = running.call_tool(askuser_mcp::testing::call(&arguments)).await.unwrap();
    assert_eq!(
        text(&result),
        r#"{"status":"answered","answered_by":"user","answers":[{"id":"q1","header":"Plan","selected":["Large"],"other_text":null},{"id":"q2","header":"Branch","selected":[],"other_text":"feature/x"}]}"#
    );
    let secret = json!({"questions": [{"kind": "secret", "header": "Token", "question": "Your token?",
        "secret_name": "API_TOKEN", "purpose": "To call the API."}]});
    let result = running.call_tool(askuser_mcp::testing::call(&secret)).await.unwrap();
    assert_eq!(text(&result), r#"{"status":"declined","answered_by":"unattended","answers":[]}"#);
    assert_eq!(client.shown().len(), 1, "the secret went into a form");
    running.cancel().await.unwrap();
}

/// Spawns `askuser mcp ARGS` in a session of its own without a controlling terminal, as the
/// Python SDK starts servers, with a host that cannot show forms.
async fn spawn_without_terminal(args: &[&str]) -> RunningService<RoleClient, ScriptedClient> {
    let mut command = tokio::process::Command::new("setsid");
    command.arg("--wait").arg(env!("CARGO_BIN_EXE_askuser")).arg("mcp").args(args);
    let (transport, _stderr) =
        TokioChildProcess::builder(command).stderr(Stdio::inherit()).spawn().expect("askuser mcp starts");
    let version = ProtocolVersion::V_2025_11_25;
    serve_client(ScriptedClient::new(version.clone(), false, vec![]), version, transport).await
}

/// Guards `--fallback terminal` under hosts that start servers without a terminal: the server
/// starts, and each call goes on to the next fallback, the model told why when nobody is left.
#[tokio::test]
async fn the_terminal_fallback_without_a_terminal_passes_calls_on() {
    let running = spawn_without_terminal(&["--fallback", "terminal,defaults"]).await;
    let tools = running.list_all_tools().await.unwrap();
    let description = tools[0].description.as_deref().unwrap();
    assert!(
        description.contains("shown on the terminal where the MCP server runs; when that is not available, the default options are picked"),
        "{description}"
    );
    let result = running.call_tool(batch()).await.unwrap();
    assert_eq!(
        text(&result),
        r#"{"answered_by":"unattended","answers":{"Plan":["Small"],"Extras":["Backups"]}}"#
    );
    running.cancel().await.unwrap();

    let running = spawn_without_terminal(&["--fallback", "terminal"]).await;
    let result = running.call_tool(batch()).await.unwrap();
    let said = text(&result);
    assert!(said.starts_with(askuser_mcp::NO_FORM), "{said}");
    assert!(said.contains("the terminal fallback: this process has no terminal (/dev/tty: "), "{said}");
    assert_eq!(result.is_error, Some(false));
    running.cancel().await.unwrap();
}

/// `askuser mcp --version` answers as `askuser --version` does (the version and the commit), as
/// the separate binary it replaces answered.
#[test]
fn names_its_version() {
    let whole = std::process::Command::new(env!("CARGO_BIN_EXE_askuser")).arg("--version").output().unwrap();
    for flag in ["--version", "-V", "version"] {
        let output = super::mcp_command_std().arg(flag).output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        assert_eq!(
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(whole.stdout.clone()).unwrap()
        );
    }
}

/// `--background`: a ticket answered through the form is read back by a later process from the
/// same SQLite file; a process working in another directory refuses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_tickets_outlive_the_process_and_stay_in_their_workspace() {
    let dir = std::env::temp_dir().join(format!("askuser-mcp-background-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
    let store = format!("sqlite:{}", dir.join("tickets.db").display());
    let tool = |name: &str, arguments: serde_json::Value| {
        CallToolRequestParams::new(name.to_owned()).with_arguments(arguments.as_object().unwrap().clone())
    };
    let started = |cwd: &std::path::Path, elicitation: bool| {
        let mut command = super::mcp_command();
        command.args(["--background", "--store", &store]).current_dir(cwd);
        let (transport, _) =
            TokioChildProcess::builder(command).stderr(Stdio::null()).spawn().expect("askuser mcp starts");
        let client =
            ScriptedClient::new(ProtocolVersion::V_2025_11_25, elicitation, vec![Reply::FirstChoice]);
        serve_client(client, ProtocolVersion::V_2025_11_25, transport)
    };
    let running = started(&dir, true).await;
    let names: Vec<String> =
        running.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["ask_user_question", "ask_user_question_later", "get_user_answers"]);
    let arguments = batch().arguments.map(serde_json::Value::Object).unwrap();
    let later = running.call_tool(tool("ask_user_question_later", arguments)).await.unwrap();
    let ticket = text(&later).split("Ticket: ").nth(1).unwrap().split('.').next().unwrap().to_owned();
    let answers = running
        .call_tool(tool("get_user_answers", json!({"ticket": ticket, "wait_seconds": 20})))
        .await
        .unwrap();
    let expected = r#"{"Plan":["Small"],"Extras":["Backups"]}"#;
    assert_eq!(text(&answers), expected);
    running.cancel().await.unwrap();

    let running = started(&dir, false).await;
    let again = running.call_tool(tool("get_user_answers", json!({"ticket": ticket}))).await.unwrap();
    assert_eq!(text(&again), expected, "read back by another process");
    running.cancel().await.unwrap();
    let running = started(&dir.join("elsewhere"), false).await;
    let refused = running.call_tool(tool("get_user_answers", json!({"ticket": ticket}))).await.unwrap();
    assert!(text(&refused).contains("is not one of this server's"), "{}", text(&refused));
    running.cancel().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
