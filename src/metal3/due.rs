//! When the next time threshold falls due: the moment a pass would decide something new with
//! nothing else changed (a Node NotReady for `node_unhealthy_after`, a power cycle's timeouts,
//! a drain's, the end of the reboot-loop window or of a timed suspend). A `--loop` daemon
//! wakes then, instead of at the next resync: watches announce changes, not the passing of time.

use super::marks::Annotations;
use super::objects::Snapshot;
use super::{Index, OpId, Settings, Step};
use crate::engine::marks::{Codec, Mark};

/// The earliest moment after `now` (Unix seconds) at which a threshold falls due for the
/// fleet in `snap`, if any does.
pub fn next_due(snap: &Snapshot, settings: &Settings, now: i64) -> Option<i64> {
    let mut due: Vec<i64> = Vec::new();
    let nodes: std::collections::HashMap<&str, &super::objects::Node> =
        snap.nodes.iter().map(|n| (n.name.as_str(), n)).collect();
    for m in &snap.machines {
        // A Node NotReady becomes a Machine to repair `node_unhealthy_after` later.
        if let Some(n) = m.node_ref.as_deref().and_then(|n| nodes.get(n))
            && let Some((status, Some(since))) = &n.ready
            && status != "True"
        {
            due.push(since.saturating_add(settings.node_unhealthy_after));
        }
        for p in Index::pending(m) {
            for id in p.ops.iter::<OpId>().filter(|id| id.repair == p.id) {
                let limits: &[i64] = match id.step {
                    Step::PowerCycle => &[settings.power_off_timeout, settings.cycle_timeout],
                    Step::Drain => &[settings.drain_timeout],
                    Step::Delete => &[settings.cycle_timeout],
                };
                // Judged late one second after the limit (`age > limit`).
                due.extend(limits.iter().map(|l| p.since.saturating_add(*l + 1)));
            }
        }
        // The guard lifts: a Machine still broken may be power-cycled again.
        if let Some(at) = Index::last_power_cycle(m) {
            due.push(at.saturating_add(settings.reboot_loop_window));
        }
    }
    let marks = snap
        .machines
        .iter()
        .flat_map(|m| &m.marks)
        .chain(snap.scopes.iter().flat_map(|s| &s.marks));
    for t in marks {
        if let Ok(Mark::Suspend {
            until: Some(end), ..
        }) = Annotations::parse(t)
        {
            due.push(end);
        }
    }
    due.into_iter().filter(|t| *t > now).min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Backend;
    use crate::metal3::file::ObjectsFile;
    use crate::metal3::fixture::{Fleet, Host, Machine, Node};

    const ID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";
    /// 2026-06-01T00:00:00Z.
    const NOT_READY: i64 = 1_780_272_000;

    /// The Machine's Node, its annotations, now, and the moment due.
    type Case = (Node, Vec<(String, String)>, i64, Option<i64>);

    #[test]
    fn the_earliest_threshold_after_now_is_due() {
        let s = Settings::default();
        let node_down = NOT_READY + s.node_unhealthy_after;
        let cycle = |since: i64| format!("pending:power-cycle:{since}:power-cycle.{ID}");
        let cases: Vec<Case> = vec![
            (Node::new("n1"), vec![], NOT_READY, None),
            (
                Node::new("n1").ready("False", "2026-06-01T00:00:00Z"),
                vec![],
                NOT_READY + 10,
                Some(node_down),
            ),
            // Already due: the pass under way sees it, nothing left to wake for.
            (
                Node::new("n1").ready("Unknown", "2026-06-01T00:00:00Z"),
                vec![],
                node_down + 1,
                None,
            ),
            (
                Node::new("n1"),
                vec![(format!("autorepair.io/repair.{ID}"), cycle(NOT_READY))],
                NOT_READY + 60,
                Some(NOT_READY + s.power_off_timeout + 1),
            ),
            (
                Node::new("n1"),
                vec![(format!("autorepair.io/repair.{ID}"), cycle(NOT_READY))],
                NOT_READY + s.power_off_timeout + 1,
                Some(NOT_READY + s.cycle_timeout + 1),
            ),
            (
                Node::new("n1"),
                vec![(
                    format!("autorepair.io/repair.{ID}"),
                    format!("result:power-cycle:{NOT_READY}:success:power-cycle.{ID}"),
                )],
                NOT_READY + 60,
                Some(NOT_READY + s.reboot_loop_window),
            ),
            (
                Node::new("n1"),
                vec![(
                    "autorepair.io/suspend".to_owned(),
                    (NOT_READY + 90).to_string(),
                )],
                NOT_READY,
                Some(NOT_READY + 90),
            ),
            // The nearest of several.
            (
                Node::new("n1").ready("False", "2026-06-01T00:00:00Z"),
                vec![(
                    "autorepair.io/suspend".to_owned(),
                    (NOT_READY + 90).to_string(),
                )],
                NOT_READY,
                Some(NOT_READY + 90),
            ),
        ];
        for (node, annotations, now, expected) in cases {
            let mut m = Machine::new("ns", "m1").node("n1").host("h1");
            for (k, v) in &annotations {
                m = m.annotate(k, v);
            }
            let list = Fleet::new()
                .machine(m)
                .host(Host::new("ns", "h1"))
                .node(node)
                .build();
            let snap = ObjectsFile::in_memory(list).snapshot().unwrap();
            assert_eq!(
                next_due(&snap, &s, now),
                expected,
                "{annotations:?} at {now}"
            );
        }
    }
}
