//! One target's decisions: its marks read, its effective policy, the bookkeeping of repairs
//! under way (judging their operations), and what it could start.

use super::index::{Index, PolicySource, invalid_lint, lint_policy_mix, lint_time, policy_note};
use super::rate::{Start, domain_hash, read_id};
use super::retry::{Retry, Streak, streak};
use super::{Blocked, HistoryEntry, IdMaker, Lint, Next, OpView, RepairStart, RepairView, State};
use super::{TargetPlan, reason_for};
use crate::family::{Family, Health, Need, OpState, Operation};
use crate::limits::Limits;
use crate::marks::{
    Codec, Governs, Level as _, Mark, Outcome, Pending, RenderError, RepairResult, read,
};
use crate::object::ObjectRef;
use crate::policy::{self, Policy};
use crate::text::{FxSet, Text};

pub(super) struct Ctx<'c, 'a, F: Family> {
    pub index: &'c Index<'a, F>,
    pub limits: &'c Limits,
    pub now: i64,
    pub ids: &'c IdMaker,
}

/// Why a repair wants to submit operations; the order is the order slots are handed out in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum StartKind {
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
pub(super) struct Candidate<F: Family> {
    pub start: RepairStart<F>,
    pub kind: StartKind,
    pub note: String,
}

pub(super) struct TargetEval<'a, F: Family> {
    /// The target needs a repair or a person (counts against max_broken).
    pub broken: bool,
    /// A repair is under way (holds its failure domain's slot).
    pub active: bool,
    /// Boxed: few targets have one, and `RepairStart` would double the size of every eval.
    pub candidate: Option<Box<Candidate<F>>>,
    pub adds: Vec<Write>,
    pub removes: Vec<Write>,
    /// The limiter scope whose mass failure holds it.
    pub halt_key: Option<&'a str>,
    /// Its failure domain.
    pub domain: Option<&'a str>,
    /// The failure domain it lives in (counted in its scope's size for a limit given as a share).
    pub home: &'a str,
    /// Its repairs' starts, as its marks tell them, when a rate limit counts them.
    pub starts: Vec<Start>,
}

/// One mark to add or remove, and why.
pub(super) struct Write {
    pub mark: String,
    pub why: String,
    /// Bookkeeping of a repair under way (its operations, its result): allowed even while a
    /// mass failure holds everything else, and first in line for the write budget.
    pub record: bool,
}

/// The pending marks of one repair id, merged.
struct InFlight<'t, F: Family> {
    id: &'t str,
    /// The repair being done, from the newest of its marks.
    repair: F::Level,
    since: i64,
    /// The most its marks allow: a request's own level may be above the repair chosen.
    granted: F::Level,
    marks: Vec<&'t str>,
    recorded: Vec<F::OpId>,
}

enum Verdict<F: Family> {
    /// Unfinished; what holds it, when the family says something does.
    Running(Option<String>),
    /// Unfinished, held back by a suspend ([`OpState::Paused`]).
    Paused,
    Succeeded(Vec<F::OpId>),
    Failed(String, Vec<F::OpId>),
    /// Chain positions from `from` on still have to be submitted.
    Submit {
        from: usize,
        keep: Vec<F::OpId>,
        not_before: Option<i64>,
        all_ops: Vec<F::OpId>,
    },
}

