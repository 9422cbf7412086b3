//! The world's documents: the objects file's items and how they are edited, rendering a
//! snapshot as the objects the backend reads, and generating synthetic fleets.

use super::*;
use crate::engine::sim::{self, DrawnPolicy};

pub(super) fn items(file: &ObjectsFile) -> &[Value] {
    file.list()["items"].as_array().map_or(&[], Vec::as_slice)
}

pub(super) fn cached<'a>(snap: &'a OnceCell<Snapshot>, file: &ObjectsFile) -> &'a Snapshot {
    snap.get_or_init(|| Snapshot::from_items(items(file)))
}

pub(super) fn rfc3339(t: i64) -> String {
    jiff::Timestamp::from_second(t)
        .expect("scenario clocks are valid times")
        .to_string()
}

/// Whether the item is the object named `key` (`NAMESPACE/NAME`, or `NAME` for a Node).
pub(super) fn is(item: &Value, kind: &str, key: &str) -> bool {
    if item["kind"] != kind {
        return false;
    }
    let name = item["metadata"]["name"].as_str().unwrap_or("");
    match key.split_once('/') {
        Some((ns, n)) => item["metadata"]["namespace"] == ns && name == n,
        None => name == key,
    }
}

pub(super) fn annotations(item: &mut Value) -> &mut Map<String, Value> {
    let meta = &mut item["metadata"];
    if !meta["annotations"].is_object() {
        meta["annotations"] = json!({});
    }
    meta["annotations"].as_object_mut().expect("made an object")
}

pub(super) fn set_ready(node: &mut Value, ready: bool, now: i64) {
    node["status"]["conditions"] = json!([{
        "type": "Ready",
        "status": if ready { "True" } else { "Unknown" },
        "lastTransitionTime": rfc3339(now),
    }]);
}

pub(super) fn scope_kind_name(kind: &str) -> &'static str {
    match kind {
        kind::MACHINE_SET => "MachineSet",
        kind::MACHINE_DEPLOYMENT => "MachineDeployment",
        kind::CONTROL_PLANE => "KubeadmControlPlane",
        _ => "Cluster",
    }
}

