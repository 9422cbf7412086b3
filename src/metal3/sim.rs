//! The metal3 family as a world for the engine's chaos simulator ([`crate::engine::sim`]): the
//! objects file in memory, with a baremetal-operator and kubelets played between passes, and
//! faults: kubelets die and come back, MachineHealthChecks ask for remediation and withdraw,
//! BMCs stop carrying out power changes, zones go dark, people delete Nodes.
//!
//! The oracle's facts are read from the snapshot: health from the family's table (shared, as
//! the engine allows), how the watcher's own operations stand from the world's power states
//! and Nodes (the protocol's judge), and the rest with this module's code. A Machine is its own
//! failure domain and is down while it is unhealthy or under remediation; its zone is the scope
//! the limits count in. On top of the engine's rules, the family's own (docs/design.md, rule 7) are
//! checked after every pass: see `Rules`.

use super::file::ObjectsFile;
use super::fixture;
use super::marks::{Annotations, NODE_BACKUP_KEY, NODE_TAINTED_KEY};
use super::objects::{
    CAPI_PAUSED_KEY, CLUSTER_NAME_LABEL, DETACHED_KEY, Host, Machine, PAUSED_KEY, REBOOT_KEY,
    REQUEST_KEY, SKIP_REMEDIATION_KEY, Snapshot, ZONE_LABEL, kind,
};
use super::{Metal3, Op, OpId, Remedy, Settings, Step, protocol};
use crate::engine::backend::{Backend, BackendError};
use crate::engine::family::{Family, Health, OpState};
use crate::engine::marks::{Codec, Mark, Pending, RepairResult};
use crate::engine::object::ObjectRef;
pub use crate::engine::sim::START;
use crate::engine::sim::{CallLog, DownFact, OpFact, OpRun, PASS_SECONDS, Rng, World};
use rand::{Rng as _, SeedableRng};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

/// The settings the world is judged with: the planner under test must plan with them.
pub fn settings() -> Settings {
    Settings::default()
}

/// How a broken BMC fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Bmc {
    /// A power-off is never carried out: the host stays on, whatever its annotations say.
    NoPowerOff,
    /// A power-on is never carried out: a host that is off stays off.
    NoPowerOn,
}

/// One thing that happens to the cluster. Faults name hosts, not Machines: a Machine replaced by
/// its owner keeps its host, and the faults follow it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Fault {
    /// The kubelet on the host stops reporting: its Node goes NotReady. A reboot revives it.
    KubeletDies(String),
    KubeletBack(String),
    /// A MachineHealthCheck asks for remediation of the host's Machine.
    Request(String),
    /// It withdraws its request (the Machine looks healthy to it again).
    Withdraw(String),
    BmcBreaks(String, Bmc),
    BmcFixed(String),
    /// Every kubelet in the zone stops reporting (a switch or a power feed).
    ZoneDark(String),
    ZoneBack(String),
    /// Someone deletes the Node of the host's Machine; the kubelet registers it again.
    NodeDeleted(String),
    /// Someone puts Cluster API's `skip-remediation` on the host's Machine, and removes it.
    CapiHold(String),
    CapiRelease(String),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::KubeletDies(h) => write!(f, "the kubelet on host {h} dies"),
            Fault::KubeletBack(h) => write!(f, "the kubelet on host {h} is back"),
            Fault::Request(h) => write!(f, "a health check asks to remediate the machine on {h}"),
            Fault::Withdraw(h) => write!(f, "the health check withdraws its request on {h}"),
            Fault::BmcBreaks(h, b) => write!(f, "the BMC of host {h} breaks: {b:?}"),
            Fault::BmcFixed(h) => write!(f, "the BMC of host {h} is fixed"),
            Fault::ZoneDark(z) => write!(f, "zone {z} goes dark"),
            Fault::ZoneBack(z) => write!(f, "zone {z} is back"),
            Fault::NodeDeleted(h) => write!(f, "someone deletes the Node of the machine on {h}"),
            Fault::CapiHold(h) => {
                write!(f, "someone marks the machine on {h} {SKIP_REMEDIATION_KEY}")
            }
            Fault::CapiRelease(h) => {
                write!(
                    f,
                    "someone removes {SKIP_REMEDIATION_KEY} from the machine on {h}"
                )
            }
        }
    }
}

/// How often each fault happens, per pass ("back" and "fixed" among what is down or broken).
#[derive(Clone, Debug)]
pub struct Rates {
    pub kubelet_dies: f64,
    pub kubelet_back: f64,
    pub request: f64,
    pub withdraw: f64,
    pub bmc_breaks: f64,
    pub bmc_fixed: f64,
    pub zone_dark: f64,
    pub zone_back: f64,
    pub node_deleted: f64,
    pub capi_hold: f64,
    pub capi_release: f64,
}

impl Default for Rates {
    fn default() -> Self {
        Rates {
            kubelet_dies: 0.2,
            kubelet_back: 0.15,
            request: 0.1,
            withdraw: 0.25,
            bmc_breaks: 0.08,
            bmc_fixed: 0.2,
            zone_dark: 0.02,
            zone_back: 0.25,
            node_deleted: 0.04,
            // Off by default: the scenarios that ask for holds set it (a rate drawn at all
            // changes every seed's story).
            capi_hold: 0.0,
            capi_release: 0.3,
        }
    }
}

/// What drawing faults works on, and what it broke so far (so that it can mend it).
pub struct Chaos {
    rates: Rates,
    hosts: Vec<String>,
    zones: Vec<String>,
    dead: Vec<String>,
    requested: Vec<String>,
    broken: Vec<String>,
    dark: Vec<String>,
    held: Vec<String>,
}

/// A host's place: its zone, and the names its first Machine and Node had (replacements are
/// named after them).
#[derive(Clone, Debug)]
struct Home {
    zone: Option<String>,
    machine: String,
    node: Option<String>,
}

/// The cluster: the objects file the watcher reads and writes, and what the file does not
/// say (broken BMCs, dead kubelets, dark zones).
pub struct Metal3World {
    file: ObjectsFile,
    /// The snapshot of the file, read again after any change.
    snap: OnceCell<Snapshot>,
    bmc: BTreeMap<String, Bmc>,
    /// Hosts whose kubelet is dead.
    dead: BTreeSet<String>,
    dark: BTreeSet<String>,
    homes: BTreeMap<String, Home>,
    replacements: usize,
    rules: Rules,
    tally: BTreeMap<&'static str, usize>,
}

fn items(file: &ObjectsFile) -> &[Value] {
    file.list()["items"].as_array().map_or(&[], Vec::as_slice)
}

