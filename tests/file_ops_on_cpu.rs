//! Operators from a file without a GPU: `scangen check --file` judges them on the CPU
//! evaluator (lawful passes, unlawful fails), `scangen scan --file` scans `.npy` and raw
//! files, and a domain sampler (`laws::Folds` of lifted inputs) clears Kadane, which every
//! bit pattern of its fields does not. Operators on `f16`/`bf16` (`half`) check and scan too.

use scangen::laws::{check, check_with, sampler::Rng, EvalLaws, Folds, LawConfig, LawEvaluator};
use std::process::Command;

const OPS: &str = r#"
use scangen::{scan_op, ScanElement, ScanOp};

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Kadane { pub best: i64, pub prefix: i64, pub suffix: i64, pub total: i64 }

pub struct MaxSub;
#[scan_op]
impl ScanOp for MaxSub {
    type Elem = Kadane;
    fn identity() -> Kadane {
        Kadane { best: i64::MIN / 2, prefix: i64::MIN / 2, suffix: i64::MIN / 2, total: 0 }
    }
    fn combine(a: Kadane, b: Kadane) -> Kadane {
        Kadane {
            best: a.best.max(b.best).max(a.suffix + b.prefix),
            prefix: a.prefix.max(a.total + b.prefix),
            suffix: b.suffix.max(a.suffix + b.total),
            total: a.total + b.total,
        }
    }
}

pub struct Sum;
#[scan_op]
impl ScanOp for Sum {
    type Elem = i64;
    fn identity() -> i64 { 0 }
    fn combine(a: i64, b: i64) -> i64 { a + b }
}

pub struct Avg;
#[scan_op]
impl ScanOp for Avg {
    type Elem = f32;
    fn identity() -> f32 { 0.0 }
    fn combine(a: f32, b: f32) -> f32 { (a + b) * 0.5 }
}
"#;

/// `f16`/`bf16` fields: sums that round after every combine, a `max` and a `min` that ignore
/// NaNs; and a plain `f16` sum.
const HALF_OPS: &str = r#"
use scangen::half::{bf16, f16};
use scangen::{scan_op, ScanElement, ScanOp};

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Halves { pub sum: f16, pub hi: f16, pub lo: bf16, pub bsum: bf16 }

pub struct HalfStats;
#[scan_op]
impl ScanOp for HalfStats {
    type Elem = Halves;
    fn identity() -> Halves {
        Halves { sum: f16::ZERO, hi: f16::NEG_INFINITY, lo: bf16::INFINITY, bsum: bf16::from_bits(0) }
    }
    fn combine(a: Halves, b: Halves) -> Halves {
        let mut bsum = a.bsum;
        bsum += b.bsum;
        Halves { sum: a.sum + b.sum, hi: a.hi.max(b.hi), lo: bf16::min(a.lo, b.lo), bsum }
    }
}

pub struct Sum16;
#[scan_op]
impl ScanOp for Sum16 {
    type Elem = f16;
    fn identity() -> f16 { f16::from_f32(0.0) }
    fn combine(a: f16, b: f16) -> f16 { a + b }
}
"#;

fn config() -> LawConfig {
    LawConfig {
        samples: 3000,
        ..Default::default()
    }
}

/// The CLI on the CPU backend (`scan --file` would take a GPU where there is one;
/// `tests/gpu_file_ops.rs` covers that).
fn scangen(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_scangen"))
        .env("SCANGEN_BACKEND", "cpu")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn check_file_runs_without_a_gpu() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ops.rs"), OPS).unwrap();
    let ok = scangen(
        dir.path(),
        &["check", "--file", "ops.rs", "--op", "Sum", "--cpu-only"],
    );
    let out = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(out.contains("the operator IR"), "{out}");
    let bad = scangen(
        dir.path(),
        &[
            "check",
            "--file",
            "ops.rs",
            "--op",
            "Avg",
            "--cpu-only",
            "--tolerance",
            "8ulps",
        ],
    );
    let out = String::from_utf8_lossy(&bad.stdout);
    assert!(!bad.status.success() && out.contains("FAILS"), "{out}");
    assert!(out.contains("largest float error seen"), "{out}");
    let typo = scangen(
        dir.path(),
        &[
            "check",
            "--file",
            "ops.rs",
            "--op",
            "Sum",
            "--tolerance",
            "x",
        ],
    );
    assert!(!typo.status.success());
}

