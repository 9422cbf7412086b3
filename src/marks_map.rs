//! One codec for the mark language stored in a string map: Kubernetes annotations (the metal3
//! family) and sabakan labels (the machines family). A map holds one value per key, so each
//! fact has its key and a repair owns one key, named by its id: `<policy key>=<level>`,
//! `<suspend key>=[<epoch>]`, `<suspend-all key>=[<epoch>]`, `<repair prefix><id>=pending<f><level><f><epoch>[<f><ops>]` and
//! `<repair prefix><id>=result<f><level><f><epoch><f><result>[<f><ops>]`. The stores differ only
//! in their [`MapSyntax`]: the keys, the field and operation separators, whether an empty
//! operation list keeps its field, a limit on a value's length and the words of the errors.
//! What is foreign to the codec and what the store accepts at all stays with each family.

use crate::engine::Level;
use crate::engine::marks::{
    ErrorCode, Governs, Mark, MarkError, OpList, Outcome, Pending, RenderError, RepairResult,
    is_uuid, join_pair, pair_epoch, pair_level,
};
use std::fmt::Display;

/// How one store writes marks into a map.
pub struct MapSyntax {
    /// What errors call an entry: `annotation`, `label`.
    pub noun: &'static str,
    pub policy_key: &'static str,
    pub suspend_key: &'static str,
    /// The key of a suspend over every policy below the object (`suspend --all`).
    pub suspend_all_key: &'static str,
    /// A repair's key is this followed by its id.
    pub repair_prefix: &'static str,
    /// Separates a repair value's fields.
    pub field: char,
    /// Separates the operations in their field.
    pub op: char,
    /// Whether a repair without operations drops the operations field (a sabakan label value
    /// must end with a letter or digit); otherwise the field stays, empty.
    pub ops_optional: bool,
    /// The longest value the store takes, and the store's name for the error.
    pub max_value: Option<(usize, &'static str)>,
    /// The message of a repair key whose id is not a UUID.
    pub bad_id: fn(id: &str) -> String,
    /// The message of a `pending` or `result` value with the wrong number of fields.
    pub field_count: fn(kind: &str) -> String,
    /// The message of a key under the store's prefix that no mark uses.
    pub unknown_key: fn(key: &str) -> String,
}

impl MapSyntax {
    fn error(&self, text: &str, code: ErrorCode, message: impl Into<String>) -> MarkError {
        MarkError::new(self.noun, text, code, message)
    }

    fn epoch(&self, text: &str, field: &str, whole: &str) -> Result<i64, MarkError> {
        pair_epoch(self.noun, text, field, whole)
    }

