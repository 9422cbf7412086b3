//! What wakes `run --loop` on a live cluster between passes: one watch per kind a pass reads
//! in the management cluster, reporting the changes a pass could act on.
//!
//! The pass still reads everything (the watches keep no cache the pass would trust): a watch
//! only decides *when* the next pass starts. So a missed event costs latency, never
//! correctness, and the periodic resync pass bounds that latency.
//!
//! Each watch lists its kind once (to learn the resourceVersion to watch from and what every
//! object looks like), then watches from there with bookmarks. An event counts as a change only
//! if it moves something the family reads ([`fingerprint`]): a BareMetalHost's status poll, a
//! Node's heartbeat or our own resourceVersion bump with nothing else are not. Failures are
//! survived: a history compacted past our resourceVersion (410 Expired) makes a new list,
//! compared with what was seen so the changes missed in between are reported; a stream the
//! server closed (its timeout) is watched again from the last resourceVersion; an API server
//! that does not answer is retried with a growing delay (1 s doubling to 30 s). Each of those
//! says so in the log.
//!
//! Not watched: Nodes in workload clusters (`Workload::ClusterSecrets`; they are seen at the
//! next resync) and Pods.

use crate::engine::BackendError;
use crate::k8s::client::{client_error, harden, load, runtime};
use crate::metal3::kube::discovery::{self, Served};
use crate::metal3::kube::{Options, Source, Workload, core, resource_name};
use ::kube::api::{Api, DynamicObject, ListParams, WatchEvent, WatchParams};
use ::kube::core::ApiResource;
use ::kube::{Client, Config};
use futures_util::StreamExt;
use serde_json::Value;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// A change one of the watches saw, for the log line that starts the next pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// `baremetalhosts.metal3.io`, `nodes`.
    pub resource: String,
    /// `NAMESPACE/NAME`, or `NAME` for cluster-scoped kinds.
    pub object: String,
    pub what: ChangeKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Changed,
    Deleted,
    /// Found different by a new list after the watch could not resume (410 Expired).
    Relisted,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.what {
            ChangeKind::Added => "added",
            ChangeKind::Changed => "changed",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Relisted => "changed while the watch was down",
        };
        write!(f, "{} {} {what}", self.resource, self.object)
    }
}

/// The watches, running on a thread of their own until dropped.
pub struct Watcher {
    changes: mpsc::Receiver<Change>,
    streams: Arc<Streams>,
    stop: Option<tokio::sync::watch::Sender<bool>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How many watches there are and how many are open now.
#[derive(Debug, Default)]
struct Streams {
    kinds: AtomicUsize,
    open: AtomicUsize,
}

/// The delay before trying again after the n-th failure in a row: 1 s doubling to 30 s.
fn backoff(failures: u32) -> Duration {
    Duration::from_secs(1u64 << failures.min(5)).min(Duration::from_secs(30))
}

/// How many changes wait for the loop at most. The loop takes them between passes; more than
/// this waiting (a replica standing by, a long pass on a busy cluster) are dropped: any one of
/// them already starts the next pass, which reads everything, so dropping costs nothing but a
/// log line's count, and memory stays bounded however long nobody takes them.
pub const PENDING: usize = 1024;

/// How long a watch request may stay open: the server ends it first (`timeoutSeconds`), and a
/// connection silent for longer than that is dead.
const WATCH_SECONDS: u32 = 290;

impl Watcher {
    /// Starts watching the management cluster `source` names.
    pub fn connect(source: &Source, options: &Options) -> Result<Watcher, BackendError> {
        let rt = runtime()?;
        let config = rt.block_on(load(source))?;
        Self::start(rt, config, options)
    }

    /// Starts watching the server of a client configuration (the tests' fake server gives one).
    pub fn from_config(config: Config, options: &Options) -> Result<Watcher, BackendError> {
        Self::start(runtime()?, config, options)
    }

