//! `generate`: a synthetic Ganeti fleet file for benchmarks and what-ifs. (`simulate` is each
//! family's own: `FamilyFace::simulate`, through `plug::simulate`.)

use super::printer::Printer;
use super::{Error, Exit};
use crate::engine::Backend;
use crate::ganeti::{
    file::FleetFile,
    generate::{self, Spec},
};
use std::path::Path;

/// A synthetic fleet, saved (atomically) or printed on one line.
pub fn generate(out: &mut Printer, spec: &Spec, output: Option<&Path>) -> Result<Exit, Error> {
    let fleet = generate::generate(spec);
    match output {
        Some(path) => FleetFile::create(path, fleet)
            .flush()
            .map_err(|e| Error::Save(e.into()))?,
        None => out.json_line(&fleet)?,
    }
    Ok(Exit::Ok)
}
