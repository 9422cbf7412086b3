use autorepair::face::{self, cli::Cli};
use clap::Parser;
use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    match face::run(Cli::parse()) {
        Ok(exit) => exit.into(),
        Err(error) => error.report().into(),
    }
}
