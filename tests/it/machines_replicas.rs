//! Several replicas of the machines family against one sabakan (issue: "several replicas,
//! exactly one acts"): each `run --loop --leader-elect`, with a Lease in the Kubernetes
//! cluster the machines are Nodes of (the fake API server, over verified TLS). The repair
//! command records which replica ran it; the oracle: no repair command runs twice, and a
//! replica writes and runs nothing once it no longer leads, while leaders are stopped
//! (SIGTERM), killed (SIGKILL), paused past their Lease (SIGSTOP, then SIGCONT) and cut off
//! from the Lease while sabakan stays reachable (its Lease requests fail, or hang).

use crate::common;
use crate::common::replicas::{Disruption, RENEW_DEADLINE, token};

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use testsupport::kube::{FakeKube, Fault, LEASE, node};
use testsupport::sabakan::{FakeSabakan, State, machine};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One step, no drain; the command appends "REPLICA ADDRESS" to $RUNS and marks the machine
/// repaired in $MARKS, which the health check reads.
const REPAIR: &str = r#"repair:
  repair_procedures:
    - machine_types: ["IPMI-2.0"]
      repair_operations:
        - operation: unhealthy
          repair_steps:
            - repair_command: ["sh", "-c", 'echo "$REPLICA $1" >> "$RUNS"; mkdir -p "$MARKS" && touch "$MARKS/$1"', "repair"]
              need_drain: false
              watch_seconds: 0
          health_check_command: ["sh", "-c", 'if [ -e "$MARKS/$1" ]; then echo true; else echo false; fi', "health"]
  max_concurrent_repairs: 5
"#;

struct Site {
    dir: tempfile::TempDir,
    sabakan: FakeSabakan,
    kube: FakeKube,
}

