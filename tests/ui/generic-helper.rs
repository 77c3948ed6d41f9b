use scangen::scan_op;

#[scan_op]
mod ops {
    use scangen::ScanOp;

    fn larger<T: PartialOrd>(a: T, b: T) -> T {
        if a < b {
            b
        } else {
            a
        }
    }

    pub struct Max;

    impl ScanOp for Max {
        type Elem = f32;
        fn identity() -> f32 {
            f32::NEG_INFINITY
        }
        fn combine(a: f32, b: f32) -> f32 {
            larger(a, b)
        }
    }
}

fn main() {}
