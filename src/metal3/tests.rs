use super::file::ObjectsFile;
use super::fixture::{self, Fleet, Host, Machine, Node};
use super::objects::Snapshot;
use super::*;
use crate::engine::backend::Dying;
use crate::engine::{Backend, Limits, exec};
use serde_json::{Value, json};

/// 2027-01-15: long after the fixtures' Nodes changed state.
const NOW: i64 = 1_800_000_000;

fn plan_of(snap: &Snapshot, now: i64) -> Plan {
    plan(snap, &Settings::default(), now, &Limits::default(), 7)
}

/// One pass: read, plan, act, and let the file play the world if it simulates.
fn pass(file: &mut dyn Backend<Metal3>, now: i64) -> (Snapshot, Plan) {
    let snap = file.snapshot().unwrap();
    let plan = plan_of(&snap, now);
    let report = exec::execute(&plan, file);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    file.finish_pass(now).unwrap();
    (snap, plan)
}

/// What the design's table looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    node: bool,
    request: bool,
    powered_on: Option<bool>,
    reboot: bool,
}

fn seen(snap: &Snapshot) -> Seen {
    let m = &snap.machines[0];
    let h = snap.hosts.iter().find(|h| Some(&h.key) == m.host.as_ref());
    Seen {
        node: snap
            .nodes
            .iter()
            .any(|n| Some(&n.name) == m.node_ref.as_ref()),
        request: m.requested,
        powered_on: h.and_then(|h| h.powered_on),
        reboot: h.is_some_and(|h| h.reboot.is_some()),
    }
}

fn one_machine(node: bool, requested: bool, powered_on: bool, reboot: bool) -> Fleet {
    let mut m = Machine::new("ns", "m1").node("n1").host("h1");
    if requested {
        m = m.requested();
    }
    let mut h = Host::new("ns", "h1").powered(powered_on);
    if reboot {
        h = h.rebooting();
    }
    let mut fleet = Fleet::new().machine(m).host(h);
    if node {
        fleet = fleet.node(Node::new("n1"));
    }
    fleet
}

#[test]
fn the_designs_truth_table_row_by_row() {
    for (nr, nra, po, ra, expected) in crate::metal3::protocol::TRUTH_TABLE {
        let row = format!("row {nr}{nra}{po}{ra}");
        let mut file =
            ObjectsFile::in_memory(one_machine(nr == 1, nra == 1, po == 1, ra == 1).build());
        let before = seen(&file.snapshot().unwrap());
        let (_, plan) = pass(&mut file, NOW);
        let after = seen(&file.snapshot().unwrap());
        let mut done = Vec::new();
        if after.reboot && !before.reboot {
            done.push("add reboot");
        }
        if before.node && !after.node {
            done.push("delete node");
        }
        if before.request && !after.request {
            done.push("remove request");
        }
        if before.reboot && !after.reboot {
            done.push("remove reboot");
        }
        if after.node && !before.node || after.request && !before.request {
            done.push("something the table never does");
        }
        let done = if done.is_empty() {
            vec!["nothing"]
        } else {
            done
        };
        assert_eq!(done, vec![expected], "{row}: {:#?}", plan.targets);
    }
}

#[test]
fn a_requested_power_cycle_runs_to_its_end_and_restores_the_node() {
    let list = Fleet::new()
        .machine(Machine::new("ns", "m1").node("n1").host("h1").requested())
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1").label("role", "storage"))
        .simulated()
        .build();
    let mut file = ObjectsFile::in_memory(list);
    let mut steps = Vec::new();
    for i in 0..10 {
        let now = NOW + 60 * i;
        let (snap, plan) = pass(&mut file, now);
        for a in plan.actions() {
            if let Action::Advance {
                op: Op::DeleteNode { .. },
                ..
            } = a
            {
                assert_eq!(
                    seen(&snap).powered_on,
                    Some(false),
                    "a Node goes only once its host is seen off"
                );
            }
            match a {
                Action::Repair(r) => steps.push(format!("start {}", r.repair)),
                Action::Advance { op, .. } => steps.push(op_name(op).to_owned()),
                _ => {}
            }
        }
    }
    assert_eq!(
        steps,
        [
            "start power-cycle",
            "delete-node",
            "power-on",
            "clear-request",
            "restore-node"
        ]
    );
    let snap = file.snapshot().unwrap();
    let end = seen(&snap);
    assert_eq!(
        end,
        Seen {
            node: true,
            request: false,
            powered_on: Some(true),
            reboot: false
        }
    );
    let node = &snap.nodes[0];
    assert_eq!(node.labels.get("role").map(String::as_str), Some("storage"));
    let m = &snap.machines[0];
    assert!(m.node_backup.is_none());
    assert!(
        m.marks
            .iter()
            .any(|t| t.contains("=result:power-cycle:") && t.contains(":success:")),
        "{:?}",
        m.marks
    );
    assert!(
        !m.marks.iter().any(|t| t.contains("=pending:")),
        "{:?}",
        m.marks
    );
}

fn tainting() -> Settings {
    Settings {
        fencing: Fencing::OutOfServiceTaint,
        ..Settings::default()
    }
}

/// One pass with the out-of-service taint as fencing.
fn tainting_pass(file: &mut dyn Backend<Metal3>, now: i64) -> (Snapshot, Plan) {
    let snap = file.snapshot().unwrap();
    let plan = plan(&snap, &tainting(), now, &Limits::default(), 7);
    let report = exec::execute(&plan, file);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    file.finish_pass(now).unwrap();
    (snap, plan)
}

/// (Node exists, tainted out of service, request, power, reboot key) as the table reads them.
fn taint_seen(snap: &Snapshot) -> (bool, bool, bool, bool, bool) {
    let s = seen(snap);
    let tainted = snap
        .nodes
        .iter()
        .any(|n| n.name == "n1" && n.out_of_service);
    (
        s.node,
        tainted,
        s.request,
        s.powered_on == Some(true),
        s.reboot,
    )
}

#[test]
fn the_out_of_service_table_row_by_row() {
    for (nr, tainted, nra, po, ra, expected) in crate::metal3::protocol::OUT_OF_SERVICE_TABLE {
        let row = format!("row {nr}{tainted}{nra}{po}{ra}");
        let mut m = Machine::new("ns", "m1").node("n1").host("h1");
        if nra == 1 {
            m = m.requested();
        }
        if tainted == 1 {
            // autorepair's own taint, recorded on the Machine.
            m = m.annotate(marks::NODE_TAINTED_KEY, "n1");
        }
        let mut h = Host::new("ns", "h1").powered(po == 1);
        if ra == 1 {
            h = h.rebooting();
        }
        let mut fleet = Fleet::new().machine(m).host(h);
        if nr == 1 {
            let n = Node::new("n1");
            // Tainted at T0, Ready since after: the kubelet is back.
            fleet = fleet.node(if tainted == 1 {
                n.out_of_service().ready("True", AFTER_T0)
            } else {
                n
            });
        }
        let mut file = ObjectsFile::in_memory(fleet.build());
        let before = taint_seen(&file.snapshot().unwrap());
        let (_, plan) = tainting_pass(&mut file, NOW);
        let after = taint_seen(&file.snapshot().unwrap());
        let mut done = Vec::new();
        if after.4 && !before.4 {
            done.push("add reboot");
        }
        if after.1 && !before.1 {
            done.push("taint node");
        }
        if before.1 && !after.1 {
            done.push("remove taint");
        }
        if before.0 && !after.0 {
            done.push("something the table never does (a Node deleted)");
        }
        if before.2 && !after.2 {
            done.push("remove request");
        }
        if before.4 && !after.4 {
            done.push("remove reboot");
        }
        let done = if done.is_empty() {
            vec!["nothing"]
        } else {
            done
        };
        assert_eq!(done, vec![expected], "{row}: {:#?}", plan.targets);
        let recorded = file.snapshot().unwrap().machines[0].node_tainted.clone();
        assert_eq!(
            recorded.is_some(),
            after.1,
            "{row}: the taint is recorded while it is on"
        );
    }
}

/// An hour after the fixtures' [`T0`](crate::metal3::fixture::T0).
const AFTER_T0: &str = "2026-01-01T01:00:00Z";

/// A Machine whose host was power-cycled (on again, no reboot key) and whose Node autorepair
/// tainted at T0 (recorded), the Node Ready as `ready` says.
fn tainted_and_back(ready: Node) -> Fleet {
    Fleet::new()
        .machine(
            Machine::new("ns", "m1")
                .node("n1")
                .host("h1")
                .annotate(marks::NODE_TAINTED_KEY, "n1"),
        )
        .host(Host::new("ns", "h1"))
        .node(ready.out_of_service())
}

