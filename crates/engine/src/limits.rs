//! The limits the planner enforces, with the defaults documented in `contrib/autorepair.toml`
//! and the man page.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// The config file reads them as they are (its `[limits]` section): unknown keys are refused,
/// and a key left out keeps its default. The two mass-failure limits may also be given as a
/// share of the scope (`"40%"`, as a MachineHealthCheck's `maxUnhealthy`): see [`Share`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "LimitsFile", into = "LimitsFile")]
pub struct Limits {
    /// More down failure domains than this in one scope at once is a mass failure there:
    /// nothing is written or started for its targets until fewer are down.
    pub max_down_nodes_per_group: usize,
    /// The same, counted over the whole fleet: beyond it, the pass writes and starts nothing.
    pub max_down_nodes: usize,
    /// `max_down_nodes_per_group` as a share of the scope's failure domains (the config file's
    /// `"P%"` form, which leaves the number unbounded). Where both are set the stricter holds.
    pub max_down_nodes_per_group_share: Option<Share>,
    /// `max_down_nodes` as a share of the fleet's failure domains, likewise.
    pub max_down_nodes_share: Option<Share>,
    /// Repairs run for at most this many failure domains at once; all the repairs of one
    /// domain start together. 0 starts nothing new.
    pub max_domains_under_repair: usize,
    /// Optional cap on repairs under way at once, fleet-wide, whatever their domain.
    pub max_pending: Option<usize>,
    /// Optional brake in targets: if more than this need repair at once, start nothing.
    pub max_broken: Option<usize>,
    /// At most this many writes (mark changes and operations) per pass; what does not fit
    /// waits for the next pass. A target's writes go together or wait together, taken in this
    /// order: repairs under way (their bookkeeping and next steps), repair starts, the rest
    /// (pruned results, expired suspends), then the scopes' changes. One exception, so that
    /// no repair under way stays pending forever: the first repair under way goes through
    /// whole even when its writes alone are more (a start makes up to 5: its pending mark, its
    /// operations, the mark that records them, the removal of what they supersede). So 0
    /// starts no repair and changes nothing else, while repairs under way carry on, one per
    /// pass.
    pub max_writes_per_pass: usize,
    /// Success and enoperm results older than this are removed. Failures never are.
    pub result_retention: Duration,
    /// At most this many success/enoperm results are kept per target (newest first).
    pub max_results: usize,
    /// A repair that failed for lack of resources is retried this long after its operation ended.
    pub retry_interval: Duration,
    /// A repair still waiting for resources this long after it started is a failure.
    pub max_repair_age: Duration,
    /// A target whose repair failed is repaired again up to this many times before its
    /// failures park it for a person (a target may say its own: a remediation request's retry
    /// limit). 0 parks it at the first failure.
    pub retries: u32,
    /// How long after a failure the first retry waits; each next one waits twice as long.
    pub retry_backoff: Duration,
    /// A target healthy this long after a successful repair starts its count of failures
    /// afresh; broken again sooner, the repair did not really work and its failures still
    /// count.
    pub min_healthy: Duration,
    /// At most this many failure domains newly taken under repair in any window of this
    /// length, fleet-wide (`"2/1h"`, or a share of the fleet's domains: `"5%/1h"`).
    pub max_repair_rate: Option<Rate>,
    /// The same in each limiter scope (a node group, a zone, a rack).
    pub max_repair_rate_per_group: Option<Rate>,
    /// After a mass failure in a scope (more down domains than `max_down_nodes_per_group`,
    /// or fleet-wide than `max_down_nodes`), no new repair starts there until this long after
    /// it ended, so that the tail of an outage is not repaired while the rest comes back.
    pub storm_cooldown: Option<Duration>,
    /// A repair retried after failures (`retries`) starts one level above the highest that
    /// failed in a row, where the policy allows one and the family can run it on the target;
    /// else at the same level.
    pub escalate: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_down_nodes_per_group: 2,
            max_down_nodes: 4,
            max_down_nodes_per_group_share: None,
            max_down_nodes_share: None,
            max_domains_under_repair: 1,
            max_pending: None,
            max_broken: None,
            max_writes_per_pass: 500,
            result_retention: Duration::from_secs(7 * 86400),
            max_results: 20,
            retry_interval: Duration::from_secs(15 * 60),
            max_repair_age: Duration::from_secs(86400),
            retries: 0,
            retry_backoff: Duration::from_secs(10 * 60),
            min_healthy: Duration::from_secs(3600),
            max_repair_rate: None,
            max_repair_rate_per_group: None,
            storm_cooldown: None,
            escalate: false,
        }
    }
}

