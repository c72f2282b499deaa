//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance` 0.1.16, pinned by
//! `tests/conformance/package-lock.json`) against `askuser serve`'s `/mcp`.
//!
//! The suite is built for Node.js 22 (it imports `fs.globSync`) and has no option for request
//! headers; `tests/conformance/shim/register.mjs`, preloaded with `node --import`, gives it the npm
//! `glob` package's `globSync` on Node.js 20 and adds the API token to its requests.
//!
//! Scenarios that apply: `server-initialize`, `ping`, `tools-list`, `server-sse-multiple-streams`,
//! `server-sse-polling`, `dns-rebinding-protection`. Those that do not, and why:
//! `tools-call-elicitation`, `elicitation-sep1034-defaults` and `elicitation-sep1330-enums` call
//! fixture tools (`test_elicitation`, …) with forms of their own, where askuser's only tool asks
//! the model's questions (its forms are tested with the SDK clients in `mcp.rs` and askuser-mcp's
//! tests); the other `tools-call-*`, `resources-*`, `prompts-*`, `logging-set-level`,
//! `completion-complete` and `json-schema-2020-12` need fixture tools, resources, prompts,
//! logging or completions askuser does not have.
//!
//! Needs `node` and `npm ci` in `tests/conformance` (`.ci/run` does it); without them the test
//! says so and skips, except under `CI=true`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::BufReader;

use crate::server::support::{self, TempDir, line_after};

/// The scenarios that apply to askuser, and how many checks each passes.
const SCENARIOS: [(&str, usize); 6] = [
    ("server-initialize", 1),
    ("ping", 1),
    ("tools-list", 1),
    ("server-sse-multiple-streams", 2),
    ("server-sse-polling", 2),
    ("dns-rebinding-protection", 2),
];

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
}

fn suite_ready() -> bool {
    let problem = if std::process::Command::new("node").arg("--version").output().is_err() {
        "Node.js (`node`) is not installed".to_owned()
    } else if !suite_dir().join("node_modules/@modelcontextprotocol/conformance/package.json").is_file() {
        format!(
            "@modelcontextprotocol/conformance is not installed (run `npm ci` in {})",
            suite_dir().display()
        )
    } else {
        return true;
    };
    askuser_testkit::skip("the MCP conformance suite", &problem);
    false
}

/// Runs one scenario against `url` (with `token`, when given); its output.
async fn scenario(url: &str, name: &str, token: Option<&str>) -> String {
    let mut command = tokio::process::Command::new("node");
    command
        .current_dir(suite_dir())
        .args([
            "--import",
            "./shim/register.mjs",
            "node_modules/@modelcontextprotocol/conformance/dist/index.js",
        ])
        .args(["server", "--url", url, "--scenario", name])
        .env("NO_COLOR", "1")
        .env_remove("ASKUSER_CONFORMANCE_TOKEN")
        .kill_on_drop(true);
    if let Some(token) = token {
        command.env("ASKUSER_CONFORMANCE_TOKEN", token);
    }
    let output = tokio::time::timeout(Duration::from_mins(1), command.output()).await.unwrap().unwrap();
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_conformance_suite_passes_the_scenarios_that_apply() {
    if !suite_ready() {
        return;
    }
    let dir = TempDir::new("conformance");
    let token_file = dir.0.join("token");
    let mut server = support::serve(&dir.0, &["--token-file", token_file.to_str().unwrap()]);
    let mut stderr = BufReader::new(server.stderr.take().unwrap());
    let url = format!("{}/mcp", line_after(&mut stderr, "askuser serve: listening on ").await);
    tokio::spawn(async move {
        let _ = tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await;
    });
    let token = std::fs::read_to_string(&token_file).unwrap().trim().to_owned();
    for (name, checks) in SCENARIOS {
        let output = scenario(&url, name, Some(&token)).await;
        let passed = format!("Passed: {checks}/{checks}, 0 failed");
        assert!(output.contains(&passed), "{name}: expected {passed:?}:\n{output}");
    }
    // Without the token the suite gets nowhere: /mcp is behind it.
    let output = scenario(&url, "ping", None).await;
    assert!(output.contains("Passed: 0/1, 1 failed"), "{output}");
}
