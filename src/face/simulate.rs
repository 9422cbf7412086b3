//! What-ifs: `simulate` (chaos over the fleet, in memory) and `generate` (a synthetic fleet).

use super::fleet::open;
use super::printer::Printer;
use super::settings::{Fleet, Simulate};
use super::{Error, Exit};
use crate::{
    engine::Backend as _,
    ganeti::{
        self as plan,
        file::FleetFile,
        generate::{self, Spec},
        sim::{self as simulate, Faults, PASS_SECONDS, SimConfig},
    },
};
use std::path::Path;

pub fn simulate(out: &mut Printer, fleet: &Fleet, args: &Simulate) -> Result<Exit, Error> {
    let snap = open(&fleet.source)?
        .snapshot()
        .map_err(|e| Error::Snapshot(e.into()))?;
    let mut cfg = SimConfig::new(args.clock.now());
    cfg.limits = fleet.limits.clone();
    let retries_end = fleet.limits.max_repair_age.as_secs() as i64 / PASS_SECONDS;
    cfg.quiet_passes = args
        .quiet_passes
        .unwrap_or((retries_end as u32).saturating_add(20).max(80));
    let faults = Faults::default();
    if args.verbose && args.scenarios == 1 {
        let sched = simulate::schedule(&snap, args.passes, args.seed, &faults);
        let ran =
            tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::default(), || {
                simulate::run(&snap, &sched, &cfg, plan::plan)
            });
        for (pass, lines) in ran.log.iter().enumerate() {
            for l in lines {
                out.line(format_args!("pass {pass}: {l}"))?;
            }
        }
    }
    // The executor logs every action; thousands of simulated passes would drown the summary.
    let summary =
        tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::default(), || {
            simulate::explore(
                &snap,
                args.passes,
                args.seed,
                args.scenarios,
                &cfg,
                &faults,
                plan::plan,
            )
        });
    out.document(
        || &summary,
        || {
            let s = &summary.stats;
            let mut text = format!(
                "{} scenario(s), {} passes: {} jobs submitted, {} repairs succeeded, {} failed, {} kills of the watcher, {} halted passes\n",
                summary.scenarios,
                s.passes,
                s.jobs_submitted,
                s.repairs_succeeded,
                s.repairs_failed,
                s.kills,
                s.halted_passes
            );
            match summary.findings.first() {
                None => text.push_str("no safety or liveness rule was violated\n"),
                Some(f) => text.push_str(&format!("VIOLATION: {f}")),
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

/// A synthetic fleet, saved (atomically) or printed on one line.
pub fn generate(out: &mut Printer, spec: &Spec, output: Option<&Path>) -> Result<Exit, Error> {
    let fleet = generate::generate(spec);
    match output {
        Some(path) => FleetFile::create(path, fleet)
            .flush()
            .map_err(|e| Error::Save(e.into()))?,
        None => out.json_line(&fleet)?,
    }
    Ok(Exit::Ok)
}
