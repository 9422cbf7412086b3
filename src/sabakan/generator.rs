//! The cluster generator: initialization and maintenance of a CKE cluster configuration from
//! a template, the constraints and the machines sabakan knows (CKE's
//! docs/sabakan-integration.md and sabakan/generator.go before its PR #796: the legacy design).
//! Pure: the clock is an input.
//!
//! # Determinism
//! Where CKE leaves ties to chance, the machine whose serial sorts first (then whose address
//! sorts first) wins, both when choosing a machine to add (among the highest scores) and one to
//! remove (among the lowest). Control planes come first in the output, then workers, each in
//! the order of the current configuration, new nodes appended in the order they were chosen.
//!
//! # Etcd safety
//! No configuration is ever produced in which half or more of the current control planes are
//! gone (demoted, removed or vanished): the check runs on every result, whatever the action. An
//! update that would need it fails with [`Error::EtcdSafety`], for a person to decide. Where a
//! safe smaller step exists (lowering `control-plane-count` by several), it is taken instead,
//! and the next updates continue.

use super::model::{Constraints, KubeNodes, Machine, State};
use super::render;
use super::template::{Current, Node, NodeTemplate, Template};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;

/// A RETIRED worker is removed once it has been retired this long (CKE's fixed wait).
pub const RETIRED_WAIT_SECONDS: f64 = 300.0;
/// More than the machines a rack can hold: the rack term of a score stays positive.
const MAX_PER_RACK: i64 = 100;
/// Added to the removal score of a HEALTHY machine, so unhealthy ones go first.
const HEALTHY_SCORE: i64 = 1000;

/// Everything the generator reads.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    pub template: &'a Template,
    pub constraints: Constraints,
    pub machines: &'a [Machine],
    /// The Kubernetes Nodes' taints: they decide which control planes must be replaced.
    pub nodes: &'a KubeNodes,
    pub now: Timestamp,
    /// Record every candidate of every choice with its score (for `--json`).
    pub explain: bool,
}

/// The maintenance actions, in the order they are tried; `Generate` makes a new configuration
/// and `Regenerate` re-renders the same members when nothing else applies but the rendering
/// changed (a template or a machine field changed); `None` leaves the configuration as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Generate,
    RemoveNonExistent,
    IncreaseControlPlane,
    DecreaseControlPlane,
    ReplaceControlPlane,
    IncreaseWorker,
    DecreaseWorker,
    Taint,
    Regenerate,
    None,
}

impl std::fmt::Display for Action {
    /// The name `--json` and the history use.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::String(s)) => f.write_str(&s),
            _ => write!(f, "{self:?}"),
        }
    }
}

/// How a candidate was scored (CKE's sabakan/score.go): `score = (100 - rack_count) * 10 +
/// days_score`, plus 1000 for a HEALTHY machine when choosing one to remove.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scored {
    pub serial: String,
    pub address: String,
    pub role: String,
    pub rack: i64,
    pub state: State,
    /// Selected machines of the same kind already in this rack.
    pub rack_count: i64,
    pub days_score: i64,
    pub score: i64,
}

/// One choice the generator made: what for, which way, the winner and (with `explain`) every
/// candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Choice {
    pub purpose: String,
    /// `highest` (adding) or `lowest` (removing) score wins.
    pub wins: &'static str,
    pub chosen: Option<String>,
    pub candidates: Vec<Scored>,
}

