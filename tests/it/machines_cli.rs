//! The README's machines tour, through the binary, on a copy of the demo machines file.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

const NOW: i64 = 1_800_000_000;
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

struct Tour {
    dir: tempfile::TempDir,
    machines: PathBuf,
    nodes: PathBuf,
}

impl Tour {
    fn new() -> Tour {
        let dir = tempfile::tempdir().unwrap();
        let machines = dir.path().join("machines.json");
        let nodes = dir.path().join("nodes.json");
        std::fs::copy(format!("{ROOT}/fixtures/machines-demo.json"), &machines).unwrap();
        std::fs::copy(format!("{ROOT}/fixtures/machines-demo-nodes.json"), &nodes).unwrap();
        Tour {
            dir,
            machines,
            nodes,
        }
    }

    fn bin(&self) -> Command {
        self.bin_with("fixtures/machines-demo.yml")
    }

    /// The tour's flags with another repair configuration.
    fn bin_with(&self, repair_config: &str) -> Command {
        self.bin_configured(repair_config, Path::new("/dev/null"))
    }

    /// The tour's flags with another repair configuration and autorepair's own config file.
    fn bin_configured(&self, repair_config: &str, config: &Path) -> Command {
        // The demo's commands keep their marks in the directory autorepair runs in.
        let mut c = Command::cargo_bin("autorepair").unwrap();
        c.current_dir(self.dir.path())
            .arg("--config")
            .arg(config)
            .arg("--sabakan-file")
            .arg(&self.machines)
            .arg("--nodes")
            .arg(&self.nodes)
            .arg("--repair-config")
            .arg(Path::new(ROOT).join(repair_config))
            .arg("--constraints")
            .arg(format!("{ROOT}/fixtures/machines-constraints.json"));
        c
    }

    fn status(&self, now: i64) -> Value {
        let out = self
            .bin()
            .args(["status", "--json", "--now", &now.to_string()])
            .assert()
            .success();
        serde_json::from_slice(&out.get_output().stdout).unwrap()
    }

    /// Changes one machine's entry in the machines file, as a person or sabakan would.
    fn edit(&self, serial: &str, change: impl FnOnce(&mut Value)) {
        let mut doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&self.machines).unwrap()).unwrap();
        let m = doc
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|m| m["spec"]["serial"] == serial)
            .unwrap_or_else(|| panic!("no machine {serial}"));
        change(m);
        std::fs::write(&self.machines, doc.to_string()).unwrap();
    }

    fn labels(&self, serial: &str) -> Value {
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(&self.machines).unwrap()).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .find(|m| m["spec"]["serial"] == serial)
            .unwrap()["spec"]["labels"]
            .clone()
    }

    /// `tags lint` finds problems (exit 1) and says `text` among them.
    fn lint_says(&self, text: &str) {
        let lint = self.bin().args(["tags", "lint"]).assert().code(1);
        let said = String::from_utf8_lossy(&lint.get_output().stdout);
        assert!(said.contains(text), "{said}");
    }

    /// A pass with `--dry-run` leaves the machines file byte for byte as it was.
    fn dry_run_writes_nothing(&self, now: i64) {
        let before = std::fs::read_to_string(&self.machines).unwrap();
        self.bin()
            .args(["run", "--dry-run", "--now", &now.to_string()])
            .assert()
            .success();
        assert_eq!(std::fs::read_to_string(&self.machines).unwrap(), before);
    }

    fn run(&self, now: i64) {
        self.bin()
            .args(["run", "--now", &now.to_string()])
            .assert()
            .success();
    }
}

fn target<'v>(status: &'v Value, name: &str) -> &'v Value {
    status["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {status}"))
}

#[test]
fn the_tour_repairs_the_unhealthy_machine_and_holds_the_suspended_rack() {
    let t = Tour::new();
    let s = t.status(NOW);
    assert_eq!(target(&s, "rack0-cs2")["state"], "needs-repair", "{s}");
    assert_eq!(target(&s, "rack0-cs2")["needed_repair"], "step-1");
    // rack 1's boot server carries autorepair.suspend: its UNREACHABLE machine waits.
    assert_eq!(target(&s, "rack1-cs1")["state"], "suspended", "{s}");
    assert_eq!(target(&s, "rack0-cs1")["state"], "healthy");

    let table = t
        .bin()
        .args(["status", "--now", &NOW.to_string()])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&table.get_output().stdout).into_owned();
    assert!(text.starts_with("MACHINE "), "{text}");
    t.bin()
        .args(["explain", "rack1-cs1", "--now", &NOW.to_string()])
        .assert()
        .success();

    // Dry run: nothing written.
    let before = std::fs::read_to_string(&t.machines).unwrap();
    t.bin()
        .args(["run", "--dry-run", "--now", &NOW.to_string()])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&t.machines).unwrap(), before);

    // Pass 1 creates the entry; pass 2 drains (cordon in the nodes file); pass 3 runs the
    // command; pass 4 finds it healthy; pass 5 records the result and uncordons.
    for i in 0..6 {
        t.run(NOW + 60 * i);
    }
    let labels = t.labels("rack0-cs2");
    assert!(
        labels["autorepair.progress"]
            .as_str()
            .unwrap()
            .starts_with("succeeded."),
        "{labels}"
    );
    assert!(
        labels.as_object().unwrap().values().any(|v| v
            .as_str()
            .unwrap()
            .starts_with("result.step-1.")
            && v.as_str().unwrap().contains(".success.")),
        "{labels}"
    );
    let nodes = std::fs::read_to_string(&t.nodes).unwrap();
    assert!(!nodes.contains("autorepair.io/cordoned"), "{nodes}");
    assert!(t.dir.path().join("repaired/10.69.0.5").exists());

    // ckecli's words.
    let list = t
        .bin()
        .args(["repair", "list", "--json"])
        .assert()
        .success();
    let rows: Value = serde_json::from_slice(&list.get_output().stdout).unwrap();
    assert_eq!(rows[0]["address"], "10.69.0.5", "{rows}");
    assert_eq!(rows[0]["status"], "succeeded");
    assert_eq!(rows[0]["nodename"], "10.69.0.5");
    t.bin()
        .args(["repair", "delete", "--finished"])
        .assert()
        .success();
    t.run(NOW + 600);
    assert!(t.labels("rack0-cs2").get("autorepair.entry").is_none());
}

