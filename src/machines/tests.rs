//! The family's planning over small fleets built in memory.

use super::config::{Constraints, Repair};
use super::entry::{Entry, Progress, Status, StepStatus};
use super::snapshot::{Machine, Node, Scope, Snapshot, StoredQueryError, kind};
use super::*;
use crate::engine::{Action, Limits};
use crate::sabakan::{Stamp, State};

pub(crate) const NOW: i64 = 1_800_000_000;

pub(crate) const CONFIG: &str = r#"
repair_procedures:
  - machine_types: ["qemu"]
    repair_operations:
      - operation: unhealthy
        repair_steps:
          - repair_command: ["soft-reboot"]
            need_drain: true
            watch_seconds: 60
          - repair_command: ["hard-reboot"]
            watch_seconds: 600
        health_check_command: ["check"]
      - operation: unreachable
        repair_steps:
          - repair_command: ["hard-reboot"]
        health_check_command: ["check"]
        success_command: ["notify"]
max_concurrent_repairs: 1
"#;

pub(crate) fn settings(max_entries: usize) -> Settings {
    Settings {
        repair: Repair::parse(CONFIG, "test").unwrap(),
        constraints: Constraints {
            maximum_repair_queue_entries: max_entries,
            wait_seconds_to_repair_rebooting: 300,
            ..Constraints::default()
        },
        query: Settings::default_query(),
    }
}

pub(crate) fn machine(serial: &str, rack: i64, state: State, labels: &[(&str, &str)]) -> Machine {
    let pairs: Vec<(String, String)> = labels
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let n: u32 = serial.bytes().map(u32::from).sum();
    let info = crate::sabakan::Machine {
        serial: serial.to_owned(),
        labels: pairs.clone(),
        rack,
        index_in_rack: 1,
        role: "cs".into(),
        ipv4: vec![format!("10.0.{rack}.{}", n % 250)],
        register_date: Stamp::zero(),
        retire_date: Stamp::zero(),
        bmc_type: "qemu".into(),
        state,
        duration: 10_000.0,
    };
    Machine {
        serial: serial.to_owned(),
        rack: format!("rack/{rack}"),
        marks: pairs.iter().map(|(a, b)| labels::join(a, b)).collect(),
        entry: Entry::from_labels(pairs.iter().map(|(a, b)| (a.as_str(), b.as_str()))),
        healthy: None,
        info,
    }
}

fn fleet(machines: Vec<Machine>, cluster: &[&str]) -> Snapshot {
    Snapshot {
        machines,
        scopes: vec![Scope {
            object: ObjectRef::singleton(kind::CLUSTER),
            key: kind::CLUSTER.into(),
            marks: cluster.iter().map(|s| s.to_string()).collect(),
        }],
        nodes: Vec::new(),
        ..Snapshot::default()
    }
}

fn node_of(m: &Machine) -> Node {
    Node {
        name: m.address().unwrap().to_owned(),
        ..Node::default()
    }
}

fn entry_labels(index: u64, op: &str, p: Progress) -> [(String, String); 2] {
    [
        (
            labels::ENTRY.into(),
            Entry::value(index, op, "qemu").unwrap(),
        ),
        (labels::PROGRESS.into(), p.value()),
    ]
}

fn with_entry(mut m: Machine, index: u64, p: Progress, level: MachinesLevel) -> Machine {
    let op = m.info.state.as_str().to_ascii_lowercase();
    let mut pairs: Vec<(String, String)> = m.info.labels.clone();
    pairs.extend(entry_labels(index, &op, p));
    let pending = Labels::render_pending(
        level,
        "0f8fad5b-d9cb-469f-a165-70867728950e",
        NOW - 1000,
        &[OpId(index)],
    )
    .unwrap();
    let (a, b) = labels::split(&pending);
    pairs.push((a.into(), b.into()));
    let refs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let healthy = m.healthy;
    m = machine(&m.serial.clone(), m.info.rack, m.info.state, &refs);
    m.healthy = healthy;
    m
}

fn run_plan(snap: &Snapshot, s: &Settings) -> Plan {
    let limits = Limits {
        max_domains_under_repair: 10,
        ..Limits::default()
    };
    plan(snap, s, NOW, &limits, 1)
}

fn starts(p: &Plan) -> Vec<(String, MachinesLevel)> {
    p.targets
        .iter()
        .flat_map(|t| t.actions.iter())
        .filter_map(|a| match a {
            Action::Repair(r) => Some((r.target.clone(), r.repair)),
            _ => None,
        })
        .collect()
}

const POLICY_ALL: (&str, &str) = ("autorepair.policy", "step-8");

