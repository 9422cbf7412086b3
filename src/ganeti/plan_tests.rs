//! State transitions of the planner, one scenario per row.

use super::snapshot::Snapshot;
use super::tags::{PREFIX, render_pending};
use super::testkit::{self, Fleet, JobExt};
use super::*;
use crate::config::Limits;
use crate::engine::State;
use GanetiLevel::*;

const NOW: i64 = 1_000_000;
const A: &str = "aaaaaaaa-0000-4000-8000-000000000001";
const B: &str = "bbbbbbbb-0000-4000-8000-000000000002";

fn t(s: &str) -> String {
    format!("{PREFIX}{s}")
}

/// Group `g` holds n1..n4; `n1` is offline unless a test changes it.
fn group_g(group_tags: &[&str]) -> Fleet {
    Fleet::new()
        .group("g")
        .uuid("u-g")
        .autorepair(group_tags)
        .node("n1", "g")
        .offline()
        .node("n2", "g")
        .node("n3", "g")
        .node("n4", "g")
}

/// [`group_g`] with instance `i1` on n1 (and n2 as its secondary when drbd).
fn fleet(group_tags: &[&str], inst_template: &str, inst_tags: &[&str]) -> Snapshot {
    let i1 = group_g(group_tags)
        .instance("i1")
        .primary("n1")
        .template(inst_template)
        .autorepair(inst_tags);
    if inst_template == "drbd" {
        i1.secondary("n2").build()
    } else {
        i1.build()
    }
}

fn job(id: u64, repair: &str, op: Op, status: JobStatus, error_code: Option<&str>) -> Job {
    testkit::job(id, status)
        .repair(repair)
        .on("i1")
        .op(op)
        .ended(NOW - 60)
        .opresult(match error_code {
            Some(code) => serde_json::json!([["OpPrereqError", ["boom", code]]]),
            None => serde_json::json!([null]),
        })
}

fn failover() -> Op {
    Op::Failover {
        target_node: None,
        iallocator: None,
    }
}

fn replace() -> Op {
    Op::ReplaceDisks {
        remote_node: None,
        iallocator: Some("hail".into()),
    }
}

fn limits() -> Limits {
    Limits {
        max_domains_under_repair: 5,
        ..Limits::default()
    }
}

struct Seen {
    state: State,
    added: Vec<String>,
    removed: Vec<String>,
    repair: Option<RepairStart>,
}

fn plan_one(snap: &Snapshot, limits: &Limits) -> Seen {
    let p = plan(snap, NOW, limits, 7);
    let target = p.target("i1").unwrap();
    let mut seen = Seen {
        state: target.state,
        added: vec![],
        removed: vec![],
        repair: None,
    };
    for a in &target.actions {
        match a {
            Action::AddMarks { marks: tags, .. } => seen
                .added
                .extend(tags.iter().map(|s| s.trim_start_matches(PREFIX).to_owned())),
            Action::RemoveMarks { marks: tags, .. } => seen
                .removed
                .extend(tags.iter().map(|s| s.trim_start_matches(PREFIX).to_owned())),
            Action::Repair(r) => seen.repair = Some(r.clone()),
            Action::Advance { .. } => panic!("Ganeti runs no operation itself"),
        }
    }
    seen
}

fn kinds(r: &RepairStart) -> Vec<OpKind> {
    r.ops.iter().map(Op::kind).collect()
}

#[test]
fn healthy_stays_healthy_and_untouched() {
    let mut snap = fleet(&["reinstall"], "diskless", &[]);
    snap.nodes[0].offline = false;
    let s = plan_one(&snap, &limits());
    assert_eq!(s.state, State::Healthy);
    assert!(s.added.is_empty() && s.removed.is_empty() && s.repair.is_none());
}

