//! The machines family: sabakan machines repaired by CKE's repair procedures
//! (CKE's docs/repair.md and docs/sabakan-triggered-repair.md, as its code does them),
//! with every bit of progress in the machines' own sabakan labels (docs/machines.md).

pub mod admin;
mod brake;
pub mod cli;
pub mod command;
pub mod config;
pub mod document;
pub mod drain;
pub mod etcd;
pub mod face;
pub mod file;
pub mod labels;
pub mod live;
pub mod man;
pub mod options;
#[cfg(any(test, feature = "testkit"))]
pub mod sim;

use crate::engine::Level;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// The ladder: how far into a repair operation's steps a repair may go. `check` runs the
/// health check and the success command only; `step-N` allows the first N steps of the
/// operation (`step-8` every step, however many). A CKE step index `i` (0-based) runs at
/// `step-(i+1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MachinesLevel(u8);

impl MachinesLevel {
    pub const CHECK: MachinesLevel = MachinesLevel(0);
    /// The highest level: every step.
    pub const ALL_STEPS: MachinesLevel = MachinesLevel(8);

    /// `step-n`, for n in 1..=8; beyond 8 it is `step-8`.
    pub fn step(n: usize) -> MachinesLevel {
        MachinesLevel(n.min(8) as u8)
    }

    /// The level a repair needs to run an operation of `steps` steps.
    pub fn for_steps(steps: usize) -> MachinesLevel {
        MachinesLevel::step(steps)
    }

    /// How many steps this level allows (`usize::MAX` for `step-8`).
    pub fn steps(self) -> usize {
        if self == MachinesLevel::ALL_STEPS {
            usize::MAX
        } else {
            usize::from(self.0)
        }
    }
}

impl Level for MachinesLevel {
    const LADDER: &'static [Self] = &[
        MachinesLevel(0),
        MachinesLevel(1),
        MachinesLevel(2),
        MachinesLevel(3),
        MachinesLevel(4),
        MachinesLevel(5),
        MachinesLevel(6),
        MachinesLevel(7),
        MachinesLevel(8),
    ];
    fn as_str(self) -> &'static str {
        const NAMES: [&str; 9] = [
            "check", "step-1", "step-2", "step-3", "step-4", "step-5", "step-6", "step-7", "step-8",
        ];
        NAMES[usize::from(self.0)]
    }
}

impl Serialize for MachinesLevel {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl fmt::Display for MachinesLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that names no level of the machines' ladder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown repair level {0:?}: use {names}", names = MachinesLevel::names())]
pub struct UnknownMachinesLevel(pub String);

impl FromStr for MachinesLevel {
    type Err = UnknownMachinesLevel;
    fn from_str(s: &str) -> Result<Self, UnknownMachinesLevel> {
        MachinesLevel::from_name(s).ok_or_else(|| UnknownMachinesLevel(s.to_owned()))
    }
}

/// A repair entry's index, as CKE numbers its queue entries: the operation id of the machines
/// family. Indexes start at 1 and grow up to [`MAX_INDEX`]; the backend gives them out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(into = "String")]
pub struct OpId(pub u64);

/// The highest entry index: CKE's indexes are int64, and one past it would not read back in
/// CKE's tools (nor in ours: an index above it is not one).
pub const MAX_INDEX: u64 = i64::MAX as u64;

impl From<OpId> for String {
    fn from(id: OpId) -> String {
        id.to_string()
    }
}

impl fmt::Display for OpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A text that names no repair entry index.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a repair entry index: a whole number from 1 to {MAX_INDEX}, without leading zeros"
)]
pub struct NotAnIndex(pub String);

impl FromStr for OpId {
    type Err = NotAnIndex;
    fn from_str(s: &str) -> Result<Self, NotAnIndex> {
        let refused = || NotAnIndex(s.to_owned());
        if s.is_empty() || s.starts_with('0') || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(refused());
        }
        match s.parse() {
            Ok(n) if n <= MAX_INDEX => Ok(OpId(n)),
            _ => Err(refused()),
        }
    }
}

