//! What a family implements to take part: its [`World`], and the facts the oracle reads
//! from it.

use super::*;

/// A safety rule an oracle found broken after a pass, with what broke it; the pass it was
/// found in makes it a [`Violation`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broken {
    /// Which rule (short name, in the family's words).
    pub rule: String,
    pub detail: String,
}

impl Broken {
    pub fn new(rule: impl Into<String>, detail: impl Into<String>) -> Self {
        Broken {
            rule: rule.into(),
            detail: detail.into(),
        }
    }

    /// The finding as reported, found in `pass`.
    pub fn at(self, pass: usize) -> Violation {
        Violation {
            rule: self.rule,
            pass,
            detail: self.detail,
        }
    }
}

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
    /// passes (when the watcher powered what off).
    fn check_pass(
        &mut self,
        _before: &Self::Fleet,
        _calls: &CallLog<Self::Family>,
        _now: i64,
    ) -> Result<(), Broken> {
        Ok(())
    }
    /// The family's own rules once the quiet passes are over (what must have settled by then).
    fn check_end(&self, _now: i64) -> Result<(), Broken> {
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
