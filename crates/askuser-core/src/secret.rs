//! Secrets (extended profile): the value a person enters for a secret question goes to the host's
//! [`SecretSink`]; the model only ever gets the reference `session:NAME`.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use zeroize::Zeroize;

use crate::answer::AskContext;

/// The scheme of a secret reference: `session:NAME`.
pub const SECRET_REF_PREFIX: &str = "session:";

/// The reference a secret answer carries for the secret named `name`: `session:NAME`.
///
/// ```
/// assert_eq!(askuser_core::session_secret_ref("GITHUB_TOKEN"), "session:GITHUB_TOKEN");
/// ```
#[must_use]
pub fn session_secret_ref(name: &str) -> String {
    format!("{SECRET_REF_PREFIX}{name}")
}

/// The name in a `session:NAME` reference, if `reference` is one.
///
/// ```
/// use askuser_core::parse_secret_ref;
///
/// assert_eq!(parse_secret_ref("session:GITHUB_TOKEN"), Some("GITHUB_TOKEN"));
/// assert_eq!(parse_secret_ref("env:GITHUB_TOKEN"), None);
/// assert_eq!(parse_secret_ref("session:"), None);
/// ```
#[must_use]
pub fn parse_secret_ref(reference: &str) -> Option<&str> {
    reference.strip_prefix(SECRET_REF_PREFIX).filter(|name| !name.is_empty())
}

/// A secret's value: what a person typed for a secret question.
///
/// It never shows itself: `Debug` and `Display` print `SecretValue(<redacted>)` and
/// `<redacted>`, and it does not implement `Serialize`. Its memory (the whole allocation, spare
/// capacity included) is overwritten with zeros when it is dropped. Read it with
/// [`expose`](Self::expose), only where the secret is used.
///
/// ```
/// use askuser_core::SecretValue;
///
/// let token = SecretValue::new("hunter2".to_owned());
/// assert_eq!(format!("{token:?} {token}"), "SecretValue(<redacted>) <redacted>");
/// assert_eq!(token.expose(), "hunter2");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(String);

impl SecretValue {
    /// Takes ownership of `value` (no copy is made).
    #[must_use]
    pub fn new(value: String) -> Self {
        Self(value)
    }

    /// The value. Keep what you do with it away from logs, events and results.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The length in bytes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the value is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<String> for SecretValue {
    fn from(value: String) -> Self {
        Self::new(value)
    }
}

impl Drop for SecretValue {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretValue(<redacted>)")
    }
}

impl fmt::Display for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// A sink that could not take a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the secret sink did not store {name:?}: {reason}")]
pub struct SecretError {
    name: String,
    reason: String,
}

impl SecretError {
    /// The sink could not store the secret named `name`, because of `reason` (never the value).
    #[must_use]
    pub fn new(name: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { name: name.into(), reason: reason.into() }
    }
}

/// Where a secret answer's value goes: the host's vault, its environment for tools, a file, or
/// memory. An answerer hands the value over *before* returning the answer, which carries only
/// `session:NAME`; a tool later resolves that reference through the same host.
///
/// The name is the question's `secret_name` (`[A-Za-z_][A-Za-z0-9_]{0,63}`); `context` says
/// whose session it belongs to.
pub trait SecretSink: Send + Sync {
    /// Stores `value` under `name` for the session in `context`, replacing an earlier value.
    ///
    /// # Errors
    ///
    /// The sink could not store it; the answerer should then fail the call rather than answer.
    fn put(&self, context: &AskContext, name: &str, value: SecretValue) -> Result<(), SecretError>;
}

/// Secrets kept in memory, per session: for tests and single-process hosts.
///
/// ```
/// use askuser_core::{AskContext, InMemorySecretSink, SecretSink, SecretValue};
///
/// # fn main() -> Result<(), askuser_core::SecretError> {
/// let sink = InMemorySecretSink::new();
/// let context = AskContext::new().with_session_id("s1");
/// sink.put(&context, "API_TOKEN", SecretValue::new("t0k3n".to_owned()))?;
/// let value = sink.resolve(Some("s1"), "session:API_TOKEN").expect("stored");
/// assert_eq!(value.expose(), "t0k3n");
/// assert!(sink.resolve(Some("s2"), "session:API_TOKEN").is_none());
/// # Ok(())
/// # }
/// ```
#[derive(Default)]
pub struct InMemorySecretSink {
    secrets: Mutex<HashMap<(Option<String>, String), SecretValue>>,
}

impl InMemorySecretSink {
    /// An empty sink.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The value a `session:NAME` reference names in `session`, if stored.
    #[must_use]
    pub fn resolve(&self, session: Option<&str>, reference: &str) -> Option<SecretValue> {
        let name = parse_secret_ref(reference)?;
        let secrets = self.secrets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        secrets.get(&(session.map(str::to_owned), name.to_owned())).cloned()
    }

    /// Forgets every secret of `session` (their values are zeroed as they drop).
    pub fn clear_session(&self, session: Option<&str>) {
        let mut secrets = self.secrets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        secrets.retain(|(s, _), _| s.as_deref() != session);
    }

    /// How many secrets are stored.
    #[must_use]
    pub fn len(&self) -> usize {
        self.secrets.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len()
    }

    /// Whether no secret is stored.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl SecretSink for InMemorySecretSink {
    fn put(&self, context: &AskContext, name: &str, value: SecretValue) -> Result<(), SecretError> {
        let mut secrets = self.secrets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        secrets.insert((context.session_id.clone(), name.to_owned()), value);
        Ok(())
    }
}

impl fmt::Debug for InMemorySecretSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secrets = self.secrets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut names: Vec<_> = secrets.keys().collect();
        names.sort();
        f.debug_struct("InMemorySecretSink").field("names", &names).finish()
    }
}

impl<T: SecretSink + ?Sized> SecretSink for std::sync::Arc<T> {
    fn put(&self, context: &AskContext, name: &str, value: SecretValue) -> Result<(), SecretError> {
        (**self).put(context, name, value)
    }
}
