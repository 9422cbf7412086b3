//! CKE's `repair:` configuration, verbatim (CKE's cluster.go), and the sabakan-trigger constraints
//! (CKE's constraints.go, used by sabakan/repairer.go). Parsing and validation only; no I/O.
//!
//! One deliberate difference from CKE: unknown keys inside `repair:` are errors. CKE ignores
//! them, and a real configuration was broken by that (CKE's own mtest/cke-cluster.yml:
//! `success_command_timeout_seconds` is not a field, so the timeout silently stayed 30 s).

use crate::k8s::LabelSelector;
use serde::{Deserialize, Serialize};

/// A file of the machines family's settings that cannot be used; the message names what the
/// file is (`repair configuration`, `constraints file`), the file and the key.
#[derive(Debug, thiserror::Error)]
#[error("{what} {path}: {message}")]
pub struct ConfigError {
    pub what: &'static str,
    pub path: String,
    pub message: String,
}

pub const REPAIR_CONFIG: &str = "repair configuration";
pub const CONSTRAINTS: &str = "constraints file";

/// `repair:` of a CKE cluster.yml.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Repair {
    /// Unset: none (CKE accepts an empty `repair:`; nothing is repaired).
    #[serde(default)]
    pub repair_procedures: Vec<Procedure>,
    #[serde(default = "one")]
    pub max_concurrent_repairs: usize,
    /// Unset: every namespace is protected.
    #[serde(default)]
    pub protected_namespaces: Option<LabelSelector>,
    /// Unset or `{}`: every running Job pod is protected.
    #[serde(default)]
    pub protected_job_pods: Option<LabelSelector>,
    #[serde(default)]
    pub evict_retries: i64,
    #[serde(default)]
    pub evict_interval: i64,
    #[serde(default = "eviction_timeout")]
    pub eviction_timeout_seconds: i64,
    /// The control planes' addresses, from the `nodes:` of a whole cluster.yml (`None` for a
    /// `repair:` section alone: then a Node's control-plane role label says).
    #[serde(skip)]
    pub control_planes: Option<std::collections::BTreeSet<String>>,
}

impl Default for Repair {
    /// No procedures, CKE's defaults elsewhere.
    fn default() -> Self {
        Repair {
            repair_procedures: Vec::new(),
            max_concurrent_repairs: 1,
            protected_namespaces: None,
            protected_job_pods: None,
            evict_retries: 0,
            evict_interval: 0,
            eviction_timeout_seconds: 600,
            control_planes: None,
        }
    }
}

