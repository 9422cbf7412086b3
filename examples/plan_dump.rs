//! Dumps the plans of several passes over generated fleets and the demo fleet, as JSON lines:
//! the restructuring proof compares this output before and after (docs/architecture.md).
//! `cargo run --release --example plan_dump > plans.jsonl`

use autorepair::config::Limits;
use autorepair::engine::backend::Backend;
use autorepair::ganeti::file::{FleetFile, parse_fleet};
use autorepair::ganeti::generate::{BASE_EPOCH, Spec, generate};

fn passes(name: &str, fleet: autorepair::ganeti::snapshot::Snapshot, limits: &Limits, start: i64) {
    let mut backend = FleetFile::in_memory(fleet);
    for pass in 0..4 {
        let now = start + pass * 600;
        backend.advance_jobs(now);
        let snap = backend.snapshot().expect("in-memory snapshot");
        let plan = autorepair::ganeti::plan(&snap, now, limits, 7 + pass as u64);
        println!(
            "{}",
            serde_json::json!({"fleet": name, "pass": pass, "plan": plan})
        );
        autorepair::engine::exec::execute(&plan, &mut backend);
    }
}

fn main() {
    let roomy = Limits {
        max_down_nodes_per_group: 8,
        max_down_nodes: 40,
        max_domains_under_repair: 3,
        max_writes_per_pass: 300,
        ..Limits::default()
    };
    let demo = parse_fleet(include_str!("../fixtures/demo.json")).expect("demo fleet parses");
    for (label, limits) in [("default", Limits::default()), ("roomy", roomy)] {
        passes(&format!("demo/{label}"), demo.clone(), &limits, BASE_EPOCH);
        for seed in 1..=12u64 {
            let mut spec = Spec::new(300 + 150 * seed as usize, seed);
            spec.contradictions = seed % 3 == 0;
            spec.broken_node_share = 0.02 + 0.01 * (seed % 4) as f64;
            passes(
                &format!("gen{seed}/{label}"),
                generate(&spec),
                &limits,
                BASE_EPOCH,
            );
        }
    }
}
