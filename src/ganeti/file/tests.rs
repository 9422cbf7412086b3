use super::*;
use crate::ganeti::snapshot::SimScript;
use crate::ganeti::testkit::Fleet;

/// A dead n1 carrying a drbd (secondary n2), a diskless and a plain instance, in a group the
/// fleet does not list.
fn fleet() -> Snapshot {
    Fleet::new()
        .node("n1", "g")
        .offline()
        .node("n2", "g")
        .node("n3", "g")
        .instance("d")
        .primary("n1")
        .secondary("n2")
        .template("drbd")
        .instance("s")
        .primary("n1")
        .instance("p")
        .primary("n1")
        .template("plain")
        .build()
}

fn run(f: &mut FleetFile, inst: &str, ops: &[Op]) -> Vec<u64> {
    let mut after = None;
    let mut ids = vec![];
    for op in ops {
        let id = f.submit(inst, op, "autorepair:x", after.as_ref()).unwrap();
        after = Some(id);
        ids.push(id);
    }
    ids
}

fn status(f: &FleetFile, id: u64) -> Option<JobStatus> {
    f.fleet()
        .jobs
        .iter()
        .find(|j| j.id == id)
        .and_then(|j| j.status)
}

fn inst<'a>(f: &'a FleetFile, name: &str) -> &'a Instance {
    f.fleet().instances.iter().find(|i| i.name == name).unwrap()
}

#[test]
fn jobs_apply_their_effects_on_a_later_pass() {
    let mut f = FleetFile::in_memory(fleet());
    let d = run(
        &mut f,
        "d",
        &[
            Op::Failover {
                target_node: None,
                iallocator: None,
            },
            Op::ReplaceDisks {
                remote_node: None,
                iallocator: Some("hail".into()),
            },
        ],
    );
    let s = run(
        &mut f,
        "s",
        &[Op::Failover {
            target_node: None,
            iallocator: Some("hail".into()),
        }],
    );
    let p = run(
        &mut f,
        "p",
        &[
            Op::RecreateDisks {
                nodes: vec![],
                iallocator: Some("hail".into()),
            },
            Op::Reinstall,
        ],
    );
    assert_eq!(status(&f, d[0]), Some(JobStatus::Queued));
    f.advance_jobs(100);
    for id in d.iter().chain(&s).chain(&p) {
        assert_eq!(status(&f, *id), Some(JobStatus::Success), "job {id}");
    }
    let d_now = inst(&f, "d");
    assert_eq!(
        (d_now.pnode.as_str(), d_now.snodes.as_slice()),
        ("n2", &["n3".to_string()][..])
    );
    // d moved onto n2 first, so n3 is now the least loaded usable node.
    assert_eq!(inst(&f, "s").pnode, "n3");
    assert_ne!(inst(&f, "p").pnode, "n1");
}

#[test]
fn impossible_operations_fail_like_ganeti() {
    let mut f = FleetFile::in_memory(fleet());
    // Reinstall first: the shutdown fails on the offline primary; the dependent job fails too.
    let ids = run(
        &mut f,
        "p",
        &[
            Op::Reinstall,
            Op::Migrate {
                target_node: None,
                iallocator: None,
                allow_failover: false,
            },
        ],
    );
    f.advance_jobs(5);
    assert_eq!(status(&f, ids[0]), Some(JobStatus::Error));
    assert_eq!(status(&f, ids[1]), Some(JobStatus::Error));
    assert_eq!(inst(&f, "p").pnode, "n1");
    let job = f.fleet().jobs.iter().find(|j| j.id == ids[0]).unwrap();
    assert_eq!(job.end_ts, Some(5));
    assert!(job.error().unwrap().0.contains("offline"));
}

