//! Rule 13 through the binary, in every family, on copies of the demo fleets: after a mass
//! failure no new repair starts until the storm cool-down has passed, read from the times the
//! fleet itself gives for each failure domain's return (a Ganeti node's `mtime`, a Node's Ready
//! transition, a sabakan machine's state change).

use crate::fail_closed::{Demo, GANETI, MACHINES, METAL3};
use serde_json::Value;

const COOLDOWN: i64 = 1800;

fn rfc3339(at: i64) -> String {
    autorepair::engine::rfc3339(at)
}

/// Every node that is up came back at `at` (Ganeti knows only its last change).
fn ganeti_back(fleet: &mut Value, at: i64) {
    for n in fleet["nodes"].as_array_mut().unwrap() {
        if n["offline"] != true && n["drained"] != true {
            n["mtime"] = (at as f64).into();
        }
    }
}

/// Every Node that is Ready turned Ready at `at`.
fn metal3_back(fleet: &mut Value, at: i64) {
    for o in fleet["items"].as_array_mut().unwrap() {
        if o["kind"] != "Node" {
            continue;
        }
        for c in o["status"]["conditions"].as_array_mut().unwrap() {
            if c["type"] == "Ready" && c["status"] == "True" {
                c["lastTransitionTime"] = rfc3339(at).into();
            }
        }
    }
}

/// Every healthy machine became healthy at `at`.
fn machines_back(fleet: &mut Value, at: i64) {
    for m in fleet.as_array_mut().unwrap() {
        if m["status"]["state"] == "healthy" {
            m["status"]["timestamp"] = rfc3339(at).into();
        }
    }
}

/// Each family's demo, how its domains come back, and the limits under which the demo's own
/// target is repaired at once but the domains that came back make a storm (the machines
/// family leaves the mass-failure limits to CKE unless the config sets one).
type Family = (&'static Demo, fn(&mut Value, i64), &'static str);

#[test]
fn after_a_mass_failure_no_repair_starts_until_the_cooldown_has_passed_in_every_family() {
    let families: [Family; 3] = [
        (&GANETI, ganeti_back, ""),
        (&METAL3, metal3_back, ""),
        (&MACHINES, machines_back, "max_down_nodes_per_group = 1\n"),
    ];
    // (case, storm_cooldown set, the domains came back this long ago, held)
    let cases = [
        ("back 10 min ago, cool-down 30 min", true, 600, true),
        ("the same without storm_cooldown", false, 600, false),
        ("back a cool-down ago", true, COOLDOWN, false),
        ("back 40 min ago", true, 2400, false),
    ];
    for (demo, back, limits) in families {
        for (case, cooldown, ago, held) in cases {
            let what = format!("{}: {case}", demo.family);
            let at = demo.now - ago;
            let (dir, fleet) = demo.copy_with(|v| back(v, at));
            let config = dir.path().join("autorepair.toml");
            let mut text = format!("[limits]\n{limits}");
            if cooldown {
                text.push_str("storm_cooldown = \"30min\"\n");
            }
            std::fs::write(&config, text).unwrap();
            let target = demo.status_with(dir.path(), &config);
            let blocked = &target["blocked"];
            if held {
                assert_eq!(blocked["reason"], "cooldown", "{what}: {target}");
                assert_eq!(blocked["until"], at + COOLDOWN, "{what}: {target}");
                let text = String::from_utf8_lossy(
                    &demo
                        .bin_with(dir.path(), &config)
                        .args(["status", "--now", &demo.now.to_string()])
                        .assert()
                        .success()
                        .get_output()
                        .stdout,
                )
                .into_owned();
                assert!(
                    text.contains("COOL-DOWN (storm_cooldown): storm cool-down in ")
                        && text.contains(&format!(
                            "no new repair starts there until {}",
                            rfc3339(at + COOLDOWN)
                        )),
                    "{what}: {text}"
                );
            } else {
                assert_ne!(blocked["reason"], "cooldown", "{what}: {target}");
            }
            let started = demo.started_with(dir.path(), &fleet, &config);
            assert_eq!(
                started.is_empty(),
                held,
                "{what}: a pass started {started:?}"
            );
        }
    }
}