#[test]
fn allowed_repair_starts_with_a_pending_tag_first() {
    let s = plan_one(&fleet(&["failover"], "drbd", &[]), &limits());
    assert_eq!(
        s.state,
        State::NeedsRepair,
        "no pending tag yet: the pass writes it"
    );
    let r = s.repair.expect("a repair starts");
    assert_eq!(r.repair, Failover);
    assert_eq!(kinds(&r), vec![OpKind::Failover, OpKind::ReplaceDisks]);
    let first = r
        .write_first
        .as_deref()
        .expect("pending tag written before the jobs");
    assert_eq!(first, render_pending(Failover, &r.id, NOW, &[]).unwrap());
    assert_eq!(r.reason, format!("autorepair:{}", r.id));
}

#[test]
fn a_repair_above_the_policy_writes_enoperm_once() {
    let s = plan_one(&fleet(&["migrate"], "drbd", &[]), &limits());
    assert_eq!(s.state, State::NeedsRepair);
    assert!(s.repair.is_none());
    assert_eq!(s.added.len(), 1);
    assert!(
        s.added[0].starts_with("result:failover:") && s.added[0].ends_with(":enoperm:"),
        "{:?}",
        s.added
    );
    // Next pass: the enoperm is there, nothing is written again (harep rewrites it every pass).
    let written = format!("result:failover:{A}:{}:enoperm:", NOW - 300);
    let s = plan_one(&fleet(&["migrate"], "drbd", &[&written]), &limits());
    assert!(
        s.added.is_empty() && s.removed.is_empty(),
        "{:?} {:?}",
        s.added,
        s.removed
    );
    // Even after the retention period the enoperm that still describes the target stays.
    let old = format!("result:failover:{A}:5:enoperm:");
    let s = plan_one(&fleet(&["migrate"], "drbd", &[&old]), &limits());
    assert!(s.added.is_empty() && s.removed.is_empty());
}

#[test]
fn suspends_and_the_nearest_policy() {
    // (group tags, instance tags, state now, a repair starts)
    let cases: &[(&[&str], &[&str], State, bool)] = &[
        (&["suspend"], &[], State::Suspended, false),
        (&["suspend:2000000"], &[], State::Suspended, false),
        // An expired suspend is ignored: the group's type applies.
        (&["suspend:10", "failover"], &[], State::NeedsRepair, true),
        // The instance's own allow beats the group's suspend.
        (&["suspend"], &["failover"], State::NeedsRepair, true),
        (&["failover"], &["suspend"], State::Suspended, false),
        (&[], &[], State::NeedsRepair, false),
    ];
    for (group, inst, want, starts) in cases {
        let s = plan_one(&fleet(group, "diskless", inst), &limits());
        assert_eq!(s.state, *want, "group {group:?} instance {inst:?}");
        assert_eq!(
            s.repair.is_some(),
            *starts,
            "group {group:?} instance {inst:?}"
        );
    }
    let expired = plan(
        &fleet(&["suspend:10", "failover"], "diskless", &[]),
        NOW,
        &limits(),
        1,
    );
    assert_eq!(
        expired.scope_actions,
        vec![Action::RemoveMarks {
            object: super::group("g"),
            marks: vec![t("suspend:10")],
            reason: "timed suspend is over".into()
        }]
    );
}

#[test]
fn pending_repairs_are_judged_by_their_jobs() {
    let pending = format!("pending:failover:{A}:{}:1+2", NOW - 100);
    let err = JobStatus::Error;
    let ok = JobStatus::Success;
    let cases: Vec<(Vec<Job>, Option<&str>)> = vec![
        (
            vec![
                job(1, A, failover(), ok, None),
                job(2, A, replace(), JobStatus::Running, None),
            ],
            None,
        ),
        (
            vec![
                job(1, A, failover(), ok, None),
                job(2, A, replace(), JobStatus::Queued, None),
            ],
            None,
        ),
        (
            vec![
                job(1, A, failover(), ok, None),
                job(2, A, replace(), ok, None),
            ],
            Some("success:1+2"),
        ),
        (
            vec![
                job(1, A, failover(), err, Some("wrong_state")),
                job(2, A, replace(), err, None),
            ],
            Some("failure:1"),
        ),
        (
            vec![
                job(1, A, failover(), JobStatus::Canceled, None),
                job(2, A, replace(), err, None),
            ],
            Some("failure:1"),
        ),
        // Job 2 is gone from the queue: that repair fails, nothing else does.
        (vec![job(1, A, failover(), ok, None)], Some("failure:1")),
    ];
    for (jobs, want_result) in cases {
        let mut snap = fleet(&["failover"], "drbd", &[&pending]);
        snap.nodes[0].offline = false; // the repair worked: the instance is healthy now
        snap.jobs = jobs.clone();
        let s = plan_one(&snap, &limits());
        assert_eq!(
            s.state,
            State::Pending,
            "jobs {:?}",
            jobs.iter().map(|j| (j.id, j.status)).collect::<Vec<_>>()
        );
        assert!(s.repair.is_none(), "never a second submission");
        match want_result {
            Some(r) => {
                assert_eq!(s.added.len(), 1, "{:?}", s.added);
                assert!(
                    s.added[0].starts_with(&format!("result:failover:{A}:{NOW}:"))
                        && s.added[0].ends_with(r),
                    "{:?}",
                    s.added
                );
                assert_eq!(s.removed, vec![pending.clone()]);
            }
            None => assert!(s.added.is_empty() && s.removed.is_empty()),
        }
    }
}

