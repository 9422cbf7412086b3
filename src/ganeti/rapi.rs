//! Ganeti RAPI backend (reqwest, blocking). Works from any host that reaches the RAPI port.
//!
//! A snapshot costs a constant number of requests whatever the cluster size: cluster info,
//! groups, nodes (which carry instance placement cheaply: `pinst_list`/`sinst_list`),
//! instances through the query resource with only cheap fields (Ganeti 3.0 computes `pnode`
//! and `snodes` of instances in quadratic time), the job list, plus one request per job that a
//! pending tag names or that failed and must be judged. The reads run concurrently on one
//! shared client (scoped threads, a bounded number at once).
//!
//! Which calls need what access (lines `NAME PASSWORD [read|write]` in Ganeti's
//! `/var/lib/ganeti/rapi/users`): every read but one is open to any RAPI user; the query
//! resource (`/2/query/instance`) needs the `read` or `write` option, and without it the
//! snapshot falls back to `/2/instances?bulk=1` (slow on large clusters); every write (tags,
//! repairs) needs `write`.

use super::Ganeti;
use crate::engine::{Backend, BackendError};
use crate::ganeti::snapshot::{
    Cluster, Group, Instance, Job, JobStatus, Node, ObjectRef, Op, OpKind, Snapshot,
};
use reqwest::blocking::{Client, RequestBuilder, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

mod errors;

/// Where the RAPI password comes from. A file is read again by every [`Rapi::connect`], so a
/// daemon (which connects for each pass) uses a rotated password from its next pass on.
#[derive(Clone)]
pub enum Password {
    /// The first line of this file.
    File(PathBuf),
    /// The password itself: `AUTOREPAIR_RAPI_PASSWORD`, read when the process started (nothing
    /// outside a process can change its environment, so rotating it means a restart).
    Given(String),
}

impl Password {
    /// The password now. Only ever held in memory, never shown.
    pub fn read(&self) -> Result<String, BackendError> {
        match self {
            Password::File(path) => read_password(Some(path)),
            Password::Given(password) => Ok(password.clone()),
        }
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Password::File(path) => f.debug_tuple("File").field(path).finish(),
            Password::Given(_) => f.write_str("Given(<hidden>)"),
        }
    }
}

/// How to reach and trust a RAPI endpoint.
pub struct Endpoint {
    /// e.g. `https://cluster.example.org:5080`
    pub url: String,
    pub user: String,
    pub password: Password,
    /// PEM file with the server's certificate (Ganeti's `rapi.pem`) or a CA.
    pub ca_file: Option<std::path::PathBuf>,
    /// Skip certificate verification entirely.
    pub insecure: bool,
    pub timeout: Duration,
    /// Read each instance's run status too (`status`, `explain`, `snapshot`). Passes do not:
    /// the planner does not use it, and Ganeti 3.0 asks every node for it, which took 4-5 s
    /// at 20,000 instances on the testbed (docs/ganeti-bench.md).
    pub run_status: bool,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.url)
            .field("user", &self.user)
            .field("password", &self.password)
            .field("ca_file", &self.ca_file)
            .field("insecure", &self.insecure)
            .finish()
    }
}

pub struct Rapi {
    /// Offers only TLS 1.2 (see `tls_versions`).
    client: Client,
    /// Built when the server refuses TLS 1.2: offers 1.3 as well.
    client13: OnceLock<Client>,
    use13: AtomicBool,
    base: String,
    user: String,
    password: String,
    timeout: Duration,
    ca_file: Option<PathBuf>,
    insecure: bool,
    run_status: bool,
    /// The user may not use the query resource (no `read` option): read `bulk=1` instead.
    query_forbidden: AtomicBool,
    /// Last tag job per object in this pass: later writes on the object depend on it, so
    /// Ganeti applies them in the order the executor made them without the pass waiting.
    last_tag_job: HashMap<ObjectRef, u64>,
    retry: RetryPolicy,
    /// What the retries of this connection (one pass, one command) did so far.
    retried: Retried,
}

/// When a failed request is tried again. A connection lives for one pass (or one command), so
/// these bound the retries of a pass: a RAPI daemon or luxid that is down costs a pass a few
/// seconds and one warning, not minutes and a warning per request.
#[derive(Clone, Copy, Debug)]
struct RetryPolicy {
    /// Retries of one request at most.
    retries: u32,
    /// The pause before the first retry, doubled before each next one.
    first_pause: Duration,
    /// No retry starts later than this after the request's first attempt, nor after the
    /// connection's first failure: a request that failed slowly (a timeout) is not tried again.
    window: Duration,
    /// How long connecting (TCP and the TLS handshake) may take: the endpoint's timeout if
    /// shorter. An unreachable master is told at once, not after a whole request's time.
    connect_timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            retries: 3,
            first_pause: Duration::from_millis(500),
            window: Duration::from_secs(20),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

#[derive(Default)]
struct Retried {
    /// When a request of this connection first failed in a way worth retrying.
    first_failure: std::sync::Mutex<Option<Instant>>,
    /// A request gave up: the service is down for now, and the others do not retry.
    gave_up: AtomicBool,
    /// The kinds of failure already warned about: each says "retrying" once.
    warned: std::sync::Mutex<Vec<String>>,
}

fn api(message: impl Into<String>) -> BackendError {
    BackendError::Api(message.into())
}

/// At most this many RAPI requests at once. Ganeti's RAPI daemon forks a process per
/// connection and the master usually has few cores, so a handful is enough to overlap the
/// waits without crowding the master.
const PARALLEL_READS: usize = 6;

/// How long a pass waits, at its end, for Ganeti to apply the tag writes it queued.
const TAG_JOB_WAIT: Duration = Duration::from_secs(15 * 60);

impl Rapi {
    pub fn connect(endpoint: &Endpoint) -> Result<Rapi, BackendError> {
        Self::connect_with(endpoint, RetryPolicy::default())
    }

