//! Segmented, column and reverse scans inside a CUDA graph: each is captured once (with a device
//! initial value and total, and its segment data in device buffers), then replayed with new
//! values and new segment data of the same shape every time, each replay checked against the
//! plain reference; a direct launch of the same scanner between replays must not disturb them.
//!
//! Needs an NVIDIA GPU: every test is `#[ignore]`d (see gpu_suite.rs).

use scan_runtime::builtin::Add;
use scan_runtime::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use scan_runtime::cudarc::driver::{CudaSlice, CudaStream, DeviceRepr};
use scan_runtime::{
    DeviceSegments, Gpu, OffsetWidth, ScanExtras, ScanMode, ScanOp, ScanOptions, Segments,
};
use std::sync::Arc;

mod common;
use common::ops::Compose;
use common::segments::{column_reference, ranges, reference};
use common::{first_mismatch, random_values, Rng, TestValue};

fn replays() -> usize {
    std::env::var("SCANGEN_GRAPH_REPLAYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40)
}

/// A device buffer of `n` elements that nothing has touched yet: with cudarc's event tracking
/// on, its first use may then be inside the capture.
fn fresh<T: DeviceRepr>(stream: &Arc<CudaStream>, n: usize) -> CudaSlice<T> {
    // SAFETY: every test writes the buffer (put) before a replay reads it.
    unsafe { stream.alloc::<T>(n.max(1)) }.expect("alloc")
}

fn put<T: DeviceRepr>(stream: &Arc<CudaStream>, dst: &mut CudaSlice<T>, host: &[T]) {
    if !host.is_empty() {
        stream
            .memcpy_htod(host, &mut dst.slice_mut(..host.len()))
            .expect("upload");
    }
}

fn get<T: DeviceRepr + Clone>(stream: &Arc<CudaStream>, src: &CudaSlice<T>, like: &[T]) -> Vec<T> {
    let mut host = like.to_vec();
    if !host.is_empty() {
        stream
            .memcpy_dtoh(&src.slice(..host.len()), &mut host)
            .expect("download");
    }
    stream.synchronize().expect("replay finished");
    host
}

/// New segment data of the same shape for each replay: segment starts (random runs, so a
/// replay's segments differ from the last), as flags, as i32 keys, or as a fixed number of
/// u32 offsets (some segments empty).
struct SegmentData {
    flags: Vec<u8>,
    keys: Vec<i32>,
    offsets: Vec<u32>,
    ranges: Vec<(usize, usize)>,
}

fn segment_data(n: usize, num_offsets: usize, rng: &mut Rng) -> SegmentData {
    let mut starts = vec![0usize];
    let mut p = 0;
    loop {
        p += 1 + rng.below(300) as usize;
        if p >= n {
            break;
        }
        starts.push(p);
    }
    let flags: Vec<u8> = (0..n)
        .map(|i| u8::from(starts.binary_search(&i).is_ok()))
        .collect();
    let keys: Vec<i32> = (0..n)
        .map(|i| starts.partition_point(|&s| s <= i) as i32 * 3)
        .collect();
    // Offsets: num_offsets ascending cut points in [0, n], 0 first and n last.
    let mut offsets: Vec<u32> = (0..num_offsets - 2)
        .map(|_| rng.below(n as u64 + 1) as u32)
        .collect();
    offsets.push(0);
    offsets.push(n as u32);
    offsets.sort_unstable();
    SegmentData {
        ranges: ranges(&starts, n),
        flags,
        keys,
        offsets,
    }
}

fn offset_ranges(offsets: &[u32]) -> Vec<(usize, usize)> {
    offsets
        .windows(2)
        .map(|w| (w[0] as usize, w[1] as usize))
        .filter(|(a, b)| b > a)
        .collect()
}

/// Captures one scan of `rule` over `n` elements (rows: `shape`) and replays it.
#[allow(clippy::too_many_arguments)]
fn capture_and_replay<Op: ScanOp>(
    gpu: &Gpu,
    rule: Segments,
    mode: ScanMode,
    reverse: bool,
    n: usize,
    shape: (usize, usize, usize),
    rng: &mut Rng,
) -> Result<(), String>
where
    Op::Elem: TestValue,
{
    let mut opts = ScanOptions::default().segmented(rule);
    opts.mode = mode;
    if reverse {
        opts = opts.reverse();
    }
    let stream = gpu.new_stream().map_err(|e| e.to_string())?;
    let mut scanner = gpu.scanner::<Op>(opts).map_err(|e| e.to_string())?;
    let (rows, cols, stride) = shape;
    let len = match rule {
        Segments::Rows { .. } | Segments::Columns => (rows - 1) * stride + cols,
        _ => n,
    };
    scanner
        .prepare(len as u64, &stream)
        .map_err(|e| format!("prepare: {e}"))?;
    let num_offsets = 64;
    let totals = if rule == Segments::Columns { cols } else { 1 };
    let mut d_in = fresh::<Op::Elem>(&stream, len);
    let mut d_out = fresh::<Op::Elem>(&stream, len);
    let mut d_init = fresh::<Op::Elem>(&stream, 1);
    let mut d_total = fresh::<Op::Elem>(&stream, totals);
    let mut d_flags = fresh::<u8>(&stream, len);
    let mut d_keys = fresh::<i32>(&stream, len);
    let mut d_offsets = fresh::<u32>(&stream, num_offsets);
    // Views of exactly len elements (fresh() allocates at least one).
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL)
        .map_err(|e| e.to_string())?;
    let scanned = {
        let d_in_v = d_in.slice(..len);
        let mut d_out_v = d_out.slice_mut(..len);
        let d_flags_v = d_flags.slice(..len);
        let d_keys_v = d_keys.slice(..len);
        let segments = match rule {
            Segments::Flags => DeviceSegments::flags(&d_flags_v),
            Segments::Keys(_) => DeviceSegments::keys(&d_keys_v),
            Segments::Offsets(_) => DeviceSegments::offsets(&d_offsets),
            Segments::Rows { .. } => DeviceSegments::rows(rows as u64, cols as u64, stride as u64),
            _ => DeviceSegments::columns(rows as u64, cols as u64, stride as u64),
        };
        let extras = ScanExtras::new()
            .init(&d_init)
            .total(&mut d_total)
            .segments(segments);
        scanner.scan_device_with(&stream, &d_in_v, &mut d_out_v, extras)
    };
    let graph = stream
        .end_capture(CUgraphInstantiate_flags(0))
        .map_err(|e| format!("ending the capture: {e}"))?
        .ok_or("the capture produced no graph")?;
    scanned.map_err(|e| format!("scan inside the capture: {e}"))?;
    for replay in 0..replays() {
        let input = random_values::<Op::Elem>(rng, len);
        let init = random_values::<Op::Elem>(rng, 1)[0];
        let data = segment_data(len, num_offsets, rng);
        put(&stream, &mut d_in, &input);
        put(&stream, &mut d_init, &[init]);
        put(&stream, &mut d_flags, &data.flags);
        put(&stream, &mut d_keys, &data.keys);
        put(&stream, &mut d_offsets, &data.offsets);
        graph
            .launch()
            .map_err(|e| format!("replay {replay}: {e}"))?;
        let mut expected = input.clone();
        let expected_totals = match rule {
            Segments::Columns => {
                column_reference::<Op>(&input, shape, mode, reverse, Some(init), &mut expected)
            }
            _ => {
                let segs = match rule {
                    Segments::Offsets(_) => offset_ranges(&data.offsets),
                    Segments::Rows { .. } => {
                        (0..rows).map(|r| (r * stride, r * stride + cols)).collect()
                    }
                    _ => data.ranges.clone(),
                };
                vec![reference::<Op>(
                    &input,
                    &segs,
                    mode,
                    reverse,
                    Some(init),
                    &mut expected,
                )]
            }
        };
        let got = get(&stream, &d_out, &input);
        // Rows with a stride leave the gaps unwritten: compare the rows only.
        let mask = |v: &[Op::Elem]| -> Vec<Op::Elem> {
            match rule {
                Segments::Rows { .. } | Segments::Columns => (0..rows)
                    .flat_map(|r| v[r * stride..r * stride + cols].to_vec())
                    .collect(),
                _ => v.to_vec(),
            }
        };
        first_mismatch(&mask(&expected), &mask(&got))
            .map_err(|e| format!("replay {replay}: {e}"))?;
        let got_totals = get(&stream, &d_total, &expected_totals);
        first_mismatch(&expected_totals, &got_totals)
            .map_err(|e| format!("replay {replay} totals: {e}"))?;
        if replay % 13 == 5 {
            // A direct launch on other buffers, between replays.
            let other = random_values::<Op::Elem>(rng, len);
            let host = match rule {
                Segments::Columns => scan_runtime::HostSegments::Columns {
                    rows: rows as u64,
                    cols: cols as u64,
                    row_stride: stride as u64,
                },
                Segments::Rows { .. } => scan_runtime::HostSegments::Rows {
                    rows: rows as u64,
                    cols: cols as u64,
                    row_stride: stride as u64,
                },
                Segments::Flags => scan_runtime::HostSegments::Flags(&data.flags),
                Segments::Keys(_) => scan_runtime::HostSegments::keys(&data.keys),
                _ => scan_runtime::HostSegments::Offsets32(&data.offsets),
            };
            scanner
                .scan_segmented(&other, host)
                .map_err(|e| format!("direct launch after replay {replay}: {e}"))?;
        }
    }
    stream.synchronize().map_err(|e| e.to_string())
}

