//! autorepair as a Cluster API external remediation provider: what it reports in the `status`
//! of each AutorepairRemediation a MachineHealthCheck made (docs/metal3.md, "With Cluster
//! API's MachineHealthCheck").
//!
//! The object itself is only a request: [`objects::Snapshot::from_items`] makes its Machine
//! requested until the Machine records the object (by uid) as answered, and the engine and the protocol
//! serve it like any request. What is reported here is recomputed every pass from the
//! Machine's annotations, its host and Node, and written only when it changes: the `status` is
//! a report for people and tools, never read back to decide anything.

use super::health::need;
use super::objects::{self, Conditions, Machine, Remediation, Report};
use super::{Index, Metal3, Metal3Level, OpId, Step, protocol};
use crate::engine::family::{Need, Progress};
use crate::engine::marks::{Codec, Mark};
use crate::engine::plan::FleetSummary;
use crate::engine::policy::{effective, object_policy};
use crate::engine::text::rfc3339;
use crate::engine::{Blocked, ObjectRef, RepairResult, TargetPlan};

/// A `status` write for every live remediation object whose report changed, once the pass
/// has decided: `plans` and `fleet` say which limit holds a Machine back, if one does.
pub fn progress(
    index: &Index<'_>,
    plans: &[TargetPlan<Metal3>],
    fleet: &FleetSummary,
) -> Vec<Progress<Metal3>> {
    let decided: std::collections::HashMap<&str, &TargetPlan<Metal3>> = plans
        .iter()
        .filter(|p| p.blocked.is_some())
        .map(|p| (p.name.as_str(), p))
        .collect();
    // What each Machine's plan writes this pass: a result that ends a power cycle or a
    // reprovisioning (served, refused or failed) answers its remediation object.
    // A failure that will be retried answers nothing: the request stands, as CAPM3's does
    // until its retryLimit is spent.
    let ending: std::collections::HashMap<&str, String> = plans
        .iter()
        .filter(|p| !matches!(p.blocked, Some(Blocked::RetryWait { .. })))
        .filter_map(|p| Some((p.name.as_str(), p.actions.iter().find_map(answer_written)?)))
        .collect();
    let machines: std::collections::HashMap<&str, &Machine> = index
        .snap
        .machines
        .iter()
        .filter(|m| m.remediation.is_some())
        .map(|m| (m.key.as_str(), m))
        .collect();
    index
        .snap
        .remediations
        .iter()
        .filter(|r| !r.deleting)
        .filter_map(|r| {
            let m = machines.get(r.machine.as_deref()?)?;
            (m.remediation.as_deref() == Some(r.key.as_str())).then_some((r, *m))
        })
        .flat_map(|(r, m)| {
            let limit = decided
                .get(m.key.as_str())
                .and_then(|p| held_by_limit(p, fleet));
            let mut report = report(index, m, r, limit);
            if let (Some(Ok(objects::Strategy { retry_limit: Some(n @ 1..), .. })), "RemediationFailed") =
                (&m.strategy, report.reason)
            {
                report.message.push_str(&format!(
                    "; given up after {n} retries (spec.strategy.retryLimit {n})"
                ));
            }
            let mut out = Vec::new();
            // Recorded before the result that answers it (this target's own work goes first):
            // a pass killed between the two leaves it answered, never a result beside a
            // request that looks new.
            let serving = cycle_under_way(m)
                .map(|id| (id, "power cycle under way"))
                .or_else(|| {
                    ending
                        .get(m.key.as_str())
                        .map(|id| (id.clone(), "result written now"))
                });
            if let Some((repair, by)) = serving.filter(|_| !m.answers(r)) {
                out.push(Progress {
                    target: Some(m.key.clone()),
                    object: ObjectRef::new(objects::kind::MACHINE, m.key.clone()),
                    reason: format!(
                        "machine {}: {} {} is answered by this Machine's {by} ({repair})",
                        m.key,
                        objects::REMEDIATION_KIND,
                        r.key,
                    ),
                    op: super::Op::AnswerRequest {
                        machine: m.key.clone(),
                        record: super::marks::answered_value(&repair, &r.identity),
                    },
                });
            }
            if let Some((owner, conditions)) = hand_over_to(m, &report) {
                report.message = format!(
                    "{}; handed over to its owner {owner} to replace it ({} False)",
                    report.message,
                    objects::OWNER_REMEDIATED_CONDITION
                );
                if !conditions.handed_over() {
                    out.push(Progress {
                        target: None,
                        object: ObjectRef::new(objects::kind::MACHINE, m.key.clone()),
                        reason: format!("machine {}: autorepair gave up: {}", m.key, report.reason),
                        op: super::Op::HandOver {
                            machine: m.key.clone(),
                            conditions: conditions.clone(),
                            message: format!(
                                "autorepair gave up ({}): {}",
                                report.reason, report.message
                            ),
                        },
                    });
                }
                // As CAPM3 marks the host when it gives up, so that the Machine replacing
                // this one is not placed on it; a person removes the mark.
                if let Some(host) = index.host(m).filter(|h| !h.unhealthy) {
                    out.push(Progress {
                        target: None,
                        object: ObjectRef::new(objects::kind::HOST, host.key.clone()),
                        reason: format!(
                            "machine {}: autorepair gave up: its host {} is marked so that no new Machine is placed on it",
                            m.key, host.key
                        ),
                        op: super::Op::MarkHostUnhealthy {
                            machine: m.key.clone(),
                            host: host.key.clone(),
                        },
                    });
                }
            }
            if r.reported.as_ref().is_some_and(|now| report.matches(now)) {
                return out;
            }
            report.since = r
                .reported
                .as_ref()
                .filter(|now| now.status == report.status)
                .and_then(|now| now.since.clone());
            out.insert(
                0,
                Progress {
                    target: None,
                    object: ObjectRef::new(objects::kind::REMEDIATION, r.key.clone()),
                    reason: format!("machine {}: {}", m.key, report.message),
                    op: super::Op::ReportRemediation {
                        remediation: r.key.clone(),
                        report,
                    },
                },
            );
            out
        })
        .collect()
}

