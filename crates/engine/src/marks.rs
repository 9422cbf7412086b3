//! The mark language, as one model every storage encodes: policy `<level>`, `suspend`,
//! `suspend:<epoch>`, `suspend-all[:<epoch>]`, `pending:<level>:<id>:<epoch>:<ops>` and
//! `result:<level>:<id>:<epoch>:<result>:<ops>` (docs/design.md). A family's [`Codec`] maps its
//! storage (tags, annotations, labels) to this model and back, losslessly.
//!
//! A mark is handed around as the text its codec renders. Set-shaped storages store that text
//! as it is; map-shaped ones (one key per repair) split it into key and value, and treat the
//! removal of a mark as "delete the key if it still holds this mark", so writing a repair's
//! newer mark and then removing its older one leaves the newer in place.

use serde::Serialize;
use std::fmt;
use std::hash::Hash;

/// A family's repair levels, ordered from least to most destructive: `a < b` means `a` risks
/// less. A policy allowing a level allows every level below it.
pub trait Level:
    Copy + Ord + Hash + fmt::Debug + fmt::Display + Serialize + Send + Sync + 'static
{
    /// The whole ladder, least destructive first.
    const LADDER: &'static [Self];

    /// The level's name in marks and on the command line.
    fn as_str(self) -> &'static str;

    fn from_name(name: &str) -> Option<Self> {
        Self::LADDER.iter().copied().find(|l| l.as_str() == name)
    }

    /// The ladder's names, for messages: `a, b or c`.
    fn names() -> String {
        let names: Vec<&str> = Self::LADDER.iter().map(|l| l.as_str()).collect();
        match names.split_last() {
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

/// How a repair ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RepairResult {
    /// The repair was needed but the policy did not allow it.
    Enoperm,
    Success,
    Failure,
}

impl RepairResult {
    pub const ALL: [RepairResult; 3] = [
        RepairResult::Enoperm,
        RepairResult::Success,
        RepairResult::Failure,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RepairResult::Enoperm => "enoperm",
            RepairResult::Success => "success",
            RepairResult::Failure => "failure",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == name)
    }
}

impl fmt::Display for RepairResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The operation ids a repair mark records, kept as the validated text they were parsed from
/// (ids joined by `sep`), so that parsing never allocates. The ids are opaque to the engine:
/// the family's [`Family::OpId`](super::Family::OpId) reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpList<'a> {
    text: &'a str,
    sep: char,
}

impl Default for OpList<'_> {
    fn default() -> Self {
        OpList { text: "", sep: '+' }
    }
}

impl<'a> OpList<'a> {
    /// Only codecs build these, from text they validated: every id parses.
    pub fn new_unchecked(text: &'a str, sep: char) -> Self {
        OpList { text, sep }
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    pub fn texts(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.text.split(self.sep).filter(|s| !s.is_empty())
    }

    pub fn iter<I: std::str::FromStr>(&self) -> impl Iterator<Item = I> + 'a {
        self.texts().map(|s| {
            s.parse()
                .ok()
                .expect("operation ids validated by the codec")
        })
    }

    pub fn to_vec<I: std::str::FromStr>(&self) -> Vec<I> {
        self.iter().collect()
    }
}

/// A repair under way, or requested when it records no operation yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pending<'a, L> {
    pub repair: L,
    pub id: &'a str,
    pub since: i64,
    pub ops: OpList<'a>,
}

/// A repair that ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome<'a, L> {
    pub repair: L,
    pub id: &'a str,
    pub at: i64,
    pub result: RepairResult,
    pub ops: OpList<'a>,
}

/// One parsed mark, borrowed from its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark<'a, L> {
    /// Not one of ours: never an error, never touched.
    Foreign,
    /// Repairs up to this level are allowed on the object.
    Policy(L),
    /// No repair starts until `until` (Unix seconds), or ever when `None`. With `all`
    /// (`suspend --all`), none starts on any target under the object either, whatever policy
    /// nearer objects carry: the one exception to "the nearest policy wins", so that one mark
    /// stops a whole scope and removing it undoes exactly that.
    Suspend {
        until: Option<i64>,
        all: bool,
    },
    Pending(Pending<'a, L>),
    Result(Outcome<'a, L>),
    /// One of ours that cannot be read (docs/design.md, rule 11): it holds back what it would
    /// govern. No codec parses to it; [`read`] stands it in for a [`MarkError`].
    Unreadable(Governs),
}

/// What an autorepair mark that cannot be read would govern, as far as its codec could tell
/// from the part it could read (its kind, its key). An unreadable mark fails closed: a suspend
/// suspends as one without a time (a `suspend-all` everything under its object too), a policy
/// or a mark of no known kind allows nothing on its object, a pending mark counts as a repair
/// under way and a result parks its target as a failure would.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Governs {
    Policy,
    Suspend {
        all: bool,
    },
    Pending,
    Result,
    /// Ours by its prefix, of no kind the codec knows.
    Unknown,
}

