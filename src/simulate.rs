//! The chaos simulator: many passes over an in-memory fleet while nodes fail, racks go dark,
//! jobs fail or lack resources, the watcher is killed between backend calls and admins edit
//! tags. After every pass an oracle — written independently of the planner — checks the safety
//! rules of the design; at the end it checks that every repairable target was repaired once the
//! faults stopped. A violation comes with its seed and a minimised event history.

use crate::admin::{self, Verb};
use crate::config::Limits;
use crate::engine::State;
use crate::engine::backend::{Backend, BackendError, Dying};
use crate::engine::exec;
use crate::ganeti::file::FleetFile;
use crate::ganeti::health::{self, Health, Need};
use crate::ganeti::snapshot::{JobStatus, ObjectRef, Op, OpKind, SimOutcome, SimScript, Snapshot};
use crate::ganeti::tags::{self, PREFIX, RepairResult, RepairType, Tag};
use crate::ganeti::{Blocked, Ganeti, Plan};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

/// The planner under test; the real one is [`crate::ganeti::plan`].
pub type Planner = fn(&Snapshot, i64, &Limits, u64) -> Plan;

/// Seconds between passes (cron every 5 minutes).
pub const PASS_SECONDS: i64 = 300;

/// How often each fault happens, per pass.
#[derive(Clone, Debug)]
pub struct Faults {
    pub node_offline: f64,
    pub rack_down: f64,
    pub node_drain: f64,
    pub node_flap: f64,
    pub node_recover: f64,
    pub job_failure: f64,
    pub no_resources: f64,
    pub kill: f64,
    pub admin_edit: f64,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            node_offline: 0.08,
            rack_down: 0.01,
            node_drain: 0.05,
            node_flap: 0.04,
            node_recover: 0.05,
            job_failure: 0.1,
            no_resources: 0.1,
            kill: 0.2,
            admin_edit: 0.2,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum AdminEdit {
    Suspend { for_passes: Option<u32> },
    Resume,
    Allow(Option<RepairType>),
    Request(RepairType),
    Clear,
}

/// One thing that happens to the fleet before a pass.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Event {
    NodeOffline(String),
    NodeOnline(String),
    NodeDrain(String),
    NodeUndrain(String),
    /// Every node carrying the tag `rack:<name>` (or of the group, without racks) goes offline.
    RackDown(String),
    /// The instance's next job ends this way.
    JobOutcome(String, SimOutcome),
    /// The watcher dies after this many backend calls in this pass.
    Kill(usize),
    Admin(ObjectRef, AdminEdit),
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::NodeOffline(n) => write!(f, "node {n} goes offline"),
            Event::NodeOnline(n) => write!(f, "node {n} comes back online"),
            Event::NodeDrain(n) => write!(f, "node {n} is drained"),
            Event::NodeUndrain(n) => write!(f, "node {n} is undrained"),
            Event::RackDown(r) => write!(f, "rack {r} loses power"),
            Event::JobOutcome(i, o) => write!(f, "the next job of {i} ends {o:?}"),
            Event::Kill(n) => write!(f, "the watcher is killed after {n} backend calls"),
            Event::Admin(o, e) => write!(f, "admin on {o}: {e:?}"),
        }
    }
}

/// Events per pass of the fault phase; the quiet phase that follows has none.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Schedule {
    pub passes: Vec<Vec<Event>>,
}

#[derive(Clone, Debug)]
pub struct SimConfig {
    pub limits: Limits,
    pub start: i64,
    /// Passes without faults after the schedule, within which every repairable target must be
    /// repaired (or given up on with a failure).
    pub quiet_passes: u32,
}

