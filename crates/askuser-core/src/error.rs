//! Why a tool call was rejected ([`ValidationError`]) and why an answer does not fit its request
//! ([`ResponseError`]).

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq};

/// One step of a [`Location`]: an object key or an array index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PathSegment {
    /// An object key, such as `header`, or an unknown key the model sent.
    Key(Cow<'static, str>),
    /// A zero-based array index.
    Index(usize),
}

impl Serialize for PathSegment {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Key(key) => serializer.serialize_str(key),
            Self::Index(index) => serializer.serialize_u64(*index as u64),
        }
    }
}

/// Where a problem is in the tool-call arguments, such as `questions[0].options[2].label`; a key
/// that is not made of ASCII letters, digits and `_` is shown quoted: `questions[0]["a b"]`.
///
/// Serialises as a JSON array (`["questions",0,"options",2,"label"]`), the form the model gets back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Location(Vec<PathSegment>);

impl Location {
    /// The root of the arguments.
    #[must_use]
    pub fn root() -> Self {
        Self(Vec::new())
    }

    /// This location with an object key appended.
    #[must_use]
    pub fn key(&self, key: impl Into<Cow<'static, str>>) -> Self {
        let mut path = self.0.clone();
        path.push(PathSegment::Key(key.into()));
        Self(path)
    }

    /// This location with an array index appended.
    #[must_use]
    pub fn index(&self, index: usize) -> Self {
        let mut path = self.0.clone();
        path.push(PathSegment::Index(index));
        Self(path)
    }

    /// The steps from the root.
    #[must_use]
    pub fn segments(&self) -> &[PathSegment] {
        &self.0
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("arguments");
        }
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                PathSegment::Key(key) if is_plain_key(key) && i == 0 => write!(f, "{key}")?,
                PathSegment::Key(key) if is_plain_key(key) => write!(f, ".{key}")?,
                // An unknown key is the model's text: quoted, so that a control character, a bidi
                // override or a dot in it cannot disguise the path in a log line.
                PathSegment::Key(key) => write!(f, "[{}]", quoted(key))?,
                PathSegment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

fn is_plain_key(key: &str) -> bool {
    !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The JSON type of a value, for type errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JsonType {
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl fmt::Display for JsonType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Null => "null",
            Self::Boolean => "a boolean",
            Self::Number => "a number",
            Self::String => "a string",
            Self::Array => "an array",
            Self::Object => "an object",
        })
    }
}

