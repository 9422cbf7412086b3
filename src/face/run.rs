//! `run`: one pass, several back to back, or a loop; each reads, decides, acts, and writes the
//! metrics file.

use super::daemon::{Daemon, Guarded, Next};
use super::fleet::{Planned, acquire_lock, connect, execute_and_save, may_act, plan_read};
use super::printer::Printer;
use super::settings::{Fleet, Logs, Run};
use super::{Exit, LOG_TARGET};
use crate::plug::Error;
use crate::plug::FamilyFace;
use crate::{engine::Backend, metrics, report};

pub fn run<F: FamilyFace>(
    out: &mut Printer,
    logs: &Logs,
    fleet: &Fleet<F>,
    run: &Run,
) -> Result<Exit, Error> {
    let mut worst = Exit::Ok;
    let mut pass = 0u32;
    let mut daemon = Daemon::start(run)?;
    // What a standby replica last said about the lock it could not take.
    let mut kept_out: Option<String> = None;
    // Whether the metrics file says this replica stands by (written once as it begins to).
    let mut standing = false;
    loop {
        if let Some(d) = &mut daemon {
            if d.stopping() {
                return Ok(worst);
            }
            if !d.may_act() {
                if let Err(e) = stand_by::<F>(run, &mut standing) {
                    tracing::error!(target: LOG_TARGET, error = %super::Chain(&e), "standing by");
                }
                continue;
            }
            d.pass_starts();
        }
        let started = std::time::Instant::now();
        pass += 1;
        let guard = daemon.as_ref().map(Daemon::guard);
        // The lock is held while a pass acts and never while the loop sleeps, so an admin can
        // always suspend (or stop) the watcher between two passes.
        // A replica that stands by (not the Ganeti master) skips the pass as done: it takes
        // no lock and reads nothing, so cron on every master candidate stays quiet.
        let outcome = match may_act(fleet) {
            Ok(false) => stand_by::<F>(run, &mut standing).map(|()| Exit::Ok),
            Ok(true) => {
                standing = false;
                run.lock
                    .as_deref()
                    .map(|path| acquire_lock(fleet, path))
                    .transpose()
                    .and_then(|held| {
                        let lock = held.as_ref().map(crate::lock::LockGuard::path);
                        one_pass(out, logs, fleet, run, lock, pass, guard)
                    })
                    .inspect(|_| crate::plug::pass_ended())
            }
            Err(e) => Err(e),
        };
        if !matches!(&outcome, Err(e) if e.exit() == Exit::Busy) {
            kept_out = None;
        }
        match outcome {
            Ok(Exit::Ok) => {}
            Ok(code) => worst = worst.max(code),
            // A daemon outlives a cluster that does not answer for a while, and a pass that
            // an admin command (or another run) kept out; not a standard output gone.
            Err(e) if run.every.is_some() && !matches!(e, Error::Output(_)) => {
                let code = e.exit();
                if code == Exit::Busy {
                    // A standby replica finds the lock taken every interval: said once, and
                    // again when what it says changes (another lock, after a pass of its own).
                    let said = super::Chain(&e).to_string();
                    if kept_out.as_deref() != Some(said.as_str()) {
                        tracing::info!(target: LOG_TARGET, pass, "{said}; trying again every interval, said again only when this changes");
                        kept_out = Some(said);
                    }
                } else {
                    tracing::error!(target: LOG_TARGET, pass, error = %super::Chain(&e), "pass failed; trying again next interval");
                }
                worst = worst.max(code);
            }
            Err(e) => return Err(e),
        }
        // A stop signal came while a command of the pass ran: it was waited for and recorded,
        // and the pass started no other.
        if crate::child::stop_requested() {
            return Ok(worst);
        }
        let more = match run.passes {
            Some(n) => pass < n,
            None => run.every.is_some(),
        };
        if !more {
            return Ok(worst);
        }
        if let Some(interval) = run.every {
            match &mut daemon {
                Some(d) => {
                    if let Next::Stop = d.pause(interval, started) {
                        return Ok(worst);
                    }
                }
                None => std::thread::sleep(interval),
            }
        }
    }
}

