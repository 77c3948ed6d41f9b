//! CUDA graphs: scans captured once into a graph and replayed many times, each replay with new
//! random input, checked against the CPU reference every time; the typed errors a capture gets
//! instead of a broken capture; the epoch wrap crossed many times by replays with a tiny
//! `max_epoch`, with grids that shrink and grow between launches.
//!
//! Needs an NVIDIA GPU: every test is `#[ignore]`d (see gpu_suite.rs). `SCANGEN_GRAPH_REPLAYS`
//! lowers the replay count (the sanitizer run uses it); the default is 1000.

use scan_core::BuiltinOp;
use scan_runtime::builtin::{Add, Max, Mul, Xor};
use scan_runtime::cpu;
use scan_runtime::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use scan_runtime::cudarc::driver::{
    result, CudaGraph, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr,
};
use scan_runtime::{
    Algorithm, Direction, Gpu, ScanError, ScanMode, ScanOp, ScanOptions, Scanner, TuningPolicy,
};
use std::sync::Arc;

mod common;
use common::ops::{Compose, LastOfRun, MatMul};
use common::{first_mismatch, opts, segments, Rng, TestValue};

fn gpu() -> Gpu {
    common::gpu("graphs")
}

fn replays() -> usize {
    std::env::var("SCANGEN_GRAPH_REPLAYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

#[derive(Default)]
struct Report {
    passed: usize,
    failures: Vec<String>,
}

impl Report {
    fn record(&mut self, case: &str, result: Result<(), String>) {
        match result {
            Ok(()) => self.passed += 1,
            Err(why) => {
                println!("FAIL {case}: {why}");
                self.failures.push(format!("{case}: {why}"));
            }
        }
    }

    fn finish(self, test: &str) {
        println!(
            "graphs ({test}): {} cases passed, {} failed",
            self.passed,
            self.failures.len()
        );
        assert!(
            self.failures.is_empty(),
            "{} cases failed",
            self.failures.len()
        );
    }
}

fn begin(stream: &Arc<CudaStream>) {
    // Global mode: any call CUDA considers unsafe during a capture (an allocation, a module
    // load, a synchronisation), from any thread, breaks it, so a scan that does one shows.
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL)
        .expect("begin capture");
}

fn end(stream: &Arc<CudaStream>) -> Result<CudaGraph, String> {
    stream
        .end_capture(CUgraphInstantiate_flags(0))
        .map_err(|e| format!("ending the capture: {e}"))?
        .ok_or_else(|| "the capture produced no graph".to_string())
}

fn random_input<T: TestValue>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::random(rng, BuiltinOp::Add)).collect()
}

fn expected<Op: ScanOp>(input: &[Op::Elem], mode: ScanMode) -> Vec<Op::Elem> {
    let mut out = input.to_vec();
    cpu::scan_sequential::<Op>(input, &mut out, mode);
    out
}

/// The CPU reference of a scan in `options`' mode and direction: the segmented reference of one
/// segment.
fn expected_in<Op: ScanOp>(input: &[Op::Elem], options: ScanOptions) -> Vec<Op::Elem> {
    let mut out = input.to_vec();
    let reverse = options.variant.direction == Direction::Reverse;
    segments::reference::<Op>(
        input,
        &[(0, input.len())],
        options.mode,
        reverse,
        None,
        &mut out,
    );
    out
}

/// Device buffers for one captured scan: `output` is `None` in place. The scan's elements start
/// `at` elements past the buffers' start.
struct Buffers<T> {
    input: CudaSlice<T>,
    output: Option<CudaSlice<T>>,
    at: usize,
}

impl<T: DeviceRepr + TestValue + Default + Clone> Buffers<T> {
    /// New buffers, not touched yet: with cudarc's event tracking on, their first use may be
    /// inside a capture.
    fn new(stream: &Arc<CudaStream>, n: usize, in_place: bool) -> Buffers<T> {
        Self::new_at(stream, n, in_place, 0)
    }

    /// Buffers whose scan starts `at` elements in (off a vector boundary unless `at` is whole
    /// vectors).
    fn new_at(stream: &Arc<CudaStream>, n: usize, in_place: bool, at: usize) -> Buffers<T> {
        // SAFETY: written (upload) before every replay reads them.
        let alloc = || unsafe { stream.alloc::<T>(n.max(1) + at) }.expect("alloc");
        Buffers {
            input: alloc(),
            output: (!in_place).then(alloc),
            at,
        }
    }

