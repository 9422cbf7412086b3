//! Rule 11 through the binary, in every family, on copies of the demo fleets: a mark of ours
//! that cannot be read holds back what it would govern. Each case damages one mark of a target
//! the demo's first pass repairs (or of a scope above it); `status` must show it held and say
//! why, `tags lint` must name the mark, and a real `run` must start no repair there. The verb
//! lint names for such a mark must then lift it.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const ID: &str = "0b4f6f6e-7e2a-4c1e-9d7a-2f4b1c3d5e6f";
/// Past what a 64-bit epoch holds.
const HUGE: &str = "99999999999999999999";

/// Where a damaged mark goes.
#[derive(Clone, Copy, Debug)]
enum On {
    Target,
    /// The scope whose policy the target inherits (its group, rack, Cluster).
    Scope,
    /// The fleet's root (the cluster), where the family keeps one apart from the scope.
    Root,
}

/// One family's demo: its files, its flags, the target its first pass repairs, and how its
/// marks sit in the fleet file.
pub(crate) struct Demo {
    pub(crate) family: &'static str,
    /// The fleet file, then the other inputs, copied into the test's directory.
    files: &'static [(&'static str, &'static str)],
    args: &'static [&'static str],
    pub(crate) now: i64,
    pub(crate) target: &'static str,
    /// Adds a mark (`name=value` for map stores, the tag for Ganeti) to the object `on`.
    mark: fn(&mut Value, On, &str),
    /// The marks of the object `on` in the fleet file, spelled as `mark` takes them.
    marks_on: fn(&Value, On) -> Vec<String>,
}

fn ganeti_object(fleet: &mut Value, on: On) -> &mut Value {
    match on {
        On::Target => instance(fleet),
        On::Scope => fleet["groups"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|g| g["name"] == "ams-b")
            .unwrap(),
        On::Root => &mut fleet["cluster"],
    }
}

fn ganeti_mark(fleet: &mut Value, on: On, mark: &str) {
    ganeti_object(fleet, on)["tags"]
        .as_array_mut()
        .unwrap()
        .push(mark.into());
}

fn instance(fleet: &mut Value) -> &mut Value {
    fleet["instances"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|i| i["name"] == "web-b4.ams.example")
        .unwrap()
}

fn ganeti_marks(fleet: &Value, on: On) -> Vec<String> {
    let mut fleet = fleet.clone();
    serde_json::from_value(ganeti_object(&mut fleet, on)["tags"].clone()).unwrap()
}

fn metal3_object<'v>(fleet: &'v mut Value, kind: &str, name: &str) -> &'v mut Value {
    fleet["items"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap()
}

fn metal3_place(on: On) -> (&'static str, &'static str) {
    match on {
        On::Target => ("Machine", "workers-7d9f-b2"),
        On::Scope => ("MachineDeployment", "workers"),
        On::Root => ("Cluster", "edge"),
    }
}

fn metal3_mark(fleet: &mut Value, on: On, mark: &str) {
    let (kind, name) = metal3_place(on);
    let (key, value) = mark.split_once('=').unwrap();
    let meta = &mut metal3_object(fleet, kind, name)["metadata"];
    if meta.get("annotations").is_none_or(Value::is_null) {
        meta["annotations"] = serde_json::json!({});
    }
    meta["annotations"][key] = value.into();
}

fn metal3_marks(fleet: &Value, on: On) -> Vec<String> {
    let mut fleet = fleet.clone();
    let (kind, name) = metal3_place(on);
    pairs(&metal3_object(&mut fleet, kind, name)["metadata"]["annotations"])
}

fn pairs(map: &Value) -> Vec<String> {
    map.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
                .collect()
        })
        .unwrap_or_default()
}

fn machine<'v>(fleet: &'v mut Value, serial: &str) -> &'v mut Value {
    fleet
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|m| m["spec"]["serial"] == serial)
        .unwrap()
}

const RACK_LABEL: &str = "autorepair.rack.";
const CLUSTER_LABEL: &str = "autorepair.cluster.";

