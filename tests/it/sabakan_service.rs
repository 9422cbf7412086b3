//! `autorepair sabakan update --write FILE`, the maintained mode: the file kept, its previous
//! version, history, metrics, apply command, lock, switch and stored variables; and a month of
//! a 300-machine data centre against the fake sabakan (crates/testsupport, `sabakan`).

use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use testsupport::sabakan::{FakeSabakan, Fault, State, machine};

const NOW: &str = "2026-06-01T00:00:00Z";
const CHANGED: i32 = 5;

fn bin() -> Command {
    let mut c = Command::cargo_bin("autorepair").unwrap();
    c.env_remove("AUTOREPAIR_CONFIG").env_remove("RUST_LOG");
    c
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/sabakan")
        .join(name)
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(c: &mut Command) -> Run {
    let out = c.output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn beside(file: &Path, suffix: &str) -> PathBuf {
    let mut s = file.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// `sabakan update --write FILE` on the fixture's template and constraints.
fn write_args(file: &Path, machines: &Path) -> Command {
    let mut c = bin();
    c.args(write_argv(file, machines));
    c
}

fn write_argv(file: &Path, machines: &Path) -> Vec<std::ffi::OsString> {
    let mut v: Vec<std::ffi::OsString> = Vec::new();
    for a in ["sabakan", "update", "--template"] {
        v.push(a.into());
    }
    v.push(fixture("template.yml").into());
    v.push("--constraints".into());
    v.push(fixture("constraints.json").into());
    v.push("--machines".into());
    v.push(machines.into());
    v.push("--write".into());
    v.push(file.into());
    v.push("--now".into());
    v.push(NOW.into());
    v
}

/// The fixture's machines with the first control plane of `cluster` made UNREACHABLE.
fn first_cp_fails(cluster: &str, dir: &Path) -> (PathBuf, String) {
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(cluster).unwrap();
    let cp = doc["nodes"][0]["address"].as_str().unwrap().to_owned();
    let mut machines: Value = serde_json::from_str(&read(&fixture("machines.json"))).unwrap();
    for m in machines["data"]["searchMachines"].as_array_mut().unwrap() {
        if m["spec"]["ipv4"][0] == cp.as_str() {
            m["status"]["state"] = "UNREACHABLE".into();
        }
    }
    let path = dir.join("machines-failed.json");
    std::fs::write(&path, machines.to_string()).unwrap();
    (path, cp)
}

#[test]
fn write_keeps_the_file_its_previous_version_history_and_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.yml");
    let metrics = dir.path().join("sabakan.prom");
    let machines = fixture("machines.json");

    // No file yet: generated, exit 5.
    let r = run(write_args(&file, &machines).arg("--metrics").arg(&metrics));
    assert_eq!(r.code, CHANGED, "{}", r.stderr);
    assert!(r.stdout.contains("generate"), "{}", r.stdout);
    let first = read(&file);
    let by_hand = run(bin()
        .args(["sabakan", "generate", "--template"])
        .arg(fixture("template.yml"))
        .arg("--constraints")
        .arg(fixture("constraints.json"))
        .arg("--machines")
        .arg(&machines)
        .args(["--now", NOW]));
    assert_eq!(first, by_hand.stdout);
    assert!(!beside(&file, ".prev").exists());
    let m = read(&metrics);
    assert!(m.contains("cke_sabakan_integration_successful 1\n"), "{m}");
    assert!(m.contains("cke_sabakan_workers{role=\"cs\"} 4\n"), "{m}");
    assert!(m.contains("cke_sabakan_workers{role=\"ss\"} 2\n"), "{m}");
    assert!(m.contains("cke_sabakan_unused_machines "), "{m}");

    // Nothing to do: exit 0, the file not even replaced.
    let inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&file).unwrap());
    let r = run(&mut write_args(&file, &machines));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("unchanged"), "{}", r.stdout);
    assert_eq!(
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&file).unwrap()),
        inode
    );

    // A control plane fails: the dry run shows the diff and writes nothing...
    let (failed, cp) = first_cp_fails(&first, dir.path());
    let r = run(write_args(&file, &failed).arg("--dry-run"));
    assert_eq!(r.code, CHANGED, "{}", r.stderr);
    assert!(r.stdout.contains("--- "), "{}", r.stdout);
    assert!(r.stdout.contains("@@ "), "{}", r.stdout);
    assert!(
        r.stdout.contains("-  control_plane: true") || r.stdout.contains("+  control_plane: false"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("replace-control-plane"), "{}", r.stdout);
    assert_eq!(read(&file), first);
    // ...and the pass changes it, as `update --current` run by hand would, keeping the old one.
    let r = run(&mut write_args(&file, &failed));
    assert_eq!(r.code, CHANGED, "{}", r.stderr);
    let by_hand = run(bin()
        .args(["sabakan", "update", "--template"])
        .arg(fixture("template.yml"))
        .arg("--constraints")
        .arg(fixture("constraints.json"))
        .arg("--machines")
        .arg(&failed)
        .arg("--current")
        .arg(beside(&file, ".prev"))
        .args(["--now", NOW]));
    assert_eq!(read(&file), by_hand.stdout);
    assert_eq!(read(&beside(&file, ".prev")), first);
    // The change is logged with its reason and what was chosen; every candidate's score
    // (8 KB on one line for 16 machines) is left to the history and --json.
    let logged: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("cluster configuration changed"))
        .collect();
    assert_eq!(logged.len(), 1, "{}", r.stderr);
    assert!(logged[0].contains("replace-control-plane"), "{}", logged[0]);
    assert!(logged[0].contains("candidate(s)"), "{}", logged[0]);
    assert!(!logged[0].contains("score\""), "{}", logged[0]);
    assert!(
        logged[0].len() < 1500,
        "{} bytes: {}",
        logged[0].len(),
        logged[0]
    );

    // The history: both changes, with the reason and the chosen machine's score.
    let h = run(bin().args(["sabakan", "history"]).arg(&file));
    assert_eq!(h.code, 0, "{}", h.stderr);
    let lines: Vec<&str> = h.stdout.lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(lines.len(), 2, "{}", h.stdout);
    assert!(lines[0].contains("generate"), "{}", h.stdout);
    assert!(lines[1].contains("replace-control-plane"), "{}", h.stdout);
    assert!(lines[1].contains(&cp), "{}", h.stdout);
    assert!(h.stdout.contains("(score "), "{}", h.stdout);
    let j = run(bin().args(["sabakan", "history", "--json"]).arg(&file));
    let last: Value = serde_json::from_str(j.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["action"], "replace-control-plane");
    assert_eq!(last["at"], NOW);
}

