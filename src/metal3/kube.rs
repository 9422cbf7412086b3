//! The live-cluster backend: the metal3 family against Kubernetes API servers, through the
//! `kube` client. What it reads and writes is what [`super::file::ObjectsFile`] reads and
//! writes in a file; `file.rs`'s `apply()` is the reference for what every [`Op`] does.
//!
//! - **Reading.** Discovery once per backend (the metal3 and Cluster API groups only); then,
//!   every pass, one paginated LIST per kind, all at once: Machines (Cluster API v1beta2, else
//!   v1beta1; OpenShift Machines too when served), BareMetalHosts, Nodes, and the metadata only
//!   of Metal3Machines, MachineSets, MachineDeployments, Clusters and every `*ControlPlane`
//!   kind; Pods only on cordoned Nodes, per Node. Kinds that are not served are skipped.
//!   `docs/metal3-kube.md` lists the requests.
//! - **Writing.** Every write is conditioned on what the pass read: a JSON merge patch carrying
//!   the object's `metadata.resourceVersion`, a DELETE with a uid (and resourceVersion)
//!   precondition, an eviction with the Pod's uid. The resourceVersion each write returns
//!   replaces the one read, so the next write on the same object in the same pass does not
//!   conflict with our own. A 409 is never retried: the object changed since the pass read it,
//!   so the plan may be wrong for it; the error says so ([`is_conflict`]) and the next pass
//!   re-reads and re-plans. The client's own retries are off for the same reason.
//! - **Workload clusters.** Nodes (and Pods) are read and written where they live: by default
//!   the management cluster itself; with [`Workload::ClusterSecrets`], each Cluster's workload
//!   cluster through the kubeconfig Cluster API keeps in the Secret `<cluster>-kubeconfig`.
//!   A Machine whose workload cluster cannot be read loses its Node reference for the pass
//!   (reported in [`Snapshot::problems`]): nothing is started on its Node's health, and a power
//!   cycle under way powers its host back on instead of waiting for a Node it cannot see.
//!
//! The backend owns a current-thread tokio runtime and blocks on it, so its methods must not be
//! called from inside another tokio runtime.

mod discovery;
mod events;
mod taint;
pub mod watch;
pub mod workload;

// Generic Kubernetes code, where it was before it served more than this family.
pub use crate::k8s::lease;

pub use crate::k8s::Source;
pub use crate::k8s::errors::{CONFLICT_HINT, is_conflict};

use super::objects::{self, REBOOT_KEY, REQUEST_KEY, REQUEST_KEYS, Snapshot, kind};
use super::{Metal3, Op, OpId, Step, marks};
use crate::engine::{Backend, BackendError, ObjectRef, WriteGuard};
use crate::k8s::client::{build, load, runtime};
use crate::k8s::drain::{self, Cordon, Drainer, Outcome};
use crate::k8s::errors::{Call, from_kube, nonsense};
use crate::k8s::resource_name;
use ::kube::api::{
    DeleteParams, DynamicObject, GetParams, ListParams, Patch, PatchParams, Preconditions,
};
use ::kube::core::{ApiResource, Request};
use ::kube::{Client, Config, Resource};
use discovery::Served;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

/// Where the Nodes of the Machines are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Workload {
    /// In the management cluster itself (a self-managed cluster, or OpenShift).
    #[default]
    Management,
    /// In each Cluster's workload cluster, reached with the kubeconfig in the Secret
    /// `<cluster>-kubeconfig` (data key `value`) in the Cluster's namespace. OpenShift
    /// Machines' Nodes are in the management cluster whatever this says.
    ClusterSecrets,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub workload: Workload,
    /// Objects per LIST page (`limit`).
    pub page_size: u32,
    /// How long one request may take.
    pub timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            workload: Workload::Management,
            page_size: 500,
            timeout: Duration::from_secs(30),
        }
    }
}

/// A cluster the backend talks to.
struct Endpoint {
    client: Client,
    /// Its URL, for messages.
    server: String,
}

/// What a list brings of each object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Whole,
    /// Metadata only (`PartialObjectMetadata`): enough for kinds whose annotations, labels and
    /// owners are all the family reads, and much less to send and parse.
    Metadata,
}

/// Which cluster an object lives in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Home {
    Management,
    /// A workload cluster, by its Cluster's `NAMESPACE/NAME`.
    Workload(String),
}

/// What the pass read of an object it may write: enough to condition the write on it.
#[derive(Clone, Debug)]
struct Live {
    api: Arc<ApiResource>,
    home: Home,
    namespace: Option<String>,
    name: String,
    resource_version: String,
    uid: String,
    annotations: BTreeMap<String, String>,
    labels: BTreeMap<String, String>,
}

/// The metal3 family's backend on live clusters.
pub struct KubeBackend {
    rt: tokio::runtime::Runtime,
    inner: Inner,
}

struct Inner {
    options: Options,
    mgmt: Endpoint,
    /// Asked once, on the first pass.
    served: Option<Served>,
    /// Workload clusters' clients, with the uid and resourceVersion of the Secret they were
    /// built from (a rotated kubeconfig makes a new client).
    workloads: HashMap<String, (String, Endpoint)>,
    /// The objects of the last snapshot that writes may address.
    live: HashMap<ObjectRef, Live>,
    /// Clusters whose API server refused a Pod field selector: Pods are listed whole there.
    whole_pod_lists: HashSet<Home>,
    /// Asked before every write ([`Backend::guard_writes`]).
    guard: Option<WriteGuard>,
}

