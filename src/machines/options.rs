//! The machines family's part of the config file, `[machines]`, and its flags. Each flag
//! wins over its key.

use super::face::{MachinesFleet, MachinesFrom, NodesFrom};
use crate::plug::claim::{By, Claim, ClaimError, Look, Shared};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// The machines family's flags. Their ids are the `sabakan` generator's own (`sabakan`,
/// `constraints`, `nodes`): clap hands a global flag to no subcommand that has a flag of that
/// id, so `autorepair sabakan generate --sabakan URL` keeps its meaning.
#[derive(Debug, Args, Default)]
#[command(next_help_heading = "machines fleet (sabakan and CKE)")]
pub struct MachinesArgs {
    /// sabakan machines file (the JSON of sabakan's GET /api/v1/machines, or a GraphQL
    /// searchMachines answer) to work on: the machines family. Labels are written back into it.
    #[arg(long, global = true, value_name = "FILE")]
    pub sabakan_file: Option<PathBuf>,
    /// Work on a live sabakan (the machines family): its URL, e.g. http://sabakan:10080. Each
    /// pass reads the machines with one GraphQL query and writes each label with one REST
    /// call. sabakan takes no credentials: its allowed-ips setting decides who may write.
    #[arg(long = "sabakan", id = "sabakan", global = true, value_name = "URL")]
    pub sabakan_url: Option<String>,
    /// With --sabakan over https: a PEM file of the CA to trust besides the system's roots
    /// (the server is always verified).
    #[arg(long, global = true, value_name = "FILE")]
    pub sabakan_ca: Option<PathBuf>,
    /// With a machines fleet (--sabakan or --sabakan-file): the CKE cluster.yml whose repair:
    /// section to use (or that section alone) [default: machines.repair_config in the config].
    #[arg(long, global = true, value_name = "FILE")]
    pub repair_config: Option<PathBuf>,
    /// With a machines fleet: CKE's constraints as a JSON object (maximum-repair-queue-entries,
    /// wait-seconds-to-repair-rebooting; both default to 0, and 0 entries starts nothing).
    #[arg(
        long = "constraints",
        id = "constraints",
        global = true,
        value_name = "FILE"
    )]
    pub machine_constraints: Option<PathBuf>,
    /// With a machines fleet: the Kubernetes Nodes (`kubectl get nodes -o json`); a machine is
    /// in the cluster when a Node's name or InternalIP is its address. Cordons are written into
    /// it. For a live cluster, give --kubeconfig instead.
    #[arg(
        long = "nodes",
        id = "nodes",
        global = true,
        value_name = "FILE",
        conflicts_with = "kubeconfig"
    )]
    pub machine_nodes: Option<PathBuf>,
    /// With a machines fleet: turn on CKE's etcd gate (no repair step moves unless the
    /// cluster's etcd is good for repair), reaching etcd with this CA, at each control plane
    /// of --repair-config's cluster.yml (https://ADDRESS:2379). With --etcd-cert and --etcd-key.
    #[arg(long, global = true, value_name = "FILE", requires_all = ["etcd_cert", "etcd_key"])]
    pub etcd_ca: Option<PathBuf>,
    /// The client certificate for etcd (PEM), with --etcd-ca.
    #[arg(long, global = true, value_name = "FILE", requires = "etcd_ca")]
    pub etcd_cert: Option<PathBuf>,
    /// The client certificate's key for etcd (PEM), with --etcd-ca.
    #[arg(long, global = true, value_name = "FILE", requires = "etcd_ca")]
    pub etcd_key: Option<PathBuf>,
}

/// The machines family's keys of the config file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MachinesConfig {
    pub machines: Machines,
}

