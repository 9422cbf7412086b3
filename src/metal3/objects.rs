//! The Kubernetes objects the metal3 family reads, from the JSON the API server (or
//! `kubectl get … -o json`) gives: Cluster API Machines with their Metal3Machines,
//! BareMetalHosts and Nodes, the Machines' owners and Clusters, and Pods for draining. Only the
//! fields autorepair uses are read; an object it cannot read is reported by name and skipped,
//! and the others are planned as usual.

use super::marks::{self, PREFIX};
use crate::engine::ObjectRef;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The Machine annotation that asks for remediation (set by OpenShift's MachineHealthCheck, or
/// by anyone): a once-off request for a power cycle.
pub const REQUEST_KEY: &str = "host.metal3.io/external-remediation";
/// Cluster API's manual remediation request on a Machine (set by a person; Cluster API itself
/// never removes it): served as a request for a power cycle, and removed once served.
pub const REMEDIATE_KEY: &str = "cluster.x-k8s.io/remediate-machine";
/// Cluster API's opt-out on a Machine: its MachineHealthCheck leaves it out altogether.
pub const SKIP_REMEDIATION_KEY: &str = "cluster.x-k8s.io/skip-remediation";
/// Cluster API's pause of one object (value ignored); a Cluster pauses with `spec.paused`.
pub const CAPI_PAUSED_KEY: &str = "cluster.x-k8s.io/paused";
/// Every annotation that asks for a power cycle of a Machine, as the request the protocol serves.
pub const REQUEST_KEYS: [&str; 2] = [REQUEST_KEY, REMEDIATE_KEY];
/// The API group of autorepair's remediation objects (its Cluster API external remediation
/// provider, docs/metal3.md "With Cluster API's MachineHealthCheck").
pub const REMEDIATION_GROUP: &str = "remediation.autorepair.io";
/// The kind a MachineHealthCheck creates, one per unhealthy Machine, from the template kind
/// [`REMEDIATION_TEMPLATE_KIND`].
pub const REMEDIATION_KIND: &str = "AutorepairRemediation";
pub const REMEDIATION_VERSION: &str = "v1alpha1";
pub const REMEDIATION_TEMPLATE_KIND: &str = "AutorepairRemediationTemplate";
/// The host annotation that powers it off until it is removed; autorepair's own reboot key.
pub const REBOOT_KEY: &str = "reboot.metal3.io/machine-remediation";
/// Any reboot request: the bare key or any `reboot.metal3.io/<suffix>`.
const REBOOT_PREFIX: &str = "reboot.metal3.io";
/// Machine → host link, `NAMESPACE/NAME`: on the Metal3Machine (CAPM3) or the Machine (OpenShift).
pub const HOST_LINK_KEY: &str = "metal3.io/BareMetalHost";
pub const PAUSED_KEY: &str = "baremetalhost.metal3.io/paused";
/// CAPM3's mark on a host it gave up on: no new Machine is placed on a host that carries it
/// (CAPM3's host selection skips it). Set with [`UNHEALTHY_VALUE`], never removed by
/// autorepair or CAPM3: a person removes it once the host is fixed.
pub const UNHEALTHY_KEY: &str = "capm3.metal3.io/unhealthy";
/// The value CAPM3 writes under [`UNHEALTHY_KEY`].
pub const UNHEALTHY_VALUE: &str = "capm3/UnhealthyNode";
pub const DETACHED_KEY: &str = "baremetalhost.metal3.io/detached";
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
/// The out-of-service taint's key, value and effect.
pub const OUT_OF_SERVICE_KEY: &str = "node.kubernetes.io/out-of-service";
pub const OUT_OF_SERVICE_VALUE: &str = "nodeshutdown";
pub const OUT_OF_SERVICE_EFFECT: &str = "NoExecute";
/// The taint as people write it.
pub const OUT_OF_SERVICE_TAINT: &str = "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute";

/// The kinds of objects, as object references name them.
pub mod kind {
    pub const MACHINE: &str = "machine";
    pub const HOST: &str = "host";
    pub const NODE: &str = "node";
    pub const MACHINE_SET: &str = "machineset";
    pub const MACHINE_DEPLOYMENT: &str = "machinedeployment";
    pub const CONTROL_PLANE: &str = "controlplane";
    pub const CLUSTER: &str = "cluster";
    /// An AutorepairRemediation, a MachineHealthCheck's request.
    pub const REMEDIATION: &str = "remediation";
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    owner_references: Vec<OwnerReference>,
    creation_timestamp: Option<String>,
    deletion_timestamp: Option<String>,
    #[serde(default)]
    uid: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OwnerReference {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    controller: bool,
}

/// A Cluster API (or OpenShift) Machine: the target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// `NAMESPACE/NAME`.
    pub key: String,
    /// Its `creationTimestamp`, if it says.
    pub created: Option<i64>,
    pub namespace: String,
    pub name: String,
    /// Its autorepair marks, as `key=value`.
    pub marks: Vec<String>,
    /// A request is open: [`REQUEST_KEY`] or [`REMEDIATE_KEY`], or a remediation object not
    /// yet answered ([`Machine::remediation`]).
    pub requested: bool,
    /// A request annotation is set ([`REQUEST_KEYS`]): autorepair removes it once served.
    pub request_annotated: bool,
    /// The remediation object (`NAMESPACE/NAME`) a MachineHealthCheck made for it, unless it
    /// is being deleted. It is a request until [`Machine::answered`] names it.
    pub remediation: Option<String>,
    /// That remediation object's `spec.strategy`, or why it cannot be read.
    pub strategy: Option<Result<Strategy, StrategyError>>,
    /// The remediation object a repair answered or serves, by its identity, and that repair
    /// ([`marks::ANSWERED_KEY`]).
    pub answered: Option<(Option<String>, String)>,
    /// Why Cluster API holds the Machine back from any new repair (its own skip-remediation or
    /// paused annotation, or its Cluster's `spec.paused`), naming the mark; `None` if nothing does.
    pub held: Option<String>,
    /// The Node `status.nodeRef` names (kept by Cluster API after the Node is gone).
    pub node_ref: Option<String>,
    /// The BareMetalHost, `NAMESPACE/NAME`, once the link is followed.
    pub host: Option<String>,
    /// How the host link was found or why not, for `explain`.
    pub host_link: Result<&'static str, HostLinkError>,
    /// Its controller owner (MachineSet or control plane), as `KIND/NAMESPACE/NAME`.
    pub owner: Option<ObjectRef>,
    pub cluster: Option<String>,
    pub failure_domain: Option<String>,
    pub deleting: bool,
    /// A Node's backed-up labels and annotations ([`marks::NODE_BACKUP_KEY`]).
    pub node_backup: Option<String>,
    /// The Node autorepair tainted out-of-service ([`marks::NODE_TAINTED_KEY`]).
    pub node_tainted: Option<String>,
    /// A Cluster API Machine's conditions, for handing it over to its owner
    /// ([`Conditions::handed_over`]); `None` for OpenShift's Machines.
    pub conditions: Option<Conditions>,
}

impl Machine {
    /// Whether the remediation object was answered on this Machine: served, refused or failed,
    /// it asks for nothing more (the MachineHealthCheck deletes it once the Machine is healthy;
    /// a new object asks again).
    pub fn answers(&self, r: &Remediation) -> bool {
        self.answered
            .as_ref()
            .is_some_and(|(_, identity)| *identity == r.identity)
    }
}

/// The condition by which a Cluster API Machine's owner (MachineSet, KubeadmControlPlane) is
/// told to replace it: `False` with the reason [`WAITING_FOR_REMEDIATION`] while the
/// MachineHealthCheck's `HealthCheckSucceeded` is `False`. The owner deletes the Machine and
/// makes a new one; it removes the condition itself when the Machine is healthy again.
pub const OWNER_REMEDIATED_CONDITION: &str = "OwnerRemediated";
/// The condition a MachineHealthCheck sets on each Machine it checks: `False` when it counts
/// the Machine unhealthy (towards its own short-circuit), whatever the reason.
pub const HEALTH_CHECK_CONDITION: &str = "HealthCheckSucceeded";
pub const WAITING_FOR_REMEDIATION: &str = "WaitingForRemediation";

/// A Cluster API Machine's two condition lists, as its served version keeps them: Cluster API
/// ≥ 1.11 (v1beta2) reads `status.conditions` (Kubernetes' own condition form) and keeps the
/// old ones in `status.deprecated.v1beta1.conditions`; v1beta1 (before 1.11) reads
/// `status.conditions` in the old form and keeps the new ones in `status.v1beta2.conditions`.
/// A status patch replaces a list whole, so both are kept as read.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Conditions {
    pub v1beta2: bool,
    /// In Kubernetes' form (`type`, `status`, `reason`, `message`, `lastTransitionTime`).
    pub current: Vec<Value>,
    /// In Cluster API v1beta1's form (with `severity`).
    pub legacy: Vec<Value>,
}

