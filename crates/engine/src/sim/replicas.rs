//! Several watchers against one fleet, as production runs them: each replica asks the
//! coordination its family's users run (a lease, a cluster's master role) whether it
//! may act, before a pass and before every write. The engine drives them on a clock of its own
//! (seconds, within a pass): writes take time, the coordination's rounds run meanwhile, and the
//! acting replica can be killed, paused past its lease or cut off from the coordination
//! mid-pass, after which another replica takes over within the same pass. The family brings the
//! model of its coordination ([`Coordination`]), whose check before a write is production's
//! own code; the oracle asks the model who truly held the coordination at each write.

use crate::backend::{Applied, Backend, BackendError, Interceptor, Write, WriteGuard};
use crate::family::Family;
use crate::object::ObjectRef;
use std::collections::VecDeque;

/// How long one write takes on the simulated clock: a pass with many writes outlasts a renew
/// deadline, so a replica cut off from the coordination runs out of leadership mid-pass.
pub const WRITE_SECONDS: i64 = 1;
/// How long a paused replica (SIGSTOP, a VM frozen) stays stopped: longer than any lease.
pub const PAUSE_SECONDS: i64 = 45;
/// How long after the acting replica stopped the others are given to take over in the pass.
pub const TAKEOVER_SECONDS: i64 = 60;

/// How many watchers run against the fleet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replicas {
    /// 1: the single watcher of old; more: replicas coordinated by the family's model.
    pub count: usize,
    /// For the oracle's own test only: the replicas write without asking the coordination
    /// (a broken guard), which the oracle must catch.
    pub unguarded: bool,
}

impl Default for Replicas {
    fn default() -> Self {
        Replicas {
            count: 1,
            unguarded: false,
        }
    }
}

/// The coordination between a family's replicas, as a model on the simulated clock `at`
/// (seconds). Replicas are numbered from 0.
pub trait Coordination {
    /// How replica `r` is called in the logs (its identity, its node).
    fn name(&self, r: usize) -> String;
    /// Time passes until `at`: every running replica does its rounds (renewals, reading
    /// its node's configuration); a paused one does nothing, a cut-off one fails them.
    fn run_until(&mut self, at: i64);
    /// The replicas that would start a pass now (running, and leading by their own check).
    fn acting(&self, at: i64) -> Vec<usize>;
    /// What a pass that `r` plans now carries into its checks (the leadership term).
    fn term(&self, r: usize) -> u64;
    /// Production's check before a write of replica `r`, for a pass planned in `term`: the
    /// error production's write guard returns when it may not write (normally
    /// [`BackendError::Halted`]).
    fn check(&self, r: usize, term: u64, at: i64) -> Result<(), BackendError>;
    /// The oracle's truth, from the coordination service's own record: whether `r` holds
    /// the coordination at `at`; else who or what does.
    fn truth(&self, r: usize, at: i64) -> Result<(), NotHeld>;
    /// The replica's process is killed (SIGKILL): it stops at once and forgets everything.
    fn kill(&mut self, r: usize, at: i64);
    /// The replica stops (SIGSTOP) without knowing it, until [`Self::thaw`].
    fn freeze(&mut self, r: usize, at: i64);
    fn thaw(&mut self, r: usize, at: i64);
    /// The replica can no longer reach the coordination (it still reaches the fleet).
    fn cut(&mut self, r: usize, at: i64);
    /// The leading replica hands over cleanly (SIGTERM gives the Lease up; an admin fails the
    /// master role over to another node). Whether anything changed.
    fn hand_over(&mut self, r: usize, at: i64) -> bool;
    /// A new pass: killed replicas have been started again, cut-off ones reconnected.
    fn restart(&mut self, at: i64);
}