fn cached<'a>(snap: &'a OnceCell<Snapshot>, file: &ObjectsFile) -> &'a Snapshot {
    snap.get_or_init(|| Snapshot::from_items(items(file)))
}

fn rfc3339(t: i64) -> String {
    jiff::Timestamp::from_second(t)
        .expect("scenario clocks are valid times")
        .to_string()
}

/// Whether the item is the object named `key` (`NAMESPACE/NAME`, or `NAME` for a Node).
fn is(item: &Value, kind: &str, key: &str) -> bool {
    if item["kind"] != kind {
        return false;
    }
    let name = item["metadata"]["name"].as_str().unwrap_or("");
    match key.split_once('/') {
        Some((ns, n)) => item["metadata"]["namespace"] == ns && name == n,
        None => name == key,
    }
}

fn annotations(item: &mut Value) -> &mut Map<String, Value> {
    let meta = &mut item["metadata"];
    if !meta["annotations"].is_object() {
        meta["annotations"] = json!({});
    }
    meta["annotations"].as_object_mut().expect("made an object")
}

fn set_ready(node: &mut Value, ready: bool, now: i64) {
    node["status"]["conditions"] = json!([{
        "type": "Ready",
        "status": if ready { "True" } else { "Unknown" },
        "lastTransitionTime": rfc3339(now),
    }]);
}

fn scope_kind_name(kind: &str) -> &'static str {
    match kind {
        kind::MACHINE_SET => "MachineSet",
        kind::MACHINE_DEPLOYMENT => "MachineDeployment",
        kind::CONTROL_PLANE => "KubeadmControlPlane",
        _ => "Cluster",
    }
}

fn name_part(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

fn with_marks(mut annotations: Map<String, Value>, marks: &[String]) -> Map<String, Value> {
    for m in marks {
        let (k, v) = super::marks::split(m);
        annotations.insert(k.to_owned(), json!(v));
    }
    annotations
}

/// The objects as the API server would list them, from a snapshot: what the watcher reads of
/// them comes back the same ([`Snapshot::from_items`]).
pub fn render(snap: &Snapshot) -> Vec<Value> {
    let mut out = Vec::new();
    for m in &snap.machines {
        let mut a = Map::new();
        if m.requested {
            a.insert(REQUEST_KEY.into(), json!(""));
        }
        // Cluster API's own holds on the Machine (a paused Cluster is the Cluster's).
        for key in [SKIP_REMEDIATION_KEY, CAPI_PAUSED_KEY] {
            if m.held.as_deref().is_some_and(|why| why.contains(key)) {
                a.insert(key.into(), json!(""));
            }
        }
        if let Some(b) = &m.node_backup {
            a.insert(NODE_BACKUP_KEY.into(), json!(b));
        }
        if let Some(n) = &m.node_tainted {
            a.insert(NODE_TAINTED_KEY.into(), json!(n));
        }
        let m3m = format!("{}-m3m", m.name);
        let mut item = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": "Machine",
            "metadata": {
                "name": m.name, "namespace": m.namespace,
                "annotations": with_marks(a, &m.marks), "labels": {},
            },
            "spec": {"infrastructureRef": {
                "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "Metal3Machine", "name": m3m,
            }},
            "status": {},
        });
        if let Some(c) = &m.cluster {
            item["metadata"]["labels"][CLUSTER_NAME_LABEL] = json!(c);
            item["spec"]["clusterName"] = json!(c);
        }
        if let Some(z) = &m.failure_domain {
            item["spec"]["failureDomain"] = json!(z);
        }
        if let Some(n) = &m.node_ref {
            item["status"]["nodeRef"] = json!({"name": n});
        }
        if let Some(o) = &m.owner {
            item["metadata"]["ownerReferences"] = json!([{
                "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": scope_kind_name(&o.kind),
                "name": name_part(&o.name), "controller": true,
            }]);
        }
        if m.deleting {
            item["metadata"]["deletionTimestamp"] = json!(rfc3339(START));
        }
        let mut metal3 = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
            "kind": "Metal3Machine",
            "metadata": {"name": m3m, "namespace": m.namespace, "annotations": {}},
        });
        if let Some(h) = &m.host {
            metal3["metadata"]["annotations"][super::objects::HOST_LINK_KEY] = json!(h);
        }
        out.extend([item, metal3]);
    }
    for h in &snap.hosts {
        let mut a = Map::new();
        if let Some(r) = &h.reboot {
            a.insert(REBOOT_KEY.into(), json!(r));
        }
        for k in &h.other_reboots {
            a.insert(k.clone(), json!(""));
        }
        if h.paused {
            a.insert(PAUSED_KEY.into(), json!(""));
        }
        if h.detached {
            a.insert(DETACHED_KEY.into(), json!(""));
        }
        let (ns, name) = h.key.split_once('/').unwrap_or(("", &h.key));
        let mut item = json!({
            "apiVersion": "metal3.io/v1alpha1",
            "kind": "BareMetalHost",
            "metadata": {"name": name, "namespace": ns, "annotations": with_marks(a, &h.marks)},
            "spec": {"online": h.online, "disablePowerOff": h.disable_power_off},
            "status": {"provisioning": {"state": h.state}},
        });
        if let Some(on) = h.powered_on {
            item["status"]["poweredOn"] = json!(on);
        }
        out.push(item);
    }
    for n in &snap.nodes {
        let mut item = json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": n.name, "labels": n.labels, "annotations": n.annotations},
            "spec": {"unschedulable": n.unschedulable},
            "status": {},
        });
        if n.out_of_service {
            item["spec"]["taints"] = json!(super::objects::with_out_of_service(
                &item,
                true,
                &rfc3339(START)
            ));
        }
        if let Some(c) = n.created {
            item["metadata"]["creationTimestamp"] = json!(rfc3339(c));
        }
        if n.deleting {
            item["metadata"]["deletionTimestamp"] = json!(rfc3339(START));
        }
        if let Some((status, since)) = &n.ready {
            let mut c = json!({"type": "Ready", "status": status});
            if let Some(t) = since {
                c["lastTransitionTime"] = json!(rfc3339(*t));
            }
            item["status"]["conditions"] = json!([c]);
        }
        out.push(item);
    }
    for s in &snap.scopes {
        let (ns, name) = s
            .object
            .name
            .split_once('/')
            .unwrap_or(("", &s.object.name));
        let mut item = json!({
            "apiVersion": if s.object.kind == kind::CONTROL_PLANE {
                "controlplane.cluster.x-k8s.io/v1beta2"
            } else {
                "cluster.x-k8s.io/v1beta2"
            },
            "kind": scope_kind_name(&s.object.kind),
            "metadata": {"name": name, "namespace": ns, "annotations": with_marks(Map::new(), &s.marks)},
        });
        if let Some(p) = &s.parent {
            item["metadata"]["ownerReferences"] = json!([{
                "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
                "name": name_part(p), "controller": true,
            }]);
        }
        if s.paused {
            item["spec"]["paused"] = json!(true);
        }
        out.push(item);
    }
    for p in &snap.pods {
        let (ns, name) = p.key.split_once('/').unwrap_or(("", &p.key));
        let mut item = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"nodeName": p.node},
        });
        if p.stays {
            item["metadata"]["ownerReferences"] =
                json!([{"kind": "DaemonSet", "name": "ds", "controller": true}]);
        }
        out.push(item);
    }
    out
}