#[test]
fn the_taint_stays_until_the_node_is_ready_since_it_was_added() {
    let cases = [
        // (Ready, since, last heartbeat, removed)
        ("True", fixture::T0, None, false),
        ("True", "2025-12-31T23:00:00Z", None, false),
        ("True", "2025-12-31T23:00:00Z", Some(fixture::T0), false),
        ("Unknown", AFTER_T0, None, false),
        ("True", AFTER_T0, None, true),
        // The condition did not change, but the kubelet posted it after the taint.
        ("True", "2025-12-31T23:00:00Z", Some(AFTER_T0), true),
    ];
    for (status, since, heartbeat, removed) in cases {
        let mut list = tainted_and_back(Node::new("n1").ready(status, since)).build();
        if let Some(h) = heartbeat {
            let node = list["items"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .find(|i| i["kind"] == "Node")
                .unwrap();
            node["status"]["conditions"][0]["lastHeartbeatTime"] = json!(h);
        }
        let mut file = ObjectsFile::in_memory(list);
        tainting_pass(&mut file, NOW);
        let snap = file.snapshot().unwrap();
        let case = format!("Ready {status} since {since}, heartbeat {heartbeat:?}");
        assert_eq!(!snap.nodes[0].out_of_service, removed, "{case}");
        assert_eq!(snap.machines[0].node_tainted.is_none(), removed, "{case}");
    }
}

#[test]
fn a_node_that_could_not_be_looked_at_keeps_its_taint_and_the_record() {
    // The workload cluster unreadable: the Node is not in the snapshot, yet not gone.
    let list = tainted_and_back(Node::new("n1").ready("True", AFTER_T0)).build();
    let mut snap = Snapshot::from_items(list["items"].as_array().unwrap());
    snap.nodes.clear();
    snap.nodes_unknown.insert("ns/m1".into());
    let keep = plan(&snap, &tainting(), NOW, &Limits::default(), 7);
    assert!(keep.actions().next().is_none(), "{:#?}", keep.targets);
    // Seen gone (not unknown), the record is forgotten.
    snap.nodes_unknown.clear();
    let forget = plan(&snap, &tainting(), NOW, &Limits::default(), 7);
    assert!(
        forget.actions().any(|a| matches!(
            a,
            Action::Advance {
                op: Op::UntaintNode { .. },
                ..
            }
        )),
        "{:#?}",
        forget.targets
    );
}

/// A power cycle under way keeps its out-of-service host off while anything of its Node is
/// left to settle (CAPM3's wait): a terminating Pod bound to it, a VolumeAttachment naming it,
/// or either unknown. A running Pod, or another Node's volume, holds nothing; a cycle the engine
/// timed out powers the host on whatever is left (the next pass, once its failure is recorded).
#[test]
fn out_of_service_power_on_waits_for_what_is_left_on_the_node() {
    const ID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let terminating = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p1", "namespace": "default", "deletionTimestamp": "2027-01-15T08:00:00Z"},
        "spec": {"nodeName": "n1"}});
    let running = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p2", "namespace": "default"}, "spec": {"nodeName": "n1"}});
    let attached = |node: &str| {
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
            "metadata": {"name": format!("va-{node}")}, "spec": {"nodeName": node}})
    };
    let timeout = tainting().cycle_timeout;
    // (case, extra objects, Node unknown, cycle started this long ago, passes until power-on)
    type Case = (&'static str, Vec<Value>, bool, i64, Option<usize>);
    let cases: [Case; 7] = [
        ("nothing left", vec![], false, 60, Some(1)),
        ("a running Pod", vec![running.clone()], false, 60, Some(1)),
        (
            "another Node's volume",
            vec![attached("n2")],
            false,
            60,
            Some(1),
        ),
        (
            "a terminating Pod",
            vec![terminating.clone()],
            false,
            60,
            None,
        ),
        ("its volume attached", vec![attached("n1")], false, 60, None),
        ("unknown", vec![], true, 60, None),
        (
            "timed out",
            vec![terminating, attached("n1")],
            false,
            timeout + 10,
            Some(2),
        ),
    ];
    for (case, extra, unknown, age, powers_on) in cases {
        let m = Machine::new("ns", "m1")
            .node("n1")
            .host("h1")
            .requested()
            .annotate(marks::NODE_TAINTED_KEY, "n1")
            .annotate(
                &format!("autorepair.io/repair.{ID}"),
                &format!("pending:power-cycle:{}:power-cycle.{ID}", NOW - age),
            );
        let mut list = Fleet::new()
            .machine(m)
            .host(Host::new("ns", "h1").powered(false).rebooting())
            .node(Node::new("n1").out_of_service())
            .build();
        list["items"].as_array_mut().unwrap().extend(extra);
        let mut file = ObjectsFile::in_memory(list);
        let mut on_at = None;
        for pass in 1..=3 {
            let mut snap = file.snapshot().unwrap();
            if unknown {
                snap.fence_unknown.insert("n1".into());
            }
            let plan = plan(&snap, &tainting(), NOW + pass as i64, &Limits::default(), 7);
            let report = exec::execute(&plan, &mut file);
            assert!(report.errors.is_empty(), "{case}: {:?}", report.errors);
            file.finish_pass(NOW).unwrap();
            if on_at.is_none() && !seen(&file.snapshot().unwrap()).reboot {
                on_at = Some(pass);
            }
        }
        assert_eq!(on_at, powers_on, "{case}");
    }
}

#[test]
fn a_taint_someone_else_added_is_never_removed() {
    let list = Fleet::new()
        .machine(Machine::new("ns", "m1").node("n1").host("h1"))
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1").out_of_service())
        .build();
    let mut file = ObjectsFile::in_memory(list);
    let (_, plan) = tainting_pass(&mut file, NOW);
    assert!(plan.actions().next().is_none(), "{:#?}", plan.targets);
    assert!(file.snapshot().unwrap().nodes[0].out_of_service);
}

#[test]
fn an_out_of_service_cycle_keeps_the_node_and_removes_the_taint_once_ready() {
    let list = Fleet::new()
        .machine(Machine::new("ns", "m1").node("n1").host("h1").requested())
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1").label("role", "storage"))
        .simulated()
        .build();
    let mut file = ObjectsFile::in_memory(list);
    let mut steps = Vec::new();
    for i in 0..10 {
        let (snap, plan) = tainting_pass(&mut file, NOW + 60 * i);
        for a in plan.actions() {
            if let Action::Advance { op, .. } = a {
                if matches!(op, Op::TaintNode { .. }) {
                    assert_eq!(seen(&snap).powered_on, Some(false), "tainted only once off");
                }
                if matches!(op, Op::UntaintNode { .. }) {
                    assert_eq!(seen(&snap).powered_on, Some(true), "untainted only once on");
                    assert_eq!(
                        snap.nodes[0].ready.as_ref().map(|r| r.0.as_str()),
                        Some("True")
                    );
                }
                steps.push(op_name(op).to_owned());
            }
            if let Action::Repair(r) = a {
                steps.push(format!("start {}", r.repair));
            }
        }
    }
    assert_eq!(
        steps,
        [
            "start power-cycle",
            "taint-node",
            "power-on",
            "clear-request",
            "untaint-node"
        ]
    );
    let snap = file.snapshot().unwrap();
    let n = &snap.nodes[0];
    assert!(!n.out_of_service);
    assert_eq!(n.labels.get("role").map(String::as_str), Some("storage"));
    let m = &snap.machines[0];
    assert!(m.node_tainted.is_none() && m.node_backup.is_none());
    assert!(
        m.marks
            .iter()
            .any(|t| t.contains("=result:power-cycle:") && t.contains(":success:")),
        "{:?}",
        m.marks
    );
}

fn op_name(op: &Op) -> &'static str {
    match op {
        Op::Drain { .. } => "drain",
        Op::PowerOff { .. } => "power-off",
        Op::DeleteMachine { .. } => "delete-machine",
        Op::DeleteNode { .. } => "delete-node",
        Op::ClearRequest { .. } => "clear-request",
        Op::PowerOn { .. } => "power-on",
        Op::RestoreNode { .. } => "restore-node",
        Op::TaintNode { .. } => "taint-node",
        Op::UntaintNode { .. } => "untaint-node",
        Op::ReportRemediation { .. } => "report-remediation",
        Op::AnswerRequest { .. } => "answer-request",
        Op::HandOver { .. } => "hand-over",
        Op::MarkHostUnhealthy { .. } => "mark-host-unhealthy",
    }
}

