//! The design's power-cycle protocol (its truth table), and how far an operation has got.
//!
//! Inputs per host carrying autorepair's reboot annotation (RA): NRA, the request on its
//! Machine; NR, the Node that `nodeRef` names exists; PO, the host's observed power. The table's
//! fifteen rows reduce to (docs/metal3.md, The protocol):
//!
//! | NRA | PO | RA | NR | action |
//! |---|---|---|---|---|
//! | 1 | 1 | 0 | any | add RA: a repair start, decided by the engine (policy, limits) |
//! | 1 | 0 | 1 | 1 | delete the Node |
//! | 1 | 0 | 1 | 0 | remove RA: the host powers on (the design: remove NRA) |
//! | 0 | 0 | 1 | any | remove RA: the host powers on |
//! | 1 | 1 | 0 | back and Ready, the cycle under way | remove NRA: the request is served |
//! | otherwise | | | | nothing |
//!
//! One change from the design: the request stays until the power cycle is done. The design
//! removed it once the Node was gone, but OpenShift's MachineHealthCheck adds the request again
//! to any unhealthy Machine that lacks it, and a Machine whose Node is gone is unhealthy at
//! once: it came back before the Node did, and later rebooted a healthy Machine (the design's
//! own "Assumptions" hazard; OpenShift's provider gave the table up for this). Kept, it is
//! never re-added; removed once the Node is back and Ready, the Machine is healthy to the
//! health checker, which then asks nothing. A request is either annotation: OpenShift's
//! `host.metal3.io/external-remediation` or Cluster API's `cluster.x-k8s.io/remediate-machine`
//! (which nothing else removes).
//!
//! With `fencing = out-of-service-taint` ([`Fencing::OutOfServiceTaint`]) the Node is not
//! deleted: "delete the Node" becomes "taint it out of service", and a Node carrying that taint
//! counts as fenced as a deleted one does (NRA∧¬PO∧RA∧NR∧tainted → remove RA). The taint
//! autorepair added (recorded on the Machine) is removed once the host is on again, without
//! autorepair's reboot key, and the Node Ready since the taint was added
//! ([`ready_since_taint`], [`OUT_OF_SERVICE_TABLE`]); a Node that could not be looked at
//! ([`Snapshot::nodes_unknown`]) keeps its taint and the record until one can.
//!
//! [`Snapshot::nodes_unknown`]: super::objects::Snapshot::nodes_unknown
//!
//! Everything but the first row is [`progress`]: it runs every pass from the annotations and
//! power states alone, so a pass killed anywhere resumes here, and every host is scanned, so a
//! host autorepair powered off is powered on even when its Machine is gone. Two additions keep
//! the fleet safe where the table would wait forever: a power-off the engine judged timed out
//! (a failure result, no power cycle recorded under way) is undone, and a Node that re-registers
//! gets its backed-up labels and annotations back.

use super::marks::Annotations;
use super::objects::{DETACHED_KEY, Host, Machine, Node, PAUSED_KEY, REBOOT_KEY};
use super::{Fencing, Index, Metal3, Metal3Level, Op, OpId, Phase, Step};
use crate::engine::family::{OpState, Progress};
use crate::engine::marks::{Codec, Mark};
use crate::engine::text::rfc3339;
use crate::engine::{ObjectRef, RepairResult};

/// The design's table, row by row: (Node exists, needs remediation, powered on, reboot
/// annotation) → what one pass does, plus the 16th combination it leaves out (nothing). Every
/// backend's tests run it.
pub const TRUTH_TABLE: [(u8, u8, u8, u8, &str); 16] = [
    (0, 1, 1, 0, "add reboot"),
    (1, 1, 1, 0, "add reboot"),
    (1, 1, 0, 1, "delete node"),
    (0, 0, 1, 0, "nothing"),
    (0, 0, 1, 1, "nothing"),
    (0, 1, 0, 0, "nothing"),
    (0, 1, 1, 1, "nothing"),
    (1, 0, 0, 0, "nothing"),
    (1, 0, 1, 0, "nothing"),
    (1, 0, 1, 1, "nothing"),
    (1, 1, 0, 0, "nothing"),
    (1, 1, 1, 1, "nothing"),
    (0, 1, 0, 1, "remove reboot"),
    (0, 0, 0, 1, "remove reboot"),
    (1, 0, 0, 1, "remove reboot"),
    (0, 0, 0, 0, "nothing"),
];

