use super::{
    ErrorCode, GanetiLevel, JobList, MAX_TAG_LEN, Outcome, PREFIX, Pending, RepairResult, Tag,
    TagError, Tags,
};
use crate::engine::marks::{Codec, Governs};
use nom::{
    IResult, Parser,
    character::complete::{char, digit1},
    combinator::{all_consuming, map_res, opt, verify},
    multi::many0_count,
};

/// Ganeti's own check is `^[\w.+*/:@-]+$`; `\w` there is ASCII in practice.
const fn allowed_bytes() -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(c, b'_' | b'.' | b'+' | b'*' | b'/' | b':' | b'@' | b'-');
        b += 1;
    }
    table
}
static ALLOWED: [bool; 256] = allowed_bytes();

pub(super) fn is_ganeti_tag_text(s: &str) -> bool {
    s.bytes().all(|b| ALLOWED[b as usize])
}

/// At most this many colon positions are kept while scanning; enough for the longest kind
/// (`result`, 6 fields), and one more so a count above it is still reported exactly.
const MAX_FIELDS: usize = 8;

/// The text after the prefix split on `:`, found in the same pass that checks the charset:
/// fields are slices of the text, located by the recorded colon positions.
struct Fields<'a> {
    rest: &'a str,
    /// Byte offsets of the first colons (up to `MAX_FIELDS - 1`).
    colons: [u8; MAX_FIELDS - 1],
    /// How many fields `rest.split(':')` yields.
    count: usize,
}

impl<'a> Fields<'a> {
    /// Field `i` (0-based); `i` must be below `count` and `MAX_FIELDS`.
    fn get(&self, i: usize) -> &'a str {
        let start = if i == 0 {
            0
        } else {
            self.colons[i - 1] as usize + 1
        };
        let end = if i + 1 < self.count {
            self.colons[i] as usize
        } else {
            self.rest.len()
        };
        &self.rest[start..end]
    }
}

/// One pass over the bytes after the prefix: the first byte outside the charset (as a byte
/// offset into `rest`), else the fields.
fn scan(rest: &str) -> Result<Fields<'_>, usize> {
    let mut colons = [0u8; MAX_FIELDS - 1];
    let mut count = 1;
    for (i, &b) in rest.as_bytes().iter().enumerate() {
        if !ALLOWED[b as usize] {
            return Err(i);
        }
        if b == b':' {
            if count < MAX_FIELDS {
                // The whole tag is at most MAX_TAG_LEN (128) bytes, so offsets fit in a u8.
                colons[count - 1] = i as u8;
            }
            count += 1;
        }
    }
    Ok(Fields {
        rest,
        colons,
        count,
    })
}

