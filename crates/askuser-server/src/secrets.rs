//! Secret answers (extended profile): where a secret's value waits between the person who typed
//! it and the asker who takes it, and how it crosses to another replica.
//!
//! The value is never written to the store (the record holds only `session:NAME`), never logged,
//! never put in an event. The replica that takes the answer holds the value in memory
//! ([`SecretBox`]) and, in a fleet, sends it to the other replicas sealed (ChaCha20-Poly1305
//! under a key derived from the API token) in a `NOTIFY` payload, which PostgreSQL does not
//! store. The first wait that sees the answered question takes the value; the other replicas
//! are told to forget their copy. A value nobody takes is forgotten after [`HOLD`]. Values are
//! zeroed when dropped ([`SecretValue`]).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use askuser_core::{AskUserRequest, AskUserResponse, QuestionKind, SecretValue, parse_secret_ref};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use tokio::sync::Notify;
use tokio::time::Instant;
use zeroize::Zeroizing;

/// How long a secret's value waits for its asker before it is forgotten: ten minutes.
pub const HOLD: Duration = Duration::from_mins(10);

/// The longest secret value accepted, in bytes (it must fit a PostgreSQL `NOTIFY`, sealed).
pub const MAX_SECRET_BYTES: usize = 4096;

/// How long a wait that finds a secret answer waits for the value to reach this replica.
pub(crate) const ARRIVAL: Duration = Duration::from_secs(5);

/// One secret: the question's `secret_name` and the value.
pub(crate) type Secret = (String, SecretValue);

/// Checks the values sent with `response` against `request`: exactly one value per secret answer,
/// named by its `secret_ref`, each non-empty, at most [`MAX_SECRET_BYTES`], one line without
/// control characters (it ends up in `NAME=value` lines). Returns what to tell the sender.
pub(crate) fn check_values(
    request: &AskUserRequest,
    response: &AskUserResponse,
    secrets: &[Secret],
) -> Result<(), String> {
    let mut wanted: Vec<&str> = Vec::new();
    if !response.cancelled {
        for answer in &response.answers {
            let Some(question) = request.questions().iter().find(|q| q.header() == answer.header) else {
                continue;
            };
            if question.kind() == QuestionKind::Secret
                && let Some(name) = answer.secret_ref.as_deref().and_then(parse_secret_ref)
            {
                wanted.push(name);
            }
        }
    }
    for (name, value) in secrets {
        if !wanted.contains(&name.as_str()) {
            return Err(format!("a secret value for {name:?}, which no secret answer names"));
        }
        if value.expose().trim().is_empty() {
            return Err(format!("the secret {name:?} is empty"));
        }
        if value.len() > MAX_SECRET_BYTES {
            return Err(format!("the secret {name:?} is longer than {MAX_SECRET_BYTES} bytes"));
        }
        if value.expose().chars().any(char::is_control) {
            return Err(format!("the secret {name:?} has control characters (it must be one line)"));
        }
    }
    for name in wanted {
        if !secrets.iter().any(|(n, _)| n == name) {
            return Err(format!(
                "the secret answer session:{name} came without its value (send it in `secret_values`)"
            ));
        }
    }
    Ok(())
}

/// The secret names a response's answers refer to.
pub(crate) fn referenced(response: &AskUserResponse) -> Vec<&str> {
    response.answers.iter().filter_map(|a| a.secret_ref.as_deref().and_then(parse_secret_ref)).collect()
}

struct Held {
    secrets: Vec<Secret>,
    until: Instant,
}

/// Secret values held in memory until their asker takes them, by question id.
#[derive(Default)]
pub(crate) struct SecretBox {
    held: Mutex<Inner>,
    arrived: Notify,
}

#[derive(Default)]
struct Inner {
    held: HashMap<String, Held>,
    /// Questions whose values were taken (here or on another replica), until when to remember it:
    /// a later wait returns at once instead of waiting for values that will not come.
    taken: HashMap<String, Instant>,
}

impl Inner {
    fn purge(&mut self, now: Instant) {
        self.held.retain(|_, h| h.until > now);
        self.taken.retain(|_, until| *until > now);
    }
}

impl std::fmt::Debug for SecretBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretBox").field("questions", &self.held().held.len()).finish()
    }
}