/// The machines family's `[machines]` section: where the machines and their Nodes are, the
/// repair configuration and constraints, and which machines the trigger repairs. Each has a
/// flag, which wins.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Machines {
    /// A live sabakan's URL (`--sabakan`).
    pub sabakan: Option<String>,
    /// A sabakan machines file instead (`--sabakan-file`).
    pub sabakan_file: Option<PathBuf>,
    /// A CA to trust for an https:// sabakan, besides the system's roots (`--sabakan-ca`).
    pub ca_file: Option<PathBuf>,
    /// Per-request timeout for sabakan.
    #[serde(with = "crate::engine::text::positive_duration_serde")]
    pub timeout: Duration,
    /// CKE's cluster.yml, or its `repair:` section alone (`--repair-config`).
    pub repair_config: Option<PathBuf>,
    /// CKE's constraints, a JSON object (`--constraints`).
    pub constraints: Option<PathBuf>,
    /// The Nodes as `kubectl get nodes -o json` prints them (`--nodes`)...
    pub nodes: Option<PathBuf>,
    /// ...or the live cluster of this kubeconfig (`--kubeconfig`, `--kube-context`).
    pub kubeconfig: Option<PathBuf>,
    pub kube_context: Option<String>,
    /// CKE's etcd gate: the CA of the cluster's etcd (`--etcd-ca`), and a client certificate
    /// and key (`--etcd-cert`, `--etcd-key`); all three, or none (the gate off).
    pub etcd_ca: Option<PathBuf>,
    pub etcd_cert: Option<PathBuf>,
    pub etcd_key: Option<PathBuf>,
    /// The trigger's `$having` and `$notHaving`, as `ckecli sabakan set-variables` takes them
    /// (`having`, `notHaving`; `labels`, `racks`, `roles`, `states`, `minDaysBeforeRetire`).
    /// Unset: CKE's, UNHEALTHY and UNREACHABLE machines that are not boot servers. Set, a key
    /// left out is no condition (CKE sends it as `null`).
    pub variables: Option<crate::sabakan::client::Variables>,
}

impl Default for Machines {
    fn default() -> Self {
        Machines {
            sabakan: None,
            sabakan_file: None,
            ca_file: None,
            timeout: crate::sabakan::client::Endpoint::new("").timeout,
            repair_config: None,
            constraints: None,
            nodes: None,
            kubeconfig: None,
            kube_context: None,
            etcd_ca: None,
            etcd_cert: None,
            etcd_key: None,
            variables: None,
        }
    }
}

impl Machines {
    /// The trigger's query: the variables given, else CKE's.
    pub fn query(&self) -> crate::sabakan::client::Variables {
        self.variables
            .clone()
            .unwrap_or_else(super::Settings::default_query)
    }
}

/// What is wrong with the machines fleet the flags and config name.
#[derive(Debug, thiserror::Error)]
pub enum SectionError {
    #[error(
        "the config's [machines] section sets both {0} and {1}: keep one, or choose with a flag"
    )]
    Twice(&'static str, &'static str),
    /// The repair configuration or constraints.
    #[error(transparent)]
    Config(#[from] super::config::ConfigError),
    #[error(
        "CKE's etcd gate needs etcd_ca, etcd_cert and etcd_key together (or --etcd-ca, --etcd-cert, --etcd-key): {0} is missing"
    )]
    EtcdPartial(&'static str),
    #[error(
        "CKE's etcd gate (--etcd-ca) reaches etcd at the cluster's control planes, which come from the nodes: of a whole cluster.yml: give --repair-config (or machines.repair_config) the cluster.yml, not its repair: section alone"
    )]
    EtcdNoControlPlanes,
}

/// A machines fleet, when a flag or the config's `[machines]` section names one.
pub fn claim(
    args: &MachinesArgs,
    config: &MachinesConfig,
    shared: &Shared,
    look: Look,
) -> Option<Claim<MachinesFleet>> {
    let m = &config.machines;
    let twice = |a, b| Err(ClaimError::new(SectionError::Twice(a, b)));
    let (from, by) = match look {
        Look::Flags => match (&args.sabakan_url, &args.sabakan_file) {
            (Some(url), _) => (Ok(Ok(url.clone())), By::Flag),
            (None, Some(path)) => (Ok(Err(path.clone())), By::Flag),
            (None, None) => return None,
        },
        Look::Config => match (&m.sabakan, &m.sabakan_file) {
            (Some(_), Some(_)) => (
                twice("sabakan", "sabakan_file"),
                By::Config("[machines] sabakan"),
            ),
            (Some(url), None) => (Ok(Ok(url.clone())), By::Config("[machines] sabakan")),
            (None, Some(path)) => (Ok(Err(path.clone())), By::Config("[machines] sabakan_file")),
            (None, None) => return None,
        },
    };
    Some(Claim {
        source: from.and_then(|from| fleet(args, config, shared, from)),
        by,
        uses_kubeconfig: true,
    })
}

