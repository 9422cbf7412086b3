//! The machines family as the command line shows it: machines named `machine/SERIAL` (or the
//! bare serial), `rack/N`, `cluster`; each with its address, sabakan state, rack, Node and
//! repair entry; and the family's own commands (`super::cli`) run on its fleet.

use super::admin::{self, Which};
use super::cli::{AutoRepairCommand, MachinesCommand, RepairCommand};
use super::config::{Constraints, Repair};
use super::document::Document;
use super::drain::{KubeNodes, NodesFile, drain_options};
use super::file::MachinesFile;
use super::labels;
use super::live::SabakanLive;
use super::snapshot::{Machine, StoredQueryError, Switch};
use super::{Facts, Index, Machines, Settings};
use crate::engine::{Backend, BackendError, ObjectRef};
use crate::plug::claim::{Claim, Look, Shared};
use crate::plug::printer::Printer;
use crate::plug::{Error, Exit, FamilyFace, LockPathError, LockSite, OpenError};
use crate::sabakan::client::Variables;
use std::path::{Path, PathBuf};

/// A machines fleet (sabakan, live or a file), with what the machines family reads beside it.
#[derive(Debug)]
pub struct MachinesFleet {
    pub from: MachinesFrom,
    pub nodes: NodesFrom,
    pub settings: Settings,
    /// The files the settings were read from (repair config, constraints), by their flags.
    pub inputs: Vec<(&'static str, PathBuf)>,
    /// The command's `--now`: the clock every part of the family reads (the file's state
    /// timestamps, the drain's retry interval and back-off), not only the planner.
    pub now: Option<i64>,
    /// CKE's etcd gate: how to reach the cluster's etcd (`--etcd-ca`, `--etcd-cert`,
    /// `--etcd-key`); `None`, the gate is off.
    pub etcd: Option<super::etcd::Access>,
    /// Where `auto-repair set-variables` keeps the trigger's query: beside the repair
    /// configuration (`None` without one).
    pub variables_file: Option<PathBuf>,
    /// The config's `[machines.variables]` sets the trigger's query: a stored one too would be
    /// two answers, which hold the trigger until one goes.
    pub config_variables: bool,
}

/// The file `auto-repair set-variables` writes beside the repair configuration `repair`.
pub fn variables_beside(repair: &Path) -> PathBuf {
    let mut name = repair.as_os_str().to_owned();
    name.push(".auto-repair.json");
    PathBuf::from(name)
}

/// The trigger's query as stored beside the repair configuration: `None` when nothing is;
/// else the query, or why it cannot be used (which holds the trigger, rule 11).
fn stored_variables(s: &MachinesFleet) -> Option<Result<Variables, StoredQueryError>> {
    stored_query(s).map(|r| r.map(|(_, query)| query))
}

/// [`stored_variables`], with the file's text as stored.
fn stored_query(s: &MachinesFleet) -> Option<Result<(String, Variables), StoredQueryError>> {
    read_stored(s.variables_file.as_deref()?, s.config_variables)
}

/// The query stored in `path` (see [`stored_query`]); `config_variables`: the config sets one.
fn read_stored(
    path: &Path,
    config_variables: bool,
) -> Option<Result<(String, Variables), StoredQueryError>> {
    let path = path.to_owned();
    let text = match crate::files::read_optional_text(&path) {
        Ok(Some(text)) => text,
        Ok(None) => return None,
        Err(e) => {
            return Some(Err(StoredQueryError::Unreadable {
                path,
                error: e.into(),
            }));
        }
    };
    if config_variables {
        return Some(Err(StoredQueryError::AlsoInConfig { path }));
    }
    Some(
        Variables::parse(&text)
            .map(|query| (text, query))
            .map_err(|e| StoredQueryError::NotAQuery {
                path,
                error: e.into(),
            }),
    )
}

/// Where the machines are.
#[derive(Debug)]
pub enum MachinesFrom {
    File(PathBuf),
    Sabakan(crate::sabakan::client::Endpoint),
}

/// Which machines are Kubernetes Nodes, and how they are drained.
#[derive(Debug, Clone)]
pub enum NodesFrom {
    None,
    File(PathBuf),
    Kube(crate::k8s::Source),
}

impl crate::plug::FamilyConfig for super::options::MachinesConfig {
    fn check(&self) -> Result<(), crate::config::ConfigProblem> {
        match &self.machines.variables {
            Some(v) => v
                .validate()
                .map_err(|e| crate::config::ConfigProblem::BadValue {
                    section: "machines.variables",
                    key: e.key.to_owned(),
                    problem: e.to_string(),
                }),
            None => Ok(()),
        }
    }
}

impl FamilyFace for Machines {
    const FACT_COLUMNS: &'static [&'static str] = &["ADDRESS", "SABAKAN", "RACK", "NODE", "ENTRY"];
    const FAMILY: &'static str = "machines";
    const HOLDS: &'static str = "sabakan machines";
    type Source = MachinesFleet;
    type Args = super::options::MachinesArgs;
    type Commands = MachinesCommand;
    type Config = super::options::MachinesConfig;
    const CONFIG_KEYS: &'static [&'static str] = &["machines"];
    const MAN: &'static crate::plug::man::ManPage = &super::man::PAGE;
    const HELP: &'static crate::plug::help::Help = &crate::plug::help::Help {
        scopes: &["rack/N"],
        targets: &["machine/SERIAL"],
        target: "a machine's serial",
        marks: "labels",
        lock: Some("autorepair-HOST:PORT.lock for sabakan"),
        kubeconfig: Some(
            "the cluster of the Nodes of a machines fleet (--sabakan, --sabakan-file)",
        ),
        live: Some("--kubeconfig (the Nodes of a machines fleet)"),
        watched: None,
        replicas: "a Kubernetes Lease",
        world: "With --sabakan-file or --sabakan the machines world, with the fleet's own repair \
                procedures and constraints: machines break, commands fail or hang, drains are \
                refused; no command of the procedures runs (the simulator plays them) and \
                nothing is written.",
        fleet_file: Some("--sabakan-file"),
        applies: "",
    };
    const FLEET_FLAGS: &'static [&'static str] = &["sabakan_file", "sabakan"];
    const FLEET_HINT: &'static str = "--sabakan-file FILE or --sabakan URL (sabakan machines)";
    #[cfg(any(test, feature = "testkit"))]
    const SIMULATOR: Option<crate::plug::simulate::Simulator<Self>> = Some(simulate);
    const DAEMON: Option<crate::plug::Daemon<Self>> = Some(crate::plug::Daemon::live(live));
    const METRICS: Option<crate::plug::Metrics<Self>> = Some(crate::plug::Metrics {
        leader: Some("cke_leader"),
        series: cke_metrics,
    });
    const LIMITS: Option<crate::plug::LimitsFor<Self>> = Some(limits);
    const DAMAGED: Option<crate::plug::DamagedIn<Self>> = Some(damaged);

    fn claim(
        args: &Self::Args,
        config: &Self::Config,
        shared: &Shared,
        look: Look,
    ) -> Option<Claim<MachinesFleet>> {
        super::options::claim(args, config, shared, look)
    }

    fn parse_object(text: &str) -> Result<ObjectRef, crate::engine::object::ObjectRefError> {
        super::parse_object(text)
    }

    fn input_files(source: &MachinesFleet) -> Vec<(&'static str, PathBuf)> {
        let mut files = source.inputs.clone();
        match &source.from {
            MachinesFrom::File(path) => files.push(("--sabakan-file", path.clone())),
            MachinesFrom::Sabakan(endpoint) => {
                files.extend(endpoint.ca_file.clone().map(|p| ("--sabakan-ca", p)));
            }
        }
        if let NodesFrom::File(path) = &source.nodes {
            files.push(("--nodes", path.clone()));
        }
        files
    }

    fn describe(source: &MachinesFleet) -> String {
        match &source.from {
            MachinesFrom::File(p) => p.display().to_string(),
            MachinesFrom::Sabakan(e) => {
                format!("sabakan at {}", crate::sabakan::client::shown_str(&e.url))
            }
        }
    }

    fn buffers_writes(source: &MachinesFleet) -> bool {
        matches!(source.from, MachinesFrom::File(_))
    }

    fn lock_path(source: &MachinesFleet, named: Option<PathBuf>) -> Result<PathBuf, LockPathError> {
        let site = match &source.from {
            MachinesFrom::File(fleet) => LockSite::File(fleet, &super::file::MISSING),
            MachinesFrom::Sabakan(e) => LockSite::Url(&e.url),
        };
        crate::plug::fleet_lock(site, named)
    }

    fn open(source: &MachinesFleet) -> Result<Box<dyn Backend<Machines>>, OpenError> {
        Ok(Box::new(open(source).map_err(OpenError::Open)?))
    }

    fn settings(source: &MachinesFleet, _backend: &dyn Backend<Machines>) -> Settings {
        source.settings.clone()
    }

    fn fact_cells(facts: &Facts) -> Vec<String> {
        let or_dash = |t: Option<String>| t.unwrap_or_else(|| "-".into());
        vec![
            or_dash(facts.address.as_ref().map(ToString::to_string)),
            facts.sabakan_state.to_owned(),
            facts.rack.to_string(),
            or_dash(facts.node.as_ref().map(ToString::to_string)),
            or_dash(facts.entry.as_ref().map(ToString::to_string)),
        ]
    }

    /// Its rack, as the limiter counts it.
    fn report_scope<'a>(_index: &Index<'a>, m: &'a Machine) -> &'a str {
        &m.rack
    }

    fn facts_line(facts: &Facts) -> String {
        let mut line = format!(
            "{} in rack {}, sabakan state {}",
            facts
                .address
                .as_ref()
                .map_or("no address".into(), ToString::to_string),
            facts.rack,
            facts.sabakan_state
        );
        match &facts.node {
            Some(n) => line.push_str(&format!(", Node {n}")),
            None => line.push_str(", not a Node of the cluster"),
        }
        if let Some(e) = &facts.entry {
            line.push_str(&format!(", repair entry {e}"));
        }
        line
    }
}

