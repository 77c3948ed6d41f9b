//! Shared by the CPU and GPU tests: each function against a plain loop, for random tensors
//! of several shapes and layouts, every mode, every dtype.

#![allow(dead_code)]

use candle_core::{DType, Device, Result, Tensor, WithDType};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use scangen::half::{bf16, f16};
use scangen::{scan_op, ScanOp};
use scangen_candle::ScanOpts;

pub const MODES: [ScanOpts; 4] = [
    ScanOpts {
        exclusive: false,
        reverse: false,
    },
    ScanOpts {
        exclusive: true,
        reverse: false,
    },
    ScanOpts {
        exclusive: false,
        reverse: true,
    },
    ScanOpts {
        exclusive: true,
        reverse: true,
    },
];

pub const DTYPES: [DType; 6] = [
    DType::U32,
    DType::I64,
    DType::F32,
    DType::F64,
    DType::F16,
    DType::BF16,
];

/// The last non-zero element so far (0 before any): associative, not commutative, so a scan
/// that combined in the wrong order, or scanned the wrong way, shows.
pub struct LastNonZero;

#[scan_op]
impl ScanOp for LastNonZero {
    type Elem = u32;
    fn identity() -> u32 {
        0
    }
    fn combine(l: u32, r: u32) -> u32 {
        if r == 0 {
            l
        } else {
            r
        }
    }
}

/// Which function is under test, and the values it gets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Func {
    Cumsum,
    Cumprod,
    Cummax,
    Cummin,
    Logcumsumexp,
    LastNonZero,
}

pub const FUNCS: [Func; 5] = [
    Func::Cumsum,
    Func::Cumprod,
    Func::Cummax,
    Func::Cummin,
    Func::Logcumsumexp,
];

impl Func {
    pub fn applies_to(self, dtype: DType) -> bool {
        match self {
            Func::Logcumsumexp => dtype.is_float(),
            Func::LastNonZero => dtype == DType::U32,
            _ => true,
        }
    }

    pub fn run(self, t: &Tensor, dim: usize, opts: ScanOpts) -> Result<Tensor> {
        match self {
            Func::Cumsum => scangen_candle::cumsum_with(t, dim, opts),
            Func::Cumprod => scangen_candle::cumprod_with(t, dim, opts),
            Func::Cummax => scangen_candle::cummax_with(t, dim, opts),
            Func::Cummin => scangen_candle::cummin_with(t, dim, opts),
            Func::Logcumsumexp => scangen_candle::logcumsumexp_with(t, dim, opts),
            Func::LastNonZero => scangen_candle::scan::<LastNonZero, _>(t, dim, opts),
        }
    }

    /// Random values for which the float scans are exact in any order (small integers for
    /// sums, powers of two for products), so the comparison can be exact; integers over their
    /// whole range (wrapping).
    fn sample(self, dtype: DType, rng: &mut StdRng) -> f64 {
        let small_float = matches!(dtype, DType::F16 | DType::BF16);
        match self {
            Func::Cumsum if small_float => rng.gen_range(-1..=1) as f64,
            Func::Cumsum => rng.gen_range(-1000..=1000) as f64,
            Func::Cumprod => [-2.0, -1.0, -0.5, 0.5, 1.0, 2.0][rng.gen_range(0..6)],
            Func::Cummax | Func::Cummin if rng.gen_ratio(1, 50) => f64::NAN,
            Func::Cummax | Func::Cummin | Func::Logcumsumexp => rng.gen_range(-5.0..5.0),
            Func::LastNonZero => unreachable!("integers only"),
        }
    }
}