impl Metal3World {
    fn items_mut(&mut self) -> &mut Vec<Value> {
        self.snap.take();
        self.file.list_mut()["items"]
            .as_array_mut()
            .expect("the world's list has items")
    }

    fn count(&mut self, what: &'static str) {
        *self.tally.entry(what).or_default() += 1;
    }

    /// The Machine on the host, as the file says now.
    fn machine_on(&self, host: &str) -> Option<&Machine> {
        self.fleet()
            .machines
            .iter()
            .find(|m| m.host.as_deref() == Some(host))
    }

    fn host_rebooting(&self, host: &str) -> bool {
        self.fleet()
            .hosts
            .iter()
            .any(|h| h.key == host && h.reboot.is_some())
    }

    /// Changes the annotations of the host's Machine.
    fn edit_machine(&mut self, host: &str, edit: impl FnOnce(&mut Map<String, Value>)) {
        let Some(key) = self.machine_on(host).map(|m| m.key.clone()) else {
            return;
        };
        if let Some(item) = self.items_mut().iter_mut().find(|i| is(i, "Machine", &key)) {
            edit(annotations(item));
        }
    }

    /// Machines being deleted go, with their Metal3Machine and Node, as Cluster API does; a
    /// Machine with an owner is replaced on the same host, provisioned anew.
    fn replace_deleted(&mut self) {
        let gone: Vec<Machine> = self
            .fleet()
            .machines
            .iter()
            .filter(|m| m.deleting)
            .cloned()
            .collect();
        for m in gone {
            let m3m = format!("{}/{}-m3m", m.namespace, m.name);
            let node = m.node_ref.clone().unwrap_or_default();
            self.items_mut().retain(|i| {
                !is(i, "Machine", &m.key) && !is(i, "Metal3Machine", &m3m) && !is(i, "Node", &node)
            });
            let (Some(owner), Some(host)) = (&m.owner, &m.host) else {
                continue;
            };
            let Some(home) = self.homes.get(host).cloned() else {
                continue;
            };
            self.replacements += 1;
            let k = self.replacements;
            let mut new = fixture::Machine::new(&m.namespace, &format!("{}-r{k}", home.machine))
                .host(name_part(host))
                .owner(scope_kind_name(&owner.kind), name_part(&owner.name));
            if let Some(n) = &home.node {
                new = new.node(&format!("{n}-r{k}"));
            }
            if let Some(c) = &m.cluster {
                new = new.cluster(c);
            }
            if let Some(z) = &m.failure_domain {
                new = new.zone(z);
            }
            let list = fixture::Fleet::new().machine(new).build();
            let added = list["items"].as_array().cloned().unwrap_or_default();
            self.items_mut().extend(added);
            // A fresh install: whatever hung the old kubelet is gone.
            self.dead.remove(host);
            self.count("machines replaced");
        }
    }

    /// The baremetal-operator: any reboot key keeps a host off, none lets an online host on,
    /// unless its BMC does not carry the change out. Paused and detached hosts are left alone.
    fn operate_hosts(&mut self) {
        let mut rebooted = Vec::new();
        let bmc = self.bmc.clone();
        for item in self.items_mut() {
            if item["kind"] != "BareMetalHost" {
                continue;
            }
            let a = annotations(item);
            if a.contains_key(PAUSED_KEY) || a.contains_key(DETACHED_KEY) {
                continue;
            }
            let rebooting = a
                .keys()
                .any(|k| k == "reboot.metal3.io" || k.starts_with("reboot.metal3.io/"));
            let ours = a.contains_key(REBOOT_KEY);
            let key = format!(
                "{}/{}",
                item["metadata"]["namespace"].as_str().unwrap_or(""),
                item["metadata"]["name"].as_str().unwrap_or("")
            );
            let want = item["spec"]["online"].as_bool().unwrap_or(false) && !rebooting;
            if item["status"]["poweredOn"].as_bool() == Some(want) {
                continue;
            }
            match (want, bmc.get(&key)) {
                (false, Some(Bmc::NoPowerOff)) | (true, Some(Bmc::NoPowerOn)) => continue,
                _ => {}
            }
            item["status"]["poweredOn"] = json!(want);
            if !want {
                rebooted.push((key, ours));
            }
        }
        for (host, ours) in rebooted {
            // A reboot brings a hung kubelet back.
            self.dead.remove(&host);
            if ours {
                self.count("hosts powered off by the watcher");
            }
        }
    }

    /// The kubelets: a Node is Ready while its host is on, its kubelet alive and its zone
    /// reachable; with `register`, a reachable host's missing Node registers again.
    fn kubelets(&mut self, now: i64, register: bool) {
        let snap = self.fleet();
        let mut want: Vec<(String, bool, Option<String>)> = Vec::new();
        for m in &snap.machines {
            let (Some(node), Some(host)) = (&m.node_ref, &m.host) else {
                continue;
            };
            let Some(h) = snap.hosts.iter().find(|h| h.key == *host) else {
                continue;
            };
            let zone = self.homes.get(host).and_then(|h| h.zone.clone());
            let alive =
                !self.dead.contains(host) && zone.as_ref().is_none_or(|z| !self.dark.contains(z));
            want.push((node.clone(), h.powered_on == Some(true) && alive, zone));
        }
        let present: BTreeSet<String> = snap.nodes.iter().map(|n| n.name.clone()).collect();
        let items = self.items_mut();
        for (node, ready, zone) in want {
            if !present.contains(&node) {
                if register && ready {
                    let mut n = fixture::Node::new(&node).ready("True", &rfc3339(now));
                    if let Some(z) = &zone {
                        n = n.label(ZONE_LABEL, z);
                    }
                    let list = fixture::Fleet::new().node(n).build();
                    items.extend(list["items"].as_array().cloned().unwrap_or_default());
                }
                continue;
            }
            let Some(item) = items.iter_mut().find(|i| is(i, "Node", &node)) else {
                continue;
            };
            let is_ready = item["status"]["conditions"]
                .as_array()
                .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
                .is_some_and(|c| c["status"] == "True");
            if is_ready != ready {
                set_ready(item, ready, now);
            }
        }
    }
}

