//! Many seeds, and shrinking a failing schedule to the events that make it fail.

use super::*;

/// Shrinks a failing schedule: drops the passes after the violation, then every event whose
/// removal still gives a violation of the same rule.
pub fn minimize<W: World>(
    fleet: &W::Fleet,
    schedule: &ScheduleOf<W>,
    cfg: &SimConfig,
    planner: Planner<'_, W>,
    rule: &str,
) -> ScheduleOf<W> {
    minimize_with::<W>(fleet, &W::Setup::default(), schedule, cfg, planner, rule)
}

/// [`minimize`], the world built with `setup`.
pub fn minimize_with<W: World>(
    fleet: &W::Fleet,
    setup: &W::Setup,
    schedule: &ScheduleOf<W>,
    cfg: &SimConfig,
    planner: Planner<'_, W>,
    rule: &str,
) -> ScheduleOf<W> {
    let fails = |s: &ScheduleOf<W>| {
        run_with::<W>(fleet, setup, s, cfg, planner)
            .violation
            .is_some_and(|v| v.rule == rule)
    };
    let mut best = schedule.clone();
    // Shortest prefix that still fails.
    let mut len = best.passes.len();
    while len > 0 {
        let mut shorter = best.clone();
        shorter.passes.truncate(len - 1);
        if fails(&shorter) {
            best = shorter;
            len -= 1;
        } else {
            break;
        }
    }
    for p in 0..best.passes.len() {
        let mut e = 0;
        while e < best.passes[p].len() {
            let mut fewer = best.clone();
            fewer.passes[p].remove(e);
            if fails(&fewer) {
                best = fewer;
            } else {
                e += 1;
            }
        }
    }
    best
}

/// A violation with everything needed to reproduce it.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub seed: u64,
    pub violation: Violation,
    /// The minimised schedule, one line per event, by pass.
    pub history: Vec<(usize, String)>,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "seed {}: {}", self.seed, self.violation)?;
        writeln!(f, "minimal history that reproduces it:")?;
        for (pass, line) in &self.history {
            writeln!(f, "  before pass {pass}: {line}")?;
        }
        Ok(())
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    pub scenarios: usize,
    pub stats: Stats,
    pub findings: Vec<Finding>,
}

/// Runs `scenarios` seeded scenarios (seeds `seed`, `seed+1`, …) of `passes` fault passes each,
/// and stops at the first violation, minimised.
pub fn explore<W: World>(
    fleet: &W::Fleet,
    passes: u32,
    seed: u64,
    scenarios: usize,
    cfg: &SimConfig,
    faults: &Faults<W::Rates>,
    planner: Planner<'_, W>,
) -> Summary {
    let scenario = Scenario {
        passes,
        seed,
        scenarios,
    };
    explore_with::<W>(fleet, &W::Setup::default(), &scenario, cfg, faults, planner)
}

/// What [`explore_with`] runs: `scenarios` schedules of `passes` fault passes, seeds `seed`,
/// `seed+1`, …
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    pub passes: u32,
    pub seed: u64,
    pub scenarios: usize,
}

/// [`explore`], the world built with `setup`.
pub fn explore_with<W: World>(
    fleet: &W::Fleet,
    setup: &W::Setup,
    scenario: &Scenario,
    cfg: &SimConfig,
    faults: &Faults<W::Rates>,
    planner: Planner<'_, W>,
) -> Summary {
    let Scenario {
        passes,
        seed,
        scenarios,
    } = *scenario;
    let mut summary = Summary {
        scenarios,
        ..Summary::default()
    };
    for k in 0..scenarios as u64 {
        let s = seed.wrapping_add(k);
        let sched = schedule::<W>(fleet, passes, s, faults);
        let out = run_with::<W>(fleet, setup, &sched, cfg, planner);
        summary.stats.add(&out.stats);
        if let Some(v) = out.violation {
            let small = minimize_with::<W>(fleet, setup, &sched, cfg, planner, &v.rule);
            let violation = run_with::<W>(fleet, setup, &small, cfg, planner)
                .violation
                .unwrap_or(v);
            let history = small
                .passes
                .iter()
                .enumerate()
                .flat_map(|(p, events)| events.iter().map(move |e| (p, e.to_string())))
                .collect();
            summary.findings.push(Finding {
                seed: s,
                violation,
                history,
            });
            break;
        }
    }
    summary
}
