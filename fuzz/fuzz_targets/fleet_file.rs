//! Arbitrary bytes as a fleet file: parsing must never panic, and neither must planning a pass
//! over whatever parses, nor showing it (the status table and JSON, every explanation, the lint,
//! the HTML report: the times in a tag anyone may write reach all of them); every tag the plan
//! would write must be a valid autorepair tag.
#![no_main]

use autorepair::ganeti::file::parse_fleet;
use autorepair::config::Limits;
use autorepair::ganeti::{Action, plan};
use autorepair::ganeti::tags::{self, Tag};
use autorepair::report::{self, html};
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
    let limits = Limits::default();
    let p = plan(&snap, 1_800_000_000, &limits, 1);
    let _ = report::status_table(&p);
    let _ = serde_json::to_string(&report::status_json(&p));
    for t in &p.targets {
        let _ = report::explain(&p, t);
    }
    for l in &p.lint {
        let _ = l.to_string();
    }
    let scopes = vec![""; p.targets.len()];
    let _ = html::page(&html::Page {
        plan: &p,
        limits: &limits,
        scopes: &scopes,
        source: "fuzz",
    });
    for action in p.actions() {
        match action {
            Action::AddMarks { marks: tags, .. } => tags.iter().for_each(|t| assert_ours(t, "add")),
            Action::RemoveMarks { .. } | Action::Advance { .. } => {}
            Action::Repair(r) => {
                if let Some(first) = &r.write_first {
                    assert_ours(first, "write_first");
                }
                assert!(!r.ops.is_empty(), "repair {} submits no operation", r.id);
            }
        }
    }
});
