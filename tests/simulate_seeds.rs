//! The chaos simulator on seeds that change: `.ci/run` derives `AUTOREPAIR_SIM_SEED` from the
//! commit, so every submission explores scenarios no earlier run saw, in addition to the fixed
//! seeds of the library's tests. The seed is printed (by `.ci/run`, and in a failure's message)
//! so a failure can be replayed exactly: `AUTOREPAIR_SIM_SEED=SEED cargo test --test
//! simulate_seeds`. The failure also prints the failing scenario's minimal event history.

use autorepair::ganeti::file::parse_fleet;
use autorepair::ganeti::plan;
use autorepair::ganeti::sim::{Faults, SimConfig, explore};

#[test]
fn the_planner_keeps_every_rule_on_this_commits_seeds() {
    let seed: u64 = std::env::var("AUTOREPAIR_SIM_SEED")
        .ok()
        .map(|s| s.parse().expect("AUTOREPAIR_SIM_SEED is a number"))
        .unwrap_or(424_242);
    eprintln!("simulator seeds {seed}..{}", seed + 150);
    let fleet = parse_fleet(include_str!("../fixtures/demo.json")).unwrap();
    let cfg = SimConfig {
        quiet_passes: 80,
        ..SimConfig::new(1_800_000_000)
    };
    let summary = explore(&fleet, 40, seed, 150, &cfg, &Faults::default(), plan);
    if let Some(f) = summary.findings.first() {
        panic!("seeds from {seed}: {f}");
    }
    assert!(summary.stats.jobs_submitted > 500, "{:?}", summary.stats);
}
