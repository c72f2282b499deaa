//! Login sessions that were logged out: a login cookie names its session, and a logout puts the
//! session here until the cookie would have expired anyway, so the cookie opens nothing after it.
//!
//! Held in memory by the replica that took the logout: another replica sharing the token still
//! accepts the cookie, and a restart forgets the list (see `docs/server.md`, "Login").

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// Revoked login sessions and when their cookies expire (Unix seconds).
#[derive(Debug, Default)]
pub(crate) struct Revoked {
    sessions: Mutex<HashMap<String, i64>>,
}

impl Revoked {
    /// Revokes `session`, whose cookie expires at `expires`; forgets sessions expired at `now`.
    pub(crate) fn revoke(&self, session: &str, expires: i64, now: i64) {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        sessions.retain(|_, at| *at > now);
        sessions.insert(session.to_owned(), expires);
    }

    pub(crate) fn is_revoked(&self, session: &str) -> bool {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner).contains_key(session)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn revoked_sessions_are_kept_until_their_cookies_expire() {
        let revoked = super::Revoked::default();
        revoked.revoke("a", 100, 0);
        assert!(revoked.is_revoked("a") && !revoked.is_revoked("b"));
        revoked.revoke("b", 300, 100);
        assert!(!revoked.is_revoked("a"), "expired at 100: forgotten");
        assert!(revoked.is_revoked("b"));
    }
}
