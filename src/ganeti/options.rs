//! The Ganeti family's part of the config file: `fleet_file`, `[rapi]` and `[ganeti]`, and
//! its flags. Each flag wins over its key.

use super::face::{RapiFlags, Source, Where};
use crate::plug::claim::{By, Claim, ClaimError, Look, Shared};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// The Ganeti family's flags.
#[derive(Debug, Args, Default)]
#[command(next_help_heading = "Ganeti fleet")]
pub struct GanetiArgs {
    /// Fleet file (JSON, shaped like Ganeti's RAPI answers) to work on instead of a cluster.
    #[arg(long, global = true, value_name = "FILE")]
    pub cluster: Option<PathBuf>,
    /// Ganeti RAPI endpoint of a real cluster, e.g. https://cluster.example.org:5080.
    #[arg(long, global = true, value_name = "URL")]
    pub rapi: Option<String>,
    /// RAPI user (needs write access to act).
    #[arg(long, global = true, value_name = "USER")]
    pub rapi_user: Option<String>,
    /// File whose first line is the RAPI password [default: env AUTOREPAIR_RAPI_PASSWORD].
    #[arg(long, global = true, value_name = "FILE")]
    pub rapi_password_file: Option<PathBuf>,
    /// The cluster's RAPI certificate (Ganeti's rapi.pem) or a CA, to verify the server with.
    /// The certificate is pinned, so Ganeti's own certificate works as it is.
    #[arg(long, global = true, value_name = "FILE")]
    pub rapi_ca: Option<PathBuf>,
    /// Do not verify the RAPI server's certificate (tests only: anyone on the path can then
    /// read the password and forge answers).
    #[arg(long, global = true)]
    pub insecure: bool,
    /// Act only on the host that is the cluster's master (by this node's ssconf); elsewhere a
    /// pass stands by and exits 0. For cron on every master candidate [default:
    /// only_on_master in the config's [ganeti] section].
    #[arg(long, global = true)]
    pub only_on_master: bool,
}

/// The Ganeti family's keys of the config file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GanetiConfig {
    /// Fleet file for the file backend (`--cluster` overrides it).
    pub fleet_file: Option<PathBuf>,
    pub rapi: Rapi,
    pub ganeti: Ganeti,
}

/// The `[ganeti]` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Ganeti {
    /// Ganeti iallocator that picks new nodes; empty string: autorepair picks the least
    /// loaded usable node of the instance's group itself.
    pub iallocator: String,
    /// `run` acts only on the host that is the cluster's master, as Ganeti's own watcher does:
    /// installed from cron on every master candidate, it follows a master failover
    /// (`--only-on-master`).
    pub only_on_master: bool,
    /// Where this node's ssconf files are, which say who the master is; default
    /// `/var/lib/ganeti` (env `AUTOREPAIR_GANETI_SSCONF_DIR` wins).
    pub ssconf_dir: Option<PathBuf>,
    /// This host's name as a node of the cluster, when neither its kernel name nor its fully
    /// qualified name is one.
    pub node_name: Option<String>,
}

impl Default for Ganeti {
    fn default() -> Self {
        Ganeti {
            iallocator: super::DEFAULT_IALLOCATOR.into(),
            only_on_master: false,
            ssconf_dir: None,
            node_name: None,
        }
    }
}

impl Ganeti {
    pub fn iallocator(&self) -> Option<&str> {
        Some(self.iallocator.as_str()).filter(|a| !a.is_empty())
    }
}

/// Ganeti RAPI endpoint. The password is never stored here: only the file it is read from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Rapi {
    pub url: Option<String>,
    pub user: Option<String>,
    pub password_file: Option<PathBuf>,
    /// CA certificate to verify the server with (Ganeti's rapi.pem).
    pub ca_file: Option<PathBuf>,
    /// Skip TLS verification. Only for tests; say so by name.
    pub insecure: bool,
    #[serde(with = "crate::engine::text::positive_duration_serde")]
    pub timeout: Duration,
}

