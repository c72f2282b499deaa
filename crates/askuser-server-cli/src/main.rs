//! `askuser-server`: `serve` runs the answer server; `ask` asks the questions of a tool call
//! through one. `askuser serve …` and `askuser ask --server …` run this binary. See
//! `askuser-server --help` and `docs/server.md`.

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

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let command = args.next();
    let rest: Vec<String> = args.collect();
    match command.as_deref() {
        Some("serve") => serve::main(&rest),
        Some("ask") => ask::main(&rest),
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
