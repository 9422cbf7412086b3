//! `tags parse`: Ganeti's tag language as a tool, whatever the fleet (`tags lint` is every
//! family's, in the face).

use super::{Tag, TagJson, TagJsonBody};
use crate::engine::rfc3339;
use crate::plug::printer::Printer;
use crate::plug::{Exit, Failure};

/// `autorepair tags parse`: each tag described; exit 1 if any autorepair tag is invalid.
pub fn command(out: &mut Printer, tags: &[String]) -> Result<Exit, Failure> {
    let mut invalid = false;
    for t in tags {
        let parsed = TagJson::of(t);
        invalid |= matches!(parsed.body, TagJsonBody::Invalid { .. });
        out.item(|| &parsed, || describe(t))?;
    }
    Ok(if invalid { Exit::Partial } else { Exit::Ok })
}

/// What one tag says, in a line.
pub fn describe(t: &str) -> String {
    match super::parse(t) {
        Ok(Tag::Foreign) => format!("{t}: foreign (not an autorepair tag)"),
        Ok(Tag::Policy(r)) => format!("{t}: allows repairs up to {r}"),
        Ok(Tag::Suspend { until, all }) => format!(
            "{t}: suspended{}, {}",
            if all {
                " with everything under it, over their own policies"
            } else {
                ""
            },
            until.map_or("no end".to_owned(), |u| format!("until {}", rfc3339(u)))
        ),
        Ok(Tag::Pending(p)) => format!(
            "{t}: {} repair {} pending since {}, jobs {:?}{}",
            p.repair,
            p.id,
            rfc3339(p.since),
            p.ops.to_vec::<u64>(),
            if p.ops.is_empty() {
                " (a request, or not yet submitted)"
            } else {
                ""
            }
        ),
        Ok(Tag::Result(r)) => format!(
            "{t}: {} repair {} ended {} at {}, jobs {:?}",
            r.repair,
            r.id,
            r.result,
            rfc3339(r.at),
            r.ops.to_vec::<u64>()
        ),
        Err(e) => format!(
            "{t}: INVALID ({}): {}; until fixed it holds what {} tag governs",
            e.code.as_str(),
            e.message,
            a_kind(e.governs)
        ),
        // The codec never parses to this; `read` stands it in for an error.
        Ok(Tag::Unreadable(g)) => format!("{t}: INVALID: holds what {} tag governs", a_kind(g)),
    }
}

/// "a suspend", "an unknown": the kind of mark with its article.
fn a_kind(governs: crate::engine::marks::Governs) -> String {
    let kind = governs.to_string();
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {kind}")
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
}
