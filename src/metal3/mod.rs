//! The metal3 family: Cluster API Machines on BareMetalHosts, fenced and power-cycled through
//! annotations (the design of metal3-docs PR #80, never merged; docs/metal3.md), drained, or
//! reprovisioned.
//!
//! Two layers. The engine decides whether a repair may **start** (policy, suspends, limits, the
//! reboot-loop guard) and keeps its pending/result annotations on the Machine. Once a power cycle
//! started, the design's protocol ([`protocol`]) carries it to its end every pass, from the
//! annotations and power states alone, whatever the policy says by then: stopping half-way would
//! leave a host powered off.
//!
//! A power cycle's steps, as the design's truth table drives them: autorepair sets the request
//! annotation on the Machine (if nobody did) and its reboot annotation on the host; the host is
//! observed off; the Node is backed up and deleted; the request is removed; the reboot annotation
//! is removed, so the host powers on; the Node re-registers and gets its labels back.

pub mod due;
pub mod face;
pub mod file;
#[cfg(any(test, feature = "testkit"))]
pub mod fixture;
mod health;
pub mod kube;
pub mod man;
pub mod marks;
pub mod objects;
pub mod options;
pub mod protocol;
pub mod remediation;
#[cfg(any(test, feature = "testkit"))]
pub mod sim;

use crate::engine::family::{
    Assessment, BackDomain, DownDomain, Family, Health, Holder, Need, Operation, Progress, Role,
    ScopeChain, Unrecorded, Words,
};
use crate::engine::marks::{Codec, Mark};
use crate::engine::object::{ObjectRef, ObjectRefError, parse_object_ref};
use crate::engine::text::{FxMap, Text};
use crate::engine::{Level, RepairResult};
use marks::Annotations;
use objects::{Host, Machine, Node, Snapshot, kind};
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// The ladder, least destructive first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metal3Level {
    /// Cordon the Node and evict its Pods: workloads move away, the host keeps its power.
    Drain,
    /// Fence: host off, Node deleted, host on (the design's protocol).
    PowerCycle,
    /// Delete the Machine so that its owner (MachineSet, control plane) replaces it.
    Reprovision,
}

impl Level for Metal3Level {
    const LADDER: &'static [Self] = &[
        Metal3Level::Drain,
        Metal3Level::PowerCycle,
        Metal3Level::Reprovision,
    ];
    fn as_str(self) -> &'static str {
        match self {
            Metal3Level::Drain => "drain",
            Metal3Level::PowerCycle => "power-cycle",
            Metal3Level::Reprovision => "reprovision",
        }
    }
}

impl fmt::Display for Metal3Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that names no [`Metal3Level`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown repair level {0:?}: use {names}", names = Metal3Level::names())]
pub struct UnknownMetal3Level(pub String);

impl FromStr for Metal3Level {
    type Err = UnknownMetal3Level;
    fn from_str(s: &str) -> Result<Self, UnknownMetal3Level> {
        Metal3Level::from_name(s).ok_or_else(|| UnknownMetal3Level(s.to_owned()))
    }
}

/// What an operation does; each level runs one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    Drain,
    PowerCycle,
    Delete,
}

impl Step {
    pub const ALL: [Step; 3] = [Step::Drain, Step::PowerCycle, Step::Delete];
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Drain => "drain",
            Step::PowerCycle => "power-cycle",
            Step::Delete => "delete",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A text that names no step.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a step: the steps are drain, power-cycle and delete")]
pub struct NotAStep(pub String);

impl FromStr for Step {
    type Err = NotAStep;
    fn from_str(s: &str) -> Result<Self, NotAStep> {
        Step::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| NotAStep(s.to_owned()))
    }
}

/// A text that names no operation (`<step>.<repair id>`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotAnOperation {
    #[error("{0:?} is not <step>.<repair id>")]
    Shape(String),
    #[error("operation {op:?}: {repair:?} is not a repair id (a UUID)")]
    Repair { op: String, repair: String },
    #[error("operation {op:?}: {step}")]
    Step { op: String, step: NotAStep },
}

/// An operation's id: its step and the repair it belongs to (`power-cycle.<repair id>`), so
/// ids never repeat across Machines or repairs; the watcher runs each step once per repair.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(into = "String")]
pub struct OpId {
    pub step: Step,
    pub repair: String,
}

