//! A store that fails: `503 store_unavailable` with `Retry-After` (never a hang, never a fake
//! success), `500 internal` for a store bug, the page keeping what was typed, reused ids.

use std::sync::Arc;
use std::time::Duration;

use askuser_client::ApiToken;
use askuser_core::AskUserResponse;
use askuser_server::AnswerServer;
use askuser_store::{
    AuditEntry, AuditEvent, AuditLog, Coordination, Key, ListQuery, MemoryStore, NewQuestion, Page,
    PendingRecord, PendingStore, SharedStore, State, StoreError,
};
use axum::http::{Method, StatusCode, header};
use serde_json::json;

use crate::pages::{csrf_of, get, link_of, post_form, record_state};
use crate::support::{Harness, TOKEN, answer_body, api, ask, send};

/// What a [`Flaky`] store does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Works.
    Up,
    /// Every call fails as a database that cannot be reached fails (a pool timeout), and a
    /// watch in progress ends with that error.
    Down,
    /// Reads work; writes fail as a full disk does.
    WritesDown,
    /// Every call fails with a database error that is not an outage (a bug).
    Broken,
}

/// A memory store that an outage can be switched on and off in.
#[derive(Debug)]
pub(crate) struct Flaky {
    inner: MemoryStore,
    mode: tokio::sync::watch::Sender<Mode>,
}

impl Flaky {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self { inner: MemoryStore::new(), mode: tokio::sync::watch::Sender::new(Mode::Up) })
    }

    pub(crate) fn set(&self, mode: Mode) {
        self.mode.send_replace(mode);
    }

    fn check(&self, write: bool) -> Result<(), StoreError> {
        match *self.mode.borrow() {
            Mode::Up => Ok(()),
            Mode::WritesDown if !write => Ok(()),
            Mode::WritesDown => {
                Err(StoreError::unavailable(std::io::Error::from(std::io::ErrorKind::StorageFull)))
            }
            Mode::Down => Err(StoreError::unavailable("no connection to be had in time")),
            Mode::Broken => Err(StoreError::database("garbled reply")),
        }
    }
}

#[askuser_core::async_trait]
impl PendingStore for Flaky {
    async fn put(&self, question: NewQuestion) -> Result<PendingRecord, StoreError> {
        self.check(true)?;
        self.inner.put(question).await
    }

    async fn get(&self, id: &str) -> Result<Option<PendingRecord>, StoreError> {
        self.check(false)?;
        self.inner.get(id).await
    }

    async fn list(&self, query: &ListQuery) -> Result<Page, StoreError> {
        self.check(false)?;
        self.inner.list(query).await
    }

    async fn commit_answer(&self, id: &str, response: &AskUserResponse) -> Result<PendingRecord, StoreError> {
        self.check(true)?;
        self.inner.commit_answer(id, response).await
    }

    async fn cancel(&self, id: &str) -> Result<PendingRecord, StoreError> {
        self.check(true)?;
        self.inner.cancel(id).await
    }

    async fn expire(&self, id: &str) -> Result<PendingRecord, StoreError> {
        self.check(true)?;
        self.inner.expire(id).await
    }

    async fn expire_due(&self, limit: usize) -> Result<Vec<PendingRecord>, StoreError> {
        self.check(true)?;
        self.inner.expire_due(limit).await
    }

    async fn renew(&self, id: &str, lease: Duration) -> Result<bool, StoreError> {
        self.check(true)?;
        self.inner.renew(id, lease).await
    }

    async fn withdraw_lapsed(&self, limit: usize) -> Result<Vec<PendingRecord>, StoreError> {
        self.check(true)?;
        self.inner.withdraw_lapsed(limit).await
    }

    async fn purge(&self, keep: Duration, limit: usize) -> Result<usize, StoreError> {
        self.check(true)?;
        self.inner.purge(keep, limit).await
    }

