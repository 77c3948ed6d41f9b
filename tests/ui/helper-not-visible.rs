use scangen::{scan_op, ScanOp};

fn smooth(a: f32, b: f32) -> f32 {
    a * 0.25 + b * 0.75
}

pub struct Smooth;

// A lone `#[scan_op] impl` sees only itself: `smooth` must be declared inside `combine`, or
// the impl and `smooth` put in a `#[scan_op] mod`.
#[scan_op]
impl ScanOp for Smooth {
    type Elem = f32;
    fn identity() -> f32 {
        0.0
    }
    fn combine(a: f32, b: f32) -> f32 {
        smooth(a, b)
    }
}

fn main() {}