#[test]
fn scripted_outcomes_and_durations() {
    let mut snap = fleet();
    snap.simulation.instances.insert(
        "s".into(),
        SimScript {
            outcomes: vec![
                SimOutcome::InsufficientResources,
                SimOutcome::Vanish,
                SimOutcome::Fail,
            ],
            passes: Some(2),
            other: Default::default(),
        },
    );
    let mut f = FleetFile::in_memory(snap);
    let op = Op::Failover {
        target_node: None,
        iallocator: Some("hail".into()),
    };
    let a = run(&mut f, "s", std::slice::from_ref(&op))[0];
    f.advance_jobs(1);
    assert_eq!(status(&f, a), Some(JobStatus::Running), "takes two passes");
    f.advance_jobs(2);
    assert!(
        f.fleet()
            .jobs
            .iter()
            .find(|j| j.id == a)
            .unwrap()
            .failed_for_lack_of_resources()
    );
    let b = run(&mut f, "s", std::slice::from_ref(&op))[0];
    f.advance_jobs(3);
    f.advance_jobs(4);
    assert_eq!(status(&f, b), None, "vanished from the queue");
    let c = run(&mut f, "s", std::slice::from_ref(&op))[0];
    f.advance_jobs(5);
    f.advance_jobs(6);
    assert_eq!(status(&f, c), Some(JobStatus::Error));
    assert_eq!(inst(&f, "s").pnode, "n1", "nothing moved");
}

#[test]
fn tags_on_unknown_objects_are_refused() {
    let mut f = FleetFile::in_memory(fleet());
    let e = f
        .add_marks(&crate::ganeti::instance("nope"), &["x".into()], "r")
        .unwrap_err();
    assert!(e.to_string().contains("instance/nope"));
    let e = f.submit("nope", &Op::Reinstall, "r", None).unwrap_err();
    assert!(e.to_string().contains("nope"));
}

#[test]
fn saving_is_atomic_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.json");
    std::fs::write(&path, serde_json::to_string(&fleet()).unwrap()).unwrap();
    let mut f = FleetFile::open(&path).unwrap();
    f.add_marks(&crate::ganeti::cluster(), &["a:b".into()], "r")
        .unwrap();
    f.save().unwrap();
    let again = FleetFile::open(&path).unwrap();
    assert_eq!(again.fleet(), f.fleet());
    // No temporary files are left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    std::fs::write(&path, "{\"cluster\": 3}").unwrap();
    let e = FleetFile::open(&path).err().unwrap().to_string();
    assert!(e.contains("fleet.json") && e.contains("line 1"), "{e}");
}

/// The job simulator's placement is kept up to date as jobs move instances; it must choose the
/// nodes the pool built afresh from the fleet would, before and after moves (it replaced that
/// pool, rebuilt from every instance for every job).
#[test]
fn placement_picks_what_a_fresh_pool_picks_as_instances_move() {
    use crate::ganeti::generate::{Spec, generate};
    use crate::ganeti::health::NodePool;
    let mut fleet = generate(&Spec::new(3000, 7));
    let mut placement = Placement::new(&fleet);
    for round in 0..3 {
        let pool = NodePool::new(&fleet.nodes, &fleet.instances);
        for inst in fleet.instances.iter().step_by(7) {
            let exclude: Vec<&str> = std::iter::once(inst.pnode.as_str())
                .chain(inst.snodes.iter().map(String::as_str))
                .collect();
            for count in [1, 2] {
                assert_eq!(
                    placement.pick(&inst.pnode, &exclude, count),
                    pool.pick(&inst.pnode, &exclude, count),
                    "round {round}, {}",
                    inst.name
                );
            }
        }
        // Move every 5th instance onto the node the pool would pick, as a failover does.
        for i in (round..fleet.instances.len()).step_by(5) {
            let inst = &fleet.instances[i];
            let Some(to) = placement.pick(&inst.pnode, &[inst.pnode.as_str()], 1).pop() else {
                continue;
            };
            placement.moved(&inst.pnode, &to);
            fleet.instances[i].pnode = to;
        }
    }
}

/// A fleet file replaced or edited by someone else after it was read is not overwritten with
/// the stale fleet plus this process's changes: the save fails, saying so, and leaves theirs.
/// A save with nothing of ours to write leaves theirs too, without an error.
#[test]
fn a_fleet_file_changed_since_it_was_read_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.json");
    let ours = serde_json::to_string_pretty(&fleet()).unwrap() + "\n";
    for replace in [true, false] {
        std::fs::write(&path, &ours).unwrap();
        let mut f = FleetFile::open(&path).unwrap();
        let mut unchanged = FleetFile::open(&path).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let theirs = ours.replace("\"tags\": []", "\"tags\": [\"theirs\"]");
        if replace {
            std::fs::write(dir.path().join("new.json"), &theirs).unwrap();
            std::fs::rename(dir.path().join("new.json"), &path).unwrap();
        } else {
            std::fs::write(&path, &theirs).unwrap();
        }
        f.add_marks(&crate::ganeti::cluster(), &["a:b".into()], "r")
            .unwrap();
        let e = f.save().unwrap_err().to_string();
        assert!(e.contains("changed while this pass ran"), "{e}");
        unchanged.save().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), theirs);
    }
}

