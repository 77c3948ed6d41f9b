use scangen::{scan_op, ScanOp};

pub struct Weighted;

#[scan_op]
impl ScanOp for Weighted {
    type Elem = u32;
    fn identity() -> u32 {
        0
    }
    fn combine(a: u32, b: u32) -> u32 {
        let weights = [1u32, 2, 3];
        let mut s = a;
        for i in 0..4 {
            s = s.wrapping_add(weights[i].wrapping_mul(b));
        }
        s
    }
}

fn main() {}
