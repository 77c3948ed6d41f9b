//! The `scangen` command-line tool.

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    init_logging();
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            let mut source = std::error::Error::source(&*err);
            while let Some(cause) = source {
                eprintln!("  caused by: {cause}");
                source = cause.source();
            }
            ExitCode::FAILURE
        }
    }
}

/// `SCANGEN_LOG` (a `tracing` target filter: `debug`, `scan_runtime=trace`, `warn,scan_runtime::compile=debug`)
/// turns on the library's logs: NVRTC compiles, kernel cache hits and misses, module loads,
/// launches. Unset, no subscriber is installed, and the warnings users must see (an untrusted or
/// unwritable kernel cache) still reach stderr as `scangen: warning: ...`, printed by the
/// library itself.
fn init_logging() {
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::prelude::*;
    let Some(filter) = std::env::var_os("SCANGEN_LOG") else {
        return;
    };
    let filter = filter.to_string_lossy();
    let targets: Targets = match filter.parse() {
        Ok(targets) => targets,
        Err(err) => {
            eprintln!("scangen: warning: ignoring SCANGEN_LOG={filter:?}: {err}");
            return;
        }
    };
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(targets),
        )
        .init();
}
