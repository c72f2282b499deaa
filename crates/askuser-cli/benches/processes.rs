//! The answer server as real `askuser serve` processes, for docs/performance.md (docs/contract.md §15):
//!
//! - memory: one server process (memory store), 10,000 pending questions asked over its API, then
//!   1,000 concurrent long-polls from this process; the server's own RSS (`/proc/PID/status`);
//! - fleet: two server processes on one PostgreSQL database (`ASKUSER_TEST_POSTGRES_URL`; skipped
//!   with a message when unset): an answer posted to B → the wait on A returns.
//!
//! The questions are the shared typical 4 × 4 request and its answer.
//!
//! `ASKUSER_TEST_POSTGRES_URL=postgres://… cargo bench -p askuser --bench processes`

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use askuser_store::PostgresStore;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

const BIN: &str = env!("CARGO_BIN_EXE_askuser");
const TOKEN: &str = "bench-token-0123456789abcdef";
const ARGS: &str = include_str!("../../askuser-core/tests/data/typical-4x4.args.json");
const ANSWER: &str = include_str!("../../askuser-core/tests/data/typical-4x4.response.json");

struct Server {
    process: Child,
    url: String,
}

impl Server {
    async fn start(store: &str, dir: &Path) -> Self {
        let mut process = Command::new(BIN)
            .args(["serve", "--bind", "127.0.0.1:0", "--store", store, "--token-file"])
            .arg(dir.join("token"))
            .env_remove("ASKUSER_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("run askuser serve");
        let mut stderr = BufReader::new(process.stderr.take().unwrap()).lines();
        let url = loop {
            let line = stderr.next_line().await.unwrap().expect("serve said where it listens");
            if let Some(url) = line.strip_prefix("askuser serve: listening on ") {
                break url.to_owned();
            }
        };
        // Keep reading its log (one line per request), so that it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
        Self { process, url }
    }

    fn rss_mib(&self) -> f64 {
        let pid = self.process.id().unwrap();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
            .unwrap_or(0.0);
        kib / 1024.0
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("askuser-bench-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("token"), format!("{TOKEN}\n")).unwrap();
    // Private, as serve requires of a token file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(dir.join("token"), std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    dir
}

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

async fn ask(http: &reqwest::Client, base: &str, id: &str) {
    let body = json!({"arguments": ARGS, "id": id, "timeout_secs": 3600});
    let reply =
        http.post(format!("{base}/v1/questions")).bearer_auth(TOKEN).json(&body).send().await.unwrap();
    assert_eq!(reply.status(), 201, "{}", reply.text().await.unwrap_or_default());
}

async fn memory() {
    let dir = temp_dir("memory");
    let server = Server::start("memory:", &dir).await;
    let started = server.rss_mib();
    let http = reqwest::Client::builder().pool_max_idle_per_host(16).build().unwrap();
    let mut asks = tokio::task::JoinSet::new();
    for worker in 0..8 {
        let (http, base) = (http.clone(), server.url.clone());
        asks.spawn(async move {
            for n in (worker..10_000).step_by(8) {
                ask(&http, &base, &format!("m{n}")).await;
            }
        });
    }
    while let Some(done) = asks.join_next().await {
        done.unwrap();
    }
    let pending = server.rss_mib();
    // 1,000 long-polls, each on its own connection (a client per wait: no sharing).
    let mut waits = tokio::task::JoinSet::new();
    for n in 0..1_000 {
        let url = format!("{}/v1/questions/m{}/wait?timeout_secs=60", server.url, n * 10);
        waits.spawn(async move {
            let client = reqwest::Client::new();
            let reply: Value = client.get(url).bearer_auth(TOKEN).send().await.unwrap().json().await.unwrap();
            reply["done"].as_bool() == Some(true)
        });
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let polling = server.rss_mib();
    let answer: Value = serde_json::from_str(ANSWER).unwrap();
    for n in 0..1_000 {
        let reply = http
            .post(format!("{}/v1/questions/m{}/answer", server.url, n * 10))
            .bearer_auth(TOKEN)
            .json(&answer)
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 200);
    }
    let mut released = 0;
    while let Some(done) = waits.join_next().await {
        assert!(done.unwrap(), "a wait ended without its answer");
        released += 1;
    }
    assert_eq!(released, 1_000);
    println!(
        "server process RSS: {started:.1} MiB at start, {pending:.1} MiB with 10,000 pending questions, \
         {polling:.1} MiB with 1,000 concurrent long-polls (all released with their answer)"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

async fn fleet() {
    let Ok(url) = std::env::var("ASKUSER_TEST_POSTGRES_URL") else {
        println!("SKIPPED two server processes on PostgreSQL: ASKUSER_TEST_POSTGRES_URL is not set");
        return;
    };
    // A schema of its own, made (and migrated) here; both processes use it through the URL.
    let schema = format!("askuser_bench_fleet_{}", std::process::id());
    let setup = PostgresStore::builder(&url).schema(&schema).open().await.unwrap();
    let separator = if url.contains('?') { '&' } else { '?' };
    let store_url = format!("{url}{separator}options=-c%20search_path%3D{schema}");
    let dir = temp_dir("fleet");
    let a = Server::start(&store_url, &dir).await;
    let b = Server::start(&store_url, &dir).await;
    let http = reqwest::Client::new();
    let answer: Value = serde_json::from_str(ANSWER).unwrap();
    let mut samples = Vec::new();
    for n in 0..320 {
        let id = format!("f{n}");
        ask(&http, &a.url, &id).await;
        let wait =
            http.get(format!("{}/v1/questions/{id}/wait?timeout_secs=30", a.url)).bearer_auth(TOKEN).send();
        let waiting = tokio::spawn(async move {
            let reply: Value = wait.await.unwrap().json().await.unwrap();
            (Instant::now(), reply)
        });
        // Let the wait reach A and start listening before the answer goes to B.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let posted = Instant::now();
        let reply = http
            .post(format!("{}/v1/questions/{id}/answer", b.url))
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
    samples.sort_unstable();
    println!(
        "answer posted to server B → wait on server A returns (two processes, HTTP, PostgreSQL): \
         p50 {:.3} ms, p99 {:.3} ms, n = {}",
        percentile(&samples, 0.5).as_secs_f64() * 1e3,
        percentile(&samples, 0.99).as_secs_f64() * 1e3,
        samples.len()
    );
    drop((a, b));
    let statement = format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE");
    sqlx::query(sqlx::AssertSqlSafe(statement)).execute(setup.pool()).await.unwrap();
    setup.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        memory().await;
        fleet().await;
    });
}
