//! Shell completions for bash, zsh and fish in `contrib/completions/`: clap_complete's scripts,
//! generated from the clap definitions so that they cannot drift from `--help`, each with the
//! hook that completes object names by asking `autorepair __complete-objects`
//! (`autorepair::face::complete::script`). The test builds each in memory and fails when it
//! differs from the committed file; regenerate them, with the man page, by
//! `AUTOREPAIR_REGEN_MAN=1 cargo test --test it -- man:: completions::`.

use autorepair::face::complete::{self, BUDGET, VERB};
use clap_complete::{Generator, Shell};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const REGEN_VAR: &str = "AUTOREPAIR_REGEN_MAN";
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The shell's script as `contrib/completions/` ships it.
fn script(shell: Shell) -> String {
    let mut cmd = autorepair::cli::command(autorepair::FAMILIES);
    let mut text = Vec::new();
    clap_complete::generate(shell, &mut cmd, "autorepair", &mut text);
    let hooked = match shell {
        Shell::Bash => complete::Shell::Bash,
        Shell::Zsh => complete::Shell::Zsh,
        Shell::Fish => complete::Shell::Fish,
        other => panic!("no completion script for {other}"),
    };
    complete::script(hooked, &String::from_utf8(text).unwrap())
}

fn committed(shell: Shell) -> PathBuf {
    Path::new(ROOT)
        .join("contrib/completions")
        .join(shell.file_name("autorepair"))
}

#[test]
fn completions_match_the_command_line() {
    let mut stale = Vec::new();
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let path = committed(shell);
        let text = script(shell);
        // Each file completes what the first level of the command line offers, and object
        // names through the hidden verb.
        for word in [
            "run",
            "status",
            "explain",
            "suspend",
            "--cluster",
            "--dry-run",
            VERB,
        ] {
            assert!(text.contains(word), "{shell}: {word} missing");
        }
        if std::env::var_os(REGEN_VAR).is_some() {
            // Replaced whole: the tests that drive the scripts may be reading them meanwhile.
            let mut fresh = path.clone().into_os_string();
            fresh.push(".new");
            std::fs::write(&fresh, &text).unwrap();
            std::fs::rename(&fresh, &path).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "{} out of date: run `{REGEN_VAR}=1 cargo test --test it -- man:: completions::`",
        stale.join(", ")
    );
}

/// The directory of the binary under test, for the PATH the shells find `autorepair` on.
fn bin_dir() -> PathBuf {
    assert_cmd::cargo::cargo_bin("autorepair")
        .parent()
        .unwrap()
        .to_owned()
}

/// What bash offers for `line` (the cursor at its end; a trailing space starts a new word),
/// through the function the committed script registers for `autorepair`, as a person's TAB
/// reaches it, with the binary under test on the PATH.
fn bash_completes(line: &str) -> Vec<String> {
    bash_completes_via(line, false)
}

