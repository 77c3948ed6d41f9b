//! Benchmark of the sharded scan across every GPU of the machine (one process, NCCL): for each
//! per-GPU shard size, each rank's time as a fraction of a device copy of its shard (copy time /
//! scan time, measured in the same run: 1.0 would be copy speed), and the speedup over one GPU
//! scanning the whole array (when it fits), for `i32` sums and an 8-byte struct op (affine maps).
//!
//! ```sh
//! NCCL_NVLS_ENABLE=0 cargo run --release --features nccl --example sharded_bench
//! NCCL_NVLS_ENABLE=0 cargo run --release --features nccl --example sharded_bench -- 16,20,26,28,30 20
//! ```
//!
//! Arguments: log2 of the per-GPU shard sizes (default 16,20,24,26,28,30) and repetitions
//! (default 20; the median is reported). Without the `nccl` feature, GPUs or libnccl it says so
//! and exits 0.
//!
//! For comparison (issue 17, 2 H200 over NVLink, 2^30 i32 per GPU): `torch.cumsum` per shard
//! plus an all-gather of the totals and an add of the offset runs at 0.32 of a shard copy; the
//! 3-pass scheme here is bounded by 0.67.

use scangen::{scan_op, ScanElement, ScanOp};

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Affine {
    pub a: f32,
    pub b: f32,
}

pub struct Compose;

#[scan_op]
impl ScanOp for Compose {
    type Elem = Affine;
    fn identity() -> Affine {
        Affine { a: 1.0, b: 0.0 }
    }
    fn combine(l: Affine, r: Affine) -> Affine {
        Affine {
            a: l.a * r.a,
            b: r.a * l.b + r.b,
        }
    }
}

pub struct Sum;

#[scan_op]
impl ScanOp for Sum {
    type Elem = i32;
    fn identity() -> i32 {
        0
    }
    fn combine(a: i32, b: i32) -> i32 {
        a.wrapping_add(b)
    }
}

#[cfg(feature = "nccl")]
mod bench {
    use super::*;
    use scangen::runtime::cudarc::driver::sys::CUevent_flags;
    use scangen::runtime::cudarc::driver::{
        CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits,
    };
    use scangen::runtime::sharded::nccl::{all_gpus, scan_all, scanners_for_devices};
    use scangen::runtime::{Gpu, ScanOptions};
    use std::sync::Arc;
    use std::time::Duration;

