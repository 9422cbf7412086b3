//! Effective policy: first per object, then nearest-wins along the scope chain the family
//! supplies (the target, then its scopes, nearest first).

use super::marks::{Governs, Level, Mark};
use serde::Serialize;

/// What one object's own marks say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "policy", rename_all = "kebab-case")]
pub enum Policy<L> {
    /// Repairs up to this level are allowed.
    Allow {
        up_to: L,
    },
    /// No repair starts until this time (Unix seconds).
    SuspendedUntil {
        until: i64,
    },
    SuspendedForever,
    /// A mark of ours that cannot be read holds the object as a suspend without a time would
    /// (docs/design.md, rule 11) until it is fixed or removed.
    Unreadable {
        mark: Governs,
    },
}

impl<L: Level> Policy<L> {
    pub fn is_suspended(self) -> bool {
        !matches!(self, Policy::Allow { .. })
    }

    pub fn allowed(self) -> Option<L> {
        match self {
            Policy::Allow { up_to } => Some(up_to),
            _ => None,
        }
    }
}

impl<L: Level> std::fmt::Display for Policy<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Policy::Allow { up_to } => write!(f, "repairs up to {up_to} allowed"),
            Policy::SuspendedUntil { until } => {
                write!(f, "suspended until {}", super::text::rfc3339(*until))
            }
            Policy::SuspendedForever => f.write_str("suspended"),
            Policy::Unreadable { mark } => write!(
                f,
                "suspended: unreadable {mark} mark (fix or remove it; `autorepair tags lint` names it)"
            ),
        }
    }
}

/// The result of reading one object's marks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectPolicy<'a, L> {
    pub policy: Option<Policy<L>>,
    /// What the object's `suspend --all` marks say alone: a suspend of every target under the
    /// object, whatever nearer objects allow. A target's effective policy is the first of its
    /// scopes' (nearest first, [`effective`] over them) when any, else nearest-wins.
    pub over_all: Option<Policy<L>>,
    /// Timed suspends already over: ignored, and to be removed.
    pub expired_suspends: Vec<&'a str>,
}

/// One object: an unreadable mark that governs its policy wins (rule 11: it holds as a
/// suspend without a time); else a permanent suspend; else the latest still-future timed
/// suspend; else the least destructive allowed level. Expired suspends count as absent; an
/// unreadable pending or result mark is the target's business, not its policy's.
pub fn object_policy<'a, L: Level>(
    marks: impl IntoIterator<Item = (&'a str, Mark<'a, L>)>,
    now: i64,
) -> ObjectPolicy<'a, L> {
    let (mut unreadable, mut all_unreadable) = (None::<Governs>, None::<Governs>);
    let mut forever = false;
    let mut latest_until: Option<i64> = None;
    let (mut all_forever, mut all_until) = (false, None::<i64>);
    let mut least: Option<L> = None;
    let mut expired = Vec::new();
    for (text, mark) in marks {
        match mark {
            Mark::Suspend { until: None, all } => {
                forever = true;
                all_forever |= all;
            }
            Mark::Suspend {
                until: Some(t),
                all,
            } if t > now => {
                latest_until = Some(latest_until.map_or(t, |l| l.max(t)));
                if all {
                    all_until = Some(all_until.map_or(t, |l| l.max(t)));
                }
            }
            Mark::Suspend { until: Some(_), .. } => expired.push(text),
            Mark::Policy(t) => least = Some(least.map_or(t, |l| l.min(t))),
            Mark::Unreadable(
                g @ (Governs::Policy | Governs::Unknown | Governs::Suspend { .. }),
            ) => {
                // A suspend's reason is the one to show: it is what the mark was.
                if unreadable.is_none_or(|u| !matches!(u, Governs::Suspend { .. })) {
                    unreadable = Some(g);
                }
                if g == (Governs::Suspend { all: true }) {
                    all_unreadable = Some(g);
                }
            }
            _ => {}
        }
    }
    let policy = if let Some(mark) = unreadable {
        Some(Policy::Unreadable { mark })
    } else if forever {
        Some(Policy::SuspendedForever)
    } else if let Some(until) = latest_until {
        Some(Policy::SuspendedUntil { until })
    } else {
        least.map(|up_to| Policy::Allow { up_to })
    };
    let over_all = if let Some(mark) = all_unreadable {
        Some(Policy::Unreadable { mark })
    } else if all_forever {
        Some(Policy::SuspendedForever)
    } else {
        all_until.map(|until| Policy::SuspendedUntil { until })
    };
    ObjectPolicy {
        policy,
        over_all,
        expired_suspends: expired,
    }
}

