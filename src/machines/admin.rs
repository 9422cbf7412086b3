//! `autorepair repair …`: ckecli's repair-queue verbs (facts §6) on the machines' labels.

use super::config::Repair;
use super::entry::{Entry, Progress, Status};
use super::file::MachinesFile;
use super::labels::{self, CLUSTER_PREFIX, ENTRY, PROGRESS};
use super::snapshot::{Snapshot, kind};
use super::{Labels, OpId, Reach};
use crate::engine::marks::Codec;
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

/// Which entries `repair delete` marks deleted.
pub enum Which {
    Address(String),
    Finished,
    Unfinished,
}

fn error(message: String) -> BackendError {
    BackendError::Api(message)
}

/// `repair add OPERATION MACHINE_TYPE ADDRESS`: an entry started by a person, with the repair
/// that owns it (allowed every step of the operation, as a request is).
pub fn add(
    file: &mut MachinesFile,
    repair: &Repair,
    operation: &str,
    machine_type: &str,
    address: &str,
    now: i64,
) -> Result<u64, BackendError> {
    let op = repair.operation(machine_type, operation).ok_or_else(|| {
        error(format!(
            "the repair configuration has no operation {operation:?} for machine type {machine_type:?}: check `repair_procedures`"
        ))
    })?;
    let snap = file.snapshot()?;
    let m = snap
        .machines
        .iter()
        .find(|m| m.address() == Some(address))
        .ok_or_else(|| {
            error(format!(
                "no machine has the address {address} (spec.ipv4[0])"
            ))
        })?;
    if let Some(e) = m.entry() {
        return Err(error(format!(
            "machine {} ({address}) already has repair entry #{} ({}): `autorepair repair delete {address}` first",
            m.serial, e.index, e.progress.status
        )));
    }
    let serial = m.serial.clone();
    let index = file.take_index()?;
    let value = Entry::value(index, operation, machine_type).map_err(error)?;
    let id = uuid::Uuid::new_v4().to_string();
    let pending = Labels::render_pending(
        Reach::for_steps(op.repair_steps.len()),
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

/// Marks entries deleted; the next pass removes them (and uncordons their Nodes). Returns how
/// many.
pub fn delete(file: &mut MachinesFile, which: &Which) -> Result<usize, BackendError> {
    let snap = file.snapshot()?;
    let mut n = 0;
    for m in &snap.machines {
        let Some(e) = m.entry() else { continue };
        let hit = match which {
            Which::Address(a) => m.address() == Some(a.as_str()),
            Which::Finished => e.progress.status.finished(),
            Which::Unfinished => !e.progress.status.finished(),
        };
        if hit && !e.progress.deleted {
            let p = Progress {
                deleted: true,
                ..e.progress
            };
            file.set(&m.serial, PROGRESS, Some(&p.value()))?;
            n += 1;
        }
    }
    if let (Which::Address(a), 0) = (which, n) {
        return Err(error(format!("no repair entry for address {a}")));
    }
    file.flush()?;
    Ok(n)
}

/// Clears every entry's drain back-off.
pub fn reset_backoff(file: &mut MachinesFile) -> Result<usize, BackendError> {
    let snap = file.snapshot()?;
    let mut n = 0;
    for m in &snap.machines {
        let Some(e) = m.entry() else { continue };
        let p = Progress {
            drain_backoff_count: 0,
            drain_backoff_expire: 0,
            ..e.progress
        };
        file.set(&m.serial, PROGRESS, Some(&p.value()))?;
        n += 1;
    }
    file.flush()?;
    Ok(n)
}

/// `repair enable|disable`: the queue switch on the cluster's holder.
pub fn enable(file: &mut MachinesFile, on: bool) -> Result<(), BackendError> {
    let holder = file.holder(&ObjectRef::singleton(kind::CLUSTER))?;
    let name = format!("{CLUSTER_PREFIX}queue");
    file.set(&holder, &name, (!on).then_some("disabled"))?;
    file.flush()
}
