//! [`Coordination`]: what the processes sharing a store agree on besides questions — who holds a
//! name, what was done once, and a few small values — in one table of namespaced keys. The store
//! names no surface: each layer above keeps its rows here under namespaces of its own
//! (docs/store.md lists them).

use std::fmt;
use std::time::Duration;

use askuser_core::Timestamp;

use crate::error::StoreError;

/// The namespace [`Coordination::lease`] keeps its rows in (`holder` as the value).
pub(crate) const LEASES: &str = "lease";

/// A row of the coordination table: a key in a namespace, the question it goes with (if any), and
/// when it lapses (if ever).
///
/// A row tied to a question is deleted with it when retention purges the question, and is not
/// written when the store has no such question. A lapsed row reads as absent and can be claimed
/// again.
///
/// ```
/// use askuser_core::Timestamp;
/// use askuser_store::Key;
///
/// let sent = Key::of_question("mail.sent", "call_1");
/// assert_eq!((sent.namespace(), sent.key(), sent.question_id()), ("mail.sent", "call_1", Some("call_1")));
/// let ban = Key::new("session.closed", "s-42").until(Timestamp::from_unix_millis(1_000));
/// assert_eq!(ban.expires_at(), Some(Timestamp::from_unix_millis(1_000)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) question_id: Option<String>,
    pub(crate) expires_at: Option<Timestamp>,
}

impl Key {
    /// `key` in `namespace`, tied to no question, never lapsing.
    #[must_use]
    pub fn new(namespace: impl Into<String>, key: impl Into<String>) -> Self {
        Self { namespace: namespace.into(), name: key.into(), question_id: None, expires_at: None }
    }

    /// The key `question_id` in `namespace`, tied to that question: it goes when the question is
    /// purged.
    #[must_use]
    pub fn of_question(namespace: impl Into<String>, question_id: impl Into<String>) -> Self {
        let id = question_id.into();
        Self { namespace: namespace.into(), name: id.clone(), question_id: Some(id), expires_at: None }
    }

    /// Tied to question `question_id` (whatever the key).
    #[must_use]
    pub fn question(mut self, question_id: impl Into<String>) -> Self {
        self.question_id = Some(question_id.into());
        self
    }

    /// Lapsing at `expires_at` on the store's clock: from then on it reads as absent.
    #[must_use]
    pub fn until(mut self, expires_at: Timestamp) -> Self {
        self.expires_at = Some(expires_at);
        self
    }

    /// The namespace.
    #[must_use]
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The key within the namespace.
    #[must_use]
    pub fn key(&self) -> &str {
        &self.name
    }

    /// The question the row goes with, if any.
    #[must_use]
    pub fn question_id(&self) -> Option<&str> {
        self.question_id.as_deref()
    }

    /// When the row lapses, if ever.
    #[must_use]
    pub fn expires_at(&self) -> Option<Timestamp> {
        self.expires_at
    }
}

/// Coordination between the processes sharing a store: a lease on a name, claim-once on a key,
/// and a small namespaced key-value table. Every method is one atomic statement, so of several
/// processes racing exactly one wins; times are the store's clock.
///
/// The built-in stores implement it beside [`PendingStore`](crate::PendingStore), in the same database
/// (`askuser_coordination`). A host whose own store implements only `PendingStore` needs it only
/// to run what coordinates replicas through it, such as an answer server
/// ([`SharedStore`](crate::SharedStore)).
#[async_trait::async_trait]
pub trait Coordination: Send + Sync + fmt::Debug {
    /// Takes or renews `holder`'s lease on `name` for `ttl` from now: `true` when `holder` holds
    /// it now (it was free, lapsed, or already `holder`'s), `false` while another holder's lease
    /// runs. A `ttl` of zero lets go.
    ///
    /// # Errors
    ///
    /// A database error.
    async fn lease(&self, name: &str, holder: &str, ttl: Duration) -> Result<bool, StoreError>;

    /// Claims `key`, once for every process sharing the store: `true` for the one caller that
    /// claimed it, `false` when it was claimed before (and has not lapsed) or is tied to a
    /// question the store does not have.
    ///
    /// # Errors
    ///
    /// A database error.
    async fn claim_once(&self, key: &Key) -> Result<bool, StoreError>;

    /// The value under `key` in `namespace`, unless it is missing or lapsed.
    ///
    /// # Errors
    ///
    /// A database error.
    async fn value(&self, namespace: &str, key: &str) -> Result<Option<String>, StoreError>;

    /// Sets (or replaces) the value under `key`, with its question and lapse. When the row lapses
    /// itself, rows of its namespace that have lapsed are deleted on the way (a namespace of rows
    /// that never lapse costs no such delete); a row tied to a question the store does not have is
    /// not written.
    ///
    /// # Errors
    ///
    /// A database error.
    async fn set_value(&self, key: &Key, value: &str) -> Result<(), StoreError>;

    /// Deletes the row under `key` in `namespace`; deleting a missing one changes nothing.
    ///
    /// # Errors
    ///
    /// A database error.
    async fn remove_value(&self, namespace: &str, key: &str) -> Result<(), StoreError>;

    /// Every key and value in `namespace` that has not lapsed, by key.
    ///
    /// # Errors
    ///
    /// A database error.
    async fn values(&self, namespace: &str) -> Result<Vec<(String, String)>, StoreError>;
}
