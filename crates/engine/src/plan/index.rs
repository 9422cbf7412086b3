//! Lookups the per-target decisions need, built once per pass: scope policies (with their
//! explanations rendered once), operations by id, by repair and by target, duplicate names,
//! and the lint of marks on objects that are not targets.

use super::Lint;
use crate::family::{Family, Holder, OpState, Operation, Role, Unrecorded};
use crate::marks::{Codec, Governs, Level, Mark, MarkError, read};
use crate::object::ObjectRef;
use crate::policy::{self, Policy};
use crate::text::{FxMap, FxSet, Text};

/// Where an effective policy came from, with its explanation rendered once per pass (a
/// scope's is shared by all its targets).
pub(super) struct PolicySource<L> {
    pub policy: Policy<L>,
    /// `KIND/NAME` or the fleet's scope, as `TargetPlan::policy_source` shows it.
    pub source: Text,
    /// The note `finish` starts every target's reasoning with.
    pub note: Text,
}

impl<L: Level> PolicySource<L> {
    fn new(policy: Policy<L>, object: &ObjectRef) -> Self {
        PolicySource {
            policy,
            source: Text::Shared(object.to_string().into()),
            note: Text::Shared(policy_note(policy, object).into()),
        }
    }
}

impl<L: Level> PolicySource<L> {
    /// A scope's `suspend --all`, which holds the target whatever nearer objects say.
    fn over_all(policy: Policy<L>, object: &ObjectRef) -> Self {
        PolicySource {
            policy,
            source: Text::Shared(object.to_string().into()),
            note: Text::Shared(
                format!(
                    "policy: {policy} (from {object}, by `suspend --all`: over every policy below it)"
                )
                .into(),
            ),
        }
    }
}

pub(super) fn policy_note<L: Level>(policy: Policy<L>, source: &ObjectRef) -> String {
    format!("policy: {policy} (from {source})")
}

pub(super) struct Index<'a, F: Family> {
    pub family: F::Index<'a>,
    pub holders: Vec<Holder<'a>>,
    /// Scope policies by scope key.
    pub scopes: FxMap<&'a str, Option<PolicySource<F::Level>>>,
    /// The scopes with a `suspend --all` in force, by scope key: it holds every target under
    /// the scope, over the nearest-wins rule.
    pub over_all: FxMap<&'a str, PolicySource<F::Level>>,
    pub ops: Vec<Operation<'a, F>>,
    /// Positions in `ops`, by id.
    pub op_by_id: FxMap<F::OpId, usize>,
    pub ops_by_repair: FxMap<&'a str, Vec<usize>>,
    /// The watcher's own operations still running, by target.
    pub unfinished_by_target: FxMap<&'a str, Vec<usize>>,
    /// [`Family::unrecorded`], by target.
    pub unrecorded: FxMap<&'a str, Unrecorded<'a, F>>,
    pub duplicate_names: FxSet<&'a str>,
    /// The note of every target without any policy, rendered once.
    pub no_policy_note: Text,
}

impl<'a, F: Family> Index<'a, F> {
    pub fn build(
        snap: &'a F::Snapshot,
        settings: &'a F::Settings,
        now: i64,
        lint: &mut Vec<Lint>,
    ) -> Self {
        let holders = F::holders(snap);
        let mut scopes = FxMap::default();
        let mut over_all = FxMap::default();
        for h in &holders {
            match h.role {
                Role::Scope { key, .. } => {
                    let parsed = scope_marks::<F>(&h.object, h.marks, lint);
                    let own = policy::object_policy(parsed, now);
                    scopes.insert(key, own.policy.map(|p| PolicySource::new(p, &h.object)));
                    if let Some(p) = own.over_all {
                        over_all.insert(key, PolicySource::over_all(p, &h.object));
                    }
                }
                Role::Inert { advice } => {
                    for (text, parsed) in h.marks.iter().map(|t| (t, F::Marks::parse(t))) {
                        match parsed {
                            Ok(Mark::Foreign) => {}
                            Ok(_) => lint.push(Lint {
                                object: h.object.clone(),
                                tag: Some(text.clone()),
                                message: advice.to_owned(),
                            }),
                            Err(e) => lint.push(Lint {
                                object: h.object.clone(),
                                message: format!("{}; here it has no effect: {advice}", e.message),
                                tag: Some(e.mark),
                            }),
                        }
                    }
                }
            }
        }
        let family = F::index(snap, settings, now);
        let ops = F::operations(&family);
        let unrecorded = F::unrecorded(&family)
            .into_iter()
            .map(|u| (u.target, u))
            .collect();
        let mut op_by_id = FxMap::default();
        let mut ops_by_repair: FxMap<&str, Vec<usize>> = FxMap::default();
        let mut unfinished_by_target: FxMap<&str, Vec<usize>> = FxMap::default();
        for (i, op) in ops.iter().enumerate() {
            op_by_id.insert(op.id.clone(), i);
            if let Some(id) = op.repair {
                ops_by_repair.entry(id).or_default().push(i);
                if let (OpState::Running | OpState::Paused, Some(t)) = (op.state, op.target) {
                    unfinished_by_target.entry(t).or_default().push(i);
                }
            }
        }
        let targets = F::targets(snap);
        let mut seen = FxSet::with_capacity_and_hasher(targets.len(), Default::default());
        let duplicate_names = targets
            .iter()
            .map(F::name)
            .filter(|name| !seen.insert(*name))
            .collect();
        Index {
            family,
            holders,
            scopes,
            over_all,
            ops,
            op_by_id,
            ops_by_repair,
            unfinished_by_target,
            unrecorded,
            duplicate_names,
            no_policy_note: Text::Shared(
                format!(
                    "policy: none set on the {}, {}",
                    F::WORDS.target,
                    F::WORDS.scopes
                )
                .into(),
            ),
        }
    }

