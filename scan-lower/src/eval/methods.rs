//! The built-in methods (`methods::METHODS`), each computed by the Rust method of the same
//! name on the concrete type, so the evaluator means exactly what Rust means. Where a release
//! build would panic or wrap (`abs` of `MIN`, `clamp` with `lo > hi`), the GPU helper's formula
//! is used instead (`rs_abs` wraps, `rs_clamp` compares). The methods of `f16`/`bf16` are the
//! `half` crate's.

use super::error::{unsupported, EvalError};
use super::value::{wrap, Target, Value};
use crate::methods::{ArgTy, Method, On};
use proc_macro2::Span;
use scan_core::half::{bf16, f16};
use scan_core::PrimType;

/// Runs `body` with `$x` the integer `$v` as the concrete Rust type `$T` of `$p`.
macro_rules! with_int {
    ($p:expr, $v:expr, |$x:ident: $T:ident| $body:expr) => {
        match $p {
            PrimType::I8 => {
                type $T = i8;
                let $x = $v as $T;
                $body
            }
            PrimType::I16 => {
                type $T = i16;
                let $x = $v as $T;
                $body
            }
            PrimType::I32 => {
                type $T = i32;
                let $x = $v as $T;
                $body
            }
            PrimType::I64 => {
                type $T = i64;
                let $x = $v as $T;
                $body
            }
            PrimType::U8 => {
                type $T = u8;
                let $x = $v as $T;
                $body
            }
            PrimType::U16 => {
                type $T = u16;
                let $x = $v as $T;
                $body
            }
            PrimType::U32 => {
                type $T = u32;
                let $x = $v as $T;
                $body
            }
            _ => {
                type $T = u64;
                let $x = $v as $T;
                $body
            }
        }
    };
}

/// A float method on `$x` of the type of `$ctor` (`F32`/`F64`); `$a` the float arguments,
/// `$i` the integer one (`powi`).
macro_rules! float_method {
    ($name:expr, $x:expr, $a:expr, $i:expr, $ctor:ident) => {{
        let (x, a, i) = ($x, $a, $i);
        let arg = |k: usize| a.get(k).copied();
        let v = |r| Some(Value::$ctor(r));
        match $name {
            "min" => v(x.min(arg(0)?)),
            "max" => v(x.max(arg(0)?)),
            // Rust's formula without its panic on `lo > hi` or a NaN bound (`rs_clamp`).
            "clamp" => {
                let (lo, hi) = (arg(0)?, arg(1)?);
                v(if x < lo {
                    lo
                } else if x > hi {
                    hi
                } else {
                    x
                })
            }
            "abs" => v(x.abs()),
            "mul_add" => v(x.mul_add(arg(0)?, arg(1)?)),
            "sqrt" => v(x.sqrt()),
            "cbrt" => v(x.cbrt()),
            "exp" => v(x.exp()),
            "exp2" => v(x.exp2()),
            "ln" => v(x.ln()),
            "log2" => v(x.log2()),
            "log10" => v(x.log10()),
            "powi" => v(x.powi(i)),
            "powf" => v(x.powf(arg(0)?)),
            "floor" => v(x.floor()),
            "ceil" => v(x.ceil()),
            "round" => v(x.round()),
            "trunc" => v(x.trunc()),
            "sin" => v(x.sin()),
            "cos" => v(x.cos()),
            "tan" => v(x.tan()),
            "tanh" => v(x.tanh()),
            "is_nan" => Some(Value::Bool(x.is_nan())),
            "is_finite" => Some(Value::Bool(x.is_finite())),
            "is_infinite" => Some(Value::Bool(x.is_infinite())),
            _ => None,
        }
    }};
}

/// A method of `half::f16`/`half::bf16` on `$x` of the type of `$ctor` (`F16`/`BF16`), with
/// `$a` its arguments of the same type.
macro_rules! half_method {
    ($name:expr, $x:expr, $a:expr, $ctor:ident) => {{
        let (x, a) = ($x, $a);
        let arg = |k: usize| a.get(k).copied();
        let v = |r| Some(Value::$ctor(r));
        let b = |r: bool| Some(Value::Bool(r));
        match $name {
            // `half`'s own: a NaN operand gives the other one.
            "min" => v(x.min(arg(0)?)),
            "max" => v(x.max(arg(0)?)),
            // `half`'s formula without its assertion (`lo <= hi`), as `rs_clamp`.
            "clamp" => {
                let (lo, hi) = (arg(0)?, arg(1)?);
                v(if x < lo {
                    lo
                } else if x > hi {
                    hi
                } else {
                    x
                })
            }
            "is_nan" => b(x.is_nan()),
            "is_finite" => b(x.is_finite()),
            "is_infinite" => b(x.is_infinite()),
            "is_sign_negative" => b(x.is_sign_negative()),
            "is_sign_positive" => b(x.is_sign_positive()),
            "to_f32" => Some(Value::F32(x.to_f32())),
            "to_f64" => Some(Value::F64(x.to_f64())),
            "to_bits" => Some(Value::Int(PrimType::U16, i128::from(x.to_bits()))),
            _ => None,
        }
    }};
}