#[test]
fn sabakan_states_start_entries_within_the_constraints() {
    struct Case {
        name: &'static str,
        machines: Vec<Machine>,
        max: usize,
        want: Vec<(&'static str, MachinesLevel)>,
    }
    let cases = vec![
        Case {
            name: "unhealthy and allowed: an entry at its step count",
            machines: vec![machine("a", 1, State::Unhealthy, &[POLICY_ALL])],
            max: 5,
            want: vec![("a", MachinesLevel::step(2))],
        },
        Case {
            name: "healthy: nothing",
            machines: vec![machine("a", 1, State::Healthy, &[POLICY_ALL])],
            max: 5,
            want: vec![],
        },
        Case {
            name: "no policy: never touched",
            machines: vec![machine("a", 1, State::Unhealthy, &[])],
            max: 5,
            want: vec![],
        },
        Case {
            name: "maximum-repair-queue-entries 0 (CKE's default) starts nothing",
            machines: vec![machine("a", 1, State::Unhealthy, &[POLICY_ALL])],
            max: 0,
            want: vec![],
        },
        Case {
            name: "cluster limiter is all or nothing",
            machines: vec![
                machine("a", 1, State::Unhealthy, &[POLICY_ALL]),
                machine("b", 2, State::Unhealthy, &[POLICY_ALL]),
            ],
            max: 1,
            want: vec![],
        },
        Case {
            name: "the policy caps the level",
            machines: vec![machine(
                "a",
                1,
                State::Unhealthy,
                &[("autorepair.policy", "step-1")],
            )],
            max: 5,
            want: vec![("a", MachinesLevel::step(1))],
        },
        Case {
            name: "UNREACHABLE out of the cluster waits wait-seconds-to-repair-rebooting",
            machines: vec![{
                let mut m = machine("a", 1, State::Unreachable, &[POLICY_ALL]);
                m.info.duration = 299.0;
                m
            }],
            max: 5,
            want: vec![],
        },
        Case {
            name: "UNREACHABLE past the wait starts",
            machines: vec![{
                let mut m = machine("a", 1, State::Unreachable, &[POLICY_ALL]);
                m.info.duration = 300.0;
                m
            }],
            max: 5,
            want: vec![("a", MachinesLevel::step(1))],
        },
        Case {
            name: "UNHEALTHY never waits",
            machines: vec![{
                let mut m = machine("a", 1, State::Unhealthy, &[POLICY_ALL]);
                m.info.duration = 1.0;
                m
            }],
            max: 5,
            want: vec![("a", MachinesLevel::step(2))],
        },
        Case {
            name: "a boot server is not selected",
            machines: vec![{
                let mut m = machine("a", 1, State::Unhealthy, &[POLICY_ALL]);
                m.info.role = "boot".into();
                m
            }],
            max: 5,
            want: vec![],
        },
        Case {
            name: "a finished entry blocks a new one (per-machine limiter)",
            machines: vec![with_entry(
                machine("a", 1, State::Unhealthy, &[POLICY_ALL]),
                3,
                Progress::queued(NOW).to(Status::Failed, 1, StepStatus::Waiting, NOW),
                MachinesLevel::step(2),
            )],
            max: 5,
            want: vec![],
        },
    ];
    for c in cases {
        let snap = fleet(c.machines, &[]);
        let p = run_plan(&snap, &settings(c.max));
        let want: Vec<(String, MachinesLevel)> =
            c.want.iter().map(|(n, l)| (n.to_string(), *l)).collect();
        assert_eq!(starts(&p), want, "{}", c.name);
    }
}

#[test]
fn a_policy_of_check_writes_enoperm() {
    let snap = fleet(
        vec![machine(
            "a",
            1,
            State::Unhealthy,
            &[("autorepair.policy", "check")],
        )],
        &[],
    );
    let p = run_plan(&snap, &settings(5));
    assert!(starts(&p).is_empty());
    let adds: Vec<&String> = p.targets[0]
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::AddMarks { marks, .. } => Some(marks),
            _ => None,
        })
        .flatten()
        .collect();
    assert!(adds.iter().any(|m| m.contains(".enoperm")), "{adds:?}");
}

#[test]
fn the_cluster_policy_applies_through_the_scope_chain() {
    let own = [("autorepair.policy", "step-1")];
    let a_starts = vec![("a".to_string(), MachinesLevel::step(1))];
    for (cluster, machine_labels, want) in [
        (&["autorepair.policy=step-1"][..], &[][..], a_starts.clone()),
        // The nearest policy wins: a machine's own allow beats the cluster's suspend...
        (&["autorepair.suspend="][..], &own[..], a_starts.clone()),
        // ...but not the cluster's `suspend --all`, which holds every machine under it.
        (&["autorepair.suspend-all="][..], &own[..], vec![]),
        (&["autorepair.suspend-all=1"][..], &own[..], a_starts),
    ] {
        let snap = fleet(
            vec![machine("a", 1, State::Unhealthy, machine_labels)],
            cluster,
        );
        assert_eq!(
            starts(&run_plan(&snap, &settings(5))),
            want,
            "cluster {cluster:?}, machine {machine_labels:?}"
        );
    }
}

/// A once-off request allows repairs up to its own level on its machine, whatever the policy
/// (docs/design.md, rule 1): the two-step `unhealthy` procedure runs as far as the request says.
#[test]
fn a_once_off_request_allows_up_to_its_own_level() {
    let request = |level: MachinesLevel| {
        let mark =
            Labels::render_pending(level, "3f0c2d9e-5b7a-4c1e-9f3a-2b8d6e4a1c70", NOW - 60, &[])
                .unwrap();
        let (a, b) = labels::split(&mark);
        (a.to_owned(), b.to_owned())
    };
    let policy = |level: &str| ("autorepair.policy".to_owned(), level.to_owned());
    for (name, labels, started) in [
        (
            "a policy alone caps the steps",
            vec![policy("step-1")],
            Some(MachinesLevel::step(1)),
        ),
        (
            "a request above the policy: every step it allows",
            vec![policy("step-1"), request(MachinesLevel::step(2))],
            Some(MachinesLevel::step(2)),
        ),
        (
            "a request above the procedure: the procedure's steps",
            vec![policy("step-1"), request(MachinesLevel::step(8))],
            Some(MachinesLevel::step(2)),
        ),
        (
            "a request without a policy",
            vec![request(MachinesLevel::step(2))],
            Some(MachinesLevel::step(2)),
        ),
        (
            "a request below the policy: its own level, never more",
            vec![policy("step-8"), request(MachinesLevel::step(1))],
            Some(MachinesLevel::step(1)),
        ),
        (
            // The request ends as enoperm; the policy then starts a repair of its own.
            "a request of no step at all, under a policy",
            vec![policy("step-8"), request(MachinesLevel::CHECK)],
            Some(MachinesLevel::step(2)),
        ),
        (
            "a request of no step at all, alone: nothing starts",
            vec![request(MachinesLevel::CHECK)],
            None,
        ),
    ] {
        let refs: Vec<(&str, &str)> = labels
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let snap = fleet(vec![machine("a", 1, State::Unhealthy, &refs)], &[]);
        let p = run_plan(&snap, &settings(5));
        let got = starts(&p).first().map(|(_, level)| *level);
        assert_eq!(got, started, "{name}: {:?}", p.targets[0].notes);
    }
}

