//! The faults a scenario goes through: how often each happens, and the schedule drawn from
//! a seed (a mix of everything, or a slow burn).

use super::*;

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
        use crate::family::Role;
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
        use crate::marks::Level;
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
