//! The mark language as sabakan labels (docs/design.md, The mark language). A label's name and
//! value are each 1-63 characters of `[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?` (a value
//! may also be empty): no `:`, `/` or `+`. Labels are a map, so, as with Kubernetes annotations,
//! each fact has its own name and a repair owns one name, its id:
//!
//! | mark | label |
//! |---|---|
//! | policy `<level>` | `autorepair.policy` = `<level>` |
//! | `suspend` | `autorepair.suspend` = `` (empty) |
//! | `suspend:<epoch>` | `autorepair.suspend` = `<epoch>` |
//! | `pending:<level>:<id>:<epoch>:<ops>` | `autorepair.<id>` = `pending.<level>.<epoch>[.<ops>]` |
//! | `result:<level>:<id>:<epoch>:<result>:<ops>` | `autorepair.<id>` = `result.<level>.<epoch>.<result>[.<ops>]` |
//!
//! `.` separates the fields and `_` the operations (a value must end with a letter or digit,
//! so an empty operation list drops its field and its separator). An operation is a repair
//! entry's index (decimal, like CKE's `index`), so a value stays far below 63 characters: the
//! longest one of this century, `result.step-8.<10 digits>.failure.<index>`, leaves 30 digits
//! for the index. A repair name is 47 characters (`autorepair.` and a UUID).
//!
//! Some names under the prefix are not marks but the family's own records: a repair entry
//! ([`ENTRY`], [`PROGRESS`], see `super::entry`), the switches of the queue ([`QUEUE`]) and of
//! the trigger ([`AUTO_REPAIR`]), the
//! entry counter ([`INDEX`]) and the marks of the cluster and the racks ([`CLUSTER_PREFIX`],
//! [`RACK_PREFIX`]). The codec calls them foreign, so the engine never edits them; only the
//! family and its backend write them.

use super::{MachinesLevel, OpId};
use crate::engine::marks::{Codec, ErrorCode, Mark, MarkError, RenderError, RepairResult, is_uuid};
use crate::marks_map::MapSyntax;

/// Every autorepair label name starts with this.
pub const PREFIX: &str = "autorepair.";
pub const POLICY: &str = "autorepair.policy";
pub const SUSPEND: &str = "autorepair.suspend";
/// A suspend of every machine under the object, over their own policies (`suspend --all`).
pub const SUSPEND_ALL: &str = "autorepair.suspend-all";
/// The repair entry: `<index>.<operation>.<machine type>` (not a mark).
pub const ENTRY: &str = "autorepair.entry";
/// Where the entry stands (not a mark): see `super::entry::Progress`.
pub const PROGRESS: &str = "autorepair.progress";
/// `disabled` stops new drains and commands, as `ckecli repair-queue disable` (not a mark).
pub const QUEUE: &str = "autorepair.queue";
/// `disabled` stops new entries for machines the trigger selects, as `ckecli auto-repair
/// disable`; entries added by a person and those under way go on (not a mark).
pub const AUTO_REPAIR: &str = "autorepair.auto-repair";
/// The highest repair entry index ever given out (not a mark), kept on the cluster's holder as
/// `autorepair.cluster.index`: CKE's counter only grows, so an index names one repair for good.
pub const INDEX: &str = "autorepair.index";
/// sabakan has no object for the cluster: its marks live on the cluster's holder machine
/// under this prefix (`autorepair.cluster.policy`…), so that they do not mix with the marks of
/// the rack that machine also holds. The backend maps them; to the codec they are foreign.
pub const CLUSTER_PREFIX: &str = "autorepair.cluster.";
/// A rack's marks, on the rack's holder (`autorepair.rack.policy`…): under a prefix of their own
/// so that, left on a boot server that no longer holds the rack, they are still the rack's and
/// never read as that machine's own. (Before this prefix they were the holder's unprefixed
/// labels; a pass renames those.)
pub const RACK_PREFIX: &str = "autorepair.rack.";
/// sabakan's limit on a label's name and on its value.
pub const MAX_LEN: usize = 63;

/// The label codec.
pub struct Labels;

/// Whether `text` is a valid sabakan label name, or a valid non-empty value (sabakan's
/// `reValidLabelName`, machines.go): the syntax of a Kubernetes name part.
pub fn is_label_text(text: &str) -> bool {
    crate::k8s::names::name_part(text).is_ok()
}

/// Whether `value` is a valid label value: empty, or like a name.
pub fn is_label_value(value: &str) -> bool {
    value.is_empty() || is_label_text(value)
}

fn error(text: &str, code: ErrorCode, message: impl Into<String>) -> MarkError {
    MarkError::new(Labels::NOUN, text, code, message)
}

