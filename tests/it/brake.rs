//! The operator's brake against a fake RAPI: a suspend given while a pass waits for Ganeti to
//! apply its tag jobs returns at once, the pass stops within seconds, and the repair jobs it
//! queued that did not start are canceled and leave no failure behind.

use serde_json::{Value, json};
use std::collections::HashSet;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use testsupport::rapi::{FakeRapi, Seen};

const NOW: &str = "1795000000";

/// Node n1 is offline with the DRBD instances `a` and `b` (secondary n2) on it: a pass fails
/// both over (and replaces their secondaries after). The cluster allows failovers.
fn cluster(path: &str) -> Option<Value> {
    let p = path.split('?').next().unwrap_or("");
    let instance = |name: &str| json!([[0, name], [0, []], [0, "up"], [0, "drbd"]]);
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
                 [0, []], [0, ["a", "b"]], [0, 1700000000.5]]]}),
        "/2/query/instance" => json!({
            "fields": ["name", "tags", "admin_state", "disk_template"],
            "data": [instance("a"), instance("b")]}),
        "/2/jobs" => json!([]),
        _ => return None,
    })
}

/// The fake cluster's job queue: every write is a job; tag jobs never run (Ganeti busy behind
/// other repairs), so every job stays queued and may be canceled. The job list shows each
/// job with its opcodes, as Ganeti's does: a tag job with its kind, object, tags and reason.
#[derive(Default)]
struct Queue {
    next: u64,
    /// The repair jobs with their instance.
    repairs: Vec<(String, u64)>,
    canceled: HashSet<u64>,
    /// Every job's opcode, by id.
    ops: Vec<(u64, Value)>,
    /// Jobs from this id on succeed at once (0: none does).
    done_from: u64,
}

impl Queue {
    fn job(&self, id: u64) -> Value {
        let status = if self.canceled.contains(&id) {
            "canceled"
        } else if self.done_from > 0 && id >= self.done_from {
            "success"
        } else {
            "queued"
        };
        let ops: Vec<&Value> = self
            .ops
            .iter()
            .filter(|(j, _)| *j == id)
            .map(|(_, o)| o)
            .collect();
        json!({"id": id, "status": status, "ops": ops})
    }
}

/// The opcode of a tag write, as Ganeti lists it.
fn tag_op(method: &str, path: &str, query: &str) -> Option<Value> {
    let (kind, name) = match path.strip_suffix("/tags")? {
        "/2" => ("cluster", None),
        p => {
            let mut parts = p.trim_start_matches("/2/").split('/');
            let kind = match parts.next()? {
                "instances" => "instance",
                "groups" => "nodegroup",
                "nodes" => "node",
                _ => return None,
            };
            (kind, parts.next().map(str::to_owned))
        }
    };
    let pairs: Vec<(String, String)> = query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), decoded(v)))
        .collect();
    let of = |key: &str| -> Vec<String> {
        pairs
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .collect()
    };
    let id = if method == "PUT" {
        "OP_TAGS_SET"
    } else {
        "OP_TAGS_DEL"
    };
    Some(
        json!({"OP_ID": id, "kind": kind, "name": name, "tags": of("tag"),
        "reason": [["gnt:user", of("reason").first(), 1]]}),
    )
}

/// A query value as sent: `+` for a space, `%XX` for a byte.
fn decoded(v: &str) -> String {
    let mut bytes = Vec::new();
    let mut rest = v.bytes();
    while let Some(b) = rest.next() {
        match b {
            b'+' => bytes.push(b' '),
            b'%' => {
                let hex: String = rest.by_ref().take(2).map(char::from).collect();
                bytes.push(u8::from_str_radix(&hex, 16).unwrap());
            }
            b => bytes.push(b),
        }
    }
    String::from_utf8(bytes).unwrap()
}

