//! `askuser mcp` (feature `mcp`): `ask_user_question` as an MCP server on stdin/stdout, asked
//! through the host's form (elicitation). See `askuser mcp --help` and `docs/mcp.md`.

use std::fs::OpenOptions;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use std::sync::Arc;

use crate::cli::{self, Args, Command};
use askuser_client::{ApiToken, HttpAnswerer, Racing};
use askuser_core::{Profile, Validator};
use askuser_mcp::{AskUserServer, Fallback};
use askuser_terminal::{Mode, TerminalAnswerer};
use askuser_tool::{OnTimeout, SecretFile};
use rmcp::ServiceExt;

const USAGE: &str = "\
usage: askuser mcp [options]

Serves the ask_user_question tool over MCP on stdin/stdout. The MCP host shows the questions as a
form (elicitation); register the command in the host's MCP configuration (docs/mcp.md).

  --profile NAME         reference (default; also `standard`): multiple choice only; or
                         extended: text questions, declared defaults, ids, allow_other, and
                         results as data. Secret questions never go into the host's form: with
                         --secret-file and --fallback terminal (asked on /dev/tty) or --fallback
                         server (a password field on the answer server) they are asked there,
                         otherwise declined
  --fallback MODE        when the host cannot show a form: decline (default; the model is told
                         nobody could be asked), defaults (the recommended or first options,
                         marked unattended), terminal (ask on this machine's terminal,
                         /dev/tty; never on stdin/stdout, which carry MCP), or server URL (put
                         the questions on a running `askuser serve` at URL and wait there).
                         A chain, tried in order at every call: e.g.
                         --fallback terminal,server URL,decline: a call made while this process
                         has no terminal (a host that starts it without one) goes to the next,
                         and a call nobody could take tells the model why
  --token-file PATH      with --fallback server: the answer server's API token (default:
                         ASKUSER_TOKEN, else the token file askuser serve made in its data
                         directory)
  --secret-file PATH     (extended) where a secret answer's value goes: a NAME=value line in
                         PATH, created mode 0600 (an existing file others can read is refused);
                         the model gets only session:NAME. Without it a secret is declined
  --timeout DURATION     stop waiting after DURATION (seconds, or 90s, 5m, 2h); the model is
                         told nobody answered
  --on-timeout MODE      what the model is told then: stop (default: not to guess, to finish
                         only what does not depend on the answers, then stop and say what it
                         needs), decline (to make a reasonable choice and say which) or
                         defaults (the defaults, marked timeout)
  --name NAME            the name the form's message gives the server (default: askuser)
  --also server URL      show the questions in the host's form and on a running `askuser serve`
                         at URL (its page, notices, chat channels) at once: the first answer
                         wins, the other is retracted (the form cancelled, the page marked
                         answered). A host without forms asks the server alone (unless
                         --fallback says otherwise)
  --background           also offer ask_user_question_later (returns a ticket at once; the
                         person is asked on the side) and get_user_answers (the ticket's
                         answers, waiting up to 50 s): for hosts that cut long tool calls short.
                         The questions are kept in the store, so a ticket outlives this process;
                         a ticket asked from another working directory is refused
  --store sqlite:PATH    with --background: where tickets are kept (default: pending.db in the
                         user's data directory, the store askuser serve uses by default, so its
                         page can answer them too)

Logs and errors go to stderr.

To add it to an MCP host: askuser mcp install HOST (claude-code, claude-desktop, vscode,
vscode-user, cursor, windsurf, codex; askuser mcp install --help).
";

const MCP: Command = Command::new("askuser mcp", USAGE);

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
    /// The fallback chain, first to last (never empty).
    fallback: Vec<FallbackMode>,
    timeout: Option<Duration>,
    on_timeout: OnTimeout,
    name: String,
    profile: Profile,
    token_file: Option<PathBuf>,
    secret_file: Option<PathBuf>,
    background: bool,
    store: Option<String>,
    /// `--also server URL`: the answer server raced against the host's form.
    also: Option<String>,
}

