//! The engine's test family ([`crate::fixture`]) as a world: shelves go down (their boxes then need
//! replacing onto a shelf that is up), boxes break, steps fail, lack room or vanish. The
//! smallest world, and the proof that the simulator and its oracle are the engine's.

use super::{DownFact, OpFact, OpRun, Rng, World};
use crate::backend::{Backend, BackendError};
use crate::family::{Health, Need, OpState};
use crate::fixture::{Fixture, FixtureBox, FixtureLevel, FixtureOp, FixtureRoom, FixtureShelf};
use crate::marks::Level;
use crate::object::ObjectRef;
use crate::plan::repair_of_reason;
use rand::{Rng as _, SeedableRng};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// How a step ends, when not in success.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum FixtureOutcome {
    Fail,
    /// No shelf has room: the repair retries later.
    NoRoom,
    /// The step is forgotten, as if it never existed.
    Vanish,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum FixtureFault {
    /// Every box on it then needs replacing.
    ShelfDown(String),
    ShelfUp(String),
    Breaks(String, FixtureLevel),
    /// The box's next step ends this way.
    Outcome(String, FixtureOutcome),
}

impl fmt::Display for FixtureFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FixtureFault::ShelfDown(s) => write!(f, "shelf {s} goes down"),
            FixtureFault::ShelfUp(s) => write!(f, "shelf {s} is back"),
            FixtureFault::Breaks(b, l) => write!(f, "box {b} breaks: it needs {l}"),
            FixtureFault::Outcome(b, o) => write!(f, "the next step on box {b} ends {o:?}"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct FixtureRates {
    pub shelf_down: f64,
    pub shelf_up: f64,
    pub breaks: f64,
    pub step_failure: f64,
    pub no_room: f64,
}

impl Default for FixtureRates {
    fn default() -> Self {
        FixtureRates {
            shelf_down: 0.1,
            shelf_up: 0.2,
            breaks: 0.3,
            step_failure: 0.1,
            no_room: 0.1,
        }
    }
}

pub struct FixtureChaos {
    rates: FixtureRates,
    shelves: Vec<String>,
    boxes: Vec<String>,
}

/// The room, with what is scripted for the boxes' next steps and how long each step runs.
pub struct FixtureWorld {
    room: FixtureRoom,
    script: BTreeMap<String, Vec<FixtureOutcome>>,
    /// Passes each running step still takes, and the step it must follow.
    running: BTreeMap<u32, (u32, Option<u32>)>,
}

impl FixtureWorld {
    fn marks_mut(&mut self, object: &ObjectRef) -> Result<&mut Vec<String>, BackendError> {
        let room = &mut self.room;
        let marks = match object.kind.as_ref() {
            "room" => Some(&mut room.marks),
            "shelf" => room
                .shelves
                .iter_mut()
                .find(|s| s.name == object.name)
                .map(|s| &mut s.marks),
            "box" => room
                .boxes
                .iter_mut()
                .find(|b| b.name == object.name)
                .map(|b| &mut b.marks),
            _ => None,
        };
        marks.ok_or_else(|| BackendError::NoSuchObject {
            object: object.clone(),
        })
    }

    fn end(&mut self, id: u32, now: i64) {
        let Some(pos) = self.room.ops.iter().position(|o| o.id == id) else {
            return;
        };
        let target = self.room.ops[pos].target.clone();
        let outcome = self
            .script
            .get_mut(&target)
            .and_then(|s| (!s.is_empty()).then(|| s.remove(0)));
        let state = match outcome {
            Some(FixtureOutcome::Vanish) => {
                self.room.ops.remove(pos);
                return;
            }
            Some(FixtureOutcome::Fail) => OpState::Failed,
            Some(FixtureOutcome::NoRoom) => OpState::LacksResources,
            None => self.take_effect(&target, self.room.ops[pos].step),
        };
        let op = &mut self.room.ops[pos];
        op.state = state;
        op.ended = Some(now);
    }

    /// A replacement moves the box to the first shelf that is up; every step mends what it is
    /// strong enough for.
    fn take_effect(&mut self, target: &str, step: FixtureLevel) -> OpState {
        let room = &mut self.room;
        let Some(b) = room.boxes.iter_mut().find(|b| b.name == target) else {
            return OpState::Failed;
        };
        if step == FixtureLevel::Replace {
            match room.shelves.iter().find(|s| !s.down && s.name != b.shelf) {
                Some(s) => b.shelf = s.name.clone(),
                None => return OpState::LacksResources,
            }
        }
        if b.needs.is_some_and(|n| n <= step) {
            b.needs = None;
        }
        OpState::Succeeded
    }
}

impl Backend<Fixture> for FixtureWorld {
    fn snapshot(&mut self) -> Result<FixtureRoom, BackendError> {
        Ok(self.room.clone())
    }

    fn add_marks(&mut self, o: &ObjectRef, marks: &[String], _: &str) -> Result<(), BackendError> {
        let list = self.marks_mut(o)?;
        for m in marks {
            if !list.contains(m) {
                list.push(m.clone());
            }
        }
        Ok(())
    }

    fn remove_marks(
        &mut self,
        o: &ObjectRef,
        marks: &[String],
        _: &str,
    ) -> Result<(), BackendError> {
        self.marks_mut(o)?.retain(|m| !marks.contains(m));
        Ok(())
    }

    fn submit(
        &mut self,
        target: &str,
        op: &FixtureLevel,
        reason: &str,
        after: Option<&u32>,
    ) -> Result<u32, BackendError> {
        if !self.room.boxes.iter().any(|b| b.name == target) {
            return Err(BackendError::NoSuchObject {
                object: ObjectRef::new("box", target),
            });
        }
        let id = self.room.ops.iter().map(|o| o.id).max().unwrap_or(0) + 1;
        self.room.ops.push(FixtureOp {
            id,
            target: target.to_owned(),
            repair: repair_of_reason(reason).unwrap_or(reason).to_owned(),
            step: *op,
            state: OpState::Running,
            ended: None,
        });
        // Steps take one or two passes, so that kills land while repairs are under way too.
        self.running.insert(id, (1 + id % 2, after.copied()));
        Ok(id)
    }
}

fn shelf<'f>(room: &'f FixtureRoom, name: &str) -> Option<&'f FixtureShelf> {
    room.shelves.iter().find(|s| s.name == name)
}

