//! Admin verbs: the mark edits people ask for, computed purely from the snapshot, for every
//! family: its codec writes the marks, its targets and [`Family::holders`] say which objects
//! exist and which of them ignore marks.

use crate::engine::family::{Holder, Role};
use crate::engine::marks::{Codec, Governs, Mark, read_all};
use crate::engine::policy::object_policy;
use crate::engine::text::FxMap;
use crate::engine::{Action, Family, ObjectRef, Policy, RepairResult, rfc3339};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verb<L> {
    /// `None` removes the object's policy marks.
    Allow(Option<L>),
    /// With `all`, over every policy below the object too (one mark, which `resume --all`
    /// removes: exactly undone).
    Suspend {
        until: Option<i64>,
        all: bool,
    },
    /// `all` lifts a `suspend --all`; without it, only the object's own suspends.
    Resume {
        all: bool,
    },
    Request {
        repair: L,
        id: String,
        now: i64,
    },
    Clear,
}

impl<L> Verb<L> {
    /// The same verb with its level (if any) made another type, e.g. typed by the family.
    pub fn map<M>(self, f: impl FnOnce(L) -> M) -> Verb<M> {
        match self {
            Verb::Allow(level) => Verb::Allow(level.map(f)),
            Verb::Suspend { until, all } => Verb::Suspend { until, all },
            Verb::Resume { all } => Verb::Resume { all },
            Verb::Request { repair, id, now } => Verb::Request {
                repair: f(repair),
                id,
                now,
            },
            Verb::Clear => Verb::Clear,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AdminError {
    #[error("{object} is not in the fleet: check the name (autorepair status lists the {targets})")]
    NoSuchObject {
        object: ObjectRef,
        /// The family's word for its targets.
        targets: &'static str,
    },
    #[error("{object}: {message}")]
    Refused { object: ObjectRef, message: String },
    #[error(
        "suspend {asked} ends at {until} ({}), which is not after now ({now}): it would suspend nothing; \
give an end in the future (e.g. --for 2h), or neither --for nor --until to suspend until `autorepair resume`",
        rfc3339(*until)
    )]
    SuspendEndsInThePast { asked: String, until: i64, now: i64 },
    #[error(
        "suspend {asked} ends after 9999-12-31T23:59:59Z, which no date can name: give neither --for nor --until to suspend until `autorepair resume`"
    )]
    SuspendEndsPastTheCalendar { asked: String },
}

/// When a suspend asked for with `--until` or `--for` ends (`None`: until resumed). An end at or
/// before `now` is refused: the mark would be ignored at once, while the admin believes the
/// object is suspended.
pub fn suspend_end(
    until: Option<i64>,
    for_: Option<std::time::Duration>,
    now: i64,
) -> Result<Option<i64>, AdminError> {
    let (end, asked) = match (until, for_) {
        (Some(t), _) => (t, format!("--until {t}")),
        (None, Some(d)) => (
            now.saturating_add(i64::try_from(d.as_secs()).unwrap_or(i64::MAX)),
            format!("--for {}", humantime::format_duration(d)),
        ),
        (None, None) => return Ok(None),
    };
    if end > crate::engine::text::LAST_CALENDAR_SECOND {
        return Err(AdminError::SuspendEndsPastTheCalendar { asked });
    }
    if end <= now {
        return Err(AdminError::SuspendEndsInThePast {
            asked,
            until: end,
            now,
        });
    }
    Ok(Some(end))
}

/// The marks of the object an admin named: a target, or a holder whose marks count. Objects
/// whose marks have no effect are refused with the family's advice.
fn marks_of<'a, F: Family>(
    snap: &'a F::Snapshot,
    object: &ObjectRef,
) -> Result<&'a [String], AdminError> {
    let found = if object.is(F::WORDS.target) {
        F::targets(snap)
            .iter()
            .find(|t| F::name(t) == object.name)
            .map(F::marks)
    } else {
        match F::holders(snap).into_iter().find(|h| h.object == *object) {
            Some(Holder {
                role: Role::Inert { advice },
                ..
            }) => {
                return Err(AdminError::Refused {
                    object: object.clone(),
                    message: advice.to_owned(),
                });
            }
            Some(h) => Some(h.marks),
            None => None,
        }
    };
    found.ok_or_else(|| AdminError::NoSuchObject {
        object: object.clone(),
        targets: F::WORDS.targets,
    })
}

