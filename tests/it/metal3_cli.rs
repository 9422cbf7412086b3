//! The README's metal3 tour, through the binary, on a copy of the demo objects file.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

const NOW: i64 = 1_795_402_800;

fn bin(objects: &Path) -> Command {
    let mut c = Command::cargo_bin("autorepair").unwrap();
    c.args(["--config", "/dev/null", "--kube-objects"])
        .arg(objects);
    c
}

fn demo(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("objects.json");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/metal3-demo.json"),
        &path,
    )
    .unwrap();
    path
}

fn status(objects: &Path, now: i64) -> Value {
    let out = bin(objects)
        .args(["status", "--json", "--now", &now.to_string()])
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

fn target<'v>(status: &'v Value, name: &str) -> &'v Value {
    status["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {status}"))
}

#[test]
fn the_tour_power_cycles_the_broken_worker_and_explains_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let objects = demo(dir.path());
    let table = bin(&objects)
        .args(["status", "--now", &NOW.to_string()])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&table.get_output().stdout).into_owned();
    assert!(text.starts_with("MACHINE "), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("prod/workers-7d9f-b2")
                && l.ends_with("start power-cycle repair")),
        "{text}"
    );
    let explain = bin(&objects)
        .args(["explain", "prod/workers-7d9f-c3", "--now", &NOW.to_string()])
        .assert()
        .success();
    assert!(String::from_utf8_lossy(&explain.get_output().stdout).contains("is paused"));

    let untouched = std::fs::read(&objects).unwrap();
    bin(&objects)
        .args(["run", "--dry-run", "--now", &NOW.to_string()])
        .assert()
        .success();
    assert_eq!(
        std::fs::read(&objects).unwrap(),
        untouched,
        "a dry run writes nothing"
    );

    for i in 0..7 {
        bin(&objects)
            .args(["run", "--now", &(NOW + 60 * i).to_string()])
            .assert()
            .success();
    }
    let after = status(&objects, NOW + 600);
    let b2 = target(&after, "prod/workers-7d9f-b2");
    assert_eq!(b2["state"], "healthy", "{b2}");
    assert_eq!(b2["history"][0]["result"], "success", "{b2}");
    assert_eq!(b2["power"], "on");
    // The others wait, and say why.
    for name in ["prod/workers-7d9f-c3", "prod/workers-7d9f-d4"] {
        assert_eq!(target(&after, name)["blocked"]["reason"], "cannot-submit");
    }
}

#[test]
fn admin_verbs_write_annotations_and_refuse_what_has_no_effect() {
    let dir = tempfile::tempdir().unwrap();
    let objects = demo(dir.path());
    bin(&objects)
        .args([
            "suspend",
            "machineset/prod/workers-7d9f",
            "--now",
            &NOW.to_string(),
        ])
        .assert()
        .success();
    let s = status(&objects, NOW);
    assert_eq!(target(&s, "prod/workers-7d9f-b2")["state"], "suspended");
    let out = bin(&objects)
        .args(["allow", "drain", "host/prod/workers-7d9f-b2-bmh"])
        .assert()
        .code(2);
    assert!(
        String::from_utf8_lossy(&out.get_output().stderr).contains("no effect"),
        "{:?}",
        out.get_output()
    );
    let out = bin(&objects)
        .args(["allow", "reboot", "prod/workers-7d9f-b2"])
        .assert()
        .code(2);
    assert!(
        String::from_utf8_lossy(&out.get_output().stderr)
            .contains("drain, power-cycle or reprovision")
    );
    let out = bin(&objects).arg("snapshot").assert().code(2);
    assert!(
        String::from_utf8_lossy(&out.get_output().stderr)
            .contains("`snapshot` works only on a fleet of the ganeti family, named by --cluster")
    );
}

#[test]
fn a_broken_objects_file_is_named_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("objects.json");
    std::fs::write(&path, "{\"kind\": \"List\"}").unwrap();
    let out = bin(&path).args(["run"]).assert().code(3);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("objects.json") && err.contains("items"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"kind\": \"List\"}"
    );
}

