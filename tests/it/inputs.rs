//! Inputs and the messages about them, through the binary: every
//! input the command line is given is read or refused, and every message names what the user
//! gave and what to do.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_autorepair");
/// After every timestamp in the demo fleets but the far-future suspend (as tests/it/common/bin.rs).
const NOW: &str = "1795000000";

/// The demo fleets, copied into a directory of the test's own.
struct Fleets {
    dir: tempfile::TempDir,
}

impl Fleets {
    fn new() -> Fleets {
        let dir = tempfile::tempdir().unwrap();
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        for name in [
            "demo.json",
            "machines-demo.json",
            "machines-demo.yml",
            "machines-demo-nodes.json",
            "metal3-demo.json",
        ] {
            std::fs::copy(fixtures.join(name), dir.path().join(name)).unwrap();
        }
        Fleets { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    fn write(&self, name: &str, text: &str) -> String {
        std::fs::write(self.path(name), text).unwrap();
        self.path(name)
    }

    fn json(&self, name: &str) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.path(name)).unwrap()).unwrap()
    }

    fn ganeti(&self) -> Vec<String> {
        vec!["--cluster".into(), self.path("demo.json")]
    }

    fn machines(&self) -> Vec<String> {
        vec![
            "--sabakan-file".into(),
            self.path("machines-demo.json"),
            "--repair-config".into(),
            self.path("machines-demo.yml"),
            "--nodes".into(),
            self.path("machines-demo-nodes.json"),
        ]
    }

    fn metal3(&self) -> Vec<String> {
        vec!["--kube-objects".into(), self.path("metal3-demo.json")]
    }
}

fn command<S: AsRef<str>>(args: &[S]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args.iter().map(AsRef::as_ref))
        .env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null());
    c
}

