//! Synthetic fleets in the fleet-file format, deterministic by seed: for benchmarks, soak tests
//! and demos at sizes no hand-written fixture reaches.
//!
//! The same [`Spec`] always gives the same [`Snapshot`] (ChaCha8 seeded from `spec.seed`, no
//! hash-map iteration, no clock). Every timestamp lies around [`BASE_EPOCH`]: plan at that time
//! (`plan(&snap, BASE_EPOCH, ..)`, or `autorepair run --now 1800000000`) so that which timed
//! suspends are over, which results are past retention and which repairs are too old comes out
//! the same on every machine and every day.
//!
//! The shape is that of a large Ganeti installation: about one node per 25 instances, node
//! groups of `nodes_per_group` nodes spread over `racks_per_group` racks (racks exist only as
//! `rack:<group>-r<k>` node tags), a realistic mix of disk templates, a share of broken nodes,
//! and tags at every level — policies, suspends, repair history, pending repairs with their
//! jobs, once-off requests, and the foreign tags other tools leave. Every autorepair tag is
//! made by the renderer in [`crate::tags`]; the only hand-made ones are the deliberately
//! invalid tags of `contradictions`.

use crate::ganeti::snapshot::{
    Cluster, Group, Instance, Job, JobStatus, Node, Op, OpKind, Snapshot,
};
use crate::ganeti::tags::{
    GanetiLevel, PREFIX, RepairResult, render_pending, render_policy, render_result, render_suspend,
};
use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The fixed "now" synthetic fleets are built around: plan at this time for reproducible
/// results (it is 2027-01-15T08:00:00Z).
pub const BASE_EPOCH: i64 = 1_800_000_000;

const DOMAIN: &str = "synthetic.example";
const HOUR: i64 = 3600;
const DAY: i64 = 86400;
/// First job id; job ids then count up in the order the generator makes them.
const FIRST_JOB_ID: u64 = 400_000;

/// What to generate. Build it with [`Spec::new`] and change the fields you need.
#[derive(Clone, Debug)]
pub struct Spec {
    /// Exactly this many instances (duplicates made by `contradictions` reuse existing slots).
    pub instances: usize,
    pub seed: u64,
    /// Nodes per node group (default 40); groups = ceil(nodes / nodes_per_group).
    pub nodes_per_group: usize,
    /// Racks per node group (default 4), as `rack:<group>-r<k>` node tags.
    pub racks_per_group: usize,
    /// Share of nodes offline or drained (default 0.02), rounded to a whole number of nodes.
    pub broken_node_share: f64,
    /// Pending repairs (with their jobs), once-off requests, result history and foreign tags
    /// (default true). Without it the fleet carries only policies, suspends and rack tags.
    pub history: bool,
    /// Inconsistent fleet data the planner must survive (default false): instances on nodes
    /// that do not exist, duplicate instance names, drbd instances without a secondary,
    /// unknown disk templates, groups no node belongs to, nodes whose group does not exist,
    /// invalid autorepair tags, and one instance with more than 1000 tags.
    pub contradictions: bool,
}

impl Spec {
    pub fn new(instances: usize, seed: u64) -> Spec {
        Spec {
            instances,
            seed,
            nodes_per_group: 40,
            racks_per_group: 4,
            broken_node_share: 0.02,
            history: true,
            contradictions: false,
        }
    }
}

/// Builds the fleet `spec` describes. Deterministic: equal specs give equal snapshots.
pub fn generate(spec: &Spec) -> Snapshot {
    let mut g = Gen {
        rng: ChaCha8Rng::seed_from_u64(spec.seed),
        spec,
        next_job: FIRST_JOB_ID,
        snap: Snapshot::default(),
        group_ranges: Vec::new(),
    };
    g.cluster();
    g.groups_and_nodes();
    g.instances();
    if spec.contradictions {
        g.contradictions();
    }
    g.snap
}