impl SimConfig {
    pub fn new(start: i64) -> SimConfig {
        SimConfig {
            limits: Limits {
                // The demo fleet starts with four nodes down: room for the faults the
                // scenarios add, so that they exercise repairs and not only halts.
                max_down_nodes_per_group: 3,
                max_down_nodes: 8,
                max_domains_under_repair: 2,
                retry_interval: std::time::Duration::from_secs(15 * 60),
                max_repair_age: std::time::Duration::from_secs(2 * 3600),
                iallocator: String::new(),
                ..Limits::default()
            },
            start,
            quiet_passes: 80,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// Which rule (short name).
    pub rule: &'static str,
    pub pass: usize,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pass {}: {}: {}", self.pass, self.rule, self.detail)
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    pub passes: usize,
    pub jobs_submitted: usize,
    pub kills: usize,
    pub repairs_succeeded: usize,
    pub repairs_failed: usize,
    pub halted_passes: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub stats: Stats,
    pub violation: Option<Violation>,
    /// Per pass: what happened before it and what the watcher did.
    pub log: Vec<Vec<String>>,
}

/// Draws a fault schedule for `fleet` from the seed.
pub fn schedule(fleet: &Snapshot, passes: u32, seed: u64, faults: &Faults) -> Schedule {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let nodes: Vec<&str> = fleet.nodes.iter().map(|n| n.name.as_str()).collect();
    let instances: Vec<&str> = fleet.instances.iter().map(|i| i.name.as_str()).collect();
    let mut racks: Vec<String> = fleet
        .nodes
        .iter()
        .flat_map(|n| n.tags.iter().filter_map(|t| t.strip_prefix("rack:")))
        .map(str::to_owned)
        .collect();
    racks.sort();
    racks.dedup();
    let mut scopes: Vec<ObjectRef> = vec![crate::ganeti::cluster()];
    scopes.extend(
        fleet
            .groups
            .iter()
            .map(|g| crate::ganeti::group(g.name.clone())),
    );
    let mut out = Schedule::default();
    let mut flapping: Vec<String> = Vec::new();
    for _ in 0..passes {
        let mut events = Vec::new();
        // A flapping node comes back the pass after it went down.
        for n in flapping.drain(..) {
            events.push(Event::NodeOnline(n));
        }
        let pick =
            |rng: &mut ChaCha8Rng, list: &[&str]| list[rng.random_range(0..list.len())].to_owned();
        if !nodes.is_empty() {
            if rng.random_bool(faults.node_offline) {
                events.push(Event::NodeOffline(pick(&mut rng, &nodes)));
            }
            if rng.random_bool(faults.node_drain) {
                events.push(Event::NodeDrain(pick(&mut rng, &nodes)));
            }
            if rng.random_bool(faults.node_flap) {
                let n = pick(&mut rng, &nodes);
                events.push(Event::NodeOffline(n.clone()));
                flapping.push(n);
            }
            if rng.random_bool(faults.node_recover) {
                let n = pick(&mut rng, &nodes);
                events.push(Event::NodeOnline(n.clone()));
                events.push(Event::NodeUndrain(n));
            }
        }
        if !racks.is_empty() && rng.random_bool(faults.rack_down) {
            events.push(Event::RackDown(
                racks[rng.random_range(0..racks.len())].clone(),
            ));
        }
        if !instances.is_empty() {
            if rng.random_bool(faults.job_failure) {
                let outcome = if rng.random_bool(0.2) {
                    SimOutcome::Vanish
                } else {
                    SimOutcome::Fail
                };
                events.push(Event::JobOutcome(pick(&mut rng, &instances), outcome));
            }
            if rng.random_bool(faults.no_resources) {
                events.push(Event::JobOutcome(
                    pick(&mut rng, &instances),
                    SimOutcome::InsufficientResources,
                ));
            }
            if rng.random_bool(faults.admin_edit) {
                let repair = RepairType::ALL[rng.random_range(0..4)];
                let edit = match rng.random_range(0..6) {
                    0 => AdminEdit::Suspend {
                        for_passes: rng.random_bool(0.5).then(|| rng.random_range(1..10)),
                    },
                    1 => AdminEdit::Resume,
                    2 => AdminEdit::Allow(rng.random_bool(0.8).then_some(repair)),
                    3 => AdminEdit::Clear,
                    _ => AdminEdit::Request(repair),
                };
                let object = match edit {
                    AdminEdit::Clear | AdminEdit::Request(_) => {
                        crate::ganeti::instance(pick(&mut rng, &instances))
                    }
                    _ if rng.random_bool(0.5) => scopes[rng.random_range(0..scopes.len())].clone(),
                    _ => crate::ganeti::instance(pick(&mut rng, &instances)),
                };
                events.push(Event::Admin(object, edit));
            }
        }
        if rng.random_bool(faults.kill) {
            events.push(Event::Kill(rng.random_range(0..8)));
        }
        out.passes.push(events);
    }
    out
}

/// What the watcher did during one pass, as seen by the backend.
#[derive(Default)]
struct CallLog {
    added: Vec<(ObjectRef, String)>,
    removed: Vec<(ObjectRef, String)>,
    submitted: Vec<(String, Op, String, u64)>,
    /// Rule 3: a step submitted while an earlier job for the same step ran or had succeeded.
    resubmitted: Vec<String>,
}

/// Logs what the watcher does to the fleet, and dies where the schedule says.
struct Recording<'a> {
    inner: Dying<&'a mut FleetFile>,
    log: CallLog,
}

impl Backend<Ganeti> for Recording<'_> {
    fn snapshot(&mut self) -> Result<Snapshot, BackendError> {
        self.inner.snapshot()
    }
    fn add_marks(&mut self, o: &ObjectRef, t: &[String], r: &str) -> Result<(), BackendError> {
        self.inner.add_marks(o, t, r)?;
        self.log
            .added
            .extend(t.iter().map(|t| (o.clone(), t.clone())));
        Ok(())
    }
    fn remove_marks(&mut self, o: &ObjectRef, t: &[String], r: &str) -> Result<(), BackendError> {
        self.inner.remove_marks(o, t, r)?;
        self.log
            .removed
            .extend(t.iter().map(|t| (o.clone(), t.clone())));
        Ok(())
    }
    fn submit(&mut self, i: &str, op: &Op, r: &str, a: Option<&u64>) -> Result<u64, BackendError> {
        let id = self.inner.submit(i, op, r, a)?;
        for j in &self.inner.inner.fleet().jobs {
            let same_step = j.id != id
                && j.reason.as_deref() == Some(r)
                && j.op.as_ref().map(Op::kind) == Some(op.kind());
            if same_step
                && j.status != Some(JobStatus::Error)
                && j.status != Some(JobStatus::Canceled)
            {
                self.log.resubmitted.push(format!(
                    "{} of {r} on {i} submitted again while job {} is {:?}",
                    op.kind(),
                    j.id,
                    j.status
                ));
            }
        }
        self.log
            .submitted
            .push((i.to_owned(), op.clone(), r.to_owned(), id));
        Ok(id)
    }
}

