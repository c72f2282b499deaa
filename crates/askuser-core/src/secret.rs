//! Secrets (extended profile): a value that never shows itself, and the reference `session:NAME`
//! the model gets instead. A leaf: where a value goes is the answerer's side
//! ([`SecretSink`](crate::SecretSink), in `answer.rs`).

use std::fmt;

use zeroize::Zeroize;

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
