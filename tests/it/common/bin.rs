//! The binary as the command-line tests run it (`face`, `ganeti_cli`): no config, log filter or
//! colour wish from the environment, never the wall clock, and the Ganeti demo fleet they run
//! it on.

use autorepair::ganeti::file::parse_fleet;
use autorepair::ganeti::snapshot::Snapshot;
use clap::parser::ValueSource;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// The clock of every test: after every timestamp in the demo fleet but the far-future suspend.
pub const NOW: &str = "1795000000";

/// The binary as a test runs it: no config, log filter or colour wish from the environment,
/// and never reading the wall clock (see [`assert_clock_given`]).
pub struct Bin {
    pub cmd: assert_cmd::Command,
    pub args: Vec<OsString>,
}

impl Bin {
    pub fn arg(&mut self, a: impl AsRef<OsStr>) -> &mut Self {
        self.args.push(a.as_ref().to_owned());
        self.cmd.arg(a);
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&mut self, args: I) -> &mut Self {
        for a in args {
            self.arg(a);
        }
        self
    }

    pub fn env(&mut self, key: &str, value: &str) -> &mut Self {
        self.cmd.env(key, value);
        self
    }

    pub fn assert(&mut self) -> assert_cmd::assert::Assert {
        assert_clock_given(&self.args);
        self.cmd.assert()
    }
}

pub fn bin() -> Bin {
    let mut cmd = assert_cmd::Command::new(bin_path());
    cmd.env_remove("AUTOREPAIR_CONFIG")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR");
    Bin { cmd, args: vec![] }
}

pub fn bin_path() -> PathBuf {
    assert_cmd::cargo::cargo_bin("autorepair")
}

/// A command that reads the clock (its clap definition has --now) must be given --now, so
/// that no test depends on the day it runs. Command lines clap refuses are not checked.
pub fn assert_clock_given(args: &[OsString]) {
    let cli = autorepair::cli::command(autorepair::FAMILIES);
    let Ok(matches) = cli
        .clone()
        .try_get_matches_from(std::iter::once(OsString::from("autorepair")).chain(args.to_vec()))
    else {
        return;
    };
    let (mut command, mut m) = (&cli, &matches);
    while let Some((name, sub)) = m.subcommand() {
        command = command.find_subcommand(name).unwrap();
        m = sub;
    }
    if command.get_arguments().any(|a| a.get_id() == "now") {
        assert_eq!(
            m.value_source("now"),
            Some(ValueSource::CommandLine),
            "`autorepair {}` reads the clock: pass --now",
            args.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
}

pub fn demo_copy(dir: &Path) -> PathBuf {
    let path = dir.join("demo.json");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo.json"),
        &path,
    )
    .unwrap();
    path
}

/// Edits one instance's tags in a fleet file, saved whole (an editor's rename: a daemon reads
/// the file between two passes).
pub fn edit_tags(path: &Path, instance: &str, edit: impl FnOnce(&mut Vec<serde_json::Value>)) {
    let mut fleet: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let found = fleet["instances"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|i| i["name"] == instance)
        .unwrap_or_else(|| panic!("no instance {instance} in {}", path.display()));
    edit(found["tags"].as_array_mut().unwrap());
    let new = path.with_extension("new");
    std::fs::write(&new, fleet.to_string()).unwrap();
    std::fs::rename(&new, path).unwrap();
}

pub fn load(path: &Path) -> Snapshot {
    parse_fleet(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn stderr_of(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}