/// The repair whose power-cycle or reprovision result a plan's action writes, if it does.
fn answer_written(a: &crate::engine::Action<Metal3>) -> Option<String> {
    let crate::engine::Action::AddMarks { marks, .. } = a else {
        return None;
    };
    marks
        .iter()
        .find_map(|t| match super::marks::Annotations::parse(t) {
            Ok(Mark::Result(r)) if r.repair >= Metal3Level::PowerCycle => Some(r.id.to_owned()),
            _ => None,
        })
}

/// The repair whose power cycle is recorded under way on the Machine, if one is.
fn cycle_under_way(m: &Machine) -> Option<String> {
    Index::pending(m)
        .into_iter()
        .find(|p| {
            p.ops
                .iter::<OpId>()
                .any(|id| id.step == Step::PowerCycle && id.repair == p.id)
        })
        .map(|p| p.id.to_owned())
}

/// The reason of a request failed because its host is off on purpose (`spec.online` false):
/// failed as CAPM3 fails it, not handed over.
const HOST_OFFLINE: &str = "HostPoweredOffOnPurpose";

/// Whom a Machine whose request autorepair gave up on (its report `Failed`: the power cycle
/// failed, the reboot-loop guard or the policy refused another, no repair can serve it) is
/// handed over to, as Cluster API's external remediation contract has it: its controller
/// owner (MachineSet or control plane), which replaces it once its `OwnerRemediated`
/// condition is `False`. autorepair never deletes the Machine for this; a Machine without
/// owner, one being deleted, or one of OpenShift's is left to a person as before.
fn hand_over_to<'m>(m: &'m Machine, report: &Report) -> Option<(&'m ObjectRef, &'m Conditions)> {
    if report.phase != "Failed" || report.reason == HOST_OFFLINE || m.deleting {
        return None;
    }
    Some((m.owner.as_ref()?, m.conditions.as_ref()?))
}

