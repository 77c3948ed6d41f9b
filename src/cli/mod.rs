//! Verb dispatch for the `scangen` CLI; one file per verb.

mod bench;
mod check;
mod emit;
mod op_source;
mod ops;
mod scan;
mod struct_ops;
mod tune;
mod typed_ops;

use clap::{Parser, Subcommand};

pub type CliResult = Result<(), Box<dyn std::error::Error>>;

/// Specialized GPU scan (prefix-sum) kernels for any associative operator.
#[derive(Debug, Parser)]
#[command(name = "scangen", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the complete CUDA source of a scan for an operator.
    Emit(emit::EmitArgs),
    /// List the built-in operators and the element types each is defined on.
    Ops(ops::OpsArgs),
    /// Time scans against a device-to-device copy of the same bytes (needs a GPU; or --backend cpu).
    Bench(bench::BenchArgs),
    /// Check that an operator is associative and that its identity is one.
    Check(check::CheckArgs),
    /// Scan a .npy or raw binary file with an operator from a Rust file (CPU evaluator).
    Scan(scan::ScanArgs),
    /// Search launch shapes on the present GPU and record the fastest (needs a GPU).
    Tune(tune::TuneArgs),
}

pub fn run(cli: Cli) -> CliResult {
    match cli.command {
        Command::Emit(args) => emit::run(args),
        Command::Ops(args) => ops::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Check(args) => check::run(args),
        Command::Scan(args) => scan::run(args),
        Command::Tune(args) => tune::run(args),
    }
}
