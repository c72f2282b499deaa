//! `HttpAnswerer` against a real server on loopback.

use std::sync::Arc;
use std::time::Duration;

use askuser_client::{ApiToken, HttpAnswerer};
use askuser_core::{AskContext, AskUserAnswer, AskUserResponse, InMemorySecretSink, Outcome, Profile};
use askuser_server::AnswerServer;
use askuser_store::{MemoryStore, PendingStore, SharedStore, State};
use askuser_tool::{AskUser, CallOutcome, ToolCall};
use tokio::sync::mpsc;

use crate::outage::{Flaky, Mode};
use crate::support::{ARGS, TOKEN};

struct Running {
    url: String,
    store: Arc<dyn SharedStore>,
    stop: tokio::sync::oneshot::Sender<()>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn start() -> Running {
    start_with(Profile::Reference).await
}

async fn start_with(profile: Profile) -> Running {
    start_over(Arc::new(MemoryStore::new()), profile).await
}

async fn start_over(store: Arc<dyn SharedStore>, profile: Profile) -> Running {
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
        server.store.commit_answer(&id, &answer).await.unwrap();
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
        server.store.commit_answer(&id, &AskUserResponse::declined()).await.unwrap();
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
    assert_eq!(
        outcome.model_text(),
        Some(r#"{"status":"declined","answered_by":"unattended","answers":[]}"#),
        "nobody was asked: {outcome:?}"
    );
    assert!(server.store.get("s2").await.unwrap().is_none(), "never asked");
    server.stop.send(()).unwrap();
    server.served.await.unwrap().unwrap();
}

fn id_of(link: &str) -> String {
    link.split('/').nth(4).unwrap().to_owned()
}

/// Guards against askers giving up in an outage: every ask and every wait is tried again, and
/// every answer given after the store came back reaches its asker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_outage_loses_no_answer() {
    const CALLS: usize = 6;
    let flaky = Flaky::new();
    let server = start_over(Arc::clone(&flaky) as Arc<dyn SharedStore>, Profile::Reference).await;
    let (links, mut link) = mpsc::unbounded_channel();
    let retries = Arc::new(std::sync::Mutex::new(Vec::new()));
    let heard = Arc::clone(&retries);
    let answerer =
        answerer(&server.url, links).on_retry(move |error| heard.lock().unwrap().push(error.to_string()));
    let ask_user = AskUser::builder().answerer(answerer).timeout(Duration::from_mins(1)).build().unwrap();
    // The store is down when the questions are asked.
    flaky.set(Mode::Down);
    let calls: Vec<_> = (0..CALLS)
        .map(|i| {
            let ask_user = ask_user.clone();
            tokio::spawn(async move {
                let call_id = format!("call_{i}");
                ask_user.call(ToolCall::new(&call_id, ARGS), AskContext::new()).await
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(link.try_recv().is_err(), "nothing could be asked yet");
    flaky.set(Mode::Up);
    let mut ids = Vec::new();
    for _ in 0..CALLS {
        let got = tokio::time::timeout(Duration::from_secs(20), link.recv()).await.unwrap().unwrap();
        ids.push(id_of(&got));
    }
    // Down again (a database error that is no outage, then an outage) while they wait.
    flaky.set(Mode::Broken);
    tokio::time::sleep(Duration::from_millis(800)).await;
    flaky.set(Mode::Down);
    tokio::time::sleep(Duration::from_millis(800)).await;
    flaky.set(Mode::Up);
    for (i, id) in ids.iter().enumerate() {
        let label = if i % 2 == 0 { "Small" } else { "Large" };
        let answer = AskUserResponse::answered(vec![
            AskUserAnswer::picked("Plan", [label]),
            AskUserAnswer::custom("Extras", id.as_str()),
        ]);
        server.store.commit_answer(id, &answer).await.unwrap();
    }
    let mut delivered = 0;
    for call in calls {
        let outcome = tokio::time::timeout(Duration::from_secs(30), call).await.unwrap().unwrap();
        let text = outcome.model_text().unwrap_or_else(|| panic!("{outcome:?}")).to_owned();
        let id = ids.iter().find(|id| text.contains(id.as_str())).unwrap_or_else(|| panic!("{text}"));
        let i = ids.iter().position(|x| x == id).unwrap();
        let label = if i % 2 == 0 { "Small" } else { "Large" };
        assert_eq!(text, format!(r#"{{"Plan":["{label}"],"Extras":["{id}"]}}"#));
        delivered += 1;
    }
    assert_eq!(delivered, CALLS);
    // Each asker heard once of its failed asks, and of its failed waits (a streak each).
    let retries = retries.lock().unwrap().clone();
    let count = |what: &str| retries.iter().filter(|e| e.contains(what)).count();
    assert!(count("503 store_unavailable") >= CALLS && count("500 internal") >= CALLS, "{retries:#?}");
    server.stop.send(()).unwrap();
    server.served.await.unwrap().unwrap();
}

/// Guards one deadline from the model's call to the page: an extended call's `timeout_seconds`
/// is the question's expiry on the server, and it ends timed out there, not cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_timeout_is_the_deadline_on_the_page_and_the_outcome() {
    let server = start_with(Profile::Extended).await;
    let (links, mut link) = mpsc::unbounded_channel();
    // The answerer's own timeout (an hour) is longer: the request's deadline wins.
    let ask_user =
        AskUser::builder().answerer(answerer(&server.url, links)).profile(Profile::Extended).build().unwrap();
    let args = r#"{"timeout_seconds":1,"questions":[{"header":"Plan","question":"Which plan?",
        "options":[{"label":"Small"},{"label":"Large"}]}]}"#;
    let outcome = ask_user.call(ToolCall::new("t1", args), AskContext::new()).await;
    assert!(matches!(&outcome, CallOutcome::Completed(r) if r.outcome() == Outcome::TimedOut), "{outcome:?}");
    let id = id_of(&link.recv().await.unwrap());
    let record =
        tokio::time::timeout(Duration::from_secs(10), server.store.watch(&id)).await.unwrap().unwrap();
    assert_eq!(record.state(), State::TimedOut);
    let waited = record.asked_at().until(record.expires_at());
    assert!(waited <= Duration::from_secs(1) && waited >= Duration::from_millis(900), "{waited:?}");
    assert_eq!(record.request().questions().timeout_seconds(), Some(1));
    server.stop.send(()).unwrap();
    server.served.await.unwrap().unwrap();
}

/// Guards against a repeated call id (`call_0` in every conversation) reaching another
/// conversation's question: each call has its own id, and its own answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_call_ids_get_their_own_questions_and_answers() {
    let server = start().await;
    let (links, mut link) = mpsc::unbounded_channel();
    let ask_user = AskUser::builder().answerer(answerer(&server.url, links)).build().unwrap();
    let mut ids = Vec::new();
    for (conversation, label) in [("one", "Small"), ("two", "Large")] {
        let call =
            ask_user.call(ToolCall::new("call_0", ARGS), AskContext::new().with_session_id(conversation));
        let person = async {
            let id = id_of(&link.recv().await.unwrap());
            let answer = AskUserResponse::answered(vec![
                AskUserAnswer::picked("Plan", [label]),
                AskUserAnswer::picked("Extras", ["Support"]),
            ]);
            server.store.commit_answer(&id, &answer).await.unwrap();
            id
        };
        let (outcome, id) = tokio::join!(call, person);
        assert_eq!(
            outcome.model_text(),
            Some(format!(r#"{{"Plan":["{label}"],"Extras":["Support"]}}"#).as_str())
        );
        assert!(id.starts_with("call_0-"), "{id}");
        ids.push(id);
    }
    assert_ne!(ids[0], ids[1]);
    server.stop.send(()).unwrap();
    server.served.await.unwrap().unwrap();
}

/// A PostgreSQL cluster of the test's own (`initdb` and `pg_ctl` as `postgres`, a free port, a
/// temporary directory), stopped and started by the test, removed when dropped. `None` (the
/// test skips, saying why) without the binaries or the user.
struct Cluster {
    dir: std::path::PathBuf,
    port: u16,
}

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

impl Cluster {
    fn start() -> Option<Self> {
        let usable = std::path::Path::new(PG_BIN).join("initdb").exists()
            && std::process::Command::new("id").arg("postgres").output().is_ok_and(|o| o.status.success());
        if !usable {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "CI must provide PostgreSQL's initdb");
            eprintln!("SKIPPED the PostgreSQL outage: no {PG_BIN}/initdb or no postgres user");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = std::env::temp_dir().join(format!("askuser-server-pg-outage-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let cluster = Self { dir, port };
        cluster.as_postgres("chown", &[]);
        cluster.pg(&["initdb", "-D", "data", "--auth=trust", "--username=root", "--no-sync"]);
        cluster.ctl("start");
        Some(cluster)
    }

    fn url(&self) -> String {
        format!("postgres://root@127.0.0.1:{}/postgres", self.port)
    }

    /// `chown` of the directory to postgres (as root), or a PostgreSQL program run as postgres.
    fn as_postgres(&self, what: &str, args: &[&str]) -> std::process::Output {
        let output = if what == "chown" {
            std::process::Command::new("chown").args(["-R", "postgres:postgres"]).arg(&self.dir).output()
        } else {
            std::process::Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(std::path::Path::new(PG_BIN).join(what))
                .args(args)
                .current_dir(&self.dir)
                .output()
        }
        .unwrap();
        assert!(output.status.success(), "{what} {args:?}: {output:?}");
        output
    }

    fn pg(&self, args: &[&str]) {
        self.as_postgres(args[0], &args[1..]);
    }

    fn ctl(&self, action: &str) {
        let options =
            format!("-p {} -c listen_addresses=127.0.0.1 -k {} -c fsync=off", self.port, self.dir.display());
        let log = self.dir.join("log");
        let log = log.to_str().unwrap();
        match action {
            "start" => self.pg(&["pg_ctl", "-D", "data", "-o", &options, "-l", log, "-w", "start"]),
            _ => self.pg(&["pg_ctl", "-D", "data", "-m", "fast", "-w", "stop"]),
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = std::process::Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(std::path::Path::new(PG_BIN).join("pg_ctl"))
            .args(["-D", "data", "-m", "immediate", "stop"])
            .current_dir(&self.dir)
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Guards the same as [`store_outage_loses_no_answer`] on a real PostgreSQL, stopped while
/// questions wait and while others are asked: every answer given after it is back is delivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_outage_loses_no_answer() {
    const WAITING: usize = 3;
    const ASKED_DURING: usize = 2;
    let Some(cluster) = Cluster::start() else { return };
    let store = askuser_store::PostgresStore::open(&cluster.url()).await.unwrap();
    let server = start_over(Arc::new(store.clone()), Profile::Reference).await;
    let (links, mut link) = mpsc::unbounded_channel();
    let ask_user = AskUser::builder()
        .answerer(answerer(&server.url, links))
        .timeout(Duration::from_mins(2))
        .build()
        .unwrap();
    let call = |i: usize| {
        let ask_user = ask_user.clone();
        tokio::spawn(async move {
            let call_id = format!("pg_{i}");
            ask_user.call(ToolCall::new(&call_id, ARGS), AskContext::new()).await
        })
    };
    let mut calls: Vec<_> = (0..WAITING).map(call).collect();
    let mut ids = Vec::new();
    for _ in 0..WAITING {
        ids.push(id_of(&tokio::time::timeout(Duration::from_secs(20), link.recv()).await.unwrap().unwrap()));
    }
    cluster.ctl("stop");
    calls.extend((WAITING..WAITING + ASKED_DURING).map(call));
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(link.try_recv().is_err(), "nothing could be asked while PostgreSQL was down");
    cluster.ctl("start");
    for _ in 0..ASKED_DURING {
        ids.push(id_of(&tokio::time::timeout(Duration::from_secs(30), link.recv()).await.unwrap().unwrap()));
    }
    for id in &ids {
        let answer = AskUserResponse::answered(vec![
            AskUserAnswer::picked("Plan", ["Large"]),
            AskUserAnswer::custom("Extras", id.as_str()),
        ]);
        tokio::time::timeout(Duration::from_secs(20), server.store.commit_answer(id, &answer))
            .await
            .unwrap()
            .unwrap();
    }
    let mut delivered = Vec::new();
    for call in calls {
        let outcome = tokio::time::timeout(Duration::from_mins(1), call).await.unwrap().unwrap();
        delivered.push(outcome.model_text().unwrap_or_else(|| panic!("{outcome:?}")).to_owned());
    }
    let expected: Vec<String> =
        ids.iter().map(|id| format!(r#"{{"Plan":["Large"],"Extras":["{id}"]}}"#)).collect();
    delivered.sort();
    let mut expected = expected;
    expected.sort();
    assert_eq!(delivered, expected, "all {} answers delivered, each to its asker", WAITING + ASKED_DURING);
    server.stop.send(()).unwrap();
    server.served.await.unwrap().unwrap();
    store.close().await;
}

/// A fake answer server on loopback: takes any ask and answers every wait with `answer` and
/// `secret_values`, as a hostile server (or anyone on a plain-HTTP path) could.
async fn fake_server(answer: serde_json::Value, secret_values: serde_json::Value) -> String {
    use axum::routing::{get, post};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let page = format!("{url}/q/x/y");
    // The question as a real server stores it, so that the replies are well-formed records.
    let store = Arc::new(askuser_store::MemoryStore::new());
    let asked = Arc::clone(&store);
    let app = axum::Router::new()
        .route(
            "/v1/questions",
            post(move |axum::Json(body): axum::Json<askuser_client::wire::AskBody>| {
                let (page, store) = (page.clone(), Arc::clone(&asked));
                async move {
                    let questions = askuser_core::Validator::new()
                        .with_profile(Profile::Extended)
                        .validate_value(&body.arguments)
                        .unwrap();
                    let request = askuser_core::AskUserRequest::with_id(body.id.unwrap(), questions);
                    let record = store
                        .put(askuser_store::NewQuestion::new(request, Duration::from_mins(1)))
                        .await
                        .unwrap();
                    let reply = askuser_client::wire::AskReply {
                        id: record.id().to_owned(),
                        url: page,
                        expires_at: record.expires_at(),
                        record,
                    };
                    (axum::http::StatusCode::CREATED, axum::Json(reply))
                }
            }),
        )
        .route(
            "/v1/questions/{id}/wait",
            get(move |axum::extract::Path(id): axum::extract::Path<String>| {
                let (answer, secret_values, store) =
                    (answer.clone(), secret_values.clone(), Arc::clone(&store));
                async move {
                    // The record, answered with whatever this server likes, checked or not.
                    let mut record = serde_json::to_value(store.get(&id).await.unwrap().unwrap()).unwrap();
                    let response: askuser_core::AskUserResponse = serde_json::from_value(answer).unwrap();
                    let response = serde_json::to_value(response).unwrap();
                    record["answered_by"] = response["answered_by"].clone();
                    record["response"] = response;
                    record["state"] = "answered".into();
                    record["closed_at"] = record["asked_at"].clone();
                    record["answered_at"] = record["asked_at"].clone();
                    axum::Json(
                        serde_json::json!({"id": id, "done": true, "state": "answered", "outcome": "answered",
                        "result": "", "record": record, "secret_values": secret_values}),
                    )
                }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// `ask --server` writes only the secret the request asked for, and only as one line: a server
/// naming another secret (`LD_PRELOAD`: its record does not read back) or sending a value with a
/// line break gets nothing written.
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
            // The record is read with the checks a stored row gets: its response does not fit.
            "must be exactly secret_ref \"session:DEPLOY_TOKEN\"",
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

/// The answer a local answerer gives in the race tests: "Large", typed locally.
fn local_answer() -> AskUserResponse {
    AskUserResponse::answered(vec![
        AskUserAnswer::picked("Plan", ["Large"]),
        AskUserAnswer::custom("Extras", "local"),
    ])
}

/// `Racing`: answered at the local surface first, the answer reaches the server (so the page and
/// every other surface say it was answered) and is the call's result; answered on the server
/// first, the local surface's future is dropped (its menu or form closed) and the server's
/// answer is the result; exactly one answer, the first, everywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_takes_the_first_answer_of_either_surface_and_retracts_the_other() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static DROPPED: AtomicUsize = AtomicUsize::new(0);
    struct Counted;
    impl Drop for Counted {
        fn drop(&mut self) {
            DROPPED.fetch_add(1, Ordering::SeqCst);
        }
    }
    let server = start().await;

    // 1. The local surface answers first (once the server has the question).
    let (links, mut link) = mpsc::unbounded_channel();
    let local = |_: askuser_core::AskUserRequest, _: AskContext| async { Ok(local_answer()) };
    let racing = askuser_client::Racing::new(answerer(&server.url, links), local);
    let ask_user = AskUser::builder().answerer(racing).build().unwrap();
    let outcome = ask_user.call(ToolCall::new("call_local", ARGS), AskContext::new()).await;
    assert_eq!(outcome.model_text(), Some(r#"{"Plan":["Large"],"Extras":["local"]}"#), "{outcome:?}");
    let id = link.recv().await.unwrap().split('/').nth(4).unwrap().to_owned();
    let record = server.store.get(&id).await.unwrap().unwrap();
    assert_eq!(record.state(), State::Answered, "the server has the local answer");
    assert_eq!(record.response(), Some(&local_answer()));

    // 2. The server's surface answers first: the local one is dropped, never answering.
    let (links, mut link) = mpsc::unbounded_channel();
    let waiting = |_: askuser_core::AskUserRequest, _: AskContext| async {
        let _held = Counted;
        std::future::pending::<Result<AskUserResponse, askuser_core::AnswerError>>().await
    };
    let racing = askuser_client::Racing::new(answerer(&server.url, links), waiting);
    let ask_user = AskUser::builder().answerer(racing).build().unwrap();
    let call = ask_user.call(ToolCall::new("call_page", ARGS), AskContext::new());
    let person = async {
        let id = link.recv().await.unwrap().split('/').nth(4).unwrap().to_owned();
        let answer = AskUserResponse::answered(vec![
            AskUserAnswer::picked("Plan", ["Small"]),
            AskUserAnswer::custom("Extras", "page"),
        ]);
        server.store.commit_answer(&id, &answer).await.unwrap();
    };
    let (outcome, ()) = tokio::join!(call, person);
    assert_eq!(outcome.model_text(), Some(r#"{"Plan":["Small"],"Extras":["page"]}"#), "{outcome:?}");
    assert_eq!(DROPPED.load(Ordering::SeqCst), 1, "the local surface was retracted");

    // 3. Both at once: the page answers while the local answer is on its way; the server's
    //    first answer stands (409 already_answered) and is the result.
    let (links, mut link) = mpsc::unbounded_channel();
    let store = Arc::clone(&server.store);
    let late = move |_: askuser_core::AskUserRequest, _: AskContext| {
        let store = Arc::clone(&store);
        async move {
            // The person answers on the page (the only pending question) just before locally.
            let page = AskUserResponse::answered(vec![
                AskUserAnswer::picked("Plan", ["Small"]),
                AskUserAnswer::custom("Extras", "first"),
            ]);
            let listed = store.list(&askuser_store::ListQuery::new().state(State::Pending)).await.unwrap();
            for record in listed.records {
                store.commit_answer(record.id(), &page).await.unwrap();
            }
            Ok(local_answer())
        }
    };
    let racing = askuser_client::Racing::new(answerer(&server.url, links), late);
    let ask_user = AskUser::builder().answerer(racing).build().unwrap();
    let outcome = ask_user.call(ToolCall::new("call_both", ARGS), AskContext::new()).await;
    let _ = link.recv().await.unwrap();
    assert_eq!(outcome.model_text(), Some(r#"{"Plan":["Small"],"Extras":["first"]}"#), "{outcome:?}");
    let answered = server.store.list(&askuser_store::ListQuery::new().state(State::Answered)).await.unwrap();
    assert_eq!(answered.records.len(), 3, "one answer per call, none lost, none doubled");
    server.stop.send(()).unwrap();
    server.served.await.unwrap().unwrap();
}

/// `Racing` with no answer server to reach: the local surface opens after its grace period, and
/// the person's local answer is the result within the bound on sending it to the server, not at
/// the question's deadline (an hour).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_without_a_server_returns_the_local_answer() {
    // A port nothing listens on: every request fails to connect.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let (links, _link) = mpsc::unbounded_channel();
    let local = |_: askuser_core::AskUserRequest, _: AskContext| async { Ok(local_answer()) };
    let racing = askuser_client::Racing::new(answerer(&url, links), local);
    let ask_user = AskUser::builder().answerer(racing).build().unwrap();
    let started = std::time::Instant::now();
    let outcome = tokio::time::timeout(
        Duration::from_secs(40),
        ask_user.call(ToolCall::new("call_offline", ARGS), AskContext::new()),
    )
    .await
    .expect("the local answer returns long before the deadline");
    assert_eq!(outcome.model_text(), Some(r#"{"Plan":["Large"],"Extras":["local"]}"#), "{outcome:?}");
    assert!(started.elapsed() >= Duration::from_secs(4), "the menu waited for the server first");
}