#[test]
fn scan_file_scans_npy_and_raw() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ops.rs"), OPS).unwrap();
    let values: Vec<i64> = (1..=100).collect();
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(dir.path().join("x.bin"), &raw).unwrap();
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    let mut dict = "{'descr': '<i8', 'fortran_order': False, 'shape': (100,), }".to_string();
    while (10 + dict.len() + 1).checked_rem(64) != Some(0) {
        dict.push(' ');
    }
    dict.push('\n');
    npy.extend((dict.len() as u16).to_le_bytes());
    npy.extend(dict.as_bytes());
    npy.extend(&raw);
    std::fs::write(dir.path().join("x.npy"), &npy).unwrap();

    let run = scangen(
        dir.path(),
        &[
            "scan", "--file", "ops.rs", "--op", "Sum", "--input", "x.npy", "-o", "y.npy",
        ],
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let y = std::fs::read(dir.path().join("y.npy")).unwrap();
    let data = &y[y.len() - 800..];
    let got: Vec<i64> = data
        .chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let want: Vec<i64> = values
        .iter()
        .scan(0, |s, v| {
            *s += v;
            Some(*s)
        })
        .collect();
    assert_eq!(got, want);

    let run = scangen(
        dir.path(),
        &[
            "scan",
            "--file",
            "ops.rs",
            "--op",
            "Sum",
            "--input",
            "x.bin",
            "--exclusive",
        ],
    );
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success() && out.contains("total: 5050"), "{out}");

    // A dtype that is not the element's is an error, not a reinterpretation.
    let wrong = scangen(
        dir.path(),
        &[
            "scan", "--file", "ops.rs", "--op", "Avg", "--input", "x.npy",
        ],
    );
    assert!(!wrong.status.success());
}

#[test]
fn kadane_is_lawful_on_its_real_domain() {
    let file = scangen::lower::parse_ops_file(OPS).unwrap();
    let op = file.evaluator("MaxSub").unwrap();
    // Every bit pattern: sentinels overflow, so the checker reports it unlawful.
    let mut laws = EvalLaws::new(&op);
    let report = check(
        "MaxSub",
        &mut [&mut laws as &mut dyn LawEvaluator],
        &config(),
    )
    .unwrap();
    assert!(!report.passed(), "{report}");
    // Folds of lifted samples (`x` -> {x, x, x, x}): what a scan of raw i64s ever meets.
    struct Lifted;
    impl scangen::laws::ElementSampler for Lifted {
        fn sample(&mut self, rng: &mut Rng) -> Vec<u8> {
            let x = rng.below(2_000_001) as i64 - 1_000_000;
            [x, x, x, x].iter().flat_map(|v| v.to_le_bytes()).collect()
        }
        fn describe(&self) -> String {
            "lifted i64 samples".into()
        }
    }
    let mut sampler = Folds::new(
        Lifted,
        Box::new(|a: &[u8], b: &[u8]| op.combine(a, b).unwrap()),
        8,
    );
    let mut laws = EvalLaws::new(&op);
    let report = check_with(
        "MaxSub",
        &mut [&mut laws as &mut dyn LawEvaluator],
        &config(),
        &mut sampler,
    )
    .unwrap();
    assert!(report.passed(), "{report}");
    assert!(report.to_string().contains("folds of up to 8"), "{report}");
}

/// A `.npy` (version 1) of `descr` and `n` elements from their bytes.
fn npy(descr: &str, n: usize, data: &[u8]) -> Vec<u8> {
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    let mut dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': ({n},), }}");
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    file.extend((dict.len() as u16).to_le_bytes());
    file.extend(dict.as_bytes());
    file.extend(data);
    file
}

