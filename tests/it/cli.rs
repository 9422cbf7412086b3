//! The binary as a user runs it.

use autorepair::ganeti::file::parse_fleet;
use autorepair::ganeti::snapshot::Snapshot;
use autorepair::ganeti::tags::PREFIX;
use clap::parser::ValueSource;
use serde_json::Value;
use std::ffi::{OsStr, OsString};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The clock of every test: after every timestamp in the demo fleet but the far-future suspend.
const NOW: &str = "1795000000";

/// The binary as a test runs it: no config, log filter or colour wish from the environment,
/// and never reading the wall clock (see [`assert_clock_given`]).
struct Bin {
    cmd: assert_cmd::Command,
    args: Vec<OsString>,
}

fn bin() -> Bin {
    let mut cmd = assert_cmd::Command::new(bin_path());
    cmd.env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR");
    Bin { cmd, args: vec![] }
}

fn bin_path() -> PathBuf {
    assert_cmd::cargo::cargo_bin("autorepair")
}

impl Bin {
    fn arg(&mut self, a: impl AsRef<OsStr>) -> &mut Self {
        self.args.push(a.as_ref().to_owned());
        self.cmd.arg(a);
        self
    }

    fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&mut self, args: I) -> &mut Self {
        for a in args {
            self.arg(a);
        }
        self
    }

    fn env(&mut self, key: &str, value: &str) -> &mut Self {
        self.cmd.env(key, value);
        self
    }

    fn assert(&mut self) -> assert_cmd::assert::Assert {
        assert_clock_given(&self.args);
        self.cmd.assert()
    }
}

