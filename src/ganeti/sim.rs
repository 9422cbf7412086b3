//! The Ganeti fleet as a world for the engine's chaos simulator ([`crate::engine::sim`]): the
//! fleet file in memory with its job simulator, nodes and racks that fail, jobs that fail or
//! lack resources. The oracle's facts are read from the snapshot with this module's own code:
//! a node is down when it is offline, drained or not vm_capable, an instance's failure domain
//! is its primary if down, else a down secondary, else its primary.
//!
//! The functions here are the engine's, bound to this world and to the config file's limits
//! (what `autorepair simulate` and the tests use).

use super::file::FleetFile;
use super::health;
use super::snapshot::{Instance, JobStatus, Node, Op, OpKind, SimOutcome, SimScript, Snapshot};
use super::tags::GanetiLevel;
use super::{Ganeti, Plan, Settings};
use crate::engine::Limits;
use crate::engine::family::Health;
use crate::engine::sim::{self, DownFact, OpFact, OpRun, Rng, World};
use rand::Rng as _;
use serde::Serialize;
use std::fmt;

pub use crate::engine::sim::{
    AdminEdit, Finding, Outcome, PASS_SECONDS, Stats, Summary, Violation,
};

/// How often each of Ganeti's faults happens, per pass.
#[derive(Clone, Debug)]
pub struct Rates {
    pub node_offline: f64,
    pub rack_down: f64,
    pub node_drain: f64,
    pub node_flap: f64,
    pub node_recover: f64,
    pub job_failure: f64,
    pub no_resources: f64,
}

impl Default for Rates {
    fn default() -> Self {
        Rates {
            node_offline: 0.08,
            rack_down: 0.01,
            node_drain: 0.05,
            node_flap: 0.04,
            node_recover: 0.05,
            job_failure: 0.1,
            no_resources: 0.1,
        }
    }
}

pub type Faults = sim::Faults<Rates>;
pub type Event = sim::Event<Fault, GanetiLevel>;
pub type Schedule = sim::Schedule<Fault, GanetiLevel>;

/// One thing that happens to a Ganeti fleet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Fault {
    NodeOffline(String),
    NodeOnline(String),
    NodeDrain(String),
    NodeUndrain(String),
    /// Every node carrying the tag `rack:<name>` goes offline.
    RackDown(String),
    /// The instance's next job ends this way.
    JobOutcome(String, SimOutcome),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::NodeOffline(n) => write!(f, "node {n} goes offline"),
            Fault::NodeOnline(n) => write!(f, "node {n} comes back online"),
            Fault::NodeDrain(n) => write!(f, "node {n} is drained"),
            Fault::NodeUndrain(n) => write!(f, "node {n} is undrained"),
            Fault::RackDown(r) => write!(f, "rack {r} loses power"),
            Fault::JobOutcome(i, o) => write!(f, "the next job of {i} ends {o:?}"),
        }
    }
}

/// What drawing faults works on, and the nodes that flapped last pass.
pub struct Chaos {
    rates: Rates,
    nodes: Vec<String>,
    instances: Vec<String>,
    racks: Vec<String>,
    flapping: Vec<String>,
}

fn node_down(n: &Node) -> bool {
    n.offline || n.drained || !n.vm_capable
}

fn node<'f>(fleet: &'f Snapshot, name: &str) -> Option<&'f Node> {
    fleet.nodes.iter().find(|n| n.name == name)
}

impl World for FleetFile {
    type Family = Ganeti;
    type Fleet = Snapshot;
    type Backend = FleetFile;
    type Fault = Fault;
    type Rates = Rates;
    type Chaos = Chaos;
    type Setup = ();

    fn new(fleet: &Snapshot, _: &(), _start: i64) -> Self {
        FleetFile::in_memory(fleet.clone())
    }

    /// Watchers on the master candidates, following the master role.
    fn coordination(_: &(), replicas: usize, _start: i64) -> Option<Box<dyn sim::Coordination>> {
        Some(Box::new(MasterRole::new(replicas)))
    }

    fn generate(targets: usize, seed: u64) -> Snapshot {
        super::generate::generate(&super::generate::Spec::new(targets, seed))
    }

    fn fleet(&self) -> &Snapshot {
        FleetFile::fleet(self)
    }

    fn backend(&mut self) -> &mut FleetFile {
        self
    }

    fn domain_faults(fleet: &Snapshot) -> Vec<(Fault, Fault)> {
        fleet
            .nodes
            .iter()
            .map(|n| {
                (
                    Fault::NodeOffline(n.name.clone()),
                    Fault::NodeOnline(n.name.clone()),
                )
            })
            .collect()
    }