impl Conditions {
    fn read(api_version: &str, v: &Value) -> Conditions {
        let v1beta2 = api_version != "cluster.x-k8s.io/v1beta1";
        let list = |ptr: &str| {
            v.pointer(ptr)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let (current, legacy) = if v1beta2 {
            (
                list("/status/conditions"),
                list("/status/deprecated/v1beta1/conditions"),
            )
        } else {
            (
                list("/status/v1beta2/conditions"),
                list("/status/conditions"),
            )
        };
        Conditions {
            v1beta2,
            current,
            legacy,
        }
    }

    /// Whether a MachineHealthCheck counts the Machine unhealthy: `HealthCheckSucceeded` is
    /// `False` in either list.
    pub fn health_check_failed(&self) -> bool {
        self.current.iter().chain(&self.legacy).any(|c| {
            c.get("type").and_then(Value::as_str) == Some(HEALTH_CHECK_CONDITION)
                && c.get("status").and_then(Value::as_str) == Some("False")
        })
    }

    /// Whether both lists already say `OwnerRemediated` is `False`: the owner has been told.
    pub fn handed_over(&self) -> bool {
        let is_false = |list: &[Value]| {
            list.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some(OWNER_REMEDIATED_CONDITION)
                    && c.get("status").and_then(Value::as_str) == Some("False")
            })
        };
        is_false(&self.current) && is_false(&self.legacy)
    }

    /// The `status` patch that hands the Machine over at `now` (RFC 3339): both lists with
    /// `OwnerRemediated` `False`, every other condition as read.
    pub fn hand_over(&self, message: &str, now: &str) -> Value {
        let set = |list: &[Value], new: Value| -> Vec<Value> {
            let mut out: Vec<Value> = list
                .iter()
                .filter(|c| {
                    c.get("type").and_then(Value::as_str) != Some(OWNER_REMEDIATED_CONDITION)
                })
                .cloned()
                .collect();
            out.push(new);
            out
        };
        let current = set(
            &self.current,
            serde_json::json!({
                "type": OWNER_REMEDIATED_CONDITION,
                "status": "False",
                "reason": WAITING_FOR_REMEDIATION,
                "message": message,
                "lastTransitionTime": now,
            }),
        );
        let legacy = set(
            &self.legacy,
            serde_json::json!({
                "type": OWNER_REMEDIATED_CONDITION,
                "status": "False",
                "severity": "Warning",
                "reason": WAITING_FOR_REMEDIATION,
                "message": message,
                "lastTransitionTime": now,
            }),
        );
        if self.v1beta2 {
            serde_json::json!({"conditions": current, "deprecated": {"v1beta1": {"conditions": legacy}}})
        } else {
            serde_json::json!({"conditions": legacy, "v1beta2": {"conditions": current}})
        }
    }
}

