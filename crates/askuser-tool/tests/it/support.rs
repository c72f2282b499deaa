//! Shared fixtures: argument texts, a shared log, and answerers that record what happens to them.

use std::sync::{Arc, Mutex};

use askuser_core::{AnswerError, Answerer, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse};
use askuser_tool::{AskUser, AskUserBuilder, AskUserEvent, Listener};

/// Two questions; the second is multi-select and recommends an option.
pub(crate) const ARGS: &str = r#"{"questions":[
  {"header":"Approach","question":"How should I fix the failing test?","options":[
    {"label":"Patch the test"},{"label":"Fix the code (Recommended)","description":"Slower, but right"}]},
  {"header":"Targets","question":"Which modules?","multi_select":true,"options":[
    {"label":"api.py"},{"label":"db.py"},{"label":"cli.py"}]}]}"#;

/// A call the validator rejects: one option only.
pub(crate) const BAD_ARGS: &str =
    r#"{"questions":[{"header":"Approach","question":"How?","options":[{"label":"Only one"}]}]}"#;

/// What a person answers to [`ARGS`].
pub(crate) fn person_response() -> AskUserResponse {
    AskUserResponse::answered(vec![
        AskUserAnswer::picked("Approach", ["Fix the code (Recommended)"]),
        AskUserAnswer::picked("Targets", ["db.py", "api.py"]),
    ])
}

/// A builder whose answerer replies to [`ARGS`] with a typed answer, "my secret plan", and the
/// pick "db.py": the text that must stay out of logs unless `include_content` is true.
pub(crate) fn secret_answerer(include_content: bool) -> AskUserBuilder {
    AskUser::builder()
        .answerer(|_: AskUserRequest, _: AskContext| async {
            Ok::<_, AnswerError>(AskUserResponse::answered(vec![
                AskUserAnswer::custom("Approach", "my secret plan"),
                AskUserAnswer::picked("Targets", ["db.py"]),
            ]))
        })
        .include_content(include_content)
}

/// An ordered log shared by listeners and answerers.
#[derive(Clone, Default)]
pub(crate) struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub(crate) fn push(&self, entry: impl Into<String>) {
        self.0.lock().expect("log lock").push(entry.into());
    }

    pub(crate) fn entries(&self) -> Vec<String> {
        self.0.lock().expect("log lock").clone()
    }

    /// A listener that logs each event in a short form.
    pub(crate) fn listener(&self) -> impl Listener + 'static {
        let log = self.clone();
        move |event: &AskUserEvent| {
            log.push(match event {
                AskUserEvent::Requested(e) => format!("requested deferred={}", e.is_deferred()),
                AskUserEvent::Answered(e) => format!(
                    "answered cancelled={} timed_out={} failed={}",
                    e.response().cancelled,
                    e.timed_out(),
                    e.failed()
                ),
                AskUserEvent::Nudge(e) => format!(
                    "nudge after {} ms",
                    e.asked_at().until(e.nudge_at().expect("a nudge has a time")).as_millis()
                ),
                _ => "other".to_owned(),
            });
        }
    }
}

/// An answerer that logs its start and returns a fixed result.
pub(crate) struct Scripted {
    pub(crate) log: Log,
    pub(crate) result: fn() -> Result<AskUserResponse, AnswerError>,
}

#[askuser_core::async_trait]
impl Answerer for Scripted {
    async fn answer(
        &self,
        _request: AskUserRequest,
        _context: AskContext,
    ) -> Result<AskUserResponse, AnswerError> {
        self.log.push("answerer ran");
        (self.result)()
    }
}

/// Logs "answerer dropped" when the future that owns it is dropped.
pub(crate) struct DropFlag(pub(crate) Log);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.push("answerer dropped");
    }
}

/// An answerer that waits an hour (of paused time), recording its own drop.
pub(crate) struct Slow {
    pub(crate) log: Log,
}

#[askuser_core::async_trait]
impl Answerer for Slow {
    async fn answer(
        &self,
        _request: AskUserRequest,
        _context: AskContext,
    ) -> Result<AskUserResponse, AnswerError> {
        let _flag = DropFlag(self.log.clone());
        self.log.push("answerer waiting");
        tokio::time::sleep(std::time::Duration::from_hours(1)).await;
        self.log.push("answerer finished");
        Ok(AskUserResponse::declined())
    }
}
