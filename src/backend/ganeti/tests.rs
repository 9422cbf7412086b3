//! Parsing of answers recorded from a real Ganeti 3.0.2 cluster (contrib/testbed/README.md).

use super::*;

const ID: &str = "11111111-2222-3333-4444-555555555555";

fn failover_job() -> Value {
    json!({"id": 12, "status": "success", "summary": ["INSTANCE_FAILOVER(inst4.example.test)"],
        "opstatus": ["success"], "opresult": [null],
        "ops": [{"OP_ID": "OP_INSTANCE_FAILOVER", "instance_name": "inst4.example.test",
            "reason": [["gnt:user", format!("autorepair:{ID}"), 1795307002104257280u64],
                       ["gnt:library:rlib2:instances_name_failover", "", 1795307002104268544u64],
                       ["gnt:opcode:instance_failover", "job=12;index=0", 1795307002106489000u64]]}],
        "received_ts": [1795307002, 106489], "end_ts": [1795307002, 547945]})
}

#[test]
fn jobs_are_read_with_their_repair_id_operation_and_end() {
    let j = job_from_rapi(&failover_job()).unwrap();
    assert_eq!(j.id, 12);
    assert_eq!(j.status, Some(JobStatus::Success));
    assert_eq!(j.repair_id(), Some(ID));
    assert_eq!(j.instance.as_deref(), Some("inst4.example.test"));
    assert_eq!(j.op.map(|o| o.kind()), Some(OpKind::Failover));
    assert_eq!(j.end_ts, Some(1795307002));
}

#[test]
fn an_unknown_job_is_all_nulls_and_errors_keep_their_code() {
    let unknown = json!({"id": null, "status": null, "ops": null, "opresult": null});
    assert!(job_from_rapi(&unknown).is_none());
    let mut v = failover_job();
    v["status"] = json!("error");
    v["opresult"] = json!([[
        "OpPrereqError",
        [
            "Can't compute nodes using iallocator 'hail': Request failed: Can't find any good node: ",
            "insufficient_resources"
        ]
    ]]);
    let j = job_from_rapi(&v).unwrap();
    assert!(j.failed_for_lack_of_resources());
    // A job with a status we do not know is treated as unknown, not as finished.
    v["status"] = json!("frobnicated");
    assert_eq!(job_from_rapi(&v).unwrap().status, None);
}

#[test]
fn operations_are_recognised_from_their_opcodes() {
    let cases = [
        (
            vec![
                "OP_INSTANCE_SHUTDOWN",
                "OP_INSTANCE_REINSTALL",
                "OP_INSTANCE_STARTUP",
            ],
            Some(OpKind::Reinstall),
        ),
        (
            vec!["OP_INSTANCE_RECREATE_DISKS"],
            Some(OpKind::RecreateDisks),
        ),
        (
            vec!["OP_INSTANCE_REPLACE_DISKS"],
            Some(OpKind::ReplaceDisks),
        ),
        (vec!["OP_INSTANCE_MIGRATE"], Some(OpKind::Migrate)),
        (vec!["OP_INSTANCE_FAILOVER"], Some(OpKind::Failover)),
        (vec!["OP_TAGS_SET"], None),
        (vec!["OP_NODE_SET_PARAMS"], None),
    ];
    for (ids, want) in cases {
        let ops: Vec<Value> = ids.iter().map(|i| json!({"OP_ID": i})).collect();
        assert_eq!(op_of(&ops).map(|o| o.kind()), want, "{ids:?}");
    }
}

#[test]
fn tag_jobs_name_their_instance_so_a_queued_tag_write_blocks_a_second_start() {
    let v = json!({"id": 30, "status": "queued", "ops": [{"OP_ID": "OP_TAGS_SET", "kind": "instance",
        "name": "inst1.example.test", "tags": ["x"], "reason": [["gnt:user", format!("autorepair:{ID}"), 1]]}]});
    let j = job_from_rapi(&v).unwrap();
    assert_eq!(
        (j.instance.as_deref(), j.op.is_none(), j.repair_id()),
        (Some("inst1.example.test"), true, Some(ID))
    );
}

#[test]
fn reinstalls_without_a_reason_are_attributed_to_the_preceding_recreate() {
    let job = |id: u64, op: Op, inst: &str, reason: Option<&str>| Job {
        id,
        status: Some(JobStatus::Success),
        instance: Some(inst.into()),
        op: Some(op),
        reason: reason.map(str::to_owned),
        ..Job::default()
    };
    let recreate = || Op::RecreateDisks {
        nodes: vec![],
        iallocator: None,
    };
    let mut jobs = vec![
        job(
            5,
            recreate(),
            "a",
            Some("autorepair:11111111-0000-4000-8000-000000000000"),
        ),
        job(7, recreate(), "a", Some(&format!("autorepair:{ID}"))),
        job(8, Op::Reinstall, "b", None),
        job(9, Op::Reinstall, "a", None),
        job(4, Op::Reinstall, "a", None),
    ];
    attribute_reinstalls(&mut jobs);
    assert_eq!(
        jobs[3].repair_id(),
        Some(ID),
        "the latest earlier recreate of the same instance"
    );
    assert_eq!(jobs[2].repair_id(), None, "another instance");
    assert_eq!(jobs[4].repair_id(), None, "submitted before any recreate");
}

#[test]
fn reasons_and_job_ids() {
    assert_eq!(
        ganeti_reason(&format!("autorepair:{ID}")),
        format!("autorepair:{ID}")
    );
    assert_eq!(
        ganeti_reason("timed suspend is over"),
        "autorepair: timed suspend is over"
    );
    // A human reason is never mistaken for a repair id.
    let j = Job {
        reason: Some(ganeti_reason("timed suspend is over")),
        ..Job::default()
    };
    assert_eq!(j.repair_id(), None);
    assert_eq!(job_id(&json!(23)), Some(23));
    assert_eq!(job_id(&json!("23")), Some(23));
    assert_eq!(job_id(&json!({"id": 1})), None);
}

#[test]
fn the_password_comes_from_a_file_and_never_shows() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pw");
    std::fs::write(&file, "s3cret\n").unwrap();
    assert_eq!(read_password(Some(&file)).unwrap(), "s3cret");
    std::fs::write(&file, "\n").unwrap();
    assert!(
        read_password(Some(&file))
            .unwrap_err()
            .to_string()
            .contains("empty")
    );
    let e = Endpoint {
        url: "https://x:5080".into(),
        user: "u".into(),
        password: "s3cret".into(),
        ca_file: None,
        insecure: false,
        timeout: Duration::from_secs(1),
    };
    assert!(!format!("{e:?}").contains("s3cret"));
}

#[test]
fn plain_http_and_bad_certificate_files_are_refused_with_a_clear_error() {
    let endpoint = |url: &str, ca: Option<std::path::PathBuf>| Endpoint {
        url: url.into(),
        user: "u".into(),
        password: "p".into(),
        ca_file: ca,
        insecure: false,
        timeout: Duration::from_secs(1),
    };
    let e = Rapi::connect(&endpoint("http://x:5080", None))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("https://"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("ca.pem");
    std::fs::write(&bad, "not a certificate").unwrap();
    let e = Rapi::connect(&endpoint("https://x:5080", Some(bad.clone())))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("ca.pem") && e.contains("no certificate"), "{e}");
}