/// Repair entries whose labels cannot be read (each holds its machine), and the cluster's
/// switches or the trigger's stored query that cannot be read (each holds what it governs).
fn damaged(snap: &super::Snapshot) -> Vec<String> {
    let mut out: Vec<String> = admin::damaged(snap)
        .iter()
        .map(ToString::to_string)
        .collect();
    for (verb, switch) in [("repair", &snap.queue), ("auto-repair", &snap.auto_repair)] {
        if let Switch::Unreadable(why) = switch {
            out.push(format!(
                "unreadable switch: {why}; it holds as disabled until `autorepair {verb} enable` or `disable` sets it"
            ));
        }
    }
    if let Some(Err(why)) = &snap.variables {
        out.push(format!(
            "auto-repair's stored query cannot be read: {why}; no entry is created for a broken machine until `autorepair auto-repair set-variables FILE` stores a good one"
        ));
    }
    out
}

/// CKE's constraints are the limits; the engine's failure-domain limits apply only where
/// the config sets them (docs/machines.md).
fn limits(
    _source: &MachinesFleet,
    limits: &crate::engine::Limits,
    given: &std::collections::BTreeSet<String>,
) -> crate::engine::Limits {
    super::limits(limits, given)
}

/// CKE's names (its metrics/metrics.go), prefix `cke_`, from the entries as the pass read them.
fn cke_metrics(plan: &crate::engine::Plan<Machines>) -> String {
    use super::entry::Status;
    use std::fmt::Write;
    let mut out = String::new();
    let first = plan.targets.first().map(|t| &t.facts);
    let _ = writeln!(
        out,
        "# HELP cke_repair_queue_enabled 1 when the repair queue is enabled.\n# TYPE cke_repair_queue_enabled gauge\ncke_repair_queue_enabled {}",
        u8::from(first.is_none_or(|f| f.queue_enabled))
    );
    let _ = writeln!(
        out,
        "# HELP cke_auto_repair_enabled 1 when auto-repair is enabled.\n# TYPE cke_auto_repair_enabled gauge\ncke_auto_repair_enabled {}",
        u8::from(first.is_none_or(|f| f.auto_repair_enabled))
    );
    let entries: Vec<(String, &super::EntryFacts)> = plan
        .targets
        .iter()
        .filter_map(|t| {
            let a = t.facts.address.as_ref().map_or("", |a| a.as_str());
            t.facts
                .entry
                .as_ref()
                .map(|e| (crate::metrics::label_value(a), e))
        })
        .collect();
    out.push_str("# HELP cke_repair_queue_items Repair entries by status.\n# TYPE cke_repair_queue_items gauge\n");
    for s in Status::ALL {
        let n = entries.iter().filter(|(_, e)| e.status == s).count();
        let _ = writeln!(out, "cke_repair_queue_items{{status=\"{s}\"}} {n}");
    }
    out.push_str("# HELP cke_machine_repair_status 1 for the status of each machine's repair entry.\n# TYPE cke_machine_repair_status gauge\n");
    for (a, e) in &entries {
        for s in Status::ALL {
            let _ = writeln!(
                out,
                "cke_machine_repair_status{{address=\"{a}\",status=\"{s}\"}} {}",
                u8::from(e.status == s)
            );
        }
    }
    out.push_str("# HELP cke_repair_queue_entries One per repair entry.\n# TYPE cke_repair_queue_entries gauge\n");
    for (a, e) in &entries {
        let _ = writeln!(
            out,
            "cke_repair_queue_entries{{index=\"{}\",address=\"{a}\",operation=\"{}\",status=\"{}\",step=\"{}\"}} 1",
            e.index,
            crate::metrics::label_value(&e.operation.to_string()),
            e.status,
            e.step
        );
    }
    out
}

