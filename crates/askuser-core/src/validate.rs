//! From the lenient mirror of the arguments to validated types, collecting every problem in the
//! order the reference reports them: fields in schema order, then unknown keys in input order;
//! uniqueness only once everything it compares is valid.

use std::sync::Arc;

use crate::error::{JsonType, Location, Problem, ProblemKind, Problems, ValidationError};
use crate::model::Profile;
use crate::model::{
    MAX_DESCRIPTION_CHARS, MAX_HEADER_CHARS, MAX_LABEL_CHARS, MAX_OPTIONS, MAX_QUESTION_CHARS, MAX_QUESTIONS,
    MIN_OPTIONS, Question, QuestionOption, Questions,
};
use crate::raw::{Arena, LaxBool, RawArgs, RawOption, RawQuestion, Slot, Span, value_slot};
use crate::text;

/// Validates tool-call arguments, with a configurable cap on the argument text.
///
/// ```
/// use askuser_core::Validator;
///
/// let validator = Validator::new().with_max_argument_bytes(64);
/// assert_eq!(validator.max_argument_bytes(), 64);
/// let err = validator.validate_json(&" ".repeat(65)).unwrap_err();
/// assert_eq!(err.first().kind().code(), "too_large");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Validator {
    max_argument_bytes: usize,
    profile: Profile,
    max_timeout_seconds: u32,
}

impl Default for Validator {
    fn default() -> Self {
        Self::new()
    }
}

impl Validator {
    /// The default cap on argument text: 1 MiB.
    pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 1 << 20;

    /// The default maximum of `timeout_seconds` (extended profile): 300.
    pub const DEFAULT_MAX_TIMEOUT_SECONDS: u32 = 300;

    /// A validator with the default cap, for the reference profile.
    #[must_use]
    pub fn new() -> Self {
        Self {
            max_argument_bytes: Self::DEFAULT_MAX_ARGUMENT_BYTES,
            profile: Profile::Reference,
            max_timeout_seconds: Self::DEFAULT_MAX_TIMEOUT_SECONDS,
        }
    }

    /// The rules to validate by (SPEC §10). Default: [`Profile::Reference`], which is the
    /// reference implementation's contract to the letter; [`Profile::Extended`] adds text and
    /// secret questions, ids, defaults, `allow_other` and `timeout_seconds`.
    ///
    /// ```
    /// use askuser_core::{Profile, QuestionKind, Validator};
    ///
    /// let args = r#"{"questions":[{"kind":"text","header":"Branch","question":"Which branch name?"}]}"#;
    /// assert!(Validator::new().validate_json(args).is_err());
    /// let questions = Validator::new().with_profile(Profile::Extended).validate_json(args).unwrap();
    /// assert_eq!(questions.as_slice()[0].kind(), QuestionKind::Text);
    /// assert_eq!(questions.as_slice()[0].id(), Some("q1"));
    /// ```
    #[must_use]
    pub fn with_profile(mut self, profile: Profile) -> Self {
        self.profile = profile;
        self
    }

    /// The profile validated by.
    #[must_use]
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// The largest `timeout_seconds` a model may ask for (extended profile): the host's maximum
    /// wait. Default: [`DEFAULT_MAX_TIMEOUT_SECONDS`](Self::DEFAULT_MAX_TIMEOUT_SECONDS).
    #[must_use]
    pub fn with_max_timeout_seconds(mut self, max: u32) -> Self {
        self.max_timeout_seconds = max;
        self
    }

    /// The largest `timeout_seconds` accepted.
    #[must_use]
    pub fn max_timeout_seconds(&self) -> u32 {
        self.max_timeout_seconds
    }

    /// The largest argument text accepted, in bytes; larger text is rejected before parsing.
    /// Default: [`DEFAULT_MAX_ARGUMENT_BYTES`](Self::DEFAULT_MAX_ARGUMENT_BYTES).
    #[must_use]
    pub fn with_max_argument_bytes(mut self, limit: usize) -> Self {
        self.max_argument_bytes = limit;
        self
    }