/// The choices in a few words for a log line: what each chose, out of how many candidates.
/// The scores themselves (every candidate's, 8 KB for 16 machines) stay in `--json` and
/// the history.
pub fn choices_summary(choices: &[Choice]) -> String {
    if choices.is_empty() {
        return "none".into();
    }
    choices
        .iter()
        .map(|c| {
            format!(
                "{}: {} of {} candidate(s)",
                c.purpose,
                c.chosen.as_deref().unwrap_or("none"),
                c.candidates.len()
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// What an update (or generate) did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub action: Action,
    pub why: String,
    pub changes: Vec<String>,
    pub choices: Vec<Choice>,
    /// The new node list; `None` when the configuration stays as it is.
    #[serde(skip)]
    pub nodes: Option<Vec<Node>>,
}

/// Why no configuration could be produced. Each needs a person.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    #[error(
        "no healthy machine is available for {what}: {have}; make more machines HEALTHY in sabakan \
         (or widen the query), or lower the constraint"
    )]
    NotAvailable { what: String, have: String },
    #[error(
        "etcd safety: {action} would take {removed} of the {current} control planes ({addresses}) \
         out of the configuration at once, and etcd would lose quorum; {hint}"
    )]
    EtcdSafety {
        action: String,
        current: usize,
        removed: usize,
        addresses: String,
        hint: String,
    },
    /// Not "SN0101 and SN0101 both have the address": sabakan keys machines by serial, so
    /// the input lists one machine twice.
    #[error(
        "machine {serial} is listed twice (a serial names one machine in sabakan): the machines input is not sabakan's answer as it stands; fix or fetch it again"
    )]
    DuplicateSerial { serial: String },
    #[error(
        "machines {first} and {second} both have the address {address} (ipv4[0]); fix one in sabakan"
    )]
    DuplicateAddress {
        address: String,
        first: String,
        second: String,
    },
    #[error(
        "machine {serial}: address {address:?} (ipv4[0]) is not an IP address; fix it in sabakan"
    )]
    BadAddress { serial: String, address: String },
    #[error(
        "the current configuration has no control plane: write one by hand, or start afresh with \
         `autorepair sabakan generate`"
    )]
    NoControlPlane,
    #[error(
        "worker {address} (serial {serial}) has role {role:?}, which no worker template has: add a \
         template with cke.cybozu.com/role: \"{role}\", or remove the node from the configuration"
    )]
    NoTemplateForRole {
        address: String,
        serial: String,
        role: String,
    },
}

/// A new configuration from the machines alone.
pub fn generate(inputs: &Inputs) -> Result<Outcome, Error> {
    let mut g = Gen::new(inputs)?;
    g.change("generate a new configuration".into());
    g.fill()?;
    let nodes = g.render()?;
    Ok(g.outcome(
        Action::Generate,
        format!(
            "no current configuration: {} control plane(s) and {} worker(s) chosen from {} machine(s)",
            g.cps.len(),
            g.workers.len(),
            g.ms.len()
        ),
        Some(nodes),
    ))
}

/// The current configuration maintained: the first applicable action, then filled up to the
/// constraints. `nodes: None` when nothing changes.
pub fn update(inputs: &Inputs, current: &Current) -> Result<Outcome, Error> {
    let mut g = Gen::new(inputs)?;
    let current_cps: Vec<&str> = current
        .nodes
        .iter()
        .filter(|n| n.control_plane)
        .map(|n| n.address.as_str())
        .collect();
    if current_cps.is_empty() {
        return Err(Error::NoControlPlane);
    }
    let mut missing = Vec::new();
    for n in &current.nodes {
        match g.by_addr.get(n.address.as_str()) {
            Some(&i) if n.control_plane => g.add_cp(i),
            Some(&i) => g.add_worker(i),
            None => missing.push(n),
        }
    }

    let (action, why) = if let Some(why) = g.remove_non_existent(&missing) {
        (Action::RemoveNonExistent, why)
    } else if let Some(why) = g.increase_control_plane() {
        (Action::IncreaseControlPlane, why)
    } else if let Some(why) = g.decrease_control_plane(&current_cps)? {
        (Action::DecreaseControlPlane, why)
    } else if let Some(why) = g.replace_control_plane() {
        (Action::ReplaceControlPlane, why)
    } else if let Some(why) = g.increase_worker() {
        (Action::IncreaseWorker, why)
    } else if let Some(why) = g.decrease_worker() {
        (Action::DecreaseWorker, why)
    } else if let Some(why) = g.taint(current) {
        (Action::Taint, why)
    } else {
        let nodes = g.render()?;
        if nodes == current.nodes && same_document(inputs.template, current) {
            return Ok(g.outcome(
                Action::None,
                "the configuration matches the machines, the template and the constraints".into(),
                None,
            ));
        }
        g.change("re-render every node with the template and the machines' fields".into());
        (
            Action::Regenerate,
            "no maintenance action applies, but the template or a machine's fields changed".into(),
        )
    };
    g.fill()?;
    g.check_etcd_safety(action, &current_cps)?;
    let nodes = g.render()?;
    Ok(g.outcome(action, why, Some(nodes)))
}

