//! The Ganeti family as the command line shows it: objects named `cluster`, `group/NAME`,
//! `node/NAME` or `instance/NAME`, and instances shown with their nodes and run status.

use super::file::{self, FleetFile};
use super::master::{OnlyOnMaster, Role, Verdict};
use super::rapi::{Endpoint, Password, Rapi};
use super::snapshot::Instance;
use super::snapshot::OpKind;
use super::{Facts, Ganeti, Index, Settings};
use crate::engine::{Backend, BackendError, Intercepted, ObjectRef};
use crate::lock;
use crate::plug::claim::{Claim, Look, Shared};
use crate::plug::printer::Printer;
use crate::plug::{
    Error, Exit, FamilyFace, LOG_TARGET, LockPathError, LockSite, NO_SCOPE, OpenError,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    /// `only_on_master` (`run` only): the role this host must hold to act; `None`: off.
    pub master: Option<Arc<Role>>,
    /// A lock file is named (--lock-file, lock_file): it wins over the cluster's own lock.
    pub lock_named: bool,
}

/// The env variable that names the ssconf directory, over the config's `ssconf_dir`.
pub const SSCONF_DIR_ENV: &str = "AUTOREPAIR_GANETI_SSCONF_DIR";

/// Why `only_on_master` cannot be on.
#[derive(Debug, thiserror::Error)]
pub enum OnlyOnMasterError {
    #[error(
        "--only-on-master (only_on_master in the config's [ganeti] section) acts on the host that is the cluster's master, and a fleet file has no master: drop the flag (or the setting) for a file, or give --rapi URL"
    )]
    FleetFile,
}

/// Turns `only_on_master` on for a `run` (`on`: the flag or the config's setting); the other
/// commands (a person's `status`, `suspend`) work from any host. The ssconf directory is the
/// env's [`SSCONF_DIR_ENV`], else the config's, else Ganeti's own.
pub fn only_on_master(
    source: &mut Source,
    run: bool,
    on: bool,
    config: &super::options::Ganeti,
    env_dir: Option<PathBuf>,
) -> Result<(), OnlyOnMasterError> {
    if !(run && on) {
        return Ok(());
    }
    if let Where::File(_) = source.from {
        return Err(OnlyOnMasterError::FleetFile);
    }
    let dir = env_dir
        .or_else(|| config.ssconf_dir.clone())
        .unwrap_or_else(|| super::master::SSCONF_DIR.into());
    source.master = Some(Arc::new(Role::new(dir, config.node_name.clone())));
    Ok(())
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
    /// A URL no request can be made to, or one a request path would be glued after (a query
    /// or fragment: `…#z/2/info`). Refused before any request: retrying cannot help.
    #[error(
        "RAPI URL {url:?} (--rapi or rapi.url): {why}; give it as https://HOST[:PORT], e.g. https://cluster.example.org:5080"
    )]
    BadUrl { url: String, why: String },
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

fn check_url(url: &str) -> Result<(), EndpointError> {
    let bad = |why: String| EndpointError::BadUrl {
        url: url.to_owned(),
        why,
    };
    let parsed = reqwest::Url::parse(url).map_err(|e| bad(format!("not a URL ({e})")))?;
    if !matches!(parsed.scheme(), "https" | "http") {
        return Err(bad(format!("scheme {:?} is not https", parsed.scheme())));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(bad("it names no host".into()));
    }
    if parsed.query().is_some() {
        return Err(bad(
            "it has a query (?…), which would end up before the request's path".into(),
        ));
    }
    if parsed.fragment().is_some() {
        return Err(bad(
            "it has a fragment (#…), which would swallow the request's path".into(),
        ));
    }
    Ok(())
}

