//! The machines family live: `--sabakan URL` against the fake sabakan (crates/testsupport, `sabakan`),
//! and the Kubernetes drainer (`--kubeconfig`) against the fake API server over verified TLS
//! (crates/testsupport, `kube`), through the binary, with the README tour's real repair commands.

use crate::common;

use assert_cmd::Command;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use testsupport::kube::{FakeKube, NODE, POD, POD_DISRUPTION_BUDGET, namespace_object, node, pod};
use testsupport::sabakan::{FakeSabakan, Fault, State};

const NOW: i64 = 1_800_000_000;
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The tour's machines in a fake sabakan, whose clock is the passes' `--now`.
struct Live {
    dir: tempfile::TempDir,
    sabakan: FakeSabakan,
    nodes: PathBuf,
}

impl Live {
    fn new() -> Live {
        let dir = tempfile::tempdir().unwrap();
        let sabakan = FakeSabakan::start();
        sabakan.set_now(&jiff::Timestamp::from_second(NOW).unwrap().to_string());
        let demo: Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{ROOT}/fixtures/machines-demo.json")).unwrap(),
        )
        .unwrap();
        sabakan.load(&demo);
        // Two machines under repair at once (the engine's default is one failure domain).
        std::fs::write(
            dir.path().join("autorepair.toml"),
            "[limits]\nmax_domains_under_repair = 2\n",
        )
        .unwrap();
        let nodes = dir.path().join("nodes.json");
        std::fs::copy(format!("{ROOT}/fixtures/machines-demo-nodes.json"), &nodes).unwrap();
        Live {
            dir,
            sabakan,
            nodes,
        }
    }

    /// The binary on this sabakan, without a repair configuration or Nodes.
    fn bare(&self) -> Command {
        let mut c = Command::cargo_bin("autorepair").unwrap();
        // The demo's commands keep their marks in the directory autorepair runs in.
        c.current_dir(self.dir.path())
            .env_remove("AUTOREPAIR_CONFIG")
            .env_remove("KUBECONFIG")
            .env("RUST_LOG", "info")
            .arg("--config")
            .arg(self.dir.path().join("autorepair.toml"))
            .args(["--sabakan", self.sabakan.url()])
            .arg("--lock-file")
            .arg(self.dir.path().join("lock"))
            .arg("--constraints")
            .arg(format!("{ROOT}/fixtures/machines-constraints.json"));
        c
    }

    /// The tour's repair configuration and Nodes file.
    fn bin(&self) -> Command {
        let mut c = self.bare();
        c.arg("--repair-config")
            .arg(format!("{ROOT}/fixtures/machines-demo.yml"))
            .arg("--nodes")
            .arg(&self.nodes);
        c
    }

    /// One pass at `now` (sabakan's clock moved there too): exit code and stderr.
    fn pass(&self, c: Command, now: i64) -> (i32, String) {
        self.pass_with(c, now, &[])
    }

    fn pass_with(&self, mut c: Command, now: i64, extra: &[&str]) -> (i32, String) {
        self.sabakan
            .set_now(&jiff::Timestamp::from_second(now).unwrap().to_string());
        let out = c
            .args(["run", "--now", &now.to_string()])
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn labels(&self, serial: &str) -> BTreeMap<String, String> {
        self.sabakan.labels(serial)
    }

    fn progress(&self, serial: &str) -> String {
        self.labels(serial)
            .get("autorepair.progress")
            .cloned()
            .unwrap_or_default()
    }
}

fn succeeded_with_result(labels: &BTreeMap<String, String>) -> bool {
    labels
        .get("autorepair.progress")
        .is_some_and(|p| p.starts_with("succeeded."))
        && labels
            .values()
            .any(|v| v.starts_with("result.step-1.") && v.contains(".success."))
}