/// A command that reads the clock (its clap definition has --now) must be given --now, so
/// that no test depends on the day it runs. Command lines clap refuses are not checked.
fn assert_clock_given(args: &[OsString]) {
    let cli = autorepair::cli::command(autorepair::FAMILIES);
    let Ok(matches) = cli
        .clone()
        .try_get_matches_from(std::iter::once(OsString::from("autorepair")).chain(args.to_vec()))
    else {
        return;
    };
    let (mut command, mut m) = (&cli, &matches);
    while let Some((name, sub)) = m.subcommand() {
        command = command.find_subcommand(name).unwrap();
        m = sub;
    }
    if command.get_arguments().any(|a| a.get_id() == "now") {
        assert_eq!(
            m.value_source("now"),
            Some(ValueSource::CommandLine),
            "`autorepair {}` reads the clock: pass --now",
            args.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
}

#[test]
#[should_panic(expected = "reads the clock: pass --now")]
fn the_clock_check_catches_a_command_without_now() {
    assert_clock_given(&["tags".into(), "lint".into(), "--cluster".into(), "x".into()]);
}

#[test]
fn the_clock_check_lets_clockless_commands_and_given_clocks_pass() {
    for args in [
        &["resume", "cluster", "--now", "5", "--cluster", "x"][..],
        &["status", "--now", "5", "--cluster", "x"],
        &["tags", "parse", "x"],
    ] {
        assert_clock_given(&args.iter().map(OsString::from).collect::<Vec<_>>());
    }
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

/// Edits one instance's tags in a fleet file, saved whole (an editor's rename: a daemon reads
/// the file between two passes).
fn edit_tags(path: &Path, instance: &str, edit: impl FnOnce(&mut Vec<serde_json::Value>)) {
    let mut fleet: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let found = fleet["instances"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|i| i["name"] == instance)
        .unwrap_or_else(|| panic!("no instance {instance} in {}", path.display()));
    edit(found["tags"].as_array_mut().unwrap());
    let new = path.with_extension("new");
    std::fs::write(&new, fleet.to_string()).unwrap();
    std::fs::rename(&new, path).unwrap();
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

/// `tags parse` reads the marks of the family whose fleet flag is given, Ganeti's without one:
/// a good mark of that family is described (exit 0), a bad one is invalid (exit 1), and
/// another family's mark is foreign to it.
#[test]
fn tags_parse_reads_the_marks_of_the_family_whose_fleet_flag_is_given() {
    let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
    struct Case {
        family: &'static str,
        flags: &'static [&'static str],
        good: String,
        said: String,
        bad: String,
        foreign: String,
    }
    let cases = [
        Case {
            family: "ganeti, by default",
            flags: &[],
            good: format!("{PREFIX}failover"),
            said: "allows repairs up to failover".into(),
            bad: format!("{PREFIX}teleport"),
            foreign: "autorepair.io/policy=drain".into(),
        },
        Case {
            family: "ganeti",
            flags: &["--cluster", "fleet.json"],
            good: format!("{PREFIX}pending:migrate:{id}:17:3+4"),
            said: format!("migrate repair {id} pending since 1970-01-01T00:00:17Z, jobs [3, 4]"),
            bad: format!("{PREFIX}pending:migrate:{id}:17:x"),
            foreign: "autorepair.policy=step-2".into(),
        },
        Case {
            family: "metal3",
            flags: &["--kube"],
            good: "autorepair.io/policy=power-cycle".into(),
            said: "allows repairs up to power-cycle".into(),
            bad: "autorepair.io/policy=teleport".into(),
            foreign: format!("{PREFIX}failover"),
        },
        Case {
            family: "metal3 (objects file)",
            flags: &["--kube-objects", "objects.json"],
            good: "autorepair.io/suspend=".into(),
            said: "suspended, no end".into(),
            bad: "autorepair.io/suspend=soon".into(),
            foreign: "autorepair.suspend=".into(),
        },
        Case {
            family: "machines",
            flags: &["--sabakan-file", "machines.json"],
            good: format!("autorepair.{id}=result.step-2.18.failure.7"),
            said: format!(
                "step-2 repair {id} ended failure at 1970-01-01T00:00:18Z, repair entries [7]"
            ),
            bad: "autorepair.policy=teleport".into(),
            foreign: format!("{PREFIX}failover"),
        },
        Case {
            family: "machines (sabakan)",
            flags: &["--sabakan", "https://sabakan.example:10443"],
            good: "autorepair.policy=step-2".into(),
            said: "allows repairs up to step-2".into(),
            bad: format!("autorepair.{id}=pending.step-9.17"),
            foreign: format!("{PREFIX}suspend"),
        },
    ];
    let run = |flags: &[&str], marks: &[&str]| {
        let out = bin()
            .args(["tags", "parse"])
            .args(flags)
            .args(marks)
            .assert();
        let output = out.get_output();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    for case in &cases {
        let name = case.family;
        assert_eq!(
            run(case.flags, &[&case.good, &case.foreign]),
            (
                Some(0),
                format!(
                    "{}: {}\n{}: foreign (not an autorepair {})\n",
                    case.good,
                    case.said,
                    case.foreign,
                    if name.starts_with("ganeti") {
                        "tag"
                    } else if name.starts_with("metal3") {
                        "annotation"
                    } else {
                        "label"
                    }
                )
            ),
            "{name}: a good mark"
        );
        let (code, said) = run(case.flags, &[&case.good, &case.bad]);
        assert_eq!(code, Some(1), "{name}: a bad mark: {said}");
        let bad = said.lines().nth(1).unwrap_or_default();
        assert!(
            bad.starts_with(&format!("{}: INVALID (", case.bad)),
            "{name}: a bad mark: {said}"
        );
    }
}

/// `generate` is the generator's of the family whose fleet flag is given: Ganeti's without
/// one; the families without a generator say so (exit 2) and name the flag to leave out.
#[test]
fn generate_is_the_flagged_familys_and_a_family_without_one_says_so() {
    let cases: [(&[&str], Result<(), &str>); 4] = [
        (&[], Ok(())),
        (&["--cluster", "fleet.json"], Ok(())),
        (
            &["--kube"],
            Err(
                "autorepair: error: metal3 has no `generate`: synthetic fleets are made for ganeti only: leave out --kube",
            ),
        ),
        (
            &["--sabakan-file", "machines.json"],
            Err(
                "autorepair: error: machines has no `generate`: synthetic fleets are made for ganeti only: leave out --sabakan-file",
            ),
        ),
    ];
    for (flags, expected) in cases {
        let out = bin()
            .args(["generate", "--instances", "3"])
            .args(flags)
            .assert();
        let output = out.get_output();
        let stderr = String::from_utf8_lossy(&output.stderr);
        match expected {
            Ok(()) => {
                assert_eq!(output.status.code(), Some(0), "{flags:?}: {stderr}");
                let fleet = parse_fleet(&String::from_utf8_lossy(&output.stdout)).unwrap();
                assert_eq!(fleet.instances.len(), 3, "{flags:?}");
            }
            Err(said) => {
                assert_eq!(output.status.code(), Some(2), "{flags:?}: {stderr}");
                assert_eq!(stderr.trim_end(), said, "{flags:?}");
                assert!(output.stdout.is_empty(), "{flags:?}");
            }
        }
    }
}

#[test]
fn status_json_lists_every_target_with_its_state_and_policy_source() {
    let out = bin()
        .args([
            "status",
            "--json",
            "--now",
            NOW,
            "--cluster",
            "fixtures/demo.json",
        ])
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
        .args(["status", "--now", NOW, "--cluster", "fixtures/demo.json"])
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
        .args(["run", "--dry-run", "--now", NOW, "--cluster"])
        .arg(&path)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("would: instance/"), "{text}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let out = bin()
        .args(["explain", "log-b1.ams.example", "--now", NOW, "--cluster"])
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
        .args(["explain", "nope", "--now", NOW, "--cluster"])
        .arg(&path)
        .assert()
        .code(2);
}

/// Rule 13 on a Ganeti fleet: with `retries`, an instance whose repair failed is repaired
/// again once its back-off is over, and says when until then; without, the failure parks it.
#[test]
fn a_failed_repair_is_retried_after_its_back_off_only_when_retries_allow() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let now: i64 = NOW.parse().unwrap();
    let failed_at = now - 300;
    edit_tags(&path, "web-b4.ams.example", |tags| {
        tags.push(
            format!(
                "{PREFIX}result:failover:3b2c1d0e-1111-4a2b-9c3d-000000000009:{failed_at}:failure:"
            )
            .into(),
        )
    });
    let config = dir.path().join("autorepair.toml");
    std::fs::write(
        &config,
        "[limits]\nretries = 1\nretry_backoff = \"10min\"\nmax_domains_under_repair = 9\n",
    )
    .unwrap();
    let blocked = |config: Option<&Path>, at: i64| {
        let mut cmd = bin();
        if let Some(c) = config {
            cmd.arg("--config").arg(c);
        }
        let out = cmd
            .args(["status", "--json", "--now", &at.to_string(), "--cluster"])
            .arg(&path)
            .assert()
            .success();
        let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        let t = v["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "web-b4.ams.example")
            .unwrap()
            .clone();
        (
            t["state"].as_str().unwrap().to_owned(),
            t["blocked"].clone(),
        )
    };
    let (state, held) = blocked(Some(&config), now);
    assert_eq!(state, "needs-repair");
    assert_eq!(held["reason"], "retry-wait", "{held}");
    assert_eq!(
        (held["failures"].as_u64(), held["retries"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(held["at"].as_i64(), Some(failed_at + 600));
    let said = bin()
        .args(["--config"])
        .arg(&config)
        .args(["explain", "web-b4.ams.example", "--now", NOW, "--cluster"])
        .arg(&path)
        .assert()
        .success();
    let said = String::from_utf8_lossy(&said.get_output().stdout).into_owned();
    assert!(said.contains("retry 1 of 1 at "), "{said}");
    // The back-off over, the repair starts again.
    let (state, held) = blocked(Some(&config), failed_at + 600);
    assert_eq!(
        (state.as_str(), &held),
        ("needs-repair", &serde_json::Value::Null)
    );
    let out = bin()
        .arg("--config")
        .arg(&config)
        .args([
            "run",
            "--dry-run",
            "--now",
            &(failed_at + 600).to_string(),
            "--cluster",
        ])
        .arg(&path)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("would: instance/web-b4.ams.example: failover repair"),
        "{text}"
    );
    // Without retries the same failure parks it.
    let (state, held) = blocked(None, failed_at + 600);
    assert_eq!(
        (state.as_str(), held["reason"].as_str()),
        ("failed", Some("parked"))
    );
}

/// Rule 13's escalation on a Ganeti fleet: db-b1 (drbd, its primary drained) needs a migrate,
/// its group allows up to failover. After a failed migrate, a retry with `escalate` is a
/// failover; without it, a migrate again; with a policy that stops at migrate, a migrate.
#[test]
fn with_escalate_a_failed_migrate_is_retried_as_a_failover() {
    let now: i64 = NOW.parse().unwrap();
    // (escalate, the instance's own policy, the repair the retry starts)
    let cases = [
        (true, None, "failover"),
        (false, None, "migrate"),
        (true, Some("migrate"), "migrate"),
    ];
    for (escalate, policy, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = demo_copy(dir.path());
        edit_tags(&path, "db-b1.ams.example", |tags| {
            tags.push(
                format!(
                    "{PREFIX}result:migrate:3b2c1d0e-1111-4a2b-9c3d-00000000000a:{}:failure:",
                    now - 900
                )
                .into(),
            );
            if let Some(p) = policy {
                tags.push(format!("{PREFIX}{p}").into());
            }
        });
        let config = dir.path().join("autorepair.toml");
        std::fs::write(
            &config,
            format!(
                "[limits]\nretries = 1\nretry_backoff = \"10min\"\nmax_domains_under_repair = 9\nescalate = {escalate}\n"
            ),
        )
        .unwrap();
        let out = bin()
            .arg("--config")
            .arg(&config)
            .args(["run", "--dry-run", "--now", NOW, "--cluster"])
            .arg(&path)
            .assert()
            .success();
        let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        let case = format!("escalate = {escalate}, policy {policy:?}");
        assert!(
            text.contains(&format!("would: instance/db-b1.ams.example: {want} repair")),
            "{case}: {text}"
        );
        let said = bin()
            .arg("--config")
            .arg(&config)
            .args(["explain", "db-b1.ams.example", "--now", NOW, "--cluster"])
            .arg(&path)
            .assert()
            .success();
        let said = String::from_utf8_lossy(&said.get_output().stdout).into_owned();
        assert_eq!(
            said.contains("needs migrate, but migrate failed in a row: escalated to failover"),
            want == "failover",
            "{case}: {said}"
        );
    }
}

/// A group where one more node dies every 5 minutes for an hour, each dead node's instance
/// repaired before the next dies: only a rate window catches it. With `max_repair_rate =
/// "2/1h"` exactly the first two dead nodes' instances are repaired within the hour, the
/// others wait and say until when, and they are repaired once room comes back; without it,
/// every one is repaired within the hour.
#[test]
fn a_rolling_failure_is_repaired_only_as_fast_as_the_rate_window_allows() {
    const NODES: usize = 12;
    let group = "6a1f0c1e-0000-4000-8000-0000000000aa";
    let node = |name: String| {
        serde_json::json!({"name": name, "offline": false, "drained": false,
            "vm_capable": true, "group.uuid": group, "tags": []})
    };
    let mut nodes: Vec<serde_json::Value> = (0..NODES).map(|k| node(format!("n{k:02}"))).collect();
    nodes.extend((0..4).map(|k| node(format!("spare{k}"))));
    let instances: Vec<serde_json::Value> = (0..NODES)
        .map(|k| {
            serde_json::json!({"name": format!("i{k:02}"), "pnode": format!("n{k:02}"),
                "snodes": [], "disk_template": "diskless", "admin_state": "up",
                "status": "running", "tags": []})
        })
        .collect();
    let fleet = serde_json::json!({
        "cluster": {"name": "rolling.example", "tags": [format!("{PREFIX}failover")]},
        "groups": [{"name": "g", "uuid": group, "tags": []}],
        "nodes": nodes,
        "instances": instances,
        "jobs": [],
        "simulation": {},
    });
    let t0: i64 = NOW.parse().unwrap();
    // (rate, instances repaired after the hour)
    for (rate, repaired_in_the_hour) in [(Some("2/1h"), 2), (None, NODES)] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rolling.json");
        std::fs::write(&path, fleet.to_string()).unwrap();
        let config = dir.path().join("autorepair.toml");
        let mut limits =
            "[limits]\nmax_down_nodes_per_group = 50\nmax_down_nodes = 50\n".to_owned();
        if let Some(r) = rate {
            limits.push_str(&format!("max_repair_rate = \"{r}\"\n"));
        }
        std::fs::write(&config, limits).unwrap();
        let read = || -> serde_json::Value {
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
        };
        // Each instance still on the node it started on is not repaired yet.
        let repaired = || {
            let f = read();
            (0..NODES)
                .filter(|k| {
                    f["instances"].as_array().unwrap().iter().any(|i| {
                        i["name"] == format!("i{k:02}") && i["pnode"] != format!("n{k:02}")
                    })
                })
                .count()
        };
        let pass = |at: i64| {
            // Node n{k} dies at t0 + 300 k.
            let mut f = read();
            for n in f["nodes"].as_array_mut().unwrap() {
                let name = n["name"].as_str().unwrap().to_owned();
                if let Some(k) = name.strip_prefix('n').and_then(|k| k.parse::<i64>().ok()) {
                    n["offline"] = (at >= t0 + 300 * k).into();
                }
            }
            std::fs::write(&path, f.to_string()).unwrap();
            bin()
                .arg("--config")
                .arg(&config)
                .args(["run", "--now", &at.to_string(), "--cluster"])
                .arg(&path)
                .assert()
                .success();
        };
        // A pass every 100 s for the hour.
        for step in 0..36 {
            pass(t0 + 100 * step);
        }
        assert_eq!(repaired(), repaired_in_the_hour, "{rate:?}");
        if rate.is_none() {
            continue;
        }
        let status = bin()
            .arg("--config")
            .arg(&config)
            .args(["status", "--now", &(t0 + 3599).to_string(), "--cluster"])
            .arg(&path)
            .assert()
            .success();
        let said = String::from_utf8_lossy(&status.get_output().stdout).into_owned();
        let room = autorepair::engine::rfc3339(t0 + 3600);
        assert!(
            said.contains("repair rate of cluster (max_repair_rate = 2/1h): 2 of 2 nodes in the last 1h (n00 at ")
                && said.contains(&format!("room again at {room}")),
            "{said}"
        );
        let explain = bin()
            .arg("--config")
            .arg(&config)
            .args([
                "explain",
                "i05",
                "--now",
                &(t0 + 3599).to_string(),
                "--cluster",
            ])
            .arg(&path)
            .assert()
            .success();
        let said = String::from_utf8_lossy(&explain.get_output().stdout).into_owned();
        assert!(
            said.contains(
                "rate: 2 of 2 nodes newly under repair in cluster in the last 1h (n00 at "
            ),
            "{said}"
        );
        // The metrics say the budget is spent: a pass at the hour's end writes them.
        let metrics = dir.path().join("autorepair.prom");
        bin()
            .arg("--config")
            .arg(&config)
            .args(["run", "--now", &(t0 + 3599).to_string(), "--metrics-file"])
            .arg(&metrics)
            .arg("--cluster")
            .arg(&path)
            .assert()
            .success();
        let text = std::fs::read_to_string(&metrics).unwrap();
        for sample in [
            r#"autorepair_repair_rate_room{family="ganeti",scope="cluster",limit="max_repair_rate"} 0"#,
            r#"autorepair_repair_rate_used{family="ganeti",scope="cluster",limit="max_repair_rate"} 2"#,
        ] {
            assert!(text.lines().any(|l| l == sample), "{sample} not in\n{text}");
        }
        assert_eq!(
            repaired(),
            2,
            "the pass that wrote the metrics started nothing"
        );
        // Room comes back an hour after the first start: one more domain each time one leaves.
        for at in [t0 + 3600, t0 + 3700, t0 + 3800] {
            pass(at);
        }
        assert_eq!(
            repaired(),
            3,
            "one more once the first start left the window"
        );
    }
}

#[test]
fn report_writes_one_page_of_the_fleet_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let before = std::fs::read(&path).unwrap();
    let page = dir.path().join("fleet.html");
    let out = bin()
        .args(["report", "--now", NOW, "--html"])
        .arg(&page)
        .arg("--cluster")
        .arg(&path)
        .assert()
        .success();
    assert!(out.get_output().stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains(&format!(
            "wrote the report of 39 instances to {}",
            page.display()
        )),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the fleet is unchanged"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    // The demo's groups, its failed instance and its halted-at-the-limit group.
    for want in [
        "<h3>group ams-a ",
        "title=\"ops-a3.ams.example: failed",
        "parked by a failure until cleared",
        "at the limit: one more halts it",
    ] {
        assert!(html.contains(want), "{want:?} not in the page");
    }
    // A page that cannot be written fails like a metrics file that cannot.
    bin()
        .args(["report", "--now", NOW, "--html"])
        .arg(dir.path().join("missing/fleet.html"))
        .arg("--cluster")
        .arg(&path)
        .assert()
        .code(3);
}

#[test]
fn repeated_runs_repair_every_repairable_instance_and_touch_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let before = load(&path);
    bin()
        .args(["run", "--passes", "30", "--now", NOW, "--cluster"])
        .arg(&path)
        .assert()
        .success();
    let after = load(&path);
    let out = bin()
        .args(["status", "--json", "--now", NOW, "--cluster"])
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
        // The demo's unreadable pending tag holds legacy-a4 as a repair under way until a
        // person clears it (rule 11): it must still be held, and say why.
        if t["name"] == "legacy-a4.ams.example" {
            assert_eq!(t["state"], "pending", "{t}");
            assert!(t["blocked"].to_string().contains("unreadable"), "{t}");
            continue;
        }
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
        .args(["run", "--now", NOW, "--cluster"])
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
            "--now",
            "1800000000",
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
        .args(["resume", "group/ams-a", "--now", "1800000000", "--cluster"])
        .arg(&path)
        .assert()
        .success();
    bin()
        .args(["resume", "group/ams-a", "--now", "1800000000", "--cluster"])
        .arg(&path)
        .assert()
        .code(2);
    bin()
        .args([
            "request",
            "migrate",
            "web-b2.ams.example",
            "--now",
            NOW,
            "--cluster",
        ])
        .arg(&path)
        .assert()
        .success();
    assert!(
        tags_of("web-b2.ams.example")
            .iter()
            .any(|t| t.starts_with(&format!("{PREFIX}pending:migrate:")) && t.ends_with(':'))
    );
    bin()
        .args([
            "clear",
            "ops-a3.ams.example",
            "--now",
            "1800000000",
            "--cluster",
        ])
        .arg(&path)
        .assert()
        .success();
    assert!(
        !tags_of("ops-a3.ams.example")
            .iter()
            .any(|t| t.contains(":failure:"))
    );
    let out = bin()
        .args(["clear", "nope", "--now", "1800000000", "--cluster"])
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
        .args(["status", "--now", NOW, "--cluster"])
        .arg(&bad)
        .assert()
        .code(3);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("bad.json"));
    let out = bin().args(["status", "--now", NOW]).assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("--cluster"));
    let conf = dir.path().join("a.toml");
    std::fs::write(&conf, "[limits]\nmax_pendng = 2\n").unwrap();
    let out = bin()
        .args([
            "status",
            "--now",
            NOW,
            "--cluster",
            "fixtures/demo.json",
            "--config",
        ])
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
    let out = bin()
        .args(["run", "--now", NOW, "--cluster"])
        .arg(&path)
        .assert()
        .code(4);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("lock"));
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the locked-out run changed nothing"
    );
    drop(lock);
    // A flock belongs to the open file, which a child that another test forks shares until it
    // execs: wait until no such child still holds ours.
    let lock_path = dir.path().join("demo.json.lock");
    for _ in 0..500 {
        if autorepair::lock::acquire(&lock_path).is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    bin()
        .args(["run", "--now", NOW, "--cluster"])
        .arg(&path)
        .assert()
        .success();
}

/// Runs `args` under `sh` with the file size limited to one block: any save of the fleet file
/// then fails (EFBIG, for root too, unlike a permission), while reading it works.
fn bin_that_cannot_save(args: &[&OsStr]) -> Bin {
    let mut b = bin();
    b.cmd = assert_cmd::Command::new("sh");
    b.cmd
        .env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .args(["-c", r#"trap '' XFSZ; ulimit -f 1; exec "$0" "$@""#])
        .arg(bin_path());
    b.args(args);
    b
}

fn stderr_of(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

#[test]
fn logs_carry_no_colour_codes_unless_a_terminal_asks_for_them() {
    // Piped (cron's `| logger`, systemd's journal): never colour.
    let args = [
        "run",
        "--dry-run",
        "--now",
        NOW,
        "--cluster",
        "fixtures/demo.json",
    ];
    for no_color in [None, Some(""), Some("1")] {
        let mut b = bin();
        if let Some(v) = no_color {
            b.env("NO_COLOR", v);
        }
        let err = stderr_of(&b.args(args).assert().success());
        assert!(err.contains("WARN"), "the pass logs something: {err}");
        assert!(!err.contains('\x1b'), "NO_COLOR={no_color:?}: {err:?}");
    }
    // On a terminal (util-linux `script` gives the run one): colour, unless NO_COLOR is set
    // to something.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("no `script` command: the terminal half of this test did not run");
        return;
    }
    let line = format!("'{}' {} >/dev/null", bin_path().display(), args.join(" "));
    for (no_color, coloured) in [(None, true), (Some(""), true), (Some("1"), false)] {
        let mut c = std::process::Command::new("script");
        c.args(["-qec", &line, "/dev/null"])
            .stdin(std::process::Stdio::null())
            .env_remove("AUTOREPAIR_CONFIG")
            .env_remove("RUST_LOG")
            .env_remove("NO_COLOR");
        if let Some(v) = no_color {
            c.env("NO_COLOR", v);
        }
        let out = c.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("WARN"), "{text}");
        assert_eq!(
            text.contains('\x1b'),
            coloured,
            "terminal, NO_COLOR={no_color:?}: {text:?}"
        );
    }
}

/// A short `simulate` of the Ganeti demo: 4 scenarios of 10 passes and 5 quiet ones, one
/// watcher.
const SIMULATE: [&str; 14] = [
    "simulate",
    "--cluster",
    "fixtures/demo.json",
    "--scenarios",
    "4",
    "--passes",
    "10",
    "--quiet-passes",
    "5",
    "--replicas",
    "1",
    "--seed",
    "7",
    "--now",
];

/// `simulate`'s progress is one line on standard error, rewritten in place, when that is a
/// terminal; in a pipe (cron's mail, a CI log) there is none, and standard output carries the
/// summary alone either way.
#[test]
fn simulate_shows_its_progress_on_a_terminal_only() {
    let piped = bin()
        .args(["--config", "/dev/null"])
        .args(SIMULATE)
        .arg(NOW)
        .assert()
        .success();
    let summary = String::from_utf8_lossy(&piped.get_output().stdout).into_owned();
    assert!(
        summary.starts_with("4 scenario(s), 60 passes: "),
        "{summary}"
    );
    assert_eq!(stderr_of(&piped), "");
    // On a terminal (util-linux `script` gives the command one), standard output to a file.
    let dir = tempfile::tempdir().unwrap();
    let stdout = dir.path().join("stdout");
    let line = format!(
        "'{}' --config /dev/null {} {NOW} >'{}'",
        bin_path().display(),
        SIMULATE.join(" "),
        stdout.display()
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let terminal = String::from_utf8_lossy(&out.stdout);
    // A scenario at a time (a slice of a hundredth of them, at least one), each over the last;
    // the last ends the line (the terminal shows `\n` as `\r\n`).
    let shown: Vec<&str> = terminal.split("\r\x1b[2K").skip(1).collect();
    assert_eq!(
        shown,
        [
            "simulate: 1 of 4 scenarios, 15 passes",
            "simulate: 2 of 4 scenarios, 30 passes",
            "simulate: 3 of 4 scenarios, 45 passes",
            "simulate: 4 of 4 scenarios, 60 passes\r\n",
        ],
        "{terminal:?}"
    );
    assert_eq!(std::fs::read_to_string(&stdout).unwrap(), summary);
}

/// `simulate`'s summary says that a mass-failure limit halted most passes when half of them or
/// more were (few repairs then, and why), and says nothing of it otherwise. The demo has four
/// nodes down from its first pass: a cluster limit of one halts every pass; limits no fleet of
/// twelve nodes reaches halt none.
#[test]
fn simulate_says_when_a_limit_halted_most_passes() {
    let dir = tempfile::tempdir().unwrap();
    let note = "note: 100% of the passes were halted by a mass-failure limit of [limits]: while \
        one holds, no repair starts, so these scenarios show few repairs. `status` on the fleet \
        names the limit and its counts; raise it in the config to see what repairs would do\n";
    for (limits, halted, noted) in [
        ("max_down_nodes = 1", ", 60 halted passes", true),
        (
            "max_down_nodes = 1000\nmax_down_nodes_per_group = 1000",
            ", 0 halted passes",
            false,
        ),
    ] {
        let config = dir.path().join("limits.toml");
        std::fs::write(&config, format!("[limits]\n{limits}\n")).unwrap();
        let out = bin()
            .arg("--config")
            .arg(&config)
            .args(SIMULATE)
            .arg(NOW)
            .assert()
            .success();
        let summary = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        let first = summary.lines().next().unwrap_or_default();
        assert!(first.ends_with(halted), "{limits}: {summary}");
        assert_eq!(summary.contains(note), noted, "{limits}: {summary}");
        assert_eq!(
            summary.contains("were halted"),
            noted,
            "{limits}: {summary}"
        );
    }
}

/// Reads the first line a background run prints, or gives up after a minute.
fn first_line(child: &mut std::process::Child) -> String {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the background run printed nothing within a minute")
}

#[test]
fn a_looping_run_lets_an_admin_suspend_between_passes() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let args = [
        OsStr::new("run"),
        OsStr::new("--loop"),
        OsStr::new("--interval"),
        OsStr::new("1h"),
        OsStr::new("--now"),
        OsStr::new(NOW),
        OsStr::new("--cluster"),
        path.as_os_str(),
    ];
    assert_clock_given(&args.map(OsStr::to_owned));
    let mut looping = std::process::Command::new(bin_path())
        .args(args)
        .env_remove("AUTOREPAIR_CONFIG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let line = first_line(&mut looping);
    assert!(line.starts_with("pass 1:"), "{line}");
    // The pass prints its line just before it lets the lock go.
    let lock = dir.path().join("demo.json.lock");
    let free = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        autorepair::lock::acquire(&lock).is_ok()
    });
    let suspended = bin()
        .args(["suspend", "cluster", "--now", NOW, "--cluster"])
        .arg(&path)
        .assert()
        .try_success();
    let still_looping = looping.try_wait().unwrap().is_none();
    looping.kill().unwrap();
    looping.wait().unwrap();
    assert!(free, "the loop holds the lock while it sleeps");
    suspended.unwrap();
    assert!(still_looping, "the loop went on");
    assert!(
        load(&path)
            .cluster
            .tags
            .contains(&format!("{PREFIX}suspend"))
    );
}

#[test]
fn the_lock_belongs_to_the_fleet_not_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let (fleet_a, fleet_b) = (demo_copy(&a), demo_copy(&b));
    let link_a = dir.path().join("a-link.json");
    std::os::unix::fs::symlink(&fleet_a, &link_a).unwrap();
    let a_by_dots = a.join(".").join("demo.json");
    let held = autorepair::lock::acquire(&a.join("demo.json.lock")).unwrap();
    // (fleet, exit status while fleet a's lock is held)
    let cases = [(&fleet_b, 0), (&fleet_a, 4), (&link_a, 4), (&a_by_dots, 4)];
    for (fleet, code) in cases {
        for verb in [
            &["run", "--now", NOW][..],
            &["suspend", "cluster", "--now", NOW],
        ] {
            bin()
                .args(verb)
                .arg("--cluster")
                .arg(fleet)
                .assert()
                .code(code);
        }
    }
    drop(held);
    bin()
        .args(["run", "--now", NOW, "--cluster"])
        .arg(&link_a)
        .assert()
        .success();
}

