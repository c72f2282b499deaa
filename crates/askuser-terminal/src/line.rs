//! The line protocol: numbered questions on the output, one answer per input line. Used when stdin
//! is not a terminal (scripts, CI) and as the accessible mode for screen readers.

use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use askuser_core::{AskUserRequest, Question, QuestionKind, async_trait};
use tokio::sync::{Mutex, mpsc};

use crate::menu::{MenuOutcome, Pick, secret_answer};
use crate::secret::{SecretInput, SecretRead};
use crate::text::{clean_answer_text, sanitize};

/// How many bad answers in a row to one question before giving up (declining).
pub(crate) const MAX_ATTEMPTS: usize = 3;

/// A source of input lines for the line protocol.
///
/// An error of kind [`io::ErrorKind::InvalidData`] (a line too long, or not UTF-8) is a bad
/// answer: the person is told why and asked again. Any other error fails the call.
#[async_trait]
pub trait LineSource: Send {
    /// The next line without its line ending; `None` at end of input.
    async fn next_line(&mut self) -> Option<io::Result<String>>;
}

#[async_trait]
impl LineSource for mpsc::UnboundedReceiver<String> {
    async fn next_line(&mut self) -> Option<io::Result<String>> {
        self.recv().await.map(Ok)
    }
}

#[async_trait]
impl LineSource for &'static StdinLines {
    async fn next_line(&mut self) -> Option<io::Result<String>> {
        StdinLines::next_line(self).await
    }
}

#[async_trait]
impl<S: LineSource + ?Sized> LineSource for Box<S> {
    async fn next_line(&mut self) -> Option<io::Result<String>> {
        (**self).next_line().await
    }
}

/// The longest answer line read, in bytes, without its line ending: room for the longest custom
/// answer (2,000 characters of up to four bytes each) many times over. A longer line is a bad line,
/// skipped without being held in memory.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// The process's standard input, read line by line by one reader that owns it, and only while a
/// call waits for a line.
///
/// Between calls stdin is left alone, so a stdio host (an MCP or LSP server) keeps its protocol
/// stream and a person's next line at the host's own prompt reaches the host. A line read for a
/// call that was then cancelled waits (one line at most) for the next call. Lines over
/// [`MAX_LINE_BYTES`] and lines that are not UTF-8 come back as errors of kind
/// [`io::ErrorKind::InvalidData`], which the line protocol counts as bad answers.
#[derive(Debug)]
pub struct StdinLines {
    reader: Reader,
}

impl StdinLines {
    /// The next line of stdin without its line ending; `None` at end of input.
    ///
    /// Cancel-safe: dropping the future before it completes loses no line.
    pub async fn next_line(&self) -> Option<io::Result<String>> {
        self.reader.next_line().await
    }
}

/// The process-wide reader of stdin lines, started on first use.
#[must_use]
pub fn stdin_lines() -> &'static StdinLines {
    static LINES: OnceLock<StdinLines> = OnceLock::new();
    LINES.get_or_init(|| StdinLines {
        reader: Reader::spawn("askuser-stdin", || {
            let stdin = io::stdin();
            // Locked per line, not for good: between calls the host may read stdin itself.
            let read = Box::new(move || read_line(&mut stdin.lock(), MAX_LINE_BYTES));
            Some((read as ReadLine, Box::new(|| ready(&io::stdin())) as Ready))
        }),
    })
}

/// Lines typed on the controlling terminal, for the line protocol under [`Mode::Tty`](crate::Mode)
/// (stdin carries data, so the person answers on `/dev/tty`). Without a terminal, every read sees
/// end of input.
pub(crate) fn tty_lines() -> &'static Reader {
    static LINES: OnceLock<Reader> = OnceLock::new();
    LINES.get_or_init(|| {
        Reader::spawn("askuser-tty", || {
            let tty = std::fs::File::open("/dev/tty").ok()?;
            let watched = tty.try_clone().ok()?;
            let mut tty = io::BufReader::new(tty);
            let read = Box::new(move || read_line(&mut tty, MAX_LINE_BYTES));
            Some((read as ReadLine, Box::new(move || ready(&watched)) as Ready))
        })
    })
}

