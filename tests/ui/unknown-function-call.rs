use scangen::{scan_op, ScanOp};

fn hypot(a: f32, b: f32) -> f32 {
    (a * a + b * b).sqrt()
}

pub struct Norm;

#[scan_op]
impl ScanOp for Norm {
    type Elem = f32;
    fn identity() -> f32 {
        0.0
    }
    fn combine(a: f32, b: f32) -> f32 {
        hypot(a, b)
    }
}

fn main() {}
