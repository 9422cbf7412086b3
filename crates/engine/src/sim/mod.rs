//! The chaos simulator, the same for every family: many passes over an in-memory world while
//! failure domains go down, operations fail or lack resources, the watcher is killed between
//! backend calls and admins edit marks. After every pass an oracle (`oracle.rs`), written
//! independently of the planner, checks the safety rules of the design; at the end it checks
//! that every repairable target was repaired once the faults stopped. A violation comes with
//! its seed and a minimised event history.
//!
//! A family takes part by implementing [`World`]: its fleet as an in-memory backend, its own
//! faults, one pass of its world's time, and the facts the oracle reads from a snapshot (which
//! targets are broken and what they need, failure domains, operations). The kills, the admin
//! edits (over the family's ladder) and the checks are the engine's.

mod admin;
mod oracle;
mod replicas;
#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod toy;

use super::backend::{Backend, Dying, Intercepted, Interceptor, Write};
use super::exec;
use super::family::{Family, Health};
use super::limits::Limits;
use super::marks::{Codec, Mark, RepairResult};
use super::object::ObjectRef;
use super::plan::Plan;
use rand::{Rng as _, SeedableRng};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

pub use admin::{AdminEdit, Damage, apply as admin_edit};
pub use oracle::{object_policy, policy};
pub use replicas::{Coordination, PAUSE_SECONDS, Replicas, TAKEOVER_SECONDS, WRITE_SECONDS};

/// Seconds between passes (cron every 5 minutes).
pub const PASS_SECONDS: i64 = 300;

/// The clock at which the worlds' fixtures and tests start (2027-01-15).
pub const START: i64 = 1_800_000_000;

/// The random source of every scenario: seeded, portable, the same on every machine.
pub type Rng = rand_chacha::ChaCha8Rng;

/// A policy a generated fleet gives an object ([`draw_policy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrawnPolicy<L> {
    /// A suspend: permanent, or until the time given.
    Suspend(Option<i64>),
    Allow(L),
}

/// With odds `suspend` a suspend (half of them timed, ending within 20 passes of [`START`]),
/// else with odds `allow` a policy of one of `levels`, else nothing. The worlds' generators
/// spread policies over their objects with it.
pub fn draw_policy<L: Copy>(
    rng: &mut Rng,
    suspend: f64,
    allow: f64,
    levels: &[L],
) -> Option<DrawnPolicy<L>> {
    let roll: f64 = rng.random();
    if roll < suspend {
        let until = (!rng.random_bool(0.5)).then(|| START + rng.random_range(1..20) * PASS_SECONDS);
        Some(DrawnPolicy::Suspend(until))
    } else if roll < suspend + allow {
        Some(DrawnPolicy::Allow(
            levels[rng.random_range(0..levels.len())],
        ))
    } else {
        None
    }
}

/// A repair id for a generated fleet's marks.
pub fn draw_uuid(rng: &mut Rng) -> String {
    uuid::Uuid::from_u128(rng.random()).to_string()
}

/// A world's ladder.
pub type LevelOf<W> = <<W as World>::Family as Family>::Level;
/// One event of a world's scenarios.
pub type EventOf<W> = Event<<W as World>::Fault, LevelOf<W>>;
/// A world's scenario.
pub type ScheduleOf<W> = Schedule<<W as World>::Fault, LevelOf<W>>;

/// The planner under test, with its limits and family settings bound: the fleet as the
/// watcher read it, the clock and the seed of the pass. The oracle checks it against
/// [`SimConfig::limits`], so the planner must plan with those.
pub type Planner<'p, W> = &'p dyn Fn(&<W as World>::Fleet, i64, u64) -> Plan<<W as World>::Family>;

/// A family's fleet as a world the simulator drives: a backend the watcher acts on, faults that
/// happen to it, and time that passes. The last group of functions are the oracle's facts: the
/// family reads them from a snapshot with code of its own, not the planner's, so that a planner
/// bug is not repeated in the check (its health table may be shared; policy, suspends,
/// permissions and limits the oracle derives itself from the raw marks).
pub trait World: Sized {
    type Family: Family<Snapshot = Self::Fleet>;
    /// The family's snapshot: the oracle compares the world before and after each pass.
    type Fleet: Clone;
    /// The backend the watcher acts through in this world (often the world itself).
    type Backend: Backend<Self::Family>;
    /// One of the family's faults: a domain goes down or comes back, an operation will fail.
    type Fault: Clone + fmt::Debug + fmt::Display + PartialEq + Eq + Serialize;
    /// How often each fault happens, per pass.
    type Rates: Clone + fmt::Debug + Default;
    /// What drawing faults remembers from pass to pass (a flapping domain comes back).
    type Chaos;
    /// What the world is built with besides the fleet: the family settings it plays and judges
    /// by, when they are not fixed by the world (`()` otherwise). The default is the world's own.
    type Setup: Default;

    /// A world holding this fleet, with nothing scripted yet, its clock at `start`.
    fn new(fleet: &Self::Fleet, setup: &Self::Setup, start: i64) -> Self;
    /// A synthetic fleet of about `targets` targets, deterministic by seed, with marks of every
    /// kind (policies, suspends, foreign marks) on targets and scopes.
    fn generate(targets: usize, seed: u64) -> Self::Fleet;
    fn fleet(&self) -> &Self::Fleet;
    fn backend(&mut self) -> &mut Self::Backend;

