//! Load, bounded: 10,000 pending questions and 1,000 concurrent long-polls over loopback TCP,
//! every one released with its own answer. Correctness under load, not a speed target (the
//! figures are in docs/performance.md, from the bench).

use std::sync::Arc;
use std::time::Duration;

use askuser_client::ApiToken;
use askuser_core::{AskUserAnswer, AskUserRequest, AskUserResponse, Questions};
use askuser_server::AnswerServer;
use askuser_store::{MemoryStore, NewQuestion, SharedStore};

use crate::support::{ARGS, TOKEN};

const PENDING: usize = 10_000;
const WAITERS: usize = 1_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_long_polls_over_ten_thousand_pending_questions() {
    let store: Arc<dyn SharedStore> = Arc::new(MemoryStore::new());
    let questions = Questions::from_json(ARGS).unwrap();
    for n in 0..PENDING {
        let request = AskUserRequest::with_id(format!("q{n}"), questions.clone());
        store
            .put(NewQuestion::new(request, Duration::from_hours(1)).session_id(format!("s{}", n % 50)))
            .await
            .unwrap();
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = AnswerServer::builder(Arc::clone(&store), ApiToken::new(TOKEN).unwrap()).build();
    let (stop, on_stop) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(async move {
        server
            .serve(listener, async move {
                let _ = on_stop.await;
            })
            .await
    });

    let http = reqwest::Client::builder().pool_max_idle_per_host(WAITERS).build().unwrap();
    let mut waits = tokio::task::JoinSet::new();
    for n in 0..WAITERS {
        let http = http.clone();
        let url = format!("{base}/v1/questions/q{}/wait?timeout_secs=60", n * (PENDING / WAITERS));
        waits.spawn(async move {
            let reply: serde_json::Value =
                http.get(url).bearer_auth(TOKEN).send().await.unwrap().json().await.unwrap();
            (n, reply)
        });
    }
    // Let the polls get in flight (the server exposes no count of waiters to await); the result
    // is checked the same whether a poll started before its answer or after.
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Answer each waited-on question with an answer of its own (which plan depends on n).
    for n in 0..WAITERS {
        let plan = if n % 2 == 0 { "Small" } else { "Large" };
        let answer = AskUserResponse::answered(vec![
            AskUserAnswer::picked("Plan", [plan]),
            AskUserAnswer::custom("Extras", format!("waiter {n}")),
        ]);
        let reply = http
            .post(format!("{base}/v1/questions/q{}/answer", n * (PENDING / WAITERS)))
            .bearer_auth(TOKEN)
            .json(&answer)
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 200);
    }
    let mut released = 0;
    let all = async {
        while let Some(joined) = waits.join_next().await {
            let (n, reply) = joined.unwrap();
            let plan = if n % 2 == 0 { "Small" } else { "Large" };
            assert_eq!(
                reply["result"],
                format!(r#"{{"Plan":["{plan}"],"Extras":["waiter {n}"]}}"#),
                "{reply}"
            );
            released += 1;
        }
    };
    tokio::time::timeout(Duration::from_mins(2), all).await.expect("every long-poll is released");
    assert_eq!(released, WAITERS);
    let pending = store
        .list(&askuser_store::ListQuery::new().state(askuser_store::State::Pending).limit(1))
        .await
        .unwrap();
    assert!(pending.next.is_some(), "the other 9,000 questions are still pending");
    stop.send(()).unwrap();
    serving.await.unwrap().unwrap();
}
