//! `#[scan_op]` on a module: the operators in it see its `const`s, functions and inherent
//! methods, and use `match`, destructuring, tuples and loops.

use scangen::{scan_op, ElementType, ScanOp};


#[scan_op]
mod ops {
    use scangen::{ScanElement, ScanOp};

    /// Runs longer than this restart.
    const MAX_RUN: u32 = 1000;
    const STEPS: usize = 3;

    #[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
    #[repr(C)]
    pub struct Run {
        pub value: i64,
        pub len: u32,
        pub kind: u32,
    }

    impl Run {
        pub fn single(value: i64) -> Run {
            Run { value, len: 1, kind: 0 }
        }
        fn weight(self) -> i64 {
            self.value * Self::SCALE
        }
        const SCALE: i64 = 2;
    }

    /// Kind of a run by its length.
    fn classify(len: u32) -> u32 {
        match len {
            0 => 0,
            1 | 2 => 1,
            3..=9 => 2,
            n if n >= MAX_RUN => 4,
            _ => 3,
        }
    }

    fn split(v: i64) -> (i64, i64) {
        (v / 2, v % 2)
    }

    pub struct Runs;

    impl ScanOp for Runs {
        type Elem = Run;
        fn identity() -> Run {
            Run { value: 0, len: 0, kind: 0 }
        }
        fn combine(l: Run, r: Run) -> Run {
            let Run { value, len, .. } = l;
            let len = len.saturating_add(r.len);
            let (half, odd) = split(value.wrapping_add(r.value));
            let mut acc = half;
            for _ in 0..STEPS {
                acc = acc.wrapping_add(odd);
            }
            let mut k: i64 = 0;
            while k < 2 {
                k += 1;
            }
            Run {
                value: acc.wrapping_add(r.weight() - r.value * 2) + (k - 2),
                len,
                kind: classify(len),
            }
        }
    }
}

use ops::{Run, Runs};

fn main() {
    let a = Run::single(7);
    let b = Run { value: 4, len: 5, kind: 0 };
    // value: (7 + 4) / 2 = 5, + 3 * (11 % 2) = 8; len 6 is a kind-2 run.
    assert_eq!(Runs::combine(a, b), Run { value: 8, len: 6, kind: 2 });
    assert_eq!(Runs::combine(Runs::identity(), a), Run { value: 6, len: 1, kind: 1 });

    let op = Runs::device_op();
    assert!(matches!(op.element, ElementType::Struct(_)));
    // The helpers are static functions of a local struct in the lowered body.
    for helper in ["split(", "classify(", "Run_weight("] {
        assert!(
            op.combine_body.contains(&format!("scan_fns::{helper}")),
            "{helper}: {}",
            op.combine_body
        );
    }
    assert!(op.combine_body.starts_with("struct scan_fns {"));
}