    fn chaos(fleet: &Snapshot, rates: &Rates) -> Chaos {
        let mut racks: Vec<String> = fleet
            .nodes
            .iter()
            .flat_map(|n| n.tags.iter().filter_map(|t| t.strip_prefix("rack:")))
            .map(str::to_owned)
            .collect();
        racks.sort();
        racks.dedup();
        Chaos {
            rates: rates.clone(),
            nodes: fleet.nodes.iter().map(|n| n.name.clone()).collect(),
            instances: fleet.instances.iter().map(|i| i.name.clone()).collect(),
            racks,
            flapping: Vec::new(),
        }
    }

    fn draw(c: &mut Chaos, rng: &mut Rng) -> Vec<Fault> {
        let mut events = Vec::new();
        // A flapping node comes back the pass after it went down.
        for n in c.flapping.drain(..) {
            events.push(Fault::NodeOnline(n));
        }
        let pick = |rng: &mut Rng, list: &[String]| list[rng.random_range(0..list.len())].clone();
        let r = &c.rates;
        if !c.nodes.is_empty() {
            if rng.random_bool(r.node_offline) {
                events.push(Fault::NodeOffline(pick(rng, &c.nodes)));
            }
            if rng.random_bool(r.node_drain) {
                events.push(Fault::NodeDrain(pick(rng, &c.nodes)));
            }
            if rng.random_bool(r.node_flap) {
                let n = pick(rng, &c.nodes);
                events.push(Fault::NodeOffline(n.clone()));
                c.flapping.push(n);
            }
            if rng.random_bool(r.node_recover) {
                let n = pick(rng, &c.nodes);
                events.push(Fault::NodeOnline(n.clone()));
                events.push(Fault::NodeUndrain(n));
            }
        }
        if !c.racks.is_empty() && rng.random_bool(r.rack_down) {
            events.push(Fault::RackDown(pick(rng, &c.racks)));
        }
        if !c.instances.is_empty() {
            if rng.random_bool(r.job_failure) {
                let outcome = if rng.random_bool(0.2) {
                    SimOutcome::Vanish
                } else {
                    SimOutcome::Fail
                };
                events.push(Fault::JobOutcome(pick(rng, &c.instances), outcome));
            }
            if rng.random_bool(r.no_resources) {
                events.push(Fault::JobOutcome(
                    pick(rng, &c.instances),
                    SimOutcome::InsufficientResources,
                ));
            }
        }
        events
    }

    fn apply(&mut self, fault: &Fault, now: i64) {
        let snap = self.fleet_mut();
        // Ganeti stamps every change of a node with its mtime: the planner reads a node's
        // return from it.
        let mtime = Some(now as f64);
        let mut node = |name: &str, f: &dyn Fn(&mut Node)| {
            if let Some(n) = snap.nodes.iter_mut().find(|n| n.name == name) {
                f(n);
                n.mtime = mtime;
            }
        };
        match fault {
            Fault::NodeOffline(n) => node(n, &|n| n.offline = true),
            Fault::NodeOnline(n) => node(n, &|n| n.offline = false),
            Fault::NodeDrain(n) => node(n, &|n| n.drained = true),
            Fault::NodeUndrain(n) => node(n, &|n| n.drained = false),
            Fault::RackDown(rack) => {
                let tag = format!("rack:{rack}");
                for n in snap.nodes.iter_mut().filter(|n| n.tags.contains(&tag)) {
                    n.offline = true;
                    n.mtime = mtime;
                }
            }
            Fault::JobOutcome(inst, outcome) => {
                let script: &mut SimScript =
                    snap.simulation.instances.entry(inst.clone()).or_default();
                script.outcomes.push(*outcome);
            }
        }
    }

    fn advance(&mut self, now: i64) {
        self.advance_jobs(now);
    }

    fn health(&self, fleet: &Snapshot, inst: &Instance, _now: i64) -> Health<GanetiLevel> {
        health::assess_with(inst, |n| node(fleet, n))
    }

    fn domain<'f>(fleet: &'f Snapshot, inst: &'f Instance) -> &'f str {
        let down = |name: &str| node(fleet, name).is_some_and(node_down);
        std::iter::once(&inst.pnode)
            .chain(&inst.snodes)
            .find(|n| down(n))
            .unwrap_or(&inst.pnode)
    }

    fn limit_scope<'f>(fleet: &'f Snapshot, inst: &'f Instance) -> Option<&'f str> {
        node(fleet, &inst.pnode).map(|n| n.group_uuid.as_str())
    }

