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
use super::{Metal3, Metal3Level, Op, OpId, Settings, Step, protocol};
use crate::engine::backend::{Around, BackendError, Intercepted, Write};
use crate::engine::family::{Family, Health, OpState};
use crate::engine::marks::{Codec, Mark, Pending, RepairResult};
pub use crate::engine::sim::START;
use crate::engine::sim::{Broken, CallLog, DownFact, OpFact, OpRun, PASS_SECONDS, Rng, World};
use rand::{Rng as _, SeedableRng};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;

mod backend;
mod facts;
mod fleet;
mod rules;

pub use backend::Side;
use facts::*;
use fleet::*;
pub use fleet::{generate, render};
use rules::*;

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
    /// The watcher's backend: the objects file, with what the world does around each call
    /// ([`Side`]) and nothing else between them, so that every method of the file reaches it.
    backend: Intercepted<ObjectsFile, Side>,
    /// The snapshot of the file, read again after any change.
    snap: OnceCell<Snapshot>,
    /// Hosts whose kubelet is dead.
    dead: BTreeSet<String>,
    dark: BTreeSet<String>,
    homes: BTreeMap<String, Home>,
    replacements: usize,
    rules: Rules,
    tally: BTreeMap<&'static str, usize>,
}

impl Metal3World {
    fn items_mut(&mut self) -> &mut Vec<Value> {
        self.snap.take();
        self.backend.inner.list_mut()["items"]
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
        let bmc = self.backend.by.bmc.clone();
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
        // Only what changes is written: writing invalidates the world's snapshot, and reading
        // it again from the objects was most of a scenario's time.
        let items = fleet::items(&self.backend.inner);
        let mut readiness: BTreeMap<String, bool> = BTreeMap::new();
        want.retain(|(node, ready, _)| {
            if !present.contains(node) {
                return register && *ready;
            }
            let Some(item) = items.iter().find(|i| is(i, "Node", node)) else {
                return false;
            };
            let is_ready = readiness.entry(node.clone()).or_insert_with(|| {
                item["status"]["conditions"]
                    .as_array()
                    .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
                    .is_some_and(|c| c["status"] == "True")
            });
            std::mem::replace(is_ready, *ready) != *ready
        });
        if want.is_empty() {
            return;
        }
        let items = self.items_mut();
        for (node, ready, zone) in want {
            if !present.contains(&node) {
                let mut n = fixture::Node::new(&node).ready("True", &rfc3339(now));
                if let Some(z) = &zone {
                    n = n.label(ZONE_LABEL, z);
                }
                let list = fixture::Fleet::new().node(n).build();
                // A Node registers anew: made now.
                items.extend(list["items"].as_array().into_iter().flatten().map(|i| {
                    let mut i = i.clone();
                    i["metadata"]["creationTimestamp"] = json!(rfc3339(now));
                    i
                }));
            } else if let Some(item) = items.iter_mut().find(|i| is(i, "Node", &node)) {
                set_ready(item, ready, now);
            }
        }
    }
}

impl World for Metal3World {
    type Family = Metal3;
    type Fleet = Snapshot;
    type Backend = Intercepted<ObjectsFile, Side>;
    type Fault = Fault;
    type Rates = Rates;
    type Chaos = Chaos;
    type Setup = ();

    /// Replicas electing a leader through a Kubernetes Lease, as `run --loop` does.
    fn coordination(
        _: &(),
        replicas: usize,
        start: i64,
    ) -> Option<Box<dyn crate::engine::sim::Coordination>> {
        Some(Box::new(crate::k8s::lease_sim::LeaseReplicas::new(
            replicas, start,
        )))
    }

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
        let side = Side {
            bmc: BTreeMap::new(),
            tally: BTreeMap::new(),
        };
        Metal3World {
            backend: Intercepted::wrap(ObjectsFile::in_memory(list), side),
            snap: OnceCell::new(),
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
        cached(&self.snap, &self.backend.inner)
    }

    fn backend(&mut self) -> &mut Intercepted<ObjectsFile, Side> {
        // The watcher writes through it: what the world read before is stale after.
        self.snap.take();
        &mut self.backend
    }

    fn domain_faults(fleet: &Snapshot) -> Vec<(Fault, Fault)> {
        fleet
            .hosts
            .iter()
            .map(|h| {
                (
                    Fault::KubeletDies(h.key.clone()),
                    Fault::KubeletBack(h.key.clone()),
                )
            })
            .collect()
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
                self.backend.by.bmc.insert(h.clone(), *how);
            }
            Fault::BmcFixed(h) => {
                self.backend.by.bmc.remove(h);
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
        self.backend.inner.set_clock(now);
        self.replace_deleted();
        self.operate_hosts();
        self.kubelets(now, true);
    }

    fn health(&self, fleet: &Snapshot, m: &Machine, now: i64) -> Health<Metal3Level> {
        let settings = settings();
        let index = Metal3::index(fleet, &settings, now);
        Metal3::assess(&index, m).health
    }

    fn granted(_fleet: &Snapshot, m: &Machine) -> Option<Metal3Level> {
        m.requested.then_some(Metal3Level::PowerCycle)
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

    /// A Machine down only because a remediation request names it comes back when the request
    /// is withdrawn, which no object dates (docs/limits-over-time.md).
    fn storm_domains(fleet: &Snapshot, now: i64) -> Vec<DownFact<'_>> {
        let settings = settings();
        let index = Metal3::index(fleet, &settings, now);
        let dated: HashSet<&str> = fleet
            .machines
            .iter()
            .filter(|m| !m.requested || index.symptom(m).is_some())
            .map(|m| m.key.as_str())
            .collect();
        let mut down = Self::down_domains(fleet, now);
        down.retain(|d| dated.contains(d.domain));
        down
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
            let marks: Vec<Mark<'_, Metal3Level>> = m
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

    fn level_of(op: &Op) -> Metal3Level {
        level_of(op)
    }

    fn check_pass(
        &mut self,
        before: &Snapshot,
        calls: &CallLog<Metal3>,
        now: i64,
    ) -> Result<(), Broken> {
        tally_calls(&mut self.tally, calls);
        let after = cached(&self.snap, &self.backend.inner);
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
            let kept_off = self.backend.by.bmc.get(key) == Some(&Bmc::NoPowerOn)
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
        let mut t = self.tally.clone();
        for (k, n) in &self.backend.by.tally {
            *t.entry(k).or_default() += n;
        }
        t.into_iter().collect()
    }
}

#[cfg(test)]
mod tests;
