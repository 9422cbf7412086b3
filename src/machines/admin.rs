//! `autorepair repair …`: ckecli's repair-queue verbs (CKE's pkg/ckecli/cmd/repair_queue_*.go) on
//! the machines' labels.

use super::config::Repair;
use super::document::Document;
use super::entry::{Entry, Progress, Status};
use super::labels::{self, CLUSTER_PREFIX, ENTRY, PROGRESS};
use super::snapshot::{Snapshot, kind};
use super::{Labels, MachinesLevel, OpId};
use crate::engine::marks::{Codec, Mark, RepairResult};
use crate::engine::text::rfc3339;
use crate::engine::{Backend, BackendError, ObjectRef};
use serde::Serialize;

/// CKE's `RepairQueueEntry`, as `ckecli repair-queue list` prints it (times in RFC 3339, as Go
/// marshals them; `index` a string).
#[derive(Debug, Serialize)]
pub struct Row {
    pub index: String,
    pub address: String,
    pub nodename: String,
    pub serial: String,
    pub machine_type: String,
    pub operation: String,
    pub status: Status,
    pub step: usize,
    pub step_status: &'static str,
    pub deleted: bool,
    pub last_transition_time: String,
    pub drain_backoff_count: u32,
    pub drain_backoff_expire: String,
}

fn time(epoch: i64) -> String {
    if epoch <= 0 {
        "0001-01-01T00:00:00Z".into()
    } else {
        rfc3339(epoch)
    }
}

/// Every entry, in index order.
pub fn rows(snap: &Snapshot) -> Vec<Row> {
    let mut rows: Vec<Row> = snap
        .machines
        .iter()
        .filter_map(|m| {
            let e = m.entry()?;
            let address = m.address().unwrap_or_default().to_owned();
            let node = snap.nodes.iter().find(|n| n.is(&address));
            let p = e.progress;
            Some(Row {
                index: e.index.to_string(),
                nodename: node.map(|n| n.name.clone()).unwrap_or_default(),
                address,
                serial: m.serial.clone(),
                machine_type: e.machine_type.clone(),
                operation: e.operation.clone(),
                status: p.status,
                step: p.step,
                step_status: p.step_status.as_str(),
                deleted: p.deleted,
                last_transition_time: time(p.last_transition),
                drain_backoff_count: p.drain_backoff_count,
                drain_backoff_expire: time(p.drain_backoff_expire),
            })
        })
        .collect();
    rows.sort_by_key(|r| r.index.parse::<u64>().unwrap_or(0));
    rows
}

/// A repair entry whose labels cannot be read: it holds its machine (no new entry is made
/// beside it, no step runs) until a person mends or deletes it.
#[derive(Debug, PartialEq, Eq)]
pub struct Damaged {
    pub serial: String,
    pub address: Option<String>,
    pub why: String,
}

impl std::fmt::Display for Damaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.address {
            Some(a) => write!(
                f,
                "machine {} ({a}): its repair entry cannot be read: {}; mend its labels or `autorepair repair delete {a}`",
                self.serial, self.why
            ),
            None => write!(
                f,
                "machine {} (no address): its repair entry cannot be read: {}; mend its labels by hand",
                self.serial, self.why
            ),
        }
    }
}

/// Every damaged entry, in the fleet's order.
pub fn damaged(snap: &Snapshot) -> Vec<Damaged> {
    snap.machines
        .iter()
        .filter_map(|m| {
            let why = m.entry.as_ref().err()?;
            Some(Damaged {
                serial: m.serial.clone(),
                address: m.address().map(str::to_owned),
                why: why.to_string(),
            })
        })
        .collect()
}

/// Which entries `repair delete` marks deleted.
pub enum Which {
    /// An entry's index (ckecli's `delete INDEX`).
    Index(u64),
    Address(String),
    Finished,
    Unfinished,
}

fn error(message: String) -> BackendError {
    BackendError::Api(message)
}

/// Why a repair verb did nothing: what the person asked does not fit the fleet (an operation
/// the configuration lacks, an address no machine has, no entry to delete), or the fleet could
/// not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum VerbError {
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Backend(#[from] BackendError),
}

impl Which {
    /// `INDEX|ADDRESS` as given to `repair delete`: digits are an index, as ckecli reads them
    /// (an IPv4 address has dots).
    pub fn named(given: &str) -> Which {
        match given.parse() {
            Ok(index) if given.bytes().all(|b| b.is_ascii_digit()) => Which::Index(index),
            _ => Which::Address(given.to_owned()),
        }
    }
}

