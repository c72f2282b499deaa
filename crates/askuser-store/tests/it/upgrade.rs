//! A store written by the version before the coordination table (askuser-store 0.4, migrations
//! 0001–0012) opens with this one and loses nothing: migration 0013 moves its notices, revoked
//! logins, chat channels' leases and cursors, and their posts into `askuser_coordination`, and the
//! questions read as before. The fixtures in `tests/data` were written by that version's own code
//! (commit f09759d): two questions (one pending, one answered), notices claimed, a login revoked,
//! Telegram held by `replica-a` with cursor `12345`, and a posted message each in Telegram and Slack.

use std::time::Duration;

use askuser_store::{Key, NewQuestion, PendingStore as _, PostgresStore, SharedStore, SqliteStore, State};

use crate::support::{answer_large, drop_schema, postgres_url, request, temp_dir, unique_schema};

fn data(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

/// Everything the fixture holds, read through this version's API; then the new rows behave.
async fn nothing_lost(store: &dyn SharedStore) {
    let pending = store.get("upgrade-pending").await.expect("get").expect("the pending question");
    assert_eq!((pending.state(), pending.session_id()), (State::Pending, Some("s1")));
    let answered = store.get("upgrade-answered").await.expect("get").expect("the answered question");
    assert_eq!(answered.state(), State::Answered);
    assert_eq!(answered.response(), Some(&answer_large()));

    let claimed = |namespace: &'static str, id: &'static str| async move {
        !store.claim_once(&Key::of_question(namespace, id)).await.expect("claim")
    };
    assert!(claimed("notice.asked", "upgrade-pending").await, "the asked notice was sent before");
    assert!(claimed("notice.asked", "upgrade-answered").await);
    assert!(claimed("notice.settled", "upgrade-answered").await);
    assert!(claimed("notice.secrets-taken", "upgrade-answered").await, "secrets handed over before");
    assert!(!claimed("notice.reminder", "upgrade-pending").await, "never sent: claimable now");

    assert_eq!(store.value("login.revoked", "login-session-1").await.expect("value").as_deref(), Some(""));
    assert!(
        !store.lease("channel.telegram", "replica-b", Duration::from_secs(30)).await.expect("lease"),
        "replica-a's"
    );
    assert!(store.lease("channel.telegram", "replica-a", Duration::from_secs(30)).await.expect("lease"));
    assert_eq!(store.value("channel.cursor", "telegram").await.expect("value").as_deref(), Some("12345"));
    assert_eq!(
        store.values("channel.cursor").await.expect("values").len(),
        1,
        "the health probe's row is not a cursor"
    );
    assert_eq!(
        store.values("channel.telegram.posts").await.expect("values"),
        [("upgrade-pending".to_owned(), r#"{"chat":1,"message":10}"#.to_owned())]
    );
    assert_eq!(
        store.values("channel.slack.posts").await.expect("values"),
        [("upgrade-answered".to_owned(), r#"{"ts":"1.2"}"#.to_owned())]
    );
    // The moved posts go with their questions: purging the answered one takes its Slack post. (A
    // question asked now holds the newest change, which SQLite's purge always keeps.)
    store.put(NewQuestion::new(request("after-upgrade"), Duration::from_mins(10))).await.expect("put");
    assert_eq!(store.purge(Duration::ZERO, 10).await.expect("purge"), 1);
    assert!(store.values("channel.slack.posts").await.expect("values").is_empty());
    assert_eq!(store.values("channel.telegram.posts").await.expect("values").len(), 1);
}

#[tokio::test]
async fn a_sqlite_store_of_the_previous_version_upgrades() {
    let dir = temp_dir();
    let path = dir.path().join("pending.db");
    std::fs::copy(data("store-0.4.db"), &path).expect("copy the fixture");
    let store = SqliteStore::open(&path).await.expect("the old store opens and migrates");
    nothing_lost(&store).await;
    store.close().await;
    // Reopened: migrated once, the same.
    let store = SqliteStore::open(&path).await.expect("reopens");
    assert!(store.get("upgrade-pending").await.expect("get").is_some());
    store.close().await;
}

#[tokio::test]
async fn a_postgres_store_of_the_previous_version_upgrades() {
    let Some(url) = postgres_url("upgrade::a_postgres_store_of_the_previous_version_upgrades") else {
        return;
    };
    let schema = unique_schema();
    let dump = std::fs::read_to_string(data("store-0.4-postgres.sql")).expect("the fixture");
    let dump = dump.replace("askuser_upgrade_fixture", &schema);
    let mut restore = <sqlx::PgConnection as sqlx::Connection>::connect(&url).await.expect("connect");
    sqlx::raw_sql(sqlx::AssertSqlSafe(dump)).execute(&mut restore).await.expect("restore the old store");
    sqlx::Connection::close(restore).await.expect("close");
    let store =
        PostgresStore::builder(&url).schema(&schema).open().await.expect("the old store opens and migrates");
    nothing_lost(&store).await;
    drop_schema(&store, &schema).await;
}
