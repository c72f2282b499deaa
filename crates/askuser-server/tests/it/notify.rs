//! Notices, against a local HTTP test double that records every request: JSON and ntfy forms, the
//! follow-ups (answered, declined, expired, withdrawn) with ntfy's sequence id and clear, the
//! reminder, the one-tap answer, credentials, retries that stop once a question is settled, and
//! exactly one notice of each kind with two replicas on one store.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use askuser_client::ApiToken;
use askuser_server::{AnswerServer, Notifier, NotifyFormat};
use askuser_store::{MemoryStore, SharedStore};
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::support::{TOKEN, api, ask, send};

/// One request the test double received.
#[derive(Debug)]
struct Hit {
    method: Method,
    path: String,
    headers: HeaderMap,
    body: String,
}

impl Hit {
    fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", |v| v.to_str().unwrap())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }
}

/// A webhook double on loopback, at `/hook` and under it, that fails its first `failures`
/// requests (all of them with `usize::MAX`) with 500.
async fn receiver(failures: usize) -> (String, mpsc::UnboundedReceiver<Hit>) {
    let (sender, received) = mpsc::unbounded_channel();
    let seen = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new().fallback(
        move |method: Method, uri: axum::http::Uri, headers: HeaderMap, body: String| {
            let sender = sender.clone();
            let seen = Arc::clone(&seen);
            async move {
                let _ = sender.send(Hit { method, path: uri.path().to_owned(), headers, body });
                if seen.fetch_add(1, Ordering::SeqCst) < failures {
                    StatusCode::INTERNAL_SERVER_ERROR
                } else {
                    StatusCode::OK
                }
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, received)
}

/// A server on `store` sending `notifier`'s notices (retried quickly).
fn server_with(store: Arc<dyn SharedStore>, notifier: Notifier) -> AnswerServer {
    let server = AnswerServer::builder(store, ApiToken::new(TOKEN).unwrap())
        .public_url("http://phone.test")
        .sweep_interval(Duration::from_millis(20))
        .notifier(notifier.retry_base(Duration::from_millis(50)))
        .build();
    drop(server.spawn_notifier().expect("a notifier"));
    drop(server.spawn_sweeper());
    server
}

fn app_with(notifier: Notifier) -> (axum::Router, Arc<dyn SharedStore>) {
    let store: Arc<dyn SharedStore> = Arc::new(MemoryStore::new());
    let app = server_with(Arc::clone(&store), notifier).router();
    (app, store)
}

async fn next(received: &mut mpsc::UnboundedReceiver<Hit>) -> Hit {
    tokio::time::timeout(Duration::from_secs(10), received.recv()).await.expect("a notice in time").unwrap()
}

async fn nothing_more(received: &mut mpsc::UnboundedReceiver<Hit>) {
    if let Ok(Some(hit)) = tokio::time::timeout(Duration::from_millis(300), received.recv()).await {
        panic!("unexpected notice: {hit:?}");
    }
}

const ONE_QUESTION: &str = r#"{"questions":[{"header":"Deploy","question":"Deploy now?",
    "options":[{"label":"Yes"},{"label":"Not yet"}]}]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_notices_are_retried_and_carry_no_question_text() {
    let (url, mut received) = receiver(2).await;
    let (app, _) = app_with(Notifier::new(&url, NotifyFormat::Json).unwrap());
    let id = ask(&app, json!({"session_id": "s1", "id": "n1", "asked_by": "codex in ~/app"})).await;
    let mut bodies = Vec::new();
    for _ in 0..3 {
        bodies.push(next(&mut received).await.body);
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]), "the same notice each try");
    let notice: Value = serde_json::from_str(&bodies[0]).unwrap();
    assert_eq!(notice["event"], "asked");
    assert_eq!((&notice["id"], &notice["session_id"]), (&json!(id), &json!("s1")));
    assert_eq!(notice["asked_by"], "codex in ~/app");
    assert_eq!(notice["headers"], json!(["Plan", "Extras"]));
    assert!(notice["url"].as_str().unwrap().starts_with("http://phone.test/q/n1/"));
    assert!(!bodies[0].contains("Which plan?") && notice.get("questions").is_none(), "{notice}");
    // Two questions: no one-tap answers.
    assert!(notice.get("answer_urls").is_none(), "{notice}");

    // Asking again with the same id notifies nobody.
    ask(&app, json!({"session_id": "s1", "id": "n1"})).await;
    nothing_more(&mut received).await;

    // The answer is followed up.
    let reply = api(&app, Method::POST, "/v1/questions/n1/answer", Some(crate::support::answer_body())).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let followed = next(&mut received).await.json();
    assert_eq!(
        (&followed["event"], &followed["state"], &followed["id"]),
        (&json!("answered"), &json!("answered"), &json!("n1"))
    );
    nothing_more(&mut received).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ntfy_notices_have_a_title_priority_tags_actions_and_the_text_when_asked() {
    let (url, mut received) = receiver(0).await;
    let (app, _) = app_with(Notifier::new(&url, NotifyFormat::Ntfy).unwrap().include_questions(true));
    ask(&app, json!({"id": "n2"})).await;
    let hit = next(&mut received).await;
    assert_eq!((hit.method.as_str(), hit.path.as_str()), ("POST", "/hook"));
    assert_eq!(hit.header("title"), "Your assistant asks 2 questions");
    assert!(hit.header("click").starts_with("http://phone.test/q/n2/"));
    assert_eq!((hit.header("priority"), hit.header("tags")), ("4", "question"));
    assert!(hit.header("x-sequence-id").starts_with("askuser-"));
    assert_eq!(hit.body, "Which plan?\nWhich extras?");
    // Two questions: only the page, no one-tap answer.
    let actions: Value = serde_json::from_str(hit.header("actions")).unwrap();
    assert_eq!(
        actions,
        json!([{"action": "view", "label": "Open", "url": hit.header("click"), "clear": true}])
    );
}

