//! The rules of the command line that hold for every family (the face, `src/face`), through the
//! binary: every command that reads the clock is given one, errors name what is at fault and
//! exit with their codes, the fleet's lock and its flags, logs and bad marks said once, the
//! printer's formats, the admin verbs' rules and `simulate`'s output. Most run on the Ganeti
//! demo fleet, Ganeti being the default family; those about choosing a family run on each.
//! Ganeti's own are `ganeti_cli.rs`'s.

use crate::common::bin::{
    Bin, NOW, assert_clock_given, bin, bin_path, demo_copy, edit_tags, load, stderr_of,
};
use autorepair::ganeti::file::parse_fleet;
use autorepair::ganeti::tags::PREFIX;
use serde_json::Value;
use std::ffi::{OsStr, OsString};
use std::io::BufRead;
use std::time::Duration;

#[test]
#[should_panic(expected = "reads the clock: pass --now")]
fn the_clock_check_catches_a_command_without_now() {
    assert_clock_given(&["tags".into(), "lint".into(), "--cluster".into(), "x".into()]);
}

#[test]
fn the_clock_check_lets_clockless_commands_and_given_clocks_pass() {
    for args in [
        &["resume", "cluster", "--now", "5", "--cluster", "x"][..],
        &["status", "--now", "5", "--cluster", "x"],
        &["tags", "parse", "x"],
    ] {
        assert_clock_given(&args.iter().map(OsString::from).collect::<Vec<_>>());
    }
}

/// `tags parse` reads the marks of the family whose fleet flag is given, Ganeti's without one:
/// a good mark of that family is described (exit 0), a bad one is invalid (exit 1), and
/// another family's mark is foreign to it.
#[test]
fn tags_parse_reads_the_marks_of_the_family_whose_fleet_flag_is_given() {
    let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
    struct Case {
        family: &'static str,
        flags: &'static [&'static str],
        good: String,
        said: String,
        bad: String,
        foreign: String,
    }
    let cases = [
        Case {
            family: "ganeti, by default",
            flags: &[],
            good: format!("{PREFIX}failover"),
            said: "allows repairs up to failover".into(),
            bad: format!("{PREFIX}teleport"),
            foreign: "autorepair.io/policy=drain".into(),
        },
        Case {
            family: "ganeti",
            flags: &["--cluster", "fleet.json"],
            good: format!("{PREFIX}pending:migrate:{id}:17:3+4"),
            said: format!("migrate repair {id} pending since 1970-01-01T00:00:17Z, jobs [3, 4]"),
            bad: format!("{PREFIX}pending:migrate:{id}:17:x"),
            foreign: "autorepair.policy=step-2".into(),
        },
        Case {
            family: "metal3",
            flags: &["--kube"],
            good: "autorepair.io/policy=power-cycle".into(),
            said: "allows repairs up to power-cycle".into(),
            bad: "autorepair.io/policy=teleport".into(),
            foreign: format!("{PREFIX}failover"),
        },
        Case {
            family: "metal3 (objects file)",
            flags: &["--kube-objects", "objects.json"],
            good: "autorepair.io/suspend=".into(),
            said: "suspended, no end".into(),
            bad: "autorepair.io/suspend=soon".into(),
            foreign: "autorepair.suspend=".into(),
        },
        Case {
            family: "machines",
            flags: &["--sabakan-file", "machines.json"],
            good: format!("autorepair.{id}=result.step-2.18.failure.7"),
            said: format!(
                "step-2 repair {id} ended failure at 1970-01-01T00:00:18Z, repair entries [7]"
            ),
            bad: "autorepair.policy=teleport".into(),
            foreign: format!("{PREFIX}failover"),
        },
        Case {
            family: "machines (sabakan)",
            flags: &["--sabakan", "https://sabakan.example:10443"],
            good: "autorepair.policy=step-2".into(),
            said: "allows repairs up to step-2".into(),
            bad: format!("autorepair.{id}=pending.step-9.17"),
            foreign: format!("{PREFIX}suspend"),
        },
    ];
    let run = |flags: &[&str], marks: &[&str]| {
        let out = bin()
            .args(["tags", "parse"])
            .args(flags)
            .args(marks)
            .assert();
        let output = out.get_output();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    for case in &cases {
        let name = case.family;
        assert_eq!(
            run(case.flags, &[&case.good, &case.foreign]),
            (
                Some(0),
                format!(
                    "{}: {}\n{}: foreign (not an autorepair {})\n",
                    case.good,
                    case.said,
                    case.foreign,
                    if name.starts_with("ganeti") {
                        "tag"
                    } else if name.starts_with("metal3") {
                        "annotation"
                    } else {
                        "label"
                    }
                )
            ),
            "{name}: a good mark"
        );
        let (code, said) = run(case.flags, &[&case.good, &case.bad]);
        assert_eq!(code, Some(1), "{name}: a bad mark: {said}");
        let bad = said.lines().nth(1).unwrap_or_default();
        assert!(
            bad.starts_with(&format!("{}: INVALID (", case.bad)),
            "{name}: a bad mark: {said}"
        );
    }
}

