use scangen::{scan_op, ScanOp};

pub struct Sum;

#[scan_op]
impl ScanOp for Sum {
    type Elem = i64;
    fn identity() -> i64 {
        0
    }
    fn combine(l: i64, r: i64) -> i64 {
        l + r
    }
    // Without the index; and a lift must return the element.
    fn lift(x: i32) -> i32 {
        x
    }
}

fn main() {}
