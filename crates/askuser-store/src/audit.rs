//! The audit trail: every event of a question's life — asked, posted, reminded, escalated,
//! answered or denied, declined, expired, withdrawn, late — as one line of an append-only,
//! hash-chained log kept in the store ([`AuditLog`]), which anyone can check with [`verify`]
//! (`askuser audit verify FILE`).
//!
//! Each entry is one JSON line whose last member is its hash:
//!
//! ```text
//! {"seq":2,"at":"2026-12-07T21:40:02.118Z","event":"answered","question":"q1",…,"prev":"9f2c…","hash":"41d0…"}
//! ```
//!
//! `hash` is the SHA-256 (lowercase hex) of the line's bytes without `,"hash":"…"`, that is of
//! everything before `,"hash":` followed by `}`; `prev` is the hash of the entry before (64 zeros
//! before the first); `seq` counts from 1 without a gap. Changing a byte breaks that line's hash;
//! removing or reordering lines breaks `seq` and `prev`. The store writes an event in the same
//! transaction as the change it records (SQLite, PostgreSQL), so a change is never stored without
//! its event, nor an event without its change.
//!
//! No secret value is ever in it: an answer to a secret question is logged as `"secret":true`,
//! never its value (which no store holds anyway) nor its reference.

use std::collections::HashSet;

use askuser_core::{AskUserResponse, Timestamp};
use serde::Serialize;
use sha2::{Digest as _, Sha256};

use crate::error::StoreError;
use crate::record::{PendingRecord, State};

/// The `prev` of the first entry: 64 zeros.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What happened to a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventKind {
    /// It was stored.
    Asked,
    /// A surface showed it (a chat message, a notice, an email): `surface` and `message`.
    Posted,
    /// A reminder went out.
    Reminded,
    /// It went to another surface or person after a delay.
    Escalated,
    /// Answered (an approval allowed).
    Answered,
    /// An approval denied.
    Denied,
    /// The person declined.
    Declined,
    /// Nobody answered in time.
    Expired,
    /// Its asker stopped waiting.
    Withdrawn,
    /// Answered after it timed out, within the late window.
    Late,
}

impl EventKind {
    /// The name in the log: `asked`, `posted`, `reminded`, `escalated`, `answered`, `denied`,
    /// `declined`, `expired`, `withdrawn`, `late`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Asked => "asked",
            Self::Posted => "posted",
            Self::Reminded => "reminded",
            Self::Escalated => "escalated",
            Self::Answered => "answered",
            Self::Denied => "denied",
            Self::Declined => "declined",
            Self::Expired => "expired",
            Self::Withdrawn => "withdrawn",
            Self::Late => "late",
        }
    }
}

/// Where and by whom a change was made, for its audit event: the surface (`api`, `page`,
/// `notice`, `telegram`, `slack`, `mcp`, `terminal`, …) and the person's id on it (a Telegram
/// user id, a Slack member id), when known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct Via {
    surface: Option<String>,
    person: Option<String>,
}

impl Via {
    /// On `surface`.
    pub fn surface(surface: impl Into<String>) -> Self {
        Self { surface: Some(surface.into()), person: None }
    }

    /// By the person known on the surface as `id`.
    pub fn person(mut self, id: impl Into<String>) -> Self {
        self.person = Some(id.into());
        self
    }
}

/// One answer as the log keeps it: the header, the labels picked and the text typed, or only
/// `secret: true` for a secret question's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct LoggedAnswer {
    header: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    selected: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    custom_answer: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    secret: bool,
}

/// An event to log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEvent {
    kind: EventKind,
    question: String,
    tool: Option<String>,
    session: Option<String>,
    asked_by: Option<String>,
    headers: Vec<String>,
    via: Via,
    message: Option<String>,
    answered_by: Option<String>,
    answers: Option<Vec<LoggedAnswer>>,
}

impl AuditEvent {
    fn new(kind: EventKind, question: &str) -> Self {
        Self {
            kind,
            question: question.to_owned(),
            tool: None,
            session: None,
            asked_by: None,
            headers: Vec::new(),
            via: Via::default(),
            message: None,
            answered_by: None,
            answers: None,
        }
    }

    /// The question `question` was shown on `surface` as message `message` (a chat's message
    /// id, a notice's id).
    #[must_use]
    pub fn posted(question: &str, surface: &str, message: &str) -> Self {
        Self {
            via: Via::surface(surface),
            message: Some(message.to_owned()),
            ..Self::new(EventKind::Posted, question)
        }
    }