    fn upload(&mut self, stream: &Arc<CudaStream>, host: &[T]) {
        let at = self.at;
        stream
            .memcpy_htod(host, &mut self.input.slice_mut(at..at + host.len()))
            .expect("upload");
    }

    fn download(&self, stream: &Arc<CudaStream>, n: usize) -> Vec<T> {
        let mut host = vec![T::default(); n];
        let result = self.output.as_ref().unwrap_or(&self.input);
        stream
            .memcpy_dtoh(&result.slice(self.at..self.at + n), &mut host)
            .expect("download");
        stream
            .synchronize()
            .expect("the scan and the download finish");
        host
    }

    fn scan<Op: ScanOp<Elem = T>>(
        &mut self,
        scanner: &mut Scanner<Op>,
        stream: &Arc<CudaStream>,
        n: usize,
    ) -> Result<(), ScanError> {
        let span = self.at..self.at + n;
        match &mut self.output {
            Some(output) => scanner.scan_device(
                stream,
                &self.input.slice(span.clone()),
                &mut output.slice_mut(span),
            ),
            None => scanner.scan_device_in_place(stream, &mut self.input.slice_mut(span)),
        }
    }
}

/// Scans of several sizes by one scanner, captured into one graph after one `prepare` for the
/// largest, each with its own buffers.
struct CapturedScans<T> {
    sizes: Vec<usize>,
    buffers: Vec<Buffers<T>>,
    graph: CudaGraph,
}

impl<T: DeviceRepr + TestValue + Default + Clone> CapturedScans<T> {
    fn capture<Op: ScanOp<Elem = T>>(
        scanner: &mut Scanner<Op>,
        stream: &Arc<CudaStream>,
        sizes: &[usize],
    ) -> Result<CapturedScans<T>, String> {
        let largest = sizes.iter().copied().max().unwrap_or(0);
        scanner
            .prepare(largest as u64, stream)
            .map_err(|e| format!("prepare: {e}"))?;
        let mut buffers: Vec<Buffers<T>> = sizes
            .iter()
            .map(|&n| Buffers::new(stream, n, false))
            .collect();
        begin(stream);
        let scanned = sizes
            .iter()
            .zip(buffers.iter_mut())
            .try_for_each(|(&n, b)| b.scan(scanner, stream, n));
        let graph = end(stream);
        scanned.map_err(|e| format!("scan inside the capture: {e}"))?;
        Ok(CapturedScans {
            sizes: sizes.to_vec(),
            buffers,
            graph: graph?,
        })
    }

    /// Uploads new random inputs, replays the graph and checks every output.
    fn replay_and_check<Op: ScanOp<Elem = T>>(
        &mut self,
        stream: &Arc<CudaStream>,
        mode: ScanMode,
        rng: &mut Rng,
        replay: usize,
    ) -> Result<(), String> {
        let inputs: Vec<Vec<T>> = self.sizes.iter().map(|&n| random_input(rng, n)).collect();
        for (b, input) in self.buffers.iter_mut().zip(&inputs) {
            b.upload(stream, input);
        }
        self.graph
            .launch()
            .map_err(|e| format!("replay {replay}: {e}"))?;
        for ((b, input), &n) in self.buffers.iter().zip(&inputs).zip(&self.sizes) {
            first_mismatch(&expected::<Op>(input, mode), &b.download(stream, n))
                .map_err(|e| format!("replay {replay}, n={n}: {e}"))?;
        }
        Ok(())
    }
}

