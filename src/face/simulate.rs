//! What-ifs: `simulate` (chaos over the fleet, in memory) and `generate` (a synthetic fleet).
//! The family is the source's, as for every command: a Ganeti fleet (`--cluster`, `--rapi`)
//! or Kubernetes objects (`--kube-objects`, `--kube`: the metal3 world, which plays the
//! baremetal-operator, the kubelets and their BMCs).

use super::fleet::{Backends, connect};
use super::printer::Printer;
use super::settings::{Fleet, Simulate};
use super::{Error, Exit};
use crate::{
    engine::{
        Backend, Family,
        sim::{self as engine_sim, Summary},
    },
    ganeti::{
        self as plan,
        file::FleetFile,
        generate::{self, Spec},
        sim::{self as simulate, Faults, PASS_SECONDS, SimConfig},
    },
    metal3::{self, Metal3, sim::Metal3World},
};
use std::path::Path;

pub fn simulate(out: &mut Printer, fleet: &Fleet, args: &Simulate) -> Result<Exit, Error> {
    match connect(&fleet.source)? {
        Backends::Ganeti(backend) => ganeti(out, fleet, args, backend),
        Backends::Metal3(backend) => metal3(out, fleet, args, backend),
        Backends::Machines(_) => Err(Error::GanetiOnly {
            from: fleet.source.describe(),
        }),
    }
}

/// How many quiet passes follow the faults: enough for `max_repair_age` to run out.
fn quiet_passes(fleet: &Fleet, args: &Simulate) -> u32 {
    let retries_end = fleet.limits.max_repair_age.as_secs() as i64 / PASS_SECONDS;
    args.quiet_passes
        .unwrap_or((retries_end as u32).saturating_add(20).max(80))
}

/// The metal3 world over the Machines, hosts and Nodes read, judged with its own settings
/// (`metal3::sim::settings`: the rules assume them) and the config's limits.
fn metal3(
    out: &mut Printer,
    fleet: &Fleet,
    args: &Simulate,
    mut backend: Box<dyn Backend<Metal3>>,
) -> Result<Exit, Error> {
    let snap = backend.snapshot().map_err(|e| Error::Snapshot(e.into()))?;
    let cfg = engine_sim::SimConfig {
        limits: fleet.limits.engine(),
        start: args.clock.now(),
        quiet_passes: quiet_passes(fleet, args),
    };
    let settings = metal3::sim::settings();
    let planner = |s: &metal3::objects::Snapshot, now: i64, seed: u64| {
        metal3::plan(s, &settings, now, &cfg.limits, seed)
    };
    let faults = engine_sim::Faults::<metal3::sim::Rates>::default();
    if args.verbose && args.scenarios == 1 {
        let sched = engine_sim::schedule::<Metal3World>(&snap, args.passes, args.seed, &faults);
        let ran =
            tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::default(), || {
                engine_sim::run::<Metal3World>(&snap, &sched, &cfg, &planner)
            });
        for (pass, lines) in ran.log.iter().enumerate() {
            for l in lines {
                out.line(format_args!("pass {pass}: {l}"))?;
            }
        }
    }
    let summary =
        tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::default(), || {
            engine_sim::explore::<Metal3World>(
                &snap,
                args.passes,
                args.seed,
                args.scenarios,
                &cfg,
                &faults,
                &planner,
            )
        });
    report::<Metal3>(out, &summary)
}

fn ganeti(
    out: &mut Printer,
    fleet: &Fleet,
    args: &Simulate,
    mut backend: Box<dyn Backend<crate::ganeti::Ganeti>>,
) -> Result<Exit, Error> {
    let snap = backend.snapshot().map_err(|e| Error::Snapshot(e.into()))?;
    let mut cfg = SimConfig::new(args.clock.now());
    cfg.limits = fleet.limits.clone();
    cfg.quiet_passes = quiet_passes(fleet, args);
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
    report::<crate::ganeti::Ganeti>(out, &summary)
}

/// The summary in the family's words; exit 1 on a violation.
fn report<F: Family>(out: &mut Printer, summary: &Summary) -> Result<Exit, Error> {
    out.document(
        || summary,
        || {
            let s = &summary.stats;
            let mut text = format!(
                "{} scenario(s), {} passes: {} {} submitted, {} repairs succeeded, {} failed, {} kills of the watcher, {} halted passes\n",
                summary.scenarios,
                s.passes,
                s.jobs_submitted,
                F::WORDS.ops,
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
