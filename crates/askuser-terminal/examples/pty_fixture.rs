//! Test fixture for the real-pty tests in `tests/it/pty.rs`; not an example to copy.
//!
//! `pty_fixture answer`: asks a two-question batch and prints the tool result on stdout.
//! `pty_fixture accessible-tty`: the same with `Mode::Tty` and the accessible mode, as
//! `askuser ask - --accessible` runs: the answers are lines typed on `/dev/tty`, not stdin.
//! `pty_fixture host-raw`: turns raw mode on first (as a host TUI would), asks, prints `ASKED`,
//! then waits for one more byte before turning raw mode off itself.
//! `pty_fixture abort`: while the menu is open, another thread panics and the process exits at
//! once, as a `panic = "abort"` build does: no guard's `Drop` runs, only the panic hook.
//! `pty_fixture cancel MS`: opens the same menu, cancels it after MS milliseconds (as a timeout
//! would), then reads three lines with `std::io::stdin().read_line`, echoing each.
//! `pty_fixture cancel-lines MS accessible|lines`: the same with the accessible mode or the line
//! protocol on stdin instead of the menu.
//! `pty_fixture deadline`: the batch of `answer` with a deadline five minutes away.
//! `pty_fixture two`: two answerers ask one question each at the same time; prints both results.
//! `pty_fixture extended menu|lines`: an extended batch (a choice with a declared default, then a
//! text question) in the menu or on the line protocol; prints the tool result.
//! `pty_fixture secret menu|lines`: a secret question, the value going to an in-memory sink;
//! prints the tool result and whether the sink holds `$ASKUSER_TEST_EXPECT` (never the value).
//! `pty_fixture cancel-secret MS menu|lines [busy]`: the secret question cancelled after MS
//! milliseconds, then three lines read and echoed as `cancel` does. With `busy`, 300 ms in, the
//! program blocks its one thread until past the deadline (printing `BUSY` first), so that keys
//! typed meanwhile sit unhandled in crossterm's queue and the terminal when the timeout drops
//! the menu, which is not polled again.

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::time::Duration;

use std::sync::Arc;

use askuser_core::{
    AskContext, AskUserRequest, Deadline, InMemorySecretSink, Profile, Questions, Timestamp, Validator,
    ask_user_result,
};
use askuser_terminal::{Mode, TerminalAnswerer};

const BATCH: &str = r#"{"questions":[
    {"header":"Db","question":"Which database?","options":[
        {"label":"Postgres","description":"mature"},{"label":"SQLite"},{"label":"MySQL"}]},
    {"header":"Extras","question":"Which extras?","multi_select":true,"options":[
        {"label":"Cache"},{"label":"Metrics"},{"label":"Tracing"}]}]}"#;

/// One yes-or-no question headed `header`.
fn single(header: &str) -> Result<AskUserRequest, askuser_core::ValidationError> {
    let json = format!(
        r#"{{"questions":[{{"header":"{header}","question":"Question {header}?","options":[{{"label":"Yes"}},{{"label":"No"}}]}}]}}"#
    );
    Ok(AskUserRequest::new(Questions::from_json(&json)?))
}

const EXTENDED: &str = r#"{"questions":[
    {"id":"db","header":"Db","question":"Which database?","allow_other":false,"options":[
        {"label":"Postgres"},{"label":"SQLite","default":true},{"label":"MySQL"}]},
    {"id":"name","kind":"text","header":"Name","question":"What is the service called?"}]}"#;

const SECRET: &str = r#"{"questions":[{"kind":"secret","header":"Token","question":"Your deploy token?",
    "secret_name":"DEPLOY_TOKEN","purpose":"To push the release."}]}"#;

fn extended(json: &str) -> Result<AskUserRequest, askuser_core::ValidationError> {
    Ok(AskUserRequest::new(Validator::new().with_profile(Profile::Extended).validate_json(json)?))
}

/// The answerer of the extended modes: the menu, or the line protocol on stdin.
fn extended_answerer(how: Option<&str>, sink: &Arc<InMemorySecretSink>) -> TerminalAnswerer {
    let mode = if how == Some("lines") { Mode::Lines } else { Mode::Auto };
    TerminalAnswerer::builder().mode(mode).secret_sink(Arc::clone(sink)).build()
}

fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    askuser_terminal::install_panic_hook();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let request = AskUserRequest::new(Questions::from_json(BATCH)?);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
    let answerer = TerminalAnswerer::new();
    match args.first().map(String::as_str) {
        Some(mode @ ("answer" | "accessible-tty")) => {
            let answerer = if mode == "answer" {
                answerer
            } else {
                TerminalAnswerer::builder().mode(Mode::Tty).accessible(true).build()
            };
            let response = runtime.block_on(answerer.ask(&request))?;
            println!("{}", ask_user_result(&request, &response)?.text());
            Ok(ExitCode::SUCCESS)
        }
        Some("host-raw") => {
            crossterm::terminal::enable_raw_mode()?;
            let asked = runtime.block_on(answerer.ask(&request));
            let mut err = std::io::stderr();
            write!(err, "ASKED:{}\r\n", asked.is_ok())?;
            err.flush()?;
            std::io::Read::read(&mut std::io::stdin(), &mut [0])?;
            crossterm::terminal::disable_raw_mode()?;
            Ok(ExitCode::SUCCESS)
        }
        Some("abort") => {
            std::thread::spawn(|| {
                while !crossterm::terminal::is_raw_mode_enabled().unwrap_or(false) {
                    std::thread::sleep(Duration::from_millis(5));
                }
                let _ = std::panic::catch_unwind(|| panic!("a bug elsewhere in the program"));
                std::process::exit(101);
            });
            runtime.block_on(answerer.ask(&request))?;
            Ok(ExitCode::SUCCESS)
        }
        Some("deadline") => {
            let request =
                request.with_deadline(Deadline::new(Timestamp::now(), Some(Duration::from_mins(5))));
            let response = runtime.block_on(answerer.ask(&request))?;
            println!("{}", ask_user_result(&request, &response)?.text());
            Ok(ExitCode::SUCCESS)
        }
        Some("two") => {
            let (first, second) = (single("A")?, single("B")?);
            let other = TerminalAnswerer::new();
            let (a, b) = runtime.block_on(async { tokio::join!(answerer.ask(&first), other.ask(&second)) });
            println!("{}", ask_user_result(&first, &a?)?.text());
            println!("{}", ask_user_result(&second, &b?)?.text());
            Ok(ExitCode::SUCCESS)
        }
        Some(which @ ("extended" | "secret")) => {
            let sink = Arc::new(InMemorySecretSink::new());
            let request = extended(if which == "extended" { EXTENDED } else { SECRET })?;
            let answerer = extended_answerer(args.get(1).map(String::as_str), &sink);
            let context = AskContext::new().with_session_id("s1");
            let response = runtime.block_on(answerer.ask_in(&request, &context))?;
            println!("{}", ask_user_result(&request, &response)?.text());
            if which == "secret" {
                let expected = std::env::var("ASKUSER_TEST_EXPECT").unwrap_or_default();
                let stored = sink.resolve(Some("s1"), "session:DEPLOY_TOKEN");
                println!("MATCH:{}", stored.is_some_and(|v| v.expose() == expected));
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(command @ ("cancel" | "cancel-lines" | "cancel-secret")) => {
            let ms: u64 = args.get(1).map_or(Ok(300), |s| s.parse())?;
            let sink = Arc::new(InMemorySecretSink::new());
            let request = if command == "cancel-secret" { extended(SECRET)? } else { request };
            let answerer = match args.get(2).map(String::as_str) {
                _ if command == "cancel" => answerer,
                how if command == "cancel-secret" => extended_answerer(how, &sink),
                Some("accessible") => TerminalAnswerer::builder().accessible(true).build(),
                _ => TerminalAnswerer::builder().mode(Mode::Lines).build(),
            };
            let busy = args.get(3).is_some_and(|a| a == "busy");
            let asked = runtime.block_on(cancelled_after(&answerer, &request, ms, busy));
            let mut err = std::io::stderr();
            writeln!(err, "CANCELLED:{}", asked.is_err())?;
            writeln!(err, "RAW:{}", crossterm::terminal::is_raw_mode_enabled()?)?;
            writeln!(err, "STORED:{}", sink.len())?;
            echo_three_lines()?;
            Ok(ExitCode::SUCCESS)
        }
        _ => {
            eprintln!(
                "usage: pty_fixture answer | accessible-tty | deadline | host-raw | abort | cancel MS \
                 | cancel-lines MS accessible|lines | two | extended menu|lines \
                 | secret menu|lines | cancel-secret MS menu|lines [busy]"
            );
            Ok(ExitCode::from(2))
        }
    }
}

/// Asks, and drops the call at `ms` milliseconds unless it ended before. With `busy`, the thread
/// is blocked from 300 ms in until past the deadline.
async fn cancelled_after(
    answerer: &TerminalAnswerer,
    request: &AskUserRequest,
    ms: u64,
    busy: bool,
) -> Result<Result<askuser_core::AskUserResponse, askuser_core::AnswerError>, ()> {
    if busy {
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            eprint!("BUSY\r\n");
            std::thread::sleep(Duration::from_millis(ms + 300));
        });
    }
    // The deadline first: once past it, the menu is dropped without another poll.
    tokio::select! {
        biased;
        () = tokio::time::sleep(Duration::from_millis(ms)) => Err(()),
        asked = answerer.ask(request) => Ok(asked),
    }
}

/// Reads three lines from stdin as a host would after the question, echoing each.
fn echo_three_lines() -> std::io::Result<()> {
    let mut err = std::io::stderr();
    let stdin = std::io::stdin();
    for i in 0..3 {
        write!(err, "PROMPT{i}>")?;
        err.flush()?;
        let mut line = String::new();
        stdin.lock().read_line(&mut line)?;
        writeln!(err, "GOT{i}:{}", line.trim_end())?;
    }
    Ok(())
}
