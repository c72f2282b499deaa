//! [`TerminalAnswerer`]: picks a mode per `ask()`, runs one menu at a time, restores the terminal.

use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use askuser_core::{
    AnswerError, AnsweredBy, Answerer, AskContext, AskUserRequest, AskUserResponse, QuestionKind, SecretSink,
    Timestamp, async_trait, check_response,
};
use crossterm::event::Event;
use tokio::sync::Mutex;

use crate::input::{CrosstermSource, InputSource};
use crate::line::{LineSource, ask_lines, stdin_lines, tty_lines};
use crate::menu::{Effect, Menu, MenuOutcome};
use crate::render::{Look, Painter, layout, summary, time_left};
use crate::secret::{TtySecret, discard_typed_input};

/// The default cap on a custom answer, in characters: the one every surface has.
pub const DEFAULT_MAX_CUSTOM_CHARS: usize = askuser_core::MAX_CUSTOM_CHARS;

/// Set while raw mode is on because a menu turned it on: what the panic hook undoes.
static RAW_BY_US: AtomicBool = AtomicBool::new(false);

/// What a guard writes on the way out: bracketed paste off, line wrap on, cursor shown, any
/// synchronized update ended.
const RESTORE: &[u8] = b"\x1b[?2004l\x1b[?7h\x1b[?25h\x1b[?2026l";

/// Restores the terminal from a panic hook, for builds with `panic = "abort"`, where no guard's
/// `Drop` runs. Chains to the hook installed before. Call it once, early.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if RAW_BY_US.swap(false, Ordering::SeqCst) {
            let _ = crossterm::terminal::disable_raw_mode();
            let mut err = io::stderr();
            let _ = err.write_all(RESTORE);
            let _ = err.write_all(b"\r\n");
            let _ = err.flush();
        }
        previous(info);
    }));
}

/// How the questions are put to the person.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// Chosen per `ask()`: the interactive menu when stdin and the output are terminals (and the
    /// terminal is at least 20 × 6 and not `TERM=dumb`), the accessible mode when `ACCESSIBLE` or
    /// `ASKUSER_ACCESSIBLE` is set or the terminal is too small, else the line protocol on stdin.
    #[default]
    Auto,
    /// The interactive menu on the controlling terminal (`/dev/tty`), even when stdin is not a
    /// terminal: for a program whose stdin carries data. When the accessible mode is on, or the
    /// terminal is smaller than 20 × 6, the line protocol instead, its lines also read from
    /// `/dev/tty`, never from stdin.
    Tty,
    /// The line protocol on stdin: numbered questions answered one line at a time, as for a
    /// script. The accessible mode is this same protocol: [`TerminalAnswererBuilder::accessible`]
    /// picks it under [`Mode::Auto`] (and reads `/dev/tty` under [`Mode::Tty`]).
    Lines,
}

/// Settings fixed at build time.
#[derive(Debug, Clone)]
#[expect(clippy::struct_excessive_bools, reason = "independent settings, each set by its own builder method")]
struct Config {
    mode: Mode,
    accessible: bool,
    no_color: bool,
    ascii: bool,
    max_custom_chars: usize,
    size: Option<(u16, u16)>,
    bell: bool,
}

/// Injected input and output; `None` means the real terminal.
struct Io {
    input: Option<Box<dyn InputSource>>,
    lines: Option<Box<dyn LineSource>>,
    output: Option<Box<dyn Write + Send>>,
}

/// The process's one queue for the terminal (see [`TerminalAnswerer::ask`]). tokio's mutex is
/// fair: calls are served in order, and a call cancelled while waiting never draws.
static TERMINAL: Mutex<()> = Mutex::const_new(());

struct Inner {
    config: Config,
    /// Told why a menu is closed from outside, when the code that races it knows.
    closing: Option<Closing>,
    /// Where a secret answer's value goes; without one, secret questions are declined.
    secrets: Option<Arc<dyn SecretSink>>,
    /// Held for the whole of one `ask()`. tokio's mutex is fair, so calls are served in order,
    /// and a call cancelled while waiting never draws.
    io: Mutex<Io>,
}

