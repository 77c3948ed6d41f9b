use scangen::ScanElement;

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Pair {
    pub a: f32,
    pub b: usize,
    pub c: (f32, f32),
}

fn main() {}