/// The current document's fields other than `nodes` are the template's.
fn same_document(t: &Template, current: &Current) -> bool {
    let strip = |m: &serde_yaml_ng::Mapping| {
        let mut m = m.clone();
        m.remove("nodes");
        m
    };
    strip(&t.raw) == strip(&current.raw)
}

/// Which selected machines a rack term counts.
#[derive(Clone, Copy)]
enum Pool {
    /// Healthy machines in no node of the configuration.
    Unused,
    /// The configuration's workers.
    Workers,
}

struct Gen<'a> {
    inputs: &'a Inputs<'a>,
    /// Machines with an address, in input order.
    ms: Vec<&'a Machine>,
    days: Vec<i64>,
    tainted: Vec<bool>,
    by_addr: HashMap<&'a str, usize>,
    cps: Vec<usize>,
    workers: Vec<usize>,
    member: Vec<bool>,
    /// Taken out in this update: not chosen again in the same update.
    dropped: Vec<bool>,
    cp_per_rack: HashMap<i64, i64>,
    workers_per_rack: HashMap<i64, i64>,
    workers_per_role_rack: HashMap<(&'a str, i64), i64>,
    workers_per_role: HashMap<&'a str, usize>,
    changes: Vec<String>,
    choices: Vec<Choice>,
}

fn days_score(days: i64) -> i64 {
    let mut s = 0;
    for limit in [250, 500, 1000] {
        s += i64::from(days > limit) - i64::from(days < -limit);
    }
    s
}

