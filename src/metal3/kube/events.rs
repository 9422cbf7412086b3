//! Events on the Machine and its BareMetalHost for each step of a repair, so that `kubectl
//! describe machine` tells the story: the power-off, the Node fenced, the power-on, the request
//! served, and how the repair ended (success, failure, or refused). Best effort: an Event that
//! cannot be posted is logged and the pass goes on (a repair never depends on its story), and
//! like every write it is asked of the guard first (a replica that lost the lease, or a stop
//! signal, posts nothing).

use super::{Home, Inner};
use crate::engine::marks::{Codec, Mark};
use crate::engine::{ObjectRef, RepairResult};
use crate::metal3::marks::Annotations;
use crate::metal3::objects::{self, kind};
use crate::metal3::{Op, PowerMode};
use ::kube::api::PostParams;
use ::kube::core::Request;
use serde_json::json;

/// The Events' `source.component` and `reportingController`.
const COMPONENT: &str = "autorepair";

/// One Event: on what, Normal or Warning, its reason (CamelCase, as `kubectl` shows it) and
/// message.
pub(super) struct Story {
    pub object: ObjectRef,
    pub warning: bool,
    pub reason: &'static str,
    pub message: String,
}

fn normal(object: ObjectRef, reason: &'static str, message: String) -> Story {
    Story {
        object,
        warning: false,
        reason,
        message,
    }
}

/// The Events an operation done makes.
pub(super) fn of_op(op: &Op) -> Vec<Story> {
    let machine = |m: &str| ObjectRef::new(kind::MACHINE, m);
    let host = |h: &str| ObjectRef::new(kind::HOST, h);
    let mode = |m: &PowerMode| match m {
        PowerMode::Hard => "hard",
        PowerMode::Soft => "soft",
    };
    match op {
        Op::PowerOff {
            machine: m,
            host: h,
            mode: pm,
        } => vec![
            normal(
                machine(m),
                "PowerCycleStarted",
                format!(
                    "power cycle started: host {h} is powered off ({} power-off, {})",
                    mode(pm),
                    objects::REBOOT_KEY
                ),
            ),
            normal(
                host(h),
                "PowerOff",
                format!(
                    "autorepair powers this host off ({} power-off) to fence machine {m}",
                    mode(pm)
                ),
            ),
        ],
        Op::DeleteNode { machine: m, node } => vec![normal(
            machine(m),
            "NodeFenced",
            format!(
                "its host is off: Node {node} deleted, so its workloads start elsewhere (its labels and annotations are kept on the Machine)"
            ),
        )],
        Op::TaintNode { machine: m, node } => vec![normal(
            machine(m),
            "NodeFenced",
            format!(
                "its host is off: Node {node} tainted {}, so its workloads start elsewhere",
                objects::OUT_OF_SERVICE_TAINT
            ),
        )],
        Op::PowerOn { host: h } => vec![normal(
            host(h),
            "PowerOn",
            format!(
                "autorepair removed {}: the host powers on",
                objects::REBOOT_KEY
            ),
        )],
        Op::ClearRequest { machine: m } => vec![normal(
            machine(m),
            "RemediationRequestServed",
            "power cycle done (host on, Node Ready): the remediation request is removed".into(),
        )],
        Op::DeleteMachine { machine: m } => vec![normal(
            machine(m),
            "Reprovisioning",
            "deleted by autorepair so that its owner replaces it".into(),
        )],
        Op::HandOver {
            machine: m,
            message,
            ..
        } => vec![Story {
            object: machine(m),
            warning: true,
            reason: "HandedToOwner",
            message: format!("{message}: its owner is to replace it (OwnerRemediated False)"),
        }],
        Op::MarkHostUnhealthy {
            machine: m,
            host: h,
        } => vec![Story {
            object: ObjectRef::new(kind::HOST, h.clone()),
            warning: true,
            reason: "MarkedUnhealthy",
            message: format!(
                "autorepair gave up on machine {m}: no new Machine is to be placed on this host until a person removes {}",
                objects::UNHEALTHY_KEY
            ),
        }],
        // A report on the remediation object tells of the Machine's story, told already.
        Op::Drain { .. }
        | Op::RestoreNode { .. }
        | Op::UntaintNode { .. }
        | Op::AnswerRequest { .. }
        | Op::ReportRemediation { .. } => Vec::new(),
    }
}

/// The Events result marks written on a Machine make: how a repair ended.
pub(super) fn of_marks(object: &ObjectRef, added: &[String], why: &str) -> Vec<Story> {
    if !object.is(kind::MACHINE) {
        return Vec::new();
    }
    added
        .iter()
        .filter_map(|t| match Annotations::parse(t) {
            Ok(Mark::Result(r)) => Some((r.repair, r.id.to_owned(), r.result)),
            _ => None,
        })
        .map(|(level, id, result)| {
            let (warning, reason, message) = match result {
                RepairResult::Success => (
                    false,
                    "RemediationSucceeded",
                    format!("{level} repair {id} succeeded"),
                ),
                RepairResult::Failure => (
                    true,
                    "RemediationFailed",
                    format!(
                        "{level} repair {id} failed: {why}; nothing more starts on it until `autorepair clear`"
                    ),
                ),
                RepairResult::Enoperm => (
                    true,
                    "RemediationRefused",
                    format!("{level} refused: {why}"),
                ),
            };
            Story {
                object: object.clone(),
                warning,
                reason,
                message,
            }
        })
        .collect()
}

