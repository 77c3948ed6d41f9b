//! Fused lift/project scans and transform reductions, with operators written with `#[scan_op]`
//! (the macro-generated lift/project run on the CPU; their lowering runs on the GPU), against
//! plain Rust loops on random, never-zero data at awkward sizes.
//!
//! The CPU tests run everywhere. The GPU tests are `#[ignore]`d (CI has no GPU): the GPU
//! bundle runs them with --include-ignored (`scripts/build-gpu-bundle.sh`).

use rand::{rngs::StdRng, Rng, SeedableRng};
use scangen::lower::{parse_ops_file, EvalError, EvalOp, ValueLayout};
use scangen::runtime::{
    CpuScanner, DeviceSegments, Gpu, HostSegments, ScanError, ScanExtras, ScanOptions, Segments,
};
use scangen::{scan_op, Algorithm, PrimType, ScanElement, ScanMode, ScanOp, Transform};

/// Kadane: `{best, prefix, suffix, total}` from raw i64, projected to `best`. Not commutative.
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Kad {
    pub best: i64,
    pub prefix: i64,
    pub suffix: i64,
    pub total: i64,
}

pub struct Kadane;

#[scan_op]
impl ScanOp for Kadane {
    type Elem = Kad;
    fn identity() -> Kad {
        const NONE: i64 = i64::MIN / 4;
        Kad {
            best: NONE,
            prefix: NONE,
            suffix: NONE,
            total: 0,
        }
    }
    fn combine(l: Kad, r: Kad) -> Kad {
        Kad {
            best: l.best.max(r.best).max(l.suffix + r.prefix),
            prefix: l.prefix.max(l.total + r.prefix),
            suffix: r.suffix.max(l.suffix + r.total),
            total: l.total + r.total,
        }
    }
    fn lift(x: i64, _index: u64) -> Kad {
        Kad {
            best: x,
            prefix: x,
            suffix: x,
            total: x,
        }
    }
    fn project(e: Kad) -> i64 {
        e.best
    }
}

/// Argmin with the index from `lift`, projected to the index.
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct MinAt {
    pub value: f32,
    pub index: u64,
}

pub struct ArgMin;

#[scan_op]
impl ScanOp for ArgMin {
    type Elem = MinAt;
    fn identity() -> MinAt {
        MinAt {
            value: f32::INFINITY,
            index: u64::MAX,
        }
    }
    fn combine(l: MinAt, r: MinAt) -> MinAt {
        if r.value < l.value || (r.value == l.value && r.index < l.index) {
            r
        } else {
            l
        }
    }
    fn lift(value: f32, index: u64) -> MinAt {
        MinAt { value, index }
    }
    fn project(m: MinAt) -> u64 {
        m.index
    }
}

/// `x -> a*x + b` over wrapping u64 from two arrays (exact, not commutative), projected to
/// `x[i]` (the map applied to 0) as u32: a recurrence `x[i] = a[i] x[i-1] + b[i]`.
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Aff {
    pub a: u64,
    pub b: u64,
}

pub struct Recur;

#[scan_op]
impl ScanOp for Recur {
    type Elem = Aff;
    fn identity() -> Aff {
        Aff { a: 1, b: 0 }
    }
    fn combine(l: Aff, r: Aff) -> Aff {
        Aff {
            a: r.a.wrapping_mul(l.a),
            b: r.a.wrapping_mul(l.b).wrapping_add(r.b),
        }
    }
    fn lift(a: u32, b: u64, index: u64) -> Aff {
        // The index takes part, so a wrong index shows up in the result.
        Aff {
            a: a as u64 | 1,
            b: b ^ index,
        }
    }
    fn project(m: Aff) -> u32 {
        (m.b >> 7) as u32
    }
}

/// Only a projection: elements (u64) in, u8 out; lift is the identity.
pub struct SumLow;

#[scan_op]
impl ScanOp for SumLow {
    type Elem = u64;
    fn identity() -> u64 {
        0
    }
    fn combine(l: u64, r: u64) -> u64 {
        l.wrapping_add(r)
    }
    fn project(e: u64) -> u8 {
        (e % 251) as u8
    }
}

/// Sizes around warps, tiles (up to 8192 elements) and primes; never only powers of two.
fn sizes() -> Vec<usize> {
    let mut v = vec![0, 1, 2, 31, 32, 33, 97, 1000, 1021];
    for t in [512usize, 1024, 2048, 4096, 8192] {
        v.extend([t - 1, t, t + 1]);
    }
    v.extend([8191 * 3 + 17, 65_537, 262_147]);
    v
}

fn kadane_input(rng: &mut StdRng, n: usize) -> Vec<i64> {
    (0..n)
        .map(|_| {
            let x = rng.gen_range(-1_000_000i64..1_000_000);
            if x == 0 {
                7
            } else {
                x
            }
        })
        .collect()
}

fn argmin_input(rng: &mut StdRng, n: usize) -> Vec<f32> {
    // Few values: ties everywhere; never 0.
    (0..n).map(|_| rng.gen_range(1..40) as f32 * 0.5).collect()
}

fn recur_input(rng: &mut StdRng, n: usize) -> (Vec<u32>, Vec<u64>) {
    (
        (0..n).map(|_| rng.gen::<u32>() | 2).collect(),
        (0..n).map(|_| rng.gen::<u64>() | 1).collect(),
    )
}