#[test]
fn refusal_and_bad_input_exit_codes_and_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.yml");
    let metrics = dir.path().join("sabakan.prom");
    let r = run(write_args(&file, &fixture("machines.json"))
        .arg("--metrics")
        .arg(&metrics));
    assert_eq!(r.code, CHANGED, "{}", r.stderr);
    // Too few machines for the control planes: the generator refuses, exit 1, the file kept,
    // and the metrics say unsuccessful while keeping the last counts (as CKE's do).
    let none = dir.path().join("none.json");
    std::fs::write(&none, r#"{"data": {"searchMachines": []}}"#).unwrap();
    let before = read(&file);
    let r = run(write_args(&file, &none).arg("--metrics").arg(&metrics));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(read(&file), before);
    let m = read(&metrics);
    assert!(m.contains("cke_sabakan_integration_successful 0\n"), "{m}");
    assert!(m.contains("cke_sabakan_workers{role=\"cs\"} 4\n"), "{m}");
    // A machines file that is not JSON: exit 2, the metrics left as they were.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{").unwrap();
    let r = run(write_args(&file, &bad).arg("--metrics").arg(&metrics));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(read(&metrics), m);
    assert_eq!(read(&file), before);
}

/// An apply command that copies the file it is given into `dir/applied-N.yml`, or fails
/// while `dir/fail` exists.
fn apply_script(dir: &Path) -> Vec<String> {
    let script = format!(
        "if [ -e '{d}/fail' ]; then echo refused >&2; exit 3; fi; \
         if [ -e '{d}/slow' ]; then sleep 5; fi; \
         n=$(ls '{d}' | grep -c '^applied-'); cp \"$1\" '{d}/applied-'$n.yml; echo applied $n",
        d = dir.display()
    );
    vec!["sh".into(), "-c".into(), script, "apply".into()]
}

