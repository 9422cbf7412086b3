//! `report --html`: the fleet as one self-contained page a person can look at. Pure: the plan
//! of one pass (its clock is `plan.now`), the limits it was planned with and each target's
//! limiter scope in, HTML out. No script, no external asset, nothing fetched: the page's own
//! Content-Security-Policy forbids it. Every text that comes from the fleet (names, marks'
//! reasons, what operations said) is escaped.

use super::next_text;
use crate::engine::marks::Codec;
use crate::engine::plan::{Blocked, Halt, HistoryEntry, RepairView};
use crate::engine::{Family, Limits, Next, Plan, RepairResult, State, TargetPlan, rfc3339};
use crate::plug::FamilyFace;
use std::collections::BTreeMap;
use std::fmt::{self, Display, Write};

/// Above this many targets the grid shows bare squares instead of named cells: the page of a
/// large fleet stays readable, and every cell still names its target in its tooltip.
const NAMED_CELLS_UP_TO: usize = 600;
/// The pending list and the timeline show at most this many rows; `status` shows them all.
const MAX_ROWS: usize = 500;
const MAX_TIMELINE: usize = 100;

/// What the page is made from.
pub struct Page<'a, F: Family> {
    pub plan: &'a Plan<F>,
    pub limits: &'a Limits,
    /// Each target's limiter scope ([`FamilyFace::report_scope`]), in the plan's order.
    pub scopes: &'a [&'a str],
    /// Where the fleet was read from, for the title.
    pub source: &'a str,
}

/// Text escaped for HTML content and quoted attribute values alike.
pub struct Esc<'a>(pub &'a str);

impl Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(i) = rest.find(['&', '<', '>', '"', '\'']) {
            f.write_str(&rest[..i])?;
            f.write_str(match rest.as_bytes()[i] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&#39;",
            })?;
            rest = &rest[i + 1..];
        }
        f.write_str(rest)
    }
}

fn esc(s: &str) -> Esc<'_> {
    Esc(s)
}