/// The Kubernetes cluster the machines are Nodes of (`--kubeconfig`, which the drain
/// uses): replicas elect their leader with a Lease there. Nothing is watched in it (the
/// machines are in sabakan).
fn live(source: &MachinesFleet) -> Option<crate::k8s::Live> {
    match &source.nodes {
        NodesFrom::Kube(from) => Some(crate::k8s::Live {
            from: from.clone(),
            timeout: DRAIN_TIMEOUT,
            discover: None,
        }),
        NodesFrom::None | NodesFrom::File(_) => None,
    }
}

/// Reads what a machines fleet needs beside the machines (`what` names them in messages),
/// and warns when the constraints start nothing.
pub fn settings(
    what: &str,
    repair: Option<&Path>,
    constraints: Option<&Path>,
    has_nodes: bool,
    query: crate::sabakan::client::Variables,
) -> Result<Settings, super::config::ConfigError> {
    use super::config::{CONSTRAINTS, ConfigError, REPAIR_CONFIG};
    let read = |what: &'static str, p: &Path| {
        crate::files::read_text(p).map_err(|e| ConfigError {
            what,
            path: p.display().to_string(),
            message: format!("cannot read it: {e}"),
        })
    };
    let repair_path = repair.map(|p| p.display().to_string()).unwrap_or_default();
    let repair = match repair {
        Some(p) => {
            let path = p.display().to_string();
            let repair = Repair::parse(&read(REPAIR_CONFIG, p)?, &path)?;
            if let Some(w) = repair.warning(&path) {
                tracing::warn!("{w}");
            }
            repair
        }
        None => {
            return Err(ConfigError {
                what: "machines fleet",
                path: what.to_owned(),
                message: "the machines family needs its repair procedures: pass --repair-config FILE (a CKE cluster.yml or its repair: section), or set machines.repair_config in the config".into(),
            });
        }
    };
    // Without Nodes every machine would look out of the cluster, and a step that needs a
    // drain would run undrained: refuse rather than let one forgotten flag do that.
    if !has_nodes {
        let drained = repair.repair_procedures.iter().find_map(|p| {
            p.repair_operations.iter().find_map(|o| {
                (o.repair_steps.iter().position(|s| s.need_drain))
                    .map(|i| (p.machine_types.join(","), o.operation.clone(), i + 1))
            })
        });
        if let Some((types, operation, step)) = drained {
            // The step that needs Nodes is the repair configuration's; the machines file is fine.
            return Err(ConfigError {
                what: REPAIR_CONFIG,
                path: repair_path.clone(),
                message: format!(
                    "step {step} of operation {operation:?} (machine types {types}) needs a drain, so autorepair must know which machines are Kubernetes Nodes: pass --nodes FILE (`kubectl get nodes -o json`), or --kubeconfig FILE for the live cluster"
                ),
            });
        }
    }
    // The selectors are checked now, not at the first drain.
    drain_options(&repair, DRAIN_TIMEOUT).map_err(|e| ConfigError {
        what: REPAIR_CONFIG,
        path: repair_path.clone(),
        message: e.to_string(),
    })?;
    let constraints = match constraints {
        Some(p) => Constraints::parse(&read(CONSTRAINTS, p)?, &p.display().to_string())?,
        None => Constraints::default(),
    };
    if let Some(w) = constraints.warning() {
        tracing::warn!("{w}");
    }
    Ok(Settings {
        repair,
        constraints,
        query,
    })
}

