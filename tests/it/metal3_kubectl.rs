//! The README's metal3 tour as a kubectl user sees it: the demo fleet served by the fake API
//! server (crates/testsupport, `kube`), real passes of `autorepair run --kube` with the test
//! playing the baremetal-operator and the kubelets between them, and then the README's
//! kubectl commands, run as it prints them with Debian's kubectl (`kubernetes-client`), must
//! print what the README shows.
//!
//! Without kubectl on PATH the tests are listed as ignored (build.rs), unless
//! `AUTOREPAIR_REQUIRE_KUBECTL` is set, as `.ci/run` sets it: then they run, and fail without it.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use testsupport::kube::{
    BARE_METAL_HOST, DEFAULT_RESOURCES, FakeKube, MACHINE, NODE, OPENSHIFT_MACHINE, Resource,
};

const KUBEADM_CONTROL_PLANE: Resource = Resource {
    group: "controlplane.cluster.x-k8s.io",
    versions: &["v1beta2", "v1beta1"],
    kind: "KubeadmControlPlane",
    plural: "kubeadmcontrolplanes",
    short_names: &["kcp"],
    namespaced: true,
    custom: true,
    status_subresource: true,
};

/// A Cluster API management cluster (no OpenShift kinds: `machines` is Cluster API's) with the
/// README's demo fleet in it.
fn demo_cluster() -> FakeKube {
    let resources: Vec<Resource> = DEFAULT_RESOURCES
        .iter()
        .filter(|r| **r != OPENSHIFT_MACHINE)
        .copied()
        .chain([KUBEADM_CONTROL_PLANE])
        .collect();
    let kube = FakeKube::builder()
        .resources(&resources)
        .namespace_lifecycle()
        .start();
    let demo: Value =
        serde_json::from_str(&std::fs::read_to_string(repo("fixtures/metal3-demo.json")).unwrap())
            .unwrap();
    for item in demo["items"].as_array().unwrap() {
        kube.insert(item.clone());
    }
    kube
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// A kubeconfig for the fake server, as `kubectl config` would write it.
fn kubeconfig(kube: &FakeKube, dir: &Path) -> PathBuf {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: demo\n\
             contexts:\n- name: demo\n  context: {{cluster: demo, user: demo}}\n\
             clusters:\n- name: demo\n  cluster: {{server: '{}'}}\n\
             users:\n- name: demo\n  user: {{}}\n",
            kube.url()
        ),
    )
    .unwrap();
    path
}

/// One pass of the watcher on the live cluster.
fn pass(config: &Path, dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_autorepair"))
        .args(["--config", "/dev/null", "--lock-file"])
        .arg(dir.join("lock"))
        .args(["run", "--kube", "--kubeconfig"])
        .arg(config)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The baremetal-operator and the kubelets between passes: a reboot key keeps a host off,
/// else an online host is on; a powered-on host's Machine whose Node was deleted registers it
/// again, Ready.
fn play_world(kube: &FakeKube) {
    for host in kube.objects(&BARE_METAL_HOST) {
        let name = host["metadata"]["name"].as_str().unwrap().to_owned();
        let rebooting = host["metadata"]["annotations"]
            .as_object()
            .is_some_and(|a| a.keys().any(|k| k.starts_with("reboot.metal3.io")));
        let on = !rebooting && host["spec"]["online"] == true;
        if host.pointer("/status/poweredOn") != Some(&json!(on)) {
            kube.mutate(&BARE_METAL_HOST, "prod", &name, |o| {
                o["status"]["poweredOn"] = json!(on);
            });
        }
    }
    for m in kube.objects(&MACHINE) {
        let machine = m["metadata"]["name"].as_str().unwrap();
        let Some(node) = m.pointer("/status/nodeRef/name").and_then(Value::as_str) else {
            continue;
        };
        let host = kube.get(&BARE_METAL_HOST, "prod", &format!("{machine}-bmh"));
        let on = host.is_some_and(|h| h.pointer("/status/poweredOn") == Some(&json!(true)));
        if on && kube.get(&NODE, "", node).is_none() {
            kube.insert(json!({
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": node, "labels": {"kubernetes.io/hostname": node}},
                "status": {
                    "conditions": [{
                        "type": "Ready",
                        "status": "True",
                        "reason": "KubeletReady",
                        "lastTransitionTime": jiff::Timestamp::now().to_string(),
                    }],
                    "nodeInfo": {"kubeletVersion": "v1.34.1"},
                },
            }));
        }
    }
}

/// Runs one kubectl command line (as a shell would split it: words, no quoting) with the
/// kubeconfig, and a cache directory of its own.
fn kubectl(line: &str, config: &Path, dir: &Path) -> (bool, String) {
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[0], "kubectl", "{line}");
    crate::common::kubectl(&words[1..], config, dir)
}

