//! autorepair with one family more: the toy family (`autorepair::toy`, whose folder `src/toy/`
//! holds both its sides: boxes on shelves in a room), registered as a real family is, by its
//! one `Entry` line in the list of families the face is given (docs/architecture.md, "Adding
//! a family"). A real family's line is in `autorepair::FAMILIES`; this program is that list and
//! the toy's line. `tests/it/toy_family.rs` drives it through its command line:
//!
//! ```text
//! cargo run --example toy_family -- --toy-room ROOM.json status
//! ```

use autorepair::face::{Entry, Registered};
use std::process::ExitCode;

fn main() -> ExitCode {
    let families: Vec<&dyn Registered> = autorepair::FAMILIES
        .iter()
        .copied()
        .chain([&Entry::<autorepair::toy::Toy>::NEW as &dyn Registered])
        .collect();
    autorepair::face::main(&families)
}
