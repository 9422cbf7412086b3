//! Times: a mark's time is honoured whatever its size, and everything the tool shows survives
//! one that no date can name (another tool may write `suspend:99999999999999999`); a time given
//! on the command line is RFC 3339 or Unix seconds, within what a date can name.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

const ID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";
/// The first second after 9999-12-31T23:59:59Z, a time far past it, and the largest a mark holds.
const FAR: [&str; 3] = ["253402300800", "99999999999999999", "9223372036854775807"];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

fn read_json(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap()
}

fn other_id(n: u8) -> String {
    format!("{n}{}", &ID[1..])
}

/// A family's demo fleet with far-off times in each kind of mark that holds one (a success, a
/// suspend, a pending repair, a failure), the flags that read it, and a target to explain.
struct Family {
    name: &'static str,
    flags: Vec<String>,
    target: String,
    /// The marks written, as the fleet carries them.
    marks: Vec<String>,
}

fn ganeti(dir: &Path, t: &str) -> Family {
    let mut fleet = read_json("demo.json");
    let p = "ganeti:watcher:autorepair:";
    let marks = [
        format!("{p}result:failover:{ID}:{t}:success:44"),
        format!("{p}suspend:{t}"),
        format!("{p}pending:failover:{}:{t}:", other_id(1)),
        format!("{p}result:failover:{}:{t}:failure:44", other_id(2)),
    ];
    let instances = fleet["instances"].as_array_mut().unwrap();
    for (i, m) in marks.iter().enumerate() {
        instances[i]["tags"]
            .as_array_mut()
            .unwrap()
            .push(m.clone().into());
    }
    let target = instances[0]["name"].as_str().unwrap().to_owned();
    let path = dir.join("ganeti.json");
    std::fs::write(&path, fleet.to_string()).unwrap();
    Family {
        name: "ganeti",
        flags: vec!["--cluster".into(), path.display().to_string()],
        target,
        marks: marks.into(),
    }
}

