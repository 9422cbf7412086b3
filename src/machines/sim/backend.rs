//! The world as the watcher's backend: the machines file, wrapped by the engine's
//! [`Intercepted`] with what the world does around each call ([`Side`]): every method of the
//! file reaches it, those the world has nothing to add to included.

use super::*;

/// What the world knows beside the files and does around the watcher's calls: the pods a
/// drain moves, what a command it runs is about, and counts of what the calls did.
pub struct Side {
    pub(super) shared: Arc<Mutex<Shared>>,
    pub(super) settings: Settings,
    pub(super) now: i64,
    /// Pods by Node name.
    pub(super) pods: BTreeMap<String, Pods>,
    /// Per serial, how many entries were created on it.
    pub(super) generation: BTreeMap<String, u64>,
    pub(super) tally: BTreeMap<&'static str, usize>,
    /// What the watcher read since the last write, read again after the next: the planner and
    /// each command's context read it, and the health checks make a read cost.
    pub(super) read: Option<Snapshot>,
}

impl Side {
    fn count(&mut self, what: &'static str) {
        *self.tally.entry(what).or_default() += 1;
    }

    /// Why the machine's Node is not drained right now, if it is a Node and is not.
    fn undrained(&self, file: &Document, address: &str) -> Option<String> {
        let node = file
            .nodes
            .as_ref()?
            .nodes()
            .into_iter()
            .find(|n| n.is(address))?;
        let pods = self.pods.get(&node.name).map_or(0, |p| p.count);
        match (node.unschedulable, pods) {
            (true, 0) => None,
            (false, _) => Some(format!("Node {} is schedulable", node.name)),
            (true, n) => Some(format!("Node {} still has {n} pods to move", node.name)),
        }
    }

    /// The drainer's evictions, after the Nodes file's cordon: every pod goes but one a
    /// PodDisruptionBudget protects.
    fn evict(&mut self, node: &str) {
        let now = self.now;
        let Some(p) = self.pods.get_mut(node) else {
            return;
        };
        let guarded = p.guarded_until.is_some_and(|u| u > now) && p.count > 0;
        p.count = usize::from(guarded);
        if guarded {
            self.count("evictions refused by a PodDisruptionBudget");
        }
    }

    fn context(&mut self, file: &mut Document, op: &Op) -> Result<Option<Context>, BackendError> {
        let Op::Run {
            serial,
            address,
            before,
            ..
        } = op
        else {
            return Ok(None);
        };
        let step = before.map(|p| p.step);
        let fleet = self.snapshot(file)?;
        let m = fleet.machines.iter().find(|m| m.serial == *serial);
        let need_drain = step.is_some_and(|i| {
            m.and_then(Machine::entry)
                .and_then(|e| {
                    self.settings
                        .repair
                        .operation(&e.machine_type, &e.operation)
                })
                .and_then(|o| o.repair_steps.get(i))
                .is_some_and(|s| s.need_drain)
        });
        Ok(Some(Context {
            serial: serial.clone(),
            step,
            generation: self.generation.get(serial).copied().unwrap_or(0),
            undrained: need_drain.then(|| self.undrained(file, address)).flatten(),
        }))
    }
}

impl Around<Machines, Document> for Side {
    /// The files as the watcher reads them, with the pods on each Node, which the Nodes file
    /// does not list.
    fn snapshot(&mut self, file: &mut Document) -> Result<Snapshot, BackendError> {
        if let Some(snap) = &self.read {
            return Ok(snap.clone());
        }
        let mut snap = file.snapshot()?;
        for n in &mut snap.nodes {
            n.pods = self.pods.get(&n.name).map_or(0, |p| p.count);
        }
        without_records(&mut snap);
        self.read = Some(snap.clone());
        Ok(snap)
    }

    fn before(
        &mut self,
        file: &mut Document,
        write: &Write<'_, Machines>,
    ) -> Result<(), BackendError> {
        if let Write::Advance { op, .. } = write {
            let context = self.context(file, op)?;
            lock(&self.shared).context = context;
        }
        self.read = None;
        Ok(())
    }

    fn after(
        &mut self,
        _file: &mut Document,
        write: &Write<'_, Machines>,
        made: Result<Option<&OpId>, &BackendError>,
    ) -> Result<(), BackendError> {
        match write {
            Write::Submit {
                op: Op::Enqueue { serial, .. },
                ..
            } if made.is_ok() => {
                *self.generation.entry(serial.clone()).or_default() += 1;
                self.count("entries created");
            }
            Write::Advance { op, .. } => {
                let died = {
                    let mut s = lock(&self.shared);
                    s.context = None;
                    std::mem::take(&mut s.died)
                };
                if died {
                    // The watcher is gone with the command: whatever the file would record
                    // after it is not, as when the process is killed there.
                    return Err(BackendError::Crashed { calls: 0 });
                }
                if made.is_err() {
                    return Ok(());
                }
                match op {
                    Op::Drain { node, progress, .. } => {
                        if progress.is_some() {
                            self.count("drains started");
                        }
                        self.evict(node);
                    }
                    Op::Uncordon { .. } => self.count("nodes uncordoned"),
                    Op::Record { progress, .. }
                        if progress.step_status == StepStatus::Waiting
                            && progress.drain_backoff_count > 0
                            && progress.status == Status::Processing =>
                    {
                        self.count("drains backed off");
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        Ok(())
    }
}
