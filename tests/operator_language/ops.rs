//! Operators written with the whole operator language (docs/operator-language.md), shared by
//! the host differential test (tests/operator_language.rs) and the GPU test
//! (tests/gpu_operator_language.rs). Each comes with a generator of random elements.

// Lowered code indexes arrays by `for` variables (it has no iterators) and tests remainders
// with `%` (`is_multiple_of` is not lowered).
#![allow(dead_code, clippy::needless_range_loop, clippy::manual_is_multiple_of)]

use rand::rngs::StdRng;
use rand::Rng;
use scangen::scan_op;

/// Helpers, `const`s, inherent methods, `match` with ranges, `|` and guards, tuples,
/// destructuring, shadowing, `for` and `while`.
#[scan_op]
pub mod runs {
    use scangen::{ScanElement, ScanOp};

    const MAX_RUN: u32 = 1000;
    const STEPS: usize = 3;

    #[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
    #[repr(C)]
    pub struct Run {
        pub value: i64,
        pub len: u32,
        pub kind: u32,
    }

    impl Run {
        fn weight(self) -> i64 {
            self.value.wrapping_mul(Self::SCALE)
        }
        const SCALE: i64 = 2;
    }

    fn classify(len: u32) -> u32 {
        match len {
            0 => 0,
            1 | 2 => 1,
            3..=9 => 2,
            n if n >= MAX_RUN => 4,
            _ => 3,
        }
    }

    fn split(v: i64) -> (i64, i64) {
        (v / 2, v % 2)
    }

    pub struct Runs;

    impl ScanOp for Runs {
        type Elem = Run;
        fn identity() -> Run {
            Run {
                value: 0,
                len: 0,
                kind: 0,
            }
        }
        fn combine(l: Run, r: Run) -> Run {
            let Run { value, len, .. } = l;
            let len = len.saturating_add(r.len);
            let (half, odd) = split(value.wrapping_add(r.value));
            let mut acc = half;
            for _ in 0..STEPS {
                acc = acc.wrapping_add(odd);
            }
            let mut k: i64 = 0;
            while k < 2 {
                k += 1;
            }
            // Bindings in `|` alternatives, and a guard reading them.
            let lead = match (l.len, r.len) {
                (n, 0) | (0, n) if n % 2 == 1 => n,
                (n, 1) | (1, n) => n / 2,
                _ => 0,
            };
            Run {
                value: acc
                    .wrapping_add(r.weight().wrapping_sub(r.value.wrapping_mul(2)))
                    .wrapping_add(k - 2),
                len,
                kind: classify(len) ^ lead,
            }
        }
    }

    pub fn sample(rng: &mut super::StdRng) -> Run {
        use super::Rng;
        Run {
            value: rng.gen(),
            len: match rng.gen_range(0..4) {
                0 => rng.gen_range(0..12),
                1 => rng.gen_range(990..1010),
                _ => rng.gen(),
            },
            kind: rng.gen(),
        }
    }
}

/// A forward fill on a `bool` validity flag, with `if let` on a struct pattern and `match` on
/// a `bool`.
#[scan_op]
pub mod fill {
    use scangen::{ScanElement, ScanOp};

    #[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
    #[repr(C)]
    pub struct Fill {
        pub value: f32,
        pub valid: bool,
        pub count: u16,
    }

    pub struct ForwardFill;

    impl ScanOp for ForwardFill {
        type Elem = Fill;
        fn identity() -> Fill {
            Fill {
                value: 0.0,
                valid: false,
                count: 0,
            }
        }
        fn combine(l: Fill, r: Fill) -> Fill {
            let count = l.count.wrapping_add(r.count);
            if let Fill { valid: true, .. } = r {
                return Fill { count, ..r };
            }
            match l.valid {
                true => Fill { count, ..l },
                false => Fill {
                    value: l.value,
                    valid: false,
                    count,
                },
            }
        }
    }

    pub fn sample(rng: &mut super::StdRng) -> Fill {
        use super::Rng;
        Fill {
            value: rng.gen_range(-1e6..1e6),
            valid: rng.gen(),
            count: rng.gen(),
        }
    }
}

/// Small integers that wrap, every compound assignment, shifts, `break`/`continue`, arrays
/// indexed by loop variables (plus constants), array patterns and negative range patterns.
#[scan_op]
pub mod mix {
    use scangen::{ScanElement, ScanOp};

    const LANES: usize = 4;

    #[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
    #[repr(C)]
    pub struct Mix {
        pub lanes: [u16; LANES],
        pub small: i8,
        pub bits: u8,
        pub acc: u32,
    }

    fn band(x: i8) -> u32 {
        match x {
            i8::MIN..=-100 => 1,
            -99..=-1 => 2,
            0 => 3,
            1..10 => 4,
            _ => 5,
        }
    }

    pub struct Mixer;

