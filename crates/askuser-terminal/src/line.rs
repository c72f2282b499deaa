//! The line protocol: numbered questions on the output, one answer per input line. Used when stdin
//! is not a terminal (scripts, CI) and as the accessible mode for screen readers.

use std::io::{self, BufRead, Write};
use std::sync::OnceLock;

use askuser_core::{AskUserRequest, Question, async_trait};
use tokio::sync::{Mutex, mpsc};

use crate::menu::{MenuOutcome, Pick};
use crate::text::{clean_answer_text, sanitize};

/// How many bad answers in a row to one question before giving up (declining).
pub(crate) const MAX_ATTEMPTS: usize = 3;

/// A source of input lines for the line protocol.
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

/// The process's standard input, read line by line by one reader that owns it.
///
/// A line read but not yet taken waits in a queue, so a cancelled `ask()` loses nothing: the next
/// reader, the menu or the host, gets it. Once this reader has started, the host must read stdin
/// through it too ([`stdin_lines`]): a second reader would split the lines.
#[derive(Debug)]
pub struct StdinLines {
    queue: Mutex<mpsc::UnboundedReceiver<io::Result<String>>>,
}

impl StdinLines {
    /// The next line of stdin without its line ending; `None` at end of input.
    ///
    /// Cancel-safe: dropping the future before it completes loses no line.
    pub async fn next_line(&self) -> Option<io::Result<String>> {
        self.queue.lock().await.recv().await
    }

    /// The same, blocking the current thread: for synchronous code.
    ///
    /// # Panics
    ///
    /// When called from inside an async runtime (use [`StdinLines::next_line`] there).
    #[must_use]
    pub fn blocking_next_line(&self) -> Option<io::Result<String>> {
        self.queue.blocking_lock().blocking_recv()
    }
}

/// The process-wide reader of stdin lines, started on first use.
///
/// Its thread blocks in `read_line` and is never abandoned mid-line: everything it reads is queued
/// for [`StdinLines::next_line`].
#[must_use]
pub fn stdin_lines() -> &'static StdinLines {
    static LINES: OnceLock<StdinLines> = OnceLock::new();
    LINES.get_or_init(|| {
        let (tx, rx) = mpsc::unbounded_channel();
        let spawned = std::thread::Builder::new()
            .name("askuser-stdin".into())
            // Locked per line, not for good: a host reading stdin directly splits lines, never hangs.
            .spawn(move || read_lines(|line| io::stdin().lock().read_line(line), &tx, || true));
        // Without the thread the channel is closed at once: every read sees end of input.
        drop(spawned);
        StdinLines { queue: Mutex::new(rx) }
    })
}

/// Lines typed on the controlling terminal, for the line protocol under [`Mode::Tty`](crate::Mode)
/// (stdin carries data, so the person answers on `/dev/tty`).
///
/// One process-wide reader thread, as for stdin, but it reads a line only while a call waits for
/// one: between calls it leaves the terminal to the next reader (a menu, the host). A line read for
/// a call that was then cancelled waits in the queue for the next call.
pub(crate) struct TtyLines {
    state: Mutex<TtyState>,
}

struct TtyState {
    /// One message per line wanted.
    want: std::sync::mpsc::Sender<()>,
    lines: mpsc::UnboundedReceiver<io::Result<String>>,
    /// A line was asked for and has not arrived yet (its caller may have been cancelled).
    waiting: bool,
}

/// The process-wide reader of `/dev/tty` lines, started on first use. Without a terminal, every
/// read sees end of input.
pub(crate) fn tty_lines() -> &'static TtyLines {
    static LINES: OnceLock<TtyLines> = OnceLock::new();
    LINES.get_or_init(|| {
        let (want, wanted) = std::sync::mpsc::channel::<()>();
        let (tx, lines) = mpsc::unbounded_channel();
        let spawned = std::thread::Builder::new().name("askuser-tty".into()).spawn(move || {
            let Ok(tty) = std::fs::File::open("/dev/tty") else { return };
            let mut tty = io::BufReader::new(tty);
            read_lines(|line| tty.read_line(line), &tx, || wanted.recv().is_ok());
        });
        drop(spawned);
        TtyLines { state: Mutex::new(TtyState { want, lines, waiting: false }) }
    })
}

