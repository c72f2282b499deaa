//! The rules the reference and extended walks share: where a problem is (`Path`), how it is
//! recorded, the rules of one string field (docs/contract.md §2.1) and the checks that compare values.

use crate::error::{JsonType, Location, Problem, ProblemKind, Problems};
use crate::model::{Question, QuestionOption};
use crate::profile::{
    MAX_DESCRIPTION_CHARS, MAX_HEADER_CHARS, MAX_LABEL_CHARS, MAX_OPTIONS, MAX_QUESTION_CHARS, MIN_OPTIONS,
};
use crate::raw::Slot;
use crate::text::{self, Span};

/// A location built on the stack while walking; turned into a [`Location`] only for a problem.
#[derive(Clone, Copy)]
pub(crate) enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'static str),
    Index(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    pub(crate) fn key(&'a self, key: &'static str) -> Path<'a> {
        Path::Key(self, key)
    }

    pub(crate) fn index(&'a self, index: usize) -> Path<'a> {
        Path::Index(self, index)
    }

    pub(crate) fn location(&self) -> Location {
        match self {
            Path::Root => Location::root(),
            Path::Key(parent, key) => parent.location().key(*key),
            Path::Index(parent, index) => parent.location().index(*index),
        }
    }
}

pub(crate) fn problem(problems: &mut Problems, path: &Path<'_>, kind: ProblemKind) {
    problems.push(|| Problem::new(path.location(), kind));
}

#[inline]
pub(crate) fn unknown_fields(
    unknown: Vec<String>,
    path: &Path<'_>,
    allowed: &'static [&'static str],
    problems: &mut Problems,
) {
    if unknown.is_empty() {
        return;
    }
    for name in unknown {
        problems.push(|| Problem::new(path.location().key(name), ProblemKind::UnknownField { allowed }));
    }
}

/// The limits of one string field.
pub(crate) struct TextRule {
    pub(crate) min: usize,
    pub(crate) max: usize,
    pub(crate) multiline: bool,
}

pub(crate) const HEADER: TextRule = TextRule { min: 1, max: MAX_HEADER_CHARS, multiline: false };
pub(crate) const QUESTION: TextRule = TextRule { min: 1, max: MAX_QUESTION_CHARS, multiline: true };
pub(crate) const LABEL: TextRule = TextRule { min: 1, max: MAX_LABEL_CHARS, multiline: false };
pub(crate) const DESCRIPTION: TextRule = TextRule { min: 0, max: MAX_DESCRIPTION_CHARS, multiline: true };

/// Steps 3–5 of contract §2.1 on an already trimmed string: length, then characters; one problem at most.
#[inline]
pub(crate) fn text(
    arena: &str,
    span: Span,
    rule: &TextRule,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<Span> {
    let s = &arena[span.clone()];
    let fast = text::printable_ascii(s, rule.multiline);
    let len = if fast { s.len() } else { text::char_len(s) };
    let kind = if len < rule.min {
        ProblemKind::StringTooShort { min: rule.min, actual: len }
    } else if len > rule.max {
        ProblemKind::StringTooLong { max: rule.max, actual: len }
    } else if let Some((position, character)) =
        (!fast).then(|| text::first_forbidden(s, rule.multiline)).flatten()
    {
        ProblemKind::ForbiddenCharacter { character, position, newline_allowed: rule.multiline }
    } else {
        return Some(span);
    };
    problem(problems, path, kind);
    None
}

// The match on `Slot` is spelled out in each reader of the walk (`walk.rs`) rather than shared
// through a generic helper taking a closure: the helper measured 7 % slower on the typical call
// (CHANGELOG.md, performance history).
#[inline]
pub(crate) fn required_text(
    arena: &str,
    slot: Slot<Span>,
    rule: &TextRule,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<Span> {
    match slot {
        Slot::Present(span) => text(arena, span, rule, path, problems),
        Slot::Missing => {
            problem(problems, path, ProblemKind::Missing);
            None
        }
        Slot::Wrong(found) => {
            problem(problems, path, ProblemKind::WrongType { expected: "a string", found });
            None
        }
    }
}

pub(crate) fn wrong_type<T>(
    expected: &'static str,
    found: JsonType,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<T> {
    problem(problems, path, ProblemKind::WrongType { expected, found });
    None
}

/// Reads every item of a list, so that each one's problems are reported; `None` if any is invalid.
pub(crate) fn each<R, T>(
    items: Vec<Slot<R>>,
    path: &Path<'_>,
    problems: &mut Problems,
    mut read: impl FnMut(Slot<R>, &Path<'_>, &mut Problems) -> Option<T>,
) -> Option<Vec<T>> {
    let mut out = Vec::with_capacity(items.len());
    let mut all_valid = true;
    for (i, item) in items.into_iter().enumerate() {
        match read(item, &path.index(i), problems) {
            Some(value) => out.push(value),
            None => all_valid = false,
        }
    }
    all_valid.then_some(out)
}

/// `Some(())` if the headers are unique once folded, else the problem is recorded.
pub(crate) fn headers_unique(questions: &[Question], path: &Path<'_>, problems: &mut Problems) -> Option<()> {
    if let Some((first, second)) = text::first_duplicate(questions, Question::header) {
        let header = questions[second].header().to_owned();
        problem(problems, path, ProblemKind::DuplicateHeader { first, second, header });
        return None;
    }
    Some(())
}

/// `Some(())` if the options' labels are unique once folded, else the problem is recorded.
pub(crate) fn labels_unique(
    options: &[QuestionOption],
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<()> {
    if let Some((first, second)) = text::first_duplicate(options, QuestionOption::label) {
        let label = options[second].label().to_owned();
        problem(problems, path, ProblemKind::DuplicateLabel { first, second, label });
        return None;
    }
    Some(())
}

pub(crate) fn option_count(count: usize, path: &Path<'_>, problems: &mut Problems) -> bool {
    let kind = if count < MIN_OPTIONS {
        ProblemKind::TooFewItems { min: MIN_OPTIONS, actual: count }
    } else if count > MAX_OPTIONS {
        ProblemKind::TooManyItems { max: MAX_OPTIONS, actual: count }
    } else {
        return true;
    };
    problem(problems, path, kind);
    false
}
