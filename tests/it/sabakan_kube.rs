//! `autorepair sabakan update --kubeconfig FILE`: the Nodes read from a (fake) Kubernetes API
//! server over verified TLS, through the binary, give what `--nodes FILE` gives.

use crate::common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use testsupport::kube::FakeKube;

const NOW: &str = "2026-06-01T00:00:00Z";

fn bin() -> Command {
    let mut c = Command::cargo_bin("autorepair").unwrap();
    c.env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .env_remove("KUBECONFIG");
    c
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/sabakan")
        .join(name)
}

fn kubeconfig(server: &str) -> String {
    common::kubeconfig(server, "good")
}

fn run(c: &mut Command) -> (i32, String, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn update(current: &Path, nodes: &[&str]) -> Command {
    let mut c = bin();
    c.args(["sabakan", "update", "--template"])
        .arg(fixture("template.yml"))
        .arg("--constraints")
        .arg(fixture("constraints.json"))
        .arg("--machines")
        .arg(fixture("machines.json"))
        .arg("--current")
        .arg(current)
        .args(["--now", NOW, "--json"])
        .args(nodes);
    c
}

#[test]
fn update_reads_node_taints_through_a_kubeconfig() {
    let mut generate = bin();
    generate
        .args(["sabakan", "generate", "--template"])
        .arg(fixture("template.yml"))
        .arg("--constraints")
        .arg(fixture("constraints.json"))
        .arg("--machines")
        .arg(fixture("machines.json"))
        .args(["--now", NOW]);
    let (code, generated, err) = run(&mut generate);
    assert_eq!(code, 0, "{err}");
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&generated).unwrap();
    let first_cp = doc["nodes"][0]["address"].as_str().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let current = dir.path().join("cluster.yml");
    std::fs::write(&current, &generated).unwrap();

    // The first control plane's Node is named after its host; its InternalIP is the address.
    let kube = FakeKube::builder().tls().start();
    let tainted = testsupport::kube::node("cp-host-0")
        .taint("example.com/broken", "", "NoSchedule")
        .set(
            "/status/addresses",
            serde_json::json!([
                { "type": "Hostname", "address": "cp-host-0" },
                { "type": "InternalIP", "address": first_cp },
            ]),
        )
        .build();
    kube.insert(tainted.clone());
    kube.insert(testsupport::kube::node("unrelated").build());
    let config = dir.path().join("kubeconfig");
    std::fs::write(&config, kubeconfig(kube.url())).unwrap();

    let (code, out, err) = run(update(&current, &[]).arg("--kubeconfig").arg(&config));
    assert_eq!(code, 0, "{err}");
    let through_kube: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(through_kube["action"], "replace-control-plane", "{out}");
    assert!(
        through_kube["why"].as_str().unwrap().contains(&first_cp),
        "{out}"
    );
    assert!(
        kube.requests()
            .iter()
            .any(|r| r.method == "GET" && r.path == "/api/v1/nodes"),
        "the Nodes were listed"
    );
    assert!(kube.writes().is_empty(), "reading Nodes writes nothing");

    // The same Nodes from a file give the same answer.
    let list = serde_json::json!({ "apiVersion": "v1", "kind": "List", "items": kube.objects(&testsupport::kube::NODE) });
    let nodes_file = dir.path().join("nodes.json");
    std::fs::write(&nodes_file, list.to_string()).unwrap();
    let (code, out, err) = run(update(&current, &[]).arg("--nodes").arg(&nodes_file));
    assert_eq!(code, 0, "{err}");
    let from_file: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(from_file, through_kube);

    // Without the taint nothing applies: the current file, unchanged.
    kube.mutate(&testsupport::kube::NODE, "", "cp-host-0", |n| {
        n["spec"]["taints"] = Value::Null;
    });
    let (code, out, err) = run(update(&current, &[]).arg("--kubeconfig").arg(&config));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["action"], "none", "{out}");
    assert_eq!(v["cluster"].as_str().unwrap(), generated);

    // A context whose server does not answer: exit 3, naming the kubeconfig and the server.
    let (code, _, err) = run(update(&current, &[])
        .arg("--kubeconfig")
        .arg(&config)
        .args(["--kube-context", "wrong"]));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains(&config.display().to_string()), "{err}");
    assert!(err.contains("127.0.0.1:1"), "{err}");
    assert!(!err.contains("not-a-real-token"), "{err}");
    // A context that is not there.
    let (code, _, err) = run(update(&current, &[])
        .arg("--kubeconfig")
        .arg(&config)
        .args(["--kube-context", "absent"]));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("has no context \"absent\""), "{err}");
    // --nodes and --kubeconfig together: a usage error.
    let (code, _, err) = run(update(&current, &[])
        .arg("--kubeconfig")
        .arg(&config)
        .arg("--nodes")
        .arg(&nodes_file));
    assert_eq!(code, 2, "{err}");
}
