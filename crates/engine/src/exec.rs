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
                #[cfg(any(test, feature = "testkit"))]
                Err(BackendError::Crashed { .. }) => {
                    report.crashed = true;
                    return report;
                }
                Err(BackendError::Halted(why)) => {
                    tracing::warn!(target_name = %crate::text::shown(&name), action = %action, "{why}: the pass stops here, the rest of its plan is not carried out");
                    report.halted = Some(why);
                    return report;
                }
                Err(BackendError::NoWriteAccess(why)) => {
                    tracing::error!(target_name = %crate::text::shown(&name), action = %action, "{why}. The pass stops here: no write of it can succeed");
                    report.errors.push((name.clone(), why.clone()));
                    report.no_write_access = Some(why);
                    return report;
                }
                Err(e) => {
                    tracing::error!(target_name = %crate::text::shown(&name), action = %action, error = %e, "action failed; skipping the rest of this target");
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
    use crate::fixture::FixtureLevel;
    use crate::fixture::{Fixture, FixtureBox, FixtureRoom, FixtureShelf};
    use crate::plan::Plan;

    /// Refuses every write the way a backend whose credentials may only read does.
    struct ReadOnly {
        writes: usize,
    }

    impl Backend<Fixture> for ReadOnly {
        fn snapshot(&mut self) -> Result<FixtureRoom, BackendError> {
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
            _: &FixtureLevel,
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
        let a_box = |name: &str| FixtureBox {
            name: name.into(),
            shelf: "s1".into(),
            marks: vec![],
            needs: Some(FixtureLevel::Restart),
        };
        let room = FixtureRoom {
            marks: vec!["restart".into()],
            shelves: vec![FixtureShelf {
                name: "s1".into(),
                marks: vec![],
                down: true,
                back_at: None,
            }],
            boxes: vec![a_box("b1"), a_box("b2")],
            ..FixtureRoom::default()
        };
        let plan = crate::plan::<Fixture>(&room, &(), 1000, &limits, 1);
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

    /// Notes every write in a line, numbers operations from 1, and fails the first write whose
    /// line contains `fail_on` with its error.
    #[derive(Default)]
    struct Log {
        lines: Vec<String>,
        fail_on: Option<(String, fn() -> BackendError)>,
        next_id: u32,
        no_chaining: bool,
    }

    impl Log {
        fn failing(fail_on: &str, error: fn() -> BackendError) -> Self {
            Log {
                fail_on: Some((fail_on.to_owned(), error)),
                ..Log::default()
            }
        }

        fn write(&mut self, line: String) -> Result<(), BackendError> {
            if let Some((needle, error)) = &self.fail_on
                && line.contains(needle.as_str())
            {
                let error = *error;
                self.fail_on = None;
                return Err(error());
            }
            self.lines.push(line);
            Ok(())
        }
    }

    impl Backend<Fixture> for Log {
        fn snapshot(&mut self) -> Result<FixtureRoom, BackendError> {
            unreachable!("the executor reads nothing")
        }
        fn add_marks(&mut self, o: &ObjectRef, m: &[String], _: &str) -> Result<(), BackendError> {
            self.write(format!("{o} add {}", m.join(" ")))
        }
        fn remove_marks(
            &mut self,
            o: &ObjectRef,
            m: &[String],
            _: &str,
        ) -> Result<(), BackendError> {
            self.write(format!("{o} remove {}", m.join(" ")))
        }
        fn submit(
            &mut self,
            t: &str,
            op: &FixtureLevel,
            r: &str,
            after: Option<&u32>,
        ) -> Result<u32, BackendError> {
            let id = self.next_id + 1;
            self.write(format!("{t} submit {op} #{id} after {after:?} ({r})"))?;
            self.next_id = id;
            Ok(id)
        }
        fn can_follow(&self, _: &FixtureLevel) -> bool {
            !self.no_chaining
        }
    }

    const NOW: i64 = 1_800_000_000;
    const REQUEST_ID: &str = "0b4f6f6e-7e2a-4c1e-9d7a-2f4b1c3d5e6f";

    fn refused() -> BackendError {
        BackendError::Api("refused".into())
    }

    /// Two broken boxes on one shelf under a room that allows restarts: both start a repair.
    /// `b2` was asked for by a once-off request (a pending mark without operations).
    fn two_repairs() -> Plan<Fixture> {
        two_repairs_b1_marked(vec![])
    }

    fn two_repairs_b1_marked(b1: Vec<String>) -> Plan<Fixture> {
        let request = format!("pending:restart:{REQUEST_ID}:{}:", NOW - 60);
        let a_box = |name: &str, marks: Vec<String>| FixtureBox {
            name: name.into(),
            shelf: "s1".into(),
            marks,
            needs: Some(FixtureLevel::Restart),
        };
        let room = FixtureRoom {
            marks: vec!["restart".into()],
            shelves: vec![FixtureShelf {
                name: "s1".into(),
                marks: vec![],
                down: false,
                back_at: None,
            }],
            boxes: vec![a_box("b1", b1), a_box("b2", vec![request])],
            ..FixtureRoom::default()
        };
        crate::plan::<Fixture>(&room, &(), NOW, &crate::limits::Limits::default(), 1)
    }

    fn b1_id(plan: &Plan<Fixture>) -> String {
        match plan.targets[0].actions.first() {
            Some(Action::Repair(r)) => r.id.clone(),
            other => panic!("a repair for b1 first, not {other:?}"),
        }
    }

    /// What the executor wrote, with b1's new repair id as `ID` and b2's request as `REQ`.
    fn written(plan: &Plan<Fixture>, log: &Log) -> Vec<String> {
        let id = b1_id(plan);
        log.lines
            .iter()
            .map(|l| l.replace(&id, "ID").replace(REQUEST_ID, "REQ"))
            .collect()
    }

    /// b2's repair, whole, its operation numbered `op`.
    fn b2_whole(op: u32) -> Vec<String> {
        let (t, r) = (NOW, NOW - 60);
        vec![
            format!("box/b2 add pending:restart:REQ:{t}:"),
            format!("b2 submit restart #{op} after None (autorepair:REQ)"),
            format!("box/b2 add pending:restart:REQ:{t}:{op}"),
            format!("box/b2 remove pending:restart:REQ:{t}: pending:restart:REQ:{r}:"),
        ]
    }

    #[test]
    fn a_repair_is_written_in_the_crash_safe_order() {
        let plan = two_repairs();
        let mut log = Log::default();
        let report = execute(&plan, &mut log);
        let t = NOW;
        let mut want = vec![
            // The pending mark before the operation: a pass killed after the submit finds the
            // operation by the repair id the pending mark names.
            format!("box/b1 add pending:restart:ID:{t}:"),
            "b1 submit restart #1 after None (autorepair:ID)".into(),
            format!("box/b1 add pending:restart:ID:{t}:1"),
            format!("box/b1 remove pending:restart:ID:{t}:"),
        ];
        // A request: the same order under the request's id; the request goes last.
        want.extend(b2_whole(2));
        assert_eq!(written(&plan, &log), want);
        assert_eq!(report.actions_done, 2);
        assert_eq!(report.mark_writes, 6);
        assert_eq!(report.jobs_submitted, [1, 2]);
        assert!(report.errors.is_empty() && !report.crashed && report.halted.is_none());
    }

    #[test]
    fn a_failed_write_stops_what_depends_on_it_and_never_the_other_targets() {
        let t = NOW;
        // What failed, the write's line, what b1 wrote, and the number of b2's operation.
        let cases: Vec<(&str, String, Vec<String>, u32)> = vec![
            // Without its pending mark, the operation would be an orphan: none is submitted.
            (
                "the first pending mark",
                "box/b1 add pending".into(),
                vec![],
                1,
            ),
            (
                // The operation was not made: no id to record, and the empty pending mark
                // stays for the next pass to continue the repair.
                "the submit",
                "b1 submit".into(),
                vec![format!("box/b1 add pending:restart:ID:{t}:")],
                1,
            ),
            (
                // The empty pending mark is removed only once the one with the operation is.
                "recording the operation",
                format!(":{t}:1"),
                vec![
                    format!("box/b1 add pending:restart:ID:{t}:"),
                    "b1 submit restart #1 after None (autorepair:ID)".into(),
                ],
                2,
            ),
        ];
        for (what, fail_on, b1_wrote, op) in cases {
            let plan = two_repairs();
            let mut log = Log::failing(&fail_on, refused);
            let report = execute(&plan, &mut log);
            let want: Vec<String> = b1_wrote.into_iter().chain(b2_whole(op)).collect();
            assert_eq!(written(&plan, &log), want, "{what} failed");
            assert_eq!(
                report.errors,
                [("b1".to_owned(), "refused".to_owned())],
                "{what} failed"
            );
            assert_eq!(report.actions_done, 1, "{what} failed: b2's repair is done");
        }
    }

    #[test]
    fn a_failed_action_skips_the_rest_of_its_target_only() {
        // b1's timed suspend is over: its plan starts the repair, then removes the suspend.
        let over = format!("suspend:{}", NOW - 1);
        let plan = two_repairs_b1_marked(vec![over.clone()]);
        assert_eq!(plan.targets[0].actions.len(), 2, "{:?}", plan.targets[0]);
        let mut log = Log::failing("b1 submit", refused);
        let report = execute(&plan, &mut log);
        let want: Vec<String> = std::iter::once(format!("box/b1 add pending:restart:ID:{NOW}:"))
            .chain(b2_whole(1))
            .collect();
        assert_eq!(written(&plan, &log), want, "the suspend stays");
        assert_eq!(report.errors.len(), 1);
    }

    #[test]
    fn a_crash_or_a_halt_ends_the_pass_at_that_write() {
        let crashed = || BackendError::Crashed { calls: 1 };
        let halted = || BackendError::Halted("lease lost".into());
        for (error, is_crash) in [(crashed as fn() -> BackendError, true), (halted, false)] {
            let plan = two_repairs();
            let mut log = Log::failing("b1 submit", error);
            let report = execute(&plan, &mut log);
            assert_eq!(
                log.lines.len(),
                1,
                "only b1's first pending mark: {:?}",
                log.lines
            );
            assert_eq!(report.crashed, is_crash);
            assert_eq!(report.halted.is_some(), !is_crash);
            assert!(report.errors.is_empty(), "{:?}", report.errors);
            assert_eq!(report.actions_done, 0);
        }
    }

    #[test]
    fn steps_are_chained_each_after_the_last_and_only_where_the_backend_can() {
        let mut plan = two_repairs();
        plan.targets.truncate(1);
        if let Action::Repair(r) = &mut plan.targets[0].actions[0] {
            r.ops = vec![
                FixtureLevel::Nudge,
                FixtureLevel::Restart,
                FixtureLevel::Replace,
            ];
        }
        let t = NOW;
        for (no_chaining, want) in [
            (
                false,
                vec![
                    format!("box/b1 add pending:restart:ID:{t}:"),
                    "b1 submit nudge #1 after None (autorepair:ID)".into(),
                    "b1 submit restart #2 after Some(1) (autorepair:ID)".into(),
                    "b1 submit replace #3 after Some(2) (autorepair:ID)".into(),
                    format!("box/b1 add pending:restart:ID:{t}:1+2+3"),
                    format!("box/b1 remove pending:restart:ID:{t}:"),
                ],
            ),
            (
                // A later pass submits the rest: the pending mark records only what ran.
                true,
                vec![
                    format!("box/b1 add pending:restart:ID:{t}:"),
                    "b1 submit nudge #1 after None (autorepair:ID)".into(),
                    format!("box/b1 add pending:restart:ID:{t}:1"),
                    format!("box/b1 remove pending:restart:ID:{t}:"),
                ],
            ),
        ] {
            let mut log = Log {
                no_chaining,
                ..Log::default()
            };
            execute(&plan, &mut log);
            assert_eq!(
                written(&plan, &log),
                want,
                "chaining refused: {no_chaining}"
            );
        }
    }
}