/// How long one request to the Kubernetes API may take.
const DRAIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The backend of a machines fleet: a file or sabakan, with its Nodes from a file or a
/// cluster, on the command's clock.
pub fn open(s: &MachinesFleet) -> Result<Document, BackendError> {
    let repair = s.settings.repair.clone();
    let (nodes, kube) = match &s.nodes {
        NodesFrom::None => (None, None),
        NodesFrom::File(p) => (Some(NodesFile::open(p.clone())?), None),
        NodesFrom::Kube(source) => {
            let options = drain_options(&repair, DRAIN_TIMEOUT).map_err(BackendError::service)?;
            (None, Some(KubeNodes::connect(source, options)?))
        }
    };
    let mut file = match &s.from {
        MachinesFrom::File(path) => MachinesFile::open(path, repair, nodes)?,
        MachinesFrom::Sabakan(endpoint) => SabakanLive::connect(endpoint)?.open(repair, nodes)?,
    };
    if let Some(k) = kube {
        file = file.with_drainer(Box::new(k));
    }
    file.now = s.now;
    file.variables = stored_variables(s);
    if let Some(access) = &s.etcd {
        file.etcd = Some(super::etcd::Client::new(access).map_err(BackendError::service)?);
    }
    Ok(file)
}

fn act(e: BackendError) -> Error {
    Error::Act {
        object: ObjectRef::singleton("repair-queue"),
        message: e.to_string(),
    }
}

