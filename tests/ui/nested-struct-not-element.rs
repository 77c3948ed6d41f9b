use scangen::ScanElement;

/// Not a ScanElement: no derive.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Point {
    pub x: f32,
    pub y: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Body {
    pub pos: Point,
    pub mass: f32,
}

fn main() {}
