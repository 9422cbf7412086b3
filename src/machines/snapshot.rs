//! The fleet as one pass reads it: sabakan machines with their labels and repair entries, the
//! Kubernetes Nodes, the scopes. Built by a backend; read by the planner.

use super::entry::Entry;
use crate::engine::ObjectRef;
use crate::sabakan::Machine as SabakanMachine;
use std::path::PathBuf;
use std::sync::Arc;

pub mod kind {
    pub const MACHINE: &str = "machine";
    pub const RACK: &str = "rack";
    pub const CLUSTER: &str = "cluster";
}

#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub machines: Vec<Machine>,
    /// Racks, then the cluster.
    pub scopes: Vec<Scope>,
    pub nodes: Vec<Node>,
    /// `autorepair repair enable|disable` (CKE's repair-queue switch).
    pub queue: Switch,
    /// `autorepair auto-repair enable|disable` (CKE's switch of sabakan-triggered repair):
    /// whether machines the trigger selects get entries. Entries a person adds do either way.
    pub auto_repair: Switch,
    /// The trigger's query as `autorepair auto-repair set-variables` stored it, or why the
    /// stored file cannot be read (then the trigger creates nothing). `None`: nothing stored.
    pub variables: Option<Result<crate::sabakan::client::Variables, StoredQueryError>>,
    /// What the cluster's etcd said, when the gate is on (`--etcd-cert`…): the planner's
    /// [`super::etcd::judge`] decides from it. `None`: the gate is off.
    pub etcd: Option<Result<super::etcd::Status, super::etcd::EtcdError>>,
}

/// Why the trigger's query that `autorepair auto-repair set-variables` stored cannot be used
/// (the trigger then holds, rule 11); each names the stored file. Cloned with every snapshot,
/// hence the shared sources.
#[derive(Clone, Debug, thiserror::Error)]
pub enum StoredQueryError {
    #[error("{}: {error}", path.display())]
    Unreadable {
        path: PathBuf,
        error: Arc<std::io::Error>,
    },
    /// The config's `[machines.variables]` sets the query too: two answers.
    #[error("both the config's [machines.variables] and {} set it: remove one", path.display())]
    AlsoInConfig { path: PathBuf },
    #[error("{}: {error}", path.display())]
    NotAQuery {
        path: PathBuf,
        error: Arc<crate::sabakan::client::ClientError>,
    },
}

/// A switch of the cluster's, from its label on the cluster's holder: on when the label is
/// absent, off when it says `disabled`. Any other value cannot be read, and holds what the
/// switch governs as off does until a person sets the switch again (rule 11).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Switch {
    #[default]
    On,
    Off,
    /// The label's value, and where it is.
    Unreadable(String),
}

impl Switch {
    pub fn on(&self) -> bool {
        matches!(self, Switch::On)
    }

    /// The switch a label value means (`None`: no label).
    pub fn from_value(value: Option<&str>) -> Switch {
        match value {
            None => Switch::On,
            Some("disabled") => Switch::Off,
            Some(other) => Switch::Unreadable(format!("{other:?}")),
        }
    }

    /// Two copies of one switch: the one that holds more (unreadable, then off).
    pub fn and(self, other: Switch) -> Switch {
        match (self, other) {
            (u @ Switch::Unreadable(_), _) | (_, u @ Switch::Unreadable(_)) => u,
            (Switch::Off, _) | (_, Switch::Off) => Switch::Off,
            _ => Switch::On,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Machine {
    pub serial: String,
    pub info: SabakanMachine,
    /// Every label of the machine as `name=value`; the codec tells ours from the rest.
    pub marks: Vec<String>,
    /// The key of its rack's scope (`rack/N`).
    pub rack: String,
    /// Its repair entry, or why the entry's labels cannot be read.
    pub entry: Result<Option<Entry>, super::entry::EntryError>,
    /// The health check's verdict this pass; the backend runs it for every unfinished entry.
    pub healthy: Option<bool>,
}

impl Machine {
    pub fn address(&self) -> Option<&str> {
        self.info.address()
    }

    pub fn entry(&self) -> Option<&Entry> {
        self.entry.as_ref().ok().and_then(Option::as_ref)
    }
}

/// A rack or the cluster. sabakan has no object for either: their marks live on a holder
/// machine's labels (docs/machines.md), which the backend maps.
#[derive(Clone, Debug)]
pub struct Scope {
    pub object: ObjectRef,
    pub key: String,
    pub marks: Vec<String>,
}

/// A Kubernetes Node, as far as a repair cares.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub internal_ips: Vec<String>,
    pub unschedulable: bool,
    /// Cordoned by autorepair (its annotation), so autorepair uncordons it.
    pub cordoned_by_us: bool,
    pub control_plane: bool,
    /// Pods a drain must still move (not DaemonSet pods, not finished Job pods).
    pub pods: usize,
}

impl Node {
    /// A machine is this Node when the Node's name or an InternalIP is its address.
    pub fn is(&self, address: &str) -> bool {
        self.name == address || self.internal_ips.iter().any(|ip| ip == address)
    }
}