impl KubeBackend {
    /// Connects to the management cluster named by a kubeconfig, or the one it runs in.
    pub fn connect(source: &Source, options: Options) -> Result<Self, BackendError> {
        let rt = runtime()?;
        let config = rt.block_on(load(source))?;
        Self::with_runtime(rt, config, options)
    }

    /// Connects with a client configuration (the tests' fake server gives one).
    pub fn from_config(config: Config, options: Options) -> Result<Self, BackendError> {
        Self::with_runtime(runtime()?, config, options)
    }

    fn with_runtime(
        rt: tokio::runtime::Runtime,
        config: Config,
        options: Options,
    ) -> Result<Self, BackendError> {
        // kube spawns the client's worker on the runtime current when it is built: ours.
        let (client, server) = {
            let _entered = rt.enter();
            build(config, options.timeout)?
        };
        Ok(Self::assemble(rt, Endpoint { client, server }, options))
    }

    /// Uses an existing client, named `server` in messages. Its retries and timeouts are the
    /// caller's; its background worker runs on the runtime it was built on, which must keep
    /// running (a multi-thread runtime) while this backend is used.
    pub fn from_client(
        client: Client,
        server: impl Into<String>,
        options: Options,
    ) -> Result<Self, BackendError> {
        let endpoint = Endpoint {
            client,
            server: server.into(),
        };
        Ok(Self::assemble(runtime()?, endpoint, options))
    }

    fn assemble(rt: tokio::runtime::Runtime, mgmt: Endpoint, options: Options) -> Self {
        KubeBackend {
            rt,
            inner: Inner {
                options,
                mgmt,
                served: None,
                workloads: HashMap::new(),
                live: HashMap::new(),
                whole_pod_lists: HashSet::new(),
                guard: None,
            },
        }
    }

    /// The management cluster's URL.
    pub fn server(&self) -> &str {
        &self.inner.mgmt.server
    }
}

/// `machines.cluster.x-k8s.io`, `nodes`: how the API server names a resource in messages.
fn core(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: String::new(),
        version: "v1".into(),
        api_version: "v1".into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

fn text<'a>(v: &'a Value, path: &str) -> Option<&'a str> {
    super::objects::pointer(v, path).and_then(Value::as_str)
}

fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// The marks' `key=value` texts as annotation keys and values.
fn pairs(marks: &[String]) -> impl Iterator<Item = (&str, &str)> {
    marks.iter().map(|m| marks::split(m))
}

impl Inner {
    fn endpoint(&self, home: &Home) -> Option<&Endpoint> {
        match home {
            Home::Management => Some(&self.mgmt),
            Home::Workload(key) => self.workloads.get(key).map(|(_, e)| e),
        }
    }

