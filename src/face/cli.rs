//! Command-line definitions (clap) only; the binary dispatches them.

use super::registry::{OwnCommand, Registered};
use crate::engine::text::{parse_duration, parse_interval, parse_positive_duration, parse_time};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

pub use crate::plug::cli::{ClockArgs, Format};
use std::time::Duration;

#[derive(Debug, Parser)]
#[command(
    name = "autorepair",
    version,
    about = "Repairs broken servers and VM instances automatically and safely, steered by their marks",
    long_about = "Repairs broken servers and VM instances automatically and safely, steered by their \
marks.\n\n\
Each pass reads the fleet, decides per target whether a repair is needed and allowed, starts the \
repairs and records every step in the targets' own marks. It keeps no state of its own.",
    after_help = "Exit codes: 0 ok; 1 the pass finished but some action failed (or tags parse/lint found \
invalid tags, or simulate found a violation); 2 usage or configuration error; 3 the fleet could not \
be read or saved (or the metrics file or report written); 4 another run holds the lock (or a killed pass's command still runs); 5 sabakan \
update --write changed the file; 6 the fleet refused a write for want of write access (the pass \
stopped at its first write)."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// The command line parsed over the families' flags: the face's own part, read, and the
/// matches each family reads its flags from.
#[derive(Debug)]
pub struct Parsed {
    pub cli: Cli,
    pub matches: clap::ArgMatches,
}

/// The whole command line: the face's flags and commands, and each family's flags (a flag
/// naming a fleet conflicts with every other such flag, of any family).
pub fn command(families: &[&dyn Registered]) -> clap::Command {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    // clap's derive gives an `Args` struct's doc comment to the command it augments as its
    // `about`: the program's own must stay.
    let (about, long_about) = (cmd.get_about().cloned(), cmd.get_long_about().cloned());
    for family in families {
        cmd = family.augment(cmd);
    }
    // After the face's: a family's commands are listed after those every family has.
    for family in families {
        cmd = family.augment_commands(cmd);
    }
    if let Some(about) = about {
        cmd = cmd.about(about);
    }
    if let Some(long_about) = long_about {
        // The families, from the registry: each is chosen by the flag that names its fleet.
        let fleets: Vec<&str> = families.iter().map(|f| f.fleet_hint()).collect();
        cmd = cmd.long_about(format!(
            "{long_about}\n\nA fleet is one family's, named by its flags: {}.",
            fleets.join("; ")
        ));
    }
    // Every other text that differs by family, in the words of the registered ones.
    cmd = super::words::patch(cmd, families);
    let fleet_flags: Vec<&str> = families
        .iter()
        .flat_map(|f| f.fleet_flags())
        .copied()
        .collect();
    for flag in &fleet_flags {
        let others: Vec<&str> = fleet_flags.iter().filter(|o| *o != flag).copied().collect();
        cmd = cmd.mut_arg(*flag, |a| a.conflicts_with_all(others));
    }
    // Every family's levels, for completions and help; the family reads the level given on
    // its own ladder (an unknown one is its error, which lists the ladder).
    let mut levels: Vec<&'static str> = Vec::new();
    for level in families.iter().flat_map(|f| f.levels()) {
        if !levels.contains(&level) {
            levels.push(level);
        }
    }
    let with_none: Vec<&'static str> = std::iter::once("none")
        .chain(levels.iter().copied())
        .collect();
    // Each family's ladder, said in the help from the registry.
    let ladders: Vec<String> = families
        .iter()
        .map(|f| format!("{}: {}", f.family(), f.levels().join(", ")))
        .collect();
    let level_help = format!(
        "The family's level, or none. Least destructive first, {}.",
        ladders.join("; ")
    );
    // `mut_arg` puts a positional last: both keep their places (TYPE first) by index.
    cmd = cmd.mut_subcommand("allow", |s| {
        s.mut_arg("level", |a| {
            a.index(1)
                .help(level_help)
                .value_parser(clap::builder::TypedValueParser::map(
                    Levels(with_none),
                    |l: String| parse_level(&l),
                ))
        })
        .mut_arg("object", |a| a.index(2))
    });
    cmd = cmd.mut_subcommand("request", |s| {
        s.mut_arg("repair", |a| a.index(1).value_parser(Levels(levels)))
            .mut_arg("target", |a| a.index(2))
    });
    first_sentence_for_short_help(cmd)
}

