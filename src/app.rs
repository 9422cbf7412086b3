//! Dispatch of the commands: loads config, opens the backend, takes the lock, prints.

use anyhow::{Context, Result, bail};
use autorepair::admin::{self, Verb};
use autorepair::cli::{Cli, Command, GlobalArgs, Level, RunArgs, SimulateArgs, TagsCommand};
use autorepair::config::{Config, DEFAULT_CONFIG_PATH};
use autorepair::engine::{self, Backend as _, BackendError, exec};
use autorepair::ganeti::rapi::{self as ganeti, Endpoint};
use autorepair::ganeti::tags::{Tag, TagJson};
use autorepair::ganeti::{Ganeti, Plan, file, file::FleetFile};
use autorepair::{lock, metrics, report};

/// Every backend of the Ganeti family, behind one type.
type Backend = dyn engine::Backend<Ganeti>;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

/// Exit codes, documented in the man page and `--help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
enum Exit {
    Ok = 0,
    Partial = 1,
    Usage = 2,
    Unreadable = 3,
    Busy = 4,
}

/// An error that carries its exit code.
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
struct Failed(anyhow::Error, Exit);

trait ExitWith<T> {
    fn exit_with(self, code: Exit) -> Result<T>;
}

impl<T, E: Into<anyhow::Error>> ExitWith<T> for std::result::Result<T, E> {
    fn exit_with(self, code: Exit) -> Result<T> {
        self.map_err(|e| Failed(e.into(), code).into())
    }
}

pub fn main(cli: Cli) -> ExitCode {
    init_logs(&cli.global);
    match dispatch(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("autorepair: error: {e:#}");
            ExitCode::from(exit_of(&e) as u8)
        }
    }
}

fn exit_of(e: &anyhow::Error) -> Exit {
    e.downcast_ref::<Failed>().map_or(Exit::Usage, |f| f.1)
}

fn init_logs(global: &GlobalArgs) {
    use tracing_subscriber::util::SubscriberInitExt;
    log_subscriber(global, std::io::stderr).init();
}

/// The one log format, for stderr and for lines held back until a save (see [`held_logs`]).
fn log_subscriber<W>(global: &GlobalArgs, writer: W) -> Box<dyn tracing::Subscriber + Send + Sync>
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let filter = match &global.log {
        Some(f) => tracing_subscriber::EnvFilter::new(f),
        None => tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(colour(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        ));
    if global.log_json {
        Box::new(builder.json().finish())
    } else {
        Box::new(builder.finish())
    }
}

/// Colour is for a person at a terminal: from cron or systemd, stderr goes to syslog, where
/// escape codes are noise. A non-empty NO_COLOR turns it off (https://no-color.org).
fn colour(stderr_is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    stderr_is_terminal && no_color.is_none_or(|v| v.is_empty())
}

/// Log lines held in memory, then written to stderr at once.
#[derive(Clone, Default)]
struct Held(Arc<Mutex<Vec<u8>>>);