#[test]
fn a_kill_after_any_call_never_leaves_the_host_off_nor_cycles_twice() {
    let list = Fleet::new()
        .machine(Machine::new("ns", "m1").node("n1").host("h1").requested())
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1"))
        .simulated()
        .build();
    // The cycle makes about a dozen calls; kill after each in turn, in every pass.
    for kill_at in 0..14 {
        let mut file = ObjectsFile::in_memory(list.clone());
        // Times the reboot annotation appeared on the host: each is a power-off.
        let mut power_offs = 0;
        let mut rebooting = false;
        let mut calls_left = kill_at;
        for i in 0..14 {
            let now = NOW + 60 * i;
            let snap = file.snapshot().unwrap();
            let now_rebooting = seen(&snap).reboot;
            power_offs += usize::from(now_rebooting && !rebooting);
            rebooting = now_rebooting;
            let plan = plan_of(&snap, now);
            let mut dying = Dying::new(&mut file, Some(calls_left));
            let report = exec::execute(&plan, &mut dying);
            calls_left = calls_left.saturating_sub(dying.calls());
            if report.crashed {
                // The process died: whatever it wrote stays, the world moves on.
                calls_left = usize::MAX;
            }
            file.finish_pass(now).unwrap();
        }
        let end = seen(&file.snapshot().unwrap());
        assert_eq!(
            end,
            Seen {
                node: true,
                request: false,
                powered_on: Some(true),
                reboot: false
            },
            "killed after {kill_at} calls"
        );
        assert_eq!(
            power_offs, 1,
            "killed after {kill_at} calls: one power cycle only"
        );
    }
}

#[test]
fn own_health_checks_repair_only_where_a_policy_allows() {
    let broken = |policy: Option<&str>| {
        let mut fleet = Fleet::new()
            .machine(
                Machine::new("ns", "m1")
                    .node("n1")
                    .host("h1")
                    .owner("MachineSet", "ms1"),
            )
            .host(Host::new("ns", "h1"))
            .node(Node::new("n1").ready("False", "2026-06-01T00:00:00Z"));
        fleet = match policy {
            Some(p) => fleet.scope("MachineSet", "ns", "ms1", &[("autorepair.io/policy", p)]),
            None => fleet.scope("MachineSet", "ns", "ms1", &[]),
        };
        ObjectsFile::in_memory(fleet.build())
    };
    let cases = [
        (None, None),
        (Some("drain"), None),
        (Some("power-cycle"), Some(Metal3Level::PowerCycle)),
        (Some("reprovision"), Some(Metal3Level::PowerCycle)),
    ];
    for (policy, starts) in cases {
        let mut file = broken(policy);
        let (_, plan) = pass(&mut file, NOW);
        let started: Vec<Metal3Level> = plan
            .actions()
            .filter_map(|a| match a {
                Action::Repair(r) => Some(r.repair),
                _ => None,
            })
            .collect();
        assert_eq!(
            started,
            starts.into_iter().collect::<Vec<_>>(),
            "policy {policy:?}"
        );
        let after = seen(&file.snapshot().unwrap());
        assert_eq!(after.reboot, starts.is_some(), "policy {policy:?}");
        // The watcher asks for remediation the way a health checker would.
        assert_eq!(after.request, starts.is_some(), "policy {policy:?}");
    }
}

#[test]
fn a_suspend_holds_a_request_back_before_the_power_off_never_after() {
    let suspended = |reboot: bool, powered_on: bool| {
        let mut h = Host::new("ns", "h1").powered(powered_on);
        if reboot {
            h = h.rebooting();
        }
        Fleet::new()
            .machine(
                Machine::new("ns", "m1")
                    .node("n1")
                    .host("h1")
                    .requested()
                    .annotate("autorepair.io/suspend", ""),
            )
            .host(h)
            .node(Node::new("n1"))
            .build()
    };
    let mut before = ObjectsFile::in_memory(suspended(false, true));
    let (_, plan) = pass(&mut before, NOW);
    assert!(!seen(&before.snapshot().unwrap()).reboot);
    assert_eq!(
        plan.targets[0].blocked,
        Some(crate::engine::Blocked::Suspended)
    );

    let mut after = ObjectsFile::in_memory(suspended(true, false));
    pass(&mut after, NOW);
    assert!(
        !seen(&after.snapshot().unwrap()).node,
        "the cycle goes on: the Node is fenced"
    );
}

#[test]
fn hosts_that_would_never_be_seen_off_are_not_started_on() {
    let cases: [(&str, Host); 5] = [
        (
            "paused",
            Host::new("ns", "h1").annotate(objects::PAUSED_KEY, ""),
        ),
        (
            "detached",
            Host::new("ns", "h1").annotate(objects::DETACHED_KEY, ""),
        ),
        ("offline", Host::new("ns", "h1").online(false)),
        ("no status", Host::new("ns", "h1").no_status()),
        (
            "another reboot",
            Host::new("ns", "h1").annotate("reboot.metal3.io/other", ""),
        ),
    ];
    for (why, host) in cases {
        let list = Fleet::new()
            .machine(Machine::new("ns", "m1").node("n1").host("h1").requested())
            .host(host)
            .node(Node::new("n1"))
            .build();
        let mut file = ObjectsFile::in_memory(list);
        let (_, plan) = pass(&mut file, NOW);
        assert!(!seen(&file.snapshot().unwrap()).reboot, "{why}");
        assert!(
            matches!(
                plan.targets[0].blocked,
                Some(crate::engine::Blocked::CannotSubmit { .. })
            ),
            "{why}: {:?}",
            plan.targets[0]
        );
    }
}

#[test]
fn the_reboot_loop_guard_escalates_or_gives_up() {
    let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let recent = format!("result:power-cycle:{}:success:power-cycle.{id}", NOW - 600);
    let fleet = |owner: bool, policy: &str| {
        let mut m = Machine::new("ns", "m1")
            .node("n1")
            .host("h1")
            .requested()
            .annotate(&format!("autorepair.io/repair.{id}"), &recent)
            .annotate("autorepair.io/policy", policy);
        if owner {
            m = m.owner("MachineSet", "ms1");
        }
        ObjectsFile::in_memory(
            Fleet::new()
                .machine(m)
                .host(Host::new("ns", "h1"))
                .node(Node::new("n1"))
                .scope("MachineSet", "ns", "ms1", &[])
                .build(),
        )
    };
    // Reprovision allowed: the Machine is deleted, its owner replaces it.
    let mut file = fleet(true, "reprovision");
    let (_, plan) = pass(&mut file, NOW);
    assert_eq!(
        plan.targets[0].needed_repair,
        Some(Metal3Level::Reprovision)
    );
    assert!(
        !seen(&file.snapshot().unwrap()).reboot,
        "no second power cycle"
    );
    assert!(file.snapshot().unwrap().machines[0].deleting);

    // Only power cycles allowed: not cycled again, and the request cannot be served.
    let mut file = fleet(true, "power-cycle");
    let (_, plan) = pass(&mut file, NOW);
    assert!(!seen(&file.snapshot().unwrap()).reboot);
    assert_eq!(
        plan.targets[0].blocked,
        Some(crate::engine::Blocked::NotAllowed {
            needs: Metal3Level::Reprovision,
            allowed: Some(Metal3Level::PowerCycle)
        })
    );

    // No owner to replace it: a failure result asks a person.
    let mut file = fleet(false, "reprovision");
    pass(&mut file, NOW);
    let m = &file.snapshot().unwrap().machines[0];
    assert!(!seen(&file.snapshot().unwrap()).reboot);
    assert!(
        m.marks.iter().any(|t| t.contains(":failure:")),
        "{:?}",
        m.marks
    );
}

#[test]
fn a_power_off_never_seen_fails_and_powers_the_host_back_on() {
    // The BMC never powers the host off: no simulation.
    let list = Fleet::new()
        .machine(Machine::new("ns", "m1").node("n1").host("h1").requested())
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1"))
        .build();
    let mut file = ObjectsFile::in_memory(list);
    pass(&mut file, NOW);
    assert!(seen(&file.snapshot().unwrap()).reboot);
    let timeout = Settings::default().power_off_timeout;
    pass(&mut file, NOW + timeout / 2);
    assert!(seen(&file.snapshot().unwrap()).reboot, "still waiting");
    let (_, plan) = pass(&mut file, NOW + timeout + 1);
    assert!(
        plan.targets[0]
            .notes
            .iter()
            .any(|n| n.contains("power_off_timeout")),
        "{:?}",
        plan.targets[0].notes
    );
    pass(&mut file, NOW + timeout + 2);
    let snap = file.snapshot().unwrap();
    assert!(!seen(&snap).reboot, "the power-off is withdrawn");
    assert!(
        snap.machines[0]
            .marks
            .iter()
            .any(|t| t.contains(":failure:"))
    );
    // Parked: the request stays, nothing starts again.
    pass(&mut file, NOW + timeout + 3);
    assert!(!seen(&file.snapshot().unwrap()).reboot);
}