/// The mark changes for one verb on one object, as actions (adds before removes).
pub fn edits<F: Family>(
    snap: &F::Snapshot,
    object: &ObjectRef,
    verb: &Verb<F::Level>,
) -> Result<Vec<Action<F>>, AdminError> {
    let current = marks_of::<F>(snap, object)?;
    let refuse = |message: String| AdminError::Refused {
        object: object.clone(),
        message,
    };
    // Unreadable marks included: a verb replaces or lifts them as it does the marks they
    // were meant to be.
    let parsed: Vec<(&str, Mark<F::Level>)> = read_all::<F::Marks>(current).collect();
    let is_target = object.is(F::WORDS.target);
    let (target, targets) = (F::WORDS.target, F::WORDS.targets);
    let (add, remove, reason): (Vec<String>, Vec<String>, String) = match verb {
        Verb::Allow(level) => {
            let add: Vec<String> = level.iter().map(|l| F::Marks::render_policy(*l)).collect();
            let remove = parsed
                .iter()
                .filter(|(text, m)| {
                    matches!(m, Mark::Policy(_) | Mark::Unreadable(Governs::Policy))
                        && !add.iter().any(|a| a == text)
                })
                .map(|(text, _)| (*text).to_owned())
                .collect();
            let reason = match level {
                Some(l) => format!("admin: allow repairs up to {l}"),
                None => "admin: drop this object's policy: it inherits the next level's".into(),
            };
            (add, remove, reason)
        }
        Verb::Suspend { until, all } => {
            if *all && is_target {
                return Err(refuse(format!(
                    "--all reaches the {targets} under a scope (cluster, a group…); a {target} is suspended by `suspend` alone"
                )));
            }
            let mark = F::Marks::render_suspend(*until, *all).map_err(|e| refuse(e.to_string()))?;
            let what = if *all {
                "suspend every repair under it, whatever policy objects below carry"
            } else {
                "suspend"
            };
            let reason = match until {
                Some(t) => format!("admin: {what} until {}", rfc3339(*t)),
                None => format!("admin: {what}"),
            };
            (vec![mark], vec![], reason)
        }
        Verb::Resume { all } => {
            let of_kind = |want: bool| -> Vec<String> {
                parsed
                    .iter()
                    .filter(|(_, m)| match m {
                        Mark::Suspend { all, .. } => *all == want,
                        Mark::Unreadable(Governs::Suspend { all }) => *all == want,
                        _ => false,
                    })
                    .map(|(text, _)| (*text).to_owned())
                    .collect()
            };
            let (remove, other) = (of_kind(*all), of_kind(!*all));
            if remove.is_empty() {
                return Err(refuse(match (all, other.is_empty()) {
                    (false, false) => format!(
                        "carries a `suspend --all` ({}), which only `resume --all {object}` lifts",
                        other.join(", ")
                    ),
                    (true, false) => format!(
                        "has no `suspend --all`, only its own suspend: `resume {object}` lifts it"
                    ),
                    (false, true) => "is not suspended: nothing to resume".into(),
                    (true, true) => "has no `suspend --all`: nothing to resume".into(),
                }));
            }
            let reason = if *all {
                "admin: resume --all: the policies below apply again"
            } else {
                "admin: resume"
            };
            (vec![], remove, reason.into())
        }
        Verb::Request { repair, id, now } => {
            if !is_target {
                return Err(refuse(format!(
                    "repairs are requested on {targets}, e.g. {target}/NAME"
                )));
            }
            match parsed
                .iter()
                .find(|(_, m)| matches!(m, Mark::Pending(_) | Mark::Unreadable(Governs::Pending)))
            {
                Some((_, Mark::Pending(p))) => {
                    return Err(refuse(format!(
                        "already has repair {} ({}) pending: wait for it to end",
                        p.id, p.repair
                    )));
                }
                Some((text, _)) => {
                    return Err(refuse(format!(
                        "carries the unreadable pending {} {text:?}, which counts as a repair under way: once no repair of it runs, `autorepair clear {object}` removes it",
                        F::Marks::NOUN
                    )));
                }
                None => {}
            }
            let mark = F::Marks::render_pending(*repair, id, *now, &[])
                .map_err(|e| refuse(e.to_string()))?;
            (
                vec![mark],
                vec![],
                format!("admin: request one repair up to {repair}"),
            )
        }
        Verb::Clear => {
            if !is_target {
                return Err(refuse(format!(
                    "failure results live on {targets}, e.g. {target}/NAME"
                )));
            }
            // Unreadable pending and result marks too: they hold the target as a repair under
            // way or a failure would, and the lint of them sends the operator here.
            let remove: Vec<String> = parsed
                .iter()
                .filter(|(_, m)| match m {
                    Mark::Result(r) => r.result == RepairResult::Failure,
                    Mark::Unreadable(g) => matches!(g, Governs::Pending | Governs::Result),
                    _ => false,
                })
                .map(|(text, _)| (*text).to_owned())
                .collect();
            if remove.is_empty() {
                return Err(refuse("has no failure result to clear".into()));
            }
            (
                vec![],
                remove,
                "admin: failure investigated and cleared".into(),
            )
        }
    };
    let add: Vec<String> = add.into_iter().filter(|m| !current.contains(m)).collect();
    let mut actions = Vec::new();
    if !add.is_empty() {
        actions.push(Action::AddMarks {
            object: object.clone(),
            marks: add,
            reason: reason.clone(),
        });
    }
    if !remove.is_empty() {
        actions.push(Action::RemoveMarks {
            object: object.clone(),
            marks: remove,
            reason,
        });
    }
    Ok(actions)
}

