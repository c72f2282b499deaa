//! `askuser mcp`, `askuser serve` and `askuser ask --server` run a binary installed beside this
//! one (`askuser-mcp`, `askuser-server`), so that rmcp, axum, sqlx and reqwest are not compiled
//! into `askuser` and stay off the build path of `askuser demo`.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// A binary that serves some of `askuser`'s commands, and the package that builds it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sibling {
    binary: &'static str,
    package: &'static str,
}

/// The MCP server: `askuser mcp [options]` runs `askuser-mcp [options]`.
pub(crate) const MCP: Sibling = Sibling { binary: "askuser-mcp", package: "askuser-mcp-cli" };

/// The answer server: `askuser serve …` and `askuser ask --server …` run `askuser-server serve|ask …`.
pub(crate) const SERVER: Sibling = Sibling { binary: "askuser-server", package: "askuser-server-cli" };

/// Whether `askuser ask` was given `--server`: then the answer server asks, not this terminal.
pub(crate) fn server_wanted(args: &[String]) -> bool {
    args.iter().any(|a| a == "--server" || a.starts_with("--server="))
}

impl Sibling {
    fn path(self) -> Option<PathBuf> {
        let exe = std::env::current_exe().ok()?;
        let path = exe.with_file_name(format!("{}{}", self.binary, std::env::consts::EXE_SUFFIX));
        path.is_file().then_some(path)
    }

    /// Replaces this process by the sibling binary run with `command` (when it has subcommands)
    /// and `args`, so stdin, stdout and signals are its own to the end. `shown` is the command as
    /// the user typed it, for the message when the binary is missing.
    pub(crate) fn run(self, shown: &str, command: Option<&str>, args: &[String]) -> ExitCode {
        let Some(path) = self.path() else {
            eprintln!(
                "askuser: `askuser {shown}` runs the {binary} binary, which is not installed next to askuser.\n\
                 Build it with `cargo build --release -p {package}`, or install it with \
                 `cargo install --path crates/{package}`.",
                binary = self.binary,
                package = self.package,
            );
            return ExitCode::from(2);
        };
        let mut child = Command::new(&path);
        child.args(command).args(args);
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt as _;
            let error = child.exec();
            eprintln!("askuser: cannot run {}: {error}", path.display());
            ExitCode::FAILURE
        }
        #[cfg(not(unix))]
        match child.status() {
            Ok(status) => ExitCode::from(u8::try_from(status.code().unwrap_or(1)).unwrap_or(1)),
            Err(error) => {
                eprintln!("askuser: cannot run {}: {error}", path.display());
                ExitCode::FAILURE
            }
        }
    }
}
