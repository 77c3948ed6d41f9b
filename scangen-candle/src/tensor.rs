//! Scans of candle tensors: the public functions and the custom op behind them.

use crate::ops::{LogAddExpF32, LogAddExpF64};
use candle_core::{
    shape::Dim, CpuStorage, CustomOp1, DType, Layout, Result, Shape, Tensor, WithDType,
};
use scangen::builtin::{Add, Max, Min, Mul};
use scangen::half::{bf16, f16};
use scangen::runtime::{CpuScanner, HostSegments, ScanError, ScanOptions, Segments};
use scangen::{ScanElement, ScanOp};
use std::marker::PhantomData;

/// How to scan: inclusive or exclusive, forward or reverse. The default is an inclusive
/// forward scan (`torch.cumsum`'s meaning).
///
/// * inclusive: `out[i] = x[0] ⊕ … ⊕ x[i]`; exclusive: `out[i] = x[0] ⊕ … ⊕ x[i-1]`, the
///   operator's identity at `i = 0`.
/// * reverse: the same from the other end (a suffix scan): inclusive
///   `out[i] = x[n-1] ⊕ … ⊕ x[i]`, exclusive `out[i] = x[n-1] ⊕ … ⊕ x[i+1]`. Non-commutative
///   operators combine in that order (the later element on the left).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ScanOpts {
    /// Leave each element out of its own result.
    pub exclusive: bool,
    /// Scan from the last element to the first.
    pub reverse: bool,
}

impl ScanOpts {
    /// Inclusive, forward (the default).
    pub fn inclusive() -> ScanOpts {
        ScanOpts::default()
    }

    /// Exclusive, forward.
    pub fn exclusive() -> ScanOpts {
        ScanOpts {
            exclusive: true,
            reverse: false,
        }
    }

    /// The same scan from the other end.
    pub fn reverse(self) -> ScanOpts {
        ScanOpts {
            reverse: true,
            ..self
        }
    }

    /// scangen's options for this scan (no segments yet).
    pub(crate) fn scan_options(self) -> ScanOptions {
        let mut opts = ScanOptions::default();
        if self.exclusive {
            opts = opts.exclusive();
        }
        if self.reverse {
            opts = opts.reverse();
        }
        opts
    }
}

/// Element types a scan can run on: a candle dtype that is also a scangen element (and, with
/// the `cuda` feature, a cudarc device type). Implemented for `u32`, `i64`, `f32`, `f64`,
/// `half::f16` and `half::bf16`.
pub trait ScanDType: WithDType + ScanElement + crate::cuda::CudaElem {}

impl ScanDType for u32 {}
impl ScanDType for i64 {}
impl ScanDType for f32 {}
impl ScanDType for f64 {}
impl ScanDType for f16 {}
impl ScanDType for bf16 {}

/// A scangen error as a candle error, keeping scangen's message (`Error::Wrapped`).
pub(crate) fn to_candle(e: ScanError) -> candle_core::Error {
    candle_core::Error::wrap(e)
}

/// Scans `t` along `dim` with any scangen operator whose element is the tensor's dtype
/// (`Op::Elem::DTYPE == t.dtype()`, else an error naming both).
///
/// Works on candle's CPU device (scangen's CPU backend) and, with the `cuda` feature, on its
/// CUDA devices (scangen's kernels on candle's stream and buffers). A tensor that is not
/// contiguous is made contiguous first (one copy). The result is a new contiguous tensor of
/// the same shape; no gradient is recorded.
///
/// ```
/// use candle_core::{Device, Tensor};
/// use scangen::builtin::Max;
/// use scangen_candle::{scan, ScanOpts};
///
/// # fn main() -> candle_core::Result<()> {
/// let t = Tensor::new(&[[3u32, 1, 4], [1, 5, 9]], &Device::Cpu)?;
/// // Running maximum down the columns, from the bottom row up.
/// let m = scan::<Max<u32>, _>(&t, 0, ScanOpts::inclusive().reverse())?;
/// assert_eq!(m.to_vec2::<u32>()?, [[3, 5, 9], [1, 5, 9]]);
/// # Ok(())
/// # }
/// ```
pub fn scan<Op, D>(t: &Tensor, dim: D, opts: ScanOpts) -> Result<Tensor>
where
    Op: ScanOp + 'static,
    Op::Elem: ScanDType,
    D: Dim,
{
    let dim = dim.to_index(t.shape(), "scan")?;
    let want = <Op::Elem as WithDType>::DTYPE;
    if t.dtype() != want {
        candle_core::bail!(
            "scangen-candle: the operator scans {want:?} elements, the tensor is {:?}",
            t.dtype()
        );
    }
    if t.elem_count() == 0 {
        // The scan of nothing is nothing, of the same shape; candle's CUDA copy kernels (a
        // strided empty tensor made contiguous) would launch an empty grid, which the driver
        // refuses.
        return Ok(t.detach());
    }
    let t = t.contiguous()?;
    t.apply_op1_no_bwd(&TensorScan::<Op> {
        dim,
        opts,
        _op: PhantomData,
    })
}

