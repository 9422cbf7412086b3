//! The field scenarios of the Ganeti limiter, end to end on a fleet file through the binary:
//! one dead node is repaired at once, a mass failure writes nothing.

use assert_cmd::Command;
use autorepair::ganeti::snapshot::Snapshot;
use autorepair::ganeti::testkit::Fleet;
use serde_json::Value;
use std::path::Path;

const T0: i64 = 1_800_000_000;

/// `per_node` drbd instances on each of node1..node4 (secondary: the next node), cluster
/// policy `failover`, and the nodes in `down` offline.
fn fleet(per_node: usize, down: &[&str]) -> Snapshot {
    let names: Vec<String> = (1..=4).map(|k| format!("node{k}")).collect();
    let mut fleet = Fleet::new()
        .autorepair(["failover"])
        .group("default")
        .uuid("g");
    for n in &names {
        fleet = fleet.node(n, "default").tags(["owner:ops"]);
        if down.contains(&n.as_str()) {
            fleet = fleet.offline();
        }
    }
    for (k, n) in names.iter().enumerate() {
        let secondary = &names[(k + 1) % names.len()];
        for i in 0..per_node {
            fleet = fleet
                .instance(format!("inst{i:02}.{n}"))
                .primary(n)
                .secondary(secondary)
                .template("drbd");
        }
    }
    fleet.build()
}

fn write(dir: &Path, snap: &Snapshot) -> std::path::PathBuf {
    let path = dir.join("fleet.json");
    std::fs::write(&path, serde_json::to_vec_pretty(snap).unwrap()).unwrap();
    path
}

fn read(path: &Path) -> Snapshot {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn bin() -> Command {
    let mut c = Command::cargo_bin("autorepair").unwrap();
    // No config file of the machine's: the shipped defaults.
    c.args(["--config", "/dev/null"]);
    c
}

fn status(path: &Path, now: i64) -> Value {
    let out = bin()
        .args(["status", "--json", "--now", &now.to_string(), "--cluster"])
        .arg(path)
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

fn pass(path: &Path, now: i64) {
    bin()
        .args(["run", "--now", &now.to_string(), "--cluster"])
        .arg(path)
        .assert()
        .success();
}

fn states_of(v: &Value, node: &str) -> Vec<String> {
    v["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"].as_str().unwrap().ends_with(node))
        .map(|t| t["state"].as_str().unwrap().to_owned())
        .collect()
}

/// node2 is the primary of 40 drbd instances and the secondary of node1's 40: all 80 repairs
/// (40 failovers, 40 new secondaries) start in the first pass with the default limits.
#[test]
fn one_dead_node_with_40_instances_is_repaired_within_three_passes() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), &fleet(40, &["node2"]));
    pass(&path, T0);
    let after_one = status(&path, T0 + 300);
    assert_eq!(
        states_of(&after_one, ".node2"),
        vec!["pending"; 40],
        "every instance of the dead node is pending after the first pass"
    );
    assert_eq!(
        states_of(&after_one, ".node1"),
        vec!["pending"; 40],
        "every instance whose secondary died is pending after the first pass"
    );
    let mut passes = 1;
    while passes < 3
        && states_of(&status(&path, T0 + 300 * passes), ".node2") != vec!["healthy"; 40]
    {
        pass(&path, T0 + 300 * passes);
        passes += 1;
    }
    let end = status(&path, T0 + 300 * passes);
    assert_eq!(states_of(&end, ".node2"), vec!["healthy"; 40], "{end:#}");
    // The fleet file shows where they went: off the dead node, each with a success result.
    let snap = read(&path);
    for i in snap.instances.iter().filter(|i| i.name.ends_with(".node2")) {
        assert_ne!(i.pnode, "node2", "{} still on the dead node", i.name);
        assert!(
            i.tags.iter().any(|t| t.contains(":success:")),
            "{}: {:?}",
            i.name,
            i.tags
        );
    }
}

#[test]
fn a_mass_failure_writes_nothing_and_says_which_limit_tripped() {
    let dir = tempfile::tempdir().unwrap();
    // Three of four nodes down in one group: more than max_down_nodes_per_group = 2.
    let snap = fleet(10, &["node1", "node2", "node3"]);
    let path = write(dir.path(), &snap);
    let out = bin()
        .args([
            "run",
            "--json",
            "--dry-run",
            "--now",
            &T0.to_string(),
            "--cluster",
        ])
        .arg(&path)
        .assert()
        .success();
    let plan: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(plan["fleet"]["writes"], 0, "{:#}", plan["fleet"]);
    assert_eq!(
        plan["fleet"]["halted_groups"][0]["limit"],
        "max_down_nodes_per_group"
    );
    pass(&path, T0);
    assert!(read(&path) == snap, "the real pass wrote something");
    let text = bin()
        .args(["status", "--now", &T0.to_string(), "--cluster"])
        .arg(&path)
        .assert()
        .success();
    let text = String::from_utf8(text.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("HALTED (max_down_nodes_per_group): mass failure in group default: 3 nodes are down (node1, node2, node3)"),
        "{text}"
    );
}

#[test]
fn a_target_without_any_policy_gets_no_tag() {
    let dir = tempfile::tempdir().unwrap();
    let mut snap = fleet(5, &["node2"]);
    snap.cluster.tags.clear();
    let path = write(dir.path(), &snap);
    pass(&path, T0);
    assert!(
        read(&path) == snap,
        "a tag was written on a target with no policy"
    );
    let v = status(&path, T0);
    let t = v["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "inst00.node2")
        .unwrap();
    assert_eq!(t["blocked"]["reason"], "no-policy");
    assert_eq!(t["next"]["do"], "nothing");
}
