//! The executor: carries out a plan through a backend, in the crash-safe order, one target at
//! a time. A failure on one target is logged and never stops the others; a backend that says
//! nothing more may be written ([`BackendError::Halted`]: the lease lost, a stop signal) ends
//! the pass there, and so does one whose credentials may not write at all
//! ([`BackendError::NoWriteAccess`]: every write would fail alike, so one error says it). Its log lines speak the family's words ([`Family::WORDS`], the marks'
//! noun): one family's job and tag is another's operation and annotation.

use super::backend::{Backend, BackendError};
use super::family::Family;
use super::marks::Codec;
use super::plan::{Action, Plan, RepairStart};
use serde::Serialize;

#[derive(Debug, Serialize)]
#[serde(bound = "")]
pub struct Report<F: Family> {
    pub actions_done: usize,
    /// Calls that added or removed marks (a backend may run each as a job of its own).
    pub mark_writes: usize,
    pub jobs_submitted: Vec<F::OpId>,
    /// The object and what went wrong, for every action that failed.
    pub errors: Vec<(String, String)>,
    /// Set when the backend reported a crash (tests): nothing after it ran.
    pub crashed: bool,
    /// Why the backend stopped the writing ([`BackendError::Halted`]): nothing after it ran.
    pub halted: Option<String>,
    /// The backend may not write at all ([`BackendError::NoWriteAccess`]): the pass stopped at
    /// its first write, which is also in `errors`.
    pub no_write_access: Option<String>,
}

impl<F: Family> Default for Report<F> {
    fn default() -> Self {
        Report {
            actions_done: 0,
            mark_writes: 0,
            jobs_submitted: Vec::new(),
            errors: Vec::new(),
            crashed: false,
            halted: None,
            no_write_access: None,
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
                Err(BackendError::Halted(why)) => {
                    tracing::warn!(target_name = %name, action = %action, "{why}: the pass stops here, the rest of its plan is not carried out");
                    report.halted = Some(why);
                    return report;
                }
                Err(BackendError::NoWriteAccess(why)) => {
                    tracing::error!(target_name = %name, action = %action, "{why}. The pass stops here: no write of it can succeed");
                    report.errors.push((name.clone(), why.clone()));
                    report.no_write_access = Some(why);
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
    let noun = <F::Marks as Codec>::NOUN;
    match action {
        Action::AddMarks {
            object,
            marks,
            reason,
        } => {
            backend.add_marks(object, marks, reason)?;
            report.mark_writes += 1;
            for mark in marks {
                tracing::info!(object = %object, mark = %mark, reason = %reason, "{noun} added");
            }
        }
        Action::RemoveMarks {
            object,
            marks,
            reason,
        } => {
            backend.remove_marks(object, marks, reason)?;
            report.mark_writes += 1;
            for mark in marks {
                tracing::info!(object = %object, mark = %mark, reason = %reason, "{noun} removed");
            }
        }
        Action::Repair(start) => repair(start, backend, report)?,
        Action::Advance { object, op, reason } => {
            backend.advance(object, op, reason)?;
            tracing::info!(object = %object, op = %op, reason = %reason, "{} advanced", F::WORDS.op);
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
    let (noun, words) = (<F::Marks as Codec>::NOUN, F::WORDS);
    if let Some(first) = &r.write_first {
        backend.add_marks(&object, std::slice::from_ref(first), &r.reason)?;
        report.mark_writes += 1;
        tracing::info!(object = %object, mark = %first, reason = "repair starting", "{noun} added");
    }
    let mut new_ops: Vec<F::OpId> = Vec::new();
    for op in &r.ops {
        let after = new_ops.last();
        if after.is_some() && !backend.can_follow(op) {
            tracing::info!(object = %object, repair = %r.id, op = %op, "cannot be chained here: a later pass submits it");
            break;
        }
        let id = backend.submit(&r.target, op, &r.reason, after)?;
        tracing::info!(object = %object, repair = %r.id, id = %id, op = %op, "{} submitted", words.op);
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
    report.mark_writes += 1;
    let recorded = format!("{} recorded", words.ops);
    tracing::info!(object = %object, mark = %tag, reason = %recorded, "{noun} added");
    let old: Vec<String> = r
        .write_first
        .iter()
        .chain(&r.replaces)
        .filter(|t| **t != tag)
        .cloned()
        .collect();
    if !old.is_empty() {
        backend.remove_marks(&object, &old, &r.reason)?;
        report.mark_writes += 1;
        for t in &old {
            tracing::info!(object = %object, mark = %t, reason = "superseded", "{noun} removed");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ObjectRef;
    use crate::toy::ToyLevel;
    use crate::toy::{Toy, ToyBox, ToyRoom, ToyShelf};

    /// Refuses every write the way a backend whose credentials may only read does.
    struct ReadOnly {
        writes: usize,
    }

    impl Backend<Toy> for ReadOnly {
        fn snapshot(&mut self) -> Result<ToyRoom, BackendError> {
            unreachable!("the executor reads nothing")
        }
        fn add_marks(&mut self, _: &ObjectRef, _: &[String], _: &str) -> Result<(), BackendError> {
            self.writes += 1;
            Err(BackendError::NoWriteAccess("user u may not write".into()))
        }
        fn remove_marks(
            &mut self,
            o: &ObjectRef,
            m: &[String],
            r: &str,
        ) -> Result<(), BackendError> {
            self.add_marks(o, m, r)
        }
        fn submit(
            &mut self,
            _: &str,
            _: &ToyLevel,
            _: &str,
            _: Option<&u32>,
        ) -> Result<u32, BackendError> {
            self.writes += 1;
            Err(BackendError::NoWriteAccess("user u may not write".into()))
        }
    }

    #[test]
    fn a_backend_that_may_not_write_stops_the_pass_at_its_first_write_with_one_error() {
        let limits = crate::limits::Limits::default();
        // A room allowing restarts whose shelf fell with two boxes on it.
        let a_box = |name: &str| ToyBox {
            name: name.into(),
            shelf: "s1".into(),
            marks: vec![],
            needs: Some(ToyLevel::Restart),
        };
        let room = ToyRoom {
            marks: vec!["restart".into()],
            shelves: vec![ToyShelf {
                name: "s1".into(),
                marks: vec![],
                down: true,
            }],
            boxes: vec![a_box("b1"), a_box("b2")],
            ..ToyRoom::default()
        };
        let plan = crate::plan::<Toy>(&room, &(), 1000, &limits, 1);
        let with_writes = plan
            .targets
            .iter()
            .filter(|t| !t.actions.is_empty())
            .count();
        assert!(with_writes >= 2, "the room has writes for several boxes");
        let mut backend = ReadOnly { writes: 0 };
        let report = execute(&plan, &mut backend);
        assert_eq!(backend.writes, 1, "no write after the first refused");
        assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
        assert_eq!(
            report.no_write_access.as_deref(),
            Some("user u may not write")
        );
    }
}
