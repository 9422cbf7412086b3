//! The machines world and its rules: the world plays sabakan, the commands and the Nodes as the
//! family expects, the real planner keeps every rule over many seeds and fleets, and planners
//! broken in the ways the family's rules forbid are caught, each by its rule.

use super::*;
use crate::engine::limits::Limits;
use crate::engine::object::ObjectRef;
use crate::engine::sim::{
    Event, Faults, Planner, Schedule, ScheduleOf, SimConfig, Stats, explore, run, schedule,
};
use crate::engine::{Action, Plan};

fn cfg() -> SimConfig {
    config()
}

fn plan_with(
    snap: &Snapshot,
    settings: &Settings,
    limits: &Limits,
    now: i64,
    seed: u64,
) -> Plan<Machines> {
    crate::machines::plan(snap, settings, now, limits, seed)
}

fn real(snap: &Snapshot, now: i64, seed: u64) -> Plan<Machines> {
    planner(snap, now, seed)
}

#[test]
fn a_rendered_fleet_reads_back_the_same() {
    // A fleet read at one clock and played from another (`simulate --now`) keeps how long
    // each machine has been in its state.
    for (seed, start) in [
        (1, START),
        (2, START),
        (3, START - 300 * 86_400),
        (4, START + 7),
    ] {
        let snap = generate(30, seed);
        assert_eq!(
            snap.machines.len(),
            30 + 4,
            "30 machines and a boot server per rack"
        );
        let world = MachinesWorld::new(&snap, &None, start);
        let again = world.fleet();
        assert_eq!(
            format!("{:?}", again.machines),
            format!("{:?}", snap.machines),
            "seed {seed}"
        );
        assert_eq!(again.nodes, snap.nodes, "seed {seed}");
        assert_eq!(
            format!("{:?}", again.scopes),
            format!("{:?}", snap.scopes),
            "seed {seed}"
        );
    }
}

/// The methods the machines file has of its own reach it through the world's backend, those the
/// world adds nothing to as well: each row makes one call through the world and tells whether
/// the file answered it.
#[test]
fn every_method_of_the_file_is_reached_through_the_world() {
    type Reached = fn(&mut Intercepted<Document, Side>) -> bool;
    let machine = ObjectRef::new(kind::MACHINE, "r0-m0");
    let mark = "autorepair.policy=step-1".to_owned();
    let cases: [(&str, Reached); 2] = [
        ("guard_writes", |b| {
            let refuse: crate::engine::WriteGuard =
                Arc::new(|| Err(BackendError::Halted("stop".into())));
            b.guard_writes(refuse);
            let o = ObjectRef::new(kind::MACHINE, "r0-m0");
            let refused = b.add_marks(&o, &["autorepair.policy=step-1".into()], "r");
            matches!(refused, Err(BackendError::Halted(_)))
        }),
        ("writes_made", |b| {
            let o = ObjectRef::new(kind::MACHINE, "r0-m0");
            b.add_marks(&o, &["autorepair.policy=step-1".into()], "r")
                .unwrap();
            b.writes_made() == Some(1)
        }),
    ];
    for (method, reached) in cases {
        let mut world = MachinesWorld::new(&small(&["IPMI-2.0"]), &None, START);
        assert!(reached(world.backend()), "{method} did not reach the file");
    }
    // The world's own part still works: what the file now holds shows in its fleet.
    let mut world = MachinesWorld::new(&small(&["IPMI-2.0"]), &None, START);
    world
        .backend()
        .add_marks(&machine, std::slice::from_ref(&mark), "r")
        .unwrap();
    let m = world.fleet().machines.iter().find(|m| m.serial == "r0-m0");
    assert!(m.is_some_and(|m| m.marks.contains(&mark)), "{m:?}");
}

/// A small fleet: one rack with its boot server (the cluster allows every step) and machines
/// `r0-m0`… of the given types, each a Node of the cluster.
fn small(types: &[&str]) -> Snapshot {
    let mut machines = vec![json!({
        "spec": {"serial": "boot-0", "labels": {"autorepair.cluster.policy": "step-8"}, "rack": 0,
            "index-in-rack": 1, "role": "boot", "ipv4": ["10.69.0.3"], "bmc": {"type": "IPMI-2.0"}},
        "status": {"state": "healthy", "timestamp": rfc3339(START - 86400)},
    })];
    let mut nodes = Vec::new();
    for (k, t) in types.iter().enumerate() {
        let address = format!("10.69.0.{}", 10 + k);
        machines.push(json!({
            "spec": {"serial": format!("r0-m{k}"), "labels": {}, "rack": 0, "index-in-rack": 2 + k,
                "role": "cs", "ipv4": [address], "bmc": {"type": t}},
            "status": {"state": "healthy", "timestamp": rfc3339(START - 86400)},
        }));
        nodes.push(json!({
            "metadata": {"name": address, "labels": {}, "annotations": {}},
            "spec": {},
            "status": {"addresses": [{"type": "InternalIP", "address": address}]},
        }));
    }
    let mut file = Document::in_memory(
        Value::Array(machines),
        settings().repair,
        Some(NodesFile::in_memory(json!({"items": nodes}))),
    )
    .unwrap();
    file.check_health = false;
    file.now = Some(START);
    let mut snap = file.snapshot().unwrap();
    for n in &mut snap.nodes {
        n.pods = PODS;
    }
    snap
}