#[test]
fn a_failed_apply_leaves_the_file_as_applied_and_the_change_is_made_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.yml");
    let applied = tempfile::tempdir().unwrap();
    let apply = apply_script(applied.path());
    let r = run(write_args(&file, &fixture("machines.json"))
        .arg("--")
        .args(&apply));
    assert_eq!(r.code, CHANGED, "{}", r.stderr);
    assert_eq!(read(&applied.path().join("applied-0.yml")), read(&file));
    assert!(r.stderr.contains("applied 0"), "{}", r.stderr);
    let first = read(&file);

    let (failed, _) = first_cp_fails(&first, dir.path());
    std::fs::write(applied.path().join("fail"), "").unwrap();
    let r = run(write_args(&file, &failed).arg("--").args(&apply));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("apply command failed"), "{}", r.stderr);
    assert!(r.stderr.contains("refused"), "{}", r.stderr);
    assert_eq!(read(&file), first, "the file is the version last applied");
    let h = run(bin().args(["sabakan", "history", "--json"]).arg(&file));
    assert_eq!(
        h.stdout.lines().count(),
        1,
        "a change not applied is no change"
    );

    // A command that hangs is killed at --apply-timeout, with the same outcome.
    std::fs::remove_file(applied.path().join("fail")).unwrap();
    std::fs::write(applied.path().join("slow"), "").unwrap();
    let r = run(write_args(&file, &failed)
        .args(["--apply-timeout", "1s", "--"])
        .args(&apply));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("did not finish within 1s"),
        "{}",
        r.stderr
    );
    assert_eq!(read(&file), first);
    assert!(!beside(&file, ".new").exists());
    assert_eq!(std::fs::read_dir(applied.path()).unwrap().count(), 2);

    std::fs::remove_file(applied.path().join("slow")).unwrap();
    let r = run(write_args(&file, &failed).arg("--").args(&apply));
    assert_eq!(r.code, CHANGED, "{}", r.stderr);
    assert_ne!(read(&file), first);
    assert_eq!(read(&applied.path().join("applied-1.yml")), read(&file));
    assert!(!beside(&file, ".new").exists());
    assert_eq!(read(&beside(&file, ".prev")), first);
    let h = run(bin().args(["sabakan", "history", "--json"]).arg(&file));
    assert_eq!(h.stdout.lines().count(), 2);
    assert!(h.stdout.contains("applied 1"), "{}", h.stdout);
}

