//! The machines family as a world for the engine's chaos simulator ([`crate::engine::sim`]):
//! the sabakan machines document in memory ([`Document`], the backend's core itself, so that
//! its record-then-run order is what is tested), its Nodes file, and what the file does not say,
//! played between passes: machines break (UNHEALTHY, UNREACHABLE) and recover, are retired; a
//! repair step's command cures a machine or not; commands fail or hang past their timeout on
//! some machines; health checks fail, hang or print garbage; a PodDisruptionBudget refuses to
//! let a pod go; a reboot tool cordons Nodes; a person disables the repair queue for a while or
//! deletes finished entries; the watcher dies while a repair command runs.
//!
//! Commands are never processes here: the backend's [`Runner`] is the world's, which answers
//! from the machine's scripted state, so a scenario is fast and the same for a seed. Drains go
//! through the Nodes file's cordon, then the world evicts the Node's pods, but not one a
//! PodDisruptionBudget protects; pods come back to a schedulable Node between passes.
//!
//! The oracle's facts are read from the snapshot: health from the family's table (shared, as the
//! engine allows), the rest with this module's code. A machine is its own failure domain, down
//! while sabakan selects it or an entry is unfinished; its rack is the scope the limits count in.
//! On top of the engine's rules, the family's own are checked after every pass (see
//! [`MachinesWorld::check_pass`]).

use super::command::{RunError, Runner};
use super::config::{Constraints, Repair};
use super::document::Document;
use super::drain::{CORDON_ANNOTATION, NodesFile};
use super::entry::{Entry, Status, StepStatus};
use super::labels::{self, CLUSTER_PREFIX, Labels, RACK_PREFIX};
use super::snapshot::{Machine, Snapshot, kind};
use super::{Command, Machines, MachinesLevel, Op, OpId, Settings, Step};
use crate::engine::backend::{Around, Backend, BackendError, Intercepted, Write};
use crate::engine::family::{Family, Health};
use crate::engine::limits::Limits;
use crate::engine::marks::{Codec, Mark, Pending, RepairResult};
pub use crate::engine::sim::START;
use crate::engine::sim::{
    self, Broken, CallLog, DownFact, OpFact, OpRun, PASS_SECONDS, Rng, SimConfig, World,
};
use crate::engine::text::rfc3339;
use crate::sabakan::State;
use rand::{Rng as _, SeedableRng};
use serde::Serialize;
use serde_json::{Value, json};
use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod backend;
mod fleet;
mod rules;
mod runner;

pub use backend::Side;
use fleet::*;
pub use fleet::{generate, render, unrepairable};
use rules::*;
use runner::*;

/// Pods on a schedulable Node.
const PODS: usize = 3;

/// The world's repair configuration: the commands are names the world plays. Two machine types
/// with steps that drain or not, watches, retries; a third type has no procedure at all.
const CONFIG: &str = r#"
repair_procedures:
  - machine_types: ["IPMI-2.0"]
    repair_operations:
      - operation: unreachable
        repair_steps:
          - repair_command: ["sim-repair", "soft-reboot"]
            need_drain: true
            watch_seconds: 600
            command_retries: 1
          - repair_command: ["sim-repair", "hard-reboot"]
            watch_seconds: 600
          - repair_command: ["sim-repair", "reimage"]
            need_drain: true
            watch_seconds: 1200
        health_check_command: ["sim-check"]
        success_command: ["sim-notify"]
      - operation: unhealthy
        repair_steps:
          - repair_command: ["sim-repair", "soft-reboot"]
            need_drain: true
            watch_seconds: 300
          - repair_command: ["sim-repair", "hard-reboot"]
            need_drain: true
            watch_seconds: 600
        health_check_command: ["sim-check"]
  - machine_types: ["iDRAC-9"]
    repair_operations:
      - operation: unhealthy
        repair_steps:
          - repair_command: ["sim-repair", "power-cycle"]
            watch_seconds: 300
        health_check_command: ["sim-check"]
      - operation: unreachable
        repair_steps:
          - repair_command: ["sim-repair", "power-cycle"]
            need_drain: true
          - repair_command: ["sim-repair", "reimage"]
            need_drain: true
            watch_seconds: 900
        health_check_command: ["sim-check"]
