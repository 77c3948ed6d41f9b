//! Column scans (`cumsum(dim=0)` of a row-major matrix, `Segments::Columns`) on the GPU against
//! the plain per-column reference: every shape class (one row, one column, tall and narrow,
//! short and wide, a tile's rows +- 1, primes), contiguous and strided rows, forward and
//! reverse, inclusive and exclusive, with and without a device initial value and per-column
//! totals, for a primitive and non-commutative struct ops; an 8-byte struct stored as 8-byte
//! words and, off 8-byte alignment, field by field; more than 2^31 elements; the typed errors.
//!
//! Needs an NVIDIA GPU: every test is `#[ignore]`d (see gpu_suite.rs).

use scan_runtime::builtin::{Add, Max};
use scan_runtime::{
    DeviceSegments, Gpu, HostSegments, ScanError, ScanExtras, ScanMode, ScanOp, ScanOptions,
    Segments,
};

mod common;
use common::ops::{Affine, Compose, MatMul};
use common::segments::{column_reference, column_shapes};
use common::{download, first_mismatch, random_values, upload, Rng, TestValue};

fn gpu() -> Gpu {
    common::gpu("columns")
}

fn options(mode: ScanMode, reverse: bool) -> ScanOptions {
    let mut opts = ScanOptions::default().segmented(Segments::Columns);
    opts.mode = mode;
    if reverse {
        opts = opts.reverse();
    }
    opts
}

/// One matrix: through the host call, or through device buffers with an initial value and
/// per-column totals.
#[allow(clippy::too_many_arguments)]
fn case<Op: ScanOp>(
    gpu: &Gpu,
    scanner: &mut scan_runtime::Scanner<Op>,
    (rows, cols, stride): (usize, usize, usize),
    mode: ScanMode,
    reverse: bool,
    with_extras: bool,
    rng: &mut Rng,
) -> Result<(), String>
where
    Op::Elem: TestValue,
{
    let len = if rows == 0 {
        0
    } else {
        (rows - 1) * stride + cols
    };
    let input = random_values::<Op::Elem>(rng, len);
    let init = with_extras.then(|| random_values::<Op::Elem>(rng, 1)[0]);
    let mut expected = input.clone();
    let totals = column_reference::<Op>(
        &input,
        (rows, cols, stride),
        mode,
        reverse,
        init,
        &mut expected,
    );
    if !with_extras {
        let segments = HostSegments::Columns {
            rows: rows as u64,
            cols: cols as u64,
            row_stride: stride as u64,
        };
        let got = scanner
            .scan_segmented(&input, segments)
            .map_err(|e| e.to_string())?;
        return first_mismatch(&expected, &got);
    }
    let stream = gpu.new_stream().map_err(|e| e.to_string())?;
    let d_in = upload(&stream, &input);
    let mut d_out = upload(&stream, &input);
    let d_init = upload(&stream, &[init.unwrap()]);
    let before = random_values::<Op::Elem>(rng, cols.max(1));
    let mut d_total = upload(&stream, &before);
    let extras = ScanExtras::new()
        .init(&d_init)
        .total(&mut d_total)
        .segments(DeviceSegments::columns(
            rows as u64,
            cols as u64,
            stride as u64,
        ));
    scanner
        .scan_device_with(&stream, &d_in, &mut d_out, extras)
        .map_err(|e| e.to_string())?;
    first_mismatch(&expected, &download(&stream, &d_out, &input))
        .map_err(|e| format!("output: {e}"))?;
    let got = download(&stream, &d_total, &before);
    first_mismatch(&totals, &got[..cols]).map_err(|e| format!("totals: {e}"))
}

