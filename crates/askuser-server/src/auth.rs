//! Access: the API token, the token file, and the keys derived from the token for page links,
//! login cookies and CSRF tokens. Every comparison of a secret is constant-time.
//!
//! Everything a replica checks is derived from the one API token, so a link or a cookie made by
//! one replica is accepted by every replica that shares the token, with no state between them.

use std::fmt;
use std::io::Write as _;
use std::path::Path;

use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::Sha256;
use subtle::ConstantTimeEq as _;

/// The environment variable that holds the API token, read by `serve` and `ask --server` when no
/// `--token-file` is given.
pub const TOKEN_ENV: &str = "ASKUSER_TOKEN";

/// The shortest API token accepted, in characters (a generated one has 64).
pub const MIN_TOKEN_CHARS: usize = 16;

/// The API token: a secret shared by the server and its clients. Never shown by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiToken(String);

impl fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiToken(***)")
    }
}

/// A token that cannot be used, or a token file that cannot be read or created.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// Shorter than [`MIN_TOKEN_CHARS`], or with whitespace or control characters inside.
    #[error("the API token must be at least {MIN_TOKEN_CHARS} printable characters without spaces")]
    Weak,
    /// The token file could not be read or written.
    #[error("token file {path}: {source}")]
    File {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The token file is a link, not a regular file, owned by another user, or readable or
    /// writable by other users: refused, since the token in it may be known or planted.
    #[error("token file {path}: {reason}")]
    Unsafe {
        /// The file.
        path: String,
        /// What is wrong, and what to do.
        reason: String,
    },
    /// The operating system's random source failed.
    #[error("no randomness available for a new token")]
    Random,
    /// A client found no token: no file named, no [`TOKEN_ENV`], no default token file.
    #[error("no API token: pass --token-file PATH (the file askuser serve printed) or set {TOKEN_ENV}")]
    Missing,
    /// [`TOKEN_ENV`] is set but not a usable token.
    #[error("{TOKEN_ENV}: {0}")]
    Env(&'static str),
}

impl ApiToken {
    /// A token from its text (surrounding whitespace removed).
    ///
    /// # Errors
    ///
    /// [`TokenError::Weak`] when it is too short or has inner whitespace or control characters.
    pub fn new(text: &str) -> Result<Self, TokenError> {
        let text = text.trim();
        if text.chars().count() < MIN_TOKEN_CHARS || text.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(TokenError::Weak);
        }
        Ok(Self(text.to_owned()))
    }

    /// A fresh token: 256 random bits as 64 hex digits.
    ///
    /// # Errors
    ///
    /// [`TokenError::Random`] when the operating system has no randomness to give.
    pub fn generate() -> Result<Self, TokenError> {
        Ok(Self(hex(&random_bytes::<32>()?)))
    }

    /// Reads the token file at `path`, or creates it (mode 0600, parent directories too) with a
    /// fresh token when it does not exist. Returns the token and whether the file was created.
    ///
    /// On Unix an existing file is refused ([`TokenError::Unsafe`]) when it is a symbolic link or
    /// not a regular file, is owned by another user, or other users may read or write it: its
    /// token may be known to them, or planted by them.
    ///
    /// # Errors
    ///
    /// The file cannot be read or created, or is refused; its content is not a usable token.
    pub fn load_or_create(path: &Path) -> Result<(Self, bool), TokenError> {
        let file_error = |source| TokenError::File { path: path.display().to_string(), source };
        if let Some(text) = read_token_file(path)? {
            return Ok((Self::new(&text)?, false));
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(file_error)?;
        }
        let token = Self::generate()?;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(path) {
            Ok(mut file) => {
                writeln!(file, "{}", token.0).map_err(file_error)?;
                Ok((token, true))
            }
            // Another process created it first: use theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let text = read_token_file(path)?.ok_or_else(|| file_error(e))?;
                Ok((Self::new(&text)?, false))
            }
            Err(e) => Err(file_error(e)),
        }
    }

    /// Reads a token file that must exist (a client's view), checked like
    /// [`load_or_create`](Self::load_or_create) checks it.
    ///
    /// # Errors
    ///
    /// The file cannot be read, is refused ([`TokenError::Unsafe`]), or its content is not a
    /// usable token.
    pub fn read(path: &Path) -> Result<Self, TokenError> {
        let text = read_token_file(path)?.ok_or_else(|| TokenError::File {
            path: path.display().to_string(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        })?;
        Self::new(&text)
    }

    /// The token a client uses: `token_file` when given, else [`TOKEN_ENV`], else the token file
    /// `askuser serve` made in [`default_data_dir`](crate::default_data_dir) — how `askuser ask
    /// --server` and `askuser mcp --fallback server` pair with `askuser serve` without copying the
    /// token by hand.
    ///
    /// # Errors
    ///
    /// The named file cannot be read, the variable is not a usable token, or there is no token
    /// anywhere ([`TokenError::Missing`]).
    pub fn for_client(token_file: Option<&Path>) -> Result<Self, TokenError> {
        Self::for_client_from(token_file).map(|(token, _)| token)
    }

    /// [`for_client`](Self::for_client), and where the token came from: what a client names when
    /// the server refuses it (`401`), so that the person knows which token was sent.
    ///
    /// # Errors
    ///
    /// As [`for_client`](Self::for_client).
    pub fn for_client_from(token_file: Option<&Path>) -> Result<(Self, TokenSource), TokenError> {
        if let Some(path) = token_file {
            return Ok((Self::read(path)?, TokenSource::File(path.to_owned())));
        }
        if let Some(text) = std::env::var_os(TOKEN_ENV) {
            let text = text.into_string().map_err(|_| TokenError::Env("not valid UTF-8"))?;
            let token = Self::new(&text)
                .map_err(|_| TokenError::Env("too short, or with spaces or control characters"))?;
            return Ok((token, TokenSource::Env));
        }
        match crate::default_token_file() {
            Some(path) if path.is_file() => Ok((Self::read(&path)?, TokenSource::DefaultFile(path))),
            _ => Err(TokenError::Missing),
        }
    }

    /// The token's text, to send as `Authorization: Bearer …`.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `candidate` is this token, in time independent of where they differ.
    #[must_use]
    pub fn matches(&self, candidate: &str) -> bool {
        self.0.as_bytes().ct_eq(candidate.as_bytes()).into()
    }
}

