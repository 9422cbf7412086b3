//! The mark language as Kubernetes annotations (docs/design.md, The mark language). Annotations are
//! a map, so each fact has its own key under [`PREFIX`] and a repair owns one key, named by its id:
//!
//! | mark | annotation |
//! |---|---|
//! | policy `<level>` | `autorepair.io/policy: <level>` |
//! | `suspend` | `autorepair.io/suspend: ""` |
//! | `suspend:<epoch>` | `autorepair.io/suspend: "<epoch>"` |
//! | `pending:<level>:<id>:<epoch>:<ops>` | `autorepair.io/repair.<id>: "pending:<level>:<epoch>:<ops>"` |
//! | `result:<level>:<id>:<epoch>:<result>:<ops>` | `autorepair.io/repair.<id>: "result:<level>:<epoch>:<result>:<ops>"` |
//!
//! The value keeps the Ganeti form minus the id (which is in the key), so the two round-trip to
//! the same model. The engine hands a mark around as `key=value` (a qualified name never holds
//! `=`); the backend sets the key, and removes it only while it still holds that value, so a
//! repair's result written over its pending mark survives the pending mark's removal.
//!
//! One key per fact means one policy and one suspend per object: setting one replaces the other
//! (the admin verbs do that), which is all the engine's rules need on one object.

use super::Metal3Level;
use crate::engine::marks::{Codec, Mark, MarkError, RenderError, RepairResult, is_uuid};
use crate::marks_map::MapSyntax;

/// Every autorepair annotation key starts with this.
pub const PREFIX: &str = "autorepair.io/";
pub const POLICY_KEY: &str = "autorepair.io/policy";
pub const SUSPEND_KEY: &str = "autorepair.io/suspend";
/// A suspend of every Machine under the object, over their own policies (`suspend --all`).
pub const SUSPEND_ALL_KEY: &str = "autorepair.io/suspend-all";
/// `autorepair.io/repair.<repair id>`.
pub const REPAIR_KEY_PREFIX: &str = "autorepair.io/repair.";
/// Not a mark: a deleted Node's labels and annotations, kept on its Machine until the Node
/// re-registers.
pub const NODE_BACKUP_KEY: &str = "autorepair.io/node-backup";
/// Not a mark: the Node autorepair added the out-of-service taint to, kept on its Machine until
/// the taint is removed; a taint someone else added is never removed.
pub const NODE_TAINTED_KEY: &str = "autorepair.io/node-tainted";
/// Not a mark: `<repair id>/<identity>`, the last remediation object (its uid) a repair on this
/// Machine answered or serves, and that repair. An object is answered by who it is, never by
/// comparing the result's time with its creation: the two come from different clocks, and a
/// new object made in the second an old one was answered is a new request.
pub const ANSWERED_KEY: &str = "autorepair.io/answered";

/// The value of [`ANSWERED_KEY`].
pub fn answered_value(repair: &str, identity: &str) -> String {
    format!("{repair}/{identity}")
}

/// [`ANSWERED_KEY`]'s value read: the repair, and the identity of the object it answered.
pub fn read_answered(value: &str) -> (Option<&str>, &str) {
    match value.split_once('/') {
        Some((repair, identity)) if is_uuid(repair) => (Some(repair), identity),
        _ => (None, value),
    }
}
/// The family's own records under [`PREFIX`]: not marks, never the engine's to edit.
pub const RECORD_KEYS: [&str; 3] = [NODE_BACKUP_KEY, NODE_TAINTED_KEY, ANSWERED_KEY];
/// Kubernetes' limit on the name part of a qualified name (a repair's key, a UUID's, fits).
pub const MAX_NAME_LEN: usize = 63;

/// The annotation codec.
pub struct Annotations;

pub use crate::engine::marks::{join_pair as join, split_pair as split};

