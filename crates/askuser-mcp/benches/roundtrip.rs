//! SPEC §15: an in-process MCP `tools/call` of `ask_user_question` answered through the client's
//! form, next to the bare `AskUser` capability call, on the typical 4 × 4 request (askuser-core's
//! `tests/data/typical-4x4.*.json` fixtures). The client answers every form at once, so the
//! figures are the protocol's and askuser's cost, not a person's.
//!
//! | row | what runs |
//! | --- | --- |
//! | bare capability call | `AskUser::call` with an instant answerer (no MCP) |
//! | tools/call, no form (transport) | rmcp client → server over an in-memory pipe, answered by an instant fallback answerer: one JSON-RPC round trip plus the capability call |
//! | tools/call + elicitation/create (2025-11-25) | the same plus the server's `elicitation/create` round trip, the form built and its answer read back |
//! | tools/call, `input_required` + retry (2026-07-28) | two `tools/call` round trips, the state sealed and opened |
//!
//! A hand-written loop like the other benches (best of several rounds). Run with
//! `cargo bench -p askuser-mcp --bench roundtrip`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use askuser_core::{AnswerError, AskContext, AskUserRequest, AskUserResponse};
use askuser_mcp::{AskUserServer, Fallback};
use askuser_tool::{AskUser, ToolCall};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ElicitRequestParams, ElicitResult, ElicitationAction,
    ErrorData, Implementation, InitializeRequestParams, ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::{Value, json};

const ARGS: &str = include_str!("../../askuser-core/tests/data/typical-4x4.args.json");
const RESPONSE: &str = include_str!("../../askuser-core/tests/data/typical-4x4.response.json");
const EXPECTED: &str = r#"{"Topic 0":["Option 1"],"Topic 1":["Option 0","Option 2"],"Topic 2":["Option 1"],"Topic 3":["Option 0","Option 2"]}"#;
const ROUNDS: usize = 7;
const ITERATIONS: u32 = 2_000;

/// A host whose person answers the typical form at once.
#[derive(Clone)]
struct InstantHost {
    version: ProtocolVersion,
    elicitation: bool,
    content: Value,
}

impl ClientHandler for InstantHost {
    fn get_info(&self) -> InitializeRequestParams {
        let capabilities = if self.elicitation {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        InitializeRequestParams::new(capabilities, Implementation::new("bench", "0"))
            .with_protocol_version(self.version.clone())
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(self.content.clone()))
    }
}

fn best_of(mut run: impl FnMut(u32)) -> Duration {
    run(ITERATIONS / 10);
    (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            run(ITERATIONS);
            start.elapsed() / ITERATIONS
        })
        .min()
        .unwrap_or_default()
}

fn report(name: &str, per_op: Duration, base: Duration) {
    println!(
        "{name:<48} {:>9.2} µs/op {:>7.2}x the bare call",
        per_op.as_secs_f64() * 1e6,
        per_op.as_secs_f64() / base.as_secs_f64()
    );
}

async fn connect(server: AskUserServer, host: InstantHost) -> RunningService<RoleClient, InstantHost> {
    let (server_end, client_end) = tokio::io::duplex(256 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let version = host.version.clone();
    if version.has_initialize() {
        host.serve(client_end).await.expect("initialize")
    } else {
        host.serve_with_lifecycle(
            client_end,
            ClientLifecycleMode::Discover { preferred_versions: vec![version] },
        )
        .await
        .expect("discover")
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let response: AskUserResponse = serde_json::from_str(RESPONSE)?;
    let instant = move |_: AskUserRequest, _: AskContext| {
        let response = response.clone();
        async move { Ok::<_, AnswerError>(response) }
    };
    let arguments: Value = serde_json::from_str(ARGS)?;
    let params = CallToolRequestParams::new("ask_user_question")
        .with_arguments(arguments.as_object().cloned().unwrap_or_default());
    // The typical answer as form content (2025-11-25 shape): single picks as strings, multi as lists.
    let content = json!({"q01": "Option 1", "q02": ["Option 0", "Option 2"], "q03": "Option 1", "q04": ["Option 0", "Option 2"]});
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;

    let ask_user = AskUser::builder().answerer(instant.clone()).build()?;
    let bare = best_of(|n| {
        runtime.block_on(async {
            for _ in 0..n {
                let call = ToolCall::new("call_1", black_box(ARGS));
                black_box(ask_user.call(call, AskContext::new()).await);
            }
        });
    });

    // askuser's own share of an elicitation: building the form and reading its answer back.
    let request = AskUserRequest::new(askuser_core::Questions::from_json(ARGS)?);
    let form = best_of(|n| {
        for _ in 0..n {
            let schema = askuser_mcp::schema(black_box(&request), askuser_mcp::FormStyle::Titled2025);
            black_box(schema);
            let answer =
                askuser_mcp::read_answer(&request, askuser_mcp::FormStyle::Titled2025, Some(&content));
            black_box(answer.ok());
        }
    });

    let mut rows = Vec::new();
    let setups = [
        ("tools/call, no form (transport)", ProtocolVersion::V_2025_11_25, false),
        ("tools/call + elicitation/create (2025-11-25)", ProtocolVersion::V_2025_11_25, true),
        ("tools/call, input_required + retry (2026-07-28)", ProtocolVersion::V_2026_07_28, true),
    ];
    for (name, version, elicitation) in setups {
        let server = AskUserServer::builder()
            .fallback(Fallback::answerer(instant.clone(), "a script answers"))
            .build();
        let host = InstantHost { version, elicitation, content: content.clone() };
        let client = runtime.block_on(connect(server, host));
        // Each setup must really answer, or the figures would time an error path.
        let result = runtime.block_on(client.call_tool(params.clone()))?;
        let text = result.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone());
        if text.as_deref() != Some(EXPECTED) {
            return Err(format!("{name}: unexpected result {result:?}").into());
        }
        let per_op = best_of(|n| {
            runtime.block_on(async {
                for _ in 0..n {
                    black_box(client.call_tool(black_box(params.clone())).await.ok());
                }
            });
        });
        rows.push((name, per_op));
        runtime.block_on(client.cancel())?;
    }

    println!("typical 4x4 request ({} bytes), best of {ROUNDS} rounds x {ITERATIONS}", ARGS.len());
    report("bare capability call (no MCP)", bare, bare);
    report("form built + answer read (no MCP)", form, bare);
    for (name, per_op) in &rows {
        report(name, *per_op, bare);
    }
    let transport = rows[0].1;
    for (name, per_op) in &rows[1..] {
        println!(
            "{name}: {:.2}x the transport-only tools/call ({:.2} µs over it)",
            per_op.as_secs_f64() / transport.as_secs_f64(),
            (per_op.as_secs_f64() - transport.as_secs_f64()) * 1e6
        );
    }
    Ok(())
}