    /// The scopes' objects and marks, in the family's order, with the limiter scope each
    /// falls under.
    pub fn scope_holders(
        &self,
    ) -> impl Iterator<Item = (Option<&'a str>, &ObjectRef, &'a [String])> {
        self.holders.iter().filter_map(|h| match h.role {
            Role::Scope { halt_key, .. } => Some((halt_key, &h.object, h.marks)),
            Role::Inert { .. } => None,
        })
    }

    pub fn op(&self, id: &F::OpId) -> Option<&Operation<'a, F>> {
        self.op_by_id.get(id).map(|i| &self.ops[*i])
    }
}

/// The lint of a mark of ours that cannot be read on an object it governs: what is wrong, and
/// what it holds until fixed (rule 11: it fails closed).
pub(super) fn invalid_lint(object: &ObjectRef, e: MarkError) -> Lint {
    Lint {
        object: object.clone(),
        message: format!("{}; {}", e.message, e.governs.effect(&object.to_string())),
        tag: Some(e.mark),
    }
}

/// A mark whose time no date can name (after year 9999) is honoured as written, so a far-off
/// suspend still holds; lint says so, because people and other tools cannot read the time.
pub(super) fn lint_time<L>(object: &ObjectRef, text: &str, mark: &Mark<L>, lint: &mut Vec<Lint>) {
    if let Some(t) = mark
        .time()
        .filter(|t| *t > crate::text::LAST_CALENDAR_SECOND)
    {
        lint.push(Lint {
            object: object.clone(),
            tag: Some(text.to_owned()),
            message: format!(
                "its time {t} is after 9999-12-31T23:59:59Z, which no date can name: it is honoured as written (shown as @{t}); {}",
                if matches!(mark, Mark::Suspend { .. }) {
                    "to suspend until resumed, write the suspend without a time"
                } else {
                    "the tool that wrote it has a broken clock or a bug"
                }
            ),
        });
    }
}

/// Parses a scope's marks for policy, linting what does not belong there.
fn scope_marks<'t, F: Family>(
    object: &ObjectRef,
    marks: &'t [String],
    lint: &mut Vec<Lint>,
) -> Vec<(&'t str, Mark<'t, F::Level>)> {
    let mut out = Vec::new();
    for t in marks {
        match read::<F::Marks>(t) {
            (Mark::Foreign, _) => {}
            (mark @ (Mark::Policy(_) | Mark::Suspend { .. }), _) => {
                lint_time(object, t, &mark, lint);
                out.push((t.as_str(), mark));
            }
            (
                mark @ Mark::Unreadable(
                    Governs::Policy | Governs::Suspend { .. } | Governs::Unknown,
                ),
                Some(e),
            ) => {
                out.push((t.as_str(), mark));
                lint.push(invalid_lint(object, e));
            }
            (Mark::Unreadable(_), Some(e)) => lint.push(Lint {
                object: object.clone(),
                message: format!(
                    "{}; {} {}s belong on {}: here it has no effect",
                    e.message,
                    e.governs,
                    F::Marks::NOUN,
                    F::WORDS.targets
                ),
                tag: Some(e.mark),
            }),
            _ => lint.push(Lint {
                object: object.clone(),
                tag: Some(t.clone()),
                message: format!(
                    "pending and result {}s belong on {}; here they have no effect",
                    F::Marks::NOUN,
                    F::WORDS.targets
                ),
            }),
        }
    }
    lint_policy_mix::<F>(object, &out, lint);
    out
}

pub(super) fn lint_policy_mix<F: Family>(
    object: &ObjectRef,
    marks: &[(&str, Mark<F::Level>)],
    lint: &mut Vec<Lint>,
) {
    let levels: Vec<F::Level> = marks
        .iter()
        .filter_map(|(_, t)| match t {
            Mark::Policy(r) => Some(*r),
            _ => None,
        })
        .collect();
    let noun = F::Marks::NOUN;
    if levels.len() > 1 {
        let least = levels.iter().min().expect("non-empty");
        lint.push(Lint {
            object: object.clone(),
            tag: None,
            message: format!(
                "{} policy {noun}s: only the least destructive ({least}) counts; remove the others",
                levels.len()
            ),
        });
    }
    let forever = marks
        .iter()
        .any(|(_, t)| matches!(t, Mark::Suspend { until: None, .. }));
    if forever && !levels.is_empty() {
        lint.push(Lint {
            object: object.clone(),
            tag: None,
            message: format!(
                "a permanent suspend overrides the policy {noun}s here until it is removed"
            ),
        });
    }
}
