//! The shared scripted host (`askuser_mcp::testing`), with the in-memory connection at the
//! client's own revision.

pub(crate) use askuser_mcp::testing::{Client, Reply, ScriptedClient as TestClient, Shown, call, text_of};

use askuser_mcp::AskUserServer;
use rmcp::model::ProtocolVersion;
use serde_json::Value;

/// Connects `client` to `server` over an in-memory pipe, at the client's revision.
pub(crate) async fn connect(server: AskUserServer, client: TestClient) -> Client {
    let version = client.version().clone();
    askuser_mcp::testing::connect(server, client, version).await
}

/// Calls `ask_user_question` with `arguments` through a client of `version` that answers with
/// `replies`; returns the result text, whether it is an error, and the forms shown.
pub(crate) async fn ask(
    server: AskUserServer,
    version: &ProtocolVersion,
    elicitation: bool,
    replies: Vec<Reply>,
    arguments: &Value,
) -> (String, bool, Vec<Shown>) {
    let client = TestClient::new(version.clone(), elicitation, replies);
    let running = connect(server, client.clone()).await;
    let result = running.call_tool(call(arguments)).await.unwrap_or_else(|e| panic!("{version}: {e}"));
    let (text, is_error) = text_of(&result);
    running.cancel().await.unwrap();
    (text, is_error, client.shown())
}