macro_rules! builtin_by_dtype {
    ($name:literal, $t:expr, $dim:expr, $opts:expr, $op:ident) => {{
        let (t, dim, opts) = ($t, $dim, $opts);
        match t.dtype() {
            DType::U32 => scan::<$op<u32>, _>(t, dim, opts),
            DType::I64 => scan::<$op<i64>, _>(t, dim, opts),
            DType::F32 => scan::<$op<f32>, _>(t, dim, opts),
            DType::F64 => scan::<$op<f64>, _>(t, dim, opts),
            DType::F16 => scan::<$op<f16>, _>(t, dim, opts),
            DType::BF16 => scan::<$op<bf16>, _>(t, dim, opts),
            other => unsupported($name, other),
        }
    }};
}

fn unsupported(what: &str, dtype: DType) -> Result<Tensor> {
    candle_core::bail!(
        "scangen-candle: {what} is not implemented for {dtype:?} (u32, i64, f32, f64, f16, bf16 are)"
    )
}

/// A 16-bit float tensor scanned in `f32` (computed, then rounded once to its dtype).
fn via_f32(
    t: &Tensor,
    dim: usize,
    f: impl FnOnce(&Tensor, usize) -> Result<Tensor>,
) -> Result<Tensor> {
    if t.elem_count() == 0 {
        // Nothing to scan, and candle 0.11's CUDA `to_dtype` of an empty tensor launches an
        // empty grid, which the driver refuses (CUDA_ERROR_INVALID_VALUE).
        return Ok(t.detach());
    }
    f(&t.to_dtype(DType::F32)?, dim)?.to_dtype(t.dtype())
}

/// Cumulative sum along `dim` (inclusive, forward): `torch.cumsum`. Integers wrap on
/// overflow; `f16`/`bf16` round every partial sum to their type (scangen's `Add`).
///
/// ```
/// use candle_core::{Device, Tensor, D};
///
/// # fn main() -> candle_core::Result<()> {
/// let t = Tensor::new(&[[1f32, 2., 3.], [4., 5., 6.]], &Device::Cpu)?;
/// let rows = scangen_candle::cumsum(&t, D::Minus1)?;
/// assert_eq!(rows.to_vec2::<f32>()?, [[1., 3., 6.], [4., 9., 15.]]);
/// let cols = scangen_candle::cumsum(&t, 0)?;
/// assert_eq!(cols.to_vec2::<f32>()?, [[1., 2., 3.], [5., 7., 9.]]);
/// # Ok(())
/// # }
/// ```
pub fn cumsum<D: Dim>(t: &Tensor, dim: D) -> Result<Tensor> {
    cumsum_with(t, dim, ScanOpts::default())
}

/// [`cumsum`] with [`ScanOpts`] (exclusive, reverse).
pub fn cumsum_with<D: Dim>(t: &Tensor, dim: D, opts: ScanOpts) -> Result<Tensor> {
    let dim = dim.to_index(t.shape(), "cumsum")?;
    builtin_by_dtype!("cumsum", t, dim, opts, Add)
}

/// Cumulative product along `dim`: `torch.cumprod`. Integers wrap on overflow; `f16`/`bf16`
/// are multiplied in `f32` and rounded once at the end (scangen has no 16-bit `Mul`).
pub fn cumprod<D: Dim>(t: &Tensor, dim: D) -> Result<Tensor> {
    cumprod_with(t, dim, ScanOpts::default())
}

/// [`cumprod`] with [`ScanOpts`].
pub fn cumprod_with<D: Dim>(t: &Tensor, dim: D, opts: ScanOpts) -> Result<Tensor> {
    let dim = dim.to_index(t.shape(), "cumprod")?;
    match t.dtype() {
        DType::U32 => scan::<Mul<u32>, _>(t, dim, opts),
        DType::I64 => scan::<Mul<i64>, _>(t, dim, opts),
        DType::F32 => scan::<Mul<f32>, _>(t, dim, opts),
        DType::F64 => scan::<Mul<f64>, _>(t, dim, opts),
        DType::F16 | DType::BF16 => via_f32(t, dim, |t, dim| scan::<Mul<f32>, _>(t, dim, opts)),
        other => unsupported("cumprod", other),
    }
}

/// Running maximum along `dim` (the values of `torch.cummax`; no indices). Floats follow
/// Rust's `max`: a NaN is skipped, not propagated.
pub fn cummax<D: Dim>(t: &Tensor, dim: D) -> Result<Tensor> {
    cummax_with(t, dim, ScanOpts::default())
}

/// [`cummax`] with [`ScanOpts`]; an exclusive scan starts from the type's minimum (`-inf`
/// for floats).
pub fn cummax_with<D: Dim>(t: &Tensor, dim: D, opts: ScanOpts) -> Result<Tensor> {
    let dim = dim.to_index(t.shape(), "cummax")?;
    builtin_by_dtype!("cummax", t, dim, opts, Max)
}

