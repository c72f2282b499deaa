//! The API token, and the token file: what a client and the server both read. Every comparison
//! of the token is constant-time.

use std::fmt;
use std::io::Write as _;
use std::path::Path;

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
    /// The token in a file is weak (see [`TokenError::Weak`]); the file is named.
    #[error(
        "token file {path}: the API token in it must be at least {MIN_TOKEN_CHARS} printable characters without spaces"
    )]
    WeakFile {
        /// The file.
        path: String,
    },
    /// The token file named does not exist.
    #[error(
        "token file {path}: no such file (askuser serve makes its token file when it first starts and prints \
         where: \"API token in …\"; pass that path)"
    )]
    NoFile {
        /// The file.
        path: String,
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

/// Why a private file (a token file, a credentials file) was not read: it could not be, or it is
/// refused because another user could have read or planted what it holds.
#[derive(Debug, thiserror::Error)]
pub enum PrivateFileError {
    /// The file could not be opened or read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A link, not a regular file, another user's, or open to other users.
    #[error("{path}: {reason}")]
    Unsafe {
        /// The file.
        path: String,
        /// What is wrong, and what to do.
        reason: String,
    },
}

/// What to do about a refused token file, beyond the file's own fix.
const NEW_TOKEN: &str = "to start afresh, delete it and restart `askuser serve`, which makes a new token";

/// The token file at `path` read with [`read_private_file`], its errors in a token file's words.
fn read_token_file(path: &Path) -> Result<Option<String>, TokenError> {
    read_private_file(path).map_err(|e| match e {
        PrivateFileError::Read { path, source } => TokenError::File { path, source },
        // A folder named instead of the file is a slip, not a file to replace.
        PrivateFileError::Unsafe { path, reason } if reason.starts_with("is a directory") => {
            TokenError::Unsafe { path, reason }
        }
        PrivateFileError::Unsafe { path, reason } => {
            TokenError::Unsafe { path, reason: format!("{reason}; {NEW_TOKEN}") }
        }
    })
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
        random_hex::<32>().map(Self)
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
        let weak = |_| TokenError::WeakFile { path: path.display().to_string() };
        if let Some(text) = read_token_file(path)? {
            return Ok((Self::new(&text).map_err(weak)?, false));
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
                Ok((Self::new(&text).map_err(weak)?, false))
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
        let text =
            read_token_file(path)?.ok_or_else(|| TokenError::NoFile { path: path.display().to_string() })?;
        Self::new(&text).map_err(|_| TokenError::WeakFile { path: path.display().to_string() })
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

/// The content of the private file at `path` (a token file, or any other file that holds a
/// secret), `None` when there is none; refused ([`PrivateFileError::Unsafe`]) when it is a link,
/// not a regular file, another user's, or open to other users (checked on the opened file, so
/// nothing can be swapped in between).
///
/// # Errors
///
/// The file cannot be opened or read, or is refused.
pub fn read_private_file(path: &Path) -> Result<Option<String>, PrivateFileError> {
    use std::io::Read as _;
    let shown = || path.display().to_string();
    let unsafe_file = |reason: String| PrivateFileError::Unsafe { path: shown(), reason };
    let read_error = |source| PrivateFileError::Read { path: shown(), source };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        // NONBLOCK: a FIFO at the path (someone else's, or a mistake) would hold the open until
        // a writer came, and `serve` with it (issue 36.12); opened at once, it is refused below as
        // no regular file. A regular file reads as ever.
        options
            .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits().cast_signed());
    }
    let mut file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(unsafe_file(
                    "is a symbolic link: refused (name the file it points to)".to_owned(),
                ));
            }
            return Err(read_error(e));
        }
    };
    let meta = file.metadata().map_err(read_error)?;
    if meta.is_dir() {
        return Err(unsafe_file("is a directory: name the file in it".to_owned()));
    }
    if !meta.is_file() {
        return Err(unsafe_file("is not a regular file: refused".to_owned()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let me = rustix::process::getuid().as_raw();
        if meta.uid() != me {
            return Err(unsafe_file(format!(
                "is owned by user {} and you are user {me}: refused (what another user planted there would be \
                 taken as yours); name a file of your own",
                meta.uid()
            )));
        }
        let mode = meta.mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(unsafe_file(format!(
                "its mode is {mode:04o}: other users could read or change what it holds; refused \
                 (run `chmod 600 {}`, and if others may have read it, replace what it holds)",
                shown()
            )));
        }
    }
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(read_error)?;
    Ok(Some(text))
}

/// `N` random bytes from the operating system, as `2N` lowercase hex digits.
///
/// # Errors
///
/// [`TokenError::Random`] when the operating system has no randomness to give.
pub fn random_hex<const N: usize>() -> Result<String, TokenError> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut bytes = [0; N];
    getrandom::fill(&mut bytes).map_err(|_| TokenError::Random)?;
    Ok(bytes
        .iter()
        .flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]])
        .map(char::from)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token file's mistakes name the file and say what to do: a missing file, a folder named
    /// instead of the file (not "delete it"), a short token in it.
    #[test]
    fn token_file_mistakes_name_the_file() {
        let dir = std::env::temp_dir().join(format!("askuser-token-errors-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let missing = ApiToken::read(&dir.join("nope")).unwrap_err().to_string();
        assert!(missing.contains("nope: no such file") && missing.contains("API token in"), "{missing}");
        let folder = ApiToken::read(&dir).unwrap_err().to_string();
        assert!(
            folder.contains("is a directory: name the file in it") && !folder.contains("delete"),
            "{folder}"
        );
        let short = dir.join("short");
        std::fs::write(&short, "abc\n").unwrap();
        #[cfg(unix)]
        std::fs::set_permissions(&short, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        let weak = ApiToken::read(&short).unwrap_err().to_string();
        assert!(weak.starts_with(&format!("token file {}: ", short.display())), "{weak}");
        assert!(weak.contains("at least 16"), "{weak}");
        std::fs::remove_dir_all(&dir).unwrap();
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
        assert!(message.contains("restart `askuser serve`, which makes a new token"), "{message}");
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
        // Issue 36.12: a FIFO at the token path held `serve`'s start until a writer came. On a
        // thread, so that the hang it guards against fails the test instead of stalling it.
        let fifo = dir.join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(ApiToken::read(&fifo).map_err(|e| e.to_string())));
        let read = rx.recv_timeout(std::time::Duration::from_secs(10)).expect("a FIFO holds the read");
        assert!(read.unwrap_err().contains("is not a regular file: refused"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Guards the words of a refusal: any private file (a chat bot's token, a webhook's
    /// credentials) is refused with its own fix, not told that `askuser serve` makes a new one.
    #[cfg(unix)]
    #[test]
    fn other_private_files_are_refused_in_their_own_words() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("askuser-private-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("telegram-bot");
        std::fs::write(&path, "123:abc").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let message = read_private_file(&path).unwrap_err().to_string();
        assert!(message.starts_with(&format!("{}: its mode is 0644", path.display())), "{message}");
        assert!(
            message.contains("chmod 600") && !message.contains("token") && !message.contains("askuser serve"),
            "{message}"
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_private_file(&path).unwrap().as_deref(), Some("123:abc"));
        assert!(read_private_file(&dir.join("none")).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
