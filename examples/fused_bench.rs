//! Fused lift/scan/project against the unfused pipeline a user writes without it (a kernel that
//! materializes the lifted elements, the plain scan of them, a kernel that projects), for
//! Kadane's maximum subarray (`i64` in, 32-byte element, `i64` best out) and a running argmin
//! (`f32` in, `{f32, u64}` element, `u64` index out). Both as a fraction of a device copy of the
//! same bytes (inputs read + outputs written), measured in the same run; each result is checked
//! against the CPU once per size.
//!
//! ```sh
//! cargo run --release --example fused_bench -- 20,24,28 20
//! ```
//!
//! Arguments: log2 of the sizes (default 20,24,28) and repetitions (default 20; the median is
//! reported). `--policies 128x8x6,256x16p48r2` times the fused scans alone under each launch
//! shape (threads x items per thread x blocks per SM of the register cap, then the L2 prefetch
//! distance in tiles and the runs per thread). `--ops argmin,kadane` picks the operators and
//! their order (default `kadane,argmin`): each one's buffers are freed before the next starts,
//! but what ran before can still move a measurement (`BENCHMARKS.md`). Without a GPU it says so
//! and exits 0. The unfused kernels are written by hand in CUDA here on purpose: they are what a
//! user writes today.

use rand::{rngs::StdRng, Rng, SeedableRng};
use scangen::runtime::cudarc::driver::sys::CUevent_flags;
use scangen::runtime::cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg,
};
use scangen::runtime::cudarc::nvrtc::compile_ptx;
use scangen::runtime::{Algorithm, CpuScanner, Gpu, ScanExtras, ScanOptions, TuningPolicy};
use std::sync::Arc;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

// The operators of the kadane and running_argmin examples, shared rather than copied.
#[path = "kadane.rs"]
#[allow(dead_code)]
mod kadane;
#[path = "running_argmin.rs"]
#[allow(dead_code)]
mod running_argmin;
use kadane::{Kad, Kadane};
use running_argmin::{ArgMin, MinAt};

/// The unfused pipeline's map kernels, as a user writes them.
const MAPS: &str = r#"
struct Kad { long long best, prefix, suffix, total; };
struct MinAt { float value; unsigned long long index; };
extern "C" __global__ void kadane_lift(const long long* x, Kad* e, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        long long v = x[i];
        e[i] = Kad{v, v, v, v};
    }
}
extern "C" __global__ void kadane_project(const Kad* e, long long* y, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        y[i] = e[i].best;
    }
}
// The fused scans' rooflines: one kernel that reads the inputs and writes the outputs with no
// scan between (argmin writes 8 bytes for each 4 read, which a copy of the same bytes does not).
extern "C" __global__ void kadane_map(const long long* x, long long* y, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        y[i] = x[i];
    }
}
extern "C" __global__ void argmin_map(const float* x, unsigned long long* y, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        y[i] = __float_as_uint(x[i]);
    }
}
extern "C" __global__ void argmin_lift(const float* x, MinAt* e, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        e[i] = MinAt{x[i], i};
    }
}
extern "C" __global__ void argmin_project(const MinAt* e, unsigned long long* y, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        y[i] = e[i].index;
    }
}
"#;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Milliseconds of `f` on `stream`, timed with events, median of `reps` after two warm-ups.
fn time(stream: &Arc<CudaStream>, reps: usize, mut f: impl FnMut() -> Res<()>) -> Res<f64> {
    let mut samples = Vec::new();
    for rep in 0..reps + 2 {
        let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        f()?;
        let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        let ms = start.elapsed_ms(&end)? as f64;
        if rep >= 2 {
            samples.push(ms);
        }
    }
    Ok(median(samples))
}

/// A copy of `bytes` bytes on `stream` (the yardstick), timed.
fn copy_ms(stream: &Arc<CudaStream>, bytes: usize, reps: usize) -> Res<f64> {
    let src = stream.alloc_zeros::<u8>(bytes)?;
    let mut dst = stream.alloc_zeros::<u8>(bytes)?;
    time(stream, reps, || {
        stream.memcpy_dtod(&src, &mut dst)?;
        Ok(())
    })
}

