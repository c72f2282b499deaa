//! The command-line support every subcommand shares: one argument reader, the option values they
//! have in common, the answer to `--help` and to a usage error, reading a tool call's arguments,
//! and the signals that end a wait. `ask`, `mcp`, `serve`, `pending` and the rest read their flags
//! through it, so `--timeout 1e300`, `--flag=value` and a mistyped option mean the same everywhere.

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, IsTerminal as _, Read as _, Write as _};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use askuser_core::{Profile, Validator};

use askuser_tool::OnTimeout;
use askuser_tool::exit::{TIMED_OUT, USAGE, WRITE_FAILED};

/// A command's name (as the person typed it: `askuser ask`) and its `--help` text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Command {
    name: &'static str,
    usage: &'static str,
}

impl Command {
    /// The command `name` (`"askuser ask"`), whose `--help` prints `usage`.
    #[must_use]
    pub(crate) const fn new(name: &'static str, usage: &'static str) -> Self {
        Self { name, usage }
    }

    /// The options `parse` reads from `args`; `Err` is the exit status after `-h`/`--help`
    /// printed the usage on stdout (0, or [`WRITE_FAILED`]), or after a usage error was reported
    /// ([`USAGE`], see [`usage_error`](Self::usage_error)).
    ///
    /// # Errors
    ///
    /// Help was asked for, or `parse` said what is wrong.
    pub(crate) fn options<T>(
        &self,
        args: &[String],
        parse: impl FnOnce(Args) -> Result<T, String>,
    ) -> Result<T, ExitCode> {
        if wants_help(args) {
            return Err(self.help());
        }
        parse(Args::new(args)).map_err(|message| self.usage_error(&message))
    }

    /// Prints the usage on stdout: status 0, or [`WRITE_FAILED`] when stdout cannot take it.
    #[must_use]
    pub(crate) fn help(&self) -> ExitCode {
        self.print("the help", self.usage)
    }

    fn print(&self, what: &str, text: &str) -> ExitCode {
        let mut stdout = io::stdout().lock();
        match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
            Ok(()) => ExitCode::SUCCESS,
            // A closed pipe (`--help | head`) is normal for a filter.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(e) => {
                say(format_args!("{}: cannot write {what} to stdout: {e}", self.name));
                ExitCode::from(WRITE_FAILED)
            }
        }
    }

    /// Says what is wrong in one line, and how to see the usage, on stderr: status [`USAGE`].
    #[must_use]
    pub(crate) fn usage_error(&self, message: &str) -> ExitCode {
        say(format_args!("{}: {message}\n{}", self.name, self.how_to_get_help()));
        ExitCode::from(USAGE)
    }

    /// `Run 'askuser ask --help' for the options.`
    #[must_use]
    pub(crate) fn how_to_get_help(&self) -> String {
        format!("Run '{} --help' for the options.", self.name)
    }
}

/// Writes `line` and a newline on stderr in one write, and goes on whatever happens to it.
/// `eprintln!` panics when stderr fails: a closed pipe (`serve 2>&1 | tee log` after Ctrl-C ended
/// `tee`), a full disk, a terminal gone. A command's messages are never worth its life, nor a
/// server's shutdown.
pub(crate) fn say(line: fmt::Arguments<'_>) {
    let mut text = line.to_string();
    text.push('\n');
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

/// Whether `args` ask for help (`-h` or `--help` anywhere, before a `--`).
#[must_use]
pub(crate) fn wants_help(args: &[String]) -> bool {
    args.iter().take_while(|a| *a != "--").any(|a| a == "-h" || a == "--help")
}

/// The words after a command's name, in order, `--flag=value` read as `--flag value`. An
/// iterator over them; [`value`](Self::value) takes the one an option needs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Args {
    words: VecDeque<String>,
}