impl Governs {
    /// Its name in messages and JSON: `suspend`, `pending`… (`unknown` for no known kind).
    pub fn as_str(self) -> &'static str {
        match self {
            Governs::Policy => "policy",
            Governs::Suspend { all: false } => "suspend",
            Governs::Suspend { all: true } => "suspend-all",
            Governs::Pending => "pending",
            Governs::Result => "result",
            Governs::Unknown => "unknown",
        }
    }

    /// What the mark does until it is fixed, for lint: `object` is what carries it.
    pub fn effect(self, object: &str) -> String {
        match self {
            Governs::Suspend { all: false } => format!(
                "until it is fixed it suspends {object} as a suspend without a time would; `autorepair resume {object}` removes it"
            ),
            Governs::Suspend { all: true } => format!(
                "until it is fixed it suspends {object} and everything under it as a suspend-all without a time would; `autorepair resume --all {object}` removes it"
            ),
            Governs::Policy => format!(
                "until it is fixed it allows no repair on what the policy of {object} governs; `autorepair allow LEVEL {object}` replaces it"
            ),
            Governs::Unknown => format!(
                "until it is fixed it allows no repair on what the policy of {object} governs; correct or remove it with the fleet's own tools"
            ),
            Governs::Pending => format!(
                "until it is fixed it counts as a repair under way on {object}: nothing new starts there; once no repair of it runs, `autorepair clear {object}` removes it"
            ),
            Governs::Result => format!(
                "until it is fixed it parks {object} as a failure result would; `autorepair clear {object}` removes it"
            ),
        }
    }
}

/// As its name: `"suspend-all"`, not a tagged object.
impl Serialize for Governs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl fmt::Display for Governs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Reads one stored mark, failing closed: a mark of ours the codec cannot parse comes back as
/// [`Mark::Unreadable`], with the error (for lint) beside it. Every reader that decides what a
/// mark allows goes through this, never through `C::parse(..).ok()`, which would drop it.
pub fn read<C: Codec>(text: &str) -> (Mark<'_, C::Level>, Option<MarkError>) {
    match C::parse(text) {
        Ok(mark) => (mark, None),
        Err(e) => (Mark::Unreadable(e.governs), Some(e)),
    }
}

/// Every mark of `texts` that is ours, read as [`read`] does (unreadable ones included), with
/// its text: what [`crate::policy::object_policy`] takes.
pub fn read_all<'a, C: Codec>(
    texts: &'a [String],
) -> impl Iterator<Item = (&'a str, Mark<'a, C::Level>)> + 'a {
    texts.iter().filter_map(|t| match read::<C>(t).0 {
        Mark::Foreign => None,
        mark => Some((t.as_str(), mark)),
    })
}

impl<L> Mark<'_, L> {
    /// The time the mark carries, if any: a suspend's end, a repair's start or end.
    pub fn time(&self) -> Option<i64> {
        match self {
            Mark::Suspend { until, .. } => *until,
            Mark::Pending(p) => Some(p.since),
            Mark::Result(r) => Some(r.at),
            Mark::Foreign | Mark::Policy(_) | Mark::Unreadable(_) => None,
        }
    }
}

/// Why a mark is invalid. The code is stable (test vectors and tools use it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    TooLong,
    BadChar,
    UnknownKind,
    FieldCount,
    UnknownRepair,
    BadId,
    BadEpoch,
    UnknownResult,
    BadJob,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::TooLong => "too-long",
            ErrorCode::BadChar => "bad-char",
            ErrorCode::UnknownKind => "unknown-kind",
            ErrorCode::FieldCount => "field-count",
            ErrorCode::UnknownRepair => "unknown-repair",
            ErrorCode::BadId => "bad-id",
            ErrorCode::BadEpoch => "bad-epoch",
            ErrorCode::UnknownResult => "unknown-result",
            ErrorCode::BadJob => "bad-job",
        }
    }
}