/// Milliseconds of `map(x, y, n)`, one of MAPS' roofline kernels, over the whole buffers.
fn time_map<I: DeviceRepr, O: DeviceRepr>(
    stream: &Arc<CudaStream>,
    reps: usize,
    map: &CudaFunction,
    x: &CudaSlice<I>,
    y: &mut CudaSlice<O>,
) -> Res<f64> {
    let n = x.len();
    let n64 = n as u64;
    time(stream, reps, || {
        let mut m = stream.launch_builder(map);
        m.arg(x).arg(&mut *y).arg(&n64);
        // SAFETY: the kernels' signature (input, output, n); buffers of n elements.
        unsafe { m.launch(grid(n)) }?;
        Ok(())
    })
}

fn grid(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (((n as u64).div_ceil(256)).clamp(1, 132 * 16) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The `--policies` spelling of `p` (`parse_policy`'s inverse).
fn policy_name(p: &TuningPolicy) -> String {
    format!(
        "{}x{}x{}p{}r{}",
        p.block_threads,
        p.items_per_thread,
        p.min_blocks_per_sm,
        p.l2_prefetch_tiles,
        p.thread_runs
    )
}

/// `THREADSxITEMS[xBLOCKS][pTILES][rRUNS]` (blocks per SM of the register cap, 1 = none; L2
/// prefetch distance in tiles, 0 = off; runs per thread, 1 = one chain) as a policy of the
/// default shape otherwise.
fn parse_policy(text: &str) -> Res<TuningPolicy> {
    let (text, thread_runs) = match text.split_once('r') {
        Some((rest, runs)) => (rest, runs.trim().parse()?),
        None => (text, 1),
    };
    let (shape, prefetch) = match text.split_once('p') {
        Some((shape, tiles)) => (shape, tiles.trim().parse()?),
        None => (text, 0),
    };
    let parts: Vec<u32> = shape
        .split('x')
        .map(|p| p.trim().parse())
        .collect::<Result<_, _>>()?;
    let (threads, items, blocks) = match parts[..] {
        [t, i] => (t, i, 1),
        [t, i, b] => (t, i, b),
        _ => return Err(format!("policy {text:?}: THREADSxITEMS[xBLOCKS]").into()),
    };
    let default = TuningPolicy::for_target(90, Algorithm::SinglePass, 32);
    Ok(TuningPolicy {
        block_threads: threads,
        items_per_thread: items,
        min_blocks_per_sm: blocks,
        l2_prefetch_tiles: prefetch,
        thread_runs,
        ..default
    })
}

struct Row {
    op: String,
    log2: u32,
    fused_ms: f64,
    unfused_ms: f64,
    /// One map kernel moving the same bytes (inputs read, outputs written).
    map_ms: f64,
    copy_ms: f64,
}

impl Row {
    fn fused_only(op: &str, p: TuningPolicy, log2: u32, fused_ms: f64, copy_ms: f64) -> Row {
        let op = format!("{op} {}", policy_name(&p));
        Row {
            op,
            log2,
            fused_ms,
            unfused_ms: f64::NAN,
            map_ms: f64::NAN,
            copy_ms,
        }
    }

    fn print(&self) {
        println!(
            "| {} | 2^{} | {:.1} | {:.1} | {:.3} | {:.3} | {:.3} | {:.2}x |",
            self.op,
            self.log2,
            self.fused_ms * 1e3,
            self.unfused_ms * 1e3,
            self.copy_ms / self.fused_ms,
            self.copy_ms / self.unfused_ms,
            self.copy_ms / self.map_ms,
            self.unfused_ms / self.fused_ms
        );
    }
}

/// Options of the fused scan: the default policy, or one from `--policies` (a sweep of the
/// fused scans alone, to tune the policy by).
fn fused_options(policy: Option<TuningPolicy>) -> ScanOptions {
    ScanOptions {
        policy,
        ..ScanOptions::default()
    }
}

fn kadane(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    log2: u32,
    reps: usize,
    policy: Option<TuningPolicy>,
) -> Res<Row> {
    const OP: &str = "kadane i64 -> i64";
    let n = 1usize << log2;
    let mut rng = StdRng::seed_from_u64(0x6b0 + log2 as u64);
    let host: Vec<i64> = (0..n)
        .map(|_| rng.gen_range(-1_000_000..1_000_000))
        .collect();
    let x = stream.clone_htod(&host)?;
    let mut y: CudaSlice<i64> = stream.alloc_zeros(n)?;
    let mut fused = gpu.transform_scanner::<Kadane>(fused_options(policy))?;
    fused.scanner().prepare(n as u64, stream)?;
    let fused_ms = time(stream, reps, || {
        fused.transform_scan_device(stream, &x, &mut y, ScanExtras::default())?;
        Ok(())
    })?;
    let want = CpuScanner::<Kadane>::new(ScanOptions::default()).transform_scan(host.as_slice())?;
    if stream.clone_dtoh(&y)? != want {
        return Err(format!("fused Kadane at 2^{log2} differs from the CPU").into());
    }
    if let Some(policy) = policy {
        return Ok(Row::fused_only(
            OP,
            policy,
            log2,
            fused_ms,
            copy_ms(stream, 8 * n, reps)?,
        ));
    }
    // Unfused: lift kernel, plain scan of the 32-byte elements, project kernel.
    let module = gpu.context().load_module(compile_ptx(MAPS)?)?;
    let (lift, project, map) = (
        module.load_function("kadane_lift")?,
        module.load_function("kadane_project")?,
        module.load_function("kadane_map")?,
    );
    let mut lifted: CudaSlice<Kad> = stream.alloc_zeros(n)?;
    let mut scanned: CudaSlice<Kad> = stream.alloc_zeros(n)?;
    let mut plain =
        gpu.scanner::<Kadane>(ScanOptions::default().algorithm(Algorithm::SinglePass))?;
    plain.prepare(n as u64, stream)?;
    let n64 = n as u64;
    let unfused_ms = time(stream, reps, || {
        let mut l = stream.launch_builder(&lift);
        l.arg(&x).arg(&mut lifted).arg(&n64);
        // SAFETY: the kernel's signature; buffers of n elements.
        unsafe { l.launch(grid(n)) }?;
        plain.scan_device(stream, &lifted, &mut scanned)?;
        let mut p = stream.launch_builder(&project);
        p.arg(&scanned).arg(&mut y).arg(&n64);
        // SAFETY: as above.
        unsafe { p.launch(grid(n)) }?;
        Ok(())
    })?;
    if stream.clone_dtoh(&y)? != want {
        return Err(format!("unfused Kadane at 2^{log2} differs from the CPU").into());
    }
    let map_ms = time_map(stream, reps, &map, &x, &mut y)?;
    // Bytes of the fused ideal: 8 read + 8 written per element; a copy of 8n bytes moves that.
    let copy = copy_ms(stream, 8 * n, reps)?;
    Ok(Row {
        op: OP.into(),
        log2,
        fused_ms,
        unfused_ms,
        map_ms,
        copy_ms: copy,
    })
}

fn argmin(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    log2: u32,
    reps: usize,
    policy: Option<TuningPolicy>,
) -> Res<Row> {
    const OP: &str = "argmin f32 -> u64";
    let n = 1usize << log2;
    let mut rng = StdRng::seed_from_u64(0xa5 + log2 as u64);
    let host: Vec<f32> = (0..n)
        .map(|_| rng.gen_range(1..40_000) as f32 * 0.5)
        .collect();
    let x = stream.clone_htod(&host)?;
    let mut y: CudaSlice<u64> = stream.alloc_zeros(n)?;
    let mut fused = gpu.transform_scanner::<ArgMin>(fused_options(policy))?;
    fused.scanner().prepare(n as u64, stream)?;
    let fused_ms = time(stream, reps, || {
        fused.transform_scan_device(stream, &x, &mut y, ScanExtras::default())?;
        Ok(())
    })?;
    let want = CpuScanner::<ArgMin>::new(ScanOptions::default()).transform_scan(host.as_slice())?;
    if stream.clone_dtoh(&y)? != want {
        return Err(format!("fused argmin at 2^{log2} differs from the CPU").into());
    }
    if let Some(policy) = policy {
        return Ok(Row::fused_only(
            OP,
            policy,
            log2,
            fused_ms,
            copy_ms(stream, 6 * n, reps)?,
        ));
    }
    let module = gpu.context().load_module(compile_ptx(MAPS)?)?;
    let (lift, project, map) = (
        module.load_function("argmin_lift")?,
        module.load_function("argmin_project")?,
        module.load_function("argmin_map")?,
    );
    let mut lifted: CudaSlice<MinAt> = stream.alloc_zeros(n)?;
    let mut scanned: CudaSlice<MinAt> = stream.alloc_zeros(n)?;
    let mut plain = gpu.scanner::<ArgMin>(ScanOptions::default())?;
    plain.prepare(n as u64, stream)?;
    let n64 = n as u64;
    let unfused_ms = time(stream, reps, || {
        let mut l = stream.launch_builder(&lift);
        l.arg(&x).arg(&mut lifted).arg(&n64);
        // SAFETY: the kernel's signature; buffers of n elements.
        unsafe { l.launch(grid(n)) }?;
        plain.scan_device(stream, &lifted, &mut scanned)?;
        let mut p = stream.launch_builder(&project);
        p.arg(&scanned).arg(&mut y).arg(&n64);
        // SAFETY: as above.
        unsafe { p.launch(grid(n)) }?;
        Ok(())
    })?;
    if stream.clone_dtoh(&y)? != want {
        return Err(format!("unfused argmin at 2^{log2} differs from the CPU").into());
    }
    let map_ms = time_map(stream, reps, &map, &x, &mut y)?;
    // 4 bytes read + 8 written per element: a copy of 6n bytes moves as much.
    let copy = copy_ms(stream, 6 * n, reps)?;
    Ok(Row {
        op: OP.into(),
        log2,
        fused_ms,
        unfused_ms,
        map_ms,
        copy_ms: copy,
    })
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let log2s: Vec<u32> = match args.first() {
        Some(list) => list
            .split(',')
            .map(|s| s.trim().parse())
            .collect::<Result<_, _>>()?,
        None => vec![20, 24, 28],
    };
    let reps: usize = match args.get(1) {
        Some(r) => r.parse()?,
        None => 20,
    };
    let policies: Vec<TuningPolicy> = match args.iter().position(|a| a == "--policies") {
        Some(i) => args
            .get(i + 1)
            .ok_or("--policies needs a list")?
            .split(',')
            .map(parse_policy)
            .collect::<Res<_>>()?,
        None => Vec::new(),
    };
    type Bench = fn(&Gpu, &Arc<CudaStream>, u32, usize, Option<TuningPolicy>) -> Res<Row>;
    let ops: Vec<Bench> = match args.iter().position(|a| a == "--ops") {
        Some(i) => args
            .get(i + 1)
            .ok_or("--ops needs a list")?
            .split(',')
            .map(|name| match name.trim() {
                "kadane" => Ok(kadane as Bench),
                "argmin" => Ok(argmin as Bench),
                other => Err(format!(
                    "--ops: unknown operator {other:?} (kadane, argmin)"
                )),
            })
            .collect::<Result<_, _>>()?,
        None => vec![kadane, argmin],
    };
    let gpu = match Gpu::new(0) {
        Ok(gpu) => gpu,
        Err(e) => {
            println!("fused_bench: no GPU here ({e}); nothing to measure");
            return Ok(());
        }
    };
    let stream = gpu.new_stream()?;
    println!(
        "fused against unfused on {} (results checked against the CPU)",
        gpu.name()
    );
    println!(
        "| op | n | fused us | unfused us | fused / copy | unfused / copy | map / copy | speedup |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for &log2 in &log2s {
        if policies.is_empty() {
            for run in &ops {
                run(&gpu, &stream, log2, reps, None)?.print();
            }
        }
        // A sweep: the fused scans alone under each policy (a shape the scanner refuses, or
        // that fails, is reported and skipped).
        for &policy in &policies {
            for run in &ops {
                match run(&gpu, &stream, log2, reps, Some(policy)) {
                    Ok(row) => row.print(),
                    Err(e) => println!("| {} | 2^{log2} | failed: {e} |", policy_name(&policy)),
                }
            }
        }
    }
    println!(
        "\nfraction = time of a device copy of the same bytes (inputs read + outputs written) / \
         time of the pipeline; unfused = lift kernel + plain scan + project kernel; map = one \
         kernel reading the inputs and writing the outputs, no scan (the fused scan's roofline)."
    );
    Ok(())
}