impl Limits {
    /// The per-scope mass-failure limit as configured.
    pub fn down_per_group(&self) -> Ceiling {
        Ceiling::new(
            self.max_down_nodes_per_group,
            self.max_down_nodes_per_group_share,
        )
    }

    /// The fleet-wide mass-failure limit as configured.
    pub fn down_in_fleet(&self) -> Ceiling {
        Ceiling::new(self.max_down_nodes, self.max_down_nodes_share)
    }

    /// Whether a limit depends on how many failure domains a scope holds (the planner counts
    /// them only then).
    pub fn has_shares(&self) -> bool {
        self.max_down_nodes_per_group_share.is_some()
            || self.max_down_nodes_share.is_some()
            || [self.max_repair_rate, self.max_repair_rate_per_group]
                .iter()
                .flatten()
                .any(|r| matches!(r.bound, Bound::Share(_)))
    }
}

/// A share of a scope, in whole percent (0 to 100).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Share(u8);

impl Share {
    pub fn percent(p: u8) -> Option<Share> {
        (p <= 100).then_some(Share(p))
    }

    pub fn as_percent(self) -> u8 {
        self.0
    }

    /// The most this share allows out of `total`, rounded down as Cluster API's
    /// MachineHealthCheck rounds its `maxUnhealthy` (`GetScaledValueFromIntOrPercent` without
    /// rounding up): 40% of 4 is 1, 40% of 2 is 0.
    pub fn of(self, total: usize) -> usize {
        // In u128: a fleet of usize::MAX domains times 100 still fits.
        (total as u128 * u128::from(self.0) / 100) as usize
    }
}

impl fmt::Display for Share {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", self.0)
    }
}

/// A mass-failure limit: a number, a share of the scope, or both (the stricter holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ceiling {
    pub count: usize,
    pub share: Option<Share>,
}

impl Ceiling {
    fn new(count: usize, share: Option<Share>) -> Self {
        Ceiling { count, share }
    }

    /// How many may be down at once in a scope of `total` failure domains.
    pub fn max(self, total: usize) -> usize {
        self.share
            .map_or(self.count, |s| s.of(total).min(self.count))
    }

    /// The limit as an operator reads it against a scope of `total`: `4`, or `40% of 5 = 2`.
    pub fn describe(self, total: usize) -> String {
        match self.share {
            None => self.count.to_string(),
            Some(s) if s.of(total) <= self.count => format!("{s} of {total} = {}", s.of(total)),
            Some(s) => format!("{} (stricter than {s} of {total})", self.count),
        }
    }
}

/// What a rate is written as, for the end of each [`RateError`].
const RATE_FORM: &str =
    "give it as N/DURATION (\"2/1h\": two failure domains an hour) or P%/DURATION (\"5%/1h\")";

/// Why a text is not a [`Rate`]: each names the text or the part of it that is wrong, and
/// says what is accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RateError {
    #[error("{text:?} is not a rate: {RATE_FORM}")]
    NotARate { text: String },
    #[error("{0}; {RATE_FORM}")]
    Bound(#[from] BoundError),
    #[error("{0}; {RATE_FORM}")]
    Window(#[from] crate::text::TimeError),
    #[error("{text:?} has a window of no time: {RATE_FORM}, with a window of a second or more")]
    NoWindow { text: String },
}

/// A text that is neither a number of failure domains nor a share of them.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{text:?} is neither a number of failure domains (4) nor a share of them from 0% to 100% (\"40%\")"
)]
pub struct BoundError {
    pub text: String,
}

