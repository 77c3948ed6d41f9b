//! Running maximum of a noisy signal, with an operator written in Rust.
//!
//! `cargo run --example running_max` (GPU when one is present, the CPU backend otherwise).

use rand::{rngs::StdRng, Rng, SeedableRng};
use scangen::runtime::{auto, ScanOptions};
use scangen::{scan_op, ScanOp};

pub struct RunningMax;

#[scan_op]
impl ScanOp for RunningMax {
    type Elem = f32;
    fn identity() -> f32 {
        f32::NEG_INFINITY
    }
    fn combine(a: f32, b: f32) -> f32 {
        a.max(b)
    }
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = (1 << 20) + 13;
    let mut rng = StdRng::seed_from_u64(1);
    // A random walk: the running maximum changes often early and rarely later.
    let mut level = 0.0f32;
    let signal: Vec<f32> = (0..n)
        .map(|_| {
            level += rng.gen_range(-1.0..1.0);
            level
        })
        .collect();

    let mut scanner = auto::<RunningMax>(ScanOptions::default())?;
    println!("backend: {}", scanner.backend_name());
    let peaks = scanner.scan(&signal)?;

    // max is exact in any order, so the check is bit-exact.
    let mut expected = f32::NEG_INFINITY;
    for (i, (&x, &got)) in signal.iter().zip(&peaks).enumerate() {
        expected = expected.max(x);
        assert_eq!(
            got.to_bits(),
            expected.to_bits(),
            "running max differs at {i}"
        );
    }
    println!(
        "running max of {n} samples: final peak {:.3}, verified",
        peaks[n - 1]
    );
    Ok(())
}
