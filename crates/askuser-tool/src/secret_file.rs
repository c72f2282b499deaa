//! [`SecretFile`]: a [`SecretSink`] writing each secret as a `NAME=value` line of a file only its
//! owner can read (docs/contract.md §10) — what `askuser ask --secret-file` and `askuser ask --server
//! --secret-file` use, and a ready-made sink for any host that hands secrets on through a file.

use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use askuser_core::{AskContext, SecretError, SecretSink, SecretValue};
use zeroize::Zeroize as _;

/// A [`SecretSink`] writing `NAME=value` lines to one file, created with mode 0600.
///
/// A name already in the file has its line replaced; other lines are kept. The file is replaced
/// whole (written beside it, synced, then renamed, and the directory synced), so a reader never
/// sees half a value and a write reported done is on disk. Writers at once (threads or
/// processes) take turns under an exclusive advisory lock on the file, so none loses another's
/// line. The lock, the write and the syncs run on a blocking thread, never the answerer's. A name that is not letters, digits and `_`, or a value with a line break or a NUL
/// (which could not be one `NAME=value` line), is refused before the file is touched. An existing file
/// that is not a regular file, or that others could read, is refused and left untouched:
/// [`SecretFile::check`] says so before anything is asked. Errors name the file and the reason,
/// never the value. Unix only: elsewhere every write is refused.
///
/// ```
/// use askuser_core::{AskContext, SecretSink, SecretValue};
/// use askuser_tool::SecretFile;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = std::env::temp_dir().join(format!("askuser-secret-file-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let path = dir.join("secrets.env");
/// let sink = SecretFile::new(&path);
/// sink.check()?; // before asking: nobody types a secret only to have it refused
/// # #[cfg(unix)]
/// # {
/// sink.put(&AskContext::new(), "DEPLOY_TOKEN", SecretValue::new("s3cr3t".to_owned())).await?;
/// assert_eq!(std::fs::read_to_string(&path)?, "DEPLOY_TOKEN=s3cr3t\n");
/// # }
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SecretFile {
    path: PathBuf,
}

impl SecretFile {
    /// A sink writing to `path` (created on the first secret when missing).
    #[must_use]
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The file's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file can take secrets: an existing file must be a regular file (not a link)
    /// with mode 0600 or stricter; a new one needs its directory.
    ///
    /// # Errors
    ///
    /// Says what is wrong (the mode it found, a missing directory, not a regular file).
    pub fn check(&self) -> io::Result<()> {
        match std::fs::symlink_metadata(&self.path) {
            Ok(meta) => check_existing(&meta),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
                if dir.is_dir() {
                    Ok(())
                } else {
                    Err(io::Error::new(
                        io::ErrorKind::NotFound,
                        format!("its directory {} does not exist", dir.display()),
                    ))
                }
            }
            Err(e) => Err(e),
        }
    }

    #[cfg(unix)]
    fn write(&self, name: &str, value: &SecretValue) -> io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt as _;
        check_line(name, value)?;
        self.check()?;
        // Writers take turns: each holds an exclusive lock on the file it read while it writes
        // the replacement, so none loses another's line (a lost secret is gone: a server hands a
        // value over once).
        let locked = self.lock()?;
        let mut kept = String::new();
        if let Err(e) = (&locked).read_to_string(&mut kept) {
            kept.zeroize();
            return Err(e);
        }
        let prefix = format!("{name}=");
        let mut text = String::with_capacity(kept.len() + prefix.len() + value.len() + 1);
        for line in kept.lines().filter(|l| !l.starts_with(&prefix)) {
            text.push_str(line);
            text.push('\n');
        }
        kept.zeroize();
        text.push_str(&prefix);
        text.push_str(value.expose());
        text.push('\n');
        let temporary = self.temporary_path();
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temporary)
            .and_then(|mut file| file.write_all(text.as_bytes()).and_then(|()| file.sync_all()));
        text.zeroize();
        let renamed = written.and_then(|()| std::fs::rename(&temporary, &self.path));
        if let Err(e) = renamed {
            let _ = std::fs::remove_file(&temporary);
            return Err(e);
        }
        // The rename itself is on disk only once the directory is.
        std::fs::File::open(self.directory()).and_then(|dir| dir.sync_all())?;
        drop(locked);
        Ok(())
    }

    /// The file, created (mode 0600, empty) when missing, opened and locked exclusively. A
    /// writer that locked a file another writer has just replaced tries again on the new one.
    #[cfg(unix)]
    fn lock(&self) -> io::Result<std::fs::File> {
        use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
        loop {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .mode(0o600)
                .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits().cast_signed())
                .open(&self.path)?;
            file.lock()?;
            let locked = file.metadata()?;
            check_existing(&locked)?;
            match std::fs::symlink_metadata(&self.path) {
                Ok(now) if now.dev() == locked.dev() && now.ino() == locked.ino() => return Ok(file),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// A name beside the file no other writer (thread or process) uses at the same time.
    fn temporary_path(&self) -> PathBuf {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let file_name = self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        self.path.with_file_name(format!(".{file_name}.{}.{n}.tmp", std::process::id()))
    }

    fn directory(&self) -> &Path {
        self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
    }

    #[cfg(not(unix))]
    fn write(&self, _: &str, _: &SecretValue) -> io::Result<()> {
        Err(io::Error::other("a secret file needs a Unix system (mode 0600)"))
    }
}

/// Whether `name=value` can be one line of the file that reads back as `name` and `value`: a
/// name of letters, digits and `_` (not starting with a digit), a value without a line break or
/// NUL. Anything else is refused before the file is touched.
fn check_line(name: &str, value: &SecretValue) -> io::Result<()> {
    let mut bytes = name.bytes();
    let good_name = bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !good_name {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("the secret name {name:?} is not a NAME of letters, digits and _: refused"),
        ));
    }
    if value.expose().contains(['\n', '\r', '\0']) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the value has a line break or a NUL, so it cannot be one NAME=value line: refused, nothing written",
        ));
    }
    Ok(())
}