    /// A reminder of `question` went out on `surface`.
    #[must_use]
    pub fn reminded(question: &str, surface: &str) -> Self {
        Self { via: Via::surface(surface), ..Self::new(EventKind::Reminded, question) }
    }

    /// `question` went to another surface or person (`via`).
    #[must_use]
    pub fn escalated(question: &str, via: Via) -> Self {
        Self { via, ..Self::new(EventKind::Escalated, question) }
    }

    /// What kind of event it is.
    #[must_use]
    pub fn kind(&self) -> EventKind {
        self.kind
    }

    /// The event of `record` just stored.
    pub(crate) fn asked(record: &PendingRecord) -> Self {
        Self {
            tool: Some(record.tool_name().to_owned()),
            session: record.session_id().map(str::to_owned),
            asked_by: record.asked_by().map(|a| a.as_str().to_owned()),
            headers: record.request().questions().iter().map(|q| q.header().to_owned()).collect(),
            ..Self::new(EventKind::Asked, record.id())
        }
    }

    /// The event of `record` having just left `pending` (or taken a late answer), made `via`.
    pub(crate) fn settled(record: &PendingRecord, via: &Via) -> Option<Self> {
        let kind = match record.state() {
            State::Pending => return None,
            State::Answered if record.is_approval() && denies(record.response()) => EventKind::Denied,
            State::Answered => EventKind::Answered,
            State::Declined => EventKind::Declined,
            State::TimedOut => EventKind::Expired,
            State::Cancelled => EventKind::Withdrawn,
            State::Late => EventKind::Late,
        };
        let answers = record.response().map(|response| logged_answers(record, response));
        Some(Self {
            via: via.clone(),
            answered_by: record.answered_by().map(|a| a.as_str().to_owned()),
            answers,
            ..Self::new(kind, record.id())
        })
    }
}

/// The events of `records` having just changed, made `via`.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn settled<'a>(
    records: impl IntoIterator<Item = &'a PendingRecord>,
    via: &Via,
) -> Vec<AuditEvent> {
    records.into_iter().filter_map(|r| AuditEvent::settled(r, via)).collect()
}

/// Whether an approval's response picks `Deny`.
fn denies(response: Option<&AskUserResponse>) -> bool {
    response.is_some_and(|r| r.answers.iter().any(|a| a.selected.iter().any(|s| s == "Deny")))
}

fn logged_answers(record: &PendingRecord, response: &AskUserResponse) -> Vec<LoggedAnswer> {
    let secret_headers: HashSet<&str> = record
        .request()
        .questions()
        .iter()
        .filter(|q| q.kind() == askuser_core::QuestionKind::Secret)
        .map(askuser_core::Question::header)
        .collect();
    response
        .answers
        .iter()
        .map(|answer| {
            let secret = answer.secret_ref.is_some() || secret_headers.contains(answer.header.as_str());
            LoggedAnswer {
                header: answer.header.clone(),
                selected: if secret { Vec::new() } else { answer.selected.clone() },
                custom_answer: if secret { None } else { answer.custom_answer.clone() },
                secret,
            }
        })
        .collect()
}

/// The JSON members of a line before its hash, in their order.
#[derive(Serialize)]
struct Body<'a> {
    seq: u64,
    at: String,
    event: &'static str,
    question: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    asked_by: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    headers: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    surface: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    person: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    answered_by: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    answers: Option<&'a [LoggedAnswer]>,
    prev: &'a str,
}

/// One entry of the log, as stored and exported.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditEntry {
    /// Its place in the log, from 1.
    pub seq: u64,
    /// When it was appended, on the store's clock.
    pub at: Timestamp,
    /// The line, hash included, without a newline.
    pub line: String,
    /// Its hash (the next entry's `prev`).
    pub hash: String,
}

/// The separator before a line's hash.
const HASH_MEMBER: &str = ",\"hash\":\"";

/// The entry `event` makes at `seq`, appended at `at` after the entry whose hash is `prev`.
pub(crate) fn chain(seq: u64, at: Timestamp, prev: &str, event: &AuditEvent) -> AuditEntry {
    let body = Body {
        seq,
        at: at.to_string(),
        event: event.kind.as_str(),
        question: &event.question,
        tool: event.tool.as_deref(),
        session: event.session.as_deref(),
        asked_by: event.asked_by.as_deref(),
        headers: &event.headers,
        surface: event.via.surface.as_deref(),
        person: event.via.person.as_deref(),
        message: event.message.as_deref(),
        answered_by: event.answered_by.as_deref(),
        answers: event.answers.as_deref(),
        prev,
    };
    // Serialising plain strings and numbers cannot fail.
    let body = serde_json::to_string(&body).unwrap_or_default();
    let hash = hex(&Sha256::digest(body.as_bytes()));
    let line = format!("{}{HASH_MEMBER}{hash}\"}}", &body[..body.len() - 1]);
    AuditEntry { seq, at, line, hash }
}

