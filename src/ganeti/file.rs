//! The embedded default backend: a JSON fleet file shaped like Ganeti's RAPI answers, plus a
//! job simulator so repairs really happen (on a later pass) without any server.

use super::Ganeti;
use crate::engine::{Backend, BackendError};
use crate::ganeti::health::{self, NodePicker, NodePool, NodeState, Storage};
use crate::ganeti::snapshot::{Instance, Job, JobStatus, ObjectRef, Op, SimOutcome, Snapshot};
use std::path::{Path, PathBuf};

pub struct FleetFile {
    /// Where it is saved; `None` keeps it in memory (tests, simulations).
    path: Option<PathBuf>,
    fleet: Snapshot,
}

impl FleetFile {
    pub fn open(path: &Path) -> Result<Self, BackendError> {
        let text = std::fs::read_to_string(path).map_err(|e| unreadable(path, &e))?;
        let fleet = parse_fleet(&text).map_err(|message| BackendError::FleetFile {
            path: path.display().to_string(),
            message,
        })?;
        Ok(FleetFile {
            path: Some(path.to_owned()),
            fleet,
        })
    }

    pub fn in_memory(fleet: Snapshot) -> Self {
        FleetFile { path: None, fleet }
    }

    /// A fleet file that `save` writes to `path` (e.g. a snapshot of a real cluster).
    pub fn create(path: &Path, fleet: Snapshot) -> Self {
        FleetFile {
            path: Some(path.to_owned()),
            fleet,
        }
    }

    pub fn fleet(&self) -> &Snapshot {
        &self.fleet
    }

    pub fn fleet_mut(&mut self) -> &mut Snapshot {
        &mut self.fleet
    }

    /// Writes the fleet atomically: a temporary file in the same directory, synced, then
    /// renamed over the old one. A crash leaves either the old or the new file, never half.
    pub fn save(&self) -> Result<(), BackendError> {
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
        crate::files::write_atomically(path, &text).map_err(|e| {
            fail(format!(
                "cannot save it (its directory must be writable: the file is replaced, not rewritten): {e}"
            ))
        })?;
        Ok(())
    }

    fn tags_mut(&mut self, object: &ObjectRef) -> Result<&mut Vec<String>, BackendError> {
        self.fleet
            .tags_of_mut(object)
            .ok_or_else(|| BackendError::NoSuchObject {
                object: object.clone(),
            })
    }

    fn next_job_id(&self) -> u64 {
        self.fleet.jobs.iter().map(|j| j.id).max().unwrap_or(0) + 1
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
        for id in ids {
            self.advance(id, now);
        }
    }

    fn advance(&mut self, id: u64, now: i64) {
        let Some(pos) = self.fleet.jobs.iter().position(|j| j.id == id) else {
            return;
        };
        // A job waits for the jobs it depends on, as in Ganeti.
        let deps: Vec<Option<JobStatus>> = self.fleet.jobs[pos]
            .depends
            .iter()
            .map(|d| {
                self.fleet
                    .jobs
                    .iter()
                    .find(|j| j.id == *d)
                    .and_then(|j| j.status)
            })
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
                    Some(op) => apply_effect(&mut self.fleet, &instance, &op),
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
                self.fleet.jobs.remove(pos);
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

/// Why a fleet file cannot be read, with what to do about it. A missing file is the common
/// mistake (a typo in --cluster), so it says so in words rather than as an OS error.
pub fn unreadable(path: &Path, e: &std::io::Error) -> BackendError {
    let message = if e.kind() == std::io::ErrorKind::NotFound {
        "does not exist: check the path given with --cluster (or fleet_file in the config); \
`autorepair generate --instances N --output FILE` makes a synthetic fleet"
            .to_owned()
    } else {
        format!("cannot read it: {e}")
    };
    BackendError::FleetFile {
        path: path.display().to_string(),
        message,
    }
}

/// Reads a fleet file, naming what is wrong and where.
pub fn parse_fleet(text: &str) -> Result<Snapshot, String> {
    serde_json::from_str(text).map_err(|e| {
        format!(
            "not a valid fleet file at line {} column {}: {e} (expected keys: cluster, groups, nodes, instances, jobs)",
            e.line(),
            e.column()
        )
    })
}

type SimError = (&'static str, &'static str, &'static str);

const NO_ROOM: SimError = (
    "OpPrereqError",
    "simulated: no usable node with enough resources",
    crate::ganeti::snapshot::INSUFFICIENT_RESOURCES,
);

/// What a successful job does to the fleet, checked the way Ganeti would refuse it.
fn apply_effect(fleet: &mut Snapshot, instance: &str, op: &Op) -> Result<(), SimError> {
    let pool = NodePool::new(&fleet.nodes, &fleet.instances);
    let state_of = |fleet: &Snapshot, name: &str| {
        fleet
            .nodes
            .iter()
            .find(|n| n.name == name)
            .map(health::node_state)
    };
    let Some(idx) = fleet.instances.iter().position(|i| i.name == instance) else {
        return Err(("OpPrereqError", "instance not found", "unknown_entity"));
    };
    let inst: Instance = fleet.instances[idx].clone();
    let storage = health::storage_of(&inst.disk_template);
    let mut exclude: Vec<&str> = vec![inst.pnode.as_str()];
    exclude.extend(inst.snodes.iter().map(String::as_str));
    let choose = |named: &Option<String>, count: usize| -> Result<Vec<String>, SimError> {
        let nodes = match named {
            Some(n) => vec![n.clone()],
            None => pool.pick(&inst.pnode, &exclude, count),
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
        for t in tags {
            if !list.contains(t) {
                list.push(t.clone());
            }
        }
        Ok(())
    }

    fn remove_marks(
        &mut self,
        object: &ObjectRef,
        tags: &[String],
        _reason: &str,
    ) -> Result<(), BackendError> {
        let list = self.tags_mut(object)?;
        list.retain(|t| !tags.contains(t));
        Ok(())
    }

    fn submit(
        &mut self,
        instance: &str,
        op: &Op,
        reason: &str,
        after: Option<&u64>,
    ) -> Result<u64, BackendError> {
        if !self.fleet.instances.iter().any(|i| i.name == instance) {
            return Err(BackendError::NoSuchObject {
                object: super::instance(instance),
            });
        }
        let id = self.next_job_id();
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
