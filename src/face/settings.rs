//! The settings stage: the parsed command line, the config file and the environment, merged and
//! validated once into [`Settings`]. Nothing after it reads [`Cli`] or [`Config`].
//!
//! Precedence, for every value that has more than one source: a flag, then the environment (clap
//! reads `AUTOREPAIR_CONFIG` for `--config`), then the config file, then the default. The RAPI
//! password is the one exception, documented as it is: a password file named by the flag or the
//! config wins over `AUTOREPAIR_RAPI_PASSWORD`.

#[cfg(any(test, feature = "testkit"))]
use super::cli::SimulateArgs;
use super::cli::{Cli, ClockArgs, Command, GlobalArgs, Level, RunArgs, TagsCommand};
use super::family::FamilyFace;
use crate::engine::marks::Level as _;
#[cfg(any(test, feature = "testkit"))]
use crate::ganeti::generate::Spec;
use crate::{
    admin::{self, AdminError, Verb},
    config::{Config, ConfigError, DEFAULT_CONFIG_PATH, Limits},
    engine::{BackendError, ObjectRef},
    lock::LockError,
    plug::LockPathError,
    sabakan::cli::SabakanCommand,
};
use crate::{ganeti::Ganeti, machines::Machines, metal3::Metal3};
use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// What the process environment contributes, read once ([`Env::from_process`]) so that the stage
/// can be tested with any environment.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `AUTOREPAIR_RAPI_PASSWORD`, used when no password file is named.
    pub rapi_password: Option<String>,
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
            rapi_password: std::env::var("AUTOREPAIR_RAPI_PASSWORD").ok(),
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
    TagsParse {
        tags: Vec<String>,
    },
    #[cfg(any(test, feature = "testkit"))]
    Generate {
        spec: Spec,
        output: Option<PathBuf>,
    },
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
        no_headers: bool,
    },
    Explain {
        fleet: Fleet<F>,
        clock: Clock,
        instance: String,
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
    },
    #[cfg(any(test, feature = "testkit"))]
    Simulate {
        fleet: Fleet<F>,
        simulate: Simulate,
    },
    Snapshot {
        fleet: Fleet<F>,
        output: Option<PathBuf>,
    },
    /// `repair …`, a repair queue's entries (the machines family's).
    Repair {
        fleet: Fleet<F>,
        lock: PathBuf,
        cmd: crate::face::cli::RepairCommand,
    },
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

pub use crate::machines::face::{MachinesFleet, MachinesFrom, NodesFrom};

/// Where the fleet comes from: a source of one family.
#[derive(Debug)]
pub enum Source {
    Ganeti(crate::ganeti::face::Source),
    Metal3(crate::metal3::face::Source),
    Machines(Box<MachinesFleet>),
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
#[derive(Debug, Clone, PartialEq, Eq)]
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
    pub live: Option<crate::plug::Live>,
}

/// Leader election between replicas of `run --loop --kube`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leader {
    pub lease: crate::k8s::lease::LeaseName,
    /// This replica's name in the Lease.
    pub identity: String,
}