/// A tensor of `dims` with values for `func` (integers: uniform over the type, or sparse
/// non-zeros for `LastNonZero`).
pub fn random(
    func: Func,
    dtype: DType,
    dims: &[usize],
    rng: &mut StdRng,
    device: &Device,
) -> Result<Tensor> {
    let n: usize = dims.iter().product();
    let t = match dtype {
        DType::U32 => {
            let v: Vec<u32> = (0..n)
                .map(|_| match func {
                    Func::LastNonZero if rng.gen_ratio(2, 3) => 0,
                    Func::Cummax | Func::Cummin => rng.gen_range(0..1000),
                    _ => rng.gen(),
                })
                .collect();
            Tensor::from_vec(v, dims, device)?
        }
        DType::I64 => {
            let v: Vec<i64> = (0..n)
                .map(|_| match func {
                    Func::Cummax | Func::Cummin => rng.gen_range(-1000..1000),
                    _ => rng.gen(),
                })
                .collect();
            Tensor::from_vec(v, dims, device)?
        }
        _ => {
            let v: Vec<f64> = (0..n).map(|_| func.sample(dtype, rng)).collect();
            // Converted on the host: candle's CUDA `to_dtype` launches an empty grid for an
            // empty tensor, which the driver rejects (CUDA_ERROR_INVALID_VALUE).
            Tensor::from_vec(v, dims, &Device::Cpu)?
                .to_dtype(dtype)?
                .to_device(device)?
        }
    };
    Ok(t)
}

/// The plain loop: scans `x` (logical order, shape `dims`) along `dim`, accumulating in `R`.
#[allow(clippy::too_many_arguments)]
fn reference<T: Copy, R: Copy>(
    x: &[T],
    dims: &[usize],
    dim: usize,
    opts: ScanOpts,
    identity: R,
    to_acc: impl Fn(T) -> R,
    combine: impl Fn(R, R) -> R,
    from_acc: impl Fn(R) -> T,
) -> Vec<T> {
    let a: usize = dims[..dim].iter().product();
    let d = dims[dim];
    let b: usize = dims[dim + 1..].iter().product();
    let mut out = x.to_vec();
    for i in 0..a {
        for j in 0..b {
            // The first element is taken as it is, not combined with the identity (which
            // for max/min is no identity for NaN), as scans do.
            let mut acc: Option<R> = None;
            let order: Vec<usize> = if opts.reverse {
                (0..d).rev().collect()
            } else {
                (0..d).collect()
            };
            for k in order {
                let idx = (i * d + k) * b + j;
                let v = to_acc(x[idx]);
                let next = acc.map_or(v, |a| combine(a, v));
                out[idx] = from_acc(if opts.exclusive {
                    acc.unwrap_or(identity)
                } else {
                    next
                });
                acc = Some(next);
            }
        }
    }
    out
}

fn log_add_exp(l: f64, r: f64) -> f64 {
    if l == f64::NEG_INFINITY {
        return r;
    }
    if r == f64::NEG_INFINITY {
        return l;
    }
    let m = l.max(r);
    m + ((l - m).exp() + (r - m).exp()).ln()
}

/// An integer type's zero, one, minimum, maximum, wrapping add and wrapping multiply.
type IntOps<T> = (T, T, T, T, fn(T, T) -> T, fn(T, T) -> T);

fn int_reference<T: WithDType + Copy>(
    func: Func,
    x: &[T],
    dims: &[usize],
    dim: usize,
    opts: ScanOpts,
    ops: IntOps<T>,
) -> Vec<T> {
    let (zero, one, min, max, add, mul) = ops;
    let id = |v| v;
    match func {
        Func::Cumsum => reference(x, dims, dim, opts, zero, id, add, id),
        Func::Cumprod => reference(x, dims, dim, opts, one, id, mul, id),
        Func::Cummax => reference(
            x,
            dims,
            dim,
            opts,
            min,
            id,
            |a, b| if a < b { b } else { a },
            id,
        ),
        Func::Cummin => reference(
            x,
            dims,
            dim,
            opts,
            max,
            id,
            |a, b| if b < a { b } else { a },
            id,
        ),
        Func::LastNonZero => reference(
            x,
            dims,
            dim,
            opts,
            zero,
            id,
            |l, r| if r == zero { l } else { r },
            id,
        ),
        Func::Logcumsumexp => unreachable!("floats only"),
    }
}