max_concurrent_repairs: 2
eviction_timeout_seconds: 900
"#;

/// The settings the world is judged with: the planner under test must plan with them.
pub fn settings() -> Settings {
    // Parsed once: planners call this on every simulated pass, and parsing the YAML was an
    // eighth of a scenario's time in an unoptimised build.
    static SETTINGS: std::sync::LazyLock<Settings> = std::sync::LazyLock::new(|| Settings {
        repair: Repair::parse(CONFIG, "the machines world").expect("the world's config parses"),
        constraints: Constraints {
            maximum_repair_queue_entries: 6,
            wait_seconds_to_repair_rebooting: 900,
            ..Constraints::default()
        },
        query: Settings::default_query(),
    });
    SETTINGS.clone()
}

/// The scenarios' configuration: the engine's limits the planner under test must plan with
/// (the family's own come from [`settings`]), the clock of [`generate`]'s fleets, and quiet
/// passes enough for the longest procedure behind `max_concurrent_repairs`.
pub fn config() -> SimConfig {
    SimConfig {
        limits: Limits {
            max_down_nodes_per_group: 4,
            max_down_nodes: 8,
            max_domains_under_repair: 6,
            retry_interval: Duration::from_secs(15 * 60),
            max_repair_age: Duration::from_secs(2 * 3600),
            ..Limits::default()
        },
        start: START,
        quiet_passes: 60,
        replicas: Default::default(),
    }
}

/// The real planner, bound to the world's settings and limits.
pub fn planner(snap: &Snapshot, now: i64, seed: u64) -> super::Plan {
    super::plan(snap, &settings(), now, &config().limits, seed)
}

/// How a machine's health check answers, whatever the machine's health.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Check {
    /// `true` when the machine is healthy, `false` otherwise.
    Works,
    /// Exits 1.
    Fails,
    /// Runs past its timeout.
    Hangs,
    /// Exits 0 printing something else than `true`.
    Garbage,
}

/// How a machine's repair and success commands end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Cmd {
    Works,
    /// Exits 1 on every attempt.
    Fails,
    /// Runs past its timeout on every attempt.
    Hangs,
    /// Fails its first attempt only: a step with a retry succeeds.
    Flaky,
}

/// One thing that happens to the machines. Faults name machines by serial.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Fault {
    /// The machine breaks; sabakan reports it UNREACHABLE or UNHEALTHY. The command of step
    /// `cured_by` (0-based) or a later one cures it; `None`: no step does.
    Breaks {
        serial: String,
        unreachable: bool,
        cured_by: Option<usize>,
    },
    /// It heals by itself.
    Recovers(String),
    /// Someone retires it (RETIRING, then RETIRED).
    Retires(String),
    Check(String, Check),
    Command(String, Cmd),
    /// A PodDisruptionBudget refuses to let one of the pods on the machine's Node go, for so
    /// many passes.
    PdbRefuses(String, u32),
    /// A reboot tool cordons the machine's Node (not autorepair's cordon) for so many passes.
    RebootTool(String, u32),
    /// A person runs `autorepair repair disable`, and `enable` after so many passes.
    QueueDisabled(u32),
    /// A person runs `autorepair repair delete --finished`.
    DeleteFinished,
    /// The watcher dies while the next repair command of the pass runs.
    DiesMidCommand,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Breaks {
                serial,
                unreachable,
                cured_by,
            } => write!(
                f,
                "machine {serial} breaks ({}); {}",
                if *unreachable {
                    "UNREACHABLE"
                } else {
                    "UNHEALTHY"
                },
                match cured_by {
                    Some(s) => format!("step {} or later cures it", s + 1),
                    None => "no step cures it".into(),
                }
            ),
            Fault::Recovers(s) => write!(f, "machine {s} recovers by itself"),
            Fault::Retires(s) => write!(f, "machine {s} is retired"),
            Fault::Check(s, c) => write!(f, "the health check of {s} now: {c:?}"),
            Fault::Command(s, c) => write!(f, "the commands on {s} now: {c:?}"),
            Fault::PdbRefuses(s, n) => {
                write!(
                    f,
                    "a PodDisruptionBudget holds a pod on {s}'s Node for {n} passes"
                )
            }
            Fault::RebootTool(s, n) => {
                write!(f, "a reboot tool cordons {s}'s Node for {n} passes")
            }
            Fault::QueueDisabled(n) => {
                write!(f, "a person disables the repair queue for {n} passes")
            }
            Fault::DeleteFinished => write!(f, "a person deletes the finished repair entries"),
            Fault::DiesMidCommand => {
                write!(f, "the watcher dies while its next repair command runs")
            }
        }
    }
}

