use super::*;
use crate::engine::sim::START;
use crate::ganeti::file::parse_fleet;
use crate::ganeti::plan_with;
use crate::ganeti::tags::{self, Tag};

fn demo() -> Snapshot {
    parse_fleet(include_str!("../../../fixtures/demo.json")).unwrap()
}

#[test]
fn the_real_planner_keeps_every_rule_over_many_seeded_scenarios() {
    let fleet = demo();
    let cfg = SimConfig {
        quiet_passes: 60,
        ..SimConfig::new(START)
    };
    let summary = explore(&fleet, 25, 1, 200, &cfg, &Faults::default(), plan_with);
    if let Some(f) = summary.findings.first() {
        panic!("{f}");
    }
    // The scenarios must really exercise the watcher.
    let s = &summary.stats;
    assert!(
        s.jobs_submitted > 1000
            && s.kills > 100
            && s.repairs_succeeded > 500
            && s.repairs_failed > 20,
        "{s:?}"
    );
}

/// A planner that forgot suspends: it plans as if no suspend tag existed.
fn ignores_suspend(
    snap: &Snapshot,
    settings: &Settings,
    now: i64,
    limits: &Limits,
    seed: u64,
) -> Plan {
    let mut blind = snap.clone();
    let strip = |tags: &mut Vec<String>| {
        tags.retain(|t| !matches!(tags::parse(t), Ok(Tag::Suspend { .. })))
    };
    strip(&mut blind.cluster.tags);
    blind.groups.iter_mut().for_each(|g| strip(&mut g.tags));
    blind.instances.iter_mut().for_each(|i| strip(&mut i.tags));
    plan_with(&blind, settings, now, limits, seed)
}

/// A planner that resubmits a running repair's jobs every pass.
fn forgets_jobs(
    snap: &Snapshot,
    settings: &Settings,
    now: i64,
    limits: &Limits,
    seed: u64,
) -> Plan {
    let mut blind = snap.clone();
    blind.jobs.clear();
    plan_with(&blind, settings, now, limits, seed)
}

#[test]
fn broken_planners_are_caught_with_a_minimal_history() {
    let fleet = demo();
    // Every failure domain at once: the broken planners get to act as much as they can.
    let mut cfg = SimConfig::new(START);
    cfg.limits.max_domains_under_repair = 8;
    let cases: [(Planner, &str); 2] = [
        (ignores_suspend, "repair on a suspended target"),
        (forgets_jobs, "job submitted twice"),
    ];
    for (planner, rule) in cases {
        let summary = explore(&fleet, 80, 7, 50, &cfg, &Faults::default(), planner);
        let f = summary
            .findings
            .first()
            .unwrap_or_else(|| panic!("{rule}: not caught"));
        assert_eq!(f.violation.rule, rule, "{f}");
        // Minimal: replaying just the history reproduces it, and it is short.
        // Short: a handful of node events (the mass-failure limits need the demo's down nodes
        // to come back before a kill can land inside a repair) and the kill.
        assert!(f.history.len() <= 8, "{f}");
        let text = f.to_string();
        assert!(text.contains(&format!("seed {}", f.seed)), "{text}");
    }
}

#[test]
fn a_rack_failure_halts_the_watcher_and_it_says_so() {
    let fleet = demo();
    let cfg = SimConfig {
        limits: Limits {
            max_down_nodes_per_group: 1,
            max_down_nodes: 3,
            ..SimConfig::new(START).limits
        },
        quiet_passes: 3,
        ..SimConfig::new(START)
    };
    let sched = Schedule {
        passes: vec![vec![Event::Fault(Fault::RackDown("ams-b".into()))]],
    };
    let out = run(&fleet, &sched, &cfg, plan_with);
    assert!(out.violation.is_none(), "{:?}", out.violation);
    assert_eq!(out.stats.jobs_submitted, 0);
    assert_eq!(out.stats.halted_passes, 4);
}

#[test]
fn generated_fleets_with_contradictions_keep_every_rule() {
    // Instances on missing nodes, duplicate names, unknown templates, a thousand tags on one
    // object: the watcher must stay safe, and the oracle must not ask it to repair what it
    // rightly leaves to a person (an ambiguous name, for one).
    let mut spec = crate::ganeti::generate::Spec::new(150, 12);
    spec.broken_node_share = 0.05;
    spec.contradictions = true;
    let fleet = crate::ganeti::generate::generate(&spec);
    let cfg = SimConfig {
        limits: Limits {
            max_domains_under_repair: 5,
            max_down_nodes_per_group: 100,
            max_down_nodes: 100,
            max_repair_age: std::time::Duration::from_secs(3 * 3600),
            ..Limits::default()
        },
        settings: Settings::shipped(),
        quiet_passes: 60,
        start: crate::ganeti::generate::BASE_EPOCH,
        replicas: Default::default(),
    };
    let summary = explore(&fleet, 25, 1, 60, &cfg, &Faults::default(), plan_with);
    if let Some(f) = summary.findings.first() {
        panic!("{f}");
    }
    let s = &summary.stats;
    // The contradictions put unreadable tags on groups and the cluster too, which hold what
    // they govern (rule 11): fewer repairs run than the fleet's size alone would give.
    assert!(s.jobs_submitted > 500 && s.kills > 50, "{s:?}");
}

