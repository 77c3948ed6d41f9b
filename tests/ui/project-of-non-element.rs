use scangen::{scan_op, ScanElement, ScanOp};

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Kad {
    pub best: i64,
    pub total: i64,
}

pub struct Kadane;

#[scan_op]
impl ScanOp for Kadane {
    type Elem = Kad;
    fn identity() -> Kad {
        Kad { best: i64::MIN / 2, total: 0 }
    }
    fn combine(l: Kad, r: Kad) -> Kad {
        Kad { best: l.best.max(r.best), total: l.total + r.total }
    }
    // project takes the element, not an input value; and returns what an array can hold.
    fn project(x: i64) -> Option<i64> {
        Some(x)
    }
}

fn main() {}