/// `simulate`.
#[cfg(any(test, feature = "testkit"))]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simulate {
    pub clock: Clock,
    pub passes: u32,
    pub seed: u64,
    pub scenarios: usize,
    /// `None`: enough for max_repair_age to run out (the simulator's to say).
    pub quiet_passes: Option<u32>,
    /// Print every pass (only with one scenario).
    pub verbose: bool,
}

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
    #[error(
        "`autorepair repair` works on sabakan machines: pass --sabakan URL (or --sabakan-file FILE) and --repair-config FILE"
    )]
    NotMachines,
    #[error(
        "{0} is for a machines fleet: add --sabakan URL or --sabakan-file FILE (or set one in the config's [machines] section)"
    )]
    MachinesOnly(&'static str),
    #[error(
        "--kubeconfig and --kube-context name the cluster of --kube (metal3) or the Nodes of a machines fleet (--sabakan, --sabakan-file): add one of them"
    )]
    KubeconfigAlone,
    #[error(
        "the config's [machines] section sets both {0} and {1}: keep one, or choose with a flag"
    )]
    MachinesTwice(&'static str, &'static str),
    #[error(
        "the config names two fleets ([machines] {0}, and fleet_file or rapi.url): keep one, or choose with a flag"
    )]
    MachinesAndFleet(&'static str),
    /// The machines family's repair configuration or constraints.
    #[error(transparent)]
    Machines(crate::machines::config::ConfigError),
    #[error(
        "the config sets both fleet_file and rapi.url: keep one, or choose with --cluster or --rapi"
    )]
    TwoFleets,
    #[error(
        "no fleet to work on: pass --cluster FILE (e.g. --cluster fixtures/demo.json), or --rapi URL for a real cluster, or set fleet_file or rapi.url in the config"
    )]
    NoFleet,
    #[error(
        "--leader-elect elects among replicas of `run --loop --kube`: add --loop and --kube (a file or Ganeti fleet has no Lease to elect with)"
    )]
    LeaderElect,
    #[error("--lease {0:?}: give the Lease as NAMESPACE/NAME, e.g. --lease autorepair/autorepair")]
    Lease(String),
    /// The RAPI endpoint's user or password.
    #[error(transparent)]
    Rapi(#[from] crate::ganeti::face::EndpointError),
    #[error(transparent)]
    OnlyOnMaster(#[from] crate::ganeti::face::OnlyOnMasterError),
    /// The fleet file to take the lock beside is missing or unreadable.
    #[error(transparent)]
    FleetFile(Box<BackendError>),
    /// No lock can be named for the RAPI URL.
    #[error(transparent)]
    LockFile(LockError),
    /// --until or --for.
    #[error(transparent)]
    Suspend(AdminError),
    /// The object an admin command names.
    #[error("{0}")]
    Object(String),
    /// The level an admin command asks for.
    #[error("{0}")]
    Level(String),
}

impl Settings {
    /// Resolves everything `cli` asks for. `logs` comes from [`Logs::resolve`], made (and the
    /// logger set up) first.
    pub fn resolve(cli: Cli, logs: Logs, env: &Env) -> Result<Settings, SettingsError> {
        let global = &cli.global;
        let mut output = Output {
            json: false,
            colour: colour(env.stdout_is_terminal, env.no_color.as_deref()),
        };
        let job = match cli.command {
            // The commands that need neither the config nor a fleet.
            Command::Tags(TagsCommand::Parse { json, tags }) => {
                output.json = json;
                Job::TagsParse { tags }
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
                let mut spec = Spec::new(instances, seed);
                spec.broken_node_share = broken;
                spec.contradictions = contradictions;
                Job::Generate { spec, output: file }
            }
            command => {
                let config = load_config(global)?;
                let mut source = source(global, &config, env)?;
                // Only what a person reads shows the run status; passes need not pay for it.
                if let Source::Ganeti(crate::ganeti::face::Source {
                    from: crate::ganeti::face::Where::Rapi(endpoint),
                    ..
                }) = &mut source
                {
                    endpoint.run_status = matches!(
                        command,
                        Command::Status { .. } | Command::Explain { .. } | Command::Snapshot { .. }
                    );
                }
                if let Source::Ganeti(ganeti) = &mut source {
                    crate::ganeti::face::only_on_master(
                        ganeti,
                        matches!(command, Command::Run(_)),
                        global.only_on_master || config.ganeti.only_on_master,
                        &config.ganeti,
                        std::env::var_os(crate::ganeti::face::SSCONF_DIR_ENV).map(PathBuf::from),
                    )?;
                }
                // A machines fleet brings CKE's limits; the engine's give way where unset.
                let limits = match &source {
                    Source::Machines(_) => {
                        crate::machines::limits(&config.limits, &config.limits_given)
                    }
                    _ => config.limits.clone(),
                };
                let now = command_now(&command);
                let wait = global.wait;
                match source {
                    Source::Ganeti(source) => Job::Fleet(Box::new(fleet_job::<Ganeti>(
                        global,
                        &config,
                        Fleet {
                            source,
                            limits,
                            lock_wait: wait,
                        },
                        command,
                        &mut output,
                    )?)),
                    Source::Metal3(source) => Job::Fleet(Box::new(fleet_job::<Metal3>(
                        global,
                        &config,
                        Fleet {
                            source,
                            limits,
                            lock_wait: wait,
                        },
                        command,
                        &mut output,
                    )?)),
                    Source::Machines(mut source) => {
                        source.now = now;
                        Job::Fleet(Box::new(fleet_job::<Machines>(
                            global,
                            &config,
                            Fleet {
                                source: *source,
                                limits,
                                lock_wait: wait,
                            },
                            command,
                            &mut output,
                        )?))
                    }
                }
            }
        };
        Ok(Settings { logs, output, job })
    }
}

/// The commands that work on a fleet, in the order the checks were always made: config, fleet,
/// the command's own arguments, then its lock.
fn fleet_job<F: FamilyFace>(
    global: &GlobalArgs,
    config: &Config,
    mut fleet: Fleet<F>,
    command: Command,
    output: &mut Output,
) -> Result<FleetJob<F>, SettingsError> {
    let admin = |fleet: Fleet<F>,
                 object: ObjectRef,
                 verb: Verb<F::Level>|
     -> Result<FleetJob<F>, SettingsError> {
        let lock = lock_path::<F>(global, config, &fleet.source)?;
        Ok(FleetJob::Admin {
            fleet,
            lock,
            object,
            verb,
        })
    };
    Ok(match command {
        Command::Run(args) => {
            output.json = args.json;
            let run = run_settings(global, config, &fleet, &args)?;
            if let Some(n) = args.max_pending {
                fleet.limits.max_pending = Some(n);
            }
            if let Some(n) = args.max_broken {
                fleet.limits.max_broken = Some(n);
            }
            FleetJob::Run { fleet, run }
        }
        Command::Status {
            json,
            no_headers,
            clock,
        } => {
            output.json = json;
            FleetJob::Status {
                fleet,
                clock: clock.into(),
                no_headers,
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
            clock,
        } => {
            output.json = json;
            FleetJob::Explain {
                fleet,
                clock: clock.into(),
                instance,
            }
        }
        Command::Tags(TagsCommand::Lint { json, clock }) => {
            output.json = json;
            FleetJob::Lint {
                fleet,
                clock: clock.into(),
            }
        }
        Command::Allow { level, object, .. } => {
            let level = match level {
                Level::None => None,
                Level::UpTo(t) => Some(read_level::<F>(&t)?),
            };
            admin(fleet, read_object::<F>(&object)?, Verb::Allow(level))?
        }
        Command::Suspend {
            object,
            until,
            for_,
            clock,
        } => {
            let object = read_object::<F>(&object)?;
            let until = admin::suspend_end(until, for_, Clock::from(clock).now())
                .map_err(SettingsError::Suspend)?;
            admin(fleet, object, Verb::Suspend { until })?
        }
        Command::Resume { object, .. } => admin(fleet, read_object::<F>(&object)?, Verb::Resume)?,
        Command::Request {
            repair,
            target: name,
            clock,
        } => {
            let verb = Verb::Request {
                repair: read_level::<F>(&repair)?,
                id: uuid::Uuid::new_v4().to_string(),
                now: Clock::from(clock).now(),
            };
            admin(fleet, read_object::<F>(&name)?, verb)?
        }
        Command::Clear { target: name, .. } => admin(fleet, read_object::<F>(&name)?, Verb::Clear)?,
        #[cfg(any(test, feature = "testkit"))]
        Command::Simulate(args) => {
            output.json = args.json;
            FleetJob::Simulate {
                fleet,
                simulate: simulate_settings(&args),
            }
        }
        Command::Snapshot { output: file } => FleetJob::Snapshot {
            fleet,
            output: file,
        },
        Command::Repair(cmd) => {
            if let crate::face::cli::RepairCommand::List { json } = &cmd {
                output.json = *json;
            }
            let lock = lock_path::<F>(global, config, &fleet.source)?;
            FleetJob::Repair { fleet, lock, cmd }
        }
        Command::Tags(TagsCommand::Parse { .. }) | Command::Sabakan(_) => {
            unreachable!("resolved without a fleet")
        }
        #[cfg(any(test, feature = "testkit"))]
        Command::Generate { .. } => unreachable!("resolved without a fleet"),
    })
}

/// The command's `--now`, if it takes one.
fn command_now(command: &Command) -> Option<i64> {
    use crate::face::cli::RepairCommand;
    match command {
        Command::Run(args) => args.clock.now,
        Command::Status { clock, .. }
        | Command::Explain { clock, .. }
        | Command::Tags(TagsCommand::Lint { clock, .. })
        | Command::Allow { clock, .. }
        | Command::Suspend { clock, .. }
        | Command::Resume { clock, .. }
        | Command::Request { clock, .. }
        | Command::Clear { clock, .. }
        | Command::Repair(RepairCommand::Add { clock, .. }) => clock.now,
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
        live: F::live(&fleet.source).cloned(),
        leader: leader::<F>(fleet, args)?,
    })
}

/// Where the service account's namespace is, in a Pod.
const POD_NAMESPACE_FILE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

fn leader<F: FamilyFace>(
    fleet: &Fleet<F>,
    args: &RunArgs,
) -> Result<Option<Leader>, SettingsError> {
    if !args.leader_elect {
        return Ok(None);
    }
    if F::live(&fleet.source).is_none() || !args.loop_ {
        return Err(SettingsError::LeaderElect);
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
                .or_else(|| std::fs::read_to_string(POD_NAMESPACE_FILE).ok())
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
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
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
        clock: args.clock.into(),
        passes: args.passes,
        seed: args.seed,
        scenarios: args.scenarios,
        quiet_passes: args.quiet_passes,
        verbose: args.verbose,
    }
}

/// The config file: `--config` (or `AUTOREPAIR_CONFIG`), which must exist; else the default
/// path, if it exists; else the defaults.
fn load_config(global: &GlobalArgs) -> Result<Config, SettingsError> {
    let (path, required) = match &global.config {
        Some(p) => (p.clone(), true),
        None => (PathBuf::from(DEFAULT_CONFIG_PATH), false),
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Config::from_toml(&text, &path.display().to_string())?),
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(source) => Err(SettingsError::ConfigUnreadable { path, source }),
    }
}