/// The machine whose labels hold the marks of the object `on`, and whether a label is one of
/// them. A rack's marks and the cluster's live on the rack's boot server (boot-0 holds rack 0
/// and the cluster), each under a prefix of its own.
fn machines_place(on: On) -> (&'static str, fn(&str) -> bool) {
    match on {
        On::Target => ("rack0-cs2", |k| {
            !k.starts_with(RACK_LABEL) && !k.starts_with(CLUSTER_LABEL)
        }),
        On::Scope => ("boot-0", |k| k.starts_with(RACK_LABEL)),
        On::Root => ("boot-0", |k| k.starts_with(CLUSTER_LABEL)),
    }
}

fn machines_mark(fleet: &mut Value, on: On, mark: &str) {
    let (key, value) = mark.split_once('=').unwrap();
    let (serial, of) = machines_place(on);
    // The rack's labels and the cluster's share one machine: a case spelled for the other
    // would damage the wrong object.
    assert!(of(key), "{key}: not a label of {on:?}");
    let labels = &mut machine(fleet, serial)["spec"]["labels"];
    if labels.is_null() {
        *labels = serde_json::json!({});
    }
    labels[key] = value.into();
}

fn machines_marks(fleet: &Value, on: On) -> Vec<String> {
    let mut fleet = fleet.clone();
    let (serial, of) = machines_place(on);
    pairs(&machine(&mut fleet, serial)["spec"]["labels"])
        .into_iter()
        .filter(|m| of(m))
        .collect()
}

pub(crate) const GANETI: Demo = Demo {
    family: "ganeti",
    files: &[("fixtures/demo.json", "fleet.json")],
    args: &["--cluster", "fleet.json"],
    now: 1_795_878_600,
    target: "web-b4.ams.example",
    mark: ganeti_mark,
    marks_on: ganeti_marks,
};

pub(crate) const METAL3: Demo = Demo {
    family: "metal3",
    files: &[("fixtures/metal3-demo.json", "objects.json")],
    args: &["--kube-objects", "objects.json"],
    now: 1_795_402_800,
    target: "prod/workers-7d9f-b2",
    mark: metal3_mark,
    marks_on: metal3_marks,
};

pub(crate) const MACHINES: Demo = Demo {
    family: "machines",
    files: &[
        ("fixtures/machines-demo.json", "machines.json"),
        ("fixtures/machines-demo-nodes.json", "nodes.json"),
        ("fixtures/machines-demo.yml", "repair.yml"),
        ("fixtures/machines-constraints.json", "constraints.json"),
    ],
    args: &[
        "--sabakan-file",
        "machines.json",
        "--nodes",
        "nodes.json",
        "--repair-config",
        "repair.yml",
        "--constraints",
        "constraints.json",
    ],
    now: 1_800_000_000,
    target: "rack0-cs2",
    mark: machines_mark,
    marks_on: machines_marks,
};

impl Demo {
    /// A copy of the demo in a directory of its own, with `damage` done to its fleet file.
    fn copy(&self, damage: &[(On, String)]) -> (tempfile::TempDir, PathBuf) {
        self.copy_with(|value| {
            for (on, mark) in damage {
                (self.mark)(value, *on, mark);
            }
        })
    }

