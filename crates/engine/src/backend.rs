//! Backends: the only code (with the executor) that talks to the world. Each family brings its
//! own; the executor drives any of them through [`Backend`].

use super::family::Family;
use super::object::ObjectRef;

/// Asked before each write a backend makes; an error (normally [`BackendError::Halted`])
/// stops the writing there. Whoever may have to stop a pass mid-way sets it (a replica that
/// lost its leader election, a stop signal): see [`Backend::guard_writes`].
pub type WriteGuard = std::sync::Arc<dyn Fn() -> Result<(), BackendError> + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("{object} does not exist")]
    NoSuchObject { object: ObjectRef },
    #[error("fleet file {path}: {message}")]
    FleetFile { path: String, message: String },
    /// A file the backend reads beside the fleet, named by what it is (`nodes file`).
    #[error("{what} {path}: {message}")]
    File {
        what: &'static str,
        path: String,
        message: String,
    },
    #[error("{0}")]
    Api(String),
    /// Only for tests that kill the executor between two calls.
    #[error("crashed on purpose after {calls} backend calls")]
    Crashed { calls: usize },
    /// Nothing more may be written this pass (the leader election lost, a stop signal): the
    /// executor ends the pass here. The write asked for was not made; the ones before were.
    #[error("{0}")]
    Halted(String),
    /// The backend's credentials may read but not write: every other write of the pass would be
    /// refused the same way, so the executor ends the pass at the first, as one error. The
    /// write asked for was not made; the ones before were. The text says what to grant.
    #[error("{0}")]
    NoWriteAccess(String),
    /// The TLS handshake failed: most often a server certificate that the configured CA file
    /// does not vouch for. Never retried: the same certificate fails the same way.
    #[error("TLS handshake with {service} at {url} failed: {cause}. {hint}")]
    Tls {
        service: &'static str,
        url: String,
        cause: String,
        hint: String,
    },
    /// Nothing listens on the port: the daemon is down, or host or port are wrong.
    #[error("connection to {service} at {url} refused ({cause}): nothing listens there. {hint}")]
    Refused {
        service: &'static str,
        url: String,
        cause: String,
        hint: &'static str,
    },
    #[error("{service} at {url} did not answer within {after:?} ({cause}). {hint}")]
    Timeout {
        service: &'static str,
        url: String,
        after: std::time::Duration,
        cause: String,
        hint: &'static str,
    },
    #[error("cannot resolve {host}, the host of {service} URL {url} ({cause}): {hint}")]
    Dns {
        service: &'static str,
        url: String,
        host: String,
        cause: String,
        hint: &'static str,
    },
    /// Any other failure to connect or to read the answer (reset, unreachable network, …).
    #[error("cannot talk to {service} at {url}: {cause}. {hint}")]
    Connect {
        service: &'static str,
        url: String,
        cause: String,
        hint: &'static str,
    },
    /// The server answered with an HTTP error status.
    #[error("{method} {url}: {service} answered {status}: {message}{hint}")]
    Http {
        service: &'static str,
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
pub trait Backend<F: Family> {
    fn snapshot(&mut self) -> Result<F::Snapshot, BackendError>;
    fn add_marks(
        &mut self,
        object: &ObjectRef,
        marks: &[String],
        reason: &str,
    ) -> Result<(), BackendError>;
    fn remove_marks(
        &mut self,
        object: &ObjectRef,
        marks: &[String],
        reason: &str,
    ) -> Result<(), BackendError>;
    /// Submits one repair operation on a target, carrying `reason` (the repair id) and
    /// running only after `after` succeeded. Returns the operation's id.
    fn submit(
        &mut self,
        target: &str,
        op: &F::Op,
        reason: &str,
        after: Option<&F::OpId>,
    ) -> Result<F::OpId, BackendError>;
    /// Carries out work on an operation the watcher runs itself ([`Action::Advance`]).
    /// Families without such operations never plan it.
    ///
    /// [`Action::Advance`]: super::Action::Advance
    fn advance(
        &mut self,
        object: &ObjectRef,
        op: &F::Op,
        _reason: &str,
    ) -> Result<(), BackendError> {
        Err(BackendError::Api(format!(
            "{object}: this backend runs no operation itself, so it cannot do {op}"
        )))
    }
    /// Whether `op` can be chained after an operation submitted earlier in the same pass (run
    /// only once that one succeeded). When not, the executor stops the chain there and a later
    /// pass submits the rest.
    fn can_follow(&self, _op: &F::Op) -> bool {
        true
    }
    /// Whether the backend can run this kind of operation at all.
    fn supports(&self, _step: F::Step) -> bool {
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
    /// Has the backend ask `guard` before every write it makes from now on, inside one call
    /// too: one call may make many writes (a drain evicts every Pod of a Node), and a pass
    /// must stop between two of them, not only between two calls. Backends whose calls make
    /// one write each may ignore it: the caller asks the guard before each call.
    fn guard_writes(&mut self, _guard: WriteGuard) {}
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

impl<F: Family, B: Backend<F>> Backend<F> for Dying<B> {
    fn snapshot(&mut self) -> Result<F::Snapshot, BackendError> {
        self.inner.snapshot()
    }
    fn guard_writes(&mut self, guard: WriteGuard) {
        self.inner.guard_writes(guard);
    }
    fn add_marks(&mut self, o: &ObjectRef, t: &[String], r: &str) -> Result<(), BackendError> {
        self.spend()?;
        self.inner.add_marks(o, t, r)
    }
    fn remove_marks(&mut self, o: &ObjectRef, t: &[String], r: &str) -> Result<(), BackendError> {
        self.spend()?;
        self.inner.remove_marks(o, t, r)
    }
    fn submit(
        &mut self,
        t: &str,
        op: &F::Op,
        r: &str,
        a: Option<&F::OpId>,
    ) -> Result<F::OpId, BackendError> {
        self.spend()?;
        self.inner.submit(t, op, r, a)
    }
    fn advance(&mut self, o: &ObjectRef, op: &F::Op, r: &str) -> Result<(), BackendError> {
        self.spend()?;
        self.inner.advance(o, op, r)
    }
    fn can_follow(&self, op: &F::Op) -> bool {
        self.inner.can_follow(op)
    }
    fn supports(&self, step: F::Step) -> bool {
        self.inner.supports(step)
    }
}

impl<F: Family, B: Backend<F> + ?Sized> Backend<F> for &mut B {
    fn snapshot(&mut self) -> Result<F::Snapshot, BackendError> {
        (**self).snapshot()
    }
    fn guard_writes(&mut self, guard: WriteGuard) {
        (**self).guard_writes(guard);
    }
    fn add_marks(&mut self, o: &ObjectRef, t: &[String], r: &str) -> Result<(), BackendError> {
        (**self).add_marks(o, t, r)
    }
    fn remove_marks(&mut self, o: &ObjectRef, t: &[String], r: &str) -> Result<(), BackendError> {
        (**self).remove_marks(o, t, r)
    }
    fn submit(
        &mut self,
        t: &str,
        op: &F::Op,
        r: &str,
        a: Option<&F::OpId>,
    ) -> Result<F::OpId, BackendError> {
        (**self).submit(t, op, r, a)
    }
    fn advance(&mut self, o: &ObjectRef, op: &F::Op, r: &str) -> Result<(), BackendError> {
        (**self).advance(o, op, r)
    }
    fn can_follow(&self, op: &F::Op) -> bool {
        (**self).can_follow(op)
    }
    fn supports(&self, step: F::Step) -> bool {
        (**self).supports(step)
    }
    fn finish_pass(&mut self, now: i64) -> Result<(), BackendError> {
        (**self).finish_pass(now)
    }
    fn flush(&mut self) -> Result<(), BackendError> {
        (**self).flush()
    }
}
