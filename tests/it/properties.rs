//! Property tests: the tag language round-trips, the parser never panics, and the planner keeps
//! its safety rules on adversarial fleets. Fast enough for CI in a debug build.
//!
//! Failing cases are not persisted to disk (`failure_persistence: None`): when one fails, copy
//! the shrunk case from the output into a plain `#[test]` below.

use crate::common;

use autorepair::engine::policy::Policy;
use autorepair::ganeti::snapshot::{
    Cluster, Group, Instance, Job, JobStatus, Node, ObjectRef, Op, Snapshot,
};
use autorepair::ganeti::tags::{
    self, GanetiLevel, MAX_TAG_LEN, PREFIX, RenderError, RepairResult, Tag, render_pending,
    render_policy, render_result, render_suspend,
};
use autorepair::ganeti::testkit::{Fleet, JobExt, job};
use autorepair::ganeti::{Action, Ganeti, Next, Plan, Settings, plan_with};
use autorepair::plug::marks::{MarkJson, describe};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::test_runner::Config;
use std::collections::{HashMap, HashSet};

/// What a pass is planned with: the engine's limits and the Ganeti family's settings (the
/// iallocator), drawn together; the limits read as the engine's.
#[derive(Clone, Debug)]
struct Limits {
    engine: autorepair::engine::Limits,
    settings: Settings,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            engine: Default::default(),
            settings: Settings::shipped(),
        }
    }
}

impl std::ops::Deref for Limits {
    type Target = autorepair::engine::Limits;
    fn deref(&self) -> &Self::Target {
        &self.engine
    }
}

fn plan(snap: &Snapshot, now: i64, limits: &Limits, seed: u64) -> Plan {
    plan_with(snap, &limits.settings, now, &limits.engine, seed)
}

fn config(cases: u32) -> Config {
    common::proptest_config(cases, 20261122)
}

// ---------------------------------------------------------------------------------------------
// Tags
// ---------------------------------------------------------------------------------------------

fn repair_type() -> impl Strategy<Value = GanetiLevel> {
    prop::sample::select(GanetiLevel::ALL.to_vec())
}

fn result_kind() -> impl Strategy<Value = RepairResult> {
    prop::sample::select(vec![
        RepairResult::Enoperm,
        RepairResult::Success,
        RepairResult::Failure,
    ])
}

/// Any UUID spelling the grammar accepts: 8-4-4-4-12 hex digits, either case.
fn any_uuid() -> impl Strategy<Value = String> {
    "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
}

fn tag_epoch() -> impl Strategy<Value = i64> {
    0i64..=9_999_999_999
}

fn tag_jobs() -> impl Strategy<Value = Vec<u64>> {
    vec(0u64..100_000_000_000, 0..=3)
}

fn ganeti_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_.+*/:@-".contains(&b)
}

/// What every parse must satisfy, whatever the input.
fn check_parse(text: &str) -> Result<(), TestCaseError> {
    // The JSON view walks job lists with `expect`, and the line `tags parse` shows renders the
    // tag's time: neither may panic.
    let _ = MarkJson::<Ganeti>::line(text);
    let _ = describe::<Ganeti>(text);
    match tags::parse(text) {
        Ok(Tag::Foreign) => prop_assert!(!text.starts_with(PREFIX), "ours parsed as foreign"),
        Ok(tag) => {
            prop_assert!(text.starts_with(PREFIX));
            prop_assert!(
                text.len() <= MAX_TAG_LEN,
                "valid tag of {} bytes",
                text.len()
            );
            prop_assert!(text.bytes().all(ganeti_char), "valid tag with a bad char");
            let rendered = match tags::render(&tag) {
                Some(Ok(r)) => r,
                other => return Err(TestCaseError::fail(format!("{tag:?} renders {other:?}"))),
            };
            prop_assert_eq!(tags::parse(&rendered), Ok(tag));
            let suspend_colon = format!("{PREFIX}suspend:");
            prop_assert!(
                rendered == text || text == suspend_colon,
                "{:?} renders as {:?}",
                text,
                rendered
            );
        }
        Err(e) => {
            prop_assert!(text.starts_with(PREFIX), "foreign tag rejected");
            prop_assert_eq!(&e.mark, text);
        }
    }
    Ok(())
}

