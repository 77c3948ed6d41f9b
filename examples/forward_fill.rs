//! Forward fill: each missing reading takes the last valid one before it. The validity is a
//! `bool` field, and the operator a `match` on it.
//!
//! `cargo run --example forward_fill`

use rand::{rngs::StdRng, Rng, SeedableRng};
use scangen::runtime::{auto, ScanOptions};
use scangen::{scan_op, ScanElement, ScanOp};

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Reading {
    pub value: f32,
    /// Whether the sensor produced `value` (a missing reading carries garbage).
    pub valid: bool,
}

pub struct FillForward;

#[scan_op]
impl ScanOp for FillForward {
    type Elem = Reading;
    fn identity() -> Reading {
        Reading {
            value: 0.0,
            valid: false,
        }
    }
    fn combine(earlier: Reading, later: Reading) -> Reading {
        match later.valid {
            true => later,
            false => earlier,
        }
    }
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 1_000_003;
    let mut rng = StdRng::seed_from_u64(19);
    let readings: Vec<Reading> = (0..n)
        .map(|_| Reading {
            value: rng.gen_range(-40.0..60.0),
            valid: rng.gen_ratio(3, 10),
        })
        .collect();

    let mut scanner = auto::<FillForward>(ScanOptions::default())?;
    println!("backend: {}", scanner.backend_name());
    let filled = scanner.scan(&readings)?;

    let mut last: Option<f32> = None;
    let mut missing = 0;
    for (i, (r, got)) in readings.iter().zip(&filled).enumerate() {
        if r.valid {
            last = Some(r.value);
        } else {
            missing += 1;
        }
        match last {
            Some(v) => assert!(got.valid && got.value == v, "fill differs at {i}"),
            None => assert!(!got.valid, "a value before the first reading at {i}"),
        }
    }
    println!("{missing} of {n} readings missing, every one filled with the last valid reading");
    Ok(())
}
