use scangen::{scan_op, ScanOp};

pub struct Sum;

#[scan_op]
impl ScanOp for Sum {
    type Elem = u64;
    fn identity() -> u64 {
        0
    }
    fn combine(l: u64, r: u64) -> u64 {
        l.wrapping_add(r)
    }
    // Lowered like combine: the same span errors for what CUDA cannot do.
    fn lift(x: u32, index: u64) -> u64 {
        let v = vec![x as u64, index];
        v[0]
    }
}

fn main() {}
