//! One planning pass of the machines family over 10,000 sabakan machines (500 racks of 20, a
//! boot server each), read from the machines file: 1 % of them non-healthy, 30 repair entries
//! under way at every stage, a cluster policy. `cargo bench --bench machines`.
//!
//! Three measurements: the plan alone (what must stay under 100 ms), the plan with the limits
//! over time on (escalating retries, both rate windows and a storm cool-down: within 10% of the plan alone), and the file
//! backend's snapshot (parsing the JSON, labels into marks and entries; no health checks) plus
//! the plan.

use autorepair::engine::{Backend, Limits};
use autorepair::machines::config::{Constraints, Repair};
use autorepair::machines::document::Document;
use autorepair::machines::{Settings, plan};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::Duration;

const NOW: i64 = 1_800_000_000;
const CONFIG: &str = "repair_procedures:
  - machine_types: [qemu]
    repair_operations:
      - operation: unhealthy
        repair_steps:
          - {repair_command: [reboot], need_drain: true, watch_seconds: 600}
          - {repair_command: [power-cycle], watch_seconds: 600}
        health_check_command: [check]
      - operation: unreachable
        repair_steps:
          - {repair_command: [power-cycle], watch_seconds: 600}
        health_check_command: [check]
max_concurrent_repairs: 10
";

fn fleet() -> Value {
    let mut machines = Vec::new();
    for rack in 0..500 {
        for i in 1..=20 {
            let n = rack * 20 + i;
            let boot = i == 1;
            let mut labels = json!({"machine-type": "r640"});
            if rack == 0 && boot {
                labels["autorepair.cluster.policy"] = json!("step-8");
            }
            let state = if !boot && n % 97 == 0 {
                "unhealthy"
            } else if !boot && n % 331 == 0 {
                "unreachable"
            } else {
                "healthy"
            };
            if !boot && n % 331 == 5 {
                let status = ["queued", "processing", "succeeded", "failed"][n % 4];
                labels["autorepair.entry"] = json!(format!("{n}.unhealthy.qemu"));
                labels["autorepair.progress"] =
                    json!(format!("{status}.0.watching.{}.0.0", NOW - 100));
            }
            machines.push(json!({
                "spec": {"serial": format!("s{n:05}"), "labels": labels, "rack": rack,
                  "index-in-rack": i, "role": if boot { "boot" } else { "cs" },
                  "ipv4": [format!("10.{}.{}.{}", rack / 250, rack % 250, i)],
                  "register-date": "2025-01-01T00:00:00Z", "retire-date": "2030-01-01T00:00:00Z",
                  "bmc": {"type": "qemu"}},
                "status": {"state": state, "timestamp": "2026-01-01T00:00:00Z"}
            }));
        }
    }
    Value::Array(machines)
}

fn bench(c: &mut Criterion) {
    let settings = Settings {
        repair: Repair::parse(CONFIG, "bench").expect("the bench's repair configuration parses"),
        constraints: Constraints {
            maximum_repair_queue_entries: 1000,
            wait_seconds_to_repair_rebooting: 0,
            ..Constraints::default()
        },
        query: Settings::default_query(),
    };
    let limits = Limits {
        max_down_nodes: 1000,
        max_down_nodes_per_group: 20,
        max_domains_under_repair: 100,
        ..Limits::default()
    };
    let mut file =
        Document::in_memory(fleet(), settings.repair.clone(), None).expect("an in-memory fleet");
    file.check_health = false;
    let snap = file.snapshot().expect("an in-memory snapshot");
    assert_eq!(snap.machines.len(), 10_000);
    let p = plan(&snap, &settings, NOW, &limits, 1);
    assert!(p.targets.iter().any(|t| !t.actions.is_empty()));
    let mut g = c.benchmark_group("machines");
    g.sample_size(20).measurement_time(Duration::from_secs(10));
    g.bench_function("plan_10000", |b| {
        b.iter(|| plan(black_box(&snap), &settings, NOW, &limits, 1))
    });
    let over_time = Limits {
        retries: 3,
        max_repair_rate: Some(autorepair::engine::limits::Rate::parse("20/1h").expect("a rate")),
        max_repair_rate_per_group: Some(
            autorepair::engine::limits::Rate::parse("2/1h").expect("a rate"),
        ),
        escalate: true,
        storm_cooldown: Some(Duration::from_secs(1800)),
        ..limits.clone()
    };
    g.bench_function("plan_over_time_10000", |b| {
        b.iter(|| plan(black_box(&snap), &settings, NOW, &over_time, 1))
    });
    g.bench_function("snapshot_and_plan_10000", |b| {
        b.iter(|| {
            let snap = file.snapshot().expect("an in-memory snapshot");
            plan(black_box(&snap), &settings, NOW, &limits, 1)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