/// The endpoint at `url`: each value from its flag, else the config's `[rapi]` section; the
/// password from a file (named by the flag or the config), else `env_password`
/// (`AUTOREPAIR_RAPI_PASSWORD`). A password file is read here to fail early, and again by each
/// pass (a rotated password).
pub fn endpoint(
    url: String,
    flags: RapiFlags,
    config: &super::options::Rapi,
    env_password: Option<&str>,
) -> Result<Endpoint, EndpointError> {
    check_url(&url)?;
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

impl crate::plug::FamilyConfig for super::options::GanetiConfig {
    fn upgrade(table: &mut toml::Table, path: &str) {
        super::options::upgrade(table, path);
    }
}

impl FamilyFace for Ganeti {
    const FACT_COLUMNS: &'static [&'static str] = &["PRIMARY", "SECONDARY", "RUN"];
    const FAMILY: &'static str = "ganeti";
    const HOLDS: &'static str = "Ganeti instances";
    type Source = Source;
    type Args = super::options::GanetiArgs;
    type Commands = crate::plug::cli::NoCommands;
    type Config = super::options::GanetiConfig;
    const CONFIG_KEYS: &'static [&'static str] = &["fleet_file", "rapi", "ganeti"];
    const MAN: &'static crate::plug::man::ManPage = &super::man::PAGE;
    const HELP: &'static crate::plug::help::Help = &crate::plug::help::Help {
        scopes: &["group/NAME"],
        targets: &["instance/NAME"],
        target: "an instance's full name",
        marks: "Ganeti tags",
        lock: Some(
            "autorepair-ganeti-UUID.lock for a Ganeti cluster (by its identity, whatever URL reaches it)",
        ),
        replicas: "Ganeti's master role",
        world: "With --cluster or --rapi the Ganeti world: nodes and racks fail, jobs fail.",
        fleet_file: Some("--cluster"),
        applies: "Ganeti applies a tag change as a job, after the jobs queued before it.",
        ..crate::plug::help::Help::NONE
    };
    const FLEET_FLAGS: &'static [&'static str] = &["cluster", "rapi"];
    const FLEET_HINT: &'static str = "--cluster FILE or --rapi URL (Ganeti)";
    const SNAPSHOT: Option<crate::plug::Snapshotter<Self>> = Some(snapshot);
    const REPLICAS: Option<crate::plug::Replicas<Self>> = Some(crate::plug::Replicas {
        may_act,
        lock_taken,
    });
    #[cfg(any(test, feature = "testkit"))]
    const SIMULATOR: Option<crate::plug::simulate::Simulator<Self>> = Some(simulate);
    #[cfg(any(test, feature = "testkit"))]
    const GENERATOR: Option<&'static dyn crate::plug::generate::Generator> =
        Some(&super::generate::Generator);

    fn claim(
        args: &Self::Args,
        config: &Self::Config,
        shared: &Shared,
        look: Look,
    ) -> Option<Claim<Source>> {
        super::options::claim(args, config, shared, look)
    }

    fn parse_object(text: &str) -> Result<ObjectRef, crate::engine::object::ObjectRefError> {
        super::parse_object(text)
    }

    fn input_files(source: &Source) -> Vec<(&'static str, PathBuf)> {
        match &source.from {
            Where::File(path) => vec![("--cluster", path.clone())],
            Where::Rapi(endpoint) => {
                let mut files = Vec::new();
                if let crate::ganeti::rapi::Password::File(path) = &endpoint.password {
                    files.push(("--rapi-password-file", path.clone()));
                }
                files.extend(endpoint.ca_file.clone().map(|p| ("--rapi-ca", p)));
                files
            }
        }
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
        let site = match &source.from {
            Where::File(fleet) => LockSite::File(fleet, &file::MISSING),
            // The URL's lock only stands in until the lock is taken, when `lock_taken` names
            // the cluster's own by its uuid; a URL without a host is refused here already.
            Where::Rapi(endpoint) => LockSite::Url(&endpoint.url),
        };
        crate::plug::fleet_lock(site, named)
    }

    fn open(source: &Source) -> Result<Box<dyn Backend<Ganeti>>, OpenError> {
        Ok(match &source.from {
            Where::File(path) => Box::new(FleetFile::open(path).map_err(OpenError::Open)?),
            Where::Rapi(endpoint) => {
                let rapi = Rapi::connect(endpoint).map_err(OpenError::Connect)?;
                match &source.master {
                    Some(role) => {
                        Box::new(Intercepted::wrap(rapi, OnlyOnMaster { role: role.clone() }))
                    }
                    None => Box::new(rapi),
                }
            }
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

/// In `only_on_master` mode, only on the master; said once a pass, at INFO (a standby is
/// the normal state of every other candidate), or at WARN when no node is master.
fn may_act(source: &Source) -> Result<bool, Error> {
    let Some(role) = &source.master else {
        return Ok(true);
    };
    match role.verdict() {
        Ok(Verdict::Master) => {
            if let Where::Rapi(endpoint) = &source.from
                && role.url_follows_the_master(&endpoint.url)
            {
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| tracing::warn!(target: LOG_TARGET, url = %endpoint.url, "--rapi reaches whichever node is master (the cluster's name or master IP): a write this host sends just as a failover takes the role away can land on the new master. https://127.0.0.1:5080 reaches this host's own RAPI daemon, which the failover stops first, so nothing can"));
            }
            Ok(true)
        }
        Ok(Verdict::Standby { master }) => {
            tracing::info!(target: LOG_TARGET, %master, "this host is not the cluster's master ({master} is): it stands by, and the watcher there acts");
            Ok(false)
        }
        Ok(Verdict::NoMaster) => {
            tracing::warn!(target: LOG_TARGET, ssconf = %role.ssconf_dir.display(), "the cluster has no master now (ssconf_master_node says NO MASTER, a failover under way or failed): no watcher acts until a node is master again");
            Ok(false)
        }
        Err(e) => Err(Error::Open(Box::new(BackendError::Api(e.to_string())))),
    }
}

/// A RAPI cluster's own lock is named by its uuid (one `GET /2/info`), so every URL that
/// reaches it (its name, an IP, 127.0.0.1 on the master) finds the one lock of this host.
/// A named lock file wins and asks nothing.
fn lock_taken(source: &Source, planned: &Path) -> Result<PathBuf, Error> {
    let Where::Rapi(endpoint) = &source.from else {
        return Ok(planned.to_owned());
    };
    if source.lock_named {
        return Ok(planned.to_owned());
    }
    // No falling back to the URL's lock when the uuid cannot be read: two runs reaching
    // the cluster by two URLs would then hold two locks and both act, and the pass that
    // follows could not read the cluster anyway.
    let uuid = Rapi::connect(endpoint)
        .and_then(|rapi| rapi.cluster_uuid())
        .map_err(|e| Error::Read {
            from: format!(
                "{} to name its lock by the cluster's uuid (GET /2/info)",
                endpoint.url
            ),
            source: e.into(),
        })?;
    Ok(lock::for_cluster(&uuid))
}

/// Saves the fleet as a fleet file, or prints it.
fn snapshot(source: &Source, out: &mut Printer, output: Option<&Path>) -> Result<Exit, Error> {
    let mut backend = Ganeti::open(source)?;
    let snap = backend.snapshot().map_err(|e| Error::Read {
        from: Ganeti::describe(source),
        source: e.into(),
    })?;
    match output {
        Some(path) => {
            let mut file = FleetFile::create(path, snap);
            file.flush().map_err(|e| Error::Save(e.into()))?;
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
) -> Result<Exit, Error> {
    use crate::plug::simulate::{explore, report};
    let mut backend = Ganeti::open(source)?;
    let snap = backend.snapshot().map_err(|e| Error::Snapshot(e.into()))?;
    // The driver the other families use, so that --replicas (and with it the master
    // role's takeovers) reaches this world too.
    let cfg = args.engine_config(limits);
    let settings = super::Settings {
        iallocator: source.iallocator.clone(),
        ..super::Settings::default()
    };
    let planner = |s: &super::snapshot::Snapshot, now: i64, seed: u64| {
        super::plan_with(s, &settings, now, &cfg.limits, seed)
    };
    let summary = explore::<super::file::FleetFile>(out, &snap, &(), args, &cfg, &planner)?;
    report::<Ganeti>(out, &summary, &[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ganeti::rapi::Password;
    use testsupport::rapi::FakeRapi;

    fn source(url: &str, lock_named: bool) -> Source {
        Source {
            from: Where::Rapi(Endpoint {
                url: url.into(),
                user: "u".into(),
                password: Password::Given("p".into()),
                ca_file: Some(testsupport::CA_FILE.into()),
                insecure: false,
                timeout: std::time::Duration::from_secs(5),
                run_status: false,
            }),
            iallocator: None,
            master: None,
            lock_named,
        }
    }

    /// The cluster's uuid names its lock: the same cluster reached by IP and by name shares
    /// one, at the price of one `GET /2/info` each time a lock is taken; a named lock asks
    /// nothing.
    #[test]
    fn one_cluster_reached_by_two_urls_has_one_lock() {
        let rapi = FakeRapi::start(testsupport::rapi::fixed(
            200,
            r#"{"name": "c.example.test", "uuid": "5b5e0f0c-1c1d-4d35-9a6e-3a1f0e5d2c7b"}"#,
        ));
        let by_ip = rapi.url().to_owned();
        let by_name = by_ip.replace("127.0.0.1", "localhost");
        assert_ne!(lock::for_url(&by_ip).ok(), lock::for_url(&by_name).ok());
        let planned = Path::new("/planned.lock");
        let taken: Vec<PathBuf> = [&by_ip, &by_name]
            .into_iter()
            .map(|url| lock_taken(&source(url, false), planned).expect("lock"))
            .collect();
        let want = lock::for_cluster("5b5e0f0c-1c1d-4d35-9a6e-3a1f0e5d2c7b");
        assert_eq!(taken, [want.clone(), want]);
        let gets: Vec<String> = rapi.seen().iter().map(|s| s.path.clone()).collect();
        assert_eq!(gets, ["/2/info", "/2/info"]);
        assert_eq!(
            lock_taken(&source(&by_ip, true), planned).expect("lock"),
            planned
        );
        assert_eq!(rapi.seen().len(), 2, "a named lock asks nothing");
    }

    /// A cluster whose uuid cannot be read gets no lock (and so no pass): the error names the
    /// URL, what was asked, and the way round.
    #[test]
    fn no_uuid_no_lock() {
        // (status, body, what the error names, whether a named lock would help): a refused
        // password is not helped by --lock-file, a cluster without a uuid is.
        let cases = [
            (
                401,
                r#"{"code": 401, "message": "Unauthorized"}"#,
                "401",
                false,
            ),
            (
                403,
                r#"{"code": 403, "message": "Forbidden"}"#,
                "403",
                false,
            ),
            (200, r#"{"name": "c.example.test"}"#, "\"uuid\"", true),
            (
                200,
                r#"{"name": "c.example.test", "uuid": " "}"#,
                "uuid is empty",
                true,
            ),
        ];
        for (status, body, words, lock_helps) in cases {
            let rapi = FakeRapi::start(testsupport::rapi::fixed(status, body));
            let err = lock_taken(&source(rapi.url(), false), Path::new("/x.lock")).expect_err(body);
            // The error and its causes, as the command line says them.
            let mut text = err.to_string();
            let mut cause = std::error::Error::source(&err);
            while let Some(c) = cause {
                text.push_str(&format!(": {c}"));
                cause = c.source();
            }
            for w in [rapi.url(), "GET /2/info", words] {
                assert!(text.contains(w), "{w:?} missing in {text}");
            }
            assert_eq!(text.contains("--lock-file"), lock_helps, "{text}");
        }
    }
}