#[test]
fn a_host_whose_machine_is_gone_is_powered_back_on() {
    let list = Fleet::new()
        .host(Host::new("ns", "h1").powered(false).rebooting())
        .build();
    let mut file = ObjectsFile::in_memory(list);
    pass(&mut file, NOW);
    assert!(file.snapshot().unwrap().hosts[0].reboot.is_none());
}

#[test]
fn the_host_link_is_followed_in_both_forms() {
    // OpenShift: the link is on the Machine itself.
    let openshift = serde_json::json!({
        "apiVersion": "machine.openshift.io/v1beta1", "kind": "Machine",
        "metadata": {"name": "m1", "namespace": "ns",
                      "annotations": {"metal3.io/BareMetalHost": "ns/h1"}},
        "status": {"nodeRef": {"kind": "Node", "name": "n1"}},
    });
    let snap = Snapshot::from_items(
        &Fleet::new().item(openshift).build()["items"]
            .as_array()
            .unwrap()
            .clone(),
    );
    assert_eq!(snap.machines[0].host.as_deref(), Some("ns/h1"));
    let capm3 = Fleet::new()
        .machine(Machine::new("ns", "m2").host("h2"))
        .build();
    let snap = Snapshot::from_items(capm3["items"].as_array().unwrap());
    assert_eq!(snap.machines[0].host.as_deref(), Some("ns/h2"));
    let unlinked = Fleet::new().machine(Machine::new("ns", "m3")).build();
    let snap = Snapshot::from_items(unlinked["items"].as_array().unwrap());
    assert_eq!(
        snap.machines[0].host_link,
        Err(objects::HostLinkError::NotLinkedYet("ns/m3-m3m".into()))
    );
    assert!(
        snap.machines[0]
            .host_link
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("Metal3Machine ns/m3-m3m has no")
    );
}

/// `others` plus m3 asking for a power cycle, all in zone a, under
/// `max_down_nodes_per_group = 2`: whether m3's power cycle starts, else that the zone's
/// mass-failure limit holds it.
fn m3_starts_beside(others: Fleet) -> bool {
    let fleet = others
        .machine(
            Machine::new("ns", "m3")
                .node("n3")
                .host("h3")
                .zone("a")
                .requested(),
        )
        .host(Host::new("ns", "h3"))
        .node(Node::new("n3"))
        .build();
    let limits = Limits {
        max_down_nodes_per_group: 2,
        ..Limits::default()
    };
    let snap = ObjectsFile::in_memory(fleet).snapshot().unwrap();
    let plan = plan(&snap, &Settings::default(), NOW, &limits, 7);
    let m3 = plan.target("ns/m3").unwrap();
    let starts = m3.actions.iter().any(|a| matches!(a, Action::Repair(_)));
    if !starts {
        assert!(
            matches!(m3.blocked, Some(crate::engine::Blocked::MassFailure { .. })),
            "{m3:#?}"
        );
        assert_eq!(plan.fleet.halted_groups.len(), 1);
    }
    starts
}

#[test]
fn machines_under_remediation_count_in_the_limiter() {
    // m1 is being power-cycled (reboot annotation on, host still on), m2's Node is not Ready:
    // with m3 asking for a power cycle, three machines of zone a are down.
    for (m1_cycling, m3_starts) in [(true, false), (false, true)] {
        let mut h1 = Host::new("ns", "h1");
        if m1_cycling {
            h1 = h1.rebooting();
        }
        let others = Fleet::new()
            .machine(Machine::new("ns", "m1").node("n1").host("h1").zone("a"))
            .host(h1)
            .node(Node::new("n1"))
            .machine(Machine::new("ns", "m2").node("n2").host("h2").zone("a"))
            .host(Host::new("ns", "h2"))
            .node(Node::new("n2").ready("Unknown", "2026-06-01T00:00:00Z"));
        assert_eq!(
            m3_starts_beside(others),
            m3_starts,
            "m1 cycling: {m1_cycling}"
        );
    }
}

/// A Machine its MachineHealthCheck counts unhealthy (`HealthCheckSucceeded` `False`) is down
/// for autorepair's limits too, whatever autorepair's own health rule says of it: Cluster
/// API's short-circuit counts it, and the limit must not let power cycles start that Cluster
/// API's rule holds.
#[test]
fn machines_their_health_check_counts_unhealthy_count_in_the_limiter() {
    for (condition, m3_starts) in [("False", false), ("True", true)] {
        let mut others = Fleet::new();
        for i in 1..=2 {
            others = others
                .machine(
                    Machine::new("ns", &format!("m{i}"))
                        .node(&format!("n{i}"))
                        .host(&format!("h{i}"))
                        .zone("a")
                        .condition("HealthCheckSucceeded", condition, "UnhealthyNode"),
                )
                .host(Host::new("ns", &format!("h{i}")))
                .node(Node::new(&format!("n{i}")));
        }
        assert_eq!(
            m3_starts_beside(others),
            m3_starts,
            "HealthCheckSucceeded {condition}"
        );
    }
}

#[test]
fn the_demo_fleet_tells_its_story() {
    // 2026-11-23T03:00:00Z: worker-b2's Node has been Unknown for 9 minutes.
    const DEMO_NOW: i64 = 1_795_402_800;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/metal3-demo.json"),
        &path,
    )
    .unwrap();
    let mut file = ObjectsFile::open(&path).unwrap();
    let (snap, plan) = pass(&mut file, DEMO_NOW);
    assert!(snap.problems.is_empty(), "{:?}", snap.problems);
    let blocked = |name: &str| plan.target(name).unwrap().blocked.clone();
    assert!(matches!(
        plan.target("prod/workers-7d9f-b2").unwrap().next,
        crate::engine::Next::Start {
            repair: Metal3Level::PowerCycle,
            ..
        }
    ));
    for waiting in ["prod/workers-7d9f-c3", "prod/workers-7d9f-d4"] {
        assert!(
            matches!(
                blocked(waiting),
                Some(crate::engine::Blocked::CannotSubmit { .. })
            ),
            "{waiting}: {:?}",
            blocked(waiting)
        );
    }
    assert_eq!(
        plan.target("prod/workers-7d9f-a1").unwrap().state,
        crate::engine::State::Healthy
    );
    // Its control plane is suspended.
    assert_eq!(
        plan.target("prod/edge-cp-x2k4").unwrap().state,
        crate::engine::State::Suspended
    );
    // The file plays the baremetal-operator and kubelet: the cycle ends on its own.
    for i in 1..8 {
        pass(&mut ObjectsFile::open(&path).unwrap(), DEMO_NOW + 60 * i);
    }
    let snap = ObjectsFile::open(&path).unwrap().snapshot().unwrap();
    let b2 = snap
        .machines
        .iter()
        .find(|m| m.name == "workers-7d9f-b2")
        .unwrap();
    assert!(
        b2.marks.iter().any(|t| t.contains(":success:")),
        "{:?}",
        b2.marks
    );
    assert!(
        snap.hosts.iter().all(|h| h.reboot.is_none()),
        "{:#?}",
        snap.hosts
    );
    let node = snap.nodes.iter().find(|n| n.name == "worker-b2").unwrap();
    assert_eq!(
        node.labels
            .get("topology.kubernetes.io/zone")
            .map(String::as_str),
        Some("rack-b"),
        "labels restored"
    );
}

#[test]
fn a_request_present_when_its_power_cycle_ends_is_served_not_a_new_one() {
    // The cycle ends in this pass (host on, Node Ready) and the request it serves is still
    // there: it is removed, and nothing else starts (no reprovision, no second cycle).
    let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let running = format!("pending:power-cycle:{}:power-cycle.{id}", NOW - 1200);
    let list = Fleet::new()
        .machine(
            Machine::new("ns", "m1")
                .node("n1")
                .host("h1")
                .owner("MachineSet", "ms1")
                .requested()
                .annotate(&format!("autorepair.io/repair.{id}"), &running)
                .annotate("autorepair.io/policy", "reprovision"),
        )
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1"))
        .scope("MachineSet", "ns", "ms1", &[])
        .build();
    let mut file = ObjectsFile::in_memory(list);
    let (_, plan) = pass(&mut file, NOW);
    let done: Vec<String> = plan
        .actions()
        .filter_map(|a| match a {
            Action::Repair(r) => Some(format!("start {}", r.repair)),
            Action::Advance { op, .. } => Some(op_name(op).to_owned()),
            _ => None,
        })
        .collect();
    assert_eq!(done, ["clear-request"], "{:#?}", plan.targets[0]);
    let (_, plan) = pass(&mut file, NOW + 60);
    assert!(plan.actions().all(|a| !matches!(a, Action::Repair(_))));
    let m = &file.snapshot().unwrap().machines[0];
    assert!(!m.requested);
    assert!(
        m.marks.iter().any(|t| t.contains(":success:power-cycle.")),
        "{:?}",
        m.marks
    );
}

