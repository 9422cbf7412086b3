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
pub enum GanetiLevel {
    FixStorage,
    Migrate,
    Failover,
    Reinstall,
}

impl GanetiLevel {
    pub const ALL: [GanetiLevel; 4] = [
        GanetiLevel::FixStorage,
        GanetiLevel::Migrate,
        GanetiLevel::Failover,
        GanetiLevel::Reinstall,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            GanetiLevel::FixStorage => "fix-storage",
            GanetiLevel::Migrate => "migrate",
            GanetiLevel::Failover => "failover",
            GanetiLevel::Reinstall => "reinstall",
        }
    }
}

/// Ganeti's ladder, in Ganeti's own names.
impl Level for GanetiLevel {
    const LADDER: &'static [Self] = &GanetiLevel::ALL;
    fn as_str(self) -> &'static str {
        GanetiLevel::as_str(self)
    }
}

impl fmt::Display for GanetiLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that names no [`GanetiLevel`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown repair type {0:?}: use fix-storage, migrate, failover or reinstall")]
pub struct UnknownGanetiLevel(pub String);

impl FromStr for GanetiLevel {
    type Err = UnknownGanetiLevel;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        GanetiLevel::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| UnknownGanetiLevel(s.to_owned()))
    }
}

/// A `+`-joined list of job ids.
pub type JobList<'a> = crate::engine::marks::OpList<'a>;
/// A repair under way, or requested when its job list is empty.
pub type Pending<'a> = crate::engine::marks::Pending<'a, GanetiLevel>;
/// A repair that ended.
pub type Outcome<'a> = crate::engine::marks::Outcome<'a, GanetiLevel>;
/// One parsed tag. Borrowed from the tag text.
pub type Tag<'a> = Mark<'a, GanetiLevel>;
/// A malformed autorepair tag.
pub type TagError = MarkError;

/// The tag codec: Ganeti's tags as the engine's marks.
pub struct Tags;

impl Codec for Tags {
    type Level = GanetiLevel;
    type OpId = u64;
    const NOUN: &'static str = "tag";

    fn parse(text: &str) -> Result<Tag<'_>, MarkError> {
        parse(text)
    }
    fn render_policy(level: GanetiLevel) -> String {
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
        level: GanetiLevel,
        id: &str,
        since: i64,
        ops: &[u64],
    ) -> Result<String, RenderError> {
        render_pending(level, id, since, ops)
    }
    fn render_result(
        level: GanetiLevel,
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
