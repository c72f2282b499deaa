//! Wall-clock time for records that outlive a process: [`Timestamp`], the [`Clock`] a store reads,
//! and [`Deadlines`], the one place a question's deadlines are computed.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Serialize, Serializer};

/// A point in time: whole milliseconds since the Unix epoch, UTC. Stored as a 64-bit integer in
/// every backend; shown as RFC 3339 (`2026-11-30T18:30:22.123Z`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The timestamp `millis` milliseconds after the Unix epoch.
    #[must_use]
    pub const fn from_millis(millis: i64) -> Self {
        Self(millis)
    }

    /// Milliseconds since the Unix epoch.
    #[must_use]
    pub const fn as_millis(self) -> i64 {
        self.0
    }

    /// The system clock, now.
    #[must_use]
    pub fn now() -> Self {
        Self::from_system_time(SystemTime::now())
    }

    /// A `SystemTime`, truncated to the millisecond (saturating far outside ±292 million years).
    #[must_use]
    pub fn from_system_time(time: SystemTime) -> Self {
        match time.duration_since(UNIX_EPOCH) {
            Ok(after) => Self(i64::try_from(after.as_millis()).unwrap_or(i64::MAX)),
            Err(before) => Self(i64::try_from(before.duration().as_millis()).map_or(i64::MIN, |ms| -ms)),
        }
    }

    /// This timestamp plus `duration`, saturating.
    #[must_use]
    pub fn saturating_add(self, duration: Duration) -> Self {
        Self(self.0.saturating_add(i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)))
    }

    /// This timestamp minus `duration`, saturating.
    #[must_use]
    pub fn saturating_sub(self, duration: Duration) -> Self {
        Self(self.0.saturating_sub(i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)))
    }

    /// How long from `self` until `later`; zero when `later` is not after `self`.
    #[must_use]
    pub fn until(self, later: Self) -> Duration {
        Duration::from_millis(u64::try_from(later.0.saturating_sub(self.0)).unwrap_or(0))
    }
}

impl fmt::Display for Timestamp {
    /// RFC 3339 in UTC with milliseconds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.0.div_euclid(86_400_000);
        let ms_of_day = self.0.rem_euclid(86_400_000);
        let (year, month, day) = civil_from_days(days);
        let (secs, ms) = (ms_of_day / 1000, ms_of_day % 1000);
        write!(
            f,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

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
        Self(Arc::new(AtomicI64::new(start.as_millis())))
    }

    /// Sets the time.
    pub fn set(&self, now: Timestamp) {
        self.0.store(now.as_millis(), Ordering::SeqCst);
    }

    /// Moves the time forward by `by`.
    pub fn advance(&self, by: Duration) {
        self.set(self.now().saturating_add(by));
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.0.load(Ordering::SeqCst))
    }
}

/// When a question was asked, when its asker should be nudged, and when it expires.
///
/// Computed from the asker's timeout as SPEC §10 stamps them: `expires_at = asked_at + timeout`,
/// `nudge_at = expires_at − min(60 s, ⌈timeout / 5⌉)`. This is the only place the store derives
/// deadlines; once requests carry their own stamps, a record takes them from there instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[expect(clippy::struct_field_names, reason = "the names SPEC §10 gives the stamps")]
pub struct Deadlines {
    asked_at: Timestamp,
    nudge_at: Timestamp,
    expires_at: Timestamp,
}

impl Deadlines {
    /// The deadlines of a question asked at `asked_at` that waits at most `timeout`.
    #[must_use]
    pub fn from_timeout(asked_at: Timestamp, timeout: Duration) -> Self {
        let expires_at = asked_at.saturating_add(timeout);
        let fifth = timeout.as_millis().div_ceil(5);
        let lead =
            Duration::from_millis(u64::try_from(fifth).unwrap_or(u64::MAX)).min(Duration::from_mins(1));
        Self { asked_at, nudge_at: expires_at.saturating_sub(lead), expires_at }
    }

    /// When the question was asked.
    #[must_use]
    pub fn asked_at(&self) -> Timestamp {
        self.asked_at
    }

    /// When to remind the person (before `expires_at`).
    #[must_use]
    pub fn nudge_at(&self) -> Timestamp {
        self.nudge_at
    }

    /// From this moment on the question is expired and never answerable.
    #[must_use]
    pub fn expires_at(&self) -> Timestamp {
        self.expires_at
    }

    pub(crate) fn from_parts(asked_at: Timestamp, nudge_at: Timestamp, expires_at: Timestamp) -> Self {
        Self { asked_at, nudge_at, expires_at }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(millis: i64, expected: &str) {
        assert_eq!(Timestamp::from_millis(millis).to_string(), expected);
    }

    #[test]
    fn rfc3339() {
        check(0, "1970-01-01T00:00:00.000Z");
        check(-1, "1969-12-31T23:59:59.999Z");
        check(951_782_400_000, "2000-02-29T00:00:00.000Z");
        check(1_796_063_422_123, "2026-11-30T18:30:22.123Z");
    }

    #[test]
    fn deadlines_follow_the_spec() {
        let t = Timestamp::from_millis(1_000_000);
        let short = Deadlines::from_timeout(t, Duration::from_secs(12));
        assert_eq!(short.expires_at(), Timestamp::from_millis(1_012_000));
        assert_eq!(short.nudge_at(), Timestamp::from_millis(1_012_000 - 2_400));
        // ⌈timeout / 5⌉ rounds up.
        let odd = Deadlines::from_timeout(t, Duration::from_millis(7));
        assert_eq!(odd.nudge_at(), Timestamp::from_millis(1_000_007 - 2));
        // The nudge lead is capped at a minute.
        let long = Deadlines::from_timeout(t, Duration::from_hours(1));
        assert_eq!(long.expires_at().as_millis() - long.nudge_at().as_millis(), 60_000);
        let zero = Deadlines::from_timeout(t, Duration::ZERO);
        assert_eq!((zero.nudge_at(), zero.expires_at()), (t, t));
    }

    #[test]
    fn until_saturates() {
        let (a, b) = (Timestamp::from_millis(10), Timestamp::from_millis(25));
        assert_eq!(a.until(b), Duration::from_millis(15));
        assert_eq!(b.until(a), Duration::ZERO);
    }
}
