//! The list of families the command line knows, and what the face does with each: adds its
//! flags, reads its part of the config file, asks it whether the command names a fleet of
//! its own, and builds the command for the family that does; and the commands a family offers
//! that need no fleet (`tags parse` in its mark language, `generate` where it has a
//! generator). A family registers by its one
//! line in [`crate::FAMILIES`] (docs/architecture.md, "Adding a family").

use super::cli::{Command, GlobalArgs};
use super::printer::Printer;
use super::settings::{Fleet, FleetJob, Logs, Output, SettingsError, fleet_job};
use super::{Exit, FleetCommand};
use crate::config::Config;
use crate::plug::Error;
use crate::plug::FamilyFace;
use crate::plug::claim::{By, Claim, Look, Shared};
use crate::plug::cli::Commands;
#[cfg(any(test, feature = "testkit"))]
use crate::plug::generate::{Generate, Generator};
use crate::plug::help::Help;
use crate::plug::man::ManPage;
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, FromArgMatches, Subcommand};
use std::marker::PhantomData;

/// A family as the face drives it, its type erased: [`Entry`] is the one implementation.
pub trait Registered: Sync {
    /// The family's name (`ganeti`).
    fn family(&self) -> &'static str;
    /// The command line with the family's flags added.
    fn augment(&self, cmd: clap::Command) -> clap::Command;
    /// The command line with the family's own commands added.
    fn augment_commands(&self, cmd: clap::Command) -> clap::Command;
    /// The family's own command the command line names, read; `None` when it names none of
    /// the family's.
    fn own_command(&self, matches: &ArgMatches)
    -> Option<Result<Box<dyn OwnCommand>, clap::Error>>;
    /// The ids of the family's flags that name a fleet.
    fn fleet_flags(&self) -> &'static [&'static str];
    /// The flag of the family's that names a fleet, as written (`--cluster`), when the
    /// command line gives one.
    fn fleet_flag_given(&self, matches: &ArgMatches) -> Option<String>;
    /// How to name a fleet of the family, for the error that none was named.
    fn fleet_hint(&self) -> &'static str;
    /// The config file's top-level keys that are the family's.
    fn config_keys(&self) -> &'static [&'static str];
    /// The family's repair levels, least destructive first (for completions and help).
    fn levels(&self) -> Vec<&'static str>;
    /// Moves keys an older version read elsewhere (see `FamilyConfig::upgrade`).
    fn upgrade_config(&self, table: &mut toml::Table, path: &str);
    /// The family's config keys with their defaults.
    fn config_defaults(&self) -> serde_json::Value;
    /// The family's text on the man page.
    fn man(&self) -> &'static ManPage;
    /// The family's words in the help and errors.
    fn help(&self) -> &'static Help;
    /// The flags of the family's that name a fleet, as written (`--cluster`), in the order
    /// of [`Registered::fleet_flags`].
    fn fleet_flags_written(&self) -> Vec<String>;
    /// `tags parse`: the marks described in the family's mark language.
    fn parse_marks(&self, marks: Vec<String>) -> Box<dyn FleetCommand>;
    /// `generate`: a synthetic fleet of the family; `None` when it has no generator.
    #[cfg(any(test, feature = "testkit"))]
    fn generate(&self, asked: Generate) -> Option<Box<dyn FleetCommand>>;
    /// Whether the family has a generator for `generate`.
    #[cfg(any(test, feature = "testkit"))]
    fn generates(&self) -> bool;
    /// Whether the family offers `command`.
    fn offers(&self, command: Optional) -> bool;
    /// The family's flags read from `matches` and its part of the config taken out of
    /// `config` (and checked, whether the family is used or not).
    fn prepare(
        &self,
        matches: &ArgMatches,
        config: &mut Config,
    ) -> Result<Box<dyn Prepared>, SettingsError>;
}

/// A command of the face's that only the families that register it offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Optional {
    /// [`FamilyFace::SNAPSHOT`].
    Snapshot,
    /// [`FamilyFace::SIMULATOR`].
    #[cfg(any(test, feature = "testkit"))]
    Simulate,
}

