//! `autorepair sabakan …`: the clap definitions and the glue that reads the files (or asks
//! sabakan), runs the pure generator and prints.

use super::client::{self, Endpoint, Sabakan, Variables};
use super::generator::{self, Action, Inputs, Outcome};
use super::model::{Constraints, KubeNodes, parse_machines};
use super::service::{self, Counts};
use super::template::{Current, Template, to_yaml};
use crate::plug::printer::{Dropping, Printer, dropped_note};
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
    /// With --write FILE, maintain FILE instead, as CKE's sabakan integration does
    /// (docs/sabakan.md): exit 0 unchanged, 5 changed, else failed.
    Update(Box<UpdateArgs>),
    /// The changes `update --write FILE` made, oldest first, with their reasons and scores.
    History {
        /// The maintained cluster file.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Print the history as it is kept, one JSON object a line.
        #[arg(long)]
        json: bool,
    },
    /// Store the query variables `update --write FILE` searches sabakan with, as `ckecli
    /// sabakan set-variables` does: a JSON object with having and notHaving.
    SetVariables {
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[arg(value_name = "VARIABLES")]
        variables: PathBuf,
    },
    /// Print the stored query variables of FILE.
    GetVariables {
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Let `update --write FILE` change FILE again (`ckecli sabakan enable`).
    Enable {
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Stop `update --write FILE` from changing FILE until enabled (`ckecli sabakan disable`).
    Disable {
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Print true or false (`ckecli sabakan is-enabled`).
    IsEnabled {
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
}

#[derive(Debug, Clone, Args)]
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
    /// set-variables` takes [default: with --write FILE those stored by `sabakan
    /// set-variables FILE`, else the query's defaults, which leave out boot and RETIRED
    /// machines]. Refused with --machines, whose file is the answer as it stands.
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
    /// Pretend it is this time, RFC 3339 or Unix seconds (for scores and replays) [default: now].
    #[arg(long, value_name = "TIME", value_parser = crate::engine::text::parse_time)]
    pub now: Option<i64>,
    /// Print one JSON object instead: the action taken and why, the changes, every choice with
    /// every candidate's score, and the configuration as YAML text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The current cluster configuration (YAML, as `ckecli cluster get` prints it).
    #[arg(
        long,
        value_name = "FILE",
        // --loop, --dry-run, --metrics and an apply command all need --write: clap names
        // --write alone as what is missing, not --current.
        required_unless_present_any = ["write", "run_loop", "dry_run", "metrics", "apply"],
        conflicts_with = "write"
    )]
    pub current: Option<PathBuf>,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub maintain: MaintainArgs,
}

/// `update --write`: the file maintained in place.
#[derive(Debug, Args)]
pub struct MaintainArgs {
    /// Maintain FILE: read it (a new configuration when it does not exist), apply at most the
    /// one action CKE would, and replace it atomically only when it changes, keeping the
    /// version before as FILE.prev and the change in FILE.history. Exit 0 when unchanged, 5
    /// when changed.
    #[arg(long, value_name = "FILE")]
    pub write: Option<PathBuf>,
    /// With --write: print the change as a diff, and write nothing.
    #[arg(long, requires = "write")]
    pub dry_run: bool,
    /// With --write: a pass every --interval until stopped; sabakan not answering skips the
    /// round (said once until it answers again).
    #[arg(long = "loop", requires = "write", conflicts_with = "dry_run")]
    pub run_loop: bool,
    /// The time between the starts of two passes of --loop; at least 1s.
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = crate::engine::text::parse_interval)]
    pub interval: std::time::Duration,
    /// With --loop: stop after N passes; at least 1. Exits 5 if any pass changed the file
    /// (even if a later one failed), else as the last pass.
    #[arg(long, value_name = "N", requires = "run_loop", value_parser = clap::value_parser!(u32).range(1..))]
    pub passes: Option<u32>,
    /// With --write: write CKE's sabakan-integration metrics to this Prometheus textfile
    /// (cke_sabakan_integration_successful, cke_sabakan_workers{role},
    /// cke_sabakan_unused_machines).
    #[arg(long, value_name = "FILE", requires = "write")]
    pub metrics: Option<PathBuf>,
    /// The apply and readiness commands' time limit; each is killed beyond it.
    #[arg(long, value_name = "DURATION", default_value = "2m", value_parser = crate::engine::text::parse_duration)]
    pub apply_timeout: std::time::Duration,
    /// With --write: a program run before each change is written or applied, with FILE as its
    /// one argument; the change waits for a later pass unless it exits 0 (CKE changes its
    /// cluster only when idle: e.g. a script that checks `ckecli status`). No shell.
    #[arg(long, value_name = "PROGRAM", requires = "write")]
    pub ready_command: Option<PathBuf>,
    /// With --write: a command run for each change, with the new version (FILE.new) appended
    /// as its last argument, e.g. `-- ckecli cluster set`. No shell. Its output is logged;
    /// FILE is replaced only once it succeeds, else the change is tried again next pass.
    #[arg(last = true, value_name = "APPLY", requires = "write")]
    pub apply: Vec<String>,
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
    /// Another pass holds the cluster file's lock.
    Busy,
    /// The apply command failed: the file is left as last applied.
    Apply,
}

