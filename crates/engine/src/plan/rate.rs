//! Rate windows (docs/design.md, rule 13): how many failure domains were newly taken under
//! repair in the last window, read from the targets' own marks.
//!
//! A result mark says when its repair ended and on which target, not when it began nor which
//! failure domain it served (a target moved away from a dead domain lives elsewhere afterwards).
//! So the repair id says it: the engine makes its ids as UUIDv7s, whose first 48 bits are the
//! start in milliseconds (RFC 9562) and whose bits 80 to 111 (random in the RFC) are a hash of
//! the failure domain. Any reader sees a valid UUID (other tools that read the marks take ids
//! as opaque). An id of another form (made by an earlier version, or by a person's or a tool's
//! request) says neither: its repair counts as begun at its end, in a domain of its own, which
//! counts it longer and never merges it with another (fail closed).

use crate::text::{FxMap, rfc3339};

/// A failure domain as ids carry it: FNV-1a over its name, stable across versions and hosts.
pub type DomainHash = u32;

pub fn domain_hash(name: &str) -> DomainHash {
    name.bytes().fold(0x811c_9dc5, |h: u32, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// A repair id that records its start and its failure domain. `random` keeps ids of one
/// pass apart (the planner derives it from the seed, target and purpose).
pub fn make_id(start: i64, domain: &str, random: [u8; 6]) -> String {
    let millis = u64::try_from(start)
        .unwrap_or(0)
        .saturating_mul(1000)
        .min((1 << 48) - 1);
    let mut bytes = [0u8; 10];
    bytes[..4].copy_from_slice(&random[..4]);
    bytes[4..8].copy_from_slice(&domain_hash(domain).to_be_bytes());
    bytes[8..].copy_from_slice(&random[4..]);
    uuid::Builder::from_unix_timestamp_millis(millis, &bytes)
        .into_uuid()
        .to_string()
}

/// The start (seconds) and domain an id made by [`make_id`] records, if it is one.
pub fn read_id(id: &str) -> Option<(i64, DomainHash)> {
    let u = uuid::Uuid::parse_str(id).ok()?;
    if u.get_version_num() != 7 {
        return None;
    }
    let b = u.as_bytes();
    let millis = b[..6].iter().fold(0u64, |m, x| (m << 8) | u64::from(*x));
    let domain = u32::from_be_bytes([b[10], b[11], b[12], b[13]]);
    Some(((millis / 1000) as i64, domain))
}

/// One repair start as the marks tell it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Start {
    pub at: i64,
    pub domain: DomainHash,
}

impl Start {
    /// A repair's start from its id, else from `fallback` (its pending mark's time, or a
    /// result's end) in `own_domain`.
    pub fn of(id: &str, fallback: i64, own_domain: DomainHash) -> Start {
        match read_id(id) {
            // A start after the time the mark gives is no start: the mark's time is safer.
            Some((at, domain)) => Start {
                at: at.min(fallback),
                domain,
            },
            None => Start {
                at: fallback,
                domain: own_domain,
            },
        }
    }
}

/// The failure domains newly taken under repair in one scope's window, each with its latest
/// start in the window: a domain stays counted until its last start left the window.
#[derive(Clone, Debug, Default)]
pub struct Window {
    domains: FxMap<DomainHash, i64>,
}

impl Window {
    /// The starts in the window ending at `now`: a start counts while `now - at < window`.
    pub fn new(starts: impl IntoIterator<Item = Start>, now: i64, window: i64) -> Window {
        let mut w = Window::default();
        for s in starts {
            if s.at <= now && now.saturating_sub(s.at) < window {
                w.add(s);
            }
        }
        w
    }

    fn add(&mut self, s: Start) {
        let at = self.domains.entry(s.domain).or_insert(s.at);
        *at = (*at).max(s.at);
    }

    pub fn len(&self) -> usize {
        self.domains.len()
    }

    pub fn is_empty(&self) -> bool {
        self.domains.is_empty()
    }

    /// The domains counted.
    pub fn domains(&self) -> impl Iterator<Item = DomainHash> + '_ {
        self.domains.keys().copied()
    }

    /// Whether a repair in `domain` may start with at most `max` domains in the window: a
    /// domain already counted adds nothing.
    pub fn admits(&self, domain: DomainHash, max: usize) -> bool {
        self.domains.contains_key(&domain) || self.domains.len() < max
    }

    /// Counts a start granted in this pass.
    pub fn take(&mut self, domain: DomainHash, now: i64) {
        self.add(Start { at: now, domain });
    }

    /// When the window has room for one more domain, given `max`: the first moment enough of
    /// its oldest starts have left it. `None` when it has room now, or never will (`max` 0).
    pub fn room_at(&self, max: usize, window: i64) -> Option<i64> {
        if self.domains.len() < max || max == 0 {
            return None;
        }
        let mut starts: Vec<i64> = self.domains.values().copied().collect();
        starts.sort_unstable();
        // Room once all but max - 1 of them left.
        let leaving = starts[self.domains.len() - max];
        Some(leaving.saturating_add(window))
    }

    /// Its domains, oldest first, named where `names` knows them: `node-a1 at T, …`.
    pub fn describe(&self, names: &FxMap<DomainHash, &str>) -> String {
        let mut list: Vec<(i64, DomainHash)> =
            self.domains.iter().map(|(d, at)| (*at, *d)).collect();
        list.sort_unstable();
        let shown: Vec<String> = list
            .iter()
            .take(10)
            .map(|(at, d)| {
                let name = names
                    .get(d)
                    .copied()
                    .unwrap_or("an earlier repair's domain");
                format!("{name} at {}", rfc3339(*at))
            })
            .collect();
        let more = list.len().saturating_sub(shown.len());
        if more > 0 {
            format!("{} and {more} more", shown.join(", "))
        } else {
            shown.join(", ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_carries_its_start_and_domain_and_reads_as_a_uuid() {
        for (start, domain) in [
            (1_800_000_000, "node-a1.example"),
            (0, ""),
            (1, "x"),
            (253_402_300_799, "rack/9"),
        ] {
            let id = make_id(start, domain, [1, 2, 3, 4, 5, 6]);
            assert!(crate::marks::is_uuid(&id), "{id}");
            assert_eq!(read_id(&id), Some((start, domain_hash(domain))), "{id}");
        }
        // A clock before 1970 or past the 48 bits of milliseconds is clamped, never wrapped.
        assert_eq!(read_id(&make_id(-5, "d", [0; 6])).unwrap().0, 0);
        assert_eq!(
            read_id(&make_id(i64::MAX, "d", [0; 6])).unwrap().0,
            ((1i64 << 48) - 1) / 1000
        );
        // Other ids say nothing: v4, v5, not a UUID at all.
        for other in [
            "3b2c1d0e-1111-4a2b-9c3d-000000000001",
            "0e016142-3525-574a-92c9-768d2e113173",
            "not-an-id",
            "",
        ] {
            assert_eq!(read_id(other), None, "{other}");
        }
        // Ids of one pass differ by their random part.
        assert_ne!(make_id(1, "d", [0; 6]), make_id(1, "d", [0, 0, 0, 0, 0, 1]));
    }

    #[test]
    fn a_start_whose_id_says_nothing_counts_from_the_marks_time_in_a_domain_of_its_own() {
        let id = make_id(1000, "node-a1", [0; 6]);
        assert_eq!(
            Start::of(&id, 5000, 7),
            Start {
                at: 1000,
                domain: domain_hash("node-a1")
            }
        );
        // An id claiming a start after the mark's own time: the mark's time.
        assert_eq!(Start::of(&id, 900, 7).at, 900);
        assert_eq!(
            Start::of("3b2c1d0e-1111-4a2b-9c3d-000000000001", 5000, 7),
            Start {
                at: 5000,
                domain: 7
            }
        );
    }

    #[test]
    fn the_window_counts_domains_not_repairs_and_says_when_room_comes_back() {
        const H: i64 = 3600;
        let now = 100 * H;
        let s = |ago: i64, d: &str| Start {
            at: now - ago,
            domain: domain_hash(d),
        };
        // (case, starts, domains counted, a new one admitted with max 2, room again at)
        type Case = (&'static str, Vec<Start>, usize, bool, Option<i64>);
        let cases: Vec<Case> = vec![
            ("empty", vec![], 0, true, None),
            (
                "one domain, many repairs",
                vec![s(10, "a"), s(20, "a"), s(5, "a")],
                1,
                true,
                None,
            ),
            (
                "two domains: full",
                vec![s(10, "a"), s(30, "b")],
                2,
                false,
                Some(now - 30 + H),
            ),
            // Edges: a start exactly one window ago has left it; one a second later has not.
            (
                "left the window",
                vec![s(H, "a"), s(30, "b")],
                1,
                true,
                None,
            ),
            (
                "still in it",
                vec![s(H - 1, "a"), s(30, "b")],
                2,
                false,
                Some(now + 1),
            ),
            // A start in the future (a clock set back) is not in the window ending now.
            (
                "in the future",
                vec![s(-10, "a"), s(30, "b")],
                1,
                true,
                None,
            ),
            // Three in a window allowing 2: room once the two oldest left.
            (
                "over the limit",
                vec![s(50, "a"), s(40, "b"), s(30, "c")],
                3,
                false,
                Some(now - 40 + H),
            ),
            // A domain repaired twice stays counted until its latest start left the window.
            (
                "a domain again",
                vec![s(50, "a"), s(10, "a"), s(30, "b")],
                2,
                false,
                Some(now - 30 + H),
            ),
        ];
        for (case, starts, len, admits, room) in cases {
            let w = Window::new(starts, now, H);
            assert_eq!(w.len(), len, "{case}");
            assert_eq!(w.admits(domain_hash("new"), 2), admits, "{case}");
            assert_eq!(w.room_at(2, H), room, "{case}");
            // A domain already in the window is admitted, even with a limit of 0.
            let b_counted = !matches!(case, "empty" | "one domain, many repairs");
            assert_eq!(w.admits(domain_hash("b"), 0), b_counted, "{case}");
        }
        // max 0 admits only what is counted already, and never has room.
        let w = Window::new(vec![s(10, "a")], now, H);
        assert_eq!(w.room_at(0, H), None);
        assert!(!w.admits(domain_hash("b"), 0));
        // A start granted in the pass counts at once.
        let mut w = Window::new(vec![s(10, "a")], now, H);
        w.take(domain_hash("b"), now);
        assert!(!w.admits(domain_hash("c"), 2));
        let names: FxMap<DomainHash, &str> = [(domain_hash("a"), "node-a")].into_iter().collect();
        assert_eq!(
            w.describe(&names),
            format!(
                "node-a at {}, an earlier repair's domain at {}",
                rfc3339(now - 10),
                rfc3339(now)
            )
        );
    }
}
