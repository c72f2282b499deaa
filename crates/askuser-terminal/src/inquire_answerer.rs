//! A blocking answerer on inquire, for simple synchronous programs (feature `inquire`).

use askuser_core::{
    AnswerError, AskUserAnswer, AskUserRequest, AskUserResponse, QuestionKind, check_response,
};
use inquire::error::InquireError;
use inquire::list_option::ListOption;
use inquire::ui::{IndexPrefix, RenderConfig};
use inquire::validator::Validation;
use inquire::{CustomUserError, MultiSelect, Select, Text};

use crate::text::{clean_answer_text, sanitize};

/// Asks with inquire's prompts, one question at a time, blocking the calling thread.
///
/// inquire is neither async nor cancellable: call [`InquireAnswerer::ask_blocking`] on the
/// program's own thread, never from `spawn_blocking` with a timeout (an abandoned prompt leaves
/// raw mode on and swallows a line). Use [`TerminalAnswerer`](crate::TerminalAnswerer) where a
/// call may be cancelled. Strings are sanitised before inquire sees them, since it writes them
/// to the terminal verbatim.
#[derive(Debug, Clone, Copy)]
pub struct InquireAnswerer {
    max_custom_chars: usize,
}

impl InquireAnswerer {
    /// An answerer with custom answers capped at
    /// [`DEFAULT_MAX_CUSTOM_CHARS`](crate::DEFAULT_MAX_CUSTOM_CHARS).
    #[must_use]
    pub fn new() -> Self {
        Self { max_custom_chars: crate::DEFAULT_MAX_CUSTOM_CHARS }
    }

    /// The cap on a custom answer, in characters. Default:
    /// [`DEFAULT_MAX_CUSTOM_CHARS`](crate::DEFAULT_MAX_CUSTOM_CHARS).
    #[must_use]
    pub fn max_custom_chars(mut self, chars: usize) -> Self {
        self.max_custom_chars = chars.max(1);
        self
    }

    /// Asks every question of `request`; Esc declines. Extended questions: a text question is a
    /// text prompt, the cursor starts on the first declared default, "Other…" only when
    /// `allow_other`; a batch with a secret question is declined unasked (inquire has no prompt
    /// that can be cancelled safely with echo off).
    ///
    /// # Errors
    ///
    /// [`AnswerError::interrupted`] on Ctrl-C; [`AnswerError::failed`] when there is no terminal
    /// or it fails.
    pub fn ask_blocking(&self, request: &AskUserRequest) -> Result<AskUserResponse, AnswerError> {
        let config = RenderConfig::default().with_option_index_prefix(IndexPrefix::Simple);
        // inquire has no masked field that can be cancelled safely: a secret is never typed here.
        if request.questions().iter().any(|q| q.kind() == QuestionKind::Secret) {
            return Ok(AskUserResponse::declined());
        }
        let mut answers = Vec::new();
        for question in request.questions() {
            let header = sanitize(question.header(), false);
            let prompt = format!("{header}: {}", sanitize(question.question(), false));
            let with_id = |answer: AskUserAnswer| match question.id() {
                Some(id) => answer.with_id(id),
                None => answer,
            };
            if question.kind() == QuestionKind::Text {
                let Some(text) = self.typed(&prompt, &config)? else {
                    return Ok(AskUserResponse::declined());
                };
                answers.push(with_id(AskUserAnswer::custom(question.header(), text)));
                continue;
            }
            let mut shown: Vec<String> = question
                .options()
                .iter()
                .map(|o| match o.description().filter(|d| !d.trim().is_empty()) {
                    Some(d) => format!("{} — {}", sanitize(o.label(), false), sanitize(d, false)),
                    None => sanitize(o.label(), false).into_owned(),
                })
                .collect();
            let other = shown.len();
            if question.allow_other() {
                shown.push("Other… (type your answer)".to_owned());
            }
            let start = crate::menu::first_default(question);
            let picked: Option<Vec<usize>> = if question.multi_select() {
                let prompt = MultiSelect::new(&prompt, shown)
                    .with_render_config(config)
                    .without_filtering()
                    .with_starting_cursor(start)
                    .with_validator(multi_pick_check(other));
                or_decline(prompt.raw_prompt())?.map(|v| v.into_iter().map(|o| o.index).collect())
            } else {
                let prompt = Select::new(&prompt, shown)
                    .with_render_config(config)
                    .without_filtering()
                    .with_starting_cursor(start);
                or_decline(prompt.raw_prompt())?.map(|o| vec![o.index])
            };
            let Some(picked) = picked else { return Ok(AskUserResponse::declined()) };
            if picked.contains(&other) {
                let Some(text) = self.typed(&format!("{header}: your answer"), &config)? else {
                    return Ok(AskUserResponse::declined());
                };
                answers.push(with_id(AskUserAnswer::custom(question.header(), text)));
            } else {
                answers.push(with_id(AskUserAnswer::picked(
                    question.header(),
                    picked.iter().map(|&i| question.options()[i].label()),
                )));
            }
        }
        checked(request, answers)
    }
}

impl InquireAnswerer {
    /// A typed answer (a text question's, or "Other…"), checked and cleaned; `None` on Esc.
    fn typed(self, prompt: &str, config: &RenderConfig<'_>) -> Result<Option<String>, AnswerError> {
        let text = Text::new(prompt)
            .with_render_config(*config)
            .with_validator(custom_answer_check(self.max_custom_chars))
            .prompt();
        Ok(or_decline(text)?.map(|text| clean_answer_text(&text).trim().to_owned()))
    }
}

