//! The ways into validation: [`Validator`] for tool-call arguments, and the constructors and
//! `Deserialize` impls of the validated types (`model.rs` holds the types, this file the only ways
//! to build one), all through the walk of `walk.rs`.

use std::sync::Arc;

use serde::de::{DeserializeSeed, Error as _};
use serde::{Deserialize, Deserializer};

use crate::error::{Location, ProblemKind, Problems, ValidationError};
use crate::json;
use crate::keys::{ArgsKey, QuestionKey};
use crate::model::{AskUserRequest, Question, QuestionOption, Questions, REQUEST_ID, take_envelope};
use crate::profile::{MAX_QUESTIONS, Profile};
use crate::raw::{Arena, RawArgs, RawOption, RawQuestion, Slot, SlotSeed, value_slot};
use crate::rules::{HEADER, Path, QUESTION, headers_unique, labels_unique, option_count, problem, text};
use crate::text::Span;
use crate::walk::{self, Extended, Reference};

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

    /// The rules to validate by (docs/contract.md §10). Default: [`Profile::Reference`], which is the
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
        let raw = json::read_args(text, &mut Arena::new(&mut arena, self.profile == Profile::Extended));
        match raw {
            Ok(raw) => self.walk(raw, arena),
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
        let raw = value_slot::<RawArgs>(value, &mut Arena::new(&mut text, self.profile == Profile::Extended));
        self.walk(raw, text)
    }

    fn walk(&self, raw: Slot<RawArgs>, text: String) -> Result<Questions, ValidationError> {
        let text = text.into();
        match self.profile {
            Profile::Reference => walk::args::<Reference>(raw, &text, self.max_timeout_seconds),
            Profile::Extended => walk::args::<Extended>(raw, &text, self.max_timeout_seconds),
        }
    }
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
            default: Slot::Missing,
            unknown: Vec::new(),
        };
        let text: Arc<str> = text.into();
        finish(|problems| walk::option::<Reference>(raw, &text, &Path::Root, problems))
    }
}

impl Question {
    /// Validates a multiple-choice question of the reference profile. Strings are trimmed first.
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
        finish(|problems| question_from_parts(&text, header, question, options, multi_select, problems))
    }
}

impl Questions {
    /// Checks the count and the uniqueness of the headers.
    ///
    /// # Errors
    ///
    /// Too few or too many questions, or two headers equal once folded.
    pub fn new(questions: Vec<Question>) -> Result<Self, ValidationError> {
        finish(|problems| questions_from_parts(questions, problems))
    }

    /// Validates tool-call arguments given as JSON text, with the default 1 MiB size cap.
    ///
    /// # Errors
    ///
    /// Every problem found (contract §2), or a single one for text that is too large or not strict JSON.
    pub fn from_json(text: &str) -> Result<Self, ValidationError> {
        Validator::new().validate_json(text)
    }

    /// Validates tool-call arguments already parsed into a [`serde_json::Value`]; same verdicts as
    /// [`from_json`](Self::from_json) on the same arguments.
    ///
    /// # Errors
    ///
    /// Every problem found (contract §2).
    pub fn from_value(value: &serde_json::Value) -> Result<Self, ValidationError> {
        Validator::new().validate_value(value)
    }
}

fn push_trimmed(text: &mut String, s: &str) -> Span {
    let start = text.len();
    text.push_str(s.trim());
    start..text.len()
}

impl<'de> Deserialize<'de> for Questions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut text = String::new();
        let raw = SlotSeed::<RawArgs>::new(&mut Arena::new(&mut text, false)).deserialize(d)?;
        Validator::new().walk(raw, text).map_err(D::Error::custom)
    }
}

impl<'de> Deserialize<'de> for Question {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut text = String::new();
        let raw = SlotSeed::<RawQuestion>::new(&mut Arena::new(&mut text, false)).deserialize(d)?;
        let text = text.into();
        finish(|problems| walk::question_slot::<Reference>(raw, &[], &text, &Path::Root, problems))
            .map_err(D::Error::custom)
    }
}

impl<'de> Deserialize<'de> for QuestionOption {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut text = String::new();
        let raw = SlotSeed::<RawOption>::new(&mut Arena::new(&mut text, false)).deserialize(d)?;
        let text = text.into();
        finish(|problems| walk::option_slot::<Reference>(raw, &text, &Path::Root, problems))
            .map_err(D::Error::custom)
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

impl<'de> Deserialize<'de> for AskUserRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut map = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        let id = match map.remove(REQUEST_ID) {
            Some(serde_json::Value::String(id)) => id,
            Some(_) => return Err(D::Error::custom(format!("`{REQUEST_ID}` must be a string"))),
            None => return Err(D::Error::missing_field(REQUEST_ID)),
        };
        let (profile, deadline) = take_envelope(&mut map).map_err(D::Error::custom)?;
        let questions = Validator::new()
            .with_profile(profile)
            .with_max_timeout_seconds(u32::MAX)
            .validate_value(&serde_json::Value::Object(map))
            .map_err(D::Error::custom)?;
        Ok(Self::from_parts(id, questions, deadline))
    }
}

fn questions_from_parts(questions: Vec<Question>, problems: &mut Problems) -> Option<Questions> {
    let root = Path::Root;
    let path = root.key(ArgsKey::Questions.name());
    let count = questions.len();
    let kind = if count == 0 {
        ProblemKind::TooFewItems { min: 1, actual: 0 }
    } else if count > MAX_QUESTIONS {
        ProblemKind::TooManyItems { max: MAX_QUESTIONS, actual: count }
    } else {
        headers_unique(&questions, &path, problems)?;
        return Some(Questions::from_parts(questions));
    };
    problem(problems, &path, kind);
    None
}

fn question_from_parts(
    arena: &Arc<str>,
    header: Span,
    question: Span,
    options: Vec<QuestionOption>,
    multi_select: bool,
    problems: &mut Problems,
) -> Option<Question> {
    let path = Path::Root;
    let before = problems.len();
    let header = text(arena, header, &HEADER, &path.key(QuestionKey::Header.name()), problems);
    let question = text(arena, question, &QUESTION, &path.key(QuestionKey::Question.name()), problems);
    option_count(options.len(), &path.key(QuestionKey::Options.name()), problems);
    if problems.len() != before {
        return None;
    }
    labels_unique(&options, &path, problems)?;
    Some(Question::from_parts(arena, header?, question?, options, multi_select, None))
}
