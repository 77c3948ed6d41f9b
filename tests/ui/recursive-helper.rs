use scangen::scan_op;

#[scan_op]
mod ops {
    use scangen::ScanOp;

    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }

    pub struct Gcd;

    impl ScanOp for Gcd {
        type Elem = u32;
        fn identity() -> u32 {
            0
        }
        fn combine(a: u32, b: u32) -> u32 {
            gcd(a, b)
        }
    }
}

fn main() {}
