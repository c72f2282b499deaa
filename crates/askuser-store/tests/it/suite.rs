//! The suite every backend passes: each backend's module calls [`conformance`] with a fresh store
//! reading `clock`, so a new backend gets every test for free.

use std::sync::Arc;
use std::time::Duration;

use askuser_core::{
    AnsweredBy, AskUserAnswer, AskUserRequest, AskUserResponse, DECLINED, Deadline, Profile, TIMED_OUT,
    Timestamp, Validator,
};
use askuser_store::{
    APPROVAL_TOOL_NAME, AskedBy, AuditEvent, Changes, Key, ListQuery, ManualClock, NewQuestion,
    PendingRecord, PendingStore, SharedStore, State, StoreError, Via,
};

use crate::support::{PATIENCE, answer_large, answer_small, misfit, other_request, request};

pub(crate) async fn conformance<S: SharedStore + 'static>(store: S, clock: ManualClock) {
    let shared: Arc<dyn SharedStore> = Arc::new(store);
    let store: Arc<dyn PendingStore> = Arc::clone(&shared) as Arc<dyn PendingStore>;
    put_and_get(&*store, &clock).await;
    first_answer_wins(&*store).await;
    invalid_response_writes_nothing(&*store).await;
    declined(&*store).await;
    cancel(&*store).await;
    expire(&*store).await;
    sweep_expires_only_overdue(&*store, &clock).await;
    sweep_in_batches(&*store, &clock).await;
    leases(&*store, &clock).await;
    overdue_is_never_answerable(&*store, &clock).await;
    request_stamps_win(&*store, &clock).await;
    extended_round_trip(&*store).await;
    watch(&store).await;
    change_feed(&*store, &clock).await;
    list_pages(&*store, &clock).await;
    stored_json(&*store).await;
    values_lapse(&*shared, &clock).await;
    asked_by(&*store).await;
    keys_are_claimed_once(&*shared, &clock).await;
    puts_and_cancels_say_what_they_changed(&*store).await;
    leases_and_values(&*shared, &clock).await;
    late_answers(&*store, &clock).await;
    // Last but one: it reads the events of every step above.
    audit_trail(&*shared).await;
    // Last: it deletes what the others left.
    retention(&*shared, &clock).await;
}

/// A question that timed out takes a late answer within the window, once; never an approval,
/// never after the window, never one still pending or withdrawn.
async fn late_answers(store: &dyn PendingStore, clock: &ManualClock) {
    const WINDOW: Duration = Duration::from_hours(1);
    let via = Via::surface("api").person("u-7");
    store.put(question("late-1", 10)).await.expect("put");
    clock.advance(Duration::from_secs(11));
    store.expire("late-1").await.expect("expire");
    assert!(matches!(store.commit_answer("late-1", &answer_large()).await, Err(StoreError::Closed { .. })));
    assert!(matches!(
        store.commit_late_answer("late-1", &misfit(), WINDOW, &via).await,
        Err(StoreError::InvalidResponse { .. })
    ));
    let late = store.commit_late_answer("late-1", &answer_large(), WINDOW, &via).await.expect("late");
    assert_eq!((late.state(), late.answered_by()), (State::Late, Some(AnsweredBy::User)));
    assert_eq!(late.response(), Some(&answer_large()));
    assert_eq!(late.answered_at(), Some(clock.now_at()));
    assert_eq!(store.get("late-1").await.expect("get").as_ref(), Some(&late));
    assert!(late.result().expect("renders").expect("a result").into_text().contains("Large"));
    // Once: a second late answer finds the first.
    match store.commit_late_answer("late-1", &answer_small(), WINDOW, &via).await {
        Err(StoreError::Conflict { first }) => assert_eq!(first.response(), Some(&answer_large())),
        other => panic!("expected the first late answer, got {other:?}"),
    }
    // Not before it timed out, not after the window, not once withdrawn, never an approval.
    store.put(question("late-pending", 100)).await.expect("put");
    assert!(matches!(
        store.commit_late_answer("late-pending", &answer_large(), WINDOW, &via).await,
        Err(StoreError::Closed { .. })
    ));
    store.put(question("late-stale", 10)).await.expect("put");
    store.expire("late-stale").await.expect("expire");
    clock.advance(WINDOW);
    assert!(matches!(
        store.commit_late_answer("late-stale", &answer_large(), WINDOW, &via).await,
        Err(StoreError::Closed { .. })
    ));
    store.cancel("late-pending").await.expect("cancel");
    assert!(matches!(
        store.commit_late_answer("late-pending", &answer_large(), WINDOW, &via).await,
        Err(StoreError::Closed { .. })
    ));
    store.put(question("late-approval", 10).tool_name(APPROVAL_TOOL_NAME)).await.expect("put");
    store.expire("late-approval").await.expect("expire");
    match store.commit_late_answer("late-approval", &answer_large(), WINDOW, &via).await {
        Err(StoreError::Closed { record }) => assert_eq!(record.state(), State::TimedOut),
        other => panic!("an approval is never late, got {other:?}"),
    }
    assert!(matches!(
        store.commit_late_answer("late-none", &answer_large(), WINDOW, &via).await,
        Err(StoreError::NotFound { .. })
    ));
}

