//! `generate`: a synthetic fleet of a family, deterministic by seed, for benchmarks and
//! what-ifs. A family that can make one registers a [`Generator`]
//! ([`FamilyFace::GENERATOR`](super::FamilyFace::GENERATOR)); the others have none, and the
//! face says so.

use super::printer::Printer;
use super::{Error, Exit};
use std::path::PathBuf;

/// What `generate` asks for, from its flags as given.
#[derive(Debug, Clone, PartialEq)]
pub struct Generate {
    /// How many targets.
    pub targets: usize,
    pub seed: u64,
    /// The share of failure domains down, 0 to 1.
    pub broken: f64,
    /// Contradictions the watcher must survive (targets in missing domains, duplicate names,
    /// a thousand marks on one object…).
    pub contradictions: bool,
    /// Where to write the fleet (atomically); standard output without one.
    pub output: Option<PathBuf>,
}

/// A family's maker of synthetic fleets.
pub trait Generator: Sync {
    fn generate(&self, out: &mut Printer, asked: &Generate) -> Result<Exit, Error>;
}
