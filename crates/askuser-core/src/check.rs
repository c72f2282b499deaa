//! `check_response` (docs/contract.md §3.1) and the tool result the model receives (contract §3.2).

use serde::Serialize;
use serde::ser::SerializeMap;

use crate::error::ResponseError;
use crate::model::{AnsweredBy, AskUserAnswer, AskUserRequest, AskUserResponse, Question};
use crate::profile::{MAX_QUESTIONS, Profile, QuestionKind};
use crate::secret::session_secret_ref;
use crate::text;

/// What the model is told when the person declined. Sent verbatim, not JSON-quoted.
pub const DECLINED: &str = "The user declined to answer these questions. Continue without the answers, or ask differently if they are essential.";

/// What the model is told when nobody answered in time (on-timeout policy `decline`).
pub const TIMED_OUT: &str = "Nobody answered these questions in time. Continue without the answers: make a reasonable choice and say which one you made.";

/// What the model is told when nobody answered in time under the on-timeout policy `stop`: not to
/// guess, since the person may simply have been away.
pub const TIMED_OUT_STOP: &str = "Nobody answered these questions in time. Do not guess the answers: finish only the work that does not depend on them, then stop and say what you need to know to go on.";

/// Checks that `response` fits `request`; the first failure wins, in the order of contract §3.1, with
/// the extended profile's kind rules (contract §10) for an extended request.
///
/// Extended profile, per answer after its header is matched: an `id`, when given, must be the
/// question's; a secret question takes exactly `secret_ref` = `session:NAME` and nothing else; a
/// text question takes a `custom_answer` (the rules of §3.1) and nothing selected; a choice
/// question takes no `secret_ref`, and a `custom_answer` only when it allows one
/// (`allow_other`), then the rules of §3.1. In the reference profile an answer has no `id` and no
/// `secret_ref`.
///
/// # Errors
///
/// A [`ResponseError`] naming the offending header or labels. It is a bug in the answerer: it fails
/// the call rather than going back to the model.
pub fn check_response(request: &AskUserRequest, response: &AskUserResponse) -> Result<(), ResponseError> {
    if response.cancelled {
        return if response.answers.is_empty() { Ok(()) } else { Err(ResponseError::CancelledWithAnswers) };
    }
    let extended = request.profile() == Profile::Extended;
    let questions = request.questions().as_slice();
    let mut answered = [false; MAX_QUESTIONS];
    for answer in &response.answers {
        let Some(index) =
            questions.iter().position(|q| q.header() == answer.header).filter(|&i| !answered[i])
        else {
            return Err(ResponseError::UnknownQuestion { header: answer.header.clone() });
        };
        let question = &questions[index];
        if extended {
            extended_answer(question, answer)?;
        } else if answer.id.is_some() || answer.secret_ref.is_some() {
            let field = if answer.id.is_some() { "id" } else { "secret_ref" };
            return Err(ResponseError::NotInReferenceProfile { header: answer.header.clone(), field });
        } else {
            choice_answer(question, answer)?;
        }
        answered[index] = true;
    }
    let mut missing: Vec<String> = questions
        .iter()
        .zip(answered)
        .filter(|(_, done)| !done)
        .map(|(q, _)| q.header().to_owned())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    // Byte order of UTF-8 is code-point order.
    missing.sort_unstable();
    Err(ResponseError::Unanswered { headers: missing })
}

/// contract §3.1 step 2.2: a custom answer is non-blank and free of forbidden characters.
fn custom_answer(answer: &AskUserAnswer, custom: &str) -> Result<(), ResponseError> {
    let header = || answer.header.clone();
    if custom.trim_matches(text::is_python_space).is_empty() {
        return Err(ResponseError::BlankCustomAnswer { header: header() });
    }
    if let Some((position, character)) = text::first_forbidden(custom, true) {
        return Err(ResponseError::ForbiddenCharacter { header: header(), character, position });
    }
    Ok(())
}

