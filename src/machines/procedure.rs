//! CKE's repair procedure as a pure function of the snapshot and the clock (CKE's `repairOps` in
//! server/strategy.go and `Repairer` in sabakan/repairer.go; docs/machines.md):
//! which machines need a new entry, which entries take a step this pass, and the transitions
//! of each. The backend carries the transitions out in order; a transition that runs a repair
//! command is recorded in the machine's labels before the command starts.

use super::config::{self, Operation};
use super::entry::{Progress, Status, StepStatus};
use super::snapshot::{Machine, Node, Switch};
use super::{Command, Index, Machines, MachinesLevel, Op, labels, operation_of, pendings};
use crate::engine::family::{self, Health, Need};
use crate::engine::policy::Policy;
use crate::engine::text::rfc3339;
use crate::engine::{Level, ObjectRef};

fn procedure<'s>(index: &Index<'s>, machine_type: &str, operation: &str) -> Option<&'s Operation> {
    index.settings.repair.operation(machine_type, operation)
}

/// An UNREACHABLE machine that is rebooting (its Node cordoned by someone else than
/// autorepair) or out of the cluster waits `wait-seconds-to-repair-rebooting` (strict `<`).
fn reboot_wait(index: &Index<'_>, m: &Machine) -> Option<String> {
    let wait = index.settings.constraints.wait_seconds_to_repair_rebooting as f64;
    if m.info.state != crate::sabakan::State::Unreachable || m.info.duration >= wait {
        return None;
    }
    let why = match index.node(m) {
        None => "it is not a Node of the cluster",
        Some(n) if n.unschedulable && !n.cordoned_by_us => "its Node is cordoned (rebooting)",
        Some(_) => return None,
    };
    Some(format!(
        "UNREACHABLE for {:.0}s and {why}: it waits until wait-seconds-to-repair-rebooting ({wait:.0}s) have passed",
        m.info.duration
    ))
}

/// Whether a machine without an entry would get one, before the cluster limiter.
fn candidate(index: &Index<'_>, pos: usize, m: &Machine) -> bool {
    index.selected.get(pos) == Some(&true)
        && m.address().is_some()
        && matches!(m.entry, Ok(None))
        && reboot_wait(index, m).is_none()
}

/// CKE's cluster limiter: entries recorded (finished and deleted ones too) plus new candidates
/// over `maximum-repair-queue-entries` create nothing at all.
pub(super) fn cluster_hold(index: &Index<'_>) -> Option<String> {
    let machines = &index.snap.machines;
    let entries = machines.iter().filter(|m| m.entry().is_some()).count();
    let new = machines
        .iter()
        .enumerate()
        .filter(|(i, m)| candidate(index, *i, m))
        .count();
    let max = index.settings.constraints.maximum_repair_queue_entries;
    (new > 0 && entries + new > max).then(|| {
        format!(
            "{entries} repair entries recorded + {new} machines to repair > maximum-repair-queue-entries {max}: no entry is created this pass (CKE's cluster limiter); raise the constraint or delete finished entries"
        )
    })
}

/// Why the trigger creates no entry this pass, if it does not: auto-repair disabled, its
/// switch unreadable, or its stored query unreadable (each holds, rule 11).
pub(super) fn auto_repair_hold(index: &Index<'_>) -> Option<String> {
    let snap = index.snap;
    match (&snap.auto_repair, &snap.variables) {
        (Switch::Off, _) => Some(
            "auto-repair is disabled: no entry is created for machines sabakan reports broken until `autorepair auto-repair enable` (`autorepair repair add` still adds one)".into(),
        ),
        (Switch::Unreadable(why), _) => Some(format!(
            "auto-repair's switch cannot be read ({why}): no entry is created for machines sabakan reports broken until `autorepair auto-repair enable` or `disable` sets it"
        )),
        (Switch::On, Some(Err(why))) => Some(format!(
            "auto-repair's stored query cannot be read ({why}): no entry is created for machines sabakan reports broken until `autorepair auto-repair set-variables FILE` stores a good one (or the file is removed)"
        )),
        (Switch::On, _) => None,
    }
}

