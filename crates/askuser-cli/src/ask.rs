//! `askuser ask` and `askuser demo`: put a batch of questions to the person at this terminal and
//! print the tool result the model would receive. `askuser ask --server` asks through an answer
//! server instead (`server.rs`, feature `server`).

#[cfg(feature = "server")]
pub(crate) mod server;

use std::fs::OpenOptions;
use std::process::ExitCode;
use std::time::Duration;

use crate::cli::{self, Args, Command};
use askuser_core::{
    AnswerError, AnsweredBy, Answerer, AskContext, AskUserRequest, AskUserResponse, DefaultsResponder,
    Profile, QuestionKind,
};
use askuser_terminal::{Mode, TerminalAnswerer};
use askuser_tool::{AskUser, OnTimeout, ToolCall};

pub(crate) const USAGE: &str = "\
usage: askuser ask [FILE|-] [options]     ask the questions of a tool call (JSON arguments)
       askuser demo [options]             ask a built-in batch of three questions

  FILE|-              the tool-call arguments; stdin when absent or -
  --timeout DURATION  give up after DURATION (seconds, or 90s, 5m, 2h)
  --on-timeout MODE   what the model is told on timeout: decline (default; to make a reasonable
                      choice and say which), defaults (the defaults, marked timeout) or stop
                      (not to guess: to finish what does not depend on the answers and stop)
  --unattended        answer at once with the defaults, asking nobody
  --accessible        numbered questions answered one line at a time
  --no-bell           no bell and no desktop notification when the questions open (also: NO_BELL)
  --profile PROFILE   (ask) reference (default) or extended: text and secret questions, ids,
                      defaults, allow_other, timeout_seconds, the result as data
  --secret-file PATH  (ask, extended) where a secret answer's value goes, as a NAME=value line;
                      created with mode 0600; an existing file must be 0600 (else refused,
                      exit 2). Without it a secret question is declined (exit 1), said on stderr

Through a running answer server (`askuser serve`) instead of this terminal, so the person can
answer on a phone (askuser ask --server URL --help lists every option there):
  --server URL        the server, as askuser serve printed it; the page link goes to stderr
  --token-file PATH   its API token file (default: ASKUSER_TOKEN, else the file askuser serve
                      made in the user's data directory)
  --session ID        the session (conversation) the questions belong to
  --label TEXT        who asks, shown beside the questions on the page and in notices
                      (default: the session)

The tool result goes to stdout, everything else to stderr.

exit status:
  0     answered (or the defaults, with --unattended)
  1     declined, and only that
  2     usage error, or invalid arguments (the retry payload is printed)
  3     could not ask: no terminal to ask on, the input ended before any answer,
        or the answerer failed
  4     the result could not be written to stdout
  124   timed out (waiting for the arguments or for the answers)
  130   interrupted (Ctrl-C, or SIGINT)
  129, 143  ended by SIGHUP or SIGTERM (128 + the signal); the terminal is restored first
";

// The exit statuses, as `USAGE` lists them.
use askuser_tool::exit as status;

/// `askuser ask` and `askuser demo`, which share their usage.
const ASK: Command = Command::new("askuser ask", USAGE);
const DEMO_COMMAND: Command = Command::new("askuser demo", USAGE);

/// The demo batch: what an assistant starting a new service might ask.
const DEMO: &str = r#"{"questions":[
  {"header":"Language","question":"Which language should I write the new billing service in?","options":[
    {"label":"Rust (Recommended)","description":"Fast and memory-safe; the team already maintains two Rust services"},
    {"label":"Go","description":"Simple deployment and quick builds"},
    {"label":"TypeScript","description":"Shares types with the web front end"}]},
  {"header":"Features","question":"Which features should the first version include?","multi_select":true,"options":[
    {"label":"Invoices","description":"Create, send and track invoices as PDF"},
    {"label":"Subscriptions","description":"Recurring plans with upgrades and proration"},
    {"label":"Admin panel","description":"An internal dashboard for the support team"},
    {"label":"Audit log","description":"Who changed what, and when"}]},
  {"header":"Deploy","question":"Where should it run?","options":[
    {"label":"Containers (Recommended)","description":"The Kubernetes cluster the team already runs"},
    {"label":"A single VM","description":"Cheapest; failover is manual"},
    {"label":"Serverless","description":"Scales to zero, but has cold starts"}]}]}"#;