/// Every step above left its events in the log, chained: it verifies whole, names the surface
/// and person a change was made through, never holds a secret's value, and takes events the
/// store cannot see.
async fn audit_trail(store: &dyn SharedStore) {
    let entries = store.audit_entries(0, None, 100_000).await.expect("entries");
    let text = entries.iter().map(|e| e.line.as_str()).collect::<Vec<_>>().join("\n");
    let verified = askuser_store::verify(&text, false).expect("the chain holds");
    assert_eq!((verified.events, verified.first), (entries.len() as u64, 1));
    let events: Vec<serde_json::Value> =
        entries.iter().map(|e| serde_json::from_str(&e.line).unwrap()).collect();
    let of = |question: &str| -> Vec<&str> {
        events.iter().filter(|e| e["question"] == question).map(|e| e["event"].as_str().unwrap()).collect()
    };
    assert_eq!(of("late-1"), ["asked", "expired", "late"]);
    assert_eq!(of("late-approval"), ["asked", "expired"]);
    assert_eq!(of("late-pending"), ["asked", "withdrawn"]);
    assert_eq!(of("ext-secret"), ["asked", "answered"]);
    let late = events.iter().find(|e| e["question"] == "late-1" && e["event"] == "late").unwrap();
    assert_eq!(
        (&late["surface"], &late["person"], &late["answered_by"]),
        (&"api".into(), &"u-7".into(), &"user".into())
    );
    assert_eq!(late["answers"][0], serde_json::json!({"header": "Plan", "selected": ["Large"]}));
    let secret = events.iter().find(|e| e["question"] == "ext-secret" && e["event"] == "answered").unwrap();
    assert_eq!(secret["answers"], serde_json::json!([{"header": "Token", "secret": true}]));
    assert!(!text.contains("tok-3xT9-never-stored") && !text.contains("session:DEPLOY_TOKEN"), "{text}");
    // What the store cannot see, appended by the layers above, after the last entry.
    let posted = store.append_audit(&AuditEvent::posted("late-1", "telegram", "812")).await.expect("append");
    assert_eq!(posted.seq, entries.last().unwrap().seq + 1);
    let all = store.audit_entries(0, None, 100_000).await.expect("entries");
    let text = all.iter().map(|e| e.line.as_str()).collect::<Vec<_>>().join("\n");
    assert_eq!(askuser_store::verify(&text, false).expect("still holds").events, verified.events + 1);
    assert_eq!(
        store.audit_entries(posted.seq - 1, None, 10).await.expect("after"),
        std::slice::from_ref(&posted)
    );
    let later = posted.at.plus(Duration::from_millis(1));
    assert_eq!(store.audit_entries(0, Some(later), 10).await.expect("since"), []);
}

/// `put_reporting` and `cancel_reporting` say whether the call changed the store: only the first
/// put of a question stores it, only the first cancel of a pending one cancels it, and a cancel of
/// an answered one changes nothing.
async fn puts_and_cancels_say_what_they_changed(store: &dyn PendingStore) {
    let (first, stored) = store.put_reporting(question("report-1", 60)).await.expect("put");
    assert!(stored, "the first put stores");
    let (again, stored) = store.put_reporting(question("report-1", 60)).await.expect("put again");
    assert!(!stored, "a repeated put stores nothing");
    assert_eq!(again, first);
    assert!(matches!(
        store.put_reporting(NewQuestion::new(other_request("report-1"), Duration::from_mins(1))).await,
        Err(StoreError::IdTaken { .. })
    ));
    let (cancelled, changed) = store.cancel_reporting("report-1").await.expect("cancel");
    assert!(changed && cancelled.state() == State::Cancelled);
    let (unchanged, changed) = store.cancel_reporting("report-1").await.expect("cancel again");
    assert!(!changed, "a second cancel changes nothing");
    assert_eq!(unchanged, cancelled);
    store.put(question("report-2", 60)).await.expect("put");
    store.commit_answer("report-2", &answer_large()).await.expect("answer");
    let (answered, changed) = store.cancel_reporting("report-2").await.expect("cancel an answered one");
    assert!(!changed && answered.state() == State::Answered);
    assert!(matches!(store.cancel_reporting("report-none").await, Err(StoreError::NotFound { .. })));
}

fn question(id: &str, timeout_secs: u64) -> NewQuestion {
    NewQuestion::new(request(id), Duration::from_secs(timeout_secs))
}

async fn put_and_get(store: &dyn PendingStore, clock: &ManualClock) {
    let asked_at = clock.now_at();
    let put = store.put(question("put-1", 100).session_id("s-put")).await.expect("put");
    assert_eq!(put.id(), "put-1");
    assert_eq!(put.state(), State::Pending);
    assert_eq!(put.version(), 1);
    assert_eq!(put.session_id(), Some("s-put"));
    assert_eq!(put.tool_name(), "ask_user_question");
    assert_eq!(put.profile(), Profile::Reference);
    assert_eq!(put.request(), &request("put-1"));
    assert_eq!(put.asked_at(), asked_at);
    assert_eq!(put.expires_at(), asked_at.plus(Duration::from_secs(100)));
    assert_eq!(put.nudge_at(), asked_at.plus(Duration::from_secs(80)));
    // The stored request carries the record's deadline stamps.
    assert_eq!(put.request().deadline(), Some(&put.deadline()));
    assert_eq!(
        (put.closed_at(), put.answered_at(), put.answered_by(), put.response()),
        (None, None, None, None)
    );
    assert_eq!(put.result().expect("renders"), None);
    assert_eq!(store.get("put-1").await.expect("get").as_ref(), Some(&put));
    assert!(store.get("nobody").await.expect("get").is_none());

    // Idempotent: a retried put, later, changes nothing (not even the asking time).
    clock.advance(Duration::from_secs(5));
    let again = store.put(question("put-1", 100).session_id("s-put")).await.expect("put again");
    assert_eq!(again, put);

    // The same id for something else is refused, and the stored question stays.
    for clash in [
        NewQuestion::new(other_request("put-1"), Duration::from_secs(100)).session_id("s-put"),
        question("put-1", 100).session_id("another session"),
        question("put-1", 100).session_id("s-put").tool_name("ask_other"),
    ] {
        match store.put(clash).await {
            Err(StoreError::IdTaken { id }) => assert_eq!(id, "put-1"),
            other => panic!("expected IdTaken, got {other:?}"),
        }
    }
    assert_eq!(store.get("put-1").await.expect("get").as_ref(), Some(&put));
}