/// `generate` is the generator's of the family whose fleet flag is given: Ganeti's without
/// one; the families without a generator say so (exit 2) and name the flag to leave out.
#[test]
fn generate_is_the_flagged_familys_and_a_family_without_one_says_so() {
    let cases: [(&[&str], Result<(), &str>); 4] = [
        (&[], Ok(())),
        (&["--cluster", "fleet.json"], Ok(())),
        (
            &["--kube"],
            Err(
                "autorepair: error: metal3 has no `generate`: synthetic fleets are made for ganeti only: leave out --kube",
            ),
        ),
        (
            &["--sabakan-file", "machines.json"],
            Err(
                "autorepair: error: machines has no `generate`: synthetic fleets are made for ganeti only: leave out --sabakan-file",
            ),
        ),
    ];
    for (flags, expected) in cases {
        let out = bin()
            .args(["generate", "--instances", "3"])
            .args(flags)
            .assert();
        let output = out.get_output();
        let stderr = String::from_utf8_lossy(&output.stderr);
        match expected {
            Ok(()) => {
                assert_eq!(output.status.code(), Some(0), "{flags:?}: {stderr}");
                let fleet = parse_fleet(&String::from_utf8_lossy(&output.stdout)).unwrap();
                assert_eq!(fleet.instances.len(), 3, "{flags:?}");
            }
            Err(said) => {
                assert_eq!(output.status.code(), Some(2), "{flags:?}: {stderr}");
                assert_eq!(stderr.trim_end(), said, "{flags:?}");
                assert!(output.stdout.is_empty(), "{flags:?}");
            }
        }
    }
}

#[test]
fn errors_name_the_culprit() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{ not json").unwrap();
    let out = bin()
        .args(["status", "--now", NOW, "--cluster"])
        .arg(&bad)
        .assert()
        .code(3);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("bad.json"));
    let out = bin().args(["status", "--now", NOW]).assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("--cluster"));
    let conf = dir.path().join("a.toml");
    std::fs::write(&conf, "[limits]\nmax_pendng = 2\n").unwrap();
    let out = bin()
        .args([
            "status",
            "--now",
            NOW,
            "--cluster",
            "fixtures/demo.json",
            "--config",
        ])
        .arg(&conf)
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("max_pendng"));
}

#[test]
fn an_os_error_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let nowhere = dir.path().join("no-such-dir");
    let in_nowhere = |name: &str| nowhere.join(name).into_os_string();
    let fleet = path.as_os_str();
    let cases: Vec<(Bin, &str)> = vec![
        (
            {
                let mut b = bin();
                b.args([OsStr::new("run"), OsStr::new("--now"), OsStr::new(NOW)])
                    .args([OsStr::new("--cluster"), fleet, OsStr::new("--lock-file")])
                    .arg(in_nowhere("x.lock"));
                b
            },
            "No such file or directory (os error 2)",
        ),
        (
            {
                let mut b = bin();
                b.args(["resume", "cluster", "--now", "1800000000", "--cluster"])
                    .arg(fleet)
                    .arg("--lock-file")
                    .arg(in_nowhere("x.lock"));
                b
            },
            "No such file or directory (os error 2)",
        ),
        (
            {
                let mut b = bin();
                b.args(["run", "--now", NOW, "--cluster"])
                    .arg(fleet)
                    .arg("--metrics-file")
                    .arg(in_nowhere("m.prom"));
                b
            },
            "No such file or directory (os error 2)",
        ),
        (
            {
                let mut b = bin();
                b.args(["status", "--now", NOW, "--cluster"])
                    .arg(fleet)
                    .arg("--config")
                    .arg(in_nowhere("a.toml"));
                b
            },
            "No such file or directory (os error 2)",
        ),
        (
            {
                let mut b = bin();
                b.args([
                    "status",
                    "--now",
                    NOW,
                    "--rapi",
                    "https://192.0.2.1:5080",
                    "--rapi-user",
                    "u",
                    "--rapi-password-file",
                ])
                .arg(in_nowhere("pw"));
                b
            },
            "No such file or directory (os error 2)",
        ),
        (
            bin_that_cannot_save(&[
                OsStr::new("run"),
                OsStr::new("--now"),
                OsStr::new(NOW),
                OsStr::new("--cluster"),
                fleet,
            ]),
            "File too large (os error 27)",
        ),
    ];
    for (mut b, os_error) in cases {
        let err = stderr_of(&b.assert().failure());
        let line = err
            .lines()
            .find(|l| l.starts_with("autorepair: error:"))
            .unwrap_or_else(|| panic!("{:?}: no error line in {err}", b.args));
        assert_eq!(line.matches(os_error).count(), 1, "{:?}: {line}", b.args);
        assert_eq!(line.matches("(os error").count(), 1, "{:?}: {line}", b.args);
    }
}