fn faults(passes: Vec<Vec<Fault>>) -> ScheduleOf<MachinesWorld> {
    Schedule {
        passes: passes
            .into_iter()
            .map(|p| p.into_iter().map(Event::Fault).collect())
            .collect(),
    }
}

fn breaks(serial: &str, unreachable: bool, cured_by: Option<usize>) -> Fault {
    Fault::Breaks {
        serial: serial.into(),
        unreachable,
        cured_by,
    }
}

fn stats_of(fleet: &Snapshot, sched: &ScheduleOf<MachinesWorld>, quiet: u32) -> Stats {
    let cfg = SimConfig {
        quiet_passes: quiet,
        ..cfg()
    };
    let out = run::<MachinesWorld>(fleet, sched, &cfg, &real);
    assert!(
        out.violation.is_none(),
        "{:?}\n{:#?}",
        out.violation,
        out.log
    );
    out.stats
}

#[test]
fn scripted_machines_are_repaired_as_the_procedure_says() {
    struct Case {
        what: &'static str,
        faults: Vec<Vec<Fault>>,
        want: &'static [(&'static str, usize)],
    }
    let m = "r0-m0";
    let cases = [
        Case {
            what: "cured by the second step, after a drain for the first",
            faults: vec![vec![breaks(m, false, Some(1))]],
            want: &[
                ("entries created", 1),
                ("drains started", 2),
                ("repair commands succeeded", 2),
                ("machines cured by a step", 1),
                ("repairs succeeded", 1),
            ],
        },
        Case {
            what: "no step cures it: the entry fails past the last step",
            faults: vec![vec![breaks(m, false, None)]],
            want: &[
                ("entries created", 1),
                ("repair commands succeeded", 2),
                ("machines cured by a step", 0),
                ("repairs failed", 1),
            ],
        },
        Case {
            what: "a command that hangs fails the entry at once",
            faults: vec![vec![
                breaks(m, true, Some(0)),
                Fault::Command(m.into(), Cmd::Hangs),
            ]],
            want: &[("repair commands hung", 1), ("repairs failed", 1)],
        },
        Case {
            what: "a flaky command succeeds on its retry (the first unreachable step has one)",
            faults: vec![vec![
                breaks(m, true, Some(0)),
                Fault::Command(m.into(), Cmd::Flaky),
            ]],
            // The success command has no retry: it fails, and so does the entry.
            want: &[
                ("repair commands succeeded", 1),
                ("success commands failed", 1),
                ("repairs failed", 1),
            ],
        },
        Case {
            what: "a machine that heals before its first step succeeds without any",
            faults: vec![
                vec![breaks(m, false, None)],
                vec![Fault::Recovers(m.into())],
            ],
            want: &[("entries created", 1), ("repairs succeeded", 1)],
        },
        Case {
            what: "the watcher dies while the command runs: it never runs again",
            // Created in pass 0, drained in pass 1, its command runs in pass 2.
            faults: vec![
                vec![breaks(m, false, None)],
                vec![],
                vec![Fault::DiesMidCommand],
            ],
            want: &[
                ("watcher deaths mid-command", 1),
                ("repair commands succeeded", 2),
                ("repairs failed", 1),
            ],
        },
        Case {
            what: "a PodDisruptionBudget holds the drain until it times out and backs off",
            faults: vec![vec![
                breaks(m, false, Some(0)),
                Fault::PdbRefuses(m.into(), 7),
            ]],
            want: &[
                ("evictions refused by a PodDisruptionBudget", 4),
                ("drains backed off", 1),
                ("repairs succeeded", 1),
            ],
        },
        Case {
            what: "a health check that prints garbage never says healthy: every step runs",
            faults: vec![vec![
                breaks(m, false, Some(0)),
                Fault::Check(m.into(), Check::Garbage),
            ]],
            want: &[("repair commands succeeded", 2), ("repairs failed", 1)],
        },
    ];
    for c in cases {
        let fleet = small(&["IPMI-2.0"]);
        let s = stats_of(&fleet, &faults(c.faults), 30);
        eprintln!("{}: {:?}", c.what, s.world);
        for (what, n) in c.want {
            assert_eq!(s.world(what), *n, "{}: {what}: {s:#?}", c.what);
        }
    }
}