#[test]
fn lack_of_resources_retries_later_instead_of_failing() {
    let pending = format!("pending:failover:{A}:{}:1+2", NOW - 100);
    let mut snap = fleet(&["failover"], "drbd", &[&pending]);
    // The failover worked (instance now on n2 with the dead n1 as secondary), the new
    // secondary could not be found.
    snap.instances[0].pnode = "n2".into();
    snap.instances[0].snodes = vec!["n1".into()];
    let mut no_room = job(
        2,
        A,
        replace(),
        JobStatus::Error,
        Some(crate::ganeti::snapshot::INSUFFICIENT_RESOURCES),
    );
    no_room.end_ts = Some(NOW - 60);
    snap.jobs = vec![
        job(1, A, failover(), JobStatus::Success, None),
        no_room.clone(),
    ];
    let s = plan_one(&snap, &limits());
    assert_eq!(s.state, State::Pending);
    assert!(
        s.repair.is_none() && s.added.is_empty(),
        "waits for retry_interval"
    );

    snap.jobs[1].end_ts = Some(NOW - 16 * 60);
    let s = plan_one(&snap, &limits());
    let r = s.repair.expect("retried");
    assert_eq!((r.id.as_str(), kinds(&r)), (A, vec![OpKind::ReplaceDisks]));
    assert_eq!(
        r.keep_jobs,
        vec![1],
        "the failover's job stays as proof that step is done"
    );
    assert_eq!(r.replaces, vec![t(&pending)]);
    assert!(r.write_first.is_none());

    // Past max_repair_age the repair gives up with a failure.
    let old = format!("pending:failover:{A}:{}:1+2", NOW - 2 * 86400);
    snap.instances[0].tags = vec![t(&old)];
    let s = plan_one(&snap, &limits());
    assert_eq!(
        s.state,
        State::Pending,
        "its pending tag is there until the pass ends it"
    );
    assert!(s.added[0].contains(":failure:"));
}

