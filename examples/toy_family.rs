//! autorepair with one family more: the engine's toy family (`autorepair::toy`: boxes on
//! shelves in a room), registered the way docs/architecture.md's recipe says, by its one line
//! in the list of families the face is given. `tests/it/toy_family.rs` drives this program
//! through its command line:
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
