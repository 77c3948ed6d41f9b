//! scangen_candle::cumsum beside candle's own `Tensor::cumsum` (a matmul with an `n x n`
//! upper-triangular matrix: O(n²) time and memory along the scanned dimension).
//!
//! ```sh
//! cargo run --release -p scangen-candle --features candle --example bench            # CPU
//! cargo run --release -p scangen-candle --features cuda --example bench -- --cuda    # GPU 0
//! cargo run ... --example bench -- --elems 4194304 --reps 5                            # smaller
//! ```
//!
//! Shapes: `rows x cols` f32 matrices of `--elems` elements (default 2^24), scanned along the
//! rows (dim 1, each row on its own) and down the columns (dim 0), plus a 1-D 2^24. candle's
//! cumsum builds the triangle as a u8 mask, then as the tensor's dtype: about `5 n²` bytes for
//! f32, `n` the scanned length (2^16 -> 21 GB, 2^24 -> 1.4 PB). On the CPU it is skipped when
//! that exceeds `--candle-budget-gib` (default 8: an allocation that large aborts or swaps
//! rather than failing) or its `rows * n²` multiply-adds exceed 2^36; on a GPU it is tried and
//! its error (out of memory) printed.

use candle_core::{Device, Result, Tensor};
use std::time::{Duration, Instant};

struct Args {
    cuda: bool,
    elems: usize,
    reps: usize,
    budget_gib: f64,
}

fn args() -> Args {
    let mut a = Args {
        cuda: false,
        elems: 1 << 24,
        reps: 10,
        budget_gib: 8.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || -> String { it.next().expect("a value after the flag") };
        match arg.as_str() {
            "--cuda" => a.cuda = true,
            "--elems" => a.elems = value().parse().expect("--elems N"),
            "--reps" => a.reps = value().parse().expect("--reps N"),
            "--candle-budget-gib" => a.budget_gib = value().parse().expect("--candle-budget-gib G"),
            other => panic!("unknown argument {other}; see the example's doc comment"),
        }
    }
    a
}

/// Median wall time of `reps` runs of `f` (after one warm-up), the device synchronised.
fn time(device: &Device, reps: usize, mut f: impl FnMut() -> Result<Tensor>) -> Result<Duration> {
    f()?;
    device.synchronize()?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        let out = f()?;
        device.synchronize()?;
        times.push(start.elapsed());
        drop(out);
    }
    times.sort();
    Ok(times[reps / 2])
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn shape(dims: &[usize]) -> String {
    let d: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    d.join(" x ")
}

fn main() -> Result<()> {
    let a = args();
    let device = if a.cuda {
        Device::new_cuda(0)?
    } else {
        Device::Cpu
    };
    println!("device: {device:?}; f32; median of {} runs", a.reps);
    println!("| shape | dim | scan length | scangen ms | scangen GB/s | candle ms | speedup |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut shapes: Vec<Vec<usize>> = vec![vec![1 << 24]];
    for rows_log in [4u32, 8, 12, 16, 20] {
        let rows = 1usize << rows_log;
        if rows <= a.elems {
            shapes.push(vec![rows, a.elems / rows]);
        }
    }
    for dims in shapes {
        let x = Tensor::rand(0f32, 1f32, &dims[..], &device)?;
        let elems: usize = dims.iter().product();
        for dim in (0..dims.len()).rev() {
            let n = dims[dim];
            if n == 1 {
                continue;
            }
            let ours = time(&device, a.reps, || scangen_candle::cumsum(&x, dim))?;
            let bytes = 2.0 * 4.0 * elems as f64;
            let gbs = bytes / ours.as_secs_f64() / 1e9;
            let triangle_bytes = 5.0 * (n as f64) * (n as f64);
            let multiply_adds = elems as f64 * n as f64;
            let theirs = if !a.cuda && triangle_bytes > a.budget_gib * (1u64 << 30) as f64 {
                format!(
                    "skipped: its {n} x {n} triangle needs {:.1} GB",
                    triangle_bytes / 1e9
                )
            } else if !a.cuda && multiply_adds > (1u64 << 36) as f64 {
                format!("skipped: {multiply_adds:.1e} multiply-adds")
            } else {
                match time(&device, a.reps.min(3), || x.cumsum(dim)) {
                    Ok(t) => format!("{} | {:.1}x", ms(t), t.as_secs_f64() / ours.as_secs_f64()),
                    Err(e) => format!(
                        "failed ({:.1} GB triangle): {}",
                        triangle_bytes / 1e9,
                        e.to_string().lines().next().unwrap_or_default()
                    ),
                }
            };
            let theirs = if theirs.contains(" | ") {
                theirs
            } else {
                format!("{theirs} | -")
            };
            println!(
                "| {} | {dim} | {n} | {} | {gbs:.1} | {theirs} |",
                shape(&dims),
                ms(ours)
            );
        }
    }
    Ok(())
}