/// The reference: lift with the index, scan sequentially in `mode` (reversed: from the end),
/// project.
fn reference<Op: Transform>(
    inputs: &[Op::Input],
    mode: ScanMode,
    reverse: bool,
) -> (Vec<Op::Output>, Op::Elem) {
    let n = inputs.len();
    let mut out = vec![Op::project(Op::identity()); n];
    let mut acc = Op::identity();
    let order: Vec<usize> = if reverse {
        (0..n).rev().collect()
    } else {
        (0..n).collect()
    };
    for i in order {
        let x = Op::lift(inputs[i], i as u64);
        let before = acc;
        acc = Op::combine(acc, x);
        out[i] = Op::project(if mode == ScanMode::Exclusive {
            before
        } else {
            acc
        });
    }
    (out, acc)
}

fn options(mode: ScanMode, reverse: bool, algorithm: Algorithm) -> ScanOptions {
    let o = ScanOptions::default().mode(mode).algorithm(algorithm);
    if reverse {
        o.reverse()
    } else {
        o
    }
}

#[test]
fn cpu_transform_scans_match_loops() {
    let mut rng = StdRng::seed_from_u64(0xf05e);
    for n in sizes() {
        let k = kadane_input(&mut rng, n);
        let m = argmin_input(&mut rng, n);
        let (a, b) = recur_input(&mut rng, n);
        let ab: Vec<(u32, u64)> = a.iter().copied().zip(b.iter().copied()).collect();
        let s: Vec<u64> = (0..n).map(|_| rng.gen::<u64>() | 1).collect();
        for mode in ScanMode::ALL {
            for reverse in [false, true] {
                for sequential in [false, true] {
                    let mut o = options(mode, reverse, Algorithm::SinglePass);
                    if sequential {
                        o = o.cpu_sequential();
                    }
                    let ctx = format!("n={n} {mode} reverse={reverse} sequential={sequential}");
                    let got = CpuScanner::<Kadane>::new(o)
                        .transform_scan(k.as_slice())
                        .unwrap();
                    assert_eq!(
                        got,
                        reference::<Kadane>(&k, mode, reverse).0,
                        "kadane {ctx}"
                    );
                    let got = CpuScanner::<ArgMin>::new(o)
                        .transform_scan(m.as_slice())
                        .unwrap();
                    assert_eq!(
                        got,
                        reference::<ArgMin>(&m, mode, reverse).0,
                        "argmin {ctx}"
                    );
                    let got = CpuScanner::<Recur>::new(o)
                        .transform_scan((a.as_slice(), b.as_slice()))
                        .unwrap();
                    assert_eq!(got, reference::<Recur>(&ab, mode, reverse).0, "recur {ctx}");
                    let got = CpuScanner::<SumLow>::new(o)
                        .transform_scan(s.as_slice())
                        .unwrap();
                    assert_eq!(
                        got,
                        reference::<SumLow>(&s, mode, reverse).0,
                        "sumlow {ctx}"
                    );
                }
            }
        }
        // Reductions: the fold of lift in sequence order, after an initial value.
        let cpu = CpuScanner::<Recur>::new(ScanOptions::default());
        let init = Aff { a: 3, b: 5 };
        let want = ab.iter().enumerate().fold(init, |acc, (i, &x)| {
            Recur::combine(acc, Recur::lift(x, i as u64))
        });
        assert_eq!(
            cpu.transform_reduce((a.as_slice(), b.as_slice()), init)
                .unwrap(),
            want
        );
        let cpu = CpuScanner::<Kadane>::new(ScanOptions::default());
        assert_eq!(
            cpu.transform_reduce(k.as_slice(), Kadane::identity())
                .unwrap(),
            reference::<Kadane>(&k, ScanMode::Inclusive, false).1,
            "n={n}"
        );
    }
}

/// The lift sees each value's own index: a plain Rust loop over the arrays agrees with the
/// macro's Transform impl, and the kadane answer is Kadane's loop.
#[test]
fn cpu_kadane_is_kadanes_loop() {
    let mut rng = StdRng::seed_from_u64(3);
    let xs = kadane_input(&mut rng, 10_007);
    let got = CpuScanner::<Kadane>::new(ScanOptions::default())
        .transform_scan(xs.as_slice())
        .unwrap();
    let (mut here, mut best) = (0i64, i64::MIN);
    for (i, &x) in xs.iter().enumerate() {
        here = if i == 0 { x } else { x.max(here + x) };
        best = best.max(here);
        assert_eq!(got[i], best, "prefix {i}");
    }
}

#[test]
fn cpu_bad_inputs_are_typed_errors() {
    let mut s = CpuScanner::<Recur>::new(ScanOptions::default());
    let (a, b) = (vec![1u32; 5], vec![1u64; 4]);
    match s.transform_scan((a.as_slice(), b.as_slice())) {
        Err(ScanError::InputLengths { lens }) => assert_eq!(lens, vec![5, 4]),
        other => panic!("{other:?}"),
    }
    let mut out = vec![0u32; 3];
    let b = vec![1u64; 5];
    match s.transform_scan_into((a.as_slice(), b.as_slice()), &mut out) {
        Err(ScanError::LengthMismatch { input, output }) => assert_eq!((input, output), (5, 3)),
        other => panic!("{other:?}"),
    }
}