/// Runs `args` under `sh` with the file size limited to one block: any save of the fleet file
/// then fails (EFBIG, for root too, unlike a permission), while reading it works.
fn bin_that_cannot_save(args: &[&OsStr]) -> Bin {
    let mut b = bin();
    b.cmd = assert_cmd::Command::new("sh");
    b.cmd
        .env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .args(["-c", r#"trap '' XFSZ; ulimit -f 1; exec "$0" "$@""#])
        .arg(bin_path());
    b.args(args);
    b
}

#[test]
fn no_write_is_logged_before_the_fleet_file_is_saved() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let before = std::fs::read(&path).unwrap();
    let writes = ["tag added", "tag removed", "job submitted"];
    // An admin command logs its writes only when asked to (it prints them on stdout).
    let cases = [
        &["run", "--now", NOW][..],
        &["suspend", "cluster", "--now", NOW, "--log", "info"],
    ];
    for args in cases {
        let mut all: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        all.extend([OsStr::new("--cluster"), path.as_os_str()]);
        let failed = bin_that_cannot_save(&all).assert().code(3);
        let err = stderr_of(&failed);
        assert!(err.contains("File too large"), "{args:?}: {err}");
        for w in writes {
            assert!(
                !err.contains(w),
                "{args:?} logged {w:?} but saved nothing: {err}"
            );
        }
        assert_eq!(std::fs::read(&path).unwrap(), before, "{args:?}");
        // The same command that can save logs its writes.
        let saved = bin().args(&all).assert().success();
        let err = stderr_of(&saved);
        assert!(writes.iter().any(|w| err.contains(w)), "{args:?}: {err}");
        std::fs::write(&path, &before).unwrap();
    }
    let failed = bin_that_cannot_save(&[
        OsStr::new("run"),
        OsStr::new("--now"),
        OsStr::new(NOW),
        OsStr::new("--cluster"),
        path.as_os_str(),
    ])
    .assert()
    .code(3);
    assert!(
        stderr_of(&failed).contains("could not save the fleet, so none of its"),
        "{}",
        stderr_of(&failed)
    );
}

#[test]
fn a_missing_fleet_file_is_named_and_leaves_no_lock_behind() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("typo.json");
    for args in [
        &["run", "--now", NOW][..],
        &["suspend", "cluster", "--now", NOW],
        &["resume", "cluster", "--now", NOW],
        &["status", "--now", NOW],
    ] {
        let out = bin()
            .args(args)
            .arg("--cluster")
            .arg(&missing)
            .assert()
            .code(3);
        let err = stderr_of(&out);
        assert!(
            err.contains(&format!("{}: does not exist", missing.display())),
            "{args:?}: {err}"
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{args:?} created a file"
        );
    }
}

#[test]
fn a_second_run_exits_cleanly_while_the_first_holds_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let before = std::fs::read(&path).unwrap();
    let lock = autorepair::lock::acquire(&dir.path().join("demo.json.lock")).unwrap();
    let out = bin()
        .args(["run", "--now", NOW, "--cluster"])
        .arg(&path)
        .assert()
        .code(4);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("lock"));
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the locked-out run changed nothing"
    );
    drop(lock);
    // A flock belongs to the open file, which a child that another test forks shares until it
    // execs: wait until no such child still holds ours.
    let lock_path = dir.path().join("demo.json.lock");
    for _ in 0..500 {
        if autorepair::lock::acquire(&lock_path).is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    bin()
        .args(["run", "--now", NOW, "--cluster"])
        .arg(&path)
        .assert()
        .success();
}

/// Reads the first line a background run prints, or gives up after a minute.
fn first_line(child: &mut std::process::Child) -> String {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the background run printed nothing within a minute")
}

#[test]
fn a_looping_run_lets_an_admin_suspend_between_passes() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let args = [
        OsStr::new("run"),
        OsStr::new("--loop"),
        OsStr::new("--interval"),
        OsStr::new("1h"),
        OsStr::new("--now"),
        OsStr::new(NOW),
        OsStr::new("--cluster"),
        path.as_os_str(),
    ];
    assert_clock_given(&args.map(OsStr::to_owned));
    let mut looping = std::process::Command::new(bin_path())
        .args(args)
        .env_remove("AUTOREPAIR_CONFIG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let line = first_line(&mut looping);
    assert!(line.starts_with("pass 1:"), "{line}");
    // The pass prints its line just before it lets the lock go.
    let lock = dir.path().join("demo.json.lock");
    let free = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        autorepair::lock::acquire(&lock).is_ok()
    });
    let suspended = bin()
        .args(["suspend", "cluster", "--now", NOW, "--cluster"])
        .arg(&path)
        .assert()
        .try_success();
    let still_looping = looping.try_wait().unwrap().is_none();
    looping.kill().unwrap();
    looping.wait().unwrap();
    assert!(free, "the loop holds the lock while it sleeps");
    suspended.unwrap();
    assert!(still_looping, "the loop went on");
    assert!(
        load(&path)
            .cluster
            .tags
            .contains(&format!("{PREFIX}suspend"))
    );
}