pub mod entry;
pub mod procedure;
pub mod snapshot;

use crate::engine::ObjectRef;
use crate::engine::family::{
    Assessment, BackDomain, DownDomain, Family, Holder, OpState, Operation, Role, ScopeChain, Words,
};
use crate::engine::marks::{Codec, Mark, read_all};
use crate::engine::object::parse_object_ref;
use crate::engine::policy::{Policy, object_policy};
use crate::engine::text::{FxMap, Text};
use crate::sabakan::State;
use crate::sabakan::client::{MachineParams, Variables};
use entry::{Entry, Progress, Status};
use labels::Labels;
use snapshot::{Machine, Node, Snapshot, Switch, kind};

/// What an operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// Create the repair entry (queued).
    Enqueue,
    /// Record a transition of the entry.
    Record,
    /// Cordon the Node and evict its pods.
    Drain,
    /// Run a repair command or the success command.
    Run,
    /// Remove a deleted entry.
    Dequeue,
    Uncordon,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = serde_json::to_value(self).expect("a step serialises");
        f.write_str(s.as_str().unwrap_or("?"))
    }
}

/// A command as the configuration gives it; the machine's address is appended when it runs.
/// Shown (plans, `--dry-run`, logs, JSON) as its program and the number of its arguments
/// only: CKE repair commands carry BMC passwords in their arguments (`ipmitool -P …`).
#[derive(Clone, PartialEq, Eq, Serialize)]
pub struct Command {
    #[serde(serialize_with = "shown_argv")]
    pub argv: Vec<String>,
    /// Seconds; 0 = none.
    pub timeout: u64,
    pub retries: u32,
    /// Seconds between attempts.
    pub interval: u64,
}

/// The program and how many arguments follow it, never the arguments themselves.
fn shown(argv: &[String]) -> String {
    match argv.split_first() {
        None => String::new(),
        Some((program, [])) => program.clone(),
        Some((program, [_])) => format!("{program} (+1 argument)"),
        Some((program, rest)) => format!("{program} (+{} arguments)", rest.len()),
    }
}

fn shown_argv<S: serde::Serializer>(argv: &[String], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&shown(argv))
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&shown(&self.argv))
    }
}

impl fmt::Debug for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Command")
            .field("argv", &shown(&self.argv))
            .field("timeout", &self.timeout)
            .field("retries", &self.retries)
            .field("interval", &self.interval)
            .finish()
    }
}

/// One change to the world.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Op {
    /// Create the machine's repair entry; the backend gives it the next index.
    Enqueue {
        serial: String,
        operation: String,
        machine_type: String,
        /// The pass's clock: the entry's first transition.
        at: i64,
    },
    /// Write the entry's progress label.
    Record {
        serial: String,
        progress: Progress,
        why: String,
    },
    /// Record `progress` (draining), then cordon the Node and evict its pods.
    Drain {
        serial: String,
        node: String,
        progress: Option<Progress>,
    },
    /// Record `before` (if any) first, then run the command with the address appended; then
    /// record `after_ok` or `after_failure`.
    Run {
        serial: String,
        address: String,
        what: String,
        command: Command,
        before: Option<Progress>,
        after_ok: Option<Progress>,
        after_failure: Progress,
    },
    /// Remove a deleted entry and the pending marks that name it.
    Dequeue {
        serial: String,
        marks: Vec<String>,
    },
    Uncordon {
        node: String,
    },
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Enqueue {
                operation,
                machine_type,
                ..
            } => write!(f, "create repair entry ({operation}, {machine_type})"),
            Op::Record { progress, why, .. } => {
                write!(
                    f,
                    "record {}={} ({why})",
                    labels::PROGRESS,
                    progress.value()
                )
            }
            Op::Drain { node, .. } => write!(f, "cordon node {node} and evict its pods"),
            Op::Run {
                what,
                command,
                address,
                ..
            } => write!(f, "run {what}: {command} {address}"),
            Op::Dequeue { .. } => write!(f, "remove the deleted repair entry"),
            Op::Uncordon { node } => write!(f, "uncordon node {node}"),
        }
    }
}

