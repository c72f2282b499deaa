//! `askuser pending`: look at and act on the pending questions in a store, from a shell. See
//! `askuser pending --help`.
//!
//! `URL` is `sqlite:PATH`, `postgres://…` or `memory:` (also read from `ASKUSER_STORE`);
//! `--schema` keeps PostgreSQL tables in a schema of their own. Records print as one JSON line.
//! `answer --hold` stays alive after printing until killed (crash tests kill it there).
//! Exit status: 0 done, 1 the store refused or failed, 2 bad usage.

use std::io::Read;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use askuser_core::{AskContext, AskUserRequest, AskUserResponse, Questions};
use askuser_store::{ListQuery, NewQuestion, PendingStore, State, StoreAnswerer};
use askuser_tool::{AskUser, ToolCall};

use crate::cli::{self, Args, Command};

/// Printed on a usage error.
const USAGE: &str = "\
usage: askuser pending --store URL [--schema NAME] COMMAND
  put [--id ID] [--session S] [--timeout DUR]    tool-call arguments on stdin → the record
  ask [--session S] [--timeout DUR]               ask through a StoreAnswerer; → the tool result
  get ID | wait ID | cancel ID | expire ID        → the record (wait: once settled)
  answer ID [--hold]                              an AskUserResponse on stdin → the record
  result ID                                       → the tool result of a settled record
  list [--session S] [--state STATE] [--limit N] [--after CURSOR] [--newest]
  sweep                                           → the ids expired
  purge --keep-days N                             deletes questions settled over N days ago (0: every settled one)
                                                  (never a waiting one) → how many
";

/// How many settled questions one `purge` statement deletes, and expired ones one `sweep` lists.
const PURGE_BATCH: usize = 10_000;

const PENDING: Command = Command::new("askuser pending", USAGE);

/// `--timeout SECS` wherever it stands, or the default.
fn timeout(args: &mut Args) -> Result<Duration, String> {
    match args.take_option("--timeout")? {
        None => Ok(askuser_store::DEFAULT_TIMEOUT),
        Some(secs) => cli::seconds("--timeout", &secs),
    }
}

enum Failure {
    Usage(String),
    Store(String),
}

impl From<askuser_store::StoreError> for Failure {
    fn from(error: askuser_store::StoreError) -> Self {
        Self::Store(askuser_tool::exit::with_causes(&error))
    }
}

fn stdin_text() -> Result<String, Failure> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).map_err(|e| Failure::Usage(format!("reading stdin: {e}")))?;
    Ok(text)
}

/// The tool-call arguments on stdin, read as every askuser command reads them (capped).
fn call_text() -> Result<String, Failure> {
    cli::read_call("askuser pending", None, None)
        .map(|(text, _)| text)
        .map_err(|e| Failure::Usage(e.to_string()))
}

fn print_json(value: &impl serde::Serialize) -> Result<(), Failure> {
    let line = serde_json::to_string(value).map_err(|e| Failure::Store(e.to_string()))?;
    println!("{line}");
    Ok(())
}

fn one_id(args: &Args) -> Result<String, Failure> {
    match args.rest().as_slice() {
        [id] => Ok(id.clone()),
        _ => Err(Failure::Usage("expected exactly one ID".to_owned())),
    }
}

async fn open(url: &str, schema: Option<String>) -> Result<Arc<dyn PendingStore>, Failure> {
    match schema {
        Some(schema) => Ok(Arc::new(askuser_store::PostgresStore::builder(url).schema(schema).open().await?)),
        None => Ok(askuser_store::open(url).await?),
    }
}

async fn run(mut args: Args) -> Result<(), Failure> {
    let url = match args.take_option("--store").map_err(Failure::Usage)? {
        Some(url) => url,
        None => std::env::var("ASKUSER_STORE")
            .map_err(|_| Failure::Usage("--store URL (or ASKUSER_STORE) is required".to_owned()))?,
    };
    let schema = args.take_option("--schema").map_err(Failure::Usage)?;
    let hold = args.take_flag("--hold");
    let Some(command) = args.next() else {
        return Err(Failure::Usage("a command is required".to_owned()));
    };
    let store = open(&url, schema).await?;
    match command.as_str() {
        "put" => put(&*store, args).await,
        "ask" => ask(store, args).await,
        "get" => match store.get(&one_id(&args)?).await? {
            Some(record) => print_json(&record),
            None => Err(Failure::Store(format!("no pending question has id {:?}", one_id(&args)?))),
        },
        "wait" => {
            let id = one_id(&args)?;
            if store.get(&id).await?.is_some_and(|r| r.state() == State::Pending) {
                // Tells a script (and the crash test) that this process is waiting, not finding an
                // answer that was already there.
                eprintln!("waiting for {id}");
            }
            print_json(&store.watch(&id).await?)
        }
        "cancel" => print_json(&store.cancel(&one_id(&args)?).await?),
        "expire" => print_json(&store.expire(&one_id(&args)?).await?),
        "answer" => {
            let response: AskUserResponse = serde_json::from_str(&stdin_text()?)
                .map_err(|e| Failure::Usage(format!("the response on stdin is invalid: {e}")))?;
            print_json(&store.commit_answer(&one_id(&args)?, &response).await?)?;
            if hold {
                std::future::pending::<()>().await;
            }
            Ok(())
        }
        "result" => {
            let id = one_id(&args)?;
            let record = store
                .get(&id)
                .await?
                .ok_or_else(|| Failure::Store(format!("no pending question has id {id:?}")))?;
            match record.result().map_err(|e| Failure::Store(e.to_string()))? {
                Some(result) => {
                    println!("{}", result.text());
                    Ok(())
                }
                None => {
                    Err(Failure::Store(format!("question {id:?} is {} and has no result", record.state())))
                }
            }
        }
        "list" => list(&*store, args).await,
        "purge" => {
            let Some(days) = args.take_option("--keep-days").map_err(Failure::Usage)? else {
                return Err(Failure::Usage("purge needs --keep-days N".to_owned()));
            };
            let days: u64 = days.parse().map_err(|_| {
                Failure::Usage(format!("--keep-days takes a whole number of days, got {days:?}"))
            })?;
            let keep = Duration::from_secs(days.saturating_mul(24 * 3600));
            // In batches, as the sweeper purges: until one deletes less than a batch.
            let mut purged = 0;
            loop {
                let done = store.purge(keep, PURGE_BATCH).await?;
                purged += done;
                if done < PURGE_BATCH {
                    break;
                }
            }
            println!("{purged}");
            Ok(())
        }
        "sweep" => {
            for record in store.expire_due(PURGE_BATCH).await? {
                println!("{}", record.id());
            }
            Ok(())
        }
        other => Err(Failure::Usage(format!("unknown command {other:?}"))),
    }
}

