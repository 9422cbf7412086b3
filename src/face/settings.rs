//! The settings stage: the parsed command line, the config file and the environment, merged and
//! validated once into [`Settings`]. Nothing after it reads [`Cli`] or [`Config`].
//!
//! Precedence, for every value that has more than one source: a flag, then the environment (clap
//! reads `AUTOREPAIR_CONFIG` for `--config`), then the config file, then the default. The RAPI
//! password is the one exception, documented as it is: a password file named by the flag or the
//! config wins over `AUTOREPAIR_RAPI_PASSWORD`.

#[cfg(any(test, feature = "testkit"))]
use super::cli::SimulateArgs;
use super::cli::{
    AdminArgs, ClockArgs, Command, Format, GlobalArgs, Level, Parsed, RunArgs, TagsCommand,
};
use super::registry::{Claimed, Optional, Owned, Registered};
use crate::plug::FamilyFace;

use crate::engine::marks::Level as _;
use crate::{
    admin::{self, AdminError, Verb},
    config::{Config, ConfigError, DEFAULT_CONFIG_PATH, Limits},
    engine::{BackendError, ObjectRef},
    lock::LockError,
    plug::LockPathError,
    plug::claim::{By, ClaimError, Look, Shared, Vars},
    sabakan::cli::SabakanCommand,
};
use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// What the process environment contributes, read once ([`Env::from_process`]) so that the stage
/// can be tested with any environment.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// The variables a family reads (`AUTOREPAIR_RAPI_PASSWORD`, `KUBERNETES_SERVICE_HOST`…).
    pub vars: Vars,
    /// `RUST_LOG`, used when `--log` is not given.
    pub rust_log: Option<String>,
    /// `NO_COLOR` (<https://no-color.org>): set to something, it turns colour off.
    pub no_color: Option<OsString>,
    pub stdout_is_terminal: bool,
    pub stderr_is_terminal: bool,
}

impl Env {
    pub fn from_process() -> Env {
        Env {
            vars: Vars(std::env::vars().collect()),
            rust_log: std::env::var("RUST_LOG").ok(),
            no_color: std::env::var_os("NO_COLOR"),
            stdout_is_terminal: std::io::stdout().is_terminal(),
            stderr_is_terminal: std::io::stderr().is_terminal(),
        }
    }
}

/// How logs are written (to stderr, through `tracing`); see `logs.rs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logs {
    pub filter: LogFilter,
    pub json: bool,
    pub colour: bool,
}

/// Where the log filter comes from: each source keeps its own parsing rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogFilter {
    /// `--log`: invalid directives are ignored (with a note), the others kept.
    Flag(String),
    /// `RUST_LOG`: used only if every directive is valid, else `info`.
    Env(String),
    /// `info`.
    Default,
    /// `info`, but without the executor's line per mark written: an admin command prints its
    /// change on standard output, and saying it twice helps no one (`--log info` has both).
    AdminDefault,
}

impl Logs {
    /// The log settings come first, apart from the rest, so that what resolving the rest warns
    /// about is logged with them.
    pub fn resolve(global: &GlobalArgs, env: &Env, command: &Command) -> Logs {
        let admin = matches!(
            command,
            Command::Allow { .. }
                | Command::Suspend { .. }
                | Command::Resume { .. }
                | Command::Request { .. }
                | Command::Clear { .. }
        );
        let filter = match (&global.log, &env.rust_log) {
            (Some(f), _) => LogFilter::Flag(f.clone()),
            (None, Some(v)) => LogFilter::Env(v.clone()),
            (None, None) if admin => LogFilter::AdminDefault,
            (None, None) => LogFilter::Default,
        };
        Logs {
            filter,
            json: global.log_json,
            colour: colour(env.stderr_is_terminal, env.no_color.as_deref()),
        }
    }
}

/// Colour is for a person at a terminal: from cron or systemd, stderr goes to syslog, where
/// escape codes are noise. A non-empty NO_COLOR turns it off (https://no-color.org).
fn colour(is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    is_terminal && no_color.is_none_or(|v| v.is_empty())
}

pub use crate::plug::printer::Output;

/// Every resolved value one command needs.
#[derive(Debug)]
pub struct Settings {
    pub logs: Logs,
    pub output: Output,
    pub job: Job,
}

