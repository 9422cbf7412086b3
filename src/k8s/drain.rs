//! Draining a Node, by CKE's rules (its op/repair_drain_start.go and `evictOrDeleteNodePod` in
//! op/reboot_decide.go; docs/drain.md), for a watcher that works in
//! passes: each call does what is due now and returns; nothing sleeps or loops until done.
//!
//! # Rules
//! - **Which Pod gets what** ([`class`], [`action`]): DaemonSet Pods (controller owner kind
//!   `DaemonSet`) and mirror Pods stay; Job Pods (controller kind `Job`) that are Pending,
//!   Succeeded or Failed stay; a running Job Pod is deleted, unless it matches
//!   [`Options::protected_job_pods`], which fails the drain; every other Pod is evicted through
//!   the Eviction API (policy/v1), conditioned on its uid.
//! - **A refused eviction** (429, a PodDisruptionBudget) ([`after_refusal`]): outside the
//!   protected namespaces the Pod is deleted; inside, it is tried again on later passes (at
//!   most every [`Options::evict_interval`] seconds) until it has been refused
//!   `1 + evict_retries` times, which fails the drain.
//! - **Before cordoning** ([`Drainer::cordon`]), a dry run: a protected running Job Pod, or a
//!   dry-run eviction refused in a protected namespace, refuses the drain and leaves the Node
//!   schedulable.
//! - **Cordon**: `spec.unschedulable: true` plus the annotation [`Options::cordon_annotation`]
//!   `=true` (CKE: [`CKE_CORDON_ANNOTATION`]), which marks the cordon as ours: [`Drainer::uncordon`]
//!   undoes only a cordon carrying it.
//! - **Drained** ([`blocks_drain`]): no Pod left on the Node but DaemonSet and mirror Pods and
//!   Job Pods that are Pending, Succeeded or Failed. Pods still terminating are left.
//! - **Timeout and back-off** are the caller's records, judged by pure functions:
//!   [`timed_out`] (CKE's `eviction_timeout_seconds`, from when draining started) and
//!   [`backoff`] (`count + 1`, expiring `now + 300 s + rand[0, 300 × count) s`).
//!
//! Where this differs from CKE: mirror Pods stay (kubelet recreates them: evicting one only
//! churns); a Pod deleted after a refused eviction is deleted with a uid precondition; and the
//! refusal count lives in the [`Drainer`] (a restarted watcher counts again from zero, so a
//! Pod may be tried up to `evict_retries` more times, never fewer).
//!
//! # Use
//! ```ignore
//! let mut d = Drainer::new(client, Options::default()).named(server_url);
//! match d.cordon("node-1").await? {            // first pass: dry run, then cordon
//!     Cordon::Refused(why) => back_off(why),
//!     Cordon::Done => {}
//! }
//! match d.evict_step("node-1", now).await? {   // every pass while draining
//!     Outcome::Drained => run_the_repair(),
//!     Outcome::Draining(_) if timed_out(started, now, timeout) => back_off(..),
//!     Outcome::Draining(_) => {}               // again next pass
//!     Outcome::Failed(why) => back_off(why),
//! }
//! d.uncordon("node-1").await?;                  // after the repair, or on back-off
//! ```
//! Every write is conditioned on what was read: the cordon and uncordon patches carry the
//! Node's resourceVersion, evictions and deletes the Pod's uid. A drainer made
//! [`Drainer::guarded`] asks its guard before each write (each eviction, delete, patch), so a
//! watcher that lost its leader election or is told to stop stops between two evictions, not
//! after the whole Node. The client must not retry by
//! itself ([`super::client::build`] turns kube's retries off): a 429 is the drain's to handle.

use super::errors::{Call, from_kube, nonsense, refuses_field_selector};
use super::selector::LabelSelector;
use crate::engine::{BackendError, WriteGuard};
use ::kube::Client;
use ::kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions};
use ::kube::core::Request;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

/// The annotation CKE puts on the Nodes it cordons (value `true`).
pub const CKE_CORDON_ANNOTATION: &str = "cke.cybozu.com/reboot";

/// CKE's drain back-off base, seconds.
pub const BACKOFF_BASE: i64 = 300;

