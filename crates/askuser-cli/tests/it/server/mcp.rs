//! MCP at `/mcp` on `askuser serve`, driven over Streamable HTTP by clients no one here wrote: the
//! official TypeScript SDK (`@modelcontextprotocol/sdk`, installed by `npm ci` in
//! `crates/askuser-cli/tests/node`) and the official Python SDK (pip `mcp`, the venv
//! `crates/askuser-mcp/tests/data/sdk-forms/setup.sh` makes). Without them the tests say so and
//! skip, except under `CI=true`. Also askuser-mcp's example host, the client this project offers
//! hosts (`the_example_host_answers_the_form_over_http`).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::BufReader;

use crate::server::support::{self, ARGS, TempDir, line_after};

fn node_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node")
}

use askuser_testkit::skip;

fn node_ready(what: &str) -> bool {
    if std::process::Command::new("node").arg("--version").output().is_err() {
        skip(what, "Node.js (`node`) is not installed");
        return false;
    }
    if !node_dir().join("node_modules/@modelcontextprotocol/sdk/package.json").is_file() {
        skip(
            what,
            &format!("@modelcontextprotocol/sdk is not installed (run `npm ci` in {})", node_dir().display()),
        );
        return false;
    }
    true
}

/// The python of the venv with the MCP Python SDK (`ASKUSER_MCP_PYTHON`, else its default place).
fn sdk_python(what: &str) -> Option<PathBuf> {
    let python = std::env::var_os("ASKUSER_MCP_PYTHON").map(PathBuf::from).or_else(|| {
        std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/askuser-mcp-py/bin/python"))
    });
    let ready = python.as_ref().is_some_and(|python| {
        std::process::Command::new(python)
            .args(["-c", "import mcp.client.streamable_http"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !ready {
        skip(
            what,
            "the MCP Python SDK is not installed (run crates/askuser-mcp/tests/data/sdk-forms/setup.sh)",
        );
        return None;
    }
    python
}

/// A running `serve` and what a client needs to reach it.
struct Served {
    _process: tokio::process::Child,
    url: String,
    token: String,
    /// What the server has written to stderr so far.
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

async fn serve_on(store: &str, dir: &Path, extra: &[&str]) -> Served {
    let token_file = dir.join("token");
    let mut args = vec!["--token-file", token_file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let mut process = support::serve_on(store, &args);
    let mut stderr = BufReader::new(process.stderr.take().unwrap());
    let url = line_after(&mut stderr, "askuser serve: listening on ").await;
    let mcp = line_after(&mut stderr, "askuser serve: MCP (Streamable HTTP) at ").await;
    assert_eq!(mcp, format!("{url}/mcp, with the API token"));
    // Keep reading, so that a full pipe never blocks the server.
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let kept = std::sync::Arc::clone(&log);
    tokio::spawn(async move {
        let mut line = String::new();
        while tokio::io::AsyncBufReadExt::read_line(&mut stderr, &mut line).await.is_ok_and(|n| n > 0) {
            kept.lock().unwrap().push_str(&line);
            line.clear();
        }
    });
    let token = std::fs::read_to_string(&token_file).unwrap().trim().to_owned();
    Served { _process: process, url, token, log }
}

/// Runs a client script (`program script`) against `served`'s `/mcp`, calling `tool`.
fn client(program: &Path, script: &Path, reply: &str, served: &Served, tool: &str) -> tokio::process::Child {
    tokio::process::Command::new(program)
        .current_dir(node_dir())
        .arg(script)
        .args([reply, &format!("{}/mcp", served.url), tool])
        .env("ASKUSER_TOKEN", &served.token)
        .env("ASKUSER_ARGS", ARGS)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

fn node_client(reply: &str, served: &Served, tool: &str) -> tokio::process::Child {
    client(Path::new("node"), &node_dir().join("http-client.mjs"), reply, served, tool)
}

async fn report_of(child: tokio::process::Child) -> Value {
    let output =
        tokio::time::timeout(Duration::from_mins(1), child.wait_with_output()).await.unwrap().unwrap();
    assert!(output.status.success(), "the client failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("one JSON report")
}

fn text(report: &Value) -> &str {
    report["result"]["content"][0]["text"].as_str().expect("a text result")
}

/// Waits (bounded) for the one pending question on `served` and answers it through its API.
async fn answer_through_api(served: &Served, plan: &str) -> String {
    let http = reqwest::Client::new();
    for _ in 0..600 {
        let list: Value = crate::server::support::get_json(
            &format!("{}/v1/questions?state=pending", served.url),
            &served.token,
        )
        .await;
        if let Some(id) = list["records"][0]["id"].as_str() {
            let answer = json!({"answers": [{"header": "Plan", "selected": [plan]}, {"header": "Extras", "selected": ["Support"]}]});
            let response = http
                .post(format!("{}/v1/questions/{id}/answer", served.url))
                .bearer_auth(&served.token)
                .json(&answer)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
            return id.to_owned();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no question reached the inbox");
}

async fn record(served: &Served, id: &str) -> Value {
    crate::server::support::get_json(&format!("{}/v1/questions/{id}", served.url), &served.token).await
}

async fn only_record(served: &Served) -> Value {
    let list: Value =
        crate::server::support::get_json(&format!("{}/v1/questions", served.url), &served.token).await;
    assert_eq!(list["records"].as_array().unwrap().len(), 1, "{list}");
    list["records"][0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_answers_in_its_form_over_http_and_the_inbox_records_it() {
    let what = "the TypeScript SDK over HTTP";
    if !node_ready(what) {
        return;
    }
    let dir = TempDir::new("mcp-ts-form");
    let served = serve_on(&format!("sqlite:{}", dir.0.join("p.db").display()), &dir.0, &[]).await;
    let report = report_of(node_client("pick", &served, "ask_user_question")).await;
    assert_eq!(report["tools"], json!(["ask_user_question"]), "background tools only with --mcp-background");
    assert_eq!(text(&report), r#"{"Plan":["Large"],"Extras":["Backups"]}"#);
    assert_eq!(report["shown"].as_array().unwrap().len(), 1);
    let record = only_record(&served).await;
    assert_eq!(record["state"], "answered", "{record}");
    assert_eq!(record["asked_by"], "askuser-node-http-test 0.0.0");
}

/// Guards the race's loser: an answer on the server (its page, its API) closes the host's form.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_on_the_server_wins_and_closes_the_typescript_sdks_form() {
    let what = "the TypeScript SDK over HTTP";
    if !node_ready(what) {
        return;
    }
    let dir = TempDir::new("mcp-ts-race");
    let served = serve_on(&format!("sqlite:{}", dir.0.join("p.db").display()), &dir.0, &[]).await;
    let child = node_client("hang", &served, "ask_user_question");
    answer_through_api(&served, "Small").await;
    let report = report_of(child).await;
    assert_eq!(text(&report), r#"{"Plan":["Small"],"Extras":["Support"]}"#);
    let shown = report["shown"].as_array().unwrap();
    assert_eq!(shown.len(), 1);
    assert_eq!(report["cancelled"], json!([shown[0]["requestId"].clone()]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_answers_in_its_form_over_http() {
    let what = "the Python SDK over HTTP";
    let Some(python) = sdk_python(what) else { return };
    let dir = TempDir::new("mcp-py");
    let served =
        serve_on(&format!("sqlite:{}", dir.0.join("p.db").display()), &dir.0, &["--mcp-background"]).await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/python_http_client.py");
    let report = report_of(client(&python, &script, "pick", &served, "ask_user_question")).await;
    assert_eq!(report["tools"], json!(["ask_user_question", "ask_user_question_later", "get_user_answers"]));
    assert_eq!(text(&report), r#"{"Plan":["Large"],"Extras":["Backups"]}"#, "{report}");
    assert_eq!(report["shown"].as_array().unwrap().len(), 1);
    // Without a form, the person answers on the server.
    let child = client(&python, &script, "none", &served, "ask_user_question");
    let id = answer_through_api(&served, "Small").await;
    let report = report_of(child).await;
    assert_eq!(text(&report), r#"{"Plan":["Small"],"Extras":["Support"]}"#);
    assert_eq!(record(&served, &id).await["state"], "answered");
}

/// Two replicas on one PostgreSQL database: a remote agent asks through replica A's `/mcp`, the
/// person answers on replica B, the agent gets the answer from A.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_postgres_ask_through_one_and_answer_through_the_other() {
    let what = "MCP on two replicas";
    let Some(postgres) = support::PostgresSchema::open("mcp", what).await else { return };
    if !node_ready(what) {
        postgres.drop_schema().await;
        return;
    }
    let dir = TempDir::new("mcp-fleet");
    support::write_private(&dir.0.join("token"), "mcp-fleet-token-0123456789abcdef");
    let a = serve_on(&postgres.url, &dir.0, &[]).await;
    let b = serve_on(&postgres.url, &dir.0, &[]).await;
    let child = node_client("none", &a, "ask_user_question");
    let id = answer_through_api(&b, "Large").await;
    let report = report_of(child).await;
    assert_eq!(text(&report), r#"{"Plan":["Large"],"Extras":["Support"]}"#);
    assert_eq!(record(&a, &id).await["state"], "answered");
    drop((a, b));
    postgres.drop_schema().await;
}

/// `/mcp` takes the same token as `/v1`, and refuses what a web page on another origin, or a
/// DNS name rebound to this machine, would send.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_needs_the_token_and_refuses_foreign_hosts_and_origins() {
    let dir = TempDir::new("mcp-guard");
    let served = serve_on(&format!("sqlite:{}", dir.0.join("p.db").display()), &dir.0, &[]).await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}});
    let post = |token: Option<&str>, headers: &[(&str, &str)]| {
        let mut request = reqwest::Client::new()
            .post(format!("{}/mcp", served.url))
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send()
    };
    let token = served.token.as_str();
    let origin = served.url.clone();
    let status = |response: reqwest::Response| response.status().as_u16();
    assert_eq!(status(post(None, &[]).await.unwrap()), 401);
    assert_eq!(status(post(Some("wrong-token-0123456789abcdef"), &[]).await.unwrap()), 401);
    let session = post(Some(token), &[]).await.unwrap();
    assert_eq!(session.status(), 200);
    let session = session.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    assert_eq!(status(post(Some(token), &[("origin", origin.as_str())]).await.unwrap()), 200);
    assert_eq!(status(post(Some(token), &[("origin", "http://evil.example.com")]).await.unwrap()), 403);
    assert_eq!(status(post(Some(token), &[("host", "evil.example.com")]).await.unwrap()), 403);
    // Issue 36.21: ending the session answers 204 (rmcp's 202 is no success to the SDKs).
    let delete = |session: &str| {
        reqwest::Client::new()
            .delete(format!("{}/mcp", served.url))
            .bearer_auth(token)
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
    };
    assert_eq!(status(delete(&session).await.unwrap()), 204);
    // The log has a line per request, never a session id or a token.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let log = served.log.lock().unwrap().clone();
    assert!(log.contains(r#"route="/mcp" status=200"#), "{log}");
    assert!(!log.contains(&session) && !log.contains(token), "{log}");
}

/// One stateless 2026-07-28 `tools/call` of `ask_user_question` (its revision and capabilities in
/// headers and `_meta`), a retry when `retry` carries `requestState` and `inputResponses`; the
/// JSON-RPC response.
async fn call_2026(served: &Served, retry: Option<Value>) -> Value {
    let arguments: Value = serde_json::from_str(ARGS).unwrap();
    let mut params = json!({"name": "ask_user_question", "arguments": arguments,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "remote-agent", "version": "1.0"},
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}});
    if let Some(Value::Object(retry)) = retry {
        params.as_object_mut().unwrap().extend(retry);
    }
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params});
    let response = reqwest::Client::new()
        .post(format!("{}/mcp", served.url))
        .bearer_auth(&served.token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "ask_user_question")
        .json(&call)
        .send()
        .await
        .unwrap();
    let body = response.text().await.unwrap();
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .find_map(|data| serde_json::from_str(data.trim()).ok())
        .unwrap_or_else(|| {
            serde_json::from_str(&body).unwrap_or_else(|_| panic!("a JSON-RPC response: {body}"))
        })
}

/// The form of an `input_required` result answered with each field's first choice, as the retry's
/// parameters.
fn first_choices_retry(first: &Value) -> Value {
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let schema = &first["result"]["inputRequests"]["ask_user_question"]["params"]["requestedSchema"];
    let mut content = serde_json::Map::new();
    for (key, field) in schema["properties"].as_object().unwrap() {
        if let Some(one) = field["oneOf"][0]["const"].as_str() {
            content.insert(key.clone(), json!(one));
        } else if let Some(one) = field["items"]["anyOf"][0]["const"].as_str() {
            content.insert(key.clone(), json!([one]));
        }
    }
    json!({"requestState": first["result"]["requestState"],
           "inputResponses": {"ask_user_question": {"action": "accept", "content": content}}})
}

/// The 2026-07-28 shape: no session, one stateless `POST` per call. The first call returns the
/// form at once and puts the question in the inbox; the retry brings the form's answer, and the
/// store decides: the form's answer when it came first, the page's when that did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_2026_07_28_call_races_its_form_with_the_inbox() {
    let dir = TempDir::new("mcp-2026");
    let served = serve_on(&format!("sqlite:{}", dir.0.join("p.db").display()), &dir.0, &[]).await;

    // The page first, then the form: the page's answer.
    let first = call_2026(&served, None).await;
    let retry = first_choices_retry(&first);
    let id = answer_through_api(&served, "Large").await;
    let done = call_2026(&served, Some(retry)).await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], r#"{"Plan":["Large"],"Extras":["Support"]}"#);
    let asked = record(&served, &id).await;
    assert_eq!(asked["state"], "answered", "{asked}");
    assert_eq!(asked["asked_by"], "remote-agent 1.0", "{asked}");

    // The form alone: its answer, committed to the store, where the page shows it.
    let first = call_2026(&served, None).await;
    let done = call_2026(&served, Some(first_choices_retry(&first))).await;
    assert_eq!(done["result"]["content"][0]["text"], r#"{"Plan":["Small"],"Extras":["Backups"]}"#, "{done}");
    let list: Value = crate::server::support::get_json(
        &format!("{}/v1/questions?state=answered", served.url),
        &served.token,
    )
    .await;
    let picked: Vec<&Value> = list["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["response"]["answers"][0]["selected"])
        .collect();
    assert!(picked.contains(&&json!(["Small"])), "{list}");
}

/// askuser-mcp's example host (`examples/host`: rmcp's client over this project's reqwest), which
/// `cargo test --workspace` builds beside this test's `deps`; `None` after saying why it skips
/// (a failure under `CI=true`).
fn example_host() -> Option<PathBuf> {
    let exe = std::env::current_exe().unwrap();
    let host = exe.parent().and_then(Path::parent).unwrap().join("examples/host");
    if host.is_file() {
        return Some(host);
    }
    let problem = format!(
        "the example host is not built at {} (cargo build -p askuser-mcp --example host)",
        host.display()
    );
    assert!(!std::env::var("CI").is_ok_and(|v| v == "true"), "CI=true but {problem}");
    let _ = writeln!(std::io::stderr(), "SKIPPED: the example host over HTTP, because {problem}");
    None
}

/// The example host, told to send askuser's forms their defaults, answers `/mcp`'s form; the
/// answer is committed in the store like one from the page. Without the token it is refused
/// with the server's reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_host_answers_the_form_over_http() {
    let Some(host) = example_host() else { return };
    let dir = TempDir::new("mcp-host");
    let served = serve_on(&format!("sqlite:{}", dir.0.join("p.db").display()), &dir.0, &[]).await;
    let run = |header: String| {
        let mut command = tokio::process::Command::new(&host);
        command
            .args(["--unattended-from", "askuser-mcp", "--header", &header])
            .args(["--call", &format!("ask_user_question={ARGS}"), &format!("{}/mcp", served.url)])
            .stdin(Stdio::null())
            .kill_on_drop(true);
        async move { tokio::time::timeout(Duration::from_mins(1), command.output()).await.unwrap().unwrap() }
    };
    let output = run(format!("Authorization: Bearer {}", served.token)).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["content"][0]["text"], r#"{"Plan":["Small"],"Extras":["Backups"]}"#, "{result}");
    assert!(stderr.contains("the server's tools: ask_user_question"), "{stderr}");
    let record = only_record(&served).await;
    assert_eq!(record["state"], "answered", "{record}\n{stderr}\n{}", served.log.lock().unwrap());
    // The workspace's one version is the example's too.
    assert_eq!(record["asked_by"], format!("askuser-example-host {}", env!("CARGO_PKG_VERSION")), "{record}");

    let refused = run("Authorization: Bearer not-the-token".to_owned()).await;
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("401") && stderr.contains("a valid API token is required"), "{stderr}");
}

/// Issue 36.12: `/mcp`'s Origin check took any port of the public URL's host (rmcp reads an
/// allowed origin without a port as any port): with `--public-url http://localhost`, a page on
/// `http://localhost:8443` was let in. Only the public URL's own origin is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_takes_only_the_public_urls_own_port_as_its_origin() {
    let dir = TempDir::new("mcp-origin-port");
    let store = format!("sqlite:{}", dir.0.join("p.db").display());
    let bind = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let served = serve_on(&store, &dir.0, &["--bind", &bind, "--public-url", "http://localhost"]).await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}});
    let status = |origin: &'static str| {
        reqwest::Client::new()
            .post(format!("http://{bind}/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("origin", origin)
            .bearer_auth(&served.token)
            .json(&initialize)
            .send()
    };
    assert_eq!(status("http://localhost").await.unwrap().status(), 200);
    assert_eq!(status("http://localhost:80").await.unwrap().status(), 200);
    assert_eq!(status("http://localhost:8443").await.unwrap().status(), 403);
}

/// Issue 36.12: a stateless (2026-07-28) call has no session, but its ticket's scope was taken
/// from any `Mcp-Session-Id` it carried: another session's. The ticket is the server's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_calls_ticket_ignores_the_session_id_it_carries() {
    let dir = TempDir::new("mcp-stateless-scope");
    let served =
        serve_on(&format!("sqlite:{}", dir.0.join("p.db").display()), &dir.0, &["--mcp-background"]).await;
    let arguments: Value = serde_json::from_str(ARGS).unwrap();
    let params = json!({"name": "ask_user_question_later", "arguments": arguments,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "remote-agent", "version": "1.0"},
                  "io.modelcontextprotocol/clientCapabilities": {}}});
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params});
    let response = reqwest::Client::new()
        .post(format!("{}/mcp", served.url))
        .bearer_auth(&served.token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "ask_user_question_later")
        .header("mcp-session-id", "someone-elses-session")
        .json(&call)
        .send()
        .await
        .unwrap();
    let body = response.text().await.unwrap();
    assert!(body.contains("result"), "{body}");
    let record = only_record(&served).await;
    assert_eq!(record["session_id"], "askuser serve mcp", "{record}");
}

/// Reads `response`'s SSE stream until a `data:` line holds `needle`; returns that message.
async fn next_message_with(response: &mut reqwest::Response, seen: &mut String, needle: &str) -> Value {
    loop {
        if let Some(found) = seen
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter(|data| data.contains(needle))
            .find_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        {
            let at = seen.find(needle).unwrap();
            seen.drain(..at + needle.len());
            return found;
        }
        let chunk = tokio::time::timeout(Duration::from_secs(30), response.chunk()).await;
        let chunk = chunk.expect("an SSE message within 30 s").unwrap().expect("the stream goes on");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
}

/// Issue 36.19: an answer past the body limit (256 KiB) got `413`, which no SDK reports: the call
/// hung. The answer is refused inside the protocol, as an error response to the form, and the
/// form is asked again, so the question stays askable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_past_the_body_limit_is_refused_inside_the_protocol_and_asked_again() {
    let dir = TempDir::new("mcp-too-large");
    let served = serve_on(&format!("sqlite:{}", dir.0.join("p.db").display()), &dir.0, &[]).await;
    let http = reqwest::Client::new();
    let post = |session: Option<&str>, body: &Value| {
        let mut request = http
            .post(format!("{}/mcp", served.url))
            .bearer_auth(&served.token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "big-answers", "version": "1"}}});
    let response = post(None, &initialize).await.unwrap();
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = response.text().await;
    let _ = post(Some(&session), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let arguments: Value = serde_json::from_str(ARGS).unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "ask_user_question", "arguments": arguments}});
    let mut stream = post(Some(&session), &call).await.unwrap();
    let mut seen = String::new();
    let form = next_message_with(&mut stream, &mut seen, "elicitation/create").await;
    let huge = json!({"jsonrpc": "2.0", "id": form["id"], "result": {"action": "accept",
        "content": {"q01": "x".repeat(300 * 1024)}}});
    let refused = post(Some(&session), &huge).await.unwrap();
    assert!(refused.status().is_success(), "{}", refused.status());
    let again = next_message_with(&mut stream, &mut seen, "elicitation/create").await;
    let message = again["params"]["message"].as_str().unwrap();
    assert!(message.contains("larger than 262144 bytes"), "{message}");
    // A request past the limit gets a JSON-RPC error of its id, which a client reports.
    let big_call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "ask_user_question", "arguments": {"padding": "y".repeat(300 * 1024)}}});
    let reply: Value = post(Some(&session), &big_call).await.unwrap().json().await.unwrap();
    assert_eq!(reply["id"], 9, "{reply}");
    assert!(
        reply["error"]["message"].as_str().unwrap().contains("the request is larger than 262144 bytes"),
        "{reply}"
    );
}