    /// Starts drawing faults for one scenario over `fleet`.
    fn chaos(fleet: &Self::Fleet, rates: &Self::Rates) -> Self::Chaos;
    /// The family's faults before one pass. Draws from `rng` in a fixed order, so that a seed
    /// always gives the same scenario.
    fn draw(chaos: &mut Self::Chaos, rng: &mut Rng) -> Vec<Self::Fault>;
    fn apply(&mut self, fault: &Self::Fault, now: i64);
    /// One pass of the world's time: operations move on and, when they end, take effect.
    fn advance(&mut self, now: i64);

    /// Whether the target is broken and the level its repair needs, at `now` (a family may
    /// judge how long a symptom has lasted).
    fn health(
        &self,
        fleet: &Self::Fleet,
        target: &TargetOf<Self>,
        now: i64,
    ) -> Health<LevelOf<Self>>;
    /// A standing request from outside the marks that allows repairs up to a level on this
    /// target alone (another system's annotation asking for a repair), as the family's
    /// assessment grants it. Suspends and failures still hold it back.
    fn granted(_fleet: &Self::Fleet, _target: &TargetOf<Self>) -> Option<LevelOf<Self>> {
        None
    }
    /// The failure domain a repair of the target belongs to (the down domain that breaks it,
    /// else where it runs).
    fn domain<'f>(fleet: &'f Self::Fleet, target: &'f TargetOf<Self>) -> &'f str;
    /// The scope whose down domains count for a mass failure that holds the target.
    fn limit_scope<'f>(fleet: &'f Self::Fleet, target: &'f TargetOf<Self>) -> Option<&'f str>;
    /// The failure domains that are down at `now`, with the scope each counts in.
    fn down_domains(fleet: &Self::Fleet, now: i64) -> Vec<DownFact<'_>>;
    /// For each failure domain the world can fail, the fault that takes it down and the one
    /// that brings it back: what a slow burn ([`slow_burn`]) is made of. None by default.
    fn domain_faults(_fleet: &Self::Fleet) -> Vec<(Self::Fault, Self::Fault)> {
        Vec::new()
    }
    /// The down domains whose return the fleet records a time for: the storm cool-down's
    /// oracle counts a storm in these (rule 13). By default every down domain; a world leaves
    /// out a domain whose return no object of the fleet dates, as its family documents.
    fn storm_domains(fleet: &Self::Fleet, now: i64) -> Vec<DownFact<'_>> {
        Self::down_domains(fleet, now)
    }
    /// The marks of the target's scopes, nearest first (the target's own are not included).
    fn scope_marks<'f>(fleet: &'f Self::Fleet, target: &'f TargetOf<Self>) -> Vec<&'f [String]>;
    /// Every operation the world knows, as it stands at `now` (a family may judge an
    /// operation it runs itself by how long it has taken).
    fn ops(fleet: &Self::Fleet, now: i64) -> Vec<OpFact<'_, Self::Family>>;
    /// The least level whose repairs may run this operation.
    fn level_of(op: &<Self::Family as Family>::Op) -> LevelOf<Self>;
    /// Every object that carries marks, by a key unique in the fleet (even where names repeat):
    /// by default the family's mark holders and its targets, each target keyed by its position
    /// too. A world whose family leaves a marked object out of its holders names it here.
    fn marked_objects(fleet: &Self::Fleet) -> Vec<(String, &[String])> {
        type Fam<W> = <W as World>::Family;
        let mut out: Vec<(String, &[String])> = Fam::<Self>::holders(fleet)
            .into_iter()
            .map(|h| (h.object.to_string(), h.marks))
            .collect();
        let kind = Fam::<Self>::WORDS.target;
        out.extend(
            Fam::<Self>::targets(fleet)
                .iter()
                .enumerate()
                .map(|(k, t)| {
                    let name = Fam::<Self>::name(t);
                    (format!("{kind}/{name}#{k}"), Fam::<Self>::marks(t))
                }),
        );
        out
    }

    /// The family's own safety rules, checked after every pass once the engine's hold:
    /// `before` is the fleet the watcher read, [`World::fleet`] the world right after it acted
    /// (before time passed), `calls` what it did. The world may remember what it needs across
    /// passes (when the watcher powered what off). Returns the rule broken and the details.
    fn check_pass(
        &mut self,
        _before: &Self::Fleet,
        _calls: &CallLog<Self::Family>,
        _now: i64,
    ) -> Result<(), (String, String)> {
        Ok(())
    }
    /// The family's own rules once the quiet passes are over (what must have settled by then).
    fn check_end(&self, _now: i64) -> Result<(), (String, String)> {
        Ok(())
    }
    /// Counts of what happened in the world during a run, added to [`Stats::world`] so that
    /// tests can show the scenarios exercise what the family's rules are about.
    fn tally(&self) -> Vec<(&'static str, usize)> {
        Vec::new()
    }
    /// The model of the coordination the family's replicas use, for `replicas` of them
    /// ([`Replicas`]) from `start` on; `None`: the world knows none, and one watcher acts.
    fn coordination(
        _setup: &Self::Setup,
        _replicas: usize,
        _start: i64,
    ) -> Option<Box<dyn Coordination>> {
        None
    }
}

