//! What a family implements to be driven by the command line, and what it may use of the
//! command line's machinery: the face imports this module and every family, and a family
//! imports this module and the engine, never the face (tests/it/layout.rs checks it).
//!
//! A family is registered by implementing [`FamilyFace`] (its printed forms, where its fleet
//! is and how it is opened, locked and described, and the commands only some families have)
//! and adding one line to the list `main` passes to the face (docs/architecture.md).

pub mod claim;
pub mod cli;
mod error;
#[cfg(any(test, feature = "testkit"))]
pub mod generate;
pub mod help;
pub mod man;
pub mod marks;
pub mod printer;
#[cfg(any(test, feature = "testkit"))]
pub mod simulate;

pub use self::error::Error;
use self::printer::Printer;
use crate::{
    engine::{Backend, BackendError, Family, Limits, ObjectRef, Plan},
    lock::LockError,
};
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

/// A family as the command line and its output show it.
pub trait FamilyFace: Family {
    /// The status table's columns for [`Family::Facts`], between STATE and NEEDS.
    const FACT_COLUMNS: &'static [&'static str];
    /// The family's name, as the `family` label of its metrics says it: two families writing
    /// textfiles on one host must not export the same series.
    const FAMILY: &'static str;
    /// What a fleet of this family holds, as a refusal names it ("Ganeti instances").
    const HOLDS: &'static str;

    /// Where the family's fleet is and what the family reads beside it (its config section,
    /// its files), as the settings stage resolved them once.
    type Source: fmt::Debug + Send + Sync + 'static;
    /// The family's own flags. Each is `global` (it may come before or after the
    /// subcommand) and has an id no other family uses.
    type Args: clap::Args + fmt::Debug;
    /// The family's own commands, beside the face's ([`cli::NoCommands`]: none).
    type Commands: cli::Commands<Self>;
    /// The family's part of the config file: the top-level keys [`FamilyFace::CONFIG_KEYS`]
    /// (sections or plain keys), read strictly: an unknown key in them is an error. Its
    /// default, serialised, is what the man page gives as each key's default.
    type Config: FamilyConfig;
    /// The config file's top-level keys that are this family's.
    const CONFIG_KEYS: &'static [&'static str];
    /// The ids of the flags of [`FamilyFace::Args`] that name a fleet: of all families' such
    /// flags, at most one may be given.
    const FLEET_FLAGS: &'static [&'static str];
    /// How to name a fleet of this family, for the error that no fleet was named
    /// (`--cluster FILE or --rapi URL (a Ganeti cluster)`).
    const FLEET_HINT: &'static str;
    /// The family's text on the man page: its sources, objects, sections, config keys,
    /// files and examples.
    const MAN: &'static man::ManPage = &man::ManPage::NONE;
    /// The family's words in the command line's help and errors: its objects, its lock, its
    /// Kubernetes cluster, its simulated world.
    const HELP: &'static help::Help = &help::Help::NONE;
    /// `generate`'s maker of synthetic fleets of this family, if it has one.
    #[cfg(any(test, feature = "testkit"))]
    const GENERATOR: Option<&'static dyn generate::Generator> = None;
    /// `snapshot`, where the family can save its fleet as a file to replay offline: on a
    /// fleet of a family without one the face refuses the command, naming the families that
    /// have one.
    const SNAPSHOT: Option<Snapshotter<Self>> = None;
    /// `simulate`, where the family has a simulated world to run chaos scenarios in over its
    /// fleet as it is, in memory: without one, refused as `snapshot` is.
    #[cfg(any(test, feature = "testkit"))]
    const SIMULATOR: Option<simulate::Simulator<Self>> = None;
    /// Where the fleet itself names the one replica that acts among several (a Ganeti
    /// cluster's master): asked before each pass and as each lock is taken. `None`: every
    /// replica may act, under the lock [`FamilyFace::lock_path`] named.
    const REPLICAS: Option<Replicas<Self>> = None;
    /// What `run --loop` watches and when it wakes, beyond what the engine holds back by
    /// time. `None`: nothing is watched, and no replicas elect a leader.
    const DAEMON: Option<Daemon<Self>> = None;
    /// The family's own metrics, in its users' names, beside the engine's. `None`: the
    /// engine's alone.
    const METRICS: Option<Metrics<Self>> = None;
    /// The planner's limits for this fleet, from the config's `[limits]` (with the keys the
    /// file sets: the rest are defaults) and the fleet's own settings. `None`: `[limits]` as
    /// read.
    const LIMITS: Option<LimitsFor<Self>> = None;
    /// What in the fleet cannot be read and holds what it governs until a person mends or
    /// removes it, each said as that person acts on it. A pass counts each as an error (and
    /// exits as a partial pass): a fleet that needs a person must not look healthy; the log
    /// says each once while it lasts. Marks the planner reads are its lint; this is for
    /// records it cannot see as marks. `None`: the family has no such records.
    const DAMAGED: Option<DamagedIn<Self>> = None;

    /// The fleet this family's flags (or, asked to look there, its config keys) name, if
    /// any.
    fn claim(
        args: &Self::Args,
        config: &Self::Config,
        shared: &claim::Shared,
        look: claim::Look,
    ) -> Option<claim::Claim<Self::Source>>;

    /// An object as an admin names it on the command line (`KIND/NAME`; a bare name is a
    /// target), or what is wrong with the text.
    fn parse_object(text: &str) -> Result<ObjectRef, crate::engine::object::ObjectRefError>;
    /// Where the fleet is, for messages: a file's path, a URL, a cluster.
    fn describe(source: &Self::Source) -> String;
    /// Every file the family reads for this fleet, each with the flag that names it: no
    /// output of a command may be one of them. Every family says (no default): a file
    /// forgotten here is a file an output flag may destroy.
    fn input_files(source: &Self::Source) -> Vec<(&'static str, PathBuf)>;
    /// Whether the backend keeps its writes in memory until the fleet is saved (a file),
    /// rather than making each one with the call that asks for it.
    fn buffers_writes(source: &Self::Source) -> bool;
    /// The lock of this fleet (see `lock`): `named` is --lock-file or the config's lock_file;
    /// two fleets never share a lock unless it says so.
    fn lock_path(source: &Self::Source, named: Option<PathBuf>) -> Result<PathBuf, LockPathError>;
    /// The fleet's backend, on the command's clock where the family reads one.
    fn open(source: &Self::Source) -> Result<Box<dyn Backend<Self>>, OpenError>;
    /// The planner's settings: the family's own, and what this backend cannot run.
    fn settings(source: &Self::Source, backend: &dyn Backend<Self>) -> Self::Settings;
    /// One target's cells under [`FamilyFace::FACT_COLUMNS`].
    fn fact_cells(facts: &Self::Facts) -> Vec<String>;
    /// Where the target lives and runs, as `explain` says it (`on NODE, …`).
    fn facts_line(facts: &Self::Facts) -> String;
    /// The limiter scope a target counts in (its group, zone, rack), by the name the family's
    /// [`DownDomain::scope_name`](crate::engine::family::DownDomain) gives it: the report shows
    /// the targets of each scope beside that scope's limiter verdict. [`NO_SCOPE`] when it has
    /// none.
    fn report_scope<'a>(index: &Self::Index<'a>, target: &'a Self::Target) -> &'a str;
}