fn run<Op: ScanOp>(gpu: &Gpu, label: &str, passed: &mut usize, failed: &mut Vec<String>)
where
    Op::Elem: TestValue,
{
    let rules = [
        Segments::Flags,
        Segments::Keys(scan_core::PrimType::I32),
        Segments::Offsets(OffsetWidth::U32),
        Segments::Rows { strided: true },
        Segments::Columns,
    ];
    let mut rng = Rng::new(&format!("graph variants {label}"));
    for (k, rule) in rules.into_iter().enumerate() {
        for mode in ScanMode::ALL {
            for reverse in [false, true] {
                let n = [70_001usize, 1, 4_099, 33][k % 4];
                let shape = match (rule, k % 2) {
                    (Segments::Columns, 0) => (3_001, 37, 40),
                    (Segments::Columns, _) => (41, 3_001, 3_001),
                    _ => (257, 129, 131),
                };
                let name = format!("{label} {rule} {mode} reverse={reverse}");
                match capture_and_replay::<Op>(gpu, rule, mode, reverse, n, shape, &mut rng) {
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

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn segmented_and_column_scans_replay_from_a_graph() {
    let gpu = common::gpu("graph_variants");
    let mut passed = 0;
    let mut failed = Vec::new();
    run::<Add<u32>>(&gpu, "add u32", &mut passed, &mut failed);
    run::<Compose>(&gpu, "compose Affine", &mut passed, &mut failed);
    println!(
        "graph variants: {passed} captures passed ({} replays each), {} failed",
        replays(),
        failed.len()
    );
    assert!(failed.is_empty(), "{failed:#?}");
}
