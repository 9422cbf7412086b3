//! The executor: carries out a plan through a backend, in the crash-safe order, one target at
//! a time. A failure on one target is logged and never stops the others.

use super::backend::{Backend, BackendError};
use super::family::Family;
use super::plan::{Action, Plan, RepairStart};
use serde::Serialize;

#[derive(Debug, Serialize)]
#[serde(bound = "")]
pub struct Report<F: Family> {
    pub actions_done: usize,
    pub jobs_submitted: Vec<F::OpId>,
    /// The object and what went wrong, for every action that failed.
    pub errors: Vec<(String, String)>,
    /// Set when the backend reported a crash (tests): nothing after it ran.
    pub crashed: bool,
}

impl<F: Family> Default for Report<F> {
    fn default() -> Self {
        Report {
            actions_done: 0,
            jobs_submitted: Vec::new(),
            errors: Vec::new(),
            crashed: false,
        }
    }
}

pub fn execute<F: Family>(plan: &Plan<F>, backend: &mut dyn Backend<F>) -> Report<F> {
    let mut report = Report::default();
    let groups = std::iter::once(("scopes".to_owned(), &plan.scope_actions))
        .chain(plan.targets.iter().map(|t| (t.name.clone(), &t.actions)));
    for (name, actions) in groups {
        for action in actions {
            match apply(action, backend, &mut report) {
                Ok(()) => report.actions_done += 1,
                Err(BackendError::Crashed { .. }) => {
                    report.crashed = true;
                    return report;
                }
                Err(e) => {
                    tracing::error!(target_name = %name, action = %action, error = %e, "action failed; skipping the rest of this target");
                    report.errors.push((name.clone(), e.to_string()));
                    break;
                }
            }
        }
    }
    report
}

fn apply<F: Family>(
    action: &Action<F>,
    backend: &mut dyn Backend<F>,
    report: &mut Report<F>,
) -> Result<(), BackendError> {
    match action {
        Action::AddMarks {
            object,
            marks,
            reason,
        } => {
            backend.add_marks(object, marks, reason)?;
            for mark in marks {
                tracing::info!(object = %object, tag = %mark, reason = %reason, "tag added");
            }
        }
        Action::RemoveMarks {
            object,
            marks,
            reason,
        } => {
            backend.remove_marks(object, marks, reason)?;
            for mark in marks {
                tracing::info!(object = %object, tag = %mark, reason = %reason, "tag removed");
            }
        }
        Action::Repair(start) => repair(start, backend, report)?,
        Action::Advance { object, op, reason } => {
            backend.advance(object, op, reason)?;
            tracing::info!(object = %object, op = %op, reason = %reason, "operation advanced");
        }
    }
    Ok(())
}

/// Pending mark first, then the operations (carrying the repair id, so a later pass finds them
/// even if this one dies before recording them), then the mark that records the operations,
/// and only then the marks it replaces.
fn repair<F: Family>(
    r: &RepairStart<F>,
    backend: &mut dyn Backend<F>,
    report: &mut Report<F>,
) -> Result<(), BackendError> {
    let object = r.object();
    if let Some(first) = &r.write_first {
        backend.add_marks(&object, std::slice::from_ref(first), &r.reason)?;
        tracing::info!(object = %object, tag = %first, reason = "repair starting", "tag added");
    }
    let mut new_ops: Vec<F::OpId> = Vec::new();
    for op in &r.ops {
        let after = new_ops.last();
        if after.is_some() && !backend.can_follow(op) {
            tracing::info!(object = %object, repair = %r.id, op = %op, "cannot be chained here: a later pass submits it");
            break;
        }
        let id = backend.submit(&r.target, op, &r.reason, after)?;
        tracing::info!(object = %object, repair = %r.id, job = %id, op = %op, "job submitted");
        report.jobs_submitted.push(id.clone());
        new_ops.push(id);
    }
    let tag = r.pending_mark(&new_ops).map_err(|e| {
        BackendError::Api(format!(
            "cannot record operations {new_ops:?} of repair {}: {e}",
            r.id
        ))
    })?;
    backend.add_marks(&object, std::slice::from_ref(&tag), &r.reason)?;
    tracing::info!(object = %object, tag = %tag, reason = "jobs recorded", "tag added");
    let old: Vec<String> = r
        .write_first
        .iter()
        .chain(&r.replaces)
        .filter(|t| **t != tag)
        .cloned()
        .collect();
    if !old.is_empty() {
        backend.remove_marks(&object, &old, &r.reason)?;
        for t in &old {
            tracing::info!(object = %object, tag = %t, reason = "superseded", "tag removed");
        }
    }
    Ok(())
}
