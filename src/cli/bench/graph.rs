//! `scangen bench --graph`: the latency of one scan launched directly against the same scan
//! replayed from a captured CUDA graph, beside a device copy of the same bytes launched
//! directly. Each is timed over a batch of back-to-back launches (CUDA events around the
//! batch, divided by its length), so the host's launch cost counts as it does in a real loop;
//! the median batch is reported.

use super::gpu::sample_buffer;
use super::report::median;
use super::sample::Sample;
use super::BenchArgs;
use crate::cli::typed_ops::with_op;
use scangen::runtime::cudarc::driver::sys::{
    CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode,
};
use scangen::runtime::cudarc::driver::{CudaSlice, CudaStream, DriverError};
use scangen::runtime::{Gpu, ScanError, ScanOptions};
use scangen::{Algorithm, ScanMode, ScanOp};
use std::sync::Arc;

/// Launches per timed batch.
const BATCH: usize = 200;

/// One size of one algorithm: microseconds per launch.
pub struct GraphRow {
    pub algorithm: String,
    pub op: String,
    pub ty: String,
    pub n: u64,
    pub direct_us: f64,
    pub graph_us: f64,
    pub copy_us: f64,
}

pub fn run(
    args: &BenchArgs,
    algorithms: &[Algorithm],
    sizes: &[u64],
) -> Result<(String, Vec<GraphRow>), Box<dyn std::error::Error>> {
    let gpu = Gpu::new(0)?;
    // As in the throughput bench: event tracking would be timed as part of each launch.
    unsafe { gpu.context().disable_event_tracking() };
    let stream = gpu.new_stream()?;
    let mode = if args.exclusive {
        ScanMode::Exclusive
    } else {
        ScanMode::Inclusive
    };
    let mut rows = Vec::new();
    for op in &args.op {
        for ty in &args.ty {
            let found = with_op!(op.as_str(), ty.as_str(), O => Some(bench_op::<O>(&gpu, &stream, args, algorithms, sizes, mode, (op, ty), &mut rows)), None);
            match found {
                Some(result) => result?,
                None => eprintln!("skipping {op} on {ty}: no such operator"),
            }
        }
    }
    Ok((gpu.backend_name(), rows))
}

#[allow(clippy::too_many_arguments)]
fn bench_op<O: ScanOp>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    args: &BenchArgs,
    algorithms: &[Algorithm],
    sizes: &[u64],
    mode: ScanMode,
    (op, ty): (&str, &str),
    rows: &mut Vec<GraphRow>,
) -> Result<(), Box<dyn std::error::Error>>
where
    O::Elem: Sample,
{
    for &algorithm in algorithms {
        let mut scanner =
            gpu.scanner::<O>(ScanOptions::default().algorithm(algorithm).mode(mode))?;
        for &n in sizes.iter().filter(|&&n| n > 0) {
            eprintln!("graph latency: {algorithm} {op} {ty} n={n}");
            let input: CudaSlice<O::Elem> = sample_buffer(stream, n)?;
            // SAFETY: written by every scan before it is read.
            let mut output: CudaSlice<O::Elem> =
                unsafe { stream.alloc(n as usize) }.map_err(driver("allocating bench output"))?;
            scanner.prepare(n, stream)?;
            stream
                .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
                .map_err(driver("beginning the capture"))?;
            let captured = scanner.scan_device(stream, &input, &mut output);
            let graph = stream
                .end_capture(CUgraphInstantiate_flags(0))
                .map_err(driver("ending the capture"))?;
            captured?;
            let graph = graph.ok_or("the capture produced no graph")?;
            graph.upload().map_err(driver("uploading the graph"))?;

            let (mut direct, mut replayed, mut copy) = (Vec::new(), Vec::new(), Vec::new());
            for rep in 0..args.warmup + args.reps.max(1) {
                let d = per_launch(stream, || scanner.scan_device(stream, &input, &mut output))?;
                let g = per_launch(stream, || {
                    graph.launch().map_err(driver("replaying the graph"))
                })?;
                let c = per_launch(stream, || {
                    stream
                        .memcpy_dtod(&input, &mut output)
                        .map_err(driver("device copy"))
                })?;
                if rep >= args.warmup {
                    direct.push(d);
                    replayed.push(g);
                    copy.push(c);
                }
            }
            rows.push(GraphRow {
                algorithm: algorithm.name().into(),
                op: op.into(),
                ty: ty.into(),
                n,
                direct_us: median(&mut direct),
                graph_us: median(&mut replayed),
                copy_us: median(&mut copy),
            });
        }
    }
    Ok(())
}

/// Microseconds per launch of `BATCH` back-to-back `launch`es on `stream`.
fn per_launch(
    stream: &Arc<CudaStream>,
    mut launch: impl FnMut() -> Result<(), ScanError>,
) -> Result<f64, ScanError> {
    let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let start = stream
        .record_event(flags)
        .map_err(driver("recording a timing event"))?;
    for _ in 0..BATCH {
        launch()?;
    }
    let end = stream
        .record_event(flags)
        .map_err(driver("recording a timing event"))?;
    let ms = start
        .elapsed_ms(&end)
        .map_err(driver("reading a timing event"))?;
    Ok(f64::from(ms) * 1000.0 / BATCH as f64)
}

fn driver(step: &'static str) -> impl FnOnce(DriverError) -> ScanError {
    move |source| ScanError::Driver { step, source }
}

/// A markdown table: one row per case.
pub fn to_table(rows: &[GraphRow]) -> String {
    let mut out = String::from(
        "| algorithm | op | type | n | direct µs/scan | graph µs/scan | graph / direct | copy µs |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
            r.algorithm,
            r.op,
            r.ty,
            r.n,
            r.direct_us,
            r.graph_us,
            r.graph_us / r.direct_us,
            r.copy_us
        ));
    }
    out
}