/// One step of the README's kubectl tour.
#[derive(Debug, PartialEq)]
enum Step {
    /// A kubectl command line and the output the README shows under it (`# ` taken off).
    Kubectl(String, Vec<String>),
    /// An `autorepair` line: the watcher at work (here: passes with the world between them).
    Watcher(String),
}

/// The README's shell block that tells the story with kubectl (the one with `kubectl
/// describe machine`), as steps.
fn readme_tour(readme: &str) -> Vec<Step> {
    let block = readme
        .split("```sh\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .find(|b| b.contains("\nkubectl describe machine"))
        .expect("README.md has a sh block with `kubectl describe machine`");
    let mut steps = Vec::new();
    for line in block.lines() {
        if let Some(shown) = line.strip_prefix('#') {
            match steps.last_mut() {
                Some(Step::Kubectl(_, expected)) => {
                    expected.push(shown.strip_prefix(' ').unwrap_or(shown).to_string())
                }
                _ => panic!("README: output {line:?} under no kubectl command"),
            }
            continue;
        }
        // A trailing comment is for the reader.
        let command = line.split(" #").next().unwrap().trim().to_string();
        if command.starts_with("kubectl ") {
            steps.push(Step::Kubectl(command, Vec::new()));
        } else if command.starts_with("autorepair ") {
            steps.push(Step::Watcher(command));
        } else if !command.is_empty() {
            panic!("README: the kubectl tour has a line the test does not know: {line:?}");
        }
    }
    steps
}

/// Whether `line` is `pattern`, where `…` stands for anything.
fn glob(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split('…').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == line;
    };
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// A line as compared: blanks between words count as one (kubectl pads columns to their
/// widest cell), and an age (`25d`, `3m20s`, `<unknown>`) is any age.
fn normal(line: &str) -> String {
    line.split_whitespace()
        .map(|w| if is_age(w) { "AGE" } else { w })
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_age(word: &str) -> bool {
    let mut rest = word;
    let mut units = 0;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let unit = rest[digits..].chars().next();
        if digits == 0 || !matches!(unit, Some('s' | 'm' | 'h' | 'd' | 'y')) {
            return false;
        }
        rest = &rest[digits + 1..];
        units += 1;
    }
    units > 0 && units <= 2
}

/// Whether `actual` shows what the README shows: its lines in order, each matching one
/// line of `actual` (`…` in a line stands for anything), consecutive unless a line of `…`
/// alone stands between them for lines left out.
fn shows(expected: &[String], actual: &str) -> Result<(), String> {
    let actual: Vec<String> = actual.lines().map(normal).collect();
    let mut at = 0;
    let mut skipping = false;
    for want in expected {
        let want = normal(want);
        if want == "…" {
            skipping = true;
            continue;
        }
        let fits = |line: &str| glob(&want, line);
        let found = if skipping {
            (at..actual.len()).find(|i| fits(&actual[*i]))
        } else {
            (at < actual.len() && fits(&actual[at])).then_some(at)
        };
        match found {
            Some(i) => at = i + 1,
            None => {
                return Err(format!(
                    "{want:?} not found {} line {} of:\n{}",
                    if skipping { "from" } else { "at" },
                    at + 1,
                    actual.join("\n")
                ));
            }
        }
        skipping = false;
    }
    if at < actual.len() && !skipping {
        return Err(format!(
            "more lines than the README shows, from {:?}:\n{}",
            actual[at],
            actual.join("\n")
        ));
    }
    Ok(())
}

/// The watcher at work until the broken worker's repair has a result: a pass, then the
/// world's answer, at most ten times.
fn run_until_repaired(kube: &FakeKube, config: &Path, dir: &Path) {
    for _ in 0..10 {
        pass(config, dir);
        play_world(kube);
        let annotations =
            kube.get(&MACHINE, "prod", "workers-7d9f-b2").unwrap()["metadata"]["annotations"]
                .clone();
        let done = annotations.as_object().is_some_and(|a| {
            a.values()
                .any(|v| v.as_str().is_some_and(|v| v.starts_with("result:")))
        });
        if done {
            return;
        }
    }
    panic!("no result after ten passes");
}

#[test]
#[cfg_attr(
    not(have_kubectl),
    ignore = "needs kubectl: apt-get install kubernetes-client"
)]
fn the_readme_kubectl_tour_shows_what_kubectl_prints() {
    let kube = demo_cluster();
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(&kube, dir.path());
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let steps = readme_tour(&readme);
    assert!(
        steps.iter().any(|s| matches!(s, Step::Watcher(_))),
        "the tour runs the watcher: {steps:?}"
    );
    let mut failures = Vec::new();
    for step in &steps {
        match step {
            Step::Watcher(line) => {
                assert!(line.contains("run --kube"), "{line}");
                run_until_repaired(&kube, &config, dir.path());
            }
            Step::Kubectl(line, expected) => {
                let (ok, out) = kubectl(line, &config, dir.path());
                assert!(ok, "{line}: {out}");
                if let Err(e) = shows(expected, &out) {
                    failures.push(format!("{line}\n{e}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "README.md:\n{}", failures.join("\n\n"));
}

#[test]
#[cfg_attr(
    not(have_kubectl),
    ignore = "needs kubectl: apt-get install kubernetes-client"
)]
fn the_story_is_told_on_the_machine_and_its_host() {
    let kube = demo_cluster();
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(&kube, dir.path());
    let run = |line: &str| kubectl(line, &config, dir.path());
    let (_, before) = run("kubectl get node worker-b2");
    assert!(
        normal(&before).contains("worker-b2 NotReady worker AGE v1.34.1"),
        "{before}"
    );

    run_until_repaired(&kube, &config, dir.path());
    let (_, nodes) = run("kubectl get nodes");
    assert!(
        normal(&nodes).contains("worker-b2 Ready worker AGE v1.34.1"),
        "{nodes}"
    );
    // The Machine's Events in the order they happened, from the power-off to the success.
    let (_, described) = run("kubectl describe machine -n prod workers-7d9f-b2");
    let reasons: Vec<&str> = described
        .split("\nEvents:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no Events in {described}"))
        .lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(
        reasons,
        [
            "PowerCycleStarted",
            "NodeFenced",
            "RemediationRequestServed",
            "RemediationSucceeded"
        ],
        "{described}"
    );
    // `get events` lists them as the API server keeps them, by name: client-go's names make
    // that the order they happened in, as ours do (a random suffix made it random).
    let (_, listed) = run(
        "kubectl get events -n prod --field-selector involvedObject.name=workers-7d9f-b2 -o custom-columns=REASON:.reason --no-headers",
    );
    assert_eq!(
        listed.split_whitespace().collect::<Vec<_>>(),
        reasons,
        "{listed}"
    );
    let (_, host) = run("kubectl describe bmh -n prod workers-7d9f-b2-bmh");
    let host_events = host.split("\nEvents:\n").nth(1).unwrap_or_default();
    assert!(
        host_events.contains("PowerOff") && host_events.contains("PowerOn"),
        "{host}"
    );
    // Nothing on the Machines autorepair left alone.
    let (_, quiet) =
        run("kubectl get events -n prod --field-selector involvedObject.name=workers-7d9f-a1");
    assert_eq!(quiet.trim(), "No resources found in prod namespace.");
    let (_, all) = run("kubectl get events -A");
    assert_eq!(
        all.lines().filter(|l| l.starts_with("prod ")).count(),
        6,
        "{all}"
    );
    // The record, as -o json prints it.
    let (ok, json) = run("kubectl get machine -n prod workers-7d9f-b2 -o json");
    assert!(ok, "{json}");
    let m: Value = serde_json::from_str(&json).unwrap();
    assert!(
        m["metadata"]["annotations"]
            .as_object()
            .unwrap()
            .values()
            .any(|v| v.as_str().unwrap().contains(":success:")),
        "{m}"
    );
    let (ok, yaml) = run("kubectl get bmh -n prod workers-7d9f-b2-bmh -o yaml");
    assert!(ok && yaml.contains("poweredOn: true"), "{yaml}");
}

#[test]
#[cfg_attr(
    not(have_kubectl),
    ignore = "needs kubectl: apt-get install kubernetes-client"
)]
fn namespaces_are_objects_and_a_missing_one_is_not_found() {
    let kube = demo_cluster();
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(&kube, dir.path());
    let run = |line: &str| kubectl(line, &config, dir.path());
    // The NamespaceLifecycle admission: nothing is created in a namespace that is not there.
    let lost = dir.path().join("lost.json");
    let mut machine = kube.get(&MACHINE, "prod", "workers-7d9f-b2").unwrap();
    machine["metadata"] = json!({"name": "lost", "namespace": "nosuch"});
    std::fs::write(&lost, machine.to_string()).unwrap();
    // (The fake server has no OpenAPI document to validate against.)
    let create = format!("kubectl create --validate=false -f {}", lost.display());
    let (ok, ns) = run("kubectl get namespaces");
    assert!(ok, "{ns}");
    let names: Vec<String> = ns.lines().map(normal).collect();
    assert_eq!(
        names,
        [
            "NAME STATUS AGE",
            "default Active AGE",
            "kube-node-lease Active AGE",
            "kube-public Active AGE",
            "kube-system Active AGE",
            "prod Active AGE"
        ]
    );
    for (line, says) in [
        ("kubectl get ns nosuch", r#"namespaces "nosuch" not found"#),
        // kubectl asks whether the namespace exists once the object is not found.
        (
            "kubectl describe machine -n nosuch workers-7d9f-b2",
            r#"namespaces "nosuch" not found"#,
        ),
        (
            "kubectl describe machine -n prod nosuch",
            r#"machines.cluster.x-k8s.io "nosuch" not found"#,
        ),
        (create.as_str(), r#"namespaces "nosuch" not found"#),
    ] {
        let (ok, out) = run(line);
        assert!(
            !ok && out.contains("(NotFound)") && out.contains(says),
            "{line}: {out}"
        );
    }
    let (ok, out) = run("kubectl get machines -n nosuch");
    assert!(ok, "{out}");
    assert_eq!(out.trim(), "No resources found in nosuch namespace.");
}

#[test]
fn readme_output_is_compared_line_by_line() {
    let lines = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    let actual =
        "NAME        STATUS     AGE\nn1          Ready      25d\nn2          NotReady   3m20s\n";
    for (expected, ok) in [
        (
            lines(&["NAME STATUS AGE", "n1 Ready 5s", "n2 NotReady 9d"]),
            true,
        ),
        (lines(&["NAME STATUS AGE", "…", "n2 NotReady 9d"]), true),
        (lines(&["NAME STATUS AGE", "n1 Re…", "n2 …"]), true),
        (lines(&["NAME STATUS AGE", "…"]), true),
        (lines(&["NAME STATUS AGE", "n2 NotReady 9d"]), false),
        (lines(&["NAME STATUS AGE", "n1 Ready 5s"]), false),
        (
            lines(&["NAME STATUS AGE", "n1 Ready 5s", "n2 Ready 9d"]),
            false,
        ),
        (lines(&["NAME STATUS AGE", "n1 NotReady 5s", "…"]), false),
        (lines(&["NAME STATUS", "…"]), false),
        (lines(&["NAME … AGE", "n1 … 5s", "n2 NotReady …"]), true),
    ] {
        assert_eq!(shows(&expected, actual).is_ok(), ok, "{expected:?}");
    }
    assert!(is_age("25d") && is_age("3m20s") && !is_age("v1.34.1") && !is_age("d4"));
}

/// Each kind prints the columns its CRD declares for the version asked, the wide ones only
/// with `-o wide`.
#[test]
#[cfg_attr(
    not(have_kubectl),
    ignore = "needs kubectl: apt-get install kubernetes-client"
)]
fn custom_resources_print_their_crds_columns() {
    let kube = demo_cluster();
    kube.insert(json!({
        "apiVersion": "remediation.autorepair.io/v1alpha1",
        "kind": "AutorepairRemediation",
        "metadata": {"name": "workers-7d9f-b2", "namespace": "prod"},
        "spec": {},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Remediated", "status": "False", "reason": "PoweringOff"}],
        },
    }));
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(&kube, dir.path());
    for (line, header, row) in [
        (
            "kubectl get machines.v1beta1.cluster.x-k8s.io -n prod workers-7d9f-b2",
            "NAME CLUSTER NODENAME PROVIDERID PHASE AGE VERSION",
            "workers-7d9f-b2 edge worker-b2 metal3://prod/workers-7d9f-b2-bmh/workers-7d9f-b2-m3m Running AGE v1.34.1",
        ),
        (
            "kubectl get machines -n prod workers-7d9f-b2",
            "NAME CLUSTER NODE NAME FAILURE DOMAIN READY AVAILABLE UP-TO-DATE PHASE AGE VERSION",
            // v1beta2 shows the failure domain of the status, which Cluster API's controller
            // fills in (the demo's Machines carry only the spec's).
            "workers-7d9f-b2 edge worker-b2 Running AGE v1.34.1",
        ),
        (
            "kubectl get bmh -n prod workers-7d9f-d4-bmh -o wide",
            "NAME STATUS STATE CONSUMER BMC ONLINE ERROR AGE",
            "workers-7d9f-d4-bmh OK provisioned workers-7d9f-d4-m3m redfish://10.0.0.22/redfish/v1/Systems/1 false AGE",
        ),
        (
            "kubectl get autorepairremediations -n prod",
            "NAME PHASE REASON AGE",
            "workers-7d9f-b2 Running PoweringOff AGE",
        ),
        (
            "kubectl get metal3machines -n prod workers-7d9f-b2-m3m",
            "NAME AGE",
            "workers-7d9f-b2-m3m AGE",
        ),
        (
            "kubectl get nodes cp-0 -o wide",
            "NAME STATUS ROLES AGE VERSION INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME",
            "cp-0 Ready control-plane AGE v1.34.1 <none> <none> <unknown> <unknown> <unknown>",
        ),
    ] {
        let (ok, out) = kubectl(line, &config, dir.path());
        assert!(ok, "{line}: {out}");
        let lines: Vec<String> = out.lines().map(normal).collect();
        assert_eq!(lines, [header, row], "{line}:\n{out}");
    }
}

