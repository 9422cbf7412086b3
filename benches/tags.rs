//! Tag parsing throughput over the tags of a generated fleet, and one planning pass over a
//! fleet where one object carries 100,000 timed suspends.
//!
//! `cargo bench --bench tags`; the `thrpt` line is tags per second (criterion's `elem/s`).

use autorepair::config::Limits;
use autorepair::ganeti::generate::{BASE_EPOCH, Spec, generate};
use autorepair::ganeti::snapshot::Snapshot;
use autorepair::ganeti::tags::{Tag, parse};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

fn all_tags(s: &Snapshot) -> Vec<String> {
    s.all_tags().cloned().collect()
}

/// Parses every tag; returns a checksum so nothing is optimised away.
fn parse_all(tags: &[String]) -> usize {
    let mut sum = 0;
    for t in tags {
        sum += match parse(black_box(t)) {
            Ok(Tag::Foreign) => 1,
            Ok(Tag::Policy(_)) => 2,
            Ok(Tag::Suspend { .. }) => 3,
            Ok(Tag::Pending(p)) => 4 + p.id.len(),
            Ok(Tag::Result(r)) => 5 + r.id.len(),
            Err(e) => 6 + e.message.len(),
            Ok(Tag::Unreadable(_)) => 7,
        };
    }
    sum
}

fn bench(c: &mut Criterion) {
    let fleet = all_tags(&generate(&Spec::new(10_000, 42)));
    let own: Vec<String> = fleet
        .iter()
        .filter(|t| t.starts_with(autorepair::ganeti::tags::PREFIX))
        .cloned()
        .collect();
    let messy = all_tags(&generate(&Spec {
        contradictions: true,
        ..Spec::new(10_000, 42)
    }));
    eprintln!(
        "tags: fleet mix {} tags ({} autorepair), messy mix {} tags",
        fleet.len(),
        own.len(),
        messy.len()
    );
    let mut g = c.benchmark_group("tags");
    g.warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30);
    for (name, tags) in [
        ("parse/fleet-10k", &fleet),
        ("parse/autorepair-only-10k", &own),
        ("parse/with-contradictions-10k", &messy),
    ] {
        g.throughput(Throughput::Elements(tags.len() as u64));
        g.bench_function(name, |b| b.iter(|| parse_all(tags)));
    }
    g.finish();

    // One object, 100,000 timed suspends, half of them over: each over is removed once, the
    // latest of the others holds. A scan of the marks already written per mark made this
    // quadratic (`status` took 34 s).
    let n = 100_000;
    let mut snap = generate(&Spec::new(1_000, 42));
    snap.instances[0].tags.extend((1..=n).map(|i: i64| {
        let until = if i % 2 == 0 {
            BASE_EPOCH + i
        } else {
            BASE_EPOCH - i
        };
        format!("{}suspend:{until}", autorepair::ganeti::tags::PREFIX)
    }));
    let limits = Limits::default();
    let mut g = c.benchmark_group("tags");
    g.warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .sample_size(10)
        .throughput(Throughput::Elements(n as u64));
    g.bench_function("plan/one-object-100k-timed-suspends", |b| {
        b.iter(|| autorepair::ganeti::plan(black_box(&snap), BASE_EPOCH, &limits, 1))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
