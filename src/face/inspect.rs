//! The commands that show the fleet and change nothing: `status`, `explain`, `snapshot`.

use super::family::FamilyFace;
use super::fleet::{connect, on_family, open, read, read_plan};
use super::printer::Printer;
use super::settings::{Clock, Fleet};
use super::{Error, Exit};
use crate::{
    engine::{Backend as _, Plan},
    ganeti::file::FleetFile,
    report,
};
use std::path::Path;

pub fn status(out: &mut Printer, fleet: &Fleet, clock: Clock) -> Result<Exit, Error> {
    on_family!(connect(&fleet.source)?, backend => {
        show_status(out, &read_plan(fleet, clock, backend)?)
    })
}

fn show_status<F: FamilyFace>(out: &mut Printer, plan: &Plan<F>) -> Result<Exit, Error> {
    out.document(|| report::status_json(plan), || report::status_table(plan))?;
    Ok(Exit::Ok)
}

pub fn explain(out: &mut Printer, fleet: &Fleet, clock: Clock, name: &str) -> Result<Exit, Error> {
    on_family!(connect(&fleet.source)?, backend => {
        show_explain(out, fleet, &read_plan(fleet, clock, backend)?, name)
    })
}

fn show_explain<F: FamilyFace>(
    out: &mut Printer,
    fleet: &Fleet,
    plan: &Plan<F>,
    name: &str,
) -> Result<Exit, Error> {
    let Some(t) = plan.target(name) else {
        return Err(Error::NoSuchTarget {
            name: name.to_owned(),
            from: fleet.source.describe(),
            kind: F::WORDS.target,
            kinds: F::WORDS.targets,
        });
    };
    out.document(|| t, || report::explain(plan, t))?;
    Ok(Exit::Ok)
}

/// Saves the fleet as a fleet file, or prints it.
pub fn snapshot(out: &mut Printer, fleet: &Fleet, output: Option<&Path>) -> Result<Exit, Error> {
    let snap = read(&fleet.source, open(&fleet.source)?.as_mut())?;
    match output {
        Some(path) => {
            let mut file = FleetFile::create(path, snap);
            file.flush().map_err(|e| Error::Save(e.into()))?;
            out.note(format_args!(
                "saved {} instances to {}",
                file.fleet().instances.len(),
                path.display()
            ));
        }
        None => out.json_document(&snap)?,
    }
    Ok(Exit::Ok)
}