#[test]
fn a_missing_fleet_file_is_named_and_leaves_no_lock_behind() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("typo.json");
    for args in [
        &["run", "--now", NOW][..],
        &["suspend", "cluster", "--now", NOW],
        &["resume", "cluster", "--now", NOW],
        &["status", "--now", NOW],
    ] {
        let out = bin()
            .args(args)
            .arg("--cluster")
            .arg(&missing)
            .assert()
            .code(3);
        let err = stderr_of(&out);
        assert!(
            err.contains(&format!("{}: does not exist", missing.display())),
            "{args:?}: {err}"
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{args:?} created a file"
        );
    }
}

#[test]
fn a_suspend_that_ends_at_once_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let before = std::fs::read(&path).unwrap();
    let past = (NOW.parse::<i64>().unwrap() - 60).to_string();
    // A duration under a second is refused by the flag's parser; a time by the verb.
    for (how, said, why) in [
        (&["--for", "0s"][..], "--for", "1s or more"),
        (&["--for", "10ms"], "--for", "1s or more"),
        (&["--until", NOW], "--until", "not after now"),
        (&["--until", &past], "--until", "not after now"),
    ] {
        let out = bin()
            .args(["suspend", "group/ams-a", "--now", NOW])
            .args(how)
            .arg("--cluster")
            .arg(&path)
            .assert()
            .code(2);
        let err = stderr_of(&out);
        assert!(err.contains(said) && err.contains(why), "{how:?}: {err}");
    }
    assert_eq!(std::fs::read(&path).unwrap(), before);
    bin()
        .args([
            "suspend",
            "group/ams-a",
            "--for",
            "1s",
            "--now",
            NOW,
            "--cluster",
        ])
        .arg(&path)
        .assert()
        .success();
}