/// How often each fault happens, per pass ("fixed" among what is broken).
#[derive(Clone, Debug)]
pub struct Rates {
    pub breaks: f64,
    pub recovers: f64,
    pub retires: f64,
    pub check_breaks: f64,
    pub check_fixed: f64,
    pub command_breaks: f64,
    pub command_fixed: f64,
    pub pdb: f64,
    pub reboot_tool: f64,
    pub queue_disabled: f64,
    pub delete_finished: f64,
    pub dies_mid_command: f64,
}

impl Default for Rates {
    fn default() -> Self {
        Rates {
            breaks: 0.3,
            recovers: 0.08,
            retires: 0.01,
            check_breaks: 0.06,
            check_fixed: 0.3,
            command_breaks: 0.2,
            command_fixed: 0.15,
            pdb: 0.12,
            reboot_tool: 0.06,
            queue_disabled: 0.03,
            delete_finished: 0.15,
            dies_mid_command: 0.12,
        }
    }
}

/// What drawing faults works on, and what it broke so far (so that it can mend it).
pub struct Chaos {
    rates: Rates,
    /// The machines faults may hit (not the boot servers, which hold the scopes' labels).
    serials: Vec<String>,
    /// The machines broken lately: the faults of commands, health checks and drains go to
    /// them first, where they matter.
    broken: Vec<String>,
    checks: Vec<String>,
    commands: Vec<String>,
}

/// The machines: the machines file the watcher reads and writes, its Nodes file, and what the
/// files do not say (health, commands, pods).
pub struct MachinesWorld {
    /// The watcher's backend: the machines file, with what the world does around each call
    /// ([`Side`]) and nothing else between them, so that every method of the file reaches it.
    backend: RefCell<Intercepted<Document, Side>>,
    /// The snapshot of the files, read again after any change.
    snap: OnceCell<Snapshot>,
    shared: Arc<Mutex<Shared>>,
    settings: Settings,
    /// Every repair command that ran: (serial, generation, step).
    ran: BTreeSet<(String, u64, usize)>,
    /// Every entry index recorded or given out in this scenario.
    indexes: BTreeSet<u64>,
    timed: Vec<(i64, Timed)>,
    tally: BTreeMap<&'static str, usize>,
}

impl MachinesWorld {
    fn invalidate(&mut self) {
        self.snap.take();
        self.side().read = None;
    }

    fn side(&mut self) -> &mut Side {
        &mut self.backend.get_mut().by
    }

    fn file(&mut self) -> &mut Document {
        &mut self.backend.get_mut().inner
    }

    fn count(&mut self, what: &'static str) {
        *self.tally.entry(what).or_default() += 1;
    }

    fn address_of(&self, serial: &str) -> Option<String> {
        self.fleet()
            .machines
            .iter()
            .find(|m| m.serial == serial)
            .and_then(|m| m.address().map(str::to_owned))
    }

    fn node_of(&self, serial: &str) -> Option<String> {
        let a = self.address_of(serial)?;
        self.fleet()
            .nodes
            .iter()
            .find(|n| n.is(&a))
            .map(|n| n.name.clone())
    }

