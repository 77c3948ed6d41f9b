//! Fixed-size vectors and matrices as arrays: a running sum of `[f32; 4]` vectors and a
//! running product of 3x3 matrices (`[[f32; 3]; 3]`), both written with `for` loops over
//! constant ranges and indexed by the loop variables.
//!
//! The matrices are signed permutations, so every product is exact and the GPU's result can
//! be compared bit for bit with a sequential product.
//!
//! `cargo run --example vector_ops`

use rand::{rngs::StdRng, seq::SliceRandom, Rng, SeedableRng};
use scangen::runtime::{auto, ScanOptions};
use scangen::scan_op;

// A lowered operator has no iterators: its loops index arrays by the loop variable.
#[allow(clippy::needless_range_loop)]
#[scan_op]
pub mod ops {
    use scangen::{ScanElement, ScanOp};

    pub const N: usize = 3;

    #[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
    #[repr(C)]
    pub struct Vec4 {
        pub v: [f32; 4],
    }

    pub struct Vec4Sum;

    impl ScanOp for Vec4Sum {
        type Elem = Vec4;
        fn identity() -> Vec4 {
            Vec4 { v: [0.0; 4] }
        }
        fn combine(a: Vec4, b: Vec4) -> Vec4 {
            let mut v = a.v;
            for i in 0..4 {
                v[i] += b.v[i];
            }
            Vec4 { v }
        }
    }

    #[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
    #[repr(C)]
    pub struct Mat3 {
        pub m: [[f32; N]; N],
    }

    pub struct Mat3Product;

    impl ScanOp for Mat3Product {
        type Elem = Mat3;
        fn identity() -> Mat3 {
            let mut m = [[0.0; N]; N];
            for i in 0..N {
                m[i][i] = 1.0;
            }
            Mat3 { m }
        }
        /// `a` then `b`: the product `b * a` (apply the earlier transform first).
        fn combine(a: Mat3, b: Mat3) -> Mat3 {
            let mut m = [[0.0; N]; N];
            for i in 0..N {
                for j in 0..N {
                    let mut s = 0.0;
                    for k in 0..N {
                        s += b.m[i][k] * a.m[k][j];
                    }
                    m[i][j] = s;
                }
            }
            Mat3 { m }
        }
    }
}

pub use ops::{Mat3, Mat3Product, Vec4, Vec4Sum, N};

/// A random signed permutation matrix: one ±1 per row and column.
fn signed_permutation(rng: &mut StdRng) -> Mat3 {
    let mut cols = [0, 1, 2];
    cols.shuffle(rng);
    let mut m = [[0.0; N]; N];
    for (row, &col) in cols.iter().enumerate() {
        m[row][col] = if rng.gen() { 1.0 } else { -1.0 };
    }
    Mat3 { m }
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut rng = StdRng::seed_from_u64(23);

    let n = 500_009;
    let vectors: Vec<Vec4> = (0..n)
        .map(|_| Vec4 {
            v: [(); 4].map(|_| rng.gen_range(-8i32..8) as f32),
        })
        .collect();
    let mut sums = auto::<Vec4Sum>(ScanOptions::default())?;
    println!("backend: {}", sums.backend_name());
    let got = sums.scan(&vectors)?;
    let mut acc = [0.0f32; 4];
    for (i, (x, g)) in vectors.iter().zip(&got).enumerate() {
        for (a, v) in acc.iter_mut().zip(x.v) {
            *a += v;
        }
        // Small integers: every partial sum is exact, in any order.
        assert_eq!(g.v, acc, "vector sum differs at {i}");
    }
    println!("{n} prefix sums of [f32; 4] vectors verified");

    let n = 300_007;
    let matrices: Vec<Mat3> = (0..n).map(|_| signed_permutation(&mut rng)).collect();
    let mut products = auto::<Mat3Product>(ScanOptions::default())?;
    let got = products.scan(&matrices)?;
    let mut acc = Mat3Product::identity_matrix();
    for (i, (x, g)) in matrices.iter().zip(&got).enumerate() {
        acc = <Mat3Product as scangen::ScanOp>::combine(acc, *x);
        assert_eq!(*g, acc, "matrix product differs at {i}");
    }
    println!("{n} prefix products of 3x3 matrices verified");
    Ok(())
}

impl Mat3Product {
    fn identity_matrix() -> Mat3 {
        <Mat3Product as scangen::ScanOp>::identity()
    }
}
