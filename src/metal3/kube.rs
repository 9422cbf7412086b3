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

mod brake;
mod discovery;
mod events;
mod read;
mod taint;
pub mod watch;
pub mod workload;
mod write;

use write::*;

// Generic Kubernetes code, where it was before it served more than this family.
pub use crate::k8s::lease;

pub use crate::k8s::Source;
pub use crate::k8s::errors::{CONFLICT_HINT, is_conflict};

use super::objects::{
    self, REBOOT_KEY, REQUEST_KEY, REQUEST_KEYS, Snapshot, UNHEALTHY_KEY, UNHEALTHY_VALUE, kind,
};
use super::{Metal3, Op, OpId, Step, marks};
use crate::engine::{Backend, BackendError, ObjectRef, WriteGuard};
use crate::k8s::client::{build, load, runtime};
use crate::k8s::drain::{self, Cordon, Drainer, Outcome};
use crate::k8s::errors::{Call, from_kube, nonsense, refuses_field_selector};
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
    /// Asked before every write ([`Backend::guard_writes`]), keeping the deadline of each in
    /// `lead`.
    guard: Option<WriteGuard>,
    /// The deadline of the write being made, for the requests of every client of this backend.
    lead: crate::fence::Lead,
    /// Suspends given elsewhere while a pass acts.
    brake: brake::Watch,
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
        let lead = crate::fence::Lead::default();
        // kube spawns the client's worker on the runtime current when it is built: ours.
        let (client, server) = {
            let _entered = rt.enter();
            build(config, options.timeout, &lead)?
        };
        Ok(Self::assemble(
            rt,
            Endpoint { client, server },
            options,
            lead,
        ))
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
        // Its requests are not bounded by this backend's deadline: not a client of ours.
        Ok(Self::assemble(
            runtime()?,
            endpoint,
            options,
            crate::fence::Lead::default(),
        ))
    }

    fn assemble(
        rt: tokio::runtime::Runtime,
        mgmt: Endpoint,
        options: Options,
        lead: crate::fence::Lead,
    ) -> Self {
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
                lead,
                brake: brake::Watch::default(),
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
}

impl Backend<Metal3> for KubeBackend {
    fn snapshot(&mut self) -> Result<Snapshot, BackendError> {
        let snap = self.rt.block_on(self.inner.read())?;
        snap.warn_problems();
        self.inner.brake.reset(&snap, &self.inner.live);
        Ok(snap)
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
            self.inner.watch_suspends(target).await?;
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
        self.inner.guard = Some(crate::fence::leading(guard, &self.inner.lead));
    }

    fn suspended_meanwhile(&self) -> Option<String> {
        self.inner.brake.suspended.as_ref().map(ToString::to_string)
    }
}