/// The command, with everything it needs resolved.
#[derive(Debug)]
pub enum Job {
    /// A family's command that needs no fleet (`tags parse`, `generate`), typed by its family
    /// inside the box.
    Family(Box<dyn super::FleetCommand>),
    Sabakan(SabakanCommand),
    /// A command on a fleet, typed by its family inside the box.
    Fleet(Box<dyn super::FleetCommand>),
}

/// A command on a fleet of the family `F`, with everything it needs resolved: the levels it
/// names are read on `F`'s ladder.
#[derive(Debug)]
pub enum FleetJob<F: FamilyFace> {
    Status {
        fleet: Fleet<F>,
        clock: Clock,
        view: StatusView,
    },
    Explain {
        fleet: Fleet<F>,
        clock: Clock,
        instance: String,
        /// `-o name`: only the target's KIND/NAME.
        names_only: bool,
    },
    Report {
        fleet: Fleet<F>,
        clock: Clock,
        html: PathBuf,
    },
    Lint {
        fleet: Fleet<F>,
        clock: Clock,
    },
    Run {
        fleet: Fleet<F>,
        run: Run,
    },
    /// allow, suspend, resume, request, clear.
    Admin {
        fleet: Fleet<F>,
        lock: PathBuf,
        object: ObjectRef,
        verb: Verb<F::Level>,
        /// How long the verb waits for the fleet to show its change.
        applied_within: std::time::Duration,
    },
    #[cfg(any(test, feature = "testkit"))]
    Simulate {
        fleet: Fleet<F>,
        simulate: Simulate,
        simulator: crate::plug::simulate::Simulator<F>,
    },
    Snapshot {
        fleet: Fleet<F>,
        output: Option<PathBuf>,
        snapshot: crate::plug::Snapshotter<F>,
    },
    /// A command of the family's own (`FamilyFace::Commands`).
    Own {
        fleet: Fleet<F>,
        lock: PathBuf,
        command: F::Commands,
    },
}

/// What `status` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusView {
    /// The targets and scopes asked for (none: the whole fleet), read on the family's syntax
    /// before the fleet is: a typo is a usage error whatever the fleet's state.
    pub objects: Vec<ObjectRef>,
    /// The table's header and summary (`--no-headers` drops them).
    pub headers: bool,
    /// `-o`.
    pub format: Option<Format>,
}

/// `--json` or `-o json|yaml` into the printer's output.
fn shape(output: &mut Output, json: bool, format: Option<Format>) {
    output.json = json || format == Some(Format::Json);
    output.yaml = format == Some(Format::Yaml);
}

/// The fleet a command works on, and the planner's limits for it.
#[derive(Debug)]
pub struct Fleet<F: FamilyFace> {
    pub source: F::Source,
    /// The config file's limits, with the command's overrides.
    pub limits: Limits,
    /// `--wait`: how long to wait for the fleet's lock when another run holds it (none: fail
    /// at once, exit 4).
    pub lock_wait: Option<std::time::Duration>,
}

impl<F: FamilyFace> Fleet<F> {
    /// Where the fleet is, for messages.
    pub fn describe(&self) -> String {
        F::describe(&self.source)
    }
}

/// An object as an admin command names it, on the family's own syntax.
fn read_object<F: FamilyFace>(text: &str) -> Result<ObjectRef, SettingsError> {
    F::parse_object(text).map_err(SettingsError::Object)
}

/// A level on the family's ladder, or a message listing the ladder.
fn read_level<F: FamilyFace>(name: &str) -> Result<F::Level, SettingsError> {
    F::Level::from_name(name).ok_or_else(|| {
        SettingsError::Level(format!(
            "unknown repair type {name:?}: use {}",
            F::Level::names()
        ))
    })
}

/// The time a command takes as now: `--now`, or the wall clock each time it is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock(Option<i64>);

impl Clock {
    pub fn fixed(epoch: i64) -> Clock {
        Clock(Some(epoch))
    }

    pub fn wall() -> Clock {
        Clock(None)
    }

    pub fn now(self) -> i64 {
        self.0.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64)
        })
    }
}

impl From<ClockArgs> for Clock {
    fn from(c: ClockArgs) -> Clock {
        Clock(c.now)
    }
}