/// Says in the metrics file, once as it begins to, that this replica stands by.
fn stand_by<F: FamilyFace>(run: &Run, standing: &mut bool) -> Result<(), Error> {
    let Some(path) = run.metrics_file.as_ref().filter(|_| !*standing) else {
        return Ok(());
    };
    let previous = crate::files::read_text(path).unwrap_or_default();
    metrics::write_atomically(path, &metrics::standing_by::<F>(&previous)).map_err(|source| {
        Error::Metrics {
            path: path.clone(),
            source,
        }
    })?;
    *standing = true;
    Ok(())
}

fn one_pass<F: FamilyFace>(
    out: &mut Printer,
    logs: &Logs,
    fleet: &Fleet<F>,
    run: &Run,
    lock: Option<&std::path::Path>,
    pass: u32,
    guard: Option<crate::engine::WriteGuard>,
) -> Result<Exit, Error> {
    let started = std::time::Instant::now();
    // The commands this pass starts are recorded beside the lock until they end, and no pass
    // acts while one an earlier (killed) pass started still runs. A dry run starts none.
    let _recording = lock.map(crate::child::record_beside).transpose()?;
    // An operator's suspend pulls the brake rather than wait for this pass to end
    // (crate::brake); a dry run (no lock) writes nothing to stop. The brake is beside the
    // lock this pass holds (a Ganeti cluster's is named by its uuid), so a suspend given by
    // another URL of the same cluster finds it.
    let brake = lock.map(crate::brake::Watch::start);
    let guard = match &brake {
        Some(b) => Some(crate::brake::both(guard, b.guard())),
        None => guard,
    };
    let this = Pass {
        number: pass,
        started,
        brake,
    };
    let mut backend = connect(fleet)?;
    match guard {
        Some(guard) => {
            let guarded = Guarded::new(backend.as_mut(), guard);
            pass_over(out, logs, fleet, run, this, guarded)
        }
        None => pass_over(out, logs, fleet, run, this, backend.as_mut()),
    }
}

/// One pass: its number, when it began, and the brake it watches (none for a dry run).
struct Pass {
    number: u32,
    started: std::time::Instant,
    brake: Option<crate::brake::Watch>,
}

