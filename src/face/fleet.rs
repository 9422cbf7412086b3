//! The fleet as the commands reach it: opened (as the backend of its family), read, planned,
//! acted on with its logs held until the save, and locked.

use super::logs::Held;
use super::settings::{Clock, Fleet, Logs};
use crate::plug::Error;
use crate::plug::FamilyFace;
use crate::{
    engine::{
        self, Backend, BackendError, Plan,
        exec::{self, Report},
    },
    lock::{self, LockGuard},
};
use std::path::{Path, PathBuf};

/// The fleet's backend.
pub fn connect<F: FamilyFace>(fleet: &Fleet<F>) -> Result<Box<dyn Backend<F>>, Error> {
    Ok(F::open(&fleet.source)?)
}

/// The backend's snapshot; an error names where the fleet was read from.
pub fn read<F: FamilyFace>(
    fleet: &Fleet<F>,
    backend: &mut dyn Backend<F>,
) -> Result<F::Snapshot, Error> {
    backend.snapshot().map_err(|source_error| Error::Read {
        from: fleet.describe(),
        source: source_error.into(),
    })
}

/// Reads the fleet and plans one pass over it, with the config's limits and what this backend
/// can run. `seed` only feeds the repair ids.
pub fn plan<F: FamilyFace>(
    fleet: &Fleet<F>,
    backend: &mut dyn Backend<F>,
    now: i64,
    seed: u64,
) -> Result<Plan<F>, Error> {
    plan_read(fleet, backend, now, seed).map(|p| p.plan)
}

/// A plan with the snapshot and settings it was made from.
pub struct Planned<F: FamilyFace> {
    pub plan: Plan<F>,
    pub snap: F::Snapshot,
    pub settings: F::Settings,
}

/// [`plan`], keeping what it planned from.
pub fn plan_read<F: FamilyFace>(
    fleet: &Fleet<F>,
    backend: &mut dyn Backend<F>,
    now: i64,
    seed: u64,
) -> Result<Planned<F>, Error> {
    let snap = read(fleet, backend)?;
    let settings = F::settings(&fleet.source, backend);
    let plan = plan_of(fleet, &snap, &settings, now, seed);
    // What the family's own protocol waits for, and what the engine holds back by time.
    let own = F::DAEMON.and_then(|d| (d.next_due)(&snap, &settings, now));
    let due = [own, plan.next_due()].into_iter().flatten().min();
    super::daemon::falls_due(due.map(|at| at.saturating_sub(now)));
    Ok(Planned {
        plan,
        snap,
        settings,
    })
}

/// Plans one pass over a snapshot already read, with the config's limits.
pub fn plan_of<F: FamilyFace>(
    fleet: &Fleet<F>,
    snap: &F::Snapshot,
    settings: &F::Settings,
    now: i64,
    seed: u64,
) -> Plan<F> {
    engine::plan::<F>(snap, settings, now, &fleet.limits, seed)
}

/// The plan of the fleet as it is now, for the commands that only show it.
pub fn read_plan<F: FamilyFace>(
    fleet: &Fleet<F>,
    clock: Clock,
    mut backend: Box<dyn Backend<F>>,
) -> Result<Plan<F>, Error> {
    plan(fleet, backend.as_mut(), clock.now(), 0)
}

/// Carries out `plan`, then `save`s (which says whether it kept the writes). A fleet file's
/// writes stay in memory until the save, so the executor's "tag added" and "job submitted"
/// lines are held back until the save succeeded and dropped otherwise: the log never claims a
/// write that was lost. Over RAPI every write is made by the call that logs it, so its lines go
/// out at once.
pub fn execute_and_save<F: FamilyFace>(
    logs: &Logs,
    fleet: &Fleet<F>,
    plan: &Plan<F>,
    backend: &mut dyn Backend<F>,
    save: impl FnOnce(&mut dyn Backend<F>, &Report<F>) -> Result<bool, BackendError>,
) -> (Report<F>, Result<(), BackendError>) {
    if !F::buffers_writes(&fleet.source) {
        let done = exec::execute(plan, backend);
        let saved = save(backend, &done).map(drop);
        return (done, saved);
    }
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

/// Whether this replica may act now: every replica may, unless the family registered a say
/// in it ([`FamilyFace::REPLICAS`]).
pub fn may_act<F: FamilyFace>(fleet: &Fleet<F>) -> Result<bool, Error> {
    F::REPLICAS.map_or(Ok(true), |r| (r.may_act)(&fleet.source))
}

/// The lock `planned` names as it is taken: itself, unless the family registered a say in it
/// ([`FamilyFace::REPLICAS`]).
pub fn lock_taken<F: FamilyFace>(fleet: &Fleet<F>, planned: &Path) -> Result<PathBuf, Error> {
    F::REPLICAS.map_or_else(
        || Ok(planned.to_owned()),
        |r| (r.lock_taken)(&fleet.source, planned),
    )
}

/// The fleet's lock (`path` as [`lock_taken`] names it). Another run holding it is the normal
/// cron overlap (exit 4); a lock file that cannot be opened is a configuration error (exit 2),
/// not to be mistaken for it.
pub fn acquire_lock<F: FamilyFace>(fleet: &Fleet<F>, path: &Path) -> Result<LockGuard, Error> {
    let path = lock_taken(fleet, path)?;
    Ok(lock::acquire_waiting(&path, fleet.lock_wait)?)
}