/// The out-of-service mode's table: (Node exists, its out-of-service taint, needs remediation,
/// powered on, reboot annotation) → what one pass does. The design's rows with "delete node"
/// read "taint node"; a tainted Node is a fenced one. The host powered on and the Node Ready,
/// the taint autorepair added goes.
pub const OUT_OF_SERVICE_TABLE: [(u8, u8, u8, u8, u8, &str); 8] = [
    (1, 0, 1, 1, 0, "add reboot"),
    (1, 0, 1, 0, 1, "taint node"),
    (1, 1, 1, 0, 1, "remove reboot"),
    (0, 0, 1, 0, 1, "remove reboot"),
    (1, 1, 0, 0, 1, "remove reboot"),
    (1, 0, 0, 0, 1, "remove reboot"),
    (1, 1, 0, 1, 0, "remove taint"),
    (1, 1, 0, 0, 0, "nothing"),
];

/// Why a host cannot be powered off now, each naming the host (`NAMESPACE/NAME`) and the
/// annotation or field that says so.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotReady {
    #[error("a power cycle is already under way on host {0} (it carries {REBOOT_KEY})")]
    CycleUnderWay(String),
    #[error("host {0} is paused ({PAUSED_KEY}): the baremetal-operator would not power it off")]
    Paused(String),
    #[error("host {0} is detached ({DETACHED_KEY}): it has no power management")]
    Detached(String),
    #[error(
        "host {0} has spec.disablePowerOff: a reboot never shows it off, so it cannot be fenced"
    )]
    PowerOffDisabled(String),
    #[error("host {0} has spec.online false: someone powered it off on purpose")]
    Offline(String),
    #[error(
        "host {host} is in provisioning state {state:?}: reboot annotations count only on provisioned hosts"
    )]
    NotProvisioned { host: String, state: String },
    #[error("host {0} reports no power state yet")]
    NoPowerState(String),
    #[error("host {0} is powered off, and not by autorepair: power it on, or clear the request")]
    PoweredOff(String),
    #[error("host {host} carries another client's reboot request ({})", others.join(", "))]
    OtherReboots { host: String, others: Vec<String> },
}

/// Why the host cannot be powered off now, if it cannot (the power-off would never be
/// observed, or it is not autorepair's to power off).
pub fn can_power_off(h: &Host) -> Result<(), NotReady> {
    let host = || h.key.clone();
    if h.reboot.is_some() {
        return Err(NotReady::CycleUnderWay(host()));
    }
    if h.paused {
        return Err(NotReady::Paused(host()));
    }
    if h.detached {
        return Err(NotReady::Detached(host()));
    }
    if h.disable_power_off {
        return Err(NotReady::PowerOffDisabled(host()));
    }
    if !h.online {
        return Err(NotReady::Offline(host()));
    }
    if !matches!(h.state.as_str(), "provisioned" | "externally provisioned") {
        return Err(NotReady::NotProvisioned {
            host: host(),
            state: h.state.clone(),
        });
    }
    match h.powered_on {
        None => Err(NotReady::NoPowerState(host())),
        Some(false) => Err(NotReady::PoweredOff(host())),
        Some(true) if !h.other_reboots.is_empty() => Err(NotReady::OtherReboots {
            host: host(),
            others: h.other_reboots.clone(),
        }),
        Some(true) => Ok(()),
    }
}

/// Where a power cycle on the host stands, while autorepair's reboot annotation is on it.
pub fn phase(_m: &Machine, h: &Host, _node_exists: bool) -> Phase {
    match h.powered_on {
        Some(false) => Phase::Fencing,
        _ => Phase::PoweringOff,
    }
}

