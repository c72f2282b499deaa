//! Running a hook: read the event, ask the answer server, wait, print the decision or step aside.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::cli::{self, Args};
use askuser_client::ApiToken;
use askuser_client::wire::{AskBody, AskReply, ErrorBody, WaitReply};
use askuser_core::Profile;
use askuser_store::{APPROVAL_TOOL_NAME, State};

use super::prompt::{self, Decision, Prompt};
use super::{Cli, DEFAULT_SERVER, DEFAULT_WAIT_SECS};

/// How long connecting to the server may take: an unreachable server hands the prompt back to
/// the terminal within 2 s (docs/contract.md §17: the person at the terminal is never locked out).
const CONNECT_LIMIT: Duration = Duration::from_millis(800);

/// How long the ask (`POST /v1/questions`) may take, connecting included.
const ASK_LIMIT: Duration = Duration::from_millis(1200);

/// How long the withdrawal of an ask whose reply never came may take: with [`ASK_LIMIT`], the
/// terminal asks within 2 s of a server that accepts connections and never answers.
const LOST_ASK_CANCEL_LIMIT: Duration = Duration::from_millis(400);

/// How long a withdrawal (`POST …/cancel`) may take before the hook steps aside anyway (the
/// question's lease then withdraws it).
const CANCEL_LIMIT: Duration = Duration::from_secs(1);

/// How long one wait asks the server to hold.
const POLL: Duration = Duration::from_secs(50);

/// The question stays answerable on the server this much longer than the hook waits, so that
/// the hook's withdrawal, not the server's expiry, ends it: every surface says it was withdrawn.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

/// The largest event read from stdin (a `Write` carries the whole file).
const MAX_EVENT_BYTES: u64 = 16 << 20;

#[derive(Debug)]
struct Options {
    server: String,
    token_file: Option<PathBuf>,
    wait: Duration,
    /// The watchdog's mode (see [`Watchdog`]): the question to withdraw unless its hook says
    /// it is done.
    withdraw_unless_done: Option<String>,
}

fn parse(mut args: Args) -> Result<Options, String> {
    let mut options = Options {
        server: DEFAULT_SERVER.to_owned(),
        token_file: None,
        wait: Duration::from_secs(DEFAULT_WAIT_SECS),
        withdraw_unless_done: None,
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--server" => args.value(&arg, "a URL")?.trim_end_matches('/').clone_into(&mut options.server),
            "--token-file" => options.token_file = Some(args.value(&arg, "a path")?.into()),
            "--wait" => options.wait = cli::seconds(&arg, &args.value(&arg, "a number of seconds")?)?,
            "--withdraw-unless-done" => {
                options.withdraw_unless_done = Some(args.value(&arg, "a question id")?);
            }
            other => return Err(cli::unknown(other)),
        }
    }
    if !(options.server.starts_with("http://") || options.server.starts_with("https://")) {
        return Err(format!("--server takes an http:// or https:// URL, got {:?}", options.server));
    }
    Ok(options)
}

/// `askuser hook claude-code|codex ARGS`. Exit 0 in every case the hook handled (a decision
/// printed, or nothing: the CLI asks itself); 1, with a line on stderr, for a hook that cannot
/// run as configured or an event it cannot read: a non-blocking error for both CLIs, which then
/// ask at the terminal. Never 2, which both read as "block the tool".
pub(super) fn main(cli: Cli, args: &[String]) -> ExitCode {
    let name = format!("askuser hook {}", cli.id());
    let options = match parse(Args::new(args)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{name}: {message} (askuser hook --help); the CLI asks at its terminal");
            return ExitCode::FAILURE;
        }
    };
    if let Some(id) = &options.withdraw_unless_done {
        return watchdog(&options, id);
    }
    let mut text = String::new();
    if let Err(e) = std::io::stdin().take(MAX_EVENT_BYTES).read_to_string(&mut text) {
        eprintln!("{name}: cannot read the event on stdin: {e}");
        return ExitCode::FAILURE;
    }
    let home = std::env::var("HOME").ok();
    let event = match prompt::read_event(cli, &text, home.as_deref()) {
        Ok(event) => event,
        Err(message) => {
            eprintln!("{name}: {message}");
            return ExitCode::FAILURE;
        }
    };
    let Some(asked) = event.prompt.clone() else { return ExitCode::SUCCESS };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("{name}: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut watchdog = None;
    let decision = runtime.block_on(carry(cli, &name, &options, &event, &asked, &mut watchdog));
    // Every way out of `carry` after the ask has the answer or has withdrawn the question.
    if let Some(watchdog) = watchdog {
        watchdog.done();
    }
    match decision {
        Decision::Print(value) => {
            crate::print_result(&value.to_string()).map_or_else(|_| ExitCode::FAILURE, |()| ExitCode::SUCCESS)
        }
        Decision::StepAside(why) => {
            eprintln!("{name}: {why}; {} asks at its terminal", cli.title());
            ExitCode::SUCCESS
        }
    }
}

