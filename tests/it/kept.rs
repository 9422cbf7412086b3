//! What an operator points the tool at is kept: keys of a file it does not know, records it
//! cannot read, commands it started.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const NOW: &str = "1795000000";

fn bin() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin("autorepair"));
    cmd.env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR");
    cmd
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// Adds `"_kept": "<where>"` to every object of the document but the maps keyed by name (the
/// simulation's instances), whose keys are names rather than fields.
fn mark_every_object(v: &mut Value, at: &str) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                let here = format!("{at}/{k}");
                if here == "/simulation/instances" {
                    for (name, script) in child.as_object_mut().into_iter().flatten() {
                        mark_every_object(script, &format!("{here}/{name}"));
                    }
                } else {
                    mark_every_object(child, &here);
                }
            }
            map.insert("_kept".into(), Value::from(at));
        }
        Value::Array(list) => {
            for (i, child) in list.iter_mut().enumerate() {
                mark_every_object(child, &format!("{at}/{i}"));
            }
        }
        _ => {}
    }
}

fn kept_marks(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            if let Some(Value::String(at)) = map.get("_kept") {
                assert!(out.insert(at.clone()), "{at} twice");
            }
            map.values().for_each(|c| kept_marks(c, out));
        }
        Value::Array(list) => list.iter().for_each(|c| kept_marks(c, out)),
        _ => {}
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The keys the issue found dropped, and a key in every other object: a suspend (one tag
/// write) and passes that submit, advance and record jobs rewrite the file, and every key is
/// where it was.
#[test]
fn the_ganeti_fleet_file_keeps_every_key_it_does_not_know() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.json");
    let mut doc = read_json(&fixture("demo.json"));
    mark_every_object(&mut doc, "");
    doc["_comment"] = "a person's note".into();
    doc["cluster"]["architecture"] = serde_json::json!(["x86_64", "x86_64"]);
    doc["groups"][0]["alloc_policy"] = "preferred".into();
    doc["nodes"][0]["ctotal"] = 16.into();
    doc["instances"][0]["beparams"] = serde_json::json!({"maxmem": 1024, "vcpus": 2});
    doc["jobs"][0]["received_ts"] = serde_json::json!([1760000000, 12]);
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let mut want = BTreeSet::new();
    kept_marks(&doc, &mut want);
    let job_ids = |d: &Value| -> Vec<Value> {
        d["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["id"].clone())
            .collect()
    };
    let runs: [&[&str]; 3] = [
        &["suspend", "group/ams-b", "--for", "1h", "--now", NOW],
        &["run", "--now", NOW],
        &["run", "--passes", "3", "--now", NOW],
    ];
    for args in runs {
        let before = std::fs::read_to_string(&path).unwrap();
        bin()
            .args(args)
            .arg("--cluster")
            .arg(&path)
            .assert()
            .success();
        let after = read_json(&path);
        assert_ne!(before, after.to_string(), "{args:?} wrote nothing");
        let mut got = BTreeSet::new();
        kept_marks(&after, &mut got);
        // A job the simulated cluster purged takes its keys with it; no other object may.
        let jobs = job_ids(&after);
        let purged = job_ids(&doc)
            .iter()
            .enumerate()
            .filter(|(_, id)| !jobs.contains(id))
            .map(|(i, _)| format!("/jobs/{i}"))
            .collect::<Vec<_>>();
        let lost: Vec<&String> = want
            .difference(&got)
            .filter(|at| !purged.iter().any(|p| at.starts_with(p.as_str())))
            .collect();
        assert!(lost.is_empty(), "{args:?} dropped the keys of {lost:?}");
        for (pointer, value) in [
            ("/_comment", &doc["_comment"]),
            ("/cluster/architecture", &doc["cluster"]["architecture"]),
            ("/groups/0/alloc_policy", &doc["groups"][0]["alloc_policy"]),
            ("/nodes/0/ctotal", &doc["nodes"][0]["ctotal"]),
            ("/instances/0/beparams", &doc["instances"][0]["beparams"]),
        ] {
            assert_eq!(after.pointer(pointer), Some(value), "{args:?}: {pointer}");
        }
        let first = &doc["jobs"][0];
        if let Some(job) = after["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["id"] == first["id"])
        {
            assert_eq!(job["received_ts"], first["received_ts"], "{args:?}");
        }
    }
    assert!(
        job_ids(&read_json(&path)).len() > job_ids(&doc).len(),
        "the passes submitted no job: the test exercises less than it says"
    );
}

fn sabakan_fixture(name: &str) -> PathBuf {
    fixture("sabakan").join(name)
}

fn beside(file: &Path, suffix: &str) -> PathBuf {
    let mut s = file.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

const SABAKAN_NOW: &str = "2026-06-01T00:00:00Z";

/// `sabakan update --write FILE` on the fixture's template and constraints, the machines of
/// `machines`.
fn sabakan_pass(file: &Path, machines: &Path) -> assert_cmd::Command {
    assert_cmd::Command::from_std(sabakan_process(file, machines))
}

fn sabakan_process(file: &Path, machines: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("autorepair"));
    c.env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .args(["sabakan", "update", "--template"])
        .arg(sabakan_fixture("template.yml"))
        .arg("--constraints")
        .arg(sabakan_fixture("constraints.json"))
        .arg("--machines")
        .arg(machines)
        .arg("--write")
        .arg(file)
        .args(["--now", SABAKAN_NOW]);
    c
}

/// The fixture's machines with the first control plane of the cluster file made UNREACHABLE:
/// the next pass replaces it.
fn first_control_plane_fails(file: &Path, dir: &Path) -> PathBuf {
    let cluster: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let cp = cluster["nodes"][0]["address"].as_str().unwrap().to_owned();
    let mut machines = read_json(&sabakan_fixture("machines.json"));
    for m in machines["data"]["searchMachines"].as_array_mut().unwrap() {
        if m["spec"]["ipv4"][0] == cp.as_str() {
            m["status"]["state"] = "UNREACHABLE".into();
        }
    }
    let path = dir.join("machines-failed.json");
    std::fs::write(&path, machines.to_string()).unwrap();
    path
}

/// Files of `dir` whose name starts with `prefix`.
fn named(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    found.sort();
    found
}

/// One line of the history that cannot be read costs only itself: the pass keeps the file as
/// it was aside, says where, and the new history holds every readable change and the new one.
#[test]
fn a_bad_line_in_the_history_loses_no_record() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.yml");
    sabakan_pass(&file, &sabakan_fixture("machines.json"))
        .assert()
        .code(5);
    let hist = beside(&file, ".history");
    let first = std::fs::read_to_string(&hist).unwrap();
    assert_eq!(first.lines().count(), 1, "{first}");
    // Three readable records around a line another tool cut short, and bytes that are no text.
    let damaged = [
        first.as_bytes(),
        first.as_bytes(),
        b"{\"at\": \"2026-05-31T\n",
        b"\xff\xfe\n",
        first.as_bytes(),
    ]
    .concat();
    std::fs::write(&hist, &damaged).unwrap();

    let failed = first_control_plane_fails(&file, dir.path());
    let out = sabakan_pass(&file, &failed).assert().code(5);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let aside = named(dir.path(), "cluster.yml.history.bad-");
    assert_eq!(aside.len(), 1, "{aside:?}\n{stderr}");
    assert_eq!(std::fs::read(&aside[0]).unwrap(), damaged);
    assert!(
        stderr.contains(&aside[0].display().to_string()) && stderr.contains("line 3"),
        "the warning names neither the copy nor the bad line: {stderr}"
    );
    let kept = std::fs::read_to_string(&hist).unwrap();
    let actions: Vec<String> = kept
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["action"].to_string())
        .collect();
    assert_eq!(actions.len(), 4, "{kept}");
    assert!(actions[3].contains("replace-control-plane"), "{actions:?}");
    bin()
        .args(["sabakan", "history"])
        .arg(&file)
        .assert()
        .success();

    // A second bad history the same second takes a name of its own.
    let again = [kept.as_bytes(), b"garbage\n"].concat();
    std::fs::write(&hist, &again).unwrap();
    sabakan_pass(&file, &first_control_plane_fails(&file, dir.path()))
        .assert()
        .code(5);
    let aside = named(dir.path(), "cluster.yml.history.bad-");
    assert_eq!(aside.len(), 2, "{aside:?}");
    assert!(aside.iter().any(|a| std::fs::read(a).unwrap() == again));
    assert_eq!(std::fs::read_to_string(&hist).unwrap().lines().count(), 5);
}

