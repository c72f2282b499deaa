//! The extended profile's validation (SPEC §10), beside the reference's in `validate.rs`, which it
//! reuses for every rule the two share. Kept apart so that the reference path stays exactly as it
//! was, and as fast.
//!
//! Problems are reported in the same manner as the reference's: fields in the order of
//! [`QUESTION_FIELDS`] (and [`ARGS_FIELDS`], [`OPTION_FIELDS`]), then unknown keys in input order;
//! checks that compare values (unique labels, one default on a single-select question, unique
//! headers and ids, a secret question alone) only once everything they compare is valid.

use std::sync::Arc;

use crate::error::{JsonType, Location, ProblemKind, Problems, ValidationError};
use crate::model::{
    Extras, MAX_DESCRIPTION_CHARS, MAX_QUESTIONS, Question, QuestionId, QuestionKind, QuestionOption,
    Questions,
};
use crate::raw::{RawArgs, RawKind, RawNumber, RawOption, RawQuestion, RawQuestionExt, Slot, Span};
use crate::text;
use crate::validate::{
    DESCRIPTION, HEADER, LABEL, Path, QUESTION, TextRule, each, labels_unique, option_count, problem,
    required_text, unknown_fields, wrong_type,
};

/// The keys of the arguments, in the order their problems are reported.
pub(crate) const ARGS_FIELDS: &[&str] = &["questions", "timeout_seconds"];
/// The keys of a question, in the order their problems are reported.
pub(crate) const QUESTION_FIELDS: &[&str] =
    &["kind", "id", "header", "question", "options", "multi_select", "allow_other", "secret_name", "purpose"];
/// The keys of an option, in the order their problems are reported.
pub(crate) const OPTION_FIELDS: &[&str] = &["label", "description", "default"];

/// Most characters in an `id` or a `secret_name`.
pub const MAX_ID_CHARS: usize = 64;
/// Most code points in a secret question's `purpose`, after trimming.
pub const MAX_PURPOSE_CHARS: usize = MAX_DESCRIPTION_CHARS;

const ID: TextRule = TextRule { min: 1, max: MAX_ID_CHARS, multiline: false };
const PURPOSE: TextRule = TextRule { min: 1, max: MAX_PURPOSE_CHARS, multiline: true };
const ID_RULE: &str = "1 to 64 characters from A-Z, a-z, 0-9, _, . and -";
const SECRET_NAME_RULE: &str = "a name like an environment variable: [A-Za-z_][A-Za-z0-9_]{0,63}";

/// Ids given to questions that have none, in order, skipping ids already taken. Ten questions can
/// take at most ten of them, so twenty always suffice.
const GENERATED_IDS: [&str; 2 * MAX_QUESTIONS] = [
    "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10", "q11", "q12", "q13", "q14", "q15", "q16",
    "q17", "q18", "q19", "q20",
];

pub(crate) fn args(
    raw: Slot<RawArgs>,
    arena: &Arc<str>,
    max_timeout: u32,
) -> Result<Questions, ValidationError> {
    let root = Path::Root;
    let raw = match raw {
        Slot::Present(raw) => raw,
        Slot::Missing => RawArgs::default(),
        Slot::Wrong(found) => {
            return Err(ValidationError::single(
                Location::root(),
                ProblemKind::WrongType { expected: "an object", found },
            ));
        }
    };
    let mut problems = Problems::new();
    let path = root.key("questions");
    let questions = match raw.questions {
        Slot::Present(items) => question_items(items, &raw.exts, arena, &path, &mut problems),
        Slot::Missing => {
            problem(&mut problems, &path, ProblemKind::Missing);
            None
        }
        Slot::Wrong(found) => wrong_type("an array", found, &path, &mut problems),
    };
    let timeout_path = root.key("timeout_seconds");
    let timeout = timeout_seconds(&raw.timeout_seconds, max_timeout, &timeout_path, &mut problems);
    unknown_fields(raw.unknown, &root, ARGS_FIELDS, &mut problems);
    match (questions, timeout) {
        (Some(questions), Ok(timeout)) if problems.is_empty() => Ok(questions.with_timeout_seconds(timeout)),
        _ => Err(problems.into_error()),
    }
}

