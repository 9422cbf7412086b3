//! The pure planner: snapshot + clock + limits -> plan. No I/O here.
//!
//! [`plan`] reads every target through its [`Family`], then hands out what may start:
//! mass-failure holds first ([`limiter`]), then failure-domain slots, then the write budget.
//! The per-target decisions (bookkeeping of repairs under way, judging their operations,
//! starting new ones) are in [`target`].

mod index;
mod limiter;
pub mod rate;
pub mod retry;
mod target;

use super::family::Family;
use super::limits::Limits;
use super::marks::{Codec, RenderError, RepairResult};
use super::object::ObjectRef;
use super::policy::Policy;
use super::text::{FxSet, Text, rfc3339};
use index::Index;
use limiter::{Budget, Limiter, grant_slots, hold, spend_budget};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use target::{StartKind, Write};

/// The state of a target now, as its marks and its domains say before this pass acts: a
/// pending mark makes it pending, whatever the pass then does. What the pass does is [`Next`].
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

/// One change to the world. Mark writes on one object are batched into one call. The JSON
/// keeps the names of the first family's storage (`add-tags`, `tags`): tools read them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "kebab-case", bound = "")]
pub enum Action<F: Family> {
    #[serde(rename = "add-tags")]
    AddMarks {
        object: ObjectRef,
        #[serde(rename = "tags")]
        marks: Vec<String>,
        reason: String,
    },
    #[serde(rename = "remove-tags")]
    RemoveMarks {
        object: ObjectRef,
        #[serde(rename = "tags")]
        marks: Vec<String>,
        reason: String,
    },
    Repair(RepairStart<F>),
    /// Work on an operation the watcher runs itself ([`Family::progress`]).
    Advance {
        object: ObjectRef,
        op: F::Op,
        reason: String,
    },
}

/// Submitting (the rest of) a repair, in the crash-safe order the executor follows: write
/// `write_first` (a pending mark with no operations), submit `ops` chained one after the other
/// with the repair id as reason, write the pending mark with the operations, then remove
/// `replaces`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(bound = "")]
pub struct RepairStart<F: Family> {
    pub target: String,
    pub repair: F::Level,
    pub id: String,
    pub since: i64,
    pub write_first: Option<String>,
    /// Operations of earlier steps that already succeeded; they stay in the pending mark.
    pub keep_jobs: Vec<F::OpId>,
    pub ops: Vec<F::Op>,
    pub replaces: Vec<String>,
    pub reason: String,
}

impl<F: Family> RepairStart<F> {
    pub fn object(&self) -> ObjectRef {
        ObjectRef::new(F::WORDS.target, self.target.clone())
    }

    pub fn pending_mark(&self, new_ops: &[F::OpId]) -> Result<String, RenderError> {
        let ops: Vec<F::OpId> = self.keep_jobs.iter().chain(new_ops).cloned().collect();
        F::Marks::render_pending(self.repair, &self.id, self.since, &ops)
    }
}

impl<F: Family> fmt::Display for Action<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::AddMarks {
                object,
                marks,
                reason,
            } => write!(f, "{object}: add {} ({reason})", marks.join(" ")),
            Action::RemoveMarks {
                object,
                marks,
                reason,
            } => write!(f, "{object}: remove {} ({reason})", marks.join(" ")),
            Action::Repair(r) => {
                let ops: Vec<String> = r.ops.iter().map(F::Op::to_string).collect();
                write!(
                    f,
                    "{}: {} repair {}: submit {} ({})",
                    r.object(),
                    r.repair,
                    r.id,
                    ops.join(", then "),
                    r.reason
                )
            }
            Action::Advance { object, op, reason } => write!(f, "{object}: {op} ({reason})"),
        }
    }
}

/// Prefix of the reason the watcher attaches to every operation it submits.
pub const REASON_PREFIX: &str = "autorepair:";

pub fn reason_for(repair_id: &str) -> String {
    format!("{REASON_PREFIX}{repair_id}")
}

/// The repair an operation's reason names, when it is `autorepair:<repair id>`.
pub fn repair_of_reason(reason: &str) -> Option<&str> {
    reason
        .strip_prefix(REASON_PREFIX)
        .filter(|id| super::marks::is_uuid(id))
}

/// A problem with the marks themselves.
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

/// A repair recorded in a pending mark, as judged now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(bound = "")]
pub struct RepairView<F: Family> {
    pub id: String,
    pub repair: F::Level,
    pub since: i64,
    pub jobs: Vec<OpView<F>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(bound = "")]