#[test]
fn requests_with_no_jobs() {
    let req = |ty: &str| format!("pending:{ty}:{A}:{}:", NOW - 50);
    // Healthy target: resolved as success with no jobs.
    let mut snap = fleet(&[], "diskless", &[&req("failover")]);
    snap.nodes[0].offline = false;
    let s = plan_one(&snap, &limits());
    assert_eq!(s.state, State::Pending);
    assert_eq!(s.added, vec![format!("result:failover:{A}:{NOW}:success:")]);
    assert_eq!(s.removed, vec![req("failover")]);

    // A request allows its own type even where no policy is set...
    let s = plan_one(&fleet(&[], "diskless", &[&req("failover")]), &limits());
    assert_eq!(s.state, State::Pending);
    let r = s.repair.unwrap();
    assert_eq!((r.id.as_str(), r.repair), (A, Failover));
    assert_eq!(r.since, NOW, "the repair's clock starts when the work does");
    // The tag describing the work chosen is written before any job is submitted.
    assert_eq!(
        r.write_first,
        Some(t(&format!("pending:failover:{A}:{NOW}:")))
    );
    assert_eq!(r.replaces, vec![t(&req("failover"))]);

    // ...and less destructive repairs, recorded under the type actually done.
    let s = plan_one(&fleet(&[], "diskless", &[&req("reinstall")]), &limits());
    let r = s.repair.unwrap();
    assert_eq!(r.repair, Failover);
    assert_eq!(
        r.write_first,
        Some(t(&format!("pending:failover:{A}:{NOW}:")))
    );

    // Killed after that tag and the job: the job is judged as the failover it is, the
    // request's permission still stands, and nothing is submitted again.
    let work = format!("pending:failover:{A}:{NOW}:");
    let mut snap = fleet(&[], "diskless", &[&req("reinstall"), &work]);
    snap.jobs = vec![job(1, A, failover(), JobStatus::Running, None)];
    let s = plan_one(&snap, &limits());
    assert!(s.repair.is_none());
    assert_eq!(s.added, vec![format!("pending:failover:{A}:{NOW}:1")]);
    assert_eq!(s.removed.len(), 2);

    // ...but not more: the request is answered with enoperm, under its own id.
    let s = plan_one(&fleet(&[], "diskless", &[&req("migrate")]), &limits());
    assert_eq!(s.state, State::Pending);
    assert_eq!(s.added[0], format!("result:failover:{A}:{NOW}:enoperm:"));
    assert!(s.repair.is_none());

    // Never while suspended, never on a parked target.
    let s = plan_one(
        &fleet(&["suspend"], "diskless", &[&req("failover")]),
        &limits(),
    );
    assert_eq!(
        (s.state, s.repair.is_none(), s.added.is_empty()),
        (State::Pending, true, true)
    );
    let failed = format!("result:migrate:{B}:5:failure:9");
    let s = plan_one(
        &fleet(&["failover"], "diskless", &[&req("failover"), &failed]),
        &limits(),
    );
    assert_eq!((s.state, s.repair.is_none()), (State::Pending, true));
}

#[test]
fn jobs_out_of_chain_order_are_never_filled_in() {
    // A replace-disks ran for a failover repair whose failover never did (another tool wrote
    // the tag): no failover is submitted after the fact; the jobs are judged as a whole.
    let pending = format!("pending:failover:{A}:{}:2", NOW - 100);
    let mut snap = fleet(&["failover"], "drbd", &[&pending]);
    snap.nodes[0].offline = false;
    snap.jobs = vec![job(2, A, replace(), JobStatus::Success, None)];
    let s = plan_one(&snap, &limits());
    assert!(s.repair.is_none());
    assert_eq!(
        s.added,
        vec![format!("result:failover:{A}:{NOW}:success:2")]
    );
}

#[test]
fn a_failure_parks_the_target_and_is_never_pruned() {
    let failed = format!("result:failover:{B}:5:failure:9");
    let s = plan_one(&fleet(&["reinstall"], "diskless", &[&failed]), &limits());
    assert_eq!(s.state, State::Failed);
    assert!(s.repair.is_none() && s.removed.is_empty() && s.added.is_empty());
}

