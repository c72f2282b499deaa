//! The fallback chain: who answers when the client cannot show a form (and, in the extended
//! profile, who is asked a secret question), each step checked at the call, and what the model
//! is told when a step was passed over or nobody could be asked.

use std::fmt;
use std::sync::Arc;

use askuser_core::{Answerer, DefaultsResponder};

/// A fallback step's answerer, and the note saying why the steps before it could not ask.
pub(crate) type Picked = (Arc<dyn Answerer>, Option<String>);

/// What the model is told when the client cannot show a form and the fallback is to decline.
pub const NO_FORM: &str = "This MCP client cannot show questions to the person (it did not declare form elicitation), so nobody was asked. Continue without the answers: make a reasonable choice and say which one you made, or ask in your reply if the answer is essential.";

/// Who answers when the client cannot show a form, and (extended profile) who is asked a
/// secret question, which never goes into a form.
///
/// Fallbacks chain ([`or_else`](Self::or_else)): a step whose [availability
/// check](Self::available_when) fails at a call (a terminal fallback in a process started without
/// a terminal) passes that call to the next step, a call nobody could be asked tells the model
/// which steps were not available, and a call a later step took gets a second text block saying
/// where the person was asked and why not before.
#[derive(Clone)]
pub struct Fallback {
    answerer: Option<Arc<dyn Answerer>>,
    note: String,
    /// Whether the answerer may be asked secret questions (it reads them with echo off and hands
    /// the value to a secret sink).
    secrets: bool,
    /// Checked at every call: why this step cannot ask now, if it cannot.
    check: Option<Arc<Availability>>,
    /// Who is asked when this step cannot ask now (none: nobody).
    next: Option<Box<Fallback>>,
}

/// A step's availability check: `Err(why)` when it cannot ask now.
type Availability = dyn Fn() -> Result<(), String> + Send + Sync;

impl fmt::Debug for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fallback")
            .field("answerer", &self.answerer.is_some())
            .field("note", &self.note)
            .field("secrets", &self.secrets)
            .field("checked", &self.check.is_some())
            .field("next", &self.next)
            .finish()
    }
}

impl Default for Fallback {
    fn default() -> Self {
        Self::decline()
    }
}

impl Fallback {
    /// Ask nobody: the model is told at once that the client cannot show questions ([`NO_FORM`]).
    /// The default.
    #[must_use]
    pub fn decline() -> Self {
        Self {
            answerer: None,
            note: "nobody is asked and the result says so at once: continue without the answers, or ask in your reply"
                .to_owned(),
            secrets: false,
            check: None,
            next: None,
        }
    }

    /// Answer with the defaults ([`DefaultsResponder`]): the `(Recommended)` options, else the
    /// first, marked `"answered_by":"unattended"`.
    #[must_use]
    pub fn defaults() -> Self {
        Self::answerer(
            DefaultsResponder::new(),
            "the default options are picked without the person and marked \"answered_by\":\"unattended\"",
        )
    }

    /// Ask through `answerer` (a terminal, an answer server, a script). `note` completes the tool
    /// description's sentence "When this MCP client cannot show a form, …", e.g. "the questions
    /// are shown on the terminal where the server runs".
    #[must_use]
    pub fn answerer(answerer: impl Answerer + 'static, note: impl Into<String>) -> Self {
        Self::shared(Arc::new(answerer), note)
    }

    /// [`answerer`](Self::answerer) with an answerer already shared.
    #[must_use]
    pub fn shared(answerer: Arc<dyn Answerer>, note: impl Into<String>) -> Self {
        Self { answerer: Some(answerer), note: note.into(), secrets: false, check: None, next: None }
    }

    /// This step with a check made at every call before it is asked: `Err(why)` (e.g. "this
    /// process has no terminal (/dev/tty: …)") passes the call to the [next step](Self::or_else),
    /// or, at the end of the chain, to nobody, the model being told `why`.
    #[must_use]
    pub fn available_when(mut self, check: impl Fn() -> Result<(), String> + Send + Sync + 'static) -> Self {
        self.check = Some(Arc::new(check));
        self
    }