    async fn watch(&self, id: &str) -> Result<PendingRecord, StoreError> {
        self.check(false)?;
        let mut mode = self.mode.subscribe();
        tokio::select! {
            settled = self.inner.watch(id) => settled,
            _ = mode.wait_for(|m| matches!(m, Mode::Down | Mode::Broken)) => Err(self.check(false).unwrap_err()),
        }
    }

    fn changes(&self) -> askuser_store::Changes {
        self.inner.changes()
    }
}

#[askuser_core::async_trait]
impl Coordination for Flaky {
    async fn lease(&self, name: &str, holder: &str, ttl: Duration) -> Result<bool, StoreError> {
        self.check(true)?;
        self.inner.lease(name, holder, ttl).await
    }

    async fn claim_once(&self, key: &Key) -> Result<bool, StoreError> {
        self.check(true)?;
        self.inner.claim_once(key).await
    }

    async fn value(&self, namespace: &str, key: &str) -> Result<Option<String>, StoreError> {
        self.check(false)?;
        self.inner.value(namespace, key).await
    }

    async fn set_value(&self, key: &Key, value: &str) -> Result<(), StoreError> {
        self.check(true)?;
        self.inner.set_value(key, value).await
    }

    async fn remove_value(&self, namespace: &str, key: &str) -> Result<(), StoreError> {
        self.check(true)?;
        self.inner.remove_value(namespace, key).await
    }

    async fn values(&self, namespace: &str) -> Result<Vec<(String, String)>, StoreError> {
        self.check(false)?;
        self.inner.values(namespace).await
    }
}

#[askuser_core::async_trait]
impl AuditLog for Flaky {
    async fn append_audit(&self, event: &AuditEvent) -> Result<AuditEntry, StoreError> {
        self.check(true)?;
        self.inner.append_audit(event).await
    }

    async fn audit_entries(
        &self,
        after: u64,
        since: Option<askuser_core::Timestamp>,
        limit: usize,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        self.check(false)?;
        self.inner.audit_entries(after, since, limit).await
    }
}

pub(crate) fn flaky_harness() -> (Harness, Arc<Flaky>) {
    let flaky = Flaky::new();
    let store: Arc<dyn SharedStore> = Arc::clone(&flaky) as Arc<dyn SharedStore>;
    let server = AnswerServer::builder(Arc::clone(&store), ApiToken::new(TOKEN).unwrap())
        .public_url("http://phone.test:8765/")
        .build();
    let app = server.router();
    (Harness { server, app, store }, flaky)
}