/// A BareMetalHost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    pub key: String,
    /// `status.poweredOn`; `None` while the host has no status yet.
    pub powered_on: Option<bool>,
    pub online: bool,
    pub paused: bool,
    pub detached: bool,
    pub disable_power_off: bool,
    /// `status.provisioning.state`.
    pub state: String,
    /// The value of autorepair's reboot key, when set.
    pub reboot: Option<String>,
    /// Reboot keys of other clients: the host stays off while any is set.
    pub other_reboots: Vec<String>,
    /// Marks on a host have no effect; they are linted.
    pub marks: Vec<String>,
    /// It carries [`UNHEALTHY_KEY`]: no new Machine is to be placed on it.
    pub unhealthy: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    /// The Ready condition: `True`, `False` or `Unknown`, and since when (Unix seconds).
    pub ready: Option<(String, Option<i64>)>,
    /// When the kubelet last posted the Ready condition (`lastHeartbeatTime`).
    pub ready_heartbeat: Option<i64>,
    pub created: Option<i64>,
    pub deleting: bool,
    pub unschedulable: bool,
    /// It carries the out-of-service taint (key and effect; anyone's).
    pub out_of_service: bool,
    /// When that taint was added (its `timeAdded`), if it says.
    pub out_of_service_since: Option<i64>,
    pub zone: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
}

/// A Machine's scope: MachineSet, MachineDeployment, control plane or Cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scope {
    pub object: ObjectRef,
    /// The scope key Machines name it by: `KIND/NAMESPACE/NAME`.
    pub key: String,
    pub marks: Vec<String>,
    /// A MachineSet's MachineDeployment.
    pub parent: Option<String>,
    /// A Cluster's `spec.paused`: Cluster API's controllers leave its objects alone.
    pub paused: bool,
}

/// A Pod on a Node, for draining.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pod {
    pub key: String,
    pub node: String,
    /// Stays on a drained Node (DaemonSet and mirror Pods, Job Pods not running: the shared
    /// drain's rule, `k8s::drain::blocks_drain`).
    pub stays: bool,
    /// It has a `deletionTimestamp`: being deleted, not gone yet.
    pub terminating: bool,
}

/// A storage.k8s.io VolumeAttachment: a volume a CSI driver attached to a Node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VolumeAttachment {
    pub name: String,
    pub node: String,
}

/// The fleet at one instant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub machines: Vec<Machine>,
    pub hosts: Vec<Host>,
    pub nodes: Vec<Node>,
    pub scopes: Vec<Scope>,
    pub pods: Vec<Pod>,
    /// The VolumeAttachments of the Nodes under the out-of-service taint (where Pods are read
    /// too): the host stays off until none is left, as CAPM3 waits.
    pub volume_attachments: Vec<VolumeAttachment>,
    /// Nodes under the out-of-service taint whose Pods or VolumeAttachments could not be read
    /// this pass: their hosts stay off (what is left on them is unknown).
    pub fence_unknown: BTreeSet<String>,
    /// Objects that could not be read: which, and why.
    pub problems: Vec<(String, String)>,
    /// Machines (`NAMESPACE/NAME`) whose Nodes could not be looked at this pass (their
    /// workload cluster unreadable): a Node of theirs missing from `nodes` may well exist.
    pub nodes_unknown: BTreeSet<String>,
    /// AutorepairRemediations, with the Machine each one names.
    pub remediations: Vec<Remediation>,
}

/// An AutorepairRemediation: a MachineHealthCheck's request to remediate one Machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remediation {
    /// `NAMESPACE/NAME`.
    pub key: String,
    /// The Machine its ownerReference names, `NAMESPACE/NAME` (as CAPM3 finds it: not by name).
    pub machine: Option<String>,
    /// `metadata.creationTimestamp` (Unix seconds).
    pub created: Option<i64>,
    /// Who it is: its `metadata.uid` (a hand-written file without one: its name and creation
    /// time). A new object made in place of an answered one is another request.
    pub identity: String,
    pub deleting: bool,
    /// What its `status` says now, as autorepair last reported it.
    pub reported: Option<Reported>,
    /// Its `spec.strategy` (copied from the template), or why it cannot be read.
    pub strategy: Result<Strategy, StrategyError>,
}

/// A request's `spec.strategy`, as CAPM3's Metal3Remediation spells it: `type` (only
/// `Reboot`), `retryLimit` (power cycles after the first), and how long each power cycle may
/// take: `timeoutSeconds` (v1beta2) or `timeout` (v1beta1, a duration). Unset fields are the
/// watcher's configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Strategy {
    pub retry_limit: Option<u32>,
    /// Seconds.
    pub timeout: Option<i64>,
}