/// A rate limit: at most `bound` failure domains newly taken under repair in any sliding
/// window of `window` (the config file's `"2/1h"` or `"5%/1h"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    pub bound: Bound,
    pub window: Duration,
}

impl Rate {
    /// Reads `"N/DURATION"` or `"P%/DURATION"`; the error says what is accepted.
    pub fn parse(text: &str) -> Result<Rate, RateError> {
        let (bound, window) = text.split_once('/').ok_or_else(|| RateError::NotARate {
            text: text.to_owned(),
        })?;
        let bound = Bound::parse(bound)?;
        let window = crate::text::parse_duration(window.trim())?;
        if window.as_secs() == 0 {
            return Err(RateError::NoWindow {
                text: text.to_owned(),
            });
        }
        Ok(Rate { bound, window })
    }

    /// How many domains the window allows in a scope of `total` failure domains.
    pub fn max(self, total: usize) -> usize {
        match self.bound {
            Bound::Count(n) => n,
            Bound::Share(s) => s.of(total),
        }
    }

    /// The window in the clock's seconds.
    pub fn window_secs(self) -> i64 {
        i64::try_from(self.window.as_secs()).unwrap_or(i64::MAX)
    }

    /// As an operator reads it against a scope of `total`: `2/1h`, or `5%/1h (of 40 = 2)`.
    pub fn describe(self, total: usize) -> String {
        match self.bound {
            Bound::Count(_) => self.to_string(),
            Bound::Share(_) => format!("{self} ({} of {total})", self.max(total)),
        }
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}",
            self.bound,
            humantime::format_duration(self.window)
        )
    }
}

/// The config file's form of an optional [`Rate`], naming the key in its error.
mod rate_serde {
    use super::Rate;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(r: &Option<Rate>, s: S) -> Result<S::Ok, S::Error> {
        match r {
            Some(r) => s.collect_str(r),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Rate>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Other(serde::de::IgnoredAny),
        }
        match Option::<Raw>::deserialize(d)? {
            Some(Raw::Text(text)) => Rate::parse(&text)
                .map(Some)
                .map_err(serde::de::Error::custom),
            Some(Raw::Other(_)) => Err(serde::de::Error::custom(
                "expected a rate in quotes: \"2/1h\" (two failure domains an hour) or \"5%/1h\"",
            )),
            None => Ok(None),
        }
    }
}

/// The config file's form of the optional storm cool-down: a duration (`"30min"`), or none.
mod cooldown_serde {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => crate::text::duration_serde::serialize(d, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        #[derive(Deserialize)]
        struct Given(#[serde(with = "crate::text::positive_duration_serde")] Duration);
        Ok(Option::<Given>::deserialize(d)?.map(|g| g.0))
    }
}

/// A limit as the config file gives it: a number (`4`) or a share (`"40%"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Count(usize),
    Share(Share),
}

impl Bound {
    /// Reads `"40%"` or `"4"`; the error says what is accepted.
    pub fn parse(text: &str) -> Result<Bound, BoundError> {
        let t = text.trim();
        let bad = || BoundError {
            text: text.to_owned(),
        };
        match t.strip_suffix('%') {
            Some(p) => p
                .trim()
                .parse::<u8>()
                .ok()
                .and_then(Share::percent)
                .map(Bound::Share)
                .ok_or_else(bad),
            None => t.parse().map(Bound::Count).map_err(|_| bad()),
        }
    }

    fn split(self) -> (usize, Option<Share>) {
        match self {
            Bound::Count(n) => (n, None),
            Bound::Share(s) => (usize::MAX, Some(s)),
        }
    }

