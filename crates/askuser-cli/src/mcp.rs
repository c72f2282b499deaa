//! `askuser mcp`: runs the `askuser-mcp` binary installed beside this one, so that rmcp is not
//! compiled into `askuser` (and not on the build path of `askuser demo`).

use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// The name of the MCP server binary (package `askuser-mcp-cli`).
const SERVER: &str = "askuser-mcp";

fn sibling() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe.with_file_name(format!("{SERVER}{}", std::env::consts::EXE_SUFFIX));
    path.is_file().then_some(path)
}

/// `askuser mcp [options]`: replaces this process by `askuser-mcp [options]`, so stdin, stdout
/// and signals are the MCP host's to the end.
pub(crate) fn main(args: &[String]) -> ExitCode {
    let Some(server) = sibling() else {
        eprintln!(
            "askuser: `askuser mcp` runs the {SERVER} binary, which is not installed next to askuser.\n\
             Build it with `cargo build --release -p askuser-mcp-cli`, or install it with \
             `cargo install --path crates/askuser-mcp-cli`."
        );
        return ExitCode::from(2);
    };
    let mut command = Command::new(&server);
    command.args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        let error = command.exec();
        eprintln!("askuser: cannot run {}: {error}", server.display());
        ExitCode::FAILURE
    }
    #[cfg(not(unix))]
    match command.status() {
        Ok(status) => ExitCode::from(u8::try_from(status.code().unwrap_or(1)).unwrap_or(1)),
        Err(error) => {
            eprintln!("askuser: cannot run {}: {error}", server.display());
            ExitCode::FAILURE
        }
    }
}
