//! Dispatch of the commands: loads config, opens the backend, takes the lock, prints.

use anyhow::{Context, Result, bail};
use autorepair::admin::{self, Verb};
use autorepair::backend::{Backend, file::FleetFile};
use autorepair::cli::{Cli, Command, GlobalArgs, Level, RunArgs, SimulateArgs, TagsCommand};
use autorepair::config::{Config, DEFAULT_CONFIG_PATH};
use autorepair::plan::{self, Plan};
use autorepair::tags::{Tag, TagJson};
use autorepair::{exec, lock, report};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit codes, documented in the man page and `--help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(&global.log));
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
        command => {
            let config = load_config(global)?;
            let fleet_path = fleet_path(global, &config)?;
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
                            fleet_path.display()
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
                Command::Tags(TagsCommand::Parse { .. }) => unreachable!("handled above"),
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

fn fleet_path(global: &GlobalArgs, config: &Config) -> Result<PathBuf> {
    global
        .cluster
        .clone()
        .or_else(|| config.fleet_file.clone())
        .context("no fleet to work on: pass --cluster FILE (e.g. --cluster fixtures/demo.json) or set fleet_file in the config")
        .exit_with(Exit::Usage)
}

fn lock_path(global: &GlobalArgs, config: &Config, fleet: &Path) -> PathBuf {
    global
        .lock_file
        .clone()
        .or_else(|| config.lock_file.clone())
        .unwrap_or_else(|| {
            let mut name = fleet.as_os_str().to_owned();
            name.push(".lock");
            PathBuf::from(name)
        })
}

fn now(given: Option<i64>) -> i64 {
    given.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
    })
}

fn open(fleet: &Path) -> Result<FleetFile> {
    FleetFile::open(fleet).exit_with(Exit::Unreadable)
}

fn read_plan(fleet: &Path, config: &Config, at: Option<i64>) -> Result<Plan> {
    let mut backend = open(fleet)?;
    let snap = backend.snapshot().exit_with(Exit::Unreadable)?;
    Ok(plan::plan(&snap, now(at), &config.limits, 0))
}

fn run(global: &GlobalArgs, config: &Config, fleet: &Path, args: &RunArgs) -> Result<Exit> {
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
        Some(lock::acquire(&lock_path(global, config, fleet)).exit_with(Exit::Busy)?)
    };
    let mut worst = Exit::Ok;
    let mut pass = 0u32;
    loop {
        pass += 1;
        let mut backend = open(fleet)?;
        let snap = backend.snapshot().exit_with(Exit::Unreadable)?;
        let at = now(args.clock.now);
        let seed = uuid::Uuid::new_v4().as_u64_pair().0;
        let plan = plan::plan(&snap, at, &limits, seed);
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
        } else {
            let done = exec::execute(&plan, &mut backend);
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
            if !done.errors.is_empty() {
                worst = Exit::Partial;
            }
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

fn admin_verb(
    global: &GlobalArgs,
    config: &Config,
    fleet: &Path,
    object: &autorepair::snapshot::ObjectRef,
    verb: &Verb,
) -> Result<Exit> {
    let _lock = lock::acquire(&lock_path(global, config, fleet)).exit_with(Exit::Busy)?;
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
    let done = exec::execute(&plan, &mut backend);
    if let Some((_, e)) = done.errors.first() {
        bail!("{object}: {e}");
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

fn simulate(config: &Config, fleet: &Path, args: &SimulateArgs) -> Result<Exit> {
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