fn parse(mut args: Args) -> Result<Options, String> {
    let mut options = Options {
        fallback: vec![FallbackMode::Decline],
        timeout: None,
        // A person away from the screen must not find the model's guesses on return.
        on_timeout: OnTimeout::Stop,
        name: "askuser".to_owned(),
        profile: Profile::Reference,
        token_file: None,
        secret_file: None,
        background: false,
        store: None,
        also: None,
    };
    let mut fallback_given = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--profile" => options.profile = cli::profile(&arg, &args.value(&arg, "a profile")?)?,
            "--fallback" => {
                let first = args.value(&arg, "decline, defaults, terminal or server URL")?;
                options.fallback = parse_fallback_chain(&first, &mut args)?;
                fallback_given = true;
            }
            "--timeout" => {
                options.timeout = Some(cli::seconds(&arg, &args.value(&arg, "a number of seconds")?)?);
            }
            "--on-timeout" => {
                options.on_timeout = cli::on_timeout(&arg, &args.value(&arg, "stop, decline or defaults")?)?;
            }
            "--name" => options.name = args.value(&arg, "a name")?,
            "--token-file" => options.token_file = Some(PathBuf::from(args.value(&arg, "a path")?)),
            "--secret-file" => options.secret_file = Some(PathBuf::from(args.value(&arg, "a path")?)),
            "--background" => options.background = true,
            "--also" => {
                let value = args.value(&arg, "server URL")?;
                let url = match value.split_once(' ') {
                    Some(("server", url)) => url.trim().to_owned(),
                    None if value == "server" => {
                        args.next().ok_or("--also server needs the answer server's URL")?
                    }
                    _ => return Err(format!("--also takes server URL, got {value:?}")),
                };
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(format!(
                        "--also server needs a URL starting with http:// or https://, got {url:?}"
                    ));
                }
                options.also = Some(url);
            }
            "--store" => {
                let url = args.value(&arg, "a store URL")?;
                if !url.starts_with("sqlite:") {
                    return Err(format!("--store takes sqlite:PATH, got {url:?}"));
                }
                options.store = Some(url);
            }
            other => return Err(cli::unknown(other)),
        }
    }
    if options.store.is_some() && !options.background {
        return Err("--store goes with --background (only background asks are kept in a store)".to_owned());
    }
    if let Some(url) = &options.also
        && !fallback_given
    {
        // A host without forms: the server alone, as the race would leave it.
        options.fallback = vec![FallbackMode::Server(url.clone())];
    }
    let has = |wanted: fn(&FallbackMode) -> bool| options.fallback.iter().any(wanted);
    if options.token_file.is_some() && !has(|m| matches!(m, FallbackMode::Server(_))) {
        return Err("--token-file goes with --fallback server URL or --also server URL".to_owned());
    }
    if options.secret_file.is_some() {
        if options.profile != Profile::Extended {
            return Err("--secret-file needs --profile extended (only it has secret questions)".to_owned());
        }
        if !has(|m| matches!(m, FallbackMode::Terminal | FallbackMode::Server(_))) {
            return Err("--secret-file goes with --fallback terminal or --fallback server URL".to_owned());
        }
    }
    Ok(options)
}

/// The value of `--fallback`: one step or a comma-separated chain (`terminal,server URL,decline`).
/// A `server` step's URL follows it after a space in the same argument, or is the next argument
/// (`--fallback terminal,server URL,decline` unquoted: the URL's argument may continue the chain
/// after a comma). `decline` and `defaults` always answer, so nothing may follow them.
fn parse_fallback_chain(
    first: &str,
    rest: &mut impl Iterator<Item = String>,
) -> Result<Vec<FallbackMode>, String> {
    const KINDS: &str = "decline, defaults, terminal or server URL";
    let mut text = first.to_owned();
    if text.rsplit(',').next().is_some_and(|last| last.trim() == "server") {
        let url = rest.next().ok_or("--fallback server needs the answer server's URL")?;
        text.push(' ');
        text.push_str(&url);
    }
    let mut chain = Vec::new();
    for step in text.split(',').map(str::trim) {
        if let Some(last @ (FallbackMode::Decline | FallbackMode::Defaults)) = chain.last() {
            let name = if *last == FallbackMode::Decline { "decline" } else { "defaults" };
            return Err(format!(
                "--fallback: {name} always answers, so {step:?} after it would never be reached"
            ));
        }
        let mode = match step.split_once(' ').map_or((step, ""), |(kind, url)| (kind, url.trim())) {
            ("decline", "") => FallbackMode::Decline,
            ("defaults", "") => FallbackMode::Defaults,
            ("terminal", "") => FallbackMode::Terminal,
            ("server", "") => return Err("--fallback server needs the answer server's URL".to_owned()),
            ("server", url) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(format!(
                        "--fallback server needs a URL starting with http:// or https://, got {url:?}"
                    ));
                }
                FallbackMode::Server(url.to_owned())
            }
            _ => {
                return Err(format!(
                    "--fallback takes {KINDS} (or a comma-separated chain of them), got {step:?}"
                ));
            }
        };
        chain.push(mode);
    }
    Ok(chain)
}