/// The oracle's own reading of one object's policy: `None` no policy tag, `Some(None)`
/// suspended, `Some(Some(t))` repairs up to `t`. Deliberately not the planner's code.
fn oracle_object(tags: &[String], now: i64) -> Option<Option<RepairType>> {
    let parsed: Vec<Tag> = tags.iter().filter_map(|t| tags::parse(t).ok()).collect();
    let suspended = parsed.iter().any(|t| match t {
        Tag::Suspend { until: None } => true,
        Tag::Suspend { until: Some(u) } => *u > now,
        _ => false,
    });
    if suspended {
        return Some(None);
    }
    parsed
        .iter()
        .filter_map(|t| {
            if let Tag::Policy(p) = t {
                Some(*p)
            } else {
                None
            }
        })
        .min()
        .map(Some)
}

/// Effective policy for an instance: nearest of instance, group of its primary, cluster.
fn oracle_policy(fleet: &Snapshot, instance: &str, now: i64) -> Option<Option<RepairType>> {
    let inst = fleet.instances.iter().find(|i| i.name == instance)?;
    let group = fleet
        .nodes
        .iter()
        .find(|n| n.name == inst.pnode)
        .and_then(|n| fleet.groups.iter().find(|g| g.uuid == n.group_uuid));
    oracle_object(&inst.tags, now)
        .or_else(|| group.and_then(|g| oracle_object(&g.tags, now)))
        .or_else(|| oracle_object(&fleet.cluster.tags, now))
}

