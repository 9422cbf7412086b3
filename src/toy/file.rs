//! A room file: the toy family's fleet as JSON. Its world is the simplest there is: each
//! step a pass submits has run by the end of that pass (the box is mended, the step
//! succeeded), so a pass, `status` and the next pass show a whole repair.

use super::{Toy, ToyBox, ToyLevel, ToyRoom, ToyShelf, ToyStep, kind};
use crate::engine::{Backend, BackendError, ObjectRef, family::OpState, marks::Level};
use crate::plug::{FileHint, unreadable};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The room as its file writes it.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Room {
    marks: Vec<String>,
    shelves: Vec<Shelf>,
    boxes: Vec<Box_>,
    steps: Vec<Step>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Shelf {
    name: String,
    marks: Vec<String>,
    down: bool,
    /// When it came back up (epoch seconds), if it went down.
    #[serde(skip_serializing_if = "Option::is_none")]
    back_at: Option<i64>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Box_ {
    name: String,
    shelf: String,
    marks: Vec<String>,
    /// The repair it needs (`nudge`, `restart`, `replace`), if broken.
    needs: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    id: u32,
    target: String,
    /// The repair id it carries.
    repair: String,
    step: String,
    /// `running` until the pass that submitted it ends, then `succeeded`.
    state: String,
    ended: Option<i64>,
}

/// What to do about a room file that does not exist.
pub const MISSING: FileHint = FileHint {
    flag: "--toy-room",
    config_key: Some("toy.room"),
    make: None,
};

fn fleet_error(path: &Path, message: String) -> BackendError {
    BackendError::FleetFile {
        path: path.display().to_string(),
        message,
    }
}

fn level(path: &Path, name: &str) -> Result<ToyLevel, BackendError> {
    ToyLevel::from_name(name).ok_or_else(|| {
        fleet_error(
            path,
            format!("unknown repair {name:?}: use {}", ToyLevel::names()),
        )
    })
}

/// A room file, read into memory and saved when a pass or an admin command ends.
pub struct RoomFile {
    path: PathBuf,
    room: ToyRoom,
    next_id: u32,
    dirty: bool,
    /// The file as read (then as last saved): a save over a file someone changed meanwhile
    /// writes nothing.
    stamp: Option<crate::files::Stamp>,
}

impl RoomFile {
    pub fn open(path: &Path) -> Result<RoomFile, BackendError> {
        let crate::files::Input { text, stamp } =
            crate::files::read_input(path).map_err(|e| unreadable(path, &e, &MISSING))?;
        let room: Room = serde_json::from_str(&text)
            .map_err(|e| fleet_error(path, format!("not a room file: {e}")))?;
        let boxes = room
            .boxes
            .into_iter()
            .map(|b| {
                Ok(ToyBox {
                    needs: b.needs.as_deref().map(|n| level(path, n)).transpose()?,
                    name: b.name,
                    shelf: b.shelf,
                    marks: b.marks,
                })
            })
            .collect::<Result<Vec<_>, BackendError>>()?;
        let steps = room
            .steps
            .into_iter()
            .map(|s| {
                Ok(ToyStep {
                    id: s.id,
                    step: level(path, &s.step)?,
                    state: match s.state.as_str() {
                        "succeeded" => OpState::Succeeded,
                        "failed" => OpState::Failed,
                        _ => OpState::Running,
                    },
                    target: s.target,
                    repair: s.repair,
                    ended: s.ended,
                })
            })
            .collect::<Result<Vec<_>, BackendError>>()?;
        let next_id = steps.iter().map(|s| s.id).max().unwrap_or(0) + 1;
        Ok(RoomFile {
            path: path.to_owned(),
            room: ToyRoom {
                marks: room.marks,
                shelves: room
                    .shelves
                    .into_iter()
                    .map(|s| ToyShelf {
                        name: s.name,
                        marks: s.marks,
                        down: s.down,
                        back_at: s.back_at,
                    })
                    .collect(),
                boxes,
                steps,
            },
            next_id,
            dirty: false,
            stamp: Some(stamp),
        })
    }

    fn marks_of(&mut self, object: &ObjectRef) -> Result<&mut Vec<String>, BackendError> {
        let room = &mut self.room;
        let found = match &*object.kind {
            kind::ROOM => Some(&mut room.marks),
            kind::SHELF => room
                .shelves
                .iter_mut()
                .find(|s| s.name == object.name)
                .map(|s| &mut s.marks),
            _ => room
                .boxes
                .iter_mut()
                .find(|b| b.name == object.name)
                .map(|b| &mut b.marks),
        };
        found.ok_or_else(|| BackendError::NoSuchObject {
            object: object.clone(),
        })
    }

    fn save(&mut self) -> Result<(), BackendError> {
        let room = &self.room;
        let file = Room {
            marks: room.marks.clone(),
            shelves: room
                .shelves
                .iter()
                .map(|s| Shelf {
                    name: s.name.clone(),
                    marks: s.marks.clone(),
                    down: s.down,
                    back_at: s.back_at,
                })
                .collect(),
            boxes: room
                .boxes
                .iter()
                .map(|b| Box_ {
                    name: b.name.clone(),
                    shelf: b.shelf.clone(),
                    marks: b.marks.clone(),
                    needs: b.needs.map(|n| n.as_str().to_owned()),
                })
                .collect(),
            steps: room
                .steps
                .iter()
                .map(|o| Step {
                    id: o.id,
                    target: o.target.clone(),
                    repair: o.repair.clone(),
                    step: o.step.as_str().to_owned(),
                    state: match o.state {
                        OpState::Succeeded => "succeeded",
                        OpState::Failed => "failed",
                        _ => "running",
                    }
                    .to_owned(),
                    ended: o.ended,
                })
                .collect(),
        };
        let mut text = serde_json::to_string_pretty(&file)
            .map_err(|e| fleet_error(&self.path, format!("cannot serialise: {e}")))?;
        text.push('\n');
        crate::files::save(&self.path, text.as_bytes(), &mut self.stamp)
            .map_err(|e| fleet_error(&self.path, format!("cannot save it: {e}")))?;
        self.dirty = false;
        Ok(())
    }
}

impl Backend<Toy> for RoomFile {
    fn snapshot(&mut self) -> Result<ToyRoom, BackendError> {
        Ok(self.room.clone())
    }

    fn add_marks(
        &mut self,
        object: &ObjectRef,
        marks: &[String],
        _reason: &str,
    ) -> Result<(), BackendError> {
        let held = self.marks_of(object)?;
        for mark in marks {
            if !held.contains(mark) {
                held.push(mark.clone());
            }
        }
        self.dirty = true;
        Ok(())
    }

    fn remove_marks(
        &mut self,
        object: &ObjectRef,
        marks: &[String],
        _reason: &str,
    ) -> Result<(), BackendError> {
        self.marks_of(object)?.retain(|m| !marks.contains(m));
        self.dirty = true;
        Ok(())
    }

    fn submit(
        &mut self,
        target: &str,
        op: &ToyLevel,
        reason: &str,
        _after: Option<&u32>,
    ) -> Result<u32, BackendError> {
        let id = self.next_id;
        self.next_id += 1;
        self.room.steps.push(ToyStep {
            id,
            target: target.to_owned(),
            // The repair the step belongs to, as every backend reads it back from its reason.
            repair: crate::engine::plan::repair_of_reason(reason)
                .unwrap_or(reason)
                .to_owned(),
            step: *op,
            state: OpState::Running,
            ended: None,
        });
        self.dirty = true;
        Ok(id)
    }

    /// The steps submitted run: each mends its box.
    fn finish_pass(&mut self, now: i64) -> Result<(), BackendError> {
        let room = &mut self.room;
        for op in room
            .steps
            .iter_mut()
            .filter(|o| o.state == OpState::Running)
        {
            op.state = OpState::Succeeded;
            op.ended = Some(now);
            if let Some(b) = room.boxes.iter_mut().find(|b| b.name == op.target) {
                b.needs = None;
            }
            self.dirty = true;
        }
        self.flush()
    }

    fn flush(&mut self) -> Result<(), BackendError> {
        if self.dirty { self.save() } else { Ok(()) }
    }
}