fn answer(queue: &Mutex<Queue>, this: &Seen) -> (u16, String) {
    let mut q = queue.lock().unwrap();
    let (path, query) = this.path.split_once('?').unwrap_or((&this.path, ""));
    if this.method == "GET" {
        if let Some(id) = path.strip_prefix("/2/jobs/") {
            return (200, q.job(id.parse().unwrap()).to_string());
        }
        if path == "/2/jobs" {
            let ids = 1..=q.next;
            let jobs: Vec<Value> = if query.contains("bulk=1") {
                ids.map(|id| q.job(id)).collect()
            } else {
                ids.map(|id| json!({"id": id, "uri": format!("/2/jobs/{id}")}))
                    .collect()
            };
            return (200, Value::from(jobs).to_string());
        }
        // The tags of one object: none on groups and instances, this fake changes none.
        if path == "/2/tags" {
            return (200, cluster("/2/info").unwrap()["tags"].to_string());
        }
        if path.ends_with("/tags") {
            return (200, "[]".into());
        }
        return (
            200,
            cluster(&this.path)
                .expect("a read of the cluster")
                .to_string(),
        );
    }
    if this.method == "DELETE"
        && let Some(id) = path.strip_prefix("/2/jobs/")
    {
        let id: u64 = id.parse().unwrap();
        q.canceled.insert(id);
        return (200, json!([true, format!("Job {id} canceled")]).to_string());
    }
    q.next += 1;
    let id = q.next;
    if let Some(op) = tag_op(&this.method, path, query) {
        q.ops.push((id, op));
    }
    if let Some(rest) = path.strip_prefix("/2/instances/")
        && !path.ends_with("/tags")
    {
        let instance = rest.split('/').next().unwrap_or_default().to_owned();
        // As Ganeti lists a repair job: its opcode, its instance, the reason trail.
        let opcode = match rest.rsplit('/').next() {
            Some("failover") => "OP_INSTANCE_FAILOVER",
            Some("migrate") => "OP_INSTANCE_MIGRATE",
            Some("replace-disks") => "OP_INSTANCE_REPLACE_DISKS",
            _ => "OP_INSTANCE_REINSTALL",
        };
        let reason = query
            .split('&')
            .find_map(|kv| kv.strip_prefix("reason="))
            .map(decoded);
        q.ops.push((
            id,
            json!({"OP_ID": opcode, "instance_name": instance,
                   "reason": [["gnt:user", reason, 1]]}),
        ));
        q.repairs.push((instance, id));
    }
    (200, id.to_string())
}

/// The child's output once it ended, or `None` (and the child killed) after `limit`: a pass
/// that waits for tag jobs this fake never finishes would wait 15 minutes.
fn ended_within(mut child: std::process::Child, limit: Duration) -> Option<std::process::Output> {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(child.wait_with_output().unwrap())
}

fn autorepair(rapi: &FakeRapi, lock: &std::path::Path) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("autorepair"));
    cmd.env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .env("AUTOREPAIR_RAPI_PASSWORD", "p")
        .args(["--rapi", rapi.url(), "--rapi-user", "u"])
        .arg("--rapi-ca")
        .arg(testsupport::CA_FILE)
        .arg("--lock-file")
        .arg(lock);
    cmd
}

