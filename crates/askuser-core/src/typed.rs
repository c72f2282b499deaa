//! Typed answers: how a reply typed in a chat or an email becomes answers to a batch of
//! questions, by one published grammar (`docs/typed-answers.md`, with its corpus of cases in
//! `crates/askuser-core/tests/data/typed-answers.jsonl`).
//!
//! A reply is read whole or not at all: one that misses a question, names no question on a line,
//! or could mean two things gets an [`Unclear`] naming exactly what is wrong, never a partial
//! answer. What the person typed as free text (an `Other:` answer, a text question's answer) is
//! kept as typed, only trimmed.

use std::fmt;

use crate::model::{AskUserAnswer, Question, QuestionOption, Questions};
use crate::profile::{MAX_CUSTOM_CHARS, QuestionKind};
use crate::text::{fold, is_python_space};

/// Why a reply gave no answers: every problem found, each naming the question or line it is about,
/// in words to send back to the person as they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unclear {
    problems: Vec<String>,
}

impl Unclear {
    fn one(problem: String) -> Self {
        Self { problems: vec![problem] }
    }

    /// The problems, one sentence each.
    #[must_use]
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for Unclear {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.problems.join(" "))
    }
}

impl std::error::Error for Unclear {}

/// Reads `reply` as answers to `questions`, in the questions' order.
///
/// The grammar (`docs/typed-answers.md`):
///
/// - **One question**: the whole reply is its value (a `Header:` in front is allowed).
/// - **Several**: one line per question, `Header: value`; the header matched without regard to
///   case, width or spacing, or by a prefix only one header has. Lines in the questions' order
///   without headers are taken in that order when there is exactly one per question.
/// - **A choice**: option numbers (`2`, `1,3`, `1 3`), labels (matched as headers are, or by a
///   prefix only one label has) separated by commas or semicolons, or `Other: text` where typed
///   answers are allowed. A single-select question takes one.
/// - **A text question**: the value as typed. A secret question is never answered in a reply.
///
/// # Errors
///
/// [`Unclear`] when a question has no answer, a line names no question (or one named already), a
/// value matches no option or more than one, or is empty or too long.
///
/// ```
/// use askuser_core::Questions;
///
/// let questions = Questions::from_json(r#"{"questions":[
///     {"header":"Database","question":"Which database?","options":[{"label":"SQLite"},{"label":"PostgreSQL"}]},
///     {"header":"Features","question":"Which features?","multi_select":true,
///      "options":[{"label":"Auth"},{"label":"Billing"},{"label":"Search"}]}]}"#)?;
/// let answers = askuser_core::read_typed_reply(&questions, "database: postgres\nFeatures: 1, 3")?;
/// assert_eq!(answers[0].selected, ["PostgreSQL"]);
/// assert_eq!(answers[1].selected, ["Auth", "Search"]);
///
/// let unclear = askuser_core::read_typed_reply(&questions, "Database: SQLite").unwrap_err();
/// assert_eq!(unclear.to_string(), "No answer for Features.");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_typed_reply(questions: &Questions, reply: &str) -> Result<Vec<AskUserAnswer>, Unclear> {
    let questions = questions.as_slice();
    let lines: Vec<&str> = reply.lines().map(trim).filter(|line| !line.is_empty()).collect();
    if lines.is_empty() {
        return Err(Unclear::one("The reply is empty: nothing was answered.".to_owned()));
    }
    let values = if let [question] = questions {
        vec![Some(single_value(question, reply))]
    } else {
        values_by_line(questions, &lines)?
    };
    let mut answers = Vec::with_capacity(questions.len());
    let mut problems = Vec::new();
    let mut missing = Vec::new();
    for (question, value) in questions.iter().zip(values) {
        match value.map(|value| answer(question, value)) {
            Some(Ok(answer)) => answers.push(answer),
            Some(Err(problem)) => problems.push(problem),
            None => missing.push(question.header()),
        }
    }
    if problems.is_empty() && !missing.is_empty() {
        problems.push(format!("No answer for {}.", missing.join(", ")));
    }
    if problems.is_empty() { Ok(answers) } else { Err(Unclear { problems }) }
}