/// contract §3.1 steps 2.2–2.3 for the answer to a choice question.
fn choice_answer(question: &Question, answer: &AskUserAnswer) -> Result<(), ResponseError> {
    let header = || answer.header.clone();
    if let Some(custom) = &answer.custom_answer {
        if !answer.selected.is_empty() {
            return Err(ResponseError::CustomWithSelection { header: header() });
        }
        return custom_answer(answer, custom);
    }
    let offered = |label: &String| question.options().iter().any(|o| o.label() == label);
    let unknown: Vec<String> = answer.selected.iter().filter(|l| !offered(l)).cloned().collect();
    if !unknown.is_empty() {
        return Err(ResponseError::UnknownOptions { header: header(), labels: unknown });
    }
    if answer.selected.is_empty() {
        return Err(ResponseError::NothingPicked { header: header() });
    }
    for (i, label) in answer.selected.iter().enumerate() {
        if answer.selected[..i].contains(label) {
            return Err(ResponseError::RepeatedOption { header: header(), label: label.clone() });
        }
    }
    if !question.multi_select() && answer.selected.len() > 1 {
        return Err(ResponseError::SeveralOnSingleSelect { header: header(), count: answer.selected.len() });
    }
    Ok(())
}

/// The extended profile's rules for one answer (contract §10), after its header matched `question`.
fn extended_answer(question: &Question, answer: &AskUserAnswer) -> Result<(), ResponseError> {
    let header = || answer.header.clone();
    if let Some(given) = &answer.id
        && question.id() != Some(given.as_str())
    {
        let expected = question.id().unwrap_or_default().to_owned();
        return Err(ResponseError::IdMismatch { header: header(), given: given.clone(), expected });
    }
    match question.kind() {
        QuestionKind::Secret => {
            let expected = session_secret_ref(question.secret_name().unwrap_or_default());
            if answer.secret_ref.as_deref() != Some(expected.as_str())
                || !answer.selected.is_empty()
                || answer.custom_answer.is_some()
            {
                return Err(ResponseError::NotASecretReference { header: header(), expected });
            }
            Ok(())
        }
        QuestionKind::Text => {
            if answer.secret_ref.is_some() {
                return Err(ResponseError::UnexpectedSecretRef { header: header() });
            }
            match &answer.custom_answer {
                Some(custom) if answer.selected.is_empty() => custom_answer(answer, custom),
                _ => Err(ResponseError::TextNotAnswered { header: header() }),
            }
        }
        QuestionKind::Choice => {
            if answer.secret_ref.is_some() {
                return Err(ResponseError::UnexpectedSecretRef { header: header() });
            }
            if answer.custom_answer.is_some() && !question.allow_other() {
                return Err(ResponseError::OtherNotAllowed { header: header() });
            }
            choice_answer(question, answer)
        }
    }
}

/// How a call ended, as far as the model is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Outcome {
    /// A person answered.
    Answered,
    /// The person declined.
    Declined,
    /// Nobody answered in time (policy `decline`).
    TimedOut,
    /// Defaults stood in for a person: `unattended`, or `timeout` under policy `apply-defaults`.
    Defaulted(AnsweredBy),
}

impl Outcome {
    /// `answered`, `declined`, `timed_out` or `defaulted`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Answered => "answered",
            Self::Declined => "declined",
            Self::TimedOut => "timed_out",
            Self::Defaulted(_) => "defaulted",
        }
    }
}

/// The tool result: the exact text the model receives, and what it means.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AskUserResult {
    outcome: Outcome,
    text: String,
    /// An extended-profile result: JSON in every case, never reworded.
    data: bool,
}

impl AskUserResult {
    /// The result for a declined call: [`DECLINED`].
    #[must_use]
    pub fn declined() -> Self {
        Self { outcome: Outcome::Declined, text: DECLINED.to_owned(), data: false }
    }

    /// The result for a call nobody answered in time: [`TIMED_OUT`].
    #[must_use]
    pub fn timed_out() -> Self {
        Self { outcome: Outcome::TimedOut, text: TIMED_OUT.to_owned(), data: false }
    }

    /// The result for `request` when nobody answered in time and no defaults are applied (policy
    /// `decline`): [`TIMED_OUT`] in the reference profile; in the extended profile
    /// `{"status":"timed_out","answered_by":"timeout","answers":[]}`.
    #[must_use]
    pub fn timed_out_for(request: &AskUserRequest) -> Self {
        if request.profile() == Profile::Extended {
            return render_extended(
                request,
                &AskUserResponse::declined().with_answered_by(AnsweredBy::Timeout),
            );
        }
        Self::timed_out()
    }