const CSS: &str = "\
*{box-sizing:border-box}
body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:0;padding:20px 28px;color:#1f2933;background:#f7f8fa}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:17px;margin:28px 0 10px;padding-bottom:4px;border-bottom:1px solid #d5dae1}
h3{font-size:14px;margin:0;display:flex;gap:10px;align-items:baseline;flex-wrap:wrap}
.sub{color:#52606d;margin:0 0 12px}
.banner{background:#b91c1c;color:#fff;padding:10px 14px;border-radius:6px;margin:12px 0;font-weight:600}
.legend{display:flex;flex-wrap:wrap;gap:14px;margin:6px 0 14px}
.legend span{display:inline-flex;align-items:center;gap:6px}
.sw{display:inline-block;width:14px;height:14px;border-radius:3px}
.scope{background:#fff;border:1px solid #d5dae1;border-radius:8px;padding:10px 12px;margin:0 0 12px}
.scope.halted{border:2px solid #b91c1c}
.counts{color:#52606d;font-weight:400;font-size:13px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(13.5em,1fr));gap:4px;margin-top:8px}
.grid.dots{grid-template-columns:repeat(auto-fill,12px);gap:2px}
.cell{font-size:12px;padding:3px 7px;border-radius:4px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.dots .cell{width:12px;height:12px;padding:0;border-radius:2px}
.healthy{background:#cdebd3;color:#14532d}
.suspended{background:#dde1e7;color:#323f4b;outline:1px dashed #7b8794;outline-offset:-1px}
.needs-repair{background:#fbd38d;color:#6b3410}
.pending{background:#a9cdfa;color:#102a5c}
.failed{background:#c62828;color:#fff}
td.state{white-space:nowrap}
td.name details ul{white-space:normal;font-weight:400;min-width:32em;max-width:48em}
.cell.acts{box-shadow:inset 3px 0 0 #1f2933}
.badge{font-size:12px;font-weight:600;padding:1px 8px;border-radius:10px;background:#e4e7eb;color:#323f4b}
.badge.bad{background:#b91c1c;color:#fff}
.badge.warn{background:#fbd38d;color:#6b3410}
.badge.good{background:#cdebd3;color:#14532d}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #d5dae1;font-size:13px}
th,td{text-align:left;vertical-align:top;padding:4px 8px;border-bottom:1px solid #e4e7eb}
th{background:#eef1f4;font-weight:600;white-space:nowrap}
td.name{white-space:nowrap;font-weight:600}
td.num{text-align:right;white-space:nowrap}
td{overflow-wrap:break-word}
td.level{white-space:nowrap}
td.outcome{min-width:10em}
details summary{cursor:pointer;color:#52606d}
details ul{margin:4px 0 0 0;padding-left:18px}
.muted{color:#7b8794}
code{font-size:12px}
footer{margin-top:28px;color:#7b8794;font-size:12px}
";

/// The whole page.
pub fn page<F: FamilyFace>(p: &Page<'_, F>) -> String {
    let plan = p.plan;
    let words = F::WORDS;
    let mut out = String::with_capacity(16 * 1024 + plan.targets.len() * 160);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<title>autorepair: {targets} of {source}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n\
<h1>autorepair: {targets} of {source}</h1>\n\
<p class=\"sub\">{n} {targets} at {at} (UTC): what the next pass would do. Read only: making this page changed nothing.</p>\n",
        targets = esc(words.targets),
        source = esc(p.source),
        n = plan.targets.len(),
        at = rfc3339(plan.now),
    );
    if let Some(h) = &plan.fleet.halted {
        let _ = writeln!(out, "<p class=\"banner\">HALTED: {}</p>", esc(&h.message));
    }
    grid(&mut out, p);
    limiter(&mut out, p);
    pending(&mut out, plan);
    timeline(&mut out, plan);
    if !plan.lint.is_empty() {
        let _ = writeln!(
            out,
            "<p>{} {} problem(s): <code>autorepair tags lint</code> lists them.</p>",
            plan.lint.len(),
            esc(F::Marks::NOUN)
        );
    }
    let _ = writeln!(
        out,
        "<footer>autorepair {} · <code>autorepair report --html</code> · states as the {} read them; times in UTC</footer>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION"),
        esc(words.targets)
    );
    out
}

/// A scope as people read it: the machines family keys its racks `rack/N`, shown as `rack N`.
fn scope_title(kind: &str, name: &str) -> String {
    let bare = name
        .strip_prefix(kind)
        .and_then(|n| n.strip_prefix('/'))
        .unwrap_or(name);
    format!("{kind} {bare}")
}

fn state_counts<'a, F: Family>(
    targets: impl Iterator<Item = &'a TargetPlan<F>>,
) -> BTreeMap<State, usize> {
    let mut counts = BTreeMap::new();
    for t in targets {
        *counts.entry(t.state).or_insert(0) += 1;
    }
    counts
}

fn counts_text(counts: &BTreeMap<State, usize>) -> String {
    let parts: Vec<String> = State::ALL
        .iter()
        .filter_map(|s| counts.get(s).map(|n| format!("{n} {s}")))
        .collect();
    parts.join(", ")
}

/// The targets of each scope, in the order of the plan's first target in it.
fn by_scope<'a, F: Family>(p: &Page<'a, F>) -> Vec<(&'a str, Vec<&'a TargetPlan<F>>)> {
    let mut order: Vec<(&str, Vec<&TargetPlan<F>>)> = Vec::new();
    let mut at: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, t) in p.plan.targets.iter().enumerate() {
        let scope = p.scopes.get(i).copied().unwrap_or(crate::plug::NO_SCOPE);
        let slot = *at.entry(scope).or_insert_with(|| {
            order.push((scope, Vec::new()));
            order.len() - 1
        });
        order[slot].1.push(t);
    }
    order.sort_by(|a, b| a.0.cmp(b.0));
    order
}

fn scope_halt<'a, F: Family>(plan: &'a Plan<F>, kind: &str, name: &str) -> Option<&'a Halt> {
    let scope = format!("{kind}/{name}");
    plan.fleet.halted_groups.iter().find(|h| *h.scope == *scope)
}

fn grid<F: FamilyFace>(out: &mut String, p: &Page<'_, F>) {
    let plan = p.plan;
    let words = F::WORDS;
    let kind = words.domain_scope;
    let named = plan.targets.len() <= NAMED_CELLS_UP_TO;
    let _ = writeln!(
        out,
        "<h2 id=\"grid\">{} by {}</h2>",
        esc(words.targets),
        esc(kind)
    );
    out.push_str("<div class=\"legend\">");
    for s in State::ALL {
        let _ = write!(
            out,
            "<span><i class=\"sw {s}\"></i>{s} ({})</span>",
            plan.counts.get(&s).copied().unwrap_or(0)
        );
    }
    let _ = writeln!(
        out,
        "<span><i class=\"sw\" style=\"box-shadow:inset 3px 0 0 #1f2933;background:#fff;border:1px solid #d5dae1\"></i>the next pass acts on it</span></div>"
    );
    for (scope, targets) in by_scope(p) {
        let down = plan
            .fleet
            .down_nodes
            .iter()
            .filter(|d| d.group == scope)
            .count();
        let halt = scope_halt(plan, kind, scope);
        let badge = match (halt, down) {
            (Some(_), _) => "<span class=\"badge bad\">HALTED</span>".to_owned(),
            (None, 0) => String::new(),
            (None, n) => format!(
                "<span class=\"badge warn\">down {}: {n}</span>",
                esc(words.domains)
            ),
        };
        let _ = writeln!(
            out,
            "<section class=\"scope{}\"><h3>{} <span class=\"counts\">{} {}: {}</span>{badge}</h3>",
            if halt.is_some() { " halted" } else { "" },
            esc(&scope_title(kind, scope)),
            targets.len(),
            esc(words.targets),
            counts_text(&state_counts(targets.iter().copied())),
        );
        let _ = write!(
            out,
            "<div class=\"grid{}\">",
            if named { "" } else { " dots" }
        );
        for t in targets {
            let next = next_text(t);
            let acts = if matches!(t.next, Next::Nothing | Next::Wait) {
                ""
            } else {
                " acts"
            };
            let mut title = format!("{}: {}", t.name, t.state);
            if let Some(problem) = &t.problem {
                let _ = write!(title, "; {problem}");
            }
            if !next.is_empty() {
                let _ = write!(title, "; next pass: {next}");
            }
            let _ = write!(
                out,
                "<div class=\"cell {}{acts}\" title=\"{}\">{}</div>",
                t.state,
                esc(&title),
                esc(if named { &t.name } else { "" })
            );
        }
        out.push_str("</div></section>\n");
    }
}

/// Worst first: what needs a person, then what waits, then what runs.
fn urgency(s: State) -> u8 {
    match s {
        State::Failed => 0,
        State::NeedsRepair => 1,
        State::Pending => 2,
        State::Suspended => 3,
        State::Healthy => 4,
    }
}

fn pending<F: FamilyFace>(out: &mut String, plan: &Plan<F>) {
    let words = F::WORDS;
    let mut rows: Vec<&TargetPlan<F>> = plan
        .targets
        .iter()
        .filter(|t| {
            t.next != Next::Nothing
                || t.problem.is_some()
                || matches!(t.state, State::NeedsRepair | State::Pending | State::Failed)
        })
        .collect();
    rows.sort_by(|a, b| (urgency(a.state), &a.name).cmp(&(urgency(b.state), &b.name)));
    let _ = writeln!(out, "<h2 id=\"pending\">Pending, and why</h2>");
    if rows.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"muted\">Nothing: no {} needs a repair, and the next pass writes nothing.</p>",
            esc(words.target)
        );
        return;
    }
    let _ = writeln!(
        out,
        "<table><thead><tr><th>{} <span class=\"muted\">(unfold: the reasoning)</span></th><th>state</th><th>what is wrong</th><th>needs</th><th>allowed <span class=\"muted\">(from)</span></th><th>next pass</th><th>held back because</th></tr></thead><tbody>",
        esc(words.target)
    );
    for t in rows.iter().take(MAX_ROWS) {
        let _ = write!(
            out,
            "<tr><td class=\"name\"><details><summary><i class=\"sw {state}\"></i> {name}</summary><ul>",
            state = t.state,
            name = esc(&t.name),
        );
        for n in &t.notes {
            let _ = write!(out, "<li>{}</li>", esc(n));
        }
        let next = match t.next {
            Next::Wait => "waits".to_owned(),
            _ => next_text(t),
        };
        let _ = writeln!(
            out,
            "</ul></details></td><td class=\"state\">{state}</td><td>{problem}</td><td class=\"level\">{needs}</td><td>{allowed} <span class=\"muted\">({source})</span></td><td>{next}</td><td>{held}</td></tr>",
            state = t.state,
            problem = esc(t.problem.as_deref().unwrap_or("")),
            needs = esc(&match (t.needed_repair, &t.needs_person) {
                (Some(level), _) => level.to_string(),
                (None, Some(_)) => "a person".to_owned(),
                (None, None) => String::new(),
            }),
            allowed = esc(&t.allowed_repair.map_or("-".into(), |l| l.to_string())),
            source = esc(&t.policy_source),
            next = esc(&next),
            held = t
                .blocked
                .as_ref()
                .map_or(String::new(), |b| held_back(b, t)),
        );
    }
    out.push_str("</tbody></table>\n");
    if rows.len() > MAX_ROWS {
        let _ = writeln!(
            out,
            "<p class=\"muted\">and {} more: <code>autorepair status</code> lists every {}.</p>",
            rows.len() - MAX_ROWS,
            esc(words.target)
        );
    }
}

/// Why a target is held back (HTML), with what a person can do when it is theirs to do.
fn held_back<F: Family>(b: &Blocked<F>, t: &TargetPlan<F>) -> String {
    match (b, &t.needs_person) {
        (Blocked::Parked, _) => format!(
            "{}: after investigating, <code>autorepair clear</code>",
            esc(&b.to_string())
        ),
        (Blocked::NotAllowed { .. }, _) => format!(
            "{}: <code>autorepair allow</code> or <code>request</code> would let it",
            esc(&b.to_string())
        ),
        (Blocked::NeedsPerson, Some(why)) => format!("needs a person: {}", esc(why)),
        _ => esc(&b.to_string()).to_string(),
    }
}

/// A limit as a number, or `-` for none (usize::MAX: a machines fleet leaves the engine's
/// unset failure-domain limits to CKE's).
fn limit_text(max: usize) -> String {
    if max == usize::MAX {
        "-".into()
    } else {
        max.to_string()
    }
}

/// A mass-failure limit as configured: a number, a share (`40%`), or both.
fn ceiling_text(c: crate::engine::limits::Ceiling) -> String {
    match c.share {
        Some(share) if c.count == usize::MAX => share.to_string(),
        Some(share) => format!("{} and {share}", c.count),
        None => limit_text(c.count),
    }
}

fn verdict(n: usize, max: usize, halt: Option<&Halt>) -> String {
    match halt {
        Some(_) => "<span class=\"badge bad\">HALTED</span>".into(),
        None if n == max => "<span class=\"badge warn\">at the limit</span>".into(),
        None => "<span class=\"badge good\">ok</span>".into(),
    }
}

fn limiter<F: FamilyFace>(out: &mut String, p: &Page<'_, F>) {
    let (plan, limits, words) = (p.plan, p.limits, F::WORDS);
    let f = &plan.fleet;
    let fleet_halt = |limit: &str| f.halted.as_ref().filter(|h| h.limit == limit);
    let _ = writeln!(
        out,
        "<h2 id=\"limiter\">The limiter's verdict</h2>\n<table><thead><tr><th>limit</th><th>now</th><th>limit</th><th>verdict</th></tr></thead><tbody>"
    );
    let row = |out: &mut String, what: String, n: usize, max: String, key: &str, v: String| {
        let _ = writeln!(
            out,
            "<tr><td>{} <span class=\"muted\">({key})</span></td><td class=\"num\">{n}</td><td class=\"num\">{}</td><td>{v}</td></tr>",
            esc(&what),
            max,
        );
    };
    row(
        out,
        format!("{} down in the {}", words.domains, words.fleet),
        f.down_nodes.len(),
        ceiling_text(limits.down_in_fleet()),
        "max_down_nodes",
        verdict(
            f.down_nodes.len(),
            limits.max_down_nodes,
            fleet_halt("max_down_nodes"),
        ),
    );
    if let Some(max) = limits.max_broken {
        row(
            out,
            format!("{} needing repair", words.targets),
            f.broken,
            limit_text(max),
            "max_broken",
            verdict(f.broken, max, fleet_halt("max_broken")),
        );
    }
    row(
        out,
        format!("{} under repair", words.domains),
        f.domains_under_repair.len(),
        limit_text(limits.max_domains_under_repair),
        "max_domains_under_repair",
        slots(
            f.domains_under_repair.len(),
            limits.max_domains_under_repair,
        ),
    );
    if let Some(max) = limits.max_pending {
        row(
            out,
            "repairs under way".into(),
            f.active_repairs,
            limit_text(max),
            "max_pending",
            slots(f.active_repairs, max),
        );
    }
    row(
        out,
        "writes this pass".into(),
        f.writes,
        limit_text(limits.max_writes_per_pass),
        "max_writes_per_pass",
        if f.deferred > 0 {
            format!(
                "<span class=\"badge warn\">{} {} deferred to the next pass</span>",
                f.deferred,
                esc(words.targets)
            )
        } else {
            "<span class=\"badge good\">ok</span>".into()
        },
    );
    out.push_str("</tbody></table>\n");
    if let Some(h) = &f.halted {
        let _ = writeln!(out, "<p><b>HALTED</b>: {}</p>", esc(&h.message));
    }
    if !f.domains_under_repair.is_empty() {
        let _ = writeln!(
            out,
            "<p>Under repair: {}</p>",
            esc(&f.domains_under_repair.join(", "))
        );
    }

    let kind = words.domain_scope;
    let per_group = ceiling_text(limits.down_per_group());
    let _ = writeln!(
        out,
        "<h3 style=\"margin:14px 0 6px\">Per {}: {} down vs <code>max_down_nodes_per_group</code> = {per_group}</h3>",
        esc(kind),
        esc(words.domains),
    );
    let _ = writeln!(
        out,
        "<table><thead><tr><th>{}</th><th>{}</th><th>down</th><th>limit</th><th>down {}</th><th>verdict</th></tr></thead><tbody>",
        esc(kind),
        esc(words.targets),
        esc(words.domains)
    );
    let mut scopes: BTreeMap<&str, usize> = by_scope(p)
        .into_iter()
        .map(|(s, targets)| (s, targets.len()))
        .collect();
    for d in &f.down_nodes {
        scopes.entry(d.group.as_str()).or_insert(0);
    }
    for (scope, n) in scopes {
        let down: Vec<String> = f
            .down_nodes
            .iter()
            .filter(|d| d.group == scope)
            .map(|d| format!("{} ({})", d.name, d.state))
            .collect();
        let halt = scope_halt(plan, kind, scope);
        let _ = writeln!(
            out,
            "<tr><td class=\"name\">{}</td><td class=\"num\">{n}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}{}</td></tr>",
            esc(&scope_title(kind, scope)),
            down.len(),
            per_group,
            esc(&down.join(", ")),
            verdict(down.len(), limits.max_down_nodes_per_group, halt)
                .replace("at the limit", "at the limit: one more halts it"),
            halt.map_or(String::new(), |h| format!(" {}", esc(&h.message))),
        );
    }
    out.push_str("</tbody></table>\n");
}

fn slots(n: usize, max: usize) -> String {
    if n >= max {
        "<span class=\"badge warn\">all taken: new repairs wait</span>".into()
    } else {
        "<span class=\"badge good\">free</span>".into()
    }
}

/// One line of the timeline: a result mark, or a repair still under way.
enum Event<'a, F: Family> {
    Ended(&'a HistoryEntry<F>),
    Running(&'a RepairView<F>),
}

impl<F: Family> Event<'_, F> {
    /// When it ended, or when it started if it still runs: the timeline's order.
    fn at(&self) -> i64 {
        match self {
            Event::Ended(h) => h.at,
            Event::Running(r) => r.since,
        }
    }
}

fn timeline<F: FamilyFace>(out: &mut String, plan: &Plan<F>) {
    let words = F::WORDS;
    let mut events: Vec<(&str, Event<F>)> = Vec::new();
    for t in &plan.targets {
        events.extend(t.history.iter().map(|h| (t.name.as_str(), Event::Ended(h))));
        events.extend(
            t.pending
                .iter()
                .map(|r| (t.name.as_str(), Event::Running(r))),
        );
    }
    events.sort_by(|(a, ea), (b, eb)| eb.at().cmp(&ea.at()).then_with(|| a.cmp(b)));
    let _ = writeln!(
        out,
        "<h2 id=\"timeline\">Recent repairs, newest first</h2>\n<p class=\"muted\">From the result {m}s (a result records when the repair ended; its start was in the pending {m} it replaced) and the repairs under way.</p>",
        m = esc(F::Marks::NOUN)
    );
    if events.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"muted\">No repair recorded on any {}.</p>",
            esc(words.target)
        );
        return;
    }
    let _ = writeln!(
        out,
        "<table><thead><tr><th>{}</th><th>repair</th><th>started</th><th>ended</th><th>outcome</th><th>{}</th><th>id</th></tr></thead><tbody>",
        esc(words.target),
        esc(words.ops)
    );
    for (target, e) in events.iter().take(MAX_TIMELINE) {
        let (repair, id, started, ended, class, outcome, ops) = match e {
            Event::Ended(h) => {
                let (class, outcome) = match (h.result, &h.why) {
                    (RepairResult::Success, _) => ("healthy", "success".to_owned()),
                    (RepairResult::Failure, Some(why)) => ("failed", format!("failure: {why}")),
                    (RepairResult::Failure, None) => ("failed", "failure".to_owned()),
                    (RepairResult::Enoperm, _) => (
                        "needs-repair",
                        "not allowed by the policy (enoperm)".to_owned(),
                    ),
                };
                let ops: Vec<String> = h.jobs.iter().map(ToString::to_string).collect();
                let repair = h.repair.to_string();
                (
                    repair,
                    &h.id,
                    "-".to_owned(),
                    rfc3339(h.at),
                    class,
                    outcome,
                    ops,
                )
            }
            Event::Running(r) => {
                let ops: Vec<String> = r
                    .jobs
                    .iter()
                    .map(|j| match j.op {
                        Some(step) => format!("{} ({step})", j.id),
                        None => j.id.to_string(),
                    })
                    .collect();
                let repair = r.repair.to_string();
                let started = rfc3339(r.since);
                (
                    repair,
                    &r.id,
                    started,
                    "running".to_owned(),
                    "pending",
                    "under way".to_owned(),
                    ops,
                )
            }
        };
        let _ = writeln!(
            out,
            "<tr><td class=\"name\">{}</td><td class=\"level\">{}</td><td class=\"level\">{started}</td><td class=\"level\">{ended}</td><td class=\"outcome\"><span class=\"sw {class}\"></span> {}</td><td>{}</td><td><code>{}</code></td></tr>",
            esc(target),
            esc(&repair),
            esc(&outcome),
            esc(&ops.join(", ")),
            esc(id),
        );
    }
    out.push_str("</tbody></table>\n");
    if events.len() > MAX_TIMELINE {
        let _ = writeln!(
            out,
            "<p class=\"muted\">and {} older: <code>autorepair explain</code> shows a {}'s history.</p>",
            events.len() - MAX_TIMELINE,
            esc(words.target)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toy::fixture::{self as toy, ID, Toy, ToyBox, ToyLevel};

    const NASTY: &str = "<script>alert('x')</script>&\"b\"";

    fn render(plan: &Plan<Toy>, limits: &Limits) -> String {
        let scopes = vec!["room"; plan.targets.len()];
        page(&Page {
            plan,
            limits,
            scopes: &scopes,
            source: "room <1>",
        })
    }

    /// The toy room, plus a box whose name is markup, and two results of different ages.
    fn room_plan(limits: &Limits) -> Plan<Toy> {
        let mut room = toy::room();
        let id2 = "1b4e28ba-2fa1-11d2-883f-0016d3cca427";
        room.boxes.extend([
            ToyBox {
                name: NASTY.into(),
                shelf: "s1".into(),
                marks: vec![format!("result:restart:{ID}:300:success:")],
                needs: Some(ToyLevel::Restart),
            },
            ToyBox {
                name: "b7".into(),
                shelf: "s2".into(),
                marks: vec![format!("result:restart:{id2}:200:failure:")],
                needs: None,
            },
        ]);
        crate::engine::plan::<Toy>(&room, &(), 1000, limits, 1)
    }

    /// The `<tbody>` of the section with this id.
    fn section<'a>(page: &'a str, id: &str) -> &'a str {
        let start = page.find(&format!("id=\"{id}\"")).expect(id);
        let rest = &page[start..];
        &rest[..rest.find("</tbody>").unwrap_or(rest.len())]
    }

    #[test]
    fn every_text_from_the_fleet_is_escaped() {
        assert_eq!(
            Esc("<a href='x'>&\"</a>").to_string(),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        let page = render(&room_plan(&Limits::default()), &Limits::default());
        assert!(!page.contains("<script"), "{page}");
        assert!(!page.contains("alert('x')"), "{page}");
        let escaped = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;b&quot;";
        // In its cell's tooltip and text, the pending list and the timeline.
        assert!(page.matches(escaped).count() >= 4, "{page}");
        assert!(page.contains("<title>autorepair: boxes of room &lt;1&gt;</title>"));
    }

    #[test]
    fn the_page_has_every_section_and_nothing_external() {
        let page = render(&room_plan(&Limits::default()), &Limits::default());
        assert!(page.starts_with("<!DOCTYPE html>\n"));
        assert!(page.ends_with("</html>\n"));
        for id in ["grid", "pending", "limiter", "timeline"] {
            assert!(page.contains(&format!("<h2 id=\"{id}\">")), "{id}");
        }
        assert!(
            page.contains("default-src 'none'"),
            "the page may fetch nothing"
        );
        for external in ["src=", "href=", "url(", "@import", "<script", "<link"] {
            assert!(!page.contains(external), "{external} in the page");
        }
    }

    #[test]
    fn one_grid_cell_per_target_coloured_by_its_state() {
        let plan = room_plan(&Limits::default());
        let page = render(&plan, &Limits::default());
        let grid = &page[page.find("id=\"grid\"").unwrap()..page.find("id=\"limiter\"").unwrap()];
        assert_eq!(
            grid.matches("<div class=\"cell ").count(),
            plan.targets.len()
        );
        for t in &plan.targets {
            let cell = format!("<div class=\"cell {}", t.state);
            let title = format!("title=\"{}: {}", Esc(&t.name), t.state);
            assert!(
                grid.contains(&cell) && grid.contains(&title),
                "{}: {grid}",
                t.name
            );
        }
        assert!(grid.contains(">b1</div>"), "named cells in a small fleet");
        assert!(
            grid.contains("suspended (2)"),
            "the legend counts each state: {grid}"
        );
    }

    #[test]
    fn a_large_fleet_gets_bare_squares_each_still_named_in_its_tooltip() {
        let mut room = toy::room();
        room.boxes = (0..=NAMED_CELLS_UP_TO)
            .map(|i| ToyBox {
                name: format!("x{i}"),
                shelf: "s2".into(),
                marks: vec![],
                needs: None,
            })
            .collect();
        let plan = crate::engine::plan::<Toy>(&room, &(), 1000, &Limits::default(), 1);
        let page = render(&plan, &Limits::default());
        assert!(page.contains("<div class=\"grid dots\">"));
        assert!(page.contains("title=\"x600: suspended\"></div>"));
    }

    #[test]
    fn the_timeline_is_newest_first_with_repairs_under_way() {
        let page = render(&room_plan(&Limits::default()), &Limits::default());
        let timeline = section(&page, "timeline");
        let rows: Vec<&str> = timeline.split("<tr>").skip(2).collect();
        let ended = |at: i64| rfc3339(at);
        assert_eq!(rows.len(), 3, "{timeline}");
        assert!(rows[0].contains(&ended(300)) && rows[0].contains("success"));
        assert!(rows[1].starts_with("<td class=\"name\">b7</td>") && rows[1].contains("failure"));
        assert!(
            rows[2].starts_with("<td class=\"name\">b4</td>")
                && rows[2].contains(&ended(100))
                && rows[2].contains("running"),
            "{}",
            rows[2]
        );
    }

    #[test]
    fn the_pending_list_says_why_worst_first() {
        let page = render(&room_plan(&Limits::default()), &Limits::default());
        let pending = section(&page, "pending");
        let b7 = pending.find("</i> b7</summary>").expect("failed: listed");
        let b2 = pending
            .find("</i> b2</summary>")
            .expect("needs-repair: listed");
        let b4 = pending.find("</i> b4</summary>").expect("pending: listed");
        assert!(b7 < b2 && b2 < b4, "{pending}");
        assert!(pending.contains("needs replace, the policy allows up to restart"));
        assert!(pending.contains("parked by a failure until cleared"));
        assert!(
            !pending.contains("</i> b3</summary>"),
            "a healthy suspended box waits for nothing"
        );
    }

    #[test]
    fn the_limiter_shows_each_scope_against_its_limit_and_a_halt() {
        let page = render(&room_plan(&Limits::default()), &Limits::default());
        let limiter = section(&page, "limiter");
        assert!(limiter.contains("shelves down in the room"), "{limiter}");
        assert!(!page.contains("class=\"banner\""));
        let strict = Limits {
            max_down_nodes: 0,
            ..Limits::default()
        };
        let page = render(&room_plan(&strict), &strict);
        assert!(page.contains("<p class=\"banner\">HALTED: mass failure: 1 shelf is down"));
        let limiter = section(&page, "limiter");
        assert!(limiter.contains("<td class=\"num\">1</td><td class=\"num\">0</td><td><span class=\"badge bad\">HALTED"), "{limiter}");
    }
}