/// A single question's value: the whole reply, after its header if it starts with one (unless
/// the whole reply is one of its labels, which may hold a colon).
fn single_value<'r>(question: &Question, reply: &'r str) -> &'r str {
    let reply = trim(reply);
    if label_of(question, reply).is_some() {
        return reply;
    }
    match split_key(reply) {
        Some((key, value)) if fold(&squash(key)) == fold(&squash(question.header())) => trim(value),
        _ => reply,
    }
}

/// Each question's value from `lines` (several questions), or every problem with the lines.
fn values_by_line<'r>(questions: &[Question], lines: &[&'r str]) -> Result<Vec<Option<&'r str>>, Unclear> {
    // Folded once for every line.
    let folded: Vec<String> = questions.iter().map(|q| fold(&squash(q.header())).into_owned()).collect();
    let keyed: Vec<Option<(usize, &str)>> = lines.iter().map(|line| keyed_line(&folded, line)).collect();
    if keyed.iter().all(Option::is_none) && lines.len() == questions.len() {
        // One unkeyed line per question: in their order.
        return Ok(lines.iter().map(|line| Some(*line)).collect());
    }
    let mut values: Vec<Option<&str>> = vec![None; questions.len()];
    let mut problems = Vec::new();
    for (n, (line, keyed)) in lines.iter().zip(keyed).enumerate() {
        match keyed {
            Some((index, _)) if values[index].is_some() => problems.push(format!(
                "Line {} answers {} again: give each question one line.",
                n + 1,
                questions[index].header()
            )),
            Some((index, value)) => values[index] = Some(value),
            None => problems.push(format!(
                "Line {} ({}) names no question: start it with one of {}, e.g. \"{}: …\".",
                n + 1,
                quoted(line),
                headers(questions),
                questions[0].header()
            )),
        }
    }
    if problems.is_empty() { Ok(values) } else { Err(Unclear { problems }) }
}

/// The question `line` names (`Header: value`, against the folded `headers`), and its value;
/// `None` when its key names no question, or more than one.
fn keyed_line<'r>(headers: &[String], line: &'r str) -> Option<(usize, &'r str)> {
    let (key, value) = split_key(line)?;
    let key = fold(&squash(key)).into_owned();
    if let Some(index) = headers.iter().position(|h| *h == key) {
        return Some((index, trim(value)));
    }
    let mut prefixed = headers.iter().enumerate().filter(|(_, h)| h.starts_with(key.as_str()));
    match (prefixed.next(), prefixed.next()) {
        (Some((index, _)), None) if !key.is_empty() => Some((index, trim(value))),
        _ => None,
    }
}

/// `key: value` split at the first colon (a full-width one too).
fn split_key(line: &str) -> Option<(&str, &str)> {
    let at = line.find([':', '：'])?;
    let colon = line[at..].chars().next().map_or(1, char::len_utf8);
    Some((&line[..at], &line[at + colon..]))
}

/// `question`'s answer from its `value`, or what is wrong with it.
fn answer(question: &Question, value: &str) -> Result<AskUserAnswer, String> {
    let header = question.header();
    let value = trim(value);
    if value.is_empty() {
        return Err(format!("{header}: the answer is empty."));
    }
    match question.kind() {
        QuestionKind::Secret => {
            Err(format!("{header}: a secret is never typed in a reply; answer it on the page."))
        }
        QuestionKind::Text => typed(header, value),
        QuestionKind::Choice => choice(question, value),
    }
}

/// A typed answer, as typed (trimmed), within the length limit.
fn typed(header: &str, text: &str) -> Result<AskUserAnswer, String> {
    if text.is_empty() {
        return Err(format!("{header}: the answer is empty."));
    }
    let chars = text.chars().count();
    if chars > MAX_CUSTOM_CHARS {
        return Err(format!(
            "{header}: the answer has {chars} characters; at most {MAX_CUSTOM_CHARS} are taken."
        ));
    }
    Ok(AskUserAnswer::custom(header, text))
}

