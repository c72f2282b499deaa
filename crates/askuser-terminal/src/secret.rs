//! Reading a secret in the line protocol: from the controlling terminal with echo off, never from
//! piped stdin, and cancellable without leaving anything typed to the next reader.

use std::io;

use askuser_core::{SecretValue, async_trait};

/// What one attempt to read a secret gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SecretRead {
    /// A line (without its ending; possibly empty).
    Value(SecretValue),
    /// There is no terminal to read a secret from.
    NoTerminal,
    /// The terminal's input ended (Ctrl-D on an empty line).
    End,
    /// More input was waiting right after the line: a paste of several lines, of which one line
    /// would have been a silently cut secret. Nothing was kept (all of it discarded, zeroed).
    SeveralLines,
}

/// Where the line protocol reads a secret.
#[async_trait]
pub(crate) trait SecretInput: Send {
    /// Reads one secret line, echo off.
    async fn read_secret(&mut self) -> io::Result<SecretRead>;
}

/// The controlling terminal, `/dev/tty`.
#[derive(Debug, Default)]
pub(crate) struct TtySecret;

#[cfg(unix)]
#[async_trait]
impl SecretInput for TtySecret {
    async fn read_secret(&mut self) -> io::Result<SecretRead> {
        tty::read().await
    }
}

#[cfg(not(unix))]
#[async_trait]
impl SecretInput for TtySecret {
    async fn read_secret(&mut self) -> io::Result<SecretRead> {
        Ok(SecretRead::NoTerminal)
    }
}

/// Discards whatever was typed on the controlling terminal and not yet read: what a cancelled
/// secret prompt leaves behind must not reach the next reader (a shell, the host's own prompt).
pub(crate) fn discard_typed_input() {
    #[cfg(unix)]
    if let Ok(tty) = std::fs::File::open("/dev/tty") {
        let _ = rustix::termios::tcflush(&tty, rustix::termios::QueueSelector::IFlush);
    }
}

#[cfg(unix)]
mod tty {
    use std::fs::{File, OpenOptions};
    use std::io::{self, Read};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use askuser_core::SecretValue;
    use rustix::termios::{
        LocalModes, OptionalActions, QueueSelector, Termios, tcflush, tcgetattr, tcsetattr,
    };
    use tokio::sync::oneshot;
    use zeroize::Zeroize;

    use super::SecretRead;

    /// The longest secret line read, in bytes; the rest of a longer line is discarded.
    const MAX_SECRET_BYTES: usize = 16 * 1024;

    /// Echo off on the terminal for as long as it lives; on drop (the read done, or the call
    /// cancelled) whatever was typed and not read is discarded, then echo is restored.
    struct EchoOff {
        tty: File,
        saved: Termios,
        cancelled: Arc<AtomicBool>,
    }

    impl EchoOff {
        fn new(tty: File, cancelled: Arc<AtomicBool>) -> io::Result<Self> {
            let saved = tcgetattr(&tty)?;
            let mut quiet = saved.clone();
            // Enter still moves to a new line (ECHONL); nothing else is echoed.
            quiet.local_modes.remove(LocalModes::ECHO | LocalModes::ECHOE | LocalModes::ECHOK);
            quiet.local_modes.insert(LocalModes::ECHONL);
            tcsetattr(&tty, OptionalActions::Now, &quiet)?;
            Ok(Self { tty, saved, cancelled })
        }
    }

    impl Drop for EchoOff {
        fn drop(&mut self) {
            self.cancelled.store(true, Ordering::SeqCst);
            let _ = tcflush(&self.tty, QueueSelector::IFlush);
            let _ = tcsetattr(&self.tty, OptionalActions::Now, &self.saved);
        }
    }

    /// Reads one line from `/dev/tty` with echo off, on a thread that only reads while the call
    /// waits: its descriptor is non-blocking and polled, so a cancelled call (the guard dropped)
    /// stops it before it takes anything more, and what was typed meanwhile is discarded.
    pub(super) async fn read() -> io::Result<SecretRead> {
        let Ok(tty) = OpenOptions::new().read(true).write(true).open("/dev/tty") else {
            return Ok(SecretRead::NoTerminal);
        };
        if !rustix::termios::isatty(&tty) {
            return Ok(SecretRead::NoTerminal);
        }
        // A descriptor of our own (its own open file description): non-blocking, so a read never
        // waits past a cancellation; stdin's flags are untouched.
        let reader = tty.try_clone()?;
        rustix::io::ioctl_fionbio(&reader, true)?;
        let cancelled = Arc::new(AtomicBool::new(false));
        let guard = EchoOff::new(tty, Arc::clone(&cancelled))?;
        let (tx, rx) = oneshot::channel();
        std::thread::Builder::new().name("askuser-secret".into()).spawn(move || {
            let _ = tx.send(read_line(reader, &cancelled));
        })?;
        let read = rx.await.map_err(|_| io::Error::other("the secret reader stopped"))?;
        drop(guard);
        read
    }

    /// The reader thread: waits for input while not cancelled, reads what is there, stops at a
    /// line feed, at end of input, or when cancelled (dropping, and zeroing, what it read).
    fn read_line(mut tty: File, cancelled: &AtomicBool) -> io::Result<SecretRead> {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let mut line: Vec<u8> = Vec::with_capacity(MAX_SECRET_BYTES);
        let mut byte = [0_u8; 1];
        let result = loop {
            if cancelled.load(Ordering::SeqCst) {
                break Err(io::Error::new(io::ErrorKind::Interrupted, "cancelled"));
            }
            let mut fds = [PollFd::new(&tty, PollFlags::IN)];
            let wait = Timespec { tv_sec: 0, tv_nsec: 50_000_000 };
            match poll(&mut fds, Some(&wait)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => continue,
                Ok(_) => {}
                Err(e) => break Err(e.into()),
            }
            // One byte at a time: nothing after the line feed is taken from the terminal.
            match tty.read(&mut byte) {
                Ok(0) if line.is_empty() => break Ok(None),
                Ok(0) => break Ok(Some(())),
                Ok(_) if byte[0] == b'\n' => break Ok(Some(())),
                Ok(_) => {
                    if line.len() < MAX_SECRET_BYTES {
                        line.push(byte[0]);
                    }
                }
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {}
                Err(e) => break Err(e),
            }
        };
        byte.zeroize();
        // A line feed with more already waiting behind it is a paste of several lines.
        if matches!(result, Ok(Some(()))) {
            let mut fds = [PollFd::new(&tty, PollFlags::IN)];
            if poll(&mut fds, Some(&Timespec { tv_sec: 0, tv_nsec: 0 })).is_ok_and(|ready| ready > 0) {
                line.zeroize();
                return Ok(SecretRead::SeveralLines);
            }
        }
        match result {
            Ok(Some(())) => {
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                match String::from_utf8(line) {
                    Ok(text) => Ok(SecretRead::Value(SecretValue::new(text))),
                    Err(e) => {
                        e.into_bytes().zeroize();
                        Ok(SecretRead::Value(SecretValue::new(String::new())))
                    }
                }
            }
            Ok(None) => Ok(SecretRead::End),
            Err(e) => {
                line.zeroize();
                Err(e)
            }
        }
    }
}
