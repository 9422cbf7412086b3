//! The machines family's own safety rules, checked after every pass, and the facts they read.

use super::*;

pub(super) fn broken(rule: &str, detail: String) -> Result<(), Broken> {
    Err(Broken::new(rule, detail))
}

/// The machine's effective policy, nearest first: its own labels, its rack's, the cluster's.
pub(super) fn policy(fleet: &Snapshot, m: &Machine, now: i64) -> Option<Option<MachinesLevel>> {
    sim::policy::<MachinesWorld>(fleet, m, now)
}

pub(super) fn pendings(m: &Machine) -> impl Iterator<Item = Pending<'_, MachinesLevel>> {
    m.marks.iter().filter_map(|t| match Labels::parse(t) {
        Ok(Mark::Pending(p)) => Some(p),
        _ => None,
    })
}

/// The repair an entry belongs to: the one that records it; else (a pass died between creating
/// the entry and recording it) the newest that records nothing, if the entry is unfinished and
/// not older than that repair: a once-off request never inherits an old entry.
pub(super) fn owner<'m>(m: &'m Machine, e: &Entry) -> Option<Pending<'m, MachinesLevel>> {
    let all: Vec<Pending<'_, MachinesLevel>> = pendings(m).collect();
    let p = e.progress;
    all.iter()
        .find(|r| r.ops.iter::<OpId>().any(|o| o.0 == e.index))
        .or_else(|| {
            all.iter()
                .filter(|r| r.ops.is_empty())
                .filter(|r| !p.status.finished() && !p.deleted && p.last_transition >= r.since)
                .max_by_key(|r| r.since)
        })
        .cloned()
}

/// Whether sabakan's default query selects the machine (sabakan's gql/match.go).
pub(super) fn selected(m: &Machine) -> bool {
    matches!(m.info.state, State::Unhealthy | State::Unreachable) && m.info.role != "boot"
}

pub(super) fn unfinished(m: &Machine) -> bool {
    m.entry().is_some_and(|e| !e.progress.status.finished())
}

pub(super) fn queue_disabled(fleet: &Snapshot) -> bool {
    let name = format!("{CLUSTER_PREFIX}queue");
    fleet.machines.iter().any(|m| {
        m.info
            .labels
            .iter()
            .any(|(k, v)| *k == name && v == "disabled")
    })
}

pub(super) fn control_plane(fleet: &Snapshot, m: &Machine) -> bool {
    m.address()
        .is_some_and(|a| fleet.nodes.iter().any(|n| n.control_plane && n.is(a)))
}