/// A rendered tag must parse back to its parts and be its own canonical spelling; a refusal
/// must only ever be for length.
fn check_rendered(
    rendered: Result<String, RenderError>,
    expected_len: usize,
    parts: impl Fn(&Tag) -> bool,
) -> Result<(), TestCaseError> {
    match rendered {
        Ok(text) => {
            prop_assert_eq!(text.len(), expected_len);
            prop_assert!(text.len() <= MAX_TAG_LEN);
            let tag = tags::parse(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(parts(&tag), "{:?} parsed as {:?}", text, tag);
            prop_assert_eq!(tags::render(&tag), Some(Ok(text.clone())));
            check_parse(&text)?;
        }
        Err(RenderError::TooLong { len, .. }) => {
            prop_assert!(len > MAX_TAG_LEN);
            prop_assert_eq!(len, expected_len);
        }
        Err(e) => return Err(TestCaseError::fail(format!("refused: {e}"))),
    }
    Ok(())
}

fn jobs_len(jobs: &[u64]) -> usize {
    jobs.iter().map(|j| j.to_string().len()).sum::<usize>() + jobs.len().saturating_sub(1)
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn policy_tags_round_trip(t in repair_type()) {
        let text = render_policy(t);
        prop_assert_eq!(tags::parse(&text), Ok(Tag::Policy(t)));
        check_parse(&text)?;
    }

    #[test]
    fn suspend_tags_round_trip(until in option::of(tag_epoch())) {
        let len = PREFIX.len() + "suspend".len() + until.map_or(0, |u| 1 + u.to_string().len());
        check_rendered(render_suspend(until), len, |tag| *tag == Tag::Suspend { until, all: false })?;
    }

    #[test]
    fn pending_tags_round_trip(
        t in repair_type(),
        id in any_uuid(),
        since in tag_epoch(),
        jobs in tag_jobs(),
    ) {
        let len = PREFIX.len() + "pending:".len() + t.as_str().len() + 1 + id.len() + 1
            + since.to_string().len() + 1 + jobs_len(&jobs);
        check_rendered(render_pending(t, &id, since, &jobs), len, |tag| match tag {
            Tag::Pending(p) => {
                p.repair == t && p.id == id && p.since == since && p.ops.to_vec::<u64>() == jobs
            }
            _ => false,
        })?;
    }

    #[test]
    fn result_tags_round_trip(
        t in repair_type(),
        id in any_uuid(),
        at in tag_epoch(),
        result in result_kind(),
        jobs in tag_jobs(),
    ) {
        let len = PREFIX.len() + "result:".len() + t.as_str().len() + 1 + id.len() + 1
            + at.to_string().len() + 1 + result.as_str().len() + 1 + jobs_len(&jobs);
        check_rendered(render_result(t, &id, at, result, &jobs), len, |tag| match tag {
            Tag::Result(r) => {
                r.repair == t && r.id == id && r.at == at && r.result == result
                    && r.ops.to_vec::<u64>() == jobs
            }
            _ => false,
        })?;
    }

    #[test]
    fn the_renderer_refuses_what_the_parser_would(
        t in repair_type(),
        id in prop_oneof![any_uuid(), "[0-9a-zA-Z-]{0,40}"],
        at in any::<i64>(),
    ) {
        let uuid_ok = tags::parse(&format!("{PREFIX}pending:{t}:{id}:0:")).is_ok();
        match render_pending(t, &id, at, &[]) {
            Ok(text) => {
                prop_assert!(uuid_ok && at >= 0);
                check_parse(&text)?;
            }
            Err(RenderError::BadId { .. }) => prop_assert!(!uuid_ok),
            Err(RenderError::NegativeEpoch { .. }) => prop_assert!(uuid_ok && at < 0),
            Err(RenderError::TooLong { .. }) => prop_assert!(false, "short tag refused"),
        }
    }

    #[test]
    fn parse_never_panics_on_any_string(text in any::<String>()) {
        check_parse(&text)?;
    }

    #[test]
    fn parse_never_panics_after_the_prefix(rest in any::<String>()) {
        check_parse(&format!("{PREFIX}{rest}"))?;
    }

    #[test]
    fn parse_never_panics_on_plausible_fields(fields in vec(field(), 0..8)) {
        check_parse(&format!("{PREFIX}{}", fields.join(":")))?;
    }
}

/// One colon-separated field that is often almost right.
fn field() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "",
            "pending",
            "result",
            "suspend",
            "fix-storage",
            "migrate",
            "failover",
            "reinstall",
            "success",
            "failure",
            "enoperm",
            "0",
            "00",
            "01",
            "+",
            "1+",
            "+1",
            "1++2",
            "9223372036854775807",
            "9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
            "-1",
            " 1",
        ])
        .prop_map(str::to_owned),
        "[0-9]{0,22}",
        "[a-z-]{0,12}",
        "[0-9a-fA-F-]{30,40}",
        any_uuid(),
        vec("[0-9]{1,20}", 0..5).prop_map(|j| j.join("+")),
        "\\PC{0,6}",
    ]
}

// ---------------------------------------------------------------------------------------------
// The planner on adversarial fleets
// ---------------------------------------------------------------------------------------------

/// Repair ids shared between tags and job reasons, so that they meet.
const IDS: [&str; 6] = [
    "11111111-1111-4111-8111-111111111111",
    "22222222-2222-4222-8222-222222222222",
    "33333333-3333-4333-8333-333333333333",
    "44444444-4444-4444-8444-444444444444",
    "5555aaaa-5555-4555-8555-55555555aaaa",
    "5555AAAA-5555-4555-8555-55555555AAAA",
];
const NOW: i64 = 1_800_000_000;

fn pool_id() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::sample::select(IDS.to_vec()).prop_map(str::to_owned),
        1 => any_uuid(),
    ]
}

/// Mostly ids the fleet's jobs use; sometimes long ones that push tags towards 128 bytes.
fn job_id() -> impl Strategy<Value = u64> {
    prop_oneof![
        8 => 1u64..40,
        1 => 10_000_000_000u64..100_000_000_000,
    ]
}

/// Around now (both sides of it), or anywhere, up to times no date can name (another tool may
/// write `suspend:99999999999999999`).
fn epoch() -> impl Strategy<Value = i64> {
    prop_oneof![
        6 => (NOW - 10 * 86400)..(NOW + 10 * 86400),
        2 => 0i64..=9_999_999_999,
        1 => prop_oneof![
            Just(autorepair::engine::text::LAST_CALENDAR_SECOND + 1),
            Just(i64::MAX),
            autorepair::engine::text::LAST_CALENDAR_SECOND..=i64::MAX,
        ],
    ]
}