/// The trigger's switch and stored query (`autorepair auto-repair …`): off, unreadable, or a
/// stored query that cannot be read each hold what the trigger would start; a stored query
/// selects in place of the config's; a once-off request is a person's and goes on.
#[test]
fn the_auto_repair_switch_and_stored_query_govern_only_the_trigger() {
    let request = {
        let mark = Labels::render_pending(
            MachinesLevel::step(1),
            "3f0c2d9e-5b7a-4c1e-9f3a-2b8d6e4a1c70",
            NOW - 60,
            &[],
        )
        .unwrap();
        let (a, b) = labels::split(&mark);
        (a.to_owned(), b.to_owned())
    };
    let rack_two_only = Variables::parse(r#"{"having":{"racks":[2]}}"#).unwrap();
    let unreadable = || Switch::Unreadable("\"enabeld\" on machine x".into());
    // (case, switch, stored query, a request waiting, an entry created)
    type Stored = Option<Result<Variables, StoredQueryError>>;
    let unusable = || {
        Some(Err(StoredQueryError::AlsoInConfig {
            path: "repair.yml.auto-repair.json".into(),
        }))
    };
    let cases: [(&str, Switch, Stored, bool, bool); 9] = [
        ("on, CKE's query", Switch::On, None, false, true),
        ("off", Switch::Off, None, false, false),
        ("unreadable", unreadable(), None, false, false),
        ("off, a request waits", Switch::Off, None, true, true),
        (
            "unreadable, a request waits",
            unreadable(),
            None,
            true,
            true,
        ),
        (
            "a stored query selecting it",
            Switch::On,
            Some(Ok(Variables::parse("{}").unwrap())),
            false,
            true,
        ),
        (
            "a stored query leaving it out",
            Switch::On,
            Some(Ok(rack_two_only)),
            false,
            false,
        ),
        (
            "a stored query unreadable",
            Switch::On,
            unusable(),
            false,
            false,
        ),
        (
            "a stored query unreadable, a request waits",
            Switch::On,
            unusable(),
            true,
            true,
        ),
    ];
    for (case, switch, stored, requested, created) in cases {
        let mut labels = vec![("autorepair.policy".to_owned(), "step-1".to_owned())];
        labels.extend(requested.then(|| request.clone()));
        let refs: Vec<(&str, &str)> = labels
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let mut snap = fleet(vec![machine("a", 1, State::Unhealthy, &refs)], &[]);
        snap.auto_repair = switch;
        snap.variables = stored;
        let p = run_plan(&snap, &settings(5));
        assert_eq!(
            !starts(&p).is_empty(),
            created,
            "{case}: {:?}",
            p.targets[0]
        );
        if !created && case != "a stored query leaving it out" {
            let person = p.targets[0].needs_person.as_deref().unwrap_or_default();
            assert!(person.contains("auto-repair"), "{case}: {person:?}");
        }
    }
}

fn waiting(step: usize) -> Progress {
    Progress::queued(NOW - 100).to(Status::Processing, step, StepStatus::Waiting, NOW - 100)
}

#[test]
fn entries_follow_ckes_state_machine() {
    let queued = Progress::queued(NOW - 100);
    let watching = |step, since| {
        Progress::queued(NOW).to(Status::Processing, step, StepStatus::Watching, since)
    };
    let draining =
        |since| Progress::queued(NOW).to(Status::Processing, 0, StepStatus::Draining, since);
    struct Case {
        name: &'static str,
        progress: Progress,
        state: State,
        healthy: bool,
        in_cluster: bool,
        pods: usize,
        /// Someone uncordoned the machine's Node.
        uncordoned: bool,
        enabled: bool,
        level: MachinesLevel,
        /// The machine's policy or suspend label.
        policy: (&'static str, &'static str),
        want: &'static [&'static str],
    }
    let base = Case {
        name: "",
        progress: queued,
        state: State::Unhealthy,
        healthy: false,
        in_cluster: false,
        pods: 0,
        uncordoned: false,
        enabled: true,
        level: MachinesLevel::step(2),
        policy: POLICY_ALL,
        want: &[],
    };
    let suspend = ("autorepair.suspend", "");
    let cases = vec![
        Case {
            name: "healthy: succeeded without a step",
            healthy: true,
            want: &["record autorepair.progress=succeeded"],
            ..base
        },
        Case {
            name: "healthy with a success command: it runs",
            healthy: true,
            state: State::Unreachable,
            want: &["run the success command: notify"],
            ..base
        },
        Case {
            name: "queued, out of the cluster: the command runs (no drain)",
            want: &["run step 1 repair command: soft-reboot"],
            ..base
        },
        Case {
            name: "queued, in the cluster, needs drain: cordon",
            in_cluster: true,
            want: &["cordon node"],
            ..base
        },
        Case {
            name: "disabled: no drain, no command",
            enabled: false,
            in_cluster: true,
            want: &[],
            ..base
        },
        Case {
            name: "disabled: health checks still finish entries",
            enabled: false,
            healthy: true,
            want: &["record autorepair.progress=succeeded"],
            ..base
        },
        Case {
            name: "draining, pods left, in time: evict again",
            progress: draining(NOW - 10),
            in_cluster: true,
            pods: 2,
            want: &["cordon node"],
            ..base
        },
        Case {
            name: "draining, drained: the command runs",
            progress: draining(NOW - 10),
            in_cluster: true,
            want: &["run step 1 repair command: soft-reboot"],
            ..base
        },
        Case {
            name: "draining, no pods left, but someone uncordoned the Node: cordon again",
            progress: draining(NOW - 10),
            in_cluster: true,
            uncordoned: true,
            want: &["cordon node"],
            ..base
        },
        Case {
            name: "draining when the policy is lowered below the step: enoperm, no command",
            progress: draining(NOW - 10),
            in_cluster: true,
            policy: ("autorepair.policy", "check"),
            want: &["record autorepair.progress=failed.0.draining"],
            ..base
        },
        Case {
            name: "draining past eviction_timeout_seconds: back-off",
            progress: draining(NOW - 601),
            in_cluster: true,
            pods: 2,
            want: &["record autorepair.progress=processing.0.waiting"],
            ..base
        },
        Case {
            name: "draining while disabled: abandoned",
            progress: draining(NOW - 10),
            in_cluster: true,
            pods: 2,
            enabled: false,
            want: &["record autorepair.progress=processing.0.waiting"],
            ..base
        },
        Case {
            name: "suspended: no drain, no command",
            in_cluster: true,
            policy: suspend,
            want: &[],
            ..base
        },
        Case {
            name: "suspended until later: no command either",
            policy: ("autorepair.suspend", "1800003600"),
            want: &[],
            ..base
        },
        Case {
            name: "suspended while draining: abandoned",
            progress: draining(NOW - 10),
            in_cluster: true,
            pods: 2,
            policy: suspend,
            want: &["record autorepair.progress=processing.0.waiting"],
            ..base
        },
        Case {
            name: "suspended: health checks still finish entries",
            healthy: true,
            policy: suspend,
            want: &["record autorepair.progress=succeeded"],
            ..base
        },
        Case {
            name: "policy lowered below the next step since the start: enoperm",
            progress: watching(0, NOW - 60),
            policy: ("autorepair.policy", "step-1"),
            want: &[
                "record autorepair.progress=processing.1.waiting",
                "enoperm: step 2 needs step-2",
            ],
            ..base
        },
        Case {
            name: "watching within watch_seconds: nothing",
            progress: watching(0, NOW - 59),
            want: &[],
            ..base
        },
        Case {
            name: "watch over: the next step in the same pass",
            progress: watching(0, NOW - 60),
            want: &[
                "record autorepair.progress=processing.1.waiting",
                "run step 2 repair command: hard-reboot",
            ],
            ..base
        },
        Case {
            name: "past the last step: failed",
            progress: watching(1, NOW - 600),
            want: &[
                "record autorepair.progress=processing.2.waiting",
                "record autorepair.progress=failed.2.waiting",
            ],
            ..base
        },
        Case {
            name: "beyond the level's cap: failed as enoperm",
            progress: watching(0, NOW - 60),
            level: MachinesLevel::step(1),
            want: &[
                "record autorepair.progress=processing.1.waiting",
                "enoperm: step 2 needs step-2",
            ],
            ..base
        },
        Case {
            name: "in drain back-off: waits",
            progress: {
                let mut p = waiting(0);
                p.drain_backoff_count = 1;
                p.drain_backoff_expire = NOW + 10;
                p
            },
            want: &[],
            ..base
        },
        Case {
            name: "deleted: dequeued, even while disabled",
            progress: Progress {
                deleted: true,
                ..queued
            },
            enabled: false,
            want: &["remove the deleted repair entry"],
            ..base
        },
    ];
    let s = settings(5);
    for c in cases {
        let mut m = machine("a", 1, c.state, &[c.policy]);
        m.healthy = Some(c.healthy);
        let m = with_entry(m, 7, c.progress, c.level);
        let mut nodes = Vec::new();
        if c.in_cluster {
            nodes.push(Node {
                pods: c.pods,
                unschedulable: !c.uncordoned,
                ..node_of(&m)
            });
        }
        let mut snap = fleet(vec![m], &[]);
        snap.nodes = nodes;
        snap.queue = if c.enabled { Switch::On } else { Switch::Off };
        let index = Machines::index(&snap, &s, NOW);
        let got: Vec<String> = Machines::progress(&index, NOW)
            .into_iter()
            .map(|w| w.op.to_string())
            .collect();
        assert_eq!(got.len(), c.want.len(), "{}: {got:?}", c.name);
        for (g, w) in got.iter().zip(c.want) {
            assert!(g.contains(w), "{}: {g:?} lacks {w:?}", c.name);
        }
    }
}

