//! Benchmark of the device-wide reduction (`Reducer`, the first pass of a sharded scan): its time
//! against reading the same bytes, for 1- to 8-byte primitives, on random data (each total checked
//! against the CPU once per size).
//!
//! ```sh
//! cargo run --release --example reduce_bench -- 24,28 20
//! ```
//!
//! Arguments: log2 of the sizes (default 24,28) and repetitions (default 20; the median is
//! reported). "read" is half the time of a device-to-device copy of the same bytes in the same
//! run (a copy reads and writes them once each), so `fraction = read / reduce` (1.0 = reading
//! speed). Without a GPU it says so and exits 0.

use rand::{rngs::StdRng, Rng, SeedableRng};
use scangen::runtime::builtin::Add;
use scangen::runtime::cudarc::driver::sys::CUevent_flags;
use scangen::runtime::cudarc::driver::{
    CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits,
};
use scangen::runtime::{Gpu, ScanOp};
use std::sync::Arc;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Milliseconds of `f` on `stream`, timed with events, median of `reps` after two warm-ups.
fn time(stream: &Arc<CudaStream>, reps: usize, mut f: impl FnMut() -> Res<()>) -> Res<f64> {
    let mut samples = Vec::new();
    for rep in 0..reps + 2 {
        let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        f()?;
        let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        let ms = start.elapsed_ms(&end)? as f64;
        if rep >= 2 {
            samples.push(ms);
        }
    }
    Ok(median(samples))
}

/// Random values of one primitive type, and their wrapping/float sum on the CPU.
trait Sample: DeviceRepr + ValidAsZeroBits + Copy + PartialEq + std::fmt::Debug {
    fn random(rng: &mut StdRng) -> Self;
    fn fold(values: &[Self]) -> Self;
}

macro_rules! sample_int {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn random(rng: &mut StdRng) -> Self {
                rng.gen()
            }
            fn fold(values: &[Self]) -> Self {
                values.iter().fold(0, |a, &b| a.wrapping_add(b))
            }
        }
    )*};
}
sample_int!(u8, i32, i64);

fn run<T: Sample>(name: &str, gpu: &Gpu, log2s: &[u32], reps: usize) -> Res<()>
where
    Add<T>: ScanOp<Elem = T>,
{
    let stream = gpu.new_stream()?;
    let mut reducer = gpu.reducer::<Add<T>>()?;
    let mut rng = StdRng::seed_from_u64(0x5ca9);
    for &log2 in log2s {
        let n = 1usize << log2;
        let host: Vec<T> = (0..n).map(|_| T::random(&mut rng)).collect();
        let input = stream.clone_htod(&host)?;
        let mut scratch = stream.alloc_zeros::<T>(n)?;
        let mut total = stream.alloc_zeros::<T>(1)?;
        reducer.prepare(n as u64, &stream)?;
        let in_ptr = input.device_ptr(&stream).0;
        let total_ptr = total.device_ptr_mut(&stream).0;
        let scratch_ptr = scratch.device_ptr_mut(&stream).0;
        let reduce = time(&stream, reps, || {
            // SAFETY: `input` holds n elements, `total` one, both on this stream's device.
            unsafe { reducer.reduce_device_ptr(&stream, in_ptr, n as u64, 0, total_ptr)? };
            Ok(())
        })?;
        let got = stream.clone_dtoh(&total)?[0];
        let want = T::fold(&host);
        if got != want {
            return Err(format!("{name} 2^{log2}: total {got:?}, the CPU's {want:?}").into());
        }
        let bytes = n * std::mem::size_of::<T>();
        let copy = time(&stream, reps, || {
            // SAFETY: both buffers hold `bytes` bytes on this stream's device.
            unsafe {
                scangen::runtime::cudarc::driver::result::memcpy_dtod_async(
                    scratch_ptr,
                    in_ptr,
                    bytes,
                    stream.cu_stream(),
                )?
            };
            Ok(())
        })?;
        let read = copy / 2.0;
        println!(
            "| {name} | 2^{log2} | {:.1} | {:.1} | {:.3} | {:.0} |",
            reduce * 1e3,
            read * 1e3,
            read / reduce,
            bytes as f64 / (reduce * 1e-3) / 1e9
        );
    }
    Ok(())
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let log2s: Vec<u32> = match args.first() {
        Some(list) => list
            .split(',')
            .map(|s| s.trim().parse())
            .collect::<Result<_, _>>()?,
        None => vec![24, 28],
    };
    let reps: usize = match args.get(1) {
        Some(r) => r.parse()?,
        None => 20,
    };
    let gpu = match Gpu::new(0) {
        Ok(gpu) => gpu,
        Err(e) => {
            println!("reduce_bench: no GPU here ({e}); nothing to measure");
            return Ok(());
        }
    };
    println!("reduce on {} (checked against the CPU)", gpu.name());
    println!("| type | n | reduce us | read us (copy / 2) | fraction | GB/s |");
    println!("|---|---|---|---|---|---|");
    run::<u8>("u8", &gpu, &log2s, reps)?;
    run::<i32>("i32", &gpu, &log2s, reps)?;
    run::<i64>("i64", &gpu, &log2s, reps)?;
    Ok(())
}
