//! Repairs on a real two-node Ganeti 3.0 cluster (contrib/testbed). Run with the testbed up and
//! its env file sourced: `contrib/testbed/up && . /var/tmp/autorepair-testbed/env && cargo test
//! --test it ganeti::` (one scenario: `AUTOREPAIR_TESTBED_SCENARIOS=drained cargo test --test it
//! ganeti::every_scenario -- --nocapture`). build.rs sets `cfg(testbed)` when
//! AUTOREPAIR_TESTBED_RAPI is set at build time; without it the test is reported as ignored,
//! never as passed.
//!
//! Every assertion reads the cluster itself: where the instance runs, its tags as Ganeti stores
//! them, the status of the jobs Ganeti ran.

mod replicas;

use assert_cmd::Command;
use autorepair::engine::backend::{Backend, Dying};
use autorepair::ganeti::rapi::{Endpoint, Password, Rapi};
use autorepair::ganeti::tags::{self, PREFIX, RepairResult, Tag};
use reqwest::blocking::Client;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One cluster: scenarios run one at a time.
static CLUSTER: Mutex<()> = Mutex::new(());

struct Testbed {
    url: String,
    user: String,
    password_file: PathBuf,
    ca: PathBuf,
    node1: String,
    node2: String,
    http: Client,
    password: String,
    dir: tempfile::TempDir,
}

fn testbed() -> Testbed {
    let Ok(url) = std::env::var("AUTOREPAIR_TESTBED_RAPI") else {
        panic!(
            "no Ganeti testbed env at run time (built with it, or run with --ignored): run contrib/testbed/up and source /var/tmp/autorepair-testbed/env"
        );
    };
    let var =
        |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} missing from the testbed env"));
    let ca = PathBuf::from(var("AUTOREPAIR_TESTBED_CA"));
    let password_file = PathBuf::from(var("AUTOREPAIR_TESTBED_PASSWORD_FILE"));
    let pem = std::fs::read(&ca).unwrap();
    let http = Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let password = std::fs::read_to_string(&password_file)
        .unwrap()
        .trim()
        .to_owned();
    Testbed {
        url,
        user: var("AUTOREPAIR_TESTBED_USER"),
        password_file,
        ca,
        node1: var("AUTOREPAIR_TESTBED_NODE1"),
        node2: var("AUTOREPAIR_TESTBED_NODE2"),
        http,
        password,
        dir: tempfile::tempdir().unwrap(),
    }
}