/// Everything the tool shows of a plan: the status table and its JSON, every target's
/// explanation and its JSON, the lint lines and the HTML report. None of it may fail, whatever
/// times the marks carry.
fn show_everything(p: &Plan, limits: &Limits) -> Result<(), TestCaseError> {
    use autorepair::report::{self, html};
    let table = report::status_table(p);
    let json = serde_json::to_string(&report::status_json(p)).expect("status JSON");
    prop_assert!(!table.is_empty() && !json.is_empty());
    for t in &p.targets {
        prop_assert!(!report::explain(p, t).is_empty());
        serde_json::to_string(t).expect("explain JSON");
    }
    for l in &p.lint {
        prop_assert!(!l.to_string().is_empty());
    }
    let scopes = vec![""; p.targets.len()];
    let page = html::page(&html::Page {
        plan: p,
        limits: &limits.engine,
        scopes: &scopes,
        source: "fleet.json",
    });
    prop_assert!(page.contains("</html>"));
    Ok(())
}

fn valid_tag() -> impl Strategy<Value = String> {
    prop_oneof![
        repair_type().prop_map(render_policy),
        option::of(epoch()).prop_map(|u| render_suspend(u).expect("short")),
        Just(format!("{PREFIX}suspend:")),
        (repair_type(), pool_id(), epoch(), vec(job_id(), 0..=3)).prop_map(|(t, id, s, j)| {
            render_pending(t, &id, s, &j)
                .unwrap_or_else(|_| render_pending(t, &id, s, &[]).expect("short"))
        }),
        (
            repair_type(),
            pool_id(),
            epoch(),
            result_kind(),
            vec(job_id(), 0..=3)
        )
            .prop_map(|(t, id, at, r, j)| render_result(t, &id, at, r, &j)
                .unwrap_or_else(|_| render_result(t, &id, at, r, &[]).expect("short"))),
    ]
}

fn invalid_tag() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "bogus",
            "suspend:01",
            "suspend:1:2",
            "suspend:-5",
            "pending:failover:not-a-uuid:1:",
            "pending:teleport:11111111-1111-4111-8111-111111111111:1:",
            "pending:failover:11111111-1111-4111-8111-111111111111:1:1++2",
            "pending:failover:11111111-1111-4111-8111-111111111111:1",
            "result:failover:11111111-1111-4111-8111-111111111111:1:meh:",
            "result:migrate:22222222-2222-4222-8222-222222222222:1:failure:18446744073709551616",
            "failover:now",
            "Failover",
            "reinstall ",
        ])
        .prop_map(|s| format!("{PREFIX}{s}")),
        Just(format!("{PREFIX}{}", "x".repeat(200))),
        Just(format!("{PREFIX}suspend:é")),
        "\\PC{0,12}".prop_map(|s| format!("{PREFIX}{s}")),
    ]
}

fn foreign_tag() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "env:demo",
            "ganeti:watcher:autorepair",
            "ganeti:watcher:autorepai:failover",
            "GANETI:watcher:autorepair:reinstall",
            " ganeti:watcher:autorepair:suspend",
            "ganeti:watcher:autorepair-suspend",
        ])
        .prop_map(str::to_owned),
        "[a-z:]{0,20}",
    ]
}

fn any_tag() -> impl Strategy<Value = String> {
    prop_oneof![6 => valid_tag(), 2 => invalid_tag(), 2 => foreign_tag()]
}

fn object_tags() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        30 => vec(any_tag(), 0..6),
        1 => vec(any_tag(), 100..300),
    ]
}

fn node_name() -> impl Strategy<Value = String> {
    // n0..n11 may exist; n12..n14 never do.
    (0usize..15).prop_map(|i| format!("n{i}"))
}

fn group_uuid() -> impl Strategy<Value = String> {
    // g0..g4 may exist; g5, g6 never do.
    (0usize..7).prop_map(|i| format!("g{i}"))
}

fn groups() -> impl Strategy<Value = Vec<Group>> {
    vec((0usize..4, object_tags()), 1..=5).prop_map(|gs| {
        gs.into_iter()
            .enumerate()
            .map(|(i, (name, tags))| Group {
                // Names may repeat; uuids are g0..g4 in order.
                name: format!("grp{name}"),
                uuid: format!("g{i}"),
                tags,
                other: Default::default(),
            })
            .collect()
    })
}

fn nodes() -> impl Strategy<Value = Vec<Node>> {
    vec(
        (
            any::<bool>(),
            any::<bool>(),
            prop::bool::weighted(0.85),
            group_uuid(),
            object_tags(),
        ),
        1..=12,
    )
    .prop_map(|ns| {
        ns.into_iter()
            .enumerate()
            .map(
                |(i, (offline, drained, vm_capable, group_uuid, tags))| Node {
                    name: format!("n{i}"),
                    offline,
                    drained,
                    vm_capable,
                    group_uuid,
                    tags,
                    mtime: None,
                    other: Default::default(),
                },
            )
            .collect()
    })
}

fn template() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "drbd",
        "drbd",
        "drbd",
        "plain",
        "file",
        "diskless",
        "sharedfile",
        "rbd",
        "ext",
        "gluster",
        "blockdev",
        "bogus",
        "",
    ])
    .prop_map(str::to_owned)
}

