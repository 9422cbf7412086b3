//! The toy family: boxes on shelves in a room. It is the worked example of docs/architecture.md's
//! recipe for adding a family, small enough to read in one sitting, and the family the generic
//! output is tested on (it shares no word with the families of the product).
//!
//! Its folder holds what any family's does:
//! - this file, the engine's side: its ladder [`ToyLevel`], its mark codec [`ToyMarks`], and
//!   [`Toy`], which implements [`Family`] over its snapshot;
//! - [`room`], the snapshot: the room, its shelves, boxes and steps;
//! - [`file`], the backend: a room file (`--toy-room FILE`, JSON), where a step submitted by one
//!   pass has mended its box by the next;
//! - [`face`], the command line's side: its flag, its config section and its `FamilyFace`.
//!
//! It is registered by no line of [`crate::FAMILIES`]: `examples/toy_family.rs` is a program
//! that adds that one line, and `tests/it/toy_family.rs` drives it through its command line.

pub mod face;
pub mod file;
#[cfg(test)]
pub(crate) mod fixture;
pub mod room;

use crate::engine::family::{
    Assessment, BackDomain, DownDomain, Family, Holder, Need, Operation, Role, ScopeChain, Words,
};
use crate::engine::marks::PlainMarks;
use crate::engine::{Health, Level, ObjectRef, Text};
pub use face::{RoomSource, ToyArgs, ToyConfig, ToySection};
pub use room::{ToyBox, ToyRoom, ToyShelf, ToyStep, kind};
use serde::Serialize;
use std::fmt;

/// The toy family, as the engine sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Toy;

/// The toy's repairs, least destructive first: a nudge, a restart, a replacement (onto another
/// shelf). A policy allowing `restart` allows `nudge` too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToyLevel {
    Nudge,
    Restart,
    Replace,
}

impl Level for ToyLevel {
    const LADDER: &'static [Self] = &[Self::Nudge, Self::Restart, Self::Replace];

    fn as_str(self) -> &'static str {
        match self {
            Self::Nudge => "nudge",
            Self::Restart => "restart",
            Self::Replace => "replace",
        }
    }
}

impl fmt::Display for ToyLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A room file holds marks as plain strings, so the toy stores the mark model as it is spelled
/// (`restart`, `suspend:1800000000`, `pending:…`) with the engine's plain codec. A mark starting
/// with `x-` is someone else's; step ids are numbers, joined by `+`.
pub type ToyMarks = PlainMarks<ToyLevel, u32>;

/// What the toy's plans show besides the engine's fields: a `SHELF` column in `status`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToyFacts {
    pub shelf: String,
}

/// The room's scope key: the scope of the room's policy, and the limiter scope of every box, so
/// that a mass failure on any shelf halts repairs in the whole room.
const ROOM_KEY: &str = "";

/// The toy's health table: a box that needs a repair is broken, and needs just that.
fn health(b: &ToyBox) -> Health<ToyLevel> {
    b.needs.map_or(Health::Healthy, |level| Health::Broken {
        problem: "broken".into(),
        need: Need::Repair(level),
    })
}

impl Family for Toy {
    type Level = ToyLevel;
    type Marks = ToyMarks;
    type OpId = u32;
    // A step is named by its level and does only that: the step, the operation and its kind
    // are one type.
    type Op = ToyLevel;
    type Step = ToyLevel;
    type OpStatus = ();
    type Facts = ToyFacts;
    type Snapshot = ToyRoom;
    type Target = ToyBox;
    type Settings = ();
    // A room is small: the planner looks things up in the room itself.
    type Index<'a> = &'a ToyRoom;

    const WORDS: Words = Words {
        target: kind::BOX,
        targets: "boxes",
        domain: kind::SHELF,
        domains: "shelves",
        fleet: kind::ROOM,
        domain_scope: kind::ROOM,
        scopes: "its shelf or the room",
        op: "step",
        ops: "steps",
        op_vanished: "is gone",
    };