/// `suspend OBJECT` from a second process while the pass waits for its tag jobs: the verb
/// returns at once (it does not wait for the pass's lock), the pass ends within seconds, the
/// repair jobs of the targets under OBJECT are canceled and their pending tags withdrawn with
/// a reason that says so; the others go on. A pass begun before the suspend shows in the fleet
/// writes nothing.
#[test]
fn a_suspend_during_a_pass_stops_it_within_seconds_and_cancels_its_queued_repairs() {
    for (object, stopped) in [
        ("cluster", &["a", "b"][..]),
        ("group/default", &["a", "b"][..]),
        ("instance/b", &["b"][..]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("lock");
        let queue = Arc::new(Mutex::new(Queue::default()));
        let q = queue.clone();
        let rapi = FakeRapi::start(Box::new(move |seen| answer(&q, seen.last().unwrap())));
        let pass = autorepair(&rapi, &lock)
            .args(["run", "--now", NOW])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The pass waits for its tag jobs once it asks for one.
        let waiting = Instant::now();
        while !rapi
            .seen()
            .iter()
            .any(|s| s.method == "GET" && s.path.starts_with("/2/jobs/"))
        {
            assert!(
                waiting.elapsed() < Duration::from_secs(60),
                "the pass never waited for its tag jobs: {:?}",
                rapi.seen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // This fake never applies a tag job, the suspend's own neither: the verb waits for it
        // as long as --timeout says, then says so and that the brake holds meanwhile.
        let suspended = Instant::now();
        let suspend = autorepair(&rapi, &lock)
            .args(["suspend", object, "--now", NOW, "--timeout", "3s"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let ended = ended_within(pass, Duration::from_secs(30))
            .unwrap_or_else(|| panic!("{object}: the pass did not stop"));
        let took = suspended.elapsed();
        let suspend = suspend.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&suspend.stderr);
        assert_eq!(suspend.status.code(), Some(1), "{object}: suspend: {said}");
        assert!(
            said.contains("still waits")
                && said.contains("(queued)")
                && said.contains("the brake holds"),
            "{object}: suspend: {said}"
        );
        let (stdout, stderr) = (
            String::from_utf8_lossy(&ended.stdout),
            String::from_utf8_lossy(&ended.stderr),
        );
        eprintln!("{object}: the pass ended {took:?} after the suspend began");
        assert!(
            took < Duration::from_secs(3),
            "{object}: the pass ended {took:?} after the suspend began, not before it gave up waiting\n{stdout}\n{stderr}"
        );
        assert_eq!(ended.status.code(), Some(0), "{object}: {stdout}\n{stderr}");

        let seen = rapi.seen();
        let held = queue.lock().unwrap();
        let (repairs, canceled) = (&held.repairs, &held.canceled);
        let repaired: HashSet<&str> = repairs.iter().map(|(i, _)| i.as_str()).collect();
        assert_eq!(repaired, HashSet::from(["a", "b"]), "{object}: {repairs:?}");
        let stopped_jobs = repairs
            .iter()
            .filter(|(i, _)| stopped.contains(&i.as_str()))
            .count();
        for (instance, job) in repairs {
            let wanted = stopped.contains(&instance.as_str());
            assert_eq!(
                canceled.contains(job),
                wanted,
                "{object}: job {job} of {instance} canceled? {stdout}"
            );
            let withdrawn = seen.iter().any(|s| {
                s.method == "DELETE"
                    && s.path
                        .starts_with(&format!("/2/instances/{instance}/tags?"))
                    && s.path.contains("pending")
                    && s.path.contains("canceled+by+a+suspend")
            });
            assert_eq!(
                withdrawn, wanted,
                "{object}: pending tag of {instance} withdrawn? {seen:#?}"
            );
        }
        assert!(
            stdout.contains(&format!(
                "{stopped_jobs} queued jobs canceled by the suspend of {object}"
            )),
            "{object}: {stdout}"
        );
        drop(held);

        // The suspend's tag job is still queued (this fake applies none): the next pass reads
        // the fleet without the tag, but with the job, and must not start again what the
        // suspend stopped.
        let writes = |seen: &[Seen]| seen.iter().filter(|s| s.method != "GET").count();
        let before = writes(&rapi.seen());
        let next = autorepair(&rapi, &lock)
            .args(["run", "--now", NOW])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let next = ended_within(next, Duration::from_secs(30))
            .unwrap_or_else(|| panic!("{object}: the next pass repaired again and waits"));
        let stdout = String::from_utf8_lossy(&next.stdout);
        assert_eq!(next.status.code(), Some(0), "{object}: {stdout}");
        assert_eq!(writes(&rapi.seen()), before, "{object}: {stdout}");

        // The suspend's job canceled by hand, and Ganeti ran the others (this fake's tags stay
        // as they were: the pending tags added and withdrawn again): the fleet shows no such
        // suspend and no job that would write it, so the brake holds nothing (it held this
        // host's passes for 15 minutes). Every job from here on succeeds at once.
        {
            let mut q = queue.lock().unwrap();
            let suspend = q
                .ops
                .iter()
                .find(|(_, op)| op["tags"].to_string().contains("autorepair:suspend"))
                .map(|(id, _)| *id)
                .unwrap_or_else(|| panic!("{object}: no suspend job: {:?}", q.ops));
            q.canceled.insert(suspend);
            q.done_from = 1;
        }
        let repairs_before = queue.lock().unwrap().repairs.len();
        let after = autorepair(&rapi, &lock)
            .args(["run", "--now", NOW])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let after = ended_within(after, Duration::from_secs(30))
            .unwrap_or_else(|| panic!("{object}: the pass after the cancel did not end"));
        let (stdout, stderr) = (
            String::from_utf8_lossy(&after.stdout),
            String::from_utf8_lossy(&after.stderr),
        );
        assert_eq!(after.status.code(), Some(0), "{object}: {stdout}{stderr}");
        let q = queue.lock().unwrap();
        let again: HashSet<&str> = q.repairs[repairs_before..]
            .iter()
            .map(|(i, _)| i.as_str())
            .collect();
        // (An instance the suspend did not stop is repaired again too: this fake's tags never
        // show the pending tag its jobs wrote.)
        assert!(
            stopped.iter().all(|i| again.contains(i)),
            "{object}: repaired again: {again:?}\n{stdout}{stderr}"
        );
    }
}

/// An admin verb returns once Ganeti applied its tag job, so that the next command reads the
/// change (`suspend X; resume X` failed with "not suspended"); a tag job Ganeti failed is the
/// verb's error, in Ganeti's words; one still queued when --timeout runs out is exit 1 with the
/// job named.
#[test]
fn an_admin_verb_returns_once_ganeti_applied_its_tag() {
    const APPLIED_AFTER: Duration = Duration::from_millis(1500);
    let cases: [(&str, Option<&str>, i32, &str); 3] = [
        ("applied after 1.5 s", Some("success"), 0, ""),
        (
            "failed by Ganeti",
            Some("error"),
            3,
            "then failed it: OpPrereqError: Tag too long",
        ),
        ("still queued", None, 1, "Ganeti job 1 (queued) still waits"),
    ];
    for (case, end, exit, says) in cases {
        let submitted: Arc<Mutex<Option<Instant>>> = Arc::default();
        let at = submitted.clone();
        let rapi = FakeRapi::start(Box::new(move |seen| {
            let this = seen.last().unwrap();
            let path = this.path.split('?').next().unwrap_or("");
            if this.method == "PUT" {
                *at.lock().unwrap() = Some(Instant::now());
                return (200, "1".to_owned());
            }
            if path == "/2/jobs/1" {
                let done = at.lock().unwrap().unwrap().elapsed() >= APPLIED_AFTER;
                let status = match end {
                    Some(status) if done => status,
                    _ => "queued",
                };
                let opresult = match status {
                    "error" => json!([["OpPrereqError", ["Tag too long", "wrong_input"]]]),
                    _ => json!([null]),
                };
                return (
                    200,
                    json!({"id": 1, "status": status, "ops": [], "opresult": opresult}).to_string(),
                );
            }
            (200, cluster(&this.path).expect("a read").to_string())
        }));
        let dir = tempfile::tempdir().unwrap();
        let began = Instant::now();
        let out = autorepair(&rapi, &dir.path().join("lock"))
            .args(["suspend", "group/default", "--now", NOW, "--timeout", "4s"])
            .output()
            .unwrap();
        let took = began.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(exit), "{case}: {stderr}");
        assert!(stderr.contains(says), "{case}: {stderr}");
        assert!(
            took >= APPLIED_AFTER,
            "{case}: returned after {took:?}, before Ganeti applied the tag"
        );
        if exit == 0 {
            assert!(took < Duration::from_secs(4), "{case}: took {took:?}");
        }
    }
}

/// Rule 11: only a suspend the fleet took pulls the brake. A read-only user's suspend (the
/// tag write refused) and one whose tag job Ganeti failed leave no brake behind, so the next
/// pass on the host is not held for a suspend that will never show.
#[test]
fn a_refused_or_failed_suspend_leaves_no_brake() {
    // (case, how the fake answers the tag PUT, the status of tag job 1, the verb's exit code)
    let cases: [(&str, u16, &str, i32); 2] = [
        ("refused: a read-only user", 403, "", 6),
        ("failed by Ganeti", 200, "error", 3),
    ];
    for (case, put, job, exit) in cases {
        let rapi = FakeRapi::start(Box::new(move |seen| {
            let this = seen.last().unwrap();
            let path = this.path.split('?').next().unwrap_or("");
            if this.method == "PUT" {
                return match put {
                    200 => (200, "1".to_owned()),
                    code => (code, "\"Permission denied\"".to_owned()),
                };
            }
            if path == "/2/jobs/1" {
                let opresult = json!([["OpPrereqError", ["Tag too long", "wrong_input"]]]);
                return (
                    200,
                    json!({"id": 1, "status": job, "ops": [], "opresult": opresult}).to_string(),
                );
            }
            if this.method != "GET" {
                return (403, "\"Permission denied\"".to_owned());
            }
            (200, cluster(&this.path).expect("a read").to_string())
        }));
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("lock");
        let out = autorepair(&rapi, &lock)
            .args(["suspend", "group/default", "--now", NOW, "--timeout", "4s"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(exit), "{case}: {stderr}");
        let brakes: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".brake"))
            .collect();
        assert!(brakes.is_empty(), "{case}: a brake was left: {brakes:?}");
        let pass = autorepair(&rapi, &lock)
            .args(["run", "--now", NOW])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&pass.stdout);
        assert!(
            !said.contains("does not show in the fleet yet"),
            "{case}: the next pass was held by the brake: {said}"
        );
    }
}

/// `resume` releases the brake of its object even when the fleet shows nothing to resume (the
/// suspend's tag job was canceled after the verb gave up waiting): it exited 2 before, and the
/// brake stayed.
#[test]
fn a_resume_releases_a_brake_the_fleet_does_not_show() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("lock");
    let queue = Arc::new(Mutex::new(Queue::default()));
    let q = queue.clone();
    let rapi = FakeRapi::start(Box::new(move |seen| answer(&q, seen.last().unwrap())));
    let brake = dir.path().join("lock.brake");
    let out = autorepair(&rapi, &lock)
        .args(["suspend", "group/default", "--now", NOW, "--timeout", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        brake.exists(),
        "the suspend the fleet took pulled the brake"
    );
    queue.lock().unwrap().canceled.insert(1);
    let out = autorepair(&rapi, &lock)
        .args(["resume", "group/default", "--now", NOW])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "nothing to resume: {stderr}");
    assert!(!brake.exists(), "the brake stayed: {stderr}");
}
