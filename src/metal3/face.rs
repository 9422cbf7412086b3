//! The metal3 family as the command line shows it: objects named `machine/NS/NAME` (or a bare
//! `NS/NAME`), `machineset/…`, `machinedeployment/…`, `controlplane/…`, `cluster/NS/NAME`, and
//! each Machine shown with its host, power, Node, request and where its power cycle stands.

use super::file::ObjectsFile;
use super::kube::KubeBackend;
use super::objects::Machine;
use super::{Facts, Index, Metal3, Settings};
use crate::engine::{Backend, ObjectRef};
use crate::lock;
use crate::plug::claim::{Claim, Look, Shared};
use crate::plug::{FamilyFace, LockPathError, LockSite, OpenError};
use std::path::{Path, PathBuf};

/// Where a metal3 fleet is.
#[derive(Debug)]
pub enum Where {
    /// A Kubernetes objects file.
    Objects(PathBuf),
    /// A live Kubernetes management cluster.
    Kube(Cluster),
}

/// A live management cluster, and how the backend reads it.
#[derive(Debug, Clone)]
pub struct Cluster {
    pub from: crate::k8s::Source,
    pub options: super::kube::Options,
}

/// A metal3 fleet, and the family's settings (the config's `[metal3]` section with the
/// command's flags).
#[derive(Debug)]
pub struct Source {
    pub from: Where,
    pub settings: Settings,
}

impl crate::plug::FamilyConfig for super::options::Metal3Config {}

impl FamilyFace for Metal3 {
    const FACT_COLUMNS: &'static [&'static str] = &["HOST", "POWER", "NODE", "REQUEST", "PHASE"];
    const FAMILY: &'static str = "metal3";
    const HOLDS: &'static str = "Kubernetes objects";
    type Source = Source;
    type Args = super::options::Metal3Args;
    type Commands = crate::plug::cli::NoCommands;
    type Config = super::options::Metal3Config;
    const CONFIG_KEYS: &'static [&'static str] = &["metal3"];
    const MAN: &'static crate::plug::man::ManPage = &super::man::PAGE;
    const HELP: &'static crate::plug::help::Help = &crate::plug::help::Help {
        scopes: &[
            "cluster/NS/NAME",
            "machinedeployment/NS/NAME",
            "machineset/NS/NAME",
            "controlplane/NS/NAME",
        ],
        targets: &["machine/NS/NAME"],
        target: "a Machine's NS/NAME",
        marks: "NAME=VALUE annotations",
        lock: Some("autorepair-kube.lock for --kube"),
        kubeconfig: Some("the management cluster of --kube (metal3)"),
        live: Some("--kube (metal3)"),
        watched: Some("--kube"),
        replicas: "a Kubernetes Lease",
        world: "With --kube-objects or --kube the metal3 world: kubelets die, health checks \
                request remediation, BMCs break, zones go dark, Nodes are deleted.",
        fleet_file: Some("--kube-objects"),
        applies: "",
    };
    const FLEET_FLAGS: &'static [&'static str] = &["kube_objects", "kube"];
    const FLEET_HINT: &'static str = "--kube-objects FILE or --kube (metal3)";
    #[cfg(any(test, feature = "testkit"))]
    const SIMULATOR: Option<crate::plug::simulate::Simulator<Self>> = Some(simulate);
    const DAEMON: Option<crate::plug::Daemon<Self>> = Some(crate::plug::Daemon {
        live,
        next_due: super::due::next_due,
    });

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
            Where::Objects(path) => vec![("--kube-objects", path.clone())],
            Where::Kube(_) => Vec::new(),
        }
    }

    fn describe(source: &Source) -> String {
        match &source.from {
            Where::Objects(p) => p.display().to_string(),
            Where::Kube(Cluster { from, .. }) => match from {
                crate::k8s::Source::InCluster => "the Kubernetes cluster it runs in".into(),
                crate::k8s::Source::Kubeconfig { path, context } => format!(
                    "the Kubernetes cluster of {}{}",
                    path.as_ref()
                        .map_or("the default kubeconfig".into(), |p| p.display().to_string()),
                    context
                        .as_ref()
                        .map_or(String::new(), |c| format!(" (context {c})"))
                ),
            },
        }
    }

    fn buffers_writes(source: &Source) -> bool {
        matches!(source.from, Where::Objects(_))
    }

    fn lock_path(source: &Source, named: Option<PathBuf>) -> Result<PathBuf, LockPathError> {
        let site = match &source.from {
            Where::Objects(fleet) => LockSite::File(fleet, &super::file::MISSING),
            // One watcher per host by default; replicas in a cluster are kept apart by the
            // CronJob's concurrency policy.
            Where::Kube(_) => {
                LockSite::Path(Path::new(lock::RUN_LOCK_DIR).join("autorepair-kube.lock"))
            }
        };
        crate::plug::fleet_lock(site, named)
    }

    fn open(source: &Source) -> Result<Box<dyn Backend<Metal3>>, OpenError> {
        Ok(match &source.from {
            Where::Objects(path) => Box::new(ObjectsFile::open(path).map_err(OpenError::Open)?),
            Where::Kube(Cluster { from, options }) => {
                Box::new(KubeBackend::connect(from, options.clone()).map_err(OpenError::Connect)?)
            }
        })
    }

    /// The config's `[metal3]` section; every backend of this family runs every step.
    fn settings(source: &Source, _backend: &dyn Backend<Metal3>) -> Settings {
        source.settings.clone()
    }

    fn fact_cells(facts: &Facts) -> Vec<String> {
        let or_dash = |t: Option<String>| t.unwrap_or_else(|| "-".into());
        vec![
            or_dash(facts.host.as_ref().map(ToString::to_string)),
            facts.power.to_owned(),
            or_dash(facts.node.as_ref().map(ToString::to_string)),
            if facts.requested { "yes" } else { "-" }.to_owned(),
            facts.phase.unwrap_or("-").to_owned(),
        ]
    }

    fn facts_line(facts: &Facts) -> String {
        let mut line = match &facts.host {
            Some(h) => format!("on host {h} (power {})", facts.power),
            None => "no host".to_owned(),
        };
        match &facts.node {
            Some(n) => line.push_str(&format!(", Node {n}")),
            None => line.push_str(", no Node"),
        }
        if facts.requested {
            line.push_str(", remediation requested");
        }
        if let Some(p) = facts.phase {
            line.push_str(&format!(", power cycle {p}"));
        }
        line
    }

    /// Its zone (the Machine's failure domain, else its Node's zone label), as the limiter
    /// counts it.
    fn report_scope<'a>(index: &Index<'a>, m: &'a Machine) -> &'a str {
        index.zone_name(m)
    }
}

