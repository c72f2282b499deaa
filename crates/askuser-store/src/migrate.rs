//! The store's schema migrations, recorded in a table of their own (`askuser_migrations`), so
//! that a host keeping its own sqlx migrations in the same database (in sqlx's default
//! `_sqlx_migrations`) and askuser never see each other's: either's migrator refuses to run
//! when its table lists a migration it does not know.
//!
//! Stores created before that table existed recorded their migrations in `_sqlx_migrations`;
//! opening one moves those rows (only those whose version and checksum are askuser's own) into
//! `askuser_migrations`, once, under the same lock every opener takes.

use sqlx::migrate::{AppliedMigration, Migrate as _, Migrator};

/// The table askuser's migrations are recorded in.
pub(crate) const TABLE: &str = "askuser_migrations";

/// Where sqlx records migrations by default, and where earlier versions of askuser did.
const LEGACY: &str = "_sqlx_migrations";

/// `migrator` recording into [`TABLE`].
pub(crate) fn own_table(mut migrator: Migrator) -> Migrator {
    migrator.dangerous_set_table_name(TABLE);
    migrator
}

/// The versions among `applied` (rows of the legacy table) that are `migrator`'s own migrations,
/// checksum and all: the ones to move. A host's migration that happens to share a version
/// number has another checksum and stays where it is.
fn ours(migrator: &Migrator, applied: &[AppliedMigration]) -> Vec<i64> {
    applied
        .iter()
        .filter(|row| migrator.iter().any(|m| m.version == row.version && *m.checksum == *row.checksum))
        .map(|row| row.version)
        .collect()
}

fn moves(versions: &[i64]) -> (String, String) {
    let list = versions.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
    (
        format!("INSERT INTO {TABLE} SELECT * FROM {LEGACY} WHERE version IN ({list})"),
        format!("DELETE FROM {LEGACY} WHERE version IN ({list})"),
    )
}

/// Inside the transaction `$tx`: moves `$migrator`'s own rows from the legacy table into
/// [`TABLE`] (created first). A macro, as the two backends' transactions are different types.
macro_rules! move_ours {
    ($tx:ident, $migrator:expr) => {
        let applied = $tx.list_applied_migrations(LEGACY).await?;
        let versions = ours($migrator, &applied);
        if !versions.is_empty() {
            $tx.ensure_migrations_table(TABLE).await?;
            let (insert, delete) = moves(&versions);
            sqlx::query(sqlx::AssertSqlSafe(insert)).execute(&mut *$tx).await?;
            sqlx::query(sqlx::AssertSqlSafe(delete)).execute(&mut *$tx).await?;
        }
    };
}

/// Moves askuser's rows out of SQLite's legacy table, if it has any and [`TABLE`] is new, then
/// runs the migrations. Callers retry on "database is locked" (two first opens at once).
#[cfg(feature = "sqlite")]
pub(crate) async fn sqlite(pool: &sqlx::SqlitePool, migrator: &Migrator) -> Result<(), crate::StoreError> {
    let exists = |name: &'static str| {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1")
            .bind(name)
            .fetch_one(pool)
    };
    if exists(TABLE).await? == 0 && exists(LEGACY).await? > 0 {
        let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
        move_ours!(tx, migrator);
        tx.commit().await?;
    }
    migrator.run(pool).await?;
    Ok(())
}

/// The same for PostgreSQL (in the connection's schema); concurrent opens serialise on a
/// transaction-scoped advisory lock, then on the migrator's own.
#[cfg(feature = "postgres")]
pub(crate) async fn postgres(pool: &sqlx::PgPool, migrator: &Migrator) -> Result<(), crate::StoreError> {
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('askuser_migrations'))").execute(&mut *tx).await?;
    let (ours_exists, legacy_exists): (bool, bool) =
        sqlx::query_as("SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL")
            .bind(TABLE)
            .bind(LEGACY)
            .fetch_one(&mut *tx)
            .await?;
    if !ours_exists && legacy_exists {
        move_ours!(tx, migrator);
    }
    tx.commit().await?;
    migrator.run(pool).await?;
    Ok(())
}