async fn first_answer_wins(store: &dyn PendingStore) {
    store.put(question("win-1", 100)).await.expect("put");
    let answered = store.commit_answer("win-1", &answer_large()).await.expect("first answer");
    assert_eq!(answered.state(), State::Answered);
    assert_eq!(answered.response(), Some(&answer_large()));
    assert_eq!(answered.answered_by(), Some(AnsweredBy::User));
    assert_eq!(answered.version(), 2);
    assert!(answered.answered_at().is_some());
    assert_eq!(
        answered.result().expect("renders").map(askuser_core::AskUserResult::into_text).as_deref(),
        Some(r#"{"Plan":["Large"],"Targets":["only the 中文 docs\nand tests"]}"#)
    );
    assert_eq!(store.get("win-1").await.expect("get").as_ref(), Some(&answered));

    // A second answer, a decline, a cancel and an expiry all leave the first answer in place.
    for second in [answer_small(), AskUserResponse::declined()] {
        match store.commit_answer("win-1", &second).await {
            Err(StoreError::Conflict { first }) => assert_eq!(*first, answered),
            other => panic!("expected a conflict, got {other:?}"),
        }
    }
    assert_eq!(store.cancel("win-1").await.expect("cancel"), answered);
    assert_eq!(store.expire("win-1").await.expect("expire"), answered);
    assert_eq!(store.get("win-1").await.expect("get").as_ref(), Some(&answered));

    match store.commit_answer("nobody", &answer_large()).await {
        Err(StoreError::NotFound { id }) => assert_eq!(id, "nobody"),
        other => panic!("expected not found, got {other:?}"),
    }
}

async fn invalid_response_writes_nothing(store: &dyn PendingStore) {
    let put = store.put(question("bad-1", 100)).await.expect("put");
    match store.commit_answer("bad-1", &misfit()).await {
        Err(error @ StoreError::InvalidResponse { .. }) => {
            assert_eq!(error.to_string(), r#"the response does not fit question "bad-1""#);
            let source = std::error::Error::source(&error).expect("has a source").to_string();
            assert!(source.contains("Medium"), "{source}");
        }
        other => panic!("expected an invalid response, got {other:?}"),
    }
    assert_eq!(store.get("bad-1").await.expect("get").as_ref(), Some(&put));
    // …and the question can still be answered properly.
    assert_eq!(store.commit_answer("bad-1", &answer_small()).await.expect("answer").state(), State::Answered);
}

async fn declined(store: &dyn PendingStore) {
    store.put(question("decline-1", 100)).await.expect("put");
    let declined = store.commit_answer("decline-1", &AskUserResponse::declined()).await.expect("decline");
    assert_eq!(declined.state(), State::Declined);
    assert_eq!(
        declined.result().expect("renders").map(askuser_core::AskUserResult::into_text).as_deref(),
        Some(DECLINED)
    );
    match store.commit_answer("decline-1", &answer_large()).await {
        Err(StoreError::Conflict { first }) => assert_eq!(first.state(), State::Declined),
        other => panic!("expected a conflict, got {other:?}"),
    }
}

async fn cancel(store: &dyn PendingStore) {
    store.put(question("cancel-1", 100)).await.expect("put");
    let cancelled = store.cancel("cancel-1").await.expect("cancel");
    assert_eq!((cancelled.state(), cancelled.version()), (State::Cancelled, 2));
    assert!(cancelled.closed_at().is_some() && cancelled.answered_at().is_none());
    assert_eq!(cancelled.result().expect("renders"), None);
    assert_eq!(store.cancel("cancel-1").await.expect("cancel again"), cancelled);
    match store.commit_answer("cancel-1", &answer_large()).await {
        Err(StoreError::Closed { record }) => assert_eq!(*record, cancelled),
        other => panic!("expected closed, got {other:?}"),
    }
    assert!(matches!(store.cancel("nobody").await, Err(StoreError::NotFound { .. })));
}

async fn expire(store: &dyn PendingStore) {
    store.put(question("expire-1", 100)).await.expect("put");
    let expired = store.expire("expire-1").await.expect("expire");
    assert_eq!(expired.state(), State::TimedOut);
    assert_eq!(
        expired.result().expect("renders").map(askuser_core::AskUserResult::into_text).as_deref(),
        Some(TIMED_OUT)
    );
    match store.commit_answer("expire-1", &answer_large()).await {
        Err(StoreError::Closed { record }) => assert_eq!(record.state(), State::TimedOut),
        other => panic!("expected closed, got {other:?}"),
    }
    assert!(matches!(store.expire("nobody").await, Err(StoreError::NotFound { .. })));
}

/// Closes whatever earlier steps left pending, so a sweep below only meets its own questions.
async fn settle_everything(store: &dyn PendingStore) {
    let page = store.list(&ListQuery::new().state(State::Pending).limit(1000)).await.expect("list");
    for record in page.records {
        store.cancel(record.id()).await.expect("cancel");
    }
}

async fn sweep_expires_only_overdue(store: &dyn PendingStore, clock: &ManualClock) {
    settle_everything(store).await;
    store.put(question("sweep-short", 10)).await.expect("put");
    store.put(question("sweep-long", 60)).await.expect("put");
    clock.advance(Duration::from_secs(9));
    assert_eq!(store.expire_due(100).await.expect("sweep"), []);
    clock.advance(Duration::from_secs(1));
    let swept = store.expire_due(100).await.expect("sweep");
    assert_eq!(
        swept.iter().map(|r| (r.id(), r.state())).collect::<Vec<_>>(),
        [("sweep-short", State::TimedOut)]
    );
    assert_eq!(store.get("sweep-short").await.expect("get").map(|r| r.state()), Some(State::TimedOut));
    // A second sweep finds nothing more; the other question is still answerable.
    assert_eq!(store.expire_due(100).await.expect("sweep"), []);
    assert_eq!(
        store.commit_answer("sweep-long", &answer_large()).await.expect("answer").state(),
        State::Answered
    );
}

async fn sweep_in_batches(store: &dyn PendingStore, clock: &ManualClock) {
    for i in 0..5 {
        store.put(question(&format!("batch-{i}"), 1)).await.expect("put");
    }
    clock.advance(Duration::from_secs(2));
    let first = store.expire_due(3).await.expect("sweep");
    let second = store.expire_due(3).await.expect("sweep");
    assert_eq!((first.len(), second.len()), (3, 2));
    let mut ids: Vec<_> = first.iter().chain(&second).map(|r| r.id().to_owned()).collect();
    ids.sort();
    assert_eq!(ids, ["batch-0", "batch-1", "batch-2", "batch-3", "batch-4"]);
}

/// A question put with a lease is withdrawn (`cancelled`) by the sweep once its lease lapses
/// unrenewed, and an answer to it is then refused; a renewed one stays answerable; a deferred one
/// (no lease) keeps its deadline.
async fn leases(store: &dyn PendingStore, clock: &ManualClock) {
    settle_everything(store).await;
    let lease = Duration::from_secs(30);
    let held = store.put(question("lease-dead", 600).lease(lease)).await.expect("put");
    assert_eq!(held.lease_until(), Some(clock.now_at().plus(lease)));
    assert!(!held.is_deferred());
    store.put(question("lease-live", 600).lease(lease)).await.expect("put");
    let deferred = store.put(question("lease-deferred", 600)).await.expect("put");
    assert!(deferred.is_deferred());
    assert_eq!(deferred.lease_until(), None);
    assert!(!store.renew("lease-deferred", lease).await.expect("renew"), "a deferred question has no lease");
    assert!(!store.renew("lease-unknown", lease).await.expect("renew"));

    clock.advance(Duration::from_secs(20));
    assert!(store.renew("lease-live", lease).await.expect("renew"));
    // A shorter renewal never shortens the lease.
    assert!(store.renew("lease-live", Duration::from_secs(1)).await.expect("renew"));
    assert_eq!(
        store.get("lease-live").await.expect("get").and_then(|r| r.lease_until()),
        Some(clock.now_at().plus(lease))
    );
    clock.advance(Duration::from_secs(11));
    assert_eq!(store.expire_due(100).await.expect("sweep"), [], "a lapsed lease is no timeout");
    let swept = store.withdraw_lapsed(100).await.expect("sweep");
    assert_eq!(
        swept.iter().map(|r| (r.id(), r.state())).collect::<Vec<_>>(),
        [("lease-dead", State::Cancelled)]
    );
    match store.commit_answer("lease-dead", &answer_large()).await {
        Err(StoreError::Closed { record }) => assert_eq!(record.state(), State::Cancelled),
        other => panic!("expected closed, got {other:?}"),
    }
    assert!(!store.renew("lease-dead", lease).await.expect("renew"), "a withdrawn question is not renewed");
    // Long after any lease would have lapsed, the deferred question still waits for its deadline.
    clock.advance(Duration::from_mins(2));
    let swept = store.withdraw_lapsed(100).await.expect("sweep");
    assert_eq!(
        swept.iter().map(|r| (r.id(), r.state())).collect::<Vec<_>>(),
        [("lease-live", State::Cancelled)]
    );
    assert_eq!(
        store.commit_answer("lease-deferred", &answer_large()).await.expect("answer").state(),
        State::Answered
    );
}

async fn overdue_is_never_answerable(store: &dyn PendingStore, clock: &ManualClock) {
    store.put(question("late-1", 10)).await.expect("put");
    clock.advance(Duration::from_secs(10));
    // No sweep has run: the answer finds it overdue, and marks it timed out itself.
    match store.commit_answer("late-1", &answer_large()).await {
        Err(StoreError::Closed { record }) => {
            assert_eq!((record.state(), record.response()), (State::TimedOut, None));
        }
        other => panic!("expected closed, got {other:?}"),
    }
    assert_eq!(store.get("late-1").await.expect("get").map(|r| r.state()), Some(State::TimedOut));
}

/// A request's own deadline stamps (the capability stamps every request it builds) are the
/// record's; a request stamped without a timeout keeps its `asked_at`, and the put's timeout sets
/// the rest.
async fn request_stamps_win(store: &dyn PendingStore, clock: &ManualClock) {
    let asked = clock.now_at().minus(Duration::from_secs(30));
    let stamped = Deadline::new(asked, Some(Duration::from_mins(10)));
    let put = store
        .put(NewQuestion::new(request("stamp-1").with_deadline(stamped), Duration::from_secs(5)))
        .await
        .expect("put");
    assert_eq!(put.deadline(), stamped);
    assert_eq!(store.get("stamp-1").await.expect("get").map(|r| r.deadline()), Some(stamped));

    let asked_only = Deadline::new(asked, None);
    let put = store
        .put(NewQuestion::new(request("stamp-2").with_deadline(asked_only), Duration::from_secs(100)))
        .await
        .expect("put");
    let expected = Deadline::new(asked, Some(Duration::from_secs(100)));
    assert_eq!(put.deadline(), expected);
    let reread = store.get("stamp-2").await.expect("get").expect("exists");
    assert_eq!((reread.deadline(), reread.request().deadline()), (expected, Some(&expected)));
}

/// An extended-profile request stamped as the capability stamps it (the model's `timeout_seconds`
/// sets the expiry), put under `id`.
async fn put_extended(store: &dyn PendingStore, id: &str, args: &str) -> PendingRecord {
    let questions = Validator::new().with_profile(Profile::Extended).validate_json(args).expect("valid");
    let asked = Timestamp::from_unix_millis(1_900_000_000_000);
    let request = AskUserRequest::with_id(id, questions)
        .with_deadline(Deadline::new(asked, Some(Duration::from_mins(2))));
    let put = store.put(NewQuestion::new(request, Duration::from_mins(5))).await.expect("put");
    assert_eq!((put.profile(), put.expires_at()), (Profile::Extended, asked.plus(Duration::from_mins(2))));
    assert_eq!(store.get(id).await.expect("get").map(|r| r.profile()), Some(Profile::Extended));
    put
}

/// Answers `id` with `answer`, reads it back, and returns the record's JSON after checking that
/// the response round-tripped and the record still says `extended`.
async fn answer_extended(store: &dyn PendingStore, id: &str, answer: &AskUserResponse) -> serde_json::Value {
    let answered = store.commit_answer(id, answer).await.expect("answer");
    let reread = store.get(id).await.expect("get").expect("exists");
    assert_eq!(reread, answered);
    assert_eq!(reread.response(), Some(answer));
    assert_eq!(reread.profile(), Profile::Extended);
    assert_eq!(reread.request().questions().timeout_seconds(), Some(120));
    let json = serde_json::to_value(&reread).expect("serialises");
    assert_eq!(json["profile"], "extended");
    assert_eq!(json["request"]["profile"], "extended");
    json
}

/// Extended-profile requests stored, answered and read back: a text question's answer and a
/// secret question's `session:NAME` reference round-trip, the records say `extended`, and a
/// secret's value is never stored: an answer carrying it is refused and nothing is written.
async fn extended_round_trip(store: &dyn PendingStore) {
    const VALUE: &str = "tok-3xT9-never-stored";
    put_extended(
        store,
        "ext-text",
        r#"{"questions":[{"kind":"text","id":"name","header":"Name",
            "question":"What should the release be called?"}],"timeout_seconds":120}"#,
    )
    .await;
    let json = answer_extended(
        store,
        "ext-text",
        &AskUserResponse::answered(vec![AskUserAnswer::custom("Name", "Aurora 2 — 中文").with_id("name")]),
    )
    .await;
    assert_eq!(json["response"]["answers"][0]["custom_answer"], "Aurora 2 — 中文");

    let put = put_extended(
        store,
        "ext-secret",
        r#"{"questions":[{"kind":"secret","header":"Token","question":"Your deploy token?",
            "secret_name":"DEPLOY_TOKEN","purpose":"To push the release to the registry."}],
            "timeout_seconds":120}"#,
    )
    .await;
    // The value where the reference belongs is refused, and nothing is written.
    let leaky = AskUserResponse::answered(vec![AskUserAnswer::custom("Token", VALUE)]);
    assert!(matches!(
        store.commit_answer("ext-secret", &leaky).await,
        Err(StoreError::InvalidResponse { .. })
    ));
    assert_eq!(store.get("ext-secret").await.expect("get").as_ref(), Some(&put));
    let json = answer_extended(
        store,
        "ext-secret",
        &AskUserResponse::answered(vec![AskUserAnswer::secret("Token", "DEPLOY_TOKEN")]),
    )
    .await;
    assert_eq!(json["response"]["answers"][0]["secret_ref"], "session:DEPLOY_TOKEN");
    assert!(!json.to_string().contains(VALUE), "{json}");
    // The tool result the run resumes with carries the reference.
    let record = store.get("ext-secret").await.expect("get").expect("exists");
    let result = record.result().expect("renders").expect("answered").into_text();
    assert!(result.contains("session:DEPLOY_TOKEN") && !result.contains(VALUE), "{result}");
}