/// Asks a person on the terminal: an inline menu, or a line protocol when there is no terminal.
///
/// Cheap to clone. Concurrent calls show one menu at a time, in order, across every answerer of
/// the process (two capabilities in a tool set, one per sub-agent), unless an answerer's input and
/// output are both the host's.
/// Dropping an `ask()` future (a timeout, `select!`) restores the terminal and leaves the next
/// line the person types to whoever reads next.
#[derive(Clone)]
pub struct TerminalAnswerer {
    inner: Arc<Inner>,
}

impl fmt::Debug for TerminalAnswerer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TerminalAnswerer").field("config", &self.inner.config).finish_non_exhaustive()
    }
}

impl Default for TerminalAnswerer {
    fn default() -> Self {
        Self::new()
    }
}

impl TerminalAnswerer {
    /// An answerer on the real terminal with every setting at its default.
    #[must_use]
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// A builder.
    pub fn builder() -> TerminalAnswererBuilder {
        TerminalAnswererBuilder::new()
    }

    /// Puts `request` to the person and waits for the answers.
    ///
    /// # Errors
    ///
    /// [`AnswerError::interrupted`] on Ctrl-C; [`AnswerError::failed`] when the terminal fails,
    /// or when the input (stdin, or the host's lines) ends before the first answer line: nobody
    /// was there to ask. Declining is not an error: it is [`AskUserResponse::declined`].
    pub async fn ask(&self, request: &AskUserRequest) -> Result<AskUserResponse, AnswerError> {
        self.ask_in(request, &AskContext::new()).await
    }

    /// [`ask`](Self::ask) for the session in `context`: a secret answer's value goes to the
    /// [`secret_sink`](TerminalAnswererBuilder::secret_sink) under that session before this
    /// returns, and the answer carries only `session:NAME`. Without a sink, a secret question is
    /// declined without being asked, saying why on the output.
    ///
    /// # Errors
    ///
    /// As [`ask`](Self::ask); also [`AnswerError::failed`] when the sink refuses the secret.
    pub async fn ask_in(
        &self,
        request: &AskUserRequest,
        context: &AskContext,
    ) -> Result<AskUserResponse, AnswerError> {
        let mut io = self.inner.io.lock().await;
        let has_secret = request.questions().iter().any(|q| q.kind() == QuestionKind::Secret);
        if has_secret && self.inner.secrets.is_none() {
            let message = "The assistant asked for a secret, but this program has nowhere to keep \
                           one: declined without asking.\n";
            // Said where the question would have been drawn, so the person sees why.
            let mut default_out;
            let out: &mut (dyn Write + Send) = if let Some(out) = io.output.as_mut() {
                out.as_mut()
            } else {
                default_out = default_output(&route(&self.inner.config, &io));
                default_out.as_mut()
            };
            let _ = out.write_all(message.as_bytes());
            let _ = out.flush();
            return Ok(AskUserResponse::declined());
        }
        // Raw mode, crossterm's reader, stdin and the screen belong to the process, not to one
        // answerer: every answerer that uses any of them waits its turn in one queue.
        let fully_injected = io.output.is_some() && (io.input.is_some() || io.lines.is_some());
        let _turn = if fully_injected { None } else { Some(TERMINAL.lock().await) };
        let outcome = run(
            &self.inner.config,
            self.inner.closing.as_ref(),
            &mut io,
            request,
            context.asked_by.as_deref(),
        )
        .await
        .map_err(|e| AnswerError::failed("the terminal failed").with_source(e))?;
        response(request, outcome, self.inner.secrets.as_deref(), context).await
    }
}

/// What `ask()` returns for `outcome`. Answers pass core's `check_response` first, so a bug in
/// the menu or the line protocol fails the call here instead of reaching the model.
async fn response(
    request: &AskUserRequest,
    outcome: MenuOutcome,
    secrets: Option<&dyn SecretSink>,
    context: &AskContext,
) -> Result<AskUserResponse, AnswerError> {
    match outcome {
        MenuOutcome::Secret(answer, value) => {
            let response = AskUserResponse::answered(vec![answer]);
            check_response(request, &response)
                .map_err(|e| AnswerError::failed("the answer does not fit the question").with_source(e))?;
            let (Some(sink), Some(name)) = (secrets, request.questions().as_slice()[0].secret_name()) else {
                return Err(AnswerError::failed("no secret sink to hand the secret to"));
            };
            // The value goes to the sink before the answer (its reference only) returns.
            sink.put(context, name, value)
                .await
                .map_err(|e| AnswerError::failed("the secret could not be stored").with_source(e))?;
            Ok(response)
        }
        MenuOutcome::Answered(answers) => {
            let response = AskUserResponse::answered(answers);
            check_response(request, &response)
                .map_err(|e| AnswerError::failed("the answers do not fit the questions").with_source(e))?;
            Ok(response)
        }
        MenuOutcome::Declined => Ok(AskUserResponse::declined()),
        MenuOutcome::Unasked => Ok(AskUserResponse::declined().with_answered_by(AnsweredBy::Unattended)),
        MenuOutcome::Interrupted => Err(AnswerError::interrupted()),
        MenuOutcome::NoInput => {
            Err(AnswerError::failed("nobody could be asked: the input ended before the first answer"))
        }
    }
}