/// Parses one tag. Foreign tags are `Ok(Tag::Foreign)`; only tags carrying the autorepair prefix
/// can be invalid.
pub fn parse(text: &str) -> Result<Tag<'_>, TagError> {
    let Some(rest) = text.strip_prefix(PREFIX) else {
        return Ok(Tag::Foreign);
    };
    // What the tag would govern, read from its kind alone, so that a damaged one fails
    // closed (docs/design.md, rule 11) whatever else is wrong with it.
    let governs = match rest.split(':').next().unwrap_or_default() {
        "suspend" => Governs::Suspend { all: false },
        "suspend-all" => Governs::Suspend { all: true },
        "pending" => Governs::Pending,
        "result" => Governs::Result,
        word if word.parse::<GanetiLevel>().is_ok() => Governs::Policy,
        _ => Governs::Unknown,
    };
    let fail = |code: ErrorCode, message: String| {
        TagError::new(Tags::NOUN, text, code, message).governing(governs)
    };
    let failed = |code: ErrorCode, e: FieldError| fail(code, e.to_string());
    if text.len() > MAX_TAG_LEN {
        return Err(fail(
            ErrorCode::TooLong,
            format!(
                "{} characters, over Ganeti's limit of {MAX_TAG_LEN}",
                text.len()
            ),
        ));
    }
    // The prefix itself is all tag-chars, so only the rest needs checking. Every byte before
    // a bad one is ASCII, so the bad byte starts a character.
    let fields = match scan(rest) {
        Ok(fields) => fields,
        Err(at) => {
            let c = rest[at..]
                .chars()
                .next()
                .expect("a bad byte starts a character");
            return Err(fail(
                ErrorCode::BadChar,
                format!("character {c:?} is not allowed (Ganeti accepts [A-Za-z0-9_.+*/:@-])"),
            ));
        }
    };

    let first = fields.get(0);
    let field_count = fields.count;
    match first {
        kind @ ("suspend" | "suspend-all") => {
            let all = kind == "suspend-all";
            match field_count {
                1 => Ok(Tag::Suspend { until: None, all }),
                2 => match fields.get(1) {
                    "" => Ok(Tag::Suspend { until: None, all }),
                    epoch_text => epoch(epoch_text)
                        .map(|until| Tag::Suspend {
                            until: Some(until),
                            all,
                        })
                        .map_err(|m| failed(ErrorCode::BadEpoch, m)),
                },
                _ => Err(fail(
                    ErrorCode::FieldCount,
                    format!(
                        "{kind} takes at most one field ({kind}, {kind}: or {kind}:<epoch>), found {}",
                        field_count - 1
                    ),
                )),
            }
        }
        "pending" | "result" => {
            let is_pending = first == "pending";
            let expected = if is_pending { 5 } else { 6 };
            if field_count != expected {
                let shape = if is_pending {
                    "pending:<type>:<id>:<epoch>:<jobs>"
                } else {
                    "result:<type>:<id>:<epoch>:<result>:<jobs>"
                };
                return Err(fail(
                    ErrorCode::FieldCount,
                    format!("expected {shape} ({expected} fields), found {field_count} fields"),
                ));
            }
            let repair =
                repair_type(fields.get(1)).map_err(|m| failed(ErrorCode::UnknownRepair, m))?;
            let id = uuid(fields.get(2)).map_err(|m| failed(ErrorCode::BadId, m))?;
            let when = epoch(fields.get(3)).map_err(|m| failed(ErrorCode::BadEpoch, m))?;
            if is_pending {
                let jobs = job_list(fields.get(4)).map_err(|m| failed(ErrorCode::BadJob, m))?;
                Ok(Tag::Pending(Pending {
                    repair,
                    id,
                    since: when,
                    ops: jobs,
                }))
            } else {
                let result = repair_result(fields.get(4))
                    .map_err(|m| failed(ErrorCode::UnknownResult, m))?;
                let jobs = job_list(fields.get(5)).map_err(|m| failed(ErrorCode::BadJob, m))?;
                Ok(Tag::Result(Outcome {
                    repair,
                    id,
                    at: when,
                    result,
                    ops: jobs,
                }))
            }
        }
        word if field_count == 1 => match word.parse::<GanetiLevel>() {
            Ok(t) => Ok(Tag::Policy(t)),
            Err(_) => Err(fail(
                ErrorCode::UnknownKind,
                format!(
                    "unknown kind {word:?}: expected fix-storage, migrate, failover, reinstall, suspend, suspend-all, pending or result"
                ),
            )),
        },
        word => Err(fail(
            ErrorCode::UnknownKind,
            format!(
                "unknown kind {word:?} with {} more field(s): only suspend, suspend-all, pending and result take fields",
                field_count - 1
            ),
        )),
    }
}

/// A field of a pending or result tag that is not what its place holds, naming the text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    #[error(transparent)]
    GanetiLevel(#[from] super::UnknownGanetiLevel),
    #[error("unknown result {0:?}: use success, failure or enoperm")]
    RepairResult(String),
    #[error(
        "timestamp {0:?} is not Unix seconds (digits without sign or leading zero, at most {max})",
        max = i64::MAX
    )]
    Epoch(String),
    #[error("job list {0:?} is not job ids joined by '+' (e.g. 12+13, or empty)")]
    JobList(String),
    #[error("repair id {0:?} is not a UUID (8-4-4-4-12 hexadecimal digits)")]
    RepairId(String),
}

fn repair_type(text: &str) -> Result<GanetiLevel, FieldError> {
    Ok(text.parse()?)
}

fn repair_result(text: &str) -> Result<RepairResult, FieldError> {
    RepairResult::from_name(text).ok_or_else(|| FieldError::RepairResult(text.to_owned()))
}

/// `0`, or digits without a leading zero: one spelling per number, so rendering round-trips.
fn canonical_number(i: &str) -> IResult<&str, &str> {
    verify(digit1, |d: &str| d == "0" || !d.starts_with('0')).parse(i)
}

fn epoch(text: &str) -> Result<i64, FieldError> {
    all_consuming(map_res(canonical_number, str::parse::<i64>))
        .parse(text)
        .map(|(_, v)| v)
        .map_err(|_| FieldError::Epoch(text.to_owned()))
}

fn job_id(i: &str) -> IResult<&str, u64> {
    map_res(canonical_number, str::parse::<u64>).parse(i)
}

fn job_list(text: &str) -> Result<JobList<'_>, FieldError> {
    all_consuming(opt((job_id, many0_count((char('+'), job_id)))))
        .parse(text)
        .map(|_| JobList::new_unchecked(text, '+'))
        .map_err(|_| FieldError::JobList(text.to_owned()))
}

fn uuid(text: &str) -> Result<&str, FieldError> {
    if crate::engine::marks::is_uuid(text) {
        Ok(text)
    } else {
        Err(FieldError::RepairId(text.to_owned()))
    }
}

/// Used by the renderer, which must refuse ids the parser would refuse.
pub(super) fn is_uuid(text: &str) -> bool {
    uuid(text).is_ok()
}

/// Whether `text` is a valid repair id (a UUID).
pub fn is_repair_id(text: &str) -> bool {
    is_uuid(text)
}