/// A refusal is the person's to fix (exit 2, as for any admin command asked the impossible); a
/// fleet that could not be read or written is exit 3.
fn verb(e: admin::VerbError) -> Error {
    match e {
        admin::VerbError::Refused(message) => Error::Edit(crate::admin::AdminError::Refused {
            object: ObjectRef::singleton("repair-queue"),
            message,
        }),
        admin::VerbError::Backend(e) => act(e),
    }
}

/// `autorepair repair …` and `autorepair auto-repair …`, under the fleet's lock where they
/// write.
fn repair(
    out: &mut Printer,
    s: &MachinesFleet,
    lock: &Path,
    lock_wait: Option<std::time::Duration>,
    cmd: MachinesCommand,
) -> Result<Exit, Error> {
    let _lock = if cmd.writes() {
        Some(crate::lock::acquire_waiting(lock, lock_wait)?)
    } else {
        None
    };
    let mut file = open(s).map_err(|e| Error::Open(e.into()))?;
    file.check_health = false;
    let cmd = match cmd {
        MachinesCommand::AutoRepair(cmd) => {
            auto_repair(out, s, &mut file, cmd)?;
            return Ok(Exit::Ok);
        }
        MachinesCommand::Repair(cmd) => cmd,
    };
    let mut exit = Exit::Ok;
    match cmd {
        RepairCommand::Add {
            operation,
            machine_type,
            address,
            serial,
            clock,
        } => {
            let now = clock
                .now
                .unwrap_or_else(|| jiff::Timestamp::now().as_second());
            let index = admin::add(
                &mut file,
                &s.settings.repair,
                &operation,
                &machine_type,
                &address,
                serial.as_deref(),
                now,
            )
            .map_err(verb)?;
            out.line(format!("repair entry #{index} added for {address}"))?;
        }
        RepairCommand::List { json, output } => {
            use crate::plug::cli::Format;
            let snap = file.snapshot().map_err(|e| Error::Snapshot(e.into()))?;
            let rows = admin::rows(&snap);
            // Not in CKE's columns: said apart, and the verb's exit code tells a script.
            let damaged = admin::damaged(&snap);
            for d in &damaged {
                out.note(format_args!("damaged repair entry: {d}"));
            }
            if !damaged.is_empty() {
                exit = Exit::Partial;
            }
            if output == Some(Format::Name) {
                for r in &rows {
                    out.line(format_args!("machine/{}", r.serial))?;
                }
            } else if output == Some(Format::Yaml) {
                out.yaml_document(&rows)?;
            } else if json || output == Some(Format::Json) {
                out.json_line(&rows)?;
            } else {
                out.text(admin::table(&rows))?;
            }
        }
        RepairCommand::Delete {
            address,
            finished,
            unfinished,
        } => {
            let which = match (address, finished, unfinished) {
                (Some(a), _, _) => Which::named(&a),
                (None, true, _) => Which::Finished,
                _ => Which::Unfinished,
            };
            let done = admin::delete(&mut file, &which).map_err(verb)?;
            if done.marked.is_empty() && done.already.is_empty() && done.removed.is_empty() {
                out.line("no repair entry to delete")?;
            }
            if !done.removed.is_empty() {
                out.line(format!("removed: {}", done.removed.join(", ")))?;
            }
            if !done.marked.is_empty() {
                out.line(format!(
                    "marked deleted: {}: the next pass removes {}",
                    done.marked.join(", "),
                    if done.marked.len() == 1 { "it" } else { "them" }
                ))?;
            }
            if !done.already.is_empty() {
                out.line(format!(
                    "already marked deleted: {}: the next pass removes {}",
                    done.already.join(", "),
                    if done.already.len() == 1 {
                        "it"
                    } else {
                        "them"
                    }
                ))?;
            }
        }
        RepairCommand::ResetBackoff => {
            let cleared = admin::reset_backoff(&mut file).map_err(act)?;
            if cleared.is_empty() {
                out.line("no repair entry is in drain back-off: nothing to clear")?;
            } else {
                out.line(format!("drain back-off cleared: {}", cleared.join(", ")))?;
            }
        }
        RepairCommand::IsEnabled => {
            let snap = file.snapshot().map_err(|e| Error::Snapshot(e.into()))?;
            out.line(snap.queue.on().to_string())?;
        }
        RepairCommand::Wait { timeout, interval } => {
            let started = std::time::Instant::now();
            let mut said = Vec::new();
            loop {
                let snap = file.snapshot().map_err(|e| Error::Snapshot(e.into()))?;
                let left = admin::unfinished(&snap);
                if left.is_empty() {
                    out.line("no repair entry is unfinished")?;
                    break;
                }
                if left != said {
                    out.note(format_args!("waiting for {}", left.join(", ")));
                    said = left.clone();
                }
                let remaining = timeout.map(|t| t.saturating_sub(started.elapsed()));
                if remaining.is_some_and(|r| r.is_zero()) {
                    out.line(format!(
                        "still unfinished after {}: {}",
                        humantime::format_duration(timeout.unwrap_or_default()),
                        left.join(", ")
                    ))?;
                    exit = Exit::Partial;
                    break;
                }
                std::thread::sleep(remaining.map_or(interval, |r| r.min(interval)));
                // Read again: a pass of another process changes the labels meanwhile.
                file = open(s).map_err(|e| Error::Open(e.into()))?;
                file.check_health = false;
            }
        }
        RepairCommand::Enable | RepairCommand::Disable => {
            let on = matches!(cmd, RepairCommand::Enable);
            admin::switch(&mut file, labels::QUEUE, on).map_err(act)?;
            out.line(if on {
                "repair queue enabled"
            } else {
                "repair queue disabled: no drain or command starts; health checks and finishing go on"
            })?;
        }
    }
    Ok(exit)
}

