//! CKE's etcd gate against a real etcd: three members of Debian's `etcd-server` on loopback
//! (`testsupport::etcd`), TLS with client certificates, members frozen to put them out of sync
//! or to take the quorum away. The cases are those of CKE's `RepairBlockedByEtcdOutOfSync…`
//! tests: a gate that holds must hold a repair the same fleet runs with etcd good.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use testsupport::etcd::Etcd;

const NOW: i64 = 1_800_000_000;

/// A fleet of three control planes on the etcd members' addresses and one worker, with a
/// procedure that notes each repair in `ran` (and never cures: the health check says false).
struct Fleet {
    dir: tempfile::TempDir,
    machines: PathBuf,
    cluster: PathBuf,
    constraints: PathBuf,
}

const WORKER: &str = "10.69.0.9";

fn machine(serial: &str, address: &str, role: &str, state: &str) -> Value {
    let labels = if role == "boot" {
        json!({"autorepair.cluster.policy": "step-8"})
    } else {
        json!({})
    };
    json!({
        "spec": {"serial": serial, "labels": labels, "rack": 0, "index-in-rack": 1,
                 "role": role, "ipv4": [address], "register-date": "2025-01-01T00:00:00Z",
                 "retire-date": "2030-01-01T00:00:00Z", "bmc": {"type": "qemu", "ipv4": "10.72.0.1"}},
        "status": {"state": state, "timestamp": "2026-01-01T00:00:00Z"}
    })
}

impl Fleet {
    /// `states`: sabakan's state of each control plane; the worker is UNHEALTHY.
    fn new(etcd: &Etcd, states: [&str; 3]) -> Fleet {
        let dir = tempfile::tempdir().unwrap();
        let mut list = vec![machine("boot-0", "10.69.0.3", "boot", "healthy")];
        for (i, (a, s)) in etcd.addresses().iter().zip(states).enumerate() {
            list.push(machine(&format!("cp-{}", i + 1), a, "cs", s));
        }
        list.push(machine("worker-1", WORKER, "cs", "unhealthy"));
        let machines = dir.path().join("machines.json");
        std::fs::write(&machines, Value::Array(list).to_string()).unwrap();
        let nodes: Vec<String> = etcd
            .addresses()
            .iter()
            .map(|a| format!("  - address: {a}\n    control_plane: true\n"))
            .chain([format!("  - address: {WORKER}\n")])
            .collect();
        let command = r#"["sh", "-c", 'echo "$1" >> ran', "repair"]"#;
        let check = r#"["sh", "-c", "echo false", "health"]"#;
        let cluster = dir.path().join("cluster.yml");
        std::fs::write(
            &cluster,
            format!(
                "name: test\nnodes:\n{}repair:\n  repair_procedures:\n    - machine_types: [qemu]\n      repair_operations:\n        - operation: unhealthy\n          repair_steps:\n            - repair_command: {command}\n          health_check_command: {check}\n        - operation: unreachable\n          repair_steps:\n            - repair_command: {command}\n          health_check_command: {check}\n  max_concurrent_repairs: 5\n",
                nodes.concat()
            ),
        )
        .unwrap();
        let constraints = dir.path().join("constraints.json");
        std::fs::write(
            &constraints,
            r#"{"control-plane-count": 3, "maximum-repair-queue-entries": 5}"#,
        )
        .unwrap();
        Fleet {
            dir,
            machines,
            cluster,
            constraints,
        }
    }

    fn bin(&self, etcd: &Etcd, ca: &Path) -> assert_cmd::Command {
        let mut c = assert_cmd::Command::cargo_bin("autorepair").unwrap();
        c.current_dir(self.dir.path())
            .env_remove("AUTOREPAIR_CONFIG")
            .env_remove("RUST_LOG")
            .args(["--config", "/dev/null", "--sabakan-file"])
            .arg(&self.machines)
            .arg("--repair-config")
            .arg(&self.cluster)
            .arg("--constraints")
            .arg(&self.constraints)
            .arg("--etcd-ca")
            .arg(ca)
            .arg("--etcd-cert")
            .arg(etcd.client_cert())
            .arg("--etcd-key")
            .arg(etcd.client_key());
        c
    }

