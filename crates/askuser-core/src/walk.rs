//! From the lenient mirror of the arguments to validated types, collecting every problem in the
//! order the reference reports them: fields in the order of `keys.rs`'s tables, then unknown keys
//! in input order; checks that compare values (unique labels and headers, and in the extended
//! profile one default on a single-select question, unique ids, a secret question alone) only once
//! everything they compare is valid.
//!
//! One walk for both profiles, generic over a zero-sized [`Walk`]: every extended branch tests a
//! constant, so the reference profile's walk compiles to the code it had before the extended
//! profile existed, which is what keeps it as fast. The extended keys' own rules are in
//! `extended.rs`.

use std::sync::Arc;

use crate::error::{JsonType, Location, ProblemKind, Problems, ValidationError};
use crate::extended;
use crate::keys::{ArgsKey, OptionKey, QuestionKey};
use crate::model::{Extras, Question, QuestionId, QuestionOption, Questions};
use crate::profile::{MAX_OPTIONS, MAX_QUESTIONS, MIN_OPTIONS, QuestionKind};
use crate::raw::{LaxBool, RawArgs, RawOption, RawQuestion, RawQuestionExt, Slot};
use crate::rules::{
    DESCRIPTION, HEADER, LABEL, Path, QUESTION, each, headers_unique, labels_unique, option_count, problem,
    required_text, text, unknown_fields, wrong_type,
};

/// A profile, as a type: which keys the walk knows.
pub(crate) trait Walk {
    /// Whether the extended profile's keys and rules apply.
    const EXTENDED: bool;
}

/// The reference profile.
pub(crate) struct Reference;

impl Walk for Reference {
    const EXTENDED: bool = false;
}

/// The extended profile (docs/contract.md §10).
pub(crate) struct Extended;

impl Walk for Extended {
    const EXTENDED: bool = true;
}

/// The arguments: `max_timeout` bounds `timeout_seconds` (extended profile).
// One function per profile: inlined together into their caller, the two walks ran 7 % slower on
// the typical call for the same instructions (best of short samples, reference and value paths).
#[inline(never)]
pub(crate) fn args<P: Walk>(
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
    let path = root.key(ArgsKey::Questions.name());
    let questions = match raw.questions {
        Slot::Present(items) => question_items::<P>(items, &raw.exts, arena, &path, &mut problems),
        Slot::Missing => {
            problem(&mut problems, &path, ProblemKind::Missing);
            None
        }
        Slot::Wrong(found) => wrong_type("an array", found, &path, &mut problems),
    };
    let timeout = if P::EXTENDED {
        let path = root.key(ArgsKey::TimeoutSeconds.name());
        extended::timeout_seconds(&raw.timeout_seconds, max_timeout, &path, &mut problems)
    } else {
        Ok(None)
    };
    unknown_fields(raw.unknown, &root, ArgsKey::names(P::EXTENDED), &mut problems);
    match (questions, timeout) {
        (Some(questions), Ok(timeout)) if problems.is_empty() => Ok(questions.with_timeout_seconds(timeout)),
        _ => Err(problems.into_error()),
    }
}

