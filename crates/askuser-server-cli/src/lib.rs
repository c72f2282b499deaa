//! `askuser serve` runs the answer server; `askuser ask --server` asks the questions of a tool call
//! through one. [`serve`] and [`ask`] are the commands, called by the `askuser` binary (package
//! `askuser`, feature `server`) and by this package's `askuser-server` binary (whose [`main`]
//! dispatches between them). See `askuser serve --help` and `docs/server.md`.

mod ask;
mod serve;

use std::process::ExitCode;

const USAGE: &str = "\
usage: askuser serve [options]               (also: askuser-server serve [options])
       askuser ask --server URL [FILE|-] [options]

  serve   run the answer server: people answer pending questions on its pages, agents ask over
          its JSON API (see askuser serve --help)
  ask     ask the questions of a tool call through a running server and print the tool result
          (see askuser ask --server URL --help)
";

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
        Some("help" | "--help" | "-h") | None => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("askuser-server: unknown command {other:?}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// A command's options from `args`: `Err(0)` after printing `usage` for `-h`/`--help`, `Err(2)`
/// after saying what is wrong (prefixed with `who`) and printing `usage`.
fn options<T>(
    args: &[String],
    usage: &str,
    who: &str,
    parse: impl FnOnce(&[String]) -> Result<T, String>,
) -> Result<T, ExitCode> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        print!("{usage}");
        return Err(ExitCode::SUCCESS);
    }
    parse(args).map_err(|message| {
        eprintln!("{who}: {message}\n\n{usage}");
        ExitCode::from(2)
    })
}

/// `--flag=value` read as `--flag value`.
fn split_equals(args: &[String]) -> Vec<String> {
    args.iter()
        .flat_map(|a| match a.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => vec![flag.to_owned(), value.to_owned()],
            _ => vec![a.clone()],
        })
        .collect()
}

/// A positive number of seconds.
fn seconds(flag: &str, value: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = value.parse().map_err(|_| format!("{flag}: not a number of seconds: {value:?}"))?;
    std::time::Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{flag} must be a number of seconds above 0, got {value}"))
}

/// A profile name: `reference` (`standard` is taken for it too) or `extended`.
fn profile(name: &str) -> Result<askuser_core::Profile, String> {
    match name {
        "standard" => Ok(askuser_core::Profile::Reference),
        other => other.parse().map_err(|e: askuser_core::UnknownProfile| format!("--profile: {e}")),
    }
}