/// `run`: one pass, a number of them, or a loop.
#[derive(Debug, Clone)]
pub struct Run {
    pub clock: Clock,
    pub dry_run: bool,
    /// The lock each pass holds while it acts; `None` with `--dry-run`, which takes none.
    pub lock: Option<PathBuf>,
    /// `--loop`: the time between passes.
    pub every: Option<Duration>,
    /// `--passes`.
    pub passes: Option<u32>,
    pub metrics_file: Option<PathBuf>,
    /// `--leader-elect`.
    pub leader: Option<Leader>,
    /// The live cluster a `--loop` watches for changes, when the family has one.
    pub live: Option<crate::k8s::Live>,
}

/// Leader election between replicas of `run --loop` on a live Kubernetes cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leader {
    pub lease: crate::k8s::lease::LeaseName,
    /// This replica's name in the Lease.
    pub identity: String,
}

#[cfg(any(test, feature = "testkit"))]
pub use crate::plug::simulate::Simulate;

/// What is wrong with the command line, the config file or the environment: each names the flag,
/// key or file at fault.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("--broken {0}: give a share between 0 and 1")]
    Broken(f64),
    #[error("cannot read config file {}", path.display())]
    ConfigUnreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The command line, read into a family's flags.
    #[error("{0}")]
    Flags(String),
    /// A family cannot make its fleet of its flags and config.
    #[error(transparent)]
    Family(ClaimError),
    #[error("{flag} is for a {family} fleet: add {hint}, or name one in the config file")]
    NotThisFleet {
        flag: String,
        family: &'static str,
        hint: &'static str,
    },
    /// `names`: the clusters they name, as the registered families read one.
    #[error("--kubeconfig and --kube-context name {names}")]
    KubeconfigAlone { names: String },
    #[error("the config names two fleets ({first}, and {second}): keep one, or choose with a flag")]
    TwoConfigFleets {
        first: &'static str,
        second: &'static str,
    },
    #[error(
        "{output_flag} {} is the file {input_flag} reads{}: autorepair never writes over one of its inputs; give {output_flag} another file",
        output.display(),
        if input == output { String::new() } else { format!(" ({})", input.display()) }
    )]
    OutputIsInput {
        output_flag: &'static str,
        output: PathBuf,
        input_flag: &'static str,
        input: PathBuf,
    },
    #[error("{family} has no `generate`: {hint}")]
    NoGenerator { family: &'static str, hint: String },
    #[error("no fleet to work on: pass {hints}; or name one in the config file")]
    NoFleet { hints: String },
    /// `add` is only what the command line lacks.
    #[error(
        "--leader-elect elects among replicas of `run --loop` with a Lease in a Kubernetes cluster: {add}"
    )]
    LeaderElect { add: String },
    #[error("--lease {0:?}: give the Lease as NAMESPACE/NAME, e.g. --lease autorepair/autorepair")]
    Lease(String),
    /// The fleet file to take the lock beside is missing or unreadable.
    #[error(transparent)]
    FleetFile(Box<BackendError>),
    /// No lock can be named for the RAPI URL.
    #[error(transparent)]
    LockFile(LockError),
    /// --until or --for.
    #[error(transparent)]
    Suspend(AdminError),
    /// A command the fleet's family does not offer: another family's own, or `snapshot` or
    /// `simulate` where the family registers none.
    #[error("{from} holds {holds} (the {family} family): `{command}` works only on {works_on}")]
    Unsupported {
        from: String,
        holds: &'static str,
        family: &'static str,
        command: String,
        works_on: String,
    },
    /// The object an admin command names.
    #[error("{0}")]
    Object(crate::engine::object::ObjectRefError),
    /// The level an admin command asks for.
    #[error("{0}")]
    Level(String),
    /// `simulate --now` too late for the passes to come.
    #[cfg(any(test, feature = "testkit"))]
    #[error(
        "--now {}: the simulation's {passes} passes ({quiet} of them quiet), {} minutes apart, would end at {}, after {}, the last time every simulated world writes as a date and reads back: give --now {} or earlier, or fewer passes",
        crate::engine::rfc3339(*start),
        crate::engine::sim::PASS_SECONDS / 60,
        crate::engine::rfc3339(*end),
        crate::engine::rfc3339(simulation_last_second()),
        crate::engine::rfc3339(*latest)
    )]
    SimulationPastCalendar {
        start: i64,
        passes: u64,
        quiet: u32,
        end: i64,
        latest: i64,
    },
}