/// `autorepair auto-repair …`, under the lock where it writes.
fn auto_repair(
    out: &mut Printer,
    s: &MachinesFleet,
    file: &mut Document,
    cmd: AutoRepairCommand,
) -> Result<(), Error> {
    match cmd {
        AutoRepairCommand::Enable | AutoRepairCommand::Disable => {
            let on = matches!(cmd, AutoRepairCommand::Enable);
            admin::switch(file, labels::AUTO_REPAIR, on).map_err(act)?;
            out.line(if on {
                "auto-repair enabled: machines sabakan reports broken get repair entries again"
            } else {
                "auto-repair disabled: no entry is created for a broken machine; entries under way and those `repair add` adds go on"
            })?;
        }
        AutoRepairCommand::IsEnabled => {
            let snap = file.snapshot().map_err(|e| Error::Snapshot(e.into()))?;
            if let Switch::Unreadable(why) = &snap.auto_repair {
                out.note(format_args!(
                    "auto-repair's switch cannot be read ({why}): it holds as disabled"
                ));
            }
            out.line(snap.auto_repair.on().to_string())?;
        }
        AutoRepairCommand::SetVariables { file: given } => {
            let stored = s.variables_file.as_deref().ok_or_else(|| refused(
                "auto-repair set-variables keeps the query beside the repair configuration: give --repair-config FILE (or machines.repair_config in the config)".into(),
            ))?;
            if s.config_variables {
                return Err(refused(format!(
                    "the config's [machines.variables] sets the trigger's query: change it there, or remove it and run `auto-repair set-variables {}` again",
                    given.display()
                )));
            }
            let text = crate::files::read_text(&given)
                .map_err(|e| refused(format!("cannot read {}: {e}", given.display())))?;
            Variables::parse(&text).map_err(|e| refused(format!("{}: {e}", given.display())))?;
            crate::files::write_atomically(stored, text.as_bytes()).map_err(|e| Error::Act {
                object: ObjectRef::singleton("auto-repair"),
                message: format!("cannot write {}: {e}", stored.display()),
            })?;
            out.line(format!(
                "auto-repair's query stored in {}: the next pass selects with it",
                stored.display()
            ))?;
        }
        AutoRepairCommand::GetVariables => match stored_query(s) {
            Some(Ok((text, _))) => out.text(text)?,
            Some(Err(why)) => {
                return Err(Error::Act {
                    object: ObjectRef::singleton("auto-repair"),
                    message: format!(
                        "the stored query cannot be read ({why}); the trigger holds until `auto-repair set-variables FILE` stores a good one"
                    ),
                });
            }
            None => {
                let from = if s.config_variables {
                    "the config's [machines.variables]"
                } else {
                    "CKE's default: UNHEALTHY and UNREACHABLE machines that are not boot servers"
                };
                out.note(format_args!("nothing stored; the query is {from}"));
                out.json_line(&s.settings.query)?;
            }
        },
    }
    Ok(())
}

