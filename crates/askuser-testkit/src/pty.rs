//! [`Pty`]: a pseudo-terminal, and everything drawn on it.

use std::fs::File;
use std::io::{Read as _, Write as _};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rustix::fd::OwnedFd;
use rustix::termios::{LocalModes, Winsize, tcgetattr};

/// A pseudo-terminal of a given size: its controller (what a terminal window holds: keys go in,
/// the screen comes out, recorded by a thread of its own) and its user side (a program's stdin,
/// stderr or controlling terminal).
#[derive(Debug)]
pub struct Pty {
    controller: File,
    user: OwnedFd,
    seen: Arc<Mutex<Vec<u8>>>,
}

impl Pty {
    /// A pseudo-terminal of `cols` × `rows`.
    ///
    /// # Panics
    ///
    /// When the system gives none.
    #[must_use]
    pub fn open(cols: u16, rows: u16) -> Self {
        let size = Winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
        let pty = rustix_openpty::openpty(None, Some(&size)).expect("a pseudo-terminal");
        let controller = File::from(pty.controller);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut reader = controller.try_clone().expect("the controller");
        let sink = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buf = [0; 4096];
            // Ends with EIO once every user side is closed.
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                sink.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(&buf[..n]);
            }
        });
        Self { controller, user: pty.user, seen }
    }

    /// Everything drawn so far (scrollback included), as text.
    #[must_use]
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap_or_else(PoisonError::into_inner)).into_owned()
    }

    /// The user side, for a child's stdin, stdout or stderr.
    ///
    /// # Panics
    ///
    /// When the descriptor cannot be duplicated.
    #[must_use]
    pub fn stdio(&self) -> Stdio {
        Stdio::from(self.user_file())
    }

    /// The user side as a file.
    ///
    /// # Panics
    ///
    /// When the descriptor cannot be duplicated.
    #[must_use]
    pub fn user_file(&self) -> File {
        File::from(self.user.try_clone().expect("the user side"))
    }

    /// Types `bytes`.
    ///
    /// # Panics
    ///
    /// When the controller cannot be written.
    pub fn send(&self, bytes: &[u8]) {
        let mut controller = &self.controller;
        controller.write_all(bytes).expect("typing");
        controller.flush().expect("typing");
    }

    /// Resizes it; the kernel sends SIGWINCH to its foreground process group.
    ///
    /// # Panics
    ///
    /// When the size cannot be set.
    pub fn resize(&self, cols: u16, rows: u16) {
        let size = Winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
        rustix::termios::tcsetwinsize(&self.controller, size).expect("a new size");
    }

    /// Whether it is in cooked mode: canonical lines and echo.
    ///
    /// # Panics
    ///
    /// When its modes cannot be read.
    #[must_use]
    pub fn cooked(&self) -> bool {
        tcgetattr(&self.user).expect("its modes").local_modes.contains(LocalModes::ICANON | LocalModes::ECHO)
    }

    /// Whether what is typed is echoed.
    ///
    /// # Panics
    ///
    /// When its modes cannot be read.
    #[must_use]
    pub fn echoes(&self) -> bool {
        tcgetattr(&self.user).expect("its modes").local_modes.contains(LocalModes::ECHO)
    }

    /// Waits (blocking this thread) until `needle` was drawn.
    ///
    /// # Panics
    ///
    /// After `within`, with what was drawn.
    #[track_caller]
    pub fn wait_for(&self, needle: &str, within: Duration) {
        let start = Instant::now();
        while !self.drawn(needle, start, within) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// [`wait_for`](Self::wait_for) in async code, sleeping on the runtime.
    ///
    /// # Panics
    ///
    /// After `within`, with what was drawn.
    pub async fn wait_for_async(&self, needle: &str, within: Duration) {
        let start = Instant::now();
        while !self.drawn(needle, start, within) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Whether `needle` was drawn; a panic once `within` has passed since `start`.
    #[track_caller]
    fn drawn(&self, needle: &str, start: Instant, within: Duration) -> bool {
        let text = self.text();
        assert!(
            text.contains(needle) || start.elapsed() < within,
            "timed out waiting for {needle:?}; the terminal shows {text:?}"
        );
        text.contains(needle)
    }
}