/// Every follow-up replaces the question's notification (same sequence id, minimal priority) and
/// then clears it: answered, declined, withdrawn and expired, whoever settled it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ntfy_follow_ups_replace_and_clear_the_notification() {
    let (url, mut received) = receiver(0).await;
    let (app, store) = app_with(Notifier::new(&url, NotifyFormat::Ntfy).unwrap());
    for (id, settle, title, tags) in [
        ("f-answered", "answer", "Answered", "white_check_mark"),
        ("f-declined", "decline", "Declined", "no_entry_sign"),
        ("f-withdrawn", "cancel", "Withdrawn: the assistant stopped waiting", "wastebasket"),
        ("f-expired", "expire", "Expired: nobody answered in time", "hourglass"),
    ] {
        ask(&app, json!({"id": id, "asked_by": "claude-code"})).await;
        let asked = next(&mut received).await;
        assert_eq!(asked.header("title"), "claude-code asks 2 questions");
        let sequence = asked.header("x-sequence-id").to_owned();
        // Settled in the store directly, as another process would: the feed brings it here.
        match settle {
            "answer" => {
                let answer = askuser_core::AskUserResponse::answered(vec![
                    askuser_core::AskUserAnswer::picked("Plan", ["Small"]),
                    askuser_core::AskUserAnswer::picked("Extras", ["Support"]),
                ]);
                store.commit_answer(id, &answer).await.unwrap();
            }
            "decline" => {
                store.commit_answer(id, &askuser_core::AskUserResponse::declined()).await.unwrap();
            }
            "cancel" => drop(store.cancel(id).await.unwrap()),
            _ => drop(store.expire(id).await.unwrap()),
        }
        let followed = next(&mut received).await;
        assert_eq!((followed.method.as_str(), followed.path.as_str()), ("POST", "/hook"), "{id}");
        assert_eq!(followed.header("x-sequence-id"), sequence, "{id}: the same notification");
        assert_eq!((followed.header("title"), followed.header("tags")), (title, tags), "{id}");
        assert_eq!(followed.header("priority"), "1", "{id}");
        assert!(followed.headers.get("actions").is_none(), "{id}: no buttons on a settled question");
        let cleared = next(&mut received).await;
        assert_eq!(
            (cleared.method.as_str(), cleared.path),
            ("PUT", format!("/hook/{sequence}/clear")),
            "{id}"
        );
    }
    nothing_more(&mut received).await;
}

/// A question put straight into the store (an asker on another process) is noticed too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_of_other_processes_are_noticed() {
    let (url, mut received) = receiver(0).await;
    let (_app, store) = app_with(Notifier::new(&url, NotifyFormat::Json).unwrap());
    let request = askuser_core::AskUserRequest::with_id(
        "elsewhere",
        askuser_core::Questions::from_json(ONE_QUESTION).unwrap(),
    );
    let label = askuser_store::AskedBy::new("a script").unwrap();
    store
        .put(askuser_store::NewQuestion::new(request, Duration::from_mins(5)).asked_by(label))
        .await
        .unwrap();
    let notice = next(&mut received).await.json();
    assert_eq!(
        (&notice["event"], &notice["id"], &notice["asked_by"]),
        (&json!("asked"), &json!("elsewhere"), &json!("a script"))
    );
}

