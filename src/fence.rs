//! Fencing by time: while a replica leads (src/k8s/lease.rs), every write request it makes to
//! the fleet must be over before its lease's renew deadline, the instant it stops counting
//! itself leader. The other replicas wait a whole lease duration after they last saw the
//! Lease renewed, and the holder's deadline comes `lease − renew deadline` (5 s by default)
//! before that: a write that is over by the deadline cannot meet a successor's.
//!
//! Checking the lease before a write is not enough: a request may wait for an answer (a slow
//! or paused server, a lost packet) past the deadline. So each write request gets the time
//! left as its timeout: `min(configured timeout, time left − MARGIN)`, and a request with too
//! little time left is not sent at all. What that guarantees, and what it cannot: no write
//! request is *sent* after `deadline − MARGIN`, and none is waited for past it (the client
//! drops the connection). A request the server has already received when the client gives
//! up may still be applied (the Kubernetes API server does not roll back a write whose
//! client went away, nor does sabakan): it lands late only if the server sits on it for
//! longer than `MARGIN` plus `lease − renew deadline` after the client cut it off.
//! docs/machines.md and docs/metal3.md, "Running more than one", say it for users.
//!
//! The deadline travels with the write guard's answer (src/face/daemon.rs): the guard gives
//! it each time it lets a write go, and the backend that asked keeps it in the [`Lead`] its
//! clients share ([`leading`]), whose request seams read it ([`Lead::request_budget`]): the
//! kube client's layer (src/k8s/client.rs) and sabakan's client. A request is bounded on
//! whatever thread or tokio worker sends it; a backend whose guard gave no deadline (no
//! leader election, a one-off pass, a test) is not bounded.

use crate::engine::WriteGuard;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Kept free between the end of a write request's time and the leader's deadline.
pub const MARGIN: Duration = Duration::from_millis(500);

/// The least time a write request is started with: less could not get an answer anyway.
pub const LEAST: Duration = Duration::from_millis(250);

/// A write request not sent: this replica's lease ends too soon.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "not sent: this replica leads for {left:?} more, too little for a request to be answered {MARGIN:?} before its lease's renew deadline; the next pass (or the next leader) makes it"
)]
pub struct TooLate {
    pub left: Duration,
}

/// The time a write request starting at `now` may take, when the replica leads until
/// `until` (`None`: no leader election, the configured timeout).
pub fn budget(
    configured: Duration,
    now: Instant,
    until: Option<Instant>,
) -> Result<Duration, TooLate> {
    let Some(until) = until else {
        return Ok(configured);
    };
    let left = until.saturating_duration_since(now);
    let usable = left.saturating_sub(MARGIN);
    if usable < LEAST {
        return Err(TooLate { left });
    }
    Ok(configured.min(usable))
}

/// The deadline a backend's clients bound their write requests by: the one the write guard
/// gave for the write being made, shared by the backend that asked the guard and the clients'
/// request seams.
#[derive(Clone, Debug, Default)]
pub struct Lead(Arc<Mutex<Option<Instant>>>);

impl Lead {
    /// The deadline of the write being made, if its guard gave one.
    pub fn until(&self) -> Option<Instant> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set(&self, until: Option<Instant>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = until;
    }

    /// [`budget`] for a write request starting now.
    pub fn request_budget(&self, configured: Duration) -> Result<Duration, TooLate> {
        budget(configured, Instant::now(), self.until())
    }
}

/// `guard`, keeping the deadline of each write it lets go in `lead`, for the clients that send
/// that write's requests.
pub fn leading(guard: WriteGuard, lead: &Lead) -> WriteGuard {
    let lead = lead.clone();
    Arc::new(move || {
        let until = guard()?;
        lead.set(until);
        Ok(until)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_gets_the_time_left_less_the_margin_and_none_when_too_little_is_left() {
        let now = Instant::now();
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        let cases = [
            // (configured, left: None = no election) → budget or Err(left)
            (s(30), None, Ok(s(30))),
            (s(30), Some(s(10)), Ok(s(10) - MARGIN)),
            (s(2), Some(s(10)), Ok(s(2))),
            (s(30), Some(MARGIN + LEAST), Ok(LEAST)),
            (
                s(30),
                Some(MARGIN + LEAST - ms(1)),
                Err(MARGIN + LEAST - ms(1)),
            ),
            (s(30), Some(ms(100)), Err(ms(100))),
            (s(30), Some(Duration::ZERO), Err(Duration::ZERO)),
        ];
        for (configured, left, want) in cases {
            let got = budget(configured, now, left.map(|l| now + l));
            assert_eq!(
                got,
                want.map_err(|left| TooLate { left }),
                "{configured:?} with {left:?} left"
            );
        }
        // A deadline already past is no time at all, not a wrap-around.
        assert_eq!(
            budget(s(30), now + s(1), Some(now)),
            Err(TooLate {
                left: Duration::ZERO
            })
        );
    }

    /// A write request's bound is the deadline the guard gave for its write, read on the
    /// thread that sends it, whichever that is: none without an election, the time left less
    /// the margin while leading, no request at all when the deadline has (nearly) passed.
    #[test]
    fn a_write_request_is_bounded_by_the_deadline_its_guard_gave() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        let cases = [
            // (deadline the guard gives, from now) → the request's timeout, or not sent
            (None, Some(s(30))),
            (Some(s(20)), Some(s(20) - MARGIN)),
            (Some(MARGIN + ms(100)), None),
            (Some(Duration::ZERO), None),
        ];
        for (left, want) in cases {
            let until = left.map(|l| Instant::now() + l);
            let lead = Lead::default();
            let guard = leading(Arc::new(move || Ok(until)), &lead);
            assert_eq!(guard().unwrap(), until, "{left:?}");
            let sender = lead.clone();
            let got = std::thread::spawn(move || sender.request_budget(s(30)))
                .join()
                .unwrap();
            match want {
                Some(want) => {
                    let got = got.unwrap_or_else(|e| panic!("{left:?}: {e}"));
                    assert!(got <= want && got + s(1) > want, "{left:?}: {got:?}");
                }
                None => assert!(got.is_err(), "{left:?}: sent with {got:?}"),
            }
        }
        // A guard that refuses leaves the deadline of the write before it.
        let lead = Lead::default();
        let until = Instant::now() + s(20);
        leading(Arc::new(move || Ok(Some(until))), &lead)().unwrap();
        let refuse = leading(
            Arc::new(|| Err(crate::engine::BackendError::Halted("stop".into()))),
            &lead,
        );
        assert!(refuse().is_err());
        assert_eq!(lead.until(), Some(until));
    }
}