/// Reads one line: the item for the caller and whether bytes after it are already buffered.
type ReadLine = Box<dyn FnMut() -> (Option<io::Result<String>>, bool) + Send>;

/// Waits a little for input; `false` when none came.
type Ready = Box<dyn FnMut() -> bool + Send>;

/// One reader thread over one input, reading a line only while a call waits for one.
#[derive(Debug)]
pub(crate) struct Reader {
    /// A call waits for a line; cleared by the thread when it has read one, and by a cancelled call.
    wanted: Arc<AtomicBool>,
    /// Wakes the thread when `wanted` is set.
    kick: std::sync::mpsc::Sender<()>,
    /// At most one line read and not yet taken: the queue is bounded by design.
    lines: Mutex<mpsc::Receiver<Option<io::Result<String>>>>,
}

impl Reader {
    /// Starts the thread. `open` runs on it; `None` (no such input) means end of input at once.
    /// Its `Ready` waits a few milliseconds for input, so that a call cancelled meanwhile is
    /// noticed before anything is read.
    fn spawn(name: &str, open: impl FnOnce() -> Option<(ReadLine, Ready)> + Send + 'static) -> Self {
        let wanted = Arc::new(AtomicBool::new(false));
        let (kick, kicks) = std::sync::mpsc::channel();
        let (tx, lines) = mpsc::channel(1);
        let flag = Arc::clone(&wanted);
        let spawned = std::thread::Builder::new().name(name.into()).spawn(move || {
            let Some((mut read, mut ready)) = open() else { return };
            serve(&mut read, &mut ready, &flag, &kicks, &tx);
        });
        // Without the thread the channel is closed at once: every read sees end of input.
        drop(spawned);
        Self { wanted, kick, lines: Mutex::new(lines) }
    }

    pub(crate) async fn next_line(&self) -> Option<io::Result<String>> {
        let mut lines = self.lines.lock().await;
        match lines.try_recv() {
            Ok(item) => return item,
            Err(mpsc::error::TryRecvError::Disconnected) => return None,
            Err(mpsc::error::TryRecvError::Empty) => {}
        }
        self.wanted.store(true, Ordering::SeqCst);
        let _ = self.kick.send(());
        // Cancelled (dropped) before a line came: the thread stops looking.
        let guard = Unwant(&self.wanted);
        let item = lines.recv().await.flatten();
        drop(guard);
        item
    }
}

struct Unwant<'a>(&'a AtomicBool);

impl Drop for Unwant<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// The reader thread's loop: sleeps until a line is wanted, waits for input while it still is,
/// reads one line, hands it over; stops at end of input, on an error, or when nobody is left.
fn serve(
    read: &mut ReadLine,
    ready: &mut Ready,
    wanted: &AtomicBool,
    kicks: &std::sync::mpsc::Receiver<()>,
    tx: &mpsc::Sender<Option<io::Result<String>>>,
) {
    let mut buffered = false;
    loop {
        if !wanted.load(Ordering::SeqCst) {
            if kicks.recv().is_err() {
                return;
            }
            continue;
        }
        // Looked at again after the wait: a call cancelled meanwhile must not get its line read.
        let go = buffered || (ready() && wanted.load(Ordering::SeqCst));
        if !go {
            continue;
        }
        let (item, rest) = read();
        buffered = rest;
        wanted.store(false, Ordering::SeqCst);
        let end = match &item {
            None => true,
            Some(Err(e)) => e.kind() != io::ErrorKind::InvalidData,
            Some(Ok(_)) => false,
        };
        if tx.blocking_send(item).is_err() || end {
            return;
        }
    }
}

