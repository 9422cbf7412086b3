//! The Ganeti family as the command line shows it: objects named `cluster`, `group/NAME`,
//! `node/NAME` or `instance/NAME`, and instances shown with their nodes and run status.

use super::snapshot::Instance;
use super::snapshot::OpKind;
use super::{Facts, Ganeti, Index, Settings};
use crate::engine::{Backend, ObjectRef};
use crate::face::FamilyFace;
use crate::face::family::NO_SCOPE;
use crate::face::settings::Fleet;

impl FamilyFace for Ganeti {
    const FACT_COLUMNS: &'static [&'static str] = &["PRIMARY", "SECONDARY", "RUN"];
    const FAMILY: &'static str = "ganeti";

    fn parse_object(text: &str) -> Result<ObjectRef, String> {
        super::parse_object(text)
    }

    /// The iallocator from the config; a repair needing an operation this backend lacks
    /// (Ganeti 3.0's RAPI cannot move an instance) is left to a person.
    fn settings(fleet: &Fleet, backend: &dyn Backend<Ganeti>) -> Settings {
        let mut settings = fleet.limits.ganeti();
        settings.unsupported = OpKind::ALL
            .into_iter()
            .filter(|k| !backend.supports(*k))
            .collect();
        settings
    }

    fn fact_cells(facts: &Facts) -> Vec<String> {
        vec![
            facts.primary.to_string(),
            facts
                .secondary
                .as_ref()
                .map_or("-".into(), ToString::to_string),
            if facts.run_status.is_empty() {
                "-".into()
            } else {
                facts.run_status.to_string()
            },
        ]
    }

    fn facts_line(facts: &Facts) -> String {
        let mut line = format!("on {}", facts.primary);
        if let Some(s) = &facts.secondary {
            line.push_str(&format!(", secondary {s}"));
        }
        if !facts.run_status.is_empty() {
            line.push_str(&format!(", {}", facts.run_status));
        }
        line
    }

    /// The group of its primary node, as the limiter counts it.
    fn report_scope<'a>(index: &Index<'a>, inst: &'a Instance) -> &'a str {
        index
            .node(&inst.pnode)
            .map_or(NO_SCOPE, |n| index.group_name(n))
    }
}