    type Res<T> = Result<T, Box<dyn std::error::Error>>;

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    }

    /// Milliseconds of `f` on each stream, timed with events, median of `reps`.
    fn time_per_stream(
        streams: &[Arc<CudaStream>],
        reps: usize,
        mut f: impl FnMut() -> Res<()>,
    ) -> Res<Vec<f64>> {
        let mut samples = vec![Vec::new(); streams.len()];
        for rep in 0..reps + 2 {
            let starts = streams
                .iter()
                .map(|s| s.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT)))
                .collect::<Result<Vec<_>, _>>()?;
            f()?;
            let ends = streams
                .iter()
                .map(|s| s.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT)))
                .collect::<Result<Vec<_>, _>>()?;
            for (i, (s, e)) in starts.iter().zip(&ends).enumerate() {
                let ms = s.elapsed_ms(e)? as f64;
                if rep >= 2 {
                    samples[i].push(ms);
                }
            }
        }
        Ok(samples.into_iter().map(median).collect())
    }

    fn run_op<Op: ScanOp>(name: &str, gpus: &[Gpu], log2s: &[u32], reps: usize) -> Res<()>
    where
        Op::Elem: DeviceRepr + ValidAsZeroBits,
    {
        let mut ranks =
            scanners_for_devices::<Op>(gpus, ScanOptions::default(), Duration::from_secs(120))?;
        let streams = gpus
            .iter()
            .map(|g| g.new_stream())
            .collect::<Result<Vec<_>, _>>()?;
        let elem = std::mem::size_of::<Op::Elem>();
        println!(
            "\n{name} ({elem}-byte elements), {} GPUs ({})",
            gpus.len(),
            gpus[0].name()
        );
        println!(
            "{:>6} {:>5} {:>11} {:>11} {:>9} {:>12} {:>9}",
            "shard", "rank", "sharded us", "copy us", "fraction", "1 GPU us", "speedup"
        );
        for &log2 in log2s {
            let n = 1usize << log2;
            let mut inputs: Vec<CudaSlice<Op::Elem>> = Vec::new();
            let mut outputs: Vec<CudaSlice<Op::Elem>> = Vec::new();
            for s in &streams {
                inputs.push(s.alloc_zeros(n)?);
                outputs.push(s.alloc_zeros(n)?);
            }
            for (r, s) in ranks.iter_mut().zip(&streams) {
                r.prepare(n as u64, s)?;
            }
            let in_ptrs: Vec<u64> = inputs
                .iter()
                .zip(&streams)
                .map(|(b, s)| b.device_ptr(s).0)
                .collect();
            let out_ptrs: Vec<u64> = outputs
                .iter_mut()
                .zip(&streams)
                .map(|(b, s)| b.device_ptr_mut(s).0)
                .collect();
            let lens = vec![n as u64; gpus.len()];
            let sharded = time_per_stream(&streams, reps, || {
                // SAFETY: each rank's buffers hold `n` elements on its device.
                unsafe { scan_all(&mut ranks, &streams, &in_ptrs, &out_ptrs, &lens)? };
                Ok(())
            })?;
            for (r, s) in ranks.iter().zip(&streams) {
                r.synchronize(s)?;
            }
            let copy = time_per_stream(&streams, reps, || {
                for (i, s) in streams.iter().enumerate() {
                    // The driver's copy needs the stream's own context current (the grouped scan
                    // leaves the last rank's bound).
                    s.context().bind_to_thread()?;
                    // SAFETY: both buffers hold `n` elements on this stream's device.
                    unsafe {
                        scangen::runtime::cudarc::driver::result::memcpy_dtod_async(
                            out_ptrs[i],
                            in_ptrs[i],
                            n * elem,
                            s.cu_stream(),
                        )?
                    };
                }
                Ok(())
            })?;
            drop((inputs, outputs));
            // One GPU scanning the whole array, when it fits.
            let single = (|| -> Res<f64> {
                let total = n * gpus.len();
                let s = gpus[0].new_stream()?;
                let mut scanner = gpus[0].scanner::<Op>(ScanOptions::default())?;
                let input = s.alloc_zeros::<Op::Elem>(total)?;
                let mut output = s.alloc_zeros::<Op::Elem>(total)?;
                scanner.prepare(total as u64, &s)?;
                let t = time_per_stream(std::slice::from_ref(&s), reps, || {
                    scanner.scan_device(&s, &input, &mut output)?;
                    Ok(())
                })?;
                s.synchronize()?;
                Ok(t[0])
            })();
            let slowest = sharded.iter().cloned().fold(0.0, f64::max);
            for r in 0..gpus.len() {
                let (single_us, speedup) = match &single {
                    Ok(ms) if r == 0 => {
                        (format!("{:.1}", ms * 1e3), format!("{:.2}x", ms / slowest))
                    }
                    Err(e) if r == 0 => (format!("n/a ({e})"), String::new()),
                    _ => (String::new(), String::new()),
                };
                println!(
                    "{:>6} {:>5} {:>11.1} {:>11.1} {:>9.3} {:>12} {:>9}",
                    format!("2^{log2}"),
                    r,
                    sharded[r] * 1e3,
                    copy[r] * 1e3,
                    copy[r] / sharded[r],
                    single_us,
                    speedup
                );
            }
        }
        Ok(())
    }

    pub fn run(log2s: &[u32], reps: usize) -> Res<bool> {
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            std::env::set_var("NCCL_NVLS_ENABLE", "0");
        }
        let gpus = match all_gpus()
            .and_then(|g| scangen::runtime::sharded::nccl::nccl_available().map(|()| g))
        {
            Ok(g) => g,
            Err(e) => {
                println!("sharded_bench: nothing to measure here: {e}");
                return Ok(false);
            }
        };
        run_op::<Sum>("i32 sum", &gpus, log2s, reps)?;
        run_op::<Compose>("affine composition", &gpus, log2s, reps)?;
        println!(
            "\nfraction = copy time / sharded scan time of the same shard on the same GPU \
             (1.0 = copy speed; 3 passes bound it at 0.67; torch cumsum + all-gather + add: 0.32 \
             at 2^30 i32 on 2 H200). speedup = one GPU's scan of the whole array / slowest rank."
        );
        Ok(true)
    }
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let log2s: Vec<u32> = match args.first() {
        Some(list) => list
            .split(',')
            .map(|s| s.trim().parse())
            .collect::<Result<_, _>>()?,
        None => vec![16, 20, 24, 26, 28, 30],
    };
    let reps: usize = match args.get(1) {
        Some(r) => r.parse()?,
        None => 20,
    };
    #[cfg(feature = "nccl")]
    {
        bench::run(&log2s, reps.max(1))?;
    }
    #[cfg(not(feature = "nccl"))]
    println!(
        "sharded_bench: built without the `nccl` feature (cargo run --release --features nccl \
         --example sharded_bench); nothing to measure for {log2s:?} x {reps}"
    );
    Ok(())
}
