//! The limits the planner enforces, with the defaults documented in `contrib/autorepair.toml`
//! and the man page.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The config file reads them as they are (its `[limits]` section): unknown keys are refused,
/// and a key left out keeps its default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// More down failure domains than this in one scope at once is a mass failure there:
    /// nothing is written or started for its targets until fewer are down.
    pub max_down_nodes_per_group: usize,
    /// The same, counted over the whole fleet: beyond it, the pass writes and starts nothing.
    pub max_down_nodes: usize,
    /// Repairs run for at most this many failure domains at once; all the repairs of one
    /// domain start together. 0 starts nothing new.
    pub max_domains_under_repair: usize,
    /// Optional cap on repairs under way at once, fleet-wide, whatever their domain.
    pub max_pending: Option<usize>,
    /// Optional brake in targets: if more than this need repair at once, start nothing.
    pub max_broken: Option<usize>,
    /// At most this many writes (mark changes and operations) per pass; what does not fit
    /// waits for the next pass, bookkeeping of repairs under way first.
    pub max_writes_per_pass: usize,
    /// Success and enoperm results older than this are removed. Failures never are.
    #[serde(with = "humantime_serde")]
    pub result_retention: Duration,
    /// At most this many success/enoperm results are kept per target (newest first).
    pub max_results: usize,
    /// A repair that failed for lack of resources is retried this long after its operation ended.
    #[serde(with = "humantime_serde")]
    pub retry_interval: Duration,
    /// A repair still waiting for resources this long after it started is a failure.
    #[serde(with = "humantime_serde")]
    pub max_repair_age: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_down_nodes_per_group: 2,
            max_down_nodes: 4,
            max_domains_under_repair: 1,
            max_pending: None,
            max_broken: None,
            max_writes_per_pass: 500,
            result_retention: Duration::from_secs(7 * 86400),
            max_results: 20,
            retry_interval: Duration::from_secs(15 * 60),
            max_repair_age: Duration::from_secs(86400),
        }
    }
}