/// A malformed mark. The message says what is wrong and how it should look; callers add
/// which object carries it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid autorepair {noun} {mark:?}: {message}")]
pub struct MarkError {
    pub code: ErrorCode,
    /// What the mark would govern, as far as the codec could read it.
    pub governs: Governs,
    /// What the storage calls a mark (`tag`, `annotation`, `label`).
    pub noun: &'static str,
    pub mark: String,
    pub message: String,
}

impl MarkError {
    pub fn new(
        noun: &'static str,
        mark: &str,
        code: ErrorCode,
        message: impl Into<String>,
    ) -> Self {
        MarkError {
            code,
            governs: Governs::Unknown,
            noun,
            mark: mark.to_owned(),
            message: message.into(),
        }
    }

    /// The error of a mark the codec knows would govern `governs`.
    pub fn governing(mut self, governs: Governs) -> Self {
        self.governs = governs;
        self
    }
}

/// Splits a `name=value` mark (labels, annotations: a name never holds `=`).
pub fn split_pair(text: &str) -> (&str, &str) {
    text.split_once('=').unwrap_or((text, ""))
}

pub fn join_pair(name: &str, value: &str) -> String {
    format!("{name}={value}")
}

/// A Unix time in a `name=value` mark's field: `0`, or digits without a leading zero, at most
/// `i64::MAX`. One spelling per time, so that a rendered mark parses back to itself.
pub fn pair_epoch(
    noun: &'static str,
    text: &str,
    field: &str,
    whole: &str,
) -> Result<i64, MarkError> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    let canonical = text == "0" || !text.starts_with('0');
    match text.parse::<i64>() {
        Ok(t) if digits && canonical => Ok(t),
        _ => Err(MarkError::new(
            noun,
            whole,
            ErrorCode::BadEpoch,
            format!(
                "{field} {text:?} is not a Unix time in seconds (digits, no leading zero, e.g. 1800000000)"
            ),
        )),
    }
}

/// A repair level named in a `name=value` mark.
pub fn pair_level<L: Level>(noun: &'static str, text: &str, whole: &str) -> Result<L, MarkError> {
    L::from_name(text).ok_or_else(|| {
        MarkError::new(
            noun,
            whole,
            ErrorCode::UnknownRepair,
            format!("unknown repair level {text:?}: use {}", L::names()),
        )
    })
}

/// A mark the codec refused to render because its storage would refuse it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error("{noun} {mark:?} would be {len} characters, over {store}'s limit of {limit}")]
    TooLong {
        noun: &'static str,
        store: &'static str,
        mark: String,
        len: usize,
        limit: usize,
    },
    #[error("repair id {id:?} is not a UUID (8-4-4-4-12 hexadecimal digits)")]
    BadId { id: String },
    #[error("timestamp {value} is negative: autorepair timestamps are Unix seconds")]
    NegativeEpoch { value: i64 },
}

/// One storage's encoding of the mark model. Associated functions only: a codec is chosen by
/// type, so parsing a hundred thousand targets' marks is a direct call.
pub trait Codec {
    type Level: Level;
    type OpId: fmt::Display;

    /// What this storage calls one mark, for messages.
    const NOUN: &'static str;

    /// Parses one stored mark. Marks that are not ours are `Ok(Mark::Foreign)`.
    fn parse(text: &str) -> Result<Mark<'_, Self::Level>, MarkError>;
    fn render_policy(level: Self::Level) -> String;
    /// A suspend; with `all`, one over every policy below the object (`suspend --all`).
    fn render_suspend(until: Option<i64>, all: bool) -> Result<String, RenderError>;
    fn render_pending(
        level: Self::Level,
        id: &str,
        since: i64,
        ops: &[Self::OpId],
    ) -> Result<String, RenderError>;
    fn render_result(
        level: Self::Level,
        id: &str,
        at: i64,
        result: RepairResult,
        ops: &[Self::OpId],
    ) -> Result<String, RenderError>;

    /// Whether `id` is a repair id this codec can store.
    fn is_repair_id(id: &str) -> bool;

