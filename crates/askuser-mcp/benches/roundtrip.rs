//! docs/contract.md §15: an in-process MCP `tools/call` of `ask_user_question` answered through the client's
//! form, next to the bare `AskUser` capability call and next to a plain rmcp tool (no askuser)
//! that makes the same protocol round trips, on the typical 4 × 4 request (askuser-core's
//! `tests/data/typical-4x4.*.json` fixtures). The client answers every form at once, so the
//! figures are the protocol's and askuser's cost, not a person's.
//!
//! | row | what runs |
//! | --- | --- |
//! | bare capability call | `AskUser::call` with an instant answerer (no MCP) |
//! | plain rmcp tool: tools/call + elicitation/create, trivial form | a server without askuser whose tool asks a one-field form and returns the content: the transport of an elicitation call |
//! | plain rmcp tool: tools/call + elicitation/create, askuser's form | the same, sending askuser's 4 × 4 form and message (built once): the transport with the same bytes on the wire |
//! | tools/call, no form (transport) | askuser's server answered by an instant fallback answerer: one JSON-RPC round trip plus the capability call |
//! | tools/call + elicitation/create (2025-11-25) | askuser's server asking through the client's form |
//! | tools/call, `input_required` + retry (2026-07-28) | two `tools/call` round trips, the state sealed and opened |
//! | plain rmcp tool, no form, fixed result | a server without askuser whose tool returns the expected text at once |
//! | plain rmcp tool, no form, bare capability call | the same tool making the bare capability call on its arguments |
//!
//! askuser's own overhead on an elicitation call is (askuser's call − the plain tool's call with
//! the same form); contract §15's "≤ 2× plus the transport" compares it with the bare call. The bare
//! call is timed two ways: alone in a loop, where its code and data stay in the CPU's caches, and
//! inside an rmcp tool (the last two rows, paired), where rmcp's round trip runs about half a
//! megabyte of other code between two calls and the bare call, like askuser's work on an
//! elicitation call, starts cold. The last line of the output compares like with like.
//!
//! A hand-written loop like the other benches (best of several rounds). Run with
//! `cargo bench -p askuser-mcp --bench roundtrip`.
//!
//! To profile one setup deterministically, `ROUNDTRIP_ONLY=<the start of a row's name>` (and
//! `ROUNDTRIP_CALLS`, default 1,000) makes only that setup's calls, in [`drive`] (the bare call's
//! in `drive_bare`), after every setup is connected and has answered once; two runs with
//! different counts give the cost of one call by difference:
//!
//! ```text
//! ROUNDTRIP_ONLY="plain rmcp tool + elicitation, askuser" valgrind --tool=callgrind \
//!     --toggle-collect='roundtrip::drive*' target/release/deps/roundtrip-<hash>
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use askuser_core::{AnswerError, AskContext, AskUserRequest, AskUserResponse};
use askuser_mcp::testing::{FormAsker, ScriptedClient, connect, connect_to};
use askuser_mcp::{AskUserServer, Fallback};
use askuser_tool::{AskUser, ToolCall};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitationSchema, ErrorData,
    ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

const ARGS: &str = include_str!("../../askuser-core/tests/data/typical-4x4.args.json");
const RESPONSE: &str = include_str!("../../askuser-core/tests/data/typical-4x4.response.json");
const EXPECTED: &str = r#"{"Topic 0":["Option 1"],"Topic 1":["Option 0","Option 2"],"Topic 2":["Option 1"],"Topic 3":["Option 0","Option 2"]}"#;
const ROUNDS: usize = 15;
const ITERATIONS: u32 = 1_000;

type Client = rmcp::service::RunningService<rmcp::service::RoleClient, ScriptedClient>;

/// A plain rmcp tool without a form: it makes the bare capability call on its arguments and
/// returns the result's text, or (`None`) returns that text without doing anything. The two side
/// by side give what the bare call costs when it runs inside rmcp's round trip, where its code
/// and data are cold, as askuser's own work on an elicitation call is.
struct Calling(Option<AskUser>);

