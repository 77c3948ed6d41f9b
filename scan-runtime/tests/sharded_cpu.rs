//! Sharded scans with ranks as threads over the CPU backend (no GPU): the ranks' logic of the
//! multi-GPU scan (reduce, all-gather totals, fold the preceding ones in rank order, seeded scan)
//! against the CPU reference of the concatenated array, with a non-commutative struct operator,
//! uneven and empty shards, both modes; and the failure paths: a rank that fails before the
//! collective, a rank that vanishes, mismatched modes and element types: every rank returns a
//! typed error within the timeout.

use scan_runtime::builtin::Add;
use scan_runtime::sharded::{agree, ShardDescriptor};
use scan_runtime::{cpu, scan_sharded_cpu, ScanMode, ScanOp, ShardError, ThreadExchange};
use std::time::{Duration, Instant};

mod common;
use common::ops::{Compose, MatMul};
use common::{random_values, Rng, TestValue};

const MODES: [ScanMode; 2] = [ScanMode::Inclusive, ScanMode::Exclusive];

type RankResult<T> = Result<(Vec<T>, T), ShardError>;

/// Runs one sharded scan with `shards.len()` thread ranks; returns each rank's result or error.
fn run_ranks<Op: ScanOp>(
    shards: &[Vec<Op::Elem>],
    modes: &[ScanMode],
    timeout: Duration,
    fail_before: Option<usize>,
) -> Vec<RankResult<Op::Elem>> {
    let exchanges = ThreadExchange::group_with_timeout(shards.len(), timeout);
    std::thread::scope(|s| {
        let handles: Vec<_> = exchanges
            .into_iter()
            .zip(shards)
            .enumerate()
            .map(|(rank, (x, shard))| {
                let mode = modes[rank % modes.len()];
                s.spawn(move || {
                    let mut out = shard.clone();
                    if fail_before == Some(rank) {
                        // A rank that fails before the collective: an output of the wrong length.
                        out.push(Op::identity());
                    }
                    let total = scan_sharded_cpu::<Op, _>(&x, shard, &mut out, mode)?;
                    Ok((out, total))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank thread panicked"))
            .collect()
    })
}

fn check_case<Op: ScanOp>(shards: &[Vec<Op::Elem>], mode: ScanMode, what: &str)
where
    Op::Elem: TestValue,
{
    let whole: Vec<Op::Elem> = shards.concat();
    let mut expected = whole.clone();
    let expected_total =
        cpu::scan_sequential_with_init::<Op>(&whole, &mut expected, Op::identity(), mode);
    let results = run_ranks::<Op>(shards, &[mode], Duration::from_secs(30), None);
    let mut offset = 0;
    for (rank, result) in results.into_iter().enumerate() {
        let (got, total) =
            result.unwrap_or_else(|e| panic!("{what} {mode:?}: rank {rank} failed: {e}"));
        let want = &expected[offset..offset + shards[rank].len()];
        assert_eq!(got.len(), want.len(), "{what} {mode:?}: rank {rank} length");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                Op::Elem::same(*g, *w),
                "{what} {mode:?}: rank {rank}, element {i} (global {}): expected {w:?}, got {g:?}",
                offset + i
            );
        }
        assert!(
            Op::Elem::same(total, expected_total),
            "{what} {mode:?}: rank {rank} total: expected {expected_total:?}, got {total:?}"
        );
        offset += shards[rank].len();
    }
}

/// Shard lengths per case: uneven, empty first/middle/last, all empty, one rank, many ranks, and
/// long enough for the CPU's parallel paths (chunked reduce and scan).
fn layouts() -> Vec<Vec<usize>> {
    vec![
        vec![5, 3],
        vec![1000, 1, 77, 4096],
        vec![0, 10, 20],
        vec![10, 0, 20],
        vec![10, 20, 0],
        vec![0, 0],
        vec![33],
        vec![3, 1, 4, 1, 5, 9, 2, 6],
        vec![(1 << 17) + 3, 1 << 15, 0, 70_001],
    ]
}

#[test]
fn non_commutative_matrices_match_the_reference() {
    let mut rng = Rng::new("sharded matmul");
    for lens in layouts() {
        let shards: Vec<_> = lens.iter().map(|&n| random_values(&mut rng, n)).collect();
        for mode in MODES {
            check_case::<MatMul>(&shards, mode, &format!("matmul {lens:?}"));
        }
    }
}

#[test]
fn affine_composition_matches_the_reference() {
    let mut rng = Rng::new("sharded affine");
    for lens in layouts() {
        let shards: Vec<_> = lens.iter().map(|&n| random_values(&mut rng, n)).collect();
        for mode in MODES {
            check_case::<Compose>(&shards, mode, &format!("compose {lens:?}"));
        }
    }
}

#[test]
fn integer_sums_match_the_reference() {
    let mut rng = Rng::new("sharded add");
    for lens in layouts() {
        let shards: Vec<Vec<i64>> = lens.iter().map(|&n| random_values(&mut rng, n)).collect();
        for mode in MODES {
            check_case::<Add<i64>>(&shards, mode, &format!("add i64 {lens:?}"));
        }
    }
}

#[test]
fn rank_order_matters_for_a_non_commutative_op() {
    // Folding the totals in any other order than rank order gives a different answer: make sure
    // the data would expose it (rank 1's prefix is rank 0's total, not the other way round).
    let mut rng = Rng::new("order");
    let shards: Vec<Vec<common::ops::Mat2>> =
        vec![random_values(&mut rng, 4), random_values(&mut rng, 4)];
    let a = shards[0]
        .iter()
        .fold(MatMul::identity(), |acc, &x| MatMul::combine(acc, x));
    let b = shards[1]
        .iter()
        .fold(MatMul::identity(), |acc, &x| MatMul::combine(acc, x));
    assert_ne!(MatMul::combine(a, b), MatMul::combine(b, a));
    check_case::<MatMul>(&shards, ScanMode::Inclusive, "order");
}

#[test]
fn a_rank_failing_before_the_collective_fails_every_rank_in_bounded_time() {
    let mut rng = Rng::new("fail");
    let shards: Vec<Vec<i64>> = [100, 200, 300, 50]
        .iter()
        .map(|&n| random_values(&mut rng, n))
        .collect();
    // The timeout is long: the others must learn of the failure from the abort, not by waiting.
    let start = Instant::now();
    let results = run_ranks::<Add<i64>>(
        &shards,
        &[ScanMode::Inclusive],
        Duration::from_secs(20),
        Some(2),
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "ranks took {:?}",
        start.elapsed()
    );
    for (rank, result) in results.into_iter().enumerate() {
        match (rank, result) {
            (2, Err(ShardError::Scan(scan_runtime::ScanError::LengthMismatch { .. }))) => {}
            (2, other) => panic!("rank 2 should fail with its own error, got {other:?}"),
            (_, Err(ShardError::PeerFailed { rank: 2, reason })) => {
                assert!(reason.contains("length mismatch"), "{reason}")
            }
            (r, other) => panic!("rank {r} should report rank 2's failure, got {other:?}"),
        }
    }
}

#[test]
fn a_rank_that_never_arrives_times_out_every_other_rank() {
    // Rank 1 exists but never calls the collective (and is not dropped until the end): the others
    // give up after the timeout with a Timeout naming it, not a hang.
    let mut exchanges = ThreadExchange::group_with_timeout(3, Duration::from_millis(300));
    let silent = exchanges.remove(1);
    let start = Instant::now();
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = exchanges
            .into_iter()
            .map(|x| {
                s.spawn(move || {
                    let input = vec![1i64; 10];
                    let mut out = vec![0; 10];
                    scan_sharded_cpu::<Add<i64>, _>(&x, &input, &mut out, ScanMode::Inclusive)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    drop(silent);
    assert!(start.elapsed() < Duration::from_secs(5));
    let mut timeouts = 0;
    for result in results {
        match result {
            Err(ShardError::Timeout { missing, .. }) => {
                assert!(missing.contains(&1), "{missing:?}");
                timeouts += 1;
            }
            // The first to time out tells the other, which then fails at once.
            Err(ShardError::PeerFailed { reason, .. }) => assert!(reason.contains("timed out")),
            other => panic!("expected a timeout, got {other:?}"),
        }
    }
    assert!(timeouts >= 1);
}

#[test]
fn a_dropped_rank_is_a_failure_not_a_hang() {
    let mut exchanges = ThreadExchange::group_with_timeout(2, Duration::from_secs(20));
    let gone = exchanges.pop().unwrap();
    let x = exchanges.pop().unwrap();
    let start = Instant::now();
    let waiter = std::thread::spawn(move || {
        let input = vec![1i64; 3];
        let mut out = vec![0; 3];
        scan_sharded_cpu::<Add<i64>, _>(&x, &input, &mut out, ScanMode::Inclusive)
    });
    std::thread::sleep(Duration::from_millis(100));
    drop(gone);
    let result = waiter.join().unwrap();
    assert!(start.elapsed() < Duration::from_secs(10));
    match result {
        Err(ShardError::PeerFailed { rank: 1, reason }) => assert!(reason.contains("dropped")),
        other => panic!("expected rank 1's failure, got {other:?}"),
    }
}

#[test]
fn mismatched_modes_are_an_error_on_every_rank() {
    let shards: Vec<Vec<i64>> = vec![vec![1; 10], vec![2; 10], vec![3; 5]];
    let results = run_ranks::<Add<i64>>(
        &shards,
        &[ScanMode::Inclusive, ScanMode::Exclusive],
        Duration::from_secs(20),
        None,
    );
    for (rank, result) in results.into_iter().enumerate() {
        match result {
            Err(ShardError::Mismatch { what: "mode", .. }) => {}
            other => panic!("rank {rank}: expected a mode mismatch, got {other:?}"),
        }
    }
}

#[test]
fn mismatched_element_types_are_an_error_on_every_rank() {
    let exchanges = ThreadExchange::group_with_timeout(2, Duration::from_secs(20));
    let results: Vec<Result<(), ShardError>> = std::thread::scope(|s| {
        let handles: Vec<_> = exchanges
            .into_iter()
            .enumerate()
            .map(|(rank, x)| {
                s.spawn(move || {
                    if rank == 0 {
                        let mut out = vec![0i64; 4];
                        scan_sharded_cpu::<Add<i64>, _>(&x, &[1; 4], &mut out, ScanMode::Inclusive)
                            .map(|_| ())
                    } else {
                        let mut out = vec![0i32; 4];
                        scan_sharded_cpu::<Add<i32>, _>(&x, &[1; 4], &mut out, ScanMode::Inclusive)
                            .map(|_| ())
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (rank, result) in results.into_iter().enumerate() {
        match result {
            Err(ShardError::Mismatch {
                what: "element size",
                ..
            }) => {}
            other => panic!("rank {rank}: expected an element size mismatch, got {other:?}"),
        }
    }
}

#[test]
fn same_size_different_operators_disagree() {
    let exchanges = ThreadExchange::group_with_timeout(2, Duration::from_secs(20));
    let results: Vec<Result<(), ShardError>> = std::thread::scope(|s| {
        let handles: Vec<_> = exchanges
            .into_iter()
            .enumerate()
            .map(|(rank, x)| {
                s.spawn(move || {
                    let d = if rank == 0 {
                        ShardDescriptor::of::<Add<u64>>(ScanMode::Inclusive, 2)
                    } else {
                        ShardDescriptor::of::<scan_runtime::builtin::Max<u64>>(
                            ScanMode::Inclusive,
                            2,
                        )
                    };
                    agree(&x, d)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for result in results {
        assert!(
            matches!(result, Err(ShardError::Mismatch { what, .. }) if what.starts_with("operator")),
            "{result:?}"
        );
    }
}

#[test]
fn a_group_of_one_is_a_plain_scan() {
    let mut x = ThreadExchange::group(1);
    let x = x.pop().unwrap();
    let input: Vec<i64> = (1..=5).collect();
    let mut out = vec![0; 5];
    let total = scan_sharded_cpu::<Add<i64>, _>(&x, &input, &mut out, ScanMode::Exclusive).unwrap();
    assert_eq!(out, [0, 1, 3, 6, 10]);
    assert_eq!(total, 15);
}