async fn put(store: &dyn PendingStore, mut args: Args) -> Result<(), Failure> {
    let id = args.take_option("--id").map_err(Failure::Usage)?;
    let session = args.take_option("--session").map_err(Failure::Usage)?;
    let timeout = timeout(&mut args).map_err(Failure::Usage)?;
    let questions = Questions::from_json(&call_text()?)
        .map_err(|e| Failure::Usage(format!("the arguments on stdin are invalid: {e}")))?;
    let request = match id {
        Some(id) => AskUserRequest::with_id(id, questions),
        None => AskUserRequest::new(questions),
    };
    let mut question = NewQuestion::new(request, timeout);
    if let Some(session) = session {
        question = question.session_id(session);
    }
    print_json(&store.put(question).await?)
}

async fn ask(store: Arc<dyn PendingStore>, mut args: Args) -> Result<(), Failure> {
    let session = args.take_option("--session").map_err(Failure::Usage)?;
    let timeout = timeout(&mut args).map_err(Failure::Usage)?;
    let arguments = call_text()?;
    let answerer = StoreAnswerer::new(store).timeout(timeout);
    let ask_user =
        AskUser::builder().answerer(answerer).build().map_err(|e| Failure::Usage(e.to_string()))?;
    let mut context = AskContext::new();
    context.session_id = session;
    let outcome = ask_user.call(ToolCall::new("call_cli", arguments.as_str()), context).await;
    match outcome.model_text() {
        Some(text) => {
            println!("{text}");
            Ok(())
        }
        None => Err(Failure::Store(format!("the call did not complete: {outcome:?}"))),
    }
}

async fn list(store: &dyn PendingStore, mut args: Args) -> Result<(), Failure> {
    let mut query = ListQuery::new();
    if let Some(session) = args.take_option("--session").map_err(Failure::Usage)? {
        query = query.session_id(session);
    }
    if let Some(state) = args.take_option("--state").map_err(Failure::Usage)? {
        query = query.state(state.parse().map_err(|e| Failure::Usage(format!("{e}")))?);
    }
    if let Some(limit) = args.take_option("--limit").map_err(Failure::Usage)? {
        query = query.limit(limit.parse().map_err(|_| Failure::Usage(format!("--limit {limit:?}")))?);
    }
    if let Some(after) = args.take_option("--after").map_err(Failure::Usage)? {
        query = query.after(after.parse().map_err(|e| Failure::Usage(format!("{e}")))?);
    }
    if args.take_flag("--newest") {
        query = query.newest_first();
    }
    let page = store.list(&query).await?;
    for record in &page.records {
        print_json(record)?;
    }
    if let Some(next) = page.next {
        eprintln!("more: --after {next}");
    }
    Ok(())
}

/// Runs `askuser pending ARGS` (the arguments after `pending`).
pub(crate) fn main(args: &[String]) -> ExitCode {
    if cli::wants_help(args) {
        return PENDING.help();
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("askuser pending: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(Args::new(args))) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => PENDING.usage_error(&message),
        Err(Failure::Store(message)) => {
            eprintln!("askuser pending: {message}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Args, timeout};

    #[test]
    fn timeouts_out_of_range_are_errors_not_panics() {
        for bad in ["1e300", "0", "-1", "inf", "NaN", "soon"] {
            let mut args = Args::new(&["put".to_owned(), "--timeout".to_owned(), bad.to_owned()]);
            let error = timeout(&mut args).expect_err(bad);
            assert!(error.starts_with("--timeout"), "{bad}: {error}");
        }
        let mut args = Args::new(&["--timeout=2.5".to_owned()]);
        assert_eq!(timeout(&mut args), Ok(std::time::Duration::from_millis(2500)));
        assert_eq!(timeout(&mut Args::default()), Ok(askuser_store::DEFAULT_TIMEOUT));
    }
}