    /// The text of a parsed mark; `None` for foreign marks, which have no text of ours.
    fn render(mark: &Mark<'_, Self::Level>) -> Option<Result<String, RenderError>>
    where
        Self::OpId: std::str::FromStr,
    {
        match *mark {
            Mark::Foreign | Mark::Unreadable(_) => None,
            Mark::Policy(l) => Some(Ok(Self::render_policy(l))),
            Mark::Suspend { until, all } => Some(Self::render_suspend(until, all)),
            Mark::Pending(p) => Some(Self::render_pending(
                p.repair,
                p.id,
                p.since,
                &p.ops.to_vec(),
            )),
            Mark::Result(r) => Some(Self::render_result(
                r.repair,
                r.id,
                r.at,
                r.result,
                &r.ops.to_vec(),
            )),
        }
    }
}

/// `8-4-4-4-12` hexadecimal digits, checked byte by byte: the repair ids the engine makes.
pub fn is_uuid(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// The mark model written as the model itself spells it, with no prefix: `restart`,
/// `suspend`, `suspend-all:<epoch>`, `pending:<level>:<id>:<epoch>:<ops>` and
/// `result:<level>:<id>:<epoch>:<result>:<ops>`, the operation ids joined by `+`. For a store of
/// plain strings with no syntax of its own (a JSON file, a fleet in memory). A mark that starts
/// with `x-` is someone else's; every other one is ours, so a damaged one fails closed.
pub struct PlainMarks<L, I>(std::marker::PhantomData<fn() -> (L, I)>);

impl<L: Level, I: std::str::FromStr + fmt::Display> PlainMarks<L, I> {
    fn error(mark: &str, code: ErrorCode, message: String) -> MarkError {
        // What a damaged mark governs, from its kind alone; a word of no kind reads as a policy.
        let governs = match mark.split(':').next().unwrap_or_default() {
            "suspend" => Governs::Suspend { all: false },
            "suspend-all" => Governs::Suspend { all: true },
            "pending" => Governs::Pending,
            "result" => Governs::Result,
            _ => Governs::Policy,
        };
        MarkError::new("mark", mark, code, message).governing(governs)
    }

    fn level(mark: &str, name: &str) -> Result<L, MarkError> {
        L::from_name(name).ok_or_else(|| {
            let message = format!("unknown repair level {name:?}: use {}", L::names());
            Self::error(mark, ErrorCode::UnknownRepair, message)
        })
    }

    fn epoch(mark: &str, text: &str) -> Result<i64, MarkError> {
        text.parse::<i64>().ok().filter(|t| *t >= 0).ok_or_else(|| {
            let message = format!("{text:?} is not a Unix time in seconds (e.g. 1800000000)");
            Self::error(mark, ErrorCode::BadEpoch, message)
        })
    }

    fn id<'a>(mark: &str, id: &'a str) -> Result<&'a str, MarkError> {
        if is_uuid(id) {
            return Ok(id);
        }
        let message = format!("repair id {id:?} is not a UUID (8-4-4-4-12 hexadecimal digits)");
        Err(Self::error(mark, ErrorCode::BadId, message))
    }

    fn ops<'a>(mark: &str, ops: &'a str) -> Result<OpList<'a>, MarkError> {
        let list = OpList::new_unchecked(ops, '+');
        if list.texts().all(|o| o.parse::<I>().is_ok()) {
            return Ok(list);
        }
        let message = format!("operations {ops:?} are not operation ids joined by `+`");
        Err(Self::error(mark, ErrorCode::BadJob, message))
    }

    fn join(ops: &[I]) -> String {
        let ids: Vec<String> = ops.iter().map(I::to_string).collect();
        ids.join("+")
    }
}

impl<L: Level, I: std::str::FromStr + fmt::Display> Codec for PlainMarks<L, I> {
    type Level = L;
    type OpId = I;
    const NOUN: &'static str = "mark";