fn instances() -> impl Strategy<Value = Vec<Instance>> {
    vec(
        (
            prop::bool::weighted(0.08),
            any::<usize>(),
            node_name(),
            vec(node_name(), 0..=2),
            template(),
            prop::bool::weighted(0.8),
            object_tags(),
        ),
        0..=40,
    )
    .prop_map(|is| {
        let mut names: Vec<String> = Vec::new();
        is.into_iter()
            .enumerate()
            .map(|(i, (dup, pick, pnode, snodes, disk_template, up, tags))| {
                let name = if dup && i > 0 {
                    names[pick % i].clone()
                } else {
                    format!("i{i}")
                };
                names.push(name.clone());
                Instance {
                    name,
                    pnode,
                    snodes,
                    disk_template,
                    admin_state: if up { "up" } else { "down" }.into(),
                    status: "running".into(),
                    tags,
                    other: Default::default(),
                }
            })
            .collect()
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        option::of(node_name()).prop_map(|target_node| Op::Failover {
            target_node,
            iallocator: None
        }),
        any::<bool>().prop_map(|allow_failover| Op::Migrate {
            target_node: None,
            iallocator: Some("hail".into()),
            allow_failover
        }),
        Just(Op::ReplaceDisks {
            remote_node: None,
            iallocator: Some("hail".into())
        }),
        Just(Op::RecreateDisks {
            nodes: vec![],
            iallocator: Some("hail".into())
        }),
        Just(Op::Reinstall),
        node_name().prop_map(|target_node| Op::Move { target_node }),
    ]
}

fn job_status() -> impl Strategy<Value = Option<JobStatus>> {
    prop_oneof![
        1 => Just(None),
        6 => prop::sample::select(vec![
            JobStatus::Queued,
            JobStatus::Waiting,
            JobStatus::Canceling,
            JobStatus::Running,
            JobStatus::Canceled,
            JobStatus::Success,
            JobStatus::Success,
            JobStatus::Error,
            JobStatus::Error,
        ])
        .prop_map(Some),
    ]
}

fn opresult() -> impl Strategy<Value = serde_json::Value> {
    prop::sample::select(vec![
        serde_json::json!([null]),
        serde_json::json!([["OpPrereqError", ["no room", "insufficient_resources"]]]),
        serde_json::json!([["OpExecError", ["disk failure", "unknown"]]]),
        serde_json::json!([["OpPrereqError", "bare message"]]),
        serde_json::json!(null),
        serde_json::json!("garbage"),
    ])
}

fn reason() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        1 => Just(None),
        5 => pool_id().prop_map(|id| Some(format!("autorepair:{id}"))),
        1 => Just(Some("autorepair:not-a-uuid".to_owned())),
        1 => Just(Some("gnt-instance failover".to_owned())),
    ]
}

fn jobs() -> impl Strategy<Value = Vec<Job>> {
    vec(
        (
            job_id(),
            job_status(),
            opresult(),
            reason(),
            option::weighted(0.8, (0usize..45).prop_map(|i| format!("i{i}"))),
            option::weighted(0.8, op()),
            option::of(epoch()),
        ),
        0..16,
    )
    .prop_map(|js| {
        js.into_iter()
            .map(|(id, status, opresult, reason, instance, op, end_ts)| Job {
                id,
                status,
                opresult,
                reason,
                instance,
                op,
                depends: vec![],
                end_ts,
                passes_left: None,
                other: Default::default(),
                op_other: Default::default(),
            })
            .collect()
    })
}

fn snapshot() -> impl Strategy<Value = Snapshot> {
    (object_tags(), groups(), nodes(), instances(), jobs()).prop_map(
        |(cluster_tags, groups, nodes, instances, mut jobs)| {
            // Ganeti never reuses a job id.
            let mut seen = std::collections::HashSet::new();
            jobs.retain(|j| seen.insert(j.id));
            Snapshot {
                cluster: Cluster {
                    name: "c".into(),
                    tags: cluster_tags,
                    other: Default::default(),
                },
                groups,
                nodes,
                instances,
                jobs,
                simulation: Default::default(),
                other: Default::default(),
            }
        },
    )
}

fn limits() -> impl Strategy<Value = Limits> {
    (
        (option::of(0usize..=3), option::of(0usize..=50), 0usize..=3),
        (0usize..=3, 0usize..=6, 1usize..=400),
        any::<bool>(),
        0usize..=25,
    )
        .prop_map(
            |(
                (max_pending, max_broken, max_domains_under_repair),
                (max_down_nodes_per_group, max_down_nodes, max_writes_per_pass),
                iallocator,
                max_results,
            )| Limits {
                engine: autorepair::engine::Limits {
                    max_pending,
                    max_broken,
                    max_domains_under_repair,
                    max_down_nodes_per_group,
                    max_down_nodes,
                    max_writes_per_pass,
                    max_results,
                    ..Default::default()
                },
                settings: Settings {
                    iallocator: iallocator.then(|| "hail".into()),
                    unsupported: vec![],
                },
            },
        )
}

/// The instant: mostly [`NOW`], sometimes a little off so suspends and retries land on both
/// sides of it.
fn now() -> impl Strategy<Value = i64> {
    prop_oneof![3 => Just(NOW), 1 => (NOW - 86400)..(NOW + 86400)]
}

fn parsed<'t>(tags: &'t [String]) -> impl Iterator<Item = Tag<'t>> + 't {
    tags.iter().filter_map(|t| tags::parse(t).ok())
}

/// True when the removed tag is present on the object in the snapshot (any object of that
/// name, as names may repeat).
fn carries(snap: &Snapshot, object: &ObjectRef, tag: &str) -> bool {
    use autorepair::ganeti::kind;
    let has = |tags: &[String]| tags.iter().any(|t| t == tag);
    let n = &object.name;
    match object.kind.as_ref() {
        kind::CLUSTER => has(&snap.cluster.tags),
        kind::GROUP => snap.groups.iter().any(|g| &g.name == n && has(&g.tags)),
        kind::NODE => snap.nodes.iter().any(|x| &x.name == n && has(&x.tags)),
        _ => snap.instances.iter().any(|i| &i.name == n && has(&i.tags)),
    }
}