impl Write for Held {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Carries out `plan`, then `save`s (which says whether it kept the writes). A fleet file's
/// writes stay in memory until the save, so the executor's "tag added" and "job submitted"
/// lines are held back until the save succeeded and dropped otherwise: the log never claims a
/// write that was lost. Over RAPI every write is made by the call that logs it, so its lines go
/// out at once.
fn execute_and_save(
    global: &GlobalArgs,
    fleet: &Source,
    plan: &Plan,
    backend: &mut Backend,
    save: impl FnOnce(&mut Backend, &exec::Report<Ganeti>) -> Result<bool, BackendError>,
) -> (exec::Report<Ganeti>, Result<(), BackendError>) {
    let Source::File(_) = fleet else {
        let done = exec::execute(plan, backend);
        let saved = save(backend, &done).map(drop);
        return (done, saved);
    };
    let held = Held::default();
    let writer = held.clone();
    let done =
        tracing::subscriber::with_default(log_subscriber(global, move || writer.clone()), || {
            exec::execute(plan, &mut *backend)
        });
    let saved = save(backend, &done);
    if let Ok(true) = saved {
        let lines = std::mem::take(&mut *held.0.lock().unwrap_or_else(|p| p.into_inner()));
        // Nowhere to report a failed write to stderr.
        let _ = std::io::stderr().lock().write_all(&lines);
    }
    (done, saved.map(drop))
}

fn dispatch(cli: Cli) -> Result<Exit> {
    let global = &cli.global;
    match cli.command {
        Command::Tags(TagsCommand::Parse { json, tags }) => Ok(tags_parse(&tags, json)),
        Command::Sabakan(cmd) => autorepair::sabakan::cli::run(cmd)
            .map(|()| Exit::Ok)
            .map_err(|e| {
                use autorepair::sabakan::cli::Failure;
                let code = match e.failure {
                    Failure::Refused => Exit::Partial,
                    Failure::Usage => Exit::Usage,
                    Failure::Unreachable => Exit::Unreadable,
                };
                Failed(e.into(), code).into()
            }),
        Command::Generate {
            instances,
            seed,
            broken,
            contradictions,
            output,
        } => {
            if !(0.0..=1.0).contains(&broken) {
                return Err(anyhow::anyhow!(
                    "--broken {broken}: give a share between 0 and 1"
                ))
                .exit_with(Exit::Usage);
            }
            let mut spec = autorepair::ganeti::generate::Spec::new(instances, seed);
            spec.broken_node_share = broken;
            spec.contradictions = contradictions;
            let fleet = autorepair::ganeti::generate::generate(&spec);
            match output {
                Some(path) => FleetFile::create(&path, fleet)
                    .flush()
                    .exit_with(Exit::Unreadable)?,
                None => {
                    let stdout = std::io::stdout().lock();
                    serde_json::to_writer(std::io::BufWriter::new(stdout), &fleet)?;
                    println!();
                }
            }
            Ok(Exit::Ok)
        }
        command => {
            let config = load_config(global)?;
            let mut fleet_path = source(global, &config)?;
            // Only what a person reads shows the run status; passes need not pay for it.
            if let Source::Rapi(endpoint) = &mut fleet_path {
                endpoint.run_status = matches!(
                    command,
                    Command::Status { .. } | Command::Explain { .. } | Command::Snapshot { .. }
                );
            }
            match command {
                Command::Run(args) => run(global, &config, &fleet_path, &args),
                Command::Status { json, clock } => {
                    let plan = read_plan(&fleet_path, &config, clock.now)?;
                    if json {
                        println!(
                            "{}",
                            serde_json::to_string_pretty(&report::status_json(&plan))?
                        );
                    } else {
                        print!("{}", report::status_table(&plan));
                    }
                    Ok(Exit::Ok)
                }
                Command::Explain {
                    instance,
                    json,
                    clock,
                } => {
                    let plan = read_plan(&fleet_path, &config, clock.now)?;
                    let Some(t) = plan.target(&instance) else {
                        bail!(
                            "instance {instance:?} is not in {}: `autorepair status` lists the instances",
                            fleet_path.describe()
                        );
                    };
                    if json {
                        println!("{}", serde_json::to_string_pretty(t)?);
                    } else {
                        print!("{}", report::explain(&plan, t));
                    }
                    Ok(Exit::Ok)
                }
                Command::Tags(TagsCommand::Lint { json, clock }) => {
                    let plan = read_plan(&fleet_path, &config, clock.now)?;
                    for l in &plan.lint {
                        if json {
                            println!("{}", serde_json::to_string(l)?);
                        } else {
                            println!("{l}");
                        }
                    }
                    if !json {
                        eprintln!("{} tag problem(s)", plan.lint.len());
                    }
                    Ok(if plan.lint.is_empty() {
                        Exit::Ok
                    } else {
                        Exit::Partial
                    })
                }
                Command::Allow { level, object } => {
                    let level = match level {
                        Level::None => None,
                        Level::UpTo(t) => Some(t),
                    };
                    admin_verb(global, &config, &fleet_path, &object, &Verb::Allow(level))
                }
                Command::Suspend {
                    object,
                    until,
                    for_,
                    clock,
                } => {
                    let until =
                        admin::suspend_end(until, for_, now(clock.now)).exit_with(Exit::Usage)?;
                    admin_verb(
                        global,
                        &config,
                        &fleet_path,
                        &object,
                        &Verb::Suspend { until },
                    )
                }
                Command::Resume { object } => {
                    admin_verb(global, &config, &fleet_path, &object, &Verb::Resume)
                }
                Command::Request {
                    repair,
                    instance,
                    clock,
                } => {
                    let verb = Verb::Request {
                        repair,
                        id: uuid::Uuid::new_v4().to_string(),
                        now: now(clock.now),
                    };
                    admin_verb(
                        global,
                        &config,
                        &fleet_path,
                        &autorepair::ganeti::parse_object(&instance).map_err(anyhow::Error::msg)?,
                        &verb,
                    )
                }
                Command::Clear { instance } => admin_verb(
                    global,
                    &config,
                    &fleet_path,
                    &autorepair::ganeti::parse_object(&instance).map_err(anyhow::Error::msg)?,
                    &Verb::Clear,
                ),
                Command::Simulate(args) => simulate(&config, &fleet_path, &args),
                Command::Snapshot { output } => {
                    let snap = open(&fleet_path)?
                        .snapshot()
                        .with_context(|| {
                            format!("cannot read the fleet from {}", fleet_path.describe())
                        })
                        .exit_with(Exit::Unreadable)?;
                    match output {
                        Some(path) => {
                            let mut file = FleetFile::create(&path, snap);
                            file.flush().exit_with(Exit::Unreadable)?;
                            eprintln!(
                                "saved {} instances to {}",
                                file.fleet().instances.len(),
                                path.display()
                            );
                        }
                        None => println!("{}", serde_json::to_string_pretty(&snap)?),
                    }
                    Ok(Exit::Ok)
                }
                Command::Tags(TagsCommand::Parse { .. })
                | Command::Generate { .. }
                | Command::Sabakan(_) => {
                    unreachable!("handled above")
                }
            }
        }
    }
}

fn tags_parse(tags: &[String], json: bool) -> Exit {
    let mut invalid = false;
    for t in tags {
        let parsed = TagJson::of(t);
        invalid |= matches!(
            parsed.body,
            autorepair::ganeti::tags::TagJsonBody::Invalid { .. }
        );
        if json {
            println!(
                "{}",
                serde_json::to_string(&parsed).expect("tag JSON always serialises")
            );
        } else {
            match autorepair::ganeti::tags::parse(t) {
                Ok(Tag::Foreign) => println!("{t}: foreign (not an autorepair tag)"),
                Ok(Tag::Policy(r)) => println!("{t}: allows repairs up to {r}"),
                Ok(Tag::Suspend { until: None }) => println!("{t}: suspended, no end"),
                Ok(Tag::Suspend { until: Some(u) }) => {
                    println!("{t}: suspended until {}", engine::rfc3339(u))
                }
                Ok(Tag::Pending(p)) => println!(
                    "{t}: {} repair {} pending since {}, jobs {:?}{}",
                    p.repair,
                    p.id,
                    engine::rfc3339(p.since),
                    p.ops.to_vec::<u64>(),
                    if p.ops.is_empty() {
                        " (a request, or not yet submitted)"
                    } else {
                        ""
                    }
                ),
                Ok(Tag::Result(r)) => println!(
                    "{t}: {} repair {} ended {} at {}, jobs {:?}",
                    r.repair,
                    r.id,
                    r.result,
                    engine::rfc3339(r.at),
                    r.ops.to_vec::<u64>()
                ),
                Err(e) => println!("{t}: INVALID ({}): {}", e.code.as_str(), e.message),
            }
        }
    }
    if invalid { Exit::Partial } else { Exit::Ok }
}

fn load_config(global: &GlobalArgs) -> Result<Config> {
    let (path, required) = match &global.config {
        Some(p) => (p.clone(), true),
        None => (PathBuf::from(DEFAULT_CONFIG_PATH), false),
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => Config::from_toml(&text, &path.display().to_string()).exit_with(Exit::Usage),
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(e) => Err(e)
            .with_context(|| format!("cannot read config file {}", path.display()))
            .exit_with(Exit::Usage),
    }
}

/// Where the fleet comes from.
enum Source {
    File(PathBuf),
    Rapi(Endpoint),
}

impl Source {
    fn describe(&self) -> String {
        match self {
            Source::File(p) => p.display().to_string(),
            Source::Rapi(e) => e.url.clone(),
        }
    }
}

fn source(global: &GlobalArgs, config: &Config) -> Result<Source> {
    let rapi = &config.rapi;
    if global.cluster.is_none()
        && global.rapi.is_none()
        && rapi.url.is_some()
        && config.fleet_file.is_some()
    {
        return Err(anyhow::anyhow!(
            "the config sets both fleet_file and rapi.url: keep one, or choose with --cluster or --rapi"
        ))
        .exit_with(Exit::Usage);
    }
    let chosen_rapi = if global.cluster.is_some() {
        None
    } else {
        global.rapi.clone().or_else(|| rapi.url.clone())
    };
    if let Some(url) = chosen_rapi {
        let user = global
            .rapi_user
            .clone()
            .or_else(|| rapi.user.clone())
            .context("no RAPI user: pass --rapi-user USER or set rapi.user in the config")
            .exit_with(Exit::Usage)?;
        let password_file = global
            .rapi_password_file
            .clone()
            .or_else(|| rapi.password_file.clone());
        let password = ganeti::read_password(password_file.as_deref()).exit_with(Exit::Usage)?;
        let insecure = global.insecure || rapi.insecure;
        let ca_file = global.rapi_ca.clone().or_else(|| rapi.ca_file.clone());
        if ca_file.is_none() && !insecure {
            tracing::warn!(
                "no --rapi-ca given: the RAPI server is verified against the public web roots, which a self-signed Ganeti certificate never passes"
            );
        }
        return Ok(Source::Rapi(Endpoint {
            url,
            user,
            password,
            ca_file,
            insecure,
            timeout: rapi.timeout,
            run_status: false,
        }));
    }
    global
        .cluster
        .clone()
        .or_else(|| config.fleet_file.clone())
        .map(Source::File)
        .context("no fleet to work on: pass --cluster FILE (e.g. --cluster fixtures/demo.json), or --rapi URL for a real cluster, or set fleet_file or rapi.url in the config")
        .exit_with(Exit::Usage)
}

/// The lock of this fleet (see `lock`): two clusters never share one unless the config or
/// --lock-file says so.
fn lock_path(global: &GlobalArgs, config: &Config, source: &Source) -> Result<PathBuf> {
    let named = global
        .lock_file
        .clone()
        .or_else(|| config.lock_file.clone());
    match source {
        // Checked even with a named lock: a typo in the fleet path must leave no lock file behind.
        Source::File(fleet) => {
            let beside = lock::beside(fleet)
                .map_err(|e| file::unreadable(fleet, &e))
                .exit_with(Exit::Unreadable)?;
            Ok(named.unwrap_or(beside))
        }
        Source::Rapi(endpoint) => match named {
            Some(path) => Ok(path),
            None => lock::for_url(&endpoint.url).exit_with(Exit::Usage),
        },
    }
}

fn now(given: Option<i64>) -> i64 {
    given.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
    })
}