    fn parse(text: &str) -> Result<Mark<'_, L>, MarkError> {
        if text.starts_with("x-") {
            return Ok(Mark::Foreign);
        }
        let fields: Vec<&str> = text.split(':').collect();
        match fields.as_slice() {
            [kind @ ("suspend" | "suspend-all")] | [kind @ ("suspend" | "suspend-all"), ""] => {
                Ok(Mark::Suspend {
                    until: None,
                    all: *kind == "suspend-all",
                })
            }
            [kind @ ("suspend" | "suspend-all"), t] => Ok(Mark::Suspend {
                until: Some(Self::epoch(text, t)?),
                all: *kind == "suspend-all",
            }),
            ["pending", l, i, s, o] => Ok(Mark::Pending(Pending {
                ops: Self::ops(text, o)?,
                repair: Self::level(text, l)?,
                id: Self::id(text, i)?,
                since: Self::epoch(text, s)?,
            })),
            ["result", l, i, a, r, o] => Ok(Mark::Result(Outcome {
                ops: Self::ops(text, o)?,
                repair: Self::level(text, l)?,
                id: Self::id(text, i)?,
                at: Self::epoch(text, a)?,
                result: RepairResult::from_name(r).ok_or_else(|| {
                    let message = format!("unknown result {r:?}: use enoperm, success or failure");
                    Self::error(text, ErrorCode::UnknownResult, message)
                })?,
            })),
            [word] => L::from_name(word).map(Mark::Policy).ok_or_else(|| {
                let message = format!(
                    "unknown mark: use a repair level ({}), suspend, suspend-all, pending or result",
                    L::names()
                );
                Self::error(text, ErrorCode::UnknownKind, message)
            }),
            _ => {
                let message = format!(
                    "{} fields: a policy has one, a suspend one or two, a pending mark five, a result six",
                    fields.len()
                );
                Err(Self::error(text, ErrorCode::FieldCount, message))
            }
        }
    }

    fn render_policy(level: L) -> String {
        level.to_string()
    }

    fn render_suspend(until: Option<i64>, all: bool) -> Result<String, RenderError> {
        let kind = if all { "suspend-all" } else { "suspend" };
        Ok(until.map_or(kind.into(), |t| format!("{kind}:{t}")))
    }

    fn render_pending(level: L, id: &str, since: i64, ops: &[I]) -> Result<String, RenderError> {
        Ok(format!("pending:{level}:{id}:{since}:{}", Self::join(ops)))
    }

    fn render_result(
        level: L,
        id: &str,
        at: i64,
        result: RepairResult,
        ops: &[I],
    ) -> Result<String, RenderError> {
        let ops = Self::join(ops);
        Ok(format!("result:{level}:{id}:{at}:{result}:{ops}"))
    }

    fn is_repair_id(id: &str) -> bool {
        is_uuid(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::FixtureMarks as Plain;

    const ID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

    /// Every kind of plain mark renders back to its text; what is not one is foreign or an
    /// error that says what it would govern.
    #[test]
    fn plain_marks_read_back_as_written_and_fail_closed() {
        let ours = [
            "restart".to_owned(),
            "suspend".to_owned(),
            "suspend-all:5".to_owned(),
            format!("pending:nudge:{ID}:100:"),
            format!("pending:replace:{ID}:100:3+4"),
            format!("result:restart:{ID}:200:failure:7"),
        ];
        for text in &ours {
            let mark = Plain::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(Plain::render(&mark), Some(Ok(text.clone())), "{text}");
        }
        // `suspend:` is a suspend without a time, written back without the colon.
        assert_eq!(
            Plain::parse("suspend:"),
            Ok(Mark::Suspend {
                until: None,
                all: false
            })
        );
        assert_eq!(Plain::parse("x-owner:bob:1"), Ok(Mark::Foreign));
        let broken = [
            ("restrat", ErrorCode::UnknownKind, Governs::Policy),
            ("bogus:1:2", ErrorCode::FieldCount, Governs::Policy),
            (
                "suspend:soon",
                ErrorCode::BadEpoch,
                Governs::Suspend { all: false },
            ),
            (
                "suspend-all:-1",
                ErrorCode::BadEpoch,
                Governs::Suspend { all: true },
            ),
            (
                "pending:restart:not-an-id:1:",
                ErrorCode::BadId,
                Governs::Pending,
            ),
            (
                "pending:repair:x:1:",
                ErrorCode::UnknownRepair,
                Governs::Pending,
            ),
            (
                "pending:restart:x:1:a+b",
                ErrorCode::BadJob,
                Governs::Pending,
            ),
            (
                "result:restart:x:1:maybe:",
                ErrorCode::BadId,
                Governs::Result,
            ),
        ];
        for (text, code, governs) in broken {
            let e = Plain::parse(text).expect_err(text);
            assert_eq!((e.code, e.governs), (code, governs), "{text}: {e}");
            assert!(e.to_string().contains(text), "{text}: {e}");
        }
        let e = Plain::parse(&format!("result:restart:{ID}:1:maybe:")).expect_err("maybe");
        assert_eq!(e.code, ErrorCode::UnknownResult, "{e}");
        assert!(e.message.contains("enoperm, success or failure"), "{e}");
    }
}