    fn call<'a>(
        &self,
        method: &'static str,
        server: &'a str,
        path: &'a str,
        what: &'a str,
    ) -> Call<'a> {
        Call {
            method,
            server,
            path,
            object: None,
            what,
            version: None,
            timeout: self.options.timeout,
        }
    }

    /// Every object of a kind, page by page (only their metadata if `part` says so); `None`
    /// when the kind is not served.
    async fn list(
        &self,
        home: &Home,
        ar: &ApiResource,
        field_selector: Option<&str>,
        part: Part,
    ) -> Result<Option<Vec<Value>>, BackendError> {
        let ep = self
            .endpoint(home)
            .expect("lists address clusters with a client");
        let request = Request::new(DynamicObject::url_path(ar, None));
        let what = resource_name(ar);
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut lp = ListParams::default().limit(self.options.page_size);
            if let Some(f) = field_selector {
                lp = lp.fields(f);
            }
            if let Some(t) = &token {
                lp = lp.continue_token(t);
            }
            let req = match part {
                Part::Whole => request.list(&lp),
                Part::Metadata => request.list_metadata(&lp),
            }
            .map_err(|e| BackendError::Api(format!("cannot list {what}: {e}")))?;
            let path = req.uri().to_string();
            let call = self.call("GET", &ep.server, &path, &what);
            let body = match ep.client.request_text(req).await {
                Ok(body) => body,
                // Not served (a CRD that is not installed, or went since discovery).
                Err(::kube::Error::Api(s)) if s.code == 404 && token.is_none() => {
                    tracing::debug!(server = %ep.server, resource = %what, "not served: skipped");
                    // What discovery found is out of date: the next backend asks again.
                    discovery::forget(&ep.server);
                    return Ok(None);
                }
                Err(e) => return Err(from_kube(e, &call)),
            };
            let mut page: Value = serde_json::from_str(&body)
                .map_err(|e| nonsense(&call, &format!("not JSON: {e}")))?;
            let items = match page.get_mut("items").map(Value::take) {
                Some(Value::Array(items)) => items,
                Some(Value::Null) => Vec::new(),
                _ => {
                    return Err(nonsense(
                        &call,
                        "a list has an \"items\" array, this answer has none",
                    ));
                }
            };
            for mut item in items {
                let Some(obj) = item.as_object_mut() else {
                    return Err(nonsense(&call, "an item of the list is not an object"));
                };
                // Items of built-in lists carry no apiVersion and kind.
                obj.insert("apiVersion".into(), json!(ar.api_version));
                obj.insert("kind".into(), json!(ar.kind));
                // Never read, and often most of an object: the snapshot copies what it keeps.
                if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.remove("managedFields");
                }
                if ar.kind == "Node"
                    && let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut)
                {
                    // The images a Node holds: tens of kilobytes each.
                    status.remove("images");
                }
                out.push(item);
            }
            token = text(&page, "/metadata/continue")
                .filter(|t| !t.is_empty())
                .map(str::to_owned);
            if token.is_none() {
                break;
            }
        }
        tracing::debug!(server = %ep.server, resource = %what, count = out.len(), "listed");
        Ok(Some(out))
    }

    /// A served kind's objects, with its resource; `None` when it is not served.
    async fn list_served(
        &self,
        ar: Option<&ApiResource>,
        part: Part,
    ) -> Result<Option<(Arc<ApiResource>, Vec<Value>)>, BackendError> {
        let Some(ar) = ar else { return Ok(None) };
        Ok(self
            .list(&Home::Management, ar, None, part)
            .await?
            .map(|items| (Arc::new(ar.clone()), items)))
    }

    async fn list_scopes(
        &self,
        scopes: &[ApiResource],
    ) -> Result<Vec<(Arc<ApiResource>, Vec<Value>)>, BackendError> {
        let mut out = Vec::new();
        for ar in scopes {
            // A Cluster's `spec.paused` holds its Machines back: read whole. The other scopes
            // carry only marks and owners.
            let part = if ar.kind == "Cluster" {
                Part::Whole
            } else {
                Part::Metadata
            };
            out.extend(self.list_served(Some(ar), part).await?);
        }
        Ok(out)
    }

    /// Remembers an object the pass may write.
    fn remember(&mut self, object: ObjectRef, api: &Arc<ApiResource>, home: Home, item: &Value) {
        let meta = item.get("metadata");
        let field = |k: &str| {
            meta.and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        self.live.insert(
            object,
            Live {
                api: api.clone(),
                home,
                namespace: meta
                    .and_then(|m| m.get("namespace"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                name: field("name"),
                resource_version: field("resourceVersion"),
                uid: field("uid"),
                annotations: string_map(meta.and_then(|m| m.get("annotations"))),
                labels: string_map(meta.and_then(|m| m.get("labels"))),
            },
        );
    }

    async fn read(&mut self) -> Result<Snapshot, BackendError> {
        let mut from_cache = false;
        if self.served.is_none() {
            self.served = discovery::cached(&self.mgmt.server);
            from_cache = self.served.is_some();
        }
        if self.served.is_none() {
            let served = self.discover().await?;
            discovery::remember(&self.mgmt.server, &served);
            self.served = Some(served);
        }
        let snap = self.read_served().await?;
        // A kind the cached answer named was not served (a CRD removed, or another server at
        // the same address): discovery is asked again and the pass reads with its answer, so
        // nothing is missed for a stale cache.
        if from_cache && discovery::cached(&self.mgmt.server).is_none() {
            let served = self.discover().await?;
            discovery::remember(&self.mgmt.server, &served);
            self.served = Some(served);
            return self.read_served().await;
        }
        Ok(snap)
    }

    async fn read_served(&mut self) -> Result<Snapshot, BackendError> {
        let served = self.served.clone().expect("discovered");
        self.live.clear();
        let mut items: Vec<Value> = Vec::new();
        let mut problems: Vec<(String, String)> = Vec::new();
        let mgmt = Home::Management;

        // Every list at once: the server's work on one overlaps ours on another. The
        // management cluster's Nodes are listed with them when every Node lives there.
        let node_api = core("Node", "nodes");
        let nodes_here = self.options.workload == Workload::Management;
        let (capi, openshift, metal3_machines, hosts, scopes, management_nodes) = tokio::try_join!(
            self.list_served(served.machines.as_ref(), Part::Whole),
            self.list_served(served.openshift_machines.as_ref(), Part::Whole),
            // Only their host link annotation is read.
            self.list_served(served.metal3_machines.as_ref(), Part::Metadata),
            self.list_served(served.hosts.as_ref(), Part::Whole),
            self.list_scopes(&served.scopes),
            async {
                if nodes_here {
                    self.list(&mgmt, &node_api, None, Part::Whole).await
                } else {
                    Ok(None)
                }
            },
        )?;

        // Machines: Cluster API first; an OpenShift Machine of the same name is left out.
        let mut machine_items: Vec<(Value, bool)> = Vec::new();
        for (listed, openshift) in [(capi, false), (openshift, true)] {
            let Some((api, listed)) = listed else {
                continue;
            };
            for item in listed {
                let key = namespaced(&item);
                let object = ObjectRef::new(kind::MACHINE, key.clone());
                if self.live.contains_key(&object) {
                    problems.push((
                        format!("Machine {key} ({})", api.api_version),
                        "a Cluster API Machine has the same namespace and name: left out".into(),
                    ));
                    continue;
                }
                self.remember(object, &api, mgmt.clone(), &item);
                machine_items.push((item, openshift));
            }
        }
        if let Some((_, listed)) = metal3_machines {
            items.extend(listed);
        }
        if let Some((api, listed)) = hosts {
            for item in listed {
                let object = ObjectRef::new(kind::HOST, namespaced(&item));
                self.remember(object, &api, mgmt.clone(), &item);
                items.push(item);
            }
        }
        for (api, listed) in scopes {
            let scope = scope_kind(&api.kind);
            for item in listed {
                let object = ObjectRef::new(scope, namespaced(&item));
                self.remember(object, &api, mgmt.clone(), &item);
                items.push(item);
            }
        }

        // Nodes, where each Machine's Node lives.
        let homes: Vec<Option<Home>> = machine_items
            .iter()
            .map(|(m, openshift)| match (self.options.workload, openshift) {
                (Workload::Management, _) | (_, true) => Some(Home::Management),
                (Workload::ClusterSecrets, false) => cluster_of(m).map(Home::Workload),
            })
            .collect();
        let (nodes, unreadable) = self
            .read_nodes(&machine_items, &homes, management_nodes)
            .await?;
        // A Node named by Machines of two clusters cannot be told apart: neither is used.
        let mut claimed: HashMap<&str, HashSet<&Home>> = HashMap::new();
        for ((m, _), home) in machine_items.iter().zip(&homes) {
            if let (Some(node), Some(home)) = (text(m, "/status/nodeRef/name"), home) {
                claimed.entry(node).or_default().insert(home);
            }
        }
        let ambiguous: HashSet<String> = claimed
            .iter()
            .filter(|(_, homes)| homes.len() > 1)
            .map(|(n, _)| (*n).to_owned())
            .collect();
        let node_api = Arc::new(node_api);
        let mut cordoned: Vec<(Home, String)> = Vec::new();
        for (home, item) in nodes {
            let name = text(&item, "/metadata/name").unwrap_or_default().to_owned();
            if ambiguous.contains(&name) {
                continue;
            }
            if item.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true)
                && claimed.contains_key(name.as_str())
            {
                cordoned.push((home.clone(), name.clone()));
            }
            self.remember(ObjectRef::new(kind::NODE, name), &node_api, home, &item);
            items.push(item);
        }
        let mut nodes_unknown = std::collections::BTreeSet::new();
        for ((mut m, _), home) in machine_items.into_iter().zip(homes) {
            let node = text(&m, "/status/nodeRef/name").map(str::to_owned);
            // Its Nodes were not looked at: one missing from the snapshot may exist.
            let unknown = match &home {
                None => true,
                Some(Home::Workload(c)) => unreadable.contains_key(c),
                Some(Home::Management) => false,
            } || [node.as_deref(), tainted_node(&m)]
                .into_iter()
                .flatten()
                .any(|n| ambiguous.contains(n));
            if unknown {
                nodes_unknown.insert(namespaced(&m));
            }
            let why = match (&node, &home) {
                (None, _) => None,
                (Some(n), _) if ambiguous.contains(n) => Some(format!(
                    "its Node {n} has namesakes in other workload clusters, so it cannot be told apart"
                )),
                (Some(_), None) => Some(
                    "it names no Cluster (label cluster.x-k8s.io/cluster-name or spec.clusterName), so its workload cluster is unknown".to_owned(),
                ),
                (Some(_), Some(Home::Workload(c))) => unreadable
                    .get(c)
                    .map(|e| format!("its workload cluster {c} cannot be read: {e}")),
                (Some(_), Some(Home::Management)) => None,
            };
            if let Some(why) = why {
                problems.push((
                    format!("Machine {}", namespaced(&m)),
                    format!(
                        "{why}. Its Node is not looked at this pass: no repair starts on its Node's health, and a power cycle under way on it powers its host back on without deleting the Node"
                    ),
                ));
                if let Some(status) = m.get_mut("status").and_then(Value::as_object_mut) {
                    status.remove("nodeRef");
                }
            }
            items.push(m);
        }

        // Pods only where a drain can be under way: a drained Node is cordoned first.
        for (home, node) in cordoned {
            items.extend(self.pods_on(&home, &node).await?);
        }

        let mut snap = Snapshot::from_items(&items);
        snap.problems.extend(problems);
        snap.nodes_unknown = nodes_unknown;
        Ok(snap)
    }

    async fn discover(&self) -> Result<Served, BackendError> {
        let d = ::kube::Discovery::new(self.mgmt.client.clone())
            .filter(discovery::GROUPS)
            .run()
            .await
            .map_err(|e| {
                let call = self.call(
                    "GET",
                    &self.mgmt.server,
                    "/apis",
                    "API discovery of the Cluster API and metal3 groups",
                );
                from_kube(e, &call)
            })?;
        let served = Served::from_discovery(&d);
        tracing::info!(
            server = %self.mgmt.server,
            machines = ?served.machines.as_ref().map(|a| &a.api_version),
            openshift_machines = served.openshift_machines.is_some(),
            metal3_machines = ?served.metal3_machines.as_ref().map(|a| &a.api_version),
            hosts = served.hosts.is_some(),
            scopes = ?served.scopes.iter().map(|a| format!("{}/{}", a.api_version, a.kind)).collect::<Vec<_>>(),
            "discovered"
        );
        Ok(served)
    }

    /// The Nodes of every cluster some Machine lives in, with their cluster; and the workload
    /// clusters that could not be read, with why.
    async fn read_nodes(
        &mut self,
        machines: &[(Value, bool)],
        homes: &[Option<Home>],
        management_nodes: Option<Vec<Value>>,
    ) -> Result<(Vec<(Home, Value)>, HashMap<String, String>), BackendError> {
        let node_api = core("Node", "nodes");
        let mut out = Vec::new();
        let mut unreadable = HashMap::new();
        let wanted: HashSet<&Home> = homes.iter().flatten().collect();
        // The Node a Machine names, and the one autorepair tainted for it (the same, unless
        // the Machine names another since): both must be seen for the taint's sake.
        let named: HashSet<(&Home, &str)> = machines
            .iter()
            .zip(homes)
            .filter_map(|((m, _), h)| Some((h.as_ref()?, m)))
            .flat_map(|(h, m)| {
                [text(m, "/status/nodeRef/name"), tainted_node(m)]
                    .into_iter()
                    .flatten()
                    .map(move |n| (h, n))
            })
            .collect();
        let all_management = self.options.workload == Workload::Management;
        let management_nodes = match management_nodes {
            Some(nodes) => nodes,
            None if wanted.contains(&Home::Management) => self
                .list(&Home::Management, &node_api, None, Part::Whole)
                .await?
                .unwrap_or_default(),
            None => Vec::new(),
        };
        out.extend(management_nodes.into_iter().map(|n| (Home::Management, n)));
        let mut clusters: Vec<&String> = wanted
            .iter()
            .filter_map(|h| match h {
                Home::Workload(c) => Some(c),
                Home::Management => None,
            })
            .collect();
        clusters.sort();
        for cluster in clusters {
            let home = Home::Workload(cluster.clone());
            let nodes = match self.connect_workload(cluster).await {
                Ok(()) => self.list(&home, &node_api, None, Part::Whole).await,
                Err(e) => Err(e),
            };
            match nodes {
                Ok(nodes) => out.extend(
                    nodes
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|n| {
                            named.contains(&(&home, text(n, "/metadata/name").unwrap_or_default()))
                        })
                        .map(|n| (home.clone(), n)),
                ),
                Err(e) => {
                    tracing::warn!(cluster = %cluster, error = %e, "workload cluster not read");
                    unreadable.insert(cluster.clone(), e.to_string());
                }
            }
        }
        if !all_management {
            // In the management cluster only the Nodes OpenShift Machines name are theirs.
            out.retain(|(home, n)| {
                *home != Home::Management
                    || named.contains(&(home, text(n, "/metadata/name").unwrap_or_default()))
            });
        }
        Ok((out, unreadable))
    }

    /// Makes sure the workload cluster `NAMESPACE/NAME` has a client made from its current
    /// kubeconfig Secret.
    async fn connect_workload(&mut self, cluster: &str) -> Result<(), BackendError> {
        let (ns, name) = cluster.split_once('/').unwrap_or(("", cluster));
        let secret_name = format!("{name}-kubeconfig");
        let secret_api = core("Secret", "secrets");
        let req = Request::new(DynamicObject::url_path(&secret_api, Some(ns)))
            .get(&secret_name, &GetParams::default())
            .map_err(|e| {
                BackendError::Api(format!("cannot read Secret {ns}/{secret_name}: {e}"))
            })?;
        let path = req.uri().to_string();
        let what = format!("Secret {ns}/{secret_name}");
        let call = self.call("GET", &self.mgmt.server, &path, &what);
        let body = match self.mgmt.client.request_text(req).await {
            Ok(b) => b,
            Err(::kube::Error::Api(s)) if s.code == 404 => {
                return Err(BackendError::Api(format!(
                    "there is no Secret {ns}/{secret_name} with its kubeconfig"
                )));
            }
            Err(e) => return Err(from_kube(e, &call)),
        };
        // Typed, so that `data` arrives decoded; the text is never logged.
        let secret: k8s_openapi::api::core::v1::Secret =
            serde_json::from_str(&body).map_err(|_| nonsense(&call, "not a Secret"))?;
        let version = format!(
            "{}/{}",
            secret.metadata.uid.unwrap_or_default(),
            secret.metadata.resource_version.unwrap_or_default()
        );
        if self
            .workloads
            .get(cluster)
            .is_some_and(|(v, _)| *v == version)
        {
            return Ok(());
        }
        let value = secret
            .data
            .as_ref()
            .and_then(|d| d.get("value"))
            .map(|b| b.0.as_slice());
        let refused = |e: workload::KubeconfigError| {
            BackendError::Api(format!("Secret {ns}/{secret_name}: {e}"))
        };
        let kc = workload::parse(value).map_err(refused)?;
        let config = workload::config(kc).await.map_err(refused)?;
        let (client, server) = build(config, self.options.timeout)?;
        tracing::info!(cluster = %cluster, server = %server, "workload cluster client made from its kubeconfig Secret");
        self.workloads
            .insert(cluster.to_owned(), (version, Endpoint { client, server }));
        Ok(())
    }

    /// The Pods bound to a Node, by field selector; where the server cannot select Pods by
    /// Node, all Pods, filtered here.
    async fn pods_on(&mut self, home: &Home, node: &str) -> Result<Vec<Value>, BackendError> {
        let pods = core("Pod", "pods");
        let listed = if self.whole_pod_lists.contains(home) {
            self.list(home, &pods, None, Part::Whole).await?
        } else {
            let selector = format!("spec.nodeName={node}");
            match self.list(home, &pods, Some(&selector), Part::Whole).await {
                Err(BackendError::Http {
                    status: 400,
                    message,
                    ..
                }) if message.contains("field label not supported") => {
                    tracing::warn!(
                        ?home,
                        "the API server cannot select Pods by Node: they are listed whole"
                    );
                    self.whole_pod_lists.insert(home.clone());
                    self.list(home, &pods, None, Part::Whole).await?
                }
                other => other?,
            }
        };
        Ok(listed
            .unwrap_or_default()
            .into_iter()
            .filter(|p| text(p, "/spec/nodeName") == Some(node))
            .collect())
    }

    fn live(&self, object: &ObjectRef) -> Result<&Live, BackendError> {
        self.live
            .get(object)
            .ok_or_else(|| BackendError::NoSuchObject {
                object: object.clone(),
            })
    }

    /// Whether the guard (if any) lets the next write be made.
    fn may_write(&self) -> Result<(), BackendError> {
        self.guard.as_ref().map_or(Ok(()), |g| g())
    }

    /// A JSON merge patch conditioned on the resourceVersion the pass holds for the object;
    /// the answer's resourceVersion becomes the one it holds.
    async fn patch(&mut self, object: &ObjectRef, mut body: Value) -> Result<(), BackendError> {
        self.may_write()?;
        let live = self.live(object)?.clone();
        let ep = self
            .endpoint(&live.home)
            .ok_or_else(|| BackendError::NoSuchObject {
                object: object.clone(),
            })?;
        body["metadata"]["resourceVersion"] = json!(live.resource_version);
        let params = PatchParams {
            field_manager: Some("autorepair".into()),
            ..PatchParams::default()
        };
        let mut req = Request::new(DynamicObject::url_path(
            &live.api,
            live.namespace.as_deref(),
        ))
        .patch(&live.name, &params, &Patch::Merge(&body))
        .map_err(|e| BackendError::Api(format!("{object}: cannot build the patch: {e}")))?;
        if let Some(Ok(uri)) = crate::k8s::tidy_query(&req.uri().to_string()).map(|u| u.parse()) {
            *req.uri_mut() = uri;
        }
        let path = req.uri().to_string();
        let what = resource_name(&live.api);
        let call = Call {
            object: Some(object),
            version: Some(&live.resource_version),
            ..self.call("PATCH", &ep.server, &path, &what)
        };
        tracing::debug!(object = %object, path = %path, resource_version = %live.resource_version, "patch");
        let answer = ep
            .client
            .request_text(req)
            .await
            .map_err(|e| from_kube(e, &call))?;
        let new: Value = serde_json::from_str(&answer)
            .map_err(|e| nonsense(&call, &format!("not JSON: {e}")))?;
        if text(&new, "/metadata/resourceVersion").is_none() {
            return Err(nonsense(&call, "the patched object has no resourceVersion"));
        }
        let api = live.api.clone();
        self.remember(object.clone(), &api, live.home, &new);
        Ok(())
    }

    /// Sets (`Some`) or removes (`None`) annotations.
    async fn annotate(
        &mut self,
        object: &ObjectRef,
        changes: Map<String, Value>,
    ) -> Result<(), BackendError> {
        if changes.is_empty() {
            return Ok(());
        }
        self.patch(object, json!({"metadata": {"annotations": changes}}))
            .await
    }

    /// A DELETE conditioned on the object's uid (and resourceVersion).
    async fn delete(&mut self, object: &ObjectRef, with_version: bool) -> Result<(), BackendError> {
        self.may_write()?;
        let live = self.live(object)?.clone();
        let ep = self
            .endpoint(&live.home)
            .ok_or_else(|| BackendError::NoSuchObject {
                object: object.clone(),
            })?;
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: Some(live.uid.clone()),
                resource_version: with_version.then(|| live.resource_version.clone()),
            }),
            ..DeleteParams::default()
        };
        let mut req = Request::new(DynamicObject::url_path(
            &live.api,
            live.namespace.as_deref(),
        ))
        .delete(&live.name, &params)
        .map_err(|e| BackendError::Api(format!("{object}: cannot build the delete: {e}")))?;
        if let Some(Ok(uri)) = crate::k8s::tidy_query(&req.uri().to_string()).map(|u| u.parse()) {
            *req.uri_mut() = uri;
        }
        let path = req.uri().to_string();
        let what = resource_name(&live.api);
        let call = Call {
            object: Some(object),
            version: with_version.then_some(live.resource_version.as_str()),
            ..self.call("DELETE", &ep.server, &path, &what)
        };
        tracing::debug!(object = %object, path = %path, uid = %live.uid, "delete");
        let answer = ep
            .client
            .request_text(req)
            .await
            .map_err(|e| from_kube(e, &call))?;
        let after: Value = serde_json::from_str(&answer).unwrap_or(Value::Null);
        // Finalizers keep it, being deleted, with a new resourceVersion; else it is gone.
        if after.pointer("/metadata/deletionTimestamp").is_some()
            && text(&after, "/metadata/resourceVersion").is_some()
        {
            let api = live.api.clone();
            self.remember(object.clone(), &api, live.home, &after);
        } else {
            self.live.remove(object);
        }
        Ok(())
    }

    async fn apply(&mut self, op: &Op) -> Result<(), BackendError> {
        let machine = |key: &str| ObjectRef::new(kind::MACHINE, key);
        let host = |key: &str| ObjectRef::new(kind::HOST, key);
        let node = |name: &str| ObjectRef::new(kind::NODE, name);
        match op {
            Op::Drain { node: name } => self.drain(&node(name)).await,
            Op::PowerOff {
                machine: m,
                host: h,
                mode,
            } => {
                let m = machine(m);
                let annotations = &self.live(&m)?.annotations;
                if !REQUEST_KEYS.iter().any(|k| annotations.contains_key(*k)) {
                    self.annotate(&m, one(REQUEST_KEY, json!(""))).await?;
                }
                let h = host(h);
                if self
                    .live(&h)?
                    .annotations
                    .get(REBOOT_KEY)
                    .map(String::as_str)
                    != Some(mode.annotation())
                {
                    self.annotate(&h, one(REBOOT_KEY, json!(mode.annotation())))
                        .await?;
                }
                Ok(())
            }
            Op::DeleteMachine { machine: m } => self.delete(&machine(m), true).await,
            Op::DeleteNode {
                machine: m,
                node: n,
            } => {
                let (m, n) = (machine(m), node(n));
                let live = self.live(&n)?;
                let backup =
                    json!({"labels": live.labels, "annotations": live.annotations}).to_string();
                if self.live(&m)?.annotations.get(marks::NODE_BACKUP_KEY) != Some(&backup) {
                    self.annotate(&m, one(marks::NODE_BACKUP_KEY, json!(backup)))
                        .await?;
                }
                // The Node's resourceVersion moves with every status update; its uid is what
                // must not have changed (a Node registered again is not the one read).
                self.delete(&n, false).await
            }
            Op::ClearRequest { machine: m } => {
                let m = machine(m);
                let annotations = &self.live(&m)?.annotations;
                let gone: Map<String, Value> = REQUEST_KEYS
                    .iter()
                    .filter(|k| annotations.contains_key(**k))
                    .map(|k| ((*k).to_owned(), Value::Null))
                    .collect();
                if !gone.is_empty() {
                    self.annotate(&m, gone).await?;
                }
                Ok(())
            }
            Op::PowerOn { host: h } => {
                let h = host(h);
                if self.live(&h)?.annotations.contains_key(REBOOT_KEY) {
                    self.annotate(&h, one(REBOOT_KEY, Value::Null)).await?;
                }
                Ok(())
            }
            Op::RestoreNode {
                machine: m,
                node: n,
            } => {
                let (m, n) = (machine(m), node(n));
                let saved = self
                    .live(&m)?
                    .annotations
                    .get(marks::NODE_BACKUP_KEY)
                    .cloned()
                    .unwrap_or_else(|| "{}".into());
                let backup: Value = serde_json::from_str(&saved).map_err(|e| {
                    BackendError::Api(format!(
                        "{m}: {} is not JSON ({e}): fix or remove it",
                        marks::NODE_BACKUP_KEY
                    ))
                })?;
                let live = self.live(&n)?;
                let mut patch = json!({"metadata": {}});
                for (field, own) in [("labels", &live.labels), ("annotations", &live.annotations)] {
                    // The re-registered Node's own values win.
                    let missing: Map<String, Value> = backup
                        .get(field)
                        .and_then(Value::as_object)
                        .into_iter()
                        .flatten()
                        .filter(|(k, v)| v.is_string() && !own.contains_key(*k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    if !missing.is_empty() {
                        patch["metadata"][field] = Value::Object(missing);
                    }
                }
                if patch["metadata"].as_object().is_some_and(|m| !m.is_empty()) {
                    self.patch(&n, patch).await?;
                }
                if self
                    .live(&m)?
                    .annotations
                    .contains_key(marks::NODE_BACKUP_KEY)
                {
                    self.annotate(&m, one(marks::NODE_BACKUP_KEY, Value::Null))
                        .await?;
                }
                Ok(())
            }
            Op::TaintNode {
                machine: m,
                node: n,
            } => self.taint(&machine(m), &node(n), true).await,
            Op::UntaintNode {
                machine: m,
                node: n,
            } => self.taint(&machine(m), &node(n), false).await,
        }
    }

    /// One pass of the shared drain (`k8s::drain`) on the Node: cordon it if it is not, then
    /// evict what must go. An eviction a PodDisruptionBudget refuses now is tried again on
    /// the next pass (the protocol asks for the drain again while Pods are left), until
    /// `drain_timeout` fails the step.
    async fn drain(&mut self, node: &ObjectRef) -> Result<(), BackendError> {
        let home = self.live(node)?.home.clone();
        let ep = self
            .endpoint(&home)
            .ok_or_else(|| BackendError::NoSuchObject {
                object: node.clone(),
            })?;
        let mut drainer = Drainer::new(ep.client.clone(), drain_options(self.options.timeout))
            .named(ep.server.clone());
        if let Some(g) = &self.guard {
            drainer = drainer.guarded(g.clone());
        }
        if let Cordon::Refused(why) = drainer.cordon(&node.name).await? {
            return Err(BackendError::Api(format!("{node}: {why}")));
        }
        let now = jiff::Timestamp::now().as_second();
        match drainer.evict_step(&node.name, now).await? {
            Outcome::Failed(why) => Err(BackendError::Api(format!("{node}: {why}"))),
            Outcome::Drained => Ok(()),
            Outcome::Draining(p) => {
                for pod in &p.refused {
                    tracing::warn!(node = %node.name, pod = %pod, why = drainer.last_refusal(&node.name, pod).unwrap_or_default(), "eviction refused for now: tried again next pass");
                }
                Ok(())
            }
        }
    }
}

/// The metal3 family's drain: no Pod is ever deleted to get round a PodDisruptionBudget (every
/// namespace protected) and a refused eviction is tried again every pass for as long as the
/// step's `drain_timeout` allows; running Job Pods are deleted like CKE deletes unprotected
/// ones; no dry run and no cordon annotation (the family never uncordons: a drained Node stays
/// drained, a power-cycled one is deleted and registers anew).
fn drain_options(timeout: Duration) -> drain::Options {
    drain::Options {
        protected_namespaces: drain::Protection::All,
        protected_job_pods: drain::Protection::Nothing,
        evict_retries: u32::MAX,
        evict_interval: 0,
        cordon_annotation: None,
        check_before_cordon: false,
        timeout,
    }
}

fn one(key: &str, value: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(key.to_owned(), value);
    m
}

fn namespaced(item: &Value) -> String {
    format!(
        "{}/{}",
        text(item, "/metadata/namespace").unwrap_or_default(),
        text(item, "/metadata/name").unwrap_or_default()
    )
}

fn scope_kind(kind: &str) -> &'static str {
    match kind {
        "MachineSet" => kind::MACHINE_SET,
        "MachineDeployment" => kind::MACHINE_DEPLOYMENT,
        "Cluster" => kind::CLUSTER,
        _ => kind::CONTROL_PLANE,
    }
}

