//! Short builders for the objects the metal3 family reads, as JSON values:
//! `machine("m1").namespace("ns").node_ref("n1").infrastructure_ref("m3m1")`.

use crate::kube::resource::{
    BARE_METAL_HOST, MACHINE, METAL3_MACHINE, METAL3_REMEDIATION, NAMESPACE, NODE,
    OPENSHIFT_MACHINE, POD, POD_DISRUPTION_BUDGET, Resource, SECRET,
};
use serde_json::{Value, json};

/// An object under construction. Namespaced kinds start in namespace `default`.
#[derive(Clone, Debug, PartialEq)]
pub struct Obj(Value);

/// Any registered kind in its storage version.
pub fn object(res: &Resource, name: &str) -> Obj {
    object_at(res, res.storage_version(), name)
}

/// Any registered kind in `version`.
pub fn object_at(res: &Resource, version: &str, name: &str) -> Obj {
    let mut v = json!({
        "apiVersion": res.api_version(version),
        "kind": res.kind,
        "metadata": { "name": name },
    });
    if res.namespaced {
        v["metadata"]["namespace"] = json!("default");
    }
    Obj(v)
}

/// A CAPI Machine, `cluster.x-k8s.io/v1beta2`.
pub fn machine(name: &str) -> Obj {
    object_at(&MACHINE, "v1beta2", name)
}

/// A CAPI Machine written as `cluster.x-k8s.io/v1beta1` (ObjectReference-shaped refs).
pub fn machine_v1beta1(name: &str) -> Obj {
    object_at(&MACHINE, "v1beta1", name)
}

/// An OpenShift machine-api Machine, `machine.openshift.io/v1beta1`.
pub fn openshift_machine(name: &str) -> Obj {
    object(&OPENSHIFT_MACHINE, name)
}

/// A CAPM3 Metal3Machine, `infrastructure.cluster.x-k8s.io/v1beta2`.
pub fn metal3_machine(name: &str) -> Obj {
    object(&METAL3_MACHINE, name)
}

/// A CAPM3 Metal3Remediation, `infrastructure.cluster.x-k8s.io/v1beta2`.
pub fn metal3_remediation(name: &str) -> Obj {
    object(&METAL3_REMEDIATION, name)
}

/// A BMO BareMetalHost, `metal3.io/v1alpha1`, with `spec.online: true`.
pub fn bare_metal_host(name: &str) -> Obj {
    object(&BARE_METAL_HOST, name).set("/spec/online", true)
}

/// A core v1 Node (cluster-scoped), Ready.
pub fn node(name: &str) -> Obj {
    object(&NODE, name).ready(true)
}

/// A core v1 Secret (type Opaque).
pub fn secret(name: &str) -> Obj {
    object(&SECRET, name).set("/type", "Opaque")
}

/// A core v1 Pod, `Running`, bound to no Node yet.
pub fn pod(name: &str) -> Obj {
    object(&POD, name).set("/status/phase", "Running")
}

/// A core v1 Namespace (cluster-scoped), `Active`.
pub fn namespace_object(name: &str) -> Obj {
    object(&NAMESPACE, name).set("/status/phase", "Active")
}

/// A policy/v1 PodDisruptionBudget selecting Pods by `matchLabels`, with
/// `status.disruptionsAllowed` = `allowed` (no controller computes it in the fake).
pub fn pod_disruption_budget(name: &str, match_labels: &[(&str, &str)], allowed: i64) -> Obj {
    let labels: serde_json::Map<String, Value> = match_labels
        .iter()
        .map(|(k, v)| ((*k).to_string(), json!(v)))
        .collect();
    object(&POD_DISRUPTION_BUDGET, name)
        .set("/spec/selector", json!({ "matchLabels": labels }))
        .set("/status/disruptionsAllowed", allowed)
}

impl Obj {
    pub fn build(self) -> Value {
        self.0
    }

    fn kind(&self) -> &str {
        self.0["kind"].as_str().unwrap_or_default()
    }

    fn api_version(&self) -> &str {
        self.0["apiVersion"].as_str().unwrap_or_default()
    }

