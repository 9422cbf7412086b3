//! Arbitrary bytes through the tag parser: it must never panic, every valid autorepair tag must
//! be one Ganeti accepts (at most 128 bytes of `[A-Za-z0-9_.+*/:@-]`), and rendering a parsed
//! tag must give back its one canonical spelling, which parses to the same value.
#![no_main]

use autorepair::ganeti::Ganeti;
use autorepair::ganeti::tags::{self, MAX_TAG_LEN, PREFIX, Tag};
use autorepair::plug::marks::{MarkJson, describe};
use libfuzzer_sys::fuzz_target;

fn ganeti_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_.+*/:@-".contains(&b)
}

fn check(text: &str) {
    // The JSON view walks job lists with `expect`, and the line `tags parse` shows renders the
    // tag's time: neither may panic.
    let _ = MarkJson::<Ganeti>::line(text);
    let _ = describe::<Ganeti>(text);
    match tags::parse(text) {
        Ok(Tag::Foreign) => assert!(
            !text.starts_with(PREFIX),
            "a tag with the prefix parsed as foreign: {text:?}"
        ),
        Ok(tag) => {
            assert!(
                text.starts_with(PREFIX),
                "foreign text parsed as ours: {text:?}"
            );
            assert!(
                text.len() <= MAX_TAG_LEN,
                "valid tag over {MAX_TAG_LEN} bytes: {text:?}"
            );
            assert!(
                text.bytes().all(ganeti_char),
                "valid tag with a character Ganeti refuses: {text:?}"
            );
            let rendered = match tags::render(&tag) {
                Some(Ok(r)) => r,
                other => panic!("valid tag {text:?} ({tag:?}) does not render: {other:?}"),
            };
            let again = tags::parse(&rendered)
                .unwrap_or_else(|e| panic!("rendering of {text:?} does not parse: {e}"));
            assert_eq!(again, tag, "{text:?} rendered as {rendered:?}");
            // One spelling per value, except the two spellings of a permanent suspend.
            let suspend_colon = format!("{PREFIX}suspend:");
            assert!(
                rendered == text || text == suspend_colon,
                "{text:?} renders differently: {rendered:?}"
            );
        }
        Err(e) => {
            assert!(text.starts_with(PREFIX), "foreign tag rejected: {text:?}");
            assert_eq!(e.mark, text);
            assert!(!e.message.is_empty());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    match std::str::from_utf8(data) {
        Ok(text) => check(text),
        Err(_) => check(&String::from_utf8_lossy(data)),
    }
    // Most mutations of a seed keep the prefix; also try the input as the part after it.
    if !data.starts_with(PREFIX.as_bytes()) {
        let text = format!("{PREFIX}{}", String::from_utf8_lossy(data));
        check(&text);
    }
});