impl MachinesWorld {
    /// The rules of the machines family (CKE's, docs/machines.md, and docs/design.md's rules for
    /// steps), checked after every pass from the fleet the watcher read, the world after the pass,
    /// the watcher's calls and the commands the world ran:
    ///
    /// - **the cluster limiter**: no entry is created while the entries recorded plus the new
    ///   ones exceed `maximum-repair-queue-entries`;
    /// - **max_concurrent_repairs**: no more machines than that get a drain or a repair command
    ///   in one pass, and **at most one control plane** does;
    /// - **drain first**: a repair command of a step that needs a drain runs only on a Node
    ///   that is cordoned with no pod left to move (a machine that is no Node needs none);
    /// - **at most once**: a repair command recorded as started (the step of the entry) never
    ///   runs again, across kills, also when the watcher died while it ran;
    /// - **suspend and disable**: no drain and no repair command on a machine suspended (its
    ///   own labels, its rack's or the cluster's, nearest first) or while the queue is disabled;
    /// - **levels**: a step runs only within the level of the repair that owns the entry and of
    ///   the effective policy; an entry no repair names runs none;
    /// - **others' cordons**: a Node someone else cordoned stays cordoned;
    /// - **indexes never repeat**: a new entry's index was never recorded or given out before
    ///   in the scenario, however many entries were deleted and removed meanwhile.
    pub(super) fn check_rules(
        &mut self,
        before: &Snapshot,
        calls: &CallLog<Machines>,
        runs: &[Ran],
        now: i64,
    ) -> Result<(), Broken> {
        let max_entries = self.settings.constraints.maximum_repair_queue_entries;
        let recorded = before
            .machines
            .iter()
            .filter(|m| m.entry().is_some())
            .count();
        self.indexes.extend(
            before
                .machines
                .iter()
                .filter_map(|m| m.entry().map(|e| e.index)),
        );
        for s in &calls.submitted {
            if !self.indexes.insert(s.id.0) {
                return broken(
                    "a repair entry index given twice",
                    format!(
                        "{}: entry #{} was created, an index an earlier entry of the scenario had",
                        s.target, s.id
                    ),
                );
            }
        }
        let created = calls.submitted.len();
        if created > 0 && recorded + created > max_entries {
            return broken(
                "more repair entries than maximum-repair-queue-entries",
                format!("{recorded} recorded + {created} created > {max_entries}"),
            );
        }
        for r in runs {
            if let Some(why) = &r.context.undrained {
                return broken(
                    "a repair command on an undrained machine",
                    format!(
                        "{} step {}: {why}",
                        r.context.serial,
                        r.context.step.map_or(0, |s| s + 1)
                    ),
                );
            }
            if let Some(step) = r.context.step
                && !self
                    .ran
                    .insert((r.context.serial.clone(), r.context.generation, step))
            {
                return broken(
                    "a repair command run twice",
                    format!(
                        "{}: the command of step {} ran again for the same entry (the machine's entry no. {} in this scenario)",
                        r.context.serial,
                        step + 1,
                        r.context.generation
                    ),
                );
            }
        }
        let mut acted: BTreeSet<&str> = runs
            .iter()
            .filter(|r| r.context.step.is_some())
            .map(|r| r.context.serial.as_str())
            .collect();
        for a in &calls.advanced {
            if let Op::Drain { serial, .. } = &a.op {
                acted.insert(serial);
            }
        }
        let max = self.settings.repair.max_concurrent_repairs;
        if acted.len() > max {
            return broken(
                "more machines repaired at once than max_concurrent_repairs",
                format!("{acted:?} > {max}"),
            );
        }
        let machine = |serial: &str| before.machines.iter().find(|m| m.serial == serial);
        let cps: Vec<&&str> = acted
            .iter()
            .filter(|s| machine(s).is_some_and(|m| control_plane(before, m)))
            .collect();
        if cps.len() > 1 {
            return broken("two control planes repaired at once", format!("{cps:?}"));
        }
        for serial in &acted {
            let Some(m) = machine(serial) else { continue };
            if queue_disabled(before) {
                return broken(
                    "a drain or command while the repair queue is disabled",
                    (*serial).to_owned(),
                );
            }
            if policy(before, m, now) == Some(None) {
                return broken(
                    "a drain or command on a suspended machine",
                    (*serial).to_owned(),
                );
            }
        }
        for r in runs {
            let Some(step) = r.context.step else { continue };
            let Some(m) = machine(&r.context.serial) else {
                continue;
            };
            let level = MachinesLevel::step(step + 1);
            let Some(e) = m.entry() else { continue };
            let Some(repair) = owner(m, e) else {
                return broken(
                    "a step of an entry no repair names",
                    format!("{} entry #{} step {}", m.serial, e.index, step + 1),
                );
            };
            if level > repair.repair {
                return broken(
                    "a step above its repair's level",
                    format!(
                        "{} step {} ({level}) of repair {} at {}",
                        m.serial,
                        step + 1,
                        repair.id,
                        repair.repair
                    ),
                );
            }
            if let Some(Some(allowed)) = policy(before, m, now)
                && level > allowed
            {
                return broken(
                    "a step above the policy's level",
                    format!("{} step {} ({level}), policy {allowed}", m.serial, step + 1),
                );
            }
        }
        let after = self.fleet();
        for n in before
            .nodes
            .iter()
            .filter(|n| n.unschedulable && !n.cordoned_by_us)
        {
            if !after
                .nodes
                .iter()
                .any(|a| a.name == n.name && a.unschedulable)
            {
                return broken(
                    "someone else's cordon removed",
                    format!("Node {} was uncordoned by the watcher", n.name),
                );
            }
        }
        Ok(())
    }
}
