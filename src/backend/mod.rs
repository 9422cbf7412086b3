//! Backends: the only code (with the executor) that talks to the world.

pub mod file;
pub mod ganeti;

use crate::snapshot::{ObjectRef, Op, OpKind, Snapshot};

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("{object} does not exist")]
    NoSuchObject { object: ObjectRef },
    #[error("fleet file {path}: {message}")]
    FleetFile { path: String, message: String },
    #[error("{0}")]
    Api(String),
    /// Only for tests that kill the executor between two calls.
    #[error("crashed on purpose after {calls} backend calls")]
    Crashed { calls: usize },
}

/// One fleet. Every method is one call to the world, so the executor's ordering is the
/// crash-safety argument: a pass may die between any two calls.
pub trait Backend {
    fn snapshot(&mut self) -> Result<Snapshot, BackendError>;
    fn add_tags(
        &mut self,
        object: &ObjectRef,
        tags: &[String],
        reason: &str,
    ) -> Result<(), BackendError>;
    fn remove_tags(
        &mut self,
        object: &ObjectRef,
        tags: &[String],
        reason: &str,
    ) -> Result<(), BackendError>;
    /// Submits one repair operation on an instance, carrying `reason` (the repair id) and
    /// running only after `after` succeeded. Returns the job id.
    fn submit(
        &mut self,
        instance: &str,
        op: &Op,
        reason: &str,
        after: Option<u64>,
    ) -> Result<u64, BackendError>;
    /// Whether `op` can be chained after a job submitted earlier in the same pass (run only once
    /// that job succeeded). When not, the executor stops the chain there and a later pass
    /// submits the rest.
    fn can_follow(&self, _op: &Op) -> bool {
        true
    }
    /// Whether the backend can run this kind of operation at all.
    fn supports(&self, _kind: OpKind) -> bool {
        true
    }
    /// Called once after a real (not dry) pass acted.
    fn finish_pass(&mut self, _now: i64) -> Result<(), BackendError> {
        self.flush()
    }
    /// Makes the writes so far durable, for backends that buffer them.
    fn flush(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
}
