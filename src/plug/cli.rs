//! Command-line pieces the face and a family share: the clock and output flags, and the
//! commands a family adds of its own.

use super::printer::Printer;
use super::{Error, Exit, FamilyFace};
use crate::engine::text::parse_time;
use clap::Args;
use std::fmt;
use std::path::Path;
use std::time::Duration;

#[derive(Debug, Args, Clone, Copy)]
pub struct ClockArgs {
    /// Pretend it is this time, RFC 3339 or Unix seconds (for replays and tests) [default: now].
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub now: Option<i64>,
}

/// `-o FORMAT`: how a command that shows the fleet prints it, as kubectl's `-o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One JSON document (as --json).
    Json,
    /// One YAML document.
    Yaml,
    /// The table with more columns.
    Wide,
    /// Only each row's name, as KIND/NAME, one a line (for scripts).
    Name,
}

/// A family's own commands, beside those the face gives every family (the machines family's
/// `repair …`, ckecli's verbs): added to the command line after the face's, refused on a fleet
/// of another family, and run by the family on its fleet. A family with none says
/// `type Commands = NoCommands;`.
pub trait Commands<F: FamilyFace>: clap::Subcommand + fmt::Debug + Send + Sync + 'static {
    /// The command's `--now`, which the fleet is read at.
    fn now(&self) -> Option<i64> {
        None
    }
    /// How the command asks its output printed: `--json`, or `-o`.
    fn output(&self) -> (bool, Option<Format>) {
        (false, None)
    }
    /// Runs the command on the family's fleet. `lock` is the fleet's lock file: a command that
    /// writes takes it (waiting `lock_wait` when asked), as the admin verbs do.
    fn run(
        self,
        source: &F::Source,
        out: &mut Printer,
        lock: &Path,
        lock_wait: Option<Duration>,
    ) -> Result<Exit, Error>;
}

/// The commands of a family that has none of its own.
#[derive(Debug)]
pub enum NoCommands {}

impl clap::FromArgMatches for NoCommands {
    fn from_arg_matches(_matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Err(clap::Error::new(clap::error::ErrorKind::InvalidSubcommand))
    }

    fn update_from_arg_matches(&mut self, _matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        match *self {}
    }
}

impl clap::Subcommand for NoCommands {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        cmd
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        cmd
    }

    fn has_subcommand(_name: &str) -> bool {
        false
    }
}

impl<F: FamilyFace> Commands<F> for NoCommands {
    fn run(
        self,
        _source: &F::Source,
        _out: &mut Printer,
        _lock: &Path,
        _lock_wait: Option<Duration>,
    ) -> Result<Exit, Error> {
        match self {}
    }
}
