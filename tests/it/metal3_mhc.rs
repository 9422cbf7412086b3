//! autorepair as Cluster API's external remediation provider, against the fake API server
//! through the real kube client: the test plays the MachineHealthCheck as cluster-api's
//! controller does it (docs/metal3.md, "With Cluster API's MachineHealthCheck"): for an
//! unhealthy Machine, create an AutorepairRemediation from the template, named like the
//! Machine, owned by it; delete it once the Machine is healthy; never read its status.

use autorepair::engine::exec;
use autorepair::engine::{Backend, Limits};
use autorepair::metal3::fixture::{Fleet, Host, Machine, Node};
use autorepair::metal3::kube::{KubeBackend, Options};
use autorepair::metal3::objects::{REBOOT_KEY, REQUEST_KEY};
use autorepair::metal3::{self, Metal3, Settings};
use kube::api::{Api, DeleteParams, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};
use testsupport::kube::{
    AUTOREPAIR_REMEDIATION, AUTOREPAIR_REMEDIATION_TEMPLATE, BARE_METAL_HOST, FakeKube, MACHINE,
    NODE,
};

/// The passes' clock starts at the wall clock's: the fake server stamps the objects the MHC
/// creates with it, and a result is compared with the request's creation.
fn start() -> i64 {
    jiff::Timestamp::now().as_second()
}
const GROUP: &str = "remediation.autorepair.io";

fn api(kube: &FakeKube, kind: &str) -> Api<DynamicObject> {
    let client = kube::Client::try_from(kube.config()).unwrap();
    let ar = ApiResource::from_gvk(&GroupVersionKind::gvk(GROUP, "v1alpha1", kind));
    Api::namespaced_with(client, "ns", &ar)
}

/// The template an MHC's `remediationTemplate` names, as an operator applies it.
fn template() -> Value {
    json!({
        "apiVersion": "remediation.autorepair.io/v1alpha1",
        "kind": "AutorepairRemediationTemplate",
        "metadata": {"name": "autorepair", "namespace": "ns"},
        "spec": {"template": {"metadata": {"labels": {"team": "metal"}}, "spec": {}}},
    })
}

