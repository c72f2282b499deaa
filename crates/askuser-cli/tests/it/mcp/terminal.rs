//! `--fallback terminal` end to end: `askuser mcp` in its own session with a pseudo-terminal as
//! its controlling terminal (as when a host is started from a shell), MCP on two FIFOs, and a
//! client that cannot show forms. The questions must appear on the terminal, never on the MCP
//! channel, and the keys typed there must answer them.

#![cfg(unix)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use askuser_testkit::Pty;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::json;

const PATIENCE: Duration = Duration::from_secs(20);

#[tokio::test]
async fn the_terminal_fallback_asks_on_the_controlling_terminal() {
    let terminal = Pty::open(100, 24);

    let dir = std::env::temp_dir().join(format!("askuser-mcp-terminal-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (to_server, from_server): (PathBuf, PathBuf) = (dir.join("in"), dir.join("out"));
    for fifo in [&to_server, &from_server] {
        assert!(Command::new("mkfifo").arg(fifo).status().unwrap().success());
    }
    // setsid makes the pty (its stdin) the controlling terminal; the shell then puts MCP on the
    // FIFOs, so /dev/tty is the only way to the person.
    let mut server = Command::new("setsid")
        .args(["--ctty", "sh", "-c", r#"exec "$0" mcp --fallback terminal --timeout 60 <"$1" >"$2""#])
        .arg(env!("CARGO_BIN_EXE_askuser"))
        .arg(&to_server)
        .arg(&from_server)
        .stdin(terminal.stdio())
        .stderr(terminal.stdio())
        .stdout(Stdio::null())
        .env("TERM", "xterm-256color")
        .env_remove("ACCESSIBLE")
        .env_remove("ASKUSER_ACCESSIBLE")
        .spawn()
        .unwrap();
    // Each end of a FIFO waits for the other: open both at once.
    let mut for_writing = tokio::fs::OpenOptions::new();
    for_writing.write(true);
    let (writer, reader) = tokio::join!(for_writing.open(&to_server), tokio::fs::File::open(&from_server));
    // A client that declares no elicitation: the fallback must answer.
    let client = ().serve((reader.unwrap(), writer.unwrap())).await.expect("the server answers initialize");
    let tools = client.list_all_tools().await.unwrap();
    assert!(
        tools[0].description.as_deref().unwrap().contains("shown on the terminal where the MCP server runs"),
        "{:?}",
        tools[0].description
    );
    let arguments = json!({"questions": [{"header": "Plan", "question": "Which plan fits?",
        "options": [{"label": "Small"}, {"label": "Large"}]}]});
    let call = CallToolRequestParams::new("ask_user_question")
        .with_arguments(arguments.as_object().unwrap().clone());
    let pending = tokio::spawn(async move { client.call_tool(call).await.map(|result| (result, client)) });

    let typing = std::thread::spawn(move || {
        terminal.wait_for("Which plan fits?", PATIENCE);
        terminal.send(b"2");
        terminal
    });
    let (result, client) =
        tokio::time::timeout(PATIENCE, pending).await.expect("answered in time").unwrap().unwrap();
    let terminal = typing.join().unwrap();
    assert_eq!(result.content[0].as_text().unwrap().text, r#"{"Plan":["Large"]}"#, "{}", terminal.text());
    client.cancel().await.unwrap();
    let _ = server.kill();
    let _ = server.wait();
    std::fs::remove_dir_all(dir).unwrap();
}