fn run<S: AsRef<str>>(args: &[S]) -> Output {
    command(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A usage error (exit 2) whose message says every one of `says`.
fn assert_refused(o: &Output, says: &[&str], what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    for s in says {
        assert!(err.contains(s), "{what}: {s:?} not in {err}");
    }
}

fn sabakan_fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/sabakan")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn sabakan_flags_that_would_be_ignored_are_refused() {
    let fleets = Fleets::new();
    let (template, machines) = (
        sabakan_fixture("template.yml"),
        sabakan_fixture("machines.json"),
    );
    let missing = fleets.path("missing.json");
    let variables = fleets.write("variables.json", r#"{"having": {}, "notHaving": {}}"#);
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        // --variables filter sabakan's answer: beside a file that is the answer they were
        // never read, a missing file included (exit 0).
        (
            vec!["generate", "--machines", &machines, "--variables", &missing],
            vec![
                "--variables",
                "missing.json",
                "--machines",
                "leave out --variables",
            ],
        ),
        (
            vec![
                "generate",
                "--machines",
                &machines,
                "--variables",
                &variables,
            ],
            vec!["--variables", "variables.json", "unfiltered"],
        ),
        (
            vec![
                "update",
                "--machines",
                &machines,
                "--current",
                &template,
                "--variables",
                &missing,
            ],
            vec!["--variables", "missing.json"],
        ),
        // What --loop lacks is --write, not --current.
        (
            vec!["update", "--machines", &machines, "--loop"],
            vec!["--write <FILE>"],
        ),
        (
            vec!["update", "--machines", &machines, "--dry-run"],
            vec!["--write <FILE>"],
        ),
    ];
    for (args, says) in cases {
        let mut argv = vec!["sabakan", args[0], "--template", &template, "--now", NOW];
        argv.extend(&args[1..]);
        let o = run(&argv);
        assert_refused(&o, &says, &format!("{args:?}"));
        assert!(
            !stderr(&o).contains("--current <FILE>"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn sabakan_disable_refuses_a_file_that_does_not_exist() {
    let fleets = Fleets::new();
    let typo = fleets.path("typo.yml");
    let o = run(&["sabakan", "disable", &typo]);
    assert_refused(&o, &["typo.yml: no such file", "check the name"], "disable");
    assert!(!Path::new(&format!("{typo}.disabled")).exists());
}

#[test]
fn simulate_refuses_zero_scenarios() {
    let fleets = Fleets::new();
    for fleet in [fleets.ganeti(), fleets.machines(), fleets.metal3()] {
        let mut args = fleet.clone();
        args.extend(["simulate", "--scenarios", "0", "--now", NOW].map(String::from));
        let o = run(&args);
        assert_refused(&o, &["--scenarios", "at least 1"], &format!("{fleet:?}"));
        assert!(!stdout(&o).contains("no safety"), "{}", stdout(&o));
    }
}

/// A --rapi URL no request can be made to, or one the request path would be glued after, is
/// a usage error at once: no request, no retries (it was retried 4 times and exited 3, or asked
/// for `…#z/2/info`).
#[test]
fn rapi_urls_that_cannot_be_used_are_usage_errors() {
    let fleets = Fleets::new();
    let password = fleets.write("password", "p\n");
    for (url, says) in [
        ("https://[::1", "not a URL"),
        ("https://127.0.0.1:9/x?y=1#z", "query"),
        ("https://127.0.0.1:9/x?y=1", "query"),
        ("https://127.0.0.1:9/#z", "fragment"),
        ("ftp://127.0.0.1:9", "scheme"),
        ("cluster.example.org", "not a URL"),
    ] {
        let started = std::time::Instant::now();
        let o = run(&[
            "--rapi",
            url,
            "--rapi-user",
            "u",
            "--rapi-password-file",
            &password,
            "status",
            "--now",
            NOW,
        ]);
        assert_refused(&o, &["RAPI URL", url, says, "https://HOST[:PORT]"], url);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{url}: retried"
        );
    }
}

#[test]
fn an_empty_autorepair_config_is_unset() {
    let fleets = Fleets::new();
    let mut args = fleets.ganeti();
    args.extend(["status", "--now", NOW].map(String::from));
    let o = command(&args)
        .env("AUTOREPAIR_CONFIG", "")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("instances;"), "{}", stdout(&o));
    // Set, it is still the config file.
    let o = command(&args)
        .env("AUTOREPAIR_CONFIG", fleets.path("nowhere.toml"))
        .output()
        .unwrap();
    assert_refused(&o, &["nowhere.toml"], "AUTOREPAIR_CONFIG=nowhere.toml");
}

/// One of a thing is said in the singular: "1 repair entries submitted", "1 instances".
#[test]
fn counts_of_one_are_singular() {
    let fleets = Fleets::new();
    let constraints = fleets.write("constraints.json", r#"{"maximum-repair-queue-entries": 5}"#);
    let mut args = fleets.machines();
    args.extend(["--constraints".into(), constraints]);
    args.extend(["run", "--now", "1800000000"].map(String::from));
    let o = run(&args);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains(" 1 repair entry submitted"), "{out}");
    // One instance left.
    let mut fleet = fleets.json("demo.json");
    fleet["instances"]
        .as_array_mut()
        .unwrap()
        .retain(|i| i["name"] == "db-a1.ams.example");
    fleets.write("demo.json", &fleet.to_string());
    let mut args = fleets.ganeti();
    args.extend(["status", "--now", NOW].map(String::from));
    let out = stdout(&run(&args));
    assert!(out.contains("\n1 instance; "), "{out}");
}

/// `explain` of a scope says it is one and what lists its targets, in every family: not
/// 'machine "rack/1" is not in …' nor 'instance "cluster" …'.
#[test]
fn explain_of_a_scope_says_it_is_no_target() {
    let fleets = Fleets::new();
    let cases: [(Vec<String>, &str, &str); 5] = [
        (fleets.ganeti(), "cluster", "instances"),
        (fleets.ganeti(), "group/ams-a", "instances"),
        (fleets.ganeti(), "node/node-a1.ams.example", "instances"),
        (fleets.machines(), "rack/1", "machines"),
        (fleets.metal3(), "cluster/prod/edge", "machines"),
    ];
    for (fleet, object, targets) in cases {
        let mut args = fleet.clone();
        args.extend(["explain", object, "--now", NOW].map(String::from));
        let o = run(&args);
        let says = format!("{object} is not one of the {targets}: explain takes one");
        assert_refused(&o, &[&says], object);
        assert!(
            !stderr(&o).contains("is not in"),
            "{object}: {}",
            stderr(&o)
        );
    }
}

/// An admin verb on a name two instances share edits neither: it tagged the first copy,
/// while lint said the name changes nothing.
#[test]
fn admin_verbs_refuse_a_name_two_instances_share() {
    let fleets = Fleets::new();
    let mut fleet = fleets.json("demo.json");
    let instances = fleet["instances"].as_array_mut().unwrap();
    let twin = instances[0].clone();
    let name = twin["name"].as_str().unwrap().to_owned();
    instances.push(twin);
    let before = fleets.write("demo.json", &fleet.to_string());
    let before = std::fs::read(before).unwrap();
    for verb in [
        vec!["suspend", "instance/NAME"],
        vec!["suspend", "NAME"],
        vec!["allow", "migrate", "instance/NAME"],
        vec!["request", "failover", "instance/NAME"],
        vec!["clear", "instance/NAME"],
    ] {
        let mut args = fleets.ganeti();
        args.extend(verb.iter().map(|w| w.replace("NAME", &name)));
        args.extend(["--now", NOW].map(String::from));
        let o = run(&args);
        let err = stderr(&o);
        assert_ne!(o.status.code(), Some(0), "{verb:?}: {err}");
        assert!(
            err.contains(&format!("2 instances are named {name}")),
            "{verb:?}: {err}"
        );
        assert_eq!(
            std::fs::read(fleets.path("demo.json")).unwrap(),
            before,
            "{verb:?}"
        );
    }
}

/// A Machine without metadata, or with its annotations as a string, was left out of the fleet
/// without a word (5 Machines became 4): each is warned of by name, and counted.
#[test]
fn unreadable_metal3_machines_are_warned_of_and_counted() {
    let fleets = Fleets::new();
    let mut objects = fleets.json("metal3-demo.json");
    let machines: Vec<usize> = objects["items"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, i)| i["kind"] == "Machine")
        .map(|(n, _)| n)
        .collect();
    let items = objects["items"].as_array_mut().unwrap();
    let named = items[machines[1]]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_owned();
    items[machines[0]]
        .as_object_mut()
        .unwrap()
        .remove("metadata");
    items[machines[1]]["metadata"]["annotations"] = Value::String("x".into());
    fleets.write("metal3-demo.json", &objects.to_string());
    for verb in [vec!["status"], vec!["run", "--dry-run"]] {
        let mut args = fleets.metal3();
        args.extend(verb.iter().map(|w| w.to_string()));
        args.extend(["--now", NOW].map(String::from));
        let o = run(&args);
        let err = stderr(&o);
        assert!(
            err.contains("2 object(s) could not be read"),
            "{verb:?}: {err}"
        );
        assert!(err.contains("Machine (no name)"), "{verb:?}: {err}");
        assert!(
            err.contains(&named) && err.contains("unreadable metadata"),
            "{verb:?}: {err}"
        );
    }
}

/// Every file the tool writes, asked into a directory that does not exist: the error names the
/// file the user gave, never the temporary name it would have been written under (`at path
/// "/nonexistent/dir/.r.html.autorepair-11897-….tmp"`).
#[test]
fn write_errors_name_the_file_given_not_a_temporary_one() {
    let fleets = Fleets::new();
    let missing = fleets.path("no/such/dir");
    let out = |name: &str| format!("{missing}/{name}");
    let (template, machines) = (
        sabakan_fixture("template.yml"),
        sabakan_fixture("machines.json"),
    );
    let mut cases: Vec<(Vec<String>, String)> = Vec::new();
    for fleet in [fleets.ganeti(), fleets.machines(), fleets.metal3()] {
        let mut report = fleet.clone();
        report.extend(["report".into(), "--html".into(), out("r.html")]);
        cases.push((report, out("r.html")));
    }
    let sabakan: Vec<String> = [
        "sabakan",
        "update",
        "--template",
        &template,
        "--machines",
        &machines,
        "--write",
    ]
    .map(String::from)
    .into();
    cases.push((
        [sabakan, vec![out("cluster.yml")]].concat(),
        out("cluster.yml"),
    ));
    for (mut args, given) in cases {
        args.extend(["--now".into(), NOW.into()]);
        let o = run(&args);
        let err = stderr(&o);
        assert_ne!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.contains(&given), "{args:?}: {given} not named: {err}");
        assert!(
            !err.contains("at path") && !err.contains(".autorepair-"),
            "{args:?}: {err}"
        );
    }
}

/// A file on a read-only mount is not "read-only (mode 0644) … chmod u+w": the file system is
/// read-only, and chmod cannot help. Needs a tmpfs mount: root (listed as ignored elsewhere).
#[test]
#[cfg_attr(not(root), ignore = "needs root, to mount a tmpfs")]
fn a_read_only_file_system_is_named_as_such() {
    let fleets = Fleets::new();
    let mount = fleets.path("ro");
    std::fs::create_dir(&mount).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs", &mount])
        .output()
        .expect("mount runs");
    assert!(
        mounted.status.success(),
        "root, yet cannot mount a tmpfs: {}",
        String::from_utf8_lossy(&mounted.stderr)
    );
    struct Unmount(String);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mount.clone());
    std::fs::copy(fleets.path("demo.json"), format!("{mount}/demo.json")).unwrap();
    std::fs::create_dir(format!("{mount}/sub")).unwrap();
    let remounted = Command::new("mount")
        .args(["-o", "remount,ro", &mount])
        .status()
        .unwrap();
    assert!(remounted.success());
    let lock = fleets.path("demo.lock");
    let cases: Vec<(Vec<String>, &str)> = vec![
        // The fleet file itself (its lock elsewhere).
        (
            [
                "--cluster",
                &format!("{mount}/demo.json"),
                "--lock-file",
                &lock,
                "suspend",
                "cluster",
            ]
            .map(String::from)
            .into(),
            "demo.json is on a read-only file system",
        ),
        // A new file in a directory on it.
        (
            [
                &fleets.ganeti()[..],
                &[
                    "report".into(),
                    "--html".into(),
                    format!("{mount}/sub/r.html"),
                ],
            ]
            .concat(),
            "sub is on a read-only file system",
        ),
    ];
    for (mut args, says) in cases {
        args.extend(["--now".into(), NOW.into()]);
        let o = run(&args);
        let err = stderr(&o);
        assert_ne!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(err.contains("remount it read-write"), "{args:?}: {err}");
        assert!(
            !err.contains("chmod") && !err.contains(".autorepair-"),
            "{args:?}: {err}"
        );
    }
}

