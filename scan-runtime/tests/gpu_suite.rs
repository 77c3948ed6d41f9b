//! The GPU suite: every built-in op x type x algorithm x mode, in place and out of place,
//! against the CPU reference, plus large inputs, a non-commutative struct op, and the runtime's
//! own contracts (length checks, n = 0, scratch growth, several streams).
//!
//! Every test needs an NVIDIA GPU, so all are `#[ignore]`d: a plain `cargo test` on a machine
//! without one reports them as ignored (never as passed). On the GPU machine run them with
//! `--ignored` (see scripts/build-gpu-bundle.sh); run that way without a GPU they FAIL, saying
//! what is missing.
//!
//! Each test loops over its cases, prints every failure (op, type, algorithm, mode, n, in place
//! or not, first mismatching index, expected and got) and a summary line
//! `gpu suite (<test>): N cases passed, M failed`, then asserts M == 0.

use scan_core::BuiltinOp;
use scan_runtime::builtin::{Add, And, Max, Min, Mul, Or, Xor};
use scan_runtime::cpu;
use scan_runtime::cudarc::driver::{CudaSlice, CudaStream, DeviceRepr};
use scan_runtime::{
    Algorithm, Gpu, ScanError, ScanMode, ScanOp, ScanOptions, Scanner, TuningPolicy,
};
use std::sync::Arc;

mod common;
use common::ops::{
    Affine, ByteAffine, Compose, Compose64, ComposeBytes, ComposeCounted, LastOfRun, MatMul, Tally,
};
use common::segments::reference;
use common::{first_mismatch, opts, walk_steps, Build, Rng, TestValue};
use scan_core::half::{bf16, f16};

// ---------------------------------------------------------------------------------------------
// Harness

/// The GPU, or a failure that says what is missing.
fn gpu() -> Gpu {
    common::gpu("gpu suite")
}

#[derive(Default)]
struct Report {
    passed: usize,
    failures: Vec<String>,
}

impl Report {
    fn fail(&mut self, what: String) {
        println!("FAIL {what}");
        self.failures.push(what);
    }

    fn record(&mut self, case: &str, result: Result<(), String>) {
        match result {
            Ok(()) => self.passed += 1,
            Err(why) => self.fail(format!("{case}: {why}")),
        }
    }

    fn finish(self, test: &str) {
        println!(
            "gpu suite ({test}): {} cases passed, {} failed",
            self.passed,
            self.failures.len()
        );
        assert!(
            self.failures.is_empty(),
            "{} of {} cases failed in {test}",
            self.failures.len(),
            self.passed + self.failures.len()
        );
    }
}

fn sizes(tile: u64) -> Vec<u64> {
    vec![
        0,
        1,
        2,
        31,
        32,
        33,
        tile - 1,
        tile,
        tile + 1,
        997,
        65537,
        1_000_003,
        (1 << 20) + 7,
        // Single-pass inputs of fewer default tiles than half the SMs run the small-tile
        // kernel, up to one wave of default tiles (SMs x its blocks per SM) the mid-size one
        // (TuningPolicy::input_size): on any GPU of 160 SMs or fewer, this one is mid-size
        // (past_one_wave_partial_last_tiles covers the default kernel's partial last tile).
        160 * tile + 7,
    ]
}

/// Out of place on the device: separate input and output buffers, `scan_device`.
fn scan_out_of_place<Op: ScanOp>(
    scanner: &mut Scanner<Op>,
    stream: &Arc<CudaStream>,
    input: &[Op::Elem],
) -> Result<Vec<Op::Elem>, String>
where
    Op::Elem: TestValue,
{
    if input.is_empty() {
        return scanner.scan(input).map_err(|e| e.to_string());
    }
    let d_in = stream
        .clone_htod(input)
        .map_err(|e| format!("upload: {e}"))?;
    let mut d_out: CudaSlice<Op::Elem> =
        unsafe { stream.alloc(input.len()) }.map_err(|e| format!("alloc: {e}"))?;
    scanner
        .scan_device(stream, &d_in, &mut d_out)
        .map_err(|e| e.to_string())?;
    let got = stream
        .clone_dtoh(&d_out)
        .map_err(|e| format!("download: {e}"))?;
    stream
        .synchronize()
        .map_err(|e| format!("synchronize: {e}"))?;
    // The input must be untouched.
    if input.len() <= 1 << 20 {
        let after = stream
            .clone_dtoh(&d_in)
            .map_err(|e| format!("download: {e}"))?;
        stream
            .synchronize()
            .map_err(|e| format!("synchronize: {e}"))?;
        // TestValue::same: a NaN input compares unequal to itself with ==.
        if first_mismatch(input, &after).is_err() {
            return Err("out-of-place scan modified its input".into());
        }
    }
    Ok(got)
}

// ---------------------------------------------------------------------------------------------
// Built-in ops

type Run = fn(&Gpu, &mut Report, &str, BuiltinOp);

struct Case {
    label: &'static str,
    op: BuiltinOp,
    build: Build,
    run: Run,
}

/// `gpu`'s scanner of `Op` under `options`, or `None` with the failure recorded against `case`.
fn scanner_or_fail<Op: ScanOp>(
    gpu: &Gpu,
    report: &mut Report,
    case: &str,
    options: ScanOptions,
) -> Option<Scanner<Op>>
where
    Op::Elem: DeviceRepr,
{
    gpu.scanner::<Op>(options)
        .map_err(|e| report.fail(format!("{case}: building the scanner failed: {e}")))
        .ok()
}

fn build<Op: ScanOp>(gpu: &Gpu, opts: ScanOptions) -> Result<(), ScanError>
where
    Op::Elem: DeviceRepr,
{
    let mut scanner = gpu.scanner::<Op>(opts)?;
    // Also the small- and mid-size shapes (built on first use otherwise, one at a time as the
    // runs reach them), so the runs after hit the module cache.
    let stream = gpu.new_stream()?;
    scanner.prepare(1 << 24, &stream)
}

fn run_builtin<Op: ScanOp>(gpu: &Gpu, report: &mut Report, label: &str, op: BuiltinOp)
where
    Op::Elem: TestValue,
{
    run_sizes::<Op>(gpu, report, label, op, sizes)
}

/// Every algorithm and mode of `Op` at `sizes(tile)`, out of place and in place.
fn run_sizes<Op: ScanOp>(
    gpu: &Gpu,
    report: &mut Report,
    label: &str,
    op: BuiltinOp,
    sizes: fn(u64) -> Vec<u64>,
) where
    Op::Elem: TestValue,
{
    let stream = gpu.new_stream().expect("stream");
    for algorithm in Algorithm::ALL {
        for mode in ScanMode::ALL {
            let case = format!("{label} {algorithm} {mode}");
            let Some(mut scanner) =
                scanner_or_fail::<Op>(gpu, report, &case, opts(algorithm, mode))
            else {
                continue;
            };
            let mut rng = Rng::new(&case);
            for n in sizes(scanner.tile_items()) {
                let input: Vec<Op::Elem> = (0..n).map(|_| Op::Elem::random(&mut rng, op)).collect();
                check_scans(
                    &mut scanner,
                    &stream,
                    report,
                    &format!("{case} n={n}"),
                    &input,
                    mode,
                    false,
                );
            }
        }
    }
}

/// Scans `input` out of place and in place (with `unaligned`, also from and into buffers one
/// element past a vector boundary) and records each result against the CPU reference.
fn check_scans<Op: ScanOp>(
    scanner: &mut Scanner<Op>,
    stream: &Arc<CudaStream>,
    report: &mut Report,
    case: &str,
    input: &[Op::Elem],
    mode: ScanMode,
    unaligned: bool,
) where
    Op::Elem: TestValue,
{
    let mut expected = input.to_vec();
    cpu::scan_sequential_in_place::<Op>(&mut expected, mode);
    check_scans_against(scanner, stream, report, case, input, &expected, unaligned);
}

/// [`check_scans`] against a given reference (a reverse scan's, say).
fn check_scans_against<Op: ScanOp>(
    scanner: &mut Scanner<Op>,
    stream: &Arc<CudaStream>,
    report: &mut Report,
    case: &str,
    input: &[Op::Elem],
    expected: &[Op::Elem],
    unaligned: bool,
) where
    Op::Elem: TestValue,
{
    let got = scan_out_of_place(scanner, stream, input);
    report.record(
        &format!("{case} out-of-place"),
        got.and_then(|g| first_mismatch(expected, &g)),
    );
    if unaligned {
        for out_offset in [0, 1] {
            let got = scan_at_offsets(scanner, stream, input, 1, out_offset);
            report.record(
                &format!("{case} input at +1, output at +{out_offset}"),
                got.and_then(|g| first_mismatch(expected, &g)),
            );
        }
    }
    let got = scanner.scan(input).map_err(|e| e.to_string());
    report.record(
        &format!("{case} in-place"),
        got.and_then(|g| first_mismatch(expected, &g)),
    );
}

macro_rules! cases {
    ($($op:ident: [$($t:ty),*];)*) => {
        vec![$($(Case {
            label: concat!(stringify!($op), " ", stringify!($t)),
            op: $op::<$t>::OP,
            build: build::<$op<$t>>,
            run: run_builtin::<$op<$t>>,
        },)*)*]
    };
}