/// OpenShift's MachineHealthCheck, as its controller does it: an unhealthy Machine (its Node
/// gone, or NotReady past the timeout) that lacks the request gets it; it is never removed.
fn openshift_health_check(file: &mut ObjectsFile, now: i64) {
    let snap = file.snapshot().unwrap();
    let unhealthy: Vec<String> = snap
        .machines
        .iter()
        .filter(|m| !m.requested)
        .filter(|m| {
            let node = m
                .node_ref
                .as_ref()
                .and_then(|n| snap.nodes.iter().find(|x| &x.name == n));
            match (&m.node_ref, node) {
                (Some(_), None) => true,
                (_, Some(n)) => n
                    .ready
                    .as_ref()
                    .is_some_and(|(s, since)| s != "True" && now - since.unwrap_or(0) > 300),
                (None, None) => false,
            }
        })
        .map(|m| m.name.clone())
        .collect();
    for item in file.list_mut()["items"].as_array_mut().unwrap() {
        if item["kind"] == "Machine"
            && unhealthy
                .iter()
                .any(|n| item["metadata"]["name"] == n.as_str())
        {
            item["metadata"]["annotations"][objects::REQUEST_KEY] = json!("");
        }
    }
}

#[test]
fn a_request_re_added_during_a_cycle_never_reboots_a_healthy_machine_later() {
    // The health checker asked once; then it looks after every pass, as OpenShift's does on
    // every reconcile, over two reboot-loop windows.
    let list = Fleet::new()
        .machine(
            Machine::new("ns", "m1")
                .node("n1")
                .host("h1")
                .owner("MachineSet", "ms1")
                .requested(),
        )
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1"))
        .scope(
            "MachineSet",
            "ns",
            "ms1",
            &[("autorepair.io/policy", "power-cycle")],
        )
        .simulated()
        .build();
    let mut file = ObjectsFile::in_memory(list);
    let window = Settings::default().reboot_loop_window;
    let mut power_offs = 0;
    let mut rebooting = false;
    let mut i = 0;
    while 60 * i < 2 * window {
        let now = NOW + 60 * i;
        let (snap, _) = pass(&mut file, now);
        let now_rebooting = seen(&snap).reboot;
        power_offs += usize::from(now_rebooting && !rebooting);
        rebooting = now_rebooting;
        openshift_health_check(&mut file, now);
        i += 1;
    }
    assert_eq!(power_offs, 1, "one power cycle, never a second one");
    let snap = file.snapshot().unwrap();
    let m = &snap.machines[0];
    assert_eq!(
        seen(&snap),
        Seen {
            node: true,
            request: false,
            powered_on: Some(true),
            reboot: false
        }
    );
    assert!(
        !m.marks.iter().any(|t| t.contains(":enoperm:")),
        "{:?}",
        m.marks
    );
}

#[test]
fn a_request_on_a_healthy_machine_power_cycles_it_and_that_cycle_counts() {
    // `autorepair request power-cycle ns/m1` on a Machine whose Node is Ready.
    let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let list = Fleet::new()
        .machine(Machine::new("ns", "m1").node("n1").host("h1").annotate(
            &format!("autorepair.io/repair.{id}"),
            &format!("pending:power-cycle:{}:", NOW - 10),
        ))
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1"))
        .simulated()
        .build();
    let mut file = ObjectsFile::in_memory(list);
    let mut power_offs = 0;
    for i in 0..10 {
        let (snap, _) = pass(&mut file, NOW + 60 * i);
        power_offs += usize::from(seen(&snap).powered_on == Some(false));
    }
    assert!(power_offs > 0, "the host was powered off");
    let snap = file.snapshot().unwrap();
    let m = &snap.machines[0];
    assert!(
        m.marks
            .iter()
            .any(|t| t.contains(&format!(":success:power-cycle.{id}"))),
        "the result names the power cycle that ran: {:?}",
        m.marks
    );
    assert_eq!(seen(&snap).powered_on, Some(true));
    assert!(!m.requested, "the request the cycle set is served");
    // It happened, so the guard counts it.
    assert!(
        Index::last_power_cycle(m).is_some_and(|at| at > NOW),
        "{:?}",
        m.marks
    );
}

#[test]
fn only_power_cycles_that_happened_count_for_the_loop_guard() {
    let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
    // (result, what the NotReady Machine needs): a result without a power-cycle step is a
    // request that ended with nothing to do, or an enoperm; neither powered anything.
    let window = Settings::default().reboot_loop_window;
    let cases = [
        (
            format!("result:power-cycle:{}:success:", NOW - 600),
            Metal3Level::PowerCycle,
        ),
        (
            format!("result:power-cycle:{}:enoperm:", NOW - 600),
            Metal3Level::PowerCycle,
        ),
        (
            format!("result:power-cycle:{}:success:power-cycle.{id}", NOW - 600),
            Metal3Level::Reprovision,
        ),
        (
            format!(
                "result:power-cycle:{}:success:power-cycle.{id}",
                NOW - 2 * window
            ),
            Metal3Level::PowerCycle,
        ),
    ];
    for (result, needs) in cases {
        let list = Fleet::new()
            .machine(
                Machine::new("ns", "m1")
                    .node("n1")
                    .host("h1")
                    .owner("MachineSet", "ms1")
                    .annotate(&format!("autorepair.io/repair.{id}"), &result)
                    .annotate("autorepair.io/policy", "power-cycle"),
            )
            .host(Host::new("ns", "h1"))
            .node(Node::new("n1").ready("False", "2026-06-01T00:00:00Z"))
            .scope("MachineSet", "ns", "ms1", &[])
            .build();
        let snap = ObjectsFile::in_memory(list).snapshot().unwrap();
        let plan = plan_of(&snap, NOW);
        assert_eq!(plan.targets[0].needed_repair, Some(needs), "{result}");
        let started = plan.actions().any(|a| matches!(a, Action::Repair(_)));
        assert_eq!(started, needs == Metal3Level::PowerCycle, "{result}");
    }
}

/// Cluster API's own marks: which hold a broken Machine back (and what `explain` names), and
/// its manual remediation request, served like OpenShift's.
#[test]
fn cluster_api_marks_hold_machines_back_or_ask_for_a_repair() {
    let cluster = |paused: bool| {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": "c1", "namespace": "ns", "annotations": {}},
            "spec": {"paused": paused},
        })
    };
    let (skip, pause) = (objects::SKIP_REMEDIATION_KEY, objects::CAPI_PAUSED_KEY);
    // (Machine annotation, Cluster paused, request (else a policy), starts, what the notes name)
    let cases: [(Option<&str>, bool, bool, bool, &str); 8] = [
        (None, false, true, true, ""),
        (None, false, false, true, ""),
        (Some(skip), false, true, false, skip),
        (Some(pause), false, true, false, pause),
        (None, true, true, false, "spec.paused"),
        (Some(skip), false, false, false, skip),
        (None, true, false, false, "spec.paused"),
        (Some(objects::REMEDIATE_KEY), false, false, true, ""),
    ];
    for (mark, paused, requested, starts, named) in cases {
        let mut m = Machine::new("ns", "m1").node("n1").host("h1").cluster("c1");
        if let Some(k) = mark {
            m = m.annotate(k, "");
        }
        if requested {
            m = m.requested();
        } else if mark != Some(objects::REMEDIATE_KEY) {
            // Cluster API's request needs no policy; the others are own health checks.
            m = m.annotate("autorepair.io/policy", "power-cycle");
        }
        let list = Fleet::new()
            .machine(m)
            .host(Host::new("ns", "h1"))
            .node(Node::new("n1").ready("False", "2026-06-01T00:00:00Z"))
            .item(cluster(paused))
            .build();
        let case = format!("{mark:?} paused {paused} requested {requested}");
        let mut file = ObjectsFile::in_memory(list);
        let (_, plan) = pass(&mut file, NOW);
        let started = plan.actions().any(|a| matches!(a, Action::Repair(_)));
        assert_eq!(started, starts, "{case}: {:#?}", plan.targets[0]);
        assert_eq!(seen(&file.snapshot().unwrap()).reboot, starts, "{case}");
        let notes = format!("{:?}", plan.targets[0].notes);
        assert!(notes.contains(named), "{case}: {notes}");
        if !starts {
            assert!(
                notes.contains("Cluster API holds it back"),
                "{case}: {notes}"
            );
            assert_eq!(plan.actions().count(), 0, "{case}: nothing written");
        }
    }
}