/// Where [`ApiToken::for_client_from`] found a client's token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenSource {
    /// The file the client was told to read (`--token-file`).
    File(std::path::PathBuf),
    /// The [`TOKEN_ENV`] environment variable.
    Env,
    /// The file `askuser serve` creates by default in its data directory.
    DefaultFile(std::path::PathBuf),
}

impl std::fmt::Display for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::File(path) => write!(f, "the token file {}", path.display()),
            Self::Env => write!(f, "{TOKEN_ENV}"),
            Self::DefaultFile(path) => {
                write!(f, "the token file {} (the default of `askuser serve`)", path.display())
            }
        }
    }
}

/// The content of the token file at `path`, `None` when there is none; refused when it is a
/// link, not a regular file, another user's, or open to other users (checked on the opened file,
/// so nothing can be swapped in between). Any secret kept in a file is read through it (the API
/// token; askuser-channels' bot tokens).
///
/// # Errors
///
/// [`TokenError::Unsafe`] for a file refused as above; [`TokenError::File`] when it cannot be read.
pub fn read_token_file(path: &Path) -> Result<Option<String>, TokenError> {
    use std::io::Read as _;
    let shown = || path.display().to_string();
    let unsafe_file = |reason: String| TokenError::Unsafe { path: shown(), reason };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits().cast_signed());
    }
    let mut file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(unsafe_file(
                    "is a symbolic link: refused (name the file it points to, or delete it and restart to make a new token)"
                        .to_owned(),
                ));
            }
            return Err(TokenError::File { path: shown(), source: e });
        }
    };
    let meta = file.metadata().map_err(|source| TokenError::File { path: shown(), source })?;
    if !meta.is_file() {
        return Err(unsafe_file("is not a regular file: refused".to_owned()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let me = rustix::process::getuid().as_raw();
        if meta.uid() != me {
            return Err(unsafe_file(format!(
                "is owned by user {} and you are user {me}: refused (a token planted by another user would be the API token); \
                 delete it and restart to make a new token, or name your own file",
                meta.uid()
            )));
        }
        let mode = meta.mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(unsafe_file(format!(
                "its mode is {mode:04o}: other users could read or change the token; refused \
                 (run `chmod 600 {}`; if others may have read it, delete it and restart to make a new token)",
                shown()
            )));
        }
    }
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(|source| TokenError::File { path: shown(), source })?;
    Ok(Some(text))
}

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
        let signing = mac(token.0.as_bytes(), &[b"askuser signing key v1"]);
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
    Ok(hex(&random_bytes::<16>()?))
}

