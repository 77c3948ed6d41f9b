//! Running argmin, fused: the scan reads `f32` values only; `lift` pairs each with its index
//! (the kernel passes it, so no index array exists anywhere) and `project` writes the `u64`
//! index of the smallest value so far. Ties go to the earliest index.
//!
//! `cargo run --release --example running_argmin` (GPU when present, CPU backend otherwise)

use rand::{rngs::StdRng, Rng, SeedableRng};
use scangen::runtime::{auto_transform, ScanOptions};
use scangen::{scan_op, ScanElement, ScanOp};

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct MinAt {
    pub value: f32,
    pub index: u64,
}

pub struct ArgMin;

#[scan_op]
impl ScanOp for ArgMin {
    type Elem = MinAt;
    fn identity() -> MinAt {
        MinAt {
            value: f32::INFINITY,
            index: u64::MAX,
        }
    }
    fn combine(l: MinAt, r: MinAt) -> MinAt {
        // Smaller value wins; on a tie the smaller index (so +inf samples still beat the identity).
        if r.value < l.value || (r.value == l.value && r.index < l.index) {
            r
        } else {
            l
        }
    }
    fn lift(value: f32, index: u64) -> MinAt {
        MinAt { value, index }
    }
    fn project(m: MinAt) -> u64 {
        m.index
    }
}

fn reference(xs: &[f32]) -> Vec<u64> {
    let mut at = 0usize;
    xs.iter()
        .enumerate()
        .map(|(i, &x)| {
            if x < xs[at] {
                at = i;
            }
            at as u64
        })
        .collect()
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut rng = StdRng::seed_from_u64(16);
    // Few distinct values, so ties are common.
    let values: Vec<f32> = (0..1_000_003)
        .map(|_| rng.gen_range(-500..500) as f32 * 0.25)
        .collect();
    let mut scanner = auto_transform::<ArgMin>(ScanOptions::default())?;
    println!("backend: {}", scanner.backend_name());
    let at = scanner.transform_scan(values.as_slice())?;
    assert_eq!(at, reference(&values));
    let overall = scanner.transform_reduce(values.as_slice(), ArgMin::identity())?;
    assert_eq!(overall.index, *at.last().unwrap());
    println!(
        "{} values: minimum {} first at index {}",
        values.len(),
        overall.value,
        overall.index
    );
    Ok(())
}