/// How annotations hold marks: the Ganeti form of a repair's value minus its id.
const SYNTAX: MapSyntax = MapSyntax {
    noun: Annotations::NOUN,
    policy_key: POLICY_KEY,
    suspend_key: SUSPEND_KEY,
    suspend_all_key: SUSPEND_ALL_KEY,
    repair_prefix: REPAIR_KEY_PREFIX,
    field: ':',
    op: '+',
    ops_optional: false,
    // A value has no limit of its own.
    max_value: None,
    bad_id: |id| {
        format!("the key's repair id {id:?} is not a UUID (8-4-4-4-12 hexadecimal digits)")
    },
    field_count: |kind| {
        format!(
            "a {kind} value has {} fields: pending:<level>:<epoch>:<steps> or result:<level>:<epoch>:<result>:<steps>",
            if kind == "pending" { 4 } else { 5 }
        )
    },
    unknown_key: |key| {
        format!(
            "unknown autorepair annotation key {key:?}: use {POLICY_KEY}, {SUSPEND_KEY}, {SUSPEND_ALL_KEY} or {REPAIR_KEY_PREFIX}<repair id>"
        )
    },
};

/// An operation in a repair key's value that is not one of that repair's, naming it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum OpError {
    #[error("operation {0:?} belongs to another repair than the key's")]
    OtherRepair(String),
    #[error(
        "operation {0:?} is not <step>.<repair id> with a step among {steps}; operations are joined by +",
        steps = super::Step::ALL.map(|s| s.as_str()).join(", ")
    )]
    Malformed(String),
}

/// An operation of the repair whose key holds it: `<step>.<repair id>`.
fn op(op: &str, repair: &str) -> Result<(), OpError> {
    match op.parse::<super::OpId>() {
        Ok(id) if id.repair == repair => Ok(()),
        Ok(_) => Err(OpError::OtherRepair(op.to_owned())),
        Err(_) => Err(OpError::Malformed(op.to_owned())),
    }
}

impl Codec for Annotations {
    type Level = Metal3Level;
    type OpId = super::OpId;
    const NOUN: &'static str = "annotation";

