//! `autorepair sabakan update` over 10,000 machines (500 racks of 20; roles cs and ss at 3:1;
//! 5 control planes and 8,000 workers).
//!
//! `cargo bench --bench sabakan`. Two measurements: the pure update (maintenance action, fill,
//! rendering every node) on a parsed configuration, and the whole command's work without the
//! file reads: parsing the current cluster.yml, the update, and writing the new YAML. The
//! machines changed since the configuration was made: a control plane and 40 workers failed, so
//! the update replaces the control plane (and the next one would add workers).

use autorepair::sabakan::template::to_yaml;
use autorepair::sabakan::{
    Action, Constraints, Current, Inputs, KubeNodes, Machine, Stamp, State, Template, generate,
    update,
};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

const TEMPLATE: &str = "name: bench
nodes:
- user: cybozu
  control_plane: true
  labels:
    cke.cybozu.com/role: cs
- user: cybozu
  labels:
    cke.cybozu.com/role: cs
    cke.cybozu.com/weight: \"3\"
- user: cybozu
  labels:
    cke.cybozu.com/role: ss
  taints:
  - key: cke.cybozu.com/role
    value: storage
    effect: NoExecute
service_subnet: 10.68.0.0/16
options:
  kubelet:
    cri_endpoint: unix:///run/containerd/containerd.sock
";

fn machines(racks: i64) -> Vec<Machine> {
    let mut ms = Vec::new();
    for rack in 0..racks {
        for i in 1..=20 {
            let year = 2024 + (rack + i) % 5;
            ms.push(Machine {
                serial: format!("SN{rack:04}{i:02}"),
                labels: vec![("product".into(), "R640".into())],
                rack,
                index_in_rack: i,
                role: if i <= 15 { "cs" } else { "ss" }.into(),
                ipv4: vec![format!("10.{}.{}.{i}", rack / 256, rack % 256)],
                register_date: Stamp::parse(&format!("{}-04-01T00:00:00Z", year - 5))
                    .expect("a valid date"),
                retire_date: Stamp::parse(&format!("{year}-04-01T00:00:00Z"))
                    .expect("a valid date"),
                bmc_type: "IPMI-2.0".into(),
                state: State::Healthy,
                duration: 86_400.0,
            });
        }
    }
    ms
}

fn bench(c: &mut Criterion) {
    let template = Template::parse(TEMPLATE).expect("valid template");
    let constraints = Constraints {
        control_plane_count: 5,
        minimum_workers: 8_000,
        maximum_workers: 0,
    };
    let nodes = KubeNodes::default();
    let now = "2026-06-01T00:00:00Z".parse().expect("a valid time");
    let mut ms = machines(500);
    let n = ms.len();
    let generated = generate(&Inputs {
        template: &template,
        constraints,
        machines: &ms,
        nodes: &nodes,
        now,
        explain: false,
    })
    .expect("enough machines");
    let first = generated.nodes.expect("nodes");
    let current_text = to_yaml(&template.with_nodes(&first));
    let current = Current::parse(&current_text).expect("valid");
    // A control plane and 40 workers fail.
    let cp = first[0].address.clone();
    let failed: Vec<String> = std::iter::once(cp)
        .chain(first[5..].iter().step_by(200).map(|n| n.address.clone()))
        .collect();
    for m in ms.iter_mut() {
        if failed.iter().any(|a| m.ipv4[0] == *a) {
            m.state = State::Unhealthy;
        }
    }
    let inputs = Inputs {
        template: &template,
        constraints,
        machines: &ms,
        nodes: &nodes,
        now,
        explain: false,
    };
    let o = update(&inputs, &current).expect("updates");
    assert_eq!(o.action, Action::ReplaceControlPlane);

    let mut g = c.benchmark_group("sabakan-update");
    g.warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .sample_size(20)
        .throughput(Throughput::Elements(n as u64));
    g.bench_with_input(BenchmarkId::new("pure", n), &current, |b, cur| {
        b.iter(|| update(black_box(&inputs), black_box(cur)).expect("updates"))
    });
    g.bench_with_input(
        BenchmarkId::new("yaml-in-and-out", n),
        &current_text,
        |b, text| {
            b.iter(|| {
                let cur = Current::parse(black_box(text)).expect("valid");
                let o = update(&inputs, &cur).expect("updates");
                to_yaml(&template.with_nodes(o.nodes.as_deref().unwrap_or(&cur.nodes)))
            })
        },
    );
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