struct Gen<'s> {
    rng: ChaCha8Rng,
    spec: &'s Spec,
    next_job: u64,
    snap: Snapshot,
    /// For each group, the range of its nodes in `snap.nodes`.
    group_ranges: Vec<std::ops::Range<usize>>,
}

/// `autorepair generate` for Ganeti: a fleet file of instances, saved (atomically) or printed
/// on one line.
#[cfg(any(test, feature = "testkit"))]
pub struct Generator;

#[cfg(any(test, feature = "testkit"))]
impl crate::plug::generate::Generator for Generator {
    fn generate(
        &self,
        out: &mut crate::plug::printer::Printer,
        asked: &crate::plug::generate::Generate,
    ) -> Result<crate::plug::Exit, crate::plug::Error> {
        use crate::engine::Backend;
        use crate::ganeti::file::FleetFile;
        use crate::plug::{Error, Exit};
        let mut spec = Spec::new(asked.targets, asked.seed);
        spec.broken_node_share = asked.broken;
        spec.contradictions = asked.contradictions;
        let fleet = generate(&spec);
        match &asked.output {
            Some(path) => FleetFile::create(path, fleet)
                .flush()
                .map_err(|e| Error::Save(e.into()))?,
            None => out.json_line(&fleet)?,
        }
        Ok(Exit::Ok)
    }
}

/// Picks from `(value, weight)` pairs.
fn weighted<T: Copy>(rng: &mut ChaCha8Rng, choices: &[(T, u32)]) -> T {
    let total: u32 = choices.iter().map(|(_, w)| w).sum();
    let mut roll = rng.random_range(0..total);
    for (value, weight) in choices {
        if roll < *weight {
            return *value;
        }
        roll -= weight;
    }
    unreachable!("roll < total")
}

const TEMPLATES: &[(&str, u32)] = &[
    ("drbd", 45),
    ("plain", 15),
    ("file", 5),
    ("diskless", 10),
    ("sharedfile", 6),
    ("rbd", 8),
    ("ext", 5),
    ("gluster", 3),
    ("blockdev", 3),
];

const ROLES: &[&str] = &[
    "web", "db", "cache", "mq", "api", "batch", "ci", "mail", "dns", "log", "search", "proxy",
];

const REPAIRS: &[(GanetiLevel, u32)] = &[
    (GanetiLevel::FixStorage, 10),
    (GanetiLevel::Migrate, 30),
    (GanetiLevel::Failover, 40),
    (GanetiLevel::Reinstall, 20),
];