/// The response for `answers`, once core's `check_response` has passed it: a bug here fails the
/// call instead of reaching the model, as in the menu.
fn checked(request: &AskUserRequest, answers: Vec<AskUserAnswer>) -> Result<AskUserResponse, AnswerError> {
    let response = AskUserResponse::answered(answers);
    check_response(request, &response)
        .map_err(|e| AnswerError::failed("the answers do not fit the questions").with_source(e))?;
    Ok(response)
}

/// The multi-select's check: at least one pick, and "Other…" alone, since a custom answer replaces
/// the picks (ticks beside it used to be dropped without a word).
fn multi_pick_check(
    other: usize,
) -> impl Fn(&[ListOption<&String>]) -> Result<Validation, CustomUserError> + Clone {
    move |picked| {
        Ok(if picked.is_empty() {
            Validation::Invalid("pick at least one (space toggles), or Other".into())
        } else if picked.len() > 1 && picked.iter().any(|o| o.index == other) {
            Validation::Invalid("Other replaces the picks: untick the others, or untick Other".into())
        } else {
            Validation::Valid
        })
    }
}

/// Esc becomes `None` (declined); Ctrl-C and failures become errors.
impl Default for InquireAnswerer {
    fn default() -> Self {
        Self::new()
    }
}

/// The custom answer's check, shown under the prompt until it passes: a blank answer used to
/// decline the whole batch, and a long one was cut without a word.
fn custom_answer_check(max: usize) -> impl Fn(&str) -> Result<Validation, CustomUserError> + Clone {
    move |text| {
        let chars = clean_answer_text(text).trim().chars().count();
        Ok(if chars == 0 {
            Validation::Invalid("type an answer, or esc to decline".into())
        } else if chars > max {
            Validation::Invalid(format!("at most {max} characters, this is {chars}").into())
        } else {
            Validation::Valid
        })
    }
}

fn or_decline<T>(result: Result<T, InquireError>) -> Result<Option<T>, AnswerError> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(InquireError::OperationCanceled) => Ok(None),
        Err(InquireError::OperationInterrupted) => Err(AnswerError::interrupted()),
        Err(InquireError::NotTTY) => Err(AnswerError::failed("not a terminal")),
        Err(other) => Err(AnswerError::failed("the terminal failed").with_source(other)),
    }
}

#[cfg(test)]
mod tests {
    use askuser_core::AnswerErrorKind;

    use super::*;

    /// Guards the secret rule: inquire never prompts for a secret (its text prompt echoes); the
    /// batch is declined before any terminal is touched.
    #[test]
    fn a_secret_is_declined_unasked() {
        let json = r#"{"questions":[{"kind":"secret","header":"T","question":"?","secret_name":"T","purpose":"p"}]}"#;
        let questions = askuser_core::Validator::new()
            .with_profile(askuser_core::Profile::Extended)
            .validate_json(json)
            .unwrap();
        let response = InquireAnswerer::new().ask_blocking(&AskUserRequest::new(questions)).unwrap();
        assert_eq!(response, AskUserResponse::declined());
    }

    #[test]
    fn esc_declines_ctrl_c_interrupts() {
        assert_eq!(or_decline(Ok(3)).unwrap(), Some(3));
        assert_eq!(or_decline::<()>(Err(InquireError::OperationCanceled)).unwrap(), None);
        let kind = |e: InquireError| or_decline::<()>(Err(e)).unwrap_err().kind();
        assert_eq!(kind(InquireError::OperationInterrupted), AnswerErrorKind::Interrupted);
        assert_eq!(kind(InquireError::NotTTY), AnswerErrorKind::Failed);
    }

    /// Guards the custom answer's check: blank or over the cap is refused (re-asked), not turned
    /// into a decline or cut.
    #[test]
    fn custom_answers_are_checked_not_cut() {
        let check = custom_answer_check(5);
        let invalid = |text: &str| matches!(check(text).unwrap(), Validation::Invalid(_));
        assert!(invalid("   "));
        assert!(invalid("\u{200b}\t"), "nothing left once cleaned");
        assert!(invalid("abcdef"));
        assert!(!invalid(" abcde "));
    }

    /// Guards "what is ticked is what is sent": "Other…" with other ticks is refused, not a
    /// custom answer that silently drops them.
    #[test]
    fn other_is_picked_alone() {
        let labels = ["a".to_owned(), "b".to_owned(), "Other".to_owned()];
        let check = multi_pick_check(2);
        let valid = |indices: &[usize]| {
            let picked: Vec<_> = indices.iter().map(|&i| ListOption::new(i, &labels[i])).collect();
            matches!(check(&picked).unwrap(), Validation::Valid)
        };
        assert!(valid(&[0, 1]) && valid(&[2]));
        assert!(!valid(&[]) && !valid(&[0, 2]));
    }

    /// Guards the check before returning, which this answerer used to skip.
    #[test]
    fn answers_are_checked_before_they_are_returned() {
        let request = AskUserRequest::new(
            askuser_core::Questions::from_json(
                r#"{"questions":[{"header":"H","question":"Q?","options":[{"label":"a"},{"label":"b"}]}]}"#,
            )
            .unwrap(),
        );
        assert!(checked(&request, vec![AskUserAnswer::picked("H", ["a"])]).is_ok());
        let err = checked(&request, vec![AskUserAnswer::picked("H", ["zzz"])]).unwrap_err();
        assert_eq!(err.kind(), AnswerErrorKind::Failed);
    }

    #[test]
    fn default_keeps_the_cap() {
        assert_eq!(InquireAnswerer::default().max_custom_chars, crate::DEFAULT_MAX_CUSTOM_CHARS);
    }
}