    impl ScanOp for Mixer {
        type Elem = Mix;
        fn identity() -> Mix {
            Mix {
                lanes: [0; LANES],
                small: 0,
                bits: 0,
                acc: 0,
            }
        }
        fn combine(l: Mix, r: Mix) -> Mix {
            let mut lanes = [0u16; LANES];
            for i in 0..LANES {
                let rotated = r.lanes[(i + 1) % LANES];
                lanes[i] = l.lanes[i].wrapping_add(rotated);
            }
            let [a, b, _, d] = lanes;
            let mut acc = l.acc;
            acc += r.acc;
            acc -= (a & 0xff) as u32;
            acc *= 3;
            acc ^= b as u32;
            acc |= 1;
            acc &= 0xffff_fff7;
            acc <<= r.bits % 3;
            acc >>= l.bits % 5;
            acc %= 1_000_003;
            let mut steps = 0u32;
            let mut i = 0u32;
            while i < 10 {
                i += 1;
                if i % 3 == 0 {
                    continue;
                }
                steps += i;
                if steps > 20 {
                    break;
                }
            }
            for i in (0..=8).rev().step_by(3) {
                steps = steps.wrapping_mul(3).wrapping_add(i);
            }
            let small = l.small.wrapping_add(r.small).wrapping_mul(3);
            let mut bits = l.bits ^ r.bits.rotate_left(3);
            bits /= 2;
            Mix {
                lanes,
                small,
                bits,
                acc: acc.wrapping_add(d as u32 + steps + band(small)),
            }
        }
    }

    pub fn sample(rng: &mut super::StdRng) -> Mix {
        use super::Rng;
        Mix {
            lanes: rng.gen(),
            small: rng.gen(),
            bits: rng.gen(),
            // Plain `+=`, `-=`, `*=` and `<<=` panic on overflow in a debug build: keep
            // them in range (`wrapping_*` elsewhere covers wrap-around).
            acc: rng.gen_range(1 << 20..1 << 24),
        }
    }
}

/// Nested structs with methods, arrays of `bool`s and an array pattern: a bounding box.
#[scan_op]
pub mod bounds {
    use scangen::{ScanElement, ScanOp};

    #[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
    #[repr(C)]
    pub struct P2 {
        pub x: f64,
        pub y: f64,
    }

    impl P2 {
        fn lower(self, o: P2) -> P2 {
            P2 {
                x: self.x.min(o.x),
                y: self.y.min(o.y),
            }
        }
        fn upper(self, o: P2) -> P2 {
            P2 {
                x: self.x.max(o.x),
                y: self.y.max(o.y),
            }
        }
    }

    #[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
    #[repr(C)]
    pub struct Bounds {
        pub lo: P2,
        pub hi: P2,
        pub n: u32,
        pub seen: [bool; 2],
    }

    pub struct Bound;

    impl ScanOp for Bound {
        type Elem = Bounds;
        fn identity() -> Bounds {
            Bounds {
                lo: P2 {
                    x: f64::INFINITY,
                    y: f64::INFINITY,
                },
                hi: P2 {
                    x: f64::NEG_INFINITY,
                    y: f64::NEG_INFINITY,
                },
                n: 0,
                seen: [false; 2],
            }
        }
        fn combine(a: Bounds, b: Bounds) -> Bounds {
            let [s0, s1] = a.seen;
            Bounds {
                lo: a.lo.lower(b.lo),
                hi: a.hi.upper(b.hi),
                n: a.n.wrapping_add(b.n),
                seen: [s0 || b.seen[0], s1 ^ b.seen[1]],
            }
        }
    }

    pub fn sample(rng: &mut super::StdRng) -> Bounds {
        use super::Rng;
        let p = |rng: &mut super::StdRng| P2 {
            x: rng.gen_range(-1e3..1e3),
            y: rng.gen_range(-1e3..1e3),
        };
        Bounds {
            lo: p(rng),
            hi: p(rng),
            n: rng.gen(),
            seen: [rng.gen(), rng.gen()],
        }
    }
}

/// A 3x3 matrix product through nested arrays and `for` loops (the identity built with a loop
/// too), on integers so that every bit must agree.
#[scan_op]
pub mod matrix {
    use scangen::{ScanElement, ScanOp};

    const N: usize = 3;

    #[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
    #[repr(C)]
    pub struct Mat3 {
        pub m: [[i32; N]; N],
    }

    pub struct MatMul;

    impl ScanOp for MatMul {
        type Elem = Mat3;
        fn identity() -> Mat3 {
            let mut m = [[0i32; N]; N];
            for i in 0..N {
                m[i][i] = 1;
            }
            Mat3 { m }
        }
        fn combine(a: Mat3, b: Mat3) -> Mat3 {
            let mut out = Mat3 { m: [[0; N]; N] };
            for i in 0..N {
                for j in 0..N {
                    let mut s = 0i32;
                    for k in 0..N {
                        s = s.wrapping_add(a.m[i][k].wrapping_mul(b.m[k][j]));
                    }
                    out.m[i][j] = s;
                }
            }
            out
        }
    }

    pub fn sample(rng: &mut super::StdRng) -> Mat3 {
        use super::Rng;
        let mut m = [[0i32; N]; N];
        for row in &mut m {
            for x in row.iter_mut() {
                *x = if rng.gen() {
                    rng.gen_range(-9..10)
                } else {
                    rng.gen()
                };
            }
        }
        Mat3 { m }
    }
}

/// A primitive element: a `const` inside `combine`, a nested helper `fn`, primitive
/// associated constants and `std::f64::consts`.
pub mod hash {
    use scangen::{scan_op, ScanOp};

    pub struct Hash;

    #[scan_op]
    impl ScanOp for Hash {
        type Elem = u64;
        fn identity() -> u64 {
            0
        }
        fn combine(a: u64, b: u64) -> u64 {
            const K: u64 = 0x9e37_79b9_7f4a_7c15;
            fn mix(x: u64) -> u64 {
                (x ^ (x >> (u64::BITS / 2))).wrapping_mul(K)
            }
            let pi = (std::f64::consts::PI * 1e6) as u64;
            mix(a).rotate_left(u8::BITS) ^ b ^ pi
        }
    }

    pub fn sample(rng: &mut super::StdRng) -> u64 {
        use super::Rng;
        rng.gen()
    }
}
