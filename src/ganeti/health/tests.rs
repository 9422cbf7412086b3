use super::*;
use GanetiLevel::*;

fn node(name: &str, state: &str) -> Node {
    Node {
        name: name.into(),
        offline: state == "offline",
        drained: state == "drained",
        vm_capable: state != "not-vm-capable",
        group_uuid: "g1".into(),
        tags: vec![],
        mtime: None,
        other: Default::default(),
    }
}

fn inst(template: &str) -> Instance {
    Instance {
        name: "i1".into(),
        pnode: "p".into(),
        snodes: if template == "drbd" {
            vec!["s".into()]
        } else {
            vec![]
        },
        disk_template: template.into(),
        admin_state: "up".into(),
        ..Default::default()
    }
}

/// What `assess` decides, as a short word: a repair type, "person" or "healthy".
fn decide(template: &str, p: &str, s: Option<&str>) -> String {
    let pn = node("p", p);
    let sn = s.map(|s| node("s", s));
    match assess(&inst(template), Ok(&pn), sn.as_ref().map(Ok)) {
        Health::Healthy => "healthy".into(),
        Health::Broken {
            need: Need::Repair(t),
            ..
        } => t.to_string(),
        Health::Broken {
            need: Need::Person(_),
            ..
        } => "person".into(),
    }
}

#[test]
fn decision_table_every_template_and_row() {
    let shared = [
        "diskless",
        "sharedfile",
        "rbd",
        "ext",
        "gluster",
        "blockdev",
    ];
    let mut cases: Vec<(&str, &str, Option<&str>, String)> = vec![
        // drbd: primary, secondary
        ("drbd", "usable", Some("usable"), "healthy".into()),
        ("drbd", "offline", Some("usable"), Failover.to_string()),
        ("drbd", "drained", Some("usable"), Migrate.to_string()),
        (
            "drbd",
            "not-vm-capable",
            Some("usable"),
            Migrate.to_string(),
        ),
        ("drbd", "usable", Some("offline"), FixStorage.to_string()),
        ("drbd", "usable", Some("drained"), FixStorage.to_string()),
        (
            "drbd",
            "usable",
            Some("not-vm-capable"),
            FixStorage.to_string(),
        ),
        ("drbd", "offline", Some("offline"), Reinstall.to_string()),
        // Both drained: first give the mirror a usable secondary, then a later pass migrates.
        ("drbd", "drained", Some("drained"), FixStorage.to_string()),
        ("drbd", "drained", Some("offline"), FixStorage.to_string()),
        // The only intact copy is on a drained node Ganeti will not fail over to.
        ("drbd", "offline", Some("drained"), "person".into()),
        ("drbd", "usable", None, "person".into()),
    ];
    for t in shared {
        cases.push((t, "usable", None, "healthy".into()));
        cases.push((t, "offline", None, Failover.to_string()));
        cases.push((t, "drained", None, Migrate.to_string()));
        cases.push((t, "not-vm-capable", None, Migrate.to_string()));
    }
    for t in ["plain", "file"] {
        cases.push((t, "usable", None, "healthy".into()));
        cases.push((t, "offline", None, Reinstall.to_string()));
        cases.push((t, "drained", None, Failover.to_string()));
    }
    cases.push(("floppy", "offline", None, "person".into()));
    for (template, p, s, want) in cases {
        assert_eq!(
            decide(template, p, s),
            want,
            "{template} primary {p} secondary {s:?}"
        );
    }
}

#[test]
fn a_node_missing_from_the_snapshot_needs_a_person() {
    let s = node("s", "usable");
    let h = assess(&inst("drbd"), Err("ghost"), Some(Ok(&s)));
    assert!(
        matches!(h, Health::Broken { need: Need::Person(_), ref problem } if problem.contains("ghost"))
    );
    let p = node("p", "usable");
    let h = assess(&inst("drbd"), Ok(&p), Some(Err("ghost2")));
    assert!(
        matches!(h, Health::Broken { need: Need::Person(_), ref problem } if problem.contains("secondary"))
    );
}