    /// A copy of the demo in a directory of its own, its fleet file changed by `change`.
    pub(crate) fn copy_with(
        &self,
        change: impl FnOnce(&mut Value),
    ) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        for (from, to) in self.files {
            std::fs::copy(Path::new(ROOT).join(from), dir.path().join(to)).unwrap();
        }
        let fleet = dir.path().join(self.files[0].1);
        let mut value: Value =
            serde_json::from_str(&std::fs::read_to_string(&fleet).unwrap()).unwrap();
        change(&mut value);
        std::fs::write(&fleet, serde_json::to_string_pretty(&value).unwrap()).unwrap();
        (dir, fleet)
    }

    fn bin(&self, dir: &Path) -> Command {
        self.bin_with(dir, Path::new("/dev/null"))
    }

    pub(crate) fn bin_with(&self, dir: &Path, config: &Path) -> Command {
        let mut c = Command::cargo_bin("autorepair").unwrap();
        c.current_dir(dir)
            .arg("--config")
            .arg(config)
            .args(["--log", "error"])
            .args(self.args);
        c
    }

    fn status(&self, dir: &Path) -> Value {
        self.status_with(dir, Path::new("/dev/null"))
    }

    /// The target as `status --json` shows it, under the config file `config`.
    pub(crate) fn status_with(&self, dir: &Path, config: &Path) -> Value {
        let out = self
            .bin_with(dir, config)
            .args(["status", "--json", "--now", &self.now.to_string()])
            .assert()
            .success();
        let all: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        all["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == self.target)
            .unwrap_or_else(|| panic!("{}: no target {} in {all}", self.family, self.target))
            .clone()
    }

    /// The target's pending marks that a real pass added.
    fn started_by_a_pass(&self, dir: &Path, fleet: &Path) -> Vec<String> {
        self.started_with(dir, fleet, Path::new("/dev/null"))
    }

    /// The same under the config file `config`.
    pub(crate) fn started_with(&self, dir: &Path, fleet: &Path, config: &Path) -> Vec<String> {
        let read = || -> Vec<String> {
            let value: Value =
                serde_json::from_str(&std::fs::read_to_string(fleet).unwrap()).unwrap();
            (self.marks_on)(&value, On::Target)
        };
        let before = read();
        self.bin_with(dir, config)
            .args(["run", "--now", &self.now.to_string()])
            .assert()
            .code(predicates::ord::lt(3));
        read()
            .into_iter()
            .filter(|m| m.contains("pending") && !before.contains(m))
            .collect()
    }
}

