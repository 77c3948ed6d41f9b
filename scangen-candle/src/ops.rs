//! The operators this crate adds to scangen's built-ins.

use scangen::{scan_op, ScanOp};

/// `log(exp(l) + exp(r))` on `f32`, in the stable form `max + ln(1 + exp(min - max))`:
/// associative (it is `+` on `exp(x)`), identity `-inf`. Scanning it is `logcumsumexp`.
///
/// Equal operands give `x + ln 2` (so `inf ⊕ inf = inf`); `-inf` is the identity on either
/// side; a NaN operand gives NaN.
pub struct LogAddExpF32;

#[scan_op]
impl ScanOp for LogAddExpF32 {
    type Elem = f32;
    fn identity() -> f32 {
        f32::NEG_INFINITY
    }
    fn combine(l: f32, r: f32) -> f32 {
        if l == f32::NEG_INFINITY {
            r
        } else if r == f32::NEG_INFINITY {
            l
        } else if l == r {
            l + std::f32::consts::LN_2
        } else if l > r {
            l + (1.0 + (r - l).exp()).ln()
        } else {
            r + (1.0 + (l - r).exp()).ln()
        }
    }
}

/// [`LogAddExpF32`] on `f64`.
pub struct LogAddExpF64;

#[scan_op]
impl ScanOp for LogAddExpF64 {
    type Elem = f64;
    fn identity() -> f64 {
        f64::NEG_INFINITY
    }
    fn combine(l: f64, r: f64) -> f64 {
        if l == f64::NEG_INFINITY {
            r
        } else if r == f64::NEG_INFINITY {
            l
        } else if l == r {
            l + std::f64::consts::LN_2
        } else if l > r {
            l + (1.0 + (r - l).exp()).ln()
        } else {
            r + (1.0 + (l - r).exp()).ln()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_add_exp_matches_the_definition() {
        for (l, r) in [
            (0.0f64, 0.0f64),
            (1.0, -2.0),
            (-3.5, 7.25),
            (100.0, 99.0),
            (-1e3, -1e3),
        ] {
            let want = (l.exp() + r.exp()).ln();
            let got = LogAddExpF64::combine(l, r);
            assert!(
                (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                "{l} {r}: {got} vs {want}"
            );
        }
        // Where the naive form overflows.
        assert!((LogAddExpF64::combine(1000.0, 1000.0) - (1000.0 + 2f64.ln())).abs() < 1e-9);
        assert_eq!(
            LogAddExpF32::combine(f32::INFINITY, f32::INFINITY),
            f32::INFINITY
        );
        assert_eq!(LogAddExpF32::combine(f32::INFINITY, 1.0), f32::INFINITY);
        assert_eq!(LogAddExpF32::combine(f32::NEG_INFINITY, 2.5), 2.5);
        assert!(LogAddExpF32::combine(f32::NAN, 2.5).is_nan());
        assert!(LogAddExpF32::combine(2.5, f32::NAN).is_nan());
    }
}
