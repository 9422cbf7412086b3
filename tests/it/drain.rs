//! The shared drain (`autorepair::k8s::drain`) against the fake API server
//! (crates/testsupport, `kube`), through the real kube client: CKE's rules (docs/drain.md) pass by pass.

use autorepair::k8s::client;
use autorepair::k8s::drain::{Cordon, Drainer, Options, Outcome, Protection};
use autorepair::k8s::{LabelSelector, nodes};
use serde_json::{Value, json};
use std::time::Duration;
use testsupport::kube::{
    FakeKube, NODE, POD, POD_DISRUPTION_BUDGET, RecordedRequest, namespace_object, node, pod,
    pod_disruption_budget,
};

const NOW: i64 = 1_800_000_000;
const ANNOTATION: &str = "cke.cybozu.com/reboot";

fn drainer(kube: &FakeKube, options: Options) -> Drainer {
    let (client, server) =
        client::build(kube.config(), Duration::from_secs(10), &Default::default()).unwrap();
    Drainer::new(client, options).named(server)
}

fn selector(yaml: &str) -> LabelSelector {
    serde_yaml_ng::from_str(yaml).unwrap()
}

/// A Pod on `n1` in `ns`, owned by a controller of `kind` (none if empty).
fn on_n1(name: &str, ns: &str, kind: &str) -> testsupport::kube::Obj {
    let p = pod(name).namespace(ns).node_name("n1").label("app", name);
    if kind.is_empty() {
        p
    } else {
        p.owner("apps/v1", kind, &format!("{name}-owner"), "u-owner", true)
    }
}

