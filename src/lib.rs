//! autorepair: a watcher that repairs broken instances and machines, steered by marks on the
//! targets themselves (docs/architecture.md).
//!
//! [`engine`] is the pure core every family shares: marks, policy, states, bookkeeping, the
//! limiter, the planner and the crash-safe executor. Each family is one folder that plugs into
//! it: [`ganeti`], [`metal3`] and [`machines`] (sabakan machines), listed in [`FAMILIES`]. The
//! cluster-config generator lives in [`sabakan`]; the Kubernetes code the families share in
//! [`k8s`]. The rest is the command line's face.

pub mod admin;
pub mod brake;
pub mod child;
pub mod config;
pub mod face;
pub mod fence;
pub mod files;
pub mod ganeti;
pub mod k8s;
pub mod lock;
pub mod machines;
pub mod marks_map;
pub mod metal3;
pub mod metrics;
pub mod plug;
pub mod report;
pub mod sabakan;
#[cfg(any(test, feature = "testkit"))]
pub mod toy;
pub mod transport;
pub mod yaml;

pub use autorepair_engine as engine;
pub use face::cli;

/// The families the command line knows. A family is its folder (its engine `Family` and its
/// `plug::FamilyFace`) and its line here: docs/architecture.md, "Adding a family".
pub const FAMILIES: &[&dyn face::Registered] = &[
    &face::Entry::<ganeti::Ganeti>::NEW,
    &face::Entry::<metal3::Metal3>::NEW,
    &face::Entry::<machines::Machines>::NEW,
];