/// One stateless 2026-07-28 request `method` with `params` from a client that declares form
/// elicitation and, with `tasks`, the tasks extension (SEP-2663); the JSON-RPC response.
async fn rpc_2026(served: &Served, method: &str, mut params: Value, tasks: bool) -> Value {
    let mut capabilities = json!({"elicitation": {"form": {}}});
    if tasks {
        capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    }
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "task-agent", "version": "1.0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities});
    let mut request = reqwest::Client::new()
        .post(format!("{}/mcp", served.url))
        .bearer_auth(&served.token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    // `Mcp-Name` mirrors the tool's name, or a task request's `taskId` (SEP-2663).
    if let Some(name) = params["name"].as_str().or_else(|| params["taskId"].as_str()) {
        request = request.header("mcp-name", name);
    }
    let body = request
        .json(&json!({"jsonrpc": "2.0", "id": 11, "method": method, "params": params}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .find_map(|data| serde_json::from_str(data.trim()).ok())
        .unwrap_or_else(|| {
            serde_json::from_str(&body).unwrap_or_else(|_| panic!("a JSON-RPC response: {body}"))
        })
}

/// `tools/call` of `ask_user_question` as a task: its id.
async fn ask_as_task(served: &Served) -> String {
    let arguments: Value = serde_json::from_str(ARGS).unwrap();
    let created =
        rpc_2026(served, "tools/call", json!({"name": "ask_user_question", "arguments": arguments}), true)
            .await;
    assert_eq!(
        (&created["result"]["resultType"], &created["result"]["status"]),
        (&json!("task"), &json!("working")),
        "{created}"
    );
    assert!(created["result"]["pollIntervalMs"].as_u64().is_some(), "{created}");
    created["result"]["taskId"].as_str().unwrap().to_owned()
}

async fn task(served: &Served, id: &str) -> Value {
    let got = rpc_2026(served, "tasks/get", json!({"taskId": id}), true).await;
    assert!(got.get("error").is_none(), "{got}");
    got["result"].clone()
}

/// MCP Tasks (SEP-2663) on the store, driven by a client over HTTP: the call returns a task; the
/// task asks for the form; the form's answer commits through the store; a page answer that came
/// first wins; a cancelled task withdraws its question; and a task outlives the server process
/// (a new `askuser serve` on the same store serves it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_live_in_the_store_and_outlive_the_server() {
    let dir = TempDir::new("mcp-tasks");
    let store = format!("sqlite:{}", dir.0.join("p.db").display());
    let served = serve_on(&store, &dir.0, &[]).await;

    // The form, through tasks/get and tasks/update.
    let id = ask_as_task(&served).await;
    let waiting = task(&served, &id).await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    let first = json!({"result": {"resultType": "input_required", "inputRequests": waiting["inputRequests"], "requestState": null}});
    let retry = first_choices_retry(&first);
    let update = rpc_2026(
        &served,
        "tasks/update",
        json!({"taskId": id, "inputResponses": retry["inputResponses"]}),
        true,
    )
    .await;
    assert!(update.get("error").is_none(), "{update}");
    let done = task(&served, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], r#"{"Plan":["Small"],"Extras":["Backups"]}"#, "{done}");
    assert_eq!(record(&served, &id).await["state"], "answered");

    // The page first: its answer is the task's, and the form's comes too late to change it.
    let id = ask_as_task(&served).await;
    let waiting = task(&served, &id).await;
    assert_eq!(answer_through_api(&served, "Large").await, id);
    let first = json!({"result": {"resultType": "input_required", "inputRequests": waiting["inputRequests"], "requestState": null}});
    let retry = first_choices_retry(&first);
    rpc_2026(&served, "tasks/update", json!({"taskId": id, "inputResponses": retry["inputResponses"]}), true)
        .await;
    let done = task(&served, &id).await;
    assert_eq!(done["result"]["content"][0]["text"], r#"{"Plan":["Large"],"Extras":["Support"]}"#, "{done}");

    // tasks/cancel withdraws the question everywhere.
    let id = ask_as_task(&served).await;
    let cancelled = rpc_2026(&served, "tasks/cancel", json!({"taskId": id}), true).await;
    assert!(cancelled.get("error").is_none(), "{cancelled}");
    assert_eq!(task(&served, &id).await["status"], "cancelled");
    assert_eq!(record(&served, &id).await["state"], "cancelled");

    // A task outlives the process that created it: another askuser serve on the store serves it.
    let id = ask_as_task(&served).await;
    drop(served);
    let served = serve_on(&store, &dir.0, &[]).await;
    assert_eq!(task(&served, &id).await["status"], "input_required");
    assert_eq!(answer_through_api(&served, "Large").await, id);
    assert_eq!(task(&served, &id).await["status"], "completed");

    // Unknown ids, and a client without the extension: no task.
    let unknown = rpc_2026(&served, "tasks/get", json!({"taskId": "task-nope"}), true).await;
    assert!(unknown["error"]["message"].as_str().unwrap().contains("no task"), "{unknown}");
    let arguments: Value = serde_json::from_str(ARGS).unwrap();
    let plain =
        rpc_2026(&served, "tools/call", json!({"name": "ask_user_question", "arguments": arguments}), false)
            .await;
    assert_eq!(plain["result"]["resultType"], "input_required", "{plain}");
}

/// Issue 39: a late answer reaches the model over MCP. A call in a 2025-11-25 session (no form)
/// times out; the person answers afterwards on the page; the session's next tool result carries
/// the late answer, once, after what the tool itself returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_answer_rides_on_the_sessions_next_tool_result() {
    let dir = TempDir::new("mcp-late");
    let served =
        serve_on(&format!("sqlite:{}", dir.0.join("p.db").display()), &dir.0, &["--default-timeout", "1"])
            .await;
    let http = reqwest::Client::new();
    let post = |session: Option<&str>, body: &Value| {
        let mut request = http
            .post(format!("{}/mcp", served.url))
            .bearer_auth(&served.token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "late-agent", "version": "1"}}});
    let response = post(None, &initialize).await.unwrap();
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = response.text().await;
    let _ = post(Some(&session), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let call = |id: u64, arguments: Value| {
        let request = post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "ask_user_question", "arguments": arguments}}),
        );
        async move {
            let body = request.await.unwrap().text().await.unwrap();
            body.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .find(|message| message["id"] == id)
                .unwrap_or_else(|| panic!("no response {id} in {body}"))
        }
    };
    let timed_out = call(2, serde_json::from_str(ARGS).unwrap()).await;
    assert_eq!(timed_out["result"]["content"][0]["text"], askuser_core::TIMED_OUT_STOP, "{timed_out}");
    let id = only_record(&served).await["id"].as_str().unwrap().to_owned();
    assert_eq!(record(&served, &id).await["state"], "timed_out");
    let answer = json!({"answers": [{"header": "Plan", "selected": ["Large"]}, {"header": "Extras", "selected": ["Support"]}]});
    let answered = http
        .post(format!("{}/v1/questions/{id}/answer", served.url))
        .bearer_auth(&served.token)
        .json(&answer)
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status(), 200, "{}", answered.text().await.unwrap());
    assert_eq!(record(&served, &id).await["state"], "late");

    // The next result (here a refused call) carries it, after the tool's own block.
    let next = call(3, json!({"questions": []})).await;
    let blocks = next["result"]["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 2, "{next}");
    let note = blocks[1]["text"].as_str().unwrap();
    assert!(note.starts_with("Meanwhile the person answered your earlier questions"), "{note}");
    assert!(note.contains(r#"{"Plan":["Large"],"Extras":["Support"]}"#), "{note}");
    // Once.
    let again = call(4, json!({"questions": []})).await;
    assert_eq!(again["result"]["content"].as_array().unwrap().len(), 1, "{again}");
}
