//! The struct operators the benchmarks time beside the built-ins, one per element size the
//! built-ins do not have (12, 16, 24 and 32 bytes), with the CUB baseline's equivalents in
//! bench/peers/cub_scan_sizes.cu. The CLI names them `vec3`, `vec4`, `affine64`, `vec3d` and
//! `mat2` (`affine`, the 8-byte one, lives in typed_ops).

use scangen::{scan_op, ScanElement, ScanOp};

/// Three f32 lanes (12 bytes: no vector access fits it).
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Vec3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

/// Lane-wise sum of [`Vec3`].
pub struct Vec3Add;

#[scan_op]
impl ScanOp for Vec3Add {
    type Elem = Vec3;
    fn identity() -> Vec3 {
        Vec3 {
            x: 0.0,
            y: 0.0,
            z: 0.0,
        }
    }
    fn combine(l: Vec3, r: Vec3) -> Vec3 {
        Vec3 {
            x: l.x + r.x,
            y: l.y + r.y,
            z: l.z + r.z,
        }
    }
}

/// Four f32 lanes (16 bytes).
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Vec4 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub w: f32,
}

/// Lane-wise sum of [`Vec4`].
pub struct Vec4Add;

#[scan_op]
impl ScanOp for Vec4Add {
    type Elem = Vec4;
    fn identity() -> Vec4 {
        Vec4 {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 0.0,
        }
    }
    fn combine(l: Vec4, r: Vec4) -> Vec4 {
        Vec4 {
            x: l.x + r.x,
            y: l.y + r.y,
            z: l.z + r.z,
            w: l.w + r.w,
        }
    }
}

/// The affine map x -> a*x + b in f64 (16 bytes).
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Affine64 {
    pub a: f64,
    pub b: f64,
}

/// Composition of [`Affine64`] maps, earlier map first (not commutative).
pub struct Affine64Compose;

#[scan_op]
impl ScanOp for Affine64Compose {
    type Elem = Affine64;
    fn identity() -> Affine64 {
        Affine64 { a: 1.0, b: 0.0 }
    }
    fn combine(l: Affine64, r: Affine64) -> Affine64 {
        Affine64 {
            a: l.a * r.a,
            b: r.a * l.b + r.b,
        }
    }
}

/// Three f64 lanes (24 bytes).
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Vec3d {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

/// Lane-wise sum of [`Vec3d`].
pub struct Vec3dAdd;

#[scan_op]
impl ScanOp for Vec3dAdd {
    type Elem = Vec3d;
    fn identity() -> Vec3d {
        Vec3d {
            x: 0.0,
            y: 0.0,
            z: 0.0,
        }
    }
    fn combine(l: Vec3d, r: Vec3d) -> Vec3d {
        Vec3d {
            x: l.x + r.x,
            y: l.y + r.y,
            z: l.z + r.z,
        }
    }
}

/// A 2x2 matrix of u64, row-major (32 bytes).
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Mat2 {
    pub a: u64,
    pub b: u64,
    pub c: u64,
    pub d: u64,
}

/// Wrapping matrix product, earlier matrix on the left (not commutative).
pub struct Mat2Mul;

#[scan_op]
impl ScanOp for Mat2Mul {
    type Elem = Mat2;
    fn identity() -> Mat2 {
        Mat2 {
            a: 1,
            b: 0,
            c: 0,
            d: 1,
        }
    }
    fn combine(l: Mat2, r: Mat2) -> Mat2 {
        Mat2 {
            a: l.a.wrapping_mul(r.a).wrapping_add(l.b.wrapping_mul(r.c)),
            b: l.a.wrapping_mul(r.b).wrapping_add(l.b.wrapping_mul(r.d)),
            c: l.c.wrapping_mul(r.a).wrapping_add(l.d.wrapping_mul(r.c)),
            d: l.c.wrapping_mul(r.b).wrapping_add(l.d.wrapping_mul(r.d)),
        }
    }
}

/// The struct operators by CLI name, with the label of their element type.
pub const STRUCT_OPS: [(&str, &str); 6] = [
    ("affine", "f32x2"),
    ("vec3", "f32x3"),
    ("vec4", "f32x4"),
    ("affine64", "f64x2"),
    ("vec3d", "f64x3"),
    ("mat2", "u64x4"),
];

/// The element-type label of struct operator `op`, `None` for a built-in.
pub fn struct_op_type(op: &str) -> Option<&'static str> {
    STRUCT_OPS
        .iter()
        .find(|(name, _)| *name == op)
        .map(|(_, ty)| *ty)
}

/// The (operator, type) pairs of `ops` x `types`, in order: a struct operator appears once, with
/// its own type; a built-in once per type.
pub fn op_type_pairs(ops: &[String], types: &[String]) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    for op in ops {
        match struct_op_type(op) {
            Some(ty) => pairs.push((op.clone(), ty.to_string())),
            None => pairs.extend(types.iter().map(|ty| (op.clone(), ty.clone()))),
        }
    }
    pairs
}
