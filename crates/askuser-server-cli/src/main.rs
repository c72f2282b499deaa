//! `askuser-server`: `serve` runs the answer server; `ask` asks the questions of a tool call
//! through one. `askuser serve …` and `askuser ask --server …` run this binary. See
//! `askuser-server --help` and `docs/server.md`.

mod ask;
mod serve;

use std::path::PathBuf;
use std::process::ExitCode;

use askuser_server::{ApiToken, TOKEN_ENV};

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

/// Where `serve` keeps its token by default when the store is not a local file, and where `ask`
/// looks for it: `DATA_DIR/token`.
fn default_token_file() -> Option<PathBuf> {
    askuser_server::default_data_dir().map(|d| d.join("token"))
}

/// The token for a client: `--token-file`, else `ASKUSER_TOKEN`, else the default token file.
fn client_token(token_file: Option<&PathBuf>) -> Result<ApiToken, String> {
    if let Some(path) = token_file {
        return ApiToken::read(path).map_err(|e| e.to_string());
    }
    if let Some(text) = std::env::var_os(TOKEN_ENV) {
        let text = text.into_string().map_err(|_| format!("{TOKEN_ENV} is not valid UTF-8"))?;
        return ApiToken::new(&text).map_err(|e| format!("{TOKEN_ENV}: {e}"));
    }
    match default_token_file() {
        Some(path) if path.is_file() => ApiToken::read(&path).map_err(|e| e.to_string()),
        _ => Err(format!(
            "no API token: pass --token-file PATH (the file askuser serve printed) or set {TOKEN_ENV}"
        )),
    }
}
