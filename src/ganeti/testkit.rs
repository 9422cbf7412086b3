//! Ganeti fleets for tests, in a few chained calls instead of struct literals: one builder for
//! the unit tests, the property tests' shrunk cases and the end-to-end tests.
//!
//! ```
//! use autorepair::ganeti::snapshot::JobStatus;
//! use autorepair::ganeti::testkit::{Fleet, JobExt, job};
//! let snap = Fleet::new()
//!     .autorepair(["migrate"]) // on the cluster, the object in hand
//!     .group("g1")
//!     .node("n1", "g1")
//!     .offline()
//!     .node("n2", "g1")
//!     .instance("i1")
//!     .primary("n1")
//!     .secondary("n2")
//!     .template("drbd")
//!     .tags(["owner:bob"])
//!     .job(job(7, JobStatus::Running).on("i1"))
//!     .build();
//! assert_eq!(snap.instances[0].snodes, ["n2"]);
//! assert_eq!(snap.nodes[0].group_uuid, snap.groups[0].uuid);
//! ```
//!
//! Each call that adds an object puts it in hand; the calls that follow (`tags`, `offline`,
//! `primary`…) change the object in hand, and panic when it is of the wrong kind. An instance
//! is diskless, administratively up and running unless told otherwise; a node is usable.

use super::snapshot::{Cluster, Group, Instance, Job, JobStatus, Node, Op, Snapshot};
use super::tags::PREFIX;

/// A fleet under construction; [`Fleet::build`] gives the snapshot.
#[derive(Clone, Debug)]
pub struct Fleet {
    snap: Snapshot,
    /// The group each node was put in, by name, resolved to its uuid when built.
    node_groups: Vec<String>,
    hand: Hand,
}

#[derive(Clone, Copy, Debug)]
enum Hand {
    Cluster,
    Group(usize),
    Node(usize),
    Instance(usize),
}

impl Default for Fleet {
    fn default() -> Self {
        Fleet::new()
    }
}

impl Fleet {
    /// A cluster named `c`, in hand, and nothing else.
    pub fn new() -> Self {
        Fleet {
            snap: Snapshot {
                cluster: Cluster {
                    name: "c".into(),
                    tags: vec![],
                    other: Default::default(),
                },
                ..Snapshot::default()
            },
            node_groups: Vec::new(),
            hand: Hand::Cluster,
        }
    }

    /// Takes the cluster in hand again (to tag it after other objects), and names it.
    pub fn cluster(mut self, name: impl Into<String>) -> Self {
        self.snap.cluster.name = name.into();
        self.hand = Hand::Cluster;
        self
    }

    /// A node group; its uuid is `uuid-<name>` unless [`Fleet::uuid`] says otherwise.
    pub fn group(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.snap.groups.push(Group {
            uuid: format!("uuid-{name}"),
            name,
            tags: vec![],
            other: Default::default(),
        });
        self.hand = Hand::Group(self.snap.groups.len() - 1);
        self
    }

    /// The uuid of the group in hand.
    pub fn uuid(mut self, uuid: impl Into<String>) -> Self {
        let Hand::Group(g) = self.hand else {
            panic!("uuid() needs a group in hand, not {:?}", self.hand)
        };
        self.snap.groups[g].uuid = uuid.into();
        self
    }

    /// A usable node in the group of that name; a name no group has is taken as the uuid of a
    /// group the fleet lacks.
    pub fn node(mut self, name: impl Into<String>, group: impl Into<String>) -> Self {
        self.snap.nodes.push(Node {
            name: name.into(),
            offline: false,
            drained: false,
            vm_capable: true,
            group_uuid: String::new(),
            tags: vec![],
            mtime: None,
            other: Default::default(),
        });
        self.node_groups.push(group.into());
        self.hand = Hand::Node(self.snap.nodes.len() - 1);
        self
    }

    fn node_mut(&mut self, what: &str) -> &mut Node {
        let Hand::Node(n) = self.hand else {
            panic!("{what}() needs a node in hand, not {:?}", self.hand)
        };
        &mut self.snap.nodes[n]
    }