/// Whether a suspend holds the machine's entry where it stands. Such an entry takes no slot,
/// neither CKE's nor the engine's failure-domain one: it would stall every other repair while
/// it waits. Except while draining: that pass abandons the drain.
pub(super) fn paused(index: &Index<'_>, m: &Machine, p: Progress) -> bool {
    p.step_status != StepStatus::Draining
        && matches!(
            index.policy(m),
            Some(policy) if policy.is_suspended()
        )
}

/// A control plane of the cluster configuration (`nodes:` of the cluster.yml given), else a
/// machine whose Node carries the control-plane role label.
fn control_plane(index: &Index<'_>, m: &Machine) -> bool {
    match &index.settings.repair.control_planes {
        Some(cps) => m.address().is_some_and(|a| cps.contains(a)),
        None => index.node(m).is_some_and(|n| n.control_plane),
    }
}

/// Why CKE's etcd gate holds every repair step this pass (`None`: it does not, or is off).
pub(super) fn etcd_hold(index: &Index<'_>) -> Option<super::etcd::Closed> {
    let read = index.snap.etcd.as_ref()?;
    let cps = index
        .settings
        .repair
        .control_planes
        .clone()
        .unwrap_or_default();
    let unreachable = index
        .snap
        .machines
        .iter()
        .filter(|m| m.info.state == crate::sabakan::model::State::Unreachable)
        .filter_map(|m| m.address().map(str::to_owned))
        .collect();
    super::etcd::judge(
        read,
        &cps,
        &unreachable,
        index.settings.constraints.control_plane_count,
    )
    .err()
}

/// CKE's candidates: unfinished, not deleted, not healthy now, not in drain back-off; processing
/// before queued, control planes first within each, index order; at most
/// `max_concurrent_repairs`, at most one control plane.
pub(super) fn take(index: &Index<'_>) -> Vec<bool> {
    let machines = &index.snap.machines;
    let mut cands: Vec<(bool, bool, u64, usize)> = machines
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let e = m.entry()?;
            let p = e.progress;
            let out = p.status.finished()
                || p.deleted
                || m.healthy == Some(true)
                || paused(index, m, p)
                || (p.step_status == StepStatus::Waiting && p.drain_backoff_expire > index.now);
            (!out).then(|| {
                let cp = control_plane(index, m);
                (p.status != Status::Processing, !cp, e.index, i)
            })
        })
        .collect();
    cands.sort();
    let mut taken = vec![false; machines.len()];
    let (mut n, mut cps) = (0, 0);
    for (_, not_cp, _, i) in cands {
        if n >= index.settings.repair.max_concurrent_repairs {
            break;
        }
        if !not_cp {
            if cps >= 1 {
                continue;
            }
            cps += 1;
        }
        taken[i] = true;
        n += 1;
    }
    taken
}