    fn start(
        rt: tokio::runtime::Runtime,
        mut config: Config,
        options: &Options,
    ) -> Result<Watcher, BackendError> {
        harden(&mut config, options.timeout)?;
        // A watch answers only when something changes: the read timeout must outlast the
        // server's own end of the request.
        config.read_timeout = Some(Duration::from_secs(u64::from(WATCH_SECONDS) + 30));
        let server = config.cluster_url.to_string();
        let client = {
            let _entered = rt.enter();
            Client::try_from(config).map_err(|e| client_error(&server, e))?
        };
        let (tx, changes) = mpsc::sync_channel(PENDING);
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let nodes_here = options.workload == Workload::Management;
        let streams = Arc::new(Streams::default());
        let counts = streams.clone();
        let thread = std::thread::Builder::new()
            .name("kube-watch".into())
            .spawn(move || {
                rt.block_on(async move {
                    let mut stopped = stopped;
                    tokio::select! {
                        () = watch_all(client, server, nodes_here, tx, counts) => {}
                        _ = stopped.changed() => {}
                    }
                });
            })
            .map_err(|e| BackendError::Api(format!("cannot start the watch thread: {e}")))?;
        Ok(Watcher {
            changes,
            streams,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The next relevant change, if one comes within `timeout`. Once the watching thread has
    /// ended (nothing to watch, or it died) this still waits out `timeout`: returning at once
    /// would turn the daemon's wait into a busy loop until the next resync.
    pub fn next_change(&self, timeout: Duration) -> Option<Change> {
        match self.changes.recv_timeout(timeout) {
            Ok(change) => Some(change),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                std::thread::sleep(timeout);
                None
            }
        }
    }

    /// Forgets the changes seen so far (how many): called as a pass starts, which reads them
    /// all anyway, and while a replica stands by, which acts on none.
    pub fn forget(&self) -> usize {
        self.changes.try_iter().count()
    }

    /// Whether every kind is being watched right now (none listing, none waiting to retry).
    pub fn all_watching(&self) -> bool {
        let kinds = self.streams.kinds.load(Ordering::SeqCst);
        kinds > 0 && self.streams.open.load(Ordering::SeqCst) == kinds
    }

    /// Waits up to `timeout` for [`Self::all_watching`]; whether it came.
    pub fn wait_watching(&self, timeout: Duration) -> bool {
        let until = Instant::now() + timeout;
        while !self.all_watching() {
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    /// Waits for a first change (up to `until`), then lets a burst settle: returns once no
    /// change came for `quiet`, or `most` after the first, with every change seen. Empty: none
    /// came before `until`.
    pub fn settle(&self, until: Instant, quiet: Duration, most: Duration) -> Vec<Change> {
        let Some(first) = self.next_change(until.saturating_duration_since(Instant::now())) else {
            return Vec::new();
        };
        let cap = Instant::now() + most;
        let mut seen = vec![first];
        loop {
            let left = cap.saturating_duration_since(Instant::now()).min(quiet);
            if left.is_zero() {
                break;
            }
            match self.next_change(left) {
                Some(c) => seen.push(c),
                None => break,
            }
        }
        seen
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
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
}

/// The watched kinds: the management cluster's, as discovery found them served.
fn watched(served: &Served, nodes_here: bool) -> Vec<(ApiResource, Kind)> {
    let mut out = Vec::new();
    for m in [&served.machines, &served.openshift_machines]
        .into_iter()
        .flatten()
    {
        out.push((m.clone(), Kind::Machine));
    }
    out.extend(served.hosts.clone().map(|h| (h, Kind::Host)));
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
    out
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
        Kind::Metadata => &[],
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

fn key_of(v: &Value) -> String {
    let name = v
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match v.pointer("/metadata/namespace").and_then(Value::as_str) {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    }
}

async fn watch_all(
    client: Client,
    server: String,
    nodes_here: bool,
    tx: mpsc::SyncSender<Change>,
    streams: Arc<Streams>,
) {
    let mut failures = 0;
    let served = loop {
        let d = ::kube::Discovery::new(client.clone())
            .filter(discovery::GROUPS)
            .run()
            .await;
        match d {
            Ok(d) => break Served::from_discovery(&d),
            Err(e) => {
                let delay = backoff(failures);
                failures += 1;
                tracing::warn!(server = %server, error = %e, "watch: API discovery failed; trying again in {delay:?} (passes still run every --interval)");
                tokio::time::sleep(delay).await;
            }
        }
    };
    let kinds = watched(&served, nodes_here);
    tracing::info!(
        server = %server,
        resources = ?kinds.iter().map(|(ar, _)| resource_name(ar)).collect::<Vec<_>>(),
        "watch: watching for changes between passes"
    );
    if kinds.is_empty() {
        tracing::warn!(server = %server, "watch: none of the kinds a pass reads is served here: passes come only every --interval");
    }
    streams.kinds.store(kinds.len(), Ordering::SeqCst);
    let tasks = kinds
        .into_iter()
        .map(|(ar, kind)| watch_one(client.clone(), ar, kind, tx.clone(), &streams));
    futures_util::future::join_all(tasks).await;
}

/// Every object of the kind (paginated), with what the family reads of each, and the list's
/// resourceVersion to watch from.
async fn list_all(
    api: &Api<DynamicObject>,
    kind: Kind,
) -> Result<(HashMap<String, u64>, String), ::kube::Error> {
    let mut seen = HashMap::new();
    let mut token: Option<String> = None;
    loop {
        let mut lp = ListParams::default().limit(500);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let (items, meta) = if kind == Kind::Metadata {
            let l = api.list_metadata(&lp).await?;
            let items: Vec<Value> = l
                .items
                .iter()
                .map(|o| serde_json::to_value(o).unwrap_or_default())
                .collect();
            (items, l.metadata)
        } else {
            let l = api.list(&lp).await?;
            let items: Vec<Value> = l
                .items
                .iter()
                .map(|o| serde_json::to_value(o).unwrap_or_default())
                .collect();
            (items, l.metadata)
        };
        for v in &items {
            seen.insert(key_of(v), fingerprint(kind, v));
        }
        token = meta.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            return Ok((seen, meta.resource_version.unwrap_or_default()));
        }
    }
}

/// One kind, listed then watched, for as long as the watcher lives.
async fn watch_one(
    client: Client,
    ar: ApiResource,
    kind: Kind,
    tx: mpsc::SyncSender<Change>,
    streams: &Streams,
) {
    let api: Api<DynamicObject> = Api::all_with(client, &ar);
    let name = resource_name(&ar);
    let send = |object: String, what: ChangeKind| {
        // Full: a pass is due already and reads everything; the change adds nothing to it.
        let _ = tx.try_send(Change {
            resource: name.clone(),
            object,
            what,
        });
    };
    let mut failures = 0u32;
    let mut seen: Option<HashMap<String, u64>> = None;
    'list: loop {
        let (fresh, mut version) = match list_all(&api, kind).await {
            Ok(l) => l,
            Err(e) => {
                let delay = backoff(failures);
                failures += 1;
                tracing::warn!(resource = %name, error = %e, "watch: cannot list {name}; trying again in {delay:?}");
                tokio::time::sleep(delay).await;
                continue;
            }
        };
        if let Some(old) = seen.take() {
            for (k, fp) in &fresh {
                if old.get(k) != Some(fp) {
                    send(k.clone(), ChangeKind::Relisted);
                }
            }
            for k in old.keys().filter(|k| !fresh.contains_key(*k)) {
                send(k.clone(), ChangeKind::Deleted);
            }
        }
        let mut known = fresh;
        loop {
            let wp = WatchParams::default().timeout(WATCH_SECONDS);
            let opened = Instant::now();
            let stream = if kind == Kind::Metadata {
                api.watch_metadata(&wp, &version)
                    .await
                    .map(|s| s.map(|e| e.map(event_value)).boxed_local())
            } else {
                api.watch(&wp, &version)
                    .await
                    .map(|s| s.map(|e| e.map(event_value)).boxed_local())
            };
            let mut stream = match stream {
                Ok(s) => s,
                Err(::kube::Error::Api(s)) if s.code == 410 => {
                    tracing::info!(resource = %name, resource_version = %version, "watch: the history of {name} was compacted past resourceVersion {version} (410 Expired): listing it again");
                    seen = Some(known);
                    continue 'list;
                }
                Err(e) => {
                    let delay = backoff(failures);
                    failures += 1;
                    tracing::warn!(resource = %name, error = %e, "watch: cannot watch {name}; trying again in {delay:?}");
                    tokio::time::sleep(delay).await;
                    continue;
                }
            };
            tracing::debug!(resource = %name, resource_version = %version, "watch: watching {name}");
            let mut events = 0usize;
            // After the stream: wait this long, and list again rather than watch.
            let mut pause = None;
            let mut relist = false;
            {
                let _open = Open::new(&streams.open);
                while let Some(event) = stream.next().await {
                    events += 1;
                    match event {
                        Ok(WatchEvent::Added(v) | WatchEvent::Modified(v)) => {
                            failures = 0;
                            if let Some(rv) = v
                                .pointer("/metadata/resourceVersion")
                                .and_then(Value::as_str)
                            {
                                version = rv.to_owned();
                            }
                            let k = key_of(&v);
                            let fp = fingerprint(kind, &v);
                            match known.insert(k.clone(), fp) {
                                None => send(k, ChangeKind::Added),
                                Some(old) if old != fp => send(k, ChangeKind::Changed),
                                Some(_) => {}
                            }
                        }
                        Ok(WatchEvent::Deleted(v)) => {
                            if let Some(rv) = v
                                .pointer("/metadata/resourceVersion")
                                .and_then(Value::as_str)
                            {
                                version = rv.to_owned();
                            }
                            let k = key_of(&v);
                            if known.remove(&k).is_some() {
                                send(k, ChangeKind::Deleted);
                            }
                        }
                        Ok(WatchEvent::Bookmark(b)) => version = b.metadata.resource_version,
                        Ok(WatchEvent::Error(s)) if s.code == 410 => {
                            tracing::info!(resource = %name, resource_version = %version, "watch: the history of {name} was compacted past resourceVersion {version} (410 Expired): listing it again");
                            relist = true;
                            break;
                        }
                        Ok(WatchEvent::Error(s)) => {
                            let delay = backoff(failures);
                            failures += 1;
                            tracing::warn!(resource = %name, code = s.code, "watch: the server ended the watch of {name} with an error ({}: {}); listing it again in {delay:?}", s.reason, s.message);
                            pause = Some(delay);
                            relist = true;
                            break;
                        }
                        Err(e) => {
                            let delay = backoff(failures);
                            failures += 1;
                            tracing::warn!(resource = %name, error = %e, "watch: the watch of {name} broke; watching again in {delay:?}");
                            pause = Some(delay);
                            break;
                        }
                    }
                }
            }
            if let Some(delay) = pause {
                tokio::time::sleep(delay).await;
            }
            if relist {
                seen = Some(known);
                continue 'list;
            }
            if pause.is_some() {
                continue;
            }
            // The server ends a watch at its timeout: go on from the last resourceVersion. A
            // stream that ends at once, empty, again and again is a server in trouble: wait.
            if events == 0 && opened.elapsed() < Duration::from_secs(1) {
                let delay = backoff(failures);
                failures += 1;
                tracing::warn!(resource = %name, "watch: the server closed the watch of {name} at once; watching again in {delay:?}");
                tokio::time::sleep(delay).await;
            } else {
                tracing::debug!(resource = %name, resource_version = %version, "watch: the server closed the watch of {name}; watching again from resourceVersion {version}");
            }
        }
    }
}

/// Counts an open watch for as long as it lives.
struct Open<'a>(&'a AtomicUsize);

impl<'a> Open<'a> {
    fn new(n: &'a AtomicUsize) -> Self {
        n.fetch_add(1, Ordering::SeqCst);
        Open(n)
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A watch event with its object as JSON.
fn event_value<K: serde::Serialize>(e: WatchEvent<K>) -> WatchEvent<Value> {
    let v = |o: K| serde_json::to_value(o).unwrap_or_default();
    match e {
        WatchEvent::Added(o) => WatchEvent::Added(v(o)),
        WatchEvent::Modified(o) => WatchEvent::Modified(v(o)),
        WatchEvent::Deleted(o) => WatchEvent::Deleted(v(o)),
        WatchEvent::Bookmark(b) => WatchEvent::Bookmark(b),
        WatchEvent::Error(s) => WatchEvent::Error(s),
    }
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
        assert_eq!(key_of(&host), "ns/h1");
        assert_eq!(key_of(&node), "n1");
    }

    #[test]
    fn the_backoff_doubles_to_thirty_seconds() {
        let got: Vec<u64> = (0..8).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(got, [1, 2, 4, 8, 16, 30, 30, 30]);
    }
}