#[test]
fn max_concurrent_repairs_and_one_control_plane() {
    let s = settings(5);
    let queued = Progress::queued(NOW - 100);
    let a = with_entry(
        machine("a", 1, State::Unhealthy, &[POLICY_ALL]),
        2,
        queued,
        MachinesLevel::step(2),
    );
    let b = with_entry(
        machine("b", 1, State::Unhealthy, &[POLICY_ALL]),
        1,
        queued,
        MachinesLevel::step(2),
    );
    let c = with_entry(
        machine("c", 2, State::Unhealthy, &[POLICY_ALL]),
        3,
        Progress::queued(NOW).to(Status::Processing, 0, StepStatus::Watching, NOW),
        MachinesLevel::step(2),
    );
    // Processing before queued, then index order: c holds the only slot (watching).
    let snap = fleet(vec![a.clone(), b.clone(), c], &[]);
    let index = Machines::index(&snap, &s, NOW);
    assert_eq!(index.taken, vec![false, false, true]);
    // A suspended machine's entry holds no slot, but while draining (to abandon the drain).
    let suspended = |step_status| {
        with_entry(
            machine("c", 2, State::Unhealthy, &[("autorepair.suspend", "")]),
            3,
            Progress::queued(NOW).to(Status::Processing, 0, step_status, NOW),
            MachinesLevel::step(2),
        )
    };
    let snap = fleet(
        vec![a.clone(), b.clone(), suspended(StepStatus::Watching)],
        &[],
    );
    assert_eq!(
        Machines::index(&snap, &s, NOW).taken,
        vec![false, true, false]
    );
    let snap = fleet(
        vec![a.clone(), b.clone(), suspended(StepStatus::Draining)],
        &[],
    );
    assert_eq!(
        Machines::index(&snap, &s, NOW).taken,
        vec![false, false, true]
    );
    // Without c, b (index 1) before a (index 2).
    let snap = fleet(vec![a.clone(), b.clone()], &[]);
    assert_eq!(Machines::index(&snap, &s, NOW).taken, vec![false, true]);
    // Two slots, both control planes: one only.
    let mut s2 = s.clone();
    s2.repair.max_concurrent_repairs = 2;
    let mut snap = fleet(vec![a.clone(), b.clone()], &[]);
    snap.nodes = [&a, &b]
        .iter()
        .map(|m| Node {
            control_plane: true,
            ..node_of(m)
        })
        .collect();
    assert_eq!(Machines::index(&snap, &s2, NOW).taken, vec![false, true]);
    snap.nodes[1].control_plane = false;
    assert_eq!(Machines::index(&snap, &s2, NOW).taken, vec![true, true]);
    // A whole cluster.yml names the control planes: its nodes:, whatever the Nodes' labels.
    let mut s3 = s2.clone();
    s3.repair.control_planes = Some(
        [&a, &b]
            .iter()
            .filter_map(|m| m.address().map(str::to_owned))
            .collect(),
    );
    assert_eq!(Machines::index(&snap, &s3, NOW).taken, vec![false, true]);
    let mut no_nodes = snap.clone();
    no_nodes.nodes.clear();
    assert_eq!(
        Machines::index(&no_nodes, &s3, NOW).taken,
        vec![false, true]
    );
}