impl Settings {
    /// Resolves everything the command line asks for, over the families the face knows.
    /// `logs` comes from [`Logs::resolve`], made (and the logger set up) first.
    pub fn resolve(
        parsed: Parsed,
        families: &[&dyn Registered],
        logs: Logs,
        env: &Env,
    ) -> Result<Settings, SettingsError> {
        let Parsed { cli, matches } = parsed;
        let global = &cli.global;
        let mut output = Output {
            json: false,
            yaml: false,
            colour: colour(env.stdout_is_terminal, env.no_color.as_deref()),
        };
        let job = match cli.command {
            // The commands that need neither the config nor a fleet.
            Command::Tags(TagsCommand::Parse { json, tags }) => {
                output.json = json;
                let (family, _) = family_of_flags(families, &matches)?;
                Job::Family(family.parse_marks(tags))
            }
            Command::Sabakan(cmd) => Job::Sabakan(cmd),
            #[cfg(any(test, feature = "testkit"))]
            Command::Generate {
                instances,
                seed,
                broken,
                contradictions,
                output: file,
            } => {
                if !(0.0..=1.0).contains(&broken) {
                    return Err(SettingsError::Broken(broken));
                }
                let (family, flag) = family_of_flags(families, &matches)?;
                let asked = crate::plug::generate::Generate {
                    targets: instances,
                    seed,
                    broken,
                    contradictions,
                    output: file,
                };
                Job::Family(
                    family
                        .generate(asked)
                        .ok_or_else(|| no_generator(families, family.family(), flag))?,
                )
            }
            command => {
                let reads = Reads::of(&command);
                let (config, claimed) = claim_fleet(global, &matches, families, env, reads)
                    .map_err(|e| match (e, &command) {
                        // Only the family whose command it is can run it.
                        (SettingsError::NoFleet { .. }, Command::Family(own)) => {
                            SettingsError::NoFleet {
                                hints: own.fleet_hint().to_owned(),
                            }
                        }
                        (e, _) => e,
                    })?;
                Job::Fleet(claimed.job(global, &config, command, &mut output, families)?)
            }
        };
        Ok(Settings { logs, output, job })
    }
}

/// What a command reads of its fleet besides its targets and marks, as the families are told
/// when they claim it ([`Shared`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Reads {
    /// The command's `--now`.
    pub now: Option<i64>,
    /// It shows targets to a person: what only they need (a VM's run status) is read too.
    pub shows_targets: bool,
    /// It makes passes.
    pub passes: bool,
}

impl Reads {
    pub fn of(command: &Command) -> Reads {
        Reads {
            now: command_now(command),
            shows_targets: matches!(
                command,
                Command::Status { .. } | Command::Explain { .. } | Command::Snapshot { .. }
            ),
            passes: matches!(command, Command::Run(_)),
        }
    }
}

/// The fleet a command on a fleet works on: the config read, every family's flags and config
/// section prepared (and checked), and the family that claims the fleet. Shell completion
/// (`complete.rs`) reads the fleet the typed command line names through this too.
pub(crate) fn claim_fleet(
    global: &GlobalArgs,
    matches: &clap::ArgMatches,
    families: &[&dyn Registered],
    env: &Env,
    reads: Reads,
) -> Result<(Config, Box<dyn Claimed>), SettingsError> {
    let mut config = load_config(global, families)?;
    let prepared = families
        .iter()
        .map(|f| f.prepare(matches, &mut config))
        .collect::<Result<Vec<_>, _>>()?;
    let known: Vec<&str> = crate::config::OWN_KEYS
        .iter()
        .chain(families.iter().flat_map(|f| f.config_keys()))
        .copied()
        .collect();
    config.unknown_keys(&known)?;
    let shared = Shared {
        kubeconfig: global.kubeconfig.clone(),
        kube_context: global.kube_context.clone(),
        now: reads.now,
        shows_targets: reads.shows_targets,
        passes: reads.passes,
        lock_named: global.lock_file.is_some() || config.lock_file.is_some(),
        env: env.vars.clone(),
    };
    let claimed = claim(families, &prepared, &shared, global)?;
    Ok((config, claimed))
}