/// The Machine's zone: its failure domain, else its Node's zone label.
fn zone<'f>(fleet: &'f Snapshot, m: &'f Machine) -> &'f str {
    m.failure_domain
        .as_deref()
        .or_else(|| {
            let name = m.node_ref.as_deref()?;
            fleet.nodes.iter().find(|n| n.name == name)?.zone.as_deref()
        })
        .unwrap_or("")
}

fn host_of<'f>(fleet: &'f Snapshot, m: &Machine) -> Option<&'f Host> {
    let key = m.host.as_deref()?;
    fleet.hosts.iter().find(|h| h.key == key)
}

fn pendings(m: &Machine) -> impl Iterator<Item = Pending<'_, Remedy>> {
    m.marks.iter().filter_map(|t| match Annotations::parse(t) {
        Ok(Mark::Pending(p)) => Some(p),
        _ => None,
    })
}

/// A repair of autorepair's is under way on the Machine: a pending mark, or its reboot key on
/// the host.
fn under_remediation(m: &Machine, host: Option<&Host>) -> bool {
    pendings(m).next().is_some() || host.is_some_and(|h| h.reboot.is_some())
}

/// A power cycle of autorepair's is recorded as under way on the Machine.
fn cycling(m: &Machine) -> bool {
    pendings(m).any(|p| p.ops.iter::<OpId>().any(|id| id.step == Step::PowerCycle))
}

fn level_of(op: &Op) -> Remedy {
    match op {
        Op::Drain { .. } => Remedy::Drain,
        Op::DeleteMachine { .. } => Remedy::Reprovision,
        Op::PowerOff { .. }
        | Op::DeleteNode { .. }
        | Op::ClearRequest { .. }
        | Op::PowerOn { .. }
        | Op::RestoreNode { .. }
        | Op::TaintNode { .. }
        | Op::UntaintNode { .. } => Remedy::PowerCycle,
    }
}

fn run_of(state: OpState) -> OpRun {
    match state {
        OpState::Running => OpRun::Running,
        OpState::Paused => OpRun::Paused,
        OpState::Succeeded => OpRun::Succeeded,
        OpState::Failed | OpState::LacksResources => OpRun::Failed,
        OpState::Unknown => OpRun::Unknown,
    }
}

/// The rules of docs/design.md, rule 7, checked after every pass from the fleet before and after it
/// and the watcher's calls:
///
/// - **a host the watcher powered off is powered on again**: autorepair's reboot key never stays
///   on a host more than [`ORPHANED_PASSES`] complete passes in a row while no power cycle is
///   recorded as under way on its Machine (a failed cycle leaves the key to withdraw; a
///   Machine gone leaves it to remove), nor more than [`LATE_PASSES`] complete passes beyond
///   `cycle_timeout` in any case; after the quiet passes no host carries it, and every host the
///   watcher ever powered off is on unless its BMC cannot power it on or someone else keeps it
///   off ([`World::check_end`]);
/// - **no Node is deleted while its host is on**: a Node gone during a pass (only the watcher
///   acts then) had its host observed off;
/// - **no power cycle in a loop**: the watcher adds its reboot key to a Machine's host at most
///   once per repair and never within `reboot_loop_window` of an earlier power cycle of the same
///   Machine that did not fail (after a failure, only a person's clear lets a new one start);
///   nor while the host already carries the key;
/// - **machines under remediation count as down** in the limiter: that is the engine's rule
///   "started while the fleet-wide limit was exceeded", with [`World::down_domains`] counting
///   every Machine with a repair under way.
///
/// They remember what they need from pass to pass.
#[derive(Debug, Default)]
struct Rules {
    /// Per Machine, the power cycles the watcher started on it.
    power_offs: BTreeMap<String, Vec<PowerOff>>,
    /// Per host carrying autorepair's reboot key, how long it has.
    keyed: BTreeMap<String, Keyed>,
    /// Every host the watcher ever powered off.
    powered_off: BTreeSet<String>,
}

#[derive(Debug)]
struct PowerOff {
    at: i64,
    repair: String,
    /// It ended as a failure: the Machine is parked until a person clears it, so the next
    /// power cycle is the person's decision.
    failed: bool,
}

#[derive(Debug)]
struct Keyed {
    /// The first pass that ended with the key on the host.
    since: i64,
    /// Consecutive complete passes that ended with no power cycle recorded on its Machine.
    orphaned: u32,
    /// Complete passes that ended with the key on though `cycle_timeout` had passed.
    late: u32,
}

/// Complete passes a reboot key may stay with no power cycle under way: the protocol's three
/// steps (Node deleted, request removed, key removed), one more for a request a health check
/// sets again meanwhile.
const ORPHANED_PASSES: u32 = 4;
/// Complete passes a reboot key may outlive `cycle_timeout`: the pass that fails the cycle and
/// the protocol's steps after it.
const LATE_PASSES: u32 = 5;

type Broken = (String, String);

fn broken(rule: &str, detail: String) -> Result<(), Broken> {
    Err((rule.to_owned(), detail))
}

