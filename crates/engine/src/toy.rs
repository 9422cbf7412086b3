//! A toy family for the engine's own tests: boxes on shelves in one room. It uses no word of a
//! real family, so the engine is tested as the engine, and shows the smallest plug-in.
//!
//! Marks are plain text without a prefix (`restart`, `suspend:5`, `pending:…`); a mark that
//! starts with `x-` is foreign. Operation ids are numbers joined by `+`.

use super::family::{
    Assessment, BackDomain, DownDomain, Family, Health, Holder, Need, OpState, Operation, Role,
    ScopeChain, Words,
};
use super::marks::{Codec, ErrorCode, Governs, Level, Mark, MarkError, OpList, Outcome, Pending};
use super::marks::{RenderError, RepairResult, is_uuid};
use super::object::ObjectRef;
use super::text::Text;
use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToyLevel {
    Nudge,
    Restart,
    Replace,
}

impl Level for ToyLevel {
    const LADDER: &'static [Self] = &[ToyLevel::Nudge, ToyLevel::Restart, ToyLevel::Replace];
    fn as_str(self) -> &'static str {
        match self {
            ToyLevel::Nudge => "nudge",
            ToyLevel::Restart => "restart",
            ToyLevel::Replace => "replace",
        }
    }
}

impl fmt::Display for ToyLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

pub struct ToyMarks;

fn bad(code: ErrorCode, mark: &str, message: &str) -> MarkError {
    let governs = match mark.split(':').next().unwrap_or_default() {
        "suspend" => Governs::Suspend { all: false },
        "suspend-all" => Governs::Suspend { all: true },
        "pending" => Governs::Pending,
        "result" => Governs::Result,
        _ => Governs::Policy,
    };
    MarkError::new("mark", mark, code, message).governing(governs)
}

impl Codec for ToyMarks {
    type Level = ToyLevel;
    type OpId = u32;
    const NOUN: &'static str = "mark";

    fn parse<'a>(text: &'a str) -> Result<Mark<'a, ToyLevel>, MarkError> {
        if text.starts_with("x-") {
            return Ok(Mark::Foreign);
        }
        let fields: Vec<&str> = text.split(':').collect();
        let level = |s: &str| {
            ToyLevel::from_name(s).ok_or_else(|| bad(ErrorCode::UnknownRepair, text, "level"))
        };
        let epoch = |s: &str| {
            s.parse::<i64>()
                .ok()
                .filter(|t| *t >= 0)
                .ok_or_else(|| bad(ErrorCode::BadEpoch, text, "epoch"))
        };
        let uuid = |s: &'a str| {
            if is_uuid(s) {
                Ok(s)
            } else {
                Err(bad(ErrorCode::BadId, text, "id"))
            }
        };
        let ops = |s: &'_ str| {
            if s.split('+')
                .filter(|o| !o.is_empty())
                .all(|o| o.parse::<u32>().is_ok())
            {
                Ok(())
            } else {
                Err(bad(ErrorCode::BadJob, text, "ops"))
            }
        };
        match fields.as_slice() {
            [kind @ ("suspend" | "suspend-all")] | [kind @ ("suspend" | "suspend-all"), ""] => {
                Ok(Mark::Suspend {
                    until: None,
                    all: *kind == "suspend-all",
                })
            }
            [kind @ ("suspend" | "suspend-all"), t] => Ok(Mark::Suspend {
                until: Some(epoch(t)?),
                all: *kind == "suspend-all",
            }),
            ["pending", l, i, s, o] => {
                ops(o)?;
                Ok(Mark::Pending(Pending {
                    repair: level(l)?,
                    id: uuid(i)?,
                    since: epoch(s)?,
                    ops: OpList::new_unchecked(o, '+'),
                }))
            }
            ["result", l, i, a, r, o] => {
                ops(o)?;
                Ok(Mark::Result(Outcome {
                    repair: level(l)?,
                    id: uuid(i)?,
                    at: epoch(a)?,
                    result: RepairResult::from_name(r)
                        .ok_or_else(|| bad(ErrorCode::UnknownResult, text, "result"))?,
                    ops: OpList::new_unchecked(o, '+'),
                }))
            }
            [l] => {
                Ok(Mark::Policy(level(l).map_err(|_| {
                    bad(ErrorCode::UnknownKind, text, "unknown kind")
                })?))
            }
            _ => Err(bad(ErrorCode::FieldCount, text, "field count")),
        }
    }

    fn render_policy(level: ToyLevel) -> String {
        level.to_string()
    }

    fn render_suspend(until: Option<i64>, all: bool) -> Result<String, RenderError> {
        let kind = if all { "suspend-all" } else { "suspend" };
        Ok(until.map_or(kind.into(), |t| format!("{kind}:{t}")))
    }

    fn render_pending(
        l: ToyLevel,
        id: &str,
        since: i64,
        ops: &[u32],
    ) -> Result<String, RenderError> {
        Ok(format!("pending:{l}:{id}:{since}:{}", join(ops)))
    }

    fn render_result(
        l: ToyLevel,
        id: &str,
        at: i64,
        result: RepairResult,
        ops: &[u32],
    ) -> Result<String, RenderError> {
        Ok(format!("result:{l}:{id}:{at}:{result}:{}", join(ops)))
    }

    fn is_repair_id(id: &str) -> bool {
        is_uuid(id)
    }
}