impl Gen<'_> {
    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p.clamp(0.0, 1.0))
    }

    fn uuid(&mut self) -> String {
        uuid::Builder::from_random_bytes(self.rng.random())
            .into_uuid()
            .to_string()
    }

    fn job_id(&mut self) -> u64 {
        let id = self.next_job;
        self.next_job += 1;
        id
    }

    fn team(&mut self) -> String {
        format!("owner:team{}", self.rng.random_range(1..=40))
    }

    fn cluster(&mut self) {
        let mut tags = vec![render_policy(GanetiLevel::Migrate)];
        if self.spec.history {
            tags.push("env:prod".into());
            tags.push("owner:infra".into());
            tags.push("ganeti:watcher:harep:disabled-by:ops".into());
        }
        self.snap.cluster = Cluster {
            name: format!("cluster.{DOMAIN}"),
            tags,
            other: Default::default(),
        };
    }

    fn groups_and_nodes(&mut self) {
        let per_group = self.spec.nodes_per_group.max(1);
        let racks = self.spec.racks_per_group.max(1);
        let wanted = self.spec.instances.div_ceil(25).max(2);
        let groups = wanted.div_ceil(per_group).max(1);
        let nodes = wanted.max(2 * groups);
        for gi in 0..groups {
            let name = format!("grp{gi:04}");
            let uuid = self.uuid();
            let tags = self.group_tags();
            self.snap.groups.push(Group {
                name,
                uuid,
                tags,
                other: Default::default(),
            });
        }
        let mut start = 0;
        for gi in 0..groups {
            let count = nodes / groups + usize::from(gi < nodes % groups);
            let group = &self.snap.groups[gi];
            let (gname, guuid) = (group.name.clone(), group.uuid.clone());
            for k in 0..count {
                let rack = k * racks.min(count) / count;
                let mut tags = vec![format!("rack:{gname}-r{rack}")];
                if self.spec.history {
                    if self.chance(0.7) {
                        let hw = ["hw:r640", "hw:r650", "hw:sr650", "hw:dl380"];
                        tags.push(hw[self.rng.random_range(0..hw.len())].into());
                    }
                    if self.chance(0.3) {
                        tags.push(self.team());
                    }
                    // Admins do tag nodes by mistake; the planner lints these.
                    if self.chance(0.003) {
                        tags.push(render_policy(GanetiLevel::Failover));
                    }
                }
                self.snap.nodes.push(Node {
                    name: format!("n{gi:04}-{k:03}.{DOMAIN}"),
                    offline: false,
                    drained: false,
                    vm_capable: true,
                    group_uuid: guuid.clone(),
                    tags,
                    mtime: None,
                    other: Default::default(),
                });
            }
            self.group_ranges.push(start..start + count);
            start += count;
        }
        let broken = ((nodes as f64) * self.spec.broken_node_share.clamp(0.0, 1.0)).round();
        let broken = (broken as usize).min(nodes);
        for i in sample(&mut self.rng, nodes, broken).into_vec() {
            let kind = self.rng.random_range(0..20);
            let node = &mut self.snap.nodes[i];
            node.offline = kind < 9 || kind == 19;
            node.drained = kind >= 9;
            if self.spec.history && self.rng.random_bool(0.5) {
                let ticket = self.rng.random_range(10000..99999);
                self.snap.nodes[i]
                    .tags
                    .push(format!("maintenance:ticket-{ticket}"));
            }
        }
        for i in 0..nodes {
            if !self.snap.nodes[i].offline && !self.snap.nodes[i].drained && self.chance(0.004) {
                self.snap.nodes[i].vm_capable = false;
            }
        }
    }

    fn group_tags(&mut self) -> Vec<String> {
        let mut tags = Vec::new();
        let policy = weighted(
            &mut self.rng,
            &[
                (Some(GanetiLevel::Failover), 40),
                (Some(GanetiLevel::Reinstall), 15),
                (Some(GanetiLevel::Migrate), 20),
                (Some(GanetiLevel::FixStorage), 5),
                (None, 20),
            ],
        );
        if let Some(t) = policy {
            tags.push(render_policy(t));
        }
        let roll = self.rng.random_range(0..100);
        let suspend = match roll {
            0 => Some(None),
            1..=3 => Some(Some(BASE_EPOCH + self.rng.random_range(HOUR..3 * DAY))),
            4..=6 => Some(Some(BASE_EPOCH - self.rng.random_range(HOUR..30 * DAY))),
            _ => None,
        };
        if let Some(until) = suspend {
            tags.push(render_suspend(until).expect("non-negative epoch"));
        }
        if self.spec.history {
            tags.push(self.team());
            let sites = ["dc:ams1", "dc:ams2", "dc:fra1", "dc:lon1"];
            tags.push(sites[self.rng.random_range(0..sites.len())].into());
            if self.chance(0.2) {
                tags.push("maintenance:window-sun-0200".into());
            }
        }
        tags
    }

    fn instances(&mut self) {
        let n_nodes = self.snap.nodes.len();
        let n_groups = self.group_ranges.len();
        // Which group each node is in, to find drbd secondaries.
        let mut group_of = vec![0usize; n_nodes];
        for (gi, r) in self.group_ranges.iter().enumerate() {
            for slot in &mut group_of[r.clone()] {
                *slot = gi;
            }
        }
        debug_assert!(n_groups > 0);
        self.snap.instances.reserve(self.spec.instances);
        for i in 0..self.spec.instances {
            let p = self.rng.random_range(0..n_nodes);
            let template = weighted(&mut self.rng, TEMPLATES);
            let snodes = if template == "drbd" {
                let r = self.group_ranges[group_of[p]].clone();
                // A group has at least two nodes: pick any other one.
                let mut s = self.rng.random_range(r.start..r.end - 1);
                if s >= p {
                    s += 1;
                }
                vec![self.snap.nodes[s].name.clone()]
            } else {
                vec![]
            };
            let admin_up = self.chance(0.93);
            let pnode = &self.snap.nodes[p];
            let status = match (admin_up, pnode.offline) {
                (true, true) => "ERROR_nodeoffline",
                (true, false) => "running",
                (false, _) => "ADMIN_down",
            };
            let role = ROLES[self.rng.random_range(0..ROLES.len())];
            let mut inst = Instance {
                name: format!("{role}{i:07}.{DOMAIN}"),
                pnode: pnode.name.clone(),
                snodes,
                disk_template: template.to_owned(),
                admin_state: if admin_up { "up" } else { "down" }.to_owned(),
                status: status.to_owned(),
                tags: Vec::new(),
                other: Default::default(),
            };
            self.instance_tags(&mut inst, role);
            self.snap.instances.push(inst);
        }
    }

    fn instance_tags(&mut self, inst: &mut Instance, role: &str) {
        let tags = &mut inst.tags;
        if self.spec.history {
            if self.chance(0.6) {
                tags.push(self.team());
            }
            match self.rng.random_range(0..100) {
                0..25 => tags.push("backup:daily".into()),
                25..35 => tags.push("backup:weekly".into()),
                _ => {}
            }
            if self.chance(0.4) {
                let env = if self.chance(0.8) {
                    "env:prod"
                } else {
                    "env:staging"
                };
                tags.push(env.into());
            }
            if self.chance(0.3) {
                tags.push(format!("service:{role}"));
            }
        }
        if self.chance(0.05) {
            tags.push(render_policy(weighted(&mut self.rng, REPAIRS)));
        }
        if self.chance(0.01) {
            let until = match self.rng.random_range(0..10) {
                0..4 => None,
                4..7 => Some(BASE_EPOCH + self.rng.random_range(HOUR..7 * DAY)),
                _ => Some(BASE_EPOCH - self.rng.random_range(60..7 * DAY)),
            };
            tags.push(render_suspend(until).expect("non-negative epoch"));
        }
        if !self.spec.history {
            return;
        }
        if self.chance(0.10) {
            for _ in 0..self.rng.random_range(1..=3) {
                let tag = self.result_tag(&inst.name);
                inst.tags.push(tag);
            }
        }
        if self.chance(0.005) {
            let tag = self.pending_repair(inst);
            inst.tags.push(tag);
        }
        if self.chance(0.002) {
            let repair = weighted(&mut self.rng, REPAIRS);
            let id = self.uuid();
            let since = BASE_EPOCH - self.rng.random_range(60..2 * DAY);
            inst.tags
                .push(render_pending(repair, &id, since, &[]).expect("valid pending tag"));
        }
    }

    /// A result of an earlier repair; some failures keep their job in the queue.
    fn result_tag(&mut self, instance: &str) -> String {
        let result = weighted(
            &mut self.rng,
            &[
                (RepairResult::Success, 75),
                (RepairResult::Enoperm, 17),
                (RepairResult::Failure, 8),
            ],
        );
        let repair = weighted(&mut self.rng, REPAIRS);
        let id = self.uuid();
        // Old ones (past the default 7-day retention) as well as recent ones.
        let at = BASE_EPOCH - self.rng.random_range(5 * 60..30 * DAY);
        let jobs: Vec<u64> = match result {
            RepairResult::Enoperm => vec![],
            RepairResult::Success => (0..self.rng.random_range(1..=2))
                .map(|_| self.job_id())
                .collect(),
            RepairResult::Failure => vec![self.job_id()],
        };
        if result == RepairResult::Failure && self.chance(0.6) {
            let op = match repair {
                GanetiLevel::FixStorage => replace_disks(),
                GanetiLevel::Migrate => migrate(),
                GanetiLevel::Failover => failover(),
                GanetiLevel::Reinstall => Op::Reinstall,
            };
            self.snap.jobs.push(Job {
                id: jobs[0],
                status: Some(JobStatus::Error),
                opresult: serde_json::json!([[
                    "OpExecError",
                    ["Could not start instance: hypervisor error", "unknown"]
                ]]),
                reason: Some(crate::ganeti::snapshot::reason_for(&id)),
                instance: Some(instance.to_owned()),
                op: Some(op),
                depends: vec![],
                end_ts: Some(at - 30),
                passes_left: None,
                other: Default::default(),
                op_other: Default::default(),
            });
        }
        render_result(repair, &id, at, result, &jobs).expect("valid result tag")
    }

    /// A repair under way: its pending tag, and its jobs in the queue (the steps done so far
    /// succeeded, the last one running, done, failed or purged).
    fn pending_repair(&mut self, inst: &Instance) -> String {
        let storage = crate::ganeti::health::storage_of(&inst.disk_template);
        let (repair, kinds) = loop {
            let repair = weighted(&mut self.rng, REPAIRS);
            match storage.and_then(|s| crate::ganeti::health::chain(s, repair)) {
                Some(kinds) => break (repair, kinds),
                None if storage.is_none() => break (repair, &[][..]),
                None => continue,
            }
        };
        let id = self.uuid();
        let since = if self.chance(0.03) {
            BASE_EPOCH - self.rng.random_range(2 * DAY..5 * DAY)
        } else {
            BASE_EPOCH - self.rng.random_range(60..6 * HOUR)
        };
        let steps = if kinds.is_empty() {
            0
        } else {
            self.rng.random_range(1..=kinds.len())
        };
        let mut ids = Vec::new();
        let mut after = None;
        for (n, kind) in kinds.iter().take(steps).enumerate() {
            let job = self.job_id();
            ids.push(job);
            let last = n + 1 == steps;
            let outcome = if last {
                self.rng.random_range(0..100)
            } else {
                60 // success
            };
            let end_ts = since + 600 * (n as i64 + 1);
            let (status, opresult, end_ts) = match outcome {
                0..50 => (Some(JobStatus::Running), serde_json::Value::Null, None),
                50..80 => (
                    Some(JobStatus::Success),
                    serde_json::json!([null]),
                    Some(end_ts),
                ),
                80..90 => (
                    Some(JobStatus::Error),
                    serde_json::json!([[
                        "OpPrereqError",
                        [
                            "Not enough memory on any node",
                            crate::ganeti::snapshot::INSUFFICIENT_RESOURCES
                        ]
                    ]]),
                    Some(end_ts),
                ),
                90..96 => (
                    Some(JobStatus::Error),
                    serde_json::json!([["OpExecError", ["Disk sync failed", "unknown"]]]),
                    Some(end_ts),
                ),
                // Archived and purged: the pending tag names a job the queue no longer has.
                _ => {
                    after = Some(job);
                    continue;
                }
            };
            self.snap.jobs.push(Job {
                id: job,
                status,
                opresult,
                reason: Some(crate::ganeti::snapshot::reason_for(&id)),
                instance: Some(inst.name.clone()),
                op: Some(op_of(*kind)),
                depends: after.into_iter().collect(),
                end_ts,
                passes_left: None,
                other: Default::default(),
                op_other: Default::default(),
            });
            after = Some(job);
        }
        render_pending(repair, &id, since, &ids).expect("valid pending tag")
    }

    /// Applied after the consistent fleet is built, so the rest of it is the same as without.
    fn contradictions(&mut self) {
        let n = self.snap.instances.len();
        let k = (n / 1000).max(1);
        let ghost = |j: usize| format!("ghost{j:04}.{DOMAIN}");
        if n > 0 {
            for j in 0..k {
                let i = self.rng.random_range(0..n);
                self.snap.instances[i].pnode = ghost(j);
            }
            for j in 0..k {
                let i = self.rng.random_range(0..n);
                let inst = &mut self.snap.instances[i];
                inst.disk_template = "drbd".into();
                inst.snodes = vec![ghost(k + j)];
            }
            for _ in 0..k {
                let (a, b) = (self.rng.random_range(0..n), self.rng.random_range(0..n));
                self.snap.instances[b].name = self.snap.instances[a].name.clone();
            }
            for _ in 0..k {
                let i = self.rng.random_range(0..n);
                self.snap.instances[i].disk_template = "drbd".into();
                self.snap.instances[i].snodes.clear();
            }
            let unknown = ["lvm", "", "DRBD", "drbd8", "zfs"];
            for j in 0..k {
                let i = self.rng.random_range(0..n);
                self.snap.instances[i].disk_template = unknown[j % unknown.len()].into();
            }
            for _ in 0..k {
                let i = self.rng.random_range(0..n);
                let tag = self.invalid_tag();
                self.snap.instances[i].tags.push(tag);
            }
            let i = self.rng.random_range(0..n);
            let tags = self.tag_pile(1200);
            self.snap.instances[i].tags.extend(tags);
        }
        for j in 0..2 {
            let uuid = self.uuid();
            self.snap.groups.push(Group {
                name: format!("empty{j}"),
                uuid,
                tags: vec![render_policy(GanetiLevel::Reinstall)],
                other: Default::default(),
            });
        }
        let nodes = self.snap.nodes.len();
        for _ in 0..(nodes / 200).max(1) {
            let i = self.rng.random_range(0..nodes);
            self.snap.nodes[i].group_uuid = self.uuid();
        }
        // Instance-only tags on a group and the cluster, and invalid ones.
        let gi = self.rng.random_range(0..self.snap.groups.len());
        let pending = {
            let id = self.uuid();
            render_pending(GanetiLevel::Migrate, &id, BASE_EPOCH - HOUR, &[]).expect("valid")
        };
        self.snap.groups[gi].tags.push(pending);
        let bad = self.invalid_tag();
        self.snap.groups[gi].tags.push(bad);
        let bad = self.invalid_tag();
        self.snap.cluster.tags.push(bad);
    }

    /// One malformed autorepair tag, of every kind of mistake the parser names.
    fn invalid_tag(&mut self) -> String {
        let id = self.uuid();
        let at = BASE_EPOCH - self.rng.random_range(60..DAY);
        match self.rng.random_range(0..11) {
            0 => format!(
                "{PREFIX}pending:migrate:{id}:{at}:{}",
                "1234567+".repeat(12)
            ),
            1 => format!("{PREFIX}migrate!"),
            2 => format!("{PREFIX}fäilover"),
            3 => format!("{PREFIX}repair-everything"),
            4 => format!("{PREFIX}pending:migrate:{id}"),
            5 => format!("{PREFIX}pending:reboot:{id}:{at}:"),
            6 => format!("{PREFIX}pending:migrate:not-a-uuid:{at}:"),
            7 => format!("{PREFIX}suspend:tomorrow"),
            8 => format!("{PREFIX}suspend:0{at}"),
            9 => format!("{PREFIX}result:failover:{id}:{at}:maybe:"),
            _ => format!("{PREFIX}pending:failover:{id}:{at}:12++13"),
        }
    }

    /// `count` tags for one object: a third foreign, a third valid autorepair tags of every
    /// kind, a third invalid.
    fn tag_pile(&mut self, count: usize) -> Vec<String> {
        (0..count)
            .map(|j| match j % 3 {
                0 => format!("note:{j}"),
                1 => match (j / 3) % 5 {
                    0 => render_policy(weighted(&mut self.rng, REPAIRS)),
                    1 => render_suspend(Some(BASE_EPOCH + self.rng.random_range(-DAY..DAY)))
                        .expect("non-negative epoch"),
                    2 => {
                        let id = self.uuid();
                        let since = BASE_EPOCH - self.rng.random_range(60..DAY);
                        let job = self.job_id();
                        render_pending(GanetiLevel::Failover, &id, since, &[job]).expect("valid")
                    }
                    _ => self.result_tag("pile"),
                },
                _ => self.invalid_tag(),
            })
            .collect()
    }
}

