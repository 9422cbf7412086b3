use super::parse::{is_ganeti_tag_text, is_uuid};
use super::{GanetiLevel, MAX_TAG_LEN, PREFIX, RenderError, RepairResult, Tags};
use crate::engine::marks::Codec;
use std::fmt::Write;

pub fn render_policy(repair: GanetiLevel) -> String {
    format!("{PREFIX}{repair}")
}

pub fn render_suspend(until: Option<i64>) -> Result<String, RenderError> {
    suspend_of_kind("suspend", until)
}

/// `suspend-all[:<epoch>]`: a suspend of every instance under the object, whatever policy
/// nearer objects carry (`autorepair suspend --all`).
pub fn render_suspend_all(until: Option<i64>) -> Result<String, RenderError> {
    suspend_of_kind("suspend-all", until)
}

fn suspend_of_kind(kind: &str, until: Option<i64>) -> Result<String, RenderError> {
    match until {
        None => Ok(format!("{PREFIX}{kind}")),
        Some(t) => checked(format!("{PREFIX}{kind}:{}", non_negative(t)?)),
    }
}

pub fn render_pending(
    repair: GanetiLevel,
    id: &str,
    since: i64,
    jobs: &[u64],
) -> Result<String, RenderError> {
    valid_id(id)?;
    let mut tag = format!("{PREFIX}pending:{repair}:{id}:{}:", non_negative(since)?);
    push_jobs(&mut tag, jobs);
    checked(tag)
}

pub fn render_result(
    repair: GanetiLevel,
    id: &str,
    at: i64,
    result: RepairResult,
    jobs: &[u64],
) -> Result<String, RenderError> {
    valid_id(id)?;
    let mut tag = format!(
        "{PREFIX}result:{repair}:{id}:{}:{result}:",
        non_negative(at)?
    );
    push_jobs(&mut tag, jobs);
    checked(tag)
}

fn push_jobs(tag: &mut String, jobs: &[u64]) {
    for (i, job) in jobs.iter().enumerate() {
        if i > 0 {
            tag.push('+');
        }
        write!(tag, "{job}").expect("writing to a String cannot fail");
    }
}

fn valid_id(id: &str) -> Result<(), RenderError> {
    if is_uuid(id) {
        Ok(())
    } else {
        Err(RenderError::BadId { id: id.to_owned() })
    }
}

fn non_negative(value: i64) -> Result<i64, RenderError> {
    if value < 0 {
        Err(RenderError::NegativeEpoch { value })
    } else {
        Ok(value)
    }
}

fn checked(tag: String) -> Result<String, RenderError> {
    debug_assert!(is_ganeti_tag_text(&tag), "rendered parts are validated");
    if tag.len() > MAX_TAG_LEN {
        let len = tag.len();
        return Err(RenderError::TooLong {
            noun: Tags::NOUN,
            store: "Ganeti",
            mark: tag,
            len,
            limit: MAX_TAG_LEN,
        });
    }
    Ok(tag)
}
