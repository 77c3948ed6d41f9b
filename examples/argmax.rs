//! Running argmax: the position of the largest value so far, ties going to the earliest
//! position, so the result is deterministic whatever order the GPU combines in.
//!
//! `cargo run --example argmax`

use rand::{rngs::StdRng, Rng, SeedableRng};
use scangen::runtime::{auto, ScanOptions};
use scangen::{scan_op, ScanElement, ScanOp};

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Candidate {
    pub value: f32,
    pub index: u32,
}

pub struct ArgMax;

#[scan_op]
impl ScanOp for ArgMax {
    type Elem = Candidate;
    fn identity() -> Candidate {
        Candidate {
            value: f32::NEG_INFINITY,
            index: u32::MAX,
        }
    }
    fn combine(l: Candidate, r: Candidate) -> Candidate {
        // Larger value wins; on a tie the smaller index wins. Comparing indices (not "keep the
        // left one") keeps the identity an identity even for -inf values.
        if r.value > l.value || (r.value == l.value && r.index < l.index) {
            r
        } else {
            l
        }
    }
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 1_500_007;
    let mut rng = StdRng::seed_from_u64(5);
    // Few distinct values, so ties are everywhere.
    let items: Vec<Candidate> = (0..n)
        .map(|i| Candidate {
            value: rng.gen_range(0..50) as f32,
            index: i as u32,
        })
        .collect();

    let mut scanner = auto::<ArgMax>(ScanOptions::default())?;
    println!("backend: {}", scanner.backend_name());
    let best = scanner.scan(&items)?;

    let (mut best_value, mut best_index) = (f32::NEG_INFINITY, u32::MAX);
    for (i, (it, got)) in items.iter().zip(&best).enumerate() {
        if it.value > best_value {
            (best_value, best_index) = (it.value, it.index);
        }
        assert_eq!(
            (got.value, got.index),
            (best_value, best_index),
            "argmax differs at {i}"
        );
    }
    println!("argmax over {n} values: {best_value} first seen at {best_index}, verified");
    Ok(())
}