fn failover() -> Op {
    Op::Failover {
        target_node: None,
        iallocator: Some("hail".into()),
    }
}

fn migrate() -> Op {
    Op::Migrate {
        target_node: None,
        iallocator: Some("hail".into()),
        allow_failover: false,
    }
}

fn replace_disks() -> Op {
    Op::ReplaceDisks {
        remote_node: None,
        iallocator: Some("hail".into()),
    }
}

fn op_of(kind: OpKind) -> Op {
    match kind {
        OpKind::Failover => failover(),
        OpKind::Migrate => migrate(),
        OpKind::ReplaceDisks => replace_disks(),
        OpKind::RecreateDisks => Op::RecreateDisks {
            nodes: vec![],
            iallocator: Some("hail".into()),
        },
        OpKind::Reinstall => Op::Reinstall,
        OpKind::Move => Op::Move {
            target_node: format!("n0000-000.{DOMAIN}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ganeti::tags::{Tag, parse};

    #[test]
    fn same_seed_same_fleet() {
        for spec in [Spec::new(3000, 7), {
            let mut s = Spec::new(3000, 7);
            s.contradictions = true;
            s
        }] {
            assert_eq!(generate(&spec), generate(&spec));
        }
    }

    #[test]
    fn different_seed_different_fleet() {
        let a = generate(&Spec::new(500, 1));
        let b = generate(&Spec::new(500, 2));
        assert_ne!(a, b);
        assert_ne!(a.groups[0].uuid, b.groups[0].uuid);
    }

    #[test]
    fn the_requested_instance_count_and_shape() {
        for n in [0, 1, 10, 999, 10_000] {
            let s = generate(&Spec::new(n, 3));
            assert_eq!(s.instances.len(), n);
            assert!(s.nodes.len() >= 2);
            assert!(s.nodes.len() >= n / 25);
            assert_eq!(s.groups.len(), s.nodes.len().div_ceil(40).max(1));
            for g in &s.groups {
                let members = s.nodes.iter().filter(|x| x.group_uuid == g.uuid).count();
                assert!(members >= 2, "group {} has {members} nodes", g.name);
            }
            let node_group: std::collections::HashMap<&str, &str> = s
                .nodes
                .iter()
                .map(|x| (x.name.as_str(), x.group_uuid.as_str()))
                .collect();
            for i in &s.instances {
                let p = node_group[i.pnode.as_str()];
                if i.disk_template == "drbd" {
                    assert_eq!(i.snodes.len(), 1);
                    assert_ne!(i.snodes[0], i.pnode);
                    assert_eq!(node_group[i.snodes[0].as_str()], p);
                } else {
                    assert!(i.snodes.is_empty());
                }
            }
            for x in &s.nodes {
                let rack = x.tags.iter().filter(|t| t.starts_with("rack:grp")).count();
                assert_eq!(rack, 1, "{}", x.name);
            }
        }
        let mut spec = Spec::new(4321, 3);
        spec.contradictions = true;
        assert_eq!(generate(&spec).instances.len(), 4321);
    }

    #[test]
    fn the_template_mix_is_realistic() {
        let s = generate(&Spec::new(20_000, 5));
        let share =
            |t: &str| s.instances.iter().filter(|i| i.disk_template == t).count() as f64 / 20_000.0;
        assert!((share("drbd") - 0.45).abs() < 0.02);
        assert!((share("plain") - 0.15).abs() < 0.02);
        assert!((share("diskless") - 0.10).abs() < 0.02);
        assert!((share("file") - 0.05).abs() < 0.01);
    }

    #[test]
    fn the_broken_share_is_roughly_honoured() {
        for (n, share) in [(100_000, 0.02), (25_000, 0.1), (10_000, 0.0), (5_000, 1.0)] {
            let mut spec = Spec::new(n, 11);
            spec.broken_node_share = share;
            let s = generate(&spec);
            let broken = s.nodes.iter().filter(|x| x.offline || x.drained).count();
            let got = broken as f64 / s.nodes.len() as f64;
            assert!(
                (got - share).abs() < 0.005,
                "{n}: wanted {share}, got {got}"
            );
            if share > 0.0 && share < 1.0 {
                assert!(s.nodes.iter().any(|x| x.offline));
                assert!(s.nodes.iter().any(|x| x.drained && !x.offline));
            }
        }
    }

    #[test]
    fn every_autorepair_tag_parses_and_the_mix_is_there() {
        let s = generate(&Spec::new(50_000, 9));
        let (mut policy, mut suspend, mut pending, mut requests, mut result, mut foreign) =
            (0, 0, 0, 0, 0, 0);
        for t in s.all_tags() {
            match parse(t) {
                Ok(Tag::Foreign) => foreign += 1,
                Ok(Tag::Policy(_)) => policy += 1,
                Ok(Tag::Suspend { .. }) => suspend += 1,
                Ok(Tag::Pending(p)) if p.ops.is_empty() => requests += 1,
                Ok(Tag::Pending(_)) => pending += 1,
                Ok(Tag::Result(_)) => result += 1,
                Err(e) => panic!("generated an invalid tag: {e}"),
                Ok(Tag::Unreadable(_)) => unreachable!("no codec parses to Unreadable"),
            }
        }
        assert!(policy > 50_000 / 25, "{policy}");
        assert!(suspend > 500 / 2, "{suspend}");
        assert!(pending > 100, "{pending}");
        assert!(requests > 50, "{requests}");
        assert!(result > 50_000 / 10, "{result}");
        assert!(foreign > 50_000, "{foreign}");
        // Every job a pending repair's queue entry names carries the repair's reason.
        let statuses: std::collections::BTreeSet<_> = s.jobs.iter().map(|j| j.status).collect();
        assert!(statuses.contains(&Some(JobStatus::Running)));
        assert!(statuses.contains(&Some(JobStatus::Success)));
        assert!(statuses.contains(&Some(JobStatus::Error)));
        for j in &s.jobs {
            assert!(j.repair_id().is_some() && j.instance.is_some() && j.op.is_some());
        }
        let quiet = generate(&Spec {
            history: false,
            ..Spec::new(5000, 9)
        });
        assert!(quiet.jobs.is_empty());
        assert!(
            quiet
                .all_tags()
                .all(|t| !matches!(parse(t), Ok(Tag::Pending(_) | Tag::Result(_)) | Err(_)))
        );
    }

    #[test]
    fn serialises_to_json_and_back_equal() {
        for contradictions in [false, true] {
            let s = generate(&Spec {
                contradictions,
                ..Spec::new(2000, 4)
            });
            let text = serde_json::to_string_pretty(&s).unwrap();
            let back = crate::ganeti::file::parse_fleet(&text).unwrap();
            assert_eq!(back, s);
        }
    }

    #[test]
    fn the_planner_survives_contradictions() {
        let s = generate(&Spec {
            contradictions: true,
            ..Spec::new(5000, 13)
        });
        assert!(s.instances.iter().any(|i| i.tags.len() > 1000));
        assert!(
            s.all_tags().any(|t| parse(t).is_err()),
            "contradictions include invalid tags"
        );
        let plan = crate::ganeti::plan(&s, BASE_EPOCH, &crate::config::Limits::default(), 1);
        assert_eq!(plan.targets.len(), 5000);
        assert!(!plan.lint.is_empty());
    }
}
