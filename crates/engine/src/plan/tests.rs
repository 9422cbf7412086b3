//! The planner on the engine's test family ([`crate::fixture`]): boxes on shelves in one room.
//! Each case is a room, limits and what the planner must make of every box: its state, what it
//! does next, why it waits.

use super::*;
use crate::family::OpState;
use crate::fixture::{Fixture, FixtureBox, FixtureLevel, FixtureOp, FixtureRoom, FixtureShelf};
use FixtureLevel::{Nudge, Restart};

const NOW: i64 = 1_800_000_000;
const ID: &str = "0b4f6f6e-7e2a-4c1e-9d7a-2f4b1c3d5e6f";
const OTHER_ID: &str = "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d";

fn boxed(name: &str, shelf: &str, marks: &[&str], needs: Option<FixtureLevel>) -> FixtureBox {
    FixtureBox {
        name: name.into(),
        shelf: shelf.into(),
        marks: marks.iter().map(|m| (*m).to_owned()).collect(),
        needs,
    }
}

fn room(marks: &[&str], down: &[&str], boxes: Vec<FixtureBox>) -> FixtureRoom {
    let mut shelves: Vec<String> = boxes.iter().map(|b| b.shelf.clone()).collect();
    shelves.extend(down.iter().map(|d| (*d).to_owned()));
    shelves.sort();
    shelves.dedup();
    FixtureRoom {
        marks: marks.iter().map(|m| (*m).to_owned()).collect(),
        shelves: shelves
            .into_iter()
            .map(|name| FixtureShelf {
                down: down.contains(&name.as_str()),
                back_at: None,
                name,
                marks: vec![],
            })
            .collect(),
        boxes,
        ops: vec![],
    }
}

fn op(id: u32, target: &str, repair: &str, state: OpState) -> FixtureOp {
    FixtureOp {
        id,
        target: target.into(),
        repair: repair.into(),
        step: Restart,
        state,
        ended: (state != OpState::Running).then_some(NOW - 60),
    }
}

/// What the planner made of one box, in a line: `state next blocked`.
fn outcome(t: &TargetPlan<Fixture>) -> String {
    let next = match &t.next {
        Next::Nothing => "nothing".to_owned(),
        Next::Start { repair, .. } => format!("start {repair}"),
        Next::Continue { repair, .. } => format!("continue {repair}"),
        Next::UpdateMarks => "update".to_owned(),
        Next::Wait => "wait".to_owned(),
    };
    let blocked = t
        .blocked
        .as_ref()
        .map_or(String::new(), |b| format!(" ({b})"));
    format!("{}: {} {next}{blocked}", t.name, t.state.as_str())
}

fn outcomes(p: &Plan<Fixture>) -> Vec<String> {
    p.targets.iter().map(outcome).collect()
}

fn plan_with(room: &FixtureRoom, limits: &Limits) -> Plan<Fixture> {
    plan::<Fixture>(room, &(), NOW, limits, 1)
}

/// The plan in lines: every box's outcome, then every action, with a repair id the pass made
/// up as `NEW` (the ids follow the seed: [`a_new_repair_writes_its_pending_mark_first_and_its_ids_follow_the_seed`]).
fn lines(p: &Plan<Fixture>) -> Vec<String> {
    let mut out = outcomes(p);
    out.extend(p.actions().map(|a| new_ids_as_new(&format!("  {a}"))));
    out
}

fn new_ids_as_new(line: &str) -> String {
    let mut out = line.to_owned();
    let mut i = 0;
    while i + 36 <= out.len() {
        if !out.is_char_boundary(i) || !out.is_char_boundary(i + 36) {
            i += 1;
            continue;
        }
        let id = &out[i..i + 36];
        if crate::marks::is_uuid(id) && id != ID && id != OTHER_ID {
            out.replace_range(i..i + 36, "NEW");
        }
        i += 1;
    }
    out
}

fn one(
    marks: &[&str],
    own: &[&str],
    needs: Option<FixtureLevel>,
    ops: Vec<FixtureOp>,
) -> FixtureRoom {
    FixtureRoom {
        ops,
        ..room(marks, &[], vec![boxed("b1", "s1", own, needs)])
    }
}

