//! The binary as a user runs it.

use assert_cmd::Command;
use autorepair::backend::file::parse_fleet;
use autorepair::snapshot::Snapshot;
use autorepair::tags::PREFIX;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn bin() -> Command {
    let mut c = Command::cargo_bin("autorepair").unwrap();
    c.env_remove("AUTOREPAIR_CONFIG").env_remove("RUST_LOG");
    c
}

fn demo_copy(dir: &Path) -> PathBuf {
    let path = dir.join("demo.json");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo.json"),
        &path,
    )
    .unwrap();
    path
}

fn load(path: &Path) -> Snapshot {
    parse_fleet(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn tags_parse_json_has_the_documented_keys_and_exit_codes() {
    let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let tags = [
        format!("{PREFIX}failover"),
        format!("{PREFIX}suspend:"),
        format!("{PREFIX}pending:migrate:{id}:17:3+4"),
        format!("{PREFIX}result:reinstall:{id}:18:success:"),
        "owner:bob".to_owned(),
    ];
    let out = bin()
        .args(["tags", "parse", "--json"])
        .args(&tags)
        .assert()
        .success();
    let lines: Vec<Value> = String::from_utf8(out.get_output().stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines,
        vec![
            serde_json::json!({"tag": tags[0], "kind": "policy", "repair": "failover"}),
            serde_json::json!({"tag": tags[1], "kind": "suspend", "until": null}),
            serde_json::json!({"tag": tags[2], "kind": "pending", "repair": "migrate", "id": id, "since": 17, "jobs": [3, 4]}),
            serde_json::json!({"tag": tags[3], "kind": "result", "repair": "reinstall", "id": id, "at": 18, "result": "success", "jobs": []}),
            serde_json::json!({"tag": "owner:bob", "kind": "foreign"}),
        ]
    );
    let out = bin()
        .args(["tags", "parse", "--json", &format!("{PREFIX}teleport"), "x"])
        .assert()
        .code(1);
    let first: Value = serde_json::from_slice(
        out.get_output()
            .stdout
            .split(|b| *b == b'\n')
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(first["kind"], "invalid");
    assert!(first["error"].as_str().unwrap().contains("teleport"));
}

#[test]
fn status_json_lists_every_target_with_its_state_and_policy_source() {
    let out = bin()
        .args(["status", "--json", "--cluster", "fixtures/demo.json"])
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let targets = v["targets"].as_array().unwrap();
    assert_eq!(
        targets.len(),
        load(Path::new("fixtures/demo.json")).instances.len()
    );
    for t in targets {
        for key in [
            "name",
            "state",
            "needed_repair",
            "allowed_repair",
            "policy_source",
        ] {
            assert!(t.get(key).is_some(), "{key} missing in {t}");
        }
    }
    let by_name = |n: &str| targets.iter().find(|t| t["name"] == n).unwrap();
    let api = by_name("api-c1.ams.example");
    assert_eq!(api["policy_source"], "instance/api-c1.ams.example");
    let db = by_name("db-c1.ams.example");
    assert_eq!(
        (db["state"].as_str(), db["policy_source"].as_str()),
        (Some("suspended"), Some("group/ams-c"))
    );
    let total: u64 = v["counts"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(total as usize, targets.len());
    // The human table ends with the counts.
    let out = bin()
        .args(["status", "--cluster", "fixtures/demo.json"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.lines().any(|l| l.contains("instances; healthy:")),
        "{text}"
    );
}

#[test]
fn dry_run_changes_nothing_and_explain_gives_the_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let before = std::fs::read(&path).unwrap();
    let out = bin()
        .args(["run", "--dry-run", "--cluster"])
        .arg(&path)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("would: instance/"), "{text}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let out = bin()
        .args(["explain", "log-b1.ams.example", "--cluster"])
        .arg(&path)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("primary node-b1.ams.example is drained: needs failover"),
        "{text}"
    );
    assert!(text.contains("from instance/log-b1.ams.example"), "{text}");
    bin()
        .args(["explain", "nope", "--cluster"])
        .arg(&path)
        .assert()
        .code(2);
}

#[test]
fn repeated_runs_repair_every_repairable_instance_and_touch_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let before = load(&path);
    bin()
        .args(["run", "--passes", "30", "--cluster"])
        .arg(&path)
        .assert()
        .success();
    let after = load(&path);
    let out = bin()
        .args(["status", "--json", "--cluster"])
        .arg(&path)
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let state = |n: &str| {
        v["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == n)
            .unwrap()["state"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    for t in v["targets"].as_array().unwrap() {
        assert_ne!(
            t["state"], "pending",
            "{} still pending after 30 passes",
            t["name"]
        );
    }
    // Repaired, by the request and by policy:
    for n in [
        "db-a1",
        "web-a1",
        "cache-a1",
        "files-a1",
        "shared-a1",
        "db-a2",
        "db-b1",
        "web-b1",
        "stats-b1",
        "files-b1",
        "db-b3",
        "cache-b4",
        "web-b4",
        "api-c1",
    ] {
        assert_eq!(state(&format!("{n}.ams.example")), "healthy", "{n}");
    }
    // Left alone: suspended, parked by a failure, not allowed, failed by the script.
    for (n, s) in [
        ("db-c1", "suspended"),
        ("web-c1", "suspended"),
        ("ops-a3", "failed"),
        ("log-b1", "needs-repair"),
        ("files-b4", "needs-repair"),
        ("db-b4", "failed"),
    ] {
        assert_eq!(state(&format!("{n}.ams.example")), s, "{n}");
    }
    // Nothing else was touched: suspended instances did not move, foreign tags are intact.
    for (b, a) in before.instances.iter().zip(&after.instances) {
        let foreign = |tags: &[String]| {
            tags.iter()
                .filter(|t| !t.starts_with(PREFIX))
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(foreign(&b.tags), foreign(&a.tags), "{}", b.name);
        if b.name.contains("-c") && b.name != "api-c1.ams.example" {
            assert_eq!(
                (&b.pnode, &b.snodes, &b.tags),
                (&a.pnode, &a.snodes, &a.tags),
                "{} is suspended",
                b.name
            );
        }
    }
    assert_eq!(
        before.nodes, after.nodes,
        "node tags and states are never changed"
    );
    // Each repair submitted each of its steps exactly once.
    let mut steps = std::collections::HashSet::new();
    for j in &after.jobs {
        if let (Some(id), Some(op)) = (j.repair_id(), &j.op) {
            assert!(
                steps.insert((id.to_owned(), op.kind())),
                "job {} repeats a step",
                j.id
            );
        }
    }
    // A further pass changes nothing: the fleet has converged.
    bin()
        .args(["run", "--cluster"])
        .arg(&path)
        .assert()
        .success();
    let again = load(&path);
    assert_eq!(again.instances, after.instances);
}

#[test]
fn admin_verbs_write_the_tags() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let tags_of = |name: &str| {
        load(&path)
            .instances
            .into_iter()
            .find(|i| i.name == name)
            .unwrap()
            .tags
    };
    bin()
        .args([
            "allow",
            "reinstall",
            "instance/log-b1.ams.example",
            "--cluster",
        ])
        .arg(&path)
        .assert()
        .success();
    assert!(tags_of("log-b1.ams.example").contains(&format!("{PREFIX}reinstall")));
    assert!(!tags_of("log-b1.ams.example").contains(&format!("{PREFIX}migrate")));
    bin()
        .args([
            "suspend",
            "--for",
            "2h",
            "--now",
            "1000",
            "group/ams-a",
            "--cluster",
        ])
        .arg(&path)
        .assert()
        .success();
    let g = load(&path)
        .groups
        .into_iter()
        .find(|g| g.name == "ams-a")
        .unwrap();
    assert!(
        g.tags.contains(&format!("{PREFIX}suspend:8200")),
        "{:?}",
        g.tags
    );
    bin()
        .args(["resume", "group/ams-a", "--cluster"])
        .arg(&path)
        .assert()
        .success();
    bin()
        .args(["resume", "group/ams-a", "--cluster"])
        .arg(&path)
        .assert()
        .code(2);
    bin()
        .args(["request", "migrate", "web-b2.ams.example", "--cluster"])
        .arg(&path)
        .assert()
        .success();
    assert!(
        tags_of("web-b2.ams.example")
            .iter()
            .any(|t| t.starts_with(&format!("{PREFIX}pending:migrate:")) && t.ends_with(':'))
    );
    bin()
        .args(["clear", "ops-a3.ams.example", "--cluster"])
        .arg(&path)
        .assert()
        .success();
    assert!(
        !tags_of("ops-a3.ams.example")
            .iter()
            .any(|t| t.contains(":failure:"))
    );
    let out = bin()
        .args(["clear", "nope", "--cluster"])
        .arg(&path)
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("instance/nope"));
}

#[test]
fn errors_name_the_culprit() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{ not json").unwrap();
    let out = bin()
        .args(["status", "--cluster"])
        .arg(&bad)
        .assert()
        .code(3);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("bad.json"));
    let out = bin().args(["status"]).assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("--cluster"));
    let conf = dir.path().join("a.toml");
    std::fs::write(&conf, "[limits]\nmax_pendng = 2\n").unwrap();
    let out = bin()
        .args(["status", "--cluster", "fixtures/demo.json", "--config"])
        .arg(&conf)
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("max_pendng"));
}

#[test]
fn a_second_run_exits_cleanly_while_the_first_holds_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let before = std::fs::read(&path).unwrap();
    let lock = autorepair::lock::acquire(&dir.path().join("demo.json.lock")).unwrap();
    let out = bin().args(["run", "--cluster"]).arg(&path).assert().code(4);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("lock"));
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the locked-out run changed nothing"
    );
    drop(lock);
    bin()
        .args(["run", "--cluster"])
        .arg(&path)
        .assert()
        .success();
}