impl SecretBox {
    fn held(&self) -> MutexGuard<'_, Inner> {
        // Every operation is one map call: a panic cannot leave it half-changed.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Holds `secrets` for question `id` until taken or for [`HOLD`].
    pub(crate) fn put(&self, id: &str, secrets: Vec<Secret>) {
        let now = Instant::now();
        let mut inner = self.held();
        inner.purge(now);
        if inner.taken.contains_key(id) {
            // Already taken elsewhere (the notice overtook the values): drop them.
            return;
        }
        inner.held.insert(id.to_owned(), Held { secrets, until: now + HOLD });
        drop(inner);
        self.arrived.notify_waiters();
    }

    /// Takes the values held for `id`: nobody gets them again from this replica. `Err` when they
    /// were taken before.
    fn take(&self, id: &str) -> Result<Option<Vec<Secret>>, ()> {
        let now = Instant::now();
        let mut inner = self.held();
        if inner.taken.contains_key(id) {
            return Err(());
        }
        let held = inner.held.remove(id).filter(|h| h.until > now).map(|h| h.secrets);
        if held.is_some() {
            inner.taken.insert(id.to_owned(), now + HOLD);
        }
        Ok(held)
    }

    /// Takes the values for `id`, waiting up to `within` for them to arrive (not when they were
    /// taken before).
    pub(crate) async fn take_within(&self, id: &str, within: Duration) -> Option<Vec<Secret>> {
        let deadline = Instant::now() + within;
        loop {
            let arrived = self.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            match self.take(id) {
                Ok(Some(secrets)) => return Some(secrets),
                Ok(None) => {}
                Err(()) => return None,
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return None;
            }
        }
    }

    /// Forgets the values for `id` (another replica's asker took them).
    pub(crate) fn forget(&self, id: &str) {
        let mut inner = self.held();
        inner.held.remove(id);
        inner.taken.insert(id.to_owned(), Instant::now() + HOLD);
        drop(inner);
        self.arrived.notify_waiters();
    }

    /// Forgets values held past [`HOLD`].
    pub(crate) fn purge(&self) {
        self.held().purge(Instant::now());
    }
}

/// Seals secrets for the other replicas: ChaCha20-Poly1305 under a key derived from the API
/// token, a random nonce per message, the question id as associated data.
pub(crate) struct Sealer {
    key: LessSafeKey,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer(***)")
    }
}

impl Sealer {
    pub(crate) fn new(key: &[u8; 32]) -> Self {
        let key = UnboundKey::new(&CHACHA20_POLY1305, key).expect("a 32-byte key fits ChaCha20-Poly1305");
        Self { key: LessSafeKey::new(key) }
    }

    /// `secrets` sealed for question `id` until [`HOLD`] from now: base64 of nonce, ciphertext
    /// and tag.
    pub(crate) fn seal(&self, id: &str, secrets: &[Secret]) -> Option<String> {
        let hold = i64::try_from(HOLD.as_millis()).unwrap_or(i64::MAX);
        self.seal_until(id, secrets, askuser_core::Timestamp::now().unix_millis().saturating_add(hold))
    }

    /// `secrets` sealed for question `id`, opening until `until` (Unix milliseconds): a copy
    /// replayed later does not open (issue 36.5).
    pub(crate) fn seal_until(&self, id: &str, secrets: &[Secret], until: i64) -> Option<String> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).ok()?;
        // UNTIL \0 NAME \0 VALUE \0 … (names and values hold no NUL: names are [A-Za-z0-9_],
        // values have no control characters).
        let mut plain = Zeroizing::new(until.to_string().into_bytes());
        plain.push(0);
        for (name, value) in secrets {
            plain.extend_from_slice(name.as_bytes());
            plain.push(0);
            plain.extend_from_slice(value.expose().as_bytes());
            plain.push(0);
        }
        let aad = aad(id);
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(&aad), &mut *plain)
            .ok()?;
        let mut message = nonce.to_vec();
        message.extend_from_slice(&plain);
        Some(BASE64.encode(message))
    }

    /// The secrets sealed in `text` for question `id`, or `None` when it was not sealed by a
    /// replica with this token for this question, or its time is up.
    pub(crate) fn open(&self, id: &str, text: &str) -> Option<Vec<Secret>> {
        let message = Zeroizing::new(BASE64.decode(text).ok()?);
        let (nonce, sealed) = message.split_at_checked(NONCE_LEN)?;
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut buffer = Zeroizing::new(sealed.to_vec());
        let plain = self.key.open_in_place(nonce, Aad::from(&aad(id)), &mut buffer).ok()?;
        let mut parts = plain.split(|b| *b == 0);
        let until: i64 = std::str::from_utf8(parts.next()?).ok()?.parse().ok()?;
        if askuser_core::Timestamp::now().unix_millis() >= until {
            return None;
        }
        let mut secrets = Vec::new();
        while let (Some(name), Some(value)) = (parts.next(), parts.next()) {
            if name.is_empty() {
                break;
            }
            let name = String::from_utf8(name.to_vec()).ok()?;
            let value = String::from_utf8(value.to_vec()).ok()?;
            secrets.push((name, SecretValue::new(value)));
        }
        Some(secrets)
    }
}