async fn watch(store: &Arc<dyn PendingStore>) {
    // Resolves at once for a settled record; fails for a missing one.
    assert_eq!(store.watch("win-1").await.expect("watch").state(), State::Answered);
    assert!(matches!(store.watch("nobody").await, Err(StoreError::NotFound { .. })));

    // Woken by an answer, a cancel and an expiry.
    for (id, close) in [("watch-answer", 0), ("watch-cancel", 1), ("watch-expire", 2)] {
        store.put(question(id, 100)).await.expect("put");
        let watcher = tokio::spawn({
            let store = Arc::clone(store);
            async move { store.watch(id).await }
        });
        // Let the watcher subscribe and find the record pending first.
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!watcher.is_finished(), "{id}: the watch resolved while the record was pending");
        let closed = match close {
            0 => store.commit_answer(id, &answer_large()).await,
            1 => store.cancel(id).await,
            _ => store.expire(id).await,
        }
        .expect("close");
        let woken = tokio::time::timeout(super::support::PATIENCE, watcher)
            .await
            .expect("the watcher woke")
            .expect("no panic")
            .expect("watch");
        assert_eq!(woken, closed, "{id}");
    }

    // Many watchers of one record all wake; a dropped watch changes nothing.
    store.put(question("watch-many", 100)).await.expect("put");
    let watchers: Vec<_> = (0..8)
        .map(|_| {
            let store = Arc::clone(store);
            tokio::spawn(async move { store.watch("watch-many").await })
        })
        .collect();
    let dropped = tokio::time::timeout(Duration::from_millis(10), store.watch("watch-many")).await;
    assert!(dropped.is_err(), "still pending");
    assert_eq!(store.get("watch-many").await.expect("get").map(|r| r.state()), Some(State::Pending));
    store.commit_answer("watch-many", &answer_small()).await.expect("answer");
    for watcher in watchers {
        let woken = tokio::time::timeout(PATIENCE, watcher).await.expect("woke").expect("no panic");
        assert_eq!(woken.expect("watch").state(), State::Answered);
    }
}

