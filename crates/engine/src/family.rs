//! What a family plugs into the engine: its snapshot, its ladder and mark codec, its health
//! table, the chain of steps each level runs, and its words (docs/architecture.md).

use super::marks::{Codec, Level};
use super::object::ObjectRef;
use super::plan::{FleetSummary, TargetPlan};
use super::text::Text;
use serde::Serialize;
use std::fmt;
use std::hash::Hash;
use std::str::FromStr;

/// A family of targets. All functions are associated (no `self`): the planner is
/// monomorphised per family, so a pass over a hundred thousand targets makes direct calls.
pub trait Family: Sized + Clone + fmt::Debug + PartialEq + Eq + 'static {
    /// The ladder of repair levels, least destructive first.
    type Level: Level;
    /// How marks are stored.
    type Marks: Codec<Level = Self::Level, OpId = Self::OpId>;
    /// An operation's id as the backend gives it (a job number, an annotation key…).
    type OpId: Clone + Eq + Hash + fmt::Debug + fmt::Display + FromStr + Serialize;
    /// One operation to submit.
    type Op: Clone + fmt::Debug + fmt::Display + PartialEq + Eq + Serialize;
    /// What an operation does: a level's chain is a list of steps.
    type Step: Copy + Eq + fmt::Debug + fmt::Display + Serialize;
    /// The backend's own status of an operation, shown as it is.
    type OpStatus: Copy + Eq + fmt::Debug + Serialize;
    /// Where a target lives and runs, shown in its plan (flattened into it).
    type Facts: Clone + fmt::Debug + PartialEq + Eq + Serialize;
    /// The fleet at one instant, as the backend read it.
    type Snapshot;
    type Target;
    /// The family's settings the planner needs (allocators, what the backend cannot do).
    type Settings;
    /// Lookups the family builds once per pass.
    type Index<'a>;

    const WORDS: Words;

    /// `now` is the pass's clock, for families that judge how long something has lasted.
    fn index<'a>(
        snap: &'a Self::Snapshot,
        settings: &'a Self::Settings,
        now: i64,
    ) -> Self::Index<'a>;
    /// Every object that carries marks and is not a target: scopes first, nearest-wins order
    /// is the target's [`Assessment::scopes`].
    fn holders<'a>(snap: &'a Self::Snapshot) -> Vec<Holder<'a>>;
    fn targets(snap: &Self::Snapshot) -> &[Self::Target];
    fn name(target: &Self::Target) -> &str;
    fn marks(target: &Self::Target) -> &[String];
    /// The target's health, scopes, failure domain and facts.
    fn assess<'a>(index: &Self::Index<'a>, target: &'a Self::Target) -> Assessment<'a, Self>;
    /// The steps a level runs on this target, in order; `None` when the level cannot repair it.
    fn chain(target: &Self::Target, level: Self::Level) -> Option<&'static [Self::Step]>;
    /// The operations for `steps` against the target as it is now, or why they cannot be built.
    fn build_ops<'a>(
        index: &Self::Index<'a>,
        target: &'a Self::Target,
        steps: &[Self::Step],
    ) -> Result<Vec<Self::Op>, String>;
    fn step_of(op: &Self::Op) -> Self::Step;
    /// The operations the backend listed: the ones marks name and the watcher's own recent ones.
    fn operations<'a>(index: &Self::Index<'a>) -> Vec<Operation<'a, Self>>;
    /// Operations of the watcher's under way that no mark records and that no write still
    /// under way will record (left by an earlier controller that used the same means, or by a
    /// pass killed between two writes where the storage keeps nothing else). The planner
    /// records each as a repair, so that it is followed to its end and counts as a repair
    /// that happened: unrecorded, its end would look like nothing and the next pass would
    /// start the same repair again.
    fn unrecorded<'a>(_index: &Self::Index<'a>) -> Vec<Unrecorded<'a, Self>> {
        Vec::new()
    }
    /// The failure domains that are down now.
    fn down_domains<'a>(index: &Self::Index<'a>) -> Vec<DownDomain<'a>>;
    /// The failure domains that came back at or after `since`, each with the time the fleet
    /// itself records for it (rule 13's storm cool-down counts them as down until then); the
    /// engine leaves out those that are down now.
    /// Where the fleet records only an object's last change, that time is given: later than
    /// the return, it holds longer, never shorter.
    fn back_domains<'a>(index: &Self::Index<'a>, since: i64) -> Vec<BackDomain<'a>>;
    /// A domain's name as plan text, shared by every target in it.
    fn domain_text(index: &Self::Index<'_>, name: &str) -> Text;

    /// The work of operations the watcher runs itself (where no service runs them: a power
    /// cycle driven through annotations), due this pass. It finishes what a started repair
    /// began, so it runs whatever the plan decides: suspends, limits and the write budget hold
    /// back starts, and stopping half-way is what would hurt (a host left powered off).
    fn progress<'a>(_index: &Self::Index<'a>, _now: i64) -> Vec<Progress<Self>> {
        Vec::new()
    }

    /// Reports the family writes for others once the pass has decided (a remediation request's
    /// status saying why its target waits, and which limit holds it): `plans` are this pass's
    /// target plans, `fleet` its limits' verdicts. Like [`Family::progress`] they are written
    /// whatever holds the targets back: they start nothing.
    fn reports<'a>(
        _index: &Self::Index<'a>,
        _plans: &[TargetPlan<Self>],
        _fleet: &FleetSummary,
    ) -> Vec<Progress<Self>> {
        Vec::new()
    }
}

