//! Segment structures and the plain per-segment reference scan, shared by the GPU and CPU
//! variant tests.

use super::Rng;
use scan_runtime::{ScanMode, ScanOp};

/// Segment starts (positions, ascending, 0 first) of one of several structures.
pub fn starts(kind: usize, n: usize, tile: usize, rng: &mut Rng) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let mut s = vec![0usize];
    match kind % 6 {
        0 => {}              // one segment
        1 => s.extend(1..n), // every element its own segment
        2 => {
            // random lengths, mean about 40
            let mut p = 0;
            loop {
                p += 1 + rng.below(80) as usize;
                if p >= n {
                    break;
                }
                s.push(p);
            }
        }
        3 => {
            // at warp and tile edges and one off them
            for p in 1..n {
                if p % 32 == 0 || p % tile == 0 || p % tile == 1 || p % tile == tile - 1 {
                    s.push(p);
                }
            }
        }
        5 => {
            // skewed: the first tenth all one-element segments, then long ones (offsets' first
            // guess at a tile's entry, from its share of n, misses)
            s.extend(1..n / 10);
            let mut p = (n / 10).max(1);
            while p < n {
                s.push(p);
                p += 1 + rng.below(2 * tile as u64) as usize;
            }
        }
        _ => {
            // long segments, a few tiles each
            let mut p = 0;
            loop {
                p += 1 + rng.below(3 * tile as u64) as usize;
                if p >= n {
                    break;
                }
                s.push(p);
            }
        }
    }
    s
}

/// The plain reference: each segment [a, b) scanned on its own in the scan's direction, from
/// `init` (or the identity); returns the total of the last segment in scan order.
pub fn reference<Op: ScanOp>(
    input: &[Op::Elem],
    segments: &[(usize, usize)],
    mode: ScanMode,
    reverse: bool,
    init: Option<Op::Elem>,
    out: &mut [Op::Elem],
) -> Op::Elem {
    // The total is the last segment's in scan order: the first by position when reversed.
    let mut last_total = init.unwrap_or_else(Op::identity);
    let in_scan_order: Vec<(usize, usize)> = if reverse {
        segments.iter().rev().copied().collect()
    } else {
        segments.to_vec()
    };
    for &(a, b) in &in_scan_order {
        let order: Vec<usize> = if reverse {
            (a..b).rev().collect()
        } else {
            (a..b).collect()
        };
        if let Some(total) = scan_run::<Op>(input, order, mode, init, out) {
            last_total = total;
        }
    }
    last_total
}

/// Scans the positions `order` (in scan order) of `input` into `out`, from `init`; returns the
/// run's total, `None` for an empty run.
fn scan_run<Op: ScanOp>(
    input: &[Op::Elem],
    order: Vec<usize>,
    mode: ScanMode,
    init: Option<Op::Elem>,
    out: &mut [Op::Elem],
) -> Option<Op::Elem> {
    let mut acc = init;
    let mut any = false;
    for p in order {
        let after = match acc {
            Some(x) => Op::combine(x, input[p]),
            None => input[p],
        };
        out[p] = match mode {
            ScanMode::Inclusive => after,
            ScanMode::Exclusive => acc.unwrap_or_else(Op::identity),
        };
        acc = Some(after);
        any = true;
    }
    if any {
        acc
    } else {
        None
    }
}

pub fn ranges(starts: &[usize], n: usize) -> Vec<(usize, usize)> {
    let mut r = Vec::new();
    for (i, &a) in starts.iter().enumerate() {
        let b = starts.get(i + 1).copied().unwrap_or(n);
        if b > a {
            r.push((a, b));
        }
    }
    r
}

/// The plain column reference: each column of the row-major `rows x cols` matrix (rows
/// `row_stride` apart) scanned on its own, down the rows (up them when `reverse`), from `init`;
/// returns each column's total. Elements outside the matrix are left as they are.
#[allow(clippy::too_many_arguments)]
pub fn column_reference<Op: ScanOp>(
    input: &[Op::Elem],
    (rows, cols, row_stride): (usize, usize, usize),
    mode: ScanMode,
    reverse: bool,
    init: Option<Op::Elem>,
    out: &mut [Op::Elem],
) -> Vec<Op::Elem> {
    let mut totals = Vec::with_capacity(cols);
    for c in 0..cols {
        let order: Vec<usize> = if reverse {
            (0..rows).rev().map(|r| r * row_stride + c).collect()
        } else {
            (0..rows).map(|r| r * row_stride + c).collect()
        };
        let total = scan_run::<Op>(input, order, mode, init, out);
        totals.push(total.or(init).unwrap_or_else(Op::identity));
    }
    totals
}

/// Matrix shapes `(rows, cols)` for column scans around a tile of `tile` elements: one row,
/// one column, warp edges, a tile's rows +- 1 for narrow and wide tiles, primes, tall and wide.
pub fn column_shapes(tile: usize) -> Vec<(usize, usize)> {
    vec![
        (0, 5),
        (1, 1),
        (1, 1000),
        (1000, 1),
        (2, 3),
        (31, 33),
        (32, 32),
        (33, 31),
        (17, 16),
        (tile / 16 - 1, 16),
        (tile / 16 + 1, 16),
        (tile / 32 + 1, 33),
        (97, 101),
        (3 * tile / 32 + 5, 64),
        (2 * tile + 3, 3),
        (4 * tile + 1, 1),
        (7, 4099),
        (257, 129),
        // Chained tiles in more strips than a look-back window has chunks (one chunk a window).
        (2 * tile / 32 + 3, 32 * 33 + 5),
    ]
}