fn one() -> usize {
    1
}
fn eviction_timeout() -> i64 {
    600
}
fn thirty() -> u64 {
    30
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Procedure {
    /// Unset: none, as in CKE (the procedure matches no machine).
    #[serde(default)]
    pub machine_types: Vec<String>,
    #[serde(default)]
    pub repair_operations: Vec<Operation>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Operation {
    pub operation: String,
    #[serde(default)]
    pub repair_steps: Vec<Step>,
    #[serde(default)]
    pub health_check_command: Vec<String>,
    /// The health check's timeout in seconds; 0 = none.
    #[serde(default = "thirty")]
    pub command_timeout_seconds: u64,
    #[serde(default)]
    pub success_command: Vec<String>,
    /// 0 = none.
    #[serde(default = "thirty")]
    pub success_command_timeout: u64,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub repair_command: Vec<String>,
    /// 0 = none.
    #[serde(default = "thirty")]
    pub command_timeout_seconds: u64,
    /// Attempts = retries + 1.
    #[serde(default)]
    pub command_retries: u32,
    /// Seconds between attempts.
    #[serde(default)]
    pub command_interval: u64,
    #[serde(default)]
    pub need_drain: bool,
    /// Unset or 0: no watch, the next step follows at once.
    #[serde(default)]
    pub watch_seconds: Option<u64>,
}

impl Repair {
    /// Reads `text`: a whole CKE cluster.yml (only its `repair:` is read) or the `repair:`
    /// section alone. `path` names the file in errors.
    pub fn parse(text: &str, path: &str) -> Result<Repair, ConfigError> {
        let err = |message: String| ConfigError {
            what: REPAIR_CONFIG,
            path: path.to_owned(),
            message,
        };
        let doc: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(text).map_err(|e| err(format!("not YAML (or JSON): {e}")))?;
        let section = match doc.get("repair") {
            // `repair:` with nothing under it: an empty section, as Go reads it.
            Some(serde_yaml_ng::Value::Null) => {
                serde_yaml_ng::Value::Mapping(serde_yaml_ng::Mapping::new())
            }
            Some(r) => r.clone(),
            None if doc.get("repair_procedures").is_some() => doc.clone(),
            None => {
                return Err(err(
                    "no `repair:` section: give a CKE cluster.yml with one, or the section's contents (repair_procedures, …)"
                        .into(),
                ));
            }
        };
        let mut repair: Repair = serde_yaml_ng::from_value(section.clone()).map_err(|e| {
            // serde says what is wrong but not where ("missing field `operation`"): name the
            // procedure, operation and step that it is in.
            let e = match locate(&section) {
                Some(at) => format!("{at}: {e}"),
                None => format!("repair: {e}"),
            };
            // Only an unknown key is where autorepair is stricter than CKE; a missing field
            // or a bad value is an error in its own words.
            if e.contains("unknown field") {
                err(format!(
                    "{e} (autorepair refuses keys CKE does not know: CKE would ignore them silently)"
                ))
            } else {
                err(e)
            }
        })?;
        repair.check().map_err(|e| err(e.to_string()))?;
        repair.control_planes = control_planes(&doc).map_err(err)?;
        Ok(repair)
    }

    /// What to say at start-up when the configuration can repair nothing (`repair: {}`, which
    /// CKE accepts too); `path` names the file.
    pub fn warning(&self, path: &str) -> Option<String> {
        self.repair_procedures.is_empty().then(|| {
            format!(
                "repair configuration {path}: no repair_procedures: no machine can be repaired, and no repair entry is created; add procedures for the machine types and operations (unhealthy, unreachable) to repair"
            )
        })
    }

    /// CKE's validation (`validateRepair` in its cluster.go), and commands that cannot run:
    /// an empty repair or health check command, or none, failed the entry only at run time,
    /// leaving its machine parked.
    fn check(&self) -> Result<(), RepairCheckError> {
        for (p, procedure) in self.repair_procedures.iter().enumerate() {
            for (o, op) in procedure.repair_operations.iter().enumerate() {
                let at = Location::of(p, &procedure.machine_types, o, Some(&op.operation));
                if op.health_check_command.is_empty() {
                    return Err(RepairCheckError::NoHealthCheck { at: at.to_string() });
                }
                for (s, step) in op.repair_steps.iter().enumerate() {
                    if step.repair_command.is_empty() {
                        return Err(RepairCheckError::NoRepairCommand {
                            at: at.step(s).to_string(),
                        });
                    }
                }
            }
        }
        if self.max_concurrent_repairs == 0 {
            return Err(RepairCheckError::OutOfRange {
                key: "max_concurrent_repairs",
                bound: "more than 0",
            });
        }
        if self.evict_retries < 0 {
            return Err(RepairCheckError::OutOfRange {
                key: "evict_retries",
                bound: "0 or more",
            });
        }
        if self.evict_interval < 0 {
            return Err(RepairCheckError::OutOfRange {
                key: "evict_interval",
                bound: "0 or more",
            });
        }
        if self.eviction_timeout_seconds <= 0 {
            return Err(RepairCheckError::OutOfRange {
                key: "eviction_timeout_seconds",
                bound: "more than 0",
            });
        }
        self.check_seconds()?;
        for (key, s) in [
            ("repair.protected_namespaces", &self.protected_namespaces),
            ("repair.protected_job_pods", &self.protected_job_pods),
        ] {
            if let Some(s) = s {
                s.validate_at(key)?;
            }
        }
        Ok(())
    }

    /// CKE takes any number of seconds; autorepair at most a duration's bound (100 years), as
    /// for its own durations: more would overflow the clock it is added to (a watch_seconds of
    /// 2^64-1 read as -1, no watch at all).
    fn check_seconds(&self) -> Result<(), RepairCheckError> {
        let max = crate::engine::text::MAX_DURATION.as_secs();
        let mut seconds: Vec<(String, u64)> = vec![
            (
                "repair.evict_interval".into(),
                self.evict_interval.unsigned_abs(),
            ),
            (
                "repair.eviction_timeout_seconds".into(),
                self.eviction_timeout_seconds.unsigned_abs(),
            ),
        ];
        for (p, procedure) in self.repair_procedures.iter().enumerate() {
            for (o, op) in procedure.repair_operations.iter().enumerate() {
                let at = format!("repair.repair_procedures[{p}].repair_operations[{o}]");
                seconds.push((
                    format!("{at}.command_timeout_seconds"),
                    op.command_timeout_seconds,
                ));
                seconds.push((
                    format!("{at}.success_command_timeout"),
                    op.success_command_timeout,
                ));
                for (s, step) in op.repair_steps.iter().enumerate() {
                    let at = format!("{at}.repair_steps[{s}]");
                    seconds.push((
                        format!("{at}.command_timeout_seconds"),
                        step.command_timeout_seconds,
                    ));
                    seconds.push((format!("{at}.command_interval"), step.command_interval));
                    seconds.push((
                        format!("{at}.watch_seconds"),
                        step.watch_seconds.unwrap_or(0),
                    ));
                }
            }
        }
        match seconds.into_iter().find(|(_, n)| *n > max) {
            Some((key, seconds)) => Err(RepairCheckError::TooLong { key, seconds, max }),
            None => Ok(()),
        }
    }

    /// The operation for a machine type and operation name: the first procedure listing the
    /// type, then its first operation of that exact name (as CKE picks them).
    pub fn operation(&self, machine_type: &str, operation: &str) -> Option<&Operation> {
        self.repair_procedures
            .iter()
            .find(|p| p.machine_types.iter().any(|t| t == machine_type))?
            .repair_operations
            .iter()
            .find(|o| o.operation == operation)
    }
}

/// What is wrong in a repair configuration that CKE's validation, or a command that cannot run,
/// would refuse.
#[derive(Debug, thiserror::Error)]
pub enum RepairCheckError {
    #[error(
        "{at}: health_check_command is missing or empty: give the command whose output `true` says the machine is repaired"
    )]
    NoHealthCheck { at: String },
    #[error("{at}: repair_command is empty: give the command the step runs")]
    NoRepairCommand { at: String },
    #[error("repair.{key} must be {bound}")]
    OutOfRange {
        key: &'static str,
        bound: &'static str,
    },
    #[error(
        "{key}: {seconds} seconds is more than 100 years ({max}), the longest duration autorepair takes: give fewer"
    )]
    TooLong { key: String, seconds: u64, max: u64 },
    #[error(transparent)]
    Selector(#[from] crate::k8s::selector::SelectorError),
}