/// The README tour against a live sabakan: entry, drain (the nodes file), the repair command
/// (a real child process), healthy, result, uncordon; every label in sabakan.
#[test]
fn a_full_repair_cycle_against_a_live_sabakan() {
    let t = Live::new();
    // Dry run: one read, nothing written.
    let (code, err) = t.pass_with(t.bin(), NOW, &["--dry-run"]);
    assert_eq!(code, 0, "{err}");
    // status and explain read sabakan too.
    let out = t
        .bin()
        .args(["status", "--json", "--now", &NOW.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cs2 = status["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "rack0-cs2")
        .unwrap();
    assert_eq!(cs2["state"], "needs-repair", "{cs2}");
    let out = t
        .bin()
        .args(["explain", "rack1-cs1", "--now", &NOW.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("suspend"));
    assert!(t.sabakan.writes().is_empty(), "{:?}", t.sabakan.writes());

    for i in 0..6 {
        let (code, err) = t.pass(t.bin(), NOW + 60 * i);
        assert_eq!(code, 0, "pass {i}: {err}");
        if i == 0 {
            // Each write is logged once sabakan took it.
            assert!(
                err.contains("label set") && err.contains("autorepair.entry"),
                "{err}"
            );
        }
    }
    let labels = t.labels("rack0-cs2");
    assert!(succeeded_with_result(&labels), "{labels:?}");
    assert!(t.dir.path().join("repaired/10.69.0.5").exists());
    let nodes = std::fs::read_to_string(&t.nodes).unwrap();
    assert!(!nodes.contains("autorepair.io/cordoned"), "{nodes}");
    // rack 1 is suspended (its boot server's label): its UNREACHABLE machine has no entry.
    assert!(!t.labels("rack1-cs1").contains_key("autorepair.entry"));

    // ckecli's words, live.
    let out = t.bin().args(["repair", "list", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows[0]["address"], "10.69.0.5", "{rows}");
    assert_eq!(rows[0]["status"], "succeeded");
    t.bin()
        .args(["repair", "delete", "--finished"])
        .assert()
        .success();
    assert!(t.progress("rack0-cs2").ends_with(".deleted"));
    let (code, err) = t.pass(t.bin(), NOW + 600);
    assert_eq!(code, 0, "{err}");
    let labels = t.labels("rack0-cs2");
    assert!(
        !labels.contains_key("autorepair.entry") && !labels.contains_key("autorepair.progress"),
        "{labels:?}"
    );
}

/// sabakan refuses one label write (500): that machine's action fails and says which machine
/// and label, the other machine goes on in the same pass, and what was written stays: later
/// passes finish both repairs.
#[test]
fn a_refused_label_write_fails_that_machine_only() {
    let t = Live::new();
    t.sabakan.set_state("rack0-cs1", State::Unhealthy).unwrap();
    t.sabakan.fault(
        Fault::status(500)
            .on_path("/api/v1/labels/rack0-cs2/*")
            .method("PUT"),
    );
    let (code, err) = t.pass(t.bin(), NOW);
    assert_eq!(code, 1, "{err}");
    assert_eq!(t.sabakan.pending_faults(), 0);
    assert!(
        err.contains("machine rack0-cs2, label autorepair.") && err.contains("500"),
        "{err}"
    );
    // The other machine got its entry in the same pass.
    assert!(
        t.labels("rack0-cs1").contains_key("autorepair.entry"),
        "{:?}",
        t.labels("rack0-cs1")
    );
    let before: BTreeMap<String, String> = t.labels("rack0-cs1");
    for i in 1..10 {
        let (code, err) = t.pass(t.bin(), NOW + 60 * i);
        assert_eq!(code, 0, "pass {i}: {err}");
        if i == 1 {
            // Nothing recorded was lost: rack0-cs1's entry is the one of the first pass.
            assert_eq!(
                t.labels("rack0-cs1").get("autorepair.entry"),
                before.get("autorepair.entry")
            );
        }
    }
    for serial in ["rack0-cs1", "rack0-cs2"] {
        let labels = t.labels(serial);
        assert!(succeeded_with_result(&labels), "{serial}: {labels:?}");
    }
}

/// A pass costs one sabakan request (the searchMachines query) plus one per label write.
#[test]
fn a_pass_costs_one_request_plus_one_per_label_write_and_a_look_before_new_entries() {
    let t = Live::new();
    t.sabakan.set_state("rack0-cs1", State::Unhealthy).unwrap();
    let mut writes_seen = 0;
    for i in 0..8 {
        t.sabakan.clear_requests();
        let (code, err) = t.pass(t.bin(), NOW + 60 * i);
        assert_eq!(code, 0, "pass {i}: {err}");
        let requests = t.sabakan.requests();
        let labels = requests
            .iter()
            .filter(|r| r.path.starts_with("/api/v1/labels/"))
            .count();
        let queries: Vec<_> = requests.iter().filter(|r| r.path == "/graphql").collect();
        // Before its new repair entries a pass looks at sabakan again (a suspend given
        // elsewhere meanwhile stops it), at most once a second.
        let entries = requests
            .iter()
            .filter(|r| r.method == "PUT" && r.path.ends_with("/autorepair.entry"))
            .count();
        let looks = queries.len() - 1;
        assert!(
            (entries.min(1)..=entries).contains(&looks),
            "pass {i}: {looks} more look(s) for {entries} entries: {requests:?}"
        );
        assert_eq!(
            requests.len(),
            queries.len() + labels,
            "pass {i}: {requests:?}"
        );
        // Every machine, both variables sent as null: the query's defaults do not apply.
        let body: Value = serde_json::from_str(&queries[0].body).unwrap();
        assert_eq!(
            body["variables"],
            json!({"having": null, "notHaving": null})
        );
        writes_seen += labels;
    }
    assert!(writes_seen > 8, "{writes_seen}");
}

/// The brake from any host, end to end: a suspend label put into sabakan by someone else
/// after the pass read the machines (the machine's own, its rack's on another machine of the
/// rack, the cluster's on a machine of another rack) stops the pass before its repair entry;
/// one on another rack does not.
#[test]
fn a_suspend_put_into_sabakan_while_a_pass_runs_stops_its_new_entry() {
    // (case, machine the label goes on, label, what the pass names as suspended)
    let cases = [
        ("own", "rack0-cs2", "autorepair.suspend", Some("rack0-cs2")),
        ("rack", "rack0-cs1", "autorepair.rack.suspend", Some("rack")),
        (
            "cluster",
            "rack1-ss1",
            "autorepair.cluster.suspend",
            Some("cluster"),
        ),
        ("other rack", "rack1-ss1", "autorepair.rack.suspend", None),
    ];
    for (case, on, label, halts) in cases {
        let t = Live::new();
        let (on, label) = (on.to_owned(), label.to_owned());
        let first_read = std::sync::atomic::AtomicBool::new(false);
        t.sabakan.after_each(move |request, machines| {
            let query = request.path == "/graphql" && request.body.contains("searchMachines");
            if query && !first_read.swap(true, std::sync::atomic::Ordering::SeqCst) {
                let m = machines.get_mut(&on).expect("a demo machine");
                m.labels.insert(label.clone(), String::new());
            }
        });
        t.sabakan.clear_requests();
        let (code, err) = t.pass(t.bin(), NOW);
        let writes = t.sabakan.writes();
        let entries = writes
            .iter()
            .filter(|r| r.path.ends_with("/autorepair.entry"))
            .count();
        match halts {
            Some(object) => {
                assert_eq!(entries, 0, "{case}: an entry was made: {err}");
                let said = err
                    .lines()
                    .find(|l| l.contains("was suspended in the fleet while this pass ran"))
                    .unwrap_or_else(|| panic!("{case}: no halt said (exit {code}): {err}"));
                assert!(said.contains(object), "{case}: {said}");
                // The look is made before the entry, the write that starts the repair: the
                // pending label before it may be written, and the next pass, which finds the
                // suspend where it reads, does not carry that repair on.
                let (code, err) = t.pass(t.bin(), NOW + 60);
                let entries = t
                    .sabakan
                    .writes()
                    .iter()
                    .filter(|r| r.path.ends_with("/autorepair.entry"))
                    .count();
                assert_eq!(entries, 0, "{case}: the next pass (exit {code}): {err}");
            }
            None => assert_eq!(entries, 1, "{case}: exit {code}: {err}"),
        }
    }
}

/// `simulate` on a live sabakan reads it once and writes nothing; the repairs it reports are
/// the world's, on its copy, and none of the tour's repair commands runs.
#[test]
fn simulate_reads_sabakan_once_and_writes_nothing() {
    let t = Live::new();
    let before: Vec<_> = ["rack0-cs2", "rack1-cs1", "boot-0"]
        .iter()
        .map(|s| t.labels(s))
        .collect();
    t.sabakan.clear_requests();
    let out = t
        .bin()
        .args(["simulate", "--scenarios", "2", "--json", "--now"])
        .arg(NOW.to_string())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        summary["stats"]["repairs_succeeded"].as_u64().unwrap() > 0,
        "{summary}"
    );
    let requests = t.sabakan.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0].path, "/graphql", "{requests:?}");
    let after: Vec<_> = ["rack0-cs2", "rack1-cs1", "boot-0"]
        .iter()
        .map(|s| t.labels(s))
        .collect();
    assert_eq!(after, before);
    assert!(
        !t.dir.path().join("repaired").exists(),
        "a repair command ran"
    );
}

/// `--now` reaches the backend: a REST machines file's state timestamps are read against it,
/// so an UNREACHABLE machine out of the cluster waits `wait-seconds-to-repair-rebooting`
/// counted from the fixed clock, not from the wall clock.
#[test]
fn the_fixed_clock_reaches_the_machines_file() {
    let dir = tempfile::tempdir().unwrap();
    let machines = dir.path().join("machines.json");
    // rack1-cs1 (10.69.1.4, no Node) UNREACHABLE since 2023: years ago by the wall clock.
    let mut demo: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{ROOT}/fixtures/machines-demo.json")).unwrap(),
    )
    .unwrap();
    let since = 1_700_000_000;
    for m in demo.as_array_mut().unwrap() {
        m["status"]["timestamp"] = json!(jiff::Timestamp::from_second(since).unwrap().to_string());
        if m["spec"]["serial"] == "boot-1" {
            m["spec"]["labels"] = json!({});
        }
    }
    std::fs::write(&machines, demo.to_string()).unwrap();
    let status = |now: i64| -> Value {
        let out = Command::cargo_bin("autorepair")
            .unwrap()
            .current_dir(ROOT)
            .env_remove("AUTOREPAIR_CONFIG")
            .args(["--config", "/dev/null", "--sabakan-file"])
            .arg(&machines)
            .arg("--nodes")
            .arg(format!("{ROOT}/fixtures/machines-demo-nodes.json"))
            .args([
                "--repair-config",
                &format!("{ROOT}/fixtures/machines-demo.yml"),
                "--constraints",
                &format!("{ROOT}/fixtures/machines-constraints.json"),
                "status",
                "--json",
                "--now",
                &now.to_string(),
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let s: Value = serde_json::from_slice(&out.stdout).unwrap();
        s["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "rack1-cs1")
            .unwrap()
            .clone()
    };
    // 100 s after it became UNREACHABLE: it waits (the constraint is 300 s).
    let early = status(since + 100);
    assert!(
        early["needs_person"]
            .as_str()
            .is_some_and(|w| w.contains("UNREACHABLE for 100s")
                && w.contains("wait-seconds-to-repair-rebooting")),
        "{early}"
    );
    let late = status(since + 1000);
    assert!(late["needs_person"].is_null(), "{late}");
    assert_eq!(late["needed_repair"], "step-1", "{late}");
}

// ---------------------------------------------------------------------------------------------
// The Kubernetes drainer.

/// The demo's procedure with CKE's drain settings: `team` is protected, `scratch` is not.
const REPAIR: &str = r#"
repair:
  repair_procedures:
    - machine_types: ["qemu"]
      repair_operations:
        - operation: unhealthy
          repair_steps:
            - repair_command: ["sh", "-c", 'mkdir -p repaired && touch "repaired/$1"', "demo-repair"]
              need_drain: true
          health_check_command: ["sh", "-c", 'if [ -e "repaired/$1" ]; then echo true; else echo false; fi', "demo-health"]
  max_concurrent_repairs: 2
  protected_namespaces: {matchLabels: {protected: "yes"}}
  evict_retries: 3
  eviction_timeout_seconds: 600
"#;

fn pod_names(kube: &FakeKube) -> Vec<String> {
    let mut names: Vec<String> = kube
        .objects(&POD)
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

fn cordon(kube: &FakeKube) -> (bool, Option<String>) {
    let n = kube.get(&NODE, "", "10.69.0.5").unwrap();
    (
        n["spec"]["unschedulable"] == true,
        kube.annotation(&NODE, "", "10.69.0.5", "autorepair.io/cordoned"),
    )
}

/// A drain through the Eviction API: cordon, evictions, a budget's refusal (429) tried again
/// on later passes and, past eviction_timeout_seconds, CKE's back-off with the Node
/// uncordoned; a Pod of a protected namespace is never deleted to get round its budget, one
/// of another namespace is; DaemonSet Pods stay. Once the budget allows, the drain finishes,
/// the repair command runs, and the Node is uncordoned at the end.
#[test]
fn a_kubernetes_drain_by_ckes_rules() {
    let t = Live::new();
    let kube = FakeKube::builder().tls().start();
    let cfg = t.dir.path().join("kubeconfig");
    // The current context is the wrong one: --kube-context picks the fake.
    std::fs::write(&cfg, common::kubeconfig(kube.url(), "wrong")).unwrap();
    let repair = t.dir.path().join("repair.yml");
    std::fs::write(&repair, REPAIR).unwrap();
    // rack0-cs1's Node is cordoned by someone else (a reboot tool, say): drained, but never
    // claimed nor uncordoned.
    t.sabakan.set_state("rack0-cs1", State::Unhealthy).unwrap();
    kube.insert(
        node("10.69.0.4")
            .label("node-role.kubernetes.io/control-plane", "true")
            .unschedulable(true)
            .build(),
    );
    kube.insert(node("10.69.0.5").build());
    kube.insert(namespace_object("team").label("protected", "yes").build());
    kube.insert(namespace_object("scratch").build());
    let on = |name: &str, ns: &str, kind: &str| {
        pod(name)
            .namespace(ns)
            .node_name("10.69.0.5")
            .label(
                "app",
                name.trim_end_matches(char::is_numeric)
                    .trim_end_matches('-'),
            )
            .owner(
                "apps/v1",
                kind,
                &format!("{name}-owner"),
                &format!("u-{name}"),
                true,
            )
            .build()
    };
    kube.insert(on("web-1", "team", "ReplicaSet"));
    kube.insert(on("web-2", "team", "ReplicaSet"));
    kube.insert(on("cache", "scratch", "StatefulSet"));
    kube.insert(on("agent", "kube-system", "DaemonSet"));
    kube.insert(
        testsupport::kube::pod_disruption_budget("web", &[("app", "web")], 1)
            .namespace("team")
            .build(),
    );
    kube.insert(
        testsupport::kube::pod_disruption_budget("cache", &[("app", "cache")], 0)
            .namespace("scratch")
            .build(),
    );
    let bin = || {
        let mut c = t.bare();
        c.arg("--repair-config")
            .arg(&repair)
            .arg("--kubeconfig")
            .arg(&cfg)
            .args(["--kube-context", "good"]);
        c
    };
    let pass = |now: i64| {
        let (code, err) = t.pass(bin(), now);
        assert_eq!(code, 0, "at {now}: {err}");
        err
    };

    pass(NOW);
    assert!(t.progress("rack0-cs2").starts_with("queued."));
    assert_eq!(cordon(&kube), (false, None));

    // The drain starts: dry run, cordon, evictions. web-1 goes (the budget allowed one),
    // web-2 is refused (429) and stays (protected namespace), cache is refused and deleted
    // (not protected), agent stays (DaemonSet).
    pass(NOW + 60);
    assert!(
        t.progress("rack0-cs2")
            .starts_with("processing.0.draining."),
        "{}",
        t.progress("rack0-cs2")
    );
    assert_eq!(cordon(&kube), (true, Some("true".into())));
    assert_eq!(pod_names(&kube), ["agent", "web-2"]);

    // Refused again on the next pass: tried, not deleted.
    kube.clear_requests();
    let err = pass(NOW + 120);
    let evictions = kube
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/web-2/eviction"))
        .count();
    assert_eq!(evictions, 1, "{err}");
    assert!(err.contains("eviction refused"), "{err}");
    assert_eq!(pod_names(&kube), ["agent", "web-2"]);
    assert!(
        t.progress("rack0-cs2")
            .starts_with("processing.0.draining.")
    );

    // Past eviction_timeout_seconds: the repair backs off (CKE's back-off, count 1) and the
    // Node is uncordoned by the pass after.
    pass(NOW + 60 + 601);
    let p = t.progress("rack0-cs2");
    let fields: Vec<&str> = p.split('.').collect();
    assert_eq!(&fields[..3], ["processing", "0", "waiting"], "{p}");
    assert_eq!(fields[4], "1", "{p}");
    let expire: i64 = fields[5].parse().unwrap();
    let at = NOW + 60 + 601;
    assert!(expire >= at + 300 && expire < at + 600, "{p}");
    pass(at + 60);
    assert_eq!(cordon(&kube), (false, None));
    assert_eq!(pod_names(&kube), ["agent", "web-2"]);

    // In back-off nothing happens; after it, with the budget allowing, the drain finishes.
    kube.mutate(&POD_DISRUPTION_BUDGET, "team", "web", |b| {
        b["status"]["disruptionsAllowed"] = json!(1);
    });
    pass(at + 120);
    assert_eq!(cordon(&kube), (false, None));
    let mut now = expire + 1;
    for _ in 0..5 {
        pass(now);
        now += 60;
    }
    assert_eq!(pod_names(&kube), ["agent"]);
    assert!(t.dir.path().join("repaired/10.69.0.5").exists());
    let labels = t.labels("rack0-cs2");
    assert!(succeeded_with_result(&labels), "{labels:?}");
    assert_eq!(cordon(&kube), (false, None));
    // Someone else's cordon stayed theirs, through a repair that drained the Node.
    assert!(succeeded_with_result(&t.labels("rack0-cs1")));
    let cp = kube.get(&NODE, "", "10.69.0.4").unwrap();
    assert_eq!(cp["spec"]["unschedulable"], true, "{cp}");
    assert_eq!(
        kube.annotation(&NODE, "", "10.69.0.4", "autorepair.io/cordoned"),
        None
    );
    let _ = Path::new(ROOT);
}

/// An https:// sabakan is verified: a server whose certificate no trusted CA vouches for is
/// refused; with `--sabakan-ca` the same server is talked to (here a fake API server that is
/// no sabakan, so what fails then is the answer, not the handshake).
#[test]
fn an_https_sabakan_is_verified() {
    let kube = FakeKube::builder().tls().start();
    let dir = tempfile::tempdir().unwrap();
    let status = |ca: bool| {
        let mut c = Command::cargo_bin("autorepair").unwrap();
        c.current_dir(ROOT)
            .env_remove("AUTOREPAIR_CONFIG")
            .args(["--config", "/dev/null", "--sabakan", kube.url()])
            .arg("--lock-file")
            .arg(dir.path().join("lock"))
            .arg("--repair-config")
            .arg(format!("{ROOT}/fixtures/machines-demo.yml"))
            .arg("--nodes")
            .arg(format!("{ROOT}/fixtures/machines-demo-nodes.json"));
        if ca {
            c.arg("--sabakan-ca").arg(testsupport::CA_FILE);
        }
        let out = c.arg("status").output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = status(false);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.to_lowercase().contains("certificate"), "{err}");
    let (code, err) = status(true);
    assert_eq!(code, Some(3), "{err}");
    assert!(!err.to_lowercase().contains("certificate"), "{err}");
    assert!(err.contains("answered HTTP"), "{err}");
}