#[async_trait]
impl Answerer for TerminalAnswerer {
    async fn answer(
        &self,
        request: AskUserRequest,
        context: AskContext,
    ) -> Result<AskUserResponse, AnswerError> {
        self.ask_in(&request, &context).await
    }
}

/// Why a menu is closed from outside, told by the code that races it (a shared handle: clone it
/// into the racing code, give it to [`TerminalAnswererBuilder::closing`]). A menu whose `ask()`
/// is dropped leaves one line in the scrollback: the answers given elsewhere, "Nobody answered in
/// time" once the deadline set here has passed, or else "The assistant's question was withdrawn".
///
/// ```
/// use askuser_core::{AskUserAnswer, AskUserResponse};
/// use askuser_terminal::{Closing, TerminalAnswerer};
///
/// let closing = Closing::new();
/// let menu = TerminalAnswerer::builder().closing(closing.clone()).build();
/// // ... the other surface answered first; then the menu's ask() is dropped:
/// closing.settled_elsewhere("on the answer server", &AskUserResponse::answered(vec![AskUserAnswer::picked("Plan", ["Large"])]));
/// # drop(menu);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Closing(Arc<std::sync::Mutex<ClosingState>>);

#[derive(Debug, Default)]
struct ClosingState {
    elsewhere: Option<crate::render::Closed>,
    deadline: Option<std::time::Instant>,
}

impl Closing {
    /// Nothing known yet: a menu closed now says its question was withdrawn.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The question was settled on another surface (`place`, as it reads after "Answered" or
    /// "Declined": `"on the answer server"`) with `response`.
    pub fn settled_elsewhere(&self, place: impl Into<String>, response: &AskUserResponse) {
        let answers = (!response.cancelled).then(|| response.answers.clone());
        self.state().elsewhere = Some(crate::render::Closed::Elsewhere { place: place.into(), answers });
    }

    /// The question's deadline: a menu closed at or after it says nobody answered in time.
    pub fn deadline(&self, deadline: std::time::Instant) {
        self.state().deadline = Some(deadline);
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ClosingState> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Why a menu closed now was closed.
    fn why(&self) -> crate::render::Closed {
        let state = self.state();
        match (&state.elsewhere, state.deadline) {
            (Some(elsewhere), _) => elsewhere.clone(),
            (None, Some(deadline)) if std::time::Instant::now() >= deadline => {
                crate::render::Closed::TimedOut
            }
            (None, _) => crate::render::Closed::Withdrawn,
        }
    }
}

/// Builds a [`TerminalAnswerer`].
#[must_use]
pub struct TerminalAnswererBuilder {
    config: Config,
    io: Io,
    secrets: Option<Arc<dyn SecretSink>>,
    closing: Option<Closing>,
}

impl fmt::Debug for TerminalAnswererBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TerminalAnswererBuilder").field("config", &self.config).finish_non_exhaustive()
    }
}

fn env_set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty())
}

