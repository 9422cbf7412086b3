use super::{
    ErrorCode, JobList, MAX_TAG_LEN, Outcome, PREFIX, Pending, RepairResult, RepairType, Tag,
    TagError,
};
use nom::{
    IResult, Parser,
    bytes::complete::take_while_m_n,
    character::complete::{char, digit1},
    combinator::{all_consuming, map_res, opt, recognize, verify},
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

/// Parses one tag. Foreign tags are `Ok(Tag::Foreign)`; only tags carrying the autorepair prefix
/// can be invalid.
pub fn parse(text: &str) -> Result<Tag<'_>, TagError> {
    let Some(rest) = text.strip_prefix(PREFIX) else {
        return Ok(Tag::Foreign);
    };
    let fail = |code: ErrorCode, message: String| TagError {
        code,
        tag: text.to_owned(),
        message,
    };
    if text.len() > MAX_TAG_LEN {
        return Err(fail(
            ErrorCode::TooLong,
            format!(
                "{} characters, over Ganeti's limit of {MAX_TAG_LEN}",
                text.len()
            ),
        ));
    }
    if let Some(c) = text
        .chars()
        .find(|c| !c.is_ascii() || !ALLOWED[*c as usize])
    {
        return Err(fail(
            ErrorCode::BadChar,
            format!("character {c:?} is not allowed (Ganeti accepts [A-Za-z0-9_.+*/:@-])"),
        ));
    }

    let mut fields = rest.split(':');
    let first = fields.next().unwrap_or_default();
    let field_count = rest.split(':').count();
    match first {
        "suspend" => match (fields.next(), field_count) {
            (None, _) | (Some(""), 2) => Ok(Tag::Suspend { until: None }),
            (Some(epoch_text), 2) => epoch(epoch_text)
                .map(|until| Tag::Suspend { until: Some(until) })
                .map_err(|m| fail(ErrorCode::BadEpoch, m)),
            _ => Err(fail(
                ErrorCode::FieldCount,
                format!(
                    "suspend takes at most one field (suspend, suspend: or suspend:<epoch>), found {}",
                    field_count - 1
                ),
            )),
        },
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
            let mut next = || fields.next().expect("field count checked");
            let repair = repair_type(next()).map_err(|m| fail(ErrorCode::UnknownRepair, m))?;
            let id = uuid(next()).map_err(|m| fail(ErrorCode::BadId, m))?;
            let when = epoch(next()).map_err(|m| fail(ErrorCode::BadEpoch, m))?;
            if is_pending {
                let jobs = job_list(next()).map_err(|m| fail(ErrorCode::BadJob, m))?;
                Ok(Tag::Pending(Pending {
                    repair,
                    id,
                    since: when,
                    jobs,
                }))
            } else {
                let result =
                    repair_result(next()).map_err(|m| fail(ErrorCode::UnknownResult, m))?;
                let jobs = job_list(next()).map_err(|m| fail(ErrorCode::BadJob, m))?;
                Ok(Tag::Result(Outcome {
                    repair,
                    id,
                    at: when,
                    result,
                    jobs,
                }))
            }
        }
        word if field_count == 1 => match word.parse::<RepairType>() {
            Ok(t) => Ok(Tag::Policy(t)),
            Err(_) => Err(fail(
                ErrorCode::UnknownKind,
                format!(
                    "unknown kind {word:?}: expected fix-storage, migrate, failover, reinstall, suspend, pending or result"
                ),
            )),
        },
        word => Err(fail(
            ErrorCode::UnknownKind,
            format!(
                "unknown kind {word:?} with {} more field(s): only suspend, pending and result take fields",
                field_count - 1
            ),
        )),
    }
}

fn repair_type(text: &str) -> Result<RepairType, String> {
    text.parse()
}

fn repair_result(text: &str) -> Result<RepairResult, String> {
    match text {
        "success" => Ok(RepairResult::Success),
        "failure" => Ok(RepairResult::Failure),
        "enoperm" => Ok(RepairResult::Enoperm),
        other => Err(format!(
            "unknown result {other:?}: use success, failure or enoperm"
        )),
    }
}

/// `0`, or digits without a leading zero: one spelling per number, so rendering round-trips.
fn canonical_number(i: &str) -> IResult<&str, &str> {
    verify(digit1, |d: &str| d == "0" || !d.starts_with('0')).parse(i)
}

fn epoch(text: &str) -> Result<i64, String> {
    all_consuming(map_res(canonical_number, str::parse::<i64>))
        .parse(text)
        .map(|(_, v)| v)
        .map_err(|_| {
            format!(
                "timestamp {text:?} is not Unix seconds (digits without sign or leading zero, at most {})",
                i64::MAX
            )
        })
}

fn job_id(i: &str) -> IResult<&str, u64> {
    map_res(canonical_number, str::parse::<u64>).parse(i)
}

fn job_list(text: &str) -> Result<JobList<'_>, String> {
    all_consuming(opt((job_id, many0_count((char('+'), job_id)))))
        .parse(text)
        .map(|_| JobList::new_unchecked(text))
        .map_err(|_| {
            format!("job list {text:?} is not job ids joined by '+' (e.g. 12+13, or empty)")
        })
}

fn hex(n: usize) -> impl FnMut(&str) -> IResult<&str, &str> {
    move |i| take_while_m_n(n, n, |c: char| c.is_ascii_hexdigit()).parse(i)
}

fn uuid(text: &str) -> Result<&str, String> {
    all_consuming(recognize((
        hex(8),
        char('-'),
        hex(4),
        char('-'),
        hex(4),
        char('-'),
        hex(4),
        char('-'),
        hex(12),
    )))
    .parse(text)
    .map(|(_, id)| id)
    .map_err(|_| format!("repair id {text:?} is not a UUID (8-4-4-4-12 hexadecimal digits)"))
}

/// Used by the renderer, which must refuse ids the parser would refuse.
pub(super) fn is_uuid(text: &str) -> bool {
    uuid(text).is_ok()
}

/// Whether `text` is a valid repair id (a UUID).
pub fn is_repair_id(text: &str) -> bool {
    is_uuid(text)
}