/// A choice question's answer: `Other: …`, a label, or a list of numbers or labels.
fn choice(question: &Question, value: &str) -> Result<AskUserAnswer, String> {
    let header = question.header();
    if let Some(label) = label_of(question, value) {
        return Ok(AskUserAnswer::picked(header, [label]));
    }
    if let Some((key, text)) = split_key(value)
        && fold(&squash(key)) == "other"
    {
        return if question.allow_other() {
            typed(header, trim(text))
        } else {
            Err(format!("{header}: typed answers are not taken here; pick one of {}.", options(question)))
        };
    }
    // Width folded first: full-width digits and commas are digits and commas.
    let normalized = fold(value);
    let separator = |c: char| c == ',' || c == ';' || c == '\n';
    let items: Vec<&str> = if normalized
        .chars()
        .all(|c| c.is_ascii_digit() || separator(c) || is_python_space(c))
    {
        normalized.split(|c| separator(c) || is_python_space(c)).filter(|s| !s.is_empty()).collect()
    } else {
        value.split(|c| separator(c) || c == '，' || c == '；').map(trim).filter(|s| !s.is_empty()).collect()
    };
    let mut picked: Vec<&str> = Vec::new();
    let mut problems = Vec::new();
    for item in &items {
        match pick(question, item) {
            Ok(label) if picked.contains(&label) => {}
            Ok(label) => picked.push(label),
            Err(problem) => problems.push(problem),
        }
    }
    if !problems.is_empty() {
        return Err(format!("{header}: {}", problems.join(" ")));
    }
    if picked.len() > 1 && !question.multi_select() {
        return Err(format!("{header}: pick one option, not {}.", picked.len()));
    }
    if picked.is_empty() {
        return Err(format!("{header}: the answer is empty."));
    }
    Ok(AskUserAnswer::picked(header, picked))
}

/// The option `item` picks: its number, its label, or a prefix only its label has.
fn pick<'q>(question: &'q Question, item: &str) -> Result<&'q str, String> {
    let count = question.options().len();
    if item.chars().all(|c| c.is_ascii_digit()) {
        return match item.parse::<usize>() {
            Ok(n) if (1..=count).contains(&n) => Ok(question.options()[n - 1].label()),
            _ => Err(format!("there is no option {item} (options are numbered 1 to {count}).")),
        };
    }
    if let Some(label) = label_of(question, item) {
        return Ok(label);
    }
    let key = fold(&squash(item)).into_owned();
    let matching: Vec<&str> = question
        .options()
        .iter()
        .map(QuestionOption::label)
        .filter(|label| fold(&squash(label)).starts_with(key.as_str()))
        .collect();
    match matching.as_slice() {
        [label] => Ok(label),
        [] => Err(format!("{} is none of the options ({}).", quoted(item), options(question))),
        several => Err(format!(
            "{} could be {}: type more of it, or its number.",
            quoted(item),
            several.iter().map(|l| quoted(l)).collect::<Vec<_>>().join(" or ")
        )),
    }
}

/// The label `value` is, matched without regard to case, width or spacing.
fn label_of<'q>(question: &'q Question, value: &str) -> Option<&'q str> {
    let key = fold(&squash(value)).into_owned();
    question.options().iter().map(QuestionOption::label).find(|label| fold(&squash(label)) == key)
}

/// `s` trimmed of Python's white space.
fn trim(s: &str) -> &str {
    s.trim_matches(is_python_space)
}

/// `s` trimmed, its inner runs of white space one space each.
fn squash(s: &str) -> String {
    trim(s).split(is_python_space).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
}

fn quoted(s: &str) -> String {
    let shown: String = s.chars().take(40).collect();
    if shown.len() < s.len() { format!("\"{shown}…\"") } else { format!("\"{shown}\"") }
}

fn headers(questions: &[Question]) -> String {
    questions.iter().map(Question::header).collect::<Vec<_>>().join(", ")
}

fn options(question: &Question) -> String {
    question
        .options()
        .iter()
        .enumerate()
        .map(|(i, o)| format!("{} {}", i + 1, o.label()))
        .collect::<Vec<_>>()
        .join(", ")
}
