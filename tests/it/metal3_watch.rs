//! `run --loop` on a live cluster, against the fake API server (crates/testsupport, `kube`) through the
//! real kube client: the watches that start the next pass (a change within 2 s, a closed watch
//! and a compacted history survived, irrelevant changes ignored) and leader election with a
//! coordination.k8s.io/v1 Lease between two replicas.

use crate::common::replicas::{Disruption, RENEW_DEADLINE, token};
use autorepair::engine::BackendError;
use autorepair::k8s::lease::{Elector, LeaseName, Timing};
use autorepair::metal3::fixture::{Fleet, Host, Machine, Node};
use autorepair::metal3::kube::Options;
use autorepair::metal3::kube::watch::{self, ChangeKind, PENDING, Watcher};
use autorepair::metal3::objects::{REBOOT_KEY, REQUEST_KEY};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use testsupport::kube::{BARE_METAL_HOST, FakeKube, Fault, LEASE, MACHINE, NODE};

fn one_machine() -> FakeKube {
    let kube = FakeKube::builder().resource(LEASE).start();
    let list = Fleet::new()
        .machine(Machine::new("ns", "m1").node("n1").host("h1"))
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1"))
        .build();
    for item in list["items"].as_array().expect("a List") {
        kube.insert(item.clone());
    }
    kube
}

fn watching(kube: &FakeKube) -> Watcher {
    let w = watch::from_config(kube.config(), &Options::default()).expect("watcher");
    assert!(
        w.wait_watching(Duration::from_secs(10)),
        "the watches never opened"
    );
    w
}

/// A change the test makes to the server.
type Edit<'a> = Box<dyn Fn() + 'a>;

/// How long after `change` the watcher lets a pass start (the loop's debounce included), and
/// what it saw.
fn reaction(w: &Watcher, change: impl FnOnce()) -> (Duration, Vec<String>) {
    let t = Instant::now();
    change();
    let seen = w.settle(
        t + Duration::from_secs(5),
        Duration::from_millis(200),
        Duration::from_secs(1),
    );
    (t.elapsed(), seen.iter().map(ToString::to_string).collect())
}

#[test]
fn a_change_while_the_loop_waits_starts_a_pass_within_two_seconds() {
    let kube = one_machine();
    let w = watching(&kube);
    let mut latencies = Vec::new();
    for i in 0..5 {
        let (took, seen) = reaction(&w, || {
            kube.mutate(&MACHINE, "ns", "m1", |m| {
                m["metadata"]["annotations"][REQUEST_KEY] = json!(format!("{i}"));
            });
        });
        assert_eq!(
            seen,
            ["machines.cluster.x-k8s.io ns/m1 changed"],
            "{took:?}"
        );
        assert!(took < Duration::from_secs(2), "{took:?}");
        latencies.push(took);
    }
    // A host powering off, a Node going NotReady, a Node deleted: each one change.
    let cases: [(&str, Edit); 3] = [
        (
            "baremetalhosts.metal3.io ns/h1 changed",
            Box::new(|| {
                kube.mutate(&BARE_METAL_HOST, "ns", "h1", |h| {
                    h["status"]["poweredOn"] = json!(false);
                });
            }),
        ),
        (
            "nodes n1 changed",
            Box::new(|| {
                kube.mutate(&NODE, "", "n1", |n| {
                    n["status"]["conditions"] = json!([{"type": "Ready", "status": "False",
                        "lastTransitionTime": "2026-11-01T00:00:00Z"}]);
                });
            }),
        ),
        (
            "nodes n1 deleted",
            Box::new(|| {
                kube.remove(&NODE, "", "n1");
            }),
        ),
    ];
    for (want, change) in cases {
        let (took, seen) = reaction(&w, change);
        assert_eq!(seen, [want]);
        assert!(took < Duration::from_secs(2), "{want}: {took:?}");
    }
    eprintln!("watch reaction (change to pass start, 200 ms debounce included): {latencies:?}");
}

