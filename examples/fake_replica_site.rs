//! Serves what replicas of `run --loop --leader-elect` need, for scripts/takeover-bench: a
//! fake API server (crates/testsupport, `kube`) with the Lease resource, one metal3 Machine
//! with its host and Node, and the Nodes of the machines fleet; and a fake sabakan with that
//! fleet (a boot server and one machine). Plain HTTP on 127.0.0.1.
//!
//! ```sh
//! cargo run --example fake_replica_site -- DIR
//! ```
//!
//! It writes DIR/kubeconfig and DIR/sabakan-url, prints `ready`, and serves until its
//! standard input closes.

use autorepair::metal3::fixture::{Fleet, Host, Machine, Node};
use std::io::Read;
use std::path::PathBuf;
use testsupport::kube::{FakeKube, LEASE, node};
use testsupport::sabakan::{FakeSabakan, machine};

fn main() {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .expect("usage: fake_replica_site DIR"),
    );
    let kube = FakeKube::builder().resource(LEASE).start();
    let fleet = Fleet::new()
        .machine(Machine::new("ns", "m1").node("n1").host("h1"))
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1"));
    for item in fleet.build()["items"].as_array().expect("a List") {
        kube.insert(item.clone());
    }
    let sabakan = FakeSabakan::start();
    sabakan.set_now(&jiff::Timestamp::now().to_string());
    sabakan.insert(
        machine("boot-0")
            .role("boot")
            .ipv4("10.69.0.3")
            .label("autorepair.cluster.policy", "step-1"),
    );
    sabakan.insert(machine("cs0").ipv4("10.69.0.10"));
    kube.insert(node("10.69.0.10").build());
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: fake\n\
         contexts:\n- name: fake\n  context: {{cluster: fake, user: fake}}\n\
         clusters:\n- name: fake\n  cluster: {{server: '{}'}}\n\
         users:\n- name: fake\n  user: {{}}\n",
        kube.url()
    );
    std::fs::write(dir.join("kubeconfig"), kubeconfig).expect("write the kubeconfig");
    std::fs::write(dir.join("sabakan-url"), sabakan.url()).expect("write sabakan's URL");
    println!(
        "ready: API server at {}, sabakan at {}",
        kube.url(),
        sabakan.url()
    );
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}