    /// The mark an entry `key=value` (the whole `text`) of the family's own holds: the family
    /// has already set aside what is foreign and what the store itself would refuse. `op`
    /// checks one operation of repair `id` (what is wrong with it when it is not one).
    pub fn parse<'a, L: Level, E: std::fmt::Display>(
        &self,
        text: &'a str,
        key: &'a str,
        value: &'a str,
        op: impl Fn(&str, &str) -> Result<(), E>,
    ) -> Result<Mark<'a, L>, MarkError> {
        self.parse_known(text, key, value, op)
            .map_err(|e| e.governing(self.governs(key, value)))
    }

    /// What an entry of the family's own would govern, from its key (and a repair's value's
    /// kind), however damaged the rest is: an unreadable one fails closed (docs/design.md,
    /// rule 11). A repair key whose value is of no known kind counts as pending.
    pub fn governs(&self, key: &str, value: &str) -> Governs {
        if key == self.policy_key {
            Governs::Policy
        } else if key == self.suspend_key || key == self.suspend_all_key {
            Governs::Suspend {
                all: key == self.suspend_all_key,
            }
        } else if key.starts_with(self.repair_prefix) {
            if value.starts_with("result") {
                Governs::Result
            } else {
                Governs::Pending
            }
        } else {
            Governs::Unknown
        }
    }

    fn parse_known<'a, L: Level, E: std::fmt::Display>(
        &self,
        text: &'a str,
        key: &'a str,
        value: &'a str,
        op: impl Fn(&str, &str) -> Result<(), E>,
    ) -> Result<Mark<'a, L>, MarkError> {
        if key == self.policy_key {
            return Ok(Mark::Policy(pair_level(self.noun, value, text)?));
        }
        if key == self.suspend_key || key == self.suspend_all_key {
            return Ok(Mark::Suspend {
                until: if value.is_empty() {
                    None
                } else {
                    Some(self.epoch(value, "suspend end", text)?)
                },
                all: key == self.suspend_all_key,
            });
        }
        match key.strip_prefix(self.repair_prefix) {
            Some(id) => self.parse_repair(text, id, value, op),
            None => Err(self.error(text, ErrorCode::UnknownKind, (self.unknown_key)(key))),
        }
    }

    fn parse_repair<'a, L: Level, E: std::fmt::Display>(
        &self,
        text: &'a str,
        id: &'a str,
        value: &'a str,
        op: impl Fn(&str, &str) -> Result<(), E>,
    ) -> Result<Mark<'a, L>, MarkError> {
        if !is_uuid(id) {
            return Err(self.error(text, ErrorCode::BadId, (self.bad_id)(id)));
        }
        let fields: Vec<&str> = value.split(self.field).collect();
        let (kind, rest) = fields.split_first().unwrap_or((&"", &[]));
        let fixed = match *kind {
            "pending" => 3,
            "result" => 4,
            _ => {
                return Err(self.error(
                    text,
                    ErrorCode::UnknownKind,
                    format!(
                        "a repair value starts with pending{0} or result{0}",
                        self.field
                    ),
                ));
            }
        };
        let with_ops = fixed + 1;
        let fits = fields.len() == with_ops || (self.ops_optional && fields.len() == fixed);
        if !fits {
            return Err(self.error(text, ErrorCode::FieldCount, (self.field_count)(kind)));
        }
        let repair = pair_level(self.noun, rest[0], text)?;
        // The operations field, when there is one. An empty one is no operation (a label
        // value cannot end with its separator: the family's syntax check refuses it first).
        let list = fields.get(fixed).copied().unwrap_or_default();
        let ops = || {
            for o in list.split(self.op).filter(|_| !list.is_empty()) {
                op(o, id).map_err(|m| self.error(text, ErrorCode::BadJob, m.to_string()))?;
            }
            Ok::<_, MarkError>(OpList::new_unchecked(list, self.op))
        };
        Ok(if *kind == "pending" {
            Mark::Pending(Pending {
                repair,
                id,
                since: self.epoch(rest[1], "start", text)?,
                ops: ops()?,
            })
        } else {
            let result = rest[2];
            Mark::Result(Outcome {
                repair,
                id,
                at: self.epoch(rest[1], "end", text)?,
                result: RepairResult::from_name(result).ok_or_else(|| {
                    self.error(
                        text,
                        ErrorCode::UnknownResult,
                        format!("unknown result {result:?}: use success, failure or enoperm"),
                    )
                })?,
                ops: ops()?,
            })
        })
    }

    pub fn render_policy<L: Level>(&self, level: L) -> String {
        join_pair(self.policy_key, level.as_str())
    }

    pub fn render_suspend(&self, until: Option<i64>, all: bool) -> Result<String, RenderError> {
        let key = if all {
            self.suspend_all_key
        } else {
            self.suspend_key
        };
        match until {
            None => Ok(join_pair(key, "")),
            Some(t) if t < 0 => Err(RenderError::NegativeEpoch { value: t }),
            Some(t) => Ok(join_pair(key, &t.to_string())),
        }
    }

    pub fn render_pending<L: Level, O: Display>(
        &self,
        level: L,
        id: &str,
        since: i64,
        ops: &[O],
    ) -> Result<String, RenderError> {
        let f = self.field;
        self.render_repair(id, since, format!("pending{f}{level}{f}{since}"), ops)
    }

    pub fn render_result<L: Level, O: Display>(
        &self,
        level: L,
        id: &str,
        at: i64,
        result: RepairResult,
        ops: &[O],
    ) -> Result<String, RenderError> {
        let f = self.field;
        self.render_repair(id, at, format!("result{f}{level}{f}{at}{f}{result}"), ops)
    }

    fn render_repair<O: Display>(
        &self,
        id: &str,
        epoch: i64,
        mut value: String,
        ops: &[O],
    ) -> Result<String, RenderError> {
        if !is_uuid(id) {
            return Err(RenderError::BadId { id: id.to_owned() });
        }
        if epoch < 0 {
            return Err(RenderError::NegativeEpoch { value: epoch });
        }
        if !(ops.is_empty() && self.ops_optional) {
            value.push(self.field);
        }
        let list: Vec<String> = ops.iter().map(ToString::to_string).collect();
        value.push_str(&list.join(&self.op.to_string()));
        let text = join_pair(&format!("{}{id}", self.repair_prefix), &value);
        match self.max_value {
            Some((limit, store)) if value.len() > limit => Err(RenderError::TooLong {
                noun: self.noun,
                store,
                len: value.len(),
                mark: text,
                limit,
            }),
            _ => Ok(text),
        }
    }
}
