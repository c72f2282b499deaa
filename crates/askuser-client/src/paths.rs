//! Where things live: the default data directory, the token file, and ids in URL paths.

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

/// The API token file `askuser serve` makes and `ask --server` reads when told nothing else:
/// `token` in [`default_data_dir`].
#[must_use]
pub fn default_token_file() -> Option<PathBuf> {
    default_data_dir().map(|dir| dir.join("token"))
}

/// Whether `url` is plain `http://` to a host that is not this machine (not `localhost`, not in
/// 127.0.0.0/8, not `::1`): the API token, the questions, the answers and any secret value would
/// cross the network readable and changeable by anyone on the path. Clients warn about it.
///
/// ```
/// use askuser_client::is_cleartext_beyond_loopback as clear;
/// assert!(clear("http://ask.example.com:8765"));
/// assert!(clear("HTTP://10.0.0.5/"));
/// assert!(!clear("https://ask.example.com"));
/// assert!(!clear("http://127.0.0.1:8765") && !clear("http://localhost:8765") && !clear("http://[::1]:8765"));
/// ```
#[must_use]
pub fn is_cleartext_beyond_loopback(url: &str) -> bool {
    let Some(rest) = url.get(..7).filter(|scheme| scheme.eq_ignore_ascii_case("http://")).map(|_| &url[7..])
    else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = if let Some(bracketed) = host_port.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let loopback = host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    !loopback
}

/// `segment` percent-encoded for one URL path segment: every byte but the unreserved ones
/// (`A–Z a–z 0–9 - . _ ~`).
///
/// ```
/// assert_eq!(askuser_client::encode_segment("call 1/é"), "call%201%2F%C3%A9");
/// ```
#[must_use]
pub fn encode_segment(segment: &str) -> String {
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
    fn cleartext_beyond_loopback() {
        use super::is_cleartext_beyond_loopback as clear;
        for beyond in [
            "http://h",
            "http://user:pw@ask.example:80/x",
            "http://192.168.1.2",
            "http://[fe80::1]:9",
            "http://127.example",
        ] {
            assert!(clear(beyond), "{beyond}");
        }
        for here in [
            "https://h",
            "http://127.8.9.1:1/",
            "http://a.localhost",
            "http://LOCALHOST.",
            "http://me@[::1]/",
            "ftp://h",
        ] {
            assert!(!clear(here), "{here}");
        }
    }

    #[test]
    fn encodes_path_segments() {
        assert_eq!(super::encode_segment("call_1-a.b~"), "call_1-a.b~");
        assert_eq!(super::encode_segment("a/b c?é"), "a%2Fb%20c%3F%C3%A9");
    }
}