/// The fleet: `--cluster` or `--rapi`, else the config's `fleet_file` or `rapi.url` (not both).
fn source(global: &GlobalArgs, config: &Config, env: &Env) -> Result<Source, SettingsError> {
    let source = fleet_source(global, config, env)?;
    let machines = matches!(source, Source::Machines(_));
    let kube = matches!(
        source,
        Source::Metal3(crate::metal3::face::Source {
            from: crate::metal3::face::Where::Kube(_),
            ..
        })
    );
    if !machines {
        let flags: [(&'static str, bool); 4] = [
            ("--repair-config", global.repair_config.is_some()),
            ("--constraints", global.machine_constraints.is_some()),
            ("--nodes", global.machine_nodes.is_some()),
            ("--sabakan-ca", global.sabakan_ca.is_some()),
        ];
        if let Some((flag, _)) = flags.iter().find(|(_, given)| *given) {
            return Err(SettingsError::MachinesOnly(flag));
        }
    }
    if !machines && !kube && (global.kubeconfig.is_some() || global.kube_context.is_some()) {
        return Err(SettingsError::KubeconfigAlone);
    }
    Ok(source)
}

/// A machines fleet, when a flag or the config's `[machines]` section names one (a flag for
/// another fleet wins over the section).
fn machines_source(
    global: &GlobalArgs,
    config: &Config,
) -> Result<Option<MachinesFleet>, SettingsError> {
    let m = &config.machines;
    let other_flag = global.cluster.is_some()
        || global.rapi.is_some()
        || global.kube_objects.is_some()
        || global.kube;
    let from = match (&global.sabakan_url, &global.sabakan_file) {
        (Some(url), _) => Some(Ok(url.clone())),
        (None, Some(path)) => Some(Err(path.clone())),
        (None, None) if other_flag => None,
        (None, None) => match (&m.sabakan, &m.sabakan_file) {
            (Some(_), Some(_)) => {
                return Err(SettingsError::MachinesTwice("sabakan", "sabakan_file"));
            }
            (Some(url), None) => Some(Ok(url.clone())),
            (None, Some(path)) => Some(Err(path.clone())),
            (None, None) => None,
        },
    };
    let Some(from) = from else {
        return Ok(None);
    };
    let from_config = global.sabakan_url.is_none() && global.sabakan_file.is_none();
    if from_config && (config.fleet_file.is_some() || config.rapi.url.is_some()) {
        return Err(SettingsError::MachinesAndFleet(if m.sabakan.is_some() {
            "sabakan"
        } else {
            "sabakan_file"
        }));
    }
    let kube = |path: PathBuf| {
        NodesFrom::Kube(crate::k8s::Source::Kubeconfig {
            path: Some(path),
            context: global
                .kube_context
                .clone()
                .or_else(|| m.kube_context.clone()),
        })
    };
    let nodes = match (&global.machine_nodes, &global.kubeconfig) {
        (Some(path), _) => NodesFrom::File(path.clone()),
        (None, Some(path)) => kube(path.clone()),
        (None, None) => match (&m.nodes, &m.kubeconfig) {
            (Some(_), Some(_)) => return Err(SettingsError::MachinesTwice("nodes", "kubeconfig")),
            (Some(path), None) => NodesFrom::File(path.clone()),
            (None, Some(path)) => kube(path.clone()),
            (None, None) => NodesFrom::None,
        },
    };
    let from = match from {
        Ok(url) => MachinesFrom::Sabakan(crate::sabakan::client::Endpoint {
            url,
            timeout: m.timeout,
            ca_file: global.sabakan_ca.clone().or_else(|| m.ca_file.clone()),
        }),
        Err(path) => MachinesFrom::File(path),
    };
    let what = match &from {
        MachinesFrom::File(p) => p.display().to_string(),
        MachinesFrom::Sabakan(e) => crate::sabakan::client::shown_str(&e.url),
    };
    let settings = crate::machines::face::settings(
        &what,
        global
            .repair_config
            .as_deref()
            .or(m.repair_config.as_deref()),
        global
            .machine_constraints
            .as_deref()
            .or(m.constraints.as_deref()),
        !matches!(nodes, NodesFrom::None),
        m.query(),
    )
    .map_err(SettingsError::Machines)?;
    Ok(Some(MachinesFleet {
        from,
        nodes,
        settings,
        now: None,
    }))
}

fn fleet_source(global: &GlobalArgs, config: &Config, env: &Env) -> Result<Source, SettingsError> {
    use crate::ganeti::face::Where;
    use crate::metal3::face::Where as Metal3Where;
    let ganeti_source = |from| {
        Source::Ganeti(crate::ganeti::face::Source {
            from,
            iallocator: config.ganeti.iallocator().map(str::to_owned),
            master: None,
            lock_named: global.lock_file.is_some() || config.lock_file.is_some(),
        })
    };
    let metal3_source = |from| {
        let section = crate::config::Metal3 {
            fencing: if global.out_of_service_taint {
                crate::metal3::Fencing::OutOfServiceTaint
            } else {
                config.metal3.fencing
            },
            ..config.metal3.clone()
        };
        Source::Metal3(crate::metal3::face::Source {
            from,
            settings: section.settings(),
        })
    };
    if let Some(m) = machines_source(global, config)? {
        return Ok(Source::Machines(Box::new(m)));
    }
    let rapi = &config.rapi;
    if global.cluster.is_none()
        && global.rapi.is_none()
        && rapi.url.is_some()
        && config.fleet_file.is_some()
    {
        return Err(SettingsError::TwoFleets);
    }
    let chosen_rapi = if global.cluster.is_some() {
        None
    } else {
        global.rapi.clone().or_else(|| rapi.url.clone())
    };
    if let Some(url) = chosen_rapi {
        let flags = crate::ganeti::face::RapiFlags {
            user: global.rapi_user.clone(),
            password_file: global.rapi_password_file.clone(),
            ca_file: global.rapi_ca.clone(),
            insecure: global.insecure,
        };
        let endpoint =
            crate::ganeti::face::endpoint(url, flags, rapi, env.rapi_password.as_deref())?;
        return Ok(ganeti_source(Where::Rapi(endpoint)));
    }
    if let Some(objects) = &global.kube_objects {
        return Ok(metal3_source(Metal3Where::Objects(objects.clone())));
    }
    if global.kube {
        use crate::metal3::kube;
        let in_pod = std::env::var_os("KUBERNETES_SERVICE_HOST").is_some();
        let from = if global.kubeconfig.is_none()
            && global.kube_context.is_none()
            && in_pod
            && std::env::var_os("KUBECONFIG").is_none()
        {
            kube::Source::InCluster
        } else {
            kube::Source::Kubeconfig {
                path: global.kubeconfig.clone(),
                context: global.kube_context.clone(),
            }
        };
        let options = kube::Options {
            workload: if global.workload_secrets {
                kube::Workload::ClusterSecrets
            } else {
                kube::Workload::Management
            },
            ..kube::Options::default()
        };
        return Ok(metal3_source(Metal3Where::Kube(crate::plug::Live {
            from,
            options,
        })));
    }
    global
        .cluster
        .clone()
        .or_else(|| config.fleet_file.clone())
        .map(|path| ganeti_source(Where::File(path)))
        .ok_or(SettingsError::NoFleet)
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
