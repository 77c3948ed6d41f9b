use scangen::{scan_op, ElementType, PrimType, ScanOp};

pub struct RunningMax;

#[scan_op]
impl ScanOp for RunningMax {
    type Elem = i64;
    fn identity() -> i64 {
        i64::MIN
    }
    fn combine(a: i64, b: i64) -> i64 {
        a.max(b)
    }
}

fn main() {
    assert_eq!(RunningMax::combine(-5, 7), 7);
    assert_eq!(RunningMax::combine(RunningMax::identity(), -5), -5);
    let op = RunningMax::device_op();
    assert_eq!(op.element, ElementType::Prim(PrimType::I64));
    assert_eq!(op.combine_body, "return rs_max(a, b);");
    assert_eq!(op.identity_body, "return rs_min_value<i64>();");
}