/// A repair configuration whose commands cannot run is refused at load (exit 2), naming the
/// file, the procedure, the operation and the step; it loaded and parked the machine.
#[test]
fn a_repair_configuration_that_cannot_run_is_refused_at_load() {
    let fleets = Fleets::new();
    let good = std::fs::read_to_string(fleets.path("machines-demo.yml")).unwrap();
    let first = |text: &str, from: &str, to: &str| {
        let start = text.find(from).unwrap();
        let end = start + text[start..].find('\n').unwrap();
        format!("{}{to}{}", &text[..start], &text[end..])
    };
    let cases = [
        (
            first(&good, "- repair_command:", "- repair_command: []"),
            "repair_operations[0] (operation \"unhealthy\"), repair_steps[0]: repair_command is empty",
        ),
        (
            first(&good, "health_check_command:", "health_check_command: []"),
            "repair_operations[0] (operation \"unhealthy\"): health_check_command is missing or empty",
        ),
        (
            first(&good, "health_check_command:", ""),
            "repair_operations[0] (operation \"unhealthy\"): health_check_command is missing or empty",
        ),
        (
            first(&good, "- operation: unhealthy", "- name: unhealthy"),
            "repair.repair_procedures[0] (machine types qemu), repair_operations[0]: unknown field `name`",
        ),
    ];
    for (text, says) in cases {
        assert_ne!(text, good);
        let repair = fleets.write("bad.yml", &text);
        let mut args = fleets.machines();
        args[3] = repair;
        args.extend(["status", "--now", NOW].map(String::from));
        let o = run(&args);
        assert_refused(&o, &["repair configuration", "bad.yml", says], says);
    }
}