#[test]
fn each_state_of_one_box_is_planned_as_the_mark_language_says() {
    let pending = format!("pending:restart:{ID}:{}:5", NOW - 600);
    let request = format!("pending:replace:{ID}:{}:", NOW - 600);
    let failure = format!("result:restart:{OTHER_ID}:{}:failure:4", NOW - 3600);
    let (over, later) = (
        format!("suspend:{}", NOW - 1),
        format!("suspend:{}", NOW + 600),
    );
    let all_over = format!("suspend-all:{}", NOW - 1);
    let running = |state| vec![op(5, "b1", ID, state)];
    // A recorded step whose id now names another step: a failure, never that step's outcome.
    let given_again: Vec<String> = {
        let why = "step 5 is now another step (the backend gave its id again): what became of this repair's is unknown";
        vec![
            "b1: pending update (parked by a failure until cleared)".into(),
            format!("  box/b1: add result:restart:{ID}:{NOW}:failure: ({why})"),
            format!("  box/b1: remove {pending} ({why})"),
        ]
    };
    let cases: Vec<(&str, FixtureRoom, Vec<String>)> = vec![
        (
            "a healthy box is left alone",
            one(&["replace"], &[], None, vec![]),
            vec!["b1: healthy nothing".into()],
        ),
        (
            "no policy anywhere: never touched, not even a result",
            one(&[], &[], Some(Restart), vec![]),
            vec!["b1: needs-repair nothing (no policy: never touched)".into()],
        ),
        (
            "a policy below the need records enoperm once",
            one(&["nudge"], &[], Some(Restart), vec![]),
            vec![
                "b1: needs-repair update (needs restart, the policy allows up to nudge)".into(),
                format!(
                    "  box/b1: add result:restart:NEW:{NOW}:enoperm: (needs restart, policy allows repairs up to nudge)"
                ),
            ],
        ),
        (
            "an allowed repair starts: pending mark first, then its step, carrying the repair id",
            one(&["restart"], &[], Some(Restart), vec![]),
            vec![
                "b1: needs-repair start restart".into(),
                "  box/b1: restart repair NEW: submit restart (autorepair:NEW)".into(),
            ],
        ),
        (
            "the nearest policy wins: the box's own over the room's",
            one(&["replace"], &["nudge"], Some(Restart), vec![]),
            vec![
                "b1: needs-repair update (needs restart, the policy allows up to nudge)".into(),
                format!(
                    "  box/b1: add result:restart:NEW:{NOW}:enoperm: (needs restart, policy allows repairs up to nudge)"
                ),
            ],
        ),
        (
            "a suspended box waits",
            one(&["replace"], &["suspend"], Some(Restart), vec![]),
            vec!["b1: suspended wait (suspended)".into()],
        ),
        (
            "a suspended room holds its boxes",
            one(&["replace", "suspend"], &[], Some(Restart), vec![]),
            vec!["b1: suspended wait (suspended)".into()],
        ),
        (
            "a room's suspend leaves a box with its own policy repairing: the nearest wins",
            one(&["suspend"], &["restart"], Some(Restart), vec![]),
            vec![
                "b1: needs-repair start restart".into(),
                "  box/b1: restart repair NEW: submit restart (autorepair:NEW)".into(),
            ],
        ),
        (
            "a room's suspend-all holds even a box with its own policy",
            one(&["suspend-all"], &["restart"], Some(Restart), vec![]),
            vec!["b1: suspended wait (suspended)".into()],
        ),
        (
            "a suspend-all that is over is removed, and the nearest policy wins again",
            one(&[&all_over], &["restart"], Some(Restart), vec![]),
            vec![
                "b1: needs-repair start restart".into(),
                format!("  room: remove {all_over} (timed suspend is over)"),
                "  box/b1: restart repair NEW: submit restart (autorepair:NEW)".into(),
            ],
        ),
        (
            "a timed suspend holds until its time",
            one(&["replace"], &[&later], Some(Restart), vec![]),
            vec!["b1: suspended wait (suspended)".into()],
        ),
        (
            "a timed suspend that is over is removed and the repair starts",
            one(&["replace"], &[&over], Some(Restart), vec![]),
            vec![
                "b1: needs-repair start restart".into(),
                "  box/b1: restart repair NEW: submit restart (autorepair:NEW)".into(),
                format!("  box/b1: remove {over} (timed suspend is over)"),
            ],
        ),
        (
            "a failure parks the box until a person clears it",
            one(&["replace"], &[&failure], Some(Restart), vec![]),
            vec!["b1: failed wait (parked by a failure until cleared)".into()],
        ),
        (
            "a pending repair whose step runs is waited for, and no second one starts",
            one(
                &["replace"],
                &[&pending],
                Some(Restart),
                running(OpState::Running),
            ),
            vec!["b1: pending nothing".into()],
        ),
        (
            "a pending repair whose steps succeeded becomes a success result",
            one(&["replace"], &[&pending], None, running(OpState::Succeeded)),
            vec![
                "b1: pending update".into(),
                format!(
                    "  box/b1: add result:restart:{ID}:{NOW}:success:5 (all its steps succeeded)"
                ),
                format!("  box/b1: remove {pending} (all its steps succeeded)"),
            ],
        ),
        (
            "a failed step becomes a failure result, result before the pending mark goes",
            one(
                &["replace"],
                &[&pending],
                Some(Restart),
                running(OpState::Failed),
            ),
            vec![
                "b1: pending update (parked by a failure until cleared)".into(),
                format!(
                    "  box/b1: add result:restart:{ID}:{NOW}:failure:5 (step 5 did not succeed)"
                ),
                format!("  box/b1: remove {pending} (step 5 did not succeed)"),
            ],
        ),
        (
            "a step gone from the backend is a failure: nobody knows what it did",
            one(&["replace"], &[&pending], Some(Restart), vec![]),
            vec![
                "b1: pending update (parked by a failure until cleared)".into(),
                format!("  box/b1: add result:restart:{ID}:{NOW}:failure: (step 5 is gone)"),
                format!("  box/b1: remove {pending} (step 5 is gone)"),
            ],
        ),
        (
            "a recorded step id that now names another repair's step is not judged as ours",
            one(
                &["replace"],
                &[&pending],
                Some(Restart),
                vec![op(5, "b1", OTHER_ID, OpState::Succeeded)],
            ),
            given_again.clone(),
        ),
        (
            "…or another box's",
            one(
                &["replace"],
                &[&pending],
                Some(Restart),
                vec![op(5, "b2", ID, OpState::Succeeded)],
            ),
            given_again.clone(),
        ),
        (
            "a step that lacked resources is retried after retry_interval",
            one(
                &["replace"],
                &[&pending],
                Some(Restart),
                running(OpState::LacksResources),
            ),
            vec!["b1: pending wait (lacked resources, retrying at 2027-01-15T08:14:00Z)".into()],
        ),
        (
            "a once-off request starts its repair under its own id, without any policy",
            one(&[], &[&request], Some(Restart), vec![]),
            vec![
                "b1: pending start restart".into(),
                format!("  box/b1: restart repair {ID}: submit restart (autorepair:{ID})"),
            ],
        ),
        (
            "a request on a healthy box ends as a success with nothing done",
            one(&[], &[&request], None, vec![]),
            vec![
                "b1: pending update".into(),
                format!(
                    "  box/b1: add result:replace:{ID}:{NOW}:success: (the target is healthy: nothing to repair)"
                ),
                format!("  box/b1: remove {request} (the target is healthy: nothing to repair)"),
            ],
        ),
        (
            "a suspend holds a request too",
            one(&[], &[&request, "suspend"], Some(Restart), vec![]),
            vec!["b1: pending wait (suspended)".into()],
        ),
    ];
    for (case, r, want) in cases {
        let got = lines(&plan_with(&r, &Limits::default()));
        assert_eq!(got, want, "{case}");
    }
}