pub(super) fn health(index: &Index<'_>, pos: usize, m: &Machine) -> Health<MachinesLevel> {
    let state = m.info.state;
    let problem = format!("sabakan reports it {state}");
    let person = |why: String| Health::Broken {
        problem: problem.clone(),
        need: Need::Person(why),
    };
    match &m.entry {
        Err(why) => {
            return Health::Broken {
                problem: format!("its repair entry cannot be read: {why}"),
                need: Need::Person(format!("fix or remove its {} labels", labels::PREFIX)),
            };
        }
        Ok(Some(e)) => {
            if index.selected.get(pos) != Some(&true) {
                return Health::Healthy;
            }
            if let Some((_, p)) = pendings(m).next() {
                return Health::Broken {
                    problem,
                    need: Need::Repair(p.repair),
                };
            }
            return person(format!(
                "repair entry #{} ({}) is still recorded: CKE's per-machine limiter creates no other until it is deleted (`autorepair repair delete {}`)",
                e.index,
                e.progress.status,
                m.address().unwrap_or(&m.serial)
            ));
        }
        Ok(None) => {}
    }
    if index.selected.get(pos) != Some(&true) {
        return Health::Healthy;
    }
    if m.address().is_none() {
        return person(
            "it has no IPv4 address in sabakan: a repair entry is keyed by spec.ipv4[0]".into(),
        );
    }
    if let Some(why) = reboot_wait(index, m) {
        return person(why);
    }
    // The trigger's switch holds what the trigger would start (before its limiter, which
    // CKE does not consult while auto-repair is disabled); a once-off request is a person's,
    // as `repair add` is, and goes on.
    if let Some(why) = auto_repair_hold(index)
        && !pendings(m).any(|(_, p)| p.ops.is_empty())
    {
        return person(why);
    }
    if let Some(why) = &index.cluster_hold {
        return person(why.clone());
    }
    let operation = operation_of(m);
    match procedure(index, &m.info.bmc_type, &operation) {
        None => person(format!(
            "the repair configuration has no operation {operation:?} for machine type {:?}",
            m.info.bmc_type
        )),
        Some(op) => Health::Broken {
            problem,
            need: Need::Repair(index.need(m, op)),
        },
    }
}

/// The level the entry's repair was started with: it caps the steps. `None` when no readable
/// pending repair is left (its label is damaged, or was removed by hand): such an entry runs
/// no step at all, and is neither failed nor finished, until a person mends the label or
/// deletes the entry (rule 11: a mark that cannot be read holds what it governs).
fn cap(m: &Machine, entry_index: u64) -> Option<MachinesLevel> {
    let mut ps: Vec<_> = pendings(m).map(|(_, p)| p).collect();
    ps.sort_by_key(|p| {
        (
            !p.ops.iter::<super::OpId>().any(|id| id.0 == entry_index),
            std::cmp::Reverse(p.since),
        )
    });
    ps.first().map(|p| p.repair)
}

/// Why a step (0-based) beyond the repair's cap fails the entry.
fn beyond_cap(step: usize, cap: MachinesLevel) -> String {
    format!(
        "enoperm: step {} needs {}, more than the {cap} this repair may use",
        step + 1,
        MachinesLevel::step(step + 1).as_str()
    )
}