/// The lowered transforms the GPU runs: the macro's spec names the arrays and bodies.
#[test]
fn device_transforms_describe_the_arrays() {
    let t = Recur::device_transform();
    assert_eq!(t.inputs.len(), 2);
    assert_eq!(
        (t.inputs[0].size(), t.inputs[1].size(), t.output.size()),
        (4, 8, 4)
    );
    assert_eq!(t.lift_params, vec!["a", "b", "index"]);
    assert!(t.lift_body.contains("index"), "{}", t.lift_body);
    let t = SumLow::device_transform();
    assert_eq!((t.inputs.len(), t.output.size()), (1, 1));
    assert!(t.lift_body.contains("return x;"));
}

// ---- The IR evaluator (`scangen scan --file` without a GPU) against the macro's Rust ------------

/// The bytes of a slice of plain values (primitives: no padding).
fn bytes<T: Copy>(v: &[T]) -> Vec<u8> {
    // SAFETY: `T` is a primitive here (every byte initialised); the bytes are copied out.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
        .to_vec()
}

fn evaluator(name: &str) -> EvalOp {
    parse_ops_file(include_str!("fused.rs"))
        .unwrap()
        .evaluator(name)
        .unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

/// The macro's Rust on the CPU backend, sequential (one fold, like the evaluator).
fn macro_scan<Op: Transform, I: scangen::runtime::HostInputs<Op::Input>>(
    inputs: I,
    mode: ScanMode,
) -> Vec<Op::Output>
where
    Op::Output: Copy,
{
    CpuScanner::<Op>::new(ScanOptions::default().mode(mode).cpu_sequential())
        .transform_scan(inputs)
        .unwrap()
}

const SIZES: [usize; 9] = [0, 1, 2, 31, 32, 33, 97, 1021, 4099];

#[test]
fn evaluator_lift_project_match_the_macro_bit_for_bit() {
    let (kad, arg, rec, low) = (
        evaluator("Kadane"),
        evaluator("ArgMin"),
        evaluator("Recur"),
        evaluator("SumLow"),
    );
    let mut rng = StdRng::seed_from_u64(0xe7a1);
    for n in SIZES {
        let k: Vec<i64> = (0..n)
            .map(|_| rng.gen_range(-1_000_000..1_000_000))
            .collect();
        let m: Vec<f32> = (0..n).map(|_| rng.gen_range(1..40) as f32 * 0.5).collect();
        let a: Vec<u32> = (0..n).map(|_| rng.gen::<u32>() | 2).collect();
        let b: Vec<u64> = (0..n).map(|_| rng.gen::<u64>() | 1).collect();
        let s: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
        for mode in ScanMode::ALL {
            let ex = mode == ScanMode::Exclusive;
            let ctx = format!("n={n} {mode}");
            assert_eq!(
                kad.transform_scan(&[&bytes(&k)], ex).unwrap(),
                bytes(&macro_scan::<Kadane, _>(k.as_slice(), mode)),
                "kadane {ctx}"
            );
            assert_eq!(
                arg.transform_scan(&[&bytes(&m)], ex).unwrap(),
                bytes(&macro_scan::<ArgMin, _>(m.as_slice(), mode)),
                "argmin {ctx}"
            );
            assert_eq!(
                rec.transform_scan(&[&bytes(&a), &bytes(&b)], ex).unwrap(),
                bytes(&macro_scan::<Recur, _>((a.as_slice(), b.as_slice()), mode)),
                "recur {ctx}"
            );
            assert_eq!(
                low.transform_scan(&[&bytes(&s)], ex).unwrap(),
                bytes(&macro_scan::<SumLow, _>(s.as_slice(), mode)),
                "sumlow {ctx}"
            );
        }
    }
}

#[test]
fn evaluator_reports_the_transform_layouts() {
    let rec = evaluator("Recur");
    assert!(rec.has_transform());
    let layout = |size, prim| ValueLayout {
        size,
        prim: Some(prim),
    };
    assert_eq!(
        rec.input_layouts().unwrap(),
        vec![layout(4, PrimType::U32), layout(8, PrimType::U64)]
    );
    assert_eq!(rec.output_layout().unwrap(), layout(4, PrimType::U32));
    let low = evaluator("SumLow");
    assert_eq!(low.input_layouts().unwrap(), vec![layout(8, PrimType::U64)]);
    assert_eq!(low.output_layout().unwrap(), layout(1, PrimType::U8));
    let kad = evaluator("Kadane");
    let mut out = [0u8; 32];
    kad.lift_into(&[&(-5i64).to_le_bytes()], 3, &mut out)
        .unwrap();
    assert_eq!(out, bytes(&[-5i64; 4]).as_slice(), "lift fills every field");
    let mut best = [0u8; 8];
    kad.project_into(&bytes(&[9i64, 1, 2, 3]), &mut best)
        .unwrap();
    assert_eq!(i64::from_le_bytes(best), 9);
}

#[test]
fn evaluator_transform_errors_are_typed() {
    let rec = evaluator("Recur");
    let a = bytes(&[1u32, 2, 3]);
    let b = bytes(&[1u64, 2]);
    assert!(matches!(
        rec.transform_scan(&[&a], false),
        Err(EvalError::InputArrays {
            expected: 2,
            got: 1
        })
    ));
    assert!(matches!(
        rec.transform_scan(&[&a, &b], false),
        Err(EvalError::WrongSize { .. })
    ));
    let mut out = [0u8; 4];
    assert!(matches!(
        rec.project_into(&[0u8; 16], &mut out[..3]),
        Err(EvalError::WrongSize { .. })
    ));
}

/// A lifted subtraction: unlawful on any domain.
pub struct LiftedSub;

#[scan_op]
impl ScanOp for LiftedSub {
    type Elem = i64;
    fn identity() -> i64 {
        0
    }
    fn combine(a: i64, b: i64) -> i64 {
        a.wrapping_sub(b)
    }
    fn lift(x: i32, _index: u64) -> i64 {
        x as i64
    }
}

/// The law checker on the real domain of in-Rust operators with a `lift`: folds of the Rust
/// `lift` of raw inputs (`laws::TransformInputs`). Kadane is unlawful on every bit pattern of
/// its element (the sentinels overflow) and lawful where a scan meets it; a lifted subtraction
/// fails on both.
#[test]
fn law_checker_samples_lifted_inputs_of_rust_operators() {
    use scangen::laws::{check, check_with, CpuLaws, LawConfig, LawEvaluator, TransformInputs};
    let config = LawConfig {
        samples: 4000,
        ..LawConfig::default()
    };
    let mut kad = CpuLaws::<Kadane>::new();
    // On every bit pattern the sentinels overflow: a failed law, or (debug build) a panic the
    // checker reports as an error.
    match check("Kadane", &mut [&mut kad as &mut dyn LawEvaluator], &config) {
        Ok(every_bit) => assert!(!every_bit.passed(), "{every_bit}"),
        Err(e) => assert!(e.to_string().contains("overflow"), "{e}"),
    }
    let mut sampler = TransformInputs::<Kadane>::new().unwrap().folds(8);
    let lifted = check_with(
        "Kadane",
        &mut [&mut kad as &mut dyn LawEvaluator],
        &config,
        &mut sampler,
    )
    .unwrap();
    assert!(lifted.passed(), "{lifted}");
    assert!(lifted.to_string().contains("lifted inputs"), "{lifted}");

    // Two input arrays and the index (the recurrence), through lift_bytes.
    let mut rec = CpuLaws::<Recur>::new();
    let mut sampler = TransformInputs::<Recur>::new().unwrap().folds(8);
    let report = check_with(
        "Recur",
        &mut [&mut rec as &mut dyn LawEvaluator],
        &config,
        &mut sampler,
    )
    .unwrap();
    assert!(report.passed(), "{report}");

    let mut sub = CpuLaws::<LiftedSub>::new();
    let mut sampler = TransformInputs::<LiftedSub>::new().unwrap().folds(8);
    let report = check_with(
        "LiftedSub",
        &mut [&mut sub as &mut dyn LawEvaluator],
        &config,
        &mut sampler,
    )
    .unwrap();
    assert!(!report.passed(), "{report}");
}

/// `lift_bytes` (generated by `#[scan_op]`) is `lift` on the inputs' bytes, and refuses slices
/// of the wrong count or size.
#[test]
fn lift_bytes_is_lift_on_bytes() {
    let (a, b, i) = (7u32, 0x1234_5678_9abc_def0u64, 42u64);
    // SAFETY: the slices hold a u32 and a u64.
    let got = unsafe { Recur::lift_bytes(&[&a.to_le_bytes(), &b.to_le_bytes()], i) };
    assert_eq!(got, Some(Recur::lift((a, b), i)));
    // SAFETY: as above (refused before any read).
    assert_eq!(unsafe { Recur::lift_bytes(&[&a.to_le_bytes()], i) }, None);
    // SAFETY: as above.
    assert_eq!(
        unsafe { Recur::lift_bytes(&[&a.to_le_bytes(), &a.to_le_bytes()], i) },
        None
    );
}

// ---- GPU ----------------------------------------------------------------------------------

/// Panics with the first differing position (not megabytes of both vectors) when `got` is not
/// `want`.
#[track_caller]
fn assert_same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], ctx: &str) {
    assert_eq!(got.len(), want.len(), "{ctx}: lengths");
    if let Some(i) = got.iter().zip(want).position(|(g, w)| g != w) {
        let wrong = got.iter().zip(want).filter(|(g, w)| g != w).count();
        panic!(
            "{ctx}: {wrong} of {} elements differ, the first at {i}: got {:?}, want {:?}",
            got.len(),
            got[i],
            want[i]
        );
    }
}