impl Args {
    /// The words of `args`, each `--flag=value` split in two.
    #[must_use]
    pub(crate) fn new(args: &[String]) -> Self {
        let mut words = VecDeque::with_capacity(args.len());
        for arg in args {
            match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") && flag.len() > 2 => {
                    words.push_back(flag.to_owned());
                    words.push_back(value.to_owned());
                }
                _ => words.push_back(arg.clone()),
            }
        }
        Self { words }
    }

    /// The word after option `flag`, which needs `what` (for the message when it is missing).
    ///
    /// # Errors
    ///
    /// `"{flag} needs {what}"` when nothing follows.
    pub(crate) fn value(&mut self, flag: &str, what: &str) -> Result<String, String> {
        self.words.pop_front().ok_or_else(|| format!("{flag} needs {what}"))
    }

    /// Takes `name VALUE` out wherever it stands, for commands whose options may come anywhere
    /// (`askuser pending`).
    ///
    /// # Errors
    ///
    /// `name` is the last word.
    #[cfg(feature = "server")]
    pub(crate) fn take_option(&mut self, name: &str) -> Result<Option<String>, String> {
        let Some(at) = self.words.iter().position(|w| w == name) else { return Ok(None) };
        if at + 1 >= self.words.len() {
            return Err(format!("{name} needs a value"));
        }
        self.words.remove(at);
        Ok(self.words.remove(at))
    }

    /// Takes the flag `name` out wherever it stands, and says whether it was there.
    #[cfg(feature = "server")]
    pub(crate) fn take_flag(&mut self, name: &str) -> bool {
        let found = self.words.iter().position(|w| w == name);
        found.and_then(|at| self.words.remove(at)).is_some()
    }

    /// The words not taken yet.
    #[cfg(feature = "server")]
    #[must_use]
    pub(crate) fn rest(&self) -> Vec<String> {
        self.words.iter().cloned().collect()
    }
}

impl Iterator for Args {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        self.words.pop_front()
    }
}

/// The message for an option nobody knows, or a word nobody expected.
#[must_use]
pub(crate) fn unknown(word: &str) -> String {
    if word.starts_with('-') && word != "-" {
        format!("unknown option {word:?}")
    } else {
        format!("unexpected argument {word:?}")
    }
}

/// A positive duration: a number of seconds (`2`, `0.5`, `1e3`), or a number with the unit `s`,
/// `m`, `h` or `d` (`90s`, `5m`, `1.5h`, `2d`). Anything else, zero, or a duration too large for a
/// [`Duration`] (`1e300`) is an error naming `flag`, never a panic.
///
/// # Errors
///
/// `value` is not such a duration.
pub(crate) fn seconds(flag: &str, value: &str) -> Result<Duration, String> {
    let (number, unit) = match value.trim_end().char_indices().last() {
        Some((at, 's')) => (&value[..at], 1.0),
        Some((at, 'm')) => (&value[..at], 60.0),
        Some((at, 'h')) => (&value[..at], 3600.0),
        Some((at, 'd')) => (&value[..at], 86_400.0),
        _ => (value, 1.0),
    };
    let not_a_duration = || {
        format!("{flag}: not a duration: {value:?} (seconds, or a number with s, m, h or d: 90, 90s, 5m, 2h)")
    };
    // `f64` parses "inf" and "NaN", and "5e" + "m" must not read as seconds.
    if !number.trim().starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == '-' || c == '+') {
        return Err(not_a_duration());
    }
    let number: f64 = number.trim().parse().map_err(|_| not_a_duration())?;
    Duration::try_from_secs_f64(number * unit)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{flag} must be a duration above 0, got {value}"))
}

/// A profile name: `reference` (`standard`, what earlier builds called it) or `extended`.
///
/// # Errors
///
/// Another name.
pub(crate) fn profile(flag: &str, value: &str) -> Result<Profile, String> {
    match value {
        "reference" | "standard" => Ok(Profile::Reference),
        "extended" => Ok(Profile::Extended),
        other => Err(format!("{flag} takes reference or extended, got {other:?}")),
    }
}

/// What the model is told on a timeout: `decline`, `defaults` or `stop`.
///
/// # Errors
///
/// Another word.
pub(crate) fn on_timeout(flag: &str, value: &str) -> Result<OnTimeout, String> {
    match value {
        "decline" => Ok(OnTimeout::Decline),
        "defaults" => Ok(OnTimeout::ApplyDefaults),
        "stop" => Ok(OnTimeout::Stop),
        other => Err(format!("{flag} takes decline, defaults or stop, got {other:?}")),
    }
}