/// The family's settings: the repair configuration, the trigger's constraints and query.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub repair: config::Repair,
    pub constraints: config::Constraints,
    /// sabakan's `$having`/`$notHaving` for machines to repair.
    pub query: Variables,
}

impl Settings {
    /// CKE's query for sabakan-triggered repair (CKE's sabakan/query.go).
    pub fn default_query() -> Variables {
        Variables::auto_repair()
    }
}

/// The planner's limits for a machines fleet. CKE brings limits of its own, which the family
/// enforces: `maximum-repair-queue-entries` (its cluster limiter, CKE's brake on a mass
/// failure) and `max_concurrent_repairs`. The engine's failure-domain limits, which CKE does
/// not have, apply only where the config file sets them: at their defaults (one machine under
/// repair, two down per rack, four in all) they would silently override CKE's settings, and an
/// operator moving from CKE would not get CKE's behaviour from them (docs/machines.md).
pub fn limits(
    config: &crate::engine::Limits,
    given: &std::collections::BTreeSet<String>,
) -> crate::engine::Limits {
    let mut l = config.clone();
    for (key, value) in [
        ("max_down_nodes_per_group", &mut l.max_down_nodes_per_group),
        ("max_down_nodes", &mut l.max_down_nodes),
        ("max_domains_under_repair", &mut l.max_domains_under_repair),
    ] {
        if !given.contains(key) {
            *value = usize::MAX;
        }
    }
    l
}

/// `machine/SERIAL`, `rack/N`, `cluster`, or a bare serial.
pub fn parse_object(text: &str) -> Result<ObjectRef, crate::engine::object::ObjectRefError> {
    parse_object_ref(
        text,
        &[kind::MACHINE, kind::RACK],
        &[kind::CLUSTER],
        kind::MACHINE,
    )
}

/// The machines family, as the engine sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Machines;

pub type Plan = crate::engine::Plan<Machines>;

/// Plans one pass.
pub fn plan(
    snap: &Snapshot,
    settings: &Settings,
    now: i64,
    limits: &crate::engine::Limits,
    seed: u64,
) -> Plan {
    crate::engine::plan::<Machines>(snap, settings, now, limits, seed)
}

/// Where a machine stands, in its plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Facts {
    pub address: Option<Text>,
    /// sabakan's state, upper-case (not `state`: the plan's own field has that name).
    pub sabakan_state: &'static str,
    pub rack: i64,
    pub node: Option<Text>,
    /// The repair entry, if it has one.
    pub entry: Option<EntryFacts>,
    /// `autorepair repair enable|disable` (fleet-wide; for the metrics).
    #[serde(skip)]
    pub queue_enabled: bool,
    /// `autorepair auto-repair enable|disable` (fleet-wide; for the metrics).
    #[serde(skip)]
    pub auto_repair_enabled: bool,
}

/// A repair entry as plans and metrics show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EntryFacts {
    pub index: u64,
    pub operation: String,
    pub status: Status,
    pub step: usize,
    pub step_status: &'static str,
    pub deleted: bool,
}

impl fmt::Display for EntryFacts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "#{} {} step {} {}{}",
            self.index,
            self.status,
            self.step + 1,
            self.step_status,
            if self.deleted { " (deleted)" } else { "" }
        )
    }
}

/// A scope's policy, and its `suspend --all` (which holds every machine under it).
type ScopePolicy = (Option<Policy<MachinesLevel>>, Option<Policy<MachinesLevel>>);

