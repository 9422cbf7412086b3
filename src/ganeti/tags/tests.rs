use super::*;
use serde_json::Value;

/// A tag as `tags parse --json` prints it.
type TagJson<'a> = crate::plug::marks::MarkJson<'a, crate::ganeti::Ganeti>;

const VECTORS: &str = include_str!("../../../tag-grammar/vectors.jsonl");

/// The JSON form of a parse without the free-text error: its `code` and what it `holds` are
/// what the vectors pin down.
fn parsed_as_vector_json(tag: &str) -> Value {
    let mut value = TagJson::value(tag).unwrap();
    let obj = value.as_object_mut().unwrap();
    obj.remove("tag");
    obj.remove("error");
    value
}

#[test]
fn every_vector_parses_as_expected_and_valid_ones_round_trip() {
    let mut checked = 0;
    for (n, line) in VECTORS.lines().enumerate() {
        let vector: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("vectors.jsonl line {}: {e}", n + 1));
        let tag = vector["tag"].as_str().expect("vector has a tag");
        assert_eq!(
            parsed_as_vector_json(tag),
            vector["expect"],
            "vectors.jsonl line {}: {tag:?} ({})",
            n + 1,
            vector["note"]
        );
        match parse(tag) {
            Ok(Tag::Foreign) | Err(_) => {}
            Ok(valid) => {
                let rendered = render(&valid).unwrap().unwrap();
                assert_eq!(parse(&rendered).unwrap(), valid, "line {}", n + 1);
                // `suspend:` is the one second spelling of a value; it renders as `suspend`.
                if tag != format!("{PREFIX}suspend:") {
                    assert_eq!(
                        rendered,
                        tag,
                        "line {}: render(parse(tag)) must give the tag back",
                        n + 1
                    );
                }
            }
        }
        checked += 1;
    }
    assert!(
        checked >= 50,
        "only {checked} vectors: the file looks truncated"
    );
}

#[test]
fn the_vectors_cover_every_kind_and_error_code() {
    let mut seen = std::collections::BTreeSet::new();
    for line in VECTORS.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let e = &v["expect"];
        seen.insert(match e["code"].as_str() {
            Some(code) => format!("invalid/{code}"),
            None => e["kind"].as_str().unwrap().to_owned(),
        });
    }
    for want in [
        "policy",
        "suspend",
        "pending",
        "result",
        "foreign",
        "invalid/too-long",
        "invalid/bad-char",
        "invalid/unknown-kind",
        "invalid/field-count",
        "invalid/unknown-repair",
        "invalid/bad-id",
        "invalid/bad-epoch",
        "invalid/unknown-result",
        "invalid/bad-job",
    ] {
        assert!(seen.contains(want), "no vector for {want}");
    }
}

const ID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

#[test]
fn renderer_refuses_what_ganeti_would_refuse() {
    // Twelve 20-digit job ids cannot fit in 128 characters.
    let many = [u64::MAX; 12];
    assert!(matches!(
        render_pending(GanetiLevel::FixStorage, ID, 1, &many),
        Err(RenderError::TooLong { len, .. }) if len > MAX_TAG_LEN
    ));
    assert!(matches!(
        render_result(
            GanetiLevel::Failover,
            "not a uuid",
            1,
            RepairResult::Success,
            &[]
        ),
        Err(RenderError::BadId { .. })
    ));
    assert!(matches!(
        render_suspend(Some(-5)),
        Err(RenderError::NegativeEpoch { value: -5 })
    ));
}

#[test]
fn the_longest_repair_record_still_fits_two_maximal_job_ids() {
    // A repair records at most one job per step and has at most two steps; with 11-digit job
    // ids and 10-digit timestamps (good until the year 2286) that must fit, or a long repair
    // could not be recorded at all.
    let worst = render_result(
        GanetiLevel::FixStorage,
        ID,
        9_999_999_999,
        RepairResult::Failure,
        &[99_999_999_999, 99_999_999_999],
    )
    .unwrap();
    assert!(worst.len() <= MAX_TAG_LEN, "{} chars", worst.len());
    let pending = render_pending(
        GanetiLevel::FixStorage,
        ID,
        9_999_999_999,
        &[99_999_999_999; 2],
    )
    .unwrap();
    assert!(pending.len() <= MAX_TAG_LEN);
}

#[test]
fn job_lists_iterate_in_order() {
    let tag = format!("{PREFIX}pending:migrate:{ID}:10:3+1+2");
    let Tag::Pending(p) = parse(&tag).unwrap() else {
        panic!("not pending")
    };
    assert_eq!(p.ops.to_vec::<u64>(), vec![3, 1, 2]);
    assert!(!p.ops.is_empty());
}

#[test]
fn tag_json_has_the_documented_keys() {
    let tag = format!("{PREFIX}result:reinstall:{ID}:17:enoperm:");
    let json = TagJson::line(&tag).unwrap();
    assert_eq!(
        json,
        format!(
            r#"{{"tag":"{tag}","kind":"result","repair":"reinstall","id":"{ID}","at":17,"result":"enoperm","jobs":[]}}"#
        )
    );
    let json = TagJson::value("owner:bob").unwrap();
    assert_eq!(
        json,
        serde_json::json!({"tag":"owner:bob","kind":"foreign"})
    );
    let json = TagJson::value(&format!("{PREFIX}suspend")).unwrap();
    assert_eq!(json["until"], Value::Null);
}