/// The MHC's health check, as cluster-api's targets code has it for these tests: the Node
/// exists and is Ready.
fn healthy(kube: &FakeKube, node: &str) -> bool {
    kube.get(&NODE, "", node).is_some_and(|n| {
        n["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

/// One MachineHealthCheck reconcile of Machine `machine` (Node `node`), through the API as
/// cluster-api's controller does it: unhealthy and no request object (even one being
/// deleted): clone the template; healthy and one not being deleted: delete it.
async fn mhc(kube: &FakeKube, machine: &str, node: &str) {
    let requests = api(kube, "AutorepairRemediation");
    let existing = requests.get_opt(machine).await.unwrap();
    if healthy(kube, node) {
        if existing.is_some_and(|r| r.metadata.deletion_timestamp.is_none()) {
            requests
                .delete(machine, &DeleteParams::default())
                .await
                .unwrap();
        }
        return;
    }
    if existing.is_some() {
        return;
    }
    let template = api(kube, "AutorepairRemediationTemplate")
        .get("autorepair")
        .await
        .unwrap();
    let m = kube.get(&MACHINE, "ns", machine).unwrap();
    let from = &template.data["spec"]["template"];
    let object: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "remediation.autorepair.io/v1alpha1",
        "kind": "AutorepairRemediation",
        "metadata": {
            "name": machine,
            "namespace": "ns",
            "labels": from["metadata"]["labels"],
            "annotations": {
                "cluster.x-k8s.io/cloned-from-name": "autorepair",
                "cluster.x-k8s.io/cloned-from-groupkind": "AutorepairRemediationTemplate.remediation.autorepair.io",
            },
            "ownerReferences": [{
                "apiVersion": "cluster.x-k8s.io/v1beta2",
                "kind": "Machine",
                "name": machine,
                "uid": m["metadata"]["uid"],
            }],
        },
        "spec": from["spec"],
    }))
    .unwrap();
    requests
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
}

fn mhc_pass(rt: &tokio::runtime::Runtime, kube: &FakeKube) {
    rt.block_on(mhc(kube, "m1", "n1"));
}

/// The world between passes: a host without a reboot key is on, one with it off; a powered-on
/// host's missing Node registers again, Ready.
fn play_world(kube: &FakeKube) {
    let on = kube
        .annotation(&BARE_METAL_HOST, "ns", "h1", REBOOT_KEY)
        .is_none();
    if powered(kube) == Some(true) && kube.get(&NODE, "", "n1").is_none() {
        kube.insert(Fleet::new().node(Node::new("n1")).build()["items"][0].clone());
    }
    kube.mutate(&BARE_METAL_HOST, "ns", "h1", |h| {
        h["status"]["poweredOn"] = json!(on)
    });
}

fn powered(kube: &FakeKube) -> Option<bool> {
    kube.get(&BARE_METAL_HOST, "ns", "h1")
        .and_then(|h| h.pointer("/status/poweredOn").and_then(Value::as_bool))
}

fn pass(b: &mut KubeBackend, now: i64, limits: &Limits) {
    let snap = b.snapshot().expect("snapshot");
    let plan = metal3::plan(&snap, &Settings::default(), now, limits, 7);
    let report = exec::execute(&plan, b as &mut dyn Backend<Metal3>);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
}

/// The remediation object's status: (phase, reason), if it has one.
fn status(kube: &FakeKube) -> Option<(String, String)> {
    let r = kube.get(&AUTOREPAIR_REMEDIATION, "ns", "m1")?;
    let phase = r.pointer("/status/phase")?.as_str()?.to_owned();
    let reason = r
        .pointer("/status/conditions/0/reason")?
        .as_str()?
        .to_owned();
    Some((phase, reason))
}

/// The remediation object's status message (its condition's), which says why.
fn status_message(kube: &FakeKube) -> String {
    kube.get(&AUTOREPAIR_REMEDIATION, "ns", "m1")
        .and_then(|r| {
            r.pointer("/status/conditions/0/message")?
                .as_str()
                .map(str::to_owned)
        })
        .expect("a status message on the remediation object")
}

/// A Machine whose Node has been NotReady long enough, with no policy of autorepair's: the
/// MHC's request alone allows the power cycle.
fn broken(machine: Machine) -> FakeKube {
    let kube = FakeKube::builder().start();
    let fleet = Fleet::new()
        .machine(machine)
        .host(Host::new("ns", "h1").powered(true))
        .node(Node::new("n1").ready("False", "2026-01-01T00:00:00Z"))
        .build();
    for item in fleet["items"].as_array().unwrap() {
        kube.insert(item.clone());
    }
    kube.insert(template());
    kube
}

/// The Node, when it is back, never becomes Ready: every power cycle times out.
fn keep_node_not_ready(kube: &FakeKube) {
    if kube.get(&NODE, "", "n1").is_some() {
        kube.mutate(&NODE, "", "n1", |n| {
            n["status"]["conditions"] = json!([{"type": "Ready", "status": "False",
                "lastTransitionTime": "2026-01-01T00:00:00Z"}]);
        });
    }
}

fn power_offs(kube: &FakeKube) -> usize {
    kube.requests()
        .iter()
        .filter(|r| {
            r.method == "PATCH"
                && r.path.contains("/baremetalhosts/")
                && r.body.contains(REBOOT_KEY)
                && !r.body.contains("null")
        })
        .count()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Runs MHC, a pass, the world, `passes` times (30 s apart), calling `between` after each
/// pass; returns the statuses seen in order (repeats dropped).
fn run(
    kube: &FakeKube,
    passes: usize,
    between: impl FnMut(usize, &FakeKube, &tokio::runtime::Runtime),
) -> Vec<(String, String)> {
    run_with(kube, passes, &Limits::default(), between)
}

/// [`run`] under other limits.
fn run_with(
    kube: &FakeKube,
    passes: usize,
    limits: &Limits,
    mut between: impl FnMut(usize, &FakeKube, &tokio::runtime::Runtime),
) -> Vec<(String, String)> {
    let rt = runtime();
    let now = start();
    let mut seen: Vec<(String, String)> = Vec::new();
    for i in 0..passes {
        mhc_pass(&rt, kube);
        let mut b = KubeBackend::from_config(kube.config(), Options::default()).unwrap();
        pass(&mut b, now + 30 * i as i64, limits);
        drop(b);
        if let Some(s) = status(kube)
            && seen.last() != Some(&s)
        {
            seen.push(s);
        }
        between(i, kube, &rt);
        play_world(kube);
    }
    seen
}

#[test]
fn an_mhc_request_is_served_by_one_power_cycle_and_deleted_by_the_mhc_once_healthy() {
    let kube = broken(Machine::new("ns", "m1").node("n1").host("h1"));
    let seen = run(&kube, 12, |_, _, _| {});
    assert_eq!(power_offs(&kube), 1, "one power cycle");
    assert_eq!(powered(&kube), Some(true));
    assert!(healthy(&kube, "n1"));
    assert!(
        kube.get(&AUTOREPAIR_REMEDIATION, "ns", "m1").is_none(),
        "the MHC deleted its request once the Machine was healthy"
    );
    assert!(kube.annotation(&MACHINE, "ns", "m1", REQUEST_KEY).is_none());
    let result = kube
        .get(&MACHINE, "ns", "m1")
        .unwrap()
        .pointer("/metadata/annotations")
        .unwrap()
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.starts_with("autorepair.io/repair."))
        .map(|(_, v)| v.as_str().unwrap().to_owned())
        .expect("the result is on the Machine");
    assert!(
        result.starts_with("result:power-cycle:") && result.contains(":success:power-cycle."),
        "{result}"
    );
    // Reported from what each pass read: waiting (the pass that starts the cycle read it
    // before), under way; the MHC deleted it as soon as the Node was Ready, before a pass
    // could report the success the Machine's result records.
    let seen: Vec<(&str, &str)> = seen.iter().map(|(p, r)| (p.as_str(), r.as_str())).collect();
    assert_eq!(
        seen,
        [("Waiting", "Waiting"), ("Running", "PowerCycling")],
        "{seen:?}"
    );
    // The status is a report: autorepair wrote it through the status subresource, and the
    // Machine's annotations are the record.
    assert!(
        kube.requests()
            .iter()
            .any(|r| r.method == "PATCH" && r.path.ends_with("/autorepairremediations/m1/status")),
        "status written through its subresource"
    );
    // Served: nothing handed over to an owner.
    assert!(
        !kube
            .requests()
            .iter()
            .any(|r| r.path.ends_with("/machines/m1/status")),
        "no OwnerRemediated handoff"
    );
}

#[test]
fn the_mhc_deleting_its_request_mid_cycle_never_leaves_the_host_off() {
    // After each pass of the cycle in turn, the MHC deletes its request (as it would for a
    // Machine it judged healthy again, or a person would): the cycle still ends with the host
    // on, the Node back, and one power cycle at most.
    for at in 0..6 {
        let kube = broken(Machine::new("ns", "m1").node("n1").host("h1"));
        let mut deleted = false;
        run(&kube, 14, |i, kube, rt| {
            if i == at && !deleted {
                deleted = true;
                rt.block_on(async {
                    let _ = api(kube, "AutorepairRemediation")
                        .delete("m1", &DeleteParams::default())
                        .await;
                });
            }
        });
        let case = format!("deleted after pass {at}");
        assert!(power_offs(&kube) <= 1, "{case}: at most one power cycle");
        assert_eq!(powered(&kube), Some(true), "{case}: the host is on");
        assert!(
            kube.annotation(&BARE_METAL_HOST, "ns", "h1", REBOOT_KEY)
                .is_none(),
            "{case}: no reboot key left"
        );
        assert!(healthy(&kube, "n1"), "{case}: the Node is back");
        assert!(
            kube.annotation(&MACHINE, "ns", "m1", REQUEST_KEY).is_none(),
            "{case}: no request left on the Machine"
        );
    }
}

#[test]
fn a_refused_request_says_why_in_its_status_and_powers_nothing() {
    let recent = format!(
        "result:power-cycle:{}:success:power-cycle.0f8fad5b-d9cb-469f-a165-70867728950e",
        start() - 600
    );
    let cases: [(&str, Machine, (&str, &str)); 4] = [
        (
            "suspended",
            Machine::new("ns", "m1")
                .node("n1")
                .host("h1")
                .annotate("autorepair.io/suspend", ""),
            ("Waiting", "Suspended"),
        ),
        (
            "held by Cluster API",
            Machine::new("ns", "m1")
                .node("n1")
                .host("h1")
                .annotate("cluster.x-k8s.io/skip-remediation", ""),
            ("Waiting", "HeldByClusterAPI"),
        ),
        (
            "power-cycled 10 minutes ago",
            Machine::new("ns", "m1").node("n1").host("h1").annotate(
                "autorepair.io/repair.0f8fad5b-d9cb-469f-a165-70867728950e",
                &recent,
            ),
            ("Failed", "RebootLoopGuard"),
        ),
        (
            "power-cycled 10 minutes ago, with an owner to replace it",
            Machine::new("ns", "m1")
                .node("n1")
                .host("h1")
                .owner("MachineSet", "ms1")
                .annotate(
                    "autorepair.io/repair.0f8fad5b-d9cb-469f-a165-70867728950e",
                    &recent,
                ),
            ("Failed", "RebootLoopGuard"),
        ),
    ];
    for (case, machine, want) in cases {
        let kube = broken(machine);
        let seen = run(&kube, 4, |_, _, _| {});
        assert_eq!(power_offs(&kube), 0, "{case}: nothing powered off");
        assert_eq!(
            seen.last().map(|(p, r)| (p.as_str(), r.as_str())),
            Some(want),
            "{case}: {seen:?}"
        );
        let message = status_message(&kube);
        assert!(!message.is_empty(), "{case}: the condition says why");
        // The MHC still sees an unhealthy Machine: the request stays, asking nothing more.
        assert!(kube.get(&AUTOREPAIR_REMEDIATION, "ns", "m1").is_some());
    }
}

#[test]
fn the_template_kind_is_served_and_never_read_as_a_request() {
    let kube = broken(Machine::new("ns", "m1").node("n1").host("h1"));
    assert!(
        kube.get(&AUTOREPAIR_REMEDIATION_TEMPLATE, "ns", "autorepair")
            .is_some()
    );
    // No MHC here: the template alone asks for nothing, and the Machine has no policy.
    let mut b = KubeBackend::from_config(kube.config(), Options::default()).unwrap();
    pass(&mut b, start(), &Limits::default());
    drop(b);
    play_world(&kube);
    assert_eq!(power_offs(&kube), 0);
}

#[test]
fn a_request_held_by_a_limit_names_the_limit_its_value_and_the_count() {
    // One Machine down in a fleet of one: more than 0 allowed, and more than 40% of 1 (0).
    let share: Limits = serde_json::from_value(json!({"max_down_nodes": "40%"})).unwrap();
    let none = Limits {
        max_down_nodes: 0,
        ..Limits::default()
    };
    let per_zone: Limits =
        serde_json::from_value(json!({"max_down_nodes_per_group": "0%"})).unwrap();
    for (case, limits, says) in [
        (
            "a number",
            none,
            "1 machine is down in the fleet (ns/m1), more than max_down_nodes = 0",
        ),
        ("a share", share, "more than max_down_nodes = 40% of 1 = 0"),
        (
            "a share per zone",
            per_zone,
            "more than max_down_nodes_per_group = 0% of 1 = 0",
        ),
    ] {
        let kube = broken(Machine::new("ns", "m1").node("n1").host("h1"));
        let seen = run_with(&kube, 3, &limits, |_, _, _| {});
        assert_eq!(power_offs(&kube), 0, "{case}: nothing powered off");
        assert_eq!(
            seen.last().map(|(p, r)| (p.as_str(), r.as_str())),
            Some(("Waiting", "TooManyUnhealthy")),
            "{case}: {seen:?}"
        );
        let message = status_message(&kube);
        assert!(message.contains(says), "{case}: {message}");
    }
}

/// The MachineHealthCheck's verdict on the Machine, as it writes it for every unhealthy target
/// (v1beta2 `status.conditions`): `HealthCheckSucceeded` False, the other conditions kept.
fn judge_unhealthy(kube: &FakeKube) {
    kube.mutate(&MACHINE, "ns", "m1", |m| {
        let mut list: Vec<Value> = m
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        list.retain(|c| c["type"] != "HealthCheckSucceeded");
        list.push(json!({
            "type": "HealthCheckSucceeded", "status": "False", "reason": "UnhealthyNode",
            "message": "Condition Ready on Node n1 was False", "lastTransitionTime": "2026-01-01T00:00:00Z",
        }));
        m["status"]["conditions"] = json!(list);
    });
}

/// The condition `kind` in the Machine's list at `pointer`: (status, reason, message).
fn condition(kube: &FakeKube, pointer: &str, kind: &str) -> Option<(String, String, String)> {
    let m = kube.get(&MACHINE, "ns", "m1")?;
    let c = m
        .pointer(pointer)?
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)?
        .clone();
    let field = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
    Some((field("status"), field("reason"), field("message")))
}

