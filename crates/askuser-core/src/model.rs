//! The validated questions (model → person) and the answers (person → model): the types, their
//! getters and how they are written. The only ways to build a validated one are in `validate.rs`
//! (constructors and `Deserialize`), which this file does not import.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};

use crate::keys::{ArgsKey, OptionKey, QuestionKey};
use crate::profile::{Profile, QuestionKind};
use crate::secret::session_secret_ref;
use crate::text::Span;
use crate::time::{Deadline, Timestamp};

/// One choice a question offers: a label and an optional description.
///
/// Always valid: trimmed, within its length limits, free of control and invisible characters.
#[derive(Clone)]
pub struct QuestionOption {
    /// Shared with every other string of the call it was parsed from.
    text: Arc<str>,
    label: Span,
    description: Option<Span>,
    /// `default: true` (extended profile only).
    default: bool,
}

impl QuestionOption {
    pub(crate) fn from_parts(text: &Arc<str>, label: Span, description: Option<Span>, default: bool) -> Self {
        Self { text: Arc::clone(text), label, description, default }
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

    /// Whether the model marked this option as a default (`"default": true`, extended profile
    /// only; always false in the reference profile).
    #[must_use]
    pub fn is_default(&self) -> bool {
        self.default
    }
}

impl PartialEq for QuestionOption {
    fn eq(&self, other: &Self) -> bool {
        self.label() == other.label()
            && self.description() == other.description()
            && self.default == other.default
    }
}

impl Eq for QuestionOption {}

impl Hash for QuestionOption {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.label().hash(state);
        self.description().hash(state);
        self.default.hash(state);
    }
}

impl fmt::Debug for QuestionOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QuestionOption")
            .field("label", &self.label())
            .field("description", &self.description())
            .field("default", &self.default)
            .finish_non_exhaustive()
    }
}

impl Serialize for QuestionOption {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry(OptionKey::Label.name(), self.label())?;
        map.serialize_entry(OptionKey::Description.name(), &self.description())?;
        map.end()
    }
}

/// A question's id: given by the model, generated (`q1`, `q2`, …), or none (reference profile).
#[derive(Clone, Default)]
pub(crate) enum QuestionId {
    #[default]
    None,
    Given(Span),
    Generated(&'static str),
}

/// The fields of an extended question beyond the reference's.
#[derive(Clone, Default)]
pub(crate) struct Extras {
    pub(crate) kind: QuestionKind,
    pub(crate) id: QuestionId,
    pub(crate) allow_other: bool,
    pub(crate) secret_name: Option<Span>,
    pub(crate) purpose: Option<Span>,
}

/// One question. Always valid: every string within its rules, 2–6 options whose labels are unique
/// once folded (a choice question), or none (a text or secret question, extended profile).
#[derive(Clone)]
#[expect(clippy::struct_field_names, reason = "the wire names the field `question`")]
pub struct Question {
    text: Arc<str>,
    header: Span,
    question: Span,
    options: Vec<QuestionOption>,
    multi_select: bool,
    /// `None` in the reference profile.
    extras: Option<Extras>,
}

impl Question {
    pub(crate) fn from_parts(
        text: &Arc<str>,
        header: Span,
        question: Span,
        options: Vec<QuestionOption>,
        multi_select: bool,
        extras: Option<Extras>,
    ) -> Self {
        Self { text: Arc::clone(text), header, question, options, multi_select, extras }
    }

