//! The binary-facing layer: the command line ([`cli`]), the settings stage that resolves it
//! once ([`settings`]), the printer that owns standard output ([`printer`]), and one module per
//! job: passes (`run`), status/explain/snapshot (`inspect`), the marks' lint (`tags`), the admin
//! verbs (`admin`). [`run()`] returns the exit status or a typed
//! error; `main` only maps that to the process's exit code.

pub mod cli;
pub mod complete;
pub mod family;
pub mod man;
pub mod registry;
pub mod settings;
pub use crate::plug::printer;

mod admin;
mod daemon;
mod fleet;
mod inspect;
mod logs;
mod run;
pub mod tags;

pub use self::family::FamilyFace;
use self::printer::Printer;
pub use self::registry::{Entry, Registered};
use self::settings::{Env, FleetJob, Job, Logs, Settings, SettingsError};
use crate::{
    admin::AdminError,
    engine::{BackendError, ObjectRef},
    lock::LockError,
    plug::Failure as FamilyFailure,
    sabakan::{
        self,
        cli::{CliError, Failure},
    },
};
use std::path::PathBuf;

use crate::plug::LOG_TARGET;

pub use crate::plug::Exit;

/// Why a command failed. Each says what is at fault; [`Error::exit`] gives its exit status.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The lock is held by another run, or cannot be opened.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// A command an earlier pass started may still run (its pass was killed).
    #[error(transparent)]
    EarlierCommand(#[from] crate::child::EarlierCommand),
    /// The fleet file cannot be read.
    #[error(transparent)]
    Open(Box<BackendError>),
    /// No RAPI client can be made for the endpoint.
    #[error(transparent)]
    Connect(Box<BackendError>),
    #[error("cannot read the fleet from {from}")]
    Read {
        from: String,
        source: Box<BackendError>,
    },
    /// The fleet could not be read (by an admin verb or the simulator).
    #[error(transparent)]
    Snapshot(Box<BackendError>),
    /// The fleet (or a generated one) could not be saved.
    #[error(transparent)]
    Save(Box<BackendError>),
    #[error(
        "pass {pass}: could not save the fleet, so none of its {actions} action(s) took effect"
    )]
    PassNotSaved {
        pass: u32,
        actions: usize,
        source: Box<BackendError>,
    },
    /// An admin verb the snapshot refuses.
    #[error(transparent)]
    Edit(AdminError),
    /// An admin verb's tag edit failed.
    #[error("{object}: {message}")]
    Act { object: ObjectRef, message: String },
    /// An admin verb's change the fleet took but did not apply in the time the admin gave.
    #[error(
        "{object}: the change was sent, but the fleet does not show it after {}: {what} still waits. It takes effect once the fleet applies it: `autorepair status` shows when, and --timeout waits longer{}",
        humantime::format_duration(*waited),
        if *braked { ". Meanwhile the brake holds: the passes running on this host stopped, and a pass that begins counts the queued suspend as given" } else { "" }
    )]
    NotApplied {
        object: ObjectRef,
        what: String,
        waited: std::time::Duration,
        /// A suspend pulled the brake: the passes running on this host stopped.
        braked: bool,
    },
    /// An admin verb's edit refused because the fleet's user may not write (exit 6, as `run`).
    #[error("{object}: {message}")]
    NoWriteAccess { object: ObjectRef, message: String },
    #[error("cannot write the report {}", path.display())]
    Report {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot write the brake {} for {object}: a pass running now on this host may go on starting repairs under it until it looks at the fleet's marks again. Make the lock's directory writable, then run the command again",
        path.display()
    )]
    Brake {
        path: PathBuf,
        object: ObjectRef,
        source: std::io::Error,
    },
    #[error("cannot write the metrics file {}", path.display())]
    Metrics {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `status OBJECT…` names nothing the fleet has.
    #[error("{from}")]
    Select {
        from: String,
        source: crate::admin::SelectError,
    },
    /// `explain` given a scope or another object that is no target: not "machine "rack/1" is
    /// not in …".
    #[error(
        "{object} is not one of the {kinds}: explain takes one {kind} (`autorepair status {object}` lists those it governs, when it is a scope)"
    )]
    NotATarget {
        object: String,
        kind: &'static str,
        kinds: &'static str,
    },
    #[error("{kind} {name:?} is not in {from}: `autorepair status` lists the {kinds}")]
    NoSuchTarget {
        name: String,
        from: String,
        /// The family's words for a target and its targets.
        kind: &'static str,
        kinds: &'static str,
    },
    /// A command another family has and this one not (`snapshot`, `repair`).
    #[error(transparent)]
    Unsupported(Box<FamilyFailure>),
    #[error(transparent)]
    Sabakan(CliError),
    #[error("writing to standard output")]
    Output(#[from] std::io::Error),
}

