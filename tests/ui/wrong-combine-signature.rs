use scangen::{scan_op, ScanOp};

pub struct Sum;

#[scan_op]
impl ScanOp for Sum {
    type Elem = i32;
    fn identity() -> i32 {
        0
    }
    fn combine(a: &i32, b: i32, c: i32) -> i32 {
        *a + b + c
    }
}

fn main() {}