#[test]
fn the_lock_belongs_to_the_fleet_not_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let (fleet_a, fleet_b) = (demo_copy(&a), demo_copy(&b));
    let link_a = dir.path().join("a-link.json");
    std::os::unix::fs::symlink(&fleet_a, &link_a).unwrap();
    let a_by_dots = a.join(".").join("demo.json");
    let held = autorepair::lock::acquire(&a.join("demo.json.lock")).unwrap();
    // (fleet, exit status while fleet a's lock is held)
    let cases = [(&fleet_b, 0), (&fleet_a, 4), (&link_a, 4), (&a_by_dots, 4)];
    for (fleet, code) in cases {
        for verb in [
            &["run", "--now", NOW][..],
            &["suspend", "cluster", "--now", NOW],
        ] {
            bin()
                .args(verb)
                .arg("--cluster")
                .arg(fleet)
                .assert()
                .code(code);
        }
    }
    drop(held);
    bin()
        .args(["run", "--now", NOW, "--cluster"])
        .arg(&link_a)
        .assert()
        .success();
}

/// A standby replica (another run holds the fleet's lock) said so at WARN every interval: 30
/// lines a minute. It says it once, at INFO, and again only when it changes.
#[test]
fn a_loop_kept_out_by_the_lock_says_so_once_at_info() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let lock = autorepair::lock::beside(&path).unwrap();
    let held = autorepair::lock::acquire(&lock).unwrap();
    let out = bin()
        .args(["--config", "/dev/null", "--log", "info", "run", "--loop"])
        .args(["--interval", "1", "--passes", "3", "--now", "1800000000"])
        .arg("--cluster")
        .arg(&path)
        .assert();
    drop(held);
    let stderr = stderr_of(&out);
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("holds the lock"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(said[0].contains("INFO"), "{stderr}");
}

/// `--wait[=DURATION]`: a command waits for the fleet's lock instead of failing at once with
/// exit 4, and says how long it waited when the lock stayed held.
#[test]
fn wait_waits_for_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let lock = autorepair::lock::beside(&path).unwrap();
    let suspend = |wait: Option<&str>| {
        let mut b = bin();
        b.args([
            "--config",
            "/dev/null",
            "suspend",
            "cluster",
            "--now",
            "1800000000",
        ])
        .arg("--cluster")
        .arg(&path);
        if let Some(w) = wait {
            b.arg(w);
        }
        b.assert()
    };
    let held = autorepair::lock::acquire(&lock).unwrap();
    let err = stderr_of(&suspend(None).code(4));
    assert!(err.contains("give --wait"), "{err}");
    let err = stderr_of(&suspend(Some("--wait=1s")).code(4));
    assert!(err.contains("after --wait 1s"), "{err}");
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(500));
        drop(held);
    });
    suspend(Some("--wait")).success();
    release.join().unwrap();
}

#[test]
fn logs_carry_no_colour_codes_unless_a_terminal_asks_for_them() {
    // Piped (cron's `| logger`, systemd's journal): never colour.
    let args = [
        "run",
        "--dry-run",
        "--now",
        NOW,
        "--cluster",
        "fixtures/demo.json",
    ];
    for no_color in [None, Some(""), Some("1")] {
        let mut b = bin();
        if let Some(v) = no_color {
            b.env("NO_COLOR", v);
        }
        let err = stderr_of(&b.args(args).assert().success());
        assert!(err.contains("WARN"), "the pass logs something: {err}");
        assert!(!err.contains('\x1b'), "NO_COLOR={no_color:?}: {err:?}");
    }
    // On a terminal (util-linux `script` gives the run one): colour, unless NO_COLOR is set
    // to something.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("no `script` command: the terminal half of this test did not run");
        return;
    }
    let line = format!("'{}' {} >/dev/null", bin_path().display(), args.join(" "));
    for (no_color, coloured) in [(None, true), (Some(""), true), (Some("1"), false)] {
        let mut c = std::process::Command::new("script");
        c.args(["-qec", &line, "/dev/null"])
            .stdin(std::process::Stdio::null())
            .env_remove("AUTOREPAIR_CONFIG")
            .env_remove("RUST_LOG")
            .env_remove("NO_COLOR");
        if let Some(v) = no_color {
            c.env("NO_COLOR", v);
        }
        let out = c.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("WARN"), "{text}");
        assert_eq!(
            text.contains('\x1b'),
            coloured,
            "terminal, NO_COLOR={no_color:?}: {text:?}"
        );
    }
}

