//! `scangen tune`: searches launch shapes (threads per block x items per thread x vector bytes
//! x look-back window) on the present GPU, times each beside a device copy like `scangen bench`, and records the winners per
//! (algorithm, op, type, mode) as JSON: the numbers `TuningPolicy::for_target` is written from.
//! `--exclusive` and `--reverse` tune those scans (the register ladder may build them otherwise).

use super::bench::gpu::{sample_buffer, time_case};
use super::bench::report::mode_label;
use super::bench::sample::Sample;
use super::typed_ops::with_op;
use super::CliResult;
use clap::Args;
use scangen::runtime::cudarc::driver::CudaStream;
use scangen::runtime::{Gpu, ScanOptions};
use scangen::{Algorithm, ScanMode, ScanOp, TuningPolicy};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Algorithms to tune (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "single-pass")]
    pub algo: Vec<String>,
    /// (op:type) pairs to tune on; `affine` is the 8-byte {a, b} f32 composition.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "add:i32,max:f32,add:i64,add:f64,affine:f32x2"
    )]
    pub ops: Vec<String>,
    /// Threads per block to try.
    #[arg(long, value_delimiter = ',', default_value = "128,256,512")]
    pub threads: Vec<u32>,
    /// Items per thread to try.
    #[arg(long, value_delimiter = ',', default_value = "4,8,16,32")]
    pub items: Vec<u32>,
    /// Bytes per lane per global access to try (1, 2, 4, 8, 16).
    #[arg(long = "vector-bytes", value_delimiter = ',', default_value = "16")]
    pub vector_bytes: Vec<u32>,
    /// Single-pass look-back windows (statuses read at once, 1..=32) to try.
    #[arg(long = "window", value_delimiter = ',', default_value = "32")]
    pub look_back_window: Vec<u32>,
    /// Single-pass L2 prefetch distances (tiles ahead, 0 = off) to try.
    #[arg(long = "prefetch-tiles", value_delimiter = ',', default_value = "0,48")]
    pub l2_prefetch_tiles: Vec<u32>,
    /// Single-pass, claimed tiles: the rates (bytes per ns) at which the first wave starts
    /// loading its tiles (0 = all at once), to try.
    #[arg(
        long = "first-wave-bytes-per-ns",
        value_delimiter = ',',
        default_value = "0"
    )]
    pub first_wave_bytes_per_ns: Vec<u32>,
    /// Single-pass: whether tiles keep their items staged in shared memory (`true`) or in
    /// registers (`false`), to try.
    #[arg(long = "staged", value_delimiter = ',', default_value = "false")]
    pub staged: Vec<bool>,
    /// Single-pass: whether every tile is a resident block of one cooperative launch (tile t is
    /// block t, no claim; the small and mid-size shapes of unpacked elements) or claims its
    /// tile, to try. Resident shapes need the whole grid to fit on the GPU at once.
    #[arg(long = "resident", value_delimiter = ',', default_value = "false")]
    pub resident: Vec<bool>,
    /// Single-pass, plain tiles: whether tiles scan before the look-back and join the prefix
    /// after it (`true`) or seed their scans with it (`false`), to try.
    #[arg(long = "defer-prefix", value_delimiter = ',', default_value = "false")]
    pub defer_prefix: Vec<bool>,
    /// Single-pass, deferred prefix: whether the thread scan reads its run back from shared
    /// memory (`true`) or scans the words it reduced (`false`), to try. (The register ladder may
    /// still turn it on where the scan spills; the table shows the policy as built.)
    #[arg(
        long = "deferred-reread",
        value_delimiter = ',',
        default_value = "false"
    )]
    pub deferred_reread: Vec<bool>,
    /// Runs per thread (interleaved chains of combines) to try; shapes whose items they do not
    /// divide are skipped.
    #[arg(long = "thread-runs", value_delimiter = ',', default_value = "1")]
    pub thread_runs: Vec<u32>,
    /// Bytes per shared-memory access of a packed (1- or 2-byte) thread's run to try (4, 16).
    #[arg(
        long = "packed-access-bytes",
        value_delimiter = ',',
        default_value = "4"
    )]
    pub packed_access_bytes: Vec<u32>,
    /// Register caps (blocks per SM asked of ptxas) to try; by default the default policy's
    /// where that many blocks fit in an SM's 2048 threads, 1 otherwise.
    #[arg(long = "min-blocks", value_delimiter = ',')]
    pub min_blocks: Vec<u32>,
    /// Tune exclusive scans (out[i] combines in[0..i]); the default is inclusive
    #[arg(long)]
    pub exclusive: bool,
    /// Tune suffix scans (last element to first): the register ladder and the tile's timeline
    /// may differ by direction
    #[arg(long)]
    pub reverse: bool,
    /// log2 of the number of elements each candidate is timed on.
    #[arg(long, default_value_t = 28)]
    pub log2n: u32,
    #[arg(long, default_value_t = 15)]
    pub reps: usize,
    /// Time the GPU's own work only, as `scangen bench --device-time` does.
    #[arg(long)]
    pub device_time: bool,
    /// Where to record the winners (JSON).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Serialize)]
