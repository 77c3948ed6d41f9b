//! Operators and `as` casts with the lowering's meaning (docs/operator-language.md): integers
//! wrap, a zero divisor gives 0 and `MIN / -1` gives `MIN` (the GPU's `wrapping_div`), shift
//! amounts are masked to the width, `>>` is arithmetic on signed types, floats are IEEE with
//! Rust's `%` (fmod), casts are Rust's (float -> int saturates, NaN -> 0). `f16`/`bf16` use the
//! `half` crate's operators: both operands to `f32`, one `f32` operation, rounded back to
//! nearest with ties to even; comparisons are IEEE's; `-` flips the sign bit. They have no
//! literals and no casts (the lowering refuses both).

use super::error::{unsupported, EvalError};
use super::value::{lit_f32, wrap, Value};
use crate::ir::{BinOp, UnOp};
use proc_macro2::Span;
use scan_core::PrimType;

macro_rules! float_op {
    ($op:expr, $a:expr, $b:expr, $ctor:ident) => {{
        let (a, b) = ($a, $b);
        match $op {
            BinOp::Add => Value::$ctor(a + b),
            BinOp::Sub => Value::$ctor(a - b),
            BinOp::Mul => Value::$ctor(a * b),
            BinOp::Div => Value::$ctor(a / b),
            BinOp::Rem => Value::$ctor(a % b),
            BinOp::Eq => Value::Bool(a == b),
            BinOp::Ne => Value::Bool(a != b),
            BinOp::Lt => Value::Bool(a < b),
            BinOp::Le => Value::Bool(a <= b),
            BinOp::Gt => Value::Bool(a > b),
            BinOp::Ge => Value::Bool(a >= b),
            _ => Value::Unit,
        }
    }};
}

/// Two operands made the same type: a literal takes the other side's type.
fn unify(l: Value, r: Value) -> (Value, Value) {
    use Value::*;
    match (&l, &r) {
        (IntLit(_) | FloatLit(..), Int(..) | F32(_) | F64(_)) => {
            let p = r.prim().unwrap_or(PrimType::I32);
            (l.coerce(&super::value::Target::Prim(p)), r)
        }
        (Int(..) | F32(_) | F64(_), IntLit(_) | FloatLit(..)) => {
            let p = l.prim().unwrap_or(PrimType::I32);
            let r = r.coerce(&super::value::Target::Prim(p));
            (l, r)
        }
        _ => (l, r),
    }
}

pub(crate) fn binary(op: BinOp, l: Value, r: Value, span: Span) -> Result<Value, EvalError> {
    use Value::*;
    if matches!(op, BinOp::Shl | BinOp::Shr) {
        return shift(op, l, r, span);
    }
    let (l, r) = unify(l, r);
    let mismatch = |l: &Value, r: &Value| {
        unsupported(
            span,
            format!("`{}` on {} and {}", op.c_infix(), l.kind(), r.kind()),
        )
    };
    Ok(match (&l, &r) {
        (Int(p, a), Int(q, b)) if p == q => int_op(op, *p, *a, *b),
        (IntLit(a), IntLit(b)) => match int_op_lit(op, *a, *b) {
            Some(v) => v,
            None => return Err(mismatch(&l, &r)),
        },
        (F32(a), F32(b)) => float_op!(op, *a, *b, F32),
        (F64(a), F64(b)) => float_op!(op, *a, *b, F64),
        (F16(a), F16(b)) => float_op!(op, *a, *b, F16),
        (BF16(a), BF16(b)) => float_op!(op, *a, *b, BF16),
        (FloatLit(a, _), FloatLit(b, _)) => match float_op!(op, *a, *b, F64) {
            F64(v) => FloatLit(v, None),
            other => other,
        },
        (Bool(a), Bool(b)) => Bool(match op {
            BinOp::And | BinOp::BitAnd => *a & *b,
            BinOp::Or | BinOp::BitOr => *a | *b,
            BinOp::BitXor | BinOp::Ne => *a != *b,
            BinOp::Eq => a == b,
            BinOp::Lt => !*a & *b,
            BinOp::Le => a <= b,
            BinOp::Gt => *a & !*b,
            BinOp::Ge => a >= b,
            _ => return Err(mismatch(&l, &r)),
        }),
        _ if matches!(op, BinOp::Eq | BinOp::Ne) => {
            let eq = equal(&l, &r, span)?;
            Bool(if op == BinOp::Eq { eq } else { !eq })
        }
        _ => return Err(mismatch(&l, &r)),
    })
}

/// `==` on aggregates (derived `PartialEq`: field by field, NaN unequal).
fn equal(l: &Value, r: &Value, span: Span) -> Result<bool, EvalError> {
    let (a, b): (&[Value], &[Value]) = match (l, r) {
        (Value::Struct(_, a), Value::Struct(_, b)) => (a, b),
        (Value::Array(a), Value::Array(b)) | (Value::Tuple(a), Value::Tuple(b)) => (a, b),
        _ => {
            return match binary(BinOp::Eq, l.clone(), r.clone(), span)? {
                Value::Bool(b) => Ok(b),
                _ => Ok(false),
            }
        }
    };
    for (x, y) in a.iter().zip(b) {
        if !equal(x, y, span)? {
            return Ok(false);
        }
    }
    Ok(a.len() == b.len())
}