/// `kubectl get -w` prints a row for each change, in the same columns.
#[test]
#[cfg_attr(
    not(have_kubectl),
    ignore = "needs kubectl: apt-get install kubernetes-client"
)]
fn a_watch_prints_each_change_as_a_row() {
    use std::io::BufRead;
    let kube = demo_cluster();
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(&kube, dir.path());
    let mut child = Command::new("kubectl")
        .args(["get", "node", "worker-b2", "--watch"])
        .env("KUBECONFIG", &config)
        .env("HOME", dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(normal(&line)).is_err() {
                break;
            }
        }
    });
    let next = || rx.recv_timeout(std::time::Duration::from_secs(10));
    let mut seen = vec![next(), next()];
    // The change once the watch is open: an older kubectl skips the watch's first event (the
    // object as it is), which would then be the change itself.
    let open = std::time::Instant::now();
    while kube.open_watches() == 0 && open.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    kube.mutate(&NODE, "", "worker-b2", |n| {
        n["status"]["conditions"][0]["status"] = json!("True");
    });
    seen.push(next());
    let _ = child.kill();
    let _ = child.wait();
    let seen: Vec<String> = seen.into_iter().map(|l| l.unwrap_or_default()).collect();
    assert_eq!(
        seen,
        [
            "NAME STATUS ROLES AGE VERSION",
            "worker-b2 NotReady worker AGE v1.34.1",
            "worker-b2 Ready worker AGE v1.34.1"
        ]
    );
}
