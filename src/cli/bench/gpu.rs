//! GPU timing: each case is timed with CUDA events around one scan, beside a
//! device-to-device copy of the same bytes, alternating so both see the same clocks.

use super::report::{median, mode_label, BenchRow};
use super::sample::Sample;
use super::{BenchArgs, Progress};
use crate::cli::struct_ops::op_type_pairs;
use crate::cli::typed_ops::with_op;
use scangen::runtime::cudarc::driver::{sys, CudaSlice, CudaStream, DeviceRepr};
use scangen::runtime::{Gpu, ScanError, ScanOptions, Scanner};
use scangen::{Algorithm, ScanMode, ScanOp};
use std::sync::Arc;

pub fn run(
    args: &BenchArgs,
    algorithms: &[Algorithm],
    sizes: &[u64],
) -> Result<(String, Vec<BenchRow>), Box<dyn std::error::Error>> {
    run_pairs(args, algorithms, sizes, &op_type_pairs(&args.op, &args.ty))
}

/// [`run`] for the given (operator, type) pairs instead of `args.op` x `args.ty`.
pub fn run_pairs(
    args: &BenchArgs,
    algorithms: &[Algorithm],
    sizes: &[u64],
    pairs: &[(String, String)],
) -> Result<(String, Vec<BenchRow>), Box<dyn std::error::Error>> {
    let gpu = Gpu::new(0)?;
    // cudarc's per-buffer event tracking records events on every access: fine for safety in
    // general code, but it would be timed here as part of each scan.
    unsafe { gpu.context().disable_event_tracking() };
    let stream = gpu.new_stream()?;
    let device = gpu.backend_name();
    let mode = if args.exclusive {
        ScanMode::Exclusive
    } else {
        ScanMode::Inclusive
    };

    let total = pairs.len() * algorithms.len() * sizes.len();
    let mut progress = Progress::new(total);
    let mut rows = Vec::new();
    for (op, ty) in pairs {
        let ctx = Ctx {
            gpu: &gpu,
            stream: &stream,
            args,
            algorithms,
            sizes,
            mode,
        };
        let found = with_op!(op.as_str(), ty.as_str(), O => Some(bench_op::<O>(&ctx, op, ty, &mut progress, &mut rows)), None);
        match found {
            Some(result) => result?,
            None => eprintln!("skipping {op} on {ty}: no such operator"),
        }
    }
    Ok((device, rows))
}

struct Ctx<'a> {
    gpu: &'a Gpu,
    stream: &'a Arc<CudaStream>,
    args: &'a BenchArgs,
    algorithms: &'a [Algorithm],
    sizes: &'a [u64],
    mode: ScanMode,
}

fn bench_op<O: ScanOp>(
    ctx: &Ctx,
    op: &str,
    ty: &str,
    progress: &mut Progress,
    rows: &mut Vec<BenchRow>,
) -> Result<(), Box<dyn std::error::Error>>
where
    O::Elem: Sample,
{
    let elem = std::mem::size_of::<O::Elem>();
    let budget = (ctx.args.max_gib * (1u64 << 30) as f64) as u64;
    // Input and output buffers for the largest size that fits (plus scan temporaries, which
    // are small), filled once; smaller sizes use prefixes of them.
    let offset = ctx.args.offset;
    let out_offset = ctx.args.out_offset.unwrap_or(offset);
    let max_n = ctx
        .sizes
        .iter()
        .copied()
        .filter(|&n| (2 * n + (offset + out_offset) as u64) * elem as u64 <= budget)
        .max()
        .unwrap_or(0);
    if max_n == 0 {
        return Ok(());
    }
    let input: CudaSlice<O::Elem> = sample_buffer(ctx.stream, max_n + offset as u64)?;
    let mut output: CudaSlice<O::Elem> = unsafe { ctx.stream.alloc(max_n as usize + out_offset) }
        .map_err(|e| driver("allocating bench output", e))?;
    for &algorithm in ctx.algorithms {
        let mut opts = ScanOptions::default().algorithm(algorithm).mode(ctx.mode);
        if ctx.args.reverse {
            opts = opts.reverse();
        }
        let mut scanner = ctx.gpu.scanner::<O>(opts)?;
        for &n in ctx.sizes {
            progress.step(&format!("{algorithm} {op} {ty} n={n}"));
            if n > max_n || n == 0 {
                continue;
            }
            let (scan_ms, copy_ms) = time_case(
                ctx.stream,
                &mut scanner,
                &input,
                &mut output,
                (offset..offset + n as usize, out_offset),
                ctx.args.warmup,
                ctx.args.reps,
            )?;
            rows.push(BenchRow {
                algorithm: algorithm.name().into(),
                op: op.into(),
                ty: ty.into(),
                mode: offset_label(mode_label(ctx.mode, ctx.args.reverse), offset, out_offset),
                n,
                elem_bytes: elem,
                scan_ms,
                copy_ms,
            });
        }
    }
    Ok(())
}

