//! The world as the watcher's backend: the objects file, with the world's faults in between.

use super::*;

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