/// As [`bash_completes`], with `autorepair` an alias of the binary under test (the README's
/// `alias autorepair=…`) instead of on the PATH, when `alias` is true.
fn bash_completes_via(line: &str, alias: bool) -> Vec<String> {
    let script = committed(Shell::Bash);
    // bash's words: split at blanks, and at `:` and `=` (its COMP_WORDBREAKS), each its own.
    let mut words: Vec<&str> = Vec::new();
    for blank_separated in line.split(' ') {
        let mut rest = blank_separated;
        while let Some(at) = rest.find([':', '=']) {
            words.extend(
                [&rest[..at], &rest[at..=at]]
                    .into_iter()
                    .filter(|w| !w.is_empty()),
            );
            rest = &rest[at + 1..];
        }
        if !rest.is_empty() || words.last().is_none_or(|w| !matches!(*w, ":" | "=")) {
            words.push(rest);
        }
    }
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let prev = if cword > 0 { words[cword - 1] } else { "" };
    let alias_line = if alias {
        format!(
            "alias autorepair='{}'; ",
            assert_cmd::cargo::cargo_bin("autorepair").display()
        )
    } else {
        String::new()
    };
    let probe = format!(
        "{alias_line}source {script}; f=$(complete -p autorepair | sed 's/.*-F \\([^ ]*\\).*/\\1/'); \
         COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}; \
         \"$f\" autorepair '{cur}' '{prev}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script = script.display(),
        words = quoted.join(" "),
        cur = words[cword],
    );
    let path = if alias {
        std::env::var("PATH").unwrap_or_default()
    } else {
        format!(
            "{}:{}",
            bin_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        )
    };
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &probe])
        .env("PATH", path)
        .env("AUTOREPAIR_RAPI_PASSWORD", "secret")
        .current_dir(ROOT)
        .output()
        .unwrap();
    assert!(out.status.success(), "{line}: {out:?}");
    assert!(out.stderr.is_empty(), "{line}: bash said {out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// The demo fleets' flags, one family each.
const GANETI: &str = "--cluster fixtures/demo.json";
const METAL3: &str = "--config /dev/null --kube-objects fixtures/metal3-demo.json";
const MACHINES: &str = "--config /dev/null --sabakan-file fixtures/machines-demo.json \
     --repair-config fixtures/machines-demo.yml --nodes fixtures/machines-demo-nodes.json";

/// Verbs, levels and (from a fleet file) object names, each of every family, as bash completes
/// them: object names in the syntax the verbs read back, filtered by what is typed.
#[test]
fn bash_completes_verbs_levels_and_object_names() {
    let web_a =
        "instance/web-a1.ams.example instance/web-a3.ams.example instance/web-a4.ams.example";
    let cases: &[(String, &str)] = &[
        ("autorepair ru".into(), "run"),
        ("autorepair allow fail".into(), "failover"),
        ("autorepair request power".into(), "power-cycle"),
        // Ganeti: scopes and targets for the verbs that take both, targets alone for the
        // others; the family flag before or after the verb; a bare short name as gnt-* takes it.
        (
            format!("autorepair {GANETI} suspend gr"),
            "group/ams-a group/ams-b group/ams-c",
        ),
        (
            format!("autorepair resume {GANETI} group/ams-c"),
            "group/ams-c",
        ),
        (format!("autorepair {GANETI} allow failover c"), "cluster"),
        (format!("autorepair {GANETI} explain instance/web-a"), web_a),
        (format!("autorepair {GANETI} clear gr"), ""),
        (
            format!("autorepair {GANETI} request reinstall instance/web-a"),
            web_a,
        ),
        (
            format!("autorepair status {GANETI} group/ams-b web-a"),
            "web-a1.ams.example web-a3.ams.example web-a4.ams.example",
        ),
        // metal3: every Cluster API scope kind, namespaced.
        (
            format!("autorepair {METAL3} suspend machine"),
            "machine/prod/edge-cp-x2k4 machine/prod/workers-7d9f-a1 machine/prod/workers-7d9f-b2 \
             machine/prod/workers-7d9f-c3 machine/prod/workers-7d9f-d4 machinedeployment/prod/workers \
             machineset/prod/workers-7d9f",
        ),
        (
            format!("autorepair {METAL3} explain machine/prod/w"),
            "machine/prod/workers-7d9f-a1 machine/prod/workers-7d9f-b2 \
             machine/prod/workers-7d9f-c3 machine/prod/workers-7d9f-d4",
        ),
        // Levels: the fleet's family's, once its family is known (every family's before).
        (
            format!("autorepair {GANETI} allow "),
            "fix-storage migrate failover reinstall none",
        ),
        (format!("autorepair {METAL3} request p"), "power-cycle"),
        (
            format!("autorepair {MACHINES} request step-"),
            "step-1 step-2 step-3 step-4 step-5 step-6 step-7 step-8",
        ),
        // machines: serials and racks.
        (format!("autorepair {MACHINES} suspend r"), "rack/0 rack/1"),
        (
            format!("autorepair {MACHINES} clear machine/boot"),
            "machine/boot-0 machine/boot-1",
        ),
    ];
    for (line, want) in cases {
        assert_eq!(bash_completes(line).join(" "), *want, "{line}");
    }
}

/// Through the README's alias (the binary not on the PATH), object names and levels complete
/// as they do by name; a fleet file's lock is not offered as a fleet, only where a lock file
/// is asked for.
#[test]
fn bash_completes_through_an_alias_and_leaves_out_the_lock() {
    assert_eq!(
        bash_completes_via(
            "autorepair --cluster fixtures/demo.json suspend group/ams-c",
            true
        ),
        ["group/ams-c"]
    );
    assert_eq!(
        bash_completes_via("autorepair --cluster fixtures/demo.json allow mig", true),
        ["migrate"]
    );
    let dir = tempfile::tempdir().unwrap();
    for name in ["demo.json", "demo.json.lock", "other.lock"] {
        std::fs::write(dir.path().join(name), "").unwrap();
    }
    let d = dir.path().display();
    for (line, want) in [
        (
            format!("autorepair status --cluster {d}/"),
            vec![format!("{d}/demo.json"), format!("{d}/other.lock")],
        ),
        (
            format!("autorepair run --lock-file {d}/demo"),
            vec![format!("{d}/demo.json"), format!("{d}/demo.json.lock")],
        ),
        (
            format!("autorepair status --cluster={d}/demo"),
            vec![format!("{d}/demo.json")],
        ),
        (
            format!("autorepair run --lock-file={d}/demo"),
            vec![format!("{d}/demo.json"), format!("{d}/demo.json.lock")],
        ),
    ] {
        let mut got = bash_completes(&line);
        got.sort();
        assert_eq!(got, want, "{line}");
    }
}

/// A live Ganeti cluster over RAPI completes as its fleet file does, though bash splits the
/// URL's port off into words of its own; completion only reads (GET).
#[test]
fn bash_completes_object_names_of_a_cluster_over_rapi() {
    use crate::common::fake_rapi::{FakeRapi, cluster};
    let rapi = FakeRapi::start(Box::new(|seen| {
        let this = seen.last().unwrap();
        match cluster(&this.path) {
            Some(body) if this.method == "GET" => (200, body.to_string()),
            _ => (404, "{}".into()),
        }
    }));
    let flags = format!(
        "--config /dev/null --rapi {} --rapi-user u --rapi-ca {}",
        rapi.url(),
        testsupport::CA_FILE
    );
    assert!(rapi.url().contains(':'), "{}", rapi.url());
    for (line, want) in [
        (format!("autorepair {flags} suspend gr"), "group/default"),
        (
            format!("autorepair suspend {flags} "),
            "cluster group/default instance/a instance/b",
        ),
        (
            format!("autorepair explain {flags} "),
            "instance/a instance/b",
        ),
    ] {
        assert_eq!(bash_completes(&line).join(" "), want, "{line}");
    }
    let seen = rapi.seen();
    assert!(!seen.is_empty());
    assert!(seen.iter().all(|s| s.method == "GET"), "{seen:?}");
}

/// The hidden verb run as the scripts run it: what it prints, what it says on stderr, its exit
/// status, and how long it took.
fn complete_objects(args: &[&str]) -> (String, String, bool, Duration) {
    let started = Instant::now();
    let out = Command::new(assert_cmd::cargo::cargo_bin("autorepair"))
        .arg(VERB)
        .arg("--")
        .args(args)
        .current_dir(ROOT)
        .env("AUTOREPAIR_RAPI_PASSWORD", "secret")
        .env_remove("AUTOREPAIR_CONFIG")
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.success(),
        started.elapsed(),
    )
}