pub(super) fn name_part(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

pub(super) fn with_marks(
    mut annotations: Map<String, Value>,
    marks: &[String],
) -> Map<String, Value> {
    for m in marks {
        let (k, v) = crate::metal3::marks::split(m);
        annotations.insert(k.to_owned(), json!(v));
    }
    annotations
}

/// The objects as the API server would list them, from a snapshot: what the watcher reads of
/// them comes back the same ([`Snapshot::from_items`]).
pub fn render(snap: &Snapshot) -> Vec<Value> {
    let mut out = Vec::new();
    for m in &snap.machines {
        let mut a = Map::new();
        if m.requested {
            a.insert(REQUEST_KEY.into(), json!(""));
        }
        // Cluster API's own holds on the Machine (a paused Cluster is the Cluster's).
        for key in [SKIP_REMEDIATION_KEY, CAPI_PAUSED_KEY] {
            if m.held.as_deref().is_some_and(|why| why.contains(key)) {
                a.insert(key.into(), json!(""));
            }
        }
        if let Some(b) = &m.node_backup {
            a.insert(NODE_BACKUP_KEY.into(), json!(b));
        }
        if let Some(n) = &m.node_tainted {
            a.insert(NODE_TAINTED_KEY.into(), json!(n));
        }
        let m3m = format!("{}-m3m", m.name);
        let mut item = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": "Machine",
            "metadata": {
                "name": m.name, "namespace": m.namespace,
                "annotations": with_marks(a, &m.marks), "labels": {},
            },
            "spec": {"infrastructureRef": {
                "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "Metal3Machine", "name": m3m,
            }},
            "status": {},
        });
        if let Some(c) = m.created {
            item["metadata"]["creationTimestamp"] = json!(rfc3339(c));
        }
        if let Some(c) = &m.cluster {
            item["metadata"]["labels"][CLUSTER_NAME_LABEL] = json!(c);
            item["spec"]["clusterName"] = json!(c);
        }
        if let Some(z) = &m.failure_domain {
            item["spec"]["failureDomain"] = json!(z);
        }
        if let Some(n) = &m.node_ref {
            item["status"]["nodeRef"] = json!({"name": n});
        }
        if let Some(o) = &m.owner {
            item["metadata"]["ownerReferences"] = json!([{
                "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": scope_kind_name(&o.kind),
                "name": name_part(&o.name), "controller": true,
            }]);
        }
        if m.deleting {
            item["metadata"]["deletionTimestamp"] = json!(rfc3339(START));
        }
        let mut metal3 = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
            "kind": "Metal3Machine",
            "metadata": {"name": m3m, "namespace": m.namespace, "annotations": {}},
        });
        if let Some(h) = &m.host {
            metal3["metadata"]["annotations"][crate::metal3::objects::HOST_LINK_KEY] = json!(h);
        }
        out.extend([item, metal3]);
    }
    for h in &snap.hosts {
        let mut a = Map::new();
        if let Some(r) = &h.reboot {
            a.insert(REBOOT_KEY.into(), json!(r));
        }
        for k in &h.other_reboots {
            a.insert(k.clone(), json!(""));
        }
        if h.paused {
            a.insert(PAUSED_KEY.into(), json!(""));
        }
        if h.detached {
            a.insert(DETACHED_KEY.into(), json!(""));
        }
        let (ns, name) = h.key.split_once('/').unwrap_or(("", &h.key));
        let mut item = json!({
            "apiVersion": "metal3.io/v1alpha1",
            "kind": "BareMetalHost",
            "metadata": {"name": name, "namespace": ns, "annotations": with_marks(a, &h.marks)},
            "spec": {"online": h.online, "disablePowerOff": h.disable_power_off},
            "status": {"provisioning": {"state": h.state}},
        });
        if let Some(on) = h.powered_on {
            item["status"]["poweredOn"] = json!(on);
        }
        out.push(item);
    }
    for n in &snap.nodes {
        let mut item = json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": n.name, "labels": n.labels, "annotations": n.annotations},
            "spec": {"unschedulable": n.unschedulable},
            "status": {},
        });
        if n.out_of_service {
            item["spec"]["taints"] = json!(crate::metal3::objects::with_out_of_service(
                &item,
                true,
                &rfc3339(START)
            ));
        }
        if let Some(c) = n.created {
            item["metadata"]["creationTimestamp"] = json!(rfc3339(c));
        }
        if n.deleting {
            item["metadata"]["deletionTimestamp"] = json!(rfc3339(START));
        }
        if let Some((status, since)) = &n.ready {
            let mut c = json!({"type": "Ready", "status": status});
            if let Some(t) = since {
                c["lastTransitionTime"] = json!(rfc3339(*t));
            }
            item["status"]["conditions"] = json!([c]);
        }
        out.push(item);
    }
    for s in &snap.scopes {
        let (ns, name) = s
            .object
            .name
            .split_once('/')
            .unwrap_or(("", &s.object.name));
        let mut item = json!({
            "apiVersion": if s.object.kind == kind::CONTROL_PLANE {
                "controlplane.cluster.x-k8s.io/v1beta2"
            } else {
                "cluster.x-k8s.io/v1beta2"
            },
            "kind": scope_kind_name(&s.object.kind),
            "metadata": {"name": name, "namespace": ns, "annotations": with_marks(Map::new(), &s.marks)},
        });
        if let Some(p) = &s.parent {
            item["metadata"]["ownerReferences"] = json!([{
                "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
                "name": name_part(p), "controller": true,
            }]);
        }
        if s.paused {
            item["spec"]["paused"] = json!(true);
        }
        out.push(item);
    }
    for p in &snap.pods {
        let (ns, name) = p.key.split_once('/').unwrap_or(("", &p.key));
        let mut item = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"nodeName": p.node},
        });
        if p.stays {
            item["metadata"]["ownerReferences"] =
                json!([{"kind": "DaemonSet", "name": "ds", "controller": true}]);
        }
        out.push(item);
    }
    out
}