    pub(crate) fn extras_mut(&mut self) -> Option<&mut Extras> {
        self.extras.as_mut()
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

    /// The options, in the order the model gave them; empty for a text or secret question.
    #[must_use]
    pub fn options(&self) -> &[QuestionOption] {
        &self.options
    }

    /// Whether the person may pick several options.
    #[must_use]
    pub fn multi_select(&self) -> bool {
        self.multi_select
    }

    /// The profile the question was validated under.
    #[must_use]
    pub fn profile(&self) -> Profile {
        if self.extras.is_some() { Profile::Extended } else { Profile::Reference }
    }

    /// What the question asks for: always [`QuestionKind::Choice`] in the reference profile.
    #[must_use]
    pub fn kind(&self) -> QuestionKind {
        self.extras.as_ref().map_or(QuestionKind::Choice, |e| e.kind)
    }

    /// The question's id (extended profile): the model's, or `q1`, `q2`, … generated by position.
    /// `None` in the reference profile.
    #[must_use]
    pub fn id(&self) -> Option<&str> {
        match self.extras.as_ref().map(|e| &e.id) {
            Some(QuestionId::Given(span)) => Some(&self.text[span.clone()]),
            Some(QuestionId::Generated(id)) => Some(id),
            Some(QuestionId::None) | None => None,
        }
    }

    /// Whether the person may type their own answer instead of picking ("Other…"). Always true
    /// in the reference profile; `allow_other` (default true) on an extended choice question;
    /// false on a text or secret question, whose answer is typed anyway.
    #[must_use]
    pub fn allow_other(&self) -> bool {
        self.extras.as_ref().is_none_or(|e| e.kind == QuestionKind::Choice && e.allow_other)
    }

    /// The name the secret is stored under (a secret question only): the answer is
    /// `session:NAME`.
    #[must_use]
    pub fn secret_name(&self) -> Option<&str> {
        self.extras.as_ref()?.secret_name.clone().map(|span| &self.text[span])
    }

    /// Why the task needs the secret (a secret question only); may contain line feeds.
    #[must_use]
    pub fn purpose(&self) -> Option<&str> {
        self.extras.as_ref()?.purpose.clone().map(|span| &self.text[span])
    }

    /// The options the model marked `default`, in order.
    pub fn declared_defaults(&self) -> impl Iterator<Item = &QuestionOption> {
        self.options.iter().filter(|o| o.is_default())
    }
}

impl PartialEq for Question {
    fn eq(&self, other: &Self) -> bool {
        self.header() == other.header()
            && self.question() == other.question()
            && self.options == other.options
            && self.multi_select == other.multi_select
            && self.profile() == other.profile()
            && self.kind() == other.kind()
            && self.id() == other.id()
            && self.allow_other() == other.allow_other()
            && self.secret_name() == other.secret_name()
            && self.purpose() == other.purpose()
    }
}

impl Eq for Question {}

impl Hash for Question {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.header().hash(state);
        self.question().hash(state);
        self.options.hash(state);
        self.multi_select.hash(state);
        self.id().hash(state);
    }
}

#[expect(clippy::missing_fields_in_debug, reason = "the text arena is shown through the fields it holds")]
impl fmt::Debug for Question {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Question");
        if self.extras.is_some() {
            s.field("kind", &self.kind()).field("id", &self.id());
        }
        s.field("header", &self.header())
            .field("question", &self.question())
            .field("options", &self.options)
            .field("multi_select", &self.multi_select);
        if self.extras.is_some() {
            s.field("allow_other", &self.allow_other())
                .field("secret_name", &self.secret_name())
                .field("purpose", &self.purpose());
        }
        s.finish()
    }
}

/// An extended question's options, with their `default` flags.
struct ExtendedOptions<'a>(&'a [QuestionOption]);

/// An extended question's option.
struct ExtendedOption<'a>(&'a QuestionOption);

impl Serialize for ExtendedOptions<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(ExtendedOption))
    }
}

impl Serialize for ExtendedOption<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry(OptionKey::Label.name(), self.0.label())?;
        map.serialize_entry(OptionKey::Description.name(), &self.0.description())?;
        map.serialize_entry(OptionKey::Default.name(), &self.0.default)?;
        map.end()
    }
}

