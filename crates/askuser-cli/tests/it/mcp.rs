//! `askuser mcp` is the MCP server itself (feature `mcp`, on by default), not a sibling binary;
//! without the feature it says how to get a build that has it. The submodules spawn it as a child
//! process and drive it over stdio with real MCP clients: rmcp's, and the official TypeScript
//! SDK's.

use std::process::{Command, Stdio};

#[cfg(feature = "mcp")]
mod node;
#[cfg(feature = "mcp")]
mod sdk_forms;
// A real `askuser serve` as the answer server.
#[cfg(all(feature = "mcp", feature = "server"))]
mod server;
#[cfg(feature = "mcp")]
mod stdio;
#[cfg(feature = "mcp")]
mod terminal;

/// `askuser mcp`, to be given its options (a Tokio child process).
#[cfg(feature = "mcp")]
fn mcp_command() -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_askuser"));
    command.arg("mcp");
    command
}

/// `askuser mcp`, to be given its options (a blocking child process).
#[cfg(feature = "mcp")]
fn mcp_command_std() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_askuser"));
    command.arg("mcp");
    command
}

#[cfg(feature = "mcp")]
#[test]
fn serves_mcp_on_stdio_in_this_binary() {
    use std::io::{BufRead as _, BufReader, Write as _};

    // Alone in a directory: nothing beside it to run.
    let dir = std::env::temp_dir().join(format!("askuser-mcp-alone-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join(format!("askuser{}", std::env::consts::EXE_SUFFIX));
    std::fs::copy(env!("CARGO_BIN_EXE_askuser"), &exe).unwrap();
    let mut child = Command::new(&exe)
        .args(["mcp", "--fallback", "defaults"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |line: &str| writeln!(stdin, "{line}").and_then(|()| stdin.flush()).unwrap();
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"it","version":"0"}}}"#,
    );
    let reply: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["serverInfo"]["name"], "askuser-mcp", "{reply}");
    assert_eq!(reply["result"]["protocolVersion"], "2025-06-18", "{reply}");
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    // The server may ask something first (it pings a 2025 client once after `initialized`):
    // answer that, and read on to the reply.
    let reply: serde_json::Value = loop {
        let message: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if message["method"] == "ping" {
            send(&format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, message["id"]));
            continue;
        }
        break message;
    };
    let tools = reply["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{reply}");
    assert_eq!(tools[0]["name"], "ask_user_question");
    drop(stdin);
    assert!(child.wait().unwrap().success());
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(not(feature = "mcp"))]
#[test]
fn without_the_feature_it_gives_a_command_that_works_here() {
    let output = Command::new(env!("CARGO_BIN_EXE_askuser"))
        .args(["mcp", "--fallback", "defaults"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("built without the `mcp` feature"), "{stderr}");
    // The tests run inside the clone, from its target directory: `cargo run` works here, and so
    // does the install from this clone.
    assert!(stderr.contains("\n  cargo run --quiet --bin askuser -- mcp --fallback defaults\n"), "{stderr}");
    assert!(
        stderr.contains("/crates/askuser-cli\n") && stderr.contains("cargo install --locked --path"),
        "{stderr}"
    );
}