/// CAPM3's webhook refuses a shorter timeout: a power cycle of a real server takes minutes.
pub const MIN_STRATEGY_TIMEOUT: i64 = 100;

/// A `spec.strategy` autorepair cannot serve as its author asked: the field and its value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StrategyError {
    #[error("spec.strategy is {0}, not an object")]
    NotAnObject(Value),
    #[error("spec.strategy.type is {0}: Reboot is the only strategy (CAPM3's too)")]
    Type(Value),
    #[error("spec.strategy.retryLimit is {0}, not a count (0 or more)")]
    RetryLimit(Value),
    #[error("spec.strategy.timeoutSeconds is {0}, not a number of seconds")]
    TimeoutSeconds(Value),
    #[error("spec.strategy.timeout: {0}")]
    Timeout(#[from] crate::engine::text::TimeError),
    #[error("spec.strategy.timeout is {0}, not a duration")]
    TimeoutNotText(Value),
    #[error(
        "spec.strategy gives timeoutSeconds {seconds} and timeout {duration}s: give one (timeoutSeconds is v1beta2's, timeout v1beta1's)"
    )]
    TwoTimeouts { seconds: i64, duration: i64 },
    #[error("spec.strategy's timeout is {0}s, below CAPM3's minimum of {MIN_STRATEGY_TIMEOUT}s")]
    TimeoutTooShort(i64),
}

impl Strategy {
    /// `spec.strategy` of a remediation object (`null` or absent: all defaults).
    pub fn read(v: Option<&Value>) -> Result<Strategy, StrategyError> {
        let Some(v) = v.filter(|v| !v.is_null()) else {
            return Ok(Strategy::default());
        };
        let Some(o) = v.as_object() else {
            return Err(StrategyError::NotAnObject(v.clone()));
        };
        match o.get("type") {
            None | Some(Value::Null) => {}
            Some(t) if t == "Reboot" => {}
            Some(t) => return Err(StrategyError::Type(t.clone())),
        }
        let retry_limit = match o.get("retryLimit") {
            None | Some(Value::Null) => None,
            Some(n) => Some(
                n.as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| StrategyError::RetryLimit(n.clone()))?,
            ),
        };
        let seconds = match o.get("timeoutSeconds") {
            None | Some(Value::Null) => None,
            Some(n) => Some(
                n.as_i64()
                    .ok_or_else(|| StrategyError::TimeoutSeconds(n.clone()))?,
            ),
        };
        let duration = match o.get("timeout") {
            None | Some(Value::Null) => None,
            Some(Value::String(t)) => Some(
                crate::engine::text::parse_duration(t)
                    .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))?,
            ),
            Some(t) => return Err(StrategyError::TimeoutNotText(t.clone())),
        };
        let timeout = match (seconds, duration) {
            (Some(seconds), Some(duration)) if seconds != duration => {
                return Err(StrategyError::TwoTimeouts { seconds, duration });
            }
            (a, b) => a.or(b),
        };
        if let Some(t) = timeout.filter(|t| *t < MIN_STRATEGY_TIMEOUT) {
            return Err(StrategyError::TimeoutTooShort(t));
        }
        Ok(Strategy {
            retry_limit,
            timeout,
        })
    }
}

/// What autorepair reports in a remediation object's `status`: a report, never the record
/// (the Machine's annotations are), recomputed every pass and written when it changes.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    /// `Waiting`, `Running`, `Succeeded` or `Failed`.
    pub phase: &'static str,
    /// The `Remediated` condition: `Unknown` while waiting or running, then `True` or `False`.
    pub status: &'static str,
    /// The condition's reason, CamelCase.
    pub reason: &'static str,
    pub message: String,
    /// The condition's `lastTransitionTime` to keep (its status did not change); `None`: the
    /// time of the write.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
}

impl Report {
    /// The `status` object written to the remediation object at `now`.
    pub fn to_status(&self, now: &str) -> Value {
        let since = self.since.as_deref().unwrap_or(now);
        serde_json::json!({
            "phase": self.phase,
            "conditions": [{
                "type": REMEDIATED_CONDITION,
                "status": self.status,
                "reason": self.reason,
                "message": self.message,
                "lastTransitionTime": since,
            }],
        })
    }

    /// Whether `status` already says this (its transition time aside).
    pub fn matches(&self, now: &Reported) -> bool {
        (self.phase, self.status, self.reason, self.message.as_str())
            == (
                now.phase.as_str(),
                now.status.as_str(),
                now.reason.as_str(),
                now.message.as_str(),
            )
    }
}

/// A remediation object's `status` as read: its phase and `Remediated` condition.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reported {
    pub phase: String,
    pub status: String,
    pub reason: String,
    pub message: String,
    /// The condition's `lastTransitionTime`, kept while its status stays.
    pub since: Option<String>,
}

impl Reported {
    fn read(status: &Value) -> Option<Reported> {
        let phase = status.get("phase")?.as_str()?.to_owned();
        let c = status
            .get("conditions")?
            .as_array()?
            .iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(REMEDIATED_CONDITION))?;
        let field = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        Some(Reported {
            phase,
            status: field("status"),
            reason: field("reason"),
            message: field("message"),
            since: c
                .get("lastTransitionTime")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }
}

/// The condition type autorepair reports on a remediation object.
pub const REMEDIATED_CONDITION: &str = "Remediated";

fn epoch(text: &Option<String>) -> Option<i64> {
    text.as_deref()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| t.as_second())
}