/// CKE's etcd gate: a good etcd lets the entries move as before; one that is not good for
/// repair, or cannot be read, holds every entry where it stands (not even a deleted one is
/// removed, as CKE withholds the whole repair phase), and the operation says why. A Node we
/// cordoned that no entry holds is uncordoned all the same while etcd is healthy (CKE does
/// that before the phase), not when etcd cannot be read (CKE waits for etcd first).
#[test]
fn the_etcd_gate_holds_every_step_while_etcd_is_not_good_for_repair() {
    use crate::machines::etcd::Status as EtcdStatus;
    let mut s = settings(5);
    let a = with_entry(
        machine("a", 1, State::Unhealthy, &[POLICY_ALL]),
        1,
        Progress::queued(NOW - 100),
        MachinesLevel::step(2),
    );
    let gone = with_entry(
        machine("b", 1, State::Unhealthy, &[POLICY_ALL]),
        2,
        Progress {
            deleted: true,
            ..Progress::queued(NOW - 100)
        },
        MachinesLevel::step(2),
    );
    let cp = a.address().unwrap().to_owned();
    s.repair.control_planes = Some([cp.clone()].into());
    let good = Ok(EtcdStatus {
        revision: Some(9),
        members: vec![(cp.clone(), true)],
    });
    let behind = Ok(EtcdStatus {
        revision: Some(9),
        members: vec![(cp.clone(), false)],
    });
    let idle = machine("c", 1, State::Healthy, &[POLICY_ALL]);
    let left_cordoned = Node {
        unschedulable: true,
        cordoned_by_us: true,
        ..node_of(&idle)
    };
    // (what etcd said, how many entries' operations move, whether the Node is uncordoned,
    // what the entry's operation says)
    type Read = Option<Result<EtcdStatus, crate::machines::etcd::EtcdError>>;
    let cases: Vec<(Read, usize, bool, Option<&str>)> = vec![
        (None, 2, true, None),
        (Some(good), 2, true, None),
        (
            Some(behind),
            0,
            true,
            Some("is out of sync while its machine is reachable"),
        ),
        (
            Some(Err(crate::machines::etcd::EtcdError::Request {
                url: "https://10.0.0.1:2379/v3/kv/range".into(),
                message: "connection refused".into(),
            })),
            0,
            false,
            Some("etcd cannot be read (https://10.0.0.1:2379/v3/kv/range: connection refused)"),
        ),
    ];
    for (read, moves, uncordons, says) in cases {
        let mut snap = fleet(vec![a.clone(), gone.clone(), idle.clone()], &[]);
        snap.nodes = vec![left_cordoned.clone()];
        snap.etcd = read;
        let index = Machines::index(&snap, &s, NOW);
        let work = Machines::progress(&index, NOW);
        let uncordon = work
            .iter()
            .filter(|w| matches!(w.op, Op::Uncordon { .. }))
            .count();
        assert_eq!(uncordon, usize::from(uncordons), "{says:?}: {work:?}");
        assert_eq!(work.len() - uncordon, moves, "{says:?}: {work:?}");
        let why = Machines::operations(&index)
            .into_iter()
            .find(|o| o.target == Some("a"))
            .and_then(|o| o.why);
        match says {
            Some(text) => assert!(
                why.as_deref()
                    .is_some_and(|w| w.contains(text) && w.contains("etcd gate")),
                "{why:?}"
            ),
            None => assert!(why.is_none(), "{why:?}"),
        }
    }
}

/// The engine's failure-domain slot, as CKE's slot above: an entry a suspend holds where it
/// stands gives it up, so that one machine suspended mid-repair does not stall every other
/// repair (`simulate` found it on the demo fleet), yet it stays its machine's one repair.
#[test]
fn a_suspended_entry_holds_no_failure_domain_slot() {
    let s = settings(5);
    let held = |step_status, suspend: bool| {
        let labels: &[(&str, &str)] = if suspend {
            &[POLICY_ALL, ("autorepair.suspend", "")]
        } else {
            &[POLICY_ALL]
        };
        with_entry(
            machine("a", 1, State::Unhealthy, labels),
            1,
            Progress::queued(NOW - 500).to(Status::Processing, 0, step_status, NOW - 400),
            MachinesLevel::step(2),
        )
    };
    let broken = machine("b", 2, State::Unreachable, &[POLICY_ALL]);
    let limits = Limits {
        max_domains_under_repair: 1,
        ..Limits::default()
    };
    for (name, a, b_starts, a_note) in [
        (
            "suspended while watching",
            held(StepStatus::Watching, true),
            true,
            "is paused",
        ),
        (
            "suspended while waiting",
            held(StepStatus::Waiting, true),
            true,
            "is paused",
        ),
        // The pass that abandons the drain still works on it.
        (
            "suspended while draining",
            held(StepStatus::Draining, true),
            false,
            "is running",
        ),
        (
            "not suspended",
            held(StepStatus::Watching, false),
            false,
            "is running",
        ),
    ] {
        let snap = fleet(vec![a, broken.clone()], &[]);
        let p = plan(&snap, &s, NOW, &limits, 1);
        let started: Vec<String> = starts(&p).into_iter().map(|(t, _)| t).collect();
        assert_eq!(started == ["b"], b_starts, "{name}: {started:?}");
        assert!(
            !started.contains(&"a".to_owned()),
            "{name}: a second repair of a"
        );
        let a_plan = p.targets.iter().find(|t| t.name == "a").unwrap();
        assert!(
            a_plan.notes.iter().any(|n| n.contains(a_note)),
            "{name}: {:?}",
            a_plan.notes
        );
    }
}

#[test]
fn autorepairs_cordons_are_undone_when_no_entry_holds_them() {
    let s = settings(5);
    let m = with_entry(
        machine("a", 1, State::Unhealthy, &[POLICY_ALL]),
        1,
        Progress::queued(NOW).to(Status::Failed, 0, StepStatus::Watching, NOW),
        MachinesLevel::step(2),
    );
    let mut snap = fleet(vec![m.clone()], &[]);
    snap.nodes = vec![
        Node {
            unschedulable: true,
            cordoned_by_us: true,
            ..node_of(&m)
        },
        Node {
            name: "other".into(),
            unschedulable: true,
            ..Node::default()
        },
    ];
    let index = Machines::index(&snap, &s, NOW);
    let got: Vec<String> = Machines::progress(&index, NOW)
        .into_iter()
        .map(|w| w.op.to_string())
        .collect();
    assert_eq!(got, vec![format!("uncordon node {}", m.address().unwrap())]);

    // An entry waiting on a step that drains (the pass that recorded the step's start died
    // before the drain) keeps its own cordon: the drain goes on, nothing uncordons.
    let w = with_entry(
        machine("a", 1, State::Unhealthy, &[POLICY_ALL]),
        1,
        waiting(0),
        MachinesLevel::step(2),
    );
    let mut snap = fleet(vec![w.clone()], &[]);
    snap.nodes = vec![Node {
        unschedulable: true,
        cordoned_by_us: true,
        ..node_of(&w)
    }];
    let index = Machines::index(&snap, &s, NOW);
    let got: Vec<String> = Machines::progress(&index, NOW)
        .into_iter()
        .map(|w| w.op.to_string())
        .collect();
    assert_eq!(
        got,
        vec![format!(
            "cordon node {} and evict its pods",
            w.address().unwrap()
        )]
    );
}

