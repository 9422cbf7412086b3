//! contrib/kubernetes's RBAC against what the metal3 family really asks the API server: every
//! request a pass, a drain, a reprovision, the watches, the leader election and the workload
//! kubeconfig reads make (recorded by the fake server) must be allowed by `rbac.yaml` (with
//! `rbac-workload-secrets.yaml` filled in for the cluster namespace), and nothing more.

use autorepair::engine::exec;
use autorepair::engine::{Backend, Limits};
use autorepair::k8s::lease::{Elector, LeaseName, Timing};
use autorepair::metal3::fixture::{Fleet, Host, Machine, Node};
use autorepair::metal3::kube::watch;
use autorepair::metal3::kube::{KubeBackend, Options, Workload};
use autorepair::metal3::{self, Op, Settings};
use serde_json::{Value, json};
use std::time::Duration;
use testsupport::kube::{FakeKube, LEASE, OPENSHIFT_MACHINE, POD, RecordedRequest, Resource};

const NOW: i64 = 1_800_000_000;

const fn control_plane(kind: &'static str, plural: &'static str) -> Resource {
    Resource {
        group: "controlplane.cluster.x-k8s.io",
        versions: &["v1beta2", "v1beta1"],
        kind,
        plural,
        short_names: &[],
        namespaced: true,
        custom: true,
        status_subresource: true,
    }
}