/// The commands that only read the fleet: they take no lock, so its flags are not shown in
/// their help (they are still accepted, as globals are, and do nothing there).
const READ_ONLY_COMMANDS: [&str; 6] = [
    "status", "report", "explain", "tags", "simulate", "generate",
];

/// Last, as parsing would: global flags reach the subcommands when the command is built, and
/// nothing may change it after that.
fn without_lock_flags_where_no_lock_is_taken(mut cmd: clap::Command) -> clap::Command {
    cmd.build();
    // `simulate` and `generate` are absent from a build without the `testkit` feature.
    for name in READ_ONLY_COMMANDS {
        if cmd.find_subcommand(name).is_some() {
            cmd = cmd.mut_subcommand(name, hide_lock_flags);
        }
    }
    cmd
}

fn hide_lock_flags(mut cmd: clap::Command) -> clap::Command {
    // In place: `mut_arg` moves the argument to the end, and a built command finds its flags
    // by position (`--cluster` then named another family's flag).
    cmd = cmd.mut_args(|a| {
        if ["lock_file", "wait"].contains(&a.get_id().as_str()) {
            a.hide(true)
        } else {
            a
        }
    });
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in names {
        cmd = cmd.mut_subcommand(name, hide_lock_flags);
    }
    cmd
}

/// `-h` shows each flag's and command's first sentence, `--help` the whole text. The texts are
/// written once, as one paragraph each (the family sections' too): splitting them here keeps
/// `-h` a page a person reads, whoever wrote the flag.
fn first_sentence_for_short_help(mut cmd: clap::Command) -> clap::Command {
    if cmd.get_long_about().is_none()
        && let Some(about) = cmd.get_about().map(|a| a.to_string())
        && let Some(first) = first_sentence(&about)
    {
        cmd = cmd.about(first).long_about(about);
    }
    cmd = cmd.mut_args(
        |arg| match (arg.get_long_help(), arg.get_help().map(|h| h.to_string())) {
            (None, Some(help)) => match first_sentence(&help) {
                Some(first) => arg.help(first).long_help(help),
                None => arg,
            },
            _ => arg,
        },
    );
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in names {
        cmd = cmd.mut_subcommand(name, first_sentence_for_short_help);
    }
    cmd
}

/// The first sentence of `text` when more follows, without its full stop (as clap writes a
/// one-sentence help). A full stop ends a sentence when a space and a capital, a backtick, a
/// quote or an opening parenthesis follow it, and the word before it is no abbreviation.
fn first_sentence(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    for (at, _) in text.match_indices(". ") {
        let next = bytes.get(at + 2).copied().unwrap_or(b' ');
        if !(next.is_ascii_uppercase() || matches!(next, b'`' | b'"' | b'(' | b'$' | b'-')) {
            continue;
        }
        let word = text[..at].rsplit([' ', '(']).next().unwrap_or("");
        if matches!(word, "e.g" | "i.e" | "etc" | "vs" | "cf") {
            continue;
        }
        return Some(text[..at].to_owned());
    }
    None
}