impl World for FixtureWorld {
    type Family = Fixture;
    type Fleet = FixtureRoom;
    type Backend = FixtureWorld;
    type Fault = FixtureFault;
    type Rates = FixtureRates;
    type Chaos = FixtureChaos;
    type Setup = ();

    fn new(room: &FixtureRoom, _: &(), _start: i64) -> Self {
        FixtureWorld {
            room: room.clone(),
            script: BTreeMap::new(),
            running: room
                .ops
                .iter()
                .filter(|o| o.state == OpState::Running)
                .map(|o| (o.id, (1, None)))
                .collect(),
        }
    }

    /// `targets` boxes over one shelf per eight boxes; the room allows restarts, some shelves
    /// and boxes say more, less or suspend, and foreign marks (`x-…`) are everywhere.
    fn generate(targets: usize, seed: u64) -> FixtureRoom {
        let mut rng = Rng::seed_from_u64(seed);
        let shelves = (targets / 8).max(2);
        let policy = |rng: &mut Rng, suspend: f64| -> Vec<String> {
            let mut marks = Vec::new();
            let roll: f64 = rng.random();
            if roll < suspend {
                marks.push("suspend".to_owned());
            } else if roll < 0.35 {
                let l = FixtureLevel::LADDER[rng.random_range(0..FixtureLevel::LADDER.len())];
                marks.push(l.to_string());
            }
            if rng.random_bool(0.3) {
                marks.push(format!("x-owner:team{}", rng.random_range(1..5)));
            }
            marks
        };
        let mut room = FixtureRoom {
            marks: vec!["restart".to_owned(), "x-site:lab".to_owned()],
            ..FixtureRoom::default()
        };
        for k in 0..shelves {
            let marks = policy(&mut rng, 0.1);
            room.shelves.push(FixtureShelf {
                name: format!("s{k}"),
                marks,
                down: false,
                back_at: None,
            });
        }
        for i in 0..targets {
            let marks = policy(&mut rng, 0.05);
            let needs = rng
                .random_bool(0.1)
                .then(|| FixtureLevel::LADDER[rng.random_range(0..FixtureLevel::LADDER.len())]);
            room.boxes.push(FixtureBox {
                name: format!("b{i:03}"),
                shelf: format!("s{}", i % shelves),
                marks,
                needs,
            });
        }
        room
    }

    fn fleet(&self) -> &FixtureRoom {
        &self.room
    }

    fn backend(&mut self) -> &mut FixtureWorld {
        self
    }

    fn domain_faults(room: &FixtureRoom) -> Vec<(FixtureFault, FixtureFault)> {
        room.shelves
            .iter()
            .map(|s| {
                (
                    FixtureFault::ShelfDown(s.name.clone()),
                    FixtureFault::ShelfUp(s.name.clone()),
                )
            })
            .collect()
    }

    fn chaos(room: &FixtureRoom, rates: &FixtureRates) -> FixtureChaos {
        FixtureChaos {
            rates: rates.clone(),
            shelves: room.shelves.iter().map(|s| s.name.clone()).collect(),
            boxes: room.boxes.iter().map(|b| b.name.clone()).collect(),
        }
    }