/// The next change of a record whose id starts with `prefix` (other tests' changes are skipped).
pub(crate) async fn next_change(changes: &mut Changes, prefix: &str) -> (String, State, i64) {
    tokio::time::timeout(PATIENCE, async {
        loop {
            let change = changes.next().await.expect("no change missed");
            if change.id.starts_with(prefix) {
                return (change.id, change.state, change.version);
            }
        }
    })
    .await
    .expect("the change arrived")
}

/// Every change reaches a subscriber taken before it, with its state and version: a question
/// asked, answered, declined, cancelled, expired, swept. A repeated put and a change that
/// changes nothing tell nothing.
async fn change_feed(store: &dyn PendingStore, clock: &ManualClock) {
    let mut changes = store.changes();
    let expect = |id: &str, state: State, version: i64| (id.to_owned(), state, version);
    store.put(question("feed-1", 100).session_id("s-feed")).await.expect("put");
    assert_eq!(next_change(&mut changes, "feed-").await, expect("feed-1", State::Pending, 1));
    store.put(question("feed-1", 100).session_id("s-feed")).await.expect("repeated put");
    store.commit_answer("feed-1", &answer_large()).await.expect("answer");
    assert_eq!(next_change(&mut changes, "feed-").await, expect("feed-1", State::Answered, 2));
    store.cancel("feed-1").await.expect("cancel of a settled record");
    for (id, close) in [("feed-2", 0), ("feed-3", 1), ("feed-4", 2)] {
        store.put(question(id, 100)).await.expect("put");
        assert_eq!(next_change(&mut changes, "feed-").await, expect(id, State::Pending, 1));
        let state = match close {
            0 => store.commit_answer(id, &AskUserResponse::declined()).await.map(|_| State::Declined),
            1 => store.cancel(id).await.map(|_| State::Cancelled),
            _ => store.expire(id).await.map(|_| State::TimedOut),
        }
        .expect("close");
        assert_eq!(next_change(&mut changes, "feed-").await, expect(id, state, 2));
    }
    settle_everything(store).await;
    store.put(question("feed-5", 1)).await.expect("put");
    assert_eq!(next_change(&mut changes, "feed-").await, expect("feed-5", State::Pending, 1));
    clock.advance(Duration::from_secs(2));
    assert_eq!(store.expire_due(10).await.expect("sweep").len(), 1);
    assert_eq!(next_change(&mut changes, "feed-").await, expect("feed-5", State::TimedOut, 2));
    // The session travels with the change.
    store.put(question("feed-6", 100).session_id("s-feed")).await.expect("put");
    let change = loop {
        let change = changes.next().await.expect("no change missed");
        if change.id == "feed-6" {
            break change;
        }
    };
    assert_eq!(change.session_id.as_deref(), Some("s-feed"));
    store.cancel("feed-6").await.expect("cancel");
}