/// Two replicas following one store: each notice is sent once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_send_each_notice_once() {
    let (url, mut received) = receiver(0).await;
    let store: Arc<dyn SharedStore> = Arc::new(MemoryStore::new());
    let first = server_with(Arc::clone(&store), Notifier::new(&url, NotifyFormat::Json).unwrap()).router();
    let second = server_with(Arc::clone(&store), Notifier::new(&url, NotifyFormat::Json).unwrap()).router();
    for i in 0..5 {
        ask(if i % 2 == 0 { &first } else { &second }, json!({"id": format!("r{i}")})).await;
    }
    let mut events = Vec::new();
    for _ in 0..5 {
        let notice = next(&mut received).await.json();
        events.push(format!("{} {}", notice["event"].as_str().unwrap(), notice["id"].as_str().unwrap()));
    }
    events.sort();
    assert_eq!(events, ["asked r0", "asked r1", "asked r2", "asked r3", "asked r4"]);
    nothing_more(&mut received).await;
}

/// A question that still waits at its nudge time is reminded once; one answered before is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_question_is_reminded_at_its_nudge_time() {
    let (url, mut received) = receiver(0).await;
    let (app, _) = app_with(Notifier::new(&url, NotifyFormat::Ntfy).unwrap());
    // Nudged a fifth of the way before it expires: 1.6 s after the ask.
    ask(&app, json!({"id": "late", "timeout_secs": 2})).await;
    let asked = next(&mut received).await;
    let reminder = next(&mut received).await;
    assert_eq!(reminder.header("title"), "Reminder: Your assistant still waits for your answer");
    assert_eq!(reminder.header("tags"), "question,alarm_clock");
    assert_eq!(reminder.header("x-sequence-id"), asked.header("x-sequence-id"));
    // Then it expires, and that is followed up (replace, clear).
    let expired = next(&mut received).await;
    assert_eq!(expired.header("title"), "Expired: nobody answered in time");
    assert_eq!(next(&mut received).await.method, Method::PUT);
    nothing_more(&mut received).await;
}

/// The one-tap answer: ntfy's `http` buttons post to a URL that needs the page's secret only,
/// pick that option, and are refused once the question is settled or with another token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_tap_answers_a_single_question_with_the_page_secret() {
    let (url, mut received) = receiver(0).await;
    let (app, store) = app_with(Notifier::new(&url, NotifyFormat::Ntfy).unwrap());
    ask(&app, json!({"id": "tap-1", "arguments": ONE_QUESTION})).await;
    let hit = next(&mut received).await;
    let actions: Value = serde_json::from_str(hit.header("actions")).unwrap();
    let actions = actions.as_array().unwrap();
    assert_eq!(actions.len(), 3, "{actions:?}");
    assert_eq!((&actions[0]["action"], &actions[0]["label"]), (&json!("view"), &json!("Open")));
    assert_eq!(
        (&actions[1]["action"], &actions[1]["label"], &actions[1]["method"]),
        (&json!("http"), &json!("Yes"), &json!("POST"))
    );
    assert_eq!(actions[2]["label"], "Not yet");
    let tap = |url: &str| {
        let path = url.strip_prefix("http://phone.test").unwrap().to_owned();
        Request::builder().method(Method::POST).uri(path).body(Body::empty()).unwrap()
    };
    let second = actions[2]["url"].as_str().unwrap();
    assert!(second.starts_with(hit.header("click")), "the page link plus /tap/N: {second}");

    // Another token, or a GET (a link preview), answers nothing.
    let forged = format!("http://phone.test/q/tap-1/{}/tap/1", "A".repeat(22));
    assert_eq!(send(&app, tap(&forged)).await.status, StatusCode::NOT_FOUND);
    let get = Request::builder()
        .uri(second.strip_prefix("http://phone.test").unwrap())
        .body(Body::empty())
        .unwrap();
    assert_ne!(send(&app, get).await.status, StatusCode::OK);
    assert_eq!(store.get("tap-1").await.unwrap().unwrap().state(), askuser_store::State::Pending);

    let reply = send(&app, tap(second)).await;
    assert_eq!((reply.status, reply.text.as_str()), (StatusCode::OK, "Answered: Not yet"));
    let record = store.get("tap-1").await.unwrap().unwrap();
    assert_eq!(record.result().unwrap().unwrap().text(), r#"{"Deploy":["Not yet"]}"#);
    let again = send(&app, tap(actions[1]["url"].as_str().unwrap())).await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.text);

    // A batch of two questions has no one-tap answer, even with its page's secret.
    ask(&app, json!({"id": "tap-2"})).await;
    let two = loop {
        let hit = next(&mut received).await;
        if hit.header("click").contains("/tap-2/") {
            break hit;
        }
    };
    let refused = send(&app, tap(&format!("{}/tap/0", two.header("click")))).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.text);
    assert_eq!(store.get("tap-2").await.unwrap().unwrap().state(), askuser_store::State::Pending);
}

