//! The metal3 family's own safety rules, checked after every pass.

use super::*;

/// The rules of docs/design.md, rule 7, checked after every pass from the fleet before and after it
/// and the watcher's calls:
///
/// - **a host the watcher powered off is powered on again**: autorepair's reboot key never stays
///   on a host more than [`ORPHANED_PASSES`] complete passes in a row while no power cycle is
///   recorded as under way on its Machine (a failed cycle leaves the key to withdraw; a
///   Machine gone leaves it to remove), nor more than [`LATE_PASSES`] complete passes beyond
///   `cycle_timeout` in any case; after the quiet passes no host carries it, and every host the
///   watcher ever powered off is on unless its BMC cannot power it on or someone else keeps it
///   off ([`World::check_end`]);
/// - **no Node is deleted while its host is on**: a Node gone during a pass (only the watcher
///   acts then) had its host observed off;
/// - **no power cycle in a loop**: the watcher adds its reboot key to a Machine's host at most
///   once per repair and never within `reboot_loop_window` of an earlier power cycle of the same
///   Machine that did not fail (after a failure, only a person's clear lets a new one start);
///   nor while the host already carries the key;
/// - **machines under remediation count as down** in the limiter: that is the engine's rule
///   "started while the fleet-wide limit was exceeded", with [`World::down_domains`] counting
///   every Machine with a repair under way.
///
/// They remember what they need from pass to pass.
#[derive(Debug, Default)]
pub(super) struct Rules {
    /// Per Machine, the power cycles the watcher started on it.
    pub(super) power_offs: BTreeMap<String, Vec<PowerOff>>,
    /// Per host carrying autorepair's reboot key, how long it has.
    pub(super) keyed: BTreeMap<String, Keyed>,
    /// Every host the watcher ever powered off.
    pub(super) powered_off: BTreeSet<String>,
}

#[derive(Debug)]
pub(super) struct PowerOff {
    pub(super) at: i64,
    pub(super) repair: String,
    /// It ended as a failure: the Machine is parked until a person clears it, so the next
    /// power cycle is the person's decision.
    pub(super) failed: bool,
}

#[derive(Debug)]
pub(super) struct Keyed {
    /// The first pass that ended with the key on the host.
    pub(super) since: i64,
    /// Consecutive complete passes that ended with no power cycle recorded on its Machine.
    pub(super) orphaned: u32,
    /// Complete passes that ended with the key on though `cycle_timeout` had passed.
    pub(super) late: u32,
}

/// Complete passes a reboot key may stay with no power cycle under way: the protocol's three
/// steps (Node deleted, request removed, key removed), one more for a request a health check
/// sets again meanwhile.
pub(super) const ORPHANED_PASSES: u32 = 4;
/// Complete passes a reboot key may outlive `cycle_timeout`: the pass that fails the cycle and
/// the protocol's steps after it.
pub(super) const LATE_PASSES: u32 = 5;

pub(super) fn broken(rule: &str, detail: String) -> Result<(), Broken> {
    Err(Broken::new(rule, detail))
}