fn level_of(op: &Op) -> RepairType {
    match op.kind() {
        OpKind::ReplaceDisks => RepairType::FixStorage,
        OpKind::Migrate => RepairType::Migrate,
        OpKind::Failover | OpKind::Move => RepairType::Failover,
        OpKind::RecreateDisks | OpKind::Reinstall => RepairType::Reinstall,
    }
}

fn instance_tags<'f>(fleet: &'f Snapshot, name: &str) -> &'f [String] {
    fleet
        .instances
        .iter()
        .find(|i| i.name == name)
        .map_or(&[], |i| &i.tags)
}

fn has_failure(tags: &[String]) -> bool {
    tags.iter()
        .any(|t| matches!(tags::parse(t), Ok(Tag::Result(r)) if r.result == RepairResult::Failure))
}

fn node_down(n: &crate::ganeti::snapshot::Node) -> bool {
    n.offline || n.drained || !n.vm_capable
}

/// The oracle's own mass-failure verdict for an instance (or, with `None`, for the cluster's
/// own tags): too many down nodes in its primary's group or in the cluster, or too many
/// broken instances when that optional brake is set.
fn mass_failure(fleet: &Snapshot, limits: &Limits, instance: Option<&str>) -> bool {
    let down: Vec<&crate::ganeti::snapshot::Node> =
        fleet.nodes.iter().filter(|n| node_down(n)).collect();
    if down.len() > limits.max_down_nodes
        || limits
            .max_broken
            .is_some_and(|max| broken_count(fleet) > max)
    {
        return true;
    }
    let group = instance
        .and_then(|i| fleet.instances.iter().find(|x| x.name == i))
        .and_then(|i| fleet.nodes.iter().find(|n| n.name == i.pnode))
        .map(|n| n.group_uuid.as_str());
    group.is_some_and(|g| {
        down.iter().filter(|n| n.group_uuid == g).count() > limits.max_down_nodes_per_group
    })
}

/// The failure domain of an instance as the oracle sees it: its primary if down, else a down
/// secondary, else its primary.
fn oracle_domain<'f>(fleet: &'f Snapshot, inst: &'f crate::ganeti::snapshot::Instance) -> &'f str {
    let down = |name: &str| fleet.nodes.iter().any(|n| n.name == name && node_down(n));
    std::iter::once(&inst.pnode)
        .chain(&inst.snodes)
        .find(|n| down(n))
        .unwrap_or(&inst.pnode)
}

fn broken_count(fleet: &Snapshot) -> usize {
    fleet
        .instances
        .iter()
        .filter(|i| {
            health::assess_with(i, |n| fleet.nodes.iter().find(|x| x.name == n)).is_broken()
        })
        .count()
}

fn foreign_tags(fleet: &Snapshot) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let mut put = |key: String, tags: &[String]| {
        let mut f: Vec<String> = tags
            .iter()
            .filter(|t| !t.starts_with(PREFIX))
            .cloned()
            .collect();
        f.sort();
        out.insert(key, f);
    };
    put("cluster".into(), &fleet.cluster.tags);
    for g in &fleet.groups {
        put(format!("group/{}", g.name), &g.tags);
    }
    for n in &fleet.nodes {
        put(format!("node/{}", n.name), &n.tags);
    }
    for (k, i) in fleet.instances.iter().enumerate() {
        put(format!("instance/{}#{k}", i.name), &i.tags);
    }
    out
}

