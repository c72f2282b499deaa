//! The exit statuses of a command that makes one `ask_user_question` call and ends — `askuser ask`
//! (the terminal) and `askuser ask --server` (the answer server) share them, and so can any
//! wrapper of yours: [`CallOutcome::exit_status`] and [`CallOutcome::exit_message`].
//!
//! | status | meaning |
//! | --- | --- |
//! | 0 | answered (by the person, or by defaults the host chose: `--unattended`) |
//! | [`DECLINED`] 1 | the person declined |
//! | [`USAGE`] 2 | bad usage or bad arguments (the retry text is still printed) |
//! | [`COULD_NOT_ASK`] 3 | nobody could be asked: no terminal, the server unreachable, the answerer failed |
//! | [`WRITE_FAILED`] 4 | the result could not be written to stdout |
//! | [`TIMED_OUT`] 124 | nobody answered in time (as `timeout(1)`), defaults applied or not |
//! | [`INTERRUPTED`] 130 | interrupted (Ctrl-C); other signals end it with 128 + the signal |

use askuser_core::{AnsweredBy, Outcome};

use crate::{CallOutcome, RetryReason};

/// The person declined.
pub const DECLINED: u8 = 1;
/// Bad usage or bad tool-call arguments.
pub const USAGE: u8 = 2;
/// Nobody could be asked, or the answerer failed.
pub const COULD_NOT_ASK: u8 = 3;
/// The result could not be written to stdout (a command's own failure; no outcome maps to it).
pub const WRITE_FAILED: u8 = 4;
/// Nobody answered in time.
pub const TIMED_OUT: u8 = 124;
/// Interrupted (SIGINT's 128 + 2).
pub const INTERRUPTED: u8 = 130;

impl CallOutcome {
    /// The exit status of a command whose one call ended with this outcome (table in
    /// [`exit`](crate::exit)): 0 answered, 1 declined, 2 a retry, 3 could not ask, 124 timed out,
    /// 130 interrupted.
    #[must_use]
    pub fn exit_status(&self) -> u8 {
        match self {
            Self::Completed(result) => match result.outcome() {
                Outcome::Declined => DECLINED,
                Outcome::TimedOut | Outcome::Defaulted(AnsweredBy::Timeout) => TIMED_OUT,
                _ => 0,
            },
            Self::Retry(_) => USAGE,
            Self::Failed(e) if e.is_interrupted() => INTERRUPTED,
            Self::Deferred(_) | Self::Failed(_) => COULD_NOT_ASK,
        }
    }

    /// What such a command says on stderr, beside [`model_text`](Self::model_text) on stdout:
    /// `None` when the outcome speaks for itself (answered, declined). A failure is followed by
    /// its causes. Never holds a question's text or an answer.
    #[must_use]
    pub fn exit_message(&self) -> Option<String> {
        match self {
            Self::Completed(result) => match result.outcome() {
                Outcome::TimedOut | Outcome::Defaulted(AnsweredBy::Timeout) => {
                    Some("nobody answered in time".to_owned())
                }
                _ => None,
            },
            Self::Retry(retry) => Some(match retry.reason() {
                RetryReason::InvalidArguments(e) => format!("invalid arguments: {e}"),
                RetryReason::Answerer(_) => "the answerer asked the model to retry".to_owned(),
            }),
            Self::Failed(e) if e.is_interrupted() => Some("interrupted".to_owned()),
            Self::Failed(e) => Some(format!("could not ask: {}", with_causes(e))),
            Self::Deferred(_) => {
                Some("could not ask: there is no answerer (the call was deferred)".to_owned())
            }
        }
    }
}

/// `error` followed by its causes, `: `-separated: an answerer's error names what failed, its
/// source why. A cause whose text the message before it already ends with (an error that
/// repeats its source, as some libraries' do) is not written twice.
#[must_use]
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let next = e.to_string();
        if !text.ends_with(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        cause = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use askuser_core::{AnswerError, AskContext, AskUserResponse, DefaultsResponder};

    use super::*;
    use crate::{AskUser, OnTimeout, ToolCall};

    const ARGS: &str = r#"{"questions":[{"header":"Scope","question":"Which scope?",
        "options":[{"label":"Small"},{"label":"Large"}]}]}"#;

    fn outcome(ask_user: &AskUser, args: &str) -> CallOutcome {
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        rt.block_on(ask_user.call(ToolCall::new("call_1", args), AskContext::new()))
    }

    fn with(answerer: impl askuser_core::Answerer + 'static) -> AskUser {
        AskUser::builder().answerer(answerer).build().unwrap()
    }

    /// Guards the statuses and messages `askuser ask` and `askuser ask --server` both exit with:
    /// each outcome once, and a failure's causes in its message.
    #[test]
    fn every_outcome_has_its_status_and_message() {
        let answered = outcome(&with(DefaultsResponder::new()), ARGS);
        // Defaults the host chose (unattended) count as answered.
        assert_eq!((answered.exit_status(), answered.exit_message()), (0, None));

        let declined =
            outcome(&with(|_, _| async { Ok::<_, AnswerError>(AskUserResponse::declined()) }), ARGS);
        assert_eq!((declined.exit_status(), declined.exit_message()), (DECLINED, None));

        let retry = outcome(&with(DefaultsResponder::new()), r#"{"questions":[]}"#);
        assert_eq!(retry.exit_status(), USAGE);
        assert!(
            retry.exit_message().unwrap().starts_with("invalid arguments: "),
            "{:?}",
            retry.exit_message()
        );

        let failed = outcome(
            &with(|_, _| async {
                Err::<AskUserResponse, _>(
                    AnswerError::failed("the terminal failed")
                        .with_source(std::io::Error::other("no such device")),
                )
            }),
            ARGS,
        );
        assert_eq!(failed.exit_status(), COULD_NOT_ASK);
        assert_eq!(
            failed.exit_message().unwrap(),
            "could not ask: the answerer failed: the terminal failed: no such device"
        );

        let interrupted =
            outcome(&with(|_, _| async { Err::<AskUserResponse, _>(AnswerError::interrupted()) }), ARGS);
        assert_eq!(
            (interrupted.exit_status(), interrupted.exit_message().as_deref()),
            (INTERRUPTED, Some("interrupted"))
        );

        let deferred = outcome(&AskUser::builder().build().unwrap(), ARGS);
        assert_eq!(deferred.exit_status(), COULD_NOT_ASK);

        let slow = AskUser::builder()
            .answerer(|_, _| std::future::pending::<Result<AskUserResponse, AnswerError>>())
            .timeout(std::time::Duration::from_millis(10))
            .on_timeout(OnTimeout::ApplyDefaults)
            .build()
            .unwrap();
        let timed_out = outcome(&slow, ARGS);
        assert_eq!(
            (timed_out.exit_status(), timed_out.exit_message().as_deref()),
            (TIMED_OUT, Some("nobody answered in time"))
        );
    }

    /// Guards store-open and client errors (sqlx's `Io` shows its source and also returns it):
    /// every cause once.
    #[test]
    fn a_cause_that_its_error_repeats_is_written_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("error communicating with database: {0}")]
        struct Repeats(#[source] std::io::Error);
        #[derive(Debug, thiserror::Error)]
        #[error("database error")]
        struct Outer(#[source] Repeats);
        let error = Outer(Repeats(std::io::Error::other("connection refused")));
        assert_eq!(
            with_causes(&error),
            "database error: error communicating with database: connection refused"
        );
    }
}