/// `--secret-file`, checked before anything is asked: nobody types a secret only to have it
/// refused.
fn secret_file(options: &Options) -> Result<Option<SecretFile>, String> {
    let Some(path) = &options.secret_file else { return Ok(None) };
    let file = SecretFile::new(path);
    file.check().map_err(|e| format!("--secret-file {}: {e}", path.display()))?;
    Ok(Some(file))
}

/// The working directory, as the person knows it (`~/src/app` under the home directory): part of
/// the asked-by label of every call.
fn workspace() -> Option<String> {
    let cwd = std::env::current_dir().ok()?;
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    Some(match home.as_deref().and_then(|home| cwd.strip_prefix(home).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) => format!("~/{}", rest.display()),
        None => cwd.display().to_string(),
    })
}

/// The fallback chain of `--fallback`: each step in order, a terminal step checked at every call
/// (a process started without a terminal still starts, and its calls go to the next step).
fn fallback(options: &Options) -> Result<Fallback, String> {
    let mut steps = options.fallback.iter().map(|mode| fallback_step(mode, options));
    let mut chain = steps.next().unwrap_or_else(|| Ok(Fallback::decline()))?;
    for step in steps {
        chain = chain.or_else(step?);
    }
    Ok(chain)
}

/// Why this process cannot ask on a terminal now, if it cannot.
fn terminal_available() -> Result<(), String> {
    // stdin and stdout carry MCP: the person can only be reached on the terminal itself.
    OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map(drop)
        .map_err(|e| format!("the terminal fallback: this process has no terminal (/dev/tty: {e})"))
}

fn fallback_step(mode: &FallbackMode, options: &Options) -> Result<Fallback, String> {
    Ok(match mode {
        FallbackMode::Decline => Fallback::decline(),
        FallbackMode::Defaults => Fallback::defaults(),
        FallbackMode::Server(url) => {
            let mut answerer = http_answerer(url, options, "--fallback server")?;
            if options.background {
                // A ticket's question is already in the store, which the answer server may read
                // too: it is waited on there, not asked a second time (issue 36.17).
                answerer = answerer.joins_stored_questions();
            }
            let described = format!(
                "the questions are put on the answer server at {url}, where the person answers them on a web page"
            );
            match secret_file(options)? {
                // The server takes a secret in a password field, never stores it, and hands it
                // to this process once (docs/server.md); it goes on only to the file.
                Some(file) => Fallback::answerer(answerer.secret_sink(file), described).takes_secrets(),
                None => Fallback::answerer(answerer, described),
            }
        }
        FallbackMode::Terminal => {
            if let Err(why) = terminal_available() {
                // Hosts that start servers without a terminal (the Python SDK's) must still get
                // the tool: each call checks again and falls through to the next step.
                eprintln!("askuser mcp: {why}; each call checks again, and goes on to the next fallback");
            }
            askuser_terminal::install_panic_hook();
            let described = "the questions are shown on the terminal where the MCP server runs";
            let terminal = TerminalAnswerer::builder().mode(Mode::Tty);
            let step = match secret_file(options)? {
                // The terminal reads a secret on /dev/tty behind a mask or with echo off, and the
                // value goes only to the file.
                Some(file) => {
                    Fallback::answerer(terminal.secret_sink(file).build(), described).takes_secrets()
                }
                None => Fallback::answerer(terminal.build(), described),
            };
            step.available_when(terminal_available)
        }
    })
}

/// An answerer asking through the answer server at `url` (`--fallback server`, `--also server`):
/// the token from `--token-file` or the usual places, links and retries said on stderr.
fn http_answerer(url: &str, options: &Options, flag: &str) -> Result<HttpAnswerer, String> {
    if askuser_client::is_cleartext_beyond_loopback(url) {
        eprintln!(
            "askuser mcp: warning: {url} is plain HTTP beyond this machine: the token, the answers and \
             any secret cross the network readable and changeable by anyone on the path; use https://"
        );
    }
    let token_flag = if options.token_file.is_some() { "--token-file" } else { flag };
    let token =
        ApiToken::for_client(options.token_file.as_deref()).map_err(|e| format!("{token_flag}: {e}"))?;
    let mut answerer = HttpAnswerer::new(url, token)
        .map_err(|e| format!("{flag}: {e}"))?
        // stdout carries MCP: the link goes to stderr, which hosts keep in their logs.
        .on_link(|link| eprintln!("askuser mcp: answer at {link}"))
        .on_retry(|e| {
            eprintln!(
                "askuser mcp: {}; trying again until the call's deadline",
                askuser_tool::exit::with_causes(e)
            );
        });
    if let Some(timeout) = options.timeout {
        answerer = answerer.timeout(timeout);
    }
    Ok(answerer)
}