fn gpu() -> Gpu {
    Gpu::new(0).expect("a GPU (this test is for the GPU bundle)")
}

/// Kadane, argmin and the two-array recurrence on the GPU under one set of options.
struct GpuTransforms {
    kad: scangen::runtime::TransformScanner<Kadane>,
    arg: scangen::runtime::TransformScanner<ArgMin>,
    rec: scangen::runtime::TransformScanner<Recur>,
}

impl GpuTransforms {
    fn new(gpu: &Gpu, o: ScanOptions) -> GpuTransforms {
        GpuTransforms {
            kad: gpu.transform_scanner::<Kadane>(o).unwrap(),
            arg: gpu.transform_scanner::<ArgMin>(o).unwrap(),
            rec: gpu.transform_scanner::<Recur>(o).unwrap(),
        }
    }

    /// Each of the three on `n` fresh random inputs, against its reference loop, bit for bit.
    fn check(&mut self, rng: &mut StdRng, n: usize, mode: ScanMode, reverse: bool, ctx: &str) {
        let k = kadane_input(rng, n);
        assert_same(
            &self.kad.transform_scan(k.as_slice()).unwrap(),
            &reference::<Kadane>(&k, mode, reverse).0,
            &format!("kadane {ctx}"),
        );
        let m = argmin_input(rng, n);
        assert_same(
            &self.arg.transform_scan(m.as_slice()).unwrap(),
            &reference::<ArgMin>(&m, mode, reverse).0,
            &format!("argmin {ctx}"),
        );
        let (a, b) = recur_input(rng, n);
        let ab: Vec<(u32, u64)> = a.iter().copied().zip(b.iter().copied()).collect();
        assert_same(
            &self
                .rec
                .transform_scan((a.as_slice(), b.as_slice()))
                .unwrap(),
            &reference::<Recur>(&ab, mode, reverse).0,
            &format!("recur {ctx}"),
        );
    }
}

