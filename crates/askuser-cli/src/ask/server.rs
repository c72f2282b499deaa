//! `askuser ask --server URL`: ask the questions of a tool call through a running answer server.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use askuser_client::{ApiToken, ClientError, HttpAnswerer, Racing, TOKEN_ENV, TokenSource};
use askuser_core::{AskContext, Profile, QuestionKind, Validator};
use askuser_store::AskedBy;
use askuser_tool::{AskUser, CallOutcome, OnTimeout, ToolCall, exit};

use super::failure;
use crate::cli::{self, Args, Command};

const USAGE: &str = "\
usage: askuser ask --server URL [FILE|-] [options]

Asks the questions of a tool call (JSON arguments from FILE, or stdin) through a running
`askuser serve`: prints the page link to answer at on stderr, waits, and prints the tool result
the model receives on stdout.

  --server URL        the server (as askuser serve printed it)
  --token-file PATH   the API token file (default: ASKUSER_TOKEN, else the file askuser serve
                      creates by default in the user's data directory)
  --session ID        the session (conversation) the questions belong to
  --label TEXT        who asks, shown beside the questions on the page, in lists and notices
                      (an agent, a project; at most 200 characters; default: the session)
  --timeout DURATION  give up after DURATION (seconds, or 90s, 5m, 2h; default 1h)
  --on-timeout MODE   what the model is told on timeout: decline (default; to make a reasonable
                      choice and say which), defaults (the defaults, marked timeout) or stop
                      (not to guess: to finish what does not depend on the answers and stop)
  --profile NAME      reference (default) or extended: text and secret questions, ids, defaults
                      (the server must run --profile extended)
  --secret-file PATH  where a secret answer's value goes (extended profile): NAME=value lines,
                      the file created mode 0600. Without it, a secret question is declined.
  --no-menu           do not also show the questions here: at a terminal (stderr and /dev/tty),
                      the menu opens beside the page once the server has the questions, and
                      whichever is answered first wins (the other is told)

Exit status, as for `askuser ask` at the terminal: 0 answered, 1 declined, 2 bad usage or invalid
arguments (the retry payload is printed), 3 nobody could be asked (the server refusing: a wrong
token, a bad request), 4 the result could not be written to stdout, 124 timed out, 130 interrupted (Ctrl-C),
129 or 143 ended by SIGHUP or SIGTERM (128 + the signal). The question is withdrawn from the
server on every early end. A server that is unreachable or unavailable (its database down) is
tried again, with backoff, until the timeout.
";

#[derive(Debug)]
struct Options {
    server: String,
    source: Option<String>,
    token_file: Option<PathBuf>,
    session: Option<String>,
    label: Option<AskedBy>,
    timeout: Duration,
    on_timeout: OnTimeout,
    profile: Profile,
    secret_file: Option<PathBuf>,
    menu: bool,
}

impl Options {
    /// Who asks: the label, else the session.
    fn asked_by(&self) -> Option<AskedBy> {
        self.label.clone().or_else(|| self.session.as_deref().and_then(AskedBy::lossy))
    }
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut server = None;
    let mut options = Options {
        server: String::new(),
        source: None,
        token_file: None,
        session: None,
        label: None,
        timeout: askuser_client::DEFAULT_TIMEOUT,
        on_timeout: OnTimeout::Decline,
        profile: Profile::Reference,
        secret_file: None,
        menu: true,
    };
    let args: Vec<String> = Args::new(args).collect();
    let mut args = args.iter().map(String::as_str);
    while let Some(arg) = args.next() {
        let mut value = |what: &str| args.next().ok_or_else(|| format!("{arg} needs {what}"));
        match arg {
            "--server" => server = Some(value("a URL")?.trim_end_matches('/').to_owned()),
            "--token-file" => options.token_file = Some(PathBuf::from(value("a path")?)),
            "--session" => options.session = Some(value("a session id")?.to_owned()),
            "--label" => {
                options.label = Some(AskedBy::new(value("a label")?).map_err(|e| format!("--label: {e}"))?);
            }
            "--timeout" => options.timeout = cli::seconds(arg, value("seconds")?)?,
            "--on-timeout" => {
                options.on_timeout = cli::on_timeout(arg, value("decline, defaults or stop")?)?;
            }
            "--profile" => options.profile = cli::profile("--profile", value("reference or extended")?)?,
            "--secret-file" => options.secret_file = Some(PathBuf::from(value("a path")?)),
            "--no-menu" => options.menu = false,
            "-" if options.source.is_none() => options.source = Some("-".to_owned()),
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag:?}")),
            file if options.source.is_none() => options.source = Some(file.to_owned()),
            extra => return Err(format!("unexpected argument {extra:?}")),
        }
    }
    options.server = server.ok_or("--server URL is required")?;
    if !(options.server.starts_with("http://") || options.server.starts_with("https://")) {
        return Err(format!("--server must start with http:// or https://, got {:?}", options.server));
    }
    Ok(options)
}