impl Rules {
    fn check(
        &mut self,
        before: &Snapshot,
        after: &Snapshot,
        calls: &CallLog<Metal3>,
        now: i64,
    ) -> Result<(), Broken> {
        let settings = settings();
        // Nodes fenced only once their host is seen off.
        let left: BTreeSet<&str> = after.nodes.iter().map(|n| n.name.as_str()).collect();
        for n in before
            .nodes
            .iter()
            .filter(|n| !left.contains(n.name.as_str()))
        {
            let m = before
                .machines
                .iter()
                .find(|m| m.node_ref.as_deref() == Some(n.name.as_str()));
            let power = m.and_then(|m| host_of(before, m)).map(|h| h.powered_on);
            if power != Some(Some(false)) {
                return broken(
                    "a Node deleted while its host is on",
                    format!(
                        "node {} of machine {} went while its host's power was {power:?}",
                        n.name,
                        m.map_or("?", |m| m.key.as_str())
                    ),
                );
            }
        }
        // Nodes tainted out of service only once their host is seen off.
        let tainted_before: BTreeSet<&str> = before
            .nodes
            .iter()
            .filter(|n| n.out_of_service)
            .map(|n| n.name.as_str())
            .collect();
        for n in after
            .nodes
            .iter()
            .filter(|n| n.out_of_service && !tainted_before.contains(n.name.as_str()))
        {
            let m = before
                .machines
                .iter()
                .find(|m| m.node_ref.as_deref() == Some(n.name.as_str()));
            let power = m.and_then(|m| host_of(before, m)).map(|h| h.powered_on);
            if power != Some(Some(false)) {
                return broken(
                    "a Node tainted out of service while its host is on",
                    format!(
                        "node {} of machine {} was tainted while its host's power was {power:?}",
                        n.name,
                        m.map_or("?", |m| m.key.as_str())
                    ),
                );
            }
        }
        // The outcome of power cycles remembered, before judging new ones.
        for (object, mark) in &calls.added {
            if let Ok(Mark::Result(r)) = Annotations::parse(mark)
                && r.result == RepairResult::Failure
            {
                for p in self
                    .power_offs
                    .get_mut(object.name.as_str())
                    .into_iter()
                    .flatten()
                {
                    p.failed |= p.repair == r.id;
                }
            }
        }
        // Nothing starts on a Machine Cluster API holds back (safety rule 7).
        for s in &calls.submitted {
            if let Some(why) = before
                .machines
                .iter()
                .find(|m| m.key == s.target)
                .and_then(|m| m.held.as_deref())
            {
                return broken(
                    "repair on a Machine Cluster API holds back",
                    format!("{}: {} submitted though {why}", s.target, s.op),
                );
            }
        }
        for s in &calls.submitted {
            let Op::PowerOff { machine, host, .. } = &s.op else {
                continue;
            };
            let repair = crate::engine::plan::repair_of_reason(&s.reason).unwrap_or("?");
            if before
                .hosts
                .iter()
                .any(|h| h.key == *host && h.reboot.is_some())
            {
                return broken(
                    "power cycle started twice",
                    format!("{machine}: host {host} already carried {REBOOT_KEY}"),
                );
            }
            let earlier = self.power_offs.entry(machine.clone()).or_default();
            if let Some(p) = earlier.iter().find(|p| p.repair == repair) {
                return broken(
                    "power cycle started twice",
                    format!(
                        "{machine}: repair {repair} powered {host} off again (first at {})",
                        p.at
                    ),
                );
            }
            if let Some(p) = earlier
                .iter()
                .find(|p| !p.failed && now - p.at < settings.reboot_loop_window)
            {
                return broken(
                    "power cycles in a loop",
                    format!(
                        "{machine}: power cycle {repair} started {}s after {} (reboot_loop_window {}s)",
                        now - p.at,
                        p.repair,
                        settings.reboot_loop_window
                    ),
                );
            }
            earlier.push(PowerOff {
                at: now,
                repair: repair.to_owned(),
                failed: false,
            });
            self.powered_off.insert(host.clone());
        }
        // Reboot keys left behind.
        let keyed: Vec<&Host> = after.hosts.iter().filter(|h| h.reboot.is_some()).collect();
        self.keyed.retain(|h, _| keyed.iter().any(|k| k.key == *h));
        for h in keyed {
            let machine = after
                .machines
                .iter()
                .find(|m| m.host.as_deref() == Some(h.key.as_str()));
            let k = self.keyed.entry(h.key.clone()).or_insert(Keyed {
                since: now,
                orphaned: 0,
                late: 0,
            });
            if calls.crashed {
                continue;
            }
            if machine.is_some_and(cycling) {
                k.orphaned = 0;
            } else {
                k.orphaned += 1;
            }
            if now - k.since > settings.cycle_timeout {
                k.late += 1;
            }
            let power = h.powered_on;
            if k.orphaned > ORPHANED_PASSES {
                return broken(
                    "a power-off left behind",
                    format!(
                        "host {} (power {power:?}) has carried {REBOOT_KEY} for {} complete passes with no power cycle under way on {}",
                        h.key,
                        k.orphaned,
                        machine.map_or("its gone machine", |m| m.key.as_str())
                    ),
                );
            }
            if k.late > LATE_PASSES {
                return broken(
                    "a power-off kept past cycle_timeout",
                    format!(
                        "host {} (power {power:?}) has carried {REBOOT_KEY} since {} ({}s), {} complete passes past cycle_timeout",
                        h.key,
                        k.since,
                        now - k.since,
                        k.late
                    ),
                );
            }
        }
        Ok(())
    }
}

fn tally_calls(tally: &mut BTreeMap<&'static str, usize>, calls: &CallLog<Metal3>) {
    let mut count = |what| *tally.entry(what).or_default() += 1;
    for s in &calls.submitted {
        match s.op {
            Op::PowerOff { .. } => count("power cycles started"),
            Op::DeleteMachine { .. } => count("reprovisions started"),
            _ => {}
        }
    }
    for (_, mark) in &calls.added {
        // A request that ended without starting anything is not a power cycle.
        if let Ok(Mark::Result(r)) = Annotations::parse(mark)
            && !r.ops.is_empty()
        {
            match (r.repair, r.result) {
                (Remedy::PowerCycle, RepairResult::Success) => count("power cycles succeeded"),
                (Remedy::PowerCycle, RepairResult::Failure) => count("power cycles failed"),
                _ => {}
            }
        }
    }
    for a in &calls.advanced {
        match a.op {
            Op::DeleteNode { .. } => count("nodes fenced"),
            Op::ClearRequest { .. } => count("requests cleared"),
            Op::PowerOn { .. } => count("reboot keys removed"),
            Op::RestoreNode { .. } => count("nodes restored"),
            Op::TaintNode { .. } => count("nodes tainted out-of-service"),
            Op::UntaintNode { .. } => count("out-of-service taints removed"),
            _ => {}
        }
    }
}

impl Backend<Metal3> for Metal3World {
    fn snapshot(&mut self) -> Result<Snapshot, BackendError> {
        Ok(self.fleet().clone())
    }
    fn add_marks(&mut self, o: &ObjectRef, m: &[String], r: &str) -> Result<(), BackendError> {
        self.snap.take();
        self.file.add_marks(o, m, r)
    }
    fn remove_marks(&mut self, o: &ObjectRef, m: &[String], r: &str) -> Result<(), BackendError> {
        self.snap.take();
        self.file.remove_marks(o, m, r)
    }
    fn submit(
        &mut self,
        target: &str,
        op: &Op,
        reason: &str,
        after: Option<&OpId>,
    ) -> Result<OpId, BackendError> {
        self.snap.take();
        let id = self.file.submit(target, op, reason, after)?;
        if let Op::PowerOff { host, .. } = op
            && self.bmc.contains_key(host)
        {
            self.count("power cycles started on a broken BMC");
        }
        Ok(id)
    }
    fn advance(&mut self, o: &ObjectRef, op: &Op, r: &str) -> Result<(), BackendError> {
        self.snap.take();
        self.file.advance(o, op, r)
    }
    fn can_follow(&self, op: &Op) -> bool {
        self.file.can_follow(op)
    }
    fn supports(&self, step: Step) -> bool {
        <ObjectsFile as Backend<Metal3>>::supports(&self.file, step)
    }
}

