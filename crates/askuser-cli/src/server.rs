//! `askuser serve` and `askuser ask --server`: run the `askuser-server` binary installed beside
//! this one, so that axum, sqlx and reqwest are not compiled into `askuser` (and not on the build
//! path of `askuser demo`).

use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// The name of the answer-server binary (package `askuser-server-cli`).
const SERVER: &str = "askuser-server";

fn sibling() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe.with_file_name(format!("{SERVER}{}", std::env::consts::EXE_SUFFIX));
    path.is_file().then_some(path)
}

/// Whether `askuser ask` was given `--server`: then the answer server asks, not this terminal.
pub(crate) fn wanted(args: &[String]) -> bool {
    args.iter().any(|a| a == "--server" || a.starts_with("--server="))
}

/// Replaces this process by `askuser-server COMMAND ARGS…`.
pub(crate) fn main(command: &str, args: &[String]) -> ExitCode {
    let Some(server) = sibling() else {
        eprintln!(
            "askuser: `askuser {command}` runs the {SERVER} binary, which is not installed next to askuser.\n\
             Build it with `cargo build --release -p askuser-server-cli`, or install it with \
             `cargo install --path crates/askuser-server-cli`."
        );
        return ExitCode::from(2);
    };
    let mut child = Command::new(&server);
    child.arg(command).args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        let error = child.exec();
        eprintln!("askuser: cannot run {}: {error}", server.display());
        ExitCode::FAILURE
    }
    #[cfg(not(unix))]
    match child.status() {
        Ok(status) => ExitCode::from(u8::try_from(status.code().unwrap_or(1)).unwrap_or(1)),
        Err(error) => {
            eprintln!("askuser: cannot run {}: {error}", server.display());
            ExitCode::FAILURE
        }
    }
}
