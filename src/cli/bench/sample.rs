//! Benchmark inputs: cheap pseudo-random elements (never all zeros: zeros can run faster than
//! real data and hide unwritten outputs), and the dispatch from CLI names to operator types.

use scangen::runtime::cudarc::driver::DeviceRepr;
use scangen::{scan_op, ScanElement, ScanOp};

/// An element the benchmark can fill buffers with.
pub trait Sample: ScanElement + DeviceRepr {
    fn sample(i: u64) -> Self;
}

/// SplitMix64: a fast, well-mixed hash of the index.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

macro_rules! int_sample {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn sample(i: u64) -> $t {
                (mix(i) % 100) as $t
            }
        }
    )*};
}
int_sample!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Sample for f32 {
    fn sample(i: u64) -> f32 {
        (mix(i) >> 40) as f32 / (1u64 << 24) as f32
    }
}

impl Sample for f64 {
    fn sample(i: u64) -> f64 {
        (mix(i) >> 11) as f64 / (1u64 << 53) as f64
    }
}

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
        Affine { a: l.a * r.a, b: r.a * l.b + r.b }
    }
}

impl Sample for Affine {
    fn sample(i: u64) -> Affine {
        Affine { a: 1.0, b: (mix(i) % 7) as f32 }
    }
}

/// Calls `$body` with `$O` bound to the operator type named by (`$op`, `$ty`); `$none` when
/// the pair names no operator.
macro_rules! with_op {
    ($op:expr, $ty:expr, $O:ident => $body:expr, $none:expr) => {{
        #[allow(unused_imports)]
        use scangen::builtin::{Add, And, Max, Min, Mul, Or, Xor};
        with_op!(@arms ($op, $ty) $O $body, $none;
            "add" => [i8 i16 i32 i64 u8 u16 u32 u64 f32 f64] Add,
            "mul" => [i8 i16 i32 i64 u8 u16 u32 u64 f32 f64] Mul,
            "min" => [i8 i16 i32 i64 u8 u16 u32 u64 f32 f64] Min,
            "max" => [i8 i16 i32 i64 u8 u16 u32 u64 f32 f64] Max,
            "and" => [i8 i16 i32 i64 u8 u16 u32 u64] And,
            "or" => [i8 i16 i32 i64 u8 u16 u32 u64] Or,
            "xor" => [i8 i16 i32 i64 u8 u16 u32 u64] Xor)
    }};
    (@arms ($op:expr, $ty:expr) $O:ident $body:expr, $none:expr; $($name:literal => [$($t:ident)*] $T:ident),*) => {
        match ($op, $ty) {
            ("affine", _) => {
                type $O = $crate::cli::bench::sample::AffineCompose;
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
