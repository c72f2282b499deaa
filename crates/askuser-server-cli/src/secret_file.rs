//! `--secret-file PATH`: where `askuser ask --server` writes a secret answer's value, as
//! `NAME=value` lines in a file only its owner can read (SPEC §10).

use std::io::Write as _;
use std::path::PathBuf;

use askuser_core::{AskContext, SecretError, SecretSink, SecretValue};
use zeroize::Zeroizing;

/// Writes each secret as a `NAME=value` line of one file, created mode 0600. A name already in
/// the file has its line replaced; other lines are kept. The file is replaced whole (written
/// beside it, then renamed), so a reader never sees half a value.
#[derive(Debug)]
pub(crate) struct SecretFile {
    path: PathBuf,
}

impl SecretFile {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self { path }
    }

    fn write(&self, name: &str, value: &SecretValue) -> std::io::Result<()> {
        let kept = match std::fs::read_to_string(&self.path) {
            Ok(text) => Zeroizing::new(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Zeroizing::new(String::new()),
            Err(e) => return Err(e),
        };
        let mut content = Zeroizing::new(String::new());
        for line in kept.lines().filter(|l| l.split_once('=').is_none_or(|(n, _)| n != name)) {
            content.push_str(line);
            content.push('\n');
        }
        content.push_str(name);
        content.push('=');
        content.push_str(value.expose());
        content.push('\n');
        let file_name = self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let temporary = self.path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let written = options.open(&temporary).and_then(|mut file| {
            file.write_all(content.as_bytes())?;
            file.sync_all()
        });
        match written.and_then(|()| std::fs::rename(&temporary, &self.path)) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = std::fs::remove_file(&temporary);
                Err(e)
            }
        }
    }
}

impl SecretSink for SecretFile {
    fn put(&self, _context: &AskContext, name: &str, value: SecretValue) -> Result<(), SecretError> {
        // The error names the file and the failure, never the value.
        self.write(name, &value)
            .map_err(|e| SecretError::new(name, format!("cannot write {}: {e}", self.path.display())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_private_name_value_lines_and_replaces_a_name() {
        let dir = std::env::temp_dir().join(format!("askuser-secret-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("secrets.env");
        std::fs::write(&path, "OTHER=keep\nAPI_TOKEN=old\n").unwrap();
        let sink = SecretFile::new(path.clone());
        sink.put(&AskContext::new(), "API_TOKEN", SecretValue::new("s3cr3t ✓".to_owned())).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "OTHER=keep\nAPI_TOKEN=s3cr3t ✓\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let missing = SecretFile::new(dir.join("no-such-dir").join("s.env"));
        let error =
            missing.put(&AskContext::new(), "K", SecretValue::new("hidden-value".to_owned())).unwrap_err();
        assert!(!error.to_string().contains("hidden-value"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
