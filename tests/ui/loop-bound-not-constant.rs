use scangen::{scan_op, ScanOp};

pub struct Pow;

#[scan_op]
impl ScanOp for Pow {
    type Elem = u64;
    fn identity() -> u64 {
        1
    }
    fn combine(a: u64, b: u64) -> u64 {
        let mut acc = a;
        for _ in 0..b {
            acc = acc.wrapping_mul(a);
        }
        acc
    }
}

fn main() {}
