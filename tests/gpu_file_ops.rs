//! Operators from a file on the GPU (`Gpu::byte_scanner`, what `scangen scan --file` and
//! `scangen bench --file` run): plain and fused (lift/project) scans of every algorithm and
//! mode at awkward sizes, checked byte for byte against the evaluator of the same file's IR on
//! the CPU (integer operators: they must agree exactly), plus the byte-length checks and
//! `scangen scan --file --backend gpu` end to end.
//!
//! Ignored by default (CI has no GPU); the GPU bundle runs it with --include-ignored.

use scangen::laws::sampler::Rng;
use scangen::lower::{parse_ops_file, EvalOp};
use scangen::runtime::{Gpu, ScanError, ScanOptions};
use scangen::{Algorithm, ScanMode};

const OPS: &str = r#"
use scangen::{scan_op, ScanElement, ScanOp};

pub struct Sum;
#[scan_op]
impl ScanOp for Sum {
    type Elem = i64;
    fn identity() -> i64 { 0 }
    fn combine(a: i64, b: i64) -> i64 { a.wrapping_add(b) }
}

/// x -> a*x + b, composed left to right: not commutative, 16 bytes.
#[derive(Clone, Copy, ScanElement)]
#[repr(C)]
pub struct Aff { pub a: u64, pub b: u64 }
pub struct Compose;
#[scan_op]
impl ScanOp for Compose {
    type Elem = Aff;
    fn identity() -> Aff { Aff { a: 1, b: 0 } }
    fn combine(l: Aff, r: Aff) -> Aff {
        Aff { a: r.a.wrapping_mul(l.a), b: r.a.wrapping_mul(l.b).wrapping_add(r.b) }
    }
}

/// The same recurrence lifted from two arrays and the index, projected to a u32.
pub struct Recur;
#[scan_op]
impl ScanOp for Recur {
    type Elem = Aff;
    fn identity() -> Aff { Aff { a: 1, b: 0 } }
    fn combine(l: Aff, r: Aff) -> Aff {
        Aff { a: r.a.wrapping_mul(l.a), b: r.a.wrapping_mul(l.b).wrapping_add(r.b) }
    }
    fn lift(a: u32, b: u64, index: u64) -> Aff { Aff { a: a as u64 | 1, b: b ^ index } }
    fn project(m: Aff) -> u32 { (m.b >> 7) as u32 }
}

/// Kadane's maximum subarray from raw i64 samples, projected to the best sum (32-byte element).
#[derive(Clone, Copy, ScanElement)]
#[repr(C)]
pub struct Kad { pub best: i64, pub prefix: i64, pub suffix: i64, pub total: i64 }
pub struct Kadane;
#[scan_op]
impl ScanOp for Kadane {
    type Elem = Kad;
    fn identity() -> Kad {
        const NONE: i64 = i64::MIN / 4;
        Kad { best: NONE, prefix: NONE, suffix: NONE, total: 0 }
    }
    fn combine(l: Kad, r: Kad) -> Kad {
        Kad {
            best: l.best.max(r.best).max(l.suffix + r.prefix),
            prefix: l.prefix.max(l.total + r.prefix),
            suffix: r.suffix.max(l.suffix + r.total),
            total: l.total + r.total,
        }
    }
    fn lift(x: i64, index: u64) -> Kad { Kad { best: x, prefix: x, suffix: x, total: x } }
    fn project(k: Kad) -> i64 { k.best }
}

/// Running argmin of i32 values with their index (the first of equal minima), projected to
/// the index.
#[derive(Clone, Copy, ScanElement)]
#[repr(C)]
pub struct At { pub value: i32, pub pad: u32, pub index: u64 }
pub struct ArgMin;
#[scan_op]
impl ScanOp for ArgMin {
    type Elem = At;
    fn identity() -> At { At { value: i32::MAX, pad: 0, index: u64::MAX } }
    fn combine(l: At, r: At) -> At { if r.value < l.value { r } else { l } }
    fn lift(v: i32, index: u64) -> At { At { value: v, pad: 0, index } }
    fn project(m: At) -> u64 { m.index }
}
"#;

/// Sizes around warps, tiles (256 to 4096 elements for these ops), primes, and a large one.
const SIZES: &[usize] = &[0, 1, 31, 32, 33, 255, 257, 4095, 4097, 65_537, 1_000_003];

