//! The answer server's figures for docs/performance.md (SPEC §15):
//!
//! - the answer page: size, and server render time (the whole request in process, and the
//!   template alone is inside it);
//! - answer posted to replica B → wait on replica A returns, over loopback HTTP, PostgreSQL
//!   (`ASKUSER_TEST_POSTGRES_URL`; skipped with a message when unset);
//! - memory with 10,000 pending questions and 1,000 concurrent long-polls.
//!
//! `cargo bench -p askuser-server --features client --bench server`

use std::sync::Arc;
use std::time::{Duration, Instant};

use askuser_core::{AskUserRequest, Questions};
use askuser_server::{AnswerServer, ApiToken};
use askuser_store::{MemoryStore, NewQuestion, PendingStore, PostgresStore};
use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt as _;
use tower::ServiceExt as _;

const TOKEN: &str = "bench-token-0123456789abcdef";

/// The shared typical request (4 questions of 4 options, with descriptions) and its answer.
const ARGS: &str = include_str!("../../askuser-core/tests/data/typical-4x4.args.json");
const ANSWER: &str = include_str!("../../askuser-core/tests/data/typical-4x4.response.json");

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a short list"
    )]
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index]
}

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort_unstable();
    println!(
        "{what}: p50 {:.3} ms, p99 {:.3} ms, n = {}",
        percentile(&samples, 0.5).as_secs_f64() * 1e3,
        percentile(&samples, 0.99).as_secs_f64() * 1e3,
        samples.len()
    );
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("VmRSS:").map(|v| v.trim().trim_end_matches(" kB").parse().unwrap_or(0))
            })
        })
        .unwrap_or(0)
}

async fn page_render() {
    let store: Arc<dyn PendingStore> = Arc::new(MemoryStore::new());
    let server = AnswerServer::builder(Arc::clone(&store), ApiToken::new(TOKEN).unwrap()).build();
    let app = server.router();
    let request = AskUserRequest::with_id("bench", Questions::from_json(ARGS).unwrap());
    store.put(NewQuestion::new(request, Duration::from_hours(1)).session_id("typical")).await.unwrap();
    let link = server.page_url("bench").replace("http://127.0.0.1:8765", "");
    let get = |uri: &str| Request::get(uri).body(Body::empty()).unwrap();
    let page = app.clone().oneshot(get(&link)).await.unwrap().into_body().collect().await.unwrap().to_bytes();
    let css = app
        .clone()
        .oneshot(get("/assets/app.css"))
        .await
        .unwrap()
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes();
    let js = app
        .clone()
        .oneshot(get("/assets/live.js"))
        .await
        .unwrap()
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes();
    println!(
        "answer page (typical 4 × 4 request): HTML {} B + CSS {} B + script {} B = {} B",
        page.len(),
        css.len(),
        js.len(),
        page.len() + css.len() + js.len()
    );
    for _ in 0..200 {
        let _ = app.clone().oneshot(get(&link)).await.unwrap().into_body().collect().await.unwrap();
    }
    let mut samples = Vec::with_capacity(5000);
    for _ in 0..5000 {
        let started = Instant::now();
        let body = app.clone().oneshot(get(&link)).await.unwrap().into_body().collect().await.unwrap();
        samples.push(started.elapsed());
        assert!(!body.to_bytes().is_empty());
    }
    report("answer page, whole request in process (store read, HMAC, render, headers)", samples);
}

async fn serve(store: Arc<dyn PendingStore>) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server =
        AnswerServer::builder(store, ApiToken::new(TOKEN).unwrap()).public_url(base.as_str()).build();
    let (stop, on_stop) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        server
            .serve(listener, async move {
                let _ = on_stop.await;
            })
            .await
    });
    (base, stop)
}