fn open(source: &Source) -> Result<Box<Backend>> {
    Ok(match source {
        Source::File(path) => Box::new(FleetFile::open(path).exit_with(Exit::Unreadable)?),
        Source::Rapi(endpoint) => Box::new(ganeti::Rapi::connect(endpoint).exit_with(Exit::Usage)?),
    })
}

/// The planner's limits, told which operations this backend cannot run.
fn limits_for(
    limits: &autorepair::config::Limits,
    backend: &Backend,
) -> autorepair::config::Limits {
    let mut limits = limits.clone();
    limits.unsupported_ops = autorepair::ganeti::snapshot::OpKind::ALL
        .into_iter()
        .filter(|k| !backend.supports(*k))
        .collect();
    limits
}

fn read_plan(source: &Source, config: &Config, at: Option<i64>) -> Result<Plan> {
    let mut backend = open(source)?;
    let snap = backend
        .snapshot()
        .with_context(|| format!("cannot read the fleet from {}", source.describe()))
        .exit_with(Exit::Unreadable)?;
    Ok(autorepair::ganeti::plan(
        &snap,
        now(at),
        &limits_for(&config.limits, backend.as_ref()),
        0,
    ))
}

fn run(global: &GlobalArgs, config: &Config, fleet: &Source, args: &RunArgs) -> Result<Exit> {
    let mut limits = config.limits.clone();
    if let Some(n) = args.max_pending {
        limits.max_pending = Some(n);
    }
    if let Some(n) = args.max_broken {
        limits.max_broken = Some(n);
    }
    let lock = if args.dry_run {
        None
    } else {
        Some(lock_path(global, config, fleet)?)
    };
    let mut worst = Exit::Ok;
    let mut pass = 0u32;
    loop {
        pass += 1;
        // The lock is held while a pass acts and never while the loop sleeps, so an admin can
        // always suspend (or stop) the watcher between two passes.
        let outcome = lock
            .as_deref()
            .map(acquire_lock)
            .transpose()
            .and_then(|_held| one_pass(global, fleet, &limits, args, pass));
        match outcome {
            Ok(Exit::Ok) => {}
            Ok(code) => worst = worst.max(code),
            // A daemon outlives a cluster that does not answer for a while, and a pass that
            // an admin command (or another run) kept out.
            Err(e) if args.loop_ => {
                let code = exit_of(&e);
                if code == Exit::Busy {
                    tracing::warn!(pass, "{e:#}; trying again next interval");
                } else {
                    tracing::error!(pass, error = %format!("{e:#}"), "pass failed; trying again next interval");
                }
                worst = worst.max(code);
            }
            Err(e) => return Err(e),
        }
        let more = match args.passes {
            Some(n) => pass < n,
            None => args.loop_,
        };
        if !more {
            return Ok(worst);
        }
        if args.loop_ {
            std::thread::sleep(args.interval);
        }
    }
}