/// The damaged marks of every family, each with what the target must show: its state, what
/// `status --json` gives as its policy (`policy` and `mark`), and words of `tags lint`.
#[test]
fn an_unreadable_mark_holds_what_it_would_govern_in_every_family() {
    type Case = (&'static str, On, String, &'static str, Option<&'static str>);
    let family_cases: [(&Demo, Vec<Case>); 3] = [
        (
            &GANETI,
            vec![
                (
                    "a suspend with a duration",
                    On::Target,
                    "ganeti:watcher:autorepair:suspend:2h".into(),
                    "suspended",
                    Some("suspend"),
                ),
                (
                    "a suspend that is not a number",
                    On::Target,
                    "ganeti:watcher:autorepair:suspend:notanumber".into(),
                    "suspended",
                    Some("suspend"),
                ),
                (
                    "a negative suspend",
                    On::Target,
                    "ganeti:watcher:autorepair:suspend:-5".into(),
                    "suspended",
                    Some("suspend"),
                ),
                (
                    "a suspend past the clock",
                    On::Target,
                    format!("ganeti:watcher:autorepair:suspend:{HUGE}"),
                    "suspended",
                    Some("suspend"),
                ),
                (
                    "the group's suspend-all in floating point",
                    On::Scope,
                    "ganeti:watcher:autorepair:suspend-all:1e9".into(),
                    "suspended",
                    Some("suspend-all"),
                ),
                (
                    "the cluster's suspend-all that is not a number",
                    On::Root,
                    "ganeti:watcher:autorepair:suspend-all:notanumber".into(),
                    "suspended",
                    Some("suspend-all"),
                ),
                (
                    "a pending tag whose start overflows",
                    On::Target,
                    format!("ganeti:watcher:autorepair:pending:failover:{ID}:{HUGE}:1"),
                    "pending",
                    None,
                ),
            ],
        ),
        (
            &METAL3,
            vec![
                (
                    "a suspend until friday",
                    On::Target,
                    "autorepair.io/suspend=until friday".into(),
                    "suspended",
                    Some("suspend"),
                ),
                (
                    "a suspend past the clock",
                    On::Target,
                    format!("autorepair.io/suspend={HUGE}"),
                    "suspended",
                    Some("suspend"),
                ),
                (
                    "the owner's suspend-all in floating point",
                    On::Scope,
                    "autorepair.io/suspend-all=1e9".into(),
                    "suspended",
                    Some("suspend-all"),
                ),
                (
                    "the Cluster's suspend-all past the clock",
                    On::Root,
                    format!("autorepair.io/suspend-all={HUGE}"),
                    "suspended",
                    Some("suspend-all"),
                ),
                (
                    "a pending repair whose start overflows",
                    On::Target,
                    format!("autorepair.io/repair.{ID}=pending:power-cycle:{HUGE}:"),
                    "pending",
                    None,
                ),
            ],
        ),
        (
            &MACHINES,
            vec![
                (
                    "a suspend with a duration",
                    On::Target,
                    "autorepair.suspend=2h".into(),
                    "suspended",
                    Some("suspend"),
                ),
                (
                    "a suspend past the clock",
                    On::Target,
                    format!("autorepair.suspend={HUGE}"),
                    "suspended",
                    Some("suspend"),
                ),
                (
                    "the rack's suspend-all with a fraction",
                    On::Scope,
                    "autorepair.rack.suspend-all=1800003600.5".into(),
                    "suspended",
                    Some("suspend-all"),
                ),
                (
                    "the cluster's suspend with a duration",
                    On::Root,
                    "autorepair.cluster.suspend=2h".into(),
                    "suspended",
                    Some("suspend"),
                ),
                (
                    "the cluster's suspend as a date",
                    On::Root,
                    "autorepair.cluster.suspend=2027-01-01".into(),
                    "suspended",
                    Some("suspend"),
                ),
                (
                    "the cluster's suspend with a fraction",
                    On::Root,
                    "autorepair.cluster.suspend=1800003600.5".into(),
                    "suspended",
                    Some("suspend"),
                ),
                (
                    "the cluster's suspend past the clock",
                    On::Root,
                    format!("autorepair.cluster.suspend={HUGE}"),
                    "suspended",
                    Some("suspend"),
                ),
                (
                    "the cluster's suspend-all with a duration",
                    On::Root,
                    "autorepair.cluster.suspend-all=2h".into(),
                    "suspended",
                    Some("suspend-all"),
                ),
                (
                    "the cluster's suspend-all past the clock",
                    On::Root,
                    format!("autorepair.cluster.suspend-all={HUGE}"),
                    "suspended",
                    Some("suspend-all"),
                ),
                (
                    "a pending label with a level typo",
                    On::Target,
                    format!("autorepair.{ID}=pending.step-99.1800000000"),
                    "pending",
                    None,
                ),
            ],
        ),
    ];
    for (demo, cases) in family_cases {
        // The control: undamaged, the first pass repairs the target.
        let (dir, fleet) = demo.copy(&[]);
        let started = demo.started_by_a_pass(dir.path(), &fleet);
        assert!(
            !started.is_empty(),
            "{}: the demo's first pass no longer repairs {}",
            demo.family,
            demo.target
        );
        for (case, on, mark, state, policy) in cases {
            let what = format!("{}: {case} ({mark:?} on {on:?})", demo.family);
            let (dir, fleet) = demo.copy(&[(on, mark.clone())]);
            let t = demo.status(dir.path());
            assert_eq!(t["state"], state, "{what}: {t}");
            assert_ne!(t["next"]["do"], "start", "{what}: {t}");
            if let Some(held) = policy {
                assert_eq!(t["policy"]["policy"], "unreadable", "{what}: {t}");
                assert_eq!(t["policy"]["mark"], held, "{what}: {t}");
            } else {
                assert!(
                    t["blocked"].to_string().contains("unreadable"),
                    "{what}: {t}"
                );
            }
            if let Err(said) = lint_line(demo, dir.path(), &mark) {
                panic!("{what}: tags lint does not name it:\n{said}");
            }
            let started = demo.started_by_a_pass(dir.path(), &fleet);
            assert!(started.is_empty(), "{what}: a pass started {started:?}");
        }
    }
}

/// What `status --json` shows of the target while an unreadable mark holds it: its policy as
/// that mark (`suspend`, `suspend-all`, `policy`), or its repairs blocked by it (`pending`,
/// `result`).
#[derive(Clone, Copy, Debug)]
enum Holds {
    Policy(&'static str),
    Blocked(&'static str),
}

/// The line of `tags lint` that names the damaged mark as one that holds until it is fixed,
/// else all it said.
fn lint_line(demo: &Demo, dir: &Path, mark: &str) -> Result<String, String> {
    let lint = demo.bin(dir).args(["tags", "lint"]).output().unwrap();
    let said = String::from_utf8_lossy(&lint.stdout).into_owned();
    // A map's mark by its value: sabakan's cluster and rack labels are shown under the key the
    // backend maps them to.
    let shown = mark.split_once('=').map_or(mark, |(_, v)| v);
    said.lines()
        .find(|l| l.contains(shown) && l.contains("until it is fixed"))
        .map(str::to_owned)
        .ok_or(said)
}

/// The command a lint line gives the operator, as arguments (`LEVEL` as written).
fn advice(line: &str) -> Option<Vec<String>> {
    let (_, advice) = line.split_once("`autorepair ")?;
    let (command, _) = advice.split_once('`')?;
    Some(command.split_whitespace().map(str::to_owned).collect())
}

/// Rule 11's way out, in every family: the verb `tags lint` names for an unreadable mark
/// removes it from the fleet file, so that lint no longer names it and the target is free
/// again (the demo's first pass starts its repair).
#[test]
fn the_verb_lint_names_lifts_an_unreadable_mark_in_every_family() {
    // (case, where, the mark, the verb lint must name, what it holds)
    type Case = (&'static str, On, String, &'static str, Holds);
    // Each family with the level the target inherits, for `allow LEVEL`.
    let family_cases: [(&Demo, &str, Vec<Case>); 3] = [
        (
            &GANETI,
            "failover",
            vec![
                (
                    "a suspend that is not a number",
                    On::Target,
                    "ganeti:watcher:autorepair:suspend:notanumber".into(),
                    "resume",
                    Holds::Policy("suspend"),
                ),
                (
                    "a policy with a field",
                    On::Target,
                    "ganeti:watcher:autorepair:failover:2h".into(),
                    "allow LEVEL",
                    Holds::Policy("policy"),
                ),
                (
                    "a pending tag whose start overflows",
                    On::Target,
                    format!("ganeti:watcher:autorepair:pending:failover:{ID}:{HUGE}:1"),
                    "clear",
                    Holds::Blocked("pending"),
                ),
                (
                    "a result of no known kind",
                    On::Target,
                    format!("ganeti:watcher:autorepair:result:failover:{ID}:1795878000:exploded:1"),
                    "clear",
                    Holds::Blocked("result"),
                ),
                (
                    "the group's suspend-all in floating point",
                    On::Scope,
                    "ganeti:watcher:autorepair:suspend-all:1e9".into(),
                    "resume --all",
                    Holds::Policy("suspend-all"),
                ),
                (
                    "the group's policy with a field, beside a readable one",
                    On::Scope,
                    "ganeti:watcher:autorepair:failover:all".into(),
                    "allow LEVEL",
                    Holds::Policy("policy"),
                ),
                (
                    "the cluster's suspend-all that is not a number",
                    On::Root,
                    "ganeti:watcher:autorepair:suspend-all:notanumber".into(),
                    "resume --all",
                    Holds::Policy("suspend-all"),
                ),
            ],
        ),
        (
            &METAL3,
            "power-cycle",
            vec![
                (
                    "a suspend past the clock",
                    On::Target,
                    format!("autorepair.io/suspend={HUGE}"),
                    "resume",
                    Holds::Policy("suspend"),
                ),
                (
                    "a policy of no known level",
                    On::Target,
                    "autorepair.io/policy=reboot".into(),
                    "allow LEVEL",
                    Holds::Policy("policy"),
                ),
                (
                    "a pending repair whose start overflows",
                    On::Target,
                    format!("autorepair.io/repair.{ID}=pending:power-cycle:{HUGE}:"),
                    "clear",
                    Holds::Blocked("pending"),
                ),
                (
                    "a result of no known kind",
                    On::Target,
                    format!("autorepair.io/repair.{ID}=result:power-cycle:1795402000:exploded:"),
                    "clear",
                    Holds::Blocked("result"),
                ),
                (
                    "the Cluster's suspend-all past the clock",
                    On::Root,
                    format!("autorepair.io/suspend-all={HUGE}"),
                    "resume --all",
                    Holds::Policy("suspend-all"),
                ),
            ],
        ),
        (
            &MACHINES,
            "step-8",
            vec![
                (
                    "a suspend with a duration",
                    On::Target,
                    "autorepair.suspend=2h".into(),
                    "resume",
                    Holds::Policy("suspend"),
                ),
                (
                    "a policy of no known level",
                    On::Target,
                    "autorepair.policy=step-99".into(),
                    "allow LEVEL",
                    Holds::Policy("policy"),
                ),
                (
                    "a pending label with a level typo",
                    On::Target,
                    format!("autorepair.{ID}=pending.step-99.1800000000"),
                    "clear",
                    Holds::Blocked("pending"),
                ),
                (
                    "a result of no known kind",
                    On::Target,
                    format!("autorepair.{ID}=result.step-1.1799990000.exploded"),
                    "clear",
                    Holds::Blocked("result"),
                ),
                (
                    "the rack's policy of no known level",
                    On::Scope,
                    "autorepair.rack.policy=all".into(),
                    "allow LEVEL",
                    Holds::Policy("policy"),
                ),
                (
                    "the cluster's suspend with a fraction",
                    On::Root,
                    "autorepair.cluster.suspend=1800003600.5".into(),
                    "resume",
                    Holds::Policy("suspend"),
                ),
                (
                    "the cluster's suspend-all with a duration",
                    On::Root,
                    "autorepair.cluster.suspend-all=2h".into(),
                    "resume --all",
                    Holds::Policy("suspend-all"),
                ),
                (
                    "the cluster's policy of no known level",
                    On::Root,
                    "autorepair.cluster.policy=everything".into(),
                    "allow LEVEL",
                    Holds::Policy("policy"),
                ),
            ],
        ),
    ];
    for (demo, level, cases) in family_cases {
        for (case, on, mark, verb, holds) in cases {
            let what = format!("{}: {case} ({mark:?} on {on:?})", demo.family);
            let (dir, fleet) = demo.copy(&[(on, mark.clone())]);
            let t = demo.status(dir.path());
            match holds {
                Holds::Policy(held) => {
                    assert_eq!(t["policy"]["policy"], "unreadable", "{what}: {t}");
                    assert_eq!(t["policy"]["mark"], held, "{what}: {t}");
                }
                Holds::Blocked(held) => {
                    assert_eq!(t["blocked"]["reason"], "unreadable", "{what}: {t}");
                    assert_eq!(t["blocked"]["mark"], held, "{what}: {t}");
                }
            }
            let line = lint_line(demo, dir.path(), &mark)
                .unwrap_or_else(|said| panic!("{what}: tags lint does not name it:\n{said}"));
            let advice =
                advice(&line).unwrap_or_else(|| panic!("{what}: lint names no verb: {line}"));
            assert!(
                advice.join(" ").starts_with(&format!("{verb} ")),
                "{what}: lint does not send the operator to `{verb}`: {line}"
            );
            let args = advice.iter().map(|a| if a == "LEVEL" { level } else { a });
            let out = demo
                .bin(dir.path())
                .args(args)
                .args(["--now", &demo.now.to_string()])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{what}: `autorepair {}` failed: {}",
                advice.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
            let value: Value =
                serde_json::from_str(&std::fs::read_to_string(&fleet).unwrap()).unwrap();
            let left = (demo.marks_on)(&value, on);
            assert!(
                !left.contains(&mark),
                "{what}: `autorepair {}` left it: {left:?}",
                advice.join(" ")
            );
            if let Ok(still) = lint_line(demo, dir.path(), &mark) {
                panic!("{what}: tags lint still names it: {still}");
            }
            let t = demo.status(dir.path());
            assert_eq!(t["policy"]["policy"], "allow", "{what}: {t}");
            assert!(t["blocked"].is_null(), "{what}: {t}");
            assert_eq!(t["next"]["do"], "start", "{what}: {t}");
        }
    }
}
