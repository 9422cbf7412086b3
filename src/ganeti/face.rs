//! The Ganeti family as the command line shows it: objects named `cluster`, `group/NAME`,
//! `node/NAME` or `instance/NAME`, and instances shown with their nodes and run status.

use super::file::{self, FleetFile};
use super::rapi::{Endpoint, Password, Rapi};
use super::snapshot::Instance;
use super::snapshot::OpKind;
use super::{Facts, Ganeti, Index, Settings};
use crate::engine::{Backend, ObjectRef};
use crate::lock;
use crate::plug::claim::{Claim, Look, Shared};
use crate::plug::printer::Printer;
use crate::plug::{Exit, Failure, FamilyFace, LOG_TARGET, LockPathError, NO_SCOPE, OpenError};
use std::path::{Path, PathBuf};

/// Where a Ganeti fleet is.
#[derive(Debug)]
pub enum Where {
    /// A fleet file, shaped like RAPI's answers.
    File(PathBuf),
    /// A real cluster, over RAPI.
    Rapi(Endpoint),
}

/// A Ganeti fleet, and what the family reads beside it.
#[derive(Debug)]
pub struct Source {
    pub from: Where,
    /// The iallocator that picks new nodes; `None`: autorepair picks itself.
    pub iallocator: Option<String>,
}

/// What the command line says of a RAPI endpoint; each value left out comes from the
/// config's `[rapi]` section.
#[derive(Debug, Default)]
pub struct RapiFlags {
    pub user: Option<String>,
    pub password_file: Option<PathBuf>,
    pub ca_file: Option<PathBuf>,
    pub insecure: bool,
}

/// Why no RAPI endpoint can be made of the flags, the config and the environment.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    #[error("no RAPI user: pass --rapi-user USER or set rapi.user in the config")]
    NoUser,
    /// The password file named by --rapi-password-file or rapi.password_file.
    #[error(transparent)]
    PasswordFile(Box<crate::engine::BackendError>),
    #[error(
        "no RAPI password: give --rapi-password-file FILE (or rapi.password_file in the config), or set AUTOREPAIR_RAPI_PASSWORD"
    )]
    NoPassword,
}

/// The endpoint at `url`: each value from its flag, else the config's `[rapi]` section; the
/// password from a file (named by the flag or the config), else `env_password`
/// (`AUTOREPAIR_RAPI_PASSWORD`). A password file is read here to fail early, and again by each
/// pass (a rotated password).
pub fn endpoint(
    url: String,
    flags: RapiFlags,
    config: &super::section::Rapi,
    env_password: Option<&str>,
) -> Result<Endpoint, EndpointError> {
    let user = flags
        .user
        .or_else(|| config.user.clone())
        .ok_or(EndpointError::NoUser)?;
    let password = match flags.password_file.or_else(|| config.password_file.clone()) {
        Some(path) => {
            super::rapi::read_password(Some(&path))
                .map_err(|e| EndpointError::PasswordFile(e.into()))?;
            Password::File(path)
        }
        None => Password::Given(env_password.ok_or(EndpointError::NoPassword)?.to_owned()),
    };
    let insecure = flags.insecure || config.insecure;
    let ca_file = flags.ca_file.or_else(|| config.ca_file.clone());
    if ca_file.is_none() && !insecure {
        tracing::warn!(
            target: LOG_TARGET,
            "no --rapi-ca given: the RAPI server is verified against the public web roots, which a self-signed Ganeti certificate never passes"
        );
    }
    Ok(Endpoint {
        url,
        user,
        password,
        ca_file,
        insecure,
        timeout: config.timeout,
        run_status: false,
    })
}