#[test]
fn crash_leftovers_are_adopted_not_resubmitted() {
    // A pass wrote the pending tag, submitted job 1 and died before recording it.
    let pending = format!("pending:failover:{A}:{}:", NOW - 100);
    let mut snap = fleet(&["failover"], "drbd", &[&pending]);
    snap.jobs = vec![job(1, A, failover(), JobStatus::Running, None)];
    let s = plan_one(&snap, &limits());
    assert_eq!(s.state, State::Pending);
    assert!(s.repair.is_none(), "no second submission");
    assert_eq!(
        s.added,
        vec![format!("pending:failover:{A}:{}:1", NOW - 100)]
    );
    assert_eq!(s.removed, vec![pending.clone()]);

    // It died after job 1 of 2 and job 1 finished: only the missing step is submitted.
    snap.jobs[0].status = Some(JobStatus::Success);
    snap.instances[0].pnode = "n2".into();
    snap.instances[0].snodes = vec!["n1".into()];
    let s = plan_one(&snap, &limits());
    let r = s.repair.expect("the chain is completed");
    assert_eq!(
        (kinds(&r), r.keep_jobs.clone()),
        (vec![OpKind::ReplaceDisks], vec![1])
    );

    // It died between writing the tag with the jobs and removing the old one.
    let with_jobs = format!("pending:failover:{A}:{}:1", NOW - 100);
    let mut snap = fleet(&["failover"], "drbd", &[&pending, &with_jobs]);
    snap.jobs = vec![job(1, A, failover(), JobStatus::Running, None)];
    let s = plan_one(&snap, &limits());
    assert_eq!(
        (s.added.clone(), s.removed.clone()),
        (vec![], vec![pending.clone()])
    );

    // It died between writing a result and removing the pending tag: no second result.
    let mut snap = fleet(
        &["failover"],
        "drbd",
        &[&with_jobs, &format!("result:failover:{A}:{NOW}:failure:1")],
    );
    snap.jobs = vec![job(1, A, failover(), JobStatus::Error, Some("wrong_state"))];
    let s = plan_one(&snap, &limits());
    assert_eq!(
        (s.added.clone(), s.removed.clone()),
        (vec![], vec![with_jobs.clone()])
    );
}

#[test]
fn an_unrecorded_running_job_blocks_a_new_start() {
    // The tag job recording the repair is still queued (Ganeti): the repair job runs already.
    let mut snap = fleet(&["failover"], "diskless", &[]);
    snap.jobs = vec![job(5, A, failover(), JobStatus::Running, None)];
    let s = plan_one(&snap, &limits());
    // No pending tag yet, so not pending; the pass waits for the tag.
    assert_eq!(s.state, State::NeedsRepair);
    assert!(s.repair.is_none() && s.added.is_empty());
    let p = plan(&snap, NOW, &limits(), 1);
    let target = p.target("i1").unwrap();
    assert_eq!(
        (&target.next, &target.blocked),
        (&Next::Wait, &Some(Blocked::OtherRepair))
    );
}

#[test]
fn several_pending_repairs_are_handled_oldest_first() {
    let old = format!("pending:failover:{A}:{}:1", NOW - 500);
    let new = format!("pending:failover:{B}:{}:", NOW - 100);
    let mut snap = fleet(&["failover"], "diskless", &[&new, &old]);
    snap.jobs = vec![job(1, A, failover(), JobStatus::Running, None)];
    let s = plan_one(&snap, &limits());
    assert_eq!(s.state, State::Pending);
    assert!(
        s.repair.is_none(),
        "the newer one waits while the older runs"
    );
    let p = plan(&snap, NOW, &limits(), 1);
    assert!(
        p.lint
            .iter()
            .any(|l| l.message.contains("2 repairs pending"))
    );

    // Once the older succeeded, the newer request is served in the same pass.
    snap.jobs[0].status = Some(JobStatus::Success);
    let s = plan_one(&snap, &limits());
    assert!(
        s.added
            .iter()
            .any(|a| a.starts_with(&format!("result:failover:{A}")))
    );
    assert_eq!(s.repair.map(|r| r.id), Some(B.to_owned()));
}

/// `dead` instances (diskless, named `a-N`) on the offline n1 and `other` (named `b-N`) on n2,
/// with the group allowing failover.
fn dead_node_fleet(dead: usize, other: usize) -> Snapshot {
    let mut fleet = group_g(&["failover"]);
    for (prefix, node, n) in [("a", "n1", dead), ("b", "n2", other)] {
        for k in 0..n {
            fleet = fleet.instance(format!("{prefix}-{k:02}")).primary(node);
        }
    }
    fleet.build()
}