#[derive(Debug)]
struct Options {
    source: Option<String>,
    timeout: Option<Duration>,
    on_timeout: OnTimeout,
    unattended: bool,
    accessible: bool,
    no_bell: bool,
    profile: Profile,
    secret_file: Option<std::path::PathBuf>,
}

fn parse(mut args: Args, takes_file: bool) -> Result<Options, String> {
    let mut options = Options {
        source: None,
        timeout: None,
        on_timeout: OnTimeout::Decline,
        unattended: false,
        accessible: false,
        no_bell: false,
        profile: Profile::Reference,
        secret_file: None,
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--timeout" => {
                options.timeout = Some(cli::seconds(&arg, &args.value(&arg, "a number of seconds")?)?);
            }
            "--on-timeout" => {
                options.on_timeout = cli::on_timeout(&arg, &args.value(&arg, "decline, defaults or stop")?)?;
            }
            "--profile" if takes_file => {
                options.profile = cli::profile(&arg, &args.value(&arg, "reference or extended")?)?;
            }
            "--secret-file" if takes_file => {
                let value = Some(args.value(&arg, "a path")?)
                    .filter(|v| !v.is_empty())
                    .ok_or("--secret-file needs a path")?;
                options.secret_file = Some(value.into());
            }
            "--unattended" => options.unattended = true,
            "--accessible" => options.accessible = true,
            "--no-bell" => options.no_bell = true,
            "-" if takes_file && options.source.is_none() => options.source = Some(arg),
            flag if flag.starts_with('-') => return Err(cli::unknown(flag)),
            _ if takes_file && options.source.is_none() => options.source = Some(arg),
            extra => return Err(cli::unknown(extra)),
        }
    }
    if options.secret_file.is_some() && options.profile != Profile::Extended {
        return Err("--secret-file needs --profile extended (only it has secret questions)".to_owned());
    }
    Ok(options)
}

/// `askuser ask [FILE|-] [options]`.
pub(crate) fn ask(args: &[String]) -> ExitCode {
    let options = match ASK.options(args, |args| parse(args, true)) {
        Ok(options) => options,
        Err(status) => return status,
    };
    // Checked before anything is asked: nobody types a secret only to have it refused.
    if let Some(path) = &options.secret_file
        && let Err(why) = askuser_tool::SecretFile::new(path).check()
    {
        eprintln!("askuser: --secret-file {}: {why}", path.display());
        return ExitCode::from(status::USAGE);
    }
    let from_stdin = options.source.as_deref().is_none_or(|s| s == "-");
    let (text, timeout) = match cli::read_call("askuser", options.source.as_deref(), options.timeout) {
        Ok(read) => read,
        Err(error) => {
            eprintln!("askuser: {error}");
            return ExitCode::from(error.exit_status());
        }
    };
    run(&text, &Options { timeout, ..options }, from_stdin)
}

/// `askuser demo [options]`.
pub(crate) fn demo(args: &[String]) -> ExitCode {
    match DEMO_COMMAND.options(args, |args| parse(args, false)) {
        Ok(options) => run(DEMO, &options, false),
        Err(status) => status,
    }
}

/// The answerer when nobody can be asked: stdin carried the arguments and there is no terminal.
/// The arguments are still validated first, so the model gets its retry when they are wrong.
async fn nobody_to_ask(_: AskUserRequest, _: AskContext) -> Result<AskUserResponse, AnswerError> {
    Err(AnswerError::failed(
        "nobody could be asked: stdin carried the arguments and there is no terminal to answer on",
    ))
}