/// Completion never gets in the way: a fleet that cannot be read (missing, broken, another
/// family's, a live one that never answers) completes nothing, says nothing and returns within
/// the budget; so does a line that is not at an object.
#[test]
fn a_fleet_that_cannot_be_read_completes_nothing_and_says_nothing_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"instances\": [").unwrap();
    let broken = broken.to_str().unwrap();
    // Accepts connections (the kernel does) and never answers them.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent = format!("https://{}", silent.local_addr().unwrap());
    let sabakan_silent = silent.replacen("https", "http", 1);
    let cases: &[&[&str]] = &[
        &["--cluster", "fixtures/nope.json", "suspend", ""],
        &["--cluster", broken, "explain", ""],
        &[
            "--config",
            "fixtures/nope.toml",
            "--cluster",
            "fixtures/demo.json",
            "suspend",
            "",
        ],
        // The machines family needs its procedures to make a fleet at all: not given, none.
        &[
            "--config",
            "/dev/null",
            "--sabakan-file",
            "fixtures/machines-demo.json",
            "clear",
            "",
        ],
        &[
            "--cluster",
            "fixtures/demo.json",
            "--kube-objects",
            "fixtures/metal3-demo.json",
            "suspend",
            "",
        ],
        // A RAPI server that never answers: cut off by the budget (and no word of the missing
        // --rapi-ca it would warn about).
        &[
            "--config",
            "/dev/null",
            "--rapi",
            &silent,
            "--rapi-user",
            "u",
            "suspend",
            "",
        ],
        &[
            "--config",
            "/dev/null",
            "--sabakan",
            &sabakan_silent,
            "--repair-config",
            "fixtures/machines-demo.yml",
            "--nodes",
            "fixtures/machines-demo-nodes.json",
            "clear",
            "",
        ],
        // Neither an object nor a level: a verb, a flag's value, a help request.
        &["--cluster", "fixtures/demo.json", "sus"],
        &["--cluster", "fixtures/demo.json", "suspend", "--for", ""],
        &["--cluster", "fixtures/demo.json", "--help", "suspend", ""],
        &[],
    ];
    for args in cases {
        let (out, err, ok, took) = complete_objects(args);
        assert!(ok, "{args:?}: failed");
        assert_eq!((out.as_str(), err.as_str()), ("", ""), "{args:?}");
        assert!(
            took < BUDGET + Duration::from_secs(1),
            "{args:?}: took {took:?}"
        );
    }
    // The same command lines with a readable fleet do complete: the cases above fail for the
    // reason given, not for one they share.
    let (out, err, ..) = complete_objects(&["--cluster", "fixtures/demo.json", "suspend", "gr"]);
    assert_eq!(
        (out.as_str(), err.as_str()),
        ("group/ams-a\ngroup/ams-b\ngroup/ams-c\n", "")
    );
}

