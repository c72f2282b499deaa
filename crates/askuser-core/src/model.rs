//! The validated questions (model → person) and the answers (person → model).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::de::DeserializeSeed;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize};

use crate::error::{Problems, ValidationError};
use crate::raw::{RawOption, RawQuestion, Slot, SlotSeed, Span};
use crate::validate::{self, Path};

/// Most questions in one call.
pub const MAX_QUESTIONS: usize = 10;
/// Fewest options a question offers.
pub const MIN_OPTIONS: usize = 2;
/// Most options a question offers.
pub const MAX_OPTIONS: usize = 6;
/// Most code points in a header, after trimming.
pub const MAX_HEADER_CHARS: usize = 25;
/// Most code points in a question text, after trimming.
pub const MAX_QUESTION_CHARS: usize = 500;
/// Most code points in an option label, after trimming.
pub const MAX_LABEL_CHARS: usize = 50;
/// Most code points in an option description, after trimming.
pub const MAX_DESCRIPTION_CHARS: usize = 200;

/// One choice a question offers: a label and an optional description.
///
/// Always valid: trimmed, within its length limits, free of control and invisible characters.
#[derive(Clone)]
pub struct QuestionOption {
    /// Shared with every other string of the call it was parsed from.
    text: Arc<str>,
    label: Span,
    description: Option<Span>,
}

impl QuestionOption {
    /// Validates an option. The strings are trimmed first; a whitespace-only description becomes `""`.
    ///
    /// ```
    /// use askuser_core::QuestionOption;
    ///
    /// # fn main() -> Result<(), askuser_core::ValidationError> {
    /// let plain = QuestionOption::new("Patch", None)?;
    /// let described = QuestionOption::new(" Refactor ", Some("Bigger change"))?;
    /// assert_eq!((plain.description(), described.label()), (None, "Refactor"));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// Every problem with the label or the description, located relative to the option
    /// (`label`, `description`).
    pub fn new(label: impl AsRef<str>, description: Option<&str>) -> Result<Self, ValidationError> {
        let mut text = String::new();
        let raw = RawOption {
            label: Slot::Present(push_trimmed(&mut text, label.as_ref())),
            description: description.map_or(Slot::Missing, |d| Slot::Present(push_trimmed(&mut text, d))),
            unknown: Vec::new(),
        };
        let text: Arc<str> = text.into();
        finish(|problems| validate::option(raw, &text, &Path::Root, problems))
    }

    pub(crate) fn from_parts(text: &Arc<str>, label: Span, description: Option<Span>) -> Self {
        Self { text: Arc::clone(text), label, description }
    }

    /// The label, as the model wrote it but trimmed.
    #[must_use]
    pub fn label(&self) -> &str {
        &self.text[self.label.clone()]
    }

    /// The description, if the model gave one (`Some("")` when it gave only whitespace).
    #[must_use]
    pub fn description(&self) -> Option<&str> {
        self.description.clone().map(|span| &self.text[span])
    }
}

impl PartialEq for QuestionOption {
    fn eq(&self, other: &Self) -> bool {
        self.label() == other.label() && self.description() == other.description()
    }
}

impl Eq for QuestionOption {}

impl Hash for QuestionOption {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.label().hash(state);
        self.description().hash(state);
    }
}

impl fmt::Debug for QuestionOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QuestionOption")
            .field("label", &self.label())
            .field("description", &self.description())
            .finish()
    }
}

impl Serialize for QuestionOption {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("label", self.label())?;
        map.serialize_entry("description", &self.description())?;
        map.end()
    }
}

/// One multiple-choice question. Always valid: every string within its rules, 2–6 options whose
/// labels are unique once folded.
#[derive(Clone)]
#[expect(clippy::struct_field_names, reason = "the wire names the field `question`")]
pub struct Question {
    text: Arc<str>,
    header: Span,
    question: Span,
    options: Vec<QuestionOption>,
    multi_select: bool,
}

impl Question {
    /// Validates a question. Strings are trimmed first.
    ///
    /// # Errors
    ///
    /// Every problem found, located relative to the question (`header`, `options[1].label`, …).
    pub fn new(
        header: impl AsRef<str>,
        question: impl AsRef<str>,
        options: Vec<QuestionOption>,
        multi_select: bool,
    ) -> Result<Self, ValidationError> {
        let mut text = String::new();
        let header = push_trimmed(&mut text, header.as_ref());
        let question = push_trimmed(&mut text, question.as_ref());
        let text: Arc<str> = text.into();
        finish(|problems| {
            validate::question_from_parts(&text, header, question, options, multi_select, problems)
        })
    }

    pub(crate) fn from_parts(
        text: &Arc<str>,
        header: Span,
        question: Span,
        options: Vec<QuestionOption>,
        multi_select: bool,
    ) -> Self {
        Self { text: Arc::clone(text), header, question, options, multi_select }
    }

    /// The short header that keys the answer.
    #[must_use]
    pub fn header(&self) -> &str {
        &self.text[self.header.clone()]
    }