fn matrix<Op: ScanOp>(gpu: &Gpu, label: &str, passed: &mut usize, failed: &mut Vec<String>)
where
    Op::Elem: TestValue,
{
    for mode in ScanMode::ALL {
        for reverse in [false, true] {
            let mut rng = Rng::new(&format!("columns {label} {mode} {reverse}"));
            let mut scanner = match gpu.scanner::<Op>(options(mode, reverse)) {
                Ok(s) => s,
                Err(e) => {
                    failed.push(format!("{label} {mode} reverse={reverse}: build: {e}"));
                    continue;
                }
            };
            let tile = scanner.tile_items() as usize;
            for (rows, cols) in column_shapes(tile) {
                for variant in 0..3 {
                    let stride = cols + [0, 1, 7][variant];
                    let with_extras = variant != 0;
                    let name = format!(
                        "{label} {mode} reverse={reverse} {rows} x {cols} stride {stride} extras={with_extras}"
                    );
                    match case::<Op>(
                        gpu,
                        &mut scanner,
                        (rows, cols, stride),
                        mode,
                        reverse,
                        with_extras,
                        &mut rng,
                    ) {
                        Ok(()) => *passed += 1,
                        Err(why) => {
                            println!("FAIL {name}: {why}");
                            failed.push(name);
                        }
                    }
                }
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn column_scans_for_every_shape_direction_mode_and_op() {
    let gpu = gpu();
    let mut passed = 0;
    let mut failed = Vec::new();
    matrix::<Add<u32>>(&gpu, "add u32", &mut passed, &mut failed);
    matrix::<Max<i64>>(&gpu, "max i64", &mut passed, &mut failed);
    matrix::<Compose>(&gpu, "compose Affine", &mut passed, &mut failed);
    matrix::<MatMul>(&gpu, "matmul Mat2", &mut passed, &mut failed);
    println!(
        "columns (shapes): {passed} cases passed, {} failed",
        failed.len()
    );
    assert!(failed.is_empty(), "{failed:#?}");
}

/// The affine struct (8 bytes of two f32, aligned to 4) is stored as one 8-byte word per
/// element where the output allows it (full tiles of one column per thread): into an 8-byte
/// aligned output, and one 4 bytes past such a boundary (the per-field path), in a tall matrix
/// (one chain of tiles), a wide one (3 chains) and a wider one (34 chains), every mode and
/// direction.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn eight_byte_struct_columns_into_aligned_and_unaligned_outputs() {
    let gpu = gpu();
    let stream = gpu.new_stream().expect("stream");
    let mut passed = 0;
    let mut failed = Vec::new();
    for mode in ScanMode::ALL {
        for reverse in [false, true] {
            let mut scanner = gpu
                .scanner::<Compose>(options(mode, reverse))
                .expect("scanner");
            let tile = scanner.tile_items() as usize;
            for (rows, cols) in [
                (3 * tile / 16 + 5, 16),
                (2 * tile / 32 + 7, 96),
                (2 * tile / 32 + 3, 32 * 33 + 5),
            ] {
                for out_words in [0usize, 1] {
                    let name = format!(
                        "compose {mode} reverse={reverse} {rows} x {cols} output +{} bytes",
                        4 * out_words
                    );
                    let mut rng = Rng::new(&name);
                    let n = rows * cols;
                    let input = random_values::<Affine>(&mut rng, n);
                    let mut expected = input.clone();
                    column_reference::<Compose>(
                        &input,
                        (rows, cols, cols),
                        mode,
                        reverse,
                        None,
                        &mut expected,
                    );
                    let d_in = upload(&stream, &input);
                    let mut words = stream.alloc_zeros::<u32>(2 * n + 1).expect("alloc");
                    let result = {
                        let mut window = words.slice_mut(out_words..);
                        // SAFETY: the window holds 2n words (8n bytes), 4-byte aligned as
                        // Affine needs; the scan writes every element of it.
                        let mut d_out = unsafe { window.transmute_mut::<Affine>(n) }
                            .expect("a window of n elements");
                        scanner.scan_device_with(
                            &stream,
                            &d_in,
                            &mut d_out,
                            ScanExtras::new().segments(DeviceSegments::columns(
                                rows as u64,
                                cols as u64,
                                cols as u64,
                            )),
                        )
                    };
                    let got_words = stream.clone_dtoh(&words).expect("download");
                    let got: Vec<Affine> = got_words[out_words..out_words + 2 * n]
                        .chunks(2)
                        .map(|w| Affine {
                            a: f32::from_bits(w[0]),
                            b: f32::from_bits(w[1]),
                        })
                        .collect();
                    match result
                        .map_err(|e| e.to_string())
                        .and_then(|()| first_mismatch(&expected, &got))
                    {
                        Ok(()) => passed += 1,
                        Err(why) => {
                            println!("FAIL {name}: {why}");
                            failed.push(name);
                        }
                    }
                }
            }
        }
    }
    println!(
        "columns (8-byte words): {passed} cases passed, {} failed",
        failed.len()
    );
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn columns_past_2_pow_31_elements() {
    // 65_537 x 32_771 u8 = 2^31 + 98_307 elements, each column 65_537 rows (many chunks).
    let gpu = gpu();
    let (rows, cols) = (65_537usize, 32_771usize);
    let mut rng = Rng::new("columns huge");
    let input: Vec<u8> = (0..rows * cols).map(|_| rng.next() as u8).collect();
    let mut passed = 0;
    for reverse in [false, true] {
        let opts = options(ScanMode::Inclusive, reverse);
        let mut cpu = scan_runtime::CpuScanner::<Add<u8>>::new(opts);
        let segments = HostSegments::Columns {
            rows: rows as u64,
            cols: cols as u64,
            row_stride: cols as u64,
        };
        let expected = cpu.scan_segmented(&input, segments).expect("cpu");
        let mut scanner = gpu.scanner::<Add<u8>>(opts).expect("scanner");
        let got = scanner.scan_segmented(&input, segments).expect("gpu");
        first_mismatch(&expected, &got).unwrap_or_else(|e| panic!("reverse={reverse}: {e}"));
        passed += 1;
    }
    println!("columns (huge): {passed} cases passed, 0 failed");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn bad_column_data_is_a_typed_error() {
    let gpu = gpu();
    let stream = gpu.new_stream().unwrap();
    let mut scanner = gpu
        .scanner::<Add<u32>>(options(ScanMode::Inclusive, false))
        .unwrap();
    let d_in = upload(&stream, &[1u32; 12]);
    let mut d_out = upload(&stream, &[0u32; 12]);
    // A stride smaller than cols.
    let e = scanner
        .scan_device_with(
            &stream,
            &d_in,
            &mut d_out,
            ScanExtras::new().segments(DeviceSegments::columns(3, 4, 3)),
        )
        .unwrap_err();
    assert!(matches!(e, ScanError::BadRows { .. }), "{e}");
    // Rows past the buffers.
    let e = scanner
        .scan_device_with(
            &stream,
            &d_in,
            &mut d_out,
            ScanExtras::new().segments(DeviceSegments::columns(4, 4, 4)),
        )
        .unwrap_err();
    assert!(matches!(e, ScanError::BadRows { .. }), "{e}");
    // Fewer totals than columns.
    let mut d_total = upload(&stream, &[0u32; 3]);
    let e = scanner
        .scan_device_with(
            &stream,
            &d_in,
            &mut d_out,
            ScanExtras::new()
                .total(&mut d_total)
                .segments(DeviceSegments::columns(3, 4, 4)),
        )
        .unwrap_err();
    assert!(
        matches!(e, ScanError::ColumnTotals { len: 3, cols: 4 }),
        "{e}"
    );
    // Row data on a column scanner.
    let e = scanner
        .scan_device_with(
            &stream,
            &d_in,
            &mut d_out,
            ScanExtras::new().segments(DeviceSegments::rows(3, 4, 4)),
        )
        .unwrap_err();
    assert!(matches!(e, ScanError::SegmentsMismatch { .. }), "{e}");
    // Nothing was written.
    assert_eq!(download(&stream, &d_out, &[0u32; 12]), vec![0u32; 12]);
    println!("columns (errors): 4 cases passed, 0 failed");
}
