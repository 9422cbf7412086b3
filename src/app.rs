//! Dispatch of the commands: loads config, opens the backend, takes the lock, prints.

use anyhow::{Context, Result, bail};
use autorepair::admin::{self, Verb};
use autorepair::backend::ganeti::{self, Endpoint};
use autorepair::backend::{Backend, file::FleetFile};
use autorepair::cli::{Cli, Command, GlobalArgs, Level, RunArgs, SimulateArgs, TagsCommand};
use autorepair::config::{Config, DEFAULT_CONFIG_PATH};
use autorepair::plan::{self, Plan};
use autorepair::tags::{Tag, TagJson};
use autorepair::{exec, lock, metrics, report};
use std::path::PathBuf;
use std::process::ExitCode;

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
            let code = e.downcast_ref::<Failed>().map_or(Exit::Usage, |f| f.1);
            eprintln!("autorepair: error: {e:#}");
            ExitCode::from(code as u8)
        }
    }
}

fn init_logs(global: &GlobalArgs) {
    let filter = match &global.log {
        Some(f) => tracing_subscriber::EnvFilter::new(f),
        None => tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if global.log_json {
        builder.json().init();
    } else {
        builder.init();
    }
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
            let mut spec = autorepair::generate::Spec::new(instances, seed);
            spec.broken_node_share = broken;
            spec.contradictions = contradictions;
            let fleet = autorepair::generate::generate(&spec);
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
            let fleet_path = source(global, &config)?;
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
                    let until = match (until, for_) {
                        (Some(t), _) => Some(t),
                        (None, Some(d)) => Some(now(clock.now) + d.as_secs() as i64),
                        (None, None) => None,
                    };
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
                        &instance.parse().map_err(anyhow::Error::msg)?,
                        &verb,
                    )
                }
                Command::Clear { instance } => admin_verb(
                    global,
                    &config,
                    &fleet_path,
                    &instance.parse().map_err(anyhow::Error::msg)?,
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
        invalid |= matches!(parsed.body, autorepair::tags::TagJsonBody::Invalid { .. });
        if json {
            println!(
                "{}",
                serde_json::to_string(&parsed).expect("tag JSON always serialises")
            );
        } else {
            match autorepair::tags::parse(t) {
                Ok(Tag::Foreign) => println!("{t}: foreign (not an autorepair tag)"),
                Ok(Tag::Policy(r)) => println!("{t}: allows repairs up to {r}"),
                Ok(Tag::Suspend { until: None }) => println!("{t}: suspended, no end"),
                Ok(Tag::Suspend { until: Some(u) }) => println!("{t}: suspended until {u}"),
                Ok(Tag::Pending(p)) => println!(
                    "{t}: {} repair {} pending since {}, jobs {:?}{}",
                    p.repair,
                    p.id,
                    p.since,
                    p.jobs.to_vec(),
                    if p.jobs.is_empty() {
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
                    r.at,
                    r.jobs.to_vec()
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

fn lock_path(global: &GlobalArgs, config: &Config, source: &Source) -> PathBuf {
    global
        .lock_file
        .clone()
        .or_else(|| config.lock_file.clone())
        .unwrap_or_else(|| match source {
            Source::File(fleet) => {
                let mut name = fleet.as_os_str().to_owned();
                name.push(".lock");
                PathBuf::from(name)
            }
            Source::Rapi(_) => PathBuf::from("/run/lock/autorepair.lock"),
        })
}

fn now(given: Option<i64>) -> i64 {
    given.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
    })
}

fn open(source: &Source) -> Result<Box<dyn Backend>> {
    Ok(match source {
        Source::File(path) => Box::new(FleetFile::open(path).exit_with(Exit::Unreadable)?),
        Source::Rapi(endpoint) => Box::new(ganeti::Rapi::connect(endpoint).exit_with(Exit::Usage)?),
    })
}

/// The planner's limits, told which operations this backend cannot run.
fn limits_for(
    limits: &autorepair::config::Limits,
    backend: &dyn Backend,
) -> autorepair::config::Limits {
    let mut limits = limits.clone();
    limits.unsupported_ops = autorepair::snapshot::OpKind::ALL
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
    Ok(plan::plan(
        &snap,
        now(at),
        &limits_for(&config.limits, backend.as_ref()),
        0,
    ))
}

fn run(global: &GlobalArgs, config: &Config, fleet: &Source, args: &RunArgs) -> Result<Exit> {
    let mut limits = config.limits.clone();
    if let Some(n) = args.max_pending {
        limits.max_pending = n;
    }
    if let Some(n) = args.max_broken {
        limits.max_broken = n;
    }
    let _lock = if args.dry_run {
        None
    } else {
        Some(acquire_lock(&lock_path(global, config, fleet))?)
    };
    let mut worst = Exit::Ok;
    let mut pass = 0u32;
    loop {
        pass += 1;
        match one_pass(fleet, &limits, args, pass) {
            Ok(Exit::Ok) => {}
            Ok(code) => worst = worst.max(code),
            // A daemon outlives a cluster that does not answer for a while.
            Err(e) if args.loop_ => {
                tracing::error!(pass, error = %format!("{e:#}"), "pass failed; trying again next interval");
                worst = worst.max(Exit::Unreadable);
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
    let plan = plan::plan(&snap, at, &limits_for(limits, backend.as_ref()), seed);
    if args.json {
        println!("{}", serde_json::to_string(&report::status_json(&plan))?);
    }
    for l in &plan.lint {
        tracing::warn!(object = %l.object, tag = l.tag.as_deref().unwrap_or(""), "{}", l.message);
    }
    if let Some(h) = &plan.fleet.halted {
        tracing::warn!("{h}");
    }
    if args.dry_run {
        if !args.json {
            for a in plan.actions() {
                println!("would: {a}");
            }
            print!("{}", report::counts_line(&plan));
        }
        return Ok(Exit::Ok);
    }
    let done = exec::execute(&plan, backend.as_mut());
    backend
        .finish_pass(at)
        .with_context(|| format!("pass {pass}: could not save the fleet"))
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
    object: &autorepair::snapshot::ObjectRef,
    verb: &Verb,
) -> Result<Exit> {
    let _lock = acquire_lock(&lock_path(global, config, fleet))?;
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
    let done = exec::execute(&plan, backend.as_mut());
    if let Some((_, e)) = done.errors.first() {
        return Err(anyhow::anyhow!("{object}: {e}")).exit_with(Exit::Unreadable);
    }
    backend.flush().exit_with(Exit::Unreadable)?;
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
                simulate::run(&snap, &sched, &cfg, plan::plan)
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
                plan::plan,
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
