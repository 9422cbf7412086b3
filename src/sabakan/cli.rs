//! `autorepair sabakan …`: the clap definitions and the glue that reads the files (or asks
//! sabakan), runs the pure generator and prints.

use super::client::{self, Endpoint, Sabakan, Variables};
use super::generator::{self, Action, Inputs, Outcome};
use super::model::{Constraints, KubeNodes, Stamp, parse_machines};
use super::template::{Current, Template, to_yaml};
use clap::{Args, Subcommand};
use jiff::Timestamp;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Subcommand)]
pub enum SabakanCommand {
    /// Check a cluster template (CKE's cluster.yml with node entries that have no address):
    /// exit 0 when it is valid, else say what is wrong and where, and exit 1.
    ValidateTemplate {
        /// The template, YAML.
        #[arg(value_name = "TEMPLATE")]
        template: PathBuf,
    },
    /// Print a new cluster configuration (CKE's cluster.yml) chosen from the machines: the
    /// control planes, then minimum-workers workers.
    Generate(SourceArgs),
    /// Print the current configuration maintained: the first maintenance action that applies,
    /// then filled up to the constraints; the current file unchanged when nothing applies.
    Update(UpdateArgs),
}

#[derive(Debug, Args)]
pub struct SourceArgs {
    /// The cluster template (YAML).
    #[arg(long, value_name = "FILE")]
    pub template: PathBuf,
    /// The constraints, a JSON object with CKE's names: control-plane-count (default 1),
    /// minimum-workers (1), maximum-workers (0, no maximum) [default: all defaults].
    #[arg(long, value_name = "FILE")]
    pub constraints: Option<PathBuf>,
    /// The machines: sabakan's answer to the searchMachines GraphQL query, or its REST machine
    /// list (GET /api/v1/machines), JSON. The file is taken as the query result, unfiltered.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "sabakan",
        required_unless_present = "sabakan"
    )]
    pub machines: Option<PathBuf>,
    /// Ask sabakan for the machines, with CKE's GraphQL query (at URL/graphql).
    #[arg(long, value_name = "URL")]
    pub sabakan: Option<String>,
    /// The query's $having and $notHaving variables, a JSON object as `ckecli sabakan
    /// set-variables` takes [default: the query's defaults, which leave out boot and RETIRED
    /// machines].
    #[arg(long, value_name = "FILE", requires = "sabakan")]
    pub variables: Option<PathBuf>,
    /// The Kubernetes Nodes (`kubectl get nodes -o json`): a control plane carrying a taint it
    /// does not tolerate is replaced, and no such machine becomes one. A machine's Node is the
    /// one named by its address, else the one with that InternalIP [default: no taints].
    #[arg(long, value_name = "FILE", conflicts_with = "kubeconfig")]
    pub nodes: Option<PathBuf>,
    /// Read the Nodes from the cluster this kubeconfig names, instead of --nodes (TLS
    /// verified; the kubeconfig's credentials never leave it).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig's context to use [default: its current context].
    #[arg(long, value_name = "NAME", requires = "kubeconfig")]
    pub kube_context: Option<String>,
    /// Pretend it is this time, RFC 3339 (for scores and replays) [default: now].
    #[arg(long, value_name = "RFC3339")]
    pub now: Option<String>,
    /// Print one JSON object instead: the action taken and why, the changes, every choice with
    /// every candidate's score, and the configuration as YAML text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The current cluster configuration (YAML, as `ckecli cluster get` prints it).
    #[arg(long, value_name = "FILE")]
    pub current: PathBuf,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// How a failed command should exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The generator refused (or the template is invalid, for validate-template): a person must act.
    Refused,
    /// An input file is missing or invalid, or an option is wrong.
    Usage,
    /// sabakan did not answer, or answered with an error.
    Unreachable,
}

#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CliError {
    pub failure: Failure,
    pub message: String,
}

fn fail(failure: Failure, message: impl Into<String>) -> CliError {
    CliError {
        failure,
        message: message.into(),
    }
}

fn read(path: &Path, what: &str) -> Result<String, CliError> {
    std::fs::read_to_string(path)
        .map_err(|e| fail(Failure::Usage, format!("{what} {}: {e}", path.display())))
}