#[test]
fn what_the_family_does_not_read_starts_no_pass() {
    let kube = one_machine();
    let w = watching(&kube);
    kube.mutate(&BARE_METAL_HOST, "ns", "h1", |h| {
        h["status"]["lastUpdated"] = json!("2026-11-23T00:00:00Z");
    });
    kube.mutate(&NODE, "", "n1", |n| {
        n["status"]["conditions"][0]["lastHeartbeatTime"] = json!("2026-11-23T00:00:00Z");
    });
    assert_eq!(w.next_change(Duration::from_millis(700)), None);
    // A burst is one wake-up with every change in it.
    let (_, seen) = reaction(&w, || {
        for i in 0..10 {
            kube.mutate(&MACHINE, "ns", "m1", |m| {
                m["metadata"]["annotations"]["x"] = json!(i.to_string());
            });
        }
    });
    assert_eq!(seen.len(), 10, "{seen:?}");
}

#[test]
fn a_closed_watch_is_watched_again() {
    let kube = one_machine();
    let w = watching(&kube);
    for _ in 0..3 {
        kube.close_watches();
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            w.wait_watching(Duration::from_secs(10)),
            "not watched again"
        );
        let (took, seen) = reaction(&w, || {
            kube.mutate(&BARE_METAL_HOST, "ns", "h1", |h| {
                h["metadata"]["annotations"]["reboot.metal3.io/other"] = json!("");
            });
        });
        assert_eq!(seen, ["baremetalhosts.metal3.io ns/h1 changed"]);
        assert!(took < Duration::from_secs(2), "{took:?}");
        kube.mutate(&BARE_METAL_HOST, "ns", "h1", |h| {
            h["metadata"]["annotations"] = json!({});
        });
        assert!(w.next_change(Duration::from_secs(2)).is_some());
    }
}

