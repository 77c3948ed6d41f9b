//! Maximum subarray sum (Kadane) as a scan, fused: the scan reads raw `i64` samples, lifts
//! each into a 32-byte `{best, prefix, suffix, total}` element inside the kernel, and writes
//! only `best` (an `i64`) for every prefix: 8 bytes read and 8 written per sample, never the
//! 32-byte elements. The total of the lifted samples (a reduction) is the whole array's answer.
//!
//! `cargo run --release --example kadane` (GPU when present, CPU backend otherwise)

use rand::{rngs::StdRng, Rng, SeedableRng};
use scangen::runtime::{auto_transform, ScanOptions};
use scangen::{scan_op, ScanElement, ScanOp};

/// The best subarray sum, the best prefix sum, the best suffix sum and the total of a stretch.
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Kad {
    pub best: i64,
    pub prefix: i64,
    pub suffix: i64,
    pub total: i64,
}

pub struct Kadane;

#[scan_op]
impl ScanOp for Kadane {
    type Elem = Kad;
    fn identity() -> Kad {
        // Stands for "no subarray": low enough that no sum of samples reaches it, high enough
        // that adding two never overflows (the samples here stay far inside ±2^40).
        const NONE: i64 = i64::MIN / 2;
        Kad {
            best: NONE,
            prefix: NONE,
            suffix: NONE,
            total: 0,
        }
    }
    fn combine(l: Kad, r: Kad) -> Kad {
        Kad {
            best: l.best.max(r.best).max(l.suffix + r.prefix),
            prefix: l.prefix.max(l.total + r.prefix),
            suffix: r.suffix.max(l.suffix + r.total),
            total: l.total + r.total,
        }
    }
    /// One sample is a stretch of one: every sum is the sample.
    fn lift(x: i64, _index: u64) -> Kad {
        Kad {
            best: x,
            prefix: x,
            suffix: x,
            total: x,
        }
    }
    /// The answer for the prefix: its best subarray sum.
    fn project(e: Kad) -> i64 {
        e.best
    }
}

/// Kadane's loop: the best subarray sum of every prefix.
fn reference(xs: &[i64]) -> Vec<i64> {
    let (mut ending_here, mut best) = (0i64, i64::MIN);
    xs.iter()
        .enumerate()
        .map(|(i, &x)| {
            ending_here = if i == 0 { x } else { x.max(ending_here + x) };
            best = best.max(ending_here);
            best
        })
        .collect()
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut rng = StdRng::seed_from_u64(15);
    let samples: Vec<i64> = (0..1_000_003)
        .map(|_| rng.gen_range(-1000..=1000))
        .collect();
    let mut scanner = auto_transform::<Kadane>(ScanOptions::default())?;
    println!("backend: {}", scanner.backend_name());
    let best = scanner.transform_scan(samples.as_slice())?;
    assert_eq!(best, reference(&samples), "prefix maxima of subarray sums");
    let whole = scanner.transform_reduce(samples.as_slice(), Kadane::identity())?;
    assert_eq!(whole.best, *best.last().unwrap());
    println!(
        "{} samples: best subarray sum {} (prefix of 10: {})",
        samples.len(),
        whole.best,
        best[9]
    );
    Ok(())
}