/// The commands that work on a fleet, in the order the checks were always made: config, fleet,
/// the command's own arguments, then its lock.
pub(crate) fn fleet_job<F: FamilyFace>(
    global: &GlobalArgs,
    config: &Config,
    mut fleet: Fleet<F>,
    command: Command,
    output: &mut Output,
    families: &[&dyn Registered],
) -> Result<FleetJob<F>, SettingsError> {
    // A command the family does not offer, refused naming the families that do.
    let unsupported =
        |fleet: &Fleet<F>, command: &str, offers: &dyn Fn(&dyn Registered) -> bool| {
            SettingsError::Unsupported {
                from: fleet.describe(),
                holds: F::HOLDS,
                family: F::FAMILY,
                command: command.to_owned(),
                works_on: super::registry::works_on(families, offers),
            }
        };
    let admin = |fleet: Fleet<F>,
                 object: ObjectRef,
                 verb: Verb<F::Level>,
                 args: &AdminArgs|
     -> Result<FleetJob<F>, SettingsError> {
        let lock = lock_path::<F>(global, config, &fleet.source)?;
        Ok(FleetJob::Admin {
            fleet,
            lock,
            object,
            verb,
            applied_within: args.timeout,
        })
    };
    refuse_output_on_input::<F>(global, config, &fleet.source, &command)?;
    Ok(match command {
        Command::Run(args) => {
            output.json = args.json;
            let run = run_settings(global, config, &fleet, &args, families)?;
            if let Some(n) = args.max_pending {
                fleet.limits.max_pending = Some(n);
            }
            if let Some(n) = args.max_broken {
                fleet.limits.max_broken = Some(n);
            }
            FleetJob::Run { fleet, run }
        }
        Command::Status {
            objects,
            json,
            output: format,
            no_headers,
            clock,
        } => {
            shape(output, json, format);
            FleetJob::Status {
                fleet,
                clock: clock.into(),
                view: StatusView {
                    objects: objects
                        .iter()
                        .map(|o| read_object::<F>(o))
                        .collect::<Result<_, _>>()?,
                    headers: !no_headers,
                    format,
                },
            }
        }
        Command::Report { html, clock } => FleetJob::Report {
            fleet,
            clock: clock.into(),
            html,
        },
        Command::Explain {
            target: instance,
            json,
            output: format,
            clock,
        } => {
            shape(output, json, format);
            FleetJob::Explain {
                fleet,
                clock: clock.into(),
                instance,
                names_only: format == Some(Format::Name),
            }
        }
        Command::Tags(TagsCommand::Lint { json, clock }) => {
            output.json = json;
            FleetJob::Lint {
                fleet,
                clock: clock.into(),
            }
        }
        Command::Allow {
            level,
            object,
            admin: args,
        } => {
            let level = match level {
                Level::None => None,
                Level::UpTo(t) => Some(read_level::<F>(&t)?),
            };
            admin(fleet, read_object::<F>(&object)?, Verb::Allow(level), &args)?
        }
        Command::Suspend {
            object,
            until,
            for_,
            all,
            admin: args,
        } => {
            let object = read_object::<F>(&object)?;
            let until = admin::suspend_end(until, for_, Clock::from(args.clock).now())
                .map_err(SettingsError::Suspend)?;
            admin(fleet, object, Verb::Suspend { until, all }, &args)?
        }
        Command::Resume {
            object,
            all,
            admin: args,
        } => admin(
            fleet,
            read_object::<F>(&object)?,
            Verb::Resume { all },
            &args,
        )?,
        Command::Request {
            repair,
            target: name,
            admin: args,
        } => {
            let verb = Verb::Request {
                repair: read_level::<F>(&repair)?,
                id: uuid::Uuid::new_v4().to_string(),
                now: Clock::from(args.clock).now(),
            };
            admin(fleet, read_object::<F>(&name)?, verb, &args)?
        }
        Command::Clear {
            target: name,
            admin: args,
        } => admin(fleet, read_object::<F>(&name)?, Verb::Clear, &args)?,
        #[cfg(any(test, feature = "testkit"))]
        Command::Simulate(args) => {
            output.json = args.json;
            let Some(simulator) = F::SIMULATOR else {
                return Err(unsupported(&fleet, Optional::Simulate.name(), &|f| {
                    f.offers(Optional::Simulate)
                }));
            };
            let simulate = simulate_settings(&args);
            simulate_fits_calendar(&simulate, &fleet.limits)?;
            FleetJob::Simulate {
                fleet,
                simulate,
                simulator,
            }
        }
        Command::Snapshot { output: file } => {
            let Some(snapshot) = F::SNAPSHOT else {
                return Err(unsupported(&fleet, Optional::Snapshot.name(), &|f| {
                    f.offers(Optional::Snapshot)
                }));
            };
            FleetJob::Snapshot {
                fleet,
                output: file,
                snapshot,
            }
        }
        Command::Family(own) => {
            let (json, format) = own.output();
            let (name, owner) = (own.name().to_owned(), own.family());
            let Ok(own) = own.into_any().downcast::<Owned<F>>() else {
                return Err(unsupported(&fleet, &name, &|f| f.family() == owner));
            };
            shape(output, json, format);
            let lock = lock_path::<F>(global, config, &fleet.source)?;
            FleetJob::Own {
                fleet,
                lock,
                command: own.command,
            }
        }
        Command::Tags(TagsCommand::Parse { .. }) | Command::Sabakan(_) => {
            unreachable!("resolved without a fleet")
        }
        #[cfg(any(test, feature = "testkit"))]
        Command::Generate { .. } => unreachable!("resolved without a fleet"),
    })
}

