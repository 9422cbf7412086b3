//! Kill the executor after each single backend call in turn; the next passes must end with
//! exactly one job per repair step and a consistent tag set.

use autorepair::config::Limits;
use autorepair::engine::backend::{Backend, Dying};
use autorepair::engine::exec;
use autorepair::engine::{Blocked, State};
use autorepair::ganeti::file::{FleetFile, parse_fleet};
use autorepair::ganeti::plan;
use autorepair::ganeti::snapshot::Snapshot;
use autorepair::ganeti::tags::{self, Tag};
use std::collections::HashMap;

fn demo() -> Snapshot {
    let mut s = parse_fleet(include_str!("../../fixtures/demo.json")).unwrap();
    // Jobs take two passes so that crashes land while repairs are under way too.
    s.simulation.default_passes = Some(2);
    s
}

fn limits() -> Limits {
    Limits {
        max_domains_under_repair: 4,
        ..Limits::default()
    }
}

const T0: i64 = 1_800_000_000;

/// One pass; returns how many write calls it made (or would have made before dying).
fn pass(fleet: &mut FleetFile, now: i64, budget: usize) -> (usize, bool) {
    let snap = fleet.snapshot().unwrap();
    let p = plan(&snap, now, &limits(), now as u64);
    let mut dying = Dying::new(&mut *fleet, Some(budget));
    let report = exec::execute(&p, &mut dying);
    let calls = dying.calls();
    // The cluster keeps working whether or not the watcher died.
    fleet.advance_jobs(now);
    (calls, report.crashed)
}

fn check_consistent(fleet: &Snapshot, context: &str) {
    // At most one job per (repair id, operation): nothing was submitted twice.
    let mut per_step: HashMap<(String, String), Vec<u64>> = HashMap::new();
    for j in &fleet.jobs {
        if let (Some(id), Some(op)) = (j.repair_id(), &j.op) {
            per_step
                .entry((id.to_owned(), op.kind().to_string()))
                .or_default()
                .push(j.id);
        }
    }
    // A step may be retried only after a failed attempt; in this fleet nothing lacks resources.
    for ((id, op), jobs) in &per_step {
        assert_eq!(
            jobs.len(),
            1,
            "{context}: repair {id} step {op} submitted {} times: {jobs:?}",
            jobs.len()
        );
    }
    for inst in &fleet.instances {
        let mut pending_ids = Vec::new();
        for t in &inst.tags {
            match tags::parse(t) {
                Ok(Tag::Pending(p)) => {
                    if !pending_ids.contains(&p.id) {
                        pending_ids.push(p.id);
                    }
                    for j in p.ops.iter::<u64>() {
                        assert!(
                            fleet.jobs.iter().any(|x| x.id == j),
                            "{context}: {} names job {j} that does not exist",
                            inst.name
                        );
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    // The demo carries two deliberately bad tags; the watcher must never write one.
                    assert_eq!(inst.name, "legacy-a4.ams.example", "{context}: {e}");
                }
            }
        }
    }
}

#[test]
fn a_kill_after_any_backend_call_never_duplicates_a_job() {
    // How many write calls do the first passes make when nothing dies?
    let mut clean = FleetFile::in_memory(demo());
    let mut calls_per_pass = Vec::new();
    for k in 0..3 {
        calls_per_pass.push(pass(&mut clean, T0 + k * 300, usize::MAX).0);
    }
    let total: usize = calls_per_pass.iter().sum();
    assert!(
        total > 20,
        "the demo should keep the executor busy: {calls_per_pass:?}"
    );

    // Kill after each call of the first three passes in turn, then let it run normally.
    let mut kills = 0;
    for die_at in 0..total {
        let mut fleet = FleetFile::in_memory(demo());
        let mut left = die_at;
        let mut k = 0;
        loop {
            let (calls, crashed) = pass(&mut fleet, T0 + k * 300, left);
            k += 1;
            if crashed {
                kills += 1;
                break;
            }
            left -= calls;
        }
        check_consistent(
            fleet.fleet(),
            &format!("right after the kill at call {die_at}"),
        );
        for _ in 0..40 {
            pass(&mut fleet, T0 + k * 300, usize::MAX);
            k += 1;
            check_consistent(fleet.fleet(), &format!("kill at call {die_at}, pass {k}"));
        }
        let end = plan(fleet.fleet(), T0 + k * 300, &limits(), 0);
        let mut reference = FleetFile::in_memory(demo());
        for j in 0..k {
            pass(&mut reference, T0 + j * 300, usize::MAX);
        }
        let want = plan(reference.fleet(), T0 + k * 300, &limits(), 0);
        let states = |p: &autorepair::ganeti::Plan| {
            p.targets
                .iter()
                .map(|t| (t.name.clone(), t.state))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            states(&end),
            states(&want),
            "kill at call {die_at}: the end state differs from a run without kill"
        );
        // The demo's unreadable pending tag holds its instance as a repair under way until
        // a person clears it (rule 11): that one is not left hanging by a kill.
        let hanging = end
            .targets
            .iter()
            .filter(|t| {
                t.state == State::Pending && !matches!(t.blocked, Some(Blocked::Unreadable { .. }))
            })
            .count();
        assert_eq!(hanging, 0, "kill at call {die_at}: repairs left hanging");
    }
    assert_eq!(kills, total, "every call was a kill point");
}

/// A signal while a large fleet file is being saved (Ctrl-C, a service stop, a closed terminal)
/// leaves the old file or the new one, and nothing else: the temporary file must not outlive
/// the process. The signal is sent the moment the temporary file exists, named in the directory
/// or anonymous among the process's open files, and the save is long enough (about 30 MB) to be
/// caught in the middle.
#[test]
fn a_signal_during_a_save_leaves_no_stray_file() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let listing = |dir: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    let mut caught_writing = 0;
    for signal in ["INT", "TERM", "HUP"] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_autorepair"))
            .args(["generate", "--instances", "100000", "-o", "fleet.json"])
            .current_dir(dir.path())
            .spawn()
            .unwrap();
        let fds = format!("/proc/{}/fd", child.id());
        let start = Instant::now();
        let writing = loop {
            let named = listing(dir.path()).iter().any(|n| n != "fleet.json");
            // An O_TMPFILE file shows as "DIR/#INODE (deleted)" among the open files.
            let anonymous = std::fs::read_dir(&fds)
                .into_iter()
                .flatten()
                .flatten()
                .any(|fd| {
                    std::fs::read_link(fd.path()).is_ok_and(|t| {
                        t.starts_with(dir.path()) && t.to_string_lossy().contains('#')
                    })
                });
            if named || anonymous || start.elapsed() > Duration::from_secs(60) {
                break named || anonymous;
            }
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        caught_writing += usize::from(writing);
        std::process::Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        child.wait().unwrap();
        let left: Vec<String> = listing(dir.path())
            .into_iter()
            .filter(|n| n != "fleet.json")
            .collect();
        assert!(left.is_empty(), "SIG{signal} left {left:?}");
    }
    assert!(caught_writing > 0, "no signal landed during a save");
}