/// `repair add OPERATION MACHINE_TYPE ADDRESS [SERIAL]`: an entry started by a person, with the
/// repair that owns it (allowed every step of the operation, as a request is). A serial given
/// must be the one of the machine at the address.
pub fn add(
    file: &mut Document,
    repair: &Repair,
    operation: &str,
    machine_type: &str,
    address: &str,
    serial: Option<&str>,
    now: i64,
) -> Result<u64, VerbError> {
    let op = repair.operation(machine_type, operation).ok_or_else(|| {
        VerbError::Refused(format!(
            "the repair configuration has no operation {operation:?} for machine type {machine_type:?}: check `repair_procedures`"
        ))
    })?;
    let snap = file.snapshot()?;
    let m = snap
        .machines
        .iter()
        .find(|m| m.address() == Some(address))
        .ok_or_else(|| {
            VerbError::Refused(format!(
                "no machine has the address {address} (spec.ipv4[0])"
            ))
        })?;
    if let Some(given) = serial.filter(|s| *s != m.serial) {
        return Err(VerbError::Refused(format!(
            "the machine with the address {address} is {}, not {given}: check the serial and the address",
            m.serial
        )));
    }
    if let Some(e) = m.entry() {
        return Err(VerbError::Refused(format!(
            "machine {} ({address}) already has repair entry #{} ({}): `autorepair repair delete {}` first",
            m.serial, e.index, e.progress.status, e.index
        )));
    }
    let serial = m.serial.clone();
    let index = file.take_index()?;
    let value = Entry::value(index, operation, machine_type).map_err(|e| error(e.to_string()))?;
    let id = uuid::Uuid::new_v4().to_string();
    let pending = Labels::render_pending(
        MachinesLevel::for_steps(op.repair_steps.len()),
        &id,
        now,
        &[OpId(index)],
    )
    .map_err(|e| error(e.to_string()))?;
    file.set(&serial, ENTRY, Some(&value))?;
    file.set(&serial, PROGRESS, Some(&Progress::queued(now).value()))?;
    let (name, v) = labels::split(&pending);
    file.set(&serial, name, Some(v))?;
    file.flush()?;
    Ok(index)
}

/// What `repair delete` did: the entries it marked deleted, and those it found marked already
/// (the next pass has not removed them yet), as `#index (address)`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Deleted {
    pub marked: Vec<String>,
    pub already: Vec<String>,
    /// Damaged entries, removed at once: they have no progress to mark.
    pub removed: Vec<String>,
}

fn named(index: u64, address: Option<&str>) -> String {
    format!("#{index} ({})", address.unwrap_or("no address"))
}

/// Marks entries deleted; the next pass removes them (and uncordons their Nodes). A damaged
/// entry at the address given has no progress to mark: its entry and progress labels are
/// removed at once (its repair's pending label stays, for the next pass to judge).
pub fn delete(file: &mut Document, which: &Which) -> Result<Deleted, VerbError> {
    let snap = file.snapshot()?;
    let mut done = Deleted::default();
    if let Which::Address(a) = which {
        for m in snap
            .machines
            .iter()
            .filter(|m| m.address() == Some(a.as_str()))
        {
            if m.entry.is_err() {
                file.set(&m.serial, ENTRY, None)?;
                file.set(&m.serial, PROGRESS, None)?;
                done.removed
                    .push(format!("the damaged entry of machine {} ({a})", m.serial));
            }
        }
    }
    for m in &snap.machines {
        let Some(e) = m.entry() else { continue };
        let hit = match which {
            Which::Index(i) => e.index == *i,
            Which::Address(a) => m.address() == Some(a.as_str()),
            Which::Finished => e.progress.status.finished(),
            Which::Unfinished => !e.progress.status.finished(),
        };
        if !hit {
            continue;
        }
        if e.progress.deleted {
            done.already.push(named(e.index, m.address()));
            continue;
        }
        let p = Progress {
            deleted: true,
            ..e.progress
        };
        file.set(&m.serial, PROGRESS, Some(&p.value()))?;
        done.marked.push(named(e.index, m.address()));
        // Deleting a failed entry is how a CKE operator has the machine repaired again (CKE
        // enqueues anew): the failure result that names the entry goes with it, by this
        // person's hand, or it would park the machine until `clear` as well. (The watcher
        // itself never removes a failure result.)
        if e.progress.status == Status::Failed {
            for mark in &m.marks {
                let names_entry = matches!(Labels::parse(mark), Ok(Mark::Result(r))
                    if r.result == RepairResult::Failure
                        && r.ops.iter::<OpId>().any(|id| id.0 == e.index));
                if names_entry {
                    let (name, _) = labels::split(mark);
                    file.set(&m.serial, name, None)?;
                }
            }
        }
    }
    if done == Deleted::default() {
        let none = match which {
            Which::Index(i) => format!("no repair entry #{i}"),
            Which::Address(a) => format!("no repair entry for address {a}"),
            Which::Finished | Which::Unfinished => String::new(),
        };
        if !none.is_empty() {
            return Err(VerbError::Refused(format!(
                "{none}: `autorepair repair list` shows the entries"
            )));
        }
    }
    file.flush()?;
    Ok(done)
}

