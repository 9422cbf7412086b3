//! The autorepair tag language (Ganeti form), parsed without allocating and rendered with the
//! same limits Ganeti enforces. The grammar lives in `tag-grammar/autorepair.abnf`.

mod parse;
mod render;

pub use parse::{is_repair_id, parse};
pub use render::{
    render_pending, render_policy, render_result, render_suspend, render_suspend_all,
};

use crate::engine::marks::{Codec, Level, Mark, MarkError};
pub use crate::engine::marks::{ErrorCode, RenderError, RepairResult};
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

/// Ganeti's ladder, in Ganeti's own names.
impl Level for RepairType {
    const LADDER: &'static [Self] = &RepairType::ALL;
    fn as_str(self) -> &'static str {
        RepairType::as_str(self)
    }
}

impl fmt::Display for RepairType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that names no [`RepairType`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown repair type {0:?}: use fix-storage, migrate, failover or reinstall")]
pub struct UnknownRepairType(pub String);

impl FromStr for RepairType {
    type Err = UnknownRepairType;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RepairType::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| UnknownRepairType(s.to_owned()))
    }
}

/// A `+`-joined list of job ids.
pub type JobList<'a> = crate::engine::marks::OpList<'a>;
/// A repair under way, or requested when its job list is empty.
pub type Pending<'a> = crate::engine::marks::Pending<'a, RepairType>;
/// A repair that ended.
pub type Outcome<'a> = crate::engine::marks::Outcome<'a, RepairType>;
/// One parsed tag. Borrowed from the tag text.
pub type Tag<'a> = Mark<'a, RepairType>;
/// A malformed autorepair tag.
pub type TagError = MarkError;

/// The tag codec: Ganeti's tags as the engine's marks.
pub struct Tags;

impl Codec for Tags {
    type Level = RepairType;
    type OpId = u64;
    const NOUN: &'static str = "tag";

    fn parse(text: &str) -> Result<Tag<'_>, MarkError> {
        parse(text)
    }
    fn render_policy(level: RepairType) -> String {
        render_policy(level)
    }
    fn render_suspend(until: Option<i64>, all: bool) -> Result<String, RenderError> {
        if all {
            render_suspend_all(until)
        } else {
            render_suspend(until)
        }
    }
    fn render_pending(
        level: RepairType,
        id: &str,
        since: i64,
        ops: &[u64],
    ) -> Result<String, RenderError> {
        render_pending(level, id, since, ops)
    }
    fn render_result(
        level: RepairType,
        id: &str,
        at: i64,
        result: RepairResult,
        ops: &[u64],
    ) -> Result<String, RenderError> {
        render_result(level, id, at, result, ops)
    }
    fn is_repair_id(id: &str) -> bool {
        is_repair_id(id)
    }
}

/// The tag text for a parsed tag; `None` for foreign tags, which have no text of ours.
pub fn render(tag: &Tag<'_>) -> Option<Result<String, RenderError>> {
    Tags::render(tag)
}

#[cfg(test)]
mod tests;