    /// The largest argument text accepted, in bytes: one name for the cap, here and in
    /// `AskUserBuilder::max_argument_bytes` of `askuser-tool`.
    #[must_use]
    pub fn max_argument_bytes(&self) -> usize {
        self.max_argument_bytes
    }

    /// Validates arguments given as JSON text. Empty text counts as `{}`.
    ///
    /// # Errors
    ///
    /// Text over the cap or not strict JSON (one problem), else every rule broken.
    pub fn validate_json(&self, text: &str) -> Result<Questions, ValidationError> {
        if text.len() > self.max_argument_bytes {
            return Err(ValidationError::single(
                Location::root(),
                ProblemKind::TooLarge { limit: self.max_argument_bytes, actual: text.len() },
            ));
        }
        let text = if text.is_empty() { "{}" } else { text };
        let mut arena = String::with_capacity(text.len());
        let extended = self.profile == Profile::Extended;
        match crate::json::read_args(text, &mut arena, extended) {
            Ok(raw) if extended => crate::extended::args(raw, &arena.into(), self.max_timeout_seconds),
            Ok(raw) => args(raw, &arena.into()),
            Err(e) => Err(ValidationError::single(
                Location::root(),
                ProblemKind::InvalidJson { message: e.to_string() },
            )),
        }
    }

    /// Validates arguments already parsed into a value. The size cap does not apply: there is no
    /// text to measure.
    ///
    /// # Errors
    ///
    /// Every rule broken.
    pub fn validate_value(&self, value: &serde_json::Value) -> Result<Questions, ValidationError> {
        let mut text = String::with_capacity(1024);
        let extended = self.profile == Profile::Extended;
        let mut arena = Arena::new(&mut text, extended);
        let raw = value_slot::<RawArgs>(value, &mut arena);
        if extended {
            crate::extended::args(raw, &text.into(), self.max_timeout_seconds)
        } else {
            args(raw, &text.into())
        }
    }
}

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

/// Steps 3–5 of SPEC §2.1 on an already trimmed string: length, then characters; one problem at most.
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

// The match on `Slot` is spelled out in each reader below rather than shared through a generic
// helper taking a closure: the helper measured 7 % slower on the typical call (docs/performance.md).
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

pub(crate) fn args(raw: Slot<RawArgs>, arena: &Arc<str>) -> Result<Questions, ValidationError> {
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
        Slot::Present(items) => question_items(items, arena, &path, &mut problems),
        Slot::Missing => {
            problem(&mut problems, &path, ProblemKind::Missing);
            None
        }
        Slot::Wrong(found) => wrong_type("an array", found, &path, &mut problems),
    };
    unknown_fields(raw.unknown, &root, &["questions"], &mut problems);
    match questions {
        Some(questions) if problems.is_empty() => Ok(questions),
        _ => Err(problems.into_error()),
    }
}