/// How long the reader waits for input before looking again whether a call still wants a line.
#[cfg(unix)]
const READY_POLL: rustix::event::Timespec = rustix::event::Timespec { tv_sec: 0, tv_nsec: 50_000_000 };

/// Whether `fd` has input (or an error, which the read that follows reports) within
/// [`READY_POLL`]. A signal cutting the wait short is no input.
#[cfg(unix)]
fn ready(fd: &impl rustix::fd::AsFd) -> bool {
    use rustix::event::{PollFd, PollFlags, poll};
    let mut fds = [PollFd::new(fd, PollFlags::IN)];
    match poll(&mut fds, Some(&READY_POLL)) {
        Ok(n) => n > 0,
        Err(e) => e != rustix::io::Errno::INTR,
    }
}

#[cfg(not(unix))]
fn ready<T>(_: &T) -> bool {
    true
}

/// Reads one line of at most `limit` bytes, without its line ending. A longer line is consumed to
/// its end without being kept and comes back as an [`io::ErrorKind::InvalidData`] error, as does
/// a line that is not UTF-8. Also says whether bytes after the line are already buffered.
pub(crate) fn read_line(source: &mut dyn BufRead, limit: usize) -> (Option<io::Result<String>>, bool) {
    let mut line = Vec::new();
    let mut too_long = false;
    let mut any = false;
    let mut buffered = false;
    loop {
        let buf = match source.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return (Some(Err(e)), false),
        };
        if buf.is_empty() {
            if !any {
                return (None, false);
            }
            break;
        }
        any = true;
        let newline = buf.iter().position(|&b| b == b'\n');
        let take = newline.map_or(buf.len(), |i| i + 1);
        buffered = take < buf.len();
        // Room for "\r\n" on top of the limit; anything beyond is dropped as it arrives.
        if !too_long && line.len() + take <= limit + 2 {
            line.extend_from_slice(&buf[..take]);
        } else if !too_long {
            too_long = true;
            line = Vec::new();
        }
        source.consume(take);
        if newline.is_some() {
            break;
        }
    }
    if line.ends_with(b"\n") {
        line.pop();
    }
    if line.ends_with(b"\r") {
        line.pop();
    }
    if too_long || line.len() > limit {
        let why = format!("the line is longer than {limit} bytes");
        return (Some(Err(io::Error::new(io::ErrorKind::InvalidData, why))), buffered);
    }
    let line = String::from_utf8(line)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "the line is not valid UTF-8"));
    (Some(line), buffered)
}

#[async_trait]
impl LineSource for &'static Reader {
    async fn next_line(&mut self) -> Option<io::Result<String>> {
        Reader::next_line(self).await
    }
}

/// One line's meaning for a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LineAnswer {
    Pick(Pick),
    Decline,
    Bad(String),
}