    /// The full question text; may contain line feeds.
    #[must_use]
    pub fn question(&self) -> &str {
        &self.text[self.question.clone()]
    }

    /// The options, in the order the model gave them.
    #[must_use]
    pub fn options(&self) -> &[QuestionOption] {
        &self.options
    }

    /// Whether the person may pick several options.
    #[must_use]
    pub fn multi_select(&self) -> bool {
        self.multi_select
    }
}

impl PartialEq for Question {
    fn eq(&self, other: &Self) -> bool {
        self.header() == other.header()
            && self.question() == other.question()
            && self.options == other.options
            && self.multi_select == other.multi_select
    }
}

impl Eq for Question {}

impl Hash for Question {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.header().hash(state);
        self.question().hash(state);
        self.options.hash(state);
        self.multi_select.hash(state);
    }
}

#[expect(clippy::missing_fields_in_debug, reason = "the text arena is shown through the fields it holds")]
impl fmt::Debug for Question {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Question")
            .field("header", &self.header())
            .field("question", &self.question())
            .field("options", &self.options)
            .field("multi_select", &self.multi_select)
            .finish()
    }
}

impl Serialize for Question {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(4))?;
        map.serialize_entry("header", self.header())?;
        map.serialize_entry("question", self.question())?;
        map.serialize_entry("options", &self.options)?;
        map.serialize_entry("multi_select", &self.multi_select)?;
        map.end()
    }
}

fn push_trimmed(text: &mut String, s: &str) -> Span {
    let start = text.len();
    text.push_str(s.trim());
    start..text.len()
}

/// The validated arguments of one `ask_user_question` call: 1–10 questions with unique headers.
///
/// Build it from the model's argument text with [`Questions::from_json`] (or a
/// [`Validator`](crate::Validator) for a different size cap), from an already-parsed value with
/// [`Questions::from_value`], or from questions built in code with [`Questions::new`].
/// `Deserialize` runs the same validation. `Serialize` writes the normalised arguments.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Questions {
    questions: Vec<Question>,
}

impl Questions {
    /// Checks the count and the uniqueness of the headers.
    ///
    /// # Errors
    ///
    /// Too few or too many questions, or two headers equal once folded.
    pub fn new(questions: Vec<Question>) -> Result<Self, ValidationError> {
        finish(|problems| validate::questions_from_parts(questions, problems))
    }

    pub(crate) fn from_parts(questions: Vec<Question>) -> Self {
        Self { questions }
    }

    /// Validates tool-call arguments given as JSON text, with the default 1 MiB size cap.
    ///
    /// # Errors
    ///
    /// Every problem found (SPEC §2), or a single one for text that is too large or not strict JSON.
    pub fn from_json(text: &str) -> Result<Self, ValidationError> {
        crate::Validator::new().validate_json(text)
    }

    /// Validates tool-call arguments already parsed into a [`serde_json::Value`]; same verdicts as
    /// [`from_json`](Self::from_json) on the same arguments.
    ///
    /// # Errors
    ///
    /// Every problem found (SPEC §2).
    pub fn from_value(value: &serde_json::Value) -> Result<Self, ValidationError> {
        crate::Validator::new().validate_value(value)
    }

    /// The questions, in order.
    #[must_use]
    pub fn as_slice(&self) -> &[Question] {
        &self.questions
    }

    /// The question whose header is exactly `header`.
    #[must_use]
    pub fn get(&self, header: &str) -> Option<&Question> {
        self.questions.iter().find(|q| q.header() == header)
    }

    /// How many questions there are (1–10).
    #[must_use]
    pub fn len(&self) -> usize {
        self.questions.len()
    }

    /// Always false: a valid call has at least one question.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.questions.is_empty()
    }

    /// Iterates over the questions.
    pub fn iter(&self) -> std::slice::Iter<'_, Question> {
        self.questions.iter()
    }
}

impl<'a> IntoIterator for &'a Questions {
    type Item = &'a Question;
    type IntoIter = std::slice::Iter<'a, Question>;
    fn into_iter(self) -> Self::IntoIter {
        self.questions.iter()
    }
}

impl<'de> Deserialize<'de> for Questions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut text = String::new();
        let raw = SlotSeed::<crate::raw::RawArgs>::new(&mut text).deserialize(d)?;
        validate::args(raw, &text.into()).map_err(serde::de::Error::custom)
    }
}

impl<'de> Deserialize<'de> for Question {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut text = String::new();
        let raw = SlotSeed::<RawQuestion>::new(&mut text).deserialize(d)?;
        let text = text.into();
        finish(|problems| validate::question_slot(raw, &text, &Path::Root, problems))
            .map_err(serde::de::Error::custom)
    }
}

impl<'de> Deserialize<'de> for QuestionOption {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut text = String::new();
        let raw = SlotSeed::<RawOption>::new(&mut text).deserialize(d)?;
        let text = text.into();
        finish(|problems| validate::option_slot(raw, &text, &Path::Root, problems))
            .map_err(serde::de::Error::custom)
    }
}

