//! Evaluates every prefix of a polynomial at once: p_k(x) = c_0 + c_1 x + ... + c_k x^k for all
//! k, with one scan over (sum, power) pairs.
//!
//! `cargo run --example polynomial`

use rand::{rngs::StdRng, Rng, SeedableRng};
use scangen::runtime::{auto, ScanOptions};
use scangen::{scan_op, ScanElement, ScanOp};

/// A polynomial piece: `sum` evaluated at x, and `power` = x^(number of coefficients).
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Piece {
    pub sum: f64,
    pub power: f64,
}

pub struct Concat;

#[scan_op]
impl ScanOp for Concat {
    type Elem = Piece;
    fn identity() -> Piece {
        Piece {
            sum: 0.0,
            power: 1.0,
        }
    }
    /// The coefficients of `r` come after those of `l`, so they are shifted by `l.power`.
    fn combine(l: Piece, r: Piece) -> Piece {
        Piece {
            sum: l.power.mul_add(r.sum, l.sum),
            power: l.power * r.power,
        }
    }
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 100_003;
    let x = 0.9999f64;
    let mut rng = StdRng::seed_from_u64(7);
    let coefficients: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let pieces: Vec<Piece> = coefficients
        .iter()
        .map(|&c| Piece { sum: c, power: x })
        .collect();

    let mut scanner = auto::<Concat>(ScanOptions::default())?;
    println!("backend: {}", scanner.backend_name());
    let prefixes = scanner.scan(&pieces)?;

    // Reference: the sum term by term.
    let (mut p, mut xk, mut magnitude) = (0.0f64, 1.0f64, 0.0f64);
    for (k, (c, got)) in coefficients.iter().zip(&prefixes).enumerate() {
        p += c * xk;
        magnitude += (c * xk).abs();
        xk *= x;
        // Reassociated f64 sums: error bounded by a few ulps of the sum of magnitudes.
        assert!(
            (got.sum - p).abs() <= 1e-12 * magnitude.max(1.0),
            "p_{k}: {} vs {p}",
            got.sum
        );
    }
    println!(
        "p_{}({x}) = {:.6}; all {n} prefix polynomials verified",
        n - 1,
        p
    );
    Ok(())
}