/// Nearest wins: the first object of `chain` (the target first, then its scopes nearest
/// first) that carries any policy. Each item is what that object says, if anything; the
/// planner passes the target's own policy and the shared ones of its scopes.
pub fn effective<P>(chain: impl IntoIterator<Item = Option<P>>) -> Option<P> {
    chain.into_iter().flatten().next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{Fixture, FixtureLevel::*, FixtureMarks};
    use crate::marks::Codec;

    fn policy_of(
        marks: &[&str],
        now: i64,
    ) -> (Option<Policy<crate::fixture::FixtureLevel>>, Vec<String>) {
        let parsed = marks
            .iter()
            .filter_map(|t| FixtureMarks::parse(t).ok().map(|p| (*t, p)));
        let p = object_policy(parsed, now);
        (
            p.policy,
            p.expired_suspends.iter().map(|t| t.to_string()).collect(),
        )
    }

    #[test]
    fn a_suspend_all_suspends_the_object_and_says_so_apart() {
        let now = 1000;
        type Of = Option<Policy<crate::fixture::FixtureLevel>>;
        // (marks, the object's policy, its suspend-all alone)
        let cases: &[(&[&str], Of, Of)] = &[
            (
                &["suspend-all"],
                Some(Policy::SuspendedForever),
                Some(Policy::SuspendedForever),
            ),
            (&["suspend"], Some(Policy::SuspendedForever), None),
            (
                &["restart", "suspend-all:2000", "suspend"],
                Some(Policy::SuspendedForever),
                Some(Policy::SuspendedUntil { until: 2000 }),
            ),
            (
                &["suspend-all:999", "restart"],
                Some(Policy::Allow { up_to: Restart }),
                None,
            ),
        ];
        for (marks, policy, over_all) in cases {
            let parsed = marks
                .iter()
                .filter_map(|t| FixtureMarks::parse(t).ok().map(|p| (*t, p)));
            let p = object_policy(parsed, now);
            assert_eq!((p.policy, p.over_all), (*policy, *over_all), "{marks:?}");
        }
    }

    #[test]
    fn one_object_table() {
        let _ = Fixture;
        let now = 1000;
        let cases: &[(&[&str], Option<Policy<_>>, &[&str])] = &[
            (&[], None, &[]),
            (&["restart"], Some(Policy::Allow { up_to: Restart }), &[]),
            (
                &["replace", "nudge", "restart"],
                Some(Policy::Allow { up_to: Nudge }),
                &[],
            ),
            (&["replace", "suspend"], Some(Policy::SuspendedForever), &[]),
            (&["suspend:"], Some(Policy::SuspendedForever), &[]),
            (
                &["suspend:2000", "suspend:1500", "nudge"],
                Some(Policy::SuspendedUntil { until: 2000 }),
                &[],
            ),
            (
                &["suspend:2000", "suspend"],
                Some(Policy::SuspendedForever),
                &[],
            ),
            // Expired suspends are ignored and scheduled for removal.
            (
                &["suspend:999", "restart"],
                Some(Policy::Allow { up_to: Restart }),
                &["suspend:999"],
            ),
            (&["suspend:1000"], None, &["suspend:1000"]),
            (
                &["suspend:5", "suspend:3000"],
                Some(Policy::SuspendedUntil { until: 3000 }),
                &["suspend:5"],
            ),
            // Pending and result marks are not policy.
            (
                &["result:restart:0f8fad5b-d9cb-469f-a165-70867728950e:1:success:"],
                None,
                &[],
            ),
        ];
        for (marks, want, want_expired) in cases {
            let (got, expired) = policy_of(marks, now);
            assert_eq!(got, *want, "marks {marks:?}");
            assert_eq!(expired, *want_expired, "expired of {marks:?}");
        }
    }

    #[test]
    fn nearest_object_with_any_policy_wins() {
        let allow = |t| Some(Policy::Allow { up_to: t });
        let cases = [
            // A target's own level overrides a suspend further out, by design.
            (
                [allow(Restart), None, Some(Policy::SuspendedForever)],
                Some(0),
            ),
            (
                [
                    None,
                    Some(Policy::SuspendedUntil { until: 9 }),
                    allow(Replace),
                ],
                Some(1),
            ),
            ([None, None, allow(Replace)], Some(2)),
            // Even a more permissive nearer policy beats a suspend further out.
            (
                [None, allow(Replace), Some(Policy::SuspendedForever)],
                Some(1),
            ),
            ([None, None, None], None),
        ];
        for (policies, want) in cases {
            let chain = policies.iter().enumerate().map(|(i, p)| p.map(|p| (i, p)));
            let got = effective(chain);
            assert_eq!(got.map(|(i, _)| i), want, "{policies:?}");
            assert_eq!(got.map(|(_, p)| p), want.and_then(|i| policies[i]));
        }
    }
}