fn int_op(op: BinOp, p: PrimType, a: i128, b: i128) -> Value {
    match int_op_lit(op, a, b) {
        Some(Value::IntLit(v)) => Value::Int(p, wrap(p, v)),
        Some(other) => other,
        None => Value::Unit,
    }
}

/// Integer arithmetic on exact values (wrapped by the caller). `None`: not an integer operator.
fn int_op_lit(op: BinOp, a: i128, b: i128) -> Option<Value> {
    let v = match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        // A zero divisor gives 0 (the GPU's choice, where Rust panics); `MIN / -1` is exact
        // here and wraps to `MIN` afterwards.
        BinOp::Div => a.checked_div(b).unwrap_or(0),
        BinOp::Rem => a.checked_rem(b).unwrap_or(0),
        BinOp::BitAnd => a & b,
        BinOp::BitOr => a | b,
        BinOp::BitXor => a ^ b,
        BinOp::Eq => return Some(Value::Bool(a == b)),
        BinOp::Ne => return Some(Value::Bool(a != b)),
        BinOp::Lt => return Some(Value::Bool(a < b)),
        BinOp::Le => return Some(Value::Bool(a <= b)),
        BinOp::Gt => return Some(Value::Bool(a > b)),
        BinOp::Ge => return Some(Value::Bool(a >= b)),
        _ => return None,
    };
    Some(Value::IntLit(v))
}

/// `<<`/`>>`: the result has the left side's type; the amount (any integer type) is masked to
/// the width, as a release build does.
fn shift(op: BinOp, l: Value, r: Value, span: Span) -> Result<Value, EvalError> {
    let Some(amount) = r.as_int() else {
        return Err(unsupported(span, format!("a shift by {}", r.kind())));
    };
    let (p, a) = match l {
        Value::Int(p, a) => (p, a),
        // An untyped left side: shifted exactly, typed by its use (an i32 when none says).
        Value::IntLit(a) => {
            let amount = (amount & 127) as u32;
            return Ok(Value::IntLit(if op == BinOp::Shl {
                a.wrapping_shl(amount)
            } else {
                a >> amount
            }));
        }
        other => return Err(unsupported(span, format!("a shift of {}", other.kind()))),
    };
    let bits = p.size() as i128 * 8;
    let amount = (amount & (bits - 1)) as u32;
    // `a` is the exact value, so `>>` is arithmetic for signed and logical for unsigned types.
    let v = if op == BinOp::Shl {
        a << amount
    } else {
        a >> amount
    };
    Ok(Value::Int(p, wrap(p, v)))
}

pub(crate) fn unary(op: UnOp, v: Value, span: Span) -> Result<Value, EvalError> {
    Ok(match (op, v) {
        (UnOp::Neg, Value::Int(p, a)) => Value::Int(p, wrap(p, -a)),
        (UnOp::Neg, Value::IntLit(a)) => Value::IntLit(-a),
        (UnOp::Neg, Value::F32(a)) => Value::F32(-a),
        (UnOp::Neg, Value::F64(a)) => Value::F64(-a),
        (UnOp::Neg, Value::F16(a)) => Value::F16(-a),
        (UnOp::Neg, Value::BF16(a)) => Value::BF16(-a),
        (UnOp::Neg, Value::FloatLit(a, d)) => {
            Value::FloatLit(-a, d.map(|d| format!("-{d}").into()))
        }
        (UnOp::Not, Value::Bool(b)) => Value::Bool(!b),
        (UnOp::Not, Value::Int(p, a)) => Value::Int(p, wrap(p, !a)),
        (UnOp::Not, Value::IntLit(a)) => Value::IntLit(!a),
        (op, v) => return Err(unsupported(span, format!("`{op:?}` on {}", v.kind()))),
    })
}

/// An integer of `to` from the float `f`: Rust's saturating cast (NaN gives 0).
fn float_to_int(f: f64, to: PrimType) -> i128 {
    match to {
        PrimType::I8 => f as i8 as i128,
        PrimType::I16 => f as i16 as i128,
        PrimType::I32 => f as i32 as i128,
        PrimType::I64 => f as i64 as i128,
        PrimType::U8 => f as u8 as i128,
        PrimType::U16 => f as u16 as i128,
        PrimType::U32 => f as u32 as i128,
        _ => f as u64 as i128,
    }
}