/// The limit that holds a Machine back this pass, as its report's reason and message: a mass
/// failure (which limit, its value, how many are down), a storm's cool-down, a rate window, a
/// retry's back-off or no free slot.
pub fn held_by_limit(
    plan: &TargetPlan<Metal3>,
    fleet: &FleetSummary,
) -> Option<(&'static str, String)> {
    match plan.blocked.as_ref()? {
        Blocked::MassFailure { scope, limit } => Some((
            "TooManyUnhealthy",
            fleet.halt(scope).map_or_else(
                || format!("mass failure in {scope} ({limit})"),
                |h| h.message.clone(),
            ),
        )),
        Blocked::RetryWait {
            failures,
            retries,
            at,
        } => Some((
            "RetryBackoff",
            format!(
                "the power cycle failed {failures} time(s) in a row: retry {failures} of {retries} (spec.strategy.retryLimit) at {} (retry_backoff)",
                rfc3339(*at)
            ),
        )),
        Blocked::Cooldown { scope, .. } => Some((
            "StormCooldown",
            fleet
                .cooldowns
                .iter()
                .find(|c| c.scope == *scope)
                .map_or_else(
                    || {
                        plan.blocked
                            .as_ref()
                            .map(ToString::to_string)
                            .unwrap_or_default()
                    },
                    |c| c.message.clone(),
                ),
        )),
        Blocked::RateLimit { limit, .. } => Some((
            "RateLimited",
            plan.notes
                .iter()
                .rev()
                .find(|n| n.contains(limit))
                .map_or_else(|| format!("repair rate spent ({limit})"), |n| n.to_string()),
        )),
        Blocked::NoSlot { limit } => Some((
            "NoFreeSlot",
            plan.notes
                .iter()
                .rev()
                .find(|n| n.contains(limit))
                .map_or_else(|| format!("no free slot ({limit})"), |n| n.to_string()),
        )),
        _ => None,
    }
}