    fn down_domains(fleet: &Snapshot, _now: i64) -> Vec<DownFact<'_>> {
        fleet
            .nodes
            .iter()
            .filter(|n| node_down(n))
            .map(|n| DownFact {
                domain: &n.name,
                scope: &n.group_uuid,
            })
            .collect()
    }

    fn scope_marks<'f>(fleet: &'f Snapshot, inst: &'f Instance) -> Vec<&'f [String]> {
        let group = node(fleet, &inst.pnode)
            .and_then(|n| fleet.groups.iter().find(|g| g.uuid == n.group_uuid));
        group
            .map(|g| g.tags.as_slice())
            .into_iter()
            .chain([fleet.cluster.tags.as_slice()])
            .collect()
    }

    fn ops(fleet: &Snapshot, _now: i64) -> Vec<OpFact<'_, Ganeti>> {
        fleet
            .jobs
            .iter()
            .map(|j| OpFact {
                id: j.id,
                repair: j.repair_id(),
                target: j.instance.as_deref(),
                step: j.op.as_ref().map(Op::kind),
                run: match j.status {
                    None => OpRun::Unknown,
                    Some(s) if !s.is_finished() => OpRun::Running,
                    Some(JobStatus::Success) => OpRun::Succeeded,
                    Some(_) => OpRun::Failed,
                },
            })
            .collect()
    }

    fn level_of(op: &Op) -> GanetiLevel {
        match op.kind() {
            OpKind::ReplaceDisks => GanetiLevel::FixStorage,
            OpKind::Migrate => GanetiLevel::Migrate,
            OpKind::Failover | OpKind::Move => GanetiLevel::Failover,
            OpKind::RecreateDisks | OpKind::Reinstall => GanetiLevel::Reinstall,
        }
    }
}

/// The planner under test, as the config file's limits and the family's settings drive it; the
/// real one is [`crate::ganeti::plan_with`].
pub type Planner = fn(&Snapshot, &Settings, i64, &Limits, u64) -> Plan;

#[derive(Clone, Debug)]
pub struct SimConfig {
    pub limits: Limits,
    /// The family's settings: the iallocator (none: autorepair picks the nodes itself).
    pub settings: Settings,
    pub start: i64,
    /// Passes without faults after the schedule, within which every repairable target must be
    /// repaired (or given up on with a failure).
    pub quiet_passes: u32,
    /// How many watchers run, one on each of the first nodes, following the master role.
    pub replicas: sim::Replicas,
}

impl SimConfig {
    pub fn new(start: i64) -> SimConfig {
        SimConfig {
            limits: Limits {
                // The demo fleet starts with four nodes down: room for the faults the
                // scenarios add, so that they exercise repairs and not only halts.
                max_down_nodes_per_group: 3,
                max_down_nodes: 8,
                max_domains_under_repair: 2,
                retry_interval: std::time::Duration::from_secs(15 * 60),
                max_repair_age: std::time::Duration::from_secs(2 * 3600),
                ..Limits::default()
            },
            settings: Settings::default(),
            start,
            quiet_passes: 80,
            replicas: Default::default(),
        }
    }

    fn engine(&self) -> sim::SimConfig {
        sim::SimConfig {
            limits: self.limits.clone(),
            start: self.start,
            quiet_passes: self.quiet_passes,
            replicas: self.replicas,
        }
    }
}

/// Draws a fault schedule for `fleet` from the seed.
pub fn schedule(fleet: &Snapshot, passes: u32, seed: u64, faults: &Faults) -> Schedule {
    sim::schedule::<FleetFile>(fleet, passes, seed, faults)
}

/// Runs the schedule, then quiet passes, checking every pass; stops at the first violation.
pub fn run(fleet: &Snapshot, schedule: &Schedule, cfg: &SimConfig, planner: Planner) -> Outcome {
    let bound = |s: &Snapshot, now, seed| planner(s, &cfg.settings, now, &cfg.limits, seed);
    sim::run::<FleetFile>(fleet, schedule, &cfg.engine(), &bound)
}

/// Shrinks a failing schedule to the events that still give a violation of `rule`.
pub fn minimize(
    fleet: &Snapshot,
    schedule: &Schedule,
    cfg: &SimConfig,
    planner: Planner,
    rule: &str,
) -> Schedule {
    let bound = |s: &Snapshot, now, seed| planner(s, &cfg.settings, now, &cfg.limits, seed);
    sim::minimize::<FleetFile>(fleet, schedule, &cfg.engine(), &bound, rule)
}

/// Runs `scenarios` seeded scenarios (seeds `seed`, `seed+1`, …) of `passes` fault passes each.
pub fn explore(
    fleet: &Snapshot,
    passes: u32,
    seed: u64,
    scenarios: usize,
    cfg: &SimConfig,
    faults: &Faults,
    planner: Planner,
) -> Summary {
    let bound = |s: &Snapshot, now, seed| planner(s, &cfg.settings, now, &cfg.limits, seed);
    sim::explore::<FleetFile>(
        fleet,
        passes,
        seed,
        scenarios,
        &cfg.engine(),
        faults,
        &bound,
    )
}

mod replicas;
#[cfg(test)]
mod tests;

pub use replicas::MasterRole;
