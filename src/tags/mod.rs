//! The autorepair tag language (Ganeti form), parsed without allocating and rendered with the
//! same limits Ganeti enforces. The grammar lives in `tag-grammar/autorepair.abnf`.

mod parse;
mod render;

pub use parse::{is_repair_id, parse};
pub use render::{render_pending, render_policy, render_result, render_suspend};

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Every autorepair tag starts with this; any other tag is foreign and never touched.
pub const PREFIX: &str = "ganeti:watcher:autorepair:";
/// Ganeti refuses longer tags.
pub const MAX_TAG_LEN: usize = 128;

/// Repairs, ordered from least to most destructive: `a < b` means `a` risks less.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RepairType {
    FixStorage,
    Migrate,
    Failover,
    Reinstall,
}

impl RepairType {
    pub const ALL: [RepairType; 4] = [
        RepairType::FixStorage,
        RepairType::Migrate,
        RepairType::Failover,
        RepairType::Reinstall,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RepairType::FixStorage => "fix-storage",
            RepairType::Migrate => "migrate",
            RepairType::Failover => "failover",
            RepairType::Reinstall => "reinstall",
        }
    }
}

impl fmt::Display for RepairType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RepairType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RepairType::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown repair type {s:?}: use fix-storage, migrate, failover or reinstall"
                )
            })
    }
}

/// How a repair ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RepairResult {
    /// The repair was needed but the policy did not allow it.
    Enoperm,
    Success,
    Failure,
}

impl RepairResult {
    pub fn as_str(self) -> &'static str {
        match self {
            RepairResult::Enoperm => "enoperm",
            RepairResult::Success => "success",
            RepairResult::Failure => "failure",
        }
    }
}

impl fmt::Display for RepairResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `+`-joined list of job ids, kept as the validated text it was parsed from so that parsing
/// never allocates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct JobList<'a>(&'a str);

impl<'a> JobList<'a> {
    /// Only the parser builds these: the text is known to be valid.
    pub(crate) fn new_unchecked(text: &'a str) -> Self {
        JobList(text)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = u64> + 'a {
        let text = self.0;
        text.split('+')
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().expect("job list validated by the parser"))
    }

    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }
}

/// A repair under way, or requested when its job list is empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pending<'a> {
    pub repair: RepairType,
    pub id: &'a str,
    pub since: i64,
    pub jobs: JobList<'a>,
}

/// A repair that ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome<'a> {
    pub repair: RepairType,
    pub id: &'a str,
    pub at: i64,
    pub result: RepairResult,
    pub jobs: JobList<'a>,
}

/// One parsed tag. Borrowed from the tag text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag<'a> {
    /// Not an autorepair tag: never an error, never touched.
    Foreign,
    /// Repairs up to this type are allowed on the object.
    Policy(RepairType),
    /// No repair starts until `until` (Unix seconds), or ever when `None`.
    Suspend {
        until: Option<i64>,
    },
    Pending(Pending<'a>),
    Result(Outcome<'a>),
}

/// Why an autorepair tag is invalid. The code is stable (test vectors and tools use it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    TooLong,
    BadChar,
    UnknownKind,
    FieldCount,
    UnknownRepair,
    BadId,
    BadEpoch,
    UnknownResult,
    BadJob,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::TooLong => "too-long",
            ErrorCode::BadChar => "bad-char",
            ErrorCode::UnknownKind => "unknown-kind",
            ErrorCode::FieldCount => "field-count",
            ErrorCode::UnknownRepair => "unknown-repair",
            ErrorCode::BadId => "bad-id",
            ErrorCode::BadEpoch => "bad-epoch",
            ErrorCode::UnknownResult => "unknown-result",
            ErrorCode::BadJob => "bad-job",
        }
    }
}

/// A malformed autorepair tag. The message says what is wrong and how it should look; callers
/// add which object carries the tag.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid autorepair tag {tag:?}: {message}")]
pub struct TagError {
    pub code: ErrorCode,
    pub tag: String,
    pub message: String,
}

/// A tag the renderer refused because Ganeti would refuse it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error("tag {tag:?} would be {len} characters, over Ganeti's limit of {MAX_TAG_LEN}")]
    TooLong { tag: String, len: usize },
    #[error("repair id {id:?} is not a UUID (8-4-4-4-12 hexadecimal digits)")]
    BadId { id: String },
    #[error("timestamp {value} is negative: autorepair timestamps are Unix seconds")]
    NegativeEpoch { value: i64 },
}

/// The JSON shape of one parsed tag, as printed by `autorepair tags parse --json`. Other tools
/// depend on these keys.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TagJson<'a> {
    pub tag: &'a str,
    #[serde(flatten)]
    pub body: TagJsonBody<'a>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum TagJsonBody<'a> {
    Policy {
        repair: RepairType,
    },
    Suspend {
        until: Option<i64>,
    },
    Pending {
        repair: RepairType,
        id: &'a str,
        since: i64,
        jobs: Vec<u64>,
    },
    Result {
        repair: RepairType,
        id: &'a str,
        at: i64,
        result: RepairResult,
        jobs: Vec<u64>,
    },
    Foreign,
    Invalid {
        error: String,
    },
}

impl<'a> TagJson<'a> {
    pub fn of(tag: &'a str) -> Self {
        let body = match parse(tag) {
            Ok(Tag::Foreign) => TagJsonBody::Foreign,
            Ok(Tag::Policy(repair)) => TagJsonBody::Policy { repair },
            Ok(Tag::Suspend { until }) => TagJsonBody::Suspend { until },
            Ok(Tag::Pending(p)) => TagJsonBody::Pending {
                repair: p.repair,
                id: p.id,
                since: p.since,
                jobs: p.jobs.to_vec(),
            },
            Ok(Tag::Result(r)) => TagJsonBody::Result {
                repair: r.repair,
                id: r.id,
                at: r.at,
                result: r.result,
                jobs: r.jobs.to_vec(),
            },
            Err(e) => TagJsonBody::Invalid { error: e.message },
        };
        TagJson { tag, body }
    }
}

impl Tag<'_> {
    /// The tag text for this value; `None` for foreign tags, which have no text of ours.
    pub fn render(&self) -> Option<Result<String, RenderError>> {
        match *self {
            Tag::Foreign => None,
            Tag::Policy(t) => Some(Ok(render_policy(t))),
            Tag::Suspend { until } => Some(render_suspend(until)),
            Tag::Pending(p) => Some(render_pending(p.repair, p.id, p.since, &p.jobs.to_vec())),
            Tag::Result(r) => Some(render_result(
                r.repair,
                r.id,
                r.at,
                r.result,
                &r.jobs.to_vec(),
            )),
        }
    }
}

#[cfg(test)]
mod tests;