/// Why a replica did not hold the coordination at a write, by the coordination service's own
/// record: the oracle's finding, which the report says after "while". `record` and `role` are
/// the family's words for what it coordinates by ("the Lease", "the cluster's master").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotHeld {
    /// The record (a lease) names another replica as its holder.
    #[error("{record} names {holder} as its holder")]
    HeldByAnother {
        record: &'static str,
        holder: String,
    },
    /// The record names nobody: it was given up, or never taken.
    #[error("{record} names no holder")]
    NoHolder { record: &'static str },
    /// The record still names this replica, but it last renewed it `ago` seconds ago, past
    /// the renew deadline: the others may be about to take it.
    #[error("its last renewal of {record} was {ago} s ago, past the renew deadline")]
    Lapsed { record: &'static str, ago: i64 },
    /// The role (a cluster's master) is another's, by the coordination's own account.
    #[error("{holder} is {role}")]
    RoleOfAnother { role: &'static str, holder: String },
}

/// What a write returned, for a resumed pass to replay instead of writing again.
type Outcome<F> = Result<Option<<F as Family>::OpId>, String>;

/// A backend that answers the writes a paused pass already made with what they returned then
/// (the executor is deterministic, so it takes the same path) and passes the others on,
/// recording what they return: a pass resumed after a pause carries on where it stopped.
pub(super) struct Replay<B, F: Family> {
    pub inner: B,
    pub script: VecDeque<Outcome<F>>,
    pub made: Vec<Outcome<F>>,
}

impl<B, F: Family> Replay<B, F> {
    fn replayed(&mut self) -> Option<Result<Option<F::OpId>, BackendError>> {
        self.script
            .pop_front()
            .map(|o| o.map_err(BackendError::Api))
    }

    /// Notes a write's outcome; one the writing refused was never made.
    fn record<T>(
        &mut self,
        got: Result<T, BackendError>,
        id: impl FnOnce(&T) -> Option<F::OpId>,
    ) -> Result<T, BackendError> {
        match &got {
            Ok(v) => self.made.push(Ok(id(v))),
            Err(BackendError::Halted(_) | BackendError::Crashed { .. }) => {}
            Err(e) => self.made.push(Err(e.to_string())),
        }
        got
    }
}

impl<F: Family, B: Backend<F>> Backend<F> for Replay<B, F> {
    fn snapshot(&mut self) -> Result<F::Snapshot, BackendError> {
        self.inner.snapshot()
    }
    fn add_marks(&mut self, o: &ObjectRef, m: &[String], r: &str) -> Result<(), BackendError> {
        if let Some(got) = self.replayed() {
            return got.map(drop);
        }
        let got = self.inner.add_marks(o, m, r);
        self.record(got, |_| None)
    }
    fn remove_marks(&mut self, o: &ObjectRef, m: &[String], r: &str) -> Result<(), BackendError> {
        if let Some(got) = self.replayed() {
            return got.map(drop);
        }
        let got = self.inner.remove_marks(o, m, r);
        self.record(got, |_| None)
    }
    fn submit(
        &mut self,
        target: &str,
        op: &F::Op,
        reason: &str,
        after: Option<&F::OpId>,
    ) -> Result<F::OpId, BackendError> {
        if let Some(got) = self.replayed() {
            return got.and_then(|id| {
                id.ok_or_else(|| BackendError::Api("replayed a submission without an id".into()))
            });
        }
        let got = self.inner.submit(target, op, reason, after);
        self.record(got, |id| Some(id.clone()))
    }
    fn advance(&mut self, o: &ObjectRef, op: &F::Op, reason: &str) -> Result<(), BackendError> {
        if let Some(got) = self.replayed() {
            return got.map(drop);
        }
        let got = self.inner.advance(o, op, reason);
        self.record(got, |_| None)
    }
    fn can_follow(&self, op: &F::Op) -> bool {
        self.inner.can_follow(op)
    }
    fn supports(&self, step: F::Step) -> bool {
        self.inner.supports(step)
    }
    fn finish_pass(&mut self, now: i64) -> Result<(), BackendError> {
        self.inner.finish_pass(now)
    }
    fn flush(&mut self) -> Result<(), BackendError> {
        self.inner.flush()
    }
    fn guard_writes(&mut self, guard: WriteGuard) {
        self.inner.guard_writes(guard);
    }
    fn cancel_unstarted(
        &mut self,
        covered: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<(String, F::OpId)>, BackendError> {
        self.inner.cancel_unstarted(covered)
    }
    fn writes_made(&self) -> Option<usize> {
        self.inner.writes_made()
    }
    fn wait_applied(&mut self, limit: std::time::Duration) -> Result<Applied, BackendError> {
        self.inner.wait_applied(limit)
    }
    fn suspended_meanwhile(&self) -> Option<String> {
        self.inner.suspended_meanwhile()
    }
}

/// What befalls the acting replica in a pass, by the number of writes it attempted first.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Mishaps {
    pub pause: Option<usize>,
    /// Cut off after this many writes, then its next write comes this many seconds later.
    pub partition: Option<(usize, i64)>,
}

/// One replica's writes: time passes with each, the coordination runs meanwhile, production's
/// check is asked before it, and the oracle's truth after it was made.
pub(super) struct Guard<'c> {
    pub coord: &'c mut dyn Coordination,
    pub clock: &'c mut i64,
    pub replica: usize,
    pub term: u64,
    pub unguarded: bool,
    pub mishaps: Mishaps,
    pub attempts: usize,
    pub paused: bool,
    pub partitioned: bool,
    /// The check refused a write.
    pub refused: Option<String>,
    /// The first write made while the replica did not hold the coordination.
    pub unled: Option<String>,
}

/// What the guard answers a write a pause stopped: the pass resumes later.
pub(super) const PAUSED: &str = "the replica is paused";

impl<F: Family> Interceptor<F> for Guard<'_> {
    fn before(&mut self, _: &Write<'_, F>) -> Result<(), BackendError> {
        if self.mishaps.pause == Some(self.attempts) {
            self.mishaps.pause = None;
            self.paused = true;
            return Err(BackendError::Halted(PAUSED.into()));
        }
        if let Some((after, stall)) = self.mishaps.partition
            && after == self.attempts
        {
            self.mishaps.partition = None;
            self.partitioned = true;
            self.coord.cut(self.replica, *self.clock);
            *self.clock += stall;
        }
        self.attempts += 1;
        *self.clock += WRITE_SECONDS;
        self.coord.run_until(*self.clock);
        if self.unguarded {
            return Ok(());
        }
        self.coord
            .check(self.replica, self.term, *self.clock)
            .inspect_err(|why| self.refused = Some(why.to_string()))
    }

    fn after(&mut self, write: &Write<'_, F>, _: Option<&F::OpId>) {
        if self.unled.is_some() {
            return;
        }
        if let Err(holder) = self.coord.truth(self.replica, *self.clock) {
            let what = match write {
                Write::AddMarks { object, .. } => format!("added marks to {object}"),
                Write::RemoveMarks { object, .. } => format!("removed marks from {object}"),
                Write::Submit { target, op, .. } => format!("submitted {op} on {target}"),
                Write::Advance { object, op, .. } => format!("advanced {op} on {object}"),
            };
            self.unled = Some(format!(
                "{} {what} at second {} of the pass, while {holder}",
                self.coord.name(self.replica),
                *self.clock % super::PASS_SECONDS
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::tests::{EVERY_CALL, Probe, call_every_method};

    /// The report says the finding after "while": each kind reads as a clause naming the
    /// record or the role and who holds it.
    #[test]
    fn each_finding_reads_as_a_clause_naming_the_record_and_the_holder() {
        for (finding, text) in [
            (
                NotHeld::HeldByAnother {
                    record: "the record",
                    holder: "b".into(),
                },
                "the record names b as its holder",
            ),
            (
                NotHeld::NoHolder {
                    record: "the record",
                },
                "the record names no holder",
            ),
            (
                NotHeld::Lapsed {
                    record: "the record",
                    ago: 12,
                },
                "its last renewal of the record was 12 s ago, past the renew deadline",
            ),
            (
                NotHeld::RoleOfAnother {
                    role: "the leader",
                    holder: "b".into(),
                },
                "b is the leader",
            ),
        ] {
            assert_eq!(finding.to_string(), text);
        }
    }

    #[test]
    fn a_replay_with_nothing_to_replay_hands_every_call_to_its_backend_once() {
        let mut replay = Replay {
            inner: Probe::default(),
            script: VecDeque::new(),
            made: Vec::new(),
        };
        let answers = call_every_method(&mut replay);
        assert_eq!(replay.inner.calls, EVERY_CALL);
        assert_eq!(answers, (false, false));
    }
}