impl Default for Rapi {
    fn default() -> Self {
        Rapi {
            url: None,
            user: None,
            password_file: None,
            ca_file: None,
            insecure: false,
            timeout: Duration::from_secs(60),
        }
    }
}

/// What is wrong with the Ganeti fleet the flags and config name.
#[derive(Debug, thiserror::Error)]
pub enum SectionError {
    #[error(
        "the config sets both fleet_file and rapi.url: keep one, or choose with --cluster or --rapi"
    )]
    TwoFleets,
    /// The RAPI endpoint's user or password.
    #[error(transparent)]
    Rapi(#[from] super::face::EndpointError),
    #[error(transparent)]
    OnlyOnMaster(#[from] super::face::OnlyOnMasterError),
}

/// The fleet: `--cluster` or `--rapi`, else the config's `fleet_file` or `rapi.url` (not both).
pub fn claim(
    args: &GanetiArgs,
    config: &GanetiConfig,
    shared: &Shared,
    look: Look,
) -> Option<Claim<Source>> {
    let source = |from: Result<Where, ClaimError>| Claim {
        source: from.and_then(|from| {
            let mut source = Source {
                from,
                iallocator: config.ganeti.iallocator().map(str::to_owned),
                master: None,
                lock_named: shared.lock_named,
            };
            super::face::only_on_master(
                &mut source,
                shared.passes,
                args.only_on_master || config.ganeti.only_on_master,
                &config.ganeti,
                shared.var(super::face::SSCONF_DIR_ENV).map(PathBuf::from),
            )
            .map_err(|e| ClaimError::new(SectionError::OnlyOnMaster(e)))?;
            Ok(source)
        }),
        by: By::Flag,
        uses_kubeconfig: false,
    };
    let rapi = |url: &String| endpoint(url.clone(), args, config, shared).map(Where::Rapi);
    match look {
        Look::Flags => match (&args.cluster, &args.rapi) {
            (Some(path), _) => Some(source(Ok(Where::File(path.clone())))),
            (None, Some(url)) => Some(source(rapi(url))),
            (None, None) => None,
        },
        Look::Config => {
            let (from, key) = match (&config.fleet_file, &config.rapi.url) {
                (Some(_), Some(_)) => (Err(ClaimError::new(SectionError::TwoFleets)), "fleet_file"),
                (Some(path), None) => (Ok(Where::File(path.clone())), "fleet_file"),
                (None, Some(url)) => (rapi(url), "rapi.url"),
                (None, None) => return None,
            };
            Some(Claim {
                by: By::Config(key),
                ..source(from)
            })
        }
    }
}

fn endpoint(
    url: String,
    args: &GanetiArgs,
    config: &GanetiConfig,
    shared: &Shared,
) -> Result<super::rapi::Endpoint, ClaimError> {
    let flags = RapiFlags {
        user: args.rapi_user.clone(),
        password_file: args.rapi_password_file.clone(),
        ca_file: args.rapi_ca.clone(),
        insecure: args.insecure,
    };
    let mut endpoint = super::face::endpoint(
        url,
        flags,
        &config.rapi,
        shared.var("AUTOREPAIR_RAPI_PASSWORD"),
    )
    .map_err(|e| ClaimError::new(SectionError::Rapi(e)))?;
    // Only what a person reads shows the run status; passes need not pay for it.
    endpoint.run_status = shared.shows_targets;
    Ok(endpoint)
}

/// `limits.iallocator`, the key's old place, moved to `ganeti.iallocator` (where a value
/// already set wins), with a warning naming the new place.
pub fn upgrade(table: &mut toml::Table, path: &str) {
    let old = match table.get_mut("limits") {
        Some(toml::Value::Table(limits)) => match limits.remove("iallocator") {
            Some(old) => old,
            None => return,
        },
        _ => return,
    };
    tracing::warn!(
        "config file {path}: limits.iallocator is Ganeti's own setting: move it to the [ganeti] section (iallocator = …); it is read from [limits] until then"
    );
    let ganeti = table
        .entry("ganeti")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let toml::Value::Table(ganeti) = ganeti {
        ganeti.entry("iallocator").or_insert(old);
    }
}
