//! The CPU backend's reverse and segmented scans against the plain per-segment reference (the
//! same reference the GPU variant tests use), for every rule, direction and mode, a
//! non-commutative struct op, awkward sizes and segment structures; and the typed errors of
//! bad segment data. Runs without a GPU.

use scan_core::PrimType;
use scan_runtime::builtin::Add;
use scan_runtime::{
    CpuScanner, HostSegments, OffsetWidth, ScanError, ScanMode, ScanOptions, Segments,
};

mod common;
use common::ops::Compose;
use common::segments::{column_reference, column_shapes, ranges, reference, starts};
use common::{first_mismatch, Rng, TestValue};
use scan_core::BuiltinOp;

const TILE: usize = 256;

fn check(rule: Segments, mode: ScanMode, reverse: bool, rng: &mut Rng) -> usize {
    let mut cases = 0;
    let mut opts = ScanOptions::default().segmented(rule);
    opts.mode = mode;
    if reverse {
        opts = opts.reverse();
    }
    let mut scanner = CpuScanner::<Compose>::new(opts);
    for (i, n) in [0usize, 1, 2, 31, 32, 33, 255, 256, 257, 997, 4099]
        .into_iter()
        .enumerate()
    {
        for kind in [i, i + 1, i + 2, i + 3, i + 4] {
            let (len, segs, rows) = match rule {
                Segments::Rows { strided } => {
                    let cols = [1usize, 3, 32, 33, 100][kind % 5];
                    let r = n.div_ceil(cols);
                    let stride = if strided { cols + 2 } else { cols };
                    let len = if r == 0 { 0 } else { (r - 1) * stride + cols };
                    (
                        (len),
                        (0..r)
                            .map(|k| (k * stride, k * stride + cols))
                            .collect::<Vec<_>>(),
                        Some((r as u64, cols as u64, stride as u64)),
                    )
                }
                _ => {
                    let st = starts(kind, n, TILE, rng);
                    (n, ranges(&st, n), None)
                }
            };
            let input: Vec<_> = (0..len)
                .map(|_| <Compose as scan_runtime::ScanOp>::Elem::random(rng, BuiltinOp::Add))
                .collect();
            let mut expected = input.clone();
            reference::<Compose>(&input, &segs, mode, reverse, None, &mut expected);
            let heads: Vec<usize> = segs.iter().map(|s| s.0).collect();
            let seg_of = |p: usize| heads.partition_point(|&h| h <= p);
            let flags: Vec<u8> = (0..len)
                .map(|p| u8::from(heads.binary_search(&p).is_ok()) * 3)
                .collect();
            let keys: Vec<i16> = (0..len).map(|p| (seg_of(p) % 5) as i16 - 2).collect();
            let mut offsets: Vec<u64> = heads.iter().map(|&h| h as u64).collect();
            if offsets.first() != Some(&0) {
                offsets.insert(0, 0);
            }
            offsets.push(len as u64);
            offsets.insert(1, offsets[0]); // an empty segment
            let offsets32: Vec<u32> = offsets.iter().map(|&o| o as u32).collect();
            let host = match rule {
                Segments::Flags => HostSegments::Flags(&flags),
                Segments::Keys(_) => HostSegments::keys(&keys),
                Segments::Offsets(OffsetWidth::U32) => HostSegments::Offsets32(&offsets32),
                Segments::Offsets(OffsetWidth::U64) => HostSegments::Offsets64(&offsets),
                Segments::Rows { .. } => {
                    let (rows, cols, row_stride) = rows.unwrap();
                    HostSegments::Rows {
                        rows,
                        cols,
                        row_stride,
                    }
                }
                Segments::None | Segments::Columns => {
                    unreachable!("columns: cpu_column_scans_match_the_reference")
                }
            };
            let got = scanner.scan_segmented(&input, host).expect("scan");
            if let Err(e) = first_mismatch(&expected, &got) {
                panic!("{rule} reverse={reverse} {mode} n={n} kind={kind}: {e}");
            }
            cases += 1;
        }
    }
    cases
}

#[test]
fn cpu_segmented_scans_match_the_reference() {
    let mut rng = Rng::new("cpu variants");
    let mut cases = 0;
    for rule in [
        Segments::Flags,
        Segments::Keys(PrimType::I16),
        Segments::Offsets(OffsetWidth::U32),
        Segments::Offsets(OffsetWidth::U64),
        Segments::Rows { strided: false },
        Segments::Rows { strided: true },
    ] {
        for mode in ScanMode::ALL {
            for reverse in [false, true] {
                cases += check(rule, mode, reverse, &mut rng);
            }
        }
    }
    assert!(cases > 1000);
}