/// Fault passes per scenario.
const PASSES: u32 = 30;

#[test]
fn the_real_planner_keeps_every_rule_over_many_seeds_and_fleets() {
    let mut total = Stats::default();
    for (fleet_seed, targets) in [(1, 16), (2, 24), (3, 32)] {
        let fleet = generate(targets, fleet_seed);
        let summary = explore::<MachinesWorld>(
            &fleet,
            PASSES,
            fleet_seed * 1000,
            16,
            &cfg(),
            &Faults::default(),
            &real,
        );
        if let Some(f) = summary.findings.first() {
            panic!("fleet {fleet_seed}: {f}");
        }
        total.add(&summary.stats);
    }
    eprintln!("{total:#?}");
    let at_least = [
        ("entries created", 100),
        ("repair commands succeeded", 150),
        ("repair commands failed", 5),
        ("repair commands hung", 3),
        ("machines cured by a step", 50),
        ("drains started", 100),
        ("drains backed off", 10),
        ("evictions refused by a PodDisruptionBudget", 8),
        ("watcher deaths mid-command", 15),
        ("repairs succeeded", 40),
        ("repairs failed", 40),
        ("success commands run", 10),
        ("nodes uncordoned", 80),
        ("finished entries deleted", 80),
        ("queue disabled", 20),
        ("reboot-tool cordons", 30),
        ("machines retired", 5),
    ];
    for (what, n) in at_least {
        assert!(total.world(what) >= n, "{what}: {total:#?}");
    }
    assert!(total.kills > 40, "{total:#?}");
}

/// A planner broken on purpose, given the limits it is told to plan with.
type BrokenPlanner = fn(&Limits, &Snapshot, i64, u64) -> Plan<Machines>;

fn with_settings(
    limits: &Limits,
    snap: &Snapshot,
    now: i64,
    seed: u64,
    edit: impl FnOnce(&mut Settings),
) -> Plan<Machines> {
    let mut s = settings();
    edit(&mut s);
    plan_with(snap, &s, limits, now, seed)
}

/// Takes every entry at once.
fn no_concurrency_limit(limits: &Limits, snap: &Snapshot, now: i64, seed: u64) -> Plan<Machines> {
    with_settings(limits, snap, now, seed, |s| {
        s.repair.max_concurrent_repairs = 100
    })
}

/// Creates entries whatever the cluster limiter says.
fn no_cluster_limiter(limits: &Limits, snap: &Snapshot, now: i64, seed: u64) -> Plan<Machines> {
    with_settings(limits, snap, now, seed, |s| {
        s.constraints.maximum_repair_queue_entries = 100
    })
}

/// Sees no control plane, so never keeps them one at a time.
fn blind_to_control_planes(
    limits: &Limits,
    snap: &Snapshot,
    now: i64,
    seed: u64,
) -> Plan<Machines> {
    let mut blind = snap.clone();
    blind.nodes.iter_mut().for_each(|n| n.control_plane = false);
    plan_with(&blind, &settings(), limits, now, seed)
}

/// Takes a cordon for a finished drain: believes every Node empty.
fn believes_nodes_empty(limits: &Limits, snap: &Snapshot, now: i64, seed: u64) -> Plan<Machines> {
    let mut blind = snap.clone();
    blind.nodes.iter_mut().for_each(|n| n.pods = 0);
    plan_with(&blind, &settings(), limits, now, seed)
}

/// Forgets that a step's command was started: a watching step looks waiting again.
fn forgets_started_steps(limits: &Limits, snap: &Snapshot, now: i64, seed: u64) -> Plan<Machines> {
    let mut blind = snap.clone();
    for m in &mut blind.machines {
        if let Ok(Some(e)) = &mut m.entry
            && e.progress.step_status == StepStatus::Watching
            && e.progress.status == Status::Processing
        {
            e.progress.step_status = StepStatus::Waiting;
        }
    }
    plan_with(&blind, &settings(), limits, now, seed)
}