#[test]
fn one_dead_node_is_repaired_at_once_with_the_default_limits() {
    let snap = dead_node_fleet(40, 0);
    let p = plan(&snap, NOW, &Limits::default(), 1);
    assert_eq!(p.fleet.started, 40);
    assert!(
        p.targets.iter().all(|t| matches!(
            t.next,
            Next::Start {
                repair: Failover,
                ..
            }
        )),
        "{:?}",
        p.targets.iter().map(|t| &t.next).collect::<Vec<_>>()
    );
    assert_eq!(p.fleet.domains_under_repair, vec!["n1".to_owned()]);
    assert!(p.fleet.halted.is_none() && p.fleet.halted_groups.is_empty());
    // Each start: the pending tag, the failover job, the tag that records it, the removal of
    // the first tag.
    assert_eq!(p.fleet.writes, 40 * 4);
    // The state is the state now: nothing is pending before the pass writes its tags.
    assert_eq!(p.counts[&State::NeedsRepair], 40);
    assert_eq!(p.counts[&State::Pending], 0);
}

#[test]
fn the_limiter_counts_failure_domains_and_says_which_limit_held() {
    struct Case {
        what: &'static str,
        limits: Limits,
        /// Nodes besides n1 that are down (offline).
        also_down: &'static [&'static str],
        started: usize,
        halted: Option<(&'static str, &'static str)>,
        blocked: Option<Blocked>,
    }
    let d = Limits::default;
    let cases = [
        Case {
            what: "one dead node: all of its instances",
            limits: d(),
            also_down: &[],
            started: 40,
            halted: None,
            blocked: None,
        },
        Case {
            what: "the optional per-target cap",
            limits: Limits {
                max_pending: Some(5),
                ..d()
            },
            also_down: &[],
            started: 5,
            halted: None,
            blocked: Some(Blocked::NoSlot {
                limit: "max_pending",
            }),
        },
        Case {
            what: "two dead nodes in a group: one domain at a time",
            limits: d(),
            also_down: &["n2"],
            started: 40,
            halted: None,
            blocked: Some(Blocked::NoSlot {
                limit: "max_domains_under_repair",
            }),
        },
        Case {
            what: "two domains allowed at once",
            limits: Limits {
                max_domains_under_repair: 2,
                ..d()
            },
            also_down: &["n2"],
            started: 50,
            halted: None,
            blocked: None,
        },
        Case {
            what: "three down in one group: mass failure there",
            limits: d(),
            also_down: &["n2", "n3"],
            started: 0,
            halted: Some(("group/g", "max_down_nodes_per_group")),
            blocked: Some(Blocked::MassFailure {
                scope: "group/g".into(),
                limit: "max_down_nodes_per_group",
            }),
        },
        Case {
            what: "cluster-wide limit",
            limits: Limits {
                max_down_nodes: 1,
                ..d()
            },
            also_down: &["n2"],
            started: 0,
            halted: Some(("cluster", "max_down_nodes")),
            blocked: Some(Blocked::MassFailure {
                scope: "cluster".into(),
                limit: "max_down_nodes",
            }),
        },
        Case {
            what: "the optional brake in broken instances",
            limits: Limits {
                max_broken: Some(39),
                ..d()
            },
            also_down: &[],
            started: 0,
            halted: Some(("cluster", "max_broken")),
            blocked: Some(Blocked::MassFailure {
                scope: "cluster".into(),
                limit: "max_broken",
            }),
        },
        Case {
            what: "the write budget: 4 writes a start",
            limits: Limits {
                max_writes_per_pass: 30,
                ..d()
            },
            also_down: &[],
            started: 7,
            halted: None,
            blocked: Some(Blocked::WriteBudget),
        },
    ];
    for c in cases {
        let mut snap = dead_node_fleet(40, 10);
        for n in snap.nodes.iter_mut() {
            if c.also_down.contains(&n.name.as_str()) {
                n.offline = true;
            }
        }
        let p = plan(&snap, NOW, &c.limits, 1);
        let starts = p
            .actions()
            .filter(|a| matches!(a, Action::Repair(_)))
            .count();
        assert_eq!(
            (p.fleet.started, starts),
            (c.started, c.started),
            "{}",
            c.what
        );
        let halts: Vec<(&str, &str)> = p
            .fleet
            .halted
            .iter()
            .chain(&p.fleet.halted_groups)
            .map(|h| (h.scope.as_str(), h.limit))
            .collect();
        assert_eq!(
            halts,
            c.halted.into_iter().collect::<Vec<_>>(),
            "{}",
            c.what
        );
        if c.halted.is_some() {
            assert_eq!(
                p.actions().count(),
                0,
                "{}: a mass failure writes nothing",
                c.what
            );
            assert_eq!(p.fleet.writes, 0, "{}", c.what);
        }
        let waiting: Vec<&TargetPlan> = p
            .targets
            .iter()
            .filter(|t| t.actions.is_empty() && t.needed_repair.is_some())
            .collect();
        match &c.blocked {
            Some(b) => assert!(
                !waiting.is_empty()
                    && waiting
                        .iter()
                        .all(|t| t.blocked.as_ref() == Some(b) && t.next == Next::Wait),
                "{}: {:?}",
                c.what,
                waiting.iter().map(|t| &t.blocked).collect::<Vec<_>>()
            ),
            None => assert!(waiting.is_empty(), "{}", c.what),
        }
        assert!(p.fleet.writes <= c.limits.max_writes_per_pass, "{}", c.what);
    }
}