async fn list_pages(store: &dyn PendingStore, clock: &ManualClock) {
    // Five questions in one session, two asked at the same millisecond (ordered by id then), one
    // in another session.
    for (id, session, tick) in [
        ("l-a", "s-list", true),
        ("l-c", "s-list", false),
        ("l-b", "s-list", true),
        ("l-d", "s-list", true),
        ("l-x", "s-else", true),
        ("l-e", "s-list", true),
    ] {
        store.put(question(id, 1000).session_id(session)).await.expect("put");
        if tick {
            clock.advance(Duration::from_millis(1));
        }
    }
    let mut seen = Vec::new();
    let mut query = ListQuery::new().session_id("s-list").limit(2);
    let mut pages = 0;
    loop {
        let page = store.list(&query).await.expect("list");
        pages += 1;
        assert!(page.records.len() <= 2);
        seen.extend(page.records.iter().map(|r| r.id().to_owned()));
        match page.next {
            Some(cursor) => {
                // The cursor survives a trip through text (a URL).
                let cursor = cursor.to_string().parse().expect("cursor parses");
                query = ListQuery::new().session_id("s-list").limit(2).after(cursor);
            }
            None => break,
        }
    }
    assert_eq!(seen, ["l-a", "l-b", "l-c", "l-d", "l-e"]);
    assert_eq!(pages, 3);

    // Newest first, through the same cursors.
    let mut seen = Vec::new();
    let mut query = ListQuery::new().session_id("s-list").limit(2).newest_first();
    loop {
        let page = store.list(&query).await.expect("list");
        seen.extend(page.records.iter().map(|r| r.id().to_owned()));
        match page.next {
            Some(cursor) => {
                let cursor = cursor.to_string().parse().expect("cursor parses");
                query = ListQuery::new().session_id("s-list").limit(2).newest_first().after(cursor);
            }
            None => break,
        }
    }
    assert_eq!(seen, ["l-e", "l-d", "l-c", "l-b", "l-a"]);

    store.commit_answer("l-c", &answer_small()).await.expect("answer");
    let pending =
        store.list(&ListQuery::new().session_id("s-list").state(State::Pending)).await.expect("list");
    let ids: Vec<_> = pending.records.iter().map(askuser_store::PendingRecord::id).collect();
    assert_eq!(ids, ["l-a", "l-b", "l-d", "l-e"]);
    assert!(pending.next.is_none());
    let answered =
        store.list(&ListQuery::new().session_id("s-list").state(State::Answered)).await.expect("list");
    assert_eq!(answered.records.iter().map(askuser_store::PendingRecord::id).collect::<Vec<_>>(), ["l-c"]);
    let elsewhere = store.list(&ListQuery::new().session_id("s-else")).await.expect("list");
    assert_eq!(elsewhere.records.iter().map(askuser_store::PendingRecord::id).collect::<Vec<_>>(), ["l-x"]);
    // Without a session filter every record is listed, each once.
    let all = store.list(&ListQuery::new().limit(1000)).await.expect("list");
    let mut ids: Vec<_> = all.records.iter().map(askuser_store::PendingRecord::id).collect();
    let count = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), count);
    assert!(ids.contains(&"put-1") && ids.contains(&"l-x"));
}

/// What a store keeps of a response is exactly what `check_response` accepted (secret values
/// never get there: responses carry references only), and a record serialises to its documented
/// shape.
async fn stored_json(store: &dyn PendingStore) {
    store.put(question("json-1", 100).session_id("s-json")).await.expect("put");
    let answered = store.commit_answer("json-1", &answer_large()).await.expect("answer");
    let reread = store.get("json-1").await.expect("get").expect("exists");
    assert_eq!(
        serde_json::to_string(reread.response().expect("a response")).expect("serialises"),
        serde_json::to_string(&answer_large()).expect("serialises")
    );
    let json = serde_json::to_value(&answered).expect("serialises");
    // Sorted: serde_json's `preserve_order` (switched on by rig-core in a workspace build) keeps
    // the field order, without it the keys come sorted.
    let mut keys: Vec<_> = json.as_object().expect("an object").keys().cloned().collect();
    keys.sort_unstable();
    let mut expected = [
        "answered_at",
        "answered_by",
        "asked_at",
        "closed_at",
        "expires_at",
        "id",
        "lease_until",
        "nudge_at",
        "profile",
        "request",
        "response",
        "session_id",
        "state",
        "tool_name",
        "version",
    ];
    expected.sort_unstable();
    assert_eq!(keys, expected);
    assert_eq!(json["state"], "answered");
    assert_eq!(json["answered_by"], "user");
    assert_eq!(json["request"]["id"], "json-1");
    assert_eq!(json["response"], serde_json::to_value(answer_large()).expect("serialises"));
    assert!(json["asked_at"].as_str().is_some_and(|t| t.ends_with('Z') && t.len() == 24), "{json}");
}

/// The asked-by label is stored with the question, read back and serialised; a record without one
/// serialises as before (no key).
async fn asked_by(store: &dyn PendingStore) {
    let label = AskedBy::new("claude-code 1.2 in ~/src/app").expect("a valid label");
    let put = store.put(question("by-1", 100).asked_by(label.clone())).await.expect("put");
    assert_eq!(put.asked_by(), Some(&label));
    let reread = store.get("by-1").await.expect("get").expect("exists");
    assert_eq!(reread.asked_by(), Some(&label));
    let json = serde_json::to_value(&reread).expect("serialises");
    assert_eq!(json["asked_by"], "claude-code 1.2 in ~/src/app");
    let answered = store.commit_answer("by-1", &answer_large()).await.expect("answer");
    assert_eq!(answered.asked_by(), Some(&label), "a settled record keeps its label");
    let listed = store.list(&ListQuery::new()).await.expect("list");
    assert!(listed.records.iter().any(|r| r.id() == "by-1" && r.asked_by() == Some(&label)));

    store.put(question("by-2", 100)).await.expect("put");
    let json = serde_json::to_value(store.get("by-2").await.expect("get").expect("exists")).expect("json");
    assert!(json.get("asked_by").is_none(), "{json}");
}

/// Each key is claimed by exactly one call: a key tied to a question only while the question is
/// there; a lapsed claim can be claimed again. Claiming changes nothing a reader of the question
/// sees, and is no change in the feed.
async fn keys_are_claimed_once(store: &dyn SharedStore, clock: &ManualClock) {
    store.put(question("notice-1", 100)).await.expect("put");
    let asked = Key::of_question("notice.asked", "notice-1");
    assert!(store.claim_once(&asked).await.expect("claim"));
    assert!(!store.claim_once(&asked).await.expect("claim"), "claimed twice");
    assert!(store.claim_once(&Key::of_question("notice.reminder", "notice-1")).await.expect("claim"));
    store.commit_answer("notice-1", &answer_large()).await.expect("answer");
    assert!(store.claim_once(&Key::of_question("notice.settled", "notice-1")).await.expect("claim"));
    assert!(!store.claim_once(&Key::of_question("notice.settled", "notice-1")).await.expect("claim"));
    assert!(!store.claim_once(&Key::of_question("notice.reminder", "notice-1")).await.expect("claim"));
    assert!(!store.claim_once(&Key::of_question("notice.asked", "no-such-question")).await.expect("claim"));
    assert_eq!(
        store.value("notice.asked", "no-such-question").await.expect("value"),
        None,
        "nothing written"
    );
    // A key tied to no question; one that lapses is free again.
    assert!(store.claim_once(&Key::new("once", "k")).await.expect("claim"));
    assert!(!store.claim_once(&Key::new("once", "k")).await.expect("claim"));
    let until = clock.now_at().plus(Duration::from_secs(5));
    assert!(store.claim_once(&Key::new("once", "lapsing").until(until)).await.expect("claim"));
    assert!(!store.claim_once(&Key::new("once", "lapsing").until(until)).await.expect("claim"));
    clock.advance(Duration::from_secs(5));
    assert!(store.claim_once(&Key::new("once", "lapsing")).await.expect("claim"), "lapsed: claimed again");
    let record = store.get("notice-1").await.expect("get").expect("exists");
    assert_eq!((record.state(), record.version()), (State::Answered, 2));
}

