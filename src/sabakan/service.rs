//! The maintained mode of `autorepair sabakan update --write FILE`: what CKE's sabakan
//! integration does inside CKE, done to a file (docs/sabakan.md).
//!
//! The generator stays pure; this module owns the files kept beside the cluster file, all
//! named after it so two clusters maintained from one directory never share one:
//!
//! | file                   | what                                                        |
//! |------------------------|-------------------------------------------------------------|
//! | `FILE.prev`            | the version before the last change                          |
//! | `FILE.history`         | the last [`HISTORY_KEEP`] changes, one JSON object a line   |
//! | `FILE.lock`            | the pass lock                                               |
//! | `FILE.applying`        | the apply command running: its pid and start time           |
//! | `FILE.variables.json`  | the stored query variables (`sabakan set-variables`)        |
//! | `FILE.disabled`        | present while the integration is disabled (`sabakan disable`)|
//!
//! The pure parts (the diff, the metrics text, a history line) are functions of their inputs;
//! the rest reads and writes those files and runs the apply command.

use super::generator::{Action, Outcome};
use super::model::{Machine, State};
use super::template::Node;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// How many changes `FILE.history` keeps: enough to see what the last days did, small enough
/// to read whole on every change.
pub const HISTORY_KEEP: usize = 20;

/// A file kept beside the cluster file: `FILE` + `suffix`.
pub fn beside(file: &Path, suffix: &str) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The pass lock of a cluster file: `FILE.lock` in the directory the file's directory
/// resolves to, so every path naming the same file (relative, through a symlinked directory)
/// finds the same lock, and before the first pass has created the file.
pub fn lock_path(file: &Path) -> std::io::Result<PathBuf> {
    beside_lock(file, ".lock")
}

/// The record of the apply command a pass runs, beside the lock: `FILE.applying`, its pid and
/// start time while it runs. A pass killed meanwhile (SIGKILL) leaves its command running and
/// the record in place, and the next pass starts no other apply while that process lives.
pub fn applying_path(file: &Path) -> std::io::Result<PathBuf> {
    beside_lock(file, ".applying")
}

fn beside_lock(file: &Path, suffix: &str) -> std::io::Result<PathBuf> {
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = file.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} names no file", file.display()),
        )
    })?;
    let mut lock = name.to_owned();
    lock.push(suffix);
    Ok(std::fs::canonicalize(dir)?.join(lock))
}

/// A unified diff of two versions of the file, `""` when they are the same.
pub fn diff(old: &str, new: &str, name: &str) -> String {
    let lines = |s: &str| -> Vec<String> {
        s.split_inclusive('\n')
            .map(|l| {
                if l.ends_with('\n') {
                    l.to_owned()
                } else {
                    format!("{l}\n")
                }
            })
            .collect()
    };
    let (a, b) = (lines(old), lines(new));
    let mut out = String::new();
    for line in difflib::unified_diff(&a, &b, name, name, "", "", 3) {
        // The headers carry a tab before an empty date.
        if let Some(head) = line.strip_suffix("\t\n") {
            out.push_str(head);
            out.push('\n');
        } else {
            out.push_str(&line);
        }
    }
    out
}

/// What CKE's integration reports after a generation: the workers of each role in the
/// configuration that results, and the healthy machines left out of it
/// (`cke_sabakan_workers{role}`, `cke_sabakan_unused_machines`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Counts {
    pub workers: BTreeMap<String, usize>,
    pub unused: usize,
}

/// The counts of `nodes` (the configuration after the pass) over `machines` (the query
/// result). A worker's role is its machine's; a worker whose machine is gone (it is being
/// removed) counts by its role label, as CKE counts the members it still holds.
pub fn counts(nodes: &[Node], machines: &[Machine], worker_roles: &[String]) -> Counts {
    let by_addr: BTreeMap<&str, &Machine> = machines
        .iter()
        .filter_map(|m| Some((m.address()?, m)))
        .collect();
    let mut workers: BTreeMap<String, usize> =
        worker_roles.iter().map(|r| (r.clone(), 0)).collect();
    for n in nodes.iter().filter(|n| !n.control_plane) {
        let role = match by_addr.get(n.address.as_str()) {
            Some(m) => m.role.clone(),
            None => n
                .labels
                .get("cke.cybozu.com/role")
                .cloned()
                .unwrap_or_default(),
        };
        *workers.entry(role).or_default() += 1;
    }
    let used: std::collections::BTreeSet<&str> = nodes.iter().map(|n| n.address.as_str()).collect();
    let unused = machines
        .iter()
        .filter(|m| m.state == State::Healthy)
        .filter(|m| m.address().is_none_or(|a| !used.contains(a)))
        .count();
    Counts { workers, unused }
}

