//! What wakes a loop on a live cluster between passes: one watch per kind a pass reads,
//! reporting the changes a pass could act on. The caller says which kinds (found on the server
//! by its own discovery) and what of each object it reads ([`Watched`]); this module knows no
//! family.
//!
//! The pass still reads everything (the watches keep no cache the pass would trust): a watch
//! only decides *when* the next pass starts. So a missed event costs latency, never
//! correctness, and the periodic resync pass bounds that latency.
//!
//! Each kind is followed by kube's own runtime watcher (`kube::runtime::watcher`): it lists
//! the kind (paginated), watches from the list's resourceVersion with bookmarks, watches again
//! from the last resourceVersion when the server closes the stream (its timeout), and lists
//! again when the history was compacted past it (410 Expired); failures are retried after
//! kube's growing delay (0.8 s doubling to 30 s, with jitter). What this module adds is what
//! a pass needs of it: an event counts as a change only if it moves what the caller reads
//! ([`Watched::digest`]; a status poll, a heartbeat or our own resourceVersion bump with
//! nothing else are not), a new list is compared with what was seen before so the changes
//! missed in between are reported, and every failure says so in the log.

use crate::engine::BackendError;
use crate::k8s::client::{client_error, harden, load, runtime};
use crate::k8s::{Source, resource_name};
use ::kube::api::{Api, DynamicObject};
use ::kube::core::{ApiResource, PartialObjectMeta};
use ::kube::runtime::WatchStreamExt;
use ::kube::runtime::watcher::{self, Event, watcher};
use ::kube::{Client, Config};
use futures_util::StreamExt;
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// A change one of the watches saw, for the log line that starts the next pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// `deployments.apps`, `nodes`.
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

/// A digest of what the caller reads of an object (JSON as the server sends it): an event
/// that leaves it the same is no change.
pub type Digest = Arc<dyn Fn(&Value) -> u64 + Send + Sync>;

/// Finding the kinds to watch on a server.
pub type Discovering = Pin<Box<dyn Future<Output = Result<Vec<Watched>, ::kube::Error>>>>;

/// How the kinds to watch are found: asked with a client of the server, again after a growing
/// delay until it answers.
pub type Discover = Box<dyn FnMut(Client) -> Discovering + Send>;

/// One kind to watch.
#[derive(Clone)]
pub struct Watched {
    pub resource: ApiResource,
    /// Only the objects' metadata (`PartialObjectMetadata`): less to send and parse, for kinds
    /// whose metadata is all the caller reads.
    pub metadata_only: bool,
    pub digest: Digest,
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

/// The delay before asking discovery again after the n-th failure in a row: 1 s doubling to
/// 30 s (the watches' own retries are kube's).
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
    /// Starts watching the cluster `source` names; `discover` tells which kinds, once the
    /// watching thread runs; `timeout` is how long one request other than a watch may take.
    pub fn connect(
        source: &Source,
        timeout: Duration,
        discover: Discover,
    ) -> Result<Watcher, BackendError> {
        let rt = runtime()?;
        let config = rt.block_on(load(source))?;
        Self::start(rt, config, timeout, discover)
    }

    /// Starts watching the server of a client configuration (the tests' fake server gives one).
    pub fn from_config(
        config: Config,
        timeout: Duration,
        discover: Discover,
    ) -> Result<Watcher, BackendError> {
        Self::start(runtime()?, config, timeout, discover)
    }