/// Which namespaces, or which Job Pods, are protected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Protection {
    All,
    Matching(LabelSelector),
    Nothing,
}

impl Protection {
    /// CKE's reading of `protected_namespaces` and `protected_job_pods`: unset or `{}`
    /// protects everything.
    pub fn from_cke(selector: Option<LabelSelector>) -> Protection {
        match selector {
            Some(s) if !s.is_empty() => Protection::Matching(s),
            _ => Protection::All,
        }
    }

    fn covers(&self, labels: &BTreeMap<String, String>) -> bool {
        match self {
            Protection::All => true,
            Protection::Matching(s) => s.matches(labels),
            Protection::Nothing => false,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Namespaces whose Pods are never deleted to get round a PodDisruptionBudget.
    pub protected_namespaces: Protection,
    /// Running Job Pods that fail the drain instead of being deleted.
    pub protected_job_pods: Protection,
    /// How many times a refused eviction in a protected namespace is tried again.
    pub evict_retries: u32,
    /// Seconds between two tries of a refused eviction.
    pub evict_interval: i64,
    /// The annotation (value `true`) that marks a cordon as ours; `None`: none is written,
    /// and [`Drainer::uncordon`] undoes any cordon.
    pub cordon_annotation: Option<String>,
    /// Run the dry run before cordoning (CKE does).
    pub check_before_cordon: bool,
    /// How long one request may take (for messages: the client enforces it).
    pub timeout: Duration,
}

impl Default for Options {
    /// CKE's defaults.
    fn default() -> Self {
        Options {
            protected_namespaces: Protection::All,
            protected_job_pods: Protection::All,
            evict_retries: 0,
            evict_interval: 0,
            cordon_annotation: Some(CKE_CORDON_ANNOTATION.to_owned()),
            check_before_cordon: true,
            timeout: Duration::from_secs(30),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The pure part.

/// What the drain needs to know of a Pod.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodFacts {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub labels: BTreeMap<String, String>,
    /// The kind of its controller owner (`ownerReferences[].controller: true`).
    pub controller: Option<String>,
    pub phase: String,
    /// A static Pod's mirror (`kubernetes.io/config.mirror`).
    pub mirror: bool,
    /// Being deleted already (`metadata.deletionTimestamp`).
    pub terminating: bool,
}

impl PodFacts {
    pub fn from_value(v: &Value) -> PodFacts {
        let text = |p: &str| v.pointer(p).and_then(Value::as_str).unwrap_or_default();
        let labels = v
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        let controller = v
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .and_then(|o| o.iter().find(|r| r["controller"] == true))
            .and_then(|r| r["kind"].as_str())
            .map(str::to_owned);
        PodFacts {
            namespace: text("/metadata/namespace").to_owned(),
            name: text("/metadata/name").to_owned(),
            uid: text("/metadata/uid").to_owned(),
            labels,
            controller,
            phase: text("/status/phase").to_owned(),
            mirror: v
                .pointer("/metadata/annotations/kubernetes.io~1config.mirror")
                .is_some(),
            terminating: v
                .pointer("/metadata/deletionTimestamp")
                .is_some_and(|t| !t.is_null()),
        }
    }

    /// `NAMESPACE/NAME`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// What kind of Pod it is, for the drain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    DaemonSet,
    Mirror,
    /// A Job's Pod that is Pending, Succeeded or Failed.
    IdleJob,
    RunningJob,
    Other,
}

pub fn class(pod: &PodFacts) -> Class {
    match pod.controller.as_deref() {
        Some("DaemonSet") => Class::DaemonSet,
        _ if pod.mirror => Class::Mirror,
        Some("Job") if matches!(pod.phase.as_str(), "Pending" | "Succeeded" | "Failed") => {
            Class::IdleJob
        }
        Some("Job") => Class::RunningJob,
        _ => Class::Other,
    }
}

/// Whether the Pod keeps the Node from counting as drained.
pub fn blocks_drain(pod: &PodFacts) -> bool {
    matches!(class(pod), Class::RunningJob | Class::Other)
}

/// What the drain does to a Pod this pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Stays on the Node.
    Stay,
    /// Already going: wait for it.
    Wait,
    Evict,
    /// A running Job Pod nobody protects.
    Delete,
    /// A protected running Job Pod: the drain fails.
    Refuse,
}

pub fn action(pod: &PodFacts, job_protected: bool) -> Action {
    match class(pod) {
        Class::DaemonSet | Class::Mirror | Class::IdleJob => Action::Stay,
        _ if pod.terminating => Action::Wait,
        Class::RunningJob if job_protected => Action::Refuse,
        Class::RunningJob => Action::Delete,
        Class::Other => Action::Evict,
    }
}

/// What follows an eviction a PodDisruptionBudget refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterRefusal {
    /// Not in a protected namespace: the Pod is deleted.
    Delete,
    /// Tried again on a later pass.
    Retry,
    /// Refused as often as allowed: the drain fails.
    GiveUp,
}

/// `refusals` counts this one too.
pub fn after_refusal(namespace_protected: bool, refusals: u32, evict_retries: u32) -> AfterRefusal {
    if !namespace_protected {
        AfterRefusal::Delete
    } else if refusals <= evict_retries {
        AfterRefusal::Retry
    } else {
        AfterRefusal::GiveUp
    }
}

/// Whether a drain that started at `started` has run out of time (CKE: last transition
/// strictly before `now - timeout`). Seconds since the epoch.
pub fn timed_out(started: i64, now: i64, timeout: i64) -> bool {
    now - started > timeout
}

/// The drain back-off after a failed or timed-out drain: the new count, and when it expires
/// (`now + 300 + jitter`, `jitter(bound)` in `[0, bound)` with `bound = 300 × new count`).
pub fn backoff(count: u32, now: i64, jitter: impl FnOnce(i64) -> i64) -> (u32, i64) {
    let count = count.saturating_add(1);
    let bound = BACKOFF_BASE.saturating_mul(i64::from(count));
    let j = jitter(bound).clamp(0, bound - 1);
    (count, now + BACKOFF_BASE + j)
}

/// The jitter [`backoff`] takes in production (seeded from the system's randomness, through
/// the v4 UUIDs the crate already draws).
pub fn random_jitter(bound: i64) -> i64 {
    use rand::{Rng, SeedableRng};
    let seed = uuid::Uuid::new_v4().as_u64_pair().0;
    rand_chacha::ChaCha8Rng::seed_from_u64(seed).random_range(0..bound.max(1))
}

// ---------------------------------------------------------------------------------------------
// The edge.

/// What the dry run and the cordon found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cordon {
    /// Cordoned (or it already was, by us).
    Done,
    /// Not cordoned: why the drain cannot go ahead.
    Refused(String),
}

/// Where a drain stands after a pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing is left on the Node that must go.
    Drained,
    /// Pods are on their way off the Node: call again on a later pass.
    Draining(Progress),
    /// The drain cannot finish: back off, uncordon.
    Failed(String),
}

