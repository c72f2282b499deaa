//! askuser's migrations live in a table of their own (`askuser_migrations`): a host that keeps its
//! own sqlx migrations in the same database (sqlx's default `_sqlx_migrations`) and the store
//! never refuse each other's, and a store created before that table moves its rows there.

use std::borrow::Cow;
use std::str::FromStr as _;
use std::time::Duration;

use askuser_store::{NewQuestion, PendingStore, PostgresStore, SqliteStore};
use sqlx::migrate::{Migration, MigrationType, Migrator};

use crate::support::{drop_schema, postgres_url, request, sqlite_path, temp_dir, unique_schema};

/// A host's own migrations, `count` of them (1, 2, …), as a host's `sqlx::migrate!` would be.
///
/// Without sqlx's database-wide advisory lock: a run that fails (as the test expects one to) leaves
/// that lock held by its connection, and the other tests' stores could not migrate until it closed.
fn host_migrator(count: i64) -> Migrator {
    let mut migrator = Migrator::with_migrations(
        (1..=count)
            .map(|v| {
                let sql = format!("CREATE TABLE host_table_{v} (id BIGINT PRIMARY KEY)");
                Migration::new(
                    v,
                    Cow::Owned(format!("host {v}")),
                    MigrationType::Simple,
                    sqlx::SqlSafeStr::into_sql_str(sqlx::AssertSqlSafe(sql)),
                    false,
                )
            })
            .collect(),
    );
    migrator.set_locking(false);
    migrator
}

/// The versions of askuser's own migrations for `backend` (`sqlite` or `postgres`), as the
/// migrations folder numbers them.
fn ours(backend: &str) -> Vec<i64> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations").join(backend);
    let mut versions: Vec<i64> = std::fs::read_dir(&dir)
        .expect("the migrations folder")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.split('_').next()?.parse().ok()
        })
        .collect();
    versions.sort_unstable();
    assert!(versions.starts_with(&[1, 2]), "{versions:?}");
    versions
}

async fn versions<'e, E>(executor: E, table: &str) -> Vec<i64>
where
    E: sqlx::Executor<'e>,
    i64: sqlx::Type<E::Database> + for<'r> sqlx::Decode<'r, E::Database>,
    for<'a> <E::Database as sqlx::Database>::Arguments: sqlx::IntoArguments<E::Database>,
    usize: sqlx::ColumnIndex<<E::Database as sqlx::Database>::Row>,
{
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT version FROM {table} ORDER BY version")))
        .fetch_all(executor)
        .await
        .expect("read a migrations table")
}

#[tokio::test]
async fn sqlite_beside_a_hosts_own_migrations() {
    let dir = temp_dir();
    let path = sqlite_path(&dir);
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&path).create_if_missing(true);
    let host = sqlx::SqlitePool::connect_with(options).await.expect("host pool");
    host_migrator(2).run(&host).await.expect("the host migrates first");
    let store = SqliteStore::open(&path).await.expect("the store opens beside them");
    store.put(NewQuestion::new(request("beside-1"), Duration::from_mins(1))).await.expect("put");
    host_migrator(3).run(&host).await.expect("the host's next migration still runs");
    store.close().await;
    SqliteStore::open(&path).await.expect("the store reopens").close().await;
    assert_eq!(
        versions(&host, "_sqlx_migrations").await,
        [1, 2, 3],
        "the host's table holds only the host's"
    );
    assert_eq!(
        versions(&host, "askuser_migrations").await,
        ours("sqlite"),
        "askuser's table holds askuser's"
    );
}

#[tokio::test]
async fn sqlite_store_from_before_its_own_table_upgrades() {
    let dir = temp_dir();
    let path = sqlite_path(&dir);
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&path).create_if_missing(true);
    let old = sqlx::SqlitePool::connect_with(options).await.expect("pool");
    // What an earlier askuser did: its first migration, recorded in sqlx's default table.
    let mut first = sqlx::migrate!("migrations/sqlite");
    first.migrations = Cow::Owned(first.migrations[..1].to_vec());
    first.run(&old).await.expect("the old layout");
    sqlx::query("INSERT INTO askuser_pending (id, tool_name, profile, request, state, asked_at, nudge_at, expires_at) \
                 VALUES ('old-1', 'ask_user_question', 'reference', ?1, 'pending', 1, 2, 9999999999999)")
        .bind(r#"{"id":"old-1","questions":[{"header":"Plan","question":"Which plan?","options":[{"label":"Small"},{"label":"Large"}],"multi_select":false}]}"#)
        .execute(&old)
        .await
        .expect("an old record");
    host_migrator(1)
        .run(&old)
        .await
        .expect_err("an old store's rows in _sqlx_migrations break a host's migrator");
    let store = SqliteStore::open(&path).await.expect("the old store opens");
    assert!(store.get("old-1").await.expect("get").is_some(), "its records are kept");
    assert_eq!(versions(&old, "_sqlx_migrations").await, Vec::<i64>::new(), "askuser's rows moved out");
    assert_eq!(versions(&old, "askuser_migrations").await, ours("sqlite"));
    host_migrator(1).run(&old).await.expect("and now a host's own migrator runs");
}

/// A pool on `schema` (created), as a host's own connection to the same database would be.
async fn pg_host_pool(url: &str, schema: &str) -> sqlx::PgPool {
    let setup = sqlx::PgPool::connect(url).await.expect("connect");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\"")))
        .execute(&setup)
        .await
        .expect("schema");
    setup.close().await;
    let options = sqlx::postgres::PgConnectOptions::from_str(url)
        .expect("url")
        .options([("search_path", format!("\"{schema}\""))]);
    sqlx::postgres::PgPoolOptions::new().max_connections(2).connect_with(options).await.expect("host pool")
}

#[tokio::test]
async fn postgres_beside_a_hosts_own_migrations() {
    let Some(url) = postgres_url("migrations::postgres_beside_a_hosts_own_migrations") else { return };
    let schema = unique_schema();
    let host = pg_host_pool(&url, &schema).await;
    host_migrator(2).run(&host).await.expect("the host migrates first");
    let store =
        PostgresStore::builder(&url).schema(&schema).open().await.expect("the store opens beside them");
    host_migrator(3).run(&host).await.expect("the host's next migration still runs");
    PostgresStore::builder(&url).schema(&schema).open().await.expect("the store reopens").close().await;
    assert_eq!(versions(&host, "_sqlx_migrations").await, [1, 2, 3]);
    assert_eq!(versions(&host, "askuser_migrations").await, ours("postgres"));
    host.close().await;
    drop_schema(&store, &schema).await;
}

#[tokio::test]
async fn postgres_store_from_before_its_own_table_upgrades() {
    let Some(url) = postgres_url("migrations::postgres_store_from_before_its_own_table_upgrades") else {
        return;
    };
    let schema = unique_schema();
    let old = pg_host_pool(&url, &schema).await;
    let mut first = sqlx::migrate!("migrations/postgres");
    first.migrations = Cow::Owned(first.migrations[..1].to_vec());
    first.run(&old).await.expect("the old layout");
    host_migrator(1)
        .run(&old)
        .await
        .expect_err("an old store's rows in _sqlx_migrations break a host's migrator");
    let store = PostgresStore::builder(&url).schema(&schema).open().await.expect("the old store opens");
    assert_eq!(versions(&old, "_sqlx_migrations").await, Vec::<i64>::new());
    assert_eq!(versions(&old, "askuser_migrations").await, ours("postgres"));
    host_migrator(1).run(&old).await.expect("and now a host's own migrator runs");
    old.close().await;
    drop_schema(&store, &schema).await;
}
