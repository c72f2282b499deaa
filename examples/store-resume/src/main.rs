//! A deferred `ask_user_question` call that pauses in one process and resumes in another, through
//! a SQLite store (see `docs/store.md`).
//!
//! ```text
//! store-resume                     run the whole story: the three steps below as three processes
//! store-resume ask DB              the agent: a deferred call is put in the store; the run pauses
//! store-resume answer DB ID LABEL  the person: answers the first question with LABEL
//! store-resume resume DB ID        a new agent process: waits for the answer, prints the tool result
//! ```

use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::Duration;

use askuser_core::{AskContext, AskUserAnswer, AskUserResponse};
use askuser_store::{NewQuestion, PendingStore, SqliteStore, Sweeper};
use askuser_tool::{AskUser, CallOutcome, ToolCall};

type Error = Box<dyn std::error::Error>;

/// What the model asked (a tool call's arguments).
const ARGS: &str = r#"{"questions":[{"header":"Deploy","question":"Where should I deploy the fix?",
  "options":[{"label":"Staging (Recommended)","description":"Safe, reversible"},{"label":"Production"}]}]}"#;

/// The agent: without an answerer the capability defers the call; the host stores it and stops.
async fn ask(db: &str) -> Result<(), Error> {
    let store = SqliteStore::open(db).await?;
    let ask_user = AskUser::builder().build()?;
    let call = ToolCall::new("call_42", ARGS);
    let CallOutcome::Deferred(pending) = ask_user.call(call, AskContext::new()).await else {
        return Err("a capability without an answerer defers every call".into());
    };
    let record =
        store.put(NewQuestion::from_pending(&pending, Duration::from_hours(1)).session_id("demo")).await?;
    println!("{}", record.id());
    Ok(())
}

/// The person (a web form, a chat bot…): answers in the store, from any process.
async fn answer(db: &str, id: &str, label: &str) -> Result<(), Error> {
    let store = SqliteStore::open(db).await?;
    let record = store.get(id).await?.ok_or("no such question")?;
    let header = record.request().questions().as_slice()[0].header().to_owned();
    let answered = store
        .commit_answer(id, &AskUserResponse::answered(vec![AskUserAnswer::picked(header, [label])]))
        .await?;
    println!("{} at {}", answered.state(), answered.answered_at().map(|t| t.to_string()).unwrap_or_default());
    Ok(())
}

/// A new agent process: waits until the question is settled (a sweeper expires it if nobody
/// answers in time) and hands the model the exact text an inline call would have returned.
async fn resume(db: &str, id: &str) -> Result<(), Error> {
    let store = Arc::new(SqliteStore::open(db).await?);
    let _sweeper = Sweeper::new(Arc::clone(&store) as Arc<dyn PendingStore>).spawn();
    let record = store.watch(id).await?;
    match record.result()? {
        Some(result) => println!("{}", result.text()),
        None => println!("(the question was {}; no result to resume with)", record.state()),
    }
    Ok(())
}

/// Runs this binary with `args` and returns its first line of output.
fn step(args: &[&str]) -> Result<String, Error> {
    let out = Command::new(std::env::current_exe()?).args(args).output()?;
    if !out.status.success() {
        return Err(format!("{args:?} failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(String::from_utf8(out.stdout)?.trim_end().to_owned())
}

fn story() -> Result<(), Error> {
    let dir = std::env::temp_dir().join(format!("store-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("pending.db");
    let db = db.to_str().ok_or("a UTF-8 temporary path")?;
    let id = step(&["ask", db])?;
    println!("process 1 (agent):  deferred call {id} stored in {db}; the run pauses");
    let answered = step(&["answer", db, &id, "Production"])?;
    println!("process 2 (person): {answered}");
    let result = step(&["resume", db, &id])?;
    println!("process 3 (agent):  resumes; the model receives {result}");
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("store-resume: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = match args.as_slice() {
        [] => story(),
        ["ask", db] => runtime.block_on(ask(db)),
        ["answer", db, id, label] => runtime.block_on(answer(db, id, label)),
        ["resume", db, id] => runtime.block_on(resume(db, id)),
        _ => Err("usage: store-resume [ask DB | answer DB ID LABEL | resume DB ID]".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("store-resume: {error}");
            ExitCode::FAILURE
        }
    }
}
