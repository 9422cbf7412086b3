//! The oracle: the safety rules (docs/design.md), checked after every pass from what the
//! world says and what the watcher did to it. Deliberately not the planner's code: policy,
//! suspends, permissions, limits and failure domains are read again from the raw marks and the
//! world's own facts, with simpler rules than the planner's, so that a planner bug is not
//! repeated here.

use super::{Broken, CallLog, OpRun, PASS_SECONDS, Planner, SimConfig, Violation, World};
use crate::family::{Family, Health, Need};
use crate::limits::Limits;
use crate::marks::{Codec, Governs, Mark, RepairResult};
use crate::plan::{Blocked, REASON_PREFIX, State};
use std::collections::{BTreeMap, BTreeSet, HashSet};

type F<W> = <W as World>::Family;
type Level<W> = <F<W> as Family>::Level;
type Target<W> = <F<W> as Family>::Target;

fn parse<W: World>(mark: &str) -> Option<Mark<'_, Level<W>>> {
    <F<W> as Family>::Marks::parse(mark).ok()
}

/// What a mark of ours that the codec cannot parse would govern (rule 11), from the codec's
/// error alone.
fn unreadable<W: World>(mark: &str) -> Option<Governs> {
    <F<W> as Family>::Marks::parse(mark)
        .err()
        .map(|e| e.governs)
}

/// Whether an unreadable mark holds the target: any on the target itself (a suspend or policy
/// allows nothing there, a pending one is a repair under way, a result parks it), or an
/// unreadable suspend-all on one of its scopes.
fn held_unreadable<W: World>(fleet: &W::Fleet, t: &Target<W>) -> bool {
    <F<W>>::marks(t)
        .iter()
        .any(|m| unreadable::<W>(m).is_some())
        || W::scope_marks(fleet, t).into_iter().any(|marks| {
            marks
                .iter()
                .any(|m| unreadable::<W>(m) == Some(Governs::Suspend { all: true }))
        })
}

/// The first target of that name, as backends find it.
fn target<'f, W: World>(fleet: &'f W::Fleet, name: &str) -> Option<&'f Target<W>> {
    <F<W>>::targets(fleet)
        .iter()
        .find(|t| <F<W>>::name(t) == name)
}

/// One object's policy: `None` no policy mark, `Some(None)` suspended, `Some(Some(l))` repairs
/// up to `l`. Worlds whose own rules ask for it use this one too.
pub fn object_policy<W: World>(marks: &[String], now: i64) -> Option<Option<Level<W>>> {
    let parsed: Vec<Mark<'_, Level<W>>> = marks.iter().filter_map(|m| parse::<W>(m)).collect();
    // An unreadable suspend or policy allows nothing on its object (rule 11).
    let held = marks.iter().any(|m| {
        matches!(
            unreadable::<W>(m),
            Some(Governs::Suspend { .. } | Governs::Policy | Governs::Unknown)
        )
    });
    let suspended = held
        || parsed.iter().any(|m| match m {
            Mark::Suspend { until: None, .. } => true,
            Mark::Suspend { until: Some(u), .. } => *u > now,
            _ => false,
        });
    if suspended {
        return Some(None);
    }
    parsed
        .iter()
        .filter_map(|m| match m {
            Mark::Policy(l) => Some(*l),
            _ => None,
        })
        .min()
        .map(Some)
}

/// The target's effective policy ([`object_policy`]), nearest wins: its own marks, then its
/// scopes' ([`World::scope_marks`]).
pub fn policy<W: World>(fleet: &W::Fleet, t: &Target<W>, now: i64) -> Option<Option<Level<W>>> {
    std::iter::once(<F<W>>::marks(t))
        .chain(W::scope_marks(fleet, t))
        .find_map(|marks| object_policy::<W>(marks, now))
}

fn has_failure<W: World>(marks: &[String]) -> bool {
    marks.iter().any(
        |m| matches!(parse::<W>(m), Some(Mark::Result(r)) if r.result == RepairResult::Failure),
    )
}