/// Every algorithm x mode x direction, at every awkward size, for the four transforms; each
/// against the reference loop, bit for bit.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh, then .gpu/run-all.sh on a GPU machine"]
fn gpu_transform_scans_match_loops() {
    let gpu = gpu();
    let mut rng = StdRng::seed_from_u64(0x6b0);
    let mut cases = 0;
    for algorithm in Algorithm::ALL {
        for mode in ScanMode::ALL {
            for reverse in [false, true] {
                let o = options(mode, reverse, algorithm);
                let mut three = GpuTransforms::new(&gpu, o);
                let mut low = gpu.transform_scanner::<SumLow>(o).unwrap();
                let mut sz = sizes();
                sz.push(3_000_017);
                for n in sz {
                    let ctx = format!("{algorithm} {mode} reverse={reverse} n={n}");
                    three.check(&mut rng, n, mode, reverse, &ctx);
                    let s: Vec<u64> = (0..n).map(|_| rng.gen::<u64>() | 1).collect();
                    assert_same(
                        &low.transform_scan(s.as_slice()).unwrap(),
                        &reference::<SumLow>(&s, mode, reverse).0,
                        &format!("sumlow {ctx}"),
                    );
                    cases += 4;
                }
            }
        }
    }
    println!("gpu suite (fused): {cases} cases passed");
}

/// Fused single-pass tiles too big for static shared memory (8192 items: Kadane's staged i64s
/// take 64 KiB, the recurrence's u32 and u64 96 KiB) run from dynamic shared memory, and a
/// thread's items fold as several interleaved runs (TuningPolicy::thread_runs): every mode and
/// direction, at sizes around those tiles, bit for bit.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh, then .gpu/run-all.sh on a GPU machine"]
fn gpu_transform_scans_with_big_tiles_and_thread_runs() {
    use scangen::codegen::TuningPolicy;
    let gpu = gpu();
    let mut rng = StdRng::seed_from_u64(0xd5a);
    let mut cases = 0;
    // (threads, items, register cap, L2 prefetch tiles, runs per thread)
    for (threads, items, cap, prefetch, runs) in [
        (128, 64, 3, 96, 1),
        (256, 32, 2, 48, 2),
        (128, 32, 5, 96, 4),
        (64, 8, 1, 0, 8),
    ] {
        let policy = TuningPolicy {
            min_blocks_per_sm: cap,
            l2_prefetch_tiles: prefetch,
            vector_bytes: 1,
            stage_items: true,
            thread_runs: runs,
            ..TuningPolicy::new(threads, items)
        };
        for mode in ScanMode::ALL {
            for reverse in [false, true] {
                let o = options(mode, reverse, Algorithm::SinglePass).policy(policy);
                let mut three = GpuTransforms::new(&gpu, o);
                let tile = (threads * items) as usize;
                for n in [1, 33, tile - 1, tile, tile + 1, 3 * tile + 7, 1_000_003] {
                    let ctx =
                        format!("{threads}x{items} runs{runs} {mode} reverse={reverse} n={n}");
                    three.check(&mut rng, n, mode, reverse, &ctx);
                    cases += 3;
                }
            }
        }
    }
    println!("gpu suite (fused, big tiles and thread runs): {cases} cases passed");
}

