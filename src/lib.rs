//! autorepair: a watcher that repairs broken instances and machines, steered by marks on the
//! targets themselves (docs/architecture.md).
//!
//! [`engine`] is the pure core every family shares: marks, policy, states, bookkeeping, the
//! limiter, the planner and the crash-safe executor. Each family is one folder that plugs into
//! it: [`ganeti`] today. The cluster-config generator lives in [`sabakan`]; the Kubernetes
//! code the families share in [`k8s`]. The rest is the command line's face.

pub mod admin;
pub mod brake;
pub mod config;
pub mod face;
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
pub mod transport;

pub use autorepair_engine as engine;
pub use face::cli;