/// clap's own `help` command, with a `--help` of its own: clap's takes every word after it
/// for a command's name, so `autorepair help --help` was an unknown command `--help`. Given
/// to every command that has subcommands, as clap does; [`parse_from`] answers it. Only for
/// parsing: the completions generated from [`command`] keep clap's own, whose command names
/// they complete after `help`.
fn with_help_command(mut cmd: clap::Command) -> clap::Command {
    if !cmd.has_subcommands() {
        return cmd;
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in names {
        cmd = cmd.mut_subcommand(name, with_help_command);
    }
    cmd.disable_help_subcommand(true).subcommand(
        clap::Command::new(HELP)
            .about("Print this message or the help of the given subcommand(s)")
            .arg(
                clap::Arg::new(HELP_WORDS)
                    .action(clap::ArgAction::Append)
                    .num_args(..)
                    .value_name("COMMAND")
                    .help("Print help for the subcommand(s)"),
            ),
    )
}

const HELP: &str = "help";
const HELP_WORDS: &str = "subcommand";

/// The words of a `help` command anywhere on the line, with the commands before it: `sabakan
/// help update` is `["sabakan", "update"]`. `None`: no `help` command.
fn help_asked(matches: &clap::ArgMatches) -> Option<Vec<String>> {
    let mut path = Vec::new();
    let mut at = matches;
    while let Some((name, sub)) = at.subcommand() {
        if name == HELP {
            path.extend(
                sub.get_many::<String>(HELP_WORDS)
                    .into_iter()
                    .flatten()
                    .cloned(),
            );
            return Some(path);
        }
        path.push(name.to_owned());
        at = sub;
    }
    None
}

/// A repair level: any text (the family checks it on its ladder), offering every family's
/// levels to completion and help.
#[derive(Clone)]
struct Levels(Vec<&'static str>);

impl clap::builder::TypedValueParser for Levels {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.0.iter().map(|l| clap::builder::PossibleValue::new(*l)),
        ))
    }
}

/// `AUTOREPAIR_CONFIG=` is how a shell unsets a variable for one command, and how a unit file
/// leaves it blank: clap would take it as an empty --config and refuse it.
fn unset_if_empty(cmd: clap::Command) -> clap::Command {
    if std::env::var_os(CONFIG_ENV).is_some_and(|v| v.is_empty()) {
        cmd.mut_arg("config", |a| a.env(None))
    } else {
        cmd
    }
}

const CONFIG_ENV: &str = "AUTOREPAIR_CONFIG";

/// Parses `argv` (its first item is the program).
pub fn parse_from<I, T>(families: &[&dyn Registered], argv: I) -> Result<Parsed, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut argv = argv.into_iter().map(Into::into);
    let program: std::ffi::OsString = argv.next().unwrap_or_else(|| "autorepair".into());
    let matches = without_lock_flags_where_no_lock_is_taken(with_help_command(unset_if_empty(
        command(families),
    )))
    .try_get_matches_from(std::iter::once(program.clone()).chain(argv))?;
    if let Some(words) = help_asked(&matches) {
        // The help clap prints for `COMMAND… --help` (or the error for a command it does not
        // know), the way clap's own `help` command answers.
        let asked = std::iter::once(program)
            .chain(words.into_iter().map(Into::into))
            .chain(std::iter::once("--help".into()));
        let cmd = without_lock_flags_where_no_lock_is_taken(unset_if_empty(command(families)));
        return Err(match cmd.try_get_matches_from(asked) {
            Err(e) => e,
            Ok(_) => clap::Error::new(clap::error::ErrorKind::DisplayHelp),
        });
    }
    let own = families.iter().find_map(|f| f.own_command(&matches));
    let cli = match own {
        Some(command) => Cli {
            global: <GlobalArgs as clap::FromArgMatches>::from_arg_matches(&matches)?,
            command: Command::Family(command?),
        },
        None => <Cli as clap::FromArgMatches>::from_arg_matches(&matches)?,
    };
    Ok(Parsed { cli, matches })
}

