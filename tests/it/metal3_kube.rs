//! The metal3 family's live backend (`metal3::kube::KubeBackend`) against the fake API server
//! (crates/testsupport, `kube`), through the real kube client over HTTP: the design's truth table, full
//! power cycles with the tests playing the baremetal-operator and kubelet between passes, a
//! kill after every API write, conflicts, v1beta1-only servers, workload clusters reached
//! through their kubeconfig Secrets.

use autorepair::engine::exec::{self, Report};
use autorepair::engine::{Backend, BackendError, Limits, ObjectRef};
use autorepair::metal3::fixture::{Fleet, Host, Machine, Node};
use autorepair::metal3::kube::{CONFLICT_HINT, KubeBackend, Options, Workload, is_conflict};
use autorepair::metal3::objects::{REBOOT_KEY, REQUEST_KEY, Snapshot};
use autorepair::metal3::{self, Action, Metal3, Op, OpId, Plan, Settings, Step};
use autorepair::transport::{self, TransportError};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use testsupport::kube::{
    ApiError, BARE_METAL_HOST, CLUSTER, FakeKube, Fault, MACHINE, MACHINE_SET, METAL3_MACHINE,
    NODE, POD, RecordedRequest, Resource,
};

/// 2027-01-15: long after the fixtures' Nodes changed state.
const NOW: i64 = 1_800_000_000;

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

/// A fake management cluster that also serves KubeadmControlPlanes.
/// A repair id, for marks the tests write as the engine would.
const REPAIR: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

fn server() -> FakeKube {
    FakeKube::builder().resource(KUBEADM_CONTROL_PLANE).start()
}

fn load(kube: &FakeKube, list: &Value) {
    for item in list["items"].as_array().expect("a List") {
        kube.insert(item.clone());
    }
}

fn served(list: &Value) -> FakeKube {
    let kube = server();
    load(&kube, list);
    kube
}

fn backend(kube: &FakeKube) -> KubeBackend {
    KubeBackend::from_config(kube.config(), Options::default()).expect("backend")
}

fn plan_of(snap: &Snapshot, now: i64) -> Plan {
    metal3::plan(snap, &Settings::default(), now, &Limits::default(), 7)
}

/// One pass: read, plan, act.
fn pass(b: &mut dyn Backend<Metal3>, now: i64) -> (Snapshot, Plan, Report<Metal3>) {
    let snap = b.snapshot().expect("snapshot");
    let plan = plan_of(&snap, now);
    let report = exec::execute(&plan, b);
    b.finish_pass(now).expect("finish pass");
    (snap, plan, report)
}

fn clean_pass(b: &mut dyn Backend<Metal3>, now: i64) -> (Snapshot, Plan) {
    let (snap, plan, report) = pass(b, now);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    (snap, plan)
}

/// What the design's table looks at, on `ns/m1`, `ns/h1` and Node `n1`, in the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seen {
    node: bool,
    request: bool,
    powered_on: Option<bool>,
    reboot: bool,
}

fn seen(kube: &FakeKube) -> Seen {
    seen_in(kube, kube)
}

fn seen_in(management: &FakeKube, workload: &FakeKube) -> Seen {
    Seen {
        node: workload.get(&NODE, "", "n1").is_some(),
        request: management
            .annotation(&MACHINE, "ns", "m1", REQUEST_KEY)
            .is_some(),
        powered_on: management
            .get(&BARE_METAL_HOST, "ns", "h1")
            .and_then(|h| h.pointer("/status/poweredOn").and_then(Value::as_bool)),
        reboot: management
            .annotation(&BARE_METAL_HOST, "ns", "h1", REBOOT_KEY)
            .is_some(),
    }
}

fn one_machine(node: bool, requested: bool, powered_on: bool, reboot: bool) -> Value {
    let mut m = Machine::new("ns", "m1").node("n1").host("h1");
    if requested {
        m = m.requested();
    }
    let mut h = Host::new("ns", "h1").powered(powered_on);
    if reboot {
        h = h.rebooting();
    }
    let mut fleet = Fleet::new().machine(m).host(h);
    if node {
        fleet = fleet.node(Node::new("n1"));
    }
    fleet.build()
}

fn node_item(name: &str) -> Value {
    Fleet::new().node(Node::new(name)).build()["items"][0].clone()
}

/// The baremetal-operator and kubelet, between passes, for `(machine, host, node)` in `ns`:
/// a powered-on host whose Machine names a missing Node registers it again (in `workload`);
/// then any reboot key keeps a host off and none lets an online host on.
fn play_world(management: &FakeKube, workload: &FakeKube, machines: &[(&str, &str, &str)]) {
    for (m, h, n) in machines {
        let on = management
            .get(&BARE_METAL_HOST, "ns", h)
            .and_then(|h| h.pointer("/status/poweredOn").and_then(Value::as_bool))
            == Some(true);
        if on && management.get(&MACHINE, "ns", m).is_some() && workload.get(&NODE, "", n).is_none()
        {
            workload.insert(node_item(n));
        }
    }
    // kubelet on a Node kept under an out-of-service taint: its host on again, it reports
    // Ready anew, after the taint was added.
    for (_, h, n) in machines {
        let on = management
            .get(&BARE_METAL_HOST, "ns", h)
            .and_then(|h| h.pointer("/status/poweredOn").and_then(Value::as_bool))
            == Some(true);
        let added = workload.get(&NODE, "", n).and_then(|node| {
            node["spec"]["taints"]
                .as_array()?
                .iter()
                .find(|t| t["key"] == "node.kubernetes.io/out-of-service")?["timeAdded"]
                .as_str()
                .map(|t| t.parse::<jiff::Timestamp>().unwrap())
        });
        if let (true, Some(added)) = (on, added) {
            let at = (added + jiff::SignedDuration::from_secs(1)).to_string();
            workload.mutate(&NODE, "", n, |node| {
                if node["status"]["conditions"][0]["lastTransitionTime"].as_str()
                    < Some(at.as_str())
                {
                    node["status"]["conditions"] =
                        json!([{"type": "Ready", "status": "True", "lastTransitionTime": at}]);
                }
            });
        }
    }
    for host in management.objects(&BARE_METAL_HOST) {
        let name = host["metadata"]["name"].as_str().unwrap().to_owned();
        let rebooting = host["metadata"]["annotations"]
            .as_object()
            .is_some_and(|a| {
                a.keys()
                    .any(|k| k == "reboot.metal3.io" || k.starts_with("reboot.metal3.io/"))
            });
        let online = host["spec"]["online"].as_bool().unwrap_or(false);
        let on = !rebooting && online;
        if host.pointer("/status/poweredOn") != Some(&json!(on)) {
            management.mutate(&BARE_METAL_HOST, "ns", &name, |o| {
                o["status"]["poweredOn"] = json!(on);
            });
        }
    }
}

/// Every write the server received was conditioned on what the pass read: merge patches
/// with a resourceVersion, deletes with a uid, evictions with the Pod's uid.
fn assert_nothing_written_blind(requests: &[RecordedRequest]) {
    for w in requests.iter().filter(|r| r.method != "GET") {
        // As kube-apiserver's own clients write a query: no empty first parameter (`?&…`).
        assert!(
            !w.query.starts_with('&') && !w.query.contains("&&"),
            "{} {}?{}",
            w.method,
            w.path,
            w.query
        );
        if w.method == "PATCH" {
            assert_eq!(w.query, "fieldManager=autorepair", "{w:?}");
        }
        let body: Value = serde_json::from_str(&w.body)
            .unwrap_or_else(|e| panic!("{} {}: body not JSON ({e}): {}", w.method, w.path, w.body));
        match w.method.as_str() {
            "PATCH" => {
                assert!(
                    w.content_type.starts_with("application/merge-patch+json"),
                    "{w:?}"
                );
                let rv = body.pointer("/metadata/resourceVersion");
                assert!(
                    rv.and_then(Value::as_str).is_some_and(|v| !v.is_empty()),
                    "PATCH {} without a resourceVersion: {}",
                    w.path,
                    w.body
                );
            }
            "DELETE" => {
                let uid = body.pointer("/preconditions/uid").and_then(Value::as_str);
                assert!(uid.is_some_and(|u| !u.is_empty()), "{w:?}");
            }
            // An Event tells the story; it changes nothing the pass read.
            "POST" if w.path.ends_with("/events") => {
                assert_eq!(body["kind"], "Event", "{w:?}");
                assert_eq!(body["source"]["component"], "autorepair", "{w:?}");
            }
            "POST" => {
                assert!(w.path.ends_with("/eviction"), "{w:?}");
                assert_eq!(body["apiVersion"], "policy/v1", "{w:?}");
                let uid = body.pointer("/deleteOptions/preconditions/uid");
                assert!(
                    uid.and_then(Value::as_str).is_some_and(|u| !u.is_empty()),
                    "{w:?}"
                );
            }
            other => panic!("unexpected {other} {}", w.path),
        }
    }
}

