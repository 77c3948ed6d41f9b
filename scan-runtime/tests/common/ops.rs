//! Struct operators for the GPU tests, defined without the macro (so the tests do not depend on
//! the lowering): non-commutative, with 8-, 12- and 32-byte elements, and exact test values.

use super::{uniform_struct, Rng, TestValue};
use scan_core::{BuiltinOp, ElementType, OpSpec, PrimType, ScanElement};
use scan_runtime::cudarc::driver::DeviceRepr;
use scan_runtime::ScanOp;

/// The affine map x -> a*x + b.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Affine {
    pub a: f32,
    pub b: f32,
}

// SAFETY: repr(C) struct of two f32, as declared; every bit pattern is valid.
unsafe impl ScanElement for Affine {
    fn element_type() -> ElementType {
        uniform_struct("Affine", PrimType::F32, &["a", "b"])
    }
}

// SAFETY: plain old data, passed by value as its bytes.
unsafe impl DeviceRepr for Affine {}

/// Composition in sequence order: `combine(f, g)` applies f, then g. Not commutative.
pub struct Compose;

impl ScanOp for Compose {
    type Elem = Affine;
    fn identity() -> Affine {
        Affine { a: 1.0, b: 0.0 }
    }
    fn combine(f: Affine, g: Affine) -> Affine {
        Affine {
            a: g.a * f.a,
            b: g.a * f.b + g.b,
        }
    }
    fn device_op() -> OpSpec {
        OpSpec {
            name: "compose".into(),
            element: Affine::element_type(),
            lhs: "f".into(),
            rhs: "g".into(),
            combine_body: "Affine r; r.a = g.a * f.a; r.b = g.a * f.b + g.b; return r;".into(),
            identity_body: "Affine r; r.a = 1.0f; r.b = 0.0f; return r;".into(),
            word_form: None,
        }
    }
}

impl TestValue for Affine {
    const INTEGER: bool = false;
    /// a = +-1 and small integer b: every composition is exact (|b| stays far below 2^24), so
    /// any reordering shows as a wrong value, not as rounding.
    fn random(rng: &mut Rng, _op: BuiltinOp) -> Self {
        let r = rng.next();
        let b = (r % 15) as i32 - 7;
        Affine {
            a: if r & (1 << 20) != 0 { 1.0 } else { -1.0 },
            b: if b == 0 { 3.0 } else { b as f32 },
        }
    }
}

/// A 12-byte element: three 32-bit words, so the single-pass tile state carries three tagged
/// words per tile (the only ones whose status halves can disagree mid-publish).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    pub sum: u32,
    pub count: u32,
    pub last: u32,
}

// SAFETY: repr(C) struct of three u32, as declared; every bit pattern is valid.
unsafe impl ScanElement for Tally {
    fn element_type() -> ElementType {
        uniform_struct("Tally", PrimType::U32, &["sum", "count", "last"])
    }
}

// SAFETY: plain old data, passed by value as its bytes.
unsafe impl DeviceRepr for Tally {}

/// Wrapping sums of `sum` and `count`, and the `last` of the latest element with a nonzero
/// count: associative, not commutative.
pub struct LastOfRun;

impl ScanOp for LastOfRun {
    type Elem = Tally;
    fn identity() -> Tally {
        Tally {
            sum: 0,
            count: 0,
            last: 0,
        }
    }
    fn combine(l: Tally, r: Tally) -> Tally {
        Tally {
            sum: l.sum.wrapping_add(r.sum),
            count: l.count.wrapping_add(r.count),
            last: if r.count != 0 { r.last } else { l.last },
        }
    }
    fn device_op() -> OpSpec {
        OpSpec {
            name: "last_of_run".into(),
            element: Tally::element_type(),
            lhs: "l".into(),
            rhs: "r".into(),
            combine_body: "Tally t; t.sum = l.sum + r.sum; t.count = l.count + r.count; \
                           t.last = r.count != 0u ? r.last : l.last; return t;"
                .into(),
            identity_body: "Tally t; t.sum = 0u; t.count = 0u; t.last = 0u; return t;".into(),
            word_form: None,
        }
    }
}

impl TestValue for Tally {
    const INTEGER: bool = true;
    /// Random words; a quarter of the elements have count 0 (so `last` must skip them) and then
    /// last 0, as the identity law needs (combine(identity, x) = x).
    fn random(rng: &mut Rng, _op: BuiltinOp) -> Self {
        let r = rng.next();
        let count = if r & 3 == 0 {
            0
        } else {
            (r >> 2) as u32 & 7 | 1
        };
        Tally {
            sum: (r >> 32) as u32 | 1,
            count,
            last: if count == 0 { 0 } else { (r >> 8) as u32 | 1 },
        }
    }
}