/// Rule 13's retries, read more loosely than the planner reads them so that only a real
/// breach is reported: the failures after the newest success count (the planner's count
/// starts afresh only after a success the target outlived); more than `retries` of them park
/// the target, and nothing starts within `retry_backoff` of the newest (the planner doubles
/// it). Without retries, any failure parks.
fn retry_refused<W: World>(marks: &[String], limits: &Limits, now: i64) -> Option<&'static str> {
    let results: Vec<(i64, RepairResult)> = marks
        .iter()
        .filter_map(|m| match parse::<W>(m) {
            Some(Mark::Result(r)) => Some((r.at, r.result)),
            _ => None,
        })
        .collect();
    let newest_success = results
        .iter()
        .filter(|(_, r)| *r == RepairResult::Success)
        .map(|(at, _)| *at)
        .max();
    let failures: Vec<i64> = results
        .iter()
        .filter(|(at, r)| {
            *r == RepairResult::Failure
                && (limits.retries == 0 || newest_success.is_none_or(|s| *at > s))
        })
        .map(|(at, _)| *at)
        .collect();
    if failures.len() > limits.retries as usize {
        return Some("repair on a target parked by a failure");
    }
    let backoff = limits.retry_backoff.as_secs() as i64;
    failures
        .iter()
        .max()
        .filter(|last| now < last.saturating_add(backoff))
        .map(|_| "repair within retry_backoff of a failure")
}

fn broken_count<W: World>(world: &W, fleet: &W::Fleet, now: i64) -> usize {
    <F<W>>::targets(fleet)
        .iter()
        .filter(|t| world.health(fleet, t, now).is_broken())
        .count()
}

/// A mass failure that holds `target` (or, with `None`, the whole fleet): too many down
/// domains in its scope or the fleet, or too many broken targets when that brake is set.
fn mass_failure<W: World>(
    world: &W,
    fleet: &W::Fleet,
    limits: &Limits,
    target: Option<&Target<W>>,
    now: i64,
) -> bool {
    let down = W::down_domains(fleet, now);
    if down.len() > limits.max_down_nodes
        || limits
            .max_broken
            .is_some_and(|max| broken_count::<W>(world, fleet, now) > max)
    {
        return true;
    }
    target
        .and_then(|t| W::limit_scope(fleet, t))
        .is_some_and(|s| {
            down.iter().filter(|d| d.scope == s).count() > limits.max_down_nodes_per_group
        })
}

/// Whether autorepair does not own the mark: another tool's, or one it cannot read (a
/// malformed mark is linted and otherwise left alone).
fn not_ours<W: World>(mark: &str) -> bool {
    matches!(parse::<W>(mark), None | Some(Mark::Foreign))
}

/// The marks autorepair does not own and the failure results, per object.
fn foreign_and_failure_marks<W: World>(fleet: &W::Fleet) -> [BTreeMap<String, Vec<&str>>; 2] {
    let [mut foreign, mut failures] = [BTreeMap::new(), BTreeMap::new()];
    // An object with none of the marks kept is left out: one that comes or goes (a Node
    // deleted and made again) without any changes none.
    for (key, marks) in W::marked_objects(fleet) {
        let (mut f, mut r): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
        for m in marks.iter().map(String::as_str) {
            match parse::<W>(m) {
                None | Some(Mark::Foreign) => f.push(m),
                Some(Mark::Result(x)) if x.result == RepairResult::Failure => r.push(m),
                Some(_) => {}
            }
        }
        for (mut kept, into) in [(f, &mut foreign), (r, &mut failures)] {
            if !kept.is_empty() {
                kept.sort_unstable();
                into.insert(key.clone(), kept);
            }
        }
    }
    [foreign, failures]
}

fn sorted(marks: &[String]) -> Vec<&str> {
    let mut v: Vec<&str> = marks.iter().map(String::as_str).collect();
    v.sort_unstable();
    v
}