#[test]
fn cluster_apis_remediation_request_is_served_and_removed() {
    let list = Fleet::new()
        .machine(
            Machine::new("ns", "m1")
                .node("n1")
                .host("h1")
                .annotate(objects::REMEDIATE_KEY, ""),
        )
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1"))
        .simulated()
        .build();
    let mut file = ObjectsFile::in_memory(list);
    let mut power_offs = 0;
    for i in 0..10 {
        let (snap, _) = pass(&mut file, NOW + 60 * i);
        power_offs += usize::from(seen(&snap).powered_on == Some(false));
    }
    assert!(power_offs > 0, "the host was powered off");
    let machine = file.list()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["kind"] == "Machine")
        .unwrap()
        .clone();
    let annotations = &machine["metadata"]["annotations"];
    assert!(
        annotations.get(objects::REMEDIATE_KEY).is_none(),
        "{annotations}"
    );
    assert!(
        annotations.get(objects::REQUEST_KEY).is_none(),
        "{annotations}"
    );
    assert_eq!(seen(&file.snapshot().unwrap()).powered_on, Some(true));
}

/// A drain under way with a Pod left (an eviction a PodDisruptionBudget refused) is asked for
/// again every pass, until `drain_timeout` fails the step; a drained Node is not.
#[test]
fn a_drain_with_pods_left_is_asked_again_every_pass_until_its_timeout() {
    use crate::engine::marks::Codec;
    const ID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let since = NOW - 60;
    let pending = marks::Annotations::render_pending(
        Metal3Level::Drain,
        ID,
        since,
        &[OpId {
            step: Step::Drain,
            repair: ID.into(),
        }],
    )
    .unwrap();
    let (key, value) = marks::split(&pending);
    let fleet = |cordoned: bool, pod_owner: &str| {
        let mut list = Fleet::new()
            .machine(
                Machine::new("ns", "m1")
                    .node("n1")
                    .host("h1")
                    .annotate(key, value),
            )
            .host(Host::new("ns", "h1"))
            .node(Node::new("n1"))
            .build();
        let items = list["items"].as_array_mut().unwrap();
        for item in items.iter_mut().filter(|i| i["kind"] == "Node") {
            item["spec"]["unschedulable"] = serde_json::json!(cordoned);
        }
        items.push(serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": "ns", "ownerReferences": [
                {"kind": pod_owner, "name": "x", "controller": true},
            ]},
            "spec": {"nodeName": "n1"},
            "status": {"phase": "Running"},
        }));
        Snapshot::from_items(list["items"].as_array().unwrap())
    };
    let asked = |snap: &Snapshot, now: i64| -> Vec<String> {
        plan_of(snap, now)
            .actions()
            .filter_map(|a| match a {
                Action::Advance { object, op, .. } if matches!(op, Op::Drain { .. }) => {
                    Some(format!("{object}: {op}"))
                }
                _ => None,
            })
            .collect()
    };
    let draining = fleet(true, "ReplicaSet");
    assert_eq!(asked(&draining, NOW), ["node/n1: drain node n1"]);
    assert_eq!(asked(&draining, NOW + 300), ["node/n1: drain node n1"]);
    let late = since + Settings::default().drain_timeout + 1;
    assert!(asked(&draining, late).is_empty(), "the step failed");
    // Only a DaemonSet Pod left: drained, nothing to ask.
    assert!(asked(&fleet(true, "DaemonSet"), NOW).is_empty());
    // Not cordoned (the drain's first call has not happened): the step itself cordons.
    assert!(asked(&fleet(false, "ReplicaSet"), NOW).is_empty());
}

/// A MachineHealthCheck's AutorepairRemediation for `machine`, created at `created`, owned by
/// the Machine through `owner_api`.
fn remediation_item(machine: &str, created: i64, owner_api: &str, deleting: bool) -> Value {
    let mut item = json!({
        "apiVersion": "remediation.autorepair.io/v1alpha1",
        "kind": "AutorepairRemediation",
        "metadata": {
            "name": machine, "namespace": "ns",
            "creationTimestamp": crate::engine::rfc3339(created),
            "ownerReferences": [{"apiVersion": owner_api, "kind": "Machine", "name": machine, "uid": "u"}],
        },
        "spec": {},
    });
    if deleting {
        item["metadata"]["deletionTimestamp"] = json!(crate::engine::rfc3339(created + 1));
    }
    item
}

fn with_items(fleet: Fleet, extra: &[Value]) -> Value {
    let mut list = fleet.build();
    list["items"]
        .as_array_mut()
        .unwrap()
        .extend(extra.iter().cloned());
    list
}

#[test]
fn a_remediation_object_is_a_request_until_the_machine_records_it_answered() {
    const ID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let key = format!("autorepair.io/repair.{ID}");
    let cycled = format!("result:power-cycle:{}:success:power-cycle.{ID}", NOW + 60);
    let cycling = format!("pending:power-cycle:{}:power-cycle.{ID}", NOW - 60);
    let capi = "cluster.x-k8s.io/v1beta2";
    // (case, repair mark, answered record, owner apiVersion, deleting, requested)
    type Case<'a> = (
        &'a str,
        Option<&'a str>,
        Option<&'a str>,
        &'a str,
        bool,
        bool,
    );
    let cases: [Case; 7] = [
        ("nothing recorded", None, None, capi, false, true),
        // Whatever the clocks say: only who it is answers it.
        (
            "a result since, its uid not recorded",
            Some(&cycled),
            None,
            capi,
            false,
            true,
        ),
        (
            "another object recorded",
            Some(&cycled),
            Some("uid-0"),
            capi,
            false,
            true,
        ),
        ("recorded", Some(&cycled), Some("uid-1"), capi, false, false),
        (
            "a power cycle under way serves it",
            Some(&cycling),
            None,
            capi,
            false,
            false,
        ),
        ("being deleted", None, None, capi, true, false),
        (
            "owned by an OpenShift Machine",
            None,
            None,
            "machine.openshift.io/v1beta1",
            false,
            false,
        ),
    ];
    for (case, mark, answered, owner, deleting, requested) in cases {
        let mut m = Machine::new("ns", "m1").node("n1").host("h1");
        if let Some(r) = mark {
            m = m.annotate(&key, r);
        }
        if let Some(uid) = answered {
            m = m.annotate(super::marks::ANSWERED_KEY, uid);
        }
        let mut item = remediation_item("m1", NOW, owner, deleting);
        item["metadata"]["uid"] = json!("uid-1");
        let list = with_items(Fleet::new().machine(m), &[item]);
        let snap = Snapshot::from_items(list["items"].as_array().unwrap());
        let m = &snap.machines[0];
        assert_eq!(m.requested, requested, "{case}");
        assert!(!m.request_annotated, "{case}");
        assert_eq!(
            m.remediation.is_some(),
            !deleting && owner == capi,
            "{case}"
        );
        assert!(
            !m.marks
                .iter()
                .any(|t| t.starts_with(super::marks::ANSWERED_KEY)),
            "{case}: the record is not a mark"
        );
    }
}

#[test]
fn a_remediation_the_mhc_keeps_after_the_cycle_reports_success_and_asks_nothing_more() {
    // The MHC keeps its request while the Node settles (healthy only once no timeout is
    // pending): one power cycle, then `Succeeded`, and nothing more over passes that run past
    // `reboot_loop_window`: no second power cycle, and no reprovisioning, which the policy
    // would allow for a Machine a request finds power-cycled within the window.
    let list = with_items(
        Fleet::new()
            .machine(
                Machine::new("ns", "m1")
                    .node("n1")
                    .host("h1")
                    .owner("MachineSet", "ms1")
                    .annotate("autorepair.io/policy", "reprovision"),
            )
            .host(Host::new("ns", "h1"))
            .node(Node::new("n1").ready("False", fixture::T0))
            .simulated(),
        &[remediation_item(
            "m1",
            NOW,
            "cluster.x-k8s.io/v1beta2",
            false,
        )],
    );
    let mut file = ObjectsFile::in_memory(list);
    let mut starts = 0;
    let mut phases: Vec<String> = Vec::new();
    for i in 0..80 {
        let (_, plan) = pass(&mut file, NOW + 60 * i);
        for a in plan.actions() {
            if let Action::Repair(_) = a {
                starts += 1;
            }
        }
        let item = file
            .list()
            .pointer("/items")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .find(|i| i["kind"] == "AutorepairRemediation")
            .unwrap()
            .clone();
        let phase = item["status"]["phase"].as_str().unwrap_or("").to_owned();
        if phases.last() != Some(&phase) {
            phases.push(phase);
        }
    }
    assert_eq!(starts, 1, "one repair in {} s", 80 * 60);
    let result = file.snapshot().unwrap().machines[0].marks.join(" ");
    assert!(
        result.contains(":success:power-cycle.") && !result.contains("result:reprovision"),
        "{result}"
    );
    assert_eq!(phases, ["Waiting", "Running", "Succeeded"]);
}