    /// Changes the machines document: sabakan's own changes, or a person's.
    fn edit_doc(&mut self, edit: impl FnOnce(&mut Vec<Value>)) {
        self.invalidate();
        let repair = self.settings.repair.clone();
        let file = self.file();
        let mut doc = file.json().clone();
        if let Some(list) = doc.as_array_mut() {
            edit(list);
        }
        let mut new = Document::in_memory(doc, repair, file.nodes.take())
            .expect("the world's document stays a list of machines");
        new.runner = Box::new(SimRunner(self.shared.clone()));
        let file = self.file();
        new.now = file.now;
        *file = new;
    }

    fn set_state(&mut self, serial: &str, state: &str) {
        let at = rfc3339(self.side().now);
        self.edit_doc(|list| {
            if let Some(m) = list.iter_mut().find(|m| m["spec"]["serial"] == serial)
                && m["status"]["state"] != state
            {
                m["status"] = json!({"state": state, "timestamp": at});
            }
        });
    }

    fn phys_mut<R>(&self, serial: &str, f: impl FnOnce(&mut Phys) -> R) -> Option<R> {
        let mut s = lock(&self.shared);
        s.phys.values_mut().find(|p| p.serial == serial).map(f)
    }

    fn nodes_mut(&mut self) -> Option<&mut Vec<Value>> {
        self.invalidate();
        self.file()
            .nodes
            .as_mut()
            .and_then(|n| n.list["items"].as_array_mut())
    }

    /// Someone else's cordon (`on`), or its end: autorepair's own cordon is left alone.
    fn tool_cordon(&mut self, node: &str, on: bool) {
        let Some(items) = self.nodes_mut() else {
            return;
        };
        let Some(n) = items.iter_mut().find(|n| n["metadata"]["name"] == node) else {
            return;
        };
        if n["metadata"]["annotations"][CORDON_ANNOTATION] == "true" {
            return;
        }
        if on {
            n["spec"]["unschedulable"] = json!(true);
        } else if let Some(spec) = n["spec"].as_object_mut() {
            spec.remove("unschedulable");
        }
    }
}

impl World for MachinesWorld {
    type Family = Machines;
    type Fleet = Snapshot;
    type Backend = Intercepted<Document, Side>;
    type Fault = Fault;
    type Rates = Rates;
    type Chaos = Chaos;
    /// The settings the world plays and judges by: its own ([`settings`]) unless given, such
    /// as a fleet's own procedures and constraints for `autorepair simulate`. Whatever their
    /// commands name, the world's runner answers them: no program runs.
    type Setup = Option<Settings>;

    /// Replicas electing a leader through a Kubernetes Lease, as `run --loop` does.
    fn coordination(
        _: &Option<Settings>,
        replicas: usize,
        start: i64,
    ) -> Option<Box<dyn crate::engine::sim::Coordination>> {
        Some(Box::new(crate::k8s::lease_sim::LeaseReplicas::new(
            replicas, start,
        )))
    }

    fn new(fleet: &Snapshot, setup: &Option<Settings>, start: i64) -> Self {
        let (doc, nodes) = render(fleet, start);
        let mut phys = BTreeMap::new();
        for m in &fleet.machines {
            let Some(a) = m.address() else { continue };
            let broken = selected(m) || unfinished(m);
            // Which step cures a machine that starts broken, by its serial (a fleet is all
            // the world is given).
            let h: usize = m.serial.bytes().map(usize::from).sum();
            let cured_by = (h % 4 != 3).then_some(h % 3);
            phys.insert(
                a.to_owned(),
                Phys {
                    serial: m.serial.clone(),
                    trouble: broken.then_some(cured_by),
                    check: Check::Works,
                    command: Cmd::Works,
                },
            );
        }
        let shared = Arc::new(Mutex::new(Shared {
            phys,
            ..Shared::default()
        }));
        let settings = setup.clone().unwrap_or_else(settings);
        let mut file = Document::in_memory(
            doc,
            settings.repair.clone(),
            Some(NodesFile::in_memory(nodes)),
        )
        .expect("a rendered fleet is a list of machines");
        file.runner = Box::new(SimRunner(shared.clone()));
        file.now = Some(start);
        let pods = fleet
            .nodes
            .iter()
            .map(|n| {
                (
                    n.name.clone(),
                    Pods {
                        count: n.pods,
                        nominal: n.pods,
                        guarded_until: None,
                    },
                )
            })
            .collect();
        let side = Side {
            shared: shared.clone(),
            settings: settings.clone(),
            now: start,
            pods,
            generation: BTreeMap::new(),
            tally: BTreeMap::new(),
            read: None,
        };
        MachinesWorld {
            backend: RefCell::new(Intercepted::wrap(file, side)),
            snap: OnceCell::new(),
            shared,
            settings,
            ran: BTreeSet::new(),
            indexes: BTreeSet::new(),
            timed: Vec::new(),
            tally: BTreeMap::new(),
        }
    }

