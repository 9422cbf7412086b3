//! The one error of a command, the face's or a family's own, and the exit status of each: a
//! family's command fails with the same words and exit as the face's.

use super::{Exit, OpenError};
use crate::{
    admin::AdminError,
    engine::{BackendError, ObjectRef},
    lock::LockError,
    sabakan::cli::{CliError, Failure as SabakanFailure},
};
use std::path::PathBuf;

/// Why a command failed. Each says what is at fault; [`Error::exit`] gives its exit status.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The lock is held by another run, or cannot be opened.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// A command an earlier pass started may still run (its pass was killed).
    #[error(transparent)]
    EarlierCommand(#[from] crate::child::EarlierCommand),
    /// The fleet file cannot be read.
    #[error(transparent)]
    Open(Box<BackendError>),
    /// No client can be made for the endpoint.
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
    /// An edit the fleet refuses.
    #[error(transparent)]
    Edit(AdminError),
    /// An edit failed.
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
            Error::Connect(_)
            | Error::Edit(_)
            | Error::Select { .. }
            | Error::NoSuchTarget { .. }
            | Error::NotATarget { .. } => Exit::Usage,
            Error::Sabakan(e) => match e.failure {
                SabakanFailure::Refused | SabakanFailure::Apply => Exit::Partial,
                SabakanFailure::Usage => Exit::Usage,
                SabakanFailure::Unreachable => Exit::Unreadable,
                SabakanFailure::Busy => Exit::Busy,
            },
            Error::Output(_) => Exit::Usage,
        }
    }

    /// A reader that stopped reading (`status | head -1`): no failure.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Output(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

impl From<OpenError> for Error {
    fn from(e: OpenError) -> Error {
        match e {
            OpenError::Open(e) => Error::Open(e.into()),
            OpenError::Connect(e) => Error::Connect(e.into()),
        }
    }
}