/// A world's target.
pub type TargetOf<W> = <<W as World>::Family as Family>::Target;

/// A down failure domain, as the oracle counts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DownFact<'f> {
    pub domain: &'f str,
    /// The scope it counts in for `max_down_nodes_per_group`.
    pub scope: &'f str,
}

/// An operation, as the oracle sees it.
#[derive(Clone, Debug)]
pub struct OpFact<'f, F: Family> {
    pub id: F::OpId,
    /// The repair id its reason carries.
    pub repair: Option<&'f str>,
    pub target: Option<&'f str>,
    pub step: Option<F::Step>,
    pub run: OpRun,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpRun {
    Running,
    /// Unfinished, held where it stands by a suspend of its target (a repair whose steps the
    /// watcher drives itself): still the target's one repair, but it holds no slot.
    Paused,
    Succeeded,
    /// Ended without success (failed, canceled, lacked resources).
    Failed,
    /// The world has no status for it.
    Unknown,
}

/// How often each fault happens per pass: the world's own (`world`), and the engine's.
#[derive(Clone, Debug)]
pub struct Faults<R> {
    pub world: R,
    /// The (acting) watcher is killed mid-pass.
    pub kill: f64,
    pub admin_edit: f64,
    /// Someone writes a mark of ours that cannot be read (an unreadable suspend, pending mark
    /// or policy), on a target or a scope.
    pub damage: f64,
    /// With replicas: the acting one is paused mid-pass for longer than its lease.
    pub pause: f64,
    /// With replicas: the acting one is cut off from the coordination mid-pass.
    pub partition: f64,
    /// With replicas: the acting one hands over cleanly before the pass (SIGTERM, a master
    /// failover).
    pub handover: f64,
}

impl<R: Default> Default for Faults<R> {
    fn default() -> Self {
        Faults {
            world: R::default(),
            kill: 0.2,
            admin_edit: 0.2,
            damage: 0.05,
            pause: 0.0,
            partition: 0.0,
            handover: 0.0,
        }
    }
}

impl<R> Faults<R> {
    /// These faults and those of replicas: pauses, partitions and handovers of the acting one.
    pub fn with_replicas(self) -> Self {
        Faults {
            pause: 0.1,
            partition: 0.1,
            handover: 0.1,
            ..self
        }
    }
}

/// One thing that happens before a pass.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Event<X, L> {
    /// One of the family's faults.
    Fault(X),
    /// The watcher dies after this many backend calls in this pass.
    Kill(usize),
    /// The acting replica is paused ([`PAUSE_SECONDS`]) after this many write attempts.
    Pause(usize),
    /// The acting replica is cut off from the coordination after `after` write attempts, and
    /// its next write comes `stall` seconds later (a slow call).
    Partition {
        after: usize,
        stall: i64,
    },
    /// The acting replica hands over before the pass.
    Handover,
    Admin(ObjectRef, AdminEdit<L>),
}

impl<X: fmt::Display, L: fmt::Debug> fmt::Display for Event<X, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Fault(x) => x.fmt(f),
            Event::Kill(n) => write!(f, "the watcher is killed after {n} backend calls"),
            Event::Pause(n) => write!(
                f,
                "the acting replica is paused for {PAUSE_SECONDS} s after {n} write attempts"
            ),
            Event::Partition { after, stall } => write!(
                f,
                "the acting replica is cut off from the coordination after {after} write attempts, its next write {stall} s later"
            ),
            Event::Handover => write!(f, "the acting replica hands over before the pass"),
            Event::Admin(o, e) => write!(f, "admin on {o}: {e:?}"),
        }
    }
}

/// Events per pass of the fault phase; the quiet phase that follows has none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Schedule<X, L> {
    pub passes: Vec<Vec<Event<X, L>>>,
}

impl<X, L> Default for Schedule<X, L> {
    fn default() -> Self {
        Schedule { passes: Vec::new() }
    }
}

#[derive(Clone, Debug)]
pub struct SimConfig {
    /// The limits the planner under test plans with, and the oracle checks.
    pub limits: Limits,
    pub start: i64,
    /// Passes without faults after the schedule, within which every repairable target must be
    /// repaired (or given up on with a failure).
    pub quiet_passes: u32,
    /// How many watchers run against the fleet.
    pub replicas: Replicas,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// Which rule (short name, in the family's words).
    pub rule: String,
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
    /// Passes whose plan held new repairs somewhere for a storm's cool-down.
    pub cooldown_passes: usize,
    /// Passes whose plan held a repair back for a rate window.
    pub rate_held_passes: usize,
    /// Repairs a plan started a level above what their target needed (`escalate`).
    pub escalations: usize,
    /// With replicas: passes another replica made after the acting one was killed, paused,
    /// cut off or handed over.
    pub takeovers: usize,
    pub pauses: usize,
    pub partitions: usize,
    pub handovers: usize,
    /// Writes a replica's check refused: it no longer led.
    pub refused_writes: usize,
    /// The world's own counts ([`World::tally`]).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub world: BTreeMap<&'static str, usize>,
}

