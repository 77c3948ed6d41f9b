//! `scangen emit`: print the CUDA source of one scan.

use super::op_source::OpSource;
use super::CliResult;
use clap::{Args, ValueEnum};
use scan_codegen::{generate, Algorithm, ScanMode, TuningPolicy};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AlgoArg {
    KoggeStone,
    Blelloch,
    SinglePass,
}

impl From<AlgoArg> for Algorithm {
    fn from(a: AlgoArg) -> Algorithm {
        match a {
            AlgoArg::KoggeStone => Algorithm::KoggeStone,
            AlgoArg::Blelloch => Algorithm::Blelloch,
            AlgoArg::SinglePass => Algorithm::SinglePass,
        }
    }
}

#[derive(Debug, Args)]
pub struct EmitArgs {
    #[command(flatten)]
    pub source: OpSource,
    /// Scan algorithm.
    #[arg(long, value_enum, default_value = "single-pass")]
    pub algo: AlgoArg,
    /// Exclusive scan (out[i] combines in[0..i]); the default is inclusive.
    #[arg(long)]
    pub exclusive: bool,
    /// Compute capability the tuning policy is chosen for (90 = H100).
    #[arg(long, default_value_t = 90)]
    pub arch: u32,
    /// Override the policy's threads per block.
    #[arg(long)]
    pub threads: Option<u32>,
    /// Override the policy's items per thread.
    #[arg(long)]
    pub items: Option<u32>,
    /// Override the policy's register cap (blocks per SM asked of ptxas; 1 = no cap).
    #[arg(long = "min-blocks-per-sm")]
    pub min_blocks_per_sm: Option<u32>,
    /// Override the policy's bytes per lane per global access (1, 2, 4, 8, 16).
    #[arg(long = "vector-bytes")]
    pub vector_bytes: Option<u32>,
    /// Override the policy's single-pass look-back window (1..=32 statuses at once).
    #[arg(long)]
    pub window: Option<u32>,
    /// Override the policy's single-pass L2 prefetch distance in tiles (0 = off).
    #[arg(long = "prefetch-tiles")]
    pub l2_prefetch_tiles: Option<u32>,
    /// Write the source to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: EmitArgs) -> CliResult {
    let spec = args.source.resolve()?;
    let algorithm = Algorithm::from(args.algo);
    let mode = if args.exclusive {
        ScanMode::Exclusive
    } else {
        ScanMode::Inclusive
    };
    let mut policy = TuningPolicy::for_target(args.arch, algorithm, spec.element.size());
    let overrides = [
        (&mut policy.block_threads, args.threads),
        (&mut policy.items_per_thread, args.items),
        (&mut policy.min_blocks_per_sm, args.min_blocks_per_sm),
        (&mut policy.vector_bytes, args.vector_bytes),
        (&mut policy.look_back_window, args.window),
        (&mut policy.l2_prefetch_tiles, args.l2_prefetch_tiles),
    ];
    for (field, value) in overrides {
        if let Some(v) = value {
            *field = v;
        }
    }
    let generated = generate(&spec, algorithm, mode, policy)?;
    match &args.output {
        Some(path) => std::fs::write(path, &generated.source)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        None => print!("{}", generated.source),
    }
    Ok(())
}