impl Serialize for Question {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some(extras) = &self.extras else {
            let mut map = s.serialize_map(Some(4))?;
            map.serialize_entry(QuestionKey::Header.name(), self.header())?;
            map.serialize_entry(QuestionKey::Question.name(), self.question())?;
            map.serialize_entry(QuestionKey::Options.name(), &self.options)?;
            map.serialize_entry(QuestionKey::MultiSelect.name(), &self.multi_select)?;
            return map.end();
        };
        let mut map = s.serialize_map(None)?;
        map.serialize_entry(QuestionKey::Kind.name(), &extras.kind)?;
        map.serialize_entry(QuestionKey::Id.name(), &self.id())?;
        map.serialize_entry(QuestionKey::Header.name(), self.header())?;
        map.serialize_entry(QuestionKey::Question.name(), self.question())?;
        map.serialize_entry(QuestionKey::Options.name(), &ExtendedOptions(&self.options))?;
        map.serialize_entry(QuestionKey::MultiSelect.name(), &self.multi_select)?;
        // Only a choice question has the choice; on the others `allow_other: false` is refused.
        if extras.kind == QuestionKind::Choice {
            map.serialize_entry(QuestionKey::AllowOther.name(), &extras.allow_other)?;
        }
        if extras.kind == QuestionKind::Secret {
            map.serialize_entry(QuestionKey::SecretName.name(), &self.secret_name())?;
            map.serialize_entry(QuestionKey::Purpose.name(), &self.purpose())?;
        }
        map.end()
    }
}

/// The validated arguments of one `ask_user_question` call: 1–10 questions with unique headers.
///
/// Build it from the model's argument text with [`Questions::from_json`] (or a
/// [`Validator`](crate::Validator) for a different size cap), from an already-parsed value with
/// [`Questions::from_value`], or from questions built in code with [`Questions::new`].
/// `Deserialize` runs the same validation (reference profile; read extended arguments with a
/// [`Validator`](crate::Validator) set to [`Profile::Extended`]). `Serialize` writes the
/// normalised arguments: in the extended profile every question with its `kind`, `id` (generated
/// ones included), `allow_other` and options' `default`, and `timeout_seconds` when the model gave it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Questions {
    questions: Vec<Question>,
    timeout_seconds: Option<u32>,
}

impl Serialize for Questions {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry(ArgsKey::Questions.name(), &self.questions)?;
        if let Some(timeout) = self.timeout_seconds {
            map.serialize_entry(ArgsKey::TimeoutSeconds.name(), &timeout)?;
        }
        map.end()
    }
}

impl Questions {
    pub(crate) fn from_parts(questions: Vec<Question>) -> Self {
        Self { questions, timeout_seconds: None }
    }

    pub(crate) fn with_timeout_seconds(mut self, timeout: Option<u32>) -> Self {
        self.timeout_seconds = timeout;
        self
    }

    /// The profile the call was validated under.
    #[must_use]
    pub fn profile(&self) -> Profile {
        self.questions.first().map_or(Profile::Reference, Question::profile)
    }

    /// The wait the model asked for (`timeout_seconds`, extended profile), already checked to be
    /// within 1 ..= the validator's maximum. `None` when it did not ask: the host's default applies.
    #[must_use]
    pub fn timeout_seconds(&self) -> Option<u32> {
        self.timeout_seconds
    }

    /// The question whose id is exactly `id` (extended profile).
    #[must_use]
    pub fn get_by_id(&self, id: &str) -> Option<&Question> {
        self.questions.iter().find(|q| q.id() == Some(id))
    }