/// Device buffers, an initial value and the total (an element): chained halves give the
/// whole scan.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh, then .gpu/run-all.sh on a GPU machine"]
fn gpu_transform_scan_device_with_init_and_total() {
    let gpu = gpu();
    let stream = gpu.default_stream();
    let mut rng = StdRng::seed_from_u64(11);
    for algorithm in Algorithm::ALL {
        let mut s = gpu
            .transform_scanner::<Recur>(ScanOptions::default().algorithm(algorithm))
            .unwrap();
        let n = 100_003;
        let (a, b) = recur_input(&mut rng, n);
        let ab: Vec<(u32, u64)> = a.iter().copied().zip(b.iter().copied()).collect();
        let h = n / 2 + 1;
        let da = stream.clone_htod(&a).unwrap();
        let db = stream.clone_htod(&b).unwrap();
        let mut out = stream.alloc_zeros::<u32>(n).unwrap();
        let mut carry = stream.alloc_zeros::<Aff>(1).unwrap();
        let mut total = stream.alloc_zeros::<Aff>(1).unwrap();
        s.transform_scan_device(
            &stream,
            (&da.slice(..h), &db.slice(..h)),
            &mut out.slice_mut(..h),
            ScanExtras::new().total(&mut carry),
        )
        .unwrap();
        // The second half's indices restart at 0 in its own arrays: compare with that.
        s.transform_scan_device(
            &stream,
            (&da.slice(h..), &db.slice(h..)),
            &mut out.slice_mut(h..),
            ScanExtras::new().init(&carry).total(&mut total),
        )
        .unwrap();
        let got = stream.clone_dtoh(&out).unwrap();
        let tot = stream.clone_dtoh(&total).unwrap()[0];
        let mut acc = Recur::identity();
        for (i, &x) in ab.iter().enumerate() {
            let idx = if i < h { i } else { i - h } as u64;
            acc = Recur::combine(acc, Recur::lift(x, idx));
            assert_eq!(got[i], Recur::project(acc), "{algorithm} position {i}");
        }
        assert_eq!(tot, acc, "{algorithm}");
        // Mismatched lengths are refused before any launch.
        let e = s
            .transform_scan_device(
                &stream,
                (&da.slice(..10), &db.slice(..11)),
                &mut out.slice_mut(..10),
                ScanExtras::new(),
            )
            .unwrap_err();
        assert!(matches!(e, ScanError::InputLengths { .. }), "{e}");
    }
}

/// Transform reductions for several ops and sizes (0 included) against the fold of lift.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh, then .gpu/run-all.sh on a GPU machine"]
fn gpu_transform_reductions_match_folds() {
    let gpu = gpu();
    let mut kad = gpu.transform_reducer::<Kadane>().unwrap();
    let mut arg = gpu.transform_reducer::<ArgMin>().unwrap();
    let mut rec = gpu.transform_reducer::<Recur>().unwrap();
    let mut low = gpu.transform_reducer::<SumLow>().unwrap();
    let mut rng = StdRng::seed_from_u64(12);
    let mut sz = sizes();
    sz.push(5_000_011);
    for n in sz {
        let k = kadane_input(&mut rng, n);
        assert_eq!(
            kad.reduce(k.as_slice(), Kadane::identity()).unwrap(),
            reference::<Kadane>(&k, ScanMode::Inclusive, false).1,
            "kadane n={n}"
        );
        let m = argmin_input(&mut rng, n);
        assert_eq!(
            arg.reduce(m.as_slice(), ArgMin::identity()).unwrap(),
            reference::<ArgMin>(&m, ScanMode::Inclusive, false).1,
            "argmin n={n}"
        );
        let (a, b) = recur_input(&mut rng, n);
        let ab: Vec<(u32, u64)> = a.iter().copied().zip(b.iter().copied()).collect();
        let init = Aff { a: 5, b: 9 };
        let want = ab.iter().enumerate().fold(init, |acc, (i, &x)| {
            Recur::combine(acc, Recur::lift(x, i as u64))
        });
        assert_eq!(
            rec.reduce((a.as_slice(), b.as_slice()), init).unwrap(),
            want,
            "recur n={n}"
        );
        let s: Vec<u64> = (0..n).map(|_| rng.gen::<u64>() | 1).collect();
        assert_eq!(
            low.reduce(s.as_slice(), 0).unwrap(),
            s.iter().fold(0u64, |x, &y| x.wrapping_add(y)),
            "sumlow n={n}"
        );
    }
}

/// Owned segment data of every rule that fuses, for one input length.
struct SegmentData {
    flags: Vec<u8>,
    keys: Vec<u32>,
    offsets32: Vec<u32>,
    offsets64: Vec<u64>,
    /// (rows, cols, row_stride) of contiguous rows and of strided rows over `n` positions.
    rows: (u64, u64, u64),
    strided: (u64, u64, u64),
}

impl SegmentData {
    fn random(rng: &mut StdRng, n: usize) -> SegmentData {
        // Mostly short segments, some long ones: heads at about 1 in 40 positions, none in
        // a stretch of a few thousand.
        let quiet = rng.gen_range(0..n.max(1));
        let flags: Vec<u8> = (0..n)
            .map(|i| {
                let near_quiet = i >= quiet && i < quiet + 3000;
                u8::from(!near_quiet && rng.gen_range(0..40) == 0)
            })
            .collect();
        let mut key = 7u32;
        let keys = flags
            .iter()
            .map(|&f| {
                key = key.wrapping_add(u32::from(f) * 3);
                key
            })
            .collect();
        let mut offsets64: Vec<u64> = std::iter::once(0)
            .chain((1..n).filter(|&i| flags[i] != 0).map(|i| i as u64))
            .collect();
        offsets64.push(n as u64);
        let offsets32 = offsets64.iter().map(|&o| o as u32).collect();
        let cols = [1u64, 7, 33, 1000, 4099][rng.gen_range(0..5)].min(n.max(1) as u64);
        let rows = (n as u64) / cols;
        let stride = cols + rng.gen_range(1..5);
        let srows = (n as u64) / stride;
        SegmentData {
            flags,
            keys,
            offsets32,
            offsets64,
            rows: (rows, cols, cols),
            strided: (srows, cols, stride),
        }
    }