/// What one pass did, Pods as `NAMESPACE/NAME`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub evicted: Vec<String>,
    pub deleted: Vec<String>,
    /// Refused by a PodDisruptionBudget, to be tried again.
    pub refused: Vec<String>,
    /// Terminating, or waiting for their next try.
    pub waiting: Vec<String>,
}

/// How an eviction went.
enum Evicted {
    Yes,
    /// Gone already, or changed since listed (a namesake): nothing to do now.
    Gone,
    Refused(String),
}

struct Refusals {
    uid: String,
    count: u32,
    last: i64,
    why: String,
}

/// Drains Nodes of one cluster. Holds the refusal counts of the Pods it is evicting.
pub struct Drainer {
    client: Client,
    server: String,
    options: Options,
    /// By Node, then by Pod `NAMESPACE/NAME`.
    refusals: HashMap<String, HashMap<String, Refusals>>,
    /// Asked before each write; none: every write is made.
    guard: Option<WriteGuard>,
}

impl Drainer {
    pub fn new(client: Client, options: Options) -> Drainer {
        Drainer {
            client,
            server: String::new(),
            options,
            refusals: HashMap::new(),
            guard: None,
        }
    }

    /// The server's URL, for messages.
    pub fn named(mut self, server: impl Into<String>) -> Drainer {
        self.server = server.into();
        self
    }