/// The step of `level` the world shows started on the Machine (for a repair whose pass died
/// before recording it).
pub fn visible_step(index: &Index<'_>, m: &Machine, level: Metal3Level) -> Option<Step> {
    match level {
        Metal3Level::PowerCycle => index
            .host(m)
            .is_some_and(|h| h.reboot.is_some())
            .then_some(Step::PowerCycle),
        Metal3Level::Reprovision => m.deleting.then_some(Step::Delete),
        Metal3Level::Drain => index
            .node(m)
            .is_some_and(|n| n.unschedulable)
            .then_some(Step::Drain),
    }
}

/// How an operation of a repair that started at `since` stands now.
pub fn judge(
    index: &Index<'_>,
    m: &Machine,
    step: Step,
    since: i64,
) -> (OpState, Phase, Option<String>) {
    let s = index.settings;
    let age = index.now - since;
    let late = |limit: i64| age > limit;
    match step {
        Step::PowerCycle => {
            let Some(h) = index.host(m) else {
                return (
                    OpState::Failed,
                    Phase::Lost,
                    Some(format!(
                        "host {} is gone: the power cycle cannot be followed",
                        m.host.as_deref().unwrap_or("?")
                    )),
                );
            };
            let timed_out = |what: String| (OpState::Failed, Phase::TimedOut, Some(what));
            let (cycle_timeout, named) = cycle_timeout(index, m);
            match (h.reboot.is_some(), h.powered_on) {
                (true, Some(false)) if late(cycle_timeout) => timed_out(format!(
                    "host {} was still off {age}s after the power cycle started ({named} {cycle_timeout}s): it is powered back on",
                    h.key
                )),
                (true, Some(false)) => (
                    OpState::Running,
                    Phase::Fencing,
                    index
                        .node(m)
                        .filter(|n| s.fencing == Fencing::OutOfServiceTaint && n.out_of_service)
                        .and_then(|n| fence_settling(index, n)),
                ),
                (true, _) if late(s.power_off_timeout) => timed_out(format!(
                    "host {} was not seen off within power_off_timeout ({}s): the power-off is withdrawn, so it stays on",
                    h.key, s.power_off_timeout
                )),
                (true, _) => (OpState::Running, Phase::PoweringOff, None),
                (false, Some(true)) => {
                    let back = node_back(index, m);
                    if back && m.request_annotated {
                        // Done but for the request, removed this pass (see `progress`). A
                        // remediation object is not autorepair's to remove: the result
                        // written now answers it, and its MachineHealthCheck deletes it.
                        (OpState::Running, Phase::Served, None)
                    } else if back {
                        (OpState::Succeeded, Phase::Done, None)
                    } else if late(cycle_timeout) {
                        timed_out(format!(
                            "the Node {} was not back and Ready {age}s after the power cycle started ({named} {cycle_timeout}s)",
                            m.node_ref.as_deref().unwrap_or("?"),
                        ))
                    } else {
                        (OpState::Running, Phase::AwaitingNode, None)
                    }
                }
                (false, _) if late(cycle_timeout) => timed_out(format!(
                    "host {} did not power back on within {named} ({cycle_timeout}s)",
                    h.key
                )),
                (false, _) => (OpState::Running, Phase::PoweringOn, None),
            }
        }
        Step::Drain => {
            let Some(n) = index.node(m) else {
                return (OpState::Succeeded, Phase::Done, None);
            };
            let left = index
                .snap
                .pods
                .iter()
                .filter(|p| p.node == n.name && !p.stays)
                .count();
            if n.unschedulable && left == 0 {
                (OpState::Succeeded, Phase::Done, None)
            } else if late(s.drain_timeout) {
                (
                    OpState::Failed,
                    Phase::TimedOut,
                    Some(format!(
                        "node {} still had {left} pod(s) to evict after drain_timeout ({}s)",
                        n.name, s.drain_timeout
                    )),
                )
            } else {
                (OpState::Running, Phase::Draining, None)
            }
        }
        Step::Delete => {
            if m.deleting {
                (OpState::Succeeded, Phase::Deleting, None)
            } else if late(s.cycle_timeout) {
                (
                    OpState::Failed,
                    Phase::TimedOut,
                    Some(format!(
                        "machine {} was not being deleted {age}s after autorepair deleted it",
                        m.key
                    )),
                )
            } else {
                (OpState::Running, Phase::Deleting, None)
            }
        }
    }
}