/// The entries `events` make at `now`, after the last entry `last` (`(seq, hash)`; `None`: the
/// log is empty), as both SQL backends append them.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn chained(last: Option<(i64, String)>, events: &[AuditEvent], now: Timestamp) -> Vec<AuditEntry> {
    let (mut seq, mut prev) = last.map_or((0, GENESIS.to_owned()), |(seq, hash)| (seq.unsigned_abs(), hash));
    events
        .iter()
        .map(|event| {
            seq += 1;
            let entry = chain(seq, now, &prev, event);
            prev.clone_from(&entry.hash);
            entry
        })
        .collect()
}

/// Entries as both SQL backends read them back: `(seq, at, line, hash)`.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn entries(rows: Vec<(i64, i64, String, String)>) -> Vec<AuditEntry> {
    rows.into_iter()
        .map(|(seq, at, line, hash)| AuditEntry {
            seq: seq.unsigned_abs(),
            at: Timestamp::from_unix_millis(at),
            line,
            hash,
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// The log: [`PendingStore`](crate::PendingStore)'s changes append their events themselves; the
/// layers above append what the store cannot see (a message posted, a reminder, an escalation).
#[async_trait::async_trait]
pub trait AuditLog: Send + Sync {
    /// Appends `event` after the last entry; the entry written.
    ///
    /// # Errors
    ///
    /// A database error (nothing appended).
    async fn append_audit(&self, event: &AuditEvent) -> Result<AuditEntry, StoreError>;

    /// Up to `limit` entries after `after` (a `seq`; 0 for the first), appended at or after
    /// `since` when given, in order.
    ///
    /// # Errors
    ///
    /// A database error.
    async fn audit_entries(
        &self,
        after: u64,
        since: Option<Timestamp>,
        limit: usize,
    ) -> Result<Vec<AuditEntry>, StoreError>;
}

/// A log that checked out: how many entries, and the `seq` of the first and last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verified {
    /// How many entries.
    pub events: u64,
    /// The first entry's `seq` (1 for a whole log; more for an export `--since`).
    pub first: u64,
    /// The last entry's `seq`.
    pub last: u64,
}

/// Where a log stops checking out: the line (from 1) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
#[non_exhaustive]
pub struct Broken {
    /// The first line that was changed, removed (the line after the gap) or reordered.
    pub line: usize,
    /// What is wrong, in words.
    pub reason: String,
}

/// A line's `seq` and `prev`, once its hash checks out; else why not.
fn read_line(line: &str) -> Result<(u64, String, String), String> {
    let changed = |why: &str| format!("was changed ({why})");
    let at = line.rfind(HASH_MEMBER).ok_or_else(|| changed("no hash"))?;
    let hash =
        line[at + HASH_MEMBER.len()..].strip_suffix("\"}").ok_or_else(|| changed("no hash at its end"))?;
    let body = format!("{}}}", &line[..at]);
    if hex(&Sha256::digest(body.as_bytes())) != hash {
        return Err(changed("its hash does not match its content"));
    }
    let value: serde_json::Value = serde_json::from_str(&body).map_err(|_| changed("not JSON"))?;
    let seq = value["seq"].as_u64().ok_or_else(|| changed("no seq"))?;
    let prev = value["prev"].as_str().ok_or_else(|| changed("no prev"))?.to_owned();
    Ok((seq, prev, hash.to_owned()))
}

/// Checks an exported log (JSON lines; blank lines are ignored): every line's hash, and that
/// each follows the one before (`seq` one more, `prev` its hash). A whole log starts at seq 1;
/// with `partial` (an export `--since`) it may start later, and its first line's `prev` is taken
/// as given. Lines removed from the end leave a shorter log that checks out: compare its last
/// hash with an earlier copy's, or with the store's.
///
/// # Errors
///
/// The first line that was changed, removed or reordered ([`Broken`]); an empty log.
pub fn verify(text: &str, partial: bool) -> Result<Verified, Broken> {
    let lines: Vec<(usize, &str)> =
        text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim().is_empty()).collect();
    // Every seq a line claims, read leniently (without checking hashes): a seq missing at one
    // place but found later means lines were reordered, not removed.
    let claimed: HashSet<u64> = lines
        .iter()
        .filter_map(|(_, l)| serde_json::from_str::<serde_json::Value>(l).ok()?["seq"].as_u64())
        .collect();
    let mut last: Option<(u64, String)> = None;
    let mut first = 0;
    for &(number, line) in &lines {
        let broken = |reason: String| Broken { line: number, reason };
        let (seq, prev, hash) = read_line(line).map_err(broken)?;
        match &last {
            None if seq == 1 && prev != GENESIS => {
                return Err(broken("was changed (the first entry's prev is not the genesis)".to_owned()));
            }
            None if seq != 1 && !partial => {
                let reason = if claimed.contains(&1) {
                    format!("is out of order (seq {seq} first): lines were reordered")
                } else {
                    format!(
                        "starts at seq {seq}: the lines of seq 1 to {} were removed (an export --since: check it with --partial)",
                        seq - 1
                    )
                };
                return Err(broken(reason));
            }
            None => first = seq,
            Some((last_seq, last_hash)) => {
                let expected = last_seq + 1;
                if seq != expected {
                    let reason = if seq < expected || claimed.contains(&expected) {
                        format!("is out of order (seq {seq} after {last_seq}): lines were reordered")
                    } else {
                        format!(
                            "follows a gap (seq {seq} after {last_seq}): the line of seq {expected} was removed"
                        )
                    };
                    return Err(broken(reason));
                }
                if prev != *last_hash {
                    return Err(broken("does not chain to the line before it (its prev differs)".to_owned()));
                }
            }
        }
        last = Some((seq, hash));
    }
    let Some((last, _)) = last else {
        return Err(Broken { line: 1, reason: "the log is empty".to_owned() });
    };
    Ok(Verified { events: last - first + 1, first, last })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(n: u64) -> Vec<String> {
        let mut prev = GENESIS.to_owned();
        (1..=n)
            .map(|seq| {
                let mut event = AuditEvent::posted(&format!("q{seq}"), "telegram", "42");
                event.via = Via::surface("telegram").person("7");
                let entry = chain(seq, Timestamp::from_unix_millis(1_796_000_000_000), &prev, &event);
                prev = entry.hash;
                entry.line
            })
            .collect()
    }

    #[test]
    fn a_whole_log_verifies_and_its_hash_is_last() {
        let lines = log(3);
        assert!(
            lines[0].starts_with(r#"{"seq":1,"at":"2026-11-30T00:53:20.000Z","event":"posted""#),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains(r#""event":"posted","question":"q1","surface":"telegram","person":"7","message":"42","prev":"0000"#));
        assert_eq!(verify(&lines.join("\n"), false), Ok(Verified { events: 3, first: 1, last: 3 }));
    }

    #[test]
    fn a_changed_byte_a_removed_line_and_a_swap_are_each_named() {
        let lines = log(4);
        let mut changed = lines.clone();
        changed[2] = changed[2].replace("q3", "q9");
        let error = verify(&changed.join("\n"), false).unwrap_err();
        assert_eq!(error.line, 3, "{error}");
        assert!(error.reason.contains("changed"), "{error}");

        let mut removed = lines.clone();
        removed.remove(1);
        let error = verify(&removed.join("\n"), false).unwrap_err();
        assert_eq!(error.line, 2, "{error}");
        assert!(error.reason.contains("seq 2 was removed"), "{error}");

        let mut swapped = lines.clone();
        swapped.swap(1, 2);
        let error = verify(&swapped.join("\n"), false).unwrap_err();
        assert_eq!(error.line, 2, "{error}");
        assert!(error.reason.contains("reordered"), "{error}");

        // A line removed at the end leaves a shorter, valid log: `verify` says how many.
        assert_eq!(verify(&lines[..3].join("\n"), false).unwrap().events, 3);
        // The first line removed, or swapped with the second.
        let error = verify(&lines[1..].join("\n"), false).unwrap_err();
        assert_eq!(error.line, 1, "{error}");
        assert!(error.reason.contains("seq 1 to 1 were removed"), "{error}");
        let mut first_swapped = lines.clone();
        first_swapped.swap(0, 1);
        let error = verify(&first_swapped.join("\n"), false).unwrap_err();
        assert_eq!(error.line, 1, "{error}");
        assert!(error.reason.contains("reordered"), "{error}");
        // From the middle (an export --since): checked from its first line.
        assert_eq!(verify(&lines[1..].join("\n"), true), Ok(Verified { events: 3, first: 2, last: 4 }));
        assert_eq!(verify("\n", false).unwrap_err().reason, "the log is empty");
    }
}