#[test]
fn a_mass_failure_writes_only_the_bookkeeping_of_repairs_under_way() {
    let mut snap = dead_node_fleet(3, 0);
    for n in &mut snap.nodes[1..3] {
        n.offline = true;
    }
    // a-00: a repair whose job succeeded is still recorded. a-01: too weak a policy would get
    // an enoperm. a-02: an old success result would be pruned. The group's expired suspend
    // would be removed.
    snap.instances[0].tags = vec![t(&format!("pending:failover:{A}:{}:1", NOW - 600))];
    snap.jobs = vec![job(1, A, failover(), JobStatus::Success, None)];
    snap.jobs[0].instance = Some("a-00".into());
    snap.instances[1].tags = vec![t("migrate")];
    snap.instances[2].tags = vec![t(&format!("result:migrate:{B}:10:success:3"))];
    snap.groups[0].tags.push(t("suspend:10"));
    let p = plan(&snap, NOW, &Limits::default(), 1);
    assert_eq!(p.fleet.halted_groups.len(), 1);
    let written: Vec<String> = p.actions().map(|a| a.to_string()).collect();
    assert_eq!(written.len(), 2, "{written:#?}");
    assert!(
        written[0].contains(&format!("result:failover:{A}")) && written[0].contains(":success:1")
    );
    assert!(written[1].contains("remove") && written[1].contains(&format!("pending:failover:{A}")));
    let a01 = p.target("a-01").unwrap();
    assert!(
        a01.notes
            .iter()
            .any(|n| n.starts_with("held: mass failure in group g"))
    );
}

#[test]
fn enoperm_only_where_a_policy_exists() {
    // (group tags, instance tags, writes enoperm, blocked)
    let cases: &[(&[&str], &[&str], bool, Blocked)] = &[
        (&[], &[], false, Blocked::NoPolicy),
        (
            &["migrate"],
            &[],
            true,
            Blocked::NotAllowed {
                needs: Failover,
                allowed: Some(Migrate),
            },
        ),
        (
            &[],
            &["fix-storage"],
            true,
            Blocked::NotAllowed {
                needs: Failover,
                allowed: Some(FixStorage),
            },
        ),
    ];
    for (group, inst, enoperm, blocked) in cases {
        let snap = fleet(group, "diskless", inst);
        let p = plan(&snap, NOW, &limits(), 1);
        let target = p.target("i1").unwrap();
        let wrote = p.actions().any(|a| a.to_string().contains(":enoperm:"));
        assert_eq!(wrote, *enoperm, "{group:?} {inst:?}");
        assert_eq!(target.blocked.as_ref(), Some(blocked), "{group:?} {inst:?}");
        assert_eq!(target.state, State::NeedsRepair);
        if !enoperm {
            assert_eq!(p.actions().count(), 0);
        }
    }
}