/// The owner's part, as Cluster API's MachineSet controller does it
/// (`collections.IsUnhealthyAndOwnerRemediated`): a Machine whose v1beta2 conditions say
/// `HealthCheckSucceeded` False and `OwnerRemediated` False is deleted, to be replaced.
async fn machine_set(kube: &FakeKube) -> bool {
    let is_false = |kind| {
        condition(kube, "/status/conditions", kind).is_some_and(|(status, _, _)| status == "False")
    };
    if !(is_false("HealthCheckSucceeded") && is_false("OwnerRemediated")) {
        return false;
    }
    let client = kube::Client::try_from(kube.config()).unwrap();
    let ar = ApiResource::from_gvk(&GroupVersionKind::gvk(
        "cluster.x-k8s.io",
        "v1beta2",
        "Machine",
    ));
    Api::<DynamicObject>::namespaced_with(client, "ns", &ar)
        .delete("m1", &DeleteParams::default())
        .await
        .unwrap();
    true
}

#[test]
fn a_machine_autorepair_gives_up_on_is_handed_to_its_owner_which_replaces_it_and_its_host_marked() {
    let recent = format!(
        "result:power-cycle:{}:success:power-cycle.0f8fad5b-d9cb-469f-a165-70867728950e",
        start() - 600
    );
    let looped = |m: Machine| {
        m.annotate(
            "autorepair.io/repair.0f8fad5b-d9cb-469f-a165-70867728950e",
            &recent,
        )
    };
    let base = || Machine::new("ns", "m1").node("n1").host("h1");
    // (case, Machine, handed over)
    let cases = [
        (
            "the reboot-loop guard refuses, an owner to replace it",
            looped(base().owner("MachineSet", "ms1")),
            true,
        ),
        (
            "the reboot-loop guard refuses, no owner: a person's",
            looped(base()),
            false,
        ),
        (
            "suspended: autorepair has not given up",
            base()
                .owner("MachineSet", "ms1")
                .annotate("autorepair.io/suspend", ""),
            false,
        ),
    ];
    for (case, machine, handed) in cases {
        let kube = broken(machine);
        let rt = runtime();
        let now = start();
        for i in 0..3 {
            rt.block_on(mhc(&kube, "m1", "n1"));
            judge_unhealthy(&kube);
            let mut b = KubeBackend::from_config(kube.config(), Options::default()).unwrap();
            pass(&mut b, now + 30 * i, &Limits::default());
        }
        assert_eq!(power_offs(&kube), 0, "{case}: nothing powered off");
        let status_writes = kube
            .requests()
            .iter()
            .filter(|r| r.method == "PATCH" && r.path.ends_with("/machines/m1/status"))
            .count();
        let current = condition(&kube, "/status/conditions", "OwnerRemediated");
        let legacy = condition(
            &kube,
            "/status/deprecated/v1beta1/conditions",
            "OwnerRemediated",
        );
        // As CAPM3 does when it gives up: the host is marked, once, so that the Machine
        // replacing this one is not placed on it.
        let host_mark = kube
            .get(&BARE_METAL_HOST, "ns", "h1")
            .unwrap()
            .pointer("/metadata/annotations/capm3.metal3.io~1unhealthy")
            .cloned();
        let host_writes = kube
            .requests()
            .iter()
            .filter(|r| r.method == "PATCH" && r.path.ends_with("/baremetalhosts/h1"))
            .count();
        if !handed {
            assert_eq!((host_mark, host_writes), (None, 0), "{case}");
            assert_eq!((current, legacy, status_writes), (None, None, 0), "{case}");
            assert!(!rt.block_on(machine_set(&kube)), "{case}");
            assert!(kube.get(&MACHINE, "ns", "m1").is_some(), "{case}");
            continue;
        }
        assert_eq!(
            status_writes, 1,
            "{case}: written once, through the status subresource"
        );
        assert_eq!(
            (host_mark, host_writes),
            (Some(json!("capm3/UnhealthyNode")), 1),
            "{case}"
        );
        let (status, reason, message) = current.expect("v1beta2 OwnerRemediated");
        assert_eq!(
            (status.as_str(), reason.as_str()),
            ("False", "WaitingForRemediation")
        );
        assert!(message.contains("RebootLoopGuard"), "{message}");
        let (status, reason, _) = legacy.expect("v1beta1 OwnerRemediated");
        assert_eq!(
            (status.as_str(), reason.as_str()),
            ("False", "WaitingForRemediation")
        );
        // The MHC's own condition is kept as it was.
        assert_eq!(
            condition(&kube, "/status/conditions", "HealthCheckSucceeded").map(|c| c.0),
            Some("False".to_owned())
        );
        // autorepair never deletes the Machine for this; the report says whom it went to.
        assert!(
            !kube
                .requests()
                .iter()
                .any(|r| r.method == "DELETE" && r.path.contains("/machines/")),
            "{case}"
        );
        let report = status_message(&kube);
        assert!(
            report.contains("handed over to its owner machineset/ns/ms1"),
            "{report}"
        );
        // The owner replaces it.
        assert!(rt.block_on(machine_set(&kube)), "{case}");
        assert!(kube.get(&MACHINE, "ns", "m1").is_none(), "{case}");
    }
}

