//! `askuser-mcp --fallback server URL`: a host without forms, a real `askuser-server serve` with
//! a temporary SQLite store, and a person answering through the server's `/v1` API.
//!
//! Needs the `askuser-server` binary beside `askuser-mcp` (package askuser-server-cli; `cargo test
//! --workspace` builds it). Without it the test says so and skips, except under `CI=true`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, ChildStderr, Command};

use crate::stdio::{batch, spawn, text};

fn server_binary() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_BIN_EXE_askuser-mcp"))
        .with_file_name(format!("askuser-server{}", std::env::consts::EXE_SUFFIX));
    if path.is_file() {
        return Some(path);
    }
    let problem = format!(
        "{} is not built (cargo build -p askuser-server-cli, or cargo test --workspace)",
        path.display()
    );
    assert!(!std::env::var("CI").is_ok_and(|v| v == "true"), "CI=true but {problem}");
    // Straight to the process's stderr: the harness captures `eprintln!`, and a skip must be seen.
    let _ = writeln!(std::io::stderr(), "SKIPPED: the --fallback server test, because {problem}");
    None
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn line_after(stderr: &mut BufReader<ChildStderr>, prefix: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        let read = tokio::time::timeout(Duration::from_secs(30), stderr.read_line(&mut line)).await;
        assert!(read.expect("timed out reading the server's stderr").unwrap() > 0, "no {prefix:?}");
        if let Some(rest) = line.trim_end().strip_prefix(prefix) {
            return rest.to_owned();
        }
    }
}

fn serve(binary: &Path, dir: &Path) -> Child {
    Command::new(binary)
        .args(["serve", "--bind", "127.0.0.1:0", "--store"])
        .arg(format!("sqlite:{}", dir.join("pending.db").display()))
        .env_remove("ASKUSER_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_without_forms_is_answered_through_the_answer_server() {
    let Some(binary) = server_binary() else { return };
    let dir =
        TempDir(std::env::temp_dir().join(format!("askuser-mcp-fallback-server-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let mut server = serve(&binary, &dir.0);
    let mut server_err = BufReader::new(server.stderr.take().unwrap());
    let url = line_after(&mut server_err, "askuser serve: listening on ").await;
    let token_file = dir.0.join("token");
    line_after(&mut server_err, "askuser serve: API token in ").await;
    let token = std::fs::read_to_string(&token_file).unwrap().trim().to_owned();

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

    let http = reqwest::Client::new();
    let id = pending_id(&http, &url, &token).await;
    let answer = json!({"answers": [
        {"header": "Plan", "selected": ["Large"]},
        {"header": "Extras", "custom_answer": "Weekly backups"}]});
    let reply = http
        .post(format!("{url}/v1/questions/{id}/answer"))
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .body(answer.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200, "{}", reply.text().await.unwrap());

    let (running, result) = tokio::time::timeout(Duration::from_secs(30), call).await.unwrap().unwrap();
    assert_eq!(text(&result.unwrap()), r#"{"Plan":["Large"],"Extras":["Weekly backups"]}"#);
    running.cancel().await.unwrap();
}

#[test]
fn a_missing_token_is_named_at_start() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_askuser-mcp"))
        .args(["--fallback", "server", "http://127.0.0.1:9", "--token-file", "/nonexistent/askuser-token"])
        .env_remove("ASKUSER_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--token-file"), "{stderr}");
}
