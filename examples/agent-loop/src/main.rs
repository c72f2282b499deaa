//! `agent-loop`: runs the scripted agent loop and prints the transcript.
//!
//! `agent-loop resume` reads a stored pending question (first line of stdin) and a response
//! (second line) and prints the tool result: the second half of a deferred call, in another
//! process.

use std::io::BufRead;
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => {
            let runtime = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
                Ok(runtime) => runtime,
                Err(e) => {
                    eprintln!("agent-loop: {e}");
                    return ExitCode::FAILURE;
                }
            };
            match runtime.block_on(agent_loop::run(Duration::from_millis(200))) {
                Ok(lines) => {
                    for line in lines {
                        println!("{line}");
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("agent-loop: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        [command] if command == "resume" => {
            let mut lines = std::io::stdin().lock().lines();
            let pending = lines.next().and_then(Result::ok).unwrap_or_default();
            let response = lines.next().and_then(Result::ok).unwrap_or_default();
            match agent_loop::resume(&pending, &response) {
                Ok(text) => {
                    println!("{text}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("agent-loop resume: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        _ => {
            eprintln!("usage: agent-loop [resume]");
            ExitCode::from(2)
        }
    }
}