/// The store of `--background`, opened.
async fn open_store(url: &str) -> Result<Arc<dyn askuser_store::PendingStore>, String> {
    let store = askuser_store::open(url).await.map_err(|e| {
        format!(
            "--background: cannot open the store {}: {}",
            askuser_store::redact_url(url),
            askuser_tool::exit::with_causes(&e)
        )
    })?;
    Ok(store)
}

/// The store URL of `--background`: `--store`, else `pending.db` in the data directory (created
/// mode 0700 when missing).
fn background_store(store: Option<&str>) -> Result<String, String> {
    if let Some(url) = store {
        return Ok(url.to_owned());
    }
    let dir = askuser_client::default_data_dir()
        .ok_or("--background: no home directory to keep tickets in: pass --store")?;
    if !dir.exists() {
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("--background: cannot create {}: {e}", dir.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| format!("--background: cannot make {} private: {e}", dir.display()))?;
        }
    }
    Ok(format!("sqlite:{}", dir.join("pending.db").display()))
}

/// Runs `askuser mcp ARGS` (the arguments after `mcp`) until the host closes stdin.
pub(crate) fn main(args: &[String]) -> ExitCode {
    if args.first().is_some_and(|a| a == "help") {
        return MCP.help();
    }
    let options = match MCP.options(args, parse) {
        Ok(options) => options,
        Err(status) => return status,
    };
    let fallback = match fallback(&options) {
        Ok(fallback) => fallback,
        Err(message) => {
            eprintln!("askuser mcp: {message}");
            return ExitCode::from(2);
        }
    };
    let mut builder = AskUserServer::builder()
        .name(options.name.as_str())
        .fallback(fallback)
        .validator(Validator::new())
        .profile(options.profile)
        .on_timeout(options.on_timeout);
    if let Some(timeout) = options.timeout {
        builder = builder.timeout(timeout);
    }
    if let Some(url) = &options.also {
        let server = match http_answerer(url, &options, "--also server") {
            Ok(server) => server,
            Err(message) => {
                eprintln!("askuser mcp: {message}");
                return ExitCode::from(2);
            }
        };
        builder = builder.also(move |form| Arc::new(Racing::new(server.clone(), form)));
    }
    let workspace_label = workspace();
    if let Some(workspace) = &workspace_label {
        builder = builder.workspace(workspace.as_str());
    }
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        // Started by hand: say what it waits for, instead of waiting silently.
        eprintln!(
            "askuser mcp: this is an MCP server: it speaks MCP on stdin and stdout, and an MCP host \
             starts it. To add it to one: askuser mcp install HOST (askuser mcp install --help). To \
             try askuser at this terminal: askuser demo. Ctrl-C stops it."
        );
    }
    // Two workers: a call's blocking work (the secret file locked and synced, the terminal's
    // reads) must not stall every other call and the protocol itself, as one thread did.
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("askuser mcp: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let store = options.background.then(|| background_store(options.store.as_deref()));
    let outcome = runtime.block_on(async move {
        if let Some(store) = store {
            builder = builder.background(
                open_store(&store?).await?,
                format!("askuser mcp in {}", workspace_label.as_deref().unwrap_or("?")),
            );
        }
        let server = builder.build();
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

    use askuser_testkit::args;

    #[test]
    fn parses_options() {
        let o = parse(Args::new(&args(&[
            "--fallback",
            "defaults",
            "--timeout=90",
            "--profile",
            "extended",
            "--name",
            "ci",
        ])))
        .unwrap();
        assert_eq!(
            (o.fallback, o.timeout, o.name.as_str(), o.profile),
            (vec![FallbackMode::Defaults], Some(Duration::from_secs(90)), "ci", Profile::Extended)
        );
        assert_eq!(parse(Args::new(&args(&["--profile", "standard"]))).unwrap().profile, Profile::Reference);
        assert_eq!(parse(Args::default()).unwrap().fallback, [FallbackMode::Decline]);
        assert_eq!(parse(Args::default()).unwrap().on_timeout, OnTimeout::Stop, "the default");
        assert_eq!(
            parse(Args::new(&args(&["--on-timeout", "decline"]))).unwrap().on_timeout,
            OnTimeout::Decline
        );
        assert!(parse(Args::new(&args(&["--on-timeout", "guess"]))).unwrap_err().contains("stop"));
    }

    #[test]
    fn also_races_a_server_and_asks_it_alone_without_a_form() {
        let url = "http://127.0.0.1:8765".to_owned();
        for also in
            [&["--also", "server", "http://127.0.0.1:8765"][..], &["--also", "server http://127.0.0.1:8765"]]
        {
            let o = parse(Args::new(&args(also))).unwrap();
            assert_eq!((o.also.as_ref(), o.fallback), (Some(&url), vec![FallbackMode::Server(url.clone())]));
        }
        let o =
            parse(Args::new(&args(&["--also", "server", "http://127.0.0.1:8765", "--fallback", "terminal"])))
                .unwrap();
        assert_eq!(o.fallback, [FallbackMode::Terminal], "an explicit --fallback stands");
        assert!(parse(Args::new(&args(&["--also", "server", "http://h", "--token-file", "/tmp/t"]))).is_ok());
    }

    #[test]
    fn parses_fallback_chains() {
        let server = || FallbackMode::Server("http://127.0.0.1:8765".to_owned());
        let chain = [FallbackMode::Terminal, server(), FallbackMode::Decline];
        // One quoted argument, or the URL as the next argument (the shell split it there).
        assert_eq!(
            parse(Args::new(&args(&["--fallback", "terminal,server http://127.0.0.1:8765,decline"])))
                .unwrap()
                .fallback,
            chain
        );
        assert_eq!(
            parse(Args::new(&args(&["--fallback", "terminal,server", "http://127.0.0.1:8765,decline"])))
                .unwrap()
                .fallback,
            chain
        );
        assert_eq!(
            parse(Args::new(&args(&["--fallback", "server", "http://127.0.0.1:8765"]))).unwrap().fallback,
            [server()]
        );
        assert_eq!(
            parse(Args::new(&args(&["--fallback=terminal, defaults"]))).unwrap().fallback,
            [FallbackMode::Terminal, FallbackMode::Defaults]
        );
    }

    #[test]
    fn rejects_bad_options() {
        for (bad, says) in [
            (&["--fallback"][..], "--fallback needs"),
            (&["--fallback", "phone"], "decline, defaults, terminal or server URL"),
            (&["--fallback", "terminal,phone"], "got \"phone\""),
            (&["--fallback", "decline,terminal"], "decline always answers, so \"terminal\" after it"),
            (&["--fallback", "defaults,server", "http://h"], "defaults always answers"),
            (&["--fallback", "server,terminal"], "needs the answer server's URL"),
            (&["--fallback", "terminal,server"], "needs the answer server's URL"),
            (&["--fallback", "server"], "needs the answer server's URL"),
            (&["--fallback", "server", "127.0.0.1:8765"], "http://"),
            (&["--token-file", "/tmp/t"], "goes with --fallback server"),
            (&["--fallback", "terminal", "--secret-file", "/tmp/s"], "needs --profile extended"),
            (&["--profile", "extended", "--secret-file", "/tmp/s"], "goes with --fallback terminal or"),
            (&["--profile", "extended", "--fallback", "defaults", "--secret-file", "/tmp/s"], "goes with"),
            (&["--profile", "lax"], "reference or extended"),
            (&["--timeout", "0"], "above 0"),
            (&["--timeout", "1e30"], "above 0"),
            (&["--timeout", "soon"], "not a duration"),
            (&["--frobnicate"], "unknown option"),
            (&["--store", "sqlite:/tmp/p.db"], "--store goes with --background"),
            (&["--also", "phone"], "--also takes server URL"),
            (&["--also", "server"], "--also server needs the answer server's URL"),
            (&["--also", "server", "ftp://x"], "http:// or https://"),
            (&["--background", "--store", "/tmp/p.db"], "--store takes sqlite:PATH"),
        ] {
            let error = parse(Args::new(&args(bad))).unwrap_err();
            assert!(error.contains(says), "{bad:?}: {error}");
        }
    }
}
