//! The simulator and its oracle on the engine's test family ([`crate::fixture`]): the real
//! planner keeps every rule over many seeds and fleets, and planners broken in the ways the
//! rules forbid are caught.

use super::fixture::{FixtureFault, FixtureWorld};
use super::*;
use crate::family::Health;
use crate::fixture::{Fixture, FixtureLevel, FixtureMarks, FixtureRoom};
use crate::marks::{Codec, Governs};
use crate::plan::{Action, plan};
use std::time::Duration;

fn cfg() -> SimConfig {
    SimConfig {
        limits: Limits {
            max_down_nodes_per_group: 2,
            max_down_nodes: 3,
            max_domains_under_repair: 2,
            retry_interval: Duration::from_secs(15 * 60),
            max_repair_age: Duration::from_secs(2 * 3600),
            ..Limits::default()
        },
        start: START,
        quiet_passes: 60,
        replicas: Default::default(),
    }
}

fn real(room: &FixtureRoom, now: i64, seed: u64) -> Plan<Fixture> {
    plan::<Fixture>(room, &(), now, &cfg().limits, seed)
}

fn explore_fixture(
    fleet: &FixtureRoom,
    seed: u64,
    scenarios: usize,
    planner: Planner<'_, FixtureWorld>,
) -> Summary {
    explore::<FixtureWorld>(
        fleet,
        40,
        seed,
        scenarios,
        &cfg(),
        &Faults::default(),
        planner,
    )
}

#[test]
fn the_real_planner_keeps_every_rule_over_many_seeds_and_fleets() {
    let mut total = Stats::default();
    for fleet_seed in 1..=4 {
        let fleet = FixtureWorld::generate(40, fleet_seed);
        let summary = explore_fixture(&fleet, fleet_seed * 1000, 40, &real);
        if let Some(f) = summary.findings.first() {
            panic!("fleet {fleet_seed}: {f}");
        }
        total.add(&summary.stats);
    }
    // The scenarios must really exercise the watcher: repairs that succeed and fail, kills,
    // and mass failures that halt it.
    assert!(
        total.jobs_submitted > 1500
            && total.kills > 250
            && total.repairs_succeeded > 1500
            && total.repairs_failed > 30
            && total.halted_passes > 100,
        "{total:?}"
    );
}

