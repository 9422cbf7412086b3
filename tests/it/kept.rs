//! What an operator points the tool at is kept: keys of a file it does not know, records it
//! cannot read, commands it started.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const NOW: &str = "1795000000";

fn bin() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin("autorepair"));
    cmd.env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR");
    cmd
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// Adds `"_kept": "<where>"` to every object of the document but the maps keyed by name (the
/// simulation's instances), whose keys are names rather than fields.
fn mark_every_object(v: &mut Value, at: &str) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                let here = format!("{at}/{k}");
                if here == "/simulation/instances" {
                    for (name, script) in child.as_object_mut().into_iter().flatten() {
                        mark_every_object(script, &format!("{here}/{name}"));
                    }
                } else {
                    mark_every_object(child, &here);
                }
            }
            map.insert("_kept".into(), Value::from(at));
        }
        Value::Array(list) => {
            for (i, child) in list.iter_mut().enumerate() {
                mark_every_object(child, &format!("{at}/{i}"));
            }
        }
        _ => {}
    }
}

fn kept_marks(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            if let Some(Value::String(at)) = map.get("_kept") {
                assert!(out.insert(at.clone()), "{at} twice");
            }
            map.values().for_each(|c| kept_marks(c, out));
        }
        Value::Array(list) => list.iter().for_each(|c| kept_marks(c, out)),
        _ => {}
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The keys the issue found dropped, and a key in every other object: a suspend (one tag
/// write) and passes that submit, advance and record jobs rewrite the file, and every key is
/// where it was.
#[test]
fn the_ganeti_fleet_file_keeps_every_key_it_does_not_know() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.json");
    let mut doc = read_json(&fixture("demo.json"));
    mark_every_object(&mut doc, "");
    doc["_comment"] = "a person's note".into();
    doc["cluster"]["architecture"] = serde_json::json!(["x86_64", "x86_64"]);
    doc["groups"][0]["alloc_policy"] = "preferred".into();
    doc["nodes"][0]["ctotal"] = 16.into();
    doc["instances"][0]["beparams"] = serde_json::json!({"maxmem": 1024, "vcpus": 2});
    doc["jobs"][0]["received_ts"] = serde_json::json!([1760000000, 12]);
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let mut want = BTreeSet::new();
    kept_marks(&doc, &mut want);
    let job_ids = |d: &Value| -> Vec<Value> {
        d["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["id"].clone())
            .collect()
    };
    let runs: [&[&str]; 3] = [
        &["suspend", "group/ams-b", "--for", "1h", "--now", NOW],
        &["run", "--now", NOW],
        &["run", "--passes", "3", "--now", NOW],
    ];
    for args in runs {
        let before = std::fs::read_to_string(&path).unwrap();
        bin()
            .args(args)
            .arg("--cluster")
            .arg(&path)
            .assert()
            .success();
        let after = read_json(&path);
        assert_ne!(before, after.to_string(), "{args:?} wrote nothing");
        let mut got = BTreeSet::new();
        kept_marks(&after, &mut got);
        // A job the simulated cluster purged takes its keys with it; no other object may.
        let jobs = job_ids(&after);
        let purged = job_ids(&doc)
            .iter()
            .enumerate()
            .filter(|(_, id)| !jobs.contains(id))
            .map(|(i, _)| format!("/jobs/{i}"))
            .collect::<Vec<_>>();
        let lost: Vec<&String> = want
            .difference(&got)
            .filter(|at| !purged.iter().any(|p| at.starts_with(p.as_str())))
            .collect();
        assert!(lost.is_empty(), "{args:?} dropped the keys of {lost:?}");
        for (pointer, value) in [
            ("/_comment", &doc["_comment"]),
            ("/cluster/architecture", &doc["cluster"]["architecture"]),
            ("/groups/0/alloc_policy", &doc["groups"][0]["alloc_policy"]),
            ("/nodes/0/ctotal", &doc["nodes"][0]["ctotal"]),
            ("/instances/0/beparams", &doc["instances"][0]["beparams"]),
        ] {
            assert_eq!(after.pointer(pointer), Some(value), "{args:?}: {pointer}");
        }
        let first = &doc["jobs"][0];
        if let Some(job) = after["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["id"] == first["id"])
        {
            assert_eq!(job["received_ts"], first["received_ts"], "{args:?}");
        }
    }
    assert!(
        job_ids(&read_json(&path)).len() > job_ids(&doc).len(),
        "the passes submitted no job: the test exercises less than it says"
    );
}

fn sabakan_fixture(name: &str) -> PathBuf {
    fixture("sabakan").join(name)
}

fn beside(file: &Path, suffix: &str) -> PathBuf {
    let mut s = file.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

const SABAKAN_NOW: &str = "2026-06-01T00:00:00Z";

/// `sabakan update --write FILE` on the fixture's template and constraints, the machines of
/// `machines`.
fn sabakan_pass(file: &Path, machines: &Path) -> assert_cmd::Command {
    assert_cmd::Command::from_std(sabakan_process(file, machines))
}

fn sabakan_process(file: &Path, machines: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("autorepair"));
    c.env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .args(["sabakan", "update", "--template"])
        .arg(sabakan_fixture("template.yml"))
        .arg("--constraints")
        .arg(sabakan_fixture("constraints.json"))
        .arg("--machines")
        .arg(machines)
        .arg("--write")
        .arg(file)
        .args(["--now", SABAKAN_NOW]);
    c
}

/// The fixture's machines with the first control plane of the cluster file made UNREACHABLE:
/// the next pass replaces it.
fn first_control_plane_fails(file: &Path, dir: &Path) -> PathBuf {
    let cluster: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let cp = cluster["nodes"][0]["address"].as_str().unwrap().to_owned();
    let mut machines = read_json(&sabakan_fixture("machines.json"));
    for m in machines["data"]["searchMachines"].as_array_mut().unwrap() {
        if m["spec"]["ipv4"][0] == cp.as_str() {
            m["status"]["state"] = "UNREACHABLE".into();
        }
    }
    let path = dir.join("machines-failed.json");
    std::fs::write(&path, machines.to_string()).unwrap();
    path
}

/// Files of `dir` whose name starts with `prefix`.
fn named(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    found.sort();
    found
}

/// One line of the history that cannot be read costs only itself: the pass keeps the file as
/// it was aside, says where, and the new history holds every readable change and the new one.
#[test]
fn a_bad_line_in_the_history_loses_no_record() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.yml");
    sabakan_pass(&file, &sabakan_fixture("machines.json"))
        .assert()
        .code(5);
    let hist = beside(&file, ".history");
    let first = std::fs::read_to_string(&hist).unwrap();
    assert_eq!(first.lines().count(), 1, "{first}");
    // Three readable records around a line another tool cut short, and bytes that are no text.
    let damaged = [
        first.as_bytes(),
        first.as_bytes(),
        b"{\"at\": \"2026-05-31T\n",
        b"\xff\xfe\n",
        first.as_bytes(),
    ]
    .concat();
    std::fs::write(&hist, &damaged).unwrap();

    let failed = first_control_plane_fails(&file, dir.path());
    let out = sabakan_pass(&file, &failed).assert().code(5);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let aside = named(dir.path(), "cluster.yml.history.bad-");
    assert_eq!(aside.len(), 1, "{aside:?}\n{stderr}");
    assert_eq!(std::fs::read(&aside[0]).unwrap(), damaged);
    assert!(
        stderr.contains(&aside[0].display().to_string()) && stderr.contains("line 3"),
        "the warning names neither the copy nor the bad line: {stderr}"
    );
    let kept = std::fs::read_to_string(&hist).unwrap();
    let actions: Vec<String> = kept
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["action"].to_string())
        .collect();
    assert_eq!(actions.len(), 4, "{kept}");
    assert!(actions[3].contains("replace-control-plane"), "{actions:?}");
    bin()
        .args(["sabakan", "history"])
        .arg(&file)
        .assert()
        .success();

    // A second bad history the same second takes a name of its own.
    let again = [kept.as_bytes(), b"garbage\n"].concat();
    std::fs::write(&hist, &again).unwrap();
    sabakan_pass(&file, &first_control_plane_fails(&file, dir.path()))
        .assert()
        .code(5);
    let aside = named(dir.path(), "cluster.yml.history.bad-");
    assert_eq!(aside.len(), 2, "{aside:?}");
    assert!(aside.iter().any(|a| std::fs::read(a).unwrap() == again));
    assert_eq!(std::fs::read_to_string(&hist).unwrap().lines().count(), 5);
}