/// A host someone powered off on purpose (`spec.online` false): as CAPM3 does, the request
/// fails at once, naming why, and nothing more happens: no power cycle, no hand-over to the
/// owner (the Machine is not given up on for a fault of its own), no mark on the host.
/// (Before, it waited with `HostNotReady` for as long as the host stayed off.)
#[test]
fn a_host_off_on_purpose_fails_the_request_without_a_hand_over() {
    let kube = broken(
        Machine::new("ns", "m1")
            .node("n1")
            .host("h1")
            .owner("MachineSet", "ms1"),
    );
    kube.mutate(&BARE_METAL_HOST, "ns", "h1", |h| {
        h["spec"]["online"] = json!(false)
    });
    let seen = run(&kube, 3, |_, _, _| {});
    assert_eq!(
        seen.last().map(|(p, r)| (p.as_str(), r.as_str())),
        Some(("Failed", "HostPoweredOffOnPurpose")),
        "{seen:?}"
    );
    let message = status_message(&kube);
    assert!(message.contains("spec.online false"), "{message}");
    assert_eq!(power_offs(&kube), 0);
    assert_eq!(
        condition(&kube, "/status/conditions", "OwnerRemediated"),
        None
    );
    assert!(
        kube.annotation(&BARE_METAL_HOST, "ns", "h1", "capm3.metal3.io/unhealthy")
            .is_none()
    );
    assert!(kube.get(&MACHINE, "ns", "m1").is_some());
}