struct Trial {
    algorithm: String,
    op: String,
    ty: String,
    mode: String,
    elem_bytes: usize,
    block_threads: u32,
    items_per_thread: u32,
    vector_bytes: u32,
    look_back_window: u32,
    l2_prefetch_tiles: u32,
    first_wave_bytes_per_ns: u32,
    min_blocks_per_sm: u32,
    staged: bool,
    resident: bool,
    thread_runs: u32,
    packed_access_bytes: u32,
    defer_tile_prefix: bool,
    deferred_scan_rereads_run: bool,
    scan_ms: f64,
    copy_ms: f64,
    fraction_of_copy: f64,
}

pub fn run(args: TuneArgs) -> CliResult {
    if args.device_time {
        super::bench::hold::set_ruler(super::bench::hold::Ruler::DeviceTime);
    }
    let gpu = Gpu::new(0)?;
    unsafe { gpu.context().disable_event_tracking() };
    let stream = gpu.new_stream()?;
    let n = 1u64 << args.log2n;
    let mut trials: Vec<Trial> = Vec::new();
    for algo in &args.algo {
        let algorithm =
            Algorithm::from_name(algo).ok_or_else(|| format!("unknown algorithm `{algo}`"))?;
        for pair in &args.ops {
            let (op, ty) = pair
                .split_once(':')
                .ok_or_else(|| format!("`{pair}`: expected op:type"))?;
            let found = with_op!(op, ty, O => Some(tune_op::<O>(&gpu, &stream, &args, algorithm, op, ty, n, &mut trials)), None);
            match found {
                Some(r) => r?,
                None => return Err(format!("no operator `{op}` on `{ty}`").into()),
            }
        }
    }
    // Winners: the fastest shape per (algorithm, op, type).
    let mut winners: Vec<&Trial> = Vec::new();
    for t in &trials {
        match winners.iter_mut().find(|w| {
            w.algorithm == t.algorithm && w.op == t.op && w.ty == t.ty && w.mode == t.mode
        }) {
            Some(w) if t.scan_ms < w.scan_ms => *w = t,
            Some(_) => {}
            None => winners.push(t),
        }
    }
    println!(
        "| algorithm | op | type | mode | bytes | threads | items | tile | vector bytes | window | prefetch tiles | first wave bytes/ns | blocks/SM cap | staged | resident | runs | packed access bytes | deferred prefix | scan ms | fraction of copy |"
    );
    println!("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | --- | ---: | ---: |");
    for t in &trials {
        let star = if winners.iter().any(|w| std::ptr::eq(*w, t)) {
            " **best**"
        } else {
            ""
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.4} | {:.3}{star} |",
            t.algorithm,
            t.op,
            t.ty,
            t.mode,
            t.elem_bytes,
            t.block_threads,
            t.items_per_thread,
            t.block_threads * t.items_per_thread,
            t.vector_bytes,
            t.look_back_window,
            t.l2_prefetch_tiles,
            t.first_wave_bytes_per_ns,
            t.min_blocks_per_sm,
            if t.staged { "yes" } else { "no" },
            if t.resident { "yes" } else { "no" },
            t.thread_runs,
            t.packed_access_bytes,
            match (t.defer_tile_prefix, t.deferred_scan_rereads_run) {
                (false, _) => "no",
                (true, false) => "yes",
                (true, true) => "yes, run re-read",
            },
            t.scan_ms,
            t.fraction_of_copy
        );
    }
    let record = serde_json::json!({
        "device": gpu.backend_name(),
        "sm": gpu.sm(),
        "n": n,
        "winners": winners,
        "trials": trials,
    });
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("tuning-sm{}.json", gpu.sm())));
    std::fs::write(&path, serde_json::to_string_pretty(&record)?)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    eprintln!("winners recorded in {}", path.display());
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn tune_op<O: ScanOp>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    args: &TuneArgs,
    algorithm: Algorithm,
    op: &str,
    ty: &str,
    n: u64,
    trials: &mut Vec<Trial>,
) -> CliResult
where
    O::Elem: Sample,
{
    let elem = std::mem::size_of::<O::Elem>();
    let mode = if args.exclusive {
        ScanMode::Exclusive
    } else {
        ScanMode::Inclusive
    };
    let mode_name = mode_label(mode, args.reverse);
    let input = sample_buffer::<O::Elem>(stream, n)?;
    let mut output = sample_buffer::<O::Elem>(stream, n)?;
    // The default's register cap, for every shape whose that many blocks fit in an SM's 2048
    // threads (the runtime loosens it if ptxas would spill).
    let default_cap = TuningPolicy::for_target(gpu.sm(), algorithm, elem).min_blocks_per_sm;
    // Every combination of the axes, one axis at a time.
    let mut shapes: Vec<TuningPolicy> = args
        .threads
        .iter()
        .flat_map(|&t| args.items.iter().map(move |&i| TuningPolicy::new(t, i)))
        .collect();
    shapes = vary(shapes, &args.vector_bytes, |p, v| p.vector_bytes = v);
    shapes = vary(shapes, &args.look_back_window, |p, w| {
        p.look_back_window = w
    });
    shapes = vary(shapes, &args.l2_prefetch_tiles, |p, d| {
        p.l2_prefetch_tiles = d
    });
    shapes = vary(shapes, &args.first_wave_bytes_per_ns, |p, r| {
        p.first_wave_bytes_per_ns = r
    });
    shapes = vary(shapes, &args.staged, |p, s| p.stage_items = s);
    shapes = vary(shapes, &args.resident, |p, r| p.resident_tiles = r);
    shapes = vary(shapes, &args.defer_prefix, |p, d| p.defer_tile_prefix = d);
    shapes = vary(shapes, &args.deferred_reread, |p, r| {
        p.deferred_scan_rereads_run = r
    });
    shapes = vary(shapes, &args.thread_runs, |p, r| p.thread_runs = r);
    shapes = vary(shapes, &args.packed_access_bytes, |p, b| {
        p.packed_access_bytes = b
    });
    shapes = if args.min_blocks.is_empty() {
        shapes
            .into_iter()
            .map(|p| TuningPolicy {
                min_blocks_per_sm: if p.block_threads * default_cap <= 2048 {
                    default_cap
                } else {
                    1
                },
                ..p
            })
            .collect()
    } else {
        vary(shapes, &args.min_blocks, |p, b| p.min_blocks_per_sm = b)
    };
    for policy in shapes {
        let shape = format!(
            "{}x{} vec{} window{} prefetch{} wave{} cap{} runs{} smem{}{}{}{}",
            policy.block_threads,
            policy.items_per_thread,
            policy.vector_bytes,
            policy.look_back_window,
            policy.l2_prefetch_tiles,
            policy.first_wave_bytes_per_ns,
            policy.min_blocks_per_sm,
            policy.thread_runs,
            policy.packed_access_bytes,
            if policy.stage_items { " staged" } else { "" },
            if policy.resident_tiles {
                " resident"
            } else {
                ""
            },
            match (policy.defer_tile_prefix, policy.deferred_scan_rereads_run) {
                (false, _) => "",
                (true, false) => " deferred",
                (true, true) => " deferred re-read",
            }
        );
        let mut options = ScanOptions::default()
            .algorithm(algorithm)
            .mode(mode)
            .policy(policy);
        if args.reverse {
            options = options.reverse();
        }
        let mut scanner = match gpu.scanner::<O>(options) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("skip {algorithm} {op} {ty} {mode_name} {shape}: {e}");
                continue;
            }
        };
        let (scan_ms, copy_ms) = time_case(
            stream,
            &mut scanner,
            &input,
            &mut output,
            (0..n as usize, 0),
            2,
            args.reps,
        )?;
        eprintln!(
            "{algorithm} {op} {ty} {mode_name} {shape}: {:.3} of copy",
            copy_ms / scan_ms
        );
        // A candidate's explicit policy has no smaller shapes: its scans ran the default kernel.
        let built = scanner.policy()?;
        trials.push(Trial {
            algorithm: algorithm.name().into(),
            op: op.into(),
            ty: ty.into(),
            mode: mode_name.clone(),
            elem_bytes: elem,
            block_threads: policy.block_threads,
            items_per_thread: policy.items_per_thread,
            vector_bytes: policy.vector_bytes,
            look_back_window: policy.look_back_window,
            l2_prefetch_tiles: policy.l2_prefetch_tiles,
            first_wave_bytes_per_ns: policy.first_wave_bytes_per_ns,
            min_blocks_per_sm: built.min_blocks_per_sm,
            staged: policy.stage_items,
            resident: policy.resident_tiles,
            thread_runs: built.thread_runs,
            packed_access_bytes: built.packed_access_bytes,
            defer_tile_prefix: built.defer_tile_prefix,
            deferred_scan_rereads_run: built.deferred_scan_rereads_run,
            scan_ms,
            copy_ms,
            fraction_of_copy: copy_ms / scan_ms,
        });
    }
    Ok(())
}

/// Each of `shapes` once per value of one axis, set by `set`.
fn vary<T: Copy>(
    shapes: Vec<TuningPolicy>,
    values: &[T],
    set: impl Fn(&mut TuningPolicy, T),
) -> Vec<TuningPolicy> {
    shapes
        .into_iter()
        .flat_map(|p| {
            let set = &set;
            values.iter().map(move |&v| {
                let mut p = p;
                set(&mut p, v);
                p
            })
        })
        .collect()
}