impl Stats {
    /// Adds another run's counts, for a test that sums several explorations.
    pub fn add(&mut self, o: &Stats) {
        self.passes += o.passes;
        self.jobs_submitted += o.jobs_submitted;
        self.kills += o.kills;
        self.repairs_succeeded += o.repairs_succeeded;
        self.repairs_failed += o.repairs_failed;
        self.halted_passes += o.halted_passes;
        self.cooldown_passes += o.cooldown_passes;
        self.rate_held_passes += o.rate_held_passes;
        self.escalations += o.escalations;
        self.takeovers += o.takeovers;
        self.pauses += o.pauses;
        self.partitions += o.partitions;
        self.handovers += o.handovers;
        self.refused_writes += o.refused_writes;
        for (k, n) in &o.world {
            *self.world.entry(k).or_default() += n;
        }
    }

    /// One of the world's counts, 0 when it never happened.
    pub fn world(&self, what: &str) -> usize {
        self.world.get(what).copied().unwrap_or(0)
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub stats: Stats,
    pub violation: Option<Violation>,
    /// Per pass: what happened before it and what the watcher did.
    pub log: Vec<Vec<String>>,
}

/// Draws a fault schedule for `fleet` from the seed: the family's faults, then an admin edit,
/// then a kill, pass by pass.
pub fn schedule<W: World>(
    fleet: &W::Fleet,
    passes: u32,
    seed: u64,
    faults: &Faults<W::Rates>,
) -> ScheduleOf<W> {
    let names = Names::<W>::of(fleet);
    let mut rng = Rng::seed_from_u64(seed);
    // Damaged marks are drawn from a stream of their own, so that every other event of a
    // seed's scenarios stays what it was before they were drawn at all.
    let mut damage_rng = Rng::seed_from_u64(seed ^ 0x6461_6d61_6765_6421);
    let mut chaos = W::chaos(fleet, &faults.world);
    let mut out = Schedule::default();
    for _ in 0..passes {
        let mut events: Vec<EventOf<W>> = W::draw(&mut chaos, &mut rng)
            .into_iter()
            .map(Event::Fault)
            .collect();
        if !names.targets.is_empty() && rng.random_bool(faults.admin_edit) {
            events.push(names.admin_edit(&mut rng));
        }
        if !names.targets.is_empty() && damage_rng.random_bool(faults.damage) {
            events.push(names.damage(&mut damage_rng));
        }
        if rng.random_bool(faults.kill) {
            events.push(Event::Kill(rng.random_range(0..8)));
        }
        // Drawn only when asked for, so that the scenarios of a seed without replicas stay
        // what they were.
        if faults.handover > 0.0 && rng.random_bool(faults.handover) {
            events.push(Event::Handover);
        }
        if faults.pause > 0.0 && rng.random_bool(faults.pause) {
            events.push(Event::Pause(rng.random_range(0..8)));
        }
        if faults.partition > 0.0 && rng.random_bool(faults.partition) {
            events.push(Event::Partition {
                after: rng.random_range(0..8),
                stall: rng.random_range(0..20),
            });
        }
        out.passes.push(events);
    }
    out
}

/// A slow burn (rule 13): one more failure domain fails every `every` passes, in an order the
/// seed shuffles, and comes back two periods later (a person fixed it), so that about two are
/// down at any moment and no limit of the moment need trip; one domain in three flaps, failing
/// again a period after each return. Repairs fail now and then (the world's own faults at
/// `faults`' rates, its domain faults left to the burn), so that retries and their back-offs
/// are reached too. Empty for a world without domain faults.
pub fn slow_burn<W: World>(
    fleet: &W::Fleet,
    passes: u32,
    every: u32,
    seed: u64,
    faults: &Faults<W::Rates>,
) -> ScheduleOf<W> {
    let mut domains = W::domain_faults(fleet);
    let mut rng = Rng::seed_from_u64(seed);
    // Fisher-Yates by the seed: the same seed, the same order.
    for i in (1..domains.len()).rev() {
        domains.swap(i, rng.random_range(0..=i));
    }
    let mut chaos = W::chaos(fleet, &faults.world);
    let mut out: ScheduleOf<W> = Schedule::default();
    let every = every.max(1) as usize;
    // Each domain's next turn: which, when, and whether it brings the domain back.
    let mut turns: Vec<(usize, usize, bool)> = Vec::new();
    for pass in 0..passes as usize {
        let mut events: Vec<EventOf<W>> = W::draw(&mut chaos, &mut rng)
            .into_iter()
            .filter(|f| !domains.iter().any(|(down, back)| f == down || f == back))
            .map(Event::Fault)
            .collect();
        if pass % every == 0 && pass / every < domains.len() {
            turns.push((pass / every, pass, false));
        }
        for (d, at, back) in &mut turns {
            if *at != pass {
                continue;
            }
            let (down_fault, back_fault) = &domains[*d];
            if *back {
                events.push(Event::Fault(back_fault.clone()));
                // A flapping domain fails again; the others are done.
                *at = if *d % 3 == 2 {
                    pass + every
                } else {
                    usize::MAX
                };
            } else {
                events.push(Event::Fault(down_fault.clone()));
                *at = pass + 2 * every;
            }
            *back = !*back;
        }
        out.passes.push(events);
    }
    out
}

/// What admin edits are drawn over: the targets' names and the scopes.
struct Names<W: World> {
    targets: Vec<String>,
    scopes: Vec<ObjectRef>,
    world: std::marker::PhantomData<W>,
}

impl<W: World> Names<W> {
    fn of(fleet: &W::Fleet) -> Self {
        use super::family::Role;
        Names {
            targets: <W::Family as Family>::targets(fleet)
                .iter()
                .map(|t| <W::Family as Family>::name(t).to_owned())
                .collect(),
            scopes: <W::Family as Family>::holders(fleet)
                .into_iter()
                .filter(|h| matches!(h.role, Role::Scope { .. }))
                .map(|h| h.object)
                .collect(),
            world: std::marker::PhantomData,
        }
    }