/// The objects under the scope `object` whose own policy allows repairs, so that a suspend of
/// `object` does not reach the targets they govern: the nearest policy wins (docs/design.md),
/// and the admin who suspends a whole cluster should hear which objects go on repairing. Each
/// comes with its policy, once, in the fleet's order. Empty for a target or a scope nothing
/// below overrides.
/// A request on a target that a suspend holds is refused: the request would sit there doing
/// nothing (no repair starts under a suspend, a requested one neither), and the operator who
/// asked would think it runs. The policy is the one a pass would find (`plan`'s), so a suspend
/// inherited from a group or the cluster counts, and a timed one that ran out does not.
pub fn refuse_request_while_suspended<F: Family>(
    snap: &F::Snapshot,
    settings: &F::Settings,
    object: &ObjectRef,
    now: i64,
) -> Result<(), AdminError> {
    let plan = crate::engine::plan::<F>(snap, settings, now, &crate::engine::Limits::default(), 0);
    let Some(target) = plan.target(&object.name) else {
        return Ok(());
    };
    match target.policy {
        Some(
            policy @ (Policy::SuspendedForever
            | Policy::SuspendedUntil { .. }
            | Policy::Unreadable { .. }),
        ) => Err(AdminError::Refused {
            object: object.clone(),
            message: format!(
                "is {policy} (from {}): no repair starts while it is, a requested one neither; `autorepair resume {}` first, then request it",
                target.policy_source, target.policy_source
            ),
        }),
        _ => Ok(()),
    }
}

pub fn kept_repairable<F: Family>(
    snap: &F::Snapshot,
    settings: &F::Settings,
    object: &ObjectRef,
    now: i64,
) -> Vec<(ObjectRef, Policy<F::Level>)> {
    let holders = F::holders(snap);
    fn scope_key<'a>(h: &Holder<'a>) -> Option<&'a str> {
        match h.role {
            Role::Scope { key, .. } => Some(key),
            Role::Inert { .. } => None,
        }
    }
    let Some(suspended) = holders
        .iter()
        .find(|h| h.object == *object)
        .and_then(scope_key)
    else {
        return vec![];
    };
    let policy_of = |marks: &[String]| object_policy(read_all::<F::Marks>(marks), now).policy;
    // Looked up once per scope of every target: a map, not a scan of the holders.
    type Governs<'a, L> = (&'a ObjectRef, Option<Policy<L>>);
    let scopes: FxMap<&str, Governs<'_, F::Level>> = holders
        .iter()
        .filter_map(|h| scope_key(h).map(|key| (key, (&h.object, policy_of(h.marks)))))
        .collect();
    let index = F::index(snap, settings, now);
    let mut kept: Vec<(ObjectRef, Policy<F::Level>)> = Vec::new();
    for target in F::targets(snap) {
        let chain: Vec<&str> = F::assess(&index, target).scopes.iter().collect();
        let Some(at) = chain.iter().position(|key| *key == suspended) else {
            continue;
        };
        let own = (
            ObjectRef::new(F::WORDS.target, F::name(target)),
            policy_of(F::marks(target)),
        );
        let nearer = chain[..at]
            .iter()
            .filter_map(|key| scopes.get(key).map(|(o, p)| ((*o).clone(), *p)));
        let winner = std::iter::once(own)
            .chain(nearer)
            .find_map(|(o, p)| p.map(|p| (o, p)));
        if let Some((o, p @ Policy::Allow { .. })) = winner
            && !kept.iter().any(|(k, _)| *k == o)
        {
            kept.push((o, p));
        }
    }
    kept
}

/// The target a name given on the command line stands for: the target of that full name,
/// else the one whose name it begins up to a dot, as gnt-* expands a short name (`web1` for
/// `web1.example.org`). `Err` with every candidate when it begins several, none when no target
/// is named so.
pub fn expand<'a>(
    names: impl IntoIterator<Item = &'a str>,
    short: &str,
) -> Result<&'a str, Vec<&'a str>> {
    let mut candidates = Vec::new();
    for name in names {
        if name == short {
            return Ok(name);
        }
        if name
            .strip_prefix(short)
            .is_some_and(|rest| rest.starts_with('.'))
        {
            candidates.push(name);
        }
    }
    match candidates.as_slice() {
        [one] => Ok(one),
        _ => Err(candidates),
    }
}

/// Why objects named on the command line select no targets.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SelectError {
    #[error(
        "{object} is not in the fleet: name one of the {targets} (or a short name of one) or a scope; autorepair status lists the {targets}"
    )]
    NoSuchObject {
        object: ObjectRef,
        targets: &'static str,
    },
    #[error("{short} names several {targets}: {}; give more of the name", candidates.join(", "))]
    Ambiguous {
        short: String,
        targets: &'static str,
        candidates: Vec<String>,
    },
    /// The fleet has two targets of one name: an edit would reach only the first, while
    /// `tags lint` says the name changes nothing.
    #[error(
        "{count} {targets} are named {name}, so autorepair cannot tell which one is meant and changes nothing: fix the fleet data first (`autorepair tags lint` names them)"
    )]
    Duplicate {
        name: String,
        targets: &'static str,
        count: usize,
    },
    // Not "holds no instances": a node holds its instances, it only selects none.
    #[error(
        "{object} is neither one of the {targets} nor a scope of them, so it selects none: name {targets} or a scope ({advice})"
    )]
    NotAScope {
        object: ObjectRef,
        targets: &'static str,
        advice: &'static str,
    },
}