    /// Whether every question is a choice question, so that defaults can stand in for a person
    /// (a text or secret question has no unattended value).
    #[must_use]
    pub fn has_defaults(&self) -> bool {
        self.questions.iter().all(|q| q.kind() == QuestionKind::Choice)
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

/// 32 lowercase hex digits that differ between calls and between processes.
///
/// The id only tells concurrent or repeated calls apart; it guards nothing, so it needs no
/// cryptographic randomness. Two 64-bit seeds come from `RandomState` (seeded from the operating
/// system) once per process; each id mixes a process-wide counter into them with `splitmix64`'s
/// finaliser, a bijection, so no two ids of one process are equal. No system call per id (the
/// `uuid` crate asked the OS for entropy on every call, about a microsecond per tool call), and no
/// hashing or formatting machinery either: an MCP call runs this code cold, where every line of
/// code it touches costs (docs/performance.md).
fn random_id() -> String {
    use std::hash::{BuildHasher, RandomState};
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEEDS: OnceLock<[u64; 2]> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let seeds = SEEDS.get_or_init(|| {
        let state = RandomState::new();
        [state.hash_one(0_u8), state.hash_one(1_u8)]
    });
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut id = String::with_capacity(32);
    for seed in seeds {
        let word = splitmix64(seed.wrapping_add(n));
        for nibble in (0..16).rev() {
            id.push(char::from(HEX[usize::try_from((word >> (nibble * 4)) & 15).unwrap_or(0)]));
        }
    }
    id
}

/// `splitmix64`'s output function: a bijection on `u64` that spreads every input bit.
fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One validated call as the answerer sees it: the questions plus an id that distinguishes
/// concurrent or repeated calls, and the [`Deadline`] stamps the host put on it. Cheap to clone
/// (shared, immutable).
///
/// The id is random (32 lowercase hex digits) for an inline call, and the tool-call id for a
/// deferred one, so that rebuilding a deferred request gives the same id.
///
/// Two requests are equal when their ids and questions are: the stamps say when it was asked,
/// not what, so a request rebuilt from its tool call equals the one that was stamped. Compare
/// [`deadline`](Self::deadline) too where the times matter.
#[derive(Clone)]
pub struct AskUserRequest(Arc<RequestInner>);

impl PartialEq for AskUserRequest {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id && self.0.questions == other.0.questions
    }
}

impl Eq for AskUserRequest {}

#[derive(Clone)]
struct RequestInner {
    id: String,
    questions: Questions,
    deadline: Option<Deadline>,
}

impl AskUserRequest {
    pub(crate) fn from_parts(id: String, questions: Questions, deadline: Option<Deadline>) -> Self {
        Self(Arc::new(RequestInner { id, questions, deadline }))
    }

    /// A request with a fresh random id.
    #[must_use]
    pub fn new(questions: Questions) -> Self {
        Self::with_id(random_id(), questions)
    }

    /// A request with the given id (for a deferred call: the tool-call id).
    #[must_use]
    pub fn with_id(id: impl Into<String>, questions: Questions) -> Self {
        Self(Arc::new(RequestInner { id: id.into(), questions, deadline: None }))
    }

    /// This request stamped with `deadline` (`asked_at`, and with a timeout `nudge_at` and
    /// `expires_at`); the capability stamps every request it builds.
    #[must_use]
    pub fn with_deadline(mut self, deadline: Deadline) -> Self {
        // In place when unshared, as right after `new`: no second allocation per call.
        Arc::make_mut(&mut self.0).deadline = Some(deadline);
        self
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

    /// The profile the questions were validated under.
    #[must_use]
    pub fn profile(&self) -> Profile {
        self.0.questions.profile()
    }

    /// The deadline stamps, if the request was stamped.
    #[must_use]
    pub fn deadline(&self) -> Option<&Deadline> {
        self.0.deadline.as_ref()
    }

    /// When the request was built, if stamped.
    #[must_use]
    pub fn asked_at(&self) -> Option<Timestamp> {
        self.0.deadline.map(|d| d.asked_at())
    }

    /// When to remind whoever should answer, if the request has a deadline.
    #[must_use]
    pub fn nudge_at(&self) -> Option<Timestamp> {
        self.0.deadline.and_then(|d| d.nudge_at())
    }

    /// When the request stops being answerable, if it has a deadline.
    #[must_use]
    pub fn expires_at(&self) -> Option<Timestamp> {
        self.0.deadline.and_then(|d| d.expires_at())
    }

    /// Whether the request is past its deadline at `now`: then it is never answerable.
    #[must_use]
    pub fn is_expired(&self, now: Timestamp) -> bool {
        self.0.deadline.is_some_and(|d| d.is_expired(now))
    }
}

impl fmt::Debug for AskUserRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("AskUserRequest");
        s.field("id", &self.0.id).field("questions", &self.0.questions.questions);
        if let Some(timeout) = self.0.questions.timeout_seconds {
            s.field("timeout_seconds", &timeout);
        }
        if let Some(deadline) = &self.0.deadline {
            s.field("deadline", deadline);
        }
        s.finish()
    }
}