fn float_reference(func: Func, x: &[f64], dims: &[usize], dim: usize, opts: ScanOpts) -> Vec<f64> {
    let id = |v| v;
    match func {
        Func::Cumsum => reference(x, dims, dim, opts, 0.0, id, |a, b| a + b, id),
        Func::Cumprod => reference(x, dims, dim, opts, 1.0, id, |a, b| a * b, id),
        Func::Cummax => reference(x, dims, dim, opts, f64::NEG_INFINITY, id, f64::max, id),
        Func::Cummin => reference(x, dims, dim, opts, f64::INFINITY, id, f64::min, id),
        Func::Logcumsumexp => reference(x, dims, dim, opts, f64::NEG_INFINITY, id, log_add_exp, id),
        Func::LastNonZero => unreachable!("integers only"),
    }
}

/// Rounds an `f64` to `dtype` and back (the reference's one rounding of each output).
fn round_to(dtype: DType, v: f64) -> f64 {
    match dtype {
        DType::F32 => v as f32 as f64,
        DType::F16 => f16::from_f64(v).to_f64(),
        DType::BF16 => bf16::from_f64(v).to_f64(),
        _ => v,
    }
}

/// Runs `func` on `t` along `dim` and compares with the plain loop; panics with the case.
pub fn check(func: Func, t: &Tensor, dim: usize, opts: ScanOpts, case: &str) -> Result<()> {
    let got = func.run(t, dim, opts)?;
    let dims = t.dims().to_vec();
    assert_eq!(got.dims(), &dims[..], "{case}: shape");
    assert_eq!(got.dtype(), t.dtype(), "{case}: dtype");
    let flat = |t: &Tensor| t.flatten_all()?.to_device(&Device::Cpu);
    let (x, got) = (flat(t)?, flat(&got)?);
    let what = format!(
        "{case}: {func:?} {:?} dim {dim} of {dims:?} {opts:?}",
        t.dtype()
    );
    match t.dtype() {
        DType::U32 => {
            let ops: IntOps<u32> = (0, 1, 0, u32::MAX, u32::wrapping_add, u32::wrapping_mul);
            let want = int_reference(func, &x.to_vec1::<u32>()?, &dims, dim, opts, ops);
            assert_eq!(got.to_vec1::<u32>()?, want, "{what}");
        }
        DType::I64 => {
            let ops: IntOps<i64> = (
                0,
                1,
                i64::MIN,
                i64::MAX,
                i64::wrapping_add,
                i64::wrapping_mul,
            );
            let want = int_reference(func, &x.to_vec1::<i64>()?, &dims, dim, opts, ops);
            assert_eq!(got.to_vec1::<i64>()?, want, "{what}");
        }
        dtype => {
            let x = x.to_dtype(DType::F64)?.to_vec1::<f64>()?;
            let got = got.to_dtype(DType::F64)?.to_vec1::<f64>()?;
            let want: Vec<f64> = float_reference(func, &x, &dims, dim, opts)
                .into_iter()
                .map(|v| round_to(dtype, v))
                .collect();
            // logcumsumexp rounds at every step (in f32 for the 16-bit types): a relative
            // error growing with the scanned length, plus the output's own rounding.
            let steps = dims[dim] as f64;
            let tol = match (func, dtype) {
                (Func::Logcumsumexp, DType::F64) => 4.0 * f64::EPSILON * steps,
                (Func::Logcumsumexp, DType::F32) => 2.0 * f32::EPSILON as f64 * steps,
                (Func::Logcumsumexp, DType::F16) => 1e-3 + 2.0 * f32::EPSILON as f64 * steps,
                (Func::Logcumsumexp, _) => 8e-3 + 2.0 * f32::EPSILON as f64 * steps,
                _ => 0.0,
            };
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                // A run of NaNs at the start (in scan order) is NaN or the identity (±inf):
                // scangen's scans differ on whether the first element is combined with the
                // identity, which only shows where max/min's identity is not one (NaN).
                let nan_prefix = w.is_nan() && matches!(func, Func::Cummax | Func::Cummin);
                let ok = (g.is_nan() && w.is_nan())
                    || (nan_prefix && g.is_infinite())
                    || g == w
                    || (g - w).abs() <= tol * w.abs().max(1.0);
                assert!(ok, "{what}: element {i}: got {g}, want {w}");
            }
        }
    }
    Ok(())
}

