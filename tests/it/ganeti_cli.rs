//! Ganeti through the binary: its tags, the demo fleet's repairs and admin verbs, the limits
//! and retries on a Ganeti fleet, short names as gnt-* expands them, and a cluster over RAPI
//! (the fake of crates/testsupport) with `--only-on-master`. The rules every family's command
//! line keeps are `face.rs`'s.

use crate::common::bin::{NOW, bin, demo_copy, edit_tags, load, stderr_of};
use crate::common::fake_rapi;
use autorepair::ganeti::tags::PREFIX;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

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

// ---------------------------------------------------------------------------------------------
// `run` against the fake Ganeti RAPI of crates/testsupport (HTTPS on 127.0.0.1, one connection
// per request, HTTP basic auth), playing a two-node cluster whose node n1 is offline with two
// diskless instances on it, under a cluster-wide failover policy, so a pass has writes to make.

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