const SUCCESSFUL: &str = "cke_sabakan_integration_successful";
const STAMP: &str = "cke_sabakan_integration_timestamp_seconds";
const WORKERS: &str = "cke_sabakan_workers";
const UNUSED: &str = "cke_sabakan_unused_machines";

/// The metrics textfile after a generation: `counts` when it succeeded, `None` when the
/// generator refused. As in CKE, a refusal sets only the success gauge and its timestamp:
/// the counts stay those of the last success, read back from `prev`.
pub fn metrics(prev: &str, counts: Option<&Counts>, now: i64) -> String {
    let mut out = String::new();
    let gauge = |out: &mut String, name: &str, help: &str| {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} gauge");
    };
    gauge(
        &mut out,
        SUCCESSFUL,
        "1 if the last generation satisfied the constraints, else 0.",
    );
    let _ = writeln!(out, "{SUCCESSFUL} {}", u8::from(counts.is_some()));
    gauge(
        &mut out,
        STAMP,
        "The Unix time cke_sabakan_integration_successful was last updated.",
    );
    let _ = writeln!(out, "{STAMP} {now}");
    gauge(
        &mut out,
        WORKERS,
        "The number of worker nodes for each role.",
    );
    match counts {
        Some(c) => {
            for (role, n) in &c.workers {
                let _ = writeln!(
                    out,
                    "{WORKERS}{{role=\"{}\"}} {n}",
                    crate::metrics::label_value(role)
                );
            }
        }
        None => carry(&mut out, prev, WORKERS),
    }
    gauge(
        &mut out,
        UNUSED,
        "The number of healthy machines not in the configuration.",
    );
    match counts {
        Some(c) => {
            let _ = writeln!(out, "{UNUSED} {}", c.unused);
        }
        None => carry(&mut out, prev, UNUSED),
    }
    out
}

/// The samples of `name` in the previous file, as they were.
fn carry(out: &mut String, prev: &str, name: &str) {
    for line in prev.lines() {
        if line
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        {
            out.push_str(line);
            out.push('\n');
        }
    }
}

/// One change, as `FILE.history` keeps it and `sabakan history` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// RFC 3339.
    pub at: String,
    pub action: Action,
    pub why: String,
    pub changes: Vec<String>,
    /// The generator's choices with every candidate's score, as `--json` prints them.
    pub choices: serde_json::Value,
    /// The apply command's standard output, when one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<String>,
}

