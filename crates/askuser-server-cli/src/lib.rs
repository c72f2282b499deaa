//! `askuser serve` runs the answer server; `askuser ask --server` asks the questions of a tool call
//! through one. [`serve`] and [`ask`] are the commands, called by the `askuser` binary (package
//! `askuser`, feature `server`) and by this package's `askuser-server` binary (whose [`main`]
//! dispatches between them). See `askuser serve --help` and `docs/server.md`.

/// `eprintln!` that never panics ([`askuser_tool::cli::say`]): a server stops, and a request is
/// answered, whatever became of stderr.
macro_rules! say {
    ($($arg:tt)*) => {
        askuser_tool::cli::say(format_args!($($arg)*))
    };
}

mod ask;
mod mcp;
mod qr;
mod serve;

use std::process::ExitCode;

use askuser_tool::cli::{self, Args, Command};

const USAGE: &str = "\
usage: askuser serve [options]               (also: askuser-server serve [options])
       askuser ask --server URL [FILE|-] [options]

  serve   run the answer server: people answer pending questions on its pages, agents ask over
          its JSON API (see askuser serve --help)
  ask     ask the questions of a tool call through a running server and print the tool result
          (see askuser ask --server URL --help)
";

const SERVER: Command = Command::new("askuser-server", USAGE);

/// `askuser serve ARGS` (the arguments after `serve`): runs the answer server until Ctrl-C or
/// SIGTERM.
#[must_use]
pub fn serve(args: &[String]) -> ExitCode {
    serve::main(args)
}

/// `askuser ask --server URL ARGS` (every argument after `ask`, `--server URL` among them).
#[must_use]
pub fn ask(args: &[String]) -> ExitCode {
    ask::main(args)
}

/// The `askuser-server` binary: `askuser-server serve|ask ARGS`, `args` being everything after
/// the program name.
#[must_use]
pub fn main(args: &[String]) -> ExitCode {
    let (command, rest) = args.split_first().map_or((None, &[][..]), |(c, r)| (Some(c.as_str()), r));
    match command {
        Some("serve") => serve::main(rest),
        Some("ask") => ask::main(rest),
        Some("help" | "--help" | "-h") | None => SERVER.help(),
        Some("version" | "--version" | "-V") => SERVER.version(env!("CARGO_PKG_VERSION")),
        Some(other) => SERVER.usage_error(&format!("unknown command {other:?} (serve or ask)")),
    }
}

/// A command's options from `args`, read the way every askuser binary reads them
/// (`askuser_tool::cli`): `Err(0)` after printing `usage` for `-h`/`--help`, `Err(2)` after saying
/// in one line what is wrong (prefixed with `who`) and how to get the usage.
fn options<T>(
    args: &[String],
    usage: &'static str,
    who: &'static str,
    parse: impl FnOnce(&[String]) -> Result<T, String>,
) -> Result<T, ExitCode> {
    Command::new(who, usage).options(args, |words| parse(&words.collect::<Vec<_>>()))
}

/// `--flag=value` read as `--flag value`.
fn split_equals(args: &[String]) -> Vec<String> {
    Args::new(args).collect()
}

/// A positive number of seconds.
fn seconds(flag: &str, value: &str) -> Result<std::time::Duration, String> {
    cli::seconds(flag, value)
}

/// A profile name: `reference` (`standard` is taken for it too) or `extended`.
fn profile(name: &str) -> Result<askuser_core::Profile, String> {
    cli::profile("--profile", name)
}