impl<'c, 'a, F: Family> Ctx<'c, 'a, F> {
    pub fn target(
        &self,
        target: &'a F::Target,
        lint: &mut Vec<Lint>,
    ) -> (TargetPlan<F>, TargetEval<'a, F>) {
        let name = F::name(target);
        // The target as a mark owner, built only when a lint or an action names it.
        let object = || ObjectRef::new(F::WORDS.target, name);
        let mut parsed: Vec<(&str, Mark<F::Level>)> = Vec::new();
        // The first unreadable pending mark, else result mark: it holds the target (rule 11).
        let mut unreadable: Option<(&str, Governs)> = None;
        for t in F::marks(target) {
            match read::<F::Marks>(t) {
                (Mark::Foreign, _) => {}
                (mark, error) => {
                    if let Some(e) = error {
                        lint.push(invalid_lint(&object(), e));
                    }
                    match mark {
                        Mark::Unreadable(g @ Governs::Pending) => {
                            unreadable = unreadable
                                .filter(|(_, u)| *u == Governs::Pending)
                                .or(Some((t.as_str(), g)))
                        }
                        Mark::Unreadable(g @ Governs::Result) => {
                            unreadable = unreadable.or(Some((t.as_str(), g)))
                        }
                        _ => {}
                    }
                    if mark
                        .time()
                        .is_some_and(|t| t > crate::text::LAST_CALENDAR_SECOND)
                    {
                        lint_time(&object(), t, &mark, lint);
                    }
                    parsed.push((t.as_str(), mark));
                }
            }
        }
        let own = policy::object_policy(parsed.iter().copied(), self.now);
        // A mix takes two marks at least.
        if parsed.len() > 1 {
            lint_policy_mix::<F>(&object(), &parsed, lint);
        }

        let assessment = F::assess(&self.index.family, target);
        let scopes = &self.index.scopes;
        let scope_policy = |key: &str| scopes.get(key).and_then(Option::as_ref).map(Eff::Shared);
        let chain = std::iter::once(own.policy.map(Eff::Own))
            .chain(assessment.scopes.iter().map(scope_policy));
        // A scope's `suspend --all` holds the target over the nearest-wins rule.
        let held = assessment
            .scopes
            .iter()
            .find_map(|key| self.index.over_all.get(key))
            .map(Eff::Shared);
        let effective = held.or_else(|| policy::effective(chain));

        let mut t = TargetWork {
            ctx: self,
            target,
            name,
            halt_key: assessment.halt_key,
            domain: assessment.domain,
            home: assessment.home,
            had_pending: false,
            unreadable,
            blocked: None,
            health: &assessment.health,
            standing: assessment.granted,
            retries: assessment.retries.unwrap_or(self.limits.retries),
            own_retries: assessment.retries.is_some(),
            effective,
            results: parsed
                .iter()
                .filter_map(|(text, mark)| match mark {
                    Mark::Result(r) => Some((*text, *r)),
                    _ => None,
                })
                .collect(),
            adds: Vec::new(),
            removes: Vec::new(),
            added: FxSet::default(),
            removed: FxSet::default(),
            notes: Vec::new(),
            pending_views: Vec::new(),
            active: false,
            hold: false,
            candidate: None,
            starts: Vec::new(),
        };
        for text in &own.expired_suspends {
            t.remove(text, "timed suspend is over", false);
        }
        let pendings: Vec<(&str, Pending<F::Level>)> = parsed
            .iter()
            .filter_map(|(text, mark)| match mark {
                Mark::Pending(p) => Some((*text, *p)),
                _ => None,
            })
            .collect();
        let longest_window = [
            self.limits.max_repair_rate,
            self.limits.max_repair_rate_per_group,
        ]
        .iter()
        .flatten()
        .map(|r| r.window_secs())
        .max();
        if let Some(window) = longest_window {
            let domain_now = assessment.domain.unwrap_or(assessment.home);
            t.starts = repair_starts(&parsed, domain_now, self.now.saturating_sub(window));
        }
        let repairs = merge_pending::<F>(&pendings);
        t.had_pending = !repairs.is_empty() || matches!(t.unreadable, Some((_, Governs::Pending)));
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
        if self.index.duplicate_names.contains(name) {
            let words = F::WORDS;
            lint.push(Lint {
                object: t.object(),
                tag: None,
                message: format!(
                    "more than one {} has this name: autorepair changes nothing on it until the fleet data is fixed",
                    words.target
                ),
            });
            t.adds.clear();
            t.removes.clear();
            t.added.clear();
            t.removed.clear();
            t.candidate = None;
            t.blocked = Some(Blocked::DuplicateName);
            t.notes
                .push(format!("duplicate {} name: no changes", words.target));
        }
        t.finish(assessment.facts)
    }
}

/// The starts of the repairs a target's marks record (rule 13's rate windows): every repair
/// that ran operations, under way or ended, and every start of the planner's own (its id says
/// so) even before its operations are recorded: a pass killed between the two left them
/// running. A request still waiting has taken nothing under repair: it is counted, like any
/// start, when it starts. An id that does not say its domain puts a repair under way in the
/// target's domain now, and a result in a domain of its own.
///
/// A repair began no later than its mark's time (a result's end, a pending mark's start): a
/// mark older than `oldest` cannot be in the window, and its id is not read.
fn repair_starts<L: Copy>(parsed: &[(&str, Mark<L>)], domain_now: &str, oldest: i64) -> Vec<Start> {
    parsed
        .iter()
        .filter_map(|(_, mark)| match mark {
            Mark::Pending(p)
                if p.since >= oldest && (!p.ops.is_empty() || read_id(p.id).is_some()) =>
            {
                Some(Start::of(p.id, p.since, domain_hash(domain_now)))
            }
            Mark::Result(r)
                if r.at >= oldest && r.result != RepairResult::Enoperm && !r.ops.is_empty() =>
            {
                Some(Start::of(r.id, r.at, domain_hash(r.id)))
            }
            _ => None,
        })
        .collect()
}

fn merge_pending<'t, F: Family>(
    pendings: &[(&'t str, Pending<'t, F::Level>)],
) -> Vec<InFlight<'t, F>> {
    // Several marks with one id are what a crash leaves between writing a newer mark and
    // removing the older. The newest describes the work: one that records operations, else the
    // latest written.
    let mut out: Vec<(InFlight<F>, (bool, i64))> = Vec::new();
    for (text, p) in pendings {
        let rank = (!p.ops.is_empty(), p.since);
        match out.iter_mut().find(|(r, _)| r.id == p.id) {
            Some((r, best)) => {
                r.marks.push(text);
                r.granted = r.granted.max(p.repair);
                if rank > *best {
                    r.repair = p.repair;
                    r.since = p.since;
                    *best = rank;
                }
                for j in p.ops.iter::<F::OpId>() {
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
                    marks: vec![text],
                    recorded: p.ops.to_vec(),
                },
                rank,
            )),
        }
    }
    let mut out: Vec<InFlight<F>> = out.into_iter().map(|(r, _)| r).collect();
    out.sort_by(|a, b| (a.since, a.id).cmp(&(b.since, b.id)));
    out
}

/// The effective policy of a target: its own, or one shared with a scope.
#[derive(Clone, Copy)]
enum Eff<'c, L> {
    Own(Policy<L>),
    Shared(&'c PolicySource<L>),
}

impl<L: Copy> Eff<'_, L> {
    fn policy(self) -> Policy<L> {
        match self {
            Eff::Own(p) => p,
            Eff::Shared(s) => s.policy,
        }
    }
}