/// A request to the server failed.
enum Failure {
    /// Connecting or reading failed, or it took too long.
    Unreachable(String),
    /// The server said no (the status and its message).
    Refused(u16, String),
}

impl Failure {
    fn show(&self, server: &str) -> String {
        match self {
            Self::Unreachable(e) => format!("no answer server at {server} ({e})"),
            Self::Refused(status, message) => format!("the answer server said {status}: {message}"),
        }
    }
}

struct Server {
    client: reqwest::Client,
    base: String,
    token: ApiToken,
}

impl Server {
    async fn call<T: serde::de::DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, Failure> {
        let unreachable =
            |e: reqwest::Error| Failure::Unreachable(askuser_tool::exit::with_causes(&e).clone());
        let response = request.bearer_auth(self.token.expose()).send().await.map_err(unreachable)?;
        let status = response.status();
        let text = askuser_client::reply::read_text(response, askuser_client::reply::MAX_REPLY_BYTES)
            .await
            .map_err(|e| Failure::Unreachable(askuser_tool::exit::with_causes(&e).clone()))?;
        if status.is_success() {
            return serde_json::from_str(&text)
                .map_err(|e| Failure::Unreachable(format!("an unexpected reply: {e}")));
        }
        Err(match serde_json::from_str::<ErrorBody>(&text) {
            Ok(body) => Failure::Refused(status.as_u16(), body.message),
            Err(_) => Failure::Refused(status.as_u16(), text.chars().take(200).collect()),
        })
    }

    async fn ask(&self, body: &AskBody) -> Result<AskReply, Failure> {
        let url = format!("{}/v1/questions", self.base);
        self.call(self.client.post(url).json(body).timeout(ASK_LIMIT)).await
    }

    async fn wait(&self, id: &str, hold: Duration) -> Result<WaitReply, Failure> {
        let url = format!("{}/v1/questions/{}/wait", self.base, askuser_client::encode_segment(id));
        let request = self
            .client
            .get(url)
            .query(&[("timeout_secs", hold.as_secs_f64())])
            .timeout(hold + Duration::from_secs(15));
        self.call(request).await
    }

    /// Withdraws the question; a failure leaves it to its lease.
    async fn cancel(&self, id: &str) {
        self.cancel_within(id, CANCEL_LIMIT).await;
    }

    async fn cancel_within(&self, id: &str, limit: Duration) {
        let url = format!("{}/v1/questions/{}/cancel", self.base, askuser_client::encode_segment(id));
        let _ = self.call::<serde_json::Value>(self.client.post(url).timeout(limit)).await;
    }
}