/// One RBAC rule, with the namespace it holds in (`None`: a ClusterRole's, everywhere).
#[derive(Debug)]
struct Rule {
    namespace: Option<String>,
    groups: Vec<String>,
    resources: Vec<String>,
    names: Vec<String>,
    verbs: Vec<String>,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// The rules of the Roles and ClusterRoles in a multi-document YAML file.
fn rules(text: &str) -> Vec<Rule> {
    let mut out = Vec::new();
    for doc in serde_yaml_ng::Deserializer::from_str(text) {
        let v: Value = serde::Deserialize::deserialize(doc).expect("YAML");
        let namespace = match v["kind"].as_str() {
            Some("ClusterRole") => None,
            Some("Role") => Some(v["metadata"]["namespace"].as_str().unwrap().to_owned()),
            _ => continue,
        };
        for r in v["rules"].as_array().unwrap() {
            out.push(Rule {
                namespace: namespace.clone(),
                groups: strings(&r["apiGroups"]),
                resources: strings(&r["resources"]),
                names: strings(&r["resourceNames"]),
                verbs: strings(&r["verbs"]),
            });
        }
    }
    out
}

/// What RBAC sees of a request: group, resource[/subresource], verb, namespace, name.
type Attributes = (String, String, String, Option<String>, Option<String>);

/// The request's [`Attributes`]; `None` for discovery, which every authenticated user may read.
fn attributes(r: &RecordedRequest) -> Option<Attributes> {
    let parts: Vec<&str> = r.path.trim_start_matches('/').split('/').collect();
    let (group, rest) = match parts.as_slice() {
        ["api", _version, rest @ ..] if !rest.is_empty() => (String::new(), rest),
        ["apis", group, _version, rest @ ..] if !rest.is_empty() => ((*group).to_owned(), rest),
        _ => return None,
    };
    let (namespace, rest) = match rest {
        ["namespaces", ns, rest @ ..] if !rest.is_empty() => (Some((*ns).to_owned()), rest),
        _ => (None, rest),
    };
    let (resource, name) = match rest {
        [res] => ((*res).to_owned(), None),
        [res, name] => ((*res).to_owned(), Some((*name).to_owned())),
        [res, name, sub] => (format!("{res}/{sub}"), Some((*name).to_owned())),
        _ => panic!("unexpected path {}", r.path),
    };
    let watch = r
        .query
        .split('&')
        .any(|q| q == "watch=true" || q == "watch=1");
    let verb = match (r.method.as_str(), &name) {
        ("GET", Some(_)) => "get",
        ("GET", None) if watch => "watch",
        ("GET", None) => "list",
        ("PATCH", _) => "patch",
        ("PUT", _) => "update",
        ("DELETE", _) => "delete",
        ("POST", _) => "create",
        (m, _) => panic!("unexpected method {m}"),
    };
    Some((group, resource, verb.to_owned(), namespace, name))
}

fn allowed(rules: &[Rule], r: &RecordedRequest) -> bool {
    let Some((group, resource, verb, namespace, name)) = attributes(r) else {
        return true;
    };
    let any = |list: &[String], x: &str| list.iter().any(|l| l == "*" || l == x);
    rules.iter().any(|rule| {
        rule.namespace
            .as_ref()
            .is_none_or(|ns| namespace.as_ref() == Some(ns))
            && any(&rule.groups, &group)
            && any(&rule.resources, &resource)
            && any(&rule.verbs, &verb)
            && (rule.names.is_empty() || name.as_ref().is_some_and(|n| rule.names.contains(n)))
    })
}

fn contrib(file: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/contrib/kubernetes/{file}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn load(kube: &FakeKube, list: &Value) {
    for item in list["items"].as_array().unwrap() {
        kube.insert(item.clone());
    }
}

#[test]
fn every_request_the_family_makes_is_allowed_by_the_shipped_rbac() {
    let secrets = contrib("rbac-workload-secrets.yaml")
        .replace("${NAMESPACE}", "ns")
        .replace("${CLUSTERS}", "\"c1-kubeconfig\"");
    let mut all = rules(&contrib("rbac.yaml"));
    all.extend(rules(&secrets));
    assert!(
        !all.iter()
            .any(|r| r.namespace.is_none() && r.resources.iter().any(|x| x == "secrets")),
        "no Secret is readable cluster-wide"
    );

    let kube = FakeKube::builder()
        .resource(control_plane("KubeadmControlPlane", "kubeadmcontrolplanes"))
        .resource(control_plane("RKE2ControlPlane", "rke2controlplanes"))
        .resource(OPENSHIFT_MACHINE)
        .resource(LEASE)
        .start();
    let expired = (NOW - 60).to_string();
    let fleet = Fleet::new()
        .scope("Cluster", "ns", "c1", &[])
        .scope(
            "MachineSet",
            "ns",
            "ms1",
            &[("autorepair.io/suspend", &expired)],
        )
        .scope("KubeadmControlPlane", "ns", "kcp", &[])
        .scope(
            "RKE2ControlPlane",
            "ns",
            "rke2",
            &[("autorepair.io/suspend", &expired)],
        )
        .machine(
            Machine::new("ns", "m1")
                .node("n1")
                .host("h1")
                .owner("MachineSet", "ms1")
                .requested(),
        )
        .host(Host::new("ns", "h1"))
        .machine(
            Machine::new("ns", "m2")
                .node("n2")
                .host("h2")
                .owner("RKE2ControlPlane", "rke2"),
        )
        .host(Host::new("ns", "h2"))
        .node(Node::new("n1"))
        .node(Node::new("n2"))
        .build();
    load(&kube, &fleet);
    kube.insert(
        testsupport::kube::object(&POD, "web")
            .namespace("ns")
            .set("/spec/nodeName", "n2")
            .set("/status/phase", "Running")
            .owner("apps/v1", "ReplicaSet", "web-1", "u-rs", true)
            .build(),
    );
    kube.insert(
        testsupport::kube::object(&POD, "batch")
            .namespace("ns")
            .set("/spec/nodeName", "n2")
            .set("/status/phase", "Running")
            .owner("batch/v1", "Job", "batch", "u-job", true)
            .build(),
    );

    // A MachineHealthCheck's request for m1: read, and reported on in its status.
    let m1_uid =
        kube.get(&testsupport::kube::MACHINE, "ns", "m1").unwrap()["metadata"]["uid"].clone();
    kube.insert(json!({
        "apiVersion": "remediation.autorepair.io/v1alpha1",
        "kind": "AutorepairRemediation",
        "metadata": {"name": "m1", "namespace": "ns", "ownerReferences": [{
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine", "name": "m1", "uid": m1_uid,
        }]},
        "spec": {},
    }));

    // Passes: the power cycle (reboot annotation, Node backup and delete, request cleared,
    // power-on) with the test playing the host's power, expired suspends removed.
    let mut b = KubeBackend::from_config(kube.config(), Options::default()).unwrap();
    for i in 0..6 {
        let snap = b.snapshot().unwrap();
        let plan = metal3::plan(
            &snap,
            &Settings::default(),
            NOW + 60 * i,
            &Limits::default(),
            7,
        );
        let report = exec::execute(&plan, &mut b);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        for h in kube.objects(&testsupport::kube::BARE_METAL_HOST) {
            let name = h["metadata"]["name"].as_str().unwrap().to_owned();
            let off = h["metadata"]["annotations"]
                .as_object()
                .is_some_and(|a| a.keys().any(|k| k.starts_with("reboot.metal3.io")));
            kube.mutate(&testsupport::kube::BARE_METAL_HOST, "ns", &name, |o| {
                o["status"]["poweredOn"] = json!(!off);
            });
        }
    }
    // A Machine handed over to its owner (OwnerRemediated False, through its status).
    b.snapshot().unwrap();
    b.advance(
        &autorepair::engine::ObjectRef::new("machine", "ns/m1"),
        &Op::HandOver {
            machine: "ns/m1".into(),
            conditions: autorepair::metal3::objects::Conditions {
                v1beta2: true,
                current: Vec::new(),
                legacy: Vec::new(),
            },
            message: "autorepair gave up".into(),
        },
        "",
    )
    .unwrap();
    // Out-of-service fencing: a tainted Node's Pods, and the VolumeAttachments naming it.
    kube.mutate(&testsupport::kube::NODE, "", "n2", |n| {
        n["spec"]["taints"] = json!([{"key": "node.kubernetes.io/out-of-service",
            "value": "nodeshutdown", "effect": "NoExecute"}]);
    });
    let snap = b.snapshot().unwrap();
    assert!(snap.fence_unknown.is_empty(), "{:?}", snap.problems);
    assert_eq!(snap.pods.len(), 2, "{:?}", snap.pods);
    kube.mutate(&testsupport::kube::NODE, "", "n2", |n| {
        n["spec"]["taints"] = json!([]);
    });
    // A drain (cordon, evictions, a running Job Pod deleted) and a reprovision.
    b.snapshot().unwrap();
    let reason = "autorepair:0f8fad5b-d9cb-469f-a165-70867728950e";
    b.submit("ns/m2", &Op::Drain { node: "n2".into() }, reason, None)
        .unwrap();
    b.submit(
        "ns/m2",
        &Op::DeleteMachine {
            machine: "ns/m2".into(),
        },
        reason,
        None,
    )
    .unwrap();
    // Nodes in workload clusters: the kubeconfig Secret, by name.
    kube.insert(
        testsupport::kube::secret("c1-kubeconfig")
            .namespace("ns")
            .string_data("value", "not a kubeconfig")
            .build(),
    );
    let options = Options {
        workload: Workload::ClusterSecrets,
        ..Options::default()
    };
    let mut w = KubeBackend::from_config(kube.config(), options).unwrap();
    let mut m3 = Machine::new("ns", "m3").node("n3").host("h1").cluster("c1");
    m3 = m3.annotate("autorepair.io/policy", "power-cycle");
    load(&kube, &Fleet::new().machine(m3).build());
    w.snapshot().unwrap();
    // The watches and the leader election.
    let watcher = watch::from_config(kube.config(), &Options::default()).unwrap();
    assert!(watcher.wait_watching(Duration::from_secs(10)));
    let timing = Timing {
        lease: Duration::from_secs(2),
        renew_deadline: Duration::from_millis(1500),
        retry: Duration::from_millis(200),
    };
    let lease = LeaseName {
        namespace: "autorepair".into(),
        name: "autorepair".into(),
    };
    let elector = Elector::from_config(
        kube.config(),
        Options::default().timeout,
        lease,
        "a".into(),
        timing,
    )
    .unwrap();
    assert!(elector.wait_leader(Duration::from_secs(5)));
    std::thread::sleep(Duration::from_millis(500));
    drop(elector);
    drop(watcher);

    let requests = kube.requests();
    let mut seen: Vec<(String, String, String)> = requests
        .iter()
        .filter_map(attributes)
        .map(|(g, r, v, _, _)| (g, r, v))
        .collect();
    seen.sort();
    seen.dedup();
    let refused: Vec<String> = requests
        .iter()
        .filter(|r| !allowed(&all, r))
        .map(|r| format!("{} {}?{}", r.method, r.path, r.query))
        .collect();
    assert!(refused.is_empty(), "not allowed by the RBAC: {refused:#?}");
    // The scenario reaches what the rules are for.
    for want in [
        ("cluster.x-k8s.io", "machines", "patch"),
        ("cluster.x-k8s.io", "machines", "delete"),
        ("cluster.x-k8s.io", "machines/status", "patch"),
        ("cluster.x-k8s.io", "machinesets", "patch"),
        (
            "controlplane.cluster.x-k8s.io",
            "rke2controlplanes",
            "patch",
        ),
        (
            "controlplane.cluster.x-k8s.io",
            "kubeadmcontrolplanes",
            "list",
        ),
        ("machine.openshift.io", "machines", "watch"),
        ("metal3.io", "baremetalhosts", "patch"),
        (
            "remediation.autorepair.io",
            "autorepairremediations",
            "watch",
        ),
        (
            "remediation.autorepair.io",
            "autorepairremediations/status",
            "patch",
        ),
        ("", "nodes", "delete"),
        ("", "nodes", "patch"),
        ("", "pods/eviction", "create"),
        ("", "pods", "delete"),
        ("", "secrets", "get"),
        ("coordination.k8s.io", "leases", "create"),
        ("coordination.k8s.io", "leases", "update"),
    ] {
        let want = (want.0.to_owned(), want.1.to_owned(), want.2.to_owned());
        assert!(seen.contains(&want), "{want:?} never asked: {seen:#?}");
    }
    // Another namespace's Secret is not readable.
    let other = RecordedRequest {
        method: "GET".into(),
        path: "/api/v1/namespaces/other/secrets/c1-kubeconfig".into(),
        query: String::new(),
        content_type: String::new(),
        body: String::new(),
        token: String::new(),
    };
    assert!(!allowed(&all, &other));
}
