//! `askuser mcp` runs the `askuser-mcp` binary beside `askuser`, passing every argument through.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A directory holding a copy of `askuser`, and, with `sibling`, a stand-in `askuser-mcp` that
/// reports its arguments and what it read on stdin.
fn install(name: &str, sibling: bool) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("askuser-mcp-forward-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_askuser"), dir.join("askuser")).unwrap();
    if sibling {
        let script = dir.join("askuser-mcp");
        std::fs::write(&script, "#!/bin/sh\necho \"args: $*\"\necho \"stdin: $(cat)\"\nexit 7\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

#[test]
fn forwards_arguments_stdio_and_exit_status() {
    let dir = install("ok", true);
    let mut child = Command::new(dir.join("askuser"))
        .args(["mcp", "--fallback", "defaults", "--timeout", "60"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"{\"jsonrpc\":\"2.0\"}").unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "args: --fallback defaults --timeout 60\nstdin: {\"jsonrpc\":\"2.0\"}\n"
    );
    assert_eq!(output.status.code(), Some(7));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn says_how_to_get_the_server_when_it_is_missing() {
    let dir = install("missing", false);
    let output = Command::new(dir.join("askuser")).arg("mcp").stdin(Stdio::null()).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cargo build --release -p askuser-mcp-cli"), "{stderr}");
    std::fs::remove_dir_all(dir).unwrap();
}