    fn generate(targets: usize, seed: u64) -> Snapshot {
        generate(targets, seed)
    }

    fn fleet(&self) -> &Snapshot {
        self.snap.get_or_init(|| {
            let mut backend = self.backend.borrow_mut();
            // What the world changed since, or the end of the watcher's pass, is not in the
            // watcher's last read.
            backend.by.read = None;
            backend.snapshot().expect("the world's files always read")
        })
    }

    fn backend(&mut self) -> &mut Intercepted<Document, Side> {
        // The watcher writes through it: what the world read before is stale after.
        self.invalidate();
        self.backend.get_mut()
    }

    fn domain_faults(fleet: &Snapshot) -> Vec<(Fault, Fault)> {
        fleet
            .machines
            .iter()
            .filter(|m| breakable(m))
            .map(|m| {
                (
                    Fault::Breaks {
                        serial: m.serial.clone(),
                        unreachable: false,
                        cured_by: Some(0),
                    },
                    Fault::Recovers(m.serial.clone()),
                )
            })
            .collect()
    }

    fn chaos(fleet: &Snapshot, rates: &Rates) -> Chaos {
        Chaos {
            rates: rates.clone(),
            serials: fleet
                .machines
                .iter()
                .filter(|m| breakable(m))
                .map(|m| m.serial.clone())
                .collect(),
            broken: Vec::new(),
            checks: Vec::new(),
            commands: Vec::new(),
        }
    }

    fn draw(c: &mut Chaos, rng: &mut Rng) -> Vec<Fault> {
        let r = c.rates.clone();
        let mut out = Vec::new();
        let pick = |rng: &mut Rng, list: &[String]| list[rng.random_range(0..list.len())].clone();
        let take = |rng: &mut Rng, list: &mut Vec<String>| {
            list.swap_remove(rng.random_range(0..list.len()))
        };
        if !c.serials.is_empty() {
            if rng.random_bool(r.breaks) {
                let serial = pick(rng, &c.serials);
                c.broken.push(serial.clone());
                if c.broken.len() > 4 {
                    c.broken.remove(0);
                }
                let unreachable = rng.random_bool(0.5);
                let cured_by = rng.random_bool(0.8).then(|| rng.random_range(0..3));
                out.push(Fault::Breaks {
                    serial,
                    unreachable,
                    cured_by,
                });
            }
            if rng.random_bool(r.recovers) {
                out.push(Fault::Recovers(pick(rng, &c.serials)));
            }
            if rng.random_bool(r.retires) {
                out.push(Fault::Retires(pick(rng, &c.serials)));
            }
            let hit = |rng: &mut Rng, c: &Chaos| {
                if !c.broken.is_empty() && rng.random_bool(0.8) {
                    pick(rng, &c.broken)
                } else {
                    pick(rng, &c.serials)
                }
            };
            if rng.random_bool(r.check_breaks) {
                let s = hit(rng, c);
                let how = [Check::Fails, Check::Hangs, Check::Garbage][rng.random_range(0..3)];
                c.checks.push(s.clone());
                out.push(Fault::Check(s, how));
            }
            if rng.random_bool(r.command_breaks) {
                let s = hit(rng, c);
                let how = [Cmd::Fails, Cmd::Hangs, Cmd::Flaky][rng.random_range(0..3)];
                c.commands.push(s.clone());
                out.push(Fault::Command(s, how));
            }
            if rng.random_bool(r.pdb) {
                out.push(Fault::PdbRefuses(hit(rng, c), rng.random_range(1..8)));
            }
            if rng.random_bool(r.reboot_tool) {
                out.push(Fault::RebootTool(
                    pick(rng, &c.serials),
                    rng.random_range(1..6),
                ));
            }
        }
        if !c.checks.is_empty() && rng.random_bool(r.check_fixed) {
            out.push(Fault::Check(take(rng, &mut c.checks), Check::Works));
        }
        if !c.commands.is_empty() && rng.random_bool(r.command_fixed) {
            out.push(Fault::Command(take(rng, &mut c.commands), Cmd::Works));
        }
        if rng.random_bool(r.queue_disabled) {
            out.push(Fault::QueueDisabled(rng.random_range(1..6)));
        }
        if rng.random_bool(r.delete_finished) {
            out.push(Fault::DeleteFinished);
        }
        if rng.random_bool(r.dies_mid_command) {
            out.push(Fault::DiesMidCommand);
        }
        out
    }