/// CAPM3's per-request strategy, copied by the MachineHealthCheck from the template into
/// each request: its timeout, in either spelling (v1beta2's `timeoutSeconds`, v1beta1's
/// `timeout`), bounds each power cycle in place of `cycle_timeout`; a strategy that cannot be
/// read starts nothing, says why, and is given up as a request no repair can serve; a
/// `retryLimit` holds the request open for its retries (the next test follows them). The Node
/// here never comes back Ready.
#[test]
fn the_requests_strategy_bounds_its_power_cycle() {
    // (case, spec.strategy, the last status, words of its message)
    type Case = (
        &'static str,
        Value,
        (&'static str, &'static str),
        &'static [&'static str],
    );
    let cases: [Case; 4] = [
        (
            "none: cycle_timeout",
            json!(null),
            ("Running", "PowerCycling"),
            &[],
        ),
        (
            "v1beta2",
            json!({"type": "Reboot", "retryLimit": 2, "timeoutSeconds": 120}),
            ("Waiting", "RetryBackoff"),
            &["retry 1 of 2 (spec.strategy.retryLimit)"],
        ),
        (
            "v1beta1",
            json!({"type": "Reboot", "timeout": "2m"}),
            ("Failed", "RemediationFailed"),
            &[],
        ),
        (
            "unreadable",
            json!({"type": "Reset", "timeoutSeconds": 120}),
            ("Failed", "NeedsPerson"),
            &["spec.strategy.type", "AutorepairRemediationTemplate"],
        ),
    ];
    for (case, strategy, last, words) in cases {
        let kube = broken(Machine::new("ns", "m1").node("n1").host("h1"));
        kube.mutate(&AUTOREPAIR_REMEDIATION_TEMPLATE, "ns", "autorepair", |t| {
            t["spec"]["template"]["spec"]["strategy"] = strategy.clone();
        });
        let mut said = String::new();
        let seen = run(&kube, 10, |_, kube, _| {
            if let Some(r) = kube.get(&AUTOREPAIR_REMEDIATION, "ns", "m1") {
                said.push_str(&r["status"].to_string());
            }
            keep_node_not_ready(kube);
        });
        let got = seen.last().map(|(p, r)| (p.as_str(), r.as_str()));
        assert_eq!(got, Some(last), "{case}: {seen:?}");
        for w in words {
            assert!(said.contains(w), "{case}: {said}");
        }
        assert_eq!(
            power_offs(&kube),
            usize::from(case != "unreadable"),
            "{case}"
        );
    }
}

