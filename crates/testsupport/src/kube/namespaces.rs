//! Namespaces as kube-apiserver keeps them. Every Namespace created gets `status.phase:
//! Active`, the `kubernetes.io/metadata.name` label and the `kubernetes` finalizer. With
//! [`crate::kube::Builder::namespace_lifecycle`] also: the four namespaces a new cluster has,
//! no object created through the API in a namespace that does not exist (the
//! NamespaceLifecycle admission plugin's 404), and the namespace of what the test puts in with
//! [`crate::kube::FakeKube::insert`] made for it. (Without it, objects live in namespaces
//! nobody created, as most tests want: no extra writes.) Deleting a Namespace deletes nothing
//! inside it (no namespace controller runs).

use crate::kube::resource::{NAMESPACE, Resource};
use crate::kube::status::ApiError;
use crate::kube::store::{Store, WriteOpts};
use serde_json::{Value, json};

/// The namespaces kube-apiserver creates at start.
pub const SYSTEM: [&str; 4] = ["default", "kube-node-lease", "kube-public", "kube-system"];

/// Whether namespaces are kept as the apiserver keeps them (and Namespaces are served).
fn kept(store: &Store) -> bool {
    store.namespace_lifecycle && store.resources.iter().any(|r| same(r, &NAMESPACE))
}

fn same(a: &Resource, b: &Resource) -> bool {
    (a.group, a.plural) == (b.group, b.plural)
}

/// Whether `res` is the Namespace kind.
pub(crate) fn is_namespace(res: &Resource) -> bool {
    same(res, &NAMESPACE)
}

/// What the apiserver sets on a Namespace it creates.
pub(crate) fn defaults(obj: &mut Value) {
    let name = obj
        .pointer("/metadata/name")
        .cloned()
        .unwrap_or(Value::Null);
    if !obj["metadata"]["labels"].is_object() {
        obj["metadata"]["labels"] = json!({});
    }
    obj["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
    if obj.pointer("/spec/finalizers").is_none() {
        obj["spec"]["finalizers"] = json!(["kubernetes"]);
    }
    obj["status"]["phase"] = json!("Active");
}

/// Creates the Namespace `name` unless it exists (or namespaces are not [`kept`]).
pub(crate) fn ensure(store: &mut Store, name: &str) {
    if name.is_empty() || !kept(store) || store.get(&NAMESPACE, "", name).is_ok() {
        return;
    }
    let ns = json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name } });
    store
        .create(&NAMESPACE, "v1", None, ns, WriteOpts::default())
        .unwrap_or_else(|e| panic!("namespace {name}: {}", e.message));
}

/// The NamespaceLifecycle check of a create through the API: `namespaces "x" not found`.
pub(crate) fn admit_create(store: &Store, res: &Resource, ns: &str) -> Result<(), ApiError> {
    if !res.namespaced || !kept(store) || store.get(&NAMESPACE, "", ns).is_ok() {
        return Ok(());
    }
    Err(ApiError::not_found(&NAMESPACE, ns))
}