/// After a pass, its line counts the tag writes (on Ganeti each is a job of its own) apart from
/// the repair jobs, and says the states are those the pass began with; a daemon's passes warn
/// of each bad tag once, and a lint about no tag in particular carries no empty tag field.
#[test]
fn a_pass_says_what_it_wrote_and_warns_of_each_bad_tag_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    // Two policies on one instance: a lint about the object, naming no single tag.
    edit_tags(&path, "web-a4.ams.example", |tags| {
        for level in ["migrate", "failover"] {
            tags.push(format!("ganeti:watcher:autorepair:{level}").into());
        }
    });
    let out = bin()
        .args([
            "--config",
            "/dev/null",
            "run",
            "--passes",
            "3",
            "--now",
            "1800000000",
        ])
        .arg("--cluster")
        .arg(&path)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let first = stdout.lines().find(|l| l.starts_with("pass 1:")).unwrap();
    let tags: usize = first
        .split(": ")
        .nth(2)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{first}"));
    assert!(tags > 0 && first.contains(" tag write(s), "), "{first}");
    assert!(first.contains(" repair jobs submitted, "), "{first}");
    assert!(first.contains("(states when the pass began;"), "{first}");
    assert!(!stdout.contains("states now"), "{stdout}");
    let teleport = stderr.matches("unknown kind \"teleport\"").count();
    assert_eq!(teleport, 1, "said once in three passes: {stderr}");
    let mix = stderr
        .lines()
        .find(|l| l.contains("2 policy tags"))
        .unwrap();
    assert!(!mix.contains("tag="), "{mix}");
    assert_eq!(stderr.matches("2 policy tags").count(), 1, "{stderr}");
}

/// A daemon says a bad mark once while it lasts, and again when it comes back after a pass
/// without it: mended, then damaged again, is news (a warning said once a process was not).
#[test]
fn a_bad_mark_is_said_again_when_it_comes_back() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let bad = "ganeti:watcher:autorepair:suspend:notanumber";
    let with_bad = |on: bool| {
        edit_tags(&path, "web-a4.ams.example", |tags| {
            tags.retain(|t| t != bad);
            if on {
                tags.push(bad.into());
            }
        })
    };
    with_bad(true);
    let mut child = std::process::Command::new(bin_path())
        .args(["--config", "/dev/null", "run", "--loop", "--interval", "1s"])
        .args(["--passes", "4", "--now", "1800000000", "--cluster"])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let said = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap());
    // The mark in pass 1, gone in pass 2, back in passes 3 and 4: each edit is made in the
    // pause after a pass said its line, before the next pass reads the file.
    let edits = [(1, false), (2, true)];
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(&(_, on)) = edits
            .iter()
            .find(|(n, _)| line.starts_with(&format!("pass {n}:")))
        {
            with_bad(on);
        }
    }
    let status = child.wait().unwrap();
    let stderr = said.join().unwrap();
    assert!(
        status.success() || status.code() == Some(1),
        "{status}: {stderr}"
    );
    let times = stderr.lines().filter(|l| l.contains("notanumber")).count();
    assert_eq!(
        times, 2,
        "said in pass 1 and again in pass 3, not in 4:\n{stderr}"
    );
}

/// `status | head -1`: a reader that stops reading is no failure (exit 0, nothing on standard
/// error); and `run --passes 0` is refused, not taken for one pass.
#[test]
fn a_closed_pipe_is_no_error_and_zero_passes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let mut child = std::process::Command::new(bin_path())
        .args([
            "--config",
            "/dev/null",
            "status",
            "--now",
            "1800000000",
            "--cluster",
        ])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");

    let out = bin()
        .args([
            "--config",
            "/dev/null",
            "run",
            "--passes",
            "0",
            "--now",
            "1800000000",
        ])
        .arg("--cluster")
        .arg(&path)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("--passes"), "{stderr}");
    let fleet = std::fs::read_to_string(&path).unwrap();
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo.json");
    assert_eq!(fleet, std::fs::read_to_string(demo).unwrap(), "no pass ran");
}

/// `status --no-headers`: one line a target and nothing else, for scripts.
#[test]
fn status_without_headers_is_one_line_a_target() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let status = |extra: &[&str]| {
        let out = bin()
            .args(["--config", "/dev/null", "status", "--now", "1800000000"])
            .args(extra)
            .arg("--cluster")
            .arg(&path)
            .assert()
            .success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    let full = status(&[]);
    let rows = status(&["--no-headers"]);
    let instances = std::fs::read_to_string(&path)
        .unwrap()
        .matches("\"pnode\"")
        .count();
    assert_eq!(rows.lines().count(), instances, "{rows}");
    assert!(
        !rows.contains("INSTANCE") && !rows.contains("states now"),
        "{rows}"
    );
    let body: Vec<&str> = full.lines().skip(1).take(instances).collect();
    assert_eq!(rows.lines().collect::<Vec<_>>(), body);
}

