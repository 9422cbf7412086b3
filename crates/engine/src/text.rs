//! Small shared pieces of plan output: [`Text`], the hash maps the planner indexes with, and
//! times for people.

use serde::Serialize;
use std::fmt;
use std::sync::Arc;

pub use rustc_hash::{FxHashMap as FxMap, FxHashSet as FxSet};

/// `text` as it may be printed: every control character (a newline, a carriage return, an
/// escape sequence's ESC, DEL) written as Rust writes it in a string (`\n`, `\u{1b}`), the rest
/// as it is. Names come from the fleet, and a name with a newline in it added a line to
/// `status -o name` and forged log lines; a terminal obeyed an escape sequence in one.
pub fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

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

/// Why a time or a duration given on the command line or in a file was refused; each names
/// the text and says what is taken instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    #[error(
        "{text:?} is neither RFC 3339 (e.g. 2026-12-01T00:00:00Z, at most \
         9999-12-31T23:59:59Z) nor Unix seconds: {why}"
    )]
    NotATime { text: String, why: Rfc3339Error },
    #[error(
        "{text:?} is outside 1970-01-01T00:00:00Z … 9999-12-31T23:59:59Z (Unix seconds 0 … \
         {LAST_CALENDAR_SECOND}), the times a date can name: give one within"
    )]
    OutsideCalendar { text: String },
    #[error("{text:?} is not a duration (e.g. 60, 90s, 5m, 2h 30m): {why}")]
    NotADuration { text: String, why: String },
    #[error(
        "{text:?} is longer than 100 years ({} seconds), the longest duration autorepair \
         takes: give a shorter one",
        MAX_DURATION.as_secs()
    )]
    TooLong { text: String },
    #[error(
        "{text:?} is shorter than 1s, the shortest time between two passes (a loop that \
         never waits reads and saves the fleet without pause): give 1s or more"
    )]
    IntervalTooShort { text: String },
    #[error("{text:?} is less than a second, which means nothing here: give 1s or more")]
    BelowASecond { text: String },
}

/// Why a text is not an RFC 3339 time (within [`TimeError::NotATime`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rfc3339Error {
    /// The parser's own account of where the text goes wrong.
    #[error("{0}")]
    Syntax(String),
    #[error("it needs a time of day and an offset (Z, +01:00)")]
    NoTimeOrOffset,
}

/// A time given on the command line or in a file: RFC 3339 (`2026-12-01T00:00:00Z`, any offset)
/// or Unix seconds. Only times a date can name (1970 up to the end of year 9999, the range
/// [`rfc3339`] prints as a date) are taken: whatever the tool is told, it writes no time into a
/// mark that it, or another tool, could not show, and adding a [`parse_duration`] to one cannot
/// overflow.
pub fn parse_time(text: &str) -> Result<i64, TimeError> {
    let epoch = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse::<i64>().unwrap_or(i64::MAX)
    } else {
        rfc3339_epoch(text).map_err(|why| TimeError::NotATime {
            text: text.to_owned(),
            why,
        })?
    };
    if !(0..=LAST_CALENDAR_SECOND).contains(&epoch) {
        return Err(TimeError::OutsideCalendar {
            text: text.to_owned(),
        });
    }
    Ok(epoch)
}

/// The Unix seconds of an RFC 3339 time, rounded down. Not through `jiff::Timestamp`: its range
/// ends at 9999-12-30T22:00:00Z (so that every offset can show it), a day short of the last
/// second [`rfc3339`] prints; the civil date and time reach the end of 9999, and the offset is
/// applied here.
fn rfc3339_epoch(text: &str) -> Result<i64, Rfc3339Error> {
    let pieces = jiff::fmt::temporal::Pieces::parse(text)
        .map_err(|e| Rfc3339Error::Syntax(e.to_string()))?;
    let (Some(time), Some(offset)) = (pieces.time(), pieces.to_numeric_offset()) else {
        return Err(Rfc3339Error::NoTimeOrOffset);
    };
    let since = pieces
        .date()
        .to_datetime(time)
        .duration_since(jiff::civil::DateTime::constant(1970, 1, 1, 0, 0, 0, 0));
    let floor = since.as_secs() - i64::from(since.subsec_nanos() < 0);
    Ok(floor - i64::from(offset.seconds()))
}

/// The longest duration autorepair takes: 100 years (of 365.25 days, as humantime counts `1y`).
/// Longer than any wait, timeout or retention means anything, and short enough that adding it to
/// any time [`parse_time`] takes, or to a clock, cannot overflow.
pub const MAX_DURATION: std::time::Duration = std::time::Duration::from_secs(100 * 31_557_600);

/// A duration given on the command line or in the config file: humantime's (`90s`, `5m`,
/// `2h 30m`, `3days`) or plain seconds (`60`), as cron and systemd users write intervals; at
/// most [`MAX_DURATION`].
pub fn parse_duration(text: &str) -> Result<std::time::Duration, TimeError> {
    let duration = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse::<u64>()
            .map(std::time::Duration::from_secs)
            .unwrap_or(std::time::Duration::MAX)
    } else {
        humantime::parse_duration(text).map_err(|e| TimeError::NotADuration {
            text: text.to_owned(),
            why: e.to_string(),
        })?
    };
    if duration > MAX_DURATION {
        return Err(TimeError::TooLong {
            text: text.to_owned(),
        });
    }
    Ok(duration)
}

