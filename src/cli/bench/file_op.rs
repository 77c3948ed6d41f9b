//! `scangen bench --file ops.rs --op X`: a user's operator timed beside a copy of the same
//! bytes. On the GPU (the default) its generated kernels run through the runtime's
//! `ByteScanner`, fused with its `lift`/`project` when it has them, for each `--algo`; with
//! `--backend cpu` the evaluator of its lowered IR runs instead.

use super::gpu::{driver, time};
use super::report::{median, BenchRow};
use super::{BackendArg, BenchArgs, Progress};
use crate::cli::op_source::OpSource;
use scangen::laws::{sampler::Rng, BitPatterns, ElementSampler};
use scangen::runtime::cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use scangen::runtime::{Gpu, ScanOptions};
use scangen::{Algorithm, ScanMode};
use std::time::Instant;

fn source_of(args: &BenchArgs) -> Result<OpSource, Box<dyn std::error::Error>> {
    let [op] = args.op.as_slice() else {
        return Err("bench --file takes one operator: --op NAME".into());
    };
    Ok(OpSource {
        op: op.clone(),
        ty: String::new(),
        file: args.file.clone(),
    })
}

pub fn run(
    args: &BenchArgs,
    algorithms: &[Algorithm],
    sizes: &[u64],
) -> Result<(String, Vec<BenchRow>), Box<dyn std::error::Error>> {
    match args.backend {
        BackendArg::Gpu => run_gpu(args, algorithms, sizes),
        BackendArg::Cpu => run_cpu(args, sizes),
    }
}

/// The operator's generated kernels on device 0, each size timed with CUDA events beside a
/// device-to-device copy that moves as many bytes as the scan reads and writes (the inputs'
/// values plus the outputs, per position: for a fused scan they differ from the element).
fn run_gpu(
    args: &BenchArgs,
    algorithms: &[Algorithm],
    sizes: &[u64],
) -> Result<(String, Vec<BenchRow>), Box<dyn std::error::Error>> {
    let source = source_of(args)?;
    let op = &source.op;
    let gpu = Gpu::new(0)?;
    // As in the built-in benchmark: cudarc's per-buffer events would be timed with each scan.
    unsafe { gpu.context().disable_event_tracking() };
    let stream = gpu.new_stream()?;
    let mode = if args.exclusive {
        ScanMode::Exclusive
    } else {
        ScanMode::Inclusive
    };
    let mut scanners = Vec::new();
    for &algorithm in algorithms {
        let opts = ScanOptions::default().algorithm(algorithm).mode(mode);
        scanners.push((algorithm, source.byte_scanner(&gpu, opts)?));
    }
    let Some((_, first)) = scanners.first() else {
        return Ok((gpu.backend_name(), Vec::new()));
    };
    let input_sizes = first.input_sizes().to_vec();
    let output_size = first.output_size();
    // Bytes per position the scan moves, split as a copy moves them (read + write).
    let moved: usize = input_sizes.iter().sum::<usize>() + output_size;
    let copy_bytes = moved.div_ceil(2);
    let eval = source.evaluator()?;
    let ty = if eval.has_transform() {
        format!("{input_sizes:?}B -> {output_size}B")
    } else {
        eval.element().c_name().to_string()
    };
    let budget = (args.max_gib * (1u64 << 30) as f64) as u64;
    let max_n = sizes
        .iter()
        .copied()
        .filter(|&n| n * (moved + 2 * copy_bytes) as u64 <= budget)
        .max()
        .unwrap_or(0);
    if max_n == 0 {
        return Ok((gpu.backend_name(), Vec::new()));
    }
    // Random bits: the timing does not depend on the values for these kernels, and any bit
    // pattern is a valid input.
    let mut rng = Rng::new(0x5eed);
    let mut inputs: Vec<CudaSlice<u8>> = Vec::new();
    for &size in &input_sizes {
        let host = random_bytes(&mut rng, max_n as usize * size);
        inputs.push(
            stream
                .clone_htod(&host)
                .map_err(|e| driver("copying bench input", e))?,
        );
    }
    let alloc = |bytes: u64| {
        // SAFETY: written by the scans or copies before anything reads it.
        unsafe { stream.alloc::<u8>(bytes as usize) }
            .map_err(|e| driver("allocating bench buffers", e))
    };
    let mut output = alloc(max_n * output_size as u64)?;
    let copy_src = alloc(max_n * copy_bytes as u64)?;
    let mut copy_dst = alloc(max_n * copy_bytes as u64)?;
    let mut progress = Progress::new(scanners.len() * sizes.len());
    let mut rows = Vec::new();
    for (algorithm, scanner) in &mut scanners {
        scanner.prepare(max_n, &stream)?;
        for &n in sizes {
            progress.step(&format!("{algorithm} {op} n={n}"));
            if n == 0 || n > max_n {
                continue;
            }
            let in_ptrs: Vec<_> = inputs.iter().map(|b| b.device_ptr(&stream).0).collect();
            let out_ptr = output.device_ptr_mut(&stream).0;
            let mut scan = || {
                // SAFETY: every input buffer holds `max_n >= n` values of its size and the
                // output `max_n` outputs, all on `stream`, alive for the whole loop.
                unsafe { scanner.scan_device_ptr(&stream, &in_ptrs, out_ptr, n) }
            };
            let bytes = n as usize * copy_bytes;
            let (src, mut dst) = (copy_src.slice(..bytes), copy_dst.slice_mut(..bytes));
            for _ in 0..args.warmup {
                scan()?;
            }
            let (mut scan_ms, mut copy_ms) = (Vec::new(), Vec::new());
            for _ in 0..args.reps.max(1) {
                scan_ms.push(time(&stream, &mut scan)?);
                copy_ms.push(time(&stream, || {
                    stream
                        .memcpy_dtod(&src, &mut dst)
                        .map_err(|e| driver("device copy", e))
                })?);
            }
            rows.push(BenchRow {
                algorithm: algorithm.name().into(),
                op: op.clone(),
                ty: ty.clone(),
                mode: mode.name().into(),
                n,
                elem_bytes: copy_bytes,
                scan_ms: median(&mut scan_ms),
                copy_ms: median(&mut copy_ms),
            });
        }
    }
    Ok((gpu.backend_name(), rows))
}