struct TargetWork<'c, 'a, F: Family> {
    ctx: &'c Ctx<'c, 'a, F>,
    target: &'a F::Target,
    name: &'a str,
    halt_key: Option<&'a str>,
    domain: Option<&'a str>,
    home: &'a str,
    /// It carried a pending mark when the pass read it: it is pending now.
    had_pending: bool,
    /// An unreadable pending (else result) mark of ours it carries, which holds it as a repair
    /// under way (as a failure result) would.
    unreadable: Option<(&'a str, Governs)>,
    blocked: Option<Blocked<F>>,
    health: &'c Health<F::Level>,
    effective: Option<Eff<'c, F::Level>>,
    /// A standing request from outside the marks ([`Assessment::granted`]).
    ///
    /// [`Assessment::granted`]: crate::family::Assessment::granted
    standing: Option<F::Level>,
    /// How often a failed repair is tried again ([`Assessment::retries`], else the limits').
    ///
    /// [`Assessment::retries`]: crate::family::Assessment::retries
    retries: u32,
    /// The target carries its own retry count (a remediation request's contract): its retries
    /// repeat what it asked for, never escalate.
    own_retries: bool,
    results: Vec<(&'a str, Outcome<'a, F::Level>)>,
    adds: Vec<Write>,
    removes: Vec<Write>,
    /// The marks of `adds` and `removes`, once they are too many to scan (see [`push_once`]).
    added: FxSet<String>,
    removed: FxSet<String>,
    notes: Vec<String>,
    pending_views: Vec<RepairView<F>>,
    active: bool,
    /// A request that cannot start now still keeps any other repair from starting.
    hold: bool,
    candidate: Option<Candidate<F>>,
    starts: Vec<Start>,
}

/// Adds a write of `mark` unless `list` has one. A target writes a few marks, found by a scan;
/// but one object may carry any number (100,000 timed suspends, all over), and comparing each
/// with all before it made `status` take 34 s: past a handful, `index` holds the marks of
/// `list`.
fn push_once(
    list: &mut Vec<Write>,
    index: &mut FxSet<String>,
    mark: String,
    why: &str,
    record: bool,
) {
    const SCAN: usize = 16;
    if list.len() < SCAN {
        if list.iter().any(|w| w.mark == mark) {
            return;
        }
    } else {
        if index.is_empty() {
            index.extend(list.iter().map(|w| w.mark.clone()));
        }
        if !index.insert(mark.clone()) {
            return;
        }
    }
    list.push(Write {
        mark,
        why: why.to_owned(),
        record,
    });
}

/// A pending repair's operations as the backend knows them (see `TargetWork::ops_of`).
struct RepairOps<F: Family> {
    /// Its operations, the newest attempt of each step.
    ops: Vec<F::OpId>,
    /// Recorded ones the backend no longer knows.
    missing: Vec<F::OpId>,
    /// Recorded ones whose id the backend now gives another operation.
    foreign: Vec<F::OpId>,
}

impl<'c, 'a, F: Family> TargetWork<'c, 'a, F> {
    fn object(&self) -> ObjectRef {
        ObjectRef::new(F::WORDS.target, self.name)
    }

    fn op(&self, id: &F::OpId) -> Option<&'c Operation<'a, F>> {
        self.ctx.index.op(id)
    }

    fn add(&mut self, mark: String, why: &str, record: bool) {
        push_once(&mut self.adds, &mut self.added, mark, why, record);
    }

    fn remove(&mut self, mark: &str, why: &str, record: bool) {
        push_once(
            &mut self.removes,
            &mut self.removed,
            mark.to_owned(),
            why,
            record,
        );
    }

    /// The first reason found is the one a person acts on.
    fn block(&mut self, why: Blocked<F>) {
        self.blocked.get_or_insert(why);
    }

    /// What the failures in a row allow now (rule 13). With no retries, any failure parks,
    /// as it always did: a success cannot follow a failure until a person cleared it.
    fn retry(&self) -> Retry {
        // Most targets carry no failure: nothing to count.
        if !self.has_failure() {
            return Retry::Free;
        }
        Retry::of(
            &self.streak(),
            self.retries,
            secs(self.ctx.limits.retry_backoff),
        )
    }

    fn streak(&self) -> Streak {
        self.streak_of(false)
    }

    /// `as_read`: only the marks the pass read, not the failures it wrote itself.
    fn streak_of(&self, as_read: bool) -> Streak {
        let results: Vec<(i64, RepairResult)> = self
            .results
            .iter()
            .filter(|(text, _)| !as_read || !text.is_empty())
            .map(|(_, r)| (r.at, r.result))
            .collect();
        if self.retries == 0 {
            // Nothing starts the count afresh: every failure parks, whatever the marks' times.
            let failures = results.iter().filter(|(_, r)| *r == RepairResult::Failure);
            Streak {
                failures: u32::try_from(failures.clone().count()).unwrap_or(u32::MAX),
                last_failure: failures.map(|(at, _)| *at).max().unwrap_or(0),
                reset_at: None,
            }
        } else {
            streak(&results, self.ctx.now, secs(self.ctx.limits.min_healthy))
        }
    }

    fn has_failure(&self) -> bool {
        self.results
            .iter()
            .any(|(_, r)| r.result == RepairResult::Failure)
    }

    /// Failures parked it: more in a row than it may be retried.
    fn parked(&self) -> Option<String> {
        match self.retry() {
            Retry::Parked { failures, retries } if retries > 0 => Some(format!(
                "its repair failed {failures} times in a row, more than the {retries} retries allowed: parked until a person clears it"
            )),
            Retry::Parked { .. } => {
                Some("a failure result parks this target until a person clears it".into())
            }
            Retry::Free | Retry::Wait { .. } => None,
        }
    }