/// docs/contract.md §17: an approval (a permission prompt `askuser hook` carries) is never answered by a
/// notice's one tap: its ntfy notice has only `Open`, its JSON notice no `answer_urls`, and its
/// tap URL answers nothing, though it is one single-select question.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_gets_no_one_tap_answer() {
    let approval = json!({"questions": [{"header": "Allow Bash?", "question": "Run `rm -rf build`?",
        "options": [{"label": "Allow once"}, {"label": "Deny"}]}]});
    let (url, mut received) = receiver(0).await;
    let (app, store) = app_with(Notifier::new(&url, NotifyFormat::Ntfy).unwrap());
    ask(&app, json!({"id": "approval-1", "tool_name": "askuser_approval", "arguments": approval})).await;
    let hit = next(&mut received).await;
    let actions: Value = serde_json::from_str(hit.header("actions")).unwrap();
    let labels: Vec<&str> =
        actions.as_array().unwrap().iter().map(|a| a["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["Open"]);
    let path = format!("{}/tap/0", hit.header("click").strip_prefix("http://phone.test").unwrap());
    let tap = Request::builder().method(Method::POST).uri(path).body(Body::empty()).unwrap();
    let refused = send(&app, tap).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.text);
    assert_eq!(store.get("approval-1").await.unwrap().unwrap().state(), askuser_store::State::Pending);

    let (url, mut received) = receiver(0).await;
    let (app, _) = app_with(Notifier::new(&url, NotifyFormat::Json).unwrap());
    ask(&app, json!({"id": "approval-2", "tool_name": "askuser_approval", "arguments": approval})).await;
    let body: Value = serde_json::from_str(&next(&mut received).await.body).unwrap();
    assert!(body.get("answer_urls").is_none(), "{body}");
    assert_eq!(body["event"], "asked");
}

/// Credentials go in the `Authorization` header: a token as Bearer, `user:password` as Basic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_authenticate_every_request() {
    let (url, mut received) = receiver(0).await;
    let (app, _) =
        app_with(Notifier::new(&url, NotifyFormat::Ntfy).unwrap().credentials("tk_secret\n").unwrap());
    ask(&app, json!({"id": "c1"})).await;
    assert_eq!(next(&mut received).await.header("authorization"), "Bearer tk_secret");

    let (url, mut received) = receiver(0).await;
    let (app, _) = app_with(Notifier::new(&url, NotifyFormat::Json).unwrap().credentials("phil:pw").unwrap());
    ask(&app, json!({"id": "c2"})).await;
    assert_eq!(next(&mut received).await.header("authorization"), "Basic cGhpbDpwdw==");

    let notifier = Notifier::new(&url, NotifyFormat::Json).unwrap();
    assert!(notifier.clone().credentials(" \n").is_err());
    assert!(notifier.clone().credentials("a\rb").is_err());
    let shown = format!("{:?}", notifier.credentials("tk_secret").unwrap());
    assert!(!shown.contains("tk_secret"), "{shown}");
}

/// A failing webhook is retried while the question waits, not once it is settled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_stop_once_the_question_is_settled() {
    let (url, mut received) = receiver(usize::MAX).await;
    let (app, store) = app_with(Notifier::new(&url, NotifyFormat::Json).unwrap());
    ask(&app, json!({"id": "s1"})).await;
    assert_eq!(next(&mut received).await.json()["event"], "asked");
    store.cancel("s1").await.unwrap();
    // Tries at 0, 50, 150, 350, 750 ms: give them all time to come, were they still due.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut asked = 1;
    while let Ok(hit) = received.try_recv() {
        if hit.json()["event"] == "asked" {
            asked += 1;
        }
    }
    assert!(asked < 5, "the asked notice was tried {asked} times after its question was settled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_webhook_never_holds_an_ask() {
    // Nothing listens on this port.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    drop(listener);
    let (app, _) = app_with(Notifier::new(&url, NotifyFormat::Json).unwrap());
    // Twenty asks waiting on five failing tries each would take minutes; they do not wait at all.
    let asks = async {
        for _ in 0..20 {
            let reply =
                api(&app, Method::POST, "/v1/questions", Some(json!({"arguments": crate::support::ARGS})))
                    .await;
            assert_eq!(reply.status, StatusCode::CREATED);
        }
    };
    tokio::time::timeout(Duration::from_mins(1), asks).await.expect("an ask waited for the webhook");
}