/// Output as kubectl users expect (issue: "-o json|yaml|wide|name", a target filter on
/// `status`, short names as gnt-* expands them): each row of what `status` and `explain`
/// print for a command line.
#[test]
fn status_and_explain_print_what_kubectl_users_expect() {
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo.json");
    let run = |args: &[&str]| {
        let out = bin()
            .args(["--config", "/dev/null", "--cluster", demo])
            .args(args)
            .args(["--now", NOW])
            .assert();
        let out = out.get_output();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let lines = |text: &str| text.lines().map(str::to_owned).collect::<Vec<_>>();
    // (arguments, exit, a check of standard output or error)
    type Check = fn(&str, &str) -> bool;
    let cases: &[(&[&str], i32, Check)] = &[
        // A short name as gnt-* expands it; a scope; both, once each.
        (&["status", "web-a1", "-o", "name"], 0, |o, _| {
            o == "instance/web-a1.ams.example\n"
        }),
        (&["status", "group/ams-a", "-o", "name"], 0, |o, _| {
            o.lines().count() == 12 && o.lines().all(|l| l.starts_with("instance/"))
        }),
        (
            &["status", "group/ams-a", "web-a1", "-o", "name"],
            0,
            |o, _| o.lines().count() == 12,
        ),
        // The table of the selection, its counts of the selection.
        (&["status", "db-a1", "db-a2"], 0, |o, _| {
            o.contains("2 instances;") && o.starts_with("INSTANCE")
        }),
        (&["status", "web-a1", "-o", "wide"], 0, |o, _| {
            o.lines().next().is_some_and(|h| {
                h.contains("PROBLEM") && h.contains("DOMAIN") && h.contains("LAST")
            }) && o.contains("is offline")
        }),
        (&["status", "web-a1", "-o", "yaml"], 0, |o, _| {
            o.starts_with("now: ") && o.contains("name: web-a1.ams.example")
        }),
        (&["status", "web-a1", "-o", "json"], 0, |o, _| {
            serde_json::from_str::<Value>(o)
                .is_ok_and(|v| v["targets"][0]["name"] == "web-a1.ams.example")
        }),
        (&["explain", "web-a1", "-o", "name"], 0, |o, _| {
            o == "instance/web-a1.ams.example\n"
        }),
        (&["explain", "instance/web-a1", "-o", "yaml"], 0, |o, _| {
            o.starts_with("name: web-a1.ams.example")
        }),
        // A short name that begins several, or none; an object that holds no instances.
        (&["status", "web"], 2, |_, e| {
            e.contains("instance/web is not in the fleet")
        }),
        (&["status", "db-a"], 2, |_, e| {
            e.contains("is not in the fleet")
        }),
        // Not "holds no instances": it holds four.
        (&["status", "node/node-a1.ams.example"], 2, |_, e| {
            e.contains("node/node-a1.ams.example is neither one of the instances nor a scope")
                && !e.contains("holds no instances")
        }),
        (&["status", "--json", "-o", "yaml"], 2, |_, e| {
            e.contains("cannot be used with")
        }),
    ];
    for (args, code, check) in cases {
        let (got, out, err) = run(args);
        assert_eq!(got, Some(*code), "{args:?}: {err}");
        assert!(check(&out, &err), "{args:?}:\n{:?}\n{err}", lines(&out));
    }
}

/// An admin command says its change once, on standard output, with the time as a date; the
/// executor's log line for it comes back with `--log info`.
#[test]
fn an_admin_command_says_its_change_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let mark = "ganeti:watcher:autorepair:suspend:1800007200";
    for (log, in_log) in [(None, 0), (Some("info"), 1)] {
        let mut b = bin();
        b.args([
            "--config",
            "/dev/null",
            "suspend",
            "instance/db-a1.ams.example",
        ])
        .args(["--for", "2h", "--now", "1800000000", "--cluster"])
        .arg(&path);
        if let Some(l) = log {
            b.args(["--log", l]);
        }
        let out = b.assert().success();
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert_eq!(stdout.matches(mark).count(), 1, "{stdout}");
        assert!(stdout.contains("until 2027-01-15T10:00:00Z"), "{stdout}");
        assert_eq!(stderr.matches(mark).count(), in_log, "{log:?}: {stderr}");
        std::fs::copy(
            concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo.json"),
            &path,
        )
        .unwrap();
    }
}