/// Checks the safety rules for one pass: `before` is the fleet the watcher read, `after` the
/// fleet right after it acted (before cluster time passed).
fn check_pass(
    before: &Snapshot,
    after: &Snapshot,
    log: &CallLog,
    limits: &Limits,
    now: i64,
) -> Result<(), (&'static str, String)> {
    if let Some(r) = log.resubmitted.first() {
        return Err(("job submitted twice", r.clone()));
    }
    for (instance, op, reason, job) in &log.submitted {
        if mass_failure(before, limits, Some(instance)) {
            return Err((
                "started while the fleet-wide limit was exceeded",
                format!("job {job} ({}) on {instance}", op.kind()),
            ));
        }
        let id = reason
            .strip_prefix(crate::ganeti::snapshot::REASON_PREFIX)
            .unwrap_or(reason);
        let tags_before = instance_tags(before, instance);
        let granted_by_pending = tags_before
            .iter()
            .filter_map(|t| match tags::parse(t) {
                Ok(Tag::Pending(p)) if p.id == id => Some(p.repair),
                _ => None,
            })
            .max();
        let policy = oracle_policy(before, instance, now);
        if policy == Some(None) {
            return Err((
                "repair on a suspended target",
                format!("job {job} ({}) on {instance}", op.kind()),
            ));
        }
        if has_failure(tags_before) {
            return Err((
                "repair on a target parked by a failure",
                format!("job {job} ({}) on {instance}", op.kind()),
            ));
        }
        let allowed = policy.flatten().max(granted_by_pending);
        if allowed.is_none_or(|a| level_of(op) > a) {
            return Err((
                "repair above the allowed level",
                format!(
                    "job {job} ({}, level {}) on {instance}, allowed {allowed:?}",
                    op.kind(),
                    level_of(op)
                ),
            ));
        }
    }
    // Repairs under way right after the pass.
    let mut running: HashMap<&str, HashSet<&str>> = HashMap::new();
    for j in &after.jobs {
        if let (Some(id), Some(inst), false) = (
            j.repair_id(),
            j.instance.as_deref(),
            j.status.is_none_or(JobStatus::is_finished),
        ) {
            running.entry(inst).or_default().insert(id);
        }
    }
    if let Some((inst, ids)) = running.iter().find(|(_, ids)| ids.len() > 1) {
        return Err((
            "two repairs at once on one target",
            format!("{inst}: {ids:?}"),
        ));
    }
    let total: usize = running.values().map(HashSet::len).sum();
    if let Some(cap) = limits.max_pending.filter(|cap| total > *cap) {
        return Err((
            "more repairs under way than max_pending",
            format!("{total} > {cap}"),
        ));
    }
    // Failure domains: new repairs (ids with no job before this pass) may open domains only
    // while fewer than the limit had repairs running.
    let instance = |name: &str| before.instances.iter().find(|i| i.name == name);
    let running_before: HashSet<&str> = before
        .jobs
        .iter()
        .filter(|j| j.repair_id().is_some() && j.status.is_some_and(|s| !s.is_finished()))
        .filter_map(|j| instance(j.instance.as_deref()?))
        .map(|i| oracle_domain(before, i))
        .collect();
    let had_jobs = |id: &str| {
        before.jobs.iter().any(|j| j.repair_id() == Some(id))
            || before.instances.iter().any(|i| {
                i.tags.iter().any(
                    |t| matches!(tags::parse(t), Ok(Tag::Pending(p)) if p.id == id && !p.ops.is_empty()),
                )
            })
    };
    let opened: HashSet<&str> = log
        .submitted
        .iter()
        .filter(|(_, _, reason, _)| {
            !had_jobs(
                reason
                    .strip_prefix(crate::ganeti::snapshot::REASON_PREFIX)
                    .unwrap_or(reason),
            )
        })
        .filter_map(|(name, ..)| instance(name))
        .map(|i| oracle_domain(before, i))
        .filter(|d| !running_before.contains(d))
        .collect();
    if !opened.is_empty() && running_before.len() + opened.len() > limits.max_domains_under_repair {
        return Err((
            "more failure domains under repair than max_domains_under_repair",
            format!("{running_before:?} were running, {opened:?} opened"),
        ));
    }
    // A mass failure writes nothing but the bookkeeping of repairs under way.
    for (object, tag) in log.added.iter().chain(&log.removed) {
        let held = if object.is(crate::ganeti::kind::INSTANCE) {
            mass_failure(before, limits, Some(&object.name))
        } else {
            mass_failure(before, limits, None)
        };
        let bookkeeping = match tags::parse(tag) {
            Ok(Tag::Pending(p)) => !p.ops.is_empty() || had_jobs(p.id),
            Ok(Tag::Result(r)) => r.result != RepairResult::Enoperm && had_jobs(r.id),
            _ => false,
        };
        if held && !bookkeeping {
            return Err((
                "tag written during a mass failure",
                format!("{object}: {tag}"),
            ));
        }
    }
    if foreign_tags(before) != foreign_tags(after) {
        return Err((
            "foreign tag touched",
            "a tag without the autorepair prefix changed".into(),
        ));
    }
    for (object, tag) in &log.removed {
        if matches!(tags::parse(tag), Ok(Tag::Result(r)) if r.result == RepairResult::Failure) {
            return Err((
                "failure result removed by the watcher",
                format!("{object}: {tag}"),
            ));
        }
    }
    for (object, tag) in &log.added {
        match tags::parse(tag) {
            Ok(Tag::Foreign) | Err(_) => {
                return Err(("unparseable tag written", format!("{object}: {tag}")));
            }
            Ok(_) => {}
        }
    }
    Ok(())
}