/// The terminal without `--secret-file`: a secret question is declined before it is asked, with
/// a message on stderr that says how to collect it.
struct NoSecrets(TerminalAnswerer);

#[askuser_core::async_trait]
impl Answerer for NoSecrets {
    async fn answer(
        &self,
        request: AskUserRequest,
        context: AskContext,
    ) -> Result<AskUserResponse, AnswerError> {
        if let Some(name) = request
            .questions()
            .iter()
            .find(|q| q.kind() == QuestionKind::Secret)
            .and_then(|q| q.secret_name())
        {
            eprintln!(
                "askuser: the assistant asked for the secret {name}; declined without asking: \
                 pass --secret-file PATH to collect it"
            );
            // Nobody was asked: the model must not read this as the person's refusal.
            return Ok(AskUserResponse::declined().with_answered_by(AnsweredBy::Unattended));
        }
        self.0.answer(request, context).await
    }
}

/// Asks through the `AskUser` capability, so validation, the timeout and its policy, checking and
/// rendering are the ones an agent loop gets; only the exit status is the command's own.
fn run(text: &str, options: &Options, stdin_used: bool) -> ExitCode {
    let mut builder = AskUser::builder().on_timeout(options.on_timeout).profile(options.profile);
    if options.unattended {
        builder = builder.answerer(DefaultsResponder::new());
    } else {
        // When stdin carried the arguments, the person answers on the terminal itself (keys or lines).
        let tty = OpenOptions::new().read(true).write(true).open("/dev/tty").is_ok();
        if stdin_used && !tty {
            builder = builder.answerer(nobody_to_ask);
        } else {
            let mode = if stdin_used { Mode::Tty } else { Mode::Auto };
            askuser_terminal::install_panic_hook();
            let mut terminal = TerminalAnswerer::builder().mode(mode).accessible(options.accessible);
            if options.no_bell {
                terminal = terminal.bell(false);
            }
            builder = match &options.secret_file {
                Some(path) => {
                    builder.answerer(terminal.secret_sink(askuser_tool::SecretFile::new(path)).build())
                }
                None => builder.answerer(NoSecrets(terminal.build())),
            };
        }
        if let Some(limit) = options.timeout {
            builder = builder.timeout(limit);
        }
    }
    let ask_user = match builder.build() {
        Ok(ask_user) => ask_user,
        Err(e) => return failure(&e),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return failure(&e),
    };
    let call = ToolCall::new("askuser-cli", text);
    let outcome = runtime.block_on(async {
        let signal = cli::first_signal();
        tokio::select! {
            outcome = ask_user.call(call, AskContext::new()) => Ok(outcome),
            // The call's future is dropped first, which restores the terminal (raw mode, echo,
            // bracketed paste) and replaces the menu with its "withdrawn" summary.
            signal = signal => Err(signal),
        }
    });
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(signal) => {
            eprintln!("askuser: ended by {}", signal.name);
            return ExitCode::from(signal.exit_status());
        }
    };
    if let Some(text) = outcome.model_text()
        && let Err(code) = crate::print_result(text)
    {
        return code;
    }
    if let Some(message) = outcome.exit_message() {
        eprintln!("askuser: {message}");
    }
    ExitCode::from(outcome.exit_status())
}

