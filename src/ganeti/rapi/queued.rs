//! Tag writes Ganeti took but did not apply yet. A pass reads the tags as they are, not as the
//! jobs in the queue will leave them: a replica that took over from one killed between
//! queueing its tag jobs and seeing them run would write the same tags again (a second pending
//! tag beside the first, a removal that fails with "Tag(s) … not found"), and a pass that
//! began while a suspend's tag job waits would start the repairs it stops. So the snapshot
//! counts the autorepair tag jobs still queued or running as done, where doing so fails
//! closed, and the pass's own writes on those objects wait for them (`depends`).

use super::*;
use crate::ganeti::tags;

/// One unfinished tag job of ours, from the job list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct QueuedTags {
    pub job: u64,
    pub object: ObjectRef,
    /// `OP_TAGS_SET` (true) or `OP_TAGS_DEL`.
    pub add: bool,
    pub tags: Vec<String>,
}

/// The unfinished tag jobs in `GET /2/jobs?bulk=1` whose reason trail names autorepair, in
/// the order Ganeti took them.
pub(super) fn queued_tag_jobs(listed: &Value) -> Vec<QueuedTags> {
    let mut queued = Vec::new();
    for job in listed.as_array().into_iter().flatten() {
        let Some(id) = job.get("id").and_then(job_id) else {
            continue;
        };
        let status = job
            .get("status")
            .and_then(|s| serde_json::from_value::<JobStatus>(s.clone()).ok());
        // A job of unknown status may still run: it counts.
        if status.is_some_and(JobStatus::is_finished) {
            continue;
        }
        for op in job
            .get("ops")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(q) = tag_op(id, op, true) {
                queued.push(q);
            }
        }
    }
    queued.sort_by_key(|q| q.job);
    queued
}

/// The tag write one opcode makes; with `ours`, only one whose reason trail names autorepair.
pub(super) fn tag_op(job: u64, op: &Value, ours: bool) -> Option<QueuedTags> {
    let add = match op.get("OP_ID")?.as_str()? {
        "OP_TAGS_SET" => true,
        "OP_TAGS_DEL" => false,
        _ => return None,
    };
    let named = || {
        op.get("reason")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.get(1)?.as_str())
            .any(|text| text.starts_with(crate::ganeti::snapshot::REASON_PREFIX))
    };
    if ours && !named() {
        return None;
    }
    let name = op.get("name").and_then(Value::as_str).unwrap_or_default();
    let object = match op.get("kind")?.as_str()? {
        "cluster" => crate::ganeti::cluster(),
        "nodegroup" => crate::ganeti::group(name),
        "node" => crate::ganeti::node(name),
        "instance" => crate::ganeti::instance(name),
        _ => return None,
    };
    let tags = op
        .get("tags")?
        .as_array()?
        .iter()
        .filter_map(|t| Some(t.as_str()?.to_owned()))
        .collect();
    Some(QueuedTags {
        job,
        object,
        add,
        tags,
    })
}

/// Whether a queued change of `tag` counts as done in the snapshot. Counting it fails closed:
/// a suspend or a pending tag added holds at once, a pending tag or a result removed was the
/// watcher's own bookkeeping (a replica must not remove it again). A suspend removed still
/// holds until Ganeti removed it, and policies stay as they are until applied: counting a
/// queued policy could allow more than the fleet does. Read by the tag's kind alone, so that
/// a damaged tag counts as the kind it names (rule 11).
fn counts(add: bool, tag: &str) -> bool {
    match kind_of(tag) {
        Some("suspend" | "suspend-all") => add,
        Some("pending" | "result") => true,
        _ => false,
    }
}

/// The kind word of one of our tags (`suspend`, `pending`, a repair type for a policy…).
fn kind_of(tag: &str) -> Option<&str> {
    tag.strip_prefix(tags::PREFIX)?.split(':').next()
}

/// Whether `tag` is a suspend or suspend-all mark of ours, readable or not.
pub(super) fn is_suspend(tag: &str) -> bool {
    matches!(kind_of(tag), Some("suspend" | "suspend-all"))
}

