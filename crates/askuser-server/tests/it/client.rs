//! `HttpAnswerer` against a real server on loopback.

use std::sync::Arc;
use std::time::Duration;

use askuser_core::{AskContext, AskUserAnswer, AskUserResponse, InMemorySecretSink, Profile};
use askuser_server::{AnswerServer, ApiToken, HttpAnswerer};
use askuser_store::{MemoryStore, PendingStore, State};
use askuser_tool::{AskUser, CallOutcome, ToolCall};
use tokio::sync::mpsc;

use crate::support::{ARGS, TOKEN};

struct Running {
    url: String,
    store: Arc<dyn PendingStore>,
    stop: tokio::sync::oneshot::Sender<()>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn start() -> Running {
    start_with(Profile::Reference).await
}

async fn start_with(profile: Profile) -> Running {
    let store: Arc<dyn PendingStore> = Arc::new(MemoryStore::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = AnswerServer::builder(Arc::clone(&store), ApiToken::new(TOKEN).unwrap())
        .public_url(url.as_str())
        .sweep_interval(Duration::from_millis(20))
        .profile(profile)
        .build();
    let (stop, on_stop) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        server
            .serve(listener, async move {
                let _ = on_stop.await;
            })
            .await
    });
    Running { url, store, stop, served: task }
}