#[test]
fn half_operators_check_and_scan_from_a_file() {
    use scangen::half::{bf16, f16};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("half.rs"), HALF_OPS).unwrap();

    let ok = scangen(
        dir.path(),
        &[
            "check",
            "--file",
            "half.rs",
            "--op",
            "HalfStats",
            "--cpu-only",
        ],
    );
    let out = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(out.contains("the operator IR"), "{out}");

    // Raw elements: small steps (every running sum is a small integer, exact in both types),
    // NaNs among the maxima and minima, which `max`/`min` skip.
    let n = 1000;
    let elems: Vec<[u16; 4]> = (0..n)
        .map(|i| {
            let step = ((i * 7) % 5) as f32 - 2.0;
            let x = ((i * 37) % 101) as f32 - 50.0;
            let (hi, lo) = if i % 13 == 0 {
                (f16::NAN, bf16::NAN)
            } else {
                (f16::from_f32(x), bf16::from_f32(-x))
            };
            [
                f16::from_f32(step).to_bits(),
                hi.to_bits(),
                lo.to_bits(),
                bf16::from_f32(step).to_bits(),
            ]
        })
        .collect();
    let raw: Vec<u8> = elems
        .iter()
        .flatten()
        .flat_map(|b| b.to_le_bytes())
        .collect();
    std::fs::write(dir.path().join("x.bin"), &raw).unwrap();
    let run = scangen(
        dir.path(),
        &[
            "scan",
            "--file",
            "half.rs",
            "--op",
            "HalfStats",
            "--input",
            "x.bin",
            "-o",
            "y.bin",
        ],
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let got = std::fs::read(dir.path().join("y.bin")).unwrap();
    // The inclusive scan's first output is the first element (NaNs kept); each later one
    // combines the previous output with the next element.
    let unpack = |e: &[u16; 4]| {
        (
            f16::from_bits(e[0]),
            f16::from_bits(e[1]),
            bf16::from_bits(e[2]),
            bf16::from_bits(e[3]),
        )
    };
    let mut acc = unpack(&elems[0]);
    let mut want: Vec<u8> = Vec::new();
    for (i, e) in elems.iter().enumerate() {
        if i > 0 {
            let x = unpack(e);
            acc = (acc.0 + x.0, acc.1.max(x.1), acc.2.min(x.2), acc.3 + x.3);
        }
        for bits in [
            acc.0.to_bits(),
            acc.1.to_bits(),
            acc.2.to_bits(),
            acc.3.to_bits(),
        ] {
            want.extend(bits.to_le_bytes());
        }
    }
    assert_eq!(got.len(), want.len());
    if let Some(i) = (0..n).find(|&i| got[8 * i..8 * i + 8] != want[8 * i..8 * i + 8]) {
        panic!(
            "element {i}: scanned {:02x?}, want {:02x?}",
            &got[8 * i..8 * i + 8],
            &want[8 * i..8 * i + 8]
        );
    }
    assert!(!acc.1.is_nan() && !acc.2.is_nan() && acc.1.to_f32() == 50.0);

    // A plain `f16` element from a `.npy` of float16, written back with its dtype.
    let values: Vec<f16> = (0..300)
        .map(|i| f16::from_f32(if i % 2 == 0 { 0.5 } else { 1.0 }))
        .collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(dir.path().join("h.npy"), npy("'<f2'", 300, &data)).unwrap();
    let run = scangen(
        dir.path(),
        &[
            "scan", "--file", "half.rs", "--op", "Sum16", "--input", "h.npy", "-o", "s.npy",
        ],
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let y = std::fs::read(dir.path().join("s.npy")).unwrap();
    assert!(String::from_utf8_lossy(&y[..128]).contains("'<f2'"));
    let got: Vec<f16> = y[y.len() - 600..]
        .chunks(2)
        .map(|c| f16::from_le_bytes([c[0], c[1]]))
        .collect();
    let want: Vec<f16> = values
        .iter()
        .scan(f16::ZERO, |s, v| {
            *s += *v;
            Some(*s)
        })
        .collect();
    assert!(got == want, "f16 sums differ");
    assert_eq!(want[299].to_f32(), 225.0);
}

/// `scan --file` with an operator that lifts two input arrays (one `.npy`, one raw) with the
/// element's index and projects a field: the evaluator runs `lift` and `project` from the
/// file; a wrong number of inputs is an error that says how many.
#[test]
fn scan_file_lifts_several_inputs_and_projects() {
    const LIFTED: &str = r#"
#[derive(Clone, Copy, ScanElement)]
#[repr(C)]
pub struct Aff { pub a: u64, pub b: u64 }
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
"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ops.rs"), LIFTED).unwrap();
    let n = 997u64;
    let a: Vec<u32> = (0..n)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761) | 2)
        .collect();
    let b: Vec<u64> = (0..n)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
        .collect();
    std::fs::write(
        dir.path().join("a.bin"),
        a.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.bin"),
        b.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
    )
    .unwrap();
    for exclusive in [false, true] {
        let mut args = vec![
            "scan", "--file", "ops.rs", "--op", "Recur", "--input", "a.bin", "--input", "b.bin",
            "-o", "y.bin",
        ];
        if exclusive {
            args.push("--exclusive");
        }
        let run = scangen(dir.path(), &args);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let got: Vec<u32> = std::fs::read(dir.path().join("y.bin"))
            .unwrap()
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        // The loop a user would write.
        let (mut ma, mut mb) = (1u64, 0u64);
        let want: Vec<u32> = (0..n as usize)
            .map(|i| {
                let (xa, xb) = (a[i] as u64 | 1, b[i] ^ i as u64);
                let before = (mb >> 7) as u32;
                ma = xa.wrapping_mul(ma);
                mb = xa.wrapping_mul(mb).wrapping_add(xb);
                if exclusive {
                    before
                } else {
                    (mb >> 7) as u32
                }
            })
            .collect();
        assert_eq!(got, want, "exclusive={exclusive}");
    }
    let one = scangen(
        dir.path(),
        &[
            "scan", "--file", "ops.rs", "--op", "Recur", "--input", "a.bin",
        ],
    );
    let err = String::from_utf8_lossy(&one.stderr);
    assert!(
        !one.status.success() && err.contains("reads 2 input array(s)"),
        "{err}"
    );
}