/// Rule 13's escalation: with `escalate`, a retry starts one level above the highest that
/// failed in a row, as far as the policy allows; a failure a success made history does not
/// count, and without `escalate` a retry repeats what the box needs.
#[test]
fn with_escalate_a_retry_starts_one_level_above_what_failed_as_far_as_the_policy_allows() {
    let limits = |escalate: bool| Limits {
        retries: 3,
        retry_backoff: std::time::Duration::from_secs(60),
        min_healthy: std::time::Duration::from_secs(3600),
        escalate,
        ..Limits::default()
    };
    let result = |n: u8, level: &str, ago: i64, how: &str| {
        format!(
            "result:{level}:00000000-0000-4000-8000-0000000000{n:02}:{}:{how}:",
            NOW - ago
        )
    };
    // (case, escalate, the room's policy, the box's results, what the box does)
    type Case = (&'static str, bool, &'static str, Vec<String>, &'static str);
    let cases: Vec<Case> = vec![
        ("no failure", true, "replace", vec![], "start nudge"),
        (
            "a nudge failed: a restart",
            true,
            "replace",
            vec![result(1, "nudge", 600, "failure")],
            "start restart",
        ),
        (
            "a nudge, then a restart failed: a replace",
            true,
            "replace",
            vec![
                result(1, "nudge", 1200, "failure"),
                result(2, "restart", 600, "failure"),
            ],
            "start replace",
        ),
        (
            "the policy stops at restart",
            true,
            "restart",
            vec![
                result(1, "nudge", 1200, "failure"),
                result(2, "restart", 600, "failure"),
            ],
            "start restart",
        ),
        (
            "the policy stops at nudge",
            true,
            "nudge",
            vec![result(1, "nudge", 600, "failure")],
            "start nudge",
        ),
        (
            "a failure a success made history",
            true,
            "replace",
            vec![
                result(1, "restart", 3 * 86400, "failure"),
                result(2, "restart", 2 * 86400, "success"),
            ],
            "start nudge",
        ),
        (
            "without escalate",
            false,
            "replace",
            vec![result(1, "nudge", 600, "failure")],
            "start nudge",
        ),
    ];
    for (case, escalate, policy, results, want) in cases {
        let marks: Vec<&str> = results.iter().map(String::as_str).collect();
        let r = room(&[policy], &[], vec![boxed("b1", "s1", &marks, Some(Nudge))]);
        let p = plan_with(&r, &limits(escalate));
        let t = &p.targets[0];
        let got = match &t.next {
            Next::Start { repair, .. } => format!("start {repair}"),
            other => format!("{other:?} ({:?})", t.blocked),
        };
        assert_eq!(got, want, "{case}: {:?}", t.notes);
        assert_eq!(
            t.notes.iter().any(|n| n.contains("escalated to")),
            want != "start nudge",
            "{case}: {:?}",
            t.notes
        );
    }
}

/// Rule 13's bounded retries: a failure is retried after a back-off that doubles, up to
/// `retries` times, and a success the box outlived by `min_healthy` starts the count afresh.
#[test]
fn failed_repairs_are_retried_after_a_doubling_back_off_up_to_retries() {
    let limits = Limits {
        retries: 2,
        retry_backoff: std::time::Duration::from_secs(600),
        min_healthy: std::time::Duration::from_secs(3600),
        ..Limits::default()
    };
    let at = |ago: i64| crate::text::rfc3339(NOW - ago);
    // A result of its own repair id, `ago` seconds before now.
    let result = |n: u8, ago: i64, how: &str| {
        format!(
            "result:restart:00000000-0000-4000-8000-0000000000{n:02}:{}:{how}:",
            NOW - ago
        )
    };
    let pending = format!("pending:restart:{ID}:{}:5", NOW - 600);
    let request = format!("pending:replace:{ID}:{}:", NOW - 600);
    let starts = vec![
        "b1: needs-repair start restart".to_owned(),
        "  box/b1: restart repair NEW: submit restart (autorepair:NEW)".into(),
    ];
    let (f1, f2, f3) = (
        result(1, 5000, "failure"),
        result(2, 4500, "failure"),
        result(3, 300, "failure"),
    );
    let cases: Vec<(&str, FixtureRoom, Vec<String>)> = vec![
        (
            "a failed step is written as a failure, and the box waits for the back-off",
            one(
                &["replace"],
                &[&pending],
                Some(Restart),
                vec![op(5, "b1", ID, OpState::Failed)],
            ),
            vec![
                format!(
                    "b1: pending update (failed 1 time(s) in a row: retry 1 of 2 at {})",
                    at(-600)
                ),
                format!(
                    "  box/b1: add result:restart:{ID}:{NOW}:failure:5 (step 5 did not succeed)"
                ),
                format!("  box/b1: remove {pending} (step 5 did not succeed)"),
            ],
        ),
        (
            "during the back-off nothing starts",
            one(&["replace"], &[&f3], Some(Restart), vec![]),
            vec![format!(
                "b1: needs-repair wait (failed 1 time(s) in a row: retry 1 of 2 at {})",
                at(-300)
            )],
        ),
        (
            "nor does a request",
            one(&[], &[&f3, &request], Some(Restart), vec![]),
            vec![format!(
                "b1: pending wait (failed 1 time(s) in a row: retry 1 of 2 at {})",
                at(-300)
            )],
        ),
        (
            "once the back-off is over, the repair starts again",
            one(
                &["replace"],
                &[&result(3, 600, "failure")],
                Some(Restart),
                vec![],
            ),
            starts.clone(),
        ),
        (
            "the back-off doubles after the second failure",
            one(
                &["replace"],
                &[&result(1, 3000, "failure"), &result(2, 1000, "failure")],
                Some(Restart),
                vec![],
            ),
            vec![format!(
                "b1: needs-repair wait (failed 2 time(s) in a row: retry 2 of 2 at {})",
                at(-200)
            )],
        ),
        (
            "a failure more than retries parks the box",
            one(&["replace"], &[&f1, &f2, &f3], Some(Restart), vec![]),
            vec!["b1: failed wait (parked by a failure until cleared)".into()],
        ),
        (
            "a success broken again within min_healthy did not reset the count",
            one(
                &["replace"],
                &[&f1, &f2, &result(4, 3000, "success"), &f3],
                Some(Restart),
                vec![],
            ),
            vec!["b1: failed wait (parked by a failure until cleared)".into()],
        ),
        (
            "a success the box outlived by min_healthy did",
            one(
                &["replace"],
                &[
                    &result(1, 9000, "failure"),
                    &result(2, 8500, "failure"),
                    &result(4, 8000, "success"),
                    &result(3, 3000, "failure"),
                ],
                Some(Restart),
                vec![],
            ),
            starts.clone(),
        ),
        (
            "a healthy box whose failures will be retried is not failed",
            one(&["replace"], &[&f3], None, vec![]),
            vec!["b1: healthy nothing".into()],
        ),
        (
            "a failure a later success made history parks nothing, and stays (rule 4)",
            one(
                &["replace"],
                &[
                    &result(1, 800_000, "failure"),
                    &result(4, 799_000, "success"),
                ],
                None,
                vec![],
            ),
            vec![
                "b1: healthy update".into(),
                new_ids_as_new(&format!(
                    "  box/b1: remove {} (older than result_retention)",
                    result(4, 799_000, "success")
                )),
            ],
        ),
    ];
    for (case, r, want) in cases {
        let got = lines(&plan_with(&r, &limits));
        assert_eq!(got, want, "{case}");
    }
    // A daemon wakes when the back-off is over, not at its next resync.
    let waiting = one(&["replace"], &[&f3], Some(Restart), vec![]);
    assert_eq!(plan_with(&waiting, &limits).next_due(), Some(NOW + 300));
    // Without retries (the default) the same history parks the box: the oldest failure is
    // kept, whatever came after it.
    let r = one(
        &["replace"],
        &[
            &result(1, 800_000, "failure"),
            &result(4, 799_000, "success"),
        ],
        None,
        vec![],
    );
    assert_eq!(
        lines(&plan_with(&r, &Limits::default())),
        vec![
            "b1: failed update (parked by a failure until cleared)".to_owned(),
            new_ids_as_new(&format!(
                "  box/b1: remove {} (older than result_retention)",
                result(4, 799_000, "success")
            )),
        ]
    );
}

/// Rule 13's storm cool-down: shelves that came back within `storm_cooldown` count as down
/// until their return, so the newest return before which more were down than the limit ends
/// the storm; no new repair starts until a cool-down after it.
#[test]
fn after_a_mass_failure_no_repair_starts_until_the_cooldown_has_passed() {
    const COOL: i64 = 1800;
    let limits = |fleet: usize, per_group: usize| Limits {
        max_down_nodes: fleet,
        max_down_nodes_per_group: per_group,
        max_domains_under_repair: 10,
        storm_cooldown: Some(std::time::Duration::from_secs(COOL as u64)),
        ..Limits::default()
    };
    let waits_in = |scope: &str, ended_ago: i64| {
        format!(
            "b1: needs-repair wait (cool-down after a mass failure in {scope} (storm_cooldown): no new repair until {})",
            crate::text::rfc3339(NOW - ended_ago + COOL)
        )
    };
    let waits = |ended_ago: i64| waits_in("room", ended_ago);
    let starts = || "b1: needs-repair start restart".to_owned();
    // (case, limits, shelves down now, shelves back and how long ago, what b1 does)
    type Case = (
        &'static str,
        Limits,
        Vec<&'static str>,
        Vec<(&'static str, i64)>,
        String,
    );
    let cases: Vec<Case> = vec![
        ("no shelf came back", limits(2, 9), vec![], vec![], starts()),
        (
            "two back: never more than the limit down at once",
            limits(2, 9),
            vec![],
            vec![("s2", 600), ("s3", 900)],
            starts(),
        ),
        (
            "three back: the storm ended when the oldest of them returned",
            limits(2, 9),
            vec![],
            vec![("s2", 600), ("s3", 900), ("s4", 1200)],
            waits(1200),
        ),
        (
            "one still down: it ended at the second newest return",
            limits(2, 9),
            vec!["s5"],
            vec![("s2", 600), ("s3", 900)],
            waits(900),
        ),
        (
            "the per-group limit has its cool-down too",
            limits(9, 1),
            vec![],
            vec![("s2", 600), ("s3", 900)],
            waits_in("room/room", 900),
        ),
        (
            "a return dated after now counts as now",
            limits(0, 9),
            vec![],
            vec![("s2", -i64::MAX)],
            waits(0),
        ),
        (
            "a return exactly a cool-down ago has served it",
            limits(2, 9),
            vec![],
            vec![("s2", COOL), ("s3", COOL + 100), ("s4", COOL + 200)],
            starts(),
        ),
        (
            "more down now than the limit is the mass failure itself",
            limits(1, 9),
            vec!["s4", "s5"],
            vec![("s2", 600)],
            "b1: needs-repair wait (mass failure in room (max_down_nodes))".to_owned(),
        ),
    ];
    for (case, limits, down, back, want) in cases {
        let mut boxes = vec![boxed("b1", "s1", &[], Some(Restart))];
        for (shelf, _) in &back {
            boxes.push(boxed(&format!("b-{shelf}"), shelf, &[], None));
        }
        let mut r = room(&["restart"], &down, boxes);
        for (shelf, ago) in &back {
            let s = r.shelves.iter_mut().find(|s| s.name == *shelf).unwrap();
            s.back_at = Some(NOW.saturating_sub(*ago));
        }
        let p = plan_with(&r, &limits);
        assert_eq!(outcome(&p.targets[0]), want, "{case}");
        let held = p.targets[0].blocked.is_some();
        assert_eq!(
            !p.fleet.cooldowns.is_empty(),
            held && down.len() <= 1,
            "{case}"
        );
        if let Some(c) = p.fleet.cooldowns.first() {
            assert_eq!(p.next_due(), Some(c.until), "{case}: the daemon wakes then");
            assert!(
                c.message.contains("came back in the last 30m"),
                "{case}: {c}"
            );
        }
    }
}

/// The storm's end from the returns alone: table of (down now, limit, returns, end).
#[test]
fn a_storms_end_is_the_newest_return_before_which_more_were_down_than_the_limit() {
    let cases: &[(usize, usize, &[i64], Option<i64>)] = &[
        (0, 2, &[], None),
        (0, 2, &[10, 20], None),
        (0, 2, &[10, 20, 30], Some(10)),
        (0, 2, &[30, 10, 20], Some(10)),
        (0, 2, &[10, 20, 30, 40], Some(20)),
        (1, 2, &[10, 20], Some(10)),
        (2, 2, &[10], Some(10)),
        (2, 2, &[], None),
        (3, 2, &[10, 20, 30], None),
        (0, 0, &[5], Some(5)),
        (0, usize::MAX, &[1, 2, 3], None),
        (0, 1, &[i64::MAX, i64::MIN], Some(i64::MIN)),
    ];
    for (down, max, returns, want) in cases {
        let mut back: Vec<(&str, i64)> = returns.iter().map(|at| ("d", *at)).collect();
        assert_eq!(
            limiter::storm_end(*down, *max, &mut back),
            *want,
            "{down} down, limit {max}, returns {returns:?}"
        );
    }
}

/// A rate window longer than `result_retention` still counts every repair it spans: the
/// results it counts are kept past the retention, and pruned once they leave the window.
/// Pruned earlier, the next pass would not see the repair and start another within the window.
#[test]
fn a_result_a_rate_window_counts_outlives_result_retention() {
    const DAY: i64 = 86_400;
    let ended = |days: i64| {
        let id = rate::make_id(NOW - days * DAY - 60, "s9", [9; 6]);
        format!("result:restart:{id}:{}:success:4", NOW - days * DAY)
    };
    let rate = |r: Option<&str>| r.map(|r| crate::limits::Rate::parse(r).unwrap());
    let limits = |fleet: Option<&str>, group: Option<&str>| Limits {
        max_domains_under_repair: 10,
        max_repair_rate: rate(fleet),
        max_repair_rate_per_group: rate(group),
        result_retention: std::time::Duration::from_secs(7 * DAY as u64),
        ..Limits::default()
    };
    // (case, max_repair_rate, max_repair_rate_per_group, days since the repair ended, whether
    // this pass removes its result)
    let cases = [
        ("no rate: retention alone", None, None, 10, true),
        ("inside a 30-day window", Some("1/30d"), None, 10, false),
        ("inside a per-group window", None, Some("1/30d"), 10, false),
        (
            "the longer window counts",
            Some("1/1d"),
            Some("1/30d"),
            10,
            false,
        ),
        ("out of the window too", Some("1/30d"), None, 31, true),
        ("inside retention", Some("1/1d"), None, 3, false),
    ];
    for (case, fleet, group, days, removed) in cases {
        let r = room(
            &["replace"],
            &[],
            vec![boxed("b9", "s9", &[&ended(days)], None)],
        );
        let said = lines(&plan_with(&r, &limits(fleet, group))).join("\n");
        assert_eq!(
            said.contains("older than result_retention"),
            removed,
            "{case}: {said}"
        );
    }
    // The repair it records still holds the next one back, pass after pass.
    let r = room(
        &["replace"],
        &[],
        vec![
            boxed("b9", "s9", &[&ended(10)], None),
            boxed("b1", "s1", &[], Some(Restart)),
        ],
    );
    let p = plan_with(&r, &limits(Some("1/30d"), None));
    let b1 = outcome(p.target("b1").unwrap());
    assert!(b1.contains("repair rate of room spent"), "{b1}");
}

/// Rule 13's rate windows: at most N failure domains newly taken under repair in any window,
/// counted from the ids of the repairs the boxes' marks record; a domain already counted is
/// never held back, and what is held says when room comes back.
#[test]
fn a_rate_window_counts_domains_newly_under_repair_and_says_when_room_comes_back() {
    const H: i64 = 3600;
    let limits = |rate: &str, per_group: Option<&str>| Limits {
        max_domains_under_repair: 10,
        max_repair_rate: Some(crate::limits::Rate::parse(rate).unwrap()),
        max_repair_rate_per_group: per_group.map(|r| crate::limits::Rate::parse(r).unwrap()),
        ..Limits::default()
    };
    // A repair of shelf `shelf` that started `ago` seconds ago and ended a minute later.
    let done = |n: u8, shelf: &str, ago: i64| {
        let id = rate::make_id(NOW - ago, shelf, [n; 6]);
        format!("result:restart:{id}:{}:success:4", NOW - ago + 60)
    };
    let healthy = |name: &str, shelf: &str, marks: &[&str]| boxed(name, shelf, marks, None);
    let broken = |name: &str, shelf: &str| boxed(name, shelf, &[], Some(Restart));
    let earlier = |a: i64, b: i64| {
        vec![
            healthy("b8", "s8", &[&done(8, "s8", a)]),
            healthy("b9", "s9", &[&done(9, "s9", b)]),
        ]
    };
    let room_again = |oldest_ago: i64| {
        format!(
            "wait (repair rate of room spent (max_repair_rate): room again at {})",
            crate::text::rfc3339(NOW - oldest_ago + H)
        )
    };
    // (case, limits, boxes, what b1 and b2 do)
    type Case = (&'static str, Limits, Vec<FixtureBox>, [String; 2]);
    let with = |mut boxes: Vec<FixtureBox>, more: Vec<FixtureBox>| {
        boxes.extend(more);
        boxes
    };
    let starts = || "start restart".to_owned();
    let cases: Vec<Case> = vec![
        (
            "two domains in the last hour: a third waits",
            limits("2/1h", None),
            with(earlier(1800, 600), vec![broken("b1", "s1")]),
            [room_again(1800), String::new()],
        ),
        (
            "one of them left the window: room for one",
            limits("2/1h", None),
            with(
                earlier(H, 600),
                vec![broken("b1", "s1"), broken("b2", "s2")],
            ),
            [starts(), room_again(600)],
        ),
        (
            "a domain already counted is not held back",
            limits("2/1h", None),
            with(earlier(1800, 600), vec![broken("b1", "s9")]),
            [starts(), String::new()],
        ),
        (
            "two boxes of one new domain start together",
            limits("3/1h", None),
            with(
                earlier(1800, 600),
                vec![broken("b1", "s1"), broken("b2", "s1")],
            ),
            [starts(), starts()],
        ),
        (
            "a share of the room's five shelves: 40% is 2",
            limits("40%/1h", None),
            with(
                earlier(1800, 600),
                vec![
                    broken("b1", "s1"),
                    healthy("b3", "s3", &[]),
                    healthy("b4", "s4", &[]),
                ],
            ),
            [room_again(1800), String::new()],
        ),
        (
            "the group's own window",
            limits("9/1h", Some("1/1h")),
            with(
                vec![healthy("b9", "s9", &[&done(9, "s9", 600)])],
                vec![broken("b1", "s1")],
            ),
            [
                format!(
                    "spent (max_repair_rate_per_group): room again at {})",
                    crate::text::rfc3339(NOW - 600 + H)
                ),
                String::new(),
            ],
        ),
        (
            "a repair under way counts from its pending mark's id",
            limits("1/1h", None),
            with(
                vec![healthy(
                    "b9",
                    "s9",
                    &[&format!(
                        "pending:restart:{}:{}:7",
                        rate::make_id(NOW - 60, "s9", [1; 6]),
                        NOW - 60
                    )],
                )],
                vec![broken("b1", "s1")],
            ),
            [room_again(60), String::new()],
        ),
        (
            "an id that says nothing counts from the result's end, in a domain of its own",
            limits("1/1h", None),
            with(
                vec![healthy(
                    "b9",
                    "s9",
                    &[&format!(
                        "result:restart:{OTHER_ID}:{}:failure:4",
                        NOW - 300
                    )],
                )],
                vec![broken("b1", "s9")],
            ),
            [room_again(300), String::new()],
        ),
        (
            "a refusal (enoperm) and a request resolved with nothing done took nothing",
            limits("1/1h", None),
            with(
                vec![healthy(
                    "b9",
                    "s9",
                    &[
                        &format!("result:restart:{OTHER_ID}:{}:enoperm:", NOW - 300),
                        &format!("result:restart:{ID}:{}:success:", NOW - 200),
                    ],
                )],
                vec![broken("b1", "s1")],
            ),
            [starts(), String::new()],
        ),
        (
            "a rate of 0 starts nothing new, ever",
            limits("0/1h", None),
            vec![broken("b1", "s1")],
            [
                "wait (repair rate of room is 0 (max_repair_rate))".to_owned(),
                String::new(),
            ],
        ),
    ];
    for (case, limits, boxes, want) in cases {
        let r = FixtureRoom {
            ..room(&["replace"], &[], boxes)
        };
        let p = plan_with(&r, &limits);
        for (name, want) in ["b1", "b2"].iter().zip(&want) {
            if want.is_empty() {
                continue;
            }
            let t = p
                .target(name)
                .unwrap_or_else(|| panic!("{case}: no {name}"));
            let got = outcome(t);
            assert!(got.ends_with(want.as_str()), "{case}: {got}, not {want}");
        }
        // The window shows in the fleet summary: the fleet's first.
        let fleet = &p.fleet.rates[0];
        assert_eq!(fleet.limit, "max_repair_rate", "{case}");
        assert!(fleet.used <= fleet.max.max(fleet.used), "{case}");
    }
    // The held box names the domains counted and their starts.
    let r = room(
        &["replace"],
        &[],
        with(earlier(1800, 600), vec![broken("b1", "s1")]),
    );
    let p = plan_with(&r, &limits("2/1h", None));
    let notes = p.target("b1").unwrap().notes.join("\n");
    assert!(
        notes.contains(&format!(
            "rate: 2 of 2 shelves newly under repair in room in the last 1h (s8 at {}, s9 at {}), max_repair_rate = 2/1h: room again at {}",
            crate::text::rfc3339(NOW - 1800),
            crate::text::rfc3339(NOW - 600),
            crate::text::rfc3339(NOW - 1800 + H)
        )),
        "{notes}"
    );
    let report = &p.fleet.rates[0];
    assert_eq!((report.used, report.max), (2, 2));
    assert_eq!(report.room_at, Some(NOW - 1800 + H));
    // A daemon wakes when room comes back.
    assert_eq!(p.next_due(), Some(NOW - 1800 + H));
    // Without a rate limit nothing is counted and nothing held.
    let p = plan_with(
        &r,
        &Limits {
            max_domains_under_repair: 10,
            ..Limits::default()
        },
    );
    assert!(p.fleet.rates.is_empty());
    assert_eq!(
        outcome(p.target("b1").unwrap()),
        "b1: needs-repair start restart"
    );
}

fn two_broken(shelf2: &str) -> FixtureRoom {
    room(
        &["replace"],
        &[],
        vec![
            boxed("b1", "s1", &[], Some(Restart)),
            boxed("b2", shelf2, &[], Some(Nudge)),
        ],
    )
}

#[test]
fn the_limits_hold_repairs_back_by_failure_domain_and_fleet() {
    let limits = |f: fn(&mut Limits)| {
        let mut l = Limits::default();
        f(&mut l);
        l
    };
    let both_start = [
        "b1: needs-repair start restart",
        "b2: needs-repair start nudge",
    ];
    let cases: Vec<(&str, FixtureRoom, Limits, [&str; 2])> = vec![
        (
            "one domain: all its repairs start together",
            two_broken("s1"),
            Limits::default(),
            both_start,
        ),
        (
            "two domains, one slot: the second waits",
            two_broken("s2"),
            Limits::default(),
            [
                "b1: needs-repair start restart",
                "b2: needs-repair wait (no free slot (max_domains_under_repair))",
            ],
        ),
        (
            "two domains, two slots",
            two_broken("s2"),
            limits(|l| l.max_domains_under_repair = 2),
            both_start,
        ),
        (
            "no slot at all",
            two_broken("s1"),
            limits(|l| l.max_domains_under_repair = 0),
            [
                "b1: needs-repair wait (no free slot (max_domains_under_repair))",
                "b2: needs-repair wait (no free slot (max_domains_under_repair))",
            ],
        ),
        (
            "max_pending counts repairs, not domains",
            two_broken("s1"),
            limits(|l| l.max_pending = Some(1)),
            [
                "b1: needs-repair start restart",
                "b2: needs-repair wait (no free slot (max_pending))",
            ],
        ),
        (
            "more broken than max_broken: nothing starts",
            two_broken("s1"),
            limits(|l| l.max_broken = Some(1)),
            [
                "b1: needs-repair wait (mass failure in room (max_broken))",
                "b2: needs-repair wait (mass failure in room (max_broken))",
            ],
        ),
        (
            "exactly max_broken: they start",
            two_broken("s1"),
            limits(|l| l.max_broken = Some(2)),
            both_start,
        ),
        (
            "the write budget spent: the rest waits for the next pass",
            two_broken("s1"),
            // One start's writes.
            limits(|l| l.max_writes_per_pass = 4),
            [
                "b1: needs-repair start restart",
                "b2: needs-repair wait (write budget of this pass spent)",
            ],
        ),
    ];
    for (case, r, l, want) in cases {
        assert_eq!(outcomes(&plan_with(&r, &l)), want, "{case}");
    }
}

#[test]
fn a_pass_writes_at_most_max_writes_per_pass_but_for_the_first_repair_under_way() {
    // b1's step succeeded: recording it is the bookkeeping of a repair under way.
    let pending = format!("pending:restart:{ID}:{}:5", NOW - 600);
    let under_way = FixtureRoom {
        ops: vec![op(5, "b1", ID, OpState::Succeeded)],
        ..room(
            &["replace"],
            &[],
            vec![
                boxed("b1", "s1", &[&pending], None),
                boxed("b2", "s1", &[], Some(Nudge)),
            ],
        )
    };
    let starts = two_broken("s1");
    let waits = "wait (write budget of this pass spent)";
    let (b1_waits, b2_waits) = (
        format!("b1: needs-repair {waits}"),
        format!("b2: needs-repair {waits}"),
    );
    let (b1_starts, b2_starts) = (
        "b1: needs-repair start restart".to_owned(),
        "b2: needs-repair start nudge".to_owned(),
    );
    let b1_records = "b1: pending update".to_owned();
    // (room, max_writes_per_pass, outcomes, writes): a start makes 4 writes, the bookkeeping 2.
    let cases: Vec<(&FixtureRoom, usize, [&str; 2], usize)> = vec![
        (&starts, 0, [b1_waits.as_str(), b2_waits.as_str()], 0),
        (&starts, 1, [b1_waits.as_str(), b2_waits.as_str()], 0),
        (&starts, 2, [b1_waits.as_str(), b2_waits.as_str()], 0),
        (&starts, 3, [b1_waits.as_str(), b2_waits.as_str()], 0),
        (&starts, 4, [b1_starts.as_str(), b2_waits.as_str()], 4),
        (&starts, 7, [b1_starts.as_str(), b2_waits.as_str()], 4),
        (&starts, 8, [b1_starts.as_str(), b2_starts.as_str()], 8),
        // The exception: the first repair under way goes through, past the limit too.
        (&under_way, 0, [b1_records.as_str(), b2_waits.as_str()], 2),
        (&under_way, 1, [b1_records.as_str(), b2_waits.as_str()], 2),
        (&under_way, 5, [b1_records.as_str(), b2_waits.as_str()], 2),
        (&under_way, 6, [b1_records.as_str(), b2_starts.as_str()], 6),
    ];
    for (r, max, want, writes) in cases {
        let l = Limits {
            max_writes_per_pass: max,
            ..Limits::default()
        };
        let p = plan_with(r, &l);
        assert_eq!(outcomes(&p), want, "max_writes_per_pass = {max}");
        assert_eq!(p.fleet.writes, writes, "max_writes_per_pass = {max}");
    }
}

#[test]
fn more_domains_down_than_allowed_is_a_mass_failure_that_starts_nothing() {
    for (down, per_group, want) in [
        (&["s1", "s2"][..], 2, "b1: needs-repair start restart"),
        (
            &["s1", "s2", "s3"][..],
            2,
            "b1: needs-repair wait (mass failure in room/room (max_down_nodes_per_group))",
        ),
        (&["s1", "s2", "s3"][..], 3, "b1: needs-repair start restart"),
    ] {
        let r = room(
            &["replace"],
            down,
            vec![boxed("b1", "s1", &[], Some(Restart))],
        );
        let l = Limits {
            max_down_nodes_per_group: per_group,
            ..Limits::default()
        };
        let p = plan_with(&r, &l);
        assert_eq!(outcomes(&p), [want], "{down:?} down, {per_group} allowed");
        assert_eq!(
            p.actions().count(),
            usize::from(!want.contains("wait")),
            "{down:?}"
        );
    }
}

#[test]
fn a_limit_given_as_a_share_counts_the_domains_of_its_scope_and_rounds_down() {
    use crate::limits::Share;
    let boxes = |shelves: &[&str]| -> Vec<FixtureBox> {
        shelves
            .iter()
            .enumerate()
            .map(|(i, s)| boxed(&format!("b{}", i + 1), s, &[], (i == 0).then_some(Restart)))
            .collect()
    };
    let five = ["s1", "s2", "s3", "s4", "s5"];
    // (case, shelves with a box, down shelves, per-group share, fleet share, halted by)
    type Case<'a> = (
        &'a str,
        &'a [&'a str],
        &'a [&'a str],
        Option<u8>,
        Option<u8>,
        Option<&'a str>,
    );
    let cases: [Case<'_>; 10] = [
        (
            "40% of 5 is 2: 2 down",
            &five,
            &["s1", "s2"],
            Some(40),
            None,
            None,
        ),
        (
            "40% of 5 is 2: 3 down",
            &five,
            &["s1", "s2", "s3"],
            Some(40),
            None,
            Some("more than max_down_nodes_per_group = 40% of 5 = 2"),
        ),
        (
            // A down shelf without a box is a domain of the scope all the same: 40% of 3 is 1.
            "an empty down shelf counts",
            &["s1", "s2"],
            &["s1", "s3"],
            Some(40),
            None,
            Some("40% of 3 = 1"),
        ),
        (
            "39% of 5 rounds down to 1: 1 down",
            &five,
            &["s1"],
            Some(39),
            None,
            None,
        ),
        (
            "39% of 5 rounds down to 1: 2 down",
            &five,
            &["s1", "s2"],
            Some(39),
            None,
            Some("39% of 5 = 1"),
        ),
        ("0% with nothing down", &five, &[], Some(0), None, None),
        (
            "0%: one down is too many",
            &five,
            &["s1"],
            Some(0),
            None,
            Some("0% of 5 = 0"),
        ),
        ("100%: all down", &five, &five, Some(100), Some(100), None),
        (
            "the fleet's share",
            &five,
            &["s1", "s2", "s3"],
            Some(100),
            Some(50),
            Some("more than max_down_nodes = 50% of 5 = 2"),
        ),
        (
            "the fleet's share, within it",
            &five,
            &["s1", "s2"],
            None,
            Some(50),
            None,
        ),
    ];
    for (case, shelves, down, group, fleet, halted) in cases {
        let r = room(&["replace"], down, boxes(shelves));
        let l = Limits {
            max_down_nodes_per_group: if group.is_some() { usize::MAX } else { 100 },
            max_down_nodes_per_group_share: group.and_then(Share::percent),
            max_down_nodes: if fleet.is_some() { usize::MAX } else { 100 },
            max_down_nodes_share: fleet.and_then(Share::percent),
            ..Limits::default()
        };
        let p = plan_with(&r, &l);
        let halt = p.fleet.halted.iter().chain(&p.fleet.halted_groups).next();
        match halted {
            None => {
                assert!(halt.is_none(), "{case}: {halt:?}");
                assert_eq!(outcomes(&p)[0], "b1: needs-repair start restart", "{case}");
            }
            Some(text) => {
                let halt = halt.unwrap_or_else(|| panic!("{case}: not held"));
                assert!(halt.message.contains(text), "{case}: {}", halt.message);
                assert!(outcomes(&p)[0].contains("wait (mass failure"), "{case}");
                assert_eq!(p.actions().count(), 0, "{case}");
            }
        }
    }
    // An empty room: nothing is down, nothing to hold, whatever the share.
    let p = plan_with(
        &room(&["replace"], &[], vec![]),
        &Limits {
            max_down_nodes_per_group_share: Share::percent(0),
            max_down_nodes_share: Share::percent(0),
            ..Limits::default()
        },
    );
    assert!(p.fleet.halted.is_none() && p.fleet.halted_groups.is_empty());
}