/// The process `pid` runs (a zombie has ended).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

fn wait_for(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: not within {secs} s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn signal(child: &std::process::Child, signal: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, signal).unwrap();
}

/// An apply command (run by `sh`, the command under test) that notes its start and its pid in
/// `dir/log`, then sleeps `secs`, copies the file it is given to `dir/applied.yml` and says so.
fn slow_apply(dir: &Path, secs: u32) -> Vec<String> {
    let d = dir.display();
    let script = format!(
        "echo \"start $$\" >> '{d}/log'; sleep {secs}; cp \"$1\" '{d}/applied.yml'; echo \"end $$\" >> '{d}/log'; echo applied"
    );
    vec!["sh".into(), "-c".into(), script, "apply".into()]
}

fn log_lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `--ready-command`: a change is written and applied only once the command exits 0 with the
/// cluster file as its argument; until then the pass says the change waits and leaves every
/// file as it was. A command that cannot be started is a usage error, and nothing is written.
#[test]
fn a_change_waits_until_the_readiness_command_says_ready() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.yml");
    let applied = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready-when-flagged");
    std::fs::write(
        &ready,
        "#!/bin/sh\necho \"$1\" >> \"$(dirname \"$1\")/asked\"\ntest -e \"$(dirname \"$1\")/flag\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ready, std::fs::Permissions::from_mode(0o755)).unwrap();
    let pass = |program: &Path| {
        let mut c = sabakan_pass(&file, &sabakan_fixture("machines.json"));
        c.arg("--ready-command")
            .arg(program)
            .arg("--")
            .args(slow_apply(applied.path(), 0));
        c
    };
    let out = pass(&ready).assert().code(0);
    let said = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        said.contains("waits: the readiness command says not ready"),
        "{said}"
    );
    assert!(!file.exists(), "written while not ready");
    assert!(
        log_lines(applied.path()).is_empty(),
        "applied while not ready"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("asked")).unwrap(),
        format!("{}\n", file.display()),
        "the command is given the cluster file"
    );

    let out = pass(Path::new("/nonexistent/ready")).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("--ready-command"), "{err}");
    assert!(!file.exists());

    std::fs::write(dir.path().join("flag"), "").unwrap();
    pass(&ready).assert().code(5);
    assert!(file.exists());
    assert_eq!(log_lines(applied.path()).len(), 2, "applied once");
}

