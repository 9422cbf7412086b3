//! Numbers and flags, through the binary: no number crashes it (every duration and
//! time goes through one parser with bounds), a loop always waits and makes a pass, the write
//! budget holds, read-only verbs take no lock, and a standard output that fails stops the
//! printing only.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_autorepair");
/// After every timestamp in the demo fleets but the far-future suspend (as tests/it/common/bin.rs).
const NOW: &str = "1795000000";
/// 9999-12-31T23:59:59Z, the last time the tool prints as a date.
const LAST: i64 = 253_402_300_799;

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

    /// The flags that name each family's demo fleet.
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

    /// Holds the lock a pass over `fleet` (a file here) takes, until dropped.
    fn hold_lock(&self, fleet: &str) -> std::fs::File {
        let mut name = std::fs::canonicalize(self.path(fleet))
            .unwrap()
            .into_os_string();
        name.push(".lock");
        let file = std::fs::File::create(PathBuf::from(name)).unwrap();
        // Blocking, not try_lock: the lock of the previous case, dropped, can live on for a
        // moment in a child another test thread forked (it holds every open file until its
        // exec closes them), and try_lock then failed with WouldBlock. Only this test locks
        // this file, so the wait ends.
        file.lock().unwrap();
        file
    }
}

/// The binary with `args`, its standard output to `stdout`, no config, log filter or colour
/// wish from the environment.
fn autorepair<S: AsRef<str>>(args: &[S], stdout: Stdio) -> Output {
    Command::new(BIN)
        .args(args.iter().map(AsRef::as_ref))
        .env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn run<S: AsRef<str>>(args: &[S]) -> Output {
    autorepair(args, Stdio::piped())
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

/// A usage error (exit 2, never a panic's 101) whose message says every one of `says`.
fn assert_refused(o: &Output, says: &[&str], what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    for s in says {
        assert!(err.contains(s), "{what}: {s:?} not in {err}");
    }
}

#[test]
fn every_duration_flag_takes_at_most_100_years_even_with_the_lock_held() {
    let fleets = Fleets::new();
    // --wait must not overflow the lock's deadline while another run holds the lock.
    let _held = fleets.hold_lock("demo.json");
    let fleet = fleets.ganeti().join(" ");
    let cases: [(&str, String); 6] = [
        ("--wait", format!("--wait=V run {fleet} --now {NOW}")),
        (
            "--for",
            format!("suspend cluster --for V {fleet} --now {NOW}"),
        ),
        (
            "--timeout",
            format!("suspend cluster --timeout V {fleet} --now {NOW}"),
        ),
        (
            "--interval",
            format!("run --loop --interval V {fleet} --now {NOW}"),
        ),
        (
            "--interval",
            "sabakan update --write F --loop --interval V".into(),
        ),
        (
            "--apply-timeout",
            "sabakan update --write F --apply-timeout V".into(),
        ),
    ];
    for (flag, line) in &cases {
        for too_long in [
            "18446744073709551615",
            "9223372036854775807s",
            "292277024626y",
            "101y",
        ] {
            let args: Vec<String> = words(line)
                .into_iter()
                .map(|w| match w.as_str() {
                    "V" => too_long.to_owned(),
                    "--wait=V" => format!("--wait={too_long}"),
                    "F" => fleets.path("cluster.yml"),
                    _ => w,
                })
                .collect();
            let o = run(&args);
            assert_refused(&o, &[flag, "longer than 100 years"], &args.join(" "));
        }
    }
}

#[test]
fn every_duration_in_the_config_takes_at_most_100_years() {
    let fleets = Fleets::new();
    let keys = [
        ("limits", "result_retention"),
        ("limits", "retry_interval"),
        ("limits", "max_repair_age"),
        ("limits", "retry_backoff"),
        ("limits", "min_healthy"),
        ("limits", "storm_cooldown"),
        ("rapi", "timeout"),
        ("machines", "timeout"),
        ("metal3", "node_unhealthy_after"),
        ("metal3", "power_off_timeout"),
        ("metal3", "cycle_timeout"),
        ("metal3", "reboot_loop_window"),
        ("metal3", "drain_timeout"),
    ];
    let config = fleets.path("autorepair.toml");
    for (section, key) in keys {
        // result_retention wrapped this way and pruned every result as too old.
        std::fs::write(
            &config,
            format!("[{section}]\n{key} = \"18446744073709551615s\"\n"),
        )
        .unwrap();
        let mut args = vec!["--config".to_owned(), config.clone(), "run".into()];
        args.extend(fleets.ganeti());
        args.extend(["--now".into(), NOW.into()]);
        let o = run(&args);
        let key = format!("{section}.{key}");
        assert_refused(&o, &[&key, "longer than 100 years"], &key);
    }
}

/// A duration that means nothing below a second is refused there: a suspend for no time, a
/// request timeout of 0 (each request would fail at once), a power-off or cycle timeout of 0.
#[test]
fn a_duration_that_means_nothing_at_zero_is_refused() {
    let fleets = Fleets::new();
    let config = fleets.path("autorepair.toml");
    for (section, key) in [
        ("limits", "storm_cooldown"),
        ("rapi", "timeout"),
        ("machines", "timeout"),
        ("metal3", "power_off_timeout"),
        ("metal3", "cycle_timeout"),
    ] {
        for zero in ["0s", "0", "500ms"] {
            std::fs::write(&config, format!("[{section}]\n{key} = \"{zero}\"\n")).unwrap();
            let mut args = vec!["--config".to_owned(), config.clone(), "status".into()];
            args.extend(fleets.ganeti());
            let o = run(&args);
            let key = format!("{section}.{key}");
            assert_refused(&o, &[&key, "1s or more"], &key);
        }
    }
    let before = std::fs::read(fleets.path("demo.json")).unwrap();
    for zero in ["0", "0s", "999ms"] {
        let mut args = words("suspend cluster --for");
        args.push(zero.into());
        args.extend(fleets.ganeti());
        let o = run(&args);
        assert_refused(&o, &["--for", "1s or more"], zero);
        let after = std::fs::read(fleets.path("demo.json")).unwrap();
        assert!(after == before, "--for {zero}: the fleet was written");
    }
}

#[test]
fn a_time_is_taken_up_to_the_last_one_the_tool_prints() {
    let fleets = Fleets::new();
    let status = |now: &str| {
        let mut args = vec![
            "status".to_owned(),
            "--json".into(),
            "--now".into(),
            now.into(),
        ];
        args.extend(fleets.ganeti());
        run(&args)
    };
    let epoch = status(&LAST.to_string());
    assert!(epoch.status.success(), "{}", stderr(&epoch));
    for rfc3339 in [
        "9999-12-31T23:59:59Z",
        "9999-12-31T23:59:59+00:00",
        "9999-12-31T22:59:59-01:00",
    ] {
        let o = status(rfc3339);
        assert!(o.status.success(), "{rfc3339}: {}", stderr(&o));
        assert_eq!(o.stdout, epoch.stdout, "{rfc3339}");
    }
    for outside in [
        "10000-01-01T00:00:00Z",
        "253402300800",
        "1969-12-31T23:59:59Z",
    ] {
        let o = status(outside);
        assert_refused(&o, &["--now", "9999-12-31T23:59:59Z"], outside);
    }
    let mut suspend = words("suspend cluster --until 9999-12-31T23:59:59Z --timeout 0 --now");
    suspend.push(NOW.into());
    suspend.extend(fleets.ganeti());
    let o = run(&suspend);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("9999-12-31T23:59:59Z"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn simulate_takes_a_clock_only_when_its_passes_end_within_the_dates() {
    let fleets = Fleets::new();
    // 10 passes and 10 quiet ones, 5 minutes apart, the last ending by 9999-12-30T22:00:00Z
    // (jiff's last timestamp, which the machines world reads its dates into).
    let latest = 253_402_207_200 - 20 * 300;
    let cases: [(Vec<String>, i64, bool); 6] = [
        (fleets.machines(), LAST, false),
        (fleets.machines(), latest + 1, false),
        (fleets.machines(), latest, true),
        (fleets.metal3(), LAST - 799, false),
        (fleets.metal3(), latest, true),
        (fleets.ganeti(), LAST, false),
    ];
    for (fleet, now, fits) in cases {
        let mut args = words("simulate --passes 10 --quiet-passes 10 --now");
        args.push(now.to_string());
        args.extend(fleet);
        let o = run(&args);
        if fits {
            assert!(o.status.success(), "{}: {}", args.join(" "), stderr(&o));
        } else {
            let says = ["--now", "9999-12-30T22:00:00Z", "9999-12-30T20:20:00Z"];
            assert_refused(&o, &says, &args.join(" "));
        }
    }
}

#[test]
fn a_loop_waits_at_least_a_second_and_makes_at_least_one_pass() {
    let fleets = Fleets::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sabakan");
    let cluster = fleets.path("cluster.yml");
    let sabakan = |more: &str| {
        let mut args = words("sabakan update --write");
        args.push(cluster.clone());
        for (flag, file) in [
            ("--template", "template.yml"),
            ("--machines", "machines.json"),
            ("--constraints", "constraints.json"),
        ] {
            args.push(flag.into());
            args.push(fixtures.join(file).display().to_string());
        }
        args.extend(words(more));
        args.extend(["--now".into(), NOW.into()]);
        args
    };
    let run_loop = |interval: &str| {
        let mut args = words("run --loop --passes 3 --interval");
        args.push(interval.into());
        args.extend(fleets.ganeti());
        args.extend(["--now".into(), NOW.into()]);
        args
    };
    let cases: [(Vec<String>, &[&str]); 6] = [
        (run_loop("0"), &["--interval", "1s"]),
        (run_loop("0s"), &["--interval", "1s"]),
        (run_loop("999ms"), &["--interval", "1s"]),
        (sabakan("--loop --interval 0"), &["--interval", "1s"]),
        (sabakan("--loop --passes 0"), &["--passes", "0"]),
        (sabakan("--loop --passes 0 --interval 1s"), &["--passes"]),
    ];
    for (args, says) in &cases {
        let o = run(args);
        assert_refused(&o, says, &args.join(" "));
        assert!(
            !Path::new(&cluster).exists(),
            "{}: a pass was made",
            args.join(" ")
        );
    }
}

#[test]
fn a_pass_makes_at_most_max_writes_per_pass() {
    let fleets = Fleets::new();
    let config = fleets.path("autorepair.toml");
    // The demo fleet has no repair under way: its first pass starts repairs of 5 writes, and
    // makes 18 writes in all when nothing holds it back.
    for (max, writes) in [(0, 0), (1, 0), (2, 0), (4, 0), (5, 5), (500, 18)] {
        std::fs::write(&config, format!("[limits]\nmax_writes_per_pass = {max}\n")).unwrap();
        let mut args = vec!["--config".to_owned(), config.clone()];
        args.extend(words("run --dry-run --json --now"));
        args.push(NOW.into());
        args.extend(fleets.ganeti());
        let o = run(&args);
        assert!(o.status.success(), "{max}: {}", stderr(&o));
        let plan: serde_json::Value =
            serde_json::from_slice(o.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
        assert_eq!(
            plan["fleet"]["writes"], writes,
            "max_writes_per_pass = {max}"
        );
    }
}

#[test]
fn read_only_verbs_take_no_lock() {
    let fleets = Fleets::new();
    let report = fleets.path("report.html");
    let now = ["--now".to_owned(), NOW.to_owned()];
    let cases: Vec<(&str, Vec<String>, Vec<String>)> = vec![
        ("demo.json", fleets.ganeti(), words("status")),
        (
            "demo.json",
            fleets.ganeti(),
            words("explain db-a1.ams.example"),
        ),
        ("demo.json", fleets.ganeti(), words("tags lint")),
        (
            "demo.json",
            fleets.ganeti(),
            [words("report --html"), vec![report.clone()]].concat(),
        ),
        ("demo.json", fleets.ganeti(), words("run --dry-run")),
        ("machines-demo.json", fleets.machines(), words("status")),
        (
            "machines-demo.json",
            fleets.machines(),
            words("repair list"),
        ),
        (
            "machines-demo.json",
            fleets.machines(),
            words("repair list -o name"),
        ),
        ("metal3-demo.json", fleets.metal3(), words("status")),
    ];
    for (file, fleet, verb) in cases {
        let _held = fleets.hold_lock(file);
        let takes_clock = verb[0] != "repair";
        let args = [
            verb.clone(),
            fleet,
            if takes_clock { now.to_vec() } else { vec![] },
        ]
        .concat();
        let o = run(&args);
        // tags lint finds the demo's planted problems: exit 1.
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{}: {:?} {}",
            args.join(" "),
            o.status,
            stderr(&o)
        );
        assert!(
            !stderr(&o).contains("holds the lock"),
            "{}: {}",
            args.join(" "),
            stderr(&o)
        );
    }
}

/// The fleet file with its repair ids (random per pass) masked.
fn masked_fleet(path: &str) -> String {
    let text = std::fs::read(path).unwrap();
    let is_id = |s: &[u8]| {
        s.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
    };
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text.len() - i >= 36 && is_id(&text[i..i + 36]) {
            out.extend_from_slice(b"ID");
            i += 36;
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// A pipe whose reader is gone: every write to it fails (EPIPE).
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer.into()
}

#[test]
fn a_failed_standard_output_stops_the_printing_only() {
    let full = || {
        Stdio::from(
            std::fs::File::options()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
    };
    // (what, the command, the standard output that fails, whether stderr names it)
    type Case = (&'static str, &'static str, fn() -> Stdio, bool);
    let cases: Vec<Case> = vec![
        ("tags lint | head -1", "tags lint", closed_pipe, false),
        (
            "run --passes 5 | head -1",
            "run --passes 5",
            closed_pipe,
            false,
        ),
        ("run > /dev/full", "run", full, true),
        ("tags lint > /dev/full", "tags lint", full, true),
    ];
    for (what, command, failing, named) in cases {
        let (read, failed) = (Fleets::new(), Fleets::new());
        let args = |fleets: &Fleets| {
            let mut args = words(command);
            args.extend(["--now".into(), NOW.into()]);
            args.extend(fleets.ganeti());
            args
        };
        let whole = autorepair(&args(&read), Stdio::null());
        let cut = autorepair(&args(&failed), failing());
        assert_eq!(
            cut.status.code(),
            whole.status.code(),
            "{what}: {}",
            stderr(&cut)
        );
        assert_eq!(
            masked_fleet(&failed.path("demo.json")),
            masked_fleet(&read.path("demo.json")),
            "{what}: the work differs"
        );
        let err = stderr(&cut);
        assert_eq!(err.contains("standard output"), named, "{what}: {err}");
        if named {
            assert!(err.contains("No space left on device"), "{what}: {err}");
        }
    }
}
