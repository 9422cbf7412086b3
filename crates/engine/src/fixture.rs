//! The family the engine's own unit tests plan, execute and simulate on: boxes on shelves in
//! one room. A crate's unit tests can only use a family the crate itself contains, and these
//! read the engine's private items, so the engine keeps this one, compiled for its tests only.
//! It shares no word with the families of the product, so the engine is tested as the engine.
//!
//! Marks are [`PlainMarks`]: `restart`, `suspend:5`, `pending:…`; a mark that starts with `x-`
//! is foreign. Operation ids are numbers joined by `+`.

use super::family::{
    Assessment, BackDomain, DownDomain, Family, Health, Holder, Need, OpState, Operation, Role,
    ScopeChain, Words,
};
use super::marks::{Level, PlainMarks};
use super::object::ObjectRef;
use super::text::Text;
use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FixtureLevel {
    Nudge,
    Restart,
    Replace,
}

impl Level for FixtureLevel {
    const LADDER: &'static [Self] = &[
        FixtureLevel::Nudge,
        FixtureLevel::Restart,
        FixtureLevel::Replace,
    ];
    fn as_str(self) -> &'static str {
        match self {
            FixtureLevel::Nudge => "nudge",
            FixtureLevel::Restart => "restart",
            FixtureLevel::Replace => "replace",
        }
    }
}

impl fmt::Display for FixtureLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Marks as the model spells them; a mark starting with `x-` is foreign.
pub type FixtureMarks = PlainMarks<FixtureLevel, u32>;

/// A box: the fixture's target.
#[derive(Clone, Debug, Default)]
pub struct FixtureBox {
    pub name: String,
    pub shelf: String,
    pub marks: Vec<String>,
    /// What it needs, if broken.
    pub needs: Option<FixtureLevel>,
}

#[derive(Clone, Debug, Default)]
pub struct FixtureShelf {
    pub name: String,
    pub marks: Vec<String>,
    pub down: bool,
    /// When it came back up, if it went down.
    pub back_at: Option<i64>,
}

#[derive(Clone, Debug)]
pub struct FixtureOp {
    pub id: u32,
    pub target: String,
    pub repair: String,
    pub step: FixtureLevel,
    pub state: OpState,
    /// When it ended, for retries after a lack of resources.
    pub ended: Option<i64>,
}

#[derive(Clone, Debug, Default)]
pub struct FixtureRoom {
    pub marks: Vec<String>,
    pub shelves: Vec<FixtureShelf>,
    pub boxes: Vec<FixtureBox>,
    pub ops: Vec<FixtureOp>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fixture;

impl Family for Fixture {
    type Level = FixtureLevel;
    type Marks = FixtureMarks;
    type OpId = u32;
    type Op = FixtureLevel;
    type Step = FixtureLevel;
    type OpStatus = ();
    type Facts = FixtureFacts;
    type Snapshot = FixtureRoom;
    type Target = FixtureBox;
    type Settings = ();
    type Index<'a> = &'a FixtureRoom;

    const WORDS: Words = Words {
        target: "box",
        targets: "boxes",
        domain: "shelf",
        domains: "shelves",
        fleet: "room",
        domain_scope: "room",
        scopes: "its shelf or the room",
        op: "step",
        ops: "steps",
        op_vanished: "is gone",
    };

    fn index<'a>(room: &'a FixtureRoom, _: &'a (), _now: i64) -> &'a FixtureRoom {
        room
    }

    fn holders(room: &FixtureRoom) -> Vec<Holder<'_>> {
        let mut out = vec![Holder {
            object: ObjectRef::singleton("room"),
            marks: &room.marks,
            role: Role::Scope {
                key: "",
                halt_key: None,
            },
        }];
        out.extend(room.shelves.iter().map(|s| Holder {
            object: ObjectRef::new("shelf", s.name.clone()),
            marks: &s.marks,
            role: Role::Scope {
                key: &s.name,
                halt_key: Some(""),
            },
        }));
        out
    }

    fn targets(room: &FixtureRoom) -> &[FixtureBox] {
        &room.boxes
    }

    fn name(b: &FixtureBox) -> &str {
        &b.name
    }

    fn marks(b: &FixtureBox) -> &[String] {
        &b.marks
    }

    fn assess<'a>(_: &Self::Index<'a>, b: &'a FixtureBox) -> Assessment<'a, Fixture> {
        Assessment {
            health: match b.needs {
                None => Health::Healthy,
                Some(l) => Health::Broken {
                    problem: "broken".into(),
                    need: Need::Repair(l),
                },
            },
            scopes: ScopeChain::new(&[&b.shelf, ""]),
            halt_key: Some(""),
            domain: b.needs.map(|_| b.shelf.as_str()),
            home: &b.shelf,
            granted: None,
            retries: None,
            facts: FixtureFacts {
                shelf: b.shelf.clone(),
            },
        }
    }

    fn chain(_: &FixtureBox, level: FixtureLevel) -> Option<&'static [FixtureLevel]> {
        FixtureLevel::LADDER
            .iter()
            .position(|l| *l == level)
            .map(|i| &FixtureLevel::LADDER[i..=i])
    }

    fn build_ops<'a>(
        _: &Self::Index<'a>,
        _: &'a FixtureBox,
        steps: &[FixtureLevel],
    ) -> Result<Vec<FixtureLevel>, String> {
        Ok(steps.to_vec())
    }

    fn step_of(op: &FixtureLevel) -> FixtureLevel {
        *op
    }

    fn operations<'a>(room: &Self::Index<'a>) -> Vec<Operation<'a, Fixture>> {
        let room: &'a FixtureRoom = room;
        room.ops
            .iter()
            .map(|o| Operation {
                id: o.id,
                seq: u64::from(o.id),
                state: o.state,
                status: None,
                repair: Some(&o.repair),
                target: Some(&o.target),
                step: Some(o.step),
                ended: o.ended,
                why: None,
            })
            .collect()
    }

    fn down_domains<'a>(room: &Self::Index<'a>) -> Vec<DownDomain<'a>> {
        room.shelves
            .iter()
            .filter(|s| s.down)
            .map(|s| DownDomain {
                name: &s.name,
                scope_key: "",
                scope_name: "room",
                state: "down",
            })
            .collect()
    }

    fn back_domains<'a>(room: &Self::Index<'a>, since: i64) -> Vec<BackDomain<'a>> {
        room.shelves
            .iter()
            .filter(|s| !s.down)
            .filter_map(|s| {
                s.back_at.filter(|at| *at >= since).map(|at| BackDomain {
                    name: &s.name,
                    scope_key: "",
                    scope_name: "room",
                    at,
                })
            })
            .collect()
    }

    fn domain_text(_: &Self::Index<'_>, name: &str) -> Text {
        Text::Owned(name.to_owned())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FixtureFacts {
    pub shelf: String,
}