impl TerminalAnswererBuilder {
    fn new() -> Self {
        let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()));
        let utf8 = locale.is_none_or(|l| l.to_ascii_lowercase().replace('-', "").contains("utf8"));
        let linux_console = std::env::var("TERM").is_ok_and(|t| t == "linux");
        Self {
            config: Config {
                mode: Mode::Auto,
                accessible: false,
                no_color: env_set("NO_COLOR"),
                ascii: !utf8 || linux_console,
                max_custom_chars: DEFAULT_MAX_CUSTOM_CHARS,
                size: None,
                bell: !env_set("NO_BELL"),
            },
            io: Io { input: None, lines: None, output: None },
            secrets: None,
            closing: None,
        }
    }

    /// Where the value of a secret question (extended profile) goes: the answerer hands it to
    /// `sink` under the call's session, then answers with `session:NAME` only. The value is typed
    /// with nothing echoed but a mask (the menu) or nothing (the line protocol, on `/dev/tty`),
    /// and never drawn afterwards. Default: none, and a secret question is declined unasked.
    pub fn secret_sink(mut self, sink: impl SecretSink + 'static) -> Self {
        self.secrets = Some(Arc::new(sink));
        self
    }

    /// Where the code that races this answerer against other surfaces says why a menu was closed
    /// from outside, so the line left in the scrollback says what happened (answered elsewhere,
    /// nobody answered in time) instead of "withdrawn". See [`Closing`].
    pub fn closing(mut self, closing: Closing) -> Self {
        self.closing = Some(closing);
        self
    }

    /// The mode. Default: [`Mode::Auto`].
    pub fn mode(mut self, mode: Mode) -> Self {
        self.config.mode = mode;
        self
    }

    /// The accessible line mode when `true`: numbered questions answered one line at a time
    /// (the line protocol of [`Mode::Lines`]), on stdin, or on `/dev/tty` under [`Mode::Tty`].
    /// Default: off, unless `ACCESSIBLE` or `ASKUSER_ACCESSIBLE` is set.
    pub fn accessible(mut self, on: bool) -> Self {
        self.config.accessible = on;
        self
    }

    /// No colour codes at all (bold, dim and reverse remain). Default: on when `NO_COLOR` is set.
    pub fn no_color(mut self, on: bool) -> Self {
        self.config.no_color = on;
        self
    }

    /// Ring the bell and send a desktop notification (OSC 9, or OSC 777 on VTE, foot and urxvt)
    /// when questions open on the terminal: a question waiting in a background window gets
    /// noticed. Never for a host's own events. Default: on, unless `NO_BELL` is set.
    pub fn bell(mut self, on: bool) -> Self {
        self.config.bell = on;
        self
    }

    /// ASCII symbols only. Default: on for `TERM=linux` or a locale that is not UTF-8.
    pub fn ascii(mut self, on: bool) -> Self {
        self.config.ascii = on;
        self
    }

    /// The cap on a custom answer, in characters. Default: [`DEFAULT_MAX_CUSTOM_CHARS`].
    pub fn max_custom_chars(mut self, chars: usize) -> Self {
        self.config.max_custom_chars = chars.max(1);
        self
    }

    /// Events from the host instead of the terminal: the menu then creates no reader of its own
    /// and leaves raw mode and bracketed paste to the host. Default: the terminal.
    pub fn input(mut self, source: impl InputSource + 'static) -> Self {
        self.io.input = Some(Box::new(source));
        self
    }

    /// Answer lines from `source`: every `ask()` then uses the line protocol, whatever the mode
    /// (only [`input`](Self::input) takes precedence). Default: no source; the line protocol,
    /// when a mode chooses it, reads stdin through [`stdin_lines`](crate::stdin_lines), or
    /// `/dev/tty` under [`Mode::Tty`].
    pub fn lines(mut self, source: impl LineSource + 'static) -> Self {
        self.io.lines = Some(Box::new(source));
        self
    }

    /// Where to draw. Default: stderr; for the interactive menu, `/dev/tty` when stderr is not a
    /// terminal.
    pub fn output(mut self, out: impl Write + Send + 'static) -> Self {
        self.io.output = Some(Box::new(out));
        self
    }

    /// A fixed terminal size in columns and rows (resize events still change it). Default: asked
    /// of the terminal at each `ask()`, 80 × 24 when it does not say.
    pub fn size(mut self, cols: u16, rows: u16) -> Self {
        self.config.size = Some((cols, rows));
        self
    }

    /// The answerer.
    #[must_use]
    pub fn build(self) -> TerminalAnswerer {
        TerminalAnswerer {
            inner: Arc::new(Inner {
                config: self.config,
                closing: self.closing,
                secrets: self.secrets,
                io: Mutex::new(self.io),
            }),
        }
    }
}

