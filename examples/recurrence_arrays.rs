//! The linear recurrence `x[i] = a[i] * x[i-1] + b[i]` (x[-1] = 0) from two input arrays,
//! fused: `lift(a, b, index)` reads one value of each array (structure of arrays) into the
//! affine map `x -> a*x + b`, the scan composes the maps, and `project` writes `x[i]`, the
//! composed map applied to 0 (its `b`). Reads 8 bytes and writes 4 per position.
//!
//! `cargo run --release --example recurrence_arrays` (GPU when present, CPU backend otherwise)

use rand::{rngs::StdRng, Rng, SeedableRng};
use scangen::runtime::{auto_transform, ScanOptions};
use scangen::{scan_op, ScanElement, ScanOp};

/// `x -> a * x + b`.
#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Map {
    pub a: f64,
    pub b: f64,
}

pub struct Recurrence;

#[scan_op]
impl ScanOp for Recurrence {
    type Elem = Map;
    fn identity() -> Map {
        Map { a: 1.0, b: 0.0 }
    }
    /// `l` first, then `r`: x -> r.a * (l.a * x + l.b) + r.b.
    fn combine(l: Map, r: Map) -> Map {
        Map {
            a: r.a * l.a,
            b: r.a * l.b + r.b,
        }
    }
    fn lift(a: f32, b: f32, _index: u64) -> Map {
        Map {
            a: a as f64,
            b: b as f64,
        }
    }
    fn project(m: Map) -> f32 {
        m.b as f32
    }
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut rng = StdRng::seed_from_u64(17);
    let n = 1_000_003;
    // |a| < 1 keeps x bounded, so the f64 composition stays close to the loop.
    let a: Vec<f32> = (0..n).map(|_| rng.gen_range(-0.95f32..0.95)).collect();
    let b: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
    let mut scanner = auto_transform::<Recurrence>(ScanOptions::default())?;
    println!("backend: {}", scanner.backend_name());
    let x = scanner.transform_scan((a.as_slice(), b.as_slice()))?;
    let mut prev = 0f64;
    for i in 0..n {
        prev = a[i] as f64 * prev + b[i] as f64;
        let err = (x[i] as f64 - prev).abs();
        assert!(
            err <= 1e-4 * (1.0 + prev.abs()),
            "x[{i}] = {} vs {prev}",
            x[i]
        );
    }
    let total = scanner.transform_reduce((a.as_slice(), b.as_slice()), Recurrence::identity())?;
    println!(
        "{n} steps: x[n-1] = {} (the whole recurrence as one map: x -> {:.6} x + {:.6})",
        x[n - 1],
        total.a,
        total.b
    );
    Ok(())
}