impl Optional {
    /// The command as it is typed.
    pub fn name(self) -> &'static str {
        match self {
            Optional::Snapshot => "snapshot",
            #[cfg(any(test, feature = "testkit"))]
            Optional::Simulate => "simulate",
        }
    }
}

/// The fleets a command may work on, for the refusal on a fleet of a family that does not
/// offer it: the families that do, and how to name a fleet of each
/// ("a fleet of the ganeti or metal3 family, named by --cluster FILE …; --kube-objects FILE …").
pub fn works_on(families: &[&dyn Registered], offers: impl Fn(&dyn Registered) -> bool) -> String {
    let offering: Vec<&dyn Registered> = families.iter().copied().filter(|f| offers(*f)).collect();
    let names: Vec<&str> = offering.iter().map(|f| f.family()).collect();
    let hints: Vec<&str> = offering.iter().map(|f| f.fleet_hint()).collect();
    match names.as_slice() {
        [] => "a fleet of a family that offers it, and none here does".to_owned(),
        [one] => format!("a fleet of the {one} family, named by {}", hints[0]),
        [init @ .., last] => format!(
            "a fleet of the {} or {last} family, named by {}",
            init.join(", "),
            hints.join("; ")
        ),
    }
}

/// A family's own command ([`FamilyFace::Commands`]), read, its family's type erased until the
/// fleet is known: on a fleet of another family it is refused.
pub trait OwnCommand: std::fmt::Debug + Send + Sync {
    /// The command's name (`repair`).
    fn name(&self) -> &str;
    /// The family whose command it is.
    fn family(&self) -> &'static str;
    /// How to name a fleet of that family, for the refusal on another's.
    fn fleet_hint(&self) -> &'static str;
    fn now(&self) -> Option<i64>;
    fn output(&self) -> (bool, Option<crate::plug::cli::Format>);
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any>;
}

/// [`OwnCommand`] of the family `F`.
#[derive(Debug)]
pub(crate) struct Owned<F: FamilyFace> {
    pub name: String,
    pub command: F::Commands,
}

