//! `askuser pending`: several processes on one store (`askuser pending` as the other processes):
//! one waits, another answers; an answering process killed with SIGKILL right after its answer
//! returned loses nothing. This process reads the same store through askuser-store.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use askuser_core::{AskUserAnswer, AskUserRequest, AskUserResponse, Questions};
use askuser_store::{Changes, ListQuery, NewQuestion, PendingStore, SqliteStore, State};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

use crate::server::support::{PostgresSchema, TempDir};

/// An upper bound for anything a test awaits, so a bug fails the test instead of hanging it.
const PATIENCE: Duration = Duration::from_secs(20);

const ARGS: &str = r#"{"questions":[
    {"header":"Plan","question":"Which plan?","options":[{"label":"Small"},{"label":"Large"}]},
    {"header":"Targets","question":"Which files?","multi_select":true,
     "options":[{"label":"api.py"},{"label":"db.py"},{"label":"ui.py"}]}]}"#;

fn request(id: &str) -> AskUserRequest {
    AskUserRequest::with_id(id, Questions::from_json(ARGS).expect("fixture is valid"))
}

fn answer_large() -> AskUserResponse {
    AskUserResponse::answered(vec![
        AskUserAnswer::picked("Plan", ["Large"]),
        AskUserAnswer::custom("Targets", "only the 中文 docs\nand tests"),
    ])
}

fn sqlite_path(dir: &TempDir) -> PathBuf {
    dir.0.join("pending.db")
}