    fn target(&self, rng: &mut Rng) -> ObjectRef {
        let name = &self.targets[rng.random_range(0..self.targets.len())];
        ObjectRef::new(<W::Family as Family>::WORDS.target, name.clone())
    }

    /// An unreadable suspend or policy on a target or a scope, or an unreadable pending mark
    /// on a target.
    fn damage(&self, rng: &mut Rng) -> EventOf<W> {
        let kind = [Damage::Suspend, Damage::Pending, Damage::Policy][rng.random_range(0..3)];
        let object = if kind != Damage::Pending && !self.scopes.is_empty() && rng.random_bool(0.5) {
            self.scopes[rng.random_range(0..self.scopes.len())].clone()
        } else {
            self.target(rng)
        };
        Event::Admin(object, AdminEdit::Damage(kind))
    }

    /// Any verb, with any level of the ladder; suspends and policies on targets or scopes,
    /// requests and clears on targets.
    fn admin_edit(&self, rng: &mut Rng) -> EventOf<W> {
        use super::marks::Level;
        let ladder = LevelOf::<W>::LADDER;
        let level = ladder[rng.random_range(0..ladder.len())];
        let edit = match rng.random_range(0..6) {
            0 => AdminEdit::Suspend {
                for_passes: rng.random_bool(0.5).then(|| rng.random_range(1..10)),
            },
            1 => AdminEdit::Resume,
            2 => AdminEdit::Allow(rng.random_bool(0.8).then_some(level)),
            3 => AdminEdit::Clear,
            _ => AdminEdit::Request(level),
        };
        let object = match edit {
            AdminEdit::Clear | AdminEdit::Request(_) => self.target(rng),
            _ if !self.scopes.is_empty() && rng.random_bool(0.5) => {
                self.scopes[rng.random_range(0..self.scopes.len())].clone()
            }
            _ => self.target(rng),
        };
        Event::Admin(object, edit)
    }
}

/// What the watcher did during one pass, as seen by the backend: only the calls that reached
/// the world.
pub struct CallLog<F: Family> {
    pub added: Vec<(ObjectRef, String)>,
    pub removed: Vec<(ObjectRef, String)>,
    pub submitted: Vec<Submission<F>>,
    /// Work on operations the watcher runs itself ([`Backend::advance`]).
    pub advanced: Vec<Advance<F>>,
    /// The watcher was killed during the pass: it did not get to everything it planned.
    pub crashed: bool,
}

impl<F: Family> Default for CallLog<F> {
    fn default() -> Self {
        CallLog {
            added: Vec::new(),
            removed: Vec::new(),
            submitted: Vec::new(),
            advanced: Vec::new(),
            crashed: false,
        }
    }
}

/// An operation the watcher submitted.
pub struct Submission<F: Family> {
    pub target: String,
    pub op: F::Op,
    pub reason: String,
    pub id: F::OpId,
}

/// Work the watcher did on an operation it runs itself.
pub struct Advance<F: Family> {
    pub object: ObjectRef,
    pub op: F::Op,
    pub reason: String,
}

/// The log notes a write once it was made: one the kill refused never reached the world.
impl<F: Family> Interceptor<F> for CallLog<F> {
    fn after(&mut self, write: &Write<'_, F>, id: Option<&F::OpId>) {
        match (write, id) {
            (Write::AddMarks { object, marks, .. }, _) => self
                .added
                .extend(marks.iter().map(|m| ((*object).clone(), m.clone()))),
            (Write::RemoveMarks { object, marks, .. }, _) => self
                .removed
                .extend(marks.iter().map(|m| ((*object).clone(), m.clone()))),
            (
                Write::Submit {
                    target, op, reason, ..
                },
                Some(id),
            ) => self.submitted.push(Submission {
                target: (*target).to_owned(),
                op: (*op).clone(),
                reason: (*reason).to_owned(),
                id: id.clone(),
            }),
            (Write::Submit { .. }, None) => {}
            (Write::Advance { object, op, reason }, _) => self.advanced.push(Advance {
                object: (*object).clone(),
                op: (*op).clone(),
                reason: (*reason).to_owned(),
            }),
        }
    }
}

/// Runs the schedule, then quiet passes, checking every pass; stops at the first violation.
/// The world is built with its own settings ([`World::Setup`]'s default).
pub fn run<W: World>(
    fleet: &W::Fleet,
    schedule: &ScheduleOf<W>,
    cfg: &SimConfig,
    planner: Planner<'_, W>,
) -> Outcome {
    run_with::<W>(fleet, &W::Setup::default(), schedule, cfg, planner)
}

/// [`run`], the world built with `setup`: the settings the planner under test plans with.
pub fn run_with<W: World>(
    fleet: &W::Fleet,
    setup: &W::Setup,
    schedule: &ScheduleOf<W>,
    cfg: &SimConfig,
    planner: Planner<'_, W>,
) -> Outcome {
    let mut world = W::new(fleet, setup, cfg.start);
    let mut coord = if cfg.replicas.count > 1 {
        W::coordination(setup, cfg.replicas.count, cfg.start)
    } else {
        None
    };
    let mut clock = cfg.start;
    let mut stats = Stats::default();
    let mut storms = oracle::Storms::default();
    let mut log = Vec::new();
    let total = schedule.passes.len() + cfg.quiet_passes as usize;
    for pass in 0..total {
        let now = cfg.start + pass as i64 * PASS_SECONDS;
        let mut lines = Vec::new();
        let mut mishaps = PassMishaps::default();
        for e in schedule.passes.get(pass).into_iter().flatten() {
            lines.push(e.to_string());
            match e {
                Event::Fault(x) => world.apply(x, now),
                Event::Kill(n) => mishaps.kill = Some(*n),
                Event::Pause(n) => mishaps.mid.pause = Some(*n),
                Event::Partition { after, stall } => {
                    mishaps.mid.partition = Some((*after, *stall));
                }
                Event::Handover => mishaps.handover = true,
                Event::Admin(object, edit) => admin::apply(&mut world, object, edit, now),
            }
        }
        storms.observe::<W>(world.fleet(), &cfg.limits, now);
        let mut stage = Stage {
            planner,
            cfg,
            pass,
            now,
            stats: &mut stats,
            lines: &mut lines,
            storms: &storms,
        };
        let checked = match coord.as_deref_mut() {
            None => stage.single(&mut world, mishaps.kill),
            Some(c) => {
                clock = clock.max(now);
                stage.replicated(&mut world, c, &mut clock, mishaps)
            }
        };
        stats.passes += 1;
        log.push(lines);
        if let Err((rule, detail)) = checked {
            stats.world = world.tally().into_iter().collect();
            return Outcome {
                stats,
                violation: Some(Violation { rule, pass, detail }),
                log,
            };
        }
        world.advance(now);
    }
    let violation = if total > 0 {
        oracle::liveness::<W>(&world, cfg, planner, total)
    } else {
        None
    };
    stats.world = world.tally().into_iter().collect();
    Outcome {
        stats,
        violation,
        log,
    }
}

/// What befalls the watchers in one pass.
#[derive(Default)]
struct PassMishaps {
    kill: Option<usize>,
    handover: bool,
    mid: replicas::Mishaps,
}

/// A plan one replica made, kept for its pass to resume after a pause.
struct Planned<W: World> {
    before: W::Fleet,
    plan: Plan<W::Family>,
}

/// What one replica's stretch of writing came to.
struct Stretch<F: Family> {
    crashed: bool,
    paused: bool,
    partitioned: bool,
    made: Vec<Result<Option<F::OpId>, String>>,
}

/// One pass of the world: the watchers act, the oracle checks each one's writes.
struct Stage<'s, 'p, W: World> {
    planner: Planner<'p, W>,
    cfg: &'s SimConfig,
    pass: usize,
    now: i64,
    stats: &'s mut Stats,
    lines: &'s mut Vec<String>,
    /// The storms the world went through so far, for the cool-down's rule.
    storms: &'s oracle::Storms,
}

impl<W: World> Stage<'_, '_, W> {
    fn plan(&mut self, world: &W) -> Planned<W> {
        let before = world.fleet().clone();
        let plan = (self.planner)(&before, self.now, self.pass as u64);
        if plan.fleet.halted.is_some() {
            self.stats.halted_passes += 1;
        }
        if !plan.fleet.cooldowns.is_empty() {
            self.stats.cooldown_passes += 1;
        }
        let held_by_rate = |t: &crate::plan::TargetPlan<W::Family>| {
            matches!(t.blocked, Some(crate::plan::Blocked::RateLimit { .. }))
        };
        if plan.targets.iter().any(held_by_rate) {
            self.stats.rate_held_passes += 1;
        }
        self.stats.escalations += plan
            .targets
            .iter()
            .filter(|t| matches!(t.next, crate::plan::Next::Start { .. }))
            .filter(|t| t.notes.iter().any(|n| n.contains("escalated to")))
            .count();
        Planned { before, plan }
    }

