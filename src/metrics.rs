//! Prometheus textfile-collector output. Counters live in the file itself: each pass reads the
//! previous totals back and adds its own, since a cron-run watcher has no memory of its own.

use crate::engine::exec::Report;
use crate::engine::marks::{Codec, Mark};
use crate::engine::{Action, Plan, RepairResult, State, TargetPlan};
use crate::plug::FamilyFace;
use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

const STARTED: &str = "autorepair_repairs_started_total";
const ENDED: &str = "autorepair_repairs_ended_total";
const TOOK: &str = "autorepair_repair_duration_seconds";
const HELD_PASSES: &str = "autorepair_mass_failure_passes";
const LEADER: &str = "autorepair_leader";

/// The value of a sample line `name{labels} value` in a previous file, 0 if absent.
fn previous(text: &str, sample: &str) -> f64 {
    text.lines()
        .filter_map(|l| l.strip_prefix(sample)?.strip_prefix(' '))
        .find_map(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

/// The textfile after a pass: every series carries `family="…"`, and the counters go on from
/// `prev`, the file the previous pass wrote.
pub fn render<F: FamilyFace>(
    prev: &str,
    plan: &Plan<F>,
    done: &Report<F>,
    took: Duration,
    now: i64,
) -> String {
    let prev = without_family(prev, F::FAMILY);
    with_family(&samples(&prev, plan, done, took, now), F::FAMILY)
}

/// `family="NAME"` first in every sample's labels.
fn with_family(text: &str, family: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.lines().count() * (family.len() + 12));
    for line in text.lines() {
        if line.starts_with('#') || line.is_empty() {
            out.push_str(line);
        } else if let Some((name, rest)) = line.split_once('{') {
            let _ = write!(out, "{name}{{family=\"{family}\",{rest}");
        } else if let Some((name, value)) = line.split_once(' ') {
            let _ = write!(out, "{name}{{family=\"{family}\"}} {value}");
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The inverse of [`with_family`], so the counters are read back by their unlabelled samples
/// (and a file written before the label existed still counts on).
fn without_family(text: &str, family: &str) -> String {
    text.replace(&format!("{{family=\"{family}\"}}"), "")
        .replace(&format!("{{family=\"{family}\","), "{")
}

fn samples<F: FamilyFace>(
    prev: &str,
    plan: &Plan<F>,
    done: &Report<F>,
    took: Duration,
    now: i64,
) -> String {
    // Only what the pass carried out counts: an action that failed, or that a halted pass never
    // reached, is planned again by the next pass and counted then.
    let carried = carried_out(plan, done);
    let started = carried
        .iter()
        .filter(|(_, a)| matches!(a, Action::Repair(r) if r.write_first.is_some()))
        .count();
    let mut ended = [0usize; 3];
    // How long the repairs that ended in this pass took, from their pending mark's start: the
    // alert "pending far longer than usual" compares against the running average.
    let (mut took_sum, mut took_count) = (0i64, 0u64);
    let mut ended_ids = Vec::new();
    for (target, a) in &carried {
        let Action::AddMarks { marks, .. } = a else {
            continue;
        };
        for m in marks {
            let Ok(Mark::Result(r)) = F::Marks::parse(m) else {
                continue;
            };
            ended[r.result as usize] += 1;
            if let Some(p) = target.and_then(|t| t.pending.iter().find(|p| p.id == r.id)) {
                took_sum += (r.at - p.since).max(0);
                took_count += 1;
                ended_ids.push(r.id);
            }
        }
    }
    let oldest_pending = plan
        .targets
        .iter()
        .flat_map(|t| &t.pending)
        .filter(|p| !ended_ids.contains(&p.id.as_str()))
        .map(|p| plan.now - p.since)
        .max()
        .unwrap_or(0)
        .max(0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP autorepair_targets Targets per state, as the last pass read them."
    );
    let _ = writeln!(out, "# TYPE autorepair_targets gauge");
    for s in State::ALL {
        let n = plan.counts.get(&s).copied().unwrap_or(0);
        let _ = writeln!(out, "autorepair_targets{{state=\"{s}\"}} {n}");
    }
    let _ = writeln!(out, "# HELP {STARTED} Repairs started.");
    let _ = writeln!(out, "# TYPE {STARTED} counter");
    let _ = writeln!(
        out,
        "{STARTED} {}",
        previous(prev, STARTED) + started as f64
    );
    let _ = writeln!(out, "# HELP {ENDED} Repairs ended, by result.");
    let _ = writeln!(out, "# TYPE {ENDED} counter");
    for result in [
        RepairResult::Success,
        RepairResult::Failure,
        RepairResult::Enoperm,
    ] {
        let sample = format!("{ENDED}{{result=\"{result}\"}}");
        let total = previous(prev, &sample) + ended[result as usize] as f64;
        let _ = writeln!(out, "{sample} {total}");
    }
    gauge(
        &mut out,
        "autorepair_action_errors",
        "Actions that failed in the last pass.",
        done.errors.len(),
    );
    let fleet = &plan.fleet;
    gauge(
        &mut out,
        "autorepair_halted",
        "1 when a mass-failure limit held the whole fleet in the last pass.",
        u8::from(fleet.halted.is_some()),
    );
    let _ = writeln!(
        out,
        "# HELP autorepair_mass_failure Scopes a mass-failure limit held in the last pass (nothing written or started there)."
    );
    let _ = writeln!(out, "# TYPE autorepair_mass_failure gauge");
    for h in fleet.halted.iter().chain(&fleet.halted_groups) {
        let _ = writeln!(
            out,
            "autorepair_mass_failure{{scope=\"{}\",limit=\"{}\"}} 1",
            label_value(h.scope.as_ref()),
            label_value(h.limit)
        );
    }
    let _ = writeln!(
        out,
        "# HELP autorepair_storm_cooldown_until_seconds Scopes in a storm's cool-down in the last pass (storm_cooldown): when new repairs may start there again, in Unix seconds."
    );
    let _ = writeln!(out, "# TYPE autorepair_storm_cooldown_until_seconds gauge");
    for c in &fleet.cooldowns {
        let _ = writeln!(
            out,
            "autorepair_storm_cooldown_until_seconds{{scope=\"{}\",limit=\"{}\"}} {}",
            label_value(c.scope.as_ref()),
            label_value(c.limit),
            c.until
        );
    }
    // Only where a rate limit is set: a fleet without one has no window to show.
    if !fleet.rates.is_empty() {
        type Value = fn(&crate::engine::plan::RateReport) -> usize;
        let per_scope: [(&str, &str, Value); 2] = [
            (
                "autorepair_repair_rate_room",
                "Failure domains that may still be newly taken under repair in the rate window, after the last pass's starts (0: held until room comes back).",
                |r| r.max.saturating_sub(r.used),
            ),
            (
                "autorepair_repair_rate_used",
                "Failure domains newly taken under repair in the rate window, after the last pass's starts.",
                |r| r.used,
            ),
        ];
        for (name, help, value) in per_scope {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} gauge");
            for r in &fleet.rates {
                let _ = writeln!(
                    out,
                    "{name}{{scope=\"{}\",limit=\"{}\"}} {}",
                    label_value(r.scope.as_ref()),
                    label_value(r.limit),
                    value(r)
                );
            }
        }
    }
    // Consecutive passes, read back like the counters: "held for more than a couple of passes"
    // must not depend on how often cron runs the watcher.
    let held = fleet.halted.is_some() || !fleet.halted_groups.is_empty();
    gauge(
        &mut out,
        HELD_PASSES,
        "Passes in a row in which a mass-failure limit held repairs back somewhere (0: not now).",
        if held {
            previous(prev, HELD_PASSES) + 1.0
        } else {
            0.0
        },
    );
    // One HELP per name whatever the family: the textfile collector drops a series whose HELP
    // differs from another file's on the same host.
    gauge(
        &mut out,
        "autorepair_down_nodes",
        "Failure domains down in the last pass (Ganeti: nodes offline or drained; metal3: Machines unhealthy or under remediation; machines: machines non-healthy in sabakan or under repair).",
        fleet.down_nodes.len(),
    );
    gauge(
        &mut out,
        "autorepair_domains_under_repair",
        "Failure domains with repairs under way after the last pass.",
        fleet.domains_under_repair.len(),
    );
    gauge(
        &mut out,
        "autorepair_deferred_targets",
        "Targets whose changes waited for the next pass: the write budget was spent.",
        fleet.deferred,
    );
    gauge(
        &mut out,
        "autorepair_writes",
        "Writes (mark changes and operations) the last pass planned.",
        fleet.writes,
    );
    gauge(
        &mut out,
        "autorepair_pass_duration_seconds",
        "How long the last pass took.",
        format!("{:.3}", took.as_secs_f64()),
    );
    let _ = writeln!(
        out,
        "# HELP {TOOK} How long repairs took, from start to result, counted when they end."
    );
    let _ = writeln!(out, "# TYPE {TOOK} summary");
    let _ = writeln!(
        out,
        "{TOOK}_sum {}",
        previous(prev, &format!("{TOOK}_sum")) + took_sum as f64
    );
    let _ = writeln!(
        out,
        "{TOOK}_count {}",
        previous(prev, &format!("{TOOK}_count")) + took_count as f64
    );
    gauge(
        &mut out,
        "autorepair_oldest_pending_repair_age_seconds",
        "Age of the oldest repair under way after the last pass (0: none).",
        oldest_pending,
    );
    gauge(
        &mut out,
        "autorepair_last_pass_timestamp_seconds",
        "When the last pass began, whatever its actions did.",
        now,
    );
    let last_ok = "autorepair_last_successful_pass_timestamp_seconds";
    // Before any pass without failed actions, the first pass this file recorded: "failing for
    // hours" must count from when passes began, not from 1970.
    let first_seen = if prev.contains(last_ok) {
        previous(prev, last_ok)
    } else {
        now as f64
    };
    let when = if done.errors.is_empty() {
        now as f64
    } else {
        first_seen
    };
    gauge(
        &mut out,
        last_ok,
        "When the last pass without failed actions began (before any: the first pass this file recorded).",
        when,
    );
    leader::<F>(&mut out, true);
    if let Some(own) = F::METRICS {
        out.push_str(&(own.series)(plan));
    }
    out
}

/// 1 on the replica whose passes act (the only one, without an election), 0 on one that
/// stands by: under the engine's name and the family's users' own.
fn leader<F: FamilyFace>(out: &mut String, leads: bool) {
    for name in std::iter::once(LEADER).chain(F::METRICS.and_then(|m| m.leader)) {
        gauge(
            out,
            name,
            "1 when this replica leads (its passes act).",
            u8::from(leads),
        );
    }
}

/// The textfile of a replica that stands by (another holds the Lease, or this host is not the
/// Ganeti master): the leader gauges at 0 and the counters carried on, but none of the fleet's
/// gauges. A replica that led before would otherwise go on exporting what it last read, as
/// if two replicas saw the fleet, and a collector summing them would count every entry twice.
pub fn standing_by<F: FamilyFace>(prev: &str) -> String {
    let prev = without_family(prev, F::FAMILY);
    let counters: Vec<&str> = prev
        .lines()
        .filter_map(|l| {
            let typed = l.strip_prefix("# TYPE ")?;
            typed
                .strip_suffix(" counter")
                .or_else(|| typed.strip_suffix(" summary"))
        })
        .collect();
    let mut out = String::new();
    for line in prev.lines() {
        let name = line
            .strip_prefix("# HELP ")
            .or_else(|| line.strip_prefix("# TYPE "))
            .unwrap_or(line);
        let name = name.split([' ', '{']).next().unwrap_or_default();
        let series = |c: &&str| {
            name.strip_prefix(*c)
                .is_some_and(|rest| ["", "_sum", "_count"].contains(&rest))
        };
        if counters.iter().any(series) {
            out.push_str(line);
            out.push('\n');
        }
    }
    leader::<F>(&mut out, false);
    with_family(&out, F::FAMILY)
}

/// The actions the executor carried out, in its order (scopes first, then each target's):
/// a target whose action failed contributes none, and a halted pass only its first
/// `actions_done`.
fn carried_out<'p, F: FamilyFace>(
    plan: &'p Plan<F>,
    done: &Report<F>,
) -> Vec<(Option<&'p TargetPlan<F>>, &'p Action<F>)> {
    let failed: Vec<&str> = done.errors.iter().map(|(n, _)| n.as_str()).collect();
    let stopped = done.halted.is_some() || done.crashed;
    let mut budget = done.actions_done;
    let groups = std::iter::once((None, "scopes", &plan.scope_actions)).chain(
        plan.targets
            .iter()
            .map(|t| (Some(t), t.name.as_str(), &t.actions)),
    );
    let mut out = Vec::new();
    for (target, name, actions) in groups {
        if failed.contains(&name) {
            continue;
        }
        for a in actions {
            if stopped {
                if budget == 0 {
                    return out;
                }
                budget -= 1;
            }
            out.push((target, a));
        }
    }
    out
}

/// A label value in the text format: a `"`, `\` or newline in a scope's or a machine's name
/// would otherwise make the whole file unreadable to the collector.
pub fn label_value(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn gauge(out: &mut String, name: &str, help: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} gauge");
    let _ = writeln!(out, "{name} {value}");
}

/// The textfile collector may read at any moment, and runs as its own user (Debian's
/// `prometheus`): a whole file, readable by all (the default temporary file is owner-only).
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    crate::files::write_atomically_mode(path, text.as_bytes(), 0o644)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Limits;
    use crate::ganeti::file::parse_fleet;

    #[test]
    fn counters_accumulate_across_passes_and_gauges_do_not() {
        let snap = parse_fleet(include_str!("../fixtures/demo.json")).unwrap();
        // One failure domain at a time: node-b4's three repairs start together.
        let plan = crate::ganeti::plan(&snap, 1_800_000_000, &Limits::default(), 1);
        let done = Report::default();
        let first = samples("", &plan, &done, Duration::from_millis(1500), 1_800_000_000);
        assert!(
            first.contains("autorepair_repairs_started_total 3\n"),
            "{first}"
        );
        // log-b1 and files-b4 get their enoperm.
        assert!(
            first.contains("autorepair_repairs_ended_total{result=\"enoperm\"} 2\n"),
            "{first}"
        );
        assert!(first.contains("autorepair_pass_duration_seconds 1.500\n"));
        assert!(first.contains("autorepair_down_nodes 4\n"), "{first}");
        assert!(
            first.contains("autorepair_domains_under_repair 1\n"),
            "{first}"
        );
        assert!(
            first.contains("autorepair_targets{state=\"suspended\"} 13\n"),
            "{first}"
        );
        let second = samples(
            &first,
            &plan,
            &done,
            Duration::from_millis(10),
            1_800_000_300,
        );
        assert!(
            second.contains("autorepair_repairs_started_total 6\n"),
            "{second}"
        );
        assert!(second.contains("autorepair_targets{state=\"suspended\"} 13\n"));
        assert!(second.contains("autorepair_last_successful_pass_timestamp_seconds 1800000300\n"));
        let failed = Report {
            errors: vec![("x".into(), "boom".into())],
            ..Report::default()
        };
        let third = samples(&second, &plan, &failed, Duration::ZERO, 1_800_000_600);
        assert!(
            third.contains("autorepair_last_successful_pass_timestamp_seconds 1800000300\n"),
            "{third}"
        );
        assert!(third.contains("autorepair_action_errors 1\n"));
    }

    #[test]
    fn a_mass_failure_is_a_series_that_names_its_scope_and_limit() {
        let snap = parse_fleet(include_str!("../fixtures/demo.json")).unwrap();
        let strict = Limits {
            max_down_nodes_per_group: 1,
            ..Limits::default()
        };
        let plan = crate::ganeti::plan(&snap, 1_800_000_000, &strict, 1);
        let text = samples("", &plan, &Report::default(), Duration::ZERO, 1_800_000_000);
        let series: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("autorepair_mass_failure{"))
            .collect();
        assert_eq!(
            series,
            vec![
                "autorepair_mass_failure{scope=\"group/ams-b\",limit=\"max_down_nodes_per_group\"} 1"
            ]
        );
        // Only a fleet-wide halt sets the fleet-wide gauge.
        assert!(text.contains("autorepair_halted 0\n"), "{text}");
    }

    #[test]
    fn repair_durations_accumulate_and_the_oldest_pending_repair_is_aged() {
        use crate::ganeti::snapshot::{JobStatus, Op};
        use crate::ganeti::testkit::{Fleet, JobExt, job};
        const NOW: i64 = 1_000_000;
        const A: &str = "aaaaaaaa-0000-4000-8000-000000000001";
        const B: &str = "bbbbbbbb-0000-4000-8000-000000000002";
        let failover = || Op::Failover {
            target_node: None,
            iallocator: None,
        };
        // i1's failover ends in this pass after 100 s; i2's has run for 500 s and goes on.
        let snap = Fleet::new()
            .group("g")
            .autorepair(["failover"])
            .node("n1", "g")
            .node("n2", "g")
            .instance("i1")
            .primary("n1")
            .secondary("n2")
            .template("drbd")
            .autorepair([format!("pending:failover:{A}:{}:1+3", NOW - 100)])
            .instance("i2")
            .primary("n1")
            .secondary("n2")
            .template("drbd")
            .autorepair([format!("pending:failover:{B}:{}:2", NOW - 500)])
            .job(
                job(1, JobStatus::Success)
                    .repair(A)
                    .on("i1")
                    .op(failover())
                    .ended(NOW - 60)
                    .opresult(serde_json::json!([null])),
            )
            .job(
                job(3, JobStatus::Success)
                    .repair(A)
                    .on("i1")
                    .op(Op::ReplaceDisks {
                        remote_node: None,
                        iallocator: Some("hail".into()),
                    })
                    .ended(NOW - 60)
                    .opresult(serde_json::json!([null])),
            )
            .job(job(2, JobStatus::Running).repair(B).on("i2").op(failover()))
            .build();
        let plan = crate::ganeti::plan(&snap, NOW, &Limits::default(), 1);
        let done = Report::default();
        let first = samples("", &plan, &done, Duration::ZERO, NOW);
        for line in [
            "autorepair_repair_duration_seconds_sum 100\n",
            "autorepair_repair_duration_seconds_count 1\n",
            "autorepair_oldest_pending_repair_age_seconds 500\n",
            "autorepair_last_pass_timestamp_seconds 1000000\n",
            "autorepair_mass_failure_passes 0\n",
        ] {
            assert!(first.contains(line), "{line:?} not in {first}");
        }
        let second = samples(&first, &plan, &done, Duration::ZERO, NOW + 60);
        assert!(second.contains("autorepair_repair_duration_seconds_sum 200\n"));
        assert!(second.contains("autorepair_repair_duration_seconds_count 2\n"));
    }

    #[test]
    fn passes_held_by_a_mass_failure_limit_are_counted_in_a_row() {
        let snap = parse_fleet(include_str!("../fixtures/demo.json")).unwrap();
        let strict = Limits {
            max_down_nodes_per_group: 1,
            ..Limits::default()
        };
        let held = crate::ganeti::plan(&snap, 1_800_000_000, &strict, 1);
        let free = crate::ganeti::plan(&snap, 1_800_000_000, &Limits::default(), 1);
        let done = Report::default();
        let mut text = String::new();
        for want in [1, 2, 3] {
            text = samples(&text, &held, &done, Duration::ZERO, 1_800_000_000);
            assert!(
                text.contains(&format!("autorepair_mass_failure_passes {want}\n")),
                "{text}"
            );
        }
        text = samples(&text, &free, &done, Duration::ZERO, 1_800_000_000);
        assert!(
            text.contains("autorepair_mass_failure_passes 0\n"),
            "{text}"
        );
    }

    #[test]
    fn every_series_names_its_family_and_counters_read_it_back() {
        let plan = crate::toy::fixture::plan();
        let done = Report::default();
        let first = render("", &plan, &done, Duration::ZERO, 1000);
        for line in first.lines().filter(|l| !l.starts_with('#')) {
            assert!(line.contains("{family=\"toy\""), "{line}");
        }
        assert!(first.contains("autorepair_targets{family=\"toy\",state=\"pending\"} 1\n"));
        assert!(first.contains("autorepair_repairs_started_total{family=\"toy\"} 2\n"));
        let second = render(&first, &plan, &done, Duration::ZERO, 1300);
        assert!(
            second.contains("autorepair_repairs_started_total{family=\"toy\"} 4\n"),
            "{second}"
        );
        // A file from before the label: its counters go on.
        let unlabelled = samples("", &plan, &done, Duration::ZERO, 1000);
        let after = render(&unlabelled, &plan, &done, Duration::ZERO, 1300);
        assert!(after.contains("autorepair_repairs_started_total{family=\"toy\"} 4\n"));
    }

    #[test]
    fn only_what_the_pass_carried_out_is_counted() {
        let plan = crate::toy::fixture::plan();
        let count = |done: &Report<_>| {
            let text = samples("", &plan, done, Duration::ZERO, 1000);
            previous(&text, STARTED)
        };
        assert_eq!(count(&Report::default()), 2.0);
        // Each target that starts a repair, failed: nothing of it counts.
        let starters: Vec<String> = plan
            .targets
            .iter()
            .filter(|t| t.actions.iter().any(|a| matches!(a, Action::Repair(_))))
            .map(|t| t.name.clone())
            .collect();
        assert_eq!(starters.len(), 2, "{starters:?}");
        let failed = Report {
            errors: vec![(starters[0].clone(), "boom".into())],
            ..Report::default()
        };
        assert_eq!(count(&failed), 1.0);
        // A pass halted before its first write counts nothing.
        let halted = Report {
            halted: Some("lost the lease".into()),
            ..Report::default()
        };
        assert_eq!(count(&halted), 0.0);
    }

    #[test]
    fn a_file_that_never_saw_a_clean_pass_counts_failing_from_its_first_pass() {
        let plan = crate::toy::fixture::plan();
        let failed = Report {
            errors: vec![("x".into(), "boom".into())],
            ..Report::default()
        };
        let last_ok = "autorepair_last_successful_pass_timestamp_seconds";
        let first = samples("", &plan, &failed, Duration::ZERO, 1000);
        assert_eq!(previous(&first, last_ok), 1000.0, "{first}");
        let second = samples(&first, &plan, &failed, Duration::ZERO, 1300);
        assert_eq!(previous(&second, last_ok), 1000.0);
    }

    #[test]
    fn labelled_counters_go_on_through_the_family_label() {
        let plan = crate::toy::fixture::plan();
        let done = Report::default();
        let sample = "autorepair_repairs_ended_total{family=\"toy\",result=\"enoperm\"}";
        let first = render("", &plan, &done, Duration::ZERO, 1000);
        let second = render(&first, &plan, &done, Duration::ZERO, 1300);
        assert_eq!(previous(&first, sample), 1.0, "{first}");
        assert_eq!(previous(&second, sample), 2.0, "{second}");
    }

    #[test]
    fn label_values_are_escaped_for_the_text_format() {
        for (raw, want) in [
            ("rack/0", "rack/0"),
            ("a\"b", "a\\\"b"),
            ("back\\slash", "back\\\\slash"),
            ("two\nlines", "two\\nlines"),
        ] {
            assert_eq!(label_value(raw), want, "{raw:?}");
        }
    }

    /// A replica that acts says it leads; one that stands by says it does not, keeps its
    /// counters (they go on when it leads again) and drops every gauge of the fleet it last
    /// read, so that two replicas never both export the fleet.
    #[test]
    fn a_replica_standing_by_exports_its_counters_and_that_it_does_not_lead() {
        let plan = crate::toy::fixture::plan();
        let done = Report::default();
        let led = render("", &plan, &done, Duration::from_secs(2), 1000);
        assert!(
            led.contains("autorepair_leader{family=\"toy\"} 1\n"),
            "{led}"
        );
        let by = standing_by::<crate::toy::fixture::Toy>(&led);
        assert!(by.contains("autorepair_leader{family=\"toy\"} 0\n"), "{by}");
        for kept in [
            "autorepair_repairs_started_total{family=\"toy\"} 2\n",
            "# TYPE autorepair_repairs_ended_total counter\n",
            "autorepair_repairs_ended_total{family=\"toy\",result=\"enoperm\"} 1\n",
            "autorepair_repair_duration_seconds_count{family=\"toy\"} ",
        ] {
            assert!(by.contains(kept), "{kept:?} not in {by}");
        }
        for dropped in [
            "autorepair_targets",
            "autorepair_down_nodes",
            "autorepair_last_pass",
        ] {
            assert!(!by.contains(dropped), "{dropped} in {by}");
        }
        // Leading again, the counters go on from the standby's file.
        let again = render(&by, &plan, &done, Duration::ZERO, 1300);
        assert!(again.contains("autorepair_repairs_started_total{family=\"toy\"} 4\n"));
        assert!(again.contains("autorepair_leader{family=\"toy\"} 1\n"));
    }

    #[test]
    fn another_family_gets_the_same_series_in_its_own_words() {
        let plan = crate::toy::fixture::plan();
        let text = samples("", &plan, &Report::default(), Duration::ZERO, 1000);
        for line in [
            "autorepair_targets{state=\"pending\"} 1\n",
            // b1's restart and b4's requested one start; b2 gets its enoperm.
            "autorepair_repairs_started_total 2\n",
            "autorepair_repairs_ended_total{result=\"enoperm\"} 1\n",
            "autorepair_down_nodes 1\n",
            "# HELP autorepair_writes Writes (mark changes and operations) the last pass planned.\n",
        ] {
            assert!(text.contains(line), "{line:?} not in {text}");
        }
    }
}
