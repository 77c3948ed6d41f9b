use scangen::{scan_op, ScanOp};

pub struct Clamp;

#[scan_op]
impl ScanOp for Clamp {
    type Elem = u8;
    fn identity() -> u8 {
        0
    }
    fn combine(a: u8, b: u8) -> u8 {
        match b.checked_add(a) {
            Some(sum) => sum,
            None => u8::MAX,
        }
    }
}

fn main() {}