/// How a command that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Done {
    /// Nothing was (or, with --dry-run, would be) written.
    Unchanged,
    /// `update --write` changed the file (or, with --dry-run, would).
    Changed,
}

#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CliError {
    pub failure: Failure,
    pub message: String,
}

pub(super) fn fail(failure: Failure, message: impl Into<String>) -> CliError {
    CliError {
        failure,
        message: message.into(),
    }
}

pub(super) fn read(path: &Path, what: &str) -> Result<String, CliError> {
    crate::files::read_text(path)
        .map_err(|e| fail(Failure::Usage, format!("{what} {}: {e}", path.display())))
}

/// Refuses an `update --write` whose maintained file or metrics file is one of the files it
/// reads, or whose metrics file is the maintained file: the same file by device and inode,
/// whatever the paths say.
fn refuse_output_on_input(args: &UpdateArgs) -> Result<(), CliError> {
    let s = &args.source;
    let named = |flag: &'static str, path: &Option<PathBuf>| path.clone().map(|p| (flag, p));
    let inputs: Vec<(&str, PathBuf)> = [
        Some(("--template", s.template.clone())),
        named("--constraints", &s.constraints),
        named("--machines", &s.machines),
        named("--variables", &s.variables),
        named("--nodes", &s.nodes),
        named("--kubeconfig", &s.kubeconfig),
    ]
    .into_iter()
    .flatten()
    .collect();
    let m = &args.maintain;
    let outputs = [named("--write", &m.write), named("--metrics", &m.metrics)];
    let mut seen = inputs;
    for (flag, output) in outputs.into_iter().flatten() {
        if let Some((input_flag, _)) = seen
            .iter()
            .find(|(_, input)| crate::files::same_file(&output, input))
        {
            return Err(fail(
                Failure::Usage,
                format!(
                    "{flag} {} is the file {input_flag} names: autorepair never writes over one of its inputs (nor one output over another); give {flag} another file",
                    output.display()
                ),
            ));
        }
        seen.push((flag, output));
    }
    Ok(())
}

/// Runs one `sabakan` command, printing to standard output. Standard output failing stops the
/// printing, never the command (`plug::printer`).
pub fn run(cmd: SabakanCommand) -> Result<Done, CliError> {
    let mut out = Dropping::new(std::io::stdout().lock());
    let done = command(cmd, &mut out);
    if let Some(note) = out.failed.as_ref().and_then(dropped_note) {
        Printer::standard(Default::default()).note(note);
    }
    done
}