/// Reads one answer line: numbers (`2`, `1,3`, `1 3`), an exact label (any case), `0 text` or
/// `other: text` for a custom answer (when the question allows one), `!decline`; an empty line
/// takes the options the model marked `default`, if any. A text question takes the line itself.
pub(crate) fn parse_answer(line: &str, question: &Question, max_custom_chars: usize) -> LineAnswer {
    let line = line.trim();
    let n = question.options().len();
    if line.eq_ignore_ascii_case("!decline") {
        return LineAnswer::Decline;
    }
    if question.kind() == QuestionKind::Text {
        return custom_answer(line, max_custom_chars, "type your answer (it cannot be blank)");
    }
    if line.is_empty() {
        let defaults: Vec<usize> = (0..n).filter(|&i| question.options()[i].is_default()).collect();
        if !defaults.is_empty() {
            return LineAnswer::Pick(Pick { picked: defaults, ..Pick::default() });
        }
        if !question.allow_other() {
            return LineAnswer::Bad(format!("type a number from 1 to {n}"));
        }
        return LineAnswer::Bad(format!("type a number from 1 to {n}, or 0 and your own answer"));
    }
    let custom = line
        .strip_prefix('0')
        .filter(|rest| rest.is_empty() || rest.starts_with([' ', ':', '\t']))
        .or_else(|| line.get(..6).filter(|p| p.eq_ignore_ascii_case("other:")).map(|_| &line[6..]));
    if let Some(rest) = custom {
        if !question.allow_other() {
            return LineAnswer::Bad(format!("this question takes one of its options: 1 to {n}"));
        }
        return custom_answer(
            rest.trim_start_matches(':'),
            max_custom_chars,
            "type 0, a space, then your answer",
        );
    }
    let tokens: Vec<&str> = line.split([',', ' ', '\t']).filter(|t| !t.is_empty()).collect();
    let numbers: Option<Vec<usize>> = tokens.iter().map(|t| t.parse::<usize>().ok()).collect();
    // Numbers before labels: the prompt says "Choose 1-3", so `2` is option 2 even when another
    // option's label is "2".
    let Some(numbers) = numbers else {
        if let Some(index) =
            question.options().iter().position(|o| o.label().trim().eq_ignore_ascii_case(line))
        {
            return LineAnswer::Pick(Pick { picked: vec![index], ..Pick::default() });
        }
        return LineAnswer::Bad(format!("not an option: type a number from 1 to {n}"));
    };
    if numbers.is_empty() {
        return LineAnswer::Bad(format!("type a number from 1 to {n}"));
    }
    let mut picked = Vec::new();
    for number in numbers {
        if !(1..=n).contains(&number) {
            return LineAnswer::Bad(format!("{number} is not an option: numbers go from 1 to {n}"));
        }
        if !picked.contains(&(number - 1)) {
            picked.push(number - 1);
        }
    }
    if !question.multi_select() && picked.len() > 1 {
        return LineAnswer::Bad("pick one number".to_owned());
    }
    LineAnswer::Pick(Pick { picked, ..Pick::default() })
}

/// A typed answer (after `0`, or a text question's line): cleaned, trimmed, non-blank, within the
/// cap. Refused rather than cut: the person learns the tail would be lost, as in the menu.
fn custom_answer(text: &str, max_custom_chars: usize, blank: &str) -> LineAnswer {
    let text = clean_answer_text(text);
    let text = text.trim();
    if text.is_empty() {
        return LineAnswer::Bad(blank.to_owned());
    }
    let chars = text.chars().count();
    if chars > max_custom_chars {
        return LineAnswer::Bad(format!(
            "your answer has {chars} characters, at most {max_custom_chars} fit"
        ));
    }
    LineAnswer::Pick(Pick { custom: Some(text.to_owned()), ..Pick::default() })
}

fn print_question(
    out: &mut (dyn Write + Send),
    index: usize,
    total: usize,
    question: &Question,
) -> io::Result<()> {
    writeln!(
        out,
        "\n[{}/{total}] {} — {}",
        index + 1,
        sanitize(question.header(), false),
        sanitize(question.question(), false)
    )?;
    match question.kind() {
        QuestionKind::Text => {
            write!(out, "Type your answer: ")?;
            return out.flush();
        }
        QuestionKind::Secret => {
            if let Some(purpose) = question.purpose() {
                writeln!(out, "  Why: {}", sanitize(purpose, false))?;
            }
            write!(out, "Type the secret (nothing is shown), then Enter: ")?;
            return out.flush();
        }
        _ => {}
    }
    for (i, option) in question.options().iter().enumerate() {
        let default = if option.is_default() { " (default)" } else { "" };
        match option.description().filter(|d| !d.trim().is_empty()) {
            Some(d) => writeln!(
                out,
                "  {}) {}{default} — {}",
                i + 1,
                sanitize(option.label(), false),
                sanitize(d, false)
            )?,
            None => writeln!(out, "  {}) {}{default}", i + 1, sanitize(option.label(), false))?,
        }
    }
    if question.allow_other() {
        writeln!(out, "  0) Other: type 0 and your own answer")?;
    }
    let n = question.options().len();
    let enter = match question.options().iter().filter(|o| o.is_default()).count() {
        0 => "",
        1 => ", Enter for the default",
        _ => ", Enter for the defaults",
    };
    if question.multi_select() {
        write!(out, "Choose one or more of 1-{n} (for example 1,3){enter}: ")?;
    } else {
        write!(out, "Choose 1-{n}{enter}: ")?;
    }
    out.flush()
}