#[test]
fn every_repair_the_table_can_ask_for_has_a_chain() {
    for template in [
        "drbd",
        "diskless",
        "sharedfile",
        "rbd",
        "ext",
        "gluster",
        "blockdev",
        "plain",
        "file",
    ] {
        let storage = storage_of(template).unwrap();
        for p in ["usable", "offline", "drained"] {
            for s in ["usable", "offline", "drained"] {
                let sn = node("s", s);
                let pn = node("p", p);
                let second = (storage == Storage::Mirrored).then_some(Ok(&sn));
                if let Some(t) = assess(&inst(template), Ok(&pn), second).needed_repair() {
                    assert!(
                        chain(storage, t).is_some(),
                        "{template} needs {t} but has no chain"
                    );
                }
            }
        }
    }
    assert_eq!(
        chain(Storage::Mirrored, Failover),
        Some(&[OpKind::Failover, OpKind::ReplaceDisks][..])
    );
    assert_eq!(
        chain(Storage::Local, Reinstall),
        Some(&[OpKind::RecreateDisks, OpKind::Reinstall][..])
    );
    assert_eq!(chain(Storage::Shared, Reinstall), None);
}

struct Picker(Vec<&'static str>);
impl NodePicker for Picker {
    fn pick(&self, _group_of: &str, exclude: &[&str], count: usize) -> Vec<String> {
        self.0
            .iter()
            .filter(|n| !exclude.contains(n))
            .take(count)
            .map(|n| n.to_string())
            .collect()
    }
}

#[test]
fn operations_use_the_iallocator_or_picked_nodes() {
    let picker = Picker(vec!["p", "s", "n3", "n4"]);
    let drbd = inst("drbd");
    let shared = inst("sharedfile");
    let file = inst("file");
    let mut down = inst("diskless");
    down.admin_state = "down".into();
    type Case<'a> = (OpKind, &'a Instance, Option<&'a str>, Result<Op, ()>);
    let cases: Vec<Case> = vec![
        (
            OpKind::Failover,
            &drbd,
            Some("hail"),
            Ok(Op::Failover {
                target_node: None,
                iallocator: None,
            }),
        ),
        (
            OpKind::Failover,
            &shared,
            Some("hail"),
            Ok(Op::Failover {
                target_node: None,
                iallocator: Some("hail".into()),
            }),
        ),
        (
            OpKind::Failover,
            &shared,
            None,
            Ok(Op::Failover {
                target_node: Some("s".into()),
                iallocator: None,
            }),
        ),
        (
            OpKind::Migrate,
            &down,
            None,
            Ok(Op::Migrate {
                target_node: Some("s".into()),
                iallocator: None,
                allow_failover: true,
            }),
        ),
        (
            OpKind::ReplaceDisks,
            &drbd,
            None,
            Ok(Op::ReplaceDisks {
                remote_node: Some("n3".into()),
                iallocator: None,
            }),
        ),
        (
            OpKind::RecreateDisks,
            &drbd,
            None,
            Ok(Op::RecreateDisks {
                nodes: vec!["n3".into(), "n4".into()],
                iallocator: None,
            }),
        ),
        (
            OpKind::RecreateDisks,
            &drbd,
            Some("hail"),
            Ok(Op::RecreateDisks {
                nodes: vec![],
                iallocator: Some("hail".into()),
            }),
        ),
        (
            OpKind::Move,
            &file,
            Some("hail"),
            Ok(Op::Move {
                target_node: "s".into(),
            }),
        ),
        (OpKind::Reinstall, &drbd, None, Ok(Op::Reinstall)),
    ];
    for (kind, instance, ialloc, want) in cases {
        let storage = storage_of(&instance.disk_template).unwrap();
        let got = build_op(kind, instance, storage, ialloc, &picker).map_err(|_| ());
        assert_eq!(got, want, "{kind} of {}", instance.disk_template);
    }
    let empty = Picker(vec!["p"]);
    let err = build_op(OpKind::Move, &inst("plain"), Storage::Local, None, &empty).unwrap_err();
    assert_eq!((err.needed, err.found), (1, 0), "{err}");
    assert!(err.to_string().contains("usable node"), "{err}");
}
