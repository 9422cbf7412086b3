//! The world as the watcher's backend: the machines file, with the world setting up what a
//! call that runs a command is about.

use super::*;

impl Backend<Machines> for MachinesWorld {
    fn snapshot(&mut self) -> Result<Snapshot, BackendError> {
        Ok(self.fleet().clone())
    }
    fn add_marks(&mut self, o: &ObjectRef, m: &[String], r: &str) -> Result<(), BackendError> {
        self.invalidate();
        self.file.get_mut().add_marks(o, m, r)
    }
    fn remove_marks(&mut self, o: &ObjectRef, m: &[String], r: &str) -> Result<(), BackendError> {
        self.invalidate();
        self.file.get_mut().remove_marks(o, m, r)
    }
    fn submit(
        &mut self,
        target: &str,
        op: &Op,
        reason: &str,
        after: Option<&OpId>,
    ) -> Result<OpId, BackendError> {
        self.invalidate();
        let id = self.file.get_mut().submit(target, op, reason, after)?;
        if let Op::Enqueue { serial, .. } = op {
            *self.generation.entry(serial.clone()).or_default() += 1;
            self.count("entries created");
        }
        Ok(id)
    }
    fn advance(&mut self, o: &ObjectRef, op: &Op, r: &str) -> Result<(), BackendError> {
        let context = self.context(op);
        lock(&self.shared).context = context;
        self.invalidate();
        let done = self.file.get_mut().advance(o, op, r);
        let died = {
            let mut s = lock(&self.shared);
            s.context = None;
            std::mem::take(&mut s.died)
        };
        if died {
            // The watcher is gone with the command: whatever the file would record after it
            // is not, as when the process is killed there.
            return Err(BackendError::Crashed { calls: 0 });
        }
        done?;
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
        Ok(())
    }
    fn can_follow(&self, op: &Op) -> bool {
        self.file.borrow().can_follow(op)
    }
    fn supports(&self, step: Step) -> bool {
        <MachinesFile as Backend<Machines>>::supports(&self.file.borrow(), step)
    }
    fn flush(&mut self) -> Result<(), BackendError> {
        self.file.get_mut().flush()
    }
}