impl rmcp::ServerHandler for Calling {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = match &self.0 {
            Some(ask_user) => {
                let arguments = Value::Object(request.arguments.unwrap_or_default());
                match ask_user.call(ToolCall::new("call_1", &arguments), AskContext::new()).await {
                    askuser_tool::CallOutcome::Completed(result) => result.into_text(),
                    other => format!("{other:?}"),
                }
            }
            None => EXPECTED.to_owned(),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// Times every client's `tools/call` side by side: every round times each in turn, so a busy
/// moment on the shared machine hits them alike; the best round of each counts.
fn side_by_side<'a>(
    runtime: &tokio::runtime::Runtime,
    clients: &[(&'a str, Client)],
    params: &CallToolRequestParams,
) -> Vec<(&'a str, Duration)> {
    let mut best = vec![Duration::MAX; clients.len()];
    for _ in 0..ROUNDS {
        for ((_, client), best) in clients.iter().zip(&mut best) {
            let start = Instant::now();
            runtime.block_on(async {
                for _ in 0..ITERATIONS {
                    black_box(client.call_tool(black_box(params.clone())).await.ok());
                }
            });
            *best = (*best).min(start.elapsed() / ITERATIONS);
        }
    }
    clients.iter().map(|(name, _)| *name).zip(best).collect()
}

/// What each candidate client costs per call over its baseline client, robustly: `ROUNDS` short
/// batches of every client, all pairs in every round (baseline then candidate), and per pair the
/// median over the rounds of (candidate's batch − baseline's batch). Batches a few milliseconds
/// apart see the same machine, so the pairs are compared under the same conditions, and the median
/// ignores the rounds where a busy moment hit only one batch, which a best-of-rounds difference
/// does not.
fn paired_overheads(
    runtime: &tokio::runtime::Runtime,
    pairs: &[(&Client, &Client)],
    params: &CallToolRequestParams,
) -> Vec<Duration> {
    const ROUNDS: usize = 300;
    const CALLS: u32 = 40;
    let batch = |client: &Client| {
        let start = Instant::now();
        runtime.block_on(async {
            for _ in 0..CALLS {
                black_box(client.call_tool(black_box(params.clone())).await.ok());
            }
        });
        start.elapsed().as_secs_f64() / f64::from(CALLS)
    };
    let mut differences = vec![Vec::with_capacity(ROUNDS); pairs.len()];
    for _ in 0..ROUNDS {
        for ((baseline, candidate), differences) in pairs.iter().zip(&mut differences) {
            differences.push(-batch(baseline) + batch(candidate));
        }
    }
    differences
        .into_iter()
        .map(|mut differences| {
            differences.sort_by(f64::total_cmp);
            Duration::from_secs_f64(differences[ROUNDS / 2].max(0.0))
        })
        .collect()
}

/// How many calls a profiled setup makes (`ROUNDTRIP_CALLS`, default 1,000).
fn profiled_calls() -> u32 {
    std::env::var("ROUNDTRIP_CALLS").ok().and_then(|n| n.parse().ok()).unwrap_or(ITERATIONS)
}

/// `calls` times askuser's own share of an elicitation: the form built, its answer read back.
fn form_alone(request: &AskUserRequest, content: &Value, calls: u32) {
    for _ in 0..calls {
        let schema = askuser_mcp::schema(black_box(request), askuser_mcp::FormStyle::Titled2025);
        black_box(schema);
        let answer = askuser_mcp::read_answer(request, askuser_mcp::FormStyle::Titled2025, Some(content));
        black_box(answer.ok());
    }
}

/// `calls` calls of one setup, for a profiler (`ROUNDTRIP_ONLY`): not inlined, so that
/// callgrind's `--toggle-collect` can count exactly these.
#[inline(never)]
fn drive(runtime: &tokio::runtime::Runtime, client: &Client, params: &CallToolRequestParams, calls: u32) {
    runtime.block_on(async {
        for _ in 0..calls {
            black_box(client.call_tool(black_box(params.clone())).await.ok());
        }
    });
}

/// `calls` bare capability calls: the bare row, and for a profiler
/// (`ROUNDTRIP_ONLY="bare capability call"`).
#[inline(never)]
fn drive_bare(runtime: &tokio::runtime::Runtime, ask_user: &AskUser, calls: u32) {
    runtime.block_on(async {
        for _ in 0..calls {
            let call = ToolCall::new("call_1", black_box(ARGS));
            black_box(ask_user.call(call, AskContext::new()).await);
        }
    });
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

type Setups = Vec<(&'static str, Client)>;

/// Every setup connected, each checked to really answer, or the figures would time an error path:
/// the two plain tools with a form, askuser's three deliveries, the two plain tools without one.
fn connect_all(
    runtime: &tokio::runtime::Runtime,
    instant: &(impl askuser_core::Answerer + Clone + 'static),
    request: &AskUserRequest,
    params: &CallToolRequestParams,
    content: &Value,
) -> Result<Setups, Box<dyn std::error::Error>> {
    let text_of = |client: &Client| -> Result<Option<String>, Box<dyn std::error::Error>> {
        let result = runtime.block_on(client.call_tool(params.clone()))?;
        Ok(result.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()))
    };
    let mut clients = Vec::new();
    let version = ProtocolVersion::V_2025_11_25;
    // The plain tool, with a trivial form and with askuser's own form (built once).
    let trivial: ElicitationSchema =
        serde_json::from_value(json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}))?;
    let same_form = askuser_mcp::schema(request, askuser_mcp::FormStyle::Titled2025);
    for (name, form) in [
        ("plain rmcp tool + elicitation, trivial form", trivial),
        ("plain rmcp tool + elicitation, askuser's form", same_form),
    ] {
        let host = ScriptedClient::new(version.clone(), true, vec![]).always(content.clone());
        // askuser's own message too, so both send the same bytes.
        let plain =
            FormAsker { form, message: askuser_mcp::message("askuser", None), name: "plain".to_owned() };
        let client = runtime.block_on(connect_to(plain, host, version.clone()));
        let answer = text_of(&client)?.as_deref().map(serde_json::from_str::<Value>).and_then(Result::ok);
        if answer.map(|a| a["content"].clone()) != Some(content.clone()) {
            return Err(format!("{name}: unexpected result").into());
        }
        clients.push((name, client));
    }
    let setups = [
        ("tools/call, no form (transport)", ProtocolVersion::V_2025_11_25, false),
        ("tools/call + elicitation/create (2025-11-25)", ProtocolVersion::V_2025_11_25, true),
        ("tools/call, input_required + retry (2026-07-28)", ProtocolVersion::V_2026_07_28, true),
    ];
    for (name, version, elicitation) in setups {
        let server = AskUserServer::builder()
            .fallback(Fallback::answerer(instant.clone(), "a script answers"))
            .build();
        let host = ScriptedClient::new(version.clone(), elicitation, vec![]).always(content.clone());
        clients.push((name, runtime.block_on(connect(server, host, version))));
    }
    // The bare capability call inside an rmcp tool (no form), and the same tool doing nothing.
    for (name, ask_user) in [
        ("plain rmcp tool, no form, fixed result", None),
        (
            "plain rmcp tool, no form, bare capability call",
            Some(AskUser::builder().answerer(instant.clone()).build()?),
        ),
    ] {
        let host = ScriptedClient::new(version.clone(), false, vec![]);
        clients.push((name, runtime.block_on(connect_to(Calling(ask_user), host, version.clone()))));
    }
    for (name, client) in &clients[2..] {
        if text_of(client)?.as_deref() != Some(EXPECTED) {
            return Err(format!("{name}: unexpected result").into());
        }
    }
    Ok(clients)
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
    let only = std::env::var("ROUNDTRIP_ONLY").ok();
    if only.as_deref().is_some_and(|only| "bare capability call".starts_with(only)) {
        drive_bare(&runtime, &ask_user, profiled_calls());
        return Ok(());
    }
    let bare = best_of(|n| drive_bare(&runtime, &ask_user, n));

    // askuser's own share of an elicitation: building the form and reading its answer back.
    let request = AskUserRequest::new(askuser_core::Questions::from_json(ARGS)?);
    let form = best_of(|n| form_alone(&request, &content, n));

    // askuser's pieces of an elicitation call, each alone: what the server does besides rmcp.
    let ask_user_call = best_of(|n| {
        runtime.block_on(async {
            for _ in 0..n {
                let call = ToolCall::new("call_1", black_box(&arguments));
                black_box(ask_user.call(call, AskContext::new().with_tool_call_id("call_1")).await);
            }
        });
    });
    let build = best_of(|n| {
        for _ in 0..n {
            black_box(AskUser::builder().answerer(instant.clone()).build().ok());
            black_box(askuser_mcp::message(black_box("askuser"), None));
        }
    });
    let pieces = form + ask_user_call + build;

    let clients = connect_all(&runtime, &instant, &request, &params, &content)?;
    if let Some(only) = only {
        let (_, client) = clients
            .iter()
            .find(|(name, _)| name.starts_with(only.as_str()))
            .ok_or_else(|| format!("ROUNDTRIP_ONLY={only:?} names no setup"))?;
        drive(&runtime, client, &params, profiled_calls());
        return Ok(());
    }
    let rows = side_by_side(&runtime, &clients, &params);
    let pairs = [(&clients[1].1, &clients[3].1), (&clients[5].1, &clients[6].1)];
    let medians = paired_overheads(&runtime, &pairs, &params);
    let (paired, bare_inside) = (medians[0], medians[1]);
    for (_, client) in clients {
        runtime.block_on(client.cancel())?;
    }

    println!("typical 4x4 request ({} bytes), best of {ROUNDS} rounds x {ITERATIONS}", ARGS.len());
    let alone = [
        ("bare capability call (no MCP)", bare),
        ("form built + answer read (no MCP)", form),
        ("capability call on the parsed arguments (no MCP)", ask_user_call),
        ("capability built per call + form message (no MCP)", build),
        ("askuser's pieces of an elicitation call, summed", pieces),
    ];
    for (name, per_op) in alone.iter().chain(&rows) {
        report(name, *per_op, bare);
    }
    overheads(&rows, bare, paired, bare_inside);
    Ok(())
}

/// askuser's overhead: its elicitation call over each plain tool, against the bare call, then the
/// medians of the paired rounds, against the bare call timed alone (hot) and inside an rmcp tool.
fn overheads(rows: &[(&str, Duration)], bare: Duration, paired: Duration, bare_inside: Duration) {
    let [trivial, same, _, eliciting, _] = [rows[0].1, rows[1].1, rows[2].1, rows[3].1, rows[4].1];
    for (baseline, name) in [(trivial, "trivial form"), (same, "askuser's form")] {
        let overhead = eliciting.saturating_sub(baseline);
        println!(
            "askuser's overhead on an elicitation call over the plain tool with the {name}: {:.2} µs = {:.2}x the bare call (target: <= 2x)",
            overhead.as_secs_f64() * 1e6,
            overhead.as_secs_f64() / bare.as_secs_f64()
        );
    }
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "askuser's overhead over the plain tool with askuser's form, median of 300 paired rounds: {:.2} µs = {:.2}x the bare call (target: <= 2x)",
        us(paired),
        paired.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "the bare capability call inside an rmcp tool, median of 300 paired rounds: {:.2} µs = {:.2}x the bare call timed alone",
        us(bare_inside),
        bare_inside.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "askuser's overhead over the bare call inside an rmcp tool (both cold, paired medians): {:.2}x (target: <= 2x)",
        paired.as_secs_f64() / bare_inside.as_secs_f64()
    );
}
