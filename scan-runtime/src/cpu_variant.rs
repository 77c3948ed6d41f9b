//! The CPU backend's reverse and segmented scans: the same results as the GPU kernels'
//! variants (ARCHITECTURE.md, "Scan variants"), computed sequentially in scan order.

use crate::segments::HostSegments;
use crate::ScanError;
use scan_codegen::{Direction, ScanMode};
use scan_core::ScanOp;

/// Scans `data` in place, in `direction`, restarting at the heads `segments` gives (none: one
/// segment), every segment starting from `init` (or the identity). For rows with a stride,
/// only the rows' elements are touched. Returns the last segment's total (the scan's total
/// when unsegmented), `init` or the identity for no elements.
pub fn scan_variant_in_place<Op: ScanOp>(
    data: &mut [Op::Elem],
    mode: ScanMode,
    direction: Direction,
    segments: Option<HostSegments<'_>>,
    init: Option<Op::Elem>,
) -> Result<Op::Elem, ScanError> {
    let len = data.len() as u64;
    // Rows: scan each row on its own (positions row * stride + [0, cols)).
    if let Some(HostSegments::Rows {
        rows,
        cols,
        row_stride,
    }) = segments
    {
        ScanError::check_rows(rows, cols, row_stride, len)?;
        let mut total = init.unwrap_or_else(Op::identity);
        for r in 0..rows as usize {
            let start = r * row_stride as usize;
            let row = &mut data[start..start + cols as usize];
            total = scan_run::<Op>(row, mode, direction, &|_| false, init);
        }
        return Ok(total);
    }
    // Columns: every row in scan order, one running value per column.
    if let Some(HostSegments::Columns {
        rows,
        cols,
        row_stride,
    }) = segments
    {
        ScanError::check_rows(rows, cols, row_stride, len)?;
        return Ok(scan_columns::<Op>(
            data,
            mode,
            direction,
            (rows as usize, cols as usize, row_stride as usize),
            init,
        ));
    }
    let starts = match segments {
        Some(s) => s.starts(len)?,
        None => Vec::new(),
    };
    let n = data.len();
    // In scan order, element at position p starts a segment when (forward) a segment starts
    // at p, or (reverse) one starts at p + 1.
    let head = |p: usize| -> bool {
        if starts.is_empty() {
            return false;
        }
        match direction {
            Direction::Forward => starts[p],
            Direction::Reverse => p + 1 < n && starts[p + 1],
        }
    };
    Ok(scan_run::<Op>(data, mode, direction, &head, init))
}

/// One sequential pass in scan order; the first element in scan order always starts a segment.
fn scan_run<Op: ScanOp>(
    data: &mut [Op::Elem],
    mode: ScanMode,
    direction: Direction,
    head: &dyn Fn(usize) -> bool,
    init: Option<Op::Elem>,
) -> Op::Elem {
    let n = data.len();
    let mut acc: Option<Op::Elem> = init;
    for k in 0..n {
        let p = match direction {
            Direction::Forward => k,
            Direction::Reverse => n - 1 - k,
        };
        if k > 0 && head(p) {
            acc = init;
        }
        let x = data[p];
        let before = acc;
        let after = match acc {
            Some(a) => Op::combine(a, x),
            None => x,
        };
        data[p] = match mode {
            ScanMode::Inclusive => after,
            ScanMode::Exclusive => before.unwrap_or_else(Op::identity),
        };
        acc = Some(after);
    }
    acc.unwrap_or_else(Op::identity)
}

/// Scans each column of the row-major `rows x cols` matrix (rows `row_stride` apart) down the
/// rows, or up them in reverse, row by row so that memory is read in order. Returns the last
/// column's total (the GPU scan writes every column's).
fn scan_columns<Op: ScanOp>(
    data: &mut [Op::Elem],
    mode: ScanMode,
    direction: Direction,
    (rows, cols, row_stride): (usize, usize, usize),
    init: Option<Op::Elem>,
) -> Op::Elem {
    let mut acc: Vec<Option<Op::Elem>> = vec![init; cols];
    for k in 0..rows {
        let r = match direction {
            Direction::Forward => k,
            Direction::Reverse => rows - 1 - k,
        };
        let row = &mut data[r * row_stride..r * row_stride + cols];
        for (x, a) in row.iter_mut().zip(acc.iter_mut()) {
            let after = match *a {
                Some(a) => Op::combine(a, *x),
                None => *x,
            };
            *x = match mode {
                ScanMode::Inclusive => after,
                ScanMode::Exclusive => a.unwrap_or_else(Op::identity),
            };
            *a = Some(after);
        }
    }
    acc.last()
        .copied()
        .flatten()
        .or(init)
        .unwrap_or_else(Op::identity)
}
