//! From CLI names to operator types: the built-ins by (op, type) name, plus `affine`, the
//! 8-byte user struct the benchmarks compare with CUB, and the struct ops of struct_ops.rs.

use scangen::{scan_op, ScanElement, ScanOp};

/// The affine map x -> a*x + b: the 8-byte user struct of the CUB comparison.
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Affine {
    pub a: f32,
    pub b: f32,
}

/// Composition of affine maps, earlier map first.
pub struct AffineCompose;

#[scan_op]
impl ScanOp for AffineCompose {
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

/// Calls `$body` with `$O` bound to the operator type named by (`$op`, `$ty`); `$none` when
/// the pair names no operator.
macro_rules! with_op {
    ($op:expr, $ty:expr, $O:ident => $body:expr, $none:expr) => {{
        #[allow(unused_imports)]
        use scangen::builtin::{Add, And, Max, Min, Mul, Or, Xor};
        #[allow(unused_imports)]
        use scangen::half::{bf16, f16};
        with_op!(@arms ($op, $ty) $O $body, $none;
            "add" => [i8 i16 i32 i64 u8 u16 u32 u64 f32 f64 f16 bf16] Add,
            "mul" => [i8 i16 i32 i64 u8 u16 u32 u64 f32 f64] Mul,
            "min" => [i8 i16 i32 i64 u8 u16 u32 u64 f32 f64 f16 bf16] Min,
            "max" => [i8 i16 i32 i64 u8 u16 u32 u64 f32 f64 f16 bf16] Max,
            "and" => [i8 i16 i32 i64 u8 u16 u32 u64] And,
            "or" => [i8 i16 i32 i64 u8 u16 u32 u64] Or,
            "xor" => [i8 i16 i32 i64 u8 u16 u32 u64] Xor)
    }};
    (@arms ($op:expr, $ty:expr) $O:ident $body:expr, $none:expr; $($name:literal => [$($t:ident)*] $T:ident),*) => {
        match ($op, $ty) {
            ("affine", _) => {
                type $O = $crate::cli::typed_ops::AffineCompose;
                $body
            }
            ("vec3", _) => {
                type $O = $crate::cli::struct_ops::Vec3Add;
                $body
            }
            ("vec4", _) => {
                type $O = $crate::cli::struct_ops::Vec4Add;
                $body
            }
            ("affine64", _) => {
                type $O = $crate::cli::struct_ops::Affine64Compose;
                $body
            }
            ("vec3d", _) => {
                type $O = $crate::cli::struct_ops::Vec3dAdd;
                $body
            }
            ("mat2", _) => {
                type $O = $crate::cli::struct_ops::Mat2Mul;
                $body
            }
            $($(($name, stringify!($t)) => {
                type $O = $T<$t>;
                $body
            })*)*
            _ => $none,
        }
    };
}
pub(crate) use with_op;