/// CAPM3's `retryLimit`: a power cycle that did not bring the Node back is tried again, after
/// `retry_backoff`, up to the request's own limit (the configuration's `retries` does not
/// widen it), and only then is the request failed and the Machine handed to its owner. The
/// request says which retry comes when; the reboot-loop guard does not take a retry for a loop.
#[test]
fn a_failed_power_cycle_is_retried_up_to_the_requests_retry_limit() {
    let limits = Limits {
        retries: 5,
        retry_backoff: std::time::Duration::from_secs(60),
        ..Limits::default()
    };
    // (case, spec.strategy, power cycles made)
    let cases = [
        (
            "retryLimit 1: two power cycles",
            json!({"type": "Reboot", "retryLimit": 1, "timeoutSeconds": 120}),
            2,
        ),
        (
            "no retryLimit is CAPM3's 0, whatever the configuration",
            json!({"type": "Reboot", "timeoutSeconds": 120}),
            1,
        ),
    ];
    for (case, strategy, cycles) in cases {
        let kube = broken(Machine::new("ns", "m1").node("n1").host("h1"));
        kube.mutate(&AUTOREPAIR_REMEDIATION_TEMPLATE, "ns", "autorepair", |t| {
            t["spec"]["template"]["spec"]["strategy"] = strategy.clone();
        });
        let mut said = String::new();
        let seen = run_with(&kube, 30, &limits, |_, kube, _| {
            if let Some(r) = kube.get(&AUTOREPAIR_REMEDIATION, "ns", "m1") {
                said.push_str(&r["status"].to_string());
            }
            keep_node_not_ready(kube);
        });
        assert_eq!(power_offs(&kube), cycles, "{case}: {seen:?}");
        assert_eq!(powered(&kube), Some(true), "{case}: the host is left on");
        assert_eq!(
            seen.last().map(|(p, r)| (p.as_str(), r.as_str())),
            Some(("Failed", "RemediationFailed")),
            "{case}: {seen:?}"
        );
        let backoff = seen.iter().any(|(_, r)| r == "RetryBackoff");
        assert_eq!(backoff, cycles > 1, "{case}: {seen:?}");
        if cycles > 1 {
            assert!(
                said.contains("retry 1 of 1 (spec.strategy.retryLimit)"),
                "{case}: {said}"
            );
            assert!(said.contains("given up after 1 retries"), "{case}: {said}");
            assert!(!said.contains("RebootLoopGuard"), "{case}: {said}");
        }
        // Each try left its failure on the Machine: the count a retry is judged by.
        let m = kube.get(&MACHINE, "ns", "m1").unwrap();
        let failures = m["metadata"]["annotations"]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, v)| v.as_str().is_some_and(|v| v.contains(":failure:")))
            .count();
        assert_eq!(failures, cycles, "{case}: {m}");
    }
}

