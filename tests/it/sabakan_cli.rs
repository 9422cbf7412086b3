//! `autorepair sabakan …` as a user runs it, on the example files in fixtures/sabakan/, and
//! against the fake sabakan (crates/testsupport, `sabakan`).

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use testsupport::sabakan::{FakeSabakan, Fault, State, machine};

const NOW: &str = "2026-06-01T00:00:00Z";

fn bin() -> Command {
    let mut c = Command::cargo_bin("autorepair").unwrap();
    c.env_remove("AUTOREPAIR_CONFIG").env_remove("RUST_LOG");
    c
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/sabakan")
        .join(name)
}

fn stdout(c: &mut Command) -> String {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn generate_args(c: &mut Command) -> &mut Command {
    c.args(["sabakan", "generate", "--template"])
        .arg(fixture("template.yml"))
        .arg("--constraints")
        .arg(fixture("constraints.json"))
        .args(["--now", NOW])
}

#[test]
fn validate_template_exit_codes() {
    bin()
        .args(["sabakan", "validate-template"])
        .arg(fixture("template.yml"))
        .assert()
        .success();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yml");
    let text = std::fs::read_to_string(fixture("template.yml"))
        .unwrap()
        .replace("weight: \"1.0\"", "weight: \"-1\"");
    std::fs::write(&bad, text).unwrap();
    let out = bin()
        .args(["sabakan", "validate-template"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.yml"), "{err}");
    assert!(
        err.contains("nodes[2].labels[\"cke.cybozu.com/weight\"]"),
        "{err}"
    );
    let missing = bin()
        .args(["sabakan", "validate-template", "/nonexistent.yml"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
}

/// Generate, then update with nothing changed: the same file, byte for byte. Then a machine
/// fails, and update replaces it, saying why with every candidate's score.
#[test]
fn generate_then_update() {
    let generated = stdout(
        generate_args(&mut bin())
            .arg("--machines")
            .arg(fixture("machines.json")),
    );
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&generated).unwrap();
    let nodes = doc["nodes"].as_sequence().unwrap();
    assert_eq!(nodes.len(), 3 + 6);
    assert_eq!(doc["name"].as_str(), Some("tokyo0"));
    assert_eq!(
        doc["options"]["kubelet"]["cri_endpoint"].as_str(),
        Some("unix:///run/containerd/containerd.sock")
    );
    // The 2:1 weights: 4 cs and 2 ss workers.
    let role = |r: &str| {
        nodes
            .iter()
            .filter(|n| {
                n["control_plane"].as_bool() == Some(false)
                    && n["labels"]["cke.cybozu.com/role"].as_str() == Some(r)
            })
            .count()
    };
    assert_eq!((role("cs"), role("ss")), (4, 2));

    let dir = tempfile::tempdir().unwrap();
    let current = dir.path().join("cluster.yml");
    std::fs::write(&current, &generated).unwrap();
    let update = |machines: &Path, json: bool| {
        let mut c = bin();
        c.args(["sabakan", "update", "--template"])
            .arg(fixture("template.yml"))
            .arg("--constraints")
            .arg(fixture("constraints.json"))
            .arg("--machines")
            .arg(machines)
            .arg("--current")
            .arg(&current)
            .args(["--now", NOW]);
        if json {
            c.arg("--json");
        }
        stdout(&mut c)
    };
    assert_eq!(update(&fixture("machines.json"), false), generated);
    let none: Value = serde_json::from_str(&update(&fixture("machines.json"), true)).unwrap();
    assert_eq!(none["action"], "none");
    assert_eq!(none["changed"], false);

    // The first control plane's machine fails.
    let first_cp = nodes[0]["address"].as_str().unwrap().to_owned();
    let mut machines: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("machines.json")).unwrap()).unwrap();
    for m in machines["data"]["searchMachines"].as_array_mut().unwrap() {
        if m["spec"]["ipv4"][0] == first_cp.as_str() {
            m["status"]["state"] = "UNREACHABLE".into();
        }
    }
    let changed = dir.path().join("machines.json");
    std::fs::write(&changed, machines.to_string()).unwrap();
    let out: Value = serde_json::from_str(&update(&changed, true)).unwrap();
    assert_eq!(out["action"], "replace-control-plane");
    assert_eq!(out["changed"], true);
    assert!(out["why"].as_str().unwrap().contains(&first_cp), "{out}");
    let choice = &out["choices"][0];
    assert_eq!(choice["purpose"], "add a control plane (unused machines)");
    let candidates = choice["candidates"].as_array().unwrap();
    assert!(!candidates.is_empty());
    assert!(
        candidates
            .iter()
            .all(|c| c["score"].is_i64() && c["serial"].is_string())
    );
    assert_eq!(choice["chosen"], candidates[0]["address"]);
    let new: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(out["cluster"].as_str().unwrap()).unwrap();
    let demoted = new["nodes"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|n| n["address"].as_str() == Some(&first_cp))
        .unwrap();
    assert_eq!(demoted["control_plane"].as_bool(), Some(false));
}

#[test]
fn refusals_and_bad_inputs_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let tight = dir.path().join("c.json");
    std::fs::write(
        &tight,
        r#"{"control-plane-count": 3, "minimum-workers": 100}"#,
    )
    .unwrap();
    let out = bin()
        .args(["sabakan", "generate", "--template"])
        .arg(fixture("template.yml"))
        .arg("--constraints")
        .arg(&tight)
        .arg("--machines")
        .arg(fixture("machines.json"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "the generator refuses: a person acts"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no healthy machine is available"));

    std::fs::write(&tight, r#"{"control-plane-cnt": 3}"#).unwrap();
    let out = bin()
        .args(["sabakan", "generate", "--template"])
        .arg(fixture("template.yml"))
        .arg("--constraints")
        .arg(&tight)
        .arg("--machines")
        .arg(fixture("machines.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("c.json") && err.contains("control-plane-cnt"),
        "{err}"
    );

    // Neither --machines nor --sabakan.
    let out = bin()
        .args(["sabakan", "generate", "--template"])
        .arg(fixture("template.yml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// The fake sabakan with the machines of fixtures/sabakan/machines.json, plus a boot server
/// and a RETIRED machine that CKE's query leaves out by its variables' defaults.
fn fake_sabakan() -> FakeSabakan {
    let s = FakeSabakan::start();
    s.set_now(NOW);
    let machines: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("machines.json")).unwrap()).unwrap();
    s.load(&machines);
    s.insert(machine("BOOT01").role("boot").rack(1).ipv4("10.69.1.100"));
    s.insert(
        machine("GONE01")
            .role("cs")
            .rack(9)
            .ipv4("10.69.9.1")
            .state(State::Retired),
    );
    s
}

fn graphql_body(s: &FakeSabakan, i: usize) -> Value {
    let req = &s.requests()[i];
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", "/graphql")
    );
    serde_json::from_str(&req.body).unwrap()
}

#[test]
fn live_sabakan_with_ckes_query_and_variables() {
    let s = fake_sabakan();
    let url = s.url().to_owned();
    let from_file = stdout(
        generate_args(&mut bin())
            .arg("--machines")
            .arg(fixture("machines.json")),
    );

    // Without variables: the query's own defaults apply (no "variables" sent); the boot
    // server and the RETIRED machine stay out (and would not be chosen anyway).
    let live = stdout(generate_args(&mut bin()).args(["--sabakan", &url]));
    assert_eq!(live, from_file);
    let body = graphql_body(&s, 0);
    assert!(body["query"].as_str().unwrap().contains("query ckeSearch("));
    assert!(
        body["query"]
            .as_str()
            .unwrap()
            .contains("searchMachines(having: $having, notHaving: $notHaving)")
    );
    assert!(body.get("variables").is_none());

    let dir = tempfile::tempdir().unwrap();
    let vars = dir.path().join("vars.json");
    std::fs::write(
        &vars,
        r#"{"having":{"roles":["cs","ss"]},"notHaving":{"states":["RETIRED"]}}"#,
    )
    .unwrap();
    let with_vars = stdout(
        generate_args(&mut bin())
            .args(["--sabakan", &format!("{url}/graphql")])
            .arg("--variables")
            .arg(&vars),
    );
    assert_eq!(with_vars, from_file);
    let body = graphql_body(&s, 1);
    assert_eq!(
        body["variables"]["having"]["roles"],
        serde_json::json!(["cs", "ss"])
    );
    assert_eq!(body["variables"]["having"]["states"], Value::Null);
    assert_eq!(
        body["variables"]["notHaving"]["states"],
        serde_json::json!(["RETIRED"])
    );

    // The variables decide what sabakan answers: without rack 4, no node there.
    std::fs::write(&vars, r#"{"notHaving":{"racks":[4]}}"#).unwrap();
    let filtered = stdout(
        generate_args(&mut bin())
            .args(["--sabakan", &url])
            .arg("--variables")
            .arg(&vars),
    );
    assert!(from_file.contains("address: 10.69.4."), "{from_file}");
    assert!(!filtered.contains("address: 10.69.4."), "{filtered}");
    // Reads only.
    assert_eq!(s.requests().len(), 3);
    assert!(s.writes().is_empty());
}

#[test]
fn sabakan_errors_exit_3() {
    let s = fake_sabakan();
    let url = s.url().to_owned();
    s.fault(Fault::status(500));
    s.fault(Fault::status(200).body(r#"{"errors":[{"message":"bad query"}],"data":null}"#));
    s.fault(Fault::garbage("<html>proxy error</html>"));
    for want in ["HTTP 500", "bad query", "not JSON"] {
        let out = generate_args(&mut bin())
            .args(["--sabakan", &url])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want) && err.contains(&url), "{err}");
    }
    assert_eq!(s.pending_faults(), 0);
}

/// `ckecli cluster set` reads `cluster.yml` as YAML 1.1 (Go's yaml.v2), where a plain `no` is a
/// boolean and `1_000` a number: machine labels and template values like those must come out
/// quoted, so that a YAML 1.1 reader (Debian's PyYAML here) reads every value back as the
/// string it was.
#[test]
#[cfg_attr(
    not(have_pyyaml),
    ignore = "needs Debian's python3-yaml (a YAML 1.1 reader) under /usr/bin/python3"
)]
fn a_yaml_1_1_reader_reads_the_generated_cluster_back_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let odd = [
        "no",
        "yes",
        "on",
        "OFF",
        "y",
        "N",
        "1_000",
        "12:30",
        "0x1F",
        "2024-04-01",
        "~",
    ];
    let mut machines: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("machines.json")).unwrap()).unwrap();
    for (i, m) in machines["data"]["searchMachines"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        m["spec"]["labels"] = serde_json::json!([
            {"name": "odd", "value": odd[i % odd.len()]},
            {"name": "y", "value": "n"},
        ]);
    }
    let machines_file = dir.path().join("machines.json");
    std::fs::write(&machines_file, machines.to_string()).unwrap();
    let template = dir.path().join("template.yml");
    std::fs::write(
        &template,
        std::fs::read_to_string(fixture("template.yml"))
            .unwrap()
            .replace(
                "    cke.cybozu.com/role: ss\n    cke.cybozu.com/weight",
                "    cke.cybozu.com/role: ss\n    example.com/ssd: \"yes\"\n    \"no\": \"off\"\n    cke.cybozu.com/weight",
            ),
    )
    .unwrap();
    let generated = stdout(
        bin()
            .args(["sabakan", "generate", "--template"])
            .arg(&template)
            .arg("--constraints")
            .arg(fixture("constraints.json"))
            .args(["--now", NOW, "--machines"])
            .arg(&machines_file),
    );
    let yaml12: Value = serde_yaml_ng::from_str(&generated).unwrap();
    let read = std::process::Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout, default=repr)",
        ])
        .stdin(std::fs::File::open({
            let path = dir.path().join("cluster.yml");
            std::fs::write(&path, &generated).unwrap();
            path
        })
        .unwrap())
        .output()
        .unwrap();
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    let yaml11: Value = serde_json::from_slice(&read.stdout).unwrap();
    assert_eq!(yaml11, yaml12, "YAML 1.1 read differently:\n{generated}");
    // The odd values did reach the file (as strings), and the template's too.
    let labels: Vec<&Value> = yaml11["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &n["labels"])
        .collect();
    // Not every machine becomes a node: most odd values reach the file, each as written.
    let seen: std::collections::BTreeSet<&str> = labels
        .iter()
        .map(|l| l["sabakan.cke.cybozu.com/odd"].as_str().unwrap())
        .collect();
    assert!(seen.len() >= 5, "{seen:?}: {generated}");
    assert!(seen.iter().all(|v| odd.contains(v)), "{seen:?}");
    assert!(
        labels
            .iter()
            .any(|l| l["example.com/ssd"] == "yes" && l["no"] == "off")
    );
    assert!(labels.iter().all(|l| l["sabakan.cke.cybozu.com/y"] == "n"));
}
