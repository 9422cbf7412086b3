//! The world's documents: rendering a snapshot as sabakan and `kubectl` list it, and generating
//! synthetic fleets.

use super::*;
use crate::engine::sim::{self, DrawnPolicy};

/// The machines as sabakan's REST API lists them, and the Nodes as `kubectl get nodes -o json`
/// does, from a snapshot read at `at`: what the backend reads of them at `at` comes back the
/// same.
pub fn render(snap: &Snapshot, at: i64) -> (Value, Value) {
    let machines: Vec<Value> = snap
        .machines
        .iter()
        .map(|m| {
            let i = &m.info;
            let labels: serde_json::Map<String, Value> = i
                .labels
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            json!({
                "spec": {
                    "serial": i.serial, "labels": labels, "rack": i.rack,
                    "index-in-rack": i.index_in_rack, "role": i.role, "ipv4": i.ipv4,
                    "register-date": i.register_date.rfc3339(),
                    "retire-date": i.retire_date.rfc3339(),
                    "bmc": {"type": i.bmc_type},
                },
                "status": {
                    "state": i.state.as_str().to_ascii_lowercase(),
                    "timestamp": rfc3339(at - i.duration as i64),
                },
            })
        })
        .collect();
    let nodes: Vec<Value> = snap
        .nodes
        .iter()
        .map(|n| {
            let mut item = json!({
                "metadata": {"name": n.name, "labels": {}, "annotations": {}},
                "spec": {},
                "status": {"addresses": n.internal_ips.iter()
                    .map(|ip| json!({"type": "InternalIP", "address": ip}))
                    .collect::<Vec<_>>()},
            });
            if n.control_plane {
                item["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] = json!("");
            }
            if n.unschedulable {
                item["spec"]["unschedulable"] = json!(true);
            }
            if n.cordoned_by_us {
                item["metadata"]["annotations"][CORDON_ANNOTATION] = json!("true");
            }
            item
        })
        .collect();
    (Value::Array(machines), json!({"items": nodes}))
}

/// The state sabakan reports for a machine with this trouble.
pub(super) fn state_of(trouble: Option<Option<usize>>, unreachable: bool) -> &'static str {
    match (trouble, unreachable) {
        (None, _) => "healthy",
        (Some(_), true) => "unreachable",
        (Some(_), false) => "unhealthy",
    }
}

/// The operations of the states the world breaks machines into (an entry's operation is the
/// state in lower case).
pub(super) const OPERATIONS: [&str; 2] = ["unhealthy", "unreachable"];

/// Whether faults may hit the machine: not a boot server (they hold the scopes' labels, and
/// the trigger never repairs them), and with an address to run commands on.
pub(super) fn breakable(m: &Machine) -> bool {
    m.info.role != "boot" && m.address().is_some()
}

/// What the world breaks and these settings cannot repair, in words: per machine type of the
/// fleet, the operations without a procedure. Such machines stay broken in every scenario,
/// as they would in the fleet.
pub fn unrepairable(fleet: &Snapshot, settings: &Settings) -> Vec<String> {
    let mut by_type: BTreeMap<&str, usize> = BTreeMap::new();
    for m in fleet.machines.iter().filter(|m| breakable(m)) {
        *by_type.entry(m.info.bmc_type.as_str()).or_default() += 1;
    }
    by_type
        .into_iter()
        .filter_map(|(machine_type, n)| {
            let missing: Vec<&str> = OPERATIONS
                .into_iter()
                .filter(|o| settings.repair.operation(machine_type, o).is_none())
                .collect();
            (!missing.is_empty()).then(|| {
                format!(
                    "machine type {machine_type:?} ({n} machine{}) has no procedure for {} in the repair configuration: the world breaks such machines too, and they are never repaired",
                    if n == 1 { "" } else { "s" },
                    missing.join(" or ")
                )
            })
        })
        .collect()
}

/// The entry's records are the family's own, judged by its rules: to the engine's oracle they
/// would be another tool's marks that the watcher changes. The planner reads them from
/// [`Machine::entry`], never from the marks.
pub(super) fn without_records(snap: &mut Snapshot) {
    for m in &mut snap.machines {
        m.marks.retain(|t| {
            let (name, _) = labels::split(t);
            name != labels::ENTRY && name != labels::PROGRESS
        });
    }
}

pub(super) fn label_pairs(pairs: &[(String, String)]) -> serde_json::Map<String, Value> {
    pairs.iter().map(|(k, v)| (k.clone(), json!(v))).collect()
}

