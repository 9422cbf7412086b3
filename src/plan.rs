//! The pure planner: snapshot + clock + limits -> plan. No I/O here.

use crate::config::Limits;
use crate::health::{self, Health, Need, NodeState, Storage};
use crate::policy::{self, Policy};
use crate::snapshot::{Instance, Job, JobStatus, Node, ObjectRef, Op, OpKind, Snapshot};
use crate::tags::{
    self, Outcome, Pending, RepairResult, RepairType, Tag, render_pending, render_result,
};
use serde::Serialize;
use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// Explanation text in a [`TargetPlan`]: a `str` that is static or shared when many targets say
/// the same thing ("healthy", a group's policy), so a pass does not allocate it per target.
/// Reads, compares, prints and serialises exactly like a `String` with the same text.
#[derive(Clone)]
pub enum Text {
    Static(&'static str),
    Shared(Arc<str>),
    Owned(String),
}

impl Text {
    pub fn as_str(&self) -> &str {
        match self {
            Text::Static(s) => s,
            Text::Shared(s) => s,
            Text::Owned(s) => s,
        }
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl Default for Text {
    fn default() -> Self {
        Text::Static("")
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text::Owned(s)
    }
}

impl From<&'static str> for Text {
    fn from(s: &'static str) -> Self {
        Text::Static(s)
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for Text {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The Fx hash (as in rustc): one rotate, xor and multiply per 8 bytes. The planner's maps are
/// keyed by node, group and instance names from the snapshot, not by attacker-chosen input
/// where SipHash's flooding resistance would matter, and this is several times cheaper.
#[derive(Clone, Copy, Default)]
pub(crate) struct FxHasher {
    hash: u64,
}

impl FxHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` with [`FxHasher`].
pub(crate) type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
type FxSet<K> = HashSet<K, BuildHasherDefault<FxHasher>>;

/// The state of a target now, as its tags and its nodes say before this pass acts: a pending
/// tag makes it pending, whatever the pass then does. What the pass does is [`Next`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    Healthy,
    Suspended,
    NeedsRepair,
    Pending,
    Failed,
}

impl State {
    pub const ALL: [State; 5] = [
        State::Healthy,
        State::Suspended,
        State::NeedsRepair,
        State::Pending,
        State::Failed,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            State::Healthy => "healthy",
            State::Suspended => "suspended",
            State::NeedsRepair => "needs-repair",
            State::Pending => "pending",
            State::Failed => "failed",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One change to the world. Tag writes on one object are batched into one call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum Action {
    AddTags {
        object: ObjectRef,
        tags: Vec<String>,
        reason: String,
    },
    RemoveTags {
        object: ObjectRef,
        tags: Vec<String>,
        reason: String,
    },
    Repair(RepairStart),
}

/// Submitting (the rest of) a repair, in the crash-safe order the executor follows: write
/// `write_first` (a pending tag with no jobs), submit `ops` chained one after the other with
/// the repair id as reason, write the pending tag with the jobs, then remove `replaces`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepairStart {
    pub target: String,
    pub repair: RepairType,
    pub id: String,
    pub since: i64,
    pub write_first: Option<String>,
    /// Jobs of earlier steps that already succeeded; they stay in the pending tag.
    pub keep_jobs: Vec<u64>,
    pub ops: Vec<Op>,
    pub replaces: Vec<String>,
    pub reason: String,
}

impl RepairStart {
    pub fn pending_tag(&self, new_jobs: &[u64]) -> Result<String, tags::RenderError> {
        let jobs: Vec<u64> = self.keep_jobs.iter().chain(new_jobs).copied().collect();
        render_pending(self.repair, &self.id, self.since, &jobs)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::AddTags {
                object,
                tags,
                reason,
            } => write!(f, "{object}: add {} ({reason})", tags.join(" ")),
            Action::RemoveTags {
                object,
                tags,
                reason,
            } => write!(f, "{object}: remove {} ({reason})", tags.join(" ")),
            Action::Repair(r) => {
                let ops: Vec<String> = r.ops.iter().map(Op::to_string).collect();
                write!(
                    f,
                    "instance/{}: {} repair {}: submit {} ({})",
                    r.target,
                    r.repair,
                    r.id,
                    ops.join(", then "),
                    r.reason
                )
            }
        }
    }
}

/// A problem with the tags themselves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Lint {
    pub object: ObjectRef,
    pub tag: Option<String>,
    pub message: String,
}

impl fmt::Display for Lint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.tag {
            Some(t) => write!(f, "{}: {t}: {}", self.object, self.message),
            None => write!(f, "{}: {}", self.object, self.message),
        }
    }
}

/// A repair recorded in a pending tag, as judged now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepairView {
    pub id: String,
    pub repair: RepairType,
    pub since: i64,
    pub jobs: Vec<JobView>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JobView {
    pub id: u64,
    pub op: Option<OpKind>,
    pub status: Option<JobStatus>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HistoryEntry {
    pub repair: RepairType,
    pub id: String,
    pub at: i64,
    pub result: RepairResult,
    pub jobs: Vec<u64>,
    /// For failures: what the failing job said, while the backend still lists it.
    pub why: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TargetPlan {
    pub name: String,
    pub state: State,
    /// What is wrong, if anything.
    pub problem: Option<String>,
    pub needed_repair: Option<RepairType>,
    /// Set when no automatic repair is possible: why, and what a person should do.
    pub needs_person: Option<String>,
    /// The most destructive repair the effective policy allows (None when suspended or unset).
    pub allowed_repair: Option<RepairType>,
    pub policy: Option<Policy>,
    /// Where the effective policy came from, e.g. `group/default`; `none` when nothing is set.
    pub policy_source: Text,
    pub pending: Vec<RepairView>,
    pub history: Vec<HistoryEntry>,
    /// The reasoning, in order.
    pub notes: Vec<Text>,
    pub actions: Vec<Action>,
    /// Where the target runs: its primary node, its secondary (mirrored storage) and the run
    /// status the backend reported (empty when unknown).
    pub primary: Text,
    pub secondary: Option<Text>,
    pub run_status: Text,
    /// The failure domain its repair belongs to: the down node that breaks it, or (for a
    /// repair still running on a healthy-looking target) its primary.
    pub domain: Option<Text>,
    /// What this pass does for the target.
    pub next: Next,
    /// Why this pass does not (fully) repair it, when something holds it back.
    pub blocked: Option<Blocked>,
}

/// What a pass does for one target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "do", rename_all = "kebab-case")]
pub enum Next {
    Nothing,
    /// Start a repair: a new one, or a once-off request served.
    Start {
        repair: RepairType,
        id: String,
    },
    /// Submit the rest of a repair under way (after a crash, or a retry).
    Continue {
        repair: RepairType,
        id: String,
    },
    /// Only tag changes: record jobs or a result, write enoperm, drop old results.
    UpdateTags,
    /// Held back: [`TargetPlan::blocked`] says why.
    Wait,
}

/// Why a target is held back, as data: `explain`, `status --json` and the simulator's oracle
/// read this instead of the explanation text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum Blocked {
    /// No policy on the target or any of its scopes: it is never touched.
    NoPolicy,
    /// The policy allows less than the target needs.
    NotAllowed {
        needs: RepairType,
        allowed: Option<RepairType>,
    },
    Suspended,
    /// A failure result parks it until a person clears it.
    Parked,
    /// No automatic repair is safe or possible.
    NeedsPerson,
    /// A step failed for lack of resources: retried at `retry_at`, and given up
    /// `max_repair_age` after `since` (when the repair started).
    LacksResources {
        since: i64,
        retry_at: i64,
    },
    /// The operations cannot be built now (no usable node, an operation the backend lacks).
    /// `since` is the start of the repair under way, if one is.
    CannotSubmit {
        since: Option<i64>,
    },
    /// Another repair of this target still runs, or is not yet judged.
    OtherRepair,
    /// A mass failure in its node group or the cluster: nothing is written or started.
    MassFailure {
        scope: Text,
        limit: &'static str,
    },
    /// All failure-domain slots (or the optional per-target cap) are taken.
    NoSlot {
        limit: &'static str,
    },
    /// This pass's write budget is spent; the next pass carries on.
    WriteBudget,
    /// Its name is not unique in the fleet data.
    DuplicateName,
    /// Its tag could not be written (too long).
    Unrecordable,
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocked::NoPolicy => f.write_str("no policy: never touched"),
            Blocked::NotAllowed { needs, allowed } => match allowed {
                Some(a) => write!(f, "needs {needs}, the policy allows up to {a}"),
                None => write!(f, "needs {needs}, the policy allows no repair"),
            },
            Blocked::Suspended => f.write_str("suspended"),
            Blocked::Parked => f.write_str("parked by a failure until cleared"),
            Blocked::NeedsPerson => f.write_str("needs a person"),
            Blocked::LacksResources { retry_at, .. } => {
                write!(f, "lacked resources, retrying at {}", rfc3339(*retry_at))
            }
            Blocked::CannotSubmit { .. } => f.write_str("cannot be submitted now"),
            Blocked::OtherRepair => f.write_str("another repair of it is still running"),
            Blocked::MassFailure { scope, limit } => {
                write!(f, "mass failure in {scope} ({limit})")
            }
            Blocked::NoSlot { limit } => write!(f, "no free slot ({limit})"),
            Blocked::WriteBudget => f.write_str("write budget of this pass spent"),
            Blocked::DuplicateName => f.write_str("duplicate name"),
            Blocked::Unrecordable => f.write_str("its tag cannot be written"),
        }
    }
}

/// A time for people: RFC 3339 in UTC (the `Z` says so).
pub fn rfc3339(epoch: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(epoch.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// A fleet-wide or group-wide limit that tripped: nothing is written or started under it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Halt {
    /// `cluster` or `group/NAME`.
    pub scope: Text,
    /// The config key of the limit that tripped.
    pub limit: &'static str,
    pub message: String,
    /// The note every target it holds gets, rendered once.
    #[serde(skip)]
    held_note: Text,
}

impl Halt {
    fn new(scope: String, limit: &'static str, message: String) -> Self {
        Halt {
            scope: Text::Shared(scope.into()),
            limit,
            held_note: Text::Shared(format!("held: {message}").into()),
            message,
        }
    }
}

impl fmt::Display for Halt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A node that is offline or drained: one failure domain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DownNode {
    pub name: String,
    pub group: String,
    pub state: health::NodeState,
}

impl DownNode {
    pub fn state_text(&self) -> &'static str {
        match self.state {
            NodeState::Offline => "offline",
            NodeState::Drained => "drained",
            NodeState::Usable => "usable",
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FleetSummary {
    /// Targets that need a repair (or a person) right now.
    pub broken: usize,
    /// Repairs under way before this pass started anything.
    pub active_repairs: usize,
    pub started: usize,
    /// The failure domains: nodes offline or drained.
    pub down_nodes: Vec<DownNode>,
    /// Failure domains with repairs under way after this pass's starts.
    pub domains_under_repair: Vec<String>,
    /// Why nothing is written or started fleet-wide, when a limit tripped.
    pub halted: Option<Halt>,
    /// Node groups where nothing is written or started (mass failure there).
    pub halted_groups: Vec<Halt>,
    /// Writes (tag changes and operations) this pass makes.
    pub writes: usize,
    /// Targets whose changes wait for the next pass: the write budget was spent.
    pub deferred: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    pub now: i64,
    pub targets: Vec<TargetPlan>,
    /// Tag changes on the cluster and groups (expired suspends).
    pub scope_actions: Vec<Action>,
    pub lint: Vec<Lint>,
    pub fleet: FleetSummary,
    pub counts: BTreeMap<State, usize>,
}

impl Plan {
    pub fn actions(&self) -> impl Iterator<Item = &Action> {
        self.scope_actions
            .iter()
            .chain(self.targets.iter().flat_map(|t| t.actions.iter()))
    }

    pub fn target(&self, name: &str) -> Option<&TargetPlan> {
        self.targets.iter().find(|t| t.name == name)
    }
}

/// Makes repair ids: UUIDs derived from the seed, target and clock, so the planner stays a
/// pure function (the binary passes a random seed each pass).
struct IdMaker {
    seed: u64,
    now: i64,
}

impl IdMaker {
    const NAMESPACE: uuid::Uuid = uuid::uuid!("7a1c3e52-53a4-4d0e-9d0e-6a7574f2a9c1");
    fn make(&self, target: &str, purpose: &str) -> String {
        let name = format!("{}:{}:{target}:{purpose}", self.seed, self.now);
        uuid::Uuid::new_v5(&Self::NAMESPACE, name.as_bytes()).to_string()
    }
}

/// Where an effective policy came from, with its explanation rendered once per pass (a
/// group's or the cluster's is shared by all their targets).
struct PolicySource {
    policy: Policy,
    /// `group/NAME` or `cluster`, as `TargetPlan::policy_source` shows it.
    source: Text,
    /// The note `finish` starts every target's reasoning with.
    note: Text,
}

impl PolicySource {
    fn new(policy: Policy, object: &ObjectRef) -> Self {
        PolicySource {
            policy,
            source: Text::Shared(object.to_string().into()),
            note: Text::Shared(policy_note(policy, object).into()),
        }
    }
}

fn policy_note(policy: Policy, source: &ObjectRef) -> String {
    format!("policy: {policy} (from {source})")
}

/// A node group as its instances see it.
struct GroupInfo<'a> {
    name: &'a str,
    policy: Option<PolicySource>,
}

/// Lookups the per-target decisions need, built once per pass.
struct Index<'a> {
    snap: &'a Snapshot,
    /// Each node with its name as plan text, shared by every target on it.
    nodes: FxMap<&'a str, (&'a Node, Text)>,
    /// By group uuid.
    groups: FxMap<&'a str, GroupInfo<'a>>,
    cluster_policy: Option<PolicySource>,
    jobs: FxMap<u64, &'a Job>,
    repair_jobs: FxMap<&'a str, Vec<&'a Job>>,
    /// Built on first use: only repairs that pick nodes themselves need it.
    pool: OnceCell<health::NodePool<'a>>,
    duplicate_names: FxSet<&'a str>,
    /// The watcher's own jobs still running, by instance.
    unfinished_by_instance: FxMap<&'a str, Vec<&'a Job>>,
}

impl<'a> Index<'a> {
    fn build(snap: &'a Snapshot, now: i64, lint: &mut Vec<Lint>) -> Self {
        let nodes = snap
            .nodes
            .iter()
            .map(|n| (n.name.as_str(), (n, Text::Shared(n.name.as_str().into()))))
            .collect();
        let groups = snap
            .groups
            .iter()
            .map(|g| {
                let object = ObjectRef::Group(g.name.clone());
                let parsed = scope_tags(&object, &g.tags, lint);
                let policy = policy::object_policy(parsed, now).policy;
                let info = GroupInfo {
                    name: g.name.as_str(),
                    policy: policy.map(|p| PolicySource::new(p, &object)),
                };
                (g.uuid.as_str(), info)
            })
            .collect();
        let parsed = scope_tags(&ObjectRef::Cluster, &snap.cluster.tags, lint);
        let cluster_policy = policy::object_policy(parsed, now)
            .policy
            .map(|p| PolicySource::new(p, &ObjectRef::Cluster));
        for n in &snap.nodes {
            let object = ObjectRef::Node(n.name.clone());
            for (text, parsed) in n.tags.iter().map(|t| (t, tags::parse(t))) {
                match parsed {
                    Ok(Tag::Foreign) => {}
                    Ok(_) => lint.push(Lint {
                        object: object.clone(),
                        tag: Some(text.clone()),
                        message: "autorepair tags on nodes have no effect: tag the instance, its node group or the cluster".into(),
                    }),
                    Err(e) => lint.push(invalid_lint(&object, e)),
                }
            }
        }
        let jobs: FxMap<u64, &Job> = snap.jobs.iter().map(|j| (j.id, j)).collect();
        let mut repair_jobs: FxMap<&str, Vec<&Job>> = FxMap::default();
        for j in &snap.jobs {
            if let Some(id) = j.repair_id() {
                repair_jobs.entry(id).or_default().push(j);
            }
        }
        let mut unfinished_by_instance: FxMap<&str, Vec<&Job>> = FxMap::default();
        for j in &snap.jobs {
            let running = !j.status.is_some_and(JobStatus::is_finished) && j.status.is_some();
            if let (true, Some(_), Some(inst)) = (running, j.repair_id(), j.instance.as_deref()) {
                unfinished_by_instance.entry(inst).or_default().push(j);
            }
        }
        let mut seen = FxSet::with_capacity_and_hasher(snap.instances.len(), Default::default());
        let duplicate_names = snap
            .instances
            .iter()
            .filter(|i| !seen.insert(i.name.as_str()))
            .map(|i| i.name.as_str())
            .collect();
        Index {
            snap,
            nodes,
            groups,
            cluster_policy,
            jobs,
            repair_jobs,
            pool: OnceCell::new(),
            duplicate_names,
            unfinished_by_instance,
        }
    }

    fn node(&self, name: &str) -> Option<&'a Node> {
        self.nodes.get(name).map(|(n, _)| *n)
    }

    fn node_text(&self, name: &str) -> Text {
        self.nodes
            .get(name)
            .map_or_else(|| Text::Owned(name.to_owned()), |(_, t)| t.clone())
    }

    fn pool(&self) -> &health::NodePool<'a> {
        self.pool
            .get_or_init(|| health::NodePool::new(&self.snap.nodes, &self.snap.instances))
    }
}

fn invalid_lint(object: &ObjectRef, e: tags::TagError) -> Lint {
    Lint {
        object: object.clone(),
        tag: Some(e.tag),
        message: format!("{}; the tag is ignored until fixed", e.message),
    }
}

/// Parses a cluster's or group's tags for policy, linting what does not belong there.
fn scope_tags<'t>(
    object: &ObjectRef,
    tags: &'t [String],
    lint: &mut Vec<Lint>,
) -> Vec<(&'t str, Tag<'t>)> {
    let mut out = Vec::new();
    for t in tags {
        match tags::parse(t) {
            Ok(Tag::Foreign) => {}
            Ok(tag @ (Tag::Policy(_) | Tag::Suspend { .. })) => out.push((t.as_str(), tag)),
            Ok(_) => lint.push(Lint {
                object: object.clone(),
                tag: Some(t.clone()),
                message: "pending and result tags belong on instances; here they have no effect"
                    .into(),
            }),
            Err(e) => lint.push(invalid_lint(object, e)),
        }
    }
    lint_policy_mix(object, &out, lint);
    out
}

fn lint_policy_mix(object: &ObjectRef, tags: &[(&str, Tag)], lint: &mut Vec<Lint>) {
    let types: Vec<RepairType> = tags
        .iter()
        .filter_map(|(_, t)| match t {
            Tag::Policy(r) => Some(*r),
            _ => None,
        })
        .collect();
    if types.len() > 1 {
        let least = types.iter().min().expect("non-empty");
        lint.push(Lint {
            object: object.clone(),
            tag: None,
            message: format!(
                "{} policy tags: only the least destructive ({least}) counts; remove the others",
                types.len()
            ),
        });
    }
    let forever = tags
        .iter()
        .any(|(_, t)| matches!(t, Tag::Suspend { until: None }));
    if forever && !types.is_empty() {
        lint.push(Lint {
            object: object.clone(),
            tag: None,
            message: "a permanent suspend overrides the policy tags here until it is removed"
                .into(),
        });
    }
}

/// Plans one pass. `seed` only feeds the repair ids.
pub fn plan(snap: &Snapshot, now: i64, limits: &Limits, seed: u64) -> Plan {
    let mut lint = Vec::new();
    let index = Index::build(snap, now, &mut lint);
    let ids = IdMaker { seed, now };
    // Expired suspends on scopes, with the group they belong to (None: the cluster).
    let mut scope_writes: Vec<(Option<&str>, Action)> = Vec::new();
    let mut expired = Vec::new();
    expire_suspends(&ObjectRef::Cluster, &snap.cluster.tags, now, &mut expired);
    scope_writes.extend(expired.drain(..).map(|a| (None, a)));
    for g in &snap.groups {
        expire_suspends(
            &ObjectRef::Group(g.name.clone()),
            &g.tags,
            now,
            &mut expired,
        );
        scope_writes.extend(expired.drain(..).map(|a| (Some(g.uuid.as_str()), a)));
    }

    let ctx = Ctx {
        index: &index,
        limits,
        now,
        ids: &ids,
    };
    // The plans stay where they are built: they are large, and moving 100k of them costs.
    let (mut plans, mut evals): (Vec<TargetPlan>, Vec<TargetEval>) = snap
        .instances
        .iter()
        .map(|inst| ctx.target(inst, &mut lint))
        .unzip();
    let broken = evals.iter().filter(|e| e.broken).count();
    let active = evals.iter().filter(|e| e.active).count();
    let limiter = Limiter::new(&index, limits, broken);

    // Mass failures first: a held target writes only the bookkeeping of repairs under way.
    for (e, plan) in evals.iter_mut().zip(&mut plans) {
        if let Some(halt) = limiter.halt_for(e.group) {
            hold(e, plan, halt);
        }
    }
    scope_writes.retain(|(group, _)| limiter.halt_for(*group).is_none());

    let mut granted = grant_slots(&mut evals, &mut plans, limits, active);

    let Budget {
        admitted,
        spent,
        deferred,
    } = spend_budget(&evals, &mut granted, &mut plans, &mut scope_writes, limits);

    let mut started = 0;
    let mut domains: FxSet<&str> = FxSet::default();
    let mut counts: BTreeMap<State, usize> = State::ALL.iter().map(|s| (*s, 0)).collect();
    for (((e, c), admitted), plan) in evals.into_iter().zip(granted).zip(admitted).zip(&mut plans) {
        *counts.entry(plan.state).or_default() += 1;
        if e.active || c.is_some() {
            domains.extend(e.domain);
            plan.domain = e.domain.map(|d| index.node_text(d));
        } else if let Some(d) = e.domain.filter(|_| e.broken) {
            plan.domain = Some(index.node_text(d));
        }
        let object = || ObjectRef::Instance(plan.name.clone());
        if admitted && !e.adds.is_empty() {
            plan.actions.push(Action::AddTags {
                object: object(),
                tags: e.adds.iter().map(|w| w.tag.clone()).collect(),
                reason: reasons(&e.adds),
            });
        }
        if let Some(c) = c {
            plan.next = match c.kind {
                StartKind::Continuation | StartKind::Retry => Next::Continue {
                    repair: c.start.repair,
                    id: c.start.id.clone(),
                },
                StartKind::Request | StartKind::Fresh => Next::Start {
                    repair: c.start.repair,
                    id: c.start.id.clone(),
                },
            };
            if c.kind != StartKind::Continuation {
                started += 1;
            }
            plan.notes.push(Text::Owned(c.note));
            plan.actions.push(Action::Repair(c.start));
        }
        if admitted && !e.removes.is_empty() {
            plan.actions.push(Action::RemoveTags {
                object: object(),
                tags: e.removes.iter().map(|w| w.tag.clone()).collect(),
                reason: reasons(&e.removes),
            });
        }
        if plan.next == Next::Nothing {
            if !plan.actions.is_empty() {
                plan.next = Next::UpdateTags;
            } else if plan
                .blocked
                .as_ref()
                .is_some_and(|b| *b != Blocked::NoPolicy)
                && (e.broken || matches!(plan.state, State::Pending | State::Failed))
            {
                // A target nobody put under autorepair waits for nothing.
                plan.next = Next::Wait;
            }
        }
    }
    let mut domains_under_repair: Vec<String> = domains.into_iter().map(str::to_owned).collect();
    domains_under_repair.sort_unstable();
    Plan {
        now,
        targets: plans,
        scope_actions: scope_writes.into_iter().map(|(_, a)| a).collect(),
        lint,
        fleet: FleetSummary {
            broken,
            active_repairs: active,
            started,
            down_nodes: limiter.down_nodes,
            domains_under_repair,
            halted: limiter.cluster,
            halted_groups: {
                let mut halts: Vec<Halt> = limiter.groups.into_values().collect();
                halts.sort_by(|a, b| a.scope.cmp(&b.scope));
                halts
            },
            writes: spent,
            deferred,
        },
        counts,
    }
}

/// Hands out the failure-domain slots in a fixed order (continuations, requests, new repairs,
/// retries; oldest first): a repair starts when its domain already has repairs under way or a
/// domain slot is free, and the optional per-target cap allows. Returns what may start.
fn grant_slots(
    evals: &mut [TargetEval],
    plans: &mut [TargetPlan],
    limits: &Limits,
    active: usize,
) -> Vec<Option<Box<Candidate>>> {
    let mut order: Vec<usize> = (0..evals.len())
        .filter(|&i| evals[i].candidate.is_some())
        .collect();
    order.sort_by(|&a, &b| {
        let key = |e: &TargetEval| {
            let c = e.candidate.as_ref().expect("filtered");
            (c.kind, c.start.since)
        };
        key(&evals[a])
            .cmp(&key(&evals[b]))
            .then_with(|| plans[a].name.cmp(&plans[b].name))
    });
    let mut busy: FxSet<&str> = evals
        .iter()
        .filter(|e| e.active)
        .filter_map(|e| e.domain)
        .collect();
    let mut under_way = active;
    // Once every domain slot is taken the busy set no longer changes: one note serves all.
    let mut no_slot_note: Option<Text> = None;
    let mut granted: Vec<Option<Box<Candidate>>> = (0..evals.len()).map(|_| None).collect();
    for i in order {
        let (e, plan) = (&mut evals[i], &mut plans[i]);
        let c = e.candidate.take().expect("filtered");
        if c.kind != StartKind::Continuation {
            let domain = e.domain.expect("a candidate has a failure domain");
            if !busy.contains(domain) && busy.len() >= limits.max_domains_under_repair {
                let note = no_slot_note.get_or_insert_with(|| {
                    let mut list: Vec<&str> = busy.iter().copied().collect();
                    list.sort_unstable();
                    Text::Shared(
                        format!(
                            "waits for a free failure-domain slot: repairs run for {} domain(s) at once ({}), max_domains_under_repair = {}",
                            busy.len(),
                            list.join(", "),
                            limits.max_domains_under_repair
                        )
                        .into(),
                    )
                });
                plan.notes.push(note.clone());
                plan.blocked = Some(Blocked::NoSlot {
                    limit: "max_domains_under_repair",
                });
                continue;
            }
            if let Some(cap) = limits.max_pending.filter(|cap| under_way >= *cap) {
                plan.notes.push(Text::Owned(format!(
                    "waits for a free slot: max_pending = {cap} repair(s) at once, all taken"
                )));
                plan.blocked = Some(Blocked::NoSlot {
                    limit: "max_pending",
                });
                continue;
            }
            busy.insert(domain);
            under_way += 1;
        }
        granted[i] = Some(c);
    }

    granted
}

/// What the write budget lets through: per target, and in all.
struct Budget {
    admitted: Vec<bool>,
    spent: usize,
    deferred: usize,
}

/// The write budget: bookkeeping of repairs under way first, then starts, then the rest. A
/// target's changes go together or wait together for the next pass; scope changes come last.
fn spend_budget(
    evals: &[TargetEval],
    granted: &mut [Option<Box<Candidate>>],
    plans: &mut [TargetPlan],
    scope_writes: &mut Vec<(Option<&str>, Action)>,
    limits: &Limits,
) -> Budget {
    let mut costs: Vec<(u8, usize, usize)> = evals
        .iter()
        .zip(granted.iter())
        .enumerate()
        .map(|(i, (e, c))| {
            let repair = c.as_ref().map_or(0, |c| repair_cost(&c.start));
            let cost =
                usize::from(!e.adds.is_empty()) + usize::from(!e.removes.is_empty()) + repair;
            let records = e.adds.iter().chain(&e.removes).any(|w| w.record);
            let rank = match c.as_ref().map(|c| c.kind) {
                _ if records => 0,
                Some(StartKind::Continuation) => 0,
                Some(_) => 1,
                None => 2,
            };
            (rank, i, cost)
        })
        .filter(|(_, _, cost)| *cost > 0)
        .collect();
    costs.sort_unstable();
    let mut spent = 0;
    let mut deferred = 0;
    let mut admitted = vec![false; evals.len()];
    let mut full = false;
    for (_, i, cost) in costs.iter().copied() {
        // The first target always fits, so no target is too big to ever go through.
        full |= spent > 0 && spent + cost > limits.max_writes_per_pass;
        if full {
            deferred += 1;
            let plan = &mut plans[i];
            plan.notes.push(Text::Owned(format!(
                "deferred to the next pass: this pass's write budget (max_writes_per_pass = {}) is spent",
                limits.max_writes_per_pass
            )));
            plan.blocked = Some(Blocked::WriteBudget);
            granted[i] = None;
            continue;
        }
        spent += cost;
        admitted[i] = true;
    }
    let scope_room = limits.max_writes_per_pass.saturating_sub(spent);
    if full || scope_writes.len() > scope_room {
        let keep = if full { 0 } else { scope_room };
        deferred += scope_writes.len() - keep;
        scope_writes.truncate(keep);
    }
    spent += scope_writes.len();

    Budget {
        admitted,
        spent,
        deferred,
    }
}

/// The writes a repair start makes (as the executor makes them): its first pending tag, one
/// job per operation, the tag that records the jobs, and one removal of the tags it supersedes
/// (the first tag and any it replaces).
fn repair_cost(r: &RepairStart) -> usize {
    let superseded = r.write_first.is_some() || !r.replaces.is_empty();
    usize::from(r.write_first.is_some()) + r.ops.len() + 1 + usize::from(superseded)
}

/// The distinct reasons of a batch of tag writes, in order.
fn reasons(list: &[Write]) -> String {
    let mut whys: Vec<&str> = Vec::new();
    for w in list {
        if !whys.contains(&w.why.as_str()) {
            whys.push(&w.why);
        }
    }
    whys.join("; ")
}

/// A target under a mass failure: it writes only the bookkeeping of repairs under way, and
/// starts nothing.
fn hold(e: &mut TargetEval, plan: &mut TargetPlan, halt: &Halt) {
    let before = e.adds.len() + e.removes.len();
    e.adds.retain(|w| w.record);
    e.removes.retain(|w| w.record);
    let held = e.candidate.take().is_some() || e.adds.len() + e.removes.len() < before;
    if held || e.broken {
        plan.notes.push(halt.held_note.clone());
        plan.blocked = Some(Blocked::MassFailure {
            scope: halt.scope.clone(),
            limit: halt.limit,
        });
    }
}

/// The mass-failure limits of one pass, counted in failure domains (down nodes).
struct Limiter<'a> {
    down_nodes: Vec<DownNode>,
    cluster: Option<Halt>,
    /// By group uuid.
    groups: FxMap<&'a str, Halt>,
}

impl<'a> Limiter<'a> {
    fn new(index: &Index<'a>, limits: &Limits, broken: usize) -> Self {
        let mut by_group: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        let mut down_nodes = Vec::new();
        for n in &index.snap.nodes {
            let state = health::node_state(n);
            if state == NodeState::Usable {
                continue;
            }
            by_group
                .entry(n.group_uuid.as_str())
                .or_default()
                .push(n.name.as_str());
            down_nodes.push(DownNode {
                name: n.name.clone(),
                group: index
                    .groups
                    .get(n.group_uuid.as_str())
                    .map_or(n.group_uuid.clone(), |g| g.name.to_owned()),
                state,
            });
        }
        let names = |list: &[&str]| {
            let mut shown: Vec<&str> = list.iter().take(10).copied().collect();
            shown.sort_unstable();
            let more = list.len().saturating_sub(shown.len());
            if more > 0 {
                format!("{} and {more} more", shown.join(", "))
            } else {
                shown.join(", ")
            }
        };
        let all: Vec<&str> = down_nodes.iter().map(|n| n.name.as_str()).collect();
        let mut cluster = (all.len() > limits.max_down_nodes).then(|| {
            Halt::new(
                "cluster".into(),
                "max_down_nodes",
                format!(
                    "mass failure: {} nodes are down in the cluster ({}), more than max_down_nodes = {}: nothing is written or started until fewer are down",
                    all.len(),
                    names(&all),
                    limits.max_down_nodes
                ),
            )
        });
        if let Some(max) = limits.max_broken.filter(|max| broken > *max) {
            cluster.get_or_insert_with(|| {
                Halt::new(
                    "cluster".into(),
                    "max_broken",
                    format!(
                        "{broken} instances need repair at once, more than max_broken = {max}: nothing is written or started until fewer are broken"
                    ),
                )
            });
        }
        let groups = by_group
            .into_iter()
            .filter(|(_, down)| down.len() > limits.max_down_nodes_per_group)
            .map(|(uuid, down)| {
                let name = index.groups.get(uuid).map_or(uuid, |g| g.name);
                let halt = Halt::new(
                    format!("group/{name}"),
                    "max_down_nodes_per_group",
                    format!(
                        "mass failure in group {name}: {} nodes are down ({}), more than max_down_nodes_per_group = {}: nothing is written or started for its instances until fewer are down",
                        down.len(),
                        names(&down),
                        limits.max_down_nodes_per_group
                    ),
                );
                (uuid, halt)
            })
            .collect();
        Limiter {
            down_nodes,
            cluster,
            groups,
        }
    }

    /// The halt that holds a target (or a scope) of this group, if any; `None` for the
    /// cluster itself.
    fn halt_for(&self, group: Option<&str>) -> Option<&Halt> {
        self.cluster
            .as_ref()
            .or_else(|| group.and_then(|g| self.groups.get(g)))
    }
}

fn expire_suspends(object: &ObjectRef, tags: &[String], now: i64, out: &mut Vec<Action>) {
    let expired: Vec<String> = tags
        .iter()
        .filter(|t| matches!(tags::parse(t), Ok(Tag::Suspend { until: Some(u) }) if u <= now))
        .cloned()
        .collect();
    if !expired.is_empty() {
        out.push(Action::RemoveTags {
            object: object.clone(),
            tags: expired,
            reason: "timed suspend is over".into(),
        });
    }
}

struct Ctx<'a> {
    index: &'a Index<'a>,
    limits: &'a Limits,
    now: i64,
    ids: &'a IdMaker,
}

/// Why a repair wants to submit jobs; the order is the order slots are handed out in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum StartKind {
    /// The rest of a chain a crash cut short: it kept its slot.
    Continuation,
    /// An external once-off request, or a start that died before submitting.
    Request,
    /// A new repair decided by policy.
    Fresh,
    /// Another try after a lack of resources: likely to fail again, so it goes last rather
    /// than keep fresh repairs waiting.
    Retry,
}

/// A repair this target could submit, if the fleet-wide limits allow.
struct Candidate {
    start: RepairStart,
    kind: StartKind,
    note: String,
}

struct TargetEval<'a> {
    /// The target needs a repair or a person (counts against max_broken).
    broken: bool,
    /// A repair is under way (holds its failure domain's slot).
    active: bool,
    /// Boxed: few targets have one, and `RepairStart` would double the size of every eval.
    candidate: Option<Box<Candidate>>,
    adds: Vec<Write>,
    removes: Vec<Write>,
    /// The node group of its primary (by uuid): a mass failure there holds it.
    group: Option<&'a str>,
    /// Its failure domain, by node name.
    domain: Option<&'a str>,
}

/// One tag to add or remove, and why.
struct Write {
    tag: String,
    why: String,
    /// Bookkeeping of a repair under way (its jobs, its result): allowed even while a
    /// mass failure holds everything else, and first in line for the write budget.
    record: bool,
}

/// The pending tags of one repair id, merged.
struct InFlight<'t> {
    id: &'t str,
    /// The repair being done, from the newest of its tags.
    repair: RepairType,
    since: i64,
    /// The most its tags allow: a request's own type may be above the repair chosen.
    granted: RepairType,
    tags: Vec<&'t str>,
    recorded: Vec<u64>,
}

enum Verdict {
    Running,
    Succeeded(Vec<u64>),
    Failed(String, Vec<u64>),
    /// Chain positions from `from` on still have to be submitted.
    Submit {
        from: usize,
        keep: Vec<u64>,
        not_before: Option<i64>,
        all_jobs: Vec<u64>,
    },
}

impl<'a> Ctx<'a> {
    fn target(&self, inst: &'a Instance, lint: &mut Vec<Lint>) -> (TargetPlan, TargetEval<'a>) {
        // The instance as a tag owner, built only when a lint or an action names it.
        let object = || ObjectRef::Instance(inst.name.clone());
        let mut parsed: Vec<(&str, Tag)> = Vec::new();
        for t in &inst.tags {
            match tags::parse(t) {
                Ok(Tag::Foreign) => {}
                Ok(tag) => parsed.push((t.as_str(), tag)),
                Err(e) => lint.push(invalid_lint(&object(), e)),
            }
        }
        let own = policy::object_policy(parsed.iter().copied(), self.now);
        // A mix takes two tags at least.
        if parsed.len() > 1 {
            lint_policy_mix(&object(), &parsed, lint);
        }

        // The primary is looked up once, for the group's policy and for health.
        let primary_entry = self.index.nodes.get(inst.pnode.as_str());
        let primary = primary_entry.map(|(n, _)| *n);
        let group = primary.and_then(|n| self.index.groups.get(n.group_uuid.as_str()));
        // Nearest wins, as in `policy::effective`: the instance, its group, the cluster.
        let effective = match own.policy {
            Some(p) => Some(Eff::Own(p)),
            None => group
                .and_then(|g| g.policy.as_ref())
                .or(self.index.cluster_policy.as_ref())
                .map(Eff::Shared),
        };

        let secondary_entry = inst
            .snodes
            .first()
            .map(|s| (s, self.index.nodes.get(s.as_str())));
        let secondary = secondary_entry.map(|(s, e)| e.map(|(n, _)| *n).ok_or(s.as_str()));
        let health = health::assess(inst, primary.ok_or(inst.pnode.as_str()), secondary);
        let storage = health::storage_of(&inst.disk_template);
        // The node that breaks it is its failure domain: the primary first, as its loss
        // stops the instance.
        let down = |n: Option<&Node>| n.is_some_and(|n| health::node_state(n) != NodeState::Usable);
        let down_secondary = inst.snodes.iter().find(|s| down(self.index.node(s)));
        let domain = if down(primary) {
            Some(inst.pnode.as_str())
        } else {
            down_secondary.map(String::as_str)
        };

        let node_text = |name: &String, e: Option<&(&Node, Text)>| {
            e.map_or_else(|| Text::Owned(name.clone()), |(_, t)| t.clone())
        };
        let mut t = TargetWork {
            ctx: self,
            inst,
            primary_text: node_text(&inst.pnode, primary_entry),
            secondary_text: secondary_entry.map(|(s, e)| node_text(s, e)),
            group: primary.map(|n| n.group_uuid.as_str()),
            domain,
            had_pending: false,
            blocked: None,
            storage,
            health: &health,
            effective,
            results: parsed
                .iter()
                .filter_map(|(text, tag)| match tag {
                    Tag::Result(r) => Some((*text, *r)),
                    _ => None,
                })
                .collect(),
            adds: Vec::new(),
            removes: Vec::new(),
            notes: Vec::new(),
            pending_views: Vec::new(),
            active: false,
            hold: false,
            candidate: None,
        };
        for text in &own.expired_suspends {
            t.remove(text, "timed suspend is over", false);
        }
        let pendings: Vec<(&str, Pending)> = parsed
            .iter()
            .filter_map(|(text, tag)| match tag {
                Tag::Pending(p) => Some((*text, *p)),
                _ => None,
            })
            .collect();
        let repairs = merge_pending(&pendings);
        t.had_pending = !repairs.is_empty();
        if repairs.len() > 1 {
            let list: Vec<&str> = repairs.iter().map(|r| r.id).collect();
            lint.push(Lint {
                object: t.object(),
                tag: None,
                message: format!(
                    "{} repairs pending at once ({}): they are handled oldest first",
                    repairs.len(),
                    list.join(", ")
                ),
            });
        }
        t.run(repairs);
        t.prune_results();
        if self.index.duplicate_names.contains(inst.name.as_str()) {
            lint.push(Lint {
                object: t.object(),
                tag: None,
                message: "more than one instance has this name: autorepair changes nothing on it until the fleet data is fixed".into(),
            });
            t.adds.clear();
            t.removes.clear();
            t.candidate = None;
            t.blocked = Some(Blocked::DuplicateName);
            t.notes.push("duplicate instance name: no changes".into());
        }
        t.finish()
    }
}

fn merge_pending<'t>(pendings: &[(&'t str, Pending<'t>)]) -> Vec<InFlight<'t>> {
    // Several tags with one id are what a crash leaves between writing a newer tag and removing
    // the older. The newest describes the work: one that records jobs, else the latest written.
    let mut out: Vec<(InFlight, (bool, i64))> = Vec::new();
    for (text, p) in pendings {
        let rank = (!p.jobs.is_empty(), p.since);
        match out.iter_mut().find(|(r, _)| r.id == p.id) {
            Some((r, best)) => {
                r.tags.push(text);
                r.granted = r.granted.max(p.repair);
                if rank > *best {
                    r.repair = p.repair;
                    r.since = p.since;
                    *best = rank;
                }
                for j in p.jobs.iter() {
                    if !r.recorded.contains(&j) {
                        r.recorded.push(j);
                    }
                }
            }
            None => out.push((
                InFlight {
                    id: p.id,
                    repair: p.repair,
                    since: p.since,
                    granted: p.repair,
                    tags: vec![text],
                    recorded: p.jobs.to_vec(),
                },
                rank,
            )),
        }
    }
    let mut out: Vec<InFlight> = out.into_iter().map(|(r, _)| r).collect();
    out.sort_by(|a, b| (a.since, a.id).cmp(&(b.since, b.id)));
    out
}

/// The effective policy of a target: its own, or one shared with its group or the cluster.
#[derive(Clone, Copy)]
enum Eff<'c> {
    Own(Policy),
    Shared(&'c PolicySource),
}

impl Eff<'_> {
    fn policy(self) -> Policy {
        match self {
            Eff::Own(p) => p,
            Eff::Shared(s) => s.policy,
        }
    }
}

struct TargetWork<'c, 'a> {
    ctx: &'c Ctx<'a>,
    inst: &'a Instance,
    primary_text: Text,
    secondary_text: Option<Text>,
    group: Option<&'a str>,
    domain: Option<&'a str>,
    /// It carried a pending tag when the pass read it: it is pending now.
    had_pending: bool,
    blocked: Option<Blocked>,
    storage: Option<Storage>,
    health: &'c Health,
    effective: Option<Eff<'a>>,
    results: Vec<(&'a str, Outcome<'a>)>,
    adds: Vec<Write>,
    removes: Vec<Write>,
    notes: Vec<String>,
    pending_views: Vec<RepairView>,
    active: bool,
    /// A request that cannot start now still keeps any other repair from starting.
    hold: bool,
    candidate: Option<Candidate>,
}

impl<'a> TargetWork<'_, 'a> {
    fn object(&self) -> ObjectRef {
        ObjectRef::Instance(self.inst.name.clone())
    }

    fn add(&mut self, tag: String, why: &str, record: bool) {
        if !self.adds.iter().any(|w| w.tag == tag) {
            self.adds.push(Write {
                tag,
                why: why.to_owned(),
                record,
            });
        }
    }

    fn remove(&mut self, tag: &str, why: &str, record: bool) {
        if !self.removes.iter().any(|w| w.tag == tag) {
            self.removes.push(Write {
                tag: tag.to_owned(),
                why: why.to_owned(),
                record,
            });
        }
    }

    /// The first reason found is the one a person acts on.
    fn block(&mut self, why: Blocked) {
        self.blocked.get_or_insert(why);
    }

    fn has_failure(&self) -> bool {
        self.results
            .iter()
            .any(|(_, r)| r.result == RepairResult::Failure)
    }

    fn suspended(&self) -> Option<Policy> {
        self.effective.map(Eff::policy).filter(|p| p.is_suspended())
    }

    /// Ends a repair: writes its result (once, even if an earlier pass crashed after writing
    /// it) and then drops its pending tags.
    fn resolve(
        &mut self,
        r: &InFlight,
        repair: RepairType,
        result: RepairResult,
        jobs: &[u64],
        why: &str,
    ) {
        // A repair that never submitted a job is a request: ending it is a change like any
        // other, not bookkeeping of work under way.
        let record = !(r.recorded.is_empty() && jobs.is_empty());
        let already = self.results.iter().any(|(_, o)| o.id == r.id);
        if !already {
            // The result tag is longer than the pending one: when all the jobs do not fit,
            // keep the newest, which decided the outcome.
            let rendered = (0..jobs.len().max(1))
                .map(|drop| {
                    render_result(
                        repair,
                        r.id,
                        self.ctx.now,
                        result,
                        &jobs[drop.min(jobs.len())..],
                    )
                })
                .find(|t| !matches!(t, Err(tags::RenderError::TooLong { .. })))
                .unwrap_or_else(|| render_result(repair, r.id, self.ctx.now, result, &[]));
            match rendered {
                Ok(tag) => self.add(tag, why, record),
                Err(e) => {
                    self.block(Blocked::Unrecordable);
                    self.notes
                        .push(format!("cannot record the result of {}: {e}", r.id));
                    // Its pending tag stays, so nothing else may start beside it.
                    self.hold = true;
                    return;
                }
            }
        }
        if result == RepairResult::Failure {
            // Park the target for the rest of this pass too.
            self.results.push((
                "",
                Outcome {
                    repair,
                    id: "",
                    at: self.ctx.now,
                    result,
                    jobs: Default::default(),
                },
            ));
        }
        for tag in &r.tags {
            self.remove(tag, why, record);
        }
        self.notes
            .push(format!("repair {} ({repair}): {result}: {why}", r.id));
    }

    fn run(&mut self, mut repairs: Vec<InFlight>) {
        // Repairs with jobs first (oldest first), then requests: a request, however old, never
        // starts while a repair with jobs has not been judged.
        repairs.sort_by_cached_key(|r| {
            let (jobs, missing) = self.jobs_of(r);
            (jobs.is_empty() && missing.is_empty(), r.since, r.id)
        });
        for r in &repairs {
            if self.busy() {
                self.notes
                    .push(format!("repair {} waits until the older one ends", r.id));
                continue;
            }
            self.one_pending(r);
        }
        if self.busy() {
            return;
        }
        self.fresh();
    }

    /// Jobs known for the repair: the ones its tags record and any the backend lists with its
    /// id as reason (submitted by a pass that died before recording them). Of several attempts
    /// at one step only the newest counts, so the list never grows beyond the chain's length.
    /// Returns the jobs and the recorded ones the backend no longer knows.
    fn jobs_of(&self, r: &InFlight) -> (Vec<u64>, Vec<u64>) {
        let index = &self.ctx.index;
        let mut jobs = r.recorded.clone();
        let here = |j: &Job| j.instance.as_deref().is_none_or(|i| i == self.inst.name);
        for j in index.repair_jobs.get(r.id).into_iter().flatten() {
            if j.op.is_some() && here(j) && !jobs.contains(&j.id) {
                jobs.push(j.id);
            }
        }
        let (known, missing): (Vec<u64>, Vec<u64>) = jobs
            .into_iter()
            .partition(|id| index.jobs.get(id).is_some_and(|j| j.status.is_some()));
        let kind = |id: &u64| index.jobs[id].op.as_ref().map(Op::kind);
        let newest: Vec<u64> = known
            .iter()
            .copied()
            .filter(|id| {
                kind(id).is_none()
                    || !known
                        .iter()
                        .any(|other| other > id && kind(other) == kind(id))
            })
            .collect();
        (newest, missing)
    }

    fn judge(&self, r: &InFlight, jobs: &[u64]) -> Verdict {
        let idx = &self.ctx.index;
        let get = |id: &u64| idx.jobs[id];
        if jobs
            .iter()
            .any(|id| !get(id).status.is_some_and(JobStatus::is_finished))
        {
            return Verdict::Running;
        }
        // Jobs judged as a whole: all must have succeeded.
        let whole = || match jobs
            .iter()
            .map(get)
            .find(|j| j.status != Some(JobStatus::Success))
        {
            None => Verdict::Succeeded(jobs.to_vec()),
            Some(j) => Verdict::Failed(job_failure(j), jobs.to_vec()),
        };
        let chain = self.storage.and_then(|s| health::chain(s, r.repair));
        // Jobs we cannot place in a chain (e.g. written by harep, or a chain of another type).
        let Some(chain) = chain else {
            return whole();
        };
        // Steps run in order: jobs for a later step without the earlier ones are not a chain
        // this planner submitted (another tool, an older version). Never fill in earlier steps
        // after later ones ran.
        let positions: Vec<Option<usize>> = jobs
            .iter()
            .map(|id| {
                get(id)
                    .op
                    .as_ref()
                    .and_then(|o| chain.iter().position(|k| *k == o.kind()))
            })
            .collect();
        let highest = positions.iter().flatten().max().copied().unwrap_or(0);
        let is_prefix = positions.iter().all(Option::is_some)
            && (0..=highest).all(|p| positions.contains(&Some(p)));
        if !is_prefix {
            return whole();
        }
        // The newest job of each step decides it.
        let latest = |kind: OpKind| {
            jobs.iter()
                .map(get)
                .filter(|j| j.op.as_ref().map(Op::kind) == Some(kind))
                .max_by_key(|j| j.id)
        };
        let mut keep = Vec::new();
        for (pos, kind) in chain.iter().enumerate() {
            match latest(*kind) {
                None => {
                    return Verdict::Submit {
                        from: pos,
                        keep,
                        not_before: None,
                        all_jobs: jobs.to_vec(),
                    };
                }
                Some(j) if j.status == Some(JobStatus::Success) => keep.push(j.id),
                Some(j) if j.failed_for_lack_of_resources() => {
                    let retry = self.ctx.limits.retry_interval.as_secs() as i64;
                    return Verdict::Submit {
                        from: pos,
                        keep,
                        not_before: Some(j.end_ts.unwrap_or(i64::MIN / 2).saturating_add(retry)),
                        all_jobs: jobs.to_vec(),
                    };
                }
                Some(j) => return Verdict::Failed(job_failure(j), keep_with(keep, j.id)),
            }
        }
        Verdict::Succeeded(keep)
    }

    fn view(&self, r: &InFlight, jobs: &[u64]) -> RepairView {
        RepairView {
            id: r.id.to_owned(),
            repair: r.repair,
            since: r.since,
            jobs: jobs
                .iter()
                .map(|id| {
                    let j = self.ctx.index.jobs.get(id);
                    JobView {
                        id: *id,
                        op: j.and_then(|j| j.op.as_ref().map(Op::kind)),
                        status: j.and_then(|j| j.status),
                    }
                })
                .collect(),
        }
    }

    /// Makes the repair's tags say exactly `jobs` in one pending tag (merging duplicates left
    /// by a crash, recording adopted jobs).
    fn canonical_pending(&mut self, r: &InFlight, jobs: &[u64]) {
        match render_pending(r.repair, r.id, r.since, jobs) {
            Ok(tag) => {
                if r.tags.len() != 1 || r.tags[0] != tag {
                    if !r.tags.contains(&tag.as_str()) {
                        self.add(tag.clone(), "record the repair's jobs", true);
                    }
                    for old in &r.tags {
                        if *old != tag {
                            self.remove(old, "superseded by the tag that records the jobs", true);
                        }
                    }
                }
            }
            Err(e) => self
                .notes
                .push(format!("cannot record the jobs of repair {}: {e}", r.id)),
        }
    }

    fn one_pending(&mut self, r: &InFlight) {
        let (jobs, missing) = self.jobs_of(r);
        self.pending_views.push(self.view(r, &jobs));
        if let Some(gone) = missing.first() {
            self.resolve(
                r,
                r.repair,
                RepairResult::Failure,
                &jobs,
                &format!("job {gone} no longer exists (purged from the job queue?)"),
            );
            return;
        }
        let age = self.ctx.now - r.since;
        let too_old = age > self.ctx.limits.max_repair_age.as_secs() as i64;
        if jobs.is_empty() {
            // A request never expires: it is a permission waiting for its moment.
            return self.not_started(r);
        }
        match self.judge(r, &jobs) {
            Verdict::Running => {
                self.active = true;
                self.notes
                    .push(format!("repair {} ({}) is running", r.id, r.repair));
                self.canonical_pending(r, &jobs);
            }
            Verdict::Succeeded(kept) => self.resolve(
                r,
                r.repair,
                RepairResult::Success,
                &kept,
                "all its jobs succeeded",
            ),
            Verdict::Failed(why, kept) => {
                self.resolve(r, r.repair, RepairResult::Failure, &kept, &why)
            }
            Verdict::Submit {
                from,
                keep,
                not_before,
                all_jobs,
            } => {
                let retry = not_before.is_some();
                // A chain cut short by a crash keeps its slot; a repair waiting to retry for
                // lack of resources runs nothing, so it frees its slot for others meanwhile and
                // competes for one again when its retry is due.
                // Only retries for lack of resources can go on forever; they get a deadline.
                if too_old && retry {
                    let why =
                        format!("still lacking resources {age}s after it started (max_repair_age)");
                    return self.resolve(r, r.repair, RepairResult::Failure, &all_jobs, &why);
                }
                self.active = !retry;
                self.hold = true;
                if let Some(t) = not_before.filter(|t| *t > self.ctx.now) {
                    self.block(Blocked::LacksResources {
                        since: r.since,
                        retry_at: t,
                    });
                    self.notes
                        .push(format!("repair {} lacked resources; retrying at {t}", r.id));
                    return self.canonical_pending(r, &all_jobs);
                }
                if let Some(why) = self.other_running(r.id) {
                    self.block(Blocked::OtherRepair);
                    self.notes.push(format!("repair {} waits: {why}", r.id));
                    return self.canonical_pending(r, &all_jobs);
                }
                if let Some((blocked, why)) = self.blocked() {
                    // Paused, it runs nothing: it keeps no slot from other targets.
                    self.block(blocked);
                    self.active = false;
                    self.notes.push(format!("repair {} is paused: {why}", r.id));
                    return self.canonical_pending(r, &all_jobs);
                }
                let kinds = &self
                    .storage
                    .and_then(|s| health::chain(s, r.repair))
                    .expect("judge only asks to submit along a chain")[from..];
                self.propose(
                    r.id,
                    r.repair,
                    r.since,
                    keep,
                    kinds,
                    None,
                    r.tags.clone(),
                    if retry {
                        StartKind::Retry
                    } else {
                        StartKind::Continuation
                    },
                );
                if retry && self.candidate.is_none() {
                    self.canonical_pending(r, &all_jobs);
                }
            }
        }
    }

    /// A pending tag with no job anywhere: an external once-off request, or a start that
    /// crashed before submitting.
    fn not_started(&mut self, r: &InFlight) {
        if let Some(why) = self.other_running(r.id) {
            self.block(Blocked::OtherRepair);
            self.active = true;
            self.hold = true;
            self.notes.push(format!("request {} waits: {why}", r.id));
            return;
        }
        if self.has_failure() {
            self.block(Blocked::Parked);
            self.notes.push(format!(
                "request {} waits: a failure result parks this target until a person clears it",
                r.id
            ));
            self.active_request_hold();
            return;
        }
        if let Some(p) = self.suspended() {
            self.block(Blocked::Suspended);
            self.notes.push(format!("request {} waits: {p}", r.id));
            self.active_request_hold();
            return;
        }
        match self.health.clone() {
            Health::Healthy => self.resolve(
                r,
                r.repair,
                RepairResult::Success,
                &[],
                "the target is healthy: nothing to repair",
            ),
            Health::Broken {
                need: Need::Person(why),
                ..
            } => self.resolve(
                r,
                r.repair,
                RepairResult::Failure,
                &[],
                &format!("no automatic repair: {why}"),
            ),
            Health::Broken {
                need: Need::Repair(t),
                ..
            } if t <= r.granted => {
                let kinds = self
                    .storage
                    .and_then(|s| health::chain(s, t))
                    .expect("every needed repair has a chain");
                // The repair starts now, and its tag says so (type and time) before any job
                // exists: a pass that dies after submitting must judge the jobs against the
                // repair really chosen, not the request's upper bound.
                let first = match render_pending(t, r.id, self.ctx.now, &[]) {
                    Ok(tag) => tag,
                    Err(e) => {
                        self.notes.push(format!("cannot write a pending tag: {e}"));
                        self.block(Blocked::Unrecordable);
                        self.hold = true;
                        return;
                    }
                };
                let replaces: Vec<&str> = r.tags.iter().copied().filter(|t| **t != first).collect();
                let first = (!r.tags.contains(&first.as_str())).then_some(first);
                self.propose(
                    r.id,
                    t,
                    self.ctx.now,
                    vec![],
                    kinds,
                    first,
                    replaces,
                    StartKind::Request,
                );
            }
            Health::Broken {
                need: Need::Repair(t),
                ..
            } => {
                self.block(Blocked::NotAllowed {
                    needs: t,
                    allowed: Some(r.granted),
                });
                let why = format!("it needs {t}, more than the {} it allows", r.granted);
                self.resolve(r, t, RepairResult::Enoperm, &[], &why);
            }
        }
    }

    fn active_request_hold(&mut self) {
        self.hold = true;
    }

    fn busy(&self) -> bool {
        self.active || self.hold || self.candidate.is_some()
    }

    /// An unfinished job of the watcher's on this target that belongs to another repair than
    /// `id` (its tags may not be written yet): nothing else may start beside it.
    fn other_running(&self, id: &str) -> Option<String> {
        let jobs = self
            .ctx
            .index
            .unfinished_by_instance
            .get(self.inst.name.as_str())?;
        jobs.iter().find(|j| j.repair_id() != Some(id)).map(|j| {
            format!(
                "job {} of repair {} is still running",
                j.id,
                j.repair_id().unwrap_or("?")
            )
        })
    }

    /// Why no job may be submitted for this target now, if anything forbids it.
    fn blocked(&self) -> Option<(Blocked, String)> {
        if self.has_failure() {
            return Some((
                Blocked::Parked,
                "a failure result parks this target until a person clears it".into(),
            ));
        }
        self.suspended()
            .map(|p| (Blocked::Suspended, p.to_string()))
    }

    /// Builds the operations for `kinds` against the instance as it is now and offers them as
    /// a candidate; the fleet-wide limits decide later whether it starts.
    #[allow(clippy::too_many_arguments)]
    fn propose(
        &mut self,
        id: &str,
        repair: RepairType,
        since: i64,
        keep: Vec<u64>,
        kinds: &[OpKind],
        write_first: Option<String>,
        replaces: Vec<&str>,
        kind: StartKind,
    ) {
        let storage = self.storage.expect("a chain implies a known storage kind");
        let ialloc = self.ctx.limits.iallocator();
        let ops: Result<Vec<Op>, String> = kinds
            .iter()
            .map(|k| {
                if self.ctx.limits.unsupported_ops.contains(k) {
                    return Err(format!(
                        "the backend cannot {k} instances: a person has to (e.g. gnt-instance {k} on the master)"
                    ));
                }
                health::build_op(*k, self.inst, storage, ialloc, self.ctx.index.pool())
            })
            .collect();
        let ops = match ops {
            Ok(ops) => ops,
            Err(why) => {
                self.notes
                    .push(format!("{repair} repair cannot be submitted now: {why}"));
                let under_way = matches!(kind, StartKind::Continuation | StartKind::Retry);
                self.block(Blocked::CannotSubmit {
                    since: under_way.then_some(since),
                });
                // A repair under way (no first tag to write) keeps others from starting.
                if write_first.is_none() {
                    self.hold = true;
                }
                return;
            }
        };
        let what: Vec<String> = ops.iter().map(Op::to_string).collect();
        let note = match kind {
            StartKind::Continuation | StartKind::Retry => {
                format!("repair {id} continues: {}", what.join(", then "))
            }
            StartKind::Request | StartKind::Fresh => {
                format!("starting {repair} repair {id}: {}", what.join(", then "))
            }
        };
        self.candidate = Some(Candidate {
            start: RepairStart {
                target: self.inst.name.clone(),
                repair,
                id: id.to_owned(),
                since,
                write_first,
                keep_jobs: keep,
                ops,
                replaces: replaces.into_iter().map(str::to_owned).collect(),
                reason: crate::snapshot::reason_for(id),
            },
            kind,
            note,
        });
    }

    /// No pending repair is left: decide from health and policy alone.
    fn fresh(&mut self) {
        let own_jobs = self
            .ctx
            .index
            .unfinished_by_instance
            .get(self.inst.name.as_str());
        if let Some(j) = own_jobs.and_then(|v| v.first()) {
            self.block(Blocked::OtherRepair);
            self.active = true;
            self.notes.push(format!(
                "job {} of repair {} is still unfinished though no pending tag names it (its tag write may still be queued): nothing new starts",
                j.id,
                j.repair_id().unwrap_or("?")
            ));
            return;
        }
        if self.has_failure() {
            self.block(Blocked::Parked);
            self.notes.push(
                "a failure result parks this target: investigate, then `autorepair clear` it"
                    .into(),
            );
            return;
        }
        if let Some(p) = self.suspended() {
            if self.health.is_broken() {
                self.block(Blocked::Suspended);
                self.notes.push(format!("no repair starts: {p}"));
            }
            return;
        }
        match self.health.clone() {
            Health::Healthy => {}
            Health::Broken {
                need: Need::Person(_),
                ..
            } => self.block(Blocked::NeedsPerson),
            Health::Broken {
                need: Need::Repair(t),
                ..
            } => {
                let allowed = self.effective.and_then(|e| e.policy().allowed());
                if allowed.is_some_and(|a| t <= a) {
                    let id = self.ctx.ids.make(&self.inst.name, "repair");
                    let first = match render_pending(t, &id, self.ctx.now, &[]) {
                        Ok(tag) => tag,
                        Err(e) => {
                            self.block(Blocked::Unrecordable);
                            self.notes.push(format!("cannot write a pending tag: {e}"));
                            return;
                        }
                    };
                    let kinds = self
                        .storage
                        .and_then(|s| health::chain(s, t))
                        .expect("every needed repair has a chain");
                    self.propose(
                        &id,
                        t,
                        self.ctx.now,
                        vec![],
                        kinds,
                        Some(first),
                        vec![],
                        StartKind::Fresh,
                    );
                } else if self.effective.is_none() {
                    // The spec's enoperm is for targets whose policy is too weak; a target
                    // nobody put under autorepair is not its business at all.
                    self.block(Blocked::NoPolicy);
                    self.notes.push(format!(
                        "needs {t}, but no policy is set on it, its group or the cluster: autorepair writes nothing on it"
                    ));
                } else {
                    self.block(Blocked::NotAllowed { needs: t, allowed });
                    let allowed_text =
                        allowed.map_or("no repair".to_owned(), |a| format!("repairs up to {a}"));
                    self.notes.push(format!(
                        "not allowed: needs {t}, policy allows {allowed_text}"
                    ));
                    let written = self
                        .results
                        .iter()
                        .any(|(_, r)| r.result == RepairResult::Enoperm && r.repair == t);
                    if written {
                        self.notes.push("enoperm already recorded".into());
                    } else {
                        let id = self.ctx.ids.make(&self.inst.name, "enoperm");
                        match render_result(t, &id, self.ctx.now, RepairResult::Enoperm, &[]) {
                            Ok(tag) => self.add(
                                tag,
                                &format!("needs {t}, policy allows {allowed_text}"),
                                false,
                            ),
                            Err(e) => self.notes.push(format!("cannot write enoperm: {e}")),
                        }
                    }
                }
            }
        }
    }

    /// Drops success and enoperm results past the retention period or beyond the newest
    /// `max_results`. Failures stay until a person clears them, and the enoperm that still
    /// describes the target stays so it is not written again.
    fn prune_results(&mut self) {
        let limits = self.ctx.limits;
        let oldest_kept = self.ctx.now - limits.result_retention.as_secs() as i64;
        let current_enoperm = self.health.needed_repair().and_then(|t| {
            self.results
                .iter()
                .filter(|(text, r)| {
                    !text.is_empty() && r.result == RepairResult::Enoperm && r.repair == t
                })
                .max_by_key(|(_, r)| r.at)
                .map(|(text, _)| *text)
        });
        let mut prunable: Vec<(&str, i64)> = self
            .results
            .iter()
            .filter(|(text, r)| {
                !text.is_empty()
                    && r.result != RepairResult::Failure
                    && Some(*text) != current_enoperm
            })
            .map(|(text, r)| (*text, r.at))
            .collect();
        prunable.sort_by_key(|(_, at)| std::cmp::Reverse(*at));
        let drop: Vec<(&str, &str)> = prunable
            .iter()
            .enumerate()
            .filter_map(|(rank, (text, at))| {
                if *at < oldest_kept {
                    Some((*text, "older than result_retention"))
                } else if rank >= limits.max_results {
                    Some((*text, "more than max_results results"))
                } else {
                    None
                }
            })
            .collect();
        for (text, why) in drop {
            self.remove(text, why, false);
        }
    }

    fn finish(self) -> (TargetPlan, TargetEval<'a>) {
        let effective = self.effective;
        let suspended = self.suspended().is_some();
        let mut notes = Vec::with_capacity(2 + self.notes.len() + 1);
        match self.health {
            Health::Healthy => notes.push(Text::Static("healthy")),
            Health::Broken { problem, need } => notes.push(Text::Owned(match need {
                Need::Repair(t) => format!("{problem}: needs {t}"),
                Need::Person(why) => format!("{problem}: needs a person: {why}"),
            })),
        }
        // A group's or the cluster's note was rendered once per pass: only an instance's own
        // policy is formatted here.
        let (policy_source, policy_text) = match effective {
            Some(Eff::Shared(s)) => (s.source.clone(), s.note.clone()),
            Some(Eff::Own(p)) => (
                Text::Owned(format!("instance/{}", self.inst.name)),
                Text::Owned(policy_note(p, &self.object())),
            ),
            None => (
                Text::Static("none"),
                Text::Static("policy: none set on the instance, its group or the cluster"),
            ),
        };
        notes.push(policy_text);
        notes.extend(self.notes.into_iter().map(Text::Owned));
        let history = self
            .results
            .iter()
            .filter(|(text, _)| !text.is_empty())
            .map(|(_, r)| HistoryEntry {
                repair: r.repair,
                id: r.id.to_owned(),
                at: r.at,
                result: r.result,
                jobs: r.jobs.to_vec(),
                why: (r.result == RepairResult::Failure)
                    .then(|| {
                        r.jobs
                            .iter()
                            .filter_map(|id| self.ctx.index.jobs.get(&id))
                            .find(|j| j.status != Some(JobStatus::Success))
                            .map(|j| job_failure(j))
                    })
                    .flatten(),
            })
            .collect();
        // The state now, from the tags and nodes as read: what this pass does is `next`.
        let failed = self
            .results
            .iter()
            .any(|(text, r)| !text.is_empty() && r.result == RepairResult::Failure);
        let state = if self.had_pending {
            State::Pending
        } else if failed {
            State::Failed
        } else if suspended {
            State::Suspended
        } else if self.health.is_broken() {
            State::NeedsRepair
        } else {
            State::Healthy
        };
        let plan = TargetPlan {
            name: self.inst.name.clone(),
            state,
            problem: match self.health {
                Health::Broken { problem, .. } => Some(problem.clone()),
                Health::Healthy => None,
            },
            needed_repair: self.health.needed_repair(),
            needs_person: match self.health {
                Health::Broken {
                    need: Need::Person(why),
                    ..
                } => Some(why.clone()),
                _ => None,
            },
            allowed_repair: effective.and_then(|e| e.policy().allowed()),
            policy: effective.map(Eff::policy),
            policy_source,
            pending: self.pending_views,
            history,
            notes,
            actions: Vec::new(),
            primary: self.primary_text,
            secondary: self.secondary_text,
            run_status: run_status_text(&self.inst.status),
            domain: None,
            next: Next::Nothing,
            blocked: self.blocked,
        };
        let domain = self
            .domain
            .or((self.active || self.candidate.is_some()).then_some(self.inst.pnode.as_str()));
        let eval = TargetEval {
            broken: self.health.is_broken(),
            active: self.active,
            candidate: self.candidate.map(Box::new),
            adds: self.adds,
            removes: self.removes,
            group: self.group,
            domain,
        };
        (plan, eval)
    }
}

/// Ganeti's few run states are shared texts, so 100k targets do not allocate them.
fn run_status_text(status: &str) -> Text {
    const KNOWN: [&str; 8] = [
        "running",
        "ADMIN_down",
        "ADMIN_offline",
        "ERROR_down",
        "ERROR_up",
        "ERROR_nodedown",
        "ERROR_nodeoffline",
        "ERROR_wrongnode",
    ];
    match KNOWN.iter().find(|k| **k == status) {
        Some(k) => Text::Static(k),
        None if status.is_empty() => Text::Static(""),
        None => Text::Owned(status.to_owned()),
    }
}

fn job_failure(j: &Job) -> String {
    let what =
        j.op.as_ref()
            .map_or("job".to_owned(), |o| o.kind().to_string());
    match (j.status, j.error()) {
        (_, Some((msg, _))) => format!("job {} ({what}) failed: {msg}", j.id),
        (Some(JobStatus::Canceled), None) => format!("job {} ({what}) was canceled", j.id),
        (status, None) => format!(
            "job {} ({what}) ended {}",
            j.id,
            status.map_or("unknown".into(), |s| format!("{s:?}").to_lowercase())
        ),
    }
}

fn keep_with(mut keep: Vec<u64>, id: u64) -> Vec<u64> {
    keep.push(id);
    keep
}

#[cfg(test)]
mod tests;
