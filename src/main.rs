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

/// `SCANGEN_LOG` (a `tracing` filter: `debug`, `scan_runtime=trace`, ...) turns on the
/// library's logs: NVRTC compiles, kernel cache hits and misses, module loads, launches. Unset,
/// no subscriber is installed, and the warnings users must see (an untrusted or unwritable
/// kernel cache) still reach stderr as `scangen: warning: ...`, printed by the library itself.
fn init_logging() {
    let Some(filter) = std::env::var_os("SCANGEN_LOG") else {
        return;
    };
    let filter = filter.to_string_lossy();
    let filter = match tracing_subscriber::EnvFilter::try_new(&*filter) {
        Ok(filter) => filter,
        Err(err) => {
            eprintln!("scangen: warning: ignoring SCANGEN_LOG={filter:?}: {err}");
            return;
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}