fn join(ops: &[u32]) -> String {
    ops.iter().map(u32::to_string).collect::<Vec<_>>().join("+")
}

/// A box: the toy target.
#[derive(Clone, Debug, Default)]
pub struct ToyBox {
    pub name: String,
    pub shelf: String,
    pub marks: Vec<String>,
    /// What it needs, if broken.
    pub needs: Option<ToyLevel>,
}

#[derive(Clone, Debug, Default)]
pub struct ToyShelf {
    pub name: String,
    pub marks: Vec<String>,
    pub down: bool,
    /// When it came back up, if it went down.
    pub back_at: Option<i64>,
}

#[derive(Clone, Debug)]
pub struct ToyOp {
    pub id: u32,
    pub target: String,
    pub repair: String,
    pub step: ToyLevel,
    pub state: OpState,
    /// When it ended, for retries after a lack of resources.
    pub ended: Option<i64>,
}

#[derive(Clone, Debug, Default)]
pub struct ToyRoom {
    pub marks: Vec<String>,
    pub shelves: Vec<ToyShelf>,
    pub boxes: Vec<ToyBox>,
    pub ops: Vec<ToyOp>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Toy;

impl Family for Toy {
    type Level = ToyLevel;
    type Marks = ToyMarks;
    type OpId = u32;
    type Op = ToyLevel;
    type Step = ToyLevel;
    type OpStatus = ();
    type Facts = ToyFacts;
    type Snapshot = ToyRoom;
    type Target = ToyBox;
    type Settings = ();
    type Index<'a> = &'a ToyRoom;

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

    fn index<'a>(room: &'a ToyRoom, _: &'a (), _now: i64) -> &'a ToyRoom {
        room
    }

    fn holders(room: &ToyRoom) -> Vec<Holder<'_>> {
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

    fn targets(room: &ToyRoom) -> &[ToyBox] {
        &room.boxes
    }

    fn name(b: &ToyBox) -> &str {
        &b.name
    }

    fn marks(b: &ToyBox) -> &[String] {
        &b.marks
    }

    fn assess<'a>(_: &Self::Index<'a>, b: &'a ToyBox) -> Assessment<'a, Toy> {
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
            facts: ToyFacts {
                shelf: b.shelf.clone(),
            },
        }
    }

    fn chain(_: &ToyBox, level: ToyLevel) -> Option<&'static [ToyLevel]> {
        ToyLevel::LADDER
            .iter()
            .position(|l| *l == level)
            .map(|i| &ToyLevel::LADDER[i..=i])
    }

    fn build_ops<'a>(
        _: &Self::Index<'a>,
        _: &'a ToyBox,
        steps: &[ToyLevel],
    ) -> Result<Vec<ToyLevel>, String> {
        Ok(steps.to_vec())
    }

    fn step_of(op: &ToyLevel) -> ToyLevel {
        *op
    }

    fn operations<'a>(room: &Self::Index<'a>) -> Vec<Operation<'a, Toy>> {
        let room: &'a ToyRoom = room;
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
pub struct ToyFacts {
    pub shelf: String,
}
