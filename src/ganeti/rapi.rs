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
use crate::engine::{Applied, Backend, BackendError};
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

mod client;
mod decode;
mod errors;
mod queued;
mod tls;
mod watch;

use client::*;
use decode::*;
use tls::tls_versions;

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
    /// The last tag job of ours still queued or running when the snapshot was read, per
    /// object (a replica killed before it ran): this pass's writes on the object follow it.
    queued_tag_job: HashMap<ObjectRef, u64>,
    /// Removals of pending tags not known to be applied: those queued when the snapshot was
    /// read (counted as done there, [`queued::Queued::releases`]) and this pass's own. A
    /// pending tag this pass adds follows them, so that a repair ending and the next one
    /// starting in one pass never show two pending tags where the limits allow one.
    releases: Vec<u64>,
    /// The suspend marks of the scopes this pass writes under, watched from any host.
    watch: watch::FleetWatch,
    /// The repair jobs this pass submitted, with their instance: a brake cancels those that
    /// did not start ([`Backend::cancel_unstarted`]).
    submitted: Vec<(String, u64)>,
    /// The tags this pass added to instances: a canceled job's pending tag is among them.
    added: Vec<(String, String)>,
    /// Asked before every write ([`Backend::guard_writes`]), and while the pass waits for its
    /// tag jobs: a halt (the operator's brake, a stop signal) ends the wait at once.
    guards: Vec<crate::engine::WriteGuard>,
    retry: RetryPolicy,
    /// What the retries of this connection (one pass, one command) did so far.
    retried: Retried,
}

/// What became of the tag jobs a pass or an admin verb followed.
#[derive(Debug, Default)]
struct FollowedTagJobs {
    /// Still waiting or running when the wait ended, with their status.
    unfinished: Vec<(u64, String)>,
    /// Ended in error, with Ganeti's message.
    failed: Vec<(u64, String)>,
    /// A write guard ended the wait (the operator's brake, a stop signal): why.
    halted: Option<String>,
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
/// How often a pass that waits for its tag jobs looks at the brakes: the brake file costs one
/// small read; the fleet's own marks are read at most every [`watch::WHILE_WAITING`].
const BRAKE_LOOK: Duration = Duration::from_millis(50);
fn ganeti_reason(reason: &str) -> String {
    if reason.starts_with(crate::ganeti::snapshot::REASON_PREFIX) {
        reason.to_owned()
    } else {
        format!("autorepair: {reason}")
    }
}

impl Rapi {
    /// Follows this pass's last tag job of each object (those of one object are chained)
    /// until each ended, `limit` passed, or a write guard says stop. A job that cannot be
    /// read any more is not waited for: one warning for all of them.
    fn follow_tag_jobs(&mut self, limit: Duration) -> FollowedTagJobs {
        let mut waiting: Vec<u64> = self.last_tag_job.values().copied().collect();
        waiting.sort_unstable();
        // A limit past what the clock can hold (the flags' parser bounds it well below) waits
        // without end: the tag PUT is sent by now, and a panic would hide what it did.
        let deadline = Instant::now().checked_add(limit);
        let mut pause = Duration::from_millis(200);
        let mut followed = FollowedTagJobs::default();
        // A pass that wrote nothing has nothing to stop: no read of the fleet for the watch.
        if waiting.is_empty() {
            return followed;
        }
        loop {
            if let Some(why) = self.halt() {
                followed.halted = Some(why.to_string());
                followed.unfinished = waiting.iter().map(|id| (*id, "unknown".into())).collect();
                return followed;
            }
            let paths: Vec<String> = waiting.iter().map(|id| format!("/2/jobs/{id}")).collect();
            let mut unfinished = Vec::new();
            let mut lost: Vec<(u64, BackendError)> = Vec::new();
            for (&id, answer) in waiting.iter().zip(self.get_all(&paths)) {
                match answer {
                    Ok(v) => match job_from_rapi(&v) {
                        Some(job) if job.status.is_some_and(|s| !s.is_finished()) => {
                            let status = serde_json::to_value(job.status)
                                .ok()
                                .and_then(|s| s.as_str().map(str::to_owned))
                                .unwrap_or_default();
                            unfinished.push((id, status));
                        }
                        Some(job) if job.status == Some(JobStatus::Error) => {
                            let why = job
                                .error()
                                .map_or_else(|| "no message".to_owned(), |(message, _)| message);
                            followed.failed.push((id, why));
                        }
                        _ => {}
                    },
                    Err(e) => lost.push((id, e)),
                }
            }
            // Most often the RAPI went away: one line for all, not one per job.
            if let Some((_, e)) = lost.first() {
                let jobs: Vec<u64> = lost.iter().map(|(id, _)| *id).collect();
                tracing::warn!(?jobs, "cannot follow {} tag job(s): {e}", jobs.len());
            }
            waiting = unfinished.iter().map(|(id, _)| *id).collect();
            followed.unfinished = unfinished;
            if waiting.is_empty() || deadline.is_some_and(|d| Instant::now() >= d) {
                return followed;
            }
            tracing::debug!(jobs = waiting.len(), "waiting for tag jobs to be applied");
            let left = deadline.map_or(pause, |d| d.saturating_duration_since(Instant::now()));
            // Ganeti's jobs are asked after less and less often, the brakes often: a suspend
            // must end the wait within a fraction of a second, not at the next look at the jobs.
            let until = Instant::now() + pause.min(left);
            loop {
                let now = Instant::now();
                if now >= until || self.halt_pending() {
                    break;
                }
                std::thread::sleep(BRAKE_LOOK.min(until - now));
            }
            pause = (pause * 2).min(Duration::from_secs(2));
        }
    }

