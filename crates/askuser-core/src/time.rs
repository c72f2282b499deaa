//! Points in time on the wire ([`Timestamp`], RFC 3339 UTC) and the deadlines a request carries
//! ([`Deadline`]: `asked_at`, `nudge_at`, `expires_at`).

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A point in time, to the millisecond, written as RFC 3339 in UTC: `2026-11-30T18:30:22.123Z`.
///
/// Reading accepts any RFC 3339 date-time (`Z` or a numeric offset, any number of fraction digits,
/// kept to the millisecond); writing always gives UTC with three fraction digits, so a written
/// timestamp reads back equal.
///
/// ```
/// use askuser_core::Timestamp;
///
/// let t: Timestamp = "2026-11-30T19:30:22.5+01:00".parse().unwrap();
/// assert_eq!(t.to_string(), "2026-11-30T18:30:22.500Z");
/// assert_eq!(t.unix_millis(), 1_796_063_422_500);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The current time, from the system clock.
    #[must_use]
    pub fn now() -> Self {
        Self::from_system_time(SystemTime::now())
    }

    /// `time`, truncated to the millisecond.
    #[must_use]
    pub fn from_system_time(time: SystemTime) -> Self {
        let millis = match time.duration_since(UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
            Err(before) => i64::try_from(before.duration().as_millis()).map_or(i64::MIN, |m| -m),
        };
        Self(millis)
    }

    /// Milliseconds since 1970-01-01T00:00:00Z.
    #[must_use]
    pub fn from_unix_millis(millis: i64) -> Self {
        Self(millis)
    }

    /// Milliseconds since 1970-01-01T00:00:00Z.
    #[must_use]
    pub fn unix_millis(self) -> i64 {
        self.0
    }

    /// The same point as a [`SystemTime`].
    #[must_use]
    pub fn to_system_time(self) -> SystemTime {
        let magnitude = Duration::from_millis(self.0.unsigned_abs());
        if self.0 >= 0 { UNIX_EPOCH + magnitude } else { UNIX_EPOCH - magnitude }
    }

    /// This point plus `duration` (saturating).
    #[must_use]
    pub fn plus(self, duration: Duration) -> Self {
        Self(self.0.saturating_add(i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)))
    }

    /// This point minus `duration` (saturating).
    #[must_use]
    pub fn minus(self, duration: Duration) -> Self {
        Self(self.0.saturating_sub(i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)))
    }

    /// How long from `self` until `later`; zero when `later` is not later.
    #[must_use]
    pub fn until(self, later: Self) -> Duration {
        Duration::from_millis(u64::try_from(later.0.saturating_sub(self.0)).unwrap_or(0))
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01 (`civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.0.div_euclid(86_400_000);
        let in_day = self.0.rem_euclid(86_400_000);
        let (year, month, day) = civil_from_days(days);
        let (hour, minute) = (in_day / 3_600_000, in_day / 60_000 % 60);
        let (second, millis) = (in_day / 1000 % 60, in_day % 1000);
        write!(f, "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z")
    }
}

/// A string that is not an RFC 3339 date-time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an RFC 3339 date-time such as 2026-11-30T18:30:22Z: {input:?}")]
pub struct TimestampError {
    input: String,
}

impl FromStr for Timestamp {
    type Err = TimestampError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s).ok_or_else(|| TimestampError { input: s.chars().take(64).collect() })
    }
}

#[expect(clippy::many_single_char_names, reason = "a byte-level parser: b the bytes, i the position")]
fn parse(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    let digits = |from: usize, len: usize| -> Option<i64> {
        let part = b.get(from..from + len)?;
        part.iter().try_fold(0_i64, |acc, &d| d.is_ascii_digit().then(|| acc * 10 + i64::from(d - b'0')))
    };
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    if !(at(4, b'-')
        && at(7, b'-')
        && matches!(b.get(10), Some(b'T' | b't' | b' '))
        && at(13, b':')
        && at(16, b':'))
    {
        return None;
    }
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    let (hour, minute, second) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&month) || day < 1 || day > month_days[usize::try_from(month - 1).ok()?] {
        return None;
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut i = 19;
    let mut millis = 0;
    if at(i, b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            if i - start < 3 {
                millis = millis * 10 + i64::from(b[i] - b'0');
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        for _ in (i - start)..3 {
            millis *= 10;
        }
    }
    let offset_minutes = match b.get(i) {
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(&sign @ (b'+' | b'-')) if i + 6 == b.len() && at(i + 3, b':') => {
            let (h, m) = (digits(i + 1, 2)?, digits(i + 4, 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            if sign == b'+' { h * 60 + m } else { -(h * 60 + m) }
        }
        _ => return None,
    };
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second.min(59)
        - offset_minutes * 60;
    Some(Timestamp(seconds * 1000 + millis))
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// When a request was asked, and (with a timeout) when its asker should be reminded and when it
/// expires: docs/contract.md §10's deadline stamps, carried by [`AskUserRequest`](crate::AskUserRequest) and
/// by a pending question.
///
/// `expires_at` is `asked_at + timeout`; `nudge_at` is `expires_at − min(60 s, ⌈timeout / 5⌉)`
/// (whole seconds), never before `asked_at`. Without a timeout only `asked_at` is set.
///
/// ```
/// use std::time::Duration;
/// use askuser_core::{Deadline, Timestamp};
///
/// let asked = Timestamp::from_unix_millis(0);
/// let deadline = Deadline::new(asked, Some(Duration::from_secs(120)));
/// assert_eq!(deadline.expires_at().unwrap().to_string(), "1970-01-01T00:02:00.000Z");
/// assert_eq!(deadline.nudge_at().unwrap().to_string(), "1970-01-01T00:01:36.000Z");
/// assert!(!deadline.is_expired(Timestamp::from_unix_millis(119_999)));
/// assert!(deadline.is_expired(Timestamp::from_unix_millis(120_000)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(clippy::struct_field_names, reason = "the wire names: asked_at, nudge_at, expires_at")]
pub struct Deadline {
    asked_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nudge_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at: Option<Timestamp>,
}

/// The longest a nudge comes before the deadline.
const MAX_NUDGE_LEAD: Duration = Duration::from_mins(1);

impl Deadline {
    /// The stamps for a request asked at `asked_at` and waited on for `timeout` (none: no expiry).
    #[must_use]
    pub fn new(asked_at: Timestamp, timeout: Option<Duration>) -> Self {
        let Some(timeout) = timeout else {
            return Self { asked_at, nudge_at: None, expires_at: None };
        };
        let expires_at = asked_at.plus(timeout);
        let fifth_up = Duration::from_secs(timeout.as_millis().div_ceil(5000).try_into().unwrap_or(u64::MAX));
        let nudge_at = expires_at.minus(fifth_up.min(MAX_NUDGE_LEAD)).max(asked_at);
        Self { asked_at, nudge_at: Some(nudge_at), expires_at: Some(expires_at) }
    }

    /// The stamps exactly as given, as read back from a store. `nudge_at` and `expires_at` go
    /// together.
    #[must_use]
    pub fn from_parts(asked_at: Timestamp, nudge_and_expiry: Option<(Timestamp, Timestamp)>) -> Self {
        Self { asked_at, nudge_at: nudge_and_expiry.map(|p| p.0), expires_at: nudge_and_expiry.map(|p| p.1) }
    }

    /// When the request was built.
    #[must_use]
    pub fn asked_at(&self) -> Timestamp {
        self.asked_at
    }

    /// When to remind whoever should answer; `None` without a timeout.
    #[must_use]
    pub fn nudge_at(&self) -> Option<Timestamp> {
        self.nudge_at
    }

    /// When the request stops being answerable; `None` without a timeout.
    #[must_use]
    pub fn expires_at(&self) -> Option<Timestamp> {
        self.expires_at
    }

    /// Whether the request is past its deadline at `now` (an expired question is never answerable).
    #[must_use]
    pub fn is_expired(&self, now: Timestamp) -> bool {
        self.expires_at.is_some_and(|at| now >= at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn round(text: &str, written: &str) {
        let t: Timestamp = text.parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.to_string(), written);
        assert_eq!(written.parse::<Timestamp>(), Ok(t));
    }

    #[test]
    fn rfc3339_round_trips() {
        round("1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000Z");
        round("2026-11-30T18:30:22.123456Z", "2026-11-30T18:30:22.123Z");
        round("2000-02-29T23:59:59.9-00:30", "2000-03-01T00:29:59.900Z");
        round("1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999Z");
        round("2400-12-31t00:00:00z", "2400-12-31T00:00:00.000Z");
        for bad in [
            "",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-01-01T00:00:00",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00+1:00",
            "x026-01-01T00:00:00Z",
        ] {
            assert!(bad.parse::<Timestamp>().is_err(), "{bad}");
        }
        let now = SystemTime::now();
        let t = Timestamp::from_system_time(now);
        assert!(now.duration_since(t.to_system_time()).unwrap() < Duration::from_millis(1));
    }

    #[test]
    fn nudges_come_a_fifth_before_the_deadline_at_most_a_minute() {
        let asked = Timestamp::from_unix_millis(1_000_000);
        let lead = |secs: f64| {
            let d = Deadline::new(asked, Some(Duration::from_secs_f64(secs)));
            d.expires_at().unwrap().unix_millis() - d.nudge_at().unwrap().unix_millis()
        };
        assert_eq!(lead(300.0), 60_000);
        assert_eq!(lead(3600.0), 60_000);
        assert_eq!(lead(100.0), 20_000);
        assert_eq!(lead(7.0), 2000);
        // Never before the question was asked.
        assert_eq!(lead(0.5), 500);
        assert_eq!(Deadline::new(asked, None).expires_at(), None);
    }
}