impl Error {
    pub fn exit(&self) -> Exit {
        match self {
            Error::NoWriteAccess { .. } => Exit::NoWriteAccess,
            // The change is made, only not applied yet: as an action that did not finish.
            Error::NotApplied { .. } => Exit::Partial,
            Error::Settings(SettingsError::FleetFile(_)) => Exit::Unreadable,
            Error::Settings(_) => Exit::Usage,
            Error::Lock(LockError::Busy { .. } | LockError::StillBusy { .. })
            | Error::EarlierCommand(_) => Exit::Busy,
            Error::Lock(_) => Exit::Usage,
            Error::Open(_)
            | Error::Read { .. }
            | Error::Snapshot(_)
            | Error::Save(_)
            | Error::PassNotSaved { .. }
            | Error::Act { .. }
            | Error::Metrics { .. }
            | Error::Brake { .. }
            | Error::Report { .. } => Exit::Unreadable,
            Error::Unsupported(_)
            | Error::Connect(_)
            | Error::Edit(_)
            | Error::Select { .. }
            | Error::NoSuchTarget { .. }
            | Error::NotATarget { .. } => Exit::Usage,
            Error::Sabakan(e) => match e.failure {
                Failure::Refused | Failure::Apply => Exit::Partial,
                Failure::Usage => Exit::Usage,
                Failure::Unreachable => Exit::Unreadable,
                Failure::Busy => Exit::Busy,
            },
            Error::Output(_) => Exit::Usage,
        }
    }

    /// The error and every cause under it, `: `-separated, each said once.
    pub fn chain(&self) -> Chain<'_> {
        Chain(self)
    }

    /// Says on standard error why the command failed, and gives its exit status. A reader that
    /// stopped reading (`status | head -1`) is no failure: nothing is said, and the exit is 0.
    pub fn report(&self) -> Exit {
        if let Error::Output(e) = self
            && e.kind() == std::io::ErrorKind::BrokenPipe
        {
            return Exit::Ok;
        }
        Printer::standard(Default::default()).error(self.chain());
        self.exit()
    }
}

impl From<FamilyFailure> for Error {
    /// A family's own command fails as the face's commands do, with the same words and exit.
    fn from(failure: FamilyFailure) -> Error {
        match failure {
            FamilyFailure::Lock(e) => Error::Lock(e),
            FamilyFailure::Open(e) => Error::Open(e),
            FamilyFailure::Connect(e) => Error::Connect(e),
            FamilyFailure::Read { from, source } => Error::Read { from, source },
            FamilyFailure::Snapshot(e) => Error::Snapshot(e),
            FamilyFailure::Save(e) => Error::Save(e),
            FamilyFailure::Act { object, message } => Error::Act { object, message },
            FamilyFailure::Edit(e) => Error::Edit(e),
            FamilyFailure::Output(e) => Error::Output(e),
            unsupported @ FamilyFailure::Unsupported { .. } => {
                Error::Unsupported(Box::new(unsupported))
            }
        }
    }
}

impl From<crate::plug::OpenError> for Error {
    fn from(e: crate::plug::OpenError) -> Error {
        FamilyFailure::from(e).into()
    }
}