/// Why a tool call's arguments could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub(crate) enum ReadError {
    /// Nothing complete arrived within the timeout.
    TimedOut,
    /// More than [`Validator::DEFAULT_MAX_ARGUMENT_BYTES`] (reading stopped there).
    TooLarge,
    /// The file or stdin could not be read, or did not hold UTF-8.
    Io(io::Error),
}

impl ReadError {
    /// The exit status: [`TIMED_OUT`] for a timeout, else [`USAGE`].
    #[must_use]
    pub(crate) fn exit_status(&self) -> u8 {
        if matches!(self, Self::TimedOut) { TIMED_OUT } else { USAGE }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TimedOut => f.write_str("no arguments arrived within the timeout"),
            Self::TooLarge => write!(
                f,
                "the arguments are more than {} bytes, the limit (reading stopped there)",
                Validator::DEFAULT_MAX_ARGUMENT_BYTES
            ),
            Self::Io(e) => write!(f, "cannot read the arguments: {e}"),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            Self::TimedOut | Self::TooLarge => None,
        }
    }
}

/// Reads a tool call's arguments from `source` (a path; stdin when `None` or `-`): at most the
/// argument cap plus one byte (a bigger input is refused without being read whole), within
/// `timeout`, and returns them with the time that is left of it. Says on stderr, as `who`, that it
/// reads stdin when stdin is a terminal.
///
/// # Errors
///
/// See [`ReadError`].
pub(crate) fn read_call(
    who: &str,
    source: Option<&str>,
    timeout: Option<Duration>,
) -> Result<(String, Option<Duration>), ReadError> {
    let file = source.filter(|s| *s != "-").map(ToOwned::to_owned);
    if file.is_none() && io::stdin().is_terminal() {
        say(format_args!("{who}: reading the tool-call arguments from stdin (end with Ctrl-D)"));
    }
    let started = Instant::now();
    let limit = Validator::DEFAULT_MAX_ARGUMENT_BYTES as u64;
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    // On a thread, so that a timeout can give up on a read that never ends (a FIFO, a silent
    // pipe); the process exits without waiting for it.
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let read = match file {
            Some(path) => std::fs::File::open(&path)
                .and_then(|f| f.take(limit + 1).read_to_end(&mut bytes))
                .map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}"))),
            None => io::stdin().lock().take(limit + 1).read_to_end(&mut bytes),
        };
        let _ = tx.send(read.map(|_| bytes));
    });
    let received = match timeout {
        Some(timeout) => rx.recv_timeout(timeout).map_err(|_| ReadError::TimedOut)?,
        None => rx.recv().map_err(|_| ReadError::Io(io::Error::other("the reader thread failed")))?,
    };
    let bytes = received.map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge);
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        ReadError::Io(io::Error::new(io::ErrorKind::InvalidData, "the arguments are not valid UTF-8"))
    })?;
    // The timeout bounds the whole command: what reading the arguments took is spent.
    let left = timeout.map(|t| t.saturating_sub(started.elapsed()));
    if left.is_some_and(|t| t.is_zero()) {
        return Err(ReadError::TimedOut);
    }
    Ok((text, left))
}

/// A signal that ended a wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Signal {
    /// Its number (1 SIGHUP, 2 SIGINT, 15 SIGTERM): a command ends with 128 + it.
    pub(crate) number: u8,
    /// Its name, for the line a command writes as it ends.
    pub(crate) name: &'static str,
}

impl Signal {
    /// The exit status of a command ended by it: 128 + its number.
    #[must_use]
    pub(crate) fn exit_status(self) -> u8 {
        128 + self.number
    }
}

/// The first of SIGHUP (the terminal closed), SIGINT and SIGTERM (Ctrl-C where there are no Unix
/// signals). Registered when called, before the first poll: from then on they no longer end the
/// process outright, so the caller can withdraw what it asked and restore the terminal. Never
/// completes where signals cannot be registered. Needs a Tokio runtime with I/O enabled.
pub(crate) fn first_signal() -> impl Future<Output = Signal> {
    signals::first()
}