fn random_bytes<const N: usize>() -> Result<[u8; N], TokenError> {
    let mut bytes = [0; N];
    getrandom::fill(&mut bytes).map_err(|_| TokenError::Random)?;
    Ok(bytes)
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

    #[test]
    fn weak_tokens_are_refused() {
        assert!(matches!(ApiToken::new("short"), Err(TokenError::Weak)));
        assert!(matches!(ApiToken::new("has a space inside it"), Err(TokenError::Weak)));
        assert_eq!(ApiToken::new("  0123456789abcdef\n").unwrap().expose(), "0123456789abcdef");
        assert_eq!(format!("{:?}", ApiToken::generate().unwrap()), "ApiToken(***)");
    }

    #[test]
    fn token_files_are_created_private_and_read_back() {
        let dir = std::env::temp_dir().join(format!("askuser-token-test-{}", std::process::id()));
        let path = dir.join("sub").join("token");
        let (created, was_created) = ApiToken::load_or_create(&path).unwrap();
        assert!(was_created);
        assert_eq!(created.expose().len(), 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let (again, was_created) = ApiToken::load_or_create(&path).unwrap();
        assert!(!was_created);
        assert_eq!(again, created);
        assert_eq!(ApiToken::read(&path).unwrap(), created);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A token file open to others, a link (even to a file with a token-like content), or
    /// another user's file is refused by the server and by clients, with the path and the fix.
    #[cfg(unix)]
    #[test]
    fn unsafe_token_files_are_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("askuser-token-unsafe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("token");
        let (token, _) = ApiToken::load_or_create(&path).unwrap();
        let refused = |path: &Path| {
            let server = ApiToken::load_or_create(path).unwrap_err();
            let client = ApiToken::read(path).unwrap_err();
            assert!(matches!(server, TokenError::Unsafe { .. }), "{server}");
            assert!(matches!(client, TokenError::Unsafe { .. }), "{client}");
            server.to_string()
        };

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let message = refused(&path);
        assert!(message.contains(&path.display().to_string()) && message.contains("0644"), "{message}");
        assert!(message.contains(&format!("chmod 600 {}", path.display())), "{message}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(refused(&path).contains("0640"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(ApiToken::read(&path).unwrap(), token);

        let link = dir.join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(refused(&link).contains("symbolic link"));
        let planted = dir.join("planted");
        std::fs::write(&planted, "planted-token-0123456789").unwrap();
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o600)).unwrap();
        if rustix::process::getuid().is_root() {
            // Root can give the file away: it is then another user's.
            let nobody = rustix::process::Uid::from_raw(65534);
            rustix::fs::chown(&planted, Some(nobody), None).unwrap();
            assert!(refused(&planted).contains("owned by user 65534"));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