/// The protocol's work due this pass, for every host carrying autorepair's reboot annotation,
/// every drain under way with Pods left and every Machine holding a Node backup.
pub fn progress(index: &Index<'_>) -> Vec<Progress<Metal3>> {
    let mut out = Vec::new();
    let machine_ref = |m: &Machine| ObjectRef::new(super::kind::MACHINE, m.key.clone());
    let host_ref = |h: &Host| ObjectRef::new(super::kind::HOST, h.key.clone());
    for h in index.snap.hosts.iter().filter(|h| h.reboot.is_some()) {
        let m = index.by_host.get(h.key.as_str()).copied();
        let target = m.map(|m| m.key.clone());
        let requested = m.is_some_and(|m| m.requested);
        let node = m.and_then(|m| index.node(m));
        let work = match h.powered_on {
            None => None,
            Some(false) => match (m, node) {
                // Fenced by the taint (ours or anyone's): the Node stays, tainted. Its host
                // powers on once nothing of it is left to settle, as CAPM3 waits; a cycle the
                // engine timed out (cycle_timeout) powers on whatever is left.
                (Some(m), Some(n))
                    if requested
                        && index.settings.fencing == Fencing::OutOfServiceTaint
                        && n.out_of_service =>
                {
                    (!cycling(m) || fence_settling(index, n).is_none()).then(|| {
                        (
                            host_ref(h),
                            Op::PowerOn { host: h.key.clone() },
                            "host off and its Node out of service, no Pod terminating on it and no volume attached: power it back on".to_owned(),
                        )
                    })
                }
                (Some(m), Some(n)) if requested => (!n.deleting).then(|| {
                    let (machine, node) = (m.key.clone(), n.name.clone());
                    match index.settings.fencing {
                        Fencing::DeleteNode => (
                            machine_ref(m),
                            Op::DeleteNode { machine, node },
                            format!(
                                "host {} is off: its Node goes, so its workloads can start elsewhere",
                                h.key
                            ),
                        ),
                        Fencing::OutOfServiceTaint => (
                            machine_ref(m),
                            Op::TaintNode { machine, node },
                            format!(
                                "host {} is off: its Node is tainted out of service, so its workloads can start elsewhere",
                                h.key
                            ),
                        ),
                    }
                }),
                (Some(_), None) if requested => Some((
                    host_ref(h),
                    Op::PowerOn { host: h.key.clone() },
                    "host off and its Node gone: power it back on (the request stays until the Node is back)".to_owned(),
                )),
                _ => Some((
                    host_ref(h),
                    Op::PowerOn { host: h.key.clone() },
                    match m {
                        Some(_) => "host off and no request left: power it back on".to_owned(),
                        None => "host off and its Machine gone: power it back on".to_owned(),
                    },
                )),
            },
            Some(true) => m.and_then(withdrawn_power_off).map(|at| {
                (
                    host_ref(h),
                    Op::PowerOn { host: h.key.clone() },
                    format!(
                        "the power cycle failed at {} and the host is still on: withdraw the power-off",
                        rfc3339(at)
                    ),
                )
            }),
        };
        if let Some((object, op, reason)) = work {
            out.push(Progress {
                target,
                object,
                op,
                reason,
            });
        }
    }
    // A power cycle done but for its request: the request is served. Only while the cycle is
    // recorded under way, so a request that comes after its result is a new one.
    for m in index.snap.machines.iter().filter(|m| m.request_annotated) {
        let cycling = Index::pending(m).iter().any(|p| {
            p.ops
                .iter::<OpId>()
                .any(|id| id.step == Step::PowerCycle && id.repair == p.id)
        });
        let host_on = index
            .host(m)
            .is_some_and(|h| h.reboot.is_none() && h.powered_on == Some(true));
        if cycling && host_on && node_back(index, m) {
            out.push(Progress {
                target: Some(m.key.clone()),
                object: machine_ref(m),
                op: Op::ClearRequest {
                    machine: m.key.clone(),
                },
                reason: "the power cycle is done (host on, Node Ready): the request is served"
                    .into(),
            });
        }
    }
    // A drain under way with Pods left: what was refused on an earlier pass (a
    // PodDisruptionBudget) is asked again, until the step succeeds or `drain_timeout` ends it.
    for m in &index.snap.machines {
        let Some(n) = index.node(m).filter(|n| n.unschedulable) else {
            continue;
        };
        let draining = Index::pending(m).iter().any(|p| {
            p.ops
                .iter::<OpId>()
                .any(|id| id.step == Step::Drain && id.repair == p.id)
                && judge(index, m, Step::Drain, p.since).0 == OpState::Running
        });
        if draining {
            out.push(Progress {
                target: Some(m.key.clone()),
                object: ObjectRef::new(super::kind::NODE, n.name.clone()),
                op: Op::Drain {
                    node: n.name.clone(),
                },
                reason: format!("node {} still has pods to evict: evict them again", n.name),
            });
        }
    }
    for m in &index.snap.machines {
        let Some(tainted) = &m.node_tainted else {
            continue;
        };
        // A Node that could not be looked at is not a Node gone: the record stays, and the
        // taint with it, until a pass can see the Node.
        if index.snap.nodes_unknown.contains(&m.key) {
            continue;
        }
        // Only once the host is back on and its Node Ready again: the taint is what keeps
        // the workloads away from a Node that may still be running them.
        let host_on = index
            .host(m)
            .is_none_or(|h| h.reboot.is_none() && h.powered_on == Some(true));
        let node = index.snap.nodes.iter().find(|n| n.name == *tainted);
        let back = node.is_none_or(|n| !n.deleting && ready_since_taint(n));
        if host_on && back {
            out.push(Progress {
                target: Some(m.key.clone()),
                object: ObjectRef::new(super::kind::NODE, tainted.clone()),
                op: Op::UntaintNode {
                    machine: m.key.clone(),
                    node: tainted.clone(),
                },
                reason: match node {
                    Some(_) => "the host is on and the Node Ready: it is back in service".into(),
                    None => "the Node autorepair tainted is gone: forget it".into(),
                },
            });
        }
    }
    for m in &index.snap.machines {
        let (Some(_), Some(n)) = (&m.node_backup, index.node(m)) else {
            continue;
        };
        let host_on = index
            .host(m)
            .is_some_and(|h| h.reboot.is_none() && h.powered_on == Some(true));
        if host_on && !n.deleting {
            out.push(Progress {
                target: Some(m.key.clone()),
                object: ObjectRef::new(super::kind::NODE, n.name.clone()),
                op: Op::RestoreNode {
                    machine: m.key.clone(),
                    node: n.name.clone(),
                },
                reason: "the Node re-registered: give it back its labels and annotations".into(),
            });
        }
    }
    out
}