/// Where to write when nothing was injected: stderr, or `/dev/tty` when stderr is redirected and
/// the person answers on the terminal (the menu, or lines read from `/dev/tty`).
fn default_output(route: &Route) -> Box<dyn Write + Send> {
    if matches!(route, Route::Terminal | Route::Lines { tty: true })
        && !io::stderr().is_terminal()
        && let Ok(tty) = OpenOptions::new().write(true).open("/dev/tty")
    {
        return Box::new(tty);
    }
    Box::new(io::stderr())
}

fn terminal_size(config: &Config) -> (u16, u16) {
    config.size.unwrap_or_else(|| match crossterm::terminal::size() {
        Ok((c, r)) if c > 0 && r > 0 => (c, r),
        _ => (80, 24),
    })
}

/// Which way one `ask()` goes.
enum Route {
    HostEvents,
    Terminal,
    /// The line protocol, on `/dev/tty` (under [`Mode::Tty`]) or stdin.
    Lines {
        tty: bool,
    },
}

fn route(config: &Config, io: &Io) -> Route {
    if io.input.is_some() {
        return Route::HostEvents;
    }
    let accessible = config.accessible || env_set("ACCESSIBLE") || env_set("ASKUSER_ACCESSIBLE");
    let usable =
        |size: (u16, u16)| size.0 >= 20 && size.1 >= 6 && std::env::var("TERM").map_or(true, |t| t != "dumb");
    match config.mode {
        _ if io.lines.is_some() => Route::Lines { tty: false },
        Mode::Lines => Route::Lines { tty: false },
        // Stdin carries data here: the person's lines come from the terminal, like the menu's keys.
        Mode::Tty if accessible || !usable(terminal_size(config)) => Route::Lines { tty: true },
        Mode::Tty => Route::Terminal,
        _ if accessible => Route::Lines { tty: false },
        _ => {
            let tty_in = io::stdin().is_terminal();
            let tty_out =
                io::stderr().is_terminal() || OpenOptions::new().write(true).open("/dev/tty").is_ok();
            if tty_in && tty_out && usable(terminal_size(config)) {
                Route::Terminal
            } else {
                Route::Lines { tty: false }
            }
        }
    }
}

async fn run(
    config: &Config,
    closing: Option<&Closing>,
    io: &mut Io,
    request: &AskUserRequest,
    asked_by: Option<&str>,
) -> io::Result<MenuOutcome> {
    let look = Look { color: !config.no_color, unicode: !config.ascii };
    let route = route(config, io);
    let mut default_out;
    let out: &mut (dyn Write + Send) = if let Some(out) = io.output.as_mut() {
        out.as_mut()
    } else {
        default_out = default_output(&route);
        default_out.as_mut()
    };
    match route {
        Route::Lines { tty } => {
            let mut stdin = stdin_lines();
            let mut terminal = tty_lines();
            let lines: &mut dyn LineSource = match io.lines.as_mut() {
                Some(lines) => lines.as_mut(),
                None if tty => &mut terminal,
                None => &mut stdin,
            };
            if tty && config.bell {
                // Read on the terminal: its person may be in another window.
                out.write_all(notification(request.questions().as_slice()).as_bytes())?;
            }
            ask_lines(request, lines, &mut TtySecret, out, config.max_custom_chars).await
        }
        Route::HostEvents => {
            let Some(source) = io.input.as_mut() else { return Ok(MenuOutcome::Declined) };
            let screen = Screen::open(
                out,
                closing.cloned(),
                Menu::new(request.clone(), config.max_custom_chars).asked_by(asked_by),
                look,
                terminal_size(config),
                false,
            )?;
            // A host with its own events draws its own attention.
            screen.run(source.as_mut(), false).await
        }
        Route::Terminal => {
            let screen = Screen::open(
                out,
                closing.cloned(),
                Menu::new(request.clone(), config.max_custom_chars).asked_by(asked_by),
                look,
                terminal_size(config),
                true,
            )?;
            // Both are gone before this future completes or is dropped, on every path: the guard
            // (owned by `run`) restores the terminal, and the stream is dropped, which stops its
            // reader thread so the next line typed goes to the next reader.
            let secret = request.questions().iter().any(|q| q.kind() == QuestionKind::Secret);
            let mut source = TerminalInput { source: Some(CrosstermSource::open()?), secret };
            let outcome = screen.run(&mut source, config.bell).await;
            source.secret = false;
            outcome
        }
    }
}

