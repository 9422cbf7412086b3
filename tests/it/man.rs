//! The man page, `man/autorepair.8`: the program writes it (`autorepair man`,
//! src/face/man.rs) and this test fails when the committed file differs. Regenerate it with
//! `AUTOREPAIR_REGEN_MAN=1 cargo test --test it man::` (see `man/README.md`). The other tests
//! check what a text cannot check by itself: every example on the page and every command line
//! of contrib/ parses, and the example config lists every key. The generator's own checks
//! (every config key described, every option the text names exists) are its unit tests.

use std::collections::BTreeSet;

const PAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/man/autorepair.8");
const REGEN_VAR: &str = "AUTOREPAIR_REGEN_MAN";

/// The page as the built program prints it.
fn page() -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_autorepair"))
        .arg("man")
        .output()
        .expect("the built autorepair runs");
    assert!(
        out.status.success(),
        "autorepair man failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the man page is UTF-8")
}

#[test]
fn man_page_is_up_to_date() {
    let fresh = page();
    assert_eq!(
        fresh,
        autorepair::face::man::page(autorepair::FAMILIES),
        "autorepair man prints another page than the library writes"
    );
    if std::env::var_os(REGEN_VAR).is_some_and(|v| v == "1") {
        std::fs::write(PAGE, &fresh).expect("cannot write man/autorepair.8");
        return;
    }
    let committed = std::fs::read_to_string(PAGE).unwrap_or_default();
    if committed != fresh {
        let line = committed
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(fresh.lines().count()));
        panic!(
            "man/autorepair.8 is out of date (first difference at line {}): regenerate it with\n\
             \n    {REGEN_VAR}=1 cargo test --test it man::\n\nand review the diff.",
            line + 1
        );
    }
}

/// `autorepair man` takes no argument, and a reader that stops early (`| head`) is no failure.
#[test]
fn the_verb_refuses_arguments_and_a_closed_pipe_is_no_failure() {
    let bin = env!("CARGO_BIN_EXE_autorepair");
    for args in [&["man", "bash"][..], &["man", "--help"]] {
        let out = std::process::Command::new(bin).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(
            err.contains("autorepair man takes no argument"),
            "{args:?}: {err}"
        );
    }
    // The page is larger than a pipe holds: the program is still writing when the reader goes.
    let mut child = std::process::Command::new(bin)
        .arg("man")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(first.starts_with(b".\\\""), "{first:?}");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A page that cannot be written is a failure: the page is the whole of the work.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(bin)
        .arg("man")
        .stdout(full)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("autorepair: error: cannot write the man page to standard output"),
        "{err}"
    );
}

/// The autorepair command lines in a text: from the word `autorepair` (or a path ending in
/// `/autorepair`) up to the first shell operator or comment.
fn command_lines(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    // Continuation lines, in roff (`\e`) or in a shell.
    let text = text.replace("\\e\n", " ").replace("\\\n", " ");
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with('#') || line.starts_with('.') {
            continue;
        }
        let line = line.strip_prefix("ExecStart=").unwrap_or(line);
        let words: Vec<&str> = line.split_whitespace().collect();
        // The program word followed by a command (not `[ -x /usr/local/bin/autorepair ]`).
        let Some(start) = (0..words.len().saturating_sub(1)).find(|&i| {
            (words[i] == "autorepair" || words[i].ends_with("/autorepair"))
                && words[i + 1].starts_with(|c: char| c.is_ascii_lowercase() || c == '-')
        }) else {
            continue;
        };
        let args: Vec<String> = words[start + 1..]
            .iter()
            .take_while(|w| {
                !matches!(**w, "|" | "||" | "&&" | ";" | "2>&1" | "#") && !w.starts_with('>')
            })
            .map(|w| (*w).to_owned())
            .collect();
        out.push(args);
    }
    out
}

/// Parses each command line with clap; returns the errors, and the leaf commands covered.
fn check_lines(lines: &[Vec<String>], covered: &mut BTreeSet<String>) -> Vec<String> {
    let mut errors = Vec::new();
    for args in lines {
        let argv = std::iter::once("autorepair".to_owned()).chain(args.iter().cloned());
        match autorepair::cli::command(autorepair::FAMILIES).try_get_matches_from(argv) {
            Ok(m) => {
                let mut words = Vec::new();
                let mut m = &m;
                while let Some((name, sub)) = m.subcommand() {
                    words.push(name.to_owned());
                    m = sub;
                }
                covered.insert(words.join(" "));
            }
            Err(e) => errors.push(format!("autorepair {}: {}", args.join(" "), e.kind())),
        }
    }
    errors
}

#[test]
fn every_example_parses_and_every_command_has_one() {
    let families = autorepair::FAMILIES;
    let mut covered = BTreeSet::new();
    let examples = autorepair::face::man::examples(families);
    let mut errors = check_lines(&command_lines(&examples), &mut covered);
    let leaves: BTreeSet<String> = autorepair::face::man::commands(families)
        .into_iter()
        .collect();
    let without: Vec<_> = leaves.difference(&covered).collect();
    if !without.is_empty() {
        errors.push(format!(
            "commands without an example in EXAMPLES: {without:?}"
        ));
    }
    assert!(
        errors.is_empty(),
        "the man page's EXAMPLES (the face's, the families' and sabakan's):\n{}",
        errors.join("\n")
    );
}

#[test]
fn the_cron_and_systemd_command_lines_parse() {
    let mut covered = BTreeSet::new();
    let mut errors = Vec::new();
    for file in [
        "contrib/cron.d/autorepair",
        "contrib/systemd/autorepair.service",
        "contrib/cron.d/autorepair-sabakan",
        "contrib/systemd/autorepair-sabakan.service",
    ] {
        let path = format!("{}/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let lines = command_lines(&text);
        assert!(!lines.is_empty(), "{file} runs no autorepair command");
        errors.extend(
            check_lines(&lines, &mut covered)
                .into_iter()
                .map(|e| format!("{file}: {e}")),
        );
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// `contrib/autorepair.toml` says it lists every key: each key of the config stands in it, in
/// its section, set or commented out (`[metal3] fencing` was missing).
#[test]
fn the_example_config_lists_every_key() {
    let example = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/autorepair.toml"),
    )
    .unwrap();
    // Each key, as "section.key" (or "key" before any section), from the lines that set one.
    let mut listed = BTreeSet::new();
    let mut section = String::new();
    for line in example.lines() {
        let line = line.trim_start_matches('#').trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_owned();
            // A table key unset by default (`[machines.variables]`) is listed as its section.
            listed.insert(section.clone());
        } else if let Some((key, _)) = line.split_once(" = ") {
            let key = key.trim();
            if !key.is_empty() && key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                listed.insert(if section.is_empty() {
                    key.to_owned()
                } else {
                    format!("{section}.{key}")
                });
            }
        }
    }
    // Every key of the config, as the man page describes them (the unit tests of
    // `face::man` hold those to the config's own keys).
    let in_code: Vec<String> = autorepair::face::man::config_keys(autorepair::FAMILIES)
        .into_iter()
        .map(|(key, _)| key.to_owned())
        .collect();
    let missing: Vec<&String> = in_code.iter().filter(|k| !listed.contains(*k)).collect();
    assert!(
        missing.is_empty(),
        "contrib/autorepair.toml lacks {missing:?}"
    );
}
