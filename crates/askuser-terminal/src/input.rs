//! Where the menu's events come from: crossterm's `EventStream` (one per `ask()`), or the host's.

use std::io;
use std::pin::Pin;

use askuser_core::async_trait;
use crossterm::event::{Event, EventStream};
use futures_core::Stream;

/// A source of terminal events for the menu.
///
/// A host that already runs its own crossterm TUI must not let two readers split the keys: while
/// a question is open it forwards its events here instead, for example through a
/// [`tokio::sync::mpsc`] channel, whose receivers implement this trait. `None` means the input
/// has ended, which declines.
#[async_trait]
pub trait InputSource: Send {
    /// The next event, `None` at the end of input.
    async fn next_event(&mut self) -> Option<io::Result<Event>>;
}

#[async_trait]
impl InputSource for tokio::sync::mpsc::Receiver<Event> {
    async fn next_event(&mut self) -> Option<io::Result<Event>> {
        self.recv().await.map(Ok)
    }
}

#[async_trait]
impl InputSource for tokio::sync::mpsc::UnboundedReceiver<Event> {
    async fn next_event(&mut self) -> Option<io::Result<Event>> {
        self.recv().await.map(Ok)
    }
}

#[async_trait]
impl<S: InputSource + ?Sized> InputSource for Box<S> {
    async fn next_event(&mut self) -> Option<io::Result<Event>> {
        (**self).next_event().await
    }
}

/// crossterm's `EventStream`, created for one `ask()` and dropped with it.
///
/// Dropping the stream stops its reader thread, so the next line the person types reaches whoever
/// reads next (measured: a stream kept alive steals it).
pub(crate) struct CrosstermSource {
    stream: EventStream,
}

impl std::fmt::Debug for CrosstermSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CrosstermSource")
    }
}

impl CrosstermSource {
    /// Throws away events queued before now (keys typed before the first frame, or read by a
    /// cancelled menu's reader thread), then opens a stream.
    ///
    /// The caller has checked that a terminal exists: without one, `EventStream::new` panics.
    pub(crate) fn open() -> io::Result<Self> {
        while crossterm::event::poll(std::time::Duration::ZERO)? {
            crossterm::event::read()?;
        }
        Ok(Self { stream: EventStream::new() })
    }
}

#[async_trait]
impl InputSource for CrosstermSource {
    async fn next_event(&mut self) -> Option<io::Result<Event>> {
        std::future::poll_fn(|cx| Pin::new(&mut self.stream).poll_next(cx)).await
    }
}