impl Site {
    fn new(machines: usize) -> Site {
        let dir = tempfile::tempdir().unwrap();
        let sabakan = FakeSabakan::start();
        sabakan.set_now(&jiff::Timestamp::now().to_string());
        let kube = FakeKube::builder().tls().resource(LEASE).start();
        sabakan.insert(
            machine("boot-0")
                .role("boot")
                .ipv4("10.69.0.3")
                .label("autorepair.cluster.policy", "step-1"),
        );
        for i in 0..machines {
            let address = format!("10.69.0.{}", 10 + i);
            sabakan.insert(machine(&format!("cs{i}")).ipv4(&address));
            kube.insert(node(&address).build());
        }
        std::fs::write(dir.path().join("repair.yml"), REPAIR).unwrap();
        // Each repaired machine stays unhealthy in sabakan, and keeps its queue entry: room
        // for one per machine.
        std::fs::write(
            dir.path().join("constraints.json"),
            format!(
                r#"{{"control-plane-count": 1, "maximum-repair-queue-entries": {}, "wait-seconds-to-repair-rebooting": 300}}"#,
                machines + 1
            ),
        )
        .unwrap();
        Site { dir, sabakan, kube }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The repair commands run: (replica, address), in order.
    fn runs(&self) -> Vec<(String, String)> {
        std::fs::read_to_string(self.path("runs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(r, a)| (r.to_owned(), a.to_owned()))
            .collect()
    }

    fn holder(&self) -> Option<String> {
        self.kube
            .get(&LEASE, "ns", "autorepair")?
            .pointer("/spec/holderIdentity")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// Waits until the address's repair command ran; the replica that ran it.
    fn wait_run(&self, address: &str, timeout: Duration) -> String {
        let until = Instant::now() + timeout;
        loop {
            if let Some((r, _)) = self.runs().into_iter().find(|(_, a)| a == address) {
                return r;
            }
            assert!(
                Instant::now() < until,
                "{address} never repaired; runs {:?}, holder {:?}",
                self.runs(),
                self.holder()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn start(&self, name: &str) -> Replica {
        let log = self.path(&format!("{name}.log"));
        // A token of its own, so that the API server can cut this one replica off.
        let kubeconfig = self.path(&format!("{name}.kubeconfig"));
        std::fs::write(
            &kubeconfig,
            common::kubeconfig(self.kube.url(), "good").replace("not-a-real-token", &token(name)),
        )
        .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_autorepair"))
            .current_dir(self.dir.path())
            .args(["--config", "/dev/null", "--sabakan", self.sabakan.url()])
            .arg("--repair-config")
            .arg(self.path("repair.yml"))
            .arg("--constraints")
            .arg(self.path("constraints.json"))
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            // Each replica stands for another host: a lock of its own.
            .arg("--lock-file")
            .arg(self.path(&format!("{name}.lock")))
            .args(["run", "--loop", "--interval", "1s", "--leader-elect"])
            .arg("--metrics-file")
            .arg(self.path(&format!("{name}.prom")))
            .args(["--lease", "ns/autorepair"])
            .env("POD_NAME", name)
            .env("REPLICA", name)
            .env("RUNS", self.path("runs"))
            .env("MARKS", self.path("marks"))
            .env("RUST_LOG", "info")
            .env_remove("KUBECONFIG")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Replica { child, log }
    }
}

struct Replica {
    child: Child,
    log: PathBuf,
}

impl Replica {
    fn signal(&self, sig: &str) {
        let status = Command::new("kill")
            .args([&format!("-{sig}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// The label writes this replica logged.
    fn writes(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("label set") || l.contains("label removed"))
            .count()
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn log_of(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Five replicas; each leader in turn is stopped, killed, paused past its Lease, or cut off
/// from it, while a machine breaks: the next leader repairs it, no command runs twice, and a
/// leader that lost the Lease (woken, or still cut off) writes nothing after its renew
/// deadline.
#[test]
fn of_five_replicas_one_acts_through_sigterm_sigkill_sigstop_and_a_partition() {
    use Disruption::*;
    let disruptions = [
        Signal("TERM"),
        Signal("KILL"),
        Pause,
        Partition { hang: false },
        Partition { hang: true },
    ];
    let site = Site::new(disruptions.len() + 1);
    // One more than the leaders taken away: someone is always left to take over.
    let mut replicas: BTreeMap<String, Replica> = ["a", "b", "c", "d", "e"]
        .into_iter()
        .map(|n| (n.to_owned(), site.start(n)))
        .collect();
    let leader_of = |site: &Site| -> String {
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(h) = site.holder()
                && let Some((name, _)) = h.split_once('_')
            {
                return name.to_owned();
            }
            assert!(Instant::now() < until, "nobody leads");
            std::thread::sleep(Duration::from_millis(100));
        }
    };

    // The first leader repairs the first broken machine.
    site.sabakan.set_state("cs0", State::Unhealthy).unwrap();
    let first = site.wait_run("10.69.0.10", Duration::from_secs(40));
    assert_eq!(first, leader_of(&site));
    // CKE's leader gauge: 1 on the leader, 0 on the others, which export none of the fleet.
    for name in replicas.keys() {
        let path = site.path(&format!("{name}.prom"));
        let until = Instant::now() + Duration::from_secs(10);
        let want = format!(
            "cke_leader{{family=\"machines\"}} {}\n",
            u8::from(*name == first)
        );
        let text = loop {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if text.contains(&want) || Instant::now() > until {
                break text;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        assert!(text.contains(&want), "{name} (leader {first}): {text}");
        assert_eq!(
            text.contains("cke_repair_queue_items"),
            *name == first,
            "{name}: {text}"
        );
    }

    let mut timings = Vec::new();
    // Replicas cut off from the Lease for good: (name, label writes by its renew deadline).
    let mut deposed: Vec<(String, usize)> = Vec::new();
    for (i, disruption) in disruptions.into_iter().enumerate() {
        let address = format!("10.69.0.{}", 11 + i);
        let leader = leader_of(&site);
        let gone = &replicas[&leader];
        let at = Instant::now();
        match disruption {
            Signal(sig) => gone.signal(sig),
            Pause => gone.signal("STOP"),
            Partition { hang } => {
                let cut = if hang {
                    Fault::delay(Duration::from_secs(600))
                } else {
                    Fault::status(500)
                };
                site.kube.fault(
                    cut.on_object(&LEASE, "ns", "autorepair")
                        .from_client(&token(&leader))
                        .times(usize::MAX),
                );
                // Whatever it does before its renew deadline is its right; what it does after
                // is the oracle's. The machine breaks only then, so that it is the next
                // leader's to repair.
                std::thread::sleep(RENEW_DEADLINE);
                deposed.push((leader.clone(), gone.writes()));
            }
        }
        let writes_before = gone.writes();
        site.sabakan
            .set_state(&format!("cs{}", i + 1), State::Unhealthy)
            .unwrap();
        let by = site.wait_run(&address, Duration::from_secs(60));
        timings.push((disruption, at.elapsed()));
        assert_ne!(by, leader, "{disruption:?}: the old leader ran {address}");
        match disruption {
            Signal(_) => {
                replicas.remove(&leader);
            }
            // Woken past its Lease, the paused leader must find it lost before any write
            // (later it may well lead again, and write: not while another one leads).
            Pause => {
                let paused = &replicas[&leader];
                paused.signal("CONT");
                std::thread::sleep(Duration::from_secs(5));
                assert_eq!(
                    paused.writes(),
                    writes_before,
                    "{leader} wrote after it lost the Lease:\n{}",
                    log_of(&paused.log)
                );
            }
            Partition { .. } => {}
        }
    }
    std::thread::sleep(Duration::from_secs(5));
    for (name, writes) in deposed {
        let r = &replicas[&name];
        assert_eq!(
            r.writes(),
            writes,
            "{name} wrote after it lost the Lease:\n{}",
            log_of(&r.log)
        );
    }
    // No command ran twice, whoever led.
    let runs = site.runs();
    let mut addresses: Vec<&str> = runs.iter().map(|(_, a)| a.as_str()).collect();
    addresses.sort_unstable();
    let before = addresses.len();
    addresses.dedup();
    assert_eq!(addresses.len(), before, "a command ran twice: {runs:?}");
    eprintln!("takeover (disruption to the repair by the next leader): {timings:?}");
}

/// Without a Kubernetes cluster (Nodes from a file) there is no Lease to elect with: refused,
/// naming what to add, rather than two hosts both acting.
#[test]
fn leader_election_without_the_nodes_cluster_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_autorepair"))
        .args(["--config", "/dev/null", "--sabakan-file"])
        .arg(format!("{ROOT}/fixtures/machines-demo.json"))
        .arg("--nodes")
        .arg(format!("{ROOT}/fixtures/machines-demo-nodes.json"))
        .arg("--repair-config")
        .arg(format!("{ROOT}/fixtures/machines-demo.yml"))
        .args(["run", "--loop", "--leader-elect"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--kubeconfig (the Nodes of a machines fleet)"),
        "{err}"
    );
}