fn pass_over<F: FamilyFace>(
    out: &mut Printer,
    logs: &Logs,
    fleet: &Fleet<F>,
    run: &Run,
    this: Pass,
    mut backend: impl Backend<F>,
) -> Result<Exit, Error> {
    let Pass {
        number: pass,
        started,
        brake,
    } = this;
    let at = run.clock.now();
    let seed = uuid::Uuid::new_v4().as_u64_pair().0;
    let Planned {
        plan,
        snap,
        settings,
    } = plan_read(fleet, &mut backend, at, seed)?;
    if out.json() {
        out.json_line(&report::status_json(&plan))?;
    }
    // Counted as errors every pass; said once while they last (a daemon's every pass finds them).
    let damaged = F::DAMAGED.map(|d| d(&snap)).unwrap_or_default();
    for d in damaged.iter().filter(|d| crate::plug::first_time(d)) {
        tracing::error!(target: LOG_TARGET, pass, "{d}");
    }
    for l in plan.lint.iter().filter(|l| first_time(l)) {
        tracing::warn!(target: LOG_TARGET, object = %l.object, tag = l.tag.as_deref(), "{}", l.message);
    }
    for h in plan.fleet.halted.iter().chain(&plan.fleet.halted_groups) {
        tracing::warn!(target: LOG_TARGET, limit = h.limit, scope = %h.scope, "{h}");
    }
    if plan.fleet.deferred > 0 {
        tracing::info!(
                target: LOG_TARGET,
            deferred = plan.fleet.deferred,
            writes = plan.fleet.writes,
            "the write budget is spent: {} target(s) wait for the next pass",
            plan.fleet.deferred
        );
    }
    if run.dry_run {
        if !out.json() {
            for a in plan.actions() {
                out.line(format_args!("would: {a}"))?;
            }
            out.text(report::counts_line(&plan, "now"))?;
            out.text(report::limits_lines(&plan))?;
        }
        // As a real pass would exit: a damaged record is an error whether or not it acts.
        return Ok(if damaged.is_empty() {
            Exit::Ok
        } else {
            Exit::Partial
        });
    }
    let writes_before = backend.writes_made();
    let (done, saved) = execute_and_save(logs, fleet, &plan, &mut backend, |b, _| {
        b.finish_pass(at).map(|()| true)
    });
    // A machines entry is three labels, and a step's progress a label the executor never
    // sees as a mark: the backend's own count, where it keeps one.
    let writes = match (writes_before, backend.writes_made()) {
        (Some(before), Some(after)) => after.saturating_sub(before),
        _ => done.mark_writes,
    };
    saved.map_err(|source| Error::PassNotSaved {
        pass,
        actions: done.actions_done,
        source: source.into(),
    })?;
    // The brake file on this host, or a suspend the backend saw appear in the fleet.
    let pulled = brake
        .as_ref()
        .and_then(crate::brake::Watch::pulled)
        .or_else(|| backend.suspended_meanwhile().map(crate::brake::Pulled::now));
    let mut canceled = Vec::new();
    if let Some(p) = &pulled {
        let covered = crate::admin::covered::<F>(&snap, &settings, &p.object, at);
        match backend.cancel_unstarted(&|target| covered.contains(target)) {
            Ok(c) => canceled = c,
            Err(e) => {
                tracing::error!(target: LOG_TARGET, pass, error = %e, "cannot cancel the repairs this pass queued under {}", p.object);
            }
        }
    }
    if !out.json() {
        let noun = <F::Marks as crate::engine::marks::Codec>::NOUN;
        let ops = F::WORDS.ops_for(done.jobs_submitted.len());
        let repair_ops = if ops.starts_with("repair") {
            ops.to_owned()
        } else {
            format!("repair {ops}")
        };
        out.line(format_args!(
            "pass {pass}: {} action(s): {} {noun} write(s), {} {repair_ops} submitted, {} error(s); {}",
            done.actions_done,
            writes,
            done.jobs_submitted.len(),
            done.errors.len() + damaged.len(),
            report::counts_line(&plan, "when the pass began").trim_end()
        ))?;
    }
    if let Some(why) = &done.halted {
        out.line(format_args!("pass {pass} stopped before its end: {why}"))?;
    } else if let Some(p) = &pulled {
        out.line(format_args!("pass {pass} stopped waiting: {}", p.why()))?;
    }
    if !canceled.is_empty() {
        let named: Vec<String> = canceled
            .iter()
            .map(|(t, id)| format!("{t} ({id})"))
            .collect();
        out.line(format_args!(
            "pass {pass}: {} queued {} canceled by the suspend of {}, none counts as failed: {}",
            canceled.len(),
            F::WORDS.ops_for(canceled.len()),
            pulled.as_ref().map_or("", |p| p.object.as_str()),
            named.join(", ")
        ))?;
    }
    if done.no_write_access.is_some() {
        out.line(format_args!(
            "pass {pass} stopped at its first write: the fleet refuses this user's writes (see the error logged)"
        ))?;
    }
    if let Some(path) = &run.metrics_file {
        let previous = crate::files::read_text(path).unwrap_or_default();
        let text = metrics::render(&previous, &plan, &done, started.elapsed(), at);
        metrics::write_atomically(path, &text).map_err(|source| Error::Metrics {
            path: path.clone(),
            source,
        })?;
    }
    Ok(if done.no_write_access.is_some() {
        Exit::NoWriteAccess
    } else if done.errors.is_empty() && damaged.is_empty() {
        Exit::Ok
    } else {
        Exit::Partial
    })
}

/// Whether this lint is new: a daemon's every pass finds the same bad marks, and one warning
/// each while it lasts says all there is to say (`crate::plug::first_time`); `tags lint` and
/// `status` list them all at any time.
fn first_time(lint: &crate::engine::plan::Lint) -> bool {
    crate::plug::first_time(&lint.to_string())
}