impl Change {
    pub fn new(at: String, outcome: &Outcome, applied: Option<String>) -> Change {
        Change {
            at,
            action: outcome.action,
            why: outcome.why.clone(),
            changes: outcome.changes.clone(),
            choices: serde_json::to_value(&outcome.choices).expect("choices serialise"),
            applied,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error(
    "history {path}, line {line}: {problem} (the next change recorded keeps the file aside as {path}.bad-<time> and the readable lines in it)"
)]
pub struct HistoryError {
    pub path: PathBuf,
    pub line: usize,
    pub problem: String,
}

/// The changes in a history file, oldest first.
pub fn parse_history(text: &str, path: &Path) -> Result<Vec<Change>, HistoryError> {
    let (changes, mut bad) = read_history(text.as_bytes(), path);
    match bad.is_empty() {
        true => Ok(changes),
        false => Err(bad.swap_remove(0)),
    }
}

/// The changes of a history file that can be read, oldest first, and what is wrong with each
/// line that cannot: one bad line (a crash of another tool, a hand edit) must not cost the
/// others.
pub fn read_history(bytes: &[u8], path: &Path) -> (Vec<Change>, Vec<HistoryError>) {
    let mut changes = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.trim_ascii().is_empty() {
            continue;
        }
        match serde_json::from_slice(line) {
            Ok(c) => changes.push(c),
            Err(e) => bad.push(HistoryError {
                path: path.to_owned(),
                line: i + 1,
                problem: e.to_string(),
            }),
        }
    }
    (changes, bad)
}

/// The history text of `kept` with `change` added, the oldest dropped beyond
/// [`HISTORY_KEEP`].
pub fn push_history(mut kept: Vec<Change>, change: &Change) -> String {
    kept.push(change.clone());
    let skip = kept.len().saturating_sub(HISTORY_KEEP);
    let mut out = String::new();
    for c in &kept[skip..] {
        out.push_str(&serde_json::to_string(c).expect("a change serialises"));
        out.push('\n');
    }
    out
}

/// How `sabakan history` prints a change.
pub fn show_change(c: &Change) -> String {
    let mut out = format!("{}  {}: {}\n", c.at, c.action, c.why);
    for ch in &c.changes {
        let _ = writeln!(out, "    {ch}");
    }
    if let Some(choices) = c.choices.as_array() {
        for choice in choices {
            let purpose = choice["purpose"].as_str().unwrap_or("");
            let chosen = choice["chosen"].as_str().unwrap_or("(none)");
            let score = choice["candidates"].as_array().and_then(|cs| {
                cs.iter()
                    .find(|c| c["address"].as_str() == Some(chosen))
                    .map(|c| c["score"].clone())
            });
            match score {
                Some(s) => {
                    let _ = writeln!(out, "    {purpose}: {chosen} (score {s})");
                }
                None => {
                    let _ = writeln!(out, "    {purpose}: {chosen}");
                }
            }
        }
    }
    if let Some(a) = &c.applied {
        let first = a.lines().next().unwrap_or("");
        let _ = writeln!(
            out,
            "    applied{}{first}",
            if first.is_empty() { "" } else { ": " }
        );
    }
    out
}

pub const LOG_TARGET: &str = "autorepair::sabakan";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_shows_only_what_changed() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let d = diff(old, new, "cluster.yml");
        assert_eq!(
            d,
            "--- cluster.yml\n+++ cluster.yml\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
        );
        assert_eq!(diff(old, old, "x"), "");
        // A last line without its newline is still one line of the diff.
        assert!(diff("a", "b", "x").ends_with("-a\n+b\n"));
    }

    fn node(addr: &str, cp: bool, role: &str) -> Node {
        Node {
            address: addr.into(),
            control_plane: cp,
            labels: [("cke.cybozu.com/role".to_string(), role.to_string())].into(),
            ..Default::default()
        }
    }

    fn machines() -> Vec<Machine> {
        let text = serde_json::json!([
            {"spec": {"serial": "a", "role": "cs", "rack": 1, "ipv4": ["10.0.0.1"]}, "status": {"state": "healthy"}},
            {"spec": {"serial": "b", "role": "cs", "rack": 1, "ipv4": ["10.0.0.2"]}, "status": {"state": "healthy"}},
            {"spec": {"serial": "c", "role": "ss", "rack": 2, "ipv4": ["10.0.0.3"]}, "status": {"state": "unhealthy"}},
            {"spec": {"serial": "d", "role": "ss", "rack": 2, "ipv4": ["10.0.0.4"]}, "status": {"state": "healthy"}},
            {"spec": {"serial": "e", "role": "cs", "rack": 3, "ipv4": ["10.0.0.5"]}, "status": {"state": "healthy"}},
        ]);
        super::super::model::parse_machines(&text.to_string(), jiff::Timestamp::UNIX_EPOCH).unwrap()
    }

    #[test]
    fn counts_are_workers_by_machine_role_and_healthy_machines_left_out() {
        let ms = machines();
        let nodes = [
            node("10.0.0.1", true, "cs"),
            node("10.0.0.2", false, "cs"),
            node("10.0.0.3", false, "ss"),
            // Gone from sabakan: counted by its label until it is removed.
            node("10.0.0.9", false, "ss"),
        ];
        let c = counts(&nodes, &ms, &["cs".into(), "ss".into(), "gpu".into()]);
        assert_eq!(
            c.workers,
            [("cs".into(), 1), ("gpu".into(), 0), ("ss".into(), 2)].into()
        );
        // d and e: c is in the configuration, and unhealthy anyway.
        assert_eq!(c.unused, 2);
    }

    #[test]
    fn a_refusal_keeps_the_last_counts_and_clears_success() {
        let c = Counts {
            workers: [("cs".into(), 4), ("ss".into(), 2)].into(),
            unused: 7,
        };
        let ok = metrics("", Some(&c), 100);
        assert!(
            ok.contains("cke_sabakan_integration_successful 1\n"),
            "{ok}"
        );
        assert!(ok.contains("cke_sabakan_workers{role=\"cs\"} 4\n"), "{ok}");
        assert!(ok.contains("cke_sabakan_unused_machines 7\n"), "{ok}");
        assert!(ok.contains("cke_sabakan_integration_timestamp_seconds 100\n"));
        let refused = metrics(&ok, None, 200);
        assert!(refused.contains("cke_sabakan_integration_successful 0\n"));
        assert!(refused.contains("cke_sabakan_integration_timestamp_seconds 200\n"));
        assert!(refused.contains("cke_sabakan_workers{role=\"ss\"} 2\n"));
        assert!(refused.contains("cke_sabakan_unused_machines 7\n"));
        // Twice refused: still the counts of the last success, each once.
        let again = metrics(&refused, None, 300);
        assert_eq!(again.matches("cke_sabakan_unused_machines 7\n").count(), 1);
        assert_eq!(again.matches("{role=\"cs\"}").count(), 1);
    }

    fn change(at: &str) -> Change {
        Change {
            at: at.into(),
            action: Action::IncreaseWorker,
            why: "w".into(),
            changes: vec![],
            choices: serde_json::json!([]),
            applied: None,
        }
    }

    #[test]
    fn history_keeps_the_last_changes() {
        let path = Path::new("h");
        let mut text = String::new();
        for i in 0..HISTORY_KEEP + 3 {
            let (kept, bad) = read_history(text.as_bytes(), path);
            assert!(bad.is_empty());
            text = push_history(kept, &change(&format!("t{i}")));
        }
        let all = parse_history(&text, path).unwrap();
        assert_eq!(all.len(), HISTORY_KEEP);
        assert_eq!(all[0].at, "t3");
        assert_eq!(all.last().unwrap().at, format!("t{}", HISTORY_KEEP + 2));
        let err = parse_history("{}\n", path).unwrap_err().to_string();
        assert!(err.contains("history h, line 1"), "{err}");
    }

    #[test]
    fn a_bad_line_costs_only_itself() {
        let path = Path::new("h");
        let good = |at: &str| serde_json::to_string(&change(at)).unwrap();
        // (the file, the changes read, the lines that are not one)
        let cases: &[(Vec<u8>, &[&str], &[usize])] = &[
            (
                format!("{}\n{}\n", good("a"), good("b")).into_bytes(),
                &["a", "b"],
                &[],
            ),
            (
                format!("{}\nnot json\n{}\n\n{}\n", good("a"), good("b"), good("c")).into_bytes(),
                &["a", "b", "c"],
                &[2],
            ),
            (
                format!("{{\"at\": 1}}\n{}\n{}", good("a"), &good("b")[..9]).into_bytes(),
                &["a"],
                &[1, 3],
            ),
            (
                [good("a").as_bytes(), b"\n\xff\xfe\n", good("b").as_bytes()].concat(),
                &["a", "b"],
                &[2],
            ),
        ];
        for (text, want, lines) in cases {
            let (got, bad) = read_history(text, path);
            let got: Vec<&str> = got.iter().map(|c| c.at.as_str()).collect();
            assert_eq!(&got, want, "{}", String::from_utf8_lossy(text));
            let bad: Vec<usize> = bad.iter().map(|e| e.line).collect();
            assert_eq!(&bad, lines, "{}", String::from_utf8_lossy(text));
        }
    }
}