/// What draws the person's attention when questions open: the bell, and a desktop notification
/// through the terminal (OSC 777 where VTE, foot and urxvt read it, else OSC 9, which iTerm2,
/// `WezTerm`, Ghostty, kitty and Windows Terminal read). Its text is sanitised like everything
/// drawn: a header can end neither the sequence nor start another.
fn notification(questions: &[askuser_core::Question]) -> String {
    let what = match questions {
        [one] => crate::text::sanitize(one.header(), false).into_owned(),
        many => format!("{} questions", many.len()),
    };
    let what = crate::text::truncate(&what, 60);
    let term = std::env::var("TERM").unwrap_or_default();
    if env_set("VTE_VERSION") || term.starts_with("foot") || term.starts_with("rxvt") {
        format!("\x07\x1b]777;notify;The assistant asks;{what}\x1b\\")
    } else {
        format!("\x07\x1b]9;The assistant asks: {what}\x1b\\")
    }
}

/// Ticks every half second, from a thread of its own, until the receiver is dropped.
fn ticker() -> tokio::sync::mpsc::Receiver<()> {
    let (sender, receiver) = tokio::sync::mpsc::channel(1);
    std::thread::spawn(move || {
        while !sender.is_closed() {
            std::thread::sleep(std::time::Duration::from_millis(500));
            // Full: a tick is already waiting, one is enough.
            let _ = sender.try_send(());
        }
    });
    receiver
}

/// The terminal's events for one menu. For a secret question, a menu that goes without an outcome
/// (the call cancelled) also throws away every key already typed and not yet handled: part of a
/// secret must reach neither the next reader of the terminal nor the screen.
struct TerminalInput {
    source: Option<CrosstermSource>,
    /// Set while a secret question is open.
    secret: bool,
}

#[async_trait]
impl InputSource for TerminalInput {
    async fn next_event(&mut self) -> Option<io::Result<Event>> {
        self.source.as_mut()?.next_event().await
    }
}

impl Drop for TerminalInput {
    fn drop(&mut self) {
        // The stream first: its reader thread stops, and crossterm's queue can be read again.
        drop(self.source.take());
        if self.secret {
            // Keys the stopped thread had read wait in crossterm's queue; keys not yet read wait
            // in the terminal. Both go. The thread may hold the queue for a moment as it stops.
            for _ in 0..10 {
                while crossterm::event::poll(std::time::Duration::ZERO).unwrap_or(false) {
                    let _ = crossterm::event::read();
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            discard_typed_input();
        }
    }
}

/// A menu on screen. Its `Drop` is the terminal guard: on every way out (answer, decline,
/// interrupt, error, the future dropped, a panic unwinding) it replaces the block with a summary
/// and restores what it changed.
struct Screen<'a> {
    out: &'a mut (dyn Write + Send),
    closing: Option<Closing>,
    menu: Menu,
    painter: Painter,
    look: Look,
    size: (u16, u16),
    /// We own the terminal's modes (raw mode, bracketed paste); a host with its own events does.
    owns_terminal: bool,
    raw_by_us: bool,
    finished: bool,
}

impl<'a> Screen<'a> {
    fn open(
        out: &'a mut (dyn Write + Send),
        closing: Option<Closing>,
        menu: Menu,
        look: Look,
        size: (u16, u16),
        owns_terminal: bool,
    ) -> io::Result<Self> {
        let mut screen = Self {
            out,
            closing,
            menu,
            painter: Painter::default(),
            look,
            size,
            owns_terminal,
            raw_by_us: false,
            finished: false,
        };
        if owns_terminal {
            if !crossterm::terminal::is_raw_mode_enabled()? {
                crossterm::terminal::enable_raw_mode()?;
                screen.raw_by_us = true;
                RAW_BY_US.store(true, Ordering::SeqCst);
            }
            screen.out.write_all(b"\x1b[?2004h")?;
        }
        Ok(screen)
    }

    fn draw(&mut self) -> io::Result<()> {
        // Every frame shows the time left as of now, whatever made it (a key, a resize, a tick).
        self.menu.tick(Timestamp::now());
        let frame = layout(&self.menu, self.size.0, self.size.1, self.look);
        self.painter.paint(&frame, self.size, self.look, self.out)
    }

