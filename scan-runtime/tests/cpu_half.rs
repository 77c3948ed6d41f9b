//! The CPU backend on `f16` and `bf16` (the `half` crate's arithmetic: each combine converts to
//! f32 and rounds back): the parallel (rayon, chunked, four chains per chunk) scan against the
//! sequential reference, at awkward sizes and sizes spanning several chunks. Runs without a GPU.
//!
//! Tolerance: none, by construction. Float addition is not associative, and in a 2-byte float
//! even short sums round; the add inputs are therefore `walk_steps` (every contiguous run sums
//! to a small integer, so no order rounds) and results must match bit for bit. Min and max are
//! exact in any order (inputs have no zeros, whose signs would make ties order-dependent; NaNs
//! are mixed in and must be ignored as Rust's `max`/`min` ignore them).

use scan_core::half::{bf16, f16};
use scan_runtime::builtin::{Add, Max, Min};
use scan_runtime::{cpu, ScanMode, ScanOp};

mod common;
use common::{first_mismatch, walk_steps, Rng, TestValue};
use scan_core::BuiltinOp;

const SIZES: [usize; 12] = [0, 1, 2, 31, 32, 33, 255, 256, 257, 997, 65_537, 300_007];

fn parallel_matches_sequential<Op: ScanOp>(input: &[Op::Elem], case: &str)
where
    Op::Elem: TestValue,
{
    for mode in ScanMode::ALL {
        let mut expected = vec![input.first().copied().unwrap_or_else(Op::identity); input.len()];
        cpu::scan_sequential::<Op>(input, &mut expected, mode);
        let mut got = expected.clone();
        cpu::scan_parallel::<Op>(input, &mut got, mode);
        if let Err(e) = first_mismatch(&expected, &got) {
            panic!("{case} {mode} n={}: {e}", input.len());
        }
    }
}

fn check_type<T: TestValue>(from_f32: fn(f32) -> T, nan: T)
where
    Add<T>: ScanOp<Elem = T>,
    Min<T>: ScanOp<Elem = T>,
    Max<T>: ScanOp<Elem = T>,
{
    let mut rng = Rng::new(std::any::type_name::<T>());
    for n in SIZES {
        let walk = walk_steps(&mut rng, n);
        let steps: Vec<T> = walk.iter().map(|&v| from_f32(v)).collect();
        parallel_matches_sequential::<Add<T>>(&steps, "add");
        // The inclusive sum is the walk itself, exactly (f32 holds these small integers).
        let mut sums = steps.clone();
        cpu::scan_sequential_in_place::<Add<T>>(&mut sums, ScanMode::Inclusive);
        let mut w = 0.0f32;
        for (i, step) in walk.iter().enumerate() {
            w += step;
            assert!(T::same(sums[i], from_f32(w)), "add n={n} index {i}");
        }

        let mut values: Vec<T> = (0..n)
            .map(|_| T::random(&mut rng, BuiltinOp::Max))
            .collect();
        for i in (0..n).step_by(97) {
            values[i] = nan;
        }
        parallel_matches_sequential::<Min<T>>(&values, "min");
        parallel_matches_sequential::<Max<T>>(&values, "max");
    }
}

#[test]
fn f16_parallel_scans_match_the_sequential_reference() {
    check_type::<f16>(f16::from_f32, f16::NAN);
}

#[test]
fn bf16_parallel_scans_match_the_sequential_reference() {
    check_type::<bf16>(bf16::from_f32, bf16::NAN);
}