/// The shortest time between the passes of a loop (`--interval`).
pub const MIN_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// A loop's `--interval`: a [`parse_duration`] of at least [`MIN_INTERVAL`], since a loop that
/// never waits reads (and saves) the fleet without pause.
pub fn parse_interval(text: &str) -> Result<std::time::Duration, TimeError> {
    let interval = parse_duration(text)?;
    if interval < MIN_INTERVAL {
        return Err(TimeError::IntervalTooShort {
            text: text.to_owned(),
        });
    }
    Ok(interval)
}

/// A [`parse_duration`] of at least a second, for a value that means nothing below it: a
/// suspend for no time suspends nothing, and a timeout of 0 fails every request at once.
pub fn parse_positive_duration(text: &str) -> Result<std::time::Duration, TimeError> {
    let duration = parse_duration(text)?;
    if duration < std::time::Duration::from_secs(1) {
        return Err(TimeError::BelowASecond {
            text: text.to_owned(),
        });
    }
    Ok(duration)
}

/// A config duration read by [`parse_positive_duration`]; written as [`duration_serde`] writes.
pub mod positive_duration_serde {
    use serde::{Deserialize, Deserializer};
    use std::time::Duration;

    pub use super::duration_serde::serialize;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        super::parse_positive_duration(&text).map_err(serde::de::Error::custom)
    }
}

/// A duration in the config file (`#[serde(with = "duration_serde")]`): read by
/// [`parse_duration`], so with its bound, and written as humantime writes it (the man page's
/// defaults).
pub mod duration_serde {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&humantime::format_duration(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        super::parse_duration(&text).map_err(serde::de::Error::custom)
    }
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
        let cases: [(&str, Result<i64, &str>); 18] = [
            ("1800000000", Ok(1_800_000_000)),
            // The whole range rfc3339 prints, in both forms (the last day is no day short in RFC 3339).
            ("253402300799", Ok(LAST_CALENDAR_SECOND)),
            ("9999-12-31T23:59:59Z", Ok(LAST_CALENDAR_SECOND)),
            ("9999-12-30T22:00:01Z", Ok(LAST_CALENDAR_SECOND - 93_598)),
            ("9999-12-31T23:59:59-00:00", Ok(LAST_CALENDAR_SECOND)),
            ("10000-01-01T00:00:00Z", Err("neither RFC 3339")),
            ("9999-12-31T23:59:59-01:00", Err("outside")),
            ("1970-01-01T01:00:00+01:00", Ok(0)),
            ("2027-01-15T08:00:00.999Z", Ok(1_800_000_000)),
            ("2027-01-15T08:00:00", Err("an offset")),
            ("0", Ok(0)),
            ("2027-01-15T08:00:00Z", Ok(1_800_000_000)),
            ("2027-01-15T09:00:00+01:00", Ok(1_800_000_000)),
            ("253402300800", Err("outside 1970-01-01T00:00:00Z")),
            ("99999999999999999999", Err("outside")),
            ("-5", Err("neither RFC 3339")),
            ("1969-12-31T23:59:59Z", Err("outside")),
            (
                "tomorrow",
                Err("neither RFC 3339 (e.g. 2026-12-01T00:00:00Z, at most"),
            ),
        ];
        assert_eq!(
            parse_time("2027-01-15T08:00:00"),
            Err(TimeError::NotATime {
                text: "2027-01-15T08:00:00".into(),
                why: Rfc3339Error::NoTimeOrOffset,
            })
        );
        for (text, want) in cases {
            match (parse_time(text), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{text}"),
                (Err(e), Err(want)) => assert!(e.to_string().contains(want), "{text}: {e}"),
                (got, want) => panic!("{text}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn a_duration_is_humantime_or_plain_seconds_up_to_100_years() {
        use std::time::Duration;
        let cases = [
            ("60", Some(Duration::from_secs(60))),
            ("5m", Some(Duration::from_secs(300))),
            ("2h 30m", Some(Duration::from_secs(9000))),
            ("", None),
            ("60 parsecs", None),
            ("99999999999999999999999", None),
            ("3155760000", Some(MAX_DURATION)),
            ("100y", Some(MAX_DURATION)),
            // Each of these would overflow a clock or wrap a retention unless refused.
            ("3155760001", None),
            ("18446744073709551615", None),
            ("9223372036854775807s", None),
            ("292277024626y", None),
            ("101y", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_duration(text).ok(), want, "{text}");
        }
        let e = parse_duration("101y").expect_err("over the bound");
        assert!(
            matches!(&e, TimeError::TooLong { text } if text == "101y"),
            "{e:?}"
        );
        assert!(e.to_string().contains("longer than 100 years"), "{e}");
    }

    #[test]
    fn an_interval_is_a_duration_of_at_least_a_second() {
        use std::time::Duration;
        let cases = [
            ("0", None),
            ("0s", None),
            ("999ms", None),
            ("1s", Some(Duration::from_secs(1))),
            ("5m", Some(Duration::from_secs(300))),
            ("101y", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_interval(text).ok(), want, "{text}");
        }
    }

    #[test]
    fn a_config_duration_is_read_with_the_same_bound_and_written_as_humantime() {
        #[derive(serde::Serialize, serde::Deserialize)]
        struct Key {
            #[serde(with = "duration_serde")]
            d: std::time::Duration,
        }
        let read = |text: &str| serde_json::from_value::<Key>(serde_json::json!({ "d": text }));
        assert_eq!(read("2h").expect("2h").d.as_secs(), 7200);
        let e = read("18446744073709551615s").err().expect("over the bound");
        assert!(e.to_string().contains("longer than 100 years"), "{e}");
        let written = serde_json::to_value(Key {
            d: std::time::Duration::from_secs(90),
        });
        assert_eq!(written.expect("serialises")["d"], "1m 30s");
    }
}
