//! What a backend reads: the fleet at one instant. The shape (and the key names) follow Ganeti's
//! RAPI answers, so a real cluster can be saved into a fleet file and replayed offline.

use super::kind;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub cluster: Cluster,
    #[serde(default)]
    pub groups: Vec<Group>,
    #[serde(default)]
    pub nodes: Vec<Node>,
    #[serde(default)]
    pub instances: Vec<Instance>,
    /// Jobs the watcher may need to judge: the ones its tags name and its own recent ones.
    #[serde(default)]
    pub jobs: Vec<Job>,
    /// Scripted job outcomes for the fleet-file job simulator; empty for real clusters.
    #[serde(default, skip_serializing_if = "Simulation::is_empty")]
    pub simulation: Simulation,
    /// Keys this model does not know (a `_comment`, what another Ganeti version adds), kept as
    /// read: a rewrite of the file must not lose what someone else put there.
    #[serde(flatten)]
    pub other: Unknown,
}

/// The keys of one object of the fleet file that no field of its type names.
pub type Unknown = serde_json::Map<String, serde_json::Value>;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    pub name: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(flatten)]
    pub other: Unknown,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Group {
    pub name: String,
    pub uuid: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(flatten)]
    pub other: Unknown,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub name: String,
    #[serde(default)]
    pub offline: bool,
    #[serde(default)]
    pub drained: bool,
    #[serde(default = "yes")]
    pub vm_capable: bool,
    #[serde(rename = "group.uuid")]
    pub group_uuid: String,
    #[serde(default)]
    pub tags: Vec<String>,
    /// Ganeti's time of the node's last change (epoch seconds): setting or clearing its
    /// offline or drained flag changes it, and so do its tags. Ganeti records no other time
    /// a node came back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtime: Option<f64>,
    #[serde(flatten)]
    pub other: Unknown,
}

fn yes() -> bool {
    true
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Instance {
    pub name: String,
    pub pnode: String,
    #[serde(default)]
    pub snodes: Vec<String>,
    pub disk_template: String,
    #[serde(default = "admin_up")]
    pub admin_state: String,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(flatten)]
    pub other: Unknown,
}

fn admin_up() -> String {
    "up".into()
}

impl Instance {
    pub fn admin_up(&self) -> bool {
        self.admin_state == "up"
    }
}

/// Ganeti's job states. A job the server does not know has no status at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    Queued,
    Waiting,
    Canceling,
    Running,
    Canceled,
    Success,
    Error,
}

impl JobStatus {
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            JobStatus::Canceled | JobStatus::Success | JobStatus::Error
        )
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "JobFile", into = "JobFile")]
pub struct Job {
    pub id: u64,
    /// `None` when the server does not know the job (Ganeti answers 200 with nulls).
    pub status: Option<JobStatus>,
    /// Per opcode results; an error is `["OpPrereqError", ["message", "error_code"]]`.
    pub opresult: serde_json::Value,
    /// The reason trail entry that names the repair: `autorepair:<repair id>`.
    pub reason: Option<String>,
    /// The instance the job works on, when it is an instance operation.
    pub instance: Option<String>,
    /// What the job does, when it is a repair operation (not a tag write).
    pub op: Option<Op>,
    pub depends: Vec<u64>,
    /// When the job ended, in Unix seconds.
    pub end_ts: Option<i64>,
    /// Fleet-file simulator only: passes until the job ends.
    pub passes_left: Option<u32>,
    pub other: Unknown,
    /// The keys of `op`'s object that [`Op`] does not know.
    pub op_other: Unknown,
}

/// A job as the file holds it. [`Op`] is a tagged enum, whose variants cannot collect the keys
/// they do not know; the job does it for its `op`.
#[derive(Serialize, Deserialize)]
struct JobFile {
    id: u64,
    status: Option<JobStatus>,
    #[serde(default)]
    opresult: serde_json::Value,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    instance: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    op: Option<Unknown>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    depends: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    end_ts: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    passes_left: Option<u32>,
    #[serde(flatten)]
    other: Unknown,
}

/// An operation's object, as [`Op`] writes it.
fn op_object(op: &Op) -> Unknown {
    match serde_json::to_value(op) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => unreachable!("a tagged enum serialises as an object"),
    }
}

/// A job whose `op` is no operation autorepair knows, naming the job.
#[derive(Debug, thiserror::Error)]
#[error("job {job}: op: {source}")]
pub struct JobOpError {
    pub job: u64,
    pub source: serde_json::Error,
}

