//! A pipeline captured once into a CUDA graph and replayed: each step fills a buffer from a seed
//! (a kernel), takes the exclusive sum of keep flags (the scan), and scatters the kept values to
//! their positions (a kernel that uses the scan's result): stream compaction, replayed with a
//! new seed each time and checked against the same steps on the CPU. Without a GPU the same
//! pipeline runs on the CPU backend.
//!
//! `cargo run --release --example graph_pipeline`

use scangen::builtin::Add;
use scangen::runtime::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use scangen::runtime::cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use scangen::runtime::cudarc::nvrtc::compile_ptx;
use scangen::runtime::{auto, AnyScanner, ScanOptions};

const N: usize = 100_003;
const STEPS: u64 = 20;

/// The value at index `i` for `seed`: the same hash in Rust and in the fill kernel.
fn value(seed: u64, i: u64) -> i32 {
    let mut x = seed.wrapping_add(i).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 32;
    (x % 2001) as i32 - 1000
}

fn keep(v: i32) -> bool {
    v % 7 == 0 || v > 900
}

/// The step on the CPU: what every replay must produce.
fn compact(seed: u64) -> Vec<i32> {
    (0..N as u64)
        .map(|i| value(seed, i))
        .filter(|&v| keep(v))
        .collect()
}

const KERNELS: &str = r#"
__device__ int value(unsigned long long seed, unsigned long long i) {
    unsigned long long x = (seed + i) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (int)(x % 2001ull) - 1000;
}
extern "C" __global__ void fill(const unsigned long long* seed, int* values, unsigned int* flags, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = value(*seed, i);
    values[i] = v;
    flags[i] = (v % 7 == 0 || v > 900) ? 1u : 0u;
}
extern "C" __global__ void scatter(const int* values, const unsigned int* flags, const unsigned int* positions,
                                   int* out, unsigned int* kept, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (flags[i]) out[positions[i]] = values[i];
    if (i == n - 1) *kept = positions[i] + flags[i];
}
"#;

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scanner = auto::<Add<u32>>(ScanOptions::default().exclusive())?;
    println!("backend: {}", scanner.backend_name());
    match scanner {
        AnyScanner::Gpu(scanner) => on_gpu(scanner),
        AnyScanner::Cpu(mut scanner) => {
            // The same three steps, run directly: a CPU has nothing to capture.
            for step in 0..STEPS {
                let seed = 1000 + step;
                let values: Vec<i32> = (0..N as u64).map(|i| value(seed, i)).collect();
                let flags: Vec<u32> = values.iter().map(|&v| u32::from(keep(v))).collect();
                let positions = scanner.scan(&flags)?;
                let kept = (positions[N - 1] + flags[N - 1]) as usize;
                let mut out = vec![0; kept];
                for i in 0..N {
                    if flags[i] == 1 {
                        out[positions[i] as usize] = values[i];
                    }
                }
                assert_eq!(out, compact(seed), "step {step}");
            }
            println!("{STEPS} steps of fill -> scan -> scatter on the CPU, verified");
            Ok(())
        }
    }
}

fn on_gpu(
    mut scanner: scangen::runtime::Scanner<Add<u32>>,
) -> Result<(), Box<dyn std::error::Error>> {
    let gpu = scanner.gpu().clone();
    // cudarc's event tracking (its default) records each kernel's use of a buffer; inside a
    // capture those records are captured events, and the uploads and downloads between replays
    // would then wait on them, which CUDA rejects. Everything here runs on one stream, in order,
    // so the pipeline's buffers do without tracking. (The scan itself records nothing inside a
    // capture and works either way.)
    // SAFETY: the buffers created below are only used on `stream`, and freed after it finishes.
    unsafe { gpu.context().disable_event_tracking() };
    let stream = gpu.new_stream()?;
    let module = gpu.context().load_module(compile_ptx(KERNELS)?)?;
    let (fill, scatter) = (
        module.load_function("fill")?,
        module.load_function("scatter")?,
    );

    // SAFETY: every buffer is written by the pipeline (or the seed upload) before it is read.
    let mut seed: CudaSlice<u64> = unsafe { stream.alloc(1) }?;
    let mut values: CudaSlice<i32> = unsafe { stream.alloc(N) }?;
    let mut flags: CudaSlice<u32> = unsafe { stream.alloc(N) }?;
    let mut positions: CudaSlice<u32> = unsafe { stream.alloc(N) }?;
    let mut out: CudaSlice<i32> = unsafe { stream.alloc(N) }?;
    let mut kept: CudaSlice<u32> = unsafe { stream.alloc(1) }?;
    let n = N as u64;
    let config = LaunchConfig::for_num_elems(N as u32);

    // Load the scan's kernels and size its scratch now: a capture cannot do either.
    scanner.prepare(n, &stream)?;
    stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL)?;
    let recorded = (|| -> Result<(), Box<dyn std::error::Error>> {
        let mut launch = stream.launch_builder(&fill);
        launch.arg(&seed).arg(&mut values).arg(&mut flags).arg(&n);
        // SAFETY: the arguments match `fill`'s signature; every buffer holds `n` elements.
        unsafe { launch.launch(config) }?;
        scanner.scan_device(&stream, &flags, &mut positions)?;
        let mut launch = stream.launch_builder(&scatter);
        launch
            .arg(&values)
            .arg(&flags)
            .arg(&positions)
            .arg(&mut out)
            .arg(&mut kept)
            .arg(&n);
        // SAFETY: as above, for `scatter`.
        unsafe { launch.launch(config) }?;
        Ok(())
    })();
    let graph = stream.end_capture(CUgraphInstantiate_flags(0))?;
    recorded?;
    let graph = graph.ok_or("the capture recorded nothing")?;

    for step in 0..STEPS {
        let seed_value = 1000 + step;
        stream.memcpy_htod(&[seed_value], &mut seed)?;
        graph.launch()?;
        let count = stream.clone_dtoh(&kept)?[0] as usize;
        let got = stream.clone_dtoh(&out.slice(..count))?;
        stream.synchronize()?;
        assert_eq!(got, compact(seed_value), "replay {step}");
    }
    println!("{STEPS} replays of one captured fill -> scan -> scatter graph, verified");
    drop(graph);
    stream.synchronize()?;
    // SAFETY: buffers created from here on track their uses again.
    unsafe { gpu.context().enable_event_tracking() };
    Ok(())
}