/// The management cluster, where the Machines, hosts (and Nodes, unless they are in
/// workload clusters) are watched.
fn live(source: &Source) -> Option<crate::k8s::Live> {
    match &source.from {
        Where::Kube(Cluster { from, options }) => {
            let options = options.clone();
            Some(crate::k8s::Live {
                from: from.clone(),
                timeout: options.timeout,
                discover: Some(std::sync::Arc::new(move || {
                    super::kube::watch::discover(options.workload)
                })),
            })
        }
        Where::Objects(_) => None,
    }
}

/// The metal3 world over the Machines, hosts and Nodes read (it plays the
/// baremetal-operator, the kubelets and their BMCs), judged with its own settings
/// (`sim::settings`: the rules assume them) and the config's limits.
#[cfg(any(test, feature = "testkit"))]
fn simulate(
    source: &Source,
    limits: &crate::engine::Limits,
    args: &crate::plug::simulate::Simulate,
    out: &mut crate::plug::printer::Printer,
) -> Result<crate::plug::Exit, crate::plug::Error> {
    use crate::plug::simulate::{explore, report};
    let mut backend = Metal3::open(source)?;
    let snap = backend
        .snapshot()
        .map_err(|e| crate::plug::Error::Snapshot(e.into()))?;
    let cfg = args.engine_config(limits);
    let settings = super::sim::settings();
    let planner = |s: &super::objects::Snapshot, now: i64, seed: u64| {
        super::plan(s, &settings, now, &cfg.limits, seed)
    };
    let summary = explore::<super::sim::Metal3World>(out, &snap, &(), args, &cfg, &planner)?;
    report::<Metal3>(out, &summary, &[])
}