pub struct OpView<F: Family> {
    pub id: F::OpId,
    pub op: Option<F::Step>,
    pub status: Option<F::OpStatus>,
    /// What holds it while it is under way, when the family says (a disabled queue).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waits_on: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(bound = "")]
pub struct HistoryEntry<F: Family> {
    pub repair: F::Level,
    pub id: String,
    pub at: i64,
    pub result: RepairResult,
    pub jobs: Vec<F::OpId>,
    /// For failures: what the failing operation said, while the backend still lists it.
    pub why: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(bound = "")]
pub struct TargetPlan<F: Family> {
    pub name: String,
    pub state: State,
    /// What is wrong, if anything.
    pub problem: Option<String>,
    pub needed_repair: Option<F::Level>,
    /// Set when no automatic repair is possible: why, and what a person should do.
    pub needs_person: Option<String>,
    /// The most destructive repair the effective policy allows (None when suspended or unset).
    pub allowed_repair: Option<F::Level>,
    pub policy: Option<Policy<F::Level>>,
    /// Where the effective policy came from, e.g. `group/default`; `none` when nothing is set.
    pub policy_source: Text,
    pub pending: Vec<RepairView<F>>,
    pub history: Vec<HistoryEntry<F>>,
    /// The reasoning, in order.
    pub notes: Vec<Text>,
    pub actions: Vec<Action<F>>,
    /// Where it lives and runs, as the family tells.
    #[serde(flatten)]
    pub facts: F::Facts,
    /// The failure domain its repair belongs to: the down domain that breaks it, or (for a
    /// repair still running on a healthy-looking target) its home.
    pub domain: Option<Text>,
    /// What this pass does for the target.
    pub next: Next<F>,
    /// Why this pass does not (fully) repair it, when something holds it back.
    pub blocked: Option<Blocked<F>>,
}

impl<F: Family> TargetPlan<F> {
    pub fn object(&self) -> ObjectRef {
        ObjectRef::new(F::WORDS.target, self.name.clone())
    }
}

/// What a pass does for one target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "do", rename_all = "kebab-case", bound = "")]
pub enum Next<F: Family> {
    Nothing,
    /// Start a repair: a new one, or a once-off request served.
    Start {
        repair: F::Level,
        id: String,
    },
    /// Submit the rest of a repair under way (after a crash, or a retry).
    Continue {
        repair: F::Level,
        id: String,
    },
    /// Only mark changes: record operations or a result, write enoperm, drop old results.
    #[serde(rename = "update-tags")]
    UpdateMarks,
    /// Held back: [`TargetPlan::blocked`] says why.
    Wait,
}

/// Why a target is held back, as data: `explain`, `status --json` and the simulator's oracle
/// read this instead of the explanation text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case", bound = "")]
pub enum Blocked<F: Family> {
    /// No policy on the target or any of its scopes: it is never touched.
    NoPolicy,
    /// The policy allows less than the target needs.
    NotAllowed {
        needs: F::Level,
        allowed: Option<F::Level>,
    },
    Suspended,
    /// A failure result parks it until a person clears it (with `retries` set: more
    /// failures in a row than retries).
    Parked,
    /// Its repair failed `failures` time(s) in a row; it is tried again at `at`, up to
    /// `retries` times in all (`[limits] retries`, `retry_backoff`).
    RetryWait {
        failures: u32,
        retries: u32,
        at: i64,
    },
    /// No automatic repair is safe or possible.
    NeedsPerson,
    /// A step failed for lack of resources: retried at `retry_at`, and given up
    /// `max_repair_age` after `since` (when the repair started).
    LacksResources {
        since: i64,
        retry_at: i64,
    },
    /// The operations cannot be built now (no usable domain, an operation the backend lacks).
    /// `since` is the start of the repair under way, if one is.
    CannotSubmit {
        since: Option<i64>,
    },
    /// Another repair of this target still runs, or is not yet judged.
    OtherRepair,
    /// A mass failure in its scope or the fleet: nothing is written or started.
    MassFailure {
        scope: Text,
        limit: &'static str,
    },
    /// All failure-domain slots (or the optional per-target cap) are taken.
    NoSlot {
        limit: &'static str,
    },
    /// A rate limit: its scope took as many failure domains under repair in the window as
    /// `limit` allows; `room_at` is when one more fits (`None`: never, the limit is 0).
    RateLimit {
        scope: Text,
        limit: &'static str,
        room_at: Option<i64>,
    },
    /// A mass failure in its scope may have ended less than `storm_cooldown` ago: no new
    /// repair starts there until `until`.
    Cooldown {
        scope: Text,
        until: i64,
    },
    /// This pass's write budget is spent; the next pass carries on.
    WriteBudget,
    /// Its name is not unique in the fleet data.
    DuplicateName,
    /// Its mark could not be written (too long).
    Unrecordable,
    /// An unreadable pending mark counts as a repair under way; an unreadable result parks it
    /// as a failure would (rule 11).
    Unreadable {
        mark: crate::marks::Governs,
    },
}

impl<F: Family> fmt::Display for Blocked<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocked::NoPolicy => f.write_str("no policy: never touched"),
            Blocked::NotAllowed { needs, allowed } => match allowed {
                Some(a) => write!(f, "needs {needs}, the policy allows up to {a}"),
                None => write!(f, "needs {needs}, the policy allows no repair"),
            },
            Blocked::Suspended => f.write_str("suspended"),
            Blocked::Parked => f.write_str("parked by a failure until cleared"),
            Blocked::RetryWait {
                failures,
                retries,
                at,
            } => write!(
                f,
                "failed {failures} time(s) in a row: retry {failures} of {retries} at {}",
                rfc3339(*at)
            ),
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
            Blocked::RateLimit {
                scope,
                limit,
                room_at,
            } => match room_at {
                Some(at) => write!(
                    f,
                    "repair rate of {scope} spent ({limit}): room again at {}",
                    rfc3339(*at)
                ),
                None => write!(f, "repair rate of {scope} is 0 ({limit})"),
            },
            Blocked::Cooldown { scope, until } => write!(
                f,
                "cool-down after a mass failure in {scope} (storm_cooldown): no new repair until {}",
                rfc3339(*until)
            ),
            Blocked::WriteBudget => f.write_str("write budget of this pass spent"),
            Blocked::DuplicateName => f.write_str("duplicate name"),
            Blocked::Unrecordable => write!(f, "its {} cannot be written", F::Marks::NOUN),
            Blocked::Unreadable { mark } => {
                write!(f, "held by an unreadable {mark} {}", F::Marks::NOUN)
            }
        }
    }
}

