//! Arbitrary bytes as a fleet file: parsing must never panic, and neither must planning a pass
//! over whatever parses; every tag the plan would write must be a valid autorepair tag.
#![no_main]

use autorepair::ganeti::file::parse_fleet;
use autorepair::config::Limits;
use autorepair::ganeti::{Action, plan};
use autorepair::ganeti::tags::{self, Tag};
use libfuzzer_sys::fuzz_target;

fn assert_ours(tag: &str, what: &str) {
    match tags::parse(tag) {
        Ok(Tag::Foreign) => panic!("{what}: plan writes a foreign tag {tag:?}"),
        Ok(_) => {}
        Err(e) => panic!("{what}: plan writes an invalid tag: {e}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(snap) = parse_fleet(&text) else {
        return;
    };
    let p = plan(&snap, 1_800_000_000, &Limits::default(), 1);
    for action in p.actions() {
        match action {
            Action::AddMarks { marks: tags, .. } => tags.iter().for_each(|t| assert_ours(t, "add")),
            Action::RemoveMarks { .. } => {}
            Action::Repair(r) => {
                if let Some(first) = &r.write_first {
                    assert_ours(first, "write_first");
                }
                assert!(!r.ops.is_empty(), "repair {} submits no operation", r.id);
            }
        }
    }
});