impl<'a> Gen<'a> {
    fn new(inputs: &'a Inputs<'a>) -> Result<Gen<'a>, Error> {
        let mut ms = Vec::with_capacity(inputs.machines.len());
        let mut by_addr = HashMap::with_capacity(inputs.machines.len());
        let mut serials = std::collections::HashSet::with_capacity(inputs.machines.len());
        for m in inputs.machines {
            if !serials.insert(m.serial.as_str()) {
                return Err(Error::DuplicateSerial {
                    serial: m.serial.clone(),
                });
            }
            // CKE ignores a machine without an address.
            let Some(addr) = m.address() else { continue };
            if addr.parse::<IpAddr>().is_err() {
                return Err(Error::BadAddress {
                    serial: m.serial.clone(),
                    address: addr.to_owned(),
                });
            }
            if let Some(&other) = by_addr.get(addr) {
                let first: &Machine = ms[other];
                return Err(Error::DuplicateAddress {
                    address: addr.to_owned(),
                    first: first.serial.clone(),
                    second: m.serial.clone(),
                });
            }
            by_addr.insert(addr, ms.len());
            ms.push(m);
        }
        let tolerated = |key: &str| {
            key.starts_with("node.kubernetes.io/")
                || key == render::STATE_TAINT
                || key == "cke.cybozu.com/master"
                || inputs.template.tolerations.iter().any(|t| t == key)
        };
        let tainted = ms
            .iter()
            .map(|m| {
                inputs
                    .nodes
                    .taints
                    .get(m.address().unwrap_or_default())
                    .is_some_and(|ts| ts.iter().any(|t| !tolerated(&t.key)))
            })
            .collect();
        let days = ms
            .iter()
            .map(|m| days_score(m.retire_date.days_from(inputs.now)))
            .collect();
        let n = ms.len();
        Ok(Gen {
            inputs,
            ms,
            days,
            tainted,
            by_addr,
            cps: Vec::new(),
            workers: Vec::new(),
            member: vec![false; n],
            dropped: vec![false; n],
            cp_per_rack: HashMap::new(),
            workers_per_rack: HashMap::new(),
            workers_per_role_rack: HashMap::new(),
            workers_per_role: HashMap::new(),
            changes: Vec::new(),
            choices: Vec::new(),
        })
    }

    fn c(&self) -> Constraints {
        self.inputs.constraints
    }

    fn addr(&self, i: usize) -> &'a str {
        self.ms[i].address().unwrap_or_default()
    }

    fn describe(&self, i: usize) -> String {
        let m = self.ms[i];
        format!("{} (serial {}, {})", self.addr(i), m.serial, m.state)
    }

    fn change(&mut self, s: String) {
        self.changes.push(s);
    }

    // --- membership, with the rack and role counts kept up to date ---

    fn add_cp(&mut self, i: usize) {
        self.cps.push(i);
        self.member[i] = true;
        *self.cp_per_rack.entry(self.ms[i].rack).or_default() += 1;
    }

    fn remove_cp(&mut self, i: usize) {
        self.cps.retain(|&x| x != i);
        self.member[i] = false;
        *self.cp_per_rack.entry(self.ms[i].rack).or_default() -= 1;
    }

    fn add_worker(&mut self, i: usize) {
        self.workers.push(i);
        self.member[i] = true;
        let m = self.ms[i];
        *self.workers_per_rack.entry(m.rack).or_default() += 1;
        *self
            .workers_per_role_rack
            .entry((m.role.as_str(), m.rack))
            .or_default() += 1;
        *self.workers_per_role.entry(m.role.as_str()).or_default() += 1;
    }

    fn remove_worker(&mut self, i: usize) {
        self.workers.retain(|&x| x != i);
        self.member[i] = false;
        let m = self.ms[i];
        *self.workers_per_rack.entry(m.rack).or_default() -= 1;
        *self
            .workers_per_role_rack
            .entry((m.role.as_str(), m.rack))
            .or_default() -= 1;
        *self.workers_per_role.entry(m.role.as_str()).or_default() -= 1;
    }

    fn drop_machine(&mut self, i: usize) {
        self.dropped[i] = true;
    }

    // --- scoring and choosing ---

    fn scored(&self, i: usize, rack_count: i64, removal: bool) -> Scored {
        let m = self.ms[i];
        let health = if removal && m.state == State::Healthy {
            HEALTHY_SCORE
        } else {
            0
        };
        Scored {
            serial: m.serial.clone(),
            address: self.addr(i).to_owned(),
            role: m.role.clone(),
            rack: m.rack,
            state: m.state,
            rack_count,
            days_score: self.days[i],
            score: health + (MAX_PER_RACK - rack_count) * 10 + self.days[i],
        }
    }

    fn score(&self, i: usize, rack_count: i64, removal: bool) -> i64 {
        let health = if removal && self.ms[i].state == State::Healthy {
            HEALTHY_SCORE
        } else {
            0
        };
        health + (MAX_PER_RACK - rack_count) * 10 + self.days[i]
    }

    /// The winner among `candidates` (highest score, or lowest with `removal`); ties go to the
    /// smallest serial, then address. Records the choice.
    fn choose(
        &mut self,
        purpose: String,
        candidates: impl Iterator<Item = usize>,
        rack_count: impl Fn(&Self, usize) -> i64,
        removal: bool,
    ) -> Option<usize> {
        let mut best: Option<(i64, usize)> = None;
        let mut all = Vec::new();
        for i in candidates {
            let rc = rack_count(self, i);
            let s = self.score(i, rc, removal);
            if self.inputs.explain {
                all.push(self.scored(i, rc, removal));
            }
            let better = match best {
                None => true,
                Some((bs, b)) => {
                    let key = |x: usize| (&self.ms[x].serial, self.addr(x));
                    let by_score = if removal { s < bs } else { s > bs };
                    by_score || (s == bs && key(i) < key(b))
                }
            };
            if better {
                best = Some((s, i));
            }
        }
        let chosen = best.map(|(_, i)| i);
        if self.inputs.explain {
            all.sort_by(|a, b| {
                let ord = if removal {
                    a.score.cmp(&b.score)
                } else {
                    b.score.cmp(&a.score)
                };
                ord.then_with(|| (&a.serial, &a.address).cmp(&(&b.serial, &b.address)))
            });
        }
        self.choices.push(Choice {
            purpose,
            wins: if removal { "lowest" } else { "highest" },
            chosen: chosen.map(|i| self.addr(i).to_owned()),
            candidates: all,
        });
        chosen
    }

    fn unused(&self, i: usize) -> bool {
        !self.member[i] && !self.dropped[i] && self.ms[i].state == State::Healthy
    }

    /// A control plane to add from `pool`: HEALTHY, of the control-plane template's role (any
    /// when it has none), not tainted in Kubernetes beyond what is tolerated.
    fn select_cp(&mut self, pool: Pool) -> Option<usize> {
        let role = self.inputs.template.control_plane.role.as_str();
        let ok = |g: &Self, i: usize| {
            let m = g.ms[i];
            m.state == State::Healthy && (role.is_empty() || m.role == role) && !g.tainted[i]
        };
        let candidates: Vec<usize> = match pool {
            Pool::Unused => (0..self.ms.len())
                .filter(|&i| self.unused(i) && ok(self, i))
                .collect(),
            Pool::Workers => self
                .workers
                .iter()
                .copied()
                .filter(|&i| ok(self, i))
                .collect(),
        };
        let purpose = match pool {
            Pool::Unused => "add a control plane (unused machines)",
            Pool::Workers => "promote a worker to control plane",
        };
        self.choose(
            purpose.into(),
            candidates.into_iter(),
            |g, i| g.cp_per_rack.get(&g.ms[i].rack).copied().unwrap_or(0),
            false,
        )
    }

    /// The worker template the next worker is for: the least workers per weight among the
    /// templates that have an unused healthy machine of their role (earlier template on ties).
    ///
    /// The spec filters the candidates (healthy, unused) before preferring a role, so a
    /// template whose role has no candidate left is skipped. CKE's legacy code only skips roles
    /// with no machine at all, and then fails for want of a machine of the exhausted role while
    /// other roles have some; this follows the spec.
    fn worker_template(&self) -> Option<&'a NodeTemplate> {
        let t = self.inputs.template;
        // An early-exit scan per template: cheap while many machines are unused (generating a
        // large cluster), and there are only a few templates.
        let available = |role: &str| {
            (0..self.ms.len())
                .any(|i| self.unused(i) && (role.is_empty() || self.ms[i].role == role))
        };
        let mut best: Option<(f64, &NodeTemplate)> = None;
        for tmpl in &t.workers {
            if !available(&tmpl.role) {
                continue;
            }
            let count = if tmpl.role.is_empty() {
                self.workers.len()
            } else {
                self.workers_per_role
                    .get(tmpl.role.as_str())
                    .copied()
                    .unwrap_or(0)
            };
            let ratio = count as f64 / tmpl.weight;
            if best.is_none_or(|(b, _)| ratio < b) {
                best = Some((ratio, tmpl));
            }
        }
        best.map(|(_, t)| t)
    }

    /// A worker to add: of the next template's role, the best-scored unused healthy machine,
    /// the rack term counting workers of that role.
    fn select_worker(&mut self) -> Option<usize> {
        let tmpl = self.worker_template()?;
        let role = tmpl.role.as_str();
        let candidates: Vec<usize> = (0..self.ms.len())
            .filter(|&i| self.unused(i) && (role.is_empty() || self.ms[i].role == role))
            .collect();
        let purpose = if role.is_empty() {
            "add a worker".to_owned()
        } else {
            format!("add a worker of role {role}")
        };
        self.choose(
            purpose,
            candidates.into_iter(),
            move |g, i| {
                let m = g.ms[i];
                if role.is_empty() {
                    g.workers_per_rack.get(&m.rack).copied().unwrap_or(0)
                } else {
                    g.workers_per_role_rack
                        .get(&(role, m.rack))
                        .copied()
                        .unwrap_or(0)
                }
            },
            false,
        )
    }

    /// The control plane to demote: the lowest removal score.
    fn deselect_cp(&mut self) -> usize {
        let cps = self.cps.clone();
        self.choose(
            "demote a control plane".into(),
            cps.into_iter(),
            |g, i| g.cp_per_rack.get(&g.ms[i].rack).copied().unwrap_or(0),
            true,
        )
        .expect("called with control planes")
    }

    fn under_max(&self) -> bool {
        let max = self.c().maximum_workers;
        max == 0 || self.workers.len() < max
    }

    // --- the actions, in order; each returns why it applies, or None ---

    fn remove_non_existent(&mut self, missing: &[&Node]) -> Option<String> {
        if missing.is_empty() {
            return None;
        }
        for n in missing {
            let kind = if n.control_plane {
                "control plane"
            } else {
                "worker"
            };
            self.change(format!("remove non-existent {kind} {}", n.address));
        }
        let list: Vec<&str> = missing.iter().map(|n| n.address.as_str()).collect();
        Some(format!(
            "{} node(s) of the configuration are not among the machines: {}",
            missing.len(),
            list.join(", ")
        ))
    }

    fn increase_control_plane(&mut self) -> Option<String> {
        let want = self.c().control_plane_count;
        (self.cps.len() < want).then(|| {
            format!(
                "{} control plane(s), control-plane-count is {want}",
                self.cps.len()
            )
        })
    }

    fn decrease_control_plane(&mut self, current_cps: &[&str]) -> Result<Option<String>, Error> {
        let want = self.c().control_plane_count;
        let have = self.cps.len();
        if have <= want {
            return Ok(None);
        }
        // Fewer than half of the current control planes may go in one step.
        let safe = (current_cps.len() - 1) / 2;
        let step = (have - want).min(safe);
        if step == 0 {
            return Err(Error::EtcdSafety {
                action: "decrease control plane".into(),
                current: current_cps.len(),
                removed: 1,
                addresses: "any one of them".into(),
                hint: format!(
                    "control-plane-count {want} cannot be reached from {have} automatically; \
                     demote one by hand once etcd is healthy, or raise control-plane-count"
                ),
            });
        }
        for _ in 0..step {
            let i = self.deselect_cp();
            self.remove_cp(i);
            if self.under_max() {
                self.change(format!(
                    "demote control plane {} to worker",
                    self.describe(i)
                ));
                self.add_worker(i);
            } else {
                self.change(format!(
                    "remove control plane {}: maximum-workers reached",
                    self.describe(i)
                ));
                self.drop_machine(i);
            }
        }
        let partial = if step < have - want {
            format!(" (by {step} now: fewer than half of the control planes may go at once)")
        } else {
            String::new()
        };
        Ok(Some(format!(
            "{have} control planes, control-plane-count is {want}{partial}"
        )))
    }

    fn replace_control_plane(&mut self) -> Option<String> {
        // With a single control plane there is nothing to fall back on.
        if self.cps.len() < 2 {
            return None;
        }
        let bad = self.cps.iter().copied().find(|&i| {
            let st = self.ms[i].state;
            !matches!(st, State::Healthy | State::Updating | State::Uninitialized)
                || self.tainted[i]
        })?;
        let reason = if self.tainted[bad] {
            "has a taint in Kubernetes that control planes do not tolerate".to_owned()
        } else {
            format!("is {}", self.ms[bad].state)
        };
        self.remove_cp(bad);
        if self.under_max() {
            self.change(format!(
                "demote control plane {} to worker",
                self.describe(bad)
            ));
            self.add_worker(bad);
        } else if let Some(p) = self.select_cp(Pool::Workers) {
            self.remove_worker(p);
            self.add_cp(p);
            self.change(format!(
                "promote worker {} to control plane",
                self.describe(p)
            ));
            self.change(format!(
                "demote control plane {} to worker",
                self.describe(bad)
            ));
            self.add_worker(bad);
        } else {
            self.change(format!("remove bad control plane {}", self.describe(bad)));
            self.drop_machine(bad);
        }
        Some(format!("control plane {} {reason}", self.addr(bad)))
    }

    fn increase_worker(&mut self) -> Option<String> {
        let min = self.c().minimum_workers;
        let healthy = self
            .workers
            .iter()
            .filter(|&&i| self.ms[i].state == State::Healthy)
            .count();
        if healthy >= min {
            return None;
        }
        let mut added = 0;
        for _ in healthy..min {
            if !self.under_max() {
                break;
            }
            let Some(i) = self.select_worker() else { break };
            self.add_worker(i);
            self.change(format!("add worker {}", self.describe(i)));
            added += 1;
        }
        (added > 0).then(|| format!("{healthy} healthy worker(s), minimum-workers is {min}"))
    }

    fn decrease_worker(&mut self) -> Option<String> {
        let retired = self.workers.iter().copied().find(|&i| {
            self.ms[i].state == State::Retired && self.ms[i].duration > RETIRED_WAIT_SECONDS
        })?;
        let min = self.c().minimum_workers;
        let replaceable = self.worker_template().is_some();
        if !replaceable && self.workers.len() - 1 < min {
            // Removing it would break minimum-workers with nothing to replace it.
            return None;
        }
        self.remove_worker(retired);
        self.drop_machine(retired);
        self.change(format!("remove retired worker {}", self.describe(retired)));
        Some(format!(
            "worker {} has been RETIRED for {:.0} s (more than {RETIRED_WAIT_SECONDS:.0})",
            self.addr(retired),
            self.ms[retired].duration
        ))
    }

    fn taint(&mut self, current: &Current) -> Option<String> {
        let mut stale = Vec::new();
        for n in &current.nodes {
            let i = self.by_addr[n.address.as_str()];
            if !render::has_valid_state_taint(n, self.ms[i]) {
                stale.push(n.address.clone());
                self.change(format!(
                    "change the {} taint of {}",
                    render::STATE_TAINT,
                    self.describe(i)
                ));
            }
        }
        (!stale.is_empty()).then(|| {
            format!(
                "the state taint of {} does not match the machine's state",
                stale.join(", ")
            )
        })
    }

    // --- filling and the result ---

    /// Control planes up to control-plane-count (unused machines first, then workers beyond
    /// minimum-workers), then workers up to minimum-workers.
    fn fill(&mut self) -> Result<(), Error> {
        let c = self.c();
        while self.cps.len() < c.control_plane_count {
            if let Some(i) = self.select_cp(Pool::Unused) {
                self.add_cp(i);
                self.change(format!("add control plane {}", self.describe(i)));
                continue;
            }
            if self.workers.len() > c.minimum_workers
                && let Some(i) = self.select_cp(Pool::Workers)
            {
                self.remove_worker(i);
                self.add_cp(i);
                self.change(format!(
                    "promote worker {} to control plane",
                    self.describe(i)
                ));
                continue;
            }
            let role = &self.inputs.template.control_plane.role;
            return Err(Error::NotAvailable {
                what: if role.is_empty() {
                    "a control plane".into()
                } else {
                    format!("a control plane of role {role}")
                },
                have: format!(
                    "control-plane-count is {}, the configuration has {} (and {} worker(s), \
                     minimum-workers {})",
                    c.control_plane_count,
                    self.cps.len(),
                    self.workers.len(),
                    c.minimum_workers
                ),
            });
        }
        while self.workers.len() < c.minimum_workers {
            let Some(i) = self.select_worker() else {
                return Err(Error::NotAvailable {
                    what: "a worker".into(),
                    have: format!(
                        "minimum-workers is {}, the configuration has {}",
                        c.minimum_workers,
                        self.workers.len()
                    ),
                });
            };
            self.add_worker(i);
            self.change(format!("add worker {}", self.describe(i)));
        }
        Ok(())
    }

    fn check_etcd_safety(&self, action: Action, current_cps: &[&str]) -> Result<(), Error> {
        let now: HashSet<&str> = self.cps.iter().map(|&i| self.addr(i)).collect();
        let gone: Vec<&str> = current_cps
            .iter()
            .copied()
            .filter(|a| !now.contains(a))
            .collect();
        if gone.len() * 2 < current_cps.len() {
            return Ok(());
        }
        let hint = match action {
            Action::RemoveNonExistent => {
                "bring the machines back into sabakan's answer, or fix the configuration by hand"
            }
            Action::ReplaceControlPlane => {
                "repair the machine, or raise control-plane-count first so a healthy control plane \
                 is added before one is replaced"
            }
            _ => "fix the configuration by hand",
        };
        Err(Error::EtcdSafety {
            action: serde_json::to_value(action)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            current: current_cps.len(),
            removed: gone.len(),
            addresses: gone.join(", "),
            hint: hint.into(),
        })
    }

    fn render(&self) -> Result<Vec<Node>, Error> {
        let t = self.inputs.template;
        let mut nodes = Vec::with_capacity(self.cps.len() + self.workers.len());
        for &i in &self.cps {
            nodes.push(render::node(self.ms[i], &t.control_plane));
        }
        for &i in &self.workers {
            let m = self.ms[i];
            let Some(tmpl) = t.worker_for(&m.role) else {
                return Err(Error::NoTemplateForRole {
                    address: self.addr(i).to_owned(),
                    serial: m.serial.clone(),
                    role: m.role.clone(),
                });
            };
            nodes.push(render::node(m, tmpl));
        }
        Ok(nodes)
    }

    fn outcome(&mut self, action: Action, why: String, nodes: Option<Vec<Node>>) -> Outcome {
        Outcome {
            action,
            why,
            changes: std::mem::take(&mut self.changes),
            choices: std::mem::take(&mut self.choices),
            nodes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_score_steps() {
        let cases = [
            (0, 0),
            (250, 0),
            (251, 1),
            (501, 2),
            (1001, 3),
            (-250, 0),
            (-251, -1),
            (-501, -2),
            (-1001, -3),
            (100_000, 3),
        ];
        for (days, want) in cases {
            assert_eq!(days_score(days), want, "{days}");
        }
    }
}