/// Where the request `r` for the Machine `m` stands; `limit` is what [`held_by_limit`] says
/// of it this pass.
pub fn report(
    index: &Index<'_>,
    m: &Machine,
    r: &Remediation,
    limit: Option<(&'static str, String)>,
) -> Report {
    let report = |phase, status, reason, message: String| Report {
        phase,
        status,
        reason,
        message,
        since: None,
    };
    let waiting = |reason, message: String| report("Waiting", "Unknown", reason, message);
    let explain = format!("autorepair explain machine/{}", m.key);
    let cycling = Index::pending(m)
        .into_iter()
        .filter(|p| p.repair == Metal3Level::PowerCycle)
        .find(|p| p.ops.iter::<OpId>().any(|id| id.step == Step::PowerCycle));
    if let Some(p) = cycling {
        let (_, phase, _) = protocol::judge(index, m, Step::PowerCycle, p.since);
        return report(
            "Running",
            "Unknown",
            "PowerCycling",
            format!(
                "power cycle under way since {}: {}",
                rfc3339(p.since),
                phase.as_str()
            ),
        );
    }
    // Between the tries of a request with retries left: neither given up nor answered.
    if let Some(("RetryBackoff", why)) = &limit {
        return waiting("RetryBackoff", format!("{why} ({explain})"));
    }
    if let Some(out) = objects::answer(m).filter(|_| m.answers(r)) {
        let at = rfc3339(out.at);
        let cycled = out.ops.iter::<OpId>().any(|id| id.step == Step::PowerCycle);
        return match (out.result, out.repair) {
            (RepairResult::Success, Metal3Level::Reprovision) => report(
                "Succeeded",
                "True",
                "Reprovisioned",
                format!("the Machine was deleted at {at} for its owner to replace it"),
            ),
            (RepairResult::Success, _) if cycled => report(
                "Succeeded",
                "True",
                "PowerCycled",
                format!("power-cycled: host on and Node Ready again at {at}"),
            ),
            (RepairResult::Success, _) => report(
                "Succeeded",
                "True",
                "NothingToDo",
                format!("resolved at {at} without a power cycle"),
            ),
            // Refused (enoperm), or given up for a person (a failure without a power cycle):
            // the reboot-loop guard says so when it was the reason.
            (RepairResult::Enoperm, _) | (RepairResult::Failure, _) if !cycled => {
                match Index::last_power_cycle(m)
                    .filter(|c| *c <= out.at && out.at - c < index.settings.reboot_loop_window)
                {
                    Some(c) => report(
                        "Failed",
                        "False",
                        "RebootLoopGuard",
                        format!(
                            "refused at {at}: power-cycled at {} already, within reboot_loop_window ({}s); a power cycle again would be a reboot loop",
                            rfc3339(c),
                            index.settings.reboot_loop_window
                        ),
                    ),
                    None if out.result == RepairResult::Failure => report(
                        "Failed",
                        "False",
                        "NeedsPerson",
                        format!("given up at {at}: no automatic repair can serve it ({explain})"),
                    ),
                    None => report(
                        "Failed",
                        "False",
                        "NotAllowed",
                        format!(
                            "refused at {at}: the policy does not allow what the Machine needs ({explain})"
                        ),
                    ),
                }
            }
            _ => report(
                "Failed",
                "False",
                "RemediationFailed",
                format!(
                    "the {} failed at {at}; the Machine is parked until `autorepair clear machine/{}` ({explain})",
                    out.repair, m.key
                ),
            ),
        };
    }
    if m.deleting {
        return waiting("MachineDeleting", "the Machine is being deleted".into());
    }
    if let Some(why) = &m.held {
        return waiting(
            "HeldByClusterAPI",
            format!("Cluster API holds it back: {why}"),
        );
    }
    if let Some(policy) = suspended(index, m) {
        return waiting(
            "Suspended",
            format!("{policy}: no repair starts ({explain})"),
        );
    }
    // As CAPM3: a host someone powered off on purpose is not power-cycled, and the request
    // fails at once, without a hand-over (the Machine is not given up on for a fault).
    if let Some(h) = index.host(m).filter(|h| !h.online) {
        return report(
            "Failed",
            "False",
            HOST_OFFLINE,
            format!(
                "host {} has spec.online false: someone powered it off on purpose, and autorepair does not power it on; set spec.online true (or clear the request) ({explain})",
                h.key
            ),
        );
    }
    match need(index, m, index.host(m)) {
        Need::Person(why) => waiting("NeedsPerson", why),
        Need::Repair(Metal3Level::Reprovision) => waiting(
            "RebootLoopGuard",
            format!(
                "power-cycled within reboot_loop_window ({}s): not again ({explain})",
                index.settings.reboot_loop_window
            ),
        ),
        _ => match index.host(m).map(protocol::can_power_off) {
            Some(Err(why)) => waiting("HostNotReady", why.to_string()),
            _ if limit.is_some() => {
                let (reason, why) = limit.expect("checked");
                waiting(reason, format!("{why} ({explain})"))
            }
            _ => waiting(
                "Waiting",
                format!("waiting to start: a fleet or zone limit, or a free slot ({explain})"),
            ),
        },
    }
}

/// The suspend that holds the Machine back, nearest first as the engine reads it.
fn suspended(index: &Index<'_>, m: &Machine) -> Option<crate::engine::Policy<Metal3Level>> {
    // (its policy, its `suspend --all`)
    let of = |marks: &[String]| {
        let own = object_policy(
            marks.iter().filter_map(|t| {
                super::marks::Annotations::parse(t)
                    .ok()
                    .filter(|mark| matches!(mark, Mark::Policy(_) | Mark::Suspend { .. }))
                    .map(|mark| (t.as_str(), mark))
            }),
            index.now,
        );
        (own.policy, own.over_all)
    };
    let scopes: Vec<_> = index
        .scope_chain(m)
        .into_iter()
        .map(|s| of(&s.marks))
        .collect();
    // A scope's `suspend --all` holds the Machine whatever nearer objects say.
    let held = effective(scopes.iter().map(|p| p.1));
    let chain = std::iter::once(of(&m.marks).0).chain(scopes.iter().map(|p| p.0));
    held.or_else(|| effective(chain))
        .filter(|p| p.is_suspended())
}
