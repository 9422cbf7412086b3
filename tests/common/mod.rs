//! What several test files share.

use proptest::test_runner::{Config, RngSeed};

/// The property tests' runner settings: `cases` unless `PROPTEST_CASES` says otherwise, and a
/// fixed seed (`default_seed`) so CI is reproducible, unless `PROPTEST_RNG_SEED` gives another
/// number, or `random` to explore new cases locally.
pub fn proptest_config(cases: u32, default_seed: u64) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(cases);
    let rng_seed = match std::env::var("PROPTEST_RNG_SEED").as_deref() {
        Ok("random") => RngSeed::Random,
        Ok(n) => n.parse().unwrap_or(RngSeed::Fixed(default_seed)),
        Err(_) => RngSeed::Fixed(default_seed),
    };
    Config {
        cases,
        failure_persistence: None,
        rng_seed,
        ..Config::default()
    }
}