/// A machine listed twice is said so: not "machines SN0101 and SN0101 both have the address".
#[test]
fn a_serial_listed_twice_is_named_once() {
    let fleets = Fleets::new();
    let mut answer: Value =
        serde_json::from_str(&std::fs::read_to_string(sabakan_fixture("machines.json")).unwrap())
            .unwrap();
    let list = answer["data"]["searchMachines"].as_array_mut().unwrap();
    let twice = list[0].clone();
    let serial = twice["spec"]["serial"].as_str().unwrap().to_owned();
    list.push(twice);
    let machines = fleets.write("machines.json", &answer.to_string());
    let template = sabakan_fixture("template.yml");
    let o = run(&[
        "sabakan",
        "generate",
        "--template",
        &template,
        "--machines",
        &machines,
        "--now",
        NOW,
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("machine {serial} is listed twice")),
        "{err}"
    );
    assert!(!err.contains("both have"), "{err}");
}

/// Every label a machines pass writes, as the labels that changed in the file: the summary
/// left out the entry, progress and index labels (3 counted of 5 sent; 0 when 10 were removed).
#[test]
fn a_machines_pass_counts_every_label_it_writes() {
    let fleets = Fleets::new();
    let constraints =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/machines-constraints.json");
    let labels = || -> std::collections::BTreeMap<(String, String), String> {
        let file = fleets.json("machines-demo.json");
        let mut all = std::collections::BTreeMap::new();
        for m in file.as_array().unwrap() {
            let serial = m["spec"]["serial"].as_str().unwrap().to_owned();
            let pairs: Vec<(String, String)> = match &m["spec"]["labels"] {
                Value::Object(map) => map
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                    .collect(),
                Value::Array(list) => list
                    .iter()
                    .map(|l| {
                        (
                            l["name"].as_str().unwrap().to_owned(),
                            l["value"].as_str().unwrap().to_owned(),
                        )
                    })
                    .collect(),
                _ => vec![],
            };
            for (k, v) in pairs {
                all.insert((serial.clone(), k), v);
            }
        }
        all
    };
    let mut wrote_some = 0;
    for i in 0..7 {
        let before = labels();
        let mut args = fleets.machines();
        args.extend(["--constraints".into(), constraints.display().to_string()]);
        args.extend([
            "run".into(),
            "--now".into(),
            (1_800_000_000 + 60 * i).to_string(),
        ]);
        let o = command(&args)
            .current_dir(fleets.dir.path())
            .output()
            .unwrap();
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "pass {i}: {out}{}", stderr(&o));
        let after = labels();
        let changed = before
            .keys()
            .chain(after.keys())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .filter(|k| before.get(*k) != after.get(*k))
            .count();
        let reported: usize = out
            .split(" label write(s)")
            .next()
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("pass {i}: no count: {out}"));
        // At least every label that changed (one label may be written twice in a pass: a
        // mark replaced by another).
        assert!(
            reported >= changed,
            "pass {i}: {changed} labels changed: {out}"
        );
        wrote_some += usize::from(changed > 0);
    }
    assert!(wrote_some >= 4, "the tour writes in most passes");
}

