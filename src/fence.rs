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
//! The deadline travels with the thread that writes: the write guard (src/face/daemon.rs)
//! sets it each time it lets a write go, and the request seams read it ([`request_budget`]):
//! the kube client's layer (src/k8s/client.rs), sabakan's client, and the guard itself
//! before a repair command starts. Those all run on the pass's thread (the kube clients on a
//! current-thread runtime the pass drives), and a thread with no deadline set (no leader
//! election, a one-off pass, a test) is not bounded.

use std::cell::Cell;
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

thread_local! {
    static UNTIL: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Sets (or clears) the deadline this thread's write requests are bounded by.
pub fn lead_until(until: Option<Instant>) {
    UNTIL.set(until);
}

/// The deadline this thread's write requests are bounded by, if any.
pub fn until() -> Option<Instant> {
    UNTIL.get()
}

/// [`budget`] for a write request this thread starts now.
pub fn request_budget(configured: Duration) -> Result<Duration, TooLate> {
    budget(configured, Instant::now(), until())
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

    #[test]
    fn the_deadline_belongs_to_the_thread_that_set_it() {
        lead_until(Some(Instant::now() + Duration::from_millis(100)));
        assert!(request_budget(Duration::from_secs(30)).is_err());
        std::thread::spawn(|| {
            assert_eq!(
                request_budget(Duration::from_secs(30)),
                Ok(Duration::from_secs(30))
            );
        })
        .join()
        .unwrap();
        lead_until(None);
        assert_eq!(
            request_budget(Duration::from_secs(30)),
            Ok(Duration::from_secs(30))
        );
    }
}
