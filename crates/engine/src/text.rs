//! Small shared pieces of plan output: [`Text`], the hash maps the planner indexes with, and
//! times for people.

use serde::Serialize;
use std::fmt;
use std::sync::Arc;

pub use rustc_hash::{FxHashMap as FxMap, FxHashSet as FxSet};

/// Explanation text in a plan ([`TargetPlan`](super::plan::TargetPlan)): a `str` that is static or shared when many targets say
/// the same thing ("healthy", a group's policy), so a pass does not allocate it per target.
/// Reads, compares, prints and serialises exactly like a `String` with the same text.
#[derive(Clone)]
pub enum Text {
    Static(&'static str),
    Shared(Arc<str>),
    Owned(String),
}

impl Text {
    pub fn as_str(&self) -> &str {
        match self {
            Text::Static(s) => s,
            Text::Shared(s) => s,
            Text::Owned(s) => s,
        }
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl Default for Text {
    fn default() -> Self {
        Text::Static("")
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text::Owned(s)
    }
}

impl From<&'static str> for Text {
    fn from(s: &'static str) -> Self {
        Text::Static(s)
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for Text {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The last second an RFC 3339 date can name: 9999-12-31T23:59:59Z.
pub const LAST_CALENDAR_SECOND: i64 = 253_402_300_799;

/// A time for people: RFC 3339 in UTC (the `Z` says so).
///
/// Marks are written by other tools too, and a mark's time is honoured whatever its size (a
/// suspend "until year 10000" still suspends). The calendar does not reach every such time, so
/// one outside 1970 … 9999 is shown as its Unix seconds in GNU date's `@N` form instead of
/// failing: showing a fleet must never depend on what someone else wrote into one mark.
pub fn rfc3339(epoch: i64) -> String {
    if (0..=LAST_CALENDAR_SECOND).contains(&epoch) {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(epoch.unsigned_abs());
        humantime::format_rfc3339_seconds(t).to_string()
    } else {
        format!("@{epoch}")
    }
}

/// A time given on the command line: RFC 3339 (`2026-12-01T00:00:00Z`, any offset) or Unix
/// seconds. Only times a date can name (1970 up to the end of year 9999) are taken: whatever the
/// tool is told, it writes no time into a mark that it, or another tool, could not show.
pub fn parse_time(text: &str) -> Result<i64, String> {
    let epoch = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse::<i64>().unwrap_or(i64::MAX)
    } else {
        text.parse::<jiff::Timestamp>()
            .map_err(|e| {
                format!(
                    "{text:?} is neither RFC 3339 (e.g. 2026-12-01T00:00:00Z) nor Unix seconds: {e}"
                )
            })?
            .as_second()
    };
    if !(0..=LAST_CALENDAR_SECOND).contains(&epoch) {
        return Err(format!(
            "{text:?} is outside 1970-01-01T00:00:00Z … 9999-12-31T23:59:59Z, the times a date can name"
        ));
    }
    Ok(epoch)
}

/// A duration: humantime's (`90s`, `5m`, `2h 30m`, `3days`) or plain seconds (`60`), as cron
/// and systemd users write intervals.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse::<u64>()
            .map(std::time::Duration::from_secs)
            .map_err(|_| format!("{text:?} seconds is more than a duration can hold"));
    }
    humantime::parse_duration(text)
        .map_err(|e| format!("{text:?} is not a duration (e.g. 60, 90s, 5m, 2h 30m): {e}"))
}

#[cfg(test)]
mod time_tests {
    use super::*;

    #[test]
    fn every_time_shows_and_the_calendar_ones_as_dates() {
        let cases = [
            (0, "1970-01-01T00:00:00Z"),
            (1_800_000_000, "2027-01-15T08:00:00Z"),
            (LAST_CALENDAR_SECOND, "9999-12-31T23:59:59Z"),
            (LAST_CALENDAR_SECOND + 1, "@253402300800"),
            (i64::MAX, "@9223372036854775807"),
            (-1, "@-1"),
            (i64::MIN, "@-9223372036854775808"),
        ];
        for (epoch, want) in cases {
            assert_eq!(rfc3339(epoch), want, "{epoch}");
        }
    }

    #[test]
    fn a_time_given_is_rfc3339_or_seconds_within_the_calendar() {
        let cases: [(&str, Result<i64, &str>); 9] = [
            ("1800000000", Ok(1_800_000_000)),
            ("0", Ok(0)),
            ("2027-01-15T08:00:00Z", Ok(1_800_000_000)),
            ("2027-01-15T09:00:00+01:00", Ok(1_800_000_000)),
            ("253402300800", Err("outside 1970-01-01T00:00:00Z")),
            ("99999999999999999999", Err("outside")),
            ("-5", Err("neither RFC 3339")),
            ("1969-12-31T23:59:59Z", Err("outside")),
            (
                "tomorrow",
                Err("neither RFC 3339 (e.g. 2026-12-01T00:00:00Z) nor Unix seconds"),
            ),
        ];
        for (text, want) in cases {
            match (parse_time(text), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{text}"),
                (Err(e), Err(want)) => assert!(e.contains(want), "{text}: {e}"),
                (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn a_duration_is_humantime_or_plain_seconds() {
        use std::time::Duration;
        let cases = [
            ("60", Some(Duration::from_secs(60))),
            ("5m", Some(Duration::from_secs(300))),
            ("2h 30m", Some(Duration::from_secs(9000))),
            ("", None),
            ("60 parsecs", None),
            ("99999999999999999999999", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_duration(text).ok(), want, "{text}");
        }
    }
}
