//! The executor: carries out a plan through a backend, in the crash-safe order, one target at
//! a time. A failure on one target is logged and never stops the others.

use crate::backend::{Backend, BackendError};
use crate::plan::{Action, Plan, RepairStart};
use crate::snapshot::ObjectRef;
use serde::Serialize;

#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub actions_done: usize,
    pub jobs_submitted: Vec<u64>,
    /// The object and what went wrong, for every action that failed.
    pub errors: Vec<(String, String)>,
    /// Set when the backend reported a crash (tests): nothing after it ran.
    pub crashed: bool,
}

pub fn execute(plan: &Plan, backend: &mut dyn Backend) -> Report {
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

fn apply(
    action: &Action,
    backend: &mut dyn Backend,
    report: &mut Report,
) -> Result<(), BackendError> {
    match action {
        Action::AddTags {
            object,
            tags,
            reason,
        } => {
            backend.add_tags(object, tags, reason)?;
            for tag in tags {
                tracing::info!(object = %object, tag = %tag, reason = %reason, "tag added");
            }
        }
        Action::RemoveTags {
            object,
            tags,
            reason,
        } => {
            backend.remove_tags(object, tags, reason)?;
            for tag in tags {
                tracing::info!(object = %object, tag = %tag, reason = %reason, "tag removed");
            }
        }
        Action::Repair(start) => repair(start, backend, report)?,
    }
    Ok(())
}

/// Pending tag first, then the jobs (carrying the repair id, so a later pass finds them even
/// if this one dies before recording them), then the tag that records the jobs, and only then
/// the tags it replaces.
fn repair(
    r: &RepairStart,
    backend: &mut dyn Backend,
    report: &mut Report,
) -> Result<(), BackendError> {
    let object = ObjectRef::Instance(r.target.clone());
    if let Some(first) = &r.write_first {
        backend.add_tags(&object, std::slice::from_ref(first), &r.reason)?;
        tracing::info!(object = %object, tag = %first, reason = "repair starting", "tag added");
    }
    let mut new_jobs = Vec::new();
    let mut after = None;
    for op in &r.ops {
        if after.is_some() && !backend.can_follow(op) {
            tracing::info!(object = %object, repair = %r.id, op = %op, "cannot be chained here: a later pass submits it");
            break;
        }
        let job = backend.submit(&r.target, op, &r.reason, after)?;
        tracing::info!(object = %object, repair = %r.id, job, op = %op, "job submitted");
        report.jobs_submitted.push(job);
        new_jobs.push(job);
        after = Some(job);
    }
    let tag = r.pending_tag(&new_jobs).map_err(|e| {
        BackendError::Api(format!(
            "cannot record jobs {new_jobs:?} of repair {}: {e}",
            r.id
        ))
    })?;
    backend.add_tags(&object, std::slice::from_ref(&tag), &r.reason)?;
    tracing::info!(object = %object, tag = %tag, reason = "jobs recorded", "tag added");
    let old: Vec<String> = r
        .write_first
        .iter()
        .chain(&r.replaces)
        .filter(|t| **t != tag)
        .cloned()
        .collect();
    if !old.is_empty() {
        backend.remove_tags(&object, &old, &r.reason)?;
        for t in &old {
            tracing::info!(object = %object, tag = %t, reason = "superseded", "tag removed");
        }
    }
    Ok(())
}