/// What the queued tag jobs mean for this pass's own writes.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Queued {
    /// The last queued job of each object: a write of this pass on the object depends on it,
    /// so Ganeti applies the writes in order.
    pub last: HashMap<ObjectRef, u64>,
    /// The queued removals of a pending tag that the snapshot counts as done. The repair they
    /// end is over, so the limits have room again; but until Ganeti ran them, the tag is still
    /// on its instance. A pending tag this pass adds waits for them (`depends`), so that the
    /// fleet never shows more repairs under way than the limits allow, not even for the second
    /// between two replicas' jobs.
    pub releases: Vec<u64>,
}

/// Whether `tags` holds a pending tag of ours: added, it starts (or records) a repair;
/// removed, it ends one.
pub(super) fn has_pending(tags: &[String]) -> bool {
    tags.iter().any(|t| kind_of(t) == Some("pending"))
}

/// Counts the queued tag jobs as done on the snapshot's objects, and answers what this pass's
/// writes must wait for.
pub(super) fn apply_queued(snapshot: &mut Snapshot, queued: &[QueuedTags]) -> Queued {
    let mut answer = Queued::default();
    for q in queued {
        let Some(object_tags) = tags_of(snapshot, &q.object) else {
            continue;
        };
        answer.last.insert(q.object.clone(), q.job);
        for tag in q.tags.iter().filter(|t| counts(q.add, t)) {
            let has = object_tags.iter().any(|t| t == tag);
            if q.add && !has {
                object_tags.push(tag.clone());
            } else if !q.add && has {
                object_tags.retain(|t| t != tag);
                if kind_of(tag) == Some("pending") && answer.releases.last() != Some(&q.job) {
                    answer.releases.push(q.job);
                }
            }
        }
    }
    answer
}

