//! The embedded default backend: a JSON fleet file shaped like Ganeti's RAPI answers, plus a
//! job simulator so repairs really happen (on a later pass) without any server.

use super::Ganeti;
use crate::engine::text::{FxMap, FxSet};
use crate::engine::{Backend, BackendError};
use crate::ganeti::health::{self, NodePicker, NodeState, Storage};
use crate::ganeti::snapshot::{Instance, Job, JobStatus, ObjectRef, Op, SimOutcome, Snapshot};
use crate::plug::{FileHint, unreadable};
use std::path::{Path, PathBuf};

pub struct FleetFile {
    /// Where it is saved; `None` keeps it in memory (tests, simulations).
    path: Option<PathBuf>,
    /// The file as read (then as last saved; `None` for a file this process creates): a save
    /// over a file someone changed meanwhile writes nothing.
    stamp: Option<crate::files::Stamp>,
    fleet: Snapshot,
    /// Each instance's position in `fleet.instances`, built on first use and dropped whenever
    /// the fleet is handed out for editing: a pass's thousands of tag writes and job
    /// submissions must not each scan 100,000 instances.
    instance_pos: Option<FxMap<String, usize>>,
    /// The id the next submitted job gets, once known (ids only grow, as Ganeti's do).
    next_job: Option<u64>,
}