/// The next change of a record whose id starts with `prefix`, with its state and version.
async fn next_change(changes: &mut Changes, prefix: &str) -> (String, State, i64) {
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

/// How to reach the store from another process.
struct Target {
    args: Vec<String>,
}

impl Target {
    fn sqlite(path: &Path) -> Self {
        Self { args: vec!["--store".to_owned(), format!("sqlite:{}", path.display())] }
    }

    fn postgres(url: &str, schema: &str) -> Self {
        Self { args: vec!["--store".to_owned(), url.to_owned(), "--schema".to_owned(), schema.to_owned()] }
    }

    /// Starts `askuser pending … COMMAND ARGS` with `stdin` written to it.
    async fn spawn(&self, command: &[&str], stdin: &str) -> Child {
        let mut child = Command::new(env!("CARGO_BIN_EXE_askuser"))
            .arg("pending")
            .args(&self.args)
            .args(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn askuser pending");
        let mut input = child.stdin.take().expect("piped stdin");
        input.write_all(stdin.as_bytes()).await.expect("write stdin");
        drop(input);
        child
    }
}

/// Waits for a child and returns its stdout, failing with its stderr when it failed.
async fn output(child: Child) -> String {
    let out = tokio::time::timeout(PATIENCE, child.wait_with_output())
        .await
        .expect("finished in time")
        .expect("ran");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "askuser pending failed ({}): {stderr}", out.status);
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn record_json(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not a record ({e}): {stdout}"))
}

fn response_text() -> String {
    serde_json::to_string(&answer_large()).expect("serialises")
}

/// Process 2 asks through a `StoreAnswerer` and waits; process 3 answers; process 2 prints the tool
/// result. This process (1) only finds the id in between.
async fn ask_in_one_answer_in_another(store: &dyn PendingStore, target: &Target) {
    let asker = target.spawn(&["ask", "--session", "procs", "--timeout", "60"], ARGS).await;
    let id = tokio::time::timeout(PATIENCE, async {
        loop {
            let page = store.list(&ListQuery::new().session_id("procs")).await.expect("list");
            if let Some(record) = page.records.first() {
                return record.id().to_owned();
            }
            // Polling another process's progress: there is no event to await across processes.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the asker put its question");
    let answered = record_json(&output(target.spawn(&["answer", &id], &response_text()).await).await);
    assert_eq!(answered["state"], "answered");
    assert_eq!(
        output(asker).await.trim_end(),
        r#"{"Plan":["Large"],"Targets":["only the 中文 docs\nand tests"]}"#
    );
}

/// Process 3 waits; process 2 answers and is killed with SIGKILL right after printing the
/// committed record; the answer is in the store and process 3 gets it.
async fn kill_the_answerer(store: &dyn PendingStore, target: &Target) {
    store.put(NewQuestion::new(request("kill-1"), Duration::from_mins(1))).await.expect("put");
    let mut waiter = target.spawn(&["wait", "kill-1"], "").await;
    let mut waiting = BufReader::new(waiter.stderr.take().expect("piped stderr")).lines();
    let said = tokio::time::timeout(PATIENCE, waiting.next_line()).await.expect("in time").expect("read");
    assert_eq!(said.as_deref(), Some("waiting for kill-1"), "the waiter is waiting before the answer");
    let mut answerer = target.spawn(&["answer", "kill-1", "--hold"], &response_text()).await;
    let mut lines = BufReader::new(answerer.stdout.take().expect("piped stdout")).lines();
    let line =
        tokio::time::timeout(PATIENCE, lines.next_line()).await.expect("answered in time").expect("read");
    let line = line.unwrap_or_else(|| panic!("the answerer printed nothing"));
    assert_eq!(record_json(&line)["state"], "answered");
    answerer.start_kill().expect("SIGKILL");
    let status = answerer.wait().await.expect("reaped");
    assert!(!status.success(), "killed, not exited: {status}");

    let record = store.get("kill-1").await.expect("get").expect("exists");
    assert_eq!((record.state(), record.response()), (State::Answered, Some(&answer_large())));
    let from_waiter = record_json(&output(waiter).await);
    assert_eq!(from_waiter["state"], "answered");
    assert_eq!(from_waiter["response"], serde_json::to_value(answer_large()).expect("serialises"));
    // A deferred call resumes from the record in yet another process, with the exact tool result.
    assert_eq!(
        output(target.spawn(&["result", "kill-1"], "").await).await.trim_end(),
        record.result().expect("renders").expect("settled").text()
    );
    let declined = serde_json::to_string(&AskUserResponse::declined()).expect("serialises");
    let refused = target.spawn(&["answer", "kill-1"], &declined).await.wait_with_output().await.expect("ran");
    assert_eq!(refused.status.code(), Some(1), "a second answer is refused");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("already answered"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_processes() {
    let dir = TempDir::new("pending-sqlite-processes");
    let path = sqlite_path(&dir);
    let store = SqliteStore::open(&path).await.expect("open");
    let target = Target::sqlite(&path);
    ask_in_one_answer_in_another(&store, &target).await;
    kill_the_answerer(&store, &target).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_processes() {
    let Some(postgres) = PostgresSchema::open("processes", "pending::postgres_processes").await else {
        return;
    };
    let target = Target::postgres(&postgres.base_url, &postgres.schema);
    ask_in_one_answer_in_another(&postgres.store, &target).await;
    kill_the_answerer(&postgres.store, &target).await;
    postgres.drop_schema().await;
}

/// The disk fills up under a writing process (its file-size limit, `ulimit -f`, stands in for a
/// full disk: writes past it fail with `EFBIG`, as they would with `ENOSPC`, and need no root).
/// Every put, answer and cancel that process acknowledged is in the file afterwards; every one it
/// did not store failed with an error that says so (exit 1), none exited 0.
#[tokio::test]
async fn a_full_disk_loses_no_acknowledged_write() {
    let dir = TempDir::new("pending-a-full-disk-loses-no-acknowledged-write");
    let path = sqlite_path(&dir);
    let store = SqliteStore::open(&path).await.expect("open");
    // Large questions fill the 300 KiB quickly: four of about 900 bytes each.
    let big = format!(
        r#"{{"questions":[{}]}}"#,
        (0..4)
            .map(|n| format!(
                r#"{{"header":"H{n}","question":"Q {q}","options":[{{"label":"A","description":"{d}"}},{{"label":"B","description":"{d}"}}]}}"#,
                q = "x".repeat(450),
                d = "d".repeat(190)
            ))
            .collect::<Vec<_>>()
            .join(",")
    );
    let answer = r#"{"answers":[{"header":"H0","selected":["A"]},{"header":"H1","selected":["B"]},{"header":"H2","selected":["A"]},{"header":"H3","selected":["A"]}]}"#;
    let limited = |command: &[&str], stdin: &str| {
        let mut child = Command::new("bash");
        // SIGXFSZ ignored, so that a write past the limit fails instead of killing the process.
        child
            .arg("-c")
            .arg(r#"trap '' XFSZ; ulimit -f 300; exec "$@""#)
            .arg("limited")
            .arg(env!("CARGO_BIN_EXE_askuser"))
            .arg("pending")
            .arg("--store")
            .arg(format!("sqlite:{}", path.display()))
            .args(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let stdin = stdin.to_owned();
        async move {
            let mut child = child.spawn().expect("spawn bash");
            let mut input = child.stdin.take().expect("piped stdin");
            input.write_all(stdin.as_bytes()).await.expect("write stdin");
            drop(input);
            let out = tokio::time::timeout(PATIENCE, child.wait_with_output())
                .await
                .expect("in time")
                .expect("ran");
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            match out.status.code() {
                Some(0) => true,
                Some(1) => {
                    assert!(stderr.contains("error"), "a failed write says why: {stderr}");
                    false
                }
                _ => panic!("askuser pending ended with {}: {stderr}", out.status),
            }
        }
    };
    let (mut acknowledged, mut refused) = (Vec::new(), 0);
    for n in 0..120 {
        let id = format!("disk-{n}");
        if !limited(&["put", "--id", &id, "--timeout", "600"], &big).await {
            refused += 1;
            continue;
        }
        acknowledged.push((id.clone(), State::Pending));
        let (command, state) =
            if n % 2 == 0 { ("answer", State::Answered) } else { ("cancel", State::Cancelled) };
        if limited(&[command, &id], answer).await {
            acknowledged.last_mut().expect("just pushed").1 = state;
        } else {
            refused += 1;
        }
    }
    assert!(refused > 0, "the disk filled up ({} writes acknowledged)", acknowledged.len());
    let mut lost = 0;
    for (id, state) in &acknowledged {
        if store.get(id).await.expect("get").map(|r| r.state()) != Some(*state) {
            lost += 1;
        }
    }
    assert_eq!(lost, 0, "acknowledged but not stored, of {} acknowledged writes", acknowledged.len());
}

/// Changes made by other processes reach this process's change feed: a question put by one,
/// answered by another, cancelled by a third.
async fn another_process_changes_reach_the_feed(store: &dyn PendingStore, target: &Target) {
    let mut changes = store.changes();
    output(target.spawn(&["put", "--id", "feed-p1", "--session", "feed"], ARGS).await).await;
    assert_eq!(next_change(&mut changes, "feed-p").await, ("feed-p1".to_owned(), State::Pending, 1));
    output(target.spawn(&["answer", "feed-p1"], &response_text()).await).await;
    assert_eq!(next_change(&mut changes, "feed-p").await, ("feed-p1".to_owned(), State::Answered, 2));
    output(target.spawn(&["put", "--id", "feed-p2"], ARGS).await).await;
    output(target.spawn(&["cancel", "feed-p2"], "").await).await;
    let mut seen = Vec::new();
    while seen.last().is_none_or(|(_, state, _)| *state != State::Cancelled) {
        seen.push(next_change(&mut changes, "feed-p").await);
    }
    // A subscriber that read late may see only the latest state of a record, never an older one.
    assert!(
        seen == [("feed-p2".to_owned(), State::Pending, 1), ("feed-p2".to_owned(), State::Cancelled, 2)]
            || seen == [("feed-p2".to_owned(), State::Cancelled, 2)],
        "{seen:?}"
    );
}

#[tokio::test]
async fn sqlite_feed_sees_other_processes() {
    let dir = TempDir::new("pending-sqlite-feed-sees-other-processes");
    let path = sqlite_path(&dir);
    let store = SqliteStore::open(&path).await.expect("open");
    another_process_changes_reach_the_feed(&store, &Target::sqlite(&path)).await;
}

#[tokio::test]
async fn postgres_feed_sees_other_processes() {
    let Some(postgres) = PostgresSchema::open("feed", "pending::postgres_feed_sees_other_processes").await
    else {
        return;
    };
    let target = Target::postgres(&postgres.base_url, &postgres.schema);
    another_process_changes_reach_the_feed(&postgres.store, &target).await;
    postgres.drop_schema().await;
}

/// `askuser pending --version` answers as `askuser --version` does (the version and the commit),
/// as the separate binary it replaces answered; and the command reads its options as
/// every askuser command does: a usage error is one line and how to get the usage.
#[test]
fn names_its_version_and_reports_usage_errors_in_one_line() {
    let askuser = || std::process::Command::new(env!("CARGO_BIN_EXE_askuser"));
    let whole = askuser().arg("--version").output().unwrap();
    let output = askuser().args(["pending", "--version"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), String::from_utf8(whole.stdout).unwrap());
    let output = askuser()
        .args(["pending", "--store", "memory:", "put", "--timeout", "1e300"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "askuser pending: --timeout must be a duration above 0, got 1e300\n\
         Run 'askuser pending --help' for the options.\n"
    );
}

/// `askuser pending purge --keep-days N` deletes settled questions (here all of them with N = 0,
/// but the newest change's row on SQLite) and never a waiting one; `list --newest` lists the
/// newest first.
#[tokio::test]
async fn the_tool_purges_and_lists_newest_first() {
    let dir = TempDir::new("pending-the-tool-purges-and-lists-newest-first");
    let path = sqlite_path(&dir);
    let target = Target::sqlite(&path);
    for id in ["tool-a", "tool-b"] {
        output(target.spawn(&["put", "--id", id], ARGS).await).await;
        output(target.spawn(&["cancel", id], "").await).await;
    }
    output(target.spawn(&["put", "--id", "tool-c"], ARGS).await).await;
    let listed = output(target.spawn(&["list", "--newest"], "").await).await;
    let ids: Vec<String> =
        listed.lines().map(|line| record_json(line)["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(ids, ["tool-c", "tool-b", "tool-a"]);
    assert_eq!(output(target.spawn(&["purge", "--keep-days", "0"], "").await).await, "2\n");
    let listed = output(target.spawn(&["list"], "").await).await;
    assert_eq!(record_json(&listed)["id"], "tool-c");
    let refused = target.spawn(&["purge"], "").await.wait_with_output().await.unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--keep-days"));
}