/// A 2x2 matrix of wrapping u64: a 32-byte element (eight tagged words per tile state slot).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Mat2 {
    pub m00: u64,
    pub m01: u64,
    pub m10: u64,
    pub m11: u64,
}

// SAFETY: repr(C) struct of four u64, as declared; every bit pattern is valid.
unsafe impl ScanElement for Mat2 {
    fn element_type() -> ElementType {
        uniform_struct("Mat2", PrimType::U64, &["m00", "m01", "m10", "m11"])
    }
}

// SAFETY: plain old data, passed by value as its bytes.
unsafe impl DeviceRepr for Mat2 {}

/// Matrix product in sequence order, `combine(l, r) = l * r` (wrapping): associative, not
/// commutative, exact.
pub struct MatMul;

impl ScanOp for MatMul {
    type Elem = Mat2;
    fn identity() -> Mat2 {
        Mat2 {
            m00: 1,
            m01: 0,
            m10: 0,
            m11: 1,
        }
    }
    fn combine(l: Mat2, r: Mat2) -> Mat2 {
        let dot =
            |a: u64, b: u64, c: u64, d: u64| a.wrapping_mul(b).wrapping_add(c.wrapping_mul(d));
        Mat2 {
            m00: dot(l.m00, r.m00, l.m01, r.m10),
            m01: dot(l.m00, r.m01, l.m01, r.m11),
            m10: dot(l.m10, r.m00, l.m11, r.m10),
            m11: dot(l.m10, r.m01, l.m11, r.m11),
        }
    }
    fn device_op() -> OpSpec {
        OpSpec {
            name: "matmul".into(),
            element: Mat2::element_type(),
            lhs: "l".into(),
            rhs: "r".into(),
            combine_body: "Mat2 p; p.m00 = l.m00 * r.m00 + l.m01 * r.m10; \
                           p.m01 = l.m00 * r.m01 + l.m01 * r.m11; \
                           p.m10 = l.m10 * r.m00 + l.m11 * r.m10; \
                           p.m11 = l.m10 * r.m01 + l.m11 * r.m11; return p;"
                .into(),
            identity_body:
                "Mat2 p; p.m00 = 1ull; p.m01 = 0ull; p.m10 = 0ull; p.m11 = 1ull; return p;".into(),
            word_form: None,
        }
    }
}

impl TestValue for Mat2 {
    const INTEGER: bool = true;
    /// Random words: every entry matters, and a product of them differs from the reverse order.
    fn random(rng: &mut Rng, _op: BuiltinOp) -> Self {
        Mat2 {
            m00: rng.next() | 1,
            m01: rng.next(),
            m10: rng.next(),
            m11: rng.next() | 1,
        }
    }
}

/// The affine map x -> a*x + b on wrapping u64, with a count of the maps composed: a 24-byte
/// element of 8-byte alignment, which the kernels move as three 8-byte vectors (no 16-byte one
/// divides it; policy element_vectors).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CountedAffine {
    pub a: u64,
    pub b: u64,
    pub count: u64,
}

// SAFETY: repr(C) struct of three u64, as declared; every bit pattern is valid.
unsafe impl ScanElement for CountedAffine {
    fn element_type() -> ElementType {
        uniform_struct("CountedAffine", PrimType::U64, &["a", "b", "count"])
    }
}

// SAFETY: plain old data, passed by value as its bytes.
unsafe impl DeviceRepr for CountedAffine {}

/// Composition in sequence order (`l` applied first, then `r`), counts added: associative, not
/// commutative, exact.
pub struct ComposeCounted;

impl ScanOp for ComposeCounted {
    type Elem = CountedAffine;
    fn identity() -> CountedAffine {
        CountedAffine {
            a: 1,
            b: 0,
            count: 0,
        }
    }
    fn combine(l: CountedAffine, r: CountedAffine) -> CountedAffine {
        CountedAffine {
            a: l.a.wrapping_mul(r.a),
            b: l.b.wrapping_mul(r.a).wrapping_add(r.b),
            count: l.count.wrapping_add(r.count),
        }
    }
    fn device_op() -> OpSpec {
        OpSpec {
            name: "compose_counted".into(),
            element: CountedAffine::element_type(),
            lhs: "l".into(),
            rhs: "r".into(),
            combine_body: "CountedAffine p; p.a = l.a * r.a; p.b = l.b * r.a + r.b; \
                           p.count = l.count + r.count; return p;"
                .into(),
            identity_body: "CountedAffine p; p.a = 1ull; p.b = 0ull; p.count = 0ull; return p;"
                .into(),
            word_form: None,
        }
    }
}