fn our_marks(annotations: &BTreeMap<String, String>) -> Vec<String> {
    annotations
        .iter()
        .filter(|(k, _)| k.starts_with(PREFIX) && !marks::RECORD_KEYS.contains(&k.as_str()))
        .map(|(k, v)| marks::join(k, v))
        .collect()
}

fn key(meta: &Meta) -> String {
    format!("{}/{}", meta.namespace, meta.name)
}

fn scope_kind(kind: &str) -> Option<&'static str> {
    match kind {
        "MachineSet" => Some(kind::MACHINE_SET),
        "MachineDeployment" => Some(kind::MACHINE_DEPLOYMENT),
        "Cluster" => Some(kind::CLUSTER),
        k if k.ends_with("ControlPlane") => Some(kind::CONTROL_PLANE),
        _ => None,
    }
}

/// An object of `kind` named `NAMESPACE/NAME`, as marks and plans name it.
pub fn scope_ref(kind: &'static str, namespaced: &str) -> ObjectRef {
    ObjectRef::new(kind, namespaced)
}

/// `Value::pointer` for this module's literal paths, which escape nothing: serde_json's unescapes
/// every token with two `str::replace`, a tenth of a 5,000-Machine pass's CPU.
pub(super) fn pointer<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    debug_assert!(
        !path.contains('~'),
        "{path} escapes a token: use Value::pointer"
    );
    path.strip_prefix('/')?
        .split('/')
        .try_fold(v, |v, token| match v {
            Value::Object(map) => map.get(token),
            Value::Array(items) => token.parse().ok().and_then(|i: usize| items.get(i)),
            _ => None,
        })
}

fn text(v: &Value, path: &str) -> Option<String> {
    pointer(v, path).and_then(Value::as_str).map(str::to_owned)
}

