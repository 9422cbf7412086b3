//! Serves a fake management cluster (crates/testsupport, `kube`) with N Machines, their Metal3Machines,
//! BareMetalHosts and Nodes, for measuring the `autorepair` process against it
//! (docs/benchmarks.md):
//!
//! ```sh
//! cargo run --profile test --example fake_kube_fleet -- 5000 /tmp/kubeconfig &
//! /usr/bin/time -v target/debug/autorepair run --kube --kubeconfig /tmp/kubeconfig \
//!     --config /dev/null --lock-file /tmp/autorepair.lock
//! ```
//!
//! It writes a kubeconfig for the server (plain HTTP on 127.0.0.1, no credentials), prints
//! `ready`, and serves until its standard input closes.

use autorepair::metal3::fixture::{Fleet, Host, Machine, Node};
use std::io::Read;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .and_then(|a| a.parse().ok())
        .expect("usage: fake_kube_fleet N KUBECONFIG");
    let path = args.next().expect("usage: fake_kube_fleet N KUBECONFIG");
    let mut fleet = Fleet::new().scope(
        "MachineSet",
        "ns",
        "ms",
        &[("autorepair.io/policy", "power-cycle")],
    );
    for i in 0..n {
        fleet = fleet
            .machine(
                Machine::new("ns", &format!("m{i}"))
                    .node(&format!("n{i}"))
                    .host(&format!("h{i}"))
                    .owner("MachineSet", "ms"),
            )
            .host(Host::new("ns", &format!("h{i}")))
            .node(Node::new(&format!("n{i}")));
    }
    let kube = testsupport::kube::FakeKube::start();
    for item in fleet.build()["items"].as_array().expect("a List") {
        kube.insert(item.clone());
    }
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: fake\n\
         contexts:\n- name: fake\n  context: {{cluster: fake, user: fake}}\n\
         clusters:\n- name: fake\n  cluster: {{server: '{}'}}\n\
         users:\n- name: fake\n  user: {{}}\n",
        kube.url()
    );
    std::fs::write(&path, kubeconfig).expect("write the kubeconfig");
    println!(
        "ready: {} objects at {}",
        kube.objects(&testsupport::kube::MACHINE).len() * 4 + 1,
        kube.url()
    );
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}
