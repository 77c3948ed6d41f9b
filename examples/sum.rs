//! Prefix sums of 64-bit integers, inclusive and exclusive.
//!
//! `cargo run --example sum`

use rand::{rngs::StdRng, Rng, SeedableRng};
use scangen::runtime::{auto, ScanOptions};
use scangen::{scan_op, ScanOp};

pub struct Sum;

#[scan_op]
impl ScanOp for Sum {
    type Elem = i64;
    fn identity() -> i64 {
        0
    }
    fn combine(a: i64, b: i64) -> i64 {
        a.wrapping_add(b)
    }
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 3_000_017; // a prime: no tile divides it
    let mut rng = StdRng::seed_from_u64(2);
    let values: Vec<i64> = (0..n)
        .map(|_| rng.gen_range(-1_000_000..1_000_000))
        .collect();

    let mut inclusive = auto::<Sum>(ScanOptions::default())?;
    let mut exclusive = auto::<Sum>(ScanOptions::default().exclusive())?;
    println!("backend: {}", inclusive.backend_name());
    let inc = inclusive.scan(&values)?;
    let exc = exclusive.scan(&values)?;

    let mut running = 0i64;
    for i in 0..n {
        assert_eq!(exc[i], running, "exclusive sum differs at {i}");
        running += values[i];
        assert_eq!(inc[i], running, "inclusive sum differs at {i}");
    }
    println!(
        "sum of {n} integers = {}, inclusive and exclusive prefixes verified",
        inc[n - 1]
    );
    Ok(())
}
