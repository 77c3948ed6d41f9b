//! How far apart two float results may be and still be "equal up to rounding".
//!
//! The error of a float field is measured relative to the scale of the computation: the
//! largest finite magnitude among the operands and both results, so that cancellation
//! (`(a + b) - b` with `|b| >> |a|`) does not make rounding look like a wrong operator.
//! [`Tolerance::Ulps`] states the same measure in units of the narrowest float field's machine
//! epsilon (`1024 ulps` of an `f32` is `1024 * f32::EPSILON`, about 1.2e-4, relative).

use super::values::field_layout;
use scan_core::{ElementType, PrimType};
use std::fmt;
use std::str::FromStr;

/// How far apart two float results may be and still count as equal up to rounding. Parses
/// from `1e-5` (relative) or `64ulps`.
///
/// Errors are relative to the scale of the computation, the largest finite magnitude among
/// the operands and both results, so that cancellation (`(a + b) - b` with `|b| >> |a|`) does
/// not make rounding look like a wrong operator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    /// 1024 ulps of 4- and 8-byte floats, 16 of 2-byte ones (`f16`, `bf16`: 1024 of their ulps
    /// would be 1 or more).
    Auto,
    /// `|x - y| / scale` at most this.
    Relative(f64),
    /// `|x - y| / scale` at most this many machine epsilons of the narrowest float field.
    Ulps(f64),
}

impl Default for Tolerance {
    /// [`Tolerance::Auto`]: a wrong operator (subtraction, averaging) is off by O(1), rounding
    /// of a few operations by a few ulps.
    fn default() -> Self {
        Tolerance::Auto
    }
}

/// Machine epsilon of the narrowest float field (f64's when there is none).
pub(crate) fn epsilon(element: &ElementType) -> f64 {
    let fields = field_layout(element);
    let has = |p: PrimType| fields.iter().any(|(_, t, _)| *t == p);
    if has(PrimType::BF16) {
        scan_core::half::bf16::EPSILON.to_f64()
    } else if has(PrimType::F16) {
        scan_core::half::f16::EPSILON.to_f64()
    } else if has(PrimType::F32) {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    }
}

fn has_half(element: &ElementType) -> bool {
    field_layout(element)
        .iter()
        .any(|(_, t, _)| matches!(t, PrimType::F16 | PrimType::BF16))
}

impl Tolerance {
    /// The largest relative error allowed for `element`.
    pub fn relative(&self, element: &ElementType) -> f64 {
        match *self {
            Tolerance::Auto if has_half(element) => 16.0 * epsilon(element),
            Tolerance::Auto => 1024.0 * epsilon(element),
            Tolerance::Relative(r) => r,
            Tolerance::Ulps(u) => u * epsilon(element),
        }
    }
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tolerance::Auto => f.write_str("1024 ulps (16 for f16/bf16)"),
            Tolerance::Relative(r) => write!(f, "{r:.1e} relative"),
            Tolerance::Ulps(u) => write!(f, "{u} ulps"),
        }
    }
}

/// A tolerance that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadTolerance(pub String);

impl fmt::Display for BadTolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad tolerance `{}`: write a relative error (`1e-5`) or ulps (`64ulps`), not negative",
            self.0
        )
    }
}

impl std::error::Error for BadTolerance {}

impl FromStr for Tolerance {
    type Err = BadTolerance;
    /// `1e-5` (relative) or `64ulps` / `64ulp` / `64 ulps`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let bad = || BadTolerance(s.to_string());
        let (num, ulps) = match t.strip_suffix("ulps").or_else(|| t.strip_suffix("ulp")) {
            Some(n) => (n.trim(), true),
            None => (t, false),
        };
        let v: f64 = num.parse().map_err(|_| bad())?;
        if !(v >= 0.0 && v.is_finite()) {
            return Err(bad());
        }
        Ok(if ulps {
            Tolerance::Ulps(v)
        } else {
            Tolerance::Relative(v)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_relative_and_ulps() {
        assert_eq!("1e-5".parse(), Ok(Tolerance::Relative(1e-5)));
        assert_eq!("64ulps".parse(), Ok(Tolerance::Ulps(64.0)));
        assert_eq!("8 ulp".parse(), Ok(Tolerance::Ulps(8.0)));
        assert!("-1".parse::<Tolerance>().is_err());
        assert!("lots".parse::<Tolerance>().is_err());
        let f32s = ElementType::Prim(PrimType::F32);
        assert_eq!(
            Tolerance::Ulps(2.0).relative(&f32s),
            2.0 * f32::EPSILON as f64
        );
    }
}