impl TryFrom<JobFile> for Job {
    type Error = JobOpError;

    fn try_from(f: JobFile) -> Result<Job, JobOpError> {
        let (op, op_other) = match f.op {
            None => (None, Unknown::new()),
            Some(mut map) => {
                let op: Op = serde_json::from_value(serde_json::Value::Object(map.clone()))
                    .map_err(|source| JobOpError { job: f.id, source })?;
                // An operation never changes once submitted, so what it does not write back
                // is exactly what it did not read.
                for known in op_object(&op).keys() {
                    map.remove(known);
                }
                (Some(op), map)
            }
        };
        Ok(Job {
            id: f.id,
            status: f.status,
            opresult: f.opresult,
            reason: f.reason,
            instance: f.instance,
            op,
            depends: f.depends,
            end_ts: f.end_ts,
            passes_left: f.passes_left,
            other: f.other,
            op_other,
        })
    }
}

impl From<Job> for JobFile {
    fn from(j: Job) -> JobFile {
        let op = j.op.as_ref().map(|op| {
            let mut map = op_object(op);
            for (k, v) in j.op_other {
                map.entry(k).or_insert(v);
            }
            map
        });
        JobFile {
            id: j.id,
            status: j.status,
            opresult: j.opresult,
            reason: j.reason,
            instance: j.instance,
            op,
            depends: j.depends,
            end_ts: j.end_ts,
            passes_left: j.passes_left,
            other: j.other,
        }
    }
}

pub use crate::engine::plan::{REASON_PREFIX, reason_for};

/// Ganeti's error code for a job that could not find room; such a repair is retried later.
pub const INSUFFICIENT_RESOURCES: &str = "insufficient_resources";

impl Job {
    /// The repair this job belongs to: its reason is `autorepair:<UUID>`.
    pub fn repair_id(&self) -> Option<&str> {
        crate::engine::plan::repair_of_reason(self.reason.as_deref()?)
    }

    /// The first error among the opcode results: its message and Ganeti error code.
    pub fn error(&self) -> Option<(String, Option<String>)> {
        let results = self.opresult.as_array()?;
        results.iter().find_map(|r| {
            let r = r.as_array()?;
            let class = r.first()?.as_str()?;
            if !class.starts_with("Op") || !class.ends_with("Error") {
                return None;
            }
            let details = r.get(1);
            let message = match details {
                Some(serde_json::Value::Array(d)) => d
                    .first()
                    .and_then(|m| m.as_str())
                    .unwrap_or(class)
                    .to_owned(),
                Some(serde_json::Value::String(s)) => s.clone(),
                _ => class.to_owned(),
            };
            let code = details
                .and_then(|d| d.as_array())
                .and_then(|d| d.get(1))
                .and_then(|c| c.as_str())
                .map(str::to_owned);
            Some((format!("{class}: {message}"), code))
        })
    }

    pub fn failed_for_lack_of_resources(&self) -> bool {
        self.status == Some(JobStatus::Error)
            && matches!(self.error(), Some((_, Some(code))) if code == INSUFFICIENT_RESOURCES)
    }
}