    pub fn offline(mut self) -> Self {
        self.node_mut("offline").offline = true;
        self
    }

    pub fn drained(mut self) -> Self {
        self.node_mut("drained").drained = true;
        self
    }

    pub fn not_vm_capable(mut self) -> Self {
        self.node_mut("not_vm_capable").vm_capable = false;
        self
    }

    /// A diskless instance, administratively up and running; give it a primary.
    pub fn instance(mut self, name: impl Into<String>) -> Self {
        self.snap.instances.push(Instance {
            name: name.into(),
            pnode: String::new(),
            snodes: vec![],
            disk_template: "diskless".into(),
            admin_state: "up".into(),
            status: "running".into(),
            tags: vec![],
            other: Default::default(),
        });
        self.hand = Hand::Instance(self.snap.instances.len() - 1);
        self
    }

    fn instance_mut(&mut self, what: &str) -> &mut Instance {
        let Hand::Instance(i) = self.hand else {
            panic!("{what}() needs an instance in hand, not {:?}", self.hand)
        };
        &mut self.snap.instances[i]
    }

    pub fn primary(mut self, node: impl Into<String>) -> Self {
        self.instance_mut("primary").pnode = node.into();
        self
    }

    /// Adds a secondary (the template is not changed: see [`Fleet::template`]).
    pub fn secondary(mut self, node: impl Into<String>) -> Self {
        self.instance_mut("secondary").snodes.push(node.into());
        self
    }

    pub fn template(mut self, disk_template: impl Into<String>) -> Self {
        self.instance_mut("template").disk_template = disk_template.into();
        self
    }

    /// Administratively down (`admin_state` `down`).
    pub fn admin_down(mut self) -> Self {
        self.instance_mut("admin_down").admin_state = "down".into();
        self
    }

    /// The run status the backend reports (`running`, `ERROR_down`…).
    pub fn status(mut self, status: impl Into<String>) -> Self {
        self.instance_mut("status").status = status.into();
        self
    }

    fn tags_mut(&mut self) -> &mut Vec<String> {
        match self.hand {
            Hand::Cluster => &mut self.snap.cluster.tags,
            Hand::Group(g) => &mut self.snap.groups[g].tags,
            Hand::Node(n) => &mut self.snap.nodes[n].tags,
            Hand::Instance(i) => &mut self.snap.instances[i].tags,
        }
    }

    /// Tags on the object in hand, as they are.
    pub fn tags<I>(mut self, tags: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.tags_mut().extend(tags.into_iter().map(Into::into));
        self
    }

    /// autorepair tags on the object in hand, written without the prefix: `["failover",
    /// "suspend:10"]`.
    pub fn autorepair<I>(mut self, tags: I) -> Self
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        self.tags_mut()
            .extend(tags.into_iter().map(|t| format!("{PREFIX}{}", t.as_ref())));
        self
    }

    /// A job in the queue (build it with [`job`]); the object in hand stays in hand.
    pub fn job(mut self, job: Job) -> Self {
        self.snap.jobs.push(job);
        self
    }

    /// Changes the snapshot directly, for what the builder has no call for.
    pub fn with(mut self, f: impl FnOnce(&mut Snapshot)) -> Self {
        f(&mut self.snap);
        self
    }

    /// The snapshot, with every node's group resolved. Panics on an instance without a
    /// primary: say `primary("ghost")` for one on a node the fleet lacks.
    pub fn build(mut self) -> Snapshot {
        for (node, group) in self.snap.nodes.iter_mut().zip(&self.node_groups) {
            node.group_uuid = self
                .snap
                .groups
                .iter()
                .find(|g| g.name == *group)
                .map_or_else(|| group.clone(), |g| g.uuid.clone());
        }
        if let Some(i) = self.snap.instances.iter().find(|i| i.pnode.is_empty()) {
            panic!("instance {} has no primary", i.name);
        }
        self.snap
    }
}

/// A job with this id and status, and nothing else: no reason, instance, operation or result.
pub fn job(id: u64, status: JobStatus) -> Job {
    Job {
        id,
        status: Some(status),
        ..Job::default()
    }
}