impl<F: FamilyFace + 'static> OwnCommand for Owned<F> {
    fn name(&self) -> &str {
        &self.name
    }

    fn family(&self) -> &'static str {
        F::FAMILY
    }

    fn fleet_hint(&self) -> &'static str {
        F::FLEET_HINT
    }

    fn now(&self) -> Option<i64> {
        Commands::now(&self.command)
    }

    fn output(&self) -> (bool, Option<crate::plug::cli::Format>) {
        Commands::output(&self.command)
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// Every key of the config file with its default: the file's own and each family's.
pub fn config_defaults(families: &[&dyn Registered]) -> serde_json::Value {
    let mut all = crate::config::own_defaults();
    for family in families {
        if let (Some(all), serde_json::Value::Object(keys)) =
            (all.as_object_mut(), family.config_defaults())
        {
            all.extend(keys);
        }
    }
    all
}

/// A family's flags and config, read, waiting to be asked for its fleet.
pub trait Prepared {
    fn family(&self) -> &'static str;
    /// The family's flags given on the command line, as written (`--rapi-user`).
    fn flags_given(&self) -> &[String];
    /// The fleet the family's flags (or config) name, if any.
    fn claim(&self, shared: &Shared, look: Look) -> Option<Box<dyn Claimed>>;
}

/// A fleet a family claimed, its type erased.
pub trait Claimed {
    fn family(&self) -> &'static str;
    fn by(&self) -> By;
    fn uses_kubeconfig(&self) -> bool;
    /// The objects of the fleet an admin may name (for the shells' completion), read as
    /// `status` reads the fleet; nothing is written and no lock taken. `None`: the fleet
    /// cannot be made, opened or read.
    fn nameable(self: Box<Self>) -> Option<crate::admin::Nameable>;
    /// The command on the fleet.
    fn job(
        self: Box<Self>,
        global: &GlobalArgs,
        config: &Config,
        command: Command,
        output: &mut Output,
        families: &[&dyn Registered],
    ) -> Result<Box<dyn FleetCommand>, SettingsError>;
}

/// The family of `F`, as registered.
pub struct Entry<F>(PhantomData<fn() -> F>);

impl<F> Entry<F> {
    pub const NEW: Entry<F> = Entry(PhantomData);
}

impl<F: FamilyFace + 'static> Registered for Entry<F>
where
    FleetJob<F>: Send,
{
    fn family(&self) -> &'static str {
        F::FAMILY
    }

    fn augment(&self, cmd: clap::Command) -> clap::Command {
        F::Args::augment_args(cmd)
    }

    fn augment_commands(&self, cmd: clap::Command) -> clap::Command {
        F::Commands::augment_subcommands(cmd)
    }

    fn own_command(
        &self,
        matches: &ArgMatches,
    ) -> Option<Result<Box<dyn OwnCommand>, clap::Error>> {
        let name = matches.subcommand_name()?;
        if !F::Commands::has_subcommand(name) {
            return None;
        }
        let name = name.to_owned();
        Some(
            F::Commands::from_arg_matches(matches)
                .map(|command| Box::new(Owned::<F> { name, command }) as Box<dyn OwnCommand>),
        )
    }

    fn fleet_flags(&self) -> &'static [&'static str] {
        F::FLEET_FLAGS
    }

    fn fleet_flag_given(&self, matches: &ArgMatches) -> Option<String> {
        flags_given::<F>(matches)
            .into_iter()
            .find(|(id, _)| F::FLEET_FLAGS.contains(&id.as_str()))
            .map(|(_, written)| written)
    }

    fn fleet_hint(&self) -> &'static str {
        F::FLEET_HINT
    }

    fn parse_marks(&self, marks: Vec<String>) -> Box<dyn FleetCommand> {
        Box::new(ParseMarks::<F> {
            marks,
            family: PhantomData,
        })
    }

    #[cfg(any(test, feature = "testkit"))]
    fn generates(&self) -> bool {
        F::GENERATOR.is_some()
    }

    #[cfg(any(test, feature = "testkit"))]
    fn generate(&self, asked: Generate) -> Option<Box<dyn FleetCommand>> {
        let generator = F::GENERATOR?;
        Some(Box::new(Generating {
            family: F::FAMILY,
            generator,
            asked,
        }))
    }

    fn offers(&self, command: Optional) -> bool {
        match command {
            Optional::Snapshot => F::SNAPSHOT.is_some(),
            #[cfg(any(test, feature = "testkit"))]
            Optional::Simulate => F::SIMULATOR.is_some(),
        }
    }

    fn config_keys(&self) -> &'static [&'static str] {
        F::CONFIG_KEYS
    }

    fn levels(&self) -> Vec<&'static str> {
        use crate::engine::marks::Level;
        F::Level::LADDER.iter().map(|l| l.as_str()).collect()
    }

    fn upgrade_config(&self, table: &mut toml::Table, path: &str) {
        <F::Config as crate::plug::FamilyConfig>::upgrade(table, path);
    }

    fn config_defaults(&self) -> serde_json::Value {
        serde_json::to_value(F::Config::default()).unwrap_or_default()
    }

    fn man(&self) -> &'static ManPage {
        F::MAN
    }

    fn help(&self) -> &'static Help {
        F::HELP
    }

    fn fleet_flags_written(&self) -> Vec<String> {
        let cmd = F::Args::augment_args(clap::Command::new(F::FAMILY));
        F::FLEET_FLAGS
            .iter()
            .filter_map(|id| cmd.get_arguments().find(|a| a.get_id() == id))
            .map(|a| match a.get_long() {
                Some(long) => format!("--{long}"),
                None => a.get_id().to_string(),
            })
            .collect()
    }

    fn prepare(
        &self,
        matches: &ArgMatches,
        config: &mut Config,
    ) -> Result<Box<dyn Prepared>, SettingsError> {
        let args =
            F::Args::from_arg_matches(matches).map_err(|e| SettingsError::Flags(e.to_string()))?;
        let section: F::Config = config.take(F::CONFIG_KEYS)?;
        crate::plug::FamilyConfig::check(&section).map_err(|message| {
            crate::config::ConfigError {
                path: config.path.clone(),
                message,
            }
        })?;
        let flags_given = flags_given::<F>(matches)
            .into_iter()
            .map(|(_, written)| written)
            .collect();
        Ok(Box::new(Ready::<F> {
            args,
            config: section,
            flags_given,
        }))
    }
}

