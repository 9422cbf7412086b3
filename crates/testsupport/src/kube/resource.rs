//! Resource kinds the fake server can serve: group, versions, kind, plural, scope.

use serde_json::{Value, json};

/// One resource type (what a CRD or a built-in API registers).
///
/// `versions[0]` is the storage and preferred version: objects are kept in it and converted to
/// the version a request names (see [`crate::kube::Converter`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resource {
    /// API group, `""` for the core group (`/api/v1`).
    pub group: &'static str,
    /// Served versions, storage version first.
    pub versions: &'static [&'static str],
    pub kind: &'static str,
    pub plural: &'static str,
    pub short_names: &'static [&'static str],
    pub namespaced: bool,
    /// A custom resource (CRD): strategic merge patch is refused (415), a PUT must carry
    /// `metadata.resourceVersion`, and status sent with a create is dropped when the status
    /// subresource is on. Built-ins (Node, Secret) allow unconditional PUTs and keep status on
    /// create; their strategic merge patches are applied as merge patches (see docs/testing.md).
    pub custom: bool,
    /// The `/status` subresource: the main endpoint ignores changes to `status`, `/status`
    /// ignores changes to everything else.
    pub status_subresource: bool,
}

impl Resource {
    /// The storage (and preferred) version.
    pub fn storage_version(&self) -> &'static str {
        self.versions[0]
    }

    /// `apiVersion` for `version`: `v1` in the core group, `group/version` elsewhere.
    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_string()
        } else {
            format!("{}/{version}", self.group)
        }
    }

    /// `machines.cluster.x-k8s.io`, or `nodes` in the core group: how the apiserver names the
    /// resource in error messages.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `Machine.cluster.x-k8s.io` (kind qualified by group), as in "is invalid" messages.
    pub fn group_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.to_string()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }

    /// URL path prefix of `version`: `/api/v1` or `/apis/group/version`.
    pub fn version_root(&self, version: &str) -> String {
        if self.group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{}/{version}", self.group)
        }
    }

    /// URL path of the collection in the storage version (`ns` ignored when cluster-scoped;
    /// empty `ns` = all namespaces).
    pub fn collection_path(&self, ns: &str) -> String {
        let root = self.version_root(self.storage_version());
        if self.namespaced && !ns.is_empty() {
            format!("{root}/namespaces/{ns}/{}", self.plural)
        } else {
            format!("{root}/{}", self.plural)
        }
    }

    /// URL path of one object in the storage version.
    pub fn path(&self, ns: &str, name: &str) -> String {
        format!("{}/{name}", self.collection_path(ns))
    }

    /// kube's [`kube::core::ApiResource`] for `Api<DynamicObject>`, in the storage version.
    pub fn api_resource(&self) -> kube::core::ApiResource {
        self.api_resource_at(self.storage_version())
    }

    /// kube's [`kube::core::ApiResource`] for `Api<DynamicObject>` in `version`.
    pub fn api_resource_at(&self, version: &str) -> kube::core::ApiResource {
        kube::core::ApiResource {
            group: self.group.to_string(),
            version: version.to_string(),
            api_version: self.api_version(version),
            kind: self.kind.to_string(),
            plural: self.plural.to_string(),
        }
    }

    /// The `APIResource` entries discovery lists for this resource (itself and `/status`).
    pub(crate) fn discovery_entries(&self) -> Vec<Value> {
        let verbs = json!([
            "create", "delete", "get", "list", "patch", "update", "watch"
        ]);
        let mut out = vec![json!({
            "name": self.plural,
            "singularName": self.kind.to_lowercase(),
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": verbs,
            "shortNames": self.short_names,
        })];
        if self.status_subresource {
            out.push(json!({
                "name": format!("{}/status", self.plural),
                "singularName": "",
                "namespaced": self.namespaced,
                "kind": self.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
        out
    }
}

const CAPI: &str = "cluster.x-k8s.io";
const CAPI_VERSIONS: &[&str] = &["v1beta2", "v1beta1"];
const INFRA: &str = "infrastructure.cluster.x-k8s.io";

const fn capi(
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    short_names: &'static [&'static str],
) -> Resource {
    Resource {
        group,
        versions: CAPI_VERSIONS,
        kind,
        plural,
        short_names,
        namespaced: true,
        custom: true,
        status_subresource: true,
    }
}

/// Cluster API Machine: `cluster.x-k8s.io` v1beta2 (storage) and v1beta1.
pub const MACHINE: Resource = capi(CAPI, "Machine", "machines", &["ma"]);
pub const MACHINE_SET: Resource = capi(CAPI, "MachineSet", "machinesets", &["ms"]);
pub const MACHINE_DEPLOYMENT: Resource =
    capi(CAPI, "MachineDeployment", "machinedeployments", &["md"]);
pub const CLUSTER: Resource = capi(CAPI, "Cluster", "clusters", &["cl"]);
pub const MACHINE_HEALTH_CHECK: Resource = capi(
    CAPI,
    "MachineHealthCheck",
    "machinehealthchecks",
    &["mhc", "mhcs"],
);
/// CAPM3 Metal3Machine: `infrastructure.cluster.x-k8s.io` v1beta2 (storage) and v1beta1.
pub const METAL3_MACHINE: Resource = capi(INFRA, "Metal3Machine", "metal3machines", &["m3m"]);
pub const METAL3_REMEDIATION: Resource =
    capi(INFRA, "Metal3Remediation", "metal3remediations", &["m3r"]);
pub const METAL3_REMEDIATION_TEMPLATE: Resource = capi(
    INFRA,
    "Metal3RemediationTemplate",
    "metal3remediationtemplates",
    &["m3rt"],
);
/// autorepair's Cluster API external remediation kinds: `remediation.autorepair.io` v1alpha1,
/// with a status subresource, as contrib/kubernetes/remediation-crds.yaml defines them.
pub const AUTOREPAIR_REMEDIATION: Resource = Resource {
    group: "remediation.autorepair.io",
    versions: &["v1alpha1"],
    kind: "AutorepairRemediation",
    plural: "autorepairremediations",
    short_names: &["arr"],
    namespaced: true,
    custom: true,
    status_subresource: true,
};
pub const AUTOREPAIR_REMEDIATION_TEMPLATE: Resource = Resource {
    group: "remediation.autorepair.io",
    versions: &["v1alpha1"],
    kind: "AutorepairRemediationTemplate",
    plural: "autorepairremediationtemplates",
    short_names: &["arrt"],
    namespaced: true,
    custom: true,
    status_subresource: false,
};
/// BMO BareMetalHost: `metal3.io` v1alpha1.
pub const BARE_METAL_HOST: Resource = Resource {
    group: "metal3.io",
    versions: &["v1alpha1"],
    kind: "BareMetalHost",
    plural: "baremetalhosts",
    short_names: &["bmh", "bmhost"],
    namespaced: true,
    custom: true,
    status_subresource: true,
};
/// OpenShift machine-api Machine: `machine.openshift.io` v1beta1.
pub const OPENSHIFT_MACHINE: Resource = Resource {
    group: "machine.openshift.io",
    versions: &["v1beta1"],
    kind: "Machine",
    plural: "machines",
    short_names: &[],
    namespaced: true,
    custom: true,
    status_subresource: true,
};
/// Core v1 Node (cluster-scoped).
pub const NODE: Resource = Resource {
    group: "",
    versions: &["v1"],
    kind: "Node",
    plural: "nodes",
    short_names: &["no"],
    namespaced: false,
    custom: false,
    status_subresource: true,
};
/// coordination.k8s.io/v1 Lease, for leader election: not served unless a test adds it
/// (`Builder::resource`), as a cluster without it would not.
pub const LEASE: Resource = Resource {
    group: "coordination.k8s.io",
    versions: &["v1"],
    kind: "Lease",
    plural: "leases",
    short_names: &[],
    namespaced: true,
    custom: false,
    status_subresource: false,
};
/// Core v1 Secret.
pub const SECRET: Resource = Resource {
    group: "",
    versions: &["v1"],
    kind: "Secret",
    plural: "secrets",
    short_names: &[],
    namespaced: true,
    custom: false,
    status_subresource: false,
};

/// Core v1 Pod. `POST …/pods/NAME/eviction` is its Eviction subresource (policy/v1),
/// honouring [`POD_DISRUPTION_BUDGET`]s; `spec.nodeName` and `status.phase` select in field
/// selectors.
pub const POD: Resource = Resource {
    group: "",
    versions: &["v1"],
    kind: "Pod",
    plural: "pods",
    short_names: &["po"],
    namespaced: true,
    custom: false,
    status_subresource: true,
};
/// storage.k8s.io/v1 VolumeAttachment (cluster-scoped): a CSI volume attached to
/// `spec.nodeName`. No attach-detach controller runs: a test creates and deletes them.
pub const VOLUME_ATTACHMENT: Resource = Resource {
    group: "storage.k8s.io",
    versions: &["v1"],
    kind: "VolumeAttachment",
    plural: "volumeattachments",
    short_names: &[],
    namespaced: false,
    custom: false,
    status_subresource: true,
};
/// Core v1 Namespace (cluster-scoped). Namespaces are not required to exist for namespaced
/// objects: only tests that select namespaces by label create them.
pub const NAMESPACE: Resource = Resource {
    group: "",
    versions: &["v1"],
    kind: "Namespace",
    plural: "namespaces",
    short_names: &["ns"],
    namespaced: false,
    custom: false,
    status_subresource: true,
};
/// policy/v1 PodDisruptionBudget. No disruption controller runs: `status.disruptionsAllowed`
/// is what the test writes (missing = 0), and each granted eviction lowers it by one.
pub const POD_DISRUPTION_BUDGET: Resource = Resource {
    group: "policy",
    versions: &["v1"],
    kind: "PodDisruptionBudget",
    plural: "poddisruptionbudgets",
    short_names: &["pdb"],
    namespaced: true,
    custom: false,
    status_subresource: true,
};

/// Core v1 Event: what `kubectl describe` shows under an object (`involvedObject`). Stored as
/// posted; nothing expires them.
pub const EVENT: Resource = Resource {
    group: "",
    versions: &["v1"],
    kind: "Event",
    plural: "events",
    short_names: &["ev"],
    namespaced: true,
    custom: false,
    status_subresource: false,
};
/// events.k8s.io/v1 Event (`regarding` instead of `involvedObject`), for clients that post
/// the newer API.
pub const EVENTS_V1: Resource = Resource {
    group: "events.k8s.io",
    versions: &["v1"],
    kind: "Event",
    plural: "events",
    short_names: &[],
    namespaced: true,
    custom: false,
    status_subresource: false,
};

/// What [`crate::kube::FakeKube::start`] serves.
pub const DEFAULT_RESOURCES: &[Resource] = &[
    MACHINE,
    MACHINE_SET,
    MACHINE_DEPLOYMENT,
    CLUSTER,
    MACHINE_HEALTH_CHECK,
    METAL3_MACHINE,
    METAL3_REMEDIATION,
    METAL3_REMEDIATION_TEMPLATE,
    AUTOREPAIR_REMEDIATION,
    AUTOREPAIR_REMEDIATION_TEMPLATE,
    BARE_METAL_HOST,
    OPENSHIFT_MACHINE,
    NODE,
    SECRET,
    POD,
    NAMESPACE,
    POD_DISRUPTION_BUDGET,
    VOLUME_ATTACHMENT,
    EVENT,
    EVENTS_V1,
];

/// The default converter for CAPI Machines between v1beta1 and v1beta2, covering only the two
/// references the metal3 family follows (docs/metal3.md, Targets and scopes): `status.nodeRef`
/// (v1beta1 ObjectReference ↔ v1beta2 `{name}`) and `spec.infrastructureRef` (v1beta1
/// ObjectReference with apiVersion/namespace ↔ v1beta2 `{apiGroup, kind, name}`). Every other field
/// passes through unchanged; the real conversion webhook does much more.
pub fn capi_machine_conversion(obj: &mut Value, from: &str, to: &str) {
    let ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    match (from, to) {
        ("v1beta1", "v1beta2") => {
            if let Some(r) = obj.pointer_mut("/status/nodeRef")
                && r.is_object()
            {
                *r = json!({ "name": r.get("name").cloned().unwrap_or(Value::Null) });
            }
            if let Some(r) = obj.pointer_mut("/spec/infrastructureRef")
                && r.is_object()
            {
                let group = r
                    .get("apiVersion")
                    .and_then(Value::as_str)
                    .map(|a| a.rsplit_once('/').map_or("", |(g, _)| g).to_string())
                    .unwrap_or_default();
                *r = json!({
                    "apiGroup": group,
                    "kind": r.get("kind").cloned().unwrap_or(Value::Null),
                    "name": r.get("name").cloned().unwrap_or(Value::Null),
                });
            }
        }
        ("v1beta2", "v1beta1") => {
            if let Some(r) = obj.pointer_mut("/status/nodeRef")
                && r.is_object()
            {
                *r = json!({
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": r.get("name").cloned().unwrap_or(Value::Null),
                });
            }
            if let Some(r) = obj.pointer_mut("/spec/infrastructureRef")
                && r.is_object()
            {
                let group = r
                    .get("apiGroup")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                *r = json!({
                    "apiVersion": format!("{group}/v1beta1"),
                    "kind": r.get("kind").cloned().unwrap_or(Value::Null),
                    "name": r.get("name").cloned().unwrap_or(Value::Null),
                    "namespace": ns,
                });
            }
        }
        _ => {}
    }
}
