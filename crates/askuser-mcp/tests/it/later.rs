//! Background asks: `ask_user_question_later` and `get_user_answers`, tickets in the store.

use std::sync::Arc;
use std::time::{Duration, Instant};

use askuser_core::{AskUserAnswer, AskUserResponse};
use askuser_mcp::{ANSWERS_TOOL, AskUserServer, LATER_TOOL, MAX_OPEN_TICKETS};
use askuser_store::{PendingStore, SqliteStore, State};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use serde_json::{Value, json};

use crate::harness::{Client, Reply, TestClient, connect, text_of};

fn one() -> Value {
    json!({"questions": [{"header": "Lang", "question": "Which language?",
        "options": [{"label": "Rust"}, {"label": "Go"}]}]})
}

fn server(store: Arc<dyn PendingStore>, scope: &str) -> AskUserServer {
    AskUserServer::builder().timeout(Duration::from_secs(30)).background(store, scope).build()
}

async fn tool(running: &Client, name: &str, arguments: &Value) -> (String, bool) {
    let params = CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().cloned().unwrap_or_default());
    text_of(&running.call_tool(params).await.unwrap())
}

/// The ticket in `ask_user_question_later`'s text.
fn ticket_of(text: &str) -> String {
    let rest = text.split("Ticket: ").nth(1).unwrap_or_else(|| panic!("no ticket in {text}"));
    rest.split('.').next().unwrap().to_owned()
}

async fn ask_later(running: &Client) -> String {
    let started = Instant::now();
    let (text, is_error) = tool(running, LATER_TOOL, &one()).await;
    assert!(!is_error, "{text}");
    assert!(started.elapsed() < Duration::from_secs(2), "returns at once, not after the answer");
    assert!(text.contains("go on with work that does not depend on the answers"), "{text}");
    ticket_of(&text)
}

struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("askuser-mcp-{name}-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&path);
        Self(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", self.0.display()));
        }
    }
}

#[tokio::test]
async fn the_tools_are_listed_only_when_enabled() {
    let store: Arc<dyn PendingStore> = Arc::new(askuser_store::MemoryStore::new());
    let names =
        |server: &AskUserServer| server.tools().into_iter().map(|t| t.name.to_string()).collect::<Vec<_>>();
    assert_eq!(names(&AskUserServer::default()), ["ask_user_question"]);
    let server = server(store, "here");
    assert_eq!(names(&server), ["ask_user_question", LATER_TOOL, ANSWERS_TOOL]);
    let later = &server.tools()[1];
    assert_eq!(later.input_schema, server.tool().input_schema, "the same arguments as ask_user_question");
}