/// Per-pass lookups.
pub struct Index<'a> {
    snap: &'a Snapshot,
    settings: &'a Settings,
    now: i64,
    scope_policy: FxMap<&'a str, ScopePolicy>,
    cluster_key: Option<&'a str>,
    /// Machines the query selects (non-healthy in sabakan), by position.
    selected: Vec<bool>,
    /// Why the cluster limiter holds every new entry this pass, if it does.
    cluster_hold: Option<String>,
    /// CKE's etcd gate: why no repair step moves this pass, if none does.
    etcd_hold: Option<etcd::Closed>,
    /// Entries that may take a step this pass (CKE's candidates within max_concurrent_repairs).
    taken: Vec<bool>,
    /// Nodes by name and by InternalIP.
    nodes: FxMap<&'a str, &'a Node>,
}

impl<'a> Index<'a> {
    pub fn node(&self, m: &Machine) -> Option<&'a Node> {
        self.nodes.get(m.address()?).copied()
    }

    /// The machine's position in the snapshot (the planner hands out references into it).
    fn position(&self, m: &Machine) -> usize {
        let base = self.snap.machines.as_ptr() as usize;
        (m as *const Machine as usize).wrapping_sub(base) / std::mem::size_of::<Machine>().max(1)
    }

    /// The least destructive level allowed on the machine, nearest scope first.
    fn allowed(&self, m: &'a Machine) -> Option<MachinesLevel> {
        self.policy(m).and_then(Policy::allowed)
    }

    /// The machine's effective policy or suspend, nearest scope first.
    pub(super) fn policy(&self, m: &'a Machine) -> Option<Policy<MachinesLevel>> {
        let own = object_policy(read_all::<Labels>(&m.marks), self.now).policy;
        let scopes = [Some(m.rack.as_str()), self.cluster_key]
            .into_iter()
            .flatten()
            .filter_map(|k| self.scope_policy.get(k).copied());
        // A scope's `suspend --all` holds the machine whatever nearer objects say.
        let held = scopes.clone().find_map(|(_, over_all)| over_all);
        held.or_else(|| {
            crate::engine::policy::effective(
                std::iter::once(own).chain(scopes.map(|(policy, _)| policy)),
            )
        })
    }

    /// The level a new repair of this machine needs: its operation's steps, capped by what
    /// it may use, so that the allowed steps run and the rest is refused (enoperm). That is
    /// the level of a once-off request waiting on the machine (a pending repair that recorded
    /// nothing: the engine serves it next, up to its own level whatever the policy, docs/design.md,
    /// rule 1), else what its policy allows.
    fn need(&self, m: &'a Machine, op: &config::Operation) -> MachinesLevel {
        let full = MachinesLevel::for_steps(op.repair_steps.len());
        let requested = pendings(m)
            .filter(|(_, p)| p.ops.is_empty())
            .map(|(_, p)| p.repair)
            .max();
        match requested.or_else(|| self.allowed(m)) {
            Some(a) if a >= MachinesLevel::step(1) && full > a => a,
            _ => full,
        }
    }
}

/// The operation name CKE gives a machine's entry: its state, lower-case.
fn operation_of(m: &Machine) -> String {
    m.info.state.as_str().to_ascii_lowercase()
}

/// sabakan's matching rules for `searchMachines` (sabakan's `MatchMachine`, gql/match.go).
pub fn matches(p: &MachineParams, m: &crate::sabakan::Machine, now: i64, having: bool) -> bool {
    let days = || {
        jiff::Timestamp::from_second(now)
            .map(|t| m.retire_date.days_from(t))
            .unwrap_or(0)
    };
    // having: every condition holds; notHaving: any condition excludes.
    let conds: [Option<bool>; 5] = [
        p.labels.as_ref().filter(|l| !l.is_empty()).map(|l| {
            let has = |n: &str, v: &str| m.labels.iter().any(|(a, b)| a == n && b == v);
            if having {
                l.iter().all(|x| has(&x.name, &x.value))
            } else {
                l.iter().any(|x| has(&x.name, &x.value))
            }
        }),
        p.racks
            .as_ref()
            .filter(|r| !r.is_empty())
            .map(|r| r.contains(&m.rack)),
        p.roles
            .as_ref()
            .filter(|r| !r.is_empty())
            .map(|r| r.contains(&m.role)),
        p.states
            .as_ref()
            .filter(|s| !s.is_empty())
            .map(|s| s.iter().any(|s| s == m.state.as_str())),
        p.min_days_before_retire.map(|n| days() >= n),
    ];
    if having {
        conds.iter().flatten().all(|c| *c)
    } else {
        conds.iter().flatten().any(|c| *c)
    }
}

