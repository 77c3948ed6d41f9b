//! How two results of the same law are compared: bit-exact for integers, "up to rounding" for
//! floats, where the tolerance is relative to the magnitudes involved.

use super::values::{field_layout, read_field, FieldValue};
use scan_core::ElementType;

/// Outcome of comparing one pair of results.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Agreement {
    /// Bit-identical (NaNs of any payload count as identical).
    Exact,
    /// Floats that differ by `rel` relative to the operands' scale.
    Rounding { rel: f64 },
    /// Differ beyond rounding (or integers that differ at all).
    Different,
    /// One side overflowed to infinity/NaN where the other is finite: float overflow is
    /// order-dependent in any float operator, so it is counted, not judged.
    Overflow,
    /// +0.0 against -0.0 (an identity like `0.0` for a sum flips the sign of -0.0).
    SignedZero,
}

/// Compares `x` and `y` field by field; `scale` is the largest finite magnitude among the
/// operands' float fields (cancellation makes the result alone a poor yardstick).
pub fn compare(element: &ElementType, x: &[u8], y: &[u8], scale: f64) -> Agreement {
    let mut worst = Agreement::Exact;
    for (_, ty, off) in field_layout(element) {
        let a = read_field(x, ty, off);
        let b = read_field(y, ty, off);
        let this = match (a, b) {
            (FieldValue::Int(a), FieldValue::Int(b)) => {
                if a == b {
                    Agreement::Exact
                } else {
                    Agreement::Different
                }
            }
            (FieldValue::F32(a), FieldValue::F32(b)) => {
                float(a as f64, b as f64, a.to_bits() == b.to_bits(), scale)
            }
            (FieldValue::F64(a), FieldValue::F64(b)) => {
                float(a, b, a.to_bits() == b.to_bits(), scale)
            }
            _ => Agreement::Different,
        };
        worst = worse(worst, this);
    }
    worst
}

fn float(a: f64, b: f64, same_bits: bool, scale: f64) -> Agreement {
    if same_bits || (a.is_nan() && b.is_nan()) {
        return Agreement::Exact;
    }
    if a == 0.0 && b == 0.0 {
        return Agreement::SignedZero;
    }
    if !a.is_finite() || !b.is_finite() {
        // Overflow to inf, then inf - inf = NaN: which side overflows first depends on the
        // order of evaluation in any float operator.
        return Agreement::Overflow;
    }
    let denom = a.abs().max(b.abs()).max(scale).max(f64::MIN_POSITIVE);
    Agreement::Rounding {
        rel: (a - b).abs() / denom,
    }
}

fn rank(a: Agreement) -> u8 {
    match a {
        Agreement::Exact => 0,
        Agreement::Rounding { .. } => 1,
        Agreement::SignedZero => 2,
        Agreement::Overflow => 3,
        Agreement::Different => 4,
    }
}

fn worse(a: Agreement, b: Agreement) -> Agreement {
    match (a, b) {
        (Agreement::Rounding { rel: x }, Agreement::Rounding { rel: y }) => {
            Agreement::Rounding { rel: x.max(y) }
        }
        _ if rank(b) > rank(a) => b,
        _ => a,
    }
}

/// Whether any float field of `elements` is NaN or infinite.
pub fn has_non_finite(element: &ElementType, elements: &[&[u8]]) -> bool {
    elements.iter().any(|bytes| {
        field_layout(element)
            .into_iter()
            .any(|(_, ty, off)| match read_field(bytes, ty, off) {
                FieldValue::F32(v) => !v.is_finite(),
                FieldValue::F64(v) => !v.is_finite(),
                FieldValue::Int(_) => false,
            })
    })
}

/// Largest finite magnitude among the float fields of `elements`.
pub fn float_scale(element: &ElementType, elements: &[&[u8]]) -> f64 {
    let mut m = 0.0f64;
    for bytes in elements {
        for (_, ty, off) in field_layout(element) {
            let v = match read_field(bytes, ty, off) {
                FieldValue::F32(v) => v as f64,
                FieldValue::F64(v) => v,
                FieldValue::Int(_) => continue,
            };
            if v.is_finite() {
                m = m.max(v.abs());
            }
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_core::PrimType;

    #[test]
    fn integers_are_exact_or_different() {
        let el = ElementType::Prim(PrimType::I32);
        assert_eq!(
            compare(&el, &5i32.to_le_bytes(), &5i32.to_le_bytes(), 0.0),
            Agreement::Exact
        );
        assert_eq!(
            compare(&el, &5i32.to_le_bytes(), &6i32.to_le_bytes(), 0.0),
            Agreement::Different
        );
    }

    #[test]
    fn floats_compare_relative_to_scale() {
        let el = ElementType::Prim(PrimType::F32);
        let r = compare(&el, &1.0f32.to_le_bytes(), &1.0000001f32.to_le_bytes(), 1.0);
        assert!(matches!(r, Agreement::Rounding { rel } if rel < 1e-6));
        assert_eq!(
            compare(
                &el,
                &f32::NAN.to_le_bytes(),
                &(-f32::NAN).to_le_bytes(),
                1.0
            ),
            Agreement::Exact
        );
        assert_eq!(
            compare(
                &el,
                &f32::INFINITY.to_le_bytes(),
                &1.0f32.to_le_bytes(),
                1.0
            ),
            Agreement::Overflow
        );
    }
}
