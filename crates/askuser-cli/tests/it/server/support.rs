//! Temporary directories, the binary as processes, and reading what they print.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, ChildStderr, Command};

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_askuser");

pub(crate) const ARGS: &str = r#"{"questions":[{"header":"Plan","question":"Which plan?",
    "options":[{"label":"Small"},{"label":"Large"}]},
    {"header":"Extras","question":"Which extras?","multi_select":true,
    "options":[{"label":"Backups"},{"label":"Support"}]}]}"#;

pub(crate) use askuser_testkit::TempDir;

/// Reads `stderr` lines until one starts with `prefix`; returns the rest of that line.
pub(crate) async fn line_after(stderr: &mut BufReader<ChildStderr>, prefix: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        let read = tokio::time::timeout(Duration::from_secs(30), stderr.read_line(&mut line)).await;
        let n = read.expect("timed out reading stderr").unwrap();
        assert!(n > 0, "stderr ended before {prefix:?}");
        if let Some(rest) = line.trim_end().strip_prefix(prefix) {
            return rest.to_owned();
        }
    }
}

/// `askuser serve` on loopback with a SQLite store in `dir`, and `extra` options.
pub(crate) fn serve(dir: &Path, extra: &[&str]) -> Child {
    serve_on(&format!("sqlite:{}", dir.join("pending.db").display()), extra)
}

/// `askuser serve` on loopback with `store` and `extra` options: no `ASKUSER_TOKEN`,
/// stderr piped, killed when dropped.
pub(crate) fn serve_on(store: &str, extra: &[&str]) -> Child {
    serve_command(store, extra).spawn().unwrap()
}

/// The command [`serve_on`] spawns, to be given more (an environment) first.
pub(crate) fn serve_command(store: &str, extra: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(["serve", "--bind", "127.0.0.1:0", "--store", store])
        .args(extra)
        .env_remove("ASKUSER_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// `askuser ask --server URL`, to be given its other arguments: no `ASKUSER_TOKEN`, stdin
/// null (set another before spawning), stdout and stderr piped, killed when dropped.
pub(crate) fn ask(url: &str) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(["ask", "--server", url])
        .env_remove("ASKUSER_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// Writes a token file as `askuser serve` would: mode 0600 (one that others could read is refused).
pub(crate) fn write_private(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}

pub(crate) fn field<'a>(html: &'a str, name: &str) -> &'a str {
    let marker = format!(r#"name="{name}" value=""#);
    let start = html.find(&marker).unwrap_or_else(|| panic!("no {name} in {html}")) + marker.len();
    &html[start..start + html[start..].find('"').unwrap()]
}

/// A schema of its own on the test PostgreSQL (`ASKUSER_TEST_POSTGRES_URL`), for `serve --store`:
/// `None`, saying `SKIPPED {what}`, without one (a failure under `CI=true`).
pub(crate) struct PostgresSchema {
    pub(crate) store: askuser_store::PostgresStore,
    pub(crate) schema: String,
    /// The test server's URL, as given (`askuser pending --schema` takes the schema apart).
    pub(crate) base_url: String,
    /// The URL that puts a server in the schema.
    pub(crate) url: String,
}

impl PostgresSchema {
    pub(crate) async fn open(name: &str, what: &str) -> Option<Self> {
        let url = askuser_testkit::postgres_url(what)?;
        let schema = format!("askuser_cli_{name}_{}", std::process::id());
        let store = askuser_store::PostgresStore::builder(&url).schema(&schema).open().await.unwrap();
        let separator = if url.contains('?') { '&' } else { '?' };
        let in_schema = format!("{url}{separator}options=-c%20search_path%3D{schema}");
        Some(Self { store, schema, base_url: url, url: in_schema })
    }

    /// Drops the schema and closes the store.
    pub(crate) async fn drop_schema(self) {
        let statement = format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.schema);
        sqlx::query(sqlx::AssertSqlSafe(statement)).execute(self.store.pool()).await.unwrap();
        self.store.close().await;
    }
}

/// `GET url` with the API token `token`: the reply's JSON.
pub(crate) async fn get_json(url: &str, token: &str) -> serde_json::Value {
    reqwest::Client::new().get(url).bearer_auth(token).send().await.unwrap().json().await.unwrap()
}
