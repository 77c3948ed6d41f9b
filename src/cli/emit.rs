//! `scangen emit`: print the CUDA source of one scan.

use super::op_source::OpSource;
use super::CliResult;
use clap::{Args, ValueEnum};
use scan_codegen::{
    generate_fused, generate_variant, Algorithm, OffsetWidth, ScanMode, ScanVariant, Segments,
    TuningPolicy,
};
use scan_core::PrimType;
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

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SegmentedArg {
    Flags,
    Keys,
    Offsets,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RowsArg {
    /// Each row scanned on its own, rows `cols` apart (`cumsum(dim=-1)`).
    Contiguous,
    /// Each row scanned on its own, rows `row_stride` apart.
    Strided,
    /// Each column scanned down the rows (`cumsum(dim=0)`), any row stride.
    Columns,
}

/// The scan variant the flags ask for.
fn variant(args: &EmitArgs) -> Result<ScanVariant, String> {
    let segments = match (args.segmented, args.rows) {
        (Some(_), Some(_)) => return Err("--segmented and --rows exclude each other".into()),
        (None, None) => Segments::None,
        (None, Some(RowsArg::Contiguous)) => Segments::Rows { strided: false },
        (None, Some(RowsArg::Strided)) => Segments::Rows { strided: true },
        (None, Some(RowsArg::Columns)) => Segments::Columns,
        (Some(SegmentedArg::Flags), None) => Segments::Flags,
        (Some(SegmentedArg::Keys), None) => {
            let key = PrimType::ALL
                .into_iter()
                .find(|p| p.name() == args.key_type)
                .ok_or_else(|| format!("--key-type {}: not a primitive type", args.key_type))?;
            Segments::Keys(key)
        }
        (Some(SegmentedArg::Offsets), None) => match args.offset_type.as_str() {
            "u32" => Segments::Offsets(OffsetWidth::U32),
            "u64" => Segments::Offsets(OffsetWidth::U64),
            other => return Err(format!("--offset-type {other}: use u32 or u64")),
        },
    };
    let mut v = ScanVariant::FLAT.segments(segments);
    if args.reverse {
        v = v.reverse();
    }
    Ok(v)
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
    /// Suffix scan, last element to first.
    #[arg(long)]
    pub reverse: bool,
    /// Segmented scan: restart at head flags (`flags`), wherever the key changes (`keys`, with
    /// --key-type), or at CSR offsets (`offsets`, with --offset-type). Single-pass only.
    #[arg(long, value_enum)]
    pub segmented: Option<SegmentedArg>,
    /// Integer type of the keys of --segmented keys.
    #[arg(long = "key-type", default_value = "i32")]
    pub key_type: String,
    /// Width of the offsets of --segmented offsets: u32 or u64.
    #[arg(long = "offset-type", default_value = "u64")]
    pub offset_type: String,
    /// Batched rows: each row of a rows x cols matrix scanned on its own (cumsum(dim=-1));
    /// `--rows strided` for rows a row stride apart. Single-pass only.
    #[arg(long, value_enum)]
    pub rows: Option<RowsArg>,
    /// The fused scan of a --file operator with `fn lift`/`fn project`: reads its input
    /// arrays and writes its outputs (one read, one write, no lifted array).
    #[arg(long)]
    pub fused: bool,
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
    /// Override the policy's first-wave load rate of claimed single-pass tiles, in bytes per
    /// ns (0 = the first wave loads at once).
    #[arg(long = "first-wave-bytes-per-ns")]
    pub first_wave_bytes_per_ns: Option<u32>,
    /// Override whether a plain single-pass tile keeps its items staged in shared memory
    /// (`true`) or in registers (`false`, the default).
    #[arg(long = "staged", value_name = "BOOL")]
    pub staged: Option<bool>,
    /// Override whether a single-pass tile is its block's (`true`: tile t is block t, for a
    /// cooperative launch of a grid the GPU holds at once) or claimed (`false`, the default).
    #[arg(long = "resident", value_name = "BOOL")]
    pub resident: Option<bool>,
    /// Override whether a plain single-pass tile scans before its look-back and joins the
    /// tile's prefix after it (`true`) or seeds its scan with it (`false`).
    #[arg(long = "defer-prefix", value_name = "BOOL")]
    pub defer_prefix: Option<bool>,
    /// Override whether a deferred tile's thread scan reads its run back from shared memory
    /// (`true`) or scans the words it reduced (`false`, the default; the register ladder's
    /// rung where those spill).
    #[arg(long = "deferred-reread", value_name = "BOOL")]
    pub deferred_reread: Option<bool>,
    /// Override the policy's runs per thread (interleaved chains of combines; must divide the
    /// items per thread).
    #[arg(long = "thread-runs")]
    pub thread_runs: Option<u32>,
    /// Override the bytes a packed (1- or 2-byte) thread's run moves per shared-memory access
    /// (4 or 16; 16 takes effect where a run is whole 32-word stretches).
    #[arg(long = "packed-access-bytes")]
    pub packed_access_bytes: Option<u32>,
    /// Write the source to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The real architectures NVRTC 12.9 compiles for (`nvrtcGetSupportedArchs`): `emit` needs no
/// NVRTC, so the list is written down rather than asked for.
const NVRTC_ARCHS: [u32; 19] = [
    50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 120, 121,
];

/// The single-pass scan's look-back waits with `__nanosleep` and reads with `ld.relaxed.gpu`,
/// which start at sm_70.
const SINGLE_PASS_MIN_ARCH: u32 = 70;

/// `--arch` must name a GPU the source can be compiled for: `--arch 10` or `--arch 999` would
/// print a source no NVRTC accepts.
fn check_arch(arch: u32, algorithm: Algorithm) -> Result<(), String> {
    let list = || {
        NVRTC_ARCHS
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !NVRTC_ARCHS.contains(&arch) {
        return Err(format!(
            "--arch {arch} is not a compute capability NVRTC can compile for; expected one of {} (major * 10 + minor: 90 = H100)",
            list()
        ));
    }
    if algorithm == Algorithm::SinglePass && arch < SINGLE_PASS_MIN_ARCH {
        return Err(format!(
            "--arch {arch}: the single-pass scan needs sm_{SINGLE_PASS_MIN_ARCH} or newer (its look-back uses `__nanosleep` and relaxed loads); use --algo kogge-stone or --algo blelloch for older GPUs"
        ));
    }
    Ok(())
}

pub fn run(args: EmitArgs) -> CliResult {
    let algorithm = Algorithm::from(args.algo);
    check_arch(args.arch, algorithm)?;
    let (spec, transform) = if args.fused {
        let (spec, t) = args.source.resolve_fused()?;
        (spec, Some(t))
    } else {
        (args.source.resolve()?, None)
    };
    let mode = if args.exclusive {
        ScanMode::Exclusive
    } else {
        ScanMode::Inclusive
    };
    let variant = variant(&args)?;
    variant.supported_by(algorithm)?;
    let mut policy =
        TuningPolicy::for_scan(args.arch, algorithm, &spec, variant, transform.as_ref());
    let overrides = [
        (&mut policy.block_threads, args.threads),
        (&mut policy.items_per_thread, args.items),
        (&mut policy.min_blocks_per_sm, args.min_blocks_per_sm),
        (&mut policy.vector_bytes, args.vector_bytes),
        (&mut policy.look_back_window, args.window),
        (&mut policy.l2_prefetch_tiles, args.l2_prefetch_tiles),
        (
            &mut policy.first_wave_bytes_per_ns,
            args.first_wave_bytes_per_ns,
        ),
        (&mut policy.thread_runs, args.thread_runs),
        (&mut policy.packed_access_bytes, args.packed_access_bytes),
    ];
    if let Some(resident) = args.resident {
        policy.resident_tiles = resident;
    }
    if let Some(defer) = args.defer_prefix {
        policy.defer_tile_prefix = defer;
    }
    if let Some(reread) = args.deferred_reread {
        policy.deferred_scan_rereads_run = reread;
    }
    if let Some(staged) = args.staged {
        policy.stage_items = staged;
    }
    for (field, value) in overrides {
        if let Some(v) = value {
            *field = v;
        }
    }
    let generated = match &transform {
        Some(t) => generate_fused(&spec, t, algorithm, mode, variant, policy)?,
        None => generate_variant(&spec, algorithm, mode, variant, policy)?,
    };
    match &args.output {
        Some(path) => std::fs::write(path, &generated.source)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        None => {
            use std::io::Write;
            match std::io::stdout()
                .lock()
                .write_all(generated.source.as_bytes())
            {
                // The reader stopped early (`scangen emit ... | head`): nothing is lost that it
                // asked for. `print!` panicked here.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                r => r.map_err(|e| format!("cannot write the source to stdout: {e}"))?,
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_must_be_one_nvrtc_targets() {
        assert!(check_arch(90, Algorithm::SinglePass).is_ok());
        assert!(check_arch(120, Algorithm::Blelloch).is_ok());
        assert!(check_arch(60, Algorithm::KoggeStone).is_ok());
        for bad in [0, 10, 35, 91, 999] {
            let e = check_arch(bad, Algorithm::KoggeStone).unwrap_err();
            assert!(e.contains("NVRTC can compile for"), "{bad}: {e}");
        }
        let e = check_arch(61, Algorithm::SinglePass).unwrap_err();
        assert!(e.contains("sm_70 or newer"), "{e}");
    }
}
