//! The embedded default backend (`--sabakan-file FILE`): a sabakan machines file, the JSON of
//! `GET /api/v1/machines` (REST shape; GraphQL's `searchMachines` answer is read too), read once
//! when opened. The pass's label writes are made in the document ([`super::document`]) and
//! saved over the file atomically at the end of each pass, and before any repair command runs
//! (the step is recorded first). A file someone changed meanwhile is not written over.

use super::config::Repair;
use super::document::{Document, Store};
use super::drain::NodesFile;
use crate::engine::BackendError;
use crate::plug::{FileHint, unreadable};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A machines file, as [`Document`] keeps its machines in it.
pub struct MachinesFile {
    path: PathBuf,
    /// The file as read (then as last saved): a save over a file someone changed meanwhile
    /// writes nothing.
    stamp: Option<crate::files::Stamp>,
}

/// What to do about a machines file that does not exist.
pub const MISSING: FileHint = FileHint {
    flag: "--sabakan-file",
    config_key: Some("machines.sabakan_file"),
    make: Some("sabakan's answer to `GET /api/v1/machines` is one"),
};

impl MachinesFile {
    /// The machines in the file at `path`.
    pub fn open(
        path: &Path,
        repair: Repair,
        nodes: Option<NodesFile>,
    ) -> Result<Document, BackendError> {
        let crate::files::Input { text, stamp } =
            crate::files::read_input(path).map_err(|e| unreadable(path, &e, &MISSING))?;
        let file = MachinesFile {
            path: path.to_owned(),
            stamp: Some(stamp),
        };
        let doc: Value = serde_json::from_str(&text).map_err(|e| {
            file.error(format!(
                "not JSON ({e}): expected the answer of sabakan's GET /api/v1/machines"
            ))
        })?;
        Document::new(Box::new(file), doc, repair, nodes)
    }
}

impl Store for MachinesFile {
    fn error(&self, message: String) -> BackendError {
        BackendError::FleetFile {
            path: self.path.display().to_string(),
            message,
        }
    }

    fn save(&mut self, doc: &Value) -> Result<(), BackendError> {
        let text = serde_json::to_string_pretty(doc).expect("JSON serialises");
        crate::files::save(&self.path, format!("{text}\n").as_bytes(), &mut self.stamp)
            .map_err(|e| self.error(format!("cannot write it: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Backend, ObjectRef};
    use crate::machines::document::tests::rest;
    use crate::machines::entry::{Progress, Status, StepStatus};
    use crate::machines::snapshot::kind;
    use crate::machines::{Command, Op, OpId};
    use serde_json::json;

    #[test]
    fn a_step_is_recorded_in_the_file_before_its_command_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("machines.json");
        std::fs::write(&path, rest(json!({})).to_string()).unwrap();
        let mut f = MachinesFile::open(&path, Repair::default(), None).unwrap();
        let id = f
            .submit(
                "m1",
                &Op::Enqueue {
                    serial: "m1".into(),
                    operation: "unhealthy".into(),
                    machine_type: "qemu".into(),
                    at: 5,
                },
                "autorepair:x",
                None,
            )
            .unwrap();
        assert_eq!(id, OpId(1));
        let queued = Progress::queued(5);
        let script = format!(
            "{}/fixtures/machines/expect-recorded",
            env!("CARGO_MANIFEST_DIR")
        );
        for (argv, want) in [
            (
                vec![script.clone(), path.display().to_string()],
                Status::Processing,
            ),
            (vec!["false".to_owned()], Status::Failed),
        ] {
            let op = Op::Run {
                serial: "m1".into(),
                address: "10.0.0.2".into(),
                what: "step 1".into(),
                command: Command {
                    argv,
                    timeout: 5,
                    retries: 0,
                    interval: 0,
                },
                before: Some(queued.to(Status::Processing, 0, StepStatus::Watching, 6)),
                after_ok: None,
                after_failure: queued.to(Status::Failed, 0, StepStatus::Watching, 6),
            };
            f.advance(&ObjectRef::new(kind::MACHINE, "m1"), &op, "t")
                .unwrap();
            f.flush().unwrap();
            let again = MachinesFile::open(&path, Repair::default(), None)
                .unwrap()
                .snapshot()
                .unwrap();
            let e = again.machines[1].entry().unwrap().clone();
            assert_eq!(e.progress.status, want);
            assert_eq!((e.index, e.operation.as_str()), (1, "unhealthy"));
        }
        // The next index is above every recorded one.
        assert_eq!(f.next_index().unwrap(), 2);
    }
}
