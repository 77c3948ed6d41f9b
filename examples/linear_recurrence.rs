//! Solves the linear recurrence x[i] = a[i] * x[i-1] + b[i] with one scan: each step is the
//! affine map x -> a*x + b, and composing maps is associative (but not commutative).
//!
//! `cargo run --example linear_recurrence`

use rand::{rngs::StdRng, Rng, SeedableRng};
use scangen::runtime::{auto, ScanOptions};
use scangen::{scan_op, ScanElement, ScanOp};

/// The affine map x -> a*x + b.
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Affine {
    pub a: f32,
    pub b: f32,
}

/// Composition "first l, then r": x -> r.a * (l.a * x + l.b) + r.b.
pub struct Compose;

#[scan_op]
impl ScanOp for Compose {
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

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 1_000_003;
    let x0 = 2.0f32;
    let mut rng = StdRng::seed_from_u64(3);
    let steps: Vec<Affine> = (0..n)
        .map(|_| Affine {
            a: rng.gen_range(0.9..1.05),
            b: rng.gen_range(-1.0..1.0),
        })
        .collect();

    let mut scanner = auto::<Compose>(ScanOptions::default())?;
    println!("backend: {}", scanner.backend_name());
    let maps = scanner.scan(&steps)?;

    // Reference: the recurrence itself, sequentially, in f64.
    let mut x = x0 as f64;
    let mut worst = 0.0f64;
    for (i, (s, m)) in steps.iter().zip(&maps).enumerate() {
        x = s.a as f64 * x + s.b as f64;
        let got = m.a as f64 * x0 as f64 + m.b as f64;
        // f32 composition reassociates products and sums: allow a relative error that grows
        // slowly with i, measured against the magnitude of the terms.
        let err = (got - x).abs() / (1.0 + x.abs());
        worst = worst.max(err);
        assert!(err < 1e-3, "x[{i}]: scan gives {got}, recurrence gives {x}");
    }
    println!(
        "x[{}] = {:.4}; {n} steps verified (worst relative error {worst:.2e})",
        n - 1,
        x
    );
    Ok(())
}