/// An error with its causes, as one line.
pub struct Chain<'a>(&'a (dyn std::error::Error + 'static));

impl std::fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

/// The process: the command line parsed over `families` (clap says what is wrong with it and
/// exits 2), the command run, its failure said, and the exit status; or, asked by a shell's
/// completion script, the object names it completes (`complete.rs`); or the man page
/// (`autorepair man`, `man.rs`).
pub fn main(families: &[&dyn Registered]) -> std::process::ExitCode {
    let home = std::env::var("HOME").ok();
    if let Some(words) = complete::asked(std::env::args_os(), home.as_deref()) {
        return complete::run(families, words);
    }
    if let Some(asked) = man::asked(std::env::args_os()) {
        return man::run(families, asked);
    }
    let parsed = match cli::parse_from(families, std::env::args_os()) {
        Ok(parsed) => parsed,
        Err(e) => e.exit(),
    };
    match run(parsed, families) {
        Ok(exit) => exit.into(),
        Err(error) => error.report().into(),
    }
}

/// Runs the command: logs set up, settings resolved, the job done.
pub fn run(parsed: cli::Parsed, families: &[&dyn Registered]) -> Result<Exit, Error> {
    let env = Env::from_process();
    let logs = Logs::resolve(&parsed.cli.global, &env, &parsed.cli.command);
    logs.init();
    let Settings { logs, output, job } = Settings::resolve(parsed, families, logs, &env)?;
    let mut printer = Printer::standard(output);
    let out = &mut printer;
    match job {
        Job::Family(job) => job.run(out, &logs),
        Job::Sabakan(cmd) => sabakan::cli::run(cmd)
            .map(|done| match done {
                sabakan::cli::Done::Changed => Exit::Changed,
                sabakan::cli::Done::Unchanged => Exit::Ok,
            })
            .map_err(Error::Sabakan),
        Job::Fleet(job) => job.run(out, &logs),
    }
}

/// A command of a family only the job itself knows (on its fleet, or one that needs none):
/// the face runs it without naming the family, and each family's commands are monomorphised
/// once, by [`fleet_job`] and the registry.
pub trait FleetCommand: std::fmt::Debug + Send {
    fn run(self: Box<Self>, out: &mut Printer, logs: &Logs) -> Result<Exit, Error>;
    /// The job as its family's type, for tests that look inside it.
    #[cfg(test)]
    fn as_any(&self) -> &dyn std::any::Any;
}

impl<F: FamilyFace + 'static> FleetCommand for FleetJob<F>
where
    FleetJob<F>: Send,
{
    fn run(self: Box<Self>, out: &mut Printer, logs: &Logs) -> Result<Exit, Error> {
        fleet_job(out, logs, *self)
    }

    #[cfg(test)]
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Runs a command on a fleet of the family `F`.
fn fleet_job<F: FamilyFace>(
    out: &mut Printer,
    logs: &Logs,
    job: FleetJob<F>,
) -> Result<Exit, Error> {
    match job {
        FleetJob::Status { fleet, clock, view } => inspect::status(out, &fleet, clock, &view),
        FleetJob::Explain {
            fleet,
            clock,
            instance,
            names_only,
        } => inspect::explain(out, &fleet, clock, &instance, names_only),
        FleetJob::Report { fleet, clock, html } => inspect::report(out, &fleet, clock, &html),
        FleetJob::Lint { fleet, clock } => tags::lint(out, &fleet, clock),
        FleetJob::Snapshot { fleet, output } => inspect::snapshot(out, &fleet, output.as_deref()),
        FleetJob::Own {
            fleet,
            lock,
            command,
        } => Ok(crate::plug::cli::Commands::run(
            command,
            &fleet.source,
            out,
            &lock,
            fleet.lock_wait,
        )?),
        FleetJob::Run { fleet, run } => run::run(out, logs, &fleet, &run),
        FleetJob::Admin {
            fleet,
            lock,
            object,
            verb,
            applied_within,
        } => admin::admin(out, logs, &fleet, &lock, &object, &verb, applied_within),
        #[cfg(any(test, feature = "testkit"))]
        FleetJob::Simulate { fleet, simulate } => {
            Ok(F::simulate(&fleet.source, &fleet.limits, &simulate, out)?)
        }
    }
}