/// Completion reads: the fleet file, its lock's place and the directory are as they were.
#[test]
fn completion_writes_nothing_and_takes_no_lock() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet.json");
    std::fs::copy(Path::new(ROOT).join("fixtures/demo.json"), &fleet).unwrap();
    let before = std::fs::read(&fleet).unwrap();
    let (out, ..) = complete_objects(&["--cluster", fleet.to_str().unwrap(), "suspend", "cl"]);
    assert_eq!(out, "cluster\n");
    assert_eq!(std::fs::read(&fleet).unwrap(), before);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["fleet.json"]);
}

/// zsh and fish call the hidden verb from their scripts: each script is valid, and each shell
/// completes object names through it.
#[test]
#[cfg_attr(
    not(have_shells),
    ignore = "needs zsh and fish: apt-get install zsh fish"
)]
fn zsh_and_fish_scripts_complete_object_names() {
    let zsh = std::fs::read_to_string(committed(Shell::Zsh)).unwrap();
    assert!(zsh.contains("compdef _autorepair_objects autorepair"));
    assert!(!zsh.contains("compdef _autorepair autorepair"));
    let fish = std::fs::read_to_string(committed(Shell::Fish)).unwrap();
    assert!(fish.contains("-a \"(__fish_autorepair_objects)\""));
    {
        let out = Command::new("zsh")
            .arg("-n")
            .arg(committed(Shell::Zsh))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let got = zsh_completes(&[
            "autorepair --cluster fixtures/demo.json suspend cl",
            "autorepair --cluster fixtures/demo.json explain web-a1",
            "autorepair --cluster fixtures/demo.json sus",
            "autorepair --cluster fixtures/demo.json allow fail",
        ]);
        assert_eq!(
            got,
            [
                "autorepair --cluster fixtures/demo.json suspend cluster ",
                "autorepair --cluster fixtures/demo.json explain web-a1.ams.example ",
                "autorepair --cluster fixtures/demo.json suspend ",
                "autorepair --cluster fixtures/demo.json allow failover ",
            ]
        );
    }
    {
        let path = format!(
            "{}:{}",
            bin_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let probe = format!(
            "source {}; complete -C 'autorepair --cluster fixtures/demo.json suspend gr'",
            committed(Shell::Fish).display()
        );
        let out = Command::new("fish")
            .args(["--no-config", "-c", &probe])
            .env("PATH", path)
            .current_dir(ROOT)
            .output()
            .unwrap();
        let got = String::from_utf8_lossy(&out.stdout);
        let names: Vec<&str> = got.lines().map(|l| l.split('\t').next().unwrap()).collect();
        assert_eq!(
            names,
            ["group/ams-a", "group/ams-b", "group/ams-c"],
            "{out:?}"
        );
    }
}

/// zsh and fish, as bash: a fleet file's lock (FILE.lock beside FILE) is left out of every
/// file argument but the lock file's, so that TAB completes the fleet file at once.
#[test]
#[cfg_attr(
    not(have_shells),
    ignore = "needs zsh and fish: apt-get install zsh fish"
)]
fn zsh_and_fish_leave_out_the_lock_but_for_the_lock_file() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["fleet.json", "fleet.json.lock"] {
        std::fs::write(dir.path().join(name), "").unwrap();
    }
    let d = dir.path().display();
    let got = zsh_completes(&[
        &format!("autorepair --cluster {d}/fl"),
        &format!("autorepair --lock-file {d}/fl"),
    ]);
    assert_eq!(
        got,
        [
            // One file: completed, and the word ended.
            format!("autorepair --cluster {d}/fleet.json "),
            // Two: their common part, and the word left open.
            format!("autorepair --lock-file {d}/fleet.json"),
        ]
    );
    let fish = |line: String| {
        let probe = format!(
            "source {}; complete -C '{line}'",
            committed(Shell::Fish).display()
        );
        let out = Command::new("fish")
            .args(["--no-config", "-c", &probe])
            .output()
            .unwrap();
        let got = String::from_utf8_lossy(&out.stdout).into_owned();
        got.lines()
            .map(|l| l.split('\t').next().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        fish(format!("autorepair --cluster {d}/fl")),
        [format!("{d}/fleet.json")]
    );
    assert_eq!(
        fish(format!("autorepair --lock-file {d}/fl")),
        [format!("{d}/fleet.json"), format!("{d}/fleet.json.lock")]
    );
}