#[tokio::test]
async fn a_ticket_returns_at_once_and_the_forms_answer_comes_later() {
    let store: Arc<dyn PendingStore> = Arc::new(askuser_store::MemoryStore::new());
    let wait = Duration::from_millis(300);
    let client =
        TestClient::new(ProtocolVersion::V_2025_11_25, true, vec![Reply::Late(wait, json!({"q01": "Go"}))]);
    let running = connect(server(Arc::clone(&store), "here"), client.clone()).await;
    let ticket = ask_later(&running).await;
    let (text, is_error) = tool(&running, ANSWERS_TOOL, &json!({"ticket": ticket})).await;
    assert!(!is_error && text.contains("has not answered yet"), "{text}");
    let (text, is_error) = tool(&running, ANSWERS_TOOL, &json!({"ticket": ticket, "wait_seconds": 20})).await;
    assert_eq!(
        (text.as_str(), is_error),
        (r#"{"Lang":["Go"]}"#, false),
        "exactly what ask_user_question returns"
    );
    assert_eq!(client.shown().len(), 1, "asked once");
    assert_eq!(store.get(&ticket).await.unwrap().unwrap().state(), State::Answered);
    running.cancel().await.unwrap();
}

#[tokio::test]
async fn a_ticket_outlives_the_server_and_another_scopes_ticket_is_refused() {
    let file = TempFile::new("tickets");
    let path = file.0.display().to_string();
    let store: Arc<dyn PendingStore> = Arc::new(SqliteStore::open(&path).await.unwrap());
    let client = TestClient::new(ProtocolVersion::V_2025_11_25, true, vec![Reply::Hang]);
    let running = connect(server(Arc::clone(&store), "askuser mcp in ~/a"), client).await;
    let ticket = ask_later(&running).await;
    // The server goes away while the form is open; the person answers elsewhere (the page).
    running.cancel().await.unwrap();
    let response = AskUserResponse::answered(vec![AskUserAnswer::picked("Lang", ["Rust"])]);
    store.commit_answer(&ticket, &response).await.unwrap();
    drop(store);

    let reopened: Arc<dyn PendingStore> = Arc::new(SqliteStore::open(&path).await.unwrap());
    let client = TestClient::new(ProtocolVersion::V_2025_11_25, true, vec![]);
    let running = connect(server(Arc::clone(&reopened), "askuser mcp in ~/a"), client.clone()).await;
    let (text, is_error) = tool(&running, ANSWERS_TOOL, &json!({"ticket": ticket})).await;
    assert_eq!((text.as_str(), is_error), (r#"{"Lang":["Rust"]}"#, false));
    assert!(client.shown().is_empty(), "an answered ticket asks nobody");
    running.cancel().await.unwrap();

    let running = connect(
        server(reopened, "askuser mcp in ~/b"),
        TestClient::new(ProtocolVersion::V_2025_11_25, true, vec![]),
    )
    .await;
    for ticket in [ticket.as_str(), "t00000000000000000000000000000000"] {
        let (text, is_error) = tool(&running, ANSWERS_TOOL, &json!({"ticket": ticket})).await;
        assert!(is_error && text.contains("is not one of this server's"), "{text}");
    }
    running.cancel().await.unwrap();
}

#[tokio::test]
async fn a_ticket_nobody_answers_times_out_with_the_servers_policy() {
    let store: Arc<dyn PendingStore> = Arc::new(askuser_store::MemoryStore::new());
    let server = AskUserServer::builder()
        .timeout(Duration::from_secs(1))
        .on_timeout(askuser_tool::OnTimeout::Stop)
        .background(store, "here")
        .build();
    let client = TestClient::new(ProtocolVersion::V_2025_11_25, true, vec![Reply::Hang]);
    let running = connect(server, client.clone()).await;
    let ticket = ask_later(&running).await;
    let (text, _) = tool(&running, ANSWERS_TOOL, &json!({"ticket": ticket, "wait_seconds": 10})).await;
    assert_eq!(text, askuser_core::TIMED_OUT_STOP);
    running.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_calls_are_refused_with_what_is_wrong() {
    let store: Arc<dyn PendingStore> = Arc::new(askuser_store::MemoryStore::new());
    let running =
        connect(server(store, "here"), TestClient::new(ProtocolVersion::V_2025_11_25, true, vec![])).await;
    let (text, is_error) = tool(&running, LATER_TOOL, &json!({"questions": []})).await;
    assert!(is_error && text.contains("questions"), "the same retry as ask_user_question: {text}");
    let (text, is_error) = tool(&running, ANSWERS_TOOL, &json!({"ticket": "t1", "wait_seconds": 99})).await;
    assert!(is_error && text.contains("wait_seconds must be a whole number from 0 to 50, got 99"), "{text}");
    running.cancel().await.unwrap();
}

/// Issue 36.18: with no form to show a background ask in and no fallback (the default), a host
/// without forms got no ticket at all, and a 2026-07-28 host that declared forms was told it had
/// not. Each gets a ticket whose question waits in the store (the answer server's page answers
/// it there), and the true reason nobody is asked through it.
#[tokio::test]
async fn without_a_form_or_a_fallback_the_ticket_waits_in_the_store_and_says_why() {
    for (version, forms, why) in [
        (ProtocolVersion::V_2025_11_25, false, "this MCP client did not declare form elicitation"),
        (
            ProtocolVersion::V_2026_07_28,
            true,
            "has no request from the server outside a tool call, so the client's form can show only ask_user_question's questions",
        ),
    ] {
        let store: Arc<dyn PendingStore> = Arc::new(askuser_store::MemoryStore::new());
        let client = TestClient::new(version.clone(), forms, vec![]);
        let running = connect(server(Arc::clone(&store), "here"), client.clone()).await;
        let (text, is_error) = tool(&running, LATER_TOOL, &one()).await;
        assert!(
            !is_error && text.contains(why) && text.contains("answer server's page"),
            "{version}: {text}"
        );
        assert!(!text.contains("did not declare") || !forms, "{version}: {text}");
        let ticket = ticket_of(&text);
        assert_eq!(store.get(&ticket).await.unwrap().unwrap().state(), State::Pending, "{version}");
        // The page answers it.
        let response = AskUserResponse::answered(vec![AskUserAnswer::picked("Lang", ["Go"])]);
        store.commit_answer(&ticket, &response).await.unwrap();
        let (text, is_error) = tool(&running, ANSWERS_TOOL, &json!({"ticket": ticket})).await;
        assert_eq!((text.as_str(), is_error), (r#"{"Lang":["Go"]}"#, false), "{version}");
        assert!(client.shown().is_empty(), "{version}: no form was shown");
        running.cancel().await.unwrap();
    }
}

/// Guards the cap on open tickets per scope: a model calling `ask_user_question_later` in a loop
/// filled the store and the person's surfaces without bound. Past the cap the call asks nobody
/// and says how to go on; a settled ticket frees its room, and another scope has its own.
#[tokio::test]
async fn open_tickets_past_the_cap_are_refused_until_one_settles() {
    let store: Arc<dyn PendingStore> = Arc::new(askuser_store::MemoryStore::new());
    let client = TestClient::new(ProtocolVersion::V_2025_11_25, false, vec![]);
    let running = connect(server(Arc::clone(&store), "here"), client.clone()).await;
    let mut tickets = Vec::new();
    for _ in 0..MAX_OPEN_TICKETS {
        let (text, is_error) = tool(&running, LATER_TOOL, &one()).await;
        assert!(!is_error, "{text}");
        tickets.push(ticket_of(&text));
    }
    let pending = || async {
        let query = askuser_store::ListQuery::new().state(State::Pending).limit(1_000);
        store.list(&query).await.unwrap().records.len()
    };
    let (text, is_error) = tool(&running, LATER_TOOL, &one()).await;
    assert!(is_error, "{text}");
    assert!(
        text.contains(&format!("{MAX_OPEN_TICKETS} questions asked with it here are still open"))
            && text.contains(&format!("call {ANSWERS_TOOL} with its ticket"))
            && text.contains(&format!("then call {LATER_TOOL} again")),
        "{text}"
    );
    assert_eq!(pending().await, MAX_OPEN_TICKETS, "the refused call put nothing in the store");

    // Another scope on the same store has room of its own.
    let other = connect(
        server(Arc::clone(&store), "there"),
        TestClient::new(ProtocolVersion::V_2025_11_25, false, vec![]),
    )
    .await;
    let (text, is_error) = tool(&other, LATER_TOOL, &one()).await;
    assert!(!is_error, "{text}");
    other.cancel().await.unwrap();

    // One settles (the page answers it): its room is free again.
    let response = AskUserResponse::answered(vec![AskUserAnswer::picked("Lang", ["Go"])]);
    store.commit_answer(&tickets[0], &response).await.unwrap();
    let (text, is_error) = tool(&running, LATER_TOOL, &one()).await;
    assert!(!is_error, "{text}");
    let (text, is_error) = tool(&running, LATER_TOOL, &one()).await;
    assert!(is_error && text.contains("still open"), "{text}");
    assert!(client.shown().is_empty(), "no form was shown");
    running.cancel().await.unwrap();
}
