//! What the server keeps in the store's coordination table
//! ([`Coordination`](askuser_store::Coordination)), by namespace: notices claimed once per question
//! (`notice.asked`, `notice.reminder`, `notice.settled`), the one hand-over of a secret answer's
//! values (`notice.secrets-taken`), logged-out login sessions (`login.revoked`, lapsing when their
//! cookie would), and the write probe behind `/healthz` (`server.health`). Migration 0013 of
//! askuser-store moved earlier versions' rows here.

use askuser_core::Timestamp;
use askuser_store::Key;

/// Something done once per question, whichever of the processes sharing the store does it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Notice {
    /// The question was asked.
    #[cfg_attr(not(feature = "client"), allow(dead_code, reason = "sent by the notifier"))]
    Asked,
    /// Its deadline's nudge time came while it waited.
    #[cfg_attr(not(feature = "client"), allow(dead_code, reason = "sent by the notifier"))]
    Reminder,
    /// It left `pending` (answered, declined, expired or withdrawn).
    #[cfg_attr(not(feature = "client"), allow(dead_code, reason = "sent by the notifier"))]
    Settled,
    /// It took a late answer after it had timed out.
    #[cfg_attr(not(feature = "client"), allow(dead_code, reason = "sent by the notifier"))]
    Late,
    /// The values of its secret answers were handed to its asker: by one wait of one server of
    /// all those sharing the store, once (issue 36.5).
    SecretsTaken,
}

impl Notice {
    /// The key claimed for question `id`: tied to it, so it goes when the question is purged.
    pub(crate) fn key(self, id: &str) -> Key {
        let namespace = match self {
            Self::Asked => "notice.asked",
            Self::Reminder => "notice.reminder",
            Self::Settled => "notice.settled",
            Self::Late => "notice.late",
            Self::SecretsTaken => "notice.secrets-taken",
        };
        Key::of_question(namespace, id)
    }
}

/// Logged-out login sessions.
pub(crate) const REVOKED_LOGINS: &str = "login.revoked";

/// Login session `session`, revoked until its cookie expires at `expires_at`.
pub(crate) fn revoked_login(session: &str, expires_at: Timestamp) -> Key {
    Key::new(REVOKED_LOGINS, session).until(expires_at)
}

/// The row `/healthz` writes to learn whether the store can write.
pub(crate) fn write_probe() -> Key {
    Key::new("server.health", "write-probe")
}