/// What one item is, before the links between items are followed.
enum Item {
    Machine(Meta, Value),
    Metal3Machine(Meta),
    Host(Meta, Value),
    Node(Meta, Value),
    Scope(&'static str, Meta, Value),
    Pod(Meta, Value),
    VolumeAttachment(Meta, Value),
    Remediation(Meta, Value),
    Other,
}

/// Why an item of a kind autorepair uses cannot be read (the item is named beside it).
#[derive(Debug, thiserror::Error)]
enum ItemError {
    #[error("unreadable metadata: {0}")]
    Metadata(#[source] serde_json::Error),
    #[error("it has no metadata.name")]
    NoName,
}

fn classify(item: &Value) -> Result<Item, ItemError> {
    let kind = item.get("kind").and_then(Value::as_str).unwrap_or("");
    let api = item.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let group = api.split_once('/').map_or("", |(g, _)| g);
    let meta = || -> Result<Meta, ItemError> {
        let m: Meta = serde_json::from_value(item.get("metadata").cloned().unwrap_or_default())
            .map_err(ItemError::Metadata)?;
        if m.name.is_empty() {
            return Err(ItemError::NoName);
        }
        Ok(m)
    };
    Ok(match (kind, group) {
        ("Machine", "cluster.x-k8s.io" | "machine.openshift.io") => {
            Item::Machine(meta()?, item.clone())
        }
        ("Metal3Machine", "infrastructure.cluster.x-k8s.io") => Item::Metal3Machine(meta()?),
        ("BareMetalHost", "metal3.io") => Item::Host(meta()?, item.clone()),
        ("Node", "") => Item::Node(meta()?, item.clone()),
        ("Pod", "") => Item::Pod(meta()?, item.clone()),
        ("VolumeAttachment", "storage.k8s.io") => Item::VolumeAttachment(meta()?, item.clone()),
        (REMEDIATION_KIND, REMEDIATION_GROUP) => Item::Remediation(meta()?, item.clone()),
        (k, _) => match scope_kind(k) {
            Some(kind) => Item::Scope(kind, meta()?, item.clone()),
            None => Item::Other,
        },
    })
}

fn describe(item: &Value) -> String {
    let kind = item.get("kind").and_then(Value::as_str).unwrap_or("object");
    let ns = text(item, "/metadata/namespace");
    let name = text(item, "/metadata/name").unwrap_or_else(|| "(no name)".into());
    match ns {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

impl Snapshot {
    /// Says, once a read, every object that could not be read and how many: a Machine left
    /// out without a word made the fleet look one smaller (5 Machines became 4).
    pub fn warn_problems(&self) {
        for (object, why) in &self.problems {
            tracing::warn!(object = %object, "{why}");
        }
        if !self.problems.is_empty() {
            tracing::warn!(
                count = self.problems.len(),
                "{} object(s) could not be read (warned above, each with why): an unreadable Machine is left out of the fleet, so nothing is planned for it until it is fixed",
                self.problems.len()
            );
        }
    }

    /// Reads the items of a `v1` `List` (or of several lists). Items of kinds autorepair does
    /// not use are ignored; items it cannot read are listed in [`Snapshot::problems`].
    pub fn from_items<'a>(items: impl IntoIterator<Item = &'a Value>) -> Snapshot {
        let mut snap = Snapshot::default();
        let mut machines = Vec::new();
        let mut m3m: BTreeMap<String, Meta> = BTreeMap::new();
        let mut machine_sets: BTreeMap<String, Meta> = BTreeMap::new();
        for item in items {
            match classify(item) {
                Err(why) => snap.problems.push((describe(item), why.to_string())),
                Ok(Item::Machine(meta, v)) => machines.push((meta, v)),
                Ok(Item::Metal3Machine(meta)) => {
                    m3m.insert(key(&meta), meta);
                }
                Ok(Item::Host(meta, v)) => snap.hosts.push(host(&meta, &v)),
                Ok(Item::Node(meta, v)) => snap.nodes.push(node(meta, &v)),
                Ok(Item::Pod(meta, v)) => {
                    if let Some(p) = pod(&meta, &v) {
                        snap.pods.push(p);
                    }
                }
                Ok(Item::VolumeAttachment(meta, v)) => {
                    if let Some(node) = text(&v, "/spec/nodeName") {
                        snap.volume_attachments.push(VolumeAttachment {
                            name: meta.name,
                            node,
                        });
                    }
                }
                Ok(Item::Scope(kind, meta, v)) => {
                    let key = format!("{kind}/{}", key(&meta));
                    let parent = meta
                        .owner_references
                        .iter()
                        .find(|o| o.kind == "MachineDeployment")
                        .map(|o| {
                            format!("{}/{}/{}", kind::MACHINE_DEPLOYMENT, meta.namespace, o.name)
                        });
                    if kind == kind::MACHINE_SET {
                        machine_sets.insert(key.clone(), meta.clone());
                    }
                    snap.scopes.push(Scope {
                        object: scope_ref(kind, &self::key(&meta)),
                        key,
                        marks: our_marks(&meta.annotations),
                        parent,
                        paused: kind == kind::CLUSTER
                            && pointer(&v, "/spec/paused").and_then(Value::as_bool) == Some(true),
                    });
                }
                Ok(Item::Remediation(meta, v)) => snap.remediations.push(remediation(&meta, &v)),
                Ok(Item::Other) => {}
            }
        }
        // A Machine's remediation object: the live one its ownerReference names.
        let mut remediation_of: BTreeMap<&str, &Remediation> = BTreeMap::new();
        for r in snap.remediations.iter().filter(|r| !r.deleting) {
            if let Some(m) = &r.machine {
                remediation_of.entry(m.as_str()).or_insert(r);
            }
        }
        let paused: BTreeSet<&str> = snap
            .scopes
            .iter()
            .filter(|s| s.paused)
            .map(|s| s.key.as_str())
            .collect();
        snap.machines = machines
            .into_iter()
            .map(|(meta, v)| {
                let mut m = machine(meta, &v, &m3m);
                if let Some(r) = remediation_of.get(m.key.as_str()) {
                    m.remediation = Some(r.key.clone());
                    m.strategy = Some(r.strategy.clone());
                    // Answered by a failed power cycle, a request with retries left stands
                    // again, as CAPM3's does: the engine's bounded retries decide whether
                    // and when it is served again (its back-off; parked once they are spent).
                    let retries_left = matches!(&r.strategy, Ok(s) if s.retry_limit.unwrap_or(0) > 0)
                        && answer(&m).is_some_and(|o| {
                            o.result == crate::engine::RepairResult::Failure
                        });
                    m.requested |= (!m.answers(r) || retries_left) && !cycling(&m.marks);
                }
                if m.held.is_none()
                    && let Some(c) = &m.cluster
                {
                    let key = format!("{}/{}/{c}", kind::CLUSTER, m.namespace);
                    if paused.contains(key.as_str()) {
                        m.held = Some(format!(
                            "its Cluster {}/{c} is paused (spec.paused): Cluster API leaves its Machines alone",
                            m.namespace
                        ));
                    }
                }
                m
            })
            .collect();
        snap
    }
}

/// Why a Machine's BareMetalHost is not known: the object where the link stops.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HostLinkError {
    /// The Metal3Machine, `NAMESPACE/NAME`.
    #[error("its Metal3Machine {0} has no {HOST_LINK_KEY} annotation yet (not provisioned?)")]
    NotLinkedYet(String),
    #[error("its Metal3Machine {0} is not in the objects read")]
    Metal3MachineNotRead(String),
    /// The infrastructure's kind.
    #[error("its infrastructure is a {0}, not a Metal3Machine: not a metal3 machine")]
    NotMetal3(String),
    #[error("it has no spec.infrastructureRef")]
    NoInfrastructureRef,
}

fn machine(meta: Meta, v: &Value, m3m: &BTreeMap<String, Meta>) -> Machine {
    // The Node is in `status.nodeRef.name` in every served version.
    let node_ref = text(v, "/status/nodeRef/name");
    let host_link = if let Some(link) = meta.annotations.get(HOST_LINK_KEY) {
        Ok((
            link.clone(),
            "the Machine's metal3.io/BareMetalHost annotation",
        ))
    } else {
        let infra_kind = text(v, "/spec/infrastructureRef/kind");
        let infra_name = text(v, "/spec/infrastructureRef/name");
        match (infra_kind.as_deref(), infra_name) {
            (Some("Metal3Machine"), Some(name)) => {
                let k = format!("{}/{name}", meta.namespace);
                match m3m.get(&k).map(|m| m.annotations.get(HOST_LINK_KEY)) {
                    Some(Some(link)) => Ok((
                        link.clone(),
                        "its Metal3Machine's metal3.io/BareMetalHost annotation",
                    )),
                    Some(None) => Err(HostLinkError::NotLinkedYet(k)),
                    None => Err(HostLinkError::Metal3MachineNotRead(k)),
                }
            }
            (Some(other), _) => Err(HostLinkError::NotMetal3(other.to_owned())),
            (None, _) => Err(HostLinkError::NoInfrastructureRef),
        }
    };
    // CAPM3 always looks the host up in the Metal3Machine's namespace; a bare name means that too.
    let (host, host_link) = match host_link {
        Ok((link, how)) => {
            let name = link.rsplit('/').next().unwrap_or(&link).to_owned();
            (Some(format!("{}/{name}", meta.namespace)), Ok(how))
        }
        Err(why) => (None, Err(why)),
    };
    let owner = meta
        .owner_references
        .iter()
        .find(|o| o.controller)
        .and_then(|o| {
            scope_kind(&o.kind).map(|k| scope_ref(k, &format!("{}/{}", meta.namespace, o.name)))
        });
    let cluster = meta
        .labels
        .get(CLUSTER_NAME_LABEL)
        .cloned()
        .or_else(|| text(v, "/spec/clusterName"));
    let held = [
        (SKIP_REMEDIATION_KEY, "Cluster API's opt-out of remediation"),
        (CAPI_PAUSED_KEY, "paused for Cluster API"),
    ]
    .into_iter()
    .find(|(k, _)| meta.annotations.contains_key(*k))
    .map(|(k, what)| format!("it carries {k} ({what}): remove it to let repairs start"));
    let request_annotated = REQUEST_KEYS
        .iter()
        .any(|k| meta.annotations.contains_key(*k));
    Machine {
        key: key(&meta),
        created: epoch(&meta.creation_timestamp),
        marks: our_marks(&meta.annotations),
        requested: request_annotated,
        request_annotated,
        remediation: None,
        strategy: None,
        answered: meta.annotations.get(marks::ANSWERED_KEY).map(|v| {
            let (repair, identity) = marks::read_answered(v);
            (repair.map(str::to_owned), identity.to_owned())
        }),
        held,
        node_ref,
        host,
        host_link,
        owner,
        cluster,
        failure_domain: text(v, "/spec/failureDomain"),
        deleting: meta.deletion_timestamp.is_some(),
        node_backup: meta.annotations.get(marks::NODE_BACKUP_KEY).cloned(),
        node_tainted: meta.annotations.get(marks::NODE_TAINTED_KEY).cloned(),
        conditions: v
            .get("apiVersion")
            .and_then(Value::as_str)
            .filter(|api| api.starts_with("cluster.x-k8s.io/"))
            .map(|api| Conditions::read(api, v)),
        namespace: meta.namespace,
        name: meta.name,
    }
}

fn remediation(meta: &Meta, v: &Value) -> Remediation {
    // Cluster API's own Machines only: the contract is Cluster API's.
    let machine = meta
        .owner_references
        .iter()
        .find(|o| {
            o.kind == "Machine"
                && o.api_version.split('/').next() == Some("cluster.x-k8s.io")
                && !o.name.is_empty()
        })
        .map(|o| format!("{}/{}", meta.namespace, o.name));
    Remediation {
        key: key(meta),
        machine,
        created: epoch(&meta.creation_timestamp),
        identity: if meta.uid.is_empty() {
            format!(
                "{}@{}",
                key(meta),
                meta.creation_timestamp.as_deref().unwrap_or("")
            )
        } else {
            meta.uid.clone()
        },
        deleting: meta.deletion_timestamp.is_some(),
        reported: v.get("status").and_then(Reported::read),
        strategy: Strategy::read(pointer(v, "/spec/strategy")),
    }
}

/// Whether a power cycle is under way on the Machine (its pending repair records the step).
/// It serves a remediation object as it serves any request: the cycle carries its own request
/// annotation to its end. Counting the object as a request as well would keep the Machine
/// "requested" in the very pass its cycle succeeds, and a Machine still asking for a repair
/// then would be escalated (reprovisioned) for a cycle that worked.
pub fn cycling(marks: &[String]) -> bool {
    use crate::engine::marks::{Codec, Mark};
    marks.iter().any(|t| {
        matches!(marks::Annotations::parse(t), Ok(Mark::Pending(p))
            if p.ops.iter::<super::OpId>().any(|id| id.step == super::Step::PowerCycle))
    })
}

/// The result that answered the remediation object the Machine records as answered: the one
/// of the repair recorded with it, else the newest power-cycle or reprovision result.
pub fn answer(m: &Machine) -> Option<crate::engine::marks::Outcome<'_, super::Metal3Level>> {
    use crate::engine::marks::{Codec, Mark};
    let repair = m
        .answered
        .as_ref()
        .and_then(|(repair, _)| repair.as_deref());
    let results: Vec<_> = m
        .marks
        .iter()
        .filter_map(|t| match marks::Annotations::parse(t) {
            Ok(Mark::Result(r)) if r.repair >= super::Metal3Level::PowerCycle => Some(r),
            _ => None,
        })
        .collect();
    results
        .iter()
        .find(|r| Some(r.id) == repair)
        .or_else(|| results.iter().max_by_key(|r| r.at))
        .copied()
}

fn host(meta: &Meta, v: &Value) -> Host {
    let is_reboot = |k: &str| k == REBOOT_PREFIX || k.starts_with(&format!("{REBOOT_PREFIX}/"));
    Host {
        key: key(meta),
        powered_on: pointer(v, "/status/poweredOn").and_then(Value::as_bool),
        online: pointer(v, "/spec/online")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        paused: meta.annotations.contains_key(PAUSED_KEY),
        detached: meta.annotations.contains_key(DETACHED_KEY),
        disable_power_off: pointer(v, "/spec/disablePowerOff")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        state: text(v, "/status/provisioning/state").unwrap_or_default(),
        reboot: meta.annotations.get(REBOOT_KEY).cloned(),
        other_reboots: meta
            .annotations
            .keys()
            .filter(|k| is_reboot(k) && k.as_str() != REBOOT_KEY)
            .cloned()
            .collect(),
        marks: our_marks(&meta.annotations),
        unhealthy: meta.annotations.contains_key(UNHEALTHY_KEY),
    }
}

fn node(meta: Meta, v: &Value) -> Node {
    let condition = pointer(v, "/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
        });
    let ready = condition.map(|c| {
        (
            text(c, "/status").unwrap_or_else(|| "Unknown".into()),
            epoch(&text(c, "/lastTransitionTime")),
        )
    });
    let out_of_service_since = pointer(v, "/spec/taints")
        .and_then(Value::as_array)
        .and_then(|ts| ts.iter().find(|t| is_out_of_service(t)))
        .and_then(|t| epoch(&text(t, "/timeAdded")));
    Node {
        ready,
        ready_heartbeat: condition.and_then(|c| epoch(&text(c, "/lastHeartbeatTime"))),
        out_of_service_since,
        created: epoch(&meta.creation_timestamp),
        deleting: meta.deletion_timestamp.is_some(),
        unschedulable: pointer(v, "/spec/unschedulable")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        out_of_service: out_of_service(v),
        zone: meta.labels.get(ZONE_LABEL).cloned(),
        name: meta.name,
        labels: meta.labels,
        annotations: meta.annotations,
    }
}

