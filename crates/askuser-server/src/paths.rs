//! Where things live: the default data directory, and ids in URL paths.

use std::path::PathBuf;

/// The user's data directory for askuser: `$XDG_DATA_HOME/askuser`, else
/// `~/Library/Application Support/askuser` on macOS, `%APPDATA%\askuser` on Windows, and
/// `~/.local/share/askuser` elsewhere. `None` when no home directory is known.
#[must_use]
pub fn default_data_dir() -> Option<PathBuf> {
    let from_env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = from_env("XDG_DATA_HOME") {
        return Some(dir.join("askuser"));
    }
    if cfg!(windows) {
        return from_env("APPDATA").map(|d| d.join("askuser"));
    }
    let home = from_env("HOME")?;
    if cfg!(target_os = "macos") {
        Some(home.join("Library").join("Application Support").join("askuser"))
    } else {
        Some(home.join(".local").join("share").join("askuser"))
    }
}

/// `segment` percent-encoded for one URL path segment: every byte but the unreserved ones
/// (`A–Z a–z 0–9 - . _ ~`).
pub(crate) fn encode_segment(segment: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn encodes_path_segments() {
        assert_eq!(super::encode_segment("call_1-a.b~"), "call_1-a.b~");
        assert_eq!(super::encode_segment("a/b c?é"), "a%2Fb%20c%3F%C3%A9");
    }
}