    /// The single watcher of old.
    fn single(&mut self, world: &mut W, kill_after: Option<usize>) -> Result<(), Broken> {
        let planned = self.plan(world);
        let mut rec =
            Intercepted::wrap(Dying::new(world.backend(), kill_after), CallLog::default());
        let report = exec::execute(&planned.plan, &mut rec);
        let mut calls = rec.by;
        calls.crashed = report.crashed;
        if report.crashed {
            self.stats.kills += 1;
            self.lines.push("the watcher died mid-pass".into());
        }
        self.note(&calls, "watcher");
        self.check(world, &planned, &calls)
    }

    /// The oracle's rules for what one watcher did this pass.
    fn check(
        &self,
        world: &mut W,
        planned: &Planned<W>,
        calls: &CallLog<W::Family>,
    ) -> Result<(), Broken> {
        oracle::check_pass::<W>(
            world,
            &planned.before,
            calls,
            self.storms,
            &self.cfg.limits,
            self.now,
        )
    }

    /// Replicas: the one that leads acts, with what befalls it; another takes over when it
    /// stops. Time in the pass is the replicas' `clock`.
    fn replicated(
        &mut self,
        world: &mut W,
        coord: &mut dyn Coordination,
        clock: &mut i64,
        mishaps: PassMishaps,
    ) -> Result<(), Broken> {
        coord.restart(*clock);
        coord.run_until(*clock);
        if mishaps.handover
            && let Some(&a) = coord.acting(*clock).first()
            && coord.hand_over(a, *clock)
        {
            self.stats.handovers += 1;
            self.lines.push(format!("{} hands over", coord.name(a)));
            return self.take_over(world, coord, clock, a, *clock + TAKEOVER_SECONDS);
        }
        let a = match coord.acting(*clock).first() {
            Some(&a) => a,
            None => match successor(coord, clock, None, *clock + TAKEOVER_SECONDS) {
                Some(a) => a,
                None => {
                    self.lines.push("no replica leads: nobody acts".into());
                    return Ok(());
                }
            },
        };
        let term = coord.term(a);
        let planned = self.plan(world);
        let first = self.stretch(
            world,
            coord,
            clock,
            (a, term),
            &planned,
            mishaps.kill,
            mishaps.mid,
            VecDeque::new(),
        )?;
        if first.partitioned {
            self.stats.partitions += 1;
        }
        if first.crashed {
            self.stats.kills += 1;
            coord.kill(a, *clock);
        }
        if first.paused {
            self.stats.pauses += 1;
            coord.freeze(a, *clock);
            let end = *clock + PAUSE_SECONDS;
            self.take_over(world, coord, clock, a, end)?;
            *clock = (*clock).max(end);
            coord.thaw(a, *clock);
            self.lines
                .push(format!("{} resumes its pass", coord.name(a)));
            self.stretch(
                world,
                coord,
                clock,
                (a, term),
                &planned,
                None,
                replicas::Mishaps::default(),
                first.made.into(),
            )?;
        } else if first.crashed || first.partitioned {
            self.take_over(world, coord, clock, a, *clock + TAKEOVER_SECONDS)?;
        }
        Ok(())
    }

