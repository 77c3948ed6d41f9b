use scangen::{scan_op, ScanOp};

pub struct Lookup;

#[scan_op]
impl ScanOp for Lookup {
    type Elem = u32;
    fn identity() -> u32 {
        0
    }
    fn combine(a: u32, b: u32) -> u32 {
        let table = [1u32, 2, 4, 8];
        a ^ table[(b & 3) as usize] ^ table[b as usize]
    }
}

fn main() {}
