//! Effective policy: first per object, then nearest-wins along the scope chain
//! (target, then the group of its primary node, then the cluster).

use crate::snapshot::ObjectRef;
use crate::tags::{RepairType, Tag};
use serde::Serialize;

/// What one object's own tags say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "policy", rename_all = "kebab-case")]
pub enum Policy {
    /// Repairs up to this type are allowed.
    Allow {
        up_to: RepairType,
    },
    /// No repair starts until this time (Unix seconds).
    SuspendedUntil {
        until: i64,
    },
    SuspendedForever,
}

impl Policy {
    pub fn is_suspended(self) -> bool {
        !matches!(self, Policy::Allow { .. })
    }

    pub fn allowed(self) -> Option<RepairType> {
        match self {
            Policy::Allow { up_to } => Some(up_to),
            _ => None,
        }
    }
}

impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Policy::Allow { up_to } => write!(f, "repairs up to {up_to} allowed"),
            Policy::SuspendedUntil { until } => write!(f, "suspended until {until}"),
            Policy::SuspendedForever => f.write_str("suspended"),
        }
    }
}

/// The result of reading one object's tags.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectPolicy<'a> {
    pub policy: Option<Policy>,
    /// Timed suspends already over: ignored, and to be removed.
    pub expired_suspends: Vec<&'a str>,
}

/// One object: a permanent suspend wins; else the latest still-future timed suspend; else the
/// least destructive enabled type. Expired suspends count as absent.
pub fn object_policy<'a>(
    tags: impl IntoIterator<Item = (&'a str, Tag<'a>)>,
    now: i64,
) -> ObjectPolicy<'a> {
    let mut forever = false;
    let mut latest_until: Option<i64> = None;
    let mut least: Option<RepairType> = None;
    let mut expired = Vec::new();
    for (text, tag) in tags {
        match tag {
            Tag::Suspend { until: None } => forever = true,
            Tag::Suspend { until: Some(t) } if t > now => {
                latest_until = Some(latest_until.map_or(t, |l| l.max(t)))
            }
            Tag::Suspend { until: Some(_) } => expired.push(text),
            Tag::Policy(t) => least = Some(least.map_or(t, |l| l.min(t))),
            _ => {}
        }
    }
    let policy = if forever {
        Some(Policy::SuspendedForever)
    } else if let Some(until) = latest_until {
        Some(Policy::SuspendedUntil { until })
    } else {
        least.map(|up_to| Policy::Allow { up_to })
    };
    ObjectPolicy {
        policy,
        expired_suspends: expired,
    }
}

/// The policy that governs a target and the object it came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Effective {
    pub policy: Policy,
    pub source: ObjectRef,
}

/// Nearest wins: the first object of `chain` (target first) that carries any policy.
pub fn effective<'o>(
    chain: impl IntoIterator<Item = (&'o ObjectRef, Option<Policy>)>,
) -> Option<Effective> {
    chain.into_iter().find_map(|(object, policy)| {
        policy.map(|policy| Effective {
            policy,
            source: object.clone(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::{PREFIX, parse};
    use RepairType::*;

    fn policy_of(tags: &[&str], now: i64) -> (Option<Policy>, Vec<String>) {
        let owned: Vec<String> = tags.iter().map(|t| format!("{PREFIX}{t}")).collect();
        let parsed = owned
            .iter()
            .filter_map(|t| parse(t).ok().map(|p| (t.as_str(), p)));
        let p = object_policy(parsed, now);
        (
            p.policy,
            p.expired_suspends
                .iter()
                .map(|t| t.trim_start_matches(PREFIX).to_owned())
                .collect(),
        )
    }

    #[test]
    fn one_object_table() {
        let now = 1000;
        let cases: &[(&[&str], Option<Policy>, &[&str])] = &[
            (&[], None, &[]),
            (&["failover"], Some(Policy::Allow { up_to: Failover }), &[]),
            (
                &["reinstall", "migrate", "failover"],
                Some(Policy::Allow { up_to: Migrate }),
                &[],
            ),
            (
                &["reinstall", "suspend"],
                Some(Policy::SuspendedForever),
                &[],
            ),
            (&["suspend:"], Some(Policy::SuspendedForever), &[]),
            (
                &["suspend:2000", "suspend:1500", "fix-storage"],
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
                &["suspend:999", "failover"],
                Some(Policy::Allow { up_to: Failover }),
                &["suspend:999"],
            ),
            (&["suspend:1000"], None, &["suspend:1000"]),
            (
                &["suspend:5", "suspend:3000"],
                Some(Policy::SuspendedUntil { until: 3000 }),
                &["suspend:5"],
            ),
            // Pending and result tags are not policy.
            (
                &["result:failover:0f8fad5b-d9cb-469f-a165-70867728950e:1:success:"],
                None,
                &[],
            ),
        ];
        for (tags, want, want_expired) in cases {
            let (got, expired) = policy_of(tags, now);
            assert_eq!(got, *want, "tags {tags:?}");
            assert_eq!(expired, *want_expired, "expired of {tags:?}");
        }
    }

    #[test]
    fn nearest_object_with_any_policy_wins() {
        let inst = ObjectRef::Instance("i".into());
        let group = ObjectRef::Group("g".into());
        let cluster = ObjectRef::Cluster;
        let allow = |t| Some(Policy::Allow { up_to: t });
        let cases = [
            // An instance's failover overrides a cluster-wide suspend, by design.
            (
                [allow(Failover), None, Some(Policy::SuspendedForever)],
                Some((Policy::Allow { up_to: Failover }, &inst)),
            ),
            (
                [
                    None,
                    Some(Policy::SuspendedUntil { until: 9 }),
                    allow(Reinstall),
                ],
                Some((Policy::SuspendedUntil { until: 9 }, &group)),
            ),
            (
                [None, None, allow(Reinstall)],
                Some((Policy::Allow { up_to: Reinstall }, &cluster)),
            ),
            // Even a more permissive group policy beats a cluster suspend: nearest wins.
            (
                [None, allow(Reinstall), Some(Policy::SuspendedForever)],
                Some((Policy::Allow { up_to: Reinstall }, &group)),
            ),
            ([None, None, None], None),
        ];
        for (policies, want) in cases {
            let chain = [&inst, &group, &cluster].into_iter().zip(policies);
            let got = effective(chain);
            assert_eq!(
                got.map(|e| (e.policy, e.source)),
                want.map(|(p, o)| (p, o.clone())),
                "{policies:?}"
            );
        }
    }
}