fn pods_left(kube: &FakeKube) -> Vec<String> {
    kube.objects(&POD)
        .iter()
        .map(|p| {
            format!(
                "{}/{}",
                p["metadata"]["namespace"].as_str().unwrap(),
                p["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect()
}

/// Every write carries its precondition: patches a resourceVersion, deletes and evictions a uid.
fn assert_nothing_written_blind(requests: &[RecordedRequest]) {
    for w in requests.iter().filter(|r| r.method != "GET") {
        let body: Value = serde_json::from_str(&w.body).unwrap_or(Value::Null);
        let ok = match w.method.as_str() {
            "PATCH" => body
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .is_some_and(|v| !v.is_empty()),
            "DELETE" => body.pointer("/preconditions/uid").is_some(),
            "POST" => {
                w.path.ends_with("/eviction")
                    && body["apiVersion"] == "policy/v1"
                    && body.pointer("/deleteOptions/preconditions/uid").is_some()
            }
            _ => false,
        };
        assert!(ok, "written blind: {w:?}");
    }
}

fn cordoned(kube: &FakeKube) -> (bool, Option<String>) {
    let n = kube.get(&NODE, "", "n1").unwrap();
    (
        n["spec"]["unschedulable"] == true,
        kube.annotation(&NODE, "", "n1", ANNOTATION),
    )
}

#[tokio::test]
async fn a_drain_cordons_evicts_deletes_and_waits_by_ckes_rules() {
    let kube = FakeKube::start();
    kube.insert(node("n1"));
    kube.insert(node("n2"));
    kube.insert(namespace_object("team").label("protected", "yes").build());
    kube.insert(namespace_object("scratch").build());
    kube.insert(on_n1("web", "team", "ReplicaSet").build());
    kube.insert(on_n1("agent", "kube-system", "DaemonSet").build());
    kube.insert(
        on_n1("static", "kube-system", "")
            .annotation("kubernetes.io/config.mirror", "x")
            .build(),
    );
    kube.insert(on_n1("batch", "scratch", "Job").build());
    kube.insert(
        on_n1("old-batch", "scratch", "Job")
            .phase("Succeeded")
            .build(),
    );
    kube.insert(
        on_n1("queued-batch", "scratch", "Job")
            .phase("Pending")
            .build(),
    );
    kube.insert(on_n1("cache", "scratch", "StatefulSet").build());
    kube.insert(on_n1("done", "scratch", "").phase("Succeeded").build());
    kube.insert(pod("elsewhere").namespace("team").node_name("n2").build());
    // The budgets: `cache` may not go (unprotected namespace: deleted instead), `web` may go once.
    kube.insert(
        pod_disruption_budget("cache", &[("app", "cache")], 0)
            .namespace("scratch")
            .build(),
    );
    kube.insert(
        pod_disruption_budget("web", &[("app", "web")], 1)
            .namespace("team")
            .build(),
    );
    let options = Options {
        protected_namespaces: Protection::from_cke(Some(selector(
            "{matchLabels: {protected: 'yes'}}",
        ))),
        protected_job_pods: Protection::from_cke(Some(selector("{matchLabels: {app: nightly}}"))),
        ..Options::default()
    };
    let mut d = drainer(&kube, options);
    assert!(!d.is_drained("n1").await.unwrap());

    assert_eq!(d.cordon("n1").await.unwrap(), Cordon::Done);
    assert_eq!(cordoned(&kube), (true, Some("true".into())));
    // The dry run evicted nothing for real.
    assert_eq!(pods_left(&kube).len(), 9);

    kube.clear_requests();
    let Outcome::Draining(p) = d.evict_step("n1", NOW).await.unwrap() else {
        panic!("pods were left")
    };
    assert_eq!(p.evicted, ["scratch/done", "team/web"]);
    assert_eq!(p.deleted, ["scratch/batch", "scratch/cache"]);
    assert!(p.refused.is_empty() && p.waiting.is_empty(), "{p:?}");
    assert_nothing_written_blind(&kube.requests());
    let mut left = pods_left(&kube);
    left.sort();
    assert_eq!(
        left,
        [
            "kube-system/agent",
            "kube-system/static",
            "scratch/old-batch",
            "scratch/queued-batch",
            "team/elsewhere",
        ]
    );
    let budget = kube.get(&POD_DISRUPTION_BUDGET, "team", "web").unwrap();
    assert_eq!(budget["status"]["disruptionsAllowed"], 0);
    assert!(d.is_drained("n1").await.unwrap());
    assert_eq!(
        d.evict_step("n1", NOW + 30).await.unwrap(),
        Outcome::Drained
    );

    // Uncordoned: the cordon and our annotation go.
    kube.clear_requests();
    assert!(d.uncordon("n1").await.unwrap());
    assert_eq!(cordoned(&kube), (false, None));
    assert!(!d.uncordon("n1").await.unwrap(), "nothing left to undo");
    assert_nothing_written_blind(&kube.requests());
}

#[tokio::test]
async fn a_refused_eviction_in_a_protected_namespace_is_retried_then_fails_the_drain() {
    let kube = FakeKube::start();
    kube.insert(node("n1"));
    kube.insert(on_n1("db", "prod", "StatefulSet").build());
    kube.insert(
        pod_disruption_budget("db", &[("app", "db")], 1)
            .namespace("prod")
            .build(),
    );
    let options = Options {
        evict_retries: 2,
        evict_interval: 60,
        ..Options::default()
    };
    let mut d = drainer(&kube, options);
    // The budget allows it now: the dry run passes, and cordons.
    assert_eq!(d.cordon("n1").await.unwrap(), Cordon::Done);
    // Someone else's disruption spends the budget before the pass evicts.
    kube.mutate(&POD_DISRUPTION_BUDGET, "prod", "db", |b| {
        b["status"]["disruptionsAllowed"] = json!(0);
    });
    let refused = |o: Outcome| match o {
        Outcome::Draining(p) => p.refused == ["prod/db"] && p.waiting.is_empty(),
        _ => false,
    };
    assert!(refused(d.evict_step("n1", NOW).await.unwrap()));
    assert!(
        d.last_refusal("n1", "prod/db")
            .unwrap()
            .contains("disruption budget")
    );
    // Within evict_interval: not asked again.
    kube.clear_requests();
    let Outcome::Draining(p) = d.evict_step("n1", NOW + 59).await.unwrap() else {
        panic!()
    };
    assert_eq!(p.waiting, ["prod/db"]);
    assert!(kube.writes().is_empty());
    assert!(refused(d.evict_step("n1", NOW + 60).await.unwrap()));
    // The third refusal is one more than evict_retries allows.
    match d.evict_step("n1", NOW + 120).await.unwrap() {
        Outcome::Failed(why) => assert!(
            why.starts_with("failed to evict pod prod/db due to PDB: Cannot evict pod")
                && why.contains("refused 3 time(s), evict_retries 2"),
            "{why}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        pods_left(&kube),
        ["prod/db"],
        "a protected Pod is never deleted"
    );
    assert!(d.uncordon("n1").await.unwrap());
    assert_eq!(cordoned(&kube), (false, None));
}

#[tokio::test]
async fn the_dry_run_refuses_before_cordoning() {
    let kube = FakeKube::start();
    kube.insert(node("n1"));
    // A running Job Pod, protected (protected_job_pods unset: all of them).
    kube.insert(on_n1("nightly", "ops", "Job").build());
    let mut d = drainer(&kube, Options::default());
    assert_eq!(
        d.cordon("n1").await.unwrap(),
        Cordon::Refused("protected job-managed pod exists: ops/nightly, phase=Running".into())
    );
    assert_eq!(cordoned(&kube), (false, None));
    assert!(kube.writes().is_empty(), "a dry run writes nothing");
    // The same rule fails a drain under way.
    kube.mutate(&NODE, "", "n1", |n| {
        n["spec"]["unschedulable"] = json!(true)
    });
    assert!(matches!(
        d.evict_step("n1", NOW).await.unwrap(),
        Outcome::Failed(why) if why.contains("ops/nightly")
    ));

    // A budget refusing in a protected namespace (all, by default), found by a dry-run eviction.
    kube.remove(&POD, "ops", "nightly");
    kube.mutate(&NODE, "", "n1", |n| {
        n["spec"]["unschedulable"] = json!(false)
    });
    kube.insert(on_n1("db", "prod", "StatefulSet").build());
    kube.insert(
        pod_disruption_budget("db", &[("app", "db")], 0)
            .namespace("prod")
            .build(),
    );
    kube.clear_requests();
    match d.cordon("n1").await.unwrap() {
        Cordon::Refused(why) => assert!(
            why.starts_with("failed to evict pod prod/db due to PDB (dry run): Cannot evict"),
            "{why}"
        ),
        other => panic!("{other:?}"),
    }
    let evictions: Vec<RecordedRequest> = kube
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/eviction"))
        .collect();
    assert_eq!(evictions.len(), 1);
    assert!(
        evictions[0].query.contains("dryRun=All"),
        "{:?}",
        evictions[0]
    );
    assert_eq!(cordoned(&kube), (false, None));
    assert_eq!(pods_left(&kube), ["prod/db"]);

    // Without the check (metal3's choice) it cordons, and the refusal waits for later passes.
    let mut d = drainer(
        &kube,
        Options {
            check_before_cordon: false,
            evict_retries: u32::MAX,
            cordon_annotation: None,
            ..Options::default()
        },
    );
    assert_eq!(d.cordon("n1").await.unwrap(), Cordon::Done);
    assert_eq!(cordoned(&kube), (true, None));
    for pass in 0..3 {
        assert!(matches!(
            d.evict_step("n1", NOW + pass).await.unwrap(),
            Outcome::Draining(p) if p.refused == ["prod/db"]
        ));
    }
    kube.mutate(&POD_DISRUPTION_BUDGET, "prod", "db", |b| {
        b["status"]["disruptionsAllowed"] = json!(1);
    });
    assert!(matches!(
        d.evict_step("n1", NOW + 3).await.unwrap(),
        Outcome::Draining(p) if p.evicted == ["prod/db"]
    ));
    assert_eq!(d.evict_step("n1", NOW + 4).await.unwrap(), Outcome::Drained);
}

#[tokio::test]
async fn uncordon_leaves_someone_elses_cordon() {
    let kube = FakeKube::start();
    kube.insert(node("n1").unschedulable(true));
    let mut d = drainer(&kube, Options::default());
    assert!(!d.uncordon("n1").await.unwrap());
    assert_eq!(cordoned(&kube), (true, None));
    // Cordoning a Node someone else cordoned marks it ours (CKE's cordon op writes both).
    assert_eq!(d.cordon("n1").await.unwrap(), Cordon::Done);
    assert_eq!(cordoned(&kube), (true, Some("true".into())));
    // A stale resourceVersion: 409, nothing written, said so.
    kube.fault(
        testsupport::kube::Fault::conflict()
            .on_object(&NODE, "", "n1")
            .method("PATCH"),
    );
    let e = d.uncordon("n1").await.unwrap_err();
    assert!(autorepair::metal3::kube::is_conflict(&e), "{e}");
    assert!(d.uncordon("n1").await.unwrap());
    // Without an annotation, any cordon is undone.
    kube.mutate(&NODE, "", "n1", |n| {
        n["spec"]["unschedulable"] = json!(true)
    });
    let mut plain = drainer(
        &kube,
        Options {
            cordon_annotation: None,
            ..Options::default()
        },
    );
    assert!(plain.uncordon("n1").await.unwrap());
    assert_eq!(cordoned(&kube), (false, None));
}

#[tokio::test]
async fn nodes_are_listed_with_what_membership_needs() {
    let kube = FakeKube::start();
    for i in 0..7 {
        kube.insert(
            node(&format!("host-{i}"))
                .set(
                    "/status/addresses",
                    json!([{ "type": "InternalIP", "address": format!("10.0.0.{i}") }]),
                )
                .build(),
        );
    }
    kube.mutate(&NODE, "", "host-3", |n| {
        n["spec"]["taints"] = json!([{ "key": "k", "effect": "NoSchedule" }]);
        n["spec"]["unschedulable"] = json!(true);
    });
    let (client, server) =
        client::build(kube.config(), Duration::from_secs(10), &Default::default()).unwrap();
    // Pages of 3: three requests, every Node once.
    let listed = nodes::list_nodes(&client, &server, 3, Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(listed.len(), 7);
    let n3 = autorepair::k8s::node_for(&listed, "10.0.0.3").unwrap();
    assert_eq!(n3.name, "host-3");
    assert!(n3.unschedulable);
    assert_eq!(n3.taints[0].key, "k");
    assert_eq!(n3.ready, Some(true));
    let pages = kube
        .requests()
        .iter()
        .filter(|r| r.path == "/api/v1/nodes")
        .count();
    assert_eq!(pages, 3);
    // A refused list names the server and what to do.
    kube.fault(testsupport::kube::Fault::status(403).on_path("/api/v1/nodes"));
    let e = nodes::list_nodes(&client, &server, 500, Duration::from_secs(10))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(kube.url()) && e.contains("403") && e.contains("nodes"),
        "{e}"
    );
}