pub use crate::engine::marks::{join_pair as join, split_pair as split};

/// How labels hold marks: `.` between fields (no `:` in a label), `_` between operations.
const SYNTAX: MapSyntax = MapSyntax {
    noun: Labels::NOUN,
    policy_key: POLICY,
    suspend_key: SUSPEND,
    suspend_all_key: SUSPEND_ALL,
    repair_prefix: PREFIX,
    field: '.',
    op: '_',
    ops_optional: true,
    max_value: Some((MAX_LEN, "sabakan")),
    bad_id: |id| {
        format!(
            "the name's repair id {id:?} is not a UUID (8-4-4-4-12 hexadecimal digits); autorepair's own labels are {POLICY}, {SUSPEND}, {SUSPEND_ALL}, {ENTRY}, {PROGRESS} and {PREFIX}<repair id>"
        )
    },
    field_count: |_| {
        "a repair value is pending.<level>.<epoch>[.<ops>] or result.<level>.<epoch>.<result>[.<ops>]".to_owned()
    },
    // Every name under the prefix that is not the policy's or suspend's is a repair's.
    unknown_key: |key| format!("{key:?} is not an autorepair label"),
};

/// An operation in a repair label's value that is no repair entry's index, naming it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "operation {0:?} is not a repair entry's index (digits, no leading zero); operations are joined by _"
)]
struct NotAnOp(String);

/// An operation: a repair entry's index.
fn op(op: &str, _repair: &str) -> Result<(), NotAnOp> {
    match op.parse::<OpId>() {
        Ok(_) => Ok(()),
        Err(_) => Err(NotAnOp(op.to_owned())),
    }
}

impl Codec for Labels {
    type Level = MachinesLevel;
    type OpId = OpId;
    const NOUN: &'static str = "label";

