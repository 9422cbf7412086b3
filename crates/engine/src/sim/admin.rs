//! Admin edits in scenarios, over any family's ladder: the mark changes a person makes with
//! `allow`, `suspend`, `resume`, `request` and `clear`, written through the world's backend
//! directly (a person's edit is not the watcher's, so it is neither recorded nor killed).

use super::{PASS_SECONDS, World};
use crate::backend::Backend;
use crate::family::Family;
use crate::marks::{Codec, Mark, RepairResult};
use crate::object::ObjectRef;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum AdminEdit<L> {
    /// For this many passes, or until resumed.
    Suspend {
        for_passes: Option<u32>,
    },
    Resume,
    /// `None` drops the object's policy: it inherits its scope's.
    Allow(Option<L>),
    /// A once-off repair up to this level, on a target.
    Request(L),
    /// Removes a target's failure results.
    Clear,
    /// Writes a mark of ours that cannot be read (a person's typo, another tool's write): it
    /// holds what it would govern (rule 11), and the oracle checks that nothing starts there.
    Damage(Damage),
}

/// Which kind of unreadable mark [`AdminEdit::Damage`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Damage {
    /// A suspend whose time is not a number.
    Suspend,
    /// A pending mark whose time no clock can hold (a target only).
    Pending,
    /// A policy of no known level.
    Policy,
}

/// Applies the edit as the admin verbs do; an edit they would refuse (nothing to resume, a
/// repair already pending, no failure to clear) simply does not happen.
pub fn apply<W: World>(
    world: &mut W,
    object: &ObjectRef,
    edit: &AdminEdit<<W::Family as Family>::Level>,
    now: i64,
) {
    let Some((add, remove)) = edits::<W::Family>(world.fleet(), object, edit, now) else {
        return;
    };
    let backend = world.backend();
    if !add.is_empty() && backend.add_marks(object, &add, "admin").is_err() {
        return;
    }
    if !remove.is_empty() {
        let _ = backend.remove_marks(object, &remove, "admin");
    }
}

/// The marks of an object: a target (the first of that name, as backends find it) or a holder.
fn marks_of<'f, F: Family>(fleet: &'f F::Snapshot, object: &ObjectRef) -> Option<&'f [String]> {
    if object.is(F::WORDS.target) {
        return F::targets(fleet)
            .iter()
            .find(|t| F::name(t) == object.name)
            .map(F::marks);
    }
    F::holders(fleet)
        .into_iter()
        .find(|h| h.object == *object)
        .map(|h| h.marks)
}

type Edits = (Vec<String>, Vec<String>);

/// The marks to add and to remove, or `None` when the verb is refused.
fn edits<F: Family>(
    fleet: &F::Snapshot,
    object: &ObjectRef,
    edit: &AdminEdit<F::Level>,
    now: i64,
) -> Option<Edits> {
    let current = marks_of::<F>(fleet, object)?;
    let parsed: Vec<(&String, Mark<'_, F::Level>)> = current
        .iter()
        .filter_map(|m| F::Marks::parse(m).ok().map(|p| (m, p)))
        .collect();
    let matching = |keep: &dyn Fn(&Mark<'_, F::Level>) -> bool| -> Vec<String> {
        parsed
            .iter()
            .filter(|(_, m)| keep(m))
            .map(|(text, _)| (*text).clone())
            .collect()
    };
    let on_target = object.is(F::WORDS.target);
    let (add, remove) = match edit {
        AdminEdit::Allow(level) => {
            let add: Vec<String> = level.iter().map(|l| F::Marks::render_policy(*l)).collect();
            let remove = parsed
                .iter()
                .filter(|(text, m)| matches!(m, Mark::Policy(_)) && !add.contains(text))
                .map(|(text, _)| (*text).clone())
                .collect();
            (add, remove)
        }
        AdminEdit::Suspend { for_passes } => {
            let until = for_passes.map(|p| now + i64::from(p) * PASS_SECONDS);
            (vec![F::Marks::render_suspend(until, false).ok()?], vec![])
        }
        AdminEdit::Resume => {
            let remove = matching(&|m| matches!(m, Mark::Suspend { .. }));
            if remove.is_empty() {
                return None;
            }
            (vec![], remove)
        }
        AdminEdit::Request(level) => {
            if !on_target || parsed.iter().any(|(_, m)| matches!(m, Mark::Pending(_))) {
                return None;
            }
            let id = uuid::Uuid::new_v5(
                &uuid::Uuid::NAMESPACE_OID,
                format!("{now}{object}").as_bytes(),
            )
            .to_string();
            (
                vec![F::Marks::render_pending(*level, &id, now, &[]).ok()?],
                vec![],
            )
        }
        AdminEdit::Damage(kind) => {
            let mark = damaged::<F>(*kind, on_target, now)?;
            (vec![mark], vec![])
        }
        AdminEdit::Clear => {
            let remove =
                matching(&|m| matches!(m, Mark::Result(r) if r.result == RepairResult::Failure));
            if !on_target || remove.is_empty() {
                return None;
            }
            (vec![], remove)
        }
    };
    let add = add.into_iter().filter(|m| !current.contains(m)).collect();
    Some((add, remove))
}

/// A mark of `kind` in the family's own storage, made unreadable: rendered as the codec writes
/// it, then its time or level spoiled, so every codec gets one of its own form. `None` when
/// the spoiled text still parses (it would not be damaged) or the kind needs a target.
fn damaged<F: Family>(kind: Damage, on_target: bool, now: i64) -> Option<String> {
    use crate::marks::Level;
    let level = F::Level::LADDER[0];
    let text = match kind {
        Damage::Suspend => {
            let until = now + 3 * PASS_SECONDS;
            F::Marks::render_suspend(Some(until), false).ok()?.replacen(
                &until.to_string(),
                &format!("{until}x"),
                1,
            )
        }
        Damage::Pending if on_target => {
            let id = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, format!("{now}").as_bytes())
                .to_string();
            F::Marks::render_pending(level, &id, now, &[])
                .ok()?
                .replacen(&now.to_string(), "9999999999999999999999999", 1)
        }
        Damage::Pending => return None,
        Damage::Policy => {
            let text = F::Marks::render_policy(level);
            let at = text.rfind(level.as_str())? + level.as_str().len();
            format!("{}x{}", &text[..at], &text[at..])
        }
    };
    F::Marks::parse(&text).is_err().then_some(text)
}
