//! `askuser mcp` against a client no one here wrote: the official MCP TypeScript SDK
//! (`@modelcontextprotocol/sdk`, pinned by `tests/node/package-lock.json`), run with Node.js.
//!
//! Needs `node` and `npm ci` in `tests/node` (`.ci/run` does it). Without them the tests say so
//! and skip, except under `CI=true`, where a missing service is a failure.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

pub(crate) fn node_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/node")
}

/// Whether Node.js and the SDK are here; under `CI=true` their absence fails the test.
pub(crate) fn node_ready() -> bool {
    let problem = if Command::new("node").arg("--version").output().is_err() {
        Some("Node.js (`node`) is not installed".to_owned())
    } else if !node_dir().join("node_modules/@modelcontextprotocol/sdk/package.json").is_file() {
        Some(format!("@modelcontextprotocol/sdk is not installed (run `npm ci` in {})", node_dir().display()))
    } else {
        None
    };
    match problem {
        None => true,
        Some(problem) => {
            askuser_testkit::skip("the TypeScript SDK client test", &problem);
            false
        }
    }
}

/// Runs the SDK client against `askuser mcp SERVER_ARGS` with `reply`, returning its report.
fn run(reply: &str, server_args: &[&str], arguments: &Value) -> Value {
    let output = Command::new("node")
        .current_dir(node_dir())
        .arg("client.mjs")
        .arg(reply)
        .arg(env!("CARGO_BIN_EXE_askuser"))
        .arg("mcp")
        .args(server_args)
        .env("ASKUSER_ARGS", arguments.to_string())
        .output()
        .expect("node runs");
    assert!(output.status.success(), "the node client failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("one JSON report")
}

fn batch() -> Value {
    json!({"questions": [
        {"header": "Plan", "question": "Which plan?", "options": [{"label": "Small"}, {"label": "Large", "description": "more room"}]},
        {"header": "Extras", "question": "Which extras?", "multi_select": true,
         "options": [{"label": "Backups"}, {"label": "Support"}, {"label": "Audit"}]}]})
}

fn text(report: &Value) -> &str {
    report["result"]["content"][0]["text"].as_str().expect("a text result")
}

#[test]
fn the_typescript_sdk_answers_the_form() {
    if !node_ready() {
        return;
    }
    let report = run("pick", &["--name", "node-test"], &batch());
    assert_eq!(report["tools"], json!(["ask_user_question"]));
    assert_eq!(text(&report), r#"{"Plan":["Large"],"Extras":["Backups","Support"]}"#);
    assert_eq!(report["result"]["isError"], false);
    let shown = report["shown"].as_array().unwrap();
    assert_eq!(shown.len(), 1);
    assert!(shown[0]["message"].as_str().unwrap().contains("(through node-test)"));
    // The SDK negotiates 2025-11-25, so the form has the titled single-select and the array.
    assert_eq!(shown[0]["requestedSchema"]["properties"]["q01"]["oneOf"][1]["title"], "Large — more room");
    assert_eq!(shown[0]["requestedSchema"]["properties"]["q02"]["maxItems"], 3);
}

#[test]
fn the_typescript_sdk_types_other_answers_and_declines() {
    if !node_ready() {
        return;
    }
    let report = run("other", &[], &batch());
    assert_eq!(
        text(&report),
        r#"{"Plan":["typed for Plan: other answer"],"Extras":["typed for Extras: other answer"]}"#
    );
    let report = run("decline", &[], &batch());
    assert_eq!(text(&report), askuser_core::DECLINED);
    let report = run("none", &["--fallback", "defaults"], &batch());
    assert_eq!(
        text(&report),
        r#"{"answered_by":"unattended","answers":{"Plan":["Small"],"Extras":["Backups"]}}"#
    );
    assert!(report["shown"].as_array().unwrap().is_empty());
}

/// The extended profile through the SDK: a text question is a string field the SDK accepts, the
/// declared default is the field's `default`, and the result is the extended data.
#[test]
fn the_typescript_sdk_answers_an_extended_form() {
    if !node_ready() {
        return;
    }
    let batch = json!({"questions": [
        {"id": "plan", "header": "Plan", "question": "Which plan?", "allow_other": false,
         "options": [{"label": "Small", "default": true}, {"label": "Large"}]},
        {"kind": "text", "header": "Branch", "question": "Which branch?"}]});
    let report = run("pick", &["--profile", "extended"], &batch);
    assert_eq!(
        text(&report),
        r#"{"status":"answered","answered_by":"user","answers":[{"id":"plan","header":"Plan","selected":["Large"],"other_text":null},{"id":"q1","header":"Branch","selected":[],"other_text":"typed for Branch"}]}"#
    );
    let schema = &report["shown"][0]["requestedSchema"];
    assert_eq!(schema["properties"]["q01"]["default"], "Small");
    assert_eq!(schema["properties"]["q02"]["minLength"], 1);
    assert!(schema["properties"].get("q01_other").is_none());
}

/// Guards forms left open, with the TypeScript SDK as the host: when `--timeout` ends the wait,
/// the SDK is sent `notifications/cancelled` for the open `elicitation/create`, and aborts it;
/// the model is told not to guess (`--on-timeout stop`, the command's default).
#[test]
fn the_typescript_sdk_hears_the_form_cancelled_on_timeout() {
    if !node_ready() {
        return;
    }
    let report = run("hang", &["--timeout", "1"], &batch());
    assert_eq!(text(&report), askuser_core::TIMED_OUT_STOP);
    let shown = report["shown"].as_array().unwrap();
    assert_eq!(shown.len(), 1);
    assert_eq!(report["cancelled"], json!([shown[0]["requestId"].clone()]));
}