#[cfg(unix)]
fn check_existing(meta: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    if !meta.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a link, a directory or a device is refused)",
        ));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "its mode is {mode:04o}: others could read the secret; refused (chmod 600 it, or name a new file)"
            ),
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_existing(_: &std::fs::Metadata) -> io::Result<()> {
    Err(io::Error::other("a secret file needs a Unix system (mode 0600)"))
}

impl SecretFile {
    /// [`SecretSink::put`]'s work, on the calling thread: the lock, the write and the syncs.
    fn store(&self, name: &str, value: &SecretValue) -> Result<(), SecretError> {
        // The error names the file and the reason, never the value.
        self.write(name, value).map_err(|e| SecretError::new(name, format!("{}: {e}", self.path.display())))
    }
}

#[askuser_core::async_trait]
impl SecretSink for SecretFile {
    /// Locks, writes and syncs the file on a blocking thread: never on the answerer's.
    async fn put(&self, _context: &AskContext, name: &str, value: SecretValue) -> Result<(), SecretError> {
        let (file, owned) = (self.clone(), name.to_owned());
        tokio::task::spawn_blocking(move || file.store(&owned, &value)).await.unwrap_or_else(|_| {
            Err(SecretError::new(name, "writing the secret file stopped (a panic)".to_owned()))
        })
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    /// Guards the file's contract: created 0600, one `NAME=value` line per name (a new value
    /// replaces the old line, other lines stay), a readable file or a link refused without being
    /// touched, no temporary file left behind, errors without the value.
    #[test]
    fn lines_mode_and_refusal() {
        let dir = std::env::temp_dir().join(format!("askuser-tool-secret-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("secrets.env");
        let sink = SecretFile::new(&path);
        sink.check().unwrap();
        let put = |name: &str, value: &str| sink.store(name, &SecretValue::new(value.to_owned()));
        put("A", "one").unwrap();
        put("B", "two=2 ✓").unwrap();
        put("A", "three").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "B=two=2 ✓\nA=three\n");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file is left");

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = sink.check().unwrap_err().to_string();
        assert!(err.contains("0644"), "{err}");
        let err = put("C", "LEAKCANARY").unwrap_err().to_string();
        assert!(!err.contains("LEAKCANARY") && err.contains("0644"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "B=two=2 ✓\nA=three\n", "untouched");

        let link = dir.join("link.env");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(SecretFile::new(&link).check().unwrap_err().to_string().contains("regular file"));
        let err = SecretFile::new(dir.join("no-such-dir").join("x")).check().unwrap_err().to_string();
        assert!(err.contains("does not exist"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Writers at once on one file (threads here, each with its own open file, as processes
    /// have) lose no line: every secret each reported written is on disk, once.
    #[test]
    fn concurrent_writers_lose_no_secret() {
        const WRITERS: usize = 8;
        const EACH: usize = 25;
        let dir = std::env::temp_dir().join(format!("askuser-tool-secret-race-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("secrets.env");
        std::thread::scope(|scope| {
            for writer in 0..WRITERS {
                let path = &path;
                scope.spawn(move || {
                    for n in 0..EACH {
                        SecretFile::new(path)
                            .store(&format!("W{writer}_{n}"), &SecretValue::new(format!("v{writer}.{n}")))
                            .unwrap();
                    }
                });
            }
        });
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort_unstable();
        let mut expected: Vec<String> =
            (0..WRITERS).flat_map(|w| (0..EACH).map(move |n| format!("W{w}_{n}=v{w}.{n}"))).collect();
        expected.sort_unstable();
        assert_eq!(lines.len(), WRITERS * EACH);
        assert_eq!(lines, expected);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file is left");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A value with a line break or a NUL, or a name that is not `NAME`, would not read back as
    /// one `NAME=value` line (or would add one): refused, the file untouched.
    #[test]
    fn values_that_are_not_one_line_are_refused() {
        let dir = std::env::temp_dir().join(format!("askuser-tool-secret-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("secrets.env");
        let sink = SecretFile::new(&path);
        let put = |name: &str, value: &str| sink.store(name, &SecretValue::new(value.to_owned()));
        put("A", "one").unwrap();
        for value in ["x\nLD_PRELOAD=/tmp/evil.so", "x\r", "x\0y"] {
            let err = put("B", value).unwrap_err().to_string();
            assert!(err.contains("line break or a NUL") && !err.contains("evil"), "{err}");
        }
        for name in ["LD PRELOAD", "A=B", "", "1A", "A\nB"] {
            let err = put(name, "v").unwrap_err().to_string();
            assert!(err.contains("not a NAME"), "{err}");
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "A=one\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