/// `snapshot`: the fleet saved as a file to replay offline (`output`), or printed.
pub type Snapshotter<F> =
    fn(&<F as FamilyFace>::Source, &mut Printer, Option<&Path>) -> Result<Exit, Error>;

/// [`FamilyFace::LIMITS`]: the limits of a fleet from the config's `[limits]` and the keys it
/// sets.
pub type LimitsFor<F> = fn(&<F as FamilyFace>::Source, &Limits, &BTreeSet<String>) -> Limits;

/// [`FamilyFace::DAMAGED`]: what in a snapshot needs a person, each said as they act on it.
pub type DamagedIn<F> = fn(&<F as Family>::Snapshot) -> Vec<String>;

/// A family's part of the config file ([`FamilyFace::Config`]), and what it makes of it
/// beyond serde's reading.
pub trait FamilyConfig:
    serde::de::DeserializeOwned + serde::Serialize + Default + fmt::Debug
{
    /// Checks the family's config beyond its shape (the face reads it for every family, used
    /// or not: a typo must not wait for the day the section is used).
    fn check(&self) -> Result<(), crate::config::ConfigProblem> {
        Ok(())
    }
    /// Moves keys of the config file's table that an older version read elsewhere to where
    /// the family reads them now (warning that they moved), before anything is read.
    fn upgrade(_table: &mut toml::Table, _path: &str) {}
}