    fn parse(text: &str) -> Result<Mark<'_, MachinesLevel>, MarkError> {
        let (name, value) = split(text);
        if !name.starts_with(PREFIX)
            || [ENTRY, PROGRESS, QUEUE, AUTO_REPAIR, INDEX].contains(&name)
            || name.starts_with(CLUSTER_PREFIX)
            || name.starts_with(RACK_PREFIX)
        {
            return Ok(Mark::Foreign);
        }
        if name.len() > MAX_LEN || value.len() > MAX_LEN {
            return Err(error(
                text,
                ErrorCode::TooLong,
                format!("a sabakan label's name and value are at most {MAX_LEN} characters each"),
            )
            .governing(SYNTAX.governs(name, value)));
        }
        if !is_label_text(name) || !is_label_value(value) {
            return Err(error(
                text,
                ErrorCode::BadChar,
                "a sabakan label's name and value are letters, digits, _ . and -, starting and ending with a letter or digit",
            )
            .governing(SYNTAX.governs(name, value)));
        }
        SYNTAX.parse(text, name, value, op)
    }

    fn render_policy(level: MachinesLevel) -> String {
        SYNTAX.render_policy(level)
    }

    fn render_suspend(until: Option<i64>, all: bool) -> Result<String, RenderError> {
        SYNTAX.render_suspend(until, all)
    }

    fn render_pending(
        level: MachinesLevel,
        id: &str,
        since: i64,
        ops: &[OpId],
    ) -> Result<String, RenderError> {
        SYNTAX.render_pending(level, id, since, ops)
    }

    fn render_result(
        level: MachinesLevel,
        id: &str,
        at: i64,
        result: RepairResult,
        ops: &[OpId],
    ) -> Result<String, RenderError> {
        SYNTAX.render_result(level, id, at, result, ops)
    }

    fn is_repair_id(id: &str) -> bool {
        is_uuid(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

    #[test]
    fn every_mark_round_trips_through_its_label() {
        let marks: Vec<String> = vec![
            Labels::render_policy(MachinesLevel::step(2)),
            Labels::render_policy(MachinesLevel::CHECK),
            Labels::render_suspend(None, false).unwrap(),
            Labels::render_suspend(Some(1_800_000_000), false).unwrap(),
            Labels::render_pending(MachinesLevel::step(1), ID, 1_800_000_000, &[]).unwrap(),
            Labels::render_pending(MachinesLevel::step(8), ID, 5, &[OpId(17)]).unwrap(),
            Labels::render_result(
                MachinesLevel::step(3),
                ID,
                7,
                RepairResult::Failure,
                &[OpId(1)],
            )
            .unwrap(),
            Labels::render_result(MachinesLevel::CHECK, ID, 7, RepairResult::Enoperm, &[]).unwrap(),
        ];
        for text in &marks {
            let mark = Labels::parse(text).unwrap();
            assert_ne!(mark, Mark::Foreign, "{text}");
            assert_eq!(&Labels::render(&mark).unwrap().unwrap(), text);
            let (name, value) = split(text);
            assert!(is_label_text(name), "{name}");
            assert!(is_label_value(value), "{value}");
        }
    }

    /// An operation is an entry's index; anything else is refused naming it.
    #[test]
    fn an_operation_is_an_entry_index() {
        for (text, refused) in [
            ("1", false),
            ("17", false),
            ("0", true),
            ("017", true),
            ("x", true),
            ("", true),
        ] {
            let want = if refused {
                Err(NotAnOp(text.to_owned()))
            } else {
                Ok(())
            };
            assert_eq!(op(text, ID), want, "{text:?}");
        }
    }

    #[test]
    fn the_longest_value_of_this_century_fits() {
        let text = Labels::render_result(
            MachinesLevel::step(8),
            ID,
            9_999_999_999,
            RepairResult::Failure,
            &[OpId(999_999_999_999)],
        )
        .unwrap();
        let (_, value) = split(&text);
        assert!(value.len() <= MAX_LEN, "{value}");
        let too_many = vec![OpId(999_999_999_999); 4];
        assert!(matches!(
            Labels::render_result(
                MachinesLevel::step(8),
                ID,
                1,
                RepairResult::Failure,
                &too_many
            ),
            Err(RenderError::TooLong { .. })
        ));
    }

    #[test]
    fn the_family_record_and_other_labels_are_foreign() {
        for text in [
            "autorepair.entry=3.unhealthy.IPMI-2.0",
            "autorepair.progress=queued.0.waiting.1.0.0",
            "product=R640",
            "autorepair=x",
            "autorepairpolicy=step-1",
        ] {
            assert_eq!(Labels::parse(text).unwrap(), Mark::Foreign, "{text}");
        }
    }

    #[test]
    fn render_refuses_what_sabakan_would() {
        assert!(matches!(
            Labels::render_pending(MachinesLevel::step(1), "not-a-uuid", 1, &[]),
            Err(RenderError::BadId { .. })
        ));
        assert!(matches!(
            Labels::render_suspend(Some(-1), false),
            Err(RenderError::NegativeEpoch { .. })
        ));
    }

    /// `tag-grammar/label-vectors.jsonl`: every vector parses as it says, every valid one renders
    /// back to the same name and value, and every valid one is a label sabakan accepts.
    #[test]
    fn the_grammar_vectors_hold() {
        let vectors = include_str!("../../tag-grammar/label-vectors.jsonl");
        for line in vectors.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let text = join(v["name"].as_str().unwrap(), v["value"].as_str().unwrap());
            let got = match Labels::parse(&text) {
                Err(e) => serde_json::json!({"kind": "invalid", "code": e.code.as_str(),
                    "holds": e.governs.as_str()}),
                Ok(Mark::Unreadable(_)) => unreachable!("no codec parses to Unreadable"),
                Ok(Mark::Foreign) => serde_json::json!({"kind": "foreign"}),
                Ok(Mark::Policy(l)) => serde_json::json!({"kind": "policy", "repair": l}),
                Ok(Mark::Suspend { until, all }) => serde_json::json!({
                    "kind": if all { "suspend-all" } else { "suspend" }, "until": until}),
                Ok(Mark::Pending(p)) => serde_json::json!({"kind": "pending", "repair": p.repair,
                    "id": p.id, "since": p.since, "ops": p.ops.texts().collect::<Vec<_>>()}),
                Ok(Mark::Result(r)) => serde_json::json!({"kind": "result", "repair": r.repair,
                    "id": r.id, "at": r.at, "result": r.result, "ops": r.ops.texts().collect::<Vec<_>>()}),
            };
            assert_eq!(&got, &v["expect"], "{text}: {}", v["note"]);
            if let Ok(mark) = Labels::parse(&text)
                && let Some(rendered) = Labels::render(&mark)
            {
                assert_eq!(rendered.unwrap(), text, "{}", v["note"]);
                let (name, value) = split(&text);
                assert!(is_label_text(name) && is_label_value(value), "{text}");
            }
        }
        assert!(vectors.lines().count() >= 30);
    }

    #[test]
    fn label_syntax_is_sabakans() {
        let cases = [
            ("a", true),
            ("a.b-c_d", true),
            ("-a", false),
            ("a-", false),
            ("a/b", false),
            ("a:b", false),
            ("a+b", false),
            ("", false),
            (&"a".repeat(63), true),
            (&"a".repeat(64), false),
        ];
        for (text, ok) in cases {
            assert_eq!(is_label_text(text), ok, "{text:?}");
        }
        assert!(is_label_value(""));
    }
}
