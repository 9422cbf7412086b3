//! `simulate`, as families share it: the command's settings, and the driver each family's
//! world runs through (scenarios over the fleet as read, in memory, and the summary in the
//! family's words). Built with the `testkit` feature only.

use super::printer::Printer;
use super::{Error, Exit};
use crate::engine::{
    Family, Limits,
    sim::{self as engine_sim, PASS_SECONDS, Summary, World},
};
use serde::Serialize;

/// `simulate` in a family's world: many chaos scenarios over the fleet as it is, in memory,
/// with the config's limits.
pub type Simulator<F> =
    fn(&<F as super::FamilyFace>::Source, &Limits, &Simulate, &mut Printer) -> Result<Exit, Error>;

/// `simulate`'s settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simulate {
    /// The first pass's time.
    pub start: i64,
    pub passes: u32,
    pub seed: u64,
    pub scenarios: usize,
    /// `None`: enough for max_repair_age to run out.
    pub quiet_passes: Option<u32>,
    /// Watchers against the fleet ([`engine_sim::Replicas`]).
    pub replicas: usize,
    /// Print every pass (only with one scenario).
    pub verbose: bool,
}

impl Simulate {
    /// How many quiet passes follow the faults: enough for `max_repair_age` to run out.
    pub fn quiet_passes(&self, limits: &Limits) -> u32 {
        let retries_end = limits.max_repair_age.as_secs() as i64 / PASS_SECONDS;
        self.quiet_passes
            .unwrap_or((retries_end as u32).saturating_add(20).max(80))
    }

    /// The engine's configuration of a family's scenarios: the config's limits, the
    /// command's clock.
    pub fn engine_config(&self, limits: &Limits) -> engine_sim::SimConfig {
        engine_sim::SimConfig {
            limits: limits.clone(),
            start: self.start,
            quiet_passes: self.quiet_passes(limits),
            replicas: engine_sim::Replicas {
                count: self.replicas,
                unguarded: false,
            },
        }
    }
}

/// The log of one scenario's passes, printed under `--verbose`.
pub fn print_log(out: &mut Printer, log: &[Vec<String>]) -> Result<(), Error> {
    for (pass, lines) in log.iter().enumerate() {
        for l in lines {
            out.line(format_args!("pass {pass}: {l}"))?;
        }
    }
    Ok(())
}

/// Runs `f` with the executor's logs off: thousands of simulated passes would drown the
/// summary.
pub fn quietly<T>(f: impl FnOnce() -> T) -> T {
    tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::default(), f)
}

/// The scenarios of a world over `snap`, after one scenario's event log with `--verbose`.
pub fn explore<W: World>(
    out: &mut Printer,
    snap: &W::Fleet,
    setup: &W::Setup,
    args: &Simulate,
    cfg: &engine_sim::SimConfig,
    planner: engine_sim::Planner<'_, W>,
) -> Result<Summary, Error> {
    let faults = if args.replicas > 1 {
        engine_sim::Faults::<W::Rates>::default().with_replicas()
    } else {
        engine_sim::Faults::<W::Rates>::default()
    };
    if args.verbose && args.scenarios == 1 {
        let sched = engine_sim::schedule::<W>(snap, args.passes, args.seed, &faults);
        let ran = quietly(|| engine_sim::run_with::<W>(snap, setup, &sched, cfg, planner));
        print_log(out, &ran.log)?;
    }
    // In slices, to say how far it got: the scenarios' seeds are the same (`seed + k`), and the
    // first violation ends the exploration as it would in one call.
    let mut summary = Summary {
        scenarios: args.scenarios,
        ..Summary::default()
    };
    let slice = (args.scenarios / 100).max(1);
    let mut done = 0;
    while done < args.scenarios && summary.findings.is_empty() {
        let scenarios = slice.min(args.scenarios - done);
        let scenario = engine_sim::Scenario {
            passes: args.passes,
            seed: args.seed.wrapping_add(done as u64),
            scenarios,
        };
        let part = quietly(|| {
            engine_sim::explore_with::<W>(snap, setup, &scenario, cfg, &faults, planner)
        });
        summary.stats.add(&part.stats);
        summary.findings.extend(part.findings);
        done += scenarios;
        out.progress(
            format_args!(
                "simulate: {done} of {} scenarios, {} passes",
                args.scenarios, summary.stats.passes
            ),
            done == args.scenarios || !summary.findings.is_empty(),
        );
    }
    Ok(summary)
}

/// The summary with what the family says about the simulation itself.
#[derive(Serialize)]
struct Report<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    notes: &'a [String],
}

/// The summary in the family's words, then the notes; exit 1 on a violation.
pub fn report<F: Family>(
    out: &mut Printer,
    summary: &Summary,
    notes: &[String],
) -> Result<Exit, Error> {
    out.document(
        || Report { summary, notes },
        || {
            let s = &summary.stats;
            let mut text = format!(
                "{} scenario(s), {} passes: {} {} submitted, {} repairs succeeded, {} failed, {} kills of the watcher, {} halted passes",
                summary.scenarios,
                s.passes,
                s.jobs_submitted,
                F::WORDS.ops_for(s.jobs_submitted),
                s.repairs_succeeded,
                s.repairs_failed,
                s.kills,
                s.halted_passes
            );
            // With replicas, the same line says what befell them.
            if s.takeovers + s.pauses + s.partitions + s.handovers > 0 {
                text.push_str(&format!(
                    "; replicas: {} takeovers, {} pauses, {} partitions, {} handovers, {} writes refused to a replica no longer leading",
                    s.takeovers, s.pauses, s.partitions, s.handovers, s.refused_writes
                ));
            }
            text.push('\n');
            if s.passes > 0 && s.halted_passes * 2 >= s.passes {
                text.push_str(&format!(
                    "note: {}% of the passes were halted by a mass-failure limit of [limits]: while one holds, no repair starts, so these scenarios show few repairs. `status` on the fleet names the limit and its counts; raise it in the config to see what repairs would do\n",
                    s.halted_passes * 100 / s.passes
                ));
            }
            match summary.findings.first() {
                None => text.push_str("no safety or liveness rule was violated\n"),
                Some(f) => text.push_str(&format!("VIOLATION: {f}")),
            }
            for n in notes {
                text.push_str(&format!("note: {n}\n"));
            }
            text
        },
    )?;
    Ok(if summary.findings.is_empty() {
        Exit::Ok
    } else {
        Exit::Partial
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::Stats;
    use crate::plug::printer::tests::printer;
    use crate::toy::Toy;

    /// The note comes with half of the passes halted or more, not below, and never for a run
    /// of no pass at all.
    #[test]
    fn the_halted_note_comes_from_half_of_the_passes() {
        for (passes, halted_passes, note) in [
            (0, 0, None),
            (10, 0, None),
            (10, 4, None),
            (9, 4, None),
            (10, 5, Some("50%")),
            (9, 5, Some("55%")),
            (3, 2, Some("66%")),
            (10, 10, Some("100%")),
        ] {
            let (mut printer, out, _) = printer(false);
            let summary = Summary {
                scenarios: 1,
                stats: Stats {
                    passes,
                    halted_passes,
                    ..Stats::default()
                },
                findings: Vec::new(),
            };
            report::<Toy>(&mut printer, &summary, &[]).unwrap();
            let text = out.text();
            let said = text
                .lines()
                .find_map(|l| {
                    l.strip_prefix("note: ")?
                        .split_once(" of the passes were halted")
                })
                .map(|(share, _)| share);
            assert_eq!(
                said, note,
                "{passes} passes, {halted_passes} halted:\n{text}"
            );
        }
    }
}