/// What an envelope for question `id` is sealed with: a version, so that a replica of an older
/// version (which read no expiry) refuses it instead of misreading it, and the id.
fn aad(id: &str) -> Vec<u8> {
    let mut aad = b"askuser secrets v2\0".to_vec();
    aad.extend_from_slice(id.as_bytes());
    aad
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(name: &str, value: &str) -> Secret {
        (name.to_owned(), SecretValue::new(value.to_owned()))
    }

    #[test]
    fn sealed_secrets_open_only_with_the_key_and_the_id() {
        let sealer = Sealer::new(&[7; 32]);
        let text = sealer.seal("q1", &[secret("API_TOKEN", "hunter2 ✓")]).unwrap();
        assert!(!text.contains("hunter2"));
        let opened = sealer.open("q1", &text).unwrap();
        assert_eq!(opened.len(), 1);
        assert_eq!((opened[0].0.as_str(), opened[0].1.expose()), ("API_TOKEN", "hunter2 ✓"));
        assert!(sealer.open("q2", &text).is_none(), "bound to the question");
        assert!(Sealer::new(&[8; 32]).open("q1", &text).is_none(), "bound to the key");
        let mut tampered = BASE64.decode(&text).unwrap();
        let last = tampered.len() - 1;
        tampered[last] ^= 1;
        assert!(sealer.open("q1", &BASE64.encode(tampered)).is_none(), "authenticated");
        // Sealed with an expiry: a copy replayed after it does not open (issue 36.5).
        let now = askuser_core::Timestamp::now().unix_millis();
        let expired = sealer.seal_until("q1", &[secret("API_TOKEN", "hunter2 ✓")], now - 1).unwrap();
        assert!(sealer.open("q1", &expired).is_none(), "expired");
        let fresh = sealer.seal_until("q1", &[secret("API_TOKEN", "hunter2 ✓")], now + 60_000).unwrap();
        assert_eq!(sealer.open("q1", &fresh).unwrap()[0].1.expose(), "hunter2 ✓");
        // Two seals of one value differ (a fresh nonce each).
        assert_ne!(text, sealer.seal("q1", &[secret("API_TOKEN", "hunter2 ✓")]).unwrap());
    }

    #[tokio::test]
    async fn a_held_secret_is_taken_once() {
        let held = SecretBox::default();
        held.put("q1", vec![secret("K", "v")]);
        assert!(held.take("q2").unwrap().is_none());
        assert_eq!(held.take("q1").unwrap().unwrap()[0].1.expose(), "v");
        assert!(held.take("q1").is_err(), "taken before");
        held.put("q1", vec![secret("K", "v")]);
        assert!(held.take("q1").is_err(), "values of a taken question are not held again");
        held.put("q3", vec![secret("K", "v")]);
        held.forget("q3");
        assert!(held.take("q3").is_err());
        // A wait for values taken before returns at once.
        let started = Instant::now();
        assert!(held.take_within("q1", Duration::from_secs(5)).await.is_none());
        assert!(started.elapsed() < Duration::from_secs(1));
        assert_eq!(format!("{held:?}"), "SecretBox { questions: 0 }");
    }

    #[tokio::test]
    async fn a_wait_takes_a_secret_that_arrives_later() {
        let held = std::sync::Arc::new(SecretBox::default());
        let later = std::sync::Arc::clone(&held);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            later.put("q1", vec![secret("K", "v")]);
        });
        assert_eq!(held.take_within("q1", Duration::from_secs(5)).await.unwrap()[0].1.expose(), "v");
        assert!(held.take_within("q1", Duration::from_millis(20)).await.is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn unclaimed_secrets_are_forgotten() {
        let held = SecretBox::default();
        held.put("q1", vec![secret("K", "v")]);
        tokio::time::advance(HOLD + Duration::from_secs(1)).await;
        held.purge();
        assert!(held.take("q1").unwrap().is_none());
    }
}
