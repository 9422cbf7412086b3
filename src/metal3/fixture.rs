//! Builders for Kubernetes objects as the API server returns them, for tests and the demo:
//! `Fleet::new().machine(Machine::new("ns", "m1").node("n1").host("h1"))`.

use super::objects::{REBOOT_KEY, REQUEST_KEY};
use serde_json::{Value, json};

pub const T0: &str = "2026-01-01T00:00:00Z";

/// A Machine (v1beta2) with its Metal3Machine.
#[derive(Clone, Debug)]
pub struct Machine {
    ns: String,
    name: String,
    node: Option<String>,
    host: Option<String>,
    owner: Option<(String, String)>,
    cluster: Option<String>,
    annotations: Vec<(String, String)>,
    zone: Option<String>,
    conditions: Vec<Value>,
}

impl Machine {
    pub fn new(ns: &str, name: &str) -> Self {
        Machine {
            ns: ns.into(),
            name: name.into(),
            node: None,
            host: None,
            owner: None,
            cluster: None,
            annotations: Vec::new(),
            zone: None,
            conditions: Vec::new(),
        }
    }
    pub fn node(mut self, node: &str) -> Self {
        self.node = Some(node.into());
        self
    }
    pub fn host(mut self, host: &str) -> Self {
        self.host = Some(host.into());
        self
    }
    /// Its controller owner, e.g. `("MachineSet", "ms1")`.
    pub fn owner(mut self, kind: &str, name: &str) -> Self {
        self.owner = Some((kind.into(), name.into()));
        self
    }
    pub fn cluster(mut self, cluster: &str) -> Self {
        self.cluster = Some(cluster.into());
        self
    }
    pub fn zone(mut self, zone: &str) -> Self {
        self.zone = Some(zone.into());
        self
    }
    pub fn annotate(mut self, key: &str, value: &str) -> Self {
        self.annotations.push((key.into(), value.into()));
        self
    }
    pub fn requested(self) -> Self {
        self.annotate(REQUEST_KEY, "")
    }
    /// A condition in `status.conditions` (v1beta2's form), e.g. a MachineHealthCheck's
    /// `("HealthCheckSucceeded", "False", "UnhealthyNode")`.
    pub fn condition(mut self, kind: &str, status: &str, reason: &str) -> Self {
        self.conditions.push(json!({
            "type": kind, "status": status, "reason": reason, "lastTransitionTime": T0,
        }));
        self
    }

    fn items(&self) -> Vec<Value> {
        let m3m = format!("{}-m3m", self.name);
        let mut machine = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": "Machine",
            "metadata": {
                "name": self.name, "namespace": self.ns, "creationTimestamp": T0,
                "annotations": self.annotations.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<String, Value>>(),
                "labels": {},
            },
            "spec": {
                "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "Metal3Machine", "name": m3m},
            },
            "status": {},
        });
        if let Some(c) = &self.cluster {
            machine["spec"]["clusterName"] = json!(c);
            machine["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] = json!(c);
        }
        if let Some(z) = &self.zone {
            machine["spec"]["failureDomain"] = json!(z);
        }
        if let Some(n) = &self.node {
            machine["status"]["nodeRef"] = json!({"name": n});
        }
        if !self.conditions.is_empty() {
            machine["status"]["conditions"] = json!(self.conditions);
        }
        if let Some((kind, name)) = &self.owner {
            machine["metadata"]["ownerReferences"] = json!([{
                "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": kind, "name": name,
                "controller": true, "uid": "00000000-0000-0000-0000-000000000001",
            }]);
        }
        let mut metal3 = json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
            "kind": "Metal3Machine",
            "metadata": {"name": m3m, "namespace": self.ns, "annotations": {}},
        });
        if let Some(h) = &self.host {
            metal3["metadata"]["annotations"]["metal3.io/BareMetalHost"] =
                json!(format!("{}/{h}", self.ns));
        }
        vec![machine, metal3]
    }
}

/// A BareMetalHost, provisioned, online and powered on unless told otherwise.
#[derive(Clone, Debug)]
pub struct Host {
    ns: String,
    name: String,
    powered_on: Option<bool>,
    online: bool,
    annotations: Vec<(String, String)>,
    state: String,
}