fn selected(q: &Variables, m: &Machine, now: i64) -> bool {
    q.having
        .as_ref()
        .is_none_or(|p| matches(p, &m.info, now, true))
        && !q
            .not_having
            .as_ref()
            .is_some_and(|p| matches(p, &m.info, now, false))
}

/// The repairs recorded as pending on a machine.
fn pendings(
    m: &Machine,
) -> impl Iterator<Item = (&str, crate::engine::marks::Pending<'_, MachinesLevel>)> {
    m.marks.iter().filter_map(|t| match Labels::parse(t) {
        Ok(Mark::Pending(p)) => Some((t.as_str(), p)),
        _ => None,
    })
}

impl Family for Machines {
    type Level = MachinesLevel;
    type Marks = Labels;
    type OpId = OpId;
    type Op = Op;
    type Step = Step;
    type OpStatus = Status;
    type Facts = Facts;
    type Snapshot = Snapshot;
    type Target = Machine;
    type Settings = Settings;
    type Index<'a> = Index<'a>;

    const WORDS: Words = Words {
        target: kind::MACHINE,
        targets: "machines",
        domain: "machine",
        domains: "machines",
        fleet: "cluster",
        domain_scope: "rack",
        scopes: "its rack or the cluster",
        op: "repair entry",
        ops: "repair entries",
        op_vanished: "is no longer in the machine's labels",
    };

    fn index<'a>(snap: &'a Snapshot, settings: &'a Settings, now: i64) -> Index<'a> {
        let scope_policy = snap
            .scopes
            .iter()
            .map(|s| {
                let own = object_policy(read_all::<Labels>(&s.marks), now);
                (s.key.as_str(), (own.policy, own.over_all))
            })
            .collect();
        let cluster_key = snap
            .scopes
            .iter()
            .find(|s| s.object.is(kind::CLUSTER))
            .map(|s| s.key.as_str());
        // The query `auto-repair set-variables` stored wins over the config's; one that
        // cannot be read selects by the config's for the limits' counts, and the trigger
        // holds (procedure::auto_repair_hold).
        let query = match &snap.variables {
            Some(Ok(stored)) => stored,
            _ => &settings.query,
        };
        let selected: Vec<bool> = snap
            .machines
            .iter()
            .map(|m| selected(query, m, now))
            .collect();
        let mut nodes: FxMap<&'a str, &'a Node> = FxMap::default();
        for n in &snap.nodes {
            for ip in &n.internal_ips {
                nodes.entry(ip.as_str()).or_insert(n);
            }
        }
        // A Node named after the address wins over one that only lists it.
        for n in &snap.nodes {
            nodes.insert(n.name.as_str(), n);
        }
        let mut index = Index {
            nodes,
            snap,
            settings,
            now,
            scope_policy,
            cluster_key,
            selected,
            cluster_hold: None,
            etcd_hold: None,
            taken: vec![false; snap.machines.len()],
        };
        index.etcd_hold = procedure::etcd_hold(&index);
        index.cluster_hold = procedure::cluster_hold(&index);
        index.taken = procedure::take(&index);
        index
    }