    /// Why the pass must stop now, if it must: a write guard (the brake file on this host, a
    /// stop signal, a lost lease) or a suspend that appeared in the fleet.
    fn halt(&mut self) -> Option<BackendError> {
        if let Some(why) = self.guards.iter().find_map(|g| g().err()) {
            return Some(why);
        }
        self.watch_fleet(watch::WHILE_WAITING).err()
    }

    /// [`Self::halt`] without forgetting why: the wait's next round finds it again.
    fn halt_pending(&mut self) -> bool {
        self.guards.iter().any(|g| g().is_err())
            || self.watch.suspended.is_some()
            || self.watch_fleet(watch::WHILE_WAITING).is_err()
    }

    /// The cluster's uuid (`GET /2/info`): its identity, which neither the URL it is reached by
    /// nor a `gnt-cluster rename` changes.
    pub fn cluster_uuid(&self) -> Result<String, BackendError> {
        let info = self.get("/2/info")?;
        // Only a cluster that answers without its uuid is helped by a named lock: one that
        // does not answer (a refused password) could not be read by the pass either.
        const NAME_A_LOCK: &str =
            "the lock is named by it: name a lock file with --lock-file to do without";
        let uuid = str_field(&info, "uuid", "GET /2/info")
            .map_err(|e| api(format!("{e}; {NAME_A_LOCK}")))?;
        if uuid.trim().is_empty() {
            return Err(api(format!(
                "GET {}: the cluster's uuid is empty; {NAME_A_LOCK}",
                self.url("/2/info")
            )));
        }
        Ok(uuid)
    }
}

impl Backend<Ganeti> for Rapi {
    /// The independent reads run at once (the snapshot was never atomic: the planner copes
    /// with reads from slightly different moments), then the reads of single jobs.
    fn snapshot(&mut self) -> Result<Snapshot, BackendError> {
        self.last_tag_job.clear();
        self.submitted.clear();
        self.added.clear();
        // The job list first, the tags after: a tag job of ours is then either still listed
        // as queued or running, or done before the tags were read; read the other way round,
        // one that ended in between would be in neither (queued::apply_queued).
        let listed = self.get("/2/jobs?bulk=1")?;
        let this = &*self;
        let (info, groups, nodes, instances) = std::thread::scope(|s| {
            let info = s.spawn(|| this.get("/2/info"));
            let groups = s.spawn(|| groups_from(this.get("/2/groups?bulk=1")?));
            let nodes = s.spawn(|| this.nodes());
            let instances = this.instances();
            (join(info), join(groups), join(nodes), instances)
        });
        let info = info?;
        let cluster = Cluster {
            name: str_field(&info, "name", "GET /2/info")?,
            tags: tag_list(&info),
            other: Default::default(),
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
        let queued = queued::queued_tag_jobs(&listed);
        let jobs = self.jobs(listed.clone(), &instances)?;
        let mut snapshot = Snapshot {
            cluster,
            groups: groups?,
            nodes,
            instances,
            jobs,
            simulation: Default::default(),
            other: Default::default(),
        };
        let queued = queued::apply_queued(&mut snapshot, &queued);
        self.queued_tag_job = queued.last;
        self.releases = queued.releases;
        self.watch = watch::FleetWatch::start(&snapshot, &listed);
        self.watch.on = !self.guards.is_empty();
        Ok(snapshot)
    }

    fn add_marks(
        &mut self,
        object: &ObjectRef,
        tags: &[String],
        reason: &str,
    ) -> Result<(), BackendError> {
        self.watch.writes_on(object);
        self.watch_fleet(watch::BEFORE_WRITES)?;
        self.tags(reqwest::Method::PUT, object, tags, reason)?;
        if object.kind.as_ref() == crate::ganeti::kind::INSTANCE {
            self.added
                .extend(tags.iter().map(|t| (object.name.clone(), t.clone())));
        }
        Ok(())
    }

    fn remove_marks(
        &mut self,
        object: &ObjectRef,
        tags: &[String],
        reason: &str,
    ) -> Result<(), BackendError> {
        self.watch.writes_on(object);
        self.watch_fleet(watch::BEFORE_WRITES)?;
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
        self.watch.writes_on(&object);
        self.watch_fleet(watch::BEFORE_WRITES)?;
        let depends = after
            .copied()
            .or_else(|| self.last_tag_job.get(&object).copied())
            .or_else(|| self.queued_tag_job.get(&object).copied());
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
                let job = self.write(reqwest::Method::POST, &path, &[], None)?;
                self.watch.own.insert(job);
                self.submitted.push((instance.to_owned(), job));
                return Ok(job);
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
        let job = self.write(
            method,
            &path,
            &[("reason", reason)],
            Some(&Value::Object(body)),
        )?;
        self.watch.own.insert(job);
        self.submitted.push((instance.to_owned(), job));
        Ok(job)
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
        let followed = self.follow_tag_jobs(TAG_JOB_WAIT);
        if let Some(why) = followed.halted {
            // The tag jobs stay known: a canceled repair's tag is removed after them.
            let jobs: Vec<u64> = followed.unfinished.iter().map(|(id, _)| *id).collect();
            tracing::warn!(?jobs, "{why}: the pass stops waiting for its tag jobs");
            return Ok(());
        }
        for (id, why) in &followed.failed {
            tracing::warn!(job = id, "a tag job failed: {why}");
        }
        if !followed.unfinished.is_empty() {
            let jobs: Vec<u64> = followed.unfinished.iter().map(|(id, _)| *id).collect();
            tracing::warn!(
                ?jobs,
                "tag jobs still queued after {}: the next pass may read tags not yet written",
                humantime::format_duration(TAG_JOB_WAIT)
            );
        }
        self.last_tag_job.clear();
        Ok(())
    }

    /// An admin verb's tag job, followed until Ganeti applied it: `suspend X` then `resume X`
    /// must find the suspend. A job that failed is the verb's error, with Ganeti's words.
    fn wait_applied(&mut self, limit: Duration) -> Result<Applied, BackendError> {
        let followed = self.follow_tag_jobs(limit);
        if let Some((id, why)) = followed.failed.first() {
            return Err(BackendError::Api(format!(
                "Ganeti took the tag change as job {id}, then failed it: {why}"
            )));
        }
        if followed.unfinished.is_empty() {
            self.last_tag_job.clear();
            return Ok(Applied::Yes);
        }
        let jobs: Vec<String> = followed
            .unfinished
            .iter()
            .map(|(id, status)| format!("Ganeti job {id} ({status})"))
            .collect();
        Ok(Applied::NotYet(jobs.join(", ")))
    }

    fn guard_writes(&mut self, guard: crate::engine::WriteGuard) {
        self.guards.push(guard);
    }

    fn suspended_meanwhile(&self) -> Option<String> {
        self.watch.suspended.as_ref().map(ToString::to_string)
    }

    /// Ganeti cancels a job that waits in its queue (`DELETE /2/jobs/ID`) and refuses one that
    /// runs: those go on. The pending tag that named a canceled job is removed, by a tag job
    /// whose reason says why, so the next pass finds no failure to back off from: the target
    /// is as if the repair was never started.
    fn cancel_unstarted(
        &mut self,
        covered: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<(String, u64)>, BackendError> {
        // The brake is pulled: every cancellation at once, then every tag removal at once,
        // so the pass ends within a round trip or two of the suspend, however many repairs
        // it had queued (one after another, each took a round trip of its own).
        let asked: Vec<(String, u64)> = std::mem::take(&mut self.submitted)
            .into_iter()
            .filter(|(instance, _)| covered(instance))
            .collect();
        let answers = self.each(&asked, |(_, job)| {
            let path = format!("/2/jobs/{job}");
            let method = reqwest::Method::DELETE;
            let resp = self.send(&method, &path, |c, url| c.delete(url))?;
            self.json(&method, &path, resp)
        });
        let mut canceled = Vec::new();
        for ((instance, job), answer) in asked.into_iter().zip(answers) {
            let answer = match answer {
                Ok(answer) => answer,
                Err(e) => {
                    tracing::warn!(instance, job, "cannot cancel repair job: {e}");
                    continue;
                }
            };
            // Ganeti answers [success, message].
            if answer.get(0).and_then(Value::as_bool) != Some(true) {
                let why = answer.get(1).and_then(Value::as_str).unwrap_or_default();
                tracing::info!(
                    instance,
                    job,
                    "repair job not canceled (it started already?): {why}"
                );
                continue;
            }
            tracing::info!(
                instance,
                job,
                "repair job canceled: the operator suspended its target"
            );
            canceled.push((instance, job));
        }
        let reason = "repair canceled by a suspend (the operator's brake)";
        let mut writes = Vec::new();
        for (instance, job) in &canceled {
            let pending: Vec<String> = self
                .added
                .iter()
                .filter(|(i, tag)| {
                    // A tag naming a job that runs anyway stays: it records that job.
                    i == instance
                        && matches!(
                            crate::ganeti::tags::parse(tag),
                            Ok(crate::ganeti::tags::Tag::Pending(p))
                                if p.ops.iter::<u64>().any(|j| j == *job)
                                    && p.ops.iter::<u64>().all(|j| {
                                        canceled.iter().any(|(ci, cj)| ci == instance && *cj == j)
                                    })
                        )
                })
                .map(|(_, tag)| tag.clone())
                .collect();
            if !pending.is_empty() {
                let object = super::instance(instance);
                let write = self.tag_write(reqwest::Method::DELETE, &object, &pending, reason);
                writes.push((instance.clone(), pending, write));
            }
        }
        let jobs = self.each(&writes, |(_, _, write)| self.send_tag_write(write));
        let mut first_error = None;
        for ((instance, pending, write), job) in writes.into_iter().zip(jobs) {
            match job {
                Ok(job) => {
                    self.record_tag_job(&write, job);
                    self.added
                        .retain(|(i, t)| !(*i == instance && pending.contains(t)));
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        Ok(canceled)
    }
}

pub fn read_password(file: Option<&Path>) -> Result<String, BackendError> {
    match file {
        Some(path) => {
            let text = crate::files::read_text(path).map_err(|e| {
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
