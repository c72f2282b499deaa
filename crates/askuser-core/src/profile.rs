//! The leaves every other floor reads: the limits of docs/contract.md §2 and §10, the profiles, and what a
//! question asks for. Plain values, no imports from the crate.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Most questions in one call.
pub const MAX_QUESTIONS: usize = 10;
/// Fewest options a question offers.
pub const MIN_OPTIONS: usize = 2;
/// Most options a question offers.
pub const MAX_OPTIONS: usize = 6;
/// Most code points in a header, after trimming.
pub const MAX_HEADER_CHARS: usize = 25;
/// Most code points in a question text, after trimming.
pub const MAX_QUESTION_CHARS: usize = 500;
/// Most code points in an option label, after trimming.
pub const MAX_LABEL_CHARS: usize = 50;
/// Most code points in an option description, after trimming.
pub const MAX_DESCRIPTION_CHARS: usize = 200;
/// Most code points a person may type as a custom answer ("Other…", or a text question's answer),
/// on every surface that asks (contract §6 and §10: the answerer's cap).
pub const MAX_CUSTOM_CHARS: usize = 2_000;

/// Most characters in an `id` or a `secret_name`.
pub const MAX_ID_CHARS: usize = 64;
/// Most code points in a secret question's `purpose`, after trimming.
pub const MAX_PURPOSE_CHARS: usize = MAX_DESCRIPTION_CHARS;

/// Which rules a call is validated, checked and rendered by (contract §10).
///
/// [`Reference`](Self::Reference), the default, is the reference implementation's contract to the
/// letter: multiple-choice questions only, results as in contract §3.2. [`Extended`](Self::Extended)
/// is the opt-in second-seed contract: text and secret questions, ids, declared defaults,
/// `allow_other`, `timeout_seconds`, and a result the model reads as data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Profile {
    /// The reference profile (pydantic-ai-harness 0.62.0). The default.
    #[default]
    Reference,
    /// The extended profile of contract §10.
    Extended,
}

impl Profile {
    /// `reference` or `extended`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reference => "reference",
            Self::Extended => "extended",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A profile name that is neither `reference` nor `extended`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown profile {name:?} (expected reference or extended)")]
pub struct UnknownProfile {
    name: String,
}

impl std::str::FromStr for Profile {
    type Err = UnknownProfile;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "reference" => Ok(Self::Reference),
            "extended" => Ok(Self::Extended),
            _ => Err(UnknownProfile { name: s.to_owned() }),
        }
    }
}

/// What a question asks for (extended profile; every reference question is a choice).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum QuestionKind {
    /// Pick from 2–6 options (or type an answer, when `allow_other`).
    #[default]
    Choice,
    /// Type a free-text answer.
    Text,
    /// Enter a credential: the value goes to the host's secret sink, the model gets `session:NAME`.
    Secret,
}

impl QuestionKind {
    /// `choice`, `text` or `secret`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Choice => "choice",
            Self::Text => "text",
            Self::Secret => "secret",
        }
    }
}
