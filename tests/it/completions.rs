//! Shell completions for bash, zsh and fish in `contrib/completions/`, generated from the clap
//! definitions with clap_complete, so they cannot drift from `--help`. The test builds each in
//! memory and fails when it differs from the committed file; regenerate them, with the man page,
//! by `AUTOREPAIR_REGEN_MAN=1 cargo test --test it -- man:: completions::`.

use clap_complete::{Generator, Shell};
use std::path::Path;

const REGEN_VAR: &str = "AUTOREPAIR_REGEN_MAN";

#[test]
fn completions_match_the_command_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/completions");
    let mut stale = Vec::new();
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let mut cmd = autorepair::cli::command(autorepair::FAMILIES);
        let mut text = Vec::new();
        clap_complete::generate(shell, &mut cmd, "autorepair", &mut text);
        let path = dir.join(shell.file_name("autorepair"));
        let text = String::from_utf8(text).unwrap();
        // Each file completes what the first level of the command line offers.
        for word in [
            "run",
            "status",
            "explain",
            "suspend",
            "--cluster",
            "--dry-run",
        ] {
            assert!(text.contains(word), "{shell}: {word} missing");
        }
        if std::env::var_os(REGEN_VAR).is_some() {
            std::fs::write(&path, &text).unwrap();
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

/// A completion a person would type: bash itself completes `autorepair ru` to `run`.
#[test]
fn bash_completes_a_verb() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/completions/autorepair.bash");
    let probe = format!(
        "source {}; COMP_WORDS=(autorepair ru); COMP_CWORD=1; COMP_LINE='autorepair ru'; COMP_POINT=${{#COMP_LINE}}; _autorepair autorepair ru autorepair; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let out = std::process::Command::new("bash")
        .args(["--norc", "-c", &probe])
        .output()
        .unwrap();
    let words = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        words.split_whitespace().collect::<Vec<_>>(),
        ["run"],
        "{out:?}"
    );
}

/// Levels complete too: every family's, as the family reads the one given on its ladder.
#[test]
fn bash_completes_a_level() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/completions/autorepair.bash");
    for (line, want) in [
        ("autorepair allow fail", "failover"),
        ("autorepair request power", "power-cycle"),
    ] {
        let words: Vec<&str> = line.split(' ').collect();
        let probe = format!(
            "source {}; COMP_WORDS=({line}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}; _autorepair autorepair {} {}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display(),
            words.len() - 1,
            words[words.len() - 1],
            words[words.len() - 2],
        );
        let out = std::process::Command::new("bash")
            .args(["--norc", "-c", &probe])
            .output()
            .unwrap();
        let got = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            got.split_whitespace().collect::<Vec<_>>(),
            [want],
            "{line}: {out:?}"
        );
    }
}