#[test]
fn admin_verbs_speak_ckecli() {
    let t = Tour::new();
    t.bin()
        .args(["repair", "add", "unreachable", "qemu", "10.69.1.4"])
        .assert()
        .success();
    // What the person asked does not fit the fleet: exit 2, as the README's exit codes say
    // (these said 3, "could not read").
    let refusals: [(&[&str], &str); 4] = [
        (
            &["add", "unreachable", "qemu", "10.69.1.4"],
            "already has repair entry",
        ),
        (&["add", "exploded", "qemu", "10.69.1.4"], "no operation"),
        (
            &["add", "unreachable", "qemu", "10.9.9.9"],
            "no machine has the address",
        ),
        (
            &["delete", "10.9.9.9"],
            "no repair entry for address 10.9.9.9",
        ),
    ];
    for (args, says) in refusals {
        let out = t.bin().arg("repair").args(args).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(err.contains(says), "{args:?}: {err}");
    }
    t.bin().args(["repair", "disable"]).assert().success();
    assert_eq!(t.labels("boot-0")["autorepair.cluster.queue"], "disabled");
    t.bin().args(["repair", "enable"]).assert().success();
    assert!(t.labels("boot-0").get("autorepair.cluster.queue").is_none());
    t.bin().args(["repair", "reset-backoff"]).assert().success();
    let table = t.bin().args(["repair", "list"]).assert().success();
    let text = String::from_utf8_lossy(&table.get_output().stdout).into_owned();
    let row: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(row[..2], ["1", "10.69.1.4"], "{text}");
}

#[test]
fn a_missing_input_is_named_with_what_to_pass() {
    let t = Tour::new();
    // (extra arguments, what the error must say)
    let cases: [(&[&str], &str); 2] = [
        (&[], "--repair-config"),
        // The demo's procedure drains: without Nodes it would run undrained.
        (
            &["--repair-config", "fixtures/machines-demo.yml"],
            "needs a drain, so autorepair must know which machines are Kubernetes Nodes: pass --nodes FILE",
        ),
    ];
    for (extra, want) in cases {
        let mut c = Command::cargo_bin("autorepair").unwrap();
        let out = c
            .current_dir(ROOT)
            .args(["--config", "/dev/null", "--sabakan-file"])
            .arg(&t.machines)
            .args(extra)
            .arg("status")
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(err.contains(want), "{extra:?}: {err}");
    }
    let _ = Path::new(ROOT);
}