impl World for Metal3World {
    type Family = Metal3;
    type Fleet = Snapshot;
    type Backend = Metal3World;
    type Fault = Fault;
    type Rates = Rates;
    type Chaos = Chaos;
    type Setup = ();

    fn new(fleet: &Snapshot, _: &(), _start: i64) -> Self {
        let list =
            json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": render(fleet)});
        let mut homes = BTreeMap::new();
        let mut dead = BTreeSet::new();
        for m in &fleet.machines {
            let Some(host) = &m.host else { continue };
            homes.insert(
                host.clone(),
                Home {
                    zone: Some(zone(fleet, m))
                        .filter(|z| !z.is_empty())
                        .map(str::to_owned),
                    machine: m.name.clone(),
                    node: m.node_ref.clone(),
                },
            );
            let node = m
                .node_ref
                .as_deref()
                .and_then(|n| fleet.nodes.iter().find(|x| x.name == n));
            let on = host_of(fleet, m).is_some_and(|h| h.powered_on == Some(true));
            // A Node not Ready on a host that is on: its kubelet is what is broken.
            if on && node.is_some_and(|n| n.ready.as_ref().is_none_or(|(s, _)| s != "True")) {
                dead.insert(host.clone());
            }
        }
        Metal3World {
            file: ObjectsFile::in_memory(list),
            snap: OnceCell::new(),
            bmc: BTreeMap::new(),
            dead,
            dark: BTreeSet::new(),
            homes,
            replacements: 0,
            rules: Rules::default(),
            tally: BTreeMap::new(),
        }
    }

    fn generate(targets: usize, seed: u64) -> Snapshot {
        generate(targets, seed)
    }

    fn fleet(&self) -> &Snapshot {
        cached(&self.snap, &self.file)
    }

    fn backend(&mut self) -> &mut Metal3World {
        self
    }

    fn chaos(fleet: &Snapshot, rates: &Rates) -> Chaos {
        let mut zones: Vec<String> = fleet
            .machines
            .iter()
            .map(|m| zone(fleet, m))
            .filter(|z| !z.is_empty())
            .map(str::to_owned)
            .collect();
        zones.sort();
        zones.dedup();
        Chaos {
            rates: rates.clone(),
            hosts: fleet.hosts.iter().map(|h| h.key.clone()).collect(),
            zones,
            dead: Vec::new(),
            requested: fleet
                .machines
                .iter()
                .filter(|m| m.requested)
                .filter_map(|m| m.host.clone())
                .collect(),
            broken: Vec::new(),
            dark: Vec::new(),
            held: Vec::new(),
        }
    }

    fn draw(c: &mut Chaos, rng: &mut Rng) -> Vec<Fault> {
        let pick = |rng: &mut Rng, list: &[String]| list[rng.random_range(0..list.len())].clone();
        let take = |rng: &mut Rng, list: &mut Vec<String>| {
            list.swap_remove(rng.random_range(0..list.len()))
        };
        let r = c.rates.clone();
        let mut out = Vec::new();
        if !c.hosts.is_empty() {
            if rng.random_bool(r.kubelet_dies) {
                let h = pick(rng, &c.hosts);
                c.dead.push(h.clone());
                out.push(Fault::KubeletDies(h));
            }
            if rng.random_bool(r.request) {
                let h = pick(rng, &c.hosts);
                c.requested.push(h.clone());
                out.push(Fault::Request(h));
            }
            if rng.random_bool(r.bmc_breaks) {
                let h = pick(rng, &c.hosts);
                let how = if rng.random_bool(0.5) {
                    Bmc::NoPowerOff
                } else {
                    Bmc::NoPowerOn
                };
                c.broken.push(h.clone());
                out.push(Fault::BmcBreaks(h, how));
            }
            if rng.random_bool(r.node_deleted) {
                out.push(Fault::NodeDeleted(pick(rng, &c.hosts)));
            }
            if r.capi_hold > 0.0 && rng.random_bool(r.capi_hold) {
                let h = pick(rng, &c.hosts);
                c.held.push(h.clone());
                out.push(Fault::CapiHold(h));
            }
        }
        if !c.dead.is_empty() && rng.random_bool(r.kubelet_back) {
            out.push(Fault::KubeletBack(take(rng, &mut c.dead)));
        }
        if !c.requested.is_empty() && rng.random_bool(r.withdraw) {
            out.push(Fault::Withdraw(take(rng, &mut c.requested)));
        }
        if !c.held.is_empty() && rng.random_bool(r.capi_release) {
            out.push(Fault::CapiRelease(take(rng, &mut c.held)));
        }
        if !c.broken.is_empty() && rng.random_bool(r.bmc_fixed) {
            out.push(Fault::BmcFixed(take(rng, &mut c.broken)));
        }
        if !c.zones.is_empty() && rng.random_bool(r.zone_dark) {
            let z = pick(rng, &c.zones);
            c.dark.push(z.clone());
            out.push(Fault::ZoneDark(z));
        }
        if !c.dark.is_empty() && rng.random_bool(r.zone_back) {
            out.push(Fault::ZoneBack(take(rng, &mut c.dark)));
        }
        out
    }

    fn apply(&mut self, fault: &Fault, now: i64) {
        match fault {
            Fault::KubeletDies(h) => {
                self.dead.insert(h.clone());
                self.count("kubelets died");
                self.kubelets(now, false);
            }
            Fault::KubeletBack(h) => {
                self.dead.remove(h);
                self.kubelets(now, false);
            }
            Fault::Request(h) => {
                self.edit_machine(h, |a| {
                    a.entry(REQUEST_KEY).or_insert_with(|| json!(""));
                });
                self.count("remediation requests");
            }
            Fault::Withdraw(h) => {
                let mid_cycle = self.host_rebooting(h);
                let mut had = false;
                self.edit_machine(h, |a| had = a.remove(REQUEST_KEY).is_some());
                if had && mid_cycle {
                    self.count("requests withdrawn mid-cycle");
                }
            }
            Fault::BmcBreaks(h, how) => {
                if self.host_rebooting(h) {
                    self.count("BMCs broken mid-cycle");
                }
                self.bmc.insert(h.clone(), *how);
            }
            Fault::BmcFixed(h) => {
                self.bmc.remove(h);
            }
            Fault::ZoneDark(z) => {
                self.dark.insert(z.clone());
                self.count("zones gone dark");
                self.kubelets(now, false);
            }
            Fault::ZoneBack(z) => {
                self.dark.remove(z);
                self.kubelets(now, false);
            }
            Fault::CapiHold(h) => {
                self.edit_machine(h, |a| {
                    a.insert(SKIP_REMEDIATION_KEY.into(), json!(""));
                });
                self.count("machines held by Cluster API");
            }
            Fault::CapiRelease(h) => {
                self.edit_machine(h, |a| {
                    a.remove(SKIP_REMEDIATION_KEY);
                });
            }
            Fault::NodeDeleted(h) => {
                let Some(node) = self.machine_on(h).and_then(|m| m.node_ref.clone()) else {
                    return;
                };
                let before = self.items_mut().len();
                self.items_mut().retain(|i| !is(i, "Node", &node));
                if self.items_mut().len() < before {
                    self.count("nodes deleted by someone");
                }
            }
        }
    }