/// The receiver's type: the one the call names (`f32::max(a, b)`), or the receiver's own, or
/// for a literal receiver the type of an argument beside it, or Rust's default.
fn receiver_type(method: &Method, recv: &Value, args: &[Value], ty: Option<PrimType>) -> PrimType {
    if let Some(p) = ty.or_else(|| recv.prim()) {
        return p;
    }
    let beside = method
        .args
        .iter()
        .zip(args)
        .find_map(|(a, v)| (*a == ArgTy::Same).then(|| v.prim()).flatten());
    beside.unwrap_or(match recv {
        Value::FloatLit(..) => PrimType::F64,
        _ => PrimType::I32,
    })
}

pub(crate) fn call(
    method: &Method,
    recv: Value,
    args: &mut [Value],
    ty: Option<PrimType>,
    span: Span,
) -> Result<Value, EvalError> {
    if let On::HalfFrom(from) = method.on {
        return half_from(method, from, recv, ty, span);
    }
    let p = receiver_type(method, &recv, args, ty);
    let recv = recv.coerce(&Target::Prim(p));
    // Arguments past the method's own are dropped, as zipping them with its types would.
    let kept = args.len().min(method.args.len());
    let args = &mut args[..kept];
    for (k, arg) in args.iter_mut().enumerate() {
        let t = match method.args[k] {
            ArgTy::Same => p,
            ArgTy::I32 => PrimType::I32,
            ArgTy::U32 => PrimType::U32,
        };
        arg.coerce_in_place(&Target::Prim(t));
    }
    let result = match recv {
        Value::Int(p, x) => {
            let (ints, n) = args_of(args, Value::as_int);
            (n == args.len())
                .then(|| int_method(method.name, p, x, &ints[..n]))
                .flatten()
        }
        Value::F32(x) => {
            let (fl, n) = args_of(args, |v| match v {
                Value::F32(v) => Some(*v),
                _ => None,
            });
            f32_method(method.name, x, &fl[..n], first_int(args))
        }
        Value::F64(x) => {
            let (fl, n) = args_of(args, |v| match v {
                Value::F64(v) => Some(*v),
                _ => None,
            });
            f64_method(method.name, x, &fl[..n], first_int(args))
        }
        Value::F16(x) => {
            let (hs, n) = args_of(args, |v| match v {
                Value::F16(h) => Some(*h),
                _ => None,
            });
            (n == args.len())
                .then(|| f16_method(method.name, x, &hs[..n]))
                .flatten()
        }
        Value::BF16(x) => {
            let (hs, n) = args_of(args, |v| match v {
                Value::BF16(h) => Some(*h),
                _ => None,
            });
            (n == args.len())
                .then(|| bf16_method(method.name, x, &hs[..n]))
                .flatten()
        }
        _ => None,
    };
    result.ok_or_else(|| unsupported(span, format!("`{}` on {}", method.name, p)))
}

/// The arguments `get` reads, in order (the others skipped), and how many: no method takes
/// more than two, so they fit an array (no allocation per call).
fn args_of<T: Copy + Default>(args: &[Value], get: fn(&Value) -> Option<T>) -> ([T; 2], usize) {
    let mut out = [T::default(); 2];
    let mut n = 0;
    for v in args {
        if let Some(x) = get(v) {
            out[n] = x;
            n += 1;
        }
    }
    (out, n)
}

/// The first integer argument (`powi`'s exponent), 0 without one.
fn first_int(args: &[Value]) -> i32 {
    args.iter().find_map(Value::as_int).unwrap_or(0) as i32
}