#[test]
fn no_write_is_logged_before_the_fleet_file_is_saved() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let before = std::fs::read(&path).unwrap();
    let writes = ["tag added", "tag removed", "job submitted"];
    // An admin command logs its writes only when asked to (it prints them on stdout).
    let cases = [
        &["run", "--now", NOW][..],
        &["suspend", "cluster", "--now", NOW, "--log", "info"],
    ];
    for args in cases {
        let mut all: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        all.extend([OsStr::new("--cluster"), path.as_os_str()]);
        let failed = bin_that_cannot_save(&all).assert().code(3);
        let err = stderr_of(&failed);
        assert!(err.contains("File too large"), "{args:?}: {err}");
        for w in writes {
            assert!(
                !err.contains(w),
                "{args:?} logged {w:?} but saved nothing: {err}"
            );
        }
        assert_eq!(std::fs::read(&path).unwrap(), before, "{args:?}");
        // The same command that can save logs its writes.
        let saved = bin().args(&all).assert().success();
        let err = stderr_of(&saved);
        assert!(writes.iter().any(|w| err.contains(w)), "{args:?}: {err}");
        std::fs::write(&path, &before).unwrap();
    }
    let failed = bin_that_cannot_save(&[
        OsStr::new("run"),
        OsStr::new("--now"),
        OsStr::new(NOW),
        OsStr::new("--cluster"),
        path.as_os_str(),
    ])
    .assert()
    .code(3);
    assert!(
        stderr_of(&failed).contains("could not save the fleet, so none of its"),
        "{}",
        stderr_of(&failed)
    );
}

