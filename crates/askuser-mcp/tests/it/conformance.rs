//! The official MCP conformance suite's client scenarios (npm `@modelcontextprotocol/conformance`
//! 0.1.16, installed in `crates/askuser-cli/tests/conformance`, which runs its server
//! scenarios) against the example host (`examples/host`), whose forms `ElicitationHandler`
//! answers.
//!
//! Scenarios that apply: `initialize`, `tools_call`, `elicitation-sep1034-client-defaults`. Those
//! that do not, and why: `sse-retry` tests the HTTP transport's reconnection, which is rmcp's
//! (its check passes, but its timing checks cannot be measured because rmcp opens the session's
//! GET stream right after `initialize`, which the scenario's server takes for the reconnection);
//! the `auth/*` scenarios test an OAuth client, which is the host's part, not askuser's (the
//! example host sends a bearer token with `--header`).
//!
//! Needs `node`, `npm ci` in that directory (`.ci/run` does it) and the example built (`cargo
//! test` builds it); without them the test says so and skips, except under `CI=true`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _};

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../askuser-cli/tests/conformance")
}

/// `target/<profile>/examples/host`, beside this test's own `deps` directory.
fn host() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().join("examples/host")
}

fn ready() -> bool {
    let problem = if std::process::Command::new("node").arg("--version").output().is_err() {
        "Node.js (`node`) is not installed".to_owned()
    } else if !suite_dir().join("node_modules/@modelcontextprotocol/conformance/package.json").is_file() {
        format!(
            "@modelcontextprotocol/conformance is not installed (run `npm ci` in {})",
            suite_dir().display()
        )
    } else if !host().is_file() {
        format!(
            "the example host is not built at {} (cargo build -p askuser-mcp --example host)",
            host().display()
        )
    } else {
        return true;
    };
    askuser_testkit::skip("the MCP conformance suite's client scenarios", &problem);
    false
}

/// Runs client scenario `name` with the example host and `flags` (the suite adds the URL of its
/// server); its output.
async fn scenario(name: &str, flags: &str) -> String {
    // `exec`: the suite runs the command through a shell and, at its 30 s limit, kills that
    // shell; the host must be the process it kills.
    let command = format!("exec {} {flags}", host().display());
    let mut node = tokio::process::Command::new("node");
    node.current_dir(suite_dir())
        .args([
            "--import",
            "./shim/register.mjs",
            "node_modules/@modelcontextprotocol/conformance/dist/index.js",
            "client",
            "--scenario",
            name,
            "--command",
            &command,
        ])
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = node.spawn().unwrap();
    // Read as it comes, so that a scenario that never ends still shows how far it got.
    let (stdout, stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let copy = |mut from: Box<dyn AsyncRead + Unpin + Send>, seen: Arc<Mutex<Vec<u8>>>| async move {
        let mut chunk = [0_u8; 4096];
        while let Ok(n @ 1..) = from.read(&mut chunk).await {
            seen.lock().unwrap().extend_from_slice(&chunk[..n]);
        }
    };
    let reading = tokio::spawn(copy(Box::new(stdout), Arc::clone(&seen)));
    let reading_err = tokio::spawn(copy(Box::new(stderr), Arc::clone(&seen)));
    // The suite gives the client 30 s, then ends it.
    if tokio::time::timeout(Duration::from_secs(90), child.wait()).await.is_err() {
        let _ = child.kill().await;
        let seen = String::from_utf8_lossy(&seen.lock().unwrap()).into_owned();
        panic!("{name}: the suite did not end within 90 s; its output so far:\n{seen}");
    }
    let _ = tokio::join!(reading, reading_err);
    let seen = seen.lock().unwrap();
    String::from_utf8_lossy(&seen).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_conformance_suite_passes_the_client_scenarios_that_apply() {
    if !ready() {
        return;
    }
    let cases = [
        ("initialize", "", 1),
        ("tools_call", r#"--call 'add_numbers={"a":2,"b":3}'"#, 1),
        // Defaults are sent unseen only from a server named for it (SEP-1034's five kinds).
        (
            "elicitation-sep1034-client-defaults",
            "--unattended-from elicitation-defaults-test-server --call test_client_elicitation_defaults",
            5,
        ),
    ];
    for (name, flags, checks) in cases {
        let output = scenario(name, flags).await;
        let passed = format!("Passed: {checks}/{checks}, 0 failed, 0 warnings");
        assert!(
            output.contains(&passed) && output.contains("OVERALL: PASSED"),
            "{name}: expected {passed:?}:\n{output}"
        );
    }
    // Named no server: the defaults are no person's answer, and the form is declined.
    let output = scenario(
        "elicitation-sep1034-client-defaults",
        "--unattended-from another-server --call test_client_elicitation_defaults",
    )
    .await;
    assert!(output.contains("Expected action 'accept', got 'decline'"), "{output}");
}