/// The Node autorepair recorded tainting for a Machine ([`marks::NODE_TAINTED_KEY`]).
fn tainted_node(machine: &Value) -> Option<&str> {
    machine
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(marks::NODE_TAINTED_KEY))
        .and_then(Value::as_str)
}

/// A Cluster API Machine's Cluster, `NAMESPACE/NAME`.
fn cluster_of(machine: &Value) -> Option<String> {
    let name = machine
        .pointer("/metadata/labels")
        .and_then(|l| l.get(objects::CLUSTER_NAME_LABEL))
        .and_then(Value::as_str)
        .or_else(|| text(machine, "/spec/clusterName"))
        .filter(|n| !n.is_empty())?;
    Some(format!(
        "{}/{name}",
        text(machine, "/metadata/namespace").unwrap_or_default()
    ))
}

impl Backend<Metal3> for KubeBackend {
    fn snapshot(&mut self) -> Result<Snapshot, BackendError> {
        self.rt.block_on(self.inner.read())
    }

    fn add_marks(
        &mut self,
        object: &ObjectRef,
        add: &[String],
        reason: &str,
    ) -> Result<(), BackendError> {
        let live = self.inner.live(object)?;
        let changes: Map<String, Value> = pairs(add)
            .filter(|(k, v)| live.annotations.get(*k).map(String::as_str) != Some(*v))
            .map(|(k, v)| (k.to_owned(), json!(v)))
            .collect();
        let fresh: Vec<String> = add
            .iter()
            .filter(|m| changes.contains_key(marks::split(m).0))
            .cloned()
            .collect();
        self.rt.block_on(async {
            self.inner.annotate(object, changes).await?;
            // How a repair ended, told once: only when its result is written now.
            self.inner
                .tell(events::of_marks(object, &fresh, reason))
                .await;
            Ok(())
        })
    }