/// What a pass changed of one object's marks, counting repeats.
#[derive(Default)]
struct Changed<'b, 'a> {
    /// In order; with whether no copy of it is left.
    gone: Vec<(&'b str, bool)>,
    came: Vec<&'a str>,
}

/// The marks each object has on one side of the pass only: all that rule 4 and the failure
/// results need to read, since an unchanged mark can have changed neither. Reading every mark
/// of both fleets instead was most of a large fleet's check.
fn changed_marks<'b, 'a, W: World>(
    before: &'b W::Fleet,
    after: &'a W::Fleet,
) -> BTreeMap<String, Changed<'b, 'a>> {
    // By key, as the rules compare them: where a key repeats, its last object's marks.
    let before_by_key: BTreeMap<String, &'b [String]> =
        W::marked_objects(before).into_iter().collect();
    let mut after_by_key: BTreeMap<String, &'a [String]> =
        W::marked_objects(after).into_iter().collect();
    let mut out = BTreeMap::new();
    for (key, b) in before_by_key {
        let a = after_by_key.remove(&key).unwrap_or(&[]);
        if b == a {
            continue;
        }
        let (b, a) = (sorted(b), sorted(a));
        let mut changed = Changed::default();
        let (mut i, mut j) = (0, 0);
        loop {
            match (b.get(i), a.get(j)) {
                (Some(x), Some(y)) if x == y => (i, j) = (i + 1, j + 1),
                (Some(x), Some(y)) if x > y => {
                    changed.came.push(y);
                    j += 1;
                }
                (Some(x), _) => {
                    changed.gone.push((x, a.binary_search(x).is_err()));
                    i += 1;
                }
                (None, Some(y)) => {
                    changed.came.push(y);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        if !changed.gone.is_empty() || !changed.came.is_empty() {
            out.insert(key, changed);
        }
    }
    for (key, a) in after_by_key.into_iter().filter(|(_, a)| !a.is_empty()) {
        out.insert(
            key,
            Changed {
                gone: Vec::new(),
                came: a.iter().map(String::as_str).collect(),
            },
        );
    }
    out
}

/// Rule 13's storm cool-down as the world went through it, pass by pass: the truth the
/// planner can only estimate from the times domains came back. A scope's storm is more down
/// domains than its limit at a pass. The world is seen only at each pass's start, and a
/// domain may come back during the pass that last saw the storm (a watcher's result ends the
/// repair that kept it down): so the storm ended no earlier than that pass, and new repairs
/// must wait `storm_cooldown` from there. Counts only (a share limit is left to the planner's
/// tests), as [`mass_failure`] counts.
#[derive(Default)]
pub(super) struct Storms {
    fleet: Storm,
    scopes: BTreeMap<String, Storm>,
}

#[derive(Clone, Copy, Default)]
struct Storm {
    raging: bool,
    last_seen: i64,
    cool_until: i64,
}

impl Storm {
    fn observe(&mut self, storm: bool, now: i64, cooldown: i64) {
        if storm {
            self.raging = true;
            self.last_seen = now;
        } else if self.raging {
            self.raging = false;
            self.cool_until = self.last_seen.saturating_add(cooldown);
        }
    }

    fn cooling(self, now: i64) -> bool {
        !self.raging && now < self.cool_until
    }
}

impl Storms {
    /// The world as the pass at `now` finds it (its faults applied, before any watcher acts).
    pub(super) fn observe<W: World>(&mut self, fleet: &W::Fleet, limits: &Limits, now: i64) {
        let Some(cooldown) = limits.storm_cooldown else {
            return;
        };
        let cooldown = i64::try_from(cooldown.as_secs()).unwrap_or(i64::MAX);
        let down = W::storm_domains(fleet, now);
        self.fleet
            .observe(down.len() > limits.max_down_nodes, now, cooldown);
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for d in &down {
            *counts.entry(d.scope).or_default() += 1;
        }
        for (scope, n) in &counts {
            self.scopes.entry((*scope).to_owned()).or_default().observe(
                *n > limits.max_down_nodes_per_group,
                now,
                cooldown,
            );
        }
        for (scope, storm) in &mut self.scopes {
            if !counts.contains_key(scope.as_str()) {
                storm.observe(false, now, cooldown);
            }
        }
    }

    fn holds(&self, scope: Option<&str>, now: i64) -> bool {
        self.fleet.cooling(now)
            || scope
                .and_then(|s| self.scopes.get(s))
                .is_some_and(|s| s.cooling(now))
    }
}

/// No repair starts (a first operation of a repair that had no pending mark before the pass)
/// in a scope cooling down after a storm.
fn cooldown_rule<W: World>(
    before: &W::Fleet,
    log: &CallLog<F<W>>,
    storms: &Storms,
    now: i64,
) -> Result<(), Broken> {
    for s in &log.submitted {
        let Some(t) = target::<W>(before, &s.target) else {
            continue;
        };
        let id = s.reason.strip_prefix(REASON_PREFIX).unwrap_or(&s.reason);
        let under_way = <F<W>>::marks(t)
            .iter()
            .any(|m| matches!(parse::<W>(m), Some(Mark::Pending(p)) if p.id == id));
        if !under_way && storms.holds(W::limit_scope(before, t), now) {
            return Err(Broken::new(
                "repair started in a storm's cool-down",
                format!(
                    "{} {} ({}) on {}",
                    <F<W>>::WORDS.op,
                    s.id,
                    <F<W>>::step_of(&s.op),
                    s.target
                ),
            ));
        }
    }
    Ok(())
}

/// Checks the safety rules for one pass: `before` is the fleet the watcher read, the world's
/// fleet now is what the watcher left (before time passed). The engine's rules first, then
/// the family's own ([`World::check_pass`]).
pub(super) fn check_pass<W: World>(
    world: &mut W,
    before: &W::Fleet,
    log: &CallLog<F<W>>,
    storms: &Storms,
    limits: &Limits,
    now: i64,
) -> Result<(), Broken> {
    engine_rules::<W>(&*world, before, world.fleet(), log, limits, now)?;
    cooldown_rule::<W>(before, log, storms, now)?;
    world.check_pass(before, log, now)
}

fn engine_rules<W: World>(
    world: &W,
    before: &W::Fleet,
    after: &W::Fleet,
    log: &CallLog<F<W>>,
    limits: &Limits,
    now: i64,
) -> Result<(), Broken> {
    let words = <F<W>>::WORDS;
    let noun = <F<W> as Family>::Marks::NOUN;
    let fail = |rule: &str, detail: String| Err(Broken::new(rule, detail));
    let repair_of = |reason: &'_ str| -> String {
        reason
            .strip_prefix(REASON_PREFIX)
            .unwrap_or(reason)
            .to_owned()
    };
    // Rule 3: only a failed attempt at a step may be retried. Looking at the world after the
    // pass also catches two attempts submitted in the same pass.
    let ops_after = W::ops(after, now);
    for s in &log.submitted {
        let id = repair_of(&s.reason);
        let step = <F<W>>::step_of(&s.op);
        if let Some(o) = ops_after.iter().find(|o| {
            o.id != s.id
                && o.repair == Some(id.as_str())
                && o.step == Some(step)
                && o.run != OpRun::Failed
        }) {
            return fail(
                &format!("{} submitted twice", words.op),
                format!(
                    "{step} of {id} on {} submitted again while {} {} is {:?}",
                    s.target, words.op, o.id, o.run
                ),
            );
        }
    }
    // Rules 1 and 2, for every operation started.
    for s in &log.submitted {
        let t = target::<W>(before, &s.target);
        let what = format!(
            "{} {} ({}) on {}",
            words.op,
            s.id,
            <F<W>>::step_of(&s.op),
            s.target
        );
        if mass_failure::<W>(world, before, limits, t, now) {
            return fail("started while the fleet-wide limit was exceeded", what);
        }
        let id = repair_of(&s.reason);
        let marks_before = t.map_or(&[][..], <F<W>>::marks);
        let granted_by_pending = marks_before
            .iter()
            .filter_map(|m| match parse::<W>(m) {
                Some(Mark::Pending(p)) if p.id == id => Some(p.repair),
                _ => None,
            })
            .max();
        if t.is_some_and(|t| held_unreadable::<W>(before, t)) {
            return fail("repair on a target held by an unreadable mark", what);
        }
        let policy = t.and_then(|t| policy::<W>(before, t, now));
        if policy == Some(None) {
            return fail("repair on a suspended target", what);
        }
        if let Some(rule) = retry_refused::<W>(marks_before, limits, now) {
            return fail(rule, what);
        }
        let standing = t.and_then(|t| W::granted(before, t));
        let allowed = policy.flatten().max(granted_by_pending).max(standing);
        let level = W::level_of(&s.op);
        if allowed.is_none_or(|a| level > a) {
            return fail(
                "repair above the allowed level",
                format!("{what}: level {level}, allowed {allowed:?}"),
            );
        }
    }
    // Rule 13's rate windows, fleet-wide and per limiter scope, read loosely: the domains the
    // planner's own ids record in the window, plus one of slack for each repair whose id says
    // nothing (a request's: the planner counts it in its target's domain, which the oracle
    // does not know); a start may open a new domain only while fewer were counted.
    let count_only = |r: &Option<crate::limits::Rate>| {
        r.filter(|r| matches!(r.bound, crate::limits::Bound::Count(_)))
    };
    let mut windows: Vec<(crate::limits::Rate, &str, Option<&str>)> = Vec::new();
    if let Some(rate) = count_only(&limits.max_repair_rate) {
        windows.push((rate, "max_repair_rate", None));
    }
    if let Some(rate) = count_only(&limits.max_repair_rate_per_group) {
        let scopes: BTreeSet<&str> = <F<W>>::targets(before)
            .iter()
            .filter_map(|t| W::limit_scope(before, t))
            .collect();
        windows.extend(
            scopes
                .into_iter()
                .map(|s| (rate, "max_repair_rate_per_group", Some(s))),
        );
    }
    for (rate, key, scope) in windows {
        let within = |t: &Target<W>| scope.is_none() || W::limit_scope(before, t) == scope;
        let window = rate.window_secs();
        let in_window = |at: i64| at <= now && now.saturating_sub(at) < window;
        let mut counted: BTreeSet<u32> = BTreeSet::new();
        let mut slack: BTreeSet<&str> = BTreeSet::new();
        let marks = <F<W>>::targets(before)
            .iter()
            .filter(|t| within(t))
            .flat_map(<F<W>>::marks);
        for m in marks {
            let (id, at) = match parse::<W>(m) {
                Some(Mark::Pending(p)) => (p.id, p.since),
                Some(Mark::Result(r)) if !r.ops.is_empty() => (r.id, r.at),
                _ => continue,
            };
            match crate::plan::rate::read_id(id) {
                Some((start, d)) if in_window(start) => {
                    counted.insert(d);
                }
                Some(_) => {}
                None if in_window(at) => {
                    slack.insert(id);
                }
                None => {}
            }
        }
        for s in &log.submitted {
            if !target::<W>(before, &s.target).is_some_and(within) {
                continue;
            }
            let id = repair_of(&s.reason);
            let Some((at, domain)) = crate::plan::rate::read_id(&id) else {
                continue;
            };
            if at != now || counted.contains(&domain) {
                continue;
            }
            if counted.len() >= rate.max(0).saturating_add(slack.len()) {
                return fail(
                    &format!("more failure domains newly under repair than {key}"),
                    format!(
                        "{} newly under repair ({id}) with {} counted in the last {}s in {}, {key} = {rate}",
                        s.target,
                        counted.len(),
                        window,
                        scope.unwrap_or("the fleet")
                    ),
                );
            }
            counted.insert(domain);
        }
    }
    // Repairs under way right after the pass; a paused one is still its target's repair.
    let mut unfinished: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut running: BTreeSet<&str> = BTreeSet::new();
    for o in &ops_after {
        if let (Some(id), Some(t), OpRun::Running | OpRun::Paused) = (o.repair, o.target, o.run) {
            unfinished.entry(t).or_default().insert(id);
            if o.run == OpRun::Running {
                running.insert(id);
            }
        }
    }
    if let Some((t, ids)) = unfinished.iter().find(|(_, ids)| ids.len() > 1) {
        return fail("two repairs at once on one target", format!("{t}: {ids:?}"));
    }
    let total = running.len();
    if let Some(cap) = limits.max_pending.filter(|cap| total > *cap) {
        return fail(
            "more repairs under way than max_pending",
            format!("{total} > {cap}"),
        );
    }
    // Failure domains: new repairs (ids with no operation before this pass) may open domains
    // only while fewer than the limit had repairs running.
    let ops_before = W::ops(before, now);
    let running_before: BTreeSet<&str> = ops_before
        .iter()
        .filter(|o| o.repair.is_some() && o.run == OpRun::Running)
        .filter_map(|o| target::<W>(before, o.target?))
        .map(|t| W::domain(before, t))
        .collect();
    // The repairs whose pending mark records operations, read once for all the questions
    // below: reading every mark again for each of them was most of a large fleet's check.
    let recorded = std::cell::OnceCell::new();
    let had_ops = |id: &str| {
        ops_before.iter().any(|o| o.repair == Some(id))
            || recorded
                .get_or_init(|| {
                    <F<W>>::targets(before)
                        .iter()
                        .flat_map(<F<W>>::marks)
                        .filter_map(|m| match parse::<W>(m) {
                            Some(Mark::Pending(p)) if !p.ops.is_empty() => Some(p.id),
                            _ => None,
                        })
                        .collect::<HashSet<&str>>()
                })
                .contains(id)
    };
    let opened: BTreeSet<&str> = log
        .submitted
        .iter()
        .filter(|s| !had_ops(&repair_of(&s.reason)))
        .filter_map(|s| target::<W>(before, &s.target))
        .map(|t| W::domain(before, t))
        .filter(|d| !running_before.contains(d))
        .collect();
    if !opened.is_empty() && running_before.len() + opened.len() > limits.max_domains_under_repair {
        return fail(
            "more failure domains under repair than max_domains_under_repair",
            format!("{running_before:?} were running, {opened:?} opened"),
        );
    }
    // A mass failure writes nothing but the bookkeeping of repairs under way.
    for (object, mark) in log.added.iter().chain(&log.removed) {
        let held = if object.is(words.target) {
            mass_failure::<W>(
                world,
                before,
                limits,
                target::<W>(before, &object.name),
                now,
            )
        } else {
            mass_failure::<W>(world, before, limits, None, now)
        };
        let bookkeeping = match parse::<W>(mark) {
            Some(Mark::Pending(p)) => !p.ops.is_empty() || had_ops(p.id),
            Some(Mark::Result(r)) => r.result != RepairResult::Enoperm && had_ops(r.id),
            _ => false,
        };
        if held && !bookkeeping {
            return fail(
                &format!("{noun} written during a mass failure"),
                format!("{object}: {mark}"),
            );
        }
    }
    // Rule 4.
    let changed = changed_marks::<W>(before, after);
    let foreign_changed = changed.values().any(|c| {
        c.gone.iter().any(|(m, _)| not_ours::<W>(m)) || c.came.iter().any(|m| not_ours::<W>(m))
    });
    if foreign_changed {
        let [foreign_before, _] = foreign_and_failure_marks::<W>(before);
        let [foreign_after, _] = foreign_and_failure_marks::<W>(after);
        let differs = |a: &BTreeMap<String, Vec<&str>>, b: &BTreeMap<String, Vec<&str>>| {
            a.iter()
                .find(|(k, v)| b.get(*k) != Some(v))
                .map(|(k, _)| k.clone())
        };
        let changed = differs(&foreign_before, &foreign_after)
            .or_else(|| differs(&foreign_after, &foreign_before))
            .map_or_else(String::new, |k| format!(": {k}"));
        return fail(
            &format!("foreign {noun} touched"),
            format!("{noun}s autorepair does not own changed{changed}"),
        );
    }
    // Where marks are a map, a write to a key the mark holds replaces it without any removal,
    // so what the watcher did is also judged by what it left: foreign marks and failure
    // results the pass began with must all be there after it.
    for (object, mark) in &log.removed {
        if not_ours::<W>(mark) {
            return fail(
                &format!("foreign {noun} touched"),
                format!("the watcher removed {object}: {mark}"),
            );
        }
        if matches!(parse::<W>(mark), Some(Mark::Result(r)) if r.result == RepairResult::Failure) {
            return fail(
                "failure result removed by the watcher",
                format!("{object}: {mark}"),
            );
        }
    }
    let lost = changed.iter().find_map(|(object, c)| {
        c.gone.iter().find_map(|(m, none_left)| {
            (*none_left
                && matches!(parse::<W>(m), Some(Mark::Result(r)) if r.result == RepairResult::Failure))
            .then_some((object, m))
        })
    });
    if let Some((object, mark)) = lost {
        return fail(
            "failure result removed by the watcher",
            format!("{object}: {mark} is gone"),
        );
    }
    for (object, mark) in &log.added {
        match parse::<W>(mark) {
            None | Some(Mark::Foreign) => {
                return fail(
                    &format!("unparseable {noun} written"),
                    format!("{object}: {mark}"),
                );
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// After the quiet passes nothing may still be under way, and every target whose repair is
/// allowed must have been repaired or given up on — unless the fleet is halted, where doing
/// nothing is the rule. The family's own end rules ([`World::check_end`]) hold in any case.
pub(super) fn liveness<W: World>(
    world: &W,
    cfg: &SimConfig,
    planner: Planner<'_, W>,
    pass: usize,
) -> Option<Violation> {
    let now = cfg.start + pass as i64 * PASS_SECONDS;
    engine_liveness::<W>(world, world.fleet(), cfg, planner, pass, now)
        .or_else(|| world.check_end(now).err().map(|broken| broken.at(pass)))
}

fn engine_liveness<W: World>(
    world: &W,
    fleet: &W::Fleet,
    cfg: &SimConfig,
    planner: Planner<'_, W>,
    pass: usize,
    now: i64,
) -> Option<Violation> {
    if mass_failure::<W>(world, fleet, &cfg.limits, None, now) {
        return None;
    }
    let plan = planner(fleet, now, 0);
    let ops = W::ops(fleet, now);
    let mut seen = HashSet::new();
    let duplicated: HashSet<&str> = <F<W>>::targets(fleet)
        .iter()
        .map(<F<W>>::name)
        .filter(|n| !seen.insert(*n))
        .collect();
    let violation = |rule: &str, detail: String| {
        Some(Violation {
            rule: rule.to_owned(),
            pass,
            detail,
        })
    };
    for t in &plan.targets {
        // An ambiguous name is left alone on purpose until a person fixes the fleet data.
        if duplicated.contains(t.name.as_str()) {
            continue;
        }
        let Some(target) = target::<W>(fleet, &t.name) else {
            continue;
        };
        let Health::Broken {
            need: Need::Repair(needed),
            ..
        } = world.health(fleet, target, now)
        else {
            continue;
        };
        if mass_failure::<W>(world, fleet, &cfg.limits, Some(target), now) {
            continue;
        }
        let policy = policy::<W>(fleet, target, now);
        // A standing request allows its level by itself, but a suspend holds it back.
        let allowed = policy.is_none_or(|p| p.is_some())
            && policy
                .flatten()
                .max(W::granted(fleet, target))
                .is_some_and(|a| needed <= a);
        // The quiet phase leaves dead domains dead: a repair with nowhere to go is not
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
        if allowed
            && !has_failure::<W>(<F<W>>::marks(target))
            && !held_unreadable::<W>(fleet, target)
            && !waiting
        {
            return violation(
                "liveness: an allowed repair never happened",
                format!(
                    "{} still needs {needed} ({}) after {} quiet passes: {}",
                    t.name,
                    t.state,
                    cfg.quiet_passes,
                    t.notes.join("; ")
                ),
            );
        }
        let still_running = |id: &<F<W> as Family>::OpId| {
            ops.iter().any(|o| o.id == *id && o.run == OpRun::Running)
        };
        // A suspend pauses what is left of a repair whose steps the watcher drives itself
        // (a family's repair entry, which the watcher's passes advance): that is the person's
        // hold, not a stuck repair.
        if t.state == State::Pending
            && policy != Some(None)
            && t.pending
                .iter()
                .any(|p| p.jobs.iter().any(|j| still_running(&j.id)))
        {
            return violation("liveness: a repair never ended", t.name.clone());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::fixture::FixtureWorld;

    /// One object's marks before and after a pass, and what it changed of them.
    struct Case {
        before: &'static [&'static str],
        after: &'static [&'static str],
        gone: &'static [(&'static str, bool)],
        came: &'static [&'static str],
    }

    /// The marks a pass changed, as the rules read them: repeats counted, order ignored, an
    /// object that went or came changed in all its marks, and a mark gone "with none left"
    /// only when no copy of it stays.
    #[test]
    fn changed_marks_are_what_one_side_has_more_of() {
        let cases = [
            Case {
                before: &["a", "b"],
                after: &["b", "a"],
                gone: &[],
                came: &[],
            },
            Case {
                before: &["a", "b", "b", "c"],
                after: &["c", "b", "d"],
                gone: &[("a", true), ("b", false)],
                came: &["d"],
            },
            Case {
                before: &["x"],
                after: &[],
                gone: &[("x", true)],
                came: &[],
            },
            Case {
                before: &[],
                after: &["y", "y"],
                gone: &[],
                came: &["y", "y"],
            },
            Case {
                before: &["z", "z"],
                after: &["z"],
                gone: &[("z", false)],
                came: &[],
            },
        ];
        for case in cases {
            let mut room = <FixtureWorld as World>::generate(8, 1);
            for b in &mut room.boxes {
                b.marks.clear();
            }
            let mut changed = room.clone();
            room.boxes[0].marks = case.before.iter().map(|m| m.to_string()).collect();
            changed.boxes[0].marks = case.after.iter().map(|m| m.to_string()).collect();
            let diff = changed_marks::<FixtureWorld>(&room, &changed);
            let key = format!("box/{}#0", room.boxes[0].name);
            for (k, c) in &diff {
                let (gone, came) = if *k == key {
                    (case.gone, case.came)
                } else {
                    (&[][..], &[][..])
                };
                assert_eq!(
                    (c.gone.as_slice(), c.came.as_slice()),
                    (gone, came),
                    "{k}: {:?} -> {:?}",
                    case.before,
                    case.after
                );
            }
            let expected = !case.gone.is_empty() || !case.came.is_empty();
            assert_eq!(
                diff.contains_key(&key),
                expected,
                "{:?} -> {:?}",
                case.before,
                case.after
            );
        }
        // A target that is gone took all its marks; one that came brought all its own.
        let room = <FixtureWorld as World>::generate(8, 1);
        let mut fewer = room.clone();
        let went = fewer.boxes.pop().expect("a generated room has boxes");
        let key = format!("box/{}#{}", went.name, room.boxes.len() - 1);
        let diff = changed_marks::<FixtureWorld>(&room, &fewer);
        assert_eq!(
            diff.get(&key).map(|c| c.gone.len()),
            Some(went.marks.len()),
            "{key}"
        );
        let diff = changed_marks::<FixtureWorld>(&fewer, &room);
        assert_eq!(diff.get(&key).map(|c| c.came.len()), Some(went.marks.len()));
    }
}
