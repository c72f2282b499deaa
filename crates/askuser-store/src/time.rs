//! The [`Clock`] a store reads: wall-clock time (askuser-core's [`Timestamp`]) for records that
//! outlive a process.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use askuser_core::Timestamp;

/// Where a store reads the time: when a question is asked, whether it is past its deadline, which
/// questions a sweep expires. Every process sharing a store should read synchronised clocks (NTP):
/// deadlines are wall-clock times, compared by whichever process looks at them.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Now.
    fn now(&self) -> Timestamp;
}

/// The system clock. The default of every store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that moves only when told to, for tests. Clones share the time.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock stopped at `start`.
    #[must_use]
    pub fn new(start: Timestamp) -> Self {
        Self(Arc::new(AtomicI64::new(start.unix_millis())))
    }

    /// Sets the time.
    pub fn set(&self, now: Timestamp) {
        self.0.store(now.unix_millis(), Ordering::SeqCst);
    }

    /// Moves the time forward by `by`.
    pub fn advance(&self, by: Duration) {
        self.set(self.now().plus(by));
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_millis(self.0.load(Ordering::SeqCst))
    }
}
