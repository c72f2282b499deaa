//! The `askuser` command: ask a person from the terminal, run the built-in demo, print the tool
//! schema, check conformance verdicts; with the default features also serve MCP (`askuser mcp`),
//! run the answer server (`askuser serve`, `askuser ask --server`) and look at a store
//! (`askuser pending`). See `askuser --help`.
//!
//! Which crate do I need: the table in the [README](https://example.invalid/askuser#which-crate-do-i-need).

/// `eprintln!` that never panics ([`cli::say`]): a server stops, and a request is answered,
/// whatever became of stderr.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::cli::say(format_args!($($arg)*))
    };
}

mod ask;
#[cfg(feature = "server")]
mod audit;
mod check;
mod cli;
mod hook;
mod install;
#[cfg(feature = "mcp")]
mod mcp;
#[cfg(any(test, not(all(feature = "mcp", feature = "server"))))]
mod missing;
#[cfg(feature = "server")]
mod pending;
#[cfg(feature = "server")]
mod qr;
mod schema;
#[cfg(feature = "server")]
mod serve;

use std::io::{self, Write};
use std::process::ExitCode;

/// The exit status of `ask`, `demo` and `schema` when stdout cannot be written.
use askuser_tool::exit::WRITE_FAILED;

const USAGE: &str = "\
usage: askuser <command> [options]

commands:
  ask              ask the questions of a tool call (JSON arguments from a file or stdin)
  demo             ask a built-in batch of three questions and print what the model receives
  check            read conformance cases (JSON lines) on stdin, write one verdict line each
  mcp              serve ask_user_question over MCP on stdio (see askuser mcp --help)
  mcp install HOST add askuser to an MCP host's configuration: claude-code, claude-desktop,
                   vscode, vscode-user, cursor, windsurf, codex (askuser mcp install --help)
  serve            run the answer server for phones and other programs (see askuser serve
                   --help); `askuser ask --server URL` asks through it
  hook CLI         carry Claude Code's or Codex's own questions and permission prompts to
                   the answer server (askuser hook --help); hook install CLI writes it in
  pending          look at and act on the pending questions in a store (askuser pending --help)
  audit            export the store's audit log (every event of every question, hash-chained)
                   and verify one (askuser audit --help)
  schema           print the tool's parameters schema [--dialect generic|openai-strict|anthropic|gemini]
  help             print this help (also -h, --help)
  version          print the version and the commit it was built from (also -V, --version)

exit status of ask and demo (`askuser ask --help` says more):
  0 answered, 1 declined (only that), 2 usage error or invalid arguments,
  3 could not ask (no terminal, input ended before any answer, answerer failure),
  4 stdout could not be written, 124 timed out, 130 interrupted,
  128 + N ended by signal N (129 SIGHUP, 143 SIGTERM), the terminal restored first
schema: 0, 2 usage error, 4 stdout could not be written. check: 0, 1 failure, 2 usage error.
";

/// Writes `text` and a newline to stdout. A failed write (a full disk, a closed pipe) is reported
/// and gives [`WRITE_FAILED`], never a panic.
pub(crate) fn print_result(text: &str) -> Result<(), ExitCode> {
    let mut stdout = io::stdout().lock();
    writeln!(stdout, "{text}").and_then(|()| stdout.flush()).map_err(|e| {
        eprintln!("askuser: cannot write the result to stdout: {e}");
        ExitCode::from(WRITE_FAILED)
    })
}

/// Whether `askuser ask` was given `--server`: then the answer server asks, not this terminal.
fn server_wanted(args: &[String]) -> bool {
    args.iter().any(|a| a == "--server" || a.starts_with("--server="))
}

#[cfg(feature = "mcp")]
fn mcp(args: &[String]) -> ExitCode {
    mcp::main(args)
}

#[cfg(not(feature = "mcp"))]
fn mcp(args: &[String]) -> ExitCode {
    missing::report("mcp", "mcp", args)
}

#[cfg(feature = "server")]
fn server(command: &str, args: &[String]) -> ExitCode {
    match command {
        "serve" => serve::main(args),
        "pending" => pending::main(args),
        "audit" => audit::main(args),
        _ => ask::server::main(args),
    }
}

#[cfg(not(feature = "server"))]
fn server(command: &str, args: &[String]) -> ExitCode {
    missing::report(command, "server", args)
}

/// Whether `args` are `--version`, `-V` or `version` alone: `askuser mcp --version` (and `serve`,
/// `pending`) answers as `askuser --version`, as the separate binaries these commands once were did.
fn version_asked(args: &[String]) -> bool {
    matches!(args, [flag] if matches!(flag.as_str(), "--version" | "-V" | "version"))
}

/// `askuser --version`: the version, the commit it was built from when known (see `build.rs`),
/// and the commands a build without default features left out.
fn version() -> String {
    let mut notes: Vec<String> =
        option_env!("ASKUSER_COMMIT").map(|c| format!("commit {c}")).into_iter().collect();
    let left_out: Vec<&str> =
        [(cfg!(feature = "mcp"), "mcp"), (cfg!(feature = "server"), "serve, pending, audit")]
            .into_iter()
            .filter_map(|(built, commands)| (!built).then_some(commands))
            .collect();
    if !left_out.is_empty() {
        notes.push(format!("without {}", left_out.join(", ")));
    }
    let version = concat!("askuser ", env!("CARGO_PKG_VERSION"));
    if notes.is_empty() { version.to_owned() } else { format!("{version} ({})", notes.join("; ")) }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let command = args.next();
    let rest: Vec<String> = args.collect();
    match command.as_deref() {
        Some("ask") if server_wanted(&rest) => server("ask", &rest),
        Some("ask") => ask::ask(&rest),
        Some("demo") => ask::demo(&rest),
        Some("check") => check::main(&rest),
        Some("schema") => schema::main(&rest),
        Some("mcp" | "serve" | "pending" | "audit") if version_asked(&rest) => {
            print_result(&version()).map_or_else(|code| code, |()| ExitCode::SUCCESS)
        }
        Some("mcp") if rest.first().is_some_and(|a| a == "install") => install::main(&rest[1..]),
        Some("mcp") => mcp(&rest),
        Some(command @ ("serve" | "pending" | "audit")) => server(command, &rest),
        Some("hook") => hook::main(&rest),
        Some("version" | "--version" | "-V") => {
            print_result(&version()).map_or_else(|code| code, |()| ExitCode::SUCCESS)
        }
        Some("help" | "--help" | "-h") | None => {
            print_result(USAGE.trim_end()).map_or_else(|code| code, |()| ExitCode::SUCCESS)
        }
        Some(other) => cli::Command::new("askuser", USAGE).usage_error(&format!(
            "unknown command {other:?} (the commands: ask, demo, check, mcp, serve, hook, pending, schema, version)"
        )),
    }
}