    fn apply(&mut self, fault: &Fault, now: i64) {
        self.side().now = now;
        if self.file().now != Some(now) {
            self.file().now = Some(now);
            self.invalidate();
        }
        let until = |passes: u32| now + i64::from(passes) * PASS_SECONDS;
        match fault {
            Fault::Breaks {
                serial,
                unreachable,
                cured_by,
            } => {
                let was = self.phys_mut(serial, |p| {
                    let was = p.trouble.is_some();
                    if !was {
                        p.trouble = Some(*cured_by);
                    }
                    was
                });
                let retired = self.fleet().machines.iter().any(|m| {
                    m.serial == *serial && matches!(m.info.state, State::Retiring | State::Retired)
                });
                if was == Some(false) && !retired {
                    self.count("machines broken");
                    self.set_state(serial, state_of(Some(*cured_by), *unreachable));
                }
            }
            Fault::Recovers(serial) => {
                self.phys_mut(serial, |p| p.trouble = None);
                // sabakan notices at its next check: the world's advance.
            }
            Fault::Retires(serial) => {
                self.count("machines retired");
                self.set_state(serial, "retiring");
            }
            Fault::Check(serial, how) => {
                self.phys_mut(serial, |p| p.check = *how);
                self.invalidate();
            }
            Fault::Command(serial, how) => {
                self.phys_mut(serial, |p| p.command = *how);
            }
            Fault::PdbRefuses(serial, passes) => {
                if let Some(node) = self.node_of(serial) {
                    self.side()
                        .pods
                        .entry(node.clone())
                        .or_default()
                        .guarded_until = Some(until(*passes));
                    self.timed.push((until(*passes), Timed::Pdb(node)));
                }
            }
            Fault::RebootTool(serial, passes) => {
                if let Some(node) = self.node_of(serial) {
                    self.count("reboot-tool cordons");
                    self.tool_cordon(&node, true);
                    self.timed.push((until(*passes), Timed::RebootTool(node)));
                }
            }
            Fault::QueueDisabled(passes) => {
                if super::admin::switch(self.file(), super::labels::QUEUE, false).is_ok() {
                    self.count("queue disabled");
                    self.timed.push((until(*passes), Timed::Queue));
                }
                self.invalidate();
            }
            Fault::DeleteFinished => {
                if let Ok(done) = super::admin::delete(self.file(), &super::admin::Which::Finished)
                {
                    *self.tally.entry("finished entries deleted").or_default() += done.marked.len();
                }
                self.invalidate();
            }
            Fault::DiesMidCommand => lock(&self.shared).die_in_command = true,
        }
    }