#[test]
fn a_pass_logs_its_writes_in_the_familys_words() {
    let dir = tempfile::tempdir().unwrap();
    let objects = demo(dir.path());
    let mut err = String::new();
    for i in 0..3 {
        let out = bin(&objects)
            .args(["run", "--now", &(NOW + 60 * i).to_string()])
            .assert()
            .success();
        err.push_str(&String::from_utf8_lossy(&out.get_output().stderr));
    }
    for want in [
        "annotation added",
        "operation submitted",
        "operation advanced",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
    // Ganeti's words have no place in a metal3 pass's log.
    for word in [
        "tag added",
        "tag removed",
        "job submitted",
        "jobs recorded",
        "tag=",
    ] {
        assert!(!err.contains(word), "{word:?} in {err}");
    }
}

#[test]
fn simulate_runs_the_metal3_world_over_kubernetes_objects() {
    let dir = tempfile::tempdir().unwrap();
    let objects = demo(dir.path());
    let untouched = std::fs::read(&objects).unwrap();
    let out = bin(&objects)
        .args([
            "simulate",
            "--scenarios",
            "3",
            "--passes",
            "20",
            "--json",
            "--now",
            &NOW.to_string(),
        ])
        .assert()
        .success();
    let summary: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(summary["scenarios"], 3, "{summary}");
    assert_eq!(summary["findings"], serde_json::json!([]), "{summary}");
    assert!(
        summary["stats"]["passes"].as_u64().unwrap() >= 60,
        "{summary}"
    );
    // The metal3 world's own counts: it played hosts and Nodes, not Ganeti nodes.
    let world = summary["stats"]["world"].as_object().expect("world counts");
    assert!(
        world
            .keys()
            .any(|k| k.contains("host") || k.contains("node")),
        "{summary}"
    );
    assert_eq!(
        std::fs::read(&objects).unwrap(),
        untouched,
        "in memory only"
    );
    // Three replicas by default: the totals say what befell them.
    assert!(
        summary["stats"]["takeovers"].as_u64().unwrap() > 0,
        "{summary}"
    );
    let text = bin(&objects)
        .args(["simulate", "--passes", "10", "--now", &NOW.to_string()])
        .args(["--scenarios", "5"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&text.get_output().stdout).into_owned();
    assert!(text.contains("operations submitted"), "{text}");
    assert!(!text.contains("jobs"), "{text}");
    assert!(
        text.contains("takeovers") && text.contains("pauses") && text.contains("partitions"),
        "{text}"
    );
    // One watcher: no replicas to speak of.
    let single = bin(&objects)
        .args(["simulate", "--passes", "10", "--replicas", "1"])
        .args(["--now", &NOW.to_string()])
        .assert()
        .success();
    let single = String::from_utf8_lossy(&single.get_output().stdout).into_owned();
    assert!(!single.contains("takeovers"), "{single}");
}

/// An admin command on what metal3 cannot mark says what to mark instead: a Node (it was "not
/// in the fleet"), or another family's kind (`group/X` was read as a Machine in namespace
/// group).
#[test]
fn admin_commands_on_what_cannot_be_marked_say_what_can() {
    let dir = tempfile::tempdir().unwrap();
    let objects = demo(dir.path());
    let before = std::fs::read(&objects).unwrap();
    let cases = [
        (
            "node/worker-a1",
            "annotations on Nodes have no effect (a fenced Node",
        ),
        ("group/X", "a metal3 fleet has no groups"),
        ("rack/1", "write machine/rack/1"),
    ];
    for (object, says) in cases {
        let out = bin(&objects)
            .args(["suspend", object, "--now", &NOW.to_string()])
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(err.contains(says), "{object}: {err}");
        assert!(!err.contains("not in the fleet"), "{object}: {err}");
    }
    assert_eq!(std::fs::read(&objects).unwrap(), before);
}

#[test]
fn a_limit_given_as_a_share_holds_the_fleet_and_a_bad_one_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let objects = demo(dir.path());
    let with = |config: &str| {
        let path = dir.path().join("autorepair.toml");
        std::fs::write(&path, config).unwrap();
        let mut c = Command::cargo_bin("autorepair").unwrap();
        c.arg("--config")
            .arg(&path)
            .arg("--kube-objects")
            .arg(&objects);
        c
    };
    // 0% of the fleet: the broken worker is one too many, and status says by how much.
    let out = with("[limits]\nmax_down_nodes = \"0%\"\n")
        .args(["status", "--json", "--now", &NOW.to_string()])
        .assert()
        .success();
    let status: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let halt = &status["fleet"]["halted"];
    assert_eq!(halt["limit"], "max_down_nodes", "{halt}");
    let message = halt["message"].as_str().unwrap();
    assert!(
        message.contains("more than max_down_nodes = 0% of "),
        "{message}"
    );
    assert_eq!(
        target(&status, "prod/workers-7d9f-b2")["blocked"]["reason"],
        "mass-failure"
    );
    // 100%: nothing is too many; the broken worker is power-cycled as with the defaults.
    let out = with("[limits]\nmax_down_nodes = \"100%\"\nmax_down_nodes_per_group = \"100%\"\n")
        .args(["status", "--now", &NOW.to_string()])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.lines()
            .any(|l| l.starts_with("prod/workers-7d9f-b2")
                && l.ends_with("start power-cycle repair")),
        "{text}"
    );
    for (bad, key) in [
        ("max_down_nodes = \"140%\"", "max_down_nodes"),
        (
            "max_down_nodes_per_group = \"lots\"",
            "max_down_nodes_per_group",
        ),
        ("max_down_nodes_per_group = -1", "max_down_nodes_per_group"),
    ] {
        let out = with(&format!("[limits]\n{bad}\n"))
            .args(["status", "--now", &NOW.to_string()])
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(err.contains(&format!("[limits] {key}:")), "{bad}: {err}");
        assert!(err.contains("autorepair.toml"), "{bad}: {err}");
    }
}