fn apply_event(fleet: &mut FleetFile, event: &Event, now: i64) -> Option<usize> {
    let snap = fleet.fleet_mut();
    let mut node = |name: &str, f: &dyn Fn(&mut crate::ganeti::snapshot::Node)| {
        if let Some(n) = snap.nodes.iter_mut().find(|n| n.name == name) {
            f(n)
        }
    };
    match event {
        Event::NodeOffline(n) => node(n, &|n| n.offline = true),
        Event::NodeOnline(n) => node(n, &|n| n.offline = false),
        Event::NodeDrain(n) => node(n, &|n| n.drained = true),
        Event::NodeUndrain(n) => node(n, &|n| n.drained = false),
        Event::RackDown(rack) => {
            let tag = format!("rack:{rack}");
            for n in snap.nodes.iter_mut().filter(|n| n.tags.contains(&tag)) {
                n.offline = true;
            }
        }
        Event::JobOutcome(inst, outcome) => {
            let script: &mut SimScript = snap.simulation.instances.entry(inst.clone()).or_default();
            script.outcomes.push(*outcome);
        }
        Event::Kill(n) => return Some(*n),
        Event::Admin(object, edit) => {
            let verb = match edit {
                AdminEdit::Suspend { for_passes } => Verb::Suspend {
                    until: for_passes.map(|p| now + i64::from(p) * PASS_SECONDS),
                },
                AdminEdit::Resume => Verb::Resume,
                AdminEdit::Allow(level) => Verb::Allow(*level),
                AdminEdit::Request(r) => Verb::Request {
                    repair: *r,
                    id: uuid::Uuid::new_v5(
                        &uuid::Uuid::NAMESPACE_OID,
                        format!("{now}{object}").as_bytes(),
                    )
                    .to_string(),
                    now,
                },
                AdminEdit::Clear => Verb::Clear,
            };
            // Refused edits (nothing to resume, a repair already pending…) simply do not happen.
            if let Ok(actions) = admin::edits(snap, object, &verb) {
                let plan = Plan {
                    now,
                    targets: vec![],
                    scope_actions: actions,
                    lint: vec![],
                    fleet: Default::default(),
                    counts: Default::default(),
                };
                exec::execute(&plan, fleet);
            }
        }
    }
    None
}