fn script(name: &str, args: &[&str]) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/contrib/testbed/");
    let out = std::process::Command::new(format!("{path}{name}"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "contrib/testbed/{name} {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

const FQDN: &str = ".example.test";

impl Testbed {
    fn get(&self, path: &str) -> Value {
        let r = self
            .http
            .get(format!("{}{path}", self.url))
            .basic_auth(&self.user, Some(&self.password))
            .send()
            .unwrap();
        assert!(r.status().is_success(), "GET {path}: {}", r.status());
        r.json().unwrap()
    }

    fn job(&self, method: reqwest::Method, path: &str, body: Value) -> u64 {
        let r = self
            .http
            .request(method, format!("{}{path}", self.url))
            .basic_auth(&self.user, Some(&self.password))
            .json(&body)
            .send()
            .unwrap();
        assert!(r.status().is_success(), "{path}: {}", r.status());
        let v: Value = r.json().unwrap();
        let id = v.as_u64().or_else(|| v.as_str()?.parse().ok()).unwrap();
        assert_eq!(self.wait(id), "success", "job {id} for {path}");
        id
    }

    fn wait(&self, id: u64) -> String {
        let start = Instant::now();
        loop {
            let j = self.get(&format!("/2/jobs/{id}"));
            let status = j["status"].as_str().unwrap_or("unknown").to_owned();
            if ["success", "error", "canceled"].contains(&status.as_str()) {
                return status;
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "job {id} still {status}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until no job in the queue is unfinished.
    fn settle(&self) {
        let start = Instant::now();
        loop {
            let jobs = self.get("/2/jobs?bulk=1");
            let busy = jobs.as_array().unwrap().iter().any(|j| {
                !["success", "error", "canceled"].contains(&j["status"].as_str().unwrap_or(""))
            });
            if !busy {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(180),
                "jobs still running"
            );
            std::thread::sleep(Duration::from_millis(150));
        }
    }

    fn role(&self, node: &str, role: &str) {
        self.job(
            reqwest::Method::PUT,
            &format!("/2/nodes/{node}/role"),
            json!(role),
        );
    }

    fn add_tags(&self, path: &str, tags: &[String]) {
        let q: Vec<String> = tags.iter().map(|t| format!("tag={t}")).collect();
        self.job(
            reqwest::Method::PUT,
            &format!("{path}?{}", q.join("&")),
            Value::Null,
        );
    }

    fn pnode(&self, inst: &str) -> String {
        self.get(&format!("/2/instances/{inst}{FQDN}"))["pnode"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    fn tags(&self, inst: &str) -> Vec<String> {
        self.tags_of(&format!("/2/instances/{inst}{FQDN}/tags"))
    }

    /// The tags at a RAPI tags path, as Ganeti stores them now.
    fn tags_of(&self, path: &str) -> Vec<String> {
        let v = self.get(path);
        v.as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_owned())
            .collect()
    }

    /// The instance's autorepair results, as Ganeti stores them.
    fn results(&self, inst: &str) -> Vec<(String, RepairResult, Vec<u64>)> {
        self.tags(inst)
            .iter()
            .filter_map(|t| match tags::parse(t) {
                Ok(Tag::Result(r)) => Some((r.repair.to_string(), r.result, r.ops.to_vec::<u64>())),
                _ => None,
            })
            .collect()
    }

    fn pending(&self, inst: &str) -> usize {
        self.tags(inst)
            .iter()
            .filter(|t| matches!(tags::parse(t), Ok(Tag::Pending(_))))
            .count()
    }

    /// Jobs Ganeti ran with the given OP_ID on the instance.
    fn jobs_of(&self, inst: &str, op_id: &str) -> Vec<(u64, String)> {
        let name = format!("{inst}{FQDN}");
        let jobs = self.get("/2/jobs?bulk=1");
        jobs.as_array()
            .unwrap()
            .iter()
            .filter(|j| {
                j["ops"].as_array().is_some_and(|ops| {
                    ops.iter()
                        .any(|o| o["OP_ID"] == op_id && o["instance_name"] == name.as_str())
                })
            })
            .map(|j| {
                (
                    j["id"].as_u64().unwrap(),
                    j["status"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect()
    }

    fn config(&self, iallocator: &str) -> PathBuf {
        let path = self.dir.path().join("autorepair.toml");
        std::fs::write(
            &path,
            format!("[limits]\nmax_pending = 5\n[ganeti]\niallocator = \"{iallocator}\"\n"),
        )
        .unwrap();
        path
    }

    /// A config file with exactly `text` (empty: every limit at its default).
    fn config_text(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn std_command(&self, iallocator: &str) -> std::process::Command {
        self.std_command_with(&self.config(iallocator))
    }

    /// autorepair as the testbed's write user, with the given config file.
    fn std_command_with(&self, config: &Path) -> std::process::Command {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("autorepair"));
        c.env_remove("AUTOREPAIR_RAPI_PASSWORD")
            .arg("--rapi")
            .arg(&self.url)
            .arg("--rapi-user")
            .arg(&self.user)
            .arg("--rapi-password-file")
            .arg(&self.password_file)
            .arg("--rapi-ca")
            .arg(&self.ca)
            .arg("--lock-file")
            .arg(self.dir.path().join("lock"))
            .arg("--config")
            .arg(config);
        c
    }

    /// autorepair against `url` as `user`, trusting `ca`, for reads.
    fn as_user(&self, url: &str, user: &str, password_file: &Path, ca: &Path) -> Command {
        let mut c = Command::cargo_bin("autorepair").unwrap();
        c.env_remove("AUTOREPAIR_RAPI_PASSWORD")
            .env("NO_COLOR", "1")
            .args(["--rapi", url, "--rapi-user", user, "--rapi-password-file"])
            .arg(password_file)
            .arg("--rapi-ca")
            .arg(ca)
            .arg("--lock-file")
            .arg(self.dir.path().join("lock"))
            .arg("--config")
            .arg(self.config("hail"));
        c
    }

    fn autorepair(&self, iallocator: &str) -> Command {
        Command::from_std(self.std_command(iallocator))
    }

    /// One real pass, then wait for the cluster to finish what it started.
    fn pass(&self, iallocator: &str) {
        self.autorepair(iallocator).args(["run"]).assert().success();
        self.settle();
    }

    fn passes(&self, n: usize, iallocator: &str) {
        for _ in 0..n {
            self.pass(iallocator);
        }
    }

    /// One real pass with the given config file; the cluster is not waited for.
    fn run_with(&self, config: &Path) {
        Command::from_std(self.std_command_with(config))
            .arg("run")
            .assert()
            .success();
    }

    /// Every job in the queue (archived jobs excepted), by id.
    fn job_ids(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .get("/2/jobs?bulk=1")
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["id"].as_u64().unwrap())
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Every tag on the cluster, its groups, nodes and the given instances, as Ganeti stores them.
    fn all_tags(&self, instances: &[&str]) -> Vec<(String, Vec<String>)> {
        let mut paths = vec!["/2/tags".to_owned(), "/2/groups/default/tags".to_owned()];
        for n in [&self.node1, &self.node2] {
            paths.push(format!("/2/nodes/{n}/tags"));
        }
        for i in instances {
            paths.push(format!("/2/instances/{i}{FQDN}/tags"));
        }
        paths
            .into_iter()
            .map(|p| {
                let mut tags: Vec<String> = self
                    .get(&p)
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.as_str().unwrap().to_owned())
                    .collect();
                tags.sort();
                (p, tags)
            })
            .collect()
    }

    fn endpoint(&self) -> Endpoint {
        Endpoint {
            url: self.url.clone(),
            user: self.user.clone(),
            password: Password::Given(self.password.clone()),
            ca_file: Some(self.ca.clone()),
            insecure: false,
            timeout: Duration::from_secs(60),
            run_status: false,
        }
    }
}

/// Every scenario on the real cluster, one after the other, in one test. The cluster takes one
/// scenario at a time; as separate tests, each queued on the cluster's lock held a test thread,
/// and libtest hands out tests in name order: once it reached `ganeti::`, every thread but one
/// waited on the lock until nearly all scenarios had run, and the rest of the suite waited
/// behind them (docs/testing.md). As one test, the scenarios hold one thread.
///
/// Each scenario is reported on its own (its name, `ok` or its failure, its time), and the test
/// fails naming every scenario that failed. `AUTOREPAIR_TESTBED_SCENARIOS=drained,replicas`
/// runs only the scenarios whose names contain one of those words.
#[test]
#[cfg_attr(not(testbed), ignore = "needs the Ganeti testbed: contrib/testbed/up")]
fn every_scenario_on_the_real_cluster() {
    macro_rules! scenario {
        ($f:path) => {
            (stringify!($f), $f as fn())
        };
    }
    let scenarios: &[(&str, fn())] = &[
        scenario!(offline_primary_fails_over_diskless_and_sharedfile_instances),
        scenario!(drained_primary_is_live_migrated),
        scenario!(file_instance_on_an_offline_node_is_recreated_then_reinstalled),
        scenario!(a_policy_too_low_writes_enoperm_once_and_changes_nothing),
        scenario!(suspends_hold_and_an_instance_allow_overrides_them),
        scenario!(an_admin_verb_returns_once_its_tag_shows_on_a_busy_cluster),
        scenario!(a_suspend_by_another_url_stops_a_waiting_pass_and_its_queued_repairs),
        scenario!(a_suspend_from_another_host_stops_a_waiting_pass_and_its_queued_repairs),
        scenario!(a_once_off_request_repairs_without_any_policy),
        scenario!(a_failing_job_records_a_failure_and_parks_the_instance),
        scenario!(a_kill_mid_pass_never_duplicates_a_job),
        scenario!(two_concurrent_runs_never_act_twice),
        scenario!(a_real_cluster_can_be_saved_and_replayed_offline),
        scenario!(read_only_users_see_status_and_nodes_and_cannot_write),
        scenario!(a_wrong_certificate_a_closed_port_and_an_unknown_name_each_say_so),
        scenario!(one_dead_node_is_failed_over_in_one_pass_with_the_default_config),
        scenario!(a_mass_failure_writes_nothing_and_no_policy_gets_no_tag),
        scenario!(replicas::one_replica_acts_whichever_is_killed_paused_or_cut_off),
    ];
    let only: Vec<String> = std::env::var("AUTOREPAIR_TESTBED_SCENARIOS")
        .map(|v| v.split(',').map(str::to_owned).collect())
        .unwrap_or_default();
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, scenario) in scenarios {
        if !only.is_empty() && !only.iter().any(|w| name.contains(w.as_str())) {
            continue;
        }
        ran += 1;
        let start = Instant::now();
        let outcome = std::panic::catch_unwind(scenario);
        let took = start.elapsed().as_secs_f64();
        match outcome {
            Ok(()) => eprintln!("scenario ganeti::{name} ... ok ({took:.1} s)"),
            Err(e) => {
                let message = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                eprintln!("scenario ganeti::{name} ... FAILED ({took:.1} s)");
                failed.push(format!("{name}: {message}"));
            }
        }
    }
    assert!(
        ran > 0,
        "AUTOREPAIR_TESTBED_SCENARIOS={only:?} names no scenario"
    );
    assert!(
        failed.is_empty(),
        "{} of {ran} scenarios failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

/// A clean cluster with the given instances (`(name, node 1 or 2, template)`), as
/// `contrib/testbed/instance` makes them (`instN` has the address 10.99.1.N in /etc/hosts), but
/// through RAPI and all at once: a `gnt-instance add` each, one after the other, took 2.4 s an
/// instance, most of it starting Python.
fn fresh(tb: &Testbed, instances: &[(&str, u8, &str)]) {
    script("reset", &[]);
    std::thread::scope(|scope| {
        for (name, node, template) in instances {
            scope.spawn(move || {
                let pnode = if *node == 1 { &tb.node1 } else { &tb.node2 };
                let n: u8 = name
                    .strip_prefix("inst")
                    .and_then(|n| n.parse().ok())
                    .filter(|n| (1..=60).contains(n))
                    .unwrap_or_else(|| panic!("{name}: testbed instances are inst1 to inst60"));
                let disks = match *template {
                    "diskless" => json!([]),
                    "file" | "sharedfile" => json!([{"size": 1024}]),
                    other => panic!("{name}: template {other} (diskless, file or sharedfile)"),
                };
                tb.job(
                    reqwest::Method::POST,
                    "/2/instances",
                    json!({
                        "__version__": 1,
                        "mode": "create",
                        "name": format!("{name}{FQDN}"),
                        "disk_template": template,
                        "disks": disks,
                        "nics": [{"ip": format!("10.99.1.{n}")}],
                        "os_type": "noop",
                        "pnode": pnode,
                        "beparams": {"memory": 128},
                        "name_check": false,
                        "ip_check": false,
                    }),
                );
            });
        }
    });
}

fn t(s: &str) -> String {
    format!("{PREFIX}{s}")
}

fn offline_primary_fails_over_diskless_and_sharedfile_instances() {
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    fresh(&tb, &[("inst1", 2, "diskless"), ("inst2", 2, "sharedfile")]);
    tb.add_tags("/2/tags", &[t("failover")]);
    tb.role(&tb.node2, "offline");
    tb.passes(2, "hail");
    for inst in ["inst1", "inst2"] {
        assert_eq!(
            tb.pnode(inst),
            tb.node1,
            "{inst} moved off the offline node"
        );
        let results = tb.results(inst);
        assert_eq!(results.len(), 1, "{inst}: {results:?}");
        let (repair, result, jobs) = &results[0];
        assert_eq!(
            (repair.as_str(), *result),
            ("failover", RepairResult::Success)
        );
        assert_eq!(tb.wait(jobs[0]), "success");
        assert_eq!(tb.pending(inst), 0);
        assert_eq!(
            tb.jobs_of(inst, "OP_INSTANCE_FAILOVER").len(),
            1,
            "one failover, not two"
        );
    }
}

fn drained_primary_is_live_migrated() {
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    fresh(&tb, &[("inst3", 2, "diskless")]);
    tb.add_tags("/2/groups/default/tags", &[t("migrate")]);
    tb.role(&tb.node2, "drained");
    tb.passes(2, "hail");
    assert_eq!(tb.pnode("inst3"), tb.node1);
    let migrations = tb.jobs_of("inst3", "OP_INSTANCE_MIGRATE");
    assert_eq!(migrations.len(), 1);
    assert_eq!(migrations[0].1, "success");
    assert_eq!(
        tb.jobs_of("inst3", "OP_INSTANCE_FAILOVER").len(),
        0,
        "no failover where a migration does"
    );
    assert_eq!(tb.results("inst3")[0].0, "migrate");
}

fn file_instance_on_an_offline_node_is_recreated_then_reinstalled() {
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    fresh(&tb, &[("inst4", 2, "file")]);
    tb.add_tags("/2/tags", &[t("reinstall")]);
    tb.role(&tb.node2, "offline");
    // hail cannot place file disks here ("FailN1"): autorepair picks the node itself.
    tb.passes(3, "");
    assert_eq!(tb.pnode("inst4"), tb.node1);
    let recreate = tb.jobs_of("inst4", "OP_INSTANCE_RECREATE_DISKS");
    let reinstall = tb.jobs_of("inst4", "OP_INSTANCE_REINSTALL");
    assert_eq!(
        (recreate.len(), reinstall.len()),
        (1, 1),
        "{recreate:?} {reinstall:?}"
    );
    assert!(
        recreate[0].0 < reinstall[0].0,
        "recreate-disks runs before the reinstall"
    );
    assert_eq!(
        (recreate[0].1.as_str(), reinstall[0].1.as_str()),
        ("success", "success")
    );
    let results = tb.results("inst4");
    assert_eq!(results.len(), 1);
    assert_eq!(
        (results[0].0.as_str(), results[0].1),
        ("reinstall", RepairResult::Success)
    );
    assert_eq!(
        results[0].2,
        vec![recreate[0].0, reinstall[0].0],
        "the result names both jobs"
    );
}

fn a_policy_too_low_writes_enoperm_once_and_changes_nothing() {
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    fresh(&tb, &[("inst5", 2, "diskless")]);
    tb.add_tags("/2/tags", &[t("migrate")]);
    tb.role(&tb.node2, "offline");
    tb.passes(3, "hail");
    assert_eq!(tb.pnode("inst5"), tb.node2, "not moved");
    let results = tb.results("inst5");
    assert_eq!(
        results.len(),
        1,
        "one enoperm over three passes: {results:?}"
    );
    assert_eq!(
        (results[0].0.as_str(), results[0].1),
        ("failover", RepairResult::Enoperm)
    );
    assert!(tb.jobs_of("inst5", "OP_INSTANCE_FAILOVER").is_empty());
}

fn suspends_hold_and_an_instance_allow_overrides_them() {
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    fresh(
        &tb,
        &[
            ("inst6", 2, "diskless"),
            ("inst7", 2, "diskless"),
            ("inst8", 2, "diskless"),
        ],
    );
    tb.add_tags("/2/tags", &[t("failover"), t("suspend")]);
    tb.add_tags("/2/groups/default/tags", &[t("suspend:4102444800")]);
    tb.add_tags("/2/instances/inst6.example.test/tags", &[t("failover")]);
    tb.role(&tb.node2, "offline");
    tb.passes(2, "hail");
    assert_eq!(
        tb.pnode("inst6"),
        tb.node1,
        "its own allow beats the suspends"
    );
    for inst in ["inst7", "inst8"] {
        assert_eq!(tb.pnode(inst), tb.node2, "{inst} stays while suspended");
        assert!(tb.results(inst).is_empty() && tb.jobs_of(inst, "OP_INSTANCE_FAILOVER").is_empty());
    }
    // Lifting the group suspend leaves the cluster's in force: the nearest policy is now the
    // cluster's suspend, and still nothing moves.
    let cmd = |args: &[&str]| tb.autorepair("hail").args(args).assert().success();
    cmd(&["resume", "group/default"]);
    tb.passes(1, "hail");
    assert_eq!(tb.pnode("inst7"), tb.node2);
    cmd(&["resume", "cluster"]);
    tb.passes(2, "hail");
    assert_eq!(tb.pnode("inst7"), tb.node1);
    assert_eq!(tb.pnode("inst8"), tb.node1);
}

/// Runs a gnt-* command on the master (this host), as an admin would.
fn gnt(args: &[&str]) -> String {
    let out = std::process::Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Ganeti runs one job at a time while this lives, as a cluster busy with repairs does for the
/// jobs behind them; contrib/testbed/reset sets it back too.
struct OneJobAtATime;

impl OneJobAtATime {
    fn new() -> OneJobAtATime {
        gnt(&["gnt-cluster", "modify", "--max-running-jobs", "1"]);
        OneJobAtATime
    }
}

impl Drop for OneJobAtATime {
    fn drop(&mut self) {
        gnt(&["gnt-cluster", "modify", "--max-running-jobs", "20"]);
    }
}

/// `suspend group/X; resume group/X` on a busy cluster failed with "not suspended" and left
/// the suspend in place: the suspend returned before Ganeti applied its tag job. An admin
/// verb now returns once its tag shows.
fn an_admin_verb_returns_once_its_tag_shows_on_a_busy_cluster() {
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    fresh(&tb, &[]);
    let busy = OneJobAtATime::new();
    // A job ahead of the suspend's tag job holds the only slot for 4 s.
    gnt(&["gnt-debug", "delay", "--submit", "4"]);
    let began = Instant::now();
    let cmd = |args: &[&str]| tb.autorepair("hail").args(args).assert().success();
    cmd(&["suspend", "group/default"]);
    let took = began.elapsed();
    assert!(
        tb.tags_of("/2/groups/default/tags").contains(&t("suspend")),
        "suspend returned after {took:?} without its tag"
    );
    cmd(&["resume", "group/default"]);
    assert!(tb.tags_of("/2/groups/default/tags").is_empty());
    drop(busy);
}

/// The brake on the real cluster: while a pass waits for Ganeti to apply its tag jobs (one job
/// at a time, behind a long one), `suspend cluster` given by another URL of the cluster stops
/// it within seconds, and the repair jobs it queued never run. The pass and the suspend each
/// take the default lock, named by the cluster's uuid: the brake was beside the URL's lock, so
/// a suspend by `localhost` never reached a pass by `127.0.0.1`.
fn a_suspend_by_another_url_stops_a_waiting_pass_and_its_queued_repairs() {
    a_suspend_stops_a_waiting_pass(SuspendFrom::AnotherUrl);
}

/// The brake from another host: the suspend is given in node2's network and mount namespaces,
/// through node1's address, with a lock of its own (its brake file is not the pass's). The
/// pass watches the cluster's own suspend marks and the tag jobs queued since it began: it
/// stopped only when its tag jobs ran (many seconds later, and its repairs ran too).
fn a_suspend_from_another_host_stops_a_waiting_pass_and_its_queued_repairs() {
    a_suspend_stops_a_waiting_pass(SuspendFrom::Node2);
}

#[derive(Clone, Copy, Debug)]
enum SuspendFrom {
    /// This host, `https://localhost:5080`, the default lock.
    AnotherUrl,
    /// node2, through a forwarder on node1's address, its own lock.
    Node2,
}

/// Forwards TCP connections from node1's testbed address (which node2 reaches) to the RAPI on
/// node1's loopback, where Ganeti's RAPI daemon listens; answers the address.
fn forward_from_node1(tb: &Testbed) -> String {
    let listener = std::net::TcpListener::bind("10.99.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let to = tb.url.trim_start_matches("https://").to_owned();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = std::net::TcpStream::connect(&to) else {
                continue;
            };
            let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (mut c, mut s) = (client, server);
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut c2, &mut s2);
                let _ = s2.shutdown(std::net::Shutdown::Write);
            });
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut s, &mut c);
                let _ = c.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    format!("https://10.99.0.1:{port}")
}

fn a_suspend_stops_a_waiting_pass(from: SuspendFrom) {
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let instances = ["inst53", "inst54", "inst55"];
    fresh(&tb, &instances.map(|i| (i, 2, "diskless")));
    tb.add_tags("/2/tags", &[t("failover")]);
    tb.role(&tb.node2, "offline");
    let config = tb.config("hail");
    let by = |url: &str| {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("autorepair"));
        c.env_remove("AUTOREPAIR_RAPI_PASSWORD")
            .env_remove("RUST_LOG")
            .args([
                "--rapi",
                url,
                "--rapi-user",
                &tb.user,
                "--rapi-password-file",
            ])
            .arg(&tb.password_file)
            .arg("--rapi-ca")
            .arg(&tb.ca)
            .arg("--config")
            .arg(&config);
        c
    };
    let busy = OneJobAtATime::new();
    gnt(&["gnt-debug", "delay", "--submit", "15"]);
    // Jobs a brake canceled before they started stay listed (Ganeti cannot archive them):
    // only this pass's count.
    let before = tb.job_ids().last().copied().unwrap_or(0);
    let failovers = |inst: &str| -> Vec<(u64, String)> {
        tb.jobs_of(inst, "OP_INSTANCE_FAILOVER")
            .into_iter()
            .filter(|(id, _)| *id > before)
            .collect()
    };
    let pass = by("https://127.0.0.1:5080")
        .arg("run")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The pass queued its repairs and waits for its tag jobs behind the delay.
    let start = Instant::now();
    while instances.iter().any(|i| failovers(i).is_empty()) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the pass queued no failovers"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut suspend = match from {
        SuspendFrom::AnotherUrl => by("https://localhost:5080"),
        SuspendFrom::Node2 => {
            let url = forward_from_node1(&tb);
            let mut c = std::process::Command::new(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/contrib/testbed/node2"
            ));
            c.arg(assert_cmd::cargo::cargo_bin("autorepair"))
                .env_remove("AUTOREPAIR_RAPI_PASSWORD")
                .env_remove("RUST_LOG")
                .args([
                    "--rapi",
                    &url,
                    "--rapi-user",
                    &tb.user,
                    "--rapi-password-file",
                ])
                .arg(&tb.password_file)
                .arg("--rapi-ca")
                .arg(&tb.ca)
                .arg("--config")
                .arg(&config)
                .arg("--lock-file")
                .arg(tb.dir.path().join("node2.lock"));
            c
        }
    };
    let suspended = Instant::now();
    let suspend = suspend
        .args(["suspend", "cluster"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let ended = pass.wait_with_output().unwrap();
    let took = suspended.elapsed();
    let stdout = String::from_utf8_lossy(&ended.stdout);
    eprintln!("{from:?}: the pass ended {took:?} after the suspend began");
    assert!(
        took < Duration::from_secs(8),
        "{from:?}: the pass ended {took:?} after the suspend began: {stdout}"
    );
    let suspend = suspend.wait_with_output().unwrap();
    assert_eq!(suspend.status.code(), Some(0), "{suspend:?}");
    drop(busy);
    tb.settle();
    for inst in instances {
        let jobs = failovers(inst);
        assert!(
            !jobs.is_empty() && jobs.iter().all(|(_, status)| status == "canceled"),
            "{inst}: {jobs:?}\n{stdout}"
        );
        assert_eq!(tb.pnode(inst), tb.node2, "{inst} never moved");
        assert_eq!(tb.pending(inst), 0, "{inst}: {:?}", tb.tags(inst));
        assert!(tb.results(inst).is_empty(), "{inst}: {:?}", tb.tags(inst));
    }
    assert!(tb.tags_of("/2/tags").contains(&t("suspend")));

    // The suspend's tag removed by hand (not by `resume`): it showed, so the brake holds no
    // later pass, which repairs again (it wrote nothing for 15 minutes).
    gnt(&["gnt-cluster", "remove-tags", &t("suspend")]);
    let next = by("https://127.0.0.1:5080").arg("run").output().unwrap();
    let stdout = String::from_utf8_lossy(&next.stdout);
    assert_eq!(next.status.code(), Some(0), "{next:?}");
    assert!(stdout.contains("3 repair jobs submitted"), "{stdout}");
    tb.settle();
    for inst in instances {
        assert_eq!(tb.pnode(inst), tb.node1, "{inst}: {stdout}");
    }
}

fn a_once_off_request_repairs_without_any_policy() {
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    fresh(
        &tb,
        &[("inst9", 2, "sharedfile"), ("inst10", 2, "sharedfile")],
    );
    tb.role(&tb.node2, "offline");
    let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
    // As an external tool would drop it: a pending tag with no jobs.
    tb.add_tags(
        "/2/instances/inst9.example.test/tags",
        &[t(&format!("pending:failover:{id}:1700000000:"))],
    );
    tb.passes(2, "hail");
    assert_eq!(tb.pnode("inst9"), tb.node1);
    assert_eq!(
        tb.pnode("inst10"),
        tb.node2,
        "no policy, no request: untouched"
    );
    let tags = tb.tags("inst9");
    assert!(
        tags.iter()
            .any(|t| t.contains(&format!("result:failover:{id}:")) && t.contains(":success:")),
        "{tags:?}"
    );
    assert_eq!(tb.pending("inst9"), 0);
}

fn a_failing_job_records_a_failure_and_parks_the_instance() {
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    fresh(&tb, &[("inst11", 2, "diskless")]);
    tb.add_tags("/2/tags", &[t("failover")]);
    tb.role(&tb.node2, "offline");
    // An iallocator that does not exist makes Ganeti's job fail.
    tb.passes(2, "no-such-allocator");
    let results = tb.results("inst11");
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].1, RepairResult::Failure);
    assert_eq!(tb.wait(results[0].2[0]), "error");
    assert_eq!(tb.pnode("inst11"), tb.node2);
    // Parked: even with a working allocator, nothing starts until a person clears it.
    tb.passes(1, "hail");
    assert_eq!(tb.pnode("inst11"), tb.node2);
    tb.autorepair("hail")
        .args(["clear", "inst11.example.test"])
        .assert()
        .success();
    tb.passes(2, "hail");
    assert_eq!(tb.pnode("inst11"), tb.node1);
}

fn a_kill_mid_pass_never_duplicates_a_job() {
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    // Kill after the pending tag (1 call), after the job (2), after recording it (3).
    for calls in 1..=3 {
        fresh(&tb, &[("inst12", 2, "diskless")]);
        tb.add_tags("/2/tags", &[t("failover")]);
        tb.role(&tb.node2, "offline");
        let limits = autorepair::config::Limits {
            max_pending: Some(5),
            ..Default::default()
        };
        let mut dying = Dying::new(Rapi::connect(&tb.endpoint()).unwrap(), Some(calls));
        let snap = dying.snapshot().unwrap();
        let plan = autorepair::ganeti::plan(&snap, 1_800_000_000, &limits, 1);
        let report = autorepair::engine::exec::execute(&plan, &mut dying);
        assert!(report.crashed, "killed after {calls} calls");
        tb.settle();
        tb.passes(2, "hail");
        let failovers = tb.jobs_of("inst12", "OP_INSTANCE_FAILOVER");
        assert_eq!(
            failovers.len(),
            1,
            "killed after {calls} calls: {failovers:?}"
        );
        assert_eq!(tb.pnode("inst12"), tb.node1);
        let results = tb.results("inst12");
        assert_eq!(results.len(), 1, "killed after {calls} calls: {results:?}");
        assert_eq!(
            results[0].2,
            vec![failovers[0].0],
            "the result names the one job"
        );
        assert_eq!(tb.pending("inst12"), 0);
    }
}

fn two_concurrent_runs_never_act_twice() {
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    fresh(&tb, &[("inst13", 2, "diskless")]);
    tb.add_tags("/2/tags", &[t("failover")]);
    tb.role(&tb.node2, "offline");
    let spawn = || {
        tb.std_command("hail")
            .arg("run")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let codes: Vec<i32> = [a, b]
        .into_iter()
        .map(|c| c.wait_with_output().unwrap().status.code().unwrap())
        .collect();
    assert!(codes.contains(&0), "{codes:?}");
    assert!(
        codes.iter().all(|c| *c == 0 || *c == 4),
        "the other one exits cleanly with 4: {codes:?}"
    );
    tb.settle();
    tb.passes(1, "hail");
    assert_eq!(tb.jobs_of("inst13", "OP_INSTANCE_FAILOVER").len(), 1);
    assert_eq!(tb.pnode("inst13"), tb.node1);
}

fn a_real_cluster_can_be_saved_and_replayed_offline() {
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    fresh(&tb, &[("inst14", 2, "diskless"), ("inst15", 1, "file")]);
    tb.add_tags("/2/tags", &[t("failover")]);
    tb.role(&tb.node2, "offline");
    let file = tb.dir.path().join("fleet.json");
    tb.autorepair("hail")
        .args(["snapshot", "--output"])
        .arg(&file)
        .assert()
        .success();
    let saved =
        autorepair::ganeti::file::parse_fleet(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let inst = saved
        .instances
        .iter()
        .find(|i| i.name == "inst14.example.test")
        .unwrap();
    assert_eq!(
        (inst.pnode.as_str(), inst.disk_template.as_str()),
        (tb.node2.as_str(), "diskless")
    );
    assert!(saved.nodes.iter().any(|n| n.name == tb.node2 && n.offline));
    let out = Command::cargo_bin("autorepair")
        .unwrap()
        .args(["run", "--dry-run", "--cluster"])
        .arg(&file)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("instance/inst14.example.test: failover repair"),
        "{text}"
    );
    // The dry run changed nothing on the cluster.
    assert_eq!(tb.pnode("inst14"), tb.node2);
}

/// Users without write access: Ganeti's `read` option, and no option at all (which may not use
/// the query resource: the snapshot falls back to /2/instances?bulk=1). Both see every
/// instance's run status and nodes; a pass that would write fails saying what access it needs.
fn read_only_users_see_status_and_nodes_and_cannot_write() {
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    fresh(&tb, &[("inst16", 1, "diskless"), ("inst17", 2, "diskless")]);
    tb.add_tags("/2/tags", &[t("failover")]);
    tb.role(&tb.node2, "offline");
    let var =
        |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} missing from the testbed env"));
    let password = PathBuf::from(var("AUTOREPAIR_TESTBED_RO_PASSWORD_FILE"));
    for (user, falls_back) in [
        (var("AUTOREPAIR_TESTBED_READ_USER"), false),
        (var("AUTOREPAIR_TESTBED_RO_USER"), true),
    ] {
        let cmd = || tb.as_user(&tb.url, &user, &password, &tb.ca);
        let file = tb.dir.path().join(format!("{user}.json"));
        let out = cmd()
            .args(["snapshot", "--output"])
            .arg(&file)
            .assert()
            .success();
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert_eq!(
            stderr.contains("may not use") && stderr.contains("`read` option"),
            falls_back,
            "{user}: {stderr}"
        );
        let saved = autorepair::ganeti::file::parse_fleet(&std::fs::read_to_string(&file).unwrap())
            .unwrap();
        let row = |name: &str| {
            let i = saved
                .instances
                .iter()
                .find(|i| i.name == format!("{name}{FQDN}"))
                .unwrap();
            (i.pnode.clone(), i.status.clone())
        };
        assert_eq!(
            row("inst16"),
            (tb.node1.clone(), "running".into()),
            "{user}"
        );
        assert_eq!(
            row("inst17"),
            (tb.node2.clone(), "ERROR_nodeoffline".into()),
            "{user}"
        );
        cmd().arg("status").assert().success();
        cmd().args(["run", "--dry-run"]).assert().success();
        // The pass stops at its first refused write, with one error and exit 6.
        let out = cmd().arg("run").assert().code(6);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(
            stderr.contains("403") && stderr.contains("may not write"),
            "{user}: {stderr}"
        );
        assert_eq!(stderr.matches("ERROR").count(), 1, "{user}: {stderr}");
    }
    tb.settle();
    assert_eq!(tb.pnode("inst17"), tb.node2, "nothing was repaired");
    assert!(tb.results("inst17").is_empty() && tb.pending("inst17") == 0);
}

/// Each way of not reaching the RAPI says what it is, with the cause and the URL; a refused
/// certificate is not retried.
fn a_wrong_certificate_a_closed_port_and_an_unknown_name_each_say_so() {
    let tb = testbed();
    let other = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ganeti/rapi/testdata/other.crt");
    let cases: [(&str, &Path, &[&str]); 3] = [
        (
            &tb.url,
            &other,
            &["TLS handshake", "other.crt", "not retried"],
        ),
        // Port 1 of loopback: nothing listens there.
        (
            "https://127.0.0.1:1",
            &tb.ca,
            &["refused", "ganeti-rapi", "retrying"],
        ),
        (
            "https://rapi.nonexistent.invalid:5080",
            &tb.ca,
            &["cannot resolve rapi.nonexistent.invalid"],
        ),
    ];
    for (url, ca, words) in cases {
        let out = tb
            .as_user(url, &tb.user, &tb.password_file, ca)
            .arg("status")
            .assert()
            .code(3);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(stderr.contains(&format!("{url}/2/")), "{url}: {stderr}");
        assert!(!stderr.contains("error sending request"), "{url}: {stderr}");
        for w in words {
            assert!(stderr.contains(w), "{url}: {w:?} missing from {stderr}");
        }
        if url == tb.url {
            assert!(!stderr.contains("retrying"), "{stderr}");
        }
    }
}

/// One dead node is one failure domain. With the default config (no limit overridden),
/// the first pass submits a failover for every instance of the dead node at once, and a pass or
/// two later every one of them runs on node1 with a success result.
fn one_dead_node_is_failed_over_in_one_pass_with_the_default_config() {
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let names: Vec<String> = (30..40).map(|i| format!("inst{i}")).collect();
    let fleet: Vec<(&str, u8, &str)> = names
        .iter()
        .enumerate()
        .map(|(k, n)| {
            let template = if k % 2 == 0 { "diskless" } else { "sharedfile" };
            (n.as_str(), 2, template)
        })
        .collect();
    fresh(&tb, &fleet);
    tb.add_tags("/2/tags", &[t("failover")]);
    tb.role(&tb.node2, "offline");
    let defaults = tb.config_text("defaults.toml", "");

    tb.run_with(&defaults);
    // Right after the first pass, before anything finished: one failover job per instance.
    let jobs = tb.get("/2/jobs?bulk=1");
    let mut first = Vec::new();
    for n in &names {
        let name = format!("{n}{FQDN}");
        let ids: Vec<u64> = jobs
            .as_array()
            .unwrap()
            .iter()
            .filter(|j| {
                j["ops"].as_array().is_some_and(|ops| {
                    ops.iter().any(|o| {
                        o["OP_ID"] == "OP_INSTANCE_FAILOVER" && o["instance_name"] == name.as_str()
                    })
                })
            })
            .map(|j| j["id"].as_u64().unwrap())
            .collect();
        assert_eq!(ids.len(), 1, "{n}: failover jobs after the first pass");
        first.push(ids[0]);
    }
    tb.settle();
    for n in &names {
        assert_eq!(tb.pending(n), 1, "{n} is pending after the first pass");
    }

    for _ in 0..2 {
        tb.run_with(&defaults);
        tb.settle();
    }
    for (n, job) in names.iter().zip(&first) {
        assert_eq!(tb.pnode(n), tb.node1, "{n} runs on node1");
        assert_eq!(tb.wait(*job), "success", "{n}: job {job}");
        let results = tb.results(n);
        assert_eq!(results.len(), 1, "{n}: {results:?}");
        assert_eq!(
            (results[0].0.as_str(), results[0].1, results[0].2.clone()),
            ("failover", RepairResult::Success, vec![*job]),
            "{n}"
        );
        assert_eq!(tb.pending(n), 0, "{n}");
        assert_eq!(
            tb.jobs_of(n, "OP_INSTANCE_FAILOVER").len(),
            1,
            "{n}: one failover, not two"
        );
    }
}

/// A mass failure writes nothing. With `max_down_nodes_per_group = 0`, node2 going
/// offline trips the limit: a real pass creates no Ganeti job at all and changes no tag, and
/// `status` names the limit. Then, with the default config, the instances with a policy are
/// failed over and the one with no policy at all gets no tag.
fn a_mass_failure_writes_nothing_and_no_policy_gets_no_tag() {
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    let names = ["inst40", "inst41", "inst42"];
    fresh(
        &tb,
        &[
            ("inst40", 2, "diskless"),
            ("inst41", 2, "sharedfile"),
            ("inst42", 2, "diskless"),
        ],
    );
    for n in ["inst40", "inst41"] {
        tb.add_tags(&format!("/2/instances/{n}{FQDN}/tags"), &[t("failover")]);
    }
    tb.role(&tb.node2, "offline");
    tb.settle();
    let mass = tb.config_text("mass.toml", "[limits]\nmax_down_nodes_per_group = 0\n");

    let (jobs, tags) = (tb.job_ids(), tb.all_tags(&names));
    tb.run_with(&mass);
    tb.settle();
    assert_eq!(tb.job_ids(), jobs, "a mass failure creates no Ganeti job");
    assert_eq!(tb.all_tags(&names), tags, "a mass failure changes no tag");
    for n in names {
        assert_eq!(tb.pnode(n), tb.node2, "{n} not moved");
    }

    let out = Command::from_std(tb.std_command_with(&mass))
        .env("NO_COLOR", "1")
        .arg("status")
        .assert()
        .success();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.get_output().stdout),
        String::from_utf8_lossy(&out.get_output().stderr)
    );
    assert!(text.contains("max_down_nodes_per_group"), "{text}");
    let out = Command::from_std(tb.std_command_with(&mass))
        .args(["status", "--json"])
        .assert()
        .success();
    let status: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let limits: Vec<&str> = status["fleet"]["halted_groups"]
        .as_array()
        .unwrap()
        .iter()
        .chain(
            status["fleet"]["halted"]
                .as_object()
                .map(|_| &status["fleet"]["halted"]),
        )
        .filter_map(|h| h["limit"].as_str())
        .collect();
    assert!(
        limits.contains(&"max_down_nodes_per_group"),
        "{}",
        status["fleet"]
    );
    assert_eq!(tb.job_ids(), jobs, "status writes nothing either");

    // The same fleet is no mass failure under the defaults.
    let defaults = tb.config_text("defaults.toml", "");
    for _ in 0..3 {
        tb.run_with(&defaults);
        tb.settle();
    }
    for n in ["inst40", "inst41"] {
        assert_eq!(tb.pnode(n), tb.node1, "{n}");
        let results = tb.results(n);
        assert_eq!(results.len(), 1, "{n}: {results:?}");
        assert_eq!(results[0].1, RepairResult::Success, "{n}");
    }
    assert_eq!(tb.pnode("inst42"), tb.node2, "no policy: not moved");
    assert!(
        tb.tags("inst42").is_empty(),
        "no policy: no tag at all, not even enoperm: {:?}",
        tb.tags("inst42")
    );
    // Only this test's jobs: the queue keeps older ones on an instance of the same name
    // (scripts/brake-latency fails over inst41-43).
    let failovers: Vec<(u64, String)> = tb
        .jobs_of("inst42", "OP_INSTANCE_FAILOVER")
        .into_iter()
        .filter(|(id, _)| !jobs.contains(id))
        .collect();
    assert!(failovers.is_empty(), "{failovers:?}");
}

/// A replica of `run --only-on-master` on the testbed's `node` (1: this host, 2: inside
/// node2's namespaces, where ssconf, the host name and 127.0.0.1 are node2's own), reaching
/// the cluster at its own 127.0.0.1: RAPI answers there only on the master. Both take the
/// default lock, named by the cluster's uuid.
fn replica(tb: &Testbed, node: u8, config: &Path, args: &[&str]) -> std::process::Command {
    replica_via(tb, node, "https://127.0.0.1:5080", config, args)
}

/// [`replica`], reaching the cluster at `url`.
fn replica_via(
    tb: &Testbed,
    node: u8,
    url: &str,
    config: &Path,
    args: &[&str],
) -> std::process::Command {
    let bin = assert_cmd::cargo::cargo_bin("autorepair");
    let mut c = if node == 2 {
        let mut c = std::process::Command::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/contrib/testbed/node2"
        ));
        c.arg(bin);
        c
    } else {
        std::process::Command::new(bin)
    };
    c.env_remove("AUTOREPAIR_RAPI_PASSWORD")
        .env_remove("AUTOREPAIR_GANETI_SSCONF_DIR")
        .env("NO_COLOR", "1")
        .arg("run")
        .args(args)
        .args(["--only-on-master", "--rapi", url])
        .args(["--rapi-user", &tb.user, "--rapi-password-file"])
        .arg(&tb.password_file)
        .arg("--rapi-ca")
        .arg(&tb.ca)
        .arg("--config")
        .arg(config);
    c
}