/// Names with control characters, in every family and every verb that prints them: a newline in
/// a name added a line to `status -o name` (`"evil\ninstance/db-a2…"`), and an escape sequence
/// reached the terminal. Each is printed escaped (`\n`, `\u{1b}`).
#[test]
fn control_characters_in_names_are_escaped_wherever_printed() {
    const NEWLINE: &str = "evil\ninstance/forged";
    const ESCAPE: &str = "red\u{1b}[31m\u{7}";
    let fleets = Fleets::new();
    // Ganeti: two instances renamed.
    let mut demo = fleets.json("demo.json");
    let instances = demo["instances"].as_array_mut().unwrap();
    instances[1]["name"] = NEWLINE.into();
    instances[2]["name"] = ESCAPE.into();
    let ganeti_targets = instances.len();
    fleets.write("demo.json", &demo.to_string());
    // machines: two serials (not the boot server, which holds the cluster's labels).
    let mut machines = fleets.json("machines-demo.json");
    let list = machines.as_array_mut().unwrap();
    let mut renamed = list
        .iter_mut()
        .filter(|m| m["spec"]["role"] != "boot")
        .take(2);
    renamed.next().unwrap()["spec"]["serial"] = NEWLINE.into();
    renamed.next().unwrap()["spec"]["serial"] = ESCAPE.into();
    let machines_targets = list.len();
    fleets.write("machines-demo.json", &machines.to_string());
    // metal3: two Machines.
    let mut objects = fleets.json("metal3-demo.json");
    let items = objects["items"].as_array_mut().unwrap();
    let mut renamed = items.iter_mut().filter(|i| i["kind"] == "Machine").take(2);
    renamed.next().unwrap()["metadata"]["name"] = NEWLINE.into();
    renamed.next().unwrap()["metadata"]["name"] = ESCAPE.into();
    let metal3_targets = items.iter().filter(|i| i["kind"] == "Machine").count();
    fleets.write("metal3-demo.json", &objects.to_string());

    let families = [
        ("ganeti", fleets.ganeti(), ganeti_targets),
        ("machines", fleets.machines(), machines_targets),
        ("metal3", fleets.metal3(), metal3_targets),
    ];
    for (family, fleet, targets) in families {
        let verbs: [&[&str]; 6] = [
            &["status"],
            &["status", "-o", "wide"],
            &["tags", "lint"],
            &["run", "--dry-run"],
            &["explain", NEWLINE],
            &["explain", ESCAPE],
        ];
        for verb in verbs {
            let mut args = fleet.clone();
            args.extend(verb.iter().map(|w| w.to_string()));
            args.extend(["--now", NOW].map(String::from));
            let o = run(&args);
            let (out, err) = (stdout(&o), stderr(&o));
            let what = format!("{family} {verb:?}");
            assert!(o.status.code() != Some(101), "{what}: {err}");
            for text in [&out, &err] {
                assert!(
                    !text.contains('\u{1b}') && !text.contains('\u{7}'),
                    "{what}: {text:?}"
                );
                assert!(!text.contains("\ninstance/forged"), "{what}: {text}");
            }
        }
        // One line a target, the names escaped.
        let mut args = fleet.clone();
        args.extend(["status", "-o", "name", "--now", NOW].map(String::from));
        let o = run(&args);
        let out = stdout(&o);
        assert_eq!(out.lines().count(), targets, "{family}: {out}");
        assert!(out.contains("evil\\ninstance/forged"), "{family}: {out}");
        assert!(out.contains("red\\u{1b}[31m\\u{7}"), "{family}: {out}");
    }
}