/// A deterministic jitter in `[0, span)` per machine and back-off count: the planner is pure.
fn jitter(serial: &str, count: u32, span: i64) -> i64 {
    if span <= 0 {
        return 0;
    }
    let h = serial
        .bytes()
        .chain(count.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
    (h % span as u64) as i64
}

/// The entry after a drain that failed or timed out: waiting again, its back-off count one
/// more, retried after CKE's back-off (the planner's and the backend's, when the drain itself
/// refuses).
pub(super) fn backed_off(p: Progress, serial: &str, now: i64) -> Progress {
    let mut q = p.to(Status::Processing, p.step, StepStatus::Waiting, now);
    let next = p.drain_backoff_count.saturating_add(1);
    (q.drain_backoff_count, q.drain_backoff_expire) =
        crate::k8s::drain::backoff(p.drain_backoff_count, now, |bound| {
            jitter(serial, next, bound)
        });
    q
}

fn step_command(s: &config::Step) -> Command {
    Command {
        argv: s.repair_command.clone(),
        timeout: s.command_timeout_seconds,
        retries: s.command_retries,
        interval: s.command_interval,
    }
}

/// One operation of the procedure on a machine.
fn work(m: &Machine, op: Op, reason: String) -> family::Progress<Machines> {
    family::Progress {
        target: Some(m.serial.clone()),
        object: ObjectRef::new(super::snapshot::kind::MACHINE, m.serial.clone()),
        op,
        reason,
    }
}

/// The operations of this pass: each entry's next transition (by the state it is in), then
/// the uncordons of Nodes no entry holds.
pub(super) fn progress(index: &Index<'_>, now: i64) -> Vec<family::Progress<Machines>> {
    let mut out = Vec::new();
    // CKE's etcd gate: no operation of the repair phase at all (not even a dequeue or a
    // finish). The uncordons below come before that phase in CKE, and go on while etcd is
    // healthy; with no healthy etcd, CKE waits for it before anything.
    if index
        .snap
        .etcd
        .as_ref()
        .is_some_and(|r| !super::etcd::healthy(r))
    {
        return out;
    }
    if index.etcd_hold.is_none() {
        for (pos, m) in index.snap.machines.iter().enumerate() {
            out.extend(entry_progress(index, pos, m, now));
        }
    }
    let uncordons = uncordons(index, &out);
    out.extend(uncordons);
    out
}

/// What a machine's entry does this pass: dequeued once deleted, finished once healthy, else
/// its steps go on while it holds a concurrency slot.
fn entry_progress(
    index: &Index<'_>,
    pos: usize,
    m: &Machine,
    now: i64,
) -> Vec<family::Progress<Machines>> {
    let Some(e) = m.entry() else { return vec![] };
    let p = e.progress;
    if p.deleted {
        let op = Op::Dequeue {
            serial: m.serial.clone(),
            marks: pendings(m).map(|(t, _)| t.to_owned()).collect(),
        };
        return vec![work(
            m,
            op,
            format!("repair entry #{} was deleted", e.index),
        )];
    }
    if p.status.finished() {
        return vec![];
    }
    let op = procedure(index, &e.machine_type, &e.operation);
    if m.healthy == Some(true) {
        return vec![finish(m, e.index, p, op, now)];
    }
    if !index.taken[pos] {
        return vec![];
    }
    let Some(op) = op else {
        tracing::warn!(machine = %m.serial, entry = e.index, machine_type = %e.machine_type, operation = %e.operation,
            "no repair operation in the configuration for this entry: skipped (it keeps a concurrency slot, as in CKE)");
        return vec![];
    };
    // A suspend, or a policy lowered since the repair started, holds back every drain and
    // command not yet started, as the engine pauses its own multi-step repairs (docs/design.md,
    // rules 1-2); finishing, dequeuing and uncordoning go on.
    let policy = index.policy(m);
    let Some(started) = cap(m, e.index) else {
        tracing::warn!(machine = %m.serial, entry = e.index,
            "no readable pending label names this repair entry: it runs no step until the label is mended or the entry is deleted (`autorepair repair delete`)");
        return vec![];
    };
    let steps = Steps {
        m,
        entry: e.index,
        steps: &op.repair_steps,
        node: index.node(m),
        address: m.address().unwrap_or_default().to_owned(),
        cap: match policy.and_then(Policy::allowed) {
            Some(now_allowed) => started.min(now_allowed),
            None => started,
        },
        enabled: index.snap.queue.on(),
        suspended: policy.is_some_and(Policy::is_suspended),
        evict_timeout: index.settings.repair.eviction_timeout_seconds,
        now,
    };
    let mut out = Vec::new();
    let mut p = p;
    // A watch that is over moves the entry to its next step, which may start in the same pass.
    loop {
        match p.step_status {
            StepStatus::Waiting => {
                out.extend(steps.waiting(p));
                return out;
            }
            StepStatus::Draining => {
                out.extend(steps.draining(p));
                return out;
            }
            StepStatus::Watching => match steps.watched(p) {
                Some((next, recorded)) => {
                    out.push(recorded);
                    p = next;
                }
                None => return out,
            },
        }
    }
}

/// A healthy machine's entry succeeds: through the operation's success command when it has one.
fn finish(
    m: &Machine,
    entry: u64,
    p: Progress,
    op: Option<&Operation>,
    now: i64,
) -> family::Progress<Machines> {
    let serial = m.serial.clone();
    let done = p.to(Status::Succeeded, p.step, p.step_status, now);
    let success = op.map(|o| &o.success_command).filter(|c| !c.is_empty());
    let op = match success {
        Some(argv) => Op::Run {
            serial,
            address: m.address().unwrap_or_default().to_owned(),
            what: "the success command".into(),
            command: Command {
                argv: argv.clone(),
                timeout: op.map_or(30, |o| o.success_command_timeout),
                retries: 0,
                interval: 0,
            },
            before: None,
            after_ok: Some(done),
            after_failure: p.to(Status::Failed, p.step, p.step_status, now),
        },
        None => Op::Record {
            serial,
            progress: done,
            why: "the health check says healthy".into(),
        },
    };
    work(
        m,
        op,
        format!("repair entry #{entry}: the machine is healthy"),
    )
}

/// An unhealthy machine's entry and what its steps may do this pass.
struct Steps<'a> {
    m: &'a Machine,
    entry: u64,
    steps: &'a [config::Step],
    node: Option<&'a Node>,
    address: String,
    /// The highest level the repair may still use: the one it started with, or the policy's
    /// now if lowered since.
    cap: MachinesLevel,
    /// The repair queue is enabled.
    enabled: bool,
    suspended: bool,
    evict_timeout: i64,
    now: i64,
}