fn strip(marks: &mut Vec<String>, drop: impl Fn(&Mark<'_, MachinesLevel>) -> bool) {
    marks.retain(|m| !Labels::parse(m).is_ok_and(|p| drop(&p)));
}

/// Plans as if no suspend existed.
fn ignores_suspends(limits: &Limits, snap: &Snapshot, now: i64, seed: u64) -> Plan<Machines> {
    let mut blind = snap.clone();
    let suspend = |m: &Mark<'_, MachinesLevel>| matches!(m, Mark::Suspend { .. });
    blind
        .machines
        .iter_mut()
        .for_each(|m| strip(&mut m.marks, suspend));
    blind
        .scopes
        .iter_mut()
        .for_each(|s| strip(&mut s.marks, suspend));
    plan_with(&blind, &settings(), limits, now, seed)
}

/// Plans as if the queue were enabled.
fn ignores_the_disabled_queue(
    limits: &Limits,
    snap: &Snapshot,
    now: i64,
    seed: u64,
) -> Plan<Machines> {
    let mut blind = snap.clone();
    blind.queue = crate::machines::snapshot::Switch::On;
    plan_with(&blind, &settings(), limits, now, seed)
}

/// Caps no step: every repair and policy reads as `step-8` once the entry exists.
fn caps_no_step(limits: &Limits, snap: &Snapshot, now: i64, seed: u64) -> Plan<Machines> {
    let mut blind = snap.clone();
    let all = MachinesLevel::ALL_STEPS;
    for m in &mut blind.machines {
        if m.entry().is_none() {
            continue;
        }
        m.marks = m
            .marks
            .iter()
            .map(|t| match Labels::parse(t) {
                Ok(Mark::Pending(p)) => {
                    let ops: Vec<OpId> = p.ops.iter::<OpId>().collect();
                    Labels::render_pending(all, p.id, p.since, &ops).unwrap_or_else(|_| t.clone())
                }
                Ok(Mark::Policy(_)) => Labels::render_policy(all),
                _ => t.clone(),
            })
            .collect();
    }
    for s in &mut blind.scopes {
        strip(&mut s.marks, |m| matches!(m, Mark::Policy(_)));
        s.marks.push(Labels::render_policy(all));
    }
    plan_with(&blind, &settings(), limits, now, seed)
}

/// Takes every cordoned Node for its own, so uncordons a reboot tool's.
fn claims_every_cordon(limits: &Limits, snap: &Snapshot, now: i64, seed: u64) -> Plan<Machines> {
    let mut blind = snap.clone();
    blind
        .nodes
        .iter_mut()
        .filter(|n| n.unschedulable)
        .for_each(|n| n.cordoned_by_us = true);
    plan_with(&blind, &settings(), limits, now, seed)
}

/// Never uncordons.
fn never_uncordons(limits: &Limits, snap: &Snapshot, now: i64, seed: u64) -> Plan<Machines> {
    let mut p = plan_with(snap, &settings(), limits, now, seed);
    let keep = |a: &Action<Machines>| {
        !matches!(
            a,
            Action::Advance {
                op: Op::Uncordon { .. },
                ..
            }
        )
    };
    p.scope_actions.retain(keep);
    p.targets.iter_mut().for_each(|t| t.actions.retain(keep));
    p
}

/// Never records a healthy machine's entry as succeeded.
fn never_finishes(limits: &Limits, snap: &Snapshot, now: i64, seed: u64) -> Plan<Machines> {
    let mut p = plan_with(snap, &settings(), limits, now, seed);
    let keep = |a: &Action<Machines>| !matches!(a, Action::Advance { op: Op::Record { progress, .. } | Op::Run { after_ok: Some(progress), .. }, .. } if progress.status == Status::Succeeded);
    p.targets.iter_mut().for_each(|t| t.actions.retain(keep));
    p
}

fn busy() -> Faults<Rates> {
    Faults {
        world: Rates {
            breaks: 0.6,
            reboot_tool: 0.2,
            queue_disabled: 0.1,
            delete_finished: 0.4,
            dies_mid_command: 0.3,
            ..Rates::default()
        },
        ..Faults::default()
    }
}

#[test]
fn broken_planners_are_caught_each_by_its_rule() {
    // A small fleet where much happens to every machine.
    let fleet = generate(12, 5);
    let faults = busy();
    let cases: [(&str, BrokenPlanner, &[&str]); 11] = [
        (
            "no concurrency limit",
            no_concurrency_limit,
            &["more machines repaired at once than max_concurrent_repairs"],
        ),
        (
            "no cluster limiter",
            no_cluster_limiter,
            &["more repair entries than maximum-repair-queue-entries"],
        ),
        (
            "blind to control planes",
            blind_to_control_planes,
            &["two control planes repaired at once"],
        ),
        (
            "believes Nodes empty",
            believes_nodes_empty,
            &["a repair command on an undrained machine"],
        ),
        (
            "forgets started steps",
            forgets_started_steps,
            &["a repair command run twice"],
        ),
        (
            "ignores suspends",
            ignores_suspends,
            &[
                "a drain or command on a suspended machine",
                "repair on a suspended target",
            ],
        ),
        (
            "ignores the disabled queue",
            ignores_the_disabled_queue,
            &["a drain or command while the repair queue is disabled"],
        ),
        (
            "caps no step",
            caps_no_step,
            &[
                "a step above its repair's level",
                "a step above the policy's level",
            ],
        ),
        (
            "claims every cordon",
            claims_every_cordon,
            &["someone else's cordon removed"],
        ),
        (
            "never uncordons",
            never_uncordons,
            &["a cordon left behind"],
        ),
        (
            "never finishes",
            never_finishes,
            &[
                "liveness: an allowed repair never happened",
                "liveness: a repair entry never finished",
            ],
        ),
    ];
    let cfg = cfg();
    // Where every Node is a control plane, any two machines repaired at once are two.
    let mut all_cps = fleet.clone();
    all_cps
        .nodes
        .iter_mut()
        .for_each(|n| n.control_plane = true);
    for (what, broken, rules) in cases {
        let fleet = if what == "blind to control planes" {
            &all_cps
        } else {
            &fleet
        };
        let planner = |s: &Snapshot, now, seed| broken(&cfg.limits, s, now, seed);
        let summary = explore::<MachinesWorld>(fleet, 20, 1, 40, &cfg, &faults, &planner);
        let f = summary
            .findings
            .first()
            .unwrap_or_else(|| panic!("{what}: not caught: {:?}", summary.stats));
        assert!(rules.contains(&f.violation.rule.as_str()), "{what}: {f}");
        eprintln!(
            "{what}: caught by {:?}: {}",
            f.violation.rule, f.violation.detail
        );
        // The seed alone reproduces the rule.
        let full = schedule::<MachinesWorld>(fleet, 20, f.seed, &faults);
        let again = run::<MachinesWorld>(fleet, &full, &cfg, &planner).violation;
        assert_eq!(
            again.map(|v| v.rule),
            Some(f.violation.rule.clone()),
            "{what}: {f}"
        );
    }
}

#[test]
fn the_real_planner_is_not_caught_where_the_broken_ones_are() {
    let fleet = generate(12, 5);
    let planner: Planner<'_, MachinesWorld> = &real;
    let summary = explore::<MachinesWorld>(&fleet, 20, 1, 40, &cfg(), &busy(), planner);
    if let Some(f) = summary.findings.first() {
        panic!("{f}");
    }
}

#[test]
fn the_machine_types_a_configuration_cannot_repair_are_named() {
    let config = |yaml: &str| Settings {
        repair: Repair::parse(yaml, "test.yml").unwrap(),
        ..settings()
    };
    let both = r#"
repair_procedures:
  - machine_types: ["IPMI-2.0", "qemu"]
    repair_operations:
      - operation: unhealthy
        health_check_command: ["h"]
        repair_steps: [{repair_command: ["r"]}]
      - operation: unreachable
        health_check_command: ["h"]
        repair_steps: [{repair_command: ["r"]}]
"#;
    let unhealthy_only = r#"
repair_procedures:
  - machine_types: ["qemu"]
    repair_operations:
      - operation: unhealthy
        health_check_command: ["h"]
        repair_steps: [{repair_command: ["r"]}]
"#;
    // (configuration, machine types of the fleet, notes); the boot server is IPMI-2.0 and
    // never broken, so never counted.
    let cases: [(&str, &[&str], &[&str]); 3] = [
        (both, &["qemu", "IPMI-2.0"], &[]),
        (
            unhealthy_only,
            &["qemu", "qemu", "iDRAC-9"],
            &[
                r#"machine type "iDRAC-9" (1 machine) has no procedure for unhealthy or unreachable"#,
                r#"machine type "qemu" (2 machines) has no procedure for unreachable"#,
            ],
        ),
        (unhealthy_only, &[], &[]),
    ];
    for (yaml, types, want) in cases {
        let notes = unrepairable(&small(types), &config(yaml));
        assert_eq!(notes.len(), want.len(), "{types:?}: {notes:?}");
        for (n, w) in notes.iter().zip(want) {
            assert!(n.starts_with(w), "{types:?}: {n}");
        }
    }
}