/// Refuses a command whose output (a report, a metrics file, a snapshot) is one of the files
/// it reads: the same file by device and inode, through links and hard links, whatever the
/// path says.
fn refuse_output_on_input<F: FamilyFace>(
    global: &GlobalArgs,
    config: &Config,
    source: &F::Source,
    command: &Command,
) -> Result<(), SettingsError> {
    let output = match command {
        Command::Report { html, .. } => Some(("--html", html)),
        Command::Run(args) => args.metrics_file.as_ref().map(|p| ("--metrics-file", p)),
        Command::Snapshot { output, .. } => output.as_ref().map(|p| ("--output", p)),
        _ => None,
    };
    let Some((output_flag, output)) = output else {
        return Ok(());
    };
    let inputs = F::input_files(source)
        .into_iter()
        .chain(std::iter::once(("--config", PathBuf::from(&config.path))))
        .chain(global.kubeconfig.clone().map(|p| ("--kubeconfig", p)));
    for (input_flag, input) in inputs {
        if crate::files::same_file(output, &input) {
            return Err(SettingsError::OutputIsInput {
                output_flag,
                output: output.clone(),
                input_flag,
                input,
            });
        }
    }
    Ok(())
}

/// The command's `--now`, if it takes one.
fn command_now(command: &Command) -> Option<i64> {
    match command {
        Command::Run(args) => args.clock.now,
        Command::Status { clock, .. }
        | Command::Explain { clock, .. }
        | Command::Tags(TagsCommand::Lint { clock, .. }) => clock.now,
        Command::Family(own) => own.now(),
        Command::Allow { admin, .. }
        | Command::Suspend { admin, .. }
        | Command::Resume { admin, .. }
        | Command::Request { admin, .. }
        | Command::Clear { admin, .. } => admin.clock.now,
        #[cfg(any(test, feature = "testkit"))]
        Command::Simulate(args) => args.clock.now,
        _ => None,
    }
}

fn run_settings<F: FamilyFace>(
    global: &GlobalArgs,
    config: &Config,
    fleet: &Fleet<F>,
    args: &RunArgs,
    families: &[&dyn Registered],
) -> Result<Run, SettingsError> {
    let lock = if args.dry_run {
        None
    } else {
        Some(lock_path::<F>(global, config, &fleet.source)?)
    };
    Ok(Run {
        clock: args.clock.into(),
        dry_run: args.dry_run,
        lock,
        every: args.loop_.then_some(args.interval),
        passes: args.passes,
        metrics_file: args.metrics_file.clone(),
        live: live::<F>(fleet),
        leader: leader::<F>(fleet, args, families)?,
    })
}

/// The live cluster a `run --loop` watches, where the family has one ([`FamilyFace::DAEMON`]).
fn live<F: FamilyFace>(fleet: &Fleet<F>) -> Option<crate::k8s::Live> {
    F::DAEMON.and_then(|d| (d.live)(&fleet.source))
}