#[test]
fn finished_entries_become_results() {
    let s = settings(5);
    for (status, result) in [
        (Status::Succeeded, ".success."),
        (Status::Failed, ".failure."),
    ] {
        let m = with_entry(
            machine("a", 1, State::Unhealthy, &[POLICY_ALL]),
            4,
            Progress::queued(NOW).to(status, 0, StepStatus::Watching, NOW),
            MachinesLevel::step(2),
        );
        let p = run_plan(&fleet(vec![m], &[]), &s);
        let added: Vec<String> = p.targets[0]
            .actions
            .iter()
            .filter_map(|a| match a {
                Action::AddMarks { marks, .. } => Some(marks.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        assert!(
            added.iter().any(|m| m.contains(result)),
            "{status}: {added:?}"
        );
    }
}

/// A pass killed between recording a step and running its command leaves the step recorded as
/// started: every later pass watches it and never runs that command, whatever the clock says.
#[test]
fn a_step_recorded_as_started_is_never_run_again() {
    let s = settings(5);
    let started = Progress::queued(NOW).to(Status::Processing, 0, StepStatus::Watching, NOW);
    let m = with_entry(
        machine("a", 1, State::Unhealthy, &[POLICY_ALL]),
        1,
        started,
        MachinesLevel::step(2),
    );
    let snap = fleet(vec![m], &[]);
    for later in [NOW, NOW + 59, NOW + 60, NOW + 100_000] {
        let index = Machines::index(&snap, &s, later);
        let ops: Vec<String> = Machines::progress(&index, later)
            .into_iter()
            .map(|w| w.op.to_string())
            .collect();
        assert!(
            !ops.iter().any(|o| o.contains("step 1 repair command")),
            "{later}: {ops:?}"
        );
    }
}

/// `cargo test --lib machines::tests::planning_10000 -- --ignored --nocapture`: the time of one
/// plan over 10,000 machines in the test profile (opt-level 2); `benches/machines.rs` measures
/// the release build.
#[test]
#[ignore]
fn planning_10000_machines() {
    let s = settings(1000);
    let mut machines = Vec::new();
    for n in 0..10_000_usize {
        let state = if n % 97 == 0 {
            State::Unhealthy
        } else {
            State::Healthy
        };
        let mut m = machine(&format!("s{n:05}"), (n / 20) as i64, state, &[]);
        m.info.ipv4 = vec![format!("10.{}.{}.{}", n / 62500, n / 250 % 250, n % 250)];
        if n % 331 == 5 {
            m = with_entry(m, n as u64 + 1, waiting(0), MachinesLevel::step(2));
        }
        machines.push(m);
    }
    let snap = fleet(machines, &["autorepair.policy=step-8"]);
    let limits = Limits {
        max_down_nodes: 1000,
        max_down_nodes_per_group: 20,
        max_domains_under_repair: 100,
        ..Limits::default()
    };
    let mut best = std::time::Duration::MAX;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let p = plan(&snap, &s, NOW, &limits, 1);
        best = best.min(t.elapsed());
        assert_eq!(p.targets.len(), 10_000);
    }
    eprintln!("plan over 10,000 machines: best of 5 {best:?}");
    assert!(best < std::time::Duration::from_millis(100), "{best:?}");
}

#[test]
fn commands_are_shown_without_their_arguments() {
    // CKE repair commands carry BMC passwords: plans, logs and JSON show the program only.
    let c = Command {
        argv: vec![
            "ipmitool".into(),
            "-U".into(),
            "admin".into(),
            "-P".into(),
            "s3cret".into(),
        ],
        timeout: 30,
        retries: 0,
        interval: 0,
    };
    let shown = [
        c.to_string(),
        format!("{c:?}"),
        serde_json::to_string(&c).unwrap(),
    ];
    for s in shown {
        assert!(!s.contains("s3cret") && !s.contains("admin"), "{s}");
        assert!(s.contains("ipmitool (+4 arguments)"), "{s}");
    }
}

#[test]
fn a_once_off_request_never_inherits_an_old_entry() {
    // An entry left from an earlier repair (its result cleared) and a request: a pending
    // repair with no operations, as a pass that died before recording its entry also leaves.
    // Only an unfinished entry no older than the repair is adopted.
    let request = Labels::render_pending(
        MachinesLevel::step(2),
        "6fa459ea-ee8a-3ca4-894e-db77e160355e",
        NOW - 10,
        &[],
    )
    .unwrap();
    let (rn, rv) = labels::split(&request);
    let cases = [
        ("failed long ago", Status::Failed, NOW - 5000, false),
        ("succeeded long ago", Status::Succeeded, NOW - 5000, false),
        (
            "queued before the request",
            Status::Queued,
            NOW - 5000,
            false,
        ),
        ("queued by the dead pass", Status::Queued, NOW - 5, true),
    ];
    let s = settings(5);
    for (name, status, at, adopted) in cases {
        let p = Progress::queued(at).to(status, 0, StepStatus::Waiting, at);
        let mut pairs: Vec<(String, String)> = entry_labels(7, "unhealthy", p).into();
        pairs.push((POLICY_ALL.0.into(), POLICY_ALL.1.into()));
        pairs.push((rn.into(), rv.into()));
        let refs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let m = machine("a", 1, State::Unhealthy, &refs);
        let snap = fleet(vec![m], &[]);
        let index = Machines::index(&snap, &s, NOW);
        let owned = Machines::operations(&index).len() == 1;
        assert_eq!(owned, adopted, "{name}");
    }
}

/// CKE's own table of sabakan-triggered repair cases (`TestRepairer` in its
/// `sabakan/repairer_test.go`), replayed with the shipped limits: an operator moving from CKE
/// gets CKE's entries from CKE's settings (maximum-repair-queue-entries 3,
/// wait-seconds-to-repair-rebooting 300). A reboot entry `rebooting` is a Node cordoned by
/// someone else (autorepair's only sign of a reboot); `draining` is modelled as a schedulable
/// Node, since CKE's trigger ignores it.
#[test]
fn ckes_trigger_cases_create_ckes_entries_with_the_shipped_limits() {
    #[derive(Clone, Copy, PartialEq)]
    enum Reboot {
        Rebooting,
        Draining,
    }
    // serial, address, type, state, seconds in that state (CKE's `machines`).
    let spec: [(&str, Option<&str>, &str, State, f64); 5] = [
        ("0000", None, "", State::Unhealthy, 0.0),
        ("1111", Some("1.1.1.1"), "type1", State::Unreachable, 30.0),
        ("2222", Some("2.2.2.2"), "type2", State::Unhealthy, 30.0),
        ("3333", Some("3.3.3.3"), "type3", State::Unreachable, 3000.0),
        ("4444", Some("4.4.4.4"), "type4", State::Unreachable, 30.0),
    ];
    // CKE's `entries`: (serial, operation, type).
    let entry = |i: usize| -> (&str, &str, &str) {
        let (serial, _, t, state, _) = spec[i];
        (
            serial,
            if state == State::Unhealthy {
                "unhealthy"
            } else {
                "unreachable"
            },
            t,
        )
    };
    struct Case {
        name: &'static str,
        failed: &'static [usize],
        queued: Vec<(&'static str, &'static str, &'static str)>,
        reboots: &'static [(usize, Reboot)],
        in_cluster: bool,
        want: &'static [usize],
    }
    let cases = [
        Case {
            name: "NoFailedMachine",
            failed: &[],
            queued: vec![entry(2)],
            reboots: &[],
            in_cluster: true,
            want: &[],
        },
        Case {
            name: "OneFailedMachine",
            failed: &[1],
            queued: vec![entry(2)],
            reboots: &[],
            in_cluster: true,
            want: &[1],
        },
        Case {
            name: "IgnoreNoIPAddress",
            failed: &[0, 1],
            queued: vec![entry(2)],
            reboots: &[],
            in_cluster: true,
            want: &[1],
        },
        Case {
            name: "IgnoreRecentlyRepaired",
            failed: &[1, 2, 3],
            queued: vec![entry(2)],
            reboots: &[],
            in_cluster: true,
            want: &[1, 3],
        },
        Case {
            name: "IgnoreRecentlyRepairedWithDifferentOperation",
            failed: &[1, 2, 3],
            queued: vec![("2222", "unreachable", "type2")],
            reboots: &[],
            in_cluster: true,
            want: &[1, 3],
        },
        Case {
            name: "IgnoreTooManyFailedMachines",
            failed: &[1, 2, 3],
            queued: vec![entry(2), entry(4)],
            reboots: &[],
            in_cluster: true,
            want: &[],
        },
        Case {
            name: "IgnoreRebootingUnreachableMachine",
            failed: &[1],
            queued: vec![],
            reboots: &[(1, Reboot::Rebooting)],
            in_cluster: true,
            want: &[],
        },
        Case {
            name: "RebootingButUnhealthy",
            failed: &[2],
            queued: vec![],
            reboots: &[(2, Reboot::Rebooting)],
            in_cluster: true,
            want: &[2],
        },
        Case {
            name: "RebootingButStale",
            failed: &[3],
            queued: vec![],
            reboots: &[(3, Reboot::Rebooting)],
            in_cluster: true,
            want: &[3],
        },
        Case {
            name: "QueuedButNotRebooting",
            failed: &[4],
            queued: vec![],
            reboots: &[(4, Reboot::Draining)],
            in_cluster: true,
            want: &[4],
        },
        Case {
            name: "IgnoreOutOfClusterUnreachableMachine",
            failed: &[1],
            queued: vec![],
            reboots: &[(1, Reboot::Rebooting)],
            in_cluster: false,
            want: &[],
        },
        Case {
            name: "OutOfClusterButUnhealthy",
            failed: &[2],
            queued: vec![],
            reboots: &[(2, Reboot::Rebooting)],
            in_cluster: false,
            want: &[2],
        },
        Case {
            name: "OutOfClusterButStale",
            failed: &[3],
            queued: vec![],
            reboots: &[(3, Reboot::Rebooting)],
            in_cluster: false,
            want: &[3],
        },
    ];
    let procedures: String = ["type1", "type2", "type3", "type4"]
        .iter()
        .map(|t| {
            format!(
                "  - machine_types: [{t}]\n    repair_operations:\n      - {{operation: unhealthy, repair_steps: [{{repair_command: [fix]}}], health_check_command: [check]}}\n      - {{operation: unreachable, repair_steps: [{{repair_command: [fix]}}], health_check_command: [check]}}\n"
            )
        })
        .collect();
    let settings = Settings {
        repair: Repair::parse(&format!("repair_procedures:\n{procedures}"), "test").unwrap(),
        constraints: Constraints {
            maximum_repair_queue_entries: 3,
            wait_seconds_to_repair_rebooting: 300,
            ..Constraints::default()
        },
        query: Settings::default_query(),
    };
    // The limits of an operator who set none: the shipped ones, as the machines family
    // composes them with CKE's.
    let limits = super::limits(&crate::engine::Limits::default(), &Default::default());
    assert_eq!(cases.len(), 13);
    for c in &cases {
        let mut machines = Vec::new();
        let mut nodes = Vec::new();
        for (i, &(serial, address, t, state, duration)) in spec.iter().enumerate() {
            let failed = c.failed.contains(&i);
            let mut labels: Vec<(String, String)> = Vec::new();
            if let Some(&(_, operation, t)) = c.queued.iter().find(|q| q.0 == serial) {
                labels.push((
                    labels::ENTRY.into(),
                    Entry::value(10 + i as u64, operation, t).unwrap(),
                ));
                labels.push((labels::PROGRESS.into(), Progress::queued(NOW - 100).value()));
                let pending = Labels::render_pending(
                    MachinesLevel::step(1),
                    "0f8fad5b-d9cb-469f-a165-70867728950e",
                    NOW - 100,
                    &[OpId(10 + i as u64)],
                )
                .unwrap();
                let (a, b) = labels::split(&pending);
                labels.push((a.into(), b.into()));
            }
            let refs: Vec<(&str, &str)> = labels
                .iter()
                .map(|(a, b)| (a.as_str(), b.as_str()))
                .collect();
            let mut m = machine(
                serial,
                0,
                if failed { state } else { State::Healthy },
                &refs,
            );
            m.info.ipv4 = address.map(|a| vec![a.to_owned()]).unwrap_or_default();
            m.info.bmc_type = t.into();
            m.info.duration = duration;
            if let (Some(a), true) = (address, c.in_cluster) {
                let rebooting = c
                    .reboots
                    .iter()
                    .any(|&(r, how)| r == i && how == Reboot::Rebooting);
                nodes.push(Node {
                    name: a.to_owned(),
                    unschedulable: rebooting,
                    ..Node::default()
                });
            }
            machines.push(m);
        }
        let mut snap = fleet(machines, &["autorepair.policy=step-8"]);
        snap.nodes = nodes;
        let p = plan(&snap, &settings, NOW, &limits, 1);
        let mut created: Vec<(String, String, String)> = p
            .targets
            .iter()
            .flat_map(|t| t.actions.iter())
            .filter_map(|a| match a {
                Action::Repair(r) => Some(r.ops.iter()),
                _ => None,
            })
            .flatten()
            .filter_map(|op| match op {
                Op::Enqueue {
                    serial,
                    operation,
                    machine_type,
                    ..
                } => Some((serial.clone(), operation.clone(), machine_type.clone())),
                _ => None,
            })
            .collect();
        created.sort();
        let want: Vec<(String, String, String)> = c
            .want
            .iter()
            .map(|&i| {
                let (s, o, t) = entry(i);
                (s.to_owned(), o.to_owned(), t.to_owned())
            })
            .collect();
        assert_eq!(created, want, "{}", c.name);
    }
}

#[test]
fn the_engines_domain_limits_apply_where_the_config_sets_them() {
    let c = crate::config::Config::from_toml(
        "[limits]\nmax_domains_under_repair = 1\nmax_writes_per_pass = 7\n",
        "x",
        |_, _| {},
    )
    .unwrap();
    let l = super::limits(&c.limits, &c.limits_given);
    assert_eq!(l.max_domains_under_repair, 1, "set: it applies");
    assert_eq!(
        (l.max_down_nodes, l.max_down_nodes_per_group),
        (usize::MAX, usize::MAX),
        "unset: CKE's limits alone"
    );
    assert_eq!(l.max_writes_per_pass, 7);
    // Set to their default values, they still apply: what counts is that they are given.
    let c =
        crate::config::Config::from_toml("[limits]\nmax_down_nodes = 4\n", "x", |_, _| {}).unwrap();
    assert_eq!(super::limits(&c.limits, &c.limits_given).max_down_nodes, 4);
}

/// Rule 11 for an entry under way: a pending label that cannot be read (a level typo) holds
/// the entry where it stands, neither running its next step nor failing it with enoperm; once
/// the label is mended the step runs.
#[test]
fn an_entry_whose_pending_label_cannot_be_read_runs_no_step_and_is_not_failed() {
    let s = settings(5);
    let ready = with_entry(
        machine("a", 1, State::Unhealthy, &[POLICY_ALL]),
        1,
        waiting(0),
        MachinesLevel::step(2),
    );
    let damaged = {
        let pairs: Vec<(String, String)> = ready
            .info
            .labels
            .iter()
            .map(|(k, v)| match v.strip_prefix("pending.step-2.") {
                Some(rest) => (k.clone(), format!("pending.step-99.{rest}")),
                None => (k.clone(), v.clone()),
            })
            .collect();
        assert_ne!(pairs, ready.info.labels, "the pending label was damaged");
        let refs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let mut m = machine("a", 1, State::Unhealthy, &refs);
        m.healthy = ready.healthy;
        m
    };
    let ops = |m: Machine| -> Vec<String> {
        let snap = fleet(vec![m], &[]);
        let index = Machines::index(&snap, &s, NOW);
        Machines::progress(&index, NOW)
            .into_iter()
            .map(|w| w.op.to_string())
            .collect()
    };
    let held = ops(damaged);
    assert!(held.is_empty(), "a damaged pending label: {held:?}");
    let mended = ops(ready);
    assert!(
        mended.iter().any(|o| o.contains("step 1 repair command")),
        "{mended:?}"
    );
}

#[test]
fn an_entry_index_is_a_whole_number_from_one_and_a_refusal_names_the_text() {
    let max = super::MAX_INDEX.to_string();
    let cases: [(&str, Option<u64>); 8] = [
        ("1", Some(1)),
        ("42", Some(42)),
        (&max, Some(super::MAX_INDEX)),
        ("0", None),
        ("01", None),
        ("", None),
        ("-1", None),
        ("9223372036854775808", None),
    ];
    for (text, expected) in cases {
        match (text.parse::<super::OpId>(), expected) {
            (Ok(id), Some(n)) => assert_eq!(id.0, n, "{text:?}"),
            (Err(e), None) => {
                let said = e.to_string();
                assert!(said.contains(&format!("{text:?}")), "{said}");
                assert!(said.contains("repair entry index"), "{said}");
            }
            (got, _) => panic!("{text:?}: {got:?}"),
        }
    }
}

/// A machine that leaves service (retiring, then retired) leaves the down set as one that comes
/// back healthy does, at the time sabakan gives for its state: a storm it ends is followed by
/// the cool-down. Counted as nothing, the storm would seem never to have happened.
#[test]
fn a_retirement_ends_a_storm_as_a_return_does() {
    let limits = Limits {
        max_domains_under_repair: 10,
        max_down_nodes: 2,
        storm_cooldown: Some(std::time::Duration::from_secs(1800)),
        ..Limits::default()
    };
    // (the third machine's state, seconds since it changed, whether the two down are held)
    let cases = [
        (State::Healthy, 60.0, true),
        (State::Retiring, 60.0, true),
        (State::Retired, 60.0, true),
        (State::Retiring, 10_000.0, false),
        (State::Updating, 60.0, false),
    ];
    for (state, ago, held) in cases {
        let mut third = machine("c", 1, state, &[POLICY_ALL]);
        third.info.duration = ago;
        let snap = fleet(
            vec![
                machine("a", 1, State::Unhealthy, &[POLICY_ALL]),
                machine("b", 1, State::Unhealthy, &[POLICY_ALL]),
                third,
            ],
            &[],
        );
        let p = plan(&snap, &settings(10), NOW, &limits, 1);
        let notes: Vec<String> = p
            .targets
            .iter()
            .flat_map(|t| t.notes.iter().map(|n| n.to_string()))
            .collect();
        assert_eq!(
            starts(&p).is_empty(),
            held,
            "{state:?} {ago}s ago: {notes:#?}"
        );
    }
}
