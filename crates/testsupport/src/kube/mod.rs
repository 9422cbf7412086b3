//! A stateful fake Kubernetes API server for tests, driven through the real `kube` client.
//!
//! It serves JSON over HTTP (or HTTPS) on 127.0.0.1 with an ephemeral port, from a thread and
//! tokio runtime of its own, so both `#[test]` and `#[tokio::test]` functions can use it. Objects
//! live in memory as JSON; one global resourceVersion counter is bumped on every write;
//! optimistic concurrency, 404/409/410/415/422 Status bodies, finalizers, the status
//! subresource, label/field selectors and watches behave like kube-apiserver's. What is
//! simplified is listed in `docs/testing.md`.
//!
//! ```ignore
//! let kube = FakeKube::start();
//! kube.insert(machine("m1").namespace("ns").node_ref("n1"));
//! let client = kube.client(); // inside a tokio runtime
//! let api: Api<DynamicObject> = Api::namespaced_with(client, "ns", &MACHINE.api_resource());
//! ```

mod builders;
mod eviction;
mod fault;
mod namespaces;
mod resource;
mod selector;
mod server;
mod status;
mod store;
mod table;

pub use builders::{
    Obj, bare_metal_host, machine, machine_v1beta1, metal3_machine, metal3_remediation,
    namespace_object, node, object, object_at, openshift_machine, pod, pod_disruption_budget,
    secret,
};
pub use eviction::REFUSED as EVICTION_REFUSED;
pub use fault::Fault;
pub use namespaces::SYSTEM as SYSTEM_NAMESPACES;
pub use resource::*;
pub use selector::{FieldSelector, LabelSelector};
pub use status::ApiError;

use crate::serve::{Options, Server};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use store::{Key, Store, WriteOpts};

/// Converts an object between two served versions of a resource: `(object, from, to)`.
/// `apiVersion` is set by the server afterwards.
pub type Converter = Arc<dyn Fn(&mut Value, &str, &str) + Send + Sync>;

/// Runs after every create or update of its resource with the stored object (storage
/// version); what it returns is written back at once as a further change ("another
/// controller"). Reactors may trigger each other up to a small depth.
pub type Reactor = Arc<dyn Fn(&Value) -> Option<Value> + Send + Sync>;

/// One request the server received.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    /// URL path without the query.
    pub path: String,
    /// The raw query string.
    pub query: String,
    pub content_type: String,
    pub body: String,
    /// The bearer token it came with (empty: none): which client sent it.
    pub token: String,
}

/// Settings for [`FakeKube`]: resources served, converters, history size, TLS.
pub struct Builder {
    resources: Vec<Resource>,
    converters: HashMap<(&'static str, &'static str), Converter>,
    history: usize,
    tls: bool,
    namespace_lifecycle: bool,
}

impl Default for Builder {
    fn default() -> Self {
        let mut converters: HashMap<(&'static str, &'static str), Converter> = HashMap::new();
        converters.insert(
            (MACHINE.group, MACHINE.plural),
            Arc::new(capi_machine_conversion),
        );
        Builder {
            resources: DEFAULT_RESOURCES.to_vec(),
            converters,
            history: 1000,
            tls: false,
            namespace_lifecycle: false,
        }
    }
}

impl Builder {
    /// Serve only these resources (instead of [`DEFAULT_RESOURCES`]).
    pub fn resources(mut self, resources: &[Resource]) -> Builder {
        self.resources = resources.to_vec();
        self
    }

    /// Serve one more resource (in place of a served one of the same group and plural).
    pub fn resource(mut self, res: Resource) -> Builder {
        match self
            .resources
            .iter_mut()
            .find(|r| (r.group, r.plural) == (res.group, res.plural))
        {
            Some(r) => *r = res,
            None => self.resources.push(res),
        }
        self
    }

    /// Convert `res` between its versions with `f(object, from, to)` (default: apiVersion
    /// only, except CAPI Machines: [`capi_machine_conversion`]).
    pub fn converter(
        mut self,
        res: &Resource,
        f: impl Fn(&mut Value, &str, &str) + Send + Sync + 'static,
    ) -> Builder {
        self.converters.insert((res.group, res.plural), Arc::new(f));
        self
    }

    /// Keep the last `n` changes for watches that resume from a resourceVersion (default
    /// 1000); a watch from before them gets a 410 Expired ERROR event.
    pub fn history(mut self, n: usize) -> Builder {
        self.history = n;
        self
    }

