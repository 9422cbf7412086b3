//! What the face needs of a family beyond the engine's [`Family`]: the commands (`run`,
//! `status`, `explain`, `tags lint`, the admin verbs) and the printed forms (`report`,
//! `metrics`, `admin`) are written once over [`FamilyFace`], so a family gets all of them by
//! implementing it and adding its backends as `Source` variants.

use super::settings::Fleet;
use crate::engine::marks::Level;
use crate::engine::{Backend, Family, ObjectRef};
use std::any::TypeId;
use std::fmt;

/// A family as the command line and its output show it.
pub trait FamilyFace: Family {
    /// The status table's columns for [`Family::Facts`], between STATE and NEEDS.
    const FACT_COLUMNS: &'static [&'static str];
    /// The family's name, as the `family` label of its metrics says it: two families writing
    /// textfiles on one host must not export the same series.
    const FAMILY: &'static str;

    /// An object as an admin names it on the command line (`KIND/NAME`; a bare name is a
    /// target), or what is wrong with the text.
    fn parse_object(text: &str) -> Result<ObjectRef, String>;
    /// The planner's settings: the config's limits, and what this backend cannot run.
    fn settings(fleet: &Fleet, backend: &dyn Backend<Self>) -> Self::Settings;
    /// One target's cells under [`FamilyFace::FACT_COLUMNS`].
    fn fact_cells(facts: &Self::Facts) -> Vec<String>;
    /// Where the target lives and runs, as `explain` says it (`on NODE, …`).
    fn facts_line(facts: &Self::Facts) -> String;
    /// The limiter scope a target counts in (its group, zone, rack), by the name the family's
    /// [`DownDomain::scope_name`](crate::engine::family::DownDomain) gives it: the report shows
    /// the targets of each scope beside that scope's limiter verdict. [`NO_SCOPE`] when it has
    /// none.
    fn report_scope<'a>(index: &Self::Index<'a>, target: &'a Self::Target) -> &'a str;
    /// The family's own metrics after a pass (Prometheus text), in its users' names.
    fn extra_metrics(_plan: &crate::engine::Plan<Self>) -> String {
        String::new()
    }
    /// The earliest moment after `now` at which a time threshold falls due (a pass would then
    /// decide something new though nothing changed): a `--loop` daemon wakes then rather than
    /// at its next resync. `None`: nothing is due, or the family does not say.
    fn next_due(_snap: &Self::Snapshot, _settings: &Self::Settings, _now: i64) -> Option<i64> {
        None
    }
}

/// The scope of a target that counts in none (its node or zone is unknown).
pub const NO_SCOPE: &str = "(none)";

/// A level of the fleet's family, carried untyped: the settings stage reads it on the family's
/// ladder, but `Job` is not generic over the family. It points into the ladder, so it prints
/// (and debug-prints) as the family's own level does.
#[derive(Clone, Copy)]
pub struct AnyLevel(&'static dyn Erased);

trait Erased: fmt::Debug + fmt::Display + Send + Sync {
    fn ladder(&self) -> TypeId;
    fn name(&self) -> &'static str;
}

impl<L: Level> Erased for L {
    fn ladder(&self) -> TypeId {
        TypeId::of::<L>()
    }
    fn name(&self) -> &'static str {
        self.as_str()
    }
}

impl AnyLevel {
    /// The level named `name` on `L`'s ladder, or a message listing the ladder.
    pub fn parse<L: Level>(name: &str) -> Result<AnyLevel, String> {
        L::LADDER
            .iter()
            .find(|l| l.as_str() == name)
            .map(|l| AnyLevel(l))
            .ok_or_else(|| format!("unknown repair type {name:?}: use {}", L::names()))
    }

    /// The level on `L`'s ladder; `None` when it was read on another family's.
    pub fn get<L: Level>(self) -> Option<L> {
        (self.0.ladder() == TypeId::of::<L>())
            .then(|| L::from_name(self.0.name()))
            .flatten()
    }
}

impl fmt::Debug for AnyLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.0, f)
    }
}

impl fmt::Display for AnyLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.0, f)
    }
}