/// About `targets` machines over racks of eight, each rack with a boot server that holds its
/// labels (the first also the cluster's). Most machines are Nodes of the cluster, three of
/// them control planes; machine types with procedures of one to three steps, and a few of a
/// type without one. Policies and suspends (permanent and timed) are spread over the cluster,
/// racks and machines, with other tools' labels and malformed autorepair ones; some machines
/// start broken, some with a finished entry (the limiters hold them), one parked by a failure.
pub fn generate(targets: usize, seed: u64) -> Snapshot {
    let mut rng = Rng::seed_from_u64(seed);
    let racks = targets.div_ceil(8).max(2);
    let types = [
        "IPMI-2.0", "IPMI-2.0", "iDRAC-9", "iDRAC-9", "IPMI-2.0", "iDRAC-9", "IPMI-2.0", "qemu",
    ];
    let levels = [
        MachinesLevel::CHECK,
        MachinesLevel::step(1),
        MachinesLevel::step(2),
        MachinesLevel::ALL_STEPS,
    ];
    let policy = |rng: &mut Rng, suspend: f64, level: f64| -> Vec<(String, String)> {
        let mut out = Vec::new();
        match sim::draw_policy(rng, suspend, level, &levels) {
            Some(DrawnPolicy::Suspend(until)) => out.push((
                labels::SUSPEND.to_owned(),
                until.map_or_else(String::new, |t| t.to_string()),
            )),
            Some(DrawnPolicy::Allow(l)) => out.push((labels::POLICY.to_owned(), l.to_string())),
            None => {}
        }
        out
    };
    let mut machines = Vec::new();
    let mut nodes = Vec::new();
    let mut cps = 0;
    let mut n = 0;
    let mut broken_at_start = 0;
    for r in 0..racks {
        // The rack's policy and suspends, stored as a rack's are.
        let mut boot_labels: Vec<(String, String)> = policy(&mut rng, 0.08, 0.25)
            .into_iter()
            .map(|(n, v)| (n.replacen(labels::PREFIX, RACK_PREFIX, 1), v))
            .collect();
        if r == 0 {
            let l = if rng.random_bool(0.8) {
                "step-8"
            } else {
                "step-2"
            };
            boot_labels.push((format!("{CLUSTER_PREFIX}policy"), l.to_owned()));
        }
        machines.push(json!({
            "spec": {"serial": format!("boot-{r}"), "labels": label_pairs(&boot_labels), "rack": r,
                "index-in-rack": 1, "role": "boot", "ipv4": [format!("10.69.{r}.3")],
                "bmc": {"type": "IPMI-2.0"}},
            "status": {"state": "healthy", "timestamp": rfc3339(START - 86400)},
        }));
        let in_rack = (targets - n).min(8);
        for k in 0..in_rack {
            let serial = format!("r{r}-m{k}");
            let address = format!("10.69.{r}.{}", 10 + k);
            let mut pairs = policy(&mut rng, 0.05, 0.1);
            let roll: f64 = rng.random();
            if roll < 0.04 {
                pairs.push(("autorepair.policy".into(), "reboot".into()));
            } else if roll < 0.1 {
                pairs.push(("team".into(), format!("t{}", rng.random_range(1..4))));
            }
            let mut state = "healthy";
            let roll: f64 = rng.random();
            // Past the fleet's mass-failure limit every pass would only be held: keep the start
            // well under it, so the scenarios explore repairs and let chaos trip the limit.
            let room = broken_at_start < config().limits.max_down_nodes / 2;
            if roll < 0.1 && room {
                broken_at_start += 1;
                state = if rng.random_bool(0.5) {
                    "unreachable"
                } else {
                    "unhealthy"
                };
            } else if roll < 0.16 {
                // A finished entry of an earlier repair, with its result.
                let id = sim::draw_uuid(&mut rng);
                let index = 900 + n as u64;
                let operation = "unhealthy";
                pairs.push((
                    labels::ENTRY.into(),
                    Entry::value(index, operation, types[k % types.len()]).unwrap_or_default(),
                ));
                let p = crate::machines::entry::Progress::queued(START - 7200).to(
                    Status::Succeeded,
                    0,
                    StepStatus::Watching,
                    START - 3600,
                );
                pairs.push((labels::PROGRESS.into(), p.value()));
                let result = Labels::render_result(
                    MachinesLevel::step(1),
                    &id,
                    START - 3600,
                    RepairResult::Success,
                    &[OpId(index)],
                )
                .expect("a result renders");
                let (a, b) = labels::split(&result);
                pairs.push((a.into(), b.into()));
            } else if roll < 0.18 && room {
                broken_at_start += 1;
                let id = sim::draw_uuid(&mut rng);
                state = "unhealthy";
                let result = Labels::render_result(
                    MachinesLevel::step(2),
                    &id,
                    START - 86400,
                    RepairResult::Failure,
                    &[],
                )
                .expect("a result renders");
                let (a, b) = labels::split(&result);
                pairs.push((a.into(), b.into()));
            }
            machines.push(json!({
                "spec": {"serial": serial, "labels": label_pairs(&pairs), "rack": r,
                    "index-in-rack": 2 + k, "role": if k % 3 == 0 { "ss" } else { "cs" },
                    "ipv4": [address], "bmc": {"type": types[k % types.len()]}},
                "status": {"state": state, "timestamp": rfc3339(START - 3600)},
            }));
            if rng.random_bool(0.85) {
                let cp = cps < 3 && (k == 1 || k == 4);
                cps += usize::from(cp);
                let mut node = json!({
                    "metadata": {"name": address, "labels": {}, "annotations": {}},
                    "spec": {},
                    "status": {"addresses": [{"type": "InternalIP", "address": address}]},
                });
                if cp {
                    node["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] = json!("");
                }
                nodes.push(node);
            }
            n += 1;
        }
    }
    let mut file = Document::in_memory(
        Value::Array(machines),
        settings().repair,
        Some(NodesFile::in_memory(json!({"items": nodes}))),
    )
    .expect("a generated fleet is a list of machines");
    file.check_health = false;
    file.now = Some(START);
    let mut snap = file.snapshot().expect("a generated fleet reads");
    for (i, n) in snap.nodes.iter_mut().enumerate() {
        n.pods = if i % 3 == 2 { 0 } else { PODS };
    }
    without_records(&mut snap);
    snap
}