#[test]
fn a_handover_sets_owner_remediated_false_in_both_lists_of_either_version_and_keeps_the_rest() {
    use super::objects::{OWNER_REMEDIATED_CONDITION, WAITING_FOR_REMEDIATION};
    let hc = json!({"type": "HealthCheckSucceeded", "status": "False", "reason": "UnhealthyNode"});
    let old_true = json!({"type": "OwnerRemediated", "status": "True"});
    // (apiVersion, status as read, where the new-form list is, where the old-form list is,
    //  handed over already)
    let cases = [
        (
            "cluster.x-k8s.io/v1beta2",
            json!({"conditions": [hc.clone()]}),
            "/conditions",
            "/deprecated/v1beta1/conditions",
            false,
        ),
        (
            "cluster.x-k8s.io/v1beta1",
            json!({"conditions": [hc.clone(), old_true.clone()], "v1beta2": {"conditions": [hc.clone()]}}),
            "/v1beta2/conditions",
            "/conditions",
            false,
        ),
        (
            "cluster.x-k8s.io/v1beta2",
            json!({
                "conditions": [{"type": "OwnerRemediated", "status": "False"}],
                "deprecated": {"v1beta1": {"conditions": [{"type": "OwnerRemediated", "status": "False"}]}},
            }),
            "/conditions",
            "/deprecated/v1beta1/conditions",
            true,
        ),
    ];
    for (api, status, current, legacy, handed) in cases {
        let mut item = Fleet::new().machine(Machine::new("ns", "m1")).build()["items"][0].clone();
        item["apiVersion"] = json!(api);
        item["status"] = status.clone();
        let snap = Snapshot::from_items([&item]);
        let c = snap.machines[0].conditions.clone().expect(api);
        assert_eq!(c.handed_over(), handed, "{api} {status}");
        let patch = c.hand_over("gave up", "2026-11-27T00:00:00Z");
        for (ptr, severity) in [(current, None), (legacy, Some("Warning"))] {
            let list = patch.pointer(ptr).and_then(Value::as_array).expect(ptr);
            let owner: Vec<&Value> = list
                .iter()
                .filter(|c| c["type"] == OWNER_REMEDIATED_CONDITION)
                .collect();
            assert_eq!(owner.len(), 1, "{api} {ptr}: {list:?}");
            assert_eq!(owner[0]["status"], "False");
            assert_eq!(owner[0]["reason"], WAITING_FOR_REMEDIATION);
            assert_eq!(owner[0]["message"], "gave up");
            assert_eq!(owner[0].get("severity").and_then(Value::as_str), severity);
            // What else the list held is kept.
            let read = status.pointer(ptr).and_then(Value::as_array).cloned();
            let others = read
                .unwrap_or_default()
                .into_iter()
                .filter(|c| c["type"] != OWNER_REMEDIATED_CONDITION)
                .count();
            assert_eq!(list.len(), others + 1, "{api} {ptr}");
        }
    }
    // OpenShift's Machines have no such contract.
    let mut item = Fleet::new().machine(Machine::new("ns", "m1")).build()["items"][0].clone();
    item["apiVersion"] = json!("machine.openshift.io/v1beta1");
    assert_eq!(Snapshot::from_items([&item]).machines[0].conditions, None);
}

/// Passes over a simulated file until `passes` ran: how many times the reboot key appeared
/// (each a power-off; one present at the start counts), and the file at the end.
fn power_offs_over(file: &mut ObjectsFile, passes: i64) -> usize {
    let (mut power_offs, mut rebooting) = (0, false);
    for i in 0..passes {
        let (snap, _) = pass(file, NOW + 60 * i);
        let now_rebooting = seen(&snap).reboot;
        power_offs += usize::from(now_rebooting && !rebooting);
        rebooting = now_rebooting;
    }
    power_offs
}

#[test]
fn a_reboot_key_found_without_a_record_is_adopted_and_never_followed_by_a_second_cycle() {
    // The design's restarted controller: it had written only its reboot key (an earlier
    // controller using the same key, or a pass killed between two writes), on a host still
    // on or already off. The cycle is completed, answered once the Node is back, and no
    // second power cycle starts while the Node re-registers.
    for powered_on in [true, false] {
        let list = Fleet::new()
            .machine(Machine::new("ns", "m1").node("n1").host("h1").requested())
            .host(Host::new("ns", "h1").powered(powered_on).rebooting())
            .node(Node::new("n1"))
            .simulated()
            .build();
        let mut file = ObjectsFile::in_memory(list);
        let power_offs = power_offs_over(&mut file, 12);
        let snap = file.snapshot().unwrap();
        let what = format!(
            "host {} at the start",
            if powered_on { "on" } else { "off" }
        );
        assert_eq!(power_offs, 1, "{what}: one power cycle only");
        assert_eq!(
            seen(&snap),
            Seen {
                node: true,
                request: false,
                powered_on: Some(true),
                reboot: false
            },
            "{what}: the request is answered once the Node is back"
        );
        let m = &snap.machines[0];
        assert!(
            m.marks
                .iter()
                .any(|t| t.contains("=result:power-cycle:") && t.contains(":success:power-cycle.")),
            "{what}: {:?}",
            m.marks
        );
    }
}

#[test]
fn an_adopted_cycle_whose_node_never_returns_times_out_by_cycle_timeout() {
    let list = Fleet::new()
        .machine(Machine::new("ns", "m1").node("n1").host("h1").requested())
        .host(Host::new("ns", "h1").powered(false).rebooting())
        .node(Node::new("n1"))
        .build();
    let mut file = ObjectsFile::in_memory(list);
    let timeout = Settings::default().cycle_timeout;
    let mut starts = 0;
    let mut i = 0;
    // No kubelet: the host is switched by hand as the baremetal-operator would, the Node never
    // comes back.
    while 60 * i <= timeout + 300 {
        let (_, plan) = pass(&mut file, NOW + 60 * i);
        starts += plan
            .actions()
            .filter(|a| matches!(a, Action::Repair(_)))
            .count();
        let rebooting = seen(&file.snapshot().unwrap()).reboot;
        for item in file.list_mut()["items"].as_array_mut().unwrap() {
            if item["kind"] == "BareMetalHost" {
                item["status"]["poweredOn"] = json!(!rebooting);
            }
        }
        i += 1;
    }
    assert_eq!(starts, 0, "no second power cycle while the Node is away");
    let m = &file.snapshot().unwrap().machines[0];
    assert!(
        m.marks
            .iter()
            .any(|t| t.contains("=result:power-cycle:") && t.contains(":failure:power-cycle.")),
        "{:?}",
        m.marks
    );
}

#[test]
fn a_new_remediation_made_in_the_second_its_predecessor_was_answered_is_a_new_request() {
    // The MHC deletes the answered request and makes a new one within the same second as the
    // power cycle's success: by the clocks (the result's and the API server's creation time)
    // the new one looks answered already. It is a request of its own, and meets the loop
    // guard: refused, reported so, never shown as served by a cycle that ran before it.
    let mut first = remediation_item("m1", NOW, "cluster.x-k8s.io/v1beta2", false);
    first["metadata"]["uid"] = json!("uid-1");
    let list = with_items(
        Fleet::new()
            .machine(Machine::new("ns", "m1").node("n1").host("h1"))
            .host(Host::new("ns", "h1"))
            .node(Node::new("n1").ready("False", fixture::T0))
            .simulated(),
        &[first],
    );
    let mut file = ObjectsFile::in_memory(list);
    let succeeded = |file: &mut ObjectsFile| {
        file.snapshot().unwrap().machines[0]
            .marks
            .iter()
            .any(|t| t.contains(":success:power-cycle."))
    };
    let mut i = 0;
    while !succeeded(&mut file) {
        assert!(i < 30, "the first power cycle never ended");
        pass(&mut file, NOW + 60 * i);
        i += 1;
    }
    let answered_at = NOW + 60 * (i - 1);
    let items = file.list_mut()["items"].as_array_mut().unwrap();
    items.retain(|item| item["kind"] != "AutorepairRemediation");
    let mut second = remediation_item("m1", answered_at, "cluster.x-k8s.io/v1beta2", false);
    second["metadata"]["uid"] = json!("uid-2");
    items.push(second);
    let snap = file.snapshot().unwrap();
    assert!(snap.machines[0].requested, "the new object asks again");
    for j in 0..2 {
        pass(&mut file, answered_at + j);
    }
    let status = file
        .list()
        .pointer("/items")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .find(|i| i["kind"] == "AutorepairRemediation")
        .unwrap()["status"]
        .clone();
    assert_eq!(status["phase"], "Failed", "{status}");
    let reason = status["conditions"][0]["reason"].as_str().unwrap_or("");
    assert_eq!(reason, "RebootLoopGuard", "{status}");
}