/// The pass is killed while the apply command runs: the file is still the version last
/// applied, so the next pass makes the change again rather than finding it made.
#[test]
fn a_pass_killed_while_applying_leaves_the_change_to_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.yml");
    let applied = tempfile::tempdir().unwrap();
    let apply = apply_script(applied.path());
    let r = run(write_args(&file, &fixture("machines.json"))
        .arg("--")
        .args(&apply));
    assert_eq!(r.code, CHANGED, "{}", r.stderr);
    let first = read(&file);
    let (failed, _) = first_cp_fails(&first, dir.path());

    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("autorepair"))
        .env_remove("AUTOREPAIR_CONFIG")
        .args(write_argv(&file, &failed))
        .args(["--", "sh", "-c", "sleep 3", "apply"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let staged = beside(&file, ".new");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    // Staged, or (were it written before being applied) in the file.
    while !staged.exists() && read(&file) == first {
        assert!(
            std::time::Instant::now() < deadline,
            "the change was never staged"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        read(&file) == first,
        "killed before applied: the file must be as last applied"
    );

    // Its apply command lives on (a process group of its own): no pass applies until it ends.
    let r = loop {
        let r = run(write_args(&file, &failed).arg("--").args(&apply));
        if r.code != 4 {
            break r;
        }
        assert!(r.stderr.contains("still runs"), "{}", r.stderr);
        assert!(std::time::Instant::now() < deadline, "{}", r.stderr);
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(r.code, CHANGED, "{}", r.stderr);
    assert_ne!(read(&file), first);
    assert_eq!(read(&applied.path().join("applied-1.yml")), read(&file));
}

#[test]
fn disabled_and_locked_files_are_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.yml");
    let machines = fixture("machines.json");
    let is = |want: &str| {
        let r = run(bin().args(["sabakan", "is-enabled"]).arg(&file));
        assert_eq!(r.stdout.trim(), want);
    };
    is("true");
    // A name that is no file is a typo: no marker is left for it.
    let r = run(bin().args(["sabakan", "disable"]).arg(&file));
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains("cluster.yml: no such file") && r.stderr.contains("check the name"),
        "{}",
        r.stderr
    );
    assert!(!beside(&file, ".disabled").exists());
    is("true");
    std::fs::write(&file, "name: kept\n").unwrap();
    assert_eq!(run(bin().args(["sabakan", "disable"]).arg(&file)).code, 0);
    is("false");
    let r = run(&mut write_args(&file, &machines));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("disabled"), "{}", r.stdout);
    assert_eq!(read(&file), "name: kept\n");
    assert_eq!(run(bin().args(["sabakan", "enable"]).arg(&file)).code, 0);
    is("true");
    std::fs::remove_file(&file).unwrap();

    // Another pass holds the lock: exit 4, nothing written.
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(beside(&file, ".lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let r = run(&mut write_args(&file, &machines));
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert!(r.stderr.contains("lock"), "{}", r.stderr);
    assert!(!file.exists());
    drop(lock);
    assert_eq!(run(&mut write_args(&file, &machines)).code, CHANGED);
}

fn fake() -> FakeSabakan {
    let s = FakeSabakan::start();
    s.set_now(NOW);
    for rack in 1..=4u32 {
        for i in 0..4 {
            let role = if i < 3 { "cs" } else { "ss" };
            s.insert(machine(&format!("R{rack}M{i}")).rack(rack).role(role));
        }
    }
    s.insert(machine("BOOT").rack(1).role("boot"));
    s
}

fn live_args(file: &Path, url: &str) -> Command {
    live_args_with(file, url, &fixture("template.yml"))
}

fn live_args_with(file: &Path, url: &str, template: &Path) -> Command {
    let mut c = bin();
    c.args(live_argv(file, url, template));
    c
}

fn live_argv(file: &Path, url: &str, template: &Path) -> Vec<std::ffi::OsString> {
    let mut v: Vec<std::ffi::OsString> = ["sabakan", "update", "--template"].map(Into::into).into();
    v.push(template.into());
    v.push("--constraints".into());
    v.push(fixture("constraints.json").into());
    for a in ["--sabakan", url, "--write"] {
        v.push(a.into());
    }
    v.push(file.into());
    v.push("--now".into());
    v.push(NOW.into());
    v
}

/// What `update --write` keeps beside its file holds back or governs, so a link to nothing in
/// its place is not "nothing there": a disable marker still disables, and a stored query is
/// refused with its name instead of the query's defaults taking over.
#[test]
fn a_link_to_nothing_beside_the_maintained_file_fails_closed() {
    let s = fake();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.yml");
    std::fs::write(&file, "name: kept\n").unwrap();
    let gone = dir.path().join("gone");

    std::os::unix::fs::symlink(&gone, beside(&file, ".disabled")).unwrap();
    let r = run(bin().args(["sabakan", "is-enabled"]).arg(&file));
    assert_eq!((r.code, r.stdout.trim()), (0, "false"), "{}", r.stderr);
    let r = run(&mut live_args(&file, s.url()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("disabled"), "{}", r.stdout);
    assert_eq!(read(&file), "name: kept\n");
    std::fs::remove_file(beside(&file, ".disabled")).unwrap();

    let stored = beside(&file, ".variables.json");
    std::os::unix::fs::symlink(&gone, &stored).unwrap();
    let asked = s.requests().len();
    for (what, mut command) in [
        ("update --write", live_args(&file, s.url())),
        ("get-variables", {
            let mut c = bin();
            c.args(["sabakan", "get-variables"]).arg(&file);
            c
        }),
    ] {
        let r = run(&mut command);
        assert_eq!(r.code, 2, "{what}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(".variables.json") && r.stderr.contains("does not exist"),
            "{what}: {}",
            r.stderr
        );
    }
    assert_eq!(s.requests().len(), asked, "no query with the defaults");
    assert_eq!(read(&file), "name: kept\n");
}

#[test]
fn stored_variables_are_the_query_of_the_maintained_file() {
    let s = fake();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.yml");
    let vars = dir.path().join("vars.json");
    std::fs::write(&vars, r#"{"having": {"racks": [1, 2, 3]}}"#).unwrap();
    let r = run(bin()
        .args(["sabakan", "set-variables"])
        .arg(&file)
        .arg(&vars));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got = run(bin().args(["sabakan", "get-variables"]).arg(&file));
    assert_eq!(got.stdout, read(&vars));
    // Refused as sabakan would refuse them, and the stored ones kept.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"having": {"states": ["BROKEN"]}}"#).unwrap();
    let r = run(bin()
        .args(["sabakan", "set-variables"])
        .arg(&file)
        .arg(&bad));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        run(bin().args(["sabakan", "get-variables"]).arg(&file)).stdout,
        read(&vars)
    );

    let r = run(&mut live_args(&file, s.url()));
    assert_eq!(r.code, CHANGED, "{}", r.stderr);
    let body: Value = serde_json::from_str(&s.requests().last().unwrap().body).unwrap();
    assert_eq!(
        body["variables"]["having"]["racks"],
        serde_json::json!([1, 2, 3])
    );
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&read(&file)).unwrap();
    for n in doc["nodes"].as_sequence().unwrap() {
        let rack = n["labels"]["cke.cybozu.com/rack"].as_str().unwrap();
        assert_ne!(rack, "4", "{n:?}");
    }
}

#[test]
fn the_loop_skips_rounds_while_sabakan_is_down_and_says_so_once() {
    let s = fake();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.yml");
    // The first pass generates; then sabakan fails four times; then it answers again.
    s.fault(Fault::status(503).on_path("/graphql").times(4));
    let r = run(live_args(&file, s.url()).args(["--loop", "--interval", "1s", "--passes", "6"]));
    // Passes 1-4 skipped, 5 generates, 6 finds nothing to do.
    assert_eq!(r.code, CHANGED, "{}", r.stderr);
    assert_eq!(
        r.stderr.matches("round skipped, as CKE does").count(),
        1,
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("sabakan answers again"), "{}", r.stderr);
    assert!(file.exists());
    assert_eq!(r.stdout.matches("unchanged").count(), 1, "{}", r.stdout);
    let h = run(bin().args(["sabakan", "history", "--json"]).arg(&file));
    assert_eq!(h.stdout.lines().count(), 1);
    // A template edited while the loop runs is picked up by the next pass.
    let template = dir.path().join("template.yml");
    std::fs::write(&template, read(&fixture("template.yml"))).unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("autorepair"))
        .env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .args(live_argv(&file, s.url(), &template))
        // --interval is at least 1s: the edit (after 0.7 s) falls between passes 1 and 2.
        .args(["--loop", "--interval", "1s", "--passes", "4"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    let edited = read(&template).replace("name: tokyo0", "name: tokyo1");
    std::fs::write(&template, edited).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(CHANGED), "{stdout}");
    assert!(read(&file).contains("name: tokyo1"));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    let at = lines.iter().position(|l| l.contains("regenerate")).unwrap();
    assert!(at > 0, "{stdout}");
    assert!(
        lines
            .iter()
            .enumerate()
            .all(|(i, l)| i == at || l.ends_with(": unchanged")),
        "one change, the edit's: {stdout}"
    );
    // A pass changed the file and the last one could not reach sabakan: exit 5 all the same,
    // so that a cron wrapper acts on the change; the failure is logged (and the next run meets
    // it again).
    let edited = read(&template).replace("name: tokyo1", "name: tokyo2");
    std::fs::write(&template, edited).unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("autorepair"))
        .env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .args(live_argv(&file, s.url(), &template))
        .args(["--loop", "--interval", "1s", "--passes", "2"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    s.fault(Fault::status(503).on_path("/graphql").times(100));
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(read(&file).contains("name: tokyo2"), "{stderr}");
    assert!(stderr.contains("round skipped"), "{stderr}");
    assert_eq!(out.status.code(), Some(CHANGED), "{stderr}");
}

/// A month of a 300-machine data centre, a pass every four hours: machines fail and come
/// back, retire and leave, new ones arrive, and the template is edited once. Every file the
/// maintained mode writes is the one `sabakan update` run by hand on the same inputs prints,
/// each pass makes at most one action, the etcd rule holds, and the apply command runs once
/// per change.
#[test]
fn a_month_of_a_data_centre() {
    let s = FakeSabakan::start();
    let start: jiff::Timestamp = NOW.parse().unwrap();
    s.set_now(NOW);
    let racks = 15u32;
    let mut serials = Vec::new();
    for rack in 1..=racks {
        for i in 0..20u32 {
            let role = if i % 3 == 2 { "ss" } else { "cs" };
            let serial = format!("R{rack:02}M{i:02}");
            // Retirement dates spread over years, so scores differ.
            let retire = format!("20{}-0{}-01T00:00:00Z", 27 + (i % 5), 1 + (rack % 9));
            s.insert(machine(&serial).rack(rack).role(role).retire_date(&retire));
            serials.push(serial);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.yml");
    let template = dir.path().join("template.yml");
    std::fs::write(&template, read(&fixture("template.yml"))).unwrap();
    let constraints = dir.path().join("constraints.json");
    std::fs::write(
        &constraints,
        r#"{"control-plane-count": 5, "minimum-workers": 40, "maximum-workers": 60}"#,
    )
    .unwrap();
    let applied = tempfile::tempdir().unwrap();
    let apply = apply_script(applied.path());
    let hand_dir = tempfile::tempdir().unwrap();

    // A small deterministic generator: the same month every run.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut changes = 0usize;
    let mut actions = BTreeSet::new();
    let mut arrived = 0u32;
    let steps = 30 * 6;
    for step in 0..steps {
        let now = start + jiff::SignedDuration::from_hours(4 * step as i64);
        let now_s = now.to_string();
        s.set_now(&now_s);
        if step > 0 {
            // One or two events a step.
            for _ in 0..1 + next(2) {
                let serial = serials[next(serials.len())].clone();
                let Some(m) = s.machine(&serial) else {
                    continue;
                };
                let to = match (m.state, next(10)) {
                    (State::Healthy, 0..=5) => Some(State::Unhealthy),
                    (State::Healthy, 6..=7) => Some(State::Unreachable),
                    (State::Healthy, _) => Some(State::Retiring),
                    (State::Unhealthy | State::Unreachable, 0..=6) => Some(State::Healthy),
                    (State::Retiring, _) => Some(State::Retired),
                    (State::Retired, 0..=3) => {
                        s.remove(&serial);
                        None
                    }
                    _ => None,
                };
                if let Some(to) = to {
                    s.set_state(&serial, to).unwrap();
                }
            }
            if step % 12 == 0 {
                arrived += 1;
                let serial = format!("NEW{arrived:03}");
                s.insert(
                    machine(&serial)
                        .rack(1 + arrived % racks)
                        .role("cs")
                        .register_date(&now_s)
                        .retire_date("2033-01-01T00:00:00Z"),
                );
                serials.push(serial);
            }
        }
        if step == steps / 2 {
            let edited = read(&template).replace(
                "    cke.cybozu.com/weight: \"2.0\"",
                "    cke.cybozu.com/weight: \"2.0\"\n    example.com/edited: \"yes\"",
            );
            std::fs::write(&template, edited).unwrap();
        }

        let before = std::fs::read_to_string(&file).ok();
        let mut c = bin();
        c.args(["sabakan", "update", "--template"])
            .arg(&template)
            .arg("--constraints")
            .arg(&constraints)
            .args(["--sabakan", s.url()])
            .arg("--write")
            .arg(&file)
            .args(["--now", &now_s])
            .arg("--")
            .args(&apply);
        let r = run(&mut c);
        assert!(
            r.code == 0 || r.code == CHANGED,
            "step {step}: exit {}: {}",
            r.code,
            r.stderr
        );
        let after = read(&file);

        // By hand, on the same inputs.
        let mut hand = bin();
        hand.args(["sabakan"])
            .arg(if before.is_some() {
                "update"
            } else {
                "generate"
            })
            .arg("--template")
            .arg(&template)
            .arg("--constraints")
            .arg(&constraints)
            .args(["--sabakan", s.url()])
            .args(["--now", &now_s, "--json"]);
        if let Some(b) = &before {
            let current = hand_dir.path().join("current.yml");
            std::fs::write(&current, b).unwrap();
            hand.arg("--current").arg(&current);
        }
        let h = run(&mut hand);
        assert_eq!(h.code, 0, "step {step}: {}", h.stderr);
        let by_hand: Value = serde_json::from_str(&h.stdout).unwrap();
        assert_eq!(
            by_hand["cluster"].as_str().unwrap(),
            after,
            "step {step}: the file differs from `sabakan update` by hand"
        );
        let changed = before.as_deref() != Some(after.as_str());
        assert_eq!(r.code == CHANGED, changed, "step {step}: exit code");
        assert_eq!(
            by_hand["changed"].as_bool().unwrap_or(true),
            changed,
            "step {step}"
        );
        if changed {
            changes += 1;
            actions.insert(by_hand["action"].as_str().unwrap().to_owned());
            // One action per pass: the history's new entry names exactly the one by hand.
            let hist = read(&beside(&file, ".history"));
            let last: Value = serde_json::from_str(hist.lines().last().unwrap()).unwrap();
            assert_eq!(last["action"], by_hand["action"], "step {step}");
            assert_eq!(last["at"].as_str(), Some(now_s.as_str()), "step {step}");
        }
        // The etcd rule: more than half of the control planes before are still ones.
        if let Some(b) = &before {
            let (old, new) = (control_planes(b), control_planes(&after));
            let kept = old.intersection(&new).count();
            assert!(
                kept * 2 > old.len(),
                "step {step}: {kept} of {} control planes kept",
                old.len()
            );
        }
        // The apply command ran once per change, on the file as written.
        let runs = std::fs::read_dir(applied.path()).unwrap().count();
        assert_eq!(runs, changes, "step {step}");
        if changed {
            assert_eq!(
                read(&applied.path().join(format!("applied-{}.yml", changes - 1))),
                after
            );
        }
    }
    // The month did something of each kind.
    eprintln!("{changes} changes: {actions:?}");
    for a in [
        "generate",
        "remove-non-existent",
        "replace-control-plane",
        "taint",
        "regenerate",
        "increase-worker",
    ] {
        assert!(actions.contains(a), "no {a} in the month: {actions:?}");
    }
    let hist = read(&beside(&file, ".history"));
    assert!(changes > 20, "only {changes} changes");
    assert!(hist.lines().count() <= 20);
    let all = read(&file);
    assert!(
        all.contains("example.com/edited"),
        "the template edit reached the file"
    );
}

fn control_planes(yaml: &str) -> BTreeSet<String> {
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(yaml).unwrap();
    doc["nodes"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter(|n| n["control_plane"].as_bool() == Some(true))
        .map(|n| n["address"].as_str().unwrap().to_owned())
        .collect()
}