/// The evaluator of the operator's IR on one CPU thread, beside a host copy of as many bytes as
/// the scan reads and writes per position. An operator with `lift`/`project` runs its fused
/// scan of random input arrays (any bit pattern is an input); others scan sampled elements.
fn run_cpu(
    args: &BenchArgs,
    sizes: &[u64],
) -> Result<(String, Vec<BenchRow>), Box<dyn std::error::Error>> {
    let source = source_of(args)?;
    let op = &source.op;
    let eval = source.evaluator()?;
    let element = eval.element().clone();
    let transform = eval.has_transform();
    let (input_sizes, output_size, ty) = if transform {
        let inputs: Vec<usize> = eval.input_layouts()?.iter().map(|l| l.size).collect();
        let output = eval.output_layout()?.size;
        let ty = format!("{inputs:?}B -> {output}B");
        (inputs, output, ty)
    } else {
        (
            vec![element.size()],
            element.size(),
            element.c_name().to_string(),
        )
    };
    let copy_bytes = (input_sizes.iter().sum::<usize>() + output_size).div_ceil(2);
    let mut sampler = BitPatterns::new(element);
    let mut rng = Rng::new(0x5eed);
    let mut progress = Progress::new(sizes.len());
    let mut rows = Vec::new();
    for &n in sizes {
        progress.step(&format!("cpu evaluator {op} n={n}"));
        let bytes = n.saturating_mul(copy_bytes as u64);
        if n == 0 || 2 * bytes > (args.max_gib * (1u64 << 30) as f64) as u64 {
            continue;
        }
        let arrays: Vec<Vec<u8>> = if transform {
            input_sizes
                .iter()
                .map(|&size| random_bytes(&mut rng, n as usize * size))
                .collect()
        } else {
            vec![(0..n).flat_map(|_| sampler.sample(&mut rng)).collect()]
        };
        let views: Vec<&[u8]> = arrays.iter().map(|a| a.as_slice()).collect();
        let mut output = vec![0u8; n as usize * output_size];
        let source = vec![1u8; bytes as usize];
        let mut target = vec![0u8; bytes as usize];
        // The evaluator walks the IR: a few million elements a second, so few repetitions.
        let (mut copy, mut scan) = (Vec::new(), Vec::new());
        for _ in 0..args.reps.clamp(1, 3) {
            let t = Instant::now();
            target.copy_from_slice(&source);
            copy.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            if transform {
                std::hint::black_box(eval.transform_scan(&views, args.exclusive)?);
            } else {
                eval.scan(views[0], &mut output, args.exclusive, 0, &mut |_| {})?;
            }
            scan.push(t.elapsed().as_secs_f64() * 1e3);
        }
        rows.push(BenchRow {
            algorithm: "cpu-evaluator".into(),
            op: op.clone(),
            ty: ty.clone(),
            mode: if args.exclusive {
                "exclusive"
            } else {
                "inclusive"
            }
            .into(),
            n,
            elem_bytes: copy_bytes,
            scan_ms: median(&mut scan),
            copy_ms: median(&mut copy),
        });
    }
    Ok((
        "CPU, the evaluator of the operator's IR (one thread)".into(),
        rows,
    ))
}

/// `len` random bytes: benchmark inputs, where any bit pattern is a valid value.
fn random_bytes(rng: &mut Rng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.next() as u8).collect()
}