    fn advance(&mut self, now: i64) {
        // The times the watcher's writes carry (a taint's timeAdded) are the simulation's.
        self.file.set_clock(now);
        self.replace_deleted();
        self.operate_hosts();
        self.kubelets(now, true);
    }

    fn health(&self, fleet: &Snapshot, m: &Machine, now: i64) -> Health<Remedy> {
        let settings = settings();
        let index = Metal3::index(fleet, &settings, now);
        Metal3::assess(&index, m).health
    }

    fn granted(_fleet: &Snapshot, m: &Machine) -> Option<Remedy> {
        m.requested.then_some(Remedy::PowerCycle)
    }

    fn domain<'f>(_fleet: &'f Snapshot, m: &'f Machine) -> &'f str {
        &m.key
    }

    fn limit_scope<'f>(fleet: &'f Snapshot, m: &'f Machine) -> Option<&'f str> {
        Some(zone(fleet, m))
    }

    fn down_domains(fleet: &Snapshot, now: i64) -> Vec<DownFact<'_>> {
        let settings = settings();
        let index = Metal3::index(fleet, &settings, now);
        let hosts: HashMap<&str, &Host> = fleet.hosts.iter().map(|h| (h.key.as_str(), h)).collect();
        fleet
            .machines
            .iter()
            .filter(|m| {
                let host = m.host.as_deref().and_then(|h| hosts.get(h).copied());
                under_remediation(m, host) || Metal3::assess(&index, m).health.is_broken()
            })
            .map(|m| DownFact {
                domain: &m.key,
                scope: zone(fleet, m),
            })
            .collect()
    }

    fn scope_marks<'f>(fleet: &'f Snapshot, m: &'f Machine) -> Vec<&'f [String]> {
        let scope = |key: &str| fleet.scopes.iter().find(|s| s.key == key);
        let mut out: Vec<&[String]> = Vec::new();
        if let Some(owner) = m
            .owner
            .as_ref()
            .and_then(|o| scope(&format!("{}/{}", o.kind, o.name)))
        {
            out.push(&owner.marks);
            if let Some(p) = owner.parent.as_deref().and_then(scope) {
                out.push(&p.marks);
            }
        }
        if let Some(c) = m
            .cluster
            .as_ref()
            .and_then(|c| scope(&format!("{}/{}/{c}", kind::CLUSTER, m.namespace)))
        {
            out.push(&c.marks);
        }
        out
    }

    fn ops(fleet: &Snapshot, now: i64) -> Vec<OpFact<'_, Metal3>> {
        let settings = settings();
        let index = Metal3::index(fleet, &settings, now);
        let mut out = Vec::new();
        for m in &fleet.machines {
            let marks: Vec<Mark<'_, Remedy>> = m
                .marks
                .iter()
                .filter_map(|t| Annotations::parse(t).ok())
                .collect();
            // A pass that died between starting a step and recording it: the world shows the
            // step, and it is the newest unrecorded repair's.
            let unrecorded = marks
                .iter()
                .filter_map(|mark| match mark {
                    Mark::Pending(p) if p.ops.is_empty() => Some(p),
                    _ => None,
                })
                .max_by_key(|p| p.since);
            for mark in &marks {
                match mark {
                    Mark::Pending(p) => {
                        let mut steps: Vec<Step> = p.ops.iter::<OpId>().map(|id| id.step).collect();
                        if unrecorded.is_some_and(|u| u.id == p.id) {
                            steps.extend(protocol::visible_step(&index, m, p.repair));
                        }
                        for step in steps {
                            let (state, _, _) = protocol::judge(&index, m, step, p.since);
                            out.push(OpFact {
                                id: OpId {
                                    step,
                                    repair: p.id.to_owned(),
                                },
                                repair: Some(p.id),
                                target: Some(m.key.as_str()),
                                step: Some(step),
                                run: run_of(state),
                            });
                        }
                    }
                    Mark::Result(r) => {
                        for id in r.ops.iter::<OpId>() {
                            out.push(OpFact {
                                step: Some(id.step),
                                id,
                                repair: Some(r.id),
                                target: Some(m.key.as_str()),
                                run: if r.result == RepairResult::Success {
                                    OpRun::Succeeded
                                } else {
                                    OpRun::Failed
                                },
                            });
                        }
                    }
                    _ => {}
                }
            }
        }
        out
    }

    fn level_of(op: &Op) -> Remedy {
        level_of(op)
    }

    fn check_pass(
        &mut self,
        before: &Snapshot,
        calls: &CallLog<Metal3>,
        now: i64,
    ) -> Result<(), Broken> {
        tally_calls(&mut self.tally, calls);
        let after = cached(&self.snap, &self.file);
        self.rules.check(before, after, calls, now)
    }

    fn check_end(&self, _now: i64) -> Result<(), Broken> {
        let fleet = self.fleet();
        if let Some(h) = fleet.hosts.iter().find(|h| h.reboot.is_some()) {
            return broken(
                "a power-off left behind",
                format!(
                    "host {} still carries {REBOOT_KEY} after the quiet passes (power {:?})",
                    h.key, h.powered_on
                ),
            );
        }
        if let Some(m) = fleet.machines.iter().find(|m| m.node_tainted.is_some()) {
            let node = m.node_tainted.as_deref().unwrap_or_default();
            let host = host_of(fleet, m);
            // Only a host kept off (or a kubelet dead for good) keeps a Node out of service.
            let kept = host.is_none_or(|h| h.powered_on != Some(true))
                || fleet
                    .nodes
                    .iter()
                    .any(|n| n.name == node && n.ready.as_ref().is_none_or(|(st, _)| st != "True"));
            if !kept {
                return broken(
                    "an out-of-service taint left behind",
                    format!(
                        "node {node} of machine {} still carries autorepair's out-of-service taint after the quiet passes, its host on and the Node Ready",
                        m.key
                    ),
                );
            }
        }
        for key in &self.rules.powered_off {
            let Some(h) = fleet.hosts.iter().find(|h| h.key == *key) else {
                continue;
            };
            let kept_off = self.bmc.get(key) == Some(&Bmc::NoPowerOn)
                || !h.online
                || h.paused
                || h.detached
                || !h.other_reboots.is_empty();
            if h.powered_on != Some(true) && !kept_off {
                return broken(
                    "a host the watcher powered off left off",
                    format!("host {key} is still off after the quiet passes"),
                );
            }
        }
        Ok(())
    }

    fn tally(&self) -> Vec<(&'static str, usize)> {
        self.tally.iter().map(|(k, n)| (*k, *n)).collect()
    }
}