#[test]
fn an_os_error_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let nowhere = dir.path().join("no-such-dir");
    let in_nowhere = |name: &str| nowhere.join(name).into_os_string();
    let fleet = path.as_os_str();
    let cases: Vec<(Bin, &str)> = vec![
        (
            {
                let mut b = bin();
                b.args([OsStr::new("run"), OsStr::new("--now"), OsStr::new(NOW)])
                    .args([OsStr::new("--cluster"), fleet, OsStr::new("--lock-file")])
                    .arg(in_nowhere("x.lock"));
                b
            },
            "No such file or directory (os error 2)",
        ),
        (
            {
                let mut b = bin();
                b.args(["resume", "cluster", "--now", "1800000000", "--cluster"])
                    .arg(fleet)
                    .arg("--lock-file")
                    .arg(in_nowhere("x.lock"));
                b
            },
            "No such file or directory (os error 2)",
        ),
        (
            {
                let mut b = bin();
                b.args(["run", "--now", NOW, "--cluster"])
                    .arg(fleet)
                    .arg("--metrics-file")
                    .arg(in_nowhere("m.prom"));
                b
            },
            "No such file or directory (os error 2)",
        ),
        (
            {
                let mut b = bin();
                b.args(["status", "--now", NOW, "--cluster"])
                    .arg(fleet)
                    .arg("--config")
                    .arg(in_nowhere("a.toml"));
                b
            },
            "No such file or directory (os error 2)",
        ),
        (
            {
                let mut b = bin();
                b.args([
                    "status",
                    "--now",
                    NOW,
                    "--rapi",
                    "https://192.0.2.1:5080",
                    "--rapi-user",
                    "u",
                    "--rapi-password-file",
                ])
                .arg(in_nowhere("pw"));
                b
            },
            "No such file or directory (os error 2)",
        ),
        (
            bin_that_cannot_save(&[
                OsStr::new("run"),
                OsStr::new("--now"),
                OsStr::new(NOW),
                OsStr::new("--cluster"),
                fleet,
            ]),
            "File too large (os error 27)",
        ),
    ];
    for (mut b, os_error) in cases {
        let err = stderr_of(&b.assert().failure());
        let line = err
            .lines()
            .find(|l| l.starts_with("autorepair: error:"))
            .unwrap_or_else(|| panic!("{:?}: no error line in {err}", b.args));
        assert_eq!(line.matches(os_error).count(), 1, "{:?}: {line}", b.args);
        assert_eq!(line.matches("(os error").count(), 1, "{:?}: {line}", b.args);
    }
}

/// After a pass, its line counts the tag writes (on Ganeti each is a job of its own) apart from
/// the repair jobs, and says the states are those the pass began with; a daemon's passes warn
/// of each bad tag once, and a lint about no tag in particular carries no empty tag field.
#[test]
fn a_pass_says_what_it_wrote_and_warns_of_each_bad_tag_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    // Two policies on one instance: a lint about the object, naming no single tag.
    edit_tags(&path, "web-a4.ams.example", |tags| {
        for level in ["migrate", "failover"] {
            tags.push(format!("ganeti:watcher:autorepair:{level}").into());
        }
    });
    let out = bin()
        .args([
            "--config",
            "/dev/null",
            "run",
            "--passes",
            "3",
            "--now",
            "1800000000",
        ])
        .arg("--cluster")
        .arg(&path)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let first = stdout.lines().find(|l| l.starts_with("pass 1:")).unwrap();
    let tags: usize = first
        .split(": ")
        .nth(2)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{first}"));
    assert!(tags > 0 && first.contains(" tag write(s), "), "{first}");
    assert!(first.contains(" repair jobs submitted, "), "{first}");
    assert!(first.contains("(states when the pass began;"), "{first}");
    assert!(!stdout.contains("states now"), "{stdout}");
    let teleport = stderr.matches("unknown kind \"teleport\"").count();
    assert_eq!(teleport, 1, "said once in three passes: {stderr}");
    let mix = stderr
        .lines()
        .find(|l| l.contains("2 policy tags"))
        .unwrap();
    assert!(!mix.contains("tag="), "{mix}");
    assert_eq!(stderr.matches("2 policy tags").count(), 1, "{stderr}");
}

/// A daemon says a bad mark once while it lasts, and again when it comes back after a pass
/// without it: mended, then damaged again, is news (a warning said once a process was not).
#[test]
fn a_bad_mark_is_said_again_when_it_comes_back() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let bad = "ganeti:watcher:autorepair:suspend:notanumber";
    let with_bad = |on: bool| {
        edit_tags(&path, "web-a4.ams.example", |tags| {
            tags.retain(|t| t != bad);
            if on {
                tags.push(bad.into());
            }
        })
    };
    with_bad(true);
    let mut child = std::process::Command::new(bin_path())
        .args(["--config", "/dev/null", "run", "--loop", "--interval", "1s"])
        .args(["--passes", "4", "--now", "1800000000", "--cluster"])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let said = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap());
    // The mark in pass 1, gone in pass 2, back in passes 3 and 4: each edit is made in the
    // pause after a pass said its line, before the next pass reads the file.
    let edits = [(1, false), (2, true)];
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(&(_, on)) = edits
            .iter()
            .find(|(n, _)| line.starts_with(&format!("pass {n}:")))
        {
            with_bad(on);
        }
    }
    let status = child.wait().unwrap();
    let stderr = said.join().unwrap();
    assert!(
        status.success() || status.code() == Some(1),
        "{status}: {stderr}"
    );
    let times = stderr.lines().filter(|l| l.contains("notanumber")).count();
    assert_eq!(
        times, 2,
        "said in pass 1 and again in pass 3, not in 4:\n{stderr}"
    );
}

/// `status | head -1`: a reader that stops reading is no failure (exit 0, nothing on standard
/// error); and `run --passes 0` is refused, not taken for one pass.
#[test]
fn a_closed_pipe_is_no_error_and_zero_passes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let mut child = std::process::Command::new(bin_path())
        .args([
            "--config",
            "/dev/null",
            "status",
            "--now",
            "1800000000",
            "--cluster",
        ])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");

    let out = bin()
        .args([
            "--config",
            "/dev/null",
            "run",
            "--passes",
            "0",
            "--now",
            "1800000000",
        ])
        .arg("--cluster")
        .arg(&path)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("--passes"), "{stderr}");
    let fleet = std::fs::read_to_string(&path).unwrap();
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo.json");
    assert_eq!(fleet, std::fs::read_to_string(demo).unwrap(), "no pass ran");
}

/// An admin command says its change once, on standard output, with the time as a date; the
/// executor's log line for it comes back with `--log info`.
#[test]
fn an_admin_command_says_its_change_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let mark = "ganeti:watcher:autorepair:suspend:1800007200";
    for (log, in_log) in [(None, 0), (Some("info"), 1)] {
        let mut b = bin();
        b.args([
            "--config",
            "/dev/null",
            "suspend",
            "instance/db-a1.ams.example",
        ])
        .args(["--for", "2h", "--now", "1800000000", "--cluster"])
        .arg(&path);
        if let Some(l) = log {
            b.args(["--log", l]);
        }
        let out = b.assert().success();
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert_eq!(stdout.matches(mark).count(), 1, "{stdout}");
        assert!(stdout.contains("until 2027-01-15T10:00:00Z"), "{stdout}");
        assert_eq!(stderr.matches(mark).count(), in_log, "{log:?}: {stderr}");
        std::fs::copy(
            concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo.json"),
            &path,
        )
        .unwrap();
    }
}

/// `explain` takes a target as every other verb and the logs name it (`KIND/NAME`), and a bare
/// name as before, in every family.
#[test]
fn explain_takes_the_object_syntax_of_every_verb() {
    let f = |name: &str| format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let (demo, objects, machines) = (
        f("demo.json"),
        f("metal3-demo.json"),
        f("machines-demo.json"),
    );
    let (nodes, repair, constraints) = (
        f("machines-demo-nodes.json"),
        f("machines-demo.yml"),
        f("machines-constraints.json"),
    );
    let ganeti = vec!["--cluster", demo.as_str()];
    let metal3 = vec!["--kube-objects", objects.as_str()];
    let sabakan = vec![
        "--sabakan-file",
        machines.as_str(),
        "--nodes",
        nodes.as_str(),
        "--repair-config",
        repair.as_str(),
        "--constraints",
        constraints.as_str(),
    ];
    let cases = [
        (&ganeti, "db-a1.ams.example", "instance/db-a1.ams.example"),
        (
            &metal3,
            "prod/workers-7d9f-c3",
            "machine/prod/workers-7d9f-c3",
        ),
        (&sabakan, "rack0-cs2", "machine/rack0-cs2"),
    ];
    for (flags, bare, object) in cases {
        let mut texts = Vec::new();
        for name in [bare, object] {
            let out = bin()
                .args(["--config", "/dev/null"])
                .args(flags.iter())
                .args(["explain", name, "--now", "1800000000"])
                .assert()
                .success();
            texts.push(String::from_utf8_lossy(&out.get_output().stdout).into_owned());
        }
        assert_eq!(texts[0], texts[1], "{object}");
    }
}

