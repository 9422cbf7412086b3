//! The fleet as the commands reach it: opened, read, planned, acted on with its logs held until
//! the save, and locked.

use super::Error;
use super::logs::Held;
use super::settings::{Clock, Fleet, Logs, Source};
use crate::{
    config::Limits,
    engine::{
        BackendError,
        exec::{self, Report as ExecReport},
    },
    ganeti::{
        self as plan, Ganeti, Plan,
        file::FleetFile,
        rapi as ganeti,
        snapshot::{OpKind, Snapshot},
    },
    lock::{self, LockGuard},
};

/// Every backend of the Ganeti family, behind one type.
pub(super) type Backend = dyn crate::engine::Backend<Ganeti>;
/// What the executor did.
pub(super) type Report = ExecReport<Ganeti>;
use std::path::Path;

pub fn open(source: &Source) -> Result<Box<Backend>, Error> {
    Ok(match source {
        Source::File(path) => Box::new(FleetFile::open(path).map_err(|e| Error::Open(e.into()))?),
        Source::Rapi(endpoint) => {
            Box::new(ganeti::Rapi::connect(endpoint).map_err(|e| Error::Connect(e.into()))?)
        }
    })
}

/// The backend's snapshot; an error names where the fleet was read from.
pub fn read(source: &Source, backend: &mut Backend) -> Result<Snapshot, Error> {
    backend.snapshot().map_err(|source_error| Error::Read {
        from: source.describe(),
        source: source_error.into(),
    })
}

/// The planner's limits, told which operations this backend cannot run.
pub fn limits_for(limits: &Limits, backend: &Backend) -> Limits {
    let mut limits = limits.clone();
    limits.unsupported_ops = OpKind::ALL
        .into_iter()
        .filter(|k| !backend.supports(*k))
        .collect();
    limits
}

/// The plan of the fleet as it is now, for the commands that only show it.
pub fn read_plan(fleet: &Fleet, clock: Clock) -> Result<Plan, Error> {
    let mut backend = open(&fleet.source)?;
    let snap = read(&fleet.source, backend.as_mut())?;
    Ok(plan::plan(
        &snap,
        clock.now(),
        &limits_for(&fleet.limits, backend.as_ref()),
        0,
    ))
}

/// Carries out `plan`, then `save`s (which says whether it kept the writes). A fleet file's
/// writes stay in memory until the save, so the executor's "tag added" and "job submitted"
/// lines are held back until the save succeeded and dropped otherwise: the log never claims a
/// write that was lost. Over RAPI every write is made by the call that logs it, so its lines go
/// out at once.
pub fn execute_and_save(
    logs: &Logs,
    source: &Source,
    plan: &Plan,
    backend: &mut Backend,
    save: impl FnOnce(&mut Backend, &Report) -> Result<bool, BackendError>,
) -> (Report, Result<(), BackendError>) {
    let Source::File(_) = source else {
        let done = exec::execute(plan, backend);
        let saved = save(backend, &done).map(drop);
        return (done, saved);
    };
    let held = Held::default();
    let writer = held.clone();
    let done = tracing::subscriber::with_default(logs.subscriber(move || writer.clone()), || {
        exec::execute(plan, &mut *backend)
    });
    let saved = save(backend, &done);
    if let Ok(true) = saved {
        held.release();
    }
    (done, saved.map(drop))
}

/// Another run holding the lock is the normal cron overlap (exit 4); a lock file that cannot be
/// opened is a configuration error (exit 2), not to be mistaken for it.
pub fn acquire_lock(path: &Path) -> Result<LockGuard, Error> {
    Ok(lock::acquire(path)?)
}
