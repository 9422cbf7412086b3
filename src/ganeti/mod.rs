//! The Ganeti family: instances repaired by failover, migration, disk replacement or reinstall,
//! steered by `ganeti:watcher:autorepair:*` tags (the `tags` codec), over RAPI (`rapi`) or a
//! fleet file (`file`, with its job simulator). It plugs into the engine as [`Ganeti`].

pub mod face;
pub mod file;
#[cfg(any(test, feature = "testkit"))]
pub mod generate;
pub mod health;
pub mod man;
pub mod master;
pub mod options;
pub mod rapi;
#[cfg(any(test, feature = "testkit"))]
pub mod sim;
pub mod snapshot;
pub mod tags;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;

use crate::engine::family::{
    Assessment, BackDomain, DownDomain, Family, Holder, OpState, Operation, Role, ScopeChain, Words,
};
use crate::engine::object::{ObjectRef, ObjectRefError, parse_object_ref};
use crate::engine::text::{FxMap, Text};
use health::{NodePool, NodeState, node_state, storage_of};
use serde::Serialize;
use snapshot::{Instance, Job, JobStatus, Node, Op, OpKind, Snapshot};
use std::cell::OnceCell;
use tags::{GanetiLevel, Tags};

/// The kinds of objects that carry Ganeti tags.
pub mod kind {
    pub const CLUSTER: &str = "cluster";
    pub const GROUP: &str = "group";
    pub const NODE: &str = "node";
    pub const INSTANCE: &str = "instance";
}

pub fn cluster() -> ObjectRef {
    ObjectRef::singleton(kind::CLUSTER)
}

pub fn group(name: impl Into<String>) -> ObjectRef {
    ObjectRef::new(kind::GROUP, name)
}

pub fn node(name: impl Into<String>) -> ObjectRef {
    ObjectRef::new(kind::NODE, name)
}

pub fn instance(name: impl Into<String>) -> ObjectRef {
    ObjectRef::new(kind::INSTANCE, name)
}

/// `cluster`, `group/NAME`, `node/NAME`, `instance/NAME`, or a bare instance name.
pub fn parse_object(text: &str) -> Result<ObjectRef, ObjectRefError> {
    parse_object_ref(
        text,
        &[kind::GROUP, kind::NODE, kind::INSTANCE],
        &[kind::CLUSTER],
        kind::INSTANCE,
    )
}

/// The Ganeti family, as the engine sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ganeti;

pub type Plan = crate::engine::Plan<Ganeti>;
pub type TargetPlan = crate::engine::TargetPlan<Ganeti>;
pub type Action = crate::engine::Action<Ganeti>;
pub type Blocked = crate::engine::Blocked<Ganeti>;
pub type Next = crate::engine::Next<Ganeti>;
pub type RepairStart = crate::engine::plan::RepairStart<Ganeti>;
pub type Policy = crate::engine::Policy<GanetiLevel>;

/// What the planner needs besides the engine's limits.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// Ganeti iallocator that picks new nodes; `None`: autorepair picks the least loaded usable
    /// node of the instance's group itself.
    pub iallocator: Option<String>,
    /// Operations the backend cannot run: repairs that need them are left to a person.
    pub unsupported: Vec<OpKind>,
}

/// The iallocator of a config file that names none.
pub const DEFAULT_IALLOCATOR: &str = "hail";

impl Settings {
    /// What a config file that says nothing gives: the iallocator `hail`, every operation run.
    pub fn shipped() -> Settings {
        Settings {
            iallocator: Some(DEFAULT_IALLOCATOR.into()),
            unsupported: vec![],
        }
    }
}

/// Plans one pass over a Ganeti snapshot with the engine's limits and the family's shipped
/// settings ([`Settings::shipped`]).
pub fn plan(snap: &Snapshot, now: i64, limits: &crate::engine::Limits, seed: u64) -> Plan {
    plan_with(snap, &Settings::shipped(), now, limits, seed)
}

/// Plans one pass over a Ganeti snapshot with the engine's limits and the family's settings
/// (the iallocator, what the backend cannot run).
pub fn plan_with(
    snap: &Snapshot,
    settings: &Settings,
    now: i64,
    limits: &crate::engine::Limits,
    seed: u64,
) -> Plan {
    crate::engine::plan::<Ganeti>(snap, settings, now, limits, seed)
}

/// Where an instance lives and runs, in its plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Facts {
    pub primary: Text,
    pub secondary: Option<Text>,
    /// The run status the backend reported (empty when unknown).
    pub run_status: Text,
}

/// Per-pass lookups over a Ganeti snapshot.
pub struct Index<'a> {
    snap: &'a Snapshot,
    settings: &'a Settings,
    /// Each node with its name as plan text, shared by every instance on it.
    nodes: FxMap<&'a str, (&'a Node, Text)>,
    group_names: FxMap<&'a str, &'a str>,
    /// Built on first use: only repairs that pick nodes themselves need it.
    pool: OnceCell<NodePool<'a>>,
}