    fn index<'a>(room: &'a ToyRoom, _: &'a (), _now: i64) -> &'a ToyRoom {
        room
    }

    /// The room and its shelves: scopes, whose marks govern the boxes under them.
    fn holders(room: &ToyRoom) -> Vec<Holder<'_>> {
        let whole = Holder {
            object: ObjectRef::singleton(kind::ROOM),
            marks: &room.marks,
            role: Role::Scope {
                key: ROOM_KEY,
                halt_key: None,
            },
        };
        let shelves = room.shelves.iter().map(|shelf| Holder {
            object: ObjectRef::new(kind::SHELF, shelf.name.clone()),
            marks: &shelf.marks,
            role: Role::Scope {
                key: &shelf.name,
                halt_key: Some(ROOM_KEY),
            },
        });
        std::iter::once(whole).chain(shelves).collect()
    }

    fn targets(room: &ToyRoom) -> &[ToyBox] {
        &room.boxes
    }

    fn name(b: &ToyBox) -> &str {
        &b.name
    }

    fn marks(b: &ToyBox) -> &[String] {
        &b.marks
    }

    fn assess<'a>(_: &&'a ToyRoom, b: &'a ToyBox) -> Assessment<'a, Toy> {
        Assessment {
            health: health(b),
            // Nearest first: its shelf's policy, then the room's.
            scopes: ScopeChain::new(&[&b.shelf, ROOM_KEY]),
            halt_key: Some(ROOM_KEY),
            // A broken box is blamed on its shelf, as if the shelf had broken it: the limiter
            // counts failures by shelf.
            domain: b.needs.is_some().then_some(b.shelf.as_str()),
            home: &b.shelf,
            granted: None,
            retries: None,
            facts: ToyFacts {
                shelf: b.shelf.clone(),
            },
        }
    }

    /// Each repair is the one step of its name.
    fn chain(_: &ToyBox, level: ToyLevel) -> Option<&'static [ToyLevel]> {
        Some(match level {
            ToyLevel::Nudge => &[ToyLevel::Nudge],
            ToyLevel::Restart => &[ToyLevel::Restart],
            ToyLevel::Replace => &[ToyLevel::Replace],
        })
    }

    fn build_ops<'a>(
        _: &&'a ToyRoom,
        _: &'a ToyBox,
        steps: &[ToyLevel],
    ) -> Result<Vec<ToyLevel>, String> {
        Ok(steps.to_vec())
    }

    fn step_of(op: &ToyLevel) -> ToyLevel {
        *op
    }

    fn operations<'a>(room: &Self::Index<'a>) -> Vec<Operation<'a, Toy>> {
        room.steps.iter().map(operation).collect()
    }

    fn down_domains<'a>(room: &Self::Index<'a>) -> Vec<DownDomain<'a>> {
        let down = room.shelves.iter().filter(|shelf| shelf.down);
        down.map(|shelf| DownDomain {
            name: &shelf.name,
            scope_key: ROOM_KEY,
            scope_name: kind::ROOM,
            state: "down",
        })
        .collect()
    }

    fn back_domains<'a>(room: &Self::Index<'a>, since: i64) -> Vec<BackDomain<'a>> {
        let up = room.shelves.iter().filter(|shelf| !shelf.down);
        up.filter_map(|shelf| {
            let at = shelf.back_at.filter(|at| *at >= since)?;
            Some(BackDomain {
                name: &shelf.name,
                scope_key: ROOM_KEY,
                scope_name: kind::ROOM,
                at,
            })
        })
        .collect()
    }

    fn domain_text(_: &&ToyRoom, name: &str) -> Text {
        Text::Owned(name.to_owned())
    }
}

/// A step as the engine judges operations: the room file records how it stands.
fn operation(step: &ToyStep) -> Operation<'_, Toy> {
    Operation {
        id: step.id,
        seq: u64::from(step.id),
        state: step.state,
        status: None,
        repair: Some(&step.repair),
        target: Some(&step.target),
        step: Some(step.step),
        ended: step.ended,
        why: None,
    }
}
