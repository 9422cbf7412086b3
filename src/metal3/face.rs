//! The metal3 family as the command line shows it: objects named `machine/NS/NAME` (or a bare
//! `NS/NAME`), `machineset/…`, `machinedeployment/…`, `controlplane/…`, `cluster/NS/NAME`, and
//! each Machine shown with its host, power, Node, request and where its power cycle stands.

use super::objects::Machine;
use super::{Facts, Index, Metal3, Settings};
use crate::engine::{Backend, ObjectRef};
use crate::face::FamilyFace;
use crate::face::settings::Fleet;

impl FamilyFace for Metal3 {
    const FACT_COLUMNS: &'static [&'static str] = &["HOST", "POWER", "NODE", "REQUEST", "PHASE"];
    const FAMILY: &'static str = "metal3";

    fn parse_object(text: &str) -> Result<ObjectRef, String> {
        super::parse_object(text)
    }

    /// The config's `[metal3]` section; every backend of this family runs every step.
    fn settings(fleet: &Fleet, _backend: &dyn Backend<Metal3>) -> Settings {
        fleet.metal3.settings()
    }

    fn fact_cells(facts: &Facts) -> Vec<String> {
        let or_dash = |t: Option<String>| t.unwrap_or_else(|| "-".into());
        vec![
            or_dash(facts.host.as_ref().map(ToString::to_string)),
            facts.power.to_owned(),
            or_dash(facts.node.as_ref().map(ToString::to_string)),
            if facts.requested { "yes" } else { "-" }.to_owned(),
            facts.phase.unwrap_or("-").to_owned(),
        ]
    }

    fn facts_line(facts: &Facts) -> String {
        let mut line = match &facts.host {
            Some(h) => format!("on host {h} (power {})", facts.power),
            None => "no host".to_owned(),
        };
        match &facts.node {
            Some(n) => line.push_str(&format!(", Node {n}")),
            None => line.push_str(", no Node"),
        }
        if facts.requested {
            line.push_str(", remediation requested");
        }
        if let Some(p) = facts.phase {
            line.push_str(&format!(", power cycle {p}"));
        }
        line
    }

    /// Its zone (the Machine's failure domain, else its Node's zone label), as the limiter
    /// counts it.
    fn report_scope<'a>(index: &Index<'a>, m: &'a Machine) -> &'a str {
        index.zone_name(m)
    }

    fn next_due(snap: &super::objects::Snapshot, settings: &Settings, now: i64) -> Option<i64> {
        super::due::next_due(snap, settings, now)
    }
}