/// Whether the Machine's Node is back after a power cycle: Ready (since the taint, if tainted)
/// and not being deleted; a Machine without `nodeRef` has no Node to wait for.
fn node_back(index: &Index<'_>, m: &Machine) -> bool {
    match (&m.node_ref, index.node(m)) {
        (None, _) => true,
        (Some(_), Some(n)) => !n.deleting && ready_since_taint(n),
        (Some(_), None) => false,
    }
}

/// Whether the Node says Ready as of after its out-of-service taint was added. A Ready from
/// before (the control plane had not yet noticed the power-off when the Node was tainted, or
/// the kubelet's last word before it) says nothing of the host now: the condition must have
/// changed, or the kubelet posted it, since. A Node without the taint (someone removed it) or
/// whose taint has no `timeAdded` is judged by Ready alone.
pub fn ready_since_taint(n: &Node) -> bool {
    let Some((status, since)) = &n.ready else {
        return false;
    };
    if status != "True" {
        return false;
    }
    match n.out_of_service_since.filter(|_| n.out_of_service) {
        None => true,
        Some(added) => (*since).max(n.ready_heartbeat).is_some_and(|t| t > added),
    }
}

/// Whether the Machine's host carries autorepair's reboot key with no power cycle of the
/// Machine's recording it, nor any pending repair that would adopt it as its started step
/// (see `operations`): the key of an earlier controller that used the same one (the design's
/// own, restarted), or of a pass killed between two writes. Left so, the cycle would be
/// carried to its end with nothing to show it happened, and once the host is on, before the
/// Node is back, the request would start a second one. A Machine a failure parks is left
/// out: the key there is the failed cycle's leftover, withdrawn by [`progress`].
pub fn unrecorded_cycle(index: &Index<'_>, m: &Machine) -> bool {
    if index.host(m).is_none_or(|h| h.reboot.is_none()) || m.deleting {
        return false;
    }
    let parked = m.marks.iter().any(|t| {
        matches!(Annotations::parse(t), Ok(Mark::Result(r)) if r.result == RepairResult::Failure)
    });
    // A mark of ours that cannot be read may be this very record: it holds the Machine, and
    // nothing is written beside it.
    let unreadable = m.marks.iter().any(|t| Annotations::parse(t).is_err());
    let recorded = Index::pending(m)
        .iter()
        .any(|p| p.ops.is_empty() || p.ops.iter::<OpId>().any(|id| id.step == Step::PowerCycle));
    !(parked || unreadable || recorded)
}