fn command(cmd: SabakanCommand, out: &mut impl Write) -> Result<Done, CliError> {
    let text = match cmd {
        SabakanCommand::Update(args) if args.maintain.write.is_some() => {
            refuse_output_on_input(&args)?;
            return super::maintain::run(&args, out);
        }
        SabakanCommand::History { file, json } => super::maintain::history(&file, json)?,
        SabakanCommand::SetVariables { file, variables } => {
            super::maintain::set_variables(&file, &variables)?
        }
        SabakanCommand::GetVariables { file } => super::maintain::get_variables(&file)?,
        SabakanCommand::Enable { file } => super::maintain::enable(&file, true)?,
        SabakanCommand::Disable { file } => super::maintain::enable(&file, false)?,
        SabakanCommand::IsEnabled { file } => {
            format!("{}\n", !super::maintain::disabled(&file)?)
        }
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
            let g = generate_or_update(&args, None, args.json)?;
            render(&args, &g.outcome, &g.yaml)
        }
        SabakanCommand::Update(args) => {
            let path = args
                .current
                .as_ref()
                .expect("clap requires --current or --write");
            let current = read(path, "current configuration")?;
            let g = generate_or_update(&args.source, Some((path, &current)), args.source.json)?;
            render(&args.source, &g.outcome, &g.yaml)
        }
    };
    print(out, &text)?;
    Ok(Done::Unchanged)
}

pub(super) fn print(out: &mut impl Write, text: &str) -> Result<(), CliError> {
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| fail(Failure::Usage, format!("writing to standard output: {e}")))
}

pub(super) fn render(args: &SourceArgs, outcome: &Outcome, yaml: &str) -> String {
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

/// What one run of the generator gives.
pub(super) struct Generated {
    pub outcome: Outcome,
    /// The configuration after it, the current text byte for byte when nothing changed.
    pub yaml: String,
    /// What CKE's metrics report of that configuration.
    pub counts: Counts,
}

/// Reads every input, runs the generator, and returns its outcome with the YAML to print.
/// `explain`: record every choice with every candidate's score.
pub(super) fn generate_or_update(
    args: &SourceArgs,
    current: Option<(&PathBuf, &str)>,
    explain: bool,
) -> Result<Generated, CliError> {
    let now = pass_time(args)?;
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
    // clap's `requires = "sabakan"` is met by the machines family's global --sabakan too, so
    // a --variables beside --machines got past it and was never read.
    if let (Some(v), Some(m)) = (&args.variables, &args.machines) {
        return Err(fail(
            Failure::Usage,
            format!(
                "--variables {}: the query variables select what sabakan answers (--sabakan URL), but --machines {} is taken as the answer, unfiltered: leave out --variables, or ask sabakan with --sabakan URL",
                v.display(),
                m.display()
            ),
        ));
    }
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
        explain,
    };
    let refused = |e: generator::Error| fail(Failure::Refused, e.to_string());
    let (outcome, cur) = match current {
        None => (generator::generate(&inputs).map_err(refused)?, None),
        Some((path, text)) => {
            let cur = Current::parse(text).map_err(|e| {
                fail(
                    Failure::Usage,
                    format!("current configuration {}: {e}", path.display()),
                )
            })?;
            (
                generator::update(&inputs, &cur).map_err(refused)?,
                Some(cur),
            )
        }
    };
    let (yaml, nodes) = match (&outcome.nodes, current, &cur) {
        (Some(nodes), _, _) => (to_yaml(&template.with_nodes(nodes)), nodes),
        // Nothing applies: the current file, byte for byte.
        (None, Some((_, text)), Some(cur)) => (text.to_owned(), &cur.nodes),
        _ => unreachable!("generate always produces nodes"),
    };
    let roles: Vec<String> = template
        .workers
        .iter()
        .filter(|t| !t.role.is_empty())
        .map(|t| t.role.clone())
        .collect();
    let counts = service::counts(nodes, &machines, &roles);
    debug_assert!(outcome.nodes.is_some() || outcome.action == Action::None);
    Ok(Generated {
        outcome,
        yaml,
        counts,
    })
}

/// The pass's time: --now, else the clock.
pub(super) fn pass_time(args: &SourceArgs) -> Result<Timestamp, CliError> {
    match args.now {
        Some(t) => {
            Timestamp::from_second(t).map_err(|e| fail(Failure::Usage, format!("--now {t}: {e}")))
        }
        None => Ok(Timestamp::now()),
    }
}
