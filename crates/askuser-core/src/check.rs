//! `check_response` (SPEC §3.1) and the tool result the model receives (SPEC §3.2).

use serde::Serialize;
use serde::ser::SerializeMap;

use crate::error::ResponseError;
use crate::model::{AnsweredBy, AskUserAnswer, AskUserRequest, AskUserResponse, MAX_QUESTIONS};
use crate::text;

/// What the model is told when the person declined. Sent verbatim, not JSON-quoted.
pub const DECLINED: &str = "The user declined to answer these questions. Continue without the answers, or ask differently if they are essential.";

/// What the model is told when nobody answered in time (on-timeout policy `decline`).
pub const TIMED_OUT: &str = "Nobody answered these questions in time. Continue without the answers: make a reasonable choice and say which one you made.";

/// Checks that `response` fits `request`; the first failure wins, in the order of SPEC §3.1.
///
/// # Errors
///
/// A [`ResponseError`] naming the offending header or labels. It is a bug in the answerer: it fails
/// the call rather than going back to the model.
pub fn check_response(request: &AskUserRequest, response: &AskUserResponse) -> Result<(), ResponseError> {
    if response.cancelled {
        return if response.answers.is_empty() { Ok(()) } else { Err(ResponseError::CancelledWithAnswers) };
    }
    let questions = request.questions().as_slice();
    let mut answered = [false; MAX_QUESTIONS];
    for answer in &response.answers {
        let Some(index) =
            questions.iter().position(|q| q.header() == answer.header).filter(|&i| !answered[i])
        else {
            return Err(ResponseError::UnknownQuestion { header: answer.header.clone() });
        };
        let question = &questions[index];
        let header = || answer.header.clone();
        if let Some(custom) = &answer.custom_answer {
            if !answer.selected.is_empty() {
                return Err(ResponseError::CustomWithSelection { header: header() });
            }
            if custom.trim_matches(text::is_python_space).is_empty() {
                return Err(ResponseError::BlankCustomAnswer { header: header() });
            }
            if let Some((position, character)) = text::first_forbidden(custom, true) {
                return Err(ResponseError::ForbiddenCharacter { header: header(), character, position });
            }
        } else {
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
                return Err(ResponseError::SeveralOnSingleSelect {
                    header: header(),
                    count: answer.selected.len(),
                });
            }
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
}

impl AskUserResult {
    /// The result for a declined call: [`DECLINED`].
    #[must_use]
    pub fn declined() -> Self {
        Self { outcome: Outcome::Declined, text: DECLINED.to_owned() }
    }

    /// The result for a call nobody answered in time: [`TIMED_OUT`].
    #[must_use]
    pub fn timed_out() -> Self {
        Self { outcome: Outcome::TimedOut, text: TIMED_OUT.to_owned() }
    }

    /// The same result worded `sentence` when it is [declined](Outcome::Declined) or
    /// [timed out](Outcome::TimedOut): for a host that words those its own way. Any other result
    /// is returned unchanged: answers are always rendered as SPEC §3.2 says.
    #[must_use]
    pub fn with_sentence(self, sentence: &str) -> Self {
        match self.outcome {
            Outcome::Declined | Outcome::TimedOut => Self { text: sentence.to_owned(), ..self },
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

/// Checks `response` against `request` and renders the tool result (SPEC §3.2).
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
    Ok(render_checked(response))
}

/// Renders a response already checked against its request.
pub(crate) fn render_checked(response: &AskUserResponse) -> AskUserResult {
    if response.cancelled {
        return AskUserResult::declined();
    }
    let answers = AnswerMap(&response.answers);
    let (outcome, text) = match response.answered_by {
        AnsweredBy::User => (Outcome::Answered, serde_json::to_string(&answers)),
        by => (Outcome::Defaulted(by), serde_json::to_string(&Provenance { answered_by: by, answers })),
    };
    // Serialising strings into memory cannot fail.
    AskUserResult { outcome, text: text.unwrap_or_default() }
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
