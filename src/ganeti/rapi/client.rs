//! The HTTP side: one shared blocking client, each request retried on transient failures
//! (connection refused or reset, timeouts, 502/503/504) with a growing delay, and the reads
//! a snapshot makes, run concurrently.

use super::*;
use crate::transport::{self, TransportError};

impl Rapi {
    pub fn connect(endpoint: &Endpoint) -> Result<Rapi, BackendError> {
        Self::connect_with(endpoint, RetryPolicy::default())
    }

    pub(super) fn connect_with(
        endpoint: &Endpoint,
        retry: RetryPolicy,
    ) -> Result<Rapi, BackendError> {
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
            queued_tag_job: HashMap::new(),
            releases: Vec::new(),
            watch: watch::FleetWatch::default(),
            submitted: Vec::new(),
            added: Vec::new(),
            guards: Vec::new(),
            retry,
            retried: Retried::default(),
        })
    }

    pub(super) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub(super) fn context(&self) -> errors::Context<'_> {
        errors::Context {
            timeout: self.timeout,
            connect_timeout: self.timeout.min(self.retry.connect_timeout),
            ca_file: self.ca_file.as_deref(),
            user: &self.user,
        }
    }

    pub(super) fn client(&self) -> &Client {
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
    /// (`transport::is_transient`), within the bounds of [`RetryPolicy`]; writes only when
    /// nothing was sent yet, since a write that reached Ganeti may have created a job already.
    /// Each kind of failure is warned about once per connection; the error a request gives up
    /// with says how many attempts it made over how long.
    pub(super) fn send(
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
            if !transport::is_transient(&err) || (sent && !idempotent) {
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
    pub(super) fn may_retry(&self, attempt: u32, first: Instant, pause: Duration) -> bool {
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

    pub(super) fn get(&self, path: &str) -> Result<Value, BackendError> {
        let method = reqwest::Method::GET;
        let resp = self.send(&method, path, |c, url| c.get(url))?;
        self.json(&method, path, resp)
    }

    pub(super) fn json(
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
    pub(super) fn get_all(&self, paths: &[String]) -> Vec<Result<Value, BackendError>> {
        self.each(paths, |p| self.get(p))
    }

    /// `request` for every item, at most `PARALLEL_READS` at once; the answers in the order
    /// of the items. For reads, and for writes that do not depend on each other (a brake's
    /// cancellations, each object's own tag job).
    pub(super) fn each<T: Sync, R: Send>(
        &self,
        items: &[T],
        request: impl Fn(&T) -> R + Sync,
    ) -> Vec<R> {
        let workers = items.len().min(PARALLEL_READS);
        if workers <= 1 {
            return items.iter().map(&request).collect();
        }
        let request = &request;
        let mut answers: Vec<(usize, R)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    s.spawn(move || {
                        (w..items.len())
                            .step_by(workers)
                            .map(|i| (i, request(&items[i])))
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
    pub(super) fn write(
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

    pub(super) fn object_path(object: &ObjectRef) -> String {
        let enc = |s: &str| s.replace('/', "%2F");
        let n = &object.name;
        match object.kind.as_ref() {
            crate::ganeti::kind::GROUP => format!("/2/groups/{}/tags", enc(n)),
            crate::ganeti::kind::NODE => format!("/2/nodes/{}/tags", enc(n)),
            crate::ganeti::kind::INSTANCE => format!("/2/instances/{}/tags", enc(n)),
            _ => "/2/tags".into(),
        }
    }

    pub(super) fn tags(
        &mut self,
        method: reqwest::Method,
        object: &ObjectRef,
        tags: &[String],
        reason: &str,
    ) -> Result<(), BackendError> {
        let write = self.tag_write(method, object, tags, reason);
        let job = self.send_tag_write(&write)?;
        self.record_tag_job(&write, job);
        Ok(())
    }

    /// The request that changes `object`'s tags: after the object's last tag job, and a
    /// pending tag after the releases this pass queued.
    pub(super) fn tag_write(
        &self,
        method: reqwest::Method,
        object: &ObjectRef,
        tags: &[String],
        reason: &str,
    ) -> TagWrite {
        let mut query: Vec<(&'static str, String)> =
            tags.iter().map(|t| ("tag", t.clone())).collect();
        query.push(("reason", ganeti_reason(reason)));
        let mut depends: Vec<Value> = self
            .last_tag_job
            .get(object)
            .or_else(|| self.queued_tag_job.get(object))
            .map(|j| json!([j, ["success"]]))
            .into_iter()
            .collect();
        // Only the order matters here, not how the release ended.
        if method == reqwest::Method::PUT && queued::has_pending(tags) {
            depends.extend(
                self.releases
                    .iter()
                    .map(|j| json!([j, ["success", "error", "canceled"]])),
            );
        }
        TagWrite {
            releases: method == reqwest::Method::DELETE && queued::has_pending(tags),
            method,
            object: object.clone(),
            query,
            body: (!depends.is_empty()).then(|| json!({ "depends": depends })),
        }
    }

    /// Sends a tag write; returns its job id.
    pub(super) fn send_tag_write(&self, w: &TagWrite) -> Result<u64, BackendError> {
        let query: Vec<(&str, &str)> = w.query.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let path = Self::object_path(&w.object);
        self.write(w.method.clone(), &path, &query, w.body.as_ref())
            .map_err(|e| match TransportError::of(&e) {
                // Ganeti answers 500, not 404, for the tags of an unknown object; its error
                // code is the only thing that tells.
                Some(TransportError::Http {
                    status: 404 | 500,
                    message,
                    ..
                }) if message.contains("unknown_entity") || message.contains("not found") => {
                    BackendError::NoSuchObject {
                        object: w.object.clone(),
                    }
                }
                _ => e,
            })
    }

    /// Remembers a tag job Ganeti took: the object's next tag write follows it, and the
    /// pass's watch does not take it for someone else's.
    pub(super) fn record_tag_job(&mut self, w: &TagWrite, job: u64) {
        self.last_tag_job.insert(w.object.clone(), job);
        self.watch.own.insert(job);
        if w.releases {
            self.releases.push(job);
        }
    }

    /// The rows of a query-resource read (`/2/query/<resource>`), or `None` when the user may
    /// not use the query resource: then the caller reads the `bulk=1` resource instead.
    pub(super) fn query(
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
            Err(e) if transport::http_status(&e) == Some(403) => {
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
    pub(super) fn instances(&self) -> Result<Vec<Instance>, BackendError> {
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
    pub(super) fn nodes(&self) -> Result<(Vec<Node>, Placement), BackendError> {
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
    pub(super) fn jobs(
        &self,
        listed: Value,
        instances: &[Instance],
    ) -> Result<Vec<Job>, BackendError> {
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
/// A tag change prepared for Ganeti (see [`Rapi::tag_write`]).
pub(super) struct TagWrite {
    method: reqwest::Method,
    object: ObjectRef,
    query: Vec<(&'static str, String)>,
    body: Option<Value>,
    /// It removes a pending tag: a later pending tag waits for it.
    releases: bool,
}

pub(super) fn failure_kind(e: &BackendError) -> String {
    match TransportError::of(e) {
        Some(TransportError::Http { status, .. }) => format!("HTTP {status}"),
        Some(TransportError::Refused { .. }) => "refused".into(),
        Some(TransportError::Timeout { .. }) => "timeout".into(),
        _ => "connect".into(),
    }
}

/// The error a request gave up with, saying how many attempts it made over how long.
pub(super) fn after_attempts(mut err: BackendError, attempts: u32, over: Duration) -> BackendError {
    let note = format!(
        "{attempts} attempt{} over {over:.1?}",
        if attempts == 1 { "" } else { "s" }
    );
    match TransportError::of_mut(&mut err) {
        Some(
            TransportError::Refused { cause, .. }
            | TransportError::Timeout { cause, .. }
            | TransportError::Connect { cause, .. },
        ) => *cause = format!("{cause}; {note}"),
        Some(TransportError::Http { hint, .. }) => *hint = format!("{hint} ({note})"),
        _ => {}
    }
    err
}

pub(super) fn join<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

pub(super) fn build_client(
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
