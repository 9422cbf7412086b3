//! What wakes `run --loop` on a live metal3 cluster between passes: the shared watches
//! ([`crate::k8s::watch`]) on every kind a pass reads in the management cluster, with what the
//! family reads of each ([`fingerprint`]).
//!
//! Not watched: Nodes in workload clusters (`Workload::ClusterSecrets`; they are seen at the
//! next resync) and Pods.

use super::discovery::{self, Served};
use super::{Options, Source, Workload, core};
use crate::engine::BackendError;
use ::kube::core::ApiResource;
use ::kube::{Client, Config};
use serde_json::Value;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

pub use crate::k8s::watch::{Change, ChangeKind, PENDING, Watched, Watcher};
use crate::k8s::watch::{Discover, Discovering};

/// Starts watching the management cluster `source` names.
pub fn connect(source: &Source, options: &Options) -> Result<Watcher, BackendError> {
    Watcher::connect(source, options.timeout, discover(options.workload))
}

/// Starts watching the server of a client configuration (the tests' fake server gives one).
pub fn from_config(config: Config, options: &Options) -> Result<Watcher, BackendError> {
    Watcher::from_config(config, options.timeout, discover(options.workload))
}

/// Asks the server which of the family's kinds it serves.
pub fn discover(workload: Workload) -> Discover {
    let nodes_here = workload == Workload::Management;
    Box::new(move |client: Client| -> Discovering {
        Box::pin(async move {
            let d = ::kube::Discovery::new(client)
                .filter(discovery::GROUPS)
                .run()
                .await?;
            Ok(watched(&Served::from_discovery(&d), nodes_here))
        })
    })
}

/// What the family reads of each kind (see `objects.rs`); anything else changing is no reason
/// for a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Machine,
    Host,
    Node,
    /// Clusters: read whole, for `spec.paused` (Cluster API's pause holds their Machines).
    Cluster,
    /// Metal3Machines and the other scopes: their metadata only.
    Metadata,
    /// AutorepairRemediations: their metadata is what asks; their status is autorepair's own
    /// report, whose writes must not wake the loop.
    Remediation,
}

/// The watched kinds: the management cluster's, as discovery found them served.
fn watched(served: &Served, nodes_here: bool) -> Vec<Watched> {
    let mut out = Vec::new();
    for m in [&served.machines, &served.openshift_machines]
        .into_iter()
        .flatten()
    {
        out.push((m.clone(), Kind::Machine));
    }
    out.extend(served.hosts.clone().map(|h| (h, Kind::Host)));
    // A MachineHealthCheck's request: read whole (its status is written back).
    out.extend(served.remediations.clone().map(|r| (r, Kind::Remediation)));
    out.extend(served.metal3_machines.clone().map(|m| (m, Kind::Metadata)));
    out.extend(served.scopes.iter().cloned().map(|s| {
        let kind = if s.kind == "Cluster" {
            Kind::Cluster
        } else {
            Kind::Metadata
        };
        (s, kind)
    }));
    // OpenShift Machines' Nodes are in the management cluster whatever the workload setting.
    if nodes_here || served.openshift_machines.is_some() {
        out.push((core("Node", "nodes"), Kind::Node));
    }
    out.into_iter()
        .map(|(resource, kind): (ApiResource, Kind)| Watched {
            resource,
            metadata_only: kind == Kind::Metadata,
            digest: Arc::new(move |v| fingerprint(kind, v)),
        })
        .collect()
}

/// A digest of what the family reads of an object.
fn fingerprint(kind: Kind, v: &Value) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut put = |path: &str| v.pointer(path).unwrap_or(&Value::Null).hash(&mut h);
    for path in [
        "/metadata/uid",
        "/metadata/annotations",
        "/metadata/labels",
        "/metadata/ownerReferences",
        "/metadata/deletionTimestamp",
    ] {
        put(path);
    }
    let paths: &[&str] = match kind {
        Kind::Machine => &[
            "/status/nodeRef",
            "/spec/infrastructureRef",
            "/spec/clusterName",
            "/spec/failureDomain",
        ],
        Kind::Host => &[
            "/status/poweredOn",
            "/spec/online",
            "/spec/disablePowerOff",
            "/status/provisioning/state",
        ],
        Kind::Node => &["/spec/unschedulable", "/spec/taints"],
        Kind::Cluster => &["/spec/paused"],
        Kind::Metadata | Kind::Remediation => &[],
    };
    for path in paths {
        put(path);
    }
    if kind == Kind::Node {
        // The Ready condition's status and since when, not its heartbeat.
        let ready = v
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"));
        if let Some(c) = ready {
            c["status"].hash(&mut h);
            c["lastTransitionTime"].hash(&mut h);
        }
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_what_the_family_reads_makes_a_change() {
        let node = json!({
            "metadata": {"name": "n1", "resourceVersion": "1", "labels": {"a": "b"}},
            "status": {"conditions": [{"type": "Ready", "status": "True",
                "lastHeartbeatTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2025-01-01T00:00:00Z"}]}
        });
        let host = json!({
            "metadata": {"name": "h1", "namespace": "ns", "resourceVersion": "1"},
            "spec": {"online": true},
            "status": {"poweredOn": true, "lastUpdated": "2026-01-01T00:00:00Z"}
        });
        let same = |kind, a: &Value, path: &str, new: Value| {
            let mut b = a.clone();
            *b.pointer_mut(path).unwrap_or_else(|| panic!("{path}")) = new;
            fingerprint(kind, a) == fingerprint(kind, &b)
        };
        let cluster = json!({
            "metadata": {"name": "c1", "namespace": "ns", "resourceVersion": "1"},
            "spec": {"paused": false},
            "status": {"phase": "Provisioned"}
        });
        let cases: [(Kind, &Value, &str, Value, bool); 10] = [
            (Kind::Cluster, &cluster, "/spec/paused", json!(true), false),
            (Kind::Cluster, &cluster, "/status/phase", json!("x"), true),
            (
                Kind::Node,
                &node,
                "/metadata/resourceVersion",
                json!("2"),
                true,
            ),
            (
                Kind::Node,
                &node,
                "/status/conditions/0/lastHeartbeatTime",
                json!("x"),
                true,
            ),
            (
                Kind::Node,
                &node,
                "/status/conditions/0/status",
                json!("False"),
                false,
            ),
            (Kind::Node, &node, "/metadata/labels", json!({}), false),
            (Kind::Host, &host, "/status/lastUpdated", json!("x"), true),
            (Kind::Host, &host, "/status/poweredOn", json!(false), false),
            (Kind::Host, &host, "/spec/online", json!(false), false),
            (
                Kind::Metadata,
                &host,
                "/status/poweredOn",
                json!(false),
                true,
            ),
        ];
        for (kind, obj, path, new, want) in cases {
            assert_eq!(same(kind, obj, path, new), want, "{kind:?} {path}");
        }
    }
}