/// Runs the schedule, then quiet passes, checking every pass; stops at the first violation.
pub fn run(fleet: &Snapshot, schedule: &Schedule, cfg: &SimConfig, planner: Planner) -> Outcome {
    let mut backend = FleetFile::in_memory(fleet.clone());
    let mut stats = Stats::default();
    let mut log = Vec::new();
    let total = schedule.passes.len() + cfg.quiet_passes as usize;
    let mut last_plan = None;
    for pass in 0..total {
        let now = cfg.start + pass as i64 * PASS_SECONDS;
        let mut lines = Vec::new();
        let mut kill_after = None;
        for e in schedule.passes.get(pass).into_iter().flatten() {
            lines.push(e.to_string());
            if let Some(n) = apply_event(&mut backend, e, now) {
                kill_after = Some(n);
            }
        }
        let before = backend.fleet().clone();
        let plan = planner(&before, now, &cfg.limits, pass as u64);
        if plan.fleet.halted.is_some() {
            stats.halted_passes += 1;
        }
        let mut rec = Recording {
            inner: Dying::new(&mut backend, kill_after),
            log: CallLog::default(),
        };
        let report = exec::execute(&plan, &mut rec);
        let calls = rec.log;
        if report.crashed {
            stats.kills += 1;
            lines.push("the watcher died mid-pass".into());
        }
        stats.jobs_submitted += calls.submitted.len();
        for (object, tag) in &calls.added {
            if let Ok(Tag::Result(r)) = tags::parse(tag) {
                match r.result {
                    RepairResult::Success => stats.repairs_succeeded += 1,
                    RepairResult::Failure => stats.repairs_failed += 1,
                    RepairResult::Enoperm => {}
                }
            }
            lines.push(format!("watcher adds {object}: {tag}"));
        }
        for (object, tag) in &calls.removed {
            lines.push(format!("watcher removes {object}: {tag}"));
        }
        for (i, op, _, job) in &calls.submitted {
            lines.push(format!("watcher submits job {job} on {i}: {op}"));
        }
        let after = backend.fleet().clone();
        stats.passes += 1;
        log.push(lines);
        if let Err((rule, detail)) = check_pass(&before, &after, &calls, &cfg.limits, now) {
            return Outcome {
                stats,
                violation: Some(Violation { rule, pass, detail }),
                log,
            };
        }
        backend.advance_jobs(now);
        last_plan = Some(plan);
    }
    let violation = last_plan.and_then(|_| liveness(backend.fleet(), cfg, planner, total));
    Outcome {
        stats,
        violation,
        log,
    }
}

/// After the quiet passes nothing may still be under way, and every target whose repair is
/// allowed must have been repaired or given up on — unless the fleet is halted, where doing
/// nothing is the rule.
fn liveness(fleet: &Snapshot, cfg: &SimConfig, planner: Planner, pass: usize) -> Option<Violation> {
    let now = cfg.start + pass as i64 * PASS_SECONDS;
    if mass_failure(fleet, &cfg.limits, None) {
        return None;
    }
    let plan = planner(fleet, now, &cfg.limits, 0);
    let mut seen = HashSet::new();
    let duplicated: HashSet<&str> = fleet
        .instances
        .iter()
        .filter(|i| !seen.insert(i.name.as_str()))
        .map(|i| i.name.as_str())
        .collect();
    for t in &plan.targets {
        // An ambiguous name is left alone on purpose until a person fixes the fleet data.
        if duplicated.contains(t.name.as_str()) {
            continue;
        }
        let inst = fleet.instances.iter().find(|i| i.name == t.name)?;
        let health = health::assess_with(inst, |n| fleet.nodes.iter().find(|x| x.name == n));
        let Health::Broken {
            need: Need::Repair(needed),
            ..
        } = health
        else {
            continue;
        };
        if mass_failure(fleet, &cfg.limits, Some(&t.name)) {
            continue;
        }
        let policy = oracle_policy(fleet, &t.name, now);
        let allowed = policy.flatten().is_some_and(|a| needed <= a);
        // The quiet phase leaves dead nodes dead: a repair with nowhere to go is not
        // repairable, and one waiting for resources is judged only once it could have aged
        // out (max_repair_age after it started).
        let max_age = cfg.limits.max_repair_age.as_secs() as i64;
        let waiting = match t.blocked {
            Some(Blocked::CannotSubmit { since: None }) => true,
            Some(
                Blocked::LacksResources { since, .. }
                | Blocked::CannotSubmit { since: Some(since) },
            ) => now - since <= max_age,
            _ => false,
        };
        if allowed && !has_failure(&inst.tags) && !waiting {
            return Some(Violation {
                rule: "liveness: an allowed repair never happened",
                pass,
                detail: format!(
                    "{} still needs {needed} ({}) after {} quiet passes: {}",
                    t.name,
                    t.state,
                    cfg.quiet_passes,
                    t.notes.join("; ")
                ),
            });
        }
        if t.state == State::Pending
            && t.pending.iter().any(|p| {
                p.jobs
                    .iter()
                    .any(|j| j.status.is_some_and(|s| !s.is_finished()))
            })
        {
            return Some(Violation {
                rule: "liveness: a repair never ended",
                pass,
                detail: t.name.clone(),
            });
        }
    }
    None
}

