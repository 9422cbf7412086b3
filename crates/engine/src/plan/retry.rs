//! Bounded retries (docs/design.md, rule 13): how many times a target's repairs failed in a
//! row, read from its result marks alone, and what that allows now.
//!
//! A failure counts until a success that the target outlived by `min_healthy`: a repair
//! that worked but left the target broken again soon after did not really work, as Cluster
//! API's `minHealthyPeriod` has it. The marks keep when each repair ended, not when it began,
//! so "healthy until the next repair" is measured to the end of that repair: longer than the
//! truth by that repair's own duration (minutes, against a `min_healthy` of an hour).

use crate::marks::RepairResult;

/// The failures that count against a target's retries now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Streak {
    /// Failures since the count last started afresh.
    pub failures: u32,
    /// When the newest of them was written.
    pub last_failure: i64,
    /// The success that started the count afresh, if one did: failures up to it are history.
    pub reset_at: Option<i64>,
}

/// The streak of `results` (end time, result; any order) as of `now`. Enoperm results are
/// refusals, not attempts: they neither count nor reset.
pub fn streak(results: &[(i64, RepairResult)], now: i64, min_healthy: i64) -> Streak {
    let mut sorted: Vec<(i64, RepairResult)> = results
        .iter()
        .copied()
        .filter(|(_, r)| *r != RepairResult::Enoperm)
        .collect();
    // At the same second a failure sorts after a success (Failure > Success): it counts.
    sorted.sort_unstable();
    let mut s = Streak::default();
    let mut success: Option<i64> = None;
    let outlived =
        |success: Option<i64>, at: i64| success.filter(|ok| at.saturating_sub(*ok) >= min_healthy);
    for (at, result) in sorted {
        if let Some(ok) = outlived(success, at) {
            s.failures = 0;
            s.reset_at = Some(ok);
        }
        match result {
            RepairResult::Success => success = Some(at),
            RepairResult::Failure => {
                s.failures = s.failures.saturating_add(1);
                s.last_failure = at;
                success = None;
            }
            RepairResult::Enoperm => unreachable!("filtered out"),
        }
    }
    if let Some(ok) = outlived(success, now) {
        s.failures = 0;
        s.reset_at = Some(ok);
    }
    s
}

/// What a target's streak allows now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retry {
    /// No failure counts: repairs start as policy and limits allow.
    Free,
    /// `failures` failed, at most `retries` tries again: the next may start at `at`.
    Wait {
        failures: u32,
        retries: u32,
        at: i64,
    },
    /// More failures than retries: parked until a person clears it.
    Parked { failures: u32, retries: u32 },
}

impl Retry {
    /// `backoff` seconds before the first retry, doubled before each next one.
    pub fn of(streak: &Streak, retries: u32, backoff: i64) -> Retry {
        match streak.failures {
            0 => Retry::Free,
            failures if failures > retries => Retry::Parked { failures, retries },
            failures => {
                // 2^62 seconds is past any clock: a bigger shift would overflow.
                let factor = 1i64 << (failures - 1).min(62);
                let at = streak
                    .last_failure
                    .saturating_add(backoff.max(0).saturating_mul(factor));
                Retry::Wait {
                    failures,
                    retries,
                    at,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use RepairResult::{Enoperm as E, Failure as F, Success as S};

    const HOUR: i64 = 3600;

    #[test]
    fn the_count_starts_afresh_only_after_a_success_the_target_outlived() {
        // (case, results, now, failures counted, reset at)
        type Case = (
            &'static str,
            &'static [(i64, RepairResult)],
            i64,
            u32,
            Option<i64>,
        );
        let cases: &[Case] = &[
            ("nothing", &[], 100, 0, None),
            ("one failure", &[(100, F)], 200, 1, None),
            (
                "order of the marks does not matter",
                &[(300, F), (100, F)],
                400,
                2,
                None,
            ),
            (
                "enoperm neither counts nor resets",
                &[(100, F), (200, E), (300, F)],
                400,
                2,
                None,
            ),
            // A retry that worked, then the target broke again within min_healthy: the
            // repair did not really work.
            (
                "a success broken again soon",
                &[(100, F), (200, S), (300, F)],
                400,
                2,
                None,
            ),
            (
                "a success outlived, then a new failure",
                &[(100, F), (200, S), (200 + HOUR, F)],
                300 + HOUR,
                1,
                Some(200),
            ),
            (
                "a success outlived up to now",
                &[(100, F), (200, S)],
                200 + HOUR,
                0,
                Some(200),
            ),
            (
                "a success not yet outlived",
                &[(100, F), (200, S)],
                199 + HOUR,
                1,
                None,
            ),
            // Two successes an hour apart: the first was outlived.
            (
                "successes in a row",
                &[(100, F), (200, S), (200 + HOUR, S), (210 + HOUR, F)],
                220 + HOUR,
                1,
                Some(200),
            ),
            (
                "a tie counts the failure",
                &[(100, F), (200, S), (200, F)],
                300,
                2,
                None,
            ),
            (
                "times at the ends of the clock",
                &[(i64::MIN, F), (i64::MAX, F)],
                i64::MAX,
                2,
                None,
            ),
        ];
        for (case, results, now, failures, reset_at) in cases {
            let s = streak(results, *now, HOUR);
            assert_eq!(
                (s.failures, s.reset_at),
                (*failures, *reset_at),
                "{case}: {s:?}"
            );
        }
        // min_healthy 0: any success starts afresh.
        assert_eq!(streak(&[(100, F), (200, S), (300, F)], 400, 0).failures, 1);
    }

    #[test]
    fn retries_wait_twice_as_long_each_time_then_park() {
        let at = |failures, last| Streak {
            failures,
            last_failure: last,
            reset_at: None,
        };
        // (streak, retries, backoff, what it allows)
        let cases = [
            (at(0, 0), 0, 600, Retry::Free),
            (
                at(1, 1000),
                0,
                600,
                Retry::Parked {
                    failures: 1,
                    retries: 0,
                },
            ),
            (
                at(1, 1000),
                3,
                600,
                Retry::Wait {
                    failures: 1,
                    retries: 3,
                    at: 1600,
                },
            ),
            (
                at(2, 1000),
                3,
                600,
                Retry::Wait {
                    failures: 2,
                    retries: 3,
                    at: 2200,
                },
            ),
            (
                at(3, 1000),
                3,
                600,
                Retry::Wait {
                    failures: 3,
                    retries: 3,
                    at: 3400,
                },
            ),
            (
                at(4, 1000),
                3,
                600,
                Retry::Parked {
                    failures: 4,
                    retries: 3,
                },
            ),
            // Huge counts and back-offs saturate instead of wrapping into the past.
            (
                at(200, 1000),
                u32::MAX,
                i64::MAX,
                Retry::Wait {
                    failures: 200,
                    retries: u32::MAX,
                    at: i64::MAX,
                },
            ),
            (
                at(1, 1000),
                1,
                0,
                Retry::Wait {
                    failures: 1,
                    retries: 1,
                    at: 1000,
                },
            ),
        ];
        for (s, retries, backoff, want) in cases {
            assert_eq!(
                Retry::of(&s, retries, backoff),
                want,
                "{s:?} {retries} {backoff}"
            );
        }
    }
}
