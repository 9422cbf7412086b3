//! The brake from any host: while a pass writes and while it waits for its tag jobs, it
//! watches the fleet's own suspend marks of the scopes it writes under (the cluster's tags,
//! each group's of the instances it wrote to) and the tag jobs queued since its snapshot. A
//! suspend given anywhere (the operator's laptop, cron on the master, `gnt-cluster add-tags`)
//! stops the pass as the local brake file does on this host. While it waits, one small GET of
//! the job ids every 100 ms, and one per scope every second.

use super::queued::is_suspend;
use super::*;
use std::collections::{BTreeSet, HashSet};

/// What the pass's snapshot knew, and what it wrote under since.
#[derive(Debug, Default)]
pub(super) struct FleetWatch {
    /// Only a pass watches (it asks guards before its writes); an admin verb does not.
    pub on: bool,
    /// The suspend marks of the cluster and of each group as the snapshot counted them
    /// (queued ones included): only a mark not among them is a new suspend.
    pub known: HashMap<ObjectRef, BTreeSet<String>>,
    /// Each instance's group, by name.
    pub group_of: HashMap<String, String>,
    /// The scopes this pass wrote under: the cluster, the groups of its instances.
    pub scopes: BTreeSet<ObjectRef>,
    /// The instances this pass wrote to: a suspend of one of them queued elsewhere counts.
    pub instances: HashSet<String>,
    /// The highest job id the snapshot listed or the watch examined: newer jobs are looked at.
    pub seen_job: u64,
    /// The jobs this pass submitted itself.
    pub own: HashSet<u64>,
    pub last: Option<Instant>,
    /// When the scopes' tags were last read: less often than the job list (see
    /// [`TAGS_EVERY`]).
    pub last_tags: Option<Instant>,
    /// The scope whose suspend appeared, once one did.
    pub suspended: Option<ObjectRef>,
}

impl FleetWatch {
    /// Starts from a snapshot whose queued tag jobs were counted, `listed` the job list read.
    pub fn start(snapshot: &Snapshot, listed: &Value) -> FleetWatch {
        let suspends = |tags: &[String]| -> BTreeSet<String> {
            tags.iter().filter(|t| is_suspend(t)).cloned().collect()
        };
        let mut known = HashMap::new();
        known.insert(crate::ganeti::cluster(), suspends(&snapshot.cluster.tags));
        for g in &snapshot.groups {
            known.insert(crate::ganeti::group(&g.name), suspends(&g.tags));
        }
        let group_name: HashMap<&str, &str> = snapshot
            .groups
            .iter()
            .map(|g| (g.uuid.as_str(), g.name.as_str()))
            .collect();
        let node_group: HashMap<&str, &str> = snapshot
            .nodes
            .iter()
            .filter_map(|n| Some((n.name.as_str(), *group_name.get(n.group_uuid.as_str())?)))
            .collect();
        let group_of = snapshot
            .instances
            .iter()
            .filter_map(|i| {
                Some((
                    i.name.clone(),
                    (*node_group.get(i.pnode.as_str())?).to_owned(),
                ))
            })
            .collect();
        let seen_job = listed
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|j| j.get("id").and_then(job_id))
            .max()
            .unwrap_or(0);
        FleetWatch {
            known,
            group_of,
            scopes: BTreeSet::from([crate::ganeti::cluster()]),
            seen_job,
            ..FleetWatch::default()
        }
    }

    /// Notes a write on `object`: its scopes are watched from now on.
    pub fn writes_on(&mut self, object: &ObjectRef) {
        if object.is(crate::ganeti::kind::INSTANCE) {
            if let Some(g) = self.group_of.get(&object.name) {
                self.scopes.insert(crate::ganeti::group(g));
            }
            self.instances.insert(object.name.clone());
        } else if object.is(crate::ganeti::kind::GROUP) {
            self.scopes.insert(object.clone());
        }
    }

    /// The scope among `now` (tags read now, per scope) that carries a suspend mark the
    /// snapshot did not: the first one, as they are ordered.
    pub fn new_suspend<'a>(
        &self,
        now: impl IntoIterator<Item = (&'a ObjectRef, Vec<String>)>,
    ) -> Option<ObjectRef> {
        now.into_iter()
            .find(|(scope, tags)| {
                let known = self.known.get(*scope);
                tags.iter()
                    .any(|t| is_suspend(t) && known.is_none_or(|k| !k.contains(t)))
            })
            .map(|(scope, _)| scope.clone())
    }

    /// The watched object a job adds a suspend mark to, if it does and did not fail.
    pub fn suspends(&self, job: &Value) -> Option<ObjectRef> {
        let status = job
            .get("status")
            .and_then(|s| serde_json::from_value::<JobStatus>(s.clone()).ok());
        if matches!(status, Some(JobStatus::Error | JobStatus::Canceled)) {
            return None;
        }
        let id = job.get("id").and_then(job_id).unwrap_or(0);
        job.get("ops")?
            .as_array()?
            .iter()
            .filter_map(|op| super::queued::tag_op(id, op, false))
            .find(|q| {
                q.add
                    && q.tags.iter().any(|t| is_suspend(t))
                    && (self.scopes.contains(&q.object)
                        || (q.object.is(crate::ganeti::kind::INSTANCE)
                            && self.instances.contains(&q.object.name)))
            })
            .map(|q| q.object)
    }
}