/// `v as to`.
pub(crate) fn cast(v: Value, to: PrimType, span: Span) -> Result<Value, EvalError> {
    // `half::f16` is a struct: rustc has no `as` to or from it (the lowering refuses both).
    if to.is_half() {
        return Err(unsupported(span, format!("`as {to}` of {}", v.kind())));
    }
    let int = |x: i128| match to {
        PrimType::F32 => Value::F32(x as f32),
        PrimType::F64 => Value::F64(x as f64),
        p => Value::Int(p, wrap(p, x)),
    };
    Ok(match v {
        Value::Int(_, x) | Value::IntLit(x) => int(x),
        Value::Bool(b) => int(b as i128),
        // f32 -> int goes through f64 exactly (every f32 is an f64), so one saturating rule.
        Value::F32(f) => match to {
            PrimType::F32 => Value::F32(f),
            PrimType::F64 => Value::F64(f as f64),
            p => Value::Int(p, float_to_int(f as f64, p)),
        },
        Value::F64(f) => match to {
            PrimType::F32 => Value::F32(f as f32),
            PrimType::F64 => Value::F64(f),
            p => Value::Int(p, float_to_int(f, p)),
        },
        // A cast types an unconstrained literal, as in rustc (`1.1 as f32` is `1.1f32`).
        Value::FloatLit(f, d) => match to {
            PrimType::F32 => Value::F32(lit_f32(f, &d)),
            PrimType::F64 => Value::F64(f),
            p => Value::Int(p, float_to_int(f, p)),
        },
        other => return Err(unsupported(span, format!("`as {to}` of {}", other.kind()))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s() -> Span {
        Span::call_site()
    }

    #[test]
    fn integer_arithmetic_wraps_and_divides_as_the_gpu() {
        let i = |v: i32| Value::Int(PrimType::I32, v as i128);
        let get = |v: Value| v.as_int().unwrap();
        assert_eq!(
            get(binary(BinOp::Add, i(i32::MAX), i(1), s()).unwrap()),
            i32::MIN as i128
        );
        assert_eq!(
            get(binary(BinOp::Div, i(i32::MIN), i(-1), s()).unwrap()),
            i32::MIN as i128
        );
        assert_eq!(get(binary(BinOp::Rem, i(i32::MIN), i(-1), s()).unwrap()), 0);
        assert_eq!(get(binary(BinOp::Div, i(7), i(0), s()).unwrap()), 0);
        assert_eq!(get(binary(BinOp::Shl, i(1), i(33), s()).unwrap()), 2);
        assert_eq!(get(binary(BinOp::Shr, i(-8), i(1), s()).unwrap()), -4);
        assert_eq!(
            get(binary(BinOp::Add, i(1), Value::IntLit(2), s()).unwrap()),
            3
        );
    }

    #[test]
    fn half_arithmetic_rounds_through_f32_to_nearest_even() {
        use scan_core::half::{bf16, f16};
        let h = |v: f32| Value::F16(f16::from_f32(v));
        let bits = |v: Value| match v {
            Value::F16(x) => x.to_bits(),
            Value::BF16(x) => x.to_bits(),
            other => panic!("{other:?}"),
        };
        // 2048 + 1 and 2050 + 1 are ties in f16 (spacing 2): to the even neighbour.
        let add = |a, b| bits(binary(BinOp::Add, h(a), h(b), s()).unwrap());
        assert_eq!(add(2048.0, 1.0), f16::from_f32(2048.0).to_bits());
        assert_eq!(add(2050.0, 1.0), f16::from_f32(2052.0).to_bits());
        assert_eq!(add(65504.0, 16.0), f16::INFINITY.to_bits());
        // bf16 keeps 8 bits of mantissa: 256 + 1 rounds back to 256.
        let b = |v: f32| Value::BF16(bf16::from_f32(v));
        let sum = binary(BinOp::Add, b(256.0), b(1.0), s()).unwrap();
        assert_eq!(bits(sum), bf16::from_f32(256.0).to_bits());
        // `-` flips the sign bit only (a NaN keeps its payload); comparisons are IEEE's.
        let nan = Value::F16(f16::from_bits(0x7e01));
        assert_eq!(bits(unary(UnOp::Neg, nan.clone(), s()).unwrap()), 0xfe01);
        assert!(matches!(
            binary(BinOp::Eq, nan.clone(), nan, s()).unwrap(),
            Value::Bool(false)
        ));
        let z = Value::F16(f16::NEG_ZERO);
        assert!(matches!(
            binary(BinOp::Eq, z, h(0.0), s()).unwrap(),
            Value::Bool(true)
        ));
        // Neither literals nor casts meet a 2-byte float.
        assert!(binary(BinOp::Add, h(1.0), Value::FloatLit(1.0, None), s()).is_err());
        assert!(cast(Value::F32(1.0), PrimType::F16, s()).is_err());
        assert!(cast(h(1.0), PrimType::F32, s()).is_err());
    }

    #[test]
    fn casts_are_rusts() {
        let f = Value::F32(f32::NAN);
        assert_eq!(cast(f, PrimType::I32, s()).unwrap().as_int(), Some(0));
        assert_eq!(
            cast(Value::F64(1e20), PrimType::I32, s()).unwrap().as_int(),
            Some(i32::MAX as i128)
        );
        assert_eq!(
            cast(Value::Int(PrimType::I32, -1), PrimType::U8, s())
                .unwrap()
                .as_int(),
            Some(255)
        );
    }
}