    /// Serve HTTPS with the certificate in `testdata/` (127.0.0.1 and localhost);
    /// [`FakeKube::config`] trusts it.
    pub fn tls(mut self) -> Builder {
        self.tls = true;
        self
    }

    /// Namespaces as a real cluster has them (see `namespaces.rs`): `default`, `kube-system`,
    /// `kube-public` and `kube-node-lease` from the start, the namespace of each object
    /// [`FakeKube::insert`] puts in created with it, and a create through the API in a
    /// namespace that does not exist refused (404 `namespaces "x" not found`). Off by
    /// default: objects then live in namespaces nobody created.
    pub fn namespace_lifecycle(mut self) -> Builder {
        self.namespace_lifecycle = true;
        self
    }

    /// Binds 127.0.0.1:0 and starts serving.
    pub fn start(self) -> FakeKube {
        let store = Store::new(
            self.resources,
            self.converters,
            self.history,
            self.namespace_lifecycle,
        );
        let shared = Arc::new(Mutex::new(store));
        let tls = self
            .tls
            .then(|| crate::serve::tls_config(rustls::DEFAULT_VERSIONS));
        let ca = tls.is_some().then(|| {
            use rustls::pki_types::CertificateDer;
            use rustls::pki_types::pem::PemObject;
            let cert = CertificateDer::from_pem_slice(crate::serve::CA_PEM.as_bytes());
            cert.expect("testdata/server.crt").to_vec()
        });
        let options = Options {
            name: "fake-kube",
            tls,
            one_request_per_connection: false,
        };
        let s = shared.clone();
        let server = Server::start(options, move |addr| {
            let addr = addr.to_string();
            move |req| server::handle(s.clone(), req, addr.clone())
        });
        FakeKube { server, ca, shared }
    }
}

/// A running fake API server and the test's handle on its state. Dropping it stops the
/// server and ends its watches.
pub struct FakeKube {
    server: Server,
    ca: Option<Vec<u8>>,
    shared: server::Shared,
}

impl Drop for FakeKube {
    /// Ends the watches; dropping the server then stops it.
    fn drop(&mut self) {
        if let Ok(mut s) = self.shared.lock() {
            s.watchers.clear();
        }
    }
}

impl FakeKube {
    /// Plain HTTP, [`DEFAULT_RESOURCES`].
    pub fn start() -> FakeKube {
        Builder::default().start()
    }

    pub fn builder() -> Builder {
        Builder::default()
    }

    /// `http://127.0.0.1:PORT` (or https).
    pub fn url(&self) -> &str {
        self.server.url()
    }

    /// A kube `Config` for this server: no credentials, namespace `default`, and the
    /// server's certificate as the only root when serving HTTPS.
    pub fn config(&self) -> kube::Config {
        let mut c = kube::Config::new(self.url().parse().expect("server URL"));
        if let Some(ca) = &self.ca {
            c.root_cert = Some(vec![ca.clone()]);
        }
        c
    }