/// Where the service account's namespace is, in a Pod.
const POD_NAMESPACE_FILE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

fn leader<F: FamilyFace>(
    fleet: &Fleet<F>,
    args: &RunArgs,
    families: &[&dyn Registered],
) -> Result<Option<Leader>, SettingsError> {
    if !args.leader_elect {
        return Ok(None);
    }
    match (live::<F>(fleet).is_some(), args.loop_) {
        (true, true) => {}
        (true, false) => {
            return Err(SettingsError::LeaderElect {
                add: "add --loop".to_owned(),
            });
        }
        (false, loop_given) => {
            return Err(SettingsError::LeaderElect {
                add: super::words::leader_elect_lacks(families, !loop_given),
            });
        }
    }
    use crate::k8s::lease::{DEFAULT_LEASE, LeaseName};
    let lease = match &args.lease {
        Some(text) => match text.split_once('/') {
            Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
                LeaseName {
                    namespace: ns.to_owned(),
                    name: name.to_owned(),
                }
            }
            _ => return Err(SettingsError::Lease(text.clone())),
        },
        None => LeaseName {
            namespace: std::env::var("POD_NAMESPACE")
                .ok()
                .or_else(|| crate::files::read_text(POD_NAMESPACE_FILE).ok())
                .map(|n| n.trim().to_owned())
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "default".into()),
            name: DEFAULT_LEASE.into(),
        },
    };
    // Two processes on one host (no Pod name) must not share an identity: each would think
    // the Lease its own.
    let host = std::env::var("POD_NAME")
        .ok()
        .or_else(|| crate::files::read_text("/proc/sys/kernel/hostname").ok())
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "autorepair".into());
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    Ok(Some(Leader {
        lease,
        identity: format!("{host}_{}", &suffix[..8]),
    }))
}

#[cfg(any(test, feature = "testkit"))]
fn simulate_settings(args: &SimulateArgs) -> Simulate {
    Simulate {
        start: Clock::from(args.clock).now(),
        passes: args.passes,
        seed: args.seed,
        scenarios: args.scenarios,
        quiet_passes: args.quiet_passes,
        replicas: args.replicas as usize,
        verbose: args.verbose,
    }
}

/// The last time every simulated world writes into its files as a date and reads back:
/// 9999-12-30T22:00:00Z, jiff's last timestamp, which sabakan's dates are read into (a day
/// short of the last date the tool prints).
#[cfg(any(test, feature = "testkit"))]
fn simulation_last_second() -> i64 {
    jiff::Timestamp::MAX.as_second()
}

/// The simulated clock moves [`PASS_SECONDS`](crate::engine::sim::PASS_SECONDS) a pass, and the
/// worlds write it into their files as dates: refused when its last pass would be past
/// [`simulation_last_second`], which a world could not read back.
#[cfg(any(test, feature = "testkit"))]
fn simulate_fits_calendar(
    simulate: &Simulate,
    limits: &crate::engine::Limits,
) -> Result<(), SettingsError> {
    let quiet = simulate.quiet_passes(limits);
    let passes = u64::from(simulate.passes) + u64::from(quiet);
    let span = i64::try_from(passes)
        .unwrap_or(i64::MAX)
        .saturating_mul(crate::engine::sim::PASS_SECONDS);
    let end = simulate.start.saturating_add(span);
    let last = simulation_last_second();
    if end <= last {
        return Ok(());
    }
    Err(SettingsError::SimulationPastCalendar {
        start: simulate.start,
        passes,
        quiet,
        end,
        latest: last.saturating_sub(span).max(0),
    })
}

/// The config file: `--config` (or `AUTOREPAIR_CONFIG`), which must exist; else the default
/// path, if it exists; else the defaults.
pub(crate) fn load_config(
    global: &GlobalArgs,
    families: &[&dyn Registered],
) -> Result<Config, SettingsError> {
    let (path, required) = match &global.config {
        Some(p) => (p.clone(), true),
        None => (PathBuf::from(DEFAULT_CONFIG_PATH), false),
    };
    let upgrade = |table: &mut toml::Table, path: &str| {
        for f in families {
            f.upgrade_config(table, path);
        }
    };
    let read = if required {
        crate::files::read_text(&path).map(Some)
    } else {
        crate::files::read_optional_text(&path)
    };
    match read {
        Ok(Some(text)) => Ok(Config::from_toml(
            &text,
            &path.display().to_string(),
            upgrade,
        )?),
        Ok(None) => Ok(Config {
            path: path.display().to_string(),
            ..Config::default()
        }),
        Err(source) => Err(SettingsError::ConfigUnreadable { path, source }),
    }
}