#[test]
fn a_suspend_that_ends_at_once_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let before = std::fs::read(&path).unwrap();
    let past = (NOW.parse::<i64>().unwrap() - 60).to_string();
    // A duration under a second is refused by the flag's parser; a time by the verb.
    for (how, said, why) in [
        (&["--for", "0s"][..], "--for", "1s or more"),
        (&["--for", "10ms"], "--for", "1s or more"),
        (&["--until", NOW], "--until", "not after now"),
        (&["--until", &past], "--until", "not after now"),
    ] {
        let out = bin()
            .args(["suspend", "group/ams-a", "--now", NOW])
            .args(how)
            .arg("--cluster")
            .arg(&path)
            .assert()
            .code(2);
        let err = stderr_of(&out);
        assert!(err.contains(said) && err.contains(why), "{how:?}: {err}");
    }
    assert_eq!(std::fs::read(&path).unwrap(), before);
    bin()
        .args([
            "suspend",
            "group/ams-a",
            "--for",
            "1s",
            "--now",
            NOW,
            "--cluster",
        ])
        .arg(&path)
        .assert()
        .success();
}

/// Suspending a scope keeps the design's rule (the nearest policy wins) and says what that
/// leaves repairing: every object below with a policy of its own, by name, with its policy.
/// A suspend of a target, with nothing below it, says nothing more.
#[test]
fn suspending_a_scope_names_what_goes_on_repairing_below_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let stdout_of = |args: &[&str]| {
        let out = bin()
            .args(args)
            .args(["--now", NOW, "--cluster"])
            .arg(&path)
            .assert()
            .success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    let said = stdout_of(&["suspend", "cluster"]);
    let note = said
        .lines()
        .find(|l| l.starts_with("note: "))
        .unwrap_or_else(|| panic!("no note: {said}"));
    for words in [
        "4 objects under cluster keep a policy of their own",
        "group/ams-a (repairs up to reinstall allowed)",
        "group/ams-b (repairs up to failover allowed)",
        "instance/log-b1.ams.example (repairs up to migrate allowed)",
        "suspend them too",
    ] {
        assert!(note.contains(words), "{words:?} missing: {note}");
    }
    // Suspending those stops them: the next suspend of the cluster names one fewer.
    stdout_of(&["suspend", "group/ams-a"]);
    let said = stdout_of(&["suspend", "cluster"]);
    assert!(said.contains("3 objects under cluster"), "{said}");
    assert!(!said.contains("group/ams-a"), "{said}");
    let said = stdout_of(&["suspend", "log-b1.ams.example"]);
    assert!(!said.contains("note:"), "{said}");
}

