//! The Lease of `run --loop`'s leader election as the chaos simulator's replicas use it (the
//! families whose fleets live in Kubernetes, or next to it): the Lease object is a record in
//! memory and the clock the simulator's, but each replica's rounds decide and record with the
//! election's own code ([`may_take`], [`Observed`], [`Standing`]), and a replica's check before
//! a write is [`Standing::check`], the one [`super::lease::Term::check`] asks in production.

use super::lease::{LeaseName, Observed, Standing, Timing, may_take};
use crate::engine::BackendError;
use crate::engine::sim::{Coordination, NotHeld};
use std::time::Duration;

/// How the oracle's findings name the record it reads who leads from.
const RECORD: &str = "the Lease";

/// The simulator's clock (seconds) as the election's time.
fn time(at: i64) -> Duration {
    Duration::from_secs(at.max(0).unsigned_abs())
}

/// The Lease object, as the API server keeps it.
struct Record {
    /// Empty once given up.
    holder: String,
    renew: i64,
    /// What the holder wrote: a Lease given up says one second.
    duration: Duration,
}

struct Replica {
    identity: String,
    standing: Standing<Duration>,
    observed: Option<Observed<Duration>>,
    /// The process runs (not killed, not stopped after giving the Lease up).
    running: bool,
    frozen: bool,
    /// Cannot reach the API server's Lease.
    cut: bool,
    /// When its next round is due.
    next: i64,
}

/// Replicas electing a leader through one Lease, with client-go's timing.
pub struct LeaseReplicas {
    lease: LeaseName,
    timing: Timing,
    record: Option<Record>,
    replicas: Vec<Replica>,
}

impl LeaseReplicas {
    /// `count` replicas that started a while before `start`: by then the first has the Lease.
    pub fn new(count: usize, start: i64) -> LeaseReplicas {
        let first = start - 30;
        LeaseReplicas {
            lease: LeaseName {
                namespace: "autorepair".into(),
                name: super::lease::DEFAULT_LEASE.into(),
            },
            timing: Timing::default(),
            record: None,
            replicas: (0..count)
                .map(|r| Replica {
                    identity: format!("replica-{r}"),
                    standing: Standing::default(),
                    observed: None,
                    running: true,
                    frozen: false,
                    cut: false,
                    next: first + r as i64,
                })
                .collect(),
        }
    }

    /// One round of replica `r` at `at`, as `Campaign::run` does it: read the Lease, take it
    /// over or renew it if it may, else follow its holder.
    fn round(&mut self, r: usize, at: i64) {
        let timing = self.timing;
        let me = &mut self.replicas[r];
        me.next = at + timing.retry.as_secs().max(1) as i64;
        if me.cut {
            me.standing.unreachable(time(at));
            return;
        }
        let take = match &self.record {
            None => true,
            Some(rec) => {
                let seen = Observed::see(
                    &mut me.observed,
                    &rec.holder,
                    &rec.renew.to_string(),
                    time(at),
                );
                may_take(&rec.holder, &me.identity, time(at) - seen, rec.duration)
            }
        };
        if take {
            self.record = Some(Record {
                holder: me.identity.clone(),
                renew: at,
                duration: timing.lease,
            });
            me.standing.renewed(time(at), &timing, &me.identity);
        } else if let Some(rec) = &self.record {
            me.standing.follows(&rec.holder);
        }
    }
}

impl Coordination for LeaseReplicas {
    fn name(&self, r: usize) -> String {
        self.replicas[r].identity.clone()
    }

    fn run_until(&mut self, at: i64) {
        loop {
            let due = self
                .replicas
                .iter()
                .enumerate()
                .filter(|(_, x)| x.running && !x.frozen)
                .min_by_key(|(_, x)| x.next)
                .map(|(r, x)| (r, x.next));
            match due {
                Some((r, next)) if next <= at => self.round(r, next),
                _ => break,
            }
        }
    }

    fn acting(&self, at: i64) -> Vec<usize> {
        (0..self.replicas.len())
            .filter(|r| {
                let x = &self.replicas[*r];
                x.running && !x.frozen && x.standing.is_leader(time(at))
            })
            .collect()
    }

    fn term(&self, r: usize) -> u64 {
        self.replicas[r].standing.term()
    }

    fn check(&self, r: usize, term: u64, at: i64) -> Result<(), BackendError> {
        let x = &self.replicas[r];
        x.standing.check(term, time(at), &x.identity, &self.lease)
    }

    /// The Lease names the replica, and its last renewal is within the renew deadline: after
    /// that the others may be about to take it.
    fn truth(&self, r: usize, at: i64) -> Result<(), NotHeld> {
        let me = &self.replicas[r].identity;
        match &self.record {
            Some(rec) if &rec.holder == me => {
                let deadline = rec.renew + self.timing.renew_deadline.as_secs() as i64;
                if at < deadline {
                    Ok(())
                } else {
                    Err(NotHeld::Lapsed {
                        record: RECORD,
                        ago: at - rec.renew,
                    })
                }
            }
            Some(rec) if !rec.holder.is_empty() => Err(NotHeld::HeldByAnother {
                record: RECORD,
                holder: rec.holder.clone(),
            }),
            _ => Err(NotHeld::NoHolder { record: RECORD }),
        }
    }

