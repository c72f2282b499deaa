//! `session-router`: a host serving several sessions at once; prints each session's transcript.

use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("session-router: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Real time, kept short: the clients think for a third and two thirds of the timeout, and dave
    // never answers, so the run takes one timeout.
    match runtime.block_on(session_router::serve(Duration::from_millis(300))) {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("session-router: {e}");
            ExitCode::FAILURE
        }
    }
}
