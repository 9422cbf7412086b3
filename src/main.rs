use autorepair::face::{self, cli::Cli};
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    match face::run(Cli::parse()) {
        Ok(exit) => exit.into(),
        Err(error) => error.report().into(),
    }
}