/// Asks the server and waits for the answer; the decision, or stepping aside.
async fn carry(
    cli: Cli,
    name: &str,
    options: &Options,
    event: &prompt::Event,
    asked: &Prompt,
    watchdog: &mut Option<Watchdog>,
) -> Decision {
    // Registered first: from here on a SIGTERM (Esc in Claude Code) or the CLI closing its end
    // of stdout (Claude Code does when the person answered its own prompt meanwhile) withdraws
    // the question.
    let signal = cli::first_signal();
    let gone = stdout_closed();
    let mut signal = std::pin::pin!(async move {
        tokio::select! {
            _ = signal => "the CLI stopped waiting (a signal)",
            () = gone => "the CLI no longer listens (it closed the hook's stdout)",
        }
    });
    let token = match ApiToken::for_client(options.token_file.as_deref()) {
        Ok(token) => token,
        Err(e) => {
            eprintln!("{name}: {}", askuser_tool::exit::with_causes(&e));
            return Decision::StepAside("no API token");
        }
    };
    let Ok(client) = reqwest::Client::builder().connect_timeout(CONNECT_LIMIT).build() else {
        return Decision::StepAside("no HTTP client");
    };
    let server = Server { client, base: options.server.clone(), token };
    let who = prompt::who_asks(cli, event.cwd.as_deref(), std::env::var("HOME").ok().as_deref());
    let (arguments, tool_name, base) = match asked {
        Prompt::Questions { arguments, .. } => {
            (arguments.clone(), "AskUserQuestion", event.tool_use_id.as_deref().unwrap_or("question"))
        }
        Prompt::Approval { header, question, suggestions } => (
            prompt::approval_arguments(header, question, suggestions.is_some()),
            APPROVAL_TOOL_NAME,
            event.tool_use_id.as_deref().unwrap_or("approval"),
        ),
    };
    let suffix = askuser_client::random_hex::<8>().unwrap_or_else(|_| std::process::id().to_string());
    let id = format!("{}-{suffix}", base.chars().take(200).collect::<String>());
    let body = AskBody {
        arguments,
        session_id: event.session_id.clone(),
        asked_by: Some(who),
        id: Some(id.clone()),
        timeout_secs: Some((options.wait + EXPIRY_MARGIN).as_secs_f64()),
        tool_name: Some(tool_name.to_owned()),
        profile: Some(Profile::Reference),
        live: true,
    };
    let reply = tokio::select! {
        biased;
        why = &mut signal => {
            server.cancel(&id).await;
            return Decision::StepAside(why);
        }
        reply = server.ask(&body) => reply,
    };
    let reply = match reply {
        Ok(reply) => reply,
        Err(failure) => {
            eprintln!("{name}: {}", failure.show(&options.server));
            if matches!(failure, Failure::Unreachable(_)) {
                // The ask may have arrived and only its reply been lost; should this fail too,
                // the question's lease withdraws it.
                server.cancel_within(&id, LOST_ASK_CANCEL_LIMIT).await;
            }
            return Decision::StepAside("the answer server did not take the question");
        }
    };
    eprintln!("{name}: answer at {}", reply.url);
    *watchdog = Watchdog::spawn(cli, options, &id);
    let settled = match settle(name, &server, &id, options, signal).await {
        Ok(settled) => settled,
        Err(decision) => return decision,
    };
    let record = &settled.record;
    let (State::Answered | State::Declined, Some(response)) = (record.state(), record.response()) else {
        return Decision::StepAside("the question was withdrawn or expired on the answer server");
    };
    match asked {
        Prompt::Questions { tool_input, .. } => {
            prompt::question_decision(tool_input, record.request().questions(), response)
        }
        Prompt::Approval { suggestions, .. } => {
            prompt::approval_decision(cli, response, suggestions.as_ref())
        }
    }
}

/// Long-polls until the question is settled; otherwise withdraws it and steps aside: at the
/// deadline, on a signal (Esc in Claude Code), or when the server goes away.
async fn settle(
    name: &str,
    server: &Server,
    id: &str,
    options: &Options,
    mut signal: std::pin::Pin<&mut impl Future<Output = &'static str>>,
) -> Result<WaitReply, Decision> {
    let deadline = tokio::time::Instant::now() + options.wait;
    loop {
        let hold = deadline.saturating_duration_since(tokio::time::Instant::now()).min(POLL);
        tokio::select! {
            biased;
            why = &mut signal => {
                server.cancel(id).await;
                return Err(Decision::StepAside(why));
            }
            () = tokio::time::sleep_until(deadline) => {
                server.cancel(id).await;
                return Err(Decision::StepAside("nobody answered in time; the question was withdrawn"));
            }
            waited = server.wait(id, hold) => match waited {
                Ok(reply) if reply.done => return Ok(reply),
                Ok(_) => {}
                Err(Failure::Refused(503, _)) => {
                    // The store or the server is restarting: try again in a moment.
                    tokio::select! {
                        why = &mut signal => {
                            server.cancel(id).await;
                            return Err(Decision::StepAside(why));
                        }
                        () = tokio::time::sleep(Duration::from_secs(1)) => {}
                    }
                }
                Err(failure) => {
                    eprintln!("{name}: {}", failure.show(&options.server));
                    server.cancel(id).await;
                    return Err(Decision::StepAside("the answer server went away"));
                }
            },
        }
    }
}