    fn start(
        rt: tokio::runtime::Runtime,
        mut config: Config,
        timeout: Duration,
        discover: Discover,
    ) -> Result<Watcher, BackendError> {
        harden(&mut config, timeout)?;
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
        let streams = Arc::new(Streams::default());
        let counts = streams.clone();
        let thread = std::thread::Builder::new()
            .name("kube-watch".into())
            .spawn(move || {
                rt.block_on(async move {
                    let mut stopped = stopped;
                    tokio::select! {
                        () = watch_all(client, server, discover, tx, counts) => {}
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

/// `NAMESPACE/NAME`, or `NAME` for a cluster-scoped object.
pub fn key_of(v: &Value) -> String {
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
    mut discover: Discover,
    tx: mpsc::SyncSender<Change>,
    streams: Arc<Streams>,
) {
    let mut failures = 0;
    let kinds = loop {
        match discover(client.clone()).await {
            Ok(kinds) => break kinds,
            Err(e) => {
                let delay = backoff(failures);
                failures += 1;
                tracing::warn!(server = %server, error = %e, "watch: API discovery failed; trying again in {delay:?} (passes still run every --interval)");
                tokio::time::sleep(delay).await;
            }
        }
    };
    tracing::info!(
        server = %server,
        resources = ?kinds.iter().map(|w| resource_name(&w.resource)).collect::<Vec<_>>(),
        "watch: watching for changes between passes"
    );
    if kinds.is_empty() {
        tracing::warn!(server = %server, "watch: none of the kinds a pass reads is served here: passes come only every --interval");
    }
    streams.kinds.store(kinds.len(), Ordering::SeqCst);
    let tasks = kinds
        .into_iter()
        .map(|w| watch_one(client.clone(), w, tx.clone(), &streams));
    futures_util::future::join_all(tasks).await;
}

/// One kind, followed for as long as the watcher lives.
async fn watch_one(client: Client, kind: Watched, tx: mpsc::SyncSender<Change>, streams: &Streams) {
    let name = resource_name(&kind.resource);
    let config = watcher::Config::default().timeout(WATCH_SECONDS);
    let events = if kind.metadata_only {
        let api = Api::<PartialObjectMeta<DynamicObject>>::all_with(client, &kind.resource);
        watcher(api, config).map(as_json).boxed()
    } else {
        let api = Api::<DynamicObject>::all_with(client, &kind.resource);
        watcher(api, config).map(as_json).boxed()
    }
    .default_backoff();
    let mut events = std::pin::pin!(events);
    let send = |object: String, what: ChangeKind| {
        // Full: a pass is due already and reads everything; the change adds nothing to it.
        let _ = tx.try_send(Change {
            resource: name.clone(),
            object,
            what,
        });
    };
    // What was seen of each object, from the last complete list on; `None` before the first.
    let mut known: Option<HashMap<String, u64>> = None;
    // A list under way.
    let mut listing = HashMap::new();
    let mut open = Open::new(&streams.open);
    while let Some(event) = events.next().await {
        match event {
            Ok(Event::Init) => {
                open.close();
                listing.clear();
            }
            Ok(Event::InitApply(v)) => {
                listing.insert(key_of(&v), (kind.digest)(&v));
            }
            Ok(Event::InitDone) => {
                let fresh = std::mem::take(&mut listing);
                if let Some(old) = known {
                    for (k, fp) in &fresh {
                        if old.get(k) != Some(fp) {
                            send(k.clone(), ChangeKind::Relisted);
                        }
                    }
                    for k in old.keys().filter(|k| !fresh.contains_key(*k)) {
                        send(k.clone(), ChangeKind::Deleted);
                    }
                }
                known = Some(fresh);
                tracing::debug!(resource = %name, "watch: listed {name}; watching it");
                open.open();
            }
            Ok(Event::Apply(v)) => {
                open.open();
                let known = known.get_or_insert_default();
                let k = key_of(&v);
                let fp = (kind.digest)(&v);
                match known.insert(k.clone(), fp) {
                    None => send(k, ChangeKind::Added),
                    Some(old) if old != fp => send(k, ChangeKind::Changed),
                    Some(_) => {}
                }
            }
            Ok(Event::Delete(v)) => {
                open.open();
                let k = key_of(&v);
                if known.as_mut().and_then(|known| known.remove(&k)).is_some() {
                    send(k, ChangeKind::Deleted);
                }
            }
            Err(watcher::Error::WatchError(s)) if s.code == 410 => {
                open.close();
                tracing::info!(resource = %name, "watch: the history of {name} was compacted past the resourceVersion watched from (410 Expired): listing it again");
            }
            Err(e) => {
                open.close();
                tracing::warn!(resource = %name, error = %e, "watch: the watch of {name} failed; trying again after a growing delay");
            }
        }
    }
}

/// Counts a kind as watched while it is: from the end of its list to its next failure, and
/// again from the next event after one (kube's watcher resumes without telling).
struct Open<'a> {
    count: &'a AtomicUsize,
    counted: bool,
}

impl<'a> Open<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        Open {
            count,
            counted: false,
        }
    }

    fn open(&mut self) {
        if !std::mem::replace(&mut self.counted, true) {
            self.count.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn close(&mut self) {
        if std::mem::replace(&mut self.counted, false) {
            self.count.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.close();
    }
}

/// A watcher event with its object as JSON, the form digests read.
fn as_json<K: serde::Serialize>(e: watcher::Result<Event<K>>) -> watcher::Result<Event<Value>> {
    let v = |o: K| serde_json::to_value(o).unwrap_or_default();
    e.map(|e| match e {
        Event::Apply(o) => Event::Apply(v(o)),
        Event::Delete(o) => Event::Delete(v(o)),
        Event::Init => Event::Init,
        Event::InitApply(o) => Event::InitApply(v(o)),
        Event::InitDone => Event::InitDone,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_are_named_by_namespace_and_name() {
        let host = json!({"metadata": {"name": "h1", "namespace": "ns"}});
        let node = json!({"metadata": {"name": "n1"}});
        assert_eq!(key_of(&host), "ns/h1");
        assert_eq!(key_of(&node), "n1");
    }

    #[test]
    fn discovery_is_asked_again_after_one_second_doubling_to_thirty() {
        let got: Vec<u64> = (0..8).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(got, [1, 2, 4, 8, 16, 30, 30, 30]);
    }
}