    fn advance(&mut self, now: i64) {
        lock(&self.shared).die_in_command = false;
        // What ends by itself.
        let (due, later): (Vec<_>, Vec<_>) = self.timed.drain(..).partition(|(t, _)| *t <= now);
        self.timed = later;
        for (_, t) in due {
            match t {
                Timed::Pdb(node) => {
                    if let Some(p) = self.side().pods.get_mut(&node) {
                        p.guarded_until = None;
                    }
                }
                Timed::RebootTool(node) => self.tool_cordon(&node, false),
                Timed::Queue => {
                    let _ = super::admin::switch(self.file(), super::labels::QUEUE, true);
                }
            }
        }
        // sabakan's health monitoring: a machine's state follows its health; a retiring one is
        // retired.
        let states: Vec<(String, Option<&'static str>)> = {
            // The snapshot first: reading it runs health checks, which take the lock.
            let fleet = self.fleet();
            let s = lock(&self.shared);
            fleet
                .machines
                .iter()
                .map(|m| {
                    let trouble = m
                        .address()
                        .and_then(|a| s.phys.get(a))
                        .and_then(|p| p.trouble);
                    let want = match m.info.state {
                        State::Retiring => Some("retired"),
                        State::Retired => None,
                        State::Unhealthy | State::Unreachable if trouble.is_none() => {
                            Some("healthy")
                        }
                        _ => None,
                    };
                    (m.serial.clone(), want)
                })
                .collect()
        };
        self.side().now = now + PASS_SECONDS;
        for (serial, want) in states {
            if let Some(state) = want {
                self.set_state(&serial, state);
            }
        }
        // Pods come back to schedulable Nodes.
        let schedulable: Vec<String> = self
            .fleet()
            .nodes
            .iter()
            .filter(|n| !n.unschedulable)
            .map(|n| n.name.clone())
            .collect();
        for n in schedulable {
            let p = self.side().pods.entry(n).or_default();
            p.count = p.nominal;
        }
        let now = self.side().now;
        self.file().now = Some(now);
        self.invalidate();
    }

    fn health(&self, fleet: &Snapshot, m: &Machine, now: i64) -> Health<MachinesLevel> {
        let index = Machines::index(fleet, &self.settings, now);
        Machines::assess(&index, m).health
    }

    fn domain<'f>(_fleet: &'f Snapshot, m: &'f Machine) -> &'f str {
        &m.serial
    }

    fn limit_scope<'f>(_fleet: &'f Snapshot, m: &'f Machine) -> Option<&'f str> {
        Some(&m.rack)
    }