    /// A kube `Client` for this server. Call it inside a tokio runtime (kube spawns a task).
    pub fn client(&self) -> kube::Client {
        kube::Client::try_from(self.config()).expect("kube client for the fake server")
    }

    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.shared.lock().expect("fake-kube store lock")
    }

    /// Creates an object as if a client had (server fields set, ADDED event), keeping any
    /// `status` it has. The resource is found from `apiVersion` and `kind`. Returns it as
    /// stored. Panics if the kind is not served or the object cannot be created.
    ///
    /// With [`Builder::namespace_lifecycle`], the namespace of a namespaced object is created
    /// first if it does not exist, and a Namespace that exists already (made that way, or
    /// one of [`SYSTEM_NAMESPACES`]) takes the labels, annotations and spec of the one
    /// inserted.
    pub fn insert(&self, obj: impl Into<Value>) -> Value {
        let obj = obj.into();
        let api_version = obj["apiVersion"].as_str().unwrap_or_default().to_string();
        let kind = obj["kind"].as_str().unwrap_or_default().to_string();
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map(str::to_string);
        let mut store = self.store();
        let (res, version) = store
            .resource_for(&api_version, &kind)
            .unwrap_or_else(|| panic!("fake-kube serves no {kind} in {api_version}"));
        let ns = if res.namespaced {
            Some(ns.unwrap_or_else(|| "default".into()))
        } else {
            None
        };
        if let Some(ns) = &ns {
            namespaces::ensure(&mut store, ns);
        }
        if store.namespace_lifecycle && namespaces::is_namespace(&res) {
            let name = obj
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let key = Key::new(&res, "", name);
            if let Some(updated) = store.write_behind(&res, &key, |existing| {
                for k in ["labels", "annotations"] {
                    if let Some(v) = obj["metadata"].get(k).and_then(Value::as_object) {
                        for (k2, v2) in v {
                            existing["metadata"][k][k2] = v2.clone();
                        }
                    }
                }
                if let Some(spec) = obj.get("spec") {
                    existing["spec"] = spec.clone();
                }
            }) {
                return updated;
            }
        }
        store
            .create(&res, version, ns.as_deref(), obj, WriteOpts::default())
            .unwrap_or_else(|e| panic!("insert {kind}: {}", e.message))
    }

    /// The object as stored (storage version), if it exists. `ns` is ignored for
    /// cluster-scoped kinds.
    pub fn get(&self, res: &Resource, ns: &str, name: &str) -> Option<Value> {
        self.store().get(res, ns, name).ok()
    }

    /// One annotation of an object, if both exist.
    pub fn annotation(&self, res: &Resource, ns: &str, name: &str, key: &str) -> Option<String> {
        self.get(res, ns, name)?
            .pointer("/metadata/annotations")?
            .get(key)?
            .as_str()
            .map(str::to_string)
    }

    /// Every object of a kind, in namespace/name order.
    pub fn objects(&self, res: &Resource) -> Vec<Value> {
        let store = self.store();
        store
            .select(
                res,
                None,
                &LabelSelector::default(),
                &FieldSelector::default(),
            )
            .into_iter()
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Changes an object "behind the client's back", as another controller or a person
    /// would: new resourceVersion, MODIFIED event (DELETED if it removes the last finalizer
    /// of an object being deleted); no precondition, no status-subresource rule. Returns the
    /// object after the change. Panics if it does not exist.
    pub fn mutate(
        &self,
        res: &Resource,
        ns: &str,
        name: &str,
        f: impl FnOnce(&mut Value),
    ) -> Value {
        let key = Key::new(res, ns, name);
        self.store()
            .write_behind(res, &key, f)
            .unwrap_or_else(|| panic!("mutate: no {} {ns}/{name}", res.kind))
    }

    /// Deletes an object as a client's DELETE does: at once without finalizers; with some,
    /// marked (`deletionTimestamp`, MODIFIED event) until the last one goes.
    pub fn delete(&self, res: &Resource, ns: &str, name: &str) -> Result<Value, ApiError> {
        let opts = store::WriteOpts {
            dry_run: false,
            via_api: false,
        };
        self.store().delete(res, ns, name, None, opts)
    }

    /// Deletes an object at once, finalizers or not (DELETED event).
    pub fn remove(&self, res: &Resource, ns: &str, name: &str) -> Option<Value> {
        self.store().remove(res, ns, name)
    }

    /// Runs `f` after every create or update of `res` (see [`Reactor`]), e.g. a fake BMO that
    /// powers a host off when a reboot annotation appears.
    pub fn react(
        &self,
        res: &Resource,
        f: impl Fn(&Value) -> Option<Value> + Send + Sync + 'static,
    ) {
        self.store().reactors.push((*res, Arc::new(f)));
    }

    /// Injects a fault (see [`Fault`]). Faults are tried in the order added; each request
    /// uses up at most one.
    pub fn fault(&self, f: Fault) {
        let times = f.times;
        self.store().faults.push(f, times);
    }

    /// How many injected faults still wait for a request.
    pub fn pending_faults(&self) -> usize {
        self.store().faults.pending()
    }

    /// The current (last written) resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.store().rv
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.store().requests.clone()
    }

    /// The requests that were not reads (POST, PUT, PATCH, DELETE).
    pub fn writes(&self) -> Vec<RecordedRequest> {
        self.store()
            .requests
            .iter()
            .filter(|r| r.method != "GET")
            .cloned()
            .collect()
    }

    pub fn clear_requests(&self) {
        self.store().requests.clear();
    }

    /// Ends every open watch (the client sees its stream close, as when the apiserver
    /// closes a watch at its timeout).
    pub fn close_watches(&self) {
        self.store().watchers.clear();
    }

    /// How many watches are open.
    pub fn open_watches(&self) -> usize {
        let mut s = self.store();
        s.watchers.retain(|w| !w.tx.is_closed());
        s.watchers.len()
    }

    /// Forgets the change history (like etcd compaction): a watch from an earlier
    /// resourceVersion gets a 410 Expired ERROR event.
    pub fn compact(&self) {
        self.store().compact();
    }
}