pub(crate) fn main(args: &[String]) -> ExitCode {
    let options =
        match Command::new("askuser", USAGE).options(args, |words| parse(&words.collect::<Vec<_>>())) {
            Ok(options) => options,
            Err(status) => return status,
        };
    // Checked before anything is asked: nobody types a secret only to have it refused.
    if let Some(path) = &options.secret_file
        && let Err(why) = askuser_tool::SecretFile::new(path).check()
    {
        say!("askuser: --secret-file {}: {why}", path.display());
        return ExitCode::from(2);
    }
    if askuser_client::is_cleartext_beyond_loopback(&options.server) {
        say!(
            "askuser: warning: {} is plain HTTP beyond this machine: the token, the answers and any secret \
             cross the network readable and changeable by anyone on the path; use https://",
            options.server
        );
    }
    let (text, timeout) = match cli::read_call("askuser", options.source.as_deref(), Some(options.timeout)) {
        Ok(read) => read,
        Err(error) => {
            say!("askuser: {error}");
            return ExitCode::from(error.exit_status());
        }
    };
    let options = Options { timeout: timeout.unwrap_or(options.timeout), ..options };
    let token = match ApiToken::for_client_from(options.token_file.as_deref()) {
        Ok(token) => token,
        Err(message) => {
            say!("askuser: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return failure(&e),
    };
    runtime.block_on(run(&text, &options, token))
}

async fn run(text: &str, options: &Options, (token, source): (ApiToken, TokenSource)) -> ExitCode {
    let server = options.server.clone();
    let mut answerer = match HttpAnswerer::new(&options.server, token) {
        Ok(answerer) => answerer
            .timeout(options.timeout)
            .on_link(|url| {
                say!("askuser: answer at {url}");
                crate::qr::show(url);
            })
            .on_retry(move |e| say!("askuser: {}", retry_message(&server, e))),
        Err(e) => return failure(&e),
    };
    if let Some(asked_by) = options.asked_by() {
        answerer = answerer.asked_by(asked_by);
    }
    let withdrawing = answerer.clone();
    let secret_declined = options.secret_file.is_none() && has_secret_question(text, options.profile);
    match &options.secret_file {
        Some(path) => answerer = answerer.secret_sink(askuser_tool::SecretFile::new(path)),
        None if secret_declined => {
            say!(
                "askuser: the questions include a secret; pass --secret-file PATH to receive its value. Declining."
            );
        }
        None => {}
    }
    // A batch declined for its secret is asked nowhere: no menu either.
    let closing = askuser_terminal::Closing::new();
    closing.deadline(std::time::Instant::now() + options.timeout);
    let terminal = if secret_declined { None } else { terminal(options, closing.clone()) };
    let builder = match terminal {
        Some(terminal) => AskUser::builder().answerer(Racing::new(answerer, terminal).on_settled_elsewhere(
            move |response| {
                closing.settled_elsewhere("on the answer server (its page, a chat or the API)", response);
            },
        )),
        None => AskUser::builder().answerer(answerer),
    };
    let ask_user = match builder
        .timeout(options.timeout)
        .on_timeout(options.on_timeout)
        .profile(options.profile)
        .build()
    {
        Ok(ask_user) => ask_user,
        Err(e) => return failure(&e),
    };
    let mut context = AskContext::new();
    if let Some(session) = &options.session {
        context = context.with_session_id(session.as_str());
    }
    let call = ask_user.call(ToolCall::new("askuser-cli", text), context);
    let ended = tokio::select! {
        outcome = call => Ok(outcome),
        signal = cli::first_signal() => Err(signal),
    };
    // However the call ended (an answer, Ctrl-C read as a key by the menu, an error, a signal),
    // a question it dropped on the server was withdrawn then: wait until the server has that, so
    // the person is not left answering on the phone a question nobody waits for.
    if tokio::time::timeout(WITHDRAW_WAIT, withdrawing.withdrawn()).await.is_err() {
        say!("askuser: the server did not confirm the withdrawal; the question expires at its deadline");
    }
    match ended {
        Ok(outcome) => exit_status(&outcome, &options.server, &source),
        Err(signal) => {
            say!("askuser: ended by {}", signal.name);
            ExitCode::from(signal.exit_status())
        }
    }
}

/// The terminal menu that races the server's surfaces: when a person is at this terminal
/// (stderr is one and `/dev/tty` opens) and `--no-menu` was not given. Secret questions are never
/// raced ([`Racing`] asks them at the terminal alone), so the menu gets the same secret file.
fn terminal(
    options: &Options,
    closing: askuser_terminal::Closing,
) -> Option<askuser_terminal::TerminalAnswerer> {
    use std::io::IsTerminal as _;
    let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").is_ok();
    if !options.menu || !tty || !std::io::stderr().is_terminal() {
        return None;
    }
    askuser_terminal::install_panic_hook();
    // The menu reads keys from /dev/tty: stdin may carry the call.
    let terminal =
        askuser_terminal::TerminalAnswerer::builder().mode(askuser_terminal::Mode::Tty).closing(closing);
    Some(match &options.secret_file {
        Some(path) => terminal.secret_sink(askuser_tool::SecretFile::new(path)).build(),
        None => terminal.build(),
    })
}

/// How long an ending command waits for the server to hear that its question is withdrawn.
const WITHDRAW_WAIT: Duration = Duration::from_secs(5);

/// Whether valid arguments hold a secret question (invalid ones fail later, with the retry payload).
fn has_secret_question(text: &str, profile: Profile) -> bool {
    Validator::new()
        .with_profile(profile)
        .validate_json(text)
        .is_ok_and(|questions| questions.iter().any(|q| q.kind() == QuestionKind::Secret))
}

/// What is said when a request to `server` failed and is tried again: a server that is not there
/// is named as such, with the command that starts one, in one line (not reqwest's chain).
fn retry_message(server: &str, error: &ClientError) -> String {
    match error {
        ClientError::Http(http) if http.is_connect() => {
            let root: &dyn std::error::Error = http;
            let cause = std::iter::successors(Some(root), |e| e.source()).last().unwrap_or(root);
            format!(
                "no answer server at {server} ({cause}): start one with `askuser serve` (it prints the \
                 URL to pass to --server); trying again until the timeout (Ctrl-C to stop)"
            )
        }
        other => format!("{}; trying again until the timeout", exit::with_causes(other)),
    }
}

/// The server's refusal of the token, when that is why `outcome` failed: it names where the token
/// came from, and how to pass another.
fn refused_token(outcome: &CallOutcome, server: &str, source: &TokenSource) -> Option<String> {
    let CallOutcome::Failed(error) = outcome else { return None };
    let refused = std::iter::successors(Some(error as &dyn std::error::Error), |e| e.source())
        .any(|e| matches!(e.downcast_ref::<ClientError>(), Some(ClientError::Api { status: 401, .. })));
    refused.then(|| {
        format!(
            "the answer server at {server} refused the API token from {source} (401): pass the \
             token file `askuser serve` printed (`API token in …`) with --token-file PATH, or set \
             {TOKEN_ENV}"
        )
    })
}

/// The same statuses and messages as the terminal path of `askuser ask` (`askuser_tool::exit`).
fn exit_status(outcome: &CallOutcome, server: &str, source: &TokenSource) -> ExitCode {
    if let Some(text) = outcome.model_text() {
        let mut stdout = std::io::stdout().lock();
        if let Err(e) = writeln!(stdout, "{text}").and_then(|()| stdout.flush()) {
            say!("askuser: cannot write the result to stdout: {e}");
            return ExitCode::from(exit::WRITE_FAILED);
        }
    }
    if let Some(message) = refused_token(outcome, server, source).or_else(|| outcome.exit_message()) {
        say!("askuser: {message}");
    }
    ExitCode::from(outcome.exit_status())
}

#[cfg(test)]
mod tests {
    use super::*;

    use askuser_testkit::args;

    #[test]
    fn parses_options() {
        let o =
            parse(&args(&["--server", "http://h:1/", "q.json", "--timeout=2", "--session", "s"])).unwrap();
        assert_eq!((o.server.as_str(), o.source.as_deref()), ("http://h:1", Some("q.json")));
        assert_eq!((o.timeout, o.session.as_deref()), (Duration::from_secs(2), Some("s")));
        assert_eq!(o.asked_by().unwrap().as_str(), "s", "the session, without a label");
        let o = parse(&args(&["--server", "http://h", "--session", "s", "--label", " codex "])).unwrap();
        assert_eq!(o.asked_by().unwrap().as_str(), "codex");
        let long = "x".repeat(201);
        assert!(
            parse(&args(&["--server", "http://h", "--label", &long])).unwrap_err().starts_with("--label: ")
        );
        assert!(parse(&args(&["q.json"])).unwrap_err().contains("--server"));
        assert!(parse(&args(&["--server", "h:1"])).unwrap_err().contains("http://"));
        assert!(parse(&args(&["--server", "http://h", "--timeout", "0"])).unwrap_err().contains("above 0"));
        let o = parse(&args(&["--server", "http://h", "--profile", "extended", "--secret-file", "/tmp/s"]))
            .unwrap();
        assert_eq!((o.profile, o.secret_file), (Profile::Extended, Some(PathBuf::from("/tmp/s"))));
        assert!(parse(&args(&["--server", "http://h", "--profile", "x"])).unwrap_err().contains("extended"));
    }

    #[test]
    fn finds_secret_questions() {
        let secret = r#"{"questions":[{"kind":"secret","header":"Token","question":"Your token?",
            "secret_name":"API_TOKEN","purpose":"To call the API"}]}"#;
        assert!(has_secret_question(secret, Profile::Extended));
        assert!(!has_secret_question(secret, Profile::Reference));
        assert!(!has_secret_question(r#"{"questions":[]}"#, Profile::Extended));
    }
}
