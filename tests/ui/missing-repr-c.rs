use scangen::ScanElement;

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
pub struct Pair {
    pub a: f32,
    pub b: f32,
}

fn main() {}