fn tags_of<'a>(snapshot: &'a mut Snapshot, object: &ObjectRef) -> Option<&'a mut Vec<String>> {
    use crate::ganeti::kind;
    let name = object.name.as_str();
    match object.kind.as_ref() {
        kind::CLUSTER => Some(&mut snapshot.cluster.tags),
        kind::GROUP => snapshot
            .groups
            .iter_mut()
            .find(|g| g.name == name)
            .map(|g| &mut g.tags),
        kind::NODE => snapshot
            .nodes
            .iter_mut()
            .find(|n| n.name == name)
            .map(|n| &mut n.tags),
        kind::INSTANCE => snapshot
            .instances
            .iter_mut()
            .find(|i| i.name == name)
            .map(|i| &mut i.tags),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ganeti::snapshot::{Group, Instance};

    const PENDING: &str = "ganeti:watcher:autorepair:pending:failover:11111111-2222-3333-4444-555555555555:1795000000:7";
    const RESULT: &str = "ganeti:watcher:autorepair:result:failover:11111111-2222-3333-4444-555555555555:1795000100:success:7";
    const SUSPEND: &str = "ganeti:watcher:autorepair:suspend";
    const POLICY: &str = "ganeti:watcher:autorepair:failover";

    fn op(id: &str, kind: &str, name: Option<&str>, tags: &[&str], reason: &str) -> Value {
        json!({"OP_ID": id, "kind": kind, "name": name, "tags": tags,
               "reason": [["gnt:user", reason, 1], ["gnt:opcode:tags_set", "job=1", 2]]})
    }

    fn job(id: u64, status: &str, ops: Vec<Value>) -> Value {
        json!({"id": id, "status": status, "ops": ops})
    }

    fn snapshot() -> Snapshot {
        Snapshot {
            groups: vec![Group {
                name: "default".into(),
                ..Default::default()
            }],
            instances: vec![Instance {
                name: "a".into(),
                tags: vec![PENDING.into()],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn only_unfinished_tag_jobs_of_ours_are_queued() {
        let ours = "autorepair:11111111-2222-3333-4444-555555555555";
        let listed = json!([
            job(
                5,
                "success",
                vec![op("OP_TAGS_SET", "instance", Some("a"), &[PENDING], ours)]
            ),
            job(
                6,
                "queued",
                vec![op("OP_TAGS_DEL", "instance", Some("a"), &[PENDING], ours)]
            ),
            job(
                7,
                "running",
                vec![op(
                    "OP_TAGS_SET",
                    "cluster",
                    None,
                    &[SUSPEND],
                    "autorepair: suspended by root"
                )]
            ),
            job(
                8,
                "waiting",
                vec![op(
                    "OP_TAGS_SET",
                    "instance",
                    Some("a"),
                    &["x:y"],
                    "gnt-instance add-tags"
                )]
            ),
            job(
                9,
                "queued",
                vec![op("OP_INSTANCE_FAILOVER", "instance", Some("a"), &[], ours)]
            ),
        ]);
        let queued = queued_tag_jobs(&listed);
        assert_eq!(
            queued,
            vec![
                QueuedTags {
                    job: 6,
                    object: crate::ganeti::instance("a"),
                    add: false,
                    tags: vec![PENDING.into()]
                },
                QueuedTags {
                    job: 7,
                    object: crate::ganeti::cluster(),
                    add: true,
                    tags: vec![SUSPEND.into()]
                },
            ]
        );
    }

    #[test]
    fn queued_writes_count_as_done_where_that_fails_closed() {
        let q = |job, object: ObjectRef, add, tags: &[&str]| QueuedTags {
            job,
            object,
            add,
            tags: tags.iter().map(|t| t.to_string()).collect(),
        };
        let mut snap = snapshot();
        snap.cluster.tags = vec![POLICY.into()];
        let queued = apply_queued(
            &mut snap,
            &[
                // A replica killed after queueing its result: the pending tag is as good as gone.
                q(3, crate::ganeti::instance("a"), false, &[PENDING]),
                q(4, crate::ganeti::instance("a"), true, &[RESULT]),
                // A suspend queued holds at once; its removal only once applied.
                q(5, crate::ganeti::group("default"), true, &[SUSPEND]),
                q(6, crate::ganeti::cluster(), false, &[POLICY]),
                q(
                    7,
                    crate::ganeti::cluster(),
                    true,
                    &["ganeti:watcher:autorepair:reinstall"],
                ),
                q(8, crate::ganeti::instance("gone"), true, &[SUSPEND]),
            ],
        );
        assert_eq!(snap.instances[0].tags, vec![RESULT.to_owned()]);
        assert_eq!(snap.groups[0].tags, vec![SUSPEND.to_owned()]);
        assert_eq!(snap.cluster.tags, vec![POLICY.to_owned()], "policies wait");
        assert_eq!(queued.last.get(&crate::ganeti::instance("a")), Some(&4));
        assert_eq!(queued.last.get(&crate::ganeti::cluster()), Some(&7));
        assert_eq!(queued.last.get(&crate::ganeti::instance("gone")), None);
        assert_eq!(
            queued.releases,
            vec![3],
            "the pending tag job 3 removes is a release"
        );

        let mut snap = snapshot();
        snap.groups[0].tags = vec![SUSPEND.into()];
        apply_queued(
            &mut snap,
            &[q(9, crate::ganeti::group("default"), false, &[SUSPEND])],
        );
        assert_eq!(
            snap.groups[0].tags,
            vec![SUSPEND.to_owned()],
            "a resume waits"
        );
        // A second pending tag queued by a replica that died counts: the repair is under way.
        let mut snap = snapshot();
        snap.instances[0].tags.clear();
        apply_queued(
            &mut snap,
            &[q(10, crate::ganeti::instance("a"), true, &[PENDING])],
        );
        assert_eq!(snap.instances[0].tags, vec![PENDING.to_owned()]);
    }

    #[test]
    fn a_removal_of_a_pending_tag_not_on_the_instance_releases_nothing() {
        // Removed by hand already, or by another job: nothing waits for this one.
        let mut snap = snapshot();
        snap.instances[0].tags.clear();
        let queued = apply_queued(
            &mut snap,
            &[QueuedTags {
                job: 11,
                object: crate::ganeti::instance("a"),
                add: false,
                tags: vec![PENDING.into()],
            }],
        );
        assert!(queued.releases.is_empty());
        assert!(has_pending(&[PENDING.into()]));
        assert!(!has_pending(&[RESULT.into(), SUSPEND.into()]));
    }
}
