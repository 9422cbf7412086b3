//! The tours a newcomer runs first: `scripts/machines-tour` however it is started and however
//! it ends, and the command-line corners the README's tours lead to.

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const BIN: &str = env!("CARGO_BIN_EXE_autorepair");

/// Waits for `child` at most `limit`, killing it past that: a tour that never ends fails here
/// instead of hanging the suite.
fn wait_bounded(child: &mut Child, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn assert_empty(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir).unwrap().collect();
    assert!(
        left.is_empty(),
        "left behind in {}: {left:?}",
        dir.display()
    );
}

/// The tour with its own TMPDIR, from a directory that is not the repository.
fn tour(tmp: &Path, cwd: &Path) -> Command {
    let mut c = Command::new(format!("{ROOT}/scripts/machines-tour"));
    c.current_dir(cwd)
        .env("TMPDIR", tmp)
        .env_remove("AUTOREPAIR");
    c
}

/// Named by AUTOREPAIR, or found on PATH as `autorepair` (the script's own function has that
/// name too, and must not call itself): the tour ends, tells its story and removes its
/// directory.
#[test]
fn the_machines_tour_ends_whichever_way_it_finds_the_binary() {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    for named in [true, false] {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        let mut c = tour(tmp.path(), cwd.path());
        if named {
            c.env("AUTOREPAIR", BIN);
        } else {
            c.env("PATH", &path);
        }
        let out = tempfile::NamedTempFile::new().unwrap();
        let mut child = c
            .stdout(out.reopen().unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let status = wait_bounded(&mut child, Duration::from_secs(120));
        let text = std::fs::read_to_string(out.path()).unwrap();
        assert!(
            status.success(),
            "AUTOREPAIR set: {named}: {status}\n{text}"
        );
        assert!(
            text.contains("marked deleted: #1 (10.69.0.5)"),
            "AUTOREPAIR set: {named}\n{text}"
        );
        // The story's end: sabakan says the machine is healthy again, and no repair starts.
        let last = text.rsplit("status --now").next().unwrap();
        let row = last.lines().find(|l| l.starts_with("rack0-cs2 ")).unwrap();
        assert_eq!(row.split_whitespace().nth(1), Some("healthy"), "{text}");
        assert_empty(tmp.path());
        assert_empty(cwd.path());
    }
}

/// `scripts/machines-tour | head`: the reader goes away and the next write kills the shell
/// by SIGPIPE; it still removes its directory.
#[test]
fn the_machines_tour_cleans_up_after_a_closed_pipe() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let mut child = tour(tmp.path(), cwd.path())
        .env("AUTOREPAIR", BIN)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Closed before the shell writes its first line (the directory is made before it).
    drop(child.stdout.take());
    let status = wait_bounded(&mut child, Duration::from_secs(120));
    assert!(!status.success(), "{status}");
    assert_empty(tmp.path());
}

/// A closed terminal (SIGHUP) while a command of the tour runs: the directory goes too.
#[test]
fn the_machines_tour_cleans_up_after_a_hangup() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    // A stand-in for the binary that takes its time, so that the signal finds the tour inside
    // its first command (the shell runs its trap once that command ends).
    let fake = tempfile::tempdir().unwrap();
    let slow = fake.path().join("autorepair");
    std::fs::write(&slow, "#!/bin/sh\nsleep 1\n").unwrap();
    let mut perms = std::fs::metadata(&slow).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&slow, perms).unwrap();
    let mut child = tour(tmp.path(), cwd.path())
        .env("AUTOREPAIR", &slow)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::fs::read_dir(tmp.path()).unwrap().next().is_none() {
        assert!(start.elapsed() < Duration::from_secs(30), "no directory");
        std::thread::sleep(Duration::from_millis(10));
    }
    let hup = Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(hup.success());
    let status = wait_bounded(&mut child, Duration::from_secs(30));
    assert!(!status.success(), "{status}");
    assert_empty(tmp.path());
}