/// Clears the drain back-off of the entries it can still hold back: unfinished, not deleted,
/// with a back-off count or expiry. A finished entry's count is what happened, and means
/// nothing any more (ckecli zeroes it too). Returns the entries cleared, as `#index (address)`.
pub fn reset_backoff(file: &mut Document) -> Result<Vec<String>, BackendError> {
    let snap = file.snapshot()?;
    let mut cleared = Vec::new();
    for m in &snap.machines {
        let Some(e) = m.entry() else { continue };
        let p = e.progress;
        let backed_off = p.drain_backoff_count > 0 || p.drain_backoff_expire > 0;
        if p.status.finished() || p.deleted || !backed_off {
            continue;
        }
        let p = Progress {
            drain_backoff_count: 0,
            drain_backoff_expire: 0,
            ..p
        };
        file.set(&m.serial, PROGRESS, Some(&p.value()))?;
        cleared.push(named(e.index, m.address()));
    }
    file.flush()?;
    Ok(cleared)
}

/// `repair list` for people: CKE's columns, aligned.
pub fn table(rows: &[Row]) -> String {
    let header = [
        "INDEX",
        "ADDRESS",
        "NODENAME",
        "TYPE",
        "OPERATION",
        "STATUS",
        "STEP",
        "STEP_STATUS",
        "DELETED",
        "LAST_TRANSITION",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.index.clone(),
                r.address.clone(),
                if r.nodename.is_empty() {
                    "-".into()
                } else {
                    r.nodename.clone()
                },
                r.machine_type.clone(),
                r.operation.clone(),
                r.status.to_string(),
                r.step.to_string(),
                r.step_status.to_owned(),
                r.deleted.to_string(),
                r.last_transition_time.clone(),
            ]
        })
        .collect();
    crate::report::table(&header, &cells)
}

/// The entries a `repair wait` still waits for: the unfinished ones, marked deleted or not (a
/// pass removes a deleted one). A finished entry's work is over, removed or not.
pub fn unfinished(snap: &Snapshot) -> Vec<String> {
    snap.machines
        .iter()
        .filter_map(|m| {
            let e = m.entry()?;
            (!e.progress.status.finished()).then(|| {
                format!(
                    "#{} ({}, {}{})",
                    e.index,
                    m.address().unwrap_or("no address"),
                    e.progress.status,
                    if e.progress.deleted { ", deleted" } else { "" }
                )
            })
        })
        .collect()
}

/// `repair enable|disable` ([`labels::QUEUE`]), `auto-repair enable|disable`
/// ([`labels::AUTO_REPAIR`]): a switch of the cluster's. Disabling sets it on the cluster's
/// holder; enabling removes every copy, wherever it is: one left on a former holder (another
/// machine became the holder since) still holds, and would outlive the `enable`.
pub fn switch(file: &mut Document, name: &str, on: bool) -> Result<(), BackendError> {
    let rest = name.strip_prefix(labels::PREFIX).unwrap_or(name);
    let stored = format!("{CLUSTER_PREFIX}{rest}");
    if on {
        file.remove_everywhere(&stored)?;
    } else {
        let holder = file.holder(&ObjectRef::singleton(kind::CLUSTER))?;
        file.set(&holder, &stored, Some("disabled"))?;
    }
    file.flush()
}
