//! Rule 12 through the binary, in every family: no input is lost by an output. A write goes
//! through a symlink to its file; an output flag naming one of the command's inputs is refused;
//! a hard-linked fleet file is refused before anything is written; what is not a regular file
//! is refused as an input at once (no hang, no memory growing).

use assert_cmd::Command;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{DEMOS, Demo};

/// The binary, as the tests here run it.
trait Run {
    fn bin(&self, dir: &Path, rename: &[(&str, &str)]) -> Command;
    fn bin_config(&self, dir: &Path, config: &str, rename: &[(&str, &str)]) -> Command;
}

impl Run for Demo {
    /// The binary in `dir`, with no config file and the demo's flags, each file renamed as
    /// `rename` says.
    fn bin(&self, dir: &Path, rename: &[(&str, &str)]) -> Command {
        self.bin_config(dir, "/dev/null", rename)
    }

    fn bin_config(&self, dir: &Path, config: &str, rename: &[(&str, &str)]) -> Command {
        let mut c = Command::cargo_bin("autorepair").unwrap();
        c.current_dir(dir)
            .args(["--config", config, "--log", "error"])
            .timeout(Duration::from_secs(60));
        for (_, name, flag) in self.files {
            let given = rename
                .iter()
                .find(|(from, _)| from == name)
                .map_or(*name, |(_, to)| to);
            c.args([flag, given]);
        }
        c
    }
}

/// Every file in `dir` with its bytes, and whether it is a symlink.
fn contents(dir: &Path) -> Vec<(String, bool, Vec<u8>)> {
    let mut all: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let link = e.file_type().unwrap().is_symlink();
            let bytes = if e.path().is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                Vec::new()
            };
            (e.file_name().to_string_lossy().into_owned(), link, bytes)
        })
        .collect();
    all.sort();
    all
}

#[test]
fn an_admin_verb_through_a_symlinked_fleet_file_writes_the_file_and_keeps_the_link() {
    for demo in DEMOS {
        let dir = demo.copy();
        let real = dir.path().join(demo.fleet());
        std::os::unix::fs::symlink(demo.fleet(), dir.path().join("link.json")).unwrap();
        demo.bin(dir.path(), &[(demo.fleet(), "link.json")])
            .args(["suspend", demo.target])
            .assert()
            .success();
        let link = std::fs::symlink_metadata(dir.path().join("link.json")).unwrap();
        assert!(
            link.file_type().is_symlink(),
            "{}: the link stays a link",
            demo.family
        );
        let text = std::fs::read_to_string(&real).unwrap();
        assert!(
            text.contains("suspend"),
            "{}: the suspend reached the real file",
            demo.family
        );
    }
}

#[test]
fn an_output_naming_an_input_is_refused_and_the_input_kept() {
    for demo in DEMOS {
        let dir = demo.copy();
        std::fs::write(dir.path().join("c.toml"), "").unwrap();
        std::os::unix::fs::symlink(demo.fleet(), dir.path().join("alias.json")).unwrap();
        // (input flag, output flag, the command with its output named `out`)
        let mut cases: Vec<(&str, &str, &str, Vec<String>)> = Vec::new();
        for (_, name, flag) in demo.files {
            cases.push((flag, "--html", name, vec!["report".into(), "--html".into()]));
            cases.push((
                flag,
                "--metrics-file",
                name,
                vec!["run".into(), "--dry-run".into(), "--metrics-file".into()],
            ));
        }
        // The same file by another path: a symlink.
        cases.push((
            demo.files[0].2,
            "--html",
            "alias.json",
            vec!["report".into(), "--html".into()],
        ));
        for (input_flag, output_flag, out, command) in cases {
            let before = contents(dir.path());
            let assert = demo
                .bin(dir.path(), &[])
                .args(&command)
                .arg(out)
                .assert()
                .code(2);
            let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
            assert!(
                err.contains(output_flag) && err.contains(input_flag),
                "{}: {output_flag} {out}: names both flags: {err}",
                demo.family
            );
            assert_eq!(
                contents(dir.path()),
                before,
                "{}: {command:?} {out}",
                demo.family
            );
        }
        // The config file is an input too.
        let before = std::fs::read(dir.path().join("c.toml")).unwrap();
        demo.bin_config(dir.path(), "c.toml", &[])
            .args(["report", "--html", "c.toml"])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("is the file --config reads"));
        assert_eq!(std::fs::read(dir.path().join("c.toml")).unwrap(), before);
    }
}