/// Says that nobody could be asked, and why; the exit status that says so.
pub(crate) fn failure(error: &dyn std::error::Error) -> ExitCode {
    say!("askuser: could not ask: {}", askuser_tool::exit::with_causes(error));
    ExitCode::from(status::COULD_NOT_ASK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use askuser_core::Questions;

    use askuser_testkit::args;

    #[test]
    fn parses_options() {
        let o = parse(
            Args::new(&args(&["q.json", "--timeout", "1.5", "--on-timeout", "defaults", "--unattended"])),
            true,
        )
        .unwrap();
        assert_eq!(o.source.as_deref(), Some("q.json"));
        assert_eq!(o.timeout, Some(Duration::from_millis(1500)));
        assert_eq!(o.on_timeout, OnTimeout::ApplyDefaults);
        assert!(o.unattended && !o.accessible);
        assert_eq!(
            parse(Args::new(&args(&["-", "--accessible"])), true).unwrap().source.as_deref(),
            Some("-")
        );
        let o = parse(Args::new(&args(&["--timeout=2", "--on-timeout=defaults"])), false).unwrap();
        assert_eq!((o.timeout, o.on_timeout), (Some(Duration::from_secs(2)), OnTimeout::ApplyDefaults));
    }

    #[test]
    fn rejects_bad_options() {
        for bad in [
            &["--timeout"][..],
            &["--timeout", "0"],
            &["--timeout", "-1"],
            &["--timeout", "soon"],
            // Guards a panic: `Duration::from_secs_f64` aborts on a number this large.
            &["--timeout", "1e30"],
            &["--timeout", "NaN"],
            &["--timeout", "inf"],
            &["--timeout", "1e-12"],
            &["--on-timeout", "later"],
            &["--frobnicate"],
            &["a.json", "b.json"],
        ] {
            assert!(parse(Args::new(&args(bad)), true).is_err(), "{bad:?}");
        }
        assert!(parse(Args::new(&args(&["file.json"])), false).is_err(), "demo takes no file");
    }

    /// Guards the documentation of the exit statuses: every status the command uses is listed in
    /// `askuser ask --help`, in `askuser --help` and in docs/terminal.md.
    #[test]
    fn every_exit_status_is_documented() {
        let docs = include_str!("../../../docs/terminal.md");
        for code in [
            0,
            status::DECLINED,
            status::USAGE,
            status::COULD_NOT_ASK,
            crate::WRITE_FAILED,
            status::TIMED_OUT,
            status::INTERRUPTED,
            129,
            143,
        ] {
            assert!(
                USAGE.contains(&format!(" {code} ")) || USAGE.contains(&format!(" {code},")),
                "ask --help: {code}"
            );
            assert!(crate::USAGE.contains(&format!("{code} ")), "--help: {code}");
            assert!(
                docs.contains(&format!(" {code} |")) || docs.contains(&format!(" {code}, ")),
                "docs: {code}"
            );
        }
    }

    /// Guards the documentation of the options: every flag `askuser ask --help` lists is in
    /// docs/terminal.md's synopsis, and the flags `parse` knows are the ones listed.
    #[test]
    fn every_option_is_documented() {
        let docs = include_str!("../../../docs/terminal.md");
        let synopsis = docs.split("## `askuser ask` and `askuser demo`").nth(1).unwrap_or_default();
        let flags = [
            "--timeout",
            "--on-timeout",
            "--unattended",
            "--accessible",
            "--no-bell",
            "--profile",
            "--secret-file",
        ];
        for flag in flags {
            assert!(USAGE.contains(&format!("  {flag} ")), "ask --help: {flag}");
            assert!(synopsis.contains(flag), "docs/terminal.md: {flag}");
        }
        // The flags of `--server`, which `ask/server.rs` reads, are listed after it.
        let (terminal, server) = USAGE.split_once("Through a running answer server").unwrap();
        let listed = terminal.lines().filter(|l| l.trim_start().starts_with("--")).count();
        assert_eq!(listed, flags.len(), "a flag in --help this test does not know");
        for flag in ["--server", "--token-file", "--session", "--label"] {
            assert!(server.contains(&format!("  {flag} ")), "ask --help: {flag}");
            assert!(parse(Args::new(&args(&[flag, "x"])), true).is_err(), "{flag} is not the terminal's");
        }
        assert!(parse(Args::new(&args(&["--profile", "extended", "--secret-file", "s.env"])), true).is_ok());
    }

    #[test]
    fn the_demo_batch_is_valid() {
        let questions = Questions::from_json(DEMO).unwrap();
        assert_eq!(questions.len(), 3);
        assert_eq!(questions.iter().filter(|q| q.multi_select()).count(), 1);
        assert!(questions.iter().all(|q| q.options().iter().all(|o| o.description().is_some())));
    }
}