/// An Event's name as client-go's recorder makes it: the object's name and the time in hex
/// nanoseconds. The API server lists Events by name, and stores their timestamps to the second,
/// so only a name that grows with time keeps `kubectl get events` in the order things happened.
/// Two Events in one nanosecond (or a clock stepped back) get the next free one.
fn event_name(object: &str, now: jiff::Timestamp) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST: AtomicU64 = AtomicU64::new(0);
    let nanos = u64::try_from(now.as_nanosecond()).unwrap_or(0);
    let prev = LAST
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |last| {
            Some(nanos.max(last + 1))
        })
        .unwrap_or_default();
    format!("{object}.{:x}", nanos.max(prev + 1))
}

impl Inner {
    /// Posts the Events (core/v1) on their objects, in the objects' namespaces. Never fails.
    pub(super) async fn tell(&self, stories: Vec<Story>) {
        for s in stories {
            if self.may_write().is_err() {
                return;
            }
            let Ok(live) = self.live(&s.object) else {
                continue;
            };
            let (Home::Management, Some(ns)) = (&live.home, live.namespace.as_deref()) else {
                continue;
            };
            let now = jiff::Timestamp::now();
            let body = json!({
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {
                    "name": event_name(&live.name, now),
                    "namespace": ns,
                },
                "involvedObject": {
                    "apiVersion": live.api.api_version,
                    "kind": live.api.kind,
                    "name": live.name,
                    "namespace": ns,
                    "uid": live.uid,
                },
                "reason": s.reason,
                "message": s.message,
                "type": if s.warning { "Warning" } else { "Normal" },
                "source": {"component": COMPONENT},
                "reportingComponent": COMPONENT,
                "reportingInstance": COMPONENT,
                "firstTimestamp": now.to_string(),
                "lastTimestamp": now.to_string(),
                "count": 1,
            });
            let path = format!("/api/v1/namespaces/{ns}/events");
            let posted = match Request::new(&path)
                .create(&PostParams::default(), body.to_string().into_bytes())
            {
                Ok(mut req) => {
                    if let Some(Ok(uri)) =
                        crate::k8s::tidy_query(&req.uri().to_string()).map(|u| u.parse())
                    {
                        *req.uri_mut() = uri;
                    }
                    self.mgmt
                        .client
                        .request_text(req)
                        .await
                        .map(drop)
                        .map_err(|e| e.to_string())
                }
                Err(e) => Err(e.to_string()),
            };
            if let Err(e) = posted {
                tracing::warn!(object = %s.object, reason = s.reason, error = %e, "event not posted (the repair goes on)");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_sort_in_the_order_they_were_made() {
        let t = |s: i64| jiff::Timestamp::from_second(s).expect("time");
        // Same instant twice, a later one, then a clock stepped back: names still grow.
        let names: Vec<String> = [
            t(1_800_000_000),
            t(1_800_000_000),
            t(1_800_000_001),
            t(1_700_000_000),
        ]
        .into_iter()
        .map(|at| event_name("m1", at))
        .collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted, names, "distinct and in order");
        assert!(
            names[0].starts_with("m1.") && names[0].len() == "m1.".len() + 16,
            "{names:?}"
        );
    }

    #[test]
    fn each_step_and_each_end_makes_its_event() {
        let m = || "ns/m1".to_owned();
        let steps: Vec<(Op, Vec<&str>)> = vec![
            (
                Op::PowerOff {
                    machine: m(),
                    host: "ns/h1".into(),
                    mode: PowerMode::Hard,
                },
                vec!["machine/ns/m1 PowerCycleStarted", "host/ns/h1 PowerOff"],
            ),
            (
                Op::DeleteNode {
                    machine: m(),
                    node: "n1".into(),
                },
                vec!["machine/ns/m1 NodeFenced"],
            ),
            (
                Op::TaintNode {
                    machine: m(),
                    node: "n1".into(),
                },
                vec!["machine/ns/m1 NodeFenced"],
            ),
            (
                Op::PowerOn {
                    host: "ns/h1".into(),
                },
                vec!["host/ns/h1 PowerOn"],
            ),
            (
                Op::ClearRequest { machine: m() },
                vec!["machine/ns/m1 RemediationRequestServed"],
            ),
            (Op::Drain { node: "n1".into() }, vec![]),
        ];
        for (op, expected) in steps {
            let told: Vec<String> = of_op(&op)
                .iter()
                .map(|s| format!("{} {}", s.object, s.reason))
                .collect();
            assert_eq!(told, expected, "{op}");
        }
        let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
        let machine = ObjectRef::new(kind::MACHINE, "ns/m1");
        let ends = [
            ("success:power-cycle.{id}", false, "RemediationSucceeded"),
            ("failure:", true, "RemediationFailed"),
            ("enoperm:", true, "RemediationRefused"),
        ];
        for (end, warning, reason) in ends {
            let end = end.replace("{id}", id);
            let mark = format!("autorepair.io/repair.{id}=result:power-cycle:5:{end}");
            let told = of_marks(&machine, std::slice::from_ref(&mark), "why");
            assert_eq!(told.len(), 1, "{mark}");
            assert_eq!((told[0].warning, told[0].reason), (warning, reason));
        }
        // Policy marks, and marks on other objects, tell nothing.
        assert!(of_marks(&machine, &["autorepair.io/policy=drain".into()], "").is_empty());
        let scope = ObjectRef::new(kind::MACHINE_SET, "ns/ms1");
        let mark = format!("autorepair.io/repair.{id}=result:power-cycle:5:failure:");
        assert!(of_marks(&scope, &[mark], "").is_empty());
    }
}