/// One piece of work on an operation the watcher runs itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress<F: Family> {
    /// The target it belongs to, when there is one (a host's Machine may be gone).
    pub target: Option<String>,
    /// The object it changes.
    pub object: ObjectRef,
    pub op: F::Op,
    pub reason: String,
}

/// An operation under way that no mark records ([`Family::unrecorded`]).
#[derive(Clone, Debug)]
pub struct Unrecorded<'a, F: Family> {
    pub target: &'a str,
    /// The repair id it is recorded under: a new one, unless the operation carries one.
    pub repair: String,
    pub level: F::Level,
    /// Its id under that repair.
    pub op: F::OpId,
}

/// The family's words in plans, notes and messages.
#[derive(Clone, Copy, Debug)]
pub struct Words {
    /// The kind of a target object, as in `KIND/NAME`.
    pub target: &'static str,
    pub targets: &'static str,
    /// What a failure domain is (`node`, `rack`), and several.
    pub domain: &'static str,
    pub domains: &'static str,
    /// The whole fleet's scope, as the limiter names it (`cluster`).
    pub fleet: &'static str,
    /// The kind of scope a domain belongs to, where the limiter also counts (`group`).
    pub domain_scope: &'static str,
    /// A target's scopes, as in "set on it, ITS SCOPES".
    pub scopes: &'static str,
    /// An operation, and several.
    pub op: &'static str,
    pub ops: &'static str,
    /// Said of a recorded operation the backend no longer knows.
    pub op_vanished: &'static str,
}

impl Words {
    /// `op` for one, `ops` for any other count ("1 job", "0 jobs").
    pub fn ops_for(&self, n: usize) -> &'static str {
        if n == 1 { self.op } else { self.ops }
    }

    /// `target` for one, `targets` for any other count.
    pub fn targets_for(&self, n: usize) -> &'static str {
        if n == 1 { self.target } else { self.targets }
    }
}

/// An object carrying marks that is not a target.
#[derive(Clone, Debug)]
pub struct Holder<'a> {
    pub object: ObjectRef,
    pub marks: &'a [String],
    pub role: Role<'a>,
}

#[derive(Clone, Debug)]
pub enum Role<'a> {
    /// A scope: its policy governs the targets whose chain names `key`. `halt_key` is the
    /// limiter scope its own writes fall under (`None`: the fleet).
    Scope {
        key: &'a str,
        halt_key: Option<&'a str>,
    },
    /// Its marks have no effect; the lint says so with this advice.
    Inert { advice: &'static str },
}

/// The scopes of a target, nearest first, by [`Role::Scope`] key.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScopeChain<'a> {
    keys: [&'a str; 4],
    len: u8,
}