    /// The back-off after a failure that will be retried, while it lasts.
    fn retry_wait(&self) -> Option<(Blocked<F>, String)> {
        match self.retry() {
            Retry::Wait {
                failures,
                retries,
                at,
            } if at > self.ctx.now => {
                let blocked = Blocked::RetryWait {
                    failures,
                    retries,
                    at,
                };
                let why = format!("{blocked} (retry_backoff, doubled after each failure)");
                Some((blocked, why))
            }
            _ => None,
        }
    }

    /// The level a repair starts at (rule 13): what the target needs, or with `escalate`, after
    /// failures in a row, one level above the highest that failed, where `allowed` reaches it
    /// and the family can run it on the target; failing that, the highest that failed again
    /// (a lower one already failed), if it can still run.
    fn escalated(&mut self, needs: F::Level, allowed: Option<F::Level>) -> F::Level {
        if !self.ctx.limits.escalate || self.own_retries || !self.has_failure() {
            return needs;
        }
        let reset = self.streak().reset_at;
        let Some(failed) = self
            .results
            .iter()
            .filter(|(_, r)| r.result == RepairResult::Failure)
            .filter(|(_, r)| reset.is_none_or(|ok| r.at > ok))
            .map(|(_, r)| r.repair)
            .max()
        else {
            return needs;
        };
        let runs =
            |l: F::Level| allowed.is_some_and(|a| l <= a) && F::chain(self.target, l).is_some();
        let level = F::Level::LADDER
            .iter()
            .copied()
            .find(|l| *l > failed && *l >= needs && runs(*l))
            .or_else(|| (failed > needs && runs(failed)).then_some(failed))
            .unwrap_or(needs);
        if level != needs {
            self.notes.push(format!(
                "needs {needs}, but {failed} failed in a row: escalated to {level} (escalate)"
            ));
        }
        level
    }

    fn suspended(&self) -> Option<Policy<F::Level>> {
        self.effective.map(Eff::policy).filter(|p| p.is_suspended())
    }

    /// Ends a repair: writes its result (once, even if an earlier pass crashed after writing
    /// it) and then drops its pending marks.
    fn resolve(
        &mut self,
        r: &InFlight<F>,
        repair: F::Level,
        result: RepairResult,
        ops: &[F::OpId],
        why: &str,
    ) {
        // A repair that never submitted an operation is a request: ending it is a change like
        // any other, not bookkeeping of work under way.
        let record = !(r.recorded.is_empty() && ops.is_empty());
        let already = self.results.iter().any(|(_, o)| o.id == r.id);
        if !already {
            // The result mark is longer than the pending one: when all the operations do not
            // fit, keep the newest, which decided the outcome.
            let now = self.ctx.now;
            let rendered = (0..ops.len().max(1))
                .map(|drop| {
                    F::Marks::render_result(repair, r.id, now, result, &ops[drop.min(ops.len())..])
                })
                .find(|t| !matches!(t, Err(RenderError::TooLong { .. })))
                .unwrap_or_else(|| F::Marks::render_result(repair, r.id, now, result, &[]));
            match rendered {
                Ok(mark) => self.add(mark, why, record),
                Err(e) => {
                    self.block(Blocked::Unrecordable);
                    self.notes
                        .push(format!("cannot record the result of {}: {e}", r.id));
                    // Its pending mark stays, so nothing else may start beside it.
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
                    ops: Default::default(),
                },
            ));
        }
        for mark in &r.marks {
            self.remove(mark, why, record);
        }
        self.notes
            .push(format!("repair {} ({repair}): {result}: {why}", r.id));
    }