fn op_name(op: &Op) -> &'static str {
    match op {
        Op::Drain { .. } => "drain",
        Op::PowerOff { .. } => "power-off",
        Op::DeleteMachine { .. } => "delete-machine",
        Op::DeleteNode { .. } => "delete-node",
        Op::ClearRequest { .. } => "clear-request",
        Op::PowerOn { .. } => "power-on",
        Op::RestoreNode { .. } => "restore-node",
        Op::TaintNode { .. } => "taint-node",
        Op::UntaintNode { .. } => "untaint-node",
        Op::ReportRemediation { .. } => "report-remediation",
        Op::AnswerRequest { .. } => "answer-request",
        Op::HandOver { .. } => "hand-over",
        Op::MarkHostUnhealthy { .. } => "mark-host-unhealthy",
    }
}

// ---------------------------------------------------------------------------------------------
// The design's truth table.

#[test]
fn the_designs_truth_table_row_by_row() {
    for (nr, nra, po, ra, expected) in autorepair::metal3::protocol::TRUTH_TABLE {
        let row = format!("row {nr}{nra}{po}{ra}");
        let kube = served(&one_machine(nr == 1, nra == 1, po == 1, ra == 1));
        let before = seen(&kube);
        let (_, plan) = clean_pass(&mut backend(&kube), NOW);
        let after = seen(&kube);
        let mut done = Vec::new();
        if after.reboot && !before.reboot {
            done.push("add reboot");
        }
        if before.node && !after.node {
            done.push("delete node");
        }
        if before.request && !after.request {
            done.push("remove request");
        }
        if before.reboot && !after.reboot {
            done.push("remove reboot");
        }
        if after.node && !before.node || after.request && !before.request {
            done.push("something the table never does");
        }
        let done = if done.is_empty() {
            vec!["nothing"]
        } else {
            done
        };
        assert_eq!(done, vec![expected], "{row}: {:#?}", plan.targets);
        assert_nothing_written_blind(&kube.requests());
        if expected == "delete node" {
            // The backup went to the Machine before the Node went.
            assert!(
                kube.annotation(&MACHINE, "ns", "m1", "autorepair.io/node-backup")
                    .is_some_and(|b| b.contains("kubernetes.io/hostname")),
                "{row}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A full power cycle over several passes.

#[test]
fn a_requested_power_cycle_runs_to_its_end_and_restores_the_node() {
    let list = Fleet::new()
        .machine(Machine::new("ns", "m1").node("n1").host("h1").requested())
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1").label("role", "storage"))
        .build();
    let kube = served(&list);
    let mut steps = Vec::new();
    for i in 0..10 {
        let now = NOW + 60 * i;
        let before = seen(&kube);
        // A new process every pass: nothing carries over but what is in the server.
        let (_, plan) = clean_pass(&mut backend(&kube), now);
        let after = seen(&kube);
        if before.node && !after.node {
            assert_eq!(
                before.powered_on,
                Some(false),
                "a Node goes only while its host is off"
            );
        }
        for a in plan.actions() {
            match a {
                Action::Repair(r) => steps.push(format!("start {}", r.repair)),
                Action::Advance { op, .. } => steps.push(op_name(op).to_owned()),
                _ => {}
            }
        }
        play_world(&kube, &kube, &[("m1", "h1", "n1")]);
    }
    assert_eq!(
        steps,
        [
            "start power-cycle",
            "delete-node",
            "power-on",
            "clear-request",
            "restore-node"
        ]
    );
    assert_eq!(
        seen(&kube),
        Seen {
            node: true,
            request: false,
            powered_on: Some(true),
            reboot: false
        }
    );
    let node = kube.get(&NODE, "", "n1").unwrap();
    assert_eq!(node["metadata"]["labels"]["role"], "storage", "{node}");
    let m = kube.get(&MACHINE, "ns", "m1").unwrap();
    let annotations = m["metadata"]["annotations"].as_object().unwrap();
    assert!(
        !annotations.contains_key("autorepair.io/node-backup"),
        "{m}"
    );
    assert!(
        annotations.values().any(|v| {
            let v = v.as_str().unwrap_or_default();
            v.starts_with("result:power-cycle:") && v.contains(":success:")
        }),
        "{m}"
    );
    assert!(
        !annotations
            .values()
            .any(|v| v.as_str().is_some_and(|v| v.starts_with("pending:"))),
        "{m}"
    );
    // `kubectl describe` tells the story: the Events on the Machine and on its host (the
    // server lists them by name, which is random: compared in order of reason).
    let story = |kind: &str, name: &str| -> Vec<String> {
        kube.objects(&testsupport::kube::EVENT)
            .iter()
            .filter(|e| e["involvedObject"]["kind"] == kind && e["involvedObject"]["name"] == name)
            .map(|e| {
                format!(
                    "{} {}",
                    e["type"].as_str().unwrap(),
                    e["reason"].as_str().unwrap()
                )
            })
            .collect::<std::collections::BTreeSet<String>>()
            .into_iter()
            .collect::<Vec<String>>()
    };
    assert_eq!(
        story("Machine", "m1"),
        [
            "Normal NodeFenced",
            "Normal PowerCycleStarted",
            "Normal RemediationRequestServed",
            "Normal RemediationSucceeded"
        ]
    );
    assert_eq!(
        story("BareMetalHost", "h1"),
        ["Normal PowerOff", "Normal PowerOn"]
    );
    assert_nothing_written_blind(&kube.requests());
}

// ---------------------------------------------------------------------------------------------
// Kills.

/// Lets `budget` API writes through, then fails every request as if the process had died
/// right there. Shared by the clients of one run.
#[derive(Clone)]
struct Killer {
    budget: Arc<AtomicUsize>,
    dead: Arc<AtomicBool>,
}

impl Killer {
    fn new(budget: usize) -> Self {
        Killer {
            budget: Arc::new(AtomicUsize::new(budget)),
            dead: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Whether a request may go out.
    fn allows(&self, write: bool) -> bool {
        if self.dead.load(Ordering::SeqCst) {
            return false;
        }
        if write {
            let left = self.budget.load(Ordering::SeqCst);
            if left == 0 {
                self.dead.store(true, Ordering::SeqCst);
                return false;
            }
            self.budget.store(left - 1, Ordering::SeqCst);
        }
        true
    }
}

struct Killable<S> {
    inner: S,
    killer: Killer,
}

impl<S> tower::Layer<S> for Killer {
    type Service = Killable<S>;
    fn layer(&self, inner: S) -> Killable<S> {
        Killable {
            inner,
            killer: self.clone(),
        }
    }
}

type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;

impl<S, B> tower::Service<http::Request<kube::client::Body>> for Killable<S>
where
    S: tower::Service<
            http::Request<kube::client::Body>,
            Response = http::Response<B>,
            Error = tower::BoxError,
        >,
    S::Future: Send + 'static,
{
    type Response = http::Response<B>;
    type Error = tower::BoxError;
    type Future = BoxFuture<Result<http::Response<B>, tower::BoxError>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), tower::BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<kube::client::Body>) -> Self::Future {
        if !self.killer.allows(req.method() != http::Method::GET) {
            return Box::pin(async { Err("killed on purpose (test)".into()) });
        }
        Box::pin(self.inner.call(req))
    }
}

/// A backend whose client dies after the killer's budget; its worker runs on `rt`.
fn killable(kube: &FakeKube, rt: &tokio::runtime::Runtime, killer: &Killer) -> KubeBackend {
    let client = {
        let _entered = rt.enter();
        let mut config = kube.config();
        config.default_retry = false;
        kube::client::ClientBuilder::try_from(config)
            .expect("client builder")
            .with_layer(killer)
            .build()
    };
    KubeBackend::from_client(client, kube.url(), Options::default()).expect("backend")
}

/// Counts the times autorepair's reboot key appears on a host: each is a power-off request.
fn count_power_offs(kube: &FakeKube) -> Arc<Mutex<usize>> {
    let count = Arc::new(Mutex::new(0));
    let had = Arc::new(Mutex::new(BTreeMap::<String, bool>::new()));
    let c = count.clone();
    kube.react(&BARE_METAL_HOST, move |host| {
        let name = host["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let has = host["metadata"]["annotations"].get(REBOOT_KEY).is_some();
        let before = had.lock().unwrap().insert(name, has).unwrap_or(false);
        if has && !before {
            *c.lock().unwrap() += 1;
        }
        None
    });
    count
}

/// The brake from any host (rule 8): someone suspends the Machine (`kubectl annotate`, or
/// `autorepair suspend` on another host) while a pass starts its power cycle, between the
/// pending mark and the power-off. The pass halts before the power-off: the host stays on,
/// and the backend names the suspended object for the pass's summary.
#[test]
fn a_suspend_written_elsewhere_while_a_pass_starts_a_repair_stops_it() {
    const SUSPEND: &str = "autorepair.io/suspend";
    for suspend_elsewhere in [false, true] {
        let kube = served(&one_machine(true, true, true, false));
        if suspend_elsewhere {
            kube.react(&MACHINE, |m| {
                let annotations = m["metadata"]["annotations"].as_object()?;
                let pending = annotations
                    .keys()
                    .any(|k| k.starts_with("autorepair.io/repair."));
                if !pending || annotations.contains_key(SUSPEND) {
                    return None;
                }
                let mut m = m.clone();
                m["metadata"]["annotations"][SUSPEND] = "".into();
                Some(m)
            });
        }
        let mut b = backend(&kube);
        let (_, plan, report) = pass(&mut b, NOW);
        assert!(
            plan.targets[0]
                .actions
                .iter()
                .any(|a| matches!(a, Action::Repair(_))),
            "{:#?}",
            plan.targets
        );
        assert_eq!(seen(&kube).reboot, !suspend_elsewhere, "the power-off");
        assert_eq!(report.halted.is_some(), suspend_elsewhere, "{report:?}");
        assert_eq!(
            b.suspended_meanwhile(),
            suspend_elsewhere.then(|| "machine/ns/m1".to_owned())
        );
    }
}

#[test]
fn a_kill_after_any_api_write_never_leaves_the_host_off_nor_cycles_twice() {
    let list = Fleet::new()
        .machine(Machine::new("ns", "m1").node("n1").host("h1").requested())
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1"))
        .build();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    // How many writes a whole cycle makes when nothing dies.
    let writes = {
        let kube = served(&list);
        for i in 0..10 {
            clean_pass(&mut backend(&kube), NOW + 60 * i);
            play_world(&kube, &kube, &[("m1", "h1", "n1")]);
        }
        assert!(!seen(&kube).reboot);
        kube.writes().len()
    };
    assert!(writes >= 8, "a cycle makes {writes} writes");
    for kill_at in 0..=writes {
        let kube = served(&list);
        let power_offs = count_power_offs(&kube);
        // The process dies once, after `kill_at` writes; the next one starts fresh.
        let mut killer = Some(Killer::new(kill_at));
        let mut killed_in = None;
        for i in 0..14 {
            let now = NOW + 60 * i;
            let before = seen(&kube);
            match &killer {
                Some(k) => {
                    let mut b = killable(&kube, &rt, k);
                    // A dead process reports nothing: its errors are not looked at.
                    if let Ok(snap) = b.snapshot() {
                        let plan = plan_of(&snap, now);
                        exec::execute(&plan, &mut b);
                    }
                    if k.dead.load(Ordering::SeqCst) {
                        killed_in = Some(i);
                        killer = None;
                    }
                }
                None => {
                    clean_pass(&mut backend(&kube), now);
                }
            }
            let after = seen(&kube);
            if before.node && !after.node {
                assert_eq!(
                    before.powered_on,
                    Some(false),
                    "killed after {kill_at} writes, pass {i}: a Node went while its host was on"
                );
            }
            play_world(&kube, &kube, &[("m1", "h1", "n1")]);
        }
        assert_eq!(
            killed_in.is_some(),
            kill_at < writes,
            "killed after {kill_at} of {writes} writes"
        );
        assert_eq!(
            seen(&kube),
            Seen {
                node: true,
                request: false,
                powered_on: Some(true),
                reboot: false
            },
            "killed after {kill_at} writes (in pass {killed_in:?})"
        );
        assert_eq!(
            *power_offs.lock().unwrap(),
            1,
            "killed after {kill_at} writes: one power-off only"
        );
        assert_nothing_written_blind(&kube.requests());
    }
}

// ---------------------------------------------------------------------------------------------
// Conflicts.

#[test]
fn a_conflict_is_reported_as_such_and_never_retried() {
    let kube = served(&one_machine(true, false, true, false));
    let mut b = backend(&kube);
    b.snapshot().unwrap();
    kube.clear_requests();
    kube.fault(
        Fault::conflict()
            .on_object(&MACHINE, "ns", "m1")
            .method("PATCH"),
    );
    let machine = ObjectRef::new("machine", "ns/m1");
    let e = b
        .add_marks(
            &machine,
            &["autorepair.io/policy=power-cycle".into()],
            "test",
        )
        .unwrap_err();
    assert!(is_conflict(&e), "{e:?}");
    assert_eq!(transport::http_status(&e), Some(409), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("changed since this pass read it"), "{text}");
    assert!(text.contains(CONFLICT_HINT), "{text}");
    assert!(text.contains(kube.url()), "{text}");
    assert_eq!(kube.writes().len(), 1, "one attempt, no retry");
    assert!(
        kube.annotation(&MACHINE, "ns", "m1", "autorepair.io/policy")
            .is_none()
    );
}

#[test]
fn our_own_writes_do_not_conflict_and_a_newer_value_survives_its_removal() {
    let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let key = format!("autorepair.io/repair.{id}");
    let old = format!("{key}=pending:power-cycle:{NOW}:");
    let new = format!("{key}=pending:power-cycle:{NOW}:power-cycle.{id}");
    let list = Fleet::new()
        .machine(Machine::new("ns", "m1").node("n1").host("h1"))
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1"))
        .build();
    let kube = served(&list);
    let mut b = backend(&kube);
    b.snapshot().unwrap();
    let machine = ObjectRef::new("machine", "ns/m1");
    b.add_marks(&machine, std::slice::from_ref(&old), "r")
        .unwrap();
    b.add_marks(&machine, std::slice::from_ref(&new), "r")
        .unwrap();
    // The pending mark the executor replaces: the key holds the newer value, so it stays.
    b.remove_marks(&machine, std::slice::from_ref(&old), "r")
        .unwrap();
    let value = kube.annotation(&MACHINE, "ns", "m1", &key);
    assert_eq!(value.as_deref(), Some(new.split_once('=').unwrap().1));
    b.remove_marks(&machine, std::slice::from_ref(&new), "r")
        .unwrap();
    assert_eq!(kube.annotation(&MACHINE, "ns", "m1", &key), None);
    let patches: Vec<Value> = kube
        .writes()
        .iter()
        .map(|w| serde_json::from_str(&w.body).unwrap())
        .collect();
    assert_eq!(patches.len(), 3, "{patches:#?}");
    let versions: Vec<u64> = patches
        .iter()
        .map(|p| {
            p["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
}

#[test]
fn a_write_to_an_object_gone_since_the_read_is_no_such_object() {
    let kube = served(&one_machine(true, false, true, false));
    let mut b = backend(&kube);
    b.snapshot().unwrap();
    kube.remove(&MACHINE, "ns", "m1");
    let machine = ObjectRef::new("machine", "ns/m1");
    let e = b
        .add_marks(&machine, &["autorepair.io/policy=drain".into()], "r")
        .unwrap_err();
    assert!(
        matches!(&e, BackendError::NoSuchObject { object } if *object == machine),
        "{e:?}"
    );
}

#[test]
fn a_host_changed_by_someone_else_meets_a_conflict_and_the_next_pass_replans() {
    let kube = served(&one_machine(true, true, true, false));
    // Another client asks for its own reboot just before our power-off reaches the host.
    kube.fault(
        Fault::mutate(|h| {
            h["metadata"]["annotations"]["reboot.metal3.io/other"] = json!("");
        })
        .on_object(&BARE_METAL_HOST, "ns", "h1")
        .method("PATCH"),
    );
    let (_, _, report) = pass(&mut backend(&kube), NOW);
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    let (target, error) = &report.errors[0];
    assert_eq!(target, "ns/m1");
    assert!(
        error.contains("409") && error.contains(CONFLICT_HINT),
        "{error}"
    );
    assert!(
        !seen(&kube).reboot,
        "nothing written blind over the other client's"
    );
    // Re-read, re-planned: the host carries another client's reboot, so it is not started on.
    let (_, plan) = clean_pass(&mut backend(&kube), NOW + 60);
    assert!(
        !plan
            .actions()
            .any(|a| matches!(a, Action::Repair(r) if r.ops.iter().any(|o| matches!(o, Op::PowerOff { .. })))),
        "{:#?}",
        plan.targets
    );
    assert!(!seen(&kube).reboot);
    assert_nothing_written_blind(&kube.requests());
}

#[test]
fn a_conflict_storm_is_reported_and_the_cycle_still_converges() {
    let list = Fleet::new()
        .machine(Machine::new("ns", "m1").node("n1").host("h1").requested())
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1"))
        .build();
    let kube = served(&list);
    let power_offs = count_power_offs(&kube);
    let (mut conflicts, mut errors) = (0, 0);
    for i in 0..18 {
        // For six passes the next PATCH, whatever it is, meets a conflict.
        if i < 6 && kube.pending_faults() == 0 {
            kube.fault(Fault::conflict().method("PATCH"));
            conflicts += 1;
        }
        let (_, _, report) = pass(&mut backend(&kube), NOW + 60 * i);
        for (_, e) in &report.errors {
            assert!(
                e.contains("409") && e.contains(CONFLICT_HINT),
                "pass {i}: {e}"
            );
        }
        errors += report.errors.len();
        play_world(&kube, &kube, &[("m1", "h1", "n1")]);
    }
    assert_eq!(kube.pending_faults(), 0);
    assert!(conflicts >= 3, "the storm lasted");
    // Every conflict was reported, none retried into a success.
    assert_eq!(errors, conflicts);
    assert_eq!(
        seen(&kube),
        Seen {
            node: true,
            request: false,
            powered_on: Some(true),
            reboot: false
        }
    );
    assert_eq!(*power_offs.lock().unwrap(), 1);
    assert_nothing_written_blind(&kube.requests());
}

// ---------------------------------------------------------------------------------------------
// What is read, and from which version.

fn v1beta1(res: Resource) -> Resource {
    Resource {
        versions: &["v1beta1"],
        ..res
    }
}

#[test]
fn a_v1beta1_only_server_is_read_and_written_in_v1beta1() {
    let kube = FakeKube::builder()
        .resources(&[
            v1beta1(MACHINE),
            v1beta1(MACHINE_SET),
            v1beta1(CLUSTER),
            v1beta1(METAL3_MACHINE),
            BARE_METAL_HOST,
            NODE,
        ])
        .start();
    let list = Fleet::new()
        .machine(
            Machine::new("ns", "m1")
                .node("n1")
                .host("h1")
                .requested()
                .owner("MachineSet", "ms1"),
        )
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1"))
        .scope(
            "MachineSet",
            "ns",
            "ms1",
            &[("autorepair.io/policy", "power-cycle")],
        )
        .build();
    for mut item in list["items"].as_array().unwrap().clone() {
        let api = item["apiVersion"].as_str().unwrap().to_owned();
        if let Some(group) = api.strip_suffix("/v1beta2") {
            if item["kind"] == "Machine" {
                testsupport::kube::capi_machine_conversion(&mut item, "v1beta2", "v1beta1");
            }
            item["apiVersion"] = json!(format!("{group}/v1beta1"));
        }
        kube.insert(item);
    }
    assert_eq!(
        kube.get(&MACHINE, "ns", "m1").unwrap()["status"]["nodeRef"]["kind"],
        "Node",
        "stored as a v1beta1 ObjectReference"
    );
    let mut b = backend(&kube);
    let (snap, _) = clean_pass(&mut b, NOW);
    let m = &snap.machines[0];
    assert_eq!(m.node_ref.as_deref(), Some("n1"));
    assert_eq!(m.host.as_deref(), Some("ns/h1"));
    assert_eq!(snap.scopes.len(), 1, "{:?}", snap.scopes);
    assert!(seen(&kube).reboot, "the power cycle started");
    // Discovery's answers are the process's, by server URL: an earlier test's server at this
    // port may have left one naming v1beta2. The pass reads with it, finds it stale and asks
    // again; before that answer it may only have read.
    let requests = kube.requests();
    let asked = requests
        .iter()
        .rposition(|r| r.path == "/apis")
        .unwrap_or(0);
    let stale = requests[..asked].iter().find(|r| r.method != "GET");
    assert!(stale.is_none(), "written before discovery: {stale:?}");
    let capi: Vec<&RecordedRequest> = requests[asked..]
        .iter()
        .filter(|r| r.path.starts_with("/apis/cluster.x-k8s.io/"))
        .collect();
    assert!(!capi.is_empty());
    for r in &capi {
        assert!(
            r.path.starts_with("/apis/cluster.x-k8s.io/v1beta1"),
            "{r:?}"
        );
    }
    assert!(capi.iter().any(|r| r.method == "PATCH"), "{capi:?}");
    assert_nothing_written_blind(&kube.requests());
}

#[test]
fn every_kind_is_read_and_kinds_not_served_are_skipped() {
    let openshift = json!({
        "apiVersion": "machine.openshift.io/v1beta1", "kind": "Machine",
        "metadata": {"name": "os1", "namespace": "ns",
                      "annotations": {"metal3.io/BareMetalHost": "ns/h2"}},
        "status": {"nodeRef": {"kind": "Node", "name": "n2"}},
    });
    let list = Fleet::new()
        .machine(
            Machine::new("ns", "m1")
                .node("n1")
                .host("h1")
                .owner("KubeadmControlPlane", "cp")
                .cluster("c1"),
        )
        .host(Host::new("ns", "h1"))
        .host(Host::new("ns", "h2"))
        .node(Node::new("n1"))
        .node(Node::new("n2"))
        .scope(
            "KubeadmControlPlane",
            "ns",
            "cp",
            &[("autorepair.io/policy", "drain")],
        )
        .scope("MachineDeployment", "ns", "md", &[])
        .scope("Cluster", "ns", "c1", &[("autorepair.io/suspend", "")])
        .item(openshift)
        .build();
    let kube = served(&list);
    let mut b = backend(&kube);
    let snap = b.snapshot().unwrap();
    assert!(snap.problems.is_empty(), "{:?}", snap.problems);
    let mut machines: Vec<(&str, Option<&str>)> = snap
        .machines
        .iter()
        .map(|m| (m.key.as_str(), m.host.as_deref()))
        .collect();
    machines.sort();
    assert_eq!(
        machines,
        [("ns/m1", Some("ns/h1")), ("ns/os1", Some("ns/h2"))]
    );
    let mut scopes: Vec<String> = snap.scopes.iter().map(|s| s.key.clone()).collect();
    scopes.sort();
    assert_eq!(
        scopes,
        [
            "cluster/ns/c1",
            "controlplane/ns/cp",
            "machinedeployment/ns/md"
        ]
    );
    assert_eq!(snap.nodes.len(), 2);
    // A mark on a control plane is written through its own kind's API.
    let cp = ObjectRef::new("controlplane", "ns/cp");
    b.add_marks(&cp, &["autorepair.io/policy=power-cycle".into()], "r")
        .unwrap();
    assert_eq!(
        kube.annotation(&KUBEADM_CONTROL_PLANE, "ns", "cp", "autorepair.io/policy")
            .as_deref(),
        Some("power-cycle")
    );

    // A server with Machines, hosts and Nodes only.
    let bare = FakeKube::builder()
        .resources(&[MACHINE, BARE_METAL_HOST, NODE])
        .start();
    load(
        &bare,
        &Fleet::new()
            .host(Host::new("ns", "h1"))
            .node(Node::new("n1"))
            .build(),
    );
    bare.insert(
        testsupport::kube::machine("m1")
            .namespace("ns")
            .node_ref("n1")
            .annotation("metal3.io/BareMetalHost", "ns/h1")
            .build(),
    );
    let snap = backend(&bare)
        .snapshot()
        .expect("kinds not served are skipped");
    assert_eq!(snap.machines.len(), 1);
    assert_eq!(snap.machines[0].host.as_deref(), Some("ns/h1"));
    assert_eq!(snap.hosts.len(), 1);
    assert!(
        !bare
            .requests()
            .iter()
            .any(|r| r.path.contains("metal3machines") || r.path.contains("machinesets")),
        "no request for kinds discovery did not find"
    );
}

#[test]
fn discovery_is_asked_once_per_process_and_again_when_a_kind_it_found_goes() {
    // `run --loop` makes a new backend every pass: discovery is not asked again for each.
    let kube = served(&one_machine(true, false, true, false));
    let discoveries = || kube.requests().iter().filter(|r| r.path == "/apis").count();
    for _ in 0..3 {
        let mut b = backend(&kube);
        b.snapshot().unwrap();
        b.snapshot().unwrap();
    }
    // At most once: the cache is the process's, by server URL, and an earlier test's fake
    // server may have had this port (and been asked) already.
    let asked = discoveries();
    assert!(asked <= 1, "{asked}");
    // Machines not served any more (the CRD went, or another server answers at that
    // address): the pass asks discovery again and reads with its answer, missing nothing.
    kube.fault(
        testsupport::kube::Fault::status(404)
            .on_collection(&testsupport::kube::MACHINE, "")
            .method("GET"),
    );
    let snap = backend(&kube).snapshot().unwrap();
    assert_eq!(discoveries(), asked + 1);
    assert_eq!(snap.machines.len(), 1, "{snap:#?}");
    backend(&kube).snapshot().unwrap();
    assert_eq!(discoveries(), asked + 1);
}

#[test]
fn a_server_answering_nonsense_is_a_clear_error() {
    let nonsense = || ApiError::new(200, "", "this is not a list", Value::Null);
    let kube = served(&one_machine(true, false, true, false));
    kube.fault(Fault::error(nonsense()).on_collection(&BARE_METAL_HOST, ""));
    let e = backend(&kube).snapshot().unwrap_err().to_string();
    assert!(e.contains(kube.url()), "{e}");
    assert!(e.contains("baremetalhosts.metal3.io"), "{e}");
    assert!(e.contains("not what a Kubernetes API server sends"), "{e}");

    // Discovery is asked once per process and server: a server not asked yet.
    let fresh = served(&one_machine(true, false, true, false));
    fresh.fault(Fault::error(nonsense()).on_path("/apis"));
    let e = backend(&fresh).snapshot().unwrap_err().to_string();
    assert!(e.contains(fresh.url()) && e.contains("discovery"), "{e}");

    // An error status from a list names the server and the resource too.
    kube.fault(Fault::status(403).on_collection(&METAL3_MACHINE, ""));
    let e = backend(&kube).snapshot().unwrap_err();
    assert_eq!(transport::http_status(&e), Some(403), "{e:?}");
    let e = e.to_string();
    assert!(
        e.contains("metal3machines.infrastructure.cluster.x-k8s.io"),
        "{e}"
    );
}

#[test]
fn nothing_listens_is_a_refused_connection() {
    let kube = FakeKube::start();
    let config = kube.config();
    drop(kube);
    let e = KubeBackend::from_config(config, Options::default())
        .unwrap()
        .snapshot()
        .unwrap_err();
    assert!(
        matches!(TransportError::of(&e), Some(TransportError::Refused { .. })),
        "{e:?}"
    );
    assert!(transport::is_transient(&e));
}

#[test]
fn a_certificate_not_vouched_for_is_a_tls_error() {
    let kube = FakeKube::builder().tls().start();
    let mut config = kube.config();
    // Only the system's roots, which never vouch for the test certificate.
    config.root_cert = None;
    let e = KubeBackend::from_config(config, Options::default())
        .unwrap()
        .snapshot()
        .unwrap_err();
    assert!(
        matches!(TransportError::of(&e), Some(TransportError::Tls { .. })),
        "{e:?}"
    );
    assert!(!transport::is_transient(&e));
    assert!(e.to_string().contains(kube.url()), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Drain.

fn pod(name: &str, node: &str) -> testsupport::kube::Obj {
    testsupport::kube::object(&POD, name)
        .namespace("ns")
        .set("/spec/nodeName", node)
        .set("/status/phase", "Running")
}

fn accept_eviction(kube: &FakeKube, pod: &str, code: u16) {
    let message = if code == 429 {
        "Cannot evict pod as it would violate the pod's disruption budget."
    } else {
        ""
    };
    kube.fault(
        Fault::error(ApiError::new(code, "", message, Value::Null))
            .on_path(&format!("/api/v1/namespaces/ns/pods/{pod}/eviction"))
            .method("POST"),
    );
}

#[test]
fn drain_cordons_then_evicts_all_but_daemonset_and_mirror_pods() {
    let list = Fleet::new()
        .machine(Machine::new("ns", "m1").node("n1").host("h1"))
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1"))
        .node(Node::new("n2"))
        .build();
    let kube = served(&list);
    kube.insert(
        pod("web", "n1")
            .owner("apps/v1", "ReplicaSet", "web-1", "u-rs", true)
            .build(),
    );
    kube.insert(pod("guarded", "n1").build());
    kube.insert(
        pod("agent", "n1")
            .owner("apps/v1", "DaemonSet", "agent", "u-ds", true)
            .build(),
    );
    kube.insert(
        pod("static", "n1")
            .annotation("kubernetes.io/config.mirror", "abc")
            .build(),
    );
    kube.insert(pod("done", "n1").set("/status/phase", "Succeeded").build());
    kube.insert(pod("elsewhere", "n2").build());
    // The test scripts two answers: `web` granted, `guarded` refused by a budget. The fake
    // itself answers for `done` (finished: deleted whatever the budgets say).
    accept_eviction(&kube, "web", 201);
    accept_eviction(&kube, "guarded", 429);
    let mut b = backend(&kube);
    b.snapshot().unwrap();
    kube.clear_requests();
    let repair = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let id = b
        .submit(
            "ns/m1",
            &Op::Drain { node: "n1".into() },
            &format!("autorepair:{repair}"),
            None,
        )
        .expect("a refused eviction does not fail the drain");
    assert_eq!(
        id,
        OpId {
            step: Step::Drain,
            repair: repair.into()
        }
    );
    assert_eq!(
        kube.get(&NODE, "", "n1").unwrap()["spec"]["unschedulable"],
        true
    );
    let requests = kube.requests();
    let evicted: Vec<&str> = requests
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| r.path.as_str())
        .collect();
    assert_eq!(
        evicted,
        [
            "/api/v1/namespaces/ns/pods/done/eviction",
            "/api/v1/namespaces/ns/pods/guarded/eviction",
            "/api/v1/namespaces/ns/pods/web/eviction"
        ]
    );
    // The cordon comes first, then the Pods are listed by Node.
    let first_pod_list = requests
        .iter()
        .position(|r| r.path == "/api/v1/pods")
        .expect("pods listed");
    let cordon = requests.iter().position(|r| r.method == "PATCH").unwrap();
    assert!(cordon < first_pod_list);
    assert!(
        requests[first_pod_list]
            .query
            .contains("fieldSelector=spec.nodeName%3Dn1"),
        "{:?}",
        requests[first_pod_list]
    );
    assert_eq!(kube.pending_faults(), 0);
    assert_nothing_written_blind(&requests);

    // The cordoned Node's Pods are read with the snapshot, to judge the drain by.
    let snap = b.snapshot().unwrap();
    let mut pods: Vec<(&str, bool)> = snap
        .pods
        .iter()
        .map(|p| (p.key.as_str(), p.stays))
        .collect();
    pods.sort();
    assert_eq!(
        pods,
        [
            ("ns/agent", true),
            ("ns/guarded", false),
            ("ns/static", true),
            ("ns/web", false)
        ]
    );
    // Once cordoned, it is not patched again.
    kube.clear_requests();
    accept_eviction(&kube, "web", 201);
    accept_eviction(&kube, "guarded", 201);
    b.submit(
        "ns/m1",
        &Op::Drain { node: "n1".into() },
        &format!("autorepair:{repair}"),
        None,
    )
    .unwrap();
    assert!(!kube.requests().iter().any(|r| r.method == "PATCH"));
}

// ---------------------------------------------------------------------------------------------
// Workload clusters.

const FAKE_CA: &str = testsupport::CA_PEM;

fn kubeconfig(server: &str) -> String {
    use base64::Engine;
    let ca = base64::engine::general_purpose::STANDARD.encode(FAKE_CA);
    format!(
        "apiVersion: v1
kind: Config
current-context: w
contexts:
- name: w
  context: {{cluster: w, user: u}}
clusters:
- name: w
  cluster: {{server: '{server}', certificate-authority-data: {ca}}}
users:
- name: u
  user: {{token: not-a-real-token}}
"
    )
}

fn kubeconfig_secret(cluster: &str, value: &str) -> Value {
    testsupport::kube::secret(&format!("{cluster}-kubeconfig"))
        .namespace("ns")
        .string_data("value", value)
        .build()
}

#[test]
fn nodes_are_read_and_fenced_in_the_workload_cluster_of_the_kubeconfig_secret() {
    let workload = FakeKube::builder().tls().start();
    assert!(workload.url().starts_with("https://"));
    workload.insert(node_item("n1"));
    let list = Fleet::new()
        .machine(
            Machine::new("ns", "m1")
                .node("n1")
                .host("h1")
                .cluster("c1")
                .requested(),
        )
        .host(Host::new("ns", "h1"))
        // c2 has no kubeconfig Secret; c3's refers to a plain-http server.
        .machine(
            Machine::new("ns", "m2")
                .node("n2")
                .host("h2")
                .cluster("c2")
                .annotate("autorepair.io/policy", "power-cycle"),
        )
        .host(Host::new("ns", "h2"))
        .machine(
            Machine::new("ns", "m3")
                .node("n3")
                .host("h3")
                .cluster("c3")
                .annotate("autorepair.io/policy", "power-cycle"),
        )
        .host(Host::new("ns", "h3"))
        .build();
    let management = served(&list);
    management.insert(kubeconfig_secret("c1", &kubeconfig(workload.url())));
    management.insert(kubeconfig_secret("c3", &kubeconfig("http://127.0.0.1:1")));
    let options = Options {
        workload: Workload::ClusterSecrets,
        ..Options::default()
    };
    let mut steps = Vec::new();
    let mut b = KubeBackend::from_config(management.config(), options.clone()).unwrap();
    for i in 0..10 {
        let (snap, plan) = clean_pass(&mut b, NOW + 60 * i);
        let problems: Vec<&(String, String)> = snap.problems.iter().collect();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].0.contains("ns/m2") && problems[0].1.contains("no Secret ns/c2-kubeconfig"),
            "{problems:?}"
        );
        assert!(
            problems[1].0.contains("ns/m3") && problems[1].1.contains("not https"),
            "{problems:?}"
        );
        for a in plan.actions() {
            match a {
                Action::Repair(r) => steps.push(format!("start {} on {}", r.repair, r.target)),
                Action::Advance { op, .. } => steps.push(op_name(op).to_owned()),
                _ => {}
            }
        }
        play_world(&management, &workload, &[("m1", "h1", "n1")]);
    }
    assert_eq!(
        steps,
        [
            "start power-cycle on ns/m1",
            "delete-node",
            "power-on",
            "clear-request",
            "restore-node"
        ],
        "m2 and m3, whose Nodes cannot be read, are not judged on them"
    );
    assert_eq!(
        seen_in(&management, &workload),
        Seen {
            node: true,
            request: false,
            powered_on: Some(true),
            reboot: false
        }
    );
    for host in ["h2", "h3"] {
        assert!(
            management
                .annotation(&BARE_METAL_HOST, "ns", host, REBOOT_KEY)
                .is_none()
        );
    }
    assert!(
        workload
            .writes()
            .iter()
            .any(|w| w.method == "DELETE" && w.path == "/api/v1/nodes/n1"),
        "the Node was deleted in the workload cluster"
    );
    assert!(
        !management
            .requests()
            .iter()
            .any(|r| r.path.contains("/nodes")),
        "no Node is read or written in the management cluster"
    );
    assert_nothing_written_blind(&management.requests());
    assert_nothing_written_blind(&workload.requests());
    // One client for the pass's ten reads of an unchanged Secret: no new TLS session each.
    let secret_reads = management
        .requests()
        .iter()
        .filter(|r| r.path == "/api/v1/namespaces/ns/secrets/c1-kubeconfig")
        .count();
    assert_eq!(secret_reads, 10);
    // The Secret never reaches an error message.
    let e = format!("{:?}", b.snapshot().unwrap().problems);
    assert!(
        !e.contains("not-a-real-token") && !e.contains("BEGIN CERTIFICATE"),
        "{e}"
    );
}

#[test]
fn an_unreachable_workload_cluster_powers_a_fenced_host_back_on_instead_of_waiting() {
    // The host is off under our reboot key, the request is there and the Node named by the
    // Machine exists; but the workload cluster cannot be read (its control plane may be the
    // very host that is off).
    let list = Fleet::new()
        .machine(
            Machine::new("ns", "m1")
                .node("n1")
                .host("h1")
                .cluster("c1")
                .requested(),
        )
        .host(Host::new("ns", "h1").powered(false).rebooting())
        .build();
    let management = served(&list);
    let options = Options {
        workload: Workload::ClusterSecrets,
        ..Options::default()
    };
    let mut b = KubeBackend::from_config(management.config(), options).unwrap();
    for i in 0..3 {
        clean_pass(&mut b, NOW + 60 * i);
    }
    let h1 = management.get(&BARE_METAL_HOST, "ns", "h1").unwrap();
    assert!(
        h1["metadata"]["annotations"].get(REBOOT_KEY).is_none(),
        "{h1}"
    );
    assert!(
        management
            .annotation(&MACHINE, "ns", "m1", REQUEST_KEY)
            .is_some(),
        "the request stays until the power cycle is seen done (the host on, the Node back)"
    );
}

// ---------------------------------------------------------------------------------------------
// Scale.

/// How long the fake server alone takes to answer the lists a pass makes of the four big
/// kinds (a plain HTTP client, no kube, no parsing beyond the continue token), for comparison.
fn plain_lists(kube: &FakeKube, page: u32) -> std::time::Duration {
    let http = reqwest::blocking::Client::new();
    let t = std::time::Instant::now();
    for path in [
        "/apis/cluster.x-k8s.io/v1beta2/machines",
        "/apis/infrastructure.cluster.x-k8s.io/v1beta2/metal3machines",
        "/apis/metal3.io/v1alpha1/baremetalhosts",
        "/api/v1/nodes",
    ] {
        let mut token = String::new();
        loop {
            let url = format!("{}{path}?limit={page}&continue={token}", kube.url());
            let body = http.get(&url).send().unwrap().text().unwrap();
            let at = body.find("\"continue\":\"").map(|i| i + 12);
            token = at.map_or_else(String::new, |i| {
                body[i..].split('"').next().unwrap_or_default().to_owned()
            });
            if token.is_empty() {
                break;
            }
        }
    }
    t.elapsed()
}

/// `cargo test --test it -- --ignored --nocapture metal3_kube::five_thousand` (`PAGE=n` for
/// another page size than 500). Prints the times; the fake server's own share is printed
/// next to them, as it depends on the machine's load as much as the backend does.
#[test]
#[ignore = "a measurement: run by hand"]
fn five_thousand_machines_in_one_pass() {
    const N: usize = 5000;
    let mut fleet = Fleet::new().scope(
        "MachineSet",
        "ns",
        "ms",
        &[("autorepair.io/policy", "power-cycle")],
    );
    for i in 0..N {
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
    let list = fleet.build();
    let kube = server();
    load(&kube, &list);
    let page_size = std::env::var("PAGE").map_or(500, |p| p.parse().expect("PAGE"));
    let options = Options {
        page_size,
        ..Options::default()
    };
    let mut b = KubeBackend::from_config(kube.config(), options).unwrap();
    for round in 0..3 {
        let t = std::time::Instant::now();
        let snap = b.snapshot().unwrap();
        let read = t.elapsed();
        let plan = plan_of(&snap, NOW);
        let report = exec::execute(&plan, &mut b);
        let total = t.elapsed();
        assert_eq!(snap.machines.len(), N);
        assert_eq!(snap.hosts.len(), N);
        assert_eq!(snap.nodes.len(), N);
        assert!(report.errors.is_empty());
        let server = plain_lists(&kube, page_size);
        eprintln!(
            "pass {round}: {total:?} (snapshot {read:?}); the fake server alone answers the same lists in {server:?}"
        );
    }
}

/// `fencing = "out-of-service-taint"`: the Node is tainted (not deleted) once its host is seen
/// off, through a read of its taints and a patch conditioned on it; the taint goes once the
/// host is on and the Node Ready; a taint someone else added stays.
#[test]
fn the_out_of_service_taint_fences_without_deleting_the_node() {
    let settings = Settings {
        fencing: metal3::Fencing::OutOfServiceTaint,
        ..Settings::default()
    };
    let kube = served(&one_machine(true, true, false, true));
    // The power cycle under way, as the engine recorded it when it started.
    kube.mutate(&MACHINE, "ns", "m1", |m| {
        m["metadata"]["annotations"][format!("autorepair.io/repair.{REPAIR}")] = json!(format!(
            "pending:power-cycle:{}:power-cycle.{REPAIR}",
            NOW - 60
        ));
    });
    // Someone's own NoSchedule taint on the Node survives both patches.
    kube.mutate(&NODE, "", "n1", |n| {
        n["spec"]["taints"] = json!([{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]);
    });
    let taints = |kube: &FakeKube| -> Vec<String> {
        kube.get(&NODE, "", "n1").unwrap()["spec"]["taints"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|t| {
                format!(
                    "{}={}:{}",
                    t["key"].as_str().unwrap(),
                    t["value"].as_str().unwrap_or(""),
                    t["effect"].as_str().unwrap()
                )
            })
            .collect()
    };
    let mut steps = Vec::new();
    for i in 0..6 {
        let mut b = backend(&kube);
        let snap = b.snapshot().unwrap();
        let plan = metal3::plan(&snap, &settings, NOW + 60 * i, &Limits::default(), 7);
        for a in plan.actions() {
            if let Action::Advance { op, .. } = a {
                steps.push(op_name(op));
            }
        }
        let report = exec::execute(&plan, &mut b);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        if i == 0 {
            assert_eq!(
                taints(&kube),
                [
                    "dedicated=db:NoSchedule",
                    "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"
                ]
            );
            assert_eq!(
                kube.annotation(&MACHINE, "ns", "m1", "autorepair.io/node-tainted")
                    .as_deref(),
                Some("n1")
            );
        }
        play_world(&kube, &kube, &[("m1", "h1", "n1")]);
    }
    assert_eq!(
        steps,
        ["taint-node", "power-on", "clear-request", "untaint-node"]
    );
    assert!(
        kube.get(&NODE, "", "n1").is_some(),
        "the Node was never deleted"
    );
    assert_eq!(taints(&kube), ["dedicated=db:NoSchedule"]);
    assert_eq!(
        kube.annotation(&MACHINE, "ns", "m1", "autorepair.io/node-tainted"),
        None
    );
    assert_nothing_written_blind(&kube.requests());
}

/// Out of service, the host powers on only once nothing of its Node is left to settle, as
/// CAPM3 waits: no Pod bound to it terminating, no VolumeAttachment naming it. Pods and
/// VolumeAttachments that cannot be read keep it off too, and the pass says why.
#[test]
fn out_of_service_fencing_waits_for_terminating_pods_and_volume_attachments() {
    use testsupport::kube::{Fault, VOLUME_ATTACHMENT, object, pod};
    let settings = Settings {
        fencing: metal3::Fencing::OutOfServiceTaint,
        ..Settings::default()
    };
    let kube = served(&one_machine(true, true, false, true));
    kube.mutate(&MACHINE, "ns", "m1", |m| {
        m["metadata"]["annotations"][format!("autorepair.io/repair.{REPAIR}")] = json!(format!(
            "pending:power-cycle:{}:power-cycle.{REPAIR}",
            NOW - 60
        ));
    });
    let step = |i: i64| -> (Snapshot, Vec<&'static str>, String) {
        let mut b = backend(&kube);
        let snap = b.snapshot().unwrap();
        let plan = metal3::plan(&snap, &settings, NOW + 60 * i, &Limits::default(), 7);
        let ops = plan
            .actions()
            .filter_map(|a| match a {
                Action::Advance { op, .. } => Some(op_name(op)),
                _ => None,
            })
            .collect();
        let said = format!("{:?}", plan.targets);
        let report = exec::execute(&plan, &mut b);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        (snap, ops, said)
    };
    assert_eq!(step(0).1, ["taint-node"]);
    // What the taint leaves behind: a Pod being deleted, a volume still attached; and, on
    // another Node, a volume that is none of this host's business.
    kube.insert(
        pod("p1")
            .namespace("default")
            .set("/spec/nodeName", "n1")
            .finalizer("example.com/slow")
            .build(),
    );
    // Deleted, held by its finalizer (a create never takes a deletionTimestamp).
    kube.delete(&POD, "default", "p1").unwrap();
    for (name, node) in [("va1", "n1"), ("va2", "n9")] {
        kube.insert(
            object(&VOLUME_ATTACHMENT, name)
                .set("/spec/nodeName", node)
                .set("/spec/attacher", "csi.example.com")
                .build(),
        );
    }
    let (_, ops, said) = step(1);
    assert!(ops.is_empty(), "{ops:?}");
    assert!(
        said.contains("Pods terminating: default/p1") && said.contains("VolumeAttachments: va1"),
        "{said}"
    );
    assert!(!said.contains("va2"), "{said}");
    kube.remove(&POD, "default", "p1");
    let (_, ops, said) = step(2);
    assert!(ops.is_empty(), "{ops:?}");
    assert!(!said.contains("p1") && said.contains("va1"), "{said}");
    // Gone, but unreadable: still off.
    kube.remove(&VOLUME_ATTACHMENT, "", "va1");
    kube.fault(
        Fault::status(403)
            .on_collection(&VOLUME_ATTACHMENT, "")
            .times(1),
    );
    let (snap, ops, said) = step(3);
    assert!(ops.is_empty(), "{ops:?}");
    assert!(snap.fence_unknown.contains("n1"), "{:?}", snap.problems);
    assert!(said.contains("could not be read"), "{said}");
    assert_eq!(step(4).1, ["power-on"]);
    assert_eq!(
        seen(&kube).powered_on,
        Some(false),
        "(the world powers it on)"
    );
}

#[test]
fn a_taint_someone_adds_after_the_read_is_never_claimed_nor_removed() {
    let settings = Settings {
        fencing: metal3::Fencing::OutOfServiceTaint,
        ..Settings::default()
    };
    let kube = served(&one_machine(true, true, false, true));
    let mut b = backend(&kube);
    let snap = b.snapshot().unwrap();
    let plan = metal3::plan(&snap, &settings, NOW, &Limits::default(), 7);
    assert!(
        plan.actions().any(|a| matches!(
            a,
            Action::Advance {
                op: Op::TaintNode { .. },
                ..
            }
        )),
        "{:#?}",
        plan.targets
    );
    // Someone else fences the Node between the read and the write.
    kube.mutate(&NODE, "", "n1", |n| {
        n["spec"]["taints"] = json!([{
            "key": "node.kubernetes.io/out-of-service",
            "value": "nodeshutdown",
            "effect": "NoExecute",
            "timeAdded": "2026-01-01T00:00:00Z"
        }]);
    });
    let report = exec::execute(&plan, &mut b);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(
        kube.annotation(&MACHINE, "ns", "m1", "autorepair.io/node-tainted"),
        None,
        "someone else's taint is not recorded as ours"
    );
    // The power cycle goes on (the Node counts as fenced) and ends; their taint stays.
    for i in 1..6 {
        let mut b = backend(&kube);
        let snap = b.snapshot().unwrap();
        let plan = metal3::plan(&snap, &settings, NOW + 60 * i, &Limits::default(), 7);
        let report = exec::execute(&plan, &mut b);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        play_world(&kube, &kube, &[("m1", "h1", "n1")]);
    }
    assert_eq!(seen(&kube).powered_on, Some(true));
    assert_eq!(
        kube.get(&NODE, "", "n1").unwrap()["spec"]["taints"][0]["timeAdded"],
        "2026-01-01T00:00:00Z",
        "their taint is still there"
    );
}

#[test]
fn an_unreadable_workload_cluster_never_makes_a_taint_forgotten() {
    // autorepair tainted n1 (recorded on m1); the host is back on, the Node Ready since.
    let workload = FakeKube::builder().tls().start();
    let mut node = node_item("n1");
    node["spec"]["taints"] = json!([{
        "key": "node.kubernetes.io/out-of-service",
        "value": "nodeshutdown",
        "effect": "NoExecute",
        "timeAdded": "2026-01-01T00:00:00Z"
    }]);
    node["status"]["conditions"] =
        json!([{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T01:00:00Z"}]);
    workload.insert(node);
    let list = Fleet::new()
        .machine(
            Machine::new("ns", "m1")
                .node("n1")
                .host("h1")
                .cluster("c1")
                .annotate("autorepair.io/node-tainted", "n1"),
        )
        .host(Host::new("ns", "h1"))
        .build();
    let management = served(&list);
    let settings = Settings {
        fencing: metal3::Fencing::OutOfServiceTaint,
        ..Settings::default()
    };
    let options = Options {
        workload: Workload::ClusterSecrets,
        ..Options::default()
    };
    let mut b = KubeBackend::from_config(management.config(), options).unwrap();
    let tainted = |w: &FakeKube| {
        w.get(&NODE, "", "n1").unwrap()["spec"]["taints"]
            .as_array()
            .is_some_and(|ts| {
                ts.iter()
                    .any(|t| t["key"] == "node.kubernetes.io/out-of-service")
            })
    };
    let recorded = |m: &FakeKube| {
        m.annotation(&MACHINE, "ns", "m1", "autorepair.io/node-tainted")
            .is_some()
    };
    // No kubeconfig Secret yet: the Node cannot be looked at. Unknown, not gone.
    for i in 0..2 {
        let snap = b.snapshot().unwrap();
        assert!(snap.nodes_unknown.contains("ns/m1"), "{:?}", snap.problems);
        let plan = metal3::plan(&snap, &settings, NOW + 60 * i, &Limits::default(), 7);
        let report = exec::execute(&plan, &mut b);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        assert!(recorded(&management), "pass {i}: the record stays");
        assert!(tainted(&workload));
    }
    // Readable again: the taint autorepair added goes, then its record.
    management.insert(kubeconfig_secret("c1", &kubeconfig(workload.url())));
    let snap = b.snapshot().unwrap();
    assert!(snap.nodes_unknown.is_empty(), "{:?}", snap.problems);
    let plan = metal3::plan(&snap, &settings, NOW + 180, &Limits::default(), 7);
    let report = exec::execute(&plan, &mut b);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(!tainted(&workload), "the taint autorepair added is removed");
    assert!(!recorded(&management));
}

#[test]
fn a_guarded_drain_stops_between_two_evictions() {
    let list = Fleet::new()
        .machine(Machine::new("ns", "m1").node("n1").host("h1"))
        .host(Host::new("ns", "h1"))
        .node(Node::new("n1"))
        .build();
    let kube = served(&list);
    kube.mutate(&NODE, "", "n1", |n| {
        n["spec"]["unschedulable"] = json!(true)
    });
    for i in 0..5 {
        kube.insert(
            pod(&format!("web-{i}"), "n1")
                .owner("apps/v1", "ReplicaSet", "web", "u-rs", true)
                .build(),
        );
    }
    let mut b = backend(&kube);
    b.snapshot().unwrap();
    // The lease is lost (or a stop signal comes) after two writes.
    let asked = Arc::new(AtomicUsize::new(0));
    let counted = asked.clone();
    b.guard_writes(Arc::new(move || {
        if counted.fetch_add(1, Ordering::SeqCst) < 2 {
            Ok(None)
        } else {
            Err(BackendError::Halted("the lease is lost".into()))
        }
    }));
    kube.clear_requests();
    let err = b
        .advance(
            &ObjectRef::new("node", "n1"),
            &Op::Drain { node: "n1".into() },
            "autorepair:0f8fad5b-d9cb-469f-a165-70867728950e",
        )
        .unwrap_err();
    assert!(matches!(err, BackendError::Halted(_)), "{err}");
    let evictions = kube
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/eviction"))
        .count();
    assert_eq!(evictions, 2, "each eviction asked the guard first");
    assert_eq!(kube.objects(&POD).len(), 3);
    // Every other write asks it too: a patch is refused before it is sent.
    kube.clear_requests();
    let err = b
        .add_marks(
            &ObjectRef::new("machine", "ns/m1"),
            &["autorepair.io/policy=power-cycle".into()],
            "",
        )
        .unwrap_err();
    assert!(matches!(err, BackendError::Halted(_)), "{err}");
    assert!(kube.writes().is_empty());
}

/// Cluster API's marks through the live backend: a paused Cluster (`spec.paused`, read from
/// the whole Cluster) or a Machine's skip-remediation holds a requested power cycle back, and
/// `explain`'s notes name the mark; lifted, the cycle starts.
#[test]
fn cluster_api_pauses_and_skips_hold_a_machine_back_on_a_live_cluster() {
    let cluster = |paused: bool| {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": "c1", "namespace": "ns"},
            "spec": {"paused": paused},
        })
    };
    let cases = [
        (true, None, "spec.paused"),
        (
            false,
            Some("cluster.x-k8s.io/skip-remediation"),
            "skip-remediation",
        ),
        (
            false,
            Some("cluster.x-k8s.io/paused"),
            "cluster.x-k8s.io/paused",
        ),
    ];
    for (paused, mark, named) in cases {
        let mut m = Machine::new("ns", "m1")
            .node("n1")
            .host("h1")
            .cluster("c1")
            .requested();
        if let Some(k) = mark {
            m = m.annotate(k, "");
        }
        let list = Fleet::new()
            .machine(m)
            .host(Host::new("ns", "h1"))
            .node(Node::new("n1"))
            .item(cluster(paused))
            .build();
        let kube = served(&list);
        let (_, plan) = clean_pass(&mut backend(&kube), NOW);
        assert!(!seen(&kube).reboot, "{named}: held back");
        let notes = format!("{:?}", plan.targets[0].notes);
        assert!(
            notes.contains("Cluster API holds it back") && notes.contains(named),
            "{notes}"
        );
        assert!(kube.writes().is_empty(), "{named}: {:?}", kube.writes());
        // Lifted: the next pass starts the power cycle.
        match mark {
            Some(k) => {
                kube.mutate(&MACHINE, "ns", "m1", |m| {
                    m["metadata"]["annotations"]
                        .as_object_mut()
                        .unwrap()
                        .remove(k);
                });
            }
            None => {
                kube.mutate(&CLUSTER, "ns", "c1", |c| c["spec"]["paused"] = json!(false));
            }
        }
        clean_pass(&mut backend(&kube), NOW + 60);
        assert!(seen(&kube).reboot, "{named}: started once lifted");
    }
}
