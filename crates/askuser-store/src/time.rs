//! The [`Clock`] a store reads: wall-clock time (askuser-core's [`Timestamp`]) for records that
//! outlive a process.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use askuser_core::Timestamp;

/// Where a store reads the time: when a question is asked, whether it is past its deadline, which
/// questions a sweep expires, when a lease lapses.
///
/// One clock decides for everyone who shares a store: a `PostgresStore`
/// reads the database's clock (each process follows it through its own monotonic clock, so a
/// step of a process's wall clock moves no deadline); a [`SqliteStore`](crate::SqliteStore)
/// lives on one host, whose wall clock its processes share.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Now.
    fn now(&self) -> Timestamp;

    /// The time on this clock of `stamp`, a time this process read from its own wall clock
    /// ([`Timestamp::now`]: the `AskUser` capability stamps its requests so). A store keeps the
    /// durations a request's stamps say (how long ago it was asked, how long it may wait), read
    /// on its own clock. Default: `stamp` (this clock is the wall clock).
    fn of_system(&self, stamp: Timestamp) -> Timestamp {
        stamp
    }
}

/// A clock read elsewhere (the database's), followed between readings through this process's
/// monotonic clock: a step of the wall clock (a bad NTP server, a VM resumed, an operator's
/// `date -s`) moves nothing. Each [`reading`](Self::set) replaces the last.
#[cfg(feature = "postgres")]
#[derive(Debug)]
pub(crate) struct FollowedClock {
    anchor: std::sync::Mutex<(std::time::Instant, Timestamp)>,
}

#[cfg(feature = "postgres")]
impl FollowedClock {
    /// A clock that read `now` at `at`.
    pub(crate) fn new(at: std::time::Instant, now: Timestamp) -> Self {
        Self { anchor: std::sync::Mutex::new((at, now)) }
    }

    /// A new reading: the other clock said `now` at `at`.
    pub(crate) fn set(&self, at: std::time::Instant, now: Timestamp) {
        *self.anchor.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = (at, now);
    }

    /// When the last reading was taken.
    pub(crate) fn read_at(&self) -> std::time::Instant {
        self.anchor.lock().unwrap_or_else(std::sync::PoisonError::into_inner).0
    }
}

#[cfg(feature = "postgres")]
impl Clock for FollowedClock {
    fn now(&self) -> Timestamp {
        let (at, then) = *self.anchor.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        then.plus(at.elapsed())
    }

    /// `stamp` moved by how far this clock is ahead of this process's wall clock.
    fn of_system(&self, stamp: Timestamp) -> Timestamp {
        let ahead = self.now().unix_millis().saturating_sub(Timestamp::now().unix_millis());
        Timestamp::from_unix_millis(stamp.unix_millis().saturating_add(ahead))
    }
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

#[cfg(all(test, feature = "postgres"))]
mod tests {
    use std::time::{Duration, Instant};

    use askuser_core::{AskUserRequest, Deadline, Questions, Timestamp};

    use super::{Clock, FollowedClock};
    use crate::NewQuestion;

    /// A request stamped by a process whose wall clock is 2 h behind the store's keeps its
    /// durations on the store's clock: asked 5 s ago, 10 minutes to wait.
    #[test]
    fn a_request_keeps_its_durations_on_the_stores_clock() {
        let two_hours = Duration::from_hours(2);
        let clock = FollowedClock::new(Instant::now(), Timestamp::now().plus(two_hours));
        let questions = Questions::from_json(
            r#"{"questions":[{"header":"Plan","question":"Which?","options":[{"label":"A"},{"label":"B"}]}]}"#,
        )
        .unwrap();
        let asked = Timestamp::now().minus(Duration::from_secs(5));
        let stamped = Deadline::new(asked, Some(Duration::from_mins(10)));
        let request = AskUserRequest::new(questions).with_deadline(stamped);
        let deadline = NewQuestion::new(request, Duration::from_secs(1)).deadline(&clock);
        let store_now = clock.now().unix_millis();
        let asked_ago = store_now - deadline.asked_at().unix_millis();
        assert!((5_000..5_500).contains(&asked_ago), "asked {asked_ago} ms ago on the store's clock");
        let left = deadline.expires_at().unwrap().unix_millis() - store_now;
        assert!((594_500..=595_000).contains(&left), "{left} ms left on the store's clock");
        assert_eq!(
            deadline.expires_at().unwrap().unix_millis() - deadline.nudge_at().unwrap().unix_millis(),
            stamped.expires_at().unwrap().unix_millis() - stamped.nudge_at().unwrap().unix_millis()
        );
    }

    /// The followed clock advances with the monotonic clock from its last reading.
    #[test]
    fn a_followed_clock_moves_on_from_its_reading() {
        let then = Timestamp::from_unix_millis(1_000_000);
        let clock = FollowedClock::new(Instant::now().checked_sub(Duration::from_secs(3)).unwrap(), then);
        let now = clock.now().unix_millis();
        assert!((1_003_000..1_004_000).contains(&now), "{now}");
        clock.set(Instant::now(), then);
        assert!(clock.now().unix_millis() < 1_001_000);
    }
}