impl From<OpId> for String {
    fn from(id: OpId) -> String {
        id.to_string()
    }
}

impl fmt::Display for OpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.step, self.repair)
    }
}

impl FromStr for OpId {
    type Err = NotAnOperation;
    fn from_str(s: &str) -> Result<Self, NotAnOperation> {
        let (step, repair) = s
            .split_once('.')
            .ok_or_else(|| NotAnOperation::Shape(s.to_owned()))?;
        if !crate::engine::marks::is_uuid(repair) {
            return Err(NotAnOperation::Repair {
                op: s.to_owned(),
                repair: repair.to_owned(),
            });
        }
        Ok(OpId {
            step: step.parse().map_err(|step| NotAnOperation::Step {
                op: s.to_owned(),
                step,
            })?,
            repair: repair.to_owned(),
        })
    }
}

impl OpId {
    /// The id of `op` submitted on `target` with `reason` (`autorepair:<repair id>`), as every
    /// backend of this family returns it.
    pub fn of_submission(
        target: &str,
        op: &Op,
        reason: &str,
    ) -> Result<OpId, crate::engine::BackendError> {
        let repair = crate::engine::plan::repair_of_reason(reason).ok_or_else(|| {
            crate::engine::BackendError::Api(format!(
                "machine/{target}: {op}: the reason {reason:?} names no repair"
            ))
        })?;
        Ok(OpId {
            step: <Metal3 as Family>::step_of(op),
            repair: repair.to_owned(),
        })
    }
}

/// How hard the host is powered off: `hard` (the default) cuts power at once; `soft` asks the
/// OS first (an ACPI shutdown through Ironic) and can take minutes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PowerMode {
    #[default]
    Hard,
    Soft,
}

impl PowerMode {
    /// The reboot annotation's value, as the baremetal-operator's webhook accepts it.
    pub fn annotation(self) -> &'static str {
        match self {
            PowerMode::Hard => r#"{"mode":"hard"}"#,
            PowerMode::Soft => r#"{"mode":"soft"}"#,
        }
    }
}

/// How a powered-off host's Node is fenced, so that its workloads start elsewhere.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fencing {
    /// Delete the Node (the design's way), its labels and annotations backed up on the Machine
    /// and given back when it re-registers.
    #[default]
    DeleteNode,
    /// Keep the Node and add the taint `node.kubernetes.io/out-of-service=nodeshutdown:NoExecute`
    /// (Kubernetes ≥ 1.28; what CAPM3 does there): Pods are deleted and volumes detached,
    /// nothing of the Node is lost. Removed once the host is back on and the Node Ready.
    OutOfServiceTaint,
}