/// (e), (f) for one tag-writing action.
fn check_tag_action(snap: &Snapshot, action: &Action) -> Result<(), TestCaseError> {
    match action {
        Action::AddMarks {
            marks: tags,
            object,
            ..
        } => {
            prop_assert!(!tags.is_empty(), "empty add on {}", object);
            for t in tags {
                prop_assert!(t.starts_with(PREFIX), "adds foreign tag {:?}", t);
                match tags::parse(t) {
                    Ok(Tag::Foreign) | Err(_) => {
                        prop_assert!(false, "adds invalid tag {:?} to {}", t, object)
                    }
                    Ok(_) => {}
                }
            }
        }
        Action::RemoveMarks {
            marks: tags,
            object,
            ..
        } => {
            prop_assert!(!tags.is_empty(), "empty remove on {}", object);
            for t in tags {
                prop_assert!(t.starts_with(PREFIX), "removes foreign tag {:?}", t);
                let failure = matches!(
                    tags::parse(t),
                    Ok(Tag::Result(r)) if r.result == RepairResult::Failure
                );
                prop_assert!(!failure, "removes failure result {:?} from {}", t, object);
                prop_assert!(
                    carries(snap, object, t),
                    "removes {:?} that {} lacks",
                    t,
                    object
                );
            }
        }
        Action::Repair(_) => {}
        Action::Advance { .. } => prop_assert!(false, "Ganeti runs no operation itself"),
    }
    Ok(())
}

/// Safety rules (a) to (f) of one plan.
fn check_plan(snap: &Snapshot, limits: &Limits, p: &Plan) -> Result<(), TestCaseError> {
    prop_assert_eq!(p.targets.len(), snap.instances.len());
    for a in &p.scope_actions {
        prop_assert!(
            !matches!(a, Action::Repair(_)),
            "repair among scope actions"
        );
        check_tag_action(snap, a)?;
    }
    let mut new_starts = 0;
    let mut repairs = 0;
    for (t, inst) in p.targets.iter().zip(&snap.instances) {
        prop_assert_eq!(&t.name, &inst.name);
        let own: Vec<Tag> = parsed(&inst.tags).collect();
        let has_failure = own
            .iter()
            .any(|tag| matches!(tag, Tag::Result(r) if r.result == RepairResult::Failure));
        let suspended = matches!(
            t.policy,
            Some(Policy::SuspendedUntil { .. } | Policy::SuspendedForever)
        );
        let mut own_repairs = 0;
        for a in &t.actions {
            check_tag_action(snap, a)?;
            if let Action::AddMarks { object, .. } | Action::RemoveMarks { object, .. } = a {
                prop_assert_eq!(object, &autorepair::ganeti::instance(inst.name.clone()));
            }
            let Action::Repair(r) = a else { continue };
            own_repairs += 1;
            repairs += 1;
            prop_assert_eq!(&r.target, &inst.name);
            prop_assert!(!r.ops.is_empty(), "repair {} submits nothing", r.id);
            // (a) within the policy, or asked for by a pending tag of at least that type.
            let allowed = t.allowed_repair.is_some_and(|a| r.repair <= a);
            let requested = own
                .iter()
                .any(|tag| matches!(tag, Tag::Pending(p) if p.id == r.id && p.repair >= r.repair));
            prop_assert!(
                allowed || requested,
                "{}: {} repair {} beyond policy {:?} and not requested",
                inst.name,
                r.repair,
                r.id,
                t.allowed_repair
            );
            // (b) never on a suspended or parked target.
            prop_assert!(!suspended, "{}: repair while {:?}", inst.name, t.policy);
            prop_assert!(
                !has_failure,
                "{}: repair despite a failure result",
                inst.name
            );
            // (f) the first tag it writes is ours and valid.
            if let Some(first) = &r.write_first {
                prop_assert!(
                    matches!(tags::parse(first), Ok(Tag::Pending(p)) if p.id == r.id && p.ops.is_empty()),
                    "write_first {:?}",
                    first
                );
            }
            for old in &r.replaces {
                prop_assert!(inst.tags.contains(old), "replaces {:?} it lacks", old);
            }
            // A continuation has jobs: recorded in a pending tag of its id, or adopted by reason.
            let has_jobs = own
                .iter()
                .any(|tag| matches!(tag, Tag::Pending(p) if p.id == r.id && !p.ops.is_empty()))
                || snap
                    .jobs
                    .iter()
                    .any(|j| j.op.is_some() && j.repair_id() == Some(r.id.as_str()));
            if r.write_first.is_some() || !has_jobs {
                new_starts += 1;
            }
        }
        // (c) one repair per target.
        prop_assert!(own_repairs <= 1, "{}: {} repairs", inst.name, own_repairs);
    }
    // (c) the fleet-wide limits, as the planner counts them and as seen from outside.
    if let Some(cap) = limits.max_pending {
        prop_assert!(p.fleet.started <= cap);
        prop_assert!(
            new_starts <= cap,
            "{} new starts, max_pending {}",
            new_starts,
            cap
        );
    }
    let new_domains: HashSet<&str> = p
        .actions()
        .filter_map(|a| match a {
            Action::Repair(r) if r.write_first.is_some() => Some(r.target.as_str()),
            _ => None,
        })
        .filter_map(|name| snap.instances.iter().find(|i| i.name == name))
        .map(|i| {
            let down = |n: &str| {
                snap.nodes
                    .iter()
                    .any(|x| x.name == n && (x.offline || x.drained || !x.vm_capable))
            };
            std::iter::once(&i.pnode)
                .chain(&i.snodes)
                .find(|n| down(n))
                .unwrap_or(&i.pnode)
                .as_str()
        })
        .collect();
    prop_assert!(
        new_domains.len() <= limits.max_domains_under_repair,
        "new repairs in {:?}, max_domains_under_repair {}",
        new_domains,
        limits.max_domains_under_repair
    );
    // (d) a mass failure, counted from outside: no repair starts and only the bookkeeping of
    // repairs under way is written.
    let down = snap
        .nodes
        .iter()
        .filter(|n| n.offline || n.drained || !n.vm_capable)
        .count();
    if down > limits.max_down_nodes {
        prop_assert!(p.fleet.halted.is_some(), "{} nodes down, no halt", down);
    }
    if p.fleet.halted.is_some() {
        prop_assert_eq!(repairs, 0, "repairs despite a halt");
        for a in p.actions() {
            if let Action::AddMarks { marks: tags, .. } = a {
                for t in tags {
                    let bookkeeping = match tags::parse(t) {
                        Ok(Tag::Pending(pt)) => !pt.ops.is_empty(),
                        Ok(Tag::Result(r)) => r.result != RepairResult::Enoperm,
                        _ => false,
                    };
                    prop_assert!(bookkeeping, "{} written during a mass failure", t);
                }
            }
        }
    }
    prop_assert!(
        p.fleet.writes <= limits.max_writes_per_pass.max(max_single_target_cost(p)),
        "{} writes, budget {}",
        p.fleet.writes,
        limits.max_writes_per_pass
    );
    Ok(())
}