/// How often the watch reads the fleet while the pass writes, and while it waits.
pub(super) const BEFORE_WRITES: Duration = Duration::from_millis(1000);
pub(super) const WHILE_WAITING: Duration = Duration::from_millis(100);
/// Every tag write in Ganeti is a job, so a new suspend shows first in the job list: one
/// small read, made at [`WHILE_WAITING`]. The scopes' tags (one read each) are the fallback,
/// for a suspend whose job ended and left the list between two looks: read once a second.
pub(super) const TAGS_EVERY: Duration = Duration::from_millis(1000);

impl Rapi {
    /// Reads the fleet's suspend marks of the watched scopes, and the jobs queued since the
    /// snapshot, unless it did less than `every` ago. A suspend found halts the pass (the same
    /// halt as the operator's brake file): every later call says so at once. A read that fails
    /// stops nothing: the write after it fails too, or the next look finds the suspend.
    pub(super) fn watch_fleet(&mut self, every: Duration) -> Result<(), BackendError> {
        if !self.watch.on {
            return Ok(());
        }
        if let Some(object) = &self.watch.suspended {
            return Err(halted(object));
        }
        if self.watch.last.is_some_and(|t| t.elapsed() < every) {
            return Ok(());
        }
        self.watch.last = Some(Instant::now());
        let read_tags = self
            .watch
            .last_tags
            .is_none_or(|t| t.elapsed() >= TAGS_EVERY);
        let scopes: Vec<ObjectRef> = if read_tags {
            self.watch.last_tags = Some(Instant::now());
            self.watch.scopes.iter().cloned().collect()
        } else {
            Vec::new()
        };
        let mut paths: Vec<String> = scopes.iter().map(Self::object_path).collect();
        paths.push("/2/jobs".into());
        let mut answers = self.get_all(&paths);
        let listed = answers.pop();
        let now = scopes.iter().zip(answers).filter_map(|(scope, answer)| {
            let tags: Vec<String> = answer
                .ok()?
                .as_array()?
                .iter()
                .filter_map(|t| Some(t.as_str()?.to_owned()))
                .collect();
            Some((scope, tags))
        });
        let mut found = self.watch.new_suspend(now);
        if found.is_none()
            && let Some(Ok(listed)) = listed
        {
            let new: Vec<u64> = listed
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|j| j.get("id").and_then(job_id))
                .filter(|id| *id > self.watch.seen_job && !self.watch.own.contains(id))
                .collect();
            let paths: Vec<String> = new.iter().map(|id| format!("/2/jobs/{id}")).collect();
            for job in self.get_all(&paths).into_iter().flatten() {
                if let Some(object) = self.watch.suspends(&job) {
                    found = Some(object);
                    break;
                }
            }
            if let Some(max) = new.iter().max() {
                self.watch.seen_job = self.watch.seen_job.max(*max);
            }
        }
        match found {
            Some(object) => {
                let e = halted(&object);
                self.watch.suspended = Some(object);
                Err(e)
            }
            None => Ok(()),
        }
    }
}