/// Resolves when the reading end of stdout is closed: the CLI no longer waits for a decision
/// (measured: Claude Code 2.1.332 closes it, and sends no signal, when the person answers its
/// own permission prompt while the hook waits). Never resolves where that cannot be watched.
#[cfg(unix)]
fn stdout_closed() -> impl Future<Output = ()> {
    let (closed, heard) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        use rustix::event::{PollFd, PollFlags, poll};
        let stdout = std::io::stdout();
        let fd = std::os::fd::AsFd::as_fd(&stdout);
        // No events asked for: poll reports only a hang-up, an error or a bad descriptor.
        let mut fds = [PollFd::new(&fd, PollFlags::empty())];
        loop {
            match poll(&mut fds, None) {
                Ok(_) if fds[0].revents().intersects(PollFlags::HUP | PollFlags::ERR) => {
                    let _ = closed.send(());
                    return;
                }
                Ok(_) if fds[0].revents().contains(PollFlags::NVAL) => return,
                Err(rustix::io::Errno::INTR) => {}
                // Nothing to report (not expected without a timeout): look again in a moment.
                Ok(_) => std::thread::sleep(Duration::from_millis(200)),
                Err(_) => return,
            }
        }
    });
    async move {
        if heard.await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(not(unix))]
fn stdout_closed() -> impl Future<Output = ()> {
    std::future::pending()
}

/// A process of its own group that withdraws the question when its hook dies without saying it
/// is done: measured, Codex 0.171.0 ends a waiting hook on Esc by killing its process group
/// (no signal the hook can catch), and the question would otherwise wait for its lease (30 s).
/// It reads its stdin, a pipe whose writing end only the hook holds: `done` means the hook
/// settled or withdrew the question itself; the end of the pipe without it, that the hook died.
struct Watchdog {
    pipe: std::process::ChildStdin,
}

impl Watchdog {
    /// `None` when it cannot be started: the lease is then the only fallback.
    fn spawn(cli: Cli, options: &Options, id: &str) -> Option<Self> {
        let mut command = std::process::Command::new(std::env::current_exe().ok()?);
        command.args(["hook", cli.id(), "--server", &options.server, "--withdraw-unless-done", id]);
        if let Some(path) = &options.token_file {
            command.arg("--token-file").arg(path);
        }
        // Not the CLI's stdout: the CLI reads the hook's until every holder closed it.
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command.spawn().ok()?;
        // Not waited for: it outlives the hook by design, and ends by itself.
        Some(Self { pipe: child.stdin? })
    }

    fn done(mut self) {
        use std::io::Write as _;
        let _ = self.pipe.write_all(b"done\n");
    }
}

/// The watchdog's mode: withdraws `id` unless stdin says `done` before it ends.
fn watchdog(options: &Options, id: &str) -> ExitCode {
    let mut said = String::new();
    let _ = std::io::stdin().take(64).read_to_string(&mut said);
    if said.trim() == "done" {
        return ExitCode::SUCCESS;
    }
    let Ok(token) = ApiToken::for_client(options.token_file.as_deref()) else { return ExitCode::FAILURE };
    let Ok(client) = reqwest::Client::builder().connect_timeout(CONNECT_LIMIT).build() else {
        return ExitCode::FAILURE;
    };
    let server = Server { client, base: options.server.clone(), token };
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
        return ExitCode::FAILURE;
    };
    runtime.block_on(server.cancel_within(id, Duration::from_secs(5)));
    ExitCode::SUCCESS
}