/// Captures one scan of `n` elements (after `prepare`), then replays it `replays` times, each
/// with new random input, and checks every result. Between replays, a direct launch of the
/// same scanner on the same stream (every 97th replay) must not disturb the graph's.
fn capture_and_replay<Op: ScanOp>(
    gpu: &Gpu,
    opts: ScanOptions,
    (n, at): (usize, usize),
    in_place: bool,
    replays: usize,
    rng: &mut Rng,
) -> Result<(), String>
where
    Op::Elem: TestValue + Default,
{
    let stream = gpu.new_stream().map_err(|e| e.to_string())?;
    let mut scanner = gpu.scanner::<Op>(opts).map_err(|e| e.to_string())?;
    scanner
        .prepare(n as u64, &stream)
        .map_err(|e| format!("prepare: {e}"))?;
    let mut buffers = Buffers::<Op::Elem>::new_at(&stream, n, in_place, at);
    begin(&stream);
    let scanned = buffers.scan(&mut scanner, &stream, n);
    let graph = end(&stream);
    scanned.map_err(|e| format!("scan inside the capture: {e}"))?;
    let graph = graph?;
    let mut direct = Buffers::<Op::Elem>::new_at(&stream, n, false, at);
    for replay in 0..replays {
        let input = random_input::<Op::Elem>(rng, n);
        buffers.upload(&stream, &input);
        graph
            .launch()
            .map_err(|e| format!("replay {replay}: {e}"))?;
        let got = buffers.download(&stream, n);
        first_mismatch(&expected_in::<Op>(&input, opts), &got)
            .map_err(|e| format!("replay {replay} of {replays}: {e}"))?;
        if replay % 97 == 0 {
            let input = random_input::<Op::Elem>(rng, n);
            direct.upload(&stream, &input);
            direct
                .scan(&mut scanner, &stream, n)
                .map_err(|e| format!("direct launch after replay {replay}: {e}"))?;
            first_mismatch(
                &expected_in::<Op>(&input, opts),
                &direct.download(&stream, n),
            )
            .map_err(|e| format!("direct launch after replay {replay}: {e}"))?;
        }
    }
    stream.synchronize().map_err(|e| e.to_string())
}

/// Sizes for the replay matrix, chosen per case so that together they cover one element, a
/// warp and one more, a tile and one more or less, primes, 40 default tiles (the small-input
/// single-pass kernel on an H100), 200 (the mid-size one) and the hierarchy's second level.
fn case_size(tile: u64, case: usize) -> usize {
    let sizes = [
        1,
        33,
        tile - 1,
        tile + 1,
        997,
        65_537,
        3 * tile + 5,
        31,
        32,
        40 * tile + 3,
        200 * tile + 9,
    ];
    sizes[case % sizes.len()] as usize
}

