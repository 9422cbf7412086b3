//! What may start this pass: mass-failure holds counted in failure domains, failure-domain
//! slots, and the write budget.

use super::index::Index;
use super::target::{Candidate, StartKind, TargetEval};
use super::{Action, Blocked, DownNode, Halt, RepairStart, TargetPlan};
use crate::family::{Family, Words};
use crate::limits::Limits;
use crate::text::{FxMap, FxSet, Text};
use std::collections::BTreeMap;

/// The mass-failure limits of one pass, counted in failure domains.
pub(super) struct Limiter<'a> {
    pub down: Vec<DownNode>,
    pub fleet: Option<Halt>,
    /// By limiter scope key.
    pub scopes: FxMap<&'a str, Halt>,
}

impl<'a> Limiter<'a> {
    /// `homes`: each target's limiter scope and home domain, which size the scopes when a
    /// limit is a share of them.
    pub fn new<F: Family>(
        index: &Index<'a, F>,
        limits: &Limits,
        broken: usize,
        homes: impl Iterator<Item = (Option<&'a str>, &'a str)>,
    ) -> Self {
        let words = F::WORDS;
        let mut by_scope: BTreeMap<&str, (&str, Vec<&str>)> = BTreeMap::new();
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
        let group_limit = limits.down_per_group();
        let scope_size = |key: &str| sizes.as_ref().map_or(0, |s| s.scopes[key]);
        let scopes = by_scope
            .into_iter()
            .filter(|(key, (_, down))| down.len() > group_limit.max(scope_size(key)))
            .map(|(key, (name, down))| {
                let kind = words.domain_scope;
                let halt = Halt::new(
                    format!("{kind}/{name}"),
                    "max_down_nodes_per_group",
                    format!(
                        "mass failure in {kind} {name}: {} down ({}), more than max_down_nodes_per_group = {}: nothing is written or started for its {} until fewer are down",
                        down_count(down.len(), &words),
                        names(&down),
                        group_limit.describe(scope_size(key)),
                        words.targets
                    ),
                );
                (key, halt)
            })
            .collect();
        Limiter {
            down,
            fleet,
            scopes,
        }
    }

    /// The halt that holds a target (or a scope) under this limiter scope, if any; `None`
    /// for the fleet itself.
    pub fn halt_for(&self, key: Option<&str>) -> Option<&Halt> {
        self.fleet
            .as_ref()
            .or_else(|| key.and_then(|k| self.scopes.get(k)))
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
        down: &BTreeMap<&'a str, (&'a str, Vec<&'a str>)>,
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
pub(super) fn grant_slots<F: Family>(
    evals: &mut [TargetEval<F>],
    plans: &mut [TargetPlan<F>],
    limits: &Limits,
    active: usize,
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
