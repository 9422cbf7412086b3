//! Command-line definitions (clap) only; the binary dispatches them.

use crate::engine::text::{parse_duration, parse_time};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

pub use crate::plug::cli::{ClockArgs, RepairCommand};
use std::time::Duration;

#[derive(Debug, Parser)]
#[command(
    name = "autorepair",
    version,
    about = "Repairs broken machines and VM instances automatically and safely, steered by their marks",
    long_about = "Repairs broken machines and VM instances automatically and safely, steered by their \
marks.\n\n\
Each pass reads the fleet, decides per target whether a repair is needed and allowed, starts the \
repairs and records every step in the targets' own marks. It keeps no state of its own. Three \
families: Ganeti instances (--rapi or --cluster; tags ganeti:watcher:autorepair:*), metal3 \
bare-metal Machines (--kube or --kube-objects; annotations autorepair.io/*) and sabakan machines \
repaired by CKE procedures (--sabakan or --sabakan-file; labels autorepair.*).",
    after_help = "Exit codes: 0 ok; 1 the pass finished but some action failed (or tags parse/lint found \
invalid tags, or simulate found a violation); 2 usage or configuration error; 3 the fleet could not \
be read or saved (or the metrics file or report written); 4 another run holds the lock; 5 sabakan \
update --write changed the file; 6 the fleet refused a write for want of write access (the pass \
stopped at its first write)."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Config file [default: /etc/autorepair/autorepair.toml, if it exists].
    #[arg(long, global = true, value_name = "FILE", env = "AUTOREPAIR_CONFIG")]
    pub config: Option<PathBuf>,
    /// Fleet file (JSON, shaped like Ganeti's RAPI answers) to work on instead of a cluster.
    #[arg(long, global = true, value_name = "FILE", conflicts_with = "rapi")]
    pub cluster: Option<PathBuf>,
    /// Kubernetes objects file (a v1 List, as `kubectl get machines.cluster.x-k8s.io,
    /// metal3machines,baremetalhosts,nodes -A -o json` prints it) to work on: the metal3 family.
    #[arg(long, global = true, value_name = "FILE", conflicts_with_all = ["cluster", "rapi"])]
    pub kube_objects: Option<PathBuf>,
    /// Work on a live Kubernetes management cluster (the metal3 family): the one --kubeconfig
    /// names (else $KUBECONFIG, else ~/.kube/config), or, inside a Pod, its service account.
    #[arg(long, global = true, conflicts_with_all = ["cluster", "rapi", "kube_objects"])]
    pub kube: bool,
    /// Kubeconfig of the management cluster, with --kube [default: $KUBECONFIG, ~/.kube/config;
    /// in a Pod without either: its service account]. With a machines fleet: the Kubernetes
    /// cluster whose Nodes the machines are, drained through the Eviction API (TLS verified;
    /// the credentials stay in the file).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Context of the kubeconfig to use, with --kube or --kubeconfig [default: its current
    /// context].
    #[arg(long, global = true, value_name = "NAME")]
    pub kube_context: Option<String>,
    /// With --kube: the Machines' Nodes are in their workload clusters, reached through each
    /// Cluster's <cluster>-kubeconfig Secret [default: in the management cluster].
    #[arg(long, global = true, requires = "kube")]
    pub workload_secrets: bool,
    /// sabakan machines file (the JSON of sabakan's GET /api/v1/machines, or a GraphQL
    /// searchMachines answer) to work on: the machines family. Labels are written back into it.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["cluster", "rapi", "kube_objects", "kube"])]
    pub sabakan_file: Option<PathBuf>,
    /// Work on a live sabakan (the machines family): its URL, e.g. http://sabakan:10080. Each
    /// pass reads the machines with one GraphQL query and writes each label with one REST
    /// call. sabakan takes no credentials: its allowed-ips setting decides who may write.
    #[arg(long = "sabakan", value_name = "URL", conflicts_with_all = ["cluster", "rapi", "kube_objects", "kube", "sabakan_file"])]
    pub sabakan_url: Option<String>,
    /// With --sabakan over https: a PEM file of the CA to trust besides the system's roots
    /// (the server is always verified).
    #[arg(long, value_name = "FILE")]
    pub sabakan_ca: Option<PathBuf>,
    /// With a machines fleet (--sabakan or --sabakan-file): the CKE cluster.yml whose repair:
    /// section to use (or that section alone) [default: machines.repair_config in the config].
    #[arg(long, value_name = "FILE")]
    pub repair_config: Option<PathBuf>,
    /// With a machines fleet: CKE's constraints as a JSON object (maximum-repair-queue-entries,
    /// wait-seconds-to-repair-rebooting; both default to 0, and 0 entries starts nothing).
    #[arg(long = "constraints", value_name = "FILE")]
    pub machine_constraints: Option<PathBuf>,
    /// With a machines fleet: the Kubernetes Nodes (`kubectl get nodes -o json`); a machine is
    /// in the cluster when a Node's name or InternalIP is its address. Cordons are written into
    /// it. For a live cluster, give --kubeconfig instead.
    #[arg(long = "nodes", value_name = "FILE", conflicts_with = "kubeconfig")]
    pub machine_nodes: Option<PathBuf>,
    /// metal3: fence a powered-off host's Node with the out-of-service taint
    /// (node.kubernetes.io/out-of-service=nodeshutdown:NoExecute, Kubernetes ≥ 1.28) instead of
    /// deleting it; the taint goes once the host is back on and the Node Ready [default:
    /// fencing in the config's [metal3] section, else delete-node].
    #[arg(long, global = true)]
    pub out_of_service_taint: bool,
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
    /// Ganeti: act only on the host that is the cluster's master (by this node's ssconf);
    /// elsewhere a pass stands by and exits 0. For cron on every master candidate
    /// [default: only_on_master in the config's [ganeti] section].
    #[arg(long, global = true)]
    pub only_on_master: bool,
    /// Lock file [default: one per fleet: FLEET.lock next to a fleet file;
    /// /run/lock/autorepair-ganeti-UUID.lock for RAPI, by the cluster's uuid].
    #[arg(long, global = true, value_name = "FILE")]
    pub lock_file: Option<PathBuf>,
    /// When another run or admin command holds the fleet's lock, wait for it this long
    /// (`--wait` alone: 10 minutes) instead of failing at once with exit 4.
    #[arg(long, global = true, value_name = "DURATION", num_args = 0..=1, require_equals = true,
          default_missing_value = "10m", value_parser = parse_duration)]
    pub wait: Option<Duration>,
    /// Log one JSON object per line instead of text (logs go to stderr).
    #[arg(long, global = true)]
    pub log_json: bool,
    /// Log level filter, e.g. info, debug, warn [default: env RUST_LOG, else info].
    #[arg(long, global = true, value_name = "FILTER")]
    pub log: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Make one pass (or several with --loop/--passes): read, decide, act.
    Run(RunArgs),
    /// Show every target's state, effective policy and where it came from.
    Status {
        /// One JSON document: {"targets":[…],"counts":{…},"fleet":{…},"lint":[…]}.
        #[arg(long)]
        json: bool,
        /// The table's rows only: no header, no summary under it (for scripts, as kubectl's).
        #[arg(long, conflicts_with = "json")]
        no_headers: bool,
        #[command(flatten)]
        clock: ClockArgs,
    },
    /// Write the fleet as one self-contained HTML page (no script, nothing fetched): targets
    /// by state per scope, what is pending and why, the limiter's verdict and the recent
    /// repairs. Reads only; the file is replaced atomically.
    Report {
        /// Write the page here.
        #[arg(long, value_name = "FILE")]
        html: PathBuf,
        #[command(flatten)]
        clock: ClockArgs,
    },
    /// Show the reasoning for one target.
    Explain {
        /// The target: an instance's full name, a Machine's NS/NAME, a machine's serial.
        target: String,
        /// The target's plan as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        clock: ClockArgs,
    },
    /// The tag language as a tool.
    #[command(subcommand)]
    Tags(TagsCommand),
    /// The machines family's repair entries, in ckecli's words (with --sabakan or --sabakan-file).
    #[command(subcommand)]
    Repair(RepairCommand),
    /// Allow repairs up to TYPE on an object (replaces its other policy marks); `none` removes
    /// them, so the object inherits the policy of the next level up.
    Allow {
        /// The family's level, or none. Ganeti: fix-storage, migrate, failover, reinstall;
        /// metal3: drain, power-cycle, reprovision; machines: check, step-1 … step-8.
        #[arg(value_parser = parse_level, value_name = "TYPE")]
        level: Level,
        /// cluster, a scope (Ganeti group/NAME, rack/N, machineset/NS/NAME…) or a target
        /// (instance/NAME, machine/NS/NAME, machine/SERIAL; a bare name is a target).
        object: String,
        #[command(flatten)]
        clock: ClockArgs,
    },
    /// Stop repairs from starting on an object, forever or for a while.
    Suspend {
        /// cluster, a scope (Ganeti group/NAME, rack/N, machineset/NS/NAME…) or a target
        /// (instance/NAME, machine/NS/NAME, machine/SERIAL; a bare name is a target).
        object: String,
        /// Until this time (in the future), RFC 3339 or Unix seconds.
        #[arg(long, value_name = "TIME", conflicts_with = "for_", value_parser = parse_time)]
        until: Option<i64>,
        /// For this long, e.g. 2h, 3days, or seconds (at least a second).
        #[arg(long = "for", id = "for_", value_name = "DURATION", value_parser = parse_duration)]
        for_: Option<Duration>,
        #[command(flatten)]
        clock: ClockArgs,
    },
    /// Remove every suspend mark from an object.
    Resume {
        /// cluster, a scope (Ganeti group/NAME, rack/N, machineset/NS/NAME…) or a target
        /// (instance/NAME, machine/NS/NAME, machine/SERIAL; a bare name is a target).
        object: String,
        #[command(flatten)]
        clock: ClockArgs,
    },
    /// Ask for one repair of a target, up to TYPE, whatever the policy says (not while suspended).
    Request {
        /// The most destructive repair allowed (a level of the target's family, as for allow).
        #[arg(value_name = "TYPE")]
        repair: String,
        /// The target: an instance's full name, a Machine's NS/NAME, a machine's serial.
        target: String,
        #[command(flatten)]
        clock: ClockArgs,
    },
    /// Remove a target's failure results after a person investigated, so repairs may start again.
    Clear {
        /// The target: an instance's full name, a Machine's NS/NAME, a machine's serial.
        target: String,
        #[command(flatten)]
        clock: ClockArgs,
    },
    /// What-if under chaos: many passes over the fleet (in memory: the file is not changed) while
    /// nodes and racks fail, jobs fail, the watcher is killed and admins edit tags; the safety
    /// rules are checked after every pass. Exit 1 on a violation, with the seed and a minimal history.
    /// With --kube-objects (or --kube) the metal3 world: kubelets die, health checks request
    /// remediation, BMCs break, zones go dark, Nodes are deleted. With --sabakan-file (or
    /// --sabakan) the machines world, with the fleet's own repair procedures and constraints:
    /// machines break, commands fail or hang, drains are refused; no command of the procedures
    /// runs (the simulator plays them) and nothing is written.
    #[cfg(any(test, feature = "testkit"))]
    Simulate(SimulateArgs),
    /// Print a synthetic fleet file (deterministic by seed) for benchmarks and what-ifs.
    #[cfg(any(test, feature = "testkit"))]
    Generate {
        #[arg(long, value_name = "N")]
        instances: usize,
        #[arg(long, default_value_t = 1, value_name = "N")]
        seed: u64,
        /// Share of nodes offline or drained, 0 to 1.
        #[arg(long, default_value_t = 0.02, value_name = "SHARE")]
        broken: f64,
        /// Add contradictions (instances on missing nodes, duplicate names, a thousand tags on
        /// one object…) that the watcher must survive.
        #[arg(long)]
        contradictions: bool,
        /// Write here (atomically) instead of to standard output.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// A CKE cluster configuration (cluster.yml) from a template and the machines sabakan knows:
    /// check the template, generate a configuration, or maintain one.
    #[command(subcommand)]
    Sabakan(crate::sabakan::cli::SabakanCommand),
    /// Save the fleet (e.g. a real cluster read over RAPI) as a fleet file, to replay it offline
    /// with --cluster and --dry-run.
    Snapshot {
        /// Write here (atomically) instead of to standard output.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

#[cfg(any(test, feature = "testkit"))]
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Passes with faults per scenario (a quiet phase follows, to check every repair finishes).
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub passes: u32,
    /// Seed of the first scenario; scenario k uses seed+k.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// How many seeded scenarios to run.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub scenarios: usize,
    /// Passes without faults at the end [default: enough for max_repair_age to run out].
    #[arg(long, value_name = "N")]
    pub quiet_passes: Option<u32>,
    /// The summary and any finding as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print what happened in each pass (only with one scenario).
    #[arg(long)]
    pub verbose: bool,
    #[command(flatten)]
    pub clock: ClockArgs,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Show what would be done; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub clock: ClockArgs,
    /// Keep making passes, --interval apart (the lock is let go in between). With --kube the
    /// next pass starts as soon as a watched object changes (within about a second), and at
    /// least every --interval (a full resync); SIGTERM stops the loop once the write under way is done.
    #[arg(long = "loop")]
    pub loop_: bool,
    /// Time between passes with --loop; with --kube the longest time between two passes.
    #[arg(long, default_value = "5m", value_parser = parse_duration, value_name = "DURATION")]
    pub interval: Duration,
    /// With --kube --loop: act only while holding a coordination.k8s.io/v1 Lease, so that of
    /// several replicas one acts; the others stand by and take over once its Lease runs out
    /// (15 s after its last renewal) or is given up (on SIGTERM). The identity is $POD_NAME,
    /// else the host name, with a random suffix.
    #[arg(long)]
    pub leader_elect: bool,
    /// The Lease of --leader-elect [default: namespace $POD_NAMESPACE, else the service
    /// account's, else `default`; name `autorepair`].
    #[arg(long, value_name = "NAMESPACE/NAME", requires = "leader_elect")]
    pub lease: Option<String>,
    /// Make this many passes, back to back (with --loop: at most this many); at least 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub passes: Option<u32>,
    /// Override limits.max_pending.
    #[arg(long, value_name = "N")]
    pub max_pending: Option<usize>,
    /// Override limits.max_broken.
    #[arg(long, value_name = "N")]
    pub max_broken: Option<usize>,
    /// Print the plan as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write Prometheus metrics (textfile collector format) here after each pass.
    #[arg(long, value_name = "FILE")]
    pub metrics_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum TagsCommand {
    /// Parse tags given as arguments; exit 1 if any autorepair tag is invalid.
    Parse {
        /// One JSON object per tag and line.
        #[arg(long)]
        json: bool,
        /// Tags, autorepair's or any other (those are reported as foreign).
        #[arg(required = true, value_name = "TAG")]
        tags: Vec<String>,
    },
    /// Report every invalid or conflicting autorepair tag in the fleet; exit 1 if any.
    Lint {
        /// One JSON object per problem and line.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        clock: ClockArgs,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Level {
    None,
    /// Read by the settings stage, on the ladder of the fleet's family.
    UpTo(String),
}

fn parse_level(s: &str) -> Result<Level, String> {
    Ok(if s == "none" {
        Level::None
    } else {
        Level::UpTo(s.to_owned())
    })
}