#[test]
fn a_hard_linked_fleet_file_is_refused_before_anything_is_written() {
    for demo in DEMOS {
        let dir = demo.copy();
        std::fs::hard_link(
            dir.path().join(demo.fleet()),
            dir.path().join("other-name.json"),
        )
        .unwrap();
        let before = contents(dir.path());
        demo.bin(dir.path(), &[])
            .args(["suspend", demo.target])
            .assert()
            .failure()
            .stderr(predicates::str::contains("2 hard links"));
        assert_eq!(contents(dir.path()), before, "{}", demo.family);
        let meta = std::fs::metadata(dir.path().join(demo.fleet())).unwrap();
        assert_eq!(meta.nlink(), 2, "{}: the links are not split", demo.family);
    }
}

/// A FIFO nobody writes to, a device that never ends, a directory: given for any input of any
/// family (and as the lock file), each is refused at once, saying what it is.
#[test]
fn an_input_that_is_not_a_regular_file_is_refused_at_once() {
    for demo in DEMOS {
        let dir = demo.copy();
        crate::common::mkfifo(&dir.path().join("fifo"));
        std::fs::create_dir(dir.path().join("a-dir")).unwrap();
        let strange = [
            ("fifo", "a FIFO"),
            ("/dev/zero", "a character device"),
            ("a-dir", "a directory"),
        ];
        for (_, name, flag) in demo.files {
            for (given, what) in strange {
                demo.bin(dir.path(), &[(name, given)])
                    .args(["status"])
                    .timeout(Duration::from_secs(20))
                    .assert()
                    .failure()
                    .stderr(predicates::str::contains(what))
                    .stderr(predicates::str::contains(given));
                let _ = flag;
            }
        }
        for (given, what) in strange.iter().take(2) {
            // The config file, and the lock.
            demo.bin_config(dir.path(), given, &[])
                .args(["status"])
                .timeout(Duration::from_secs(20))
                .assert()
                .code(2)
                .stderr(predicates::str::contains(*what));
            demo.bin(dir.path(), &[])
                .args(["--lock-file", given, "suspend", demo.target])
                .timeout(Duration::from_secs(20))
                .assert()
                .failure()
                .stderr(predicates::str::contains(*what));
        }
        let fifo = std::fs::symlink_metadata(dir.path().join("fifo")).unwrap();
        assert!(fifo.file_type().is_fifo(), "the FIFO is left a FIFO");
    }
}

