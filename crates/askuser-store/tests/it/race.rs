//! Races, with real concurrency: a sweep racing answers (exactly one wins each question), two
//! sweepers racing each other (never a double expiry), two answers racing (the first stays); and
//! the `Sweeper` task.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use askuser_store::{
    Key, ManualClock, MemoryStore, NewQuestion, PendingStore, PostgresStore, SharedStore, SqliteStore, State,
    StoreError, Sweeper,
};

use crate::support::{
    PATIENCE, answer_large, answer_small, clock, drop_schema, postgres_url, request, sqlite_path, temp_dir,
    unique_schema,
};

const QUESTIONS: usize = 60;

/// `answerer` reads a clock before the deadlines, `sweepers` one after them: each question is
/// answerable by the one and overdue for the others, so the first to commit decides.
async fn sweep_races_answers(
    answerer: Arc<dyn PendingStore>,
    sweepers: [Arc<dyn PendingStore>; 2],
    prefix: &str,
) {
    let ids: Vec<String> = (0..QUESTIONS).map(|i| format!("{prefix}-{i}")).collect();
    for id in &ids {
        answerer.put(NewQuestion::new(request(id), Duration::from_mins(10))).await.expect("put");
    }
    let answers = tokio::spawn({
        let ids = ids.clone();
        async move {
            let mut won = Vec::new();
            for id in &ids {
                match answerer.commit_answer(id, &answer_large()).await {
                    Ok(record) => {
                        assert_eq!(record.state(), State::Answered);
                        won.push(id.clone());
                    }
                    Err(StoreError::Closed { record }) => assert_eq!(record.state(), State::TimedOut),
                    Err(other) => panic!("{id}: {other:?}"),
                }
                tokio::task::yield_now().await;
            }
            won
        }
    });
    let sweeps = sweepers.map(|sweeper| {
        tokio::spawn(async move {
            let mut swept = Vec::new();
            loop {
                let batch = sweeper.expire_due(3).await.expect("sweep");
                if batch.is_empty() {
                    return swept;
                }
                swept.extend(batch.into_iter().map(|r| {
                    assert_eq!(r.state(), State::TimedOut);
                    r.id().to_owned()
                }));
            }
        })
    });
    let won_by_answers = tokio::time::timeout(PATIENCE, answers).await.expect("in time").expect("no panic");
    let mut swept = Vec::new();
    for sweep in sweeps {
        swept.extend(tokio::time::timeout(PATIENCE, sweep).await.expect("in time").expect("no panic"));
    }
    let swept_set: HashSet<&String> = swept.iter().collect();
    assert_eq!(swept_set.len(), swept.len(), "a question was expired twice: {swept:?}");
    for id in &ids {
        let won_by_answer = won_by_answers.contains(id);
        assert_ne!(
            won_by_answer,
            swept_set.contains(id),
            "{id}: exactly one of the answer and the sweep wins"
        );
    }
    assert_eq!(won_by_answers.len() + swept.len(), QUESTIONS);
}

/// Two answers to each question at once: one wins, the other gets a conflict holding it.
async fn answers_race(a: Arc<dyn PendingStore>, b: Arc<dyn PendingStore>, prefix: &str) {
    for i in 0..QUESTIONS / 3 {
        let id = format!("{prefix}-{i}");
        a.put(NewQuestion::new(request(&id), Duration::from_mins(10))).await.expect("put");
        let (first, second) = tokio::join!(
            tokio::spawn({
                let (a, id) = (Arc::clone(&a), id.clone());
                async move { a.commit_answer(&id, &answer_large()).await }
            }),
            tokio::spawn({
                let (b, id) = (Arc::clone(&b), id.clone());
                async move { b.commit_answer(&id, &answer_small()).await }
            }),
        );
        let (first, second) = (first.expect("no panic"), second.expect("no panic"));
        let (winner, loser) = match (first, second) {
            (Ok(w), Err(l)) | (Err(l), Ok(w)) => (w, l),
            other => panic!("{id}: expected one winner, got {other:?}"),
        };
        match loser {
            StoreError::Conflict { first } => assert_eq!(*first, winner),
            other => panic!("{id}: expected a conflict, got {other:?}"),
        }
        assert_eq!(a.get(&id).await.expect("get").as_ref(), Some(&winner));
    }
}

/// Two stores (two replicas) claim every key of every question at once, and take the same lease
/// at once: exactly one claims each key, and one holds each lease.
async fn claims_race(a: Arc<dyn SharedStore>, b: Arc<dyn SharedStore>, prefix: &str) {
    for i in 0..QUESTIONS / 3 {
        let id = format!("{prefix}-{i}");
        a.put(NewQuestion::new(request(&id), Duration::from_mins(10))).await.expect("put");
        for namespace in ["notice.asked", "notice.reminder", "notice.settled"] {
            let claim = |store: &Arc<dyn SharedStore>| {
                let (store, key) = (Arc::clone(store), Key::of_question(namespace, &id));
                tokio::spawn(async move { store.claim_once(&key).await.expect("claim") })
            };
            let (first, second) = tokio::join!(claim(&a), claim(&b));
            assert!(first.expect("no panic") ^ second.expect("no panic"), "{id} {namespace}: not one claim");
        }
        let lease = |store: &Arc<dyn SharedStore>, holder: &'static str| {
            let (store, name) = (Arc::clone(store), format!("lease-{id}"));
            tokio::spawn(
                async move { store.lease(&name, holder, Duration::from_mins(1)).await.expect("lease") },
            )
        };
        let (first, second) = tokio::join!(lease(&a, "a"), lease(&b, "b"));
        assert!(first.expect("no panic") ^ second.expect("no panic"), "{id}: not one holder");
    }
}