/// A fleet file that does not exist, for every family that reads one and every command that
/// opens it with a lock (`run`) or without (`run --dry-run`, `status`): the error (exit 3)
/// names the file and the family's own flag, and never another family's flags or tools, and
/// no lock file is left behind.
#[test]
fn a_missing_fleet_file_is_named_with_its_own_familys_advice() {
    let fleets = Fleets::new();
    let missing = fleets.path("typo.json");
    // Each family's flag, with the rest of its command line and the words only its advice
    // may say.
    let families: [(&str, Vec<String>, &[&str]); 3] = [
        (
            "--cluster",
            vec![],
            &["--cluster", "fleet_file", "generate --instances"],
        ),
        ("--kube-objects", vec![], &["--kube-objects", "kubectl"]),
        (
            "--sabakan-file",
            fleets.machines()[2..].to_vec(),
            &["--sabakan-file", "sabakan_file", "/api/v1/machines"],
        ),
    ];
    let mut wrong = Vec::new();
    for (flag, rest, _) in &families {
        for command in [&["run"][..], &["run", "--dry-run"], &["status"]] {
            let mut args: Vec<String> = command.iter().map(|s| s.to_string()).collect();
            args.extend([flag.to_string(), missing.clone()]);
            args.extend(rest.iter().cloned());
            args.extend(["--now".into(), NOW.into()]);
            let o = run(&args);
            let err = stderr(&o);
            let mut says = |what: String| wrong.push(format!("{args:?}: {what}: {err}"));
            if o.status.code() != Some(3) {
                says(format!("exit {:?}, not 3", o.status.code()));
            }
            if !err.contains(&format!("{missing}: does not exist")) {
                says("the file is not said not to exist".into());
            }
            if !err.contains(flag) {
                says(format!("{flag} not named"));
            }
            for (other, _, words) in &families {
                for w in words.iter().filter(|_| other != flag) {
                    if err.contains(w) {
                        says(format!("says {w:?} of {other}"));
                    }
                }
            }
            if Path::new(&format!("{missing}.lock")).exists() {
                says("a lock left behind".into());
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