    fn kill(&mut self, r: usize, _at: i64) {
        let x = &mut self.replicas[r];
        x.running = false;
        x.standing = Standing::default();
        x.observed = None;
    }

    fn freeze(&mut self, r: usize, _at: i64) {
        self.replicas[r].frozen = true;
    }

    fn thaw(&mut self, r: usize, at: i64) {
        let x = &mut self.replicas[r];
        x.frozen = false;
        x.next = x.next.max(at);
    }

    fn cut(&mut self, r: usize, _at: i64) {
        self.replicas[r].cut = true;
    }

    /// SIGTERM: the pass stops, and the Lease is given up (holder emptied, one second), as
    /// `Campaign::release` does it; the others take it at their next round.
    fn hand_over(&mut self, r: usize, at: i64) -> bool {
        let x = &mut self.replicas[r];
        x.standing.stop();
        x.running = false;
        match &mut self.record {
            Some(rec) if rec.holder == x.identity && !x.cut => {
                rec.holder.clear();
                rec.renew = at;
                rec.duration = Duration::from_secs(1);
                true
            }
            _ => false,
        }
    }

    /// Killed and stopped replicas start again (a new process: it remembers nothing), and
    /// cut-off ones reach the API server again.
    fn restart(&mut self, at: i64) {
        for x in &mut self.replicas {
            x.cut = false;
            if !x.running {
                x.running = true;
                x.standing = Standing::default();
                x.observed = None;
                x.next = at;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_800_000_000;

    /// The holder at each second, by the replicas' own view.
    fn leaders(c: &mut LeaseReplicas, from: i64, to: i64) -> Vec<(i64, Vec<usize>)> {
        (from..=to)
            .map(|t| {
                c.run_until(t);
                (t, c.acting(t))
            })
            .collect()
    }

    #[test]
    fn a_standby_takes_over_a_lease_duration_after_the_last_renewal_it_saw() {
        let mut c = LeaseReplicas::new(3, T0);
        c.run_until(T0);
        assert_eq!(c.acting(T0), vec![0]);
        c.kill(0, T0);
        let seen = leaders(&mut c, T0, T0 + 30);
        let first = seen
            .iter()
            .find(|(_, a)| !a.is_empty())
            .expect("a takeover");
        // Renewed at most 2 s before the kill, taken over 15-17 s after it.
        assert!((T0 + 13..=T0 + 17).contains(&first.0), "{first:?}");
        assert_eq!(first.1.len(), 1);
        assert!(
            c.check(0, 1, first.0).is_err(),
            "the killed one writes nothing"
        );
    }

    #[test]
    fn a_cut_off_leader_stops_at_its_renew_deadline_before_anyone_takes_over() {
        let mut c = LeaseReplicas::new(2, T0);
        c.run_until(T0);
        let term = c.term(0);
        c.cut(0, T0);
        let mut stopped = None;
        let mut taken = None;
        let mut lapsed = false;
        for t in T0..T0 + 40 {
            c.run_until(t);
            if stopped.is_none() && c.check(0, term, t).is_err() {
                stopped = Some(t);
            }
            if taken.is_none() && c.acting(t).contains(&1) {
                taken = Some(t);
            }
            // Production's check and the Lease's record never disagree on a write allowed.
            if c.check(0, term, t).is_ok() {
                assert_eq!(c.truth(0, t), Ok(()), "second {}", t - T0);
            }
            // Until the other takes over, the Lease still names the cut-off leader, which last
            // renewed it too long ago.
            if taken.is_none()
                && matches!(c.truth(0, t), Err(NotHeld::Lapsed { ago, .. }) if ago >= 10)
            {
                lapsed = true;
            }
        }
        assert!(lapsed, "the oracle finds the cut-off leader's hold lapsed");
        let (stopped, taken) = (stopped.expect("stops"), taken.expect("taken over"));
        assert!(
            stopped <= T0 + 10 && taken >= stopped + 5,
            "{stopped} {taken}"
        );
    }

    #[test]
    fn a_paused_leader_resumes_refused_and_a_clean_stop_hands_over_at_once() {
        let mut c = LeaseReplicas::new(2, T0);
        c.run_until(T0);
        let term = c.term(0);
        c.freeze(0, T0);
        c.run_until(T0 + 45);
        assert_eq!(c.acting(T0 + 45), vec![1]);
        c.thaw(0, T0 + 45);
        c.run_until(T0 + 46);
        assert!(matches!(
            c.check(0, term, T0 + 46),
            Err(BackendError::Halted(_))
        ));
        assert!(matches!(
            c.truth(0, T0 + 46),
            Err(NotHeld::HeldByAnother { holder, .. }) if holder == c.name(1)
        ));
        // Replica 1 leads; it stops cleanly, replica 0 takes over within a round.
        assert!(c.hand_over(1, T0 + 50));
        assert_eq!(
            c.truth(0, T0 + 50),
            Err(NotHeld::NoHolder { record: RECORD })
        );
        let first = leaders(&mut c, T0 + 50, T0 + 60)
            .into_iter()
            .find(|(_, a)| a == &vec![0])
            .expect("taken over");
        assert!(first.0 <= T0 + 52, "{first:?}");
    }
}
