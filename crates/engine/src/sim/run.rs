//! Running a schedule: the passes, the kills and the replicas between them, and the oracle's
//! checks after each pass.

use super::*;

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
        if let Err(broken) = checked {
            stats.world = world.tally().into_iter().collect();
            return Outcome {
                stats,
                violation: Some(broken.at(pass)),
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
            return Err(Broken::new(NOT_LEADING, what));
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
