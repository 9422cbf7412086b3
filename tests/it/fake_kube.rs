//! The fake Kubernetes API server (crates/testsupport, `kube`) driven through the real kube client:
//! what the metal3 family's tests will rely on. See docs/testing.md.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Node;
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use kube::core::Status;
use serde_json::{Value, json};
use std::time::Duration;
use testsupport::kube::*;

fn machines(kube: &FakeKube, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(kube.client(), ns, &MACHINE.api_resource())
}

fn hosts(kube: &FakeKube, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(kube.client(), ns, &BARE_METAL_HOST.api_resource())
}

/// The Status of an API error (panics on any other error or on success).
fn status<T: std::fmt::Debug>(r: Result<T, kube::Error>) -> Status {
    match r {
        Err(kube::Error::Api(s)) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn rv(o: &DynamicObject) -> u64 {
    o.metadata
        .resource_version
        .as_deref()
        .expect("resourceVersion")
        .parse()
        .expect("numeric resourceVersion")
}

fn ann(o: &DynamicObject, key: &str) -> Option<String> {
    o.metadata.annotations.as_ref()?.get(key).cloned()
}

// ---------------------------------------------------------------------------------------------
// Crypto provider: one (ring), so kube's rustls setup works with no provider installed.

#[tokio::test]
async fn https_client_works_with_the_single_ring_provider() {
    let kube = FakeKube::builder().tls().start();
    assert!(
        kube.url().starts_with("https://127.0.0.1:"),
        "{}",
        kube.url()
    );
    kube.insert(node("n1"));
    // No provider installed by hand: kube's ClientConfig::builder() must find exactly one.
    let nodes: Api<Node> = Api::all(kube.client());
    let n = nodes.get("n1").await.expect("GET over TLS");
    assert_eq!(n.metadata.name.as_deref(), Some("n1"));
    // kube 5 installs aws-lc-rs as the process default itself when its `aws-lc-rs` feature is
    // on; with ring alone, rustls installs ring. Key-exchange groups tell them apart (aws-lc-rs
    // also offers the X25519MLKEM768 hybrid, ring does not).
    let provider = rustls::crypto::CryptoProvider::get_default().expect("provider installed");
    let groups = |p: &rustls::crypto::CryptoProvider| {
        p.kx_groups
            .iter()
            .map(|g| format!("{:?}", g.name()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        groups(provider),
        groups(&rustls::crypto::ring::default_provider()),
        "the process default is ring's provider"
    );
}

#[test]
fn aws_lc_rs_is_not_in_the_dependency_graph() {
    // Every target, every edge kind (normal, build, dev). A second provider would cost a C
    // build, and rustls's `ClientConfig::builder()` panics ("no process-level CryptoProvider")
    // when two are compiled in and none is installed.
    let out = crate::common::cargo()
        .args([
            "tree",
            "--offline",
            "--workspace",
            "--target",
            "all",
            "-e",
            "features",
            "-i",
            "aws-lc-rs",
        ])
        .output()
        .expect("run cargo tree");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let absent = stderr.contains("did not match any packages") || stdout.trim().is_empty();
    assert!(
        absent && !stdout.contains("aws-lc-rs"),
        "aws-lc-rs is in the dependency graph:\n{stdout}\n{stderr}"
    );
    // The check itself works: ring is found the same way.
    let ring = crate::common::cargo()
        .args(["tree", "--offline", "-e", "features", "-i", "ring"])
        .output()
        .expect("run cargo tree");
    assert!(
        String::from_utf8_lossy(&ring.stdout).contains("kube-client"),
        "{}",
        String::from_utf8_lossy(&ring.stderr)
    );
}

// ---------------------------------------------------------------------------------------------
// CRUD

#[tokio::test]
async fn get_missing_is_404_with_a_status_body() {
    let kube = FakeKube::start();
    let cases: Vec<(Api<DynamicObject>, &str, &str)> = vec![
        (
            machines(&kube, "ns"),
            "m1",
            "machines.cluster.x-k8s.io \"m1\" not found",
        ),
        (
            hosts(&kube, "ns"),
            "h1",
            "baremetalhosts.metal3.io \"h1\" not found",
        ),
        (
            Api::all_with(kube.client(), &NODE.api_resource()),
            "n1",
            "nodes \"n1\" not found",
        ),
    ];
    for (api, name, message) in cases {
        let s = status(api.get(name).await);
        assert_eq!(
            (s.code, s.reason.as_str(), s.message.as_str()),
            (404, "NotFound", message)
        );
        let d = s.details.expect("details");
        assert_eq!(d.name, name);
    }
    // get_opt maps the 404 to None, as callers of the real server rely on.
    assert!(machines(&kube, "ns").get_opt("m1").await.unwrap().is_none());
}

#[tokio::test]
async fn create_sets_server_fields_and_refuses_duplicates() {
    let kube = FakeKube::start();
    let api = machines(&kube, "ns");
    let m: DynamicObject = serde_json::from_value(
        machine("m1")
            .namespace("ns")
            .label("role", "worker")
            .build(),
    )
    .unwrap();
    let created = api
        .create(&PostParams::default(), &m)
        .await
        .expect("create");
    let meta = &created.metadata;
    assert!(
        meta.uid.as_deref().is_some_and(|u| u.len() == 36),
        "{meta:?}"
    );
    assert!(meta.creation_timestamp.is_some());
    assert_eq!(meta.generation, Some(1));
    assert_eq!(rv(&created), kube.resource_version());
    assert_eq!(meta.namespace.as_deref(), Some("ns"));

    let s = status(api.create(&PostParams::default(), &m).await);
    assert_eq!((s.code, s.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(s.message, "machines.cluster.x-k8s.io \"m1\" already exists");

    // A namespace in the body that differs from the URL's is refused.
    let other: DynamicObject =
        serde_json::from_value(machine("m2").namespace("elsewhere").build()).unwrap();
    assert_eq!(
        status(api.create(&PostParams::default(), &other).await).code,
        400
    );

    // generateName.
    let gen_obj: DynamicObject = serde_json::from_value(
        machine("")
            .namespace("ns")
            .unset("/metadata/name")
            .set("/metadata/generateName", "worker-")
            .build(),
    )
    .unwrap();
    let g = api.create(&PostParams::default(), &gen_obj).await.unwrap();
    let name = g.metadata.name.unwrap();
    assert!(name.starts_with("worker-") && name.len() == 12, "{name}");
}

#[tokio::test]
async fn list_filters_by_label_and_carries_the_resource_version() {
    let kube = FakeKube::start();
    kube.insert(machine("a").namespace("ns").label("role", "worker"));
    kube.insert(machine("b").namespace("ns").label("role", "cp"));
    kube.insert(machine("c").namespace("ns").label("role", "worker"));
    kube.insert(machine("d").namespace("other").label("role", "worker"));
    let api = machines(&kube, "ns");
    let all: Api<DynamicObject> = Api::all_with(kube.client(), &MACHINE.api_resource());
    let cases: Vec<(&Api<DynamicObject>, &str, Vec<&str>)> = vec![
        (&api, "", vec!["a", "b", "c"]),
        (&api, "role=worker", vec!["a", "c"]),
        (&api, "role!=worker", vec!["b"]),
        (&api, "role in (cp,x)", vec!["b"]),
        (&api, "missing", vec![]),
        (&all, "role=worker", vec!["c", "a", "d"]),
    ];
    for (api, sel, want) in cases {
        let lp = if sel.is_empty() {
            ListParams::default()
        } else {
            ListParams::default().labels(sel)
        };
        let list = api.list(&lp).await.unwrap();
        let mut names: Vec<_> = list
            .items
            .iter()
            .map(|o| o.metadata.name.clone().unwrap())
            .collect();
        let mut want: Vec<_> = want.iter().map(|s| s.to_string()).collect();
        names.sort();
        want.sort();
        assert_eq!(names, want, "{sel}");
        assert_eq!(
            list.metadata.resource_version.as_deref(),
            Some(kube.resource_version().to_string().as_str())
        );
    }
    // Pages: limit + continue.
    let page = api.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(page.items.len(), 2);
    let token = page.metadata.continue_.clone().expect("continue token");
    let rest = api
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(rest.items.len(), 1);
    assert_eq!(rest.items[0].metadata.name.as_deref(), Some("c"));
    // A bad selector is a 400.
    assert_eq!(
        status(api.list(&ListParams::default().labels("a in (b")).await).code,
        400
    );
    // Field selectors: metadata.name.
    let one = api
        .list(&ListParams::default().fields("metadata.name=b"))
        .await
        .unwrap();
    assert_eq!(one.items.len(), 1);
}

#[tokio::test]
async fn delete_is_200_then_404() {
    let kube = FakeKube::start();
    kube.insert(machine("m1").namespace("ns"));
    let api = machines(&kube, "ns");
    let gone = api
        .delete("m1", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(
        gone.is_left(),
        "the deleted object comes back, as for custom resources"
    );
    assert_eq!(status(api.get("m1").await).code, 404);
    let s = status(api.delete("m1", &DeleteParams::default()).await);
    assert_eq!((s.code, s.reason.as_str()), (404, "NotFound"));
    assert!(kube.get(&MACHINE, "ns", "m1").is_none());
}

#[tokio::test]
async fn delete_waits_for_finalizers() {
    let kube = FakeKube::start();
    kube.insert(
        bare_metal_host("h1")
            .namespace("ns")
            .finalizer("baremetalhost.metal3.io"),
    );
    let api = hosts(&kube, "ns");
    api.delete("h1", &DeleteParams::default()).await.unwrap();
    let h = api
        .get("h1")
        .await
        .expect("still there while a finalizer holds it");
    assert!(h.metadata.deletion_timestamp.is_some());
    // Removing the last finalizer completes the deletion.
    let p = json!({ "metadata": { "finalizers": null } });
    api.patch("h1", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    assert_eq!(status(api.get("h1").await).code, 404);
}

#[tokio::test]
async fn delete_preconditions_are_checked() {
    let kube = FakeKube::start();
    let m = kube.insert(machine("m1").namespace("ns"));
    let api = machines(&kube, "ns");
    let stale = DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            resource_version: Some("1".into()),
            uid: None,
        }),
        ..DeleteParams::default()
    };
    kube.mutate(&MACHINE, "ns", "m1", |o| o["spec"]["x"] = json!(1));
    let s = status(api.delete("m1", &stale).await);
    assert_eq!((s.code, s.reason.as_str()), (409, "Conflict"));
    let by_uid = DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            resource_version: None,
            uid: m["metadata"]["uid"].as_str().map(str::to_string),
        }),
        ..DeleteParams::default()
    };
    api.delete("m1", &by_uid).await.expect("uid matches");
}

// ---------------------------------------------------------------------------------------------
// Patches and optimistic concurrency

#[tokio::test]
async fn merge_patch_with_a_stale_resource_version_is_409() {
    let kube = FakeKube::start();
    kube.insert(machine("m1").namespace("ns"));
    let api = machines(&kube, "ns");
    let read = api.get("m1").await.unwrap();
    let seen = rv(&read);

    // A patch carrying the resourceVersion it read succeeds and bumps it.
    let p = json!({
        "metadata": {
            "resourceVersion": seen.to_string(),
            "annotations": { "autorepair.example/pending": "x" },
        }
    });
    let written = api
        .patch("m1", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .expect("fresh resourceVersion");
    assert_eq!(rv(&written), seen + 1);
    assert_eq!(
        ann(&written, "autorepair.example/pending").as_deref(),
        Some("x")
    );

    // The same patch again: its resourceVersion is now stale.
    let s = status(
        api.patch("m1", &PatchParams::default(), &Patch::Merge(&p))
            .await,
    );
    assert_eq!(s.code, 409);
    assert_eq!(s.reason, "Conflict");
    assert_eq!(
        s.message,
        "Operation cannot be fulfilled on machines.cluster.x-k8s.io \"m1\": the object has been \
         modified; please apply your changes to the latest version and try again"
    );
    let d = s.details.expect("details");
    assert_eq!(
        (d.name.as_str(), d.group.as_str(), d.kind.as_str()),
        ("m1", "cluster.x-k8s.io", "machines")
    );
    assert_eq!(
        kube.resource_version(),
        seen + 1,
        "a refused write writes nothing"
    );

    // Without a resourceVersion the patch is unconditional.
    let p = json!({ "metadata": { "annotations": { "b": "y" } } });
    api.patch("m1", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .expect("unconditional");
}

#[tokio::test]
async fn a_patch_that_changes_nothing_keeps_the_resource_version() {
    let kube = FakeKube::start();
    kube.insert(machine("m1").namespace("ns").annotation("a", "1"));
    let api = machines(&kube, "ns");
    let before = kube.resource_version();
    let p = json!({ "metadata": { "annotations": { "a": "1" } } });
    let o = api
        .patch("m1", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    assert_eq!(rv(&o), before);
    assert_eq!(kube.resource_version(), before);
}

#[tokio::test]
async fn json_patch_test_failure_is_422_and_success_applies() {
    let kube = FakeKube::start();
    kube.insert(
        bare_metal_host("h1")
            .namespace("ns")
            .annotation("reboot.metal3.io/x", ""),
    );
    // Another write, so that resourceVersion "1" (the create's) is stale.
    kube.mutate(&BARE_METAL_HOST, "ns", "h1", |h| {
        h["spec"]["online"] = json!(false)
    });
    let api = hosts(&kube, "ns");
    let current = api.get("h1").await.unwrap();
    let rv_now = current.metadata.resource_version.clone().unwrap();
    let remove_key = |test_rv: &str| -> json_patch::Patch {
        serde_json::from_value(json!([
            { "op": "test", "path": "/metadata/resourceVersion", "value": test_rv },
            { "op": "remove", "path": "/metadata/annotations/reboot.metal3.io~1x" },
        ]))
        .unwrap()
    };
    let cases = [
        ("1", Err(422)),
        (rv_now.as_str(), Ok(())),
        (rv_now.as_str(), Err(422)), // the object moved on: the test fails again
    ];
    for (test_rv, want) in cases {
        let got = api
            .patch(
                "h1",
                &PatchParams::default(),
                &Patch::Json::<()>(remove_key(test_rv)),
            )
            .await;
        match (want, got) {
            (Ok(()), Ok(o)) => assert_eq!(ann(&o, "reboot.metal3.io/x"), None),
            (Err(code), got) => {
                let s = status(got);
                assert_eq!((s.code, s.reason.as_str()), (code, "Invalid"), "{s:?}");
            }
            (want, got) => panic!("{test_rv}: want {want:?}, got {got:?}"),
        }
    }
    // Replacing resourceVersion with a stale one through a JSON patch is a conflict.
    let p: json_patch::Patch = serde_json::from_value(json!([
        { "op": "replace", "path": "/metadata/resourceVersion", "value": "1" },
        { "op": "add", "path": "/spec/online", "value": false },
    ]))
    .unwrap();
    let s = status(
        api.patch("h1", &PatchParams::default(), &Patch::Json::<()>(p))
            .await,
    );
    assert_eq!(s.code, 409);
}

#[tokio::test]
async fn put_needs_a_current_resource_version() {
    let kube = FakeKube::start();
    kube.insert(machine("m1").namespace("ns"));
    let api = machines(&kube, "ns");
    let mut m = api.get("m1").await.unwrap();
    m.data["spec"] = json!({ "clusterName": "c1" });
    let replaced = api
        .replace("m1", &PostParams::default(), &m)
        .await
        .expect("current rv");
    assert_eq!(
        replaced.metadata.generation,
        Some(2),
        "a spec change bumps generation"
    );
    // m still carries the old resourceVersion.
    let s = status(api.replace("m1", &PostParams::default(), &m).await);
    assert_eq!((s.code, s.reason.as_str()), (409, "Conflict"));
    // A custom resource refuses an update without resourceVersion.
    m.metadata.resource_version = None;
    let s = status(api.replace("m1", &PostParams::default(), &m).await);
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"));
    // A Node (built-in) accepts it.
    kube.insert(node("n1"));
    let nodes: Api<Node> = Api::all(kube.client());
    let mut n = nodes.get("n1").await.unwrap();
    n.metadata.resource_version = None;
    n.spec.get_or_insert_with(Default::default).unschedulable = Some(true);
    let n = nodes
        .replace("n1", &PostParams::default(), &n)
        .await
        .expect("unconditional");
    assert_eq!(n.spec.unwrap().unschedulable, Some(true));
}

#[tokio::test]
async fn status_subresource_separates_spec_and_status() {
    let kube = FakeKube::start();
    kube.insert(bare_metal_host("h1").namespace("ns").powered_on(true));
    let api = hosts(&kube, "ns");
    // The main endpoint ignores status.
    let p = json!({ "status": { "poweredOn": false }, "spec": { "online": false } });
    let o = api
        .patch("h1", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    assert_eq!(o.data["status"]["poweredOn"], json!(true));
    assert_eq!(o.data["spec"]["online"], json!(false));
    assert_eq!(o.metadata.generation, Some(2));
    // /status ignores everything but status, and leaves generation alone.
    let p = json!({ "status": { "poweredOn": false }, "spec": { "online": true } });
    let o = api
        .patch_status("h1", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    assert_eq!(o.data["status"]["poweredOn"], json!(false));
    assert_eq!(o.data["spec"]["online"], json!(false));
    assert_eq!(o.metadata.generation, Some(2));
    // Creating through the API drops status for a custom resource with the subresource.
    let h2: DynamicObject = serde_json::from_value(
        bare_metal_host("h2")
            .namespace("ns")
            .powered_on(true)
            .build(),
    )
    .unwrap();
    let c = api.create(&PostParams::default(), &h2).await.unwrap();
    assert!(c.data.get("status").is_none(), "{:?}", c.data);
}

#[tokio::test]
async fn strategic_merge_patch_is_refused_for_custom_resources_only() {
    let kube = FakeKube::start();
    kube.insert(machine("m1").namespace("ns"));
    kube.insert(node("n1"));
    let p = json!({ "metadata": { "labels": { "a": "b" } } });
    let s = status(
        machines(&kube, "ns")
            .patch("m1", &PatchParams::default(), &Patch::Strategic(&p))
            .await,
    );
    assert_eq!((s.code, s.reason.as_str()), (415, "UnsupportedMediaType"));
    let nodes: Api<Node> = Api::all(kube.client());
    let n = nodes
        .patch("n1", &PatchParams::default(), &Patch::Strategic(&p))
        .await
        .expect("SMP on a Node");
    assert_eq!(n.metadata.labels.unwrap()["a"], "b");
}

#[tokio::test]
async fn server_side_apply_creates_then_updates() {
    let kube = FakeKube::start();
    let api = machines(&kube, "ns");
    let body = machine("m1").namespace("ns").annotation("a", "1").build();
    let s = status(
        api.patch("m1", &PatchParams::default(), &Patch::Apply(&body))
            .await,
    );
    assert_eq!(s.code, 422, "apply needs a field manager");
    let pp = PatchParams::apply("autorepair");
    let created = api
        .patch("m1", &pp, &Patch::Apply(&body))
        .await
        .expect("apply creates");
    assert_eq!(created.metadata.generation, Some(1));
    let body = machine("m1").namespace("ns").annotation("b", "2").build();
    let updated = api.patch("m1", &pp, &Patch::Apply(&body)).await.unwrap();
    assert_eq!(ann(&updated, "a").as_deref(), Some("1"));
    assert_eq!(ann(&updated, "b").as_deref(), Some("2"));
}

// ---------------------------------------------------------------------------------------------
// Typed objects, versions, discovery

#[tokio::test]
async fn typed_nodes_from_k8s_openapi() {
    let kube = FakeKube::start();
    kube.insert(node("n1").label("kubernetes.io/hostname", "n1"));
    kube.insert(node("n2").ready(false));
    let nodes: Api<Node> = Api::all(kube.client());
    let list = nodes.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 2);
    let ready = |n: &Node| {
        n.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
            .map(|c| c.status.clone())
    };
    assert_eq!(ready(&list.items[0]).as_deref(), Some("True"));
    assert_eq!(ready(&list.items[1]).as_deref(), Some("False"));
    nodes.delete("n2", &DeleteParams::default()).await.unwrap();
    assert!(nodes.get_opt("n2").await.unwrap().is_none());
    let md = nodes.get_metadata("n1").await.expect("metadata only");
    assert_eq!(md.metadata.name.as_deref(), Some("n1"));
}

#[tokio::test]
async fn machines_are_served_in_v1beta1_and_v1beta2() {
    let kube = FakeKube::start();
    kube.insert(
        machine("m1")
            .namespace("ns")
            .node_ref("n1")
            .infrastructure_ref("m3m1"),
    );
    let v2 = machines(&kube, "ns");
    let v1: Api<DynamicObject> =
        Api::namespaced_with(kube.client(), "ns", &MACHINE.api_resource_at("v1beta1"));
    let a = v2.get("m1").await.unwrap();
    let b = v1.get("m1").await.unwrap();
    assert_eq!(
        a.types.as_ref().unwrap().api_version,
        "cluster.x-k8s.io/v1beta2"
    );
    assert_eq!(
        b.types.as_ref().unwrap().api_version,
        "cluster.x-k8s.io/v1beta1"
    );
    assert_eq!(a.data["status"]["nodeRef"], json!({ "name": "n1" }));
    assert_eq!(
        b.data["status"]["nodeRef"],
        json!({ "apiVersion": "v1", "kind": "Node", "name": "n1" })
    );
    assert_eq!(
        b.data["spec"]["infrastructureRef"]["apiVersion"],
        "infrastructure.cluster.x-k8s.io/v1beta1"
    );
    assert_eq!(rv(&a), rv(&b), "one object, one resourceVersion");
    // A write through v1beta1 with the v1beta2 read's resourceVersion works: same storage.
    let p = json!({ "metadata": { "resourceVersion": rv(&a).to_string(), "annotations": { "k": "v" } } });
    v1.patch("m1", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    assert_eq!(ann(&v2.get("m1").await.unwrap(), "k").as_deref(), Some("v"));
    assert_eq!(
        kube.get(&MACHINE, "ns", "m1").unwrap()["status"]["nodeRef"],
        json!({ "name": "n1" }),
        "stored in v1beta2"
    );
}

#[tokio::test]
async fn discovery_finds_both_machine_versions() {
    let kube = FakeKube::start();
    let client = kube.client();
    let d = kube::Discovery::new(client.clone())
        .run()
        .await
        .expect("discovery");
    let capi = d
        .groups()
        .find(|g| g.name() == "cluster.x-k8s.io")
        .expect("cluster.x-k8s.io");
    let versions: Vec<_> = capi.versions().collect();
    assert_eq!(versions, ["v1beta2", "v1beta1"]);
    assert_eq!(capi.preferred_version_or_latest(), "v1beta2");
    let (ar, caps) = capi.recommended_kind("Machine").expect("Machine");
    assert_eq!(
        (ar.plural.as_str(), caps.scope),
        ("machines", kube::discovery::Scope::Namespaced)
    );
    assert!(d.has_group("metal3.io"));
    let v = client.apiserver_version().await.expect("/version");
    assert_eq!(v.major, "1");
}

// ---------------------------------------------------------------------------------------------
// Watches

async fn next_event(
    stream: &mut (impl futures::Stream<Item = kube::Result<WatchEvent<DynamicObject>>> + Unpin),
) -> WatchEvent<DynamicObject> {
    tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("an event within 10 s")
        .expect("stream still open")
        .expect("event decodes")
}

fn describe(e: &WatchEvent<DynamicObject>) -> (String, String, u64) {
    match e {
        WatchEvent::Added(o) => ("ADDED".into(), o.metadata.name.clone().unwrap(), rv(o)),
        WatchEvent::Modified(o) => ("MODIFIED".into(), o.metadata.name.clone().unwrap(), rv(o)),
        WatchEvent::Deleted(o) => ("DELETED".into(), o.metadata.name.clone().unwrap(), rv(o)),
        WatchEvent::Bookmark(b) => (
            "BOOKMARK".into(),
            String::new(),
            b.metadata.resource_version.parse().unwrap(),
        ),
        WatchEvent::Error(s) => (format!("ERROR {}", s.code), s.reason.clone(), 0),
    }
}

#[tokio::test]
async fn watch_delivers_writes_in_order() {
    let kube = FakeKube::start();
    kube.insert(machine("old").namespace("ns"));
    let api = machines(&kube, "ns");
    let from = kube.resource_version();
    let mut stream = api
        .watch(&WatchParams::default().timeout(30), &from.to_string())
        .await
        .expect("watch")
        .boxed();
    let m: DynamicObject = serde_json::from_value(machine("m1").namespace("ns").build()).unwrap();
    api.create(&PostParams::default(), &m).await.unwrap();
    let p = json!({ "metadata": { "annotations": { "a": "1" } } });
    api.patch("m1", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    kube.mutate(&MACHINE, "ns", "m1", |o| {
        o["metadata"]["annotations"]["b"] = json!("2")
    });
    api.delete("m1", &DeleteParams::default()).await.unwrap();
    let want = [
        ("ADDED", from + 1),
        ("MODIFIED", from + 2),
        ("MODIFIED", from + 3),
        ("DELETED", from + 4),
    ];
    for (kind, at) in want {
        let e = describe(&next_event(&mut stream).await);
        assert_eq!(e, (kind.to_string(), "m1".to_string(), at));
    }

    // A watch from `from` replays the same history; one from "0" starts with the present.
    let replay: Vec<_> = api
        .watch(&WatchParams::default().timeout(1), &from.to_string())
        .await
        .unwrap()
        .map(|e| describe(&e.unwrap()))
        .collect()
        .await;
    assert_eq!(
        replay.iter().map(|e| e.2).collect::<Vec<_>>(),
        [from + 1, from + 2, from + 3, from + 4]
    );
    let now: Vec<_> = api
        .watch(&WatchParams::default().timeout(1), "0")
        .await
        .unwrap()
        .map(|e| describe(&e.unwrap()))
        .collect()
        .await;
    assert_eq!(now, [("ADDED".to_string(), "old".to_string(), from)]);
}

#[tokio::test]
async fn watch_follows_the_label_selector() {
    let kube = FakeKube::start();
    kube.insert(bare_metal_host("h1").namespace("ns").label("pool", "a"));
    let api = hosts(&kube, "ns");
    let from = kube.resource_version();
    let mut stream = api
        .watch(
            &WatchParams::default().labels("pool=a").timeout(30),
            &from.to_string(),
        )
        .await
        .unwrap()
        .boxed();
    kube.mutate(&BARE_METAL_HOST, "ns", "h1", |o| {
        o["metadata"]["labels"]["pool"] = json!("b")
    });
    kube.mutate(&BARE_METAL_HOST, "ns", "h1", |o| {
        o["metadata"]["labels"]["pool"] = json!("a")
    });
    let got: Vec<_> = [next_event(&mut stream).await, next_event(&mut stream).await]
        .iter()
        .map(|e| describe(e).0)
        .collect();
    assert_eq!(
        got,
        ["DELETED", "ADDED"],
        "leaving the selector is a delete, entering an add"
    );
}

#[tokio::test]
async fn watch_from_a_compacted_resource_version_gets_410() {
    let kube = FakeKube::builder().history(2).start();
    let api = machines(&kube, "ns");
    for i in 0..4 {
        kube.insert(machine(&format!("m{i}")).namespace("ns"));
    }
    // rv 1..4 written, history keeps 3 and 4: from 2 is still complete, from 1 is not.
    let events = |rv: &'static str| {
        let api = api.clone();
        async move {
            api.watch(&WatchParams::default().timeout(1), rv)
                .await
                .unwrap()
                .map(|e| describe(&e.unwrap()))
                .collect::<Vec<_>>()
                .await
        }
    };
    assert_eq!(
        events("2").await.iter().map(|e| e.2).collect::<Vec<_>>(),
        [3, 4]
    );
    let old = events("1").await;
    assert_eq!(old, [("ERROR 410".to_string(), "Expired".to_string(), 0)]);
    kube.compact();
    assert_eq!(events("3").await[0].0, "ERROR 410");
    assert!(events("4").await.is_empty());
}

#[tokio::test]
async fn close_watches_ends_the_stream() {
    let kube = FakeKube::start();
    let api = machines(&kube, "ns");
    let mut stream = api
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    for _ in 0..100 {
        if kube.open_watches() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(kube.open_watches(), 1);
    kube.close_watches();
    let end = tokio::time::timeout(Duration::from_secs(10), stream.try_next()).await;
    assert!(matches!(end, Ok(Ok(None))), "{end:?}");
}

// ---------------------------------------------------------------------------------------------
// Fault injection and other controllers

#[tokio::test]
async fn injected_faults_answer_the_next_requests() {
    let kube = FakeKube::start();
    kube.insert(bare_metal_host("h1").namespace("ns"));
    kube.insert(bare_metal_host("h2").namespace("ns"));
    let mut config = kube.config();
    config.default_retry = false; // kube retries 429/503/504 itself by default
    let client = kube::Client::try_from(config).unwrap();
    let api: Api<DynamicObject> =
        Api::namespaced_with(client, "ns", &BARE_METAL_HOST.api_resource());
    let p = json!({ "metadata": { "annotations": { "a": "1" } } });
    let cases: Vec<(Fault, u16, &str)> = vec![
        (Fault::status(500), 500, "InternalError"),
        (Fault::status(429), 429, "TooManyRequests"),
        (Fault::status(403), 403, "Forbidden"),
        (Fault::conflict(), 409, "Conflict"),
    ];
    for (fault, code, reason) in cases {
        kube.fault(
            fault
                .on_object(&BARE_METAL_HOST, "ns", "h1")
                .method("PATCH")
                .times(2),
        );
        // Other objects and other methods are untouched.
        api.patch("h2", &PatchParams::default(), &Patch::Merge(&p))
            .await
            .unwrap();
        api.get("h1").await.unwrap();
        for _ in 0..2 {
            let s = status(
                api.patch("h1", &PatchParams::default(), &Patch::Merge(&p))
                    .await,
            );
            assert_eq!((s.code, s.reason.as_str()), (code, reason));
        }
        assert_eq!(kube.pending_faults(), 0);
        api.patch("h1", &PatchParams::default(), &Patch::Merge(&p))
            .await
            .expect("the third one goes through");
    }
    // A path prefix; 429 carries retryAfterSeconds.
    kube.fault(Fault::status(429).on_path("/apis/metal3.io/*"));
    let s = status(api.get("h1").await);
    assert_eq!(s.details.unwrap().retry_after_seconds, 1);
}

#[tokio::test]
async fn kube_retries_429_by_itself() {
    let kube = FakeKube::start();
    kube.insert(node("n1"));
    kube.fault(
        Fault::status(429)
            .retry_after(0)
            .on_path("/api/v1/nodes/n1")
            .times(2),
    );
    let nodes: Api<Node> = Api::all(kube.client());
    nodes.get("n1").await.expect("retried past two 429s");
    assert_eq!(kube.requests().len(), 3);
}

#[tokio::test]
async fn a_write_behind_the_back_makes_the_next_write_conflict() {
    let kube = FakeKube::start();
    kube.insert(bare_metal_host("h1").namespace("ns").powered_on(true));
    let api = hosts(&kube, "ns");
    let read = api.get("h1").await.unwrap();
    // BMO flips poweredOn just before our patch arrives.
    kube.fault(
        Fault::mutate(|o| o["status"]["poweredOn"] = json!(false))
            .on_object(&BARE_METAL_HOST, "ns", "h1")
            .method("PATCH"),
    );
    let p = json!({
        "metadata": {
            "resourceVersion": read.metadata.resource_version,
            "annotations": { "reboot.metal3.io/autorepair": "{\"mode\":\"hard\"}" },
        }
    });
    let s = status(
        api.patch("h1", &PatchParams::default(), &Patch::Merge(&p))
            .await,
    );
    assert_eq!(s.code, 409);
    // Re-read, re-plan: the host is off now.
    let again = api.get("h1").await.unwrap();
    assert_eq!(again.data["status"]["poweredOn"], json!(false));
    assert!(rv(&again) > rv(&read));
    assert_eq!(ann(&again, "reboot.metal3.io/autorepair"), None);
}

#[tokio::test]
async fn a_reactor_plays_another_controller() {
    let kube = FakeKube::start();
    kube.insert(bare_metal_host("h1").namespace("ns").powered_on(true));
    // A fake BMO: any reboot.metal3.io key powers the host off; none powers it on.
    kube.react(&BARE_METAL_HOST, |h| {
        let requested = h["metadata"]["annotations"]
            .as_object()
            .is_some_and(|a| a.keys().any(|k| k.starts_with("reboot.metal3.io")));
        let on = h["status"]["poweredOn"].as_bool();
        (on != Some(!requested)).then(|| {
            let mut h = h.clone();
            h["status"]["poweredOn"] = json!(!requested);
            h
        })
    });
    let api = hosts(&kube, "ns");
    let key = "reboot.metal3.io/autorepair";
    let add = json!({ "metadata": { "annotations": { key: "{\"mode\":\"hard\"}" } } });
    let del = json!({ "metadata": { "annotations": { key: null } } });
    for (patch, powered_on) in [(&add, false), (&del, true)] {
        api.patch("h1", &PatchParams::default(), &Patch::Merge(patch))
            .await
            .unwrap();
        let h = api.get("h1").await.unwrap();
        assert_eq!(h.data["status"]["poweredOn"], json!(powered_on));
    }
    // External edits are visible to the test through the handle, too.
    kube.mutate(&BARE_METAL_HOST, "ns", "h1", |h| {
        h["metadata"]["annotations"] = json!({ "reboot.metal3.io": "" })
    });
    assert_eq!(
        kube.get(&BARE_METAL_HOST, "ns", "h1").unwrap()["status"]["poweredOn"],
        json!(false)
    );
}

#[tokio::test]
async fn requests_are_recorded() {
    let kube = FakeKube::start();
    kube.insert(machine("m1").namespace("ns"));
    let api = machines(&kube, "ns");
    let m = api.get("m1").await.unwrap();
    let p = json!({ "metadata": { "resourceVersion": m.metadata.resource_version, "annotations": { "a": "b" } } });
    api.patch("m1", &PatchParams::default(), &Patch::Merge(&p))
        .await
        .unwrap();
    let writes = kube.writes();
    assert_eq!(writes.len(), 1);
    let w = &writes[0];
    assert_eq!(w.method, "PATCH");
    assert_eq!(
        w.path,
        "/apis/cluster.x-k8s.io/v1beta2/namespaces/ns/machines/m1"
    );
    assert_eq!(w.content_type, "application/merge-patch+json");
    let body: Value = serde_json::from_str(&w.body).unwrap();
    assert!(body["metadata"]["resourceVersion"].is_string(), "{body}");
}

#[tokio::test]
async fn secrets_fold_string_data() {
    let kube = FakeKube::start();
    kube.insert(
        secret("c1-kubeconfig")
            .namespace("ns")
            .string_data("value", "hello"),
    );
    let s = kube.get(&SECRET, "ns", "c1-kubeconfig").unwrap();
    assert_eq!(s["data"]["value"], "aGVsbG8=");
    assert!(s.get("stringData").is_none());
    let api: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(kube.client(), "ns");
    let typed = api.get("c1-kubeconfig").await.unwrap();
    assert_eq!(typed.data.unwrap()["value"].0, b"hello");
}

/// The server runs on a thread and runtime of its own: a synchronous test (as the watcher's
/// synchronous backends will have) can use it with any HTTP client.
#[test]
fn usable_from_a_synchronous_test() {
    let kube = FakeKube::start();
    kube.insert(node("n1"));
    let body: Value = reqwest::blocking::get(format!("{}/api/v1/nodes/n1", kube.url()))
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(body["metadata"]["name"], "n1");
    let missing = reqwest::blocking::get(format!("{}/api/v1/nodes/n2", kube.url())).unwrap();
    assert_eq!(missing.status(), 404);
    let s: Value = missing.json().unwrap();
    assert_eq!(
        s,
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "nodes \"n2\" not found", "reason": "NotFound",
            "details": { "name": "n2", "group": "", "kind": "nodes" }, "code": 404,
        })
    );
}