/// The key of a serialised request's id, beside the arguments' keys (`keys.rs`).
pub(crate) const REQUEST_ID: &str = "id";

/// `{"id":"…","questions":[…]}`: the normalised arguments with the id beside them, plus
/// `"profile":"extended"` for an extended call and `asked_at`/`nudge_at`/`expires_at` when
/// stamped (see `docs/wire.md`). Deserialising validates the questions again, under the profile
/// the object names.
impl Serialize for AskUserRequest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry(REQUEST_ID, self.id())?;
        if self.profile() == Profile::Extended {
            map.serialize_entry("profile", &Profile::Extended)?;
        }
        if let Some(deadline) = &self.0.deadline {
            map.serialize_entry("asked_at", &deadline.asked_at())?;
            if let Some(nudge_at) = deadline.nudge_at() {
                map.serialize_entry("nudge_at", &nudge_at)?;
            }
            if let Some(expires_at) = deadline.expires_at() {
                map.serialize_entry("expires_at", &expires_at)?;
            }
        }
        map.serialize_entry(ArgsKey::Questions.name(), self.questions().as_slice())?;
        if let Some(timeout) = self.0.questions.timeout_seconds {
            map.serialize_entry(ArgsKey::TimeoutSeconds.name(), &timeout)?;
        }
        map.end()
    }
}

/// Takes `profile` and the deadline stamps out of a serialised request.
pub(crate) fn take_envelope(
    map: &mut serde_json::Map<String, serde_json::Value>,
) -> Result<(Profile, Option<Deadline>), String> {
    fn field<T: serde::de::DeserializeOwned>(
        map: &mut serde_json::Map<String, serde_json::Value>,
        key: &str,
    ) -> Result<Option<T>, String> {
        map.remove(key)
            .map(|value| serde_json::from_value(value).map_err(|e| format!("`{key}`: {e}")))
            .transpose()
    }
    let profile = field::<Profile>(map, "profile")?.unwrap_or_default();
    let asked_at = field::<Timestamp>(map, "asked_at")?;
    let nudge_at = field::<Timestamp>(map, "nudge_at")?;
    let expires_at = field::<Timestamp>(map, "expires_at")?;
    let deadline = match (asked_at, nudge_at, expires_at) {
        (None, None, None) => None,
        (Some(asked), None, None) => Some(Deadline::from_parts(asked, None)),
        (Some(asked), Some(nudge), Some(expires)) => {
            Some(Deadline::from_parts(asked, Some((nudge, expires))))
        }
        _ => return Err("`nudge_at` and `expires_at` go together, and need `asked_at`".to_owned()),
    };
    Ok((profile, deadline))
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
    /// Free text the person typed instead of picking, or the answer to a text question.
    #[serde(default)]
    pub custom_answer: Option<String>,
    /// The question's id (extended profile, optional): when given, it must be the id of the
    /// question `header` names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The answer to a secret question (extended profile): `session:NAME`, never the value,
    /// which went to the host's secret sink.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<String>,
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
            id: None,
            secret_ref: None,
        }
    }

    /// An answer given as free text.
    #[must_use]
    pub fn custom(header: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            header: header.into(),
            selected: Vec::new(),
            custom_answer: Some(text.into()),
            id: None,
            secret_ref: None,
        }
    }

    /// The answer to a secret question whose `secret_name` is `name`: `secret_ref` is
    /// `session:NAME`. Hand the value itself to the host's [`SecretSink`](crate::SecretSink).
    #[must_use]
    pub fn secret(header: impl Into<String>, name: &str) -> Self {
        Self {
            header: header.into(),
            selected: Vec::new(),
            custom_answer: None,
            id: None,
            secret_ref: Some(session_secret_ref(name)),
        }
    }

    /// This answer with the question's id (extended profile).
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
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
