//! What may start this pass: mass-failure holds counted in failure domains, failure-domain
//! slots, and the write budget.

use super::index::Index;
use super::rate::{DomainHash, Window, domain_hash};
use super::target::{Candidate, StartKind, TargetEval};
use super::{Action, Blocked, Cooldown, DownNode, Halt, RateReport, RepairStart, TargetPlan};
use crate::family::{Family, Words};
use crate::limits::{Limits, Rate};
use crate::text::{FxMap, FxSet, Text};
use std::collections::BTreeMap;

/// Per limiter scope key: the scope's name, and what is counted there.
type ByScope<'a, T> = BTreeMap<&'a str, (&'a str, Vec<T>)>;

/// The mass-failure limits of one pass, counted in failure domains.
pub(super) struct Limiter<'a> {
    pub down: Vec<DownNode>,
    pub fleet: Option<Halt>,
    /// By limiter scope key.
    pub scopes: FxMap<&'a str, Halt>,
    /// The failure domains of each scope, when a limit is a share of them.
    sizes: Option<Sizes<'a>>,
    /// The scopes with a down domain, as a halt names them (`group/ams-b`), by key.
    down_scopes: FxMap<&'a str, String>,
    pub cooldowns: Cooldowns<'a>,
}

impl<'a> Limiter<'a> {
    /// `homes`: each target's limiter scope and home domain, which size the scopes when a
    /// limit is a share of them.
    pub fn new<F: Family>(
        index: &Index<'a, F>,
        limits: &Limits,
        broken: usize,
        homes: impl Iterator<Item = (Option<&'a str>, &'a str)>,
        now: i64,
    ) -> Self {
        let words = F::WORDS;
        let mut by_scope: ByScope<&str> = BTreeMap::new();
        let mut down = Vec::new();
        for d in F::down_domains(&index.family) {
            by_scope
                .entry(d.scope_key)
                .or_insert_with(|| (d.scope_name, Vec::new()))
                .1
                .push(d.name);
            down.push(DownNode {
                name: d.name.to_owned(),
                group: d.scope_name.to_owned(),
                state: d.state,
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
        let sizes = limits.has_shares().then(|| Sizes::count(homes, &by_scope));
        let all: Vec<&str> = down.iter().map(|n| n.name.as_str()).collect();
        let fleet_size = sizes.as_ref().map_or(0, |s| s.fleet);
        let fleet_limit = limits.down_in_fleet();
        let mut fleet = (all.len() > fleet_limit.max(fleet_size)).then(|| {
            Halt::new(
                words.fleet.into(),
                "max_down_nodes",
                format!(
                    "mass failure: {} down in the {} ({}), more than max_down_nodes = {}: nothing is written or started until fewer are down",
                    down_count(all.len(), &words),
                    words.fleet,
                    names(&all),
                    fleet_limit.describe(fleet_size)
                ),
            )
        });
        if let Some(max) = limits.max_broken.filter(|max| broken > *max) {
            fleet.get_or_insert_with(|| {
                Halt::new(
                    words.fleet.into(),
                    "max_broken",
                    format!(
                        "{broken} {} need repair at once, more than max_broken = {max}: nothing is written or started until fewer are broken",
                        words.targets
                    ),
                )
            });
        }
        let down_scopes = by_scope
            .iter()
            .map(|(key, (name, _))| (*key, format!("{}/{name}", words.domain_scope)))
            .collect();
        let group_limit = limits.down_per_group();
        let scope_size = |key: &str| sizes.as_ref().map_or(0, |s| s.scopes[key]);
        let scopes = by_scope
            .iter()
            .filter(|(key, (_, down))| down.len() > group_limit.max(scope_size(key)))
            .map(|(&key, (name, down))| {
                let kind = words.domain_scope;
                let halt = Halt::new(
                    format!("{kind}/{name}"),
                    "max_down_nodes_per_group",
                    format!(
                        "mass failure in {kind} {name}: {} down ({}), more than max_down_nodes_per_group = {}: nothing is written or started for its {} until fewer are down",
                        down_count(down.len(), &words),
                        names(down),
                        group_limit.describe(scope_size(key)),
                        words.targets
                    ),
                );
                (key, halt)
            })
            .collect();
        let mut limiter = Limiter {
            down,
            fleet,
            scopes,
            sizes,
            down_scopes,
            cooldowns: Cooldowns::default(),
        };
        if let Some(cooldown) = limits.storm_cooldown {
            limiter.cooldowns = Cooldowns::new(index, limits, &limiter, &by_scope, cooldown, now);
        }
        limiter
    }

    /// The cool-down that holds new repairs under this limiter scope, if any: the later one
    /// where both the fleet's and the scope's hold.
    pub fn cooldown_for(&self, key: Option<&str>) -> Option<&Cooldown> {
        let scope = key.and_then(|k| self.cooldowns.scopes.get(k));
        self.cooldowns
            .fleet
            .iter()
            .chain(scope)
            .max_by_key(|c| c.until)
    }

    /// The halt that holds a target (or a scope) under this limiter scope, if any; `None`
    /// for the fleet itself.
    pub fn halt_for(&self, key: Option<&str>) -> Option<&Halt> {
        self.fleet
            .as_ref()
            .or_else(|| key.and_then(|k| self.scopes.get(k)))
    }
}

/// The storm cool-downs of one pass (rule 13), where `storm_cooldown` is set.
///
/// No mark records a mass failure: the watcher writes nothing during one (rule 2), and a
/// pass that would record its end cannot know it began. The fleet says it instead: each
/// family gives the time each failure domain that is up came back (a Node's Ready transition,
/// a machine's state change, a node's last change). A domain back within the cool-down is
/// counted as down until its return, and one still down as down throughout; so the most
/// that may have been down at once just before each return is known, and the latest return
/// before which more were down than a mass-failure limit allows ends the storm. Domains that
/// failed one after another are counted as if together: it holds longer, never shorter.
#[derive(Default)]
pub(super) struct Cooldowns<'a> {
    fleet: Option<Cooldown>,
    scopes: FxMap<&'a str, Cooldown>,
}

impl<'a> Cooldowns<'a> {
    fn new<F: Family>(
        index: &Index<'a, F>,
        limits: &Limits,
        limiter: &Limiter<'a>,
        down_by_scope: &ByScope<'a, &'a str>,
        cooldown: std::time::Duration,
        now: i64,
    ) -> Self {
        let words = F::WORDS;
        let secs = i64::try_from(cooldown.as_secs()).unwrap_or(i64::MAX);
        // A return exactly one cool-down ago has served it.
        let since = now.saturating_sub(secs).saturating_add(1);
        let down: FxSet<&str> = limiter.down.iter().map(|d| d.name.as_str()).collect();
        // A domain down now is counted as down, not as back.
        let back: Vec<_> = F::back_domains(&index.family, since)
            .into_iter()
            .filter(|b| !down.contains(b.name))
            .collect();
        let mut by_scope: ByScope<(&str, i64)> = BTreeMap::new();
        for b in &back {
            // A return after now is a clock's error, not a later return: counted as now, it
            // holds for the cool-down, not until a year the fleet's clock made up.
            by_scope
                .entry(b.scope_key)
                .or_insert_with(|| (b.scope_name, Vec::new()))
                .1
                .push((b.name, b.at.min(now)));
        }
        let size = |key: Option<&str>| {
            limiter.sizes.as_ref().map_or(0, |s| match key {
                Some(k) => s.scopes.get(k).copied().unwrap_or(0),
                None => s.fleet,
            })
        };
        let shown = humantime::format_duration(cooldown);
        let describe = |scope: String,
                        limit: &'static str,
                        ceiling: crate::limits::Ceiling,
                        total: usize,
                        down: usize,
                        back: &mut Vec<(&str, i64)>| {
            let max = ceiling.max(total);
            let until = storm_end(down, max, back)?.saturating_add(secs);
            let mut list: Vec<String> = back
                .iter()
                .take(10)
                .map(|(name, at)| format!("{name} at {}", crate::text::rfc3339(*at)))
                .collect();
            if back.len() > list.len() {
                list.push(format!("{} more", back.len() - list.len()));
            }
            let message = format!(
                "storm cool-down in {scope}: {} {} came back in the last {shown} ({}) and {down} {} still down, so more than {limit} = {} may have been down at once: no new repair starts there until {} (storm_cooldown = {shown})",
                back.len(),
                if back.len() == 1 {
                    words.domain
                } else {
                    words.domains
                },
                list.join(", "),
                if down == 1 { "is" } else { "are" },
                ceiling.describe(total),
                crate::text::rfc3339(until),
            );
            Some(Cooldown {
                scope: Text::Shared(scope.into()),
                limit,
                until,
                held_note: Text::Shared(format!("held: {message}").into()),
                message,
            })
        };
        let fleet = if limiter.fleet.is_some() {
            None
        } else {
            let mut all: Vec<(&str, i64)> = by_scope
                .values()
                .flat_map(|(_, b)| b.iter().copied())
                .collect();
            describe(
                words.fleet.into(),
                "max_down_nodes",
                limits.down_in_fleet(),
                size(None),
                limiter.down.len(),
                &mut all,
            )
        };
        let scopes = by_scope
            .into_iter()
            .filter(|(key, _)| !limiter.scopes.contains_key(key))
            .filter_map(|(key, (name, mut back))| {
                let down = down_by_scope.get(key).map_or(0, |(_, d)| d.len());
                let scope = limiter
                    .down_scopes
                    .get(key)
                    .cloned()
                    .unwrap_or_else(|| format!("{}/{name}", words.domain_scope));
                let cooldown = describe(
                    scope,
                    "max_down_nodes_per_group",
                    limits.down_per_group(),
                    size(Some(key)),
                    down,
                    &mut back,
                )?;
                Some((key, cooldown))
            })
            .collect();
        Cooldowns { fleet, scopes }
    }

    /// For the fleet's summary: the fleet's first, then by scope.
    pub fn into_reports(self) -> Vec<super::Cooldown> {
        let mut scopes: Vec<Cooldown> = self.scopes.into_values().collect();
        scopes.sort_by(|a, b| a.scope.cmp(&b.scope));
        self.fleet.into_iter().chain(scopes).collect()
    }
}

/// When the latest storm in a scope ended, if any: `down` domains are down now (counted as down
/// throughout) and `back` came back at the times given (sorted here, newest first), each
/// counted as down until its return; a storm is more than `max` down at once. Just before the
/// k-th newest return, `down + k` were down at most: the newest return before which that was
/// more than `max` ends the storm. `None` when no such moment is among the returns (and more
/// than `max` down now is the mass failure itself, not its end).
pub(super) fn storm_end(down: usize, max: usize, back: &mut [(&str, i64)]) -> Option<i64> {
    if down > max {
        return None;
    }
    back.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    // Just before back[i] returned, down + i + 1 were down: more than max from i = max - down.
    back.get(max - down).map(|(_, at)| *at)
}

/// One scope's rate window, and the limit it is held to.
struct Scoped {
    name: Text,
    limit: &'static str,
    rate: Rate,
    /// The scope's failure domains, for a rate given as a share.
    total: usize,
    window: Window,
    /// It held a repair back this pass.
    held: bool,
}

impl Scoped {
    fn max(&self) -> usize {
        self.rate.max(self.total)
    }

    fn report(&self, names: &FxMap<DomainHash, &str>) -> RateReport {
        RateReport {
            scope: self.name.clone(),
            limit: self.limit,
            rate: self.rate.describe(self.total),
            window_seconds: self.rate.window_secs(),
            used: self.window.len(),
            max: self.max(),
            room_at: self.window.room_at(self.max(), self.rate.window_secs()),
            domains: self.window.describe(names),
        }
    }
}

/// The rate windows of one pass (rule 13), where a rate limit is set: the fleet's and each
/// limiter scope's, counted from the targets' repair starts.
pub(super) struct Rates<'a> {
    fleet: Option<Scoped>,
    per_group: Option<Rate>,
    groups: BTreeMap<&'a str, Scoped>,
    /// Domain names for messages, by hash.
    names: FxMap<DomainHash, &'a str>,
    /// The scopes' objects for messages (`group/ams-b`), by limiter key.
    scope_names: FxMap<&'a str, String>,
    now: i64,
}

impl<'a> Rates<'a> {
    pub fn new<F: Family>(
        index: &Index<'a, F>,
        limiter: &Limiter<'a>,
        evals: &[TargetEval<'a, F>],
        limits: &Limits,
        now: i64,
    ) -> Option<Self> {
        if limits.max_repair_rate.is_none() && limits.max_repair_rate_per_group.is_none() {
            return None;
        }
        let words = F::WORDS;
        // A scope is named by the object whose own key is the limiter key (a node group),
        // else as a halt names it.
        let mut scope_names: FxMap<&str, String> = limiter.down_scopes.clone();
        for h in &index.holders {
            if let crate::family::Role::Scope {
                key,
                halt_key: Some(k),
            } = h.role
                && key == k
            {
                scope_names.insert(k, h.object.to_string());
            }
        }
        let sizes = limiter.sizes.as_ref();
        let fleet = limits.max_repair_rate.map(|rate| Scoped {
            name: Text::Static(words.fleet),
            limit: "max_repair_rate",
            rate,
            total: sizes.map_or(0, |s| s.fleet),
            window: Window::new(
                evals.iter().flat_map(|e| e.starts.iter().copied()),
                now,
                rate.window_secs(),
            ),
            held: false,
        });
        let mut rates = Rates {
            fleet,
            per_group: limits.max_repair_rate_per_group,
            groups: BTreeMap::new(),
            names: FxMap::default(),
            scope_names,
            now,
        };
        if let Some(rate) = rates.per_group {
            let mut by_scope: BTreeMap<&str, Vec<_>> = BTreeMap::new();
            for e in evals.iter().filter(|e| !e.starts.is_empty()) {
                if let Some(k) = e.halt_key {
                    by_scope
                        .entry(k)
                        .or_default()
                        .extend(e.starts.iter().copied());
                }
            }
            for (key, starts) in by_scope {
                let mut scoped = rates.scope(key, rate, sizes, words);
                scoped.window = Window::new(starts, now, rate.window_secs());
                rates.groups.insert(key, scoped);
            }
        }
        // Names for the domains counted, for messages; the ones a pass takes are named as it
        // takes them. A domain repaired earlier may hold no target any more: the down ones
        // are looked at too.
        let counted: FxSet<DomainHash> = rates
            .fleet
            .iter()
            .chain(rates.groups.values())
            .flat_map(|s| s.window.domains())
            .collect();
        if !counted.is_empty() {
            let down = F::down_domains(&index.family);
            let domains = evals
                .iter()
                .flat_map(|e| std::iter::once(e.home).chain(e.domain))
                .chain(down.iter().map(|d| d.name));
            for d in domains {
                let h = domain_hash(d);
                if counted.contains(&h) {
                    rates.names.entry(h).or_insert(d);
                }
            }
        }
        Some(rates)
    }

    fn scope(&self, key: &str, rate: Rate, sizes: Option<&Sizes>, words: Words) -> Scoped {
        Scoped {
            name: Text::Owned(
                self.scope_names
                    .get(key)
                    .cloned()
                    .unwrap_or_else(|| format!("{}/{key}", words.domain_scope)),
            ),
            limit: "max_repair_rate_per_group",
            rate,
            total: sizes.map_or(0, |s| s.scopes.get(key).copied().unwrap_or(0)),
            window: Window::default(),
            held: false,
        }
    }

    /// Whether a repair in `domain` under limiter scope `key` may start; else why not, and
    /// the note for people.
    fn admit<F: Family>(
        &mut self,
        key: Option<&'a str>,
        domain: &str,
        sizes: Option<&Sizes>,
    ) -> Result<(), (Blocked<F>, String)> {
        let d = domain_hash(domain);
        if let (Some(k), Some(rate)) = (key, self.per_group)
            && !self.groups.contains_key(k)
        {
            let scoped = self.scope(k, rate, sizes, F::WORDS);
            self.groups.insert(k, scoped);
        }
        let names = &self.names;
        let group = key.and_then(|k| self.groups.get_mut(k));
        for scoped in self.fleet.iter_mut().chain(group) {
            if scoped.window.admits(d, scoped.max()) {
                continue;
            }
            scoped.held = true;
            let window = scoped.rate.window_secs();
            let room_at = scoped.window.room_at(scoped.max(), window);
            let when = room_at.map_or("never: the limit is 0".to_owned(), |t| {
                format!("room again at {}", crate::text::rfc3339(t))
            });
            let note = format!(
                "rate: {} of {} {} newly under repair in {} in the last {} ({}), {} = {}: {when}",
                scoped.window.len(),
                scoped.max(),
                F::WORDS.domains,
                scoped.name,
                humantime::format_duration(scoped.rate.window),
                scoped.window.describe(names),
                scoped.limit,
                scoped.rate.describe(scoped.total),
            );
            return Err((
                Blocked::RateLimit {
                    scope: scoped.name.clone(),
                    limit: scoped.limit,
                    room_at,
                },
                note,
            ));
        }
        Ok(())
    }

    /// Counts a start granted this pass in its windows.
    fn take(&mut self, key: Option<&str>, domain: &'a str) {
        let d = domain_hash(domain);
        self.names.entry(d).or_insert(domain);
        let now = self.now;
        if let Some(f) = &mut self.fleet {
            f.window.take(d, now);
        }
        if let Some(g) = key.and_then(|k| self.groups.get_mut(k)) {
            g.window.take(d, now);
        }
    }

    /// The windows for status and metrics: the fleet's, then each scope's that counted a
    /// domain or held a repair back.
    pub fn reports(&self) -> Vec<RateReport> {
        self.fleet
            .iter()
            .chain(
                self.groups
                    .values()
                    .filter(|g| g.held || !g.window.is_empty()),
            )
            .map(|s| s.report(&self.names))
            .collect()
    }
}

/// How many failure domains each limiter scope holds, and the fleet: the domains its targets
/// live in and the down ones (a down domain may hold no target). Counted only when a limit is
/// a share.
struct Sizes<'a> {
    fleet: usize,
    scopes: FxMap<&'a str, usize>,
}

impl<'a> Sizes<'a> {
    fn count(
        homes: impl Iterator<Item = (Option<&'a str>, &'a str)>,
        down: &ByScope<'a, &'a str>,
    ) -> Self {
        let mut fleet: FxSet<&str> = FxSet::default();
        let mut scopes: FxMap<&str, FxSet<&str>> = FxMap::default();
        let downs = down
            .iter()
            .flat_map(|(key, (_, names))| names.iter().map(move |n| (Some(*key), *n)));
        for (key, domain) in homes.chain(downs) {
            fleet.insert(domain);
            if let Some(key) = key {
                scopes.entry(key).or_default().insert(domain);
            }
        }
        Sizes {
            fleet: fleet.len(),
            scopes: scopes.into_iter().map(|(k, s)| (k, s.len())).collect(),
        }
    }
}

/// A target under a mass failure: it writes only the bookkeeping of repairs under way, and
/// starts nothing.
pub(super) fn hold<F: Family>(e: &mut TargetEval<F>, plan: &mut TargetPlan<F>, halt: &Halt) {
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

/// Hands out the failure-domain slots in a fixed order (continuations, requests, new repairs,
/// retries; oldest first): a repair starts when its domain already has repairs under way or a
/// domain slot is free, and the optional per-target cap allows. Returns what may start.
pub(super) fn grant_slots<'a, F: Family>(
    evals: &mut [TargetEval<'a, F>],
    plans: &mut [TargetPlan<F>],
    limits: &Limits,
    active: usize,
    limiter: &Limiter<'a>,
    mut rates: Option<&mut Rates<'a>>,
) -> Vec<Option<Box<Candidate<F>>>> {
    let mut order: Vec<usize> = (0..evals.len())
        .filter(|&i| evals[i].candidate.is_some())
        .collect();
    order.sort_by(|&a, &b| {
        let key = |e: &TargetEval<F>| {
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
    let mut granted: Vec<Option<Box<Candidate<F>>>> = (0..evals.len()).map(|_| None).collect();
    for i in order {
        let (e, plan) = (&mut evals[i], &mut plans[i]);
        let c = e.candidate.take().expect("filtered");
        if c.kind != StartKind::Continuation {
            let domain = e.domain.expect("a candidate has a failure domain");
            // A retry for lack of resources is a repair under way, which a cool-down lets go on.
            if c.kind != StartKind::Retry
                && let Some(cooldown) = limiter.cooldown_for(e.halt_key)
            {
                plan.notes.push(cooldown.held_note.clone());
                plan.blocked = Some(Blocked::Cooldown {
                    scope: cooldown.scope.clone(),
                    until: cooldown.until,
                });
                continue;
            }
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
            // A retry for lack of resources is a repair under way: its start counted.
            if c.kind != StartKind::Retry
                && let Some(r) = rates.as_deref_mut()
            {
                if let Err((blocked, note)) =
                    r.admit::<F>(e.halt_key, domain, limiter.sizes.as_ref())
                {
                    plan.notes.push(Text::Owned(note));
                    plan.blocked = Some(blocked);
                    continue;
                }
                r.take(e.halt_key, domain);
            }
            busy.insert(domain);
            under_way += 1;
        }
        granted[i] = Some(c);
    }

    granted
}

/// What the write budget lets through: per target, and in all.
pub(super) struct Budget {
    pub admitted: Vec<bool>,
    pub spent: usize,
    pub deferred: usize,
}

/// The write budget: bookkeeping of repairs under way first, then starts, then the rest. A
/// target's changes go together or wait together for the next pass; scope changes come last.
/// The budget holds for every write but one target's: the first repair under way in line goes
/// through whole even when its writes alone are more than the limit (0 included), since a
/// repair under way that never fits would stay pending forever; a start or any other change
/// waits, and one that can never fit says so.
pub(super) fn spend_budget<F: Family>(
    evals: &[TargetEval<F>],
    granted: &mut [Option<Box<Candidate<F>>>],
    plans: &mut [TargetPlan<F>],
    scope_writes: &mut Vec<(Option<&str>, Action<F>)>,
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
    for (rank, i, cost) in costs.iter().copied() {
        let under_way_first = rank == 0 && spent == 0;
        full |= !under_way_first && spent + cost > limits.max_writes_per_pass;
        if full {
            deferred += 1;
            let plan = &mut plans[i];
            plan.notes.push(Text::Owned(if cost > limits.max_writes_per_pass {
                format!(
                    "waits: its {cost} writes are more than a pass makes (max_writes_per_pass = {}); raise the limit to let it through",
                    limits.max_writes_per_pass
                )
            } else {
                format!(
                    "deferred to the next pass: this pass's write budget (max_writes_per_pass = {}) is spent",
                    limits.max_writes_per_pass
                )
            }));
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

/// The writes a repair start makes (as the executor makes them): its first pending mark, one
/// per operation, the mark that records the operations, and one removal of the marks it
/// supersedes (the first mark and any it replaces).
fn repair_cost<F: Family>(r: &RepairStart<F>) -> usize {
    let superseded = r.write_first.is_some() || !r.replaces.is_empty();
    usize::from(r.write_first.is_some()) + r.ops.len() + 1 + usize::from(superseded)
}

/// "1 node is", "3 nodes are".
fn down_count(n: usize, words: &Words) -> String {
    if n == 1 {
        format!("1 {} is", words.domain)
    } else {
        format!("{n} {} are", words.domains)
    }
}