/// A family's say in which replica acts and under which lock ([`FamilyFace::REPLICAS`]).
pub struct Replicas<F: FamilyFace> {
    /// Before each pass of `run`, before its lock: whether this replica may act now. `false`
    /// on a replica the fleet does not name (logging why): the pass is then skipped as done.
    pub may_act: fn(&F::Source) -> Result<bool, Error>,
    /// The lock as a run or an admin verb takes it, from the one [`FamilyFace::lock_path`]
    /// planned: a lock named by what the fleet says of itself (a Ganeti cluster's uuid) is
    /// asked of the fleet here, as it is taken, so that a replica that stands by never asks.
    pub lock_taken: fn(&F::Source, &Path) -> Result<PathBuf, Error>,
}

/// What a `run --loop` daemon asks of a family ([`FamilyFace::DAEMON`]).
pub struct Daemon<F: FamilyFace> {
    /// The live Kubernetes cluster of the fleet, which the daemon watches for changes and
    /// elects a leader in; `None` for a file or another kind of fleet.
    pub live: fn(&F::Source) -> Option<crate::k8s::Live>,
    /// The earliest moment after `now` at which a time threshold of the family's own falls
    /// due (a pass would then decide something new though nothing changed): the daemon wakes
    /// then rather than at its next resync. `None`: nothing is due.
    pub next_due: fn(&F::Snapshot, &F::Settings, i64) -> Option<i64>,
}

impl<F: FamilyFace> Daemon<F> {
    /// A daemon that watches `live` and has no thresholds of its own to wake for.
    pub const fn live(live: fn(&F::Source) -> Option<crate::k8s::Live>) -> Self {
        Daemon {
            live,
            next_due: |_, _, _| None,
        }
    }
}

/// A family's own metrics ([`FamilyFace::METRICS`]), in the names its users' tools know.
pub struct Metrics<F: FamilyFace> {
    /// The name its users' tools give the gauge "this replica leads" (CKE's `cke_leader`),
    /// written beside `autorepair_leader`, also by a replica that stands by.
    pub leader: Option<&'static str>,
    /// Its own series after a pass (Prometheus text), from what the pass planned.
    pub series: fn(&Plan<F>) -> String,
}

/// The target of the logs the command line's layer writes (a family's settings too): the
/// module they came from before it was split, kept so that log filters
/// (`--log autorepair::app=warn`) and log readers go on working.
pub const LOG_TARGET: &str = "autorepair::app";

/// The scope of a target that counts in none (its node or zone is unknown).
pub const NO_SCOPE: &str = "(none)";

/// Exit codes, documented in the man page and `--help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Exit {
    Ok = 0,
    /// The pass finished but some action failed; invalid tags; a simulated violation.
    Partial = 1,
    /// A usage or configuration error.
    Usage = 2,
    /// The fleet could not be read or saved (or the metrics file written).
    Unreadable = 3,
    /// Another run holds the lock.
    Busy = 4,
    /// `sabakan update --write` changed the file (or, with --dry-run, would).
    Changed = 5,
    /// The fleet's credentials may read but not write (a RAPI user without the `write`
    /// option): the pass stopped at its first write.
    NoWriteAccess = 6,
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit as u8)
    }
}

/// Why a fleet's backend could not be made.
#[derive(Debug)]
pub enum OpenError {
    /// The fleet file cannot be read.
    Open(BackendError),
    /// No client can be made for the endpoint.
    Connect(BackendError),
}

/// Why no lock can be named for a fleet.
#[derive(Debug)]
pub enum LockPathError {
    /// The fleet file to take the lock beside is missing or unreadable.
    FleetFile(BackendError),
    /// No lock can be named for the URL.
    Url(LockError),
}

/// What a family tells a person whose fleet file does not exist (the common mistake: a typo in
/// the path), in its own words: a family's advice must never send its user to another
/// family's flags or tools.
#[derive(Debug, Clone, Copy)]
pub struct FileHint {
    /// The flag that names the file (`--cluster`).
    pub flag: &'static str,
    /// The config key that names it, where the config may (`fleet_file`).
    pub config_key: Option<&'static str>,
    /// How to make one, where the family has a way, said as the end of a sentence.
    pub make: Option<&'static str>,
}

impl fmt::Display for FileHint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "check the path given with {}", self.flag)?;
        if let Some(key) = self.config_key {
            write!(f, " (or {key} in the config)")?;
        }
        if let Some(make) = self.make {
            write!(f, "; {make}")?;
        }
        Ok(())
    }
}

/// Why a fleet file cannot be read: a missing one with the family's advice in words rather
/// than as an OS error.
pub fn unreadable(path: &Path, e: &std::io::Error, hint: &FileHint) -> BackendError {
    fleet_file_error(path, e, hint, "cannot read it: ")
}