fn question_items(
    items: Vec<Slot<RawQuestion>>,
    arena: &Arc<str>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<Questions> {
    let count = items.len();
    if count > MAX_QUESTIONS {
        // The reference checks a too-long list before its items; the count is the first problem.
        problem(problems, path, ProblemKind::TooManyItems { max: MAX_QUESTIONS, actual: count });
    }
    let questions =
        each(items, path, problems, |item, path, problems| question_slot(item, arena, path, problems));
    if count == 0 {
        problem(problems, path, ProblemKind::TooFewItems { min: 1, actual: 0 });
    }
    match questions {
        Some(questions) if count != 0 && count <= MAX_QUESTIONS => {
            questions_unique(questions, path, problems)
        }
        _ => None,
    }
}

pub(crate) fn questions_unique(
    questions: Vec<Question>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<Questions> {
    if let Some((first, second)) = text::first_duplicate(&questions, Question::header) {
        let header = questions[second].header().to_owned();
        problem(problems, path, ProblemKind::DuplicateHeader { first, second, header });
        return None;
    }
    Some(Questions::from_parts(questions))
}

pub(crate) fn questions_from_parts(questions: Vec<Question>, problems: &mut Problems) -> Option<Questions> {
    let root = Path::Root;
    let path = root.key("questions");
    let count = questions.len();
    let kind = if count == 0 {
        ProblemKind::TooFewItems { min: 1, actual: 0 }
    } else if count > MAX_QUESTIONS {
        ProblemKind::TooManyItems { max: MAX_QUESTIONS, actual: count }
    } else {
        return questions_unique(questions, &path, problems);
    };
    problem(problems, &path, kind);
    None
}

pub(crate) fn question_slot(
    slot: Slot<RawQuestion>,
    arena: &Arc<str>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<Question> {
    match slot {
        Slot::Present(raw) => question(raw, arena, path, problems),
        Slot::Missing => {
            problem(problems, path, ProblemKind::Missing);
            None
        }
        Slot::Wrong(found) => wrong_type("an object", found, path, problems),
    }
}

const QUESTION_FIELDS: &[&str] = &["header", "question", "options", "multi_select"];
const OPTION_FIELDS: &[&str] = &["label", "description"];

fn question(
    raw: RawQuestion,
    arena: &Arc<str>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<Question> {
    let before = problems.len();
    let header = required_text(arena, raw.header, &HEADER, &path.key("header"), problems);
    let question = required_text(arena, raw.question, &QUESTION, &path.key("question"), problems);
    let options_path = path.key("options");
    let options = match raw.options {
        Slot::Present(items) => option_items(items, arena, &options_path, problems),
        Slot::Missing => {
            problem(problems, &options_path, ProblemKind::Missing);
            None
        }
        Slot::Wrong(found) => wrong_type("an array", found, &options_path, problems),
    };
    let multi_path = path.key("multi_select");
    let multi_select = match raw.multi_select {
        Slot::Missing => Some(false),
        Slot::Present(LaxBool(Ok(value))) => Some(value),
        Slot::Present(LaxBool(Err(found))) => {
            problem(problems, &multi_path, ProblemKind::InvalidBoolean { found });
            None
        }
        Slot::Wrong(found) => wrong_type("a boolean", found, &multi_path, problems),
    };
    unknown_fields(raw.unknown, path, QUESTION_FIELDS, problems);
    if problems.len() != before {
        return None;
    }
    let options = options?;
    labels_unique(&options, path, problems)?;
    Some(Question::from_parts(arena, header?, question?, options, multi_select?, None))
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

pub(crate) fn question_from_parts(
    arena: &Arc<str>,
    header: Span,
    question: Span,
    options: Vec<QuestionOption>,
    multi_select: bool,
    problems: &mut Problems,
) -> Option<Question> {
    let path = Path::Root;
    let before = problems.len();
    let header = text(arena, header, &HEADER, &path.key("header"), problems);
    let question = text(arena, question, &QUESTION, &path.key("question"), problems);
    option_count(options.len(), &path.key("options"), problems);
    if problems.len() != before {
        return None;
    }
    labels_unique(&options, &path, problems)?;
    Some(Question::from_parts(arena, header?, question?, options, multi_select, None))
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

/// The options, read as the reference reads them (a tuple with a length range, checked "after
/// validation"): the valid ones are counted as they come, and the seventh valid one ends the list
/// with only its length as the problem, the items' problems dropped; fewer than two valid ones add
/// a too-short problem, counting the valid ones, after the items' problems.
fn option_items(
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
        match option_slot(item, arena, &path.index(i), problems) {
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

pub(crate) fn option_slot(
    slot: Slot<RawOption>,
    arena: &Arc<str>,
    path: &Path<'_>,
    problems: &mut Problems,
) -> Option<QuestionOption> {
    match slot {
        Slot::Present(raw) => option(raw, arena, path, problems),
        Slot::Missing => {
            problem(problems, path, ProblemKind::Missing);
            None
        }
        Slot::Wrong(found) => wrong_type("an object", found, path, problems),
    }
}

pub(crate) fn option(
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
        Slot::Present(span) => text(arena, span, &DESCRIPTION, &description_path, problems).map(Some),
        Slot::Wrong(found) => wrong_type("a string or null", found, &description_path, problems),
    };
    unknown_fields(raw.unknown, path, OPTION_FIELDS, problems);
    if problems.len() != before {
        return None;
    }
    Some(QuestionOption::from_parts(arena, label?, description?, false))
}