/// A directory with a fleet file and its lock beside it, for the lock's cases.
fn fleet_and_lock() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["demo.json", "demo.json.lock"] {
        std::fs::write(dir.path().join(name), "").unwrap();
    }
    dir
}

/// The completion cases every shell is asked through the README's alias: a line, and the
/// candidates for its last word (`D/` stands for [`fleet_and_lock`]'s directory). Levels are
/// the fleet's family's alone (clap's scripts offer every family's); a fleet file's lock is
/// offered only where a lock file is asked for, also after `--cluster=`.
const THROUGH_AN_ALIAS: &[(&str, &str)] = &[
    (
        "autorepair GANETI suspend gr",
        "group/ams-a group/ams-b group/ams-c",
    ),
    (
        "autorepair GANETI explain db-a",
        "db-a1.ams.example db-a2.ams.example db-a3.ams.example",
    ),
    (
        "autorepair GANETI allow ",
        "failover fix-storage migrate none reinstall",
    ),
    (
        "autorepair GANETI request ",
        "failover fix-storage migrate reinstall",
    ),
    (
        "autorepair METAL3 allow ",
        "drain none power-cycle reprovision",
    ),
    (
        "autorepair METAL3 request ",
        "drain power-cycle reprovision",
    ),
    (
        "autorepair MACHINES allow ",
        "check none step-1 step-2 step-3 step-4 step-5 step-6 step-7 step-8",
    ),
    (
        "autorepair MACHINES request ",
        "check step-1 step-2 step-3 step-4 step-5 step-6 step-7 step-8",
    ),
    ("autorepair --cluster D/de", "D/demo.json"),
    ("autorepair status --cluster D/de", "D/demo.json"),
    ("autorepair --cluster=D/de", "D/demo.json"),
    (
        "autorepair run --lock-file D/de",
        "D/demo.json D/demo.json.lock",
    ),
    (
        "autorepair run --lock-file=D/de",
        "D/demo.json D/demo.json.lock",
    ),
];

