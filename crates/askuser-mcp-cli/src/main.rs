//! `askuser-mcp`: `ask_user_question` as an MCP server on stdin/stdout, asked through the host's
//! form (elicitation). `askuser mcp …` runs this binary. See `askuser-mcp --help` and
//! `docs/mcp.md`.

use std::fs::OpenOptions;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use askuser_core::{Profile, Validator};
use askuser_mcp::{AskUserServer, Fallback};
use askuser_server::{ApiToken, HttpAnswerer, TOKEN_ENV};
use askuser_terminal::{Mode, TerminalAnswerer};
use rmcp::ServiceExt;

const USAGE: &str = "\
usage: askuser mcp [options]     (also: askuser-mcp [options])

Serves the ask_user_question tool over MCP on stdin/stdout. The MCP host shows the questions as a
form (elicitation); register the command in the host's MCP configuration (docs/mcp.md).

  --profile NAME         reference (default; also `standard`): multiple choice only; or
                         extended: text questions, declared defaults, ids, allow_other, and
                         results as data. Secret questions never go into the host's form: with
                         --fallback terminal they are asked on /dev/tty, otherwise declined
  --fallback MODE        when the host cannot show a form: decline (default; the model is told
                         nobody could be asked), defaults (the recommended or first options,
                         marked unattended), terminal (ask on this machine's terminal,
                         /dev/tty; never on stdin/stdout, which carry MCP), or server URL (put
                         the questions on a running `askuser serve` at URL and wait there)
  --token-file PATH      with --fallback server: the answer server's API token (default:
                         ASKUSER_TOKEN, else the token file askuser serve made in its data
                         directory)
  --timeout SECS         stop waiting after SECS seconds; the model is told nobody answered
  --name NAME            the name the form's message gives the server (default: askuser)

Logs and errors go to stderr.
";

#[derive(Debug, Clone, PartialEq, Eq)]
enum FallbackMode {
    Decline,
    Defaults,
    Terminal,
    /// An answer server's base URL.
    Server(String),
}

#[derive(Debug)]
struct Options {
    fallback: FallbackMode,
    timeout: Option<Duration>,
    name: String,
    profile: Profile,
    token_file: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        fallback: FallbackMode::Decline,
        timeout: None,
        name: "askuser".to_owned(),
        profile: Profile::Reference,
        token_file: None,
    };
    // `--timeout=5` is read as `--timeout 5`.
    let args: Vec<&str> = args
        .iter()
        .flat_map(|a| match a.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => vec![flag, value],
            _ => vec![a.as_str()],
        })
        .collect();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |what: &str| args.next().ok_or_else(|| format!("{arg} needs {what}"));
        match arg {
            "--profile" => {
                options.profile = match value("a profile")? {
                    // `standard` is what earlier builds called the reference profile.
                    "reference" | "standard" => Profile::Reference,
                    "extended" => Profile::Extended,
                    other => return Err(format!("--profile takes reference or extended, got {other:?}")),
                };
            }
            "--fallback" => {
                options.fallback = match value("decline, defaults, terminal or server URL")? {
                    "decline" => FallbackMode::Decline,
                    "defaults" => FallbackMode::Defaults,
                    "terminal" => FallbackMode::Terminal,
                    "server" => {
                        let url = args.next().ok_or("--fallback server needs the answer server's URL")?;
                        if !(url.starts_with("http://") || url.starts_with("https://")) {
                            return Err(format!(
                                "--fallback server needs a URL starting with http:// or https://, got {url:?}"
                            ));
                        }
                        FallbackMode::Server(url.to_owned())
                    }
                    other => {
                        return Err(format!(
                            "--fallback takes decline, defaults, terminal or server URL, got {other:?}"
                        ));
                    }
                };
            }
            "--timeout" => {
                let text = value("a number of seconds")?;
                let secs: f64 =
                    text.parse().map_err(|_| format!("--timeout: not a number of seconds: {text:?}"))?;
                // `try_from`: a huge number (`1e30`) is an error, not a panic.
                options.timeout =
                    Some(Duration::try_from_secs_f64(secs).ok().filter(|d| !d.is_zero()).ok_or_else(
                        || format!("--timeout must be a number of seconds above 0, got {text}"),
                    )?);
            }
            "--name" => value("a name")?.clone_into(&mut options.name),
            "--token-file" => options.token_file = Some(PathBuf::from(value("a path")?)),
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    if options.token_file.is_some() && !matches!(options.fallback, FallbackMode::Server(_)) {
        return Err("--token-file goes with --fallback server URL".to_owned());
    }
    Ok(options)
}