fn metal3(dir: &Path, t: &str) -> Family {
    let mut fleet = read_json("metal3-demo.json");
    let marks = [
        (
            format!("autorepair.io/repair.{ID}"),
            format!("result:power-cycle:{t}:success:power-cycle.{ID}"),
        ),
        ("autorepair.io/suspend".into(), t.into()),
        (
            format!("autorepair.io/repair.{}", other_id(1)),
            format!("pending:power-cycle:{t}:"),
        ),
        (
            format!("autorepair.io/repair.{}", other_id(2)),
            format!("result:power-cycle:{t}:failure:"),
        ),
    ];
    let mut machines = fleet["items"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .filter(|i| i["kind"] == "Machine");
    let mut target = String::new();
    for (key, value) in &marks {
        let m = machines.next().unwrap();
        if target.is_empty() {
            target = format!(
                "{}/{}",
                m["metadata"]["namespace"].as_str().unwrap(),
                m["metadata"]["name"].as_str().unwrap()
            );
        }
        m["metadata"]["annotations"][key] = value.clone().into();
    }
    let path = dir.join("objects.json");
    std::fs::write(&path, fleet.to_string()).unwrap();
    Family {
        name: "metal3",
        flags: vec!["--kube-objects".into(), path.display().to_string()],
        target,
        marks: marks.iter().map(|(k, v)| format!("{k}={v}")).collect(),
    }
}

fn machines(dir: &Path, t: &str) -> Family {
    let mut fleet = read_json("machines-demo.json");
    let marks = [
        (
            format!("autorepair.{ID}"),
            format!("result.step-2.{t}.success.17"),
        ),
        ("autorepair.suspend".into(), t.into()),
        (
            format!("autorepair.{}", other_id(1)),
            format!("pending.step-1.{t}"),
        ),
        (
            format!("autorepair.{}", other_id(2)),
            format!("result.step-2.{t}.failure.4"),
        ),
    ];
    let mut repairable = fleet
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .filter(|m| m["spec"]["role"] != "boot");
    let mut target = String::new();
    for (name, value) in &marks {
        let m = repairable.next().unwrap();
        if target.is_empty() {
            target = m["spec"]["serial"].as_str().unwrap().to_owned();
        }
        m["spec"]["labels"][name] = value.clone().into();
    }
    let path = dir.join("machines.json");
    std::fs::write(&path, fleet.to_string()).unwrap();
    let fix = |f: &str| fixture(f).display().to_string();
    Family {
        name: "machines",
        flags: vec![
            "--sabakan-file".into(),
            path.display().to_string(),
            "--nodes".into(),
            fix("machines-demo-nodes.json"),
            "--repair-config".into(),
            fix("machines-demo.yml"),
            "--constraints".into(),
            fix("machines-constraints.json"),
        ],
        target,
        marks: marks.iter().map(|(k, v)| format!("{k}={v}")).collect(),
    }
}

fn autorepair(dir: &Path, family: &Family, args: &[&str]) -> std::process::Output {
    Command::cargo_bin("autorepair")
        .unwrap()
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .args(["--config", "/dev/null"])
        .args(&family.flags)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_time_no_date_can_name_crashes_nothing_and_is_shown_as_its_seconds() {
    for t in FAR {
        for make in [ganeti, metal3, machines] {
            let dir = tempfile::tempdir().unwrap();
            let f = make(dir.path(), t);
            let report = dir.path().join("report.html");
            let report = report.to_str().unwrap();
            let explain = ["explain", f.target.as_str()];
            let explain_json = ["explain", f.target.as_str(), "--json"];
            let cases: [&[&str]; 8] = [
                &["status"],
                &["status", "--json"],
                &explain,
                &explain_json,
                &["report", "--html", report],
                &["tags", "lint"],
                &["run", "--dry-run"],
                &["run", "--passes", "2"],
            ];
            let shown = String::from_utf8(autorepair(dir.path(), &f, &explain).stdout).unwrap();
            assert!(shown.contains(&format!("@{t}")), "{}: {shown}", f.name);
            let lint =
                String::from_utf8(autorepair(dir.path(), &f, &["tags", "lint"]).stdout).unwrap();
            for m in &f.marks {
                let line = lint.lines().find(|l| l.contains(m.as_str()));
                let line = line.unwrap_or_else(|| panic!("{}: lint misses {m}: {lint}", f.name));
                assert!(line.contains("after 9999-12-31T23:59:59Z"), "{line}");
            }
            // The run at the end rewrites marks: the checks above come first.
            for args in cases {
                let out = autorepair(dir.path(), &f, args);
                let stderr = String::from_utf8_lossy(&out.stderr);
                let what = format!("{} {t}: {}", f.name, args.join(" "));
                assert!(
                    !stderr.contains("panicked") && out.status.code() != Some(101),
                    "{what}: {stderr}"
                );
                // lint finds the marks (exit 1); everything else does its job.
                let want = if args[0] == "tags" { 1 } else { 0 };
                assert_eq!(out.status.code(), Some(want), "{what}: {stderr}");
            }
        }
    }
}

#[test]
fn a_far_off_suspend_written_by_another_tool_still_holds() {
    let dir = tempfile::tempdir().unwrap();
    let f = ganeti(dir.path(), FAR[2]);
    let out = autorepair(dir.path(), &f, &["status", "--json"]);
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let suspended = status["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["policy"]["until"].as_i64() == Some(i64::MAX))
        .map(|t| t["state"].clone());
    assert_eq!(suspended, Some("suspended".into()));
}

#[test]
fn a_time_on_the_command_line_is_rfc3339_or_seconds_within_the_calendar() {
    let dir = tempfile::tempdir().unwrap();
    let f = ganeti(dir.path(), "1800000000");
    let target = format!("instance/{}", f.target);
    // (arguments, accepted, what the output must say)
    let cases: [(Vec<&str>, bool, &str); 9] = [
        (
            vec!["status", "--now", "99999999999999999"],
            false,
            "outside 1970-01-01T00:00:00Z",
        ),
        (vec!["status", "--now", "9999-12-30T00:00:00Z"], true, ""),
        (
            vec!["status", "--now", "2026-12-01T01:00:00+01:00"],
            true,
            "",
        ),
        (
            vec!["status", "--now", "yesterday"],
            false,
            "neither RFC 3339",
        ),
        (
            vec!["run", "--dry-run", "--now", "253402300800"],
            false,
            "outside",
        ),
        (
            vec!["suspend", &target, "--until", "99999999999999999"],
            false,
            "outside",
        ),
        (
            vec![
                "suspend",
                &target,
                "--for",
                "2y",
                "--now",
                "9999-01-01T00:00:00Z",
            ],
            false,
            "after 9999-12-31T23:59:59Z",
        ),
        (
            vec![
                "suspend",
                &target,
                "--until",
                "2027-01-01T00:00:00Z",
                "--now",
                "2026-11-26T00:00:00Z",
            ],
            true,
            "suspend:1798761600",
        ),
        (
            vec!["resume", &target, "--now", "2026-11-27T00:00:00Z"],
            true,
            "",
        ),
    ];
    for (args, ok, says) in cases {
        let out = autorepair(dir.path(), &f, &args);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.success(), ok, "{args:?}: {text}");
        assert!(text.contains(says), "{args:?}: {text}");
        assert!(!text.contains("panicked"), "{args:?}: {text}");
    }
    let fleet = std::fs::read_to_string(dir.path().join("ganeti.json")).unwrap();
    assert!(
        !fleet.contains("99999999999999999"),
        "nothing far off was written"
    );
}