/// The first repair under way goes through whole, even past the budget, so that none waits
/// forever (the engine's `plan::tests` pin which target that is; this bound is any target's).
fn max_single_target_cost(p: &Plan) -> usize {
    p.targets
        .iter()
        .map(|t| {
            t.actions
                .iter()
                .map(|a| match a {
                    Action::Repair(r) => {
                        usize::from(r.write_first.is_some())
                            + r.ops.len()
                            + 1
                            + usize::from(r.write_first.is_some() || !r.replaces.is_empty())
                    }
                    _ => 1,
                })
                .sum::<usize>()
        })
        .max()
        .unwrap_or(0)
        + p.scope_actions.len()
}

/// (g) A target whose name appears twice gets no actions: the planner cannot tell which
/// instance a change by name would hit.
fn check_duplicates_untouched(snap: &Snapshot, p: &Plan) -> Result<(), TestCaseError> {
    let mut name_count: HashMap<&str, usize> = HashMap::new();
    for i in &snap.instances {
        *name_count.entry(i.name.as_str()).or_default() += 1;
    }
    for t in &p.targets {
        if name_count[t.name.as_str()] > 1 {
            prop_assert!(t.actions.is_empty(), "duplicate {} has actions", t.name);
        }
    }
    Ok(())
}

/// The jobs a tag written on an instance records are that instance's: never a job the backend
/// says works on another instance (repair ids can repeat across instances, e.g. one request id
/// tagged on several instances by a tool), unless the instance's own tags already named it.
fn check_jobs_stay_with_their_instance(snap: &Snapshot, p: &Plan) -> Result<(), TestCaseError> {
    let instance_of: HashMap<u64, &str> = snap
        .jobs
        .iter()
        .filter_map(|j| Some((j.id, j.instance.as_deref()?)))
        .collect();
    for (t, inst) in p.targets.iter().zip(&snap.instances) {
        let own_jobs: Vec<u64> = parsed(&inst.tags)
            .flat_map(|tag| match tag {
                Tag::Pending(p) => p.ops.to_vec::<u64>(),
                Tag::Result(r) => r.ops.to_vec::<u64>(),
                _ => vec![],
            })
            .collect();
        for a in &t.actions {
            let (recorded, what): (Vec<u64>, String) = match a {
                Action::AddMarks { marks: tags, .. } => (
                    tags.iter()
                        .flat_map(|text| match tags::parse(text) {
                            Ok(Tag::Pending(p)) => p.ops.to_vec::<u64>(),
                            Ok(Tag::Result(r)) => r.ops.to_vec::<u64>(),
                            _ => vec![],
                        })
                        .collect(),
                    format!("tags {tags:?}"),
                ),
                Action::Repair(r) => (r.keep_jobs.clone(), format!("repair {}", r.id)),
                Action::RemoveMarks { .. } | Action::Advance { .. } => continue,
            };
            for job in recorded.into_iter().filter(|j| !own_jobs.contains(j)) {
                if let Some(other) = instance_of.get(&job).filter(|o| **o != t.name) {
                    prop_assert!(
                        false,
                        "{}: {} records job {} of instance {}",
                        t.name,
                        what,
                        job,
                        other
                    );
                }
            }
        }
    }
    Ok(())
}