/// Asks every question of `request` on `out`, reading answers from `lines`, and a secret from
/// `secrets` (the terminal with echo off: never from `lines`, which may be piped stdin).
///
/// End of input declines, and so do [`MAX_ATTEMPTS`] bad answers in a row: this never hangs and
/// never loops. End of input before any line at all is [`MenuOutcome::NoInput`]: nobody was there
/// to decline. A secret question with no terminal to type it on is declined, saying so.
pub(crate) async fn ask_lines(
    request: &AskUserRequest,
    lines: &mut dyn LineSource,
    secrets: &mut dyn SecretInput,
    out: &mut (dyn Write + Send),
    max_custom_chars: usize,
) -> io::Result<MenuOutcome> {
    let questions = request.questions().as_slice();
    let total = questions.len();
    if total == 1 {
        writeln!(out, "The assistant has a question for you (!decline to decline).")?;
    } else {
        writeln!(out, "The assistant has {total} questions for you (!decline to decline).")?;
    }
    if let [question] = questions
        && question.kind() == QuestionKind::Secret
    {
        return ask_secret(question, secrets, out, max_custom_chars).await;
    }
    let mut answers = Vec::with_capacity(total);
    let mut any_line = false;
    for (index, question) in questions.iter().enumerate() {
        print_question(out, index, total, question)?;
        let mut attempts = 0;
        let pick = loop {
            let Some(line) = lines.next_line().await else {
                if !any_line {
                    writeln!(out, "\n(end of input before any answer: nobody to ask)")?;
                    return Ok(MenuOutcome::NoInput);
                }
                writeln!(out, "\n(end of input: declined)")?;
                return Ok(MenuOutcome::Declined);
            };
            any_line = true;
            let answer = match line {
                Ok(line) => parse_answer(&line, question, max_custom_chars),
                Err(e) if e.kind() == io::ErrorKind::InvalidData => LineAnswer::Bad(e.to_string()),
                Err(e) => return Err(e),
            };
            match answer {
                LineAnswer::Pick(pick) => break pick,
                LineAnswer::Decline => {
                    writeln!(out, "Declined.")?;
                    return Ok(MenuOutcome::Declined);
                }
                LineAnswer::Bad(why) => {
                    attempts += 1;
                    if attempts >= MAX_ATTEMPTS {
                        writeln!(out, "{why}\nNo valid answer after {MAX_ATTEMPTS} tries: declined.")?;
                        return Ok(MenuOutcome::Declined);
                    }
                    write!(out, "{why}. Try again: ")?;
                    out.flush()?;
                }
            }
        };
        answers.push(pick.answer(question));
    }
    writeln!(out, "Thanks: your answers go back to the assistant.")?;
    out.flush()?;
    Ok(MenuOutcome::Answered(answers))
}