fn one_pass(
    global: &GlobalArgs,
    fleet: &Source,
    limits: &autorepair::config::Limits,
    args: &RunArgs,
    pass: u32,
) -> Result<Exit> {
    let started = std::time::Instant::now();
    let mut backend = open(fleet)?;
    let snap = backend
        .snapshot()
        .with_context(|| format!("cannot read the fleet from {}", fleet.describe()))
        .exit_with(Exit::Unreadable)?;
    let at = now(args.clock.now);
    let seed = uuid::Uuid::new_v4().as_u64_pair().0;
    let plan = autorepair::ganeti::plan(&snap, at, &limits_for(limits, backend.as_ref()), seed);
    if args.json {
        println!("{}", serde_json::to_string(&report::status_json(&plan))?);
    }
    for l in &plan.lint {
        tracing::warn!(object = %l.object, tag = l.tag.as_deref().unwrap_or(""), "{}", l.message);
    }
    for h in plan.fleet.halted.iter().chain(&plan.fleet.halted_groups) {
        tracing::warn!(limit = h.limit, scope = %h.scope, "{h}");
    }
    if plan.fleet.deferred > 0 {
        tracing::info!(
            deferred = plan.fleet.deferred,
            writes = plan.fleet.writes,
            "the write budget is spent: {} target(s) wait for the next pass",
            plan.fleet.deferred
        );
    }
    if args.dry_run {
        if !args.json {
            for a in plan.actions() {
                println!("would: {a}");
            }
            print!("{}", report::counts_line(&plan));
            print!("{}", report::limits_lines(&plan));
        }
        return Ok(Exit::Ok);
    }
    let (done, saved) = execute_and_save(global, fleet, &plan, backend.as_mut(), |b, _| {
        b.finish_pass(at).map(|()| true)
    });
    saved
        .with_context(|| {
            format!(
                "pass {pass}: could not save the fleet, so none of its {} action(s) took effect",
                done.actions_done
            )
        })
        .exit_with(Exit::Unreadable)?;
    if !args.json {
        println!(
            "pass {pass}: {} action(s), {} job(s) submitted, {} error(s); {}",
            done.actions_done,
            done.jobs_submitted.len(),
            done.errors.len(),
            report::counts_line(&plan).trim_end()
        );
    }
    if let Some(path) = &args.metrics_file {
        let previous = std::fs::read_to_string(path).unwrap_or_default();
        let text = metrics::render(&previous, &plan, &done, started.elapsed(), at);
        metrics::write_atomically(path, &text)
            .with_context(|| format!("cannot write the metrics file {}", path.display()))
            .exit_with(Exit::Unreadable)?;
    }
    Ok(if done.errors.is_empty() {
        Exit::Ok
    } else {
        Exit::Partial
    })
}