    fn join(count: usize, share: Option<Share>) -> Bound {
        // A share stands for the key when the number is unbounded (the config file's form);
        // both set is a program's choice, and the number is what the file can say of it.
        match share {
            Some(s) if count == usize::MAX => Bound::Share(s),
            _ => Bound::Count(count),
        }
    }

    /// Deserializes `key`'s value, naming the key in the error.
    fn read<'de, D: Deserializer<'de>>(d: D, key: &str) -> Result<Bound, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Count(u64),
            Text(String),
            Other(serde::de::IgnoredAny),
        }
        let bad = |why: String| serde::de::Error::custom(format!("[limits] {key}: {why}"));
        match Raw::deserialize(d)? {
            Raw::Count(n) => usize::try_from(n)
                .map(Bound::Count)
                .map_err(|_| bad(format!("{n} is too large"))),
            Raw::Text(t) => Bound::parse(&t).map_err(|e| bad(e.to_string())),
            Raw::Other(_) => Err(bad(
                "expected a number of failure domains (4) or a share of them (\"40%\")".into(),
            )),
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::Count(n) => write!(f, "{n}"),
            Bound::Share(s) => write!(f, "{s}"),
        }
    }
}

impl Serialize for Bound {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Bound::Count(n) => s.serialize_u64(*n as u64),
            Bound::Share(p) => s.collect_str(p),
        }
    }
}

fn per_group<'de, D: Deserializer<'de>>(d: D) -> Result<Bound, D::Error> {
    Bound::read(d, "max_down_nodes_per_group")
}

fn in_fleet<'de, D: Deserializer<'de>>(d: D) -> Result<Bound, D::Error> {
    Bound::read(d, "max_down_nodes")
}

/// [`Limits`] as the config file writes them: one key per limit, a mass-failure limit in
/// either form.
#[derive(Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct LimitsFile {
    #[serde(deserialize_with = "per_group")]
    max_down_nodes_per_group: Bound,
    #[serde(deserialize_with = "in_fleet")]
    max_down_nodes: Bound,
    max_domains_under_repair: usize,
    max_pending: Option<usize>,
    max_broken: Option<usize>,
    max_writes_per_pass: usize,
    #[serde(with = "crate::text::duration_serde")]
    result_retention: Duration,
    max_results: usize,
    #[serde(with = "crate::text::duration_serde")]
    retry_interval: Duration,
    #[serde(with = "crate::text::duration_serde")]
    max_repair_age: Duration,
    retries: u32,
    #[serde(with = "crate::text::duration_serde")]
    retry_backoff: Duration,
    #[serde(with = "crate::text::duration_serde")]
    min_healthy: Duration,
    #[serde(with = "rate_serde")]
    max_repair_rate: Option<Rate>,
    #[serde(with = "rate_serde")]
    max_repair_rate_per_group: Option<Rate>,
    #[serde(with = "cooldown_serde")]
    storm_cooldown: Option<Duration>,
    escalate: bool,
}

impl Default for LimitsFile {
    fn default() -> Self {
        Limits::default().into()
    }
}

impl From<Limits> for LimitsFile {
    fn from(l: Limits) -> Self {
        LimitsFile {
            max_down_nodes_per_group: Bound::join(
                l.max_down_nodes_per_group,
                l.max_down_nodes_per_group_share,
            ),
            max_down_nodes: Bound::join(l.max_down_nodes, l.max_down_nodes_share),
            max_domains_under_repair: l.max_domains_under_repair,
            max_pending: l.max_pending,
            max_broken: l.max_broken,
            max_writes_per_pass: l.max_writes_per_pass,
            result_retention: l.result_retention,
            max_results: l.max_results,
            retry_interval: l.retry_interval,
            max_repair_age: l.max_repair_age,
            retries: l.retries,
            retry_backoff: l.retry_backoff,
            min_healthy: l.min_healthy,
            max_repair_rate: l.max_repair_rate,
            max_repair_rate_per_group: l.max_repair_rate_per_group,
            storm_cooldown: l.storm_cooldown,
            escalate: l.escalate,
        }
    }
}

