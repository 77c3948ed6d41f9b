use scangen::{scan_op, ScanOp};

pub struct Sum;

#[scan_op]
impl ScanOp for Sum {
    type Elem = i32;
    fn identity() -> i32 {
        0
    }
    fn combine(a: i32, b: i32) -> i32 {
        let unit = "items";
        let _ = unit;
        a + b
    }
}

fn main() {}