#[test]
fn a_compacted_history_is_listed_again_and_what_changed_meanwhile_is_reported() {
    let kube = one_machine();
    let w = watching(&kube);
    // The hosts' watch comes back slowly: meanwhile a host changes and the history is
    // compacted, so it resumes from a resourceVersion the server no longer has.
    kube.fault(
        Fault::delay(Duration::from_millis(600))
            .on_collection(&BARE_METAL_HOST, "")
            .method("GET"),
    );
    kube.close_watches();
    std::thread::sleep(Duration::from_millis(100));
    kube.mutate(&BARE_METAL_HOST, "ns", "h1", |h| {
        h["spec"]["online"] = json!(false);
    });
    kube.compact();
    let change = w
        .next_change(Duration::from_secs(5))
        .expect("the change made while the watch was down");
    assert_eq!(change.object, "ns/h1");
    assert_eq!(change.what, ChangeKind::Relisted);
    assert_eq!(kube.pending_faults(), 0);
    // And it watches on from the new list.
    assert!(w.wait_watching(Duration::from_secs(10)));
    let (took, seen) = reaction(&w, || {
        kube.mutate(&BARE_METAL_HOST, "ns", "h1", |h| {
            h["spec"]["online"] = json!(true);
        });
    });
    assert_eq!(seen, ["baremetalhosts.metal3.io ns/h1 changed"]);
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn an_api_server_that_fails_is_retried() {
    let kube = one_machine();
    // The first lists of the hosts fail: the watch retries (1 s, then 2 s) and comes up.
    kube.fault(
        Fault::status(503)
            .on_collection(&BARE_METAL_HOST, "")
            .method("GET")
            .times(2),
    );
    let w = watch::from_config(kube.config(), &Options::default()).expect("watcher");
    assert!(w.wait_watching(Duration::from_secs(15)));
    assert_eq!(kube.pending_faults(), 0);
    let (_, seen) = reaction(&w, || {
        kube.mutate(&BARE_METAL_HOST, "ns", "h1", |h| {
            h["status"]["poweredOn"] = json!(false);
        });
    });
    assert_eq!(seen, ["baremetalhosts.metal3.io ns/h1 changed"]);
}

fn fast() -> Timing {
    Timing {
        lease: Duration::from_secs(2),
        renew_deadline: Duration::from_millis(1500),
        retry: Duration::from_millis(200),
    }
}

fn elector(kube: &FakeKube, who: &str) -> Elector {
    let lease = LeaseName {
        namespace: "ns".into(),
        name: "autorepair".into(),
    };
    Elector::from_config(
        kube.config(),
        Options::default().timeout,
        lease,
        who.into(),
        fast(),
    )
    .expect("elector")
}

fn holder(kube: &FakeKube) -> Option<String> {
    kube.get(&LEASE, "ns", "autorepair")?
        .pointer("/spec/holderIdentity")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

#[test]
fn of_two_replicas_one_leads_and_the_other_takes_over_when_it_stops() {
    let kube = one_machine();
    let a = elector(&kube, "a");
    assert!(a.wait_leader(Duration::from_secs(5)));
    let b = elector(&kube, "b");
    // b waits for a's lease; a renews it all along.
    let until = Instant::now() + Duration::from_secs(4);
    while Instant::now() < until {
        let both = a.is_leader() && b.is_leader();
        assert!(!both, "two leaders");
        assert!(!b.is_leader());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(a.is_leader());
    assert_eq!(holder(&kube).as_deref(), Some("a"));
    assert_eq!(b.holder().as_deref(), Some("a"));
    // Every write to the Lease was conditioned: a create, or an update with its
    // resourceVersion.
    for w in kube.writes() {
        assert!(w.path.contains("/leases"), "{w:?}");
        let body: Value = serde_json::from_str(&w.body).unwrap();
        match w.method.as_str() {
            "POST" => {}
            "PUT" => assert!(
                body.pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .is_some_and(|v| !v.is_empty()),
                "{w:?}"
            ),
            other => panic!("{other} {w:?}"),
        }
    }
    // A clean stop gives the lease up: b takes it at once, not after the lease duration.
    let t = Instant::now();
    drop(a);
    assert!(b.wait_leader(Duration::from_secs(5)));
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    assert_eq!(holder(&kube).as_deref(), Some("b"));
    let transitions =
        kube.get(&LEASE, "ns", "autorepair").unwrap()["spec"]["leaseTransitions"].clone();
    assert_eq!(transitions, json!(1));
}

#[test]
fn a_leader_cut_off_stops_acting_before_another_takes_over() {
    let kube = one_machine();
    let a = elector(&kube, "a");
    assert!(a.wait_leader(Duration::from_secs(5)));
    let b = elector(&kube, "b");
    std::thread::sleep(Duration::from_millis(500));
    // a's renewals fail from now on (its API server is unreachable for it).
    kube.fault(
        Fault::status(503)
            .on_object(&LEASE, "ns", "autorepair")
            .method("PUT")
            .times(1000),
    );
    // b's takeover would also be a PUT: let b's through by its body, a's not. The fake cannot
    // tell clients apart, so instead: a stops acting within its renew deadline, and b never
    // leads while a still does.
    let cut = Instant::now();
    let mut a_stopped = None;
    while cut.elapsed() < Duration::from_secs(4) {
        let both = a.is_leader() && b.is_leader();
        assert!(!both, "two leaders");
        if a_stopped.is_none() && !a.is_leader() {
            a_stopped = Some(cut.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let a_stopped = a_stopped.expect("a kept acting without renewing");
    assert!(a_stopped <= Duration::from_millis(1700), "{a_stopped:?}");
}

#[test]
fn a_leader_that_lost_the_lease_and_won_it_back_is_in_a_new_term() {
    // A pass checks the term it began in before each write: a plan made before the lapse is
    // never carried out after it, when another replica may have acted in between.
    let kube = one_machine();
    let a = elector(&kube, "a");
    assert!(a.wait_leader(Duration::from_secs(5)));
    let first = a.term();
    let planned_in = a.this_term();
    assert!(planned_in.check().is_ok());
    // Renewals fail for longer than the renew deadline, then work again.
    kube.fault(
        Fault::status(503)
            .on_object(&LEASE, "ns", "autorepair")
            .method("PUT")
            .times(12),
    );
    let until = Instant::now() + Duration::from_secs(6);
    while a.is_leader() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!a.is_leader(), "the leadership never lapsed");
    assert_eq!(a.term(), first, "no new term before the lease is won back");
    assert!(a.wait_leader(Duration::from_secs(10)));
    assert_eq!(a.term(), first + 1);
    // What a pass planned in the first term asks before each write: no.
    match planned_in.check() {
        Err(BackendError::Halted(why)) => assert!(why.contains("no longer holds"), "{why}"),
        other => panic!("{:?}", other.err()),
    }
    assert!(a.this_term().check().is_ok());
}

#[test]
fn a_lease_someone_else_holds_is_respected_until_it_runs_out() {
    let kube = one_machine();
    let now = jiff::Timestamp::now().to_string();
    kube.insert(json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "autorepair", "namespace": "ns"},
        "spec": {"holderIdentity": "old", "leaseDurationSeconds": 2, "renewTime": now,
                 "acquireTime": now, "leaseTransitions": 3},
    }));
    let t = Instant::now();
    let b = elector(&kube, "b");
    assert!(!b.wait_leader(Duration::from_millis(1500)));
    assert_eq!(b.holder().as_deref(), Some("old"));
    assert!(b.wait_leader(Duration::from_secs(5)));
    // Seen unchanged for the whole lease duration on b's own clock, not by renewTime.
    assert!(t.elapsed() >= Duration::from_secs(2), "{:?}", t.elapsed());
    let lease = kube.get(&LEASE, "ns", "autorepair").unwrap();
    assert_eq!(lease["spec"]["holderIdentity"], "b");
    assert_eq!(lease["spec"]["leaseTransitions"], 4);
}

// ---------------------------------------------------------------------------------------------
// The binary: `autorepair run --kube --loop [--leader-elect]` against the fake server.

/// A running `autorepair run --kube --loop` and its standard output's lines, with when each
/// came.
struct Replica {
    child: std::process::Child,
    lines: std::sync::Arc<std::sync::Mutex<Vec<(Instant, String)>>>,
}

impl Replica {
    fn start(kube: &FakeKube, dir: &std::path::Path, name: &str, extra: &[&str]) -> Replica {
        Replica::configured(kube, dir, name, "", extra)
    }

    /// [`Replica::start`] with a config file of this text.
    fn configured(
        kube: &FakeKube,
        dir: &std::path::Path,
        name: &str,
        config: &str,
        extra: &[&str],
    ) -> Replica {
        use std::io::BufRead;
        let config_file = dir.join(format!("{name}.toml"));
        std::fs::write(&config_file, config).unwrap();
        // A token of its own, so that the API server can cut this one replica off and tell
        // its requests apart.
        let kubeconfig = dir.join(format!("{name}.kubeconfig"));
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\ncurrent-context: fake\n\
                 contexts:\n- name: fake\n  context: {{cluster: fake, user: fake}}\n\
                 clusters:\n- name: fake\n  cluster: {{server: '{}'}}\n\
                 users:\n- name: fake\n  user: {{token: {}}}\n",
                kube.url(),
                token(name)
            ),
        )
        .unwrap();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_autorepair"))
            .args(["run", "--kube", "--kubeconfig"])
            .arg(&kubeconfig)
            .arg("--config")
            .arg(&config_file)
            .arg("--lock-file")
            .arg(dir.join(format!("{name}.lock")))
            .args(["--loop", "--interval", "1h"])
            .args(extra)
            .env("POD_NAME", name)
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(dir.join(format!("{name}.log"))).unwrap())
            .spawn()
            .expect("autorepair");
        let out = child.stdout.take().unwrap();
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                sink.lock().unwrap().push((Instant::now(), line));
            }
        });
        Replica { child, lines }
    }

    fn passes(&self) -> Vec<(Instant, String)> {
        let lines = self.lines.lock().unwrap();
        lines
            .iter()
            .filter(|(_, l)| l.starts_with("pass "))
            .cloned()
            .collect()
    }

    fn wait_passes(&self, n: usize, timeout: Duration) -> bool {
        let until = Instant::now() + timeout;
        while self.passes().len() < n {
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }

    fn signal(&self, sig: &str) {
        let pid = self.child.id().to_string();
        let sent = std::process::Command::new("kill")
            .args([&format!("-{sig}"), &pid])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{sig} {pid}");
    }

    /// SIGTERM, then the exit status within `timeout`.
    fn stop(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        self.signal("TERM");
        let until = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() >= until {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until the number of open watches has stayed the same, and above zero, for 500 ms.
fn watches_settled(kube: &FakeKube) {
    let until = Instant::now() + Duration::from_secs(20);
    let (mut last, mut since) = (0, Instant::now());
    while Instant::now() < until {
        let n = kube.open_watches();
        if n != last {
            (last, since) = (n, Instant::now());
        } else if n > 0 && since.elapsed() > Duration::from_millis(500) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the watches never settled ({last} open)");
}

fn request(kube: &FakeKube) -> Instant {
    let t = Instant::now();
    kube.mutate(&MACHINE, "ns", "m1", |m| {
        m["metadata"]["annotations"][REQUEST_KEY] = json!("");
    });
    t
}

fn host_rebooting(kube: &FakeKube) -> bool {
    kube.annotation(
        &BARE_METAL_HOST,
        "ns",
        "h1",
        autorepair::metal3::objects::REBOOT_KEY,
    )
    .is_some()
}

#[test]
fn the_loop_makes_a_pass_within_two_seconds_of_a_request_and_stops_on_sigterm() {
    let kube = one_machine();
    let dir = tempfile::tempdir().unwrap();
    let mut r = Replica::start(&kube, dir.path(), "solo", &[]);
    assert!(r.wait_passes(1, Duration::from_secs(20)), "no first pass");
    watches_settled(&kube);
    let asked = request(&kube);
    assert!(
        r.wait_passes(2, Duration::from_secs(5)),
        "no pass after the change"
    );
    let took = r.passes()[1].0 - asked;
    assert!(took < Duration::from_secs(2), "{took:?}");
    // That pass acted on the request: the host is being powered off.
    assert!(host_rebooting(&kube));
    eprintln!("request to pass output: {took:?}");
    let status = r
        .stop(Duration::from_secs(10))
        .expect("still running after SIGTERM");
    assert!(status.success(), "{status:?}");
}

/// The writes (not to the Lease) replica `name` sent from request number `from` on.
fn writes_by(kube: &FakeKube, name: &str, from: usize) -> Vec<String> {
    kube.requests()
        .into_iter()
        .skip(from)
        .filter(|r| r.token == token(name) && r.method != "GET" && !r.path.contains("/leases/"))
        .map(|r| format!("{} {} {}", r.method, r.path, r.body))
        .collect()
}

/// Two replicas; the leader is stopped, killed, paused past its Lease or cut off from it
/// (each on a cluster of its own). Only the leader passes; the other takes over and repairs
/// the Machine asked for; the host is power-cycled once; and the old leader sends no write
/// after its renew deadline (for a paused one: after it is woken).
///
/// One test per disruption, so that they wait on their Leases side by side.
fn of_two_replicas_only_the_leader_passes_and_the_other_takes_over(disruption: Disruption) {
    use Disruption::*;
    let kube = one_machine();
    let dir = tempfile::tempdir().unwrap();
    let lease = ["--leader-elect", "--lease", "ns/autorepair"];
    let mut a = Replica::start(&kube, dir.path(), "a", &lease);
    assert!(a.wait_passes(1, Duration::from_secs(20)), "a never led");
    let b = Replica::start(&kube, dir.path(), "b", &lease);
    watches_settled(&kube);
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        b.passes().is_empty(),
        "b passed while a led: {:?}",
        b.passes()
    );
    assert!(
        holder(&kube).is_some_and(|h| h.starts_with("a_")),
        "{:?}",
        holder(&kube)
    );
    let at = Instant::now();
    match disruption {
        Signal("TERM") => {
            assert!(a.stop(Duration::from_secs(10)).is_some_and(|s| s.success()));
        }
        Signal(sig) => a.signal(sig),
        Pause => a.signal("STOP"),
        Partition { hang } => {
            let cut = if hang {
                Fault::delay(Duration::from_secs(600))
            } else {
                Fault::status(500)
            };
            kube.fault(
                cut.on_object(&LEASE, "ns", "autorepair")
                    .from_client(&token("a"))
                    .times(usize::MAX),
            );
            // Before its renew deadline a may still act; the request comes after it.
            std::thread::sleep(RENEW_DEADLINE);
        }
    }
    let deadline = kube.requests().len();
    request(&kube);
    assert!(
        b.wait_passes(1, Duration::from_secs(30)),
        "{disruption:?}: b never took over"
    );
    let took = b.passes()[0].0 - at;
    let until = Instant::now() + Duration::from_secs(10);
    while !host_rebooting(&kube) {
        assert!(
            Instant::now() < until,
            "{disruption:?}: the host was never power-cycled"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    if let Signal("TERM") = disruption {
        // A clean stop gives the Lease up: b leads within seconds.
        assert!(took < Duration::from_secs(4), "{took:?}");
    }
    assert!(
        holder(&kube).is_some_and(|h| h.starts_with("b_")),
        "{disruption:?}: {:?}",
        holder(&kube)
    );
    if let Pause = disruption {
        a.signal("CONT");
    }
    // Time for a woken or cut-off a to write, if it were to.
    std::thread::sleep(Duration::from_secs(3));
    // The oracle tells the replicas apart: a's Lease writes (its create at least) came
    // with its token.
    assert!(
        kube.writes()
            .iter()
            .any(|w| w.token == token("a") && w.path.contains("/leases")),
        "{disruption:?}: the requests carry no token"
    );
    let late = writes_by(&kube, "a", deadline);
    assert!(
        late.is_empty(),
        "{disruption:?}: a wrote after it lost the Lease: {late:#?}"
    );
    let power_cycles = kube
        .writes()
        .into_iter()
        .filter(|w| w.path.ends_with("/baremetalhosts/h1") && w.body.contains(REBOOT_KEY))
        .count();
    assert_eq!(
        power_cycles, 1,
        "{disruption:?}: the host's power cycle was asked for twice"
    );
    eprintln!("{disruption:?}: takeover (disruption to b's first pass) {took:?}");
}

#[test]
fn the_other_replica_takes_over_from_a_leader_stopped_by_sigterm() {
    of_two_replicas_only_the_leader_passes_and_the_other_takes_over(Disruption::Signal("TERM"));
}

#[test]
fn the_other_replica_takes_over_from_a_leader_killed_by_sigkill() {
    of_two_replicas_only_the_leader_passes_and_the_other_takes_over(Disruption::Signal("KILL"));
}

#[test]
fn the_other_replica_takes_over_from_a_leader_paused_past_its_lease() {
    of_two_replicas_only_the_leader_passes_and_the_other_takes_over(Disruption::Pause);
}

#[test]
fn the_other_replica_takes_over_from_a_leader_whose_renewals_fail() {
    of_two_replicas_only_the_leader_passes_and_the_other_takes_over(Disruption::Partition {
        hang: false,
    });
}

#[test]
fn the_other_replica_takes_over_from_a_leader_whose_renewals_hang() {
    of_two_replicas_only_the_leader_passes_and_the_other_takes_over(Disruption::Partition {
        hang: true,
    });
}

#[test]
fn leader_election_is_refused_where_there_is_no_lease_to_elect_with() {
    let dir = tempfile::tempdir().unwrap();
    let objects = dir.path().join("objects.json");
    std::fs::write(&objects, Fleet::new().build().to_string()).unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, "apiVersion: v1\nkind: Config\n").unwrap();
    // Each message asks only for what the command line lacks (not "add --loop" when --loop
    // is given).
    let cases: [(Vec<&str>, &str); 4] = [
        (
            vec![
                "--kube-objects",
                objects.to_str().unwrap(),
                "run",
                "--loop",
                "--leader-elect",
            ],
            "with a Lease in a Kubernetes cluster: add --kube (metal3) or --kubeconfig",
        ),
        (
            vec![
                "--kube-objects",
                objects.to_str().unwrap(),
                "run",
                "--leader-elect",
            ],
            "add --loop, and --kube (metal3) or --kubeconfig",
        ),
        (
            vec![
                "--kube",
                "--kubeconfig",
                kubeconfig.to_str().unwrap(),
                "run",
                "--leader-elect",
            ],
            "with a Lease in a Kubernetes cluster: add --loop\n",
        ),
        (
            vec![
                "--kube",
                "--kubeconfig",
                kubeconfig.to_str().unwrap(),
                "run",
                "--loop",
                "--leader-elect",
                "--lease",
                "autorepair",
            ],
            "--lease \"autorepair\": give the Lease as NAMESPACE/NAME",
        ),
    ];
    for (args, want) in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_autorepair"))
            .args(["--config", "/dev/null"])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn changes_nobody_takes_wait_in_bounded_memory_and_the_next_still_comes() {
    let kube = one_machine();
    let w = watching(&kube);
    for i in 0..PENDING + 300 {
        kube.mutate(&MACHINE, "ns", "m1", |m| {
            m["metadata"]["annotations"]["autorepair.io/policy"] = json!(format!("p{i}"));
        });
    }
    std::thread::sleep(Duration::from_secs(2));
    let waiting = w.forget();
    assert!(
        (1..=PENDING).contains(&waiting),
        "{waiting} changes waiting"
    );
    let (took, seen) = reaction(&w, || {
        kube.mutate(&MACHINE, "ns", "m1", |m| {
            m["metadata"]["annotations"][REQUEST_KEY] = json!("");
        });
    });
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(!seen.is_empty());
}

#[test]
fn a_node_going_not_ready_is_repaired_when_node_unhealthy_after_falls_due_not_at_the_resync() {
    // The loop resyncs only every hour; the Node's NotReady wakes a pass at once (nothing to do
    // yet), and that pass's next threshold wakes the loop when the Node has been NotReady for
    // `node_unhealthy_after` (3 s): the power cycle starts then.
    let kube = one_machine();
    kube.mutate(&MACHINE, "ns", "m1", |m| {
        m["metadata"]["annotations"]["autorepair.io/policy"] = json!("power-cycle");
    });
    let dir = tempfile::tempdir().unwrap();
    let r = Replica::configured(
        &kube,
        dir.path(),
        "due",
        "[metal3]\nnode_unhealthy_after = \"3s\"\n",
        &[],
    );
    assert!(r.wait_passes(1, Duration::from_secs(20)), "no first pass");
    watches_settled(&kube);
    assert!(!host_rebooting(&kube), "a healthy Machine is left alone");
    // NotReady from this second on (the condition's time has whole seconds: up to 1 s early).
    let since = jiff::Timestamp::now();
    let went = Instant::now();
    let stamp = jiff::Timestamp::from_second(since.as_second())
        .unwrap()
        .to_string();
    kube.mutate(&NODE, "", "n1", |n| {
        n["status"]["conditions"] = json!([{"type": "Ready", "status": "False",
            "lastTransitionTime": stamp, "lastHeartbeatTime": stamp}]);
    });
    let until = went + Duration::from_secs(15);
    while !host_rebooting(&kube) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = went.elapsed();
    assert!(host_rebooting(&kube), "no power cycle within {took:?}");
    // Not before the threshold (less the second the condition's time rounds off), and within
    // a second or two after it: the next resync would be an hour away.
    assert!(took >= Duration::from_secs(2), "too early: {took:?}");
    assert!(took < Duration::from_secs(5), "too late: {took:?}");
    // A pass woke for the change, and one for the threshold. The latter wrote the reboot
    // annotation before it printed its line: wait for the line (on a loaded machine CI's
    // run read the passes in between and found two).
    assert!(
        r.wait_passes(3, Duration::from_secs(10)),
        "{:?}",
        r.passes()
    );
    eprintln!("NotReady to power-off, node_unhealthy_after = 3s: {took:?}");
}
