//! Values of the evaluator and the types they are coerced to.
//!
//! Integers are kept as `i128` holding the exact value of their type (in range), so one
//! arithmetic serves every width: compute in `i128`, then [`wrap`] to the type, which is
//! two's-complement wrapping, what the lowering's `rs_add`/`rs_mul` and a release build do.
//! Untyped literals stay untyped ([`Value::IntLit`], [`Value::FloatLit`]) until they meet a
//! typed value, an annotation, a field, a parameter or a return: rustc's inference, done late.
//! `f16`/`bf16` values are the `half` crate's own types, so their arithmetic is `half`'s.

use scan_core::half::{bf16, f16};
use scan_core::PrimType;
use std::rc::Rc;

/// A struct as the evaluator knows it: its Rust name (for methods: `Run::weight`) and its
/// `repr(C)` fields.
#[derive(Debug)]
pub(crate) struct StructDef {
    pub rust_name: String,
    pub fields: Vec<FieldDef>,
    pub size: usize,
}

#[derive(Debug)]
pub(crate) struct FieldDef {
    /// The Rust name (without `r#`), which the IR uses.
    pub rust: String,
    pub ty: Target,
    pub offset: usize,
}

impl StructDef {
    /// The field a Rust name (`r#type` too) names; fields keep their C names (`type_`).
    pub fn field(&self, name: &str) -> Option<usize> {
        let name = match name.as_bytes() {
            [b'r', b'#', ..] => &name[2..],
            _ => name,
        };
        let fields = self.fields.as_slice();
        let mut i = 0;
        while i < fields.len() {
            if fields[i].rust == name {
                return Some(i);
            }
            i += 1;
        }
        None
    }
}

/// A type values are coerced to.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    Prim(PrimType),
    Bool,
    Struct(Rc<StructDef>),
    Array(Box<Target>, usize),
    Tuple(Vec<Target>),
}