#[test]
fn the_worlds_own_generated_fleets_keep_every_rule_with_the_shipped_limits() {
    // The fleet every family's world generates for the engine's tests: here with history
    // (pending repairs and their jobs, requests, results) and the config file's defaults.
    for seed in [3, 4] {
        let fleet = <FleetFile as World>::generate(200, seed);
        let cfg = SimConfig {
            limits: Limits::default(),
            settings: Settings::shipped(),
            quiet_passes: 60,
            start: crate::ganeti::generate::BASE_EPOCH,
            replicas: Default::default(),
        };
        let summary = explore(&fleet, 25, seed, 15, &cfg, &Faults::default(), plan_with);
        if let Some(f) = summary.findings.first() {
            panic!("{f}");
        }
        let s = &summary.stats;
        assert!(
            s.jobs_submitted > 400 && s.kills > 15 && s.repairs_succeeded > 400,
            "{s:?}"
        );
    }
}

/// Seed 424661: legacy-a4's second fix-storage repair waits for resources from late
/// in the quiet phase; liveness must wait until it could have aged out (max_repair_age after it
/// started) instead of calling it "never happened". Run with the limits the seed was found
/// with (one repair at a time, no mass-failure halt), as `autorepair simulate` runs it.
#[test]
fn seed_424661_a_late_repair_waiting_for_resources_is_not_a_liveness_failure() {
    // The seed was found while the demo's unreadable tags on legacy-a4 were ignored; they hold
    // it now (rule 11), so they are taken off to replay the same story.
    let mut fleet = demo();
    for i in fleet
        .instances
        .iter_mut()
        .filter(|i| i.name.starts_with("legacy-a4"))
    {
        i.tags.retain(|t| crate::ganeti::tags::parse(t).is_ok());
    }
    let limits = Limits {
        max_pending: Some(1),
        max_down_nodes: 100,
        max_down_nodes_per_group: 100,
        ..Limits::default()
    };
    let cfg = SimConfig {
        quiet_passes: (limits.max_repair_age.as_secs() as i64 / PASS_SECONDS) as u32 + 20,
        limits,
        settings: Settings::shipped(),
        ..SimConfig::new(START)
    };
    let sched = schedule(&fleet, 40, 424661, &Faults::default());
    let out = run(&fleet, &sched, &cfg, plan_with);
    assert!(out.violation.is_none(), "{:?}", out.violation);
    // The scenario still exercises the late retry the false alarm came from.
    let late_retries = out.log[300..]
        .iter()
        .flatten()
        .filter(|l| l.contains("submits") && l.contains("legacy-a4") && l.contains("replace-disks"))
        .count();
    assert!(
        late_retries > 0,
        "the seed no longer reaches legacy-a4's late retry"
    );
}

/// Replicas whose check before a write is switched off: a watcher paused in mid-repair resumes
/// after the new master's watcher carried the repair on, and submits its job again. The oracle
/// must report the double start; with the check, the same scenario keeps every rule.
#[test]
fn the_oracle_catches_a_replica_that_ignores_the_master_role() {
    use crate::ganeti::testkit::Fleet;
    // One instance on an offline node under a failover policy: its repair is a pending tag,
    // then the job, then the tag that records it.
    let fleet = Fleet::new()
        .autorepair(["failover"])
        .group("g1")
        .node("n1", "g1")
        .offline()
        .node("n2", "g1")
        .node("n3", "g1")
        .instance("a")
        .primary("n1")
        .secondary("n2")
        .build();
    let replicas = |unguarded| SimConfig {
        quiet_passes: 3,
        replicas: sim::Replicas {
            count: 3,
            unguarded,
        },
        ..SimConfig::new(START)
    };
    let mut double_starts = 0;
    for after in 0..4 {
        let sched = Schedule {
            passes: vec![vec![Event::Pause(after)]],
        };
        let guarded = run(&fleet, &sched, &replicas(false), plan_with);
        assert!(
            guarded.violation.is_none(),
            "pause after {after}: {:?}",
            guarded.violation
        );
        let broken = run(&fleet, &sched, &replicas(true), plan_with);
        if let Some(v) = broken.violation {
            let rules = [
                "job submitted twice",
                "two repairs at once on one target",
                sim::NOT_LEADING,
            ];
            assert!(rules.contains(&v.rule.as_str()), "pause after {after}: {v}");
            double_starts += usize::from(v.rule != sim::NOT_LEADING);
        }
    }
    // Paused before the job (after 0 or 1 writes), the stale watcher submits it again.
    assert!(
        double_starts >= 2,
        "{double_starts} scenarios gave the double start"
    );
}

/// The same over many seeded scenarios: without the check, the oracle finds a violation.
#[test]
fn unguarded_replicas_break_the_rules_within_a_few_seeds() {
    let cfg = SimConfig {
        quiet_passes: 20,
        replicas: sim::Replicas {
            count: 3,
            unguarded: true,
        },
        ..SimConfig::new(START)
    };
    let faults = Faults::default().with_replicas();
    let summary = explore(&demo(), 25, 1, 40, &cfg, &faults, plan_with);
    let f = summary.findings.first().expect("a finding");
    assert!(
        f.to_string().contains("paused")
            || f.to_string().contains("hands over")
            || f.to_string().contains("cut off"),
        "{f}"
    );
}