    fn draw(c: &mut FixtureChaos, rng: &mut Rng) -> Vec<FixtureFault> {
        let pick = |rng: &mut Rng, list: &[String]| list[rng.random_range(0..list.len())].clone();
        let r = &c.rates;
        let mut out = Vec::new();
        if !c.shelves.is_empty() {
            if rng.random_bool(r.shelf_down) {
                out.push(FixtureFault::ShelfDown(pick(rng, &c.shelves)));
            }
            if rng.random_bool(r.shelf_up) {
                out.push(FixtureFault::ShelfUp(pick(rng, &c.shelves)));
            }
        }
        if !c.boxes.is_empty() {
            if rng.random_bool(r.breaks) {
                let l = FixtureLevel::LADDER[rng.random_range(0..FixtureLevel::LADDER.len())];
                out.push(FixtureFault::Breaks(pick(rng, &c.boxes), l));
            }
            if rng.random_bool(r.step_failure) {
                let o = if rng.random_bool(0.2) {
                    FixtureOutcome::Vanish
                } else {
                    FixtureOutcome::Fail
                };
                out.push(FixtureFault::Outcome(pick(rng, &c.boxes), o));
            }
            if rng.random_bool(r.no_room) {
                out.push(FixtureFault::Outcome(
                    pick(rng, &c.boxes),
                    FixtureOutcome::NoRoom,
                ));
            }
        }
        out
    }

    fn apply(&mut self, fault: &FixtureFault, now: i64) {
        let room = &mut self.room;
        match fault {
            FixtureFault::ShelfDown(s) => {
                for shelf in room.shelves.iter_mut().filter(|x| x.name == *s) {
                    shelf.down = true;
                }
                for b in room.boxes.iter_mut().filter(|b| b.shelf == *s) {
                    b.needs = Some(FixtureLevel::Replace);
                }
            }
            FixtureFault::ShelfUp(s) => {
                for shelf in room.shelves.iter_mut().filter(|x| x.name == *s && x.down) {
                    shelf.down = false;
                    shelf.back_at = Some(now);
                }
            }
            FixtureFault::Breaks(name, l) => {
                if let Some(b) = room.boxes.iter_mut().find(|b| b.name == *name) {
                    b.needs = Some(b.needs.map_or(*l, |n| n.max(*l)));
                }
            }
            FixtureFault::Outcome(name, o) => self.script.entry(name.clone()).or_default().push(*o),
        }
    }

    fn advance(&mut self, now: i64) {
        let ids: Vec<u32> = self.running.keys().copied().collect();
        for id in ids {
            let (left, after) = self.running[&id];
            let before = after.map(|a| self.room.ops.iter().find(|o| o.id == a).map(|o| o.state));
            match before {
                Some(Some(OpState::Running)) => continue,
                Some(Some(OpState::Succeeded)) | None => {}
                // What it follows failed or is gone: it fails without running.
                Some(_) => {
                    if let Some(op) = self.room.ops.iter_mut().find(|o| o.id == id) {
                        op.state = OpState::Failed;
                        op.ended = Some(now);
                    }
                    self.running.remove(&id);
                    continue;
                }
            }
            if left > 1 {
                self.running.insert(id, (left - 1, after));
            } else {
                self.running.remove(&id);
                self.end(id, now);
            }
        }
    }

    fn health(&self, _: &FixtureRoom, b: &FixtureBox, _now: i64) -> Health<FixtureLevel> {
        match b.needs {
            None => Health::Healthy,
            Some(l) => Health::Broken {
                problem: "broken".into(),
                need: Need::Repair(l),
            },
        }
    }

    fn domain<'f>(_: &'f FixtureRoom, b: &'f FixtureBox) -> &'f str {
        &b.shelf
    }

    fn limit_scope<'f>(_: &'f FixtureRoom, _: &'f FixtureBox) -> Option<&'f str> {
        Some("room")
    }

    fn down_domains(room: &FixtureRoom, _now: i64) -> Vec<DownFact<'_>> {
        room.shelves
            .iter()
            .filter(|s| s.down)
            .map(|s| DownFact {
                domain: &s.name,
                scope: "room",
            })
            .collect()
    }

    fn scope_marks<'f>(room: &'f FixtureRoom, b: &'f FixtureBox) -> Vec<&'f [String]> {
        shelf(room, &b.shelf)
            .map(|s| s.marks.as_slice())
            .into_iter()
            .chain([room.marks.as_slice()])
            .collect()
    }

    fn ops(room: &FixtureRoom, _now: i64) -> Vec<OpFact<'_, Fixture>> {
        room.ops
            .iter()
            .map(|o| OpFact {
                id: o.id,
                repair: Some(&o.repair),
                target: Some(&o.target),
                step: Some(o.step),
                run: match o.state {
                    OpState::Running => OpRun::Running,
                    OpState::Paused => OpRun::Paused,
                    OpState::Succeeded => OpRun::Succeeded,
                    OpState::Failed | OpState::LacksResources => OpRun::Failed,
                    OpState::Unknown => OpRun::Unknown,
                },
            })
            .collect()
    }

    fn level_of(op: &FixtureLevel) -> FixtureLevel {
        *op
    }
}