/// Runs one `sabakan` command, printing to standard output.
pub fn run(cmd: SabakanCommand) -> Result<(), CliError> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let text = match cmd {
        SabakanCommand::ValidateTemplate { template } => {
            let text =
                read(&template, "template").map_err(|e| fail(Failure::Refused, e.message))?;
            Template::parse(&text).map_err(|e| {
                fail(
                    Failure::Refused,
                    format!("template {}: {e}", template.display()),
                )
            })?;
            format!("template {} is valid\n", template.display())
        }
        SabakanCommand::Generate(args) => {
            let (outcome, yaml) = generate_or_update(&args, None)?;
            render(&args, &outcome, &yaml)
        }
        SabakanCommand::Update(args) => {
            let current = read(&args.current, "current configuration")?;
            let (outcome, yaml) =
                generate_or_update(&args.source, Some((&args.current, &current)))?;
            render(&args.source, &outcome, &yaml)
        }
    };
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| fail(Failure::Usage, format!("writing to standard output: {e}")))
}

fn render(args: &SourceArgs, outcome: &Outcome, yaml: &str) -> String {
    if !args.json {
        return yaml.to_owned();
    }
    let mut v = serde_json::to_value(outcome).expect("the outcome serialises");
    v["changed"] = serde_json::Value::Bool(outcome.nodes.is_some());
    v["cluster"] = serde_json::Value::String(yaml.to_owned());
    let mut s = serde_json::to_string_pretty(&v).expect("JSON serialises");
    s.push('\n');
    s
}

/// Reads every input, runs the generator, and returns its outcome with the YAML to print.
fn generate_or_update(
    args: &SourceArgs,
    current: Option<(&PathBuf, &str)>,
) -> Result<(Outcome, String), CliError> {
    let now = match &args.now {
        Some(s) => {
            Stamp::parse(s)
                .map_err(|e| fail(Failure::Usage, format!("--now: {e}")))?
                .at
        }
        None => Timestamp::now(),
    };
    let template_text = read(&args.template, "template")?;
    let template = Template::parse(&template_text).map_err(|e| {
        fail(
            Failure::Usage,
            format!("template {}: {e}", args.template.display()),
        )
    })?;
    let constraints = match &args.constraints {
        Some(p) => Constraints::parse(&read(p, "constraints")?)
            .map_err(|e| fail(Failure::Usage, format!("constraints {}: {e}", p.display())))?,
        None => Constraints::default(),
    };
    let nodes = match (&args.nodes, &args.kubeconfig) {
        (Some(p), _) => KubeNodes::parse(&read(p, "nodes")?)
            .map_err(|e| fail(Failure::Usage, format!("nodes {}: {e}", p.display())))?,
        (None, Some(p)) => {
            let source = crate::k8s::Source::Kubeconfig {
                path: Some(p.clone()),
                context: args.kube_context.clone(),
            };
            let (_, listed) =
                crate::k8s::nodes::read_nodes(&source, std::time::Duration::from_secs(30))
                    .map_err(|e| {
                        fail(
                            Failure::Unreachable,
                            format!("reading the Nodes with kubeconfig {}: {e}", p.display()),
                        )
                    })?;
            KubeNodes::from_nodes(&listed)
        }
        (None, None) => KubeNodes::default(),
    };
    let machines = match (&args.machines, &args.sabakan) {
        (Some(p), _) => parse_machines(&read(p, "machines")?, now)
            .map_err(|e| fail(Failure::Usage, format!("machines {}: {e}", p.display())))?,
        (None, Some(url)) => {
            let variables = match &args.variables {
                Some(p) => Some(
                    Variables::parse(&read(p, "variables")?)
                        .map_err(|e| fail(Failure::Usage, format!("{}: {e}", p.display())))?,
                ),
                None => None,
            };
            let unreachable = |e: client::ClientError| fail(Failure::Unreachable, e.to_string());
            Sabakan::new(&Endpoint::new(url))
                .map_err(|e| fail(Failure::Usage, e.to_string()))?
                .search_machines(variables.as_ref(), now)
                .map_err(unreachable)?
        }
        (None, None) => unreachable!("clap requires --machines or --sabakan"),
    };
    let inputs = Inputs {
        template: &template,
        constraints,
        machines: &machines,
        nodes: &nodes,
        now,
        explain: args.json,
    };
    let refused = |e: generator::Error| fail(Failure::Refused, e.to_string());
    let outcome = match current {
        None => generator::generate(&inputs).map_err(refused)?,
        Some((path, text)) => {
            let cur = Current::parse(text).map_err(|e| {
                fail(
                    Failure::Usage,
                    format!("current configuration {}: {e}", path.display()),
                )
            })?;
            generator::update(&inputs, &cur).map_err(refused)?
        }
    };
    let yaml = match (&outcome.nodes, current) {
        (Some(nodes), _) => to_yaml(&template.with_nodes(nodes)),
        // Nothing applies: the current file, byte for byte.
        (None, Some((_, text))) => text.to_owned(),
        (None, None) => unreachable!("generate always produces nodes"),
    };
    debug_assert!(outcome.nodes.is_some() || outcome.action == Action::None);
    Ok((outcome, yaml))
}