impl Target {
    /// Size in a `repr(C)` element (tuples are never stored in one).
    pub fn size(&self) -> usize {
        match self {
            Target::Prim(p) => p.size(),
            Target::Bool => 1,
            Target::Struct(s) => s.size,
            Target::Array(t, n) => t.size() * n,
            Target::Tuple(ts) => ts.iter().map(Target::size).sum(),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Value {
    /// An integer of a known type; the value is in the type's range.
    Int(PrimType, i128),
    F32(f32),
    F64(f64),
    /// `half::f16`: computed with `half`'s operators (through `f32`, rounded back to nearest,
    /// ties to even), which is the lowering's meaning on the GPU too.
    F16(f16),
    /// `half::bf16`, likewise.
    BF16(bf16),
    Bool(bool),
    /// An integer literal (or arithmetic on them, or a `for` variable) whose type its use
    /// decides.
    IntLit(i128),
    /// A float literal; the digits as written, so that an `f32` is rounded once, from them.
    FloatLit(f64, Option<Rc<str>>),
    /// The fields in declaration order (a boxed slice keeps a `Value` 32 bytes, which an
    /// unoptimised build moves without calling `memcpy`).
    Struct(Rc<StructDef>, Box<[Value]>),
    Array(Vec<Value>),
    Tuple(Vec<Value>),
    /// What a statement-like expression (`if c { return x; }`, a loop) yields.
    Unit,
}

/// `v` wrapped to `ty` (two's complement), for integer types; floats are not integers.
pub(crate) fn wrap(ty: PrimType, v: i128) -> i128 {
    let bits = ty.size() as u32 * 8;
    let masked = (v as u128) & ((1u128 << bits) - 1);
    if ty.is_signed_int() && masked >> (bits - 1) == 1 {
        masked as i128 - (1i128 << bits)
    } else {
        masked as i128
    }
}

/// An untyped float literal as `f32`: from its digits where known (one rounding, as rustc).
pub(crate) fn lit_f32(v: f64, digits: &Option<Rc<str>>) -> f32 {
    digits
        .as_deref()
        .and_then(|d| d.parse::<f32>().ok())
        .unwrap_or(v as f32)
}

impl Value {
    /// The 2-byte float of type `p` with the bits `bits` (`None`: `p` is not `f16`/`bf16`).
    pub fn half_from_bits(p: PrimType, bits: u16) -> Option<Value> {
        match p {
            PrimType::F16 => Some(Value::F16(f16::from_bits(bits))),
            PrimType::BF16 => Some(Value::BF16(bf16::from_bits(bits))),
            _ => None,
        }
    }

    /// The value typed as `target`: literals take the type, aggregates coerce their parts,
    /// typed values are returned as they are.
    pub fn coerce(mut self, target: &Target) -> Value {
        self.coerce_in_place(target);
        self
    }

    /// [`Value::coerce`] without moving the value: an aggregate keeps its parts' storage (a
    /// combine's result is coerced to the element once per element).
    pub fn coerce_in_place(&mut self, target: &Target) {
        let typed = match (&mut *self, target) {
            (Value::IntLit(v), Target::Prim(p)) if p.is_int() => Value::Int(*p, wrap(*p, *v)),
            (Value::IntLit(v), Target::Prim(PrimType::F32)) => Value::F32(*v as f32),
            (Value::IntLit(v), Target::Prim(PrimType::F64)) => Value::F64(*v as f64),
            (Value::FloatLit(v, d), Target::Prim(PrimType::F32)) => Value::F32(lit_f32(*v, d)),
            (Value::FloatLit(v, _), Target::Prim(PrimType::F64)) => Value::F64(*v),
            // Parts without a type to take are dropped, as zipping them with the types would.
            (Value::Struct(_, fs), Target::Struct(t)) => {
                if fs.len() > t.fields.len() {
                    let mut kept = std::mem::take(fs).into_vec();
                    kept.truncate(t.fields.len());
                    *fs = kept.into_boxed_slice();
                }
                let mut i = 0;
                while i < fs.len() {
                    fs[i].coerce_in_place(&t.fields[i].ty);
                    i += 1;
                }
                return;
            }
            (Value::Array(xs), Target::Array(t, _)) => {
                for x in xs {
                    x.coerce_in_place(t);
                }
                return;
            }
            (Value::Tuple(xs), Target::Tuple(ts)) => {
                xs.truncate(ts.len());
                let mut i = 0;
                while i < xs.len() {
                    xs[i].coerce_in_place(&ts[i]);
                    i += 1;
                }
                return;
            }
            _ => return,
        };
        *self = typed;
    }

    /// The primitive type of a typed number.
    pub fn prim(&self) -> Option<PrimType> {
        match self {
            Value::Int(p, _) => Some(*p),
            Value::F32(_) => Some(PrimType::F32),
            Value::F64(_) => Some(PrimType::F64),
            Value::F16(_) => Some(PrimType::F16),
            Value::BF16(_) => Some(PrimType::BF16),
            _ => None,
        }
    }

    /// The integer value of an integer (typed or not).
    pub fn as_int(&self) -> Option<i128> {
        match self {
            Value::Int(_, v) | Value::IntLit(v) => Some(*v),
            _ => None,
        }
    }

    /// A short name of the value's kind, for error messages.
    pub fn kind(&self) -> String {
        match self {
            Value::Int(p, _) => p.name().to_string(),
            Value::F32(_) => "f32".into(),
            Value::F64(_) => "f64".into(),
            Value::F16(_) => "f16".into(),
            Value::BF16(_) => "bf16".into(),
            Value::Bool(_) => "bool".into(),
            Value::IntLit(_) => "an integer literal".into(),
            Value::FloatLit(..) => "a float literal".into(),
            Value::Struct(d, _) => d.rust_name.clone(),
            Value::Array(_) => "an array".into(),
            Value::Tuple(_) => "a tuple".into(),
            Value::Unit => "()".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_is_twos_complement() {
        assert_eq!(wrap(PrimType::I8, 200), -56);
        assert_eq!(wrap(PrimType::U8, -1), 255);
        assert_eq!(wrap(PrimType::I64, i64::MAX as i128 + 1), i64::MIN as i128);
        assert_eq!(wrap(PrimType::U64, -1), u64::MAX as i128);
    }

    #[test]
    fn float_literals_round_once_from_their_digits() {
        // 0.1 rounded to f64 then to f32 equals 0.1f32 here; the digits path is the rule.
        let d: Option<Rc<str>> = Some("16777217.0".into());
        assert_eq!(lit_f32(16777217.0, &d), 16777217.0f32);
    }
}
