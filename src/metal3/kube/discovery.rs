//! Which of the kinds the family reads the management cluster serves, and in which version:
//! asked once per backend (the API groups below only), not every pass.

use ::kube::core::ApiResource;
use ::kube::discovery::{ApiGroup, Discovery, verbs};
use std::collections::BTreeMap;

pub(super) const CAPI: &str = "cluster.x-k8s.io";
pub(super) const INFRA: &str = "infrastructure.cluster.x-k8s.io";
pub(super) const METAL3: &str = "metal3.io";
pub(super) const OPENSHIFT: &str = "machine.openshift.io";
pub(super) const CONTROL_PLANE: &str = "controlplane.cluster.x-k8s.io";
pub(super) const REMEDIATION: &str = crate::metal3::objects::REMEDIATION_GROUP;

/// The groups discovery asks about: nothing else is queried.
pub(super) const GROUPS: &[&str] = &[CAPI, INFRA, METAL3, OPENSHIFT, CONTROL_PLANE, REMEDIATION];

/// Cluster API's versions, most preferred first: v1beta2 is the storage version since CAPI
/// 1.11; older management clusters serve only v1beta1. The fields the family reads
/// (`status.nodeRef.name`, `spec.infrastructureRef.kind/name`) are in both.
const CAPI_VERSIONS: &[&str] = &["v1beta2", "v1beta1"];

/// What the management cluster serves of the kinds the family reads (`None`: not served).
#[derive(Clone, Debug, Default)]
pub(super) struct Served {
    pub machines: Option<ApiResource>,
    pub openshift_machines: Option<ApiResource>,
    pub metal3_machines: Option<ApiResource>,
    pub hosts: Option<ApiResource>,
    /// MachineSets, MachineDeployments, Clusters and every `*ControlPlane` kind.
    pub scopes: Vec<ApiResource>,
    /// AutorepairRemediations (only where its CRD is installed).
    pub remediations: Option<ApiResource>,
}

impl Served {
    pub(super) fn from_discovery(d: &Discovery) -> Served {
        let group = |g: &str| d.get(g);
        let capi = |g: Option<&ApiGroup>, kind: &str| g.and_then(|g| pick(g, kind, CAPI_VERSIONS));
        let mut scopes: Vec<ApiResource> = ["MachineSet", "MachineDeployment", "Cluster"]
            .into_iter()
            .filter_map(|k| capi(group(CAPI), k))
            .collect();
        if let Some(g) = group(CONTROL_PLANE) {
            // Any provider's control plane (KubeadmControlPlane, RKE2ControlPlane, …), in
            // Cluster API's versions when it has them, else its most stable one: only its
            // metadata is read.
            let mut kinds: Vec<String> = g
                .resources_by_stability()
                .into_iter()
                .filter(|(ar, caps)| {
                    ar.kind.ends_with("ControlPlane") && caps.supports_operation(verbs::LIST)
                })
                .map(|(ar, _)| ar.kind)
                .collect();
            kinds.sort();
            for kind in kinds {
                let ar = pick(g, &kind, CAPI_VERSIONS).or_else(|| {
                    g.resources_by_stability()
                        .into_iter()
                        .find(|(ar, _)| ar.kind == kind)
                        .map(|(ar, _)| ar)
                });
                scopes.extend(ar);
            }
        }
        Served {
            machines: capi(group(CAPI), "Machine"),
            openshift_machines: group(OPENSHIFT).and_then(|g| pick(g, "Machine", &["v1beta1"])),
            metal3_machines: capi(group(INFRA), "Metal3Machine"),
            hosts: group(METAL3).and_then(|g| pick(g, "BareMetalHost", &["v1alpha1"])),
            scopes,
            remediations: group(REMEDIATION).and_then(|g| {
                pick(
                    g,
                    crate::metal3::objects::REMEDIATION_KIND,
                    &[crate::metal3::objects::REMEDIATION_VERSION],
                )
            }),
        }
    }
}

/// How long what discovery found is trusted: a `--loop` daemon makes a new backend every pass,
/// and asking every pass is seven requests and an INFO line each time for an answer that
/// changes only when a CRD is installed or removed. A kind found missing (404) forgets it at
/// once; one installed meanwhile is seen within this time.
const TRUSTED_FOR: std::time::Duration = std::time::Duration::from_secs(600);

/// What discovery found, by management cluster (its server URL), for this process.
static FOUND: std::sync::Mutex<BTreeMap<String, (Served, std::time::Instant)>> =
    std::sync::Mutex::new(BTreeMap::new());

fn found() -> std::sync::MutexGuard<'static, BTreeMap<String, (Served, std::time::Instant)>> {
    // A panic elsewhere while holding it leaves a map that is still whole.
    FOUND
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What discovery found on `server` less than [`TRUSTED_FOR`] ago, if anything.
pub(super) fn cached(server: &str) -> Option<Served> {
    found()
        .get(server)
        .filter(|(_, at)| at.elapsed() < TRUSTED_FOR)
        .map(|(served, _)| served.clone())
}

pub(super) fn remember(server: &str, served: &Served) {
    found().insert(
        server.to_owned(),
        (served.clone(), std::time::Instant::now()),
    );
}

/// Drops what was found on `server`: a kind it listed is not served any more.
pub(super) fn forget(server: &str) {
    found().remove(server);
}

/// The kind in the first of `versions` the group serves it in, if it can be listed.
fn pick(group: &ApiGroup, kind: &str, versions: &[&str]) -> Option<ApiResource> {
    versions.iter().find_map(|v| {
        group
            .versioned_resources(v)
            .into_iter()
            .find(|(ar, caps)| ar.kind == kind && caps.supports_operation(verbs::LIST))
            .map(|(ar, _)| ar)
    })
}