#[test]
fn the_state_is_the_state_now_and_next_is_what_the_pass_does() {
    // (instance tags, jobs' status, state now, next)
    let running = JobStatus::Running;
    let cases: Vec<(Vec<String>, Option<JobStatus>, State, &str)> = vec![
        (vec![], None, State::NeedsRepair, "start"),
        (
            vec![format!("pending:failover:{A}:{}:", NOW - 5)],
            None,
            State::Pending,
            "start",
        ),
        (
            vec![format!("pending:failover:{A}:{}:1", NOW - 5)],
            Some(running),
            State::Pending,
            "nothing",
        ),
        (
            vec![format!("pending:failover:{A}:{}:1", NOW - 5)],
            Some(JobStatus::Success),
            State::Pending,
            "update-tags",
        ),
        (
            vec![format!("result:failover:{A}:{}:failure:1", NOW - 5)],
            None,
            State::Failed,
            "wait",
        ),
    ];
    for (tags, status, state, next) in cases {
        let tags: Vec<&str> = tags.iter().map(String::as_str).collect();
        let mut snap = fleet(&["failover"], "diskless", &tags);
        // A finished repair has moved the instance off the dead node.
        snap.nodes[0].offline = status != Some(JobStatus::Success);
        if let Some(s) = status {
            snap.jobs = vec![job(1, A, failover(), s, None)];
        }
        let p = plan(&snap, NOW, &limits(), 1);
        let target = p.target("i1").unwrap();
        assert_eq!(target.state, state, "{tags:?}");
        let json = serde_json::to_value(&target.next).unwrap();
        assert_eq!(json["do"], next, "{tags:?}: {:?}", target.next);
        assert_eq!(target.facts.primary.as_str(), "n1");
        assert_eq!(target.facts.run_status.as_str(), "running");
    }
}

#[test]
fn results_are_pruned_but_failures_kept() {
    let mut snap = fleet(&["reinstall"], "diskless", &[]);
    snap.nodes[0].offline = false;
    let old_ok = format!("result:migrate:{A}:10:success:3");
    let new_ok = format!("result:migrate:{B}:{}:success:4", NOW - 10);
    let old_fail = format!("result:failover:{A}:10:failure:5");
    snap.instances[0].tags = vec![t(&old_ok), t(&new_ok), t(&old_fail), "owner:bob".into()];
    let s = plan_one(&snap, &limits());
    assert_eq!(s.removed, vec![old_ok]);
    // Beyond max_results the oldest go even when recent.
    let few = Limits {
        max_results: 0,
        ..limits()
    };
    let s = plan_one(&snap, &few);
    assert_eq!(s.removed.len(), 2);
    assert!(!s.removed.iter().any(|r| r.contains("failure")));
}

#[test]
fn foreign_and_invalid_tags_are_never_touched() {
    let mut snap = fleet(&["failover"], "diskless", &[]);
    snap.instances[0].tags = vec![
        "owner:bob".into(),
        t("teleport"),
        t("pending:failover:nope:1:"),
    ];
    let p = plan(&snap, NOW, &limits(), 1);
    let touched: Vec<&String> = p
        .actions()
        .flat_map(|a| match a {
            Action::RemoveMarks { marks: tags, .. } => tags.iter().collect(),
            _ => vec![],
        })
        .collect();
    assert!(touched.is_empty(), "{touched:?}");
    assert_eq!(
        p.lint
            .iter()
            .filter(|l| l.object == super::instance("i1"))
            .count(),
        2
    );
    // Bad tags of ours hold the repair they would govern (rule 11); foreign ones never do.
    assert!(
        matches!(p.target("i1").unwrap().next, Next::Wait),
        "an unreadable pending tag holds the instance: {:?}",
        p.target("i1").unwrap().notes
    );
    snap.instances[0].tags = vec!["owner:bob".into()];
    let p = plan(&snap, NOW, &limits(), 1);
    assert!(
        matches!(p.target("i1").unwrap().next, Next::Start { .. }),
        "foreign tags do not stop the repair"
    );
}

#[test]
fn an_inconsistent_fleet_is_reported_not_acted_on() {
    let mut snap = fleet(&["reinstall"], "diskless", &[]);
    snap.instances[0].pnode = "ghost".into();
    let dup = snap.instances[0].clone();
    snap.instances.push(dup);
    let p = plan(&snap, NOW, &limits(), 1);
    assert_eq!(p.actions().count(), 0);
    assert!(p.targets.iter().all(|t| t.needs_person.is_some()));
}
