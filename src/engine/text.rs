//! Small shared pieces of plan output: [`Text`], the hash maps the planner indexes with, and
//! times for people.

use serde::Serialize;
use std::fmt;
use std::sync::Arc;

pub(crate) use rustc_hash::{FxHashMap as FxMap, FxHashSet as FxSet};

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

/// A time for people: RFC 3339 in UTC (the `Z` says so).
pub fn rfc3339(epoch: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(epoch.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}
