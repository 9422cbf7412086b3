//! One planning pass over a generated fleet, for instruction counts that other load does not
//! disturb (docs/benchmarks.md):
//! `valgrind --tool=callgrind --toggle-collect='autorepair::ganeti::plan' target/release/examples/plan_once 100000`

use autorepair::config::Limits;
use autorepair::ganeti::generate::{BASE_EPOCH, Spec, generate};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let snap = generate(&Spec::new(n, 42));
    let p = autorepair::ganeti::plan(&snap, BASE_EPOCH, &Limits::default(), 1);
    // Dropping the plan is left out of the count, as in the earlier measurements.
    std::mem::forget(std::hint::black_box(p));
}