fn strip(room: &mut FixtureRoom, drop: impl Fn(&Mark<'_, FixtureLevel>) -> bool) {
    let keep =
        |marks: &mut Vec<String>| marks.retain(|m| !FixtureMarks::parse(m).is_ok_and(|p| drop(&p)));
    keep(&mut room.marks);
    room.shelves.iter_mut().for_each(|s| keep(&mut s.marks));
    room.boxes.iter_mut().for_each(|b| keep(&mut b.marks));
}

/// A planner broken on purpose: the limits it is told to plan with, the fleet, the clock and
/// the seed.
type BrokenPlanner = fn(&Limits, &FixtureRoom, i64, u64) -> Plan<Fixture>;

/// Plans as if no suspend mark existed.
fn ignores_suspend(limits: &Limits, room: &FixtureRoom, now: i64, seed: u64) -> Plan<Fixture> {
    let mut blind = room.clone();
    strip(&mut blind, |m| matches!(m, Mark::Suspend { .. }));
    plan::<Fixture>(&blind, &(), now, limits, seed)
}

/// Reads every policy as allowing the most destructive level.
fn exceeds_policy(limits: &Limits, room: &FixtureRoom, now: i64, seed: u64) -> Plan<Fixture> {
    let mut blind = room.clone();
    let widen = |marks: &mut Vec<String>| {
        for m in marks.iter_mut() {
            if matches!(FixtureMarks::parse(m), Ok(Mark::Policy(_))) {
                *m = FixtureMarks::render_policy(FixtureLevel::Replace);
            }
        }
    };
    widen(&mut blind.marks);
    blind.shelves.iter_mut().for_each(|s| widen(&mut s.marks));
    blind.boxes.iter_mut().for_each(|b| widen(&mut b.marks));
    plan::<Fixture>(&blind, &(), now, limits, seed)
}

/// Does not see the steps under way, so it starts them again.
fn forgets_steps(limits: &Limits, room: &FixtureRoom, now: i64, seed: u64) -> Plan<Fixture> {
    let mut blind = room.clone();
    blind.ops.clear();
    plan::<Fixture>(&blind, &(), now, limits, seed)
}

/// Sees no down shelf: starts repairs through a mass failure.
fn ignores_mass_failure(limits: &Limits, room: &FixtureRoom, now: i64, seed: u64) -> Plan<Fixture> {
    let blind = Limits {
        max_down_nodes: usize::MAX,
        max_down_nodes_per_group: usize::MAX,
        ..limits.clone()
    };
    plan::<Fixture>(room, &(), now, &blind, seed)
}

/// Tidies up what is not its own to remove.
fn removes(
    limits: &Limits,
    room: &FixtureRoom,
    now: i64,
    seed: u64,
    what: fn(&Mark<'_, FixtureLevel>) -> bool,
) -> Plan<Fixture> {
    let mut p = plan::<Fixture>(room, &(), now, limits, seed);
    for (t, b) in p.targets.iter_mut().zip(&room.boxes) {
        let marks: Vec<String> = b
            .marks
            .iter()
            .filter(|m| FixtureMarks::parse(m).is_ok_and(|p| what(&p)))
            .cloned()
            .collect();
        if !marks.is_empty() {
            t.actions.push(Action::RemoveMarks {
                object: t.object(),
                marks,
                reason: "tidy".into(),
            });
        }
    }
    p
}

fn removes_foreign(limits: &Limits, room: &FixtureRoom, now: i64, seed: u64) -> Plan<Fixture> {
    removes(limits, room, now, seed, |m| matches!(m, Mark::Foreign))
}

fn removes_failures(limits: &Limits, room: &FixtureRoom, now: i64, seed: u64) -> Plan<Fixture> {
    removes(
        limits,
        room,
        now,
        seed,
        |m| matches!(m, Mark::Result(r) if r.result == RepairResult::Failure),
    )
}

/// Keeps its books but never starts a repair.
fn never_repairs(limits: &Limits, room: &FixtureRoom, now: i64, seed: u64) -> Plan<Fixture> {
    let mut p = plan::<Fixture>(room, &(), now, limits, seed);
    for t in &mut p.targets {
        t.actions.retain(|a| !matches!(a, Action::Repair(_)));
    }
    p
}

/// Starts repairs in every failure domain at once.
fn ignores_domain_slots(limits: &Limits, room: &FixtureRoom, now: i64, seed: u64) -> Plan<Fixture> {
    let blind = Limits {
        max_domains_under_repair: usize::MAX,
        ..limits.clone()
    };
    plan::<Fixture>(room, &(), now, &blind, seed)
}

/// Retries at once and without end, whatever the limits say.
fn retries_without_bound(
    limits: &Limits,
    room: &FixtureRoom,
    now: i64,
    seed: u64,
) -> Plan<Fixture> {
    let blind = Limits {
        retries: u32::MAX,
        retry_backoff: Duration::ZERO,
        ..limits.clone()
    };
    plan::<Fixture>(room, &(), now, &blind, seed)
}

/// Ignores the rate window.
fn ignores_rate(limits: &Limits, room: &FixtureRoom, now: i64, seed: u64) -> Plan<Fixture> {
    let blind = Limits {
        max_repair_rate: None,
        ..limits.clone()
    };
    plan::<Fixture>(room, &(), now, &blind, seed)
}

/// Rule 13's rate window: over many seeds the real planner never takes more failure domains
/// newly under repair in a window than allowed, and a planner that ignores the window is
/// caught.
#[test]
fn with_a_rate_window_the_real_planner_keeps_it() {
    let rated = SimConfig {
        limits: Limits {
            max_domains_under_repair: 10,
            max_repair_rate: Some(crate::limits::Rate::parse("2/1h").unwrap()),
            ..cfg().limits
        },
        ..cfg()
    };
    let fleet = FixtureWorld::generate(40, 7);
    let real = |room: &FixtureRoom, now, seed| plan::<Fixture>(room, &(), now, &rated.limits, seed);
    let summary = explore::<FixtureWorld>(&fleet, 40, 1, 50, &rated, &Faults::default(), &real);
    if let Some(f) = summary.findings.first() {
        panic!("{f}");
    }
    assert!(summary.stats.jobs_submitted > 50, "{:?}", summary.stats);
    let broken = |room: &FixtureRoom, now, seed| ignores_rate(&rated.limits, room, now, seed);
    let summary = explore::<FixtureWorld>(&fleet, 40, 1, 50, &rated, &Faults::default(), &broken);
    let f = summary
        .findings
        .first()
        .unwrap_or_else(|| panic!("not caught: {:?}", summary.stats));
    assert_eq!(
        f.violation.rule, "more failure domains newly under repair than max_repair_rate",
        "{f}"
    );
}

/// Rule 13: with retries, a failed repair is tried again after its back-off and no more often
/// than configured, over many seeds, and a planner that retries without bound is caught.
#[test]
fn with_retries_the_real_planner_retries_within_its_bounds() {
    let retrying = SimConfig {
        limits: Limits {
            max_domains_under_repair: 10,
            retries: 1,
            retry_backoff: Duration::from_secs(2 * PASS_SECONDS as u64),
            ..cfg().limits
        },
        ..cfg()
    };
    let fleet = FixtureWorld::generate(40, 7);
    let real =
        |room: &FixtureRoom, now, seed| plan::<Fixture>(room, &(), now, &retrying.limits, seed);
    let summary = explore::<FixtureWorld>(&fleet, 40, 1, 50, &retrying, &Faults::default(), &real);
    if let Some(f) = summary.findings.first() {
        panic!("{f}");
    }
    assert!(summary.stats.repairs_failed > 5, "{:?}", summary.stats);
    let broken =
        |room: &FixtureRoom, now, seed| retries_without_bound(&retrying.limits, room, now, seed);
    let summary =
        explore::<FixtureWorld>(&fleet, 40, 1, 50, &retrying, &Faults::default(), &broken);
    let f = summary
        .findings
        .first()
        .unwrap_or_else(|| panic!("not caught: {:?}", summary.stats));
    assert!(
        [
            "repair on a target parked by a failure",
            "repair within retry_backoff of a failure"
        ]
        .contains(&f.violation.rule.as_str()),
        "{f}"
    );
}

/// Rule 13's storm cool-down: over many seeds the real planner starts nothing new in a scope
/// until the cool-down after its storm has passed, read from when the shelves came back; a
/// planner blind to it is caught.
#[test]
fn after_a_storm_the_real_planner_waits_out_the_cooldown_and_a_blind_one_is_caught() {
    let cooling = SimConfig {
        limits: Limits {
            max_domains_under_repair: 10,
            storm_cooldown: Some(Duration::from_secs(6 * PASS_SECONDS as u64)),
            ..cfg().limits
        },
        ..cfg()
    };
    let fleet = FixtureWorld::generate(40, 7);
    let real =
        |room: &FixtureRoom, now, seed| plan::<Fixture>(room, &(), now, &cooling.limits, seed);
    let summary = explore::<FixtureWorld>(&fleet, 40, 1, 50, &cooling, &Faults::default(), &real);
    if let Some(f) = summary.findings.first() {
        panic!("{f}");
    }
    assert!(summary.stats.cooldown_passes > 20, "{:?}", summary.stats);
    let blind_limits = Limits {
        storm_cooldown: None,
        ..cooling.limits.clone()
    };
    let blind =
        |room: &FixtureRoom, now, seed| plan::<Fixture>(room, &(), now, &blind_limits, seed);
    let summary = explore::<FixtureWorld>(&fleet, 40, 1, 50, &cooling, &Faults::default(), &blind);
    let f = summary
        .findings
        .first()
        .unwrap_or_else(|| panic!("not caught: {:?}", summary.stats));
    assert_eq!(
        f.violation.rule, "repair started in a storm's cool-down",
        "{f}"
    );
}

/// Rule 13 on a slow burn: one more shelf fails every three passes (four an hour), each back
/// two periods later, one in three flapping. Under a `2/1h` window, retries that escalate and a
/// storm cool-down the real planner keeps every rule over many seeds and repairs everything
/// once room comes back (the liveness check); a planner blind to the window is caught.
#[test]
fn on_a_slow_burn_the_real_planner_keeps_the_limits_over_time_and_a_blind_one_is_caught() {
    let burning = SimConfig {
        limits: Limits {
            max_domains_under_repair: 10,
            retries: 1,
            retry_backoff: Duration::from_secs(2 * PASS_SECONDS as u64),
            escalate: true,
            max_repair_rate: Some(crate::limits::Rate::parse("2/1h").unwrap()),
            storm_cooldown: Some(Duration::from_secs(6 * PASS_SECONDS as u64)),
            ..cfg().limits
        },
        ..cfg()
    };
    let fleet = FixtureWorld::generate(40, 7);
    let real =
        |room: &FixtureRoom, now, seed| plan::<Fixture>(room, &(), now, &burning.limits, seed);
    let blind_limits = Limits {
        max_repair_rate: None,
        ..burning.limits.clone()
    };
    let blind =
        |room: &FixtureRoom, now, seed| plan::<Fixture>(room, &(), now, &blind_limits, seed);
    let mut total = Stats::default();
    let mut caught = 0;
    for seed in 0..20 {
        let burn = slow_burn::<FixtureWorld>(&fleet, 60, 3, seed, &Faults::default());
        let downs = burn
            .passes
            .iter()
            .flatten()
            .filter(|e| matches!(e, Event::Fault(FixtureFault::ShelfDown(_))))
            .count();
        assert!(downs >= 10, "seed {seed}: only {downs} shelves failed");
        let out = run::<FixtureWorld>(&fleet, &burn, &burning, &real);
        assert_eq!(out.violation, None, "seed {seed}: {:?}", out.log);
        total.add(&out.stats);
        let blind_out = run::<FixtureWorld>(&fleet, &burn, &burning, &blind);
        if let Some(v) = blind_out.violation {
            assert_eq!(
                v.rule, "more failure domains newly under repair than max_repair_rate",
                "seed {seed}"
            );
            caught += 1;
        }
    }
    assert!(total.rate_held_passes > 50, "{total:?}");
    assert!(
        total.repairs_failed > 0 && total.escalations > 0,
        "{total:?}"
    );
    assert!(
        caught > 10,
        "the blind planner was caught on {caught} of 20 burns"
    );
}

#[test]
fn broken_planners_are_caught_with_a_minimal_history_that_reproduces_it() {
    let fleet = FixtureWorld::generate(40, 7);
    // Room for every domain at once, so that the other broken planners act as much as they
    // can and are caught by their own rule.
    let roomy = SimConfig {
        limits: Limits {
            max_domains_under_repair: 10,
            ..cfg().limits
        },
        ..cfg()
    };
    let tight = cfg();
    let cases: [(BrokenPlanner, &SimConfig, &[&str]); 8] = [
        (ignores_suspend, &roomy, &["repair on a suspended target"]),
        (exceeds_policy, &roomy, &["repair above the allowed level"]),
        (forgets_steps, &roomy, &["step submitted twice"]),
        (
            ignores_mass_failure,
            &roomy,
            &[
                "started while the fleet-wide limit was exceeded",
                "mark written during a mass failure",
            ],
        ),
        (removes_foreign, &roomy, &["foreign mark touched"]),
        (
            removes_failures,
            &roomy,
            &["failure result removed by the watcher"],
        ),
        (
            never_repairs,
            &roomy,
            &["liveness: an allowed repair never happened"],
        ),
        (
            ignores_domain_slots,
            &tight,
            &["more failure domains under repair than max_domains_under_repair"],
        ),
    ];
    for (broken, cfg, rules) in cases {
        let planner = |room: &FixtureRoom, now, seed| broken(&cfg.limits, room, now, seed);
        let summary = explore::<FixtureWorld>(&fleet, 40, 1, 50, cfg, &Faults::default(), &planner);
        let f = summary
            .findings
            .first()
            .unwrap_or_else(|| panic!("{rules:?}: not caught: {:?}", summary.stats));
        assert!(rules.contains(&f.violation.rule.as_str()), "{rules:?}: {f}");
        assert!(f.to_string().contains(&format!("seed {}", f.seed)), "{f}");
        // The minimal schedule reproduces the same rule on its own, and is short.
        let full = schedule::<FixtureWorld>(&fleet, 40, f.seed, &Faults::default());
        let small = minimize::<FixtureWorld>(&fleet, &full, cfg, &planner, &f.violation.rule);
        let again = run::<FixtureWorld>(&fleet, &small, cfg, &planner).violation;
        assert_eq!(again.as_ref(), Some(&f.violation), "{f}");
        let events: usize = small.passes.iter().map(Vec::len).sum();
        assert_eq!(events, f.history.len(), "{f}");
        assert!(events <= 6, "{f}");
    }
}

#[test]
fn a_mass_failure_halts_the_watcher_and_it_says_so() {
    let fleet = FixtureWorld::generate(40, 3);
    let sched: ScheduleOf<FixtureWorld> = Schedule {
        passes: vec![
            ["s0", "s1", "s2", "s3"]
                .iter()
                .map(|s| Event::Fault(FixtureFault::ShelfDown((*s).into())))
                .collect(),
        ],
    };
    let cfg = SimConfig {
        quiet_passes: 3,
        ..cfg()
    };
    let out = run::<FixtureWorld>(&fleet, &sched, &cfg, &real);
    assert!(out.violation.is_none(), "{:?}", out.violation);
    assert_eq!(out.stats.jobs_submitted, 0);
    assert_eq!(out.stats.halted_passes, 4);
}

#[test]
fn admin_edits_follow_the_ladder_and_refuse_what_the_verbs_refuse() {
    let mut room = FixtureWorld::generate(8, 1);
    room.shelves[0].marks = vec!["restart".into(), "replace".into(), "x-keep".into()];
    let failure = "result:nudge:0f8fad5b-d9cb-469f-a165-70867728950e:5:failure:7";
    room.boxes[0].marks = vec![failure.into()];
    let shelf = ObjectRef::new("shelf", "s0");
    let b = ObjectRef::new("box", "b000");
    let now = 1000;
    let mut world = FixtureWorld::new(&room, &(), START);
    let marks = |w: &FixtureWorld, o: &ObjectRef| -> Vec<String> {
        match o.kind.as_ref() {
            "shelf" => w.fleet().shelves[0].marks.clone(),
            _ => w.fleet().boxes[0].marks.clone(),
        }
    };
    let edit = |w: &mut FixtureWorld, o: &ObjectRef, e: AdminEdit<FixtureLevel>| {
        admin::apply(w, o, &e, now);
        marks(w, o)
    };
    assert_eq!(
        edit(
            &mut world,
            &shelf,
            AdminEdit::Allow(Some(FixtureLevel::Nudge))
        ),
        ["x-keep", "nudge"]
    );
    assert_eq!(
        edit(
            &mut world,
            &shelf,
            AdminEdit::Suspend {
                for_passes: Some(2)
            }
        ),
        [
            "x-keep",
            "nudge",
            format!("suspend:{}", now + 2 * PASS_SECONDS).as_str()
        ]
    );
    assert_eq!(
        edit(&mut world, &shelf, AdminEdit::Resume),
        ["x-keep", "nudge"]
    );
    assert_eq!(edit(&mut world, &shelf, AdminEdit::Allow(None)), ["x-keep"]);
    // Requests and clears are for targets only.
    assert_eq!(edit(&mut world, &shelf, AdminEdit::Clear), ["x-keep"]);
    assert_eq!(
        edit(&mut world, &shelf, AdminEdit::Request(FixtureLevel::Nudge)),
        ["x-keep"]
    );
    assert_eq!(edit(&mut world, &b, AdminEdit::Clear), Vec::<String>::new());
    let requested = edit(&mut world, &b, AdminEdit::Request(FixtureLevel::Restart));
    assert!(
        matches!(
            FixtureMarks::parse(&requested[0]),
            Ok(Mark::Pending(p)) if p.repair == FixtureLevel::Restart && p.since == now && p.ops.is_empty()
        ),
        "{requested:?}"
    );
    // A second request waits for the first.
    assert_eq!(
        edit(&mut world, &b, AdminEdit::Request(FixtureLevel::Nudge)),
        requested
    );
}

#[test]
fn the_fixture_world_repairs_what_it_is_asked_to() {
    // A shelf goes down under a room that allows replacing: its boxes are moved and mended.
    let mut room = FixtureWorld::generate(16, 2);
    room.marks = vec!["replace".into()];
    room.shelves.iter_mut().for_each(|s| s.marks.clear());
    room.boxes.iter_mut().for_each(|b| {
        b.marks.clear();
        b.needs = None;
    });
    let sched: ScheduleOf<FixtureWorld> = Schedule {
        passes: vec![vec![Event::Fault(FixtureFault::ShelfDown("s0".into()))]],
    };
    let cfg = SimConfig {
        quiet_passes: 10,
        ..cfg()
    };
    let out = run::<FixtureWorld>(&room, &sched, &cfg, &real);
    assert!(out.violation.is_none(), "{:?}", out.violation);
    assert_eq!(out.stats.repairs_succeeded, 8, "{:?}", out.log);
    let mut world = FixtureWorld::new(&room, &(), START);
    world.apply(&FixtureFault::ShelfDown("s0".into()), START);
    let broken = world
        .fleet()
        .boxes
        .iter()
        .filter(|b| world.health(world.fleet(), b, START) != Health::Healthy)
        .count();
    assert_eq!(broken, 8);
}

/// Plans as if no unreadable mark of ours existed (as a reader that drops a parse error would).
fn ignores_unreadable(limits: &Limits, room: &FixtureRoom, now: i64, seed: u64) -> Plan<Fixture> {
    let mut blind = room.clone();
    let keep = |marks: &mut Vec<String>| marks.retain(|m| FixtureMarks::parse(m).is_ok());
    keep(&mut blind.marks);
    blind.shelves.iter_mut().for_each(|s| keep(&mut s.marks));
    blind.boxes.iter_mut().for_each(|b| keep(&mut b.marks));
    plan::<Fixture>(&blind, &(), now, limits, seed)
}

#[test]
fn the_world_draws_unreadable_marks_and_a_planner_blind_to_them_is_caught() {
    let room = FixtureWorld::generate(8, 1);
    let mut world = FixtureWorld::new(&room, &(), START);
    let target = ObjectRef::new("box", "b000");
    let scope = ObjectRef::new("shelf", "s0");
    for kind in [Damage::Suspend, Damage::Pending, Damage::Policy] {
        admin::apply(&mut world, &target, &AdminEdit::Damage(kind), 1000);
        admin::apply(&mut world, &scope, &AdminEdit::Damage(kind), 1000);
    }
    let unreadable = |marks: &[String]| -> Vec<Governs> {
        marks
            .iter()
            .filter_map(|m| FixtureMarks::parse(m).err().map(|e| e.governs))
            .collect()
    };
    assert_eq!(
        unreadable(&world.fleet().boxes[0].marks),
        [
            Governs::Suspend { all: false },
            Governs::Pending,
            Governs::Policy
        ],
        "{:?}",
        world.fleet().boxes[0].marks
    );
    // A pending mark belongs on a target only.
    assert_eq!(
        unreadable(&world.fleet().shelves[0].marks),
        [Governs::Suspend { all: false }, Governs::Policy],
        "{:?}",
        world.fleet().shelves[0].marks
    );
    // The default faults draw them, and the oracle holds the planner to rule 11.
    let fleet = FixtureWorld::generate(40, 7);
    let faults = Faults {
        damage: 0.5,
        ..Faults::default()
    };
    let c = cfg();
    let blind = |room: &FixtureRoom, now, seed| ignores_unreadable(&c.limits, room, now, seed);
    let summary = explore::<FixtureWorld>(&fleet, 40, 1, 50, &c, &faults, &blind);
    let f = summary
        .findings
        .first()
        .unwrap_or_else(|| panic!("not caught: {:?}", summary.stats));
    assert_eq!(
        f.violation.rule, "repair on a target held by an unreadable mark",
        "{f}"
    );
    let summary = explore::<FixtureWorld>(&fleet, 40, 1, 50, &c, &faults, &|room, now, seed| {
        real(room, now, seed)
    });
    assert!(
        summary.findings.is_empty(),
        "{:?}",
        summary.findings.first()
    );
}