/// [`THROUGH_AN_ALIAS`] with its words filled in: the line, the text before the word under
/// the cursor, and the candidates sorted.
fn through_an_alias(dir: &Path) -> Vec<(String, String, Vec<String>)> {
    let fill = |text: &str| {
        text.replace("GANETI", GANETI)
            .replace("METAL3", METAL3)
            .replace("MACHINES", MACHINES)
            .replace("D/", &format!("{}/", dir.display()))
    };
    THROUGH_AN_ALIAS
        .iter()
        .map(|(line, want)| {
            let line = fill(line);
            let before = line[..line.rfind([' ', '=']).unwrap() + 1].to_owned();
            let mut want: Vec<String> = fill(want).split(' ').map(str::to_owned).collect();
            want.sort();
            (line, before, want)
        })
        .collect()
}

/// bash, as a person's TAB reaches it through readline, with `autorepair` an alias and not on
/// the PATH: the script calls the binary the alias names.
#[test]
#[cfg_attr(
    not(have_shells),
    ignore = "needs zsh (to drive bash on a terminal): apt-get install zsh fish"
)]
fn bash_on_a_terminal_completes_through_an_alias() {
    let dir = fleet_and_lock();
    let cases = through_an_alias(dir.path());
    let lines: Vec<&str> = cases.iter().map(|(line, ..)| line.as_str()).collect();
    let got = bash_readline_completes(&Reached::Alias("alias autorepair='BIN'"), &lines);
    assert_eq!(got.len(), cases.len(), "{got:#?}");
    for ((line, before, want), got) in cases.iter().zip(&got) {
        let inserted = got
            .strip_prefix(before.as_str())
            .unwrap_or_else(|| panic!("{line}: {got}"));
        let mut inserted: Vec<&str> = inserted.split_whitespace().collect();
        inserted.sort();
        assert_eq!(inserted, *want, "{line}");
    }
}

/// fish through its alias (a function that wraps the binary), with the binary not on the PATH.
#[test]
#[cfg_attr(
    not(have_shells),
    ignore = "needs zsh and fish: apt-get install zsh fish"
)]
fn fish_completes_through_an_alias() {
    let dir = fleet_and_lock();
    let reached = Reached::Alias("alias autorepair 'BIN'");
    for (line, before, want) in through_an_alias(dir.path()) {
        let probe = format!(
            "{}; source {}; complete -C '{line}'",
            reached.setup(),
            committed(Shell::Fish).display()
        );
        let out = Command::new("fish")
            .args(["--no-config", "-c", &probe])
            .env("PATH", reached.path())
            .current_dir(ROOT)
            .output()
            .unwrap();
        assert!(out.stderr.is_empty(), "{line}: {out:?}");
        // fish prints each candidate whole (with what precedes it in the word: `--cluster=`),
        // then a tab and its description.
        let typed = &line[before.rfind(' ').map_or(0, |at| at + 1)..before.len()];
        let mut got: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.split('\t').next().unwrap())
            .map(|c| c.strip_prefix(typed).unwrap_or(c).to_owned())
            .collect();
        got.sort();
        assert_eq!(got, want, "{line}: {out:?}");
    }
}