/// What is wrong at one [`Location`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProblemKind {
    /// The argument text is not strict JSON.
    #[error("not valid JSON: {message}")]
    InvalidJson {
        /// The parser's description, with line and column.
        message: String,
    },
    /// The argument text is larger than the configured cap; it was not parsed.
    #[error("the arguments are {actual} bytes, more than the limit of {limit} bytes")]
    TooLarge {
        /// The cap in bytes.
        limit: usize,
        /// The size of the text.
        actual: usize,
    },
    /// A required field is absent.
    #[error("is required but missing")]
    Missing,
    /// A key the schema does not have.
    #[error("is not an allowed field (allowed: {})", allowed.join(", "))]
    UnknownField {
        /// The keys allowed in this object.
        allowed: &'static [&'static str],
    },
    /// A value of the wrong JSON type.
    #[error("must be {expected}, not {found}")]
    WrongType {
        /// The type the schema wants.
        expected: &'static str,
        /// The type that was sent.
        found: JsonType,
    },
    /// A string shorter than its minimum once trimmed.
    #[error("must be at least {min} character{} after trimming, got {actual}", plural(*min))]
    StringTooShort {
        /// The minimum length in code points.
        min: usize,
        /// The trimmed length in code points.
        actual: usize,
    },
    /// A string longer than its maximum once trimmed.
    #[error("must be at most {max} characters after trimming, got {actual}")]
    StringTooLong {
        /// The maximum length in code points.
        max: usize,
        /// The trimmed length in code points.
        actual: usize,
    },
    /// An array with too few items.
    #[error("must have at least {min} item{}, got {actual}", plural(*min))]
    TooFewItems {
        /// The minimum count.
        min: usize,
        /// The count that was sent.
        actual: usize,
    },
    /// An array with too many items.
    #[error("must have at most {max} items, got {actual}")]
    TooManyItems {
        /// The maximum count.
        max: usize,
        /// The count that was sent.
        actual: usize,
    },
    /// A control, format, separator, private-use, surrogate or unassigned character.
    #[error(
        "must not contain control characters or invisible formatting: U+{:04X} at character {position}{}",
        u32::from(*character),
        if *newline_allowed { " (only line feeds are allowed)" } else { " (must be one line)" }
    )]
    ForbiddenCharacter {
        /// The offending character.
        character: char,
        /// Its zero-based position, in code points, within the trimmed string.
        position: usize,
        /// Whether the field may contain LF.
        newline_allowed: bool,
    },
    /// `multi_select` that is neither a boolean nor one of the accepted spellings of one.
    #[error("must be a boolean (true or false), got {found}")]
    InvalidBoolean {
        /// The value that was sent, as JSON.
        found: String,
    },
    /// Two questions whose headers are equal once case and compatibility forms are folded.
    #[error(
        "question headers must be unique, ignoring case and compatibility forms: questions[{first}].header and questions[{second}].header are both {}",
        quoted(header)
    )]
    DuplicateHeader {
        /// Index of the earlier question.
        first: usize,
        /// Index of the later question.
        second: usize,
        /// The later question's header.
        header: String,
    },
    /// Two options of one question whose labels are equal once case and compatibility forms are folded.
    #[error(
        "option labels must be unique within a question, ignoring case and compatibility forms: options[{first}].label and options[{second}].label are both {}",
        quoted(label)
    )]
    DuplicateLabel {
        /// Index of the earlier option.
        first: usize,
        /// Index of the later option.
        second: usize,
        /// The later option's label.
        label: String,
    },
    /// `kind` that is not `choice`, `text` or `secret` (extended profile).
    #[error("must be \"choice\", \"text\" or \"secret\", got {}", quoted(found))]
    InvalidKind {
        /// The kind sent.
        found: String,
    },
    /// An `id` or `secret_name` whose characters or length break its pattern (extended profile).
    #[error("must be {expected}, got {}", quoted(found))]
    PatternMismatch {
        /// The rule, in words.
        expected: &'static str,
        /// The value sent.
        found: String,
    },
    /// A field set on a question of a kind it does not apply to (extended profile): `options`,
    /// `multi_select: true` or `allow_other: false` on a text or secret question, `secret_name`
    /// or `purpose` on another kind.
    #[error("is only for {only_for} questions; this is a {kind} question")]
    KindMismatch {
        /// The kinds the field is for, such as `choice`.
        only_for: &'static str,
        /// The question's kind.
        kind: &'static str,
    },
    /// A number that is not a whole number (extended profile: `timeout_seconds`).
    #[error("must be a whole number of seconds, got {found}")]
    NotAnInteger {
        /// The number sent, as JSON.
        found: String,
    },
    /// A whole number outside its range (extended profile: `timeout_seconds`).
    #[error("must be between {min} and {max}, got {actual}")]
    OutOfRange {
        /// The smallest allowed.
        min: u64,
        /// The largest allowed.
        max: u64,
        /// The number sent.
        actual: String,
    },
    /// Two questions with the same `id` (exact match; extended profile).
    #[error(
        "question ids must be unique: questions[{first}].id and questions[{second}].id are both {}",
        quoted(id)
    )]
    DuplicateId {
        /// Index of the earlier question.
        first: usize,
        /// Index of the later question.
        second: usize,
        /// The id.
        id: String,
    },
    /// A secret question with other questions in its call (extended profile).
    #[error(
        "a secret question must be alone in its call: questions[{index}] is a secret question among {count}"
    )]
    SecretNotAlone {
        /// Index of the (first) secret question.
        index: usize,
        /// How many questions the call has.
        count: usize,
    },
    /// Several `default` options on a single-select question (extended profile).
    #[error(
        "a single-select question has at most one default option: options[{first}] and options[{second}] are both default"
    )]
    TooManyDefaults {
        /// Index of the first default option.
        first: usize,
        /// Index of the second.
        second: usize,
    },
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `s` as a JSON string literal, with every control, format or separator character escaped, so
/// that what a model or an answerer wrote stays unambiguous and inert in a message or a log line.
pub(crate) fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if crate::text::is_forbidden_char(c, false) => {
                let mut units = [0_u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    // Writing into a String cannot fail.
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl ProblemKind {
    /// A stable machine-readable code, such as `string_too_long`.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidJson { .. } => "json_invalid",
            Self::TooLarge { .. } => "too_large",
            Self::Missing => "missing",
            Self::UnknownField { .. } => "extra_forbidden",
            Self::WrongType { .. } => "wrong_type",
            Self::StringTooShort { .. } => "string_too_short",
            Self::StringTooLong { .. } => "string_too_long",
            Self::TooFewItems { .. } => "too_short",
            Self::TooManyItems { .. } => "too_long",
            Self::ForbiddenCharacter { .. } => "forbidden_character",
            Self::InvalidBoolean { .. } => "bool_parsing",
            Self::DuplicateHeader { .. } => "duplicate_header",
            Self::DuplicateLabel { .. } => "duplicate_label",
            Self::InvalidKind { .. } => "invalid_kind",
            Self::PatternMismatch { .. } => "pattern_mismatch",
            Self::KindMismatch { .. } => "kind_mismatch",
            Self::NotAnInteger { .. } => "int_type",
            Self::OutOfRange { .. } => "out_of_range",
            Self::DuplicateId { .. } => "duplicate_id",
            Self::SecretNotAlone { .. } => "secret_not_alone",
            Self::TooManyDefaults { .. } => "too_many_defaults",
        }
    }
}