/// README rule 3: never a second repair beside one under way. For every repair submitted:
/// - no job of another repair is unfinished on the instance: a job whose reason names another
///   repair and that works on this instance, or that another pending tag of the instance records
///   or names by reason;
/// - a brand-new repair (it writes a pending tag first and the instance has none of its id)
///   starts only once every earlier pending tag of the instance is removed in the same pass;
/// - once written, no stale pending tag of its own id is left (each is replaced or removed).
///
/// Requests (pending tags without jobs) may wait behind a repair.
fn check_one_repair_at_a_time(snap: &Snapshot, p: &Plan) -> Result<(), TestCaseError> {
    let unfinished: Vec<&Job> = snap
        .jobs
        .iter()
        .filter(|j| j.status.is_some_and(|s| !s.is_finished()))
        .collect();
    for (t, inst) in p.targets.iter().zip(&snap.instances) {
        let pendings: Vec<(&String, tags::Pending)> = inst
            .tags
            .iter()
            .filter_map(|text| match tags::parse(text) {
                Ok(Tag::Pending(p)) => Some((text, p)),
                _ => None,
            })
            .collect();
        let removed: Vec<&String> = t
            .actions
            .iter()
            .flat_map(|a| match a {
                Action::RemoveMarks { marks: tags, .. } => tags.iter().collect(),
                _ => vec![],
            })
            .collect();
        for a in &t.actions {
            let Action::Repair(r) = a else { continue };
            let brand_new = r.write_first.is_some() && pendings.iter().all(|(_, p)| p.id != r.id);
            for (text, other) in &pendings {
                if other.id == r.id {
                    prop_assert!(
                        r.replaces.contains(text) || removed.contains(text),
                        "{}: repair {} leaves its tag {:?}",
                        inst.name,
                        r.id,
                        text
                    );
                } else if brand_new {
                    prop_assert!(
                        removed.contains(text),
                        "{}: new repair {} starts while {:?} stays",
                        inst.name,
                        r.id,
                        text
                    );
                }
            }
            for j in &unfinished {
                let Some(x) = j.repair_id().filter(|x| *x != r.id) else {
                    continue;
                };
                let on_this = j.instance.as_deref() == Some(inst.name.as_str());
                // A job belongs to another repair of this instance when that repair's tag
                // records it, or when it carries that repair's id and does not name another
                // instance (the adoption rule; another instance's job with the same id is not
                // this instance's).
                let of_other_tag = pendings.iter().any(|(_, p)| {
                    p.id != r.id
                        && ((p.id == x && j.instance.as_deref().is_none_or(|i| i == inst.name))
                            || p.ops.iter::<u64>().any(|id| id == j.id))
                });
                prop_assert!(
                    !(on_this || of_other_tag),
                    "{}: repair {} submitted while job {} of repair {} is {:?}",
                    inst.name,
                    r.id,
                    j.id,
                    x,
                    j.status
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn the_planner_keeps_its_safety_rules(
        snap in snapshot(),
        limits in limits(),
        now in now(),
        seed in any::<u64>(),
    ) {
        let p = plan(&snap, now, &limits, seed);
        check_plan(&snap, &limits, &p)?;
        show_everything(&p, &limits)?;
    }
}

proptest! {
    #![proptest_config(config(256))]

    // Its regression test: `duplicate_names_get_no_actions_even_when_results_expire`.
    #[test]
    fn duplicate_names_get_no_actions(
        snap in snapshot(),
        limits in limits(),
        now in now(),
        seed in any::<u64>(),
    ) {
        let p = plan(&snap, now, &limits, seed);
        check_duplicates_untouched(&snap, &p)?;
    }

    // Its regression test: `jobs_of_another_instance_are_not_adopted`.
    #[test]
    fn jobs_stay_with_their_instance(
        snap in snapshot(),
        limits in limits(),
        now in now(),
        seed in any::<u64>(),
    ) {
        let p = plan(&snap, now, &limits, seed);
        check_jobs_stay_with_their_instance(&snap, &p)?;
    }

    // Its regression test: `an_older_request_does_not_start_beside_a_running_repair`,
    // `a_request_does_not_start_beside_an_unrecorded_running_job` and
    // `a_failure_with_a_long_job_list_is_still_recorded`.
    #[test]
    fn the_planner_never_starts_a_second_repair(
        snap in snapshot(),
        limits in limits(),
        now in now(),
        seed in any::<u64>(),
    ) {
        let p = plan(&snap, now, &limits, seed);
        check_one_repair_at_a_time(&snap, &p)?;
    }
}

proptest! {
    #![proptest_config(config(128))]

    /// Liveness: a planner that does nothing fails this. One dead (or drained) node carrying
    /// any number of instances whose policy allows their repair: with the default limits every
    /// one of them starts in the first pass.
    #[test]
    fn every_allowed_repair_of_one_dead_node_starts_at_once(
        count in 1usize..80,
        offline in any::<bool>(),
        template in prop_oneof![Just("diskless"), Just("sharedfile"), Just("rbd"), Just("ext")],
        policy in prop_oneof![Just("migrate"), Just("failover"), Just("reinstall")],
        on_group in any::<bool>(),
    ) {
        let mut fleet = fleet();
        for k in 0..count {
            fleet = fleet.instance(format!("i{k}")).primary("n0").template(template);
        }
        let mut snap = fleet.build();
        snap.nodes[0].offline = offline;
        let tag = format!("{PREFIX}{policy}");
        if on_group {
            snap.groups[0].tags.push(tag);
        } else {
            snap.cluster.tags.push(tag);
        }
        let needed = if offline { GanetiLevel::Failover } else { GanetiLevel::Migrate };
        let allowed = policy.parse::<GanetiLevel>().unwrap() >= needed;
        let p = plan(&snap, NOW, &Limits::default(), 1);
        let started = p.targets.iter().filter(|t| matches!(t.next, Next::Start { .. })).count();
        prop_assert_eq!(started, if allowed { count } else { 0 });
        prop_assert_eq!(p.fleet.deferred, 0);
    }
}

// ---------------------------------------------------------------------------------------------
// Shrunk cases, kept as plain tests
// ---------------------------------------------------------------------------------------------

const A: &str = "aaaaaaaa-0000-4000-8000-00000000000a";
const B: &str = "bbbbbbbb-0000-4000-8000-00000000000b";

/// Group `grp0` with the drained n0 (a diskless instance on it needs a migration) and n1.
fn fleet() -> Fleet {
    Fleet::new()
        .group("grp0")
        .uuid("g0")
        .node("n0", "grp0")
        .drained()
        .node("n1", "grp0")
}

fn running_job(id: u64, repair: &str, instance: &str) -> Job {
    job(id, JobStatus::Running)
        .repair(repair)
        .on(instance)
        .op(Op::Migrate {
            target_node: None,
            iallocator: Some("hail".into()),
            allow_failover: false,
        })
}

fn check_case(snap: &Snapshot, limits: &Limits, now: i64) {
    let p = plan(snap, now, limits, 1);
    let run = || -> Result<(), TestCaseError> {
        check_plan(snap, limits, &p)?;
        check_duplicates_untouched(snap, &p)?;
        check_jobs_stay_with_their_instance(snap, &p)?;
        check_one_repair_at_a_time(snap, &p)
    };
    if let Err(e) = run() {
        panic!("{e}\nplan actions: {:#?}", p.actions().collect::<Vec<_>>());
    }
}

/// Two instances named alike, one with a success result past `result_retention`: the planner
/// promises to change nothing on either, yet prunes the result.
#[test]
fn duplicate_names_get_no_actions_even_when_results_expire() {
    let old = render_result(
        GanetiLevel::Migrate,
        A,
        NOW - 30 * 86400,
        RepairResult::Success,
        &[],
    )
    .unwrap();
    let snap = fleet()
        .instance("i0")
        .primary("n1")
        .instance("i0")
        .primary("n1")
        .tags([old])
        .build();
    check_case(&snap, &Limits::default(), NOW);
}

/// A once-off request whose timestamp is older than a repair already running on the instance is
/// served first, and a second repair is submitted while the first one's job still runs.
#[test]
fn an_older_request_does_not_start_beside_a_running_repair() {
    let running = render_pending(GanetiLevel::Migrate, B, NOW - 600, &[7]).unwrap();
    let request = render_pending(GanetiLevel::Migrate, A, NOW - 3600, &[]).unwrap();
    let snap = fleet()
        .instance("i0")
        .primary("n0")
        .tags([running, request])
        .job(running_job(7, B, "i0"))
        .build();
    check_case(&snap, &Limits::default(), NOW);
}

/// A request is served while a job of another repair, whose pending tag the snapshot does not
/// show yet, still runs on the instance (the case `fresh` guards against for new repairs).
#[test]
fn a_request_does_not_start_beside_an_unrecorded_running_job() {
    let request = render_pending(GanetiLevel::Migrate, A, NOW - 3600, &[]).unwrap();
    let snap = fleet()
        .instance("i0")
        .primary("n0")
        .tags([request])
        .job(running_job(7, B, "i0"))
        .build();
    check_case(&snap, &Limits::default(), NOW);
}

/// One request id tagged on two instances (as a tool tagging several at once might): once the
/// first one's repair succeeded, the second adopts that job and records a success for itself,
/// though it was never repaired and is still broken.
#[test]
fn jobs_of_another_instance_are_not_adopted() {
    let request = render_pending(GanetiLevel::Migrate, A, NOW - 3600, &[]).unwrap();
    let mut done = running_job(7, A, "i0");
    done.status = Some(JobStatus::Success);
    done.end_ts = Some(NOW - 60);
    let snap = fleet()
        .instance("i0")
        .primary("n1")
        .instance("i1")
        .primary("n0")
        .tags([request])
        .job(done)
        .build();
    check_case(&snap, &Limits::default(), NOW);
}

/// A repair whose jobs (written by another tool, so not placed in a chain) failed must end as
/// a recorded failure even when its pending tag is close to 128 bytes.
#[test]
fn a_failure_with_a_long_job_list_is_still_recorded() {
    let ids = [1_000_000_001, 1_000_000_002, 1_000_000_003];
    let pending = render_pending(GanetiLevel::Migrate, A, NOW - 3600, &ids).unwrap();
    assert_eq!(pending.len(), 122);
    let jobs = ids
        .iter()
        .map(|&id| {
            let mut j = running_job(id, A, "i0");
            j.status = Some(if id == ids[2] {
                JobStatus::Error
            } else {
                JobStatus::Success
            });
            j.op = None;
            j.end_ts = Some(NOW - 60);
            j
        })
        .collect();
    let mut snap = fleet()
        .instance("i0")
        .primary("n0")
        .tags([pending])
        .with(|s| s.jobs = jobs)
        .build();
    snap.cluster.tags = vec![render_policy(GanetiLevel::Migrate)];
    let p = plan(&snap, NOW, &Limits::default(), 1);
    let failure_recorded = p.actions().any(|a| {
        matches!(a, Action::AddMarks { marks: tags, .. } if tags.iter().any(|t| {
            matches!(tags::parse(t), Ok(Tag::Result(r)) if r.result == RepairResult::Failure)
        }))
    });
    assert!(
        failure_recorded,
        "no failure recorded: {:#?}",
        p.actions().collect::<Vec<_>>()
    );
    check_case(&snap, &Limits::default(), NOW);
}