/// One repair operation, as submitted to the backend. Nodes are either named or chosen by
/// Ganeti's iallocator.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Op {
    Failover {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target_node: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        iallocator: Option<String>,
    },
    Migrate {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target_node: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        iallocator: Option<String>,
        /// Ganeti falls back to a failover when the instance is not running.
        #[serde(default)]
        allow_failover: bool,
    },
    /// `replace_new_secondary`: a new node takes over the mirror.
    ReplaceDisks {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        remote_node: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        iallocator: Option<String>,
    },
    RecreateDisks {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        nodes: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        iallocator: Option<String>,
    },
    Reinstall,
    /// Copies local disks to another node (instance shut down meanwhile).
    Move {
        target_node: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpKind {
    Failover,
    Migrate,
    ReplaceDisks,
    RecreateDisks,
    Reinstall,
    Move,
}

impl OpKind {
    pub const ALL: [OpKind; 6] = [
        OpKind::Failover,
        OpKind::Migrate,
        OpKind::ReplaceDisks,
        OpKind::RecreateDisks,
        OpKind::Reinstall,
        OpKind::Move,
    ];
}

impl Op {
    pub fn kind(&self) -> OpKind {
        match self {
            Op::Failover { .. } => OpKind::Failover,
            Op::Migrate { .. } => OpKind::Migrate,
            Op::ReplaceDisks { .. } => OpKind::ReplaceDisks,
            Op::RecreateDisks { .. } => OpKind::RecreateDisks,
            Op::Reinstall => OpKind::Reinstall,
            Op::Move { .. } => OpKind::Move,
        }
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OpKind::Failover => "failover",
            OpKind::Migrate => "migrate",
            OpKind::ReplaceDisks => "replace-disks",
            OpKind::RecreateDisks => "recreate-disks",
            OpKind::Reinstall => "reinstall",
            OpKind::Move => "move",
        })
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = |node: &Option<String>, alloc: &Option<String>| match (node, alloc) {
            (Some(n), _) => format!(" to {n}"),
            (None, Some(a)) => format!(" (iallocator {a})"),
            (None, None) => String::new(),
        };
        match self {
            Op::Failover {
                target_node,
                iallocator,
            } => write!(f, "failover{}", place(target_node, iallocator)),
            Op::Migrate {
                target_node,
                iallocator,
                allow_failover,
            } => write!(
                f,
                "live migrate{}{}",
                place(target_node, iallocator),
                if *allow_failover {
                    " (failover if not running)"
                } else {
                    ""
                }
            ),
            Op::ReplaceDisks {
                remote_node,
                iallocator,
            } => write!(
                f,
                "replace-disks new secondary{}",
                place(remote_node, iallocator)
            ),
            Op::RecreateDisks { nodes, iallocator } => {
                if nodes.is_empty() {
                    write!(f, "recreate-disks{}", place(&None, iallocator))
                } else {
                    write!(f, "recreate-disks on {}", nodes.join(","))
                }
            }
            Op::Reinstall => f.write_str("reinstall"),
            Op::Move { target_node } => write!(f, "move to {target_node}"),
        }
    }
}

/// Fleet-file simulator script: how the jobs for an instance end.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Simulation {
    /// Instance name to the outcome of its next jobs.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub instances: std::collections::BTreeMap<String, SimScript>,
    /// Passes a job takes unless the instance's script says otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_passes: Option<u32>,
    #[serde(flatten)]
    pub other: Unknown,
}

impl Simulation {
    pub fn is_empty(&self) -> bool {
        self.instances.is_empty() && self.default_passes.is_none() && self.other.is_empty()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SimScript {
    /// Outcomes of the instance's next jobs, consumed one per job; `success` once used up.
    #[serde(default)]
    pub outcomes: Vec<SimOutcome>,
    /// Passes each of its jobs takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passes: Option<u32>,
    #[serde(flatten)]
    pub other: Unknown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SimOutcome {
    Success,
    Fail,
    InsufficientResources,
    /// The job disappears from the queue, as if archived and purged.
    Vanish,
}

pub use crate::engine::ObjectRef;

impl Snapshot {
    /// Every tag of every object, in fleet order: cluster, groups, nodes, instances.
    pub fn all_tags(&self) -> impl Iterator<Item = &String> {
        self.cluster
            .tags
            .iter()
            .chain(self.groups.iter().flat_map(|g| &g.tags))
            .chain(self.nodes.iter().flat_map(|n| &n.tags))
            .chain(self.instances.iter().flat_map(|i| &i.tags))
    }

    /// The tags of an object, or `None` when the snapshot has no such object.
    pub fn tags_of(&self, object: &ObjectRef) -> Option<&Vec<String>> {
        let n = &object.name;
        match object.kind.as_ref() {
            kind::CLUSTER => Some(&self.cluster.tags),
            kind::GROUP => self.groups.iter().find(|g| &g.name == n).map(|g| &g.tags),
            kind::NODE => self.nodes.iter().find(|x| &x.name == n).map(|x| &x.tags),
            kind::INSTANCE => self
                .instances
                .iter()
                .find(|i| &i.name == n)
                .map(|i| &i.tags),
            _ => None,
        }
    }

    pub fn tags_of_mut(&mut self, object: &ObjectRef) -> Option<&mut Vec<String>> {
        let n = &object.name;
        match object.kind.as_ref() {
            kind::CLUSTER => Some(&mut self.cluster.tags),
            kind::GROUP => self
                .groups
                .iter_mut()
                .find(|g| &g.name == n)
                .map(|g| &mut g.tags),
            kind::NODE => self
                .nodes
                .iter_mut()
                .find(|x| &x.name == n)
                .map(|x| &mut x.tags),
            kind::INSTANCE => self
                .instances
                .iter_mut()
                .find(|i| &i.name == n)
                .map(|i| &mut i.tags),
            _ => None,
        }
    }
}