/// The shapes and layouts every function is tested on: `(name, tensor, dims to scan)`.
pub fn cases(
    func: Func,
    dtype: DType,
    seed: u64,
    device: &Device,
) -> Result<Vec<(String, Tensor, Vec<usize>)>> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::new();
    for dims in [
        vec![0],
        vec![1],
        vec![13],
        vec![1000],
        vec![4097],
        vec![5, 7],
        vec![1, 9],
        vec![9, 1],
        vec![33, 64],
        vec![3, 17, 4],
        vec![2, 3, 4, 5],
        vec![4, 0, 3],
    ] {
        let t = random(func, dtype, &dims, &mut rng, device)?;
        let all = (0..dims.len()).collect();
        out.push((format!("contiguous {dims:?}"), t, all));
    }
    let t = random(func, dtype, &[7, 5], &mut rng, device)?.t()?;
    out.push(("transposed (7, 5)".into(), t, vec![0, 1]));
    let t = random(func, dtype, &[4, 10], &mut rng, device)?.narrow(1, 2, 5)?;
    out.push(("narrowed (4, 10)[:, 2..7]".into(), t, vec![0, 1]));
    let t = random(func, dtype, &[3, 8, 6], &mut rng, device)?.narrow(1, 1, 5)?;
    out.push(("narrowed (3, 8, 6)[:, 1..6]".into(), t, vec![0, 1, 2]));
    let t = random(func, dtype, &[3, 5, 4], &mut rng, device)?.transpose(0, 2)?;
    out.push(("transposed (3, 5, 4) 0<->2".into(), t, vec![0, 1, 2]));
    Ok(out)
}

/// Every function, dtype, shape, layout and mode on `device`.
pub fn check_all(device: &Device) -> Result<usize> {
    let jobs: Vec<(usize, Func, usize, DType)> = FUNCS
        .iter()
        .chain([&Func::LastNonZero])
        .enumerate()
        .flat_map(|(f, func)| {
            DTYPES
                .into_iter()
                .enumerate()
                .filter(|&(_, dtype)| func.applies_to(dtype))
                .map(move |(k, dtype)| (f, *func, k, dtype))
        })
        .collect();
    // Each (function, dtype) in its own worker, as many as there are cores: a first run is mostly
    // NVRTC compiles of the shapes' kernels (seconds each), which the scanner cache runs side by
    // side for different operators.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(jobs.len()));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let counts: Vec<Result<usize>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut count = 0;
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&(f, func, k, dtype)) = jobs.get(i) else {
                            return Ok(count);
                        };
                        count += check_function(device, func, dtype, (f * 16 + k) as u64)?;
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    counts.into_iter().sum()
}

/// Every case, dimension and mode of one function on one dtype; the number of comparisons.
fn check_function(device: &Device, func: Func, dtype: DType, seed: u64) -> Result<usize> {
    // Progress with times: most of a first run is compiling each shape's kernels, and a run
    // stopped at its time limit should say how far it got.
    let started = std::time::Instant::now();
    let mut count = 0;
    for (case, t, dims) in cases(func, dtype, seed, device)? {
        for dim in dims {
            for opts in MODES {
                check(func, &t, dim, opts, &case)?;
                count += 1;
            }
        }
    }
    println!(
        "{func:?} {dtype:?}: {count} comparisons in {:.2?}",
        started.elapsed()
    );
    Ok(count)
}