/// The answer server's token: `--token-file`, else `ASKUSER_TOKEN`, else the token file
/// `askuser serve` created in its data directory.
fn client_token(token_file: Option<&PathBuf>) -> Result<ApiToken, String> {
    if let Some(path) = token_file {
        return ApiToken::read(path).map_err(|e| format!("--token-file: {e}"));
    }
    if let Some(text) = std::env::var_os(TOKEN_ENV) {
        let text = text.into_string().map_err(|_| format!("{TOKEN_ENV} is not valid UTF-8"))?;
        return ApiToken::new(&text).map_err(|e| format!("{TOKEN_ENV}: {e}"));
    }
    match askuser_server::default_data_dir().map(|d| d.join("token")) {
        Some(path) if path.is_file() => ApiToken::read(&path).map_err(|e| e.to_string()),
        _ => Err(format!(
            "--fallback server: no API token: pass --token-file PATH (the file askuser serve printed) or set {TOKEN_ENV}"
        )),
    }
}

fn fallback(options: &Options) -> Result<Fallback, String> {
    Ok(match &options.fallback {
        FallbackMode::Decline => Fallback::decline(),
        FallbackMode::Defaults => Fallback::defaults(),
        FallbackMode::Server(url) => {
            let token = client_token(options.token_file.as_ref())?;
            let mut answerer = HttpAnswerer::new(url, token)
                .map_err(|e| format!("--fallback server: {e}"))?
                // stdout carries MCP: the link goes to stderr, which hosts keep in their logs.
                .on_link(|link| eprintln!("askuser mcp: answer at {link}"));
            if let Some(timeout) = options.timeout {
                answerer = answerer.timeout(timeout);
            }
            Fallback::answerer(
                answerer,
                format!(
                    "the questions are put on the answer server at {url}, where the person answers them on a web page"
                ),
            )
        }
        FallbackMode::Terminal => {
            // stdin and stdout carry MCP: the person can only be reached on the terminal itself.
            OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/tty")
                .map_err(|e| format!("--fallback terminal: this process has no terminal (/dev/tty: {e})"))?;
            askuser_terminal::install_panic_hook();
            // The terminal reads a secret on /dev/tty with echo off: the one safe place here.
            Fallback::answerer(
                TerminalAnswerer::builder().mode(Mode::Tty).build(),
                "the questions are shown on the terminal where the MCP server runs",
            )
            .takes_secrets()
        }
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help" || a == "help") {
        print!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let options = match parse(&args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("askuser mcp: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let fallback = match fallback(&options) {
        Ok(fallback) => fallback,
        Err(message) => {
            eprintln!("askuser mcp: {message}");
            return ExitCode::from(2);
        }
    };
    let mut builder = AskUserServer::builder()
        .name(options.name)
        .fallback(fallback)
        .validator(Validator::new())
        .profile(options.profile);
    if let Some(timeout) = options.timeout {
        builder = builder.timeout(timeout);
    }
    let server = builder.build();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("askuser mcp: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async move {
        let running = server.serve(rmcp::transport::stdio()).await.map_err(|e| e.to_string())?;
        running.waiting().await.map_err(|e| e.to_string())
    });
    match outcome {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("askuser mcp: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn parses_options() {
        let o = parse(&args(&[
            "--fallback",
            "defaults",
            "--timeout=90",
            "--profile",
            "extended",
            "--name",
            "ci",
        ]))
        .unwrap();
        assert_eq!(
            (o.fallback, o.timeout, o.name.as_str(), o.profile),
            (FallbackMode::Defaults, Some(Duration::from_secs(90)), "ci", Profile::Extended)
        );
        assert_eq!(parse(&args(&["--profile", "standard"])).unwrap().profile, Profile::Reference);
        assert_eq!(parse(&[]).unwrap().fallback, FallbackMode::Decline);
    }

    #[test]
    fn rejects_bad_options() {
        for (bad, says) in [
            (&["--fallback"][..], "--fallback needs"),
            (&["--fallback", "phone"], "decline, defaults, terminal or server URL"),
            (&["--fallback", "server"], "needs the answer server's URL"),
            (&["--fallback", "server", "127.0.0.1:8765"], "http://"),
            (&["--token-file", "/tmp/t"], "goes with --fallback server"),
            (&["--profile", "lax"], "reference or extended"),
            (&["--timeout", "0"], "above 0"),
            (&["--timeout", "1e30"], "above 0"),
            (&["--timeout", "soon"], "not a number"),
            (&["--frobnicate"], "unknown option"),
        ] {
            let error = parse(&args(bad)).unwrap_err();
            assert!(error.contains(says), "{bad:?}: {error}");
        }
    }
}
