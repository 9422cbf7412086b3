//! A black-box property test of rule 12 and rule 10: the real binary, every family, every verb,
//! driven with generated hostile inputs (files of every kind in place of each input, outputs
//! naming inputs or directories, odd names, numbers past every bound). Whatever the case:
//!
//! - no panic, and an exit code from the documented set (0-6), within a time bound (no hang);
//! - every input byte-identical unless the verb writes that very file;
//! - every symlink still a symlink, every FIFO still a FIFO.
//!
//! The budget is fixed for CI (`AUTOREPAIR_HOSTILE_CASES`, default 40); a failure prints the
//! case and the seed (`PROPTEST_RNG_SEED` replays it).

use crate::common;
use assert_cmd::Command;
use proptest::prelude::*;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::time::Duration;

use crate::common::DEMOS;

/// What an input file is made into.
#[derive(Debug, Clone, Copy)]
enum Damage {
    Symlink,
    Fifo,
    DevZero,
    Directory,
    Empty,
    Garbage,
    Truncated,
}

/// Where an output flag points.
#[derive(Debug, Clone, Copy)]
enum Out {
    New,
    /// One of the inputs (by index, modulo their number).
    Input(usize),
    /// A symlink to one of the inputs.
    LinkToInput(usize),
    Directory,
    DevNull,
}

/// A verb; `{T}` the target, `{S}` a scope, `{N}` an odd name, `{OUT}` the output, `{NOW}` a
/// time, `{D}` a duration, `{L}` a level. `true`: it writes the fleet.
const VERBS: &[(&str, bool)] = &[
    ("status --now {NOW}", false),
    ("status {N}", false),
    ("status -o name {S}", false),
    ("explain {T} --now {NOW}", false),
    ("explain {N}", false),
    ("tags lint --now {NOW}", false),
    ("report --html {OUT} --now {NOW}", false),
    ("run --dry-run --now {NOW}", false),
    ("run --now {NOW}", true),
    ("run --now {NOW} --metrics-file {OUT}", true),
    ("suspend {T} --for {D}", true),
    ("suspend {S} --until {NOW}", true),
    ("suspend {N}", true),
    ("resume {T}", true),
    ("allow {L} {S}", true),
    ("allow none {T}", true),
    ("request {L} {T}", true),
    ("clear {T}", true),
    ("snapshot --output {OUT}", false),
];

const NOWS: &[&str] = &[
    "0",
    "-1",
    "1795878600",
    "1800000000",
    "9223372036854775807",
    "253402300799",
    "9999-12-31T23:59:59Z",
    "1e9",
];
const DURATIONS: &[&str] = &[
    "0s",
    "1s",
    "2h",
    "100y",
    "101y",
    "18446744073709551615s",
    "-5m",
    "1e9",
];
const LEVELS: &[&str] = &["failover", "migrate", "reboot", "power-cycle", "bogus", ""];
const NAMES: &[&str] = &[
    "evil\ninstance/db-a2",
    "\u{1b}[31mred",
    "../../etc/passwd",
    "-",
    "",
    "instance/",
    "/",
    "node/",
];

#[derive(Debug, Clone)]
struct Case {
    family: usize,
    damage: Option<(usize, Damage)>,
    verb: usize,
    out: Out,
    now: usize,
    duration: usize,
    level: usize,
    name: usize,
}

fn case() -> impl Strategy<Value = Case> {
    let damage = prop_oneof![
        Just(Damage::Symlink),
        Just(Damage::Fifo),
        Just(Damage::DevZero),
        Just(Damage::Directory),
        Just(Damage::Empty),
        Just(Damage::Garbage),
        Just(Damage::Truncated),
    ];
    let out = prop_oneof![
        Just(Out::New),
        (0..4usize).prop_map(Out::Input),
        (0..4usize).prop_map(Out::LinkToInput),
        Just(Out::Directory),
        Just(Out::DevNull),
    ];
    (
        0..DEMOS.len(),
        proptest::option::weighted(0.5, (0..4usize, damage)),
        0..VERBS.len(),
        out,
        0..NOWS.len(),
        0..DURATIONS.len(),
        0..LEVELS.len(),
        0..NAMES.len(),
    )
        .prop_map(
            |(family, damage, verb, out, now, duration, level, name)| Case {
                family,
                damage,
                verb,
                out,
                now,
                duration,
                level,
                name,
            },
        )
}

/// What a file in the directory is: its kind and, for a regular file, its bytes.
#[derive(Debug, PartialEq, Eq)]
enum Seen {
    File(Vec<u8>),
    Link(std::path::PathBuf),
    Fifo,
    Dir,
    Other,
}