/// A fleet-wide or scope-wide limit that tripped: nothing is written or started under it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Halt {
    /// The fleet's scope (`cluster`) or `KIND/NAME`.
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

/// A scope's cool-down after a mass failure (rule 13): as many failure domains may have been
/// down there at once, within `storm_cooldown`, as a mass-failure limit halts at. Repairs
/// under way go on; no new one starts until `until`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cooldown {
    /// The fleet's scope (`cluster`) or `KIND/NAME`.
    pub scope: Text,
    /// The mass-failure limit whose storm it follows.
    pub limit: &'static str,
    pub until: i64,
    pub message: String,
    #[serde(skip)]
    held_note: Text,
}

impl fmt::Display for Cooldown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A failure domain that is down, as the plan shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DownNode {
    pub name: String,
    pub group: String,
    pub state: &'static str,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FleetSummary {
    /// Targets that need a repair (or a person) right now.
    pub broken: usize,
    /// Repairs under way before this pass started anything.
    pub active_repairs: usize,
    pub started: usize,
    /// The failure domains that are down.
    pub down_nodes: Vec<DownNode>,
    /// Failure domains with repairs under way after this pass's starts.
    pub domains_under_repair: Vec<String>,
    /// Why nothing is written or started fleet-wide, when a limit tripped.
    pub halted: Option<Halt>,
    /// Scopes where nothing is written or started (mass failure there).
    pub halted_groups: Vec<Halt>,
    /// Writes (mark changes and operations) this pass makes.
    pub writes: usize,
    /// Targets whose changes wait for the next pass: the write budget was spent.
    pub deferred: usize,
    /// The rate windows, where a rate limit is set: the fleet's, then each scope's that
    /// counted a domain or held a repair back.
    pub rates: Vec<RateReport>,
    /// Scopes in a storm's cool-down (`storm_cooldown`): the fleet's first, then by scope.
    pub cooldowns: Vec<Cooldown>,
}

