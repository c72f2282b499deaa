//! Fixtures: requests and responses, temporary SQLite files, PostgreSQL schemas.

use std::path::PathBuf;
use std::time::Duration;

use askuser_core::Timestamp;
use askuser_core::{AskUserAnswer, AskUserRequest, AskUserResponse, Questions};
use askuser_store::{ManualClock, PostgresStore};

/// An upper bound for anything a test awaits, so a bug fails the test instead of hanging it.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

pub(crate) const ARGS: &str = r#"{"questions":[
    {"header":"Plan","question":"Which plan?","options":[{"label":"Small"},{"label":"Large"}]},
    {"header":"Targets","question":"Which files?","multi_select":true,
     "options":[{"label":"api.py"},{"label":"db.py"},{"label":"ui.py"}]}]}"#;

pub(crate) fn request(id: &str) -> AskUserRequest {
    AskUserRequest::with_id(id, Questions::from_json(ARGS).expect("fixture is valid"))
}

/// A request with other questions, to collide with [`request`] under one id.
pub(crate) fn other_request(id: &str) -> AskUserRequest {
    let args = r#"{"questions":[{"header":"Other","question":"?","options":[{"label":"A"},{"label":"B"}]}]}"#;
    AskUserRequest::with_id(id, Questions::from_json(args).expect("fixture is valid"))
}

pub(crate) fn answer_large() -> AskUserResponse {
    AskUserResponse::answered(vec![
        AskUserAnswer::picked("Plan", ["Large"]),
        AskUserAnswer::custom("Targets", "only the 中文 docs\nand tests"),
    ])
}

pub(crate) fn answer_small() -> AskUserResponse {
    AskUserResponse::answered(vec![
        AskUserAnswer::picked("Plan", ["Small"]),
        AskUserAnswer::picked("Targets", ["db.py", "api.py"]),
    ])
}

/// Does not fit [`request`]: an option it does not offer.
pub(crate) fn misfit() -> AskUserResponse {
    AskUserResponse::answered(vec![
        AskUserAnswer::picked("Plan", ["Medium"]),
        AskUserAnswer::picked("Targets", ["db.py"]),
    ])
}

pub(crate) fn clock() -> ManualClock {
    ManualClock::new(Timestamp::from_unix_millis(1_800_000_000_000))
}

/// A directory removed when dropped.
pub(crate) fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("askuser-store-test").tempdir().expect("temp dir")
}

pub(crate) fn sqlite_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("pending.db")
}

pub(crate) use askuser_testkit::{postgres_url, unique_schema};

/// Drops a test's schema (with its tables) once the test is done with it.
pub(crate) async fn drop_schema(store: &PostgresStore, schema: &str) {
    let statement = format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE");
    sqlx::query(sqlx::AssertSqlSafe(statement))
        .execute(store.pool())
        .await
        .expect("dropping the test schema");
    store.close().await;
}