/// One problem in a rejected tool call: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    location: Location,
    kind: ProblemKind,
}

impl Problem {
    pub(crate) fn new(location: Location, kind: ProblemKind) -> Self {
        Self { location, kind }
    }

    /// Where the problem is.
    #[must_use]
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// What the problem is.
    #[must_use]
    pub fn kind(&self) -> &ProblemKind {
        &self.kind
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.kind)
    }
}

impl Serialize for Problem {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("type", self.kind.code())?;
        map.serialize_entry("loc", &self.location)?;
        map.serialize_entry("msg", &self.to_string())?;
        map.end()
    }
}

/// The sentence that heads a retry payload.
const RETRY_MESSAGE: &str = "The ask_user_question call was rejected and nobody saw it. Fix every problem listed and call the tool again.";

/// The problems found while validating: the first [`MAX_LISTED_PROBLEMS`] kept, the rest only
/// counted. A megabyte of bad items would otherwise cost a retry of tens of megabytes, and memory
/// in proportion; no model needs more than the first problems to fix a call.
pub(crate) struct Problems {
    kept: Vec<Problem>,
    total: usize,
}

/// The most problems a [`ValidationError`] lists.
pub const MAX_LISTED_PROBLEMS: usize = 64;

impl Problems {
    pub(crate) fn new() -> Self {
        Self { kept: Vec::new(), total: 0 }
    }

    /// Records a problem; `problem` builds it only if it is kept.
    pub(crate) fn push(&mut self, problem: impl FnOnce() -> Problem) {
        if self.kept.len() < MAX_LISTED_PROBLEMS {
            self.kept.push(problem());
        }
        self.total += 1;
    }

    /// How many problems were found, kept or not.
    pub(crate) fn len(&self) -> usize {
        self.total
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Forgets the problems found after the first `len`.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.total = self.total.min(len);
        self.kept.truncate(self.total);
    }

    pub(crate) fn into_error(self) -> ValidationError {
        debug_assert!(!self.kept.is_empty());
        ValidationError { omitted: self.total - self.kept.len(), problems: self.kept }
    }
}

/// Tool-call arguments that break the schema or a rule of docs/contract.md §2: the problems found, in order
/// (the first [`MAX_LISTED_PROBLEMS`] of them).
///
/// Its [`retry_payload`](Self::retry_payload) is what the model gets back; its `Display` is the
/// same problems on one line, for a host's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    problems: Vec<Problem>,
    omitted: usize,
}

impl ValidationError {
    pub(crate) fn single(location: Location, kind: ProblemKind) -> Self {
        Self { problems: vec![Problem::new(location, kind)], omitted: 0 }
    }

    /// The problems, in the order the arguments were checked; never empty, and at most
    /// [`MAX_LISTED_PROBLEMS`].
    #[must_use]
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// How many more problems were found beyond those listed.
    #[must_use]
    pub fn omitted(&self) -> usize {
        self.omitted
    }

    /// The first problem.
    #[must_use]
    pub fn first(&self) -> &Problem {
        &self.problems[0]
    }