/// The line protocol's secret question: typed on the terminal with echo off. Nothing of the
/// value is written to `out`, not even its length.
async fn ask_secret(
    question: &Question,
    secrets: &mut dyn SecretInput,
    out: &mut (dyn Write + Send),
    max_chars: usize,
) -> io::Result<MenuOutcome> {
    print_question(out, 0, 1, question)?;
    for attempt in 1..=MAX_ATTEMPTS {
        let value = match secrets.read_secret().await? {
            SecretRead::NoTerminal => {
                writeln!(
                    out,
                    "\nThere is no terminal to type a secret on (it is never read from piped input): declined."
                )?;
                return Ok(MenuOutcome::Unasked);
            }
            SecretRead::End => {
                writeln!(out, "\n(end of input: declined)")?;
                return Ok(MenuOutcome::Declined);
            }
            SecretRead::SeveralLines => {
                let why = "the paste had several lines, so nothing was taken (paste the secret as one line)";
                if attempt == MAX_ATTEMPTS {
                    writeln!(out, "{why}\nNo valid answer after {MAX_ATTEMPTS} tries: declined.")?;
                    return Ok(MenuOutcome::Declined);
                }
                write!(out, "{why}. Try again: ")?;
                out.flush()?;
                continue;
            }
            SecretRead::Value(value) => value,
        };
        let why = if value.expose().trim().is_empty() {
            "the secret cannot be empty"
        } else if value.expose().chars().count() > max_chars {
            "the secret is too long"
        } else if value.expose().chars().any(|c| !crate::text::allowed_in_answer(c)) {
            "the secret has characters that cannot be sent"
        } else {
            let name = question.secret_name().unwrap_or_default();
            writeln!(out, "Saved as session:{name}.")?;
            out.flush()?;
            return Ok(MenuOutcome::Secret(secret_answer(question), value));
        };
        if attempt == MAX_ATTEMPTS {
            writeln!(out, "{why}\nNo valid answer after {MAX_ATTEMPTS} tries: declined.")?;
            return Ok(MenuOutcome::Declined);
        }
        write!(out, "{why}. Try again: ")?;
        out.flush()?;
    }
    Ok(MenuOutcome::Declined)
}

#[cfg(test)]
mod tests {
    use askuser_core::{Question, QuestionOption};

    use super::*;

    fn question(multi: bool) -> Question {
        Question::new(
            "Db",
            "Which database?",
            vec![
                QuestionOption::new("Postgres", None).unwrap(),
                QuestionOption::new("SQLite", Some("embedded")).unwrap(),
                QuestionOption::new("Other DB", None).unwrap(),
            ],
            multi,
        )
        .unwrap()
    }

    fn picked(v: &[usize]) -> LineAnswer {
        LineAnswer::Pick(Pick { picked: v.to_vec(), ..Pick::default() })
    }

    fn custom(text: &str) -> LineAnswer {
        LineAnswer::Pick(Pick { custom: Some(text.to_owned()), ..Pick::default() })
    }

    #[track_caller]
    fn check(line: &str, multi: bool, expected: &LineAnswer) {
        assert_eq!(&parse_answer(line, &question(multi), 20), expected, "line {line:?}");
    }

    #[track_caller]
    fn check_bad(line: &str, multi: bool) {
        assert!(matches!(parse_answer(line, &question(multi), 20), LineAnswer::Bad(_)), "line {line:?}");
    }

    /// Guards numbers winning over labels: with options "3", "2", "1", typing `2` picks the second
    /// option, as the prompt "Choose 1-3" promises (the label match used to win).
    #[test]
    fn numbers_win_over_numeric_labels() {
        let labels = ["3", "2", "1 a"].map(|l| QuestionOption::new(l, None).unwrap());
        let q = Question::new("N", "Which?", labels.to_vec(), false).unwrap();
        assert_eq!(parse_answer("1", &q, 20), picked(&[0]));
        assert_eq!(parse_answer("3", &q, 20), picked(&[2]));
        assert_eq!(parse_answer("1 A", &q, 20), picked(&[2]), "a label that is not all numbers");
    }

    #[track_caller]
    fn read_all(input: &[u8], limit: usize) -> Vec<Result<String, String>> {
        let mut source = io::BufReader::with_capacity(7, input);
        let mut items = Vec::new();
        while let (Some(item), _) = read_line(&mut source, limit) {
            items.push(item.map_err(|e| format!("{:?}: {e}", e.kind())));
        }
        items
    }