    fn remove_marks(
        &mut self,
        object: &ObjectRef,
        remove: &[String],
        _reason: &str,
    ) -> Result<(), BackendError> {
        let live = self.inner.live(object)?;
        // A newer mark of the same repair may hold the key by now (ours, written this pass,
        // or someone's since the read, which the resourceVersion precondition catches): only
        // a key still holding the value goes.
        let changes: Map<String, Value> = pairs(remove)
            .filter(|(k, v)| live.annotations.get(*k).map(String::as_str) == Some(*v))
            .map(|(k, _)| (k.to_owned(), Value::Null))
            .collect();
        self.rt.block_on(self.inner.annotate(object, changes))
    }

    fn submit(
        &mut self,
        target: &str,
        op: &Op,
        reason: &str,
        _after: Option<&OpId>,
    ) -> Result<OpId, BackendError> {
        let id = OpId::of_submission(target, op, reason)?;
        self.rt.block_on(async {
            self.inner.apply(op).await?;
            self.inner.tell(events::of_op(op)).await;
            Ok::<_, BackendError>(())
        })?;
        Ok(id)
    }

    fn advance(&mut self, _object: &ObjectRef, op: &Op, _reason: &str) -> Result<(), BackendError> {
        self.rt.block_on(async {
            self.inner.apply(op).await?;
            self.inner.tell(events::of_op(op)).await;
            Ok(())
        })
    }

    /// Every step waits for the world to show the one before.
    fn can_follow(&self, _op: &Op) -> bool {
        false
    }

    fn supports(&self, _step: Step) -> bool {
        true
    }

    /// Every patch, delete and eviction asks it first: one operation may make many writes
    /// (a drain, one eviction per Pod).
    fn guard_writes(&mut self, guard: WriteGuard) {
        self.inner.guard = Some(guard);
    }
}