/// Shrinks a failing schedule: drops the passes after the violation, then every event whose
/// removal still gives a violation of the same rule.
pub fn minimize(
    fleet: &Snapshot,
    schedule: &Schedule,
    cfg: &SimConfig,
    planner: Planner,
    rule: &str,
) -> Schedule {
    let fails = |s: &Schedule| {
        run(fleet, s, cfg, planner)
            .violation
            .is_some_and(|v| v.rule == rule)
    };
    let mut best = schedule.clone();
    // Shortest prefix that still fails.
    let mut len = best.passes.len();
    while len > 0 {
        let mut shorter = best.clone();
        shorter.passes.truncate(len - 1);
        if fails(&shorter) {
            best = shorter;
            len -= 1;
        } else {
            break;
        }
    }
    for p in 0..best.passes.len() {
        let mut e = 0;
        while e < best.passes[p].len() {
            let mut fewer = best.clone();
            fewer.passes[p].remove(e);
            if fails(&fewer) {
                best = fewer;
            } else {
                e += 1;
            }
        }
    }
    best
}

/// A violation with everything needed to reproduce it.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub seed: u64,
    pub violation: Violation,
    /// The minimised schedule, one line per event, by pass.
    pub history: Vec<(usize, String)>,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "seed {}: {}", self.seed, self.violation)?;
        writeln!(f, "minimal history that reproduces it:")?;
        for (pass, line) in &self.history {
            writeln!(f, "  before pass {pass}: {line}")?;
        }
        Ok(())
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    pub scenarios: usize,
    pub stats: Stats,
    pub findings: Vec<Finding>,
}

/// Runs `scenarios` seeded scenarios (seeds `seed`, `seed+1`, …) of `passes` fault passes each.
pub fn explore(
    fleet: &Snapshot,
    passes: u32,
    seed: u64,
    scenarios: usize,
    cfg: &SimConfig,
    faults: &Faults,
    planner: Planner,
) -> Summary {
    let mut summary = Summary {
        scenarios,
        ..Summary::default()
    };
    for k in 0..scenarios as u64 {
        let s = seed.wrapping_add(k);
        let sched = schedule(fleet, passes, s, faults);
        let out = run(fleet, &sched, cfg, planner);
        let st = &mut summary.stats;
        st.passes += out.stats.passes;
        st.jobs_submitted += out.stats.jobs_submitted;
        st.kills += out.stats.kills;
        st.repairs_succeeded += out.stats.repairs_succeeded;
        st.repairs_failed += out.stats.repairs_failed;
        st.halted_passes += out.stats.halted_passes;
        if let Some(v) = out.violation {
            let small = minimize(fleet, &sched, cfg, planner, v.rule);
            let violation = run(fleet, &small, cfg, planner).violation.unwrap_or(v);
            let history = small
                .passes
                .iter()
                .enumerate()
                .flat_map(|(p, events)| events.iter().map(move |e| (p, e.to_string())))
                .collect();
            summary.findings.push(Finding {
                seed: s,
                violation,
                history,
            });
            break;
        }
    }
    summary
}

#[cfg(test)]
mod tests;