/// The face's own flags; each family adds its own (`FamilyFace::Args`). Under a heading of
/// their own, so that each command's help starts with what is its own.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Config file [default: /etc/autorepair/autorepair.toml, if it exists].
    #[arg(long, global = true, value_name = "FILE", env = "AUTOREPAIR_CONFIG")]
    pub config: Option<PathBuf>,
    /// Kubeconfig of the fleet's Kubernetes cluster (each family's, from the registry:
    /// `face::words`).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Context of the kubeconfig to use (see --kubeconfig) [default: its current context].
    #[arg(long, global = true, value_name = "NAME")]
    pub kube_context: Option<String>,
    /// Lock file [default: one per fleet] (each family's, from the registry: `face::words`).
    #[arg(long, global = true, value_name = "FILE")]
    pub lock_file: Option<PathBuf>,
    /// When another run or admin command holds the fleet's lock, wait for it this long
    /// (`--wait` alone: 10 minutes) instead of failing at once with exit 4.
    #[arg(long, global = true, value_name = "DURATION", num_args = 0..=1, require_equals = true,
          default_missing_value = "10m", value_parser = parse_duration)]
    pub wait: Option<Duration>,
    /// Log one JSON object per line instead of text (logs go to stderr).
    #[arg(long, global = true)]
    pub log_json: bool,
    /// Log level filter, e.g. info, debug, warn [default: env RUST_LOG, else info].
    #[arg(long, global = true, value_name = "FILTER")]
    pub log: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Make one pass (or several with --loop/--passes): read, decide, act.
    Run(RunArgs),
    /// Show every target's state, effective policy and where it came from.
    Status {
        /// Only these targets and scopes [default: the whole fleet] (the families' kinds, from
        /// the registry: `face::words`).
        #[arg(value_name = "OBJECT")]
        objects: Vec<String>,
        /// One JSON document: {"targets":[…],"counts":{…},"fleet":{…},"lint":[…]}.
        #[arg(long)]
        json: bool,
        /// json or yaml (the --json document), wide (the table with the problem, the failure
        /// domain, the repair under way and the last result), name (KIND/NAME, one a line).
        #[arg(
            short = 'o',
            long = "output",
            value_name = "FORMAT",
            conflicts_with = "json"
        )]
        output: Option<Format>,
        /// The table's rows only: no header, no summary under it (for scripts, as kubectl's).
        #[arg(long, conflicts_with = "json")]
        no_headers: bool,
        #[command(flatten)]
        clock: ClockArgs,
    },
    /// Write the fleet as one self-contained HTML page (no script, nothing fetched): targets
    /// by state per scope, what is pending and why, the limiter's verdict and the recent
    /// repairs. Reads only; the file is replaced atomically.
    Report {
        /// Write the page here.
        #[arg(long, value_name = "FILE")]
        html: PathBuf,
        #[command(flatten)]
        clock: ClockArgs,
    },
    /// Show the reasoning for one target.
    Explain {
        /// The target (the families' words, from the registry: `face::words`).
        target: String,
        /// The target's plan as JSON.
        #[arg(long)]
        json: bool,
        /// json or yaml (the --json document), name (KIND/NAME); wide is the text.
        #[arg(
            short = 'o',
            long = "output",
            value_name = "FORMAT",
            conflicts_with = "json"
        )]
        output: Option<Format>,
        #[command(flatten)]
        clock: ClockArgs,
    },
    /// The tag language as a tool.
    #[command(subcommand)]
    Tags(TagsCommand),
    /// Allow repairs up to TYPE on an object (replaces its other policy marks); `none` removes
    /// them, so the object inherits the policy of the next level up.
    Allow {
        /// The family's level, or none (each family's ladder is listed with `--help`).
        #[arg(value_parser = level_arg, value_name = "TYPE")]
        level: Level,
        /// cluster, a scope or a target (the families' kinds, from the registry: `face::words`).
        object: String,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Stop repairs from starting on an object, forever or for a while.
    Suspend {
        /// cluster, a scope or a target (the families' kinds, from the registry: `face::words`).
        object: String,
        /// Until this time (in the future), RFC 3339 or Unix seconds.
        #[arg(long, value_name = "TIME", conflicts_with = "for_", value_parser = parse_time)]
        until: Option<i64>,
        /// For this long, e.g. 2h, 3days, or seconds (at least a second).
        #[arg(long = "for", id = "for_", value_name = "DURATION", value_parser = parse_positive_duration)]
        for_: Option<Duration>,
        /// Stop every repair under the object, also where an object below has a policy of its
        /// own (which a plain suspend leaves repairing: the nearest policy wins). One mark on
        /// the object; `resume --all` removes it and nothing else.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Remove an object's suspend marks (with --all, its `suspend --all` marks only).
    Resume {
        /// cluster, a scope or a target (the families' kinds, from the registry: `face::words`).
        object: String,
        /// Undo exactly a `suspend --all` of the object: the policies below apply again.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Ask for one repair of a target, up to TYPE, whatever the policy says (not while suspended).
    Request {
        /// The most destructive repair allowed (a level of the target's family, as for allow).
        #[arg(value_name = "TYPE")]
        repair: String,
        /// The target (the families' words, from the registry: `face::words`).
        target: String,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Remove a target's failure results after a person investigated, so repairs may start again.
    Clear {
        /// The target (the families' words, from the registry: `face::words`).
        target: String,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// What-if under chaos: many passes over the fleet in memory (each family's world, from the
    /// registry: `face::words`).
    #[cfg(any(test, feature = "testkit"))]
    Simulate(SimulateArgs),
    /// Print a synthetic fleet file (deterministic by seed) for benchmarks and what-ifs (the
    /// families that have a generator, from the registry: `face::words`).
    #[cfg(any(test, feature = "testkit"))]
    Generate {
        #[arg(long, value_name = "N")]
        instances: usize,
        #[arg(long, default_value_t = 1, value_name = "N")]
        seed: u64,
        /// Share of nodes offline or drained, 0 to 1.
        #[arg(long, default_value_t = 0.02, value_name = "SHARE")]
        broken: f64,
        /// Add contradictions (instances on missing nodes, duplicate names, a thousand tags on
        /// one object…) that the watcher must survive.
        #[arg(long)]
        contradictions: bool,
        /// Write here (atomically) instead of to standard output.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// A CKE cluster configuration (cluster.yml) from a template and the machines sabakan knows:
    /// check the template, generate a configuration, or maintain one.
    #[command(subcommand)]
    Sabakan(crate::sabakan::cli::SabakanCommand),
    /// Save the fleet as a fleet file, to replay it offline (the families that can, from the
    /// registry: `face::words`).
    Snapshot {
        /// Write here (atomically) instead of to standard output.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// A family's own command (`FamilyFace::Commands`), read by its family.
    #[command(skip)]
    Family(Box<dyn OwnCommand>),
}

/// A count of which 0 would check nothing and still report that no rule was violated.
#[cfg(any(test, feature = "testkit"))]
fn at_least_one(text: &str) -> Result<usize, CountError> {
    match text.parse::<usize>()? {
        0 => Err(CountError::Zero),
        n => Ok(n),
    }
}

/// Why a count is refused (clap names the flag and the value given before it).
#[cfg(any(test, feature = "testkit"))]
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
enum CountError {
    #[error("at least 1 (no scenario would check nothing)")]
    Zero,
    #[error(transparent)]
    NotACount(#[from] std::num::ParseIntError),
}

#[cfg(any(test, feature = "testkit"))]
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Passes with faults per scenario (a quiet phase follows, to check every repair finishes).
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub passes: u32,
    /// Seed of the first scenario; scenario k uses seed+k.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// How many seeded scenarios to run; at least 1.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = at_least_one)]
    pub scenarios: usize,
    /// Passes without faults at the end [default: enough for max_repair_age to run out].
    #[arg(long, value_name = "N")]
    pub quiet_passes: Option<u32>,
    /// Watchers against the fleet, coordinated as the family's replicas are in production
    /// (1: a single watcher, no pauses, partitions or handovers).
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=9))]
    pub replicas: u32,
    /// The summary and any finding as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print what happened in each pass (only with one scenario).
    #[arg(long)]
    pub verbose: bool,
    #[command(flatten)]
    pub clock: ClockArgs,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Show what would be done; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub clock: ClockArgs,
    /// Keep making passes, --interval apart (the families' watches, from the registry:
    /// `face::words`).
    #[arg(long = "loop")]
    pub loop_: bool,
    /// Time between passes with --loop (the families' watches, from the registry:
    /// `face::words`).
    #[arg(long, default_value = "5m", value_parser = parse_interval, value_name = "DURATION")]
    pub interval: Duration,
    /// With --loop on a live Kubernetes cluster, act only while holding a Lease there (the
    /// families' clusters, from the registry: `face::words`).
    #[arg(long)]
    pub leader_elect: bool,
    /// The Lease of --leader-elect [default: namespace $POD_NAMESPACE, else the service
    /// account's, else `default`; name `autorepair`].
    #[arg(long, value_name = "NAMESPACE/NAME", requires = "leader_elect")]
    pub lease: Option<String>,
    /// Make this many passes, back to back (with --loop: at most this many); at least 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub passes: Option<u32>,
    /// Override limits.max_pending.
    #[arg(long, value_name = "N")]
    pub max_pending: Option<usize>,
    /// Override limits.max_broken.
    #[arg(long, value_name = "N")]
    pub max_broken: Option<usize>,
    /// Print the plan as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write Prometheus metrics (textfile collector format) here after each pass.
    #[arg(long, value_name = "FILE")]
    pub metrics_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum TagsCommand {
    /// Parse tags given as arguments; exit 1 if any autorepair tag is invalid (each family's
    /// marks, from the registry: `face::words`).
    Parse {
        /// One JSON object per tag and line.
        #[arg(long)]
        json: bool,
        /// Tags, autorepair's or any other (those are reported as foreign).
        #[arg(required = true, value_name = "TAG")]
        tags: Vec<String>,
    },
    /// Report every invalid or conflicting autorepair tag in the fleet; exit 1 if any.
    Lint {
        /// One JSON object per problem and line.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        clock: ClockArgs,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Level {
    None,
    /// Read by the settings stage, on the ladder of the fleet's family.
    UpTo(String),
}

fn parse_level(s: &str) -> Level {
    if s == "none" {
        Level::None
    } else {
        Level::UpTo(s.to_owned())
    }
}

/// Any text is a level here: the settings stage reads it on the fleet's family's ladder, whose
/// error lists it.
fn level_arg(s: &str) -> Result<Level, std::convert::Infallible> {
    Ok(parse_level(s))
}

/// What every admin verb takes besides its object.
#[derive(Debug, Args, Clone, Copy)]
pub struct AdminArgs {
    #[command(flatten)]
    pub clock: ClockArgs,
    /// How long to wait until the fleet shows the change (how each family applies it, from the
    /// registry: `face::words`).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub timeout: Duration,
}

#[cfg(test)]
mod tests {
    use super::first_sentence;

    #[test]
    fn short_help_is_the_first_sentence() {
        let cases = [
            ("One sentence only.", None),
            ("One sentence, no stop", None),
            ("Lock file. Details follow.", Some("Lock file")),
            (
                "Level filter, e.g. info or warn. More here.",
                Some("Level filter, e.g. info or warn"),
            ),
            (
                "Sets a (i.e. this) value. `x` follows.",
                Some("Sets a (i.e. this) value"),
            ),
            (
                "Ends in a version 1.28. Then more.",
                Some("Ends in a version 1.28"),
            ),
            ("Lower case after the stop. is not a sentence", None),
            ("Kubeconfig. [default: x]", None),
            (
                "Time between passes. At least 1s [default: 5m]",
                Some("Time between passes"),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(first_sentence(text).as_deref(), want, "{text:?}");
        }
    }

    #[test]
    fn a_count_of_scenarios_is_at_least_one() {
        use super::{CountError, at_least_one};
        assert_eq!(at_least_one("3"), Ok(3));
        let cases = [
            ("0", "at least 1 (no scenario would check nothing)"),
            ("x", "invalid digit found in string"),
            ("-1", "invalid digit found in string"),
        ];
        for (given, said) in cases {
            let refused: CountError = at_least_one(given).unwrap_err();
            assert_eq!(refused.to_string(), said, "{given:?}");
        }
    }

    /// A build without the `testkit` feature has no `simulate` nor `generate`: its help is
    /// made all the same (it panicked at every start), the lock flags hidden where no lock is
    /// taken.
    #[test]
    fn the_lock_flags_are_hidden_whichever_read_only_commands_the_build_has() {
        use clap::{Arg, Command};
        let with_lock = |name: &'static str| {
            Command::new(name)
                .arg(Arg::new("lock_file").long("lock-file"))
                .arg(Arg::new("wait").long("wait"))
        };
        let cmd = Command::new("autorepair")
            .subcommand(with_lock("status"))
            .subcommand(with_lock("run"));
        let cmd = super::without_lock_flags_where_no_lock_is_taken(cmd);
        let hidden = |sub: &str| {
            cmd.find_subcommand(sub)
                .and_then(|c| c.get_arguments().find(|a| a.get_id() == "lock_file"))
                .map(Arg::is_hide_set)
        };
        assert_eq!(hidden("status"), Some(true));
        assert_eq!(hidden("run"), Some(false));
    }

    /// A family's own commands come with its registration, and only with it: the face has
    /// none of its own (the toy family adds none, the machines family `repair` and
    /// `auto-repair`), and a family's command is read into that family's type.
    #[test]
    fn a_familys_own_commands_come_with_its_registration() {
        use crate::face::{Entry, Registered};
        let toy: &dyn Registered = &Entry::<crate::toy::Toy>::NEW;
        let machines: &dyn Registered = &Entry::<crate::machines::Machines>::NEW;
        let names = |families: &[&dyn Registered]| -> Vec<String> {
            super::command(families)
                .get_subcommands()
                .map(|c| c.get_name().to_owned())
                .filter(|n| ["repair", "auto-repair"].contains(&n.as_str()))
                .collect()
        };
        assert!(names(&[toy]).is_empty());
        assert_eq!(names(&[toy, machines]), ["repair", "auto-repair"]);

        let parsed = super::parse_from(
            &[toy, machines],
            [
                "autorepair",
                "--toy-room",
                "r.json",
                "repair",
                "list",
                "--json",
            ],
        )
        .unwrap();
        let super::Command::Family(own) = parsed.cli.command else {
            panic!("not a family's command: {:?}", parsed.cli.command);
        };
        assert_eq!((own.name(), own.family()), ("repair", "machines"));
        assert_eq!(own.output(), (true, None));
        let err = super::parse_from(&[toy], ["autorepair", "--toy-room", "r.json", "repair"])
            .unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::InvalidSubcommand);
    }

    /// Every command's `--help` over `families`, with the words that name the command (`tags
    /// parse`); the root's is `""`. `sabakan` is shared tooling, not a family: its commands
    /// keep their own words, and its line in the list of commands is left out.
    fn every_help(families: &[&dyn crate::face::Registered]) -> Vec<(String, String)> {
        fn walk(cmd: &mut clap::Command, words: &str, out: &mut Vec<(String, String)>) {
            let help = cmd.render_long_help().to_string();
            let mut kept = Vec::new();
            let mut in_sabakan = false;
            for line in help.lines() {
                // A command's line, and the lines its text wraps onto, indented further.
                if line.starts_with("  ") && !line.starts_with("   ") {
                    in_sabakan = line.trim_start().starts_with("sabakan ");
                } else if !line.starts_with("   ") {
                    in_sabakan = false;
                }
                if !in_sabakan {
                    kept.push(line);
                }
            }
            out.push((words.to_owned(), kept.join("\n")));
            let names: Vec<String> = cmd
                .get_subcommands()
                .map(|s| s.get_name().to_owned())
                .filter(|n| n != "sabakan")
                .collect();
            for name in names {
                if let Some(sub) = cmd.find_subcommand_mut(&name) {
                    walk(sub, format!("{words} {name}").trim(), out);
                }
            }
        }
        let mut cmd = super::command(families);
        cmd.build();
        let mut out = Vec::new();
        walk(&mut cmd, "", &mut out);
        out
    }

    /// The help says the families of the registry, and no other: every command's, on a
    /// registry of the toy family alone, names none of the families the program ships with.
    #[test]
    fn the_help_names_the_registered_families_only() {
        use crate::face::{Entry, Registered};
        let toy: &dyn Registered = &Entry::<crate::toy::Toy>::NEW;
        let helps = every_help(&[toy]);
        let named: Vec<String> = helps.iter().map(|(w, _)| w.clone()).collect();
        for command in [
            "",
            "run",
            "status",
            "allow",
            "tags parse",
            "simulate",
            "snapshot",
        ] {
            assert!(
                named.iter().any(|n| n == command),
                "{command:?} in {named:?}"
            );
        }
        for (command, help) in &helps {
            let words = super::super::words::family_words(help);
            assert!(
                words.is_empty(),
                "`autorepair {command} --help` names {words:?}:\n{help}"
            );
        }
        let root = &helps[0].1;
        assert!(
            root.contains(
                "A fleet is one family's, named by its flags: --toy-room FILE (the toy family)."
            ),
            "{root}"
        );
        let allow = &helps.iter().find(|(c, _)| c == "allow").unwrap().1;
        assert!(
            allow.contains("toy: nudge, restart, replace") && allow.contains("shelf/NAME (toy)"),
            "{allow}"
        );
    }

    /// Over every family, each help that differs by family says each family's piece.
    #[test]
    fn the_help_says_each_registered_familys_words() {
        let mut cmd = super::command(crate::FAMILIES);
        cmd.build();
        // The command (its words), the argument (`None`: the command's own text), and what
        // the text must say.
        let objects: &[&str] = &[
            "group/NAME (ganeti)",
            "machineset/NS/NAME",
            "rack/N (machines)",
            "instance/NAME (ganeti)",
            "machine/NS/NAME (metal3)",
            "machine/SERIAL (machines)",
        ];
        let targets: &[&str] = &[
            "an instance's full name",
            "a Machine's NS/NAME",
            "a machine's serial",
        ];
        let applies: &[&str] = &["Ganeti applies a tag change as a job"];
        let table: &[(&str, Option<&str>, &[&str])] = &[
            ("allow", Some("object"), objects),
            ("suspend", Some("object"), objects),
            ("resume", Some("object"), objects),
            ("status", Some("objects"), objects),
            ("explain", Some("target"), targets),
            ("request", Some("target"), targets),
            ("clear", Some("target"), targets),
            ("allow", Some("timeout"), applies),
            ("suspend", Some("timeout"), applies),
            ("resume", Some("timeout"), applies),
            ("request", Some("timeout"), applies),
            ("clear", Some("timeout"), applies),
            (
                "",
                Some("kubeconfig"),
                &[
                    "the management cluster of --kube (metal3)",
                    "a machines fleet (--sabakan, --sabakan-file)",
                ],
            ),
            (
                "",
                Some("lock_file"),
                &[
                    "autorepair-ganeti-UUID.lock for a Ganeti cluster",
                    "autorepair-kube.lock for --kube",
                    "autorepair-HOST:PORT.lock for sabakan",
                ],
            ),
            (
                "run",
                Some("loop_"),
                &["watched (--kube)", "(see --leader-elect)"],
            ),
            ("run", Some("interval"), &["watched (--kube)"]),
            (
                "run",
                Some("leader_elect"),
                &["--kube (metal3); --kubeconfig (the Nodes of a machines fleet)"],
            ),
            (
                "tags parse",
                None,
                &[
                    "Ganeti tags with --cluster or --rapi",
                    "NAME=VALUE annotations with --kube-objects or --kube",
                    "labels with --sabakan-file or --sabakan",
                    "else as Ganeti tags",
                ],
            ),
            (
                "simulate",
                None,
                &[
                    "With --cluster or --rapi the Ganeti world",
                    "With --kube-objects or --kube the metal3 world",
                    "With --sabakan-file or --sabakan the machines world",
                    "(Ganeti's master role; a Kubernetes Lease)",
                ],
            ),
            (
                "generate",
                None,
                &[
                    "A ganeti fleet file, to use with --cluster: the other families have no generator",
                ],
            ),
            (
                "snapshot",
                None,
                &["For a ganeti fleet, replayed with --cluster"],
            ),
        ];
        for (command, arg, pieces) in table {
            let mut at = &cmd;
            for word in command.split_whitespace() {
                at = at.find_subcommand(word).unwrap();
            }
            let text = match arg {
                Some(id) => at
                    .get_arguments()
                    .find(|a| a.get_id() == *id)
                    .and_then(|a| a.get_long_help().or(a.get_help())),
                None => at.get_long_about().or(at.get_about()),
            }
            .map(ToString::to_string)
            .unwrap_or_default();
            for piece in *pieces {
                assert!(
                    text.contains(piece),
                    "{command} {arg:?}: {piece:?} not in {text:?}"
                );
            }
        }
    }
}