fn as_refs(v: &[(String, String)]) -> Vec<(&str, &str)> {
    v.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

fn uuid(rng: &mut Rng) -> String {
    uuid::Uuid::from_u128(rng.random()).to_string()
}

/// About `targets` Machines in two clusters (`prod`, three quarters of them, and `edge`) over
/// three zones, each with its host and Node. Each cluster has a control plane of three and two
/// MachineDeployments with a MachineSet each; one Machine in ten has no owner. Policies and
/// suspends (permanent and timed) are spread over Clusters, owners and Machines, with
/// malformed autorepair annotations and other tools' annotations; some Machines start broken
/// (Node NotReady, a request), power-cycled recently (the loop guard holds them) or parked by a
/// failure, and some hosts are paused.
pub fn generate(targets: usize, seed: u64) -> Snapshot {
    let mut rng = Rng::seed_from_u64(seed);
    let zones = ["zone-a", "zone-b", "zone-c"];
    let mut fleet = fixture::Fleet::new();
    let prod = (targets * 3).div_ceil(4);
    let levels = [Remedy::Drain, Remedy::PowerCycle, Remedy::Reprovision];
    // A policy, a suspend, or nothing, with the odds given for each.
    let policy = |rng: &mut Rng, suspend: f64, level: f64| -> Vec<(String, String)> {
        let roll: f64 = rng.random();
        let mut out = Vec::new();
        if roll < suspend {
            let value = if rng.random_bool(0.5) {
                String::new()
            } else {
                (START + rng.random_range(1..20) * PASS_SECONDS).to_string()
            };
            out.push((super::marks::SUSPEND_KEY.to_owned(), value));
        } else if roll < suspend + level {
            let l = levels[rng.random_range(0..levels.len())];
            out.push((super::marks::POLICY_KEY.to_owned(), l.to_string()));
        }
        if rng.random_bool(0.3) {
            out.push((
                "example.com/owner".to_owned(),
                format!("team-{}", rng.random_range(1..5)),
            ));
        }
        out
    };
    let mut i = 0;
    for (ns, count) in [("prod", prod), ("edge", targets - prod)] {
        if count == 0 {
            continue;
        }
        let cluster_policy = if rng.random_bool(0.85) {
            let l = if rng.random_bool(0.7) {
                Remedy::PowerCycle
            } else {
                Remedy::Reprovision
            };
            vec![(super::marks::POLICY_KEY.to_owned(), l.to_string())]
        } else {
            Vec::new()
        };
        fleet = fleet.scope("Cluster", ns, ns, &as_refs(&cluster_policy));
        let cp = policy(&mut rng, 0.2, 0.3);
        fleet = fleet.scope(
            "KubeadmControlPlane",
            ns,
            &format!("{ns}-cp"),
            &as_refs(&cp),
        );
        for d in 0..2 {
            let md = format!("{ns}-workers-{d}");
            fleet = fleet.scope(
                "MachineDeployment",
                ns,
                &md,
                &as_refs(&policy(&mut rng, 0.1, 0.4)),
            );
            let ms = policy(&mut rng, 0.0, 0.1);
            fleet = fleet.item(json!({
                "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
                "metadata": {
                    "name": format!("{md}-ms"), "namespace": ns,
                    "annotations": ms.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<Map<String, Value>>(),
                    "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment", "name": md, "controller": true}],
                },
            }));
        }
        for j in 0..count {
            let name = format!("{ns}-m{i:02}");
            let host = format!("{ns}-h{i:02}");
            let node = format!("{ns}-n{i:02}");
            let zone = zones[i % zones.len()];
            let mut m = fixture::Machine::new(ns, &name)
                .host(&host)
                .node(&node)
                .cluster(ns);
            // Some Machines have no failure domain: their zone is their Node's label.
            if i % 7 != 3 {
                m = m.zone(zone);
            }
            m = match j {
                0..3 => m.owner("KubeadmControlPlane", &format!("{ns}-cp")),
                _ if j % 10 == 9 => m,
                _ => m.owner("MachineSet", &format!("{ns}-workers-{}-ms", j % 2)),
            };
            for (k, v) in policy(&mut rng, 0.04, 0.08) {
                m = m.annotate(&k, &v);
            }
            let roll: f64 = rng.random();
            if roll < 0.03 {
                m = m.annotate("autorepair.io/policy", "reboot");
            } else if roll < 0.06 {
                m = m.annotate("autorepair.io/owner", "team-1");
            } else if roll < 0.1 {
                let id = uuid(&mut rng);
                let at = START - rng.random_range(1..10) * PASS_SECONDS;
                m = m.annotate(
                    &format!("autorepair.io/repair.{id}"),
                    &format!("result:power-cycle:{at}:success:power-cycle.{id}"),
                );
            } else if roll < 0.12 {
                let id = uuid(&mut rng);
                m = m.annotate(
                    &format!("autorepair.io/repair.{id}"),
                    &format!(
                        "result:power-cycle:{}:failure:power-cycle.{id}",
                        START - 86400
                    ),
                );
            }
            if rng.random_bool(0.05) {
                m = m.requested();
            }
            let mut n = fixture::Node::new(&node).label(ZONE_LABEL, zone);
            if rng.random_bool(0.08) {
                n = n.ready("Unknown", fixture::T0);
            }
            let mut h = fixture::Host::new(ns, &host);
            if rng.random_bool(0.04) {
                h = h.annotate(PAUSED_KEY, "");
            }
            fleet = fleet.machine(m).host(h).node(n);
            i += 1;
        }
    }
    let list = fleet.build();
    Snapshot::from_items(list["items"].as_array().map_or(&[][..], Vec::as_slice))
}

#[cfg(test)]
mod tests;
