//! `--secret-file PATH`: the secret sink of `askuser ask` (SPEC §10). Each secret answer's value is
//! written as a `NAME=value` line to a file only its owner can read (mode 0600), replacing an
//! earlier line of the same name; nothing else of it is written anywhere.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use askuser_core::{AskContext, SecretError, SecretSink, SecretValue};
use zeroize::Zeroize;

/// Why `path` cannot take secrets, checked before anything is asked: an existing file must be a
/// regular file (not a link) with mode 0600 or stricter; a new one needs its directory.
pub(crate) fn check(path: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => check_existing(&meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            if dir.is_dir() { Ok(()) } else { Err(format!("its directory {} does not exist", dir.display())) }
        }
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(unix)]
fn check_existing(meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    if !meta.file_type().is_file() {
        return Err("not a regular file (a link, a directory or a device is refused)".to_owned());
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "its mode is {mode:04o}: others could read the secret; refused (chmod 600 it, or name a new file)"
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_existing(_: &std::fs::Metadata) -> Result<(), String> {
    Err("--secret-file needs a Unix system (mode 0600)".to_owned())
}

/// The sink writing `NAME=value` lines to one file.
#[derive(Debug)]
pub(crate) struct SecretFile {
    path: PathBuf,
}

impl SecretFile {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self { path }
    }

    #[cfg(unix)]
    fn write(&self, name: &str, value: &SecretValue) -> io::Result<()> {
        use std::fs::OpenOptions;
        use std::os::unix::fs::OpenOptionsExt;
        check(&self.path).map_err(io::Error::other)?;
        let mut kept = String::new();
        if let Ok(mut file) = std::fs::File::open(&self.path) {
            file.read_to_string(&mut kept)?;
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
        let written = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&self.path)
            .and_then(|mut file| file.write_all(text.as_bytes()).and_then(|()| file.sync_all()));
        text.zeroize();
        written
    }

    #[cfg(not(unix))]
    fn write(&self, _: &str, _: &SecretValue) -> io::Result<()> {
        Err(io::Error::other("--secret-file needs a Unix system (mode 0600)"))
    }
}

impl SecretSink for SecretFile {
    fn put(&self, _context: &AskContext, name: &str, value: SecretValue) -> Result<(), SecretError> {
        // The error names the file and the reason, never the value.
        self.write(name, &value).map_err(|e| SecretError::new(name, format!("{}: {e}", self.path.display())))
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("askuser-secret-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Guards the file's contract: created 0600, one `NAME=value` line per name (a new value
    /// replaces the old line, other lines stay), a readable file refused without being touched.
    #[test]
    fn lines_mode_and_refusal() {
        let path = dir().join("secrets.env");
        let _ = std::fs::remove_file(&path);
        let sink = SecretFile::new(path.clone());
        let put =
            |name: &str, value: &str| sink.put(&AskContext::new(), name, SecretValue::new(value.to_owned()));
        put("A", "one").unwrap();
        put("B", "two=2").unwrap();
        put("A", "three").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "B=two=2\nA=three\n");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = check(&path).unwrap_err();
        assert!(err.contains("0644"), "{err}");
        let err = put("C", "LEAKCANARY").unwrap_err().to_string();
        assert!(!err.contains("LEAKCANARY") && err.contains("0644"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "B=two=2\nA=three\n", "untouched");
        assert!(check(&dir().join("no-such-dir").join("x")).is_err());
        std::fs::remove_file(&path).unwrap();
    }
}