impl TestValue for CountedAffine {
    const INTEGER: bool = true;
    fn random(rng: &mut Rng, _op: BuiltinOp) -> Self {
        CountedAffine {
            a: rng.next() | 1,
            b: rng.next(),
            count: rng.next() % 1000,
        }
    }
}

/// The affine map x -> a*x + b on wrapping u64: a 16-byte element of 8-byte alignment, which
/// the kernels move as one 16-byte vector when both buffers are 16-byte aligned (policy
/// element_vectors), element by element otherwise.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Affine64 {
    pub a: u64,
    pub b: u64,
}

// SAFETY: repr(C) struct of two u64, as declared; every bit pattern is valid.
unsafe impl ScanElement for Affine64 {
    fn element_type() -> ElementType {
        uniform_struct("Affine64", PrimType::U64, &["a", "b"])
    }
}

// SAFETY: plain old data, passed by value as its bytes.
unsafe impl DeviceRepr for Affine64 {}

/// Composition in sequence order (`l` applied first, then `r`): associative, not commutative,
/// exact.
pub struct Compose64;

impl ScanOp for Compose64 {
    type Elem = Affine64;
    fn identity() -> Affine64 {
        Affine64 { a: 1, b: 0 }
    }
    fn combine(l: Affine64, r: Affine64) -> Affine64 {
        Affine64 {
            a: l.a.wrapping_mul(r.a),
            b: l.b.wrapping_mul(r.a).wrapping_add(r.b),
        }
    }
    fn device_op() -> OpSpec {
        OpSpec {
            name: "compose64".into(),
            element: Affine64::element_type(),
            lhs: "l".into(),
            rhs: "r".into(),
            combine_body: "Affine64 p; p.a = l.a * r.a; p.b = l.b * r.a + r.b; return p;".into(),
            identity_body: "Affine64 p; p.a = 1ull; p.b = 0ull; return p;".into(),
            word_form: None,
        }
    }
}

impl TestValue for Affine64 {
    const INTEGER: bool = true;
    fn random(rng: &mut Rng, _op: BuiltinOp) -> Self {
        Affine64 {
            a: rng.next() | 1,
            b: rng.next(),
        }
    }
}

/// The affine map x -> a*x + b on bytes, wrapping: a 2-byte element, packed two to a register
/// word by the kernels (layout::packs_items), so a byte out of place shows.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ByteAffine {
    pub a: u8,
    pub b: u8,
}

// SAFETY: repr(C) struct of two u8, as declared; every bit pattern is valid.
unsafe impl ScanElement for ByteAffine {
    fn element_type() -> ElementType {
        uniform_struct("ByteAffine", PrimType::U8, &["a", "b"])
    }
}

// SAFETY: plain old data, passed by value as its bytes.
unsafe impl DeviceRepr for ByteAffine {}

/// Composition of [`ByteAffine`] maps in sequence order, wrapping. Not commutative.
pub struct ComposeBytes;

impl ScanOp for ComposeBytes {
    type Elem = ByteAffine;
    fn identity() -> ByteAffine {
        ByteAffine { a: 1, b: 0 }
    }
    fn combine(f: ByteAffine, g: ByteAffine) -> ByteAffine {
        ByteAffine {
            a: g.a.wrapping_mul(f.a),
            b: g.a.wrapping_mul(f.b).wrapping_add(g.b),
        }
    }
    fn device_op() -> OpSpec {
        OpSpec {
            name: "compose_bytes".into(),
            element: ByteAffine::element_type(),
            lhs: "f".into(),
            rhs: "g".into(),
            combine_body:
                "ByteAffine r; r.a = (u8)(g.a * f.a); r.b = (u8)(g.a * f.b + g.b); return r;".into(),
            identity_body: "ByteAffine r; r.a = 1; r.b = 0; return r;".into(),
            word_form: None,
        }
    }
}

impl TestValue for ByteAffine {
    const INTEGER: bool = true;
    /// Odd multipliers (invertible mod 256, so a prefix never collapses to a constant) and any
    /// offset.
    fn random(rng: &mut Rng, _op: BuiltinOp) -> Self {
        let r = rng.next();
        ByteAffine {
            a: (r as u8) | 1,
            b: (r >> 8) as u8,
        }
    }
}
