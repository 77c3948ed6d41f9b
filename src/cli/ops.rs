//! `scangen ops`: the built-in operators and their types.

use super::CliResult;
use clap::Args;
use scan_core::BuiltinOp;

#[derive(Debug, Args)]
pub struct OpsArgs {}

pub fn run(_args: OpsArgs) -> CliResult {
    println!("{:<5} {:<44} description", "op", "types");
    for op in BuiltinOp::ALL {
        let types: Vec<_> = op.types().iter().map(|t| t.name()).collect();
        println!(
            "{:<5} {:<44} {}",
            op.name(),
            types.join(" "),
            op.description()
        );
    }
    println!();
    println!(
        "User-defined operators: write `#[scan_op] impl ScanOp for MyOp {{ .. }}` in Rust and"
    );
    println!("emit them with `scangen emit --file ops.rs --op MyOp`.");
    Ok(())
}