/// `timeout_seconds`: absent or null (`Ok(None)`), or a whole number in 1 ..= `max`; `Err(())`
/// once the problem is recorded.
fn timeout_seconds(
    slot: &Slot<RawNumber>,
    max: u32,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Result<Option<u32>, ()> {
    let kind = match *slot {
        Slot::Missing | Slot::Wrong(JsonType::Null) => return Ok(None),
        Slot::Wrong(found) => ProblemKind::WrongType { expected: "an integer or null", found },
        Slot::Present(RawNumber::Integer(n)) => match u32::try_from(n) {
            Ok(n) if (1..=max).contains(&n) => return Ok(Some(n)),
            _ => ProblemKind::OutOfRange { min: 1, max: u64::from(max), actual: n.to_string() },
        },
        Slot::Present(RawNumber::Other(f)) => {
            let found = serde_json::Number::from_f64(f).map_or_else(|| f.to_string(), |n| n.to_string());
            // A whole number too large for an integer reads as a float in `serde_json`: it is out
            // of range rather than "not a whole number", whichever path it came by.
            if f.is_finite() && f.fract() == 0.0 && f.abs() >= 9_007_199_254_740_992.0 {
                ProblemKind::OutOfRange { min: 1, max: u64::from(max), actual: found }
            } else {
                ProblemKind::NotAnInteger { found }
            }
        }
    };
    problem(problems, path, kind);
    Err(())
}

fn question_items(
    items: Vec<Slot<RawQuestion>>,
    exts: &[RawQuestionExt],
    arena: &Arc<str>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<Questions> {
    let count = items.len();
    if count > MAX_QUESTIONS {
        problem(problems, path, ProblemKind::TooManyItems { max: MAX_QUESTIONS, actual: count });
    }
    let questions = each(items, path, problems, |item, path, problems| match item {
        Slot::Present(raw) => question(raw, exts, arena, path, problems),
        Slot::Missing => {
            problem(problems, path, ProblemKind::Missing);
            None
        }
        Slot::Wrong(found) => wrong_type("an object", found, path, problems),
    });
    if count == 0 {
        problem(problems, path, ProblemKind::TooFewItems { min: 1, actual: 0 });
    }
    match questions {
        Some(questions) if count != 0 && count <= MAX_QUESTIONS => call_rules(questions, path, problems),
        _ => None,
    }
}

/// The rules across questions, in order: headers unique by fold, ids unique exactly, a secret
/// question alone. Then every question without an id gets one.
fn call_rules(mut questions: Vec<Question>, path: &Path<'_>, problems: &mut Problems) -> Option<Questions> {
    let before = problems.len();
    if let Some((first, second)) = text::first_duplicate(&questions, Question::header) {
        let header = questions[second].header().to_owned();
        problem(problems, path, ProblemKind::DuplicateHeader { first, second, header });
    }
    // Each question's id read once; `call_rules` is only reached with at most ten questions.
    let mut given = [None; MAX_QUESTIONS];
    for (id, question) in given.iter_mut().zip(&questions) {
        *id = question.id();
    }
    let given = &given[..questions.len()];
    let duplicate = (1..given.len()).find_map(|second| {
        let id = given[second]?;
        given[..second].iter().position(|&other| other == Some(id)).map(|first| (first, second, id))
    });
    if let Some((first, second, id)) = duplicate {
        let id = id.to_owned();
        problem(problems, &path.index(second).key("id"), ProblemKind::DuplicateId { first, second, id });
    }
    let count = questions.len();
    if let Some(index) = questions.iter().position(|q| q.kind() == QuestionKind::Secret).filter(|_| count > 1)
    {
        problem(problems, &path.index(index).key("kind"), ProblemKind::SecretNotAlone { index, count });
    }
    if problems.len() != before {
        return None;
    }
    // Chosen first, against the given ids, then assigned: no allocation on the way.
    let mut generated = [None; MAX_QUESTIONS];
    if given.contains(&None) {
        let mut free = GENERATED_IDS.iter().copied().filter(|id| !given.contains(&Some(*id)));
        for (slot, id) in generated.iter_mut().zip(given) {
            if id.is_none() {
                *slot = free.next();
            }
        }
    }
    for (question, id) in questions.iter_mut().zip(generated) {
        if let (Some(extras), Some(id)) = (question.extras_mut(), id) {
            extras.id = QuestionId::Generated(id);
        }
    }
    Some(Questions::from_parts(questions))
}

/// A string field checked by the rules of SPEC §2.1, then by a pattern over its characters.
fn pattern(
    arena: &str,
    span: Span,
    rule: &TextRule,
    matches: fn(&str) -> bool,
    expected: &'static str,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<Span> {
    // Both patterns are ASCII letters, digits and punctuation: a string that fits one has as many
    // characters as bytes and none the text rules forbid, so its length is all left to check.
    let s = &arena[span.clone()];
    if (rule.min..=rule.max).contains(&s.len()) && matches(s) {
        return Some(span);
    }
    let span = crate::validate::text(arena, span, rule, path, problems)?;
    if matches(&arena[span.clone()]) {
        return Some(span);
    }
    problem(problems, path, ProblemKind::PatternMismatch { expected, found: arena[span].to_owned() });
    None
}

/// The bytes an `id` may hold: A-Z, a-z, 0-9, `_`, `.` and `-`.
static ID_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        #[expect(clippy::cast_possible_truncation, reason = "b is below 256")]
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-';
        b += 1;
    }
    table
};