/// Running minimum along `dim` (the values of `torch.cummin`). NaNs are skipped.
pub fn cummin<D: Dim>(t: &Tensor, dim: D) -> Result<Tensor> {
    cummin_with(t, dim, ScanOpts::default())
}

/// [`cummin`] with [`ScanOpts`]; an exclusive scan starts from the type's maximum (`inf`
/// for floats).
pub fn cummin_with<D: Dim>(t: &Tensor, dim: D, opts: ScanOpts) -> Result<Tensor> {
    let dim = dim.to_index(t.shape(), "cummin")?;
    builtin_by_dtype!("cummin", t, dim, opts, Min)
}

/// `log(cumsum(exp(x)))` along `dim`, computed stably ([`LogAddExpF32`]: no overflow for
/// large inputs): `torch.logcumsumexp`. Floats only; `f16`/`bf16` are computed in `f32`.
/// An exclusive scan starts from `-inf` (`log 0`).
pub fn logcumsumexp<D: Dim>(t: &Tensor, dim: D) -> Result<Tensor> {
    logcumsumexp_with(t, dim, ScanOpts::default())
}

/// [`logcumsumexp`] with [`ScanOpts`].
pub fn logcumsumexp_with<D: Dim>(t: &Tensor, dim: D, opts: ScanOpts) -> Result<Tensor> {
    let dim = dim.to_index(t.shape(), "logcumsumexp")?;
    match t.dtype() {
        DType::F32 => scan::<LogAddExpF32, _>(t, dim, opts),
        DType::F64 => scan::<LogAddExpF64, _>(t, dim, opts),
        DType::F16 | DType::BF16 => via_f32(t, dim, |t, dim| scan::<LogAddExpF32, _>(t, dim, opts)),
        other => candle_core::bail!(
            "scangen-candle: logcumsumexp needs a float tensor (f32, f64, f16, bf16), not {other:?}"
        ),
    }
}

/// The scan of a contiguous tensor of shape `dims` along `dim`, as `(a, d, b)`: `a` blocks
/// (the dimensions before `dim`), each `d` rows (the scanned dimension) of `b` columns (the
/// dimensions after it).
pub(crate) fn blocks(dims: &[usize], dim: usize) -> (usize, usize, usize) {
    let a = dims[..dim].iter().product();
    let b = dims[dim + 1..].iter().product();
    (a, dims[dim], b)
}

/// The custom op: scans a contiguous tensor along `dim` into a new one.
pub(crate) struct TensorScan<Op> {
    pub(crate) dim: usize,
    pub(crate) opts: ScanOpts,
    pub(crate) _op: PhantomData<fn() -> Op>,
}

impl<Op> CustomOp1 for TensorScan<Op>
where
    Op: ScanOp + 'static,
    Op::Elem: ScanDType,
{
    fn name(&self) -> &'static str {
        "scangen-scan"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> Result<(CpuStorage, Shape)> {
        let Some((start, end)) = layout.contiguous_offsets() else {
            candle_core::bail!("scangen-candle: the scan's input must be contiguous");
        };
        let data = &storage.as_slice::<Op::Elem>()?[start..end];
        let (a, d, b) = blocks(layout.dims(), self.dim);
        let out = scan_host::<Op>(data, a, d, b, self.opts).map_err(to_candle)?;
        Ok((
            <Op::Elem as WithDType>::to_cpu_storage_owned(out),
            layout.shape().clone(),
        ))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        storage: &candle_core::CudaStorage,
        layout: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        crate::cuda::cuda_fwd::<Op>(storage, layout, self.dim, self.opts)
    }
}

/// Scans contiguous host data of shape `(a, d, b)` along `d` with scangen's CPU backend.
fn scan_host<Op: ScanOp>(
    data: &[Op::Elem],
    a: usize,
    d: usize,
    b: usize,
    opts: ScanOpts,
) -> std::result::Result<Vec<Op::Elem>, ScanError> {
    if data.is_empty() {
        return Ok(Vec::new());
    }
    let options = opts.scan_options();
    if a == 1 && b == 1 {
        // One sequence: the unsegmented (parallel) scan.
        return CpuScanner::<Op>::new(options).scan(data);
    }
    if b == 1 {
        // Each of the `a` rows of `d` elements on its own: cumsum(dim=-1).
        let mut scanner =
            CpuScanner::<Op>::new(options.segmented(Segments::Rows { strided: false }));
        let (rows, cols) = (a as u64, d as u64);
        return scanner.scan_segmented(
            data,
            HostSegments::Rows {
                rows,
                cols,
                row_stride: cols,
            },
        );
    }
    // Each of the `a` blocks is a `d x b` matrix scanned down its columns.
    let mut scanner = CpuScanner::<Op>::new(options.segmented(Segments::Columns));
    let mut out = Vec::with_capacity(data.len());
    for block in data.chunks(d * b) {
        out.extend(scanner.scan_segmented(
            block,
            HostSegments::Columns {
                rows: d as u64,
                cols: b as u64,
                row_stride: b as u64,
            },
        )?);
    }
    Ok(out)
}