/// The full name of the target `object` names by its full or short name.
fn target_named<'a, F: Family>(
    targets: &'a [F::Target],
    object: &ObjectRef,
) -> Result<&'a str, SelectError> {
    let found = expand(targets.iter().map(F::name), &object.name).or_else(|mut c| {
        // One name begun twice is one name: two targets that share it, not two candidates.
        c.sort_unstable();
        c.dedup();
        match c.as_slice() {
            [one] => Ok(*one),
            _ => Err(c),
        }
    });
    found.map_err(|c| {
        if c.is_empty() {
            SelectError::NoSuchObject {
                object: object.clone(),
                targets: F::WORDS.targets,
            }
        } else {
            SelectError::Ambiguous {
                short: object.name.clone(),
                targets: F::WORDS.targets,
                candidates: c.into_iter().map(str::to_owned).collect(),
            }
        }
    })
}

/// The object an admin named, with a target's short name expanded as gnt-* does (`web1` for
/// `web1.example.org`, refused when it begins several names), refused when several targets
/// have that name. Other objects as given.
pub fn resolve<F: Family>(
    snap: &F::Snapshot,
    object: &ObjectRef,
) -> Result<ObjectRef, SelectError> {
    if !object.is(F::WORDS.target) {
        return Ok(object.clone());
    }
    let targets = F::targets(snap);
    let name = target_named::<F>(targets, object)?;
    let count = targets.iter().filter(|t| F::name(t) == name).count();
    if count > 1 {
        return Err(SelectError::Duplicate {
            name: name.to_owned(),
            targets: F::WORDS.targets,
            count,
        });
    }
    Ok(ObjectRef::new(F::WORDS.target, name))
}

/// The names of the targets `objects` select: a target (full or short name), or every target
/// with a scope among its scopes (the root: all). Pure, for `status OBJECT…`.
pub fn select<F: Family>(
    snap: &F::Snapshot,
    settings: &F::Settings,
    now: i64,
    objects: &[ObjectRef],
) -> Result<std::collections::BTreeSet<String>, SelectError> {
    let targets = F::targets(snap);
    let holders = F::holders(snap);
    let mut scopes = Vec::new();
    let mut chosen = std::collections::BTreeSet::new();
    for object in objects {
        if object.is(F::WORDS.target) {
            chosen.insert(target_named::<F>(targets, object)?.to_owned());
            continue;
        }
        match holders
            .iter()
            .find(|h| h.object == *object)
            .map(|h| h.role.clone())
        {
            Some(Role::Scope { key, .. }) => scopes.push(key),
            Some(Role::Inert { advice }) => {
                return Err(SelectError::NotAScope {
                    object: object.clone(),
                    targets: F::WORDS.targets,
                    advice,
                });
            }
            None => {
                return Err(SelectError::NoSuchObject {
                    object: object.clone(),
                    targets: F::WORDS.targets,
                });
            }
        }
    }
    if !scopes.is_empty() {
        let index = F::index(snap, settings, now);
        for t in targets {
            if F::assess(&index, t)
                .scopes
                .iter()
                .any(|k| scopes.contains(&k))
            {
                chosen.insert(F::name(t).to_owned());
            }
        }
    }
    Ok(chosen)
}

/// The objects of `snap` an admin may name, as the command line names them (for the shells'
/// completion): its targets (`instance/NAME`), and its scopes, whose marks govern the targets
/// under them (`cluster`, `group/NAME`). Objects whose marks have no effect (a Ganeti node)
/// are left out: every verb refuses them.
pub fn nameable<F: Family>(snap: &F::Snapshot) -> Nameable {
    Nameable {
        targets: F::targets(snap)
            .iter()
            .map(|t| ObjectRef::new(F::WORDS.target, F::name(t)))
            .collect(),
        scopes: F::holders(snap)
            .into_iter()
            .filter(|h| matches!(h.role, Role::Scope { .. }))
            .map(|h| h.object)
            .collect(),
    }
}

/// What [`nameable`] finds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Nameable {
    pub targets: Vec<ObjectRef>,
    pub scopes: Vec<ObjectRef>,
}

/// Whether the object named as written (`group/g1`) carries a suspend in force in `snap`: a
/// suspend written by an admin verb is visible. An object not in the fleet is not suspended.
pub fn shows_suspended<F: Family>(snap: &F::Snapshot, object: &str, now: i64) -> bool {
    let target = F::targets(snap)
        .iter()
        .find(|t| ObjectRef::new(F::WORDS.target, F::name(t)).to_string() == object)
        .map(F::marks);
    let marks = target.or_else(|| {
        F::holders(snap)
            .into_iter()
            .find(|h| h.object.to_string() == object)
            .map(|h| h.marks)
    });
    marks.is_some_and(|marks| {
        object_policy(read_all::<F::Marks>(marks), now)
            .policy
            .is_some_and(|p| p.is_suspended())
    })
}