    /// Guards the bounded reader: an over-long line and a line that is not UTF-8 are bad lines,
    /// and the lines after them are still read.
    #[test]
    fn long_and_invalid_lines_are_bad_lines() {
        let too_long = Err("InvalidData: the line is longer than 4 bytes".to_owned());
        let invalid = Err("InvalidData: the line is not valid UTF-8".to_owned());
        assert_eq!(
            read_all(b"1234\r\n12345\nabcdefghijklmnop\n\xff\xfe\n2\n\n3", 4),
            [
                Ok("1234".to_owned()),
                too_long.clone(),
                too_long,
                invalid,
                Ok("2".into()),
                Ok(String::new()),
                Ok("3".into())
            ]
        );
        assert_eq!(read_all(b"", 4), []);
        assert_eq!(read_all(b"caf\xc3\xa9\n", 8), [Ok("café".to_owned())]);
    }

    /// Guards the memory bound: 16 MiB without a newline are skipped while it streams by,
    /// never held (the buffer stays at the limit).
    #[test]
    fn an_endless_line_is_never_held() {
        struct Endless(usize);
        impl io::Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = buf.len().min(self.0);
                buf[..n].fill(b'x');
                self.0 -= n;
                Ok(n)
            }
        }
        let mut source = io::BufReader::new(io::Read::chain(Endless(1 << 24), &b"\n2\n"[..]));
        let (item, _) = read_line(&mut source, MAX_LINE_BYTES);
        assert_eq!(item.unwrap().unwrap_err().kind(), io::ErrorKind::InvalidData);
        assert_eq!(read_line(&mut source, MAX_LINE_BYTES).0.unwrap().unwrap(), "2");
    }

    #[test]
    fn answers() {
        check("2", false, &picked(&[1]));
        check(" 2 ", false, &picked(&[1]));
        check("1,3", true, &picked(&[0, 2]));
        check("3 1", true, &picked(&[2, 0]));
        check("1, 1", true, &picked(&[0]));
        check("sqlite", false, &picked(&[1]));
        check("Other DB", false, &picked(&[2]));
        check("0 MySQL please", false, &custom("MySQL please"));
        check("0: MySQL", true, &custom("MySQL"));
        check("other: a\tb", false, &custom("a b"));
        check("0 exactly twenty chars", false, &custom("exactly twenty chars"));
        check("!decline", false, &LineAnswer::Decline);
        check("!DECLINE", true, &LineAnswer::Decline);
        check_bad("", false);
        check_bad("0", false);
        check_bad("0   ", false);
        check_bad("4", false);
        check_bad("1,2", false);
        check_bad("maybe", false);
        check_bad("07", false);
        // A custom answer over the cap is refused, not silently cut.
        check_bad("0 this is a very long answer indeed", false);
        // Separators alone are no pick: they used to give an answer with nothing selected.
        check_bad(",", true);
        check_bad(" , ,", false);
    }

    /// A scripted secret input, standing in for `/dev/tty`.
    struct Secrets(Vec<SecretRead>);

    #[async_trait]
    impl SecretInput for Secrets {
        async fn read_secret(&mut self) -> io::Result<SecretRead> {
            Ok(if self.0.is_empty() { SecretRead::End } else { self.0.remove(0) })
        }
    }

    fn extended(json: &str) -> AskUserRequest {
        AskUserRequest::new(
            askuser_core::Validator::new()
                .with_profile(askuser_core::Profile::Extended)
                .validate_json(json)
                .unwrap(),
        )
    }

    /// Runs the line protocol on `lines` and `secrets`; returns the outcome and the output.
    fn run(request: &AskUserRequest, lines: &[&str], secrets: Vec<SecretRead>) -> (MenuOutcome, String) {
        let (tx, mut rx) = mpsc::unbounded_channel();
        for line in lines {
            tx.send((*line).to_owned()).unwrap();
        }
        drop(tx);
        let mut out = Vec::new();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let outcome =
            runtime.block_on(ask_lines(request, &mut rx, &mut Secrets(secrets), &mut out, 2000)).unwrap();
        (outcome, String::from_utf8(out).unwrap())
    }

    /// Guards the extended line protocol: an empty line takes the declared default, `0 text` is
    /// refused without `allow_other` (and not offered), a text question reads a line and re-asks
    /// on a blank one.
    #[test]
    fn a_mixed_batch_on_the_line_protocol() {
        let request = extended(
            r#"{"questions":[
            {"id":"db","header":"Db","question":"Which?","allow_other":false,"options":[{"label":"a"},{"label":"b","default":true}]},
            {"id":"name","kind":"text","header":"Name","question":"Called?"}]}"#,
        );
        let (outcome, text) = run(&request, &["0 mine", "", "   ", "billing api"], Vec::new());
        assert_eq!(
            outcome,
            MenuOutcome::Answered(vec![
                askuser_core::AskUserAnswer::picked("Db", ["b"]).with_id("db"),
                askuser_core::AskUserAnswer::custom("Name", "billing api").with_id("name"),
            ])
        );
        assert!(!text.contains("0) Other"), "{text}");
        assert!(text.contains("2) b (default)") && text.contains("Enter for the default"), "{text}");
        assert!(text.contains("Type your answer: "), "{text}");
        assert_eq!(text.matches("Try again").count(), 2, "0 refused once, the blank once: {text}");
    }

    /// Guards the reference behaviour: without declared defaults an empty line re-asks.
    #[test]
    fn an_empty_line_without_declared_defaults_re_asks() {
        let request = extended(
            r#"{"questions":[{"header":"Db","question":"?","options":[{"label":"a (Recommended)"},{"label":"b"}]}]}"#,
        );
        let (outcome, text) = run(&request, &["", "2"], Vec::new());
        assert_eq!(
            outcome,
            MenuOutcome::Answered(vec![askuser_core::AskUserAnswer::picked("Db", ["b"]).with_id("q1")])
        );
        assert!(text.contains("Try again"), "{text}");
    }

    /// Guards the secret on the line protocol: read from the secret input (the terminal), never
    /// from the lines (which may be piped stdin); nothing of it printed; no terminal declines.
    #[test]
    fn a_secret_is_read_from_the_terminal_only() {
        let request = extended(
            r#"{"questions":[{"kind":"secret","header":"Token","question":"Token?","secret_name":"API_TOKEN","purpose":"To deploy."}]}"#,
        );
        let value = |v: &str| SecretRead::Value(askuser_core::SecretValue::new(v.to_owned()));
        let (outcome, text) = run(&request, &["piped-LEAKCANARY"], vec![value(""), value("tty-LEAKCANARY")]);
        let MenuOutcome::Secret(answer, secret) = outcome else { panic!("{outcome:?}") };
        assert_eq!(secret.expose(), "tty-LEAKCANARY");
        assert_eq!(answer.secret_ref.as_deref(), Some("session:API_TOKEN"));
        assert!(!text.contains("LEAKCANARY"), "{text}");
        assert!(text.contains("Why: To deploy.") && text.contains("Saved as session:API_TOKEN."), "{text}");

        let (outcome, text) = run(&request, &["piped-LEAKCANARY"], vec![SecretRead::NoTerminal]);
        assert_eq!(outcome, MenuOutcome::Unasked, "nobody could be asked");
        assert!(text.contains("no terminal to type a secret on"), "{text}");
        assert_eq!(run(&request, &[], Vec::new()).0, MenuOutcome::Declined, "end of input declines");

        // A paste of several lines is refused whole, saying so, and asked again.
        let (outcome, text) = run(&request, &[], vec![SecretRead::SeveralLines, value("one-line")]);
        let MenuOutcome::Secret(_, secret) = outcome else { panic!("{outcome:?}") };
        assert_eq!(secret.expose(), "one-line");
        assert!(text.contains("the paste had several lines, so nothing was taken"), "{text}");
    }
}
