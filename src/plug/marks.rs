//! `tags parse`: marks given as text, each described in its family's mark language, whatever
//! the fleet. One description for every family: the family's codec
//! ([`Family::Marks`]) reads the marks, its words ([`Family::WORDS`], the codec's
//! [`NOUN`](Codec::NOUN)) say them, so a family offers this by being a family.

use super::printer::Printer;
use super::{Error, Exit};
use crate::engine::Family;
use crate::engine::marks::{Codec, Governs, Mark, RepairResult};
use crate::engine::rfc3339;
use serde::ser::{Serialize, SerializeMap, Serializer};

/// `autorepair tags parse`: each mark described; exit 1 if any mark of ours is invalid.
pub fn command<F: Family>(out: &mut Printer, marks: &[String]) -> Result<Exit, Error> {
    let ops_key = ops_key::<F>();
    let mut invalid = false;
    for text in marks {
        let parsed = MarkJson::<F>::of(text, &ops_key);
        invalid |= matches!(parsed.body, Body::Invalid { .. });
        out.item(|| &parsed, || describe::<F>(text))?;
    }
    Ok(if invalid { Exit::Partial } else { Exit::Ok })
}

/// The JSON key of a mark's operations: the family's word for them, as a key (`jobs`,
/// `repair_entries`).
fn ops_key<F: Family>() -> String {
    F::WORDS.ops.replace(' ', "_")
}

/// What one mark says, in a line.
pub fn describe<F: Family>(text: &str) -> String {
    let noun = F::Marks::NOUN;
    let ops = F::WORDS.ops;
    match F::Marks::parse(text) {
        Ok(Mark::Foreign) => format!("{text}: foreign (not an autorepair {noun})"),
        Ok(Mark::Policy(level)) => format!("{text}: allows repairs up to {level}"),
        Ok(Mark::Suspend { until, all }) => format!(
            "{text}: suspended{}, {}",
            if all {
                " with everything under it, over their own policies"
            } else {
                ""
            },
            until.map_or("no end".to_owned(), |u| format!("until {}", rfc3339(u)))
        ),
        Ok(Mark::Pending(p)) => format!(
            "{text}: {} repair {} pending since {}, {ops} {}{}",
            p.repair,
            p.id,
            rfc3339(p.since),
            listed::<F>(p.ops),
            if p.ops.is_empty() {
                " (a request, or not yet submitted)"
            } else {
                ""
            }
        ),
        Ok(Mark::Result(r)) => format!(
            "{text}: {} repair {} ended {} at {}, {ops} {}",
            r.repair,
            r.id,
            r.result,
            rfc3339(r.at),
            listed::<F>(r.ops)
        ),
        Err(e) => format!(
            "{text}: INVALID ({}): {}; until fixed it holds what {} {noun} governs",
            e.code.as_str(),
            e.message,
            a_kind(e.governs)
        ),
        // The codec never parses to this; `read` stands it in for an error.
        Ok(Mark::Unreadable(g)) => {
            format!("{text}: INVALID: holds what {} {noun} governs", a_kind(g))
        }
    }
}

/// `[3, 4]`: the operations a mark records.
fn listed<F: Family>(ops: crate::engine::marks::OpList<'_>) -> String {
    let ops: Vec<String> = ops.iter::<F::OpId>().map(|op| op.to_string()).collect();
    format!("[{}]", ops.join(", "))
}

/// "a suspend", "an unknown": the kind of mark with its article.
fn a_kind(governs: Governs) -> String {
    let kind = governs.to_string();
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {kind}")
}

/// The JSON form of one mark, as `tags parse --json` prints it: the mark under the codec's
/// noun (`"tag"`), its `kind` and its fields, the operations under the family's word for
/// them. Other tools depend on these keys.
pub struct MarkJson<'a, F: Family> {
    text: &'a str,
    ops_key: &'a str,
    body: Body<'a, F>,
}

enum Body<'a, F: Family> {
    Policy {
        repair: F::Level,
    },
    Suspend {
        until: Option<i64>,
        all: bool,
    },
    Pending {
        repair: F::Level,
        id: &'a str,
        since: i64,
        ops: Vec<F::OpId>,
    },
    Result {
        repair: F::Level,
        id: &'a str,
        at: i64,
        result: RepairResult,
        ops: Vec<F::OpId>,
    },
    Foreign,
    /// `holds`: what it governs until fixed (it fails closed).
    Invalid {
        error: String,
        code: &'static str,
        holds: Governs,
    },
}

impl<'a, F: Family> MarkJson<'a, F> {
    /// `text` parsed by the family's codec; `ops_key` is [`ops_key`]'s.
    fn of(text: &'a str, ops_key: &'a str) -> Self {
        let body = match F::Marks::parse(text) {
            Ok(Mark::Foreign) => Body::Foreign,
            Ok(Mark::Policy(repair)) => Body::Policy { repair },
            Ok(Mark::Suspend { until, all }) => Body::Suspend { until, all },
            Ok(Mark::Pending(p)) => Body::Pending {
                repair: p.repair,
                id: p.id,
                since: p.since,
                ops: p.ops.to_vec(),
            },
            Ok(Mark::Result(r)) => Body::Result {
                repair: r.repair,
                id: r.id,
                at: r.at,
                result: r.result,
                ops: r.ops.to_vec(),
            },
            Err(e) => Body::Invalid {
                error: e.message,
                code: e.code.as_str(),
                holds: e.governs,
            },
            Ok(Mark::Unreadable(holds)) => Body::Invalid {
                error: "unreadable".into(),
                code: "unreadable",
                holds,
            },
        };
        MarkJson {
            text,
            ops_key,
            body,
        }
    }