/// zsh through the alias, with the binary not on the PATH, whether zsh substitutes the alias
/// before completing (its default) or completes the alias as a command of its own
/// (`complete_aliases`). One TAB: a word with one candidate is completed, and one with several
/// is left as typed but for their common part, so a level of another family's would show.
#[test]
#[cfg_attr(
    not(have_shells),
    ignore = "needs zsh and fish: apt-get install zsh fish"
)]
fn zsh_completes_through_an_alias() {
    let dir = fleet_and_lock();
    let d = dir.path().display();
    let lines = [
        format!("autorepair {GANETI} suspend cl"),
        format!("autorepair {GANETI} allow re"),
        format!("autorepair {METAL3} request re"),
        format!("autorepair --cluster {d}/de"),
        format!("autorepair status --cluster={d}/de"),
        format!("autorepair --lock-file={d}/de"),
    ];
    let want = [
        format!("autorepair {GANETI} suspend cluster "),
        format!("autorepair {GANETI} allow reinstall "),
        format!("autorepair {METAL3} request reprovision "),
        format!("autorepair --cluster {d}/demo.json "),
        format!("autorepair status --cluster={d}/demo.json "),
        // Two candidates: their common part, and the word left open.
        format!("autorepair --lock-file={d}/demo.json"),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    for setup in [
        "alias autorepair='BIN'",
        "setopt complete_aliases; alias autorepair='BIN'",
    ] {
        assert_eq!(
            zsh_completes_via(&Reached::Alias(setup), &lines),
            want,
            "{setup}"
        );
    }
}

/// How a shell on a pseudo-terminal finds the binary under test: on the PATH by its name, or
/// through an alias (the README's `alias autorepair=…`, `setup` the shell's own lines for it)
/// with no `autorepair` on the PATH at all.
enum Reached {
    Path,
    Alias(&'static str),
}

impl Reached {
    /// The PATH the shell starts with.
    fn path(&self) -> String {
        let inherited = std::env::var("PATH").unwrap_or_default();
        match self {
            Reached::Path => format!("{}:{inherited}", bin_dir().display()),
            Reached::Alias(_) => std::env::split_paths(&inherited)
                .filter(|dir| !dir.join("autorepair").exists() && *dir != bin_dir())
                .map(|dir| dir.display().to_string())
                .collect::<Vec<_>>()
                .join(":"),
        }
    }

    /// The shell's lines that make `autorepair` reach the binary, before the script is loaded.
    fn setup(&self) -> String {
        match self {
            Reached::Path => "true".to_owned(),
            Reached::Alias(setup) => setup.replace(
                "BIN",
                &assert_cmd::cargo::cargo_bin("autorepair")
                    .display()
                    .to_string(),
            ),
        }
    }
}

/// The command line zsh makes of each of `lines` by one TAB, in an interactive zsh on a
/// pseudo-terminal (zsh/zpty) whose completion system loads the committed script from its
/// fpath, with the binary on the PATH. A key bound to a widget prints the line and clears it:
/// nothing is ever run.
fn zsh_completes(lines: &[&str]) -> Vec<String> {
    zsh_completes_via(&Reached::Path, lines)
}

/// As [`zsh_completes`], the binary reached as `reached` says.
fn zsh_completes_via(reached: &Reached, lines: &[&str]) -> Vec<String> {
    let driver = r#"
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1='> '; $2; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D; bindkey -e; \
  show-line() { print -r -- \"LINE<\$BUFFER>\" >/dev/tty; BUFFER=; }; zle -N show-line; \
  bindkey '^T' show-line; print RE''ADY"
zpty -r z chunk '*READY*'
for line in "${@[3,-1]}"; do
  # TAB completes before zle reads ^T, which prints the line and clears it.
  zpty -w -n z "$line"$'\t\C-t'
  zpty -r z chunk '*LINE<*>*'
  print -r -- "$chunk" | grep -a -o 'LINE<[^>]*>'
done
zpty -d z
"#;
    let fpath = committed(Shell::Zsh)
        .parent()
        .unwrap()
        .display()
        .to_string();
    on_a_terminal(driver, &[&fpath, &reached.setup()], lines, &reached.path())
}

/// What readline makes of each of `lines` in an interactive bash on a pseudo-terminal (driven
/// by zsh/zpty) that sourced the committed script: readline's insert-completions (M-*) puts
/// every candidate the completion function gives (or, when it gives none, bash's own file
/// completion) into the line, and a key bound to a shell function prints the line and clears
/// it: nothing is ever run.
fn bash_readline_completes(reached: &Reached, lines: &[&str]) -> Vec<String> {
    let driver = r#"
zmodload zsh/zpty
zpty b bash --norc --noprofile -i
zpty -w b "PS1='> '; $2; source $1; \
  bind -x '\"\\C-t\": printf \"LINE<%s>\\n\" \"\$READLINE_LINE\" >/dev/tty; READLINE_LINE='; \
  echo RE''ADY"
zpty -r b chunk '*READY*'
for line in "${@[3,-1]}"; do
  zpty -w -n b "$line"$'\e*\C-t'
  zpty -r b chunk '*LINE<*>*'
  print -r -- "$chunk" | grep -a -o 'LINE<[^>]*>'
done
zpty -d b
"#;
    let script = committed(Shell::Bash).display().to_string();
    on_a_terminal(driver, &[&script, &reached.setup()], lines, &reached.path())
}

/// The lines a zsh `driver` script printed between `LINE<` and `>`, run from the repository
/// with `args` then `lines` as its arguments and `path` as its PATH.
fn on_a_terminal(driver: &str, args: &[&str], lines: &[&str], path: &str) -> Vec<String> {
    // zpty waits for what it expects: `timeout` ends a driver that never sees it.
    let out = Command::new("timeout")
        .args(["60", "zsh", "-f", "-c", driver, "zsh"])
        .args(args)
        .args(lines)
        .env("PATH", path)
        .env("AUTOREPAIR_RAPI_PASSWORD", "secret")
        .env_remove("AUTOREPAIR_CONFIG")
        .current_dir(ROOT)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("LINE<")?.strip_suffix('>'))
        .map(str::to_owned)
        .collect()
}

/// A live fleet completes as a file does, by reading only: the fake sabakan sees no write. One
/// that answers later than the budget completes nothing, and completion does not wait for it.
#[test]
fn a_live_fleet_completes_within_the_budget_or_not_at_all() {
    let sabakan = testsupport::sabakan::FakeSabakan::start();
    let demo: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(ROOT).join("fixtures/machines-demo.json")).unwrap(),
    )
    .unwrap();
    sabakan.load(&demo);
    let line = |typed: &'static str| {
        [
            "--config",
            "/dev/null",
            "--sabakan",
            sabakan.url(),
            "--repair-config",
            "fixtures/machines-demo.yml",
            "--nodes",
            "fixtures/machines-demo-nodes.json",
            "suspend",
            typed,
        ]
    };
    let (out, err, ok, _) = complete_objects(&line("r"));
    assert_eq!(
        (out.as_str(), err.as_str(), ok),
        ("rack/0\nrack/1\n", "", true)
    );
    let (out, ..) = complete_objects(&line("machine/rack1"));
    assert_eq!(out, "machine/rack1-cs1\nmachine/rack1-ss1\n");
    assert!(sabakan.writes().is_empty(), "{:?}", sabakan.writes());
    sabakan.fault(testsupport::sabakan::Fault::delay(BUDGET * 5).times(10));
    let (out, err, ok, took) = complete_objects(&line("r"));
    assert_eq!((out.as_str(), err.as_str(), ok), ("", "", true));
    assert!(took < BUDGET + Duration::from_secs(1), "took {took:?}");
}