#[test]
fn cpu_column_scans_match_the_reference() {
    let mut rng = Rng::new("cpu columns");
    let mut cases = 0;
    for mode in ScanMode::ALL {
        for reverse in [false, true] {
            let mut opts = ScanOptions::default().segmented(Segments::Columns);
            opts.mode = mode;
            if reverse {
                opts = opts.reverse();
            }
            let mut scanner = CpuScanner::<Compose>::new(opts);
            for (k, (rows, cols)) in column_shapes(TILE).into_iter().enumerate() {
                let stride = cols + k % 3;
                let len = if rows == 0 {
                    0
                } else {
                    (rows - 1) * stride + cols
                };
                let input: Vec<_> = (0..len)
                    .map(|_| {
                        <Compose as scan_runtime::ScanOp>::Elem::random(&mut rng, BuiltinOp::Add)
                    })
                    .collect();
                let mut expected = input.clone();
                column_reference::<Compose>(
                    &input,
                    (rows, cols, stride),
                    mode,
                    reverse,
                    None,
                    &mut expected,
                );
                let segments = HostSegments::Columns {
                    rows: rows as u64,
                    cols: cols as u64,
                    row_stride: stride as u64,
                };
                let got = scanner.scan_segmented(&input, segments).unwrap();
                first_mismatch(&expected, &got).unwrap_or_else(|e| {
                    panic!("{rows} x {cols} stride {stride} {mode} reverse={reverse}: {e}")
                });
                cases += 1;
            }
        }
    }
    // A stride smaller than cols is a typed error, and so is column data on a rows scanner.
    let mut scanner =
        CpuScanner::<Add<u32>>::new(ScanOptions::default().segmented(Segments::Columns));
    let bad = HostSegments::Columns {
        rows: 2,
        cols: 3,
        row_stride: 2,
    };
    assert!(matches!(
        scanner.scan_segmented(&[1; 5], bad),
        Err(ScanError::BadRows { .. })
    ));
    let mut rows_scanner = CpuScanner::<Add<u32>>::new(
        ScanOptions::default().segmented(Segments::Rows { strided: true }),
    );
    let cols = HostSegments::Columns {
        rows: 2,
        cols: 2,
        row_stride: 2,
    };
    assert!(matches!(
        rows_scanner.scan_segmented(&[1; 4], cols),
        Err(ScanError::SegmentsMismatch { .. })
    ));
    println!("cpu columns: {cases} cases passed");
}

#[test]
fn cpu_reverse_scan_with_init() {
    let mut rng = Rng::new("cpu reverse");
    for mode in ScanMode::ALL {
        let mut opts = ScanOptions::default().reverse();
        opts.mode = mode;
        let mut scanner = CpuScanner::<Compose>::new(opts);
        for n in [0usize, 1, 33, 1000, 100_003] {
            let input: Vec<_> = (0..n)
                .map(|_| <Compose as scan_runtime::ScanOp>::Elem::random(&mut rng, BuiltinOp::Add))
                .collect();
            let init = <Compose as scan_runtime::ScanOp>::Elem::random(&mut rng, BuiltinOp::Add);
            let mut expected = input.clone();
            let total =
                reference::<Compose>(&input, &[(0, n)], mode, true, Some(init), &mut expected);
            let (got, got_total) = scanner.scan_with_init(&input, init).unwrap();
            first_mismatch(&expected, &got).unwrap();
            assert!(n == 0 || <Compose as scan_runtime::ScanOp>::Elem::same(total, got_total));
            let mut plain = input.clone();
            reference::<Compose>(&input, &[(0, n)], mode, true, None, &mut plain);
            first_mismatch(&plain, &scanner.scan(&input).unwrap()).unwrap();
        }
    }
}

#[test]
fn bad_segment_data_is_a_typed_error_on_the_cpu() {
    let data = [1u32, 2, 3, 4];
    let mut by_offsets = CpuScanner::<Add<u32>>::new(
        ScanOptions::default().segmented(Segments::Offsets(OffsetWidth::U32)),
    );
    let e = by_offsets
        .scan_segmented(&data, HostSegments::Offsets32(&[0, 3, 2, 4]))
        .unwrap_err();
    assert!(matches!(e, ScanError::BadOffsets { index: 2, .. }), "{e}");
    let e = by_offsets
        .scan_segmented(&data, HostSegments::Offsets32(&[0, 5]))
        .unwrap_err();
    assert!(e.to_string().contains("at most n = 4"), "{e}");
    let e = by_offsets
        .scan_segmented(&data, HostSegments::Offsets32(&[]))
        .unwrap_err();
    assert!(matches!(e, ScanError::BadOffsets { .. }), "{e}");
    let e = by_offsets
        .scan_segmented(&data, HostSegments::Flags(&[1, 0, 0, 0]))
        .unwrap_err();
    assert!(matches!(e, ScanError::SegmentsMismatch { .. }), "{e}");
    assert!(matches!(
        by_offsets.scan(&data),
        Err(ScanError::SegmentsMismatch { .. })
    ));
    let mut by_keys = CpuScanner::<Add<u32>>::new(
        ScanOptions::default().segmented(Segments::Keys(PrimType::U32)),
    );
    let e = by_keys
        .scan_segmented(&data, HostSegments::keys(&[1u32, 1, 2]))
        .unwrap_err();
    assert!(
        matches!(e, ScanError::SegmentLength { len: 3, n: 4, .. }),
        "{e}"
    );
    let mut rows = CpuScanner::<Add<u32>>::new(
        ScanOptions::default().segmented(Segments::Rows { strided: true }),
    );
    let e = rows
        .scan_segmented(
            &data,
            HostSegments::Rows {
                rows: 2,
                cols: 3,
                row_stride: 2,
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("smaller than cols"), "{e}");
    let e = rows
        .scan_segmented(
            &data,
            HostSegments::Rows {
                rows: 2,
                cols: 2,
                row_stride: 3,
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("need 5 elements"), "{e}");
    assert_eq!(
        rows.scan_segmented(
            &data,
            HostSegments::Rows {
                rows: 2,
                cols: 2,
                row_stride: 2
            }
        )
        .unwrap(),
        vec![1, 3, 3, 7]
    );
}