    fn name(&self) -> String {
        self.0["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    fn ns(&self) -> String {
        self.0["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    fn expect_kind(&self, kind: &str, method: &str) {
        assert_eq!(self.kind(), kind, "{method}() is for a {kind}");
    }

    /// Sets the value at a JSON pointer (`/spec/online`), creating objects on the way.
    pub fn set(mut self, pointer: &str, value: impl Into<Value>) -> Obj {
        let mut cur = &mut self.0;
        for part in pointer.trim_start_matches('/').split('/') {
            let part = part.replace("~1", "/").replace("~0", "~");
            if !cur.is_object() {
                *cur = json!({});
            }
            cur = cur
                .as_object_mut()
                .expect("object")
                .entry(part)
                .or_insert(Value::Null);
        }
        *cur = value.into();
        self
    }

    /// Removes the value at a JSON pointer, if there.
    pub fn unset(mut self, pointer: &str) -> Obj {
        if let Some((parent, last)) = pointer.rsplit_once('/')
            && let Some(Value::Object(m)) = self.0.pointer_mut(parent)
        {
            m.remove(&last.replace("~1", "/").replace("~0", "~"));
        }
        self
    }

    pub fn namespace(mut self, ns: &str) -> Obj {
        self.0["metadata"]["namespace"] = json!(ns);
        self
    }

    pub fn label(self, key: &str, value: &str) -> Obj {
        let p = format!(
            "/metadata/labels/{}",
            key.replace('~', "~0").replace('/', "~1")
        );
        self.set(&p, value)
    }

    pub fn annotation(self, key: &str, value: &str) -> Obj {
        let p = format!(
            "/metadata/annotations/{}",
            key.replace('~', "~0").replace('/', "~1")
        );
        self.set(&p, value)
    }

    pub fn finalizer(mut self, f: &str) -> Obj {
        let m = &mut self.0["metadata"];
        if !m["finalizers"].is_array() {
            m["finalizers"] = json!([]);
        }
        m["finalizers"]
            .as_array_mut()
            .expect("array")
            .push(json!(f));
        self
    }

    /// Adds an ownerReference (controller when `controller`).
    pub fn owner(
        mut self,
        api_version: &str,
        kind: &str,
        name: &str,
        uid: &str,
        controller: bool,
    ) -> Obj {
        let m = &mut self.0["metadata"];
        if !m["ownerReferences"].is_array() {
            m["ownerReferences"] = json!([]);
        }
        m["ownerReferences"]
            .as_array_mut()
            .expect("array")
            .push(json!({
                "apiVersion": api_version,
                "kind": kind,
                "name": name,
                "uid": uid,
                "controller": controller,
                "blockOwnerDeletion": controller,
            }));
        self
    }

    // ---- Machine ----

    /// `spec.clusterName` and the `cluster.x-k8s.io/cluster-name` label.
    pub fn cluster(self, cluster: &str) -> Obj {
        self.set("/spec/clusterName", cluster)
            .label("cluster.x-k8s.io/cluster-name", cluster)
    }

    /// `status.nodeRef`: `{name}` in v1beta2, an ObjectReference in v1beta1.
    pub fn node_ref(self, node: &str) -> Obj {
        self.expect_kind("Machine", "node_ref");
        let r = if self.api_version().ends_with("/v1beta2") {
            json!({ "name": node })
        } else {
            json!({ "apiVersion": "v1", "kind": "Node", "name": node })
        };
        self.set("/status/nodeRef", r)
    }

    /// `spec.infrastructureRef` to a Metal3Machine in the Machine's namespace.
    pub fn infrastructure_ref(self, metal3_machine: &str) -> Obj {
        self.expect_kind("Machine", "infrastructure_ref");
        let r = if self.api_version() == "cluster.x-k8s.io/v1beta2" {
            json!({
                "apiGroup": METAL3_MACHINE.group,
                "kind": METAL3_MACHINE.kind,
                "name": metal3_machine,
            })
        } else {
            json!({
                "apiVersion": METAL3_MACHINE.api_version("v1beta1"),
                "kind": METAL3_MACHINE.kind,
                "name": metal3_machine,
                "namespace": self.ns(),
            })
        };
        self.set("/spec/infrastructureRef", r)
    }

    /// The OpenShift MHC's "needs remediation" annotation `host.metal3.io/external-remediation`.
    pub fn external_remediation(self) -> Obj {
        self.annotation("host.metal3.io/external-remediation", "")
    }

    // ---- Metal3Machine (or OpenShift Machine) ----

    /// The `metal3.io/BareMetalHost: "<ns>/<host>"` annotation (host in the object's namespace).
    pub fn host(self, host: &str) -> Obj {
        let v = format!("{}/{host}", self.ns());
        self.annotation("metal3.io/BareMetalHost", &v)
    }

    // ---- BareMetalHost ----

    /// `status.poweredOn`.
    pub fn powered_on(self, on: bool) -> Obj {
        self.expect_kind("BareMetalHost", "powered_on");
        self.set("/status/poweredOn", on)
    }

    /// `spec.online`.
    pub fn online(self, on: bool) -> Obj {
        self.expect_kind("BareMetalHost", "online");
        self.set("/spec/online", on)
    }

    /// `status.provisioning.state` (`provisioned`, `externally provisioned`, `available`...).
    pub fn provisioning_state(self, state: &str) -> Obj {
        self.expect_kind("BareMetalHost", "provisioning_state");
        self.set("/status/provisioning/state", state)
    }

    /// `spec.consumerRef` to a Metal3Machine in the host's namespace.
    pub fn consumer_ref(self, metal3_machine: &str) -> Obj {
        self.expect_kind("BareMetalHost", "consumer_ref");
        let r = json!({
            "apiVersion": METAL3_MACHINE.api_version(METAL3_MACHINE.storage_version()),
            "kind": METAL3_MACHINE.kind,
            "name": metal3_machine,
            "namespace": self.ns(),
        });
        self.set("/spec/consumerRef", r)
    }

    /// A reboot request `reboot.metal3.io/<suffix>` (empty suffix: the suffixless key).
    pub fn reboot_annotation(self, suffix: &str, value: &str) -> Obj {
        let key = if suffix.is_empty() {
            "reboot.metal3.io".to_string()
        } else {
            format!("reboot.metal3.io/{suffix}")
        };
        self.annotation(&key, value)
    }

    // ---- Node ----

    /// The `Ready` condition.
    pub fn ready(self, ready: bool) -> Obj {
        self.expect_kind("Node", "ready");
        self.set(
            "/status/conditions",
            json!([{
                "type": "Ready",
                "status": if ready { "True" } else { "False" },
                "reason": if ready { "KubeletReady" } else { "KubeletNotReady" },
            }]),
        )
    }

    /// `spec.unschedulable` (cordoned).
    pub fn unschedulable(self, yes: bool) -> Obj {
        self.expect_kind("Node", "unschedulable");
        self.set("/spec/unschedulable", yes)
    }

    /// Adds a taint.
    pub fn taint(mut self, key: &str, value: &str, effect: &str) -> Obj {
        self.expect_kind("Node", "taint");
        let spec = &mut self.0["spec"];
        if !spec["taints"].is_array() {
            spec["taints"] = json!([]);
        }
        spec["taints"]
            .as_array_mut()
            .expect("array")
            .push(json!({ "key": key, "value": value, "effect": effect }));
        self
    }

    /// `spec.providerID`.
    pub fn provider_id(self, id: &str) -> Obj {
        self.set("/spec/providerID", id)
    }

    // ---- Pod ----

    /// `spec.nodeName`: bound to that Node.
    pub fn node_name(self, node: &str) -> Obj {
        self.expect_kind("Pod", "node_name");
        self.set("/spec/nodeName", node)
    }

    /// `status.phase`: Pending, Running, Succeeded, Failed.
    pub fn phase(self, phase: &str) -> Obj {
        self.expect_kind("Pod", "phase");
        self.set("/status/phase", phase)
    }

    // ---- Secret ----

    /// A `stringData` entry (the server folds it into base64 `data`).
    pub fn string_data(self, key: &str, value: &str) -> Obj {
        self.expect_kind("Secret", "string_data");
        let p = format!("/stringData/{}", key.replace('~', "~0").replace('/', "~1"));
        self.set(&p, value)
    }

    /// `<namespace>/<name>`, as references and messages spell it.
    pub fn ns_name(&self) -> String {
        format!("{}/{}", self.ns(), self.name())
    }
}

impl From<Obj> for Value {
    fn from(o: Obj) -> Value {
        o.0
    }
}