#[test]
fn a_new_repair_writes_its_pending_mark_first_and_its_ids_follow_the_seed() {
    let r = one(&["restart"], &[], Some(Restart), vec![]);
    let start = |seed| {
        let p = plan::<Fixture>(&r, &(), NOW, &Limits::default(), seed);
        match p.actions().next() {
            Some(Action::Repair(s)) => s.clone(),
            other => panic!("a repair start, not {other:?}"),
        }
    };
    let s = start(1);
    assert!(crate::marks::is_uuid(&s.id), "{}", s.id);
    assert_eq!(s.reason, reason_for(&s.id));
    assert_eq!(
        s.write_first,
        Some(format!("pending:restart:{}:{NOW}:", s.id))
    );
    assert_eq!((s.ops.as_slice(), s.since), (&[Restart][..], NOW));
    assert_eq!(
        s.pending_mark(&[3, 4]).unwrap(),
        format!("pending:restart:{}:{NOW}:3+4", s.id)
    );
    assert_eq!(start(1).id, s.id, "the same seed gives the same id");
    assert_ne!(start(2).id, s.id, "another seed another id");
}

/// Rule 11: a mark of ours that cannot be read holds back what it would govern, and lint says
/// which mark and what it holds. Each case would start a repair if the damaged mark were
/// ignored (the room allows `replace`, the box needs a restart).
#[test]
fn an_unreadable_mark_holds_what_it_would_govern() {
    let running = format!("pending:restart:{ID}:{}:5", NOW - 600);
    let huge = "99999999999999999999";
    let suspended = "b1: suspended wait (suspended)";
    // (case, room marks, box marks, the box's ops, want, what the lint must say of the mark)
    type Case<'a> = (
        &'a str,
        Vec<String>,
        Vec<String>,
        Vec<FixtureOp>,
        Vec<String>,
        &'a str,
    );
    let v = |m: &[&str]| m.iter().map(|s| (*s).to_owned()).collect::<Vec<String>>();
    let cases: Vec<Case> = vec![
        (
            "a suspend with a duration instead of a time suspends the box",
            v(&["replace"]),
            v(&["suspend:2h"]),
            vec![],
            vec![suspended.into()],
            "suspends box/b1 as a suspend without a time would",
        ),
        (
            "a negative suspend time suspends the box",
            v(&["replace"]),
            v(&["suspend:-5"]),
            vec![],
            vec![suspended.into()],
            "suspends box/b1",
        ),
        (
            "a suspend time past the clock's range is forever",
            v(&["replace"]),
            vec![format!("suspend:{huge}")],
            vec![],
            vec![suspended.into()],
            "suspends box/b1",
        ),
        (
            "an unreadable suspend on the room holds a box without its own policy",
            v(&["replace", "suspend:notanumber"]),
            vec![],
            vec![],
            vec![suspended.into()],
            "suspends room",
        ),
        (
            "an unreadable suspend-all on the room holds even a box with its own policy",
            v(&["suspend-all:1e9"]),
            v(&["restart"]),
            vec![],
            vec![suspended.into()],
            "suspends room and everything under it",
        ),
        (
            "an unreadable policy allows nothing, whatever the room allows",
            v(&["replace"]),
            v(&["restrat"]),
            vec![],
            vec![suspended.into()],
            "allows no repair",
        ),
        (
            "an unreadable pending mark counts as a repair under way",
            v(&["replace"]),
            vec![format!("pending:restart:{ID}:{huge}:1")],
            vec![],
            vec!["b1: pending wait (held by an unreadable pending mark)".into()],
            "counts as a repair under way on box/b1",
        ),
        (
            "an unreadable result parks the box as a failure would",
            v(&["replace"]),
            vec![format!("result:restart:{ID}:{NOW}:bogus:")],
            vec![],
            vec!["b1: failed wait (held by an unreadable result mark)".into()],
            "parks box/b1",
        ),
        (
            "a request waits behind an unreadable pending mark",
            v(&[]),
            vec![
                format!("pending:replace:{OTHER_ID}:{}:", NOW - 60),
                format!("pending:bogus:{ID}:{NOW}:"),
            ],
            vec![],
            vec!["b1: pending wait (held by an unreadable pending mark)".into()],
            "counts as a repair under way",
        ),
        (
            "a repair under way is still recorded beside an unreadable suspend",
            v(&["replace"]),
            vec![running.clone(), "suspend:2h".into()],
            vec![op(5, "b1", ID, OpState::Succeeded)],
            vec![
                "b1: pending update (suspended)".into(),
                format!(
                    "  box/b1: add result:restart:{ID}:{NOW}:success:5 (all its steps succeeded)"
                ),
                format!("  box/b1: remove {running} (all its steps succeeded)"),
            ],
            "suspends box/b1",
        ),
    ];
    for (case, room_marks, own, ops, want, said) in cases {
        let own: Vec<&str> = own.iter().map(String::as_str).collect();
        let marks: Vec<&str> = room_marks.iter().map(String::as_str).collect();
        let p = plan_with(&one(&marks, &own, Some(Restart), ops), &Limits::default());
        assert_eq!(lines(&p), want, "{case}");
        assert!(
            p.lint.iter().any(|l| l.message.contains(said)),
            "{case}: no lint says {said:?}: {:?}",
            p.lint
        );
    }
}

