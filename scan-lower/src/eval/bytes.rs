//! Values from and to the bytes of an element's `#[repr(C)]` layout (little-endian, padding
//! written as zero), so the evaluator can scan raw buffers.

use super::value::{Target, Value};
use scan_core::PrimType;

/// Reads a value of `ty` at `offset`. `bytes` holds at least `offset + ty.size()` bytes (the
/// caller checked the element's size).
pub(crate) fn decode(ty: &Target, bytes: &[u8], offset: usize) -> Value {
    match ty {
        Target::Prim(p) => {
            let mut buf = [0u8; 8];
            buf[..p.size()].copy_from_slice(&bytes[offset..offset + p.size()]);
            let raw = u64::from_le_bytes(buf);
            match p {
                PrimType::I8 => Value::Int(*p, raw as u8 as i8 as i128),
                PrimType::I16 => Value::Int(*p, raw as u16 as i16 as i128),
                PrimType::I32 => Value::Int(*p, raw as u32 as i32 as i128),
                PrimType::I64 => Value::Int(*p, raw as i64 as i128),
                PrimType::F32 => Value::F32(f32::from_bits(raw as u32)),
                PrimType::F64 => Value::F64(f64::from_bits(raw)),
                PrimType::F16 | PrimType::BF16 => {
                    Value::half_from_bits(*p, raw as u16).expect("a 2-byte float")
                }
                _ => Value::Int(*p, raw as i128),
            }
        }
        // Any non-zero byte reads as `true` (a buffer from elsewhere may hold other bytes;
        // C++ reads them as true too).
        Target::Bool => Value::Bool(bytes[offset] != 0),
        Target::Struct(d) => {
            let mut fields = Vec::with_capacity(d.fields.len());
            for f in &d.fields {
                fields.push(decode(&f.ty, bytes, offset + f.offset));
            }
            Value::Struct(d.clone(), fields.into_boxed_slice())
        }
        Target::Array(t, n) => {
            let size = t.size();
            let mut xs = Vec::with_capacity(*n);
            for i in 0..*n {
                xs.push(decode(t, bytes, offset + i * size));
            }
            Value::Array(xs)
        }
        Target::Tuple(ts) => {
            let mut at = offset;
            let mut xs = Vec::with_capacity(ts.len());
            for t in ts {
                xs.push(decode(t, bytes, at));
                at += t.size();
            }
            Value::Tuple(xs)
        }
    }
}

/// Writes `v` (already coerced to `ty`) at `offset`; returns false when its shape is not
/// `ty`'s.
pub(crate) fn encode(ty: &Target, v: &Value, out: &mut [u8], offset: usize) -> bool {
    let mut put = |raw: u64, size: usize| {
        out[offset..offset + size].copy_from_slice(&raw.to_le_bytes()[..size]);
        true
    };
    match (ty, v) {
        (Target::Prim(p), Value::Int(q, x)) if p == q => put(*x as u64, p.size()),
        (Target::Prim(PrimType::F32), Value::F32(x)) => put(x.to_bits() as u64, 4),
        (Target::Prim(PrimType::F64), Value::F64(x)) => put(x.to_bits(), 8),
        (Target::Prim(PrimType::F16), Value::F16(x)) => put(x.to_bits() as u64, 2),
        (Target::Prim(PrimType::BF16), Value::BF16(x)) => put(x.to_bits() as u64, 2),
        (Target::Bool, Value::Bool(b)) => put(*b as u64, 1),
        (Target::Struct(d), Value::Struct(_, fs)) if fs.len() == d.fields.len() => {
            let fields = d.fields.as_slice();
            let mut i = 0;
            while i < fields.len() {
                let f = &fields[i];
                if !encode(&f.ty, &fs[i], out, offset + f.offset) {
                    return false;
                }
                i += 1;
            }
            true
        }
        (Target::Array(t, n), Value::Array(xs)) if xs.len() == *n => {
            let size = t.size();
            let mut at = offset;
            for x in xs {
                if !encode(t, x, out, at) {
                    return false;
                }
                at += size;
            }
            true
        }
        _ => false,
    }
}