/// SIGTERM while the apply command runs: the pass waits for it, and records what it applied;
/// the command is never left running alone.
#[test]
fn sigterm_during_the_apply_command_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.yml");
    let applied = tempfile::tempdir().unwrap();
    let child = sabakan_process(&file, &sabakan_fixture("machines.json"))
        .arg("--")
        .args(slow_apply(applied.path(), 2))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the apply command to start", 30, || {
        !log_lines(applied.path()).is_empty()
    });
    signal(&child, rustix::process::Signal::TERM);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let log = log_lines(applied.path());
    assert_eq!(
        log.len(),
        2,
        "the watcher ended before its apply command did: {log:?}\n{stderr}"
    );
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(applied.path().join("applied.yml")).unwrap(),
        std::fs::read_to_string(&file).unwrap(),
        "what was applied is what the file says"
    );
    assert!(
        stderr.contains("waiting for the command under way"),
        "{stderr}"
    );
}

/// A pass killed with SIGKILL leaves its apply command running (its own process group): the
/// next pass starts no second one while it lives, says which, and makes the change once it
/// has ended. A record that cannot be read starts nothing either, and says what to do.
#[test]
fn no_apply_starts_while_an_earlier_ones_command_lives() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.yml");
    let applied = tempfile::tempdir().unwrap();
    let apply = slow_apply(applied.path(), 3);
    let mut killed = sabakan_process(&file, &sabakan_fixture("machines.json"))
        .arg("--")
        .args(&apply)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let record = std::fs::canonicalize(dir.path())
        .unwrap()
        .join("cluster.yml.applying");
    // Killed once its command is recorded (what the parent does right after the spawn).
    wait_for("the apply command to start", 30, || {
        !log_lines(applied.path()).is_empty() && record.exists()
    });
    signal(&killed, rustix::process::Signal::KILL);
    killed.wait().unwrap();
    let orphan: u32 = log_lines(applied.path())[0]
        .strip_prefix("start ")
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        alive(orphan),
        "the test needs the apply command to outlive its pass"
    );

    let out = sabakan_pass(&file, &sabakan_fixture("machines.json"))
        .arg("--")
        .args(&apply)
        .assert()
        .code(4);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains(&format!("pid {orphan}")) && stderr.contains("still runs"),
        "{stderr}"
    );
    assert_eq!(
        log_lines(applied.path()).len(),
        1,
        "a second apply was started"
    );

    wait_for("the earlier apply command to end", 30, || !alive(orphan));
    sabakan_pass(&file, &sabakan_fixture("machines.json"))
        .arg("--")
        .args(slow_apply(applied.path(), 0))
        .assert()
        .code(5);
    assert!(!record.exists(), "the record outlived its command");

    // A record that cannot be read may name a command still running: fail closed.
    for garbage in ["", "not a pid\n", "12 34 56\n"] {
        std::fs::write(&record, garbage).unwrap();
        let failed = first_control_plane_fails(&file, dir.path());
        let out = sabakan_pass(&file, &failed)
            .arg("--")
            .args(slow_apply(applied.path(), 0))
            .assert()
            .code(4);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(
            stderr.contains(&format!("remove {}", record.display())),
            "{garbage:?}: {stderr}"
        );
        assert_eq!(
            log_lines(applied.path()).len(),
            4,
            "{garbage:?}: an apply started"
        );
    }
}