/// After the races above, every change's event is in the audit log, once, on one unbroken chain,
/// whichever replica appended it.
async fn the_audit_chain_holds(store: &dyn SharedStore) {
    let entries = store.audit_entries(0, None, 100_000).await.expect("entries");
    let text = entries.iter().map(|e| e.line.as_str()).collect::<Vec<_>>().join("\n");
    let verified = askuser_store::verify(&text, false).expect("one unbroken chain");
    // The sweep race: each question asked and settled; the claims race: asked; the answers
    // race: asked and answered.
    let expected = 2 * QUESTIONS + QUESTIONS / 3 + 2 * (QUESTIONS / 3);
    assert_eq!(verified.events, u64::try_from(expected).unwrap(), "{text}");
}

fn late(clock: &ManualClock) -> ManualClock {
    let late = ManualClock::new(askuser_store::Clock::now(clock));
    late.advance(Duration::from_hours(1));
    late
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_races() {
    let dir = temp_dir();
    let path = sqlite_path(&dir);
    let early = clock();
    let open = |clock: ManualClock| SqliteStore::builder(&path).clock(Arc::new(clock)).open();
    let answerer: Arc<dyn SharedStore> = Arc::new(open(early.clone()).await.expect("open"));
    let sweepers: [Arc<dyn PendingStore>; 2] = [
        Arc::new(open(late(&early)).await.expect("open")),
        Arc::new(open(late(&early)).await.expect("open")),
    ];
    sweep_races_answers(Arc::clone(&answerer) as Arc<dyn PendingStore>, sweepers, "sweep").await;
    let other: Arc<dyn SharedStore> = Arc::new(open(early.clone()).await.expect("open"));
    claims_race(Arc::clone(&answerer), Arc::clone(&other), "claims").await;
    answers_race(Arc::clone(&answerer) as Arc<dyn PendingStore>, other, "answers").await;
    the_audit_chain_holds(&*answerer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_races() {
    let Some(url) = postgres_url("race::postgres_races") else { return };
    let schema = unique_schema();
    let early = clock();
    let open =
        |clock: ManualClock| PostgresStore::builder(&url).schema(&schema).clock(Arc::new(clock)).open();
    let first = open(early.clone()).await.expect("open");
    let answerer: Arc<dyn SharedStore> = Arc::new(first.clone());
    let sweepers: [Arc<dyn PendingStore>; 2] = [
        Arc::new(open(late(&early)).await.expect("open")),
        Arc::new(open(late(&early)).await.expect("open")),
    ];
    sweep_races_answers(Arc::clone(&answerer) as Arc<dyn PendingStore>, sweepers, "sweep").await;
    let other: Arc<dyn SharedStore> = Arc::new(open(early.clone()).await.expect("open"));
    claims_race(Arc::clone(&answerer), Arc::clone(&other), "claims").await;
    answers_race(Arc::clone(&answerer) as Arc<dyn PendingStore>, other, "answers").await;
    the_audit_chain_holds(&*answerer).await;
    drop_schema(&first, &schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_races() {
    let store = MemoryStore::with_clock(Arc::new(clock()));
    answers_race(Arc::new(store.clone()), Arc::new(store), "answers").await;
}

/// The sweeper task expires an overdue question on its own and wakes the question's watcher.
#[tokio::test(start_paused = true)]
async fn sweeper_task_expires_and_wakes() {
    let clock = clock();
    let store = Arc::new(MemoryStore::with_clock(Arc::new(clock.clone())));
    store.put(NewQuestion::new(request("overdue"), Duration::from_secs(5))).await.expect("put");
    store.put(NewQuestion::new(request("later"), Duration::from_secs(500))).await.expect("put");
    let sweeper =
        Sweeper::new(Arc::clone(&store) as Arc<dyn PendingStore>).interval(Duration::from_secs(1)).spawn();
    let watcher = tokio::spawn({
        let store = Arc::clone(&store);
        async move { store.watch("overdue").await }
    });
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(!watcher.is_finished(), "not overdue yet");
    clock.advance(Duration::from_secs(5));
    let woken =
        tokio::time::timeout(PATIENCE, watcher).await.expect("woken").expect("no panic").expect("watch");
    assert_eq!(woken.state(), State::TimedOut);
    assert_eq!(store.get("later").await.expect("get").map(|r| r.state()), Some(State::Pending));
    let stats = sweeper.stats();
    assert_eq!((stats.expired, stats.failures), (1, 0));
    assert!(stats.sweeps >= 4, "{stats:?}");
    sweeper.stop();
}