/// The names of the targets a suspend of `object` (as written, `group/g1`) reaches: the
/// object itself when it is a target, else every target with the object among its scopes
/// (the whole fleet for its root), as `status OBJECT` selects them ([`select`]). What an
/// operator's brake cancels (crate::brake). An object not in the fleet reaches none.
pub fn covered<F: Family>(
    snap: &F::Snapshot,
    settings: &F::Settings,
    object: &str,
    now: i64,
) -> std::collections::BTreeSet<String> {
    let found = F::targets(snap)
        .iter()
        .map(|t| ObjectRef::new(F::WORDS.target, F::name(t)))
        .chain(F::holders(snap).into_iter().map(|h| h.object))
        .find(|o| o.to_string() == object);
    found
        .and_then(|o| select::<F>(snap, settings, now, &[o]).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ganeti::snapshot::{Cluster, Group, Instance, Node, Snapshot};
    use crate::ganeti::tags::{GanetiLevel, PREFIX};
    use crate::ganeti::{Action, Ganeti};

    const ID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

    fn fleet() -> Snapshot {
        Snapshot {
            cluster: Cluster {
                name: "c".into(),
                tags: vec![format!("{PREFIX}suspend"), "x".into()],
                other: Default::default(),
            },
            groups: vec![Group {
                name: "g".into(),
                uuid: "u".into(),
                tags: vec![format!("{PREFIX}reinstall"), format!("{PREFIX}migrate")],
                other: Default::default(),
            }],
            nodes: vec![Node {
                name: "n".into(),
                offline: false,
                drained: false,
                vm_capable: true,
                group_uuid: "u".into(),
                tags: vec![],
                mtime: None,
                other: Default::default(),
            }],
            instances: vec![Instance {
                name: "i".into(),
                pnode: "n".into(),
                disk_template: "drbd".into(),
                tags: vec![
                    format!("{PREFIX}result:failover:{ID}:5:failure:7"),
                    format!("{PREFIX}result:failover:{ID}:6:success:"),
                ],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn tags_of(actions: &[Action]) -> (Vec<String>, Vec<String>) {
        let (mut add, mut rm) = (vec![], vec![]);
        for a in actions {
            match a {
                Action::AddMarks { marks: tags, .. } => {
                    add.extend(tags.iter().map(|t| t.trim_start_matches(PREFIX).to_owned()))
                }
                Action::RemoveMarks { marks: tags, .. } => {
                    rm.extend(tags.iter().map(|t| t.trim_start_matches(PREFIX).to_owned()))
                }
                Action::Repair(_) | Action::Advance { .. } => panic!("admin verbs never repair"),
            }
        }
        (add, rm)
    }

    /// A suspend of the cluster leaves group g's own policy in charge of its instances, and an
    /// instance's own policy in charge of itself; an instance suspended itself, or governed by
    /// the suspended scope alone, is not named.
    #[test]
    fn a_suspend_names_the_objects_below_it_that_keep_repairing() {
        let mut snap = fleet();
        snap.groups.push(Group {
            name: "quiet".into(),
            uuid: "q".into(),
            tags: vec![],
            other: Default::default(),
        });
        snap.nodes.push(Node {
            name: "nq".into(),
            vm_capable: true,
            group_uuid: "q".into(),
            ..snap.nodes[0].clone()
        });
        let on = |name: &str, node: &str, tags: &[&str]| Instance {
            name: name.into(),
            pnode: node.into(),
            disk_template: "drbd".into(),
            tags: tags.iter().map(|t| format!("{PREFIX}{t}")).collect(),
            ..Default::default()
        };
        snap.instances.extend([
            on("own", "nq", &["failover"]),
            on("held", "nq", &["failover", "suspend"]),
            on("inherits", "nq", &[]),
        ]);
        let settings = crate::ganeti::Settings::shipped();
        let kept = kept_repairable::<Ganeti>(&snap, &settings, &crate::ganeti::cluster(), 0);
        let shown: Vec<String> = kept.iter().map(|(o, p)| format!("{o}: {p}")).collect();
        assert_eq!(
            shown,
            [
                "group/g: repairs up to migrate allowed",
                "instance/own: repairs up to failover allowed",
            ]
        );
        // Below group quiet only instance own overrides it; a target has nothing below it.
        let quiet = kept_repairable::<Ganeti>(&snap, &settings, &crate::ganeti::group("quiet"), 0);
        assert_eq!(
            quiet,
            vec![(
                crate::ganeti::instance("own"),
                Policy::Allow {
                    up_to: GanetiLevel::Failover
                }
            )]
        );
        let own = crate::ganeti::instance("own");
        assert_eq!(kept_repairable::<Ganeti>(&snap, &settings, &own, 0), vec![]);
    }

    #[test]
    fn verbs_write_the_right_tags() {
        let snap = fleet();
        let g = crate::ganeti::group("g");
        let i = crate::ganeti::instance("i");
        let failure = format!("result:failover:{ID}:5:failure:7");
        type Case<'a> = (ObjectRef, Verb<GanetiLevel>, Vec<&'a str>, Vec<&'a str>);
        let cases: Vec<Case<'_>> = vec![
            (
                g.clone(),
                Verb::Allow(Some(GanetiLevel::Failover)),
                vec!["failover"],
                vec!["reinstall", "migrate"],
            ),
            (
                g.clone(),
                Verb::Allow(Some(GanetiLevel::Migrate)),
                vec![],
                vec!["reinstall"],
            ),
            (
                g.clone(),
                Verb::Allow(None),
                vec![],
                vec!["reinstall", "migrate"],
            ),
            (
                g.clone(),
                Verb::Suspend {
                    until: Some(99),
                    all: false,
                },
                vec!["suspend:99"],
                vec![],
            ),
            (
                crate::ganeti::cluster(),
                Verb::Resume { all: false },
                vec![],
                vec!["suspend"],
            ),
            (i.clone(), Verb::Clear, vec![], vec![failure.as_str()]),
            (
                crate::ganeti::cluster(),
                Verb::Suspend {
                    until: None,
                    all: true,
                },
                vec!["suspend-all"],
                vec![],
            ),
            (
                g.clone(),
                Verb::Suspend {
                    until: Some(99),
                    all: true,
                },
                vec!["suspend-all:99"],
                vec![],
            ),
        ];
        for (object, verb, add, rm) in cases {
            let (a, r) = tags_of(&edits(&snap, &object, &verb).unwrap());
            assert_eq!(
                (a, r),
                (
                    add.iter().map(|s| s.to_string()).collect(),
                    rm.iter().map(|s| s.to_string()).collect()
                ),
                "{verb:?} on {object}"
            );
        }
        let (a, _) = tags_of(
            &edits(
                &snap,
                &i,
                &Verb::Request {
                    repair: GanetiLevel::Failover,
                    id: ID.into(),
                    now: 10,
                },
            )
            .unwrap(),
        );
        assert_eq!(a, vec![format!("pending:failover:{ID}:10:")]);
    }

    /// `resume --all` takes back exactly what `suspend --all` wrote: an admin's own suspend of
    /// the same object stays, and a plain `resume` leaves the `suspend --all` alone.
    #[test]
    fn resume_all_undoes_exactly_a_suspend_all() {
        let mut snap = fleet();
        let cluster = crate::ganeti::cluster();
        let resume = |snap: &Snapshot, all| edits::<Ganeti>(snap, &cluster, &Verb::Resume { all });
        let before = snap.cluster.tags.clone();
        let (added, _) = tags_of(
            &edits::<Ganeti>(
                &snap,
                &cluster,
                &Verb::Suspend {
                    until: None,
                    all: true,
                },
            )
            .unwrap(),
        );
        snap.cluster
            .tags
            .extend(added.iter().map(|t| format!("{PREFIX}{t}")));
        let (_, removed) = tags_of(&resume(&snap, true).unwrap());
        assert_eq!(removed, vec!["suspend-all"]);
        snap.cluster
            .tags
            .retain(|t| !removed.iter().any(|r| *t == format!("{PREFIX}{r}")));
        assert_eq!(snap.cluster.tags, before);

        snap.cluster.tags = vec![format!("{PREFIX}suspend-all:4102444800")];
        let e = resume(&snap, false).unwrap_err().to_string();
        assert!(
            e.contains("carries a `suspend --all`") && e.contains("`resume --all cluster`"),
            "{e}"
        );
    }

    #[test]
    fn a_suspend_must_end_in_the_future() {
        use std::time::Duration;
        let now = 1000;
        type Case = (
            Option<i64>,
            Option<Duration>,
            Result<Option<i64>, &'static str>,
        );
        let cases: [Case; 10] = [
            (None, None, Ok(None)),
            (Some(1001), None, Ok(Some(1001))),
            (None, Some(Duration::from_secs(7200)), Ok(Some(8200))),
            (Some(1000), None, Err("--until 1000 ends at 1000")),
            (
                Some(5),
                None,
                Err("--until 5 ends at 5 (1970-01-01T00:00:05Z)"),
            ),
            (None, Some(Duration::ZERO), Err("--for 0s ends at 1000")),
            // Less than a second is nothing at the tags' resolution.
            (None, Some(Duration::from_millis(500)), Err("--for 500ms")),
            (Some(-1), None, Err("(@-1)")),
            (
                Some(253_402_300_800),
                None,
                Err("ends after 9999-12-31T23:59:59Z"),
            ),
            (
                None,
                Some(Duration::MAX),
                Err("ends after 9999-12-31T23:59:59Z"),
            ),
        ];
        for (until, for_, want) in cases {
            let got = suspend_end(until, for_, now).map_err(|e| e.to_string());
            match (&got, want) {
                (Ok(g), Ok(w)) => assert_eq!(*g, w, "{until:?} {for_:?}"),
                (Err(e), Err(w)) => {
                    assert!(e.contains(w), "{until:?} {for_:?}: {e}");
                    if w.contains("9999") {
                        assert!(e.contains("neither --for nor --until"), "{e}");
                    } else {
                        assert!(e.contains("not after now (1000)"), "{e}");
                        assert!(e.contains("--for 2h"), "says what to do: {e}");
                    }
                }
                _ => panic!("{until:?} {for_:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn refusals_name_the_object_and_say_why() {
        let snap = fleet();
        let cases = [
            (
                crate::ganeti::instance("nope"),
                Verb::Clear,
                "not in the fleet",
            ),
            (
                crate::ganeti::group("g"),
                Verb::Resume { all: false },
                "not suspended",
            ),
            (
                crate::ganeti::cluster(),
                Verb::Resume { all: true },
                "has no `suspend --all`, only its own suspend: `resume cluster` lifts it",
            ),
            (
                crate::ganeti::instance("i"),
                Verb::Suspend {
                    until: None,
                    all: true,
                },
                "--all reaches the instances under a scope",
            ),
            (crate::ganeti::group("g"), Verb::Clear, "instances"),
            (crate::ganeti::node("n"), Verb::Allow(None), "no effect"),
            (
                crate::ganeti::cluster(),
                Verb::Request {
                    repair: GanetiLevel::Migrate,
                    id: ID.into(),
                    now: 1,
                },
                "instances",
            ),
        ];
        for (object, verb, want) in cases {
            let e = edits::<Ganeti>(&snap, &object, &verb)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{verb:?} on {object}: {e}");
        }
        let mut snap = fleet();
        snap.instances[0]
            .tags
            .push(format!("{PREFIX}pending:migrate:{ID}:3:"));
        let e = edits::<Ganeti>(
            &snap,
            &crate::ganeti::instance("i"),
            &Verb::Request {
                repair: GanetiLevel::Migrate,
                id: ID.into(),
                now: 4,
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("already has repair"), "{e}");
    }

    #[test]
    fn a_request_under_a_suspend_a_pass_would_honour_is_refused() {
        let now = 1_000;
        // The fleet's cluster carries a plain suspend, its group a policy of its own.
        let cases: Vec<(Vec<String>, Vec<String>, Option<&str>)> = vec![
            (vec![], vec![], None),
            (
                vec![format!("{PREFIX}suspend")],
                vec![],
                Some("is suspended (from group/g)"),
            ),
            (
                vec![format!("{PREFIX}suspend:{}", now + 60)],
                vec![],
                Some("suspended until"),
            ),
            (vec![format!("{PREFIX}suspend:{}", now - 60)], vec![], None),
            (
                vec![format!("{PREFIX}suspend:notanumber")],
                vec![],
                Some("unreadable"),
            ),
            (
                vec![],
                vec![format!("{PREFIX}suspend-all")],
                Some("(from cluster"),
            ),
        ];
        for (group, cluster, want) in cases {
            let mut snap = fleet();
            snap.groups[0].tags.extend(group.iter().cloned());
            snap.cluster.tags.extend(cluster.iter().cloned());
            let got = refuse_request_while_suspended::<Ganeti>(
                &snap,
                &Default::default(),
                &crate::ganeti::instance("i"),
                now,
            );
            match want {
                None => assert!(got.is_ok(), "{group:?} {cluster:?}: {got:?}"),
                Some(want) => {
                    let e = got.expect_err(want).to_string();
                    assert!(
                        e.contains(want) && e.contains("resume"),
                        "{group:?} {cluster:?}: {e}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_family_edits_its_own_marks_in_its_own_words() {
        use crate::toy::fixture::{Toy, ToyLevel, room};
        let room = room();
        let shelf = |n: &str| ObjectRef::new("shelf", n);
        let a_box = |n: &str| ObjectRef::new("box", n);
        let marks = |object: &ObjectRef, verb: Verb<ToyLevel>| {
            edits::<Toy>(&room, object, &verb)
                .map(|actions| actions.iter().map(|a| a.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(
            marks(
                &ObjectRef::singleton("room"),
                Verb::Allow(Some(ToyLevel::Nudge))
            ),
            Ok(vec![
                "room: add nudge (admin: allow repairs up to nudge)".to_owned(),
                "room: remove restart (admin: allow repairs up to nudge)".to_owned(),
            ])
        );
        assert_eq!(
            marks(&shelf("s2"), Verb::Resume { all: false }),
            Ok(vec!["shelf/s2: remove suspend (admin: resume)".to_owned()])
        );
        assert_eq!(
            marks(
                &a_box("b3"),
                Verb::Request {
                    repair: ToyLevel::Restart,
                    id: ID.into(),
                    now: 10
                }
            ),
            Ok(vec![format!(
                "box/b3: add pending:restart:{ID}:10: (admin: request one repair up to restart)"
            )])
        );
        let refusals = [
            (
                shelf("s1"),
                Verb::Request {
                    repair: ToyLevel::Nudge,
                    id: ID.into(),
                    now: 10,
                },
                "shelf/s1: repairs are requested on boxes, e.g. box/NAME",
            ),
            (
                shelf("s1"),
                Verb::Clear,
                "shelf/s1: failure results live on boxes, e.g. box/NAME",
            ),
            (
                a_box("b9"),
                Verb::Clear,
                "box/b9 is not in the fleet: check the name (autorepair status lists the boxes)",
            ),
            (
                shelf("s9"),
                Verb::Resume { all: false },
                "shelf/s9 is not in the fleet: check the name (autorepair status lists the boxes)",
            ),
            (
                a_box("b4"),
                Verb::Request {
                    repair: ToyLevel::Nudge,
                    id: ID.into(),
                    now: 10,
                },
                "box/b4: already has repair 0f8fad5b-d9cb-469f-a165-70867728950e (restart) pending: wait for it to end",
            ),
        ];
        for (object, verb, want) in refusals {
            assert_eq!(
                marks(&object, verb).map_err(|e| e.to_string()),
                Err(want.to_owned())
            );
        }
    }

    #[test]
    fn marks_on_objects_that_ignore_them_are_refused_with_the_familys_advice() {
        let e = edits::<Ganeti>(
            &fleet(),
            &crate::ganeti::node("n"),
            &Verb::Resume { all: false },
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "node/n: autorepair tags on nodes have no effect: tag the instance, its node group or the cluster"
        );
        let e = edits::<Ganeti>(
            &fleet(),
            &crate::ganeti::node("gone"),
            &Verb::Resume { all: false },
        )
        .unwrap_err();
        assert!(e.to_string().contains("not in the fleet"), "{e}");
    }

    /// Two targets of one name: an admin verb would edit the first only, so the
    /// name is refused, by its full name and by its short one; `status` shows both.
    #[test]
    fn a_name_two_targets_share_is_refused_for_edits() {
        let mut snap = fleet();
        let twin = Instance {
            name: "twin.ams.example".into(),
            pnode: "n".into(),
            disk_template: "drbd".into(),
            ..Default::default()
        };
        snap.instances.extend([twin.clone(), twin]);
        for name in ["twin.ams.example", "twin"] {
            let e = resolve::<Ganeti>(&snap, &crate::ganeti::instance(name)).unwrap_err();
            assert_eq!(
                e.to_string(),
                "2 instances are named twin.ams.example, so autorepair cannot tell which one is meant and changes nothing: fix the fleet data first (`autorepair tags lint` names them)",
                "{name}"
            );
        }
        let chosen = select::<Ganeti>(
            &snap,
            &Default::default(),
            0,
            &[crate::ganeti::instance("twin")],
        )
        .unwrap();
        assert_eq!(chosen.into_iter().collect::<Vec<_>>(), ["twin.ams.example"]);
        assert!(resolve::<Ganeti>(&snap, &crate::ganeti::instance("i")).is_ok());
    }

    /// `status OBJECT…`: full names, gnt-* short names (unambiguous only), scopes, the root;
    /// an inert object or an unknown one is refused with what to name instead.
    #[test]
    fn status_selects_targets_by_name_short_name_and_scope() {
        let mut snap = fleet();
        snap.groups.push(Group {
            name: "h".into(),
            uuid: "v".into(),
            tags: vec![],
            other: Default::default(),
        });
        snap.nodes.push(Node {
            name: "m".into(),
            group_uuid: "v".into(),
            ..snap.nodes[0].clone()
        });
        let on = |name: &str, node: &str| Instance {
            name: name.into(),
            pnode: node.into(),
            disk_template: "drbd".into(),
            ..Default::default()
        };
        snap.instances.extend([
            on("web1.ams.example", "n"),
            on("web2.ams.example", "m"),
            on("web1.fra.example", "m"),
            on("db1.ams.example", "m"),
        ]);
        let settings = crate::ganeti::Settings::shipped();
        let select = |objects: &[&str]| {
            let objects: Vec<ObjectRef> = objects
                .iter()
                .map(|o| crate::ganeti::parse_object(o).unwrap())
                .collect();
            select::<Ganeti>(&snap, &settings, 0, &objects)
                .map(|names| names.into_iter().collect::<Vec<_>>().join(" "))
                .map_err(|e| e.to_string())
        };
        let cases: &[(&[&str], Result<&str, &str>)] = &[
            (&["i"], Ok("i")),
            (&["instance/web2.ams.example"], Ok("web2.ams.example")),
            (&["db1"], Ok("db1.ams.example")),
            (&["web2", "db1.ams"], Ok("db1.ams.example web2.ams.example")),
            (&["group/g"], Ok("i web1.ams.example")),
            (
                &["cluster"],
                Ok("db1.ams.example i web1.ams.example web1.fra.example web2.ams.example"),
            ),
            (
                &["web1"],
                Err("web1 names several instances: web1.ams.example, web1.fra.example"),
            ),
            (&["web"], Err("instance/web is not in the fleet")),
            (&["group/zz"], Err("group/zz is not in the fleet")),
            (
                &["node/n"],
                Err(
                    "node/n is neither one of the instances nor a scope of them, so it selects none: name instances or a scope",
                ),
            ),
        ];
        for (objects, want) in cases {
            match (select(objects), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, *want, "{objects:?}"),
                (Err(got), Err(want)) => assert!(got.contains(want), "{objects:?}: {got}"),
                (got, want) => panic!("{objects:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    /// Completion offers what the verbs take: the instance and the scopes, each written so that
    /// the family reads it back as the same object; the node, whose tags do nothing, not.
    #[test]
    fn nameable_objects_are_the_targets_and_scopes_as_the_command_line_reads_them() {
        let found = nameable::<Ganeti>(&fleet());
        let shown =
            |objects: &[ObjectRef]| objects.iter().map(|o| o.to_string()).collect::<Vec<_>>();
        assert_eq!(shown(&found.targets), ["instance/i"]);
        assert_eq!(shown(&found.scopes), ["cluster", "group/g"]);
        for object in found.targets.iter().chain(&found.scopes) {
            assert_eq!(
                crate::ganeti::parse_object(&object.to_string()).as_ref(),
                Ok(object)
            );
        }
    }
}