impl From<LimitsFile> for Limits {
    fn from(f: LimitsFile) -> Self {
        let (max_down_nodes_per_group, max_down_nodes_per_group_share) =
            f.max_down_nodes_per_group.split();
        let (max_down_nodes, max_down_nodes_share) = f.max_down_nodes.split();
        Limits {
            max_down_nodes_per_group,
            max_down_nodes,
            max_down_nodes_per_group_share,
            max_down_nodes_share,
            max_domains_under_repair: f.max_domains_under_repair,
            max_pending: f.max_pending,
            max_broken: f.max_broken,
            max_writes_per_pass: f.max_writes_per_pass,
            result_retention: f.result_retention,
            max_results: f.max_results,
            retry_interval: f.retry_interval,
            max_repair_age: f.max_repair_age,
            retries: f.retries,
            retry_backoff: f.retry_backoff,
            min_healthy: f.min_healthy,
            max_repair_rate: f.max_repair_rate,
            max_repair_rate_per_group: f.max_repair_rate_per_group,
            storm_cooldown: f.storm_cooldown,
            escalate: f.escalate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_rounds_down_as_a_machine_health_check_does() {
        // (percent, total, allowed down)
        let cases: &[(u8, usize, usize)] = &[
            (40, 0, 0),
            (40, 1, 0),
            (40, 2, 0),
            (40, 3, 1),
            (40, 4, 1),
            (40, 5, 2),
            (40, 10, 4),
            (33, 3, 0),
            (34, 3, 1),
            (50, 1, 0),
            (50, 2, 1),
            (99, 100, 99),
            (99, 99, 98),
            (0, 0, 0),
            (0, 1000, 0),
            (100, 0, 0),
            (100, 7, 7),
            (1, 99, 0),
            (1, 100, 1),
        ];
        for &(p, total, want) in cases {
            let s = Share::percent(p).unwrap();
            assert_eq!(s.of(total), want, "{p}% of {total}");
        }
        assert_eq!(Share::percent(100).unwrap().of(usize::MAX), usize::MAX);
        assert_eq!(Share::percent(101), None);
    }

    #[test]
    fn the_stricter_of_number_and_share_holds() {
        let share = Share::percent(40);
        // (count, share, total, max, described)
        let cases: &[(usize, Option<Share>, usize, usize, &str)] = &[
            (4, None, 100, 4, "4"),
            (usize::MAX, share, 5, 2, "40% of 5 = 2"),
            (usize::MAX, share, 0, 0, "40% of 0 = 0"),
            (1, share, 10, 1, "1 (stricter than 40% of 10)"),
            (9, share, 10, 4, "40% of 10 = 4"),
        ];
        for &(count, share, total, max, text) in cases {
            let c = Ceiling::new(count, share);
            assert_eq!(c.max(total), max, "{c:?} of {total}");
            assert_eq!(c.describe(total), text);
        }
    }

    #[test]
    fn bounds_parse_in_both_forms_and_refuse_the_rest() {
        let ok: &[(&str, Bound)] = &[
            ("4", Bound::Count(4)),
            ("0", Bound::Count(0)),
            ("40%", Bound::Share(Share(40))),
            (" 0% ", Bound::Share(Share(0))),
            ("100%", Bound::Share(Share(100))),
            ("5 %", Bound::Share(Share(5))),
        ];
        for (text, want) in ok {
            assert_eq!(Bound::parse(text), Ok(*want), "{text}");
        }
        for bad in ["", "%", "101%", "-1%", "-1", "40.5%", "4x", "forty%"] {
            let e = Bound::parse(bad).unwrap_err();
            assert_eq!(e.text, bad);
            assert!(e.to_string().contains("0% to 100%"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_rate_reads_as_a_count_or_a_share_over_a_window_and_refuses_the_rest() {
        let hour = Duration::from_secs(3600);
        // (text, bound, window, the most it allows of 45 domains)
        let ok: &[(&str, Bound, Duration, usize)] = &[
            ("2/1h", Bound::Count(2), hour, 2),
            (" 2 / 1h", Bound::Count(2), hour, 2),
            ("0/10min", Bound::Count(0), Duration::from_secs(600), 0),
            ("5%/1h", Bound::Share(Share(5)), hour, 2),
            (
                "100%/1s",
                Bound::Share(Share(100)),
                Duration::from_secs(1),
                45,
            ),
        ];
        for (text, bound, window, max) in ok {
            let r = Rate::parse(text).unwrap();
            assert_eq!(
                (r.bound, r.window, r.max(45)),
                (*bound, *window, *max),
                "{text}"
            );
            assert_eq!(Rate::parse(&r.to_string()), Ok(r), "{text} written back");
        }
        for (bad, says) in [
            ("2", "not a rate"),
            ("2/", "N/DURATION"),
            ("/1h", "N/DURATION"),
            ("two/1h", "N/DURATION"),
            ("101%/1h", "0% to 100%"),
            ("-1/1h", "N/DURATION"),
            ("2/0s", "no time"),
            ("2/1h/1h", "N/DURATION"),
            ("2/1000y", "longer than 100 years"),
        ] {
            let e = Rate::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let read = |json: serde_json::Value| serde_json::from_value::<Limits>(json);
        let l = read(serde_json::json!({"max_repair_rate": "2/1h"})).unwrap();
        assert_eq!(l.max_repair_rate, Rate::parse("2/1h").ok());
        assert_eq!(l.max_repair_rate_per_group, None);
        let e = read(serde_json::json!({"max_repair_rate_per_group": "2"})).unwrap_err();
        assert!(e.to_string().contains("not a rate"), "{e}");
        let e = read(serde_json::json!({"max_repair_rate": 3})).unwrap_err();
        assert!(e.to_string().contains("a rate in quotes"), "{e}");
        let back = serde_json::to_value(&l).unwrap();
        assert_eq!(back["max_repair_rate"], "2/1h");
        assert!(back["max_repair_rate_per_group"].is_null());
    }

    #[test]
    fn the_file_form_reads_and_writes_both_forms_and_names_the_key_it_refuses() {
        let read = |json: serde_json::Value| serde_json::from_value::<Limits>(json);
        let l = read(serde_json::json!({"max_down_nodes_per_group": "40%", "max_down_nodes": 3}))
            .unwrap();
        assert_eq!(l.max_down_nodes_per_group, usize::MAX);
        assert_eq!(l.max_down_nodes_per_group_share, Share::percent(40));
        assert_eq!((l.max_down_nodes, l.max_down_nodes_share), (3, None));
        let back = serde_json::to_value(&l).unwrap();
        assert_eq!(back["max_down_nodes_per_group"], "40%");
        assert_eq!(back["max_down_nodes"], 3);
        assert_eq!(read(back).unwrap(), l);
        // The defaults write as they always did.
        let d = serde_json::to_value(Limits::default()).unwrap();
        assert_eq!(d["max_down_nodes_per_group"], 2);
        assert_eq!(d["result_retention"], "7days");
        for (json, key) in [
            (
                serde_json::json!({"max_down_nodes": "lots"}),
                "[limits] max_down_nodes:",
            ),
            (
                serde_json::json!({"max_down_nodes_per_group": "140%"}),
                "[limits] max_down_nodes_per_group:",
            ),
            (
                serde_json::json!({"max_down_nodes_per_group": -2}),
                "[limits] max_down_nodes_per_group:",
            ),
            (
                serde_json::json!({"max_down_nodes": true}),
                "[limits] max_down_nodes:",
            ),
        ] {
            let e = read(json.clone()).unwrap_err().to_string();
            assert!(e.contains(key), "{json}: {e}");
        }
        assert!(read(serde_json::json!({"max_down": 1})).is_err());
    }
}