/// What CAPM3's users look at, with kubectl: a request autorepair gave up on, its host
/// marked so that the replacement lands elsewhere, a request failed because its host is off
/// on purpose, and one waiting for its retry (`retryLimit`), each with its reason in the
/// printer columns.
#[test]
#[cfg_attr(
    not(have_kubectl),
    ignore = "needs kubectl: apt-get install kubernetes-client"
)]
fn capm3s_results_show_in_kubectl() {
    let dir = tempfile::tempdir().unwrap();
    let get = |kube: &FakeKube, words: &[&str]| {
        let config = dir.path().join("kubeconfig");
        std::fs::write(&config, crate::common::kubeconfig(kube.url(), "good")).unwrap();
        let (ok, text) = crate::common::kubectl(words, &config, dir.path());
        assert!(ok, "kubectl {words:?}: {text}");
        text
    };
    let columns = |text: &str, name: &str| -> Vec<String> {
        text.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    };

    let recent = format!(
        "result:power-cycle:{}:success:power-cycle.0f8fad5b-d9cb-469f-a165-70867728950e",
        start() - 600
    );
    let kube = broken(
        Machine::new("ns", "m1")
            .node("n1")
            .host("h1")
            .owner("MachineSet", "ms1")
            .annotate(
                "autorepair.io/repair.0f8fad5b-d9cb-469f-a165-70867728950e",
                &recent,
            ),
    );
    run(&kube, 2, |_, _, _| {});
    let mark = "jsonpath={.metadata.annotations.capm3\\.metal3\\.io/unhealthy}";
    assert_eq!(
        get(&kube, &["get", "bmh", "-n", "ns", "h1", "-o", mark]),
        "capm3/UnhealthyNode"
    );
    let owner = "jsonpath={.status.conditions[?(@.type==\"OwnerRemediated\")].reason}";
    assert_eq!(
        get(
            &kube,
            &[
                "get",
                "machines.cluster.x-k8s.io",
                "-n",
                "ns",
                "m1",
                "-o",
                owner
            ]
        ),
        "WaitingForRemediation"
    );
    let listed = get(&kube, &["get", "autorepairremediations", "-n", "ns"]);
    assert_eq!(columns(&listed, "m1")[1], "Failed", "{listed}");

    let kube = broken(
        Machine::new("ns", "m1")
            .node("n1")
            .host("h1")
            .owner("MachineSet", "ms1"),
    );
    kube.mutate(&BARE_METAL_HOST, "ns", "h1", |h| {
        h["spec"]["online"] = json!(false)
    });
    run(&kube, 2, |_, _, _| {});
    let listed = get(&kube, &["get", "autorepairremediations", "-n", "ns"]);
    assert_eq!(
        columns(&listed, "m1")[1..3],
        ["Failed", "HostPoweredOffOnPurpose"],
        "{listed}"
    );

    // A power cycle that did not bring the Node back, with a retry left: the request waits
    // for its retry, neither failed nor handed over, and its host is not marked.
    let kube = broken(
        Machine::new("ns", "m1")
            .node("n1")
            .host("h1")
            .owner("MachineSet", "ms1"),
    );
    kube.mutate(&AUTOREPAIR_REMEDIATION_TEMPLATE, "ns", "autorepair", |t| {
        t["spec"]["template"]["spec"]["strategy"] =
            json!({"type": "Reboot", "retryLimit": 1, "timeoutSeconds": 120});
    });
    run(&kube, 8, |_, kube, _| {
        keep_node_not_ready(kube);
    });
    let listed = get(&kube, &["get", "autorepairremediations", "-n", "ns"]);
    assert_eq!(
        columns(&listed, "m1")[1..3],
        ["Waiting", "RetryBackoff"],
        "{listed}"
    );
    assert_eq!(
        get(&kube, &["get", "bmh", "-n", "ns", "h1", "-o", mark]),
        ""
    );
}