impl Steps<'_> {
    fn work(&self, op: Op, reason: String) -> family::Progress<Machines> {
        work(self.m, op, reason)
    }

    /// The entry fails where it stands, saying why.
    fn fail(&self, p: Progress, why: String) -> family::Progress<Machines> {
        let op = Op::Record {
            serial: self.m.serial.clone(),
            progress: p.to(Status::Failed, p.step, p.step_status, self.now),
            why: why.clone(),
        };
        self.work(op, format!("repair entry #{}: {why}", self.entry))
    }

    /// The step's repair command, recorded as watched before it runs.
    fn run(&self, p: Progress) -> family::Progress<Machines> {
        let now = self.now;
        let op = Op::Run {
            serial: self.m.serial.clone(),
            address: self.address.clone(),
            what: format!("step {} repair command", p.step + 1),
            command: step_command(&self.steps[p.step]),
            before: Some(p.to(Status::Processing, p.step, StepStatus::Watching, now)),
            after_ok: None,
            after_failure: p.to(Status::Failed, p.step, StepStatus::Watching, now),
        };
        let reason = format!(
            "repair entry #{}: step {} (recorded before the command runs; never run twice)",
            self.entry,
            p.step + 1
        );
        self.work(op, reason)
    }

    /// The drain is abandoned for now, and retried after a back-off.
    fn back_off(&self, p: Progress, why: &str) -> family::Progress<Machines> {
        let q = backed_off(p, &self.m.serial, self.now);
        let op = Op::Record {
            serial: self.m.serial.clone(),
            progress: q,
            why: format!(
                "{why}; drain retried after {}",
                rfc3339(q.drain_backoff_expire)
            ),
        };
        self.work(op, format!("repair entry #{}: drain abandoned", self.entry))
    }

    /// A step waiting to start: it drains its Node first if it needs to, else runs.
    fn waiting(&self, p: Progress) -> Option<family::Progress<Machines>> {
        if p.step >= self.steps.len() {
            let why = format!(
                "still unhealthy after the last of its {} steps",
                self.steps.len()
            );
            return Some(self.fail(p, why));
        }
        if p.step >= self.cap.steps() {
            return Some(self.fail(p, beyond_cap(p.step, self.cap)));
        }
        if !self.enabled || self.suspended || p.drain_backoff_expire > self.now {
            return None;
        }
        let Some(n) = self.node.filter(|_| self.steps[p.step].need_drain) else {
            return Some(self.run(p));
        };
        let op = Op::Drain {
            serial: self.m.serial.clone(),
            node: n.name.clone(),
            progress: Some(p.to(Status::Processing, p.step, StepStatus::Draining, self.now)),
        };
        let reason = format!(
            "repair entry #{}: step {} needs a drain",
            self.entry,
            p.step + 1
        );
        Some(self.work(op, reason))
    }

    /// A step whose Node drains: the command runs once it is drained; the drain is given up
    /// (and retried later) when the queue is disabled, the machine suspended or the eviction
    /// timeout passed.
    fn draining(&self, p: Progress) -> Option<family::Progress<Machines>> {
        // Drained means cordoned too: a Node someone uncordoned since (a reboot tool ending
        // its own cordon, which autorepair did not claim) is drained again, never repaired
        // schedulable.
        let drained = self.node.is_none_or(|n| n.unschedulable && n.pods == 0);
        if p.step >= self.cap.steps() {
            // The policy was lowered while the step drained: its command must not run.
            return Some(self.fail(p, beyond_cap(p.step, self.cap)));
        }
        if !self.enabled {
            return Some(self.back_off(p, "the repair queue is disabled"));
        }
        if self.suspended {
            return Some(self.back_off(p, "the machine or its scope is suspended"));
        }
        if drained {
            return Some(self.run(p));
        }
        if p.last_transition + self.evict_timeout < self.now {
            return Some(self.back_off(p, "eviction_timeout_seconds passed"));
        }
        let n = self.node?;
        let op = Op::Drain {
            serial: self.m.serial.clone(),
            node: n.name.clone(),
            progress: None,
        };
        let reason = format!(
            "repair entry #{}: {} pods left to evict",
            self.entry, n.pods
        );
        Some(self.work(op, reason))
    }

    /// A step whose command ran: once its watch is over and the machine is still unhealthy,
    /// the entry moves to the next step (returned, with the write that records it).
    fn watched(&self, p: Progress) -> Option<(Progress, family::Progress<Machines>)> {
        let watch = self
            .steps
            .get(p.step)
            .and_then(|s| s.watch_seconds)
            .unwrap_or(0) as i64;
        if watch != 0 && p.last_transition + watch > self.now {
            return None;
        }
        let next = p.to(
            Status::Processing,
            p.step + 1,
            StepStatus::Waiting,
            self.now,
        );
        let op = Op::Record {
            serial: self.m.serial.clone(),
            progress: next,
            why: format!("watch of step {} over, still unhealthy", next.step),
        };
        let reason = format!(
            "repair entry #{}: step {}'s command ran (at most once) and the machine is still unhealthy",
            self.entry, next.step
        );
        Some((next, self.work(op, reason)))
    }
}

