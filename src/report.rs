//! Human and machine output of plans: status tables, explanations, lint.

use crate::plan::{Plan, State, TargetPlan};
use serde::Serialize;
use std::fmt::Write;

/// `status --json`: `{"targets":[…],"counts":{…},"fleet":{…},"lint":[…]}`.
#[derive(Serialize)]
pub struct StatusJson<'a> {
    pub now: i64,
    pub targets: &'a [TargetPlan],
    pub counts: std::collections::BTreeMap<&'static str, usize>,
    pub fleet: &'a crate::plan::FleetSummary,
    pub lint: &'a [crate::plan::Lint],
}

pub fn status_json(plan: &Plan) -> StatusJson<'_> {
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

/// A table, one instance a line, with the per-state counts at the end.
pub fn status_table(plan: &Plan) -> String {
    let header = [
        "INSTANCE",
        "STATE",
        "NEEDS",
        "ALLOWED",
        "POLICY FROM",
        "NEXT",
    ];
    let rows: Vec<[String; 6]> = plan
        .targets
        .iter()
        .map(|t| {
            let next = if let Some(a) = t.actions.iter().find_map(|a| match a {
                crate::plan::Action::Repair(r) => Some(format!("start {} repair", r.repair)),
                _ => None,
            }) {
                a
            } else if let Some(
                crate::plan::Action::AddTags { reason, .. }
                | crate::plan::Action::RemoveTags { reason, .. },
            ) = t.actions.first()
            {
                reason.clone()
            } else if let Some(p) = &t.needs_person {
                format!("needs a person: {p}")
            } else if t.state == State::Healthy {
                String::new()
            } else {
                t.notes.last().map(|n| n.to_string()).unwrap_or_default()
            };
            [
                t.name.clone(),
                t.state.to_string(),
                opt(t.needed_repair),
                opt(t.allowed_repair),
                t.policy_source.to_string(),
                next,
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r.iter()).take(5) {
            *w = (*w).max(c.len());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &[&str]| {
        for (i, c) in cells.iter().enumerate() {
            if i < 5 {
                let _ = write!(out, "{c:<w$}  ", w = widths[i]);
            } else {
                out.push_str(c);
            }
        }
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
        out.push('\n');
    };
    line(&mut out, &header);
    for r in &rows {
        line(&mut out, &r.each_ref().map(String::as_str));
    }
    out.push('\n');
    out.push_str(&counts_line(plan));
    if let Some(h) = &plan.fleet.halted {
        let _ = writeln!(out, "HALTED: {h}");
    }
    if !plan.lint.is_empty() {
        let _ = writeln!(
            out,
            "{} tag problem(s): see `autorepair tags lint`",
            plan.lint.len()
        );
    }
    out
}

pub fn counts_line(plan: &Plan) -> String {
    let parts: Vec<String> = State::ALL
        .iter()
        .map(|s| format!("{s}: {}", plan.counts.get(s).copied().unwrap_or(0)))
        .collect();
    format!("{} instances; {}\n", plan.targets.len(), parts.join(", "))
}

/// The reasoning chain for one target.
pub fn explain(plan: &Plan, t: &TargetPlan) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "instance {}: {}", t.name, t.state);
    for n in &t.notes {
        let _ = writeln!(out, "  - {n}");
    }
    let _ = writeln!(
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
        let _ = writeln!(
            out,
            "  pending: {} {} since {} jobs [{}]",
            p.repair,
            p.id,
            p.since,
            jobs.join(", ")
        );
    }
    for h in &t.history {
        let _ = writeln!(
            out,
            "  history: {} {} at {}: {}",
            h.repair, h.id, h.at, h.result
        );
        if let Some(why) = &h.why {
            let _ = writeln!(out, "    {why}");
        }
    }
    if let Some(h) = &plan.fleet.halted {
        let _ = writeln!(out, "  fleet: {h}");
    }
    if t.actions.is_empty() {
        let _ = writeln!(out, "  next pass: nothing to do");
    }
    for a in &t.actions {
        let _ = writeln!(out, "  next pass: {a}");
    }
    for l in plan
        .lint
        .iter()
        .filter(|l| l.object.to_string() == format!("instance/{}", t.name))
    {
        let _ = writeln!(out, "  tag problem: {l}");
    }
    out
}