pub(super) fn as_refs(v: &[(String, String)]) -> Vec<(&str, &str)> {
    v.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// About `targets` Machines in two clusters (`prod`, three quarters of them, and `edge`) over
/// three zones, each with its host and Node. Each cluster has a control plane of three and two
/// MachineDeployments with a MachineSet each; one Machine in ten has no owner. Policies and
/// suspends (permanent and timed) are spread over Clusters, owners and Machines, with
/// malformed autorepair annotations and other tools' annotations; some Machines start broken
/// (Node NotReady, a request), power-cycled recently (the loop guard holds them) or parked by a
/// failure, and some hosts are paused.
pub fn generate(targets: usize, seed: u64) -> Snapshot {
    let mut rng = Rng::seed_from_u64(seed);
    let zones = ["zone-a", "zone-b", "zone-c"];
    let mut fleet = fixture::Fleet::new();
    let prod = (targets * 3).div_ceil(4);
    let levels = [
        Metal3Level::Drain,
        Metal3Level::PowerCycle,
        Metal3Level::Reprovision,
    ];
    // A policy, a suspend, or nothing, with the odds given for each.
    let policy = |rng: &mut Rng, suspend: f64, level: f64| -> Vec<(String, String)> {
        let mut out = Vec::new();
        match sim::draw_policy(rng, suspend, level, &levels) {
            Some(DrawnPolicy::Suspend(until)) => out.push((
                crate::metal3::marks::SUSPEND_KEY.to_owned(),
                until.map_or_else(String::new, |t| t.to_string()),
            )),
            Some(DrawnPolicy::Allow(l)) => {
                out.push((crate::metal3::marks::POLICY_KEY.to_owned(), l.to_string()))
            }
            None => {}
        }
        if rng.random_bool(0.3) {
            out.push((
                "example.com/owner".to_owned(),
                format!("team-{}", rng.random_range(1..5)),
            ));
        }
        out
    };
    let mut i = 0;
    for (ns, count) in [("prod", prod), ("edge", targets - prod)] {
        if count == 0 {
            continue;
        }
        let cluster_policy = if rng.random_bool(0.85) {
            let l = if rng.random_bool(0.7) {
                Metal3Level::PowerCycle
            } else {
                Metal3Level::Reprovision
            };
            vec![(crate::metal3::marks::POLICY_KEY.to_owned(), l.to_string())]
        } else {
            Vec::new()
        };
        fleet = fleet.scope("Cluster", ns, ns, &as_refs(&cluster_policy));
        let cp = policy(&mut rng, 0.2, 0.3);
        fleet = fleet.scope(
            "KubeadmControlPlane",
            ns,
            &format!("{ns}-cp"),
            &as_refs(&cp),
        );
        for d in 0..2 {
            let md = format!("{ns}-workers-{d}");
            fleet = fleet.scope(
                "MachineDeployment",
                ns,
                &md,
                &as_refs(&policy(&mut rng, 0.1, 0.4)),
            );
            let ms = policy(&mut rng, 0.0, 0.1);
            fleet = fleet.item(json!({
                "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
                "metadata": {
                    "name": format!("{md}-ms"), "namespace": ns,
                    "annotations": ms.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<Map<String, Value>>(),
                    "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment", "name": md, "controller": true}],
                },
            }));
        }
        for j in 0..count {
            let name = format!("{ns}-m{i:02}");
            let host = format!("{ns}-h{i:02}");
            let node = format!("{ns}-n{i:02}");
            let zone = zones[i % zones.len()];
            let mut m = fixture::Machine::new(ns, &name)
                .host(&host)
                .node(&node)
                .cluster(ns);
            // Some Machines have no failure domain: their zone is their Node's label.
            if i % 7 != 3 {
                m = m.zone(zone);
            }
            m = match j {
                0..3 => m.owner("KubeadmControlPlane", &format!("{ns}-cp")),
                _ if j % 10 == 9 => m,
                _ => m.owner("MachineSet", &format!("{ns}-workers-{}-ms", j % 2)),
            };
            for (k, v) in policy(&mut rng, 0.04, 0.08) {
                m = m.annotate(&k, &v);
            }
            let roll: f64 = rng.random();
            if roll < 0.03 {
                m = m.annotate("autorepair.io/policy", "reboot");
            } else if roll < 0.06 {
                m = m.annotate("autorepair.io/owner", "team-1");
            } else if roll < 0.1 {
                let id = sim::draw_uuid(&mut rng);
                let at = START - rng.random_range(1..10) * PASS_SECONDS;
                m = m.annotate(
                    &format!("autorepair.io/repair.{id}"),
                    &format!("result:power-cycle:{at}:success:power-cycle.{id}"),
                );
            } else if roll < 0.12 {
                let id = sim::draw_uuid(&mut rng);
                m = m.annotate(
                    &format!("autorepair.io/repair.{id}"),
                    &format!(
                        "result:power-cycle:{}:failure:power-cycle.{id}",
                        START - 86400
                    ),
                );
            }
            if rng.random_bool(0.05) {
                m = m.requested();
            }
            let mut n = fixture::Node::new(&node).label(ZONE_LABEL, zone);
            if rng.random_bool(0.08) {
                n = n.ready("Unknown", fixture::T0);
            }
            let mut h = fixture::Host::new(ns, &host);
            if rng.random_bool(0.04) {
                h = h.annotate(PAUSED_KEY, "");
            }
            fleet = fleet.machine(m).host(h).node(n);
            i += 1;
        }
    }
    let list = fleet.build();
    Snapshot::from_items(list["items"].as_array().map_or(&[][..], Vec::as_slice))
}