fn seen(path: &Path) -> Option<Seen> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let kind = meta.file_type();
    Some(if kind.is_symlink() {
        Seen::Link(std::fs::read_link(path).unwrap())
    } else if kind.is_file() {
        Seen::File(std::fs::read(path).unwrap())
    } else if kind.is_fifo() {
        Seen::Fifo
    } else if kind.is_dir() {
        Seen::Dir
    } else {
        Seen::Other
    })
}

fn run_case(c: &Case) -> Result<(), TestCaseError> {
    let family = &DEMOS[c.family];
    let dir = family.copy();
    let d = dir.path();
    // The names each flag is given: a damaged input may be replaced by another path.
    let mut given: Vec<String> = family.files.iter().map(|f| f.1.to_owned()).collect();
    if let Some((i, damage)) = c.damage {
        let i = i % family.files.len();
        let name = family.files[i].1;
        let path = d.join(name);
        match damage {
            Damage::Symlink => {
                std::fs::rename(&path, d.join(format!("real-{name}"))).unwrap();
                std::os::unix::fs::symlink(format!("real-{name}"), &path).unwrap();
            }
            Damage::Fifo => {
                std::fs::remove_file(&path).unwrap();
                crate::common::mkfifo(&path);
            }
            Damage::DevZero => given[i] = "/dev/zero".into(),
            Damage::Directory => {
                std::fs::remove_file(&path).unwrap();
                std::fs::create_dir(&path).unwrap();
            }
            Damage::Empty => std::fs::write(&path, "").unwrap(),
            Damage::Garbage => std::fs::write(&path, [0xff, 0x00, b'{', 0xfe]).unwrap(),
            Damage::Truncated => {
                let text = std::fs::read(&path).unwrap();
                std::fs::write(&path, &text[..text.len() / 2]).unwrap();
            }
        }
    }
    let (verb, writes) = VERBS[c.verb];
    let n = family.files.len();
    let out = match c.out {
        Out::New => "out.file".to_owned(),
        Out::Input(i) => given[i % n].clone(),
        Out::LinkToInput(i) => {
            std::os::unix::fs::symlink(&given[i % n], d.join("out.lnk")).unwrap();
            "out.lnk".to_owned()
        }
        Out::Directory => {
            std::fs::create_dir(d.join("out.dir")).unwrap();
            "out.dir".to_owned()
        }
        Out::DevNull => "/dev/null".to_owned(),
    };
    let mut args: Vec<String> = Vec::new();
    for word in verb.split(' ') {
        args.push(match word {
            "{T}" => family.target.to_owned(),
            "{S}" => family.scope.to_owned(),
            "{N}" => NAMES[c.name].to_owned(),
            "{OUT}" => out.clone(),
            "{NOW}" => NOWS[c.now].to_owned(),
            "{D}" => DURATIONS[c.duration].to_owned(),
            "{L}" => LEVELS[c.level].to_owned(),
            other => other.to_owned(),
        });
    }
    let names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let before: Vec<(String, Option<Seen>)> = names
        .iter()
        .map(|n| (n.clone(), seen(&d.join(n))))
        .collect();

    let mut cmd = Command::cargo_bin("autorepair").unwrap();
    cmd.current_dir(d)
        .args(["--config", "/dev/null", "--log", "error"])
        .timeout(Duration::from_secs(30));
    for ((_, _, flag), name) in family.files.iter().zip(&given) {
        cmd.args([flag, name.as_str()]);
    }
    let output = cmd.args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let shown = format!("{} {args:?} ({c:?}): {stderr}", family.family);
    prop_assert!(
        output
            .status
            .code()
            .is_some_and(|code| (0..=6).contains(&code)),
        "exit {:?}: {shown}",
        output.status
    );
    prop_assert!(!stderr.contains("panicked"), "{shown}");
    if verb.contains("{OUT}") && matches!(c.out, Out::Input(_) | Out::LinkToInput(_)) {
        prop_assert_eq!(
            output.status.code(),
            Some(2),
            "an output naming an input: {}",
            shown
        );
    }

    // The files a verb may write: the fleet's own (through a symlink, its target), and the
    // output when it is none of the inputs.
    let may_change = |name: &str| {
        let written = writes
            && family
                .written
                .iter()
                .any(|w| name == *w || name == format!("real-{w}"));
        written || name == "out.file"
    };
    for (name, was) in before {
        let now = seen(&d.join(&name));
        match (&was, &now) {
            (Some(Seen::File(_)), Some(Seen::File(_))) if may_change(&name) => {}
            _ => prop_assert_eq!(&now, &was, "{} changed: {}", name, shown),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(common::proptest_config(
        std::env::var("AUTOREPAIR_HOSTILE_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(40),
        20261128,
    ))]

    #[test]
    fn hostile_inputs_lose_nothing_and_crash_nothing(c in case()) {
        run_case(&c)?;
    }
}