    /// Every rule's data, with a name and the options for it.
    fn cases(&self) -> Vec<(&'static str, HostSegments<'_>, Segments)> {
        let rows = |(rows, cols, row_stride): (u64, u64, u64)| HostSegments::Rows {
            rows,
            cols,
            row_stride,
        };
        [
            ("flags", HostSegments::Flags(&self.flags)),
            ("keys-u32", HostSegments::keys(&self.keys)),
            ("offsets-u32", HostSegments::Offsets32(&self.offsets32)),
            ("offsets-u64", HostSegments::Offsets64(&self.offsets64)),
            ("rows", rows(self.rows)),
            ("rows-strided", rows(self.strided)),
        ]
        .into_iter()
        .map(|(name, s)| (name, s, s.rule()))
        .collect()
    }
}

/// The reference of a segmented fused scan: each segment (a run between heads, or a row) lifted
/// with the positions' own indices, scanned in `mode` (from its end when `reverse`) and
/// projected; positions outside every row keep `project(lift(k))`.
fn segmented_reference<Op: Transform>(
    inputs: &[Op::Input],
    segments: &HostSegments<'_>,
    mode: ScanMode,
    reverse: bool,
) -> Vec<Op::Output> {
    let n = inputs.len();
    let mut out: Vec<Op::Output> = (0..n)
        .map(|k| Op::project(Op::lift(inputs[k], k as u64)))
        .collect();
    let runs: Vec<std::ops::Range<usize>> = match *segments {
        HostSegments::Rows {
            rows,
            cols,
            row_stride,
        } => (0..rows as usize)
            .map(|r| r * row_stride as usize..r * row_stride as usize + cols as usize)
            .collect(),
        _ => {
            let starts = segments.starts(n as u64).unwrap();
            let heads: Vec<usize> = (0..n).filter(|&k| starts[k]).chain([n]).collect();
            heads.windows(2).map(|w| w[0]..w[1]).collect()
        }
    };
    for run in runs {
        let mut acc = Op::identity();
        let order: Vec<usize> = if reverse {
            run.rev().collect()
        } else {
            run.collect()
        };
        for k in order {
            let before = acc;
            acc = Op::combine(acc, Op::lift(inputs[k], k as u64));
            out[k] = Op::project(if mode == ScanMode::Exclusive {
                before
            } else {
                acc
            });
        }
    }
    out
}

/// Segmented fused scans on the CPU backend: every rule that fuses x mode x direction, against
/// the loop over each segment.
#[test]
fn cpu_segmented_transform_scans_match_loops() {
    let mut rng = StdRng::seed_from_u64(0x5e6);
    for n in [0usize, 1, 31, 33, 1021, 4099, 65_537] {
        let data = SegmentData::random(&mut rng, n);
        let k = kadane_input(&mut rng, n);
        let (a, b) = recur_input(&mut rng, n);
        let ab: Vec<(u32, u64)> = a.iter().copied().zip(b.iter().copied()).collect();
        for (name, segments, rule) in data.cases() {
            for mode in ScanMode::ALL {
                for reverse in [false, true] {
                    let o = options(mode, reverse, Algorithm::SinglePass).segmented(rule);
                    let ctx = format!("{name} n={n} {mode} reverse={reverse}");
                    let got = CpuScanner::<Kadane>::new(o)
                        .transform_scan_segmented(k.as_slice(), segments)
                        .unwrap();
                    assert_same(
                        &got,
                        &segmented_reference::<Kadane>(&k, &segments, mode, reverse),
                        &format!("kadane {ctx}"),
                    );
                    let got = CpuScanner::<Recur>::new(o)
                        .transform_scan_segmented((a.as_slice(), b.as_slice()), segments)
                        .unwrap();
                    assert_same(
                        &got,
                        &segmented_reference::<Recur>(&ab, &segments, mode, reverse),
                        &format!("recur {ctx}"),
                    );
                }
            }
        }
    }
}