#[test]
fn a_report_goes_into_a_fifo_and_through_a_symlink_in_place() {
    let demo = &DEMOS[0];
    let dir = demo.copy();
    // Through a symlink: the page lands in the file the link names.
    std::os::unix::fs::symlink("real.html", dir.path().join("out.lnk")).unwrap();
    // One clock for both pages (a page says when it was made): they are compared byte for
    // byte, and two runs a second apart by the wall clock made two pages.
    demo.bin(dir.path(), &[])
        .args(["report", "--now", "1800000000", "--html", "out.lnk"])
        .assert()
        .success();
    assert!(
        std::fs::symlink_metadata(dir.path().join("out.lnk"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let page = std::fs::read_to_string(dir.path().join("real.html")).unwrap();
    assert!(page.contains("<html"), "{page:.100}");
    // Into a FIFO: its reader gets the whole page, and the FIFO stays.
    let fifo: PathBuf = dir.path().join("page.fifo");
    crate::common::mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    demo.bin(dir.path(), &[])
        .args(["report", "--now", "1800000000", "--html", "page.fifo"])
        .assert()
        .success();
    assert_eq!(reader.join().unwrap(), page.as_bytes());
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // A directory is refused, naming what it is.
    demo.bin(dir.path(), &[])
        .args(["report", "--html", "."])
        .assert()
        .failure()
        .stderr(predicates::str::contains("is a directory"));
}

#[test]
fn sabakan_update_refuses_to_write_over_its_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let s = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sabakan");
    for name in ["template.yml", "machines.json", "constraints.json"] {
        if s.join(name).exists() {
            std::fs::copy(s.join(name), dir.path().join(name)).unwrap();
        }
    }
    for (output_flag, input_flag, file) in [
        ("--write", "--template", "template.yml"),
        ("--write", "--machines", "machines.json"),
        ("--metrics", "--template", "template.yml"),
    ] {
        if !dir.path().join(file).exists() {
            panic!("fixture {file} missing under fixtures/sabakan");
        }
        let before = std::fs::read(dir.path().join(file)).unwrap();
        let mut c = Command::cargo_bin("autorepair").unwrap();
        c.current_dir(dir.path())
            .args(["--config", "/dev/null", "sabakan", "update"])
            .args(["--template", "template.yml", "--machines", "machines.json"])
            .args([
                "--write",
                if output_flag == "--write" {
                    file
                } else {
                    "cluster.yml"
                },
            ]);
        if output_flag == "--metrics" {
            c.args(["--metrics", file]);
        }
        c.assert()
            .code(2)
            .stderr(predicates::str::contains(output_flag))
            .stderr(predicates::str::contains(input_flag));
        assert_eq!(std::fs::read(dir.path().join(file)).unwrap(), before);
    }
}

/// The lost update end to end: a machines pass runs a repair command, which (as another program
/// might, during a long pass) replaces the machines file, and fails, so that the pass has the
/// failure to record after it. The pass must not write its stale state over the new file: it
/// fails saying so (exit 3), and the new file is left as it was made.
#[test]
fn a_fleet_file_replaced_during_a_pass_is_not_overwritten() {
    let demo = &DEMOS[2];
    let dir = demo.copy();
    let d = dir.path();
    let mut theirs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("machines.json")).unwrap()).unwrap();
    theirs[0]["spec"]["labels"]["replaced-by"] = "another-program".into();
    let theirs = serde_json::to_string_pretty(&theirs).unwrap();
    std::fs::write(d.join("theirs.json"), &theirs).unwrap();
    let repair = std::fs::read_to_string(d.join("repair.yml")).unwrap();
    let replacing = r#"["sh", "-c", 'cp theirs.json new.json && mv new.json machines.json; exit 1', "replace"]"#;
    let repair: String = repair
        .lines()
        .map(|line| match line.split_once("repair_command: ") {
            Some((indent, _)) => format!("{indent}repair_command: {replacing}"),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(d.join("repair.yml"), repair).unwrap();
    // The first pass makes the entry and drains the machine; the command runs in the third.
    for now in ["1800000000", "1800000060"] {
        demo.bin(d, &[])
            .args(["run", "--now", now])
            .assert()
            .success();
    }
    let out = demo
        .bin(d, &[])
        .args(["run", "--now", "1800000120"])
        .assert()
        .code(3);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("changed while this pass ran"), "{err}");
    assert_eq!(
        std::fs::read_to_string(d.join("machines.json")).unwrap(),
        theirs
    );
}

/// A pass that changes nothing leaves the fleet's files as they were: the same inode and
/// modification time (a watcher run every minute must not rewrite a 60 MB file each time, nor
/// wake whatever watches it).
#[test]
fn a_pass_that_changes_nothing_writes_nothing() {
    for demo in DEMOS {
        let dir = demo.copy();
        let d = dir.path();
        demo.bin(d, &[])
            .args(["suspend", "--all", demo.root])
            .assert()
            .success();
        let stat = |name: &str| {
            let meta = std::fs::metadata(d.join(name)).unwrap();
            (meta.ino(), meta.mtime(), meta.mtime_nsec())
        };
        // The first pass may still record what is under way; the next ones have nothing to do.
        demo.bin(d, &[])
            .args(["run", "--now", "1800000000"])
            .assert()
            .success();
        let before: Vec<_> = demo.files.iter().map(|f| stat(f.1)).collect();
        std::thread::sleep(Duration::from_millis(20));
        for now in ["1800000060", "1800000120"] {
            demo.bin(d, &[])
                .args(["run", "--now", now])
                .assert()
                .success();
        }
        let after: Vec<_> = demo.files.iter().map(|f| stat(f.1)).collect();
        assert_eq!(after, before, "{}", demo.family);
    }
}
