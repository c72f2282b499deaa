//! The shared scripted host (`askuser_mcp::testing`), with the in-memory connection at the
//! client's own revision.

pub(crate) use askuser_mcp::testing::{Client, Reply, ScriptedClient as TestClient, Shown, call, text_of};

use askuser_mcp::AskUserServer;

/// Connects `client` to `server` over an in-memory pipe, at the client's revision.
pub(crate) async fn connect(server: AskUserServer, client: TestClient) -> Client {
    let version = client.version().clone();
    askuser_mcp::testing::connect(server, client, version).await
}