/// Segmented fused scans on the GPU (single-pass: the segmented algorithm): every rule that
/// fuses x mode x direction at awkward sizes, Kadane, argmin and the two-array recurrence,
/// against the loop over each segment, bit for bit; the device API with segment data in the
/// extras; column scans refused with a typed error before any launch.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh, then .gpu/run-all.sh on a GPU machine"]
fn gpu_segmented_transform_scans_match_loops() {
    let gpu = gpu();
    let mut rng = StdRng::seed_from_u64(0x5e7);
    let mut cases = 0;
    let mut sz = vec![0usize, 1, 31, 32, 33, 1021, 4095, 4097, 65_537, 1_000_003];
    sz.push(262_147);
    for n in sz {
        let data = SegmentData::random(&mut rng, n);
        let k = kadane_input(&mut rng, n);
        let m = argmin_input(&mut rng, n);
        let (a, b) = recur_input(&mut rng, n);
        let ab: Vec<(u32, u64)> = a.iter().copied().zip(b.iter().copied()).collect();
        for (name, segments, rule) in data.cases() {
            // Progress with times, so that a run stopped at its time limit says where it was.
            let started = std::time::Instant::now();
            for mode in ScanMode::ALL {
                for reverse in [false, true] {
                    let o = options(mode, reverse, Algorithm::SinglePass).segmented(rule);
                    let ctx = format!("{name} n={n} {mode} reverse={reverse}");
                    let mut kad = gpu.transform_scanner::<Kadane>(o).unwrap();
                    assert_same(
                        &kad.transform_scan_segmented(k.as_slice(), segments)
                            .unwrap(),
                        &segmented_reference::<Kadane>(&k, &segments, mode, reverse),
                        &format!("kadane {ctx}"),
                    );
                    let mut arg = gpu.transform_scanner::<ArgMin>(o).unwrap();
                    assert_same(
                        &arg.transform_scan_segmented(m.as_slice(), segments)
                            .unwrap(),
                        &segmented_reference::<ArgMin>(&m, &segments, mode, reverse),
                        &format!("argmin {ctx}"),
                    );
                    let mut rec = gpu.transform_scanner::<Recur>(o).unwrap();
                    assert_same(
                        &rec.transform_scan_segmented((a.as_slice(), b.as_slice()), segments)
                            .unwrap(),
                        &segmented_reference::<Recur>(&ab, &segments, mode, reverse),
                        &format!("recur {ctx}"),
                    );
                    cases += 3;
                }
            }
            println!("fused segmented {name} n={n}: {:.2?}", started.elapsed());
        }
    }
    // The device API: flags in the extras, and the flags of another rule refused.
    let stream = gpu.default_stream();
    let n = 100_003;
    let data = SegmentData::random(&mut rng, n);
    let (a, b) = recur_input(&mut rng, n);
    let ab: Vec<(u32, u64)> = a.iter().copied().zip(b.iter().copied()).collect();
    let (da, db) = (
        stream.clone_htod(&a).unwrap(),
        stream.clone_htod(&b).unwrap(),
    );
    let flags = stream.clone_htod(&data.flags).unwrap();
    let mut out = stream.alloc_zeros::<u32>(n).unwrap();
    let mut s = gpu
        .transform_scanner::<Recur>(ScanOptions::default().segmented(Segments::Flags))
        .unwrap();
    s.transform_scan_device(
        &stream,
        (&da, &db),
        &mut out,
        ScanExtras::new().segments(DeviceSegments::flags(&flags)),
    )
    .unwrap();
    assert_same(
        &stream.clone_dtoh(&out).unwrap(),
        &segmented_reference::<Recur>(
            &ab,
            &HostSegments::Flags(&data.flags),
            ScanMode::Inclusive,
            false,
        ),
        "recur device flags",
    );
    let e = s
        .transform_scan_device(&stream, (&da, &db), &mut out, ScanExtras::new())
        .unwrap_err();
    assert!(matches!(e, ScanError::SegmentsMismatch { .. }), "{e}");
    let e = gpu
        .transform_scanner::<Kadane>(ScanOptions::default().segmented(Segments::Columns))
        .unwrap_err();
    assert!(matches!(e, ScanError::Codegen(_)), "{e}");
    println!("gpu suite (fused segmented): {} cases passed", cases + 1);
}

/// A fused scan captured into a CUDA graph (after `prepare`) and replayed with new inputs each
/// time, for every algorithm: the recurrence from two arrays, then the fused reduction.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh, then .gpu/run-all.sh on a GPU machine"]
fn gpu_transform_scans_replay_from_a_graph() {
    use scangen::runtime::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    let gpu = gpu();
    // With cudarc's event tracking (its default) the captured scan would wait on each buffer's
    // last use outside the capture (the zeroing allocation), which CUDA forbids; the scanner
    // reports that as a typed error. One stream, in order: these buffers need no tracking.
    // SAFETY: every buffer below is used on its own `stream` only, and dropped after it synced.
    unsafe { gpu.context().disable_event_tracking() };
    let mut rng = StdRng::seed_from_u64(0x6a9);
    let n = 300_007;
    for algorithm in Algorithm::ALL {
        let stream = gpu.new_stream().unwrap();
        let mut s = gpu
            .transform_scanner::<Recur>(ScanOptions::default().algorithm(algorithm))
            .unwrap();
        s.scanner().prepare(n as u64, &stream).unwrap();
        let mut da = stream.alloc_zeros::<u32>(n).unwrap();
        let mut db = stream.alloc_zeros::<u64>(n).unwrap();
        let mut out = stream.alloc_zeros::<u32>(n).unwrap();
        stream.synchronize().unwrap();
        stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL)
            .unwrap();
        let scanned = s.transform_scan_device(&stream, (&da, &db), &mut out, ScanExtras::new());
        let graph = stream.end_capture(CUgraphInstantiate_flags(0));
        scanned.unwrap_or_else(|e| panic!("{algorithm}: the scan inside the capture: {e}"));
        let graph = graph.unwrap().expect("a graph");
        for replay in 0..3 {
            let (a, b) = recur_input(&mut rng, n);
            stream.memcpy_htod(&a, &mut da).unwrap();
            stream.memcpy_htod(&b, &mut db).unwrap();
            graph.launch().unwrap();
            let ab: Vec<(u32, u64)> = a.iter().copied().zip(b.iter().copied()).collect();
            assert_same(
                &stream.clone_dtoh(&out).unwrap(),
                &reference::<Recur>(&ab, ScanMode::Inclusive, false).0,
                &format!("{algorithm} replay {replay}"),
            );
        }
    }
}