    fn parse(text: &str) -> Result<Mark<'_, Metal3Level>, MarkError> {
        let (key, value) = split(text);
        if !key.starts_with(PREFIX) || RECORD_KEYS.contains(&key) {
            return Ok(Mark::Foreign);
        }
        SYNTAX.parse(text, key, value, op)
    }

    fn render_policy(level: Metal3Level) -> String {
        SYNTAX.render_policy(level)
    }

    fn render_suspend(until: Option<i64>, all: bool) -> Result<String, RenderError> {
        SYNTAX.render_suspend(until, all)
    }

    fn render_pending(
        level: Metal3Level,
        id: &str,
        since: i64,
        ops: &[super::OpId],
    ) -> Result<String, RenderError> {
        SYNTAX.render_pending(level, id, since, ops)
    }

    fn render_result(
        level: Metal3Level,
        id: &str,
        at: i64,
        result: RepairResult,
        ops: &[super::OpId],
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
    use crate::engine::marks::ErrorCode;
    use crate::metal3::{OpId, Step};

    const ID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

    fn op(step: Step) -> OpId {
        OpId {
            step,
            repair: ID.to_owned(),
        }
    }

    #[test]
    fn every_mark_round_trips_through_its_annotation() {
        let marks: Vec<String> = vec![
            Annotations::render_policy(Metal3Level::PowerCycle),
            Annotations::render_suspend(None, false).unwrap(),
            Annotations::render_suspend(Some(1_800_000_000), false).unwrap(),
            Annotations::render_pending(Metal3Level::PowerCycle, ID, 1_800_000_000, &[]).unwrap(),
            Annotations::render_pending(Metal3Level::Reprovision, ID, 5, &[op(Step::Delete)])
                .unwrap(),
            Annotations::render_result(
                Metal3Level::PowerCycle,
                ID,
                7,
                RepairResult::Failure,
                &[op(Step::PowerCycle)],
            )
            .unwrap(),
        ];
        for text in &marks {
            let mark = Annotations::parse(text).unwrap();
            assert_ne!(mark, Mark::Foreign, "{text}");
            let again = Annotations::render(&mark).unwrap().unwrap();
            assert_eq!(&again, text);
            let (key, _) = split(text);
            let name = key.rsplit('/').next().unwrap();
            assert!(name.len() <= MAX_NAME_LEN, "{key}");
        }
    }

    #[test]
    fn the_value_is_the_ganeti_form_without_the_id() {
        let text = Annotations::render_result(
            Metal3Level::Drain,
            ID,
            9,
            RepairResult::Success,
            &[op(Step::Drain)],
        )
        .unwrap();
        assert_eq!(
            text,
            format!("autorepair.io/repair.{ID}=result:drain:9:success:drain.{ID}")
        );
    }

    #[test]
    fn malformed_annotations_say_what_is_wrong() {
        let cases: &[(&str, ErrorCode)] = &[
            ("autorepair.io/policy=reboot", ErrorCode::UnknownRepair),
            ("autorepair.io/suspend=tomorrow", ErrorCode::BadEpoch),
            ("autorepair.io/repair.x=pending:drain:1:", ErrorCode::BadId),
            (
                "autorepair.io/repair.0f8fad5b-d9cb-469f-a165-70867728950e=pending:drain:1",
                ErrorCode::FieldCount,
            ),
            (
                "autorepair.io/repair.0f8fad5b-d9cb-469f-a165-70867728950e=done",
                ErrorCode::UnknownKind,
            ),
            (
                "autorepair.io/repair.0f8fad5b-d9cb-469f-a165-70867728950e=result:drain:1:ok:",
                ErrorCode::UnknownResult,
            ),
            (
                "autorepair.io/repair.0f8fad5b-d9cb-469f-a165-70867728950e=pending:drain:1:reboot",
                ErrorCode::BadJob,
            ),
            (
                "autorepair.io/repair.0f8fad5b-d9cb-469f-a165-70867728950e=pending:drain:1:drain.1f8fad5b-d9cb-469f-a165-70867728950e",
                ErrorCode::BadJob,
            ),
            ("autorepair.io/polcy=drain", ErrorCode::UnknownKind),
        ];
        for (text, code) in cases {
            let e = Annotations::parse(text).unwrap_err();
            assert_eq!(e.code, *code, "{text}: {e}");
            assert!(e.to_string().contains("annotation"), "{e}");
        }
    }

    /// `tag-grammar/annotation-vectors.jsonl`: every vector parses as it says, and every valid
    /// one renders back to the same key and value.
    #[test]
    fn the_grammar_vectors_hold() {
        let vectors = include_str!("../../tag-grammar/annotation-vectors.jsonl");
        for line in vectors.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let text = join(v["key"].as_str().unwrap(), v["value"].as_str().unwrap());
            let expect = &v["expect"];
            let got = match Annotations::parse(&text) {
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
            assert_eq!(&got, expect, "{text}: {}", v["note"]);
            if let Ok(mark) = Annotations::parse(&text)
                && let Some(rendered) = Annotations::render(&mark)
            {
                assert_eq!(rendered.unwrap(), text, "{}", v["note"]);
            }
        }
        assert!(vectors.lines().count() >= 30);
    }

    #[test]
    fn other_annotations_are_foreign() {
        for text in [
            "host.metal3.io/external-remediation=",
            "cluster.x-k8s.io/cluster-name=c1",
            "autorepair.io/node-backup={}",
        ] {
            assert_eq!(Annotations::parse(text).unwrap(), Mark::Foreign, "{text}");
        }
    }

    #[test]
    fn render_refuses_what_the_api_would() {
        assert!(matches!(
            Annotations::render_pending(Metal3Level::Drain, "not-a-uuid", 1, &[]),
            Err(RenderError::BadId { .. })
        ));
        assert!(matches!(
            Annotations::render_suspend(Some(-1), false),
            Err(RenderError::NegativeEpoch { .. })
        ));
    }
}