    /// The JSON of `text` as `tags parse --json` prints it.
    pub fn value(text: &str) -> serde_json::Result<serde_json::Value> {
        serde_json::to_value(MarkJson::<F>::of(text, &ops_key::<F>()))
    }

    /// The line `tags parse --json` prints for `text`.
    pub fn line(text: &str) -> serde_json::Result<String> {
        serde_json::to_string(&MarkJson::<F>::of(text, &ops_key::<F>()))
    }
}

/// By hand: the mark's key and the operations' are the family's words, and the keys keep
/// this order in the printed line.
impl<F: Family> Serialize for MarkJson<'_, F> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry(F::Marks::NOUN, self.text)?;
        match &self.body {
            Body::Policy { repair } => {
                map.serialize_entry("kind", "policy")?;
                map.serialize_entry("repair", repair)?;
            }
            Body::Suspend { until, all } => {
                map.serialize_entry("kind", if *all { "suspend-all" } else { "suspend" })?;
                map.serialize_entry("until", until)?;
            }
            Body::Pending {
                repair,
                id,
                since,
                ops,
            } => {
                map.serialize_entry("kind", "pending")?;
                map.serialize_entry("repair", repair)?;
                map.serialize_entry("id", id)?;
                map.serialize_entry("since", since)?;
                map.serialize_entry(self.ops_key, ops)?;
            }
            Body::Result {
                repair,
                id,
                at,
                result,
                ops,
            } => {
                map.serialize_entry("kind", "result")?;
                map.serialize_entry("repair", repair)?;
                map.serialize_entry("id", id)?;
                map.serialize_entry("at", at)?;
                map.serialize_entry("result", result)?;
                map.serialize_entry(self.ops_key, ops)?;
            }
            Body::Foreign => map.serialize_entry("kind", "foreign")?,
            Body::Invalid { error, code, holds } => {
                map.serialize_entry("kind", "invalid")?;
                map.serialize_entry("error", error)?;
                map.serialize_entry("code", code)?;
                map.serialize_entry("holds", holds)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::marks::Governs;

    #[test]
    fn each_kind_of_mark_takes_its_article() {
        for (governs, said) in [
            (Governs::Suspend { all: false }, "a suspend"),
            (Governs::Suspend { all: true }, "a suspend-all"),
            (Governs::Unknown, "an unknown"),
            (Governs::Pending, "a pending"),
        ] {
            assert_eq!(super::a_kind(governs), said);
        }
    }

    /// Each family's marks in its own words, the JSON's keys included: the mark under the
    /// codec's noun, the operations under the family's word for them.
    #[test]
    fn every_family_describes_its_marks_in_its_own_words() {
        use super::{MarkJson, describe};
        use crate::{ganeti::Ganeti, machines::Machines, metal3::Metal3};
        const ID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";
        /// A family's description and JSON line of a mark.
        type Said = fn(&str) -> (String, String);
        fn said<F: crate::engine::Family>(mark: &str) -> (String, String) {
            (describe::<F>(mark), MarkJson::<F>::line(mark).unwrap())
        }
        let cases: [(&str, Said, String, String, String); 4] = [
            (
                "ganeti pending",
                said::<Ganeti>,
                format!("ganeti:watcher:autorepair:pending:migrate:{ID}:17:3+4"),
                format!("migrate repair {ID} pending since 1970-01-01T00:00:17Z, jobs [3, 4]"),
                format!(
                    r#""tag":"ganeti:watcher:autorepair:pending:migrate:{ID}:17:3+4","kind":"pending","repair":"migrate","id":"{ID}","since":17,"jobs":[3,4]"#
                ),
            ),
            (
                "metal3 pending",
                said::<Metal3>,
                format!("autorepair.io/repair.{ID}=pending:drain:17:drain.{ID}"),
                format!(
                    "drain repair {ID} pending since 1970-01-01T00:00:17Z, operations [drain.{ID}]"
                ),
                format!(
                    r#""annotation":"autorepair.io/repair.{ID}=pending:drain:17:drain.{ID}","kind":"pending","repair":"drain","id":"{ID}","since":17,"operations":["drain.{ID}"]"#
                ),
            ),
            (
                "machines result",
                said::<Machines>,
                format!("autorepair.{ID}=result.step-2.18.failure.7"),
                format!(
                    "step-2 repair {ID} ended failure at 1970-01-01T00:00:18Z, repair entries [7]"
                ),
                format!(
                    r#""label":"autorepair.{ID}=result.step-2.18.failure.7","kind":"result","repair":"step-2","id":"{ID}","at":18,"result":"failure","repair_entries":["7"]"#
                ),
            ),
            (
                "a Ganeti tag is foreign to metal3",
                said::<Metal3>,
                "ganeti:watcher:autorepair:failover".to_owned(),
                "foreign (not an autorepair annotation)".to_owned(),
                r#""annotation":"ganeti:watcher:autorepair:failover","kind":"foreign""#.to_owned(),
            ),
        ];
        for (name, said, mark, text, json) in cases {
            assert_eq!(
                said(&mark),
                (format!("{mark}: {text}"), format!("{{{json}}}")),
                "{name}"
            );
        }
    }
}