impl PartialEq for AnyLevel {
    fn eq(&self, other: &Self) -> bool {
        self.0.ladder() == other.0.ladder() && self.0.name() == other.0.name()
    }
}

impl Eq for AnyLevel {}

/// The engine's toy family (boxes on shelves in a room) with a face, so the tests of the
/// generic output run on a family that shares no word with Ganeti.
#[cfg(test)]
pub(crate) mod toy {
    use super::*;
    use crate::engine::object::parse_object_ref;
    pub(crate) use crate::engine::toy::*;

    impl FamilyFace for Toy {
        const FACT_COLUMNS: &'static [&'static str] = &["SHELF"];
        const FAMILY: &'static str = "toy";

        fn parse_object(text: &str) -> Result<ObjectRef, String> {
            parse_object_ref(text, &["shelf", "box"], &["room"], "box")
        }
        fn settings(_: &Fleet, _: &dyn Backend<Toy>) {}
        fn fact_cells(facts: &ToyFacts) -> Vec<String> {
            vec![facts.shelf.clone()]
        }
        fn facts_line(facts: &ToyFacts) -> String {
            format!("on shelf {}", facts.shelf)
        }
        fn report_scope<'a>(_: &&'a ToyRoom, _: &'a ToyBox) -> &'a str {
            "room"
        }
    }

    pub(crate) const ID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

    /// A room allowing restarts, where shelf s1 fell: b1 needs a restart (allowed), b2 a
    /// replacement (not allowed), b4 has a restart requested; shelf s2 is suspended, and b5
    /// carries a mark nobody can read.
    pub(crate) fn room() -> ToyRoom {
        let a_box = |name: &str, shelf: &str, needs, marks: &[String]| ToyBox {
            name: name.into(),
            shelf: shelf.into(),
            marks: marks.to_vec(),
            needs,
        };
        ToyRoom {
            marks: vec!["restart".into()],
            shelves: vec![
                ToyShelf {
                    name: "s1".into(),
                    marks: vec![],
                    down: true,
                },
                ToyShelf {
                    name: "s2".into(),
                    marks: vec!["suspend".into()],
                    down: false,
                },
            ],
            boxes: vec![
                a_box("b1", "s1", Some(ToyLevel::Restart), &[]),
                a_box("b2", "s1", Some(ToyLevel::Replace), &[]),
                a_box("b3", "s2", None, &["x-owner:bob".into()]),
                a_box(
                    "b4",
                    "s1",
                    Some(ToyLevel::Restart),
                    &[format!("pending:restart:{ID}:100:")],
                ),
                a_box("b5", "s1", None, &["bogus:1:2".into()]),
            ],
            // No operations: the toy's operation type changes with the simulator's needs.
            ..ToyRoom::default()
        }
    }

    /// The plan of [`room`] at time 1000.
    pub(crate) fn plan() -> crate::engine::Plan<Toy> {
        crate::engine::plan::<Toy>(&room(), &(), 1000, &crate::engine::Limits::default(), 1)
    }
}

#[cfg(test)]
mod tests {
    use super::toy::{Toy, ToyLevel};
    use super::*;
    use crate::ganeti::Ganeti;
    use crate::ganeti::tags::RepairType;

    #[test]
    fn a_level_is_read_on_one_ladder_and_shows_as_that_ladders_level() {
        let level = AnyLevel::parse::<<Ganeti as Family>::Level>("failover").unwrap();
        assert_eq!(format!("{level} {level:?}"), "failover Failover");
        assert_eq!(level.get::<RepairType>(), Some(RepairType::Failover));
        assert_eq!(
            level.get::<ToyLevel>(),
            None,
            "not on another family's ladder"
        );
        assert_eq!(level, AnyLevel::parse::<RepairType>("failover").unwrap());
        assert_ne!(level, AnyLevel::parse::<RepairType>("migrate").unwrap());
        let toy = AnyLevel::parse::<<Toy as Family>::Level>("restart").unwrap();
        assert_eq!(toy.get::<ToyLevel>(), Some(ToyLevel::Restart));
        assert_eq!(
            AnyLevel::parse::<ToyLevel>("failover").unwrap_err(),
            "unknown repair type \"failover\": use nudge, restart or replace"
        );
    }
}