/// The family whose flag names the fleet, else the one whose config keys do (two are an
/// error); and no flag of another family, nor a Kubernetes flag for a fleet that has no use
/// for it.
fn claim(
    families: &[&dyn Registered],
    prepared: &[Box<dyn super::registry::Prepared>],
    shared: &Shared,
    global: &GlobalArgs,
) -> Result<Box<dyn Claimed>, SettingsError> {
    let mut claims = Vec::new();
    for look in [Look::Flags, Look::Config] {
        for family in prepared {
            claims.extend(family.claim(shared, look));
        }
        if !claims.is_empty() {
            break;
        }
    }
    if claims.len() > 1 {
        let key = |c: &dyn Claimed| match c.by() {
            By::Config(key) => key,
            By::Flag => c.family(),
        };
        return Err(SettingsError::TwoConfigFleets {
            first: key(claims[0].as_ref()),
            second: key(claims[1].as_ref()),
        });
    }
    let Some(chosen) = claims.pop() else {
        return Err(SettingsError::NoFleet {
            hints: families
                .iter()
                .map(|f| f.fleet_hint())
                .collect::<Vec<_>>()
                .join("; "),
        });
    };
    for (family, registered) in prepared.iter().zip(families) {
        if family.family() != chosen.family()
            && let Some(flag) = family.flags_given().first()
        {
            return Err(SettingsError::NotThisFleet {
                flag: flag.clone(),
                family: family.family(),
                hint: registered.fleet_hint(),
            });
        }
    }
    if !chosen.uses_kubeconfig() && (global.kubeconfig.is_some() || global.kube_context.is_some()) {
        return Err(SettingsError::KubeconfigAlone {
            names: super::words::kubeconfig_alone(families),
        });
    }
    Ok(chosen)
}

/// The family of a command that needs no fleet (`tags parse`, `generate`): the one whose
/// fleet flag is given (clap lets one at most), with that flag as written; else the first the
/// face knows.
fn family_of_flags<'a>(
    families: &[&'a dyn Registered],
    matches: &clap::ArgMatches,
) -> Result<(&'a dyn Registered, Option<String>), SettingsError> {
    let flagged = families
        .iter()
        .find_map(|f| f.fleet_flag_given(matches).map(|flag| (*f, Some(flag))));
    match (flagged, families.first()) {
        (Some(flagged), _) => Ok(flagged),
        (None, Some(first)) => Ok((*first, None)),
        (None, None) => Err(SettingsError::NoFleet {
            hints: String::new(),
        }),
    }
}

/// Why `family` cannot `generate`, and which families can.
#[cfg(any(test, feature = "testkit"))]
fn no_generator(
    families: &[&dyn Registered],
    family: &'static str,
    flag: Option<String>,
) -> SettingsError {
    let makers: Vec<&str> = families
        .iter()
        .filter(|f| f.generates())
        .map(|f| f.family())
        .collect();
    let hint = match (makers.as_slice(), flag) {
        ([], _) => "no family here makes synthetic fleets".to_owned(),
        (makers, Some(flag)) => format!(
            "synthetic fleets are made for {} only: leave out {flag}",
            makers.join(", ")
        ),
        (makers, None) => format!(
            "synthetic fleets are made for {} only: give its fleet flag",
            makers.join(", ")
        ),
    };
    SettingsError::NoGenerator { family, hint }
}

/// The lock of this fleet (see `lock`): two clusters never share one unless the config or
/// --lock-file says so.
fn lock_path<F: FamilyFace>(
    global: &GlobalArgs,
    config: &Config,
    source: &F::Source,
) -> Result<PathBuf, SettingsError> {
    let named = global
        .lock_file
        .clone()
        .or_else(|| config.lock_file.clone());
    F::lock_path(source, named).map_err(|e| match e {
        LockPathError::FleetFile(e) => SettingsError::FleetFile(e.into()),
        LockPathError::Url(e) => SettingsError::LockFile(e),
    })
}

#[cfg(test)]
mod tests;
