use scangen::{scan_op, ScanElement, ScanOp};

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct MinAt {
    pub value: f32,
    pub index: u64,
}

pub struct ArgMin;

#[scan_op]
impl ScanOp for ArgMin {
    type Elem = MinAt;
    fn identity() -> MinAt {
        MinAt { value: f32::INFINITY, index: u64::MAX }
    }
    fn combine(l: MinAt, r: MinAt) -> MinAt {
        if r.value < l.value { r } else { l }
    }
    // The index must come last, as a u64; inputs are primitives or the element.
    fn lift(value: String, index: u32) -> MinAt {
        MinAt { value: 0.0, index: index as u64 }
    }
}

fn main() {}
