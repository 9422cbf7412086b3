//! When a Machine needs remediation, and which: the metal3 family's health rule, what
//! [`Metal3`](super::Metal3)'s `assess` reports as a Machine's health.

use super::objects::{self, Host, Machine};
use super::{Index, Metal3Level};
use crate::engine::RepairResult;
use crate::engine::family::{Health, Need};
use crate::engine::text::rfc3339;

impl Index<'_> {
    /// Why the Machine looks broken by itself (request aside), if it does.
    pub(super) fn symptom(&self, m: &Machine) -> Option<String> {
        let name = m.node_ref.as_deref()?;
        match self.node(m) {
            None => Some(format!("its Node {name} is gone")),
            Some(n) => match &n.ready {
                Some((status, _)) if status == "True" => None,
                Some((status, since)) => {
                    let since = since.unwrap_or(i64::MIN / 2);
                    (self.now - since >= self.settings.node_unhealthy_after).then(|| {
                        format!(
                            "its Node {name} is not Ready ({status}) since {}",
                            rfc3339(since)
                        )
                    })
                }
                None => Some(format!("its Node {name} reports no Ready condition")),
            },
        }
    }
}

/// The Machine's health: broken when a remediation was requested, when it shows a symptom by
/// itself ([`Index::symptom`]), or when a person asked for a repair; what it then needs.
pub(super) fn health(index: &Index<'_>, m: &Machine, host: Option<&Host>) -> Health<Metal3Level> {
    // A request is the health checker's (or a person's) verdict: the design's controller
    // acts on it whatever the Node looks like, and so does a once-off `autorepair request`,
    // which asks for the repair itself, not for a check (it really runs, and counts).
    let waiting = Index::waiting_request(m);
    let problem = if m.deleting {
        None
    } else if m.requested {
        Some(format!(
            "remediation requested ({} or {})",
            objects::REQUEST_KEY,
            objects::REMEDIATE_KEY
        ))
    } else if let Some(symptom) = index.symptom(m) {
        Some(symptom)
    } else {
        waiting.map(|level| format!("a {level} was requested (autorepair request)"))
    };
    // Cluster API's hold is said with the problem, so `explain` names it whatever else
    // keeps the Machine waiting.
    let problem = problem.map(|p| match &m.held {
        Some(why) => format!("{p}; Cluster API holds it back: {why}"),
        None => p,
    });
    match problem {
        None => Health::Healthy,
        Some(problem) => Health::Broken {
            need: match waiting {
                // A drain asked for on a Machine that shows nothing worse: just the drain.
                Some(Metal3Level::Drain) if !m.requested && index.symptom(m).is_none() => {
                    Need::Repair(Metal3Level::Drain)
                }
                _ => need(index, m, host),
            },
            problem,
        },
    }
}

/// What a broken Machine needs: a power cycle, unless it was power-cycled within the
/// reboot-loop window (then reprovisioning, where an owner can replace it), or it has no host.
pub(super) fn need(index: &Index<'_>, m: &Machine, host: Option<&Host>) -> Need<Metal3Level> {
    if host.is_none() {
        let why = match &m.host_link {
            Err(why) => why.to_string(),
            Ok(_) => format!(
                "its BareMetalHost {} is not in the objects read",
                m.host.as_deref().unwrap_or("?")
            ),
        };
        return Need::Person(format!(
            "no BareMetalHost to power-cycle ({why}): check the Machine's infrastructure"
        ));
    }
    // A strategy that cannot be read: neither its timeout nor the configuration's is what the
    // request's author asked for.
    if let (Some(Err(why)), Some(r)) = (&m.strategy, &m.remediation) {
        return Need::Person(format!(
            "its {} {r} cannot be served as asked: {why}; fix its AutorepairRemediationTemplate (type Reboot, retryLimit 0 or more, timeoutSeconds or timeout of {} s or more), then let the MachineHealthCheck make the request again",
            objects::REMEDIATION_KIND,
            objects::MIN_STRATEGY_TIMEOUT
        ));
    }
    // A power cycle that failed is not a loop to guard against: the engine's bounded retries
    // (the request's retryLimit) decide whether it is tried again, and without retries its
    // failure parks the Machine anyway.
    let last_failed = Index::last_cycle(m).is_some_and(|(at, result)| {
        result == RepairResult::Failure && Index::last_power_cycle(m) == Some(at)
    });
    if let Some(at) = Index::last_power_cycle(m)
        .filter(|at| !last_failed && index.now - at < index.settings.reboot_loop_window)
    {
        return if m.owner.is_some() {
            Need::Repair(Metal3Level::Reprovision)
        } else {
            Need::Person(format!(
                "it was power-cycled at {} (within reboot_loop_window) and it has no owner to replace it: find out why it keeps failing",
                rfc3339(at)
            ))
        };
    }
    Need::Repair(Metal3Level::PowerCycle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::family::Family;
    use crate::metal3::file::ObjectsFile;
    use crate::metal3::fixture::{self, Fleet};
    use crate::metal3::{Metal3, Settings};

    const NOW: i64 = 1_800_000_000;

    /// A Machine on host h1 whose Node n1 reports `ready` (status, since), if it has a Node.
    fn health_of(node: Option<(&str, i64)>) -> Health<Metal3Level> {
        let mut machine = fixture::Machine::new("ns", "m1").host("h1");
        let mut fleet = Fleet::new().host(fixture::Host::new("ns", "h1"));
        if let Some((status, since)) = node {
            machine = machine.node("n1");
            fleet = fleet.node(fixture::Node::new("n1").ready(status, &rfc3339(since)));
        }
        let mut file = ObjectsFile::in_memory(fleet.machine(machine).build());
        let snap = crate::engine::Backend::<Metal3>::snapshot(&mut file).unwrap();
        let settings = Settings::default();
        let index = Metal3::index(&snap, &settings, NOW);
        let host = index.host(&snap.machines[0]);
        health(&index, &snap.machines[0], host)
    }

    #[test]
    fn a_machine_needs_a_power_cycle_once_its_node_is_not_ready_for_long_enough() {
        let after = Settings::default().node_unhealthy_after;
        let cases = [
            (None, None),
            (Some(("True", NOW - 10 * after)), None),
            (Some(("False", NOW - after + 1)), None),
            (Some(("False", NOW - after)), Some(Metal3Level::PowerCycle)),
            (
                Some(("Unknown", NOW - 10 * after)),
                Some(Metal3Level::PowerCycle),
            ),
        ];
        for (node, want) in cases {
            let got = match health_of(node) {
                Health::Healthy => None,
                Health::Broken {
                    need: Need::Repair(r),
                    ..
                } => Some(r),
                other => panic!("{node:?}: {other:?}"),
            };
            assert_eq!(got, want, "{node:?}");
        }
    }
}