fn replay_matrix<Op: ScanOp>(gpu: &Gpu, report: &mut Report, label: &str, rng: &mut Rng)
where
    Op::Elem: TestValue + Default,
{
    let mut case = label.len();
    for algorithm in Algorithm::ALL {
        for mode in ScanMode::ALL {
            for in_place in [false, true] {
                let options = opts(algorithm, mode);
                let tile = match gpu.scanner::<Op>(options) {
                    Ok(s) => s.tile_items(),
                    Err(e) => {
                        report.record(&format!("{label} {algorithm} {mode}"), Err(e.to_string()));
                        continue;
                    }
                };
                let n = case_size(tile, case);
                case += 1;
                let name = format!("{label} {algorithm} {mode} n={n} in_place={in_place}");
                let result =
                    capture_and_replay::<Op>(gpu, options, (n, 0), in_place, replays(), rng);
                report.record(&name, result);
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn replays_of_every_algorithm_mode_and_op_are_correct() {
    let gpu = gpu();
    let mut rng = Rng::new("replays");
    let mut report = Report::default();
    // A primitive, an 8-byte non-commutative struct (f32 affine maps, exact by construction),
    // a 12-byte and a 32-byte non-commutative struct, all with cudarc's event tracking on (the
    // default): the buffers are new when captured.
    replay_matrix::<Add<u32>>(&gpu, &mut report, "add u32", &mut rng);
    replay_matrix::<Max<i64>>(&gpu, &mut report, "max i64", &mut rng);
    replay_matrix::<Compose>(&gpu, &mut report, "compose Affine (8 B)", &mut rng);
    replay_matrix::<LastOfRun>(&gpu, &mut report, "last_of_run Tally (12 B)", &mut rng);
    replay_matrix::<MatMul>(&gpu, &mut report, "matmul Mat2 (32 B)", &mut rng);
    report.finish("replays_of_every_algorithm_mode_and_op_are_correct");
}

/// Buffers off a vector boundary: the single-pass grid takes one tile more where the output's
/// lead needs it (GeneratedScan::single_pass_tiles), decided when the scan is captured; its
/// replays must run that grid, and a direct launch between them too. 1-, 2- and 4-byte
/// elements, prefix and suffix scans, sizes whose lead does and does not need the tile more,
/// beside the buffers and in place.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn replays_of_scans_off_a_vector_boundary() {
    let gpu = gpu();
    let mut rng = Rng::new("off a vector boundary");
    let mut report = Report::default();
    let sizes = |tile: usize| {
        vec![
            (tile, 1, false),
            (tile - 1, 1, true),
            (3 * tile + 5, 3, false),
            ((160 * 6 + 1) * tile, 1, true),
        ]
    };
    offset_replays::<Add<u8>>(&gpu, &mut report, "add u8", &mut rng, sizes);
    offset_replays::<Max<u16>>(&gpu, &mut report, "max u16", &mut rng, sizes);
    offset_replays::<Add<u32>>(&gpu, &mut report, "add u32", &mut rng, sizes);
    // Byte products and xor at mid sizes: such buffers take another kernel than aligned ones
    // there (the mid-size shape's twin, TuningPolicy::unaligned_twin, or the default tile),
    // which `prepare` loads for the capture.
    let sms = gpu.sm_count() as usize;
    let mid = move |tile: usize| vec![(2 * sms * tile + 5, 1, false), (2 * sms * tile, 1, true)];
    offset_replays::<Mul<u8>>(&gpu, &mut report, "mul u8", &mut rng, mid);
    offset_replays::<Xor<u8>>(&gpu, &mut report, "xor u8", &mut rng, mid);
    report.finish("replays_of_scans_off_a_vector_boundary");
}

/// Captures and replays scans of `Op` of each of `sizes(tile)`: (n, offset of the buffers, in
/// place).
fn offset_replays<Op: ScanOp>(
    gpu: &Gpu,
    report: &mut Report,
    label: &str,
    rng: &mut Rng,
    sizes: impl Fn(usize) -> Vec<(usize, usize, bool)>,
) where
    Op::Elem: TestValue + Default,
{
    let replays = replays().min(50);
    for reverse in [false, true] {
        for mode in ScanMode::ALL {
            let mut options = opts(Algorithm::SinglePass, mode);
            if reverse {
                options = options.reverse();
            }
            let tile = match gpu.scanner::<Op>(options) {
                Ok(s) => s.tile_items() as usize,
                Err(e) => {
                    report.record(&format!("{label} {mode}"), Err(e.to_string()));
                    continue;
                }
            };
            for (n, at, in_place) in sizes(tile) {
                let name =
                    format!("{label} {mode} reverse={reverse} n={n} at +{at} in_place={in_place}");
                let result =
                    capture_and_replay::<Op>(gpu, options, (n, at), in_place, replays, rng);
                report.record(&name, result);
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn replays_with_event_tracking_off() {
    let gpu = gpu();
    // SAFETY: the buffers created while it is off are only used on one stream each, in order.
    unsafe { gpu.context().disable_event_tracking() };
    let mut rng = Rng::new("tracking off");
    let mut report = Report::default();
    replay_matrix::<Add<u32>>(&gpu, &mut report, "add u32 (tracking off)", &mut rng);
    replay_matrix::<LastOfRun>(&gpu, &mut report, "last_of_run (tracking off)", &mut rng);
    // SAFETY: turning it back on only affects buffers created from now on.
    unsafe { gpu.context().enable_event_tracking() };
    report.finish("replays_with_event_tracking_off");
}

/// One graph, two scanners of different ops and sizes on one stream, replayed with new input
/// for both; and the same graph launched on a second stream.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn two_scans_in_one_graph_and_a_replay_on_another_stream() {
    let gpu = gpu();
    let mut rng = Rng::new("two scans");
    let mut report = Report::default();
    for algorithm in Algorithm::ALL {
        let name = format!("add u32 + matmul {algorithm}");
        report.record(&name, two_scans(&gpu, algorithm, &mut rng));
    }
    report.finish("two_scans_in_one_graph_and_a_replay_on_another_stream");
}

fn two_scans(gpu: &Gpu, algorithm: Algorithm, rng: &mut Rng) -> Result<(), String> {
    let (n1, n2) = (300_007usize, 4_099usize);
    let stream = gpu.new_stream().map_err(|e| e.to_string())?;
    let other = gpu.new_stream().map_err(|e| e.to_string())?;
    let o1 = opts(algorithm, ScanMode::Inclusive);
    let o2 = opts(algorithm, ScanMode::Exclusive);
    let mut add = gpu.scanner::<Add<u32>>(o1).map_err(|e| e.to_string())?;
    let mut mat = gpu.scanner::<MatMul>(o2).map_err(|e| e.to_string())?;
    add.prepare(n1 as u64, &stream).map_err(|e| e.to_string())?;
    mat.prepare(n2 as u64, &stream).map_err(|e| e.to_string())?;
    let mut b1 = Buffers::<u32>::new(&stream, n1, false);
    let mut b2 = Buffers::new(&stream, n2, true);
    begin(&stream);
    let scanned = b1
        .scan(&mut add, &stream, n1)
        .and_then(|()| b2.scan(&mut mat, &stream, n2));
    let graph = end(&stream);
    scanned.map_err(|e| format!("scan inside the capture: {e}"))?;
    let graph = graph?;
    for replay in 0..replays() {
        let i1 = random_input::<u32>(rng, n1);
        let i2 = random_input(rng, n2);
        b1.upload(&stream, &i1);
        b2.upload(&stream, &i2);
        // Every other replay on the second stream, ordered after the uploads and before the
        // downloads by host synchronisation.
        if replay % 2 == 1 {
            stream.synchronize().map_err(|e| e.to_string())?;
            // SAFETY: the graph was instantiated in this context; `other` belongs to it too.
            unsafe { result::graph::launch(graph.cu_graph_exec(), other.cu_stream()) }
                .map_err(|e| format!("replay {replay} on the second stream: {e}"))?;
            other.synchronize().map_err(|e| e.to_string())?;
        } else {
            graph
                .launch()
                .map_err(|e| format!("replay {replay}: {e}"))?;
        }
        first_mismatch(
            &expected::<Add<u32>>(&i1, o1.mode),
            &b1.download(&stream, n1),
        )
        .map_err(|e| format!("replay {replay}, add: {e}"))?;
        first_mismatch(&expected::<MatMul>(&i2, o2.mode), &b2.download(&stream, n2))
            .map_err(|e| format!("replay {replay}, matmul: {e}"))?;
    }
    Ok(())
}

/// `max_epoch` 2 to 7 with one graph holding several launches of one scanner, on inputs that
/// shrink and grow (1 to 200 tiles): every replay crosses the epoch wrap, and a launch often
/// meets slots a larger launch wrote exactly `max_epoch` launches earlier, which only the
/// kernel's sweep keeps from reading as current.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn epoch_wrap_is_crossed_by_replays_and_direct_launches() {
    let gpu = gpu();
    let mut rng = Rng::new("epoch wrap");
    let mut report = Report::default();
    for max_epoch in [2u32, 3, 4, 7] {
        for mode in ScanMode::ALL {
            let name = format!("add u32 max_epoch={max_epoch} {mode}");
            report.record(
                &name,
                epoch_wrap::<Add<u32>>(&gpu, max_epoch, mode, &mut rng),
            );
            let name = format!("last_of_run max_epoch={max_epoch} {mode}");
            report.record(
                &name,
                epoch_wrap::<LastOfRun>(&gpu, max_epoch, mode, &mut rng),
            );
        }
    }
    report.finish("epoch_wrap_is_crossed_by_replays_and_direct_launches");
}

fn epoch_wrap<Op: ScanOp>(
    gpu: &Gpu,
    max_epoch: u32,
    mode: ScanMode,
    rng: &mut Rng,
) -> Result<(), String>
where
    Op::Elem: TestValue + Default,
{
    // Small tiles, so that 200 tiles stay a small input.
    let policy = TuningPolicy {
        max_epoch,
        ..TuningPolicy::new(64, 4)
    };
    let options = opts(Algorithm::SinglePass, mode).policy(policy);
    let stream = gpu.new_stream().map_err(|e| e.to_string())?;
    let mut scanner = gpu.scanner::<Op>(options).map_err(|e| e.to_string())?;
    let tile = scanner.tile_items() as usize;
    // Tiles per launch within a replay: big, then smaller ones, then big again.
    let shape = [200usize, 3, 1, 57, 200, 2, 120];
    let sizes: Vec<usize> = shape
        .iter()
        .enumerate()
        .map(|(i, &tiles)| (tiles * tile).saturating_sub(i % 3))
        .collect();
    let mut captured = CapturedScans::capture(&mut scanner, &stream, &sizes)?;
    // Fewer replays than the matrix: each has seven launches, and the wrap comes every few.
    for replay in 0..replays().div_ceil(4) {
        captured.replay_and_check::<Op>(&stream, mode, rng, replay)?;
        // Direct launches in between, of a size the graph does not use, shift the epoch
        // sequence against the graph's launches.
        if replay % 5 == 0 {
            let n = (1 + replay % 150) * tile + 1;
            let input = random_input::<Op::Elem>(rng, n);
            let got = scanner
                .scan(&input)
                .map_err(|e| format!("direct scan of {n} after replay {replay}: {e}"))?;
            first_mismatch(&expected::<Op>(&input, mode), &got)
                .map_err(|e| format!("direct scan of {n} after replay {replay}: {e}"))?;
        }
    }
    Ok(())
}

/// One `prepare` for a large input loads every kernel a smaller input takes: after it, scans
/// of a small, a mid-size and a large input (three kernel shapes, `TuningPolicy::input_size`)
/// are captured into one graph without a module load, and its replays are correct.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn one_prepare_serves_every_smaller_input_size() {
    let gpu = gpu();
    let mut report = Report::default();
    let mut rng = Rng::new("input sizes");
    for mode in ScanMode::ALL {
        let name = format!("add u32 single-pass {mode}");
        report.record(&name, prepared_input_sizes(&gpu, mode, &mut rng));
    }
    report.finish("one_prepare_serves_every_smaller_input_size");
}

fn prepared_input_sizes(gpu: &Gpu, mode: ScanMode, rng: &mut Rng) -> Result<(), String> {
    let options = opts(Algorithm::SinglePass, mode);
    let stream = gpu.new_stream().map_err(|e| e.to_string())?;
    let mut scanner = gpu
        .scanner::<Add<u32>>(options)
        .map_err(|e| e.to_string())?;
    let tile = scanner.tile_items() as usize;
    // In default tiles, on any GPU of up to 160 SMs at 6 blocks each: under half the SMs
    // (small), over half of them (mid-size), past one wave (the default kernel).
    let sizes = [3 * tile + 1, 100 * tile + 5, (160 * 6 + 1) * tile + 3];
    let mut captured = CapturedScans::capture(&mut scanner, &stream, &sizes)?;
    for replay in 0..2 {
        captured.replay_and_check::<Add<u32>>(&stream, mode, rng, replay)?;
    }
    Ok(())
}

/// An empty scan launches nothing and needs nothing loaded: it captures without `prepare`, on a
/// fresh scanner and on one whose earlier scans loaded only the large-input shape, and the
/// captured graph then runs beside a real scan of the same scanner.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn empty_scans_capture_without_prepare() {
    let gpu = gpu();
    let stream = gpu.new_stream().expect("stream");
    let mut rng = Rng::new("empty captures");
    for algorithm in Algorithm::ALL {
        for in_place in [false, true] {
            let mut scanner = gpu
                .scanner::<Add<u32>>(opts(algorithm, ScanMode::Inclusive))
                .expect("scanner");
            let mut empty = Buffers::<u32>::new(&stream, 0, in_place);
            begin(&stream);
            let result = empty.scan(&mut scanner, &stream, 0);
            end(&stream).expect("an empty capture");
            result.unwrap_or_else(|e| panic!("{algorithm}, fresh scanner: {e}"));
            // A large scan outside the capture loads only the default shape.
            let n = 1usize << 22;
            let input = random_input::<u32>(&mut rng, n);
            let mut big = Buffers::<u32>::new(&stream, n, false);
            big.upload(&stream, &input);
            big.scan(&mut scanner, &stream, n).expect("direct scan");
            stream.synchronize().expect("sync");
            begin(&stream);
            let result = empty.scan(&mut scanner, &stream, 0);
            let graph = end(&stream).expect("the capture");
            result.unwrap_or_else(|e| panic!("{algorithm}, after a large scan: {e}"));
            graph.launch().expect("replay");
            first_mismatch(
                &expected::<Add<u32>>(&input, ScanMode::Inclusive),
                &big.download(&stream, n),
            )
            .unwrap_or_else(|e| panic!("{algorithm}: the large scan: {e}"));
        }
    }
    println!(
        "graphs (empty captures): {} cases passed",
        2 * Algorithm::ALL.len()
    );
}

/// What a capture gets instead of a broken capture: a typed error, with the capture still
/// usable afterwards.
#[test]
#[ignore = "needs an NVIDIA GPU: run scripts/build-gpu-bundle.sh bundle on a GPU machine"]
fn captures_that_cannot_work_are_typed_errors() {
    let gpu = gpu();
    let stream = gpu.new_stream().expect("stream");
    let n = 100_000usize;

    // Not prepared: the module and scratch would be loaded and allocated inside the capture.
    for algorithm in Algorithm::ALL {
        let mut scanner = gpu
            .scanner::<Add<u32>>(opts(algorithm, ScanMode::Inclusive))
            .expect("scanner");
        let mut b = Buffers::<u32>::new(&stream, n, false);
        begin(&stream);
        let result = b.scan(&mut scanner, &stream, n);
        let graph = end(&stream);
        assert!(
            matches!(
                result,
                Err(ScanError::NotPreparedForCapture { n: 100_000, .. })
            ),
            "{algorithm}: {result:?}"
        );
        println!("{algorithm}, not prepared: {}", result.unwrap_err());
        // The capture was left intact (and empty).
        graph.expect("the capture survives the refused scan");
        // Prepared for less than the captured scan needs.
        scanner.prepare(100, &stream).expect("prepare");
        begin(&stream);
        let result = b.scan(&mut scanner, &stream, n);
        end(&stream).expect("the capture survives");
        assert!(
            matches!(result, Err(ScanError::NotPreparedForCapture { .. })),
            "{algorithm} prepared for 100: {result:?}"
        );
        // prepare itself inside a capture.
        begin(&stream);
        let result = scanner.prepare(n as u64, &stream);
        end(&stream).expect("the capture survives");
        assert!(matches!(
            result,
            Err(ScanError::NotPreparedForCapture { .. })
        ));
    }

    // Last launch on another stream.
    let other = gpu.new_stream().expect("stream");
    let mut scanner = gpu
        .scanner::<Add<u32>>(ScanOptions::default())
        .expect("scanner");
    scanner.prepare(n as u64, &stream).expect("prepare");
    let mut b = Buffers::<u32>::new(&other, n, false);
    b.upload(&other, &vec![1; n]);
    b.scan(&mut scanner, &other, n).expect("direct scan");
    other.synchronize().expect("sync");
    let mut fresh = Buffers::<u32>::new(&stream, n, false);
    begin(&stream);
    let result = fresh.scan(&mut scanner, &stream, n);
    end(&stream).expect("the capture survives");
    assert!(
        matches!(result, Err(ScanError::CaptureAfterOtherStream)),
        "{result:?}"
    );
    println!("other stream: {}", result.unwrap_err());

    // Event tracking on, buffers last used outside the capture: cudarc's wait breaks the
    // capture, and the scan says why instead of launching into it.
    scanner.prepare(n as u64, &stream).expect("prepare");
    let mut used = Buffers::<u32>::new(&stream, n, false);
    used.upload(&stream, &vec![1; n]);
    stream.synchronize().expect("sync");
    begin(&stream);
    let result = used.scan(&mut scanner, &stream, n);
    let graph = end(&stream);
    assert!(
        matches!(result, Err(ScanError::CaptureInvalidated { .. })),
        "{result:?}"
    );
    assert!(graph.is_err(), "the capture was invalidated");
    println!("used outside: {}", result.unwrap_err());
    // The failed wait's driver error was reported as that error, not left for cudarc's next call.
    gpu.context()
        .check_err()
        .expect("no driver error left behind");

    // ... and the same buffers by raw pointer: nothing waits, the capture works.
    let input = random_input::<u32>(&mut Rng::new("raw"), n);
    used.upload(&stream, &input);
    let (in_ptr, out_ptr) = {
        let (i, _g1) = used.input.device_ptr(&stream);
        let (o, _g2) = used
            .output
            .as_mut()
            .expect("output")
            .device_ptr_mut(&stream);
        (i, o)
    };
    stream.synchronize().expect("sync");
    begin(&stream);
    // SAFETY: both buffers hold n u32 and are only used on `stream`.
    let result = unsafe { scanner.scan_device_ptr(&stream, in_ptr, out_ptr, n as u64) };
    let graph = end(&stream);
    result.expect("raw-pointer scan inside the capture");
    graph.expect("graph").launch().expect("replay");
    first_mismatch(
        &expected::<Add<u32>>(&input, ScanMode::Inclusive),
        &used.download(&stream, n),
    )
    .expect("raw-pointer replay");
}