/// How long a power cycle of the Machine may take, from its start until its Node is Ready
/// again, and what to call that limit: its request's `spec.strategy` timeout (CAPM3's, each
/// cycle's), else the configuration's `cycle_timeout`.
pub fn cycle_timeout(index: &Index<'_>, m: &Machine) -> (i64, &'static str) {
    match m.strategy.as_ref().and_then(|s| s.as_ref().ok()?.timeout) {
        Some(t) => (t, "the request's spec.strategy timeout"),
        None => (index.settings.cycle_timeout, "cycle_timeout"),
    }
}

/// A power cycle of the Machine is recorded under way (a request waiting on a parked Machine
/// has started nothing).
fn cycling(m: &Machine) -> bool {
    Index::pending(m)
        .iter()
        .any(|p| p.ops.iter::<OpId>().any(|id| id.step == Step::PowerCycle))
}

/// What keeps the host of a Node under the out-of-service taint off, as CAPM3 waits before it
/// powers the host on: Pods bound to the Node still terminating (the taint has them deleted,
/// and Kubernetes frees their volumes), VolumeAttachments that still name it, or either
/// unknown this pass. Powered on earlier, the host's kubelet would come back to volumes not
/// yet detached. `None`: nothing is left.
pub fn fence_settling(index: &Index<'_>, n: &Node) -> Option<String> {
    if index.snap.fence_unknown.contains(&n.name) {
        return Some(format!(
            "the Pods and VolumeAttachments of node {} could not be read: its host stays off until they can",
            n.name
        ));
    }
    let pods: Vec<&str> = index
        .snap
        .pods
        .iter()
        .filter(|p| p.node == n.name && p.terminating)
        .map(|p| p.key.as_str())
        .collect();
    let volumes: Vec<&str> = index
        .snap
        .volume_attachments
        .iter()
        .filter(|v| v.node == n.name)
        .map(|v| v.name.as_str())
        .collect();
    let mut left = Vec::new();
    if !pods.is_empty() {
        left.push(format!("Pods terminating: {}", pods.join(", ")));
    }
    if !volumes.is_empty() {
        left.push(format!("VolumeAttachments: {}", volumes.join(", ")));
    }
    (!left.is_empty()).then(|| {
        format!(
            "node {} is out of service, and its host stays off until nothing is left on it ({})",
            n.name,
            left.join("; ")
        )
    })
}

/// When the Machine's power cycle ended as a failure and no power cycle of autorepair's is
/// recorded under way on it: the host's reboot annotation is a leftover to withdraw. Not when
/// a repair began after that failure (`begun_since`) and records no step yet: its power-off
/// may be this very annotation, written by a pass that died before recording it, and
/// withdrawing it would power the host on for that repair to power it off again. (A repair
/// whose one step is recorded ran that step, and a power cycle's would be under way.)
fn withdrawn_power_off(m: &Machine) -> Option<i64> {
    if cycling(m) {
        return None;
    }
    let (at, _) = Index::last_cycle(m).filter(|(_, result)| *result == RepairResult::Failure)?;
    let retrying = Index::pending(m)
        .iter()
        .any(|p| p.ops.is_empty() && super::begun_since(p, at));
    (!retrying).then_some(at)
}
