//! The answer page's figures for docs/performance.md (docs/contract.md §15): its size, and the server's time
//! for it (the whole request in process; the template's render is inside it). The memory and the
//! fleet figures come from real `askuser serve` processes:
//! `cargo bench -p askuser --bench processes`.
//!
//! `cargo bench -p askuser-server --features client --bench server`

use std::sync::Arc;
use std::time::{Duration, Instant};

use askuser_client::ApiToken;
use askuser_core::{AskUserRequest, Questions};
use askuser_server::AnswerServer;
use askuser_store::{MemoryStore, NewQuestion, SharedStore};
use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt as _;
use tower::ServiceExt as _;

const TOKEN: &str = "bench-token-0123456789abcdef";

/// The shared typical request: 4 questions of 4 options, with descriptions.
const ARGS: &str = include_str!("../../askuser-core/tests/data/typical-4x4.args.json");

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

async fn page_render() {
    let store: Arc<dyn SharedStore> = Arc::new(MemoryStore::new());
    let server = AnswerServer::builder(Arc::clone(&store), ApiToken::new(TOKEN).unwrap()).build();
    let app = server.router();
    let request = AskUserRequest::with_id("bench", Questions::from_json(ARGS).unwrap());
    store.put(NewQuestion::new(request, Duration::from_hours(1)).session_id("typical")).await.unwrap();
    let link = server.page_url("bench").replace("http://127.0.0.1:8765", "");
    let get = |uri: &str| Request::get(uri).body(Body::empty()).unwrap();
    let body = async |uri: &str| {
        app.clone().oneshot(get(uri)).await.unwrap().into_body().collect().await.unwrap().to_bytes()
    };
    let (page, css, js) = (body(&link).await, body("/assets/app.css").await, body("/assets/live.js").await);
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

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(page_render());
}