impl FleetFile {
    pub fn open(path: &Path) -> Result<Self, BackendError> {
        let crate::files::Input { text, stamp } =
            crate::files::read_input(path).map_err(|e| unreadable(path, &e, &MISSING))?;
        let fleet = parse_fleet(&text).map_err(|e| BackendError::FleetFile {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Ok(FleetFile {
            path: Some(path.to_owned()),
            stamp: Some(stamp),
            fleet,
            instance_pos: None,
            next_job: None,
        })
    }

    pub fn in_memory(fleet: Snapshot) -> Self {
        FleetFile {
            path: None,
            stamp: None,
            fleet,
            instance_pos: None,
            next_job: None,
        }
    }

    /// A fleet file that `save` writes to `path` (e.g. a snapshot of a real cluster).
    pub fn create(path: &Path, fleet: Snapshot) -> Self {
        FleetFile {
            path: Some(path.to_owned()),
            stamp: None,
            fleet,
            instance_pos: None,
            next_job: None,
        }
    }

    pub fn fleet(&self) -> &Snapshot {
        &self.fleet
    }

    pub fn fleet_mut(&mut self) -> &mut Snapshot {
        self.instance_pos = None;
        self.next_job = None;
        &mut self.fleet
    }

    fn instance_pos(&mut self, name: &str) -> Option<usize> {
        let fleet = &self.fleet;
        self.instance_pos
            .get_or_insert_with(|| positions(&fleet.instances))
            .get(name)
            .copied()
    }

    /// Writes the fleet atomically: a temporary file in the same directory, synced, then
    /// renamed over the old one. A crash leaves either the old or the new file, never half.
    pub fn save(&mut self) -> Result<(), BackendError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let fail = |message: String| BackendError::FleetFile {
            path: path.display().to_string(),
            message,
        };
        let mut text = serde_json::to_vec_pretty(&self.fleet)
            .map_err(|e| fail(format!("cannot serialise: {e}")))?;
        text.push(b'\n');
        crate::files::save(path, &text, &mut self.stamp)
            .map_err(|e| fail(format!("cannot save it: {e}")))?;
        Ok(())
    }

    fn tags_mut(&mut self, object: &ObjectRef) -> Result<&mut Vec<String>, BackendError> {
        let found = if object.kind.as_ref() == super::kind::INSTANCE {
            self.instance_pos(&object.name)
                .map(|i| &mut self.fleet.instances[i].tags)
        } else {
            self.fleet.tags_of_mut(object)
        };
        found.ok_or_else(|| BackendError::NoSuchObject {
            object: object.clone(),
        })
    }

    /// Ids only grow, as Ganeti's do: past the largest there is none to give, and wrapping
    /// around would give a new job the id of one its repair may still be judged by.
    fn next_job_id(&mut self) -> Result<u64, BackendError> {
        let next = match self.next_job {
            Some(next) => next,
            None => match self.fleet.jobs.iter().map(|j| j.id).max() {
                None => 1,
                Some(top) => top.checked_add(1).ok_or_else(|| self.no_job_id(top))?,
            },
        };
        // None past the largest id: the next call finds it in the jobs and refuses.
        self.next_job = next.checked_add(1);
        Ok(next)
    }

    fn no_job_id(&self, top: u64) -> BackendError {
        BackendError::FleetFile {
            path: self.shown(),
            message: format!(
                "job {top} has the largest id a job can have, so a new job would reuse one: \
no job is submitted; remove the finished jobs with the largest ids from its \"jobs\" (or number \
them from 1 again, with the tags that name them)"
            ),
        }
    }

    fn shown(&self) -> String {
        match &self.path {
            Some(p) => p.display().to_string(),
            None => "(fleet in memory)".into(),
        }
    }

    /// One pass of cluster time: every unfinished job moves on, and jobs that end apply their
    /// effect (or their scripted failure).
    pub fn advance_jobs(&mut self, now: i64) {
        let ids: Vec<u64> = self
            .fleet
            .jobs
            .iter()
            .filter(|j| !j.status.is_some_and(JobStatus::is_finished))
            .map(|j| j.id)
            .collect();
        let mut jobs = Jobs {
            pos: self
                .fleet
                .jobs
                .iter()
                .enumerate()
                .map(|(i, j)| (j.id, i))
                .collect(),
            vanished: FxSet::default(),
        };
        let mut placement = Placement::new(&self.fleet);
        for id in ids {
            self.advance(id, now, &mut jobs, &mut placement);
        }
        if !jobs.vanished.is_empty() {
            self.fleet.jobs.retain(|j| !jobs.vanished.contains(&j.id));
        }
    }

    fn advance(&mut self, id: u64, now: i64, jobs: &mut Jobs, placement: &mut Placement) {
        let Some(pos) = jobs.find(id) else {
            return;
        };
        // A job waits for the jobs it depends on, as in Ganeti.
        let deps: Vec<Option<JobStatus>> = self.fleet.jobs[pos]
            .depends
            .iter()
            .map(|d| jobs.find(*d).and_then(|p| self.fleet.jobs[p].status))
            .collect();
        // Ganeti fails a job whose dependency no longer exists, rather than wait forever.
        if deps.contains(&None) {
            return self.end(
                pos,
                now,
                Err((
                    "OpExecError",
                    "a job this one depends on does not exist",
                    "wrong_state",
                )),
            );
        }
        if deps.iter().any(|s| !s.is_some_and(JobStatus::is_finished)) {
            self.fleet.jobs[pos].status = Some(JobStatus::Waiting);
            return;
        }
        if deps.iter().any(|s| *s != Some(JobStatus::Success)) {
            return self.end(
                pos,
                now,
                Err((
                    "OpPrereqError",
                    "a job this one depends on did not succeed",
                    "wrong_state",
                )),
            );
        }
        let job = &mut self.fleet.jobs[pos];
        let instance = job.instance.clone().unwrap_or_default();
        let script = self.fleet.simulation.instances.get(&instance);
        let passes = job.passes_left.unwrap_or_else(|| {
            script
                .and_then(|s| s.passes)
                .or(self.fleet.simulation.default_passes)
                .unwrap_or(1)
        });
        let passes = passes.saturating_sub(1);
        job.passes_left = Some(passes);
        job.status = Some(JobStatus::Running);
        if passes > 0 {
            return;
        }
        let outcome = self
            .fleet
            .simulation
            .instances
            .get_mut(&instance)
            .and_then(|s| (!s.outcomes.is_empty()).then(|| s.outcomes.remove(0)))
            .unwrap_or(SimOutcome::Success);
        let result = match outcome {
            SimOutcome::Success => {
                let op = self.fleet.jobs[pos].op.clone();
                match op {
                    Some(op) => apply_effect(&mut self.fleet, placement, &instance, &op),
                    None => Ok(()),
                }
            }
            SimOutcome::Fail => Err(("OpExecError", "simulated failure", "unknown")),
            SimOutcome::InsufficientResources => Err((
                "OpPrereqError",
                "simulated: not enough free memory on any node",
                crate::ganeti::snapshot::INSUFFICIENT_RESOURCES,
            )),
            SimOutcome::Vanish => {
                jobs.vanished.insert(id);
                return;
            }
        };
        self.end(pos, now, result);
    }

    fn end(&mut self, pos: usize, now: i64, result: Result<(), (&str, &str, &str)>) {
        let job = &mut self.fleet.jobs[pos];
        job.passes_left = None;
        job.end_ts = Some(now);
        match result {
            Ok(()) => {
                job.status = Some(JobStatus::Success);
                job.opresult = serde_json::json!([null]);
            }
            Err((class, message, code)) => {
                job.status = Some(JobStatus::Error);
                job.opresult = serde_json::json!([[class, [message, code]]]);
            }
        }
    }
}

/// What to do about a fleet file that does not exist.
pub const MISSING: FileHint = FileHint {
    flag: "--cluster",
    config_key: Some("fleet_file"),
    make: Some("`autorepair generate --instances N --output FILE` makes a synthetic fleet"),
};

/// A fleet file that is not one: where it goes wrong (the line and column) and how.
#[derive(Debug, thiserror::Error)]
#[error(
    "not a valid fleet file at line {line} column {column}: {0} (expected keys: cluster, groups, nodes, instances, jobs)",
    line = .0.line(),
    column = .0.column()
)]
pub struct FleetError(#[source] pub serde_json::Error);

/// Reads a fleet file, naming what is wrong and where.
pub fn parse_fleet(text: &str) -> Result<Snapshot, FleetError> {
    serde_json::from_str(text).map_err(FleetError)
}

type SimError = (&'static str, &'static str, &'static str);

const NO_ROOM: SimError = (
    "OpPrereqError",
    "simulated: no usable node with enough resources",
    crate::ganeti::snapshot::INSUFFICIENT_RESOURCES,
);

/// Jobs by id while a pass of cluster time runs; a job that vanishes leaves the fleet at the end,
/// and until then counts as gone for the jobs that depend on it.
struct Jobs {
    pos: FxMap<u64, usize>,
    vanished: FxSet<u64>,
}

impl Jobs {
    fn find(&self, id: u64) -> Option<usize> {
        self.pos
            .get(&id)
            .copied()
            .filter(|_| !self.vanished.contains(&id))
    }
}

fn positions(instances: &[Instance]) -> FxMap<String, usize> {
    let mut pos = FxMap::default();
    for (i, inst) in instances.iter().enumerate() {
        // The first of duplicate names, as a search from the front finds it.
        pos.entry(inst.name.clone()).or_insert(i);
    }
    pos
}

/// Where instances are and how loaded each node is, kept current as jobs move instances:
/// built once per pass of cluster time, where it was built from all instances for every job
/// (a real pass over 100,000 instances took 25 s).
struct Placement {
    instance_pos: FxMap<String, usize>,
    state: FxMap<String, NodeState>,
    group_of: FxMap<String, String>,
    usable_by_group: FxMap<String, Vec<String>>,
    /// Primaries per node.
    load: FxMap<String, usize>,
}

impl Placement {
    fn new(fleet: &Snapshot) -> Self {
        let mut p = Placement {
            instance_pos: positions(&fleet.instances),
            state: FxMap::default(),
            group_of: FxMap::default(),
            usable_by_group: FxMap::default(),
            load: FxMap::default(),
        };
        for i in &fleet.instances {
            *p.load.entry(i.pnode.clone()).or_default() += 1;
        }
        for n in &fleet.nodes {
            let state = health::node_state(n);
            p.state.insert(n.name.clone(), state);
            p.group_of.insert(n.name.clone(), n.group_uuid.clone());
            if state == NodeState::Usable {
                p.usable_by_group
                    .entry(n.group_uuid.clone())
                    .or_default()
                    .push(n.name.clone());
            }
        }
        p
    }

    fn state(&self, node: &str) -> Option<NodeState> {
        self.state.get(node).copied()
    }

    fn moved(&mut self, from: &str, to: &str) {
        if let Some(l) = self.load.get_mut(from) {
            *l = l.saturating_sub(1);
        }
        *self.load.entry(to.to_owned()).or_default() += 1;
    }
}

/// The same choice as [`health::NodePool`]: usable nodes of the group, least loaded first.
impl NodePicker for Placement {
    fn pick(&self, group_of: &str, exclude: &[&str], count: usize) -> Vec<String> {
        let Some(nodes) = self
            .group_of
            .get(group_of)
            .and_then(|g| self.usable_by_group.get(g))
        else {
            return vec![];
        };
        let mut nodes: Vec<(usize, &str)> = nodes
            .iter()
            .filter(|n| !exclude.contains(&n.as_str()))
            .map(|n| (self.load.get(n).copied().unwrap_or(0), n.as_str()))
            .collect();
        nodes.sort_unstable();
        nodes
            .into_iter()
            .take(count)
            .map(|(_, n)| n.to_owned())
            .collect()
    }
}

/// What a successful job does to the fleet, checked the way Ganeti would refuse it.
fn apply_effect(
    fleet: &mut Snapshot,
    placement: &mut Placement,
    instance: &str,
    op: &Op,
) -> Result<(), SimError> {
    let Some(&idx) = placement.instance_pos.get(instance) else {
        return Err(("OpPrereqError", "instance not found", "unknown_entity"));
    };
    let state_of = |_: &Snapshot, name: &str| placement.state(name);
    let inst: Instance = fleet.instances[idx].clone();
    let storage = health::storage_of(&inst.disk_template);
    let mut exclude: Vec<&str> = vec![inst.pnode.as_str()];
    exclude.extend(inst.snodes.iter().map(String::as_str));
    let choose = |named: &Option<String>, count: usize| -> Result<Vec<String>, SimError> {
        let nodes = match named {
            Some(n) => vec![n.clone()],
            None => placement.pick(&inst.pnode, &exclude, count),
        };
        if nodes.len() < count
            || nodes
                .iter()
                .any(|n| state_of(fleet, n) != Some(NodeState::Usable))
        {
            return Err(NO_ROOM);
        }
        Ok(nodes)
    };
    let mut updated = inst.clone();
    match op {
        Op::Failover { target_node, .. } | Op::Migrate { target_node, .. } => {
            let live = matches!(op, Op::Migrate { .. });
            if live && state_of(fleet, &inst.pnode) == Some(NodeState::Offline) {
                return Err((
                    "OpPrereqError",
                    "cannot migrate from an offline node",
                    "wrong_state",
                ));
            }
            if storage == Some(Storage::Mirrored) {
                let Some(secondary) = inst.snodes.first() else {
                    return Err(("OpPrereqError", "no secondary", "wrong_state"));
                };
                if state_of(fleet, secondary) != Some(NodeState::Usable) {
                    return Err(("OpPrereqError", "target node is not usable", "wrong_state"));
                }
                updated.snodes = vec![inst.pnode.clone()];
                updated.pnode = secondary.clone();
            } else {
                updated.pnode = choose(target_node, 1)?.remove(0);
            }
        }
        Op::ReplaceDisks { remote_node, .. } => {
            if state_of(fleet, &inst.pnode) == Some(NodeState::Offline) {
                return Err(("OpPrereqError", "primary node is offline", "wrong_state"));
            }
            updated.snodes = choose(remote_node, 1)?;
        }
        Op::RecreateDisks { nodes, .. } => {
            let count = if storage == Some(Storage::Mirrored) {
                2
            } else {
                1
            };
            let chosen = if nodes.is_empty() {
                choose(&None, count)?
            } else {
                nodes.clone()
            };
            if chosen.len() < count {
                return Err(NO_ROOM);
            }
            updated.pnode = chosen[0].clone();
            updated.snodes = chosen[1..count].to_vec();
        }
        Op::Reinstall => {
            // Ganeti shuts the instance down first, which fails on an offline primary.
            if state_of(fleet, &inst.pnode) == Some(NodeState::Offline) {
                return Err((
                    "OpExecError",
                    "could not shut down the instance: node is offline",
                    "wrong_state",
                ));
            }
        }
        Op::Move { target_node } => {
            updated.pnode = choose(&Some(target_node.clone()), 1)?.remove(0);
        }
    }
    if updated.pnode != inst.pnode {
        placement.moved(&inst.pnode, &updated.pnode);
    }
    fleet.instances[idx] = updated;
    Ok(())
}

impl Backend<Ganeti> for FleetFile {
    fn snapshot(&mut self) -> Result<Snapshot, BackendError> {
        Ok(self.fleet.clone())
    }

    fn add_marks(
        &mut self,
        object: &ObjectRef,
        tags: &[String],
        _reason: &str,
    ) -> Result<(), BackendError> {
        let list = self.tags_mut(object)?;
        // Sets, not a scan of the object's tags per tag: one object may carry 100,000.
        let mut have: FxSet<&str> = list.iter().map(String::as_str).collect();
        let fresh: Vec<String> = tags
            .iter()
            .filter(|t| have.insert(t.as_str()))
            .cloned()
            .collect();
        list.extend(fresh);
        Ok(())
    }

    fn remove_marks(
        &mut self,
        object: &ObjectRef,
        tags: &[String],
        _reason: &str,
    ) -> Result<(), BackendError> {
        let list = self.tags_mut(object)?;
        let gone: FxSet<&str> = tags.iter().map(String::as_str).collect();
        list.retain(|t| !gone.contains(t.as_str()));
        Ok(())
    }

    fn submit(
        &mut self,
        instance: &str,
        op: &Op,
        reason: &str,
        after: Option<&u64>,
    ) -> Result<u64, BackendError> {
        if self.instance_pos(instance).is_none() {
            return Err(BackendError::NoSuchObject {
                object: super::instance(instance),
            });
        }
        let id = self.next_job_id()?;
        self.fleet.jobs.push(Job {
            id,
            status: Some(JobStatus::Queued),
            opresult: serde_json::Value::Null,
            reason: Some(reason.to_owned()),
            instance: Some(instance.to_owned()),
            op: Some(op.clone()),
            depends: after.into_iter().copied().collect(),
            end_ts: None,
            passes_left: None,
            other: Default::default(),
            op_other: Default::default(),
        });
        Ok(id)
    }

    /// Cluster time passes between passes: jobs move on, then the file is saved.
    fn finish_pass(&mut self, now: i64) -> Result<(), BackendError> {
        self.advance_jobs(now);
        self.save()
    }

    fn flush(&mut self) -> Result<(), BackendError> {
        self.save()
    }
}

#[cfg(test)]
mod tests;