/// The fleet-wide stop: `suspend --all cluster` holds every instance, also those whose own
/// policy a plain suspend leaves repairing (the nearest policy wins), and `resume --all
/// cluster` gives back exactly the fleet it found; a plain `resume` does not lift it.
#[test]
fn suspend_all_stops_every_repair_and_resume_all_undoes_exactly_that() {
    let dir = tempfile::tempdir().unwrap();
    let path = demo_copy(dir.path());
    let before = load(&path);
    let run = |args: &[&str]| {
        let out = bin()
            .args(args)
            .args(["--now", "1800000000", "--cluster"])
            .arg(&path)
            .assert();
        let out = out.get_output();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let submits = |stdout: &String| stdout.lines().filter(|l| l.contains(": submit ")).count();
    let (_, dry, _) = run(&["run", "--dry-run"]);
    assert!(submits(&dry) > 0, "the demo has repairs to start: {dry}");
    // A plain suspend of the cluster leaves the instances and groups with their own policy.
    let (code, said, _) = run(&["suspend", "cluster"]);
    assert_eq!(code, Some(0));
    assert!(said.contains("keep a policy of their own"), "{said}");
    let (_, dry, _) = run(&["run", "--dry-run"]);
    assert!(submits(&dry) > 0, "{dry}");
    run(&["resume", "cluster"]);

    let (code, said, err) = run(&["suspend", "--all", "cluster"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        said.contains("add ganeti:watcher:autorepair:suspend-all") && !said.contains("note:"),
        "{said}"
    );
    let (_, dry, _) = run(&["run", "--dry-run"]);
    assert_eq!(submits(&dry), 0, "{dry}");
    let (_, why, _) = run(&["explain", "db-a1.ams.example"]);
    assert!(why.contains("by `suspend --all`"), "{why}");
    let (code, _, err) = run(&["resume", "cluster"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("`resume --all cluster`"), "{err}");

    let (code, _, err) = run(&["resume", "--all", "cluster"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        load(&path),
        before,
        "resume --all gives back the fleet it found"
    );
}

/// `explain` takes a target as every other verb and the logs name it (`KIND/NAME`), and a bare
/// name as before, in every family.
#[test]
fn explain_takes_the_object_syntax_of_every_verb() {
    let f = |name: &str| format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let (demo, objects, machines) = (
        f("demo.json"),
        f("metal3-demo.json"),
        f("machines-demo.json"),
    );
    let (nodes, repair, constraints) = (
        f("machines-demo-nodes.json"),
        f("machines-demo.yml"),
        f("machines-constraints.json"),
    );
    let ganeti = vec!["--cluster", demo.as_str()];
    let metal3 = vec!["--kube-objects", objects.as_str()];
    let sabakan = vec![
        "--sabakan-file",
        machines.as_str(),
        "--nodes",
        nodes.as_str(),
        "--repair-config",
        repair.as_str(),
        "--constraints",
        constraints.as_str(),
    ];
    let cases = [
        (&ganeti, "db-a1.ams.example", "instance/db-a1.ams.example"),
        (
            &metal3,
            "prod/workers-7d9f-c3",
            "machine/prod/workers-7d9f-c3",
        ),
        (&sabakan, "rack0-cs2", "machine/rack0-cs2"),
    ];
    for (flags, bare, object) in cases {
        let mut texts = Vec::new();
        for name in [bare, object] {
            let out = bin()
                .args(["--config", "/dev/null"])
                .args(flags.iter())
                .args(["explain", name, "--now", "1800000000"])
                .assert()
                .success();
            texts.push(String::from_utf8_lossy(&out.get_output().stdout).into_owned());
        }
        assert_eq!(texts[0], texts[1], "{object}");
    }
}

/// A short `simulate` of the Ganeti demo: 4 scenarios of 10 passes and 5 quiet ones, one
/// watcher.
const SIMULATE: [&str; 14] = [
    "simulate",
    "--cluster",
    "fixtures/demo.json",
    "--scenarios",
    "4",
    "--passes",
    "10",
    "--quiet-passes",
    "5",
    "--replicas",
    "1",
    "--seed",
    "7",
    "--now",
];

/// `simulate`'s progress is one line on standard error, rewritten in place, when that is a
/// terminal; in a pipe (cron's mail, a CI log) there is none, and standard output carries the
/// summary alone either way.
#[test]
fn simulate_shows_its_progress_on_a_terminal_only() {
    let piped = bin()
        .args(["--config", "/dev/null"])
        .args(SIMULATE)
        .arg(NOW)
        .assert()
        .success();
    let summary = String::from_utf8_lossy(&piped.get_output().stdout).into_owned();
    assert!(
        summary.starts_with("4 scenario(s), 60 passes: "),
        "{summary}"
    );
    assert_eq!(stderr_of(&piped), "");
    // On a terminal (util-linux `script` gives the command one), standard output to a file.
    let dir = tempfile::tempdir().unwrap();
    let stdout = dir.path().join("stdout");
    let line = format!(
        "'{}' --config /dev/null {} {NOW} >'{}'",
        bin_path().display(),
        SIMULATE.join(" "),
        stdout.display()
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let terminal = String::from_utf8_lossy(&out.stdout);
    // A scenario at a time (a slice of a hundredth of them, at least one), each over the last;
    // the last ends the line (the terminal shows `\n` as `\r\n`).
    let shown: Vec<&str> = terminal.split("\r\x1b[2K").skip(1).collect();
    assert_eq!(
        shown,
        [
            "simulate: 1 of 4 scenarios, 15 passes",
            "simulate: 2 of 4 scenarios, 30 passes",
            "simulate: 3 of 4 scenarios, 45 passes",
            "simulate: 4 of 4 scenarios, 60 passes\r\n",
        ],
        "{terminal:?}"
    );
    assert_eq!(std::fs::read_to_string(&stdout).unwrap(), summary);
}

/// `simulate`'s summary says that a mass-failure limit halted most passes when half of them or
/// more were (few repairs then, and why), and says nothing of it otherwise. The demo has four
/// nodes down from its first pass: a cluster limit of one halts every pass; limits no fleet of
/// twelve nodes reaches halt none.
#[test]
fn simulate_says_when_a_limit_halted_most_passes() {
    let dir = tempfile::tempdir().unwrap();
    let note = "note: 100% of the passes were halted by a mass-failure limit of [limits]: while \
        one holds, no repair starts, so these scenarios show few repairs. `status` on the fleet \
        names the limit and its counts; raise it in the config to see what repairs would do\n";
    for (limits, halted, noted) in [
        ("max_down_nodes = 1", ", 60 halted passes", true),
        (
            "max_down_nodes = 1000\nmax_down_nodes_per_group = 1000",
            ", 0 halted passes",
            false,
        ),
    ] {
        let config = dir.path().join("limits.toml");
        std::fs::write(&config, format!("[limits]\n{limits}\n")).unwrap();
        let out = bin()
            .arg("--config")
            .arg(&config)
            .args(SIMULATE)
            .arg(NOW)
            .assert()
            .success();
        let summary = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        let first = summary.lines().next().unwrap_or_default();
        assert!(first.ends_with(halted), "{limits}: {summary}");
        assert_eq!(summary.contains(note), noted, "{limits}: {summary}");
        assert_eq!(
            summary.contains("were halted"),
            noted,
            "{limits}: {summary}"
        );
    }
}
