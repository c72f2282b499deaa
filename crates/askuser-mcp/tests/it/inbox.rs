//! The inbox (`AskUserServerBuilder::inbox`): every call also waits in a pending-question store,
//! racing the host's form; the store decides who won.

use std::sync::Arc;
use std::time::Duration;

use askuser_core::{AskUserAnswer, AskUserResponse};
use askuser_mcp::AskUserServer;
use askuser_store::{ListQuery, MemoryStore, PendingStore, State};
use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};

use crate::harness::{Reply, TestClient, call, connect, text_of};

fn one() -> Value {
    json!({"questions": [{"header": "Lang", "question": "Which language?",
        "options": [{"label": "Rust"}, {"label": "Go"}]}]})
}

fn server(store: &MemoryStore) -> AskUserServer {
    AskUserServer::builder().timeout(Duration::from_secs(30)).inbox(Arc::new(store.clone())).build()
}

/// Waits (bounded) for the one pending question in `store` and answers it with `label`.
async fn answer_in_store(store: MemoryStore, label: &str) {
    for _ in 0..500 {
        let page = store.list(&ListQuery::new().state(State::Pending)).await.unwrap();
        if let Some(record) = page.records.first() {
            let response = AskUserResponse::answered(vec![AskUserAnswer::picked("Lang", [label])]);
            store.answer(record.id(), &response).await.unwrap();
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no question reached the store");
}

/// Calls `ask_user_question` with `one()` through a client answering with `replies`, while
/// `person` acts on the store; returns the result text and the client.
async fn ask_racing(
    store: &MemoryStore,
    elicitation: bool,
    replies: Vec<Reply>,
    person: impl Future<Output = ()>,
) -> (String, TestClient) {
    let client = TestClient::new(ProtocolVersion::V_2025_11_25, elicitation, replies);
    let running = connect(server(store), client.clone()).await;
    let (result, ()) = tokio::join!(running.call_tool(call(&one())), person);
    let (text, is_error) = text_of(&result.unwrap());
    assert!(!is_error, "{text}");
    running.cancel().await.unwrap();
    (text, client)
}

async fn only_record(store: &MemoryStore) -> askuser_store::PendingRecord {
    let page = store.list(&ListQuery::new()).await.unwrap();
    assert_eq!(page.records.len(), 1, "{page:?}");
    page.records[0].clone()
}

#[tokio::test]
async fn the_forms_answer_settles_the_question_in_the_store() {
    let store = MemoryStore::new();
    let (text, client) = ask_racing(&store, true, vec![Reply::Accept(json!({"q01": "Go"}))], async {}).await;
    assert_eq!(text, r#"{"Lang":["Go"]}"#);
    assert_eq!(client.shown().len(), 1);
    let record = only_record(&store).await;
    assert_eq!(record.state(), State::Answered);
    assert_eq!(record.result().unwrap().unwrap().text(), text, "the page shows what the model got");
    assert!(record.asked_by().is_some(), "the page shows which client asks");
}

#[tokio::test]
async fn an_answer_in_the_store_wins_and_closes_the_form() {
    let store = MemoryStore::new();
    let (text, client) =
        ask_racing(&store, true, vec![Reply::Hang], answer_in_store(store.clone(), "Rust")).await;
    assert_eq!(text, r#"{"Lang":["Rust"]}"#);
    assert_eq!(client.shown().len(), 1);
    // The open elicitation/create is cancelled on the client (the notification is sent on the
    // side: give it a moment).
    for _ in 0..200 {
        if !client.cancelled().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(client.cancelled(), vec![client.shown()[0].id.clone()]);
}

#[tokio::test]
async fn a_dismissed_form_leaves_the_question_waiting_in_the_store() {
    let store = MemoryStore::new();
    let (text, _) =
        ask_racing(&store, true, vec![Reply::Cancel], answer_in_store(store.clone(), "Rust")).await;
    assert_eq!(text, r#"{"Lang":["Rust"]}"#, "a dismissal is not a decline here");
}

#[tokio::test]
async fn a_declined_form_declines_the_question_in_the_store() {
    let store = MemoryStore::new();
    let (text, _) = ask_racing(&store, true, vec![Reply::Decline], async {}).await;
    assert_eq!(text, askuser_core::DECLINED);
    assert_eq!(only_record(&store).await.state(), State::Declined);
}

#[tokio::test]
async fn without_a_form_the_store_is_where_the_person_answers() {
    let store = MemoryStore::new();
    let (text, client) = ask_racing(&store, false, vec![], answer_in_store(store.clone(), "Go")).await;
    assert_eq!(text, r#"{"Lang":["Go"]}"#);
    assert!(client.shown().is_empty());
}

/// Guards a call left waiting forever: when every round of the form misses the questions, the
/// model is told so (as without an inbox), and the store's question is withdrawn.
#[tokio::test]
async fn a_form_that_never_fits_ends_the_call_and_withdraws_the_question() {
    let store = MemoryStore::new();
    let misfit = Reply::Accept(json!({"q01": "Klingon"}));
    let client = TestClient::new(ProtocolVersion::V_2025_11_25, true, vec![misfit; 5]);
    let running = connect(server(&store), client.clone()).await;
    let result = tokio::time::timeout(Duration::from_secs(10), running.call_tool(call(&one()))).await;
    let (text, is_error) = text_of(&result.expect("the call ends").unwrap());
    assert!(is_error && text.contains("no answer fitted"), "{text}");
    assert_eq!(client.shown().len(), 5);
    running.cancel().await.unwrap();
    for _ in 0..100 {
        if only_record(&store).await.state() != State::Pending {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(only_record(&store).await.state(), State::Cancelled);
}