    /// Another replica than `gone` that leads by `until` makes a pass of its own.
    fn take_over(
        &mut self,
        world: &mut W,
        coord: &mut dyn Coordination,
        clock: &mut i64,
        gone: usize,
        until: i64,
    ) -> Result<(), Broken> {
        let Some(b) = successor(coord, clock, Some(gone), until) else {
            return Ok(());
        };
        self.stats.takeovers += 1;
        self.lines.push(format!("{} takes over", coord.name(b)));
        let term = coord.term(b);
        let planned = self.plan(world);
        self.stretch(
            world,
            coord,
            clock,
            (b, term),
            &planned,
            None,
            replicas::Mishaps::default(),
            VecDeque::new(),
        )
        .map(drop)
    }

    /// Replica `who` (with the term it planned in) carries out `planned` from where `script`
    /// ends; the oracle checks what it wrote.
    #[allow(clippy::too_many_arguments)]
    fn stretch(
        &mut self,
        world: &mut W,
        coord: &mut dyn Coordination,
        clock: &mut i64,
        (replica, term): (usize, u64),
        planned: &Planned<W>,
        kill_after: Option<usize>,
        mid: replicas::Mishaps,
        script: VecDeque<Result<Option<<W::Family as Family>::OpId>, String>>,
    ) -> Result<Stretch<W::Family>, Broken> {
        let name = coord.name(replica);
        let guard = replicas::Guard {
            coord,
            clock,
            replica,
            term,
            unguarded: self.cfg.replicas.unguarded,
            mishaps: mid,
            attempts: 0,
            paused: false,
            partitioned: false,
            refused: None,
            unled: None,
        };
        let mut rec = replicas::Replay {
            inner: Intercepted::wrap(
                Intercepted::wrap(Dying::new(world.backend(), kill_after), guard),
                CallLog::default(),
            ),
            script,
            made: Vec::new(),
        };
        let report = exec::execute(&planned.plan, &mut rec);
        let replicas::Replay {
            inner:
                Intercepted {
                    inner: Intercepted { by: guard, .. },
                    by: mut calls,
                },
            made,
            ..
        } = rec;
        calls.crashed = report.crashed;
        if report.crashed {
            self.lines.push(format!("{name} died mid-pass"));
        }
        self.note(&calls, &name);
        if guard.paused {
            self.lines.push(format!("{name} is paused mid-pass"));
        }
        if let Some(why) = &guard.refused {
            self.stats.refused_writes += 1;
            self.lines.push(format!("{name}: write refused: {why}"));
        }
        let stretch = Stretch {
            crashed: report.crashed,
            paused: guard.paused,
            partitioned: guard.partitioned,
            made,
        };
        // The at-most-once rules first: a stale replica's write that starts a repair again is
        // reported as that, the more telling finding.
        self.check(world, planned, &calls)?;
        if let Some(what) = guard.unled {
            return Err((NOT_LEADING.into(), what));
        }
        Ok(stretch)
    }