async fn two_replicas() {
    let Ok(url) = std::env::var("ASKUSER_TEST_POSTGRES_URL") else {
        println!("SKIPPED two replicas on PostgreSQL: ASKUSER_TEST_POSTGRES_URL is not set");
        return;
    };
    let schema = format!("askuser_server_bench_{}", std::process::id());
    let store_a = PostgresStore::builder(&url).schema(&schema).open().await.unwrap();
    let store_b = PostgresStore::builder(&url).schema(&schema).open().await.unwrap();
    let (a, stop_a) = serve(Arc::new(store_a.clone())).await;
    let (b, stop_b) = serve(Arc::new(store_b.clone())).await;
    let http = reqwest::Client::new();
    let answer: serde_json::Value = serde_json::from_str(ANSWER).unwrap();
    let mut samples = Vec::new();
    for n in 0..320 {
        let id = format!("q{n}");
        let ask = serde_json::json!({"arguments": ARGS, "id": id});
        let reply =
            http.post(format!("{a}/v1/questions")).bearer_auth(TOKEN).json(&ask).send().await.unwrap();
        assert_eq!(reply.status(), 201);
        let wait = http.get(format!("{a}/v1/questions/{id}/wait?timeout_secs=30")).bearer_auth(TOKEN).send();
        let waiting = tokio::spawn(async move {
            let reply: serde_json::Value = wait.await.unwrap().json().await.unwrap();
            (Instant::now(), reply)
        });
        // Let the wait reach replica A and start listening before the answer goes to B.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let posted = Instant::now();
        let reply = http
            .post(format!("{b}/v1/questions/{id}/answer"))
            .bearer_auth(TOKEN)
            .json(&answer)
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 200);
        let (returned, waited) = waiting.await.unwrap();
        assert_eq!(waited["done"], true);
        if n >= 20 {
            samples.push(returned.saturating_duration_since(posted));
        }
    }
    report(
        "answer posted to replica B → wait on replica A returns (HTTP, PostgreSQL, one process, two pools)",
        samples,
    );
    let _ = (stop_a.send(()), stop_b.send(()));
    let statement = format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE");
    sqlx::query(sqlx::AssertSqlSafe(statement)).execute(store_a.pool()).await.unwrap();
}

/// The server's own memory: the 1,000 long-polls come from a child process (this bench again,
/// in client mode), so their connections' buffers are not counted.
async fn memory() {
    let before = rss_kib();
    let store: Arc<dyn PendingStore> = Arc::new(MemoryStore::new());
    let questions = Questions::from_json(ARGS).unwrap();
    for n in 0..10_000 {
        let request = AskUserRequest::with_id(format!("m{n}"), questions.clone());
        store.put(NewQuestion::new(request, Duration::from_hours(1))).await.unwrap();
    }
    let (base, stop) = serve(Arc::clone(&store)).await;
    let stored = rss_kib();
    let mut clients = std::process::Command::new(std::env::current_exe().unwrap())
        .env("ASKUSER_BENCH_CLIENTS", &base)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (line_sender, mut lines) = tokio::sync::mpsc::unbounded_channel::<String>();
    let stdout = clients.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
            let _ = line_sender.send(line.unwrap());
        }
    });
    assert_eq!(lines.recv().await.as_deref(), Some("sent"));
    // The child has sent its 1,000 requests; give the server a moment to take them all in.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let during = rss_kib();
    for n in 0..1_000 {
        store.cancel(&format!("m{}", n * 10)).await.unwrap();
    }
    assert_eq!(lines.recv().await.as_deref(), Some("released 1000"));
    assert!(clients.wait().unwrap().success());
    println!(
        "server RSS: {} MiB at start, {} MiB with 10,000 pending questions (memory store), {} MiB with 1,000 concurrent long-polls from another process",
        before / 1024,
        stored / 1024,
        during / 1024
    );
    let _ = stop.send(());
}

/// Client mode: 1,000 concurrent long-polls against the server at `base`.
async fn clients(base: &str) {
    let http = reqwest::Client::new();
    let mut waits = tokio::task::JoinSet::new();
    for n in 0..1_000 {
        let request =
            http.get(format!("{base}/v1/questions/m{}/wait?timeout_secs=30", n * 10)).bearer_auth(TOKEN);
        waits.spawn(async move { request.send().await.unwrap().status() });
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    println!("sent");
    let mut released = 0;
    while let Some(status) = waits.join_next().await {
        assert_eq!(status.unwrap(), 200);
        released += 1;
    }
    println!("released {released}");
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    if let Ok(base) = std::env::var("ASKUSER_BENCH_CLIENTS") {
        runtime.block_on(clients(&base));
        return;
    }
    runtime.block_on(async {
        memory().await;
        page_render().await;
        two_replicas().await;
    });
}