    /// Asks `guard` before each write: its error is returned instead of making it (the writes
    /// before it stay made, each whole).
    pub fn guarded(mut self, guard: WriteGuard) -> Drainer {
        self.guard = Some(guard);
        self
    }

    /// [`Drainer::guarded`], on a drainer already made.
    pub fn guard(&mut self, guard: WriteGuard) {
        self.guard = Some(guard);
    }

    fn may_write(&self) -> Result<(), BackendError> {
        self.guard.as_ref().map_or(Ok(()), |g| g().map(drop))
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    fn call<'a>(&'a self, method: &'static str, path: &'a str, what: &'a str) -> Call<'a> {
        Call {
            method,
            server: &self.server,
            path,
            object: None,
            what,
            version: None,
            timeout: self.options.timeout,
        }
    }

    /// The Pods bound to the Node, by field selector (all Pods, filtered here, where the
    /// server cannot select Pods by Node).
    pub async fn pods_on(&self, node: &str) -> Result<Vec<PodFacts>, BackendError> {
        let selector = format!("spec.nodeName={node}");
        let items = match self.list("/api/v1/pods", Some(&selector), None).await {
            Err(e) if refuses_field_selector(&e) => self.list("/api/v1/pods", None, None).await?,
            other => other?,
        };
        Ok(items
            .iter()
            .filter(|p| p.pointer("/spec/nodeName").and_then(Value::as_str) == Some(node))
            .map(PodFacts::from_value)
            .collect())
    }

    async fn list(
        &self,
        path: &str,
        fields: Option<&str>,
        labels: Option<&str>,
    ) -> Result<Vec<Value>, BackendError> {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut lp = ListParams::default().limit(500);
            if let Some(f) = fields {
                lp = lp.fields(f);
            }
            if let Some(l) = labels {
                lp = lp.labels(l);
            }
            if let Some(t) = &token {
                lp = lp.continue_token(t);
            }
            let req = Request::new(path)
                .list(&lp)
                .map_err(|e| BackendError::Api(format!("cannot list {path}: {e}")))?;
            let uri = req.uri().to_string();
            let call = self.call("GET", &uri, path);
            let body = self
                .client
                .request_text(req)
                .await
                .map_err(|e| from_kube(e, &call))?;
            let page: Value = serde_json::from_str(&body)
                .map_err(|e| nonsense(&call, &format!("not JSON: {e}")))?;
            match page.get("items") {
                Some(Value::Array(items)) => out.extend(items.iter().cloned()),
                Some(Value::Null) => {}
                _ => return Err(nonsense(&call, "a list has an \"items\" array")),
            }
            token = page
                .pointer("/metadata/continue")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_owned);
            if token.is_none() {
                return Ok(out);
            }
        }
    }

    /// The protected namespaces, when they are some but not all.
    async fn protected_namespaces(&self) -> Result<Option<HashSet<String>>, BackendError> {
        let Protection::Matching(sel) = &self.options.protected_namespaces else {
            return Ok(None);
        };
        let items = self
            .list("/api/v1/namespaces", None, Some(&sel.query()))
            .await?;
        Ok(Some(
            items
                .iter()
                .filter_map(|n| n.pointer("/metadata/name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect(),
        ))
    }

    fn namespace_protected(&self, listed: &Option<HashSet<String>>, ns: &str) -> bool {
        match (&self.options.protected_namespaces, listed) {
            (Protection::All, _) => true,
            (Protection::Nothing, _) => false,
            (Protection::Matching(_), Some(set)) => set.contains(ns),
            (Protection::Matching(_), None) => true,
        }
    }

    /// The dry run: why the drain cannot start, if it cannot.
    pub async fn check(&self, node: &str) -> Result<Option<String>, BackendError> {
        let pods = self.pods_on(node).await?;
        let mut protected = None;
        for pod in &pods {
            match action(pod, self.options.protected_job_pods.covers(&pod.labels)) {
                Action::Refuse => return Ok(Some(refused_job(pod))),
                Action::Evict => {
                    if matches!(self.options.protected_namespaces, Protection::Matching(_))
                        && protected.is_none()
                    {
                        protected = Some(self.protected_namespaces().await?);
                    }
                    let listed = protected.clone().flatten();
                    if !self.namespace_protected(&listed, &pod.namespace) {
                        continue;
                    }
                    if let Evicted::Refused(why) = self.evict(pod, true).await? {
                        return Ok(Some(format!(
                            "failed to evict pod {} due to PDB (dry run): {why}",
                            pod.key()
                        )));
                    }
                }
                Action::Stay | Action::Wait | Action::Delete => {}
            }
        }
        Ok(None)
    }

    /// The dry run (if [`Options::check_before_cordon`]), then the cordon.
    pub async fn cordon(&mut self, node: &str) -> Result<Cordon, BackendError> {
        if self.options.check_before_cordon
            && let Some(why) = self.check(node).await?
        {
            return Ok(Cordon::Refused(why));
        }
        let current = self.get_node(node).await?;
        let ours = self.ours(&current);
        let cordoned = current.pointer("/spec/unschedulable") == Some(&json!(true));
        if cordoned && (ours || self.options.cordon_annotation.is_none()) {
            return Ok(Cordon::Done);
        }
        let mut body = json!({"spec": {"unschedulable": true}});
        if let Some(key) = &self.options.cordon_annotation {
            body["metadata"] = json!({"annotations": {key.as_str(): "true"}});
        }
        self.patch_node(node, &current, body).await?;
        self.refusals.remove(node);
        tracing::info!(node, "node cordoned");
        Ok(Cordon::Done)
    }

    /// Undoes our cordon: with a cordon annotation, only on a Node that carries it (someone
    /// else's cordon stays). Whether anything changed.
    pub async fn uncordon(&mut self, node: &str) -> Result<bool, BackendError> {
        self.refusals.remove(node);
        let current = self.get_node(node).await?;
        let cordoned = current.pointer("/spec/unschedulable") == Some(&json!(true));
        let body = match &self.options.cordon_annotation {
            Some(key) if self.ours(&current) => json!({
                "spec": {"unschedulable": false},
                "metadata": {"annotations": {key.as_str(): null}},
            }),
            Some(_) => return Ok(false),
            None if cordoned => json!({"spec": {"unschedulable": false}}),
            None => return Ok(false),
        };
        self.patch_node(node, &current, body).await?;
        tracing::info!(node, "node uncordoned");
        Ok(true)
    }

    /// Whether nothing is left on the Node that must go.
    pub async fn is_drained(&self, node: &str) -> Result<bool, BackendError> {
        Ok(!self.pods_on(node).await?.iter().any(blocks_drain))
    }

    /// One pass of the drain: evicts or deletes what must go and is due, and says where the
    /// drain stands. `now` in seconds since the epoch.
    pub async fn evict_step(&mut self, node: &str, now: i64) -> Result<Outcome, BackendError> {
        let pods = self.pods_on(node).await?;
        if !pods.iter().any(blocks_drain) {
            self.refusals.remove(node);
            return Ok(Outcome::Drained);
        }
        // Counts of Pods no longer there are of no use.
        let present: HashSet<String> = pods.iter().map(PodFacts::key).collect();
        if let Some(r) = self.refusals.get_mut(node) {
            r.retain(|k, _| present.contains(k));
        }
        let mut progress = Progress::default();
        let mut protected: Option<Option<HashSet<String>>> = None;
        for pod in &pods {
            let key = pod.key();
            match action(pod, self.options.protected_job_pods.covers(&pod.labels)) {
                Action::Stay => {}
                Action::Wait => progress.waiting.push(key),
                Action::Refuse => {
                    self.refusals.remove(node);
                    return Ok(Outcome::Failed(refused_job(pod)));
                }
                Action::Delete => {
                    if self.delete_pod(pod).await? {
                        tracing::info!(node, pod = %key, "job-managed pod deleted");
                        progress.deleted.push(key);
                    }
                }
                Action::Evict => {
                    let earlier = self
                        .refusals
                        .get(node)
                        .and_then(|r| r.get(&key))
                        .filter(|r| r.uid == pod.uid);
                    if earlier.is_some_and(|r| now - r.last < self.options.evict_interval) {
                        progress.waiting.push(key);
                        continue;
                    }
                    match self.evict(pod, false).await? {
                        Evicted::Yes => {
                            tracing::info!(node, pod = %key, "pod evicted");
                            progress.evicted.push(key);
                        }
                        Evicted::Gone => progress.waiting.push(key),
                        Evicted::Refused(why) => {
                            if protected.is_none() {
                                protected = Some(self.protected_namespaces().await?);
                            }
                            let listed = protected.clone().flatten();
                            let ns_protected = self.namespace_protected(&listed, &pod.namespace);
                            let count = earlier.map_or(0, |r| r.count) + 1;
                            match after_refusal(ns_protected, count, self.options.evict_retries) {
                                AfterRefusal::Delete => {
                                    tracing::warn!(node, pod = %key, why = %why, "eviction refused outside the protected namespaces: pod deleted");
                                    if self.delete_pod(pod).await? {
                                        progress.deleted.push(key);
                                    }
                                }
                                AfterRefusal::Retry => {
                                    tracing::warn!(node, pod = %key, why = %why, refusals = count, "eviction refused: tried again on a later pass");
                                    self.refusals.entry(node.to_owned()).or_default().insert(
                                        key.clone(),
                                        Refusals {
                                            uid: pod.uid.clone(),
                                            count,
                                            last: now,
                                            why,
                                        },
                                    );
                                    progress.refused.push(key);
                                }
                                AfterRefusal::GiveUp => {
                                    self.refusals.remove(node);
                                    return Ok(Outcome::Failed(format!(
                                        "failed to evict pod {key} due to PDB: {why} (refused {count} time(s), evict_retries {})",
                                        self.options.evict_retries
                                    )));
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(Outcome::Draining(progress))
    }

    /// The last refusal of a Pod on the Node, if it is being retried.
    pub fn last_refusal(&self, node: &str, pod: &str) -> Option<&str> {
        self.refusals
            .get(node)
            .and_then(|r| r.get(pod))
            .map(|r| r.why.as_str())
    }

    fn ours(&self, node: &Value) -> bool {
        self.options.cordon_annotation.as_ref().is_some_and(|key| {
            node.pointer("/metadata/annotations")
                .and_then(|a| a.get(key))
                .is_some()
        })
    }

    async fn get_node(&self, node: &str) -> Result<Value, BackendError> {
        let path = format!("/api/v1/nodes/{node}");
        let call = self.call("GET", &path, "nodes");
        let req = Request::new("/api/v1/nodes")
            .get(node, &Default::default())
            .map_err(|e| BackendError::Api(format!("node {node}: cannot build the read: {e}")))?;
        let body = self
            .client
            .request_text(req)
            .await
            .map_err(|e| from_kube(e, &call))?;
        serde_json::from_str(&body).map_err(|e| nonsense(&call, &format!("not JSON: {e}")))
    }

    /// A merge patch conditioned on the resourceVersion read.
    async fn patch_node(
        &self,
        node: &str,
        current: &Value,
        mut body: Value,
    ) -> Result<(), BackendError> {
        self.may_write()?;
        let rv = current
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        body["metadata"]["resourceVersion"] = json!(rv);
        let params = PatchParams {
            field_manager: Some("autorepair".into()),
            ..PatchParams::default()
        };
        let mut req = Request::new("/api/v1/nodes")
            .patch(node, &params, &Patch::Merge(&body))
            .map_err(|e| BackendError::Api(format!("node {node}: cannot build the patch: {e}")))?;
        if let Some(Ok(uri)) = super::tidy_query(&req.uri().to_string()).map(|u| u.parse()) {
            *req.uri_mut() = uri;
        }
        let path = req.uri().to_string();
        let what = format!("node {node}");
        let call = Call {
            version: Some(rv),
            ..self.call("PATCH", &path, &what)
        };
        self.client
            .request_text(req)
            .await
            .map_err(|e| from_kube(e, &call))?;
        Ok(())
    }

    /// Asks the Eviction API to evict the Pod (conditioned on its uid).
    async fn evict(&self, pod: &PodFacts, dry_run: bool) -> Result<Evicted, BackendError> {
        if !dry_run {
            self.may_write()?;
        }
        let mut body = json!({
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": pod.name, "namespace": pod.namespace},
            "deleteOptions": {"preconditions": {"uid": pod.uid}},
        });
        if dry_run {
            body["deleteOptions"]["dryRun"] = json!(["All"]);
        }
        let params = PostParams {
            dry_run,
            ..PostParams::default()
        };
        let req = Request::new(format!("/api/v1/namespaces/{}/pods", pod.namespace))
            .create_subresource(
                "eviction",
                &pod.name,
                &params,
                body.to_string().into_bytes(),
            )
            .map_err(|e| {
                BackendError::Api(format!("pod {}: cannot build the eviction: {e}", pod.key()))
            })?;
        let path = req.uri().to_string();
        let what = format!("pod {} (eviction)", pod.key());
        let call = self.call("POST", &path, &what);
        match self.client.request_text(req).await {
            Ok(_) => Ok(Evicted::Yes),
            Err(::kube::Error::Api(s)) => match s.code {
                404 | 409 => Ok(Evicted::Gone),
                429 => Ok(Evicted::Refused(s.message)),
                _ => Err(from_kube(::kube::Error::Api(s), &call)),
            },
            Err(e) => Err(from_kube(e, &call)),
        }
    }

    /// Deletes the Pod (conditioned on its uid); false when it was gone or replaced.
    async fn delete_pod(&self, pod: &PodFacts) -> Result<bool, BackendError> {
        self.may_write()?;
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: Some(pod.uid.clone()),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        let req = Request::new(format!("/api/v1/namespaces/{}/pods", pod.namespace))
            .delete(&pod.name, &params)
            .map_err(|e| {
                BackendError::Api(format!("pod {}: cannot build the delete: {e}", pod.key()))
            })?;
        let path = req.uri().to_string();
        let what = format!("pod {}", pod.key());
        let call = self.call("DELETE", &path, &what);
        match self.client.request_text(req).await {
            Ok(_) => Ok(true),
            Err(::kube::Error::Api(s)) if s.code == 404 || s.code == 409 => Ok(false),
            Err(e) => Err(from_kube(e, &call)),
        }
    }
}

fn refused_job(pod: &PodFacts) -> String {
    format!(
        "protected job-managed pod exists: {}, phase={}",
        pod.key(),
        pod.phase
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(controller: Option<&str>, phase: &str) -> PodFacts {
        PodFacts {
            namespace: "ns".into(),
            name: "p".into(),
            uid: "u".into(),
            controller: controller.map(str::to_owned),
            phase: phase.into(),
            ..PodFacts::default()
        }
    }

    #[test]
    fn which_pod_gets_what() {
        let terminating = |mut p: PodFacts| {
            p.terminating = true;
            p
        };
        let mirror = |mut p: PodFacts| {
            p.mirror = true;
            p
        };
        // (pod, job protected, action, blocks the drain)
        let cases = [
            (pod(Some("DaemonSet"), "Running"), true, Action::Stay, false),
            (
                terminating(pod(Some("DaemonSet"), "Running")),
                true,
                Action::Stay,
                false,
            ),
            (mirror(pod(None, "Running")), true, Action::Stay, false),
            (pod(Some("Job"), "Pending"), true, Action::Stay, false),
            (pod(Some("Job"), "Succeeded"), true, Action::Stay, false),
            (pod(Some("Job"), "Failed"), false, Action::Stay, false),
            (pod(Some("Job"), "Running"), true, Action::Refuse, true),
            (pod(Some("Job"), "Running"), false, Action::Delete, true),
            (pod(Some("Job"), "Unknown"), false, Action::Delete, true),
            (
                terminating(pod(Some("Job"), "Running")),
                true,
                Action::Wait,
                true,
            ),
            (
                pod(Some("ReplicaSet"), "Running"),
                true,
                Action::Evict,
                true,
            ),
            (pod(None, "Running"), true, Action::Evict, true),
            // Finished Pods of anything but a Job are evicted too (CKE), and block till gone.
            (pod(None, "Succeeded"), true, Action::Evict, true),
            (
                pod(Some("StatefulSet"), "Pending"),
                true,
                Action::Evict,
                true,
            ),
            (terminating(pod(None, "Running")), true, Action::Wait, true),
        ];
        for (i, (p, protected, want, blocks)) in cases.into_iter().enumerate() {
            assert_eq!(action(&p, protected), want, "case {i}: {p:?}");
            assert_eq!(blocks_drain(&p), blocks, "case {i}: {p:?}");
        }
    }

    #[test]
    fn pod_facts_come_from_the_controller_owner_only() {
        let v = json!({
            "metadata": {
                "namespace": "ns", "name": "p", "uid": "u1",
                "labels": {"app": "web"},
                "annotations": {"kubernetes.io/config.mirror": "x"},
                "deletionTimestamp": "2026-01-01T00:00:00Z",
                "ownerReferences": [
                    {"kind": "DaemonSet", "name": "d", "controller": false},
                    {"kind": "Job", "name": "j", "controller": true},
                ],
            },
            "status": {"phase": "Running"},
        });
        let p = PodFacts::from_value(&v);
        assert_eq!(p.key(), "ns/p");
        assert_eq!(p.uid, "u1");
        assert_eq!(p.controller.as_deref(), Some("Job"));
        assert_eq!(p.labels["app"], "web");
        assert!(p.mirror && p.terminating);
        let bare = PodFacts::from_value(&json!({"metadata": {"name": "q"}}));
        assert_eq!(
            (bare.controller, bare.mirror, bare.terminating),
            (None, false, false)
        );
    }

    #[test]
    fn refusals_delete_retry_or_give_up() {
        // (namespace protected, refusals so far including this one, evict_retries, then)
        let cases = [
            (false, 1, 0, AfterRefusal::Delete),
            (false, 9, 3, AfterRefusal::Delete),
            (true, 1, 0, AfterRefusal::GiveUp),
            (true, 1, 1, AfterRefusal::Retry),
            (true, 2, 1, AfterRefusal::GiveUp),
            (true, 3, 3, AfterRefusal::Retry),
            (true, 4, 3, AfterRefusal::GiveUp),
        ];
        for (protected, n, retries, want) in cases {
            assert_eq!(
                after_refusal(protected, n, retries),
                want,
                "{protected} {n} {retries}"
            );
        }
    }

    #[test]
    fn backoff_is_linear_with_jitter_below_its_bound() {
        let now = 1_000_000;
        // (count before, jitter answer, new count, expiry, bound the jitter was asked for)
        let cases = [
            (0, 0, 1, now + 300, 300),
            (0, 299, 1, now + 599, 300),
            (1, 0, 2, now + 300, 600),
            (1, 599, 2, now + 899, 600),
            (4, 1000, 5, now + 1300, 1500),
            // A jitter source out of range is held to [0, bound).
            (0, 5000, 1, now + 599, 300),
            (0, -7, 1, now + 300, 300),
        ];
        for (count, j, want_count, want_expire, want_bound) in cases {
            let mut asked = None;
            let got = backoff(count, now, |b| {
                asked = Some(b);
                j
            });
            assert_eq!(got, (want_count, want_expire), "{count} {j}");
            assert_eq!(asked, Some(want_bound));
        }
        for _ in 0..100 {
            let j = random_jitter(600);
            assert!((0..600).contains(&j), "{j}");
        }
    }

    #[test]
    fn timeouts_are_strict() {
        assert!(!timed_out(1000, 1600, 600));
        assert!(timed_out(1000, 1601, 600));
        assert!(!timed_out(1000, 1000, 600));
    }

    #[test]
    fn cke_reads_unset_or_empty_selectors_as_everything() {
        assert_eq!(Protection::from_cke(None), Protection::All);
        assert_eq!(
            Protection::from_cke(Some(LabelSelector::default())),
            Protection::All
        );
        let sel: LabelSelector = serde_yaml_ng::from_str("{matchLabels: {team: x}}").unwrap();
        let p = Protection::from_cke(Some(sel.clone()));
        assert_eq!(p, Protection::Matching(sel));
        let labels: BTreeMap<String, String> = [("team".to_owned(), "x".to_owned())].into();
        assert!(p.covers(&labels));
        assert!(!p.covers(&BTreeMap::new()));
        assert!(!Protection::Nothing.covers(&labels));
    }
}