/// Rule 13's storm cool-down reads when each Machine came back from the fleet: its Node's
/// Ready turn, its Node's making, the end of a repair of ours on it; a new Machine's first
/// Node is no return. One Machine beside a requested one, under a limit of 1 per zone: if it
/// came back within the cool-down, the request waits.
#[test]
fn a_machine_comes_back_when_its_node_turns_ready_is_made_or_our_repair_ends() {
    use crate::engine::rfc3339;
    const MIN: i64 = 60;
    // (case, Machine made, Node made, Ready since, a repair of ours ended, the request waits)
    type Case = (&'static str, i64, i64, i64, Option<i64>, bool);
    let long_ago = NOW - 100 * 86400;
    let cases: [Case; 7] = [
        ("up all along", long_ago, long_ago, long_ago, None, false),
        (
            "Ready again 10 min ago",
            long_ago,
            long_ago,
            NOW - 10 * MIN,
            None,
            true,
        ),
        (
            "a new Node 10 min ago",
            long_ago,
            NOW - 10 * MIN,
            NOW - 9 * MIN,
            None,
            true,
        ),
        (
            "a new Machine's first Node: a rollout",
            NOW - 15 * MIN,
            NOW - 12 * MIN,
            NOW - 11 * MIN,
            None,
            false,
        ),
        (
            "a new Machine's Node that went down and came back",
            NOW - 15 * MIN,
            NOW - 12 * MIN,
            NOW - MIN,
            None,
            true,
        ),
        (
            "our power cycle ended 10 min ago",
            long_ago,
            long_ago,
            long_ago,
            Some(NOW - 10 * MIN),
            true,
        ),
        (
            "back before the cool-down",
            long_ago,
            long_ago,
            NOW - 40 * MIN,
            Some(NOW - 40 * MIN),
            false,
        ),
    ];
    for (case, machine_made, node_made, ready_since, ended, waits) in cases {
        let mut m1 = Machine::new("ns", "m1").node("n1").host("h1").zone("a");
        if let Some(at) = ended {
            let id = "0b4f6f6e-7e2a-4c1e-9d7a-2f4b1c3d5e6f";
            m1 = m1.annotate(
                &format!("autorepair.io/repair.{id}"),
                &format!("result:power-cycle:{at}:success:power-cycle.{id}"),
            );
        }
        let mut fleet = Fleet::new()
            .machine(m1)
            .host(Host::new("ns", "h1"))
            .node(Node::new("n1").ready("True", &rfc3339(ready_since)))
            .machine(
                Machine::new("ns", "m3")
                    .node("n3")
                    .host("h3")
                    .zone("a")
                    .requested(),
            )
            .host(Host::new("ns", "h3"))
            .node(Node::new("n3"))
            .build();
        for item in fleet["items"].as_array_mut().unwrap() {
            let made = match (item["kind"].as_str(), item["metadata"]["name"].as_str()) {
                (Some("Machine"), Some("m1")) => machine_made,
                (Some("Node"), Some("n1")) => node_made,
                _ => continue,
            };
            item["metadata"]["creationTimestamp"] = rfc3339(made).into();
        }
        let limits = Limits {
            max_down_nodes_per_group: 1,
            storm_cooldown: Some(std::time::Duration::from_secs(30 * MIN as u64)),
            ..Limits::default()
        };
        let snap = ObjectsFile::in_memory(fleet).snapshot().unwrap();
        let plan = plan(&snap, &Settings::default(), NOW, &limits, 7);
        let m3 = plan.target("ns/m3").unwrap();
        assert_eq!(
            matches!(m3.blocked, Some(crate::engine::Blocked::Cooldown { .. })),
            waits,
            "{case}: {m3:#?}"
        );
        assert_eq!(
            m3.actions.iter().any(|a| matches!(a, Action::Repair(_))),
            !waits,
            "{case}"
        );
    }
}

/// Rule 13's escalation on metal3: a power cycle that did not bring the Node back is retried
/// as a reprovision (the Machine handed to its owner to replace) where the policy allows it
/// and `escalate` is on; else the retry is a power cycle again.
#[test]
fn with_escalate_a_failed_power_cycle_is_retried_as_a_reprovision() {
    let id = "0b4f6f6e-7e2a-4c1e-9d7a-2f4b1c3d5e6f";
    // (escalate, the Machine's policy, what the retry starts)
    let cases = [
        (true, "reprovision", Metal3Level::Reprovision),
        (false, "reprovision", Metal3Level::PowerCycle),
        (true, "power-cycle", Metal3Level::PowerCycle),
    ];
    for (escalate, policy, want) in cases {
        let fleet = Fleet::new()
            .machine(
                Machine::new("ns", "m1")
                    .node("n1")
                    .host("h1")
                    .owner("MachineSet", "ms1")
                    .annotate(crate::metal3::marks::POLICY_KEY, policy)
                    .annotate(
                        &format!("autorepair.io/repair.{id}"),
                        &format!("result:power-cycle:{}:failure:power-cycle.{id}", NOW - 900),
                    ),
            )
            .host(Host::new("ns", "h1"))
            .node(Node::new("n1").ready("False", fixture::T0))
            .scope("MachineSet", "ns", "ms1", &[])
            .build();
        let limits = Limits {
            retries: 1,
            retry_backoff: std::time::Duration::from_secs(60),
            escalate,
            ..Limits::default()
        };
        let snap = ObjectsFile::in_memory(fleet).snapshot().unwrap();
        let plan = plan(&snap, &Settings::default(), NOW, &limits, 7);
        let m1 = plan.target("ns/m1").unwrap();
        assert!(
            matches!(m1.next, crate::engine::Next::Start { repair, .. } if repair == want),
            "escalate {escalate}, policy {policy}: {m1:#?}"
        );
    }
}

#[test]
fn an_operation_id_that_cannot_be_read_says_which_part_is_wrong() {
    let uuid = "3b2c1d0e-1111-4a2b-9c3d-000000000001";
    let cases = [
        (format!("power-cycle.{uuid}"), Ok(super::Step::PowerCycle)),
        (format!("delete.{uuid}"), Ok(super::Step::Delete)),
        ("power-cycle".to_owned(), Err("is not <step>.<repair id>")),
        ("power-cycle.x".to_owned(), Err("\"x\" is not a repair id")),
        (format!("reboot.{uuid}"), Err("\"reboot\" is not a step")),
    ];
    for (text, want) in cases {
        match (text.parse::<super::OpId>(), want) {
            (Ok(id), Ok(step)) => assert_eq!(id.step, step, "{text}"),
            (Err(e), Err(said)) => assert!(e.to_string().contains(said), "{text}: {e}"),
            (got, want) => panic!("{text}: {got:?}, want {want:?}"),
        }
    }
}

/// A failed power cycle's key is withdrawn unless a repair begun since the failure may have
/// written it before dying: a power cycle with no operation recorded yet. A repair whose
/// recorded step is another (a drain) never powers off, so it owns no key.
#[test]
fn a_failed_cycles_key_is_withdrawn_unless_a_repair_begun_since_may_own_it() {
    let failed = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let other = "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d";
    let failure = format!(
        "result:power-cycle:{}:failure:power-cycle.{failed}",
        NOW - 600
    );
    // (case, the other repair's pending mark, whether the key is withdrawn)
    let cases = [
        ("nothing else", None, true),
        (
            "a power cycle begun since, unrecorded",
            Some(format!("pending:power-cycle:{}:", NOW - 300)),
            false,
        ),
        (
            "a power cycle begun before the failure",
            Some(format!("pending:power-cycle:{}:", NOW - 900)),
            true,
        ),
        (
            "a drain begun since, its step recorded",
            Some(format!("pending:drain:{}:drain.{other}", NOW - 300)),
            true,
        ),
    ];
    for (case, pending, withdrawn) in cases {
        let mut m = Machine::new("ns", "m1")
            .node("n1")
            .host("h1")
            .annotate(&format!("autorepair.io/repair.{failed}"), &failure);
        if let Some(p) = &pending {
            m = m.annotate(&format!("autorepair.io/repair.{other}"), p);
        }
        let list = Fleet::new()
            .machine(m)
            .host(Host::new("ns", "h1").rebooting())
            .node(Node::new("n1"))
            .build();
        let snap = ObjectsFile::in_memory(list).snapshot().unwrap();
        let plan = plan_of(&snap, NOW);
        let actions: Vec<String> = plan.actions().map(|a| a.to_string()).collect();
        let powers_on = actions.iter().any(|a| a.contains("powers it on"));
        assert_eq!(powers_on, withdrawn, "{case}: {actions:#?}");
    }
}