    fn run(&mut self, mut repairs: Vec<InFlight<F>>) {
        // Repairs with operations first (oldest first), then requests: a request, however old,
        // never starts while a repair with operations has not been judged.
        repairs.sort_by_cached_key(|r| {
            let o = self.ops_of(r);
            (
                o.ops.is_empty() && o.missing.is_empty() && o.foreign.is_empty(),
                r.since,
                r.id,
            )
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

    /// Operations known for the repair: the ones its marks record and any the backend lists
    /// with its id as reason (submitted by a pass that died before recording them). Of several
    /// attempts at one step only the newest counts, so the list never grows beyond the
    /// chain's length. Returns the operations, the recorded ones the backend no longer knows,
    /// and the recorded ones whose id the backend now gives another operation: one of another
    /// repair or target, or no repair step at all (a backend whose queue lost its newest
    /// entries can number operations afresh from an older serial).
    fn ops_of(&self, r: &InFlight<F>) -> RepairOps<F> {
        let index = &self.ctx.index;
        let here = |o: &Operation<F>| o.target.is_none_or(|t| t == self.name);
        // An operation without a repair id is ours only as a step of this target (a backend
        // may drop the id of some operations: see the family's `operations`).
        let ours = |o: &Operation<F>| {
            here(o) && (o.repair == Some(r.id) || (o.repair.is_none() && o.step.is_some()))
        };
        let (mut ops, foreign): (Vec<F::OpId>, Vec<F::OpId>) = r
            .recorded
            .iter()
            .cloned()
            // An id the backend answers for but knows nothing of (a null status) is a
            // vanished operation, not another one.
            .partition(|id| {
                self.op(id)
                    .is_none_or(|o| o.state == OpState::Unknown || ours(o))
            });
        for &i in index.ops_by_repair.get(r.id).into_iter().flatten() {
            let o = &index.ops[i];
            if o.step.is_some() && here(o) && !ops.contains(&o.id) {
                ops.push(o.id.clone());
            }
        }
        let (known, missing): (Vec<F::OpId>, Vec<F::OpId>) = ops
            .into_iter()
            .partition(|id| self.op(id).is_some_and(|o| o.state != OpState::Unknown));
        let known_ops: Vec<&Operation<F>> =
            known.iter().map(|id| self.op(id).expect("known")).collect();
        let newest: Vec<F::OpId> = known_ops
            .iter()
            .filter(|o| {
                o.step.is_none()
                    || !known_ops
                        .iter()
                        .any(|other| other.seq > o.seq && other.step == o.step)
            })
            .map(|o| o.id.clone())
            .collect();
        RepairOps {
            ops: newest,
            missing,
            foreign,
        }
    }

    fn judge(&self, r: &InFlight<F>, ops: &[F::OpId]) -> Verdict<F> {
        let get = |id: &F::OpId| self.op(id).expect("judged operations are known");
        let running: Vec<&Operation<F>> = ops
            .iter()
            .map(get)
            .filter(|o| o.state == OpState::Running)
            .collect();
        if !running.is_empty() {
            return Verdict::Running(running.iter().find_map(|o| o.why.clone()));
        }
        if ops.iter().any(|id| get(id).state == OpState::Paused) {
            return Verdict::Paused;
        }
        // Operations judged as a whole: all must have succeeded.
        let whole = || match ops.iter().map(get).find(|o| o.state != OpState::Succeeded) {
            None => Verdict::Succeeded(ops.to_vec()),
            Some(o) => Verdict::Failed(failure_of(o), ops.to_vec()),
        };
        // Operations we cannot place in a chain (e.g. written by another tool, or a chain of
        // another level).
        let Some(chain) = F::chain(self.target, r.repair) else {
            return whole();
        };
        // Steps run in order: operations for a later step without the earlier ones are not a
        // chain this planner submitted. Never fill in earlier steps after later ones ran.
        let positions: Vec<Option<usize>> = ops
            .iter()
            .map(|id| {
                get(id)
                    .step
                    .and_then(|s| chain.iter().position(|k| *k == s))
            })
            .collect();
        let highest = positions.iter().flatten().max().copied().unwrap_or(0);
        let is_prefix = positions.iter().all(Option::is_some)
            && (0..=highest).all(|p| positions.contains(&Some(p)));
        if !is_prefix {
            return whole();
        }
        // The newest operation of each step decides it.
        let latest = |step: F::Step| {
            ops.iter()
                .map(get)
                .filter(|o| o.step == Some(step))
                .max_by_key(|o| o.seq)
        };
        let mut keep = Vec::new();
        for (pos, step) in chain.iter().enumerate() {
            match latest(*step) {
                None => {
                    return Verdict::Submit {
                        from: pos,
                        keep,
                        not_before: None,
                        all_ops: ops.to_vec(),
                    };
                }
                Some(o) if o.state == OpState::Succeeded => keep.push(o.id.clone()),
                Some(o) if o.state == OpState::LacksResources => {
                    let retry = self.ctx.limits.retry_interval.as_secs() as i64;
                    return Verdict::Submit {
                        from: pos,
                        keep,
                        not_before: Some(o.ended.unwrap_or(i64::MIN / 2).saturating_add(retry)),
                        all_ops: ops.to_vec(),
                    };
                }
                Some(o) => {
                    keep.push(o.id.clone());
                    return Verdict::Failed(failure_of(o), keep);
                }
            }
        }
        Verdict::Succeeded(keep)
    }

    fn view(&self, r: &InFlight<F>, ops: &[F::OpId]) -> RepairView<F> {
        RepairView {
            id: r.id.to_owned(),
            repair: r.repair,
            since: r.since,
            jobs: ops
                .iter()
                .map(|id| {
                    let o = self.op(id);
                    OpView {
                        id: id.clone(),
                        op: o.and_then(|o| o.step),
                        status: o.and_then(|o| o.status),
                        waits_on: o
                            .filter(|o| matches!(o.state, OpState::Running | OpState::Paused))
                            .and_then(|o| o.why.clone()),
                    }
                })
                .collect(),
        }
    }

    /// Makes the repair's marks say exactly `ops` in one pending mark (merging duplicates left
    /// by a crash, recording adopted operations).
    fn canonical_pending(&mut self, r: &InFlight<F>, ops: &[F::OpId]) {
        let words = F::WORDS;
        match F::Marks::render_pending(r.repair, r.id, r.since, ops) {
            Ok(mark) => {
                if r.marks.len() != 1 || r.marks[0] != mark {
                    if !r.marks.contains(&mark.as_str()) {
                        self.add(
                            mark.clone(),
                            &format!("record the repair's {}", words.ops),
                            true,
                        );
                    }
                    for old in &r.marks {
                        if *old != mark {
                            self.remove(
                                old,
                                &format!(
                                    "superseded by the {} that records the {}",
                                    F::Marks::NOUN,
                                    words.ops
                                ),
                                true,
                            );
                        }
                    }
                }
            }
            Err(e) => self.notes.push(format!(
                "cannot record the {} of repair {}: {e}",
                words.ops, r.id
            )),
        }
    }

    fn one_pending(&mut self, r: &InFlight<F>) {
        let words = F::WORDS;
        let RepairOps {
            ops,
            missing,
            foreign,
        } = self.ops_of(r);
        self.pending_views.push(self.view(r, &ops));
        // Judging the other operation would record its outcome as this repair's: what became
        // of ours is unknown, as when it is gone.
        if let Some(given) = foreign.first() {
            self.resolve(
                r,
                r.repair,
                RepairResult::Failure,
                &ops,
                &format!(
                    "{op} {given} is now another {op} (the backend gave its id again): what became of this repair's is unknown",
                    op = words.op
                ),
            );
            return;
        }
        if let Some(gone) = missing.first() {
            self.resolve(
                r,
                r.repair,
                RepairResult::Failure,
                &ops,
                &format!("{} {gone} {}", words.op, words.op_vanished),
            );
            return;
        }
        let age = self.ctx.now - r.since;
        let too_old = age > self.ctx.limits.max_repair_age.as_secs() as i64;
        if ops.is_empty() {
            // A request never expires: it is a permission waiting for its moment.
            return self.not_started(r);
        }
        match self.judge(r, &ops) {
            Verdict::Running(why) => {
                self.active = true;
                self.notes.push(match why {
                    Some(why) => format!("repair {} ({}) is under way: {why}", r.id, r.repair),
                    None => format!("repair {} ({}) is running", r.id, r.repair),
                });
                self.canonical_pending(r, &ops);
            }
            Verdict::Paused => {
                // Paused, it runs nothing: it keeps no slot from other targets.
                self.hold = true;
                let (blocked, why) = self
                    .blocked()
                    .unwrap_or_else(|| (Blocked::Suspended, "its target is suspended".into()));
                self.block(blocked);
                self.notes
                    .push(format!("repair {} ({}) is paused: {why}", r.id, r.repair));
                self.canonical_pending(r, &ops);
            }
            Verdict::Succeeded(kept) => self.resolve(
                r,
                r.repair,
                RepairResult::Success,
                &kept,
                &format!("all its {} succeeded", words.ops),
            ),
            Verdict::Failed(why, kept) => {
                self.resolve(r, r.repair, RepairResult::Failure, &kept, &why)
            }
            Verdict::Submit {
                from,
                keep,
                not_before,
                all_ops,
            } => {
                let retry = not_before.is_some();
                // A chain cut short by a crash keeps its slot; a repair waiting to retry for
                // lack of resources runs nothing, so it frees its slot for others meanwhile and
                // competes for one again when its retry is due.
                // Only retries for lack of resources can go on forever; they get a deadline.
                if too_old && retry {
                    let why =
                        format!("still lacking resources {age}s after it started (max_repair_age)");
                    return self.resolve(r, r.repair, RepairResult::Failure, &all_ops, &why);
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
                    return self.canonical_pending(r, &all_ops);
                }
                if let Some(why) = self.other_running(r.id) {
                    self.block(Blocked::OtherRepair);
                    self.notes.push(format!("repair {} waits: {why}", r.id));
                    return self.canonical_pending(r, &all_ops);
                }
                if let Some((blocked, why)) = self.blocked() {
                    // Paused, it runs nothing: it keeps no slot from other targets.
                    self.block(blocked);
                    self.active = false;
                    self.notes.push(format!("repair {} is paused: {why}", r.id));
                    return self.canonical_pending(r, &all_ops);
                }
                let steps = &F::chain(self.target, r.repair)
                    .expect("judge only asks to submit along a chain")[from..];
                self.propose(
                    r.id,
                    r.repair,
                    r.since,
                    keep,
                    steps,
                    None,
                    r.marks.clone(),
                    if retry {
                        StartKind::Retry
                    } else {
                        StartKind::Continuation
                    },
                );
                if retry && self.candidate.is_none() {
                    self.canonical_pending(r, &all_ops);
                }
            }
        }
    }

    /// A pending mark with no operation anywhere: an external once-off request, or a start
    /// that crashed before submitting.
    fn not_started(&mut self, r: &InFlight<F>) {
        if let Some(why) = self.other_running(r.id) {
            self.block(Blocked::OtherRepair);
            self.active = true;
            self.hold = true;
            self.notes.push(format!("request {} waits: {why}", r.id));
            return;
        }
        if let Some((blocked, why)) = self.blocked().or_else(|| {
            // A request after a failure waits out the back-off as a policy's repair would:
            // the tool that drops requests may be what keeps failing.
            self.health.is_broken().then(|| self.retry_wait()).flatten()
        }) {
            self.block(blocked);
            self.notes.push(format!("request {} waits: {why}", r.id));
            self.hold = true;
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
                let steps = F::chain(self.target, t).expect("every needed repair has a chain");
                // The repair starts now, and its mark says so (level and time) before any
                // operation exists: a pass that dies after submitting must judge the operations
                // against the repair really chosen, not the request's upper bound.
                let first = match F::Marks::render_pending(t, r.id, self.ctx.now, &[]) {
                    Ok(mark) => mark,
                    Err(e) => {
                        self.notes
                            .push(format!("cannot write a pending {}: {e}", F::Marks::NOUN));
                        self.block(Blocked::Unrecordable);
                        self.hold = true;
                        return;
                    }
                };
                let replaces: Vec<&str> =
                    r.marks.iter().copied().filter(|t| **t != first).collect();
                let first = (!r.marks.contains(&first.as_str())).then_some(first);
                self.propose(
                    r.id,
                    t,
                    self.ctx.now,
                    vec![],
                    steps,
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

    fn busy(&self) -> bool {
        self.active || self.hold || self.candidate.is_some()
    }

    /// An unfinished operation of the watcher's on this target that belongs to another repair
    /// than `id` (its marks may not be written yet): nothing else may start beside it.
    fn other_running(&self, id: &str) -> Option<String> {
        let index = &self.ctx.index;
        let running = index.unfinished_by_target.get(self.name)?;
        running
            .iter()
            .map(|i| &index.ops[*i])
            .find(|o| o.repair != Some(id))
            .map(|o| {
                format!(
                    "{} {} of repair {} is still running",
                    F::WORDS.op,
                    o.id,
                    o.repair.unwrap_or("?")
                )
            })
    }

    /// Why no operation may be submitted for this target now, if anything forbids it.
    fn blocked(&self) -> Option<(Blocked<F>, String)> {
        if let Some(why) = self.parked() {
            return Some((Blocked::Parked, why));
        }
        if let Some(held) = self.held_unreadable() {
            return Some(held);
        }
        self.suspended()
            .map(|p| (Blocked::Suspended, p.to_string()))
    }

    /// Why an unreadable pending or result mark holds the target, if one does.
    fn held_unreadable(&self) -> Option<(Blocked<F>, String)> {
        let (text, mark) = self.unreadable?;
        let what = match mark {
            Governs::Pending => "counts as a repair under way",
            _ => "parks it as a failure result would",
        };
        Some((
            Blocked::Unreadable { mark },
            format!(
                "the unreadable {mark} {noun} {text:?} {what} until it is fixed or cleared",
                noun = F::Marks::NOUN
            ),
        ))
    }

    /// Builds the operations for `steps` against the target as it is now and offers them as
    /// a candidate; the fleet-wide limits decide later whether it starts.
    #[allow(clippy::too_many_arguments)]
    fn propose(
        &mut self,
        id: &str,
        repair: F::Level,
        since: i64,
        keep: Vec<F::OpId>,
        steps: &[F::Step],
        write_first: Option<String>,
        replaces: Vec<&str>,
        kind: StartKind,
    ) {
        let ops = match F::build_ops(&self.ctx.index.family, self.target, steps) {
            Ok(ops) => ops,
            Err(why) => {
                self.notes
                    .push(format!("{repair} repair cannot be submitted now: {why}"));
                let under_way = matches!(kind, StartKind::Continuation | StartKind::Retry);
                self.block(Blocked::CannotSubmit {
                    since: under_way.then_some(since),
                });
                // A repair under way (no first mark to write) keeps others from starting.
                if write_first.is_none() {
                    self.hold = true;
                }
                return;
            }
        };
        let what: Vec<String> = ops.iter().map(F::Op::to_string).collect();
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
                target: self.name.to_owned(),
                repair,
                id: id.to_owned(),
                since,
                write_first,
                keep_jobs: keep,
                ops,
                replaces: replaces.into_iter().map(str::to_owned).collect(),
                reason: reason_for(id),
            },
            kind,
            note,
        });
    }

    /// No pending repair is left: decide from health and policy alone.
    fn fresh(&mut self) {
        let words = F::WORDS;
        let index = &self.ctx.index;
        if let Some(u) = index.unrecorded.get(self.name) {
            // Bookkeeping, not a start: the operation runs whatever policy or limits say, and
            // from now on it ends as a repair with a result, like any other.
            self.block(Blocked::OtherRepair);
            self.active = true;
            let why = format!(
                "{} {} is under way with no {} recording it: adopted as repair {}",
                words.op,
                u.op,
                F::Marks::NOUN,
                u.repair
            );
            match F::Marks::render_pending(
                u.level,
                &u.repair,
                self.ctx.now,
                std::slice::from_ref(&u.op),
            ) {
                Ok(mark) => {
                    self.add(mark, &why, true);
                    self.notes.push(why);
                }
                Err(e) => self.notes.push(format!("cannot adopt {}: {e}", u.op)),
            }
            return;
        }
        let own_ops = index.unfinished_by_target.get(self.name);
        if let Some(&i) = own_ops.and_then(|v| v.first()) {
            let o = &index.ops[i];
            self.block(Blocked::OtherRepair);
            self.active = true;
            self.notes.push(format!(
                "{} {} of repair {} is still unfinished though no pending {noun} names it (its {noun} write may still be queued): nothing new starts",
                words.op,
                o.id,
                o.repair.unwrap_or("?"),
                noun = F::Marks::NOUN,
            ));
            return;
        }
        if let Some(why) = self.parked() {
            self.block(Blocked::Parked);
            self.notes
                .push(format!("{why}: investigate, then `autorepair clear` it"));
            return;
        }
        // It takes no failure-domain slot by itself: an operation of ours still running on
        // the target took one above, and a mark alone would hold every slot of the fleet
        // until a person came.
        if let Some((blocked, why)) = self.held_unreadable() {
            self.block(blocked);
            self.notes.push(format!("nothing new starts: {why}"));
            return;
        }
        if let Some(p) = self.suspended() {
            if self.health.is_broken() {
                self.block(Blocked::Suspended);
                self.notes.push(format!("no repair starts: {p}"));
            }
            return;
        }
        if self.health.is_broken()
            && let Some((blocked, why)) = self.retry_wait()
        {
            self.block(blocked);
            self.notes.push(format!("no repair starts yet: {why}"));
            return;
        }
        match self.health.clone() {
            Health::Healthy => {}
            Health::Broken {
                need: Need::Person(why),
                ..
            } => {
                self.block(Blocked::NeedsPerson);
                // A standing request that no automatic repair can serve ends as a failure, as
                // a request mark would: written once, it parks the target until cleared.
                if let Some(level) = self.standing {
                    let id = self.ctx.ids.make(self.name, "failure");
                    match F::Marks::render_result(
                        level,
                        &id,
                        self.ctx.now,
                        RepairResult::Failure,
                        &[],
                    ) {
                        Ok(mark) => self.add(
                            mark,
                            &format!("requested {level}, but no automatic repair: {why}"),
                            false,
                        ),
                        Err(e) => self.notes.push(format!("cannot write the failure: {e}")),
                    }
                }
            }
            Health::Broken {
                need: Need::Repair(t),
                ..
            } => {
                // A standing request allows up to its level by itself; a policy may allow more.
                let allowed = self
                    .effective
                    .and_then(|e| e.policy().allowed())
                    .max(self.standing);
                if allowed.is_some_and(|a| t <= a) {
                    // Only the policy escalates: a standing request allows what it asked for.
                    let policy = self.effective.and_then(|e| e.policy().allowed());
                    let t = self.escalated(t, policy);
                    let id = self
                        .ctx
                        .ids
                        .start(self.name, self.domain.unwrap_or(self.home));
                    let first = match F::Marks::render_pending(t, &id, self.ctx.now, &[]) {
                        Ok(mark) => mark,
                        Err(e) => {
                            self.block(Blocked::Unrecordable);
                            self.notes
                                .push(format!("cannot write a pending {}: {e}", F::Marks::NOUN));
                            return;
                        }
                    };
                    let steps = F::chain(self.target, t).expect("every needed repair has a chain");
                    self.propose(
                        &id,
                        t,
                        self.ctx.now,
                        vec![],
                        steps,
                        Some(first),
                        vec![],
                        StartKind::Fresh,
                    );
                } else if self.effective.is_none() && self.standing.is_none() {
                    // The spec's enoperm is for targets whose policy is too weak; a target
                    // nobody put under autorepair is not its business at all.
                    self.block(Blocked::NoPolicy);
                    self.notes.push(format!(
                        "needs {t}, but no policy is set on it, {}: autorepair writes nothing on it",
                        words.scopes
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
                        let id = self.ctx.ids.make(self.name, "enoperm");
                        match F::Marks::render_result(
                            t,
                            &id,
                            self.ctx.now,
                            RepairResult::Enoperm,
                            &[],
                        ) {
                            Ok(mark) => self.add(
                                mark,
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
    /// describes the target stays so it is not written again. A result a rate window still
    /// counts stays past the retention period: pruned, its repair would drop out of the
    /// window's count, and the next pass could start one more than the rate allows.
    fn prune_results(&mut self) {
        let limits = self.ctx.limits;
        let retained = limits.result_retention.as_secs();
        let counted = [limits.max_repair_rate, limits.max_repair_rate_per_group]
            .iter()
            .flatten()
            .map(|r| r.window.as_secs())
            .max()
            .unwrap_or(0);
        let kept_for = i64::try_from(retained.max(counted)).unwrap_or(i64::MAX);
        let oldest_kept = self.ctx.now.saturating_sub(kept_for);
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

    fn finish(self, facts: F::Facts) -> (TargetPlan<F>, TargetEval<'a, F>) {
        // A failure that will be retried leaves the target needing repair, not failed.
        let failed = self.has_failure()
            && matches!(
                Retry::of(&self.streak_of(true), self.retries, 0),
                Retry::Parked { .. }
            )
            || matches!(self.unreadable, Some((_, Governs::Result)));
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
        // A scope's note was rendered once per pass: only a target's own policy is formatted
        // here.
        let (policy_source, policy_text) = match effective {
            Some(Eff::Shared(s)) => (s.source.clone(), s.note.clone()),
            Some(Eff::Own(p)) => (
                Text::Owned(self.object().to_string()),
                Text::Owned(policy_note(p, &self.object())),
            ),
            None => (Text::Static("none"), self.ctx.index.no_policy_note.clone()),
        };
        notes.push(policy_text);
        notes.extend(self.notes.into_iter().map(Text::Owned));
        let index = &self.ctx.index;
        let history = self
            .results
            .iter()
            .filter(|(text, _)| !text.is_empty())
            .map(|(_, r)| HistoryEntry {
                repair: r.repair,
                id: r.id.to_owned(),
                at: r.at,
                result: r.result,
                jobs: r.ops.to_vec(),
                why: (r.result == RepairResult::Failure)
                    .then(|| {
                        r.ops
                            .iter::<F::OpId>()
                            .filter_map(|id| index.op(&id))
                            .find(|o| o.state != OpState::Succeeded)
                            .map(failure_of)
                    })
                    .flatten(),
            })
            .collect();
        // The state now, from the marks and domains as read: what this pass does is `next`.
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
            name: self.name.to_owned(),
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
            facts,
            domain: None,
            next: Next::Nothing,
            blocked: self.blocked,
        };
        let domain = self
            .domain
            .or((self.active || self.candidate.is_some()).then_some(self.home));
        let eval = TargetEval {
            broken: self.health.is_broken(),
            active: self.active,
            candidate: self.candidate.map(Box::new),
            adds: self.adds,
            removes: self.removes,
            halt_key: self.halt_key,
            domain,
            home: self.home,
            starts: self.starts,
        };
        (plan, eval)
    }
}

/// A configured duration in the clock's seconds; one past the clock is forever.
fn secs(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
}

/// What an operation that ended without success said; the family words it.
fn failure_of<F: Family>(o: &Operation<F>) -> String {
    o.why
        .clone()
        .unwrap_or_else(|| format!("{} {} did not succeed", F::WORDS.op, o.id))
}
