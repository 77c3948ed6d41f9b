//! Segmented sum: a prefix sum that restarts at every segment head, as one scan over
//! (value, head) pairs.
//!
//! `cargo run --example segmented_sum`

use rand::{rngs::StdRng, Rng, SeedableRng};
use scangen::runtime::{auto, ScanOptions};
use scangen::{scan_op, ScanElement, ScanOp};

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Seg {
    pub value: i64,
    /// 1 where a new segment starts.
    pub head: u32,
}

pub struct SegmentedSum;

#[scan_op]
impl ScanOp for SegmentedSum {
    type Elem = Seg;
    fn identity() -> Seg {
        Seg { value: 0, head: 0 }
    }
    fn combine(l: Seg, r: Seg) -> Seg {
        if r.head != 0 {
            r
        } else {
            Seg {
                value: l.value.wrapping_add(r.value),
                head: l.head,
            }
        }
    }
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 2_000_029;
    let mut rng = StdRng::seed_from_u64(4);
    let items: Vec<Seg> = (0..n)
        .map(|i| Seg {
            value: rng.gen_range(-500..500),
            head: u32::from(i == 0 || rng.gen_ratio(1, 300)),
        })
        .collect();

    let mut scanner = auto::<SegmentedSum>(ScanOptions::default())?;
    println!("backend: {}", scanner.backend_name());
    let sums = scanner.scan(&items)?;

    let mut running = 0i64;
    let mut segments = 0;
    for (i, (it, got)) in items.iter().zip(&sums).enumerate() {
        if it.head != 0 {
            running = 0;
            segments += 1;
        }
        running += it.value;
        assert_eq!(got.value, running, "segmented sum differs at {i}");
    }
    println!("{segments} segments over {n} elements, every segment's prefix sums verified");
    Ok(())
}