/// Median milliseconds of a scan of the elements `range` of `input` into as many elements of
/// `output` from `out_start` (`at`), and of a device-to-device copy of the same bytes,
/// alternating so both see the same clocks.
pub fn time_case<O: ScanOp>(
    stream: &Arc<CudaStream>,
    scanner: &mut Scanner<O>,
    input: &CudaSlice<O::Elem>,
    output: &mut CudaSlice<O::Elem>,
    at: (std::ops::Range<usize>, usize),
    warmup: usize,
    reps: usize,
) -> Result<(f64, f64), ScanError>
where
    O::Elem: DeviceRepr,
{
    let (range, out_start) = at;
    let mut out_view = output.slice_mut(out_start..out_start + range.len());
    let in_view = input.slice(range);
    let mut scan_ms = Vec::with_capacity(reps);
    let mut copy_ms = Vec::with_capacity(reps);
    for _ in 0..warmup {
        scanner.scan_device(stream, &in_view, &mut out_view)?;
    }
    for _ in 0..reps.max(1) {
        scan_ms.push(time(stream, || {
            scanner.scan_device(stream, &in_view, &mut out_view)
        })?);
        copy_ms.push(time(stream, || {
            stream
                .memcpy_dtod(&in_view, &mut out_view)
                .map_err(|e| driver("device copy", e))
        })?);
    }
    Ok((median(&mut scan_ms), median(&mut copy_ms)))
}

/// A row's mode, with the buffers' offsets (`--offset`, `--out-offset`) where there are any:
/// `+1` both, `+1/+0` input and output apart.
fn offset_label(mode: String, offset: usize, out_offset: usize) -> String {
    match (offset, out_offset) {
        (0, 0) => mode,
        (a, b) if a == b => format!("{mode} +{a}"),
        (a, b) => format!("{mode} +{a}/+{b}"),
    }
}

/// Fills a device buffer of `n` benchmark elements.
pub fn sample_buffer<T: Sample>(
    stream: &Arc<CudaStream>,
    n: u64,
) -> Result<CudaSlice<T>, ScanError> {
    let host: Vec<T> = (0..n).map(T::sample).collect();
    stream
        .clone_htod(&host)
        .map_err(|e| driver("copying bench input", e))
}

/// Milliseconds between CUDA events recorded around `work` on `stream` (behind the
/// `--device-time` hold when it is on: hold.rs), or under `--host-time` the host's wall time of
/// `work` itself, behind the hold, with the stream drained after it.
pub fn time(
    stream: &Arc<CudaStream>,
    work: impl FnOnce() -> Result<(), ScanError>,
) -> Result<f64, ScanError> {
    super::hold::before_timed_work(stream)?;
    if super::hold::ruler() == super::hold::Ruler::HostTime {
        let started = std::time::Instant::now();
        work()?;
        let ms = started.elapsed().as_secs_f64() * 1e3;
        stream
            .synchronize()
            .map_err(|e| driver("waiting for the timed work", e))?;
        return Ok(ms);
    }
    let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let start = stream
        .record_event(flags)
        .map_err(|e| driver("recording a timing event", e))?;
    work()?;
    let end = stream
        .record_event(flags)
        .map_err(|e| driver("recording a timing event", e))?;
    let ms = start
        .elapsed_ms(&end)
        .map_err(|e| driver("reading a timing event", e))?;
    Ok(ms as f64)
}

pub fn driver(
    step: &'static str,
    source: scangen::runtime::cudarc::driver::DriverError,
) -> ScanError {
    ScanError::Driver { step, source }
}