impl<'a> ScopeChain<'a> {
    /// At most four scopes; more are a family's mistake.
    pub fn new(keys: &[&'a str]) -> Self {
        assert!(keys.len() <= 4, "at most four scopes per target");
        let mut chain = ScopeChain::default();
        chain.keys[..keys.len()].copy_from_slice(keys);
        chain.len = keys.len() as u8;
        chain
    }

    pub fn iter(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.keys[..usize::from(self.len)].iter().copied()
    }
}

/// What a broken target needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Need<L> {
    Repair(L),
    /// No automatic repair is safe or possible; the text says why and what to do.
    Person(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Health<L> {
    Healthy,
    Broken { problem: String, need: Need<L> },
}

impl<L: Copy> Health<L> {
    pub fn is_broken(&self) -> bool {
        matches!(self, Health::Broken { .. })
    }

    pub fn needed_repair(&self) -> Option<L> {
        match self {
            Health::Broken {
                need: Need::Repair(t),
                ..
            } => Some(*t),
            _ => None,
        }
    }
}

/// A target as the family sees it this pass.
pub struct Assessment<'a, F: Family> {
    pub health: Health<F::Level>,
    pub scopes: ScopeChain<'a>,
    /// The limiter scope whose mass failure holds it.
    pub halt_key: Option<&'a str>,
    /// The down failure domain that breaks it, if any.
    pub domain: Option<&'a str>,
    /// Its domain when a repair runs on it though nothing is down (where it runs).
    pub home: &'a str,
    /// A standing request from outside the mark language (another system's annotation asking
    /// for a repair): like a request mark it allows repairs up to this level on this target
    /// alone, suspends and failures still hold it, and the engine never removes it.
    pub granted: Option<F::Level>,
    /// How many times a failed repair of this target may be tried again, where the target
    /// says so itself (the retry limit of the remediation request that asks for it); `None`
    /// leaves it to the configuration's `retries`.
    pub retries: Option<u32>,
    pub facts: F::Facts,
}

/// How an operation stands, as far as judging a repair goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpState {
    /// The backend does not know it (purged, or never existed).
    Unknown,
    Running,
    /// Unfinished, and it advances only by the watcher's own work, which a suspend of its
    /// target holds back: it runs nothing meanwhile, so it holds no failure-domain slot (as a
    /// chain paused before its next step does not), yet no other repair starts on the target.
    Paused,
    Succeeded,
    /// Ended without success for lack of room: the repair retries later.
    LacksResources,
    /// Ended without success otherwise (failed, canceled).
    Failed,
}

/// One operation the backend listed.
#[derive(Clone, Debug)]
pub struct Operation<'a, F: Family> {
    pub id: F::OpId,
    /// Later submissions have higher numbers: of several attempts at one step, the newest counts.
    pub seq: u64,
    pub state: OpState,
    pub status: Option<F::OpStatus>,
    /// The repair it belongs to, from the reason it carries.
    pub repair: Option<&'a str>,
    /// The target it works on, when the backend says.
    pub target: Option<&'a str>,
    /// What it does, when it is a repair step (not a mark write).
    pub step: Option<F::Step>,
    /// When it ended, in Unix seconds.
    pub ended: Option<i64>,
    /// For people: what went wrong, for an operation that ended without success; what holds
    /// it, for one paused or still under way (a family's own switch, say).
    pub why: Option<String>,
}

/// A failure domain that came back, as [`Family::back_domains`] gives it.
#[derive(Clone, Debug)]
pub struct BackDomain<'a> {
    pub name: &'a str,
    pub scope_key: &'a str,
    pub scope_name: &'a str,
    /// When it came back (or last changed), epoch seconds.
    pub at: i64,
}

/// A failure domain that is down.
#[derive(Clone, Debug)]
pub struct DownDomain<'a> {
    pub name: &'a str,
    /// The limiter scope it counts in, and that scope's name for people.
    pub scope_key: &'a str,
    pub scope_name: &'a str,
    /// What is wrong with it (`offline`, `drained`…).
    pub state: &'static str,
}
