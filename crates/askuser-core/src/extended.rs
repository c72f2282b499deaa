//! The extended profile's own rules (docs/contract.md §10): one function per extended key, which the walk
//! (`walk.rs`) calls in the order of `keys.rs`'s tables, and the rules across questions. Every
//! rule the two profiles share is in `rules.rs`. The per-key rules are `#[inline]`: called out of
//! line, the typical extended call ran 2 % slower.

use crate::error::{JsonType, ProblemKind, Problems};
use crate::keys::{OptionKey, QuestionKey};
use crate::model::{Question, QuestionId, QuestionOption};
use crate::profile::{MAX_ID_CHARS, MAX_PURPOSE_CHARS, MAX_QUESTIONS, QuestionKind};
use crate::raw::{RawKind, RawNumber, Slot};
use crate::rules::{Path, TextRule, problem, text, wrong_type};
use crate::text::Span;

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

/// `timeout_seconds`: absent or null (`Ok(None)`), or a whole number in 1 ..= `max`; `Err(())`
/// once the problem is recorded.
pub(crate) fn timeout_seconds(
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

/// `kind`: absent or null is a choice question. With an unknown kind, the other fields are held
/// to a choice question's rules.
#[inline]
pub(crate) fn kind(
    slot: &Slot<RawKind>,
    arena: &str,
    question: &Path<'_>,
    problems: &mut Problems,
) -> QuestionKind {
    let path = question.key(QuestionKey::Kind.name());
    match slot {
        Slot::Missing | Slot::Wrong(JsonType::Null) => QuestionKind::Choice,
        Slot::Present(RawKind::Known(kind)) => *kind,
        Slot::Present(RawKind::Other(span)) => {
            let found = arena[span.clone()].to_owned();
            problem(problems, &path, ProblemKind::InvalidKind { found });
            QuestionKind::Choice
        }
        Slot::Wrong(found) => {
            wrong_type::<()>("a string or null", *found, &path, problems);
            QuestionKind::Choice
        }
    }
}

/// `id`: absent or null gets one generated ([`call_rules`]).
#[inline]
pub(crate) fn id(slot: &Slot<Span>, arena: &str, question: &Path<'_>, problems: &mut Problems) -> QuestionId {
    let path = question.key(QuestionKey::Id.name());
    match slot {
        Slot::Missing | Slot::Wrong(JsonType::Null) => QuestionId::None,
        Slot::Present(span) => pattern(arena, span.clone(), &ID, is_id, ID_RULE, &path, problems)
            .map_or(QuestionId::None, QuestionId::Given),
        Slot::Wrong(found) => {
            wrong_type::<()>("a string or null", *found, &path, problems);
            QuestionId::None
        }
    }
}

/// `allow_other` (default true) as the question keeps it: only a choice question has the choice,
/// and only a choice question may refuse it.
#[inline]
pub(crate) fn allow_other(
    slot: &Slot<bool>,
    kind: QuestionKind,
    question: &Path<'_>,
    problems: &mut Problems,
) -> bool {
    let path = question.key(QuestionKey::AllowOther.name());
    let allow_other = match slot {
        Slot::Missing | Slot::Wrong(JsonType::Null) => true,
        Slot::Present(false) if kind != QuestionKind::Choice => {
            kind_mismatch("choice", kind, &path, problems);
            false
        }
        Slot::Present(value) => *value,
        Slot::Wrong(found) => {
            wrong_type::<()>("a boolean or null", *found, &path, problems);
            true
        }
    };
    allow_other && kind == QuestionKind::Choice
}

/// `secret_name`: a name like an environment variable ([`secret_only`]).
#[inline]
pub(crate) fn secret_name(
    slot: &Slot<Span>,
    kind: QuestionKind,
    arena: &str,
    question: &Path<'_>,
    problems: &mut Problems,
) -> Option<Span> {
    let path = question.key(QuestionKey::SecretName.name());
    secret_only(slot, kind, &path, problems, |span, problems| {
        pattern(arena, span, &ID, is_secret_name, SECRET_NAME_RULE, &path, problems)
    })
}

/// `purpose`: why the task needs the secret ([`secret_only`]).
#[inline]
pub(crate) fn purpose(
    slot: &Slot<Span>,
    kind: QuestionKind,
    arena: &str,
    question: &Path<'_>,
    problems: &mut Problems,
) -> Option<Span> {
    let path = question.key(QuestionKey::Purpose.name());
    secret_only(slot, kind, &path, problems, |span, problems| text(arena, span, &PURPOSE, &path, problems))
}

/// A string key only a secret question has: required there (and read by `rule`), refused on the
/// others; absent or null is absent.
fn secret_only(
    slot: &Slot<Span>,
    kind: QuestionKind,
    path: &Path<'_>,
    problems: &mut Problems,
    rule: impl FnOnce(Span, &mut Problems) -> Option<Span>,
) -> Option<Span> {
    match (slot, kind) {
        (Slot::Missing | Slot::Wrong(JsonType::Null), _) if kind != QuestionKind::Secret => None,
        (Slot::Missing | Slot::Wrong(JsonType::Null), _) => {
            problem(problems, path, ProblemKind::Missing);
            None
        }
        (Slot::Present(span), QuestionKind::Secret) => rule(span.clone(), problems),
        (Slot::Present(_), kind) => {
            kind_mismatch("secret", kind, path, problems);
            None
        }
        (Slot::Wrong(found), _) => wrong_type("a string or null", *found, path, problems),
    }
}

/// An option's `default`: absent or null is false. A wrong type is recorded and fails the option,
/// so no `Option` is needed here.
#[inline]
pub(crate) fn default(slot: &Slot<bool>, option: &Path<'_>, problems: &mut Problems) -> bool {
    match *slot {
        Slot::Missing | Slot::Wrong(JsonType::Null) => false,
        Slot::Present(value) => value,
        Slot::Wrong(found) => {
            let path = option.key(OptionKey::Default.name());
            problem(problems, &path, ProblemKind::WrongType { expected: "a boolean or null", found });
            false
        }
    }
}

/// `Some(())` unless a single-select question marks two options `default` (the problem is then
/// recorded at the second).
#[inline]
pub(crate) fn one_default(
    options: &[QuestionOption],
    question: &Path<'_>,
    problems: &mut Problems,
) -> Option<()> {
    let mut defaults = options.iter().enumerate().filter(|(_, o)| o.is_default()).map(|(i, _)| i);
    if let (Some(first), Some(second)) = (defaults.next(), defaults.next()) {
        let options = question.key(QuestionKey::Options.name());
        let at = options.index(second);
        problem(problems, &at.key(OptionKey::Default.name()), ProblemKind::TooManyDefaults { first, second });
        return None;
    }
    Some(())
}

pub(crate) fn kind_mismatch(
    only_for: &'static str,
    kind: QuestionKind,
    path: &Path<'_>,
    problems: &mut Problems,
) {
    problem(problems, path, ProblemKind::KindMismatch { only_for, kind: kind.as_str() });
}

/// The rules across questions after the headers' (`rules::headers_unique`), in order: ids unique
/// exactly, a secret question alone. Then, if no problem was found since `before`, every question
/// without an id gets one.
pub(crate) fn call_rules(
    questions: &mut [Question],
    path: &Path<'_>,
    problems: &mut Problems,
    before: usize,
) {
    // Each question's id read once; the walk only calls this with at most ten questions.
    let mut given = [None; MAX_QUESTIONS];
    for (id, question) in given.iter_mut().zip(questions.iter()) {
        *id = question.id();
    }
    let given = &given[..questions.len()];
    let duplicate = (1..given.len()).find_map(|second| {
        let id = given[second]?;
        given[..second].iter().position(|&other| other == Some(id)).map(|first| (first, second, id))
    });
    if let Some((first, second, id)) = duplicate {
        let id = id.to_owned();
        let at = path.index(second);
        problem(problems, &at.key(QuestionKey::Id.name()), ProblemKind::DuplicateId { first, second, id });
    }
    let count = questions.len();
    if let Some(index) = questions.iter().position(|q| q.kind() == QuestionKind::Secret).filter(|_| count > 1)
    {
        let at = path.index(index);
        problem(problems, &at.key(QuestionKey::Kind.name()), ProblemKind::SecretNotAlone { index, count });
    }
    if problems.len() != before {
        return;
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
}

/// A string field checked by the rules of contract §2.1, then by a pattern over its characters.
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
    let span = text(arena, span, rule, path, problems)?;
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
