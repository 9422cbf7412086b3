//! The recipe of docs/architecture.md ("Adding a family"), followed: `examples/toy_family.rs`
//! is autorepair with the toy family (src/toy) added by one line, and these tests drive it
//! through its command line as a user would: its flag before or after the command, its config
//! section, a pass that repairs, the admin verbs, and the face's rules between families.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The example program, as `cargo test` builds examples: `cargo test` has built it before the
/// tests run, and then this finds it up to date; a run of this file alone builds it here. With
/// the test profile, as the tests themselves are built: another profile would build every
/// dependency a second time (224 of them) inside the test run. Nothing but the example may be
/// compiled here: anything else is the outer build's work done again, in the test's time (a
/// variable of the test's environment seen by a build script rebuilt ring, and with it the
/// library, in every fresh clone's `cargo test`).
fn toy_family() -> PathBuf {
    let out = crate::common::cargo()
        .args([
            "build",
            "--profile",
            "test",
            "--example",
            "toy_family",
            "--message-format",
            "json-render-diagnostics",
        ])
        .stderr(std::process::Stdio::inherit())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo build --example toy_family: {}",
        out.status
    );
    let rebuilt: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["fresh"] == false)
        .filter_map(|m| m["target"]["name"].as_str().map(str::to_owned))
        .filter(|name| name != "toy_family")
        .collect();
    assert!(
        rebuilt.is_empty(),
        "the example's build inside the test compiled what the test build had built: {rebuilt:?}"
    );
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/debug/examples/toy_family")
}

const ROOM: &str = r#"{
  "marks": ["restart"],
  "shelves": [{"name": "s1", "down": true}, {"name": "s2", "marks": ["suspend"]}],
  "boxes": [
    {"name": "b1", "shelf": "s1", "needs": "restart"},
    {"name": "b2", "shelf": "s1", "needs": "replace"},
    {"name": "b3", "shelf": "s2", "needs": "restart"}
  ]
}"#;

struct Room {
    bin: PathBuf,
    dir: tempfile::TempDir,
}

impl Room {
    fn new() -> Room {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("room.json"), ROOM).unwrap();
        // No config file of the machine's own may steer the test.
        std::fs::write(dir.path().join("empty.toml"), "").unwrap();
        Room {
            bin: toy_family(),
            dir,
        }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    /// The program with `args`, `{room}` standing for the room file.
    fn run(&self, args: &str) -> Output {
        let args: Vec<String> = args
            .split_whitespace()
            .map(|a| a.replace("{room}", &self.path("room.json")))
            .collect();
        Command::new(&self.bin)
            .args(&args)
            .env("AUTOREPAIR_CONFIG", self.path("empty.toml"))
            .env_remove("RUST_LOG")
            .output()
            .unwrap()
    }

    fn ok(&self, args: &str) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args}: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn state_of(&self, args: &str, name: &str) -> String {
        let status = self.ok(args);
        let row = status
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row {name} in\n{status}"));
        row.split_whitespace().nth(1).unwrap().to_owned()
    }
}

#[test]
fn a_family_added_by_its_one_line_works_through_the_command_line() {
    let room = Room::new();
    // Its flag before or after the command, as every family's.
    let status = room.ok("status --toy-room {room} --now 1000");
    assert!(status.starts_with("BOX "), "{status}");
    assert!(status.contains("SHELF"), "{status}");
    assert_eq!(
        room.state_of("--toy-room {room} status --now 1000", "b1"),
        "needs-repair"
    );
    assert_eq!(
        room.state_of("status --toy-room {room} --now 1000", "b3"),
        "suspended"
    );

    // A pass repairs what the policy allows, and the room file keeps the marks.
    room.ok("run --toy-room {room} --now 1000");
    let saved = std::fs::read_to_string(room.path("room.json")).unwrap();
    assert!(saved.contains("pending:restart:"), "{saved}");
    assert!(saved.contains("result:replace:"), "{saved}");
    assert_eq!(
        room.state_of("status --toy-room {room} --now 1300", "b1"),
        "pending"
    );
    room.ok("run --toy-room {room} --now 1300");
    assert_eq!(
        room.state_of("status --toy-room {room} --now 1600", "b1"),
        "healthy"
    );

    // The admin verbs, on the family's own objects.
    room.ok("resume shelf/s2 --toy-room {room} --now 1600");
    assert_eq!(
        room.state_of("status --toy-room {room} --now 1600", "b3"),
        "needs-repair"
    );
    let explain = room.ok("explain box/b3 --toy-room {room} --now 1600");
    assert!(explain.contains("on shelf s2"), "{explain}");
    let refused = room.run("suspend group/g --toy-room {room}");
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn the_face_keeps_its_rules_between_the_families() {
    let room = Room::new();
    // The config file's section names the fleet when no flag does.
    std::fs::write(
        room.path("toy.toml"),
        format!("[toy]\nroom = {:?}\n", room.path("room.json")),
    )
    .unwrap();
    let by_config = room.ok(&format!(
        "status --config {} --now 1000",
        room.path("toy.toml")
    ));
    assert!(by_config.contains("b1"), "{by_config}");
    for (args, words) in [
        // Two fleets named by flags: clap's own refusal.
        (
            "status --toy-room {room} --cluster x.json",
            &["--toy-room", "--cluster"][..],
        ),
        // Another family's flag with this family's fleet.
        (
            "status --toy-room {room} --rapi-user u",
            &["--rapi-user", "ganeti"],
        ),
        // No fleet: every family's way of naming one, this one's included.
        (
            "status",
            &["--toy-room FILE", "--cluster FILE", "--sabakan-file"],
        ),
    ] {
        let out = room.run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args}: {stderr}");
        for w in words {
            assert!(stderr.contains(w), "{args}: {w:?} not in {stderr}");
        }
    }
    // A room file that does not exist: the advice is the toy family's, not another's.
    for args in [
        "run --toy-room {missing} --now 1000",
        "status --toy-room {missing} --now 1000",
    ] {
        let missing = room.path("typo.json");
        let out = room.run(&args.replace("{missing}", &missing));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args}: {stderr}");
        assert!(
            stderr.contains(&format!("{missing}: does not exist"))
                && stderr.contains("--toy-room")
                && !stderr.contains("--cluster"),
            "{args}: {stderr}"
        );
    }
    // A key the toy section does not have names the file.
    std::fs::write(room.path("typo.toml"), "[toy]\nrom = \"x\"\n").unwrap();
    let out = room.run(&format!("status --config {}", room.path("typo.toml")));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("typo.toml") && stderr.contains("rom"),
        "{stderr}"
    );
}
