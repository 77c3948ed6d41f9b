//! The longest run of equal consecutive keys, as a scan: each element summarises a stretch
//! of the input (its first and last key, the runs at its two ends, its longest run), and
//! `combine` joins two stretches with a `match` and a helper function.
//!
//! `cargo run --example classify_runs`

use rand::{rngs::StdRng, Rng, SeedableRng};
use scangen::runtime::{auto, ScanOptions};
use scangen::scan_op;

#[scan_op]
pub mod ops {
    use scangen::{ScanElement, ScanOp};

    #[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
    #[repr(C)]
    pub struct Stretch {
        pub first: u32,
        pub last: u32,
        /// Length of the run of `first` at the start.
        pub head: u32,
        /// Length of the run of `last` at the end.
        pub tail: u32,
        pub len: u32,
        pub longest: u32,
    }

    impl Stretch {
        pub fn one(key: u32) -> Stretch {
            Stretch {
                first: key,
                last: key,
                head: 1,
                tail: 1,
                len: 1,
                longest: 1,
            }
        }
    }

    fn max3(a: u32, b: u32, c: u32) -> u32 {
        a.max(b).max(c)
    }

    pub struct Runs;

    impl ScanOp for Runs {
        type Elem = Stretch;
        fn identity() -> Stretch {
            Stretch {
                first: 0,
                last: 0,
                head: 0,
                tail: 0,
                len: 0,
                longest: 0,
            }
        }
        fn combine(l: Stretch, r: Stretch) -> Stretch {
            match (l.len, r.len) {
                (0, _) => r,
                (_, 0) => l,
                _ => {
                    let joined = l.last == r.first;
                    let (head, tail, across) = match joined {
                        true => (
                            if l.head == l.len {
                                l.len + r.head
                            } else {
                                l.head
                            },
                            if r.tail == r.len {
                                r.len + l.tail
                            } else {
                                r.tail
                            },
                            l.tail + r.head,
                        ),
                        false => (l.head, r.tail, 0),
                    };
                    Stretch {
                        first: l.first,
                        last: r.last,
                        head,
                        tail,
                        len: l.len + r.len,
                        longest: max3(l.longest, r.longest, across),
                    }
                }
            }
        }
    }
}

pub use ops::{Runs, Stretch};

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 1_000_033;
    let mut rng = StdRng::seed_from_u64(29);
    let mut key = 0u32;
    let keys: Vec<u32> = (0..n)
        .map(|_| {
            if rng.gen_ratio(1, 4) {
                key = rng.gen_range(0..5);
            }
            key
        })
        .collect();
    let items: Vec<Stretch> = keys.iter().map(|&k| Stretch::one(k)).collect();

    let mut scanner = auto::<Runs>(ScanOptions::default())?;
    println!("backend: {}", scanner.backend_name());
    let got = scanner.scan(&items)?;

    let (mut run, mut longest) = (0u32, 0u32);
    for i in 0..n {
        run = if i > 0 && keys[i] == keys[i - 1] {
            run + 1
        } else {
            1
        };
        longest = longest.max(run);
        assert_eq!(got[i].longest, longest, "longest run differs at {i}");
        assert_eq!(got[i].tail, run, "current run differs at {i}");
    }
    println!("longest run of equal keys among {n}: {longest}, every prefix verified");
    Ok(())
}
