//! `askuser mcp --fallback server URL`: a host without forms, a real `askuser serve` with
//! a temporary SQLite store, and a person answering through the server's `/v1` API.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio::process::{Child, ChildStderr};

use crate::mcp::stdio::{batch, spawn, text};
use crate::server::support::{TempDir, line_after, serve};

/// The one pending question's id, once the MCP server has put it on the answer server.
async fn pending_id(http: &reqwest::Client, url: &str, token: &str) -> String {
    for _ in 0..300 {
        let reply = http
            .get(format!("{url}/v1/questions?state=pending"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let reply: Value = serde_json::from_str(&reply).unwrap();
        if let Some(id) = reply["records"][0]["id"].as_str() {
            return id.to_owned();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no question reached the answer server");
}

/// A running `askuser serve` in a temporary directory: its URL, token file and token.
struct AnswerServer {
    dir: TempDir,
    url: String,
    token_file: PathBuf,
    token: String,
    _child: Child,
    stderr: BufReader<ChildStderr>,
}

async fn answer_server(name: &str, profile: &str) -> AnswerServer {
    let dir = TempDir::new(&format!("mcp-{name}"));
    let mut child = serve(&dir.0, &["--profile", profile]);
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let url = line_after(&mut stderr, "askuser serve: listening on ").await;
    let token_file = dir.0.join("token");
    line_after(&mut stderr, "askuser serve: API token in ").await;
    let token = std::fs::read_to_string(&token_file).unwrap().trim().to_owned();
    AnswerServer { dir, url, token_file, token, _child: child, stderr }
}

/// Posts `answer` to the one pending question, as the page would.
async fn post_answer(server: &AnswerServer, answer: &Value) {
    let http = reqwest::Client::new();
    let id = pending_id(&http, &server.url, &server.token).await;
    let reply = http
        .post(format!("{}/v1/questions/{id}/answer", server.url))
        .bearer_auth(&server.token)
        .header("content-type", "application/json")
        .body(answer.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200, "{}", reply.text().await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_without_forms_is_answered_through_the_answer_server() {
    let server = answer_server("fallback-server", "reference").await;
    let (url, token_file) = (server.url.clone(), server.token_file.clone());
    let token_arg = token_file.to_str().unwrap();
    let args = ["--fallback", "server", url.as_str(), "--token-file", token_arg, "--timeout", "60"];
    let (running, _) = spawn(&args, ProtocolVersion::V_2025_11_25, false).await;
    let tools = running.list_all_tools().await.unwrap();
    assert!(
        tools[0].description.as_deref().unwrap().contains(&format!("put on the answer server at {url}")),
        "{:?}",
        tools[0].description
    );
    let call = tokio::spawn(async move {
        let result = running.call_tool(batch()).await;
        (running, result)
    });

    // The question says who asks: the host's clientInfo, and where the MCP server works.
    let http = reqwest::Client::new();
    let id = pending_id(&http, &server.url, &server.token).await;
    let record =
        http.get(format!("{url}/v1/questions/{id}")).bearer_auth(&server.token).send().await.unwrap();
    let record: Value = serde_json::from_str(&record.text().await.unwrap()).unwrap();
    let asked_by = record["asked_by"].as_str().unwrap_or_default();
    assert!(
        asked_by.starts_with("askuser-test-client 0.0.0 in ") && asked_by.ends_with("askuser-cli"),
        "{record}"
    );

    let answer = json!({"answers": [
        {"header": "Plan", "selected": ["Large"]},
        {"header": "Extras", "custom_answer": "Weekly backups"}]});
    post_answer(&server, &answer).await;

    let (running, result) = tokio::time::timeout(Duration::from_secs(30), call).await.unwrap().unwrap();
    assert_eq!(text(&result.unwrap()), r#"{"Plan":["Large"],"Extras":["Weekly backups"]}"#);
    running.cancel().await.unwrap();
}

/// A secret question never goes into a host's form, but `--secret-file` with `--fallback server`
/// asks it on the answer server (a password field there): the value reaches only the file, never
/// the tool result, the MCP server's output or the answer server's log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_goes_through_the_answer_server_to_the_secret_file_only() {
    const VALUE: &str = "mcp-LEAKCANARY-5e8f";
    let mut server = answer_server("fallback-secret", "extended").await;
    let secret_file = server.dir.0.join("secrets.env");
    let mut command = super::mcp_command();
    command
        .args(["--profile", "extended", "--fallback", "server", &server.url, "--token-file"])
        .arg(&server.token_file)
        .arg("--secret-file")
        .arg(&secret_file);
    let (transport, stderr) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .expect("askuser mcp starts");
    let client = askuser_mcp::testing::ScriptedClient::new(ProtocolVersion::V_2025_11_25, false, vec![]);
    let running = askuser_mcp::testing::serve_client(client, ProtocolVersion::V_2025_11_25, transport).await;
    let tools = running.list_all_tools().await.unwrap();
    let description = tools[0].description.as_deref().unwrap();
    assert!(
        description.contains("A secret question is never put in the MCP client's form: it is asked"),
        "{description}"
    );
    let arguments = json!({"questions": [{"kind": "secret", "header": "Token", "question": "The deploy token?",
        "secret_name": "DEPLOY_TOKEN", "purpose": "to push the release"}]});
    let call = askuser_mcp::testing::call(&arguments);
    let call = tokio::spawn(async move {
        let result = running.call_tool(call).await;
        (running, result)
    });
    let answer = json!({"answers": [{"header": "Token", "secret_ref": "session:DEPLOY_TOKEN"}],
        "secret_values": {"DEPLOY_TOKEN": VALUE}});
    post_answer(&server, &answer).await;

    let (running, result) = tokio::time::timeout(Duration::from_secs(30), call).await.unwrap().unwrap();
    let result = text(&result.unwrap()).to_owned();
    assert_eq!(
        result,
        r#"{"status":"answered","answered_by":"user","answers":[{"id":"q1","header":"Token","selected":[],"other_text":null,"secret_ref":"session:DEPLOY_TOKEN"}]}"#
    );
    running.cancel().await.unwrap();
    assert_eq!(std::fs::read_to_string(&secret_file).unwrap(), format!("DEPLOY_TOKEN={VALUE}\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(&secret_file).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let mut mcp_err = String::new();
    let mut stderr = stderr.expect("stderr is piped");
    // `cancel` closed the MCP server's stdin, so it exits and its stderr ends.
    tokio::time::timeout(
        Duration::from_secs(10),
        tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut mcp_err),
    )
    .await
    .expect("askuser mcp exits once its host is gone")
    .unwrap();
    assert!(mcp_err.contains("answer at"), "{mcp_err}");
    assert!(!mcp_err.contains(VALUE), "the MCP server's stderr holds the secret: {mcp_err}");
    let mut server_log = String::new();
    let _ = tokio::time::timeout(
        Duration::from_millis(300),
        tokio::io::AsyncReadExt::read_to_string(&mut server.stderr, &mut server_log),
    )
    .await;
    assert!(!server_log.contains(VALUE), "the answer server's log holds the secret");
}

#[test]
fn a_missing_token_is_named_at_start() {
    let output = super::mcp_command_std()
        .args(["--fallback", "server", "http://127.0.0.1:9", "--token-file", "/nonexistent/askuser-token"])
        .env_remove("ASKUSER_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--token-file"), "{stderr}");
}

/// `--fallback server http://` to another machine warns that everything crosses in the clear (here
/// before the missing token file stops it: nothing is sent anywhere); loopback does not.
#[test]
fn plain_http_beyond_loopback_is_warned_about() {
    for (url, warned) in [("http://ask.example.com:8765", true), ("http://127.0.0.1:9", false)] {
        let output = super::mcp_command_std()
            .args(["--fallback", "server", url, "--token-file", "/nonexistent/askuser-token"])
            .env_remove("ASKUSER_TOKEN")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            stderr.contains(&format!("askuser mcp: warning: {url} is plain HTTP beyond this machine")),
            warned,
            "{stderr}"
        );
        assert!(stderr.contains("/nonexistent/askuser-token"), "{stderr}");
    }
}

/// `--also server URL` with a host that shows forms: the form and the answer server race.
async fn racing(
    server: &AnswerServer,
    reply: askuser_mcp::testing::Reply,
) -> (Client, askuser_mcp::testing::ScriptedClient) {
    let mut command = super::mcp_command();
    command.args(["--also", "server", &server.url, "--token-file"]).arg(&server.token_file);
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .expect("askuser mcp starts");
    let client = askuser_mcp::testing::ScriptedClient::new(ProtocolVersion::V_2025_11_25, true, vec![reply]);
    (
        askuser_mcp::testing::serve_client(client.clone(), ProtocolVersion::V_2025_11_25, transport).await,
        client,
    )
}

type Client = rmcp::service::RunningService<rmcp::service::RoleClient, askuser_mcp::testing::ScriptedClient>;

async fn record_state(server: &AnswerServer) -> Value {
    let list: Value = reqwest::Client::new()
        .get(format!("{}/v1/questions", server.url))
        .bearer_auth(&server.token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    list["records"][0]["state"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn also_the_forms_answer_wins_and_the_answer_server_is_told() {
    let server = answer_server("also-form", "reference").await;
    let (running, client) = racing(&server, askuser_mcp::testing::Reply::FirstChoice).await;
    let result = tokio::time::timeout(Duration::from_secs(30), running.call_tool(batch())).await.unwrap();
    assert_eq!(text(&result.unwrap()), r#"{"Plan":["Small"],"Extras":["Backups"]}"#);
    assert_eq!(client.shown().len(), 1);
    assert_eq!(record_state(&server).await, "answered", "the page says it was answered");
    running.cancel().await.unwrap();
}

/// Guards the race's loser: an answer on the answer server cancels the host's open form.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn also_an_answer_on_the_server_wins_and_cancels_the_form() {
    let server = answer_server("also-server", "reference").await;
    let (running, client) = racing(&server, askuser_mcp::testing::Reply::Hang).await;
    let call = tokio::spawn(async move {
        let result = running.call_tool(batch()).await;
        (running, result)
    });
    post_answer(&server, &json!({"answers": [{"header": "Plan", "selected": ["Large"]}, {"header": "Extras", "selected": ["Support"]}]})).await;
    let (running, result) = tokio::time::timeout(Duration::from_secs(30), call).await.unwrap().unwrap();
    assert_eq!(text(&result.unwrap()), r#"{"Plan":["Large"],"Extras":["Support"]}"#);
    for _ in 0..200 {
        if !client.cancelled().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(client.shown().len(), 1);
    assert_eq!(client.cancelled(), vec![client.shown()[0].id.clone()]);
    running.cancel().await.unwrap();
}

/// Issue 36.17: `--background` and `--fallback server` on the answer server's own store showed one
/// ticket twice on the page (the ticket, and a copy the fallback posted), and once the host had
/// quit, answering the copy was acknowledged while the ticket stayed pending (and a later process
/// posted a third entry). The fallback now waits on the ticket itself: one question, one entry,
/// and its answer is the ticket's, whichever process collects it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_asks_on_the_answer_servers_store_make_one_entry() {
    let server = answer_server("background-shared", "reference").await;
    let store = format!("sqlite:{}", server.dir.0.join("pending.db").display());
    let token_file = server.token_file.to_str().unwrap().to_owned();
    let args = [
        "--background",
        "--store",
        store.as_str(),
        "--fallback",
        "server",
        server.url.as_str(),
        "--token-file",
        token_file.as_str(),
        "--timeout",
        "60",
    ];
    let tool = |name: &str, arguments: Value| {
        rmcp::model::CallToolRequestParams::new(name.to_owned())
            .with_arguments(arguments.as_object().unwrap().clone())
    };
    let (running, _) = spawn(&args, ProtocolVersion::V_2025_11_25, false).await;
    let arguments = batch().arguments.map(Value::Object).unwrap();
    let later = running.call_tool(tool("ask_user_question_later", arguments)).await.unwrap();
    let ticket = text(&later).split("Ticket: ").nth(1).unwrap().split('.').next().unwrap().to_owned();
    // The host quits before anyone answers; another process of it is asked for the answers, and
    // asks on the side again while the person has not answered.
    let waited = running
        .call_tool(tool("get_user_answers", json!({"ticket": ticket, "wait_seconds": 1})))
        .await
        .unwrap();
    assert!(text(&waited).contains("has not answered yet"), "{}", text(&waited));
    running.cancel().await.unwrap();
    let (running, _) = spawn(&args, ProtocolVersion::V_2025_11_25, false).await;
    let waited = running
        .call_tool(tool("get_user_answers", json!({"ticket": ticket, "wait_seconds": 1})))
        .await
        .unwrap();
    assert!(text(&waited).contains("has not answered yet"), "{}", text(&waited));

    let http = reqwest::Client::new();
    let all = || async {
        let reply =
            http.get(format!("{}/v1/questions", server.url)).bearer_auth(&server.token).send().await.unwrap();
        let reply: Value = serde_json::from_str(&reply.text().await.unwrap()).unwrap();
        reply["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(all().await, std::slice::from_ref(&ticket), "one question, one entry on the page");
    let answer = json!({"answers": [
        {"header": "Plan", "selected": ["Large"]},
        {"header": "Extras", "selected": ["Support"]}]});
    let reply = http
        .post(format!("{}/v1/questions/{ticket}/answer", server.url))
        .bearer_auth(&server.token)
        .header("content-type", "application/json")
        .body(answer.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200, "{}", reply.text().await.unwrap());
    let answers = running
        .call_tool(tool("get_user_answers", json!({"ticket": ticket, "wait_seconds": 20})))
        .await
        .unwrap();
    assert_eq!(text(&answers), r#"{"Plan":["Large"],"Extras":["Support"]}"#);
    assert_eq!(all().await, [ticket], "still one entry");
    running.cancel().await.unwrap();
}