fn halted(object: &ObjectRef) -> BackendError {
    BackendError::Halted(format!(
        "{object} was suspended in the fleet while this pass ran (its suspend mark appeared): no repair starts under it"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ganeti::snapshot::{Group, Instance};

    const SUSPEND: &str = "ganeti:watcher:autorepair:suspend";

    fn watch() -> FleetWatch {
        let snapshot = Snapshot {
            groups: vec![
                Group {
                    name: "g1".into(),
                    uuid: "u1".into(),
                    tags: vec![SUSPEND.into()],
                    ..Default::default()
                },
                Group {
                    name: "g2".into(),
                    uuid: "u2".into(),
                    ..Default::default()
                },
            ],
            nodes: vec![Node {
                name: "n2".into(),
                offline: false,
                drained: false,
                vm_capable: true,
                group_uuid: "u2".into(),
                tags: vec![],
                mtime: None,
                other: Default::default(),
            }],
            instances: vec![Instance {
                name: "a".into(),
                pnode: "n2".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        FleetWatch::start(&snapshot, &json!([{"id": 40}, {"id": 41}]))
    }

    #[test]
    fn only_a_suspend_the_snapshot_did_not_count_is_new() {
        let mut w = watch();
        assert_eq!(w.seen_job, 41);
        w.writes_on(&crate::ganeti::instance("a"));
        assert!(w.scopes.contains(&crate::ganeti::group("g2")));
        let (c, g1, g2) = (
            crate::ganeti::cluster(),
            crate::ganeti::group("g1"),
            crate::ganeti::group("g2"),
        );
        assert_eq!(
            w.new_suspend([(&c, vec!["x:y".into()]), (&g1, vec![SUSPEND.into()])]),
            None,
            "g1's suspend was there before the pass"
        );
        assert_eq!(
            w.new_suspend([(&c, vec![]), (&g2, vec![format!("{SUSPEND}:notanumber")])]),
            Some(g2),
            "an unreadable suspend is a suspend (rule 11)"
        );
        assert_eq!(
            w.new_suspend([(&c, vec![format!("{SUSPEND}-all")])]),
            Some(c)
        );
    }

    #[test]
    fn a_suspend_queued_elsewhere_on_a_watched_object_counts_unless_it_failed() {
        let mut w = watch();
        w.writes_on(&crate::ganeti::instance("a"));
        let job = |status: &str, kind: &str, name: Option<&str>, tag: &str| {
            json!({"id": 50, "status": status, "ops": [
                {"OP_ID": "OP_TAGS_SET", "kind": kind, "name": name, "tags": [tag],
                 "reason": [["gnt:client:gnt-cluster", "", 1]]}]})
        };
        assert_eq!(
            w.suspends(&job("queued", "cluster", None, SUSPEND)),
            Some(crate::ganeti::cluster()),
            "given by hand, without our reason trail: still a suspend"
        );
        assert_eq!(
            w.suspends(&job("running", "instance", Some("a"), SUSPEND)),
            Some(crate::ganeti::instance("a"))
        );
        assert_eq!(
            w.suspends(&job("queued", "instance", Some("b"), SUSPEND)),
            None
        );
        assert_eq!(
            w.suspends(&job("queued", "nodegroup", Some("g1"), SUSPEND)),
            None
        );
        assert_eq!(w.suspends(&job("error", "cluster", None, SUSPEND)), None);
        assert_eq!(
            w.suspends(&job(
                "queued",
                "cluster",
                None,
                "ganeti:watcher:autorepair:failover"
            )),
            None
        );
    }
}
