//! The binary-facing layer: the command line ([`cli`]), the settings stage that resolves it
//! once ([`settings`]), the printer that owns standard output ([`printer`]), and one module per
//! job: passes (`run`), status/explain/report (`inspect`), the marks' lint (`tags`), the admin
//! verbs (`admin`). [`run()`] returns the exit status or a typed
//! error; `main` only maps that to the process's exit code.

pub mod cli;
pub mod complete;
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
mod words;

use self::printer::Printer;
pub use self::registry::{Entry, Registered};
use self::settings::{Env, FleetJob, Job, Logs, Settings, SettingsError};
pub use crate::plug::FamilyFace;
use crate::sabakan;

use crate::plug::LOG_TARGET;

pub use crate::plug::Exit;

/// Why the command line failed: what it, the config file or the environment gets wrong, or
/// the command itself (the face's or a family's own). [`Error::exit`] gives its exit status.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(transparent)]
    Command(#[from] crate::plug::Error),
}

impl Error {
    pub fn exit(&self) -> Exit {
        match self {
            Error::Settings(SettingsError::FleetFile(_)) => Exit::Unreadable,
            Error::Settings(_) => Exit::Usage,
            Error::Command(e) => e.exit(),
        }
    }

    /// The error and every cause under it, `: `-separated, each said once.
    pub fn chain(&self) -> Chain<'_> {
        Chain(self)
    }

    /// Says on standard error why the command failed, and gives its exit status. A reader that
    /// stopped reading (`status | head -1`) is no failure: nothing is said, and the exit is 0.
    pub fn report(&self) -> Exit {
        if let Error::Command(e) = self
            && e.is_broken_pipe()
        {
            return Exit::Ok;
        }
        Printer::standard(Default::default()).error(self.chain());
        self.exit()
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
        Job::Family(job) => Ok(job.run(out, &logs)?),
        Job::Sabakan(cmd) => sabakan::cli::run(cmd)
            .map(|done| match done {
                sabakan::cli::Done::Changed => Exit::Changed,
                sabakan::cli::Done::Unchanged => Exit::Ok,
            })
            .map_err(|e| crate::plug::Error::Sabakan(e).into()),
        Job::Fleet(job) => Ok(job.run(out, &logs)?),
    }
}

/// A command of a family only the job itself knows (on its fleet, or one that needs none):
/// the face runs it without naming the family, and each family's commands are monomorphised
/// once, by [`fleet_job`] and the registry.
pub trait FleetCommand: std::fmt::Debug + Send {
    fn run(self: Box<Self>, out: &mut Printer, logs: &Logs) -> Result<Exit, crate::plug::Error>;
    /// The job as its family's type, for tests that look inside it.
    #[cfg(test)]
    fn as_any(&self) -> &dyn std::any::Any;
}

impl<F: FamilyFace + 'static> FleetCommand for FleetJob<F>
where
    FleetJob<F>: Send,
{
    fn run(self: Box<Self>, out: &mut Printer, logs: &Logs) -> Result<Exit, crate::plug::Error> {
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
) -> Result<Exit, crate::plug::Error> {
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
        FleetJob::Snapshot {
            fleet,
            output,
            snapshot,
        } => snapshot(&fleet.source, out, output.as_deref()),
        FleetJob::Own {
            fleet,
            lock,
            command,
        } => crate::plug::cli::Commands::run(command, &fleet.source, out, &lock, fleet.lock_wait),
        FleetJob::Run { fleet, run } => run::run(out, logs, &fleet, &run),
        FleetJob::Admin {
            fleet,
            lock,
            object,
            verb,
            applied_within,
        } => admin::admin(out, logs, &fleet, &lock, &object, &verb, applied_within),
        #[cfg(any(test, feature = "testkit"))]
        FleetJob::Simulate {
            fleet,
            simulate,
            simulator,
        } => simulator(&fleet.source, &fleet.limits, &simulate, out),
    }
}
