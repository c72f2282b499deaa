//! The SQLite backend passes the shared suite, and keeps its file's promises.

use std::sync::Arc;

use std::time::Duration;

use askuser_store::{NewQuestion, PendingStore, SqliteStore, State};

use crate::support::{answer_large, clock, sqlite_path, temp_dir};

#[tokio::test]
async fn conformance() {
    let dir = temp_dir();
    let clock = clock();
    let store =
        SqliteStore::builder(sqlite_path(&dir)).clock(Arc::new(clock.clone())).open().await.expect("open");
    crate::suite::conformance(store, clock).await;
}

/// Reopening a file keeps its records and does not migrate twice; the file is in WAL mode.
#[tokio::test]
async fn reopen_keeps_records() {
    let dir = temp_dir();
    let path = sqlite_path(&dir);
    let store = SqliteStore::open(&path).await.expect("open");
    store
        .put(askuser_store::NewQuestion::new(
            crate::support::request("keep-1"),
            std::time::Duration::from_mins(1),
        ))
        .await
        .expect("put");
    store.commit_answer("keep-1", &answer_large()).await.expect("answer");
    store.close().await;
    drop(store);

    let store = SqliteStore::open(&path).await.expect("reopen");
    let record = store.get("keep-1").await.expect("get").expect("kept");
    assert_eq!((record.state(), record.response()), (State::Answered, Some(&answer_large())));
    let mode: String =
        sqlx::query_scalar("PRAGMA journal_mode").fetch_one(store.pool()).await.expect("pragma");
    assert_eq!(mode, "wal");
}

/// Two stores opening one new file at the same moment (two processes starting together) both
/// come up: the migration race is retried, not reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_opens() {
    let dir = temp_dir();
    let path = sqlite_path(&dir);
    let (a, b) = tokio::join!(SqliteStore::open(&path), SqliteStore::open(&path));
    let (a, b) = (a.expect("first open"), b.expect("second open"));
    a.put(askuser_store::NewQuestion::new(
        crate::support::request("both-1"),
        std::time::Duration::from_mins(1),
    ))
    .await
    .expect("put");
    assert!(b.get("both-1").await.expect("get").is_some());
}

/// A row edited by hand so that its response no longer fits its request is reported, not trusted.
#[tokio::test]
async fn a_corrupt_row_is_reported() {
    let dir = temp_dir();
    let store = SqliteStore::open(sqlite_path(&dir)).await.expect("open");
    store
        .put(askuser_store::NewQuestion::new(
            crate::support::request("bad-row"),
            std::time::Duration::from_mins(1),
        ))
        .await
        .expect("put");
    store.commit_answer("bad-row", &answer_large()).await.expect("answer");
    let misfit = serde_json::to_string(&crate::support::misfit()).expect("serialises");
    sqlx::query("UPDATE askuser_pending SET response = ?1 WHERE id = 'bad-row'")
        .bind(misfit)
        .execute(store.pool())
        .await
        .expect("edit by hand");
    match store.get("bad-row").await {
        Err(askuser_store::StoreError::Corrupt { id, reason }) => {
            assert_eq!(id, "bad-row");
            assert!(reason.starts_with("response: ") && reason.contains("Medium"), "{reason}");
        }
        other => panic!("expected a corrupt record, got {other:?}"),
    }
}

/// `open(url)` picks the backend from the URL, and names what it cannot open without a password.
#[tokio::test]
async fn open_by_url() {
    let dir = temp_dir();
    let url = format!("sqlite:{}", sqlite_path(&dir).display());
    let store = askuser_store::open(&url).await.expect("sqlite: opens");
    assert!(store.get("nothing").await.expect("get").is_none());
    assert!(askuser_store::open("memory:").await.is_ok());
    match askuser_store::open("mysql://me:hunter2@db/app").await {
        Err(error @ askuser_store::StoreError::UnsupportedUrl { .. }) => {
            let message = error.to_string();
            assert!(message.contains("mysql://me:***@db/app") && !message.contains("hunter2"), "{message}");
        }
        other => panic!("expected an unsupported URL, got {other:?}"),
    }
}

