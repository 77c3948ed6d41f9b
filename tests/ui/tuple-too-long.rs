use scangen::{scan_op, ScanOp};

pub struct Spread;

#[scan_op]
impl ScanOp for Spread {
    type Elem = u64;
    fn identity() -> u64 {
        0
    }
    fn combine(a: u64, b: u64) -> u64 {
        let parts = (a, b, a ^ b, a & b, a | b, a.rotate_left(7), b.rotate_left(7));
        parts.0 ^ parts.6
    }
}

fn main() {}