fn question_items<P: Walk>(
    items: Vec<Slot<RawQuestion>>,
    exts: &[RawQuestionExt],
    arena: &Arc<str>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<Questions> {
    let count = items.len();
    if count > MAX_QUESTIONS {
        // The reference checks a too-long list before its items; the count is the first problem.
        problem(problems, path, ProblemKind::TooManyItems { max: MAX_QUESTIONS, actual: count });
    }
    let questions = each(items, path, problems, |item, path, problems| {
        question_slot::<P>(item, exts, arena, path, problems)
    });
    if count == 0 {
        problem(problems, path, ProblemKind::TooFewItems { min: 1, actual: 0 });
    }
    let mut questions = questions.filter(|_| count != 0 && count <= MAX_QUESTIONS)?;
    let before = problems.len();
    headers_unique(&questions, path, problems);
    if P::EXTENDED {
        extended::call_rules(&mut questions, path, problems, before);
    }
    (problems.len() == before).then(|| Questions::from_parts(questions))
}

/// One item of `questions`; `exts` is where the mirror put the extended keys of every question.
pub(crate) fn question_slot<P: Walk>(
    slot: Slot<RawQuestion>,
    exts: &[RawQuestionExt],
    arena: &Arc<str>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<Question> {
    match slot {
        Slot::Present(raw) => question::<P>(raw, exts, arena, path, problems),
        Slot::Missing => {
            problem(problems, path, ProblemKind::Missing);
            None
        }
        Slot::Wrong(found) => wrong_type("an object", found, path, problems),
    }
}

fn question<P: Walk>(
    raw: RawQuestion,
    exts: &[RawQuestionExt],
    arena: &Arc<str>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<Question> {
    let before = problems.len();
    // Read where it is, not moved out: most questions send few of these keys, or none. The
    // reference profile's mirror never has any.
    let ext = match raw.ext {
        Some(index) if P::EXTENDED => &exts[index],
        _ => &RawQuestionExt::NONE,
    };
    // The extended keys' problems are recorded as they are found, and any problem fails the
    // question below: a bad key yields a stand-in value instead of an `Option` to unwrap.
    let (kind, id) = if P::EXTENDED {
        (extended::kind(&ext.kind, arena, path, problems), extended::id(&ext.id, arena, path, problems))
    } else {
        (QuestionKind::Choice, QuestionId::None)
    };
    let header = required_text(arena, raw.header, &HEADER, &path.key(QuestionKey::Header.name()), problems);
    let question =
        required_text(arena, raw.question, &QUESTION, &path.key(QuestionKey::Question.name()), problems);
    let options_path = path.key(QuestionKey::Options.name());
    let options = match (raw.options, kind) {
        (Slot::Present(items), QuestionKind::Choice) => {
            option_items::<P>(items, arena, &options_path, problems)
        }
        (Slot::Missing, QuestionKind::Choice) => {
            problem(problems, &options_path, ProblemKind::Missing);
            None
        }
        (Slot::Missing, _) => Some(Vec::new()),
        (Slot::Present(items), _) if items.is_empty() => Some(Vec::new()),
        (Slot::Present(_), kind) => {
            extended::kind_mismatch("choice", kind, &options_path, problems);
            None
        }
        (Slot::Wrong(found), _) => wrong_type("an array", found, &options_path, problems),
    };
    let multi_path = path.key(QuestionKey::MultiSelect.name());
    let multi_select = match raw.multi_select {
        Slot::Missing => Some(false),
        Slot::Present(LaxBool(Ok(true))) if kind != QuestionKind::Choice => {
            extended::kind_mismatch("choice", kind, &multi_path, problems);
            None
        }
        Slot::Present(LaxBool(Ok(value))) => Some(value),
        Slot::Present(LaxBool(Err(found))) => {
            problem(problems, &multi_path, ProblemKind::InvalidBoolean { found });
            None
        }
        Slot::Wrong(found) => wrong_type("a boolean", found, &multi_path, problems),
    };
    let extras = P::EXTENDED.then(|| Extras {
        kind,
        id,
        allow_other: extended::allow_other(&ext.allow_other, kind, path, problems),
        secret_name: extended::secret_name(&ext.secret_name, kind, arena, path, problems),
        purpose: extended::purpose(&ext.purpose, kind, arena, path, problems),
    });
    unknown_fields(raw.unknown, path, QuestionKey::names(P::EXTENDED), problems);
    if problems.len() != before {
        return None;
    }
    let (options, multi_select) = (options?, multi_select?);
    labels_unique(&options, path, problems)?;
    if P::EXTENDED && !multi_select {
        extended::one_default(&options, path, problems)?;
    }
    Some(Question::from_parts(arena, header?, question?, options, multi_select, extras))
}

fn option_items<P: Walk>(
    items: Vec<Slot<RawOption>>,
    arena: &Arc<str>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<Vec<QuestionOption>> {
    if P::EXTENDED {
        let count = items.len();
        let options =
            each(items, path, problems, |item, path, problems| option_slot::<P>(item, arena, path, problems));
        let count_ok = option_count(count, path, problems);
        return options.filter(|_| count_ok);
    }
    reference_option_items(items, arena, path, problems)
}

/// The options, read as the reference reads them (a tuple with a length range, checked "after
/// validation"): the valid ones are counted as they come, and the seventh valid one ends the list
/// with only its length as the problem, the items' problems dropped; fewer than two valid ones add
/// a too-short problem, counting the valid ones, after the items' problems. The extended profile
/// counts the items instead, as its schema says.
fn reference_option_items(
    items: Vec<Slot<RawOption>>,
    arena: &Arc<str>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<Vec<QuestionOption>> {
    let count = items.len();
    let before = problems.len();
    let mut options = Vec::with_capacity(count.min(MAX_OPTIONS + 1));
    let mut all_valid = true;
    for (i, item) in items.into_iter().enumerate() {
        match option_slot::<Reference>(item, arena, &path.index(i), problems) {
            Some(option) => options.push(option),
            None => all_valid = false,
        }
        if options.len() > MAX_OPTIONS {
            problems.truncate(before);
            problem(problems, path, ProblemKind::TooManyItems { max: MAX_OPTIONS, actual: count });
            return None;
        }
    }
    if options.len() < MIN_OPTIONS {
        problem(problems, path, ProblemKind::TooFewItems { min: MIN_OPTIONS, actual: options.len() });
        return None;
    }
    all_valid.then_some(options)
}

/// One item of `options`.
pub(crate) fn option_slot<P: Walk>(
    slot: Slot<RawOption>,
    arena: &Arc<str>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<QuestionOption> {
    match slot {
        Slot::Present(raw) => option::<P>(raw, arena, path, problems),
        Slot::Missing => {
            problem(problems, path, ProblemKind::Missing);
            None
        }
        Slot::Wrong(found) => wrong_type("an object", found, path, problems),
    }
}

pub(crate) fn option<P: Walk>(
    raw: RawOption,
    arena: &Arc<str>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<QuestionOption> {
    let before = problems.len();
    let label = required_text(arena, raw.label, &LABEL, &path.key(OptionKey::Label.name()), problems);
    let description_path = path.key(OptionKey::Description.name());
    let description = match raw.description {
        Slot::Missing | Slot::Wrong(JsonType::Null) => Some(None),
        Slot::Present(span) => text(arena, span, &DESCRIPTION, &description_path, problems).map(Some),
        Slot::Wrong(found) => wrong_type("a string or null", found, &description_path, problems),
    };
    let default = P::EXTENDED && extended::default(&raw.default, path, problems);
    unknown_fields(raw.unknown, path, OptionKey::names(P::EXTENDED), problems);
    if problems.len() != before {
        return None;
    }
    Some(QuestionOption::from_parts(arena, label?, description?, default))
}