    /// The same result worded `sentence` when it is [declined](Outcome::Declined) or
    /// [timed out](Outcome::TimedOut): for a host that words those its own way. Any other result
    /// is returned unchanged: answers are always rendered as contract §3.2 says, and an extended-profile
    /// result is data in every case (contract §10), never a sentence.
    #[must_use]
    pub fn with_sentence(self, sentence: &str) -> Self {
        match self.outcome {
            Outcome::Declined | Outcome::TimedOut if !self.data => Self { text: sentence.to_owned(), ..self },
            _ => self,
        }
    }

    /// How the call ended.
    #[must_use]
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// The text to send the model as the tool result.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text, owned.
    #[must_use]
    pub fn into_text(self) -> String {
        self.text
    }
}

/// Checks `response` against `request` and renders the tool result (contract §3.2).
///
/// A person's answers become compact JSON, keys in the order answered, each value the labels in the
/// order picked or a one-item list with the custom answer — byte-identical to the reference.
/// Defaults become `{"answered_by":"unattended","answers":{…}}`, so the model cannot mistake them
/// for a person's choice.
///
/// # Errors
///
/// The response does not fit the request; see [`check_response`].
pub fn ask_user_result(
    request: &AskUserRequest,
    response: &AskUserResponse,
) -> Result<AskUserResult, ResponseError> {
    check_response(request, response)?;
    if request.profile() == Profile::Extended {
        return Ok(render_extended(request, response));
    }
    Ok(render_checked(response))
}

/// Renders a response already checked against its request (reference profile).
fn render_checked(response: &AskUserResponse) -> AskUserResult {
    if response.cancelled {
        return AskUserResult::declined();
    }
    let answers = AnswerMap(&response.answers);
    let (outcome, text) = match response.answered_by {
        AnsweredBy::User => (Outcome::Answered, serde_json::to_string(&answers)),
        by => (Outcome::Defaulted(by), serde_json::to_string(&Provenance { answered_by: by, answers })),
    };
    // Serialising strings into memory cannot fail.
    AskUserResult { outcome, text: text.unwrap_or_default(), data: false }
}

struct AnswerMap<'a>(&'a [AskUserAnswer]);

impl Serialize for AnswerMap<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for answer in self.0 {
            match &answer.custom_answer {
                Some(custom) => map.serialize_entry(&answer.header, std::slice::from_ref(custom))?,
                None => map.serialize_entry(&answer.header, &answer.selected)?,
            }
        }
        map.end()
    }
}

#[derive(Serialize)]
struct Provenance<'a> {
    answered_by: AnsweredBy,
    answers: AnswerMap<'a>,
}

/// Renders a response already checked against its extended request (contract §10):
/// `{"status","answered_by","answers":[{"id","header","selected","other_text","secret_ref"?}]}`.
fn render_extended(request: &AskUserRequest, response: &AskUserResponse) -> AskUserResult {
    let by = response.answered_by;
    let (status, outcome) = match (by, response.cancelled) {
        (AnsweredBy::Timeout, true) => ("timed_out", Outcome::TimedOut),
        (AnsweredBy::Timeout, false) => ("timed_out", Outcome::Defaulted(by)),
        (_, true) => ("declined", Outcome::Declined),
        (AnsweredBy::User, false) => ("answered", Outcome::Answered),
        (_, false) => ("answered", Outcome::Defaulted(by)),
    };
    let result =
        ExtendedResult { status, answered_by: by, answers: ExtendedAnswers(request, &response.answers) };
    // Serialising strings into memory cannot fail.
    AskUserResult { outcome, text: serde_json::to_string(&result).unwrap_or_default(), data: true }
}

#[derive(Serialize)]
struct ExtendedResult<'a> {
    status: &'static str,
    answered_by: AnsweredBy,
    answers: ExtendedAnswers<'a>,
}

struct ExtendedAnswers<'a>(&'a AskUserRequest, &'a [AskUserAnswer]);

#[derive(Serialize)]
struct ExtendedAnswer<'a> {
    id: Option<&'a str>,
    header: &'a str,
    selected: &'a [String],
    other_text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    secret_ref: Option<&'a str>,
}

impl Serialize for ExtendedAnswers<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let questions = self.0.questions();
        serializer.collect_seq(self.1.iter().map(|answer| ExtendedAnswer {
            id: questions.get(&answer.header).and_then(Question::id),
            header: &answer.header,
            selected: &answer.selected,
            other_text: answer.custom_answer.as_deref(),
            secret_ref: answer.secret_ref.as_deref(),
        }))
    }
}
