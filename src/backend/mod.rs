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
    /// The TLS handshake failed: most often a server certificate that the configured CA file
    /// does not vouch for. Never retried: the same certificate fails the same way.
    #[error("TLS handshake with the Ganeti RAPI at {url} failed: {cause}. {hint}")]
    Tls {
        url: String,
        cause: String,
        hint: String,
    },
    /// Nothing listens on the port: the RAPI daemon is down, or host or port are wrong.
    #[error(
        "connection to the Ganeti RAPI at {url} refused ({cause}): nothing listens there. Check that ganeti-rapi runs on the master (/usr/lib/ganeti/daemon-util check ganeti-rapi) and that host and port (5080 by default) are right"
    )]
    Refused { url: String, cause: String },
    #[error(
        "the Ganeti RAPI at {url} did not answer within {after:?} ({cause}). The master may be overloaded, or a firewall drops the packets: check it, or raise rapi.timeout in the config"
    )]
    Timeout {
        url: String,
        after: std::time::Duration,
        cause: String,
    },
    #[error(
        "cannot resolve {host}, the host of the Ganeti RAPI URL {url} ({cause}): check the name given with --rapi (or rapi.url) and this host's DNS"
    )]
    Dns {
        url: String,
        host: String,
        cause: String,
    },
    /// Any other failure to connect or to read the answer (reset, unreachable network, …).
    #[error(
        "cannot talk to the Ganeti RAPI at {url}: {cause}. Check the address and the network path to the master"
    )]
    Connect { url: String, cause: String },
    /// The server answered with an HTTP error status.
    #[error("{method} {url}: the Ganeti RAPI answered {status}: {message}{hint}")]
    Http {
        method: String,
        url: String,
        status: u16,
        message: String,
        /// What to do, with a leading separator, or empty.
        hint: String,
    },
}

impl BackendError {
    /// Whether the same request may succeed if tried again shortly (the daemon restarting, a
    /// slow master). A refused certificate, an unknown name or a refused user never is.
    pub fn is_transient(&self) -> bool {
        match self {
            BackendError::Refused { .. }
            | BackendError::Timeout { .. }
            | BackendError::Connect { .. } => true,
            BackendError::Http { status, .. } => *status >= 500,
            _ => false,
        }
    }
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

/// Passes calls through until `budget` writes were made, then fails every write as if the
/// process had been killed right there. The crash tests and the chaos simulator use it.
pub struct Dying<B> {
    pub inner: B,
    budget: Option<usize>,
    /// Writes made so far.
    pub calls: usize,
}

impl<B> Dying<B> {
    /// `None` never dies.
    pub fn new(inner: B, budget: Option<usize>) -> Self {
        Dying {
            inner,
            budget,
            calls: 0,
        }
    }

    fn spend(&mut self) -> Result<(), BackendError> {
        if self.budget == Some(self.calls) {
            return Err(BackendError::Crashed { calls: self.calls });
        }
        self.calls += 1;
        Ok(())
    }
}

impl<B: Backend> Backend for Dying<B> {
    fn snapshot(&mut self) -> Result<Snapshot, BackendError> {
        self.inner.snapshot()
    }
    fn add_tags(&mut self, o: &ObjectRef, t: &[String], r: &str) -> Result<(), BackendError> {
        self.spend()?;
        self.inner.add_tags(o, t, r)
    }
    fn remove_tags(&mut self, o: &ObjectRef, t: &[String], r: &str) -> Result<(), BackendError> {
        self.spend()?;
        self.inner.remove_tags(o, t, r)
    }
    fn submit(&mut self, i: &str, op: &Op, r: &str, a: Option<u64>) -> Result<u64, BackendError> {
        self.spend()?;
        self.inner.submit(i, op, r, a)
    }
    fn can_follow(&self, op: &Op) -> bool {
        self.inner.can_follow(op)
    }
    fn supports(&self, kind: OpKind) -> bool {
        self.inner.supports(kind)
    }
}

impl<B: Backend + ?Sized> Backend for &mut B {
    fn snapshot(&mut self) -> Result<Snapshot, BackendError> {
        (**self).snapshot()
    }
    fn add_tags(&mut self, o: &ObjectRef, t: &[String], r: &str) -> Result<(), BackendError> {
        (**self).add_tags(o, t, r)
    }
    fn remove_tags(&mut self, o: &ObjectRef, t: &[String], r: &str) -> Result<(), BackendError> {
        (**self).remove_tags(o, t, r)
    }
    fn submit(&mut self, i: &str, op: &Op, r: &str, a: Option<u64>) -> Result<u64, BackendError> {
        (**self).submit(i, op, r, a)
    }
    fn can_follow(&self, op: &Op) -> bool {
        (**self).can_follow(op)
    }
    fn supports(&self, kind: OpKind) -> bool {
        (**self).supports(kind)
    }
    fn finish_pass(&mut self, now: i64) -> Result<(), BackendError> {
        (**self).finish_pass(now)
    }
    fn flush(&mut self) -> Result<(), BackendError> {
        (**self).flush()
    }
}