impl Rules {
    pub(super) fn check(
        &mut self,
        before: &Snapshot,
        after: &Snapshot,
        calls: &CallLog<Metal3>,
        now: i64,
    ) -> Result<(), Broken> {
        let settings = settings();
        // Nodes fenced only once their host is seen off.
        let left: BTreeSet<&str> = after.nodes.iter().map(|n| n.name.as_str()).collect();
        for n in before
            .nodes
            .iter()
            .filter(|n| !left.contains(n.name.as_str()))
        {
            let m = before
                .machines
                .iter()
                .find(|m| m.node_ref.as_deref() == Some(n.name.as_str()));
            let power = m.and_then(|m| host_of(before, m)).map(|h| h.powered_on);
            if power != Some(Some(false)) {
                return broken(
                    "a Node deleted while its host is on",
                    format!(
                        "node {} of machine {} went while its host's power was {power:?}",
                        n.name,
                        m.map_or("?", |m| m.key.as_str())
                    ),
                );
            }
        }
        // Nodes tainted out of service only once their host is seen off.
        let tainted_before: BTreeSet<&str> = before
            .nodes
            .iter()
            .filter(|n| n.out_of_service)
            .map(|n| n.name.as_str())
            .collect();
        for n in after
            .nodes
            .iter()
            .filter(|n| n.out_of_service && !tainted_before.contains(n.name.as_str()))
        {
            let m = before
                .machines
                .iter()
                .find(|m| m.node_ref.as_deref() == Some(n.name.as_str()));
            let power = m.and_then(|m| host_of(before, m)).map(|h| h.powered_on);
            if power != Some(Some(false)) {
                return broken(
                    "a Node tainted out of service while its host is on",
                    format!(
                        "node {} of machine {} was tainted while its host's power was {power:?}",
                        n.name,
                        m.map_or("?", |m| m.key.as_str())
                    ),
                );
            }
        }
        // The outcome of power cycles remembered, before judging new ones.
        for (object, mark) in &calls.added {
            if let Ok(Mark::Result(r)) = Annotations::parse(mark)
                && r.result == RepairResult::Failure
            {
                for p in self
                    .power_offs
                    .get_mut(object.name.as_str())
                    .into_iter()
                    .flatten()
                {
                    p.failed |= p.repair == r.id;
                }
            }
        }
        // Nothing starts on a Machine Cluster API holds back (safety rule 7).
        for s in &calls.submitted {
            if let Some(why) = before
                .machines
                .iter()
                .find(|m| m.key == s.target)
                .and_then(|m| m.held.as_deref())
            {
                return broken(
                    "repair on a Machine Cluster API holds back",
                    format!("{}: {} submitted though {why}", s.target, s.op),
                );
            }
        }
        for s in &calls.submitted {
            let Op::PowerOff { machine, host, .. } = &s.op else {
                continue;
            };
            let repair = crate::engine::plan::repair_of_reason(&s.reason).unwrap_or("?");
            if before
                .hosts
                .iter()
                .any(|h| h.key == *host && h.reboot.is_some())
            {
                return broken(
                    "power cycle started twice",
                    format!("{machine}: host {host} already carried {REBOOT_KEY}"),
                );
            }
            let earlier = self.power_offs.entry(machine.clone()).or_default();
            if let Some(p) = earlier.iter().find(|p| p.repair == repair) {
                return broken(
                    "power cycle started twice",
                    format!(
                        "{machine}: repair {repair} powered {host} off again (first at {})",
                        p.at
                    ),
                );
            }
            if let Some(p) = earlier
                .iter()
                .find(|p| !p.failed && now - p.at < settings.reboot_loop_window)
            {
                return broken(
                    "power cycles in a loop",
                    format!(
                        "{machine}: power cycle {repair} started {}s after {} (reboot_loop_window {}s)",
                        now - p.at,
                        p.repair,
                        settings.reboot_loop_window
                    ),
                );
            }
            earlier.push(PowerOff {
                at: now,
                repair: repair.to_owned(),
                failed: false,
            });
            self.powered_off.insert(host.clone());
        }
        // Reboot keys left behind.
        let keyed: Vec<&Host> = after.hosts.iter().filter(|h| h.reboot.is_some()).collect();
        self.keyed.retain(|h, _| keyed.iter().any(|k| k.key == *h));
        for h in keyed {
            let machine = after
                .machines
                .iter()
                .find(|m| m.host.as_deref() == Some(h.key.as_str()));
            let k = self.keyed.entry(h.key.clone()).or_insert(Keyed {
                since: now,
                orphaned: 0,
                late: 0,
            });
            if calls.crashed {
                continue;
            }
            if machine.is_some_and(cycling) {
                k.orphaned = 0;
            } else {
                k.orphaned += 1;
            }
            if now - k.since > settings.cycle_timeout {
                k.late += 1;
            }
            let power = h.powered_on;
            if k.orphaned > ORPHANED_PASSES {
                return broken(
                    "a power-off left behind",
                    format!(
                        "host {} (power {power:?}) has carried {REBOOT_KEY} for {} complete passes with no power cycle under way on {}",
                        h.key,
                        k.orphaned,
                        machine.map_or("its gone machine", |m| m.key.as_str())
                    ),
                );
            }
            if k.late > LATE_PASSES {
                return broken(
                    "a power-off kept past cycle_timeout",
                    format!(
                        "host {} (power {power:?}) has carried {REBOOT_KEY} since {} ({}s), {} complete passes past cycle_timeout",
                        h.key,
                        k.since,
                        now - k.since,
                        k.late
                    ),
                );
            }
        }
        Ok(())
    }
}

pub(super) fn tally_calls(tally: &mut BTreeMap<&'static str, usize>, calls: &CallLog<Metal3>) {
    let mut count = |what| *tally.entry(what).or_default() += 1;
    for s in &calls.submitted {
        match s.op {
            Op::PowerOff { .. } => count("power cycles started"),
            Op::DeleteMachine { .. } => count("reprovisions started"),
            _ => {}
        }
    }
    for (_, mark) in &calls.added {
        // A request that ended without starting anything is not a power cycle.
        if let Ok(Mark::Result(r)) = Annotations::parse(mark)
            && !r.ops.is_empty()
        {
            match (r.repair, r.result) {
                (Metal3Level::PowerCycle, RepairResult::Success) => count("power cycles succeeded"),
                (Metal3Level::PowerCycle, RepairResult::Failure) => count("power cycles failed"),
                _ => {}
            }
        }
    }
    for a in &calls.advanced {
        match a.op {
            Op::DeleteNode { .. } => count("nodes fenced"),
            Op::ClearRequest { .. } => count("requests cleared"),
            Op::PowerOn { .. } => count("reboot keys removed"),
            Op::RestoreNode { .. } => count("nodes restored"),
            Op::TaintNode { .. } => count("nodes tainted out-of-service"),
            Op::UntaintNode { .. } => count("out-of-service taints removed"),
            _ => {}
        }
    }
}