/// The shipped CRDs follow the conventions Cluster API's tools read: the contract labels
/// (`cluster.x-k8s.io/<contract>`, each naming a version the CRD serves), and clusterctl's
/// own label, without which `clusterctl move` does not look for these objects and leaves the
/// requests (and the template the MachineHealthCheck names) behind. The template is not owned
/// by anything that moves, so its CRD also asks clusterctl to move all of its objects.
#[test]
fn the_crds_carry_what_clusterctl_and_cluster_api_read() {
    use serde::Deserialize;
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/contrib/kubernetes/remediation-crds.yaml"
    ))
    .unwrap();
    let mut kinds = Vec::new();
    for doc in serde_yaml_ng::Deserializer::from_str(&text) {
        let crd = Value::deserialize(doc).unwrap();
        if crd["kind"] != "CustomResourceDefinition" {
            continue;
        }
        let kind = crd["spec"]["names"]["kind"].as_str().unwrap().to_owned();
        let labels = &crd["metadata"]["labels"];
        assert_eq!(
            labels["clusterctl.cluster.x-k8s.io"], "",
            "{kind}: {labels}"
        );
        let served: Vec<&str> = crd["spec"]["versions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["served"] == true)
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        for contract in ["v1beta1", "v1beta2"] {
            let versions = labels[format!("cluster.x-k8s.io/{contract}")]
                .as_str()
                .unwrap_or_else(|| panic!("{kind}: no cluster.x-k8s.io/{contract} label"));
            assert!(
                versions.split('_').all(|v| served.contains(&v)),
                "{kind}: {contract} names {versions}, served {served:?}"
            );
        }
        let moves_all = labels.get("clusterctl.cluster.x-k8s.io/move").is_some();
        assert_eq!(moves_all, kind.ends_with("Template"), "{kind}: {labels}");
        kinds.push(kind);
    }
    kinds.sort();
    assert_eq!(
        kinds,
        ["AutorepairRemediation", "AutorepairRemediationTemplate"]
    );
}