/// `f16::from_f32(x)`, `bf16::from_bits(b)`: `ty` is the type built, `from` the argument's
/// (an untyped literal argument takes it). `from_f32` rounds to nearest, ties to even, as
/// `half` does.
fn half_from(
    method: &Method,
    from: PrimType,
    arg: Value,
    ty: Option<PrimType>,
    span: Span,
) -> Result<Value, EvalError> {
    let arg = arg.coerce(&Target::Prim(from));
    let bad = || {
        unsupported(
            span,
            format!(
                "`{}::{}` of {}",
                ty.map_or("?", PrimType::name),
                method.name,
                arg.kind()
            ),
        )
    };
    match (ty, method.name, &arg) {
        (Some(PrimType::F16), "from_f32", Value::F32(x)) => Ok(Value::F16(f16::from_f32(*x))),
        (Some(PrimType::BF16), "from_f32", Value::F32(x)) => Ok(Value::BF16(bf16::from_f32(*x))),
        (Some(p @ (PrimType::F16 | PrimType::BF16)), "from_bits", Value::Int(PrimType::U16, b)) => {
            Value::half_from_bits(p, *b as u16).ok_or_else(bad)
        }
        _ => Err(bad()),
    }
}

fn int_method(name: &str, p: PrimType, x: i128, a: &[i128]) -> Option<Value> {
    let arg = |k: usize| a.get(k).copied();
    let same = |v: i128| Some(Value::Int(p, wrap(p, v)));
    let u32v = |v: u32| Some(Value::Int(PrimType::U32, v as i128));
    match name {
        "min" => same(x.min(arg(0)?)),
        "max" => same(x.max(arg(0)?)),
        "clamp" => {
            let (lo, hi) = (arg(0)?, arg(1)?);
            same(if x < lo {
                lo
            } else if x > hi {
                hi
            } else {
                x
            })
        }
        "abs" | "wrapping_abs" => same(x.abs()),
        "wrapping_add" => same(x + arg(0)?),
        "wrapping_sub" => same(x - arg(0)?),
        "wrapping_mul" => same(x.wrapping_mul(arg(0)?)),
        "wrapping_div" => same(x.checked_div(arg(0)?).unwrap_or(0)),
        "wrapping_rem" => same(x.checked_rem(arg(0)?).unwrap_or(0)),
        "wrapping_neg" => same(-x),
        "wrapping_shl" => {
            let b = arg(0)? as u32;
            with_int!(p, x, |v: T| same(v.wrapping_shl(b) as i128))
        }
        "wrapping_shr" => {
            let b = arg(0)? as u32;
            with_int!(p, x, |v: T| same(v.wrapping_shr(b) as i128))
        }
        "saturating_add" | "saturating_sub" | "saturating_mul" => {
            let b = arg(0)?;
            let exact = match name {
                "saturating_add" => x + b,
                "saturating_sub" => x - b,
                _ => x.saturating_mul(b),
            };
            let (lo, hi) = with_int!(p, 0, |_z: T| (T::MIN as i128, T::MAX as i128));
            same(exact.clamp(lo, hi))
        }
        "rotate_left" => {
            let b = arg(0)? as u32;
            with_int!(p, x, |v: T| same(v.rotate_left(b) as i128))
        }
        "rotate_right" => {
            let b = arg(0)? as u32;
            with_int!(p, x, |v: T| same(v.rotate_right(b) as i128))
        }
        "count_ones" => with_int!(p, x, |v: T| u32v(v.count_ones())),
        "count_zeros" => with_int!(p, x, |v: T| u32v(v.count_zeros())),
        "leading_zeros" => with_int!(p, x, |v: T| u32v(v.leading_zeros())),
        "trailing_zeros" => with_int!(p, x, |v: T| u32v(v.trailing_zeros())),
        _ => None,
    }
}

fn f32_method(name: &str, x: f32, a: &[f32], i: i32) -> Option<Value> {
    float_method!(name, x, a, i, F32)
}

fn f64_method(name: &str, x: f64, a: &[f64], i: i32) -> Option<Value> {
    float_method!(name, x, a, i, F64)
}

fn f16_method(name: &str, x: f16, a: &[f16]) -> Option<Value> {
    half_method!(name, x, a, F16)
}

fn bf16_method(name: &str, x: bf16, a: &[bf16]) -> Option<Value> {
    half_method!(name, x, a, BF16)
}

#[cfg(test)]
mod tests {
    #[test]
    fn no_method_takes_more_arguments_than_args_of_holds() {
        assert!(crate::methods::METHODS.iter().all(|m| m.args.len() <= 2));
    }
}