/// One scope's rate window after this pass's starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RateReport {
    /// `cluster`, or the scope's object (`group/ams-b`).
    pub scope: Text,
    pub limit: &'static str,
    /// The limit as configured, against the scope (`2/1h`, `5%/1h (2 of 40)`).
    pub rate: String,
    pub window_seconds: i64,
    /// Domains newly taken under repair in the window, and the most it allows.
    pub used: usize,
    pub max: usize,
    /// When one more domain fits, if none does now.
    pub room_at: Option<i64>,
    /// The domains counted, oldest first, with their starts.
    pub domains: String,
}

impl FleetSummary {
    /// The halt that holds the scope a [`Blocked::MassFailure`] names: which limit, its value
    /// and how many were counted, in its message.
    pub fn halt(&self, scope: &str) -> Option<&Halt> {
        self.halted
            .iter()
            .chain(&self.halted_groups)
            .find(|h| h.scope.as_ref() == scope)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(bound = "")]
pub struct Plan<F: Family> {
    pub now: i64,
    pub targets: Vec<TargetPlan<F>>,
    /// Mark changes on scopes (expired suspends).
    pub scope_actions: Vec<Action<F>>,
    pub lint: Vec<Lint>,
    pub fleet: FleetSummary,
    pub counts: BTreeMap<State, usize>,
}

impl<F: Family> Plan<F> {
    pub fn actions(&self) -> impl Iterator<Item = &Action<F>> {
        self.scope_actions
            .iter()
            .chain(self.targets.iter().flat_map(|t| t.actions.iter()))
    }

    /// The earliest moment after `now` at which something held back by time may go: a retry's
    /// back-off, a rate window's room, a storm's cool-down, a retry for lack of resources. A daemon wakes then
    /// rather than at its next resync.
    pub fn next_due(&self) -> Option<i64> {
        self.targets
            .iter()
            .filter_map(|t| match t.blocked.as_ref()? {
                Blocked::RetryWait { at, .. } => Some(*at),
                Blocked::RateLimit { room_at, .. } => *room_at,
                Blocked::Cooldown { until, .. } => Some(*until),
                Blocked::LacksResources { retry_at, .. } => Some(*retry_at),
                _ => None,
            })
            .filter(|at| *at > self.now)
            .min()
    }

    pub fn target(&self, name: &str) -> Option<&TargetPlan<F>> {
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
        self.uuid(target, purpose).to_string()
    }

    fn uuid(&self, target: &str, purpose: &str) -> uuid::Uuid {
        let name = format!("{}:{}:{target}:{purpose}", self.seed, self.now);
        uuid::Uuid::new_v5(&Self::NAMESPACE, name.as_bytes())
    }

