//! One full planning pass (parse + policy + health + plan) over generated fleets.
//!
//! `cargo bench --bench plan`: 1k, 10k and 100k instances; set `AUTOREPAIR_BENCH_1M=1` to add
//! 1M (generating it takes a while). `plan-over-time` is the same pass with the limits over
//! time on (retries that escalate, both rate windows and a storm cool-down), at 10k and 100k: it must stay within 10% of `plan`. Snapshots are generated outside the timed loop; the time
//! includes dropping the plan, as a real pass does. The `thrpt` line is instances per second.

use autorepair::config::Limits;
use autorepair::ganeti::generate::{BASE_EPOCH, Spec, generate};
use autorepair::ganeti::plan;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

fn sizes() -> Vec<usize> {
    let mut sizes = vec![1_000, 10_000, 100_000];
    if std::env::var("AUTOREPAIR_BENCH_1M").is_ok_and(|v| v == "1") {
        sizes.push(1_000_000);
    }
    sizes
}

fn bench(c: &mut Criterion) {
    let limits = Limits::default();
    let mut g = c.benchmark_group("plan");
    g.warm_up_time(Duration::from_secs(1)).sample_size(10);
    for n in sizes() {
        let snap = generate(&Spec::new(n, 42));
        // Enough time for 10 samples even at 1M, little for the small sizes.
        g.measurement_time(Duration::from_secs(if n >= 1_000_000 { 20 } else { 4 }));
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("pass", n), &snap, |b, snap| {
            b.iter(|| plan(black_box(snap), BASE_EPOCH, &limits, 1))
        });
    }
    g.finish();

    // Rule 13's limits on: every target's results are read for its streak and its starts.
    let over_time = Limits {
        retries: 3,
        max_repair_rate: Some(autorepair::engine::limits::Rate::parse("20/1h").expect("a rate")),
        max_repair_rate_per_group: Some(
            autorepair::engine::limits::Rate::parse("5/1h").expect("a rate"),
        ),
        escalate: true,
        storm_cooldown: Some(Duration::from_secs(1800)),
        ..Limits::default()
    };
    let mut g = c.benchmark_group("plan-over-time");
    g.warm_up_time(Duration::from_secs(1)).sample_size(10);
    for n in [10_000, 100_000] {
        let snap = generate(&Spec::new(n, 42));
        g.measurement_time(Duration::from_secs(4));
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("pass", n), &snap, |b, snap| {
            b.iter(|| plan(black_box(snap), BASE_EPOCH, &over_time, 1))
        });
    }
    g.finish();

    // The other half of a `run` process: reading the fleet file (100k instances).
    let n = 100_000;
    let text = serde_json::to_string_pretty(&generate(&Spec::new(n, 42))).expect("serialises");
    let mut g = c.benchmark_group("fleet-file");
    g.warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .sample_size(10)
        .throughput(Throughput::Elements(n as u64));
    g.bench_with_input(BenchmarkId::new("parse", n), &text, |b, text| {
        b.iter(|| autorepair::ganeti::file::parse_fleet(black_box(text)).expect("valid"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