/// `simulate --replicas 3` runs three watchers in every family's world, and the one acting
/// is taken over from (Ganeti's master role moves, a Lease changes hands); `--replicas 1` is
/// the single watcher, with no one to take over.
#[test]
fn simulate_honours_replicas_in_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(
        format!("{ROOT}/fixtures/metal3-demo.json"),
        d.join("objects.json"),
    )
    .unwrap();
    std::fs::copy(
        format!("{ROOT}/fixtures/machines-demo.json"),
        d.join("machines.json"),
    )
    .unwrap();
    let nodes = d.join("nodes.json");
    std::fs::copy(format!("{ROOT}/fixtures/machines-demo-nodes.json"), &nodes).unwrap();
    let ganeti = format!("--cluster {ROOT}/fixtures/demo.json --now 1800000000");
    let metal3 = "--kube-objects objects.json --now 1795402800".to_owned();
    let machines = format!(
        "--sabakan-file machines.json --nodes nodes.json --repair-config {ROOT}/fixtures/machines-demo.yml \
         --constraints {ROOT}/fixtures/machines-constraints.json --now 1800000000"
    );
    for (family, flags) in [
        ("ganeti", ganeti),
        ("metal3", metal3),
        ("machines", machines),
    ] {
        let takeovers = |replicas: &str| {
            let out = assert_cmd::Command::new(BIN)
                .current_dir(d)
                .args([
                    "--config",
                    "/dev/null",
                    "simulate",
                    "--json",
                    "--replicas",
                    replicas,
                ])
                .args(["--scenarios", "4", "--passes", "30", "--quiet-passes", "20"])
                .args(flags.split_whitespace())
                .timeout(Duration::from_secs(120))
                .assert()
                .success()
                .get_output()
                .stdout
                .clone();
            let summary: serde_json::Value = serde_json::from_slice(&out).unwrap();
            summary["stats"]["takeovers"].as_u64().unwrap()
        };
        assert!(takeovers("3") > 0, "{family}: no takeover among 3 replicas");
        assert_eq!(takeovers("1"), 0, "{family}: a takeover with 1 replica");
    }
}