/// A copy of the machines demo in `dir` whose soft repair command logs its start and end in
/// `dir/log` around a sleep of `secs` seconds; a pass over it as a process, at `now`.
struct SlowRepair {
    dir: PathBuf,
    machines: PathBuf,
    nodes: PathBuf,
    config: PathBuf,
}

impl SlowRepair {
    fn new(dir: &Path, secs: u32) -> SlowRepair {
        let machines = dir.join("machines.json");
        let nodes = dir.join("nodes.json");
        std::fs::copy(fixture("machines-demo.json"), &machines).unwrap();
        std::fs::copy(fixture("machines-demo-nodes.json"), &nodes).unwrap();
        let demo = std::fs::read_to_string(fixture("machines-demo.yml")).unwrap();
        let soft =
            r#"'mkdir -p repaired && touch "repaired/$1" && echo "$0 repair of $1"', "soft"]"#;
        assert!(demo.contains(soft));
        let config = dir.join("repair.yml");
        let slow = format!(
            r#"'echo "start $$" >> log; sleep {secs}; mkdir -p repaired && touch "repaired/$1"; echo "end $$" >> log', "slow"]"#
        );
        std::fs::write(&config, demo.replace(soft, &slow)).unwrap();
        SlowRepair {
            dir: dir.to_owned(),
            machines,
            nodes,
            config,
        }
    }

