//! What-ifs: `simulate` (chaos over the fleet, in memory) and `generate` (a synthetic fleet).
//! The family is the source's, as for every command: a Ganeti fleet (`--cluster`, `--rapi`),
//! Kubernetes objects (`--kube-objects`, `--kube`: the metal3 world, which plays the
//! baremetal-operator, the kubelets and their BMCs) or sabakan machines (`--sabakan-file`,
//! `--sabakan`: the machines world, which plays sabakan's health monitoring, the repair
//! commands, the health checks and the drains).

use super::family::FamilyFace;
use super::fleet::connect;
use super::printer::Printer;
use super::settings::{Fleet, MachinesFleet, Simulate};
use super::{Error, Exit, Simulated};
use crate::{
    engine::{
        Backend, Family,
        sim::{self as engine_sim, Summary, World},
    },
    ganeti::{
        self as plan, Ganeti,
        file::FleetFile,
        generate::{self, Spec},
        sim::{self as simulate, Faults, PASS_SECONDS, SimConfig},
    },
    machines::{self, Machines, sim::MachinesWorld},
    metal3::{self, Metal3, sim::Metal3World},
};
use serde::Serialize;
use std::path::Path;

impl Simulated for Ganeti {
    fn simulate(out: &mut Printer, fleet: &Fleet<Ganeti>, args: &Simulate) -> Result<Exit, Error> {
        ganeti(out, fleet, args, connect(fleet)?)
    }
}

impl Simulated for Metal3 {
    fn simulate(out: &mut Printer, fleet: &Fleet<Metal3>, args: &Simulate) -> Result<Exit, Error> {
        metal3(out, fleet, args, connect(fleet)?)
    }
}

impl Simulated for Machines {
    fn simulate(
        out: &mut Printer,
        fleet: &Fleet<Machines>,
        args: &Simulate,
    ) -> Result<Exit, Error> {
        machines(out, fleet, args, &fleet.source)
    }
}

/// How many quiet passes follow the faults: enough for `max_repair_age` to run out.
fn quiet_passes<F: FamilyFace>(fleet: &Fleet<F>, args: &Simulate) -> u32 {
    let retries_end = fleet.limits.max_repair_age.as_secs() as i64 / PASS_SECONDS;
    args.quiet_passes
        .unwrap_or((retries_end as u32).saturating_add(20).max(80))
}

/// The engine's configuration of a family's scenarios: the config's limits, the command's clock.
fn engine_config<F: FamilyFace>(fleet: &Fleet<F>, args: &Simulate) -> engine_sim::SimConfig {
    engine_sim::SimConfig {
        limits: fleet.limits.clone(),
        start: args.clock.now(),
        quiet_passes: quiet_passes(fleet, args),
    }
}

/// The metal3 world over the Machines, hosts and Nodes read, judged with its own settings
/// (`metal3::sim::settings`: the rules assume them) and the config's limits.
fn metal3(
    out: &mut Printer,
    fleet: &Fleet<Metal3>,
    args: &Simulate,
    mut backend: Box<dyn Backend<Metal3>>,
) -> Result<Exit, Error> {
    let snap = backend.snapshot().map_err(|e| Error::Snapshot(e.into()))?;
    let cfg = engine_config(fleet, args);
    let settings = metal3::sim::settings();
    let planner = |s: &metal3::objects::Snapshot, now: i64, seed: u64| {
        metal3::plan(s, &settings, now, &cfg.limits, seed)
    };
    let summary = explore::<Metal3World>(out, &snap, &(), args, &cfg, &planner)?;
    report::<Metal3>(out, &summary, &[])
}

/// The machines world over the machines read (sabakan or its file, read once and never
/// written; the Nodes likewise), with the fleet's own repair configuration and constraints,
/// and the config's limits: the procedures exercised are the operator's. The world plays
/// every command they name, health checks included, from each machine's script: no program
/// runs, here or when the source is read, and drains cordon a copy of the Nodes.
fn machines(
    out: &mut Printer,
    fleet: &Fleet<Machines>,
    args: &Simulate,
    s: &MachinesFleet,
) -> Result<Exit, Error> {
    let mut source = machines::face::open(s).map_err(|e| Error::Open(e.into()))?;
    source.check_health = false;
    let snap = source.snapshot().map_err(|e| Error::Snapshot(e.into()))?;
    // Dropped unflushed: nothing read is ever written back.
    drop(source);
    let cfg = engine_config(fleet, args);
    let planner = |snap: &machines::snapshot::Snapshot, now: i64, seed: u64| {
        machines::plan(snap, &s.settings, now, &cfg.limits, seed)
    };
    let setup = Some(s.settings.clone());
    let summary = explore::<MachinesWorld>(out, &snap, &setup, args, &cfg, &planner)?;
    let notes = machines::sim::unrepairable(&snap, &s.settings);
    report::<Machines>(out, &summary, &notes)
}

/// The scenarios of a world over `snap`, after one scenario's event log with `--verbose`.
fn explore<W: World>(
    out: &mut Printer,
    snap: &W::Fleet,
    setup: &W::Setup,
    args: &Simulate,
    cfg: &engine_sim::SimConfig,
    planner: engine_sim::Planner<'_, W>,
) -> Result<Summary, Error> {
    let faults = engine_sim::Faults::<W::Rates>::default();
    // The executor logs every action; thousands of simulated passes would drown the summary.
    let quiet = || tracing::subscriber::NoSubscriber::default();
    if args.verbose && args.scenarios == 1 {
        let sched = engine_sim::schedule::<W>(snap, args.passes, args.seed, &faults);
        let ran = tracing::subscriber::with_default(quiet(), || {
            engine_sim::run_with::<W>(snap, setup, &sched, cfg, planner)
        });
        for (pass, lines) in ran.log.iter().enumerate() {
            for l in lines {
                out.line(format_args!("pass {pass}: {l}"))?;
            }
        }
    }
    let scenario = engine_sim::Scenario {
        passes: args.passes,
        seed: args.seed,
        scenarios: args.scenarios,
    };
    Ok(tracing::subscriber::with_default(quiet(), || {
        engine_sim::explore_with::<W>(snap, setup, &scenario, cfg, &faults, planner)
    }))
}

fn ganeti(
    out: &mut Printer,
    fleet: &Fleet<Ganeti>,
    args: &Simulate,
    mut backend: Box<dyn Backend<Ganeti>>,
) -> Result<Exit, Error> {
    let snap = backend.snapshot().map_err(|e| Error::Snapshot(e.into()))?;
    let mut cfg = SimConfig::new(args.clock.now());
    cfg.limits = fleet.limits.clone();
    cfg.settings.iallocator = fleet.source.iallocator.clone();
    cfg.quiet_passes = quiet_passes(fleet, args);
    let faults = Faults::default();
    if args.verbose && args.scenarios == 1 {
        let sched = simulate::schedule(&snap, args.passes, args.seed, &faults);
        let ran =
            tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::default(), || {
                simulate::run(&snap, &sched, &cfg, plan::plan_with)
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
                plan::plan_with,
            )
        });
    report::<crate::ganeti::Ganeti>(out, &summary, &[])
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
fn report<F: Family>(
    out: &mut Printer,
    summary: &Summary,
    notes: &[String],
) -> Result<Exit, Error> {
    out.document(
        || Report { summary, notes },
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
