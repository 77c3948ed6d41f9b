use scangen::{scan_op, ScanOp};

pub struct Sum128;

#[scan_op]
impl ScanOp for Sum128 {
    type Elem = u128;
    fn identity() -> u128 {
        0
    }
    fn combine(a: u128, b: u128) -> u128 {
        a.wrapping_add(b)
    }
}

fn main() {}