fn fleet_file_error(path: &Path, e: &std::io::Error, hint: &FileHint, other: &str) -> BackendError {
    BackendError::FleetFile {
        path: path.display().to_string(),
        message: if e.kind() == std::io::ErrorKind::NotFound {
            format!("does not exist: {hint}")
        } else {
            format!("{other}{e}")
        },
    }
}

/// What a fleet's lock is named by when neither --lock-file nor the config's lock_file names
/// one.
#[derive(Debug)]
pub enum LockSite<'a> {
    /// A fleet file: the lock beside it ([`crate::lock::beside`]), with the family's advice
    /// for a file that does not exist.
    File(&'a Path, &'a FileHint),
    /// A service at a URL: one lock per host and port ([`crate::lock::for_url`]).
    Url(&'a str),
    /// A lock the family names itself.
    Path(PathBuf),
}

/// The lock of a fleet (what [`FamilyFace::lock_path`] returns): `named` (--lock-file,
/// lock_file), else the one `site` names. A fleet file is checked even with a named lock: a
/// typo in its path must leave no lock file behind. A URL is read only to name the lock, so a
/// named lock needs nothing of it.
pub fn fleet_lock(site: LockSite<'_>, named: Option<PathBuf>) -> Result<PathBuf, LockPathError> {
    match site {
        LockSite::File(fleet, hint) => {
            // `beside`'s own refusals (hard links) are whole sentences about the file.
            let beside = crate::lock::beside(fleet)
                .map_err(|e| LockPathError::FleetFile(fleet_file_error(fleet, &e, hint, "")))?;
            Ok(named.unwrap_or(beside))
        }
        LockSite::Url(url) => match named {
            Some(path) => Ok(path),
            None => crate::lock::for_url(url).map_err(LockPathError::Url),
        },
        LockSite::Path(own) => Ok(named.unwrap_or(own)),
    }
}

/// Whether `said` is new: a daemon's every pass meets the same damaged record, bad mark or
/// split label, and saying each once says all there is to say; said again when it comes back
/// after a pass without it (mended, then damaged again), or changes, or after a restart.
/// `status` and `tags lint` list them all at any time.
pub fn first_time(said: &str) -> bool {
    said_so_far().first_time(said)
}

/// A pass read the fleet to its end: what it did not say is gone from the fleet, and is said
/// again should it come back.
pub fn pass_ended() {
    said_so_far().pass_ended();
}

fn said_so_far() -> std::sync::MutexGuard<'static, Said> {
    static SAID: std::sync::Mutex<Said> = std::sync::Mutex::new(Said::new());
    SAID.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What was said in the pass under way and in the one before it.
#[derive(Debug)]
struct Said {
    this_pass: Option<std::collections::HashSet<String>>,
    last_pass: Option<std::collections::HashSet<String>>,
}

impl Said {
    const fn new() -> Said {
        Said {
            this_pass: None,
            last_pass: None,
        }
    }

    fn first_time(&mut self, said: &str) -> bool {
        let before = self.last_pass.as_ref().is_some_and(|l| l.contains(said));
        let now = self.this_pass.get_or_insert_with(Default::default);
        now.insert(said.to_owned()) && !before
    }

    fn pass_ended(&mut self) {
        self.last_pass = self.this_pass.take();
    }
}

#[cfg(test)]
mod tests {
    use super::Said;

    #[test]
    fn a_warning_is_said_once_while_it_lasts_and_again_when_it_comes_back() {
        // Each pass: what it meets, and what of it is said.
        type Pass<'a> = &'a [(&'a str, bool)];
        let cases: &[(&str, &[Pass])] = &[
            (
                "lasting",
                &[&[("a", true)], &[("a", false)], &[("a", false)]],
            ),
            ("twice in a pass", &[&[("a", true), ("a", false)]]),
            (
                "mended, then back",
                &[&[("a", true)], &[], &[("a", true)], &[("a", false)]],
            ),
            (
                "changed",
                &[&[("a=1", true)], &[("a=2", true)], &[("a=1", true)]],
            ),
            (
                "one of two goes",
                &[
                    &[("a", true), ("b", true)],
                    &[("b", false)],
                    &[("a", true), ("b", false)],
                ],
            ),
        ];
        for (name, passes) in cases {
            let mut said = Said::new();
            for (n, pass) in passes.iter().enumerate() {
                for (text, expected) in *pass {
                    assert_eq!(said.first_time(text), *expected, "{name}: pass {n}: {text}");
                }
                said.pass_ended();
            }
        }
    }
}