/// A lease is held by one holder at a time until it lapses, renewed by its holder and let go with a
/// zero ttl; values are kept per namespace and key, replaced by a set, gone after a remove, listed
/// by key; a value tied to a question the store does not have is not written.
async fn leases_and_values(store: &dyn SharedStore, clock: &ManualClock) {
    let ttl = Duration::from_secs(10);
    assert!(store.lease("channel.telegram", "a", ttl).await.unwrap(), "a free lease is taken");
    assert!(!store.lease("channel.telegram", "b", ttl).await.unwrap(), "held by a");
    assert!(store.lease("channel.slack", "b", ttl).await.unwrap(), "another name is free");
    clock.advance(Duration::from_secs(9));
    assert!(store.lease("channel.telegram", "a", ttl).await.unwrap(), "its holder renews");
    clock.advance(Duration::from_secs(9));
    assert!(!store.lease("channel.telegram", "b", ttl).await.unwrap(), "renewed: still a's");
    clock.advance(Duration::from_secs(1));
    assert!(store.lease("channel.telegram", "b", ttl).await.unwrap(), "lapsed: b takes it");
    assert!(!store.lease("channel.telegram", "a", ttl).await.unwrap(), "now b's");

    assert_eq!(store.value("channel.cursor", "telegram").await.unwrap(), None);
    store.set_value(&Key::new("channel.cursor", "telegram"), "41").await.unwrap();
    store.set_value(&Key::new("channel.cursor", "telegram"), "42").await.unwrap();
    store.set_value(&Key::new("channel.cursor", "slack"), "7").await.unwrap();
    assert_eq!(store.value("channel.cursor", "telegram").await.unwrap().as_deref(), Some("42"));
    assert_eq!(store.value("channel.cursor", "slack").await.unwrap().as_deref(), Some("7"));
    assert_eq!(store.value("other", "telegram").await.unwrap(), None, "namespaces apart");
    assert!(!store.lease("channel.telegram", "a", ttl).await.unwrap(), "a value changes no lease");

    let posts = "channel.telegram.posts";
    for id in ["q1", "q2"] {
        store.put(question(id, 100)).await.expect("put");
    }
    assert!(store.values(posts).await.unwrap().is_empty());
    store.set_value(&Key::of_question(posts, "q1"), r#"{"m":1}"#).await.unwrap();
    store.set_value(&Key::of_question(posts, "q2"), r#"{"m":2}"#).await.unwrap();
    store.set_value(&Key::of_question(posts, "q1"), r#"{"m":3}"#).await.unwrap();
    store.set_value(&Key::of_question(posts, "no-such-question"), "{}").await.unwrap();
    store.set_value(&Key::of_question("channel.slack.posts", "q1"), r#"{"ts":"1"}"#).await.unwrap();
    let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    assert_eq!(store.values(posts).await.unwrap(), [pair("q1", r#"{"m":3}"#), pair("q2", r#"{"m":2}"#)]);
    store.remove_value(posts, "q1").await.unwrap();
    store.remove_value(posts, "no-such").await.unwrap();
    assert_eq!(store.values(posts).await.unwrap(), [pair("q2", r#"{"m":2}"#)]);
    assert_eq!(store.values("channel.slack.posts").await.unwrap(), [pair("q1", r#"{"ts":"1"}"#)]);

    // A lease renewed for no time is let go: another holder takes it at once.
    assert!(!store.lease("channel.telegram", "a", Duration::ZERO).await.unwrap(), "not a's to let go");
    assert!(store.lease("channel.telegram", "b", Duration::ZERO).await.unwrap());
    assert!(store.lease("channel.telegram", "a", ttl).await.unwrap(), "let go: a takes it");
}

/// `ManualClock::now` through the `Clock` trait, without importing it at every call.
trait NowAt {
    fn now_at(&self) -> askuser_core::Timestamp;
}

impl NowAt for ManualClock {
    fn now_at(&self) -> askuser_core::Timestamp {
        askuser_store::Clock::now(self)
    }
}

/// A value that lapses (a revoked login, until its cookie expires) reads as absent from then on,
/// and a later set of a lapsing row in its namespace deletes it; other keys are untouched.
async fn values_lapse(store: &dyn SharedStore, clock: &ManualClock) {
    let now = clock.now_at();
    let revoked = |session: &str, secs: u64| {
        Key::new("login.revoked", session).until(now.plus(Duration::from_secs(secs)))
    };
    assert_eq!(store.value("login.revoked", "login-a").await.unwrap(), None);
    store.set_value(&revoked("login-a", 60), "").await.unwrap();
    assert_eq!(store.value("login.revoked", "login-a").await.unwrap().as_deref(), Some(""));
    assert_eq!(store.value("login.revoked", "login-b").await.unwrap(), None);
    clock.advance(Duration::from_secs(59));
    assert!(store.value("login.revoked", "login-a").await.unwrap().is_some(), "until it lapses");
    assert_eq!(store.values("login.revoked").await.unwrap().len(), 1);
    clock.advance(Duration::from_secs(1));
    assert_eq!(store.value("login.revoked", "login-a").await.unwrap(), None, "lapsed");
    assert!(store.values("login.revoked").await.unwrap().is_empty());
    store.set_value(&revoked("login-b", 120), "").await.unwrap();
    assert_eq!(store.values("login.revoked").await.unwrap(), [("login-b".to_owned(), String::new())]);
}

/// Every record's id and state, all pages.
async fn everything(store: &dyn PendingStore) -> Vec<(String, State)> {
    let mut all = Vec::new();
    let mut query = ListQuery::new().limit(ListQuery::MAX_LIMIT);
    loop {
        let page = store.list(&query).await.expect("list");
        all.extend(page.records.iter().map(|r| (r.id().to_owned(), r.state())));
        match page.next {
            Some(cursor) => query = ListQuery::new().limit(ListQuery::MAX_LIMIT).after(cursor),
            None => return all,
        }
    }
}

/// Retention deletes settled records closed longer ago than it keeps, in batches, and never a
/// pending one, however old; the feed goes on after it.
async fn retention(store: &dyn SharedStore, clock: &ManualClock) {
    store.put(question("keep-old", 100)).await.expect("put");
    store.commit_answer("keep-old", &answer_small()).await.expect("answer");
    assert!(store.claim_once(&Key::of_question("notice.settled", "keep-old")).await.expect("claim"));
    store.set_value(&Key::of_question("posts", "keep-old"), "old").await.expect("set");
    store.set_value(&Key::new("posts", "untied"), "stays").await.expect("set");
    store.put(question("keep-waiting", 100_000_000)).await.expect("put");
    clock.advance(Duration::from_hours(24 * 10));
    store.put(question("keep-new", 100)).await.expect("put");
    store.cancel("keep-new").await.expect("cancel");
    // The last change is a pending question's (on SQLite the newest change is always kept).
    store.put(question("keep-last", 100_000_000)).await.expect("put");

    let before = everything(store).await;
    let old = before.iter().filter(|(id, state)| *state != State::Pending && id != "keep-new").count();
    assert!(old >= 2, "{before:?}");
    let keep = Duration::from_hours(24 * 5);
    assert_eq!(store.purge(keep, 1).await.expect("purge"), 1, "a batch holds at most its limit");
    assert_eq!(store.purge(keep, 1000).await.expect("purge"), old - 1);
    assert_eq!(store.purge(keep, 1000).await.expect("purge"), 0);
    let after = everything(store).await;
    let pending_before = before.iter().filter(|(_, state)| *state == State::Pending).count();
    assert_eq!(after.iter().filter(|(_, state)| *state == State::Pending).count(), pending_before);
    assert_eq!(after.len(), pending_before + 1, "every pending record and keep-new: {after:?}");
    assert!(store.get("keep-old").await.expect("get").is_none());
    assert_eq!(store.values("posts").await.expect("values"), [("untied".to_owned(), "stays".to_owned())]);
    assert_eq!(
        store.value("notice.settled", "keep-old").await.expect("value"),
        None,
        "gone with its question"
    );
    assert_eq!(store.get("keep-new").await.expect("get").map(|r| r.state()), Some(State::Cancelled));
    assert_eq!(store.get("keep-waiting").await.expect("get").map(|r| r.state()), Some(State::Pending));

    // The change feed goes on: the next change is seen.
    let mut changes = store.changes();
    store.put(question("keep-after", 100)).await.expect("put");
    assert_eq!(next_change(&mut changes, "keep-after").await, ("keep-after".to_owned(), State::Pending, 1));
}

/// `here` remembers the pending records it put or read, and answers them without reading them
/// first; `there` is another process on the same database. A remembered record gone stale is
/// never trusted: answered or withdrawn there, the answer here is refused with what happened
/// there; purged there and asked again under its id with other questions, the answer here is
/// checked against the new question (a misfit refused, a fit committed); a lease renewed there
/// since shows in the answered record.
pub(crate) async fn remembered_records_go_stale_safely(
    here: &dyn PendingStore,
    there: &dyn PendingStore,
    clock: &ManualClock,
) {
    use crate::support::{answer_large, answer_small, other_request, request};
    let minute = Duration::from_mins(1);
    // Answered there first: the first answer stands.
    here.put(NewQuestion::new(request("stale-1"), minute)).await.expect("put");
    there.commit_answer("stale-1", &answer_small()).await.expect("answer there");
    match here.commit_answer("stale-1", &answer_large()).await {
        Err(StoreError::Conflict { first }) => assert_eq!(first.response(), Some(&answer_small())),
        other => panic!("{other:?}"),
    }
    // Withdrawn there: closed here too.
    let read = here.put(NewQuestion::new(request("stale-2"), minute)).await.expect("put");
    assert_eq!(here.get("stale-2").await.expect("get").as_ref(), Some(&read));
    there.cancel("stale-2").await.expect("cancel there");
    assert!(matches!(here.commit_answer("stale-2", &answer_large()).await, Err(StoreError::Closed { .. })));
    // Settled, purged and asked again there with other questions under the same id.
    here.put(NewQuestion::new(request("stale-3"), minute)).await.expect("put");
    there.cancel("stale-3").await.expect("cancel there");
    clock.advance(Duration::from_hours(48));
    // A row that keeps the newest change number (SQLite) may stay: make one after it.
    there.put(NewQuestion::new(request("stale-later"), minute)).await.expect("put");
    there.cancel("stale-later").await.expect("cancel");
    there.purge(Duration::from_hours(24), 100).await.expect("purge");
    assert!(there.get("stale-3").await.expect("get").is_none(), "purged");
    here.put(NewQuestion::new(request("stale-4"), minute)).await.expect("put");
    there.put(NewQuestion::new(other_request("stale-3"), minute)).await.expect("asked again");
    assert!(
        matches!(
            here.commit_answer("stale-3", &answer_large()).await,
            Err(StoreError::InvalidResponse { .. })
        ),
        "checked against the question asked again, not the remembered one"
    );
    let fits =
        askuser_core::AskUserResponse::answered(vec![askuser_core::AskUserAnswer::picked("Other", ["B"])]);
    let answered = here.commit_answer("stale-3", &fits).await.expect("answer the new question");
    assert_eq!(answered.request(), there.get("stale-3").await.expect("get").expect("row").request());
    // A lease renewed there since it was remembered here.
    here.put(NewQuestion::new(request("stale-5"), minute).lease(Duration::from_secs(30))).await.expect("put");
    clock.advance(Duration::from_secs(10));
    assert!(there.renew("stale-5", Duration::from_secs(30)).await.expect("renew"));
    let answered = here.commit_answer("stale-5", &answer_large()).await.expect("answer");
    assert_eq!(answered, there.get("stale-5").await.expect("get").expect("row"), "as the row reads");
    assert_eq!(
        here.commit_answer("stale-4", &answer_small()).await.expect("answer").state(),
        State::Answered
    );
}