/// A full database (here: the file capped at a size, as a full disk would) never acknowledges a
/// write it did not store. Every put, answer and cancel that returned `Ok` is in the file when it
/// is opened again without the cap, and every write that was not stored failed as unavailable.
#[tokio::test]
async fn a_full_database_acknowledges_only_what_it_stored() {
    use std::time::Duration;

    use askuser_store::NewQuestion;

    let dir = temp_dir();
    let path = sqlite_path(&dir);
    // Create the schema first, then reopen with a cap a few pages above its size.
    SqliteStore::open(&path).await.expect("open").close().await;
    let store = SqliteStore::builder(&path).max_size(96 * 1024).open().await.expect("open capped");
    let (mut put_ok, mut answered_ok, mut cancelled_ok, mut failed) = (Vec::new(), Vec::new(), Vec::new(), 0);
    for n in 0..2_000 {
        let id = format!("full-{n}");
        match store.put(NewQuestion::new(crate::support::request(&id), Duration::from_mins(5))).await {
            Ok(_) => put_ok.push(id.clone()),
            Err(error) => {
                assert!(error.is_unavailable(), "a failed put is reported as unavailable: {error:?}");
                failed += 1;
                continue;
            }
        }
        let written = if n % 2 == 0 {
            store.commit_answer(&id, &answer_large()).await.map(|_| answered_ok.push(id.clone()))
        } else {
            store.cancel(&id).await.map(|_| cancelled_ok.push(id.clone()))
        };
        if let Err(error) = written {
            assert!(error.is_unavailable(), "a failed write is reported as unavailable: {error:?}");
            failed += 1;
        }
        if failed > 20 {
            break;
        }
    }
    assert!(failed > 0, "the cap was reached (put {} questions)", put_ok.len());
    store.close().await;
    drop(store);

    let store = SqliteStore::open(&path).await.expect("reopen without the cap");
    let mut lost = 0;
    for id in &put_ok {
        if store.get(id).await.expect("get").is_none() {
            lost += 1;
        }
    }
    for (ids, state) in [(&answered_ok, State::Answered), (&cancelled_ok, State::Cancelled)] {
        for id in ids {
            if store.get(id).await.expect("get").map(|r| r.state()) != Some(state) {
                lost += 1;
            }
        }
    }
    assert_eq!(lost, 0, "acknowledged but not stored, of {} puts", put_ok.len());
}

/// A new store's file, `-wal` and `-shm` are mode 0600 whatever the umask; an existing one that
/// other users could read is made 0600 when opened.
#[cfg(unix)]
#[tokio::test]
async fn store_files_are_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).expect("metadata").permissions().mode() & 0o777;
    let dir = temp_dir();
    let path = sqlite_path(&dir);
    let store = SqliteStore::open(&path).await.expect("open");
    store
        .put(askuser_store::NewQuestion::new(
            crate::support::request("private-1"),
            std::time::Duration::from_mins(1),
        ))
        .await
        .expect("put");
    let wal = path.with_extension("db-wal");
    let shm = path.with_extension("db-shm");
    assert_eq!((mode(&path), mode(&wal), mode(&shm)), (0o600, 0o600, 0o600));
    store.close().await;
    drop(store);

    for file in [&path, &wal, &shm] {
        if file.exists() {
            std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        }
    }
    let store = SqliteStore::open(&path).await.expect("reopen");
    assert!(store.get("private-1").await.expect("get").is_some());
    assert_eq!(mode(&path), 0o600);
    for file in [&wal, &shm] {
        if file.exists() {
            assert_eq!(mode(file), 0o600, "{}", file.display());
        }
    }
}

/// Guards retention against reusing change numbers: SQLite numbers the next change one past the
/// highest in the table, so a purge that deleted the newest change's row would hand its number
/// out again, below what other processes' followers had read, and they would never see that
/// change. With every record settled and old, the purge keeps exactly the newest one, and a
/// second store on the file (another process) still sees the next question asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purge_never_hands_out_a_change_number_again() {
    let dir = temp_dir();
    let path = sqlite_path(&dir);
    let clock = clock();
    let store = SqliteStore::builder(&path).clock(Arc::new(clock.clone())).open().await.expect("open");
    let other = SqliteStore::open(&path).await.expect("open");
    let mut changes = other.changes();
    for id in ["old-1", "old-2", "old-3"] {
        store.put(NewQuestion::new(crate::support::request(id), Duration::from_mins(1))).await.expect("put");
        store.cancel(id).await.expect("cancel");
    }
    // The other store's follower has read every change so far (a late read sees only a row's
    // latest state, so old-3's pending may not show).
    while crate::suite::next_change(&mut changes, "old-3").await.1 != State::Cancelled {}
    clock.advance(Duration::from_hours(48));
    assert_eq!(store.purge(Duration::from_hours(24), 100).await.expect("purge"), 2);
    assert!(store.get("old-3").await.expect("get").is_some(), "the newest change's row is kept");
    store.put(NewQuestion::new(crate::support::request("new-1"), Duration::from_mins(1))).await.expect("put");
    assert_eq!(
        crate::suite::next_change(&mut changes, "new-").await,
        ("new-1".to_owned(), State::Pending, 1)
    );
    clock.advance(Duration::from_hours(48));
    store.cancel("new-1").await.expect("cancel");
    assert_eq!(store.purge(Duration::from_hours(24), 100).await.expect("purge"), 1, "old-3 goes now");
}

