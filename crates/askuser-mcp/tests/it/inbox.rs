//! The inbox (`AskUserServerBuilder::inbox`): every call also waits in a pending-question store,
//! racing the host's form; the store decides who won. On 2025-11-25 the form is an
//! `elicitation/create` the server can retract; on 2026-07-28 it comes back on the call's retry,
//! and the store settles it then.

use std::sync::Arc;
use std::time::Duration;

use askuser_core::{AskUserAnswer, AskUserResponse};
use askuser_mcp::AskUserServer;
use askuser_store::{
    Changes, ListQuery, MemoryStore, NewQuestion, Page, PendingRecord, PendingStore, State, StoreError,
};
use rmcp::model::{NumberOrString, ProgressToken, ProtocolVersion, RequestMetaObject};
use serde_json::{Value, json};

use crate::harness::{Reply, TestClient, call, connect, text_of};

/// The revisions whose forms race the store, each delivering them its own way.
const RACING: [ProtocolVersion; 2] = [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

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
            store.commit_answer(record.id(), &response).await.unwrap();
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
    version: &ProtocolVersion,
    elicitation: bool,
    replies: Vec<Reply>,
    person: impl Future<Output = ()>,
) -> (String, TestClient) {
    let client = TestClient::new(version.clone(), elicitation, replies);
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
    for version in &RACING {
        let store = MemoryStore::new();
        let (text, client) =
            ask_racing(&store, version, true, vec![Reply::Accept(json!({"q01": "Go"}))], async {}).await;
        assert_eq!(text, r#"{"Lang":["Go"]}"#, "{version}");
        assert_eq!(client.shown().len(), 1);
        let record = only_record(&store).await;
        assert_eq!(record.state(), State::Answered, "{version}");
        assert_eq!(record.result().unwrap().unwrap().text(), text, "the page shows what the model got");
        assert!(record.asked_by().is_some(), "the page shows which client asks");
    }
}

#[tokio::test]
async fn an_answer_in_the_store_wins_and_closes_the_form() {
    let store = MemoryStore::new();
    let version = ProtocolVersion::V_2025_11_25;
    let (text, client) =
        ask_racing(&store, &version, true, vec![Reply::Hang], answer_in_store(store.clone(), "Rust")).await;
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

/// 2026-07-28 cannot retract the form: the person answered on the page first, then in the form,
/// and the call returns the first answer.
#[tokio::test]
async fn on_2026_07_28_the_stores_first_answer_wins_over_the_form_answered_later() {
    let store = MemoryStore::new();
    let late = Reply::Late(Duration::from_millis(300), json!({"q01": "Go"}));
    let version = ProtocolVersion::V_2026_07_28;
    let (text, client) =
        ask_racing(&store, &version, true, vec![late], answer_in_store(store.clone(), "Rust")).await;
    assert_eq!(text, r#"{"Lang":["Rust"]}"#);
    assert_eq!(client.shown().len(), 1);
    let record = only_record(&store).await;
    assert_eq!(record.result().unwrap().unwrap().text(), text, "one answer, the first");
}

#[tokio::test]
async fn a_dismissed_form_leaves_the_question_waiting_in_the_store() {
    for version in &RACING {
        let store = MemoryStore::new();
        let (text, _) =
            ask_racing(&store, version, true, vec![Reply::Cancel], answer_in_store(store.clone(), "Rust"))
                .await;
        assert_eq!(text, r#"{"Lang":["Rust"]}"#, "{version}: a dismissal is not a decline here");
    }
}

#[tokio::test]
async fn a_declined_form_declines_the_question_in_the_store() {
    for version in &RACING {
        let store = MemoryStore::new();
        let (text, _) = ask_racing(&store, version, true, vec![Reply::Decline], async {}).await;
        assert_eq!(text, askuser_core::DECLINED, "{version}");
        assert_eq!(only_record(&store).await.state(), State::Declined);
    }
}

#[tokio::test]
async fn without_a_form_the_store_is_where_the_person_answers() {
    for version in &RACING {
        let store = MemoryStore::new();
        let (text, client) =
            ask_racing(&store, version, false, vec![], answer_in_store(store.clone(), "Go")).await;
        assert_eq!(text, r#"{"Lang":["Go"]}"#, "{version}");
        assert!(client.shown().is_empty());
    }
}

/// Guards a call left waiting forever: when every round of the form misses the questions, the
/// model is told so (as without an inbox), and the store's question is withdrawn.
#[tokio::test]
async fn a_form_that_never_fits_ends_the_call_and_withdraws_the_question() {
    for version in &RACING {
        a_form_that_never_fits(version).await;
    }
}

async fn a_form_that_never_fits(version: &ProtocolVersion) {
    let store = MemoryStore::new();
    let misfit = Reply::Accept(json!({"q01": "Klingon"}));
    let client = TestClient::new(version.clone(), true, vec![misfit; 5]);
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

/// Guards the heartbeat of a 2026-07-28 retry that waits for the other surfaces after a dismissed
/// form: it carries progress as a 2025 call does, so the host does not give up on it.
#[tokio::test(start_paused = true)]
async fn on_2026_07_28_a_dismissed_forms_wait_sends_progress() {
    let store = MemoryStore::new();
    let server =
        AskUserServer::builder().timeout(Duration::from_mins(10)).inbox(Arc::new(store.clone())).build();
    let client = TestClient::new(ProtocolVersion::V_2026_07_28, true, vec![Reply::Cancel]);
    let running = connect(server, client.clone()).await;
    let mut params = call(&one());
    params.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(NumberOrString::Number(7))));
    let person = async {
        tokio::time::sleep(Duration::from_secs(100)).await;
        answer_in_store(store.clone(), "Go").await;
    };
    let (result, ()) = tokio::join!(running.call_tool(params), person);
    assert_eq!(text_of(&result.unwrap()).0, r#"{"Lang":["Go"]}"#);
    tokio::task::yield_now().await;
    let progress = client.progress();
    assert!((5..=7).contains(&progress.len()), "{progress:?}");
    running.cancel().await.unwrap();
}

/// A store that cannot take the question (closed here, as in an outage) still leaves a
/// 2026-07-28 client its form, whose answer is the call's.
#[tokio::test]
async fn on_2026_07_28_a_store_outage_still_leaves_the_form() {
    let path = std::env::temp_dir().join(format!("askuser-mcp-outage-{}.db", std::process::id()));
    let store = askuser_store::SqliteStore::open(&path).await.unwrap();
    store.close().await;
    let server = AskUserServer::builder().timeout(Duration::from_secs(30)).inbox(Arc::new(store)).build();
    let version = ProtocolVersion::V_2026_07_28;
    let (text, is_error, shown) =
        crate::harness::ask(server, &version, true, vec![Reply::Accept(json!({"q01": "Go"}))], &one()).await;
    assert_eq!((text.as_str(), is_error, shown.len()), (r#"{"Lang":["Go"]}"#, false, 1));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

/// A memory store with SQLite's one writer: every write takes `writer`, and the second put of a
/// question (the waiting answerer's own, after the inbox's) holds it a moment, as a transaction
/// in flight does.
#[derive(Debug, Default)]
struct OneWriter {
    inner: MemoryStore,
    writer: tokio::sync::Mutex<()>,
    puts: std::sync::atomic::AtomicUsize,
}

#[askuser_core::async_trait]
impl PendingStore for OneWriter {
    async fn put(&self, question: NewQuestion) -> Result<PendingRecord, StoreError> {
        let _writer = self.writer.lock().await;
        if self.puts.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 1 {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        self.inner.put(question).await
    }
    async fn get(&self, id: &str) -> Result<Option<PendingRecord>, StoreError> {
        self.inner.get(id).await
    }
    async fn list(&self, query: &ListQuery) -> Result<Page, StoreError> {
        self.inner.list(query).await
    }
    async fn commit_answer(&self, id: &str, response: &AskUserResponse) -> Result<PendingRecord, StoreError> {
        let _writer = self.writer.lock().await;
        self.inner.commit_answer(id, response).await
    }
    async fn cancel(&self, id: &str) -> Result<PendingRecord, StoreError> {
        let _writer = self.writer.lock().await;
        self.inner.cancel(id).await
    }
    async fn expire(&self, id: &str) -> Result<PendingRecord, StoreError> {
        let _writer = self.writer.lock().await;
        self.inner.expire(id).await
    }
    async fn expire_due(&self, limit: usize) -> Result<Vec<PendingRecord>, StoreError> {
        self.inner.expire_due(limit).await
    }
    async fn renew(&self, id: &str, lease: Duration) -> Result<bool, StoreError> {
        let _writer = self.writer.lock().await;
        self.inner.renew(id, lease).await
    }
    async fn withdraw_lapsed(&self, limit: usize) -> Result<Vec<PendingRecord>, StoreError> {
        self.inner.withdraw_lapsed(limit).await
    }
    async fn purge(&self, keep: Duration, limit: usize) -> Result<usize, StoreError> {
        self.inner.purge(keep, limit).await
    }
    async fn watch(&self, id: &str) -> Result<PendingRecord, StoreError> {
        self.inner.watch(id).await
    }
    fn changes(&self) -> Changes {
        self.inner.changes()
    }
}

/// Guards a deadlock found under load: the form answered while the waiting side stood inside a
/// write (SQLite's one writer held), and the form's commit waited for that writer while nothing
/// drove the write to its end; the store's acquire gave up 30 s later, the model got the answer
/// and the store said the question was withdrawn. The commit now runs beside the waiting side.
#[tokio::test]
async fn the_forms_commit_never_waits_on_a_write_the_waiting_side_holds() {
    let store = Arc::new(OneWriter::default());
    let server = AskUserServer::builder()
        .timeout(Duration::from_secs(30))
        .inbox(Arc::clone(&store) as Arc<dyn PendingStore>)
        .build();
    let client =
        TestClient::new(ProtocolVersion::V_2025_11_25, true, vec![Reply::Accept(json!({"q01": "Go"}))]);
    let running = connect(server, client).await;
    let result = tokio::time::timeout(Duration::from_secs(10), running.call_tool(call(&one())))
        .await
        .expect("no deadlock: the call ends");
    assert_eq!(text_of(&result.unwrap()).0, r#"{"Lang":["Go"]}"#);
    assert_eq!(store.puts.load(std::sync::atomic::Ordering::SeqCst), 2, "the waiting side's put ran");
    let page = store.list(&ListQuery::new()).await.unwrap();
    assert_eq!(page.records[0].state(), State::Answered, "the store has the form's answer");
    running.cancel().await.unwrap();
}