/// Stops a process group when dropped, a failed assertion too: a replica left looping in
/// node2 would act on the next test's cluster.
struct StopGroup(u32);

impl Drop for StopGroup {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", "--", &format!("-{}", self.0)])
            .status();
    }
}

/// The job ids in the queue, as the master (node2) lists them.
fn node2_job_ids() -> Vec<u64> {
    let out = std::process::Command::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/contrib/testbed/node2"
    ))
    .args(["gnt-job", "list", "--no-headers", "-o", "id"])
    .output()
    .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut ids: Vec<u64> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(|id| id.parse().unwrap())
        .collect();
    ids.sort_unstable();
    ids
}

/// Waits until node1's RAPI answers again (after the role came back).
fn wait_rapi(tb: &Testbed) {
    let start = Instant::now();
    while tb
        .http
        .get(format!("{}/2/info", tb.url))
        .basic_auth(&tb.user, Some(&tb.password))
        .send()
        .map_or(true, |r| !r.status().is_success())
    {
        assert!(start.elapsed() < Duration::from_secs(120), "RAPI not back");
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Two replicas, one per node, each run with `--only-on-master`: only the master's acts, and
/// after `gnt-cluster master-failover` the other one takes over from the tags, with no repair
/// started twice and no write by the replica that stood by. The testbed ends with node1 master.
///
/// Run on its own, after the others (`.ci/run` does): moving the role through a node that
/// held no copy of the job queue (node1, drained) leaves node1's job serial behind node2's,
/// so job ids are given twice afterwards and a later test on the same cluster reads another
/// job under its job's id (seen: `suspends_hold_…` then judged a failover that never ran).
#[test]
#[ignore = "moves the cluster's master role: run alone and last, with the testbed up: cargo test --test it -- --ignored ganeti::only_the_master_acts"]
fn only_the_master_acts_and_the_watcher_follows_a_master_failover() {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    let tb = testbed();
    let _one = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
    // Both instances on a drained node2, under a migrate policy: node1's pass starts both
    // migrations (the node's one failure domain), and the replica that is master at the next
    // pass records how they ended. A drained node cannot be master: node2 is made a master
    // candidate again before the role moves to it.
    fresh(
        &tb,
        &[("inst14", 2, "sharedfile"), ("inst15", 2, "sharedfile")],
    );
    let config = tb.config_text("master.toml", "[ganeti]\niallocator = \"hail\"\n");
    tb.add_tags("/2/tags", &[t("migrate")]);
    tb.role(&tb.node2, "drained");

    // Pass 1, node1 master: node2's replica stands by and writes nothing; node1's acts.
    let before = tb.job_ids();
    let out = replica(&tb, 2, &config, &[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(
        stderr.contains("stands by") && stderr.contains("node1.example.test is"),
        "{stderr}"
    );
    assert_eq!(tb.job_ids(), before, "the standby wrote nothing");
    // node1's passes migrate both (one at a time or together, as the planner finds room) and
    // record how each ended: a new master would not find these jobs, which ran while node2
    // (drained, so no master candidate) held no copy of the job queue.
    for pass in 0.. {
        let out = replica(&tb, 1, &config, &[]).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(stdout.starts_with("pass 1:"), "{stdout}");
        tb.settle();
        let done = ["inst14", "inst15"]
            .iter()
            .all(|i| tb.pending(i) == 0 && tb.results(i).len() == 1);
        if done {
            break;
        }
        assert!(pass < 5, "node1 did not finish: {stdout}");
    }
    let mut migrations = vec![];
    for inst in ["inst14", "inst15"] {
        assert_eq!(tb.pnode(inst), tb.node1, "{inst} migrated");
        let results = tb.results(inst);
        assert_eq!(results[0].1, RepairResult::Success, "{inst}");
        migrations.push(results[0].2[0]);
    }

    // node2 a candidate again, then the role moves to it while node2's replica loops there.
    tb.role(&tb.node2, "master-candidate");
    let log = tb.dir.path().join("node2-loop.log");
    let mut looping = replica(&tb, 2, &config, &["--loop", "--interval", "1s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .process_group(0)
        .spawn()
        .unwrap();
    let stop = StopGroup(looping.id());
    let lines = std::io::BufReader::new(looping.stdout.take().unwrap()).lines();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let _ = tx.send((Instant::now(), line));
        }
    });
    std::thread::sleep(Duration::from_secs(2));
    let started = Instant::now();
    script("node2", &["gnt-cluster", "master-failover"]);
    let done = Instant::now();
    // node1 drained, now that it is no longer master: its instances need repair, and node2's
    // replica starts their migrations, then records how they ended.
    script(
        "node2",
        &["gnt-node", "modify", "--drained", "yes", &tb.node1],
    );
    let drained = Instant::now();
    let mut acting = vec![];
    while acting.len() < 2 {
        let (at, line) = rx
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|e| panic!("{e}: {}", std::fs::read_to_string(&log).unwrap()));
        if line.starts_with("pass ") && !line.contains(": 0 action(s)") {
            assert!(line.contains(" 0 error(s)"), "{line}");
            acting.push(at);
        }
    }
    eprintln!(
        "node2's first pass that acted: {:.1} s after `gnt-cluster master-failover` started, {:.1} s after it ended, {:.1} s after node1 was drained",
        (acting[0] - started).as_secs_f64(),
        (acting[0] - done).as_secs_f64(),
        (acting[0] - drained).as_secs_f64()
    );
    // Until the migrations ended and were recorded.
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(120) {
        let list = std::process::Command::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/contrib/testbed/node2"
        ))
        .args(["gnt-instance", "list", "--no-headers", "-o", "tags"])
        .output()
        .unwrap();
        if !String::from_utf8_lossy(&list.stdout).contains(":pending:") {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    drop(stop);
    let _ = looping.wait();
    let loop_log = std::fs::read_to_string(&log).unwrap();
    assert!(
        loop_log.contains("stands by"),
        "it stood by before: {loop_log}"
    );

    // node2 master: node1's replica stands by, naming node2, and writes nothing.
    let before = node2_job_ids();
    let out = replica(&tb, 1, &config, &[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(stderr.contains("node2.example.test is"), "{stderr}");
    assert_eq!(node2_job_ids(), before, "the standby wrote nothing");

    // Back to node1 (a candidate again first), which has nothing left to do.
    script(
        "node2",
        &[
            "gnt-node",
            "modify",
            "--drained",
            "no",
            "--master-candidate",
            "yes",
            &tb.node1,
        ],
    );
    let back = std::process::Command::new("gnt-cluster")
        .arg("master-failover")
        .output()
        .unwrap();
    assert!(back.status.success(), "{back:?}");
    wait_rapi(&tb);
    tb.settle();
    let out = replica(&tb, 1, &config, &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("pass 1: 0 action(s)"),
        "{out:?}"
    );
    // Each instance: node1's migration, then node2's, each once and recorded once.
    for (inst, first) in ["inst14", "inst15"].into_iter().zip(migrations) {
        assert_eq!(tb.pnode(inst), tb.node2, "{inst} migrated back");
        let mut results = tb.results(inst);
        results.sort_by_key(|r| r.2.clone());
        assert_eq!(results.len(), 2, "{inst}: {results:?}");
        assert!(
            results
                .iter()
                .all(|r| r.1 == RepairResult::Success && r.2.len() == 1),
            "{inst}: {results:?}"
        );
        assert_eq!(results[0].2, [first], "{inst}: {results:?}");
        assert_ne!(results[1].2, [first], "{inst}: {results:?}");
        assert_eq!(tb.pending(inst), 0, "{inst}");
    }
}