#[test]
fn job_ids_never_wrap_around() {
    /// Ids in the file, jobs submitted, the ids they get, the submission that is refused.
    type Case<'a> = (&'a [u64], usize, &'a [u64], Option<usize>);
    let cases: &[Case] = &[
        (&[], 2, &[1, 2], None),
        (&[u64::MAX - 2], 2, &[u64::MAX - 1, u64::MAX], None),
        (&[u64::MAX - 1], 2, &[u64::MAX], Some(1)),
        (&[u64::MAX], 2, &[], Some(0)),
        (&[7, u64::MAX, 3], 1, &[], Some(0)),
    ];
    for (have, submit, want, refused) in cases {
        let mut snap = fleet();
        snap.jobs = have
            .iter()
            .map(|&id| crate::ganeti::testkit::job(id, JobStatus::Success))
            .collect();
        let mut f = FleetFile::in_memory(snap);
        let mut got = vec![];
        let mut failed = None;
        for n in 0..*submit {
            match f.submit("d", &Op::Reinstall, "autorepair:x", None) {
                Ok(id) => got.push(id),
                Err(e) => {
                    let text = e.to_string();
                    assert!(
                        text.contains("(fleet in memory)") && text.contains("largest id"),
                        "{have:?}: {text}"
                    );
                    failed = Some(n);
                    break;
                }
            }
        }
        assert_eq!(&got, want, "{have:?}");
        assert_eq!(failed, *refused, "{have:?}");
        let mut ids: Vec<u64> = f.fleet().jobs.iter().map(|j| j.id).collect();
        let all = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), all, "{have:?}: an id given twice");
    }
}

/// Every object of the file, at every level, with a key the model does not know.
const WITH_UNKNOWN_KEYS: &str = r#"{
  "_comment": "kept",
  "cluster": {"name": "c", "architecture": ["x86_64", "x86_64"], "tags": []},
  "groups": [{"name": "g", "uuid": "g", "alloc_policy": "preferred"}],
  "nodes": [
    {"name": "n1", "group.uuid": "g", "ctotal": 8, "offline": true},
    {"name": "n2", "group.uuid": "g", "ctotal": 16}
  ],
  "instances": [{"name": "s", "pnode": "n1", "disk_template": "sharedfile",
                 "beparams": {"memory": 512}, "tags": []}],
  "jobs": [{"id": 4, "status": "success", "received_ts": [1, 2],
            "op": {"op": "move", "target_node": "n2", "ignore_consistency": true}}],
  "simulation": {"note": "s", "instances": {"s": {"outcomes": [], "why": "w"}}}
}"#;

#[test]
fn keys_the_model_does_not_know_survive_a_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.json");
    std::fs::write(&path, WITH_UNKNOWN_KEYS).unwrap();
    let mut f = FleetFile::open(&path).unwrap();
    let id = f
        .submit("s", &Op::Reinstall, "autorepair:x", Some(&4))
        .unwrap();
    f.add_marks(&crate::ganeti::instance("s"), &["a".into()], "r")
        .unwrap();
    f.finish_pass(100).unwrap();
    let got: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let want: serde_json::Value = serde_json::from_str(WITH_UNKNOWN_KEYS).unwrap();
    for pointer in [
        "/_comment",
        "/cluster/architecture",
        "/groups/0/alloc_policy",
        "/nodes/0/ctotal",
        "/nodes/1/ctotal",
        "/instances/0/beparams",
        "/jobs/0/received_ts",
        "/jobs/0/op/ignore_consistency",
        "/simulation/note",
        "/simulation/instances/s/why",
    ] {
        assert_eq!(
            got.pointer(pointer),
            want.pointer(pointer),
            "{pointer} in {got:#}"
        );
    }
    // What the pass did is there too, and no key the model writes is doubled or left stale.
    assert_eq!(got["jobs"][1]["id"], id);
    assert_eq!(got["jobs"][0]["op"]["target_node"], "n2");
    assert_eq!(got["instances"][0]["tags"], serde_json::json!(["a"]));
}