/// Where in `repair:` something is, as a person finds it: the procedure by its index and
/// machine types, the operation by its name, the step by its index.
struct Location(String);

impl Location {
    fn of(p: usize, types: &[String], o: usize, operation: Option<&str>) -> Location {
        let mut at = format!(
            "repair.repair_procedures[{p}] (machine types {}), repair_operations[{o}]",
            types.join(", ")
        );
        if let Some(name) = operation {
            at.push_str(&format!(" (operation {name:?})"));
        }
        Location(at)
    }

    fn step(&self, s: usize) -> String {
        format!("{}, repair_steps[{s}]", self.0)
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The innermost procedure, operation or step of `section` that does not read, named.
fn locate(section: &serde_yaml_ng::Value) -> Option<String> {
    use serde_yaml_ng::{Value, from_value};
    let texts = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_sequence)
            .map(|s| {
                s.iter()
                    .filter_map(|t| t.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let procedures = section.get("repair_procedures")?.as_sequence()?;
    let (p, procedure) = procedures
        .iter()
        .enumerate()
        .find(|(_, v)| from_value::<Procedure>((*v).clone()).is_err())?;
    let types = texts(procedure.get("machine_types"));
    let operations = procedure
        .get("repair_operations")
        .and_then(Value::as_sequence);
    let Some((o, op)) = operations.and_then(|ops| {
        ops.iter()
            .enumerate()
            .find(|(_, v)| from_value::<Operation>((*v).clone()).is_err())
    }) else {
        return Some(format!(
            "repair.repair_procedures[{p}] (machine types {})",
            types.join(", ")
        ));
    };
    let at = Location::of(p, &types, o, op.get("operation").and_then(Value::as_str));
    let step = op
        .get("repair_steps")
        .and_then(Value::as_sequence)
        .and_then(|steps| {
            steps
                .iter()
                .position(|v| from_value::<Step>(v.clone()).is_err())
        });
    Some(match step {
        Some(s) => at.step(s),
        None => at.to_string(),
    })
}

/// The control planes of a whole cluster.yml: its `nodes:` with `control_plane: true`, by
/// address (`None` when the document has no `nodes:`).
fn control_planes(
    doc: &serde_yaml_ng::Value,
) -> Result<Option<std::collections::BTreeSet<String>>, String> {
    let Some(nodes) = doc.get("nodes") else {
        return Ok(None);
    };
    let list = match nodes {
        serde_yaml_ng::Value::Null => return Ok(Some(Default::default())),
        serde_yaml_ng::Value::Sequence(list) => list,
        _ => return Err("nodes: not a list of nodes".into()),
    };
    let mut cps = std::collections::BTreeSet::new();
    for (i, n) in list.iter().enumerate() {
        let cp = match n.get("control_plane") {
            None | Some(serde_yaml_ng::Value::Null) => false,
            Some(serde_yaml_ng::Value::Bool(b)) => *b,
            Some(v) => {
                return Err(format!(
                    "nodes[{i}].control_plane: {v:?} is not true or false"
                ));
            }
        };
        if cp {
            let address = n
                .get("address")
                .and_then(serde_yaml_ng::Value::as_str)
                .filter(|a| !a.is_empty())
                .ok_or_else(|| format!("nodes[{i}]: a control plane without an address"))?;
            cps.insert(address.to_owned());
        }
    }
    Ok(Some(cps))
}

/// The sabakan trigger's constraints, with CKE's names and defaults (its constraints.go).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Constraints {
    /// More entries than this (existing + new) and no entry is created: 0 creates none.
    pub maximum_repair_queue_entries: usize,
    /// An UNREACHABLE machine that is rebooting or out of the cluster waits this long.
    pub wait_seconds_to_repair_rebooting: u64,
    /// The etcd gate wants at least this many members in sync, less one (CKE's default 1).
    pub control_plane_count: usize,
}

impl Default for Constraints {
    fn default() -> Self {
        Constraints {
            maximum_repair_queue_entries: 0,
            wait_seconds_to_repair_rebooting: 0,
            control_plane_count: 1,
        }
    }
}

/// CKE's other constraint names: accepted and ignored, so that `ckecli constraints show`'s
/// JSON, the file the `sabakan` cluster-config verbs read, can be given as it is.
const OTHER_CONSTRAINTS: &[&str] = &[
    "minimum-workers-rate",
    "minimum-workers",
    "maximum-workers",
    "maximum-unreachable-nodes-for-reboot",
];

impl Constraints {
    /// A JSON object with CKE's names; `path` names the file in errors.
    pub fn parse(text: &str, path: &str) -> Result<Constraints, ConfigError> {
        let err = |message: String| ConfigError {
            what: CONSTRAINTS,
            path: path.to_owned(),
            message,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| err(format!("not JSON: {e}")))?;
        let serde_json::Value::Object(obj) = value else {
            return Err(err(
                "expected a JSON object such as {\"maximum-repair-queue-entries\": 3}".into(),
            ));
        };
        let mut c = Constraints::default();
        for (key, v) in &obj {
            let n = || {
                v.as_u64()
                    .ok_or_else(|| err(format!("{key}: {v} is not a whole number ≥ 0")))
            };
            match key.as_str() {
                "maximum-repair-queue-entries" => {
                    c.maximum_repair_queue_entries = usize::try_from(n()?).unwrap_or(usize::MAX)
                }
                "wait-seconds-to-repair-rebooting" => {
                    let max = crate::engine::text::MAX_DURATION.as_secs();
                    c.wait_seconds_to_repair_rebooting = n()?;
                    if c.wait_seconds_to_repair_rebooting > max {
                        return Err(err(format!(
                            "{key}: {v} seconds is more than 100 years ({max}), the longest duration autorepair takes: give fewer"
                        )));
                    }
                }
                "control-plane-count" => {
                    c.control_plane_count = usize::try_from(n()?).unwrap_or(usize::MAX)
                }
                k if OTHER_CONSTRAINTS.contains(&k) => {}
                k => {
                    return Err(err(format!(
                        "unknown constraint {k:?}: the machines family reads maximum-repair-queue-entries, wait-seconds-to-repair-rebooting and control-plane-count"
                    )));
                }
            }
        }
        Ok(c)
    }

    /// What to say at start-up when the constraints let nothing start.
    pub fn warning(&self) -> Option<&'static str> {
        (self.maximum_repair_queue_entries == 0).then_some(
            "maximum-repair-queue-entries is 0 (CKE's default): no repair entry will be created from sabakan's machine states; raise it in the constraints file or the config's [machines] section",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLUSTER: &str = r#"
name: mycluster
nodes: []
repair:
  repair_procedures:
    - machine_types: ["IPMI-2.0", "qemu"]
      repair_operations:
        - operation: unreachable
          repair_steps:
            - repair_command: ["reboot-bmc"]
              need_drain: true
              watch_seconds: 600
            - repair_command: ["power-cycle"]
              command_timeout_seconds: 0
              command_retries: 2
              command_interval: 5
          health_check_command: ["check"]
          success_command: ["notify"]
          success_command_timeout: 10
  protected_namespaces:
    matchLabels:
      app.kubernetes.io/name: ceph
  evict_retries: 3
"#;

    #[test]
    fn a_cke_cluster_yml_is_read_with_ckes_defaults() {
        let r = Repair::parse(CLUSTER, "cluster.yml").unwrap();
        assert_eq!(r.max_concurrent_repairs, 1);
        assert_eq!(r.eviction_timeout_seconds, 600);
        assert_eq!(r.evict_retries, 3);
        assert_eq!(r.evict_interval, 0);
        assert!(r.protected_job_pods.is_none());
        let op = r.operation("qemu", "unreachable").unwrap();
        assert_eq!(op.command_timeout_seconds, 30);
        assert_eq!(op.success_command_timeout, 10);
        let s = &op.repair_steps;
        assert_eq!(
            (
                s[0].command_timeout_seconds,
                s[0].command_retries,
                s[0].need_drain
            ),
            (30, 0, true)
        );
        assert_eq!(s[0].watch_seconds, Some(600));
        assert_eq!(
            (
                s[1].command_timeout_seconds,
                s[1].command_retries,
                s[1].command_interval
            ),
            (0, 2, 5)
        );
        assert_eq!(s[1].watch_seconds, None);
        assert!(r.operation("qemu", "unhealthy").is_none());
        assert!(r.operation("other", "unreachable").is_none());
        // The section alone reads the same.
        let section = CLUSTER.split("repair:\n").nth(1).unwrap();
        let dedented: String = section
            .lines()
            .map(|l| l.strip_prefix("  ").unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n");
        let alone = Repair::parse(&dedented, "r.yml").unwrap();
        // But for the control planes, which only a whole cluster.yml names.
        assert_eq!(alone.control_planes, None);
        assert_eq!(r.control_planes, Some(Default::default()));
        assert_eq!(
            Repair {
                control_planes: r.control_planes.clone(),
                ..alone
            },
            r
        );
    }

    #[test]
    fn the_control_planes_are_the_nodes_a_cluster_yml_marks() {
        let with = |nodes: &str| CLUSTER.replace("nodes: []", nodes);
        let cases: &[(&str, Result<&[&str], &str>)] = &[
            (
                "nodes:\n  - address: 10.0.0.1\n    control_plane: true\n  - address: 10.0.0.2\n  - address: 10.0.0.3\n    control_plane: false\n  - address: 10.0.0.4\n    control_plane: true",
                Ok(&["10.0.0.1", "10.0.0.4"]),
            ),
            ("nodes:", Ok(&[])),
            (
                "nodes:\n  - address: 10.0.0.1\n    control_plane: yes please",
                Err("nodes[0].control_plane"),
            ),
            (
                "nodes:\n  - control_plane: true",
                Err("nodes[0]: a control plane without an address"),
            ),
            ("nodes: 3", Err("nodes: not a list")),
        ];
        for (nodes, want) in cases {
            let got = Repair::parse(&with(nodes), "c.yml");
            match (got, want) {
                (Ok(r), Ok(cps)) => {
                    let cps: std::collections::BTreeSet<String> =
                        cps.iter().map(|s| s.to_string()).collect();
                    assert_eq!(r.control_planes, Some(cps), "{nodes}");
                }
                (Err(e), Err(w)) => {
                    let e = e.to_string();
                    assert!(e.contains(w) && e.contains("c.yml"), "{nodes}: {e}");
                }
                (g, w) => panic!("{nodes}: got {g:?}, want {w:?}"),
            }
        }
    }

    #[test]
    fn bad_configurations_name_the_file_and_the_key() {
        let typo = CLUSTER.replace(
            "success_command_timeout:",
            "success_command_timeout_seconds:",
        );
        let cases: Vec<(String, &str)> = vec![
            (typo, "success_command_timeout_seconds"),
            (
                CLUSTER.replace("evict_retries: 3", "evict_retries: -1"),
                "evict_retries",
            ),
            (
                CLUSTER.replace("evict_retries: 3", "max_concurrent_repairs: 0"),
                "max_concurrent_repairs",
            ),
            (
                CLUSTER.replace("evict_retries: 3", "eviction_timeout_seconds: 0"),
                "eviction_timeout_seconds",
            ),
            // Seconds past the duration bound: 2^64-1 read as -1, no watch.
            (
                CLUSTER.replacen(
                    "watch_seconds: 600",
                    "watch_seconds: 18446744073709551615",
                    1,
                ),
                "repair.repair_procedures[0].repair_operations[0].repair_steps[0].watch_seconds: 18446744073709551615 seconds is more than 100 years",
            ),
            (
                CLUSTER.replace(
                    "evict_retries: 3",
                    "eviction_timeout_seconds: 9223372036854775807",
                ),
                "repair.eviction_timeout_seconds: 9223372036854775807 seconds is more than 100 years",
            ),
            (
                CLUSTER.replace("app.kubernetes.io/name: ceph", "\"bad key!\": ceph"),
                "protected_namespaces",
            ),
            ("name: x\n".to_owned(), "no `repair:` section"),
            (
                CLUSTER.replace("repair_procedures:", "repair_procedure:"),
                "repair_procedure",
            ),
        ];
        for (text, key) in cases {
            let e = Repair::parse(&text, "c.yml").unwrap_err().to_string();
            assert!(e.contains("c.yml") && e.contains(key), "{key}: {e}");
        }
    }

    /// Commands that cannot run are refused at load, as a missing `repair_command` is: they
    /// would fail the entry at run time and park the machine.
    #[test]
    fn commands_that_cannot_run_are_refused_at_load() {
        let cases: Vec<(String, &str)> = vec![
            (
                CLUSTER.replace(
                    "health_check_command: [\"check\"]",
                    "health_check_command: []",
                ),
                "repair.repair_procedures[0] (machine types IPMI-2.0, qemu), repair_operations[0] (operation \"unreachable\"): health_check_command is missing or empty",
            ),
            (
                CLUSTER.replace("          health_check_command: [\"check\"]\n", ""),
                "repair_operations[0] (operation \"unreachable\"): health_check_command is missing or empty",
            ),
            (
                CLUSTER.replace("repair_command: [\"power-cycle\"]", "repair_command: []"),
                "repair_operations[0] (operation \"unreachable\"), repair_steps[1]: repair_command is empty",
            ),
        ];
        for (text, want) in cases {
            assert_ne!(text, CLUSTER, "{want}: the case changes nothing");
            let e = Repair::parse(&text, "c.yml").unwrap_err().to_string();
            assert!(e.starts_with("repair configuration c.yml: "), "{e}");
            assert!(e.contains(want), "{want}: {e}");
        }
    }

    /// serde's errors say what but not where: the procedure, operation and step are named.
    #[test]
    fn errors_inside_a_procedure_name_it() {
        let cases: Vec<(String, &str)> = vec![
            (
                CLUSTER.replace("- operation: unreachable", "- command_timeout_seconds: 5"),
                "repair.repair_procedures[0] (machine types IPMI-2.0, qemu), repair_operations[0]: missing field `operation`",
            ),
            (
                CLUSTER.replace("command_retries: 2", "command_retries: -2"),
                "repair_operations[0] (operation \"unreachable\"), repair_steps[1]: ",
            ),
            (
                CLUSTER.replace("need_drain: true", "need_drain: 7"),
                "repair_operations[0] (operation \"unreachable\"), repair_steps[0]: ",
            ),
            (
                CLUSTER.replace("- repair_command: [\"reboot-bmc\"]", "- command_retries: 1"),
                "repair_steps[0]: missing field `repair_command`",
            ),
            (
                CLUSTER.replace(
                    "machine_types: [\"IPMI-2.0\", \"qemu\"]",
                    "machine_types: 5",
                ),
                "repair.repair_procedures[0] (machine types ): ",
            ),
        ];
        for (text, want) in cases {
            assert_ne!(text, CLUSTER, "{want}: the case changes nothing");
            let e = Repair::parse(&text, "c.yml").unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn an_empty_repair_section_is_accepted_as_cke_does() {
        for text in [
            "repair: {}\n",
            "name: x\nrepair:\n",
            "repair:\n  max_concurrent_repairs: 2\n",
        ] {
            let r = Repair::parse(text, "c.yml").unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert!(r.repair_procedures.is_empty());
            let w = r.warning("c.yml").expect("nothing can be repaired");
            assert!(
                w.contains("c.yml") && w.contains("repair_procedures"),
                "{w}"
            );
        }
        assert!(
            Repair::parse(CLUSTER, "c.yml")
                .unwrap()
                .warning("c.yml")
                .is_none()
        );
    }

    #[test]
    fn only_unknown_keys_are_said_to_be_unknown_to_cke() {
        const SUFFIX: &str = "CKE does not know";
        // (text, a word the error names, whether it is an unknown key)
        let cases: Vec<(String, &str, bool)> = vec![
            (
                CLUSTER.replace("evict_retries: 3", "evict_retry: 3"),
                "evict_retry",
                true,
            ),
            (
                CLUSTER.replace("- operation: unreachable", "- name: unreachable"),
                "name",
                true,
            ),
            (
                CLUSTER.replace("- operation: unreachable", "- health_check_command: [x]"),
                "operation",
                false,
            ),
            (
                CLUSTER.replace("command_retries: 2", "command_retries: -2"),
                "-2",
                false,
            ),
            (
                CLUSTER.replace("watch_seconds: 600", "watch_seconds: soon"),
                "soon",
                false,
            ),
        ];
        for (text, word, unknown) in cases {
            let e = Repair::parse(&text, "c.yml").unwrap_err().to_string();
            assert!(e.contains(word), "{word}: {e}");
            assert_eq!(e.contains(SUFFIX), unknown, "{word}: {e}");
        }
    }

    #[test]
    fn constraints_take_ckes_names_and_defaults() {
        assert_eq!(
            Constraints::parse("{}", "c.json").unwrap(),
            Constraints::default()
        );
        assert!(Constraints::default().warning().is_some());
        let c = Constraints::parse(
            r#"{"control-plane-count": 3, "maximum-repair-queue-entries": 5, "wait-seconds-to-repair-rebooting": 600}"#,
            "c.json",
        )
        .unwrap();
        assert_eq!(c.maximum_repair_queue_entries, 5);
        assert_eq!(c.wait_seconds_to_repair_rebooting, 600);
        assert!(c.warning().is_none());
        for bad in [
            r#"{"maximum-repair-queue-entry": 1}"#,
            r#"{"maximum-repair-queue-entries": -1}"#,
            "[]",
            r#"{"wait-seconds-to-repair-rebooting": 18446744073709551615}"#,
        ] {
            let e = Constraints::parse(bad, "c.json").unwrap_err().to_string();
            assert!(e.contains("c.json"), "{e}");
        }
        let e = Constraints::parse(
            r#"{"wait-seconds-to-repair-rebooting": 3155760001}"#,
            "c.json",
        );
        assert!(e.unwrap_err().to_string().contains("more than 100 years"));
    }
}
