//! The client handler against forms other SDKs' own helpers generate, not hand-written JSON:
//! `tests/data/sdk-forms/python-mcp.json` holds the `elicitation/create` params that the MCP
//! Python SDK's `FastMCP` (`ctx.elicit(message, schema=Model)`) sends, captured by
//! `tests/data/sdk-forms/generate.sh`. They are sent verbatim by a plain rmcp server, shapes
//! rmcp's own types refuse (`Optional[...]` as `anyOf` with `null`) included. The same tools
//! also run live (`python_forms.py --serve`, in the venv `setup.sh` makes), where the SDK
//! validates every accepted answer against its pydantic model. (The TypeScript SDK's forms are
//! run live too: askuser's `mcp::sdk_forms` test.)

use std::path::{Path, PathBuf};
use std::sync::Arc;

use askuser_core::Profile;
use askuser_mcp::ElicitationHandler;
use askuser_mcp::testing::{RawFormAsker, connect_to, text_of};
use askuser_testkit::{Asked, person};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const PYTHON: &str = include_str!("../data/sdk-forms/python-mcp.json");

fn python_forms() -> RawFormAsker {
    let fixture: Value = serde_json::from_str(PYTHON).unwrap();
    assert!(fixture["sdk"].as_str().unwrap().starts_with("mcp 1."), "{}", fixture["sdk"]);
    let forms = fixture["forms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap().to_owned(), f["params"].clone()))
        .collect();
    RawFormAsker { forms, name: "python-forms".to_owned() }
}

async fn answer(form: &str, handler: ElicitationHandler) -> Value {
    let running = connect_to(python_forms(), handler, ProtocolVersion::V_2025_11_25).await;
    let result = running.call_tool(CallToolRequestParams::new(form.to_owned())).await;
    running.cancel().await.unwrap();
    let (text, is_error) = text_of(&result.unwrap_or_else(|e| panic!("{form}: {e}")));
    assert!(!is_error, "{form}: {text}");
    serde_json::from_str(&text).unwrap()
}

/// Guards `Optional[...]` fields (`anyOf` with `null`): the form is asked, not refused as
/// "method not found"; an optional field left empty is left out of the answer.
#[tokio::test]
async fn a_python_sdk_form_with_optional_fields_is_asked() {
    let asked = Asked::default();
    let typed = [
        ("Confirm", "Yes"),
        ("Guests", "4"),
        ("Note", "by the window"),
        ("Alternative Date", "-"),
        ("High Chair", "No"),
        ("Budget", "120.5"),
        ("Seats", "-"),
    ];
    let handler = ElicitationHandler::new(person(&typed, Arc::clone(&asked))).with_profile(Profile::Extended);
    assert_eq!(
        answer("booking", handler).await,
        json!({"action": "accept", "content": {
            "confirm": true, "guests": 4, "note": "by the window", "high_chair": false, "budget": 120.5}})
    );
    let asked = asked.lock().unwrap();
    // Every field asked (in the form's order where rmcp kept it, else the keys' order).
    let question = |header: &str| {
        asked[0].questions().iter().find(|q| q.header() == header).unwrap_or_else(|| panic!("{header}"))
    };
    assert_eq!(asked[0].questions().len(), 7);
    // The optional yes/no can be left empty; the optional number says so.
    assert_eq!(question("High Chair").options().len(), 3);
    let budget = question("Budget").question();
    assert!(budget.contains("Answer with a number, at least 0.") && budget.contains("Optional"), "{budget}");
}

/// The reference profile asks the yes/no fields and leaves the optional text ones empty; a
/// required number needs the extended profile, said plainly (not "method not found").
#[tokio::test]
async fn python_sdk_forms_in_the_reference_profile() {
    let asked = Asked::default();
    let handler = ElicitationHandler::new(person(&[("Confirm", "Yes")], Arc::clone(&asked)));
    assert_eq!(
        answer("delete_files", handler).await,
        json!({"action": "accept", "content": {"confirm": true}})
    );
    let handler = ElicitationHandler::new(person(&[], Asked::default()));
    let running = connect_to(python_forms(), handler, ProtocolVersion::V_2025_11_25).await;
    let error = running.call_tool(CallToolRequestParams::new("booking")).await.unwrap_err().to_string();
    running.cancel().await.unwrap();
    assert!(error.contains("field \"guests\" asks for free text or a number"), "{error}");
    assert!(!error.to_lowercase().contains("method not found"), "{error}");
}

/// A list of free text (`Optional[list[str]]`) cannot be asked and is left out; defaults are taken.
#[tokio::test]
async fn a_python_sdk_form_with_defaults_and_a_free_list() {
    let asked = Asked::default();
    let typed = [("Rating", "5"), ("Comment", "-"), ("Subscribe", "No")];
    let handler = ElicitationHandler::new(person(&typed, Arc::clone(&asked))).with_profile(Profile::Extended);
    assert_eq!(
        answer("feedback", handler).await,
        json!({"action": "accept", "content": {"rating": 5, "comment": "none", "subscribe": false}})
    );
    let mut headers: Vec<String> =
        asked.lock().unwrap()[0].questions().iter().map(|q| q.header().to_owned()).collect();
    headers.sort();
    assert_eq!(headers, ["Comment", "Rating", "Subscribe"]);
}

/// The python of the venv `tests/data/sdk-forms/setup.sh` made (`ASKUSER_MCP_PYTHON`, else its
/// default place), when it has the SDK; under `CI=true` its absence fails the test.
fn sdk_python() -> Option<PathBuf> {
    let python = std::env::var_os("ASKUSER_MCP_PYTHON").map(PathBuf::from).or_else(|| {
        std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/askuser-mcp-py/bin/python"))
    });
    let ready = python.as_ref().is_some_and(|python| {
        std::process::Command::new(python)
            .args(["-c", "import mcp.server.fastmcp"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if ready {
        return python;
    }
    let problem = "the MCP Python SDK is not installed (run crates/askuser-mcp/tests/data/sdk-forms/setup.sh and set ASKUSER_MCP_PYTHON to the python it prints)";
    askuser_testkit::skip("the live Python SDK test", problem);
    None
}

/// Calls tool `form` of the live Python SDK server with `handler` answering; its report.
async fn ask_python(python: &Path, form: &str, handler: ElicitationHandler) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sdk-forms/python_forms.py");
    let mut command = tokio::process::Command::new(python);
    command.arg(script).arg("--serve");
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the Python server starts");
    let running = handler.serve(transport).await.expect("the client connects");
    let result = running.call_tool(CallToolRequestParams::new(form.to_owned())).await.unwrap();
    running.cancel().await.unwrap();
    let (text, is_error) = text_of(&result);
    assert!(!is_error, "{form}: the SDK refused the answer: {text}");
    serde_json::from_str(&text).unwrap()
}

/// The Python SDK's own server takes the answers: pydantic validates them against the model.
#[tokio::test]
async fn the_python_sdk_validates_the_answers() {
    let Some(python) = sdk_python() else { return };
    let typed = [
        ("Confirm", "Yes"),
        ("Guests", "4"),
        ("Note", "by the window"),
        ("Alternative Date", "-"),
        ("High Chair", "No"),
        ("Budget", "120.5"),
        ("Seats", "-"),
    ];
    let handler = ElicitationHandler::new(person(&typed, Asked::default())).with_profile(Profile::Extended);
    assert_eq!(
        ask_python(&python, "booking", handler).await,
        json!({"action": "accept", "data": {"confirm": true, "guests": 4, "note": "by the window",
            "alternative_date": null, "high_chair": false, "budget": 120.5, "seats": null}})
    );
    let typed = [("Rating", "5"), ("Comment", "-"), ("Subscribe", "No")];
    let handler = ElicitationHandler::new(person(&typed, Asked::default())).with_profile(Profile::Extended);
    assert_eq!(
        ask_python(&python, "feedback", handler).await,
        json!({"action": "accept", "data": {"rating": 5, "comment": "none", "subscribe": false, "tags": null}})
    );
    // Consent only from a person.
    let handler = ElicitationHandler::new(askuser_core::DefaultsResponder::new());
    assert_eq!(
        ask_python(&python, "delete_files", handler).await,
        json!({"action": "decline", "data": null})
    );
}
