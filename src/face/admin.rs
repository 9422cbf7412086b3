//! The admin verbs (allow, suspend, resume, request, clear): read the fleet, compute the mark
//! edits (`crate::admin`), carry them out and save, then say what changed. Under the fleet's
//! lock for a fleet file; on a live fleet without it, a suspend pulling the brake instead.

use super::Exit;
use super::fleet::{acquire_lock, connect, execute_and_save, lock_taken};
use super::printer::Printer;
use super::settings::{Clock, Fleet, Logs};
use crate::plug::Error;
use crate::plug::FamilyFace;
use crate::{
    admin::{self, Verb},
    engine::{Applied, ObjectRef, Plan},
};
use std::path::Path;
use std::time::Duration;

pub fn admin<F: FamilyFace>(
    out: &mut Printer,
    logs: &Logs,
    fleet: &Fleet<F>,
    lock: &Path,
    object: &ObjectRef,
    verb: &Verb<F::Level>,
    applied_within: Duration,
) -> Result<Exit, Error> {
    // A fleet file is rewritten whole by a pass: an edit waits for the lock. A live fleet's
    // own store orders the writes, so the verb does not wait for a pass (which may wait many
    // minutes for its last writes): a suspend pulls the brake instead (crate::brake), which
    // stops a pass running now before its next write.
    let live = !F::buffers_writes(&fleet.source);
    let _lock = if live {
        None
    } else {
        Some(acquire_lock(fleet, lock)?)
    };
    let mut backend = connect(fleet)?;
    // Beside the lock a pass holds, whatever URL it reached the fleet by (a Ganeti cluster's
    // lock is named by its uuid: one more read, made beside the fleet's so that it does not
    // delay the suspend's write, which a pass on any host watches for).
    let braking = live && matches!(verb, Verb::Suspend { .. } | Verb::Resume { .. });
    let (snap, brake_lock) = std::thread::scope(|s| {
        let lock = braking.then(|| s.spawn(|| lock_taken(fleet, lock)));
        let snap = backend.snapshot();
        let lock = lock.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        (snap, lock)
    });
    let snap = snap.map_err(|e| Error::Snapshot(e.into()))?;
    let brake_lock = brake_lock.transpose()?;
    let object = &admin::resolve::<F>(&snap, object).map_err(|source| Error::Select {
        from: fleet.describe(),
        source,
    })?;
    if let Verb::Request { now, .. } = verb {
        let settings = F::settings(&fleet.source, backend.as_ref());
        admin::refuse_request_while_suspended::<F>(&snap, &settings, object, *now)
            .map_err(Error::Edit)?;
    }
    let brake = |lock: &Path, source| Error::Brake {
        path: crate::brake::path(lock),
        object: object.clone(),
        source,
    };
    // A resume lets go of the object's brake first, whatever the fleet says: the brake of a
    // suspend that never showed there (its write failed later, or was removed by hand) is
    // released by the resume that finds nothing to resume. A suspend pulls the brake only
    // once the fleet took its write (rule 11): a refused one holds nothing.
    if let (Some(lock), Verb::Resume { .. }) = (&brake_lock, verb) {
        crate::brake::release(lock, &object.to_string()).map_err(|e| brake(lock, e))?;
    }
    let actions = admin::edits::<F>(&snap, object, verb).map_err(Error::Edit)?;
    // The wall clock: it only decides whether a timed suspend below has run out.
    let kept = match verb {
        Verb::Suspend { all: false, .. } => {
            let settings = F::settings(&fleet.source, backend.as_ref());
            admin::kept_repairable::<F>(&snap, &settings, object, Clock::wall().now())
        }
        _ => vec![],
    };
    let plan = Plan {
        now: 0,
        targets: vec![],
        scope_actions: actions,
        lint: vec![],
        fleet: Default::default(),
        counts: Default::default(),
    };
    // An edit that failed halfway is not saved: the admin runs the command again, whole.
    let (done, saved) = execute_and_save(logs, fleet, &plan, backend.as_mut(), |b, done| {
        if done.errors.is_empty() {
            b.flush().map(|()| true)
        } else {
            Ok(false)
        }
    });
    if let Some(why) = &done.no_write_access {
        return Err(Error::NoWriteAccess {
            object: object.clone(),
            message: why.clone(),
        });
    }
    // The executor's own line is not logged for an admin command: say why it stopped here.
    if let Some(why) = &done.halted {
        return Err(Error::Act {
            object: object.clone(),
            message: why.clone(),
        });
    }
    if let Some((_, e)) = done.errors.first() {
        return Err(Error::Act {
            object: object.clone(),
            message: e.clone(),
        });
    }
    saved.map_err(|e| Error::Save(e.into()))?;
    let braked = match (&brake_lock, verb) {
        (Some(lock), Verb::Suspend { .. }) if !plan.scope_actions.is_empty() => {
            crate::brake::pull(lock, &object.to_string()).map_err(|e| brake(lock, e))?;
            Some(lock)
        }
        _ => None,
    };
    for a in plan.actions() {
        out.line(a)?;
    }
    if plan.scope_actions.is_empty() {
        out.line(format_args!("{object}: already so, nothing changed"))?;
    }
    if !kept.is_empty() {
        const SHOWN: usize = 10;
        let mut named: Vec<String> = kept
            .iter()
            .take(SHOWN)
            .map(|(o, p)| format!("{o} ({p})"))
            .collect();
        if kept.len() > SHOWN {
            named.push(format!("and {} more", kept.len() - SHOWN));
        }
        let (n, keep) = match kept.len() {
            1 => ("1 object".to_owned(), "keeps a policy of its own and goes"),
            n => (format!("{n} objects"), "keep a policy of their own and go"),
        };
        out.line(format_args!(
            "note: {n} under {object} {keep} on repairing (the nearest policy wins): {}; suspend them too, or `suspend --all {object}` to stop every repair under it",
            named.join(", ")
        ))?;
    }
    if !plan.scope_actions.is_empty() && !applied_within.is_zero() {
        // The admin's next command reads the fleet again (`suspend X; resume X`): it must find
        // the change there, not an older state.
        match backend.wait_applied(applied_within) {
            // The suspend is in the fleet now, which governs from here on: passes that
            // begin later need not wait for it (nor for 15 minutes, should someone remove
            // its tag by hand).
            Ok(Applied::Yes) => {
                if let Some(lock) = braked {
                    crate::brake::applied(lock, &object.to_string()).map_err(|e| brake(lock, e))?;
                }
            }
            Ok(Applied::NotYet(what)) => {
                return Err(Error::NotApplied {
                    object: object.clone(),
                    what,
                    waited: applied_within,
                    braked: braked.is_some(),
                });
            }
            // The fleet refused the suspend after all (its tag job failed): nothing holds.
            Err(e) => {
                if let Some(lock) = braked {
                    crate::brake::release(lock, &object.to_string()).map_err(|e| brake(lock, e))?;
                }
                return Err(Error::Act {
                    object: object.clone(),
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(Exit::Ok)
}