/// An unreadable pending mark holds its own target, and a failure-domain slot only while an
/// operation of ours runs there (a mark alone would hold every slot until a person came).
#[test]
fn an_unreadable_pending_mark_takes_a_slot_only_while_an_operation_runs() {
    let damaged = format!("pending:restart:{ID}:{}:1", "1".repeat(25));
    for (running, b2) in [
        (false, "b2: needs-repair start restart"),
        (
            true,
            "b2: needs-repair wait (no free slot (max_domains_under_repair))",
        ),
    ] {
        let r = FixtureRoom {
            ops: if running {
                vec![op(1, "b1", ID, OpState::Running)]
            } else {
                vec![]
            },
            ..room(
                &["replace"],
                &[],
                vec![
                    boxed("b1", "s1", &[&damaged], Some(Restart)),
                    boxed("b2", "s2", &[], Some(Restart)),
                ],
            )
        };
        let p = plan_with(
            &r,
            &Limits {
                max_pending: Some(1),
                ..Limits::default()
            },
        );
        let got = outcomes(&p);
        assert_eq!(got[1], b2, "operation running: {running}: {got:?}");
        assert!(got[0].starts_with("b1: pending wait"), "{got:?}");
    }
}

/// A recorded operation the backend answers for but knows nothing of (a backend may answer an
/// unknown id with a null status) has vanished: the repair fails saying so, not that its id now
/// names another operation.
#[test]
fn a_recorded_operation_the_backend_does_not_know_has_vanished() {
    let pending = format!("pending:restart:{ID}:{}:5", NOW - 600);
    let unknown = FixtureOp {
        repair: String::new(),
        ..op(5, "b1", ID, OpState::Unknown)
    };
    let p = plan_with(
        &one(&["replace"], &[&pending], Some(Restart), vec![unknown]),
        &Limits::default(),
    );
    let got = lines(&p);
    assert_eq!(
        got[1],
        format!("  box/b1: add result:restart:{ID}:{NOW}:failure: (step 5 is gone)"),
        "{got:?}"
    );
}

