//! The world as the watcher's backend: the objects file, wrapped by the engine's
//! [`Intercepted`] with what the world does around each call ([`Side`]): every method of the
//! file reaches it, those the world has nothing to add to included.

use super::*;

/// What the world knows beside the file that the watcher's calls meet: the broken BMCs, and
/// counts of what the calls did.
pub struct Side {
    pub(super) bmc: BTreeMap<String, Bmc>,
    pub(super) tally: BTreeMap<&'static str, usize>,
}

impl Around<Metal3, ObjectsFile> for Side {
    /// The file as the world reads it, without the warnings a watcher's read logs.
    fn snapshot(&mut self, file: &mut ObjectsFile) -> Result<Snapshot, BackendError> {
        Ok(Snapshot::from_items(items(file)))
    }

    fn after(
        &mut self,
        _file: &mut ObjectsFile,
        write: &Write<'_, Metal3>,
        made: Result<Option<&OpId>, &BackendError>,
    ) -> Result<(), BackendError> {
        if let Write::Submit {
            op: Op::PowerOff { host, .. },
            ..
        } = write
            && made.is_ok()
            && self.bmc.contains_key(host)
        {
            *self
                .tally
                .entry("power cycles started on a broken BMC")
                .or_default() += 1;
        }
        Ok(())
    }
}