fn admin_verb(
    global: &GlobalArgs,
    config: &Config,
    fleet: &Source,
    object: &autorepair::ganeti::snapshot::ObjectRef,
    verb: &Verb,
) -> Result<Exit> {
    let _lock = acquire_lock(&lock_path(global, config, fleet)?)?;
    let mut backend = open(fleet)?;
    let snap = backend.snapshot().exit_with(Exit::Unreadable)?;
    let actions = admin::edits(&snap, object, verb).exit_with(Exit::Usage)?;
    let plan_of = |actions| Plan {
        now: 0,
        targets: vec![],
        scope_actions: actions,
        lint: vec![],
        fleet: Default::default(),
        counts: Default::default(),
    };
    let plan = plan_of(actions);
    // An edit that failed halfway is not saved: the admin runs the command again, whole.
    let (done, saved) = execute_and_save(global, fleet, &plan, backend.as_mut(), |b, done| {
        if done.errors.is_empty() {
            b.flush().map(|()| true)
        } else {
            Ok(false)
        }
    });
    if let Some((_, e)) = done.errors.first() {
        return Err(anyhow::anyhow!("{object}: {e}")).exit_with(Exit::Unreadable);
    }
    saved.exit_with(Exit::Unreadable)?;
    for a in plan.actions() {
        println!("{a}");
    }
    if plan.scope_actions.is_empty() {
        println!("{object}: already so, nothing changed");
    }
    Ok(Exit::Ok)
}