/// One box carrying 100,000 timed suspends, half of them over: each one over is removed once,
/// and the plan takes time linear in their number. Each compared with every one before it, a
/// pass over one such object took 34 s; linear, it takes well under a second.
#[test]
fn timed_suspends_by_the_hundred_thousand_on_one_object_take_linear_time() {
    let n: i64 = 100_000;
    let mut b = boxed("b", "s", &[], Some(Restart));
    b.marks = (1..=n)
        .map(|i| {
            let until = if i % 2 == 0 { NOW + i } else { NOW - i };
            format!("suspend:{until}")
        })
        .collect();
    let start = std::time::Instant::now();
    let p = plan_with(
        &room(&["restart"], &[], vec![b]),
        &Limits {
            max_writes_per_pass: usize::MAX,
            ..Limits::default()
        },
    );
    let took = start.elapsed();
    let removed: Vec<&String> = p
        .actions()
        .filter_map(|a| match a {
            Action::RemoveMarks { marks, .. } => Some(marks),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(removed.len() as i64, n / 2, "each mark that is over, once");
    assert_eq!(
        outcome(&p.targets[0]),
        "b: suspended update (suspended)",
        "the latest suspend holds"
    );
    assert!(
        took < std::time::Duration::from_secs(5),
        "a pass over one object with {n} timed suspends took {took:?}"
    );
}
