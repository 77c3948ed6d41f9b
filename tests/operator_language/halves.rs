//! Operators on `f16` and `bf16` (`half`), for the CPU evaluator's differential test
//! (tests/evaluator_agrees.rs): compiled here by the macros, and read from this file as text
//! by the evaluator. Each comes with a generator of random elements that mixes edge values
//! (NaNs with payloads, infinities, signed zeros, subnormals, `MAX`) with random bit patterns
//! and small values.

#![allow(dead_code)]

use rand::rngs::StdRng;
use rand::Rng;
use scangen::half::{bf16, f16};
use scangen::scan_op;

/// 2-byte float edge values, as bits: zeros, ones, NaNs (quiet, signalling, with payloads,
/// negative), infinities, the smallest and largest subnormals and normals, `MAX`, `MIN`.
const F16_EDGES: [u16; 16] = [
    0x0000, 0x8000, 0x3c00, 0xbc00, 0x7e00, 0x7c01, 0xfe3f, 0x7c00, 0xfc00, 0x0001, 0x83ff, 0x0400,
    0x7bff, 0xfbff, 0x3555, 0x7bfe,
];
const BF16_EDGES: [u16; 16] = [
    0x0000, 0x8000, 0x3f80, 0xbf80, 0x7fc0, 0x7f81, 0xffc1, 0x7f80, 0xff80, 0x0001, 0x807f, 0x0080,
    0x7f7f, 0xff7f, 0x3eab, 0x7f7e,
];

/// Bits of a 2-byte float: an edge value, any bit pattern, or a small value (sums of small
/// values stay finite, so the arithmetic paths that round are exercised too).
fn half_bits(rng: &mut StdRng, edges: &[u16; 16], small: fn(f32) -> u16) -> u16 {
    match rng.gen_range(0..4) {
        0 => edges[rng.gen_range(0..edges.len())],
        1 => rng.gen(),
        2 => small(rng.gen_range(-8.0f32..8.0)),
        _ => small(rng.gen_range(-1e-3f32..1e-3)),
    }
}

pub fn f16_sample(rng: &mut StdRng) -> f16 {
    f16::from_bits(half_bits(rng, &F16_EDGES, |x| f16::from_f32(x).to_bits()))
}

pub fn bf16_sample(rng: &mut StdRng) -> bf16 {
    bf16::from_bits(half_bits(rng, &BF16_EDGES, |x| bf16::from_f32(x).to_bits()))
}

/// A struct of `f16` and `bf16` fields (and an array of them): sums in the element type and
/// in `f32`, `max`/`min`/`clamp` with NaNs, every operator and compound assignment,
/// comparisons, `is_*` checks, conversions, bits, constants, helpers with `f16` parameters
/// and a `const` of `bf16`.
#[scan_op]
pub mod stats {
    use scangen::half::{bf16, f16};
    use scangen::{ScanElement, ScanOp};

    const CAP: bf16 = bf16::MAX;

    #[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
    #[repr(C)]
    pub struct Stats {
        pub sum: f16,
        pub hi: f16,
        pub lo: bf16,
        pub bsum: bf16,
        pub wide: f32,
        pub pair: [bf16; 2],
        pub mix: f16,
        pub bits: u16,
        pub flags: u8,
    }

    fn larger(a: f16, b: f16) -> f16 {
        if a > b {
            a
        } else {
            b
        }
    }

    fn flags(x: f16, y: bf16) -> u8 {
        let mut f = 0u8;
        if x.is_nan() {
            f |= 1;
        }
        if x.is_infinite() {
            f |= 2;
        }
        if !y.is_finite() {
            f |= 4;
        }
        if y.is_sign_negative() {
            f |= 8;
        }
        if x.is_sign_positive() {
            f |= 16;
        }
        if x == f16::NEG_ZERO {
            f |= 32;
        }
        if y <= bf16::MIN_POSITIVE && y >= -bf16::MIN_POSITIVE {
            f |= 64;
        }
        if x != -x {
            f |= 128;
        }
        f
    }

    pub struct HalfStats;

    impl ScanOp for HalfStats {
        type Elem = Stats;
        fn identity() -> Stats {
            Stats {
                sum: f16::ZERO,
                hi: f16::NEG_INFINITY,
                lo: bf16::INFINITY,
                bsum: bf16::NEG_ZERO,
                wide: 0.0,
                pair: [bf16::ONE, bf16::NEG_ONE],
                mix: f16::from_bits(0x3c00),
                bits: 0,
                flags: 0,
            }
        }
        fn combine(l: Stats, r: Stats) -> Stats {
            let mut bsum = l.bsum;
            bsum += r.bsum;
            let mut pair = l.pair;
            pair[0] *= r.pair[0];
            pair[1] -= r.pair[1];
            let q = l.mix / r.mix;
            let mut m = q % f16::PI;
            m -= -l.mix * f16::E;
            if m.is_nan() || r.wide.is_infinite() {
                m = f16::from_f32(r.wide);
            }
            let lo = l.lo.min(r.lo).clamp(-CAP, bf16::from_f32(1000.0));
            let halfway = f16::from_f32(l.sum.to_f32() * 0.5 + (r.sum.to_f64() as f32));
            let wide = l.wide + r.sum.to_f32() + r.lo.to_f32() * 0.25;
            Stats {
                sum: l.sum + r.sum,
                hi: l.hi.max(r.hi),
                lo: if lo < l.lo { lo } else { bf16::min(lo, r.lo) },
                bsum,
                wide,
                pair: [pair[0], pair[1].max(bf16::NEG_INFINITY)],
                mix: larger(m, halfway).clamp(f16::MIN, f16::MAX_SUBNORMAL + f16::EPSILON),
                bits: (l.bits ^ r.hi.to_bits()).wrapping_add(f16::from_bits(r.bits).to_bits() >> 3)
                    ^ bf16::from_f32(f16::MIN_POSITIVE_SUBNORMAL.to_f32()).to_bits(),
                flags: flags(r.sum - l.sum, r.bsum * bf16::LN_2) ^ l.flags,
            }
        }
    }

    pub fn sample(rng: &mut super::StdRng) -> Stats {
        use super::{bf16_sample, f16_sample, Rng};
        Stats {
            sum: f16_sample(rng),
            hi: f16_sample(rng),
            lo: bf16_sample(rng),
            bsum: bf16_sample(rng),
            wide: match rng.gen_range(0..3) {
                0 => f32::from_bits(rng.gen()),
                _ => rng.gen_range(-1e4..1e4),
            },
            pair: [bf16_sample(rng), bf16_sample(rng)],
            mix: f16_sample(rng),
            bits: rng.gen(),
            flags: rng.gen(),
        }
    }
}

/// A plain `f16` element: the sum, rounding after every combine.
#[scan_op]
pub mod sum16 {
    use scangen::half::f16;
    use scangen::ScanOp;

    pub struct Sum16;

    impl ScanOp for Sum16 {
        type Elem = f16;
        fn identity() -> f16 {
            f16::NEG_ZERO
        }
        fn combine(a: f16, b: f16) -> f16 {
            a + b
        }
    }
}

/// A plain `bf16` element: the larger, and a NaN never wins (`max` ignores it).
#[scan_op]
pub mod max_bf16 {
    use scangen::half::bf16;
    use scangen::ScanOp;

    pub struct MaxB;

    impl ScanOp for MaxB {
        type Elem = bf16;
        fn identity() -> bf16 {
            bf16::NEG_INFINITY
        }
        fn combine(a: bf16, b: bf16) -> bf16 {
            scangen::half::bf16::max(a, b)
        }
    }
}