/// `help --help` says what `help` does, as `COMMAND --help` does for every other command;
/// `help COMMAND` is still that command's help, at any depth.
#[test]
fn help_has_a_help_of_its_own() {
    for asked in [
        &["help", "--help"][..],
        &["help", "-h"],
        &["sabakan", "help", "--help"],
    ] {
        let out = assert_cmd::Command::new(BIN).args(asked).assert().success();
        let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(
            text.contains("help [OPTIONS] [COMMAND]..."),
            "{asked:?}:\n{text}"
        );
    }
    let help = |args: &[&str]| {
        assert_cmd::Command::new(BIN)
            .args(args)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    assert_eq!(help(&["help", "status"]), help(&["status", "--help"]));
    assert_eq!(help(&["help"]), help(&["--help"]));
    assert_eq!(
        help(&["sabakan", "help", "update"]),
        help(&["sabakan", "update", "--help"])
    );
    assert_cmd::Command::new(BIN)
        .args(["help", "no-such-command"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "unrecognized subcommand 'no-such-command'",
        ));
}

/// Help a person reads: wrapped (clap's width without a terminal: 100 columns), each flag's and
/// command's first sentence under `-h` and the whole text under `--help`, the global options
/// under a heading of their own, and the lock's flags only where a lock is taken.
#[test]
fn help_is_wrapped_short_under_h_and_shows_what_applies() {
    let help = |args: &[&str]| {
        let out = assert_cmd::Command::new(BIN)
            .args(args)
            .env_remove("COLUMNS")
            .assert()
            .success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    for args in [
        &["-h"][..],
        &["--help"],
        &["run", "-h"],
        &["run", "--help"],
        &["simulate", "-h"],
        &["sabakan", "update", "--help"],
    ] {
        let text = help(args);
        let longest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(
            longest <= 100,
            "{args:?}: a line of {longest} characters:\n{text}"
        );
    }
    let (short, long) = (help(&["run", "-h"]), help(&["run", "--help"]));
    assert!(short.contains("Global options:"), "{short}");
    // --loop's later sentences: in --help only.
    let detail = "a second signal";
    assert!(!short.contains(detail), "{short}");
    assert!(long.replace('\n', " ").contains(detail), "{long}");
    assert!(
        short.len() < long.len(),
        "-h {} bytes, --help {}",
        short.len(),
        long.len()
    );
    // The top-level list gives each command its first sentence: a few lines at most (the
    // whole of simulate's text took ten).
    let top = help(&["-h"]);
    let simulate = top
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("simulate"))
        .take_while(|l| !l.trim_start().starts_with("generate"))
        .count();
    assert!(simulate <= 3, "simulate takes {simulate} lines:\n{top}");
    for (args, shown) in [
        (&["run", "-h"][..], true),
        (&["suspend", "-h"], true),
        (&["status", "-h"], false),
        (&["explain", "-h"], false),
        (&["tags", "lint", "-h"], false),
    ] {
        let text = help(args);
        for flag in ["--lock-file", "--wait"] {
            assert_eq!(text.contains(flag), shown, "{args:?} {flag}:\n{text}");
        }
    }
    // Hidden from help, still accepted (a global flag given to every command of a script).
    assert_cmd::Command::new(BIN)
        .args(["--config", "/dev/null", "status", "--wait", "--cluster"])
        .arg(format!("{ROOT}/fixtures/demo.json"))
        .assert()
        .success();
}

/// A kubeconfig that is not there is named once, plainly: kube's own message quotes its path
/// twice (`'"…"'`).
#[test]
fn a_missing_kubeconfig_is_named_without_doubled_quotes() {
    let home = tempfile::tempdir().unwrap();
    let default = home.path().join(".kube/config");
    let given = home.path().join("missing.yaml");
    let cases = [
        (
            vec![],
            format!(
                "cannot read {} (from $KUBECONFIG or ~/.kube/config): ",
                default.display()
            ),
        ),
        (
            vec!["--kubeconfig".to_owned(), given.display().to_string()],
            format!("kubeconfig: cannot read {}: ", given.display()),
        ),
    ];
    for (flags, said) in cases {
        let out = assert_cmd::Command::new(BIN)
            .env("HOME", home.path())
            .env_remove("KUBECONFIG")
            .env_remove("KUBERNETES_SERVICE_HOST")
            .args(["--config", "/dev/null", "status", "--kube"])
            .args(&flags)
            .assert()
            .failure();
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(err.contains(&said), "{flags:?}: {err}");
        assert!(!err.contains("'\""), "{flags:?}: {err}");
    }
}

/// The tours of the README and of docs/, pasted as written into bash from a clone: every
/// command found, every file found, the output shown under a command (its `# ` lines) or in the
/// block right after a tour's block (its last command's) is what the command prints, `…` for
/// what varies or is left out (see [`Step::assert_shown`] and docs/testing.md), and nothing is
/// written into the clone (each tour works in a scratch directory). The clone here is a
/// directory with the fixtures and the binary where a release build puts it.
#[test]
fn the_readme_tours_run_as_written_and_leave_the_clone_clean() {
    let mut docs: Vec<String> = std::fs::read_dir(format!("{ROOT}/docs"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".md"))
        .collect();
    docs.sort();
    let mut tours: Vec<(String, Vec<Step>)> = Vec::new();
    for file in std::iter::once(format!("{ROOT}/README.md")).chain(docs) {
        let found = tours_of(&std::fs::read_to_string(&file).unwrap());
        if file.ends_with("README.md") {
            assert_eq!(
                found.len(),
                4,
                "README: Ganeti, metal3, machines, sabakan: {found:#?}"
            );
            let shown_after = found.iter().flatten().filter(|s| s.after.is_some());
            assert_eq!(shown_after.count(), 1, "README: sabakan's update --json");
        }
        tours.extend(found.into_iter().map(|steps| (file.clone(), steps)));
    }
    let clone = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(format!("{ROOT}/fixtures"), clone.path().join("fixtures")).unwrap();
    std::fs::create_dir_all(clone.path().join("target/release")).unwrap();
    std::os::unix::fs::symlink(BIN, clone.path().join("target/release/autorepair")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for (file, steps) in &tours {
        let out = assert_cmd::Command::new("bash")
            .args(["--norc", "-O", "expand_aliases", "-s"])
            .current_dir(clone.path())
            .env_remove("R")
            .env("TMPDIR", tmp.path())
            .write_stdin(marked(steps))
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let first = &steps[0].command;
        for fault in ["command not found", "No such file", "error:"] {
            assert!(
                !err.contains(fault),
                "{file}: the tour of `{first}`:\n{err}"
            );
        }
        let printed = String::from_utf8_lossy(&out.stdout);
        let mut by_step = printed.split(STEP_MARK).skip(1);
        for step in steps {
            let said = by_step.next().unwrap_or_else(|| {
                panic!(
                    "{file}: the tour stopped before `{}`:\n{printed}",
                    step.command
                )
            });
            step.assert_shown(said);
        }
        let mut left: Vec<_> = std::fs::read_dir(clone.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        assert_eq!(
            left,
            ["fixtures", "target"],
            "{file}: the tour of `{first}`"
        );
    }
}

/// A fenced code block of a Markdown text.
#[derive(Debug)]
struct Block {
    /// What follows the opening fence: `sh`, `json`, or nothing.
    lang: String,
    body: String,
    /// Only blank lines lie between it and the block before.
    follows: bool,
}

fn code_blocks(text: &str) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut open: Option<Block> = None;
    let mut prose = false;
    for line in text.lines() {
        match open.as_mut() {
            Some(_) if line.trim_start() == "```" => {
                blocks.extend(open.take());
                prose = false;
            }
            Some(block) => {
                block.body.push_str(line);
                block.body.push('\n');
            }
            None => match line.trim_start().strip_prefix("```") {
                Some(lang) => {
                    open = Some(Block {
                        lang: lang.trim().to_owned(),
                        body: String::new(),
                        follows: !blocks.is_empty() && !prose,
                    })
                }
                None => prose |= !line.trim().is_empty(),
            },
        }
    }
    blocks
}

/// A Markdown text's tours, as their steps. A tour starts where an `sh` block sets R, and goes
/// on through the `sh` blocks until the next one that needs something this test does not have
/// (a cluster, root). A block right after one of a tour's (only blank lines between) that is
/// not `sh` shows its last command's output.
fn tours_of(text: &str) -> Vec<Vec<Step>> {
    let mut tours: Vec<Vec<Step>> = Vec::new();
    let mut open = false;
    let mut last_was_tours = false;
    for block in code_blocks(text) {
        let body = block.body.as_str();
        if block.lang == "sh" {
            if body.starts_with("R=${R:-$PWD}") {
                tours.push(shown_output(body));
                open = true;
            } else if open
                && ["autorepair ", "printf ", "sed "]
                    .iter()
                    .any(|p| body.starts_with(p))
                && !body.contains("http")
            {
                tours.last_mut().unwrap().extend(shown_output(body));
            } else {
                open = false;
            }
            last_was_tours = open;
        } else {
            if last_was_tours && block.follows {
                let step = tours.last_mut().and_then(|t| t.last_mut()).unwrap();
                step.after = Some((block.lang.clone(), block.body.clone()));
            }
            last_was_tours = false;
        }
    }
    tours
}

/// Printed before each command's output in a tour run by the test.
const STEP_MARK: &str = "\n@@ step @@\n";

/// A command of a tour and the output shown for it.
#[derive(Debug)]
struct Step {
    command: String,
    /// The `# ` lines right under it.
    shown: Vec<String>,
    /// The block right after its tour's block, when it is that block's last command: its
    /// language and text.
    after: Option<(String, String)>,
}

impl Step {
    /// Each line shown is printed, in order: `…` stands for any text, and runs of spaces are
    /// one (the README trims tables' columns). A `json` block after the command is a pattern
    /// of the JSON printed ([`json_matches`]); a block in another language, lines as above.
    fn assert_shown(&self, printed: &str) {
        let squeeze = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        let lines: Vec<String> = printed.lines().map(squeeze).collect();
        let mut shown: Vec<&str> = self.shown.iter().map(String::as_str).collect();
        match &self.after {
            Some((lang, text)) if lang == "json" => {
                let pattern: serde_json::Value = serde_json::from_str(&json_pattern(text))
                    .unwrap_or_else(|e| panic!("`{}`: the JSON shown: {e}\n{text}", self.command));
                let got: serde_json::Value = serde_json::from_str(printed).unwrap_or_else(|e| {
                    panic!("`{}` printed no JSON: {e}\n{printed}", self.command)
                });
                if let Err(at) = json_matches(&pattern, &got, "") {
                    panic!(
                        "`{}`: the JSON shown differs at {at}:\n{text}\nprinted:\n{printed}",
                        self.command
                    );
                }
            }
            Some((_, text)) => shown.extend(text.lines()),
            None => {}
        }
        let mut from = 0;
        for shown in shown {
            let parts: Vec<String> = shown
                .split('…')
                .map(squeeze)
                .filter(|p| !p.is_empty())
                .collect();
            if parts.is_empty() {
                continue;
            }
            let found = lines[from..].iter().position(|line| {
                let mut rest = line.as_str();
                parts.iter().all(|p| match rest.find(p.as_str()) {
                    Some(at) => {
                        rest = &rest[at + p.len()..];
                        true
                    }
                    None => false,
                })
            });
            match found {
                Some(at) => from += at + 1,
                None => panic!(
                    "shown under `{}`:\n  {shown}\nbut it printed (from the line after the last one matched):\n{}",
                    self.command,
                    lines[from..].join("\n")
                ),
            }
        }
    }
}

/// JSON as the docs show it, `…` made JSON: a `…` where a member or an element would be (the
/// others the docs leave out) becomes the member `"…": "…"` or the element `"…"`; one inside a
/// string stays there.
fn json_pattern(shown: &str) -> String {
    let mut out = String::new();
    let mut nesting: Vec<char> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in shown.chars() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
            out.push(c);
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => nesting.push(c),
            '}' | ']' => {
                nesting.pop();
            }
            '…' if nesting.last() == Some(&'{') => {
                out.push_str("\"…\": \"…\"");
                continue;
            }
            '…' => {
                out.push_str("\"…\"");
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// Whether `got` is what the pattern (from [`json_pattern`]) shows, or where it is not: an
/// object with a `…` member has at least the other members shown, one without has exactly
/// them; an array with a `…` element has the other elements in that order among its own, one
/// without has exactly them; a string with `…` has the text around each `…` in order (the
/// blanks next to a `…` are part of it); anything else is equal.
fn json_matches(
    pattern: &serde_json::Value,
    got: &serde_json::Value,
    at: &str,
) -> Result<(), String> {
    use serde_json::Value;
    let more = Value::String("…".into());
    match (pattern, got) {
        (Value::Object(shown), Value::Object(got)) => {
            let open = shown.contains_key("…");
            if !open && shown.len() != got.len() {
                return Err(format!(
                    "{at}: members {:?}",
                    got.keys().collect::<Vec<_>>()
                ));
            }
            for (key, value) in shown.iter().filter(|(k, _)| *k != "…") {
                let inner = format!("{at}/{key}");
                json_matches(
                    value,
                    got.get(key).ok_or(format!("{inner}: missing"))?,
                    &inner,
                )?;
            }
            Ok(())
        }
        (Value::Array(shown), Value::Array(got)) => {
            let open = shown.contains(&more);
            let shown: Vec<&Value> = shown.iter().filter(|v| **v != more).collect();
            if !open && shown.len() != got.len() {
                return Err(format!("{at}: {} elements", got.len()));
            }
            let mut rest = got.iter().enumerate().peekable();
            for value in shown {
                // Where none matches, what differs in the first one left.
                let first = rest
                    .peek()
                    .map(|(i, g)| json_matches(value, g, &format!("{at}/{i}")));
                rest.find(|(i, g)| json_matches(value, g, &format!("{at}/{i}")).is_ok())
                    .ok_or_else(|| match first {
                        Some(Err(why)) => why,
                        _ => format!("{at}: no element left for {value}"),
                    })?;
            }
            Ok(())
        }
        (Value::String(shown), Value::String(got)) if shown.contains('…') => {
            let parts: Vec<&str> = shown.split('…').collect();
            let last = parts.len() - 1;
            let mut rest = got.as_str();
            for (i, part) in parts.iter().enumerate() {
                let part = match (i, i == last) {
                    (0, _) => part.trim_end(),
                    (_, true) => part.trim_start(),
                    _ => part.trim(),
                };
                let found = match (i, i == last) {
                    (0, _) => rest.starts_with(part).then_some(0),
                    (_, true) => rest.ends_with(part).then(|| rest.len() - part.len()),
                    _ => rest.find(part),
                };
                let from = found.ok_or_else(|| {
                    let start: String = got.chars().take(200).collect();
                    format!("{at}: no {part:?} in {start:?}…")
                })?;
                rest = &rest[from + part.len()..];
            }
            Ok(())
        }
        _ if pattern == got => Ok(()),
        _ => Err(format!("{at}: {got}")),
    }
}

/// A tour's commands (a line ending in `\\` goes on), each with the `# ` lines right under
/// it: the output the README shows. A comment before a command is prose.
fn shown_output(tour: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut open: Option<String> = None;
    let mut after_command = false;
    let step = |command: String| Step {
        command,
        shown: Vec::new(),
        after: None,
    };
    for line in tour.lines() {
        if let Some(command) = open.as_mut() {
            command.push('\n');
            command.push_str(line);
            if !line.ends_with('\\') {
                steps.push(step(open.take().unwrap_or_default()));
                after_command = true;
            }
            continue;
        }
        let trimmed = line.trim_start();
        if let Some(comment) = trimmed.strip_prefix('#') {
            if after_command && let Some(step) = steps.last_mut() {
                step.shown.push(comment.trim().to_owned());
            }
            continue;
        }
        if trimmed.is_empty() {
            after_command = false;
            continue;
        }
        if line.ends_with('\\') {
            open = Some(line.to_owned());
        } else {
            steps.push(step(line.to_owned()));
            after_command = true;
        }
    }
    steps
}

/// The tour with [`STEP_MARK`] printed before each command (on stdout: what the README shows
/// is).
fn marked(steps: &[Step]) -> String {
    let mut script = String::new();
    for step in steps {
        script.push_str(&format!(
            "printf '{}'\n{}\n",
            STEP_MARK.replace('\n', "\\n"),
            step.command
        ));
    }
    script
}

/// The JSON patterns mean what docs/testing.md says: `…` as a member, an element or inside a
/// string stands for what is left out, and nothing else is.
#[test]
fn json_patterns_leave_out_only_what_they_say() {
    let got = serde_json::json!({
        "a": 1,
        "list": [{"x": 1, "y": 2}, {"x": 3, "y": 4}, {"x": 5, "y": 6}],
        "text": "name: t0\nnodes:\n- one\n- two\n",
    });
    for (shown, matches) in [
        (
            r#"{"a": 1, "list": [{"x": 1, "y": 2}, {"x": 3, "y": 4}, {"x": 5, "y": 6}], "text": "name: t0\nnodes:\n- one\n- two\n"}"#,
            true,
        ),
        (r#"{"a": 1, …}"#, true),
        (r#"{"a": 1}"#, false),
        (r#"{"a": 2, …}"#, false),
        (r#"{"b": 1, …}"#, false),
        (r#"{"list": [{"x": 1, …}, …], …}"#, true),
        (r#"{"list": [{"y": 4, …}, …], …}"#, true),
        (r#"{"list": [{"x": 3, …}, {"x": 1, …}, …], …}"#, false),
        (r#"{"list": [{"x": 1, …}], …}"#, false),
        (r#"{"list": [{"x": 1}, …], …}"#, false),
        (r#"{"text": "name: t0\nnodes: …", …}"#, true),
        (r#"{"text": "… - two\n", …}"#, true),
        (r#"{"text": "name: … - one …", …}"#, true),
        (r#"{"text": "name: t1\nnodes: …", …}"#, false),
        (r#"{"text": "name: t0", …}"#, false),
    ] {
        let pattern: serde_json::Value = serde_json::from_str(&json_pattern(shown)).unwrap();
        assert_eq!(json_matches(&pattern, &got, "").is_ok(), matches, "{shown}");
    }
}