/// One change to the world.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Op {
    /// Cordon the Node and evict its Pods (not DaemonSet or mirror Pods).
    Drain { node: String },
    /// Start a power cycle: the request on the Machine (unless set) and the reboot annotation
    /// on the host.
    PowerOff {
        machine: String,
        host: String,
        mode: PowerMode,
    },
    /// Delete the Machine; its owner creates a new one.
    DeleteMachine { machine: String },
    /// Back the Node's labels and annotations up on its Machine, then delete the Node.
    DeleteNode { machine: String, node: String },
    /// Remove the request annotation from the Machine.
    ClearRequest { machine: String },
    /// Remove autorepair's reboot annotation: the host powers on.
    PowerOn { host: String },
    /// Merge the backed-up labels and annotations into the re-registered Node (its own win),
    /// then drop the backup.
    RestoreNode { machine: String, node: String },
    /// Record on the Machine that autorepair taints its Node, then add the out-of-service taint
    /// to the Node (instead of [`Op::DeleteNode`]).
    TaintNode { machine: String, node: String },
    /// Remove the out-of-service taint autorepair added (if still there), then the record.
    UntaintNode { machine: String, node: String },
    /// Record on the Machine which remediation object a repair answers or serves
    /// ([`marks::ANSWERED_KEY`], its value).
    AnswerRequest { machine: String, record: String },
    /// Write what autorepair reports in a remediation object's `status` (a report: nothing is
    /// ever read back from it to decide anything but whether to write it again).
    ReportRemediation {
        remediation: String,
        report: objects::Report,
    },
    /// Set the Machine's `OwnerRemediated` condition `False` (through its status subresource):
    /// Cluster API's way to have its owner replace a Machine its remediation gave up on.
    HandOver {
        machine: String,
        conditions: objects::Conditions,
        message: String,
    },
    /// Annotate the host of a Machine handed over [`objects::UNHEALTHY_KEY`], as CAPM3 does
    /// when it gives up: the Machine that replaces it is not placed on the same host.
    MarkHostUnhealthy { machine: String, host: String },
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Drain { node } => write!(f, "drain node {node}"),
            Op::PowerOff { host, mode, .. } => write!(
                f,
                "power off host {host} ({} {})",
                objects::REBOOT_KEY,
                mode.annotation()
            ),
            Op::DeleteMachine { machine } => write!(f, "delete machine {machine}"),
            Op::DeleteNode { node, .. } => write!(f, "back up and delete node {node}"),
            Op::ClearRequest { machine } => {
                write!(f, "remove {} from machine {machine}", objects::REQUEST_KEY)
            }
            Op::PowerOn { host } => write!(
                f,
                "remove {} from host {host} (powers it on)",
                objects::REBOOT_KEY
            ),
            Op::RestoreNode { node, .. } => write!(f, "restore node {node}'s labels"),
            Op::TaintNode { node, .. } => {
                write!(f, "taint node {node} {}", objects::OUT_OF_SERVICE_TAINT)
            }
            Op::UntaintNode { node, .. } => write!(
                f,
                "remove {} from node {node}",
                objects::OUT_OF_SERVICE_TAINT
            ),
            Op::AnswerRequest { machine, record } => {
                write!(
                    f,
                    "record {}={record} on machine {machine}",
                    marks::ANSWERED_KEY
                )
            }
            Op::ReportRemediation {
                remediation,
                report,
            } => write!(
                f,
                "report {} {} ({}) on {} {remediation}",
                report.phase,
                report.reason,
                report.message,
                objects::REMEDIATION_KIND
            ),
            Op::HandOver { machine, .. } => write!(
                f,
                "hand machine {machine} over to its owner ({} False)",
                objects::OWNER_REMEDIATED_CONDITION
            ),
            Op::MarkHostUnhealthy { host, .. } => write!(
                f,
                "annotate host {host} {}={} (no new Machine is placed on it)",
                objects::UNHEALTHY_KEY,
                objects::UNHEALTHY_VALUE
            ),
        }
    }
}

/// What the operations' progress looks like from outside, shown as the operation's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Draining,
    PoweringOff,
    Fencing,
    PoweringOn,
    AwaitingNode,
    /// The host is on and the Node back: the request is removed.
    Served,
    Deleting,
    Done,
    TimedOut,
    Lost,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Draining => "draining",
            Phase::PoweringOff => "powering-off",
            Phase::Fencing => "fencing",
            Phase::PoweringOn => "powering-on",
            Phase::AwaitingNode => "awaiting-node",
            Phase::Served => "served",
            Phase::Deleting => "deleting",
            Phase::Done => "done",
            Phase::TimedOut => "timed-out",
            Phase::Lost => "lost",
        }
    }
}

/// The family's settings (the config file's `[metal3]` section).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// A Node not Ready this long (seconds) needs repair.
    pub node_unhealthy_after: i64,
    /// A host not observed off this long after its power cycle started: the cycle fails and
    /// the host is powered back on.
    pub power_off_timeout: i64,
    /// A power cycle not finished (host on, Node Ready) this long after it started fails.
    pub cycle_timeout: i64,
    /// A Machine power-cycled this recently is not power-cycled again: it is reprovisioned if
    /// the policy allows, else a person decides.
    pub reboot_loop_window: i64,
    pub drain_timeout: i64,
    pub power_mode: PowerMode,
    pub fencing: Fencing,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            node_unhealthy_after: 300,
            power_off_timeout: 600,
            cycle_timeout: 1800,
            reboot_loop_window: 3600,
            drain_timeout: 900,
            power_mode: PowerMode::Hard,
            fencing: Fencing::DeleteNode,
        }
    }
}