    /// Counts and logs what `who` did.
    fn note(&mut self, calls: &CallLog<W::Family>, who: &str) {
        let words = <W::Family as Family>::WORDS;
        self.stats.jobs_submitted += calls.submitted.len();
        for (object, mark) in &calls.added {
            if let Ok(Mark::Result(r)) = <W::Family as Family>::Marks::parse(mark) {
                match r.result {
                    RepairResult::Success => self.stats.repairs_succeeded += 1,
                    RepairResult::Failure => self.stats.repairs_failed += 1,
                    RepairResult::Enoperm => {}
                }
            }
            self.lines.push(format!("{who} adds {object}: {mark}"));
        }
        for (object, mark) in &calls.removed {
            self.lines.push(format!("{who} removes {object}: {mark}"));
        }
        for s in &calls.submitted {
            self.lines.push(format!(
                "{who} submits {} {} on {}: {}",
                words.op, s.id, s.target, s.op
            ));
        }
        for a in &calls.advanced {
            self.lines
                .push(format!("{who} advances {}: {}", a.object, a.op));
        }
    }
}

/// The rule broken, and the details.
type Broken = (String, String);

/// The oracle's rule for a write by a replica that did not hold the coordination then.
pub const NOT_LEADING: &str = "write by a replica that was not leading";

/// The first replica other than `not` that leads, waiting for one until `until`.
fn successor(
    coord: &mut dyn Coordination,
    clock: &mut i64,
    not: Option<usize>,
    until: i64,
) -> Option<usize> {
    loop {
        if let Some(b) = coord.acting(*clock).into_iter().find(|r| Some(*r) != not) {
            return Some(b);
        }
        if *clock >= until {
            return None;
        }
        *clock += 1;
        coord.run_until(*clock);
    }
}

/// Shrinks a failing schedule: drops the passes after the violation, then every event whose
/// removal still gives a violation of the same rule.
pub fn minimize<W: World>(
    fleet: &W::Fleet,
    schedule: &ScheduleOf<W>,
    cfg: &SimConfig,
    planner: Planner<'_, W>,
    rule: &str,
) -> ScheduleOf<W> {
    minimize_with::<W>(fleet, &W::Setup::default(), schedule, cfg, planner, rule)
}

/// [`minimize`], the world built with `setup`.
pub fn minimize_with<W: World>(
    fleet: &W::Fleet,
    setup: &W::Setup,
    schedule: &ScheduleOf<W>,
    cfg: &SimConfig,
    planner: Planner<'_, W>,
    rule: &str,
) -> ScheduleOf<W> {
    let fails = |s: &ScheduleOf<W>| {
        run_with::<W>(fleet, setup, s, cfg, planner)
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

/// Runs `scenarios` seeded scenarios (seeds `seed`, `seed+1`, …) of `passes` fault passes each,
/// and stops at the first violation, minimised.
pub fn explore<W: World>(
    fleet: &W::Fleet,
    passes: u32,
    seed: u64,
    scenarios: usize,
    cfg: &SimConfig,
    faults: &Faults<W::Rates>,
    planner: Planner<'_, W>,
) -> Summary {
    let scenario = Scenario {
        passes,
        seed,
        scenarios,
    };
    explore_with::<W>(fleet, &W::Setup::default(), &scenario, cfg, faults, planner)
}

/// What [`explore_with`] runs: `scenarios` schedules of `passes` fault passes, seeds `seed`,
/// `seed+1`, …
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    pub passes: u32,
    pub seed: u64,
    pub scenarios: usize,
}

/// [`explore`], the world built with `setup`.
pub fn explore_with<W: World>(
    fleet: &W::Fleet,
    setup: &W::Setup,
    scenario: &Scenario,
    cfg: &SimConfig,
    faults: &Faults<W::Rates>,
    planner: Planner<'_, W>,
) -> Summary {
    let Scenario {
        passes,
        seed,
        scenarios,
    } = *scenario;
    let mut summary = Summary {
        scenarios,
        ..Summary::default()
    };
    for k in 0..scenarios as u64 {
        let s = seed.wrapping_add(k);
        let sched = schedule::<W>(fleet, passes, s, faults);
        let out = run_with::<W>(fleet, setup, &sched, cfg, planner);
        summary.stats.add(&out.stats);
        if let Some(v) = out.violation {
            let small = minimize_with::<W>(fleet, setup, &sched, cfg, planner, &v.rule);
            let violation = run_with::<W>(fleet, setup, &small, cfg, planner)
                .violation
                .unwrap_or(v);
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