    /// The retry text the model receives: compact JSON
    /// `{"error":"invalid_arguments","message":"…","problems":[{"type","loc","msg"}…]}`, plus
    /// `"omitted":N` when more problems were found than listed.
    ///
    /// Control, format and bidi characters inside its strings (an unknown key's, in `loc`) are
    /// written as `\uXXXX` escapes: the JSON means the same, and the text stays inert in a log or
    /// on a terminal, as the messages do.
    #[must_use]
    pub fn retry_payload(&self) -> String {
        let mut out = Vec::new();
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, InertFormatter);
        if self.serialize(&mut serializer).is_err() {
            return String::new();
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

/// Compact JSON whose strings carry no raw forbidden character (C1 controls, U+2028, bidi
/// controls and the rest of [`is_forbidden_char`](crate::is_forbidden_char)): each is escaped.
struct InertFormatter;

impl serde_json::ser::Formatter for InertFormatter {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if crate::text::is_forbidden_char(c, false) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                let mut units = [0_u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    write!(writer, "\\u{unit:04x}")?;
                }
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

impl Serialize for ValidationError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Listed<'a>(&'a [Problem]);
        impl Serialize for Listed<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
                for problem in self.0 {
                    seq.serialize_element(problem)?;
                }
                seq.end()
            }
        }
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("error", "invalid_arguments")?;
        map.serialize_entry("message", RETRY_MESSAGE)?;
        map.serialize_entry("problems", &Listed(&self.problems))?;
        if self.omitted > 0 {
            map.serialize_entry("omitted", &self.omitted)?;
        }
        map.end()
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{problem}")?;
        }
        if self.omitted > 0 {
            write!(f, "; and {} more", self.omitted)?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationError {}

/// An answer that does not fit its request (contract §3.1): a bug in the answerer, which fails the call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResponseError {
    /// `cancelled` with answers.
    #[error("a cancelled response carries no answers")]
    CancelledWithAnswers,
    /// An answer whose header is not a question of the request, or answers one a second time.
    #[error("answer for unknown or repeated question {}", quoted(header))]
    UnknownQuestion {
        /// The header as the answer gave it.
        header: String,
    },
    /// A custom answer together with picked options.
    #[error("answer for {} has a custom answer and also selects options", quoted(header))]
    CustomWithSelection {
        /// The question's header.
        header: String,
    },
    /// A custom answer that is blank.
    #[error("custom answer for {} must not be blank", quoted(header))]
    BlankCustomAnswer {
        /// The question's header.
        header: String,
    },
    /// A custom answer with a control or invisible formatting character.
    #[error(
        "custom answer for {} must not contain control characters or invisible formatting: U+{:04X} at character {position}",
        quoted(header),
        u32::from(*character)
    )]
    ForbiddenCharacter {
        /// The question's header.
        header: String,
        /// The offending character.
        character: char,
        /// Its zero-based position in code points.
        position: usize,
    },
    /// Labels the question does not offer.
    #[error("answer for {} picked options it does not offer: {}", quoted(header), quoted_list(labels))]
    UnknownOptions {
        /// The question's header.
        header: String,
        /// The unknown labels, in the order picked.
        labels: Vec<String>,
    },
    /// No label and no custom answer.
    #[error("answer for {} picked nothing", quoted(header))]
    NothingPicked {
        /// The question's header.
        header: String,
    },
    /// The same label twice.
    #[error("answer for {} picked the same option twice: {}", quoted(header), quoted(label))]
    RepeatedOption {
        /// The question's header.
        header: String,
        /// The repeated label.
        label: String,
    },
    /// Several labels on a single-select question.
    #[error("answer for {} picked {count} options but it is single-select", quoted(header))]
    SeveralOnSingleSelect {
        /// The question's header.
        header: String,
        /// How many labels were picked.
        count: usize,
    },
    /// Questions with no answer, sorted by code point.
    #[error("unanswered questions: {}", quoted_list(headers))]
    Unanswered {
        /// Their headers.
        headers: Vec<String>,
    },
    /// An `id` or `secret_ref` on an answer to a reference-profile question, which has neither.
    #[error("answer for {} has {field}, which the reference profile does not have", quoted(header))]
    NotInReferenceProfile {
        /// The question's header.
        header: String,
        /// `id` or `secret_ref`.
        field: &'static str,
    },
    /// An answer whose `id` is not the id of the question its header names (extended profile).
    #[error(
        "answer for {} gives id {}, but that question's id is {}",
        quoted(header),
        quoted(given),
        quoted(expected)
    )]
    IdMismatch {
        /// The question's header.
        header: String,
        /// The id the answer gave.
        given: String,
        /// The question's id.
        expected: String,
    },
    /// A `secret_ref` on an answer to a question that is not a secret question (extended profile).
    #[error("answer for {} has a secret_ref but is not a secret question", quoted(header))]
    UnexpectedSecretRef {
        /// The question's header.
        header: String,
    },
    /// An answer to a secret question that is not exactly its `session:NAME` reference and nothing
    /// else (extended profile). What was sent is not repeated: it may be the value itself.
    #[error(
        "answer for {} must be exactly secret_ref {}, with nothing selected and no custom_answer",
        quoted(header),
        quoted(expected)
    )]
    NotASecretReference {
        /// The question's header.
        header: String,
        /// The reference expected: `session:NAME`.
        expected: String,
    },
    /// An answer to a text question without a `custom_answer`, or with options selected
    /// (extended profile).
    #[error("answer for {} to a text question needs custom_answer and no selected options", quoted(header))]
    TextNotAnswered {
        /// The question's header.
        header: String,
    },
    /// A custom answer to a choice question with `allow_other: false` (extended profile).
    #[error(
        "answer for {} has a custom answer, but the question does not allow one (allow_other is false)",
        quoted(header)
    )]
    OtherNotAllowed {
        /// The question's header.
        header: String,
    },
}

fn quoted_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| quoted(s)).collect();
    format!("[{}]", quoted.join(","))
}