    fn down_domains(fleet: &Snapshot, _now: i64) -> Vec<DownFact<'_>> {
        fleet
            .machines
            .iter()
            .filter(|m| unfinished(m) || selected(m))
            .map(|m| DownFact {
                domain: &m.serial,
                scope: &m.rack,
            })
            .collect()
    }

    fn scope_marks<'f>(fleet: &'f Snapshot, m: &'f Machine) -> Vec<&'f [String]> {
        [m.rack.as_str(), kind::CLUSTER]
            .into_iter()
            .filter_map(|k| fleet.scopes.iter().find(|s| s.key == k))
            .map(|s| s.marks.as_slice())
            .collect()
    }

    fn ops(fleet: &Snapshot, now: i64) -> Vec<OpFact<'_, Machines>> {
        let mut out = Vec::new();
        for m in &fleet.machines {
            let entry = m.entry();
            if let Some(e) = entry {
                let finished = e.progress.status.finished() && !e.progress.deleted;
                let repair = owner(m, e)
                    .filter(|p| !p.ops.is_empty() || !finished)
                    .map(|p| p.id);
                out.push(OpFact {
                    id: OpId(e.index),
                    repair,
                    target: Some(m.serial.as_str()),
                    step: Some(Step::Enqueue),
                    run: match e.progress.status {
                        _ if e.progress.deleted => OpRun::Running,
                        // A suspend holds an entry where it stands, but for a drain, which it
                        // abandons on the next pass.
                        Status::Queued | Status::Processing
                            if policy(fleet, m, now) == Some(None)
                                && e.progress.step_status != StepStatus::Draining =>
                        {
                            OpRun::Paused
                        }
                        Status::Queued | Status::Processing => OpRun::Running,
                        Status::Succeeded => OpRun::Succeeded,
                        Status::Failed => OpRun::Failed,
                    },
                });
            }
            for t in &m.marks {
                if let Ok(Mark::Result(r)) = Labels::parse(t) {
                    for id in r.ops.iter::<OpId>() {
                        if entry.is_some_and(|e| e.index == id.0) {
                            continue;
                        }
                        out.push(OpFact {
                            id,
                            repair: Some(r.id),
                            target: Some(m.serial.as_str()),
                            step: Some(Step::Enqueue),
                            run: if r.result == RepairResult::Success {
                                OpRun::Succeeded
                            } else {
                                OpRun::Failed
                            },
                        });
                    }
                }
            }
        }
        out
    }

    fn level_of(_op: &Op) -> MachinesLevel {
        // Creating an entry runs nothing: its steps are judged one by one, each at its own
        // level, by the family's rules.
        MachinesLevel::CHECK
    }

    fn check_pass(
        &mut self,
        before: &Snapshot,
        calls: &CallLog<Machines>,
        now: i64,
    ) -> Result<(), Broken> {
        let runs = {
            let mut s = lock(&self.shared);
            for (k, n) in std::mem::take(&mut s.tally) {
                *self.tally.entry(k).or_default() += n;
            }
            std::mem::take(&mut s.runs)
        };
        for (_, mark) in &calls.added {
            if let Ok(Mark::Result(r)) = Labels::parse(mark)
                && !r.ops.is_empty()
            {
                self.count(match r.result {
                    RepairResult::Success => "repairs succeeded",
                    RepairResult::Failure => "repairs failed",
                    RepairResult::Enoperm => "repairs refused (enoperm)",
                });
            }
        }
        if calls.crashed {
            self.count("watcher kills");
        }
        self.check_rules(before, calls, &runs, now)
    }

    fn check_end(&self, now: i64) -> Result<(), Broken> {
        let fleet = self.fleet();
        // The engine's liveness judges machines still broken; an entry must also end on a
        // machine that is healthy again (its health check finishes it), unless a suspend
        // holds it.
        if let Some(m) = fleet.machines.iter().find(|m| {
            m.entry()
                .is_some_and(|e| !e.progress.status.finished() && !e.progress.deleted)
                && policy(fleet, m, now) != Some(None)
        }) {
            return broken(
                "liveness: a repair entry never finished",
                format!(
                    "{} ({}) still has an unfinished entry after the quiet passes: {:?}",
                    m.serial,
                    m.info.state.as_str(),
                    m.entry().map(|e| e.progress.value())
                ),
            );
        }
        for n in fleet.nodes.iter().filter(|n| n.cordoned_by_us) {
            let holding = fleet.machines.iter().any(|m| {
                m.address().is_some_and(|a| n.is(a))
                    && m.entry().is_some_and(|e| {
                        let p = e.progress;
                        p.status == Status::Processing
                            && !p.deleted
                            && matches!(p.step_status, StepStatus::Draining | StepStatus::Watching)
                    })
            });
            if !holding {
                return broken(
                    "a cordon left behind",
                    format!(
                        "Node {} is still cordoned by autorepair after the quiet passes, with no entry draining or watching it",
                        n.name
                    ),
                );
            }
        }
        Ok(())
    }

    fn tally(&self) -> Vec<(&'static str, usize)> {
        let mut t = self.tally.clone();
        for (k, n) in self
            .backend
            .borrow()
            .by
            .tally
            .iter()
            .chain(&lock(&self.shared).tally)
        {
            *t.entry(k).or_default() += n;
        }
        t.into_iter().collect()
    }
}

#[cfg(test)]
mod tests;
