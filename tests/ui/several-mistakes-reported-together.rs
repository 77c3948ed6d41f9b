use scangen::{scan_op, ScanElement, ScanOp};

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Stats {
    pub sum: f64,
    pub n: u32,
}

pub struct Merge;

#[scan_op]
impl ScanOp for Merge {
    type Elem = Stats;
    fn identity() -> Stats {
        Stats { sum: 0.0, n: 0 }
    }
    fn combine(l: Stats, r: Stats) -> Stats {
        let scale = match Some(r.n) {
            Some(_) => 1.0,
            None => 0.5,
        };
        let total = [l.sum, r.sum];
        while let 2.0 = scale {}
        let f = |x: f64| x * scale;
        println!("{}", total[0]);
        Stats { sum: f(l.sum) + r.sum.hypot(1.0), n: l.n + r.n }
    }
}

fn main() {}
