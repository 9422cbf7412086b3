mod app;

use clap::Parser;

fn main() -> std::process::ExitCode {
    app::main(autorepair::cli::Cli::parse())
}