#[tokio::test]
async fn remembered_records_go_stale_safely() {
    let dir = temp_dir();
    let path = sqlite_path(&dir);
    let clock = clock();
    let here = SqliteStore::builder(&path).clock(Arc::new(clock.clone())).open().await.expect("open");
    let there = SqliteStore::builder(&path).clock(Arc::new(clock.clone())).open().await.expect("open");
    crate::suite::remembered_records_go_stale_safely(&here, &there, &clock).await;
}

/// Issue 36.7: a `pending.db`, `-wal` or `-shm` that another user planted in a shared directory
/// was used silently. Refused, as the API token file is: another user's file, a symbolic link.
#[cfg(unix)]
#[tokio::test]
async fn another_users_store_file_or_a_link_is_refused() {
    let dir = temp_dir();
    let path = sqlite_path(&dir);
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::os::unix::fs::symlink(dir.path().join("elsewhere"), &wal).expect("symlink");
    let refused = SqliteStore::open(&path).await.expect_err("a -wal link");
    assert!(
        refused.to_string().ends_with("-wal is a symbolic link: refused (name the file it points to)"),
        "{refused}"
    );
    std::fs::remove_file(&wal).expect("rm");

    let link = dir.path().join("link.db");
    std::os::unix::fs::symlink(&path, &link).expect("symlink");
    let refused = SqliteStore::open(&link).await.expect_err("a link");
    assert!(refused.to_string().contains("link.db is a symbolic link"), "{refused}");

    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIPPED another user's store file: giving a file away needs root");
        return;
    }
    let planted = dir.path().join("planted.db");
    SqliteStore::open(&planted).await.expect("open").close().await;
    rustix::fs::chown(&planted, Some(rustix::process::Uid::from_raw(65534)), None).expect("chown");
    let refused = SqliteStore::open(&planted).await.expect_err("another user's file");
    assert!(refused.to_string().contains("is owned by user 65534 and you are user 0: refused"), "{refused}");
    assert!(matches!(refused, askuser_store::StoreError::Unsafe { .. }), "{refused:?}");
}

/// The follower looks at the file for other processes' changes only while someone listens: idle
/// with no subscriber and no watcher, it polls every 1 ms while a subscription is held, stops once
/// it is dropped; and a change another process commits while it is idle still wakes a watcher that
/// comes afterwards (it reads on from where it was).
#[tokio::test]
async fn the_follower_polls_only_while_someone_listens() {
    let dir = temp_dir();
    let path = sqlite_path(&dir);
    let open = || SqliteStore::builder(&path).poll_interval(Duration::from_millis(1)).open();
    let here = open().await.expect("open");
    let there = open().await.expect("open another process's store");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(here.follower_polls(), 0, "nobody listens: no polling");

    let changes = here.changes();
    let polled = tokio::time::timeout(Duration::from_secs(10), async {
        while here.follower_polls() < 5 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(polled.is_ok(), "a subscriber makes it poll");
    drop(changes);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let settled = here.follower_polls();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(here.follower_polls() <= settled + 1, "the subscriber gone: polling stops");

    // Asked and answered by the other process while this one's follower is idle; a watch here
    // after the answer sees it at once; one asked here and answered there wakes its watcher.
    there
        .put(NewQuestion::new(crate::support::request("idle-1"), Duration::from_mins(1)))
        .await
        .expect("put");
    here.put(NewQuestion::new(crate::support::request("idle-2"), Duration::from_mins(1))).await.expect("put");
    let watcher = tokio::spawn({
        let here = here.clone();
        async move { here.watch("idle-2").await }
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    there.commit_answer("idle-2", &answer_large()).await.expect("answer there");
    let woken =
        tokio::time::timeout(Duration::from_secs(10), watcher).await.expect("woken").expect("no panic");
    assert_eq!(woken.expect("watch").state(), State::Answered);
}
