//! The binary-facing layer: clap definitions.

pub mod cli;