/// The demo's procedures with every command (repair steps, health checks, a success command)
/// replaced by a script that leaves `ran` behind, so that a command run shows.
fn tattling_config(t: &Tour) -> (String, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let ran = t.dir.path().join("ran");
    let tattle = t.dir.path().join("tattle");
    std::fs::write(
        &tattle,
        format!("#!/bin/sh\ntouch '{}'\necho true\n", ran.display()),
    )
    .unwrap();
    std::fs::set_permissions(&tattle, std::fs::Permissions::from_mode(0o755)).unwrap();
    let demo = std::fs::read_to_string(format!("{ROOT}/fixtures/machines-demo.yml")).unwrap();
    let tattle = tattle.display().to_string();
    let yml = demo
        .replace(
            r#"["sh", "-c", 'mkdir -p repaired && touch "repaired/$1" && echo "$0 repair of $1"', "#,
            &format!(r#"["{tattle}", "#),
        )
        .replace(
            r#"health_check_command: ["sh", "-c", 'if [ -e "repaired/$1" ]; then echo true; else echo false; fi', "demo-health"]"#,
            &format!(
                r#"health_check_command: ["{tattle}"]
          success_command: ["{tattle}"]"#
            ),
        );
    assert_eq!(yml.matches(&tattle).count(), 6, "{yml}");
    let path = t.dir.path().join("tattle.yml");
    std::fs::write(&path, yml).unwrap();
    (path.display().to_string(), ran)
}

fn simulate(t: &Tour, config: &str, extra: &[&str]) -> assert_cmd::assert::Assert {
    t.bin_with(config)
        .args(["simulate", "--scenarios", "3", "--seed", "1", "--now"])
        .arg(NOW.to_string())
        .args(extra)
        .assert()
}

#[test]
fn simulate_exercises_the_fleets_procedures_and_runs_none_of_its_commands() {
    let t = Tour::new();
    let (config, ran) = tattling_config(&t);
    // An unfinished entry: reading the file for a pass would run its health check.
    t.bin_with(&config)
        .args(["repair", "add", "unhealthy", "qemu", "10.69.0.5"])
        .assert()
        .success();
    let read = |p: &Path| std::fs::read(p).unwrap();
    let (machines, nodes) = (read(&t.machines), read(&t.nodes));
    let out = simulate(&t, &config, &["--json"]).code(0);
    let summary: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(summary["scenarios"], 3, "{summary}");
    assert_eq!(summary["findings"], serde_json::json!([]), "{summary}");
    let stats = &summary["stats"];
    // The world's own configuration has no procedure for type qemu: repairs and drains come
    // from the fleet's.
    for what in ["repairs_succeeded", "jobs_submitted", "kills"] {
        assert!(stats[what].as_u64().unwrap() > 0, "{what}: {stats}");
    }
    for what in [
        "drains started",
        "repair commands succeeded",
        "success commands run",
    ] {
        assert!(
            stats["world"][what].as_u64().unwrap() > 0,
            "{what}: {stats}"
        );
    }
    assert!(!ran.exists(), "a command of the repair configuration ran");
    assert_eq!(read(&t.machines), machines, "the machines file was written");
    assert_eq!(read(&t.nodes), nodes, "the Nodes file was written");
    assert!(!t.dir.path().join("repaired").exists());
    // The same fleet and configuration in a real pass run the commands: the check above can
    // fail.
    t.bin_with(&config)
        .args(["run", "--now"])
        .arg(NOW.to_string())
        .assert()
        .success();
    assert!(ran.exists(), "run did not run the health check");
}

#[test]
fn simulate_says_the_same_for_a_seed_and_names_types_without_a_procedure() {
    let t = Tour::new();
    let mut fleet: Value =
        serde_json::from_str(&std::fs::read_to_string(&t.machines).unwrap()).unwrap();
    for m in fleet.as_array_mut().unwrap() {
        if m["spec"]["serial"] == "rack1-ss1" {
            m["spec"]["bmc"]["type"] = "IPMI-2.0".into();
        }
    }
    std::fs::write(&t.machines, fleet.to_string()).unwrap();
    let text = || {
        let out = simulate(&t, "fixtures/machines-demo.yml", &[]).code(0);
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let first = text();
    assert_eq!(text(), first, "the same seed gave another summary");
    let lines: Vec<&str> = first.lines().collect();
    assert!(lines[0].starts_with("3 scenario(s), "), "{first}");
    let succeeded: u64 = lines[0]
        .split(", ")
        .find_map(|p| p.strip_suffix(" repairs succeeded"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{first}"));
    assert!(succeeded > 0, "{first}");
    assert_eq!(
        lines[1], "no safety or liveness rule was violated",
        "{first}"
    );
    assert_eq!(
        lines[2..],
        [
            r#"note: machine type "IPMI-2.0" (1 machine) has no procedure for unhealthy or unreachable in the repair configuration: the world breaks such machines too, and they are never repaired"#
        ],
        "{first}"
    );
}

/// Scenarios of the demo fleet, with the shipped limits, in which `simulate` found a bug:
/// replayed, they must keep every rule.
#[test]
fn simulate_keeps_every_rule_where_it_once_found_a_bug() {
    let t = Tour::new();
    for (seed, bug) in [
        (
            16,
            "a machine suspended mid-repair held the only failure-domain slot for ever",
        ),
        (
            9394,
            "the oracle gave a deleted entry to a once-off request, and counted it running",
        ),
    ] {
        let out = t
            .bin_with("fixtures/machines-demo.yml")
            .args(["simulate", "--scenarios", "1", "--seed"])
            .arg(seed.to_string())
            .args(["--now", &NOW.to_string()])
            .assert();
        let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(
            text.contains("no safety or liveness rule was violated"),
            "seed {seed} ({bug}):\n{text}"
        );
        out.code(0);
    }
}

/// CKE's index only grows: an entry deleted and removed must not give its index to the next
/// one, or one index names two repairs in logs, metrics and `repair list`.
#[test]
fn an_index_is_never_given_twice() {
    let t = Tour::new();
    let add = |address: &str| {
        let out = t
            .bin()
            .args(["repair", "add", "unreachable", "qemu", address])
            .assert()
            .success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    assert!(add("10.69.1.4").contains("#1 "));
    t.bin()
        .args(["repair", "delete", "10.69.1.4"])
        .assert()
        .success();
    // The pass removes the deleted entry and every mark naming its index.
    t.run(NOW);
    let labels = t.labels("rack1-cs1");
    assert!(labels.get("autorepair.entry").is_none(), "{labels}");
    let added = add("10.69.1.4");
    assert!(!added.contains("#1 "), "{added}");
    // Every entry has its own index, and the counter (the cluster holder's label, written
    // before the entry) is the highest given out.
    let list = t
        .bin()
        .args(["repair", "list", "--json"])
        .assert()
        .success();
    let rows: Value = serde_json::from_slice(&list.get_output().stdout).unwrap();
    let mut indexes: Vec<u64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["index"].as_str().unwrap().parse().unwrap())
        .collect();
    let max = *indexes.iter().max().unwrap();
    indexes.dedup();
    assert_eq!(indexes.len(), rows.as_array().unwrap().len(), "{rows}");
    assert_eq!(
        t.labels("boot-0")["autorepair.cluster.index"],
        max.to_string()
    );
}

/// Each field of every line starts where its column's header does.
fn assert_aligned(table: &str) {
    let starts = |line: &str| -> Vec<usize> {
        let b = line.as_bytes();
        (0..b.len())
            .filter(|&i| b[i] != b' ' && (i == 0 || b[i - 1] == b' '))
            .collect()
    };
    let mut lines = table.lines();
    let header = starts(lines.next().unwrap());
    for line in lines {
        assert_eq!(starts(line), header, "not aligned:\n{table}");
    }
}

#[test]
fn repair_verbs_say_what_they_did_to_which_entry() {
    let t = Tour::new();
    for i in 0..6 {
        t.run(NOW + 60 * i);
    }
    t.bin()
        .args(["repair", "add", "unreachable", "qemu", "10.69.1.4"])
        .assert()
        .success();
    let text = |args: &[&str]| {
        let out = t.bin().args(args).assert().success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    let list = text(&["repair", "list"]);
    assert_eq!(list.lines().count(), 3, "{list}");
    assert_aligned(&list);

    // Nothing is in back-off: nothing is cleared, the finished entry least of all.
    let reset = text(&["repair", "reset-backoff"]);
    assert!(
        reset.contains("no repair entry is in drain back-off"),
        "{reset}"
    );
    // An unfinished entry in back-off is cleared, and named.
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&t.machines).unwrap()).unwrap();
    for m in doc.as_array_mut().unwrap() {
        if m["spec"]["serial"] == "rack1-cs1" {
            m["spec"]["labels"]["autorepair.progress"] =
                "processing.0.waiting.1800000000.2.1800000900".into();
        }
    }
    std::fs::write(&t.machines, doc.to_string()).unwrap();
    let reset = text(&["repair", "reset-backoff"]);
    assert!(
        reset.contains("#2") && reset.contains("10.69.1.4"),
        "{reset}"
    );
    assert!(!reset.contains("#1"), "{reset}");
    assert_eq!(
        t.labels("rack1-cs1")["autorepair.progress"],
        "processing.0.waiting.1800000000.0.0"
    );

    // An entry already marked deleted is said to be so, not missing.
    let deleted = text(&["repair", "delete", "--finished"]);
    assert!(deleted.contains("#1"), "{deleted}");
    let again = text(&["repair", "delete", "10.69.0.5"]);
    assert!(again.contains("already marked deleted"), "{again}");
    let list = text(&["repair", "list"]);
    assert!(list.contains("true"), "{list}");
    assert_aligned(&list);
    // An address without any entry is still an error.
    t.bin()
        .args(["repair", "delete", "10.69.0.4"])
        .assert()
        .failure();
}

/// ckecli's remaining repair-queue verbs: `delete INDEX`, `add … SERIAL`, `is-enabled`, and a
/// `wait` for the queue's work to end.
#[test]
fn ckecli_verbs_by_index_and_serial_is_enabled_and_wait() {
    let t = Tour::new();
    for i in 0..6 {
        t.run(NOW + 60 * i);
    }
    let run = |args: &[&str], code: i32| {
        let out = t.bin().arg("repair").args(args).assert().code(code);
        let o = out.get_output();
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    for (verb, shows) in [
        ("is-enabled", "true"),
        ("disable", ""),
        ("is-enabled", "false"),
        ("enable", ""),
        ("is-enabled", "true"),
    ] {
        let (out, err) = run(&[verb], 0);
        if !shows.is_empty() {
            assert_eq!(out, format!("{shows}\n"), "{verb}: {err}");
        }
    }
    // Only the finished demo repair is in the queue: nothing to wait for.
    let (out, _) = run(&["wait", "--timeout", "1s"], 0);
    assert_eq!(out, "no repair entry is unfinished\n");

    let (_, err) = run(&["add", "unreachable", "qemu", "10.69.1.4", "rack0-cs2"], 2);
    assert!(err.contains("is rack1-cs1, not rack0-cs2"), "{err}");
    assert!(t.labels("rack1-cs1").get("autorepair.entry").is_none());
    let (out, _) = run(&["add", "unreachable", "qemu", "10.69.1.4", "rack1-cs1"], 0);
    assert!(out.contains("#2"), "{out}");

    let (out, err) = run(&["wait", "--timeout", "1s", "--interval", "1s"], 1);
    assert!(
        out.contains("still unfinished after 1s: #2 (10.69.1.4, queued)"),
        "{out}"
    );
    assert!(err.contains("waiting for #2"), "{err}");
    t.bin()
        .args(["repair", "wait", "--interval", "0s"])
        .assert()
        .code(2);

    let (_, err) = run(&["delete", "99"], 2);
    assert!(err.contains("no repair entry #99"), "{err}");
    let (out, _) = run(&["delete", "2"], 0);
    assert!(out.contains("marked deleted: #2 (10.69.1.4)"), "{out}");
    assert!(
        t.labels("rack0-cs2").get("autorepair.entry").is_some(),
        "an index deleted another entry"
    );
    // Deleted but not removed: still the queue's work, until a pass removes it.
    run(&["wait", "--timeout", "0s"], 1);
    t.run(NOW + 600);
    assert!(t.labels("rack1-cs1").get("autorepair.entry").is_none());
    run(&["wait", "--timeout", "0s"], 0);
}

/// The README's machines tour, as `scripts/machines-tour` runs it: from a directory that is
/// not the repository, twice, the same story both times, and nothing left behind (not in the
/// directory it ran from, not in the temporary directory).
#[test]
fn the_tour_tells_the_same_story_from_anywhere_and_leaves_nothing_behind() {
    let cwd = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let tour = || {
        let out = std::process::Command::new(format!("{ROOT}/scripts/machines-tour"))
            .current_dir(cwd.path())
            .env("TMPDIR", tmp.path())
            .env("AUTOREPAIR", env!("CARGO_BIN_EXE_autorepair"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let first = tour();
    // The story: rack0-cs2's entry #1 runs its step and succeeds, then is deleted.
    let list = first
        .split("$ autorepair $M repair list\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{first}"));
    let row: Vec<&str> = list.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        row[..6],
        [
            "1",
            "10.69.0.5",
            "10.69.0.5",
            "qemu",
            "unhealthy",
            "succeeded"
        ],
        "{first}"
    );
    assert!(first.contains("marked deleted: #1 (10.69.0.5)"), "{first}");
    assert_eq!(tour(), first, "the second tour told another story");
    for dir in [cwd.path(), tmp.path()] {
        let left: Vec<_> = std::fs::read_dir(dir).unwrap().collect();
        assert!(
            left.is_empty(),
            "left behind in {}: {left:?}",
            dir.display()
        );
    }
}

/// The engine's failure-domain limits, unset, are no limit for a machines fleet: the pages
/// people read say so (`-`), not a 20-digit number.
#[test]
fn unset_domain_limits_are_shown_as_none() {
    let t = Tour::new();
    let page = t.dir.path().join("report.html");
    t.bin()
        .args(["report", "--now", &NOW.to_string(), "--html"])
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("max_down_nodes_per_group</code> = -"),
        "{html}"
    );
    assert!(!html.contains(&usize::MAX.to_string()), "{html}");
}

/// Each error names the file at fault, as what it is: a missing --nodes is the repair
/// configuration's drain step (not the machines file), a bad constraints file is a constraints
/// file, a bad or missing nodes file is a nodes file.
#[test]
fn errors_name_the_file_at_fault() {
    let t = Tour::new();
    let dir = t.dir.path();
    std::fs::write(dir.join("bad.json"), "{bad").unwrap();
    let repair = format!("{ROOT}/fixtures/machines-demo.yml");
    let constraints = format!("{ROOT}/fixtures/machines-constraints.json");
    let machines = t.machines.display().to_string();
    let nodes = t.nodes.display().to_string();
    let bad = dir.join("bad.json").display().to_string();
    let missing = dir.join("missing.json").display().to_string();
    // (flags, what the error must start with)
    let cases: [(Vec<&str>, String); 5] = [
        (
            vec!["--repair-config", &repair, "--constraints", &constraints],
            format!("repair configuration {repair}: step 1 of operation"),
        ),
        (
            vec![
                "--nodes",
                &nodes,
                "--repair-config",
                &repair,
                "--constraints",
                &bad,
            ],
            format!("constraints file {bad}: "),
        ),
        (
            vec![
                "--nodes",
                &bad,
                "--repair-config",
                &repair,
                "--constraints",
                &constraints,
            ],
            format!("nodes file {bad}: "),
        ),
        (
            vec![
                "--nodes",
                &missing,
                "--repair-config",
                &repair,
                "--constraints",
                &constraints,
            ],
            format!("nodes file {missing}: "),
        ),
        (
            vec![
                "--nodes",
                &nodes,
                "--repair-config",
                &bad,
                "--constraints",
                &constraints,
            ],
            format!("repair configuration {bad}: "),
        ),
    ];
    for (flags, want) in cases {
        let out = Command::cargo_bin("autorepair")
            .unwrap()
            .current_dir(dir)
            .args(["--config", "/dev/null", "--sabakan-file", &machines])
            .args(&flags)
            .args(["status", "--now", &NOW.to_string()])
            .assert()
            .failure();
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        let said = stderr.trim_start_matches("autorepair: error: ");
        assert!(said.starts_with(&want), "{flags:?}: {stderr}");
        assert!(
            !said.contains(&format!("{machines}:")),
            "blames the machines file: {stderr}"
        );
    }
}

/// A command only another family has is refused in words about this fleet: `snapshot` on
/// sabakan machines says they are sabakan machines (it once called them Kubernetes objects),
/// and `repair` on a Ganeti fleet says which fleets have a repair queue.
#[test]
fn a_command_of_another_family_names_this_fleets_family() {
    let t = Tour::new();
    let out = t.bin().arg("snapshot").assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains(
            "holds sabakan machines (the machines family): `snapshot` works only on a fleet of the ganeti family, named by --cluster FILE or --rapi URL (Ganeti)"
        ),
        "{err}"
    );
    assert!(!err.contains("Kubernetes"), "{err}");
    let out = Command::cargo_bin("autorepair")
        .unwrap()
        .args(["--config", "/dev/null", "--cluster"])
        .arg(format!("{ROOT}/fixtures/demo.json"))
        .args(["--lock-file"])
        .arg(t.dir.path().join("lock"))
        .args(["repair", "list"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains(
            "holds Ganeti instances (the ganeti family): `repair` works only on a fleet of the machines family, named by --sabakan-file FILE or --sabakan URL"
        ),
        "{err}"
    );
    // With no fleet named, the error names the flags of the command's family only.
    let out = Command::cargo_bin("autorepair")
        .unwrap()
        .args(["--config", "/dev/null", "auto-repair", "is-enabled"])
        .current_dir(t.dir.path())
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("no fleet to work on: pass --sabakan-file FILE or --sabakan URL (sabakan machines); or name one"),
        "{err}"
    );
    assert!(!err.contains("--cluster"), "{err}");
}

/// A family's flags work after the command as before it, as `--cluster` always did: `status
/// --sabakan-file F` was refused ("unexpected argument") while `--sabakan-file F status` worked.
#[test]
fn the_familys_flags_work_after_the_command() {
    let t = Tour::new();
    let before = t.status(1000);
    let out = Command::cargo_bin("autorepair")
        .unwrap()
        .current_dir(t.dir.path())
        .args(["--config", "/dev/null", "status", "--json", "--now", "1000"])
        .arg("--sabakan-file")
        .arg(&t.machines)
        .arg("--nodes")
        .arg(&t.nodes)
        .arg("--repair-config")
        .arg(format!("{ROOT}/fixtures/machines-demo.yml"))
        .arg("--constraints")
        .arg(format!("{ROOT}/fixtures/machines-constraints.json"))
        .assert()
        .success();
    let after: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(after, before);
}

/// Rule 11 for the machines' own records: a repair entry whose labels cannot be read is never
/// invisible. `repair list` names it (and exits 1), `status` holds its machine for a person,
/// a pass starts no entry beside it and counts it as an error, and `repair delete ADDRESS`
/// removes it.
#[test]
fn a_damaged_repair_entry_is_listed_held_and_deletable() {
    // (case, the labels that damage rack0-cs2's entry)
    let cases: [(&str, &[(&str, &str)]); 3] = [
        (
            "progress that is not a progress",
            &[
                ("autorepair.entry", "7.unhealthy.qemu"),
                ("autorepair.progress", "bogus"),
            ],
        ),
        (
            "an index that is not a number",
            &[
                ("autorepair.entry", "x.unhealthy.qemu"),
                ("autorepair.progress", "queued.0.waiting.1800000000.0.0"),
            ],
        ),
        (
            "an entry without its progress",
            &[("autorepair.entry", "7.unhealthy.qemu")],
        ),
    ];
    for (case, damage) in cases {
        let t = Tour::new();
        t.edit("rack0-cs2", |m| {
            for (k, v) in damage {
                m["spec"]["labels"][*k] = (*v).into();
            }
        });
        let list = t.bin().args(["repair", "list"]).assert().code(1);
        let said = String::from_utf8_lossy(&list.get_output().stderr);
        assert!(
            said.contains("rack0-cs2") && said.contains("repair delete 10.69.0.5"),
            "{case}: {said}"
        );
        let s = t.status(NOW);
        let m = target(&s, "rack0-cs2");
        assert!(m["needs_person"].is_string(), "{case}: {m}");
        // A dry run says so as a pass would: its exit code is what a check before a change
        // reads, and a damaged record is no less damaged for being only looked at.
        let dry = t
            .bin()
            .args(["run", "--dry-run", "--now", &NOW.to_string()])
            .assert()
            .code(1);
        let logged = String::from_utf8_lossy(&dry.get_output().stderr);
        assert!(logged.contains("cannot be read"), "{case}: {logged}");
        // The pass counts it as an error and exits 1: a fleet that needs a person must not
        // look healthy to cron or to a monitoring of the exit code.
        let pass = t
            .bin()
            .args(["run", "--now", &NOW.to_string()])
            .assert()
            .code(1);
        let said = String::from_utf8_lossy(&pass.get_output().stdout);
        assert!(said.contains(" 1 error(s)"), "{case}: {said}");
        let logged = String::from_utf8_lossy(&pass.get_output().stderr);
        assert!(
            logged.contains("rack0-cs2") && logged.contains("cannot be read"),
            "{case}: {logged}"
        );
        assert_eq!(
            t.labels("rack0-cs2")["autorepair.entry"],
            damage[0].1,
            "{case}: a pass replaced the damaged entry"
        );
        // A daemon counts it every pass, and says it once.
        let daemon = t
            .bin()
            .args(["run", "--loop", "--interval", "1s", "--passes", "3"])
            .args(["--now", &NOW.to_string()])
            .output()
            .unwrap();
        let (out, logged) = (
            String::from_utf8_lossy(&daemon.stdout),
            String::from_utf8_lossy(&daemon.stderr),
        );
        assert_eq!(out.matches(" 1 error(s)").count(), 3, "{case}: {out}");
        assert_eq!(
            logged.matches("cannot be read").count(),
            1,
            "{case}: {logged}"
        );
        t.bin()
            .args(["repair", "delete", "10.69.0.5"])
            .assert()
            .success();
        let labels = t.labels("rack0-cs2");
        assert!(
            labels.get("autorepair.entry").is_none() && labels.get("autorepair.progress").is_none(),
            "{case}: {labels}"
        );
        t.bin().args(["repair", "list"]).assert().success();
    }
}

/// The cluster's labels live on the first boot server. When another machine becomes the
/// holder (that boot server retired, or one added to a lower rack), the copies left behind
/// still count (a suspend there still suspends), a pass moves them to the new holder, and
/// `resume` removes every copy. Copies of the policy that disagree hold the cluster's level
/// until a person decides.
#[test]
fn the_clusters_labels_survive_a_change_of_holder() {
    let t = Tour::new();
    t.bin().args(["suspend", "cluster"]).assert().success();
    assert!(
        t.labels("boot-0")
            .get("autorepair.cluster.suspend")
            .is_some()
    );
    // boot-0 retired: boot-1 holds the cluster's labels now.
    t.edit("boot-0", |m| m["spec"]["role"] = "cs".into());
    let s = t.status(NOW);
    assert_eq!(
        target(&s, "rack0-cs2")["state"],
        "suspended",
        "the suspend left on the former holder stopped counting: {s}"
    );
    // A dry run moves nothing; a pass moves both labels to boot-1, the holder now.
    t.dry_run_writes_nothing(NOW);
    t.run(NOW);
    let (old, new) = (t.labels("boot-0"), t.labels("boot-1"));
    assert!(
        old.get("autorepair.cluster.suspend").is_none()
            && old.get("autorepair.cluster.policy").is_none(),
        "{old}"
    );
    assert_eq!(new["autorepair.cluster.suspend"], "", "{new}");
    assert_eq!(new["autorepair.cluster.policy"], "step-8", "{new}");
    assert_eq!(target(&t.status(NOW), "rack0-cs2")["state"], "suspended");

    // A copy left behind again (written by hand on the former holder): resume removes all.
    t.edit("boot-0", |m| {
        m["spec"]["labels"]["autorepair.cluster.suspend"] = "".into();
    });
    t.bin().args(["resume", "cluster"]).assert().success();
    for serial in ["boot-0", "boot-1"] {
        assert!(
            t.labels(serial).get("autorepair.cluster.suspend").is_none(),
            "{serial}: {}",
            t.labels(serial)
        );
    }
    assert_eq!(target(&t.status(NOW), "rack0-cs2")["state"], "needs-repair");

    // Two policies for the cluster: neither is trusted, and a pass moves neither.
    t.edit("boot-0", |m| {
        m["spec"]["labels"]["autorepair.cluster.policy"] = "step-2".into();
    });
    let s = t.status(NOW);
    assert_ne!(target(&s, "rack0-cs2")["state"], "needs-repair", "{s}");
    t.lint_says("copies disagree: step-8 on boot-1, step-2 on boot-0");
    t.run(NOW);
    assert_eq!(t.labels("boot-0")["autorepair.cluster.policy"], "step-2");
    assert_eq!(t.labels("boot-1")["autorepair.cluster.policy"], "step-8");
    assert!(t.labels("rack0-cs2").get("autorepair.entry").is_none());
    // Setting the cluster's policy again replaces both copies with one, on the holder.
    t.bin()
        .args(["allow", "step-8", "cluster"])
        .assert()
        .success();
    assert!(
        t.labels("boot-0")
            .get("autorepair.cluster.policy")
            .is_none()
    );
    assert_eq!(t.labels("boot-1")["autorepair.cluster.policy"], "step-8");
    assert_eq!(target(&t.status(NOW), "rack0-cs2")["state"], "needs-repair");
}

/// A rack's labels live on its first boot server, under `autorepair.rack.`. When another
/// machine becomes the rack's holder (a boot server added lower in the rack, or the holder
/// retired), the labels left behind are still the rack's (before the prefix, the former
/// holder's suspend became its own and the rest of the rack was repaired): a pass moves them,
/// a rack with no boot server left keeps them, `resume` removes every copy, the unprefixed
/// labels of earlier builds are renamed, and copies of the policy that disagree hold.
#[test]
fn a_racks_labels_survive_a_change_of_holder() {
    let t = Tour::new();
    let state = |serial: &str| target(&t.status(NOW), serial)["state"].clone();
    // Suspended by the verb, not by the fixture's label: the verb writes where the rack's
    // marks are stored.
    t.bin().args(["resume", "rack/1"]).assert().success();
    assert_ne!(state("rack1-cs1"), "suspended");
    t.bin().args(["suspend", "rack/1"]).assert().success();
    assert_eq!(
        t.labels("boot-1"),
        serde_json::json!({"autorepair.rack.suspend": ""})
    );
    assert_eq!(state("rack1-cs1"), "suspended");

    // rack1-ss1 becomes a boot server ahead of boot-1: it holds rack 1's labels now.
    t.edit("rack1-ss1", |m| {
        m["spec"]["role"] = "boot".into();
        m["spec"]["index-in-rack"] = 0.into();
    });
    assert_eq!(
        state("rack1-cs1"),
        "suspended",
        "the suspend left on the former holder stopped counting"
    );
    t.dry_run_writes_nothing(NOW);
    t.run(NOW);
    assert_eq!(t.labels("boot-1"), serde_json::json!({}));
    assert_eq!(t.labels("rack1-ss1")["autorepair.rack.suspend"], "");
    assert_eq!(state("rack1-cs1"), "suspended");

    // Every boot server of the rack retired: the labels left in it still hold.
    t.edit("rack1-ss1", |m| m["spec"]["role"] = "ss".into());
    t.edit("boot-1", |m| m["spec"]["role"] = "cs".into());
    assert_eq!(state("rack1-cs1"), "suspended");
    t.bin().args(["resume", "rack/1"]).assert().success();
    assert!(
        t.labels("rack1-ss1")
            .get("autorepair.rack.suspend")
            .is_none(),
        "{}",
        t.labels("rack1-ss1")
    );
    assert_ne!(state("rack1-cs1"), "suspended");

    // An earlier build's rack label (unprefixed, on the holder) is the rack's, renamed by a
    // pass.
    t.edit("boot-1", |m| {
        m["spec"]["role"] = "boot".into();
        m["spec"]["labels"] = serde_json::json!({"autorepair.suspend": ""});
    });
    assert_eq!(state("rack1-cs1"), "suspended");
    t.run(NOW);
    assert_eq!(
        t.labels("boot-1"),
        serde_json::json!({"autorepair.rack.suspend": ""})
    );
    assert_eq!(state("rack1-cs1"), "suspended");

    // Two policies for the rack: neither is trusted, and a pass moves neither.
    t.bin().args(["resume", "rack/1"]).assert().success();
    t.bin()
        .args(["allow", "step-8", "rack/1"])
        .assert()
        .success();
    t.edit("rack1-ss1", |m| {
        m["spec"]["labels"] = serde_json::json!({"autorepair.rack.policy": "check"});
    });
    t.lint_says("copies disagree: step-8 on boot-1, check on rack1-ss1");
    t.run(NOW);
    assert_eq!(t.labels("rack1-ss1")["autorepair.rack.policy"], "check");
    assert!(
        t.labels("rack1-cs1").get("autorepair.entry").is_none(),
        "a repair started under a policy that cannot be read: {}",
        t.labels("rack1-cs1")
    );
    // Setting the rack's policy again replaces both copies with one, on the holder.
    t.bin()
        .args(["allow", "step-8", "rack/1"])
        .assert()
        .success();
    assert_eq!(t.labels("rack1-ss1"), serde_json::json!({}));
    assert_eq!(t.labels("boot-1")["autorepair.rack.policy"], "step-8");
}

/// The demo's repair configuration with its first step failing (`false`), written into the
/// tour's directory; its path.
fn failing_repair_config(t: &Tour) -> String {
    let path = t.dir.path().join("failing.yml");
    std::fs::write(
        &path,
        std::fs::read_to_string(format!("{ROOT}/fixtures/machines-demo.yml"))
            .unwrap()
            .replace(
                r#"["sh", "-c", 'mkdir -p repaired && touch "repaired/$1" && echo "$0 repair of $1"', "soft"]"#,
                r#"["false"]"#,
            ),
    )
    .unwrap();
    path.display().to_string()
}

/// CKE's operator deletes a failed entry to have the machine repaired again (CKE enqueues a
/// new one): the failure result that names the entry goes with it, so the machine is not
/// parked until `clear` as well.
#[test]
fn deleting_a_failed_entry_lets_a_new_one_start() {
    let t = Tour::new();
    let config = failing_repair_config(&t);
    let run = |now: i64| {
        t.bin_with(&config)
            .args(["run", "--now", &now.to_string()])
            .assert()
            .success();
    };
    let results = |labels: &Value| -> Vec<String> {
        labels
            .as_object()
            .unwrap()
            .values()
            .filter_map(|v| v.as_str().filter(|v| v.starts_with("result.")))
            .map(str::to_owned)
            .collect()
    };
    let mut now = NOW;
    for _ in 0..8 {
        run(now);
        now += 60;
    }
    let labels = t.labels("rack0-cs2");
    assert!(
        labels["autorepair.progress"]
            .as_str()
            .unwrap()
            .starts_with("failed."),
        "{labels}"
    );
    let failed = results(&labels);
    assert!(
        failed.len() == 1 && failed[0].contains(".failure.1"),
        "{labels}"
    );
    let parked = t.status(now);
    assert_eq!(target(&parked, "rack0-cs2")["state"], "failed", "{parked}");

    t.bin()
        .args(["repair", "delete", "10.69.0.5"])
        .assert()
        .success();
    run(now);
    now += 60;
    let labels = t.labels("rack0-cs2");
    assert!(labels.get("autorepair.entry").is_none(), "{labels}");
    assert!(results(&labels).is_empty(), "{labels}");
    // Still unhealthy: the next pass enqueues a new entry, with the next index.
    run(now);
    let labels = t.labels("rack0-cs2");
    assert!(
        labels["autorepair.entry"]
            .as_str()
            .unwrap()
            .starts_with("2.unhealthy."),
        "{labels}"
    );
}

/// Rule 13 on the machines family: CKE retries nothing by itself (a failed entry stays until
/// a person deletes it), so `retries` in the config does not apply: the first failure parks
/// the machine as before, and `status` says it failed.
#[test]
fn retries_do_not_apply_where_cke_waits_for_a_person() {
    let t = Tour::new();
    let repair = failing_repair_config(&t);
    let config = t.dir.path().join("autorepair.toml");
    std::fs::write(&config, "[limits]\nretries = 3\nretry_backoff = \"1min\"\n").unwrap();
    let bin = || t.bin_configured(&repair, &config);
    let mut now = NOW;
    let mut entries = std::collections::BTreeSet::new();
    for _ in 0..20 {
        bin()
            .args(["run", "--now", &now.to_string()])
            .assert()
            .success();
        if let Some(e) = t.labels("rack0-cs2")["autorepair.entry"].as_str() {
            entries.insert(e.split('.').next().unwrap().to_owned());
        }
        now += 60;
    }
    assert_eq!(entries.len(), 1, "{entries:?}");
    let out = bin()
        .args(["status", "--json", "--now", &now.to_string()])
        .assert()
        .success();
    let s: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let m = target(&s, "rack0-cs2");
    assert_eq!(
        (m["state"].as_str(), m["blocked"]["reason"].as_str()),
        (Some("failed"), Some("parked")),
        "{m}"
    );
}

/// CKE's queue switch holds every entry: with the queue disabled, `status` and `explain` say so
/// where they said "running" and nothing.
#[test]
fn a_disabled_queue_is_said_by_status_and_explain() {
    let t = Tour::new();
    t.run(NOW);
    let says = "the repair queue is disabled";
    let text = |args: &[&str]| {
        let out = t
            .bin()
            .args(args)
            .args(["--now", &(NOW + 60).to_string()])
            .assert()
            .success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    let line = |status: &str| {
        status
            .lines()
            .find(|l| l.starts_with("rack0-cs2 "))
            .unwrap()
            .to_owned()
    };
    assert!(!text(&["status"]).contains(says));
    t.bin().args(["repair", "disable"]).assert().success();
    let status = text(&["status"]);
    assert!(line(&status).contains(&format!("wait: {says}")), "{status}");
    let explain = text(&["explain", "rack0-cs2"]);
    assert!(explain.contains(says), "{explain}");
    assert!(explain.contains("autorepair repair enable"), "{explain}");
    t.bin().args(["repair", "enable"]).assert().success();
    assert!(!text(&["explain", "rack0-cs2"]).contains(says));
}

/// The machine that carries the cluster's label `name`, and its value.
fn cluster_label(t: &Tour, name: &str) -> Option<(String, String)> {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&t.machines).unwrap()).unwrap();
    doc.as_array().unwrap().iter().find_map(|m| {
        let v = m["spec"]["labels"].get(name)?.as_str()?.to_owned();
        Some((m["spec"]["serial"].as_str()?.to_owned(), v))
    })
}

/// ckecli's auto-repair verbs. The switch holds only what the trigger would start: a person's
/// `repair add` goes on, and so does an entry under way. The stored query selects; the
/// switch, the queue's switch or the stored query that cannot be read hold what they govern,
/// and the pass counts them as errors (rule 11).
#[test]
fn auto_repair_switch_and_query_hold_only_the_trigger() {
    let t = Tour::new();
    let repair = t.dir.path().join("cluster.yml");
    std::fs::copy(format!("{ROOT}/fixtures/machines-demo.yml"), &repair).unwrap();
    let stored = t.dir.path().join("cluster.yml.auto-repair.json");
    let metrics = t.dir.path().join("metrics.prom");
    let bin = || t.bin_with(repair.to_str().unwrap());
    let run = |args: &[&str], code: i32| {
        let out = bin().args(args).assert().code(code);
        let o = out.get_output();
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let pass = |at: i64, code: i32| {
        let now = (NOW + at).to_string();
        let args = ["run", "--now", now.as_str(), "--metrics-file"];
        let out = bin().args(args).arg(&metrics).assert().code(code);
        String::from_utf8_lossy(&out.get_output().stderr).into_owned()
    };
    let entry = || t.labels("rack0-cs2").get("autorepair.entry").cloned();
    let gauge = || {
        let text = std::fs::read_to_string(&metrics).unwrap();
        text.lines()
            .find(|l| l.starts_with("cke_auto_repair_enabled"))
            .map(|l| l.rsplit(' ').next().unwrap().to_owned())
            .unwrap()
    };

    assert_eq!(run(&["auto-repair", "is-enabled"], 0).0, "true\n");
    run(&["auto-repair", "disable"], 0);
    assert_eq!(run(&["auto-repair", "is-enabled"], 0).0, "false\n");
    // The queue's switch is another one.
    assert_eq!(run(&["repair", "is-enabled"], 0).0, "true\n");
    let (explain, _) = run(&["explain", "rack0-cs2", "--now", &NOW.to_string()], 0);
    assert!(explain.contains("auto-repair is disabled"), "{explain}");
    pass(0, 0);
    assert_eq!(entry(), None, "the disabled trigger created an entry");
    assert_eq!(gauge(), "0");

    // A value that is neither absent nor "disabled" holds as disabled, said as an error.
    let (holder, _) = cluster_label(&t, "autorepair.cluster.auto-repair").unwrap();
    t.edit(&holder, |m| {
        m["spec"]["labels"]["autorepair.cluster.auto-repair"] = "enabeld".into();
    });
    let (out, err) = run(&["auto-repair", "is-enabled"], 0);
    assert_eq!(out, "false\n");
    assert!(err.contains("\"enabeld\""), "{err}");
    let logged = pass(60, 1);
    assert!(logged.contains("unreadable switch"), "{logged}");
    assert_eq!(
        entry(),
        None,
        "an unreadable switch let the trigger create an entry"
    );

    run(&["auto-repair", "enable"], 0);
    assert_eq!(cluster_label(&t, "autorepair.cluster.auto-repair"), None);
    assert_eq!(gauge(), "0", "(written by the last pass)");

    // A stored query that leaves rack 0 out: the trigger does not select rack0-cs2.
    let query = t.dir.path().join("query.json");
    std::fs::write(
        &query,
        r#"{"having":{"states":["UNHEALTHY"]},"notHaving":{"racks":[0]}}"#,
    )
    .unwrap();
    let (said, _) = run(
        &["auto-repair", "set-variables", query.to_str().unwrap()],
        0,
    );
    assert!(said.contains("cluster.yml.auto-repair.json"), "{said}");
    assert!(
        run(&["auto-repair", "get-variables"], 0)
            .0
            .contains("\"racks\":[0]")
    );
    pass(120, 0);
    assert_eq!(entry(), None, "the stored query was not used");
    assert_eq!(gauge(), "1");
    // One that cannot be read holds the trigger: not CKE's default in its place.
    std::fs::write(&stored, "{\"having\": ").unwrap();
    let logged = pass(180, 1);
    assert!(logged.contains("stored query cannot be read"), "{logged}");
    assert_eq!(
        entry(),
        None,
        "an unreadable query let the trigger create an entry"
    );
    let (_, err) = run(&["auto-repair", "get-variables"], 3);
    assert!(err.contains("cluster.yml.auto-repair.json"), "{err}");
    // A query that is not one is refused, and nothing is stored.
    let (_, err) = run(
        &["auto-repair", "set-variables", repair.to_str().unwrap()],
        2,
    );
    assert!(err.contains("cluster.yml"), "{err}");
    std::fs::remove_file(&stored).unwrap();
    let (out, err) = run(&["auto-repair", "get-variables"], 0);
    assert!(
        err.contains("CKE's default") && out.contains("UNREACHABLE"),
        "{err}{out}"
    );
    pass(240, 0);
    assert!(
        entry().is_some(),
        "enabled, with CKE's query, the trigger created no entry"
    );

    // Disabled again: a person's entry still goes on, and so does the one under way.
    run(&["auto-repair", "disable"], 0);
    run(&["repair", "add", "unreachable", "qemu", "10.69.1.4"], 0);
    assert!(t.labels("rack1-cs1").get("autorepair.entry").is_some());
    pass(300, 0);
    let progress = t.labels("rack0-cs2")["autorepair.progress"].clone();
    assert!(
        progress.as_str().unwrap().starts_with("processing."),
        "{progress}"
    );

    // The queue's switch fails closed the same way: a typo holds every entry.
    t.edit(&holder, |m| {
        m["spec"]["labels"]["autorepair.cluster.queue"] = "disable".into();
    });
    assert_eq!(run(&["repair", "is-enabled"], 0).0, "false\n");
    let logged = pass(360, 1);
    assert!(logged.contains("autorepair repair enable"), "{logged}");
    // Held as a disabled queue holds it: its drain abandoned, its command not run.
    let progress = t.labels("rack0-cs2")["autorepair.progress"].clone();
    assert!(
        progress
            .as_str()
            .unwrap()
            .starts_with("processing.0.waiting."),
        "{progress}"
    );
    assert!(
        !t.dir.path().join("repaired/10.69.0.5").exists(),
        "an unreadable queue switch let the repair command run"
    );
}

/// A switch left on a former holder of the cluster's labels (another machine became the
/// holder) still holds, and `enable` takes every copy: before, it removed only the holder's,
/// and the switch stayed disabled after `enable` said it was enabled.
#[test]
fn enabling_a_switch_removes_every_copy_of_it() {
    let t = Tour::new();
    for (verb, label) in [
        ("repair", "autorepair.cluster.queue"),
        ("auto-repair", "autorepair.cluster.auto-repair"),
    ] {
        t.bin().args([verb, "disable"]).assert().success();
        let (holder, _) = cluster_label(&t, label).unwrap();
        let other = if holder == "rack0-cs1" {
            "rack0-cs2"
        } else {
            "rack0-cs1"
        };
        t.edit(other, |m| {
            m["spec"]["labels"][label] = "disabled".into();
        });
        t.bin().args([verb, "enable"]).assert().success();
        let out = t.bin().args([verb, "is-enabled"]).assert().success();
        assert_eq!(
            String::from_utf8_lossy(&out.get_output().stdout),
            "true\n",
            "{verb}"
        );
        assert_eq!(cluster_label(&t, label), None, "{verb}: a copy stayed");
    }
}