fn refused(message: String) -> Error {
    Error::Edit(crate::admin::AdminError::Refused {
        object: ObjectRef::singleton("auto-repair"),
        message,
    })
}

impl crate::plug::cli::Commands<Machines> for MachinesCommand {
    fn now(&self) -> Option<i64> {
        match self {
            MachinesCommand::Repair(RepairCommand::Add { clock, .. }) => clock.now,
            _ => None,
        }
    }

    fn output(&self) -> (bool, Option<crate::plug::cli::Format>) {
        match self {
            MachinesCommand::Repair(RepairCommand::List { json, output }) => (*json, *output),
            _ => (false, None),
        }
    }

    fn run(
        self,
        source: &MachinesFleet,
        out: &mut Printer,
        lock: &Path,
        lock_wait: Option<std::time::Duration>,
    ) -> Result<Exit, Error> {
        repair(out, source, lock, lock_wait, self)
    }
}

/// The machines world over the machines read (sabakan or its file, read once and never
/// written; the Nodes likewise), with the fleet's own repair configuration and
/// constraints, and the config's limits: the procedures exercised are the operator's. The
/// world plays every command they name, health checks included, from each machine's
/// script: no program runs, here or when the source is read, and drains cordon a copy of
/// the Nodes.
#[cfg(any(test, feature = "testkit"))]
fn simulate(
    s: &MachinesFleet,
    limits: &crate::engine::Limits,
    args: &crate::plug::simulate::Simulate,
    out: &mut Printer,
) -> Result<Exit, Error> {
    use crate::plug::simulate::{explore, report};
    let mut source = open(s).map_err(|e| Error::Open(e.into()))?;
    source.check_health = false;
    let snap = source.snapshot().map_err(|e| Error::Snapshot(e.into()))?;
    // Dropped unflushed: nothing read is ever written back.
    drop(source);
    let cfg = args.engine_config(limits);
    let planner = |snap: &super::snapshot::Snapshot, now: i64, seed: u64| {
        super::plan(snap, &s.settings, now, &cfg.limits, seed)
    };
    let setup = Some(s.settings.clone());
    let summary = explore::<super::sim::MachinesWorld>(out, &snap, &setup, args, &cfg, &planner)?;
    let notes = super::sim::unrepairable(&snap, &s.settings);
    report::<Machines>(out, &summary, &notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stored query: none, the query, or why it cannot be used, naming the file.
    #[test]
    fn a_stored_query_that_cannot_be_used_says_why_naming_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.json");
        std::fs::write(&good, r#"{"having":{"racks":[2]}}"#).unwrap();
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, r#"{"having":{"states":["broken"]}}"#).unwrap();
        let missing = dir.path().join("missing.json");
        // A link whose file is gone stood for a query: it holds the trigger like any unreadable
        // one, not read as "nothing stored" (which would run CKE's default query instead).
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink(dir.path().join("gone.json"), &dangling).unwrap();
        // (file, the config sets a query too, what is read)
        let cases: [(&Path, bool, &str); 6] = [
            (&missing, false, "none"),
            (&dangling, false, "unreadable"),
            (&good, false, "query"),
            (dir.path(), false, "unreadable"),
            (&good, true, "also in config"),
            (&bad, false, "not a query"),
        ];
        for (path, config_variables, want) in cases {
            let got = read_stored(path, config_variables);
            let named = |p: &Path| p == path;
            let kind = match &got {
                None => "none",
                Some(Ok((text, query))) => {
                    assert_eq!(&Variables::parse(text).unwrap(), query);
                    "query"
                }
                Some(Err(StoredQueryError::Unreadable { path, .. })) if named(path) => "unreadable",
                Some(Err(StoredQueryError::AlsoInConfig { path })) if named(path) => {
                    "also in config"
                }
                Some(Err(StoredQueryError::NotAQuery { path, .. })) if named(path) => "not a query",
                Some(Err(e)) => panic!("{want}: {e:?} names another file"),
            };
            assert_eq!(kind, want, "{}", path.display());
            if let Some(Err(e)) = got {
                assert!(e.to_string().contains(&path.display().to_string()), "{e}");
            }
        }
    }
}