    fn connect_with(endpoint: &Endpoint, retry: RetryPolicy) -> Result<Rapi, BackendError> {
        let url = endpoint.url.trim_end_matches('/').to_owned();
        if !url.starts_with("https://") {
            return Err(api(format!(
                "RAPI URL {url:?} must start with https:// (Ganeti's RAPI speaks only HTTPS)"
            )));
        }
        Ok(Rapi {
            client: build_client(endpoint, retry.connect_timeout, false)?,
            client13: OnceLock::new(),
            use13: AtomicBool::new(false),
            base: url,
            user: endpoint.user.clone(),
            password: endpoint.password.read()?,
            timeout: endpoint.timeout,
            ca_file: endpoint.ca_file.clone(),
            insecure: endpoint.insecure,
            run_status: endpoint.run_status,
            query_forbidden: AtomicBool::new(false),
            last_tag_job: HashMap::new(),
            retry,
            retried: Retried::default(),
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn context(&self) -> errors::Context<'_> {
        errors::Context {
            timeout: self.timeout,
            connect_timeout: self.timeout.min(self.retry.connect_timeout),
            ca_file: self.ca_file.as_deref(),
            user: &self.user,
        }
    }

    fn client(&self) -> &Client {
        if !self.use13.load(Ordering::Relaxed) {
            return &self.client;
        }
        self.client13.get_or_init(|| {
            let endpoint = Endpoint {
                url: self.base.clone(),
                user: String::new(),
                password: Password::Given(String::new()),
                ca_file: self.ca_file.clone(),
                insecure: self.insecure,
                timeout: self.timeout,
                run_status: self.run_status,
            };
            // The same settings built once already; only the protocol versions differ.
            build_client(&endpoint, self.retry.connect_timeout, true)
                .unwrap_or_else(|_| self.client.clone())
        })
    }

    /// Sends a request. Reads are retried with backoff when the error is transient
    /// (`BackendError::is_transient`), within the bounds of [`RetryPolicy`]; writes only when
    /// nothing was sent yet, since a write that reached Ganeti may have created a job already.
    /// Each kind of failure is warned about once per connection; the error a request gives up
    /// with says how many attempts it made over how long.
    fn send(
        &self,
        method: &reqwest::Method,
        path: &str,
        make: impl Fn(&Client, &str) -> RequestBuilder,
    ) -> Result<Response, BackendError> {
        let idempotent = *method == reqwest::Method::GET;
        let url = self.url(path);
        let first = Instant::now();
        let mut attempt = 0;
        let mut pause = self.retry.first_pause;
        loop {
            attempt += 1;
            let started = Instant::now();
            let result = make(self.client(), &url)
                .basic_auth(&self.user, Some(&self.password))
                .send();
            let (err, sent) = match result {
                Ok(resp) if resp.status().is_success() => {
                    tracing::debug!(%method, %url, elapsed = ?started.elapsed(), "RAPI answered");
                    return Ok(resp);
                }
                Ok(resp) => {
                    let status = resp.status();
                    let body = resp.text().unwrap_or_default();
                    (
                        errors::http(method, &url, status, &body, &self.context()),
                        true,
                    )
                }
                Err(e) => {
                    if errors::refuses_protocol_version(&e)
                        && !self.use13.swap(true, Ordering::Relaxed)
                    {
                        tracing::info!(%url, "the RAPI server refuses TLS 1.2: using TLS 1.3");
                        attempt -= 1;
                        continue;
                    }
                    (
                        errors::transport(&e, &url, &self.context()),
                        !e.is_connect(),
                    )
                }
            };
            if !err.is_transient() || (sent && !idempotent) {
                return Err(err);
            }
            if !self.may_retry(attempt, first, pause) {
                self.retried.gave_up.store(true, Ordering::Relaxed);
                return Err(after_attempts(err, attempt, first.elapsed()));
            }
            let kind = failure_kind(&err);
            let new_kind = {
                let mut warned = self
                    .retried
                    .warned
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                !warned.contains(&kind) && {
                    warned.push(kind);
                    true
                }
            };
            if new_kind {
                tracing::warn!(
                    "{err} (retrying, at most {} times within {})",
                    self.retry.retries,
                    humantime::format_duration(self.retry.window)
                );
            } else {
                tracing::debug!(%url, attempt, "retrying: {err}");
            }
            std::thread::sleep(pause);
            pause *= 2;
        }
    }

    /// Whether a request that failed `attempt` times since `first` is tried again after
    /// `pause`.
    fn may_retry(&self, attempt: u32, first: Instant, pause: Duration) -> bool {
        let window = self.retry.window;
        let failing_since = *self
            .retried
            .first_failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(Instant::now);
        attempt <= self.retry.retries
            && !self.retried.gave_up.load(Ordering::Relaxed)
            && first.elapsed() + pause <= window
            && failing_since.elapsed() + pause <= window
    }

    fn get(&self, path: &str) -> Result<Value, BackendError> {
        let method = reqwest::Method::GET;
        let resp = self.send(&method, path, |c, url| c.get(url))?;
        self.json(&method, path, resp)
    }

    fn json(
        &self,
        method: &reqwest::Method,
        path: &str,
        resp: Response,
    ) -> Result<Value, BackendError> {
        resp.json().map_err(|e| {
            if e.is_decode() {
                api(format!(
                    "{method} {}: the answer is not the JSON Ganeti sends: {e}",
                    self.url(path)
                ))
            } else {
                errors::transport(&e, &self.url(path), &self.context())
            }
        })
    }

    /// Reads every path, at most `PARALLEL_READS` at once; the answers in the order asked.
    fn get_all(&self, paths: &[String]) -> Vec<Result<Value, BackendError>> {
        let workers = paths.len().min(PARALLEL_READS);
        if workers <= 1 {
            return paths.iter().map(|p| self.get(p)).collect();
        }
        let mut answers: Vec<(usize, Result<Value, BackendError>)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    s.spawn(move || {
                        (w..paths.len())
                            .step_by(workers)
                            .map(|i| (i, self.get(&paths[i])))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().flat_map(join).collect()
        });
        answers.sort_by_key(|(i, _)| *i);
        answers.into_iter().map(|(_, a)| a).collect()
    }

    /// A write that starts a job; returns the job id.
    fn write(
        &self,
        method: reqwest::Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Result<u64, BackendError> {
        let resp = self.send(&method, path, |c, url| {
            let req = c.request(method.clone(), url).query(query);
            match body {
                Some(b) => req.json(b),
                None => req,
            }
        })?;
        let v = self.json(&method, path, resp)?;
        job_id(&v).ok_or_else(|| {
            api(format!(
                "{method} {}: expected a job id, got {v}",
                self.url(path)
            ))
        })
    }

    fn object_path(object: &ObjectRef) -> String {
        let enc = |s: &str| s.replace('/', "%2F");
        let n = &object.name;
        match object.kind.as_ref() {
            super::kind::GROUP => format!("/2/groups/{}/tags", enc(n)),
            super::kind::NODE => format!("/2/nodes/{}/tags", enc(n)),
            super::kind::INSTANCE => format!("/2/instances/{}/tags", enc(n)),
            _ => "/2/tags".into(),
        }
    }

    fn tags(
        &mut self,
        method: reqwest::Method,
        object: &ObjectRef,
        tags: &[String],
        reason: &str,
    ) -> Result<(), BackendError> {
        let mut query: Vec<(&str, &str)> = tags.iter().map(|t| ("tag", t.as_str())).collect();
        let reason = ganeti_reason(reason);
        query.push(("reason", &reason));
        let body = self
            .last_tag_job
            .get(object)
            .map(|j| json!({ "depends": [[j, ["success"]]] }));
        let path = Self::object_path(object);
        let job = self
            .write(method, &path, &query, body.as_ref())
            .map_err(|e| match e {
                // Ganeti answers 500, not 404, for the tags of an unknown object; its error
                // code is the only thing that tells.
                BackendError::Http {
                    status: 404 | 500,
                    ref message,
                    ..
                } if message.contains("unknown_entity") || message.contains("not found") => {
                    BackendError::NoSuchObject {
                        object: object.clone(),
                    }
                }
                other => other,
            })?;
        self.last_tag_job.insert(object.clone(), job);
        Ok(())
    }

    /// The rows of a query-resource read (`/2/query/<resource>`), or `None` when the user may
    /// not use the query resource: then the caller reads the `bulk=1` resource instead.
    fn query(
        &self,
        resource: &str,
        fields: &[&str],
    ) -> Result<Option<Vec<Vec<Value>>>, BackendError> {
        if self.query_forbidden.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let path = format!("/2/query/{resource}?fields={}", fields.join(","));
        match self.get(&path) {
            Ok(q) => query_rows(q, fields, &path).map(Some),
            Err(BackendError::Http { status: 403, .. }) => {
                // Nodes and instances are read at once: warn once.
                if !self.query_forbidden.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "the RAPI user {:?} may not use the query resource {}/2/query/ (403: it has neither the `read` nor the `write` option): reading /2/instances?bulk=1 and /2/nodes?bulk=1 instead, which Ganeti 3.0 answers slowly on large clusters (10 s at 5,000 instances). Give the user the `read` option in /var/lib/ganeti/rapi/users on the master",
                        self.user,
                        self.base
                    );
                }
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// The instances with their tags and, if asked for, run status; placement comes from the
    /// nodes' lists afterwards.
    fn instances(&self) -> Result<Vec<Instance>, BackendError> {
        // The run status in a query of its own, so that its node calls overlap with the
        // cheap fields instead of holding them up.
        let (rows, status) = std::thread::scope(|s| {
            let status = self
                .run_status
                .then(|| s.spawn(|| self.query("instance", &["name", "status"])));
            (self.query("instance", &QUERY_FIELDS), status.map(join))
        });
        match (rows?, status.transpose()?.flatten()) {
            (Some(rows), status) => instances_from_query(rows, status),
            (None, _) => instances_from_bulk(self.get("/2/instances?bulk=1")?),
        }
    }

    /// The nodes and where each instance runs. `/2/nodes?bulk=1` also asks every node daemon
    /// for its memory and disks, which the planner never uses: on the testbed at 5,000
    /// instances the query resource answered in half the time (docs/ganeti-bench.md).
    fn nodes(&self) -> Result<(Vec<Node>, Placement), BackendError> {
        match self.query("node", &NODE_FIELDS)? {
            Some(rows) => nodes_from(
                rows.into_iter()
                    .map(|row| {
                        Value::Object(NODE_FIELDS.iter().map(|f| f.to_string()).zip(row).collect())
                    })
                    .collect(),
                "GET /2/query/node",
            ),
            None => nodes_from(self.get("/2/nodes?bulk=1")?, "GET /2/nodes?bulk=1"),
        }
    }

    /// Every job the watcher may need to judge: the recent ones (with their reason trails) and
    /// each one a pending tag names, even if archived.
    fn jobs(&self, listed: Value, instances: &[Instance]) -> Result<Vec<Job>, BackendError> {
        let listed = listed
            .as_array()
            .ok_or_else(|| api(format!("GET {}/2/jobs?bulk=1: expected a list", self.base)))?;
        let mut jobs: Vec<Job> = listed.iter().filter_map(job_from_rapi).collect();
        attribute_reinstalls(&mut jobs);
        // The job list has no results: fetch them for our failed jobs, and fetch every job a
        // pending tag names (archived jobs are not in the list).
        let mut wanted: Vec<u64> = jobs
            .iter()
            .filter(|j| j.repair_id().is_some() && j.status == Some(JobStatus::Error))
            .map(|j| j.id)
            .collect();
        for i in instances {
            for t in &i.tags {
                if let Ok(crate::ganeti::tags::Tag::Pending(p)) = crate::ganeti::tags::parse(t) {
                    wanted.extend(p.ops.iter::<u64>());
                }
            }
        }
        wanted.sort_unstable();
        wanted.dedup();
        let paths: Vec<String> = wanted.iter().map(|id| format!("/2/jobs/{id}")).collect();
        for (&id, full) in wanted.iter().zip(self.get_all(&paths)) {
            let job = job_from_rapi(&full?).unwrap_or(Job {
                id,
                ..Job::default()
            });
            match jobs.iter_mut().find(|j| j.id == id) {
                // The listed one knows its (attributed) reason; the full one its results.
                Some(known) => {
                    known.opresult = job.opresult;
                    known.status = job.status;
                    known.end_ts = job.end_ts.or(known.end_ts);
                }
                None => jobs.push(job),
            }
        }
        attribute_reinstalls(&mut jobs);
        Ok(jobs)
    }
}

/// One word per kind of transient failure, to warn about each once.
fn failure_kind(e: &BackendError) -> String {
    match e {
        BackendError::Http { status, .. } => format!("HTTP {status}"),
        BackendError::Refused { .. } => "refused".into(),
        BackendError::Timeout { .. } => "timeout".into(),
        _ => "connect".into(),
    }
}

/// The error a request gave up with, saying how many attempts it made over how long.
fn after_attempts(mut err: BackendError, attempts: u32, over: Duration) -> BackendError {
    let note = format!(
        "{attempts} attempt{} over {over:.1?}",
        if attempts == 1 { "" } else { "s" }
    );
    match &mut err {
        BackendError::Refused { cause, .. }
        | BackendError::Timeout { cause, .. }
        | BackendError::Connect { cause, .. } => *cause = format!("{cause}; {note}"),
        BackendError::Http { hint, .. } => *hint = format!("{hint} ({note})"),
        _ => {}
    }
    err
}

fn join<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// TLS 1.2 is preferred for Ganeti's RAPI, for speed. Its Python server sends TLS 1.3's
/// session tickets after the handshake and leaves Nagle's algorithm on, so its answer waits
/// until the client acknowledges them, which Linux delays by 40 ms: every TLS 1.3 request to
/// the RAPI took at least 50 ms, and the same over TLS 1.2 about 18 ms (docs/ganeti-bench.md).
/// rustls's TLS 1.2 has only forward-secret AEAD suites. A server that refuses 1.2 gets 1.3.
fn tls_versions(tls13: bool) -> &'static [&'static rustls::SupportedProtocolVersion] {
    static TLS12_ONLY: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
    if tls13 {
        rustls::DEFAULT_VERSIONS
    } else {
        &TLS12_ONLY
    }
}

fn build_client(
    endpoint: &Endpoint,
    connect_timeout: Duration,
    tls13: bool,
) -> Result<Client, BackendError> {
    let mut builder = Client::builder()
        .timeout(endpoint.timeout)
        .connect_timeout(endpoint.timeout.min(connect_timeout))
        .pool_max_idle_per_host(PARALLEL_READS)
        .user_agent(concat!("autorepair/", env!("CARGO_PKG_VERSION")));
    if !tls13 {
        builder = builder.max_tls_version(reqwest::tls::Version::TLS_1_2);
    }
    if endpoint.insecure {
        builder = builder.danger_accept_invalid_certs(true);
    } else if let Some(ca) = &endpoint.ca_file {
        builder = builder.use_preconfigured_tls(tls::pinned_config(ca, tls_versions(tls13))?);
    }
    builder
        .build()
        .map_err(|e| api(format!("cannot set up the HTTPS client: {e}")))
}
/// Ganeti's reason trail takes free text; the watcher's own form is `autorepair:<repair id>`.
fn ganeti_reason(reason: &str) -> String {
    if reason.starts_with(crate::ganeti::snapshot::REASON_PREFIX) {
        reason.to_owned()
    } else {
        format!("autorepair: {reason}")
    }
}

fn job_id(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The repair operation a Ganeti job performs, from its opcodes.
fn op_of(ops: &[Value]) -> Option<Op> {
    let ids: Vec<&str> = ops
        .iter()
        .filter_map(|o| o.get("OP_ID")?.as_str())
        .collect();
    let has = |id: &str| ids.contains(&id);
    // The reinstall resource submits SHUTDOWN, REINSTALL (and STARTUP) in one job.
    Some(if has("OP_INSTANCE_REINSTALL") {
        Op::Reinstall
    } else if has("OP_INSTANCE_RECREATE_DISKS") {
        Op::RecreateDisks {
            nodes: vec![],
            iallocator: None,
        }
    } else if has("OP_INSTANCE_REPLACE_DISKS") {
        Op::ReplaceDisks {
            remote_node: None,
            iallocator: None,
        }
    } else if has("OP_INSTANCE_MIGRATE") {
        Op::Migrate {
            target_node: None,
            iallocator: None,
            allow_failover: false,
        }
    } else if has("OP_INSTANCE_FAILOVER") {
        Op::Failover {
            target_node: None,
            iallocator: None,
        }
    } else if has("OP_INSTANCE_MOVE") {
        Op::Move {
            target_node: String::new(),
        }
    } else {
        return None;
    })
}

/// A job as `GET /2/jobs?bulk=1` or `GET /2/jobs/ID` answers it; `None` for an unknown job
/// (Ganeti answers 200 with every field null).
fn job_from_rapi(v: &Value) -> Option<Job> {
    let id = job_id(v.get("id")?)?;
    let status = v
        .get("status")
        .and_then(|s| serde_json::from_value::<JobStatus>(s.clone()).ok());
    let ops: Vec<Value> = v
        .get("ops")
        .and_then(|o| o.as_array())
        .cloned()
        .unwrap_or_default();
    let reason = ops
        .iter()
        .filter_map(|o| o.get("reason")?.as_array())
        .flatten()
        .filter_map(|entry| entry.get(1)?.as_str())
        .find(|text| text.starts_with(crate::ganeti::snapshot::REASON_PREFIX))
        .map(str::to_owned);
    let instance = ops
        .first()
        .and_then(|o| {
            o.get("instance_name")
                .or_else(|| (o.get("kind")? == "instance").then(|| o.get("name"))?)
        })
        .and_then(|n| n.as_str())
        .map(str::to_owned);
    let end_ts = v
        .get("end_ts")
        .and_then(|t| t.get(0))
        .and_then(|s| s.as_i64());
    Some(Job {
        id,
        status,
        opresult: v.get("opresult").cloned().unwrap_or(Value::Null),
        reason,
        instance,
        op: op_of(&ops),
        depends: vec![],
        end_ts,
        passes_left: None,
    })
}

/// Ganeti 3.0 drops the reason trail of reinstall jobs. A reinstall of an instance submitted
/// after the watcher's recreate-disks on it belongs to that repair: without this a pass that
/// died between submitting the reinstall and recording it would submit it again.
fn attribute_reinstalls(jobs: &mut [Job]) {
    let recreates: Vec<(u64, String, String)> = jobs
        .iter()
        .filter(|j| j.op.as_ref().map(Op::kind) == Some(OpKind::RecreateDisks))
        .filter_map(|j| Some((j.id, j.instance.clone()?, j.reason.clone()?)))
        .collect();
    for j in jobs.iter_mut() {
        if j.reason.is_some() || j.op.as_ref().map(Op::kind) != Some(OpKind::Reinstall) {
            continue;
        }
        j.reason = recreates
            .iter()
            .filter(|(id, inst, _)| *id < j.id && Some(inst) == j.instance.as_ref())
            .max_by_key(|(id, ..)| *id)
            .map(|(_, _, reason)| reason.clone());
    }
}

/// `{"fields":[…],"data":[[[status, value], …], …]}` from the query resource.
#[derive(Deserialize)]
struct QueryResult {
    fields: Vec<Value>,
    data: Vec<Vec<(i64, Value)>>,
}

fn str_field(v: &Value, key: &str, what: &str) -> Result<String, BackendError> {
    v.get(key)
        .and_then(|x| x.as_str())
        .map(str::to_owned)
        .ok_or_else(|| api(format!("{what}: missing or non-text {key:?}")))
}

fn tag_list(v: &Value) -> Vec<String> {
    v.get("tags")
        .and_then(|t| t.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The instance fields read through the query resource: only cheap ones. Ganeti 3.0 computes
/// `pnode` and `snodes` in quadratic time (135 s at 5,000 instances on the testbed), so
/// placement comes from the nodes' lists.
const QUERY_FIELDS: [&str; 4] = ["name", "tags", "admin_state", "disk_template"];

/// The node fields the planner uses, with the instance lists that give placement.
const NODE_FIELDS: [&str; 8] = [
    "name",
    "offline",
    "drained",
    "vm_capable",
    "group.uuid",
    "tags",
    "pinst_list",
    "sinst_list",
];

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(|t| t.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The rows of a query-resource answer, each value without its status (a field Ganeti could
/// not compute is null with a non-zero status).
fn query_rows(q: Value, asked: &[&str], path: &str) -> Result<Vec<Vec<Value>>, BackendError> {
    let what = format!("GET {path}");
    let fields = asked.len();
    let q: QueryResult =
        serde_json::from_value(q).map_err(|e| api(format!("{what}: unexpected shape: {e}")))?;
    if q.fields.len() != fields {
        return Err(api(format!(
            "{what}: the answer has other fields than asked for"
        )));
    }
    q.data
        .into_iter()
        .map(|row| {
            if row.len() != fields {
                return Err(api(format!("{what}: a row without the fields asked for")));
            }
            Ok(row.into_iter().map(|(_, v)| v).collect())
        })
        .collect()
}

/// Instances from the rows of `QUERY_FIELDS`, with the run status from `name,status` rows.
fn instances_from_query(
    rows: Vec<Vec<Value>>,
    status: Option<Vec<Vec<Value>>>,
) -> Result<Vec<Instance>, BackendError> {
    let mut status: HashMap<String, String> = status
        .unwrap_or_default()
        .into_iter()
        .filter_map(|r| match <[Value; 2]>::try_from(r) {
            Ok([Value::String(name), Value::String(status)]) => Some((name, status)),
            _ => None,
        })
        .collect();
    Ok(rows
        .into_iter()
        .filter_map(|row| <[Value; 4]>::try_from(row).ok())
        .map(|[name, tags, admin, template]| {
            let name = name.as_str().unwrap_or_default().to_owned();
            Instance {
                pnode: String::new(),
                snodes: vec![],
                disk_template: template.as_str().unwrap_or_default().to_owned(),
                admin_state: admin.as_str().unwrap_or("up").to_owned(),
                status: status.remove(&name).unwrap_or_default(),
                tags: strings(Some(&tags)),
                name,
            }
        })
        .collect())
}

/// Objects of `GET /2/instances?bulk=1`, the read for users without the `read` option.
fn instances_from_bulk(v: Value) -> Result<Vec<Instance>, BackendError> {
    let what = "GET /2/instances?bulk=1";
    v.as_array()
        .ok_or_else(|| api(format!("{what}: expected a list")))?
        .iter()
        .map(|i| {
            let text = |k: &str| i.get(k).and_then(|x| x.as_str()).map(str::to_owned);
            Ok(Instance {
                name: str_field(i, "name", what)?,
                pnode: text("pnode").unwrap_or_default(),
                snodes: strings(i.get("snodes")),
                disk_template: text("disk_template").unwrap_or_default(),
                admin_state: text("admin_state").unwrap_or_else(|| "up".into()),
                status: text("status").unwrap_or_default(),
                tags: tag_list(i),
            })
        })
        .collect()
}

fn groups_from(v: Value) -> Result<Vec<Group>, BackendError> {
    v.as_array()
        .ok_or_else(|| api("GET /2/groups?bulk=1: expected a list"))?
        .iter()
        .map(|g| {
            Ok(Group {
                name: str_field(g, "name", "a group")?,
                uuid: str_field(g, "uuid", "a group")?,
                tags: tag_list(g),
            })
        })
        .collect()
}

/// Nodes, and where each instance runs: `pinst_list`/`sinst_list` are cheap where the
/// instances' own `pnode`/`snodes` are not.
type Placement = HashMap<String, (String, Vec<String>)>;

fn nodes_from(v: Value, what: &str) -> Result<(Vec<Node>, Placement), BackendError> {
    let list = v
        .as_array()
        .ok_or_else(|| api(format!("{what}: expected a list")))?;
    let mut placement: Placement = HashMap::new();
    let mut nodes = Vec::with_capacity(list.len());
    for n in list {
        let name = str_field(n, "name", "a node")?;
        for i in strings(n.get("pinst_list")) {
            placement.entry(i).or_default().0 = name.clone();
        }
        for i in strings(n.get("sinst_list")) {
            placement.entry(i).or_default().1.push(name.clone());
        }
        let flag =
            |key: &str, default: bool| n.get(key).and_then(|b| b.as_bool()).unwrap_or(default);
        nodes.push(Node {
            offline: flag("offline", false),
            drained: flag("drained", false),
            vm_capable: flag("vm_capable", true),
            group_uuid: str_field(n, "group.uuid", &format!("node {name}"))?,
            tags: tag_list(n),
            name,
        });
    }
    Ok((nodes, placement))
}

impl Backend<Ganeti> for Rapi {
    /// The independent reads run at once (the snapshot was never atomic: the planner copes
    /// with reads from slightly different moments), then the reads of single jobs.
    fn snapshot(&mut self) -> Result<Snapshot, BackendError> {
        self.last_tag_job.clear();
        let this = &*self;
        let (info, groups, nodes, instances, listed) = std::thread::scope(|s| {
            let info = s.spawn(|| this.get("/2/info"));
            let groups = s.spawn(|| groups_from(this.get("/2/groups?bulk=1")?));
            let nodes = s.spawn(|| this.nodes());
            let instances = s.spawn(|| this.instances());
            let listed = this.get("/2/jobs?bulk=1");
            (
                join(info),
                join(groups),
                join(nodes),
                join(instances),
                listed,
            )
        });
        let info = info?;
        let cluster = Cluster {
            name: str_field(&info, "name", "GET /2/info")?,
            tags: tag_list(&info),
        };
        let (nodes, mut placement) = nodes?;
        let mut instances = instances?;
        for i in &mut instances {
            // The bulk read has placement already; the query read gets it from the nodes.
            if let Some((pnode, snodes)) = placement.remove(&i.name)
                && i.pnode.is_empty()
            {
                i.pnode = pnode;
                i.snodes = snodes;
            }
        }
        let jobs = self.jobs(listed?, &instances)?;
        Ok(Snapshot {
            cluster,
            groups: groups?,
            nodes,
            instances,
            jobs,
            simulation: Default::default(),
        })
    }

    fn add_marks(
        &mut self,
        object: &ObjectRef,
        tags: &[String],
        reason: &str,
    ) -> Result<(), BackendError> {
        self.tags(reqwest::Method::PUT, object, tags, reason)
    }

    fn remove_marks(
        &mut self,
        object: &ObjectRef,
        tags: &[String],
        reason: &str,
    ) -> Result<(), BackendError> {
        self.tags(reqwest::Method::DELETE, object, tags, reason)
    }

    fn submit(
        &mut self,
        instance: &str,
        op: &Op,
        reason: &str,
        after: Option<&u64>,
    ) -> Result<u64, BackendError> {
        let object = super::instance(instance);
        let depends = after
            .copied()
            .or_else(|| self.last_tag_job.get(&object).copied());
        let base = format!("/2/instances/{}", instance.replace('/', "%2F"));
        let place = |node: &Option<String>, key: &str, alloc: &Option<String>| {
            let mut m = serde_json::Map::new();
            if let Some(n) = node {
                m.insert(key.into(), json!(n));
            } else if let Some(a) = alloc {
                m.insert("iallocator".into(), json!(a));
            }
            m
        };
        let (method, path, mut body) = match op {
            Op::Failover {
                target_node,
                iallocator,
            } => {
                let mut b = place(target_node, "target_node", iallocator);
                b.insert("ignore_consistency".into(), json!(false));
                b.insert("shutdown_timeout".into(), json!(120));
                (reqwest::Method::PUT, "failover", b)
            }
            Op::Migrate {
                target_node,
                iallocator,
                allow_failover,
            } => {
                let mut b = place(target_node, "target_node", iallocator);
                b.insert("mode".into(), json!("live"));
                b.insert("allow_failover".into(), json!(allow_failover));
                (reqwest::Method::PUT, "migrate", b)
            }
            Op::ReplaceDisks {
                remote_node,
                iallocator,
            } => {
                let mut b = place(remote_node, "remote_node", iallocator);
                b.insert("mode".into(), json!("replace_new_secondary"));
                (reqwest::Method::POST, "replace-disks", b)
            }
            Op::RecreateDisks { nodes, iallocator } => {
                let mut b = serde_json::Map::new();
                if nodes.is_empty() {
                    if let Some(a) = iallocator {
                        b.insert("iallocator".into(), json!(a));
                    }
                } else {
                    b.insert("nodes".into(), json!(nodes));
                }
                (reqwest::Method::POST, "recreate-disks", b)
            }
            Op::Reinstall => {
                // Ganeti 3.0's reinstall takes neither a reason nor depends (a body next to
                // ?reason= is refused), so the executor never chains it: it runs on a later
                // pass, once the recreate-disks before it succeeded.
                let path = format!("{base}/reinstall");
                return self.write(reqwest::Method::POST, &path, &[], None);
            }
            Op::Move { .. } => {
                return Err(api(format!(
                    "{instance}: Ganeti's RAPI has no instance move: run gnt-instance move on the master"
                )));
            }
        };
        if let Some(d) = depends {
            body.insert("depends".into(), json!([[d, ["success"]]]));
        }
        let path = format!("{base}/{path}");
        self.write(
            method,
            &path,
            &[("reason", reason)],
            Some(&Value::Object(body)),
        )
    }

    fn can_follow(&self, op: &Op) -> bool {
        op.kind() != OpKind::Reinstall
    }

    fn supports(&self, kind: OpKind) -> bool {
        kind != OpKind::Move
    }

    /// Ganeti applies tag writes as queued jobs, behind the repairs that hold the instance's
    /// lock. A pass that read the tags before the previous pass's writes were applied would
    /// write them again (measured on the testbed with passes back to back: results written
    /// several times, pending tags re-added after their result). So a pass ends when its tag
    /// writes are applied; those of one object are chained, so the last one of each is waited
    /// for. A read failure or the time limit ends the wait with a warning, not an error: the
    /// writes were made.
    fn finish_pass(&mut self, _now: i64) -> Result<(), BackendError> {
        let mut waiting: Vec<u64> = self.last_tag_job.values().copied().collect();
        waiting.sort_unstable();
        let deadline = Instant::now() + TAG_JOB_WAIT;
        let mut pause = Duration::from_millis(200);
        while !waiting.is_empty() {
            let paths: Vec<String> = waiting.iter().map(|id| format!("/2/jobs/{id}")).collect();
            let mut unfinished = Vec::new();
            let mut lost: Vec<(u64, BackendError)> = Vec::new();
            for (&id, answer) in waiting.iter().zip(self.get_all(&paths)) {
                match answer {
                    Ok(v) => {
                        let done = job_from_rapi(&v)
                            .is_none_or(|j| j.status.is_none_or(JobStatus::is_finished));
                        if !done {
                            unfinished.push(id);
                        }
                    }
                    Err(e) => lost.push((id, e)),
                }
            }
            // Most often the RAPI went away: one line for all, not one per job.
            if let Some((_, e)) = lost.first() {
                let jobs: Vec<u64> = lost.iter().map(|(id, _)| *id).collect();
                tracing::warn!(?jobs, "cannot follow {} tag job(s): {e}", jobs.len());
            }
            waiting = unfinished;
            if waiting.is_empty() {
                break;
            }
            if Instant::now() >= deadline {
                tracing::warn!(
                    jobs = ?waiting,
                    "tag jobs still queued after {}: the next pass may read tags not yet written",
                    humantime::format_duration(TAG_JOB_WAIT)
                );
                break;
            }
            tracing::debug!(jobs = waiting.len(), "waiting for tag jobs to be applied");
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_secs(2));
        }
        self.last_tag_job.clear();
        Ok(())
    }
}

mod tls {
    //! Trust for Ganeti's self-signed RAPI certificate. Ganeti 3.0 generates an X.509 v1
    //! certificate without subjectAltName, which WebPKI validation (rustls) rejects whatever
    //! the name. So the certificate in the CA file is *pinned*: a server presenting exactly that
    //! certificate is accepted (the handshake signature still proves it holds its key);
    //! anything else must pass normal validation with the file's certificates as roots.

    use super::{BackendError, api};
    use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
    use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
    use rustls::{DigitallySignedStruct, Error, SignatureScheme};
    use std::path::Path;
    use std::sync::Arc;

    #[derive(Debug)]
    struct Pinned {
        pinned: Vec<CertificateDer<'static>>,
        /// Normal validation against the file's certificates, when any can be a root.
        fallback: Option<Arc<dyn ServerCertVerifier>>,
        provider: Arc<CryptoProvider>,
    }

    impl ServerCertVerifier for Pinned {
        fn verify_server_cert(
            &self,
            end_entity: &CertificateDer<'_>,
            intermediates: &[CertificateDer<'_>],
            server_name: &ServerName<'_>,
            ocsp: &[u8],
            now: UnixTime,
        ) -> Result<ServerCertVerified, Error> {
            if self
                .pinned
                .iter()
                .any(|p| p.as_ref() == end_entity.as_ref())
            {
                return Ok(ServerCertVerified::assertion());
            }
            match &self.fallback {
                Some(f) => f.verify_server_cert(end_entity, intermediates, server_name, ocsp, now),
                None => Err(Error::InvalidCertificate(
                    rustls::CertificateError::UnknownIssuer,
                )),
            }
        }

        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, Error> {
            verify_tls12_signature(
                message,
                cert,
                dss,
                &self.provider.signature_verification_algorithms,
            )
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, Error> {
            verify_tls13_signature(
                message,
                cert,
                dss,
                &self.provider.signature_verification_algorithms,
            )
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.provider
                .signature_verification_algorithms
                .supported_schemes()
        }
    }

    pub fn pinned_config(
        ca_file: &Path,
        versions: &[&'static rustls::SupportedProtocolVersion],
    ) -> Result<rustls::ClientConfig, BackendError> {
        let shown = ca_file.display();
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(ca_file)
            .map_err(|e| {
                api(format!(
                    "cannot read the RAPI certificate file {shown}: {e}"
                ))
            })?
            .collect::<Result<_, _>>()
            .map_err(|e| api(format!("{shown} is not a PEM certificate file: {e}")))?;
        if certs.is_empty() {
            return Err(api(format!(
                "{shown} holds no certificate: give Ganeti's rapi.pem (its certificate part) or a CA"
            )));
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        // Ganeti's v1 certificate cannot be a WebPKI root; it is still pinned.
        let _ = roots.add_parsable_certificates(certs.iter().cloned());
        let fallback: Option<Arc<dyn ServerCertVerifier>> = if roots.is_empty() {
            None
        } else {
            Some(
                rustls::client::WebPkiServerVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider.clone(),
                )
                .build()
                .map_err(|e| api(format!("{shown}: cannot build a verifier: {e}")))?,
            )
        };
        let verifier = Pinned {
            pinned: certs,
            fallback,
            provider: provider.clone(),
        };
        Ok(rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(versions)
            .map_err(|e| api(format!("TLS setup: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth())
    }
}

/// Reads the RAPI password: from the file if given (first line), else from the environment
/// variable `AUTOREPAIR_RAPI_PASSWORD`. Never from the command line.
pub fn read_password(file: Option<&Path>) -> Result<String, BackendError> {
    match file {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                api(format!("cannot read the RAPI password file {}: {e}", path.display()))
            })?;
            let pw = text.lines().next().unwrap_or_default().trim_end().to_owned();
            if pw.is_empty() {
                return Err(api(format!("the RAPI password file {} is empty", path.display())));
            }
            Ok(pw)
        }
        None => std::env::var("AUTOREPAIR_RAPI_PASSWORD").map_err(|_| {
            api("no RAPI password: give --rapi-password-file FILE (or rapi.password_file in the config), or set AUTOREPAIR_RAPI_PASSWORD")
        }),
    }
}

#[cfg(test)]
mod tests;