/// A standby replica (another run holds the fleet's lock) said so at WARN every interval: 30
/// lines a minute. It says it once, at INFO, and again only when it changes.
#[test]
fn a_loop_kept_out_by_the_lock_says_so_once_at_info() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let lock = autorepair::lock::beside(&path).unwrap();
    let held = autorepair::lock::acquire(&lock).unwrap();
    let out = bin()
        .args(["--config", "/dev/null", "--log", "info", "run", "--loop"])
        .args(["--interval", "1", "--passes", "3", "--now", "1800000000"])
        .arg("--cluster")
        .arg(&path)
        .assert();
    drop(held);
    let stderr = stderr_of(&out);
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("holds the lock"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(said[0].contains("INFO"), "{stderr}");
}

/// `--wait[=DURATION]`: a command waits for the fleet's lock instead of failing at once with
/// exit 4, and says how long it waited when the lock stayed held.
#[test]
fn wait_waits_for_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let lock = autorepair::lock::beside(&path).unwrap();
    let suspend = |wait: Option<&str>| {
        let mut b = bin();
        b.args([
            "--config",
            "/dev/null",
            "suspend",
            "cluster",
            "--now",
            "1800000000",
        ])
        .arg("--cluster")
        .arg(&path);
        if let Some(w) = wait {
            b.arg(w);
        }
        b.assert()
    };
    let held = autorepair::lock::acquire(&lock).unwrap();
    let err = stderr_of(&suspend(None).code(4));
    assert!(err.contains("give --wait"), "{err}");
    let err = stderr_of(&suspend(Some("--wait=1s")).code(4));
    assert!(err.contains("after --wait 1s"), "{err}");
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(500));
        drop(held);
    });
    suspend(Some("--wait")).success();
    release.join().unwrap();
}

/// `status --no-headers`: one line a target and nothing else, for scripts.
#[test]
fn status_without_headers_is_one_line_a_target() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let status = |extra: &[&str]| {
        let out = bin()
            .args(["--config", "/dev/null", "status", "--now", "1800000000"])
            .args(extra)
            .arg("--cluster")
            .arg(&path)
            .assert()
            .success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    let full = status(&[]);
    let rows = status(&["--no-headers"]);
    let instances = std::fs::read_to_string(&path)
        .unwrap()
        .matches("\"pnode\"")
        .count();
    assert_eq!(rows.lines().count(), instances, "{rows}");
    assert!(
        !rows.contains("INSTANCE") && !rows.contains("states now"),
        "{rows}"
    );
    let body: Vec<&str> = full.lines().skip(1).take(instances).collect();
    assert_eq!(rows.lines().collect::<Vec<_>>(), body);
}

// ---------------------------------------------------------------------------------------------
// `run` against the fake Ganeti RAPI of crates/testsupport (HTTPS on 127.0.0.1, one connection
// per request, HTTP basic auth), playing a two-node cluster whose node n1 is offline with two
// diskless instances on it, under a cluster-wide failover policy, so a pass has writes to make.

pub(crate) mod fake_rapi {
    use serde_json::{Value, json};
    pub use testsupport::rapi::FakeRapi;

    /// The cluster's answer to a read, `None` for anything else.
    pub fn cluster(path: &str) -> Option<Value> {
        let p = path.split('?').next().unwrap_or("");
        let instance = |name: &str| json!([[0, name], [0, []], [0, "up"], [0, "diskless"]]);
        Some(match p {
            "/2/info" => json!({"name": "c.example.test",
                "tags": ["ganeti:watcher:autorepair:failover"]}),
            "/2/groups" => json!([{"name": "default", "uuid": "g1", "tags": []}]),
            "/2/query/node" => json!({
                "fields": ["name", "offline", "drained", "vm_capable", "group.uuid", "tags",
                           "pinst_list", "sinst_list", "mtime"],
                "data": [
                    [[0, "n1"], [0, true], [0, false], [0, true], [0, "g1"], [0, []],
                     [0, ["a", "b"]], [0, []], [0, 1700000000.5]],
                    [[0, "n2"], [0, false], [0, false], [0, true], [0, "g1"], [0, []],
                     [0, []], [0, []], [0, 1700000000.5]]]}),
            "/2/query/instance" => json!({
                "fields": ["name", "tags", "admin_state", "disk_template"],
                "data": [instance("a"), instance("b")]}),
            "/2/jobs" => json!([]),
            // What a pass that writes watches for a suspend given elsewhere.
            "/2/tags" => json!(["ganeti:watcher:autorepair:failover"]),
            "/2/groups/default/tags" => json!([]),
            _ => return None,
        })
    }

    pub fn unauthorized() -> (u16, String) {
        (401, r#"{"code":401,"message":"Unauthorized"}"#.into())
    }
}

/// `run --loop` reads the password file again for each pass: after the password was rotated
/// (file and RAPI users file changed between two passes) the next pass works, and the password
/// shows nowhere in the logs.
#[test]
fn a_daemon_picks_up_a_rotated_rapi_password_on_its_next_pass() {
    use fake_rapi::*;
    let dir = tempfile::tempdir().unwrap();
    let pw = dir.path().join("pw");
    std::fs::write(&pw, "old-secret\n").unwrap();
    let rotate = pw.clone();
    // The passes have nothing to write: a pass is the five reads of a snapshot. Once the first
    // pass read them all, the password changes.
    let rapi = FakeRapi::start(Box::new(move |seen| {
        let accepted = if seen.len() <= 5 {
            "old-secret"
        } else {
            "new-secret"
        };
        let this = seen.last().unwrap();
        let answer = if this.password.as_deref() == Some(accepted) {
            let body = cluster(&this.path).expect("a read of the cluster");
            // This pass would repair: keep it to reads with a suspend on the cluster.
            let body = if this.path.starts_with("/2/info") {
                serde_json::json!({"name": "c.example.test", "tags": [
                    "ganeti:watcher:autorepair:suspend"]})
            } else {
                body
            };
            (200, body.to_string())
        } else {
            unauthorized()
        };
        if seen.len() == 5 {
            std::fs::write(&rotate, "new-secret\n").unwrap();
        }
        answer
    }));
    let out = bin()
        .args([
            "run",
            "--loop",
            "--interval",
            "1",
            "--passes",
            "2",
            "--now",
            NOW,
        ])
        .args(["--log", "debug", "--rapi", rapi.url(), "--rapi-user", "u"])
        .arg("--rapi-password-file")
        .arg(&pw)
        .arg("--rapi-ca")
        .arg(testsupport::CA_FILE)
        .arg("--lock-file")
        .arg(dir.path().join("lock"))
        .assert();
    let stderr = stderr_of(&out);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert_eq!(
        out.get_output().status.code(),
        Some(0),
        "{stdout}\n{stderr}"
    );
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("pass ")).count(),
        2,
        "{stdout}"
    );
    let seen = rapi.seen();
    assert_eq!(seen.len(), 10, "{seen:?}");
    assert!(seen.iter().all(|s| s.method == "GET"), "{seen:?}");
    assert!(
        seen[5..]
            .iter()
            .all(|s| s.password.as_deref() == Some("new-secret")),
        "{seen:?}"
    );
    assert!(!stderr.contains("secret"), "{stderr}");
}

