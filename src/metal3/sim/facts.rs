//! The oracle's facts about a machine, read from the snapshot with this world's own code:
//! its zone, its host, its repairs and where its remediation stands.

use super::*;

/// The Machine's zone: its failure domain, else its Node's zone label.
pub(super) fn zone<'f>(fleet: &'f Snapshot, m: &'f Machine) -> &'f str {
    m.failure_domain
        .as_deref()
        .or_else(|| {
            let name = m.node_ref.as_deref()?;
            fleet.nodes.iter().find(|n| n.name == name)?.zone.as_deref()
        })
        .unwrap_or("")
}

pub(super) fn host_of<'f>(fleet: &'f Snapshot, m: &Machine) -> Option<&'f Host> {
    let key = m.host.as_deref()?;
    fleet.hosts.iter().find(|h| h.key == key)
}

pub(super) fn pendings(m: &Machine) -> impl Iterator<Item = Pending<'_, Metal3Level>> {
    m.marks.iter().filter_map(|t| match Annotations::parse(t) {
        Ok(Mark::Pending(p)) => Some(p),
        _ => None,
    })
}

/// A repair of autorepair's is under way on the Machine: a pending mark, or its reboot key on
/// the host.
pub(super) fn under_remediation(m: &Machine, host: Option<&Host>) -> bool {
    pendings(m).next().is_some() || host.is_some_and(|h| h.reboot.is_some())
}

/// A power cycle of autorepair's is recorded as under way on the Machine.
pub(super) fn cycling(m: &Machine) -> bool {
    pendings(m).any(|p| p.ops.iter::<OpId>().any(|id| id.step == Step::PowerCycle))
}

pub(super) fn level_of(op: &Op) -> Metal3Level {
    match op {
        // A report changes nothing but a remediation object's status: the least level.
        Op::Drain { .. } | Op::ReportRemediation { .. } | Op::AnswerRequest { .. } => {
            Metal3Level::Drain
        }
        // Its owner replaces the Machine: what a reprovisioning does.
        Op::DeleteMachine { .. } | Op::HandOver { .. } | Op::MarkHostUnhealthy { .. } => {
            Metal3Level::Reprovision
        }
        Op::PowerOff { .. }
        | Op::DeleteNode { .. }
        | Op::ClearRequest { .. }
        | Op::PowerOn { .. }
        | Op::RestoreNode { .. }
        | Op::TaintNode { .. }
        | Op::UntaintNode { .. } => Metal3Level::PowerCycle,
    }
}

pub(super) fn run_of(state: OpState) -> OpRun {
    match state {
        OpState::Running => OpRun::Running,
        OpState::Paused => OpRun::Paused,
        OpState::Succeeded => OpRun::Succeeded,
        OpState::Failed | OpState::LacksResources => OpRun::Failed,
        OpState::Unknown => OpRun::Unknown,
    }
}
