//! askuser's client side (`ElicitationHandler`) against a server written with the official
//! TypeScript SDK (`tests/node/forms-server.mjs`): its forms come from the SDK's own helper
//! (`toJsonSchemaCompat` of a zod object: `$schema`, `type: ["string","null"]` for a nullable
//! field, no titles), and the SDK checks every accepted answer against the schema it sent.

use askuser_core::Profile;
use askuser_mcp::ElicitationHandler;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::mcp::node::{node_dir, node_ready};

/// A scripted person who answers the question headed `H` with `answers[H]`.
fn person(answers: &[(&str, &str)]) -> impl askuser_core::Answerer + use<> {
    askuser_testkit::person(answers, askuser_testkit::Asked::default())
}

/// Calls the TypeScript server's tool `form` with `handler` answering; the server's report.
async fn ask(form: &str, handler: ElicitationHandler) -> Value {
    let mut command = tokio::process::Command::new("node");
    command.current_dir(node_dir()).arg("forms-server.mjs");
    let transport = TokioChildProcess::new(command).expect("node starts");
    let running = handler.serve(transport).await.expect("the client connects");
    let result = running.call_tool(CallToolRequestParams::new(form.to_owned())).await.unwrap();
    running.cancel().await.unwrap();
    let text = &result.content[0].as_text().expect("a text result").text;
    serde_json::from_str(text).expect("the server's JSON report")
}

#[tokio::test]
async fn a_typescript_sdk_form_is_answered_and_fits_its_schema() {
    if !node_ready() {
        return;
    }
    let typed = [
        ("confirm", "Yes"),
        ("guests", "4"),
        ("size", "large"),
        ("extras", "window+quiet"),
        ("note", "by the window"),
        ("nickname", "-"),
        ("email", "ada@example.org"),
        ("reminder", "No"),
    ];
    let report =
        ask("booking", ElicitationHandler::new(person(&typed)).with_profile(Profile::Extended)).await;
    // The SDK's own helper made the schema: a nullable field is a type array, no titles.
    assert_eq!(report["requestedSchema"]["properties"]["nickname"]["type"], json!(["string", "null"]));
    // The SDK validated the content against it (an error would be in `error`).
    assert_eq!(report.get("error"), None, "{report}");
    assert_eq!(
        report["result"],
        json!({"action": "accept", "content": {
            "confirm": true, "guests": 4, "size": "large", "extras": ["window", "quiet"],
            "note": "by the window", "email": "ada@example.org", "reminder": false}})
    );
}

/// Consent only from a person, against a server nobody here wrote.
#[tokio::test]
async fn a_typescript_sdk_confirmation_is_never_accepted_by_defaults() {
    if !node_ready() {
        return;
    }
    let report = ask("delete_files", ElicitationHandler::new(askuser_core::DefaultsResponder::new())).await;
    assert_eq!(report["result"], json!({"action": "decline"}), "{report}");
    let report = ask("delete_files", ElicitationHandler::new(person(&[("confirm", "Yes")]))).await;
    assert_eq!(report["result"], json!({"action": "accept", "content": {"confirm": true}}), "{report}");
}