/// A RAPI user without the `write` option: the first write is refused (403), and the pass stops
/// there with one error that says what to change, and an exit status of its own; it does not
/// go on to send every other write to be refused the same way.
#[test]
fn a_read_only_rapi_user_stops_the_pass_at_the_first_refused_write() {
    use fake_rapi::*;
    let dir = tempfile::tempdir().unwrap();
    let rapi = FakeRapi::start(Box::new(|seen| {
        let this = seen.last().unwrap();
        match cluster(&this.path) {
            Some(body) if this.method == "GET" => (200, body.to_string()),
            _ => (
                403,
                r#"{"code":403,"message":"Forbidden","explain":""}"#.into(),
            ),
        }
    }));
    let out = bin()
        .env("AUTOREPAIR_RAPI_PASSWORD", "p")
        .args([
            "run",
            "--now",
            NOW,
            "--rapi",
            rapi.url(),
            "--rapi-user",
            "reader",
        ])
        .arg("--rapi-ca")
        .arg(testsupport::CA_FILE)
        .arg("--lock-file")
        .arg(dir.path().join("lock"))
        .assert();
    let stderr = stderr_of(&out);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert_eq!(
        out.get_output().status.code(),
        Some(6),
        "{stdout}\n{stderr}"
    );
    let seen = rapi.seen();
    let writes: Vec<_> = seen.iter().filter(|s| s.method != "GET").collect();
    assert_eq!(writes.len(), 1, "{writes:?}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("ERROR")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    for words in [
        "\"reader\" may not write",
        "`write` option",
        "/var/lib/ganeti/rapi/users",
    ] {
        assert!(
            errors[0].contains(words),
            "{words:?} missing: {}",
            errors[0]
        );
    }
    assert!(stdout.contains("stopped"), "{stdout}");
    drop(seen);
    // An admin command by the same user says the same, with the same exit status.
    let out = bin()
        .env("AUTOREPAIR_RAPI_PASSWORD", "p")
        .args(["suspend", "cluster", "--now", NOW, "--rapi", rapi.url()])
        .args(["--rapi-user", "reader", "--rapi-ca"])
        .arg(testsupport::CA_FILE)
        .arg("--lock-file")
        .arg(dir.path().join("lock"))
        .assert()
        .code(6);
    let stderr = stderr_of(&out);
    // Said once, as the error: not also as an ERROR log line before it.
    assert_eq!(stderr.matches("`write` option").count(), 1, "{stderr}");
    assert!(!stderr.contains("ERROR"), "{stderr}");
}

/// A RAPI that refuses connections (ganeti-rapi stopped): the reads of a snapshot, made at
/// once, are retried a bounded number of times with one warning in all, and the error says
/// how many attempts were made over how long.
#[test]
fn a_refused_rapi_warns_once_and_the_error_counts_the_attempts() {
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("https://127.0.0.1:{}", l.local_addr().unwrap().port())
    };
    let started = std::time::Instant::now();
    let out = bin()
        .env("AUTOREPAIR_RAPI_PASSWORD", "p")
        .args([
            "status",
            "--now",
            NOW,
            "--rapi",
            &closed,
            "--rapi-user",
            "u",
        ])
        .arg("--rapi-ca")
        .arg(testsupport::CA_FILE)
        .assert()
        .code(3);
    let stderr = stderr_of(&out);
    assert!(started.elapsed() < Duration::from_secs(20), "{stderr}");
    let warnings = stderr.lines().filter(|l| l.contains(" WARN ")).count();
    assert_eq!(warnings, 1, "{stderr}");
    let error = stderr
        .lines()
        .find(|l| l.starts_with("autorepair: error:"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        error.contains("refused") && error.contains("4 attempts over"),
        "{error}"
    );
}

/// The iallocator moved from `[limits]` to `[ganeti]`: a config file written for the old place
/// still works, and the run says where the key goes now.
#[test]
fn the_iallocator_at_its_old_place_works_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let config = dir.path().join("autorepair.toml");
    std::fs::write(&config, "[limits]\niallocator = \"hail\"\n").unwrap();
    let out = bin()
        .arg("--config")
        .arg(&config)
        .args(["status", "--now", "1800000000", "--cluster"])
        .arg(&path)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("limits.iallocator") && stderr.contains("[ganeti] section"),
        "{stderr}"
    );
    std::fs::write(&config, "[ganeti]\niallocator = \"hail\"\n").unwrap();
    let out = bin()
        .arg("--config")
        .arg(&config)
        .args(["status", "--now", "1800000000", "--cluster"])
        .arg(&path)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(!stderr.contains("iallocator"), "{stderr}");
}

/// Suspending a scope keeps the design's rule (the nearest policy wins) and says what that
/// leaves repairing: every object below with a policy of its own, by name, with its policy.
/// A suspend of a target, with nothing below it, says nothing more.
#[test]
fn suspending_a_scope_names_what_goes_on_repairing_below_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let stdout_of = |args: &[&str]| {
        let out = bin()
            .args(args)
            .args(["--now", NOW, "--cluster"])
            .arg(&path)
            .assert()
            .success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    let said = stdout_of(&["suspend", "cluster"]);
    let note = said
        .lines()
        .find(|l| l.starts_with("note: "))
        .unwrap_or_else(|| panic!("no note: {said}"));
    for words in [
        "4 objects under cluster keep a policy of their own",
        "group/ams-a (repairs up to reinstall allowed)",
        "group/ams-b (repairs up to failover allowed)",
        "instance/log-b1.ams.example (repairs up to migrate allowed)",
        "suspend them too",
    ] {
        assert!(note.contains(words), "{words:?} missing: {note}");
    }
    // Suspending those stops them: the next suspend of the cluster names one fewer.
    stdout_of(&["suspend", "group/ams-a"]);
    let said = stdout_of(&["suspend", "cluster"]);
    assert!(said.contains("3 objects under cluster"), "{said}");
    assert!(!said.contains("group/ams-a"), "{said}");
    let said = stdout_of(&["suspend", "log-b1.ams.example"]);
    assert!(!said.contains("note:"), "{said}");
}

/// Output as kubectl users expect (issue: "-o json|yaml|wide|name", a target filter on
/// `status`, short names as gnt-* expands them): each row of what `status` and `explain`
/// print for a command line.
#[test]
fn status_and_explain_print_what_kubectl_users_expect() {
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo.json");
    let run = |args: &[&str]| {
        let out = bin()
            .args(["--config", "/dev/null", "--cluster", demo])
            .args(args)
            .args(["--now", NOW])
            .assert();
        let out = out.get_output();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let lines = |text: &str| text.lines().map(str::to_owned).collect::<Vec<_>>();
    // (arguments, exit, a check of standard output or error)
    type Check = fn(&str, &str) -> bool;
    let cases: &[(&[&str], i32, Check)] = &[
        // A short name as gnt-* expands it; a scope; both, once each.
        (&["status", "web-a1", "-o", "name"], 0, |o, _| {
            o == "instance/web-a1.ams.example\n"
        }),
        (&["status", "group/ams-a", "-o", "name"], 0, |o, _| {
            o.lines().count() == 12 && o.lines().all(|l| l.starts_with("instance/"))
        }),
        (
            &["status", "group/ams-a", "web-a1", "-o", "name"],
            0,
            |o, _| o.lines().count() == 12,
        ),
        // The table of the selection, its counts of the selection.
        (&["status", "db-a1", "db-a2"], 0, |o, _| {
            o.contains("2 instances;") && o.starts_with("INSTANCE")
        }),
        (&["status", "web-a1", "-o", "wide"], 0, |o, _| {
            o.lines().next().is_some_and(|h| {
                h.contains("PROBLEM") && h.contains("DOMAIN") && h.contains("LAST")
            }) && o.contains("is offline")
        }),
        (&["status", "web-a1", "-o", "yaml"], 0, |o, _| {
            o.starts_with("now: ") && o.contains("name: web-a1.ams.example")
        }),
        (&["status", "web-a1", "-o", "json"], 0, |o, _| {
            serde_json::from_str::<Value>(o)
                .is_ok_and(|v| v["targets"][0]["name"] == "web-a1.ams.example")
        }),
        (&["explain", "web-a1", "-o", "name"], 0, |o, _| {
            o == "instance/web-a1.ams.example\n"
        }),
        (&["explain", "instance/web-a1", "-o", "yaml"], 0, |o, _| {
            o.starts_with("name: web-a1.ams.example")
        }),
        // A short name that begins several, or none; an object that holds no instances.
        (&["status", "web"], 2, |_, e| {
            e.contains("instance/web is not in the fleet")
        }),
        (&["status", "db-a"], 2, |_, e| {
            e.contains("is not in the fleet")
        }),
        // Not "holds no instances": it holds four.
        (&["status", "node/node-a1.ams.example"], 2, |_, e| {
            e.contains("node/node-a1.ams.example is neither one of the instances nor a scope")
                && !e.contains("holds no instances")
        }),
        (&["status", "--json", "-o", "yaml"], 2, |_, e| {
            e.contains("cannot be used with")
        }),
    ];
    for (args, code, check) in cases {
        let (got, out, err) = run(args);
        assert_eq!(got, Some(*code), "{args:?}: {err}");
        assert!(check(&out, &err), "{args:?}:\n{:?}\n{err}", lines(&out));
    }
}

// ---------------------------------------------------------------------------------------------
// `--only-on-master` (config `[ganeti] only_on_master`): a watcher on every master candidate,
// of which only the master's acts. ssconf is a directory of the test's
// (AUTOREPAIR_GANETI_SSCONF_DIR) and the host is node1 (`[ganeti] node_name`).

/// A config that names this host node1, and an ssconf directory in which `master` is master.
fn candidate(dir: &Path, master: &str) -> PathBuf {
    let ssconf = dir.join("ssconf");
    std::fs::create_dir_all(&ssconf).unwrap();
    std::fs::write(ssconf.join("ssconf_master_node"), format!("{master}\n")).unwrap();
    std::fs::write(
        ssconf.join("ssconf_node_list"),
        "node1.example.test\nnode2.example.test\n",
    )
    .unwrap();
    let config = dir.join("autorepair.toml");
    std::fs::write(&config, "[ganeti]\nnode_name = \"node1.example.test\"\n").unwrap();
    config
}

/// On a candidate that is not the master a pass reads nothing, writes nothing, says at INFO
/// that it stands by (naming the master) and exits 0, so cron on every candidate stays quiet;
/// with no master at all, a warning. On the master it reads the cluster as ever.
#[test]
fn only_the_master_acts_and_the_others_stand_by_quietly() {
    use fake_rapi::*;
    // (ssconf's master, exit, requests made, words logged, at level)
    let cases = [
        (
            "node2.example.test",
            0,
            false,
            &["stands by", "node2.example.test is"][..],
            " INFO ",
        ),
        ("NO MASTER", 0, false, &["no master", "NO MASTER"], " WARN "),
        ("node1.example.test", 0, true, &[], ""),
        // Ganeti spells names in any case, and a trailing dot is the same name.
        ("Node1.Example.Test.", 0, true, &[], ""),
    ];
    for (master, code, reads, words, level) in cases {
        let dir = tempfile::tempdir().unwrap();
        let config = candidate(dir.path(), master);
        let rapi = FakeRapi::start(Box::new(|seen| {
            let this = seen.last().unwrap();
            // Suspended: the master's pass only reads.
            let body = if this.path.starts_with("/2/info") {
                serde_json::json!({"name": "c.example.test", "tags": [
                    "ganeti:watcher:autorepair:suspend"]})
            } else {
                cluster(&this.path).expect("a read of the cluster")
            };
            (200, body.to_string())
        }));
        let out = bin()
            .env("AUTOREPAIR_RAPI_PASSWORD", "p")
            .env(
                "AUTOREPAIR_GANETI_SSCONF_DIR",
                dir.path().join("ssconf").to_str().unwrap(),
            )
            .args([
                "run",
                "--now",
                NOW,
                "--only-on-master",
                "--rapi",
                rapi.url(),
            ])
            .args(["--rapi-user", "u", "--rapi-ca", testsupport::CA_FILE])
            .arg("--config")
            .arg(&config)
            .arg("--lock-file")
            .arg(dir.path().join("lock"))
            .assert()
            .code(code);
        let stderr = stderr_of(&out);
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        let seen = rapi.seen();
        assert_eq!(!seen.is_empty(), reads, "{master}: {seen:?}\n{stderr}");
        assert!(seen.iter().all(|s| s.method == "GET"), "{seen:?}");
        if reads {
            assert!(stdout.starts_with("pass 1:"), "{master}: {stdout}");
        } else {
            assert_eq!(stdout, "", "{master}: a replica standing by prints nothing");
            let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(level)).collect();
            assert_eq!(lines.len(), 1, "{master}: one line a pass\n{stderr}");
            for w in words {
                assert!(lines[0].contains(w), "{master}: {w:?} missing in {stderr}");
            }
        }
    }
}