impl<'a> Index<'a> {
    fn node(&self, name: &str) -> Option<&'a Node> {
        self.nodes.get(name).map(|(n, _)| *n)
    }

    /// The name of a node's group, for people (its uuid when the group is unknown).
    fn group_name(&self, n: &'a Node) -> &'a str {
        self.group_names
            .get(n.group_uuid.as_str())
            .copied()
            .unwrap_or(&n.group_uuid)
    }

    fn pool(&self) -> &NodePool<'a> {
        self.pool
            .get_or_init(|| NodePool::new(&self.snap.nodes, &self.snap.instances))
    }
}

impl Family for Ganeti {
    type Level = GanetiLevel;
    type Marks = Tags;
    type OpId = u64;
    type Op = Op;
    type Step = OpKind;
    type OpStatus = JobStatus;
    type Facts = Facts;
    type Snapshot = Snapshot;
    type Target = Instance;
    type Settings = Settings;
    type Index<'a> = Index<'a>;

    const WORDS: Words = Words {
        target: kind::INSTANCE,
        targets: "instances",
        domain: "node",
        domains: "nodes",
        fleet: kind::CLUSTER,
        domain_scope: kind::GROUP,
        scopes: "its group or the cluster",
        op: "job",
        ops: "jobs",
        op_vanished: "no longer exists (purged from the job queue?)",
    };

    fn index<'a>(snap: &'a Snapshot, settings: &'a Settings, _now: i64) -> Index<'a> {
        Index {
            snap,
            settings,
            nodes: snap
                .nodes
                .iter()
                .map(|n| (n.name.as_str(), (n, Text::Shared(n.name.as_str().into()))))
                .collect(),
            group_names: snap
                .groups
                .iter()
                .map(|g| (g.uuid.as_str(), g.name.as_str()))
                .collect(),
            pool: OnceCell::new(),
        }
    }

    fn holders(snap: &Snapshot) -> Vec<Holder<'_>> {
        let mut out = Vec::with_capacity(1 + snap.groups.len() + snap.nodes.len());
        out.push(Holder {
            object: cluster(),
            marks: &snap.cluster.tags,
            role: Role::Scope {
                key: "",
                halt_key: None,
            },
        });
        out.extend(snap.groups.iter().map(|g| Holder {
            object: group(g.name.clone()),
            marks: &g.tags,
            role: Role::Scope {
                key: &g.uuid,
                halt_key: Some(&g.uuid),
            },
        }));
        // Every node, tagged or not: an admin verb naming one is refused with the advice,
        // not told that the node does not exist.
        out.extend(snap.nodes.iter().map(|n| Holder {
            object: node(n.name.clone()),
            marks: &n.tags,
            role: Role::Inert {
                advice: "autorepair tags on nodes have no effect: tag the instance, its node group or the cluster",
            },
        }));
        out
    }

    fn targets(snap: &Snapshot) -> &[Instance] {
        &snap.instances
    }

    fn name(inst: &Instance) -> &str {
        &inst.name
    }

    fn marks(inst: &Instance) -> &[String] {
        &inst.tags
    }

    fn assess<'a>(index: &Self::Index<'a>, inst: &'a Instance) -> Assessment<'a, Ganeti> {
        // The primary is looked up once, for the group's policy and for health.
        let primary_entry = index.nodes.get(inst.pnode.as_str());
        let primary = primary_entry.map(|(n, _)| *n);
        let secondary_entry = inst
            .snodes
            .first()
            .map(|s| (s, index.nodes.get(s.as_str())));
        let secondary = secondary_entry.map(|(s, e)| e.map(|(n, _)| *n).ok_or(s.as_str()));
        let health = health::assess(inst, primary.ok_or(inst.pnode.as_str()), secondary);
        // The node that breaks it is its failure domain: the primary first, as its loss stops
        // the instance.
        let down = |n: Option<&Node>| n.is_some_and(|n| node_state(n) != NodeState::Usable);
        let domain = if down(primary) {
            Some(inst.pnode.as_str())
        } else {
            inst.snodes
                .iter()
                .find(|s| down(index.node(s)))
                .map(String::as_str)
        };
        let group = primary.map(|n| n.group_uuid.as_str());
        let node_text = |name: &String, e: Option<&(&Node, Text)>| {
            e.map_or_else(|| Text::Owned(name.clone()), |(_, t)| t.clone())
        };
        Assessment {
            health,
            // Nearest wins: the instance, the group of its primary, the cluster.
            scopes: match group {
                Some(g) => ScopeChain::new(&[g, ""]),
                None => ScopeChain::new(&[""]),
            },
            halt_key: group,
            domain,
            home: &inst.pnode,
            granted: None,
            retries: None,
            facts: Facts {
                primary: node_text(&inst.pnode, primary_entry),
                secondary: secondary_entry.map(|(s, e)| node_text(s, e)),
                run_status: run_status_text(&inst.status),
            },
        }
    }

    fn chain(inst: &Instance, level: GanetiLevel) -> Option<&'static [OpKind]> {
        storage_of(&inst.disk_template).and_then(|s| health::chain(s, level))
    }

    fn build_ops<'a>(
        index: &Self::Index<'a>,
        inst: &'a Instance,
        steps: &[OpKind],
    ) -> Result<Vec<Op>, String> {
        let storage = storage_of(&inst.disk_template)
            .ok_or_else(|| format!("unknown disk template {:?}", inst.disk_template))?;
        let ialloc = index.settings.iallocator.as_deref();
        steps
            .iter()
            .map(|k| {
                if index.settings.unsupported.contains(k) {
                    return Err(format!(
                        "the backend cannot {k} instances: a person has to (e.g. gnt-instance {k} on the master)"
                    ));
                }
                health::build_op(*k, inst, storage, ialloc, index.pool())
                    .map_err(|e| e.to_string())
            })
            .collect()
    }

    fn step_of(op: &Op) -> OpKind {
        op.kind()
    }

    fn operations<'a>(index: &Self::Index<'a>) -> Vec<Operation<'a, Ganeti>> {
        index.snap.jobs.iter().map(operation).collect()
    }

    fn down_domains<'a>(index: &Self::Index<'a>) -> Vec<DownDomain<'a>> {
        index
            .snap
            .nodes
            .iter()
            .filter_map(|n| {
                let state = node_state(n);
                (state != NodeState::Usable).then(|| DownDomain {
                    name: &n.name,
                    scope_key: &n.group_uuid,
                    scope_name: index.group_name(n),
                    state: state.as_str(),
                })
            })
            .collect()
    }

    fn back_domains<'a>(index: &Self::Index<'a>, since: i64) -> Vec<BackDomain<'a>> {
        index
            .snap
            .nodes
            .iter()
            .filter(|n| node_state(n) == NodeState::Usable)
            .filter_map(|n| {
                // Rounded up: a later time holds longer, never shorter.
                let at = n.mtime.filter(|t| t.is_finite())?.ceil() as i64;
                (at >= since).then(|| BackDomain {
                    name: &n.name,
                    scope_key: &n.group_uuid,
                    scope_name: index.group_name(n),
                    at,
                })
            })
            .collect()
    }

    fn domain_text(index: &Self::Index<'_>, name: &str) -> Text {
        index
            .nodes
            .get(name)
            .map_or_else(|| Text::Owned(name.to_owned()), |(_, t)| t.clone())
    }
}

