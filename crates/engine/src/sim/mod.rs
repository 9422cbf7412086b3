//! The chaos simulator, the same for every family: many passes over an in-memory world while
//! failure domains go down, operations fail or lack resources, the watcher is killed between
//! backend calls and admins edit marks. After every pass an oracle (`oracle.rs`), written
//! independently of the planner, checks the safety rules of the design; at the end it checks
//! that every repairable target was repaired once the faults stopped. A violation comes with
//! its seed and a minimised event history.
//!
//! A family takes part by implementing [`World`]: its fleet as an in-memory backend, its own
//! faults, one pass of its world's time, and the facts the oracle reads from a snapshot (which
//! targets are broken and what they need, failure domains, operations). The kills, the admin
//! edits (over the family's ladder) and the checks are the engine's.
//!
//! One job per file: `world.rs` what a family implements, `schedule.rs` the faults and the
//! schedules drawn from a seed, `run.rs` the passes, kills and replicas of one schedule,
//! `oracle.rs` the checks, `explore.rs` many seeds and shrinking, `admin.rs` the admins' edits,
//! `replicas.rs` several watchers and their coordination.
//!
//! The submodules share this module's imports (`use super::*`).

mod admin;
mod explore;
#[cfg(test)]
pub(crate) mod fixture;
mod oracle;
mod replicas;
mod run;
mod schedule;
#[cfg(test)]
mod tests;
mod world;

use super::backend::{Backend, Dying, Intercepted, Interceptor, Write};
use super::exec;
use super::family::{Family, Health};
use super::limits::Limits;
use super::marks::{Codec, Mark, RepairResult};
use super::object::ObjectRef;
use super::plan::Plan;
use rand::{Rng as _, SeedableRng};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

pub use admin::{AdminEdit, Damage, apply as admin_edit};
pub use explore::*;
pub use oracle::{object_policy, policy};
pub use replicas::{
    Coordination, NotHeld, PAUSE_SECONDS, Replicas, TAKEOVER_SECONDS, WRITE_SECONDS,
};
pub use run::*;
pub use schedule::*;
pub use world::*;

/// Seconds between passes (cron every 5 minutes).
pub const PASS_SECONDS: i64 = 300;

/// The clock at which the worlds' fixtures and tests start (2027-01-15).
pub const START: i64 = 1_800_000_000;

/// The random source of every scenario: seeded, portable, the same on every machine.
pub type Rng = rand_chacha::ChaCha8Rng;