    fn holders(snap: &Snapshot) -> Vec<Holder<'_>> {
        snap.scopes
            .iter()
            .map(|s| Holder {
                object: s.object.clone(),
                marks: &s.marks,
                role: Role::Scope {
                    key: &s.key,
                    halt_key: s.object.is(kind::RACK).then_some(s.key.as_str()),
                },
            })
            .collect()
    }

    fn targets(snap: &Snapshot) -> &[Machine] {
        &snap.machines
    }

    fn name(m: &Machine) -> &str {
        &m.serial
    }

    fn marks(m: &Machine) -> &[String] {
        &m.marks
    }

    fn assess<'a>(index: &Index<'a>, m: &'a Machine) -> Assessment<'a, Machines> {
        let pos = index.position(m);
        let health = procedure::health(index, pos, m);
        let mut chain: Vec<&'a str> = vec![m.rack.as_str()];
        chain.extend(index.cluster_key);
        let broken = health.is_broken();
        Assessment {
            health,
            scopes: ScopeChain::new(&chain),
            halt_key: Some(m.rack.as_str()),
            domain: broken.then_some(m.serial.as_str()),
            home: &m.serial,
            granted: None,
            // CKE retries nothing by itself: a failed entry stays until a person deletes it
            // (its per-machine limiter), so `[limits] retries` does not apply here.
            retries: Some(0),
            facts: Facts {
                address: m.address().map(|a| Text::Owned(a.to_owned())),
                sabakan_state: m.info.state.as_str(),
                rack: m.info.rack,
                node: index.node(m).map(|n| Text::Owned(n.name.clone())),
                entry: m.entry().map(|e| EntryFacts {
                    index: e.index,
                    operation: e.operation.clone(),
                    status: e.progress.status,
                    step: e.progress.step,
                    step_status: e.progress.step_status.as_str(),
                    deleted: e.progress.deleted,
                }),
                queue_enabled: index.snap.queue.on(),
                auto_repair_enabled: index.snap.auto_repair.on(),
            },
        }
    }

    fn chain(_m: &Machine, _level: MachinesLevel) -> Option<&'static [Step]> {
        Some(&[Step::Enqueue])
    }

    fn build_ops<'a>(
        index: &Index<'a>,
        m: &'a Machine,
        _steps: &[Step],
    ) -> Result<Vec<Op>, String> {
        if m.entry().is_some() {
            return Err("it already has a repair entry".into());
        }
        let operation = operation_of(m);
        Entry::value(1, &operation, &m.info.bmc_type).map_err(|e| e.to_string())?;
        Ok(vec![Op::Enqueue {
            serial: m.serial.clone(),
            operation,
            machine_type: m.info.bmc_type.clone(),
            at: index.now,
        }])
    }

    fn step_of(op: &Op) -> Step {
        match op {
            Op::Enqueue { .. } => Step::Enqueue,
            Op::Record { .. } => Step::Record,
            Op::Drain { .. } => Step::Drain,
            Op::Run { .. } => Step::Run,
            Op::Dequeue { .. } => Step::Dequeue,
            Op::Uncordon { .. } => Step::Uncordon,
        }
    }

    fn operations<'a>(index: &Self::Index<'a>) -> Vec<Operation<'a, Machines>> {
        let mut out = Vec::new();
        for m in &index.snap.machines {
            let Some(e) = m.entry() else { continue };
            let pending: Vec<_> = pendings(m).map(|(_, p)| p).collect();
            // The repair that records the entry; else (a pass died between creating the entry
            // and recording it) the newest pending repair that records none, only while the
            // entry is unfinished and not older than that repair: a once-off request (a pending
            // repair without operations too) must not inherit an old entry's result.
            let owner = pending
                .iter()
                .find(|p| p.ops.iter::<OpId>().any(|id| id.0 == e.index))
                .or_else(|| {
                    pending
                        .iter()
                        .filter(|p| p.ops.is_empty())
                        .filter(|p| {
                            !e.progress.status.finished()
                                && !e.progress.deleted
                                && e.progress.last_transition >= p.since
                        })
                        .max_by_key(|p| p.since)
                });
            let Some(owner) = owner else { continue };
            let p = e.progress;
            let (state, why) = match p.status {
                _ if p.deleted => (OpState::Running, None),
                Status::Queued | Status::Processing if procedure::paused(index, m, p) => {
                    (OpState::Paused, None)
                }
                // As CKE: the gate holds every entry where it stands, its slot kept.
                Status::Queued | Status::Processing if let Some(closed) = &index.etcd_hold => (
                    OpState::Running,
                    Some(format!(
                        "the etcd gate holds every repair step (as CKE's): {closed}; entry #{} moves once etcd is good for repair",
                        e.index
                    )),
                ),
                // CKE's queue switch holds every entry, not one target: the entry stays under
                // way (its slot kept, as CKE's limiter keeps it), and says why it moves not.
                Status::Queued | Status::Processing if !index.snap.queue.on() => (
                    OpState::Running,
                    Some(match &index.snap.queue {
                        Switch::Unreadable(why) => format!(
                            "the repair queue's switch cannot be read ({why}): entry #{} starts no drain or command until `autorepair repair enable` or `disable` sets it",
                            e.index
                        ),
                        _ => format!(
                            "the repair queue is disabled: entry #{} starts no drain or command until `autorepair repair enable`",
                            e.index
                        ),
                    }),
                ),
                Status::Queued | Status::Processing => (OpState::Running, None),
                Status::Succeeded => (OpState::Succeeded, None),
                Status::Failed => (
                    OpState::Failed,
                    Some(format!(
                        "repair entry #{} failed at step {} ({})",
                        e.index,
                        p.step + 1,
                        p.step_status.as_str()
                    )),
                ),
            };
            out.push(Operation {
                id: OpId(e.index),
                seq: e.index,
                state,
                status: Some(p.status),
                repair: Some(owner.id),
                target: Some(m.serial.as_str()),
                step: Some(Step::Enqueue),
                ended: p.status.finished().then_some(p.last_transition),
                why,
            });
        }
        out
    }

    fn down_domains<'a>(index: &Self::Index<'a>) -> Vec<DownDomain<'a>> {
        index
            .snap
            .machines
            .iter()
            .enumerate()
            .filter_map(|(i, m)| {
                let under_way = m.entry().is_some_and(|e| !e.progress.status.finished());
                let state = if under_way {
                    "under repair"
                } else if index.selected[i] {
                    "unhealthy"
                } else {
                    return None;
                };
                Some(DownDomain {
                    name: &m.serial,
                    scope_key: &m.rack,
                    scope_name: &m.rack,
                    state,
                })
            })
            .collect()
    }

    fn back_domains<'a>(index: &Self::Index<'a>, since: i64) -> Vec<BackDomain<'a>> {
        index
            .snap
            .machines
            .iter()
            // A machine leaves the down set by coming back healthy or by leaving service
            // (retiring, then retired): either ends its part in a storm, and a storm that
            // ended must be followed by its cool-down.
            .filter(|m| {
                matches!(
                    m.info.state,
                    State::Healthy | State::Retiring | State::Retired
                )
            })
            .filter_map(|m| {
                // sabakan gives the seconds since the state last changed; rounded down, the
                // return is later, which holds longer, never shorter.
                let ago = m.info.duration;
                let at = index.now.saturating_sub(ago.max(0.0).floor() as i64);
                (ago.is_finite() && at >= since).then(|| BackDomain {
                    name: &m.serial,
                    scope_key: &m.rack,
                    scope_name: &m.rack,
                    at,
                })
            })
            .collect()
    }

    fn domain_text(_index: &Index<'_>, name: &str) -> Text {
        Text::Owned(name.to_owned())
    }

    fn progress<'a>(index: &Index<'a>, now: i64) -> Vec<crate::engine::family::Progress<Machines>> {
        procedure::progress(index, now)
    }
}

#[cfg(test)]
mod tests;