/// The fleet of the machines at `from` (a sabakan URL, or a file).
fn fleet(
    args: &MachinesArgs,
    config: &MachinesConfig,
    shared: &Shared,
    from: Result<String, PathBuf>,
) -> Result<MachinesFleet, ClaimError> {
    let m = &config.machines;
    let twice = |a, b| ClaimError::new(SectionError::Twice(a, b));
    let kube = |path: PathBuf| {
        NodesFrom::Kube(crate::k8s::Source::Kubeconfig {
            path: Some(path),
            context: shared
                .kube_context
                .clone()
                .or_else(|| m.kube_context.clone()),
        })
    };
    let nodes = match (&args.machine_nodes, &shared.kubeconfig) {
        (Some(path), _) => NodesFrom::File(path.clone()),
        (None, Some(path)) => kube(path.clone()),
        (None, None) => match (&m.nodes, &m.kubeconfig) {
            (Some(_), Some(_)) => return Err(twice("nodes", "kubeconfig")),
            (Some(path), None) => NodesFrom::File(path.clone()),
            (None, Some(path)) => kube(path.clone()),
            (None, None) => NodesFrom::None,
        },
    };
    let from = match from {
        Ok(url) => MachinesFrom::Sabakan(crate::sabakan::client::Endpoint {
            url,
            timeout: m.timeout,
            ca_file: args.sabakan_ca.clone().or_else(|| m.ca_file.clone()),
        }),
        Err(path) => MachinesFrom::File(path),
    };
    let what = match &from {
        MachinesFrom::File(p) => p.display().to_string(),
        MachinesFrom::Sabakan(e) => crate::sabakan::client::shown_str(&e.url),
    };
    let repair = args.repair_config.as_deref().or(m.repair_config.as_deref());
    let constraints = args
        .machine_constraints
        .as_deref()
        .or(m.constraints.as_deref());
    let inputs = [("--repair-config", repair), ("--constraints", constraints)]
        .into_iter()
        .filter_map(|(flag, path)| Some((flag, path?.to_owned())))
        .collect();
    let settings = super::face::settings(
        &what,
        repair,
        constraints,
        !matches!(nodes, NodesFrom::None),
        m.query(),
    )
    .map_err(|e| ClaimError::new(SectionError::Config(e)))?;
    let etcd = etcd_access(args, m)?;
    if etcd.is_some() && settings.repair.control_planes.is_none() {
        return Err(ClaimError::new(SectionError::EtcdNoControlPlanes));
    }
    let mut inputs: Vec<(&'static str, PathBuf)> = inputs;
    if let Some(a) = &etcd {
        inputs.extend([
            ("--etcd-ca", a.ca.clone()),
            ("--etcd-cert", a.cert.clone()),
            ("--etcd-key", a.key.clone()),
        ]);
    }
    Ok(MachinesFleet {
        from,
        nodes,
        settings,
        inputs,
        now: shared.now,
        etcd,
        variables_file: repair.map(super::face::variables_beside),
        config_variables: m.variables.is_some(),
    })
}

/// The etcd gate's files: the flags (clap wants all three), else the config's keys, all three
/// or none.
fn etcd_access(
    args: &MachinesArgs,
    m: &Machines,
) -> Result<Option<super::etcd::Access>, ClaimError> {
    let (ca, cert, key) = match &args.etcd_ca {
        Some(_) => (&args.etcd_ca, &args.etcd_cert, &args.etcd_key),
        None => (&m.etcd_ca, &m.etcd_cert, &m.etcd_key),
    };
    let partial = |what| Err(ClaimError::new(SectionError::EtcdPartial(what)));
    match (ca, cert, key) {
        (None, None, None) => Ok(None),
        (Some(ca), Some(cert), Some(key)) => Ok(Some(super::etcd::Access {
            ca: ca.clone(),
            cert: cert.clone(),
            key: key.clone(),
        })),
        (None, _, _) => partial("etcd_ca"),
        (_, None, _) => partial("etcd_cert"),
        (_, _, None) => partial("etcd_key"),
    }
}