/// Whether a Node carries the out-of-service taint (any value: its key and effect are what
/// the control plane acts on).
pub fn out_of_service(node: &Value) -> bool {
    pointer(node, "/spec/taints")
        .and_then(Value::as_array)
        .is_some_and(|ts| ts.iter().any(is_out_of_service))
}

pub fn is_out_of_service(taint: &Value) -> bool {
    taint.get("key").and_then(Value::as_str) == Some(OUT_OF_SERVICE_KEY)
        && taint.get("effect").and_then(Value::as_str) == Some(OUT_OF_SERVICE_EFFECT)
}

/// The taints of a Node with the out-of-service taint added (`true`) or every out-of-service
/// taint removed.
pub fn with_out_of_service(node: &Value, on: bool, now: &str) -> Vec<Value> {
    let mut taints: Vec<Value> = pointer(node, "/spec/taints")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    taints.retain(|t| !is_out_of_service(t));
    if on {
        taints.push(serde_json::json!({
            "key": OUT_OF_SERVICE_KEY,
            "value": OUT_OF_SERVICE_VALUE,
            "effect": OUT_OF_SERVICE_EFFECT,
            "timeAdded": now,
        }));
    }
    taints
}

fn pod(meta: &Meta, v: &Value) -> Option<Pod> {
    let node = text(v, "/spec/nodeName")?;
    let facts = crate::k8s::drain::PodFacts::from_value(v);
    Some(Pod {
        key: key(meta),
        node,
        stays: !crate::k8s::drain::blocks_drain(&facts),
        terminating: meta.deletion_timestamp.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// CAPM3's strategy in both spellings; what cannot be read says which field and why.
    #[test]
    fn a_strategy_reads_both_spellings_and_names_what_is_wrong() {
        let ok = |retry_limit, timeout| {
            Ok(Strategy {
                retry_limit,
                timeout,
            })
        };
        let cases: [(Value, Result<Strategy, &str>); 14] = [
            (json!(null), ok(None, None)),
            (json!({}), ok(None, None)),
            (json!({"type": "Reboot"}), ok(None, None)),
            (json!({"retryLimit": 0}), ok(Some(0), None)),
            (
                json!({"retryLimit": 2, "timeoutSeconds": 600}),
                ok(Some(2), Some(600)),
            ),
            (json!({"timeout": "5m0s"}), ok(None, Some(300))),
            (
                json!({"timeout": "300s", "timeoutSeconds": 300}),
                ok(None, Some(300)),
            ),
            (json!({"type": "Reset"}), Err("spec.strategy.type")),
            (json!({"retryLimit": -1}), Err("spec.strategy.retryLimit")),
            (json!({"retryLimit": 1e20}), Err("spec.strategy.retryLimit")),
            (
                json!({"timeoutSeconds": 99}),
                Err("below CAPM3's minimum of 100s"),
            ),
            (json!({"timeout": "a while"}), Err("spec.strategy.timeout")),
            (
                json!({"timeout": "2m", "timeoutSeconds": 600}),
                Err("give one"),
            ),
            (json!("Reboot"), Err("not an object")),
        ];
        for (given, want) in cases {
            let got = Strategy::read(Some(&given));
            match (&got, &want) {
                (Ok(g), Ok(w)) => assert_eq!(g, w, "{given}"),
                (Err(g), Err(w)) => assert!(g.to_string().contains(w), "{given}: {g}"),
                _ => panic!("{given}: {got:?}, want {want:?}"),
            }
        }
        assert_eq!(Strategy::read(None), Ok(Strategy::default()));
        assert_eq!(
            Strategy::read(Some(&json!({"timeout": "2m", "timeoutSeconds": 600}))),
            Err(StrategyError::TwoTimeouts {
                seconds: 600,
                duration: 120
            })
        );
    }
}