fn is_id(s: &str) -> bool {
    s.bytes().all(|b| ID_BYTES[usize::from(b)])
}

fn is_secret_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn kind_mismatch(only_for: &'static str, kind: QuestionKind, path: &Path<'_>, problems: &mut Problems) {
    problem(problems, path, ProblemKind::KindMismatch { only_for, kind: kind.as_str() });
}

#[expect(clippy::too_many_lines, reason = "one field after another, in the order problems are reported")]
fn question(
    raw: RawQuestion,
    exts: &[RawQuestionExt],
    arena: &Arc<str>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<Question> {
    let before = problems.len();
    // Read where it is, not moved out: most questions send few of these keys, or none.
    let ext = raw.ext.map_or(&RawQuestionExt::NONE, |index| &exts[index]);
    // The extended keys' problems are recorded as they are found, and any problem fails the
    // question below: a bad key yields a stand-in value instead of an `Option` to unwrap.
    let kind = match &ext.kind {
        Slot::Missing | Slot::Wrong(JsonType::Null) => QuestionKind::Choice,
        Slot::Present(RawKind::Known(kind)) => *kind,
        Slot::Present(RawKind::Other(span)) => {
            let found = arena[span.clone()].to_owned();
            problem(problems, &path.key("kind"), ProblemKind::InvalidKind { found });
            // With an unknown kind, the other fields are held to a choice question's rules.
            QuestionKind::Choice
        }
        Slot::Wrong(found) => {
            wrong_type::<()>("a string or null", *found, &path.key("kind"), problems);
            QuestionKind::Choice
        }
    };
    let rules = kind;
    let id = match &ext.id {
        Slot::Missing | Slot::Wrong(JsonType::Null) => QuestionId::None,
        Slot::Present(span) => {
            let id_path = path.key("id");
            pattern(arena, span.clone(), &ID, is_id, ID_RULE, &id_path, problems)
                .map_or(QuestionId::None, QuestionId::Given)
        }
        Slot::Wrong(found) => {
            wrong_type::<()>("a string or null", *found, &path.key("id"), problems);
            QuestionId::None
        }
    };
    let header = required_text(arena, raw.header, &HEADER, &path.key("header"), problems);
    let question = required_text(arena, raw.question, &QUESTION, &path.key("question"), problems);
    let options_path = path.key("options");
    let options = match (raw.options, rules) {
        (Slot::Present(items), QuestionKind::Choice) => option_items(items, arena, &options_path, problems),
        (Slot::Missing, QuestionKind::Choice) => {
            problem(problems, &options_path, ProblemKind::Missing);
            None
        }
        (Slot::Missing, _) => Some(Vec::new()),
        (Slot::Present(items), _) if items.is_empty() => Some(Vec::new()),
        (Slot::Present(_), kind) => {
            kind_mismatch("choice", kind, &options_path, problems);
            None
        }
        (Slot::Wrong(found), _) => wrong_type("an array", found, &options_path, problems),
    };
    let multi_path = path.key("multi_select");
    let multi_select = match raw.multi_select {
        Slot::Missing => Some(false),
        Slot::Present(crate::raw::LaxBool(Ok(true))) if rules != QuestionKind::Choice => {
            kind_mismatch("choice", rules, &multi_path, problems);
            None
        }
        Slot::Present(crate::raw::LaxBool(Ok(value))) => Some(value),
        Slot::Present(crate::raw::LaxBool(Err(found))) => {
            problem(problems, &multi_path, ProblemKind::InvalidBoolean { found });
            None
        }
        Slot::Wrong(found) => wrong_type("a boolean", found, &multi_path, problems),
    };
    let allow_other = match &ext.allow_other {
        Slot::Missing | Slot::Wrong(JsonType::Null) => true,
        Slot::Present(false) if rules != QuestionKind::Choice => {
            kind_mismatch("choice", rules, &path.key("allow_other"), problems);
            false
        }
        Slot::Present(value) => *value,
        Slot::Wrong(found) => {
            wrong_type::<()>("a boolean or null", *found, &path.key("allow_other"), problems);
            true
        }
    };
    let secret_name = match (&ext.secret_name, rules) {
        (Slot::Missing | Slot::Wrong(JsonType::Null), _) if rules != QuestionKind::Secret => None,
        (Slot::Missing | Slot::Wrong(JsonType::Null), _) => {
            problem(problems, &path.key("secret_name"), ProblemKind::Missing);
            None
        }
        (Slot::Present(span), QuestionKind::Secret) => {
            let name_path = path.key("secret_name");
            pattern(arena, span.clone(), &ID, is_secret_name, SECRET_NAME_RULE, &name_path, problems)
        }
        (Slot::Present(_), kind) => {
            kind_mismatch("secret", kind, &path.key("secret_name"), problems);
            None
        }
        (Slot::Wrong(found), _) => wrong_type("a string or null", *found, &path.key("secret_name"), problems),
    };
    let purpose = match (&ext.purpose, rules) {
        (Slot::Missing | Slot::Wrong(JsonType::Null), _) if rules != QuestionKind::Secret => None,
        (Slot::Missing | Slot::Wrong(JsonType::Null), _) => {
            problem(problems, &path.key("purpose"), ProblemKind::Missing);
            None
        }
        (Slot::Present(span), QuestionKind::Secret) => {
            crate::validate::text(arena, span.clone(), &PURPOSE, &path.key("purpose"), problems)
        }
        (Slot::Present(_), kind) => {
            kind_mismatch("secret", kind, &path.key("purpose"), problems);
            None
        }
        (Slot::Wrong(found), _) => wrong_type("a string or null", *found, &path.key("purpose"), problems),
    };
    unknown_fields(raw.unknown, path, QUESTION_FIELDS, problems);
    if problems.len() != before {
        return None;
    }
    let (options, multi_select) = (options?, multi_select?);
    let extras =
        Extras { kind, id, allow_other: allow_other && kind == QuestionKind::Choice, secret_name, purpose };
    if kind != QuestionKind::Choice {
        return Some(Question::from_parts(arena, header?, question?, options, false, Some(extras)));
    }
    labels_unique(&options, path, problems)?;
    if !multi_select {
        let mut defaults = options.iter().enumerate().filter(|(_, o)| o.is_default()).map(|(i, _)| i);
        if let (Some(first), Some(second)) = (defaults.next(), defaults.next()) {
            let at = path.key("options");
            let at = at.index(second);
            problem(problems, &at.key("default"), ProblemKind::TooManyDefaults { first, second });
            return None;
        }
    }
    Some(Question::from_parts(arena, header?, question?, options, multi_select, Some(extras)))
}

fn option_items(
    items: Vec<Slot<RawOption>>,
    arena: &Arc<str>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<Vec<QuestionOption>> {
    let count = items.len();
    let options = each(items, path, problems, |item, path, problems| match item {
        Slot::Present(raw) => option(raw, arena, path, problems),
        Slot::Missing => {
            problem(problems, path, ProblemKind::Missing);
            None
        }
        Slot::Wrong(found) => wrong_type("an object", found, path, problems),
    });
    let count_ok = option_count(count, path, problems);
    options.filter(|_| count_ok)
}

fn option(
    raw: RawOption,
    arena: &Arc<str>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<QuestionOption> {
    let before = problems.len();
    let label = required_text(arena, raw.label, &LABEL, &path.key("label"), problems);
    let description_path = path.key("description");
    let description = match raw.description {
        Slot::Missing | Slot::Wrong(JsonType::Null) => Some(None),
        Slot::Present(span) => {
            crate::validate::text(arena, span, &DESCRIPTION, &description_path, problems).map(Some)
        }
        Slot::Wrong(found) => wrong_type("a string or null", found, &description_path, problems),
    };
    // A wrong type is recorded and fails the option below, so no `Option` is needed here.
    let default = match raw.default {
        Slot::Missing | Slot::Wrong(JsonType::Null) => false,
        Slot::Present(value) => value,
        Slot::Wrong(found) => {
            problem(
                problems,
                &path.key("default"),
                ProblemKind::WrongType { expected: "a boolean or null", found },
            );
            false
        }
    };
    unknown_fields(raw.unknown, path, OPTION_FIELDS, problems);
    if problems.len() != before {
        return None;
    }
    Some(QuestionOption::from_parts(arena, label?, description?, default))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_table_holds_exactly_the_id_characters() {
        for b in 0..=u8::MAX {
            let allowed = b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
            assert_eq!(ID_BYTES[usize::from(b)], allowed, "byte {b:#04x}");
        }
    }
}