    /// This chain with `next` asked when no step before it is [available](Self::available_when).
    #[must_use]
    pub fn or_else(mut self, next: Fallback) -> Self {
        match self.next.take() {
            Some(rest) => self.next = Some(Box::new(rest.or_else(next))),
            None => self.next = Some(Box::new(next)),
        }
        self
    }

    /// The steps, first to last.
    fn steps(&self) -> impl Iterator<Item = &Fallback> {
        std::iter::successors(Some(self), |step| step.next.as_deref())
    }

    /// The tool description's words for the chain: each step's note, then what happens when it
    /// is not available.
    pub(crate) fn described(&self) -> String {
        let mut text = self.note.clone();
        let mut step = self;
        while step.check.is_some() {
            let Some(next) = step.next.as_deref() else {
                text.push_str("; when that is not available, nobody is asked and the result says so");
                break;
            };
            text.push_str("; when that is not available, ");
            text.push_str(&next.note);
            step = next;
        }
        text
    }

    /// The step that takes this call (a `secret` call only a step that takes secrets), checked
    /// now, and why each step before it could not; `None` when nobody can be asked.
    fn pick(&self, secret: bool) -> (Option<&Fallback>, Vec<String>) {
        let mut skipped = Vec::new();
        for step in self.steps() {
            if secret && !step.asks_secrets_itself() {
                // Only a step that reads secrets safely may take one; on to the next.
                if step.answerer.is_none() {
                    break;
                }
                continue;
            }
            match step.check.as_ref().map(|check| check()) {
                Some(Err(why)) => skipped.push(why),
                _ if step.answerer.is_none() => break,
                _ => return (Some(step), skipped),
            }
        }
        (None, skipped)
    }

    /// The step that takes a call now, with the note saying why the steps before it could not
    /// (when some could not); `Err(why each could not)` when nobody can be asked.
    pub(crate) fn step(&self, secret: bool) -> Result<Picked, Vec<String>> {
        let (step, skipped) = self.pick(secret);
        match step.and_then(|step| Some((step, step.answerer.as_ref()?))) {
            Some((step, answerer)) => {
                let note = (!skipped.is_empty()).then(|| fell_through_note(&skipped, &step.note));
                Ok((Arc::clone(answerer), note))
            }
            None => Err(skipped),
        }
    }

    fn asks_secrets_itself(&self) -> bool {
        self.secrets && self.answerer.is_some()
    }

    /// Lets this answerer be asked secret questions (extended profile), which are never put in
    /// the MCP client's form (docs/contract.md §13): a batch with a secret question goes to it even when the
    /// client can show forms. Only for an answerer that reads the value safely (the terminal on
    /// `/dev/tty` with echo off) and hands it to a [`SecretSink`](askuser_core::SecretSink),
    /// answering with `secret_ref` alone. Default: false, and such a batch is declined at once.
    #[must_use]
    pub fn takes_secrets(mut self) -> Self {
        self.secrets = self.answerer.is_some();
        self
    }

    /// Whether a secret question goes to this fallback ([`takes_secrets`](Self::takes_secrets)):
    /// to a step of the chain that takes secrets.
    #[must_use]
    pub fn asks_secrets(&self) -> bool {
        self.steps().any(Fallback::asks_secrets_itself)
    }
}

/// What the model is told when nobody could be asked: [`NO_FORM`], then why each fallback that
/// was tried could not ask.
pub(crate) fn nobody_asked(skipped: &[String]) -> String {
    if skipped.is_empty() {
        return NO_FORM.to_owned();
    }
    format!("{NO_FORM} (The fallbacks could not ask either: {}.)", skipped.join("; "))
}

/// What the model is told when a fallback step took a call because the steps before it could
/// not: which surface the person was asked on, and why not on the others.
fn fell_through_note(skipped: &[String], note: &str) -> String {
    format!("(How this was asked: {}; so {note}.)", skipped.join("; "))
}
