//! The workspace's test fixtures, shared by the crates' integration tests (a dev-dependency only,
//! never published): the PostgreSQL server a test runs against (skipped with a notice, except
//! under `CI=true`), schema names no other run uses, temporary directories removed on drop, and
//! pseudo-terminals that record what was drawn on them.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

#[cfg(unix)]
mod pty;
#[cfg(unix)]
pub use pty::Pty;

/// Says plainly that `what` is skipped, `because`: on the process's stderr, which the test
/// harness does not capture (it captures `eprintln!`), so a skip is always seen.
///
/// # Panics
///
/// Under `CI=true`: CI provides every service and tool the tests need, and never skips one.
pub fn skip(what: &str, because: &str) {
    assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true but {because}: {what} cannot run");
    let _ = writeln!(std::io::stderr(), "SKIPPED {what}: {because}");
}

/// The PostgreSQL server to test against (`ASKUSER_TEST_POSTGRES_URL`), or `None` after saying
/// that `test` is [skipped](skip).
///
/// # Panics
///
/// Under `CI=true` without one: CI must provide the service, so a missing one fails.
#[must_use]
pub fn postgres_url(test: &str) -> Option<String> {
    match std::env::var("ASKUSER_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            skip(test, "ASKUSER_TEST_POSTGRES_URL is not set (e.g. postgres://root@127.0.0.1:5432/test)");
            None
        }
    }
}

/// A PostgreSQL schema name no other test, run or process uses.
#[must_use]
pub fn unique_schema() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("askuser_test_{}_{}_{nanos}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A fresh directory under the system's temporary directory, named for `name`, this process and
/// a count (so two tests of one process never share one), removed (with what is in it) when
/// dropped. Its path is `.0`.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// Makes it (empty: a leftover of an earlier run of the same name is removed first).
    ///
    /// # Panics
    ///
    /// When it cannot be made.
    #[must_use]
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("askuser-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        Self(dir)
    }

    /// Its path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `name` inside it.
    #[must_use]
    pub fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `list` as owned strings (a command line).
#[must_use]
pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// The requests a [`person`] was asked, in order.
pub type Asked = std::sync::Arc<std::sync::Mutex<Vec<askuser_core::AskUserRequest>>>;

/// A scripted person: answers the question headed `H` with `answers[H]` — the labels to pick
/// (several joined by `+`) for a choice question, the text to type for a text question — and
/// records each request in `asked`.
///
/// # Panics
///
/// When a question has no answer in `answers`.
pub fn person(answers: &[(&str, &str)], asked: Asked) -> impl askuser_core::Answerer + use<> {
    use askuser_core::{
        AnswerError, AskContext, AskUserAnswer, AskUserRequest, AskUserResponse, QuestionKind,
    };
    let answers: std::collections::BTreeMap<String, String> =
        answers.iter().map(|(h, a)| ((*h).to_owned(), (*a).to_owned())).collect();
    move |request: AskUserRequest, _: AskContext| {
        asked.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(request.clone());
        let answers = answers.clone();
        async move {
            let answers = request
                .questions()
                .iter()
                .map(|q| {
                    let answer =
                        answers.get(q.header()).unwrap_or_else(|| panic!("no answer for {:?}", q.header()));
                    if q.kind() == QuestionKind::Text {
                        AskUserAnswer::custom(q.header(), answer.clone())
                    } else {
                        AskUserAnswer::picked(q.header(), answer.split('+').map(str::to_owned))
                    }
                })
                .collect();
            Ok::<_, AnswerError>(AskUserResponse::answered(answers))
        }
    }
}
