use scangen::ScanElement;

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Reading {
    pub value: Option<f32>,
}

fn main() {}