/// A webhook answering 307 to another address is not followed there: the notice (its answer
/// link included) never reaches the redirect's target; the webhook itself is tried five times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_never_followed() {
    let (target_url, mut target_received) = receiver(0).await;
    let hook_hits = Arc::new(AtomicUsize::new(0));
    let hits = Arc::clone(&hook_hits);
    let (tried, mut attempts) = mpsc::unbounded_channel::<()>();
    let redirecting = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            hits.fetch_add(1, Ordering::SeqCst);
            let _ = tried.send(());
            let target_url = target_url.clone();
            async move { (StatusCode::TEMPORARY_REDIRECT, [(axum::http::header::LOCATION, target_url)]) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, redirecting).await });

    let (app, _) = app_with(Notifier::new(&url, NotifyFormat::Json).unwrap());
    ask(&app, json!({"id": "r1"})).await;
    for _ in 0..5 {
        tokio::time::timeout(Duration::from_secs(10), attempts.recv()).await.unwrap().unwrap();
    }
    // The fifth try was the last: give a followed redirect time to arrive, were there one.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(hook_hits.load(Ordering::SeqCst), 5);
    assert!(target_received.try_recv().is_err(), "the redirect's target got the notice");
}

/// The reminder ladder's escalation step, on a manual clock (no sleeping through the delay): a
/// question still waiting ten minutes after it was asked goes to the second surface, once; one
/// answered before is never escalated; the escalated one's answer is followed up there too (ntfy:
/// replaced, then cleared), so no copy is left asking; the audit log records the escalation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_still_waiting_is_escalated_once_and_retracted_when_answered() {
    let (url, mut received) = receiver(0).await;
    let (oncall, mut escalated) = receiver(0).await;
    // From now: the reminder (on the wall clock) stays an hour away.
    let clock = askuser_store::ManualClock::new(askuser_core::Timestamp::now());
    let store: Arc<dyn SharedStore> = Arc::new(MemoryStore::with_clock(Arc::new(clock.clone())));
    let server = AnswerServer::builder(Arc::clone(&store), ApiToken::new(TOKEN).unwrap())
        .public_url("http://phone.test")
        .sweep_interval(Duration::from_millis(20))
        .clock(Arc::new(clock.clone()))
        .notifier(Notifier::new(&url, NotifyFormat::Json).unwrap())
        .escalate(Duration::from_mins(10), Notifier::new(&oncall, NotifyFormat::Ntfy).unwrap())
        .build();
    drop(server.spawn_notifier());
    drop(server.spawn_escalation());
    let app = server.router();
    ask(&app, json!({"id": "waits", "timeout_secs": 3600})).await;
    ask(&app, json!({"id": "answered-first", "timeout_secs": 3600})).await;
    assert_eq!(next(&mut received).await.json()["event"], "asked");
    assert_eq!(next(&mut received).await.json()["event"], "asked");
    let answer = json!({"answers": [{"header": "Plan", "selected": ["Large"]}, {"header": "Extras", "selected": ["Support"]}]});
    let answered = api(&app, Method::POST, "/v1/questions/answered-first/answer", Some(answer.clone())).await;
    assert_eq!(answered.status, StatusCode::OK);
    clock.advance(Duration::from_secs(9 * 60 + 59));
    nothing_more(&mut escalated).await;
    clock.advance(Duration::from_secs(1));
    let up = next(&mut escalated).await;
    assert_eq!(up.header("title"), "Escalated: Your assistant still waits for an answer");
    assert_eq!(up.header("priority"), "5");
    nothing_more(&mut escalated).await;

    // Answered on the page or the API: the escalated copy is replaced and cleared.
    let answered = api(&app, Method::POST, "/v1/questions/waits/answer", Some(answer)).await;
    assert_eq!(answered.status, StatusCode::OK);
    let followed = next(&mut escalated).await;
    assert_eq!(
        (followed.header("title"), followed.header("x-sequence-id")),
        ("Answered", up.header("x-sequence-id"))
    );
    assert_eq!(next(&mut escalated).await.method, Method::PUT);
    nothing_more(&mut escalated).await;
    let log = store.audit_entries(0, None, 100).await.unwrap();
    let escalations: Vec<&str> =
        log.iter().map(|e| e.line.as_str()).filter(|l| l.contains(r#""event":"escalated""#)).collect();
    assert_eq!(escalations.len(), 1, "{log:?}");
    assert!(escalations[0].contains(r#""question":"waits","surface":"ntfy""#), "{escalations:?}");
}