fn operation(j: &Job) -> Operation<'_, Ganeti> {
    let state = match j.status {
        None => OpState::Unknown,
        Some(s) if !s.is_finished() => OpState::Running,
        Some(JobStatus::Success) => OpState::Succeeded,
        Some(_) if j.failed_for_lack_of_resources() => OpState::LacksResources,
        Some(_) => OpState::Failed,
    };
    Operation {
        id: j.id,
        seq: j.id,
        state,
        status: j.status,
        repair: j.repair_id(),
        target: j.instance.as_deref(),
        step: j.op.as_ref().map(Op::kind),
        ended: j.end_ts,
        // A job under way holds nothing of ours: only an ended one has something to say.
        why: (!matches!(
            state,
            OpState::Running | OpState::Paused | OpState::Succeeded
        ))
        .then(|| job_failure(j)),
    }
}

/// Ganeti's few run states are shared texts, so 100k targets do not allocate them.
fn run_status_text(status: &str) -> Text {
    const KNOWN: [&str; 8] = [
        "running",
        "ADMIN_down",
        "ADMIN_offline",
        "ERROR_down",
        "ERROR_up",
        "ERROR_nodedown",
        "ERROR_nodeoffline",
        "ERROR_wrongnode",
    ];
    match KNOWN.iter().find(|k| **k == status) {
        Some(k) => Text::Static(k),
        None if status.is_empty() => Text::Static(""),
        None => Text::Owned(status.to_owned()),
    }
}

/// What a job that did not succeed said, for people.
pub fn job_failure(j: &Job) -> String {
    let what =
        j.op.as_ref()
            .map_or("job".to_owned(), |o| o.kind().to_string());
    match (j.status, j.error()) {
        (_, Some((msg, _))) => format!("job {} ({what}) failed: {msg}", j.id),
        (Some(JobStatus::Canceled), None) => format!("job {} ({what}) was canceled", j.id),
        (status, None) => format!(
            "job {} ({what}) ended {}",
            j.id,
            status.map_or("unknown".into(), |s| format!("{s:?}").to_lowercase())
        ),
    }
}

#[cfg(test)]
mod plan_tests;