impl Host {
    pub fn new(ns: &str, name: &str) -> Self {
        Host {
            ns: ns.into(),
            name: name.into(),
            powered_on: Some(true),
            online: true,
            annotations: Vec::new(),
            state: "provisioned".into(),
        }
    }
    pub fn powered(mut self, on: bool) -> Self {
        self.powered_on = Some(on);
        self
    }
    pub fn no_status(mut self) -> Self {
        self.powered_on = None;
        self
    }
    pub fn online(mut self, online: bool) -> Self {
        self.online = online;
        self
    }
    pub fn annotate(mut self, key: &str, value: &str) -> Self {
        self.annotations.push((key.into(), value.into()));
        self
    }
    /// autorepair's reboot annotation is on it.
    pub fn rebooting(self) -> Self {
        self.annotate(REBOOT_KEY, r#"{"mode":"hard"}"#)
    }

    fn item(&self) -> Value {
        let mut v = json!({
            "apiVersion": "metal3.io/v1alpha1",
            "kind": "BareMetalHost",
            "metadata": {
                "name": self.name, "namespace": self.ns,
                "annotations": self.annotations.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<String, Value>>(),
            },
            "spec": {"online": self.online},
        });
        if let Some(on) = self.powered_on {
            v["status"] = json!({"poweredOn": on, "provisioning": {"state": self.state}});
        }
        v
    }
}

/// A Node, Ready since [`T0`] unless told otherwise.
#[derive(Clone, Debug)]
pub struct Node {
    name: String,
    ready: (String, String),
    labels: Vec<(String, String)>,
    out_of_service: bool,
}

impl Node {
    pub fn new(name: &str) -> Self {
        Node {
            name: name.into(),
            ready: ("True".into(), T0.into()),
            labels: vec![("kubernetes.io/hostname".into(), name.into())],
            out_of_service: false,
        }
    }
    /// Tainted `node.kubernetes.io/out-of-service=nodeshutdown:NoExecute`.
    pub fn out_of_service(mut self) -> Self {
        self.out_of_service = true;
        self
    }
    /// Ready is `status` (`False`, `Unknown`) since `at` (RFC 3339).
    pub fn ready(mut self, status: &str, at: &str) -> Self {
        self.ready = (status.into(), at.into());
        self
    }
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.labels.push((key.into(), value.into()));
        self
    }

    fn item(&self) -> Value {
        let mut item = json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": self.name, "creationTimestamp": T0,
                "labels": self.labels.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<String, Value>>(),
            },
            "status": {"conditions": [{"type": "Ready", "status": self.ready.0, "lastTransitionTime": self.ready.1}]},
        });
        if self.out_of_service {
            item["spec"]["taints"] = json!(super::objects::with_out_of_service(&item, true, T0));
        }
        item
    }
}

/// A `v1` `List` of objects.
#[derive(Clone, Debug, Default)]
pub struct Fleet {
    items: Vec<Value>,
    simulated: bool,
}

impl Fleet {
    pub fn new() -> Self {
        Fleet::default()
    }
    pub fn machine(mut self, m: Machine) -> Self {
        self.items.extend(m.items());
        self
    }
    pub fn host(mut self, h: Host) -> Self {
        self.items.push(h.item());
        self
    }
    pub fn node(mut self, n: Node) -> Self {
        self.items.push(n.item());
        self
    }
    /// A MachineSet, MachineDeployment, control plane or Cluster, with annotations.
    pub fn scope(mut self, kind: &str, ns: &str, name: &str, annotations: &[(&str, &str)]) -> Self {
        let group = if kind.ends_with("ControlPlane") {
            "controlplane.cluster.x-k8s.io/v1beta2"
        } else {
            "cluster.x-k8s.io/v1beta2"
        };
        self.items.push(json!({
            "apiVersion": group, "kind": kind,
            "metadata": {
                "name": name, "namespace": ns,
                "annotations": annotations.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect::<serde_json::Map<String, Value>>(),
            },
        }));
        self
    }
    pub fn item(mut self, v: Value) -> Self {
        self.items.push(v);
        self
    }
    /// The file plays the baremetal-operator and kubelet between passes.
    pub fn simulated(mut self) -> Self {
        self.simulated = true;
        self
    }
    pub fn build(self) -> Value {
        let mut list =
            json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": self.items});
        if self.simulated {
            list[super::file::SIMULATION_KEY] = json!({});
        }
        list
    }
}