/// Uncordon what autorepair cordoned, unless an entry still drains or watches it, or starts
/// draining it this pass (`planned`: a pass that died between recording a step's end and its
/// drain leaves the entry waiting on its own cordon).
fn uncordons(
    index: &Index<'_>,
    planned: &[family::Progress<Machines>],
) -> Vec<family::Progress<Machines>> {
    let draining: Vec<&str> = planned
        .iter()
        .filter_map(|w| match &w.op {
            Op::Drain { node, .. } => Some(node.as_str()),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for n in &index.snap.nodes {
        if !n.cordoned_by_us || draining.contains(&n.name.as_str()) {
            continue;
        }
        let holding = index.snap.machines.iter().find(|m| {
            m.address().is_some_and(|a| n.is(a))
                && m.entry().is_some_and(|e| {
                    let p = e.progress;
                    p.status == Status::Processing
                        && !p.deleted
                        && matches!(p.step_status, StepStatus::Draining | StepStatus::Watching)
                })
        });
        if holding.is_some() {
            continue;
        }
        let owner = index
            .snap
            .machines
            .iter()
            .find(|m| m.address().is_some_and(|a| n.is(a)));
        out.push(family::Progress {
            target: owner.map(|m| m.serial.clone()),
            object: owner.map_or_else(
                || ObjectRef::new("node", n.name.clone()),
                |m| ObjectRef::new(super::snapshot::kind::MACHINE, m.serial.clone()),
            ),
            op: Op::Uncordon {
                node: n.name.clone(),
            },
            reason: "no repair entry drains or watches it any more".into(),
        });
    }
    out
}