    /// The id of a repair starting now in failure `domain`: it records both, for the rate
    /// windows of later passes ([`rate::make_id`]).
    fn start(&self, target: &str, domain: &str) -> String {
        let b = self.uuid(target, "repair").into_bytes();
        rate::make_id(self.now, domain, [b[0], b[1], b[2], b[3], b[14], b[15]])
    }
}

/// Plans one pass. `seed` only feeds the repair ids.
pub fn plan<F: Family>(
    snap: &F::Snapshot,
    settings: &F::Settings,
    now: i64,
    limits: &Limits,
    seed: u64,
) -> Plan<F> {
    let mut lint = Vec::new();
    let index = Index::<F>::build(snap, settings, now, &mut lint);
    let ids = IdMaker { seed, now };
    // Expired suspends on scopes, with the limiter scope they fall under (None: the fleet).
    let mut scope_writes: Vec<(Option<&str>, Action<F>)> = Vec::new();
    for (halt_key, object, marks) in index.scope_holders() {
        if let Some(a) = expire_suspends::<F>(object, marks, now) {
            scope_writes.push((halt_key, a));
        }
    }

    let ctx = target::Ctx {
        index: &index,
        limits,
        now,
        ids: &ids,
    };
    // The plans stay where they are built: they are large, and moving 100k of them costs.
    let (mut plans, mut evals): (Vec<TargetPlan<F>>, Vec<target::TargetEval<F>>) = F::targets(snap)
        .iter()
        .map(|t| ctx.target(t, &mut lint))
        .unzip();
    let broken = evals.iter().filter(|e| e.broken).count();
    let active = evals.iter().filter(|e| e.active).count();
    let limiter = Limiter::new(
        &index,
        limits,
        broken,
        evals.iter().map(|e| (e.halt_key, e.home)),
        now,
    );

    // Mass failures first: a held target writes only the bookkeeping of repairs under way.
    for (e, plan) in evals.iter_mut().zip(&mut plans) {
        if let Some(halt) = limiter.halt_for(e.halt_key) {
            hold(e, plan, halt);
        }
    }
    scope_writes.retain(|(key, _)| limiter.halt_for(*key).is_none());

    let mut rates = limiter::Rates::new(&index, &limiter, &evals, limits, now);
    let mut granted = grant_slots(
        &mut evals,
        &mut plans,
        limits,
        active,
        &limiter,
        rates.as_mut(),
    );

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
            plan.domain = e.domain.map(|d| F::domain_text(&index.family, d));
        } else if let Some(d) = e.domain.filter(|_| e.broken) {
            plan.domain = Some(F::domain_text(&index.family, d));
        }
        if admitted && !e.adds.is_empty() {
            plan.actions.push(Action::AddMarks {
                object: plan.object(),
                marks: e.adds.iter().map(|w| w.mark.clone()).collect(),
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
            plan.actions.push(Action::RemoveMarks {
                object: plan.object(),
                marks: e.removes.iter().map(|w| w.mark.clone()).collect(),
                reason: reasons(&e.removes),
            });
        }
        if plan.next == Next::Nothing {
            if !plan.actions.is_empty() {
                plan.next = Next::UpdateMarks;
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
    let mut scope_actions: Vec<Action<F>> = scope_writes.into_iter().map(|(_, a)| a).collect();
    let fleet = FleetSummary {
        broken,
        active_repairs: active,
        started,
        down_nodes: limiter.down,
        domains_under_repair,
        halted: limiter.fleet,
        halted_groups: {
            let mut halts: Vec<Halt> = limiter.scopes.into_values().collect();
            halts.sort_by(|a, b| a.scope.cmp(&b.scope));
            halts
        },
        writes: spent,
        deferred,
        rates: rates.map(|r| r.reports()).unwrap_or_default(),
        cooldowns: limiter.cooldowns.into_reports(),
    };
    let mut progress = F::progress(&index.family, now);
    progress.extend(F::reports(&index.family, &plans, &fleet));
    attach_progress(progress, &mut plans, &mut scope_actions);
    Plan {
        now,
        targets: plans,
        scope_actions,
        lint,
        fleet,
        counts,
    }
}

/// Puts the family's own operations' work first in its target's actions (a target that only
/// has that to do shows it as mark work: `update-tags`), or among the scope actions when no
/// target is named.
fn attach_progress<F: Family>(
    progress: Vec<super::family::Progress<F>>,
    plans: &mut [TargetPlan<F>],
    scope_actions: &mut Vec<Action<F>>,
) {
    if progress.is_empty() {
        return;
    }
    let by_name: std::collections::HashMap<&str, usize> = plans
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), i))
        .collect();
    let mut per_target: Vec<Vec<Action<F>>> = vec![Vec::new(); plans.len()];
    for p in progress {
        let action = Action::Advance {
            object: p.object,
            op: p.op,
            reason: p.reason,
        };
        match p.target.as_deref().and_then(|t| by_name.get(t)) {
            Some(&i) => per_target[i].push(action),
            None => scope_actions.push(action),
        }
    }
    for (plan, mut work) in plans.iter_mut().zip(per_target) {
        if work.is_empty() {
            continue;
        }
        plan.notes.extend(
            work.iter()
                .map(|a| Text::Owned(format!("carries on its operation: {a}"))),
        );
        work.append(&mut plan.actions);
        plan.actions = work;
        if matches!(plan.next, Next::Nothing | Next::Wait) {
            plan.next = Next::UpdateMarks;
        }
    }
}

/// The distinct reasons of a batch of mark writes, in order.
fn reasons(list: &[Write]) -> String {
    let mut whys: Vec<&str> = Vec::new();
    for w in list {
        if !whys.contains(&w.why.as_str()) {
            whys.push(&w.why);
        }
    }
    whys.join("; ")
}

fn expire_suspends<F: Family>(object: &ObjectRef, marks: &[String], now: i64) -> Option<Action<F>> {
    use super::marks::Mark;
    let expired: Vec<String> = marks
        .iter()
        .filter(
            |t| matches!(F::Marks::parse(t), Ok(Mark::Suspend { until: Some(u), .. }) if u <= now),
        )
        .cloned()
        .collect();
    (!expired.is_empty()).then(|| Action::RemoveMarks {
        object: object.clone(),
        marks: expired,
        reason: "timed suspend is over".into(),
    })
}

#[cfg(test)]
mod tests;
