//! A room of the toy family, so that the tests of the generic output (the status table, the
//! report, the metrics, the admin verbs) run on a family that shares no word with a real one.

pub(crate) use super::*;

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
                back_at: None,
            },
            ToyShelf {
                name: "s2".into(),
                marks: vec!["suspend".into()],
                down: false,
                back_at: None,
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
        // No steps: nothing is under way.
        ..ToyRoom::default()
    }
}

/// The plan of [`room`] at time 1000.
pub(crate) fn plan() -> crate::engine::Plan<Toy> {
    crate::engine::plan::<Toy>(&room(), &(), 1000, &crate::engine::Limits::default(), 1)
}