/// `check --file` on an operator with a `lift` samples folds of lifted inputs (the domain a scan
/// of real data meets): Kadane from raw `i64`, whose identity sentinels make it "unlawful" on
/// every bit pattern, passes; a lifted subtraction still fails.
#[test]
fn check_file_samples_lifted_inputs() {
    const LIFTED: &str = r#"
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
    fn lift(x: i64, _index: u64) -> Kad { Kad { best: x, prefix: x, suffix: x, total: x } }
    fn project(e: Kad) -> i64 { e.best }
}
pub struct Sub;
#[scan_op]
impl ScanOp for Sub {
    type Elem = i64;
    fn identity() -> i64 { 0 }
    fn combine(a: i64, b: i64) -> i64 { a.wrapping_sub(b) }
    fn lift(x: i32, _index: u64) -> i64 { x as i64 }
}
"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ops.rs"), LIFTED).unwrap();
    let ok = scangen(
        dir.path(),
        &["check", "--file", "ops.rs", "--op", "Kadane", "--cpu-only"],
    );
    let out = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(out.contains("lifted inputs"), "{out}");
    let bad = scangen(
        dir.path(),
        &["check", "--file", "ops.rs", "--op", "Sub", "--cpu-only"],
    );
    let out = String::from_utf8_lossy(&bad.stdout);
    assert!(
        !bad.status.success() && out.contains("lifted inputs"),
        "{out}"
    );
}

/// `bench --file --backend cpu` times the evaluator beside a host copy and prints its row.
#[test]
fn bench_file_times_the_evaluator() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ops.rs"), OPS).unwrap();
    let run = scangen(
        dir.path(),
        &[
            "bench",
            "--file",
            "ops.rs",
            "--op",
            "Sum",
            "--backend",
            "cpu",
            "--sizes",
            "n=1001",
            "--reps",
            "1",
            "--warmup",
            "0",
        ],
    );
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        out.contains("cpu-evaluator") && out.contains("1001"),
        "{out}"
    );
}