/// `machine/NS/NAME`, `machineset/NS/NAME`, `machinedeployment/NS/NAME`,
/// `controlplane/NS/NAME`, `cluster/NS/NAME`, `host/NS/NAME`, `node/NAME`, or a bare
/// `NS/NAME` Machine.
pub fn parse_object(text: &str) -> Result<ObjectRef, ObjectRefError> {
    const KINDS: [&str; 7] = [
        kind::MACHINE,
        kind::MACHINE_SET,
        kind::MACHINE_DEPLOYMENT,
        kind::CONTROL_PLANE,
        kind::CLUSTER,
        kind::HOST,
        kind::NODE,
    ];
    // A namespaced Machine's bare name has a slash too: `NS/NAME` unless NS is a kind.
    let named_kind = text
        .split_once('/')
        .is_some_and(|(k, _)| KINDS.contains(&k));
    // Another family's kinds are a mistake far more often than a namespace of that name.
    if let Some((k @ ("group" | "instance" | "rack"), _)) = text.split_once('/')
        && text.matches('/').count() == 1
    {
        return Err(ObjectRefError::NotInFleet {
            text: text.to_owned(),
            kind: k.to_owned(),
            hint: format!(
                "a metal3 fleet has no {k}s: name machine/NAMESPACE/NAME, machineset/…, machinedeployment/…, controlplane/…, or cluster/NAMESPACE/NAME (for a Machine in namespace {k}, write machine/{text})"
            ),
        });
    }
    if !named_kind && text.matches('/').count() == 1 {
        return Ok(ObjectRef::new(kind::MACHINE, text));
    }
    let object = parse_object_ref(
        text,
        &[
            kind::MACHINE,
            kind::MACHINE_SET,
            kind::MACHINE_DEPLOYMENT,
            kind::CONTROL_PLANE,
            kind::CLUSTER,
            kind::HOST,
            kind::NODE,
        ],
        &[],
        kind::MACHINE,
    )?;
    if object.kind != kind::NODE && !object.name.contains('/') {
        return Err(ObjectRefError::NeedsNamespace {
            text: text.to_owned(),
            kind: object.kind.into_owned(),
        });
    }
    Ok(object)
}

/// The namespace of the repair ids given to power cycles adopted from a reboot key found
/// without a record.
const ADOPTED: uuid::Uuid = uuid::uuid!("5b0e3f6c-2f7d-4c0a-9d43-0c1f2a8e7b16");

/// The metal3 family, as the engine sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metal3;

pub type Plan = crate::engine::Plan<Metal3>;
pub type TargetPlan = crate::engine::TargetPlan<Metal3>;
pub type Action = crate::engine::Action<Metal3>;

/// Plans one pass.
pub fn plan(
    snap: &Snapshot,
    settings: &Settings,
    now: i64,
    limits: &crate::engine::Limits,
    seed: u64,
) -> Plan {
    crate::engine::plan::<Metal3>(snap, settings, now, limits, seed)
}

/// Where a Machine runs, in its plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Facts {
    pub host: Option<Text>,
    /// `on`, `off`, or `unknown` (no status yet, or no host).
    pub power: &'static str,
    pub node: Option<Text>,
    /// The request annotation is set.
    pub requested: bool,
    /// Where a power cycle on it stands, when one does.
    pub phase: Option<&'static str>,
}

/// Per-pass lookups.
pub struct Index<'a> {
    snap: &'a Snapshot,
    settings: &'a Settings,
    now: i64,
    hosts: FxMap<&'a str, &'a Host>,
    nodes: FxMap<&'a str, &'a Node>,
    scopes: FxMap<&'a str, &'a objects::Scope>,
    /// Machines by their host.
    by_host: FxMap<&'a str, &'a Machine>,
}

