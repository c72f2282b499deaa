//! `rig-agent-example`: a rig agent whose scripted model asks you which cache to build.
//!
//! - no arguments: the question appears in your terminal (a menu; the line protocol on stdin
//!   when stdin is not a terminal), then the model's final message is printed;
//! - `--defaults`: nobody is asked, the recommended option is taken (for CI);
//! - `pause`: nobody is there: prints the paused run as one JSON line, for `resume`;
//! - `resume`: reads that line and then a response line (`AskUserResponse` JSON) from stdin, and
//!   finishes the run in this process.

use std::io::BufRead;
use std::process::ExitCode;

use askuser_core::{AskUserResponse, DefaultsResponder};
use askuser_terminal::TerminalAnswerer;
use rig_agent_example::{BoxError, Paused, pause, resume, run};

const SESSION: &str = "rig-agent-example";

async fn main_inner(args: &[String]) -> Result<String, BoxError> {
    match args {
        [] => run(TerminalAnswerer::new(), SESSION).await,
        [flag] if flag == "--defaults" => run(DefaultsResponder::new(), SESSION).await,
        [command] if command == "pause" => Ok(serde_json::to_string(&pause(SESSION).await?)?),
        [command] if command == "resume" => {
            let mut lines = std::io::stdin().lock().lines();
            let paused: Paused = serde_json::from_str(&lines.next().ok_or("missing the paused run")??)?;
            let response: AskUserResponse =
                serde_json::from_str(&lines.next().ok_or("missing the response")??)?;
            resume(paused, &response, SESSION).await
        }
        _ => Err("usage: rig-agent-example [--defaults | pause | resume]".into()),
    }
}

fn main() -> ExitCode {
    askuser_terminal::install_panic_hook();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("rig-agent-example: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(main_inner(&args)) {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rig-agent-example: {e}");
            ExitCode::FAILURE
        }
    }
}
