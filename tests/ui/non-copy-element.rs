use scangen::ScanElement;

#[derive(ScanElement, Clone, Debug, PartialEq)]
#[repr(C)]
pub struct Pair {
    pub a: f32,
    pub b: f32,
}

fn main() {}