/// The family's flags given on the command line: each flag's id, and the flag as written
/// (`--rapi-user`).
fn flags_given<F: FamilyFace>(matches: &ArgMatches) -> Vec<(String, String)> {
    F::Args::augment_args(clap::Command::new(F::FAMILY))
        .get_arguments()
        .filter(|a| matches.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine))
        .map(|a| {
            let written = match a.get_long() {
                Some(long) => format!("--{long}"),
                None => a.get_id().to_string(),
            };
            (a.get_id().to_string(), written)
        })
        .collect()
}

/// `tags parse` in the family `F`'s mark language.
struct ParseMarks<F> {
    marks: Vec<String>,
    family: PhantomData<fn() -> F>,
}

impl<F> std::fmt::Debug for ParseMarks<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParseMarks")
            .field("marks", &self.marks)
            .finish()
    }
}

impl<F: FamilyFace + 'static> FleetCommand for ParseMarks<F> {
    fn run(self: Box<Self>, out: &mut Printer, _logs: &Logs) -> Result<Exit, Error> {
        crate::plug::marks::command::<F>(out, &self.marks)
    }

    #[cfg(test)]
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `generate` by a family's generator.
#[cfg(any(test, feature = "testkit"))]
struct Generating {
    family: &'static str,
    generator: &'static dyn Generator,
    asked: Generate,
}

#[cfg(any(test, feature = "testkit"))]
impl std::fmt::Debug for Generating {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generating")
            .field("family", &self.family)
            .field("asked", &self.asked)
            .finish()
    }
}

#[cfg(any(test, feature = "testkit"))]
impl FleetCommand for Generating {
    fn run(self: Box<Self>, out: &mut Printer, _logs: &Logs) -> Result<Exit, Error> {
        self.generator.generate(out, &self.asked)
    }

    #[cfg(test)]
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// [`Prepared`] for the family `F`.
struct Ready<F: FamilyFace> {
    args: F::Args,
    config: F::Config,
    flags_given: Vec<String>,
}

impl<F: FamilyFace + 'static> Prepared for Ready<F>
where
    FleetJob<F>: Send,
{
    fn family(&self) -> &'static str {
        F::FAMILY
    }

    fn flags_given(&self) -> &[String] {
        &self.flags_given
    }

    fn claim(&self, shared: &Shared, look: Look) -> Option<Box<dyn Claimed>> {
        F::claim(&self.args, &self.config, shared, look)
            .map(|c| Box::new(ClaimOf::<F>(c)) as Box<dyn Claimed>)
    }
}

/// [`Claimed`] for the family `F`.
struct ClaimOf<F: FamilyFace>(Claim<F::Source>);

impl<F: FamilyFace + 'static> Claimed for ClaimOf<F>
where
    FleetJob<F>: Send,
{
    fn family(&self) -> &'static str {
        F::FAMILY
    }

    fn by(&self) -> By {
        self.0.by
    }

    fn uses_kubeconfig(&self) -> bool {
        self.0.uses_kubeconfig
    }

    fn nameable(self: Box<Self>) -> Option<crate::admin::Nameable> {
        let source = self.0.source.ok()?;
        let snap = F::open(&source).ok()?.snapshot().ok()?;
        Some(crate::admin::nameable::<F>(&snap))
    }

    fn job(
        self: Box<Self>,
        global: &GlobalArgs,
        config: &Config,
        command: Command,
        output: &mut Output,
        families: &[&dyn Registered],
    ) -> Result<Box<dyn FleetCommand>, SettingsError> {
        let source = self.0.source.map_err(SettingsError::Family)?;
        let limits = match F::LIMITS {
            Some(limits) => limits(&source, &config.limits, &config.limits_given),
            None => config.limits.clone(),
        };
        let fleet = Fleet {
            source,
            limits,
            lock_wait: global.wait,
        };
        Ok(Box::new(fleet_job::<F>(
            global, config, fleet, command, output, families,
        )?))
    }
}