#[tokio::test]
async fn store_unavailable_is_503_with_retry_after_and_a_store_bug_is_500() {
    let (h, flaky) = flaky_harness();
    let id = ask(&h.app, json!({})).await;
    flaky.set(Mode::Down);
    let body = json!({"arguments": crate::support::ARGS});
    for (method, uri, body) in [
        (Method::POST, "/v1/questions".to_owned(), Some(body.clone())),
        (Method::GET, format!("/v1/questions/{id}"), None),
        (Method::GET, format!("/v1/questions/{id}/wait?timeout_secs=5"), None),
        (Method::POST, format!("/v1/questions/{id}/answer"), Some(answer_body())),
        (Method::POST, format!("/v1/questions/{id}/cancel"), None),
        (Method::GET, "/v1/questions".to_owned(), None),
    ] {
        let reply = api(&h.app, method.clone(), &uri, body).await;
        let json = reply.error(StatusCode::SERVICE_UNAVAILABLE, "store_unavailable");
        assert!(json["message"].as_str().unwrap().contains("try again"), "{method} {uri}: {json}");
        assert_eq!(reply.headers[header::RETRY_AFTER], "2", "{method} {uri}");
    }
    let health = send(&h.app, get("/healthz", None)).await;
    assert_eq!(
        (health.status, health.json()["status"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("unavailable"))
    );
    assert_eq!(health.headers[header::RETRY_AFTER], "2");

    // A database error that is no outage stays an internal error, with nothing of it shown.
    flaky.set(Mode::Broken);
    let reply = api(&h.app, Method::GET, &format!("/v1/questions/{id}"), None).await;
    reply.error(StatusCode::INTERNAL_SERVER_ERROR, "internal");
    assert!(!reply.text.contains("garbled"), "{}", reply.text);

    // Back up: the answer that failed was never stored, and now it is.
    flaky.set(Mode::Up);
    assert_eq!(record_state(&h, &id).await, "pending");
    let reply = api(&h.app, Method::POST, &format!("/v1/questions/{id}/answer"), Some(answer_body())).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let health = send(&h.app, get("/healthz", None)).await;
    assert_eq!(health.status, StatusCode::OK);
}

/// Guards the page after a failed write: plainly not sent, every choice and word kept, and the
/// same form sent again once the store is back.
#[tokio::test]
async fn a_failed_answer_on_the_page_says_not_sent_and_keeps_what_was_typed() {
    let (h, flaky) = flaky_harness();
    let id = ask(&h.app, json!({})).await;
    let link = link_of(&h, &id);
    let page = send(&h.app, get(&link, None)).await;
    let csrf = csrf_of(&page);
    let fields = [
        ("csrf", csrf.as_str()),
        ("q0", "other"),
        ("q0_other", "Medium, & <b>bold</b>"),
        ("q1", "1"),
        ("action", "answer"),
    ];
    flaky.set(Mode::WritesDown);
    let failed = send(&h.app, post_form(&link, None, &fields)).await;
    assert_eq!(failed.status, StatusCode::SERVICE_UNAVAILABLE, "{}", failed.text);
    assert_eq!(failed.headers[header::RETRY_AFTER], "2");
    let html = &failed.text;
    for expected in [
        "Your answers were NOT sent",
        r#"value="Medium, &#38; &#60;b&#62;bold&#60;/b&#62;""#,
        r#"name="q0" value="other" checked"#,
        r#"name="q1" value="1" checked"#,
    ] {
        assert!(html.contains(expected), "missing {expected:?} in\n{html}");
    }
    assert!(!html.contains(r#"name="q1" value="0" checked"#) && !html.contains("Thank you"), "{html}");
    assert_eq!(record_state(&h, &id).await, "pending", "nothing was stored");

    // The store unreachable altogether: the record cannot even be read, still plainly not sent.
    flaky.set(Mode::Down);
    let failed = send(&h.app, post_form(&link, None, &fields)).await;
    assert_eq!(failed.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(failed.text.contains("NOT sent") && failed.text.contains("Go back"), "{}", failed.text);

    // The form as shown again is the form to send again (the same CSRF token).
    flaky.set(Mode::Up);
    let sent = send(&h.app, post_form(&link, None, &fields)).await;
    assert_eq!(sent.status, StatusCode::OK, "{}", sent.text);
    assert!(sent.text.contains("Your answers were sent"), "{}", sent.text);
    let record = h.store.get(&id).await.unwrap().unwrap();
    assert_eq!(record.response().unwrap().answers[0].custom_answer.as_deref(), Some("Medium, & <b>bold</b>"));
}

/// Guards against delivering another conversation's answer: providers repeat call ids.
#[tokio::test]
async fn a_settled_id_reused_is_409_never_the_old_answer() {
    let (h, _flaky) = flaky_harness();
    let id = ask(&h.app, json!({"id": "call_0", "session_id": "conversation-1"})).await;
    let first = api(&h.app, Method::POST, "/v1/questions/call_0/answer", Some(answer_body())).await;
    assert_eq!(first.status, StatusCode::OK);
    for extra in [json!({"session_id": "conversation-1"}), json!({"session_id": "conversation-2"}), json!({})]
    {
        let mut body = json!({"arguments": crate::support::ARGS, "id": id});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let reply = api(&h.app, Method::POST, "/v1/questions", Some(body)).await;
        let json = reply.error(StatusCode::CONFLICT, "id_taken");
        assert!(json["message"].as_str().unwrap().contains("already answered"), "{json}");
        assert!(
            json.get("record").is_none() && !reply.text.contains("Large"),
            "no old answer: {}",
            reply.text
        );
    }
    // A cancelled or timed-out question's id is taken too.
    let other = ask(&h.app, json!({"id": "call_1"})).await;
    api(&h.app, Method::POST, &format!("/v1/questions/{other}/cancel"), None).await;
    let reply = api(
        &h.app,
        Method::POST,
        "/v1/questions",
        Some(json!({"arguments": crate::support::ARGS, "id": other})),
    )
    .await;
    reply.error(StatusCode::CONFLICT, "id_taken");
}

#[tokio::test]
async fn a_retry_of_a_pending_ask_gets_the_same_record() {
    let (h, _flaky) = flaky_harness();
    let body = json!({"arguments": crate::support::ARGS, "id": "retry-1", "session_id": "s"});
    let first = api(&h.app, Method::POST, "/v1/questions", Some(body.clone())).await;
    let again = api(&h.app, Method::POST, "/v1/questions", Some(body)).await;
    assert_eq!((first.status, again.status), (StatusCode::CREATED, StatusCode::CREATED));
    assert_eq!(first.json()["record"], again.json()["record"]);
    assert_eq!(h.store.list(&ListQuery::new()).await.unwrap().records.len(), 1);
    // The same id with another session is a different ask.
    let other = json!({"arguments": crate::support::ARGS, "id": "retry-1", "session_id": "t"});
    let reply = api(&h.app, Method::POST, "/v1/questions", Some(other)).await;
    let json = reply.error(StatusCode::CONFLICT, "id_taken");
    assert!(json["message"].as_str().unwrap().contains("different question"), "{json}");
}

/// No request waits for the pool's own timeout when the store does not answer at all.
#[tokio::test(start_paused = true)]
async fn a_store_that_hangs_fails_within_the_limit() {
    #[derive(Debug)]
    struct Hangs;
    #[askuser_core::async_trait]
    impl PendingStore for Hangs {
        async fn put(&self, _: NewQuestion) -> Result<PendingRecord, StoreError> {
            std::future::pending().await
        }
        async fn get(&self, _: &str) -> Result<Option<PendingRecord>, StoreError> {
            std::future::pending().await
        }
        async fn list(&self, _: &ListQuery) -> Result<Page, StoreError> {
            std::future::pending().await
        }
        async fn commit_answer(&self, _: &str, _: &AskUserResponse) -> Result<PendingRecord, StoreError> {
            std::future::pending().await
        }
        async fn cancel(&self, _: &str) -> Result<PendingRecord, StoreError> {
            std::future::pending().await
        }
        async fn expire(&self, _: &str) -> Result<PendingRecord, StoreError> {
            std::future::pending().await
        }
        async fn expire_due(&self, _: usize) -> Result<Vec<PendingRecord>, StoreError> {
            std::future::pending().await
        }
        async fn renew(&self, _: &str, _: Duration) -> Result<bool, StoreError> {
            std::future::pending().await
        }
        async fn withdraw_lapsed(&self, _: usize) -> Result<Vec<PendingRecord>, StoreError> {
            std::future::pending().await
        }
        async fn purge(&self, _: Duration, _: usize) -> Result<usize, StoreError> {
            std::future::pending().await
        }
        async fn watch(&self, _: &str) -> Result<PendingRecord, StoreError> {
            std::future::pending().await
        }
        fn changes(&self) -> askuser_store::Changes {
            // A feed that never tells anything: its store is gone.
            askuser_store::MemoryStore::new().changes()
        }
    }
    #[askuser_core::async_trait]
    impl Coordination for Hangs {
        async fn lease(&self, _: &str, _: &str, _: Duration) -> Result<bool, StoreError> {
            std::future::pending().await
        }
        async fn claim_once(&self, _: &Key) -> Result<bool, StoreError> {
            std::future::pending().await
        }
        async fn value(&self, _: &str, _: &str) -> Result<Option<String>, StoreError> {
            std::future::pending().await
        }
        async fn set_value(&self, _: &Key, _: &str) -> Result<(), StoreError> {
            std::future::pending().await
        }
        async fn remove_value(&self, _: &str, _: &str) -> Result<(), StoreError> {
            std::future::pending().await
        }
        async fn values(&self, _: &str) -> Result<Vec<(String, String)>, StoreError> {
            std::future::pending().await
        }
    }
    #[askuser_core::async_trait]
    impl AuditLog for Hangs {
        async fn append_audit(&self, _: &AuditEvent) -> Result<AuditEntry, StoreError> {
            std::future::pending().await
        }
        async fn audit_entries(
            &self,
            _: u64,
            _: Option<askuser_core::Timestamp>,
            _: usize,
        ) -> Result<Vec<AuditEntry>, StoreError> {
            std::future::pending().await
        }
    }
    let server = AnswerServer::builder(Arc::new(Hangs), ApiToken::new(TOKEN).unwrap()).build();
    let app = server.router();
    let started = tokio::time::Instant::now();
    let reply =
        api(&app, Method::POST, "/v1/questions", Some(json!({"arguments": crate::support::ARGS}))).await;
    reply.error(StatusCode::SERVICE_UNAVAILABLE, "store_unavailable");
    let health = send(&app, get("/healthz", None)).await;
    assert_eq!(health.status, StatusCode::SERVICE_UNAVAILABLE);
    let took = started.elapsed();
    assert!(took >= Duration::from_secs(10) && took < Duration::from_secs(11), "two calls of 5 s: {took:?}");
}

/// Guards the lease against outages: a live ask nobody waits for is withdrawn one lease later,
/// a deferred one is not; a live asker that waited out a store outage longer than its lease (no
/// renewal could reach the store) keeps its question when the store comes back and its retried
/// wait arrives within a lease; and it is withdrawn once it stops waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_lapses_without_waits_but_not_through_an_outage() {
    let flaky = Flaky::new();
    let store: Arc<dyn SharedStore> = Arc::clone(&flaky) as Arc<dyn SharedStore>;
    let server = AnswerServer::builder(Arc::clone(&store), ApiToken::new(TOKEN).unwrap())
        .lease(Duration::from_secs(1))
        .sweep_interval(Duration::from_millis(50))
        .build();
    let app = server.router();
    let _sweeper = server.spawn_sweeper();
    let state = |id: String| {
        let store = Arc::clone(&store);
        async move { store.get(&id).await.unwrap().unwrap().state() }
    };
    let abandoned = ask(&app, json!({"live": true})).await;
    let deferred = ask(&app, json!({})).await;
    let waited = ask(&app, json!({"live": true})).await;
    let wait = |id: &str, secs: f64| {
        let (app, uri) = (app.clone(), format!("/v1/questions/{id}/wait?timeout_secs={secs}"));
        tokio::spawn(async move { api(&app, Method::GET, &uri, None).await })
    };
    let holding = wait(&waited, 2.5);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(state(abandoned.clone()).await, State::Cancelled, "nobody waited: withdrawn");
    assert_eq!(state(deferred.clone()).await, State::Pending, "a deferred question keeps its deadline");
    assert_eq!(state(waited.clone()).await, State::Pending, "its wait holds it");
    assert_eq!(holding.await.unwrap().status, StatusCode::OK);

    // Down for three leases: nobody can renew. Back up, the asker's retried wait comes 300 ms
    // later (its backoff), and its question is still there.
    flaky.set(Mode::Down);
    tokio::time::sleep(Duration::from_secs(3)).await;
    flaky.set(Mode::Up);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let holding = wait(&waited, 2.0);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        state(waited.clone()).await,
        State::Pending,
        "an outage its asker waited out withdraws nothing"
    );
    assert_eq!(holding.await.unwrap().status, StatusCode::OK);
    // The asker stops waiting: one lease (and a sweep) later, the question is withdrawn.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(state(waited.clone()).await, State::Cancelled);
    assert_eq!(state(deferred).await, State::Pending);
    let refused =
        api(&app, Method::POST, &format!("/v1/questions/{waited}/answer"), Some(answer_body())).await;
    assert_eq!(refused.status, StatusCode::GONE, "{}", refused.text);
}