impl FamilyFace for Ganeti {
    const FACT_COLUMNS: &'static [&'static str] = &["PRIMARY", "SECONDARY", "RUN"];
    const FAMILY: &'static str = "ganeti";
    const HOLDS: &'static str = "Ganeti instances";
    type Source = Source;
    type Args = super::section::GanetiArgs;
    type Config = super::section::GanetiConfig;
    const CONFIG_KEYS: &'static [&'static str] = &["fleet_file", "rapi", "ganeti"];
    const FLEET_FLAGS: &'static [&'static str] = &["cluster", "rapi"];
    const FLEET_HINT: &'static str = "--cluster FILE or --rapi URL (Ganeti)";

    fn claim(
        args: &Self::Args,
        config: &Self::Config,
        shared: &Shared,
        look: Look,
    ) -> Option<Claim<Source>> {
        super::section::claim(args, config, shared, look)
    }

    fn upgrade_config(table: &mut toml::Table, path: &str) {
        super::section::upgrade(table, path);
    }

    fn parse_object(text: &str) -> Result<ObjectRef, String> {
        super::parse_object(text)
    }

    fn describe(source: &Source) -> String {
        match &source.from {
            Where::File(p) => p.display().to_string(),
            Where::Rapi(e) => e.url.clone(),
        }
    }

    fn buffers_writes(source: &Source) -> bool {
        matches!(source.from, Where::File(_))
    }

    fn lock_path(source: &Source, named: Option<PathBuf>) -> Result<PathBuf, LockPathError> {
        match &source.from {
            // Checked even with a named lock: a typo in the fleet path must leave no lock file
            // behind.
            Where::File(fleet) => {
                let beside = lock::beside(fleet)
                    .map_err(|e| LockPathError::FleetFile(file::unreadable(fleet, &e)))?;
                Ok(named.unwrap_or(beside))
            }
            Where::Rapi(endpoint) => match named {
                Some(path) => Ok(path),
                None => lock::for_url(&endpoint.url).map_err(LockPathError::Url),
            },
        }
    }

    fn open(source: &Source) -> Result<Box<dyn Backend<Ganeti>>, OpenError> {
        Ok(match &source.from {
            Where::File(path) => Box::new(FleetFile::open(path).map_err(OpenError::Open)?),
            Where::Rapi(endpoint) => Box::new(Rapi::connect(endpoint).map_err(OpenError::Connect)?),
        })
    }

    /// The iallocator from the config; a repair needing an operation this backend lacks
    /// (Ganeti 3.0's RAPI cannot move an instance) is left to a person.
    fn settings(source: &Source, backend: &dyn Backend<Ganeti>) -> Settings {
        Settings {
            iallocator: source.iallocator.clone(),
            unsupported: OpKind::ALL
                .into_iter()
                .filter(|k| !backend.supports(*k))
                .collect(),
        }
    }

    /// Saves the fleet as a fleet file, or prints it.
    fn snapshot(
        source: &Source,
        out: &mut Printer,
        output: Option<&Path>,
    ) -> Result<Exit, Failure> {
        let mut backend = Self::open(source)?;
        let snap = backend.snapshot().map_err(|e| Failure::Read {
            from: Self::describe(source),
            source: e.into(),
        })?;
        match output {
            Some(path) => {
                let mut file = FleetFile::create(path, snap);
                file.flush().map_err(|e| Failure::Save(e.into()))?;
                out.note(format_args!(
                    "saved {} instances to {}",
                    file.fleet().instances.len(),
                    path.display()
                ));
            }
            None => out.json_document(&snap)?,
        }
        Ok(Exit::Ok)
    }

    /// The Ganeti world: nodes and racks fail, jobs fail, the watcher is killed and admins
    /// edit tags, over the fleet read; with the config's limits and iallocator.
    #[cfg(any(test, feature = "testkit"))]
    fn simulate(
        source: &Source,
        limits: &crate::engine::Limits,
        args: &crate::plug::simulate::Simulate,
        out: &mut Printer,
    ) -> Result<Exit, Failure> {
        use super::sim::{self, Faults, SimConfig};
        use crate::plug::simulate::{print_log, quietly, report};
        let mut backend = Self::open(source)?;
        let snap = backend
            .snapshot()
            .map_err(|e| Failure::Snapshot(e.into()))?;
        let mut cfg = SimConfig::new(args.start);
        cfg.limits = limits.clone();
        cfg.settings.iallocator = source.iallocator.clone();
        cfg.quiet_passes = args.quiet_passes(limits);
        let faults = Faults::default();
        if args.verbose && args.scenarios == 1 {
            let sched = sim::schedule(&snap, args.passes, args.seed, &faults);
            let ran = quietly(|| sim::run(&snap, &sched, &cfg, super::plan_with));
            print_log(out, &ran.log)?;
        }
        let summary = quietly(|| {
            sim::explore(
                &snap,
                args.passes,
                args.seed,
                args.scenarios,
                &cfg,
                &faults,
                super::plan_with,
            )
        });
        report::<Ganeti>(out, &summary, &[])
    }

    fn fact_cells(facts: &Facts) -> Vec<String> {
        vec![
            facts.primary.to_string(),
            facts
                .secondary
                .as_ref()
                .map_or("-".into(), ToString::to_string),
            if facts.run_status.is_empty() {
                "-".into()
            } else {
                facts.run_status.to_string()
            },
        ]
    }

    fn facts_line(facts: &Facts) -> String {
        let mut line = format!("on {}", facts.primary);
        if let Some(s) = &facts.secondary {
            line.push_str(&format!(", secondary {s}"));
        }
        if !facts.run_status.is_empty() {
            line.push_str(&format!(", {}", facts.run_status));
        }
        line
    }

    /// The group of its primary node, as the limiter counts it.
    fn report_scope<'a>(index: &Index<'a>, inst: &'a Instance) -> &'a str {
        index
            .node(&inst.pnode)
            .map_or(NO_SCOPE, |n| index.group_name(n))
    }
}
