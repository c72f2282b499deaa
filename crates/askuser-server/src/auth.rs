//! Access: the keys derived from the API token (askuser-client's [`ApiToken`]) for page links,
//! login cookies and CSRF tokens. Every comparison of a secret is constant-time.
//!
//! Everything a replica checks is derived from the one API token, so a link or a cookie made by
//! one replica is accepted by every replica that shares the token, with no state between them.

use std::fmt;

use askuser_client::{ApiToken, TokenError};
use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::Sha256;
use subtle::ConstantTimeEq as _;

/// The keys derived from the API token, and what they sign.
#[derive(Clone)]
pub(crate) struct Keys {
    token: ApiToken,
    /// Signs page links (batch tokens), login cookies and CSRF tokens.
    signing: [u8; 32],
}

impl fmt::Debug for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Keys(***)")
    }
}

/// How long a login cookie stays valid: 30 days.
pub(crate) const LOGIN_SECS: i64 = 30 * 24 * 3600;

impl Keys {
    pub(crate) fn new(token: ApiToken) -> Self {
        let signing = mac(token.expose().as_bytes(), &[b"askuser signing key v1"]);
        Self { token, signing }
    }

    pub(crate) fn token(&self) -> &ApiToken {
        &self.token
    }

    /// The batch token of question `id`: 128 bits, hex.
    pub(crate) fn batch_token(&self, id: &str) -> String {
        hex(&mac(&self.signing, &[b"batch", id.as_bytes()])[..16])
    }

    pub(crate) fn check_batch_token(&self, id: &str, candidate: &str) -> bool {
        self.batch_token(id).as_bytes().ct_eq(candidate.as_bytes()).into()
    }

    /// A login cookie's value for login session `session`, valid until `expires` (Unix
    /// seconds): `EXPIRES.SESSION.SIGNATURE`. The session id lets a logout revoke it.
    pub(crate) fn login_cookie(&self, expires: i64, session: &str) -> String {
        let expires = expires.to_string();
        let signature = hex(&mac(&self.signing, &[b"login v2", expires.as_bytes(), session.as_bytes()]));
        format!("{expires}.{session}.{signature}")
    }

    /// The login session and expiry (Unix secs) of `value` when it is a login cookie of this
    /// server that has not expired at `now`. Whether it was revoked is the caller's to check.
    pub(crate) fn check_login_cookie<'a>(&self, value: &'a str, now: i64) -> Option<(&'a str, i64)> {
        let mut parts = value.splitn(3, '.');
        let (expires, session) = (parts.next()?, parts.next()?);
        parts.next()?;
        let at = expires.parse::<i64>().ok()?;
        let good: bool = self.login_cookie(at, session).as_bytes().ct_eq(value.as_bytes()).into();
        (good && at > now).then_some((session, at))
    }

    /// The CSRF token for a form about question `id`, bound to the credential that opened it
    /// (the batch token or the login cookie).
    pub(crate) fn csrf(&self, id: &str, credential: &str) -> String {
        hex(&mac(&self.signing, &[b"csrf", id.as_bytes(), b"\0", credential.as_bytes()])[..16])
    }

    pub(crate) fn check_csrf(&self, id: &str, credential: &str, candidate: &str) -> bool {
        self.csrf(id, credential).as_bytes().ct_eq(candidate.as_bytes()).into()
    }

    /// The key that seals secret values sent to the other replicas.
    pub(crate) fn seal_key(&self) -> [u8; 32] {
        mac(&self.signing, &[b"seal secrets v1"])
    }

    /// The `LISTEN`/`NOTIFY` channel replicas sharing this token talk on: `askuser_fleet_` and
    /// 64 bits of a MAC, so that servers with other tokens on the same database do not hear them.
    pub(crate) fn fleet_channel(&self) -> String {
        format!("askuser_fleet_{}", hex(&mac(&self.signing, &[b"fleet channel"])[..8]))
    }
}

fn mac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    for part in parts {
        mac.update(&(part.len() as u64).to_be_bytes());
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

/// A fresh login session id: 128 random bits, hex.
pub(crate) fn new_login_session() -> Result<String, TokenError> {
    askuser_client::random_hex::<16>()
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Keys {
        Keys::new(ApiToken::new("0123456789abcdef0123").unwrap())
    }

    #[test]
    fn batch_tokens_are_128_bits_and_bound_to_the_id() {
        let keys = keys();
        let token = keys.batch_token("call_1");
        assert_eq!(token.len(), 32);
        assert!(keys.check_batch_token("call_1", &token));
        assert!(!keys.check_batch_token("call_2", &token));
        assert!(!keys.check_batch_token("call_1", &token[..31]));
        let other = Keys::new(ApiToken::new("another-token-of-enough-length").unwrap());
        assert!(!other.check_batch_token("call_1", &token));
    }

    #[test]
    fn login_cookies_expire_and_cannot_be_forged() {
        let keys = keys();
        let cookie = keys.login_cookie(1_000, "s1");
        assert_eq!(keys.check_login_cookie(&cookie, 999), Some(("s1", 1_000)));
        assert_eq!(keys.check_login_cookie(&cookie, 1_000), None);
        let forged = cookie.replacen("1000", "9999", 1);
        assert_eq!(keys.check_login_cookie(&forged, 999), None);
        let other_session = cookie.replacen(".s1.", ".s2.", 1);
        assert_eq!(keys.check_login_cookie(&other_session, 999), None);
        assert_eq!(keys.check_login_cookie("garbage", 0), None);
        assert_eq!(keys.check_login_cookie("1000.s1", 0), None);
    }

    #[test]
    fn csrf_tokens_are_bound_to_question_and_credential() {
        let keys = keys();
        let csrf = keys.csrf("q", "cred");
        assert!(keys.check_csrf("q", "cred", &csrf));
        assert!(!keys.check_csrf("q", "other", &csrf));
        assert!(!keys.check_csrf("r", "cred", &csrf));
    }
}
