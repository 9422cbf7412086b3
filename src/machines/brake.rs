//! The operator's brake from any host on sabakan (rule 8): a suspend written while a pass acts
//! (`autorepair suspend` on another host, or a label put through sabakan's API) stops that pass
//! before its next repair entry. Before each new entry the live backend reads sabakan again
//! (the pass's own query, at most once a second) and halts on a suspend that was not there
//! when the pass read the fleet: the machine's own, one on its rack (on any machine of the
//! rack), or the cluster's (on any machine). A read that fails stops nothing: the write after
//! it fails too, or the next look finds the suspend. A file has no other writer during a pass
//! (the lock), and is reached by the brake file on this host alone.

use super::labels::{CLUSTER_PREFIX, RACK_PREFIX, SUSPEND, SUSPEND_ALL};
use super::snapshot::kind;
use crate::engine::{BackendError, ObjectRef};
use crate::sabakan::Machine;
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// How often sabakan is read again, at most.
pub(super) const EVERY: Duration = Duration::from_secs(1);

/// A suspend label: the machine that carries it, its name and its value.
type Suspend = (String, String, String);

#[derive(Default)]
pub(super) struct Watch {
    read: BTreeSet<Suspend>,
    racks: HashMap<String, i64>,
    last: Option<Instant>,
    /// The object whose suspend appeared: every later look says so at once.
    pub suspended: Option<ObjectRef>,
}

impl Watch {
    /// What a snapshot read.
    pub(super) fn reset(&mut self, machines: &[Machine]) {
        self.read = suspends(machines);
        self.racks = machines
            .iter()
            .map(|m| (m.serial.clone(), m.rack))
            .collect();
        self.last = None;
        self.suspended = None;
    }

    /// Whether sabakan is due to be read again before the next entry.
    pub(super) fn due(&mut self) -> bool {
        if self.last.is_some_and(|t| t.elapsed() < EVERY) {
            return false;
        }
        self.last = Some(Instant::now());
        true
    }

    /// Halts the pass if a suspend that governs `serial` appears in `now` and not in what the
    /// pass read (or appeared earlier in the pass).
    pub(super) fn check(&mut self, serial: &str, now: &[Machine]) -> Result<(), BackendError> {
        if let Some(object) = &self.suspended {
            return Err(halted(object));
        }
        let rack = self.racks.get(serial).copied();
        let found = suspends(now)
            .difference(&self.read)
            .find_map(|(on, name, _)| {
                if name.starts_with(CLUSTER_PREFIX) {
                    Some(ObjectRef::singleton(kind::CLUSTER))
                } else if name.starts_with(RACK_PREFIX) {
                    let r = now.iter().find(|m| m.serial == *on)?.rack;
                    (Some(r) == rack).then(|| ObjectRef::new(kind::RACK, r.to_string()))
                } else {
                    (on == serial).then(|| ObjectRef::new(kind::MACHINE, serial))
                }
            });
        match found {
            Some(object) => {
                let e = halted(&object);
                self.suspended = Some(object);
                Err(e)
            }
            None => Ok(()),
        }
    }
}

/// Every suspend label of the fleet: machines' own, racks' and the cluster's.
fn suspends(machines: &[Machine]) -> BTreeSet<Suspend> {
    let names: [String; 6] = [
        SUSPEND.to_owned(),
        SUSPEND_ALL.to_owned(),
        format!("{RACK_PREFIX}suspend"),
        format!("{RACK_PREFIX}suspend-all"),
        format!("{CLUSTER_PREFIX}suspend"),
        format!("{CLUSTER_PREFIX}suspend-all"),
    ];
    machines
        .iter()
        .flat_map(|m| {
            m.labels
                .iter()
                .filter(|(n, _)| names.contains(n))
                .map(|(n, v)| (m.serial.clone(), n.clone(), v.clone()))
        })
        .collect()
}

fn halted(object: &ObjectRef) -> BackendError {
    BackendError::Halted(format!(
        "{object} was suspended in the fleet while this pass ran (its suspend label appeared): no repair starts under it"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sabakan::model::machines_from_value;

    fn fleet(extra: &[(&str, &str, &str)]) -> Vec<Machine> {
        let machine = |serial: &str, rack: i64| {
            let labels: serde_json::Map<String, serde_json::Value> = extra
                .iter()
                .filter(|(on, _, _)| *on == serial)
                .map(|(_, n, v)| ((*n).to_owned(), (*v).into()))
                .collect();
            serde_json::json!({"spec": {"serial": serial, "rack": rack, "indexInRack": 1,
                "role": "cs", "ipv4": ["10.0.0.1"], "labels": labels},
                "status": {"state": "healthy", "timestamp": "2026-01-01T00:00:00Z"}})
        };
        let list = serde_json::json!([machine("r0-a", 0), machine("r0-b", 0), machine("r1-a", 1)]);
        machines_from_value(list, jiff::Timestamp::UNIX_EPOCH).unwrap()
    }

    /// Which suspend that appeared meanwhile stops a new entry on `r0-a`: its own, its rack's
    /// on any machine of the rack, the cluster's on any machine; not another machine's nor
    /// another rack's, nor one that was there when the pass read.
    #[test]
    fn a_suspend_that_appeared_over_the_machine_its_rack_or_the_cluster_halts() {
        let read = [("r0-b", "autorepair.rack.suspend", "")];
        // (case, labels now, the object that halts)
        type Label = (&'static str, &'static str, &'static str);
        let cases: [(&str, Vec<Label>, Option<&str>); 7] = [
            ("nothing new", vec![], None),
            (
                "its own",
                vec![("r0-a", "autorepair.suspend", "")],
                Some("machine/r0-a"),
            ),
            (
                "another machine's",
                vec![("r0-b", "autorepair.suspend", "")],
                None,
            ),
            (
                "its rack's, on another machine",
                vec![("r0-b", "autorepair.rack.suspend-all", "")],
                Some("rack/0"),
            ),
            (
                "another rack's",
                vec![("r1-a", "autorepair.rack.suspend", "")],
                None,
            ),
            (
                "the cluster's, anywhere",
                vec![("r1-a", "autorepair.cluster.suspend", "9")],
                Some("cluster"),
            ),
            (
                "a suspend there when read, changed",
                vec![("r0-b", "autorepair.rack.suspend", "99")],
                Some("rack/0"),
            ),
        ];
        for (case, mut now, want) in cases {
            let mut w = Watch::default();
            w.reset(&fleet(&read));
            if !now
                .iter()
                .any(|(on, n, _)| read.iter().any(|(o, rn, _)| o == on && rn == n))
            {
                now.extend(read);
            }
            let got = w
                .check("r0-a", &fleet(&now))
                .err()
                .map(|_| w.suspended.as_ref().map(ToString::to_string).unwrap());
            assert_eq!(got.as_deref(), want, "{case}");
            if want.is_some() {
                // Said again at once, whatever sabakan shows next.
                assert!(w.check("r0-a", &[]).is_err(), "{case}");
            }
        }
    }
}