impl<'a> Index<'a> {
    fn host(&self, m: &Machine) -> Option<&'a Host> {
        m.host.as_deref().and_then(|h| self.hosts.get(h).copied())
    }

    /// The Node `nodeRef` names, if it exists.
    fn node(&self, m: &Machine) -> Option<&'a Node> {
        m.node_ref
            .as_deref()
            .and_then(|n| self.nodes.get(n).copied())
    }

    /// The Machine's scopes, nearest first (nearest wins): its owner, the MachineDeployment
    /// above a MachineSet, the Cluster.
    fn scope_chain(&self, m: &Machine) -> Vec<&'a objects::Scope> {
        scope_chain(m, |key| self.scopes.get(key).copied())
    }

    /// [`Index::zone`] for people: a Machine in no zone counts in the unnamed one.
    fn zone_name(&self, m: &'a Machine) -> &'a str {
        match self.zone(m) {
            "" => crate::plug::NO_SCOPE,
            zone => zone,
        }
    }

    fn zone(&self, m: &'a Machine) -> &'a str {
        m.failure_domain
            .as_deref()
            .or_else(|| self.node(m).and_then(|n| n.zone.as_deref()))
            .unwrap_or("")
    }

    /// The Machine's repairs under way: id, level, start and recorded operations.
    fn pending(m: &Machine) -> Vec<crate::engine::marks::Pending<'_, Metal3Level>> {
        m.marks
            .iter()
            .filter_map(|t| match Annotations::parse(t) {
                Ok(Mark::Pending(p)) => Some(p),
                _ => None,
            })
            .collect()
    }

    /// When the newest repair of ours on the Machine ended, whatever its result: a request
    /// answered by a refusal ended too.
    fn last_repair_end(m: &Machine) -> Option<i64> {
        m.marks
            .iter()
            .filter_map(|t| match Annotations::parse(t) {
                Ok(Mark::Result(r)) => Some(r.at),
                _ => None,
            })
            .max()
    }

    /// The newest power cycle that ended on the Machine: when, and how.
    fn last_cycle(m: &Machine) -> Option<(i64, RepairResult)> {
        m.marks
            .iter()
            .filter_map(|t| match Annotations::parse(t) {
                // Only a power cycle that happened: its result names the power-cycle step. A
                // request resolved without one (nothing to do) or an enoperm powered nothing.
                Ok(Mark::Result(r))
                    if r.repair == Metal3Level::PowerCycle
                        && r.result != RepairResult::Enoperm
                        && r.ops.iter::<OpId>().any(|id| id.step == Step::PowerCycle) =>
                {
                    Some((r.at, r.result))
                }
                _ => None,
            })
            .max_by_key(|(at, _)| *at)
    }

    /// The level of a once-off request (`autorepair request`) waiting on the Machine, if one
    /// does: a pending mark no operation has run for yet.
    fn waiting_request(m: &Machine) -> Option<Metal3Level> {
        Index::pending(m)
            .into_iter()
            .filter(|p| p.ops.is_empty())
            .map(|p| p.repair)
            .max()
    }

    /// When the Machine was last power-cycled: the newest power cycle that ended, or the start
    /// of one under way. One under way may end in this very pass, before its result is
    /// written: a request that came meanwhile must meet the loop guard all the same.
    fn last_power_cycle(m: &Machine) -> Option<i64> {
        let under_way = Index::pending(m)
            .into_iter()
            .filter(|p| {
                p.repair == Metal3Level::PowerCycle
                    && p.ops.iter::<OpId>().any(|id| id.step == Step::PowerCycle)
            })
            .map(|p| p.since);
        Index::last_cycle(m)
            .map(|(at, _)| at)
            .into_iter()
            .chain(under_way)
            .max()
    }
}

