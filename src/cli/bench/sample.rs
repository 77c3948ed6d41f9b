//! Benchmark inputs: cheap pseudo-random elements (never all zeros: zeros can run faster than
//! real data and hide unwritten outputs), and the dispatch from CLI names to operator types.

use crate::cli::struct_ops::{Affine64, Mat2, Vec3, Vec3d, Vec4};
use crate::cli::typed_ops::Affine;
use scangen::runtime::cudarc::driver::DeviceRepr;
use scangen::ScanElement;

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

impl Sample for scangen::half::f16 {
    fn sample(i: u64) -> Self {
        Self::from_f32(f32::sample(i))
    }
}

impl Sample for scangen::half::bf16 {
    fn sample(i: u64) -> Self {
        Self::from_f32(f32::sample(i))
    }
}

impl Sample for Affine {
    fn sample(i: u64) -> Affine {
        Affine {
            a: 1.0,
            b: (mix(i) % 7) as f32,
        }
    }
}

/// A float in [0, 1) from the index's hash, for the struct lanes.
fn unit(i: u64, lane: u64) -> f64 {
    (mix(i.wrapping_mul(4).wrapping_add(lane)) >> 11) as f64 / (1u64 << 53) as f64
}

impl Sample for Vec3 {
    fn sample(i: u64) -> Vec3 {
        Vec3 {
            x: unit(i, 0) as f32,
            y: unit(i, 1) as f32,
            z: unit(i, 2) as f32,
        }
    }
}

impl Sample for Vec4 {
    fn sample(i: u64) -> Vec4 {
        Vec4 {
            x: unit(i, 0) as f32,
            y: unit(i, 1) as f32,
            z: unit(i, 2) as f32,
            w: unit(i, 3) as f32,
        }
    }
}

impl Sample for Affine64 {
    fn sample(i: u64) -> Affine64 {
        // |a| < 1 keeps long compositions finite.
        Affine64 {
            a: 0.5 + unit(i, 0) / 2.0,
            b: unit(i, 1),
        }
    }
}

impl Sample for Vec3d {
    fn sample(i: u64) -> Vec3d {
        Vec3d {
            x: unit(i, 0),
            y: unit(i, 1),
            z: unit(i, 2),
        }
    }
}

impl Sample for Mat2 {
    fn sample(i: u64) -> Mat2 {
        let m = |lane| mix(i.wrapping_mul(4).wrapping_add(lane));
        Mat2 {
            a: m(0),
            b: m(1),
            c: m(2),
            d: m(3),
        }
    }
}