/// Random values of `size`-byte inputs, kept moderate (|x| < 2^20 as signed) so that Kadane's
/// sums cannot overflow; every other bit pattern is fine for the integer operators here.
fn random_bytes(rng: &mut Rng, n: usize, size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * size);
    for _ in 0..n {
        let x = rng.below(1 << 21) as i64 - (1 << 20);
        let word = if size == 16 {
            // Aff: an odd multiplier keeps the products from collapsing to 0.
            let a = rng.next() | 1;
            let b = rng.next();
            out.extend(a.to_le_bytes());
            out.extend(b.to_le_bytes());
            continue;
        } else {
            x.to_le_bytes()
        };
        out.extend(&word[..size]);
    }
    out
}

/// The CLI: `SCANGEN_BIN` in the GPU bundle (run-all.sh sets it), else cargo's build of it.
fn scangen_bin() -> std::path::PathBuf {
    std::env::var_os("SCANGEN_BIN")
        .map(Into::into)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_scangen").into())
}

fn evaluator(name: &str) -> (EvalOp, scangen::OpSpec, Option<scangen::TransformSpec>) {
    let file = parse_ops_file(OPS).expect("the test's operators parse");
    let eval = file.evaluator(name).expect("evaluator");
    let (spec, transform) = file.op_transform(name).expect("lowered");
    (eval, spec, transform)
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh, then .gpu/run-all.sh on a GPU machine"]
fn file_operators_match_the_evaluator_on_the_gpu() {
    let gpu = Gpu::new(0).expect("a GPU");
    let mut rng = Rng::new(0x0f11_e0b5);
    let (mut passed, mut failed) = (0usize, Vec::new());
    for name in ["Sum", "Compose", "Recur", "Kadane", "ArgMin"] {
        let (eval, spec, transform) = evaluator(name);
        let identity = eval.identity().unwrap();
        let started = std::time::Instant::now();
        for mode in [ScanMode::Inclusive, ScanMode::Exclusive] {
            let exclusive = mode == ScanMode::Exclusive;
            // One input and one evaluator reference per size, shared by the algorithms (the
            // evaluator is an interpreter: the reference costs more than the scans).
            let input_sizes: Vec<usize> = eval
                .input_layouts()
                .unwrap()
                .iter()
                .map(|l| l.size)
                .collect();
            let cases: Vec<(usize, Vec<Vec<u8>>, Vec<u8>)> = SIZES
                .iter()
                .map(|&n| {
                    let arrays: Vec<Vec<u8>> = input_sizes
                        .iter()
                        .map(|&size| random_bytes(&mut rng, n, size))
                        .collect();
                    let views: Vec<&[u8]> = arrays.iter().map(|a| a.as_slice()).collect();
                    let want = if transform.is_some() {
                        eval.transform_scan(&views, exclusive).unwrap()
                    } else {
                        let mut out = vec![0u8; views[0].len()];
                        eval.scan(views[0], &mut out, exclusive, usize::MAX, &mut |_| {})
                            .unwrap();
                        out
                    };
                    (n, arrays, want)
                })
                .collect();
            for algorithm in Algorithm::ALL {
                let opts = ScanOptions::default().algorithm(algorithm).mode(mode);
                let mut scanner = gpu
                    .byte_scanner(&spec, transform.as_ref(), &identity, opts)
                    .unwrap_or_else(|e| panic!("{name} {algorithm}: {e}"));
                for (n, arrays, want) in &cases {
                    let (n, want) = (*n, want);
                    let views: Vec<&[u8]> = arrays.iter().map(|a| a.as_slice()).collect();
                    let mut got = vec![0xa5u8; n * scanner.output_size()];
                    scanner.scan_host(&views, &mut got).unwrap();
                    let case = format!("{name} {algorithm} {mode:?} n={n}");
                    if got == *want {
                        passed += 1;
                    } else {
                        let size = scanner.output_size();
                        let first = (0..n)
                            .find(|&i| {
                                got[i * size..(i + 1) * size] != want[i * size..(i + 1) * size]
                            })
                            .unwrap_or(0);
                        println!("{case}: first difference at output {first}");
                        failed.push(case);
                    }
                }
            }
        }
        println!("file operator {name}: {:.2?}", started.elapsed());
    }
    println!(
        "file operators on the gpu: {passed} cases passed, {} failed",
        failed.len()
    );
    assert!(failed.is_empty(), "{failed:?}");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh, then .gpu/run-all.sh on a GPU machine"]
fn byte_scanners_check_their_buffers_before_launching() {
    let gpu = Gpu::new(0).expect("a GPU");
    let (eval, spec, transform) = evaluator("Recur");
    let identity = eval.identity().unwrap();
    let mut s = gpu
        .byte_scanner(&spec, transform.as_ref(), &identity, ScanOptions::default())
        .unwrap();
    assert_eq!(s.input_sizes(), &[4, 8]);
    assert_eq!(s.output_size(), 4);
    let a = vec![1u8; 40];
    let b = vec![2u8; 80];
    let mut out = vec![0u8; 40];
    // One array of two.
    assert!(matches!(
        s.scan_host(&[&a], &mut out),
        Err(ScanError::InputCount {
            expected: 2,
            given: 1
        })
    ));
    // Not a whole number of values; lengths that disagree; an output of the wrong size.
    assert!(matches!(
        s.scan_host(&[&a[..39], &b], &mut out),
        Err(ScanError::ByteLength { .. })
    ));
    assert!(matches!(
        s.scan_host(&[&a, &b[..72]], &mut out),
        Err(ScanError::ByteLength { .. })
    ));
    let err = s.scan_host(&[&a, &b], &mut out[..36]).unwrap_err();
    assert!(
        err.to_string().contains("expected 10 values of 4 bytes"),
        "{err}"
    );
    // The output was not touched by the refused calls; a correct call still works.
    assert!(out.iter().all(|&x| x == 0));
    s.scan_host(&[&a, &b], &mut out).unwrap();
    // An identity of the wrong size and a segmented variant are refused when building.
    assert!(matches!(
        gpu.byte_scanner(&spec, None, &identity[..8], ScanOptions::default()),
        Err(ScanError::ElementLayout {
            declared: 16,
            actual: 8
        })
    ));
    assert!(gpu
        .byte_scanner(
            &spec,
            None,
            &identity,
            ScanOptions::default().segmented(scangen::runtime::Segments::Flags)
        )
        .is_err());
}

/// `scangen scan --file --backend gpu` end to end: the fused recurrence from two raw files.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh, then .gpu/run-all.sh on a GPU machine"]
fn scan_file_runs_on_the_gpu() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ops.rs"), OPS).unwrap();
    let mut rng = Rng::new(7);
    let n = 100_003;
    let a = random_bytes(&mut rng, n, 4);
    let b = random_bytes(&mut rng, n, 8);
    std::fs::write(dir.path().join("a.bin"), &a).unwrap();
    std::fs::write(dir.path().join("b.bin"), &b).unwrap();
    let (eval, _, _) = evaluator("Recur");
    for exclusive in [false, true] {
        let mut args = vec![
            "scan",
            "--file",
            "ops.rs",
            "--op",
            "Recur",
            "--input",
            "a.bin",
            "--input",
            "b.bin",
            "-o",
            "y.bin",
            "--backend",
            "gpu",
        ];
        if exclusive {
            args.push("--exclusive");
        }
        let run = std::process::Command::new(scangen_bin())
            .current_dir(dir.path())
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{err}");
        assert!(err.contains("on gpu: "), "ran on the GPU: {err}");
        let got = std::fs::read(dir.path().join("y.bin")).unwrap();
        let want = eval.transform_scan(&[&a, &b], exclusive).unwrap();
        assert!(got == want, "exclusive={exclusive}");
    }
}

/// `scangen bench --file` on the GPU: a fused operator's row, timed beside a copy.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh, then .gpu/run-all.sh on a GPU machine"]
fn bench_file_times_the_generated_kernels() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ops.rs"), OPS).unwrap();
    let run = std::process::Command::new(scangen_bin())
        .current_dir(dir.path())
        .args([
            "bench",
            "--file",
            "ops.rs",
            "--op",
            "Kadane",
            "--sizes",
            "n=1000003",
            "--reps",
            "3",
            "--warmup",
            "1",
            "--algo",
            "single-pass,kogge-stone",
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    println!("{out}");
    assert!(
        out.contains("single-pass") && out.contains("kogge-stone"),
        "{out}"
    );
}
