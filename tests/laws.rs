//! The law checker catches non-associative operators and wrong identities, and reports float
//! operators as associative only up to rounding.

use scangen::builtin::{Add, Max, Xor};
use scangen::laws::{check, CpuLaws, LawConfig, LawReport, Verdict};
use scangen::{scan_op, ScanElement, ScanOp};

fn run<Op: ScanOp>() -> LawReport {
    let mut cpu = CpuLaws::<Op>::new();
    check(
        "op",
        &mut [&mut cpu],
        &LawConfig {
            samples: 4000,
            seed: 11,
            ..Default::default()
        },
    )
    .unwrap()
}

fn verdict(report: &LawReport, i: usize) -> &Verdict {
    &report.laws[i].verdict
}

pub struct Subtract;
#[scan_op]
impl ScanOp for Subtract {
    type Elem = i32;
    fn identity() -> i32 {
        0
    }
    fn combine(a: i32, b: i32) -> i32 {
        a.wrapping_sub(b)
    }
}

pub struct Average;
#[scan_op]
impl ScanOp for Average {
    type Elem = f64;
    fn identity() -> f64 {
        0.0
    }
    fn combine(a: f64, b: f64) -> f64 {
        (a + b) * 0.5
    }
}

/// Max with identity 0: wrong for negative numbers.
pub struct MaxFromZero;
#[scan_op]
impl ScanOp for MaxFromZero {
    type Elem = i64;
    fn identity() -> i64 {
        0
    }
    fn combine(a: i64, b: i64) -> i64 {
        a.max(b)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Affine {
    pub a: f32,
    pub b: f32,
}

pub struct Compose;
#[scan_op]
impl ScanOp for Compose {
    type Elem = Affine;
    fn identity() -> Affine {
        Affine { a: 1.0, b: 0.0 }
    }
    fn combine(l: Affine, r: Affine) -> Affine {
        Affine {
            a: l.a * r.a,
            b: r.a * l.b + r.b,
        }
    }
}

#[test]
fn subtraction_is_not_associative() {
    let r = run::<Subtract>();
    assert!(!r.passed());
    let Verdict::Fails { counterexample } = verdict(&r, 0) else {
        panic!("{r}")
    };
    assert!(counterexample.contains("(a⊕b)⊕c ="), "{counterexample}");
    // 0 is a right identity of subtraction but not a left one.
    assert!(matches!(verdict(&r, 1), Verdict::Fails { .. }), "{r}");
    assert_eq!(verdict(&r, 2), &Verdict::Holds, "{r}");
}

#[test]
fn averaging_is_not_associative_even_up_to_rounding() {
    let r = run::<Average>();
    assert!(matches!(verdict(&r, 0), Verdict::Fails { .. }), "{r}");
    assert!(r.to_string().contains("NOT a valid scan operator"));
}

#[test]
fn a_wrong_identity_is_caught() {
    let r = run::<MaxFromZero>();
    assert_eq!(verdict(&r, 0), &Verdict::Holds, "{r}");
    let Verdict::Fails { counterexample } = verdict(&r, 1) else {
        panic!("{r}")
    };
    assert!(counterexample.starts_with("a = -"), "{counterexample}");
}

#[test]
fn integer_builtins_hold_exactly() {
    for r in [run::<Add<i32>>(), run::<Max<u8>>(), run::<Xor<u64>>()] {
        assert!(r.passed(), "{r}");
        assert!(r.laws.iter().all(|l| l.verdict == Verdict::Holds), "{r}");
    }
}

#[test]
fn float_operators_pass_only_up_to_rounding() {
    for r in [run::<Add<f32>>(), run::<Compose>()] {
        assert!(r.passed(), "{r}");
        let Verdict::HoldsUpToRounding { max_rel_error } = verdict(&r, 0) else {
            panic!("{r}")
        };
        assert!(*max_rel_error > 0.0 && *max_rel_error < 1e-3, "{r}");
        assert!(r.to_string().contains("up to floating-point rounding"));
    }
}