impl Family for Metal3 {
    type Level = Metal3Level;
    type Marks = Annotations;
    type OpId = OpId;
    type Op = Op;
    type Step = Step;
    type OpStatus = Phase;
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
        fleet: "fleet",
        domain_scope: "zone",
        scopes: "its MachineSet, MachineDeployment, control plane or Cluster",
        op: "operation",
        ops: "operations",
        op_vanished: "is no longer visible",
    };

    fn index<'a>(snap: &'a Snapshot, settings: &'a Settings, now: i64) -> Index<'a> {
        Index {
            snap,
            settings,
            now,
            hosts: snap.hosts.iter().map(|h| (h.key.as_str(), h)).collect(),
            nodes: snap.nodes.iter().map(|n| (n.name.as_str(), n)).collect(),
            scopes: snap.scopes.iter().map(|s| (s.key.as_str(), s)).collect(),
            by_host: snap
                .machines
                .iter()
                .filter_map(|m| m.host.as_deref().map(|h| (h, m)))
                .collect(),
        }
    }

    fn holders(snap: &Snapshot) -> Vec<Holder<'_>> {
        let scopes = snap.scopes.iter().map(|s| Holder {
            object: s.object.clone(),
            marks: &s.marks,
            role: Role::Scope {
                key: &s.key,
                halt_key: None,
            },
        });
        // Every host, so that an admin verb on one is refused with the advice, not "unknown".
        let hosts = snap.hosts.iter().map(|h| Holder {
                object: ObjectRef::new(kind::HOST, h.key.clone()),
                marks: &h.marks,
                role: Role::Inert {
                    advice: "autorepair annotations on hosts have no effect: annotate the Machine, its MachineSet, MachineDeployment, control plane or Cluster",
                },
            });
        // And every Node, likewise: a person who suspends a broken Node is told what to mark.
        let nodes = snap.nodes.iter().map(|n| Holder {
            object: ObjectRef::new(kind::NODE, n.name.clone()),
            marks: &[],
            role: Role::Inert {
                advice: "autorepair annotations on Nodes have no effect (a fenced Node is deleted or tainted): annotate its Machine (machine/NAMESPACE/NAME), its MachineSet, MachineDeployment, control plane or Cluster",
            },
        });
        scopes.chain(hosts).chain(nodes).collect()
    }

    fn targets(snap: &Snapshot) -> &[Machine] {
        &snap.machines
    }

    fn name(m: &Machine) -> &str {
        &m.key
    }

    fn marks(m: &Machine) -> &[String] {
        &m.marks
    }

    fn assess<'a>(index: &Index<'a>, m: &'a Machine) -> Assessment<'a, Metal3> {
        let host = index.host(m);
        let node = index.node(m);
        let health = health::health(index, m, host);
        let chain: Vec<&'a str> = index
            .scope_chain(m)
            .iter()
            .map(|s| s.key.as_str())
            .collect();
        let zone = index.zone(m);
        let broken = health.is_broken();
        // A request for a Machine Cluster API holds back waits (its start cannot be built),
        // unless no automatic repair could serve it: then it would end as a failure, written
        // on a Machine nothing may write on while it is held.
        let person = matches!(
            health,
            Health::Broken {
                need: Need::Person(_),
                ..
            }
        );
        let granted =
            (m.requested && !(m.held.is_some() && person)).then_some(Metal3Level::PowerCycle);
        Assessment {
            health,
            scopes: ScopeChain::new(&chain),
            halt_key: Some(zone),
            domain: broken.then_some(m.key.as_str()),
            home: &m.key,
            // A request for a Machine Cluster API holds back waits (its start cannot be built),
            // unless no automatic repair could serve it: then it would end as a failure,
            // written on a Machine nothing may write on while it is held.
            granted,
            // As CAPM3: a request's own retryLimit (none given is 0), whatever the
            // configuration says; the configuration's `retries` is for repairs no
            // MachineHealthCheck asked for.
            retries: match (&m.remediation, &m.strategy) {
                (Some(_), Some(Ok(s))) => Some(s.retry_limit.unwrap_or(0)),
                _ => None,
            },
            facts: Facts {
                host: m.host.as_deref().map(|h| Text::Owned(h.to_owned())),
                power: power_word(host),
                node: node.map(|n| Text::Owned(n.name.clone())),
                requested: m.requested,
                phase: host
                    .filter(|h| h.reboot.is_some())
                    .map(|h| protocol::phase(m, h, node.is_some()).as_str()),
            },
        }
    }

    fn chain(m: &Machine, level: Metal3Level) -> Option<&'static [Step]> {
        match level {
            Metal3Level::Drain => Some(&[Step::Drain]),
            Metal3Level::PowerCycle => Some(&[Step::PowerCycle]),
            Metal3Level::Reprovision => m.owner.is_some().then_some(&[Step::Delete][..]),
        }
    }

    fn build_ops<'a>(index: &Index<'a>, m: &'a Machine, steps: &[Step]) -> Result<Vec<Op>, String> {
        // Cluster API's "leave it alone" marks hold back every start, as a suspend does; the
        // protocol still finishes a power cycle under way (a host is never left off).
        if let Some(why) = &m.held {
            return Err(format!("Cluster API holds it back: {why}"));
        }
        steps
            .iter()
            .map(|step| match step {
                Step::Drain => match (&m.node_ref, index.node(m)) {
                    (Some(n), Some(_)) => Ok(Op::Drain { node: n.clone() }),
                    _ => Err("it has no Node to drain".to_owned()),
                },
                Step::PowerCycle => {
                    let host = index.host(m).ok_or_else(|| match (&m.host, &m.host_link) {
                        (Some(h), _) => format!("its BareMetalHost {h} is not in the objects read"),
                        (None, Err(why)) => format!("no BareMetalHost: {why}"),
                        (None, Ok(_)) => "no BareMetalHost".to_owned(),
                    })?;
                    protocol::can_power_off(host).map_err(|e| e.to_string())?;
                    Ok(Op::PowerOff {
                        machine: m.key.clone(),
                        host: host.key.clone(),
                        mode: index.settings.power_mode,
                    })
                }
                Step::Delete => Ok(Op::DeleteMachine {
                    machine: m.key.clone(),
                }),
            })
            .collect()
    }

    fn step_of(op: &Op) -> Step {
        match op {
            Op::Drain { .. } => Step::Drain,
            Op::DeleteMachine { .. } => Step::Delete,
            _ => Step::PowerCycle,
        }
    }

    fn operations<'a>(index: &Self::Index<'a>) -> Vec<Operation<'a, Metal3>> {
        let mut out = Vec::new();
        for m in &index.snap.machines {
            let pending = Index::pending(m);
            // A crash between starting a step and recording it leaves a pending mark without
            // operations while the world shows the step: it belongs to the newest such repair.
            // A repair that began before the newest failure did not start this step: what the
            // world shows there is the failed repair's leftover (a power-off still to
            // withdraw), no one else's. One begun since may have (`begun_since`).
            let newest_failure = m
                .marks
                .iter()
                .filter_map(|t| match Annotations::parse(t) {
                    Ok(Mark::Result(r)) if r.result == RepairResult::Failure => Some(r.at),
                    _ => None,
                })
                .max();
            let adopter = pending
                .iter()
                .filter(|p| p.ops.is_empty() && newest_failure.is_none_or(|f| begun_since(p, f)))
                .max_by_key(|p| p.since);
            for p in &pending {
                let mut steps: Vec<Step> = p
                    .ops
                    .iter::<OpId>()
                    .filter(|id| id.repair == p.id)
                    .map(|id| id.step)
                    .collect();
                if adopter.is_some_and(|a| a.id == p.id) {
                    steps.extend(protocol::visible_step(index, m, p.repair));
                }
                for step in steps {
                    let (state, phase, failure) = protocol::judge(index, m, step, p.since);
                    out.push(Operation {
                        id: OpId {
                            step,
                            repair: p.id.to_owned(),
                        },
                        seq: 0,
                        state,
                        status: Some(phase),
                        repair: Some(p.id),
                        target: Some(m.key.as_str()),
                        step: Some(step),
                        ended: None,
                        why: failure,
                    });
                }
            }
        }
        out
    }

    fn unrecorded<'a>(index: &Self::Index<'a>) -> Vec<Unrecorded<'a, Metal3>> {
        index
            .snap
            .machines
            .iter()
            .filter(|m| protocol::unrecorded_cycle(index, m))
            .map(|m| {
                // A new repair id for each adoption: the pass's clock makes it, as the
                // planner's own ids, and a Machine adopts at most one cycle a pass.
                let repair =
                    uuid::Uuid::new_v5(&ADOPTED, format!("{}:{}", m.key, index.now).as_bytes())
                        .to_string();
                Unrecorded {
                    target: m.key.as_str(),
                    op: OpId {
                        step: Step::PowerCycle,
                        repair: repair.clone(),
                    },
                    repair,
                    level: Metal3Level::PowerCycle,
                }
            })
            .collect()
    }

    fn down_domains<'a>(index: &Self::Index<'a>) -> Vec<DownDomain<'a>> {
        index
            .snap
            .machines
            .iter()
            .filter_map(|m| {
                let under_way = !Index::pending(m).is_empty()
                    || index.host(m).is_some_and(|h| h.reboot.is_some());
                let state = if under_way {
                    "under remediation"
                } else if m.requested || index.symptom(m).is_some() {
                    "unhealthy"
                } else if m
                    .conditions
                    .as_ref()
                    .is_some_and(objects::Conditions::health_check_failed)
                {
                    // Counted down by Cluster API's own short-circuit: a limit of ours that
                    // counted it healthy would let power cycles start that Cluster API's
                    // rule holds.
                    "unhealthy by its MachineHealthCheck"
                } else {
                    return None;
                };
                Some(DownDomain {
                    name: &m.key,
                    scope_key: index.zone(m),
                    scope_name: index.zone_name(m),
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
            .filter_map(|m| {
                // A Machine counts as down while a repair or request of ours stands on it, while
                // its Node is not Ready and while it has none: it came back when the repair
                // ended, when its Node's Ready condition last turned or when its Node was made,
                // whichever is latest. A new Machine's first Node, Ready sooner than a Node must be NotReady
                // to count as down, never was: a rollout is no return.
                let ended = Index::last_repair_end(m);
                let node = index.node(m);
                let first_node = m.created.is_some_and(|c| c >= since)
                    && node.is_some_and(|n| match (&n.ready, n.created) {
                        (Some((_, Some(ready))), Some(made)) => {
                            ready.saturating_sub(made) < index.settings.node_unhealthy_after
                        }
                        _ => false,
                    });
                // A Node NotReady now, but not for long enough to count as down, was Ready
                // before that turn: any return came no later.
                let ready = node.and_then(|n| n.ready.as_ref().and_then(|(_, at)| *at));
                let made = node.and_then(|n| n.created);
                let (ready, made) = if first_node {
                    (None, None)
                } else {
                    (ready, made)
                };
                let at = ready.max(made).max(ended)?;
                (at >= since).then(|| BackDomain {
                    name: &m.key,
                    scope_key: index.zone(m),
                    scope_name: index.zone_name(m),
                    at,
                })
            })
            .collect()
    }

    fn domain_text(_index: &Index<'_>, name: &str) -> Text {
        Text::Owned(name.to_owned())
    }

    fn progress<'a>(index: &Index<'a>, _now: i64) -> Vec<Progress<Metal3>> {
        protocol::progress(index)
    }

    fn reports<'a>(
        index: &Index<'a>,
        plans: &[crate::engine::TargetPlan<Metal3>],
        fleet: &crate::engine::plan::FleetSummary,
    ) -> Vec<Progress<Metal3>> {
        remediation::progress(index, plans, fleet)
    }
}

