//! Pods, their Eviction subresource against PodDisruptionBudgets, Pod and Node field
//! selectors, and cordoning, through the real kube client, checked against what
//! kube-apiserver answers.

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use testsupport::kube::{
    EVICTION_REFUSED, FakeKube, NODE, POD, POD_DISRUPTION_BUDGET, node, pod, pod_disruption_budget,
};

/// A client without kube's own retries, which would send a refused eviction (429) again.
fn client(kube: &FakeKube) -> kube::Client {
    let mut config = kube.config();
    config.default_retry = false;
    kube::Client::try_from(config).unwrap()
}

fn web(name: &str, node: &str) -> Value {
    pod(name)
        .namespace("ns")
        .label("app", "web")
        .node_name(node)
        .build()
}

/// POSTs an Eviction as `kubectl drain` and the watcher do (policy/v1, uid precondition);
/// the HTTP status and the body.
async fn evict(
    client: &kube::Client,
    name: &str,
    uid: Option<&str>,
    dry_run: bool,
) -> (u16, Value) {
    let mut body = json!({
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": { "name": name, "namespace": "ns" },
    });
    if let Some(uid) = uid {
        body["deleteOptions"] = json!({ "preconditions": { "uid": uid } });
    }
    if dry_run {
        body["deleteOptions"]["dryRun"] = json!(["All"]);
    }
    let req = kube::core::Request::new("/api/v1/namespaces/ns/pods")
        .create_subresource(
            "eviction",
            name,
            &PostParams::default(),
            body.to_string().into_bytes(),
        )
        .unwrap();
    match client.request_text(req).await {
        Ok(text) => (201, serde_json::from_str(&text).unwrap()),
        Err(kube::Error::Api(s)) => (s.code, serde_json::to_value(&s).unwrap()),
        Err(e) => panic!("eviction of {name}: {e}"),
    }
}

#[tokio::test]
async fn pods_select_by_node_and_phase() {
    let kube = FakeKube::start();
    kube.insert(web("a", "n1"));
    kube.insert(web("b", "n2"));
    kube.insert(
        pod("c")
            .namespace("other")
            .node_name("n1")
            .phase("Succeeded")
            .build(),
    );
    kube.insert(pod("unbound").namespace("ns").phase("Pending").build());
    let pods: Api<Pod> = Api::all(kube.client());
    let names = |l: kube::core::ObjectList<Pod>| -> Vec<String> {
        l.items
            .into_iter()
            .map(|p| p.metadata.name.unwrap())
            .collect()
    };
    let cases = [
        ("spec.nodeName=n1", vec!["a", "c"]),
        ("spec.nodeName=n1,status.phase!=Succeeded", vec!["a"]),
        ("status.phase=Pending", vec!["unbound"]),
        ("spec.nodeName=", vec!["unbound"]),
    ];
    for (sel, want) in cases {
        let got = names(pods.list(&ListParams::default().fields(sel)).await.unwrap());
        assert_eq!(got, want, "{sel}");
    }
    // A field the apiserver does not index: 400, as it answers.
    match pods
        .list(&ListParams::default().fields("spec.hostname=x"))
        .await
    {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 400);
            assert_eq!(s.message, "field label not supported: spec.hostname");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn nodes_cordon_by_merge_patch_and_select_by_unschedulable() {
    let kube = FakeKube::start();
    kube.insert(node("n1"));
    kube.insert(node("n2"));
    let nodes: Api<Node> = Api::all(kube.client());
    nodes
        .patch(
            "n1",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "unschedulable": true } })),
        )
        .await
        .unwrap();
    assert_eq!(
        kube.get(&NODE, "", "n1").unwrap()["spec"]["unschedulable"],
        true
    );
    let schedulable: Vec<String> = nodes
        .list(&ListParams::default().fields("spec.unschedulable=false"))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|n| n.metadata.name.unwrap())
        .collect();
    assert_eq!(schedulable, ["n2"]);
}