/// Runs a validation step and turns "no value" into the problems it reported.
fn finish<T>(step: impl FnOnce(&mut Problems) -> Option<T>) -> Result<T, ValidationError> {
    let mut problems = Problems::new();
    match step(&mut problems) {
        Some(value) if problems.is_empty() => Ok(value),
        _ => Err(problems.into_error()),
    }
}

/// 32 lowercase hex digits that differ between calls and between processes.
///
/// The id only tells concurrent or repeated calls apart; it guards nothing, so it needs no
/// cryptographic randomness. `RandomState` is seeded from the operating system once per thread;
/// a process-wide counter makes every id's input distinct. No system call per id: the `uuid` crate
/// asked the OS for entropy on every call, which cost about a microsecond per tool call.
fn random_id() -> String {
    use std::hash::{BuildHasher, RandomState};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let state = RandomState::new();
    format!("{:016x}{:016x}", state.hash_one((n, 0_u8)), state.hash_one((n, 1_u8)))
}

/// One validated call as the answerer sees it: the questions plus an id that distinguishes
/// concurrent or repeated calls. Cheap to clone (shared, immutable).
///
/// The id is random (32 lowercase hex digits) for an inline call, and the tool-call id for a
/// deferred one, so that rebuilding a deferred request gives the same id.
#[derive(Clone, PartialEq, Eq)]
pub struct AskUserRequest(Arc<RequestInner>);

#[derive(PartialEq, Eq, Deserialize)]
struct RequestInner {
    id: String,
    /// The arguments' own keys beside `id`: one flat object, not `questions` inside `questions`.
    #[serde(flatten)]
    questions: Questions,
}

impl AskUserRequest {
    /// A request with a fresh random id.
    #[must_use]
    pub fn new(questions: Questions) -> Self {
        Self::with_id(random_id(), questions)
    }

    /// A request with the given id (for a deferred call: the tool-call id).
    #[must_use]
    pub fn with_id(id: impl Into<String>, questions: Questions) -> Self {
        Self(Arc::new(RequestInner { id: id.into(), questions }))
    }

    /// The id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.0.id
    }

    /// The validated questions.
    #[must_use]
    pub fn questions(&self) -> &Questions {
        &self.0.questions
    }
}

impl fmt::Debug for AskUserRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AskUserRequest")
            .field("id", &self.0.id)
            .field("questions", &self.0.questions.questions)
            .finish()
    }
}

/// `{"id":"…","questions":[…]}`: the normalised arguments with the id beside them. Deserialising
/// validates the questions again.
impl Serialize for AskUserRequest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("id", self.id())?;
        map.serialize_entry("questions", self.questions().as_slice())?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for AskUserRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RequestInner::deserialize(d).map(|inner| Self(Arc::new(inner)))
    }
}

/// Who produced a response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum AnsweredBy {
    /// A person picked the answers.
    #[default]
    User,
    /// Nobody answered in time and the defaults were applied.
    Timeout,
    /// Nobody was there to ask; the defaults were applied at once.
    Unattended,
}

impl AnsweredBy {
    /// The wire name: `user`, `timeout` or `unattended`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Timeout => "timeout",
            Self::Unattended => "unattended",
        }
    }
}

/// The answer to one question: picked labels, or a custom answer instead of them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AskUserAnswer {
    /// The header of the question answered, exactly as the request has it.
    pub header: String,
    /// The picked labels, in the order picked. Empty with a custom answer.
    #[serde(default)]
    pub selected: Vec<String>,
    /// Free text the person typed instead of picking.
    #[serde(default)]
    pub custom_answer: Option<String>,
}

impl AskUserAnswer {
    /// An answer that picks `labels`.
    #[must_use]
    pub fn picked<I, S>(header: impl Into<String>, labels: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            header: header.into(),
            selected: labels.into_iter().map(Into::into).collect(),
            custom_answer: None,
        }
    }

    /// An answer given as free text.
    #[must_use]
    pub fn custom(header: impl Into<String>, text: impl Into<String>) -> Self {
        Self { header: header.into(), selected: Vec::new(), custom_answer: Some(text.into()) }
    }
}

/// What an answerer returns: one answer per question, or `cancelled` when the person declined.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AskUserResponse {
    /// One answer per question, in the order given.
    #[serde(default)]
    pub answers: Vec<AskUserAnswer>,
    /// The person declined; no answers.
    #[serde(default)]
    pub cancelled: bool,
    /// Who answered (default: a person).
    #[serde(default)]
    pub answered_by: AnsweredBy,
}

impl AskUserResponse {
    /// A person's answers.
    #[must_use]
    pub fn answered(answers: Vec<AskUserAnswer>) -> Self {
        Self { answers, cancelled: false, answered_by: AnsweredBy::User }
    }

    /// The person declined.
    #[must_use]
    pub fn declined() -> Self {
        Self { answers: Vec::new(), cancelled: true, answered_by: AnsweredBy::User }
    }

    /// This response, marked as produced by `by`.
    #[must_use]
    pub fn with_answered_by(mut self, by: AnsweredBy) -> Self {
        self.answered_by = by;
        self
    }
}