/// Builder calls on a [`Job`].
pub trait JobExt: Sized {
    /// The reason naming this repair (`autorepair:<id>`).
    fn repair(self, id: &str) -> Self;
    /// The instance it works on.
    fn on(self, instance: &str) -> Self;
    fn op(self, op: Op) -> Self;
    /// The opcode results as Ganeti gives them, e.g. `json!([null])`, or
    /// `json!([["OpPrereqError", ["no room", "insufficient_resources"]]])`.
    fn opresult(self, result: serde_json::Value) -> Self;
    fn ended(self, at: i64) -> Self;
    /// The jobs it waits for.
    fn after(self, ids: &[u64]) -> Self;
}

impl JobExt for Job {
    fn repair(mut self, id: &str) -> Self {
        self.reason = Some(super::snapshot::reason_for(id));
        self
    }
    fn on(mut self, instance: &str) -> Self {
        self.instance = Some(instance.to_owned());
        self
    }
    fn op(mut self, op: Op) -> Self {
        self.op = Some(op);
        self
    }
    fn opresult(mut self, result: serde_json::Value) -> Self {
        self.opresult = result;
        self
    }
    fn ended(mut self, at: i64) -> Self {
        self.end_ts = Some(at);
        self
    }
    fn after(mut self, ids: &[u64]) -> Self {
        self.depends = ids.to_vec();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_what_the_struct_literal_says() {
        let built = Fleet::new()
            .autorepair(["migrate"])
            .group("g1")
            .uuid("u1")
            .tags(["owner:ops"])
            .node("n1", "g1")
            .offline()
            .node("n2", "g1")
            .drained()
            .not_vm_capable()
            .node("n3", "gone")
            .instance("i1")
            .primary("n1")
            .secondary("n2")
            .template("drbd")
            .admin_down()
            .status("ERROR_down")
            .autorepair(["suspend"])
            .job(
                job(4, JobStatus::Error)
                    .repair("r")
                    .on("i1")
                    .op(Op::Reinstall)
                    .opresult(serde_json::json!([null]))
                    .ended(9)
                    .after(&[3]),
            )
            .cluster("c2")
            .tags(["x"])
            .build();
        let node = |name: &str, offline, drained, vm_capable, group: &str| Node {
            name: name.into(),
            offline,
            drained,
            vm_capable,
            group_uuid: group.into(),
            tags: vec![],
            mtime: None,
            other: Default::default(),
        };
        let want = Snapshot {
            cluster: Cluster {
                name: "c2".into(),
                tags: vec![format!("{PREFIX}migrate"), "x".into()],
                other: Default::default(),
            },
            groups: vec![Group {
                name: "g1".into(),
                uuid: "u1".into(),
                tags: vec!["owner:ops".into()],
                other: Default::default(),
            }],
            nodes: vec![
                node("n1", true, false, true, "u1"),
                node("n2", false, true, false, "u1"),
                node("n3", false, false, true, "gone"),
            ],
            instances: vec![Instance {
                name: "i1".into(),
                pnode: "n1".into(),
                snodes: vec!["n2".into()],
                disk_template: "drbd".into(),
                admin_state: "down".into(),
                status: "ERROR_down".into(),
                tags: vec![format!("{PREFIX}suspend")],
                other: Default::default(),
            }],
            jobs: vec![Job {
                id: 4,
                status: Some(JobStatus::Error),
                opresult: serde_json::json!([null]),
                reason: Some("autorepair:r".into()),
                instance: Some("i1".into()),
                op: Some(Op::Reinstall),
                depends: vec![3],
                end_ts: Some(9),
                passes_left: None,
                other: Default::default(),
                op_other: Default::default(),
            }],
            simulation: Default::default(),
            other: Default::default(),
        };
        assert_eq!(built, want);
    }

    #[test]
    #[should_panic(expected = "primary() needs an instance in hand")]
    fn a_call_for_another_kind_of_object_panics() {
        let _ = Fleet::new().group("g").primary("n1");
    }

    #[test]
    #[should_panic(expected = "instance i1 has no primary")]
    fn an_instance_needs_a_primary() {
        let _ = Fleet::new().instance("i1").build();
    }
}