#[tokio::test]
async fn evictions_honour_pod_disruption_budgets() {
    let kube = FakeKube::start();
    let a = kube.insert(web("a", "n1"));
    kube.insert(web("b", "n1"));
    kube.insert(pod("free").namespace("ns").node_name("n1").build());
    kube.insert(
        pod_disruption_budget("web", &[("app", "web")], 1)
            .namespace("ns")
            .set("/status/desiredHealthy", 2)
            .set("/status/currentHealthy", 2)
            .build(),
    );
    let client = client(&kube);
    let uid = a["metadata"]["uid"].as_str().unwrap();

    // A stale uid: 409, nothing spent.
    let (code, body) = evict(&client, "a", Some("not-the-uid"), false).await;
    assert_eq!(code, 409, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("Precondition failed: UID in precondition: not-the-uid"),
        "{body}"
    );
    // A dry run spends nothing and deletes nothing.
    assert_eq!(evict(&client, "a", Some(uid), true).await.0, 201);
    assert!(kube.get(&POD, "ns", "a").is_some());
    let pdb = kube.get(&POD_DISRUPTION_BUDGET, "ns", "web").unwrap();
    assert_eq!(pdb["status"]["disruptionsAllowed"], 1);

    // Granted: the Pod goes, the budget is spent and records it.
    let (code, body) = evict(&client, "a", Some(uid), false).await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["status"], "Success");
    assert!(kube.get(&POD, "ns", "a").is_none());
    let pdb = kube.get(&POD_DISRUPTION_BUDGET, "ns", "web").unwrap();
    assert_eq!(pdb["status"]["disruptionsAllowed"], 0);
    assert!(pdb["status"]["disruptedPods"]["a"].is_string(), "{pdb}");

    // Refused: 429 with kube-apiserver's body.
    let (code, body) = evict(&client, "b", None, false).await;
    assert_eq!(code, 429);
    assert_eq!(body["reason"], "TooManyRequests");
    assert_eq!(body["message"], EVICTION_REFUSED);
    assert_eq!(
        body["details"]["causes"],
        json!([{
            "reason": "DisruptionBudget",
            "message": "The disruption budget web needs 2 healthy pods and has 2 currently",
        }])
    );
    assert!(kube.get(&POD, "ns", "b").is_some());
    // The same refusal in a dry run.
    assert_eq!(evict(&client, "b", None, true).await.0, 429);

    // No budget selects it: evicted whatever the others say.
    assert_eq!(evict(&client, "free", None, false).await.0, 201);
    assert!(kube.get(&POD, "ns", "free").is_none());

    // A Pod that disrupts nothing (not running) ignores the budget.
    kube.mutate(&POD, "ns", "b", |p| {
        p["status"]["phase"] = json!("Succeeded")
    });
    assert_eq!(evict(&client, "b", None, false).await.0, 201);
    assert!(kube.get(&POD, "ns", "b").is_none());
}

#[tokio::test]
async fn evictions_refuse_what_the_apiserver_refuses() {
    let kube = FakeKube::start();
    kube.insert(web("a", "n1"));
    for name in ["one", "two"] {
        kube.insert(
            pod_disruption_budget(name, &[("app", "web")], 5)
                .namespace("ns")
                .build(),
        );
    }
    let client = client(&kube);
    let (code, body) = evict(&client, "a", None, false).await;
    assert_eq!(code, 500, "{body}");
    assert_eq!(
        body["message"],
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    );
    let (code, body) = evict(&client, "missing", None, false).await;
    assert_eq!(code, 404, "{body}");
    assert_eq!(body["message"], "pods \"missing\" not found");

    // The body must name the Pod of the URL.
    let req = kube::core::Request::new("/api/v1/namespaces/ns/pods")
        .create_subresource(
            "eviction",
            "a",
            &PostParams::default(),
            json!({ "apiVersion": "policy/v1", "kind": "Eviction", "metadata": { "name": "b" } })
                .to_string()
                .into_bytes(),
        )
        .unwrap();
    match client.request_text(req).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 400);
            assert_eq!(
                s.message,
                "name in URL does not match name in Eviction object"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(kube.get(&POD, "ns", "a").is_some());
}