/// Reads lines with `read_line` into `tx` while `more()` says to go on, until end of input or an
/// error.
fn read_lines(
    mut read_line: impl FnMut(&mut String) -> io::Result<usize>,
    tx: &mpsc::UnboundedSender<io::Result<String>>,
    mut more: impl FnMut() -> bool,
) {
    while more() {
        let mut line = String::new();
        let read = loop {
            match read_line(&mut line) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => break other,
            }
        };
        match read {
            Ok(0) => break,
            Ok(_) => {
                let trimmed = line.trim_end_matches(['\n', '\r']).len();
                line.truncate(trimmed);
                if tx.send(Ok(line)).is_err() {
                    break;
                }
            }
            Err(e) => {
                let _ = tx.send(Err(e));
                break;
            }
        }
    }
}

#[async_trait]
impl LineSource for &'static TtyLines {
    async fn next_line(&mut self) -> Option<io::Result<String>> {
        let mut state = self.state.lock().await;
        if !state.waiting {
            state.want.send(()).ok()?;
            state.waiting = true;
        }
        let line = state.lines.recv().await;
        state.waiting = false;
        line
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
/// `other: text` for a custom answer, `!decline`.
pub(crate) fn parse_answer(line: &str, question: &Question, max_custom_chars: usize) -> LineAnswer {
    let line = line.trim();
    let n = question.options().len();
    if line.is_empty() {
        return LineAnswer::Bad(format!("type a number from 1 to {n}, or 0 and your own answer"));
    }
    if line.eq_ignore_ascii_case("!decline") {
        return LineAnswer::Decline;
    }
    let custom = line
        .strip_prefix('0')
        .filter(|rest| rest.is_empty() || rest.starts_with([' ', ':', '\t']))
        .or_else(|| line.get(..6).filter(|p| p.eq_ignore_ascii_case("other:")).map(|_| &line[6..]));
    if let Some(rest) = custom {
        let text = clean_answer_text(rest.trim_start_matches(':'));
        let text = text.trim();
        if text.is_empty() {
            return LineAnswer::Bad("type 0, a space, then your answer".to_owned());
        }
        // Refused rather than cut: the person learns the tail would be lost, as in the menu.
        let chars = text.chars().count();
        if chars > max_custom_chars {
            return LineAnswer::Bad(format!(
                "your answer has {chars} characters, at most {max_custom_chars} fit"
            ));
        }
        return LineAnswer::Pick(Pick { picked: Vec::new(), custom: Some(text.to_owned()) });
    }
    let tokens: Vec<&str> = line.split([',', ' ', '\t']).filter(|t| !t.is_empty()).collect();
    let numbers: Option<Vec<usize>> = tokens.iter().map(|t| t.parse::<usize>().ok()).collect();
    // Numbers before labels: the prompt says "Choose 1-3", so `2` is option 2 even when another
    // option's label is "2".
    let Some(numbers) = numbers else {
        if let Some(index) =
            question.options().iter().position(|o| o.label().trim().eq_ignore_ascii_case(line))
        {
            return LineAnswer::Pick(Pick { picked: vec![index], custom: None });
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
    LineAnswer::Pick(Pick { picked, custom: None })
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
    for (i, option) in question.options().iter().enumerate() {
        match option.description().filter(|d| !d.trim().is_empty()) {
            Some(d) => {
                writeln!(out, "  {}) {} — {}", i + 1, sanitize(option.label(), false), sanitize(d, false))?;
            }
            None => writeln!(out, "  {}) {}", i + 1, sanitize(option.label(), false))?,
        }
    }
    writeln!(out, "  0) Other: type 0 and your own answer")?;
    let n = question.options().len();
    if question.multi_select() {
        write!(out, "Choose one or more of 1-{n} (for example 1,3): ")?;
    } else {
        write!(out, "Choose 1-{n}: ")?;
    }
    out.flush()
}

/// Asks every question of `request` on `out`, reading answers from `lines`.
///
/// End of input declines, and so do [`MAX_ATTEMPTS`] bad answers in a row: this never hangs and
/// never loops.
pub(crate) async fn ask_lines(
    request: &AskUserRequest,
    lines: &mut dyn LineSource,
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
    let mut answers = Vec::with_capacity(total);
    for (index, question) in questions.iter().enumerate() {
        print_question(out, index, total, question)?;
        let mut attempts = 0;
        let pick = loop {
            let Some(line) = lines.next_line().await else {
                writeln!(out, "\n(end of input: declined)")?;
                return Ok(MenuOutcome::Declined);
            };
            match parse_answer(&line?, question, max_custom_chars) {
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
        LineAnswer::Pick(Pick { picked: v.to_vec(), custom: None })
    }

    fn custom(text: &str) -> LineAnswer {
        LineAnswer::Pick(Pick { picked: Vec::new(), custom: Some(text.to_owned()) })
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
}
