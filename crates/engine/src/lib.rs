//! The engine every family plugs into (docs/architecture.md): the mark model and policy, target
//! states, pending/result bookkeeping with repair ids, judging operations, the limiter counted in
//! failure domains, the planner, and the crash-safe executor. It names no family and does no
//! I/O of its own: a family brings its snapshot, health table, ladder, chains, codec and backend
//! through [`Family`] and [`Backend`]. Behind the `testkit` feature, `sim` is the chaos
//! simulator and its oracle, for any family that makes its fleet a `sim::World`. The engine's
//! own unit tests run on a family of their own, `fixture` (and `sim::fixture`, its world),
//! compiled for those tests only.

pub mod backend;
pub mod exec;
pub mod family;
#[cfg(test)]
mod fixture;
pub mod limits;
pub mod marks;
pub mod object;
pub mod plan;
pub mod policy;
#[cfg(any(test, feature = "testkit"))]
pub mod sim;
pub mod text;

#[cfg(any(test, feature = "testkit"))]
pub use backend::Dying;
pub use backend::{
    Applied, Around, Backend, BackendError, Intercepted, Interceptor, Write, WriteGuard,
};
pub use family::{Family, Health, Need, Words};
pub use limits::Limits;
pub use marks::{Level, Mark, RepairResult};
pub use object::ObjectRef;
pub use plan::{Action, Blocked, Next, Plan, State, TargetPlan, plan};
pub use policy::Policy;
pub use text::{Text, rfc3339};