fn simulate(config: &Config, fleet: &Source, args: &SimulateArgs) -> Result<Exit> {
    use autorepair::simulate::{self, Faults, PASS_SECONDS, SimConfig};
    let snap = open(fleet)?.snapshot().exit_with(Exit::Unreadable)?;
    let mut cfg = SimConfig::new(now(args.clock.now));
    cfg.limits = config.limits.clone();
    let retries_end = config.limits.max_repair_age.as_secs() as i64 / PASS_SECONDS;
    cfg.quiet_passes = args
        .quiet_passes
        .unwrap_or((retries_end as u32).saturating_add(20).max(80));
    let faults = Faults::default();
    if args.verbose && args.scenarios == 1 {
        let sched = simulate::schedule(&snap, args.passes, args.seed, &faults);
        let out =
            tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::default(), || {
                simulate::run(&snap, &sched, &cfg, autorepair::ganeti::plan)
            });
        for (pass, lines) in out.log.iter().enumerate() {
            for l in lines {
                println!("pass {pass}: {l}");
            }
        }
    }
    // The executor logs every action; thousands of simulated passes would drown the summary.
    let summary =
        tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::default(), || {
            simulate::explore(
                &snap,
                args.passes,
                args.seed,
                args.scenarios,
                &cfg,
                &faults,
                autorepair::ganeti::plan,
            )
        });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        let s = &summary.stats;
        println!(
            "{} scenario(s), {} passes: {} jobs submitted, {} repairs succeeded, {} failed, {} kills of the watcher, {} halted passes",
            summary.scenarios,
            s.passes,
            s.jobs_submitted,
            s.repairs_succeeded,
            s.repairs_failed,
            s.kills,
            s.halted_passes
        );
        match summary.findings.first() {
            None => println!("no safety or liveness rule was violated"),
            Some(f) => print!("VIOLATION: {f}"),
        }
    }
    Ok(if summary.findings.is_empty() {
        Exit::Ok
    } else {
        Exit::Partial
    })
}

/// Another run holding the lock is the normal cron overlap (exit 4); a lock file that cannot be
/// opened is a configuration error (exit 2), not to be mistaken for it.
fn acquire_lock(path: &std::path::Path) -> Result<lock::LockGuard> {
    match lock::acquire(path) {
        Ok(guard) => Ok(guard),
        Err(e @ lock::LockError::Busy { .. }) => Err(e).exit_with(Exit::Busy),
        Err(e) => Err(e).exit_with(Exit::Usage),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_and_without_no_color() {
        let cases = [
            (true, None, true),
            (true, Some(""), true),
            (true, Some("1"), false),
            (true, Some("0"), false),
            (false, None, false),
            (false, Some(""), false),
            (false, Some("1"), false),
        ];
        for (terminal, no_color, want) in cases {
            assert_eq!(
                colour(terminal, no_color.map(std::ffi::OsStr::new)),
                want,
                "terminal {terminal}, NO_COLOR={no_color:?}"
            );
        }
    }
}