/// Whether a pending repair began at or after a failure at `failed_at`, and so may own a
/// power-off that no mark records: a retry, or a request, started by a pass that died before
/// recording its step. Such a repair's mark says when it started; a request still waiting
/// says when it was made, and the two cannot be told apart, so both count. Counting a waiting
/// request costs little: it follows the failed cycle's leftover power-off to that step's
/// timeout, and its result says the host did not power off. Not counting a started one would
/// power its host on under it and off again, the one thing a power cycle must never do.
pub(crate) fn begun_since(
    p: &crate::engine::marks::Pending<'_, Metal3Level>,
    failed_at: i64,
) -> bool {
    p.since >= failed_at
}

fn power_word(host: Option<&Host>) -> &'static str {
    match host.and_then(|h| h.powered_on) {
        Some(true) => "on",
        Some(false) => "off",
        None => "unknown",
    }
}

#[cfg(test)]
mod tests;

/// A Machine's scopes, nearest first (nearest wins): its owner, the MachineDeployment above a
/// MachineSet, the Cluster; `scope` finds one by its key.
pub(crate) fn scope_chain<'s>(
    m: &Machine,
    scope: impl Fn(&str) -> Option<&'s objects::Scope>,
) -> Vec<&'s objects::Scope> {
    let mut chain = Vec::with_capacity(3);
    if let Some(owner) = &m.owner
        && let Some(s) = scope(&format!("{}/{}", owner.kind, owner.name))
    {
        chain.push(s);
        if let Some(p) = s.parent.as_deref().and_then(&scope) {
            chain.push(p);
        }
    }
    if let Some(c) = m.cluster.as_deref()
        && let Some(s) = scope(&format!("{}/{}/{c}", kind::CLUSTER, m.namespace))
    {
        chain.push(s);
    }
    chain
}