    /// Two passes (the entries, then their first step); what the repair command ran on.
    fn passes(&self, etcd: &Etcd, ca: &Path) -> Vec<String> {
        for i in 0..2 {
            self.bin(etcd, ca)
                .args(["run", "--now", &(NOW + 60 * i).to_string()])
                .assert()
                .success();
        }
        std::fs::read_to_string(self.dir.path().join("ran"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn explain(&self, etcd: &Etcd, ca: &Path, serial: &str) -> String {
        let out = self
            .bin(etcd, ca)
            .args(["explain", serial, "--now", &(NOW + 120).to_string()])
            .assert()
            .success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    }
}

#[test]
#[cfg_attr(
    not(have_etcd),
    ignore = "needs Debian's etcd-server and etcd-client, and openssl"
)]
fn the_etcd_gate_holds_repairs_as_ckes_does_on_a_real_etcd() {
    let etcd = Etcd::start();
    let ca = etcd.ca();
    let cp3 = etcd.addresses()[2].clone();

    // Good etcd: the broken worker is repaired.
    let good = Fleet::new(&etcd, ["healthy"; 3]);
    assert_eq!(good.passes(&etcd, &ca), [WORKER]);

    // An etcd the watcher cannot read (a CA that did not sign its certificate): fail closed.
    let unread = Fleet::new(&etcd, ["healthy"; 3]);
    let wrong_ca = Path::new(testsupport::CA_FILE);
    assert!(unread.passes(&etcd, wrong_ca).is_empty());
    let said = unread.explain(&etcd, wrong_ca, "worker-1");
    assert!(said.contains("etcd cannot be read"), "{said}");

    // Member 3 cut off, and the cluster moves on without it.
    etcd.freeze(2);
    etcd.put("moved", "on");
    // Out of sync while its machine is reachable: not a failure a repair mends, so nothing
    // moves (CKE's RepairBlockedByEtcdOutOfSync).
    let held = Fleet::new(&etcd, ["healthy"; 3]);
    assert!(held.passes(&etcd, &ca).is_empty());
    let said = held.explain(&etcd, &ca, "worker-1");
    assert!(
        said.contains(&format!(
            "etcd member {cp3} is out of sync while its machine is reachable"
        )),
        "{said}"
    );
    // Out of sync on the control plane that failed (sabakan: UNREACHABLE): that control plane
    // is what a repair mends, and two of three members in sync are enough.
    let mends = Fleet::new(&etcd, ["healthy", "healthy", "unreachable"]);
    let mut ran = mends.passes(&etcd, &ca);
    ran.sort();
    assert_eq!(ran, [WORKER.to_owned(), cp3.clone()]);

    // Two members cut off: no quorum, etcd is not healthy; nothing moves.
    etcd.freeze(1);
    let no_quorum = Fleet::new(&etcd, ["healthy", "unreachable", "unreachable"]);
    assert!(no_quorum.passes(&etcd, &ca).is_empty());
    let said = no_quorum.explain(&etcd, &ca, "worker-1");
    assert!(said.contains("etcd is not healthy"), "{said}");
}

/// The gate wants the control planes of a whole cluster.yml and all three files.
#[test]
fn the_etcd_gate_says_what_it_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let run = |extra: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("autorepair")
            .unwrap()
            .current_dir(dir.path())
            .env_remove("AUTOREPAIR_CONFIG")
            .args(["--config", "/dev/null", "--sabakan-file"])
            .arg(format!("{root}/fixtures/machines-demo.json"))
            .arg("--nodes")
            .arg(format!("{root}/fixtures/machines-demo-nodes.json"))
            .arg("--repair-config")
            .arg(format!("{root}/fixtures/machines-demo.yml"))
            .arg("--constraints")
            .arg(format!("{root}/fixtures/machines-constraints.json"))
            .args(extra)
            .args(["status"])
            .assert()
            .code(2);
        String::from_utf8_lossy(&out.get_output().stderr).into_owned()
    };
    let err = run(&["--etcd-ca", "ca", "--etcd-cert", "c", "--etcd-key", "k"]);
    assert!(err.contains("not its repair: section alone"), "{err}");
    let err = run(&["--etcd-ca", "ca"]);
    assert!(err.contains("--etcd-cert"), "{err}");
}