#[cfg(unix)]
mod signals {
    use super::Signal;
    use tokio::signal::unix::{SignalKind, signal};

    pub(super) fn first() -> impl Future<Output = Signal> {
        let kinds = [
            (1, "SIGHUP", SignalKind::hangup()),
            (2, "SIGINT", SignalKind::interrupt()),
            (15, "SIGTERM", SignalKind::terminate()),
        ];
        let mut streams: Vec<_> = kinds
            .into_iter()
            .filter_map(|(number, name, kind)| Some((number, name, signal(kind).ok()?)))
            .collect();
        async move {
            std::future::poll_fn(|cx| {
                for (number, name, stream) in &mut streams {
                    if stream.poll_recv(cx).is_ready() {
                        return std::task::Poll::Ready(Signal { number: *number, name });
                    }
                }
                std::task::Poll::Pending
            })
            .await
        }
    }
}

#[cfg(not(unix))]
mod signals {
    use super::Signal;

    pub(super) fn first() -> impl Future<Output = Signal> {
        async {
            match tokio::signal::ctrl_c().await {
                Ok(()) => Signal { number: 2, name: "Ctrl-C" },
                Err(_) => std::future::pending().await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn equals_splits_only_long_options() {
        let args: Vec<String> = Args::new(&words(&["--timeout=5", "a=b.json", "-x=1", "--=y"])).collect();
        assert_eq!(args, words(&["--timeout", "5", "a=b.json", "-x=1", "--=y"]));
    }

    #[test]
    fn seconds_out_of_range_are_errors_not_panics() {
        for bad in ["1e300", "-1", "0", "NaN", "inf", "x", ""] {
            let error = seconds("--timeout", bad).expect_err(bad);
            assert!(error.starts_with("--timeout"), "{bad}: {error}");
        }
        assert_eq!(seconds("--timeout", "2.5"), Ok(Duration::from_millis(2500)));
    }

    #[test]
    fn durations_take_a_unit() {
        for (text, secs) in [("90s", 90), ("5m", 300), ("1.5h", 5400), ("2d", 172_800), ("1e2s", 100)] {
            assert_eq!(seconds("--timeout", text), Ok(Duration::from_secs(secs)), "{text}");
        }
        for bad in ["5 minutes", "m", "5x", "infm", "NaNs", "0m", "-1h", "5mm"] {
            let error = seconds("--timeout", bad).expect_err(bad);
            assert!(error.starts_with("--timeout"), "{bad}: {error}");
        }
        assert!(seconds("--timeout", "5y").unwrap_err().contains("90s, 5m, 2h"));
    }

    #[cfg(feature = "server")]
    #[test]
    fn options_anywhere_are_taken_out() {
        let mut args = Args::new(&words(&["list", "--store", "memory:", "--hold", "x"]));
        assert_eq!(args.take_option("--store"), Ok(Some("memory:".to_owned())));
        assert!(args.take_flag("--hold"));
        assert!(!args.take_flag("--hold"));
        assert_eq!(args.rest(), words(&["list", "x"]));
        let mut args = Args::new(&words(&["get", "--schema"]));
        assert_eq!(args.take_option("--schema"), Err("--schema needs a value".to_owned()));
    }

    #[test]
    fn values_and_words_are_named_in_errors() {
        let mut args = Args::new(&words(&["--profile"]));
        let flag = args.next().unwrap();
        assert_eq!(
            args.value(&flag, "reference or extended"),
            Err("--profile needs reference or extended".into())
        );
        assert_eq!(profile("--profile", "standard"), Ok(Profile::Reference));
        assert_eq!(
            profile("--profile", "x"),
            Err(r#"--profile takes reference or extended, got "x""#.into())
        );
        assert_eq!(unknown("--nope"), r#"unknown option "--nope""#);
        assert_eq!(unknown("extra"), r#"unexpected argument "extra""#);
        assert!(wants_help(&words(&["a", "-h"])));
        assert!(!wants_help(&words(&["--", "-h"])));
    }
}