    fn pass(&self, now: i64) -> std::process::Command {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("autorepair"));
        c.current_dir(&self.dir)
            .env_remove("AUTOREPAIR_CONFIG")
            .env_remove("RUST_LOG")
            .args(["--config", "/dev/null", "--sabakan-file"])
            .arg(&self.machines)
            .arg("--nodes")
            .arg(&self.nodes)
            .arg("--repair-config")
            .arg(&self.config)
            .arg("--constraints")
            .arg(fixture("machines-constraints.json"))
            .args(["run", "--now", &now.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        c
    }

    fn log(&self) -> Vec<String> {
        log_lines(&self.dir)
    }

    /// Passes from `now`, a minute apart, until one starts the command: that pass, still
    /// running (the entry, the drain, then the command).
    fn until_the_command_runs(&self, now: i64) -> std::process::Child {
        for i in 0..6 {
            let mut child = self.pass(now + 60 * i).spawn().unwrap();
            let mut ended = None;
            wait_for("the pass to end or the command to start", 60, || {
                ended = child.try_wait().unwrap();
                ended.is_some() || !self.log().is_empty()
            });
            if ended.is_none() {
                return child;
            }
        }
        panic!("no pass started the repair command");
    }

    /// The progress label of the machine the demo repairs.
    fn progress(&self) -> String {
        let doc = read_json(&self.machines);
        doc.as_array()
            .unwrap()
            .iter()
            .find(|m| m["spec"]["serial"] == "rack0-cs2")
            .unwrap()["spec"]["labels"]["autorepair.progress"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

/// SIGTERM while a machine's repair command runs: the watcher waits for the command (it led a
/// process group of its own, so the signal never reached it), records that it succeeded and
/// stops. Before, the watcher ended at once, the command ran on under PID 1, and the next pass
/// marked the entry failed while it still ran.
#[test]
fn sigterm_during_a_repair_command_waits_for_it_and_records_it() {
    let dir = tempfile::tempdir().unwrap();
    let demo = SlowRepair::new(dir.path(), 2);
    let now = 1_800_000_000;
    let child = demo.until_the_command_runs(now);
    signal(&child, rustix::process::Signal::TERM);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        demo.log().len(),
        2,
        "the watcher ended before its repair command did: {:?}\n{stderr}",
        demo.log()
    );
    assert!(out.status.code().is_some(), "ended by the signal: {stderr}");
    // The next passes find the command done, and the repair a success.
    for i in 10..16 {
        let status = demo.pass(now + 60 * i).status().unwrap();
        assert!(status.success());
    }
    assert!(
        demo.progress().starts_with("succeeded."),
        "{}",
        demo.progress()
    );
    assert_eq!(demo.log().len(), 2, "the command ran twice");
}

/// SIGKILL while a machine's repair command runs leaves the command running (its own process
/// group). The next pass does not act while it lives: it names the command and leaves the
/// entry as it is, where before it judged the step failed while the command still ran. Once
/// the command has ended, a pass judges the step, and no command runs twice. A record that
/// cannot be read holds every pass too, and says what to do.
#[test]
fn no_pass_acts_while_a_killed_passs_repair_command_lives() {
    let dir = tempfile::tempdir().unwrap();
    let demo = SlowRepair::new(dir.path(), 4);
    let now = 1_800_000_000;
    let mut killed = demo.until_the_command_runs(now);
    let record = std::fs::canonicalize(&demo.machines)
        .unwrap()
        .with_file_name("machines.json.lock.command");
    wait_for("the command to be recorded", 30, || record.exists());
    signal(&killed, rustix::process::Signal::KILL);
    killed.wait().unwrap();
    let orphan: u32 = demo.log()[0]
        .strip_prefix("start ")
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        alive(orphan),
        "the test needs the command to outlive its pass"
    );
    let progress = demo.progress();
    let before = std::fs::read(&demo.machines).unwrap();

    let out = demo.pass(now + 600).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains(&format!("pid {orphan}")) && stderr.contains("still runs"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&demo.machines).unwrap(),
        before,
        "a pass acted while the command ran"
    );

    wait_for("the command to end", 30, || !alive(orphan));
    assert_eq!(demo.log().len(), 2);
    let out = demo.pass(now + 660).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!record.exists(), "the record outlived its command");
    assert_ne!(demo.progress(), progress, "the step was not judged");

    // A record that cannot be read may name a command still running: fail closed.
    for garbage in ["", "not a pid\n", "12 34 56\n"] {
        std::fs::write(&record, garbage).unwrap();
        let before = std::fs::read(&demo.machines).unwrap();
        let out = demo.pass(now + 720).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{garbage:?}: {stderr}");
        assert!(
            stderr.contains(&format!("remove {}", record.display())),
            "{garbage:?}: {stderr}"
        );
        assert_eq!(
            std::fs::read(&demo.machines).unwrap(),
            before,
            "{garbage:?}"
        );
    }
    std::fs::remove_file(&record).unwrap();
    for i in 13..20 {
        assert!(demo.pass(now + 60 * i).status().unwrap().success());
    }
    assert_eq!(demo.log().len(), 2, "the command ran twice");
}