/// The mode from the config alone; it needs a cluster with a master (a fleet file has none),
/// and only `run` asks for the role: a person's `status` works on any host.
#[test]
fn only_on_master_is_for_runs_on_a_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = demo_copy(dir.path());
    let config = dir.path().join("autorepair.toml");
    std::fs::write(&config, "[ganeti]\nonly_on_master = true\n").unwrap();
    for args in [
        &["run", "--now", NOW][..],
        &["run", "--dry-run", "--now", NOW],
    ] {
        let out = bin()
            .args(args)
            .arg("--cluster")
            .arg(&fleet)
            .arg("--config")
            .arg(&config)
            .assert()
            .code(2);
        let stderr = stderr_of(&out);
        for w in [
            "--only-on-master",
            "only_on_master",
            "fleet file has no master",
        ] {
            assert!(stderr.contains(w), "{w:?} missing in {stderr}");
        }
    }
    bin()
        .args(["status", "--now", NOW, "--cluster"])
        .arg(&fleet)
        .arg("--config")
        .arg(&config)
        .assert()
        .code(0);
}

/// One cluster reached by two URLs (its IP, a name) has one lock, named by its uuid: a run
/// by either URL finds it held.
#[test]
fn one_cluster_by_two_urls_has_one_lock() {
    use fake_rapi::*;
    let uuid = format!("test-{}", std::process::id());
    let info = serde_json::json!({"name": "c.example.test", "uuid": uuid,
        "tags": ["ganeti:watcher:autorepair:suspend"]});
    let rapi = FakeRapi::start(Box::new(move |seen| {
        let this = seen.last().unwrap();
        let body = if this.path.starts_with("/2/info") {
            info.clone()
        } else {
            cluster(&this.path).expect("a read of the cluster")
        };
        (200, body.to_string())
    }));
    let by_ip = rapi.url().to_owned();
    let by_name = by_ip.replace("127.0.0.1", "localhost");
    let lock = autorepair::lock::for_cluster(&uuid);
    let run = |url: &str, code: i32| {
        let out = bin()
            .env("AUTOREPAIR_RAPI_PASSWORD", "p")
            .args(["run", "--now", NOW, "--rapi", url, "--rapi-user", "u"])
            .args(["--rapi-ca", testsupport::CA_FILE])
            .assert()
            .code(code);
        stderr_of(&out)
    };
    {
        let _held = autorepair::lock::acquire(&lock).unwrap();
        for url in [&by_ip, &by_name] {
            let stderr = run(url, 4);
            assert!(
                stderr.contains(&lock.display().to_string()),
                "{url}: {stderr}"
            );
        }
    }
    run(&by_name, 0);
    let _ = std::fs::remove_file(&lock);
}

/// The fleet-wide stop: `suspend --all cluster` holds every instance, also those whose own
/// policy a plain suspend leaves repairing (the nearest policy wins), and `resume --all
/// cluster` gives back exactly the fleet it found; a plain `resume` does not lift it.
#[test]
fn suspend_all_stops_every_repair_and_resume_all_undoes_exactly_that() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let before = load(&path);
    let run = |args: &[&str]| {
        let out = bin()
            .args(args)
            .args(["--now", "1800000000", "--cluster"])
            .arg(&path)
            .assert();
        let out = out.get_output();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let submits = |stdout: &String| stdout.lines().filter(|l| l.contains(": submit ")).count();
    let (_, dry, _) = run(&["run", "--dry-run"]);
    assert!(submits(&dry) > 0, "the demo has repairs to start: {dry}");
    // A plain suspend of the cluster leaves the instances and groups with their own policy.
    let (code, said, _) = run(&["suspend", "cluster"]);
    assert_eq!(code, Some(0));
    assert!(said.contains("keep a policy of their own"), "{said}");
    let (_, dry, _) = run(&["run", "--dry-run"]);
    assert!(submits(&dry) > 0, "{dry}");
    run(&["resume", "cluster"]);

    let (code, said, err) = run(&["suspend", "--all", "cluster"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        said.contains("add ganeti:watcher:autorepair:suspend-all") && !said.contains("note:"),
        "{said}"
    );
    let (_, dry, _) = run(&["run", "--dry-run"]);
    assert_eq!(submits(&dry), 0, "{dry}");
    let (_, why, _) = run(&["explain", "db-a1.ams.example"]);
    assert!(why.contains("by `suspend --all`"), "{why}");
    let (code, _, err) = run(&["resume", "cluster"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("`resume --all cluster`"), "{err}");

    let (code, _, err) = run(&["resume", "--all", "cluster"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        load(&path),
        before,
        "resume --all gives back the fleet it found"
    );
}

/// Admin verbs take a target's short name as gnt-* expands it, as status and explain do, and
/// write on the full name.
#[test]
fn admin_verbs_take_short_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let out = bin()
        .args(["suspend", "db-a1", "--now", "1800000000", "--cluster"])
        .arg(&path)
        .assert()
        .success();
    let said = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        said.contains("instance/db-a1.ams.example: add ganeti:watcher:autorepair:suspend"),
        "{said}"
    );
    let tags = load(&path)
        .instances
        .into_iter()
        .find(|i| i.name == "db-a1.ams.example")
        .unwrap()
        .tags;
    assert!(tags.contains(&format!("{PREFIX}suspend")), "{tags:?}");
    bin()
        .args([
            "resume",
            "instance/db-a1",
            "--now",
            "1800000000",
            "--cluster",
        ])
        .arg(&path)
        .assert()
        .success();
    bin()
        .args(["clear", "no-such", "--now", "1800000000", "--cluster"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no-such"));
}