fn answerer(url: &str, links: mpsc::UnboundedSender<String>) -> HttpAnswerer {
    HttpAnswerer::new(url, ApiToken::new(TOKEN).unwrap()).unwrap().on_link(move |link| {
        let _ = links.send(link.to_owned());
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asks_through_the_server_and_returns_the_answer_given_there() {
    let server = start().await;
    let (links, mut link) = mpsc::unbounded_channel();
    let ask_user = AskUser::builder().answerer(answerer(&server.url, links)).build().unwrap();
    let call = ask_user.call(ToolCall::new("call_1", ARGS), AskContext::new().with_session_id("s9"));
    let person = async {
        let link = link.recv().await.unwrap();
        assert!(link.starts_with(&format!("{}/q/", server.url)), "{link}");
        let id = link.split('/').nth(4).unwrap().to_owned();
        let record = server.store.get(&id).await.unwrap().unwrap();
        assert_eq!(record.session_id(), Some("s9"));
        let answer = AskUserResponse::answered(vec![
            AskUserAnswer::picked("Plan", ["Small"]),
            AskUserAnswer::custom("Extras", "none, thanks"),
        ]);
        server.store.answer(&id, &answer).await.unwrap();
    };
    let (outcome, ()) = tokio::join!(call, person);
    assert_eq!(outcome.model_text(), Some(r#"{"Plan":["Small"],"Extras":["none, thanks"]}"#), "{outcome:?}");
    server.stop.send(()).unwrap();
    server.served.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_question_and_a_timeout() {
    let server = start().await;
    let (links, mut link) = mpsc::unbounded_channel();
    let ask_user = AskUser::builder().answerer(answerer(&server.url, links.clone())).build().unwrap();
    let call = ask_user.call(ToolCall::new("c", ARGS), AskContext::new());
    let person = async {
        let id = link.recv().await.unwrap().split('/').nth(4).unwrap().to_owned();
        server.store.answer(&id, &AskUserResponse::declined()).await.unwrap();
    };
    let (outcome, ()) = tokio::join!(call, person);
    assert_eq!(outcome.model_text(), Some(askuser_core::DECLINED));

    // The capability's timeout, equal to the answerer's, applies: the model is told nobody answered.
    let limit = Duration::from_millis(300);
    let ask_user = AskUser::builder()
        .answerer(answerer(&server.url, links).timeout(limit))
        .timeout(limit)
        .build()
        .unwrap();
    let outcome = ask_user.call(ToolCall::new("c2", ARGS), AskContext::new()).await;
    assert!(
        matches!(&outcome, CallOutcome::Completed(r) if r.text() == askuser_core::TIMED_OUT),
        "{outcome:?}"
    );
    let id = link.recv().await.unwrap().split('/').nth(4).unwrap().to_owned();
    // Left for the server to time out (not cancelled), a moment after the deadline.
    let record =
        tokio::time::timeout(Duration::from_secs(10), server.store.watch(&id)).await.unwrap().unwrap();
    assert_eq!(record.state(), State::TimedOut);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_call_cancels_the_question_and_a_wrong_token_fails_clearly() {
    let server = start().await;
    let (links, mut link) = mpsc::unbounded_channel();
    let ask_user = AskUser::builder().answerer(answerer(&server.url, links)).build().unwrap();
    let call = ask_user.call(ToolCall::new("c3", ARGS), AskContext::new());
    let id = tokio::select! {
        _ = call => unreachable!("nobody answers"),
        link = link.recv() => link.unwrap().split('/').nth(4).unwrap().to_owned(),
    };
    let record =
        tokio::time::timeout(Duration::from_secs(10), server.store.watch(&id)).await.unwrap().unwrap();
    assert_eq!(record.state(), State::Cancelled);

    let wrong = HttpAnswerer::new(&server.url, ApiToken::new("not-the-right-token-123").unwrap()).unwrap();
    let ask_user = AskUser::builder().answerer(wrong).build().unwrap();
    let outcome = ask_user.call(ToolCall::new("c4", ARGS), AskContext::new()).await;
    let CallOutcome::Failed(error) = outcome else { panic!("{outcome:?}") };
    let text = askuser_tool::exit::with_causes(&error);
    assert!(text.contains("401 unauthorized"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_answer_goes_to_the_sink_and_the_model_sees_its_reference() {
    let server = start_with(Profile::Extended).await;
    let args = r#"{"questions":[{"kind":"secret","header":"Token","question":"Deploy token?",
        "secret_name":"DEPLOY_TOKEN","purpose":"To deploy"}]}"#;
    let sink = Arc::new(InMemorySecretSink::new());
    let (links, mut link) = mpsc::unbounded_channel();
    let ask_user = AskUser::builder()
        .answerer(answerer(&server.url, links.clone()).secret_sink(Arc::clone(&sink)))
        .profile(Profile::Extended)
        .build()
        .unwrap();
    let call = ask_user.call(ToolCall::new("s1", args), AskContext::new().with_session_id("conv"));
    let person = async {
        let id = link.recv().await.unwrap().split('/').nth(4).unwrap().to_owned();
        let body = serde_json::json!({"answers":[{"header":"Token","secret_ref":"session:DEPLOY_TOKEN"}],
            "secret_values":{"DEPLOY_TOKEN":"tok-123-secret"}});
        let reply = reqwest::Client::new()
            .post(format!("{}/v1/questions/{id}/answer", server.url))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 200);
    };
    let (outcome, ()) = tokio::join!(call, person);
    let text = outcome.model_text().unwrap().to_owned();
    assert!(text.contains(r#""secret_ref":"session:DEPLOY_TOKEN""#) && !text.contains("tok-123"), "{text}");
    assert_eq!(sink.resolve(Some("conv"), "session:DEPLOY_TOKEN").unwrap().expose(), "tok-123-secret");

    // Without a sink, a secret question is declined without being asked.
    let ask_user =
        AskUser::builder().answerer(answerer(&server.url, links)).profile(Profile::Extended).build().unwrap();
    let outcome = ask_user.call(ToolCall::new("s2", args), AskContext::new()).await;
    assert_eq!(outcome.model_text().map(|t| t.contains("declined")), Some(true), "{outcome:?}");
    assert!(server.store.get("s2").await.unwrap().is_none(), "never asked");
    server.stop.send(()).unwrap();
    server.served.await.unwrap().unwrap();
}

/// A fake answer server on loopback: takes any ask and answers every wait with `answer` and
/// `secret_values`, as a hostile server (or anyone on a plain-HTTP path) could.
async fn fake_server(answer: serde_json::Value, secret_values: serde_json::Value) -> String {
    use axum::routing::{get, post};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let page = format!("{url}/q/x/y");
    let app = axum::Router::new()
        .route(
            "/v1/questions",
            post(move || {
                let page = page.clone();
                async move { (axum::http::StatusCode::CREATED, axum::Json(serde_json::json!({"id": "x", "url": page}))) }
            }),
        )
        .route(
            "/v1/questions/{id}/wait",
            get(move || {
                let reply = serde_json::json!({"done": true, "state": "answered",
                    "record": {"state": "answered", "response": answer.clone()}, "secret_values": secret_values.clone()});
                async move { axum::Json(reply) }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// `ask --server` writes only the secret the request asked for, and only as one line: a server
/// naming another secret (`LD_PRELOAD`) or sending a value with a line break gets nothing written.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_file_takes_only_the_asked_name_as_one_line() {
    let dir = std::env::temp_dir().join(format!("askuser-server-fake-secret-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("secrets.env");
    let args = r#"{"questions":[{"kind":"secret","header":"Token","question":"Deploy token?",
        "secret_name":"DEPLOY_TOKEN","purpose":"To deploy"}]}"#;
    let cases = [
        (
            serde_json::json!({"answers":[{"header":"Token","secret_ref":"session:LD_PRELOAD"}]}),
            serde_json::json!({"LD_PRELOAD": "/tmp/evil.so"}),
            "named \"LD_PRELOAD\", which was not asked for",
        ),
        (
            serde_json::json!({"answers":[{"header":"Token","secret_ref":"session:DEPLOY_TOKEN"}]}),
            serde_json::json!({"DEPLOY_TOKEN": "tok\nLD_PRELOAD=/tmp/evil.so"}),
            "cannot be one NAME=value line",
        ),
    ];
    for (n, (answer, values, why)) in cases.into_iter().enumerate() {
        let url = fake_server(answer, values).await;
        let (links, _link) = mpsc::unbounded_channel();
        let ask_user = AskUser::builder()
            .answerer(answerer(&url, links).secret_sink(askuser_tool::SecretFile::new(&path)))
            .profile(Profile::Extended)
            .build()
            .unwrap();
        let outcome = ask_user.call(ToolCall::new(&format!("f{n}"), args), AskContext::new()).await;
        let CallOutcome::Failed(error) = outcome else { panic!("{outcome:?}") };
        let text = askuser_tool::exit::with_causes(&error);
        assert!(text.contains(why) && !text.contains("evil"), "{text}");
        assert!(!path.exists() || !std::fs::read_to_string(&path).unwrap().contains("LD_PRELOAD"));
    }
    assert!(!path.exists(), "nothing was written");
    std::fs::remove_dir_all(&dir).unwrap();
}
