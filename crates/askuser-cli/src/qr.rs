//! The answer link as a QR code in the terminal, so that a phone is one scan away.

use std::io::IsTerminal as _;

use qrcodegen::{QrCode, QrCodeEcc};

/// Light modules around the code: scanners need a margin, and a terminal's own background (often
/// dark) is no margin.
const QUIET: i32 = 2;

/// `text` as a QR code of half blocks, two module rows per line, dark modules black on a white
/// background whatever the terminal's colours. `None` when `text` is too long for a QR code.
pub(crate) fn render(text: &str) -> Option<String> {
    let qr = QrCode::encode_text(text, QrCodeEcc::Low).ok()?;
    let (from, to) = (-QUIET, qr.size() + QUIET);
    let mut out = String::new();
    for y in (from..to).step_by(2) {
        out.push_str("\x1b[30;107m");
        for x in from..to {
            out.push(match (qr.get_module(x, y), qr.get_module(x, y + 1)) {
                (true, true) => '█',
                (true, false) => '▀',
                (false, true) => '▄',
                (false, false) => ' ',
            });
        }
        out.push_str("\x1b[0m\n");
    }
    Some(out)
}

/// Whether a phone could open `url`: not when its host is this machine's loopback
/// (`127.0.0.1`, `[::1]`, `localhost`), which on a phone is the phone itself.
pub(crate) fn phone_can_open(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = if host.starts_with('[') {
        host.split(']').next().unwrap_or(host).trim_start_matches('[')
    } else {
        host.rsplit_once(':').map_or(host, |(h, _)| h)
    };
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified());
    !loopback
}

/// Draws `url`'s code on stderr when stderr is a terminal (never into a log or a pipe) and a
/// phone could open it; a loopback link gets a line that says why there is no code, once.
pub(crate) fn show(url: &str) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !std::io::stderr().is_terminal() {
        return;
    }
    if !phone_can_open(url) {
        if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
            say!(
                "askuser: no QR code: this link is on this machine's loopback, which a phone cannot open; \
                 serve with --public-url URL (or --bind on an address the phone reaches) for one"
            );
        }
        return;
    }
    if let Some(code) = render(url) {
        // Not `eprint!`, which panics when the terminal is gone.
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), code.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards the drawing against the crate's own matrix: every module of the code, and the
    /// quiet zone around it, reads back from the half blocks as it is.
    #[test]
    fn only_links_a_phone_can_open_get_a_code() {
        for url in [
            "http://127.0.0.1:8765/q/1/t",
            "http://localhost:8765",
            "http://[::1]:1/x",
            "http://0.0.0.0:8765",
        ] {
            assert!(!phone_can_open(url), "{url}");
        }
        for url in ["http://192.168.1.20:8765/q/1/t", "https://ask.example.org/q/1", "http://[fd00::1]:8765/"]
        {
            assert!(phone_can_open(url), "{url}");
        }
    }

    #[test]
    fn the_half_blocks_are_the_codes_modules() {
        let url = "http://192.168.1.20:8765/q/3f0c9a7be1d24c55/9b1e0d4f8a6c7b2e3d5f9a1c";
        let qr = QrCode::encode_text(url, QrCodeEcc::Low).unwrap();
        let drawn = render(url).unwrap();
        let side = qr.size() + 2 * QUIET;
        let lines: Vec<&str> = drawn.lines().collect();
        assert_eq!(i32::try_from(lines.len()).unwrap(), (side + 1) / 2);
        for (row, line) in (0..).zip(&lines) {
            let cells = line.strip_prefix("\x1b[30;107m").and_then(|l| l.strip_suffix("\x1b[0m")).unwrap();
            assert_eq!(i32::try_from(cells.chars().count()).unwrap(), side, "line {row}");
            for (column, cell) in (0..).zip(cells.chars()) {
                let (top, bottom) = match cell {
                    '█' => (true, true),
                    '▀' => (true, false),
                    '▄' => (false, true),
                    ' ' => (false, false),
                    other => panic!("{other:?} at {row},{column}"),
                };
                let (x, y) = (column - QUIET, 2 * row - QUIET);
                assert_eq!((top, bottom), (qr.get_module(x, y), qr.get_module(x, y + 1)), "{x},{y}");
            }
        }
        // The finder pattern's corner is dark, its quiet zone light.
        assert!(qr.get_module(0, 0) && !qr.get_module(-1, 0));
        assert!(render(&"x".repeat(8_000)).is_none(), "too long for any QR code");
    }
}