fn builtin_cases() -> Vec<Case> {
    cases! {
        Add: [i8, i16, i32, i64, u8, u16, u32, u64, f32, f64];
        Mul: [i8, i16, i32, i64, u8, u16, u32, u64, f32, f64];
        Min: [i8, i16, i32, i64, u8, u16, u32, u64, f32, f64];
        Max: [i8, i16, i32, i64, u8, u16, u32, u64, f32, f64];
        And: [i8, i16, i32, i64, u8, u16, u32, u64];
        Or: [i8, i16, i32, i64, u8, u16, u32, u64];
        Xor: [i8, i16, i32, i64, u8, u16, u32, u64];
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn builtin_ops_every_type_algorithm_mode() {
    let gpu = gpu();
    let cases = builtin_cases();
    assert_eq!(cases.len(), 7 * 8 + 4 * 2);
    let mut report = Report::default();
    let builds: Vec<(&str, Build)> = cases.iter().map(|c| (c.label, c.build)).collect();
    for failure in common::build_in_parallel(&gpu, &builds, "") {
        report.fail(failure);
    }
    for case in &cases {
        (case.run)(&gpu, &mut report, case.label, case.op);
    }
    report.finish("builtin_ops_every_type_algorithm_mode");
}

// ---------------------------------------------------------------------------------------------
// f16 and bf16 (2-byte elements: vectors of 4, unaligned buffers one element off).

/// Every algorithm, mode and direction of `Op` at `sizes(tile)`, out of place, in place and from
/// and into buffers one element (2 bytes) past a vector boundary, on inputs from `input`. (The
/// register ladder builds suffix scans of half max/min otherwise: seeded where prefix scans read
/// their run back.)
fn run_half_op<Op: ScanOp>(
    gpu: &Gpu,
    report: &mut Report,
    label: &str,
    input: fn(&mut Rng, usize) -> Vec<Op::Elem>,
) where
    Op::Elem: TestValue,
{
    let stream = gpu.new_stream().expect("stream");
    for algorithm in Algorithm::ALL {
        for mode in ScanMode::ALL {
            for reverse in [false, true] {
                let direction = if reverse { "reverse" } else { "forward" };
                let case = format!("{label} {algorithm} {mode} {direction}");
                let options = opts(algorithm, mode);
                let options = if reverse { options.reverse() } else { options };
                let Some(mut scanner) = scanner_or_fail::<Op>(gpu, report, &case, options) else {
                    continue;
                };
                let mut rng = Rng::new(&case);
                for n in sizes(scanner.tile_items()) {
                    // `input` is in scan order (its rules keep NaNs off the first element
                    // scanned): a suffix scan reads it back to front, and its results are the
                    // prefix scan's of that order, back to front.
                    let data = input(&mut rng, n as usize);
                    let case = format!("{case} n={n}");
                    if reverse {
                        let mut expected = data.clone();
                        cpu::scan_sequential_in_place::<Op>(&mut expected, mode);
                        expected.reverse();
                        let reversed: Vec<Op::Elem> = data.into_iter().rev().collect();
                        check_scans_against(
                            &mut scanner,
                            &stream,
                            report,
                            &case,
                            &reversed,
                            &expected,
                            n > 0,
                        );
                    } else {
                        check_scans(&mut scanner, &stream, report, &case, &data, mode, n > 0);
                    }
                }
            }
        }
    }
}

/// Uniform values in [-1, 1) (never zero) with a NaN every 97 elements, which min and max
/// must ignore as Rust's do. Never at index 0: there the scan's result is the element itself
/// (NaN), while a reference folded from the identity gives min(+inf, NaN) = +inf; a NaN breaks
/// the identity law of a NaN-ignoring min, so the two definitions only agree after a number.
fn half_values<T: TestValue>(rng: &mut Rng, n: usize, nan: T) -> Vec<T> {
    let mut v: Vec<T> = (0..n).map(|_| T::random(rng, BuiltinOp::Max)).collect();
    for i in (1..n).step_by(97) {
        v[i] = nan;
    }
    v
}

/// Ties for min and max: -0.0 and +0.0 (equal, and either is kept: `half` keeps the first
/// operand), values on one side of them (`beyond`: the op never picks it over a zero) and NaNs
/// at a seventh of the positions 3 mod 7 (never index 0, as in `half_values`). Every result after the first zero
/// is the first zero of its prefix, so an operand order swapped anywhere shows as a wrong sign.
fn half_ties<T: TestValue + Copy>(
    rng: &mut Rng,
    n: usize,
    zeros: [T; 2],
    beyond: T,
    nan: T,
) -> Vec<T> {
    (0..n)
        .map(|i| match rng.below(7) {
            _ if i == 0 => beyond,
            0 if i % 7 == 3 => nan,
            r if r < 3 => zeros[0],
            r if r < 6 => zeros[1],
            _ => beyond,
        })
        .collect()
}

/// Numbers on the side of zero the op moves toward (`side`: min of non-negative ones, max of
/// non-positive ones), a zero of either sign at about one position in 300, and NaNs as in
/// `half_values`: the running min (max) reaches a zero early and stays there, so most tiles join
/// a zero prefix, most runs and vectors hold no zero and some hold the other one. The packed
/// tiles' word path must turn to item-by-item combines exactly where +0.0 could meet -0.0.
fn half_one_sided<T: TestValue + Copy>(
    rng: &mut Rng,
    n: usize,
    side: fn(T) -> T,
    zeros: [T; 2],
    nan: T,
) -> Vec<T> {
    (0..n)
        .map(|i| {
            let x = side(T::random(rng, BuiltinOp::Max));
            match rng.below(300) {
                _ if i > 0 && i % 97 == 1 => nan,
                0 => zeros[0],
                1 => zeros[1],
                _ => x,
            }
        })
        .collect()
}

fn f16_nonnegative(rng: &mut Rng, n: usize) -> Vec<f16> {
    let abs = |x: f16| f16::from_bits(x.to_bits() & 0x7fff);
    half_one_sided(rng, n, abs, [f16::ZERO, f16::NEG_ZERO], f16::NAN)
}

fn bf16_nonpositive(rng: &mut Rng, n: usize) -> Vec<bf16> {
    let neg = |x: bf16| bf16::from_bits(x.to_bits() | 0x8000);
    half_one_sided(rng, n, neg, [bf16::NEG_ZERO, bf16::ZERO], bf16::NAN)
}

fn f16_ties(rng: &mut Rng, n: usize) -> Vec<f16> {
    half_ties(rng, n, [f16::NEG_ZERO, f16::ZERO], f16::NEG_ONE, f16::NAN)
}

fn bf16_ties(rng: &mut Rng, n: usize) -> Vec<bf16> {
    half_ties(rng, n, [bf16::NEG_ZERO, bf16::ZERO], bf16::ONE, bf16::NAN)
}

/// `add`, `min` and `max` of `f16` and `bf16`, prefix and suffix scans, against the CPU
/// reference, bit for bit. The add inputs are `walk_steps` (every contiguous run sums to a small
/// integer), so no order of combines rounds and the GPU's tree order must give the sequential
/// result exactly: a tolerance is not needed, and would hide the bugs this looks for (lost or
/// doubled tile prefixes, misplaced 2-byte lanes).
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn half_floats_every_algorithm_mode() {
    let gpu = gpu();
    let mut report = Report::default();
    run_half_op::<Add<f16>>(&gpu, &mut report, "add f16", |rng, n| {
        walk_steps(rng, n).into_iter().map(f16::from_f32).collect()
    });
    run_half_op::<Add<bf16>>(&gpu, &mut report, "add bf16", |rng, n| {
        walk_steps(rng, n).into_iter().map(bf16::from_f32).collect()
    });
    run_half_op::<Min<f16>>(&gpu, &mut report, "min f16", |rng, n| {
        half_values(rng, n, f16::NAN)
    });
    run_half_op::<Max<f16>>(&gpu, &mut report, "max f16", |rng, n| {
        half_values(rng, n, f16::NAN)
    });
    run_half_op::<Min<bf16>>(&gpu, &mut report, "min bf16", |rng, n| {
        half_values(rng, n, bf16::NAN)
    });
    run_half_op::<Max<bf16>>(&gpu, &mut report, "max bf16", |rng, n| {
        half_values(rng, n, bf16::NAN)
    });
    run_half_op::<Max<f16>>(&gpu, &mut report, "max f16 ties", f16_ties);
    run_half_op::<Min<bf16>>(&gpu, &mut report, "min bf16 ties", bf16_ties);
    run_half_op::<Min<f16>>(&gpu, &mut report, "min f16 one-sided", f16_nonnegative);
    run_half_op::<Max<bf16>>(&gpu, &mut report, "max bf16 one-sided", bf16_nonpositive);
    report.finish("half_floats_every_algorithm_mode");
}

// ---------------------------------------------------------------------------------------------
// Float sums of arbitrary values: a tolerance, not bit equality.

/// Prefix sums of `x` in compensated (Neumaier) f64 arithmetic: error about 2 ulp of f64, far
/// below the bound checked, so the reference counts as exact. Also the prefix sums of |x|.
fn reference_sums(x: &[f64], mode: ScanMode) -> (Vec<f64>, Vec<f64>) {
    let (mut sum, mut comp, mut abs) = (0.0f64, 0.0f64, 0.0f64);
    let mut sums = Vec::with_capacity(x.len());
    let mut abs_sums = Vec::with_capacity(x.len());
    for &v in x {
        if mode == ScanMode::Exclusive {
            sums.push(sum + comp);
            abs_sums.push(abs);
        }
        let t = sum + v;
        comp += if sum.abs() >= v.abs() {
            (sum - t) + v
        } else {
            (v - t) + sum
        };
        sum = t;
        abs += v.abs();
        if mode == ScanMode::Inclusive {
            sums.push(sum + comp);
            abs_sums.push(abs);
        }
    }
    (sums, abs_sums)
}

/// Float addition is not associative, so the GPU's order (per-thread runs, warp/block trees,
/// tile prefixes chained through look-back or the spine) rounds differently from any CPU
/// order. Bound (Higham, "Accuracy and Stability of Numerical Algorithms", sec. 4.2): a sum
/// evaluated in any order where every term passes through at most `d` roundings has error at
/// most gamma_d * sum|x|, gamma_d = d*u/(1 - d*u), u = eps/2. Here each term of out[i] passes
/// through at most `ipt` sequential adds in its thread, 2*log2(block) in the block scan, plus
/// 2 for seeding, per hierarchy level (at most 4 levels here), plus one add per earlier tile in
/// the single-pass look-back chain: `d <= 4 * (ipt + 2*log2(block) + 2) + i / tile + 1`. We
/// check `|got - ref| <= d * eps * sum|x|` (eps = 2u covers gamma's denominator).
fn float_add_tolerance<T>(
    gpu: &Gpu,
    report: &mut Report,
    label: &str,
    to_f64: fn(T) -> f64,
    from_f64: fn(f64) -> T,
    eps: f64,
) where
    Add<T>: ScanOp<Elem = T>,
    T: TestValue,
{
    let stream = gpu.new_stream().expect("stream");
    for algorithm in Algorithm::ALL {
        for mode in ScanMode::ALL {
            let case = format!("{label} (values in [-1, 1], tolerance) {algorithm} {mode}");
            let Some(mut scanner) =
                scanner_or_fail::<Add<T>>(gpu, report, &case, opts(algorithm, mode))
            else {
                continue;
            };
            // The tolerance's depth is the default tile's (the deepest combine chain).
            let policy = scanner.requested_policy();
            let tile = scanner.tile_items();
            let depth_base = 4
                * (policy.items_per_thread as u64
                    + 2 * u64::from(policy.block_threads.ilog2())
                    + 2);
            let mut rng = Rng::new(&case);
            for n in [33, tile + 1, 65537, (1 << 20) + 7] {
                let input: Vec<T> = (0..n).map(|_| from_f64(rng.unit())).collect();
                let (sums, abs_sums) =
                    reference_sums(&input.iter().map(|&v| to_f64(v)).collect::<Vec<_>>(), mode);
                let got = scan_out_of_place(&mut scanner, &stream, &input);
                let check = got.and_then(|got| {
                    for (i, &g) in got.iter().enumerate() {
                        let depth = depth_base + i as u64 / tile + 1;
                        let bound = depth as f64 * eps * abs_sums[i] + f64::MIN_POSITIVE;
                        let err = (to_f64(g) - sums[i]).abs();
                        if err.is_nan() || err > bound {
                            return Err(format!(
                                "index {i}: expected {} +- {bound:e}, got {g:?}",
                                sums[i]
                            ));
                        }
                    }
                    Ok(())
                });
                report.record(&format!("{case} n={n}"), check);
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn float_add_of_arbitrary_values_within_rounding_bound() {
    let gpu = gpu();
    let mut report = Report::default();
    float_add_tolerance::<f32>(
        &gpu,
        &mut report,
        "add f32",
        |v| v as f64,
        |v| v as f32,
        f32::EPSILON as f64,
    );
    float_add_tolerance::<f64>(&gpu, &mut report, "add f64", |v| v, |v| v, f64::EPSILON);
    report.finish("float_add_of_arbitrary_values_within_rounding_bound");
}

// ---------------------------------------------------------------------------------------------
// Large inputs

fn run_large<Op: ScanOp>(
    gpu: &Gpu,
    report: &mut Report,
    label: &str,
    op: BuiltinOp,
    n: u64,
    algorithms: &[Algorithm],
    modes: &[ScanMode],
) where
    Op::Elem: TestValue,
{
    let bytes = n * std::mem::size_of::<Op::Elem>() as u64;
    let (free, _) = gpu.context().mem_get_info().expect("memory info");
    // Input, output and scratch (under 1% of n), with headroom.
    if (free as u64) < 2 * bytes + bytes / 8 + (256 << 20) {
        println!(
            "SKIP {label} n={n}: needs about {} MiB of device memory, {} MiB free",
            (2 * bytes) >> 20,
            free >> 20
        );
        return;
    }
    let stream = gpu.new_stream().expect("stream");
    let mut rng = Rng::new(label);
    let input: Vec<Op::Elem> = (0..n).map(|_| Op::Elem::random(&mut rng, op)).collect();
    for &mode in modes {
        let mut expected = input.clone();
        cpu::scan_parallel_in_place::<Op>(&mut expected, mode);
        for &algorithm in algorithms {
            let case = format!("{label} {algorithm} {mode} n={n} out-of-place");
            let started = std::time::Instant::now();
            let result = gpu
                .scanner::<Op>(opts(algorithm, mode))
                .map_err(|e| e.to_string())
                .and_then(|mut s| scan_out_of_place(&mut s, &stream, &input))
                .and_then(|got| first_mismatch(&expected, &got));
            println!("{case}: {:.1} s", started.elapsed().as_secs_f64());
            report.record(&case, result);
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn large_inputs_2_pow_28() {
    let gpu = gpu();
    let mut report = Report::default();
    let n = 1 << 28;
    let (all, modes) = (&Algorithm::ALL[..], &ScanMode::ALL[..]);
    run_large::<Add<i32>>(&gpu, &mut report, "add i32", BuiltinOp::Add, n, all, modes);
    run_large::<Add<u64>>(&gpu, &mut report, "add u64", BuiltinOp::Add, n, all, modes);
    run_large::<Add<f32>>(&gpu, &mut report, "add f32", BuiltinOp::Add, n, all, modes);
    run_large::<Max<i32>>(&gpu, &mut report, "max i32", BuiltinOp::Max, n, all, modes);
    run_large::<Max<u64>>(&gpu, &mut report, "max u64", BuiltinOp::Max, n, all, modes);
    run_large::<Max<f32>>(&gpu, &mut report, "max f32", BuiltinOp::Max, n, all, modes);
    report.finish("large_inputs_2_pow_28");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn more_than_2_pow_31_elements() {
    let gpu = gpu();
    let mut report = Report::default();
    // Past every 32-bit index: element, byte offset (for u8 equal) and tile arithmetic.
    let n = (1u64 << 31) + 123;
    let algorithms = [Algorithm::SinglePass, Algorithm::KoggeStone];
    run_large::<Add<u8>>(
        &gpu,
        &mut report,
        "add u8",
        BuiltinOp::Add,
        n,
        &algorithms,
        &[ScanMode::Inclusive],
    );
    report.finish("more_than_2_pow_31_elements");
}

/// Past one wave of default tiles on any GPU of up to 160 SMs at 6 blocks each, with a
/// partial last tile: the default single-pass kernel, not an input-size shape
/// (TuningPolicy::input_size).
fn past_one_wave_sizes(tile: u64) -> Vec<u64> {
    vec![(160 * 6 + 1) * tile + 7]
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn past_one_wave_partial_last_tiles() {
    let gpu = gpu();
    let mut report = Report::default();
    let sizes = past_one_wave_sizes;
    run_sizes::<Add<u8>>(&gpu, &mut report, "add u8", BuiltinOp::Add, sizes);
    run_sizes::<Max<i16>>(&gpu, &mut report, "max i16", BuiltinOp::Max, sizes);
    run_sizes::<Add<i32>>(&gpu, &mut report, "add i32", BuiltinOp::Add, sizes);
    run_sizes::<Min<f64>>(&gpu, &mut report, "min f64", BuiltinOp::Min, sizes);
    run_sizes::<Compose>(&gpu, &mut report, "compose Affine", BuiltinOp::Add, sizes);
    run_sizes::<Compose64>(&gpu, &mut report, "compose64", BuiltinOp::Add, sizes);
    report.finish("past_one_wave_partial_last_tiles");
}

/// The largest 1-byte inputs, in default tiles on `sms` SMs, that the mid-size and the few-waves
/// shapes serve (one wave of the mid-size shape's blocks; `FEW_WAVES_INPUT_WAVES` of the
/// deferral floor's), counted from the policy's constants rather than asked of
/// `TuningPolicy::input_size_limits`, which the tests check.
fn byte_shape_limits(sms: u64) -> (u64, u64) {
    let mid_last = sms
        * u64::from(TuningPolicy::mid_input_blocks(1).expect("a 1-byte mid-size cap"))
        * TuningPolicy::MID_INPUT_WAVES;
    let few_last =
        sms * u64::from(TuningPolicy::DEFERRED_MIN_BLOCKS) * TuningPolicy::FEW_WAVES_INPUT_WAVES;
    (mid_last, few_last)
}

/// 1-byte elements past the mid-size shape's one wave take the few-waves shape (the default
/// tile at 5 blocks per SM) up to `FEW_WAVES_INPUT_WAVES` waves of its blocks, then the
/// default: the first input of the class (a partial last tile), its last whole tile less a few
/// elements, and the first input past it, single-pass, every mode, prefix and suffix scans, on
/// random data, out of place, in place and unaligned. (Sums and xor take the few-waves kernel
/// there; max, min and products, whose default the register ladder builds at 5 blocks already,
/// keep the default: `ScanEngine::few_waves_takes_a_block`.)
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn byte_inputs_of_a_few_waves() {
    let gpu = gpu();
    let mut report = Report::default();
    let sms = u64::from(gpu.sm_count());
    let (mid_last, few_last) = byte_shape_limits(sms);
    let sizes = move |tile: u64| {
        vec![
            mid_last * tile + 1,
            few_last * tile - 5,
            few_last * tile + 1,
        ]
    };
    run_prefix_and_suffix::<Add<u8>>(&gpu, &mut report, "add u8", BuiltinOp::Add, sizes);
    run_prefix_and_suffix::<Max<i8>>(&gpu, &mut report, "max i8", BuiltinOp::Max, sizes);
    run_prefix_and_suffix::<Min<u8>>(&gpu, &mut report, "min u8", BuiltinOp::Min, sizes);
    run_prefix_and_suffix::<Mul<u8>>(&gpu, &mut report, "mul u8", BuiltinOp::Mul, sizes);
    run_prefix_and_suffix::<Xor<i8>>(&gpu, &mut report, "xor i8", BuiltinOp::Xor, sizes);
    report.finish("byte_inputs_of_a_few_waves");
}

/// 1-byte prefix scans past `MANY_WAVES_INPUT_TILES_PER_SM` default tiles an SM take the
/// many-waves shape (the default tile reading its run back at the default's cap) where it holds
/// a block more than the default as built (byte max, min and products; sums keep the default,
/// as suffix scans do): the last input of the default below it less a few elements, the first
/// input of the class (one item in its last tile) and one past 2^28, every mode, prefix and
/// suffix scans, on random data, out of place, in place and unaligned.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn byte_inputs_of_many_waves() {
    let gpu = gpu();
    let mut report = Report::default();
    let many_above = u64::from(gpu.sm_count()) * TuningPolicy::MANY_WAVES_INPUT_TILES_PER_SM;
    let sizes = move |tile: u64| vec![many_above * tile - 7, many_above * tile + 1, (1 << 28) + 33];
    run_prefix_and_suffix::<Max<u8>>(&gpu, &mut report, "max u8", BuiltinOp::Max, sizes);
    run_prefix_and_suffix::<Min<i8>>(&gpu, &mut report, "min i8", BuiltinOp::Min, sizes);
    run_prefix_and_suffix::<Mul<i8>>(&gpu, &mut report, "mul i8", BuiltinOp::Mul, sizes);
    run_prefix_and_suffix::<Add<u8>>(&gpu, &mut report, "add u8", BuiltinOp::Add, sizes);
    report.finish("byte_inputs_of_many_waves");
}

fn run_prefix_and_suffix<Op: ScanOp>(
    gpu: &Gpu,
    report: &mut Report,
    label: &str,
    op: BuiltinOp,
    sizes: impl Fn(u64) -> Vec<u64>,
) where
    Op::Elem: TestValue,
{
    run_prefix_and_suffix_of::<Op>(gpu, report, label, op, &[Algorithm::SinglePass], sizes);
}

/// [`run_prefix_and_suffix`] with each of `algorithms` (named in the case).
fn run_prefix_and_suffix_of<Op: ScanOp>(
    gpu: &Gpu,
    report: &mut Report,
    label: &str,
    op: BuiltinOp,
    algorithms: &[Algorithm],
    sizes: impl Fn(u64) -> Vec<u64>,
) where
    Op::Elem: TestValue,
{
    for_prefix_and_suffix_cases::<Op>(gpu, report, label, op, algorithms, sizes, |c| {
        check_scans_against(
            c.scanner, c.stream, c.report, c.case, c.data, c.expected, true,
        );
    });
}

/// One input of [`for_prefix_and_suffix_cases`]: its scanner, its data and the CPU reference.
struct ScanCase<'a, Op: ScanOp> {
    scanner: &'a mut Scanner<Op>,
    stream: &'a Arc<CudaStream>,
    report: &'a mut Report,
    /// Op, algorithm, mode, direction and n.
    case: &'a str,
    data: &'a [Op::Elem],
    expected: &'a [Op::Elem],
}

/// Calls `check` with random data of each of `sizes` (of the scanner's tile) for each of
/// `algorithms`, every mode, prefix and suffix scans, beside the CPU reference.
fn for_prefix_and_suffix_cases<Op: ScanOp>(
    gpu: &Gpu,
    report: &mut Report,
    label: &str,
    op: BuiltinOp,
    algorithms: &[Algorithm],
    sizes: impl Fn(u64) -> Vec<u64>,
    mut check: impl FnMut(ScanCase<'_, Op>),
) where
    Op::Elem: TestValue,
{
    let stream = gpu.new_stream().expect("stream");
    for (&algorithm, mode) in algorithms
        .iter()
        .flat_map(|a| ScanMode::ALL.into_iter().map(move |m| (a, m)))
    {
        for reverse in [false, true] {
            let direction = if reverse { "reverse" } else { "forward" };
            let case = format!("{label} {algorithm} {mode} {direction}");
            let options = opts(algorithm, mode);
            let options = if reverse { options.reverse() } else { options };
            let Some(mut scanner) = scanner_or_fail::<Op>(gpu, report, &case, options) else {
                continue;
            };
            let mut rng = Rng::new(&case);
            for n in sizes(scanner.tile_items()) {
                let data: Vec<Op::Elem> = (0..n).map(|_| Op::Elem::random(&mut rng, op)).collect();
                // A suffix scan of `data` is the prefix scan of it back to front, back to front.
                let mut expected = data.clone();
                if reverse {
                    expected.reverse();
                }
                cpu::scan_sequential_in_place::<Op>(&mut expected, mode);
                if reverse {
                    expected.reverse();
                }
                check(ScanCase {
                    scanner: &mut scanner,
                    stream: &stream,
                    report: &mut *report,
                    case: &format!("{case} n={n}"),
                    data: &data,
                    expected: &expected,
                });
            }
        }
    }
}

/// Partial tiles whose end cuts a vector of the full tiles' accesses, or falls on one: inputs
/// whose last tile ends 1, 15, 16 and 17 items into it, or 16 and 1 short of its end, in the
/// small shape and past one wave of default tiles (the default kernel), every mode, prefix and
/// suffix scans, packed and unpacked elements, out of place, in place and unaligned; the
/// single-pass kernel and the hierarchy's. A 1-byte partial tile of aligned buffers moves its
/// whole vectors and the cut one item by item (policy partial_tile_vectors); a 1-byte suffix
/// scan whose n is not whole vectors has a short first tile, so that its other tiles sit on
/// whole vectors (policy aligned_tiles, ScanLayoutOf::tile_base). Unaligned buffers cut their
/// tiles to the output's lead or move shifted vectors or go item by item
/// (buffers_off_a_vector_boundary_every_offset).
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn partial_last_tiles_cut_a_vector() {
    let gpu = gpu();
    let mut report = Report::default();
    let sizes = |tile: u64| {
        let past_one_wave = 160 * 6 + 1;
        let mut sizes = vec![tile + 1, 2 * tile + 15, 3 * tile + 16, 3 * tile + 17];
        sizes.extend([1, 16, tile - 16, tile - 1].map(|r| past_one_wave * tile + r));
        sizes
    };
    let all = &Algorithm::ALL;
    let one_pass = &[Algorithm::SinglePass];
    run_prefix_and_suffix_of::<Add<u8>>(&gpu, &mut report, "add u8", BuiltinOp::Add, all, sizes);
    run_prefix_and_suffix_of::<Max<i8>>(&gpu, &mut report, "max i8", BuiltinOp::Max, all, sizes);
    run_prefix_and_suffix_of::<Mul<u8>>(
        &gpu,
        &mut report,
        "mul u8",
        BuiltinOp::Mul,
        one_pass,
        sizes,
    );
    run_prefix_and_suffix_of::<Add<u16>>(&gpu, &mut report, "add u16", BuiltinOp::Add, all, sizes);
    run_prefix_and_suffix_of::<Max<f16>>(
        &gpu,
        &mut report,
        "max f16",
        BuiltinOp::Max,
        one_pass,
        sizes,
    );
    run_prefix_and_suffix_of::<Add<i32>>(&gpu, &mut report, "add i32", BuiltinOp::Add, all, sizes);
    run_prefix_and_suffix_of::<Min<i64>>(
        &gpu,
        &mut report,
        "min i64",
        BuiltinOp::Min,
        one_pass,
        sizes,
    );
    let compose = "compose Affine";
    run_prefix_and_suffix_of::<Compose>(
        &gpu,
        &mut report,
        compose,
        BuiltinOp::Add,
        one_pass,
        sizes,
    );
    run_prefix_and_suffix_of::<ComposeBytes>(
        &gpu,
        &mut report,
        "compose_bytes",
        BuiltinOp::Add,
        one_pass,
        sizes,
    );
    report.finish("partial_last_tiles_cut_a_vector");
}

/// Buffers off a vector boundary, at every offset a 16-byte vector has. Tiles are cut to sit on
/// the output's vectors (the hierarchy's: the input's), the first short by its lead, which can
/// take one tile more (tile_layout.cu.tera, `first_tile_shortfall`; the hierarchy's grids have no
/// tile more, so there it falls back where the lead needs one); a buffer at another offset
/// moves shifted vectors (packed 1- and 2-byte items of prefix scans, `scan_load_shifted`) or
/// item by item. Input and output each at their own offset, at the same one, and in place;
/// sizes of whole tiles, of tiles and a few items, past one wave of default tiles (the
/// default kernel), every mode, prefix and suffix; a non-commutative 2-byte op; the
/// hierarchy's kernels for u8 sums.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn buffers_off_a_vector_boundary_every_offset() {
    let gpu = gpu();
    let mut report = Report::default();
    let all = &Algorithm::ALL;
    let one_pass = &[Algorithm::SinglePass];
    let sizes = offset_sizes;
    run_offsets::<Add<u8>>(&gpu, &mut report, "add u8", BuiltinOp::Add, all, sizes);
    run_offsets::<Max<i8>>(&gpu, &mut report, "max i8", BuiltinOp::Max, one_pass, sizes);
    run_offsets::<Mul<u8>>(&gpu, &mut report, "mul u8", BuiltinOp::Mul, one_pass, sizes);
    run_offsets::<Xor<u8>>(&gpu, &mut report, "xor u8", BuiltinOp::Xor, one_pass, sizes);
    run_offsets::<Add<u16>>(
        &gpu,
        &mut report,
        "add u16",
        BuiltinOp::Add,
        one_pass,
        sizes,
    );
    run_offsets::<Max<f16>>(
        &gpu,
        &mut report,
        "max f16",
        BuiltinOp::Max,
        one_pass,
        sizes,
    );
    run_offsets::<Min<bf16>>(
        &gpu,
        &mut report,
        "min bf16",
        BuiltinOp::Min,
        one_pass,
        sizes,
    );
    let compose = "compose_bytes";
    run_offsets::<ComposeBytes>(&gpu, &mut report, compose, BuiltinOp::Add, one_pass, sizes);
    // Four bytes: aligned tiles, no shifted vectors (an element is a whole word).
    run_offsets::<Add<i32>>(
        &gpu,
        &mut report,
        "add i32",
        BuiltinOp::Add,
        one_pass,
        sizes,
    );
    run_offsets::<Max<f32>>(
        &gpu,
        &mut report,
        "max f32",
        BuiltinOp::Max,
        one_pass,
        sizes,
    );
    report.finish("buffers_off_a_vector_boundary_every_offset");
}

/// Whole tiles, tiles and a few items, and past one wave of default tiles (the default kernel).
fn offset_sizes(tile: u64) -> Vec<u64> {
    let past_one_wave = (160 * 6 + 1) * tile;
    vec![
        1,
        33,
        tile - 1,
        tile,
        tile + 17,
        2 * tile,
        3 * tile + 17,
        5 * tile,
        past_one_wave + 5,
    ]
}

/// [`buffers_off_a_vector_boundary_every_offset`] for one op: (input, output) offsets in
/// elements, covering every byte offset in a 16-byte vector for the input and a few for the
/// output.
fn run_offsets<Op: ScanOp>(
    gpu: &Gpu,
    report: &mut Report,
    label: &str,
    op: BuiltinOp,
    algorithms: &[Algorithm],
    sizes: fn(u64) -> Vec<u64>,
) where
    Op::Elem: TestValue,
{
    let per_vector = (16 / std::mem::size_of::<Op::Elem>()).max(1);
    let mut offsets: Vec<(usize, usize)> = (1..per_vector).map(|k| (k, k)).collect();
    offsets.extend([(0, 1), (1, 0), (per_vector - 1, 1), (1, per_vector - 1)]);
    offsets.extend([(per_vector / 2, 0), (0, per_vector / 2 + 1)]);
    offsets.retain(|&(i, o)| i + o > 0);
    for_prefix_and_suffix_cases::<Op>(gpu, report, label, op, algorithms, sizes, |c| {
        for &(at_in, at_out) in &offsets {
            let got = scan_at_offsets(c.scanner, c.stream, c.data, at_in, at_out);
            c.report.record(
                &format!("{} input at +{at_in}, output at +{at_out}", c.case),
                got.and_then(|g| first_mismatch(c.expected, &g)),
            );
        }
        for at in [1, per_vector - 1] {
            let got = scan_in_place_at(c.scanner, c.stream, c.data, at);
            c.report.record(
                &format!("{} in place at +{at}", c.case),
                got.and_then(|g| first_mismatch(c.expected, &g)),
            );
        }
    });
}

/// 1-byte scans of buffers off a vector boundary in each shape (mid-size, few waves, the default
/// below many waves), where the register ladder may give the unaligned paths up, and in the
/// small one, whose aligned kernel leaves them to its twin (1- and 2-byte scans,
/// `TuningPolicy::unaligned_paths_in_twin`): such buffers take the shape's twin that keeps them
/// (`TuningPolicy::unaligned_twin`; checked through `Scanner::policy_for`), and it scans them
/// right. Every mode, prefix and suffix scans, input and output at their own offsets and in
/// place, on random data.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn unaligned_twins_of_byte_shapes() {
    let gpu = gpu();
    let mut report = Report::default();
    let sms = u64::from(gpu.sm_count());
    let (mid_last, few_last) = byte_shape_limits(sms);
    let sizes = move |tile: u64| {
        vec![
            // Small-input shapes: part of one small tile, and fewer default tiles than half the
            // SMs have.
            tile / 3 + 7,
            sms / 4 * tile + 9,
            2 * sms * tile + 17,
            mid_last * tile + tile / 2 + 3,
            (few_last + sms / 2) * tile + 1,
        ]
    };
    run_twins::<Max<u8>>(&gpu, &mut report, "max u8", BuiltinOp::Max, sizes);
    run_twins::<Min<i8>>(&gpu, &mut report, "min i8", BuiltinOp::Min, sizes);
    run_twins::<Mul<u8>>(&gpu, &mut report, "mul u8", BuiltinOp::Mul, sizes);
    run_twins::<Xor<u8>>(&gpu, &mut report, "xor u8", BuiltinOp::Xor, sizes);
    run_twins::<And<i8>>(&gpu, &mut report, "and i8", BuiltinOp::And, sizes);
    run_twins::<Max<u16>>(&gpu, &mut report, "max u16", BuiltinOp::Max, sizes);
    run_twins::<Add<i16>>(&gpu, &mut report, "add i16", BuiltinOp::Add, sizes);
    report.finish("unaligned_twins_of_byte_shapes");
}

/// [`unaligned_twins_of_byte_shapes`] for one op.
fn run_twins<Op: ScanOp>(
    gpu: &Gpu,
    report: &mut Report,
    label: &str,
    op: BuiltinOp,
    sizes: impl Fn(u64) -> Vec<u64>,
) where
    Op::Elem: TestValue,
{
    let one_pass = &[Algorithm::SinglePass];
    for_prefix_and_suffix_cases::<Op>(gpu, report, label, op, one_pass, sizes, |c| {
        let n = c.data.len() as u64;
        let kept = c
            .scanner
            .policy_for(n, true)
            .map(|p| (p.lead_tiles, p.shifted_tile_vectors, p.partial_tile_vectors));
        // (2-byte tiles have no partial-tile vectors: TuningPolicy::for_target.)
        let partial = std::mem::size_of::<Op::Elem>() == 1;
        c.report.record(
            &format!("{} keeps the unaligned paths", c.case),
            match kept {
                Ok((true, true, p)) if p == partial => Ok(()),
                Ok(kept) => Err(format!("(lead, shifted, partial-tile vectors) = {kept:?}")),
                Err(e) => Err(e.to_string()),
            },
        );
        for (at_in, at_out) in [(1, 1), (1, 0), (0, 1), (15, 15)] {
            let got = scan_at_offsets(c.scanner, c.stream, c.data, at_in, at_out);
            c.report.record(
                &format!("{} input at +{at_in}, output at +{at_out}", c.case),
                got.and_then(|g| first_mismatch(c.expected, &g)),
            );
        }
        let got = scan_in_place_at(c.scanner, c.stream, c.data, 1);
        c.report.record(
            &format!("{} in place at +1", c.case),
            got.and_then(|g| first_mismatch(c.expected, &g)),
        );
    });
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn non_commutative_struct_op_keeps_order() {
    let gpu = gpu();
    let x = Affine { a: 2.0, b: 1.0 };
    let y = Affine { a: 3.0, b: 5.0 };
    assert_ne!(Compose::combine(x, y), Compose::combine(y, x));
    let mut report = Report::default();
    run_builtin::<Compose>(&gpu, &mut report, "compose Affine", BuiltinOp::Add);
    // Sixteen bytes (moved as 16-byte vectors; it has a mid-size shape too).
    run_builtin::<Compose64>(&gpu, &mut report, "compose64", BuiltinOp::Add);
    // Two bytes: packed two to a register word.
    let (p, q) = (ByteAffine { a: 3, b: 1 }, ByteAffine { a: 5, b: 7 });
    assert_ne!(ComposeBytes::combine(p, q), ComposeBytes::combine(q, p));
    run_builtin::<ComposeBytes>(
        &gpu,
        &mut report,
        "compose_bytes ByteAffine",
        BuiltinOp::Add,
    );
    report.finish("non_commutative_struct_op_keeps_order");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn twelve_byte_struct_op_keeps_order() {
    let gpu = gpu();
    let x = Tally {
        sum: 1,
        count: 1,
        last: 5,
    };
    let y = Tally {
        sum: 2,
        count: 1,
        last: 9,
    };
    assert_ne!(LastOfRun::combine(x, y), LastOfRun::combine(y, x));
    let mut report = Report::default();
    run_builtin::<LastOfRun>(&gpu, &mut report, "last_of_run Tally", BuiltinOp::Add);
    report.finish("twelve_byte_struct_op_keeps_order");
}

/// Small and medium sizes for runs under compute-sanitizer (memcheck, racecheck, synccheck,
/// initcheck), which slow kernels down a hundredfold: one and several tiles, partial last tiles,
/// a size that needs a two-level hierarchy, and one the single-pass scan takes its mid-size
/// shape for (over half the SMs in default tiles, on a GPU of up to 140 SMs).
fn sanitizer_sizes(tile: u64) -> Vec<u64> {
    vec![1, 33, tile + 1, 5 * tile + 7, 40 * tile + 3, 70 * tile + 5]
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn sanitizer_smoke() {
    let gpu = gpu();
    let mut report = Report::default();
    run_sizes::<Compose>(
        &gpu,
        &mut report,
        "compose Affine",
        BuiltinOp::Add,
        sanitizer_sizes,
    );
    run_sizes::<Add<i32>>(
        &gpu,
        &mut report,
        "add i32",
        BuiltinOp::Add,
        sanitizer_sizes,
    );
    run_sizes::<Max<f64>>(
        &gpu,
        &mut report,
        "max f64",
        BuiltinOp::Max,
        sanitizer_sizes,
    );
    run_sizes::<LastOfRun>(
        &gpu,
        &mut report,
        "last_of_run Tally",
        BuiltinOp::Add,
        sanitizer_sizes,
    );
    // Wide elements move as vectors in full tiles (policy element_vectors): 32 and 24 bytes.
    run_sizes::<MatMul>(
        &gpu,
        &mut report,
        "matmul Mat2",
        BuiltinOp::Mul,
        sanitizer_sizes,
    );
    run_sizes::<ComposeCounted>(
        &gpu,
        &mut report,
        "compose_counted CountedAffine",
        BuiltinOp::Mul,
        sanitizer_sizes,
    );
    // Buffers off a vector boundary: packed tiles load and store shifted vectors, reading a
    // vector past each tile's end and storing the ends item by item.
    let one_pass = &[Algorithm::SinglePass];
    let sizes = |tile: u64| vec![33, tile + 17, 3 * tile + 17, 5 * tile];
    run_offsets::<Add<u8>>(&gpu, &mut report, "add u8", BuiltinOp::Add, one_pass, sizes);
    run_offsets::<Max<f16>>(
        &gpu,
        &mut report,
        "max f16",
        BuiltinOp::Max,
        one_pass,
        sizes,
    );
    report.finish("sanitizer_smoke");
}

// ---------------------------------------------------------------------------------------------
// Runtime contracts

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn length_mismatch_and_empty_input() {
    let gpu = gpu();
    let mut report = Report::default();
    let stream = gpu.new_stream().expect("stream");
    for algorithm in Algorithm::ALL {
        let case = format!("add u32 {algorithm}");
        let mut s = gpu
            .scanner::<Add<u32>>(opts(algorithm, ScanMode::Inclusive))
            .expect("scanner");

        let mut short = [0u32; 2];
        let r = s.scan_into(&[1, 2, 3], &mut short);
        report.record(
            &format!("{case} host length mismatch"),
            match r {
                Err(ScanError::LengthMismatch {
                    input: 3,
                    output: 2,
                }) if short == [0, 0] => Ok(()),
                other => Err(format!(
                    "expected LengthMismatch and an untouched output, got {other:?} / {short:?}"
                )),
            },
        );

        let d_in = stream.clone_htod(&[1u32, 2, 3]).unwrap();
        let mut d_out = stream.clone_htod(&[7u32, 7]).unwrap();
        let r = s.scan_device(&stream, &d_in, &mut d_out);
        let after = stream.clone_dtoh(&d_out).unwrap();
        stream.synchronize().unwrap();
        report.record(
            &format!("{case} device length mismatch"),
            match r {
                Err(ScanError::LengthMismatch {
                    input: 3,
                    output: 2,
                }) if after == [7, 7] => Ok(()),
                other => Err(format!(
                    "expected LengthMismatch before any launch, got {other:?} / {after:?}"
                )),
            },
        );

        let empty: &[u32] = &[];
        report.record(
            &format!("{case} n=0 host"),
            match s.scan(empty) {
                Ok(v) if v.is_empty() => Ok(()),
                other => Err(format!("{other:?}")),
            },
        );
        let d_empty: CudaSlice<u32> = unsafe { stream.alloc(0) }.unwrap();
        let mut d_empty_out: CudaSlice<u32> = unsafe { stream.alloc(0) }.unwrap();
        report.record(
            &format!("{case} n=0 device"),
            s.scan_device(&stream, &d_empty, &mut d_empty_out)
                .map_err(|e| e.to_string()),
        );

        // Still fine after the errors.
        report.record(
            &format!("{case} after errors"),
            s.scan(&[1, 2, 3])
                .map_err(|e| e.to_string())
                .and_then(|v| first_mismatch(&[1, 3, 6], &v)),
        );
    }
    report.finish("length_mismatch_and_empty_input");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn one_scanner_across_growing_and_shrinking_sizes() {
    let gpu = gpu();
    let mut report = Report::default();
    for algorithm in Algorithm::ALL {
        for mode in ScanMode::ALL {
            let mut s = gpu
                .scanner::<Add<u64>>(opts(algorithm, mode))
                .expect("scanner");
            let mut rng = Rng::new("reuse");
            for n in [
                5u64,
                1 << 12,
                33,
                (1 << 22) + 1,
                7,
                1_000_003,
                (1 << 24) + 5,
                2,
                65537,
            ] {
                let input: Vec<u64> = (0..n).map(|_| rng.next() >> 8).collect();
                let mut expected = input.clone();
                cpu::scan_sequential_in_place::<Add<u64>>(&mut expected, mode);
                let got = s.scan(&input).map_err(|e| e.to_string());
                report.record(
                    &format!("add u64 {algorithm} {mode} n={n} (reused scanner)"),
                    got.and_then(|g| first_mismatch(&expected, &g)),
                );
            }
        }
    }
    report.finish("one_scanner_across_growing_and_shrinking_sizes");
}

/// A scanner compiles each kernel on first use: scans of small and mid-size inputs build only
/// their shapes, never the default kernel (on an empty cache a byte max's default ladder was
/// most of its cold start); a longer input, a hierarchical scan, `prepare` of a long input and a
/// question about the built policy each build it. Every scan is checked against the CPU.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn the_default_kernel_is_built_on_first_use() {
    let gpu = gpu();
    let mut report = Report::default();
    fn check<Op: ScanOp>(gpu: &Gpu, report: &mut Report, label: &str, op: BuiltinOp)
    where
        Op::Elem: TestValue + Clone,
    {
        let mut rng = Rng::new(label);
        let mut scan = |s: &mut Scanner<Op>, n: u64, mode: ScanMode| {
            let input: Vec<Op::Elem> = (0..n).map(|_| Op::Elem::random(&mut rng, op)).collect();
            let mut expected = input.clone();
            cpu::scan_sequential_in_place::<Op>(&mut expected, mode);
            s.scan(&input)
                .map_err(|e| e.to_string())
                .and_then(|got| first_mismatch(&expected, &got))
        };
        let sms = u64::from(gpu.sm_count());
        for algorithm in Algorithm::ALL {
            for mode in ScanMode::ALL {
                let case = format!("{label} {algorithm} {mode}");
                let Some(mut s) = scanner_or_fail::<Op>(gpu, report, &case, opts(algorithm, mode))
                else {
                    continue;
                };
                let tile = s.tile_items();
                let sized = algorithm == Algorithm::SinglePass && gpu.sm() >= 90;
                if s.default_kernel_built() {
                    report.fail(format!("{case}: built before any scan"));
                }
                // Small (a part of one default tile, and a few tiles) and mid-size inputs (a
                // wave of default tiles at one block per SM), then one of many waves.
                for n in [1, tile / 3 + 7, 5 * tile + 1, sms * tile + 3] {
                    let result = scan(&mut s, n, mode).and_then(|()| {
                        match (sized, s.default_kernel_built()) {
                            (true, true) => Err("the default kernel was built".into()),
                            // The hierarchical scans have no smaller shapes.
                            (false, false) => Err("the default kernel was not built".into()),
                            _ => Ok(()),
                        }
                    });
                    report.record(&format!("{case} n={n}"), result);
                }
                let n = 12 * sms * tile + 5;
                let result = scan(&mut s, n, mode).and_then(|()| {
                    s.default_kernel_built()
                        .then_some(())
                        .ok_or_else(|| "the default kernel was not built".to_string())
                });
                report.record(&format!("{case} n={n}"), result);
                // `prepare` of a long input and the built policy build it too.
                let stream = gpu.new_stream().expect("stream");
                let mut prepared = gpu.scanner::<Op>(opts(algorithm, mode)).expect("scanner");
                let result = prepared
                    .prepare(8 * sms * tile, &stream)
                    .map_err(|e| e.to_string())
                    .and_then(|()| match prepared.default_kernel_built() {
                        true => Ok(()),
                        false => Err("prepare did not build the default kernel".into()),
                    });
                report.record(&format!("{case} prepare"), result);
                let mut asked = gpu.scanner::<Op>(opts(algorithm, mode)).expect("scanner");
                let result = asked.policy().map_err(|e| e.to_string()).and_then(|built| {
                    let tile_kept = u64::from(built.tile_items()) == asked.tile_items();
                    match (asked.default_kernel_built(), tile_kept) {
                        (true, true) => Ok(()),
                        (false, _) => Err("policy() did not build the default kernel".into()),
                        (_, false) => Err(format!("built {built:?}, tile {}", asked.tile_items())),
                    }
                });
                report.record(&format!("{case} policy"), result);
            }
        }
    }
    check::<Add<i32>>(&gpu, &mut report, "add i32", BuiltinOp::Add);
    check::<Max<u8>>(&gpu, &mut report, "max u8", BuiltinOp::Max);
    check::<Mul<u8>>(&gpu, &mut report, "mul u8", BuiltinOp::Mul);
    check::<Max<f16>>(&gpu, &mut report, "max f16", BuiltinOp::Max);
    check::<Add<f64>>(&gpu, &mut report, "add f64", BuiltinOp::Add);
    report.finish("the_default_kernel_is_built_on_first_use");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn many_scans_on_two_streams_without_host_sync() {
    let gpu = gpu();
    let mut report = Report::default();
    let streams = [
        gpu.new_stream().expect("stream"),
        gpu.new_stream().expect("stream"),
    ];
    for algorithm in Algorithm::ALL {
        let mut s = gpu
            .scanner::<Add<i32>>(opts(algorithm, ScanMode::Exclusive))
            .expect("scanner");
        let mut rng = Rng::new("two streams");
        let mut inputs = Vec::new();
        let mut buffers = Vec::new();
        // 64 scans alternating streams (and sizes, so scratch grows mid-way), no host sync
        // until the end: the scanner must order the shared scratch memory itself.
        for i in 0..64u64 {
            let stream = &streams[(i % 2) as usize];
            let n = 1000 + i * 40_000 + (i % 3) * 7;
            let input: Vec<i32> = (0..n).map(|_| rng.next() as i32 >> 4).collect();
            let mut d = stream.clone_htod(&input).unwrap();
            if let Err(e) = s.scan_device_in_place(stream, &mut d) {
                report.fail(format!("add i32 {algorithm} two streams scan {i}: {e}"));
            }
            inputs.push(input);
            buffers.push((i % 2, d));
        }
        for (i, (input, (stream_index, d))) in inputs.iter().zip(&buffers).enumerate() {
            let stream = &streams[*stream_index as usize];
            let got = stream.clone_dtoh(d).unwrap();
            stream.synchronize().unwrap();
            let mut expected = input.clone();
            cpu::scan_sequential_in_place::<Add<i32>>(&mut expected, ScanMode::Exclusive);
            report.record(
                &format!(
                    "add i32 {algorithm} exclusive two streams scan {i} n={}",
                    input.len()
                ),
                first_mismatch(&expected, &got),
            );
        }
    }
    report.finish("many_scans_on_two_streams_without_host_sync");
}

/// Scanners for the same op share one loaded module: the second build is a cache hit.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn building_the_same_scanner_twice_is_cheap() {
    let gpu = gpu();
    let o = opts(Algorithm::SinglePass, ScanMode::Inclusive);
    gpu.scanner::<Xor<u16>>(o).expect("scanner");
    let started = std::time::Instant::now();
    for _ in 0..100 {
        gpu.scanner::<Xor<u16>>(o).expect("scanner");
    }
    let each = started.elapsed() / 100;
    println!("building a cached scanner: {each:?}");
    assert!(
        each < std::time::Duration::from_millis(1),
        "a cached build took {each:?}"
    );
    println!("gpu suite (building_the_same_scanner_twice_is_cheap): 1 cases passed, 0 failed");
}

// ---------------------------------------------------------------------------------------------
// Single-pass robustness: a look-back must never wait on a block that cannot run.

/// Spins for `cycles` clock cycles. One block of 1024 threads with 100 KiB of shared memory
/// fills a whole multiprocessor, so a grid of (SMs - 4) hogs leaves the scan 4 SMs.
const HOG_SOURCE: &str = r#"
extern "C" __global__ void __launch_bounds__(1024) hog(unsigned long long cycles, unsigned int* done) {
    extern __shared__ unsigned char pin[];
    const long long start = clock64();
    while ((unsigned long long)(clock64() - start) < cycles) {
        if (threadIdx.x == 0) pin[0] = (unsigned char)start;  // keep the shared memory in use
    }
    if (threadIdx.x == 0) atomicAdd(done, 1u);
}
"#;

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn single_pass_beside_a_kernel_holding_most_multiprocessors() {
    use scan_runtime::cudarc::driver::{LaunchConfig, PushKernelArg};
    let gpu = gpu();
    let mut report = Report::default();
    let image = scan_runtime::compile::compile_cached(
        HOG_SOURCE,
        gpu.sm(),
        &scan_runtime::DiskCache::new(None),
    )
    .expect("compile the hog kernel");
    let module = gpu
        .context()
        .load_module(image.to_loadable())
        .expect("load hog");
    let hog = module.load_function("hog").expect("hog function");
    let smem = 100 * 1024u32;
    hog.set_attribute(
        scan_runtime::cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        smem as i32,
    )
    .expect("allow 100 KiB of shared memory");
    let hog_stream = gpu.new_stream().expect("stream");
    let scan_streams = [
        gpu.new_stream().expect("stream"),
        gpu.new_stream().expect("stream"),
    ];
    let mut done = hog_stream.alloc_zeros::<u32>(1).expect("alloc");
    let hogs = gpu.sm_count().saturating_sub(4).max(1);
    // About 0.2 s at H100 clocks: long enough that the scans run while the hogs hold their SMs.
    let cycles: u64 = 400_000_000;

    for (round, n) in [(0, 1u64 << 22), (1, (1 << 24) + 13), (2, 3_000_017)] {
        let mut launch = hog_stream.launch_builder(&hog);
        launch.arg(&cycles).arg(&mut done);
        let cfg = LaunchConfig {
            grid_dim: (hogs, 1, 1),
            block_dim: (1024, 1, 1),
            shared_mem_bytes: smem,
        };
        unsafe { launch.launch(cfg) }.expect("launch hog");
        // Several scans in flight on two streams while the hogs run.
        let mut rng = Rng::new(&format!("hog {round}"));
        let inputs: Vec<Vec<Affine>> = (0..4)
            .map(|_| {
                (0..n)
                    .map(|_| Affine::random(&mut rng, BuiltinOp::Add))
                    .collect()
            })
            .collect();
        let mut scanners: Vec<Scanner<Compose>> = (0..4)
            .map(|_| {
                gpu.scanner::<Compose>(opts(Algorithm::SinglePass, ScanMode::Inclusive))
                    .expect("scanner")
            })
            .collect();
        let mut outs = Vec::new();
        for (k, (input, scanner)) in inputs.iter().zip(scanners.iter_mut()).enumerate() {
            let stream = &scan_streams[k % 2];
            let d_in = stream.clone_htod(input).expect("upload");
            let mut d_out: CudaSlice<Affine> = unsafe { stream.alloc(input.len()) }.expect("alloc");
            scanner
                .scan_device(stream, &d_in, &mut d_out)
                .expect("scan");
            outs.push((k, d_in, d_out));
        }
        let started = std::time::Instant::now();
        for (k, _d_in, d_out) in &outs {
            let stream = &scan_streams[k % 2];
            let got = stream.clone_dtoh(d_out).expect("download");
            stream.synchronize().expect("sync");
            let mut expected = inputs[*k].clone();
            cpu::scan_sequential_in_place::<Compose>(&mut expected, ScanMode::Inclusive);
            report.record(
                &format!("hog round {round} scan {k} n={n}"),
                first_mismatch(&expected, &got),
            );
        }
        hog_stream.synchronize().expect("hog sync");
        println!(
            "hog round {round}: {hogs} hog blocks, 4 scans of {n} finished in {:?}",
            started.elapsed()
        );
    }
    let finished = hog_stream.clone_dtoh(&done).expect("download")[0];
    report.record(
        "every hog block finished",
        if finished == 3 * hogs {
            Ok(())
        } else {
            Err(format!("{finished} of {}", 3 * hogs))
        },
    );
    report.finish("single_pass_beside_a_kernel_holding_most_multiprocessors");
}

/// The default sm_90 single-pass policy asks for 6 blocks per SM. Whatever the operator, the
/// kernel the runtime settles on uses no local memory, and its cap is only looser than asked
/// where it had to be (an i32 sum fits 6 blocks in 80 registers on every ptxas seen).
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn register_cap_is_loosened_only_until_nothing_spills() {
    let gpu = gpu();
    let mut report = Report::default();
    fn check<Op: ScanOp>(gpu: &Gpu, report: &mut Report, label: &str)
    where
        Op::Elem: DeviceRepr,
    {
        let requested = TuningPolicy::for_target(
            gpu.sm(),
            Algorithm::SinglePass,
            std::mem::size_of::<Op::Elem>(),
        );
        let result = gpu
            .scanner::<Op>(opts(Algorithm::SinglePass, ScanMode::Inclusive))
            .map_err(|e| e.to_string())
            .and_then(|mut s| {
                let built = s.policy().map_err(|e| e.to_string())?;
                let local = s.local_memory_bytes().map_err(|e| e.to_string())?;
                println!(
                    "{label}: asked for {} blocks per SM, built with {}, {local} bytes of local memory",
                    requested.min_blocks_per_sm, built.min_blocks_per_sm,
                );
                if built.min_blocks_per_sm > requested.min_blocks_per_sm {
                    return Err(format!("cap tightened: {built:?} from {requested:?}"));
                }
                if local != 0 && built.min_blocks_per_sm > 1 {
                    return Err(format!("{local} bytes of local memory under a cap"));
                }
                Ok(())
            });
        report.record(label, result);
    }
    check::<Add<i32>>(&gpu, &mut report, "add i32");
    check::<Max<i32>>(&gpu, &mut report, "max i32");
    check::<Max<f32>>(&gpu, &mut report, "max f32");
    check::<Add<f64>>(&gpu, &mut report, "add f64");
    check::<Max<f64>>(&gpu, &mut report, "max f64");
    check::<Mul<u64>>(&gpu, &mut report, "mul u64");
    check::<Min<i8>>(&gpu, &mut report, "min i8");
    if gpu.sm() >= 90 {
        let mut add = gpu
            .scanner::<Add<i32>>(opts(Algorithm::SinglePass, ScanMode::Inclusive))
            .expect("add i32 scanner");
        let built = add.policy().expect("add i32 builds");
        report.record(
            "add i32 keeps the requested cap",
            (built.min_blocks_per_sm == 6)
                .then_some(())
                .ok_or_else(|| format!("built with {built:?}")),
        );
    }
    report.finish("register_cap_is_loosened_only_until_nothing_spills");
}

// ---------------------------------------------------------------------------------------------
// Vector widths and look-back windows

/// `input` on the device, `offset` elements into a buffer that holds `fill` around it.
fn upload_at<T: TestValue>(
    stream: &Arc<CudaStream>,
    input: &[T],
    offset: usize,
    fill: T,
) -> Result<CudaSlice<T>, String> {
    let mut padded = vec![fill; input.len() + offset + 16];
    padded[offset..offset + input.len()].copy_from_slice(input);
    stream
        .clone_htod(&padded)
        .map_err(|e| format!("upload: {e}"))
}

/// Scans `input` from element `in_offset` of a device buffer into element `out_offset` of
/// another: a buffer one element past a 16-byte boundary is off every vector boundary, so every
/// tile of a vector kernel takes shifted vectors (packed items) or the checked item path.
fn scan_at_offsets<Op: ScanOp>(
    scanner: &mut Scanner<Op>,
    stream: &Arc<CudaStream>,
    input: &[Op::Elem],
    in_offset: usize,
    out_offset: usize,
) -> Result<Vec<Op::Elem>, String>
where
    Op::Elem: TestValue,
{
    let n = input.len();
    // The elements around the slices are not the identity, so a kernel that reads or writes
    // past its slice shows: a read changes a result, a write shows in the guard below.
    let fill = input.first().copied().unwrap_or_else(Op::identity);
    let d_in = upload_at(stream, input, in_offset, fill)?;
    let mut d_out = upload_at(stream, &vec![fill; n], out_offset, fill)?;
    scanner
        .scan_device(
            stream,
            &d_in.slice(in_offset..in_offset + n),
            &mut d_out.slice_mut(out_offset..out_offset + n),
        )
        .map_err(|e| e.to_string())?;
    let got = stream
        .clone_dtoh(&d_out)
        .map_err(|e| format!("download: {e}"))?;
    stream
        .synchronize()
        .map_err(|e| format!("synchronize: {e}"))?;
    let outside = got[..out_offset].iter().chain(&got[out_offset + n..]);
    if let Some(k) = outside.clone().position(|&x| !Op::Elem::same(x, fill)) {
        return Err(format!(
            "wrote outside its output slice ({k}th element outside of {}, output at +{out_offset})",
            outside.count()
        ));
    }
    Ok(got[out_offset..out_offset + n].to_vec())
}

/// [`scan_at_offsets`] in place: one slice `offset` elements into a buffer.
fn scan_in_place_at<Op: ScanOp>(
    scanner: &mut Scanner<Op>,
    stream: &Arc<CudaStream>,
    input: &[Op::Elem],
    offset: usize,
) -> Result<Vec<Op::Elem>, String>
where
    Op::Elem: TestValue,
{
    let n = input.len();
    let fill = input.first().copied().unwrap_or_else(Op::identity);
    let mut d_data = upload_at(stream, input, offset, fill)?;
    scanner
        .scan_device_in_place(stream, &mut d_data.slice_mut(offset..offset + n))
        .map_err(|e| e.to_string())?;
    let got = stream
        .clone_dtoh(&d_data)
        .map_err(|e| format!("download: {e}"))?;
    stream
        .synchronize()
        .map_err(|e| format!("synchronize: {e}"))?;
    Ok(got[offset..offset + n].to_vec())
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn policy_variations_on_aligned_and_unaligned_buffers() {
    let gpu = gpu();
    let mut report = Report::default();
    // (threads, items, vector bytes, look-back window, L2 prefetch tiles): 16-, 8- and 4-byte
    // words, scalar; windows of 1 lane, an odd width, half and the whole warp; L2 prefetch of
    // the next tile (its range rounded inward on unaligned buffers), 3 ahead, and none.
    let policies: Vec<TuningPolicy> = [
        (128, 16, 16, 32, 1),
        (64, 8, 8, 7, 3),
        (128, 32, 4, 1, 0),
        (32, 4, 16, 16, 48),
    ]
    .into_iter()
    .map(
        |(threads, items, vector_bytes, look_back_window, l2_prefetch_tiles)| TuningPolicy {
            vector_bytes,
            look_back_window,
            l2_prefetch_tiles,
            ..TuningPolicy::new(threads, items)
        },
    )
    .collect();
    fn check<Op: ScanOp>(
        gpu: &Gpu,
        report: &mut Report,
        label: &str,
        op: BuiltinOp,
        policies: &[TuningPolicy],
    ) where
        Op::Elem: TestValue,
    {
        let stream = gpu.new_stream().expect("stream");
        for (p, &policy) in policies.iter().enumerate() {
            let TuningPolicy {
                block_threads: threads,
                items_per_thread: items,
                vector_bytes,
                look_back_window,
                l2_prefetch_tiles,
                ..
            } = policy;
            // The window and the prefetch only matter to single-pass: the hierarchical scans take two shapes.
            for algorithm in Algorithm::ALL
                .into_iter()
                .filter(|&a| a == Algorithm::SinglePass || p < 2)
            {
                for mode in ScanMode::ALL {
                    let case = format!(
                        "{label} {algorithm} {mode} {threads}x{items} vec{vector_bytes} window{look_back_window} prefetch{l2_prefetch_tiles}"
                    );
                    let Some(mut scanner) = scanner_or_fail::<Op>(
                        gpu,
                        report,
                        &case,
                        opts(algorithm, mode).policy(policy),
                    ) else {
                        continue;
                    };
                    let tile = scanner.tile_items();
                    let mut rng = Rng::new(&case);
                    // 300 tiles: past the first wave, which the prefetch skips (these shapes
                    // have no register cap, so it counts one block per SM: 132 tiles on an
                    // H100), so the prefetching policies issue some.
                    for n in [
                        1,
                        33,
                        tile - 1,
                        tile,
                        tile + 1,
                        3 * tile + 5,
                        70 * tile + 3,
                        300 * tile + 7,
                    ] {
                        let input: Vec<Op::Elem> =
                            (0..n).map(|_| Op::Elem::random(&mut rng, op)).collect();
                        check_scans(
                            &mut scanner,
                            &stream,
                            report,
                            &format!("{case} n={n}"),
                            &input,
                            mode,
                            true,
                        );
                    }
                }
            }
        }
    }
    check::<Add<i32>>(&gpu, &mut report, "add i32", BuiltinOp::Add, &policies);
    check::<Max<u8>>(&gpu, &mut report, "max u8", BuiltinOp::Max, &policies);
    check::<Add<u16>>(&gpu, &mut report, "add u16", BuiltinOp::Add, &policies);
    check::<Add<f64>>(&gpu, &mut report, "add f64", BuiltinOp::Add, &policies);
    // Elements wider than 8 bytes under the same shapes, at every vector width: single-pass,
    // forward and reverse, in place and from unaligned buffers.
    check_policies_wide_elements(&gpu, &mut report, &policies);
    report.finish("policy_variations_on_aligned_and_unaligned_buffers");
}

/// Every mode, forward and reverse, of `Op` under each of `policies` (single-pass), in place,
/// out of place and from unaligned buffers, at sizes around a tile and past the prefetch's
/// first wave, against the CPU reference. A policy whose tile outgrows shared memory for this
/// element is refused before any launch: that is all it may do.
fn check_policies<Op: ScanOp>(
    gpu: &Gpu,
    report: &mut Report,
    label: &str,
    op: BuiltinOp,
    policies: &[TuningPolicy],
) where
    Op::Elem: TestValue,
{
    check_policies_on::<Op>(gpu, report, label, policies, |rng, n| {
        (0..n).map(|_| Op::Elem::random(rng, op)).collect()
    });
}

/// [`check_policies`] on inputs of `input(rng, n)`.
fn check_policies_on<Op: ScanOp>(
    gpu: &Gpu,
    report: &mut Report,
    label: &str,
    policies: &[TuningPolicy],
    input: impl Fn(&mut Rng, usize) -> Vec<Op::Elem>,
) where
    Op::Elem: TestValue,
{
    let stream = gpu.new_stream().expect("stream");
    for &policy in policies {
        let shape = format!(
            "{}x{} cap{} prefetch{} runs{}{}",
            policy.block_threads,
            policy.items_per_thread,
            policy.min_blocks_per_sm,
            policy.l2_prefetch_tiles,
            policy.thread_runs,
            if policy.stage_items { " staged" } else { "" }
        );
        for mode in ScanMode::ALL {
            for reverse in [false, true] {
                let direction = if reverse { "reverse" } else { "forward" };
                let case = format!("{label} {shape} {mode} {direction}");
                let options = opts(Algorithm::SinglePass, mode).policy(policy);
                let options = if reverse { options.reverse() } else { options };
                let mut scanner = match gpu.scanner::<Op>(options) {
                    Ok(s) => s,
                    Err(ScanError::Codegen(e)) if e.to_string().contains("shared memory") => {
                        continue
                    }
                    Err(ScanError::SharedMemory { .. }) => continue,
                    Err(e) => {
                        report.fail(format!("{case}: building the scanner failed: {e}"));
                        continue;
                    }
                };
                let tile = scanner.tile_items();
                let mut rng = Rng::new(&case);
                for n in [
                    1,
                    31,
                    32,
                    33,
                    tile - 1,
                    tile,
                    tile + 1,
                    997,
                    65_537,
                    300 * tile + 7,
                ] {
                    let input: Vec<Op::Elem> = input(&mut rng, n as usize);
                    let mut expected = input.clone();
                    reference::<Op>(
                        &input,
                        &[(0, input.len())],
                        mode,
                        reverse,
                        None,
                        &mut expected,
                    );
                    check_scans_against(
                        &mut scanner,
                        &stream,
                        report,
                        &format!("{case} n={n}"),
                        &input,
                        &expected,
                        !reverse,
                    );
                }
            }
        }
    }
}

/// [`check_policies`] for the element sizes and operators the tile-shape tests cover: 1 to 32
/// bytes, non-commutative structs included.
/// [`check_policies`] for the elements wider than 8 bytes, which full tiles move as several
/// vectors (policy element_vectors: 32 bytes as two 16-byte ones, or four 8-byte or eight 4-byte
/// ones at narrower vector widths; 24 bytes as three 8-byte ones; 12 as three 4-byte ones) or,
/// at 16 bytes of 8-byte alignment, as one 16-byte vector.
fn check_policies_wide_elements(gpu: &Gpu, report: &mut Report, policies: &[TuningPolicy]) {
    check_policies::<MatMul>(gpu, report, "matmul Mat2", BuiltinOp::Mul, policies);
    check_policies::<ComposeCounted>(
        gpu,
        report,
        "compose_counted CountedAffine",
        BuiltinOp::Mul,
        policies,
    );
    check_policies::<Compose64>(gpu, report, "compose64 Affine64", BuiltinOp::Mul, policies);
    check_policies::<LastOfRun>(gpu, report, "last_of_run Tally", BuiltinOp::Add, policies);
}

fn check_policies_every_element(report: &mut Report, policies: &[TuningPolicy]) {
    let gpu = gpu();
    check_policies_wide_elements(&gpu, report, policies);
    check_policies::<Compose>(&gpu, report, "compose Affine", BuiltinOp::Add, policies);
    check_policies::<Add<f64>>(&gpu, report, "add f64", BuiltinOp::Add, policies);
    check_policies::<Add<i32>>(&gpu, report, "add i32", BuiltinOp::Add, policies);
    check_policies::<Mul<u8>>(&gpu, report, "mul u8", BuiltinOp::Mul, policies);
    check_policies::<ComposeBytes>(
        &gpu,
        report,
        "compose_bytes ByteAffine",
        BuiltinOp::Add,
        policies,
    );
}

/// Staged tiles (TuningPolicy::stage_items: the items stay in the tile's transpose buffer from
/// load to store, a thread holds only its reduction) for plain scans of elements of 4 to 32
/// bytes, non-commutative ones included, under shapes that stage 4 to 64 items a thread (past
/// 48 KiB from dynamic shared memory), with and without the L2 prefetch, in one run and in
/// several ([`check_policies`]). The packed 1-byte cases ignore the flag and check that they
/// still scan in registers.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn staged_tiles_every_mode_direction_and_shape() {
    // (threads, items, register cap, L2 prefetch tiles, runs per thread). The last two need
    // more than the 48 KiB of static shared memory for 8-byte and wider elements.
    let shapes = [
        (128, 8, 5, 48, 1),
        (64, 16, 1, 0, 4),
        (32, 4, 1, 3, 2),
        (128, 32, 4, 48, 1),
        (256, 16, 3, 96, 2),
        (128, 64, 2, 96, 4),
    ];
    let policies: Vec<TuningPolicy> = shapes
        .iter()
        .map(|&(threads, items, cap, prefetch, runs)| TuningPolicy {
            min_blocks_per_sm: cap,
            l2_prefetch_tiles: prefetch,
            stage_items: true,
            thread_runs: runs,
            ..TuningPolicy::new(threads, items)
        })
        .collect();
    let mut report = Report::default();
    check_policies_every_element(&mut report, &policies);
    report.finish("staged_tiles_every_mode_direction_and_shape");
}

/// Items in registers folded and scanned as several interleaved runs (TuningPolicy::thread_runs)
/// for elements of 1 to 32 bytes, non-commutative ones included, from 2 runs to one run per
/// item, with the default vectors (packed u8 runs of whole words and of single bytes) and
/// without ([`check_policies`]).
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn thread_runs_every_mode_direction_and_shape() {
    // (threads, items, register cap, vector bytes, runs per thread)
    let shapes = [
        (128, 8, 4, 4, 2),
        (128, 16, 3, 16, 4),
        (64, 4, 1, 1, 4),
        (32, 6, 1, 4, 3),
        (128, 32, 6, 8, 8),
    ];
    let policies: Vec<TuningPolicy> = shapes
        .iter()
        .map(|&(threads, items, cap, vector_bytes, runs)| TuningPolicy {
            min_blocks_per_sm: cap,
            vector_bytes,
            l2_prefetch_tiles: 48,
            thread_runs: runs,
            ..TuningPolicy::new(threads, items)
        })
        .collect();
    let mut report = Report::default();
    check_policies_every_element(&mut report, &policies);
    report.finish("thread_runs_every_mode_direction_and_shape");
}

/// Tiles that scan before the look-back and join the tile's prefix after it
/// (TuningPolicy::defer_tile_prefix) for elements of 1 to 32 bytes, non-commutative ones
/// included: items in registers (4-, 8- and 16-byte vectors, scalar), staged in shared memory,
/// in one run and in several ([`check_policies`]: every mode and direction, sizes around the
/// tile, a prime, many tiles; aligned and unaligned buffers, in place). A kernel that spills
/// deferred is built seeded (the register ladder), as the defaults are.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn deferred_prefixes_every_mode_direction_and_shape() {
    // (threads, items, register cap, vector bytes, runs per thread, staged)
    let shapes = [
        (128, 16, 4, 16, 1, false),
        (64, 8, 1, 4, 2, false),
        (32, 6, 1, 1, 3, false),
        (128, 8, 5, 16, 1, true),
        (64, 16, 2, 8, 4, true),
    ];
    let policies: Vec<TuningPolicy> = shapes
        .iter()
        .map(
            |&(threads, items, cap, vector_bytes, runs, staged)| TuningPolicy {
                min_blocks_per_sm: cap,
                vector_bytes,
                l2_prefetch_tiles: 48,
                thread_runs: runs,
                stage_items: staged,
                defer_tile_prefix: true,
                ..TuningPolicy::new(threads, items)
            },
        )
        .collect();
    let mut report = Report::default();
    check_policies_every_element(&mut report, &policies);
    report.finish("deferred_prefixes_every_mode_direction_and_shape");
}

/// Packed 1- and 2-byte items of the built-in integer monoids, which fold and scan whole words
/// (scan-codegen's words.rs, tile_words.cu.tera): sums by dot products, products by one
/// multiply a lane, and, or, xor lane-wise, max and min by 16x2 compares (1-byte items split into even and odd bytes), signed and
/// unsigned, under shapes of 1 to 4 runs a thread
/// of 1 to 8 words each, every mode and direction ([`check_policies`]: sizes around the tile, a
/// prime, many tiles; aligned and unaligned buffers, in place).
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn word_combines_every_form_shape_mode_and_direction() {
    // (threads, items, register cap, L2 prefetch tiles, runs per thread)
    let shapes = [(128, 128, 6, 48, 4), (64, 16, 1, 0, 1), (32, 24, 1, 0, 3)];
    let policies: Vec<TuningPolicy> = shapes
        .iter()
        .map(|&(threads, items, cap, prefetch, runs)| TuningPolicy {
            min_blocks_per_sm: cap,
            vector_bytes: 8,
            l2_prefetch_tiles: prefetch,
            thread_runs: runs,
            ..TuningPolicy::new(threads, items)
        })
        .collect();
    let gpu = gpu();
    let mut report = Report::default();
    let r = &mut report;
    check_policies::<Add<u8>>(&gpu, r, "add u8", BuiltinOp::Add, &policies);
    check_policies::<Add<i8>>(&gpu, r, "add i8", BuiltinOp::Add, &policies);
    check_policies::<Add<u16>>(&gpu, r, "add u16", BuiltinOp::Add, &policies);
    check_policies::<Add<i16>>(&gpu, r, "add i16", BuiltinOp::Add, &policies);
    // Products of odd factors (TestValue::random): a lost or repeated item shows at once.
    check_policies::<Mul<u8>>(&gpu, r, "mul u8", BuiltinOp::Mul, &policies);
    check_policies::<Mul<i8>>(&gpu, r, "mul i8", BuiltinOp::Mul, &policies);
    check_policies::<Mul<u16>>(&gpu, r, "mul u16", BuiltinOp::Mul, &policies);
    check_policies::<Mul<i16>>(&gpu, r, "mul i16", BuiltinOp::Mul, &policies);
    check_policies::<And<u8>>(&gpu, r, "and u8", BuiltinOp::And, &policies);
    check_policies::<Or<i8>>(&gpu, r, "or i8", BuiltinOp::Or, &policies);
    check_policies::<Xor<u8>>(&gpu, r, "xor u8", BuiltinOp::Xor, &policies);
    check_policies::<And<i16>>(&gpu, r, "and i16", BuiltinOp::And, &policies);
    check_policies::<Or<u16>>(&gpu, r, "or u16", BuiltinOp::Or, &policies);
    check_policies::<Xor<i16>>(&gpu, r, "xor i16", BuiltinOp::Xor, &policies);
    check_policies::<Max<u16>>(&gpu, r, "max u16", BuiltinOp::Max, &policies);
    check_policies::<Max<i16>>(&gpu, r, "max i16", BuiltinOp::Max, &policies);
    check_policies::<Min<u16>>(&gpu, r, "min u16", BuiltinOp::Min, &policies);
    check_policies::<Min<i16>>(&gpu, r, "min i16", BuiltinOp::Min, &policies);
    check_policies::<Max<u8>>(&gpu, r, "max u8", BuiltinOp::Max, &policies);
    check_policies::<Max<i8>>(&gpu, r, "max i8", BuiltinOp::Max, &policies);
    check_policies::<Min<u8>>(&gpu, r, "min u8", BuiltinOp::Min, &policies);
    check_policies::<Min<i8>>(&gpu, r, "min i8", BuiltinOp::Min, &policies);
    // An operator that does not say its form: the runtime finds it from the Rust side.
    check_policies::<UnsaidByteMax>(&gpu, r, "unsaid max i8", BuiltinOp::Max, &policies);
    // Half-float sums add two lanes at once: on sums that are exact in any order (walk_steps),
    // they must match the sequential reference bit for bit.
    let steps = |rng: &mut Rng, n: usize| walk_steps(rng, n);
    check_policies_on::<Add<f16>>(&gpu, r, "add f16", &policies, |rng, n| {
        steps(rng, n).into_iter().map(f16::from_f32).collect()
    });
    check_policies_on::<Add<bf16>>(&gpu, r, "add bf16", &policies, |rng, n| {
        steps(rng, n).into_iter().map(bf16::from_f32).collect()
    });
    fn takes_words<Op: ScanOp>(gpu: &Gpu, report: &mut Report, label: &str)
    where
        Op::Elem: TestValue,
    {
        let took_words = gpu
            .scanner::<Op>(opts(Algorithm::SinglePass, ScanMode::Inclusive))
            .map_err(|e| e.to_string())
            .and_then(|mut s| {
                match s
                    .source()
                    .map_err(|e| e.to_string())?
                    .contains("scan_word_inclusive")
                {
                    true => Ok(()),
                    false => Err("the default tile does not fold whole words".to_string()),
                }
            });
        report.record(&format!("{label} takes the word path"), took_words);
    }
    takes_words::<UnsaidByteMax>(&gpu, r, "unsaid max i8");
    takes_words::<Mul<u8>>(&gpu, r, "mul u8");
    takes_words::<Mul<i16>>(&gpu, r, "mul i16");
    takes_words::<Add<f16>>(&gpu, r, "add f16");
    takes_words::<Add<bf16>>(&gpu, r, "add bf16");
    report.finish("word_combines_every_form_shape_mode_and_direction");
}

/// i8 max written by hand, whose `device_op` does not say its word form: the runtime proves it
/// (`WordForm::of_byte_op`) and its tiles take the word path.
struct UnsaidByteMax;

impl ScanOp for UnsaidByteMax {
    type Elem = i8;
    fn identity() -> i8 {
        i8::MIN
    }
    fn combine(a: i8, b: i8) -> i8 {
        if b > a {
            b
        } else {
            a
        }
    }
    fn device_op() -> scan_core::OpSpec {
        scan_core::OpSpec {
            name: "unsaid_max".into(),
            word_form: None,
            ..Max::<i8>::device_op()
        }
    }
}

/// Reductions (`Gpu::reducer`: the reducing kernels, which fold only) of the packed 1- and
/// 2-byte built-in monoids that fold whole words, at sizes around the tile and past many tiles,
/// from a random initial value.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn word_combine_reductions() {
    /// Reduces `input(rng, n)`'s array from its initial value at each size, against a fold.
    fn run_on<Op: ScanOp>(
        gpu: &Gpu,
        report: &mut Report,
        label: &str,
        input: impl Fn(&mut Rng, usize) -> (Vec<Op::Elem>, Op::Elem),
    ) where
        Op::Elem: TestValue,
    {
        let mut reducer = match gpu.reducer::<Op>() {
            Ok(r) => r,
            Err(e) => return report.fail(format!("{label}: building the reducer failed: {e}")),
        };
        let tile = reducer.tile_items();
        let mut rng = Rng::new(label);
        for n in [
            1,
            31,
            33,
            tile - 1,
            tile,
            tile + 1,
            997,
            1_000_003,
            50 * tile + 5,
        ] {
            let (input, init) = input(&mut rng, n as usize);
            let want = input.iter().fold(init, |a, &x| Op::combine(a, x));
            let result = reducer
                .reduce(&input, init)
                .map_err(|e| e.to_string())
                .and_then(|got| first_mismatch(&[want], &[got]));
            report.record(&format!("{label} reduce n={n}"), result);
        }
    }
    fn run<Op: ScanOp>(gpu: &Gpu, report: &mut Report, label: &str, op: BuiltinOp)
    where
        Op::Elem: TestValue,
    {
        run_on::<Op>(gpu, report, label, |rng, n| {
            let input = (0..n).map(|_| Op::Elem::random(rng, op)).collect();
            (input, Op::Elem::random(rng, op))
        });
    }
    // Half-float sums of steps of a walk (walk_steps): exact in any order.
    fn run_half<Op: ScanOp>(gpu: &Gpu, report: &mut Report, label: &str, half: fn(f32) -> Op::Elem)
    where
        Op::Elem: TestValue,
    {
        run_on::<Op>(gpu, report, label, |rng, n| {
            let input = walk_steps(rng, n).into_iter().map(half).collect();
            (input, half(3.0))
        });
    }
    let gpu = gpu();
    let mut report = Report::default();
    let r = &mut report;
    run::<Add<u8>>(&gpu, r, "add u8", BuiltinOp::Add);
    run::<Add<i16>>(&gpu, r, "add i16", BuiltinOp::Add);
    run::<Mul<i8>>(&gpu, r, "mul i8", BuiltinOp::Mul);
    run::<Mul<u16>>(&gpu, r, "mul u16", BuiltinOp::Mul);
    run::<Xor<i8>>(&gpu, r, "xor i8", BuiltinOp::Xor);
    run::<And<u16>>(&gpu, r, "and u16", BuiltinOp::And);
    run::<Or<u8>>(&gpu, r, "or u8", BuiltinOp::Or);
    run::<Max<i8>>(&gpu, r, "max i8", BuiltinOp::Max);
    run::<Min<u8>>(&gpu, r, "min u8", BuiltinOp::Min);
    run::<Max<u16>>(&gpu, r, "max u16", BuiltinOp::Max);
    run::<Min<i16>>(&gpu, r, "min i16", BuiltinOp::Min);
    run_half::<Add<f16>>(&gpu, r, "add f16", f16::from_f32);
    run_half::<Add<bf16>>(&gpu, r, "add bf16", bf16::from_f32);
    report.finish("word_combine_reductions");
}

/// Packed 1-byte items (layout::packs_items) under every register cap the runtime may fall back
/// to, and at every items-per-thread shape up to a full 64 registers, and 2-byte ones (unpacked):
/// single-pass scans of odd products (a stray zero or a lost item shows at once) and sums,
/// beside the CPU.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn packed_sub_word_items_every_cap_and_shape() {
    fn run<Op: ScanOp>(gpu: &Gpu, report: &mut Report, label: &str, op: BuiltinOp, items: &[u32])
    where
        Op::Elem: TestValue,
    {
        let mut rng = Rng::new(label);
        for &items_per_thread in items {
            for min_blocks_per_sm in [1, 3, 6] {
                let policy = TuningPolicy {
                    min_blocks_per_sm,
                    vector_bytes: 8,
                    l2_prefetch_tiles: 48,
                    ..TuningPolicy::new(128, items_per_thread)
                };
                for mode in ScanMode::ALL {
                    let options = opts(Algorithm::SinglePass, mode).policy(policy);
                    let mut scanner = match gpu.scanner::<Op>(options) {
                        Ok(s) => s,
                        Err(e) => {
                            report.fail(format!("{label} {policy:?}: {e}"));
                            continue;
                        }
                    };
                    let tile = scanner.tile_items() as usize;
                    // SCANGEN_QUICK=1: one partial and one full tile (for compute-sanitizer).
                    let sizes = if std::env::var_os("SCANGEN_QUICK").is_some() {
                        vec![tile - 1, tile]
                    } else {
                        vec![tile - 1, tile, 3 * tile + 5, 200 * tile + 3]
                    };
                    for n in sizes {
                        let input: Vec<Op::Elem> =
                            (0..n).map(|_| Op::Elem::random(&mut rng, op)).collect();
                        let mut expected = input.clone();
                        cpu::scan_sequential_in_place::<Op>(&mut expected, mode);
                        let case = format!(
                            "{label} {mode} 128x{items_per_thread} cap {min_blocks_per_sm} (built {:?}, {:?} B local) n={n}",
                            scanner.policy().map(|p| p.min_blocks_per_sm),
                            scanner.local_memory_bytes()
                        );
                        let result = scanner
                            .scan(&input)
                            .map_err(|e| e.to_string())
                            .and_then(|got| first_mismatch(&expected, &got));
                        report.record(&case, result);
                    }
                }
            }
        }
    }
    let gpu = gpu();
    let mut report = Report::default();
    // Products of 2-byte items at 64 and 128 items under the 6-block cap were 0 from the third
    // warp on until each warp total got a word of its own (block_scan_kogge_stone.cu.tera): the
    // products, and max of i16 (whose identity is not 0), would show a total read wrongly.
    run::<Mul<u16>>(
        &gpu,
        &mut report,
        "mul u16",
        BuiltinOp::Mul,
        &[8, 32, 64, 128],
    );
    run::<Mul<i16>>(&gpu, &mut report, "mul i16", BuiltinOp::Mul, &[64, 128]);
    run::<Add<i16>>(&gpu, &mut report, "add i16", BuiltinOp::Add, &[128]);
    run::<Max<i16>>(&gpu, &mut report, "max i16", BuiltinOp::Max, &[64, 128]);
    run::<Min<u16>>(&gpu, &mut report, "min u16", BuiltinOp::Min, &[128]);
    run::<Mul<u8>>(&gpu, &mut report, "mul u8", BuiltinOp::Mul, &[16, 128, 256]);
    run::<Add<u8>>(&gpu, &mut report, "add u8", BuiltinOp::Add, &[256]);
    run::<Max<i8>>(&gpu, &mut report, "max i8", BuiltinOp::Max, &[256]);
    // A non-commutative 2-byte struct, packed two to a word.
    run::<ComposeBytes>(
        &gpu,
        &mut report,
        "compose_bytes",
        BuiltinOp::Add,
        &[32, 64, 128],
    );
    report.finish("packed_sub_word_items_every_cap_and_shape");
}
