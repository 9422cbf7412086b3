//! Human and machine output of plans, for every family: status tables, explanations, lint.
//! The family's words (its targets, its marks, its operations) come from [`Family::WORDS`] and
//! its codec; its facts' columns from its [`FamilyFace`].

pub mod html;

use crate::engine::marks::Codec;
use crate::engine::plan::{FleetSummary, Lint};
use crate::engine::text::shown;
use crate::engine::{Action, Family, Next, Plan, State, TargetPlan, rfc3339};
use crate::plug::FamilyFace;
use serde::Serialize;
use std::fmt::Write;

/// `status --json`: `{"targets":[…],"counts":{…},"fleet":{…},"lint":[…]}`.
#[derive(Serialize)]
#[serde(bound = "")]
pub struct StatusJson<'a, F: Family> {
    pub now: i64,
    pub targets: &'a [TargetPlan<F>],
    pub counts: std::collections::BTreeMap<&'static str, usize>,
    pub fleet: &'a FleetSummary,
    pub lint: &'a [Lint],
}

pub fn status_json<F: Family>(plan: &Plan<F>) -> StatusJson<'_, F> {
    StatusJson {
        now: plan.now,
        targets: &plan.targets,
        counts: plan.counts.iter().map(|(s, n)| (s.as_str(), *n)).collect(),
        fleet: &plan.fleet,
        lint: &plan.lint,
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// A repair id's first eight characters, as a person tells repairs apart.
fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// What the pass does for a target, in words.
pub fn next_text<F: Family>(t: &TargetPlan<F>) -> String {
    match (&t.next, &t.blocked) {
        (Next::Start { repair, .. }, _) => format!("start {repair} repair"),
        (Next::Continue { repair, .. }, _) => format!("continue {repair} repair"),
        (Next::UpdateMarks, _) => t
            .actions
            .iter()
            .find_map(|a| match a {
                Action::AddMarks { reason, .. } | Action::RemoveMarks { reason, .. } => {
                    Some(format!("{}s: {reason}", F::Marks::NOUN))
                }
                Action::Repair(_) => None,
                Action::Advance { reason, .. } => Some(format!("carries on: {reason}")),
            })
            .unwrap_or_default(),
        (Next::Wait, Some(b)) => format!("wait: {b}"),
        _ => match &t.needs_person {
            Some(p) => format!("needs a person: {p}"),
            None => t
                .pending
                .iter()
                .flat_map(|r| &r.jobs)
                .find_map(|j| j.waits_on.as_ref())
                .map(|w| format!("wait: {w}"))
                .unwrap_or_default(),
        },
    }
}

/// A table, one target a line, with the per-state counts and the limits at the end.
pub fn status_table<F: FamilyFace>(plan: &Plan<F>) -> String {
    status::<F>(plan, false)
}

/// `status -o wide`: the table with what a person looks at next: the problem found, the down
/// failure domain behind it, the repair under way and the last repair's result.
pub fn status_table_wide<F: FamilyFace>(plan: &Plan<F>) -> String {
    status::<F>(plan, true)
}

fn status<F: FamilyFace>(plan: &Plan<F>, wide: bool) -> String {
    let kind = F::WORDS.target.to_uppercase();
    let extra: &[&str] = if wide {
        &["PROBLEM", "DOMAIN", "REPAIR", "LAST"]
    } else {
        &[]
    };
    let header: Vec<&str> = [kind.as_str(), "STATE"]
        .into_iter()
        .chain(F::FACT_COLUMNS.iter().copied())
        .chain(["NEEDS", "ALLOWED", "POLICY FROM"])
        .chain(extra.iter().copied())
        .chain(["NEXT"])
        .collect();
    let rows: Vec<Vec<String>> = plan
        .targets
        .iter()
        .map(|t| {
            let mut row = vec![t.name.clone(), t.state.to_string()];
            row.extend(F::fact_cells(&t.facts));
            row.extend([
                opt(t.needed_repair),
                opt(t.allowed_repair),
                t.policy_source.to_string(),
            ]);
            if wide {
                row.extend([
                    opt(t.problem.as_ref()),
                    opt(t.domain.as_ref()),
                    opt(t.pending.first().map(|p| {
                        format!(
                            "{} {} since {}",
                            p.repair,
                            short_id(&p.id),
                            rfc3339(p.since)
                        )
                    })),
                    opt(t
                        .history
                        .last()
                        .map(|h| format!("{} {} at {}", h.repair, h.result, rfc3339(h.at)))),
                ]);
            }
            row.push(next_text(t));
            row
        })
        .collect();
    let mut out = table(&header, &rows);
    out.push('\n');
    out.push_str(&counts_line(plan, "now"));
    out.push_str(&limits_lines(plan));
    if !plan.lint.is_empty() {
        let _ = writeln!(
            out,
            "{} {} problem(s): see `autorepair tags lint`",
            plan.lint.len(),
            F::Marks::NOUN
        );
    }
    out
}

/// The failure domains and what the limiter decided, for people.
pub fn limits_lines<F: Family>(plan: &Plan<F>) -> String {
    let f = &plan.fleet;
    let mut out = String::new();
    if !f.down_nodes.is_empty() {
        let down: Vec<String> = f
            .down_nodes
            .iter()
            .map(|n| format!("{} ({}, {})", shown(&n.name), shown(&n.group), n.state))
            .collect();
        let _ = writeln!(out, "down {}: {}", F::WORDS.domains, down.join(", "));
    }
    if !f.domains_under_repair.is_empty() {
        let _ = writeln!(
            out,
            "under repair: {}",
            shown(&f.domains_under_repair.join(", "))
        );
    }
    for h in f.halted.iter().chain(&f.halted_groups) {
        let _ = writeln!(out, "HALTED ({}): {h}", h.limit);
    }
    for c in &f.cooldowns {
        let _ = writeln!(out, "COOL-DOWN (storm_cooldown): {c}");
    }
    for r in &f.rates {
        let room = match r.room_at {
            Some(at) => format!("; room again at {}", rfc3339(at)),
            None if r.used < r.max => String::new(),
            None => "; none ever: the limit is 0".to_owned(),
        };
        let counted = if r.domains.is_empty() {
            String::new()
        } else {
            format!(" ({})", r.domains)
        };
        let _ = writeln!(
            out,
            "repair rate of {} ({} = {}): {} of {} {} in the last {}{counted}{room}",
            shown(r.scope.as_ref()),
            r.limit,
            r.rate,
            r.used,
            r.max,
            F::WORDS.domains,
            humantime::format_duration(std::time::Duration::from_secs(
                r.window_seconds.max(0) as u64
            )),
        );
    }
    if f.deferred > 0 {
        let _ = writeln!(
            out,
            "deferred: {} target(s) wait for the next pass (write budget spent after {} writes)",
            f.deferred, f.writes
        );
    }
    out
}

/// The targets by state, as the plan read them: `when` says when that was ("now" for status;
/// after a pass, the states it began with, not those it left).
pub fn counts_line<F: Family>(plan: &Plan<F>, when: &str) -> String {
    let parts: Vec<String> = State::ALL
        .iter()
        .map(|s| format!("{s}: {}", plan.counts.get(s).copied().unwrap_or(0)))
        .collect();
    format!(
        "{} {}; {} (states {when}; times in UTC)\n",
        plan.targets.len(),
        F::WORDS.targets_for(plan.targets.len()),
        parts.join(", ")
    )
}

/// `writeln!` for a line that may hold names from the fleet, its control characters escaped
/// (a newline in a name would add a line).
macro_rules! say {
    ($out:expr, $($arg:tt)*) => {{
        let line = format!($($arg)*);
        $out.push_str(&shown(&line));
        $out.push('\n');
    }};
}

/// The reasoning chain for one target.
pub fn explain<F: FamilyFace>(plan: &Plan<F>, t: &TargetPlan<F>) -> String {
    let mut out = String::new();
    say!(
        out,
        "{} {}: {} now",
        F::WORDS.target,
        shown(&t.name),
        t.state
    );
    say!(out, "  {}", F::facts_line(&t.facts));
    for n in &t.notes {
        say!(out, "  - {n}");
    }
    say!(
        out,
        "  needed repair: {}; allowed up to: {}; policy from: {}",
        opt(t.needed_repair),
        opt(t.allowed_repair),
        t.policy_source
    );
    for p in &t.pending {
        let jobs: Vec<String> = p
            .jobs
            .iter()
            .map(|j| {
                format!(
                    "{}{}={}",
                    j.id,
                    j.op.map_or(String::new(), |o| format!("({o})")),
                    j.status
                        .map_or("unknown".into(), |s| format!("{s:?}").to_lowercase())
                )
            })
            .collect();
        say!(
            out,
            "  pending: {} {} since {} {} [{}]",
            p.repair,
            p.id,
            rfc3339(p.since),
            F::WORDS.ops,
            jobs.join(", ")
        );
    }
    for h in &t.history {
        say!(
            out,
            "  history: {} {} at {}: {}",
            h.repair,
            h.id,
            rfc3339(h.at),
            h.result
        );
        if let Some(why) = &h.why {
            say!(out, "    {why}");
        }
    }
    for h in plan.fleet.halted.iter().chain(&plan.fleet.halted_groups) {
        say!(out, "  limit: {h}");
    }
    if let Some(b) = &t.blocked {
        say!(out, "  held back: {b}");
    }
    if t.actions.is_empty() {
        say!(out, "  next pass: nothing to do");
    }
    for a in &t.actions {
        say!(out, "  next pass: {a}");
    }
    let object = t.object();
    for l in plan.lint.iter().filter(|l| l.object == object) {
        say!(out, "  {} problem: {l}", F::Marks::NOUN);
    }
    out
}

/// A plain table: the header, then one line per row, each column as wide as its widest cell,
/// two spaces apart, no trailing blanks.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    // Every cell may hold a name from the fleet: one with a newline would add a row.
    let rows: Vec<Vec<std::borrow::Cow<'_, str>>> = rows
        .iter()
        .map(|r| r.iter().map(|c| shown(c)).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        for (i, c) in cells.enumerate() {
            let _ = write!(out, "{c:<w$}  ", w = widths.get(i).copied().unwrap_or(0));
        }
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
        out.push('\n');
    };
    line(&mut header.iter().copied());
    for r in &rows {
        line(&mut r.iter().map(|c| c.as_ref()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toy::fixture::{self as toy, ID};

    /// The toy family speaks of boxes on shelves, marks and steps: every word of the
    /// output that is not the engine's own must be its.
    fn assert_no_ganeti_words(text: &str) {
        for word in ["instance", "node", "job", "tag problem", "tags:", "primary"] {
            assert!(!text.to_lowercase().contains(word), "{word:?} in {text}");
        }
    }

    #[test]
    fn the_status_table_speaks_the_familys_words() {
        let table = status_table(&toy::plan());
        let want = "\
BOX  STATE         SHELF  NEEDS    ALLOWED  POLICY FROM  NEXT
b1   needs-repair  s1     restart  restart  room         start restart repair
b2   needs-repair  s1     replace  restart  room         marks: needs replace, policy allows repairs up to restart
b3   suspended     s2     -        -        shelf/s2
b4   pending       s1     restart  restart  room         start restart repair
b5   suspended     s1     -        -        box/b5

5 boxes; healthy: 0, suspended: 2, needs-repair: 2, pending: 1, failed: 0 (states now; times in UTC)
down shelves: s1 (room, down)
under repair: s1
1 mark problem(s): see `autorepair tags lint`
";
        assert_eq!(table, want);
        assert_no_ganeti_words(&table.replace("`autorepair tags lint`", ""));
    }

    #[test]
    fn explain_speaks_the_familys_words() {
        let plan = toy::plan();
        let requested = explain(&plan, plan.target("b4").unwrap());
        assert!(
            requested.starts_with("box b4: pending now\n  on shelf s1\n"),
            "{requested}"
        );
        assert!(
            requested.contains(&format!(
                "  pending: restart {ID} since 1970-01-01T00:01:40Z steps []\n"
            )),
            "{requested}"
        );
        // An unreadable mark holds what it would govern (rule 11), and explain says which.
        let unreadable = explain(&plan, plan.target("b5").unwrap());
        assert!(
            unreadable.contains("  - policy: suspended: unreadable policy mark")
                && unreadable.ends_with(
                    "  mark problem: box/b5: bogus:1:2: 3 fields: a policy has one, a suspend one or two, a pending mark five, a result six; until it is fixed it allows no repair on what the policy of box/b5 governs; `autorepair allow LEVEL box/b5` replaces it\n"
                ),
            "{unreadable}"
        );
        for t in &plan.targets {
            assert_no_ganeti_words(&explain(&plan, t));
        }
    }

    #[test]
    fn status_json_flattens_the_familys_facts_into_each_target() {
        let plan = toy::plan();
        let json = serde_json::to_value(status_json(&plan)).unwrap();
        let b1 = &json["targets"][0];
        assert_eq!((&b1["name"], &b1["shelf"]), (&"b1".into(), &"s1".into()));
        assert_eq!(json["counts"]["needs-repair"], 2);
        assert_eq!(json["lint"][0]["object"]["kind"], "box");
    }
}