    /// Runs the menu to its outcome; `bell` rings and notifies once it is drawn.
    async fn run(mut self, source: &mut dyn InputSource, bell: bool) -> io::Result<MenuOutcome> {
        self.draw()?;
        if bell {
            self.out.write_all(notification(self.menu.questions()).as_bytes())?;
            self.out.flush()?;
        }
        // A countdown ticks every half second, from a thread: the host's runtime may have no
        // timer; the menu is drawn again only when the time it shows changes. The thread ends at
        // its first tick after the menu is gone.
        let mut ticks = self.menu.countdown.map(|_| ticker());
        loop {
            let next = source.next_event();
            tokio::pin!(next);
            // The same `next_event` future is kept across ticks: no event is lost to a tick.
            let event = loop {
                let tick = async {
                    match ticks.as_mut() {
                        Some(ticks) => ticks.recv().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    event = &mut next => break event,
                    Some(()) = tick => {
                        let shown = |menu: &Menu| menu.countdown.map(|c| (time_left(c.left), c.late));
                        let before = shown(&self.menu);
                        self.menu.tick(Timestamp::now());
                        if shown(&self.menu) != before {
                            self.draw()?;
                        }
                    }
                }
            };
            let Some(event) = event else {
                self.finish(&MenuOutcome::Declined)?;
                return Ok(MenuOutcome::Declined);
            };
            let effect = match event? {
                Event::Key(key) => self.menu.handle(key),
                Event::Paste(text) => self.menu.paste(&text),
                Event::Resize(cols, rows) => {
                    self.size = (cols.max(1), rows.max(1));
                    Effect::Redraw
                }
                _ => Effect::Ignored,
            };
            match effect {
                Effect::Ignored => {}
                Effect::Redraw => self.draw()?,
                Effect::Done(outcome) => {
                    self.finish(&outcome)?;
                    return Ok(outcome);
                }
            }
        }
    }

    fn finish(&mut self, outcome: &MenuOutcome) -> io::Result<()> {
        self.finished = true;
        let frame = summary(&self.menu, Some(outcome), self.size.0, self.look);
        self.painter.finish(&frame, self.look, self.out)
    }
}

impl Drop for Screen<'_> {
    fn drop(&mut self) {
        if !self.finished && self.painter.is_drawn() {
            let why = self.closing.as_ref().map_or(crate::render::Closed::Withdrawn, Closing::why);
            let frame = crate::render::closed(&why, self.size.0, self.look);
            let _ = self.painter.finish(&frame, self.look, self.out);
        }
        if self.owns_terminal {
            let _ = self.out.write_all(RESTORE);
        } else {
            let _ = self.out.write_all(b"\x1b[?7h\x1b[?25h\x1b[?2026l");
        }
        let _ = self.out.flush();
        if self.raw_by_us {
            let _ = crossterm::terminal::disable_raw_mode();
            RAW_BY_US.store(false, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use askuser_core::{AnswerErrorKind, AskUserAnswer, Questions};

    use super::*;

    /// Guards the check before returning: an answer that does not fit its request (here a header
    /// the request lacks, or nothing picked) fails the call rather than reaching the model.
    #[tokio::test(flavor = "current_thread")]
    async fn answers_are_checked_before_they_are_returned() {
        let request = AskUserRequest::new(
            Questions::from_json(
                r#"{"questions":[{"header":"H","question":"Q?","options":[{"label":"a"},{"label":"b"}]}]}"#,
            )
            .unwrap(),
        );
        let ok = MenuOutcome::Answered(vec![AskUserAnswer::picked("H", ["b"])]);
        let context = AskContext::new();
        let response = |outcome| response(&request, outcome, None, &context);
        assert_eq!(response(ok).await.unwrap().answers, [AskUserAnswer::picked("H", ["b"])]);
        for bad in [AskUserAnswer::picked("Nope", ["a"]), AskUserAnswer::picked("H", Vec::<String>::new())] {
            let err = response(MenuOutcome::Answered(vec![bad])).await.unwrap_err();
            assert_eq!(err.kind(), AnswerErrorKind::Failed);
        }
        assert_eq!(response(MenuOutcome::Declined).await.unwrap(), AskUserResponse::declined());
        assert_eq!(
            response(MenuOutcome::Unasked).await.unwrap(),
            AskUserResponse::declined().with_answered_by(AnsweredBy::Unattended)
        );
        assert_eq!(
            response(MenuOutcome::Interrupted).await.unwrap_err().kind(),
            AnswerErrorKind::Interrupted
        );
    }
}
